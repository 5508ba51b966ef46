import json

from click.testing import CliRunner

from querylogs import read_log, synthetic_log, verify_log, write_log
from querylogs.cli import cli, demo


def test_anonymize_command(tmp_path):
    source = tmp_path / "log.tsv"
    write_log(synthetic_log(40, 2000, seed=5), source, aol=True)
    key = tmp_path / "key"
    key.write_text("00112233445566778899aabbccddeeff")
    out, report = tmp_path / "anon.tsv", tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["anonymize", str(source), "-k", "4", "-o", str(out),
                                      "--report", str(report), "--seed", "1",
                                      "--key-file", str(key)])
    assert result.exit_code == 0, result.output
    published = read_log(out, "csv", sep="\t")
    assert all(c.passed for c in verify_log(published, 4))
    summary = json.loads(report.read_text())
    assert summary["verification"]["passed"] and summary["parameters"]["k"] == 4
    assert summary["info"]["pseudonym_key_source"].startswith("file")
    html = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["anonymize", str(source), "-k", "4", "-o", str(out),
                                      "--report", str(html), "--no-assess"])
    assert result.exit_code == 0, result.output
    assert "<img" in html.read_text()
    result = CliRunner().invoke(cli, ["anonymize", str(source), "-k", "4", "-o", str(out),
                                      "--report", str(report), "--no-assess",
                                      "--grouping", "mdav", "--refine", "1"])
    assert result.exit_code == 0, result.output
    parameters = json.loads(report.read_text())["parameters"]
    assert parameters["grouping"] == "mdav" and parameters["refine"] == 1
    assert all(c.passed for c in verify_log(read_log(out, "csv", sep="\t"), 4))
    result = CliRunner().invoke(cli, ["anonymize", str(source), "-k", "4", "-o", str(out),
                                      "--grouping", "kmeans"])
    assert result.exit_code == 2


def test_exit_codes(tmp_path):
    source = tmp_path / "log.tsv"
    write_log(synthetic_log(5, 100, seed=5), source, aol=True)
    out = tmp_path / "anon.tsv"
    result = CliRunner().invoke(cli, ["anonymize", str(source), "-k", "6", "-o", str(out)])
    assert result.exit_code == 3 and not out.exists()
    with source.open("a") as handle:
        handle.write("broken line\n")
    result = CliRunner().invoke(cli, ["anonymize", str(source), "-k", "2", "-o", str(out),
                                      "--on-bad-lines", "raise"])
    assert result.exit_code == 2 and "line 102" in result.output and not out.exists()
    result = CliRunner().invoke(cli, ["inspect", str(source)])
    assert result.exit_code == 0 and "malformed 1" in result.output


def test_synthesize_and_demo(tmp_path):
    out = tmp_path / "syn.tsv"
    result = CliRunner().invoke(cli, ["synthesize", "-o", str(out), "--users", "20",
                                      "--lines", "500"])
    assert result.exit_code == 0, result.output
    assert len(read_log(out)) == 500
    release = demo(tmp_path / "demo", seed=0)
    assert release.verify().passed
    for name in ("log_anon.tsv", "report.json", "report.html"):
        assert (tmp_path / "demo" / name).exists()
