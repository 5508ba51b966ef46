"""A search log held as a Dask DataFrame: the log's heavy reductions out of core.

The partitions are parsed, normalized and reduced where they lie, in one pass:

* each row is checked (user, query and time present, time a date-time), its query
  normalized, its URL cleaned, and given the secret random draw the pandas path gives
  the same row (the ``click-url`` generator advanced to the row's global position);
* users, queries and URLs become partition-local integer codes (each string listed once
  per partition), so only integers and the partitions' distinct strings reach the client;
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

import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from structanon._engine import compute
from structanon.errors import InfeasibleError, InputError

__all__ = [
    "dask_events",
    "dask_user_signatures",
    "lazy_publication",
    "published_rows",
    "remember_lengths",
]


@dataclass
class DaskLog:
    """The reduced log: events (as ``_anonymize._events`` gives them), vocabulary, users,
    the click graph's counts and the number of input rows."""

    events: dict[str, Any]
    users: np.ndarray
    vocabulary: np.ndarray
    n_rows: int
    clicks: pd.DataFrame  # query code, URL code, count, first row


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
    """One row per (user, query, time): a clicked row first (``url`` code >= 0), then the
    smallest draw."""
    ordered = frame.assign(no_url=frame["url"].to_numpy() < 0).sort_values(
        ["user", "query", "t", "no_url", "draw"], kind="stable"
    )
    return ordered.drop_duplicates(["user", "query", "t"]).drop(columns="no_url")


def _partition(pdf: pd.DataFrame, offset: int, state: dict[str, Any]) -> dict[str, Any]:
    """A partition's candidate events, click counts and first rows, with the users,
    queries and URLs as partition-local integer codes (their strings listed once)."""
    frame = _clean(pdf, offset)
    bits = np.random.PCG64()
    bits.state = state  # type: ignore[assignment]
    bits.advance(offset)
    draw = np.random.Generator(bits).random(len(frame))
    user, users = pd.factorize(frame["user"])
    query, queries = pd.factorize(frame["query"])
    url, urls = pd.factorize(frame["url"])  # no click: -1
    coded = pd.DataFrame(
        {
            "user": user.astype(np.int64),
            "query": query.astype(np.int64),
            "t": frame["t"].to_numpy(),
            "url": url.astype(np.int64),
            "row": frame["row"].to_numpy(),
            "draw": draw,
        }
    )
    clicked = coded[coded["url"].to_numpy() >= 0]
    clicks = clicked.groupby(["query", "url"], sort=False)["row"].agg(["size", "min"]).reset_index()
    first = coded.groupby("query", sort=True)["row"].min().to_numpy()
    return {
        "events": _best_rows(coded),
        "clicks": clicks,
        "first_query": first,
        "users": np.asarray(users, dtype=object),
        "queries": np.asarray(queries, dtype=object),
        "urls": np.asarray(urls, dtype=object),
    }


def _global_codes(results: Any, name: str) -> tuple[list[np.ndarray], np.ndarray]:
    """Per partition, the global code of each local code of ``name``; the global values."""
    values = [r[name] for r in results]
    codes, uniques = pd.factorize(pd.Series(np.concatenate(values), dtype=object))
    bounds = np.cumsum([0] + [v.size for v in values])
    return [codes[a:b] for a, b in zip(bounds[:-1], bounds[1:])], np.asarray(uniques, object)


def _remap(table: pd.DataFrame, maps: dict[str, np.ndarray]) -> pd.DataFrame:
    out = table.copy()
    for column, lookup in maps.items():
        local = out[column].to_numpy()
        mapped = lookup[np.maximum(local, 0)] if lookup.size else np.zeros(local.size, np.int64)
        out[column] = np.where(local >= 0, mapped, -1).astype(np.int32)
    return out


#: Rows per partition of the logs :func:`querylogs.read_log_dask` read (its parse pass
#: counted them), by the Dask collection's name: the first pass below is then skipped.
_KNOWN_LENGTHS: dict[str, list[int]] = {}


def remember_lengths(ddf: Any, lengths: list[int]) -> None:
    """Record the rows of each partition of ``ddf`` (see ``_KNOWN_LENGTHS``)."""
    if len(_KNOWN_LENGTHS) > 64:
        _KNOWN_LENGTHS.clear()
    _KNOWN_LENGTHS[str(ddf._name)] = list(lengths)


def dask_events(ddf: Any, k: int, user_order: Any, click_rng: Any) -> DaskLog:
    """Reduce a Dask log to its events (see the module docstring)."""
    import dask

    parts = ddf.to_delayed()
    known = _KNOWN_LENGTHS.get(str(ddf._name))
    lengths: list[int] = (
        known
        if known is not None and len(known) == len(parts)
        else list(compute(*[dask.delayed(len)(p) for p in parts]))
    )
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int)
    n_rows = int(sum(lengths))
    if n_rows == 0:
        raise InputError("the log is empty (no query rows)")
    state = click_rng.bit_generator.state
    results = compute(*[dask.delayed(_partition)(p, int(o), state) for p, o in zip(parts, offsets)])
    user_maps, user_values = _global_codes(results, "users")
    query_maps, query_values = _global_codes(results, "queries")
    url_maps, url_values = _global_codes(results, "urls")
    # the vocabulary in order of first row, the users sorted (as the pandas path numbers them)
    first = np.full(query_values.size, np.iinfo(np.int64).max, dtype=np.int64)
    for r, lookup in zip(results, query_maps):
        np.minimum.at(first, lookup, r["first_query"])
    by_first = np.argsort(first, kind="stable")
    vocabulary = query_values[by_first]
    code_of = np.empty(by_first.size, dtype=np.int64)
    code_of[by_first] = np.arange(by_first.size)
    by_name = np.argsort(user_values, kind="stable")
    users = user_values[by_name]
    rank = np.empty(by_name.size, dtype=np.int64)
    rank[by_name] = np.arange(by_name.size)
    if len(users) < k:
        raise InfeasibleError(f"k={k} exceeds the number of users in the log ({len(users)})")
    candidates = pd.concat(
        [
            _remap(r["events"], {"user": rank[um], "query": code_of[qm], "url": lm})
            for r, um, qm, lm in zip(results, user_maps, query_maps, url_maps)
        ],
        ignore_index=True,
    )
    for r in results:  # the partitions' events now live in ``candidates`` only
        r.pop("events")
    best = _best_rows(candidates)
    del candidates
    secret = user_order.permutation(len(users))
    users = np.asarray(users, dtype=object)[np.argsort(secret)]
    u = secret[best["user"].to_numpy()]
    q = best["query"].to_numpy(np.int64)
    t = best["t"].to_numpy(np.int64)
    order = np.lexsort((t, q, u))
    url_code = best["url"].to_numpy()[order]
    url = np.full(url_code.size, None, dtype=object)
    url[url_code >= 0] = url_values[url_code[url_code >= 0]]
    clicks = pd.concat(
        [
            _remap(r["clicks"], {"query": code_of[qm], "url": lm})
            for r, qm, lm in zip(results, query_maps, url_maps)
        ],
        ignore_index=True,
    )
    clicks = clicks.groupby(["query", "url"], sort=False).agg({"size": "sum", "min": "min"})
    events = {
        "user": u[order].astype(np.int64),
        "query": q[order].astype(np.int64),
        "time": t[order].view("datetime64[ns]"),
        "url": url,
        "row": best["row"].to_numpy(np.int64)[order],
        "n": int(len(best)),
    }
    return DaskLog(events, users, vocabulary, n_rows, clicks.reset_index())


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


#: Published rows per partition of a lazy release (about; whole users per partition).
ROWS_PER_PART = 1_000_000


@dataclass
class _Published:
    """The broadcast tables of a lazy publication: chosen events grouped by cluster, and
    each user's cluster and pseudonym."""

    labels: np.ndarray  # user -> cluster
    start: np.ndarray  # cluster -> first position in ``by_group``
    count: np.ndarray  # cluster -> number of published events
    by_group: np.ndarray  # chosen positions, grouped by cluster (chosen order within)
    query: np.ndarray  # per chosen position: published query text
    time: np.ndarray  # per chosen position: generalized time
    url: np.ndarray  # per chosen position: published URL
    row: np.ndarray  # per chosen position: input row (the private source index)
    pseudonyms: np.ndarray  # user -> pseudonym


def _published_rows(table: _Published, users: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """The published rows of ``users`` (in pseudonym order), sorted as the pandas path sorts
    the whole release, and their source rows."""
    group = table.labels[users]
    count = table.count[group]
    total = int(count.sum())
    offset = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    pos = table.by_group[np.repeat(table.start[group], count) + offset]
    data = pd.DataFrame(
        {
            "user": table.pseudonyms[np.repeat(users, count)],
            "query": table.query[pos],
            "time": table.time[pos],
            "url": table.url[pos],
        }
    )
    data = data.sort_values(["user", "time", "query", "url"], kind="stable", na_position="first")
    return data.reset_index(drop=True), table.row[pos][data.index.to_numpy()]


def _part_data(table: _Published, users: np.ndarray) -> pd.DataFrame:
    return _published_rows(table, users)[0]


def _part_source(table: _Published, users: np.ndarray) -> pd.Series:
    return pd.Series(_published_rows(table, users)[1], dtype=np.int64)


def lazy_publication(
    ev: dict[str, Any],
    chosen: np.ndarray,
    event_group: np.ndarray,
    labels: np.ndarray,
    vocabulary: np.ndarray,
    pseudonyms: np.ndarray,
    times: np.ndarray,
    rows_per_part: int | None = None,
) -> tuple[Any, Any]:
    """The published log as a Dask DataFrame, and its source rows as a Dask Series.

    The client holds one row per chosen event (the cluster's published multiset) and one
    per user (cluster, pseudonym); these tables are broadcast once, and each partition
    expands the events of its users' clusters to one row per member.  Partitions hold
    whole users, in pseudonym order, each sorted by (user, time, query, URL): the
    partitions in order are the pandas release row for row.  ``times`` are the chosen
    events' generalized times."""
    import dask
    import dask.dataframe as dd

    rows_per_part = rows_per_part or ROWS_PER_PART
    chosen = np.asarray(chosen, dtype=np.int64)
    groups = event_group[chosen]
    n_groups = int(labels.max()) + 1 if labels.size else 0
    count = np.bincount(groups, minlength=n_groups).astype(np.int64)
    table = _Published(
        labels=labels,
        start=np.r_[0, np.cumsum(count)[:-1]].astype(np.int64),
        count=count,
        by_group=np.argsort(groups, kind="stable"),
        query=vocabulary[ev["query"][chosen]],
        time=np.asarray(times, dtype="datetime64[ns]"),
        url=ev["url"][chosen],
        row=ev["row"][chosen],
        pseudonyms=pseudonyms,
    )
    order = np.argsort(pseudonyms, kind="stable")
    order = order[count[labels[order]] > 0]  # users publishing nothing have no rows
    rows = np.cumsum(count[labels[order]])
    cuts = np.searchsorted(
        rows, np.arange(rows_per_part, rows[-1] if rows.size else 0, rows_per_part), side="right"
    )
    pieces = np.split(order, cuts) if order.size else [order]
    shared = _broadcast(table)
    meta = pd.DataFrame(
        {
            "user": pd.Series(dtype=object),
            "query": pd.Series(dtype=object),
            "time": pd.Series(dtype="datetime64[ns]"),
            "url": pd.Series(dtype=object),
        }
    )
    data = dd.from_delayed(
        [dask.delayed(_part_data)(shared, piece) for piece in pieces],
        meta=meta,
        verify_meta=False,
    )
    source = dd.from_delayed(
        [dask.delayed(_part_source)(shared, piece) for piece in pieces],
        meta=pd.Series(dtype=np.int64),
        verify_meta=False,
    )
    return data, source


def _broadcast(table: _Published) -> Any:
    """``table`` sent once to every worker of the distributed client (a future), or one
    key of the graph on the local schedulers."""
    import dask

    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return dask.delayed(table, name=f"querylogs-publication-{uuid.uuid4().hex}")
    return client.scatter(table, broadcast=True, hash=False)


def published_rows(labels: np.ndarray, chosen: np.ndarray, event_group: np.ndarray) -> int:
    """Rows of the release: every chosen event once per member of its cluster."""
    sizes = np.bincount(labels)
    return int(sizes[event_group[chosen]].sum()) if chosen.size else 0


def _part_signatures(pdf: pd.DataFrame, column_sets: list[list[str]]) -> pd.DataFrame:
    """One row per user of the partition: for each column set, a digest of the user's
    multiset of rows over it (content hashes of the rows, sorted), comparable across
    partitions."""
    import hashlib

    names = [f"sig{i}" for i in range(len(column_sets))]
    if len(pdf) == 0:
        return pd.DataFrame({name: pd.Series(dtype=object) for name in ["user", *names]})
    users, codes = np.unique(pdf["user"].astype(str).to_numpy(), return_inverse=True)
    found: dict[str, Any] = {"user": users.astype(object)}
    for name, columns in zip(names, column_sets):
        row_hash = pd.util.hash_pandas_object(pdf[columns], index=False).to_numpy()
        order = np.lexsort((row_hash, codes))
        bounds = np.flatnonzero(np.diff(codes[order])) + 1
        found[name] = [
            hashlib.blake2b(piece.tobytes(), digest_size=16).digest()
            for piece in np.split(row_hash[order], bounds)
        ]
    return pd.DataFrame(found)


def dask_user_signatures(data: Any, *column_sets: tuple[str, ...]) -> list[pd.Series]:
    """:func:`querylogs.user_signatures` of a lazy published log for each column set, in
    one pass: digests per partition; where a user's rows lie in several partitions, the
    log is first shuffled by user."""
    sets = [list(columns) for columns in column_sets]
    meta = pd.DataFrame(
        {name: pd.Series(dtype=object) for name in ["user"] + [f"sig{i}" for i in range(len(sets))]}
    )
    (found,) = compute(data.map_partitions(_part_signatures, sets, meta=meta))
    if found["user"].duplicated().any():
        (found,) = compute(
            data.shuffle(on="user").map_partitions(_part_signatures, sets, meta=meta)
        )
    users = found["user"].to_numpy()
    return [
        pd.Series(found[f"sig{i}"].to_numpy(), index=users, dtype=object) for i in range(len(sets))
    ]
