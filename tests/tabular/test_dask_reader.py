"""The lazy reader of ``structanon tabular anonymize --engine dask``: pandas' parsing rules."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from structanon.errors import InputError
from tabular.cli import cli
from tabular.io import read_microdata, read_microdata_dask

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

KEY_HEX = "00112233445566778899aabbccddeeff"
ARGS = ["--qi", "age,hours,sex,edu", "--numeric", "age,hours", "--set-qi", "sex,edu"]
ARGS += ["--algorithm", "mondrian", "-k", "5", "--quiet"]


@pytest.fixture(scope="module", autouse=True)
def synchronous():
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n = 1200
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, n),
            "hours": rng.integers(1, 99, n),
            "sex": rng.choice(["F", "M"], n),
            "edu": rng.choice(["HS", "BA", "MA", "PhD"], n),
            "zip": rng.choice(["00123", "04567", "NA", ""], n),  # NA tokens, leading zeros
            "score": rng.normal(size=n).round(4),
            "flag": rng.choice(["True", "False"], n),
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory, table) -> Path:
    folder = tmp_path_factory.mktemp("dask_reader")
    table.to_csv(folder / "whole.csv", index=False)
    table.iloc[:500].to_csv(folder / "part-1.csv", index=False)
    table.iloc[500:].to_csv(folder / "part-2.csv", index=False)
    (folder / "pq").mkdir()
    table.iloc[:700].to_parquet(folder / "pq" / "a.parquet", index=False)
    table.iloc[700:].to_parquet(folder / "pq" / "b.parquet", index=False)
    table.to_parquet(folder / "whole.parquet", index=False)
    (folder / "key.txt").write_text(KEY_HEX)
    return folder


def test_text_columns_get_the_types_pandas_gives_the_whole_file(files):
    want = read_microdata(files / "whole.csv")
    # small blocks: partitions that alone would be typed differently (zip: numbers or NaN)
    got = read_microdata_dask(files / "whole.csv", blocksize=4000)
    assert got.npartitions > 3
    frame = got.compute().reset_index(drop=True)
    assert frame.dtypes.to_dict() == want.dtypes.to_dict()
    pd.testing.assert_frame_equal(frame, want)


def test_glob_and_parquet_folder_read_like_pandas(files):
    want = read_microdata(files / "whole.csv")
    glob = read_microdata_dask(str(files / "part-*.csv")).compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(glob, want)
    folder = read_microdata_dask(files / "pq").compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(folder, read_microdata(files / "whole.parquet"))


def test_bad_inputs_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n" + "1,2\n" * 3000 + "1,2,3\n4,5\n")
    with pytest.raises(InputError) as lazy:
        read_microdata_dask(bad, blocksize=5000)
    with pytest.raises(InputError) as eager:
        read_microdata(bad)
    assert lazy.value.line == eager.value.line == 3002
    assert lazy.value.path == str(bad)
    (tmp_path / "h.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="no data rows"):
        read_microdata_dask(tmp_path / "h.csv")
    (tmp_path / "semi.csv").write_text("a;b\n1;2\n")
    with pytest.raises(InputError, match="wrong --sep"):
        read_microdata_dask(tmp_path / "semi.csv", columns=["b"])
    with pytest.raises(InputError, match="matches no file"):
        read_microdata_dask(str(tmp_path / "none-*.csv"))
    (tmp_path / "other.csv").write_text("a,c\n1,2\n")
    with pytest.raises(InputError, match="header differs"):
        read_microdata_dask(str(tmp_path / "[bo]*.csv"))
    (tmp_path / "dup.csv").write_text("a,b,a\n1,2,3\n")
    with pytest.raises(InputError, match="names this column twice") as twice:
        read_microdata_dask(tmp_path / "dup.csv")
    assert twice.value.column == "a" and twice.value.path == str(tmp_path / "dup.csv")


@pytest.mark.parametrize(
    ("line", "message"), [("1,Ly\x00on", "NUL byte"), ("1", "fewer fields than the header")]
)
@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz"])
def test_lines_a_parsed_partition_would_hide_are_named_like_pandas(tmp_path, line, message, name):
    import gzip

    text = ("a,b\n" + "1,2\n" * 3000 + line + "\n" + "3,4\n" * 10).encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    with pytest.raises(InputError, match=message) as lazy:
        read_microdata_dask(path, blocksize=5000)  # the line is in a later block
    with pytest.raises(InputError, match=message) as eager:
        read_microdata(path)
    assert lazy.value.line == eager.value.line == 3002 and lazy.value.path == str(path)


def _published(path: Path) -> Counter:
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    return Counter(map(tuple, df.to_numpy().tolist()))


def _anonymize(args: list) -> None:
    result = CliRunner().invoke(cli, ["anonymize", *map(str, args)], catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_cli_dask_engine_reads_lazily_and_publishes_the_pandas_rows(files, tmp_path):
    key = ["--key-file", files / "key.txt"]
    for whole, source in (("whole.csv", str(files / "part-*.csv")), ("whole.parquet", "pq")):
        _anonymize([files / whole, "-o", tmp_path / "p.csv", *ARGS, *key])
        out = tmp_path / "d.csv"
        lazy = [files / source, "-o", out, *ARGS, *key, "--engine", "dask", "--workers", "1"]
        _anonymize(lazy)
        assert _published(out) == _published(tmp_path / "p.csv"), source


def test_cli_dask_engine_bad_line_exits_2_naming_the_file(files, tmp_path):
    bad = tmp_path / "in.csv"
    bad.write_text("age,hours,sex,edu\n30,40,F,HS\n31,41,M,BA,extra\n")
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(bad), "-o", str(tmp_path / "o.csv"), *ARGS, "--engine", "dask"],
    )
    assert result.exit_code == 2
    assert "line 3" in result.output and "in.csv" in result.output
    assert "Traceback" not in result.output


def test_a_separator_of_several_characters_is_refused_on_dask(tmp_path):
    """The pandas engine takes ' | ' literally; the Dask reader takes one character only
    and says so rather than splitting at a regular expression."""
    path = tmp_path / "pipes.csv"
    path.write_text("sex | age\nM | 56\nF | 31\n")
    with pytest.raises(InputError, match="one-character"):
        read_microdata_dask(path, sep=" | ")
    assert list(read_microdata(path, sep=" | ").columns) == ["sex", "age"]


@pytest.mark.parametrize(("bad", "shown"), [("?", "value '?'"), ("", None), ("inf", None)])
def test_a_bad_value_found_on_dask_names_its_file_and_line(tmp_path, bad, shown):
    """The Dask engine finds a bad numeric value in its aggregates (which hold no row): the
    command names the file and line as the pandas engine does."""
    folder = tmp_path / "parts"
    folder.mkdir()
    rows = [f"{'F' if i % 2 else 'M'},{20 + i % 50}" for i in range(400)]
    (folder / "a.csv").write_text("sex,age\n" + "\n".join(rows) + "\n")
    rows[123] = f"M,{bad}"
    (folder / "b.csv").write_text("sex,age\n" + "\n".join(rows) + "\n")
    args = ["anonymize", str(folder / "*.csv"), "--qi", "sex,age", "--set-qi", "sex"]
    args += ["--numeric", "age", "--algorithm", "mondrian", "-k", "2", "--quiet"]
    for engine in ("pandas", "dask"):
        if engine == "pandas":
            source = folder / "b.csv"
            run = [*args[:1], str(source), *args[2:]]
        else:
            run = [*args, "--engine", "dask"]
        result = CliRunner().invoke(cli, [*run, "-o", str(tmp_path / f"{engine}.csv")])
        assert result.exit_code == 2, result.output
        assert f"file '{folder / 'b.csv'}'" in result.output and "line 125" in result.output
        assert "np.float64" not in result.output
        if shown is not None:
            assert shown in result.output, result.output
