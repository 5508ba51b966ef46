import json

import click
import pytest
from click.testing import CliRunner

from querylogs import read_log, synthetic_log, verify_log, write_log
from querylogs.cli import cli
from structanon._finish import k_warning


def test_anonymize_command(tmp_path):
    source = tmp_path / "log.tsv"
    write_log(synthetic_log(40, 2000, seed=5), source, aol=True)
    key = tmp_path / "key"
    key.write_text("00112233445566778899aabbccddeeff")
    out, report = tmp_path / "anon.tsv", tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(source),
            "-k",
            "4",
            "-o",
            str(out),
            "--report",
            str(report),
            "--seed",
            "1",
            "--key-file",
            str(key),
        ],
    )
    assert result.exit_code == 0, result.output
    published = read_log(out, "csv", sep="\t")
    assert all(c.passed for c in verify_log(published, 4))
    summary = json.loads(report.read_text())
    assert summary["verification"]["passed"] and summary["parameters"]["k"] == 4
    assert summary["info"]["pseudonym_key_source"].startswith("file")
    html = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(source), "-k", "4", "-o", str(out), "--report", str(html), "--no-assess"],
    )
    assert result.exit_code == 0, result.output
    assert "<img" in html.read_text()
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(source),
            "-k",
            "4",
            "-o",
            str(out),
            "--report",
            str(report),
            "--no-assess",
            "--grouping",
            "mdav",
            "--refine",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    parameters = json.loads(report.read_text())["parameters"]
    assert parameters["grouping"] == "mdav" and parameters["refine"] == 1
    assert all(c.passed for c in verify_log(read_log(out, "csv", sep="\t"), 4))
    result = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "4", "-o", str(out), "--grouping", "kmeans"]
    )
    assert result.exit_code == 2


def test_exit_codes(tmp_path):
    source = tmp_path / "log.tsv"
    write_log(synthetic_log(5, 100, seed=5), source, aol=True)
    out = tmp_path / "anon.tsv"
    result = CliRunner().invoke(cli, ["anonymize", str(source), "-k", "6", "-o", str(out)])
    assert result.exit_code == 3 and not out.exists()
    with source.open("a") as handle:
        handle.write("broken line\n")
    result = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "2", "-o", str(out), "--on-bad-lines", "raise"]
    )
    assert result.exit_code == 2 and "line 102" in result.output and not out.exists()
    result = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "2", "-o", str(out)]
    )  # raise is the default
    assert result.exit_code == 2 and "line 102" in result.output and not out.exists()
    assert "--on-bad-lines drop" in result.output
    result = CliRunner().invoke(cli, ["inspect", str(source), "--json", "--quiet"])
    assert result.exit_code == 2 and "line 102" in result.stderr and not result.stdout
    result = CliRunner().invoke(
        cli, ["inspect", str(source), "--json", "--quiet", "--on-bad-lines", "drop"]
    )
    assert result.exit_code == 0 and json.loads(result.stdout)["risk"]["malformed_lines"] == 1
    assert "1 bad line(s) of" in result.stderr and "line 102" in result.stderr


@pytest.mark.slow
def test_synthesize_and_demo(tmp_path, package_demo):
    out = tmp_path / "syn.tsv"
    result = CliRunner().invoke(
        cli, ["synthesize", "-o", str(out), "--users", "20", "--lines", "500"]
    )
    assert result.exit_code == 0, result.output
    assert len(read_log(out)) == 500
    release, folder = package_demo("querylogs")
    assert release.verify().passed
    for name in ("log_anon.tsv", "report.json", "report.html"):
        assert (folder / name).exists()


def _aol(tmp_path, users=30, lines=1500, name="log.tsv"):
    source = tmp_path / name
    write_log(synthetic_log(users, lines, seed=5), source, aol=True)
    return source


def test_anonymize_logs_progress_unless_quiet(tmp_path):
    source, out = _aol(tmp_path), tmp_path / "anon.tsv"
    result = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "3", "-o", str(out), "--no-measures"]
    )
    assert result.exit_code == 0, result.output
    assert "structanon: read ..." in result.stderr and "structanon: verify" in result.stderr
    result = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "3", "-o", str(out), "--no-measures", "--quiet"]
    )
    assert result.exit_code == 0 and result.stderr == "" and result.stdout == ""
    with source.open("a") as handle:  # a malformed line and k = 1: warned, even if quiet
        handle.write("broken line\n")
    drop = ["--no-measures", "--on-bad-lines", "drop"]
    loud = CliRunner().invoke(cli, ["anonymize", str(source), "-k", "1", "-o", str(out), *drop])
    assert loud.exit_code == 0 and "warning: k = 1" in loud.stderr
    told = f"warning: 1 bad line(s) of {source} dropped (--on-bad-lines drop): line 1502\n"
    assert told in loud.stderr
    quiet = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "1", "-o", str(out), *drop, "--quiet"]
    )
    # quiet: nothing but the warnings, k = 1 and what was dropped (never silent)
    assert quiet.exit_code == 0 and quiet.stdout == ""
    assert sorted(quiet.stderr.splitlines(keepends=True)) == sorted(
        [told, f"warning: {k_warning(1)}\n"]
    )


@pytest.mark.parametrize("command", [["anonymize", "-k", "3", "-o", "out.tsv"], ["assess"]])
def test_unsupported_report_extension_exits_2_before_any_file(tmp_path, command):
    source = _aol(tmp_path)
    args = [
        command[0],
        str(source),
        *[str(tmp_path / a) if a == "out.tsv" else a for a in command[1:]],
    ]
    result = CliRunner().invoke(cli, [*args, "--report", str(tmp_path / "r.pdf")])
    assert result.exit_code == 2 and "--report must end" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.tsv"]


def test_assess_emits_the_shared_shape(tmp_path):
    from collections import Counter

    source = _aol(tmp_path, 20, 600)
    result = CliRunner().invoke(
        cli, ["assess", str(source), "--json", "--known-queries", "2", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"data_type", "input", "risk", "warnings", "provenance"}
    assert doc["data_type"] == "querylogs" and doc["input"] == "log.tsv"
    log = read_log(source)
    assert doc["risk"]["users"] == log["user"].nunique() == 20
    # independent recount: users whose set of distinct queries nobody else has
    sets = Counter(frozenset(g) for _, g in log.groupby("user")["query"])
    unique = sum(1 for _, g in log.groupby("user")["query"] if sets[frozenset(g)] == 1)
    assert doc["risk"]["unique_by_query_set"] == pytest.approx(unique / 20)
    assert "unique_by_2_queries" in doc["risk"] and "unique_by_1_queries" not in doc["risk"]
    assert set(doc["provenance"]["inputs"][0]) == {"name"}
    # the former name and option still work, hidden from the help
    old = CliRunner().invoke(cli, ["inspect", str(source), "-p", "2", "--json", "--quiet"])
    assert old.exit_code == 0 and json.loads(old.stdout)["risk"] == doc["risk"]
    listing = CliRunner().invoke(cli, ["--help"]).output
    assert "assess" in listing and "inspect" not in listing
    help_text = CliRunner().invoke(cli, ["assess", "--help"]).output
    assert "--known-queries" in help_text and "-p" not in help_text.replace("--", "")
    table = CliRunner().invoke(cli, ["assess", str(source)])
    assert table.exit_code == 0 and "unique_by_query_set" in table.stdout


def test_format_follows_the_extension(tmp_path):
    import pandas as pd

    log = synthetic_log(20, 600, seed=5)
    source = tmp_path / "log.csv"
    log.to_csv(source, index=False)
    out = tmp_path / "anon.tsv"
    result = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "3", "-o", str(out), "--no-measures", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert all(c.passed for c in verify_log(pd.read_csv(out, sep="\t"), 3))
    parquet = tmp_path / "log.parquet"
    log.to_parquet(parquet)
    result = CliRunner().invoke(cli, ["assess", str(parquet), "--json", "--quiet"])
    assert result.exit_code == 0 and json.loads(result.stdout)["risk"]["rows"] == 600


def test_every_option_has_help():
    for name, command in cli.commands.items():
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert param.help, (name, param.name)
            if isinstance(param, click.Argument):
                assert param.metavar == "INPUT", (name, param.name)


def test_report_figures_and_transformation_in_words(small_log):
    from querylogs import anonymize
    from querylogs._figures import release_figures

    release = anonymize(small_log, 3, seed=0, key=b"0123456789abcdef")
    info = release.info
    text = info["transformation_text"]
    kept = info["queries_published"] - info["queries_added"]
    for number in (
        info["n_clusters"],
        info["queries_in"],
        kept,
        info["queries_added"],
        info["queries_suppressed"],
    ):
        assert f"{number:,}" in text
    sizes = info["cluster_size_counts"]  # the published clusters' real sizes
    low, high = min(sizes), max(sizes)
    span = f"{low} to {high} users" if low != high else f"{low} users"
    assert "floored to the day" in text and span in text
    assert high == 5 or "to 5 users" not in text  # not k .. 2k-1 whatever the sizes
    figures = release_figures(release)
    assert len(figures) == 3
    for title, figure in figures:
        (ax,) = figure.axes
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title() == title
        legend = ax.get_legend()
        if legend is not None:  # outside the axes, so it covers no bar
            assert legend.get_bbox_to_anchor().x0 >= ax.get_window_extent().x1 - 1
