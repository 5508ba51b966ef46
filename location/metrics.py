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
