import json
import os

import pandas as pd
import pytest
from click.testing import CliRunner

import location
from location.cli import cli, demo
from location.io import read_fixes, regions_table, write_cloaked, write_geojson
from location.synthetic import synthetic_log
from structanon.errors import InputError


@pytest.fixture
def fixes_csv(tmp_path):
    df = synthetic_log(3000, 60, seed=2).rename(columns={"user": "uid", "time": "ts",
                                                          "lat": "latitude", "lon": "lng"})
    df["uid"] = "u" + df["uid"].astype(str).str.zfill(3)
    path = tmp_path / "fixes.csv"
    df.to_csv(path, index=False)
    return path


def _args(path, out, *extra):
    return ["cloak", str(path), "-k", "4", "--window", "1h", "--user", "uid", "--time", "ts",
            "--lat", "latitude", "--lon", "lng", "-o", str(out), *extra]


def test_cli_cloak_writes_outputs(fixes_csv, tmp_path):
    out, geo, rep = tmp_path / "c.parquet", tmp_path / "r.geojson", tmp_path / "rep.json"
    res = CliRunner().invoke(cli, _args(fixes_csv, out, "--method", "adaptive", "--geojson",
                                        str(geo), "--report", str(rep)))
    assert res.exit_code == 0, res.output
    table = pd.read_parquet(out)
    assert {"user", "window", "region_id", "region_wkt", "west", "south", "east",
            "north"} <= set(table.columns)
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
    res = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "d.csv")[:3] + ["1000"]
                             + _args(fixes_csv, tmp_path / "d.csv")[4:])
    assert res.exit_code == 3


def test_write_read_round_trip(tmp_path, key):
    r = location.cloak(synthetic_log(2000, 40, seed=1), k=3, pseudonymizer=key, measure=False)
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


def test_demo(tmp_path):
    r = demo(tmp_path, seed=0)
    assert r.checks.passed and r.n_individuals == 5485
    assert (tmp_path / "location_geolife_report.html").read_text().count("<img") >= 3
    for name in ("geolife", "synthetic"):
        assert (tmp_path / f"location_{name}_cloaked.csv").exists()
        assert json.loads((tmp_path / f"location_{name}_report.json").read_text())[
            "verification"]["passed"]


def test_cli_reads_parquet_with_epoch_times(tmp_path):
    df = synthetic_log(2000, 40, seed=4)
    df["time"] = df["time"].astype("int64") // 10**9  # epoch seconds
    path = tmp_path / "fixes.parquet"
    df.to_parquet(path)
    out = tmp_path / "out.tsv"
    res = CliRunner().invoke(cli, ["cloak", str(path), "-k", "3", "--window", "1h", "-o",
                                   str(out), "--quiet"])
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
    for extra, needle in ((["--report", str(tmp_path / "r.pdf")], "--report"),
                          (["--geojson", str(tmp_path / "r.txt")], "--geojson"),
                          (["--report", str(tmp_path / "missing" / "x" / "r.json")], None),
                          (["--window", "soon"], "--window"),
                          (["--cell-size", "0"], "--cell-size"),
                          (["--key-file", str(tmp_path / "no.key")], "--key-file")):
        res = CliRunner().invoke(cli, _args(garbage, tmp_path / "c.csv", *extra))
        if needle is None:  # a folder that can be created is fine: then the input is bad
            assert res.exit_code == 2
            continue
        assert res.exit_code == 2 and needle in res.output, (extra, res.output)
        assert not _outputs(tmp_path)
    res = CliRunner().invoke(cli, ["cloak", str(garbage), "-k", "0", "-o", str(tmp_path / "c.csv")])
    assert res.exit_code == 2 and "-k" in res.output
    res = CliRunner().invoke(cli, _args(garbage, tmp_path / "c.xlsx"))
    assert res.exit_code == 2 and "--output" in res.output and not _outputs(tmp_path)


def test_cli_unwritable_folder_and_failed_side_file_leave_nothing(fixes_csv, tmp_path,
                                                                  monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not os.access(locked, os.W_OK):  # root writes anywhere
            res = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "c.csv", "--report",
                                                str(locked / "r.json")))
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
    res = CliRunner().invoke(cli, _args(fixes_csv, tmp_path / "c.csv", "--geojson",
                                        str(tmp_path / "r.geojson"), "--report",
                                        str(tmp_path / "r.json")))
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert not _outputs(tmp_path)  # all or nothing: not even the main output


@pytest.mark.parametrize("content", ["", "uid,ts,latitude,lng\n",
                                     "uid;ts;latitude;lng\nu1;1714557600;40.0;116.0\n",
                                     "uid,ts,latitude,lng\nu1,soon,x,y\nu2,later,a,b\n"])
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
    res = CliRunner().invoke(cli, ["cloak", "--help"])
    text = " ".join(res.output.split())
    assert "it never decides the published order, labels or ids" in text
    assert "publication order become reproducible for whoever holds it" in text
    assert "--no-measures" in text and "--aggregate" in text
