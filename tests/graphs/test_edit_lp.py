"""The LPs of the minimal-edit construction: the b-matching of deletions among losers
against brute force, the b-matching-aware group values (same groups, values within their
degrees, parity, anonymity), and the realization they feed, rechecked with networkx."""

from __future__ import annotations

import itertools
from collections import Counter

import networkx as nx
import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from graphs import _edit
from graphs._edit import _delete_among, _EditGraph, edit_anonymize
from graphs._edit_lp import (
    _TIE,
    _greedy_extension,
    bmatching_vertex,
    group_values,
    max_bmatching,
)
from graphs._twosided import two_sided_sequence


def brute_force_bmatching(pairs, capacity):
    """Largest set of pairs using every node at most ``capacity`` times (exhaustive)."""
    best = 0
    for r in range(len(pairs), 0, -1):
        for subset in itertools.combinations(range(len(pairs)), r):
            use = Counter(x for i in subset for x in pairs[i])
            if all(use[v] <= capacity[v] for v in use):
                return r
    return best


small_graph = st.integers(2, 7).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=10),
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
    )
)


@settings(max_examples=120, deadline=None)
@given(small_graph)
def test_max_bmatching_against_brute_force(case):
    n, raw, cap = case
    pairs = sorted({(min(a, b), max(a, b)) for a, b in raw if a != b})
    capacity = np.array(cap, dtype=np.int64)
    arr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    picks, value = max_bmatching(n, arr, capacity)
    best = brute_force_bmatching(pairs, cap)
    # the integral picks are a b-matching; the LP optimum bounds every b-matching from
    # above and is half-integral, so it is at most half a unit per odd cycle above it
    use = Counter(picks.ravel().tolist())
    assert all(use[v] <= cap[v] for v in use)
    assert {tuple(p) for p in picks.tolist()} <= set(pairs)
    assert len(picks) <= best <= value + 1e-9
    assert abs(2 * value - round(2 * value)) < 1e-6
    if not any(len(c) % 2 for c in nx.cycle_basis(nx.Graph(pairs))):
        assert abs(value - best) < 1e-6  # bipartite: the LP is integral


def lp_bmatching_optimum(n, pairs, capacity):
    """The b-matching LP (``sum_{e ∋ v} x_e <= capacity_v``, ``0 <= x <= 1``) by linprog."""
    if not len(pairs):
        return 0.0
    rows = np.asarray(pairs).ravel()
    cols = np.repeat(np.arange(len(pairs)), 2)
    matrix = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, len(pairs)))
    res = linprog(-np.ones(len(pairs)), A_ub=matrix, b_ub=capacity, bounds=(0, 1), method="highs")
    return -res.fun


def _is_bmatching(picks, pairs, capacity):
    use = Counter(picks.ravel().tolist())
    return all(use[v] <= capacity[v] for v in use) and (
        {tuple(p) for p in picks.tolist()} <= {tuple(p) for p in np.asarray(pairs).tolist()}
    )


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 12).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30),
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
        )
    )
)
def test_max_bmatching_flow_is_the_lp_optimum(case):
    # the maximum flow on the double cover against scipy's linprog of the LP itself
    n, raw, cap = case
    pairs = np.array(sorted({(min(a, b), max(a, b)) for a, b in raw if a != b}), dtype=np.int64)
    pairs = pairs.reshape(-1, 2)
    capacity = np.array(cap, dtype=np.int64)
    picks, value = max_bmatching(n, pairs, capacity)
    assert abs(value - lp_bmatching_optimum(n, pairs, capacity)) < 1e-6
    assert _is_bmatching(picks, pairs, capacity) and len(picks) <= value + 1e-9
    vertex = bmatching_vertex(n, pairs, capacity)
    assert _is_bmatching(vertex, pairs, capacity) and len(vertex) <= value + 1e-9
    if cap and min(cap) >= 1 and max(cap) == 1:  # capacity 1: at least half a maximum matching
        graph = nx.Graph(pairs.tolist())
        assert 2 * len(picks) >= len(nx.max_weight_matching(graph, maxcardinality=True))


@settings(max_examples=150, deadline=None)
@given(small_graph)
def test_greedy_extension_is_a_maximal_bmatching(case):
    n, raw, cap = case
    pairs = np.array(sorted({(min(a, b), max(a, b)) for a, b in raw if a != b}), dtype=np.int64)
    pairs = pairs.reshape(-1, 2)
    residual = np.array(cap, dtype=np.int64)
    take = _greedy_extension(pairs, residual)
    assert _is_bmatching(pairs[take], pairs, residual)
    left = residual - np.bincount(pairs[take].ravel(), minlength=n)
    rest = pairs[~take]
    assert not ((left[rest[:, 0]] > 0) & (left[rest[:, 1]] > 0)).any()  # nothing more fits


def test_max_bmatching_takes_both_ends_of_a_path():
    # a path 0-1-2-3 of losers (one unit each): the middle edge serves 2 units, both ends 4
    picks, value = max_bmatching(4, np.array([[0, 1], [1, 2], [2, 3]]), np.ones(4, dtype=int))
    assert sorted(map(tuple, picks.tolist())) == [(0, 1), (2, 3)] and value == 2


def test_greedy_deletions_stay_a_b_matching():
    graph = nx.gnp_random_graph(40, 0.2, seed=3)
    edges = np.array(list(graph.edges()), dtype=np.int64)
    lose = np.random.default_rng(0).integers(0, 4, 40)
    g = _EditGraph(40, edges)
    left = lose.copy()
    _delete_among(g, left, np.random.default_rng(1))
    removed = g.edges[g.removed]
    assert (left >= 0).all()
    assert (np.bincount(removed.ravel(), minlength=40) == lose - left).all()
    loser = lose > 0
    pairs = edges[loser[edges[:, 0]] & loser[edges[:, 1]]]
    assert len(removed) <= max_bmatching(40, pairs, lose)[1] + 1e-9


# a G(n, p) graph with two hubs of h leaves each: the cases of the hub-graph tests
HUB_CASES = {
    "n": st.integers(6, 30),
    "p": st.floats(0.05, 0.3),
    "h": st.integers(4, 14),
    "k": st.integers(2, 5),
    "seed": st.integers(0, 50),
}


def _hub_graph(n, p, h, seed):
    graph = nx.gnp_random_graph(n, p, seed=seed)
    hub_edges = [(0, n + i) for i in range(h)] + [(1, n + i) for i in range(0, h, 2)]
    return np.array(list(graph.edges()) + hub_edges, dtype=np.int64).reshape(-1, 2), n + h


def hub_case(n, p, h, k, seed):
    """A hub graph of :func:`_hub_graph` (edges, size), its edit graph, its degrees and the
    two-sided target at ``k``."""
    edges, size = _hub_graph(n, p, h, seed)
    g = _EditGraph(size, edges)
    deg = g.degree.copy()
    target, _ = two_sided_sequence(deg, k, seed=seed)
    return edges, size, g, deg, target


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**HUB_CASES)
def test_group_values_keep_groups_parity_and_anonymity(n, p, h, k, seed):
    edges, size, g, deg, target = hub_case(n, p, h, k, seed)
    out, objective = group_values(size, g.edges, deg, target)
    assert objective == objective  # not NaN: the LP is always feasible
    if out is not None:
        assert (out - deg).sum() % 2 == 0
        for value in np.unique(target):  # same groups, each at one value within its degrees
            members = target == value
            assert len(set(out[members].tolist())) == 1
            assert deg[members].min() <= out[members][0] <= deg[members].max()
        assert min(Counter(out.tolist()).values()) >= k


def per_node_group_lp(n, edges, deg, target):
    """The model of :mod:`graphs._edit_lp` written per node (a loss, gain and matched gain
    variable for every node, an ``x`` for every edge between two nodes that can lose), by
    linprog: its optimum."""
    values = np.unique(target)
    grp = np.searchsorted(values, target)
    size = values.size
    lo = np.array([deg[grp == g].min() for g in range(size)])
    hi = np.array([deg[grp == g].max() for g in range(size)])
    can = deg > lo[grp]
    e = edges[can[edges[:, 0]] & can[edges[:, 1]]]
    m = len(e)
    nv = size + 3 * n + 1 + m  # T | loss | gain | matched | S | x
    t, ls, gn, mt, s_, x = 0, size, size + n, size + 2 * n, size + 3 * n, size + 3 * n + 1
    cost = np.zeros(nv)
    cost[ls : ls + n], cost[gn : gn + n], cost[mt : mt + n], cost[x:] = 1.0, 1.0, -0.5, -1.0
    rows = []
    for v in range(n):
        a = np.zeros(nv)
        a[ls + v], a[t + grp[v]] = -1, -1  # loss_v >= d_v - T
        rows.append((a, -deg[v]))
        a = np.zeros(nv)
        a[gn + v], a[t + grp[v]] = -1, 1  # gain_v >= T - d_v
        rows.append((a, deg[v]))
        a = np.zeros(nv)
        a[x + np.flatnonzero((e == v).any(axis=1))] = 1
        a[ls + v] = -1  # sum x <= loss_v
        rows.append((a, 0))
        a = np.zeros(nv)
        a[mt + v], a[gn + v] = 1, -1  # matched <= gain
        rows.append((a, 0))
        a = np.zeros(nv)
        a[mt + v], a[s_] = 2, -1  # 2 matched_v <= S
        rows.append((a, 0))
    a = np.zeros(nv)
    a[s_], a[mt : mt + n] = 1, -1  # S <= sum matched
    rows.append((a, 0))
    bounds = [(lo[g], hi[g]) for g in range(size)] + [(0, None)] * (3 * n + 1) + [(0, 1)] * m
    res = linprog(
        cost,
        A_ub=np.array([r[0] for r in rows]),
        b_ub=np.array([r[1] for r in rows], dtype=float),
        bounds=bounds,
        method="highs",
    )
    return res.fun, hi[grp]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**HUB_CASES)
def test_group_values_class_variables_keep_the_per_node_optimum(n, p, h, k, seed):
    # one variable per class of interchangeable nodes: the same optimum as one per node, up
    # to the tie-break's cost (at most _TIE per unit of every node's largest group value)
    edges, size, g, deg, target = hub_case(n, p, h, k, seed)
    _, objective = group_values(size, g.edges, deg, target)
    reference, top = per_node_group_lp(size, g.edges, deg, target)
    assert reference - 1e-6 <= objective <= reference + _TIE * top.sum() + 1e-6


def _release_degrees(n, edges, added, removed):
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(map(tuple, edges.tolist()))
    before = {frozenset(e) for e in graph.edges()}
    assert all(frozenset(e) not in before for e in added.tolist())
    assert all(frozenset(e) in before for e in removed.tolist())
    graph.remove_edges_from(map(tuple, removed.tolist()))
    graph.add_edges_from(map(tuple, added.tolist()))
    assert sorted(graph.nodes()) == list(range(n)) and nx.number_of_selfloops(graph) == 0
    return [d for _, d in graph.degree()]


def test_lp_values_cut_edits_on_a_power_law_graph(monkeypatch):
    # Barabasi-Albert, 300 nodes, k=10: 79 edits without the b-matching values, 73 with
    graph = nx.barabasi_albert_graph(300, 3, seed=0)
    edges = np.array(list(graph.edges()), dtype=np.int64)
    added, removed, info = edit_anonymize(300, edges, 10, seed=0)
    degrees = _release_degrees(300, edges, added, removed)
    assert min(Counter(degrees).values()) >= 10
    monkeypatch.setattr(_edit, "group_values", lambda *args, **kw: (None, float("nan")))
    before = edit_anonymize(300, edges, 10, seed=0)[2]["symmetric_difference"]
    assert info["symmetric_difference"] < before
    assert info["symmetric_difference"] >= info["edit_lower_bound_edges"]


def test_repairs_cut_hub_edges_to_the_nearest_degrees_first():
    # hub 0 over leaves 1..4 (degree 1) and 5..6 (degree 3, each in a triangle 5-7-8 / 6-9-10)
    from graphs._edit import _drop_priority

    edges = [(0, i) for i in range(1, 7)] + [(5, 7), (5, 8), (7, 8), (6, 9), (6, 10), (9, 10)]
    g = _EditGraph(11, np.array(edges))
    cand = np.arange(1, 7)
    order = cand[np.argsort(-_drop_priority(g, 0, cand), kind="stable")]
    assert set(order[:2].tolist()) == {5, 6}


def _count_lp_calls(monkeypatch):
    calls = []
    original = _edit.group_values

    def counting(*args, **kw):
        calls.append(1)
        return original(*args, **kw)

    monkeypatch.setattr(_edit, "group_values", counting)
    return calls


def test_lp_skipped_when_no_two_losers_are_adjacent(monkeypatch):
    # disjoint stars K_{1,s}: only the centres must lose degree and no two centres are
    # adjacent, so no deletion can serve two units and the LP target is not computed
    edges, start = [], 0
    for size in (3, 4, 5, 6, 7, 8):
        edges += [(start, start + i) for i in range(1, size + 1)]
        start += size + 1
    pairs = np.array(edges, dtype=np.int64)
    g = _EditGraph(start, pairs)
    target = two_sided_sequence(g.degree, 3, even=True, seed=0)[0]
    assert (target < g.degree).any()
    assert _edit._pairing_share(g, g.degree, target) == 0.0
    calls = _count_lp_calls(monkeypatch)
    added, removed, info = edit_anonymize(start, pairs, 3, seed=0)
    assert calls == []
    degrees = _release_degrees(start, pairs, added, removed)
    assert min(Counter(degrees).values()) >= 3


def test_lp_kept_where_loser_pairs_abound(monkeypatch):
    # the Barabasi-Albert case above, where the LP target wins: its share passes the test
    graph = nx.barabasi_albert_graph(300, 3, seed=0)
    edges = np.array(list(graph.edges()), dtype=np.int64)
    calls = _count_lp_calls(monkeypatch)
    edit_anonymize(300, edges, 10, seed=0)
    assert len(calls) == 1


def test_pairing_share_is_the_bmatching_per_unit_of_loss():
    # path 0-1-2-3, every node to lose one: deletions 0-1 and 2-3 serve all, M / L = 2 / 4;
    # only 1 and 2 to lose one: the edge 1-2 serves both, M / L = 1 / 2; only 0 and 3: 0
    g = _EditGraph(4, np.array([[0, 1], [1, 2], [2, 3]]))
    deg = g.degree.copy()
    assert _edit._pairing_share(g, deg, deg - 1) == 0.5
    assert _edit._pairing_share(g, deg, deg - np.array([0, 1, 1, 0])) == 0.5
    assert _edit._pairing_share(g, deg, deg - np.array([1, 0, 0, 1])) == 0.0
    assert _edit._pairing_share(g, deg, deg) == 0.0
