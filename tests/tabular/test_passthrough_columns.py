"""Columns a tabular command does not transform are published exactly as written.

ZIP codes keep their leading zeros, 20-digit ids stay distinct and exact (the Dask engine
never wraps them to negative numbers), ``TRUE`` stays ``TRUE``, ``0.10`` stays ``0.10``,
an integer column with a blank cell is not turned into floats, and the text values
``NA``, ``null``, ``None``, ``#N/A`` are not published as empty cells.  The columns a
command works on are typed as before.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import tabular.io as tab_io
from structanon import InputError
from tabular.cli import cli

PASS = ["zip", "big", "flag", "price", "count", "note"]
N = 40
NOTES = ["NA", "null", "None", "#N/A", "N/A", "nan", "n/a", "NULL"]


def _text(path: Path, sep: str = ",") -> pd.DataFrame:
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("passthrough")
    rows = ["sex,age,zip,big,flag,price,count,note"]
    for i in range(N):
        count = "" if i == 3 else str(i % 7)
        rows.append(
            f"{'Male' if i % 2 else 'Female'},{20 + i},{1000 + i:05d},"
            f"{12345678901234567890 + i},{'TRUE' if i % 3 else 'FALSE'},{i}.10,"
            f"{count},{NOTES[i % len(NOTES)]}"
        )
    path = folder / "in.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def _same_passthrough(source: Path, release: pd.DataFrame, columns=PASS) -> None:
    expected = _text(source)
    assert len(release) == len(expected)  # nothing suppressed
    for column in columns:
        assert sorted(release[column]) == sorted(expected[column]), column


def _invoke(*args: object) -> None:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output


ANON = ["--qi", "sex,age", "--set-qi", "sex", "--numeric", "age", "-k", "2", "--quiet"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_mondrian_pandas_keeps_passthrough_columns(source, tmp_path, suffix):
    out = tmp_path / f"a{suffix}"
    _invoke("anonymize", source, "-o", out, *ANON, "--algorithm", "mondrian")
    if suffix == ".csv":
        release = _text(out)
    else:
        release = pd.read_parquet(out)
        release = release.astype({c: object for c in PASS}).fillna("")
    _same_passthrough(source, release)


def test_optimal_keeps_passthrough_columns(source, tmp_path):
    (tmp_path / "hierarchy_sex.csv").write_text("Male;*\nFemale;*\n")
    ages = "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 20 + N))
    (tmp_path / "hierarchy_age.csv").write_text(ages)
    out = tmp_path / "a.csv"
    _invoke("anonymize", source, "-o", out, "--qi", "sex,age", "--hierarchy-dir", tmp_path,
            "-k", "2", "--quiet")  # fmt: skip
    _same_passthrough(source, _text(out))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_mondrian_dask_keeps_passthrough_columns(source, tmp_path, suffix, client):
    pytest.importorskip("dask.dataframe")
    out = tmp_path / f"a{suffix}"
    _invoke(
        "anonymize", source, "-o", out, *ANON, "--algorithm", "mondrian",
        "--engine", "dask", "--scheduler", client.scheduler.address,
    )  # fmt: skip
    if suffix == ".csv":
        release = _text(out)
    else:
        release = pd.read_parquet(out)
        release = release.astype({c: object for c in PASS}).fillna("")
    _same_passthrough(source, release)


def test_microaggregate_and_noise_keep_passthrough_columns(source, tmp_path):
    for command, extra in (("microaggregate", ["-k", "3"]), ("noise", ["--alpha", "0.2"])):
        out = tmp_path / f"{command}.csv"
        _invoke(command, source, "--columns", "age", *extra, "-o", out, "--quiet")
        _same_passthrough(source, _text(out))


def test_typed_columns_still_read_missing_value_tokens(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,NA\nNA,null\n3,x\n")
    df = tab_io.read_microdata(path, typed=["a"])
    assert df["a"].isna().tolist() == [False, True, False]
    assert df["b"].tolist() == ["NA", "null", "x"]
    assert df["a"].dtype == float
    # the library default types every column, as before
    assert tab_io.read_microdata(path)["b"].isna().tolist() == [True, True, False]


def test_dask_refuses_integers_beyond_int64_in_a_typed_column(tmp_path):
    pytest.importorskip("dask.dataframe")
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n12345678901234567890,y\n")
    with pytest.raises(InputError) as info:
        tab_io.read_microdata_dask(path, typed=["a"])
    assert info.value.column == "a" and info.value.line == 3
    assert "64-bit" in str(info.value)
    df = tab_io.read_microdata_dask(path, typed=["b"]).compute()
    assert df["a"].tolist() == ["1", "12345678901234567890"]


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_header_line_repeated_mid_file_is_refused_with_its_line(tmp_path, engine):
    """Two exports concatenated: the second header was published as a record (sex="sex",
    race="race") where no hierarchy or number check met it."""
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    rows = ["sex,race,zip"] + [f"{'MF'[i % 2]},{'wb'[i % 3 % 2]},{i:03d}" for i in range(8)]
    source = tmp_path / "joined.csv"
    out = tmp_path / "out.csv"
    for again in ("sex,race,zip", '"sex","race","zip"'):  # as written, or quoted
        source.write_text("\n".join(rows[:5] + [again] + rows[5:]) + "\n")  # line 6
        result = CliRunner().invoke(
            cli,
            ["anonymize", str(source), "--qi", "sex,race", "--set-qi", "sex,race"]
            + ["--algorithm", "mondrian", "-k", "2", "-o", str(out), "--engine", engine],
        )
        assert result.exit_code == 2, result.output
        assert "header line is repeated" in result.output and "line 6" in result.output
        assert not out.exists()
    # a value equal to its column's name in one column only is data
    source.write_text("\n".join(rows + ["sex,w,100", "M,race,101"]) + "\n")
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(source), "--qi", "sex,race", "--set-qi", "sex,race"]
        + ["--algorithm", "mondrian", "-k", "2", "-o", str(out), "--engine", engine],
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_trailing_separator_adds_no_column(tmp_path, engine):
    """``a,b,c,`` on every line: pandas names the empty last column "Unnamed: 3", and the
    release published it (both engines).  A column without a name and without values is
    left out (nothing is lost); one without a name that holds values is refused, naming
    its position, even when only one line holds a value there."""
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    source = tmp_path / "trailing.csv"
    rows = ["sex,race,zip,"] + [f"{'MF'[i % 2]},{'wb'[i % 3 % 2]},{i:03d}," for i in range(8)]
    source.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.csv"
    args = ["anonymize", str(source), "--qi", "sex,race", "--set-qi", "sex,race"]
    args += ["--algorithm", "mondrian", "-k", "2", "-o", str(out), "--engine", engine]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert _text(out).columns.tolist() == ["sex", "race", "zip"]
    assert sorted(_text(out)["zip"]) == [f"{i:03d}" for i in range(8)]
    out.unlink()
    source.write_text("\n".join(rows[:4] + ["M,w,100,oops"] + rows[4:]) + "\n")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "column 4 has no name" in result.output
    assert not out.exists()
    source.write_text("sex,race,,zip\n" + "\n".join(f"M,w,{i},{i:03d}" for i in range(8)) + "\n")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "column 3 has no name" in result.output


def test_excel_separator_line_is_named(tmp_path):
    source = tmp_path / "excel.csv"
    source.write_text("sep=;\nsex;race\nM;w\nF;b\n")
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(source), "--qi", "sex", "--set-qi", "sex", "--sep", ";"]
        + ["--algorithm", "mondrian", "-k", "1", "-o", str(tmp_path / "o.csv")],
    )
    assert result.exit_code == 2
    assert "separator line ('sep=;'" in result.output and "line 1" in result.output
