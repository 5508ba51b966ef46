"""Node ids are read as written: never two spellings merged into one node by a guess,
and every error reading a graph names its line (GraphML and GEXF included)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import graphs
from graphs.cli import cli
from graphs.io import _plain_pairs
from structanon.errors import InputError


def _write(path, text):
    path.write_text(text)
    return path


def _refused(path, line, *spellings):
    """``path`` is refused, naming ``line`` and every one of ``spellings``."""
    with pytest.raises(InputError, match="two spellings of the integer") as info:
        graphs.read_graph(path)
    assert info.value.line == line, str(info.value)
    for spelling in spellings:
        assert repr(spelling) in str(info.value)
    return info.value


# ---------------------------------------------------------------------------- edge lists


@pytest.mark.parametrize(
    "text, first, second, line",
    [
        ("1 007\n7 2\n2 1\n", "007", "7", 2),  # 007 and 7 were one node
        ("1 +7\n7 2\n2 1\n", "+7", "7", 2),
        ("1 1_000\n1000 2\n2 1\n", "1_000", "1000", 2),  # int() reads "1_000" as 1000
        ("07 1\n1 2\n2 7\n", "07", "7", 3),  # a leading zero at the very start
        ("1\t07\n7\t2\n2\t1\n", "07", "7", 2),  # tab-separated
        ("1 2\n2 -07\n-7 1\n", "-07", "-7", 3),
        ("1 -0\n0 2\n2 1\n", "-0", "0", 2),
        ("1 2 97\n2 0007 99\n7 1 98\n", "0007", "7", 3),  # SNAP's third column ignored
        ("# a comment: read line by line\n1 07\n7 2\n2 1\n", "07", "7", 3),
    ],
    ids=["007", "plus", "underscore", "start", "tab", "negative", "minus-zero", "3-col", "comment"],
)
def test_edge_list_spellings_of_one_integer_are_refused_not_merged(
    tmp_path, text, first, second, line
):
    src = _write(tmp_path / "g.txt", text)
    first_line = next(i for i, x in enumerate(text.split("\n"), 1) if first in x.split())
    error = _refused(src, line, first, second)
    assert f"{first!r} (line {first_line}) and {second!r} (line {line})" in str(error)


def test_a_plain_integer_file_with_a_leading_zero_leaves_the_fast_path(tmp_path):
    # the numpy fast path read "07" as 7: 300 lines of plain integer pairs, one spelled 07
    lines = [f"{i} {(i + 1) % 300}" for i in range(300)]
    lines[100] = "100 07"
    src = _write(tmp_path / "g.txt", "\n".join(lines) + "\n")
    assert _plain_pairs(src.read_text()) is None
    _refused(src, 101, "07", "7")
    for text in ("1 07\n", "07 1\n", "1\t07\n", "1 -07\n", "1 -0\n", "1 +7\n", "1 2\n0 07\n"):
        assert _plain_pairs(text) is None, text
    # canonical integers, zero included, still take it
    assert _plain_pairs("0 1\n10 0\n-3 100\n").tolist() == [[0, 1], [10, 0], [-3, 100]]


def test_an_integer_spelled_one_way_is_kept_as_written(tmp_path):
    # zero-padded ids, each written one way: text ids, kept as written (published mapping
    # and a --no-relabel release name them as the input does)
    src = _write(tmp_path / "g.txt", "001 002\n002 003\n003 001\n003 10\n")
    g = graphs.read_graph(src)
    assert list(g.nodes()) == ["001", "002", "003", "10"]
    assert sorted(map(sorted, g.edges())) == [
        ["001", "002"],
        ["001", "003"],
        ["002", "003"],
        ["003", "10"],
    ]
    src = _write(tmp_path / "h.txt", "+1 2\n2 3\n3 +1\n")
    assert sorted(graphs.read_graph(src).nodes()) == ["+1", "2", "3"]


def test_canonical_integer_files_still_read_as_integers(tmp_path):
    # what every release so far read: node ids stay Python ints, in the same order
    text = "0 1\n0 2\n10 0\n-3 5\n5 1\n"
    for name, body in (
        ("fast.txt", text),
        ("checked.txt", "# SNAP\n" + text),
        ("comment.txt", "# 2009-01-05, +1 for _ and 007\n" + text),  # ids checked one by one
    ):
        g = graphs.read_graph(_write(tmp_path / name, body))
        assert list(g.nodes()) == [0, 10, -3, 5, 1, 2]
        assert all(type(n) is int for n in g.nodes()), name
    g = graphs.read_graph(_write(tmp_path / "g.csv", "source, target\n0, 1\n1, 2\n2, 0\n"))
    assert sorted(g.nodes()) == [0, 1, 2] and all(type(n) is int for n in g.nodes())


# ----------------------------------------------------------------------------------- CSV


@pytest.mark.parametrize(
    "rows, first, second, line",
    [
        ("1,007\n7,2\n2,1\n", "007", "7", 3),
        ("1,+7\n7,2\n2,1\n", "+7", "7", 3),
        ("1,1_000\n1000,2\n2,1\n", "1_000", "1000", 3),
        ("1,\uff17\n7,2\n2,1\n", "\uff17", "7", 3),  # a full-width digit seven
        ("ann,007\n7,bob\nbob,ann\n", "007", "7", 3),  # text ids: "007" became "7"
        ("1, 2\n02,3\n3, 1\n", "2", "02", 3),  # " 2" is 2,
    ],
    ids=["007", "plus", "underscore", "full-width", "text-ids", "spaced"],
)
def test_csv_spellings_of_one_integer_are_refused_not_merged(tmp_path, rows, first, second, line):
    src = _write(tmp_path / "g.csv", "source,target\n" + rows)
    _refused(src, line, first, second)


def test_csv_ids_kept_as_written(tmp_path):
    g = graphs.read_graph(_write(tmp_path / "a.csv", "source,target\nann,007\nbob,007\n"))
    assert sorted(g.nodes()) == ["007", "ann", "bob"]
    # an integer beyond 64 bits made the reader crash (OverflowError): a text id
    big = str(2**70)
    g = graphs.read_graph(_write(tmp_path / "b.csv", f"source,target\n1,{big}\n{big},2\n"))
    assert sorted(g.nodes()) == ["1", big, "2"]
    # a non-canonical id with spaces around it is a text id with spaces: refused, its line
    src = _write(tmp_path / "c.csv", "source, target\n1, 2\n2, 007\n")
    with pytest.raises(InputError, match="leading or trailing spaces") as info:
        graphs.read_graph(src)
    assert info.value.line == 3


def test_the_command_names_both_spellings_and_writes_nothing(tmp_path):
    lines = [f"{i} {i + 1}" for i in range(10, 18)] + ["18 007", "7 10"]
    src = _write(tmp_path / "g.txt", "\n".join(lines) + "\n")
    result = CliRunner().invoke(
        cli, ["anonymize", str(src), "-k", "2", "-o", str(tmp_path / "o.txt")]
    )
    assert result.exit_code == 2, result.output
    assert "'007' (line 9) and '7' (line 10) are two spellings of the integer 7" in result.output
    assert f"(file '{src}', line 10, node '7')" in result.output
    assert not (tmp_path / "o.txt").exists()


# ---------------------------------------------------------------------------------- JSON


def _node_link(nodes, links):
    """A node-link document with one node or link per line, from line 4 on."""
    return (
        '{"directed": false, "multigraph": false, "graph": {},\n'
        '"nodes": [\n'
        + ",\n".join(json.dumps(n) for n in nodes)
        + '\n],\n"links": [\n'
        + ",\n".join(json.dumps(x) for x in links)
        + "\n]}\n"
    )


@pytest.mark.parametrize(
    "nodes, links, line, what",
    [
        # 7 and "7" were two nodes every text output (edge list, CSV, GraphML, mapping)
        # writes alike
        (
            [{"id": 7}, {"id": 1}, {"id": "7"}],
            [{"source": 7, "target": 1}, {"source": "7", "target": 1}],
            5,
            "one id is written two ways, 7 (a number) and '7' (a string) (nodes[0], line 3",
        ),
        # 7.0 named node 7: networkx matched it silently
        (
            [{"id": 7}, {"id": 1}, {"id": 2}],
            [{"source": 7, "target": 1}, {"source": 1, "target": 2}, {"source": 7.0, "target": 2}],
            10,
            "links[2] (7.0 - 2) names a node the nodes list does not declare, where nodes[0] "
            "declares 7",
        ),
        # 7 and 7.0 declared: networkx merged them into one node
        (
            [{"id": 7}, {"id": 1}, {"id": 7.0}],
            [{"source": 7, "target": 1}],
            5,
            "one id is written two ways, 7 (a number) and 7.0 (a number)",
        ),
        (
            [{"id": 7}, {"id": 1}, {"id": 2}],
            [{"source": 7, "target": 1}, {"source": "1", "target": 2}],
            9,
            "links[1] ('1' - 2) names a node the nodes list does not declare, where nodes[1] "
            "declares 1",
        ),
        (
            [{"id": 7}, {"id": 1}, {"name": 2}],
            [{"source": 7, "target": 1}],
            5,
            'nodes[2] is not an object with an "id"',
        ),
        (
            [{"id": 7}, {"id": 1}],
            [{"source": 7, "target": 1}, {"source": 1}],
            8,
            "links[1] has no 'target'",
        ),
    ],
    ids=["int-and-str", "link-float", "int-and-float", "link-str", "no-id", "no-target"],
)
def test_node_link_ids_written_two_ways_are_refused_with_their_line(
    tmp_path, nodes, links, line, what
):
    src = _write(tmp_path / "g.json", _node_link(nodes, links))
    with pytest.raises(InputError) as info:
        graphs.read_graph(src)
    assert what in str(info.value) and info.value.line == line, str(info.value)


def test_node_link_lines_are_looked_up_on_the_error_path_only(tmp_path, monkeypatch):
    import graphs.io

    def never():
        raise AssertionError("a valid document parsed twice")

    monkeypatch.setattr(graphs.io, "_PositionDecoder", never)
    nodes = [{"id": i} for i in range(1, 5)] + [{"id": "ann"}]
    links = [{"source": i, "target": i + 1} for i in range(1, 4)] + [{"source": 4, "target": "ann"}]
    g = graphs.read_graph(_write(tmp_path / "g.json", _node_link(nodes, links)))
    assert list(g.nodes()) == [1, 2, 3, 4, "ann"] and g.number_of_edges() == 4


# ---------------------------------------------------------------------------- GraphML, GEXF

_GRAPHML = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="d0" for="node" attr.name="age" attr.type="int"/>
  <graph edgedefault="undirected">
{body}
  </graph>
</graphml>
"""
_GEXF = """<?xml version="1.0" encoding="UTF-8"?>
<gexf xmlns="http://gexf.net/1.3" version="1.3">
  <graph defaultedgetype="undirected">
{body}
  </graph>
</gexf>
"""


@pytest.mark.parametrize(
    "fmt, body, line, what",
    [
        (
            "graphml",
            '<node id="n1"/>\n<node id="n2"/>\n<edge source="n1" target="n2"/>\n'
            '<edge source="n2" target="n9"/>',
            8,
            "the edge 'n2' - 'n9' names a node no <node> declares",
        ),
        (
            "graphml",
            '<node id="n1"/>\n<node id="n2"/>\n<node id="n1"/>\n<edge source="n1" target="n2"/>',
            7,
            "a <node> is declared twice in the file (first on line 5)",
        ),
        ("graphml", '<node id="n1"/>\n<node/>\n<edge source="n1" target="n1"/>', 6, "no id"),
        (
            "graphml",
            '<node id="n1"/>\n<node id="n2">\n  <data key="d0">old</data>\n</node>',
            6,
            "cannot read the <node>: invalid literal for int()",
        ),
        (
            "graphml",
            '<node id="n1"/>\n<edge target="n1"/>',
            6,
            "an <edge> has no source",
        ),
        (
            "gexf",
            '<nodes>\n<node id="1"/>\n<node id="2"/>\n</nodes>\n<edges>\n'
            '<edge id="0" source="1" target="2"/>\n<edge id="1" source="2" target="7"/>\n'
            "</edges>",
            10,
            "the edge '2' - '7' names a node no <node> declares",
        ),
        (
            "gexf",
            '<nodes>\n<node id="1"/>\n<node id="2"/>\n<node id="1"/>\n</nodes>\n<edges>\n'
            '<edge id="0" source="1" target="2"/>\n</edges>',
            7,
            "a <node> is declared twice in the file (first on line 5)",
        ),
        ("gexf", '<nodes>\n<node id="1"/>\n<node label="x"/>\n</nodes>', 6, "no id"),
    ],
    ids=[
        "graphml-undeclared",
        "graphml-twice",
        "graphml-no-id",
        "graphml-bad-value",
        "graphml-no-source",
        "gexf-undeclared",
        "gexf-twice",
        "gexf-no-id",
    ],
)
def test_xml_errors_name_the_line(tmp_path, fmt, body, line, what):
    src = _write(tmp_path / f"g.{fmt}", (_GRAPHML if fmt == "graphml" else _GEXF).format(body=body))
    assert src.read_text().splitlines()[line - 1].lstrip().startswith("<")
    with pytest.raises(InputError) as info:
        graphs.read_graph(src)
    assert what in str(info.value) and info.value.line == line, str(info.value)
    assert f"line {line}" in str(info.value)


def test_a_graphml_file_of_two_graphs_is_refused(tmp_path):
    # networkx read the first graph and dropped the second, people included
    text = _GRAPHML.format(
        body='<node id="1"/>\n<node id="2"/>\n<edge source="1" target="2"/>\n</graph>\n'
        '<graph edgedefault="undirected">\n<node id="3"/>\n<node id="4"/>\n'
        '<edge source="3" target="4"/>'
    )
    with pytest.raises(InputError, match="holds 2 graphs") as info:
        graphs.read_graph(_write(tmp_path / "g.graphml", text))
    assert info.value.line == 9


def test_malformed_xml_names_its_line(tmp_path):
    src = _write(tmp_path / "g.graphml", _GRAPHML.format(body='<node id="1">\n<node id="2"/>'))
    with pytest.raises(InputError, match="mismatched tag") as info:
        graphs.read_graph(src)
    assert info.value.line == 7


def test_xml_is_parsed_once(tmp_path, monkeypatch):
    # it was parsed by networkx, then again to check its nodes
    import xml.etree.ElementTree as ET

    parses = []  # ET.parse and ElementTree(file=...) both parse through ElementTree.parse
    real_tree = ET.ElementTree.parse
    monkeypatch.setattr(
        ET.ElementTree, "parse", lambda self, *a, **k: parses.append(a) or real_tree(self, *a, **k)
    )
    for fmt in ("graphml", "gexf"):
        parses.clear()
        body = '<node id="1"/>\n<node id="2"/>\n<edge source="1" target="2"/>'
        if fmt == "gexf":
            body = f"<nodes>\n{body.rsplit(chr(10), 1)[0]}\n</nodes>\n<edges>\n"
            body += '<edge id="0" source="1" target="2"/>\n</edges>'
        src = _write(
            tmp_path / f"g.{fmt}", (_GRAPHML if fmt == "graphml" else _GEXF).format(body=body)
        )
        assert graphs.read_graph(src).number_of_edges() == 1
        assert len(parses) == 1, (fmt, parses)


def test_a_cut_gzip_xml_file_is_bad_input(tmp_path):
    # a traceback (EOFError) before
    import gzip

    text = _GRAPHML.format(body="".join(f'<node id="{i}"/>\n' for i in range(300)))
    src = tmp_path / "g.graphml.gz"
    src.write_bytes(gzip.compress(text.encode())[:200])
    with pytest.raises(InputError, match="cannot read the file"):
        graphs.read_graph(src)
