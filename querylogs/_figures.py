"""Figures of the querylogs HTML report: top queries kept, cluster sizes, query events,
uniqueness.

Nothing per cluster: a cluster's additions and suppressions with its published size would
give its members' original query total.  The before/after view shows only queries that at
least ``k`` distinct users typed.  Each figure's title is the report's caption.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from structanon import Release
from structanon._engine import compute, is_dask
from structanon.report import (
    ReportFigure,
    before_after_bars,
    noisy_view_counts,
    small_count_floor,
)

TOP_QUERIES = 15

__all__ = ["release_figures"]


def release_figures(release: Release, original: Any = None) -> list[ReportFigure | tuple[str, Any]]:
    """Figures for the HTML report of a querylogs release.

    With ``original`` (the input log, pandas or Dask), the report first shows the query
    events of the most widely typed queries in the input and in the release.  A Dask log
    and a lazy release give the same view from per-query counts made partition by
    partition (the input's rows shuffled by user), never collecting their rows.

    Examples
    --------
    >>> import querylogs
    >>> release = querylogs.anonymize(querylogs.synthetic_log(30, 900, seed=1), 3,
    ...                               key=b"0123456789abcdef", measures=False)
    >>> [f[0] for f in release_figures(release)]  # doctest: +NORMALIZE_WHITESPACE
    ['Cluster sizes (users per cluster)',
     'Query events kept, added and suppressed (whole release)']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures: list[tuple[str, Any]] = [
        _cluster_sizes(plt, release.info),
        _query_events(plt, release.info),
    ]
    risk = release.shown_risk()  # without what the release withholds
    if risk.get("before") and risk.get("after"):
        figures.append(_uniqueness(plt, risk["before"], risk["after"]))
    for _, figure in figures:
        figure.tight_layout()
    view = [] if original is None else _top_queries(release, original)
    return [*view, *figures]


def _events(log: pd.DataFrame) -> pd.DataFrame:
    """One row per query event (user, query, time), the query in a normal form."""
    events = pd.DataFrame(
        {
            "user": log["user"].to_numpy(),
            "query": log["query"].astype(str).str.strip().str.lower().to_numpy(),
            "time": log["time"].to_numpy(),
        }
    )
    return events.drop_duplicates()


def _per_query(rows: pd.DataFrame) -> pd.DataFrame:
    """Per query (sorted): distinct users and query events of rows holding whole users."""
    events = _events(rows)
    grouped = events.groupby("query", sort=True)
    return pd.DataFrame({"users": grouped["user"].nunique(), "events": grouped.size()})


def _query_counts(log: Any) -> pd.DataFrame:
    """:func:`_per_query` of a whole log; of a Dask log per partition, its rows shuffled
    by user first."""
    if not is_dask(log):
        return _per_query(log)
    meta = pd.DataFrame(
        {"users": pd.Series(dtype=np.int64), "events": pd.Series(dtype=np.int64)},
        index=pd.Index([], dtype=object, name="query"),
    )
    rows = log[["user", "query", "time"]]
    (found,) = compute(rows.shuffle(on="user").map_partitions(_per_query, meta=meta))
    return found.groupby(level=0, sort=True).sum()


def _published_users(data: Any) -> pd.Series:
    """Distinct users per query of a release (a lazy release's partitions hold whole
    users)."""

    def per_query(part: pd.DataFrame) -> pd.Series:
        return _events(part).groupby("query")["user"].nunique()

    if not is_dask(data):
        return per_query(data)
    meta = pd.Series(dtype=np.int64, index=pd.Index([], dtype=object, name="query"))
    (found,) = compute(data.map_partitions(per_query, meta=meta))
    return found.groupby(level=0).sum()


def _top_queries(release: Release, original: Any) -> list[ReportFigure]:
    """Users of the input's most widely typed queries, before and after.

    Users, not query events: one user adds at most 1 to a query's bar, which the views'
    noise hides between two reports of logs one user apart (a user's events are unbounded:
    the events of "google.com" told how often the removed user typed it)."""
    floor = small_count_floor(release)
    counts = _query_counts(original)
    noisy, wide = noisy_view_counts(counts["users"].to_numpy(), floor)
    if not wide.any():
        return []
    users = pd.Series(noisy[wide], index=counts.index[wide])
    top = users.sort_values(ascending=False, kind="stable").iloc[:TOP_QUERIES]
    after = _published_users(release.data)
    kept = [int(after.get(q, 0)) for q in top.index]
    # a query the release does not publish is not named (its text would be news)
    labels = [
        str(q) if n else f"#{rank} (not in the release)"
        for rank, (q, n) in enumerate(zip(top.index, kept), start=1)
    ]
    title = f"Top {len(top)} queries: users who typed them in the input and in the release"
    fig = before_after_bars(
        labels,
        top.to_list(),
        kept,
        title=title,
        xlabel="users who typed the query (input: with noise)",
        ylabel="query (typed by >= k users)",
    )
    share = sum(kept) / max(int(top.sum()), 1)
    alt = (
        f"{title}. Horizontal bars for the {len(top)} queries typed by the most users, at "
        f"least {floor}; the release keeps {share:.0%} of their users. The input's counts "
        "carry random noise of a few users, so two reports of logs one user apart cannot "
        "be subtracted."
    )
    return [ReportFigure(title, fig, alt, view=True)]


def _cluster_sizes(plt: Any, info: dict[str, Any]) -> tuple[str, Any]:
    fig, ax = plt.subplots(figsize=(5, 3))
    sizes = sorted(info["cluster_size_counts"].items())
    ax.bar([str(size) for size, _ in sizes], [count for _, count in sizes], color="#4c72b0")
    ax.set_xlabel("cluster size (users)")
    ax.set_ylabel("clusters (count)")
    title = "Cluster sizes (users per cluster)"
    ax.set_title(title, fontsize=9)
    return title, fig


def _query_events(plt: Any, info: dict[str, Any]) -> tuple[str, Any]:
    fig, ax = plt.subplots(figsize=(5.5, 3))
    kept = info["queries_published"] - info["queries_added"]
    parts = {
        "kept": kept,
        "added": info["queries_added"],
        "suppressed\n(identifiers)": info["queries_suppressed_identifier"],
        "suppressed\n(clustering)": info["queries_suppressed_clustering"],
    }
    bars = ax.bar(
        list(parts), list(parts.values()), color=["#55a868", "#dd8452", "#c44e52", "#8172b2"]
    )
    ax.bar_label(bars, fmt="%d", fontsize=7)
    ax.set_xlabel("what happened to the query events")
    ax.set_ylabel("query events (all users)")
    ax.tick_params(axis="x", labelsize=7)
    ax.margins(y=0.15)
    title = "Query events kept, added and suppressed (whole release)"
    ax.set_title(title, fontsize=9)
    return title, fig


def _uniqueness(plt: Any, before: dict[str, Any], after: dict[str, Any]) -> tuple[str, Any]:
    keys = [key for key in before if key.startswith("unique_by")]
    fig, ax = plt.subplots(figsize=(6.5, 3))
    x = np.arange(len(keys))
    for shift, label, values in ((-0.2, "before", before), (0.2, "after", after)):
        bars = ax.bar(x + shift, [values[key] for key in keys], width=0.4, label=label)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(x, [key.replace("unique_by_", "").replace("_", " ") for key in keys])
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("what the attacker knows of a user")
    ax.set_ylabel("share of users unique (0-1)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    title = "Users unique by their queries, before and after"
    ax.set_title(title, fontsize=9)
    return title, fig
