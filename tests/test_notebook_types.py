"""Native types in a notebook: dates as Mondrian quasi-identifiers, no dependency warnings."""

import warnings

import numpy as np
import pandas as pd
import pytest

import querylogs
import tabular
from structanon import Partition
from structanon.models import KAnonymity

KEY = b"0123456789abcdef-notebook"


def _table(n: int = 240, tz: str | None = "Europe/Paris") -> pd.DataFrame:
    rng = np.random.default_rng(3)
    when = pd.Series(pd.date_range("2024-03-20", periods=n, freq="90min", tz=tz))
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "sex": pd.Categorical(rng.choice(["F", "M"], n), categories=["F", "M", "X"]),
            "when": when.sample(frac=1.0, random_state=1).to_numpy(),
            "disease": rng.choice(["a", "b", "c"], n),
        }
    )


def _bounds(label: str) -> tuple[pd.Timestamp, pd.Timestamp]:
    lo, _, hi = label.partition("/")
    return pd.Timestamp(lo), pd.Timestamp(hi or lo)


def test_zoned_datetime_qi_is_published_as_ranges_in_its_zone():
    df = _table()
    release = tabular.anonymize(
        df, {"age": "numeric", "when": "numeric"}, "disease", [KAnonymity(5)], "mondrian", key=KEY
    )
    published = release.data["when"].astype(str)
    assert not published.str.fullmatch(r"\d+(-\d+)?").any()  # no nanosecond integers
    original = df["when"].iloc[np.asarray(release.source_index)].reset_index(drop=True)
    for label, stamp in zip(published.tolist(), original.tolist()):
        lo, hi = _bounds(label)
        assert lo.tzinfo is not None and lo <= stamp <= hi
        # each bound is written with the offset the Paris clock had at that instant
        for bound in (lo, hi):
            local = bound.tz_convert("Europe/Paris")
            assert bound.utcoffset() == local.utcoffset()
    # the range straddling the change to summer time shows both offsets
    assert published.str.contains(r"\+01:00").any() and published.str.contains(r"\+02:00").any()
    assert release.checks.passed
    assert 0 < release.utility["ncp"]["when"] < 1


def test_naive_datetime_qi_is_published_as_readable_ranges():
    df = _table(tz=None)
    release = tabular.anonymize(
        df, {"when": "numeric"}, None, [KAnonymity(4)], "mondrian", key=KEY, measures=False
    )
    labels = release.data["when"].astype(str)
    assert labels.str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d(/\d{4}-\d\d-\d\d \d\d:\d\d)?").all()


def test_categorical_quasi_identifiers_raise_no_pandas_warning():
    frame = pd.DataFrame(
        {
            "a": pd.Categorical(["x", "y", "x", "y"], categories=["x", "y", "z"]),
            "b": pd.Categorical(["u", "u", "v", "u"]),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        labels = Partition.from_keys(frame).labels
        df = _table(120)
        tabular.anonymize(
            df, {"sex": "set", "age": "numeric"}, "disease", [KAnonymity(3)], "mondrian", key=KEY
        )
    assert labels.tolist() == [0, 1, 2, 1]  # unused categories make no group


@pytest.mark.parametrize("tz", ["Europe/Paris", "UTC"])
def test_zoned_query_times_raise_no_numpy_warning(tz):
    log = querylogs.synthetic_log(30, 900, seed=1)
    log["time"] = pd.to_datetime(log["time"]).dt.tz_localize(tz)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("error", FutureWarning)
        release = querylogs.anonymize(log, 3, key=KEY)
    assert str(release.data["time"].dt.tz) == tz
    naive = log.assign(time=log["time"].dt.tz_convert("UTC").dt.tz_localize(None))
    same = querylogs.anonymize(naive, 3, key=KEY, measures=False)
    assert len(same.data) == len(release.data)  # the same instants, grouped the same way


def _geo_log():
    geopandas = pytest.importorskip("geopandas")
    import location

    df = location.synthetic_log(3000, 30, seed=4)
    points = geopandas.points_from_xy(df["lon"], df["lat"])
    gdf = geopandas.GeoDataFrame(df.drop(columns=["lat", "lon"]), geometry=points, crs=4326)
    return df, gdf


def test_geodataframe_in_any_crs_gives_the_release_of_its_coordinates():
    import location
    from location.io import regions_table

    df, gdf = _geo_log()
    plain = location.cloak(df, 5, key=KEY, measures=False)
    projected = location.cloak(gdf.to_crs("EPSG:3857"), 5, key=KEY, measures=False)
    assert projected.data.equals(plain.data)
    regions = projected.to_geodataframe()
    assert regions.crs.to_epsg() == 4326
    assert len(regions) == len(regions_table(plain.data)) and regions.geometry.name == "region"
    assert regions["n_users"].min() >= 5
    rows = location.to_geodataframe(projected, rows=True)
    assert len(rows) == len(projected.data) and rows.crs.to_epsg() == 4326


def test_geodataframe_mistakes_are_named():
    import shapely

    import location
    from structanon.errors import InputError

    df, gdf = _geo_log()
    with pytest.raises(InputError, match="no coordinate reference system"):
        location.cloak(gdf.set_crs(None, allow_override=True), 5, key=KEY)
    lines = gdf.copy()
    lines.loc[lines.index[3], "geometry"] = shapely.LineString([(0, 0), (1, 1)])
    with pytest.raises(InputError, match="points, not LineString") as err:
        location.cloak(lines, 5, key=KEY)
    assert err.value.row == 3
    with pytest.raises(InputError, match="both a point geometry and a 'lat' column"):
        location.cloak(gdf.assign(lat=1.0), 5, key=KEY)


def test_to_geodataframe_names_the_missing_package(monkeypatch):
    import sys

    import location

    df, _gdf = _geo_log()
    release = location.cloak(df, 5, key=KEY, measures=False)
    monkeypatch.setitem(sys.modules, "geopandas", None)
    with pytest.raises(ImportError, match="pip install geopandas"):
        release.to_geodataframe()
