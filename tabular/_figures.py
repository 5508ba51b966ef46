"""Figures of the tabular HTML report: class sizes, transformation, information loss, risk.

Each figure is returned as ``(title, matplotlib Figure)``; the report uses the title as
caption and alt text.  Axes are labelled with their units and legends sit where they cover
no data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from structanon import Release

__all__ = ["release_figures"]

RISK_KEYS = (
    "prosecutor_max",
    "prosecutor_avg",
    "marketer",
    "share_above_threshold",
    "record_linkage",
)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _class_sizes(plt, release: Release) -> tuple[str, Any]:
    sizes = release.partition.sizes if release.partition is not None else np.zeros(0)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    if sizes.size:
        bins = np.unique(np.round(np.geomspace(max(sizes.min(), 1), sizes.max() + 1, 30)))
        ax.hist(sizes, bins=bins if bins.size > 1 else 10, color="#4c72b0")
        ax.set_xscale("log")
    ax.set_xlabel("equivalence class size (records, log scale)")
    ax.set_ylabel("classes (count)")
    title = "Class-size histogram"
    ax.set_title(title)
    fig.tight_layout()
    return title, fig


def _transformation(plt, transformation: dict[str, int]) -> tuple[str, Any]:
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.bar(list(transformation), list(transformation.values()), color="#55a868")
    ax.set_xlabel("quasi-identifier")
    ax.set_ylabel("generalization level (0 = original)")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.tick_params(axis="x", rotation=30)
    title = "Chosen transformation (level per quasi-identifier)"
    ax.set_title(title)
    fig.tight_layout()
    return title, fig


def _ncp(plt, ncp: dict[str, float]) -> tuple[str, Any]:
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.bar(list(ncp), list(ncp.values()), color="#c44e52")
    ax.set_xlabel("quasi-identifier")
    ax.set_ylabel("NCP (0 = exact, 1 = fully generalized)")
    ax.set_ylim(0, 1)
    ax.tick_params(axis="x", rotation=30)
    title = "Information loss per quasi-identifier"
    ax.set_title(title)
    fig.tight_layout()
    return title, fig


def _risk(plt, before: dict[str, Any], after: dict[str, Any]) -> tuple[str, Any]:
    keys = [k for k in RISK_KEYS if k in before and k in after]  # no empty bars
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    x = np.arange(len(keys))
    ax.bar(x - 0.2, [float(before[k]) for k in keys], 0.4, label="before", color="#8172b2")
    ax.bar(x + 0.2, [float(after[k]) for k in keys], 0.4, label="after", color="#ccb974")
    ax.set_xticks(x, [k.replace("_", " ") for k in keys], rotation=20)
    ax.set_xlabel("risk measure")
    ax.set_ylabel("probability or share of records")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    title = "Re-identification risk before and after"
    ax.set_title(title)
    fig.tight_layout()
    return title, fig


def release_figures(release: Release) -> list[tuple[str, Any]]:
    """Figures for the HTML report: class sizes, transformation, information loss, risk.

    Returns
    -------
    list of (title, matplotlib.figure.Figure)
        The title is the figure's caption and alt text in the report.
    """
    plt = _pyplot()
    figures = [_class_sizes(plt, release)]
    transformation = release.info.get("transformation")
    if transformation:
        figures.append(_transformation(plt, transformation))
    ncp = release.utility.get("ncp") if release.utility else None
    if ncp:
        figures.append(_ncp(plt, ncp))
    if release.risk.get("before") and release.risk.get("after"):
        figures.append(_risk(plt, release.risk["before"], release.risk["after"]))
    return figures
