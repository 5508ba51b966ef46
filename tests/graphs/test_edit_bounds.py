"""The per-degree-sequence lower bound of the edit construction
(:func:`graphs._edit_lp.sequence_lower_bound`) against exhaustive search over every graph on
the node set, and the construction's releases against it."""

from __future__ import annotations

import itertools
from collections import defaultdict

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphs._edit import edit_anonymize
from graphs._edit_lp import sequence_lower_bound


def exact_by_sequence(n, edges):
    """Least ``|E' xor E|`` over every simple graph on ``n`` nodes, per degree sequence."""
    slots = list(itertools.combinations(range(n), 2))
    original = {tuple(e) for e in edges}
    best: dict[tuple[int, ...], int] = defaultdict(lambda: 10**9)
    for mask in range(1 << len(slots)):
        chosen = {slots[i] for i in range(len(slots)) if mask >> i & 1}
        deg = [0] * n
        for u, v in chosen:
            deg[u] += 1
            deg[v] += 1
        key = tuple(deg)
        best[key] = min(best[key], len(chosen ^ original))
    return best


tiny_graph = st.integers(2, 5).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.sets(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
            .filter(lambda e: e[0] != e[1])
            .map(lambda e: (min(e), max(e))),
            max_size=10,
        ),
    )
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_graph)
def test_sequence_bound_never_exceeds_the_exact_optimum(case):
    n, edges = case
    arr = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    exact = exact_by_sequence(n, arr)
    tight = 0
    for deg, best in exact.items():
        bound = sequence_lower_bound(n, arr, np.array(deg))
        assert bound <= best, (deg, bound, best)
        # and never below the classic ceil(sum |Delta| / 2)
        change = np.abs(np.array(deg) - np.bincount(arr.ravel(), minlength=n)).sum()
        assert bound >= -(-int(change) // 2)
        tight += bound == best
    assert tight >= 1  # the original sequence itself: 0 = 0


def test_sequence_bound_is_exact_where_the_plain_bound_is_not():
    # hub 0 of K_{1,4} down to 2 with the leaves unchanged: no two losers are adjacent, so
    # its 2 deletions leave two leaves short, joined by one addition (3 edits; the plain
    # bound ceil(2 / 2) = 1)
    edges = np.array([[0, 1], [0, 2], [0, 3], [0, 4]])
    final = np.array([2, 1, 1, 1, 1])
    exact = exact_by_sequence(5, edges)[tuple(final)]
    assert exact == 3
    assert sequence_lower_bound(5, edges, final) == 3


def test_releases_respect_the_bound_of_their_own_degrees():
    graph = nx.barabasi_albert_graph(300, 3, seed=1)
    edges = np.array(sorted(tuple(sorted(e)) for e in graph.edges()), dtype=np.int64)
    for k in (5, 10, 20):
        added, removed, info = edit_anonymize(300, edges, k, seed=0)
        final = np.bincount(edges.ravel(), minlength=300)
        np.add.at(final, added.ravel(), 1)
        np.subtract.at(final, removed.ravel(), 1)
        bound = sequence_lower_bound(300, edges, final)
        assert info["two_sided_lower_bound_edges"] <= info["symmetric_difference"]
        assert bound <= info["symmetric_difference"]


def test_polish_keeps_anonymity_and_never_adds_edits(monkeypatch):
    from graphs import _edit

    graph = nx.powerlaw_cluster_graph(400, 4, 0.3, seed=2)
    edges = np.array(sorted(tuple(sorted(e)) for e in graph.edges()), dtype=np.int64)
    for k in (10, 25):
        added, removed, info = edit_anonymize(400, edges, k, seed=0)
        final = np.bincount(edges.ravel(), minlength=400)
        np.add.at(final, added.ravel(), 1)
        np.subtract.at(final, removed.ravel(), 1)
        assert np.bincount(final)[np.bincount(final) > 0].min() >= k
        monkeypatch.setattr(_edit, "_POLISH", 0)
        unpolished = edit_anonymize(400, edges, k, seed=0)[2]["symmetric_difference"]
        monkeypatch.undo()
        assert info["symmetric_difference"] <= unpolished
