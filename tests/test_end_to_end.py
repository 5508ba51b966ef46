"""End to end: `structanon demo` runs every data type on bundled data, as a user runs it."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from structanon.cli import PACKAGES, main


@pytest.mark.parametrize("package", list(PACKAGES))
def test_demo_of_each_datatype_writes_a_verified_release(package, tmp_path):
    result = CliRunner().invoke(main, ["demo", "--only", package, "--output-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "verified" in result.output and "FAIL" not in result.output
    written = [p for p in (tmp_path / package).rglob("*") if p.is_file()]
    assert written, "the demo wrote no output"
    reports = [p for p in written if p.suffix == ".json"]
    assert reports and any(json.loads(p.read_text()).get("verification", {}).get("passed")
                           for p in reports)


@pytest.mark.parametrize("package", list(PACKAGES))
def test_each_datatype_command_has_help(package):
    result = CliRunner().invoke(main, [package, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_installed_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "structanon", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "demo" in out.stdout
