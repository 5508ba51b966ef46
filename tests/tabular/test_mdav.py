"""Tests of MDAV and Ward's merge cost (the core's, as tabular uses them) and of
``tabular.microaggregate``."""

from __future__ import annotations

from functools import partial
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon import InfeasibleError, InputError
from structanon.microaggregation import mdav as core_mdav
from structanon.microaggregation import ward_merge_cost, within_group_sse
from tabular import microaggregate

#: MDAV as tabular runs it: on standardized columns.
mdav = partial(core_mdav, standardize=True)

WARD_VALUES = [2, 12, 16, 25, 29, 45]


def brute_sse(values) -> float:
    """Sum over records of the squared distance to the group mean, by explicit loops."""
    rows = [np.atleast_1d(np.asarray(v, dtype=float)) for v in values]
    mean = [sum(r[j] for r in rows) / len(rows) for j in range(len(rows[0]))]
    return sum(sum((r[j] - mean[j]) ** 2 for j in range(len(mean))) for r in rows)


def brute_merge_cost(a, b) -> float:
    return brute_sse(list(a) + list(b)) - brute_sse(a) - brute_sse(b)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([2], [12, 16], 96.0),
        ([12, 16], [25, 29], 169.0),
        ([25, 29], [45], 216.0),
        ([2], [45], 924.5),
        ([2, 12, 16], [25, 29], 346.8),
        ([2, 12, 16], [45], 918.75),
    ],
)
def test_ward_example_merge_costs(a, b, expected):
    """The Ward slide on {2, 12, 16, 25, 29, 45}: these printed costs follow the definition."""
    assert ward_merge_cost(a, b) == pytest.approx(expected, abs=1e-9)
    assert brute_merge_cost(a, b) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    "a, b, printed, exact",
    [
        ([2], [25, 29], 416.33, 1250 / 3),
        ([12, 16], [45], 640.33, 1922 / 3),
    ],
)
def test_ward_example_misprinted_costs(a, b, printed, exact):
    """The slide prints 416.33 and 640.33; the definition gives 416.67 and 640.67."""
    assert ward_merge_cost(a, b) == pytest.approx(exact, abs=1e-9)
    assert brute_merge_cost(a, b) == pytest.approx(exact, abs=1e-9)
    assert round(exact, 2) in (416.67, 640.67)
    assert abs(ward_merge_cost(a, b) - printed) > 0.3


def test_ward_cost_of_every_pair_of_groups_matches_brute_force():
    groups = [[2], [12, 16], [25, 29], [45], [2, 12, 16], [25, 29, 45]]
    for a, b in combinations(groups, 2):
        if set(a) & set(b):
            continue
        assert ward_merge_cost(a, b) == pytest.approx(brute_merge_cost(a, b))


def test_ward_cost_multivariate_and_errors():
    a, b = [[0, 0], [2, 0]], [[4, 3]]
    assert ward_merge_cost(a, b) == pytest.approx(brute_merge_cost(a, b))
    assert within_group_sse(a) == pytest.approx(2.0)
    with pytest.raises(InputError, match="non-empty"):
        ward_merge_cost([], [1])
    with pytest.raises(InputError, match="columns"):
        ward_merge_cost([[1, 2]], [[1, 2, 3]])
    with pytest.raises(InputError, match="missing"):
        ward_merge_cost([1, np.nan], [1])


def test_mdav_recovers_separated_clusters():
    values = np.array([1, 50, 2, 51, 3, 52, 100, 101, 102], dtype=float)
    labels = mdav(values, 3)
    groups = {frozenset(np.flatnonzero(labels == g).tolist()) for g in set(labels.tolist())}
    assert groups == {frozenset({0, 2, 4}), frozenset({1, 3, 5}), frozenset({6, 7, 8})}


def test_mdav_first_group_is_around_the_record_farthest_from_the_centroid():
    labels = mdav([[0, 0], [0, 1], [1, 0], [20, 20], [20, 21], [21, 20], [5, 5]], 3)
    assert labels[3] == labels[4] == labels[5] == 0
    assert sorted(np.bincount(labels).tolist()) == [3, 4]


def test_mdav_errors():
    with pytest.raises(InfeasibleError):
        mdav([1, 2], 3)
    with pytest.raises(InputError, match="k must"):
        mdav([1, 2], 0)
    with pytest.raises(InputError, match="row 1"):
        mdav([1, np.nan, 3], 1)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 60), d=st.integers(1, 3), k=st.integers(1, 7))
def test_mdav_groups_hold_k_to_2k_minus_1(data, n, d, k):
    values = np.array(
        data.draw(
            st.lists(st.lists(st.integers(-20, 20), min_size=d, max_size=d), min_size=n, max_size=n)
        ),
        dtype=float,
    )
    if k > n:
        with pytest.raises(InfeasibleError):
            mdav(values, k)
        return
    labels = mdav(values, k)
    assert labels.shape == (n,) and labels.min() == 0
    sizes = np.bincount(labels)
    assert sizes.sum() == n and (sizes >= k).all()
    assert (sizes <= max(2 * k - 1, k)).all()
    assert np.array_equal(mdav(values, k), labels)  # deterministic


def test_microaggregate_replaces_values_by_group_means():
    df = pd.DataFrame(
        {
            "age": [20, 22, 24, 60, 62, 64, 61],
            "income": [1, 2, 3, 7, 8, 9, 8],
            "job": list("abcdefg"),
        },
        index=list("ABCDEFG"),
    )
    release = microaggregate(df, ["age", "income"], 3, key=b"k" * 16)
    # the release is in a secret order; the publisher's link puts it back in input order
    out = release.data.set_axis(release.source_index).loc[df.index]
    assert out["job"].equals(df["job"])
    assert out.loc[["A", "B", "C"], "age"].tolist() == [22.0] * 3
    assert out.loc[["D", "E", "F", "G"], "age"].tolist() == [61.75] * 4
    assert out.loc[["D", "E", "F", "G"], "income"].tolist() == [8.0] * 4
    assert out["age"].sum() == pytest.approx(df["age"].sum())  # means preserve totals
    assert out.groupby(["age", "income"]).size().min() >= 3
    assert df["age"].tolist()[0] == 20  # input untouched


def test_microaggregate_errors():
    df = pd.DataFrame({"age": [1.0, None, 3.0], "job": ["a", "b", "c"]})
    with pytest.raises(InputError, match="row"):
        microaggregate(df, ["age"], 1)
    with pytest.raises(InputError, match="numeric"):
        microaggregate(df, ["job"], 1)
    with pytest.raises(InputError, match="not in"):
        microaggregate(df, ["nope"], 1)
