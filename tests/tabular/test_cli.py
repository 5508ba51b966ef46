"""The ``structanon tabular`` command line and the demo."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from tabular._figures import release_figures
from tabular.cli import cli

DATA = Path(__file__).resolve().parents[2] / "tabular" / "data"
QIS = "sex,age,race,marital-status,education,native-country,workclass"


def run(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_anonymize_writes_verified_table_and_json_report(tmp_path):
    out, report = tmp_path / "anon.csv", tmp_path / "report.json"
    result = run(
        [
            "anonymize",
            str(DATA / "adult_sample.csv"),
            "--sep",
            ";",
            "--qi",
            QIS,
            "--hierarchy-dir",
            str(DATA),
            "--hierarchy",
            f"age={DATA / 'adult_hierarchy_age.csv'}",
            "--sensitive",
            "occupation",
            "-k",
            "5",
            "--l-diversity",
            "2",
            "--suppression-limit",
            "0.05",
            "--metric",
            "loss",
            "-o",
            str(out),
            "--report",
            str(report),
        ]
    )
    assert result.exit_code == 0, result.output
    data = pd.read_csv(out, sep=";")
    assert data.groupby(QIS.split(",")).size().min() >= 5
    doc = json.loads(report.read_text())
    assert doc["verification"]["passed"]
    assert set(doc["info"]["transformation"]) == set(QIS.split(","))
    assert doc["suppressed"] + len(data) == 5000


def test_html_report_embeds_figures(tmp_path):
    out, report = tmp_path / "anon.csv", tmp_path / "report.html"
    result = run(
        [
            "anonymize",
            str(DATA / "adult_sample.csv"),
            "--sep",
            ";",
            "--qi",
            "sex,age,race",
            "--hierarchy-dir",
            str(DATA),
            "-k",
            "3",
            "--algorithm",
            "datafly",
            "-o",
            str(out),
            "--report",
            str(report),
            "--quiet",
        ]
    )
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
    result = run(
        [
            "anonymize",
            str(src),
            "--qi",
            "sex,race",
            "--hierarchy-dir",
            str(DATA),
            "-k",
            "2",
            "--identifier",
            "ssn",
            "-o",
            str(out),
            "--quiet",
        ]
    )
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out)
    assert not set(published["ssn"]) & set(df["ssn"])


def test_mondrian_with_numeric_age(tmp_path):
    out = tmp_path / "anon.csv"
    result = run(
        [
            "anonymize",
            str(DATA / "adult_sample.csv"),
            "--sep",
            ";",
            "--qi",
            "age,sex",
            "--numeric",
            "age",
            "--hierarchy-dir",
            str(DATA),
            "-k",
            "4",
            "--algorithm",
            "mondrian",
            "-o",
            str(out),
            "--quiet",
        ]
    )
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out, sep=";").groupby(["age", "sex"]).size().min() >= 4


def test_input_errors_exit_2_and_infeasible_exit_3(tmp_path):
    out = tmp_path / "anon.csv"
    base = ["anonymize", str(DATA / "adult_sample.csv"), "--sep", ";", "-o", str(out)]
    missing = CliRunner().invoke(
        cli, base + ["--qi", "sex,height", "--hierarchy-dir", str(DATA), "-k", "2"]
    )
    assert missing.exit_code == 2
    assert "height" in missing.output
    no_hierarchy = CliRunner().invoke(cli, base + ["--qi", "sex,age", "-k", "2"])
    assert no_hierarchy.exit_code == 2
    infeasible = CliRunner().invoke(
        cli, base + ["--qi", "sex", "--hierarchy-dir", str(DATA), "-k", "6000"]
    )
    assert infeasible.exit_code == 3
    assert not out.exists()


def test_assess_reports_raw_risk(tmp_path):
    report = tmp_path / "risk.json"
    result = run(
        [
            "assess",
            str(DATA / "adult_sample.csv"),
            "--sep",
            ";",
            "--qi",
            QIS,
            "--sensitive",
            "occupation",
            "--report",
            str(report),
        ]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    assert doc["risk"]["records"] == 5000
    assert doc["risk"]["k"] == 1 and doc["risk"]["prosecutor_max"] == 1.0
    assert doc["risk"]["sample_uniques"] > 0


@pytest.mark.slow
def test_demo_writes_outputs_and_verifies(package_demo):
    release, tmp_path = package_demo("tabular")
    assert release.verify().passed
    assert (tmp_path / "adult_anonymized.csv").exists()
    assert json.loads((tmp_path / "report.json").read_text())["verification"]["passed"]
    assert (tmp_path / "report.html").exists()
    assert "classifier_accuracy" in release.utility
    assert release.risk["after"]["record_linkage"] < release.risk["before"]["record_linkage"]
    html = (tmp_path / "report.html").read_text()
    doc = json.loads((tmp_path / "report.json").read_text())
    assert "adult_sample.csv" in {f["name"] for f in doc["provenance"]["inputs"]}
    assert "transformation_text" in doc["info"]
    figures = release_figures(release)
    assert len(figures) == 4
    for title, fig in figures:
        assert f"alt='{title}'" in html
        for ax in fig.axes:
            assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title() == title
            legend = ax.get_legend()
            if legend is not None:  # outside the axes: it covers no bar
                fig.canvas.draw()
                box = legend.get_window_extent()
                assert box.x0 >= ax.get_window_extent().x1


def _anonymize_args(tmp_path, *extra):
    return [
        "anonymize",
        str(DATA / "adult_sample.csv"),
        "--sep",
        ";",
        "--qi",
        "sex,age,race",
        "--hierarchy-dir",
        str(DATA),
        "-k",
        "5",
        "-o",
        str(tmp_path / "anon.csv"),
        *extra,
    ]


def test_anonymize_logs_progress_on_stderr_unless_quiet(tmp_path):
    loud = run(_anonymize_args(tmp_path))
    assert loud.exit_code == 0, loud.output
    for step in ("read", "search", "verify", "measures", "write"):
        assert f"structanon: {step} ..." in loud.stderr
    quiet = run(_anonymize_args(tmp_path, "--quiet"))
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_unsupported_report_extension_exits_2_before_any_file_is_created(tmp_path):
    result = CliRunner().invoke(cli, _anonymize_args(tmp_path, "--report", str(tmp_path / "r.pdf")))
    assert result.exit_code == 2 and "--report" in result.stderr
    assert list(tmp_path.iterdir()) == []
    result = CliRunner().invoke(
        cli,
        [
            "assess",
            str(DATA / "adult_sample.csv"),
            "--sep",
            ";",
            "--qi",
            "sex",
            "--report",
            str(tmp_path / "r.html"),
        ],
    )
    assert result.exit_code == 2 and list(tmp_path.iterdir()) == []


def test_assess_emits_the_shared_json_shape_and_a_table(tmp_path):
    args = [
        "assess",
        str(DATA / "adult_sample.csv"),
        "--sep",
        ";",
        "--qi",
        "sex,age,race",
        "--sensitive",
        "occupation",
    ]
    result = run(args + ["--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"data_type", "input", "risk", "warnings", "provenance"}
    assert doc["data_type"] == "tabular" and doc["input"] == "adult_sample.csv"
    assert doc["risk"]["records"] == 5000 and "attacks" not in doc["risk"]  # each measure once
    assert doc["provenance"]["inputs"] == [{"name": "adult_sample.csv"}]
    assert any("unique" in w for w in doc["warnings"])
    table = run(args)
    assert table.exit_code == 0 and "prosecutor_max" in table.stdout
    assert "structanon: assess ..." in table.stderr


def test_every_option_has_help_and_the_input_is_named_INPUT():
    for command in cli.commands.values():
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, (command.name, param.name)
            else:
                assert param.metavar == "INPUT", (command.name, param.name)


def test_report_provenance_names_every_input(tmp_path):
    report = tmp_path / "r.json"
    result = run(_anonymize_args(tmp_path, "--report", str(report), "--quiet"))
    assert result.exit_code == 0, result.output
    names = {f["name"] for f in json.loads(report.read_text())["provenance"]["inputs"]}
    assert {
        "adult_sample.csv",
        "adult_hierarchy_age.csv",
        "adult_hierarchy_sex.csv",
        "adult_hierarchy_race.csv",
    } <= names
