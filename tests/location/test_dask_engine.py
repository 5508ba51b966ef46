"""The Dask engine of location end to end: CLI, lazy readers and writers, every measure."""

import json
import os

import numpy as np
import pandas as pd
import pytest
import shapely
from click.testing import CliRunner

import location
from location.cli import cli
from location.io import read_fixes_dask, write_cloaked, write_geojson
from location.synthetic import synthetic_log
from structanon.errors import InputError

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

KEY_HEX = "00112233445566778899aabbccddeeff"


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    df = synthetic_log(12_000, 150, seed=5)
    df["user"] = "u" + df["user"].astype(str)
    df.loc[df.index[:2], "time"] = pd.Timestamp("2024-05-04T00:00:00Z")  # a sparse window
    return df


@pytest.mark.parametrize(
    "aggregate,linkage", [(False, "window"), (True, "window"), (False, "pseudonym")]
)
def test_every_measure_equals_pandas(client, key, log, aggregate, linkage):
    want = location.cloak(
        log, k=4, window="30min", method="adaptive", key=key, aggregate=aggregate, linkage=linkage
    )
    # regression: the Dask engine measured linkage as if every release were window-linked
    got = location.cloak(
        dd.from_pandas(log, npartitions=4),
        k=4,
        window="30min",
        method="adaptive",
        key=key,
        aggregate=aggregate,
        linkage=linkage,
    )
    # regression: the Dask engine measured 5 utility figures where pandas measured 17
    assert list(got.utility) == list(want.utility) and len(want.utility) >= 16
    for name, value in want.utility.items():
        assert got.utility[name] == pytest.approx(value, rel=1e-12, abs=1e-12), name
    assert got.risk == want.risk
    # both models are checked on the lazy release too
    assert [c.model for c in got.checks.checks] == [c.model for c in want.checks.checks]


def test_engine_choice(client, key, log):
    ddf = dd.from_pandas(log, npartitions=2)
    with pytest.raises(InputError, match="engine='pandas' with a Dask"):
        location.cloak(ddf, k=4, key=key, engine="pandas")
    with pytest.raises(InputError, match="engine"):
        location.cloak(log, k=4, key=key, engine="spark")
    got = location.cloak(log, k=4, key=key, engine="dask", measures=False)
    want = location.cloak(log, k=4, key=key, measures=False)
    assert hasattr(got.data, "dask")
    pd.testing.assert_frame_equal(
        got.data.compute().drop(columns="region"), want.data.drop(columns="region")
    )
    with pytest.raises(InputError, match="linkage='trajectory' runs in memory only"):
        location._dask.cloak_dask(
            ddf,
            4,
            10**9,
            "fixed",
            {"user": "user", "time": "time", "lat": "lat", "lon": "lon"},
            0,
            cell_size=100.0,
            levels=None,
            drop_invalid=False,
            pseudonymizer=key,
            measures=False,
            aggregate=False,
            linkage="trajectory",
        )


def test_writers_accept_the_lazy_release(client, key, log, tmp_path):
    # regression: write_cloaked raised AttributeError and write_geojson TypeError
    lazy = location.cloak(dd.from_pandas(log, npartitions=3), k=4, key=key, measures=False)
    eager = location.cloak(log, k=4, key=key, measures=False)
    write_cloaked(lazy.data, tmp_path / "lazy.csv")
    write_cloaked(eager.data, tmp_path / "eager.csv")
    assert (tmp_path / "lazy.csv").read_bytes() == (tmp_path / "eager.csv").read_bytes()
    write_geojson(lazy.data, tmp_path / "lazy.geojson")
    write_geojson(eager.data, tmp_path / "eager.geojson")
    assert (tmp_path / "lazy.geojson").read_bytes() == (tmp_path / "eager.geojson").read_bytes()
    write_cloaked(lazy.data, tmp_path / "lazy.parquet")
    parts = sorted((tmp_path / "lazy.parquet").glob("part.*.parquet"))
    assert len(parts) == lazy.data.npartitions
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "lazy.parquet").stat().st_mode & 0o777 == 0o777 & ~umask
    back = pd.read_parquet(tmp_path / "lazy.parquet")
    flat = pd.read_csv(tmp_path / "eager.csv")
    assert back["user"].tolist() == flat["user"].tolist()
    assert back["region_id"].tolist() == flat["region_id"].tolist()
    geoms = shapely.from_wkb(back["geometry"].to_numpy())
    assert shapely.equals(geoms, shapely.from_wkt(flat["region_wkt"].to_numpy())).all()
    with pytest.raises(InputError, match="folder; this path exists"):
        write_cloaked(lazy.data, tmp_path / "lazy.parquet")


def _write_inputs(log: pd.DataFrame, tmp_path):
    log.to_csv(tmp_path / "log.csv", index=False)
    dd.from_pandas(log, npartitions=3).to_parquet(tmp_path / "logpq")
    (tmp_path / "key.txt").write_text(KEY_HEX)


def _run(args):
    return CliRunner().invoke(cli, ["anonymize", *map(str, args)], catch_exceptions=False)


def test_cli_dask_equals_pandas(log, tmp_path):
    _write_inputs(log, tmp_path)
    common = ["-k", 4, "--window", "30min", "--key-file", tmp_path / "key.txt", "--quiet"]
    a = _run(
        [tmp_path / "log.csv", "-o", tmp_path / "p.csv", "--geojson", tmp_path / "p.geojson"]
        + ["--report", tmp_path / "p.json", *common]
    )
    b = _run(
        [tmp_path / "log.csv", "-o", tmp_path / "d.csv", "--geojson", tmp_path / "d.geojson"]
        + ["--report", tmp_path / "d.json", "--engine", "dask", *common]
    )
    assert a.exit_code == 0 and b.exit_code == 0, b.output
    assert (tmp_path / "p.csv").read_bytes() == (tmp_path / "d.csv").read_bytes()
    assert (tmp_path / "p.geojson").read_bytes() == (tmp_path / "d.geojson").read_bytes()
    # a CSV output is replaced atomically, as the pandas engine replaces it (only a Parquet
    # folder is never overwritten): it was refused as "writes Parquet as a folder"
    again = _run(
        [tmp_path / "log.csv", "-o", tmp_path / "d.csv", "--engine", "dask", *common]
        + ["--no-measures"]
    )
    assert again.exit_code == 0, again.output
    assert (tmp_path / "p.csv").read_bytes() == (tmp_path / "d.csv").read_bytes()
    p, d = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "pd")
    assert p["risk"] == d["risk"] and p["utility"].keys() == d["utility"].keys()
    for name, value in p["utility"].items():
        assert d["utility"][name] == pytest.approx(value, rel=1e-12), name


def test_cli_dask_geoparquet_read_back(log, tmp_path):
    _write_inputs(log, tmp_path)
    out = tmp_path / "out.parquet"
    r = _run(
        [tmp_path / "logpq" / "*.parquet", "-o", out, "--engine", "dask", "-k", 4]
        + ["--key-file", tmp_path / "key.txt", "--no-measures", "--quiet"]
    )
    assert r.exit_code == 0, r.output
    want = location.cloak(pd.read_parquet(tmp_path / "logpq"), k=4, key=bytes.fromhex(KEY_HEX))
    back = pd.read_parquet(out)
    assert len(back) == len(want.data)
    assert back["user"].tolist() == want.data["user"].tolist()
    assert (back["window"].to_numpy() == want.data["window"].to_numpy()).all()
    gpd = pytest.importorskip("geopandas")
    g = gpd.read_parquet(out)
    assert g.crs is not None and g.crs.to_string() == "OGC:CRS84"
    assert shapely.equals(
        np.asarray(g.geometry.to_numpy()), np.asarray(want.data["region"].to_numpy())
    ).all()
    duckdb = pytest.importorskip("duckdb")
    n, regions = duckdb.sql(
        f"select count(*), count(distinct region_id) from read_parquet('{out}/*.parquet')"
    ).fetchone()
    assert n == len(want.data) and regions == want.data["region_id"].nunique()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "2"], "need --engine dask"),
        (["--engine", "dask", "--workers", "0"], "--workers"),
        (["--engine", "dask", "--memory-limit", "lots"], "--memory-limit"),
    ],
)
def test_cli_engine_options_bad(log, tmp_path, extra, message):
    _write_inputs(log, tmp_path)
    r = _run([tmp_path / "log.csv", "-o", tmp_path / "o.csv", "-k", 3, *extra])
    assert r.exit_code == 2 and message in r.output


def test_cli_dask_bad_inputs(log, tmp_path):
    _write_inputs(log, tmp_path)
    r = _run(
        [tmp_path / "nothing" / "*.parquet", "-o", tmp_path / "o.csv", "-k", 3]
        + ["--engine", "dask"]
    )
    assert r.exit_code == 2 and "matches no file" in r.output
    (tmp_path / "taken.parquet").mkdir()
    r = _run([tmp_path / "log.csv", "-o", tmp_path / "taken.parquet", "-k", 3, "--engine", "dask"])
    assert r.exit_code == 2 and "directory" in r.output
    with pytest.raises(InputError, match="column not found"):
        read_fixes_dask(tmp_path / "log.csv", ["user", "when", "lat", "lon"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .parquet file"):
        read_fixes_dask(tmp_path / "empty", ["user", "time", "lat", "lon"])


@pytest.mark.parametrize(
    ("line", "message"), [("u1,t,48.85,2.3\x0050", "NUL byte"), ("u1,t,48.85", "fewer fields")]
)
def test_lines_a_parsed_partition_would_hide_are_named(tmp_path, line, message):
    rows = ["user,time,lat,lon"] + ["u1,2020-01-01T10:00:00,48.85,2.35"] * 2000 + [line]
    (tmp_path / "log.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError, match=message) as info:
        read_fixes_dask(tmp_path / "log.csv", ["user", "time", "lat", "lon"], blocksize=4096)
    assert info.value.line == 2002 and info.value.path == str(tmp_path / "log.csv")
