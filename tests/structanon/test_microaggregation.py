"""The core MDAV on dense and sparse rows, checked against a plain-Python MDAV."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from structanon.errors import InfeasibleError, InputError
from structanon.microaggregation import mdav, ward_merge_cost


def reference_mdav(x, k):
    """MDAV written from its definition with plain loops (first row wins ties)."""
    remaining = list(range(len(x)))
    labels = [-1] * len(x)
    group = 0

    def d2(a, b):
        return float(((x[a] - b) ** 2).sum())

    def farthest(point):
        return max(remaining, key=lambda i: (d2(i, point), -i))

    def form(center):
        nonlocal group
        nearest = sorted(remaining, key=lambda i: d2(i, center))[:k]
        for i in nearest:
            labels[i] = group
            remaining.remove(i)
        group += 1

    while len(remaining) >= 3 * k:
        r = x[farthest(x[remaining].mean(axis=0))].copy()
        s = x[farthest(r)].copy()
        form(r)
        form(s)
    if len(remaining) >= 2 * k:
        form(x[farthest(x[remaining].mean(axis=0))].copy())
    for i in remaining:
        labels[i] = group
    return np.array(labels)


def _groups(labels):
    return sorted(tuple(np.flatnonzero(labels == g)) for g in np.unique(labels))


@given(st.integers(0, 10_000), st.integers(1, 60), st.integers(1, 3), st.integers(1, 6))
def test_mdav_matches_reference_dense_and_sparse(seed, n, d, k):
    x = (
        np.random.default_rng(seed).integers(0, 1000, size=(n, d)).astype(float)
        + np.arange(n)[:, None] * 1e-6
    )  # distinct distances: no ties to break
    if k > n:
        with pytest.raises(InfeasibleError):
            mdav(x, k)
        return
    expected = _groups(reference_mdav(x, k))
    assert _groups(mdav(x, k)) == expected
    assert _groups(mdav(sp.csr_matrix(x), k)) == expected
    sizes = np.bincount(mdav(x, k))
    assert sizes.min() >= k and (len(sizes) == 1 or sizes.max() <= 2 * k - 1)


def test_ward_costs_of_the_lecture_example():
    assert ward_merge_cost([2], [12, 16]) == 96.0
    assert round(ward_merge_cost([2, 12, 16], [25, 29]), 6) == 346.8


def test_bad_input_is_named():
    with pytest.raises(InputError, match="k must be an integer >= 1"):
        mdav([1, 2, 3], 0)
    with pytest.raises(InputError, match="row 1"):
        mdav([1.0, float("nan"), 3.0], 1)
