"""Items 007 and 7 stay two items; duplicate items are counted alike everywhere."""

from __future__ import annotations

import json

from click.testing import CliRunner

from transactions.cli import cli
from transactions.io import read_transactions


def test_zero_padded_items_stay_text_and_distinct(tmp_path):
    path = tmp_path / "z.dat"
    path.write_text("007 7 8\n7 8\n007 8\n")
    assert read_transactions(path) == [{"007", "7", "8"}, {"7", "8"}, {"007", "8"}]
    csv = tmp_path / "z.csv"
    csv.write_text("tid,item\na,007\na,7\nb,8\n")
    assert read_transactions(csv) == [{"007", "7"}, {"8"}]
    canonical = tmp_path / "c.dat"
    canonical.write_text("1 2\n-3 0\n")
    assert read_transactions(canonical) == [{1, 2}, {-3, 0}]
    for other in ("07", "-0", "-07", "\uff17"):  # zero-padded, signed zero, full-width 7
        path.write_text(f"{other} 7\n7 8\n")
        assert read_transactions(path) == [{other, "7"}, {"7", "8"}], other


def test_duplicate_items_agree_in_cli_report_and_assess(tmp_path):
    path = tmp_path / "d.dat"
    path.write_text("1 2 2 3\n1 2\n")
    out, report = tmp_path / "o.dat", tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["anonymize", str(path), "-k", "1", "-m", "1", "-o", str(out), "--report", str(report)]
    )
    assert result.exit_code == 0, result.output
    assert "1 duplicate items removed" in result.output
    assert json.loads(report.read_text())["info"]["input"]["duplicate_items_removed"] == 1
    assessed = CliRunner().invoke(cli, ["assess", str(path), "--json"])
    assert assessed.exit_code == 0, assessed.output
    assert '"duplicate_items_removed": 1' in assessed.stdout
