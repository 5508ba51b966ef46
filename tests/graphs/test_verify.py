"""The degree k-anonymity model, the measures switch and what the release says in words."""

from __future__ import annotations

import warnings
from collections import Counter

import networkx as nx
import pytest

import graphs
from structanon.models import PrivacyModel


def _classes_ok(graph: nx.Graph, k: int) -> bool:
    """Independent check: every degree value is held by at least k nodes."""
    return min(Counter(d for _, d in graph.degree()).values()) >= k


@pytest.mark.parametrize(
    "graph",
    [
        nx.karate_club_graph(),
        nx.star_graph(5),
        nx.cycle_graph(7),
        nx.barabasi_albert_graph(60, 2, seed=1),
    ],
)
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_model_agrees_with_a_recount(graph, k):
    model = graphs.DegreeKAnonymity(k)
    assert model.check(graph).passed == _classes_ok(graph, k)
    assert model.check(graphs.degree_partition(graph)).passed == _classes_ok(graph, k)


def test_model_is_a_privacy_model_with_flags():
    model = graphs.DegreeKAnonymity(4, n_nodes=10)
    assert isinstance(model, PrivacyModel)
    assert model.monotone is False and model.monotone_with_suppression is False
    assert model.describe() == "k-degree-anonymity(k=4)" == repr(model)
    assert model.to_dict() == {"model": "k-degree-anonymity", "k": 4}
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        graphs.DegreeKAnonymity(0)


def test_verifier_refuses_what_the_model_excludes():
    loops = nx.cycle_graph(4)
    loops.add_edge(0, 0)
    assert not all(c.passed for c in graphs.degree_verifier(1)(loops))
    assert not all(c.passed for c in graphs.degree_verifier(2)(nx.DiGraph(nx.cycle_graph(4))))
    assert all(c.passed for c in graphs.degree_verifier(2, n_nodes=4)(nx.cycle_graph(4)))
    lost = graphs.degree_verifier(2, n_nodes=5)(nx.cycle_graph(4))
    assert [c.passed for c in lost] == [True, True, False]


def test_release_holds_the_model_and_checks_node_count():
    graph = nx.karate_club_graph()
    release = graphs.k_degree_anonymize(graph, 3, seed=0, measures=False)
    assert release.models == [graphs.DegreeKAnonymity(3)] or [
        m.to_dict() for m in release.models
    ] == [{"model": "k-degree-anonymity", "k": 3}]
    assert isinstance(release.models[0], graphs.DegreeKAnonymity)
    release.data.remove_node(next(iter(release.data.nodes())))  # tampered after release
    assert not release.verify().passed


def test_measures_switch_and_deprecated_alias():
    graph = nx.karate_club_graph()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        off = graphs.k_degree_anonymize(graph, 3, seed=0, measures=False)
    assert off.utility == {} and off.risk == {} and off.checks.passed
    assert "measures" not in off.timings and {
        "prepare",
        "anonymize",
        "publish",
        "verify",
        "total",
    } <= set(off.timings)
    with pytest.warns(DeprecationWarning, match="measure_risk"):
        old = graphs.k_degree_anonymize(graph, 3, seed=0, utility=False, measure_risk=False)
    assert old.risk == {} and old.utility == {}
    with pytest.warns(DeprecationWarning):
        risk_only = graphs.k_degree_anonymize(graph, 3, seed=0, utility=False, measure_risk=True)
    assert risk_only.risk["after"]["degree"]["min_candidates"] >= 3


def test_utility_is_readable_and_the_edits_are_in_words():
    graph = nx.karate_club_graph()
    release = graphs.k_degree_anonymize(graph, 4, seed=0, utility="fast")
    moved = graph.copy()
    moved.add_edges_from([(0, 9), (5, 30)])
    full = graphs.graph_utility(graph, moved, level="fast")  # exact values have long digits
    assert any(len(repr(v)) > 8 for v in full.values() if isinstance(v, float))
    for value in release.utility.values():
        for x in value if isinstance(value, list) else [value]:
            if isinstance(x, float):
                assert x == float(f"{x:.4g}")
    text = release.info["transformation_text"]
    info = release.info
    assert text.startswith(
        f"{info['edges_added']:,} edges added, {info['edges_removed']:,} removed"
    )
    classes = len(set(d for _, d in release.data.degree()))
    assert f"34 nodes grouped into {classes} classes of at least 4 nodes" in text
    assert "secret random labels" in text


def test_k1_is_a_python_warning_too():
    with pytest.warns(UserWarning, match="k = 1"):
        graphs.k_degree_anonymize(nx.path_graph(5), 1, measures=False)


def test_parameter_messages_come_from_the_core_checks():
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        graphs.anonymize_degree_sequence([1, 2], 0)
    with pytest.raises(ValueError, match="method must be one of 'dp', 'greedy'; got 'magic'"):
        graphs.anonymize_degree_sequence([1, 2], 1, method="magic")
    with pytest.raises(ValueError, match="attacker must be one of"):
        graphs.candidate_sets(3, [[0, 1]], attacker="friends")


def test_negative_seed_is_refused_before_reading(tmp_path):
    from click.testing import CliRunner

    from graphs.cli import cli

    bad = tmp_path / "bad.txt"
    bad.write_text("1 x\n")  # would fail on line 1 if it were read
    result = CliRunner().invoke(
        cli, ["anonymize", str(bad), "-k", "2", "-o", str(tmp_path / "o.txt"), "--seed", "-1"]
    )
    assert result.exit_code == 2 and "--seed must be an integer >= 0, got -1" in result.output
    assert "line 1" not in result.output and not (tmp_path / "o.txt").exists()
