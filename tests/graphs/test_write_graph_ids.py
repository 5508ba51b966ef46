"""write_graph refuses, before writing, a graph whose node ids or attributes the chosen
format cannot hold or tell apart; everything it writes reads back with the same nodes and
edges."""

from __future__ import annotations

import csv
import json

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphs
from graphs.cli import cli
from structanon.errors import InputError

EXTENSIONS = {
    "edgelist": "edges",
    "csv": "csv",
    "graphml": "graphml",
    "gexf": "gexf",
    "json": "json",
}
TEXT = ("edges", "csv")


def _text_edges(graph):
    return {frozenset((str(u), str(v))) for u, v in graph.edges()}


def _refused(graph, path, *names, match=None):
    """``graph`` is refused for ``path``, naming each of ``names`` (by repr), and nothing
    is written: no file at ``path`` and no temporary file beside it."""
    before = set(path.parent.iterdir())
    with pytest.raises(InputError, match=match) as info:
        graphs.write_graph(graph, path)
    for name in names:
        assert repr(name) in str(info.value), str(info.value)
    assert not path.exists()
    assert set(path.parent.iterdir()) == before
    return info.value


def _mixed():
    """Nodes "1" and 1 (and 2 .. 7), as k_degree_anonymize(relabel=False) releases them."""
    g = nx.relabel_nodes(nx.path_graph(8), {0: "1"})
    release = graphs.k_degree_anonymize(g, 2, relabel=False, measures=False)
    assert "1" in release.data and 1 in release.data  # the release keeps both nodes
    return release.data


@pytest.mark.parametrize("ext", sorted(EXTENSIONS.values()))
def test_one_and_text_one_refused_in_every_format(tmp_path, ext):
    error = _refused(_mixed(), tmp_path / f"rel.{ext}", 1, "1", match="both written '1'")
    assert "relabel=True" in str(error)


@pytest.mark.parametrize(
    ("ext", "node"),
    [
        ("edges", "a b"),
        ("edges", "3\t4"),
        ("edges", " 5"),
        ("edges", "7\n"),
        ("edges", ""),
        ("edges", "alice"),  # an edge list holds integer ids only
        ("edges", 2**63),  # beyond the 64-bit range read_graph reads
        ("edges", True),  # written "True"
        ("csv", "a,b"),
        ("csv", 'say "hi"'),
        ("csv", "a\nb"),
        ("csv", "a\rb"),
        ("csv", " bob"),
        ("csv", "bob\t"),
        ("csv", ""),
        ("csv", "a\x00"),
    ],
)
def test_id_a_text_format_cannot_hold_refused(tmp_path, ext, node):
    g = nx.Graph([(node, 10), (10, 11)])
    error = _refused(g, tmp_path / f"g.{ext}")
    assert error.node == node
    assert "relabel" in str(error)
    # JSON holds such an id: the refusal's other fix writes it, and it reads back as it is
    graphs.write_graph(g, tmp_path / "g.json")
    data = json.loads((tmp_path / "g.json").read_text())
    assert node in [entry["id"] for entry in data["nodes"]]


@pytest.mark.parametrize("ext", TEXT + ("json",))
@pytest.mark.parametrize("node", [(1, "x"), frozenset({1, 2}), ("a",)])
def test_non_scalar_id_refused(tmp_path, ext, node):
    g = nx.Graph([(node, 1), (1, 2)])
    error = _refused(g, tmp_path / f"g.{ext}", node, match="string and number ids only")
    assert error.node == node


@pytest.mark.parametrize("ext", TEXT)
@pytest.mark.parametrize(("first", "second"), [(7, "007"), ("7", "+7"), (1000, "1_000")])
def test_two_spellings_of_one_integer_refused(tmp_path, ext, first, second):
    g = nx.Graph([(first, 1), (second, 2)])
    _refused(g, tmp_path / f"g.{ext}", first, second, match="two spellings of the integer")


@pytest.mark.parametrize(
    ("ext", "node"), [("graphml", "a\x01b"), ("gexf", "a\x00"), ("graphml", "\udc80")]
)
def test_id_xml_cannot_hold_refused(tmp_path, ext, node):
    g = nx.Graph([(node, 1), (1, 2)])
    assert _refused(g, tmp_path / f"g.{ext}", match="XML cannot hold").node == node


@pytest.mark.parametrize("ext", ["graphml", "gexf"])
@pytest.mark.parametrize("value", [["x", 0], {"a": 1}, {1, 2}, None])
def test_unwritable_node_attribute_refused(tmp_path, ext, value):
    g = nx.path_graph(8)
    nx.set_node_attributes(g, {i: {"tags": value} for i in range(8)})
    release = graphs.k_degree_anonymize(g, 2, keep_attributes=["tags"], measures=False)
    error = _refused(release.data, tmp_path / f"rel.{ext}", "tags", match="GraphML and GEXF")
    assert error.node in release.data
    assert repr(error.node) in str(error)


@pytest.mark.parametrize("ext", ["graphml", "gexf"])
def test_unwritable_edge_attribute_refused(tmp_path, ext):
    g = nx.Graph()
    g.add_edge(0, 1, w=1.5)
    g.add_edge(1, 2, w=[1, 2])
    _refused(g, tmp_path / f"g.{ext}", "w", (1, 2), match="edge attribute")


def test_list_attribute_kept_in_json(tmp_path):
    g = nx.path_graph(8)
    nx.set_node_attributes(g, {i: {"tags": ["x", i]} for i in range(8)})
    release = graphs.k_degree_anonymize(g, 2, keep_attributes=["tags"], measures=False)
    path = tmp_path / "rel.json"
    graphs.write_graph(release.data, path)
    data = json.loads(path.read_text())
    written = {entry["id"]: entry["tags"] for entry in data["nodes"]}
    assert written == {n: list(d["tags"]) for n, d in release.data.nodes(data=True)}
    assert sorted(tags[1] for tags in written.values()) == list(range(8))


@pytest.mark.parametrize(
    ("what", "value", "match"),
    [("node", {1, 2}, "JSON cannot hold"), ("node", b"x", "JSON cannot hold")],
)
def test_json_refuses_what_it_cannot_hold(tmp_path, what, value, match):
    g = nx.Graph([(0, 1)])
    g.nodes[1]["a"] = value
    assert _refused(g, tmp_path / "g.json", "a", match=match).node == 1


def test_json_refuses_attributes_its_writer_overwrites(tmp_path):
    g = nx.Graph([(0, 1)])
    g.nodes[0]["id"] = "secret"
    assert _refused(g, tmp_path / "g.json", "id", match="overwritten").node == 0
    h = nx.Graph()
    h.add_edge(0, 1, source="survey")
    _refused(h, tmp_path / "h.json", "source", match="overwritten")


def test_numpy_ids_and_values_written_to_json(tmp_path):
    g = nx.Graph([(np.int64(3), np.int64(4))])
    g.nodes[np.int64(3)]["score"] = np.float64(0.5)
    graphs.write_graph(g, tmp_path / "g.json")
    data = json.loads((tmp_path / "g.json").read_text())
    assert sorted(entry["id"] for entry in data["nodes"]) == [3, 4]
    assert {e["id"]: e.get("score") for e in data["nodes"]} == {3: 0.5, 4: None}


def _plain_graph():
    g = nx.karate_club_graph()
    return nx.Graph(g.edges())  # no attributes


def _named_graph():
    """Text ids every format but the edge list holds: spaces, accents, quotes for XML."""
    names = ["ana maria", "björn", "<chloé & co>", "d'arcy", "-0", "007", "x#1", "%y"]
    return nx.relabel_nodes(nx.cycle_graph(8), dict(enumerate(names)))


@pytest.mark.parametrize("ext", sorted(EXTENSIONS.values()))
def test_plain_graph_round_trips_in_every_format(tmp_path, ext):
    g = _plain_graph()
    path = tmp_path / f"g.{ext}"
    graphs.write_graph(g, path)
    back = graphs.read_graph(path)
    assert {str(n) for n in back} == {str(n) for n in g}
    assert _text_edges(back) == _text_edges(g)
    assert back.number_of_edges() == g.number_of_edges()
    if ext in ("edges", "csv", "json"):  # integer ids read back as the same integers
        assert set(back) == set(g)
        assert nx.utils.edges_equal(
            sorted(map(sorted, back.edges())), sorted(map(sorted, g.edges()))
        )


@pytest.mark.parametrize("ext", ["csv", "graphml", "gexf", "json"])
def test_text_ids_round_trip(tmp_path, ext):
    g = _named_graph()
    path = tmp_path / f"g.{ext}"
    graphs.write_graph(g, path)
    back = graphs.read_graph(path)
    assert set(back) == set(g)
    assert _text_edges(back) == _text_edges(g)
    if ext == "csv":  # read independently: the written rows are the graph's edges
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == ["source", "target"]
        assert {frozenset(r) for r in rows[1:]} == _text_edges(g)


def test_csv_edge_named_like_the_header_reads_back(tmp_path):
    g = nx.Graph([("source", "target"), ("target", "x")])
    path = tmp_path / "g.csv"
    graphs.write_graph(g, path)
    assert _text_edges(graphs.read_graph(path)) == _text_edges(g)


_IDS = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.text(max_size=4),
    st.floats(allow_nan=False),
    st.tuples(st.integers(0, 3)),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ids=st.lists(_IDS, min_size=2, max_size=6, unique_by=lambda x: (type(x), x)))
@pytest.mark.parametrize("ext", sorted(EXTENSIONS.values()))
def test_what_is_written_reads_back(tmp_path, ext, ids):
    """Any graph is either refused, with nothing written, or read back with the same
    node and edge sets (as text: the text formats read ids as text or integers)."""
    g = nx.Graph()
    nx.add_path(g, ids)
    if g.number_of_nodes() < 2 or nx.number_of_selfloops(g):
        return
    path = tmp_path / f"h.{ext}"
    path.unlink(missing_ok=True)
    try:
        graphs.write_graph(g, path)
    except InputError:
        assert not path.exists()
        return
    back = graphs.read_graph(path)
    assert {str(n) for n in back} == {str(n) for n in g}
    assert back.number_of_nodes() == g.number_of_nodes()
    assert _text_edges(back) == _text_edges(g)


def test_cli_refused_write_exits_2_and_writes_nothing(tmp_path):
    src = tmp_path / "names.csv"
    names = ["ann lee", "bo", "cy", "di", "ed", "flo"]
    src.write_text(
        "source,target\n" + "".join(f"{u},{v}\n" for u, v in zip(names, names[1:] + names[:1]))
    )
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out, report = out_dir / "anon.edges", out_dir / "report.json"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(src), "-k", "2", "--no-relabel", "-o", str(out), "--report", str(report)],
    )
    assert result.exit_code == 2, result.output
    assert "'ann lee'" in result.output and "whitespace" in result.output
    assert str(out) in result.output
    assert list(out_dir.iterdir()) == []
    # the same run with the default relabelling is written, and reads back
    result = CliRunner().invoke(cli, ["anonymize", str(src), "-k", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert graphs.read_graph(out).number_of_nodes() == len(names)
