"""The lazy reader of ``querylogs anonymize --engine dask``: read_log's rules per partition."""

import gzip
import tempfile
import warnings

import pandas as pd
import pytest
from click.testing import CliRunner

import querylogs
from querylogs import _dask, read_log, read_log_dask, write_log
from querylogs.cli import cli
from structanon.errors import InputError

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

HEADER = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"


@pytest.fixture(scope="module")
def aol(tmp_path_factory):
    """An AOL file with a header, blank lines, malformed lines and a CRLF line end."""
    path = tmp_path_factory.mktemp("aol") / "log.txt"
    write_log(querylogs.synthetic_log(40, 1200, seed=3), path, aol=True)
    lines = path.read_bytes().split(b"\n")
    lines[10] = b"17\tno time here\tyesterday\t\t"  # unparsable time
    lines[200] = b"only\ttwo"  # wrong number of fields
    lines[300] = b""  # blank
    lines[500] = lines[500] + b"\r"  # a Windows line end
    path.write_bytes(b"\n".join(lines))
    return path


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def same_log(lazy, eager):
    got = lazy.compute().reset_index(drop=True)
    got = got.astype({c: object for c in ("user", "query", "url")})
    pd.testing.assert_frame_equal(
        got.where(got.notna(), None), eager.where(eager.notna(), None), check_dtype=False
    )


COUNTS = ("lines", "rows", "malformed", "blank_lines", "header")


@pytest.mark.parametrize("block", [None, 20_000, 7_000])
def test_blocks_read_as_the_pandas_reader(client, aol, block):
    eager = quiet(read_log, aol, on_bad_lines="drop")
    lazy, report = quiet(read_log_dask, aol, block_bytes=block, on_bad_lines="drop")
    if block:
        assert lazy.npartitions > 3
    same_log(lazy, eager)
    # the parse pass's row counts are kept for the event pass (no second counting pass)
    counts = [len(part) for part in dask.compute(*lazy.to_delayed())]
    assert _dask._KNOWN_LENGTHS[str(lazy._name)] == counts
    want = eager.attrs["parse"]
    assert {n: report[n] for n in COUNTS} == {n: want[n] for n in COUNTS}
    assert report["malformed_lines"] == want["malformed_lines"]  # file line numbers


def test_bad_line_raises_naming_file_and_line(client, aol):
    with pytest.raises(InputError) as eager:
        read_log(aol, on_bad_lines="raise")
    with pytest.raises(InputError) as caught:
        quiet(read_log_dask, aol, on_bad_lines="raise", block_bytes=9_000)
    assert caught.value.line == eager.value.line == 11  # the line read_log names
    assert str(aol) in str(caught.value) and "time is not a date-time" in str(caught.value)
    with pytest.raises(InputError) as default:  # raise is the default
        quiet(read_log_dask, aol, block_bytes=9_000)
    assert default.value.line == 11 and "--on-bad-lines drop" in str(default.value)
    with pytest.warns(UserWarning, match="2 malformed line.s. dropped .lines 11, 201"):
        read_log_dask(aol, block_bytes=9_000, on_bad_lines="drop")


@pytest.mark.parametrize("block", [None, 9_000])
def test_undecodable_line_named_by_its_file_line(client, aol, tmp_path, block):
    """A byte that does not decode, in a block far into the file, is named by its file
    line (as read_log names it), with the byte; the right encoding reads the log."""
    lines = aol.read_bytes().split(b"\n")
    lines[400] = lines[400].replace(b"\t", b"\tcaf\xe9 ", 1)
    path = tmp_path / "latin.txt"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(InputError) as eager:
        read_log(path, on_bad_lines="drop")
    with pytest.raises(InputError) as caught:
        read_log_dask(path, block_bytes=block, on_bad_lines="drop")
    assert caught.value.line == eager.value.line == 401
    assert caught.value.path == str(path) and "byte 0xe9" in caught.value.message
    assert "--encoding" in caught.value.message
    lazy, _ = quiet(read_log_dask, path, block_bytes=block, on_bad_lines="drop", encoding="latin-1")
    want = quiet(read_log, path, on_bad_lines="drop", encoding="latin-1")
    same_log(lazy, want)
    assert want["query"].str.startswith("caf\u00e9 ").sum() == 1


def test_globs_folders_and_gzip(client, aol, tmp_path):
    text = aol.read_bytes()
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(text))
    (tmp_path / "b.txt").write_bytes(text)
    lazy, report = quiet(read_log_dask, tmp_path / "*.txt*", on_bad_lines="drop")
    eager = quiet(read_log, aol, on_bad_lines="drop")
    assert report["files"] == 2 and report["rows"] == 2 * len(eager)
    assert len(lazy.compute()) == 2 * len(eager)
    # with two files, a listed line names its file; the files in order
    assert report["malformed_lines"] == [
        (11, "a.txt.gz: time is not a date-time"),
        (201, "a.txt.gz: 2 tab-separated fields, expected 5"),
        (11, "b.txt: time is not a date-time"),
        (201, "b.txt: 2 tab-separated fields, expected 5"),
    ]
    with pytest.raises(InputError) as info:
        quiet(read_log_dask, tmp_path / "*.txt*")
    assert info.value.path == str(tmp_path / "a.txt.gz") and info.value.line == 11
    folder, _ = quiet(read_log_dask, tmp_path, on_bad_lines="drop")
    assert len(folder.compute()) == 2 * len(eager)
    with pytest.raises(InputError, match="no log file matches"):
        read_log_dask(tmp_path / "*.nothing")


def test_parquet_and_csv(client, tmp_path):
    log = querylogs.synthetic_log(30, 900, seed=5)
    folder = tmp_path / "parts"
    folder.mkdir()
    log.iloc[:400].to_parquet(folder / "part.0.parquet")
    log.iloc[400:].to_parquet(folder / "part.1.parquet")
    lazy, report = read_log_dask(folder, "parquet")
    assert lazy.npartitions == 2 and report["rows"] == len(log)
    same_log(
        lazy,
        read_log(folder / "part.0.parquet", "parquet").pipe(
            lambda first: pd.concat(
                [first, read_log(folder / "part.1.parquet", "parquet")], ignore_index=True
            )
        ),
    )
    csv = tmp_path / "log.csv"
    log.rename(columns={"user": "uid"}).to_csv(csv, index=False)
    lazy, report = read_log_dask(csv, "csv", columns={"user": "uid"})
    same_log(lazy, read_log(csv, "csv", columns={"user": "uid"}))
    with pytest.raises(InputError, match="required column"):
        read_log_dask(csv, "csv")


def test_empty_and_mostly_malformed_inputs(client, tmp_path):
    empty, header, garbage = tmp_path / "e.txt", tmp_path / "h.txt", tmp_path / "g.txt"
    empty.write_text("")
    header.write_text(HEADER)
    garbage.write_text("this is\nnot a log\nat all\n")
    with pytest.raises(InputError, match="empty"):
        read_log_dask(empty)
    with pytest.raises(InputError, match="header but no data"):
        read_log_dask(header)
    with pytest.raises(InputError, match="wrong --format"):
        read_log_dask(garbage)
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(InputError, match="binary"):
        read_log_dask(binary)


def test_cli_dask_reads_lazily_with_the_pandas_rules(aol, tmp_path):
    pytest.importorskip("distributed")
    key = tmp_path / "key.txt"
    key.write_text("cli-reader-key-0123456789")
    runner = CliRunner()
    common = ["-k", "3", "--seed", "1", "--key-file", str(key), "--no-measures"]
    raised = runner.invoke(
        cli,
        ["anonymize", str(aol), "-o", str(tmp_path / "r.tsv"), *common, "--engine", "dask"],
    )
    assert raised.exit_code == 2 and "line 11" in raised.output  # raise: the default
    assert "--on-bad-lines drop" in raised.output
    common += ["--on-bad-lines", "drop"]
    eager = runner.invoke(cli, ["anonymize", str(aol), "-o", str(tmp_path / "p.tsv"), *common])
    lazy = runner.invoke(
        cli,
        ["anonymize", str(aol), "-o", str(tmp_path / "d.tsv"), *common, "--engine", "dask"],
    )
    assert eager.exit_code == 0 and lazy.exit_code == 0, lazy.output
    assert (tmp_path / "d.tsv").read_bytes() == (tmp_path / "p.tsv").read_bytes()
    # the same message about the bad lines on both engines
    told = [line for line in eager.output.splitlines() if "bad line(s)" in line]
    assert told == [f"warning: 2 bad line(s) of {aol} dropped (--on-bad-lines drop): lines 11, 201"]
    assert told == [line for line in lazy.output.splitlines() if "bad line(s)" in line]
    assert not (tmp_path / "r.tsv").exists()
    folder = tmp_path / "out.parquet"
    made = runner.invoke(
        cli, ["anonymize", str(aol), "-o", str(folder), *common, "--engine", "dask"]
    )
    assert made.exit_code == 0, made.output
    back = pd.read_parquet(folder)
    assert len(back) == len(pd.read_csv(tmp_path / "p.tsv", sep="\t"))
    again = runner.invoke(
        cli, ["anonymize", str(aol), "-o", str(folder), *common, "--engine", "dask"]
    )
    assert again.exit_code == 2 and "out.parquet" in again.output  # refused, named
    missing = runner.invoke(
        cli, ["anonymize", str(tmp_path / "nope.txt"), "-o", "x.tsv", "-k", "3"]
    )
    assert missing.exit_code == 2


def test_spooled_log_is_parsed_once(client, aol, tmp_path, monkeypatch):
    # the parse-report pass keeps the parsed partitions as Parquet; computing the log
    # again reads them, not the text
    from querylogs import io as qio

    marks = tmp_path / "calls.txt"  # the tasks are pickled: counted in a file
    marks.touch()
    read_piece = qio._read_piece

    def counted(*args):
        with open(marks, "a") as fh:
            fh.write("x")
        return read_piece(*args)

    monkeypatch.setattr(qio, "_read_piece", counted)
    spool = tmp_path / "spool"
    spool.mkdir()
    lazy, report = quiet(read_log_dask, aol, block_bytes=9_000, spool=spool, on_bad_lines="drop")
    plain, _ = quiet(read_log_dask, aol, block_bytes=9_000, on_bad_lines="drop")
    n_blocks = len(marks.read_text()) // 2
    assert n_blocks > 2 and len(marks.read_text()) == 2 * n_blocks
    for _ in range(2):
        got = lazy.compute().reset_index(drop=True)
    assert len(marks.read_text()) == 2 * n_blocks  # the spooled log parsed no text again
    want = plain.compute().reset_index(drop=True)
    assert len(got) == len(want) == report["rows"] and lazy.npartitions == n_blocks
    for column in ("user", "query", "url"):
        assert got[column].astype(object).where(got[column].notna(), None).tolist() == (
            want[column].astype(object).where(want[column].notna(), None).tolist()
        )
    assert (got["time"].to_numpy() == want["time"].to_numpy()).all()
    with pytest.raises(InputError, match="spool folder"):
        read_log_dask(aol, spool=tmp_path / "nowhere")
    with pytest.raises(InputError, match="spool must be a folder path"):
        read_log_dask(aol, spool=5)


def test_cli_dask_spool_is_removed(aol, tmp_path, monkeypatch):
    spool_root = tmp_path / "tmp"
    spool_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool_root))
    key = tmp_path / "key.txt"
    key.write_text("cli-reader-key-0123456789")
    common = ["-k", "3", "--seed", "1", "--key-file", str(key), "--no-measures", "--quiet"]
    common += ["--on-bad-lines", "drop"]
    runner = CliRunner()
    eager = runner.invoke(cli, ["anonymize", str(aol), "-o", str(tmp_path / "p.tsv"), *common])
    lazy = runner.invoke(
        cli, ["anonymize", str(aol), "-o", str(tmp_path / "d.tsv"), *common, "--engine", "dask"]
    )
    assert eager.exit_code == 0 and lazy.exit_code == 0, lazy.output
    assert (tmp_path / "d.tsv").read_bytes() == (tmp_path / "p.tsv").read_bytes()
    assert not list(spool_root.glob("structanon-querylogs-*"))  # the spool, removed


def test_a_lone_carriage_return_in_a_block_names_its_byte(tmp_path):
    """Plain AOL files are cut into blocks read apart: a lone CR in one is refused too."""
    path = tmp_path / "log.txt"
    write_log(querylogs.synthetic_log(40, 2000, seed=3), path, aol=True)
    data = path.read_bytes()
    at = data.index(b"\n", len(data) // 2)
    path.write_bytes(data[:at] + b"\r" + data[at + 1 :])
    with pytest.raises(InputError, match="line ends") as info:  # the parse-report pass
        read_log_dask(path, block_bytes=4096)
    assert f"at byte {at:,}" in str(info.value)


def test_times_with_offsets_and_a_byte_order_mark_read_as_the_pandas_reader(client, tmp_path):
    lines = [f"{i % 7}\tquery {i}\t2006-03-01 10:{i % 60:02d}:00\t\t" for i in range(400)]
    lines[250] = "3\tquery 250\t2006-03-01T12:10:00+02:00\t1\thttp://a.com"
    path = tmp_path / "log.txt"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER + "\n".join(lines) + "\n").encode())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eager = read_log(path, on_bad_lines="raise")
        lazy, report = read_log_dask(path, on_bad_lines="raise", block_bytes=4_000)
        assert lazy.npartitions > 2
        same_log(lazy, eager)
    assert report["malformed"] == 0 and report["header"] and report["rows"] == 400
    assert eager["time"].iloc[250] == pd.Timestamp("2006-03-01 10:10")
    assert (eager["time"].dt.hour == 10).all()
