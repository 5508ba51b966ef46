"""Compressed outputs, side-file extensions and columns the readers would drop.

* ``.gz`` outputs of every type are real gzip files whose header holds no file name and
  a zero time, so the same input, seed and key give the same bytes (tabular, graphs,
  location, querylogs, transactions; the graphs ``--mapping-out``);
* transactions writes ``.gz`` compressed and reads it back;
* a transactions long CSV with more than two columns must name ``tid`` and ``item``;
* graphs ``--mapping-out`` must be ``.csv`` / ``.csv.gz`` and ``--keep-attr`` needs an
  output that holds node attributes, both checked before the input is read;
* graphs says which edge attributes / columns it drops.

Each check is made with independent tools: the ``gzip`` / ``zlib`` modules, ``csv``,
plain ``networkx``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import zlib
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from structanon.cli import main

ROOT = Path(__file__).resolve().parents[1]
KEY = "00112233445566778899aabbccddeeff"


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _key(tmp_path):
    key = tmp_path / "release.key"
    key.write_text(KEY)
    return key


def _members(data: bytes) -> list[bytes]:
    """The headers (first 10 bytes) of every gzip member of ``data``, read with zlib."""
    headers, offset = [], 0
    while offset < len(data):
        headers.append(data[offset : offset + 10])
        inflate = zlib.decompressobj(wbits=31)
        inflate.decompress(data[offset:])
        assert inflate.eof, "a gzip member is cut short"
        offset = len(data) - len(inflate.unused_data)
    return headers


def _assert_reproducible_gzip(path: Path) -> bytes:
    """``path`` is gzip with no file name and a zero time in every member header; returns
    its decompressed content (read with the gzip module)."""
    data = path.read_bytes()
    assert data[:2] == b"\x1f\x8b", f"{path.name} is not gzip: {data[:20]!r}"
    for header in _members(data):
        assert header[:2] == b"\x1f\x8b"
        assert header[3] & 0x08 == 0, f"{path.name}: the header stores a file name"
        assert header[4:8] == b"\x00\x00\x00\x00", f"{path.name}: the header stores a time"
    with gzip.open(path, "rb") as fh:
        return fh.read()


def _twice(tmp_path, make_args, name):
    """Run the command made by ``make_args(out)`` twice (a second apart is not needed: the
    gzip time is whole seconds, so the header check covers it) and return both outputs."""
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run / name
        out.parent.mkdir()
        result = _cli(*make_args(out))
        assert result.exit_code == 0, result.output
        outs.append(out)
    return outs


def _gzip_twice_equals_plain(tmp_path, args, gz_name, plain_name):
    """Run ``args(out)`` twice to ``gz_name`` and once to ``plain_name``: the two gzip files
    are byte-identical and reproducible, and decompress to the plain output; returns
    (gzip path, decompressed bytes, plain path)."""
    a, b = _twice(tmp_path, args, gz_name)
    assert a.read_bytes() == b.read_bytes()
    content = _assert_reproducible_gzip(a)
    plain = tmp_path / plain_name
    assert _cli(*args(plain)).exit_code == 0
    assert plain.read_bytes() == content
    return a, content, plain


def _graph_file(tmp_path) -> Path:
    src = tmp_path / "g.txt"
    src.write_text("".join(f"{u} {v}\n" for u, v in nx.karate_club_graph().edges()))
    return src


# -- F3: reproducible gzip outputs --------------------------------------------------------


def test_tabular_gz_output_is_reproducible_gzip(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(
        "age,zip,income\n" + "".join(f"{20 + i % 30},{1000 + i % 7},{i}\n" for i in range(60))
    )
    key = _key(tmp_path)

    def args(out):
        return ["tabular", "anonymize", src, "--algorithm", "mondrian", "--qi", "age,zip",
                "--numeric", "age,zip", "-k", "5", "--key-file", key, "--no-measures", "--quiet", "-o", out]  # fmt: skip

    a, b = _twice(tmp_path, args, "t.csv.gz")
    assert a.read_bytes() == b.read_bytes()
    text = _assert_reproducible_gzip(a).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["age", "zip", "income"] and len(rows) == 61
    plain = tmp_path / "plain.csv"
    assert _cli(*args(plain)).exit_code == 0
    assert plain.read_text() == text  # the same table, compressed


def test_tabular_api_gz_write_has_no_name_or_time(tmp_path):
    import pandas as pd

    from structanon.io import write_table

    out = tmp_path / "x.tsv.gz"
    write_table(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), out)
    assert _assert_reproducible_gzip(out) == b"a\tb\n1\tx\n2\ty\n"


def test_tabular_dask_gz_parts_have_no_name_or_time(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from tabular.io import write_microdata_dask

    df = pd.DataFrame({"a": range(10), "b": list("xyzxyzxyzx")})
    out = tmp_path / "x.csv.gz"
    write_microdata_dask(dd.from_pandas(df, npartitions=3), out)
    assert len(_members(out.read_bytes())) == 3
    text = _assert_reproducible_gzip(out).decode()
    assert text == df.to_csv(index=False)


@pytest.mark.parametrize("ext", ["graphml.gz", "txt.gz", "csv.gz", "gexf.gz", "json.gz"])
def test_graphs_gz_output_is_reproducible_gzip(tmp_path, ext):
    src, key = _graph_file(tmp_path), _key(tmp_path)

    def args(out):
        return ["graphs", "anonymize", src, "-k", "3", "--key-file", key, "--utility", "none",
                "--quiet", "-o", out]  # fmt: skip

    content = _gzip_twice_equals_plain(tmp_path, args, f"g.{ext}", f"plain.{ext[:-3]}")[1]
    if ext == "graphml.gz":  # networkx reads the decompressed file as the karate graph's size
        g = nx.read_graphml(io.BytesIO(content))
        assert g.number_of_nodes() == 34 and g.number_of_edges() >= 78


def test_location_gz_output_is_reproducible_gzip(tmp_path):
    key = _key(tmp_path)
    src = ROOT / "location" / "data" / "geolife_11users_sample.csv.gz"

    def args(out):
        return ["location", "anonymize", src, "--user", "uid", "--time", "datetime", "--lon",
                "lng", "-k", "3", "--window", "1D", "--key-file", key, "--no-measures",
                "--quiet", "-o", out]  # fmt: skip

    a, b = _twice(tmp_path, args, "l.csv.gz")
    assert a.read_bytes() == b.read_bytes()
    text = _assert_reproducible_gzip(a).decode()
    assert len(list(csv.reader(io.StringIO(text)))) > 1


def test_location_dask_gz_output_is_gzip(tmp_path):
    pytest.importorskip("dask.dataframe")
    src = ROOT / "location" / "data" / "geolife_11users_sample.csv.gz"
    base = ["location", "anonymize", src, "--user", "uid", "--time", "datetime", "--lon", "lng",
            "-k", "3", "--window", "1D", "--key-file", _key(tmp_path), "--no-measures",
            "--quiet"]  # fmt: skip
    out, plain = tmp_path / "l.csv.gz", tmp_path / "l.csv"
    for target in (out, plain):
        result = _cli(*base, "--engine", "dask", "-o", target)
        assert result.exit_code == 0, result.output
    assert _assert_reproducible_gzip(out) == plain.read_bytes()


def test_querylogs_gz_output_is_reproducible_gzip(tmp_path):
    from querylogs import synthetic_log, write_log

    log = tmp_path / "log.tsv"
    write_log(synthetic_log(30, 600, seed=1), log, aol=True)
    key = _key(tmp_path)

    def args(out):
        return ["querylogs", "anonymize", log, "-k", "4", "--key-file", key, "--no-measures",
                "--quiet", "-o", out]  # fmt: skip

    a, b = _twice(tmp_path, args, "q.tsv.gz")
    assert a.read_bytes() == b.read_bytes()
    assert _assert_reproducible_gzip(a).count(b"\n") > 1


# -- F1: transactions .gz outputs ----------------------------------------------------------

RETAIL = ROOT / "transactions" / "data" / "retail_head2000.dat"


def _baskets(tmp_path) -> Path:
    src = tmp_path / "b.dat"
    src.write_text("".join(line + "\n" for line in RETAIL.read_text().splitlines()[:200]))
    return src


@pytest.mark.parametrize(
    "command, ext",
    [
        (["anonymize", "-k", "2", "-m", "1"], "csv"),
        (["anonymize", "-k", "2", "-m", "1"], "dat"),
        (["k-anonymize", "-k", "2"], "jsonl"),
    ],
)
def test_transactions_gz_output_is_compressed(tmp_path, command, ext):
    from transactions.io import read_transactions

    src, key = _baskets(tmp_path), _key(tmp_path)

    def args(out):
        return ["transactions", command[0], src, *command[1:], "--key-file", key, "--quiet",
                "-o", out]  # fmt: skip

    a, _content, plain = _gzip_twice_equals_plain(tmp_path, args, f"r.{ext}.gz", f"r.{ext}")
    assert read_transactions(a) == read_transactions(plain)


def test_transactions_api_writers_compress_gz(tmp_path):
    from transactions.io import read_transactions, write_transactions

    data = [{1, 2}, {3}, set()]
    for name in ("x.csv.gz", "x.jsonl.gz", "x.dat.gz"):
        write_transactions(data, tmp_path / name)
        _assert_reproducible_gzip(tmp_path / name)
        assert read_transactions(tmp_path / name) == data


@pytest.mark.parametrize(
    "args, name",
    [
        (["transactions", "anonymize", RETAIL, "-k", "2", "-m", "1"], "r.csv.bz2"),
        (["graphs", "anonymize", ROOT / "graphs" / "data" / "ca-GrQc_undirected.txt", "-k", "2"],
         "g.txt.xz"),
        (["querylogs", "anonymize", ROOT / "README.md", "-k", "2"], "q.tsv.zip"),
    ],
)  # fmt: skip
def test_other_compressed_output_names_refused_before_reading(tmp_path, args, name):
    # only .gz is written compressed: another compression suffix would name plain text
    result = _cli(*args, "-o", tmp_path / name)
    assert result.exit_code == 2, result.output
    assert "--output" in result.output and ".gz" in result.output
    assert os.listdir(tmp_path) == []


# -- F5: transactions long CSV columns -----------------------------------------------------


@pytest.mark.parametrize(
    "header, row",
    [("customer,date,product", "c0,2024-01-01,p1"), ("order_id,product,qty", "0,p1,1")],
)
def test_long_csv_with_more_columns_needs_tid_and_item(tmp_path, header, row):
    src = tmp_path / "t.csv"
    src.write_text(f"{header}\n{row}\n")
    result = _cli("transactions", "assess", src)
    assert result.exit_code == 2, result.output
    assert str(header.split(",")) in result.output
    assert "'tid'" in result.output and "'item'" in result.output


def test_long_csv_named_columns_among_others_are_read(tmp_path):
    from transactions.io import read_transactions

    src = tmp_path / "t.csv"
    src.write_text("qty,item,tid\n1,a,0\n2,b,0\n1,c,1\n")
    assert read_transactions(src) == [{"a", "b"}, {"c"}]


def test_long_csv_of_two_columns_is_read_whatever_their_names(tmp_path):
    from transactions.io import read_transactions

    src = tmp_path / "t.csv"
    src.write_text("order,product\n7,a\n7,b\n8,c\n")
    assert read_transactions(src) == [{"a", "b"}, {"c"}]


@pytest.mark.parametrize("sep", [";", "\t"])
def test_long_csv_of_one_column_hints_the_separator(tmp_path, sep):
    src = tmp_path / "t.csv"
    src.write_text(f"tid{sep}item\n0{sep}a\n")
    result = _cli("transactions", "assess", src)
    assert result.exit_code == 2, result.output
    assert "wrong separator?" in result.output and "comma-separated" in result.output


# -- F11: graphs --mapping-out -------------------------------------------------------------


@pytest.mark.parametrize("name", ["map.json", "map.xlsx", "map", "map.csv.bz2"])
def test_mapping_out_extension_checked_before_reading(tmp_path, name):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 x\n")  # an error on line 1 if it were read
    result = _cli("graphs", "anonymize", bad, "-k", "2", "-o", tmp_path / "o.txt",
                  "--mapping-out", tmp_path / name)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--mapping-out" in result.output and ".csv" in result.output
    assert "line 1" not in result.output
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]


def test_mapping_out_csv_gz_is_compressed(tmp_path):
    src, key = _graph_file(tmp_path), _key(tmp_path)

    def args(out, mapping):
        return ["graphs", "anonymize", src, "-k", "3", "--key-file", key, "--utility", "none",
                "--quiet", "-o", out, "--mapping-out", mapping]  # fmt: skip

    maps = []
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        mapping = tmp_path / run / "map.csv.gz"
        assert _cli(*args(tmp_path / run / "g.txt", mapping)).exit_code == 0
        maps.append(mapping)
    assert maps[0].read_bytes() == maps[1].read_bytes()
    rows = list(csv.reader(io.StringIO(_assert_reproducible_gzip(maps[0]).decode())))
    assert rows[0] == ["original", "published"]
    assert sorted(int(r[0]) for r in rows[1:]) == list(range(34))
    assert _cli(*args(tmp_path / "plain.txt", tmp_path / "map.csv")).exit_code == 0
    assert (tmp_path / "map.csv").read_text().splitlines() == [",".join(r) for r in rows]


# -- F2: graphs --keep-attr with an output that holds no node attribute --------------------


@pytest.mark.parametrize("out", ["o.txt", "o.csv", "o.txt.gz"])
def test_keep_attr_refused_for_edge_list_outputs_before_reading(tmp_path, out):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 x\n")  # an error on line 1 if it were read
    result = _cli("graphs", "anonymize", bad, "-k", "2", "--keep-attr", "age",
                  "-o", tmp_path / out)  # fmt: skip
    assert result.exit_code == 2, result.output
    for word in ("--keep-attr", "GraphML", "GEXF", "JSON"):
        assert word in result.output
    assert "line 1" not in result.output
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]


def test_keep_attr_refused_with_out_format_edgelist(tmp_path):
    result = _cli("graphs", "anonymize", _graph_file(tmp_path), "-k", "2", "--keep-attr",
                  "age", "--out-format", "edgelist", "-o", tmp_path / "o.edges")  # fmt: skip
    assert result.exit_code == 2 and "--keep-attr" in result.output, result.output
    assert not (tmp_path / "o.edges").exists()


def test_keep_attr_kept_in_graphml(tmp_path):
    g = nx.karate_club_graph()
    nx.set_node_attributes(g, {v: v % 5 for v in g}, "age")
    for v in g:
        del g.nodes[v]["club"]
    src = tmp_path / "g.graphml"
    nx.write_graphml(g, src)
    out = tmp_path / "o.graphml"
    result = _cli("graphs", "anonymize", src, "-k", "3", "--keep-attr", "age", "--utility",
                  "none", "--quiet", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    ages = nx.get_node_attributes(nx.read_graphml(out), "age")
    assert sorted(ages.values()) == sorted(v % 5 for v in range(34))


# -- F21: graphs edge attributes -----------------------------------------------------------


def _warnings(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("warning:")]


@pytest.mark.parametrize(
    "name, text, dropped",
    [
        ("g.csv", "source,target,weight\n", "weight"),
        ("g.csv", "weight,source,when,target\n", "weight, when"),
        ("g.txt", "", "column 3"),
    ],
)
def test_dropped_edge_columns_are_warned_once(tmp_path, name, text, dropped):
    edges = list(nx.karate_club_graph().edges())
    src = tmp_path / name
    if name.endswith(".csv"):
        cols = text.strip().split(",")
        rows = [{"source": u, "target": v, "weight": 1.5, "when": "x"} for u, v in edges]
        src.write_text(text + "".join(",".join(str(r[c]) for c in cols) + "\n" for r in rows))
    else:
        src.write_text("".join(f"{u} {v} 1.5\n" for u, v in edges))
    out, report = tmp_path / "o.graphml", tmp_path / "r.json"
    result = _cli("graphs", "anonymize", src, "-k", "3", "--utility", "none", "-o", out,
                  "--report", report)  # fmt: skip
    assert result.exit_code == 0, result.output
    said = [w for w in _warnings(result) if "edge attribute" in w]
    assert len(said) == 1 and f"dropped: {dropped};" in said[0], result.stderr
    doc = json.loads(report.read_text())
    assert sum("edge attribute" in w for w in json.dumps(doc).split('"')) >= 1
    # the release holds bare edges, as said
    assert all(not d for *_, d in nx.read_graphml(out).edges(data=True))


def test_graphml_edge_data_dropped_with_a_warning(tmp_path):
    g = nx.karate_club_graph()  # its edges carry "weight"
    assert all("weight" in d for *_, d in g.edges(data=True))
    for v in g:
        del g.nodes[v]["club"]
    src = tmp_path / "g.graphml"
    nx.write_graphml(g, src)
    result = _cli("graphs", "anonymize", src, "-k", "3", "--utility", "none",
                  "-o", tmp_path / "o.graphml")  # fmt: skip
    assert result.exit_code == 0, result.output
    said = [w for w in _warnings(result) if "edge attribute" in w]
    assert len(said) == 1 and "dropped: weight;" in said[0], result.stderr


def test_api_warns_of_edge_attributes_and_not_without(tmp_path):
    from graphs import k_degree_anonymize

    g = nx.karate_club_graph()
    release = k_degree_anonymize(g, 3, seed=0)
    said = [w for w in release.info["warnings"] if "edge attribute" in w]
    assert len(said) == 1 and "weight" in said[0]
    assert all(not d for *_, d in release.data.edges(data=True))
    bare = nx.Graph(g.edges())
    assert not any("edge attribute" in w for w in k_degree_anonymize(bare, 3).info["warnings"])


def test_two_column_inputs_give_no_edge_warning(tmp_path):
    src = _graph_file(tmp_path)
    result = _cli("graphs", "anonymize", src, "-k", "3", "--utility", "none",
                  "-o", tmp_path / "o.txt")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert not any("edge attribute" in w for w in _warnings(result))
