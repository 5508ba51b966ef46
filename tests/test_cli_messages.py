"""Command-line messages: warnings survive --quiet, the words name CLI options and the
offending values, and the same mistake gets the same hint in every data type."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from structanon.cli import main


def _inputs(tmp_path: Path) -> dict[str, tuple[Path, list[str]]]:
    """A small valid input for each data type, and what its anonymize command needs."""
    tab = tmp_path / "t.csv"
    tab.write_text("age,city\n" + "".join(f"{20 + i % 7},c{i % 3}\n" for i in range(30)))
    bask = tmp_path / "b.dat"  # the first basket holds item 2 twice
    bask.write_text("1 2 2\n" + "".join(f"{i % 4} {i % 5 + 4}\n" for i in range(20)))
    loc = tmp_path / "l.csv"
    loc.write_text(
        "user,time,lat,lon\n"
        + "".join(
            f"u{i % 4},2024-01-01T{i % 24:02d}:00:00,{40 + i / 1000},{116 + i / 1000}\n"
            for i in range(40)
        )
    )
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{i} {(i + 1) % 8}\n" for i in range(8)))
    log = tmp_path / "q.tsv"
    log.write_text(
        "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"
        + "".join(f"{i % 6}\tquery {i}\t2006-03-01 10:{i:02d}:00\t\t\n" for i in range(30))
    )
    return {
        "tabular": (tab, ["--qi", "age", "--numeric", "age", "--algorithm", "mondrian"]),
        "transactions": (bask, ["-m", "1"]),
        "location": (loc, []),
        "graphs": (graph, []),
        "querylogs": (log, []),
    }


@pytest.mark.parametrize("package", ["tabular", "transactions", "location", "graphs", "querylogs"])
def test_quiet_keeps_the_warnings_and_drops_the_summary(tmp_path, package):
    """One rule for the five types: --quiet silences progress and the summary, never a
    warning about the data or the request (here k = 1)."""
    source, extra = _inputs(tmp_path)[package]
    out = tmp_path / f"out{source.suffix}"
    result = CliRunner().invoke(
        main, [package, "anonymize", str(source), "-k", "1", "-o", str(out), "--quiet", *extra]
    )
    assert result.exit_code == 0, result.output
    assert "warning: k = 1 gives no protection" in result.stderr, result.stderr
    assert result.stdout == "", result.stdout  # no summary, no "written to"
    assert all(line.startswith("warning: ") for line in result.stderr.splitlines())
    if package == "transactions":
        assert "warning: 1 duplicate items removed" in result.stderr


def _location_file(tmp_path: Path, lat: str, time: str, sep: str = ",", n: int = 12) -> Path:
    path = tmp_path / "fixes.csv"
    rows = [sep.join(["user", "time", "lat", "lon"])]
    rows += [sep.join([f"u{i % 3}", time, lat, "116.3"]) for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("lat", "time", "sep", "value", "cause"),
    [
        ('"39,984905"', "2008-10-23 04:12:32", ";", "'39,984905'", "decimal comma"),
        ("39.98", "01/03/2008 10:00:00", ",", "'01/03/2008 10:00:00'", "ISO 8601"),
    ],
)
def test_location_names_the_cause_when_every_row_is_invalid(tmp_path, lat, time, sep, value, cause):
    """An Excel export with decimal commas, or day-first dates: every row is invalid, so
    the message shows the value and the likely cause, and never suggests a drop that would
    leave nothing ("all rows are invalid")."""
    source = _location_file(tmp_path, lat.strip('"'), time, sep)
    out = tmp_path / "out.csv"
    for drop in ([], ["--on-bad-lines", "drop"]):
        result = CliRunner().invoke(
            main,
            ["location", "anonymize", str(source), "--sep", sep, "-k", "2", "-o", str(out)] + drop,
        )
        assert result.exit_code == 2 and not out.exists(), result.output
        assert f"value {value})" in result.stderr and cause in result.stderr, result.stderr
        assert "on_bad_lines" not in result.stderr and "--on-bad-lines drop" not in result.stderr


def test_location_suggests_the_cli_drop_for_a_few_invalid_rows(tmp_path):
    """A few invalid rows among many: drop them with the CLI spelling, not the Python one."""
    source = _location_file(tmp_path, "39.98", "2008-10-23 04:12:32", n=40)
    with source.open("a") as f:
        f.write("u1,2008-10-23 04:12:32,north,116.3\n")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(
        main, ["location", "anonymize", str(source), "-k", "2", "-o", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert "pass --on-bad-lines drop)" in result.stderr and "value 'north')" in result.stderr
    assert "on_bad_lines=" not in result.stderr


@pytest.mark.parametrize("bom", [True, False])
@pytest.mark.parametrize("package", ["tabular", "transactions", "location", "graphs", "querylogs"])
def test_a_utf16_file_gets_the_same_hint_in_every_type(tmp_path, package, bom):
    """Excel's "Unicode text" is UTF-16: tabular and location called it "a NUL byte (binary
    content?)" where the other three named UTF-16 and --encoding utf-16."""
    source, extra = _inputs(tmp_path)[package]
    source.write_bytes(source.read_text().encode("utf-16" if bom else "utf-16-le"))
    out = tmp_path / f"out{source.suffix}"
    command = [package, "anonymize", str(source), "-k", "1", "-o", str(out), *extra]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2 and not out.exists(), result.output
    assert "the file is UTF-16 text" in result.stderr, result.stderr
    assert "--encoding utf-16" in result.stderr and "NUL byte" not in result.stderr
    if bom:  # and --encoding utf-16 reads it
        result = CliRunner().invoke(main, [*command, "--encoding", "utf-16"])
        assert result.exit_code == 0, result.output


def test_querylogs_assess_warns_about_users_unique_by_their_queries(tmp_path):
    """Every other type's assess turns a high uniqueness into a warning line; querylogs
    reported 100% unique users with "warnings": []."""
    source, _ = _inputs(tmp_path)["querylogs"]  # every query is issued once
    told = "warning: 100% of users are unique by their query set: anonymize before publishing"
    for quiet in ([], ["--quiet"]):  # in the table, or alone on stderr
        result = CliRunner().invoke(main, ["querylogs", "assess", str(source), *quiet])
        assert result.exit_code == 0, result.output
        assert told in result.output.splitlines(), result.output
    as_json = CliRunner().invoke(main, ["querylogs", "assess", str(source), "--json"])
    assert told.removeprefix("warning: ") in as_json.stdout
    shared = tmp_path / "shared.tsv"  # six users with the same two queries: none unique
    shared.write_text(
        "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"
        + "".join(
            f"{u}\t{q}\t2006-03-01 10:0{i}:00\t\t\n"
            for u in range(6)
            for i, q in enumerate(["weather", "news"])
        )
    )
    result = CliRunner().invoke(main, ["querylogs", "assess", str(shared)])
    assert result.exit_code == 0 and "warning:" not in result.output, result.output


def test_demo_checks_its_options_before_making_any_folder(tmp_path):
    """`demo --seed -1` printed FAILED, exited 1 and left an empty folder behind."""
    out = tmp_path / "demo"
    result = CliRunner().invoke(
        main, ["demo", "--only", "transactions", "--seed", "-1", "-o", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert "error (InputError): --seed must be an integer >= 0, got -1" in result.stderr
    assert not out.exists()


def test_demo_quiet_prints_only_the_verdict(tmp_path):
    out = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--only", "transactions", "--quiet", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output == f"All demos verified. Outputs in {out}\n"
    assert any((out / "transactions").iterdir())


def test_a_failing_demo_is_a_bug_exit_4(tmp_path, monkeypatch):
    import transactions.cli

    def broken(output_dir, seed=0):
        raise RuntimeError("boom")

    monkeypatch.setattr(transactions.cli, "demo", broken)
    result = CliRunner().invoke(main, ["demo", "--only", "transactions", "-o", str(tmp_path)])
    assert result.exit_code == 4, result.output
    assert "FAILED: transactions: RuntimeError: boom" in result.stderr
    assert "error: demo failed for: transactions" in result.stderr


def test_messages_name_the_cli_options_not_python_parameters(tmp_path, monkeypatch):
    source, _ = _inputs(tmp_path)["tabular"]
    out = tmp_path / "o.csv"
    cases = [
        (
            ["tabular", "recode", str(source), "-o", str(out)],
            "give at least one of --top, --bottom, --recode or --sample",
        ),
        (
            [
                "querylogs",
                "synthesize",
                "--users",
                "5",
                "--lines",
                "2",
                "-o",
                str(tmp_path / "s.tsv"),
            ],
            "--lines must be at least --users (5), got 2",
        ),
        (
            [
                "tabular",
                "dp-counts",
                str(source),
                "--column",
                "city",
                "--categories",
                "c0,c1,c0",
                "--epsilon",
                "1",
            ],
            "--categories names a category twice (value 'c0')",
        ),
    ]
    for command, words in cases:
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2, (command, result.output)
        assert f"error (InputError): {words}" in result.stderr, result.stderr
    monkeypatch.setenv("STRUCTANON_PSEUDONYM_KEY", "short")
    graph, _ = _inputs(tmp_path)["graphs"]
    result = CliRunner().invoke(
        main, ["graphs", "anonymize", str(graph), "-k", "2", "-o", str(tmp_path / "anon.txt")]
    )
    assert result.exit_code == 2, result.output
    assert "$STRUCTANON_PSEUDONYM_KEY holds 5 bytes" in result.stderr, result.stderr


def test_dp_counts_names_a_duplicate_category_in_python():
    import pandas as pd

    from structanon.errors import InputError
    from tabular import dp_counts

    with pytest.raises(InputError, match=r"given twice \(value 'Male'\)"):
        dp_counts(pd.Series(["Male", "Female"]), 1.0, ["Male", "Female", "Male"])


@pytest.mark.parametrize("spelling", ["tab", "\\t", "TAB"])
def test_sep_tab_means_a_tab_in_every_type_that_takes_sep(tmp_path, spelling):
    """`--sep tab` was a three-character separator in tabular and location and refused by
    querylogs; every type now reads `tab` and `\\t` as a tab."""
    tab = tmp_path / "t.txt"
    tab.write_text("age\tcity\n" + "".join(f"{20 + i % 7}\tc{i % 3}\n" for i in range(30)))
    loc = tmp_path / "l.txt"
    loc.write_text(
        "user\ttime\tlat\tlon\n"
        + "".join(f"u{i % 4}\t2024-01-01T10:00:00\t{40 + i / 1000}\t116\n" for i in range(40))
    )
    log = tmp_path / "q.txt"
    log.write_text("u\tq\tt\n" + "".join(f"{i % 6}\tq\t2006-03-01 10:00:00\n" for i in range(30)))
    runs = [
        ["tabular", "assess", str(tab), "--qi", "age,city"],
        ["location", "assess", str(loc)],
        ["querylogs", "assess", str(log), "--format", "csv", "--columns", "user=u,query=q,time=t"],
    ]
    for args in runs:
        result = CliRunner().invoke(main, [*args, "--sep", spelling, "--quiet"])
        assert result.exit_code == 0, (args[0], result.output)
