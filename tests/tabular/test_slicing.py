"""Slicing: the thesis's Table 4.1, phi^2 attribute clustering, l-diverse buckets, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tabular
from structanon import InfeasibleError, InputError
from tabular._slicing import SlicingVerifier, attribute_partition, mean_square_contingency

KEY = b"0123456789abcdef"

# Table 4.1(a) of the thesis.  The text extraction in ../shared/references kept six of its
# eight rows; t3 (33, F, 47905, flu) and t7 (60, M, 47304, dyspepsia) are those of the
# published table, and the thesis's figures below (f1 = 1/4, f2 = 2/4, D = (0.5, 0.5)) hold
# only with them.
TABLE_4_1 = pd.DataFrame(
    [
        (22, "M", 47906, "dyspepsia"),
        (22, "F", 47906, "flu"),
        (33, "F", 47905, "flu"),
        (52, "F", 47905, "bronchitis"),
        (54, "M", 47302, "flu"),
        (60, "M", 47302, "dyspepsia"),
        (60, "M", 47304, "dyspepsia"),
        (64, "F", 47304, "gastritis"),
    ],
    columns=["age", "sex", "zipcode", "disease"],
)
COLUMNS_F = [["age", "sex"], ["zipcode", "disease"]]

# Table 4.1(f): the sliced table, buckets {t1..t4} and {t5..t8}
SLICED_F = pd.DataFrame(
    {
        "age": [22, 22, 33, 52, 54, 60, 60, 64],
        "sex": ["M", "F", "F", "F", "M", "M", "M", "F"],
        "zipcode": [47905, 47906, 47905, 47906, 47304, 47302, 47302, 47304],
        "disease": [
            "bronchitis",
            "dyspepsia",
            "flu",
            "flu",
            "gastritis",
            "flu",
            "dyspepsia",
            "dyspepsia",
        ],
        "bucket": [1, 1, 1, 1, 2, 2, 2, 2],
    }
)


def test_thesis_table_4_1_f_matching_buckets_and_2_diversity():
    t1 = TABLE_4_1.iloc[0].to_dict()
    seen = tabular.sensitive_probabilities(SLICED_F, COLUMNS_F, "disease", t1)
    assert seen["f"][1] == [0.25, 0.5]  # f1(t1, B1) = 1/4, f2(t1, B1) = 2/4
    assert seen["f"][2] == [0.0, 0.0]
    assert seen["p_bucket"] == {1: 1.0, 2: 0.0}  # t1 matches B1 only
    assert seen["D"][1] == {"dyspepsia": 0.5, "flu": 0.5}
    assert seen["p"] == {"dyspepsia": 0.5, "flu": 0.5}  # bounded by 0.5: 2-diverse
    for _, row in TABLE_4_1.iterrows():
        p = tabular.sensitive_probabilities(SLICED_F, COLUMNS_F, "disease", row.to_dict())["p"]
        assert max(p.values()) <= 0.5 + 1e-12
    assert SlicingVerifier(COLUMNS_F, "disease", 2)(SLICED_F)[0].passed
    assert not SlicingVerifier(COLUMNS_F, "disease", 3)(SLICED_F)[0].passed


def test_slice_table_4_1_with_the_thesis_columns():
    release = tabular.slice_table(
        TABLE_4_1, ["age", "sex", "zipcode"], "disease", l=2, columns=COLUMNS_F, key=KEY
    )
    assert release.verify().passed
    assert release.info["columns"] == COLUMNS_F
    data = release.data
    # each column group keeps its value combinations, as a multiset
    for group in COLUMNS_F:
        assert sorted(map(tuple, data[group].to_numpy().tolist())) == sorted(
            map(tuple, TABLE_4_1[group].to_numpy().tolist())
        )
    for _, row in TABLE_4_1.iterrows():
        p = tabular.sensitive_probabilities(data, COLUMNS_F, "disease", row.to_dict())["p"]
        assert max(p.values()) <= 0.5 + 1e-12
    with pytest.raises(InfeasibleError):
        tabular.slice_table(
            TABLE_4_1, ["age", "sex", "zipcode"], "disease", l=4, columns=COLUMNS_F, key=KEY
        )


def test_mean_square_contingency_and_clustering():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, 400)
    c = rng.integers(0, 3, 400)
    table = pd.DataFrame({"a": a, "b": a * 10 + 1, "c": c, "s": (c + 1) % 3})
    assert mean_square_contingency(table["a"].to_numpy(), table["b"].to_numpy()) == 1.0
    assert mean_square_contingency(table["a"].to_numpy(), table["c"].to_numpy()) < 0.05
    # phi^2 by its formula, cell by cell
    joint = pd.crosstab(table["a"], table["c"], normalize=True).to_numpy()
    fi, fj = joint.sum(axis=1), joint.sum(axis=0)
    expected = sum(
        (joint[i, j] - fi[i] * fj[j]) ** 2 / (fi[i] * fj[j])
        for i in range(fi.size)
        for j in range(fj.size)
    ) / (min(fi.size, fj.size) - 1)
    assert mean_square_contingency(table["a"].to_numpy(), table["c"].to_numpy()) == pytest.approx(
        expected
    )
    groups = attribute_partition(table, ["a", "b", "c", "s"], "s", 2)
    assert groups == [["a", "b"], ["c", "s"]]
    alpha = attribute_partition(table, ["a", "b", "c", "s"], "s", 2, sensitive_size=1)
    assert alpha == [["a", "b", "c"], ["s"]]


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 4), st.integers(0, 10_000), st.integers(12, 80), st.integers(1, 3))
def test_every_slicing_is_verified_and_keeps_each_column(l_value, seed, n, n_columns):
    rng = np.random.default_rng(seed)
    table = pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["M", "F"], n),
            "zip": rng.choice(["1", "2", "3"], n),
            "s": rng.permutation(np.resize(["a", "b", "c", "d", "e"], n)),
        }
    )
    try:
        release = tabular.slice_table(
            table, ["age", "sex", "zip"], "s", l=l_value, n_columns=n_columns, key=KEY
        )
    except InfeasibleError:
        return
    assert release.verify().passed
    data = release.data
    assert len(data) == n and release.partition.n == n
    for group in release.info["columns"]:
        assert sorted(map(tuple, data[group].astype(str).to_numpy().tolist())) == sorted(
            map(tuple, table[group].astype(str).to_numpy().tolist())
        )
        # each bucket's values of the column are those of its records
        for b in range(release.partition.n_groups):
            rows = table[release.partition.labels == b]
            assert len(rows) >= 1


def test_same_key_same_table_no_key_differs():
    rng = np.random.default_rng(1)
    table = pd.DataFrame(
        {
            "age": rng.integers(20, 60, 200),
            "sex": rng.choice(["M", "F"], 200),
            "s": rng.permutation(np.resize(list("abcdef"), 200)),
        }
    )
    one = tabular.slice_table(table, ["age", "sex"], "s", l=3, seed=1, key=KEY)
    two = tabular.slice_table(table, ["age", "sex"], "s", l=3, seed=1, key=KEY)
    pd.testing.assert_frame_equal(one.data, two.data)
    assert not tabular.slice_table(table, ["age", "sex"], "s", l=3, seed=1).data.equals(one.data)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"l": 1}, "l must be"),
        ({"n_columns": 0}, "n_columns"),
        ({"n_columns": 9}, "n_columns"),
        ({"columns": [["age"], ["disease"]]}, "columns must partition"),
        ({"columns": [["age", "sex", "zipcode", "disease"], []]}, "columns must partition"),
        ({"sensitive_size": 0}, "sensitive_size"),
        ({"bins": 1}, "bins"),
        ({"sensitive": "nope"}, "sensitive column not in the table"),
    ],
)
def test_bad_input(kwargs, message):
    args = {"quasi_identifiers": ["age", "sex", "zipcode"], "sensitive": "disease", "l": 2}
    with pytest.raises(InputError, match=message):
        tabular.slice_table(TABLE_4_1, **{**args, **kwargs})


def test_adult_sample(adult_sample):
    qis = ["sex", "age", "race", "marital-status", "education"]
    release = tabular.slice_table(adult_sample, qis, "occupation", l=4, seed=0)
    assert release.verify().passed
    assert release.risk["after"]["sensitive_value_probability_max"] <= 0.25 + 1e-12
    assert release.utility["n_buckets"] > len(adult_sample) / 20


def test_buckets_stay_small_when_the_sensitive_column_holds_a_qi():
    # sex is strongly tied to s: Mondrian cuts on sex fail, and the remaining buckets are
    # dealt per sex into small l-diverse ones
    rng = np.random.default_rng(2)
    n = 600
    sex = rng.choice(["M", "F"], n)
    s = np.where(sex == "M", rng.choice(list("abcd"), n), rng.choice(list("cdef"), n))
    table = pd.DataFrame({"age": rng.integers(20, 25, n), "sex": sex, "s": s})
    release = tabular.slice_table(
        table, ["age", "sex"], "s", l=3, columns=[["age"], ["sex", "s"]], key=KEY
    )
    assert release.verify().passed
    assert release.utility["bucket_size_max"] <= 4 * 3 * 2
    assert release.info["n_buckets"] > n / 20
