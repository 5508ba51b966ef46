import numpy as np
import pandas as pd
import pytest

import location
from location._grid import CloakingGrid
from structanon.errors import InfeasibleError, InputError
from tests._support import window_key, window_pseudonyms

T0 = "2024-05-01T10:00:00Z"


def _log(points, times=None):
    """points: list of (user, lat, lon)."""
    users, lats, lons = zip(*points)
    return pd.DataFrame(
        {"user": users, "time": times or [T0] * len(points), "lat": lats, "lon": lons}
    )


def test_release_shape_and_independent_recount(small_log, key, recount, assert_contains):
    for method in ("fixed", "adaptive"):
        r = location.cloak(small_log, k=5, window="15min", method=method, pseudonymizer=key, seed=0)
        d = r.data
        assert list(d.columns) == ["user", "window", "region_id", "region"]
        assert not {"lat", "lon"} & set(d.columns)
        assert d.index.equals(pd.RangeIndex(len(d)))
        assert r.source_index.is_unique and r.source_index.isin(small_log.index).all()
        assert len(d) + r.suppressed == len(small_log) == r.n_individuals
        assert min(recount(d).values()) >= 5
        assert_contains(r, small_log)
        assert str(d["window"].dt.tz) == "UTC"
        assert (d["window"].dt.minute % 15 == 0).all()
        assert r.checks.passed and r.partition.n_suppressed == r.suppressed


def test_users_are_pseudonymized_with_the_key(small_log, key):
    r = location.cloak(small_log, k=5, key=key)  # default: one pseudonym per user and window
    source = small_log.loc[r.source_index]
    bound = window_key(key, small_log)  # the key bound to the log's content
    expected = window_pseudonyms(
        bound, source["user"], source["time"], "15min", r.data["region_id"]
    )
    assert (r.data["user"].to_numpy() == expected).all()
    assert not set(small_log["user"].astype(str)) & set(r.data["user"])
    # no pseudonym appears in two windows or two regions, so neither a user's windows nor
    # the regions of one window can be joined through it
    assert (r.data.groupby("user")["window"].nunique() == 1).all()
    assert (r.data.groupby("user")["region_id"].nunique() == 1).all()
    linked = location.cloak(small_log, k=5, key=key, linkage="pseudonym")
    expected = key.pseudonymize(small_log.loc[linked.source_index, "user"].astype(str))
    assert (linked.data["user"].to_numpy() == expected).all()
    assert any("trajectories stay linkable" in w for w in linked.info["warnings"])


def test_dense_cell_stays_at_level_zero():
    # three users within a few metres: one 100 m cell holds them all
    r = location.cloak(
        _log([("a", 40.0, 116.0), ("b", 40.00001, 116.00001), ("c", 40.00002, 116.0)]), k=3
    )
    level, kind, _, _ = CloakingGrid.decode(r.data["region_id"].to_numpy())
    assert r.suppressed == 0 and (level == 0).all() and r.data["region_id"].nunique() == 1


def test_outlier_is_merged_upwards_not_suppressed(recount, assert_contains):
    pts = [(u, 40.0 + i * 1e-5, 116.0) for i, u in enumerate("abc")] + [("d", 40.2, 116.3)]
    r = location.cloak(_log(pts), k=3, method="fixed")
    assert r.suppressed == 0
    # the outlier's leftover (1 user) joined the group of a, b, c at the top
    assert r.data["region_id"].nunique() == 1
    assert recount(r.data) == {(int(r.data["region_id"].iloc[0]), r.data["window"].iloc[0]): 4}
    assert_contains(r, _log(pts))


def test_window_with_too_few_users_is_suppressed_and_counted():
    pts = [("a", 40.0, 116.0), ("b", 40.0, 116.0), ("c", 40.0, 116.0), ("a", 40.0, 116.0)]
    times = [T0, T0, T0, "2024-05-01T12:00:00Z"]
    r = location.cloak(_log(pts, times), k=2)
    assert r.suppressed == 1 and len(r.data) == 3 and 3 not in r.source_index
    assert r.info["fixes_suppressed_by_cloaking"] == 1


def test_adaptive_uses_casper_half_cells(recount, assert_contains):
    # two level-0 cells side by side, 2 users each: k=4 needs both, which is the wide half
    grid = CloakingGrid.fit(116.0, 116.02, 40.0, 40.02, cell_size=100.0)
    lon_e, lat_e = grid.lon_edges(), grid.lat_edges()
    # choose a parent block at level 1 and place users in its two lower cells
    x, y = 2 * 8, 2 * 8
    left = 0.5 * (lon_e[x] + lon_e[x + 1])
    right = 0.5 * (lon_e[x + 1] + lon_e[x + 2])
    lat = 0.5 * (lat_e[y] + lat_e[y + 1])
    pts = [("a", lat, left), ("b", lat, left), ("c", lat, right), ("d", lat, right)]
    # four users at each corner fix the grid's extent and are 4-anonymous by themselves
    pts += [(f"e{i}", 40.0, 116.0) for i in range(4)] + [(f"f{i}", 40.02, 116.02) for i in range(4)]
    df = _log(pts)
    fixed = location.cloak(df, k=4, method="fixed", cell_size=100.0)
    adaptive = location.cloak(df, k=4, method="adaptive", cell_size=100.0)
    for r in (fixed, adaptive):
        assert min(recount(r.data).values()) >= 4
        assert_contains(r, df)

    def rows_of(r, labels):
        return np.flatnonzero(r.source_index.isin(labels))

    a_rows, f_rows = rows_of(adaptive, [0, 1, 2, 3]), rows_of(fixed, [0, 1, 2, 3])
    lv, kind, _, _ = CloakingGrid.decode(adaptive.data["region_id"].to_numpy()[a_rows])
    assert (lv == 1).all() and (kind == 1).all()  # wide half of a level-1 parent
    flv, fkind, _, _ = CloakingGrid.decode(fixed.data["region_id"].to_numpy()[f_rows])
    assert (flv == 1).all() and (fkind == 0).all()  # the whole level-1 square
    a_area = location.metrics.region_areas(adaptive.data.iloc[a_rows[:1]]).iloc[0]
    f_area = location.metrics.region_areas(fixed.data.iloc[f_rows[:1]]).iloc[0]
    assert a_area == pytest.approx(f_area / 2)


def test_time_zones_and_epoch_seconds_agree(key):
    base = _log([(u, 40.0, 116.0) for u in "abcd"])
    iso_utc = base.assign(time=["2024-05-01T10:14:59Z", "2024-05-01T10:15:00Z"] * 2)
    iso_off = base.assign(time=["2024-05-01T12:14:59+02:00", "2024-05-01T12:15:00+02:00"] * 2)
    epoch = base.assign(time=[1714558499, 1714558500] * 2)
    naive = base.assign(time=pd.to_datetime(["2024-05-01 10:14:59", "2024-05-01 10:15:00"] * 2))
    results = [
        location.cloak(d, k=2, pseudonymizer=key).data for d in (iso_utc, iso_off, epoch, naive)
    ]
    for d in results[1:]:
        pd.testing.assert_frame_equal(d.drop(columns="region"), results[0].drop(columns="region"))
    assert results[0]["window"].nunique() == 2


def test_invalid_rows_rejected_with_line_or_dropped_and_counted():
    df = _log(
        [
            ("a", 40.0, 116.0),
            ("b", 95.0, 116.0),
            ("c", 40.0, 116.0),
            (None, 40.0, 116.0),
            ("d", 40.0, 200.0),
            ("e", float("nan"), 116.0),
        ]
    )
    df.loc[2, "time"] = "not a time"
    with pytest.raises(InputError) as err:
        location.cloak(df, k=1, source="fixes.csv")
    assert err.value.line == 3 and err.value.column == "lat"
    with pytest.raises(InputError) as err:
        location.cloak(df, k=1)
    assert err.value.row == 1
    r = location.cloak(df, k=1, drop_invalid=True)
    assert len(r.data) == 1 and r.suppressed == 5 and r.n_individuals == 6
    assert r.info["invalid_reasons"] == {
        "missing user": 1,
        "unparseable or missing time": 1,
        "missing or non-numeric latitude/longitude": 1,
        "latitude outside [-90, 90]": 1,
        "longitude outside [-180, 180]": 1,
    }


def test_times_beyond_the_nanosecond_range_are_named_as_such():
    """Epoch milliseconds given as seconds, and a year such as 1500 or 2300, were counted as
    "unparseable" times, which sent users hunting for a format error."""
    df = _log([("a", 40.0, 116.0), ("b", 40.0, 116.0), ("c", 40.0, 116.0), ("d", 40.0, 116.0)])
    df["time"] = df["time"].astype(object)
    df.loc[0, "time"] = "1714557600000"  # 2024-05-01 in milliseconds
    with pytest.raises(InputError, match="epoch seconds, not milliseconds") as err:
        location.cloak(df, k=1, source="fixes.csv")
    assert err.value.line == 2 and err.value.column == "time"
    df.loc[1, "time"] = "2300-01-01T00:00:00"
    df.loc[2, "time"] = "2024-13-45T00:00:00"  # a format error stays one
    r = location.cloak(df, k=1, drop_invalid=True)
    assert r.info["invalid_reasons"] == {
        "unparseable or missing time": 1,
        "time outside the years 1677-2262 (numbers are epoch seconds, not milliseconds)": 2,
    }
    assert r.suppressed == 3 and r.n_individuals == 4


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_spaces_around_a_user_id_do_not_make_another_user(engine):
    """ "000" on some lines and " 000" on others (an export's ", " separator) were two users:
    one person passed as k = 2 distinct users in every region."""
    df = _log([("000", 40.0, 116.0), (" 000", 40.0, 116.0), ("000 ", 40.0, 116.0)])
    if engine == "dask":
        dd = pytest.importorskip("dask.dataframe")
        df = dd.from_pandas(df, npartitions=2)
    with pytest.raises(InfeasibleError, match="number of users in the log \\(1\\)"):
        location.cloak(df, k=2)
    r = location.cloak(_log([("000", 40.0, 116.0), (" 000", 40.0, 116.0), (7, 40.0, 116.0)]), k=2)
    assert r.info["n_users"] == 2  # a number among the texts is kept as it is


def test_a_number_and_its_text_are_one_user():
    """7 and "7" in one column were counted as two users, then given one pseudonym: the
    release failed its own recount (a VerificationError, "a bug") or, beside other users,
    counted one person twice towards k."""
    with pytest.raises(InfeasibleError, match="number of users in the log \\(2\\)"):
        location.cloak(_log([(7, 40.0, 116.0), ("7", 40.0, 116.0), ("8", 40.0, 116.0)]), k=3)
    rows = [(7, 40.0, 116.0), ("7", 40.0, 116.0), ("8", 40.0, 116.0), ("9", 40.0, 116.0)]
    r = location.cloak(_log(rows), k=3, aggregate=False)
    assert r.info["n_users"] == 3 and r.data["user"].nunique() == 3


@pytest.mark.parametrize(
    "lat",
    [
        pd.Series([40.0, 40.0, 40.0, True], dtype=object),
        pd.Series([True, True, False, True]),
        pd.Series([40.0, 40.0, 40.0, np.True_], dtype=object),
    ],
)
def test_a_true_or_false_coordinate_is_refused(lat):
    """pandas reads True as 1.0: a latitude of 1 degree stretched the grid over the equator."""
    points = [(u, 40.0, 116.0) for u in "abcd"]
    df = _log(points).assign(lat=lat)
    with pytest.raises(InputError, match="non-numeric latitude") as err:
        location.cloak(df, k=2)
    assert "'lat'" in str(err.value)
    if pd.api.types.is_bool_dtype(lat.dtype):
        return  # no fix left to publish
    r = location.cloak(df, k=2, on_bad_lines="drop", measures=False)
    assert r.info["invalid_fixes_dropped"] == 1 and r.n_individuals == 4 and r.suppressed == 1


def test_parameter_and_feasibility_errors():
    df = _log([("a", 40.0, 116.0), ("b", 40.0, 116.0)])
    with pytest.raises(InfeasibleError):
        location.cloak(df, k=3)
    apart = df.assign(time=["2024-05-01T10:00:00Z", "2024-05-01T11:00:00Z"])
    with pytest.raises(InfeasibleError, match="no time window"):
        location.cloak(apart, k=2)
    for bad in (
        {"k": 0},
        {"k": 2.5},
        {"k": 2, "method": "grid"},
        {"k": 2, "window": "-5min"},
        {"k": 2, "window": "soon"},
        {"k": 2, "user": "uid"},
    ):
        with pytest.raises(InputError):
            location.cloak(df, **bad)


def test_release_independent_of_input_order_and_linked_through_source_index(small_log, key):
    shuffled = small_log.sample(frac=1.0, random_state=3)
    a = location.cloak(small_log, k=4, method="adaptive", key=key)
    b = location.cloak(shuffled, k=4, method="adaptive", key=key)
    pd.testing.assert_frame_equal(a.data.drop(columns="region"), b.data.drop(columns="region"))
    # ties are identical rows, so both links give the same published user per row
    assert (
        small_log.loc[a.source_index, "user"].to_numpy()
        == shuffled.loc[b.source_index, "user"].to_numpy()
    ).all()


def test_larger_k_gives_larger_regions(small_log, key):
    areas = []
    for k in (2, 5, 20):
        r = location.cloak(small_log, k=k, method="fixed", pseudonymizer=key, seed=0)
        areas.append(r.utility["fix_weighted_mean_km2"])
    assert areas[0] <= areas[1] <= areas[2]
    assert np.isfinite(areas).all()


def test_verifier_detects_tampering(small_log, key):
    import shapely

    r = location.cloak(small_log, k=5, pseudonymizer=key, measures=False)
    data = r.data.copy()
    data.iloc[0, data.columns.get_loc("region_id")] = 12345  # a region with one user
    checks = location.verify_cloaked(data, 5)
    assert not checks[0].passed and checks[0].worst == 1 and len(checks[0].failing_groups) == 1
    data = r.data.copy()
    data.iloc[0, data.columns.get_loc("region")] = shapely.box(0, 0, 1, 1)
    checks = location.verify_cloaked(data, 5)
    assert checks[0].passed and not checks[1].passed
    assert location.verify_cloaked(r.data, 5)[0].passed


def test_string_dtypes_and_numeric_strings(key):
    base = _log([(u, 40.0, 116.0) for u in "abc"])
    as_text = base.assign(
        time=["1714557600", "1714557601", "1714557602"], lat=["40.0"] * 3, lon=["116.0"] * 3
    ).astype("string")
    a = location.cloak(
        base.assign(time=[1714557600, 1714557601, 1714557602]), k=3, pseudonymizer=key
    ).data
    b = location.cloak(as_text, k=3, pseudonymizer=key).data
    pd.testing.assert_frame_equal(a.drop(columns="region"), b.drop(columns="region"))


def test_duplicate_input_index_is_handled(small_log, key):
    dup = small_log.set_axis(np.arange(len(small_log)) // 2)  # every label twice
    r = location.cloak(dup, k=5, key=key)
    s = location.cloak(small_log, k=5, key=key)
    pd.testing.assert_frame_equal(r.data.drop(columns="region"), s.data.drop(columns="region"))
    assert r.utility["centroid_error_m_median"] == s.utility["centroid_error_m_median"]
    assert (r.source_index == s.source_index // 2).all()


@pytest.mark.parametrize(
    "bad, name",
    [
        ({"k": 0}, "k"),
        ({"k": "3"}, "k"),
        ({"k": 2, "method": "grid"}, "method"),
        ({"k": 2, "window": "soon"}, "window"),
        ({"k": 2, "cell_size": -1.0}, "cell_size"),
        ({"k": 2, "levels": -1}, "levels"),
    ],
)
def test_bad_parameters_are_named(bad, name):
    df = _log([("a", 40.0, 116.0), ("b", 40.0, 116.0)])
    with pytest.raises(InputError, match=name):
        location.cloak(df, **bad)


@pytest.mark.parametrize("value", [float("nan"), "north", float("inf")])
def test_bad_latitude_names_the_latitude_column(value):
    df = _log([("a", 40.0, 116.0), ("b", 40.0, 116.0)]).astype({"lat": object})
    df.loc[1, "lat"] = value
    with pytest.raises(InputError) as err:
        location.cloak(df, k=1, source="fixes.csv")
    assert err.value.column == "lat" and err.value.line == 3
    df = _log([("a", 40.0, 116.0), ("b", 40.0, 116.0)]).astype({"lon": object})
    df.loc[0, "lon"] = value
    with pytest.raises(InputError) as err:
        location.cloak(df, k=1, source="fixes.csv")
    assert err.value.column == "lon" and err.value.line == 2


def test_no_valid_fix_is_bad_input_not_infeasible():
    empty = _log([("a", 40.0, 116.0)]).iloc[:0]
    with pytest.raises(InputError, match="no fixes"):
        location.cloak(empty, k=2)
    invalid = _log([("a", 95.0, 116.0), ("b", 40.0, 400.0)])
    with pytest.raises(InputError, match="all 2 rows are invalid"):
        location.cloak(invalid, k=2, drop_invalid=True)


def test_k1_warns_in_info(key):
    with pytest.warns(UserWarning, match="k = 1"):
        r = location.cloak(_log([("a", 40.0, 116.0)]), k=1, key=key)
    assert r.info["warnings"] and "k = 1" in r.info["warnings"][0]
    assert location.cloak(_log([(u, 40.0, 116.0) for u in "ab"]), k=2).info["warnings"] == []


def test_aggregate_api_counts_fixes(small_log, key):
    per_fix = location.cloak(small_log, k=5, key=key)
    agg = location.cloak(small_log, k=5, key=key, aggregate=True)
    assert list(agg.data.columns) == ["user", "window", "region_id", "region", "n_fixes"]
    assert agg.data.index.equals(pd.RangeIndex(len(agg.data)))
    expected = per_fix.data.groupby(["window", "region_id", "user"], sort=True).size().to_numpy()
    assert (agg.data["n_fixes"].to_numpy() == expected).all()
    assert agg.checks.passed and agg.suppressed == per_fix.suppressed
    # source_index: each published fix's input label -> its aggregated row
    rows = agg.source_index
    assert len(rows) == len(per_fix.data) and set(rows.index) <= set(small_log.index)
    source = small_log.loc[rows.index]
    regions = agg.data["region_id"].to_numpy()[rows.to_numpy()]
    users = window_pseudonyms(
        window_key(key, small_log), source["user"], source["time"], "15min", regions
    )
    assert (agg.data["user"].to_numpy()[rows.to_numpy()] == users).all()


def test_duplicate_column_names_are_named():
    df = _log([("a", 40.0, 116.0), ("b", 40.0, 116.0)])
    df.columns = ["user", "time", "lat", "lat"]
    with pytest.raises(InputError, match="duplicate column names: 'lat'"):
        location.cloak(df, k=2)


def test_release_models_are_core_privacy_models(small_log, key):
    from structanon.models import PrivacyModel

    r = location.cloak(small_log, k=5, key=key, measures=False)
    count, polygons = r.models
    assert all(isinstance(m, PrivacyModel) for m in r.models)
    assert isinstance(count, location.WindowKAnonymity) and count.k == 5
    assert count.monotone and count.monotone_with_suppression
    assert isinstance(polygons, location.OnePolygonPerRegion)
    assert r.to_dict()["models"] == [
        {"model": "k-anonymity per (region, window)", "k": 5},
        {"model": "one polygon per region_id"},
    ]
    # the models are what the verifier runs: each check names its model's failure
    bad = r.data.copy()
    bad.loc[0, "user"] = "someone-else"
    assert count.check(r.data).passed and polygons.check(r.data).passed
    assert count.check(bad.iloc[:1]).worst == 1.0


def test_measure_alias_is_deprecated(small_log, key):
    with pytest.warns(DeprecationWarning, match="measures="):
        r = location.cloak(small_log, k=5, key=key, measure=False)
    assert r.utility == {} and r.risk == {}


def test_window_and_transformation_in_words(small_log, key):
    r = location.cloak(small_log, k=5, window="15min", key=key, measures=False)
    assert r.parameters["window"] == "15 minutes"
    assert r.info["n_users"] == small_log["user"].nunique()
    text = r.info["transformation_text"]
    assert "in 15-minute windows; pseudonyms per user" in text and "km²" in text
    assert "15-minute time window (the log has 300 users)" in r.summary()
    hourly = location.cloak(small_log, k=5, window="2h", key=key, measures=False)
    assert hourly.parameters["window"] == "2 hours"
    # the stated range is the published regions' areas
    areas = location.metrics.region_areas(r.data) / 1e6
    low = text.split("grid regions of ")[1].split("-")[0]
    assert float(low) == pytest.approx(areas.min(), rel=0.05)


def test_a_true_false_time_column_is_no_time():
    df = _log([("a", 40.0, 116.0), ("b", 40.0, 116.0)]).assign(time=True)
    with pytest.raises(InputError, match="unparseable or missing time"):
        location.cloak(df, k=2)
