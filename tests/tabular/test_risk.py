"""Tests of tabular risk: assess() and distance-based record linkage (tabular/risk.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon import Hierarchy, InputError
from tabular.risk import assess, record_linkage

TREE = Hierarchy(
    [["a1", "a", "*"], ["a2", "a", "*"], ["b1", "b", "*"], ["b2", "b", "*"]], name="cat"
)
AGES = Hierarchy(
    [[str(v), f"{v // 10 * 10}-{v // 10 * 10 + 9}", "*"] for v in range(20, 60)], name="age"
)


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [30, 30, 30, 40, 40, 50],
            "sex": ["F", "F", "F", "M", "M", "M"],
            "d": ["x", "y", "x", "x", "x", "z"],
        }
    )


def test_assess_prosecutor_marketer_uniques_and_l():
    r = assess(table(), ["age", "sex"], sensitive="d", threshold=0.4)
    assert r["records"] == 6 and r["classes"] == 3 and r["k"] == 1
    assert r["prosecutor_max"] == 1.0
    assert r["prosecutor_avg"] == pytest.approx((3 * (1 / 3) + 2 * (1 / 2) + 1) / 6)
    assert r["marketer"] == pytest.approx(3 / 6)
    assert r["sample_uniques"] == 1
    assert r["share_above_threshold"] == pytest.approx(3 / 6)  # 1/2 and 1/1 exceed 0.4
    assert r["distinct_l"] == 1.0  # the class {40, M} holds only "x"
    assert r["entropy_l"] == pytest.approx(1.0)


def test_assess_journalist_risk_against_a_population():
    sample = table().iloc[[0, 3, 5]]
    population = pd.concat([table(), table()], ignore_index=True)
    r = assess(sample, ["age", "sex"], population=population)
    # population class sizes: (30, F) 6, (40, M) 4, (50, M) 2
    assert r["journalist_max"] == pytest.approx(1 / 2)
    assert r["journalist_avg"] == pytest.approx((1 / 6 + 1 / 4 + 1 / 2) / 3)
    assert r["prosecutor_max"] == 1.0  # every sampled record is unique in the sample


def test_assess_errors():
    with pytest.raises(InputError, match="not in the table"):
        assess(table(), ["zip"])
    with pytest.raises(InputError, match="sensitive"):
        assess(table(), ["age"], sensitive="nope")
    with pytest.raises(InputError):
        assess(table(), ["age"], threshold=0)


def test_linkage_of_the_raw_table_is_the_average_prosecutor_risk():
    df = table()
    sizes = df.groupby(["age", "sex"])["d"].transform("size").to_numpy()
    assert record_linkage(df, df, ["age", "sex"]) == pytest.approx(np.mean(1 / sizes))
    assert record_linkage(df, df, ["age", "sex"]) == pytest.approx(
        assess(df, ["age", "sex"])["prosecutor_avg"]
    )


def test_linkage_on_ranges_hierarchy_nodes_and_suppression():
    orig = pd.DataFrame(
        {"age": [20, 29, 41, 58], "cat": ["a1", "a2", "b1", "b2"]}, index=[10, 11, 12, 13]
    )
    # numeric QI generalized through its hierarchy (never by parsing labels)
    released = pd.DataFrame(
        {"age": ["20-29", "20-29", "40-49", "50-59"], "cat": ["a", "a", "b1", "b"]},
        index=[10, 11, 12, 13],
    )
    hier = {"age": AGES, "cat": TREE}
    # records 10 and 11 are tied (1/2 each); 12 and 13 are unique and nearest to themselves
    assert record_linkage(orig, released, hier) == pytest.approx((0.5 + 0.5 + 1 + 1) / 4)
    # with "*" for its category, record 13 is nearer to record 12's release (b1: distance
    # 0.5, age 41-49 vs 58) than to its own (distance 1): the link fails
    starred = released.assign(cat=["a", "a", "b1", "*"])
    assert record_linkage(orig, starred, hier) == pytest.approx((0.5 + 0.5 + 1 + 0) / 4)
    # record 13 suppressed: absent from the release, so a failure
    assert record_linkage(orig, released.iloc[:3], hier) == pytest.approx((0.5 + 0.5 + 1) / 4)
    # shuffled release, origins given explicitly
    shuffled = released.iloc[[3, 1, 0, 2]].reset_index(drop=True)
    assert record_linkage(orig, shuffled, hier, true_index=[13, 11, 10, 12]) == pytest.approx(0.75)


def test_linkage_categorical_hierarchical_distance_picks_the_nearer_branch():
    orig = pd.DataFrame({"cat": ["a1", "b1"], "n": [1, 2]})
    released = pd.DataFrame({"cat": ["b", "a"]}, index=[0, 1])  # each swapped to the other
    assert record_linkage(orig, released, {"cat": TREE}) == 0.0
    assert record_linkage(orig, released.loc[[1, 0]].set_axis([0, 1]), {"cat": TREE}) == 1.0


def test_linkage_errors():
    orig = pd.DataFrame({"age": [20, 30]})
    with pytest.raises(InputError, match="neither a number"):
        record_linkage(orig, pd.DataFrame({"age": ["old", "young"]}), ["age"])
    with pytest.raises(InputError, match="does not come"):
        record_linkage(orig, orig.set_axis([5, 6]), ["age"])
    with pytest.raises(InputError, match="not a node"):
        record_linkage(pd.DataFrame({"c": ["a1"]}), pd.DataFrame({"c": ["zz"]}), {"c": TREE})
    with pytest.raises(InputError, match="not in the released"):
        record_linkage(orig, pd.DataFrame({"x": [1, 2]}), ["age"])
    assert record_linkage(orig, orig.iloc[:0], ["age"]) == 0.0


def brute_linkage(orig: pd.DataFrame, released: pd.DataFrame, scale: float) -> float:
    """Explicit loops: numeric 'age' (ranges -> midpoints) and exact-match 'sex'."""

    def mid(v):
        lo, _, hi = str(v).partition("-")
        return (float(lo) + float(hi or lo)) / 2

    total = 0.0
    for i, o in orig.iterrows():
        dists = []
        for j, r in released.iterrows():
            d_age = abs(o["age"] - mid(r["age"])) / scale
            d_sex = 0.0 if o["sex"] == r["sex"] else 1.0
            dists.append((d_age**2 + d_sex**2, j))
        best = min(d for d, _ in dists)
        nearest = [j for d, j in dists if d <= best + 1e-9]
        if i in nearest:
            total += 1 / len(nearest)
    return total / len(orig)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), n=st.integers(1, 12))
def test_linkage_matches_brute_force(data, n):
    ages = data.draw(st.lists(st.integers(20, 40), min_size=n, max_size=n))
    sexes = data.draw(st.lists(st.sampled_from(["F", "M"]), min_size=n, max_size=n))
    orig = pd.DataFrame({"age": ages, "sex": sexes})
    widths = data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    released = pd.DataFrame(
        {
            "age": [
                str(a) if w == 0 else f"{a - w // 2}-{a - w // 2 + w}" for a, w in zip(ages, widths)
            ],
            "sex": sexes,
        }
    )
    keep = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    released = released[np.array(keep, dtype=bool)]
    scale = (max(ages) - min(ages)) or 1.0
    expected = brute_linkage(orig, released, scale) if len(released) else 0.0
    assert record_linkage(orig, released, ["age", "sex"]) == pytest.approx(expected)


def test_assess_counts_missing_values_as_one_class_and_agrees_with_pandas():
    df = pd.DataFrame({"a": [1, 1, None, None, 2], "b": ["x", "x", "y", "y", "y"]})
    r = assess(df, ["a", "b"])
    sizes = df.groupby(["a", "b"], dropna=False)["a"].transform("size").to_numpy()
    assert r["classes"] == 3 and r["sample_uniques"] == 1
    assert r["prosecutor_avg"] == pytest.approx(np.mean(1 / sizes))
