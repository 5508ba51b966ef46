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
    # invariant (the default): the matrix is built from the input's exact category shares,
    # times n its exact counts, which the randomized release hides: not in the report
    doc = json.loads(report.read_text())
    assert "transition" not in doc["info"] and doc["withheld"] == ["transition"]
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


def _matrix_file(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_pram_transition_file_is_applied_and_published(table, tmp_path):
    path, df = table
    # x and y swap for sure, z stays: the published column is known exactly
    matrix = _matrix_file(tmp_path, ",x,y,z\nx,0,1,0\ny,1,0,0\nz,0,0,1\n")
    out, report = tmp_path / "o.csv", tmp_path / "r.json"
    result = run("pram", path, "--columns", "g", "--transition", matrix, "--not-invariant",
                 "-o", out, "--report", report, "--quiet", "--no-measures")  # fmt: skip
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out)
    assert (published["g"] == "z").sum() == (df["g"] == "z").sum()
    assert (published["g"] == "x").sum() == (df["g"] == "y").sum()
    doc = json.loads(report.read_text())["info"]["transition"]["g"]
    assert doc["matrix"] == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    # COLUMN=FILE, rows and columns in another order than the sorted categories
    shuffled = _matrix_file(tmp_path, ",z,x,y\ny,0,1,0\nz,1,0,0\nx,0,0,1\n", "s.csv")
    result = run("pram", path, "--columns", "g", "--transition", f"g={shuffled}",
                 "--not-invariant", "-o", out, "--report", report, "--quiet", "--no-measures")  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())["info"]["transition"]["g"]
    assert doc["matrix"] == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]  # the same matrix, reordered


def test_pram_transition_numeric_categories(tmp_path):
    path = tmp_path / "in.csv"
    pd.DataFrame({"c": [1, 2] * 30}).to_csv(path, index=False)
    matrix = _matrix_file(tmp_path, ",1,2\n1,0.5,0.5\n2,0.5,0.5\n")
    out = tmp_path / "o.csv"
    result = run("pram", path, "--columns", "c", "--transition", matrix, "-o", out, "--quiet",
                 "--no-measures")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert set(pd.read_csv(out)["c"]) <= {1, 2}


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        (",x,y\nx,1,0\ny,0,1\nz,0,1\n", "not square"),
        (",x,y,z\nx,0.5,0.4,0\ny,0,1,0\nz,0,0,1\n", "sums to 0.9"),
        (",x,y,z\nx,1.5,-0.5,0\ny,0,1,0\nz,0,0,1\n", ">= 0"),
        (",x,y,z\nx,a,0,0\ny,0,1,0\nz,0,0,1\n", "number"),
        (",x,y,w\nx,1,0,0\ny,0,1,0\nw,0,0,1\n", "lacks category 'z'"),
        (",x,y,z,w\nx,1,0,0,0\ny,0,1,0,0\nz,0,0,1,0\nw,0,0,0,1\n", "not a category"),
        (",x,y,z\nx,1,0,0\ny,0,1,0\nv,0,0,1\n", "labels differ"),
        (",x,x,z\nx,1,0,0\ny,0,1,0\nz,0,0,1\n", "twice"),
    ],
)
def test_pram_bad_transition_files_exit_2(table, tmp_path, text, message):
    path, _ = table
    matrix = _matrix_file(tmp_path, text)
    out = tmp_path / "o.csv"
    result = run("pram", path, "--columns", "g", "--transition", matrix, "-o", out, "--quiet")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output and not out.exists()


def test_pram_transition_option_errors(table, tmp_path):
    path, _ = table
    matrix = _matrix_file(tmp_path, ",x,y,z\nx,1,0,0\ny,0,1,0\nz,0,0,1\n")
    out = tmp_path / "o.csv"
    for args, message in [
        (["--columns", "g,a", "--transition", str(matrix)], "COLUMN=FILE"),
        (["--columns", "g", "--transition", str(tmp_path / "none.csv")], "--transition"),
        (["--columns", "g", "--transition", str(matrix), "--transition", f"g={matrix}"], "two"),
    ]:
        result = run("pram", path, *args, "-o", out, "--quiet")
        assert result.exit_code == 2, result.output
        assert message in result.output and not out.exists()
    # the output must not overwrite the matrix file
    result = run("pram", path, "--columns", "g", "--transition", matrix, "-o", matrix, "--quiet")
    assert result.exit_code == 2 and matrix.read_text().startswith(",x,y,z")


def test_recode_of_a_value_absent_from_the_input_is_named_to_the_publisher_only(table, tmp_path):
    """The command refused a value to recode that no record holds, and the report records
    the command line: a recorded ``--recode COL:OLD=NEW`` proved that OLD occurs in the
    input, even when its one holder was sampled out.  Absent values are now accepted, named
    on stderr only, and the report is the same whether or not the input holds the value."""
    path, df = table
    lone = df.copy()
    lone.loc[0, "g"] = "w"  # one record holds "w"
    held = tmp_path / "held.csv"
    lone.to_csv(held, index=False)
    docs = {}
    for name, source in (("absent", path), ("held", held)):
        for report in ("r.json", "r.html"):
            out, rep = tmp_path / f"{name}_out.csv", tmp_path / f"{name}{report}"
            result = run("recode", source, "--recode", "g:w=x", "--sample", "0.5", "-o", out,
                         "--report", rep, "--quiet", "--no-measures")  # fmt: skip
            assert result.exit_code == 0, result.output
            assert "w" not in set(pd.read_csv(out)["g"])
            assert "do not occur" not in rep.read_text()
            if name == "absent":
                assert "warning: column 'g': 1 value(s) to recode do not occur" in result.stderr
            else:
                assert "do not occur" not in result.stderr
        docs[name] = json.loads((tmp_path / f"{name}r.json").read_text())
    assert docs["absent"]["parameters"] == docs["held"]["parameters"]
    assert docs["absent"]["parameters"]["mapping"] == {"g": {"w": "x"}}
