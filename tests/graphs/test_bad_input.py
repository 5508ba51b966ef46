"""Bad input to the graphs command line and API: a clear error (exit 2), nothing lost,
checked before any work (issue 14)."""

from __future__ import annotations

import json
import os

import networkx as nx
import pytest
from click.testing import CliRunner

import graphs
from graphs.cli import cli
from structanon.errors import InputError


def _edges(tmp_path, name="g.txt"):
    path = tmp_path / name
    path.write_text("".join(f"{u} {v}\n" for u, v in nx.karate_club_graph().edges()))
    return path


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _no_traceback(result):
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output


@pytest.mark.parametrize("option", ["-o", "--report", "--mapping-out"])
def test_output_naming_the_input_is_refused(tmp_path, option):
    src = _edges(tmp_path)
    before = src.read_bytes()
    args = ["anonymize", src, "-k", "2", "-o", tmp_path / "out.txt"]
    if option == "-o":
        args[-1] = src
    else:
        args += [option, src]
    result = _run(*args)
    assert result.exit_code == 2 and "input" in result.output, result.output
    assert src.read_bytes() == before
    assert not (tmp_path / "out.txt").exists()


@pytest.mark.parametrize("report", ["r.txt", "r.pdf"])
def test_report_extension_checked_before_any_work(tmp_path, report):
    src = _edges(tmp_path)
    result = _run(
        "anonymize", src, "-k", "2", "-o", tmp_path / "out.txt", "--report", tmp_path / report
    )
    assert result.exit_code == 2 and "--report" in result.output
    assert sorted(os.listdir(tmp_path)) == ["g.txt"]


def test_options_checked_before_reading(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 x\n")  # would be an error on line 1 if it were read
    result = _run("anonymize", bad, "-k", "2", "-o", tmp_path / "out.xyz")
    assert result.exit_code == 2 and "--output" in result.output
    result = _run(
        "anonymize",
        bad,
        "-k",
        "2",
        "-o",
        tmp_path / "missing" / "deeper" / "o.txt",
        "--report",
        tmp_path / "o.txt",
    )
    assert result.exit_code == 2 or "line 1" in result.output
    result = _run(
        "anonymize", bad, "-k", "2", "-o", tmp_path / "o.txt", "--key-file", tmp_path / "no.key"
    )
    assert result.exit_code == 2 and "--key-file" in result.output
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]


@pytest.mark.parametrize("option", ["-o", "--report", "--mapping-out"])
def test_unwritable_paths_exit_2_and_leave_nothing(tmp_path, option):
    src = _edges(tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder is needed")
    paths = {
        "-o": tmp_path / "out.txt",
        "--report": tmp_path / "r.json",
        "--mapping-out": tmp_path / "map.csv",
    }
    paths[option] = blocker / paths[option].name  # its folder cannot exist
    result = _run("anonymize", src, "-k", "2", *[x for o, p in paths.items() for x in (o, p)])
    assert result.exit_code == 2 and option in result.output, result.output
    _no_traceback(result)
    assert sorted(os.listdir(tmp_path)) == ["blocker", "g.txt"]


def test_no_main_output_when_a_side_file_fails(tmp_path, monkeypatch):
    import structanon.cli_support as cli_support

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_support, "write_report", broken)
    src = _edges(tmp_path)
    result = _run(
        "anonymize",
        src,
        "-k",
        "2",
        "-o",
        tmp_path / "out.txt",
        "--report",
        tmp_path / "r.json",
        "--mapping-out",
        tmp_path / "map.csv",
    )
    assert result.exit_code == 2
    _no_traceback(result)
    assert sorted(os.listdir(tmp_path)) == ["g.txt"]


@pytest.mark.parametrize("command", ["anonymize", "risk"])
@pytest.mark.parametrize(
    "content, line",
    [
        (b"1 2\n2 3\n\xff\xfe 4\n", 3),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 3),  # the core names the first NUL byte's line
        ("1 2\n\u00e9t\u00e9 3\n".encode("latin-1"), 2),
    ],
)
def test_undecodable_input_names_file_and_line(tmp_path, command, content, line):
    src = tmp_path / "bin.txt"
    src.write_bytes(content)
    args = [command, src] + (
        ["-k", "2", "-o", tmp_path / "o.txt"] if command == "anonymize" else []
    )
    result = _run(*args)
    assert result.exit_code == 2, result.output
    _no_traceback(result)
    assert "bin.txt" in result.output and f"line {line}" in result.output
    with pytest.raises(InputError, match=f"line {line}"):
        graphs.read_graph(src)


@pytest.mark.parametrize(
    "name, content",
    [
        ("empty.txt", ""),
        ("comments.txt", "# only a header\n% and another\n"),
        ("header.csv", "source,target\n"),
        ("malformed.txt", "a;b\nc;d\n"),
        ("semicolons.csv", "source;target\n1;2\n"),
        ("empty.graphml", ""),
        ("empty.json", ""),
    ],
)
def test_empty_or_malformed_input_is_bad_input_with_a_hint(tmp_path, name, content):
    src = tmp_path / name
    src.write_text(content)
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.graphml")
    assert result.exit_code == 2, result.output
    assert "--format" in result.output
    assert not (tmp_path / "o.graphml").exists()


def test_isolated_nodes_for_an_edge_list_are_refused_before_anonymizing(tmp_path, monkeypatch):
    graph = nx.cycle_graph(6)
    graph.add_nodes_from([10, 11])
    src = tmp_path / "g.graphml"
    nx.write_graphml(graph, src)

    def never(*args, **kwargs):
        raise AssertionError("anonymized a graph its output cannot hold")

    monkeypatch.setattr(graphs.cli, "anonymize_with_mapping", never)
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.csv")
    assert result.exit_code == 2 and "2 isolated" in result.output, result.output
    assert sorted(os.listdir(tmp_path)) == ["g.graphml"]


def test_edge_list_output_refuses_to_drop_isolated_nodes(tmp_path):
    graph = nx.cycle_graph(6)
    graph.add_nodes_from([10, 11])  # two isolated nodes: degree class 0 holds k = 2
    src = tmp_path / "g.graphml"
    nx.write_graphml(graph, src)
    result = _run(
        "anonymize", src, "-k", "2", "-o", tmp_path / "o.txt", "--report", tmp_path / "r.json"
    )
    assert result.exit_code == 2 and "2 isolated" in result.output and ".graphml" in result.output
    assert sorted(os.listdir(tmp_path)) == ["g.graphml"]
    # outputs in folders to be made: the error names the output; no folder is left
    out, report = tmp_path / "new" / "sub" / "o.txt", tmp_path / "new" / "r.json"
    result = _run("anonymize", src, "-k", "2", "-o", out, "--report", report)
    assert result.exit_code == 2 and f"(file '{out}')" in result.output
    assert sorted(os.listdir(tmp_path)) == ["g.graphml"]
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.graphml")
    assert result.exit_code == 0, result.output
    assert graphs.read_graph(tmp_path / "o.graphml").number_of_nodes() == 8
    with pytest.raises(InputError, match="isolated"):
        graphs.write_graph(graph, tmp_path / "api.csv")


def test_k1_warns_on_stderr_and_in_the_report(tmp_path):
    src = _edges(tmp_path)
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(src),
            "-k",
            "1",
            "-o",
            str(tmp_path / "o.txt"),
            "--report",
            str(tmp_path / "r.json"),
            "--no-measures",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "k = 1 gives no protection" in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert any("k = 1" in w for w in report["info"]["warnings"])
    assert not report["risk"] and not report["utility"]


def test_no_measures_and_utility_none(tmp_path):
    src = _edges(tmp_path)
    for flags in (["--no-measures"], ["--utility", "none"]):
        result = _run(
            "anonymize",
            src,
            "-k",
            "3",
            "-o",
            tmp_path / "o.txt",
            "--report",
            tmp_path / "r.json",
            *flags,
        )
        assert result.exit_code == 0, result.output
        assert json.loads((tmp_path / "r.json").read_text())["utility"] == {}


def test_self_loops_and_duplicate_edges_dropped_are_said(tmp_path):
    src = tmp_path / "g.txt"
    src.write_text("1 2\n2 3\n3 4\n4 1\n1 1\n2 2\n1 2\n2 1\n")
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.txt")
    assert result.exit_code == 0, result.output
    assert "2 self-loop(s) and 2 duplicate edge(s) removed" in result.output


def test_a_csv_row_longer_than_its_header_is_refused_with_its_line(tmp_path):
    src = tmp_path / "g.csv"
    src.write_text("source,target\n1,2\n2,3\n3,4\n4,1\n1,3,99\n")
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.txt")
    assert result.exit_code == 2 and "3 fields, the header 2" in result.output
    assert "line 6" in result.output and not (tmp_path / "o.txt").exists()


def _ring_lines(n=300):
    """``n`` distinct edges of a ring with chords, one ``"u v"`` per item."""
    return [f"{i} {(i + 1 + i % 7) % n}" for i in range(n)]


@pytest.mark.parametrize(
    "ends, line",
    [(["\r"], 1), (["\r\n", "\r", "\n"], 2), (["\n"] * 9 + ["\r"], 10)],
    ids=["cr-only", "mixed", "one-cr"],
)
def test_lone_cr_line_ends_are_refused_with_the_first_line(tmp_path, ends, line):
    # read as spaces they joined lines: a CR-only file was one edge, a mixed one lost a third
    lines = _ring_lines()
    src = tmp_path / "g.txt"
    src.write_bytes("".join(x + ends[i % len(ends)] for i, x in enumerate(lines)).encode())
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.txt")
    assert result.exit_code == 2, result.output
    _no_traceback(result)
    assert f"(file '{src}', line {line})" in result.output
    assert "carriage return (CR) alone" in result.output and "LF or CRLF" in result.output
    assert sorted(os.listdir(tmp_path)) == ["g.txt"]
    with pytest.raises(InputError, match="carriage return") as info:
        graphs.read_graph(src)
    assert info.value.line == line


def test_crlf_edge_lists_and_cr_csv_files_keep_every_edge(tmp_path):
    lines = _ring_lines()
    src = tmp_path / "g.txt"
    src.write_bytes("\r\n".join(lines).encode())
    assert graphs.read_graph(src).number_of_edges() == 300
    csv = tmp_path / "g.csv"  # the csv module ends a row at a lone CR too
    csv.write_bytes("\r".join(["source,target"] + [x.replace(" ", ",") for x in lines]).encode())
    assert graphs.read_graph(csv).number_of_edges() == 300


def test_an_edge_list_line_with_another_number_of_fields_is_refused(tmp_path):
    # "1 6 2 7" published edge 1-6 and dropped 2-7
    src = tmp_path / "g.txt"
    src.write_text("1 2\n2 3\n3 4\n4 1\n1 3\n2 4\n5 6\n6 7\n7 5\n5 1\n1 6 2 7\n")
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.txt")
    assert result.exit_code == 2, result.output
    _no_traceback(result)
    assert "4 fields where the first edge line (line 1) has 2" in result.output
    assert f"(file '{src}', line 11, value '1 6 2 7')" in result.output
    assert sorted(os.listdir(tmp_path)) == ["g.txt"]
    # every line with the same extra column (SNAP's "u v timestamp"): the first two
    src.write_text("# u v t\n1 2 10\n2 3 11\n3 1 12\n")
    assert sorted(graphs.read_graph(src).edges()) == [(1, 2), (1, 3), (2, 3)]
    src.write_text("# u v t\n1 2 10\n2 3 11\n3 1\n")
    with pytest.raises(InputError, match="line 2") as info:
        graphs.read_graph(src)
    assert info.value.line == 4


def test_csv_text_ids_with_spaces_are_refused_not_merged(tmp_path):
    # "bob " and "bob" were stripped into one node
    src = tmp_path / "g.csv"
    src.write_text("source,target\nann,bob\nbob,cat\ncat,ann\nbob ,dan\ndan,ann\n")
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.csv")
    assert result.exit_code == 2, result.output
    _no_traceback(result)
    assert "'bob ' has leading or trailing spaces" in result.output
    assert f"(file '{src}', line 5" in result.output
    assert sorted(os.listdir(tmp_path)) == ["g.csv"]
    # integer ids may be padded: " 2" is node 2
    src.write_text("source, target\n1, 2\n2, 3\n3, 1\n")
    assert sorted(graphs.read_graph(src).edges()) == [(1, 2), (1, 3), (2, 3)]


def _node_link(nodes, links):
    """A node-link document with one node or link per line, nodes from line 3 on."""
    return (
        '{"directed": false, "multigraph": false, "graph": {},\n"nodes": [\n'
        + ",\n".join(json.dumps(n) for n in nodes)
        + '\n],\n"links": [\n'
        + ",\n".join(json.dumps(x) for x in links)
        + "\n]}\n"
    )


_GRAPHML = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
    '<graph edgedefault="undirected">\n{}\n</graph>\n</graphml>\n'
)


@pytest.mark.parametrize(
    "name, content, where, what",
    [
        (
            "g.json",
            _node_link(
                [{"id": i} for i in range(1, 5)],
                [
                    {"source": 1, "target": 2},
                    {"source": 2, "target": 3},
                    {"source": 3, "target": 99},
                ],
            ),
            "line 11, node 99",
            "links[2] (3 - 99) names a node the nodes list does not declare",
        ),
        (
            "g.json",
            _node_link([{"id": i} for i in (1, 2, 3, 4, 2)], [{"source": 1, "target": 2}]),
            "line 7, node 2",
            "declared twice (nodes[1], line 4, and nodes[4])",
        ),
        (
            "g.graphml",
            _GRAPHML.format(
                '<node id="n1"/>\n<node id="n2"/>\n<node id="n3"/>\n'
                '<edge source="n1" target="n2"/>\n<edge source="n2" target="n3"/>\n'
                '<edge source="n1" target="n99"/>'
            ),
            "line 9, node 'n99'",
            "the edge 'n1' - 'n99' names a node no <node> declares",
        ),
        (
            "g.graphml",
            _GRAPHML.format(
                '<node id="n1"/>\n<node id="n2"/>\n<node id="n1"/>\n<edge source="n1" target="n2"/>'
            ),
            "line 6, node 'n1'",
            "a <node> is declared twice in the file (first on line 4)",
        ),
        (
            "g.gexf",
            '<?xml version="1.0" encoding="UTF-8"?>\n<gexf xmlns="http://gexf.net/1.3" '
            'version="1.3">\n<graph defaultedgetype="undirected">\n<nodes>\n<node id="1"/>\n'
            '<node id="2"/>\n<node id="3"/>\n</nodes>\n<edges>\n'
            '<edge id="0" source="1" target="2"/>\n<edge id="1" source="2" target="7"/>\n'
            "</edges>\n</graph>\n</gexf>\n",
            "line 11, node '7'",
            "the edge '2' - '7' names a node no <node> declares",
        ),
    ],
    ids=["json-unknown", "json-twice", "graphml-unknown", "graphml-twice", "gexf-unknown"],
)
def test_undeclared_or_twice_declared_nodes_are_refused(tmp_path, name, content, where, what):
    # networkx created the undeclared node (published as a person) and merged the repeated
    # one; the error named the node but not its line
    src = tmp_path / name
    src.write_text(content)
    line = int(where.split(",")[0].split()[1])
    assert content.splitlines()[line - 1].startswith(("<node", "<edge", "{"))
    result = _run("anonymize", src, "-k", "2", "-o", tmp_path / "o.graphml")
    assert result.exit_code == 2, result.output
    _no_traceback(result)
    assert what in result.output and f"(file '{src}', {where})" in result.output
    assert sorted(os.listdir(tmp_path)) == [name]
    with pytest.raises(InputError, match="declare") as info:
        graphs.read_graph(src)
    assert info.value.line == line


def test_an_out_format_contradicting_the_output_extension_is_refused_before_reading(tmp_path):
    # an edge list was written into out.graphml, exit 0
    bad = tmp_path / "bad.txt"
    bad.write_text("1 x\n")  # would be an error on line 1 if it were read
    for output, fmt in (("out.graphml", "edgelist"), ("out.txt.gz", "json"), ("o.csv", "gexf")):
        result = _run("anonymize", bad, "-k", "2", "-o", tmp_path / output, "--out-format", fmt)
        assert result.exit_code == 2, result.output
        _no_traceback(result)
        assert "-o/--output ends in" in result.output and "--out-format" in result.output
        assert f"is '{fmt}'" in result.output and "line 1" not in result.output
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]
    with pytest.raises(InputError, match="format is 'edgelist'"):
        graphs.write_graph(nx.path_graph(3), tmp_path / "api.graphml", format="edgelist")
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]
    # an output without a known extension takes the format given; an agreeing one too
    src = _edges(tmp_path)
    for output, fmt in (("out.dat", "graphml"), ("out", "edgelist"), ("out.edges", "edgelist")):
        result = _run("anonymize", src, "-k", "2", "-o", tmp_path / output, "--out-format", fmt)
        assert result.exit_code == 0, result.output
    assert nx.read_graphml(tmp_path / "out.dat").number_of_nodes() == 34
    assert graphs.read_graph(tmp_path / "out", format="edgelist").number_of_edges() >= 78


def test_anonymize_help_names_the_output_option():
    result = _run("anonymize", "--help")
    assert result.exit_code == 0
    assert "OUTPUT" not in result.output and "-o" in result.output


def test_node_link_with_both_edges_and_links_is_refused(tmp_path):
    """Only "edges" was read: the edges under "links" vanished, uncounted."""
    doc = json.loads(_node_link([{"id": i} for i in range(1, 5)], [{"source": 1, "target": 2}]))
    doc["edges"] = [{"source": 3, "target": 4}]
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match='both "edges" and "links"') as info:
        graphs.read_graph(path)
    assert info.value.path == str(path)
