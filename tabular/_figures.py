"""Figures of the tabular HTML report: class sizes, transformation, information loss, risk."""

from __future__ import annotations

from typing import Any

import numpy as np

from structanon import Release

__all__ = ["release_figures"]


def release_figures(release: Release) -> list[tuple[str, Any]]:
    """Figures for the HTML report: class sizes, transformation, utility, risk."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    sizes = release.partition.sizes if release.partition is not None else np.zeros(0)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    if sizes.size:
        bins = np.unique(np.round(np.geomspace(max(sizes.min(), 1), sizes.max() + 1, 30)))
        ax.hist(sizes, bins=bins if bins.size > 1 else 10, color="#4c72b0")
        ax.set_xscale("log")
    ax.set_xlabel("equivalence class size (records)")
    ax.set_ylabel("classes")
    fig.tight_layout()
    figures.append(("Class-size histogram", fig))
    transformation = release.info.get("transformation")
    if transformation:
        fig, ax = plt.subplots(figsize=(6, 3.2))
        ax.bar(list(transformation), list(transformation.values()), color="#55a868")
        ax.set_ylabel("generalization level")
        ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        figures.append(("Chosen transformation (level per quasi-identifier)", fig))
    ncp = release.utility.get("ncp") if release.utility else None
    if ncp:
        fig, ax = plt.subplots(figsize=(6, 3.2))
        ax.bar(list(ncp), list(ncp.values()), color="#c44e52")
        ax.set_ylabel("NCP (0 = exact, 1 = fully generalized)")
        ax.set_ylim(0, 1)
        ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        figures.append(("Information loss per quasi-identifier", fig))
    if release.risk.get("before") and release.risk.get("after"):
        keys = ["prosecutor_max", "prosecutor_avg", "marketer", "share_above_threshold",
                "record_linkage"]
        before = [release.risk["before"].get(k, 0) for k in keys]
        after = [release.risk["after"].get(k, 0) for k in keys]
        fig, ax = plt.subplots(figsize=(6, 3.2))
        x = np.arange(len(keys))
        ax.bar(x - 0.2, before, 0.4, label="before", color="#8172b2")
        ax.bar(x + 0.2, after, 0.4, label="after", color="#ccb974")
        ax.set_xticks(x, keys, rotation=20)
        ax.set_ylim(0, 1)
        ax.legend()
        fig.tight_layout()
        figures.append(("Re-identification risk before and after", fig))
    return figures
