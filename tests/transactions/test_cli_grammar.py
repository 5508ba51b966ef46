"""One command grammar (issue 11): shared release options, progress, early refusals, assess."""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner

from transactions.cli import cli


@pytest.fixture
def basket_file(tmp_path):
    p = tmp_path / "b.dat"
    p.write_text("".join(f"{i % 5} {i % 7} {(i * 3) % 11}\n" for i in range(60)))
    return p


COMMANDS = [
    ("anonymize", ["-k", "5"], ".dat"),
    ("k-anonymize", ["-k", "4"], ".dat"),
    ("band", ["--sensitive", "10,8", "-p", "3"], ".json"),
    ("disassociate", ["-k", "4"], ".json"),
]


def _invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("cmd,extra,suffix", COMMANDS)
def test_progress_on_stderr_unless_quiet(tmp_path, basket_file, cmd, extra, suffix):
    out = tmp_path / f"o{suffix}"
    res = _invoke(cmd, basket_file, *extra, "-o", out, "--no-measures")
    assert res.exit_code == 0, res.output
    assert "structanon: verify ..." in res.stderr and "structanon: anonymize done" in res.stderr
    assert "structanon:" not in res.stdout
    quiet = _invoke(
        cmd, basket_file, *extra, "-o", tmp_path / f"q{suffix}", "--no-measures", "--quiet"
    )
    # --quiet: no progress and no summary; the warnings about the data stay
    assert quiet.exit_code == 0 and quiet.stdout == ""
    assert all(line.startswith("warning: ") for line in quiet.stderr.splitlines())
    assert (tmp_path / f"q{suffix}").read_bytes()


@pytest.mark.parametrize("cmd,extra,suffix", COMMANDS)
def test_unsupported_report_extension_exits_2_before_any_file(
    tmp_path, basket_file, cmd, extra, suffix
):
    res = _invoke(
        cmd, basket_file, *extra, "-o", tmp_path / f"o{suffix}", "--report", tmp_path / "r.pdf"
    )
    assert res.exit_code == 2 and "--report" in res.output
    assert "structanon: encode" not in res.output  # refused before reading
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.dat"]


@pytest.mark.parametrize("cmd,extra,suffix", COMMANDS)
def test_report_provenance_names_the_input_by_name_only(tmp_path, basket_file, cmd, extra, suffix):
    rep = tmp_path / "r.json"
    res = _invoke(
        cmd, basket_file, *extra, "-o", tmp_path / f"o{suffix}", "--report", rep, "--quiet"
    )
    assert res.exit_code == 0, res.output
    inputs = json.loads(rep.read_text())["provenance"]["inputs"]
    # neither the file's size nor its hash: either is a fact of the input itself
    assert inputs == [{"name": "b.dat"}]
    assert hashlib.sha256(basket_file.read_bytes()).hexdigest() not in rep.read_text()


def test_band_privacy_degree_long_name(tmp_path, basket_file):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    key = tmp_path / "k.key"
    key.write_text("0123456789abcdef0123456789abcdef\n")
    for out, opt in ((a, "-p"), (b, "--privacy-degree")):
        res = _invoke(
            "band",
            basket_file,
            "--sensitive",
            "10,8",
            opt,
            "3",
            "-o",
            out,
            "--key-file",
            key,
            "--no-measures",
            "--quiet",
        )
        assert res.exit_code == 0, res.output
    assert a.read_bytes() == b.read_bytes() and json.loads(a.read_text())["p"] == 3


@pytest.mark.parametrize("name", ["assess", "inspect"])
def test_assess_emits_one_json_document_of_the_shared_shape(tmp_path, basket_file, name):
    res = _invoke(name, basket_file, "-k", "5", "-m", "2", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)  # one document (the old inspect printed two)
    assert set(doc) == {"data_type", "input", "risk", "warnings", "provenance"}
    assert doc["data_type"] == "transactions" and doc["input"] == "b.dat"
    assert doc["risk"]["sizes"]["transactions"] == 60
    attack = doc["risk"]["attacker_knowing_2_items"]
    assert attack["k"] == 5 and 0 <= attack["share_below_k"] <= 1
    rep = tmp_path / "a.json"
    res = _invoke(name, basket_file, "--report", rep, "--quiet")
    assert res.exit_code == 0 and res.stdout == ""
    assert set(json.loads(rep.read_text())) == set(doc)


def test_assess_table_by_default_and_hidden_alias(basket_file):
    res = _invoke("assess", basket_file)
    assert res.exit_code == 0 and "assessment of b.dat" in res.stdout
    assert "share_below_k" in res.stdout
    listed = CliRunner().invoke(cli, ["--help"]).output
    assert "assess" in listed and "inspect" not in listed
    assert (
        _invoke("assess", basket_file, "--report", basket_file.with_suffix(".txt")).exit_code == 2
    )


def test_every_option_has_help_and_input_metavar():
    for name, command in cli.commands.items():
        for param in command.params:
            if param.param_type_name == "option":
                assert param.help, (name, param.name)
            else:
                assert param.metavar == "INPUT", (name, param.name)
