"""The ``structanon tabular`` command line and the demo."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from tabular.cli import cli, demo

DATA = Path(__file__).resolve().parents[2] / "tabular" / "data"
QIS = "sex,age,race,marital-status,education,native-country,workclass"


def run(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_anonymize_writes_verified_table_and_json_report(tmp_path):
    out, report = tmp_path / "anon.csv", tmp_path / "report.json"
    result = run(["anonymize", str(DATA / "adult_sample.csv"), "--sep", ";", "--qi", QIS,
                  "--hierarchy-dir", str(DATA), "--hierarchy",
                  f"age={DATA / 'adult_hierarchy_age.csv'}", "--sensitive", "occupation",
                  "-k", "5", "--l-diversity", "2", "--suppression-limit", "0.05",
                  "--metric", "loss", "-o", str(out), "--report", str(report)])
    assert result.exit_code == 0, result.output
    data = pd.read_csv(out, sep=";")
    assert data.groupby(QIS.split(",")).size().min() >= 5
    doc = json.loads(report.read_text())
    assert doc["verification"]["passed"]
    assert set(doc["info"]["transformation"]) == set(QIS.split(","))
    assert doc["suppressed"] + len(data) == 5000


def test_html_report_embeds_figures(tmp_path):
    out, report = tmp_path / "anon.csv", tmp_path / "report.html"
    result = run(["anonymize", str(DATA / "adult_sample.csv"), "--sep", ";", "--qi",
                  "sex,age,race", "--hierarchy-dir", str(DATA), "-k", "3", "--algorithm",
                  "datafly", "-o", str(out), "--report", str(report), "--quiet"])
    assert result.exit_code == 0, result.output
    html = report.read_text()
    assert html.count("data:image/png;base64") >= 3
    assert "Class-size histogram" in html


def test_identifier_option_pseudonymizes(tmp_path):
    src = tmp_path / "people.csv"
    df = pd.read_csv(DATA / "adult_sample.csv", sep=";").head(300)
    df.insert(0, "ssn", [f"123-45-{i:04d}" for i in range(len(df))])
    df.to_csv(src, index=False)
    out = tmp_path / "anon.csv"
    result = run(["anonymize", str(src), "--qi", "sex,race", "--hierarchy-dir", str(DATA),
                  "-k", "2", "--identifier", "ssn", "-o", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out)
    assert not set(published["ssn"]) & set(df["ssn"])


def test_mondrian_with_numeric_age(tmp_path):
    out = tmp_path / "anon.csv"
    result = run(["anonymize", str(DATA / "adult_sample.csv"), "--sep", ";", "--qi",
                  "age,sex", "--numeric", "age", "--hierarchy-dir", str(DATA), "-k", "4",
                  "--algorithm", "mondrian", "-o", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out, sep=";").groupby(["age", "sex"]).size().min() >= 4


def test_input_errors_exit_2_and_infeasible_exit_3(tmp_path):
    out = tmp_path / "anon.csv"
    base = ["anonymize", str(DATA / "adult_sample.csv"), "--sep", ";", "-o", str(out)]
    missing = CliRunner().invoke(cli, base + ["--qi", "sex,height", "--hierarchy-dir",
                                              str(DATA), "-k", "2"])
    assert missing.exit_code == 2
    assert "height" in missing.output
    no_hierarchy = CliRunner().invoke(cli, base + ["--qi", "sex,age", "-k", "2"])
    assert no_hierarchy.exit_code == 2
    infeasible = CliRunner().invoke(cli, base + ["--qi", "sex", "--hierarchy-dir", str(DATA),
                                                 "-k", "6000"])
    assert infeasible.exit_code == 3
    assert not out.exists()


def test_assess_reports_raw_risk(tmp_path):
    report = tmp_path / "risk.json"
    result = run(["assess", str(DATA / "adult_sample.csv"), "--sep", ";", "--qi", QIS,
                  "--sensitive", "occupation", "--report", str(report)])
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    assert doc["records"] == 5000
    assert doc["k"] == 1 and doc["risk"]["prosecutor_max"] == 1.0
    assert doc["risk"]["sample_uniques"] > 0


def test_demo_writes_outputs_and_verifies(tmp_path):
    release = demo(tmp_path, seed=0)
    assert release.verify().passed
    assert (tmp_path / "adult_anonymized.csv").exists()
    assert json.loads((tmp_path / "report.json").read_text())["verification"]["passed"]
    assert (tmp_path / "report.html").exists()
    assert "classifier_accuracy" in release.utility
    assert release.risk["after"]["record_linkage"] < release.risk["before"]["record_linkage"]
