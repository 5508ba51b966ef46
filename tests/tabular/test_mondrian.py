"""Tests of Mondrian multidimensional partitioning (tabular/_mondrian.py).

Releases are checked with code independent of the package: pandas group-bys on the
published quasi-identifiers and pycanon.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pycanon import anonymity as pycanon

from structanon import Hierarchy, InfeasibleError, InputError, Partition
from structanon.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
)
from tabular._mondrian import encode_column, mondrian
from tests._support import SHARED_DATA, shared_file

ADULT = SHARED_DATA / "adult"
ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
SEX = Hierarchy([["Male", "*"], ["Female", "*"]], name="Sex")
STRICT = {"criterion": "width", "relaxed": False}  # LeFevre's strict, widest-first Mondrian


def lecture_table() -> pd.DataFrame:
    """LeFevre, DeWitt & Ramakrishnan (ICDE 2006), Figure 2(a), the patient table.

    Age Sex Zipcode Disease: (25 Male 53711 Flu), (25 Female 53712 Hepatitis),
    (26 Male 53711 Bronchitis), (27 Male 53710 Broken Arm), (27 Female 53712 AIDS),
    (28 Male 53711 Hang Nail).  Its 2-anonymous multidimensional recoding, Figure 2(c):
    [25-26] Male 53711 (Flu, Bronchitis); [25-27] Female 53712 (Hepatitis, AIDS);
    [27-28] Male [53710-53711] (Broken Arm, Hang Nail): a cut on Zipcode (<= 53711 |
    53712), then one on Age (25-26 | 27-28) of the lower half.
    """
    return pd.DataFrame(
        {
            "Age": [25, 25, 26, 27, 27, 28],
            "Sex": ["Male", "Female", "Male", "Male", "Female", "Male"],
            "Zipcode": [53711, 53712, 53711, 53710, 53712, 53711],
            "Disease": ["Flu", "Hepatitis", "Bronchitis", "Broken Arm", "AIDS", "Hang Nail"],
        },
        index=[10, 11, 12, 13, 14, 15],
    )


def classes_of(labels) -> set[frozenset[int]]:
    labels = np.asarray(labels)
    return {frozenset(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels)}


def test_lecture_table_zipcode_then_age():
    """The lecture's classes: cut Zipcode first, then Age (Figure 2(c) exactly)."""
    df = lecture_table()
    qis = {"Zipcode": "numeric", "Age": "numeric", "Sex": SEX}
    out, labels = mondrian(df, qis, "Disease", [KAnonymity(2)], **STRICT)
    assert classes_of(labels) == {frozenset({0, 2}), frozenset({1, 4}), frozenset({3, 5})}
    assert out["Age"].tolist() == ["25-26", "25-27", "25-26", "27-28", "25-27", "27-28"]
    assert out["Zipcode"].tolist() == [
        "53711",
        "53712",
        "53711",
        "53710-53711",
        "53712",
        "53710-53711",
    ]
    assert out["Sex"].tolist() == ["Male", "Female", "Male", "Male", "Female", "Male"]
    assert out["Disease"].tolist() == df["Disease"].tolist()
    assert out.index.tolist() == df.index.tolist()


def test_lecture_table_three_classes_of_two_with_sex_first():
    df = lecture_table()
    out, labels = mondrian(
        df, {"Sex": SEX, "Age": "numeric", "Zipcode": "numeric"}, None, [KAnonymity(2)], **STRICT
    )
    assert np.bincount(labels).tolist() == [2, 2, 2]
    assert classes_of(labels) == {frozenset({0, 2}), frozenset({1, 4}), frozenset({3, 5})}


def test_lecture_table_age_first_tie_goes_to_first_listed():
    """All three dimensions tie at width 1; Age listed first is cut first (25-26 | 27-28)."""
    _, labels = mondrian(
        lecture_table(), {"Age": "numeric", "Zipcode": "numeric"}, None, [KAnonymity(2)], **STRICT
    )
    assert classes_of(labels) == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}


def test_input_is_not_modified_and_rows_keep_order():
    df = lecture_table()
    before = df.copy()
    out, _ = mondrian(df, {"Zipcode": "numeric", "Age": "numeric"}, None, [KAnonymity(2)])
    pd.testing.assert_frame_equal(df, before)
    assert list(out.columns) == list(df.columns)


def test_deterministic():
    df = lecture_table()
    a = mondrian(df, {"Zipcode": "numeric", "Sex": SEX}, "Disease", [KAnonymity(2)], seed=1)
    b = mondrian(df, {"Zipcode": "numeric", "Sex": SEX}, "Disease", [KAnonymity(2)], seed=2)
    pd.testing.assert_frame_equal(a[0], b[0])
    assert a[1].tolist() == b[1].tolist()


def test_k_one_keeps_every_distinct_tuple():
    df = lecture_table()
    out, labels = mondrian(df, {"Age": "numeric", "Zipcode": "numeric"}, None, [KAnonymity(1)])
    assert out["Age"].astype(int).tolist() == df["Age"].tolist()
    assert labels.max() + 1 == len(df[["Age", "Zipcode"]].drop_duplicates())


def test_float_ranges_and_negative_free_format():
    df = pd.DataFrame({"x": [0.5, 1.25, 2.0, 3.0]})
    out, _ = mondrian(df, {"x": "numeric"}, None, [KAnonymity(2)])
    assert out["x"].tolist() == ["0.5-1.25", "0.5-1.25", "2-3", "2-3"]


def test_categorical_cut_pools_failing_children_under_their_parent():
    h = Hierarchy([["a", "*"], ["b", "*"], ["c", "*"], ["d", "*"]], name="v")
    df = pd.DataFrame({"v": ["a"] * 3 + ["b"] * 3 + ["c", "d"]})
    out, labels = mondrian(df, {"v": h}, None, [KAnonymity(2)], **STRICT)
    assert out["v"].tolist() == ["a"] * 3 + ["b"] * 3 + ["*", "*"]
    strict, _ = mondrian(df, {"v": h}, None, [KAnonymity(2)], remainder=False, **STRICT)
    assert set(strict["v"]) == {"*"}


def test_pool_takes_smallest_passing_child_when_needed():
    h = Hierarchy([["a", "*"], ["b", "*"], ["c", "*"]], name="v")
    df = pd.DataFrame({"v": ["a"] * 5 + ["b"] * 3 + ["c"]})
    out, _ = mondrian(df, {"v": h}, None, [KAnonymity(3)], **STRICT)
    assert out["v"].tolist() == ["a"] * 5 + ["*"] * 4


def test_ordinal_values_are_cut_in_order_and_published_as_sets():
    df = pd.DataFrame({"edu": ["b", "a", "c", "a", "d", "c", "d", "b"], "n": range(8)})
    out, labels = mondrian(df, {"edu": "ordinal"}, None, [KAnonymity(2)])
    assert out["edu"].tolist() == ["b", "a", "c", "a", "d", "c", "d", "b"]
    out, labels = mondrian(df, {"edu": "ordinal"}, None, [KAnonymity(3)])
    assert out["edu"].tolist() == ["a,b", "a,b", "c,d", "a,b", "c,d", "c,d", "c,d", "a,b"]
    years = pd.DataFrame({"year": [1990, 1991, 1991, 2000, 2000, 2001]})
    out, _ = mondrian(years, {"year": "ordinal"}, None, [KAnonymity(3)])
    assert out["year"].tolist() == ["1990,1991"] * 3 + ["2000,2001"] * 3


def test_relaxed_pool_borrows_records_from_the_largest_child():
    h = Hierarchy([["US", "*"], ["MX", "*"]], name="country")
    df = pd.DataFrame({"country": ["US"] * 8 + ["MX"] * 2, "age": list(range(1, 9)) + [1, 2]})
    qis = {"country": h, "age": "numeric"}
    strict, _ = mondrian(df, qis, None, [KAnonymity(3)], **STRICT)
    # strict: MX pooled with the whole US child fails to cut; age is cut instead
    assert strict["country"].tolist() == ["*"] * 3 + ["US"] * 5 + ["*", "*"]
    relaxed, labels = mondrian(df, qis, None, [KAnonymity(3)], criterion="width", relaxed=True)
    # relaxed: the pool {MX, MX} borrows one US record (the lightest tuple, age 1)
    assert relaxed["country"].tolist() == ["*"] + ["US"] * 7 + ["*", "*"]
    assert relaxed["age"].tolist() == ["1-2"] + ["2-5"] * 4 + ["6-8"] * 3 + ["1-2"] * 2
    assert np.bincount(labels).min() >= 3
    assert relaxed.groupby(["country", "age"]).size().min() >= 3


def test_categorical_lca_is_published():
    h = Hierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"], ["d", "y", "*"]])
    df = pd.DataFrame({"v": ["a", "b", "a", "b", "c", "c"], "n": [1, 2, 3, 4, 5, 6]})
    out, _ = mondrian(df, {"v": h}, None, [KAnonymity(2)])
    assert out["v"].tolist() == ["a", "b", "a", "b", "c", "c"]
    out, _ = mondrian(df, {"v": h}, None, [KAnonymity(3)], **STRICT)
    assert out["v"].tolist() == ["*"] * 6  # y = {c, c} fails; pooling it with x leaves no cut


def test_infeasible_when_whole_table_fails():
    df = lecture_table()
    with pytest.raises(InfeasibleError, match="k-anonymity"):
        mondrian(df, {"Age": "numeric"}, None, [KAnonymity(7)])
    with pytest.raises(InfeasibleError, match="distinct-l-diversity"):
        mondrian(df, {"Age": "numeric"}, "Disease", [DistinctLDiversity(7)])


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda d: d.assign(Age=[25, None, 26, 27, 27, 28]), "row with index label 11"),
        (lambda d: d.assign(Age=[25, "x", 26, 27, 27, 28]), "non-numeric"),
        (
            lambda d: d.assign(Sex=["Male", "Female", "Male", "?", "Female", "Male"]),
            "row with index label 13",
        ),
        (
            lambda d: d.assign(Sex=["Male", "Female", None, "Male", "Female", "Male"]),
            "row with index label 12",
        ),
    ],
)
def test_bad_values_name_column_and_row(bad, match):
    with pytest.raises(InputError, match=match) as err:
        mondrian(bad(lecture_table()), {"Age": "numeric", "Sex": SEX}, None, [KAnonymity(2)])
    assert err.value.column in {"Age", "Sex"}


def test_bad_arguments():
    df = lecture_table()
    with pytest.raises(InputError, match="not in the table"):
        mondrian(df, {"Nope": "numeric"}, None, [KAnonymity(2)])
    with pytest.raises(InputError, match="spec"):
        mondrian(df, {"Age": "interval"}, None, [KAnonymity(2)])
    with pytest.raises(InputError, match="sensitive"):
        mondrian(df, {"Age": "numeric"}, None, [DistinctLDiversity(2)])
    with pytest.raises(InputError, match="models"):
        mondrian(df, {"Age": "numeric"}, None, [])
    with pytest.raises(InputError, match="sensitive"):
        mondrian(df, {"Age": "numeric"}, "Age", [KAnonymity(2)])
    with pytest.raises(InputError, match="DataFrame"):
        mondrian(df.to_numpy(), {"Age": "numeric"}, None, [KAnonymity(2)])
    with pytest.raises(InputError, match="criterion"):
        mondrian(df, {"Age": "numeric"}, None, [KAnonymity(2)], criterion="best")


def test_gain_criterion_cuts_where_the_penalty_drops_most():
    """Both widths are 1; y is listed first, but cutting x leaves no range at all."""
    df = pd.DataFrame({"y": [0, 1, 2, 3, 4, 5], "x": [0, 0, 0, 0, 10, 10]})
    _, by_width = mondrian(
        df, {"y": "numeric", "x": "numeric"}, None, [KAnonymity(2)], criterion="width"
    )
    assert classes_of(by_width) == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}
    _, by_gain = mondrian(
        df, {"y": "numeric", "x": "numeric"}, None, [KAnonymity(2)], criterion="gain"
    )
    assert classes_of(by_gain) == {frozenset({0, 1}), frozenset({2, 3}), frozenset({4, 5})}


def test_encode_column_matches_sorted_unique():
    values = pd.Series(["b", "a", "c", "a"], index=[5, 6, 7, 8])
    codes, domain = encode_column(values)
    assert codes.tolist() == [1, 0, 2, 0] and domain.tolist() == ["a", "b", "c"]
    with pytest.raises(InputError, match="mixed types"):
        encode_column(pd.Series(["a", 1]), "s")


# --------------------------------------------------------------------------- properties

TAXONOMY = Hierarchy(
    [["a1", "a", "*"], ["a2", "a", "*"], ["b1", "b", "*"], ["b2", "b", "*"], ["c1", "c", "*"]],
    name="cat",
)
MODEL_CHOICES = st.sampled_from(["k", "distinct", "entropy", "recursive", "t"])


def _models(kind: str, k: int):
    extra = {
        "k": [],
        "distinct": [DistinctLDiversity(2)],
        "entropy": [EntropyLDiversity(1.5)],
        "recursive": [RecursiveCLDiversity(3, 2)],
        "t": [TCloseness(0.4)],
    }[kind]
    return [KAnonymity(k)] + extra


@st.composite
def tables(draw):
    n = draw(st.integers(1, 40))
    ages = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    cats = draw(st.lists(st.sampled_from(list(TAXONOMY.leaves)), min_size=n, max_size=n))
    sens = draw(st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=n, max_size=n))
    grades = draw(st.lists(st.sampled_from(["A", "B", "C", "D"]), min_size=n, max_size=n))
    return pd.DataFrame(
        {"age": ages, "cat": cats, "grade": grades, "s": sens}, index=np.arange(n) * 3 + 7
    )  # a gapped index


def _whole_table_ok(df, kind, k) -> bool:
    counts = df["s"].value_counts()
    if len(df) < k:
        return False
    if kind == "distinct":
        return counts.size >= 2
    if kind == "entropy":
        p = counts / counts.sum()
        return float(np.exp(-(p * np.log(p)).sum())) >= 1.5 - 1e-9
    if kind == "recursive":
        r = counts.sort_values(ascending=False).to_numpy()
        return r.size >= 2 and r[0] < 3 * r[1:].sum()
    return True


def _emd_equal(group: pd.Series, table: pd.Series) -> float:
    p = group.value_counts(normalize=True)
    q = table.value_counts(normalize=True)
    return 0.5 * float(p.reindex(q.index, fill_value=0).sub(q).abs().sum())


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    df=tables(),
    k=st.integers(1, 5),
    kind=MODEL_CHOICES,
    remainder=st.booleans(),
    criterion=st.sampled_from(["width", "gain"]),
    relaxed=st.booleans(),
)
def test_every_class_passes_and_every_row_is_published(df, k, kind, remainder, criterion, relaxed):
    qis = {"age": "numeric", "cat": TAXONOMY, "grade": "ordinal"}
    models = _models(kind, k)
    options = {"remainder": remainder, "criterion": criterion, "relaxed": relaxed}
    if not _whole_table_ok(df, kind, k):
        with pytest.raises(InfeasibleError):
            mondrian(df, qis, "s", models, **options)
        return
    out, labels = mondrian(df, qis, "s", models, **options)
    assert len(out) == len(df) and out.index.equals(df.index)  # every row published
    assert labels.shape == (len(df),) and labels.min() == 0
    released = out.reset_index(drop=True)
    # classes are exactly the groups of identical published QI values
    keys = released.groupby(list(qis), sort=False).ngroup().to_numpy()
    assert classes_of(keys) == classes_of(labels)
    for _, group in released.groupby(list(qis)):
        assert len(group) >= k
        if kind == "distinct":
            assert group["s"].nunique() >= 2
        if kind == "t":
            assert _emd_equal(group["s"], df["s"]) <= 0.4 + 1e-9
    # each published value covers the original value
    for (orig_age, orig_cat, orig_grade), (pub_age, pub_cat, pub_grade) in zip(
        df[list(qis)].to_numpy(), out[list(qis)].to_numpy()
    ):
        assert orig_grade in pub_grade.split(",")
        lo, _, hi = pub_age.partition("-")
        assert int(lo) <= orig_age <= int(hi or lo)
        level = [
            lv
            for lv in range(TAXONOMY.height + 1)
            if TAXONOMY.generalize([orig_cat], lv)[0] == pub_cat
        ]
        assert level, (orig_cat, pub_cat)
    assert pycanon.k_anonymity(released, list(qis)) >= k


# --------------------------------------------------------------------------- Adult + pycanon


@pytest.fixture(scope="module")
def adult():
    df = pd.read_csv(shared_file("adult/adult.csv"), sep=";")
    hierarchies = {
        c: Hierarchy.from_csv(ADULT / f"adult_hierarchy_{c}.csv", name=c) for c in ADULT_QIS
    }
    spec = {c: ("numeric" if c == "age" else hierarchies[c]) for c in ADULT_QIS}
    return df.iloc[::3], spec  # every third record: a gapped index, 10,054 rows


@pytest.mark.parametrize(
    "models, checks, criterion, relaxed",
    [
        ([KAnonymity(5)], {"k": 5}, "width", False),
        ([KAnonymity(5)], {"k": 5}, "gain", True),
        ([KAnonymity(5), DistinctLDiversity(3)], {"k": 5, "l": 3}, "width", True),
        ([KAnonymity(5), TCloseness(0.2)], {"k": 5, "t": 0.2}, "gain", False),
    ],
)
def test_adult_verified_by_pycanon(adult, models, checks, criterion, relaxed):
    df, spec = adult
    out, labels = mondrian(df, spec, "occupation", models, criterion=criterion, relaxed=relaxed)
    released = out.reset_index(drop=True)  # pycanon miscounts l and t on a gapped index
    assert pycanon.k_anonymity(released, ADULT_QIS) >= checks["k"]
    if "l" in checks:
        assert pycanon.l_diversity(released, ADULT_QIS, ["occupation"]) >= checks["l"]
    if "t" in checks:
        assert pycanon.t_closeness(released, ADULT_QIS, ["occupation"]) <= checks["t"] + 1e-9
    assert released.groupby(ADULT_QIS).ngroups == labels.max() + 1
    assert out["occupation"].equals(df["occupation"])


def test_ordered_t_closeness_on_a_numeric_sensitive_attribute_checked_by_pycanon():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(20, 70, 300), "zip": rng.integers(100, 140, 300)})
    df["salary"] = (df["age"] // 10 * 10 + rng.integers(0, 3, 300)).astype(int)  # correlated
    models = [KAnonymity(4), TCloseness(0.15, distance="ordered")]
    out, labels = mondrian(df, {"age": "numeric", "zip": "numeric"}, "salary", models)
    released = out.reset_index(drop=True)
    assert pycanon.k_anonymity(released, ["age", "zip"]) >= 4
    assert pycanon.t_closeness(released, ["age", "zip"], ["salary"]) <= 0.15 + 1e-9
    assert labels.max() + 1 > 1  # it did cut


def test_hierarchical_t_closeness_runs_and_every_class_passes_the_core_check(adult):
    df, spec = adult
    occupation = Hierarchy.from_csv(ADULT / "adult_hierarchy_occupation.csv", name="occupation")
    model = TCloseness(0.3, distance="hierarchical", hierarchy=occupation)
    out, labels = mondrian(df.iloc[:3000], spec, "occupation", [KAnonymity(3), model])
    keys = Partition.from_keys(out[ADULT_QIS].reset_index(drop=True))
    assert classes_of(keys.labels) == classes_of(labels)
    result = model.check(keys, out["occupation"].to_numpy())
    assert result.passed and result.worst <= 0.3 + 1e-9


def test_many_wide_numeric_columns_use_the_row_wise_grouping():
    """Code-space product above 2**62: distinct tuples are found row-wise instead."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(20000, 5)).round(6), columns=list("abcde"))
    out, labels = mondrian(df, dict.fromkeys("abcde", "numeric"), None, [KAnonymity(50)])
    assert np.bincount(labels).min() >= 50
    assert out.groupby(list("abcde")).ngroups == labels.max() + 1
