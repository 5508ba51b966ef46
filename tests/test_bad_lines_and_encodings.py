"""One shape for bad lines and text encodings in the five command lines.

``--encoding`` (default utf-8) reads a Latin-1 file as written, in every command that reads
text; without it the command exits 2 naming the file, the line and the byte.
``--on-bad-lines {raise,drop}`` (default raise) where a reader can drop bad lines
(location, querylogs): raise exits 2 naming the file and the line, drop drops exactly the
bad lines and says how many (and which) on stderr and in the report.  The former spellings
(location ``--drop-invalid``, querylogs ``report`` and ``skip``) still work, never silently.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest
from click.testing import CliRunner

import location
import querylogs
from structanon.cli import main

LATIN = "latin-1"
AOL_HEADER = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def latin_rows(path: Path, sep: str = ",") -> list[dict[str, str]]:
    """The rows of a Latin-1 text table, read without structanon (the independent count)."""
    return list(csv.DictReader(io.StringIO(path.read_bytes().decode(LATIN)), delimiter=sep))


def first_high_byte(path: Path) -> tuple[int, str]:
    """The line (1-based) of the first byte above 0x7f, and that byte, found by hand."""
    for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        high = [b for b in line if b > 0x7F]
        if high:
            return number, f"0x{high[0]:02x}"
    raise AssertionError("no byte above 0x7f")


def refused_for_its_encoding(result, path: Path, line: int, byte: str) -> None:
    """Exit 2 naming the file, the line and the byte, and saying how to give the encoding."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"file '{path}'" in result.stderr and f"line {line})" in result.stderr, result.stderr
    assert f"byte {byte}" in result.stderr and "--encoding" in result.stderr


# ------------------------------------------------------------------------------- tabular


@pytest.fixture
def latin_table(tmp_path):
    cities = ["Bern", "Zürich", "Genève", "Zürich", "Bern", "Genève"] * 3
    text = "age,city\n" + "".join(f"{20 + i},{c}\n" for i, c in enumerate(cities))
    path = tmp_path / "people.csv"
    path.write_bytes(text.encode(LATIN))
    return path


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_tabular_reads_a_latin1_table_with_encoding(tmp_path, latin_table, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    out = tmp_path / "out.csv"
    args = ["tabular", "anonymize", latin_table, "--qi", "age", "--numeric", "age"]
    args += ["--sensitive", "city", "--algorithm", "mondrian", "-k", "2", "-o", out]
    args += ["--engine", engine, "--no-measures", "--quiet"]
    refused_for_its_encoding(run(*args), latin_table, 3, "0xfc")  # "Zürich", line 3
    assert not out.exists()
    result = run(*args, "--encoding", LATIN)
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out, encoding="utf-8")
    want = Counter(row["city"] for row in latin_rows(latin_table))
    assert Counter(published["city"]) == want and want["Zürich"] == 6 and want["Genève"] == 6


def test_tabular_commands_share_the_encoding_option(tmp_path, latin_table):
    """The perturbation and bucket commands take --encoding as anonymize does."""
    out = tmp_path / "out.csv"
    for command in (
        ["recode", latin_table, "--sample", "0.999999"],
        ["anatomize", latin_table, "--qi", "age", "--sensitive", "city", "-l", "2"]
        + ["--sensitive-output", tmp_path / "s.csv"],
        ["assess", latin_table, "--qi", "age"],
    ):
        outputs = [] if command[0] == "assess" else ["-o", out, "--no-measures"]
        refused_for_its_encoding(run("tabular", *command, *outputs), latin_table, 3, "0xfc")
        result = run("tabular", *command, *outputs, "--encoding", LATIN, "--quiet")
        assert result.exit_code == 0, (command[0], result.output)


# -------------------------------------------------------------------------- transactions


def test_transactions_reads_latin1_baskets_with_encoding(tmp_path):
    baskets = [["café", "thé", "pain"], ["café", "pain"], ["thé", "café"], ["pain", "thé"]] * 3
    path = tmp_path / "baskets.dat"
    path.write_bytes("".join(" ".join(b) + "\n" for b in baskets).encode(LATIN))
    out = tmp_path / "out.jsonl"
    args = ["transactions", "anonymize", path, "-k", "2", "-m", "1", "-o", out, "--quiet"]
    refused_for_its_encoding(run(*args), path, 1, "0xe9")
    assert not out.exists()
    result = run(*args, "--encoding", LATIN, "--no-measures")
    assert result.exit_code == 0, result.output
    published = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    want = Counter(path.read_bytes().decode(LATIN).split())
    assert Counter(i for b in published if b for i in b) == want
    assert want["café"] == 9 and want["thé"] == 9


# ------------------------------------------------------------------------------ location


def fixes_with_accented_users(n: int = 1200, users: int = 12) -> pd.DataFrame:
    df = location.synthetic_log(n, users, seed=4)
    names = {u: f"user{u}" for u in df["user"].unique()}
    first, second = sorted(names)[:2]
    names[first], names[second] = "Zoë", "Zoé"  # one letter apart: two people
    return df.assign(user=df["user"].map(names))


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_location_reads_a_latin1_log_with_encoding(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    df = fixes_with_accented_users()
    path = tmp_path / "fixes.csv"
    df.to_csv(path, index=False, encoding=LATIN)
    out, report = tmp_path / "cloaked.csv", tmp_path / "report.json"
    args = ["location", "anonymize", path, "-k", "2", "--window", "1D", "-o", out]
    args += ["--report", report, "--engine", engine, "--quiet", "--no-measures"]
    refused_for_its_encoding(run(*args), path, *first_high_byte(path))
    assert not out.exists()
    result = run(*args, "--encoding", LATIN)
    assert result.exit_code == 0, result.output
    users = {row["user"] for row in latin_rows(path)}
    assert {"Zoë", "Zoé"} <= users
    assert json.loads(report.read_text())["info"]["n_users"] == len(users)


# -------------------------------------------------------------------------------- graphs


def test_graphs_reads_a_latin1_edge_list_with_encoding(tmp_path):
    people = ["Zoë", "Zoé", "Anaïs", "Björn", "Ana", "Leo"]
    edges = [(a, b) for i, a in enumerate(people) for b in people[i + 1 :]][:12]
    path = tmp_path / "friends.csv"
    path.write_bytes(("source,target\n" + "".join(f"{a},{b}\n" for a, b in edges)).encode(LATIN))
    out = tmp_path / "out.graphml"
    args = ["graphs", "anonymize", path, "-k", "2", "--no-relabel", "-o", out, "--quiet"]
    refused_for_its_encoding(run(*args), path, 2, "0xeb")
    assert not out.exists()
    result = run(*args, "--encoding", LATIN, "--no-measures")
    assert result.exit_code == 0, result.output
    want = {row[name] for row in latin_rows(path) for name in ("source", "target")}
    assert set(nx.read_graphml(out).nodes) == want and "Anaïs" in want
    result = run("graphs", "assess", path, "--encoding", LATIN, "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["risk"]["graph"]["nodes"] == 6


# ----------------------------------------------------------------------------- querylogs


def latin_log(tmp_path: Path, users: int = 6) -> Path:
    lines = [AOL_HEADER]
    for u in range(users):
        lines.append(f"{100 + u}\tcafé crème\t2006-03-01 10:00:00\t\t\n")
        lines.append(f"{100 + u}\tthé vert\t2006-03-01 11:00:00\t1\thttp://www.the.fr\n")
    path = tmp_path / "log.tsv"
    path.write_bytes("".join(lines).encode(LATIN))
    return path


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_querylogs_reads_a_latin1_log_with_encoding(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    path = latin_log(tmp_path)
    out = tmp_path / "out.tsv"
    args = ["querylogs", "anonymize", path, "-k", "3", "-o", out, "--engine", engine]
    args += ["--quiet", "--no-measures"]
    refused_for_its_encoding(run(*args), path, 2, "0xe9")
    assert not out.exists()
    result = run(*args, "--encoding", LATIN)
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out, sep="\t", encoding="utf-8")
    want = Counter(row["Query"] for row in latin_rows(path, "\t"))
    assert Counter(published["query"]) == want and want["café crème"] == 6


def test_an_unknown_encoding_is_refused_naming_the_option(tmp_path):
    path = latin_log(tmp_path)
    out = tmp_path / "out.tsv"
    for command in (
        ["querylogs", "anonymize", path, "-k", "2", "-o", out],
        ["tabular", "assess", path, "--qi", "AnonID"],
        ["transactions", "assess", path, "-k", "2"],
        ["location", "assess", path],
        ["graphs", "assess", path],
    ):
        result = run(*command, "--encoding", "latin-9x")
        assert result.exit_code == 2 and "'--encoding'" in result.output, result.output
        assert "unknown text encoding 'latin-9x'" in result.output and not out.exists()


# ----------------------------------------------------------------------- --on-bad-lines


def log_with_bad_lines(tmp_path: Path) -> tuple[Path, list[int]]:
    path = tmp_path / "log.tsv"
    querylogs.write_log(querylogs.synthetic_log(20, 400, seed=2), path, aol=True)
    lines = path.read_text().splitlines(keepends=True)
    lines[9] = "no tabs on this line\n"  # line 10
    lines[99] = "7\tquery\tnot a time\t\t\n"  # line 100
    path.write_text("".join(lines))
    return path, [10, 100]


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_querylogs_bad_lines_raise_by_default_and_drop_on_request(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    path, bad = log_with_bad_lines(tmp_path)
    out, report = tmp_path / "out.tsv", tmp_path / "report.json"
    args = ["querylogs", "anonymize", path, "-k", "2", "-o", out, "--engine", engine]
    args += ["--report", report, "--no-measures"]
    result = run(*args)
    assert result.exit_code == 2 and not out.exists()
    assert f"file '{path}', line 10)" in result.stderr and "--on-bad-lines drop" in result.stderr
    result = run(*args, "--on-bad-lines", "drop")
    assert result.exit_code == 0, result.output
    told = f"warning: 2 bad line(s) of {path} dropped (--on-bad-lines drop): lines 10, 100"
    assert told in result.stderr
    assert "Bad input lines dropped" in result.stdout  # the summary's flag
    doc = json.loads(report.read_text())
    assert doc["info"]["bad_lines_dropped"] == 2
    assert doc["info"]["input"]["malformed"] == 2 and doc["info"]["input"]["rows"] == 400 - 2
    assert "10" not in json.dumps(doc["info"]["input"])  # no input line number published
    result = run("querylogs", "assess", path, "--json")
    assert result.exit_code == 2 and "line 10)" in result.stderr
    result = run("querylogs", "assess", path, "--json", "--on-bad-lines", "drop")
    assert result.exit_code == 0 and json.loads(result.stdout)["risk"]["malformed_lines"] == 2


@pytest.mark.parametrize("former", ["report", "skip"])
def test_querylogs_former_values_drop_and_tell(tmp_path, former):
    path, _ = log_with_bad_lines(tmp_path)
    out = tmp_path / "out.tsv"
    result = run("querylogs", "anonymize", path, "-k", "2", "-o", out, "--on-bad-lines", former)
    assert result.exit_code == 0, result.output
    assert f"--on-bad-lines {former} is a former value" in result.stderr
    assert "2 bad line(s)" in result.stderr and "lines 10, 100" in result.stderr
    quiet = run(
        "querylogs", "anonymize", path, "-k", "2", "-o", out, "--on-bad-lines", former, "--quiet"
    )
    assert quiet.exit_code == 0 and "2 bad line(s)" in quiet.stderr  # never silent


def fixes_with_bad_lines(tmp_path: Path) -> tuple[Path, int]:
    df = location.synthetic_log(600, 10, seed=6).astype({"lat": object, "time": object})
    df.loc[5, "lat"] = "north"  # line 7
    df.loc[40, "time"] = "yesterday"  # line 42
    path = tmp_path / "fixes.csv"
    df.to_csv(path, index=False)
    return path, len(df)


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_location_bad_lines_raise_by_default_and_drop_on_request(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    path, n = fixes_with_bad_lines(tmp_path)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    args = ["location", "anonymize", path, "-k", "1", "-o", out, "--engine", engine]
    args += ["--report", report, "--no-measures"]
    result = run(*args)
    assert result.exit_code == 2 and not out.exists()
    assert f"file '{path}'" in result.stderr and "line 7, value 'north')" in result.stderr
    assert "--on-bad-lines drop" in result.stderr and "on_bad_lines=" not in result.stderr
    for spelling in (["--on-bad-lines", "drop"], ["--drop-invalid"]):
        out.unlink(missing_ok=True)  # the Dask engine never overwrites an output
        result = run(*args, *spelling)
        assert result.exit_code == 0, result.output
        assert (
            f"warning: 2 bad line(s) of {path} dropped (--on-bad-lines drop): lines 7, 42"
            in result.stderr
        )
        doc = json.loads(report.read_text())
        assert doc["info"]["bad_lines_dropped"] == doc["info"]["invalid_fixes_dropped"] == 2
        assert doc["n_individuals"] == n and doc["suppressed"] == 2  # k = 1: only the bad
        assert len(pd.read_csv(out)) == n - 2
    assert "--drop-invalid is the former name" in result.stderr
    result = run(*args, "--drop-invalid", "--on-bad-lines", "raise")
    assert result.exit_code == 2 and "contradicts" in result.stderr
    result = run("location", "assess", path, "--json")
    assert result.exit_code == 2 and "line 7, value 'north')" in result.stderr
    result = run("location", "assess", path, "--json", "--on-bad-lines", "drop")
    assert result.exit_code == 0 and "lines 7, 42" in result.stderr
    assert json.loads(result.stdout)["risk"]["invalid_fixes_dropped"] == 2


def test_location_python_api_takes_on_bad_lines_and_its_former_name():
    df = location.synthetic_log(300, 8, seed=1).astype({"lat": object})
    df.loc[3, "lat"] = "north"
    with pytest.raises(ValueError, match="on_bad_lines='drop'"):
        location.cloak(df, 1)
    dropped = location.cloak(df, 1, on_bad_lines="drop", measures=False)
    with pytest.warns(DeprecationWarning, match="drop_invalid=True is the former spelling"):
        former = location.cloak(df, 1, drop_invalid=True, measures=False)
    assert dropped.info["bad_lines_dropped"] == former.info["bad_lines_dropped"] == 1
    with pytest.raises(ValueError, match="contradicts"):
        location.cloak(df, 1, on_bad_lines="drop", drop_invalid=False)
    with pytest.raises(ValueError, match="on_bad_lines must be one of 'raise', 'drop'"):
        location.cloak(df, 1, on_bad_lines="skip")


def test_dask_readers_name_an_undecodable_line_far_into_the_file(tmp_path):
    """The Dask readers cut a text file into blocks that know no line numbers: a byte that
    does not decode in a later block is still named by its file line and byte."""
    pytest.importorskip("dask.dataframe")
    import tabular
    from structanon.errors import InputError

    df = location.synthetic_log(20_000, 30, seed=3).astype({"user": str})
    df.loc[15_000, "user"] = "Zoë"
    path = tmp_path / "fixes.csv"
    df.to_csv(path, index=False, encoding=LATIN)
    line, byte = first_high_byte(path)
    assert line == 15_002
    columns = ["user", "time", "lat", "lon"]
    for read in (
        lambda **kw: location.read_fixes_dask(path, columns, blocksize="256kB", **kw),
        lambda **kw: tabular.read_microdata_dask(path, blocksize="256kB", **kw),
    ):
        with pytest.raises(InputError, match=f"byte {byte}") as info:
            read()
        assert info.value.line == line and info.value.path == str(path)
        lazy = read(encoding=LATIN)
        assert (lazy["user"] == "Zoë").sum().compute() == 1


@pytest.mark.parametrize(
    "package, args",
    [
        ("tabular", ["assess", "--sep", ";", "--qi", "a"]),
        ("location", ["assess"]),
    ],
)
def test_an_unclosed_quote_names_the_line_it_opens(tmp_path, package, args):
    """pandas reports a row of the table (a quoted line break joins two lines into one
    row) for a quote that is never closed; the error names the file line it opens on."""
    if package == "tabular":
        lines = ["a;b", '1;"x', 'y"', "3;4", '"5;6', "7;8"]
    else:
        lines = [
            "user,time,lat,lon",
            'u1,2024-01-01 10:00,"39.9,116.3',
            "u2,2024-01-01 10:05,39.9,116.3",
        ]
    path = tmp_path / "in.csv"
    path.write_text("\n".join(lines) + "\n")
    result = run(package, args[0], path, *args[1:])
    assert result.exit_code == 2, result.output
    opened = next(i for i, line in enumerate(lines, 1) if line.startswith('"') or ',"' in line)
    assert f"line {opened})" in result.output
    assert "never closed" in result.output
    assert "Traceback" not in result.output
