"""Figures of the transactions HTML report (matplotlib, drawn off-screen).

Each figure has labelled axes with their units, a legend placed where it covers no data,
and a title the report uses as its caption and alt text.  The before/after view shows the
support of the input's most frequent itemsets (each held by at least ``k`` transactions)
next to the support a user estimates from the release.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from structanon import Release
from structanon.report import (
    ReportFigure,
    before_after_bars,
    noisy_view_counts,
    small_count_floor,
)

from . import metrics, risk
from ._data import decode_keys
from ._query import NodeIndex

TOP_ITEMSETS = 12

__all__ = ["figures_for"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _band_figures(release: Release) -> list[ReportFigure | tuple[str, Any]]:
    plt = _pyplot()
    groups = np.asarray(release.data["group"])
    sizes = np.bincount(groups[groups >= 0], minlength=len(release.data["sensitive_counts"]))
    share = np.array(
        [max(c.values()) / s if c else 0.0 for c, s in zip(release.data["sensitive_counts"], sizes)]
    )
    title = "Sensitive-item share per group"
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.hist(share, bins=20, label="groups")
    ax.axvline(1.0 / release.data["p"], color="k", ls="--", label="bound 1/p")
    ax.set_xlabel("largest sensitive-item share in a group (fraction)")
    ax.set_ylabel("groups (count)")
    ax.set_title(title)
    ax.legend(loc="best")
    fig.tight_layout()
    return [(title, fig)]


def _depth_figure(release: Release, tax: Any) -> tuple[str, Any]:
    from ._query import published_nodes

    plt = _pyplot()
    _indptr, nodes, _s = published_nodes(release.data, tax)
    depth = np.bincount(tax.depth[nodes], minlength=tax.height + 1)
    title = "Generalization cut: depth of published labels"
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.bar(np.arange(depth.size), depth)
    ax.set_xlabel("taxonomy depth of published label (levels; 0 = root)")
    ax.set_ylabel("published labels (count)")
    ax.set_title(title)
    fig.tight_layout()
    return title, fig


def _error_figure(release: Release, original: Any, tax: Any) -> tuple[str, Any]:
    plt = _pyplot()
    err = metrics.support_error(original, release.data, tax, n_queries=200, return_errors=True)[
        "errors"
    ]
    title = "Itemset-support error distribution"
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.hist(err, bins=30)
    ax.set_xlabel("relative error of itemset support (fraction)")
    ax.set_ylabel("random itemsets (count)")
    ax.set_title(title)
    fig.tight_layout()
    return title, fig


def _risk_figure(release: Release, original: Any, tax: Any) -> tuple[str, Any]:
    plt = _pyplot()
    m = int(release.parameters.get("m", 2))
    before, after, _ = risk.candidate_sizes(original, release.data, tax, m, n_targets=300)
    bins = np.logspace(0, np.log10(max(before.max(), after.max(), 2)) + 0.1, 30)
    title = "Risk before / after: candidate transactions per target"
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.hist([np.maximum(before, 1), np.maximum(after, 1)], bins=bins, label=["before", "after"])
    ax.set_xscale("log")
    ax.axvline(release.parameters.get("k", 1), color="k", ls="--", label="k")
    ax.set_xlabel(f"candidate transactions when {m} items are known (log scale)")
    ax.set_ylabel("targets (count)")
    ax.set_title(title)
    ax.legend(loc="best")
    fig.tight_layout()
    return title, fig


def _top_itemsets(release: Release, original: Any, tax: Any) -> ReportFigure | None:
    """Support of the input's most frequent 1- and 2-itemsets, before and after."""
    floor = small_count_floor(release)
    b, indptr, nodes, _suppressed = metrics._prepare(original, release.data, tax)
    found: list[tuple[int, tuple[int, ...]]] = []
    for size in (1, 2):
        keys, counts = metrics._bounded_counts(b.indptr, b.codes, size, tax.n_nodes, {})
        best = np.lexsort((keys, -counts))[:TOP_ITEMSETS]
        rows = decode_keys(keys[best], size, tax.n_nodes).tolist()
        # a basket adds at most 1 to each support: noise hides it between two reports
        noisy, enough = noisy_view_counts(counts[best], floor)
        found += [
            (int(c), tuple(r)) for c, r, ok in zip(noisy.tolist(), rows, enough.tolist()) if ok
        ]
    found.sort(key=lambda item: (-item[0], len(item[1]), item[1]))
    found = found[:TOP_ITEMSETS]
    if not found:
        return None
    index = NodeIndex(indptr, nodes, tax.n_nodes)
    estimated = []
    for _count, itemset in found:
        query = np.asarray([itemset], dtype=np.int64)
        estimated.append(float(index.matches(query, tax, weighted=True)[0]))
    # an item the release generalized or suppressed is not named (its name would be news)
    shown = set(np.unique(nodes).tolist())  # the taxonomy nodes the release publishes
    labels = [
        " + ".join(str(tax.labels[i]) for i in itemset)
        if all(i in shown for i in itemset)
        else f"#{rank} ({len(itemset)} item{'s' if len(itemset) > 1 else ''}, not in the release)"
        for rank, (_c, itemset) in enumerate(found, start=1)
    ]
    title = "Support of the most frequent itemsets: input and estimated from the release"
    fig = before_after_bars(
        labels,
        [c for c, _ in found],
        estimated,
        title=title,
        xlabel="support (transactions holding the itemset)",
        ylabel="itemset (items)",
        names=("input", "estimated from the release (items uniform within a label)"),
    )
    exact = sum(c for c, _ in found)
    alt = (
        f"{title}. Horizontal bars for the {len(found)} most frequent items and pairs of "
        f"items (each in at least {floor} transactions): the release's estimates sum to "
        f"{sum(estimated) / max(exact, 1):.0%} of their true supports."
    )
    return ReportFigure(title, fig, alt, view=True)


def _disassociation_figure(release: Release, original: Any) -> ReportFigure:
    """Support of the 100 most frequent input pairs: input against the release's estimate."""
    from ._data import encode_baskets

    plt = _pyplot()
    b = encode_baskets(original)
    q, true = metrics.top_itemsets(b, 2, 100)
    lower, expected = metrics.disassociation_supports(b, release.data, q, draws=2)
    # a pair fewer than k baskets hold is drawn nowhere: its input support, against an
    # estimate anyone recomputes from the release, would place one person's pair
    floor = small_count_floor(release)
    true, shown = noisy_view_counts(true, floor)  # as in the bars: neighbours differ by noise
    true, lower, expected = (
        np.asarray(true)[shown],
        np.asarray(lower)[shown],
        np.asarray(expected)[shown],
    )
    title = "Support of the 100 most frequent item pairs: input vs release"
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.scatter(true, expected, s=12, label="expected under random re-association")
    ax.scatter(true, lower, s=12, marker="x", label="lower bound (whole pair in a subrecord)")
    top = float(max(true.max(initial=1), expected.max(initial=1)))
    ax.plot([0, top], [0, top], color="k", lw=0.8, ls="--", label="exact")
    ax.set_xlabel("support in the input (transactions)")
    ax.set_ylabel("support estimated from the release")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    fig.tight_layout()
    alt = (
        f"{title}. One point per pair held by at least {floor} baskets: its support in the "
        "input (x) against its support estimated from the release (y); points on the "
        "dashed diagonal are exact. The "
        f"median relative error of the expected supports is "
        + (
            f"{float(np.median(np.abs(expected - true) / np.maximum(true, 1))):.0%}."
            if true.size
            else "not shown: no pair is held by that many baskets."
        )
    )
    return ReportFigure(title, fig, alt, view=True)


def figures_for(release: Release, original: Any) -> list[ReportFigure | tuple[str, Any]]:
    """Support of the top itemsets before and after, generalization depth, itemset-support
    error and risk before/after, as figures.

    ``original`` is the input in input order; a generalization release is compared with it
    reordered by the release's private ``source_index``.  A band-matrix release gets the
    sensitive-item share per group; a disassociated release the support of the top pairs,
    input against the release's estimates.
    """
    if isinstance(release.data, dict):  # band matrix
        return _band_figures(release)
    if release.parameters.get("algorithm") == "disassociation":
        return [_disassociation_figure(release, original)]
    tax = getattr(release, "taxonomy", None)
    if tax is None:
        return []
    if release.source_index is not None:  # input in published order
        original = [original[i] for i in np.asarray(release.source_index).tolist()]
    view = _top_itemsets(release, original, tax)
    return [
        *([view] if view is not None else []),
        _depth_figure(release, tax),
        _error_figure(release, original, tax),
        _risk_figure(release, original, tax),
    ]
