"""The command-line options of the newer privacy models of ``structanon tabular anonymize``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from structanon import Partition
from structanon.models import (
    AlphaKAnonymity,
    BLikeness,
    DeltaDisclosure,
    DeltaPresence,
    DistinctLDiversity,
)
from tabular.cli import cli

DATA = Path(__file__).resolve().parents[2] / "tabular" / "data"


def run(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def anonymize_args(source, out, report, *extra):
    return [
        "anonymize",
        str(source),
        "--sep",
        ";",
        "--qi",
        "sex,age,race",
        "--hierarchy-dir",
        str(DATA),
        "--sensitive",
        "salary-class",
        "--suppression-limit",
        "0.05",
        "--no-measures",
        "-o",
        str(out),
        "--report",
        str(report),
        *extra,
    ]


@pytest.mark.parametrize(
    "options, model",
    [
        (["--beta-likeness", "1.5"], BLikeness(1.5)),
        (["--beta-likeness", "1.5", "--enhanced-beta"], BLikeness(1.5, enhanced=True)),
        (["--delta-disclosure", "1.0"], DeltaDisclosure(1.0)),
        (["-k", "4", "--alpha", "0.85"], AlphaKAnonymity(0.85, 4)),
    ],
)
def test_model_options_give_verified_releases(tmp_path, options, model):
    out, report = tmp_path / "anon.csv", tmp_path / "report.json"
    result = run(anonymize_args(DATA / "adult_sample.csv", out, report, *options))
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    assert doc["verification"]["passed"]
    assert model.to_dict() in doc["models"]
    data = pd.read_csv(out, sep=";")
    partition = Partition.from_keys(data[["sex", "age", "race"]])
    assert model.check(partition, data["salary-class"].to_numpy()).passed


def test_probabilistic_l_and_nt_closeness_options(tmp_path):
    out, report = tmp_path / "anon.csv", tmp_path / "report.json"
    args = ["--l-diversity", "1.3", "--l-variant", "probabilistic"]
    args += ["--t-closeness", "0.1", "--nt-closeness", "300"]
    result = run(anonymize_args(DATA / "adult_sample.csv", out, report, *args))
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert "probabilistic-l-diversity" in text and "nt-closeness" in text
    assert json.loads(text)["verification"]["passed"]


def test_delta_presence_writes_the_members_only(tmp_path):
    source = tmp_path / "population.csv"
    table = pd.read_csv(DATA / "adult_sample.csv", sep=";").head(2000)
    table["member"] = np.random.default_rng(1).random(len(table)) < 0.3
    table.to_csv(source, sep=";", index=False)
    out, report = tmp_path / "anon.csv", tmp_path / "report.json"
    args = anonymize_args(source, out, report, "--delta-presence", "0,0.5")
    args[args.index("salary-class")] = "member"
    result = run(args)
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["verification"]["passed"]
    data = pd.read_csv(out, sep=";")
    assert "member" not in data.columns
    assert len(data) <= int(table["member"].sum())
    assert len(data) > 0
    assert DeltaPresence(0, 0.5).delta_max == 0.5


@pytest.mark.parametrize(
    "options, message",
    [
        (["--enhanced-beta"], "--enhanced-beta needs --beta-likeness"),
        (["--nt-closeness", "10"], "--nt-closeness N needs --t-closeness"),
        (["--delta-presence", "0.5"], "--delta-presence must be MIN,MAX"),
        (["--beta-likeness", "0"], "beta must be"),
    ],
)
def test_bad_model_options_exit_2(tmp_path, options, message):
    out, report = tmp_path / "anon.csv", tmp_path / "report.json"
    result = CliRunner().invoke(
        cli, anonymize_args(DATA / "adult_sample.csv", out, report, *options)
    )
    assert result.exit_code == 2
    assert message in result.output
    assert not out.exists() and not report.exists()


def test_assess_reports_the_newer_models(tmp_path):
    report = tmp_path / "risk.json"
    args = ["assess", str(DATA / "adult_sample.csv"), "--sep", ";", "--qi", "sex,age,race"]
    result = run([*args, "--sensitive", "salary-class", "--report", str(report)])
    assert result.exit_code == 0, result.output
    risk = json.loads(report.read_text())["risk"]
    for key in ("beta_likeness", "delta_disclosure", "probabilistic_l", "alpha"):
        assert key in risk
    assert risk["probabilistic_l"] >= 1.0 and 0 < risk["alpha"] <= 1.0


@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])
def test_several_sensitive_columns_each_satisfy_every_model(tmp_path, algorithm):
    out, report = tmp_path / "anon.csv", tmp_path / "report.json"
    args = anonymize_args(DATA / "adult_sample.csv", out, report, "-k", "3")
    args[args.index("salary-class")] = "salary-class,occupation"
    args += ["--l-diversity", "2", "--beta-likeness", "3", "--algorithm", algorithm]
    result = run(args)
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    assert doc["verification"]["passed"]
    assert any(m["model"] == "multiple-sensitive" for m in doc["models"])
    data = pd.read_csv(out, sep=";")
    assert "salary-class+occupation" not in data.columns
    partition = Partition.from_keys(data[["sex", "age", "race"]])
    for column in ("salary-class", "occupation"):
        values = data[column].to_numpy()
        assert DistinctLDiversity(2).check(partition, values).passed
        assert BLikeness(3).check(partition, values).passed


def test_several_sensitive_columns_bad_combinations(tmp_path):
    out, report = tmp_path / "anon.csv", tmp_path / "report.json"
    base = anonymize_args(DATA / "adult_sample.csv", out, report, "-k", "3")
    twice = list(base)
    twice[twice.index("salary-class")] = "occupation,occupation"
    result = CliRunner().invoke(cli, [*twice, "--l-diversity", "2"])
    assert result.exit_code == 2 and "twice" in result.output
    presence = list(base)
    presence[presence.index("salary-class")] = "salary-class,occupation"
    result = CliRunner().invoke(cli, [*presence, "--delta-presence", "0,0.5"])
    assert result.exit_code == 2 and "one membership column" in result.output
