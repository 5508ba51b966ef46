"""Reading and writing graph exports; malformed input names its line."""

from __future__ import annotations

import gzip
import json

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphs import read_graph, write_graph
from structanon.errors import InputError


def _write(path, text):
    path.write_text(text)
    return path


def test_snap_edge_list_with_comments(tmp_path):
    # a third column on every line (SNAP's "u v timestamp"): the first two are the edge
    p = _write(
        tmp_path / "g.txt", "# SNAP export\n% other comment\n1 2 5\n2 1 6\n2\t3 7\n4 4 8\n\n"
    )
    g = read_graph(p)
    assert sorted(g.edges()) == [(1, 2), (2, 3)]
    assert sorted(g.nodes()) == [1, 2, 3, 4]
    assert g.graph["input_report"] == {
        "self_loops": 1,
        "duplicate_edges": 1,
        "edge_rows": 4,
        "ignored_edge_columns": ["column 3"],
    }


def _assert_recounted(g, rows, width=2):
    """``g`` holds the edges and nodes (first column, then second, in order of appearance)
    of the edge ``rows``, and its report counts their self-loops and repeated pairs (and
    names the ignored columns past the first two of ``width``)."""
    pairs = {frozenset((u, v)) for u, v in rows if u != v}
    assert {frozenset(e) for e in g.edges()} == pairs and g.number_of_edges() == len(pairs)
    assert list(g.nodes()) == list(dict.fromkeys([u for u, _ in rows] + [v for _, v in rows]))
    loops = sum(u == v for u, v in rows)
    assert g.graph["input_report"] == {
        "self_loops": loops,
        "duplicate_edges": len(rows) - loops - len(pairs),
        "edge_rows": len(rows),
        **(
            {"ignored_edge_columns": [f"column {n}" for n in range(3, width + 1)]}
            if width > 2
            else {}
        ),
    }


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-(2**62), 2**62), st.integers(-(2**62), 2**62)), min_size=1
    ).flatmap(lambda rows: st.tuples(st.just(rows), st.permutations(rows + rows[: len(rows) // 2])))
)
def test_edge_list_recounted(tmp_path_factory, case):
    # large and negative ids, repeated rows in both directions: the edges, nodes (first
    # column, then second, in order of appearance) and the report's counts, recounted
    _, rows = case
    rows = [(v, u) if i % 3 == 0 else (u, v) for i, (u, v) in enumerate(rows)]
    path = tmp_path_factory.mktemp("edges") / "g.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in rows))
    g = read_graph(path)
    _assert_recounted(g, rows)


_TOKEN = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.sampled_from(
        ["1.5", "a", "2" * 20, "-" + "9" * 19, "+7", "0x1", "1e3", "7", "07", "007", "-0", "0"]
        + ["1_000", "1000", "-07", "+0", "\uff17"]
    ),
)
_LINE = st.one_of(
    st.lists(st.integers(-50, 50).map(str), min_size=2, max_size=2),
    st.lists(_TOKEN, min_size=1, max_size=4),
    st.just([]),
).flatmap(
    lambda tokens: st.tuples(
        st.just(tokens), st.sampled_from([" ", "\t", "  "]), st.sampled_from(["", " ", "\t"])
    )
)


def _plain_read(text):
    """Edges, nodes and report of an edge list without comments, read one line at a time
    in plain Python; ``None`` where a line is not two (or more) 64-bit integers, holds
    another number of fields than the first, or a line ends in a carriage return alone.
    Ids are integers when every one is written as Python writes its integer, else their
    text, and ``None`` where two spellings name one integer ("07" and "7")."""
    if "\r" in text.replace("\r\n", ""):
        return None
    rows, widths = [], set()
    for line in text.split("\n"):
        parts = line.split()
        if not parts:
            continue
        widths.add(len(parts))
        if len(parts) < 2 or len(widths) > 1:
            return None
        try:
            u, v = int(parts[0]), int(parts[1])
        except ValueError:
            return None
        if not all(-(2**63) <= x < 2**63 for x in (u, v)):
            return None
        rows.append((parts[0], parts[1]))
    tokens = [t for row in rows for t in row]
    if all(str(int(t)) == t for t in tokens):
        return [(int(u), int(v)) for u, v in rows] or None
    spellings = {}
    for t in tokens:
        if spellings.setdefault(int(t), t) != t:
            return None
    return rows or None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_LINE, min_size=1, max_size=12),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_edge_list_read_as_a_plain_line_by_line_parse(tmp_path_factory, lines, eol, last):
    # every line blank, two integers, or anything else (1 or 3-4 columns, floats, words,
    # ids beyond 64 bits), in any mix, with LF, CRLF or CR line ends: read_graph gives what
    # a line-by-line parse gives, or refuses the file where that parse finds a bad line
    text = eol.join(lead + sep.join(tokens) for tokens, sep, lead in lines) + (eol if last else "")
    path = tmp_path_factory.mktemp("edges") / "g.txt"
    path.write_bytes(text.encode())
    rows = _plain_read(text)
    if rows is None:
        with pytest.raises(InputError):
            read_graph(path)
        return
    g = read_graph(path)
    _assert_recounted(g, rows, max(len(tokens) for tokens, _, _ in lines))


def test_gzip_edge_list(tmp_path):
    p = tmp_path / "g.txt.gz"
    p.write_bytes(gzip.compress(b"1 2\n2 3\n"))
    assert read_graph(p).number_of_edges() == 2


@pytest.mark.parametrize(
    "text, line",
    [("1 2\n3\n", 2), ("1 2\n# c\nalice bob\n", 3), ("1 2\n2 x3\n", 2)],
)
def test_malformed_lines_named(tmp_path, text, line):
    p = _write(tmp_path / "bad.txt", text)
    with pytest.raises(InputError, match=f"line {line}") as info:
        read_graph(p)
    assert info.value.line == line


def test_empty_edge_list(tmp_path):
    with pytest.raises(InputError, match="no edges"):
        read_graph(_write(tmp_path / "e.txt", "# nothing\n"))


def test_csv_with_header(tmp_path):
    p = _write(
        tmp_path / "g.csv", "source,target,weight\nann,bob,1\nbob,cat,2\ncat,ann,3\nbob,ann,1\n"
    )
    g = read_graph(p)
    assert g.number_of_edges() == 3 and set(g.nodes()) == {"ann", "bob", "cat"}
    assert g.graph["input_report"]["duplicate_edges"] == 1
    with pytest.raises(InputError, match="line 3"):
        read_graph(_write(tmp_path / "b.csv", "source,target\n1,2\n3,\n"))
    with pytest.raises(InputError, match="source"):
        read_graph(_write(tmp_path / "c.csv", "a,b\n1,2\n"))


@pytest.mark.parametrize("ext", ["graphml", "gexf", "json", "csv", "txt", "txt.gz"])
def test_round_trip(tmp_path, ext):
    g = nx.karate_club_graph()
    g = nx.relabel_nodes(g, {i: i + 1 for i in g})
    p = tmp_path / f"g.{ext}"
    write_graph(g, p)
    back = read_graph(p)
    assert {frozenset(map(int, e)) for e in back.edges()} == {frozenset(e) for e in g.edges()}


def test_directed_refused(tmp_path):
    p = tmp_path / "d.graphml"
    nx.write_graphml(nx.DiGraph([(1, 2), (2, 1), (2, 3)]), p)
    with pytest.raises(InputError, match="directed"):
        read_graph(p)
    g = read_graph(p, as_undirected=True)
    assert g.number_of_edges() == 2
    assert g.graph["input_report"]["duplicate_edges"] == 1


def test_node_link_json_links_key(tmp_path):
    p = tmp_path / "g.json"
    p.write_text(
        json.dumps(
            {
                "directed": False,
                "multigraph": False,
                "graph": {},
                "nodes": [{"id": 1}, {"id": 2}],
                "links": [{"source": 1, "target": 2}],
            }
        )
    )
    assert read_graph(p).number_of_edges() == 1
    p.write_text("{not json")
    with pytest.raises(InputError):
        read_graph(p)


def test_format_errors(tmp_path):
    with pytest.raises(InputError, match="format"):
        read_graph(tmp_path / "g.xyz")
    with pytest.raises(InputError, match="format"):
        read_graph(tmp_path / "g.txt", format="pajek")
    with pytest.raises(InputError, match="not found"):
        read_graph(tmp_path / "missing.txt")


def test_snap_directed_header(tmp_path):
    p = _write(
        tmp_path / "d.txt",
        "# Directed graph (each unordered pair of nodes is saved once)\n"
        "# Nodes: 3 Edges: 3\n1 2\n2 1\n2 3\n",
    )
    with pytest.raises(InputError, match="directed") as info:
        read_graph(p)
    assert info.value.line == 1
    g = read_graph(p, as_undirected=True)
    assert g.number_of_edges() == 2 and g.graph["input_report"]["duplicate_edges"] == 1
    p = _write(tmp_path / "u.txt", "# Undirected graph: ca-GrQc\n1 2\n")
    assert read_graph(p).number_of_edges() == 1


def test_gexf_release_carries_no_date(tmp_path, monkeypatch):
    # networkx stamps <meta lastmodifieddate> with today's date: the same input, seed and
    # key gave other bytes on another day, and the file dated the run
    import datetime
    import time

    import graphs

    g = nx.barbell_graph(6, 3)
    release = graphs.k_degree_anonymize(g, 2, seed=1, utility=False, key=b"k" * 16)
    today = tmp_path / "today.gexf"
    write_graph(release.data, today)
    data = today.read_bytes()
    assert b"lastmodifieddate" not in data
    for day in {datetime.date.today(), datetime.datetime.now(datetime.UTC).date()}:
        assert day.isoformat().encode() not in data
    real = time.strftime
    monkeypatch.setattr(time, "strftime", lambda fmt, *t: "1999-12-31" if not t else real(fmt, *t))
    other = tmp_path / "other_day.gexf"
    write_graph(release.data, other)
    assert other.read_bytes() == data
    assert b"1999-12-31" not in other.read_bytes()
    again = read_graph(other)
    assert sorted(map(str, again.nodes())) == sorted(map(str, release.data.nodes()))
