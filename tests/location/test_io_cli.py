import json
import os
import re

import pandas as pd
import pytest
from click.testing import CliRunner

import location
from location.cli import cli
from location.io import read_fixes, regions_table, write_cloaked, write_geojson
from location.synthetic import synthetic_log
from structanon.errors import InputError


@pytest.fixture
def fixes_csv(tmp_path):
    df = synthetic_log(3000, 60, seed=2).rename(
        columns={"user": "uid", "time": "ts", "lat": "latitude", "lon": "lng"}
    )
    df["uid"] = "u" + df["uid"].astype(str).str.zfill(3)
    path = tmp_path / "fixes.csv"
    df.to_csv(path, index=False)
    return path


def _args(path, out, *extra, command="anonymize"):
    return [
        command,
        str(path),
        "-k",
        "4",
        "--window",
        "1h",
        "--user",
        "uid",
        "--time",
        "ts",
        "--lat",
        "latitude",
        "--lon",
        "lng",
        "-o",
        str(out),
        *extra,
    ]


def test_cli_cloak_writes_outputs(fixes_csv, tmp_path):
    out, geo, rep = tmp_path / "c.parquet", tmp_path / "r.geojson", tmp_path / "rep.json"
    res = CliRunner().invoke(
        cli,
        _args(fixes_csv, out, "--method", "adaptive", "--geojson", str(geo), "--report", str(rep)),
    )
    assert res.exit_code == 0, res.output
    table = pd.read_parquet(out)
    assert {"user", "window", "region_id", "region_wkt", "west", "south", "east", "north"} <= set(
        table.columns
    )
    assert not {"latitude", "lng"} & set(table.columns)
    per = table.groupby(["region_id", "window"])["user"].nunique()
    assert per.min() >= 4
    regions = json.loads(geo.read_text())
    assert regions["type"] == "FeatureCollection"
    assert all(f["properties"]["min_users_per_window"] >= 4 for f in regions["features"])
    assert json.loads(rep.read_text())["verification"]["passed"] is True
    assert "Privacy checks" in res.output


def test_cli_rejects_invalid_row_with_line(fixes_csv, tmp_path):
    df = pd.read_csv(fixes_csv)
    df.loc[6, "latitude"] = 123.0
    df.to_csv(fixes_csv, index=False)
    out = tmp_path / "c.csv"
    res = CliRunner().invoke(cli, _args(fixes_csv, out))
    assert res.exit_code == 2 and "line 8" in res.output and not out.exists()
    res = CliRunner().invoke(cli, _args(fixes_csv, out, "--drop-invalid", "--quiet"))
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(out)) <= len(df) - 1


def test_cli_html_report_and_infeasible(fixes_csv, tmp_path):
    rep = tmp_path / "rep.html"
    res = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "c.csv.gz", "--report", str(rep)))
    assert res.exit_code == 0, res.output
    html = rep.read_text()
    assert html.count("<img") >= 3 and "Unicity" in html
    res = CliRunner().invoke(
        cli,
        _args(fixes_csv, tmp_path / "d.csv")[:3]
        + ["1000"]
        + _args(fixes_csv, tmp_path / "d.csv")[4:],
    )
    assert res.exit_code == 3


def test_write_read_round_trip(tmp_path, key):
    r = location.cloak(synthetic_log(2000, 40, seed=1), k=3, pseudonymizer=key, measures=False)
    write_cloaked(r.data, tmp_path / "c.csv")
    back = pd.read_csv(tmp_path / "c.csv")
    assert (back["region_id"].to_numpy() == r.data["region_id"].to_numpy()).all()
    assert back["window"].iloc[0].endswith("Z")
    write_geojson(r.data, tmp_path / "r.geojson")
    table = regions_table(r.data)
    assert table["n_fixes"].sum() == len(r.data) and (table["min_users_per_window"] >= 3).all()
    with pytest.raises(InputError):
        write_geojson(r.data, tmp_path / "r.txt")
    assert list(read_fixes(tmp_path / "c.csv", columns=["user"]).columns)[0] == "user"


@pytest.mark.slow
def test_demo(package_demo):
    r, tmp_path = package_demo("location")
    assert r.checks.passed and r.n_individuals == 5485
    assert (tmp_path / "location_geolife_report.html").read_text().count("<img") >= 3
    for name in ("geolife", "synthetic"):
        assert (tmp_path / f"location_{name}_cloaked.csv").exists()
        assert json.loads((tmp_path / f"location_{name}_report.json").read_text())["verification"][
            "passed"
        ]


def test_cli_reads_parquet_with_epoch_times(tmp_path):
    df = synthetic_log(2000, 40, seed=4)
    df["time"] = df["time"].astype("int64") // 10**9  # epoch seconds
    path = tmp_path / "fixes.parquet"
    df.to_parquet(path)
    out = tmp_path / "out.tsv"
    res = CliRunner().invoke(
        cli, ["anonymize", str(path), "-k", "3", "--window", "1h", "-o", str(out), "--quiet"]
    )
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out, sep="\t")
    assert table.groupby(["region_id", "window"])["user"].nunique().min() >= 3


def _outputs(tmp_path):
    return [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "fixes.csv"]


@pytest.mark.parametrize("option", ["-o", "--geojson", "--report"])
def test_cli_refuses_an_output_naming_the_input(fixes_csv, tmp_path, option):
    before = fixes_csv.read_bytes()
    args = _args(fixes_csv, tmp_path / "c.csv")
    if option == "-o":
        args[args.index("-o") + 1] = str(fixes_csv)
    else:
        args += [option, str(fixes_csv)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "input" in res.output and "Traceback" not in res.output
    assert fixes_csv.read_bytes() == before and not _outputs(tmp_path)


def test_cli_checks_every_path_and_option_before_reading(tmp_path):
    garbage = tmp_path / "fixes.csv"
    garbage.write_bytes(b"\xff\xfe not a log at all")
    for extra, needle in (
        (["--report", str(tmp_path / "r.pdf")], "--report"),
        (["--geojson", str(tmp_path / "r.txt")], "--geojson"),
        (["--report", str(tmp_path / "missing" / "x" / "r.json")], None),
        (["--window", "soon"], "--window"),
        (["--cell-size", "0"], "--cell-size"),
        (["--key-file", str(tmp_path / "no.key")], "--key-file"),
    ):
        res = CliRunner().invoke(cli, _args(garbage, tmp_path / "c.csv", *extra))
        if needle is None:  # a folder that can be created is fine: then the input is bad
            assert res.exit_code == 2
            continue
        assert res.exit_code == 2 and needle in res.output, (extra, res.output)
        assert not _outputs(tmp_path)
    res = CliRunner().invoke(
        cli, ["anonymize", str(garbage), "-k", "0", "-o", str(tmp_path / "c.csv")]
    )
    assert res.exit_code == 2 and "-k" in res.output
    res = CliRunner().invoke(cli, _args(garbage, tmp_path / "c.xlsx"))
    assert res.exit_code == 2 and "--output" in res.output and not _outputs(tmp_path)


def test_cli_unwritable_folder_and_failed_side_file_leave_nothing(fixes_csv, tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not os.access(locked, os.W_OK):  # root writes anywhere
            res = CliRunner().invoke(
                cli, _args(fixes_csv, tmp_path / "c.csv", "--report", str(locked / "r.json"))
            )
            assert res.exit_code == 2 and "--report" in res.output
    finally:
        locked.chmod(0o700)
    assert not _outputs(tmp_path)
    # a file where a folder should be: refused before reading
    (tmp_path / "plain").write_text("x")
    res = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "plain" / "c.csv"))
    assert res.exit_code == 2 and "--output" in res.output
    (tmp_path / "plain").unlink()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("location.cli.write_geojson", broken)
    res = CliRunner().invoke(
        cli,
        _args(
            fixes_csv,
            tmp_path / "c.csv",
            "--geojson",
            str(tmp_path / "r.geojson"),
            "--report",
            str(tmp_path / "r.json"),
        ),
    )
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert not _outputs(tmp_path)  # all or nothing: not even the main output


@pytest.mark.parametrize(
    "content",
    [
        "",
        "uid,ts,latitude,lng\n",
        "uid;ts;latitude;lng\nu1;1714557600;40.0;116.0\n",
        "uid,ts,latitude,lng\nu1,soon,x,y\nu2,later,a,b\n",
    ],
)
def test_cli_empty_header_only_or_all_invalid_is_bad_input(tmp_path, content):
    path = tmp_path / "fixes.csv"
    path.write_text(content)
    res = CliRunner().invoke(cli, _args(path, tmp_path / "c.csv", "--drop-invalid"))
    assert res.exit_code == 2, res.output
    assert any(hint in res.output for hint in ("empty", "header", "--sep")), res.output
    assert not _outputs(tmp_path)


@pytest.mark.parametrize("bad", ["", "north", "inf"])
def test_cli_bad_latitude_names_lat_and_its_line(fixes_csv, tmp_path, bad):
    df = pd.read_csv(fixes_csv, dtype=str)
    df.loc[9, "latitude"] = bad
    df.to_csv(fixes_csv, index=False)
    res = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "c.csv"))
    assert res.exit_code == 2
    assert "column 'latitude'" in res.output and "line 11" in res.output, res.output


def test_cli_k1_warns_and_no_measures(fixes_csv, tmp_path):
    rep = tmp_path / "r.json"
    args = _args(fixes_csv, tmp_path / "c.csv", "--no-measures", "--report", str(rep))
    args[args.index("-k") + 1] = "1"
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "warning: k = 1" in res.output
    report = json.loads(rep.read_text())
    assert report["info"]["warnings"] and report["utility"] == {} and report["risk"] == {}
    assert report["parameters"]["seed"] == 0


def test_cli_aggregate_publishes_fix_counts(fixes_csv, tmp_path):
    per_fix, agg = tmp_path / "f.csv", tmp_path / "a.csv"
    assert CliRunner().invoke(cli, _args(fixes_csv, per_fix, "--quiet")).exit_code == 0
    assert CliRunner().invoke(cli, _args(fixes_csv, agg, "--aggregate", "--quiet")).exit_code == 0
    f, a = pd.read_csv(per_fix), pd.read_csv(agg)
    assert a["n_fixes"].sum() == len(f) and len(a) < len(f)
    assert not a.duplicated(["user", "window", "region_id"]).any()
    assert a.groupby(["region_id", "window"])["user"].nunique().min() >= 4


def test_help_texts_of_seed_and_key_file():
    res = CliRunner().invoke(cli, ["anonymize", "--help"])
    text = " ".join(res.output.split())
    assert "it never decides the published order, labels or ids" in text
    assert "publication order become reproducible for whoever holds it" in text
    assert "--no-measures" in text and "--aggregate" in text


def test_cloak_is_a_hidden_alias_of_anonymize(fixes_csv, tmp_path):
    listing = CliRunner().invoke(cli, ["--help"]).output
    assert "anonymize" in listing and "assess" in listing and "cloak " not in listing
    res = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "c.csv", "--quiet", command="cloak"))
    assert res.exit_code == 0, res.output
    assert (
        pd.read_csv(tmp_path / "c.csv").groupby(["region_id", "window"])["user"].nunique().min()
        >= 4
    )


@pytest.mark.parametrize("command", ["anonymize", "assess"])
def test_every_option_has_help_and_input_metavar(command):
    cmd = cli.commands[command]
    for param in cmd.params:
        if isinstance(param, __import__("click").Option):
            assert param.help, f"{command} {param.opts} has no help"
        else:
            assert param.metavar == "INPUT"


def test_anonymize_logs_progress_unless_quiet(fixes_csv, tmp_path):
    res = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "c.csv"))
    assert res.exit_code == 0, res.output
    for step in ("read", "prepare", "assign", "verify", "measures", "write"):
        assert f"structanon: {step} done in" in res.stderr, res.stderr
    assert "structanon:" not in res.stdout
    quiet = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "q.csv", "--quiet"))
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""


@pytest.mark.parametrize("command", ["anonymize", "assess"])
def test_unsupported_report_extension_exits_2_before_any_file(fixes_csv, tmp_path, command):
    out = tmp_path / "out"
    out.mkdir()
    args = [
        command,
        str(fixes_csv),
        "--user",
        "uid",
        "--time",
        "ts",
        "--lat",
        "latitude",
        "--lon",
        "lng",
        "--report",
        str(out / "r.pdf"),
    ]
    if command == "anonymize":
        args += ["-k", "4", "-o", str(out / "c.csv"), "--geojson", str(out / "g.geojson")]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "--report" in res.output, res.output
    assert list(out.iterdir()) == []
    assert "read" not in res.stderr  # refused before reading


def test_assess_emits_the_shared_shape(fixes_csv, tmp_path):
    rep = tmp_path / "a.json"
    res = CliRunner().invoke(
        cli,
        [
            "assess",
            str(fixes_csv),
            "--user",
            "uid",
            "--time",
            "ts",
            "--lat",
            "latitude",
            "--lon",
            "lng",
            "--window",
            "1h",
            "--json",
            "--report",
            str(rep),
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert set(doc) == {"data_type", "input", "risk", "warnings", "provenance"}
    assert doc["data_type"] == "location" and doc["input"] == "fixes.csv"
    assert doc == json.loads(rep.read_text())
    # the raw log's risk is the "before" of a release with the same window and cells
    df = pd.read_csv(fixes_csv)
    release = location.cloak(df, k=4, window="1h", user="uid", time="ts", lat="latitude", lon="lng")
    for name, value in release.risk["before"].items():
        assert doc["risk"][name] == pytest.approx(value), name
    assert doc["risk"]["n_users"] == df["uid"].nunique() and doc["risk"]["n_fixes"] == len(df)
    assert "structanon: read done in" in res.stderr
    table = CliRunner().invoke(
        cli,
        [
            "assess",
            str(fixes_csv),
            "--user",
            "uid",
            "--time",
            "ts",
            "--lat",
            "latitude",
            "--lon",
            "lng",
        ],
    )
    assert table.exit_code == 0 and "unicity_p4" in table.stdout and "assessment" in table.stdout


def test_report_has_provenance_and_words(fixes_csv, tmp_path):
    rep = tmp_path / "r.json"
    res = CliRunner().invoke(
        cli, _args(fixes_csv, tmp_path / "c.csv", "--report", str(rep), "--quiet")
    )
    assert res.exit_code == 0, res.output
    report = json.loads(rep.read_text())
    assert report["parameters"]["window"] == "1 hour"
    assert report["info"]["n_users"] == 60
    assert "in 1-hour windows" in report["info"]["transformation_text"]
    names = [f["name"] for f in report["provenance"]["inputs"]]
    assert names == ["fixes.csv"]


def test_report_figures_have_labelled_axes_and_outside_legends(small_log, key):
    import matplotlib

    matplotlib.use("Agg")
    from location._figures import report_figures

    release = location.cloak(small_log, k=5, window="1h", key=key)
    figures = report_figures(release)
    assert len(figures) == 4  # density before/after, region map, areas, unicity
    for title, fig, *_alt in figures:
        assert title
        for ax in fig.axes[:1]:
            assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title(), title
            legend = ax.get_legend()
            if legend is not None:  # entirely right of the plotting area
                fig.canvas.draw()
                renderer = fig.canvas.get_renderer()
                assert legend.get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1
        __import__("matplotlib.pyplot").pyplot.close(fig)


def test_assess_bad_input_and_options_exit_2(fixes_csv, tmp_path):
    header_only = tmp_path / "h.csv"
    header_only.write_text("user,time,lat,lon\n")
    res = CliRunner().invoke(cli, ["assess", str(header_only)])
    assert res.exit_code == 2 and "no fixes" in res.output, res.output
    for extra, needle in (
        (["--window", "soon"], "--window"),
        (["--cell-size", "-1"], "--cell-size"),
    ):
        res = CliRunner().invoke(cli, ["assess", str(fixes_csv), *extra])
        assert res.exit_code == 2 and needle in res.output, res.output
        assert "structanon: read" not in res.stderr  # refused before reading
    res = CliRunner().invoke(cli, ["assess", str(fixes_csv), "--user", "nobody"])
    assert res.exit_code == 2 and "nobody" in res.output


def test_cli_separator_as_typed(tmp_path):
    """--sep '\\t' is a tab (as for tabular and querylogs), several characters are taken
    literally, and the Dask engine, which reads one-character separators only, says so."""
    df = synthetic_log(1500, 30, seed=5)
    tabbed, piped = tmp_path / "fixes.txt", tmp_path / "piped.txt"
    df.to_csv(tabbed, sep="\t", index=False)
    piped.write_text(tabbed.read_text().replace("\t", " | "))
    key = tmp_path / "key"
    key.write_text("00112233445566778899aabbccddeeff")
    outputs = []
    for path, sep in ((tabbed, "\\t"), (piped, " | ")):
        out = tmp_path / f"{path.stem}.csv"
        args = ["anonymize", str(path), "--sep", sep, "-k", "3", "--window", "1h"]
        res = CliRunner().invoke(cli, [*args, "-o", str(out), "--quiet", "--key-file", str(key)])
        assert res.exit_code == 0, res.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    res = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(piped),
            "--sep",
            " | ",
            "-k",
            "3",
            "-o",
            str(tmp_path / "d.csv"),
            "--engine",
            "dask",
        ],
    )
    assert res.exit_code == 2 and "one-character" in res.output, res.output


def test_contradictory_options_are_refused(fixes_csv, tmp_path):
    out = tmp_path / "o.csv"
    for extra, message in (
        (["--max-suppression", "0.5"], "applies to --linkage trajectory only"),
        (["--lat", "ts"], "--time and --lat name the same column"),
    ):
        res = CliRunner().invoke(cli, _args(fixes_csv, out, *extra))
        assert res.exit_code == 2 and message in res.output, res.output
        assert not out.exists()
    args = ["assess", str(fixes_csv), "--user", "uid", "--time", "ts", "--lat", "ts"]
    res = CliRunner().invoke(cli, [*args, "--lon", "lng"])
    assert res.exit_code == 2 and "same column" in res.output, res.output


def test_dask_engine_names_the_first_invalid_fix_by_file_and_line(tmp_path):
    """The Dask engine counts invalid fixes per partition; the command names the first
    one's file and line as the pandas engine does."""
    parts = tmp_path / "parts"
    parts.mkdir()
    df = synthetic_log(600, 20, seed=6)
    df.iloc[:300].to_csv(parts / "a.csv", index=False)
    later = df.iloc[300:].copy()
    later.iloc[41, later.columns.get_loc("lat")] = 123.0  # line 43 of b.csv
    later.to_csv(parts / "b.csv", index=False)
    messages = []
    for engine, source in (("pandas", parts / "b.csv"), ("dask", parts / "*.csv")):
        res = CliRunner().invoke(
            cli,
            [
                "anonymize",
                str(source),
                "-k",
                "2",
                "-o",
                str(tmp_path / f"{engine}.csv"),
                "--engine",
                engine,
                "--quiet",
            ],
        )
        assert res.exit_code == 2, res.output
        assert f"file '{parts / 'b.csv'}'" in res.output and "line 43" in res.output
        messages.append(res.output.split("first:")[1])
    assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "window, words",
    [("15", "needs a unit: '15min'"), ("1ns", "at least one second"), ("500ms", "at least one")],
)
def test_a_window_without_unit_or_under_a_second_is_refused_by_name(
    fixes_csv, tmp_path, window, words
):
    """``--window 15`` was read as 15 nanoseconds, and the error blamed the grid size."""
    args = _args(fixes_csv, tmp_path / "c.csv")
    args[args.index("--window") + 1] = window
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and words in res.output and "window" in res.output
    assert not (tmp_path / "c.csv").exists()


def test_user_ids_are_read_as_written(tmp_path):
    """A user named ``NA`` or ``null`` was taken for a missing id (exit 2, or dropped with
    --on-bad-lines drop): ids are text as written, only an empty cell is missing."""
    source = tmp_path / "fixes.csv"
    users = ["NA", "null", "007", "7", "None"]
    source.write_text(
        "user,time,lat,lon\n"
        + "".join(f"{u},2024-01-01T10:0{i}:00,40.0,116.3\n" for i, u in enumerate(users))
    )
    df = read_fixes(source, columns=["user", "time", "lat", "lon"])
    assert df["user"].tolist() == users
    out = tmp_path / "c.csv"
    res = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "5", "--window", "1h", "-o", str(out), "--quiet"]
    )
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(out)) == 5  # every fix published: five distinct users


def test_an_invalid_fix_of_a_parquet_file_is_named_by_row(tmp_path):
    """A Parquet file has rows, not lines: its second row was called "line 4"."""
    source = tmp_path / "fixes.parquet"
    pd.DataFrame(
        {
            "user": ["a", "b", "c"],
            "time": ["2024-01-01T10:00:00"] * 3,
            "lat": [40.0, None, 40.0],
            "lon": [116.0] * 3,
        }
    ).to_parquet(source)
    res = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "2", "-o", str(tmp_path / "c.csv")]
    )
    assert res.exit_code == 2 and "row 2" in res.output
    assert not re.search(r"line \d", res.output)


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_invalid_fixes_are_named_by_file_line_past_blank_lines(tmp_path, engine):
    """The lines were data row + 2: a blank line above (which the reader skips) made every
    line named, in the error and in the --on-bad-lines drop notice, one too low."""
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    source = tmp_path / "fixes.csv"
    fix = "2024-01-01T10:00:00"
    source.write_text(
        f"user,time,lat,lon\na,{fix},40,116\n\n\nb,{fix},95,116\nc,{fix},40,116\n\nd,{fix},40,200\n"
    )
    out = tmp_path / "c.csv"
    args = ["anonymize", str(source), "-k", "1", "-o", str(out), "--engine", engine]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "line 5, value '95')" in res.output, res.output
    res = CliRunner().invoke(cli, [*args, "--on-bad-lines", "drop"])
    assert res.exit_code == 0, res.output
    assert "dropped (--on-bad-lines drop): lines 5, 8 (" in res.output


def test_the_dask_engine_names_an_invalid_parquet_fix_by_file_and_row(tmp_path):
    """The Dask engine named it "the row labelled 1 in partition 0", no file: in a folder
    of Parquet files the user could not tell which file held it."""
    pytest.importorskip("dask.dataframe")
    folder = tmp_path / "fixes"
    folder.mkdir()
    good = {"user": ["a", "b", "c"], "time": ["2024-01-01T10:00:00"] * 3, "lon": [116.0] * 3}
    pd.DataFrame({**good, "lat": [40.0, 40.1, 40.2]}).to_parquet(folder / "a.parquet")
    pd.DataFrame({**good, "lat": [40.0, 40.1, 95.0]}).to_parquet(folder / "b.parquet")
    out = tmp_path / "c.csv"
    args = ["anonymize", str(folder), "-k", "2", "-o", str(out), "--engine", "dask"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2, res.output
    assert "b.parquet" in res.output and "row 3" in res.output and "'lat'" in res.output
    assert "partition" not in res.output and not out.exists()


def test_user_ids_are_read_as_written_on_both_engines(tmp_path):
    pytest.importorskip("dask.dataframe")
    source = tmp_path / "fixes.csv"
    source.write_text(
        "user,time,lat,lon\nNA,2024-01-01T10:00:00,40.0,116.3\nbob,2024-01-01T10:00:00,40.0,116.3\n"
    )
    columns = ["user", "time", "lat", "lon"]
    lazy = location.read_fixes_dask(source, columns=columns).compute()
    assert lazy["user"].tolist() == read_fixes(source, columns=columns)["user"].tolist()
    assert lazy["user"].tolist() == ["NA", "bob"]
