"""Utility measures against networkx, and candidate sets against brute force."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from graphs import candidate_sets, graph_utility, structural_risk
from graphs.metrics import (
    _adjacency,
    _betweenness,
    _closeness,
    _distances,
    _triangles,
    degree_assortativity,
    ks_statistic,
)


def _edges(g):
    return np.sort(np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2), axis=1)


def test_identical_graphs():
    g = nx.karate_club_graph()
    u = graph_utility(g, g.copy(), seed=0)
    assert u["degree_emd"] == 0 and u["degree_ks"] == 0 and u["edge_jaccard"] == 1
    for key in (
        "pagerank_spearman",
        "eigenvector_spearman",
        "closeness_spearman",
        "betweenness_spearman",
    ):
        assert u[key] == pytest.approx(1.0)
    assert u["community_nmi"] == pytest.approx(1.0) and u["community_ari"] == pytest.approx(1.0)


def test_measures_match_networkx():
    g = nx.connected_watts_strogatz_graph(60, 4, 0.3, seed=1)
    h = g.copy()
    h.add_edges_from([(0, 30), (5, 40), (7, 50)])
    u = graph_utility(g, h, seed=0, sources=60)
    for i, graph in enumerate((g, h)):
        assert u["avg_clustering"][i] == pytest.approx(nx.average_clustering(graph))
        assert u["transitivity"][i] == pytest.approx(nx.transitivity(graph))
        assert u["avg_shortest_path"][i] == pytest.approx(nx.average_shortest_path_length(graph))
        assert u["assortativity"][i] == pytest.approx(nx.degree_assortativity_coefficient(graph))
    assert u["edge_jaccard"] == pytest.approx(g.number_of_edges() / h.number_of_edges())


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 25), st.floats(0.05, 0.6), st.integers(0, 1000))
def test_betweenness_matches_networkx(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    ours = _betweenness(_adjacency(n, _edges(g)), np.arange(n), batch=4) / 2
    ref = nx.betweenness_centrality(g, normalized=False)
    assert np.allclose(ours, [ref[i] for i in range(n)])


def test_assortativity_star():
    assert degree_assortativity(4, np.array([[0, 1], [0, 2], [0, 3]])) == pytest.approx(-1.0)


def test_graphs_must_share_nodes():
    with pytest.raises(ValueError):
        graph_utility(nx.path_graph(3), nx.path_graph(4))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 25), st.floats(0.0, 0.6), st.integers(0, 1000))
def test_candidate_sets_brute_force(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    e = _edges(g)
    deg = dict(g.degree())
    key = {v: (deg[v], tuple(sorted(deg[w] for w in g[v]))) for v in g}
    by_degree, by_neigh = Counter(deg.values()), Counter(key.values())
    assert candidate_sets(n, e).tolist() == [by_degree[deg[v]] for v in range(n)]
    assert candidate_sets(n, e, "neighbourhood").tolist() == [by_neigh[key[v]] for v in range(n)]
    risk = structural_risk(g)
    assert risk["degree"]["share_unique"] == pytest.approx(
        sum(by_degree[deg[v]] == 1 for v in g) / n
    )
    assert risk["neighbourhood"]["prosecutor_max"] == pytest.approx(
        max(1 / by_neigh[key[v]] for v in g)
    )


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 25), st.floats(0.0, 0.5), st.integers(0, 1000))
def test_distances_and_closeness_match_networkx(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    src = np.arange(0, n, 2)
    dist = _distances(_adjacency(n, _edges(g)), src, batch=3)
    for row, s in zip(dist, src):
        ref = nx.single_source_shortest_path_length(g, int(s))
        assert [ref.get(v, np.inf) for v in range(n)] == row.tolist()
    ref = nx.closeness_centrality(g)
    assert np.allclose(_closeness(dist, n), [ref[int(s)] for s in src])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=30),
    st.lists(st.integers(0, 9), min_size=1, max_size=30),
)
def test_ks_matches_scipy(a, b):
    ref = stats.ks_2samp(a, b, method="asymp").statistic if len(a) > 1 and len(b) > 1 else None
    if ref is None:  # scipy's p-value warns on one-element samples; compare with the definition
        grid = sorted(set(a) | set(b))
        ref = max(
            abs(sum(x <= g for x in a) / len(a) - sum(x <= g for x in b) / len(b)) for g in grid
        )
    assert ks_statistic(np.array(a), np.array(b)) == pytest.approx(ref)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30), st.floats(0.0, 0.8), st.integers(0, 1000))
def test_triangles_match_networkx(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    adj = _adjacency(n, _edges(g))
    ref = nx.triangles(g)
    rows = np.random.default_rng(seed).choice(n, size=max(1, n // 3), replace=False)
    assert _triangles(adj, rows).tolist() == [ref[int(r)] for r in rows]
    assert _triangles(adj, None).tolist() == [ref[i] for i in range(n)]


@pytest.mark.slow
def test_clustering_work_is_bounded_on_dense_graphs(monkeypatch):
    """A dense release (one degree class) samples nodes for triangle counting instead of
    probing every pair of neighbours (ego-Facebook at k=4000: billions of probes)."""
    import graphs.metrics as metrics

    n = 400
    before = np.array(list(nx.cycle_graph(n).edges()), dtype=np.int64)
    after = np.array(list(nx.complete_graph(n).edges()), dtype=np.int64)
    exact = metrics.utility_from_edges(n, before, after, seed=0, level="fast")
    assert exact["clustering_nodes"] == n and exact["avg_clustering"][1] == pytest.approx(1.0)
    monkeypatch.setattr(metrics, "TRIANGLE_WORK", 4_000_000)  # work of K_400: 63.7 million
    sampled = metrics.utility_from_edges(n, before, after, seed=0, level="fast")
    assert metrics.MIN_CLUSTERING_NODES <= sampled["clustering_nodes"] < n
    assert sampled["avg_clustering"][1] == pytest.approx(1.0)
