import numpy as np
import pandas as pd
import pytest
import shapely

import location
from location import metrics, risk


def _release_frame(boxes, windows, users, index=None):
    return pd.DataFrame(
        {
            "user": users,
            "window": pd.to_datetime(windows, utc=True),
            "region_id": np.arange(len(boxes)),
            "region": [shapely.box(*b) for b in boxes],
        },
        index=index,
    )


def test_region_area_is_spherical_rectangle_area():
    d = _release_frame([(0, 0, 1, 1)], ["2024-01-01"], ["u"])
    # R^2 * (pi/180) * sin(1 deg)
    expected = 6_371_007.181**2 * np.radians(1) * np.sin(np.radians(1))
    assert metrics.region_areas(d).iloc[0] == pytest.approx(expected, rel=1e-6)


def test_centroid_error_zero_at_centre_and_half_diagonal_at_corner():
    d = _release_frame([(10, 0, 10.02, 0.02), (10, 0, 10.02, 0.02)], ["2024-01-01"] * 2, ["u", "v"])
    d["region_id"] = 5
    original = pd.DataFrame(
        {
            "lat": [0.01, 0.0],
            "lon": [10.01, 10.0],
            "time": pd.to_datetime(["2024-01-01"] * 2, utc=True),
        }
    )
    out = metrics.centroid_error(original, d)
    half_diag = 6_371_007.181 * np.radians(0.01) * np.sqrt(2)
    assert "centroid_error_m_max" not in out  # one fix's own distance: never reported
    assert out["centroid_error_m_p90"] == pytest.approx(0.9 * half_diag, rel=1e-3)
    assert out["centroid_error_m_mean"] == pytest.approx(half_diag / 2, rel=1e-3)


def test_range_queries_exact_when_regions_are_points_cells():
    # each fix alone in a tiny region: estimates equal true counts
    rng = np.random.default_rng(0)
    lat, lon = rng.uniform(40, 40.1, 300), rng.uniform(116, 116.1, 300)
    eps = 1e-7
    boxes = [(x - eps, y - eps, x + eps, y + eps) for x, y in zip(lon, lat)]
    d = _release_frame(boxes, ["2024-01-01"] * 300, [str(i) for i in range(300)])
    original = pd.DataFrame(
        {"lat": lat, "lon": lon, "time": pd.to_datetime(["2024-01-01"] * 300, utc=True)}
    )
    out = metrics.range_query_error(original, d, "1h", n_queries=50, seed=1)
    assert out["range_query_rel_error_mean"] < 1e-3
    sim = metrics.heatmap_similarity(original, d, bins=16)
    assert sim["heatmap_cosine"] > 0.999 and sim["heatmap_hellinger"] < 0.02


def test_range_query_error_counts_suppression_as_loss():
    original = pd.DataFrame(
        {
            "lat": [40.0] * 4,
            "lon": [116.0] * 4,
            "time": pd.to_datetime(["2024-01-01"] * 4, utc=True),
        }
    )
    empty = _release_frame([], [], [])
    out = metrics.range_query_error(original, empty, "1h", n_queries=5, seed=0)
    assert out["range_query_rel_error_mean"] == 1.0


def test_unicity_hand_example():
    # users 1 and 2 share point (A, 0); user 1 also has (B, 0), user 2 (C, 0), user 3 (A, 1)
    df = pd.DataFrame(
        {"user": [1, 1, 2, 2, 3], "region_id": ["A", "B", "A", "C", "A"], "window": [0, 0, 0, 0, 1]}
    )
    assert risk.unicity(df, 2, seed=0) == 1.0  # users 1 and 2 are unique given both points
    # p=1: user 3 is always unique, users 1 and 2 unique unless their draw is (A, 0)
    values = {risk.unicity(df, 1, seed=s) for s in range(30)}
    assert values <= {1 / 3, 2 / 3, 1.0} and len(values) > 1
    same = pd.DataFrame({"user": [1, 2, 3], "region_id": ["A"] * 3, "window": [0] * 3})
    assert risk.unicity(same, 1, seed=0) == 0.0
    assert np.isnan(risk.unicity(same, 2, seed=0))


def test_home_uniqueness_and_weights():
    df = pd.DataFrame({"user": [1, 1, 1, 2, 2, 3], "region_id": [5, 5, 6, 6, 6, 7]})
    assert risk.home_uniqueness(df) == 1.0  # homes 5, 6, 7
    df2 = df.assign(weight=[1, 1, 1, 1, 1, 9])
    assert risk.home_uniqueness(df2, weight="weight") == 1.0
    df3 = pd.DataFrame({"user": [1, 2, 3], "region_id": [5, 5, 6], "weight": [1, 1, 1]})
    assert risk.home_uniqueness(df3, weight="weight") == pytest.approx(1 / 3)


def test_release_measures_fall_after_cloaking(small_log, key):
    r = location.cloak(small_log, k=10, window="1h", method="adaptive", pseudonymizer=key, seed=3)
    for p in (1, 2, 4):
        assert r.risk["after"][f"unicity_p{p}"] <= r.risk["before"][f"unicity_p{p}"]
    assert r.risk["after"]["unicity_p1"] == 0.0  # each (region, window) holds >= 10 users
    assert r.risk["after"]["home_unique_share"] < r.risk["before"]["home_unique_share"]
    u = r.utility
    assert 0 <= u["suppression_share"] < 0.05 and u["n_regions"] > 10
    assert u["region_km2_median"] >= 0.01 - 1e-9  # at least one 100 m cell
    assert 0.5 < u["heatmap_cosine"] <= 1.0 and 0 <= u["range_query_rel_error_mean"]


def test_unicity_does_not_depend_on_row_order():
    # regression: points were numbered in row order, so the same trace gave other figures
    # when its rows came in another order (the dask and pandas paths disagreed)
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "user": rng.integers(0, 30, 2000),
            "region_id": rng.integers(0, 40, 2000),
            "window": rng.integers(0, 5, 2000),
        }
    )
    shuffled = df.sample(frac=1, random_state=1).reset_index(drop=True)
    for p in (1, 2, 4):
        assert risk.unicity(df, p, seed=0) == risk.unicity(shuffled, p, seed=0)


def _moves_log():
    """Two users each moving between two places 20 km apart over four hours."""
    t = pd.date_range("2024-05-01T08:00:00Z", periods=4, freq="1h")
    a, b = (40.0, 116.0), (40.18, 116.0)
    rows = []
    for user in ("u", "v"):
        for i, time in enumerate(t):
            lat, lon = a if i % 2 == 0 else b
            rows.append({"user": user, "time": time, "lat": lat, "lon": lon})
    return pd.DataFrame(rows)


def _exact_samples(log: pd.DataFrame, pseudonym_per_window: bool) -> pd.DataFrame:
    eps = 1e-4
    start = pd.to_datetime(log["time"], utc=True).dt.floor("1h")
    return pd.DataFrame(
        {
            "user": log["user"] + (start.astype(str) if pseudonym_per_window else ""),
            "start": start,
            "end": start + pd.Timedelta("1h"),
            "region_id": np.arange(len(log)),
            "region": [
                shapely.box(lon - eps, lat - eps, lon + eps, lat + eps)
                for lat, lon in zip(log["lat"], log["lon"])
            ],
        }
    )


def test_od_flow_error_exact_linked_and_lost_per_window():
    log = _moves_log()
    exact = metrics.od_flow_error(log, _exact_samples(log, False), "1h")
    assert exact["od_flow_error"] == 0.0 and exact["od_true_moves"] == 6
    per_window = metrics.od_flow_error(log, _exact_samples(log, True), "1h")
    assert per_window["od_flow_error"] == 1.0


def test_user_range_query_error_zero_on_exact_samples():
    log = _moves_log()
    out = metrics.user_range_query_error(log, _exact_samples(log, False), "1h", seed=0)
    assert out["user_range_query_rel_error_mean"] == pytest.approx(0.0, abs=1e-9)
    ext = metrics.sample_extents(_exact_samples(log, False))
    assert ext["sample_duration_min_median"] == 60.0 and ext["sample_extent_km_p90"] < 0.05


def test_linkage_success_window_vs_linked_on_a_cloaked_release(small_log, key):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        window = location.cloak(small_log, 5, window="1h", key=key)
        linked = location.cloak(small_log, 5, window="1h", key=key, linkage="pseudonym")
    for p in (2, 4):
        w, lk = window.risk["after"][f"linkage_p{p}"], linked.risk["after"][f"linkage_p{p}"]
        assert w < lk <= 1.0
        assert linked.risk["before"][f"linkage_p{p}"] >= lk
    assert "continuity_chain_share" in window.risk["after"]
    assert "continuity_chain_share" not in linked.risk["after"]
    # one window: user 1's two regions hold fresh pseudonyms, so nothing intersects and the
    # attacker bets on the smaller unit (two holders each); linked, they single user 1 out
    df = pd.DataFrame({"user": [1, 1, 2, 3], "place": [5, 6, 5, 6], "window": [0, 0, 0, 0]})
    assert risk.linkage_success(df, 2, linked=False, seed=0) == 0.5
    assert risk.linkage_success(df, 2, linked=True, seed=0) == 1.0


def test_linkage_measures_of_an_empty_release_are_undefined():
    # regression: an empty release raised numpy's "zero-size array" ValueError
    empty = pd.DataFrame({"user": [], "region_id": [], "place": [], "window": []})
    assert np.isnan(risk.unicity(empty, 1, seed=0))
    assert np.isnan(risk.linkage_success(empty, 2, seed=0))
