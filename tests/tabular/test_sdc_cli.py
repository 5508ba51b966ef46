"""The perturbation commands: ``structanon tabular microaggregate|noise|rank-swap|pram|recode``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tabular.cli import cli


@pytest.fixture()
def table(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(120, 2)).round(3), columns=["a", "b"])
    df["g"] = rng.choice(["x", "y", "z"], 120)
    df["age"] = rng.integers(15, 90, 120)
    path = tmp_path / "in.csv"
    df.to_csv(path, index=False)
    return path, df


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_microaggregate_command_writes_a_k_anonymous_table_and_report(table, tmp_path):
    path, df = table
    out, report = tmp_path / "out.csv", tmp_path / "r.json"
    result = run("microaggregate", path, "--columns", "a,b", "-k", "4", "-o", out,
                 "--report", report, "--no-measures")  # fmt: skip
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out)
    assert len(published) == len(df)
    assert published.groupby(["a", "b"]).size().min() >= 4
    doc = json.loads(report.read_text())
    assert doc["verification"]["passed"] is True
    assert doc["parameters"]["k"] == 4


def test_noise_command_with_a_key_repeats_bytes_and_without_differs(table, tmp_path):
    path, _ = table
    key = tmp_path / "key"
    key.write_bytes(b"k" * 32)
    outs = [tmp_path / f"o{i}.csv" for i in range(4)]
    for out, extra in zip(outs, [["--key-file", key]] * 2 + [[]] * 2):
        result = run("noise", path, "--columns", "a,b", "--alpha", "0.3", "-o", out, "--quiet",
                     "--no-measures", *extra)  # fmt: skip
        assert result.exit_code == 0, result.output
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert outs[2].read_bytes() != outs[3].read_bytes()


def test_rank_swap_pram_and_recode_commands(table, tmp_path):
    path, df = table
    out = tmp_path / "swap.csv"
    assert run("rank-swap", path, "--columns", "a", "-p", "10", "-o", out, "--quiet",
               "--no-measures").exit_code == 0  # fmt: skip
    assert sorted(pd.read_csv(out)["a"]) == sorted(df["a"])
    out, report = tmp_path / "pram.csv", tmp_path / "pram.json"
    result = run("pram", path, "--columns", "g", "-o", out, "--report", report, "--quiet",
                 "--no-measures")  # fmt: skip
    assert result.exit_code == 0, result.output
    matrix = json.loads(report.read_text())["info"]["transition"]["g"]
    assert matrix["categories"] == ["x", "y", "z"] and len(matrix["matrix"]) == 3
    out = tmp_path / "recode.csv"
    result = run("recode", path, "--top", "age=80", "--bottom", "age=18", "--recode",
                 "g:x=xy", "--recode", "g:y=xy", "-o", out, "--quiet", "--no-measures")  # fmt: skip
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out, dtype=str)
    assert set(published["g"]) <= {"xy", "z"}
    assert (published["age"] == "80+").sum() == (df["age"] >= 80).sum()


@pytest.mark.parametrize(
    "args, message",
    [
        (["noise", "--columns", "g", "--alpha", "0.1"], "numeric"),
        (["noise", "--columns", "a", "--alpha", "0"], "--alpha"),
        (["rank-swap", "--columns", "a", "-p", "0"], "-p"),
        (["pram", "--columns", "nope"], "nope"),
        (["pram", "--columns", "g", "--keep", "2"], "--keep"),
        (["microaggregate", "--columns", "a", "-k", "0"], "-k"),
        (["microaggregate", "--columns", "a", "-k", "2", "--block-size", "x"], "--block-size"),
        (["recode", "--recode", "g-x"], "COLUMN:OLD=NEW"),
        (["recode", "--top", "age=old"], "not a number"),
        (["recode", "--sample", "0"], "--sample"),
    ],
)
def test_bad_options_exit_2_before_writing(table, tmp_path, args, message):
    path, _ = table
    out = tmp_path / "out.csv"
    result = run(args[0], path, *args[1:], "-o", out, "--quiet")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not out.exists()


def test_output_equal_to_input_is_refused(table):
    path, _ = table
    result = run("noise", path, "--columns", "a", "--alpha", "0.1", "-o", path)
    assert result.exit_code == 2


def test_missing_value_is_named_by_file_line(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("a,b\n1,2\n3,\n5,6\n")
    result = run("noise", path, "--columns", "a,b", "--alpha", "0.1", "-o", tmp_path / "o.csv")
    assert result.exit_code == 2
    assert "line 3" in result.output and "'b'" in result.output
