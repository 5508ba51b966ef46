"""Attacks on graphs releases made the way a user makes them (issue 10, finding 1).

The attacker holds the published edge list, the report (which prints the seed), knows the
software, and replays any randomness that is a function of public facts.  Before the fix the
node labels were ``default_rng(seed).permutation(n)`` over the read order: replaying it mapped
100% of the published ca-GrQc edges back to original edges and reproduced the secret
``--mapping-out`` file.  Here the same replay must do no better than a random relabelling.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import graphs
from graphs.cli import SAMPLE, cli

SEEDS = range(0, 1001)


@pytest.fixture(autouse=True)
def _no_key_in_the_environment(monkeypatch):
    """Releases made with the defaults: no key file and no key in the environment."""
    monkeypatch.delenv("STRUCTANON_PSEUDONYM_KEY", raising=False)


@pytest.fixture(scope="module")
def sample():
    """The bundled sample as the attacker reads it (same software, same read order)."""
    graph = graphs.read_graph(SAMPLE)
    nodes = list(graph.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    edges = np.array([sorted((index[u], index[v])) for u, v in graph.edges()], dtype=np.int64)
    codes = np.sort(edges[:, 0] * n + edges[:, 1])
    return graph, nodes, n, codes


def _recovered(published: np.ndarray, guess: np.ndarray, n: int, codes: np.ndarray) -> float:
    """Share of published edges whose endpoints, mapped to input positions by ``guess``
    (published label -> input position), form an original edge."""
    a, b = guess[published[:, 0]], guess[published[:, 1]]
    code = np.minimum(a, b) * n + np.maximum(a, b)
    pos = np.minimum(np.searchsorted(codes, code), len(codes) - 1)
    return float((codes[pos] == code).mean())


def _best_replay(published: np.ndarray, n: int, codes: np.ndarray) -> float:
    """The best share any seed's permutation (or its inverse) recovers."""
    best = 0.0
    for seed in SEEDS:
        perm = np.random.default_rng(seed).permutation(n)
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(n)
        best = max(
            best, _recovered(published, inverse, n, codes), _recovered(published, perm, n, codes)
        )
    return best


def _chance(published: np.ndarray, n: int, codes: np.ndarray) -> float:
    rng = np.random.default_rng(12345)
    return max(_recovered(published, rng.permutation(n), n, codes) for _ in range(20))


def _read_edges(path: Path) -> np.ndarray:
    return np.loadtxt(path, dtype=np.int64, ndmin=2)


def _cli(tmp_path: Path, name: str, *extra: str) -> Path:
    out = tmp_path / f"{name}.txt"
    result = CliRunner().invoke(
        cli, ["anonymize", str(SAMPLE), "-k", "5", "-o", str(out), "--no-measures", *extra]
    )
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.slow
def test_seed_replay_on_cli_defaults_is_at_chance(tmp_path, sample):
    _, nodes, n, codes = sample
    mapping = tmp_path / "mapping.csv"
    out = _cli(tmp_path, "default", "--mapping-out", str(mapping))
    published = _read_edges(out)
    assert published.max() < n
    best, chance = _best_replay(published, n, codes), _chance(published, n, codes)
    assert best < 0.01, f"seed replay recovers {best:.1%} of edges (chance {chance:.2%})"
    assert best <= max(3 * chance, 0.005)
    # The secret mapping is not reproducible from any seed either.
    rows = mapping.read_text().splitlines()[1:]
    true = dict(map(int, r.split(",")) for r in rows)
    labels = np.array([true[v] for v in nodes])
    assert sorted(labels.tolist()) == list(range(n))
    agree = max(int((np.random.default_rng(seed).permutation(n) == labels).sum()) for seed in SEEDS)
    assert agree < 0.01 * n  # a random permutation agrees in about 1 place


@pytest.mark.slow
def test_seed_replay_on_api_with_a_known_seed_is_at_chance(sample):
    graph, nodes, n, codes = sample
    release = graphs.k_degree_anonymize(graph, 10, seed=7, measures=False)
    published = np.array(list(release.data.edges()), dtype=np.int64)
    assert _best_replay(published, n, codes) < 0.01
    # The publisher's own link (source_index) still undoes it exactly, in Python only.
    to_input = np.empty(n, dtype=np.int64)
    for position, node in enumerate(nodes):
        to_input[release.source_index[node]] = position
    assert _recovered(published, to_input, n, codes) > 0.9
    assert "source_index" not in str(release.to_dict()) and "mapping" not in repr(release)


@pytest.mark.slow
def test_keyless_runs_differ_and_keyed_runs_repeat(tmp_path):
    first, second = _cli(tmp_path, "a"), _cli(tmp_path, "b")
    assert first.read_bytes() != second.read_bytes()
    key = tmp_path / "release.key"
    key.write_bytes(b"a secret key of the publisher, 32+ bytes long")
    keyed = [_cli(tmp_path, f"keyed{i}", "--key-file", str(key)) for i in range(2)]
    assert keyed[0].read_bytes() == keyed[1].read_bytes()
    other_seed = _cli(tmp_path, "keyed_seed", "--key-file", str(key), "--seed", "1")
    assert other_seed.read_bytes() != keyed[0].read_bytes()


@pytest.mark.slow
def test_output_order_is_sorted_by_published_labels(tmp_path, sample):
    out = _cli(tmp_path, "order")
    published = _read_edges(out)
    assert (published[:, 0] < published[:, 1]).all()
    order = np.lexsort((published[:, 1], published[:, 0]))
    assert (order == np.arange(len(published))).all()
    graphml = tmp_path / "order.graphml"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(SAMPLE), "-k", "5", "-o", str(graphml), "--no-measures", "--seed", "3"],
    )
    assert result.exit_code == 0, result.output
    ids = [int(v) for v in graphs.read_graph(graphml).nodes()]
    assert ids == sorted(ids)


def test_the_seed_does_not_decide_which_of_equal_nodes_are_raised(sample):
    """The construction raises some nodes of one degree and not others; with the printed
    seed deciding that choice, whoever knows the input degrees could replay it.  Two
    keyless runs with the same seed must choose differently; one key repeats its choice."""

    graph = sample[0]

    def raised(**kwargs) -> frozenset:
        release = graphs.k_degree_anonymize(graph, 10, relabel=False, measures=False, **kwargs)
        return frozenset(v for v in graph if release.data.degree(v) != graph.degree(v))

    first, second = raised(seed=0), raised(seed=0)
    assert first and first != second
    key = b"0123456789abcdef0123"
    assert raised(seed=0, key=key) == raised(seed=0, key=key)


def test_the_report_does_not_give_the_hubs_input_degree(tmp_path, sample):
    """k-degree anonymity hides a hub's own degree; a report listing the input's largest
    degree would give it back (and, beside the release, how many edges the hub gained)."""
    import json

    import networkx as nx

    graph = sample[0]
    hub_degree = max(d for _, d in graph.degree())
    release = graphs.k_degree_anonymize(graph, k=5, utility="fast", key=b"0123456789abcdef")
    assert "max_degree" not in release.utility
    report = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(SAMPLE),
            "-k",
            "5",
            "-o",
            str(tmp_path / "o.txt"),
            "--report",
            str(report),
            "--utility",
            "fast",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "max_degree" not in json.dumps(json.loads(report.read_text()))
    # the owner, holding both graphs, still compares them in full
    assert graphs.graph_utility(graph, nx.Graph(graph), level="fast")["max_degree"] == [
        hub_degree,
        hub_degree,
    ]
