"""The graphs command line and demo."""

from __future__ import annotations

import json
from collections import Counter

import networkx as nx
from click.testing import CliRunner

from graphs import read_graph
from graphs.cli import cli, demo


def _karate(tmp_path):
    p = tmp_path / "karate.txt"
    p.write_text("".join(f"{u} {v}\n" for u, v in nx.karate_club_graph().edges()))
    return p


def _min_class(g):
    return min(Counter(dict(g.degree()).values()).values())


def test_anonymize_writes_graph_and_report(tmp_path):
    src = _karate(tmp_path)
    out, report = tmp_path / "anon.graphml", tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["anonymize", str(src), "-k", "3", "-o", str(out),
                                      "--report", str(report), "--seed", "1"])
    assert result.exit_code == 0, result.output
    g = read_graph(out)
    assert g.number_of_nodes() == 34 and _min_class(g) >= 3
    data = json.loads(report.read_text())
    assert data["verification"]["passed"] and data["info"]["relabelled"]
    assert not list(tmp_path.glob("*map*"))


def test_mapping_only_when_asked(tmp_path):
    src = _karate(tmp_path)
    out, mapping = tmp_path / "anon.csv", tmp_path / "mapping.csv"
    result = CliRunner().invoke(cli, ["anonymize", str(src), "-k", "2", "-o", str(out),
                                      "--mapping-out", str(mapping), "--utility", "none"])
    assert result.exit_code == 0, result.output
    rows = mapping.read_text().splitlines()
    assert rows[0] == "original,published" and len(rows) == 35
    pairs = dict(r.split(",") for r in rows[1:])
    original, anon = nx.karate_club_graph(), read_graph(out)
    for u, v in original.edges():  # supergraph, through the mapping
        assert anon.has_edge(int(pairs[str(u)]), int(pairs[str(v)]))


def test_html_report_has_figures(tmp_path):
    src = _karate(tmp_path)
    report = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["anonymize", str(src), "-k", "4", "-o",
                                      str(tmp_path / "a.txt"), "--report", str(report)])
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert text.count("data:image/png;base64") == 2 and "log-log" in text


def test_exit_codes(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n3 four\n")
    result = CliRunner().invoke(cli, ["anonymize", str(bad), "-k", "2", "-o", str(tmp_path / "o.txt")])
    assert result.exit_code == 2 and "line 2" in result.output
    result = CliRunner().invoke(cli, ["anonymize", str(_karate(tmp_path)), "-k", "50", "-o",
                                      str(tmp_path / "o.txt")])
    assert result.exit_code == 3
    assert not (tmp_path / "o.txt").exists()


def test_risk_and_compare(tmp_path):
    src = _karate(tmp_path)
    result = CliRunner().invoke(cli, ["risk", str(src)])
    assert result.exit_code == 0
    assert json.loads(result.output)["degree"]["min_candidates"] == 1
    out = tmp_path / "anon.txt"
    CliRunner().invoke(cli, ["anonymize", str(src), "-k", "2", "-o", str(out), "--no-relabel",
                             "--utility", "none"])
    result = CliRunner().invoke(cli, ["compare", str(src), str(out), "--level", "fast"])
    assert result.exit_code == 0, result.output
    assert 0 < json.loads(result.output)["edge_jaccard"] < 1


def test_demo(tmp_path):
    release = demo(tmp_path, seed=0)
    assert release.verify().passed
    g = read_graph(tmp_path / "ca-GrQc_k10.edges")
    assert _min_class(g) >= 10 and g.number_of_nodes() == release.n_individuals
    assert json.loads((tmp_path / "report.json").read_text())["verification"]["passed"]
