"""The largest-changes lower bound on the edits of any k-degree-anonymous graph
(:func:`graphs._twosided.mover_lower_bound`): never above the exact optimum found by
exhaustive search over every graph on the node set, its dynamic program equal to a
brute-force minimum over every k-anonymous degree sequence, and the cut window weaker."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphs._twosided import (
    _mover_value,
    hub_lower_bound,
    mover_lower_bound,
    structural_lower_bound,
    two_sided_sequence,
)
from tests.graphs.test_edit import _exhaustive_optimum
from tests.graphs.test_hub_bound import hub_edges, hub_graphs


def phi_b(delta, b):
    """``sum of the b largest changes - C(b, 2) + 1/2 sum of the others' (change - b)^+``."""
    srt = sorted(delta, reverse=True)
    return sum(srt[:b]) - b * (b - 1) / 2 + 0.5 * sum(max(x - b, 0) for x in srt[b:])


def brute_force_value(deg, k, b):
    """``min Phi_b(|t - d|)`` over every k-anonymous ``t`` in ``0..n-1`` by enumeration."""
    n = len(deg)
    best = math.inf
    for t in itertools.product(range(n), repeat=n):
        if min(t.count(v) for v in set(t)) < k:
            continue
        best = min(best, phi_b([abs(x - y) for x, y in zip(t, deg)], b))
    return best


graph = hub_graphs(7)


def _degrees(n, edges):
    deg = [0] * n
    for a, b in edges:
        deg[a] += 1
        deg[b] += 1
    return deg


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph)
def test_mover_bound_never_exceeds_the_exact_optimum(case):
    n, hubs, extra, k = case
    edges = hub_edges(n, hubs, extra)
    deg = _degrees(n, edges)
    exact = _exhaustive_optimum(n, edges, k)
    assert mover_lower_bound(deg, k) <= exact
    assert mover_lower_bound(deg, k, window=k) <= exact


degree_case = st.integers(3, 5).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, n - 1), min_size=n, max_size=n), st.integers(2, n))
)


def _sorted_case(case):
    """``(degrees, k, n, sorted degrees, the largest change a node can make)``."""
    deg, k = case
    n = len(deg)
    ds = np.sort(np.array(deg, dtype=np.int64))
    return deg, k, n, ds, max(int(ds[-1]), n - 1 - int(ds[0]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degree_case)
def test_mover_dp_equals_brute_force_over_sequences(case):
    deg, k, n, ds, top = _sorted_case(case)
    for b in range(1, n + 1):
        brute = brute_force_value(deg, k, b)
        # a grid finer than the half-integers: every theta is evaluated, the value exact
        low, seen = _mover_value(ds, k, b, False, top, 4 * n + 8, 0)
        assert math.isclose(low, brute) and math.isclose(seen, brute), (b, low, seen, brute)
        # a coarse grid refined: a lower bound, never above the exact value
        coarse, _ = _mover_value(ds, k, b, False, top, 2, 0)
        assert coarse <= brute + 1e-9
        # the cut window drops the lowest runs and their costs: never above
        cut, _ = _mover_value(ds[1:], k, b, True, top, 4 * n + 8, 0)
        assert cut <= brute + 1e-9


def test_mover_bound_exceeds_the_older_bounds_on_a_star():
    # K_{1,5} at k = 2: the hub needs a partner at its value T, the two change by
    # (5 - T) + (T - 1) = 4 together, so with b = 2: 4 - C(2, 2) = 3 edits at least; the
    # structural bound takes the hub alone (its partner pays half) and finds 2
    edges = {(0, v) for v in range(1, 6)}
    deg = _degrees(6, edges)
    assert _exhaustive_optimum(6, edges, 2) == 4
    assert mover_lower_bound(deg, 2) == 3
    assert structural_lower_bound(deg, 2) == 2
    assert hub_lower_bound(6, sorted(edges), 2) <= 2
    assert math.ceil(two_sided_sequence(deg, 2)[1] / 2) <= 2


def brute_force_h(deg, k, b, theta):
    """``h(theta) = min sum_v g(|t_v - d_v|)`` over every k-anonymous ``t`` by enumeration
    (``g(delta) = 1/2 (delta - b)^+ + (phi(delta) - theta)^+``, ``phi(delta) = delta - 1/2
    (delta - b)^+``)."""
    n = len(deg)

    def g(delta):
        phi = delta - 0.5 * max(delta - b, 0)
        return 0.5 * max(delta - b, 0) + max(phi - theta, 0.0)

    best = math.inf
    for t in itertools.product(range(n), repeat=n):
        if min(t.count(v) for v in set(t)) < k:
            continue
        best = min(best, sum(g(abs(x - y)) for x, y in zip(t, deg)))
    return best


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degree_case, st.integers(1, 5))
def test_h_falls_no_faster_than_the_node_count(case, b):
    # the bracket bound of _brackets: h is nonincreasing and h(theta) >= h(theta_j) - n
    # (theta - theta_j), checked on every pair of half-integers by enumeration
    deg, k = case
    n = len(deg)
    b = min(b, n)
    thetas = [x / 2 for x in range(0, 2 * n)]
    h = [brute_force_h(deg, k, b, th) for th in thetas]
    for i, j in itertools.combinations(range(len(thetas)), 2):
        assert h[j] <= h[i] + 1e-9
        assert h[j] >= h[i] - n * (thetas[j] - thetas[i]) - 1e-9


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degree_case, st.integers(2, 5), st.integers(0, 3), st.integers(1, 3))
def test_coarse_searches_never_exceed_the_brute_force_minimum(case, grid, rounds, pieces):
    # any grid, any number of refinements: the value returned is a lower bound on
    # min Phi_b over every k-anonymous sequence (found by enumeration), and the least
    # evaluated value an upper one
    deg, k, n, ds, top = _sorted_case(case)
    for b in range(1, n + 1):
        brute = brute_force_value(deg, k, b)
        low, seen = _mover_value(ds, k, b, False, top, grid, rounds, 1, pieces)
        assert low <= brute + 1e-9 <= seen + 2e-9, (b, low, seen, brute)
