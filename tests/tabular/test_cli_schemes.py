"""``structanon tabular anatomize`` and ``structanon tabular slice`` through CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from tabular.cli import cli

DATA = Path(__file__).resolve().parents[2] / "tabular" / "data"
SAMPLE = DATA / "adult_sample.csv"


def run(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def anatomize_args(tmp_path, *extra):
    return [
        "anatomize",
        str(SAMPLE),
        "--sep",
        ";",
        "--qi",
        "sex,age,race",
        "--sensitive",
        "occupation",
        "-l",
        "4",
        "-o",
        str(tmp_path / "qit.csv"),
        "--sensitive-output",
        str(tmp_path / "st.csv"),
        *extra,
    ]


def slice_args(tmp_path, *extra):
    return [
        "slice",
        str(SAMPLE),
        "--sep",
        ";",
        "--qi",
        "sex,age,race,education",
        "--sensitive",
        "occupation",
        "-l",
        "4",
        "-o",
        str(tmp_path / "sliced.csv"),
        *extra,
    ]


def test_anatomize_writes_two_verified_tables(tmp_path):
    report = tmp_path / "r.json"
    result = run(anatomize_args(tmp_path, "--report", str(report)))
    assert result.exit_code == 0, result.output
    qit = pd.read_csv(tmp_path / "qit.csv", sep=";")
    st = pd.read_csv(tmp_path / "st.csv", sep=";")
    assert list(qit.columns) == ["sex", "age", "race", "bucket"]
    assert list(st.columns) == ["bucket", "occupation", "count"]
    assert len(qit) == st["count"].sum() == 5000
    per_bucket = st.groupby("bucket")["count"]
    assert (per_bucket.max() * 4 <= per_bucket.sum()).all()
    assert (qit["bucket"].value_counts().sort_index() == per_bucket.sum()).all()
    doc = json.loads(report.read_text())
    assert doc["verification"]["passed"]
    assert doc["parameters"]["scheme"] == "anatomy"


def test_slice_writes_a_verified_table(tmp_path):
    report = tmp_path / "r.json"
    result = run(slice_args(tmp_path, "--report", str(report), "--quiet"))
    assert result.exit_code == 0, result.output
    assert result.output == ""
    data = pd.read_csv(tmp_path / "sliced.csv", sep=";")
    assert set(data.columns) == {"sex", "age", "race", "education", "occupation", "bucket"}
    assert len(data) == 5000
    doc = json.loads(report.read_text())
    assert doc["verification"]["passed"]
    assert sorted(a for g in doc["info"]["columns"] for a in g) == sorted(
        ["sex", "age", "race", "education", "occupation"]
    )


def test_slice_with_explicit_columns_and_key_is_reproducible(tmp_path):
    key = tmp_path / "key.bin"
    key.write_bytes(b"k" * 32)
    args = ["--columns", "sex,age;race,education;occupation", "--key-file", str(key)]
    first = run(slice_args(tmp_path, *args, "--quiet"))
    assert first.exit_code == 0, first.output
    one = (tmp_path / "sliced.csv").read_bytes()
    second = run(slice_args(tmp_path, *args, "--quiet"))
    assert second.exit_code == 0
    assert (tmp_path / "sliced.csv").read_bytes() == one


@pytest.mark.parametrize(
    "command, extra, message",
    [
        (anatomize_args, ["-l", "1"], "-l"),
        (anatomize_args, ["--qi", "sex,sex"], "twice"),
        (anatomize_args, ["--report", "r.pdf"], "--report"),
        (slice_args, ["--columns", "sex;;age"], "--columns"),
        (slice_args, ["--n-columns", "0"], "--n-columns"),
        (slice_args, ["--columns", "sex,age"], "columns must partition"),
        (slice_args, ["--sensitive", "nope"], "nope"),
    ],
)
def test_bad_options_exit_2_and_write_nothing(tmp_path, command, extra, message):
    args = command(tmp_path, *extra)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not any(tmp_path.glob("*.csv"))


def test_anatomize_needs_sensitive_and_an_eligible_table(tmp_path):
    args = anatomize_args(tmp_path)
    args.remove("--sensitive")
    args.remove("occupation")
    assert CliRunner().invoke(cli, args).exit_code == 2
    infeasible = CliRunner().invoke(cli, anatomize_args(tmp_path, "-l", "12"))
    assert infeasible.exit_code == 3
    assert not any(tmp_path.glob("*.csv"))


def test_empty_input_is_bad_input(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    args = anatomize_args(tmp_path)
    args[1] = str(empty)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "empty" in result.output
