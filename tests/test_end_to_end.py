"""End to end: `structanon demo` runs every data type on bundled data, as a user runs it.

The demo runs once for the whole suite (the ``demo_run`` fixture); its reports are then checked as files and, where a
Chromium is installed, rendered in a real headless browser.
"""

import json
import re
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from structanon.cli import PACKAGES, main


@pytest.mark.slow
def test_demo_runs_every_datatype(demo_run):
    _out, result, _releases = demo_run
    assert result.exit_code == 0, result.output
    assert "All demos verified" in result.output
    assert "FAILED" not in result.output


@pytest.mark.slow
@pytest.mark.parametrize("package", list(PACKAGES))
def test_demo_of_each_datatype_writes_a_verified_release(package, demo_run):
    out, result, _releases = demo_run
    assert f"== {package}" in result.output
    written = [p for p in (out / package).rglob("*") if p.is_file()]
    assert written, "the demo wrote no output"
    reports = [json.loads(p.read_text()) for p in written if p.suffix == ".json"]
    verified = [r for r in reports if r.get("verification", {}).get("passed")]
    assert verified, "no verified JSON report"
    report = verified[0]
    assert report["data_type"] == package
    assert report["headline"].endswith("Checked again from the published output alone.")
    assert report["flags"] and {f["level"] for f in report["flags"]} <= {"red", "amber", "green"}


@pytest.mark.parametrize("package", list(PACKAGES))
def test_each_html_report_shows_the_input_next_to_the_release(package, demo_run):
    out, _result, _releases = demo_run
    pages = sorted((out / package).rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text()
        assert "<h2 id='before-after'>Before and after</h2>" in text, page.name
        section = text.split("id='before-after'")[1].split("<h2")[0]
        figures = re.findall(r"<figcaption>(.*?)</figcaption><img alt='(.*?)' src='data:", section)
        assert figures, f"{page.name}: no before/after figure"
        for caption, alt in figures:  # the alt text describes more than the caption says
            assert alt.startswith(caption) and len(alt) > len(caption) + 40


@pytest.mark.parametrize("package", list(PACKAGES))
def test_each_datatype_command_has_help(package):
    result = CliRunner().invoke(main, [package, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_installed_console_script_runs():
    out = subprocess.run(
        [sys.executable, "-m", "structanon", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "demo" in out.stdout


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (Debian package 'chromium')")
@pytest.mark.parametrize("package", list(PACKAGES))
def test_html_report_renders_in_a_browser(package, demo_run, tmp_path):
    out, _result, _releases = demo_run
    pages = sorted((out / package).rglob("*.html"))
    assert pages, "the demo wrote no HTML report"
    run = subprocess.run(
        [
            CHROMIUM,
            *BROWSER_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            pages[0].as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    assert 'id="headline"' in dom and "Checked again from the published output" in dom
    assert 'id="flags"' in dom and 'id="provenance"' in dom and 'id="before-after"' in dom
    assert "structanon" in dom and "SHA-256" in dom or "command" in dom
    console_errors = [
        line
        for line in run.stderr.splitlines()
        if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)
    ]
    assert not console_errors
    assert "<img" not in dom or "alt=" in dom  # every figure carries alt text
