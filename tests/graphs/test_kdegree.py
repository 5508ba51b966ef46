"""k_degree_anonymize: releases checked with plain networkx, supergraph property, errors."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphs
from structanon.errors import InfeasibleError, InputError


def is_k_degree_anonymous(graph: nx.Graph, k: int) -> bool:
    """Independent check with plain networkx: every degree value is held by >= k nodes."""
    counts = Counter(dict(graph.degree()).values())
    return all(c >= k for c in counts.values())


def _check(graph, release, k, construct, relabel):
    out = release.data
    assert isinstance(out, nx.Graph) and not out.is_directed() and not out.is_multigraph()
    assert nx.number_of_selfloops(out) == 0
    assert out.number_of_nodes() == graph.number_of_nodes()  # nobody dropped
    assert release.suppressed == 0 and release.n_individuals == graph.number_of_nodes()
    assert is_k_degree_anonymous(out, k)
    if relabel:
        assert sorted(out.nodes()) == list(range(graph.number_of_nodes()))
        return
    assert set(out.nodes()) == set(graph.nodes())
    before = {frozenset(e) for e in graph.edges() if e[0] != e[1]}
    after = {frozenset(e) for e in out.edges()}
    assert release.info["edges_added"] == len(after - before)
    assert release.info["edges_removed"] == len(before - after)
    if construct in ("supergraph", "probing"):
        assert before <= after
    assert (
        release.info["edges_added"] + release.info["edges_removed"]
        >= (release.info["lower_bound_edges"])
    )


graph_params = st.tuples(st.integers(3, 30), st.floats(0.0, 0.5), st.integers(0, 10**6))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    graph_params,
    st.integers(1, 6),
    st.sampled_from(["supergraph", "swap", "probing"]),
    st.sampled_from(["dp", "greedy"]),
    st.booleans(),
)
def test_release_is_k_degree_anonymous(params, k, construct, method, relabel):
    n, p, seed = params
    graph = nx.gnp_random_graph(n, p, seed=seed)
    if k > n:
        with pytest.raises(InfeasibleError):
            graphs.k_degree_anonymize(graph, k, utility=False)
        return
    release = graphs.k_degree_anonymize(
        graph, k, method=method, construct=construct, relabel=relabel, seed=seed, utility=False
    )
    _check(graph, release, k, construct, relabel)


@settings(max_examples=30, deadline=None)
@given(st.integers(20, 60), st.integers(1, 4), st.integers(0, 10**6), st.integers(2, 8))
def test_power_law_supergraph(n, m, seed, k):
    graph = nx.barabasi_albert_graph(n, m, seed=seed)
    release = graphs.k_degree_anonymize(graph, k, relabel=False, seed=seed, utility=False)
    _check(graph, release, k, "supergraph", relabel=False)


@pytest.mark.parametrize("construct", ["supergraph", "swap", "probing"])
def test_grqc(grqc, construct):
    release = graphs.k_degree_anonymize(
        grqc, 10, construct=construct, relabel=False, seed=0, utility=False
    )
    _check(grqc, release, 10, construct, relabel=False)
    assert release.verify().passed


def test_deterministic_with_a_key_and_relabelled(grqc):
    key = b"0123456789abcdef0123"
    a = graphs.k_degree_anonymize(grqc, 5, seed=3, utility=False, key=key)
    b = graphs.k_degree_anonymize(grqc, 5, seed=3, utility=False, key=key)
    assert list(a.data.edges()) == list(b.data.edges())
    assert list(a.data.nodes()) == sorted(a.data.nodes())  # node order leaks nothing
    assert list(a.data.edges()) == sorted(tuple(sorted(e)) for e in a.data.edges())
    fresh = graphs.k_degree_anonymize(grqc, 5, seed=3, utility=False)
    assert sorted(fresh.data.edges()) != sorted(a.data.edges())
    assert a.source_index is not None and len(a.source_index) == grqc.number_of_nodes()
    plain = graphs.k_degree_anonymize(grqc, 5, seed=3, relabel=False, utility=False, key=key)
    assert sorted(d for _, d in a.data.degree()) == sorted(d for _, d in plain.data.degree())


def test_star_example():
    graph = nx.star_graph(4)
    release = graphs.k_degree_anonymize(graph, 2, relabel=False, seed=1, utility=False)
    assert is_k_degree_anonymous(release.data, 2)
    assert set(graph.edges()) <= set(release.data.edges())


def test_attributes_dropped_unless_kept():
    graph = nx.path_graph(4)
    nx.set_node_attributes(graph, {i: f"name{i}" for i in graph}, "name")
    nx.set_node_attributes(graph, {i: i % 2 for i in graph}, "group")
    nx.set_edge_attributes(graph, 5, "weight")
    graph.graph["title"] = "secret"
    release = graphs.k_degree_anonymize(graph, 2, seed=0, keep_attributes=["group"], utility=False)
    for _, data in release.data.nodes(data=True):
        assert set(data) == {"group"}
    assert all(not d for *_, d in release.data.edges(data=True))
    assert release.data.graph == {}
    with pytest.raises(InputError, match="colour"):
        graphs.k_degree_anonymize(graph, 2, keep_attributes=["colour"], utility=False)


def test_already_anonymous_graph_of_one_degree():
    graph = nx.cycle_graph(9)
    release = graphs.k_degree_anonymize(graph, 9, seed=0)
    assert release.info["edges_added"] == 0 and release.info["already_anonymous"]
    assert release.info["lower_bound_edges"] == 0


def test_self_loops_and_multi_edges_counted():
    graph = nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 2), (2, 3), (3, 0)])
    release = graphs.k_degree_anonymize(graph, 2, seed=0, utility=False)
    assert release.info["input_self_loops_removed"] == 1
    assert release.info["input_duplicate_edges_removed"] == 1
    assert is_k_degree_anonymous(release.data, 2)


def test_directed_refused_unless_as_undirected():
    graph = nx.DiGraph([(0, 1), (1, 0), (1, 2), (2, 3)])
    with pytest.raises(InputError, match="directed"):
        graphs.k_degree_anonymize(graph, 2)
    release = graphs.k_degree_anonymize(graph, 2, as_undirected=True, utility=False)
    assert release.info["input_duplicate_edges_removed"] == 1
    assert is_k_degree_anonymous(release.data, 2)


@pytest.mark.parametrize(
    "graph, kwargs, error",
    [
        (nx.Graph(), {"k": 1}, InputError),
        (nx.path_graph(3), {"k": 4}, InfeasibleError),
        (nx.path_graph(3), {"k": 0}, InputError),
        (nx.path_graph(3), {"k": "2"}, InputError),
        (nx.path_graph(3), {"k": 2, "method": "exact"}, InputError),
        (nx.path_graph(3), {"k": 2, "construct": "rewire"}, InputError),
        (nx.path_graph(3), {"k": 2, "utility": "some"}, InputError),
        (nx.path_graph(3), {"k": 2, "seed": -1}, InputError),
        (nx.path_graph(3), {"k": 2.5}, InputError),
        ([(0, 1)], {"k": 1}, InputError),
    ],
)
def test_errors(graph, kwargs, error):
    with pytest.raises(error) as info:
        graphs.k_degree_anonymize(graph, **kwargs)
    name = next((p for p in ("method", "construct", "utility", "seed") if p in kwargs), None)
    if error is InputError and name is not None:
        assert name in str(info.value)
    elif error is InputError and kwargs["k"] != 1:
        assert "k" in str(info.value)


def test_utility_none_like_the_command_line():
    release = graphs.k_degree_anonymize(nx.path_graph(6), 2, utility="none")
    assert release.utility == {} and release.verify().passed


def test_k1_warns():
    release = graphs.k_degree_anonymize(nx.path_graph(5), 1, utility=False)
    assert any("k = 1" in w for w in release.info["warnings"])
    assert release.info["edges_added"] == 0


@pytest.mark.parametrize("construct", ["supergraph", "swap", "probing"])
def test_one_degree_class_reaches_the_least_common_degree(construct):
    """k > n/2 forces one degree class.  The old construction re-anonymized round after round,
    two degrees at a time (here 38 rounds to end at the complete graph; on ego-Facebook at
    k=4000, 1000 rounds and a failure); the common-degree construction finds a 16-regular
    supergraph at once."""
    graph = nx.barabasi_albert_graph(53, 2, seed=3)
    release = graphs.k_degree_anonymize(
        graph, 53, construct=construct, relabel=False, seed=0, utility=False
    )
    degrees = {d for _, d in release.data.degree()}
    assert degrees == {16}  # max degree 15, n odd: the least even common degree
    assert set(graph.edges()) <= set(release.data.edges())
    assert release.info["rounds"] == 1 and release.info["fallback"] == "common degree 16"


def test_construction_work_is_bounded():
    """When the rounds run out, the construction falls back instead of failing."""
    from graphs._construct import construct

    graph = nx.barabasi_albert_graph(53, 2, seed=3)
    edges = np.array(sorted(tuple(sorted(e)) for e in graph.edges()), dtype=np.int64)
    built = construct(53, edges, 53, max_rounds=3)
    assert set(built.target.tolist()) == {16} and not len(built.removed)
    odd = nx.star_graph(4)  # n = 5 odd, max degree 4: K5 is the only answer for k = 5
    edges = np.array(list(odd.edges()), dtype=np.int64)
    built = construct(5, edges, 5, max_rounds=1)
    assert set(built.target.tolist()) == {4} and len(built.added) == 6


def test_release_report_fields(grqc):
    release = graphs.k_degree_anonymize(grqc, 5, seed=0, utility="fast")
    d = release.to_dict()
    assert d["verification"]["passed"]
    info = d["info"]
    assert info["lower_bound_edges"] == -(-info["l1_degree_increase_optimum"] // 2)
    assert info["ratio_to_lower_bound"] == pytest.approx(
        (info["edges_added"] + info["edges_removed"]) / info["lower_bound_edges"]
    )
    assert info["sequence_bound_edges"] >= info["lower_bound_edges"]
    assert info["edges_added"] >= info["sequence_bound_edges"]
    assert d["risk"]["after"]["degree"]["min_candidates"] >= 5
    assert d["utility"]["edge_jaccard"] < 1
    assert "mapping" not in str(d)


def test_facebook_supergraph(facebook_edges):
    graph = nx.Graph(facebook_edges.tolist())
    release = graphs.k_degree_anonymize(graph, 20, relabel=False, seed=0, utility=False)
    _check(graph, release, 20, "supergraph", relabel=False)
    assert release.info["l1_degree_increase_optimum"] == 15131
    assert release.info["edges_added"] <= 1.1 * release.info["sequence_bound_edges"]
