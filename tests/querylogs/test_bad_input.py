"""Bad input and impossible requests: a clear error (exit 2) or a verified release, never a
traceback, and nothing written unless everything is."""

import gzip
import hashlib
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from querylogs import anonymize, read_log, synthetic_log, write_log
from querylogs.cli import cli
from structanon.errors import InfeasibleError, InputError

HEADER = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "log.tsv"
    write_log(synthetic_log(30, 1500, seed=5), path, aol=True)
    return path


def run(*args):
    result = CliRunner().invoke(cli, ["anonymize", *map(str, args)])
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.output
    return result


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def disjoint_log(n_users):
    return pd.DataFrame(
        {
            "user": [f"u{i}" for i in range(n_users)],
            "query": [f"only mine {i}" for i in range(n_users)],
            "time": pd.to_datetime(["2006-03-01 10:00"] * n_users),
        }
    )


@pytest.mark.parametrize("n_users, k", [(4, 2), (7, 4), (7, 7)])
def test_nothing_to_publish_is_infeasible(n_users, k):
    """Users sharing no query (four users at k=2, or k above half the users): every user
    would be suppressed. Like location and tabular, that is an infeasible request, not an
    empty release."""
    with pytest.raises(InfeasibleError, match=f"every one of the {n_users} users"):
        anonymize(disjoint_log(n_users), k, seed=0)


def test_nothing_to_publish_from_the_command_line(tmp_path):
    path, out = tmp_path / "log.tsv", tmp_path / "anon.tsv"
    write_log(disjoint_log(4), path, aol=True)
    result = run(path, "-k", 2, "-o", out, "--no-measures")
    assert result.exit_code == 3 and "nothing can be published" in result.output
    assert not out.exists()


def test_aol_sample_at_k_above_half_the_users(h, tmp_path):
    """k above half the users: one cluster at most, sharing no query here, so nothing
    can be published (exit 3, no output); the request never crashes."""
    path = h.shared_file("aol/aol_raw_sample_20k.tsv")
    out = tmp_path / "x.tsv"
    for k in (65, 128):
        result = run(path, "-k", k, "-o", out, "--no-assess")
        assert result.exit_code == 3, result.output
        assert "every one of the 128 users" in result.output and not out.exists()
    with pytest.raises(InfeasibleError, match="no cluster of 100 or more users"):
        anonymize(read_log(path), 100, seed=0, measures=False)


def test_output_naming_the_input_is_refused(source, tmp_path):
    before = digest(source)
    out = tmp_path / "out.tsv"
    for args in (["-o", source], ["-o", out, "--report", source]):
        result = run(source, "-k", 3, *args)
        assert result.exit_code == 2 and "input file" in result.output
        assert digest(source) == before and not out.exists()


@pytest.mark.parametrize(
    "report, message", [("r.pdf", "--report must end"), ("not_a_dir/r.json", "cannot be created")]
)
def test_paths_checked_before_anything(source, tmp_path, report, message):
    (tmp_path / "not_a_dir").write_text("a file")
    out = tmp_path / "out.tsv"
    result = run(source, "-k", 3, "-o", out, "--report", tmp_path / report)
    assert result.exit_code == 2 and message in result.output
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "log.tsv",
        "not_a_dir",
    ]


def test_outputs_are_all_or_nothing(source, tmp_path, monkeypatch):
    import querylogs.cli as module

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(module, "write_report", broken)
    out, report = tmp_path / "out.tsv", tmp_path / "r.json"
    result = run(source, "-k", 3, "-o", out, "--report", report, "--no-measures")
    assert result.exit_code == 2 and "No space left" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.tsv"]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        HEADER.encode(),
        (HEADER + "x\ty\n" * 20 + "1\tq\t2006-03-01 00:00:00\t\t\n").encode(),
        bytes(range(256)) * 40,
        "1\tcaf\u00e9\t2006\n".encode("utf-16"),
    ],
)
def test_empty_headers_only_or_malformed_files_are_bad_input(tmp_path, content):
    path, out = tmp_path / "log.tsv", tmp_path / "out.tsv"
    path.write_bytes(content)
    result = run(path, "-k", 2, "-o", out)
    assert result.exit_code == 2, result.output
    assert "--format" in result.output or "empty" in result.output or "header" in result.output
    assert not out.exists()
    with pytest.raises(InputError):
        read_log(path)


def test_wrong_layout_aol_head_is_bad_input(h, tmp_path):
    path = h.shared_file("aol/aol_ia_head_clicks_92k.tsv.gz")
    result = run(path, "-k", 5, "-o", tmp_path / "x.tsv")
    # its header names a QueryNormalized column: refused at line 1 with the table command
    assert result.exit_code == 2 and "QueryNormalized" in result.output
    assert "--format csv" in result.output and not (tmp_path / "x.tsv").exists()


def test_not_parquet_and_bad_csv(source, tmp_path):
    result = run(source, "--format", "parquet", "-k", 2, "-o", tmp_path / "x.tsv")
    assert result.exit_code == 2 and "not a Parquet file" in result.output
    with pytest.raises(InputError, match="not a Parquet file"):
        read_log(source, "parquet")
    gz = tmp_path / "log.csv.gz"
    gz.write_bytes(gzip.compress(b"\x00\x01garbage"))
    with pytest.raises(InputError):
        read_log(gz, "csv")


@pytest.mark.parametrize(
    "args, message",
    [
        (["-k", "0"], "-k must be an integer >= 1"),
        (["-k", "2", "--seed", "-1"], "--seed"),
        (["-k", "2", "--columns", "user=uid"], "--columns applies to --format csv"),
        (["-k", "2", "--sep", ";"], "--sep applies to --format csv"),
        (["-k", "2", "--format", "csv", "--columns", "who=uid"], "unknown log column"),
        # the last pair won: URLs published as the query text
        (
            ["-k", "2", "--format", "csv", "--columns", "user=uid,query=q,time=ts,query=url"],
            "--columns names 'query' twice",
        ),
        (
            ["-k", "2", "--format", "csv", "--columns", "user=uid,query=uid,time=ts"],
            "--columns reads column 'uid' as both 'user' and 'query'",
        ),
    ],
)
def test_bad_options_exit_2_before_reading(source, tmp_path, args, message):
    out = tmp_path / "x.tsv"
    result = run(source, "-o", out, *args)
    assert result.exit_code == 2 and message in result.output
    assert not out.exists()


def test_bad_parameters_are_named(small_log):
    for kwargs, name in (
        ({"k": 0}, "k"),
        ({"k": 2.5}, "k"),
        ({"k": "3"}, "k"),
        ({"k": 2, "time_granularity": "year"}, "time_granularity"),
        ({"k": 2, "grouping": "kmeans"}, "grouping"),
        ({"k": 2, "tie_break": "up"}, "tie_break"),
        ({"k": 2, "refine": -1}, "refine"),
        ({"k": 2, "click_threshold": 2.0}, "click_threshold"),
        ({"k": 2, "risk_p": (0,)}, "risk_p"),
    ):
        with pytest.raises(InputError, match=name):
            anonymize(small_log, **kwargs)
    with pytest.raises(InputError, match="empty"):
        anonymize(small_log.iloc[:0], 2)


def test_k_1_warns_and_measures_flags(source, tmp_path, small_log):
    with pytest.warns(UserWarning, match="k = 1 gives no protection"):
        release = anonymize(small_log, 1, seed=0, measures=False)
    assert any(w.startswith("k = 1") for w in release.info["warnings"])
    assert release.utility == {} and release.risk == {}
    with pytest.warns(DeprecationWarning, match="measures"):
        assert anonymize(small_log, 3, seed=0, assess=False).utility == {}
    out, report = tmp_path / "x.tsv", tmp_path / "r.json"
    result = run(source, "-k", 1, "-o", out, "--no-measures", "--report", report)
    assert result.exit_code == 0 and "warning: k = 1 gives no protection" in result.output
    saved = json.loads(report.read_text())
    assert saved["utility"] == {} and saved["info"]["warnings"]
    assert "malformed_lines" not in json.dumps(saved["info"].get("input", {}))
    help_text = CliRunner().invoke(cli, ["anonymize", "--help"]).output
    assert "--no-measures" in help_text and "--no-assess" not in help_text
    assert "never decides" in help_text and "--key-file" in help_text


def test_unknown_output_extension_is_refused(tmp_path, small_log):
    with pytest.raises(InputError, match="xlsx"):
        write_log(small_log, tmp_path / "out.xlsx")
    result = CliRunner().invoke(
        cli, ["synthesize", "-o", str(tmp_path / "s.xlsx"), "--users", "5", "--lines", "20"]
    )
    assert result.exit_code == 2 and ".xlsx" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cut", [True, False])
def test_corrupt_or_cut_gzip_is_bad_input(tmp_path, cut):
    """A cut gzip file raised a raw EOFError (a traceback on the command line)."""
    data = gzip.compress((HEADER + "1\tq\t2006-03-01 00:00:00\t\t\n" * 2000).encode())
    path, out = tmp_path / "log.tsv.gz", tmp_path / "out.tsv"
    path.write_bytes(data[: len(data) // 2] if cut else b"\x1f\x8b" + b"garbage" * 10)
    with pytest.raises(InputError, match="gzip"):
        read_log(path)
    result = run(path, "-k", 2, "-o", out)
    assert result.exit_code == 2 and "gzip" in result.output and not out.exists()


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_lone_carriage_returns_are_named_not_read_as_one_line(tmp_path, engine):
    """A log with lone CR line ends was read as a header with no data line (CR only) or
    as pairs of records joined into malformed lines (mixed line ends)."""
    source = tmp_path / "log.tsv"
    write_log(synthetic_log(20, 300, seed=2), source, aol=True)
    lines = source.read_bytes().split(b"\n")
    source.write_bytes(b"\n".join(lines[:5]) + b"\r" + b"\n".join(lines[5:]))
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(source), "-k", "2", "-o", str(tmp_path / "o.tsv"), "--engine", engine],
    )
    assert result.exit_code == 2, result.output
    assert "line 5" in result.output and "line ends" in result.output
    assert not (tmp_path / "o.tsv").exists()


def test_a_worker_raised_input_error_prints_the_message_alone(tmp_path):
    """With the command's own Dask cluster a bad line found by a worker is reported like the
    pandas engine's: the message, no worker log dump with its traceback."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    source = tmp_path / "log.tsv"
    write_log(synthetic_log(20, 300, seed=2), source, aol=True)
    lines = source.read_bytes().split(b"\n")
    source.write_bytes(b"\n".join(lines[:5]) + b"\r" + b"\n".join(lines[5:]))
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    args = ["querylogs", "anonymize", str(source), "-k", "2", "-o", str(tmp_path / "o.tsv")]
    done = subprocess.run(
        [sys.executable, "-m", "structanon", *args, "--engine", "dask", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "line ends" in done.stderr
    assert "Traceback" not in done.stderr and "Compute Failed" not in done.stderr, done.stderr


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_time_with_an_offset_is_converted_on_both_engines(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    lines = [
        "479\tfamily guy\t2006-03-01 16:01:20\t\t",
        "479\tmovies\t2006-03-01T16:01:20+02:00\t1\thttp://movieweb.com",  # line 3
        "479\tcar decals\t2006-03-03 22:42:42\t2\thttp://www.imdb.com",
        "507\tweather\t2006-03-03 23:20:12\t\t",
    ]
    source = tmp_path / "log.tsv"
    source.write_bytes(b"\xef\xbb\xbf" + (HEADER + "\n".join(lines) + "\n").encode())
    out = tmp_path / "out.tsv"
    result = run(source, "-k", "1", "-o", out, "--time-granularity", "second", "--engine", engine)
    assert result.exit_code == 0, result.output
    assert "malformed" not in result.output  # neither the header nor the offset line
    published = pd.read_csv(out, sep="\t")["time"]
    assert sorted(published) == [
        "2006-03-01 14:01:20",
        "2006-03-01 16:01:20",
        "2006-03-03 22:42:42",
        "2006-03-03 23:20:12",
    ]


def test_an_aol_like_header_naming_other_columns_gets_the_table_command(tmp_path):
    """A header starting with AnonID but naming other columns (a QueryNormalized column
    before QueryTime) was read by position: every line failed as "time is not a
    date-time". The header is named, with the --columns command that reads it."""
    path = tmp_path / "ia.tsv"
    path.write_text(
        "AnonID\tQuery\tQueryNormalized\tQueryTime\tItemRank\n"
        + "".join(f"{u}\tq{u}\tq{u}\t2006-03-01 10:00:00\t1\n" for u in range(6))
    )
    result = run(path, "-k", 2, "-o", tmp_path / "out.tsv")
    assert result.exit_code == 2 and "QueryNormalized" in result.output
    assert "--columns user=AnonID,query=Query,time=QueryTime,rank=ItemRank" in result.output
    assert "ia.tsv" in result.output and "line 1" in result.output
    fixed = run(
        path, "-k", 2, "-o", tmp_path / "out.tsv", "--format", "csv", "--sep", "\t",
        "--columns", "user=AnonID,query=Query,time=QueryTime,rank=ItemRank", "--no-measures",
    )  # fmt: skip
    assert fixed.exit_code == 3  # read: six users sharing no query, nothing to publish
