"""Figures of the tabular HTML report: value distributions before and after (as ARX's
utility view), class sizes, transformation, information loss, risk.

Each figure is a :class:`structanon.report.ReportFigure` (or a ``(title, Figure)`` pair);
the report uses the title as caption and the alt text as the image's description.  Axes
are labelled with their units and legends sit where they cover no data.  The input's
distributions are aggregates: a value or bin held by fewer than ``k`` records is merged
into "other" or hidden, since its count would describe someone the release protects.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from structanon import Release
from structanon.report import ReportFigure, noisy_view_counts, small_count_floor

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


MAX_BARS = 12
MAX_VIEWED = 6
_LEADING_NUMBER = re.compile(r"^\s*[\[(]?\s*(-?\d+(?:\.\d+)?)")


def _top(counts: pd.Series, floor: int, other: str) -> pd.Series:
    """The ``MAX_BARS`` largest counts of at least ``floor``; the rest summed as ``other``,
    drawn only when it too holds ``floor`` records (else one record holding a rare value
    would draw the bar that its absence removes).

    Examples
    --------
    >>> _top(pd.Series({"a": 9, "b": 5, "c": 1}), 5, "other").to_dict()
    {'a': 9, 'b': 5}
    >>> _top(pd.Series({"a": 9, "b": 3, "c": 2}), 5, "other").to_dict()
    {'a': 9, 'other': 5}
    """
    counts = counts[counts > 0].sort_values(ascending=False, kind="stable")
    shown = counts[counts >= floor].iloc[:MAX_BARS]
    rest = int(counts.sum() - shown.sum())
    return pd.concat([shown, pd.Series({other: rest})]) if rest >= max(floor, 1) else shown


def _natural(counts: pd.Series) -> pd.Series:
    """Ranges and numbers in their numeric order; other labels by count; "other" last."""
    head = counts.iloc[:-1] if str(counts.index[-1]).startswith("other") else counts
    tail = counts.iloc[len(head) :]
    starts = [_LEADING_NUMBER.match(str(label)) for label in head.index]
    if head.size and all(starts):
        head = head.iloc[np.argsort([float(m.group(1)) for m in starts if m], kind="stable")]
    return pd.concat([head, tail])


def _input_counts(column: pd.Series, floor: int) -> tuple[pd.Series, str]:
    """Counts of the input column: values, or bins of a many-valued number; (counts, note)."""
    column = column.dropna()
    if pd.api.types.is_numeric_dtype(column.dtype) and column.nunique() > MAX_BARS:
        from matplotlib.ticker import MaxNLocator

        values = column.to_numpy(dtype=float)
        lo, hi = np.percentile(values, [1, 99])  # outliers join the end bins
        if lo == hi:
            lo, hi = values.min(), values.max()
        edges = MaxNLocator(nbins=10).tick_values(lo, hi)
        per_bin, _ = np.histogram(np.clip(values, edges[0], edges[-1]), bins=edges)
        labels = [f"{a:g}-{b:g}" for a, b in zip(edges[:-1], edges[1:])]
        if values.min() < edges[0]:
            labels[0] = f"under {edges[1]:g}"
        if values.max() > edges[-1]:
            labels[-1] = f"{edges[-2]:g} and over"
        per_bin, enough = noisy_view_counts(per_bin, floor)  # neighbours differ by noise
        keep = np.flatnonzero(enough)
        if keep.size == 0:
            return pd.Series(dtype=float), f"no bin holds {floor} records"
        small = (per_bin > 0) & ~enough
        shown = slice(int(keep[0]), int(keep[-1]) + 1)
        note = "bins, those under k hidden" if small.any() else "bins"
        return pd.Series(np.where(small, 0, per_bin)[shown], index=labels[shown]), note
    return _natural(_top_noisy(column.astype(str).value_counts(), floor)), "values"


def _top_noisy(counts: pd.Series, floor: int, other: str = "other (rarer values)") -> pd.Series:
    """:func:`_top` of the input's exact ``counts`` as the view draws them: the values at
    least ``floor`` records hold, with the views' noise (structanon.report), the largest
    ``MAX_BARS`` of them; the rest as ``other`` under the same two conditions."""
    exact = counts.to_numpy(dtype=float)
    noisy, ok = noisy_view_counts(exact, floor)
    order = np.argsort(-noisy, kind="stable")
    chosen = order[ok[order]][:MAX_BARS]
    shown = pd.Series(noisy[chosen], index=counts.index[chosen])
    rest, rest_ok = noisy_view_counts(np.array([exact.sum() - exact[chosen].sum()]), floor)
    return pd.concat([shown, pd.Series({other: rest[0]})]) if rest_ok[0] else shown


def _published_counts(column: pd.Series) -> pd.Series:
    counts = column.dropna().astype(str).value_counts()
    counts = counts.rename(index={"*": "* (any value)"})
    return _natural(_top(counts, 1, "other values"))


def _value_views(plt: Any, release: Release, original: pd.DataFrame) -> ReportFigure | None:
    """Per quasi-identifier: its distribution in the input next to the published one."""
    qis = [
        c
        for c in release.parameters.get("quasi_identifiers", {})
        if c in original.columns
        and c in release.data.columns
        and not pd.api.types.is_datetime64_any_dtype(original[c].dtype)
    ][:MAX_VIEWED]
    if not qis:
        return None
    floor = small_count_floor(release)
    fig, axes = plt.subplots(len(qis), 2, figsize=(9, 2.3 * len(qis)), squeeze=False)
    alt = []
    for row, column in zip(axes, qis):
        before, note = _input_counts(original[column], floor)
        after = _published_counts(release.data[column])
        for ax, counts, side, colour in (
            (row[0], before, f"input ({note})", "#8172b2"),
            (row[1], after, "published", "#55a868"),
        ):
            y = np.arange(len(counts))[::-1]
            ax.barh(y, counts.to_numpy(dtype=float), color=colour)
            ax.set_yticks(y, [str(label)[:28] for label in counts.index], fontsize=7)
            ax.set_title(f"{column}: {side}", fontsize=9)
            ax.set_xlabel("records (count)", fontsize=8)
            ax.tick_params(axis="x", labelsize=7)
        alt.append(f"{column}: {len(before)} input {note} against {len(after)} published values")
    fig.tight_layout()
    title = "Value distribution of each quasi-identifier, input and published"
    text = (
        f"{title}. Bar charts, left the input and right the release, one row per "
        f"quasi-identifier: {'; '.join(alt)}. Input values held by fewer than {floor} "
        "records are merged into 'other' (drawn when it holds at least {floor} records) or hidden; "
        "the input's counts carry random noise of a few records, so two reports of tables one "
        "person apart cannot be subtracted."
    )
    return ReportFigure(title, fig, text, view=True)


def release_figures(
    release: Release, original: pd.DataFrame | None = None
) -> list[ReportFigure | tuple[str, Any]]:
    """Figures for the HTML report: value distributions before and after, class sizes,
    transformation, information loss, risk.

    Parameters
    ----------
    release : Release
    original : pandas.DataFrame, optional
        The input table: with it, the report shows each quasi-identifier's distribution
        in the input next to the published one (small counts merged or hidden).

    Returns
    -------
    list of ReportFigure or (title, matplotlib.figure.Figure)
        The title is the figure's caption in the report.
    """
    plt = _pyplot()
    figures: list[ReportFigure | tuple[str, Any]] = []
    if original is not None:
        view = _value_views(plt, release, original)
        if view is not None:
            figures.append(view)
    figures.append(_class_sizes(plt, release))
    transformation = release.info.get("transformation")
    if transformation:
        figures.append(_transformation(plt, transformation))
    ncp = release.utility.get("ncp") if release.utility else None
    if ncp:
        figures.append(_ncp(plt, ncp))
    risk = release.shown_risk()  # without what the release withholds
    if risk.get("before") and risk.get("after"):
        figures.append(_risk(plt, risk["before"], risk["after"]))
    return figures
