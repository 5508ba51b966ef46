"""Bad input to ``structanon tabular`` and ``tabular.anonymize`` (issue 14).

Every user mistake ends with exit 2 and a one-line message naming the file, option, column
or line; nothing is written and no input is overwritten.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import tabular
from structanon import Hierarchy, InputError
from structanon.models import KAnonymity
from tabular import cli as tab_cli
from tabular import io as tab_io

DATA = Path(tabular.__file__).resolve().parent / "data"


@pytest.fixture
def small(tmp_path) -> Path:
    """The first 300 records of the bundled Adult sample."""
    path = tmp_path / "in.csv"
    lines = (DATA / "adult_sample.csv").read_text().splitlines()[:301]
    path.write_text("\n".join(lines) + "\n")
    return path


def anonymize(path: Path, *args: str, qi: str = "sex,age"):
    return CliRunner().invoke(
        tab_cli.cli,
        ["anonymize", str(path), "--sep", ";", "--qi", qi, "--hierarchy-dir", str(DATA), *args],
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_input_error(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    for word in words:
        assert word in result.output, result.output


def test_output_or_report_naming_an_input_is_refused_and_the_input_kept(small, tmp_path):
    before = digest(small)
    assert_input_error(anonymize(small, "-k", "5", "-o", str(small)), "--output", "input")
    assert_input_error(
        anonymize(small, "-k", "5", "-o", str(tmp_path / "o.csv"), "--report", str(small)),
        "--report",
    )
    assert digest(small) == before
    hierarchy = tmp_path / "sex.csv"
    hierarchy.write_text((DATA / "adult_hierarchy_sex.csv").read_text())
    result = anonymize(small, "-k", "5", "--hierarchy", f"sex={hierarchy}", "-o", str(hierarchy))
    assert_input_error(result, "--output")
    assert hierarchy.read_text() == (DATA / "adult_hierarchy_sex.csv").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "sex.csv"]


def test_wrong_report_extension_is_refused_before_anything_is_written(small, tmp_path):
    out = tmp_path / "out.csv"
    assert_input_error(
        anonymize(small, "-k", "5", "-o", str(out), "--report", str(tmp_path / "r.txt")),
        "--report",
        ".json",
    )
    assert not out.exists() and not (tmp_path / "r.txt").exists()


def test_a_failing_report_leaves_no_main_output(small, tmp_path, monkeypatch):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tab_cli, "write_report", disk_full)
    out = tmp_path / "out.csv"
    result = anonymize(small, "-k", "5", "-o", str(out), "--report", str(tmp_path / "r.json"))
    assert_input_error(result, "No space left")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_an_output_folder_that_cannot_exist_is_refused_before_reading(small, tmp_path):
    result = anonymize(small, "-k", "5", "-o", str(small / "out.csv"))
    assert_input_error(result, "--output", "folder")


def test_non_utf8_hierarchy_and_input_name_the_file(small, tmp_path):
    bad = tmp_path / "sex.csv"
    bad.write_bytes(b"Male;*\n\xff\xfeFemale;*\n")
    assert_input_error(
        anonymize(small, "-k", "5", "--hierarchy", f"sex={bad}", "-o", str(tmp_path / "o.csv")),
        "sex.csv",
        "UTF-8",
    )
    latin = tmp_path / "latin.csv"
    latin.write_bytes(small.read_bytes().replace(b"Male", b"M\xe4le", 1))
    assert_input_error(anonymize(latin, "-k", "5", "-o", str(tmp_path / "o.csv")), "latin.csv")
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("content", ["", "sex;age;race\n"])
def test_empty_or_header_only_file_is_bad_input_with_a_separator_hint(tmp_path, content):
    path = tmp_path / "in.csv"
    path.write_text(content)
    assert_input_error(anonymize(path, "-k", "5", "-o", str(tmp_path / "o.csv")), "--sep")


def test_a_wrong_separator_gets_a_hint(small, tmp_path):
    result = CliRunner().invoke(
        tab_cli.cli,
        [
            "anonymize",
            str(small),
            "--qi",
            "sex",
            "-k",
            "5",
            "--hierarchy-dir",
            str(DATA),
            "-o",
            str(tmp_path / "o.csv"),
        ],
    )
    assert_input_error(result, "wrong --sep", "';'")


def test_unknown_output_extension_lists_the_accepted_ones(small, tmp_path):
    assert_input_error(
        anonymize(small, "-k", "5", "-o", str(tmp_path / "out.xlsx")), ".xlsx", ".csv", ".parquet"
    )
    assert not (tmp_path / "out.xlsx").exists()


def test_missing_hierarchy_folder_is_named_as_a_folder(small, tmp_path):
    result = CliRunner().invoke(
        tab_cli.cli,
        [
            "anonymize",
            str(small),
            "--sep",
            ";",
            "--qi",
            "sex",
            "-k",
            "5",
            "--hierarchy-dir",
            str(tmp_path / "nowhere"),
            "-o",
            str(tmp_path / "o.csv"),
        ],
    )
    assert_input_error(result, "folder does not exist")


def test_k_1_warns_on_stderr_and_in_the_release(
    small, tmp_path, adult_sample, adult_sample_hierarchies
):
    result = anonymize(small, "-k", "1", "-o", str(tmp_path / "o.csv"))
    assert result.exit_code == 0, result.output
    assert "k = 1 gives no protection" in result.stderr
    quiet = anonymize(small, "-k", "1", "-o", str(tmp_path / "q.csv"), "--quiet")
    # --quiet: no progress, no summary, but the warning
    assert quiet.exit_code == 0 and quiet.stdout == ""
    assert quiet.stderr.startswith("warning: k = 1 gives no protection")
    release = tabular.anonymize(
        adult_sample.head(200), adult_sample_hierarchies, None, [KAnonymity(1)], measures=False
    )
    assert any("k = 1" in w for w in release.info["warnings"])
    safe = tabular.anonymize(
        adult_sample.head(200), adult_sample_hierarchies, None, [KAnonymity(2)], measures=False
    )
    assert "warnings" not in safe.info


def test_a_value_missing_from_its_hierarchy_is_reported_by_file_line(small, tmp_path):
    lines = small.read_text().splitlines()
    lines[5] = lines[5].replace("Male", "Mxle", 1)  # file line 6 = data row 4 (0-based)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    assert_input_error(
        anonymize(bad, "-k", "5", "-o", str(tmp_path / "o.csv")), "line 6", "'Mxle'", "column 'sex'"
    )
    lines.insert(3, "")  # a blank line the reader skips still counts as a file line
    bad.write_text("\n".join(lines) + "\n")
    assert_input_error(anonymize(bad, "-k", "5", "-o", str(tmp_path / "o.csv")), "line 7")


def test_no_measures_skips_utility_and_risk(
    small, tmp_path, adult_sample, adult_sample_hierarchies
):
    report = tmp_path / "r.json"
    result = anonymize(
        small, "-k", "5", "-o", str(tmp_path / "o.csv"), "--no-measures", "--report", str(report)
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    assert not doc["utility"] and not doc["risk"] and doc["verification"]["passed"]
    release = tabular.anonymize(
        adult_sample.head(200), adult_sample_hierarchies, None, [KAnonymity(2)], measures=False
    )
    assert release.utility == {} and release.risk == {}


def test_api_parameter_errors_name_the_parameter(adult_sample, adult_sample_hierarchies):
    df, spec = adult_sample.head(100), adult_sample_hierarchies
    twice = pd.concat([df, df[["sex"]]], axis=1)
    with pytest.raises(InputError, match="duplicate column names: 'sex'"):
        tabular.anonymize(twice, spec, None, [KAnonymity(2)], measures=False)
    for kwargs, name in (
        ({"suppression_limit": 1.5}, "suppression_limit"),
        ({"suppression_limit": -0.1}, "suppression_limit"),
        ({"algorithm": "flash"}, "algorithm"),
        ({"metric": "gini"}, "metric"),
    ):
        with pytest.raises(InputError, match=name):
            tabular.anonymize(df, spec, None, [KAnonymity(2)], measures=False, **kwargs)
    with pytest.raises(InputError, match="k"):
        tabular.anonymize(df, spec, None, [KAnonymity(0)], measures=False)
    with pytest.raises(InputError, match="not both"):
        tabular.anonymize(
            df, spec, None, [KAnonymity(2)], key=b"a" * 16, pseudonymizer=b"b" * 16, measures=False
        )


def test_load_hierarchies_names_a_missing_folder(tmp_path):
    with pytest.raises(InputError, match="folder does not exist"):
        tab_io.load_hierarchies(["sex"], directory=tmp_path / "nowhere")
    assert isinstance(
        tab_io.read_hierarchy(DATA / "adult_hierarchy_sex.csv", ";", "sex"), Hierarchy
    )


@pytest.mark.parametrize(
    "args, words",
    [
        (["--seed", "-1"], ["--seed", ">= 0"]),
        (["--sep", ""], ["--sep"]),
        (["--hierarchy-sep", ";;"], ["--hierarchy-sep", "one character"]),
        (["--suppression-limit", "1.5"], ["--suppression-limit"]),
        (["-k", "0"], ["-k"]),
    ],
)
def test_bad_options_are_named_before_reading(small, tmp_path, args, words):
    result = CliRunner().invoke(
        tab_cli.cli,
        [
            "anonymize",
            str(small),
            "--qi",
            "sex",
            "-k",
            "5",
            "--hierarchy-dir",
            str(DATA),
            "-o",
            str(tmp_path / "o.csv"),
            *args,
        ],
    )
    assert_input_error(result, *words)
    assert not (tmp_path / "o.csv").exists()


def test_a_short_key_file_is_named(small, tmp_path):
    key = tmp_path / "short.key"
    key.write_text("short")
    result = anonymize(small, "-k", "5", "--key-file", str(key), "-o", str(tmp_path / "o.csv"))
    assert_input_error(result, "--key-file", "short.key", "16 bytes")


def test_a_negative_seed_is_an_input_error(adult_sample, adult_sample_hierarchies):
    with pytest.raises(InputError, match="seed"):
        tabular.anonymize(
            adult_sample.head(50),
            adult_sample_hierarchies,
            None,
            [KAnonymity(2)],
            seed=-3,
            measures=False,
        )


def test_assess_checks_its_report_before_reading(small, tmp_path):
    def assess(*args):
        return CliRunner().invoke(
            tab_cli.cli, ["assess", str(small), "--sep", ";", "--qi", "sex,age", *args]
        )

    before = digest(small)
    assert_input_error(assess("--report", str(small)), "--report")
    assert_input_error(assess("--report", str(tmp_path / "r.html")), ".json")
    assert digest(small) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_utility_is_a_deprecated_alias_of_measures_and_classifier(
    adult_sample, adult_sample_hierarchies
):
    df, spec = adult_sample.head(200), adult_sample_hierarchies
    with pytest.warns(DeprecationWarning, match="measures=False"):
        skipped = tabular.anonymize(df, spec, None, [KAnonymity(2)], utility=False)
    assert skipped.utility == {} and skipped.risk == {} and skipped.verify().passed
    with pytest.warns(DeprecationWarning, match="classifier=True"):
        full = tabular.anonymize(df, spec, "occupation", [KAnonymity(2)], utility="full")
    assert "classifier_accuracy" in full.utility
    assert (
        "classifier_accuracy"
        in tabular.anonymize(df, spec, "occupation", [KAnonymity(2)], classifier=True).utility
    )
    with pytest.raises(InputError, match="measures"):
        tabular.anonymize(df, spec, None, [KAnonymity(2)], measures="no")


def test_release_timings_come_from_the_shared_ending(adult_sample, adult_sample_hierarchies):
    release = tabular.anonymize(
        adult_sample.head(200), adult_sample_hierarchies, None, [KAnonymity(2)]
    )
    assert {"encode", "search", "publish", "shuffle", "verify", "measures", "total"} <= set(
        release.timings
    )
    assert repr(release.verifier).startswith("TabularVerifier(")


def test_transformation_is_said_in_words_with_hierarchy_labels(
    adult_sample, adult_sample_hierarchies
):
    release = tabular.anonymize(
        adult_sample, adult_sample_hierarchies, None, [KAnonymity(5)], measures=False
    )
    text = release.info["transformation_text"]
    for column, level in release.transformation.items():
        h = adult_sample_hierarchies[column]
        if level == 0:
            assert f"{column}: kept" in text
        else:
            assert f"{column}: " in text and f"(level {level} of {h.height})" in text
            assert repr(str(h.labels(level)[0])) in text  # a label of the chosen level
    mondrian = tabular.anonymize(
        adult_sample.head(300),
        {"age": "numeric"},
        None,
        [KAnonymity(5)],
        algorithm="mondrian",
        measures=False,
    )
    assert "Mondrian" in mondrian.info["transformation_text"]


@pytest.mark.parametrize("sep", [",", ";"])
def test_the_line_named_counts_the_line_breaks_inside_quoted_values(tmp_path, sep):
    rows = ["sex,age,city", 'M,30,"Pa\nris"', "F,31,Lyon", "M,,Nice"] + [
        f"{s},{a},Lille" for s, a in zip("FMFMF", range(33, 38))
    ]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows).replace(",", sep) + "\n")
    result = CliRunner().invoke(
        tab_cli.cli,
        ["anonymize", str(path), "--sep", sep, "--qi", "sex,age", "--set-qi", "sex"]
        + ["--numeric", "age", "--algorithm", "mondrian", "-k", "2", "-o", str(tmp_path / "o.csv")],
    )
    assert result.exit_code == 2 and "column 'age', line 5" in result.output, result.output


def test_contradictory_options_are_refused_before_reading(small, tmp_path):
    out = tmp_path / "o.csv"
    sex = str(DATA / "adult_hierarchy_sex.csv")
    age = str(DATA / "adult_hierarchy_age.csv")
    for args, qi, words in (
        (["-k", "2"], "sex,age,sex", ("--qi names a column twice", "'sex'")),
        (
            ["-k", "2", "--hierarchy", f"sex={sex}", "--hierarchy", f"sex={age}"],
            "sex,age",
            ("--hierarchy given twice", "'sex'"),
        ),
        (["-k", "2", "--drop-identifiers"], "sex,age", ("--drop-identifiers", "none is given")),
    ):
        assert_input_error(anonymize(small, *args, "-o", str(out), qi=qi), *words)
        assert not out.exists()


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_quasi_identifier_missing_from_the_file_is_named_so(small, tmp_path, engine):
    """With --hierarchy-dir, a --qi column the file lacks was "a quasi-identifier without a
    hierarchy"; it is a column missing from the file, and the error says so."""
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    out = str(tmp_path / "o.csv")
    args = ["-k", "2", "-o", out, "--engine", engine, "--algorithm", "mondrian"]
    result = anonymize(small, *args, qi="age,nope")
    assert result.exit_code == 2
    assert "column not in the file" in result.output and "'nope'" in result.output
    assert "'sex'" in result.output  # the columns the file has
    only_age = tmp_path / "hierarchies"
    only_age.mkdir()
    (only_age / "adult_hierarchy_age.csv").write_bytes(
        (DATA / "adult_hierarchy_age.csv").read_bytes()
    )
    result = CliRunner().invoke(
        tab_cli.cli,
        ["anonymize", str(small), "--sep", ";", "--qi", "age,sex", "--hierarchy-dir"]
        + [str(only_age), *args],
    )
    assert result.exit_code == 2 and "has no hierarchy" in result.output  # in the file
