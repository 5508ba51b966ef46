"""Clustering-based anonymization of a search log (user k-anonymity by query multisets)."""

from __future__ import annotations

import sys
import time as _time
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from tqdm import tqdm

from structanon import Partition, Release
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer

from ._multisets import accounting, group_targets, select_events
from ._verify import verify_log
from .grouping import greedy_groups, refine_groups
from .identifiers import IDENTIFIER_PATTERNS, detect_identifiers
from .intents import click_graph, cluster_intents, normalize_queries
from .metrics import utility_report
from .microaggregation import mdav
from .risk import risk_report

__all__ = ["anonymize", "generalize_times", "GRANULARITIES", "GROUPINGS"]

#: Accepted ``grouping`` values: greedy by shared exact queries, greedy by shared intents,
#: MDAV over intent profiles.
GROUPINGS = ("greedy", "greedy-intent", "mdav")

#: Accepted ``time_granularity`` values and the pandas period / frequency each uses.
GRANULARITIES = {"second": "s", "minute": "min", "hour": "h", "day": "D", "week": "W",
                 "month": "M"}


def generalize_times(times: Any, granularity: str = "day") -> pd.Series:
    """Floor date-times to the start of their ``granularity`` period.

    Examples
    --------
    >>> generalize_times(pd.to_datetime(["2006-03-01 07:17:12", "2006-03-07 23:59:59"]),
    ...                  "week").dt.strftime("%Y-%m-%d").tolist()
    ['2006-02-27', '2006-03-06']
    """
    if granularity not in GRANULARITIES:
        raise InputError(f"time_granularity must be one of {list(GRANULARITIES)}",
                         value=granularity)
    series = pd.Series(pd.to_datetime(times))
    freq = GRANULARITIES[granularity]
    if granularity in ("week", "month"):
        return series.dt.to_period(freq).dt.start_time
    return series.dt.floor(freq)


def _validate(log: pd.DataFrame, k: Any, tie_break: str) -> pd.DataFrame:
    if not isinstance(log, pd.DataFrame):
        raise InputError(f"log must be a pandas DataFrame, got {type(log).__name__}")
    for column in ("user", "query", "time"):
        if column not in log.columns:
            raise InputError("log lacks a required column", column=column)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    if tie_break not in ("suppress", "add"):
        raise InputError("tie_break must be 'suppress' or 'add'", value=tie_break)
    frame = pd.DataFrame({"user": log["user"].to_numpy(), "query": log["query"].to_numpy()})
    for column in ("user", "query"):
        missing = frame[column].isna().to_numpy()
        if missing.any():
            raise InputError("missing value", column=column, row=int(np.flatnonzero(missing)[0]))
    try:
        frame["time"] = pd.to_datetime(log["time"].to_numpy())
    except (ValueError, TypeError) as exc:
        raise InputError(f"time is not a date-time: {exc}", column="time") from exc
    missing = frame["time"].isna().to_numpy()
    if missing.any():
        raise InputError("missing value", column="time", row=int(np.flatnonzero(missing)[0]))
    url = log["url"] if "url" in log.columns else pd.Series(None, index=log.index, dtype=object)
    url = url.astype(object).where(url.notna() & (url.astype(str) != ""))
    frame["url"] = url.to_numpy(dtype=object)
    frame["user"] = frame["user"].astype(str)
    n_users = frame["user"].nunique()
    if n_users < k:
        raise InfeasibleError(f"k={k} exceeds the number of users in the log ({n_users})")
    return frame


def _events(frame: pd.DataFrame, query_codes: np.ndarray, rng: np.random.Generator):
    """One query event per (user, query, time); one of its clicked URLs sampled."""
    user_codes, users = pd.factorize(frame["user"], sort=True)
    ns = frame["time"].to_numpy().astype("datetime64[ns]").astype(np.int64)
    key = pd.DataFrame({"u": user_codes, "q": query_codes, "t": ns})
    event = key.groupby(["u", "q", "t"], sort=True).ngroup().to_numpy()
    n_events = int(event.max()) + 1 if event.size else 0
    # sample one clicked URL per event (rows with a click preferred over click-less rows)
    has_url = frame["url"].notna().to_numpy()
    order = np.lexsort((rng.random(event.size), ~has_url, event))
    first = order[np.r_[True, event[order][1:] != event[order][:-1]]] if event.size else order
    return {
        "user": user_codes[first].astype(np.int64),
        "query": query_codes[first],
        "time": frame["time"].to_numpy()[first],
        "url": frame["url"].to_numpy(dtype=object)[first],
        "n": n_events,
    }, np.asarray(users, dtype=object)


def _count_matrix(users: np.ndarray, item: tuple[np.ndarray, int], n_users: int):
    codes, n_items = item
    return sp.csr_matrix((np.ones(codes.size), (users, codes)), shape=(n_users, n_items))


def _publish(events, chosen, event_group, labels, vocabulary, pseudonyms, granularity):
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    group_start = np.r_[0, np.cumsum(sizes)[:-1]]
    groups = event_group[chosen]
    reps = sizes[groups]
    row_event = np.repeat(chosen, reps)
    offset = np.arange(row_event.size) - np.repeat(np.cumsum(reps) - reps, reps)
    member = order[np.repeat(group_start[groups], reps) + offset]
    data = pd.DataFrame({
        "user": pseudonyms[member],
        "query": vocabulary[events["query"][row_event]],
        "time": generalize_times(events["time"][row_event], granularity).to_numpy(),
        "url": events["url"][row_event],
    })
    data = data.sort_values(["user", "time", "query", "url"], kind="stable", na_position="first")
    return data.reset_index(drop=True)


def anonymize(
    log: pd.DataFrame,
    k: int,
    time_granularity: str = "day",
    seed: int | None = None,
    *,
    pseudonymizer: Pseudonymizer | None = None,
    suppress_identifiers: bool = True,
    identifier_kinds: tuple[str, ...] | None = None,
    click_threshold: float = 0.5,
    term_threshold: float = 0.5,
    max_url_queries: int | None = 200,
    max_intent_size: int | None = 200,
    tie_break: str = "suppress",
    match: str = "query",
    profile_scale: str = "count",
    grouping: str = "greedy",
    refine: int = 0,
    risk_p: tuple[int, ...] = (1, 3, 5),
    assess: bool = True,
    show_progress: bool = False,
) -> Release:
    """Anonymize a search log so every published user shares the whole published log of
    at least ``k - 1`` others.

    Parameters
    ----------
    log : pandas.DataFrame
        Columns ``user``, ``query``, ``time`` and optionally ``url`` (missing where there
        was no click), as :func:`querylogs.read_log` returns; one row per click.
    k : int
        Minimum number of users sharing each published query multiset.
    time_granularity : {"second", "minute", "hour", "day", "week", "month"}
        Published query times are floored to it.
    seed : int or None
        Seeds the sampling of published events and clicks.
    pseudonymizer : structanon.io.Pseudonymizer, optional
        Keyed pseudonyms for the user ids; a fresh random key by default (never written).
    suppress_identifiers : bool
        Suppress queries carrying a phone number, e-mail address, SSN or street address.
    identifier_kinds : tuple of str, optional
        Subset of :data:`querylogs.identifiers.IDENTIFIER_PATTERNS` to detect.
    click_threshold, term_threshold, max_url_queries, max_intent_size :
        Intent clustering parameters, see :func:`querylogs.cluster_intents`.
    tie_break : {"suppress", "add"}
        With an even group size any count between the two middle values is optimal;
        ``"suppress"`` publishes the lower one (fewer fabricated queries), ``"add"`` the
        upper one.
    match : {"query", "intent"}
        ``"query"``: every member publishes query ``q`` the median number of times
        members issued ``q`` (the exact optimum of additions + suppressions of
        queries).  ``"intent"``: the median is taken per search intent and the
        published events of an intent are the cluster's most shared queries of that
        intent, so members' queries are replaced by semantically similar ones of the
        cluster; additions and suppressions are still counted per exact query.
    profile_scale : {"count", "log"}
        User profiles for the clustering: query counts per intent, or ``log(1 + count)``.
        Counts are the closer proxy of the cost (additions + suppressions are an L1
        distance between count vectors); on the AOL samples they keep 2-3x more queries.
    grouping : {"greedy", "greedy-intent", "mdav"}
        How users are grouped into clusters of ``k`` to ``2k - 1``.  ``"greedy"`` (the
        default, :func:`querylogs.greedy_groups`) grows each cluster by the users sharing
        most exact query events with it, the mass a cluster can keep; ``"greedy-intent"``
        does the same on intent counts; ``"mdav"`` is MDAV microaggregation of the intent
        profiles (:func:`querylogs.mdav`), which keeps fewer queries on the AOL and
        synthetic logs (bench/RESULTS.md, section querylogs-grouping).
    refine : int
        Passes of local improvement after the grouping
        (:func:`querylogs.refine_groups`): a user moves to, or swaps with a member of,
        another cluster when that lowers the clusters' additions + suppressions (of
        queries, or of intents with ``match="intent"``).  0 (the default) skips it; one
        pass keeps 0.2-7% more events on the AOL top-1000 users and costs seconds per
        thousand users (a Python loop over users).
    risk_p : tuple of int
        Numbers of known queries for the random-query re-identification attack.
    assess : bool
        Compute the utility metrics and risk before/after (skip for speed).
    show_progress : bool
        Show a progress bar of the user clustering on stderr (when it is a terminal).

    Returns
    -------
    structanon.Release
        ``data``: DataFrame with columns ``user`` (pseudonym), ``query`` (normalized),
        ``time`` (generalized), ``url``, one row per published query, sorted.  ``info``
        holds the query accounting (``queries_in``, ``queries_added``,
        ``queries_suppressed`` split into identifier and clustering suppressions,
        ``queries_published``), the intent statistics and per-cluster sizes / additions /
        suppressions.  ``suppressed`` counts users left with no published query.

    Raises
    ------
    InputError
        A missing column or value, a bad parameter.
    InfeasibleError
        Fewer than ``k`` users.
    VerificationError
        The output fails the check (never expected).

    Examples
    --------
    >>> log = pd.DataFrame({"user": ["a", "a", "b", "c", "c"],
    ...                     "query": ["news", "maps", "news", "news", "cats"],
    ...                     "time": pd.to_datetime(["2006-03-01 10:00"] * 5),
    ...                     "url": ["n.com", None, "n.com", None, "c.com"]})
    >>> release = anonymize(log, k=3, seed=0, assess=False)
    >>> release.data["query"].tolist(), release.info["queries_suppressed"]
    (['news', 'news', 'news'], 2)

    Notes
    -----
    1. Queries are normalized (case, spaces); one query event is one (user, query, time);
       queries with direct identifiers are suppressed.
    2. The click graph gives query intents (:func:`querylogs.cluster_intents`); user ``u``
       is described by the counts ``n_u(i)`` of their queries in each intent ``i``
       (``log(1 + n_u(i))`` with ``profile_scale="log"``).
    3. Users are grouped in clusters of ``k`` to ``2k - 1``: by default greedily, each
       cluster growing by the user sharing the most query events with it
       (:func:`querylogs.greedy_groups`); or by MDAV microaggregation of the intent
       profiles (:func:`querylogs.mdav`).
    4. In each cluster ``G`` every user publishes the same multiset: query ``q`` exactly
       ``m_G(q) = median_{u in G} n_u(q)`` times, which minimizes
       ``sum_{u in G} |n_u(q) - m_G(q)|`` = additions + suppressions of ``q``.  The
       ``m_G(q)`` published events (time, one clicked URL) are sampled from the cluster's
       own events of ``q`` and published identically for every member, so members are
       indistinguishable by query, time and URL.
    5. User ids become keyed HMAC pseudonyms; times are generalized.

    References
    ----------
    G. Navarro-Arribas, V. Torra, A. Erola, J. Castellà-Roca. User k-anonymity for privacy
    preserving data mining of query logs. Information Processing & Management 48(3), 2012.
    J. Domingo-Ferrer, V. Torra. Ordinal, continuous and heterogeneous k-anonymity through
    microaggregation. Data Mining and Knowledge Discovery 11(2), 2005.
    """
    timings: dict[str, float] = {}
    clock = _time.perf_counter()
    frame = _validate(log, k, tie_break)
    if time_granularity not in GRANULARITIES:
        raise InputError(f"time_granularity must be one of {list(GRANULARITIES)}",
                         value=time_granularity)
    if match not in ("query", "intent"):
        raise InputError("match must be 'query' or 'intent'", value=match)
    if profile_scale not in ("count", "log"):
        raise InputError("profile_scale must be 'count' or 'log'", value=profile_scale)
    if grouping not in GROUPINGS:
        raise InputError(f"grouping must be one of {list(GROUPINGS)}", value=grouping)
    if isinstance(refine, bool) or not isinstance(refine, (int, np.integer)) or refine < 0:
        raise InputError(f"refine must be a non-negative integer, got {refine!r}")
    k = int(k)
    rng = np.random.default_rng(seed)
    pseudonymizer = pseudonymizer if pseudonymizer is not None else Pseudonymizer()

    query_codes, vocabulary = normalize_queries(frame["query"])
    identifier_counts: dict[str, int] = {}
    flagged = np.zeros(vocabulary.size, dtype=bool)
    if suppress_identifiers:
        found = detect_identifiers(vocabulary, identifier_kinds)
        flagged = found.any(axis=1).to_numpy(dtype=bool)
    events, users = _events(frame, query_codes, rng)
    n_users = users.size
    ev_flagged = flagged[events["query"]]
    if suppress_identifiers:
        per_event = found.to_numpy(dtype=bool)[events["query"]]
        identifier_counts = {kind: int(per_event[:, j].sum()) for j, kind in enumerate(found)}
    timings["parse_events"] = _time.perf_counter() - clock

    clock = _time.perf_counter()
    keep_event = ~ev_flagged
    row_keep = ~flagged[query_codes]
    kept_vocab_codes, kept_q = np.unique(events["query"][keep_event], return_inverse=True)
    remap = np.full(vocabulary.size, -1, dtype=np.int64)
    remap[kept_vocab_codes] = np.arange(kept_vocab_codes.size)
    kept_vocab = vocabulary[kept_vocab_codes]
    graph, _ = click_graph(remap[query_codes[row_keep]], frame["url"].to_numpy()[row_keep],
                           kept_vocab.size)
    intent_labels, intent_stats = cluster_intents(
        kept_vocab, graph, click_threshold=click_threshold, term_threshold=term_threshold,
        max_url_queries=max_url_queries, max_intent_size=max_intent_size)
    timings["intents"] = _time.perf_counter() - clock

    clock = _time.perf_counter()
    ev = {name: (value[keep_event] if isinstance(value, np.ndarray) else value)
          for name, value in events.items()}
    ev["query"] = kept_q.reshape(-1).astype(np.int64)
    n_intents = int(intent_labels.max()) + 1 if intent_labels.size else 1
    profile = sp.csr_matrix((np.ones(ev["query"].size), (ev["user"], intent_labels[ev["query"]])),
                            shape=(n_users, n_intents))
    profile.sum_duplicates()
    if profile_scale == "log":
        profile.data = np.log1p(profile.data)
    def item_of(kind: str) -> tuple[np.ndarray, int]:
        if kind in ("greedy", "query"):
            return ev["query"], max(kept_vocab.size, 1)
        return intent_labels[ev["query"]], n_intents

    with tqdm(total=n_users, desc="clustering users", unit="user", file=sys.stderr,
              disable=not show_progress or not sys.stderr.isatty()) as bar:
        if grouping == "mdav":
            labels = mdav(profile, k, progress=bar.update)
        else:
            labels = greedy_groups(_count_matrix(ev["user"], item_of(grouping), n_users),
                                   k, progress=bar.update)
    if refine:
        # local moves and swaps on the cost the published multisets pay
        labels = refine_groups(_count_matrix(ev["user"], item_of(match), n_users), labels, k,
                               passes=refine)
    timings["user_clustering"] = _time.perf_counter() - clock

    clock = _time.perf_counter()
    n_kept_q = max(kept_vocab.size, 1)
    if match == "query":
        item, n_items = ev["query"], n_kept_q
    else:
        item, n_items = intent_labels[ev["query"]], n_intents
    blocks = group_targets(labels, ev["user"], item, n_items, tie_break)
    in_group = labels[ev["user"]] * n_kept_q + ev["query"]
    _, group_query_inverse, group_query_count = np.unique(in_group, return_inverse=True,
                                                          return_counts=True)
    preference = group_query_count[group_query_inverse.reshape(-1)]
    chosen, event_group = select_events(ev, item, labels, blocks, n_items, preference, rng)
    pseudonyms = pseudonymizer.pseudonymize(users)
    data = _publish(ev, chosen, event_group, labels, kept_vocab, pseudonyms, time_granularity)
    timings["publish"] = _time.perf_counter() - clock

    n_groups = int(labels.max()) + 1
    group_sizes = np.bincount(labels, minlength=n_groups)
    published_per_group, added_per_group, suppressed_per_group = accounting(
        labels, ev["user"], ev["query"], chosen, event_group, n_kept_q)
    _, intent_added, intent_suppressed = accounting(
        labels, ev["user"], intent_labels[ev["query"]] if ev["query"].size else ev["query"],
        chosen, event_group, n_intents)
    identifier_suppressed = int(ev_flagged.sum())
    clustering_suppressed = int(suppressed_per_group.sum())
    empty_user = published_per_group[labels] == 0
    partition = Partition(np.where(empty_user, -1, labels))
    info = {
        "queries_in": int(events["n"]),
        "queries_published": int(len(data)),
        "queries_added": int(added_per_group.sum()),
        "queries_suppressed": identifier_suppressed + clustering_suppressed,
        "queries_suppressed_identifier": identifier_suppressed,
        "queries_suppressed_clustering": clustering_suppressed,
        "identifier_queries_by_kind": identifier_counts,
        "intent_level": {"added": int(intent_added.sum()),
                         "suppressed": int(intent_suppressed.sum())},
        "rows_in": int(len(frame)),
        "users_in": int(n_users),
        "users_published": int(n_users - empty_user.sum()),
        "users_without_published_queries": int(empty_user.sum()),
        "n_clusters": n_groups,
        "cluster_size_counts": {int(s): int(c) for s, c in
                                zip(*np.unique(group_sizes, return_counts=True))},
        "intents": intent_stats,
        "clusters": {"size": group_sizes, "published_per_user": published_per_group,
                     "added": added_per_group, "suppressed": suppressed_per_group},
        "pseudonym_key_source": pseudonymizer.key_source,
    }
    release = Release(
        data=data, datatype="querylogs", verifier=lambda d: verify_log(d, k),
        models=[f"user k-anonymity of published query logs (k={k})"], partition=partition,
        parameters={"algorithm": f"intent-clustering + {grouping} grouping + median multisets",
                    "k": k,
                    "time_granularity": time_granularity, "seed": seed,
                    "suppress_identifiers": suppress_identifiers,
                    "identifier_kinds": list(identifier_kinds or IDENTIFIER_PATTERNS),
                    "click_threshold": click_threshold, "term_threshold": term_threshold,
                    "max_url_queries": max_url_queries,
                    "max_intent_size": max_intent_size, "tie_break": tie_break,
                    "match": match, "profile_scale": profile_scale,
                    "grouping": grouping, "refine": refine},
        timings=timings, suppressed=int(empty_user.sum()), n_individuals=int(n_users), info=info,
    )
    release.verify(strict=True)
    if assess:
        clock = _time.perf_counter()
        # measured under the original ids, so figures do not depend on the pseudonym key
        original = pd.DataFrame({"user": users[events["user"]],
                                 "query": vocabulary[events["query"]],
                                 "time": events["time"], "url": events["url"]})
        unmasked = data.assign(user=pd.Series(users, index=pseudonyms).reindex(
            data["user"].to_numpy()).to_numpy())
        intent_of = pd.Series(intent_labels, index=kept_vocab)
        release.utility = utility_report(original, unmasked, intent_of, time_granularity,
                                         info["queries_added"], info["queries_suppressed"])
        release.risk = risk_report(original, unmasked, risk_p, seed=seed)
        timings["assess"] = _time.perf_counter() - clock
    timings["total"] = sum(timings.values())
    return release
