"""Report figures: region map coloured by user count, region areas, unicity."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon import Release

from .io import regions_table

__all__ = ["report_figures"]


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


def report_figures(release: Release, max_regions: int = 20000) -> list[tuple[str, Any]]:
    """(title, matplotlib Figure) pairs for the HTML report of a cloaking release.

    Every figure has labelled axes with units and a title the report uses as caption and
    alt text; legends sit outside the axes, so they cover no data.
    """
    data = release.data.compute() if hasattr(release.data, "dask") else release.data
    figures: list[tuple[str, Any]] = []
    regions = regions_table(data)
    if len(regions):
        figures += [_region_map(regions, max_regions), _area_histogram(regions)]
    if release.risk.get("before") and release.risk.get("after"):
        figures.append(_unicity_bars(release.risk))
    return figures
