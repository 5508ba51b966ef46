"""A search log held as a Dask DataFrame: the log's heavy work stays on the workers.

Each partition must hold whole users; where a user's rows lie in several partitions, the
checked rows (with their global row numbers and draws) are first shuffled by user.

* First pass, per partition: each row is checked (user, query and time present, time a
  date-time), its query normalized and its URL cleaned; rows are reduced to query events
  (one per user, normalized query and time) and the partition returns only aggregates:
  its distinct users, queries (with their first rows) and URLs, the click graph's (query,
  URL) counts, and the number of events of each (user, query) pair.  The client merges
  them into the sparse user x query counts the grouping needs: its memory grows with
  users x distinct queries per user, not with lines.  From the users and the vocabulary
  found, the client derives the secret streams bound to the log; every later pass gives
  each row the draw the pandas path gives it (the ``click-url`` generator advanced to the
  row's global position), before any shuffle by user.
* Second pass, per partition, after the grouping: the cluster of each user, the published
  count of each (cluster, item) and the (cluster, query) event counts are broadcast; each
  partition rebuilds its events, gives each the ``event-choice`` draw of its position in
  the pandas path's event order (the generator advanced to the user's first event), and
  proposes, per (cluster, item), its first ``target`` events by preference then draw.  The
  client keeps the first ``target`` of each key among the proposals (at most one per
  published row), which are the events the pandas path chooses.
* Publication: the chosen events (one per published event, not per row) and each user's
  cluster and pseudonym are broadcast, and each output partition expands its users' rows.

The release is the pandas release for the same inputs, seed and key.  The measures (which
compare whole logs) gather the events into memory (:func:`gather_events`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from structanon._engine import compute
from structanon.errors import InfeasibleError, InputError

__all__ = [
    "Choice",
    "choose_events",
    "click_counts",
    "dask_counts",
    "dask_user_signatures",
    "gather_events",
    "lazy_publication",
    "published_rows",
    "remember_lengths",
]


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
    from ._anonymize import log_times

    time = log_times(pdf["time"].to_numpy(), offset)
    missing = np.asarray(pd.isna(time))
    if missing.any():
        raise InputError(
            "missing value", column="time", row=offset + int(np.flatnonzero(missing)[0])
        )
    raw_codes, raw = _distinct(pdf["query"])
    normalized = pd.Series(_text(raw), dtype=object).str.lower().str.split().str.join(" ")
    user_codes, users = _distinct(pdf["user"])
    return pd.DataFrame(
        {
            "user": _text(users)[user_codes],
            "query": normalized.fillna("").to_numpy()[raw_codes],
            "t": np.asarray(time, dtype="datetime64[ns]").view(np.int64),
            "url": _urls(pdf),
            "row": np.arange(len(pdf), dtype=np.int64) + offset,
        }
    )


def _distinct(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes and distinct values of a column without missing values."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    return codes, np.asarray(uniques, dtype=object)


def _text(values: np.ndarray) -> np.ndarray:
    """``str`` of each value (``Series.astype(str)``), as an object array."""
    return np.array([str(value) for value in values], dtype=object)


def _urls(pdf: pd.DataFrame) -> np.ndarray:
    """The clicked URL of each row, None where there is none (missing or empty)."""
    out = np.full(len(pdf), None, dtype=object)
    if "url" not in pdf.columns:
        return out
    codes, uniques = pd.factorize(pdf["url"])  # missing: -1
    values = np.asarray(uniques, dtype=object)
    usable = np.r_[_text(values) != "", False]  # the last entry stands for code -1
    keep = usable[codes]
    out[keep] = values[codes[keep]]
    return out


def _best_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (user, query, time): a clicked row first (``url`` code >= 0), then the
    smallest draw."""
    ordered = frame.assign(no_url=frame["url"].to_numpy() < 0).sort_values(
        ["user", "query", "t", "no_url", "draw"], kind="stable"
    )
    return ordered.drop_duplicates(["user", "query", "t"]).drop(columns="no_url")


@dataclass
class DaskLog:
    """The reduced log: per-user query event counts, the click graph's counts, the
    vocabulary and users, and how to reach the partitions again (``plan``).  No event row
    is held here."""

    users: np.ndarray  # original ids, by secret user rank
    vocabulary: np.ndarray  # normalized queries, by first row
    n_rows: int
    n_events: int
    clicks: pd.DataFrame  # query code, URL code, count, first row
    urls: np.ndarray  # URL strings, by global URL code
    pair_user: np.ndarray  # (secret user rank, vocabulary code) -> event count
    pair_query: np.ndarray
    pair_count: np.ndarray
    plan: _Plan


@dataclass
class _Plan:
    """The partitions of the log, each holding whole users, and the codes of each
    partition's local (sorted) users, queries and URLs."""

    parts: list[Any]  # delayed partitions
    offsets: list[Any]  # global row of each raw partition's first row (None: not known yet)
    cleaned: bool  # the partitions are cleaned rows (shuffled by user), not raw rows
    click_state: dict[str, Any]
    user_rank: list[np.ndarray] = field(default_factory=list)  # local user -> secret rank
    query_code: list[np.ndarray] = field(default_factory=list)  # local query -> vocabulary
    url_code: list[np.ndarray] = field(default_factory=list)  # local URL -> global URL


def _drawn(part: pd.DataFrame, offset: int, state: dict[str, Any]) -> pd.DataFrame:
    """:func:`_clean` rows with the ``click-url`` draw of each row's global position."""
    frame = _clean(part, offset)
    bits = np.random.PCG64()
    bits.state = state  # type: ignore[assignment]
    bits.advance(offset)
    frame["draw"] = np.random.Generator(bits).random(len(frame))
    return frame


def _rows(part: pd.DataFrame, offset: int, state: dict[str, Any], cleaned: bool) -> pd.DataFrame:
    return part if cleaned else _drawn(part, offset, state)


def _coded(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """The rows with users, queries and URLs as local codes in sorted order of their
    values (so every pass over the same partition numbers them alike)."""
    user, users = pd.factorize(frame["user"].to_numpy(dtype=object), sort=True)
    query, queries = pd.factorize(frame["query"].to_numpy(dtype=object), sort=True)
    url, urls = pd.factorize(frame["url"].to_numpy(dtype=object), sort=True)  # no click: -1
    coded = pd.DataFrame(
        {
            "user": user.astype(np.int64),
            "query": query.astype(np.int64),
            "t": frame["t"].to_numpy(np.int64),
            "url": url.astype(np.int64),
            "row": frame["row"].to_numpy(np.int64),
        }
    )
    if "draw" in frame:
        coded["draw"] = frame["draw"].to_numpy(np.float64)
    as_object = [np.asarray(v, dtype=object) for v in (users, queries, urls)]
    return coded, as_object[0], as_object[1], as_object[2]


def _aggregate(part: Any, offset: int | None, cleaned: bool) -> dict[str, Any]:
    """First pass over a partition: its users, queries (with their first rows), URLs,
    click counts and per (user, query) event counts, all in local codes (no draw: the
    ``click-url`` stream is bound to the users and vocabulary this pass finds).  With
    ``offset=None`` (the rows before the partition not yet counted) the row numbers are
    local and bad input is only flagged (the client names the row)."""
    try:
        frame = part if cleaned else _clean(part, offset or 0)
    except InputError:
        if offset is not None:
            raise
        return {"error": True, "rows": len(part)}
    coded, users, queries, urls = _coded(frame)
    clicked = coded[coded["url"].to_numpy() >= 0]
    clicks = clicked.groupby(["query", "url"], sort=False)["row"].agg(["size", "min"]).reset_index()
    events = coded[["user", "query", "t"]].drop_duplicates()
    pairs = events.groupby(["user", "query"], sort=True).size()
    return {
        "rows": len(coded),
        "users": users,
        "queries": queries,
        "urls": urls,
        "first_query": coded.groupby("query", sort=True)["row"].min().to_numpy(),
        "clicks": clicks,
        "pair_user": pairs.index.get_level_values(0).to_numpy(np.int32),
        "pair_query": pairs.index.get_level_values(1).to_numpy(np.int32),
        "pair_count": pairs.to_numpy(np.int32),
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


def _by_user(drawn: list[Any]) -> list[Any]:
    """The cleaned rows (global row and draw kept) shuffled so each user lies in one
    partition."""
    import dask.dataframe as dd

    meta = pd.DataFrame(
        {
            "user": pd.Series(dtype=object),
            "query": pd.Series(dtype=object),
            "t": pd.Series(dtype=np.int64),
            "url": pd.Series(dtype=object),
            "row": pd.Series(dtype=np.int64),
            "draw": pd.Series(dtype=np.float64),
        }
    )
    rows = dd.from_delayed(drawn, meta=meta, verify_meta=False)
    return list(rows.shuffle(on="user").to_delayed())


def dask_counts(ddf: Any, k: int, log_secret: Any) -> DaskLog:
    """Reduce a Dask log to per-user query event counts (see the module docstring).

    ``log_secret(users, vocabulary)`` gives the secret streams bound to the log (its users,
    sorted, and its vocabulary, which the first pass finds)."""
    import dask

    parts = list(ddf.to_delayed())
    known = _KNOWN_LENGTHS.get(str(ddf._name))
    if known is not None and len(known) != len(parts):
        known = None
    # one pass gives the aggregates and the partitions' lengths (unless already known)
    results = _first_pass(
        _Plan(parts, _offsets(known) if known else [None] * len(parts), False, {})
    )
    offsets = _offsets([r["rows"] for r in results])
    if known is None:
        for i, r in enumerate(results):
            if "error" in r:  # bad input: named with its global row
                compute(dask.delayed(_clean)(parts[i], offsets[i]))
                raise InputError("the log has a bad row")  # not reached: _clean raises
            r["first_query"] = r["first_query"] + offsets[i]
            r["clicks"]["min"] += offsets[i]
    n_rows = int(sum(r["rows"] for r in results))
    if n_rows == 0:
        raise InputError("the log is empty (no query rows)")
    user_maps, user_values = _global_codes(results, "users")
    if user_values.size < k:
        raise InfeasibleError(f"k={k} exceeds the number of users in the log ({user_values.size})")
    query_maps, code_of, vocabulary = _vocabulary(results)
    by_name = np.argsort(user_values, kind="stable")
    named = np.asarray(user_values[by_name], dtype=object)
    streams = log_secret(named, vocabulary)
    state = dict(streams("click-url").bit_generator.state)
    plan = _Plan(parts, offsets, False, state)
    if sum(m.size for m in user_maps) > user_values.size:  # a user in several partitions
        plan = _Plan(_whole_users(parts, offsets, state, results, user_maps), [], True, state)
        plan.offsets = [0] * len(plan.parts)
        results = _first_pass(plan)
        user_maps, user_values = _global_codes(results, "users")
        query_maps, code_of, vocabulary = _vocabulary(results)
        by_name = np.argsort(user_values, kind="stable")
    url_maps, url_values = _global_codes(results, "urls")
    # sorted user code -> secret rank (the stream bound to the users and the vocabulary)
    secret = streams("user-order").permutation(user_values.size)
    rank = np.empty(by_name.size, dtype=np.int64)
    rank[by_name] = secret
    users = np.empty(user_values.size, dtype=object)
    users[rank] = user_values
    plan.user_rank = [rank[m] for m in user_maps]
    plan.query_code = [code_of[m] for m in query_maps]
    plan.url_code = [m.astype(np.int64) for m in url_maps]
    pair_user = np.concatenate(
        [ranks[r.pop("pair_user")] for r, ranks in zip(results, plan.user_rank)]
    )
    pair_query = np.concatenate(
        [codes[r.pop("pair_query")] for r, codes in zip(results, plan.query_code)]
    )
    pair_count = np.concatenate([r.pop("pair_count") for r in results]).astype(np.int64)
    order = np.lexsort((pair_query, pair_user))
    clicks = pd.concat(
        [
            _remap(r["clicks"], {"query": code_of[qm], "url": lm})
            for r, qm, lm in zip(results, query_maps, url_maps)
        ],
        ignore_index=True,
    )
    clicks = clicks.groupby(["query", "url"], sort=False).agg({"size": "sum", "min": "min"})
    return DaskLog(
        users=users,
        vocabulary=vocabulary,
        n_rows=n_rows,
        n_events=int(pair_count.sum()),
        clicks=clicks.reset_index(),
        urls=url_values,
        pair_user=pair_user[order],
        pair_query=pair_query[order],
        pair_count=pair_count[order],
        plan=plan,
    )


def _vocabulary(results: list[dict[str, Any]]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Per partition, the vocabulary code of each local query; the vocabulary code of each
    global query code; the vocabulary (the normalized queries in order of first row, as the
    pandas path numbers them)."""
    query_maps, query_values = _global_codes(results, "queries")
    first = np.full(query_values.size, np.iinfo(np.int64).max, dtype=np.int64)
    for r, lookup in zip(results, query_maps):
        np.minimum.at(first, lookup, r["first_query"])
    by_first = np.argsort(first, kind="stable")
    code_of = np.empty(by_first.size, dtype=np.int64)
    code_of[by_first] = np.arange(by_first.size)
    return query_maps, code_of, query_values[by_first]


def _offsets(lengths: list[int]) -> list[int]:
    return [int(o) for o in np.concatenate([[0], np.cumsum(lengths)[:-1]])]


#: Above this many other partitions holding a partition's users, the rows are shuffled.
MAX_SOURCES = 2


def _whole_users(
    parts: list[Any],
    offsets: list[int],
    state: dict[str, Any],
    results: list[dict[str, Any]],
    user_maps: list[np.ndarray],
) -> list[Any]:
    """Partitions of whole users: each user's rows gathered into the first partition
    holding the user, from the few others holding it (a log sorted by user, cut into
    blocks: its boundary users); when a partition would gather from more than
    :data:`MAX_SOURCES` others, all rows are shuffled by user instead."""
    import dask

    codes = np.concatenate(user_maps)
    part_of = np.repeat(np.arange(len(user_maps)), [m.size for m in user_maps])
    owner = np.full(int(codes.max()) + 1, len(parts), dtype=np.int64)
    np.minimum.at(owner, codes, part_of)
    moved = owner[codes] != part_of  # (partition, user) whose rows go to the owner
    sources: dict[int, set[int]] = {}
    for j, u in zip(part_of[moved].tolist(), codes[moved].tolist()):
        sources.setdefault(int(owner[u]), set()).add(j)
    drawn = [dask.delayed(_drawn)(p, o, state) for p, o in zip(parts, offsets)]
    if max(len(found) for found in sources.values()) > MAX_SOURCES:
        return _by_user(drawn)
    leaving: list[set[int]] = [set() for _ in parts]  # users each partition gives away
    for j, u in zip(part_of[moved].tolist(), codes[moved].tolist()):
        leaving[j].add(u)
    names = [r["users"] for r in results]
    out = []
    for i in range(len(parts)):
        gone = names[i][np.isin(user_maps[i], list(leaving[i]))]
        taken = []
        for j in sorted(sources.get(i, ())):
            mine = user_maps[j][owner[user_maps[j]] == i]
            taken.append((drawn[j], names[j][np.isin(user_maps[j], mine)]))
        out.append(dask.delayed(_gathered)(drawn[i], gone, taken))
    return out


def _gathered(
    own: pd.DataFrame, gone: np.ndarray, taken: list[tuple[pd.DataFrame, np.ndarray]]
) -> pd.DataFrame:
    """A partition's rows without the users it gives away, with the rows of the users it
    takes from others."""
    kept = own[~own["user"].isin(gone)] if gone.size else own
    more = [rows[rows["user"].isin(users)] for rows, users in taken]
    return pd.concat([kept, *more], ignore_index=True) if more else kept


def _first_pass(plan: _Plan) -> list[dict[str, Any]]:
    import dask

    return list(
        compute(
            *[
                dask.delayed(_aggregate)(p, o, plan.cleaned)
                for p, o in zip(plan.parts, plan.offsets)
            ]
        )
    )


def _tasks(plan: _Plan, fn: Any, *args: Any) -> list[Any]:
    """``fn(partition, its arguments, *args)`` for each partition, as delayed calls."""
    import dask

    return [
        dask.delayed(fn)(
            part,
            (plan.offsets[i], plan.click_state, plan.cleaned),
            (plan.user_rank[i], plan.query_code[i], plan.url_code[i]),
            *args,
        )
        for i, part in enumerate(plan.parts)
    ]


def _events_of(part: Any, where: tuple[Any, ...], maps: tuple[Any, ...]) -> dict[str, np.ndarray]:
    """A partition's query events (one row per user, query, time: a clicked row first,
    then the smallest draw) in global codes, sorted by (user, query, time)."""
    user_rank, query_code, url_code = maps
    coded, _, _, _ = _coded(_rows(part, *where))
    best = _best_rows(coded)
    u = user_rank[best["user"].to_numpy()]
    q = query_code[best["query"].to_numpy()]
    t = best["t"].to_numpy(np.int64)
    local_url = best["url"].to_numpy()
    known = url_code[np.maximum(local_url, 0)] if url_code.size else np.full(local_url.size, -1)
    url = np.where(local_url >= 0, known, -1)  # no URL in the partition: none known
    order = np.lexsort((t, q, u))
    return {
        "user": u[order],
        "query": q[order],
        "t": t[order],
        "url": url[order],
        "row": best["row"].to_numpy(np.int64)[order],
    }


@dataclass
class Choice:
    """The broadcast tables of the event choice (``_multisets.select_events`` per
    partition)."""

    labels: np.ndarray  # secret user rank -> cluster
    kept: np.ndarray  # vocabulary code -> kept query code (-1: an identifier query)
    item_of: np.ndarray | None  # kept query code -> item (None: the query itself)
    n_items: int
    n_queries: int  # kept queries
    block_keys: np.ndarray  # sorted (cluster, item) keys
    block_target: np.ndarray  # published count of each key
    pref_keys: np.ndarray  # sorted (cluster, kept query) keys
    pref_count: np.ndarray  # events of each key
    user_start: np.ndarray  # secret user rank -> position of the user's first kept event
    state: dict[str, Any]  # the event-choice generator


def _ranks(key: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rank of each element of ``order`` among the elements of its key (sorted by key)."""
    sorted_key = key[order]
    starts = np.r_[True, sorted_key[1:] != sorted_key[:-1]] if key.size else np.zeros(0, bool)
    start_index = np.maximum.accumulate(np.where(starts, np.arange(key.size), 0))
    return np.arange(key.size) - start_index


def _candidates(
    part: Any, where: tuple[Any, ...], maps: tuple[Any, ...], choice: Choice
) -> pd.DataFrame:
    """Second pass over a partition: its kept events that may be published (the first
    ``target`` of each (cluster, item) key of the partition, by preference then draw)."""
    ev = _events_of(part, where, maps)
    q = choice.kept[ev["query"]]
    keep = q >= 0
    u, q = ev["user"][keep], q[keep]
    starts = np.flatnonzero(np.r_[True, u[1:] != u[:-1]]) if u.size else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, u.size])
    first = choice.user_start[u[starts]]
    pos = np.repeat(first - starts, sizes) + np.arange(u.size)
    draw = np.empty(u.size)
    bits = np.random.PCG64()
    for start, size, at in zip(starts.tolist(), sizes.tolist(), first.tolist()):
        bits.state = choice.state  # type: ignore[assignment]
        bits.advance(at)
        draw[start : start + size] = np.random.Generator(bits).random(size)
    group = choice.labels[u]
    item = q if choice.item_of is None else choice.item_of[q]
    key = group * choice.n_items + item
    target = choice.block_target[np.searchsorted(choice.block_keys, key)]
    pref = choice.pref_count[np.searchsorted(choice.pref_keys, group * choice.n_queries + q)]
    order = np.lexsort((draw, -pref, key))
    picked = order[_ranks(key, order) < target[order]]
    return pd.DataFrame(
        {
            "key": key[picked],
            "pref": pref[picked],
            "draw": draw[picked],
            "pos": pos[picked],
            "query": q[picked],
            "t": ev["t"][keep][picked],
            "url": ev["url"][keep][picked],
            "row": ev["row"][keep][picked],
        }
    )


def choose_events(log: DaskLog, choice: Choice) -> pd.DataFrame:
    """The published events (``_multisets.select_events`` of the whole log): each
    partition's candidates, then the first ``target`` of each key among them, in the
    order of the events' global positions."""
    found = list(compute(*_tasks(log.plan, _candidates, _broadcast(choice))))
    cand = pd.concat(found, ignore_index=True)
    del found
    key = cand["key"].to_numpy()
    order = np.lexsort((cand["draw"].to_numpy(), -cand["pref"].to_numpy(), key))
    target = choice.block_target[np.searchsorted(choice.block_keys, key)]
    picked = order[_ranks(key, order) < target[order]]
    chosen = cand.iloc[picked].sort_values("pos", kind="stable")
    return chosen.reset_index(drop=True)


def _all_events(part: Any, where: tuple[Any, ...], maps: tuple[Any, ...]) -> pd.DataFrame:
    return pd.DataFrame(_events_of(part, where, maps))


def gather_events(log: DaskLog) -> dict[str, Any]:
    """Every query event in memory, as ``_anonymize._events`` gives them (for the
    measures, which compare whole logs)."""
    found = compute(*_tasks(log.plan, _all_events))
    ev = pd.concat(found, ignore_index=True)
    order = np.lexsort((ev["t"].to_numpy(), ev["query"].to_numpy(), ev["user"].to_numpy()))
    ev = ev.iloc[order]
    url_code = ev["url"].to_numpy()
    url = np.full(url_code.size, None, dtype=object)
    url[url_code >= 0] = log.urls[url_code[url_code >= 0]]
    return {
        "user": ev["user"].to_numpy(np.int64),
        "query": ev["query"].to_numpy(np.int64),
        "time": ev["t"].to_numpy(np.int64).view("datetime64[ns]"),
        "url": url,
        "row": ev["row"].to_numpy(np.int64),
        "n": int(len(ev)),
    }


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
    chosen: pd.DataFrame,
    labels: np.ndarray,
    pseudonyms: np.ndarray,
    rows_per_part: int | None = None,
) -> tuple[Any, Any]:
    """The published log as a Dask DataFrame, and its source rows as a Dask Series.

    The client holds one row per chosen event (the cluster's published multiset) and one
    per user (cluster, pseudonym); these tables are broadcast once, and each partition
    expands the events of its users' clusters to one row per member.  Partitions hold
    whole users, in pseudonym order, each sorted by (user, time, query, URL): the
    partitions in order are the pandas release row for row.  ``chosen``: one row per
    published event (``group``, ``query`` text, generalized ``time``, ``url``, input
    ``row``), in the order of the events' positions in the log."""
    import dask
    import dask.dataframe as dd

    rows_per_part = rows_per_part or ROWS_PER_PART
    groups = chosen["group"].to_numpy(np.int64)
    n_groups = int(labels.max()) + 1 if labels.size else 0
    count = np.bincount(groups, minlength=n_groups).astype(np.int64)
    table = _Published(
        labels=labels,
        start=np.r_[0, np.cumsum(count)[:-1]].astype(np.int64),
        count=count,
        by_group=np.argsort(groups, kind="stable"),
        query=chosen["query"].to_numpy(dtype=object),
        time=chosen["time"].to_numpy(dtype="datetime64[ns]"),
        url=chosen["url"].to_numpy(dtype=object),
        row=chosen["row"].to_numpy(np.int64),
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


def _broadcast(table: Any) -> Any:
    """``table`` sent once to every worker of the distributed client (a future), or one
    key of the graph on the local schedulers."""
    import dask

    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return dask.delayed(table, name=f"querylogs-publication-{uuid.uuid4().hex}")
    return client.scatter(table, broadcast=True, hash=False)


def published_rows(labels: np.ndarray, groups: np.ndarray) -> int:
    """Rows of the release: every chosen event (of cluster ``groups``) once per member of
    its cluster."""
    sizes = np.bincount(labels)
    return int(sizes[groups].sum()) if groups.size else 0


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
