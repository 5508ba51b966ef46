"""The graphs command line and demo."""

from __future__ import annotations

import json
import os
import stat
from collections import Counter

import networkx as nx
import pytest
from click.testing import CliRunner

from graphs import read_graph
from graphs.cli import cli


def _karate(tmp_path):
    p = tmp_path / "karate.txt"
    p.write_text("".join(f"{u} {v}\n" for u, v in nx.karate_club_graph().edges()))
    return p


def _min_class(g):
    return min(Counter(dict(g.degree()).values()).values())


def test_anonymize_writes_graph_and_report(tmp_path):
    src = _karate(tmp_path)
    out, report = tmp_path / "anon.graphml", tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(src), "-k", "3", "-o", str(out), "--report", str(report), "--seed", "1"],
    )
    assert result.exit_code == 0, result.output
    g = read_graph(out)
    assert g.number_of_nodes() == 34 and _min_class(g) >= 3
    data = json.loads(report.read_text())
    assert data["verification"]["passed"] and data["info"]["relabelled"]
    assert not list(tmp_path.glob("*map*"))


def test_mapping_only_when_asked(tmp_path):
    src = _karate(tmp_path)
    out, mapping = tmp_path / "anon.csv", tmp_path / "mapping.csv"
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(src),
            "-k",
            "2",
            "-o",
            str(out),
            "--mapping-out",
            str(mapping),
            "--utility",
            "none",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = mapping.read_text().splitlines()
    assert rows[0] == "original,published" and len(rows) == 35
    pairs = dict(r.split(",") for r in rows[1:])
    original, anon = nx.karate_club_graph(), read_graph(out)
    for u, v in original.edges():  # supergraph, through the mapping
        assert anon.has_edge(int(pairs[str(u)]), int(pairs[str(v)]))
    # the mapping undoes the release: readable by its owner only, whatever the umask
    assert stat.S_IMODE(mapping.stat().st_mode) == 0o600
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~_umask()


def test_attack_the_mapping_is_owner_only_while_it_is_written(tmp_path, monkeypatch):
    """A local user polling the output folder copied the whole mapping: it was written 0644
    under a temporary name while the report and the graph were written, and made 0600 only
    at the end.  While the graph is written, every copy of the mapping must be closed to
    other users (its own mode, or a folder on its path they cannot enter)."""
    import graphs.cli as graphs_cli

    src = tmp_path / "k.txt"
    nx.write_edgelist(nx.karate_club_graph(), src, data=False)
    seen = []
    write = graphs_cli.write_graph

    def spying_write(*args, **kwargs):
        for path in tmp_path.rglob("*"):
            if path.is_file() and path.read_text(errors="replace").startswith("original,"):
                modes = [stat.S_IMODE(path.stat().st_mode)] + [
                    stat.S_IMODE(p.stat().st_mode) & 0o011
                    for p in path.parents
                    if p != tmp_path and tmp_path in p.parents
                ]
                closed = modes[0] & 0o077 == 0 or any(m == 0 for m in modes[1:])
                seen.append((path, closed))
        return write(*args, **kwargs)

    monkeypatch.setattr(graphs_cli, "write_graph", spying_write)
    mapping = tmp_path / "mapping.csv"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(src), "-k", "2", "-o", str(tmp_path / "a.txt")]
        + ["--mapping-out", str(mapping), "--utility", "none", "--quiet"],
    )
    assert result.exit_code == 0, result.output
    assert seen and all(closed for _, closed in seen), seen
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "k.txt", "mapping.csv"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_html_report_has_figures(tmp_path):
    src = _karate(tmp_path)
    report = tmp_path / "r.html"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(src), "-k", "4", "-o", str(tmp_path / "a.txt"), "--report", str(report)],
    )
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert text.count("data:image/png;base64") == 2 and "log-log" in text


def test_exit_codes(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n3 four\n")
    result = CliRunner().invoke(
        cli, ["anonymize", str(bad), "-k", "2", "-o", str(tmp_path / "o.txt")]
    )
    assert result.exit_code == 2 and "line 2" in result.output
    result = CliRunner().invoke(
        cli, ["anonymize", str(_karate(tmp_path)), "-k", "50", "-o", str(tmp_path / "o.txt")]
    )
    assert result.exit_code == 3
    assert not (tmp_path / "o.txt").exists()


def test_risk_and_compare(tmp_path):
    src = _karate(tmp_path)
    result = CliRunner().invoke(cli, ["risk", str(src)])
    assert result.exit_code == 0
    assert json.loads(result.output)["degree"]["min_candidates"] == 1
    out = tmp_path / "anon.txt"
    CliRunner().invoke(
        cli, ["anonymize", str(src), "-k", "2", "-o", str(out), "--no-relabel", "--utility", "none"]
    )
    result = CliRunner().invoke(cli, ["compare", str(src), str(out), "--level", "fast"])
    assert result.exit_code == 0, result.output
    assert 0 < json.loads(result.output)["edge_jaccard"] < 1


@pytest.mark.slow
def test_demo(package_demo):
    release, tmp_path = package_demo("graphs")
    assert release.verify().passed
    g = read_graph(tmp_path / "ca-GrQc_k10.edges")
    assert _min_class(g) >= 10 and g.number_of_nodes() == release.n_individuals
    assert json.loads((tmp_path / "report.json").read_text())["verification"]["passed"]


def test_anonymize_logs_progress_unless_quiet(tmp_path):
    src = _karate(tmp_path)
    args = ["anonymize", str(src), "-k", "3", "-o", str(tmp_path / "a.txt"), "--no-measures"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "structanon: read" in result.stderr and "structanon: verify" in result.stderr
    quiet = CliRunner().invoke(cli, args + ["--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""


def test_unsupported_report_extension_exits_2_before_any_file(tmp_path):
    src = _karate(tmp_path)
    for command, extra in (
        ("anonymize", ["-k", "3", "-o", str(tmp_path / "a.txt")]),
        ("assess", []),
    ):
        result = CliRunner().invoke(
            cli, [command, str(src), *extra, "--report", str(tmp_path / "r.pdf")]
        )
        assert result.exit_code == 2 and "--report" in result.output, result.output
        assert sorted(p.name for p in tmp_path.iterdir()) == ["karate.txt"]


def test_assess_emits_the_shared_shape(tmp_path):
    src = _karate(tmp_path)
    result = CliRunner().invoke(
        cli, ["assess", str(src), "--json", "--report", str(tmp_path / "r.json")]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"data_type", "input", "risk", "warnings", "provenance"}
    assert doc["data_type"] == "graphs" and doc["input"] == "karate.txt"
    assert doc == json.loads((tmp_path / "r.json").read_text())
    # independent recount: karate nodes whose degree no other node has
    counts = Counter(dict(nx.karate_club_graph().degree()).values())
    unique = sum(1 for c in counts.values() if c == 1)
    assert doc["risk"]["degree"]["nodes_unique"] == unique
    assert doc["risk"]["degree"]["nodes_by_candidates"]["1"] == unique
    assert sum(doc["risk"]["neighbourhood"]["nodes_by_candidates"].values()) == 34
    assert doc["risk"]["graph"] == {
        "nodes": 34,
        "edges": 78,
        "self_loops_removed": 0,
        "duplicate_edges_removed": 0,
    }
    assert any("degree no other node has" in w for w in doc["warnings"])
    assert doc["provenance"]["inputs"] == [{"name": src.name}]
    table = CliRunner().invoke(cli, ["assess", str(src)])
    assert table.exit_code == 0 and "degree.nodes_unique" in table.stdout


def test_risk_is_a_hidden_alias_and_relabel_switch(tmp_path):
    help_text = CliRunner().invoke(cli, ["--help"]).output
    listed = [
        line.split()[0] for line in help_text.split("Commands:")[1].splitlines() if line.strip()
    ]
    assert listed == ["anonymize", "assess", "compare"]
    assert CliRunner().invoke(cli, ["risk", "--help"]).exit_code == 0
    src = _karate(tmp_path)
    out = tmp_path / "a.txt"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(src), "-k", "2", "-o", str(out), "--relabel", "--no-measures", "--quiet"],
    )
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(src),
            "-k",
            "2",
            "-o",
            str(out),
            "--no-relabel",
            "--no-measures",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert set(nx.karate_club_graph().edges()) <= {
        tuple(sorted(e)) for e in read_graph(out).edges()
    }


def test_report_names_the_input_and_the_edits(tmp_path):
    src = _karate(tmp_path)
    report = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(src), "-k", "3", "-o", str(tmp_path / "a.txt"), "--report", str(report)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["provenance"]["inputs"][0]["name"] == "karate.txt"
    assert set(data["provenance"]["inputs"][0]) == {"name"}
    assert data["models"] == [{"model": "k-degree-anonymity", "k": 3}]
    text = data["info"]["transformation_text"]
    assert f"{data['info']['edges_added']:,} edges added" in text and "at least 3 nodes" in text
    floats = [v for v in data["utility"].values() if isinstance(v, float)]
    assert floats and all(len(repr(v).lstrip("-0.").replace(".", "")) <= 6 for v in floats)


@pytest.mark.slow
def test_demo_writes_html_report(package_demo):
    _release, tmp_path = package_demo("graphs")
    html = (tmp_path / "report.html").read_text()
    assert html.count("data:image/png;base64") == 2 and "k-degree-anonymity(k=10)" in html


def test_compare_takes_as_undirected_as_its_error_says(tmp_path):
    """compare refused a directed file saying "pass --as-undirected", an option it lacked."""
    directed, plain = tmp_path / "d.txt", tmp_path / "u.txt"
    directed.write_text("# Directed graph\n1 2\n2 3\n")
    plain.write_text("1 2\n2 3\n")
    args = ["compare", str(directed), str(plain), "--level", "fast"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "--as-undirected" in result.output
    result = CliRunner().invoke(cli, [*args, "--as-undirected"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["edges_after"] == 2
