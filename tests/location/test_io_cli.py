import json

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
