"""Anatomy (bucketization): the two tables, their l-diversity, the secret draws, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tabular
from structanon import InfeasibleError, InputError, VerificationError

KEY = b"0123456789abcdef"
QIS = ["sex", "age", "race"]


def small_table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.choice(["M", "F"], n),
            "age": rng.integers(20, 70, n),
            "race": rng.choice(["a", "b", "c"], n),
            "disease": rng.permutation(
                np.resize(["flu", "ulcer", "cancer", "bronchitis", "gastritis"], n)
            ),
        }
    )


def test_qi_table_keeps_every_record_and_sensitive_table_counts_them():
    table = small_table()
    release = tabular.anatomize(table, QIS, "disease", l=3, seed=0, key=KEY)
    qit, st_ = release.data, release.sensitive_table
    assert "disease" not in qit.columns and "bucket" in qit.columns
    # QIs unchanged, as a multiset
    pd.testing.assert_frame_equal(
        qit[QIS].sort_values(QIS).reset_index(drop=True),
        table[QIS].sort_values(QIS).reset_index(drop=True),
    )
    assert st_["count"].sum() == len(table)
    assert sorted(st_.groupby("disease")["count"].sum().to_dict().items()) == sorted(
        table["disease"].value_counts().to_dict().items()
    )
    sizes = qit["bucket"].value_counts()
    assert sizes.min() >= 3 and sizes.max() <= 4
    # every bucket: distinct sensitive values, and the QI table agrees with it
    assert (st_["count"] == 1).all()
    assert (st_.groupby("bucket")["count"].sum() == sizes.sort_index()).all()
    # the private link maps each QI row back to its record: the bucket holds its value
    source = table.loc[release.source_index]
    for bucket, value in zip(qit["bucket"], source["disease"]):
        assert ((st_["bucket"] == bucket) & (st_["disease"] == value)).any()
    assert release.verify().passed


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(0, 10_000), st.integers(10, 80))
def test_every_release_is_l_diverse_and_accounts_for_everyone(l_value, seed, n):
    table = small_table(n, seed)
    frequency = table["disease"].value_counts().max()
    if frequency > n // l_value:
        with pytest.raises(InfeasibleError, match="no .*-diverse bucketization"):
            tabular.anatomize(table, QIS, "disease", l=l_value, key=KEY)
        return
    release = tabular.anatomize(table, QIS, "disease", l=l_value, key=KEY, measures=False)
    st_ = release.sensitive_table
    per_bucket = st_.groupby("bucket")["count"]
    assert (per_bucket.max() * l_value <= per_bucket.sum()).all()
    assert per_bucket.sum().sum() == n == len(release.data)
    assert release.partition.n == n


def test_same_key_same_bytes_and_no_key_differs():
    table = small_table(80)
    one = tabular.anatomize(table, QIS, "disease", l=3, seed=4, key=KEY)
    two = tabular.anatomize(table, QIS, "disease", l=3, seed=4, key=KEY)
    pd.testing.assert_frame_equal(one.data, two.data)
    pd.testing.assert_frame_equal(one.sensitive_table, two.sensitive_table)
    fresh = tabular.anatomize(table, QIS, "disease", l=3, seed=4)
    assert not fresh.data.equals(one.data)


def test_verifier_catches_a_tampered_sensitive_table():
    release = tabular.anatomize(small_table(), QIS, "disease", l=3, key=KEY)
    tampered = release.sensitive_table.copy()
    first = tampered["bucket"].iloc[0]
    tampered.loc[tampered["bucket"] == first, "disease"] = "flu"
    release.sensitive_table = tampered
    with pytest.raises(VerificationError):
        release.verify(strict=True)
    release.sensitive_table = release.sensitive_table.assign(count=2)
    checks = release.verify().checks
    assert not checks[1].passed  # the QI table no longer matches the counts


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"l": 1}, "l must be"),
        ({"l": "3"}, "l must be"),
        ({"quasi_identifiers": ["nope"]}, "nope"),
        ({"quasi_identifiers": ["age", "age"]}, "twice"),
        ({"sensitive": "nope"}, "sensitive column not in the table"),
        ({"sensitive": "age"}, "cannot be a quasi-identifier"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_input(kwargs, message):
    args = {"quasi_identifiers": QIS, "sensitive": "disease", "l": 3, **kwargs}
    with pytest.raises(InputError, match=message):
        tabular.anatomize(small_table(), **args)


def test_bad_tables():
    with pytest.raises(InputError, match="no rows"):
        tabular.anatomize(small_table().head(0), QIS, "disease", 2)
    with pytest.raises(InputError, match="DataFrame"):
        tabular.anatomize([[1, 2]], QIS, "disease", 2)
    missing = small_table()
    missing.loc[3, "disease"] = None
    with pytest.raises(InputError, match="missing value"):
        tabular.anatomize(missing, QIS, "disease", 2)
    with pytest.raises(InputError, match="bucket"):
        tabular.anatomize(small_table().assign(bucket=1), QIS, "disease", 2)


def test_adult_sample_measures(adult_sample):
    qis = ["sex", "age", "race", "marital-status", "education"]
    release = tabular.anatomize(adult_sample, qis, "occupation", l=4, seed=0)
    assert release.risk["after"]["sensitive_value_probability_max"] <= 0.25
    assert release.utility["bucket_size_min"] >= 4
    assert release.verify().passed
