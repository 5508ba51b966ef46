"""Degree-sequence anonymization: exact DP, greedy, parity, validation."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphs import anonymize_degree_sequence, sequence_cost
from structanon.errors import InfeasibleError, InputError
from tests._support import set_partitions


def brute_force_any_grouping(d, k):
    """Least increase over every grouping (any set partition, blocks of >= k nodes)."""
    best = None
    for part in set_partitions(list(range(len(d)))):
        if min(len(b) for b in part) < k:
            continue
        cost = sum(max(d[i] for i in b) - d[i] for b in part for i in b)
        best = cost if best is None else min(best, cost)
    return best


def brute_force_consecutive(d, k, parity=None):
    """Least increase over consecutive groups of k..2k-1 sorted degrees (optionally even)."""
    ds = sorted(d, reverse=True)
    n = len(ds)
    best = None
    for cuts in itertools.product([0, 1], repeat=n - 1):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [n]
        sizes = np.diff(bounds)
        if sizes.min() < k or sizes.max() > 2 * k - 1:
            continue
        cost = sum(ds[a] - ds[i] for a, b in zip(bounds, bounds[1:]) for i in range(a, b))
        if parity is not None and cost % 2 != parity:
            continue
        best = cost if best is None else min(best, cost)
    return best


def _check_valid(d, out, k):
    out = np.asarray(out)
    assert out.shape == np.shape(d)
    assert (out >= np.asarray(d)).all()
    assert min(Counter(out.tolist()).values()) >= k


@pytest.mark.parametrize(
    "degrees, k, cost, expected",
    [
        ([5, 4, 4, 2, 1, 1], 2, 3, [5, 5, 4, 4, 1, 1]),
        ([10, 9, 8, 2, 2, 2, 1], 3, 4, [10, 10, 10, 2, 2, 2, 2]),
        ([3, 3, 3], 3, 0, [3, 3, 3]),
        ([7, 1, 1, 1], 2, 6, [7, 7, 1, 1]),
        ([1, 2, 3, 4, 5, 6], 3, 6, [3, 3, 3, 6, 6, 6]),
        ([4, 4, 1], 1, 0, [4, 4, 1]),
    ],
)
def test_dp_hand_checked(degrees, k, cost, expected):
    out = anonymize_degree_sequence(degrees, k, seed=0)
    assert sequence_cost(degrees, out) == cost
    assert out.tolist() == expected


def test_dp_even_parity_hand_checked():
    # optimum 3 ([5,5,4,4,1,1]) is odd; the best even one costs 4: [5,5,5] + [2,1,1] -> 2 + 2
    d = [5, 4, 4, 2, 1, 1]
    out = anonymize_degree_sequence(d, 2, even=True, seed=0)
    assert sequence_cost(d, out) == 4
    _check_valid(d, out, 2)


def test_input_order_preserved():
    d = np.array([1, 5, 1, 4, 2, 4])
    out = anonymize_degree_sequence(d, 2)
    assert out[[0, 1, 2, 4]].tolist() == [1, 5, 1, 4]  # ties between the 4s are seeded
    assert sorted(out[[3, 5]].tolist()) == [4, 5]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=8), st.integers(1, 4), st.integers(0, 3))
def test_dp_matches_brute_force(d, k, seed):
    if k > len(d):
        with pytest.raises(InfeasibleError):
            anonymize_degree_sequence(d, k)
        return
    out = anonymize_degree_sequence(d, k, seed=seed)
    _check_valid(d, out, k)
    assert sequence_cost(d, out) == brute_force_any_grouping(d, k)
    assert sequence_cost(d, out) == brute_force_consecutive(d, k)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=2, max_size=10), st.integers(2, 4))
def test_even_dp_matches_brute_force(d, k):
    if k > len(d):
        return
    expected = brute_force_consecutive(d, k, parity=0)
    if expected is None:
        with pytest.raises(InfeasibleError):
            anonymize_degree_sequence(d, k, even=True)
        return
    out = anonymize_degree_sequence(d, k, even=True, seed=1)
    _check_valid(d, out, k)
    assert sequence_cost(d, out) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=40), st.integers(1, 6))
def test_greedy_valid_and_not_better_than_dp(d, k):
    if k > len(d):
        return
    greedy = anonymize_degree_sequence(d, k, method="greedy")
    _check_valid(d, greedy, k)
    assert sequence_cost(d, greedy) >= sequence_cost(d, anonymize_degree_sequence(d, k))


def test_deterministic_given_seed():
    rng = np.random.default_rng(3)
    d = rng.integers(0, 20, size=200)
    a = anonymize_degree_sequence(d, 7, seed=5)
    assert np.array_equal(a, anonymize_degree_sequence(d, 7, seed=5))


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"degrees": [], "k": 1}, InputError),
        ({"degrees": [1, 2], "k": 0}, InputError),
        ({"degrees": [1, 2], "k": 2.5}, InputError),
        ({"degrees": [1, -2], "k": 1}, InputError),
        ({"degrees": [1.5, 2], "k": 1}, InputError),
        ({"degrees": [1, 2], "k": 3}, InfeasibleError),
        ({"degrees": [1, 2], "k": 1, "method": "magic"}, InputError),
    ],
)
def test_errors(kwargs, error):
    with pytest.raises(error):
        anonymize_degree_sequence(**kwargs)


def test_facebook_peer_optimum(facebook_edges):
    """The published optimum totals on SNAP ego-Facebook (PEERS.md) are reproduced exactly."""
    d = np.bincount(facebook_edges.ravel())
    assert d.size == 4039 and d.sum() == 2 * 88234
    expected = {5: 2032, 10: 6140, 20: 15131, 50: 42785, 100: 89953}
    for k, total in expected.items():
        out = anonymize_degree_sequence(d, k, seed=0)
        _check_valid(d, out, k)
        assert sequence_cost(d, out) == total
        greedy = anonymize_degree_sequence(d, k, method="greedy")
        _check_valid(d, greedy, k)
        assert sequence_cost(d, greedy) >= total
