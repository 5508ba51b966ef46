"""Report figures: user density of the input next to the release's, region map coloured by
user count, region areas, unicity.

The input's density is drawn on a coarse grid as distinct users per cell, not fixes: one
user's fixes in a cell are unbounded, so two reports of logs one user apart differed in
exactly that user's fix count.  Only (cell, window) pairs at least ``k`` users visited
count, the counts carry fresh Laplace noise (:func:`structanon.report.noisy_view_counts`),
and every cell below ``k`` users, exactly or through the noise, is left blank, exactly like
a cell nobody visited: such a cell would show where someone the release protects went
(marking it in any colour of its own would too).  The release's side draws the published
regions' distinct users spread over their areas, the same unit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon import Release
from structanon import report as _report
from structanon._times import NAT
from structanon.report import ReportFigure, noisy_view_counts, small_count_floor

from ._input import _parse_times, parse_window
from .io import regions_table

__all__ = ["report_figures", "INPUT_POINTS"]

GRID = 80
# attribute of a pandas release: (lon, lat, user codes, window codes)
INPUT_POINTS = "_input_points"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _region_map(regions: pd.DataFrame, max_regions: int) -> tuple[str, Any]:
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    plt = _pyplot()
    shown = regions.nsmallest(max_regions, "area_km2").iloc[::-1]
    b = shapely.bounds(np.asarray(shown["region"].to_numpy()))
    fig, ax = plt.subplots(figsize=(7, 6))
    patches = [Rectangle((w, s), e - w, n - s) for w, s, e, n in b]
    coll = PatchCollection(
        patches,
        cmap="viridis",
        edgecolor="none",
        alpha=0.8,
        norm=LogNorm(vmin=1, vmax=max(2, shown["n_users"].max())),
    )
    coll.set_array(shown["n_users"].to_numpy())
    ax.add_collection(coll)
    dense = regions["area_km2"] <= regions["area_km2"].quantile(0.9)
    bd = shapely.bounds(np.asarray(regions.loc[dense, "region"].to_numpy()))
    ax.set_xlim(bd[:, 0].min(), bd[:, 2].max())
    ax.set_ylim(bd[:, 1].min(), bd[:, 3].max())
    ax.set_xlabel("longitude (degrees east)")
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_ylabel("latitude (degrees north)")
    fig.colorbar(coll, ax=ax, label="distinct users (all windows)")
    ax.set_title(f"{len(regions):,} published regions (90% smallest in view)")
    return "Published regions coloured by their number of distinct users", fig


def _area_histogram(regions: pd.DataFrame) -> tuple[str, Any]:
    fig, ax = _pyplot().subplots(figsize=(7, 4))
    areas = regions["area_km2"].to_numpy()
    ax.hist(areas, bins=np.logspace(np.log10(areas.min()), np.log10(areas.max() * 1.01), 30))
    ax.set_xscale("log")
    ax.set_xlabel("region area (km², log scale)")
    ax.set_ylabel("published regions (count)")
    ax.set_title("Region area distribution")
    return "Distribution of the published regions' areas", fig


def _unicity_bars(risk: dict[str, Any]) -> tuple[str, Any]:
    keys = [k for k in risk["before"] if k.startswith("unicity")]
    fig, ax = _pyplot().subplots(figsize=(7, 4))
    x = np.arange(len(keys))
    ax.bar(x - 0.2, [risk["before"][k] for k in keys], 0.4, label="original cells")
    ax.bar(x + 0.2, [risk["after"][k] for k in keys], 0.4, label="cloaked regions")
    ax.set_xticks(x, [k.replace("unicity_p", "p = ") for k in keys])
    ax.set_xlabel("points of a user's trace known to the attacker")
    ax.set_ylabel("share of users unique (0-1)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Unicity before and after cloaking")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return ("Unicity before and after cloaking: share of users singled out by p known points"), fig


def _extent(regions: pd.DataFrame) -> tuple[float, float, float, float]:
    """(west, south, east, north) of the 90% smallest published regions."""
    dense = regions["area_km2"] <= regions["area_km2"].quantile(0.9)
    b = shapely.bounds(np.asarray(regions.loc[dense, "region"].to_numpy()))
    return float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()), float(b[:, 3].max())


def _input_users(
    points: tuple[np.ndarray, ...], edges: tuple[np.ndarray, np.ndarray], k: int
) -> np.ndarray:
    """Exact distinct users per grid cell of the input (a flat array of ``GRID * GRID``),
    counting only the (cell, window) pairs that at least k users visited (the release's
    own unit): a user is counted once in a cell, however many fixes or windows they have
    there.

    ``points`` is (lon, lat, user codes[, window codes]); without windows the whole log is
    one window.  A floor over all time instead showed, between two reports of logs one
    user apart, the cells where that user made one of k visitors over the months.
    """
    lon, lat, users = points[:3]
    windows = points[3] if len(points) > 3 else np.zeros(len(lon), dtype=np.int64)
    ix = np.searchsorted(edges[0], lon, side="right") - 1
    iy = np.searchsorted(edges[1], lat, side="right") - 1
    inside = (ix >= 0) & (ix < GRID) & (iy >= 0) & (iy < GRID)
    cell = (iy * GRID + ix)[inside].astype(np.int64)
    if not cell.size:
        return np.zeros(GRID * GRID)
    user = np.asarray(users)[inside].astype(np.int64)
    _, slot = np.unique(np.stack([cell, np.asarray(windows)[inside]]), axis=1, return_inverse=True)
    slot = slot.reshape(-1).astype(np.int64)
    n_codes = int(user.max()) + 1
    pairs = np.unique(slot * n_codes + user)
    n_users = np.bincount(pairs // n_codes, minlength=int(slot.max()) + 1)
    enough = n_users[slot] >= k
    visitors = np.unique(cell[enough] * n_codes + user[enough]) // n_codes
    return np.bincount(visitors, minlength=GRID * GRID).astype(float)


def _input_density(
    points: tuple[np.ndarray, ...], edges: tuple[np.ndarray, np.ndarray], k: int
) -> np.ndarray:
    """Distinct users per grid cell of the input as the report draws them: the counts of
    :func:`_input_users` plus fresh Laplace noise (:func:`~structanon.report.noisy_view_counts`),
    0 (as unvisited) in every cell whose count is below k exactly or through the noise.

    One user adds at most 1 to a cell through their own visits (their fixes there are
    unbounded, hence users and not fixes); through the per-window floor they can also
    switch on a (cell, window) pair they make the k-th visitor of, and with it up to k - 1
    others counted nowhere else in that cell.  The noise is scaled for that: ``sensitivity``
    k, so two reports of logs one user apart differ by noise, not by that user.
    """
    counts = _input_users(points, edges, k)
    noisy, shown = noisy_view_counts(counts, k, sensitivity=float(k))
    return np.where(shown, noisy, 0.0).reshape(GRID, GRID)


def _overlap(lo: np.ndarray, hi: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """(regions, cells) share of each region's extent inside each grid interval."""
    left = np.maximum(lo[:, None], edges[None, :-1])
    right = np.minimum(hi[:, None], edges[None, 1:])
    width = np.maximum(hi - lo, 1e-12)[:, None]
    return np.clip(right - left, 0, None) / width


def _published_density(regions: pd.DataFrame, edges: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Users per grid cell as the release tells them: each region's distinct users (over
    all its windows, ``n_users`` of :func:`~location.io.regions_table`) spread evenly over
    its area.  A cell is the sum of its share of every region overlapping it, so a user
    published in several regions there counts in each."""
    b = shapely.bounds(np.asarray(regions["region"].to_numpy()))
    counts = regions["n_users"].to_numpy(dtype=float)
    out = np.zeros((GRID, GRID))
    for start in range(0, len(b), 20_000):  # bounded memory: (chunk, GRID) matrices
        part = slice(start, start + 20_000)
        ox = _overlap(b[part, 0], b[part, 2], edges[0])
        oy = _overlap(b[part, 1], b[part, 3], edges[1])
        out += (oy * counts[part, None]).T @ ox
    return out


def _density_views(
    release: Release, regions: pd.DataFrame, points: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> ReportFigure:
    from matplotlib.colors import LogNorm

    k = small_count_floor(release)
    west, south, east, north = _extent(regions)
    edges = (np.linspace(west, east, GRID + 1), np.linspace(south, north, GRID + 1))
    before = _input_density(points, edges, k)
    after = _published_density(regions, edges)
    top = max(before.max(), after.max(), 2.0)
    norm = LogNorm(vmin=0.1, vmax=top)
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharex=True, sharey=True)
    box = (west, east, south, north)
    image = None
    for ax, grid, name in (
        (axes[0], before, f"input users, with noise (cells < {k} users per window blank)"),
        (axes[1], after, "release: each region's users spread over it"),
    ):
        image = ax.imshow(
            np.where(grid > 0, grid, np.nan),
            origin="lower",
            extent=box,
            norm=norm,
            cmap="viridis",
            aspect="auto",
            interpolation="nearest",
        )
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("longitude (degrees east)")
        ax.tick_params(axis="x", labelrotation=30)
    axes[0].set_ylabel("latitude (degrees north)")
    fig.colorbar(image, ax=list(axes), label="distinct users per grid cell (log scale)")
    title = "User density: input and release side by side"
    alt = (
        f"{title}. Two heat maps on one {GRID} x {GRID} grid over the 90% smallest published "
        f"regions: left the input's distinct users per cell, each user counted once however "
        f"many fixes they made, counting only the time windows in which at least {k} users "
        f"visited the cell, with random noise added (Laplace, scale {_report.VIEW_NOISE_SCALE * k:g}); cells below "
        f"{k} users, exactly or with the noise, are left blank like the cells nobody "
        "visited; right the release's distinct users of each region spread evenly over its "
        "area (a user published in several regions of a cell counts in each)."
    )
    return ReportFigure(title, fig, alt, view=True)


def _points(release: Release, original: pd.DataFrame | None) -> Any:
    if original is None:
        return getattr(release, INPUT_POINTS, None)
    columns = release.parameters.get("columns", {})
    frame = original[[columns.get(c, c) for c in ("lon", "lat", "user")]]
    lon = pd.to_numeric(frame.iloc[:, 0], errors="coerce").to_numpy(dtype=float)
    lat = pd.to_numeric(frame.iloc[:, 1], errors="coerce").to_numpy(dtype=float)
    window_ns = parse_window(release.parameters.get("window", "15min"))
    times = _parse_times(original[columns.get("time", "time")])
    keep = times != NAT  # like the release, a fix without a time is in no window
    users = pd.factorize(frame.iloc[:, 2].astype(str).str.strip())[0]
    return lon[keep], lat[keep], users[keep], np.floor_divide(times[keep], window_ns)


def report_figures(
    release: Release, max_regions: int = 20000, original: pd.DataFrame | None = None
) -> list[ReportFigure | tuple[str, Any]]:
    """Figures for the HTML report of a cloaking release.

    The first is the user density of the input (with noise) next to the release's, drawn
    from ``original`` (the input DataFrame) or, for a release made by :func:`location.cloak` on
    pandas, from the input coordinates the release keeps in Python for this view (never
    written anywhere).  Every figure has labelled axes with their units and a title the
    report uses as caption; legends sit outside the axes, so they cover no data.
    """
    data = release.data.compute() if hasattr(release.data, "dask") else release.data
    figures: list[ReportFigure | tuple[str, Any]] = []
    regions = regions_table(data)
    points = _points(release, original)
    if len(regions) and points is not None and len(points[0]):
        figures.append(_density_views(release, regions, points))
    if len(regions):
        figures += [_region_map(regions, max_regions), _area_histogram(regions)]
    risk = release.shown_risk()  # without what the release withholds
    if risk.get("before") and risk.get("after"):
        figures.append(_unicity_bars(risk))
    return figures
