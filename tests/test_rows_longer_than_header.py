"""A data line with one field more than the header is refused, naming the line.

pandas takes the first field of every line as a row label when the first data line has
one field more than the header (a trailing separator on the data lines only, or a stray
value): every column then holds its right-hand neighbour's values and the first column is
lost.  tabular published such shifted tables with exit 0 (a PRAM of ``race`` randomized
marital status under that name), and transactions read the tid from the item column (the
items lost, uncounted).  Every reader now exits 2 naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from structanon.cli import main

ROWS = ["M,w,30", "F,b,31", "M,w,32", "F,b,33", "M,b,34", "F,w,35"]


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused_at(result, path: Path, line: int) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    said = "more" in result.stderr and "than the header" in result.stderr
    assert said or f"fields in line {line}, saw" in result.stderr, result.stderr  # the parser's
    assert f"file '{path}'" in result.stderr and f"line {line})" in result.stderr


@pytest.mark.parametrize("engine", ["pandas", "dask"])
@pytest.mark.parametrize(
    ("lines", "line"),
    [
        ([row + "," for row in ROWS], 2),  # a trailing separator on the data lines only
        ([ROWS[0] + ",x"] + ROWS[1:], 2),  # one stray value on the first data line
        (ROWS[:3] + [ROWS[3] + ",x"] + ROWS[4:], 5),  # ... or further down
        (['"M",w,30,'] + [row + "," for row in ROWS[1:]], 2),  # quoted: found after parsing
    ],
)
def test_tabular_refuses_a_line_longer_than_the_header(tmp_path, engine, lines, line):
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    source, out = tmp_path / "t.csv", tmp_path / "out.csv"
    source.write_text("sex,race,age\n" + "\n".join(lines) + "\n")
    result = run(
        "tabular", "anonymize", source, "--qi", "race", "--set-qi", "race",
        "--algorithm", "mondrian", "-k", "2", "-o", out, "--engine", engine,
    )  # fmt: skip
    refused_at(result, source, line)
    assert not out.exists()


def test_tabular_still_reads_a_trailing_separator_on_every_line(tmp_path):
    source, out = tmp_path / "t.csv", tmp_path / "out.csv"
    source.write_text("sex,race,age,\n" + "\n".join(row + "," for row in ROWS) + "\n")
    result = run(
        "tabular", "pram", source, "--columns", "race", "--keep", "1", "-o", out, "--quiet"
    )
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines[0] == "sex,race,age" and sorted(lines[1:]) == sorted(ROWS)


def test_transactions_refuses_a_long_csv_line_longer_than_the_header(tmp_path):
    source, out = tmp_path / "t.csv", tmp_path / "out.csv"
    source.write_text("tid,item\n1,a,x\n1,b,y\n2,c,z\n2,a,z\n")
    result = run("transactions", "anonymize", source, "-k", "1", "-o", out)
    refused_at(result, source, 2)
    assert not out.exists()


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_querylogs_refuses_a_csv_line_longer_than_the_header(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    source, out = tmp_path / "log.csv", tmp_path / "out.tsv"
    rows = [f"{u},q{u % 3},2006-03-01 10:0{u}:00,," for u in range(6)]
    source.write_text("user,query,time\n" + "\n".join(rows) + "\n")
    result = run(
        "querylogs", "anonymize", source, "--format", "csv", "-k", "1", "-o", out,
        "--engine", engine,
    )  # fmt: skip
    refused_at(result, source, 2)


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_location_refuses_a_line_longer_than_the_header(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    source, out = tmp_path / "fixes.csv", tmp_path / "out.csv"
    rows = [f"u{i},2024-01-01T10:00:00,40.0,116.{i}," for i in range(6)]
    source.write_text("user,time,lat,lon\n" + "\n".join(rows) + "\n")
    result = run("location", "anonymize", source, "-k", "2", "-o", out, "--engine", engine)
    refused_at(result, source, 2)
