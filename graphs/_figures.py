"""Figures of the graphs report: degree distributions before and after, edits against bounds.

Each figure comes with its title, which the HTML report shows as caption and alt text.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from structanon import Release
from structanon.report import ReportFigure, noisy_view_counts, small_count_floor

__all__ = ["release_figures", "degree_figure", "edits_figure"]

DEGREE_TITLE = "Degree distribution before and after (log-log)"
EDITS_TITLE = "Edges edited against the lower bounds"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _degree_counts(
    graph: nx.Graph, floor: int = 1, noisy: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The degrees (above 0) held by at least ``floor`` nodes, and how many hold each;
    ``noisy``: the counts with the views' noise (the input's histogram, which two reports
    of graphs one node apart would otherwise subtract into that node's neighbours'
    degrees), the floor read through it."""
    deg = np.fromiter((d for _, d in graph.degree()), dtype=np.int64, count=graph.number_of_nodes())
    values, counts = np.unique(deg[deg > 0], return_counts=True)
    if noisy:
        counts, shown = noisy_view_counts(counts, floor)
    else:
        shown = counts >= floor
    return values[shown], counts[shown]


def degree_figure(original: nx.Graph, anonymized: nx.Graph, k: int) -> Any:
    """How many nodes have each degree, in the input and in the release (log-log).

    The input's degrees held by fewer than ``k`` nodes are left out: a hub's unique degree
    is what k-degree anonymity hides (and, next to the release, it would tell how many
    edges each member of a published degree class gained).  The legend sits outside the
    axes, so it never covers a point.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for graph, label, marker, floor in (
        (original, f"input graph (degrees held by {k}+ nodes; counts with noise)", "o", k),
        (anonymized, "anonymized graph", "x", 1),
    ):
        values, counts = _degree_counts(graph, floor, noisy=graph is original)
        ax.loglog(values, counts, marker, label=label, alpha=0.7, markersize=4)
    ax.axhline(
        k, color="grey", linestyle="--", linewidth=1, label=f"k = {k} (least nodes per degree)"
    )
    ax.set_xlabel("degree (number of neighbours of a node)")
    ax.set_ylabel("number of nodes with that degree")
    ax.set_title(DEGREE_TITLE)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=9)
    fig.tight_layout()
    return fig


def edits_figure(info: dict[str, Any]) -> Any:
    """Edges added and removed next to the lower bounds of the release."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 2.8))
    bars = [
        (
            "L1 lower bound (DP optimum / 2)",
            info.get("two_sided_lower_bound_edges", info["lower_bound_edges"]),
            "#c44",
        ),
        ("bound for the chosen sequence", info.get("sequence_bound_edges"), "#2a6"),
        ("structural bound (hubs)", info.get("structural_lower_bound_edges"), "#2a6"),
        ("hub-neighbourhood bound", info.get("hub_lower_bound_edges"), "#2a6"),
        ("largest-changes bound", info.get("mover_lower_bound_edges"), "#2a6"),
        ("edges added", info["edges_added"], "#bbb"),
        ("edges removed", info["edges_removed"], "#999"),
    ]
    bars = [(name, int(value), colour) for name, value, colour in bars if value is not None]
    names, values = [bar[0] for bar in bars], [bar[1] for bar in bars]
    ax.barh(names[::-1], values[::-1], color=[bar[2] for bar in bars][::-1])
    for y, value in enumerate(values[::-1]):
        ax.text(value, y, f" {value:,}", va="center")
    ax.set_xlabel("number of edges")
    ax.set_xlim(0, max(values + [1]) * 1.25)
    ax.set_title(EDITS_TITLE)
    fig.tight_layout()
    return fig


def release_figures(original: nx.Graph, release: Release) -> list[ReportFigure | tuple[str, Any]]:
    """The report's figures: the degree distributions before and after (a view of the
    input next to the release), then the edits against their bounds.

    Parameters
    ----------
    original : networkx.Graph
        The input graph (its degrees only are drawn).
    release : Release
        A graphs release (its published graph, ``k`` and edit counts).
    """
    k = small_count_floor(release)
    alt = (
        f"{DEGREE_TITLE}: points give how many nodes have each degree, circles for the "
        f"input graph (only its degrees held by at least {k} nodes) and crosses for the "
        f"anonymized one, with a dashed line at k = {k}; every published degree is held by "
        "at least k nodes."
    )
    return [
        ReportFigure(DEGREE_TITLE, degree_figure(original, release.data, k), alt, view=True),
        (EDITS_TITLE, edits_figure(release.info)),
    ]
