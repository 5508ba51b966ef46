"""Attack: read every report and the printed summary for a trace of the key file.

A key file's path or name in a report links every release made with it and tells where the
secret lives; neither may appear anywhere a release publishes (docs/threat-model.md, item 5).
"""

import hashlib
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from structanon.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _commands(tmp_path):
    from querylogs import synthetic_log, write_log

    log = tmp_path / "log.tsv"
    write_log(synthetic_log(30, 600, seed=1), log, aol=True)
    tab = ROOT / "tabular" / "data"
    return {
        "tabular": (
            ["tabular", "anonymize", str(tab / "adult_sample.csv"), "--sep", ";", "--qi",
             "sex,age", "--hierarchy-dir", str(tab), "-k", "5", "--identifier", "occupation"],
            ".csv",
        ),
        "transactions": (
            ["transactions", "k-anonymize",
             str(ROOT / "transactions" / "data" / "retail_head2000.dat"), "-k", "5"],
            ".dat",
        ),
        "location": (
            ["location", "anonymize",
             str(ROOT / "location" / "data" / "geolife_11users_sample.csv.gz"), "--user", "uid",
             "--time", "datetime", "--lon", "lng", "-k", "3", "--window", "1D"],
            ".csv",
        ),
        "graphs": (
            ["graphs", "anonymize", str(ROOT / "graphs" / "data" / "ca-GrQc_undirected.txt"),
             "-k", "5"],
            ".txt",
        ),
        "querylogs": (["querylogs", "anonymize", str(log), "-k", "4"], ".tsv"),
    }  # fmt: skip


@pytest.mark.parametrize("datatype", ["tabular", "transactions", "location", "graphs", "querylogs"])
def test_no_report_or_summary_names_the_key_file(datatype, tmp_path, monkeypatch):
    folder = tmp_path / "keys-of-alice"
    folder.mkdir()
    key = folder / "hospital-2024.key"
    key.write_text("00112233445566778899aabbccddeeff")
    args, ext = _commands(tmp_path)[datatype]
    for report in ("r.json", "r.html"):
        argv = [*args, "-o", str(tmp_path / f"out{ext}"), "--report", str(tmp_path / report)]
        argv += ["--key-file", str(key), "--no-measures"]
        # the report records the command line as the process received it
        monkeypatch.setattr(sys, "argv", ["structanon", *argv])
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0, result.output
        text = (tmp_path / report).read_text() + result.output
        assert "--key-file" in (tmp_path / report).read_text()  # the command is recorded
        for trace in (
            "hospital-2024",
            "keys-of-alice",
            hashlib.sha256(key.read_bytes()).hexdigest(),
        ):
            assert trace not in text, f"{trace!r} in the {report} report or summary"
        (tmp_path / f"out{ext}").unlink()
