"""A search log held as a Dask DataFrame: the log's heavy reductions out of core.

The partitions are parsed, normalized and reduced where they lie, in one pass:

* each row is checked (user, query and time present, time a date-time), its query
  normalized, its URL cleaned, and given the secret random draw the pandas path gives
  the same row (the ``click-url`` generator advanced to the row's global position);
* rows are reduced to query events (one per user, normalized query and time), keeping the
  row whose URL the pandas path would publish (a clicked row first, then the smallest
  draw), so the reduction of the partitions' candidates on the client picks the same row;
* the click graph is reduced to its (query, URL) click counts, and the vocabulary and URLs
  to their first rows (the pandas path numbers both by first appearance).

The client then holds one row per event, builds the state the pandas path builds, and the
rest (intents, the sparse user x query profiles, grouping and publication) runs in memory
on it, so the release is the pandas release for the same inputs, seed and key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from structanon._engine import compute
from structanon.errors import InfeasibleError, InputError
from structanon.partition import encode_values

__all__ = ["dask_events"]


@dataclass
class DaskLog:
    """The reduced log: events (as ``_anonymize._events`` gives them), vocabulary, users,
    the click graph's counts and the number of input rows."""

    events: dict[str, Any]
    users: np.ndarray
    vocabulary: np.ndarray
    n_rows: int
    clicks: pd.DataFrame  # query code, url, count, first row


def _clean(pdf: pd.DataFrame, offset: int) -> pd.DataFrame:
    """Checked and normalized rows of one partition (as ``_anonymize._validate``)."""
    for column in ("user", "query", "time"):
        if column not in pdf.columns:
            raise InputError(f"the log has no column {column!r}", column=column)
    for column in ("user", "query"):
        missing = pdf[column].isna().to_numpy()
        if missing.any():
            row = offset + int(np.flatnonzero(missing)[0])
            raise InputError("missing value", column=column, row=row)
    try:
        time = pd.to_datetime(pdf["time"].to_numpy())
    except (ValueError, TypeError) as exc:
        raise InputError(f"time is not a date-time: {exc}", column="time") from None
    missing = np.asarray(pd.isna(time))
    if missing.any():
        raise InputError(
            "missing value", column="time", row=offset + int(np.flatnonzero(missing)[0])
        )
    url = pdf["url"] if "url" in pdf.columns else pd.Series(None, index=pdf.index, dtype=object)
    url = url.astype(object).where(url.notna() & (url.astype(str) != ""))
    raw_codes, raw = pd.factorize(pdf["query"].astype(str), use_na_sentinel=False)
    normalized = pd.Series(raw, dtype=object).str.lower().str.split().str.join(" ").fillna("")
    return pd.DataFrame(
        {
            "user": pdf["user"].astype(str).to_numpy(),
            "query": normalized.to_numpy()[raw_codes],
            "t": np.asarray(time, dtype="datetime64[ns]").view(np.int64),
            "url": url.to_numpy(dtype=object),
            "row": np.arange(len(pdf), dtype=np.int64) + offset,
        }
    )


def _best_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (user, query, time): a clicked row first, then the smallest draw."""
    ordered = frame.assign(no_url=frame["url"].isna()).sort_values(
        ["user", "query", "t", "no_url", "draw"], kind="stable"
    )
    return ordered.drop_duplicates(["user", "query", "t"]).drop(columns="no_url")


def _partition(pdf: pd.DataFrame, offset: int, state: dict[str, Any]) -> dict[str, Any]:
    frame = _clean(pdf, offset)
    bits = np.random.PCG64()
    bits.state = state  # type: ignore[assignment]
    bits.advance(offset)
    frame["draw"] = np.random.Generator(bits).random(len(frame))
    clicked = frame[frame["url"].notna()]
    clicks = clicked.groupby(["query", "url"], sort=False)["row"].agg(["size", "min"]).reset_index()
    first_query = frame.groupby("query", sort=False)["row"].min()
    return {"events": _best_rows(frame), "clicks": clicks, "first_query": first_query}


def dask_events(ddf: Any, k: int, user_order: Any, click_rng: Any) -> DaskLog:
    """Reduce a Dask log to its events (see the module docstring)."""
    import dask

    parts = ddf.to_delayed()
    lengths = compute(*[dask.delayed(len)(p) for p in parts])
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int)
    n_rows = int(sum(lengths))
    if n_rows == 0:
        raise InputError("the log is empty (no query rows)")
    state = click_rng.bit_generator.state
    results = compute(*[dask.delayed(_partition)(p, int(o), state) for p, o in zip(parts, offsets)])
    candidates = pd.concat([r["events"] for r in results], ignore_index=True)
    best = _best_rows(candidates)
    first_query = pd.concat([r["first_query"] for r in results]).groupby(level=0).min()
    vocabulary = first_query.sort_values(kind="stable").index.to_numpy(dtype=object)
    code_of = pd.Series(np.arange(vocabulary.size), index=vocabulary)
    user_codes, users = encode_values(best["user"].to_numpy(dtype=object))
    if len(users) < k:
        raise InfeasibleError(f"k={k} exceeds the number of users in the log ({len(users)})")
    secret = user_order.permutation(len(users))
    users = np.asarray(users, dtype=object)[np.argsort(secret)]
    u = secret[user_codes]
    q = code_of.loc[best["query"].to_numpy()].to_numpy()
    t = best["t"].to_numpy(np.int64)
    order = np.lexsort((t, q, u))
    clicks = pd.concat([r["clicks"] for r in results], ignore_index=True)
    clicks = clicks.groupby(["query", "url"], sort=False).agg({"size": "sum", "min": "min"})
    clicks = clicks.reset_index()
    clicks["query"] = code_of.loc[clicks["query"].to_numpy()].to_numpy()
    events = {
        "user": u[order].astype(np.int64),
        "query": q[order].astype(np.int64),
        "time": t[order].view("datetime64[ns]"),
        "url": best["url"].to_numpy(dtype=object)[order],
        "row": best["row"].to_numpy(np.int64)[order],
        "n": int(len(best)),
    }
    return DaskLog(events, users, vocabulary, n_rows, clicks)


def click_counts(log: DaskLog, remap: np.ndarray, n_queries: int) -> sp.csr_matrix:
    """``_intents.click_graph`` of the kept rows from the reduced counts: URLs numbered by
    their first kept row, as the pandas path numbers them."""
    clicks = log.clicks
    kept = remap[clicks["query"].to_numpy()] >= 0
    clicks = clicks[kept]
    first_url = clicks.groupby("url", sort=False)["min"].min().sort_values(kind="stable")
    url_code = pd.Series(np.arange(len(first_url)), index=first_url.index)
    graph = sp.csr_matrix(
        (
            clicks["size"].to_numpy(np.float64),
            (
                remap[clicks["query"].to_numpy()],
                url_code.loc[clicks["url"].to_numpy()].to_numpy(),
            ),
        ),
        shape=(n_queries, len(first_url)),
    )
    graph.sum_duplicates()
    return graph
