"""Utility of a cloaked location log: region areas, displacement, query error, density.

``original`` arguments are DataFrames of the valid input fixes with columns ``lat``,
``lon`` (degrees) and ``time`` (datetime), labelled so that each published fix has the
label of its row in ``Release.data`` (columns ``user``, ``window``, ``region_id``,
``region``); ``cloak`` passes the published fixes first, in publication order, under a
``RangeIndex``, then the suppressed ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon.errors import InputError

from ._grid import EARTH_RADIUS, EDGE_PAD_DEG, lonlat_rectangle_area
from ._input import parse_window

__all__ = [
    "region_bounds",
    "region_areas",
    "region_area_distribution",
    "centroid_error",
    "suppression_share",
    "range_query_error",
    "heatmap_similarity",
    "utility_summary",
    "as_samples",
    "sample_extents",
    "user_range_query_error",
    "od_flow_error",
    "trajectory_utility",
]


def _quantiles(values: np.ndarray, scale: float = 1.0) -> dict[str, float]:
    if values.size == 0:
        return {
            "mean": float("nan"),
            "median": float("nan"),
            "p90": float("nan"),
            "max": float("nan"),
        }
    q = np.quantile(values, [0.5, 0.9]) / scale
    return {
        "mean": float(values.mean() / scale),
        "median": float(q[0]),
        "p90": float(q[1]),
        "max": float(values.max() / scale),
    }


def region_bounds(data: pd.DataFrame) -> pd.DataFrame:
    """West, south, east, north (degrees, unpadded) of each published ``region_id``."""
    first = data.drop_duplicates("region_id")
    b = shapely.bounds(np.asarray(first["region"].to_numpy())) + np.array(
        [EDGE_PAD_DEG, EDGE_PAD_DEG, -EDGE_PAD_DEG, -EDGE_PAD_DEG]
    )
    return pd.DataFrame(
        b,
        columns=["west", "south", "east", "north"],
        index=pd.Index(first["region_id"].to_numpy(), name="region_id"),
    )


def region_areas(data: pd.DataFrame) -> pd.Series:
    """Area in m^2 of each published region (exact spherical area of the lon/lat rectangle).

    Examples
    --------
    >>> import shapely, pandas as pd
    >>> d = pd.DataFrame({"region_id": [7], "region": [shapely.box(0, 0, 0.01, 0.01)]})
    >>> round(float(region_areas(d).iloc[0]) / 1e6, 3)
    1.236

    Notes
    -----
    ``A = R^2 (east - west) (sin north - sin south)`` with angles in radians.
    """
    b = region_bounds(data)
    return pd.Series(
        lonlat_rectangle_area(b.west, b.south, b.east, b.north), index=b.index, name="area_m2"
    )


def region_area_distribution(data: pd.DataFrame) -> dict[str, Any]:
    """Areas (km^2) of the distinct published regions, and the area an average fix gets."""
    areas = region_areas(data)
    per_fix = areas.loc[data["region_id"].to_numpy()].to_numpy()
    out: dict[str, Any] = {"n_regions": int(len(areas))}
    out.update({f"region_km2_{k}": v for k, v in _quantiles(areas.to_numpy(), 1e6).items()})
    out["fix_weighted_mean_km2"] = float(per_fix.mean() / 1e6) if per_fix.size else float("nan")
    return out


def _haversine(lat1, lon1, lat2, lon2) -> np.ndarray:
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dp, dl = p2 - p1, np.radians(lon2 - lon1)
    a = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS * np.arcsin(np.sqrt(np.clip(a, 0, 1)))


def centroid_error(original: pd.DataFrame, data: pd.DataFrame) -> dict[str, float]:
    """Distance (m) from each published fix's true point to its region's centre.

    The centre is the middle longitude and the latitude halving the rectangle's area,
    ``asin((sin south + sin north) / 2)``; distances are great-circle (haversine).  Mean,
    median and 90th percentile only: the maximum is one fix's own distance, which a
    report must not carry.
    """
    b = region_bounds(data).loc[data["region_id"].to_numpy()]
    c_lon = 0.5 * (b.west.to_numpy() + b.east.to_numpy())
    c_lat = np.degrees(
        np.arcsin(
            0.5 * (np.sin(np.radians(b.south.to_numpy())) + np.sin(np.radians(b.north.to_numpy())))
        )
    )
    orig = original.loc[data.index]
    d = _haversine(orig["lat"].to_numpy(), orig["lon"].to_numpy(), c_lat, c_lon)
    # no maximum: it would be one fix's own distance to a published centre
    return {f"centroid_error_m_{k}": v for k, v in _quantiles(d).items() if k != "max"}


def suppression_share(n_published: int, n_input: int) -> float:
    """Share of input fixes not published (``1 - published / input``)."""
    if n_input <= 0:
        raise InputError("n_input must be positive", value=n_input)
    return 1.0 - n_published / n_input


def _windows(times: pd.Series, window_ns: int) -> np.ndarray:
    t = pd.DatetimeIndex(pd.to_datetime(times, utc=True)).as_unit("ns").asi8
    return np.floor_divide(t, window_ns)


def _published_groups(data: pd.DataFrame, window_ns: int) -> pd.DataFrame:
    """Fix counts per (region, window) with region bounds in lon / sin(lat)."""
    w = _windows(data["window"], window_ns)
    counts = (
        pd.DataFrame({"region_id": data["region_id"].to_numpy(), "w": w})
        .groupby(["region_id", "w"])
        .size()
        .rename("n")
        .reset_index()
    )
    b = region_bounds(data).loc[counts["region_id"].to_numpy()]
    counts["x0"], counts["x1"] = b.west.to_numpy(), b.east.to_numpy()
    counts["y0"] = np.sin(np.radians(b.south.to_numpy()))
    counts["y1"] = np.sin(np.radians(b.north.to_numpy()))
    return counts.sort_values("w", kind="stable").reset_index(drop=True)


def _overlap(lo, hi, q_lo, q_hi) -> np.ndarray:
    """Fraction of each interval [lo, hi] inside [q_lo, q_hi]."""
    inter = np.clip(np.minimum(hi, q_hi) - np.maximum(lo, q_lo), 0, None)
    return inter / np.maximum(hi - lo, 1e-300)


def range_query_error(
    original: pd.DataFrame,
    data: pd.DataFrame,
    window: str | int | pd.Timedelta,
    n_queries: int = 200,
    half_size_m: tuple[float, float] = (250.0, 2500.0),
    seed: int | None = None,
) -> dict[str, float]:
    """Relative error of random spatio-temporal range-count queries.

    Each query is a lon/lat rectangle centred on a random input fix, half-side uniform
    in ``half_size_m`` metres, over that fix's time window.  The true answer counts input
    fixes inside; the estimate spreads each published (region, window)'s fixes uniformly
    (by area) over its region.

    Notes
    -----
    ``RE = |est - true| / true`` (``true >= 1``: the centre fix is inside);
    ``est = sum_g n_g * |g cap Q| / |g|``.
    """
    window_ns = parse_window(window)
    rng = np.random.default_rng(seed)
    if len(original) == 0:
        raise InputError("no original fixes to query")
    pick = rng.integers(0, len(original), n_queries)
    ow = _windows(original["time"], window_ns)
    order = np.argsort(ow, kind="stable")
    ow_sorted = ow[order]
    o_x = original["lon"].to_numpy()[order]
    o_y = original["lat"].to_numpy()[order]
    groups = _published_groups(data, window_ns) if len(data) else None
    gw = groups["w"].to_numpy() if groups is not None else np.zeros(0, np.int64)
    errors = np.empty(n_queries)
    half = rng.uniform(half_size_m[0], half_size_m[1], n_queries)
    for q in range(n_queries):
        cx, cy, wq = (
            original["lon"].to_numpy()[pick[q]],
            original["lat"].to_numpy()[pick[q]],
            ow[pick[q]],
        )
        dlat = np.degrees(half[q] / EARTH_RADIUS)
        dlon = dlat / max(np.cos(np.radians(cy)), 1e-6)
        qx0, qx1, qy0, qy1 = cx - dlon, cx + dlon, cy - dlat, cy + dlat
        a, b = np.searchsorted(ow_sorted, wq, "left"), np.searchsorted(ow_sorted, wq, "right")
        x, y = o_x[a:b], o_y[a:b]
        true = int(((x >= qx0) & (x <= qx1) & (y >= qy0) & (y <= qy1)).sum())
        est = 0.0
        if groups is not None:
            ga, gb = np.searchsorted(gw, wq, "left"), np.searchsorted(gw, wq, "right")
            g = groups.iloc[ga:gb]
            frac = _overlap(g.x0.to_numpy(), g.x1.to_numpy(), qx0, qx1) * _overlap(
                g.y0.to_numpy(), g.y1.to_numpy(), np.sin(np.radians(qy0)), np.sin(np.radians(qy1))
            )
            est = float((g.n.to_numpy() * frac).sum())
        errors[q] = abs(est - true) / max(true, 1)
    return {
        "range_query_rel_error_mean": float(errors.mean()),
        "range_query_rel_error_median": float(np.median(errors)),
        "range_queries": int(n_queries),
    }


def density_grids(
    original: pd.DataFrame, data: pd.DataFrame, bins: int = 64
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fix counts on a ``bins x bins`` equal-area grid (lon x sin lat) over the input's extent.

    Returns ``(original_counts, cloaked_counts, lon_edges, sin_lat_edges)``; the cloaked
    counts spread each published region's fixes uniformly over its area.
    """
    lon, slat = original["lon"].to_numpy(), np.sin(np.radians(original["lat"].to_numpy()))
    ex = np.linspace(lon.min(), lon.max() + 1e-12, bins + 1)
    ey = np.linspace(slat.min(), slat.max() + 1e-12, bins + 1)
    h0, _, _ = np.histogram2d(lon, slat, bins=[ex, ey])
    h1 = np.zeros_like(h0)
    if len(data):
        counts = data["region_id"].value_counts()
        b = region_bounds(data).loc[counts.index]
        x0, x1 = b.west.to_numpy()[:, None], b.east.to_numpy()[:, None]
        y0 = np.sin(np.radians(b.south.to_numpy()))[:, None]
        y1 = np.sin(np.radians(b.north.to_numpy()))[:, None]
        ox = _overlap(x0, x1, ex[None, :-1], ex[None, 1:])
        oy = _overlap(y0, y1, ey[None, :-1], ey[None, 1:])
        h1 = ox.T @ (counts.to_numpy()[:, None] * oy)
    return h0, h1, ex, ey


def heatmap_similarity(
    original: pd.DataFrame, data: pd.DataFrame, bins: int = 64
) -> dict[str, float]:
    """Similarity of the original and cloaked density grids.

    Notes
    -----
    Both grids are normalised by the number of input fixes (so suppression counts as
    lost mass).  ``cosine = <a, b> / (|a| |b|)``; ``hellinger = sqrt(1 - sum sqrt(a b))``
    on the grids normalised to sum 1.
    """
    h0, h1, _, _ = density_grids(original, data, bins)
    a, b = h0.ravel(), h1.ravel()
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))) if b.any() else 0.0
    pa, pb = a / a.sum(), b / b.sum() if b.sum() else b
    hell = float(np.sqrt(max(0.0, 1.0 - np.sqrt(pa * pb).sum())))
    return {"heatmap_cosine": cos, "heatmap_hellinger": hell, "heatmap_bins": bins}


def utility_summary(
    original: pd.DataFrame,
    data: pd.DataFrame,
    window: str | int | pd.Timedelta,
    seed: int | None = None,
) -> dict[str, Any]:
    """All utility measures of one release as a flat dict."""
    out: dict[str, Any] = {"suppression_share": suppression_share(len(data), len(original))}
    if len(data):
        out.update(region_area_distribution(data))
        out.update(centroid_error(original, data))
    out.update(range_query_error(original, data, window, seed=seed))
    out.update(heatmap_similarity(original, data))
    return out


def as_samples(data: pd.DataFrame, window: str | int | pd.Timedelta | None = None) -> pd.DataFrame:
    """A release's rows as distinct samples ``user, start, end, region_id, region``.

    A trajectory release has them already; a per-window one gets ``start = window`` and
    ``end = window + window length`` (``window`` required), one row per distinct
    (pseudonym, window, region).
    """
    if "start" in data.columns:
        return data[["user", "start", "end", "region_id", "region"]]
    if window is None:
        raise InputError("window is required to read a per-window release as samples")
    length = pd.Timedelta(parse_window(window), unit="ns")
    rows = data.drop_duplicates(["user", "window", "region_id"])
    return pd.DataFrame(
        {
            "user": rows["user"].to_numpy(),
            "start": rows["window"].to_numpy(),
            "end": (rows["window"] + length).to_numpy(),
            "region_id": rows["region_id"].to_numpy(),
            "region": rows["region"].to_numpy(),
        }
    )


def sample_extents(samples: pd.DataFrame) -> dict[str, float]:
    """Spatial extent (km, side of an equal-area square) and duration (minutes) of samples.

    Median and 90th percentile over published rows (one per pseudonym and sample).
    """
    if len(samples) == 0:
        nan = float("nan")
        return {
            f"{m}_{q}": nan
            for m in ("sample_extent_km", "sample_duration_min")
            for q in ("median", "p90")
        }
    side = np.sqrt(region_areas(samples).loc[samples["region_id"].to_numpy()].to_numpy()) / 1e3
    minutes = (
        pd.to_datetime(samples["end"], utc=True) - pd.to_datetime(samples["start"], utc=True)
    ).dt.total_seconds().to_numpy() / 60.0
    out = {}
    for name, values in (("sample_extent_km", side), ("sample_duration_min", minutes)):
        q = np.quantile(values, [0.5, 0.9])
        out[f"{name}_median"], out[f"{name}_p90"] = float(q[0]), float(q[1])
    return out


def _ns(values: Any) -> np.ndarray:
    return pd.DatetimeIndex(pd.to_datetime(values, utc=True)).as_unit("ns").asi8


def user_range_query_error(
    original: pd.DataFrame,
    samples: pd.DataFrame,
    window: str | int | pd.Timedelta,
    n_queries: int = 200,
    half_size_m: tuple[float, float] = (250.0, 2500.0),
    seed: int | None = None,
) -> dict[str, float]:
    """Relative error of "how many users were in this rectangle during this window" queries.

    Each query is a lon/lat rectangle centred on a random input fix, half-side uniform in
    ``half_size_m`` metres, over the time window (of length ``window``) of that fix.  The
    true answer counts distinct input users with a fix inside; the estimate sums, over
    published samples, the share of the sample's region inside the rectangle (by area)
    times the share of its interval inside the window.  Works on any release read with
    :func:`as_samples`, so per-window and trajectory releases compare on the same queries.

    Notes
    -----
    ``RE = |est - true| / true``, ``est = sum_s |r_s cap Q| / |r_s| * |T_s cap W| / |T_s|``.
    """
    window_ns = parse_window(window)
    if len(original) == 0:
        raise InputError("no original fixes to query")
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(original), n_queries)
    half = rng.uniform(half_size_m[0], half_size_m[1], n_queries)
    t = _ns(original["time"])
    order = np.argsort(t, kind="stable")
    t_sorted = t[order]
    o_x, o_y = original["lon"].to_numpy()[order], original["lat"].to_numpy()[order]
    o_u = original["user"].to_numpy()[order]
    if len(samples):
        b = region_bounds(samples).loc[samples["region_id"].to_numpy()]
        s0, s1 = _ns(samples["start"]), _ns(samples["end"])
        x0, x1 = b.west.to_numpy(), b.east.to_numpy()
        y0, y1 = np.sin(np.radians(b.south.to_numpy())), np.sin(np.radians(b.north.to_numpy()))
    errors = np.empty(n_queries)
    lon, lat = original["lon"].to_numpy(), original["lat"].to_numpy()
    for q in range(n_queries):
        cx, cy = lon[pick[q]], lat[pick[q]]
        w0 = t[pick[q]] // window_ns * window_ns
        w1 = w0 + window_ns
        dlat = np.degrees(half[q] / EARTH_RADIUS)
        dlon = dlat / max(np.cos(np.radians(cy)), 1e-6)
        a, z = np.searchsorted(t_sorted, [w0, w1])
        x, y = o_x[a:z], o_y[a:z]
        inside = (np.abs(x - cx) <= dlon) & (np.abs(y - cy) <= dlat)
        true = np.unique(o_u[a:z][inside]).size
        est = 0.0
        if len(samples):
            live = (s0 < w1) & (s1 > w0)
            frac_t = _overlap(s0[live], s1[live], w0, w1)
            frac = _overlap(x0[live], x1[live], cx - dlon, cx + dlon) * _overlap(
                y0[live], y1[live], np.sin(np.radians(cy - dlat)), np.sin(np.radians(cy + dlat))
            )
            est = float((frac * frac_t).sum())
        errors[q] = abs(est - true) / max(true, 1)
    return {
        "user_range_query_rel_error_mean": float(errors.mean()),
        "user_range_query_rel_error_median": float(np.median(errors)),
    }


def _districts(lat: np.ndarray, lon: np.ndarray, lat_mid: float, district_m: float) -> np.ndarray:
    """District code of points: cells of ``district_m`` metres of a lon/lat grid."""
    dlat = np.degrees(district_m / EARTH_RADIUS)
    dlon = dlat / max(np.cos(np.radians(lat_mid)), 1e-6)
    gx = np.floor(lon / dlon).astype(np.int64)
    gy = np.floor(lat / dlat).astype(np.int64)
    return gx * (1 << 32) + gy


def _flows(user: np.ndarray, order_key: np.ndarray, district: np.ndarray) -> pd.Series:
    """Counts of moves ``(origin, destination)`` between consecutive points of each user."""
    order = np.lexsort((order_key, user))
    u, d = user[order], district[order]
    move = (u[1:] == u[:-1]) & (d[1:] != d[:-1])
    frame = pd.DataFrame({"o": d[:-1][move], "d": d[1:][move]})
    return frame.groupby(["o", "d"]).size()


def od_flow_error(
    original: pd.DataFrame,
    samples: pd.DataFrame,
    window: str | int | pd.Timedelta,
    district_m: float = 5000.0,
) -> dict[str, float]:
    """L1 error of the origin-destination matrix between districts.

    Districts are ``district_m``-metre cells of a lon/lat grid.  True flows: each user's
    place per time window is the district of their first fix in it; a move is a change of
    district between a user's consecutive active windows.  Published flows: the district
    of the region centre of each pseudonym's sample per start time (the smallest region id
    where a pseudonym has several), moves between its consecutive start times.  A
    per-window release (a new pseudonym per window) publishes no move at all: error 1.

    Notes
    -----
    ``E = sum_od |F_od - F'_od| / sum_od F_od`` (0: exact; 1: no flow recovered).
    """
    window_ns = parse_window(window)
    lat, lon = original["lat"].to_numpy(), original["lon"].to_numpy()
    lat_mid = float(np.median(lat)) if lat.size else 0.0
    t = _ns(original["time"])
    w = t // window_ns
    first = pd.DataFrame({"u": original["user"].to_numpy(), "w": w, "t": t}).sort_values(
        ["u", "w", "t"], kind="stable"
    )
    first = first[~first.duplicated(["u", "w"])]
    idx = first.index.to_numpy()
    true = _flows(
        first["u"].to_numpy(),
        first["w"].to_numpy(),
        _districts(lat[idx], lon[idx], lat_mid, district_m),
    )
    if len(samples):
        # one place per pseudonym and start, as for the truth (the smallest region id)
        first_sample = samples.assign(t=_ns(samples["start"])).sort_values(
            ["user", "t", "region_id"], kind="stable"
        )
        first_sample = first_sample[~first_sample.duplicated(["user", "t"])]
        b = region_bounds(first_sample).loc[first_sample["region_id"].to_numpy()]
        c_lat = 0.5 * (b.south.to_numpy() + b.north.to_numpy())
        c_lon = 0.5 * (b.west.to_numpy() + b.east.to_numpy())
        users, _ = pd.factorize(first_sample["user"])
        est = _flows(
            users, first_sample["t"].to_numpy(), _districts(c_lat, c_lon, lat_mid, district_m)
        )
    else:
        est = pd.Series(dtype=np.int64)
    both = pd.concat([true.rename("t"), est.rename("e")], axis=1).fillna(0)
    total = float(both["t"].sum())
    err = float((both["t"] - both["e"]).abs().sum() / total) if total else float("nan")
    return {"od_flow_error": err, "od_true_moves": int(total), "district_m": district_m}


def trajectory_utility(
    original: pd.DataFrame,
    data: pd.DataFrame,
    window: str | int | pd.Timedelta,
    seed: int | None = None,
) -> dict[str, Any]:
    """The trajectory measures of any release: sample extents, user range queries, OD flows.

    ``original``: the valid input fixes with ``user``, ``lat``, ``lon``, ``time``; ``data``:
    a trajectory release's data, or a per-window release's (read with :func:`as_samples`).
    """
    samples = as_samples(data, window)
    out: dict[str, Any] = {"published_samples": int(len(samples))}
    out.update(sample_extents(samples))
    out.update(user_range_query_error(original, samples, window, seed=seed))
    out.update(od_flow_error(original, samples, window))
    return out
