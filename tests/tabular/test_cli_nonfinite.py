"""Float options given nan or inf, and safepub's largest epsilon: exit 2 naming the option."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tabular.cli import cli

DATA = Path(__file__).resolve().parents[2] / "tabular" / "data"


def _base(tmp_path, command="anonymize"):
    return [
        command, str(DATA / "adult_sample.csv"), "--sep", ";", "--qi", "sex,age",
        "--hierarchy-dir", str(DATA), "-o", str(tmp_path / "o.csv"), "--quiet",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--l-diversity", "nan", "--sensitive", "salary-class"], "--l-diversity"),
        (["--l-diversity", "inf", "--sensitive", "salary-class"], "--l-diversity"),
        (
            [
                "--l-diversity",
                "2",
                "--l-variant",
                "recursive",
                "--c",
                "nan",
                "--sensitive",
                "salary-class",
            ],
            "--c",
        ),  # fmt: skip
        (["--t-closeness", "nan", "--sensitive", "salary-class"], "--t-closeness"),
        (["--suppression-limit", "nan"], "--suppression-limit"),
    ],
)
def test_non_finite_float_option_is_refused(tmp_path, extra, option):
    result = CliRunner().invoke(cli, _base(tmp_path) + ["-k", "2"] + extra)
    assert result.exit_code == 2, result.output
    assert f"{option} must be a finite number" in result.output
    assert not (tmp_path / "o.csv").exists()


def test_safepub_huge_epsilon_is_refused(tmp_path):
    result = CliRunner().invoke(cli, _base(tmp_path, "safepub") + ["--epsilon", "1e308"])
    assert result.exit_code == 2, result.output
    assert "--epsilon must be > 0 and <= 10000" in result.output


def test_safepub_epsilon_whose_implied_k_explodes_is_refused(tmp_path):
    result = CliRunner().invoke(cli, _base(tmp_path, "safepub") + ["--epsilon", "50"])
    assert result.exit_code == 2, result.output
    assert "must be <= 7" in result.output
