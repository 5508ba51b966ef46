"""Clustering-based anonymization of a search log (user k-anonymity by query multisets)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from tqdm import tqdm

from structanon import Partition, Release, _progress
from structanon._engine import compute, is_dask, resolve_engine
from structanon._finish import Timings, add_warning, finish_release, k_warning
from structanon._times import NAT, iso_utc_ns
from structanon._validation import (
    check_choice,
    check_columns,
    check_float,
    check_int,
    warn_repeated_labels,
)
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer, release_key
from structanon.microaggregation import mdav
from structanon.partition import encode_values

from ._dask import published_rows
from ._grouping import greedy_groups, refine_groups
from ._identifiers import IDENTIFIER_PATTERNS, detect_identifiers
from ._intents import click_graph, cluster_intents, normalize_queries
from ._multisets import accounting_counts, group_targets, select_events
from ._verify import UserKAnonymity, verify_log
from .metrics import utility_report
from .risk import risk_report

__all__ = ["anonymize", "generalize_times", "GRANULARITIES", "GROUPINGS"]

#: Accepted ``grouping`` values: greedy by shared exact queries, greedy by shared intents,
#: MDAV over intent profiles.
GROUPINGS = ("greedy", "greedy-intent", "mdav")

#: Without an explicit ``block_size``, the greedy grouping is blocked above this many users
AUTO_BLOCK_USERS = 20_000
#: ... in blocks of this many users.
AUTO_BLOCK_SIZE = 5_000

#: Accepted ``time_granularity`` values and the pandas period / frequency each uses.
GRANULARITIES = {"second": "s", "minute": "min", "hour": "h", "day": "D", "week": "W", "month": "M"}


def generalize_times(times: Any, granularity: str = "day") -> pd.Series:
    """Floor date-times to the start of their ``granularity`` period.

    Examples
    --------
    >>> generalize_times(pd.to_datetime(["2006-03-01 07:17:12", "2006-03-07 23:59:59"]),
    ...                  "week").dt.strftime("%Y-%m-%d").tolist()
    ['2006-02-27', '2006-03-06']
    """
    check_choice(granularity, "time_granularity", GRANULARITIES)
    if times is None or isinstance(times, str | bytes):
        raise InputError(f"times must be a sequence of date-times, got {times!r}")
    try:
        series = pd.Series(pd.to_datetime(times))
    except (ValueError, TypeError, OverflowError) as exc:  # incl. pandas' parse errors
        raise InputError(f"times are not date-times: {exc}") from None
    freq = GRANULARITIES[granularity]
    if granularity in ("week", "month"):
        return series.dt.to_period(freq).dt.start_time
    return series.dt.floor(freq)


def _check_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """Every parameter of :func:`anonymize` checked and normalized, before any work."""
    p = dict(params)
    p["k"] = check_int(p["k"], "k", min_value=1)
    check_choice(p["time_granularity"], "time_granularity", GRANULARITIES)
    check_choice(p["tie_break"], "tie_break", ("suppress", "add"))
    check_choice(p["match"], "match", ("query", "intent"))
    check_choice(p["profile_scale"], "profile_scale", ("count", "log"))
    check_choice(p["grouping"], "grouping", GROUPINGS)
    p["refine"] = check_int(p["refine"], "refine", min_value=0)
    if p["block_size"] is not None:
        p["block_size"] = check_int(p["block_size"], "block_size", min_value=max(2 * p["k"], 2))
    for name in ("click_threshold", "term_threshold"):
        p[name] = check_float(p[name], name, min_value=0, max_value=1)
    for name in ("max_url_queries", "max_intent_size"):
        if p[name] is not None:
            p[name] = check_int(p[name], name, min_value=1)
    if p["seed"] is not None:
        p["seed"] = check_int(p["seed"], "seed", min_value=0)
    if isinstance(p["risk_p"], str | bytes) or not isinstance(p["risk_p"], Iterable):
        raise InputError(f"risk_p must be a sequence of positive integers, got {p['risk_p']!r}")
    p["risk_p"] = tuple(check_int(v, "risk_p", min_value=1) for v in p["risk_p"])
    return p


def log_times(values: np.ndarray, offset: int = 0) -> Any:
    """The times of a log's rows: text read as ISO 8601, each value by its own UTC offset
    and a naive one as UTC (``structanon._times.iso_utc_ns``: one ``+02:00`` never shifts
    its naive neighbours), given as naive UTC date-times; date-time values as they are.
    A text that is no date-time is an :class:`InputError` naming its row (``offset`` +
    position); a missing value stays missing (the caller names it)."""
    kind = np.asarray(values).dtype.kind
    if kind == "b":
        raise InputError("time is not a date-time (true/false values)", column="time")
    if kind in "iuf":  # numbers are epoch seconds, as location reads them (never nanoseconds)
        try:
            return pd.DatetimeIndex(pd.to_datetime(values, unit="s"))
        except (ValueError, TypeError, OverflowError, pd.errors.OutOfBoundsDatetime) as exc:
            raise InputError(
                f"time is not a date-time: {exc} (numbers are epoch seconds)", column="time"
            ) from None
    text = pd.Series(values, dtype=object)
    strings = text.map(lambda v: isinstance(v, str), na_action="ignore").fillna(False)
    if not strings.to_numpy(dtype=bool).any():
        try:
            return pd.to_datetime(values)
        except (ValueError, TypeError) as exc:
            raise InputError(f"time is not a date-time: {exc}", column="time") from None
    text = text.map(str, na_action="ignore")  # a date-time among texts: as its ISO text
    ns = iso_utc_ns(text.to_numpy(dtype=object))
    bad = np.flatnonzero((ns == NAT) & text.notna().to_numpy())
    if bad.size:
        raise InputError(
            "time is not a date-time",
            column="time",
            row=offset + int(bad[0]),
            value=text.iloc[int(bad[0])],
        )
    return pd.DatetimeIndex(np.where(ns == NAT, np.datetime64("NaT"), ns.view("datetime64[ns]")))


def _validate(log: pd.DataFrame, k: int) -> pd.DataFrame:
    if not isinstance(log, pd.DataFrame):
        raise InputError(f"log must be a pandas DataFrame, got {type(log).__name__}")
    check_columns(log, ("user", "query", "time"), what="log")
    warn_repeated_labels(log, "log")
    if len(log) == 0:
        raise InputError("the log is empty (no query rows)")
    frame = pd.DataFrame({"user": log["user"].to_numpy(), "query": log["query"].to_numpy()})
    for column in ("user", "query"):
        missing = frame[column].isna().to_numpy()
        if missing.any():
            raise InputError("missing value", column=column, row=int(np.flatnonzero(missing)[0]))
    frame["time"] = log_times(log["time"].to_numpy())
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


def _utc_ns(time: pd.Series) -> np.ndarray:
    """Nanoseconds since the epoch; tz-aware times as their UTC instant (numpy has no zones)."""
    if isinstance(time.dtype, pd.DatetimeTZDtype):
        time = time.dt.tz_convert("UTC").dt.tz_localize(None)
    return time.to_numpy().astype("datetime64[ns]").astype(np.int64)


def _events(
    frame: pd.DataFrame,
    query_codes: np.ndarray,
    log_secret: Callable[..., Callable[[str], np.random.Generator]],
):
    """One query event per (user, query, time); one of its clicked URLs sampled.

    Users are numbered in a secret random order (the ``user-order`` stream of
    ``log_secret(users)``, the users sorted), so the grouping's ties (smallest user index
    first) carry nothing of the original ids; the URL published with an event is drawn
    among its clicks by the ``click-url`` stream.  ``row`` is each event's input row
    (position)."""
    user_codes, users = encode_values(frame["user"])
    streams = log_secret(np.asarray(users, dtype=object))
    secret = streams("user-order").permutation(len(users))
    users = np.asarray(users, dtype=object)[np.argsort(secret)]
    user_codes = secret[user_codes]
    ns = _utc_ns(frame["time"])
    key = pd.DataFrame({"u": user_codes, "q": query_codes, "t": ns})
    event = key.groupby(["u", "q", "t"], sort=True).ngroup().to_numpy()
    n_events = int(event.max()) + 1 if event.size else 0
    # sample one clicked URL per event (rows with a click preferred over click-less rows)
    has_url = frame["url"].notna().to_numpy()
    order = np.lexsort((streams("click-url").random(event.size), ~has_url, event))
    first = order[np.r_[True, event[order][1:] != event[order][:-1]]] if event.size else order
    return {
        "user": user_codes[first].astype(np.int64),
        "query": query_codes[first],
        "time": frame["time"].to_numpy()[first],
        "url": frame["url"].to_numpy(dtype=object)[first],
        "row": first.astype(np.int64),
        "n": n_events,
    }, users


def _count_matrix(
    users: np.ndarray,
    item: tuple[np.ndarray, int],
    n_users: int,
    weights: np.ndarray | None = None,
):
    codes, n_items = item
    values = np.ones(codes.size) if weights is None else weights.astype(np.float64)
    return sp.csr_matrix((values, (users, codes)), shape=(n_users, n_items))


def _publish(events, chosen, event_group, labels, vocabulary, pseudonyms, granularity):
    """The published rows, sorted by their published values only, and each row's input
    row (position): the row whose query, time and URL it publishes."""
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    group_start = np.r_[0, np.cumsum(sizes)[:-1]]
    groups = event_group[chosen]
    reps = sizes[groups]
    row_event = np.repeat(chosen, reps)
    offset = np.arange(row_event.size) - np.repeat(np.cumsum(reps) - reps, reps)
    member = order[np.repeat(group_start[groups], reps) + offset]
    data = pd.DataFrame(
        {
            "user": pseudonyms[member],
            "query": vocabulary[events["query"][row_event]],
            "time": generalize_times(events["time"][row_event], granularity).to_numpy(),
            "url": events["url"][row_event],
        }
    )
    # identical rows are interchangeable, so this order is a function of the values alone
    data = data.sort_values(["user", "time", "query", "url"], kind="stable", na_position="first")
    source = events["row"][row_event][data.index.to_numpy()]
    return data.reset_index(drop=True), source


def anonymize(
    log: pd.DataFrame,
    k: int,
    time_granularity: str = "day",
    seed: int | None = 0,
    *,
    key: Pseudonymizer | bytes | str | Any = None,
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
    block_size: int | None = None,
    risk_p: tuple[int, ...] = (1, 3, 5),
    measures: bool = True,
    assess: bool | None = None,
    show_progress: bool = False,
    engine: str | None = None,
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
    seed : int, default 0
        Public seed of the measures (the random-query attacks).  It never decides what
        is published among equals, nor the order: see ``key``.
    key : Pseudonymizer, bytes or key-file path, optional
        The release's secret key (:func:`structanon.io.release_key`): keyed HMAC
        pseudonyms of the user ids, and the secret publication randomness (the secret
        order in which users are numbered, so the grouping's ties; the clicked URL
        published with a query among its clicks; the events published among equally
        shared ones).  Default: ``$STRUCTANON_PSEUDONYM_KEY`` if set, else a fresh
        random key never written anywhere, so two runs differ and cannot be linked.
        Same input, parameters, seed and key give the same release.
    pseudonymizer : Pseudonymizer, optional
        Former name of ``key``, still accepted.
    suppress_identifiers : bool
        Suppress queries carrying a phone number, e-mail address, SSN or street address.
    identifier_kinds : tuple of str, optional
        Subset of :data:`querylogs.IDENTIFIER_PATTERNS` to detect.
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
    block_size : int, optional
        Blocking of the greedy grouping (:func:`querylogs.user_blocks`): with more users
        than ``block_size``, users are cut into blocks of at most ``block_size`` users
        with similar query sets (MinHash of the public ``seed``) and grouped block by
        block, so the grouping's cost grows linearly with the number of users.  Default:
        no blocking up to 20,000 users, blocks of 5,000 beyond.  Blocking keeps fewer events: on a synthetic log
        of 10,000 users, 36.9% of events kept with blocks of 5,000 and 35.6% with blocks of
        2,000 against 37.4% without (bench/results/dask_querylogs.md).  Ignored by
        ``grouping="mdav"``.
    risk_p : tuple of int
        Numbers of known queries for the random-query re-identification attack.
    measures : bool
        Compute the utility metrics and risk before/after (skip for speed); verification
        runs either way.
    assess : bool, optional
        Deprecated former name of ``measures`` (emits a :class:`DeprecationWarning`).
    show_progress : bool
        Show a progress bar of the user clustering on stderr (when it is a terminal); the
        command line shows it unless ``--quiet``.
    engine : {"pandas", "dask"}, optional
        Default: ``"dask"`` for a Dask DataFrame ``log``, else ``"pandas"``.  On Dask the
        parsing, normalization, event deduplication and the click graph's counts run out
        of core (a first pass over the partitions sends back per (user, query) event
        counts, never event rows); the grouping runs on the in-memory sparse counts, one
        row per user; a second pass chooses the published events where they lie; the
        release equals the pandas release for the same inputs, seed and key
        (``source_index`` then holds global row positions).  See docs/dask.md.

    Returns
    -------
    structanon.Release
        ``data``: DataFrame with columns ``user`` (pseudonym), ``query`` (normalized),
        ``time`` (generalized), ``url``, one row per published query, sorted by these
        published values.  ``info`` holds the query accounting over the whole release
        (``queries_in``, ``queries_added``, ``queries_suppressed`` split into identifier
        and clustering suppressions, ``queries_published``), the intent statistics, the
        histogram of cluster sizes and ``warnings``; no per-cluster addition or
        suppression count (with the published size of a cluster they would give its
        members' original query total).  ``suppressed`` counts users left with no
        published query; the release may be empty (every user suppressed, with a
        warning).  ``source_index`` (Python only, never written) holds, for each
        published row, the input row label whose query, time and URL it publishes (for an
        added query, another member's row); the published user of a row is the
        ``key``'s pseudonym of an original user.  ``partition`` is indexed by the
        original user ids in sorted order.

    Raises
    ------
    InputError
        A missing column or value, an empty log, a bad parameter (named).
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
    >>> release = anonymize(log, k=3, seed=0, measures=False)
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
       indistinguishable by query, time and URL.  Choices among equals (which events,
       which URL) come from the secret ``key``, never from the public ``seed``.
    5. User ids become keyed HMAC pseudonyms; times are generalized; rows are sorted by
       their published values (pseudonym, time, query, URL).

    References
    ----------
    G. Navarro-Arribas, V. Torra, A. Erola, J. Castellà-Roca. User k-anonymity for privacy
    preserving data mining of query logs. Information Processing & Management 48(3), 2012.
    J. Domingo-Ferrer, V. Torra. Ordinal, continuous and heterogeneous k-anonymity through
    microaggregation. Data Mining and Knowledge Discovery 11(2), 2005.
    """
    measures = _measures_switch(measures, assess)
    if key is not None and pseudonymizer is not None:
        raise InputError("give key or pseudonymizer (its former name), not both")
    timings = Timings()
    with timings("parse_events"):
        params = _check_parameters(
            dict(
                k=k,
                time_granularity=time_granularity,
                seed=seed,
                tie_break=tie_break,
                match=match,
                profile_scale=profile_scale,
                grouping=grouping,
                refine=refine,
                block_size=block_size,
                click_threshold=click_threshold,
                term_threshold=term_threshold,
                max_url_queries=max_url_queries,
                max_intent_size=max_intent_size,
                risk_p=risk_p,
            )
        )
        secret = release_key(key if key is not None else pseudonymizer)
        dask_log = resolve_engine(log, engine) == "dask"
        frame = None if dask_log else _validate(log, params["k"])
        # secret publication randomness, bound to the public parameters; the published
        # group ids also to the seed, the streams that choose published values (which
        # events and URLs) not (context[1:]): re-releases under one key with other seeds
        # publish the same values, which no union of releases can add to
        context = (
            params["seed"],
            params["k"],
            repr(sorted((name, value) for name, value in params.items() if name != "seed")),
        )
        if frame is None:
            state = _parse_dask(
                log, params["k"], secret, context, suppress_identifiers, identifier_kinds
            )
        else:
            state = _parse(frame, secret, context, suppress_identifiers, identifier_kinds)
        # later streams bound to the log as both engines reduce it (Pseudonymizer.bound)
        secret = secret.bound(state.users, state.vocabulary, state.query_events)
    with timings("intents"):
        _cluster_queries(state, params)
    with timings("user_clustering"):
        labels = _group_users(state, params, show_progress)
    with timings("publish"):
        data, source, published = _publish_multisets(state, labels, params, secret, context)
    n_published = published_rows(labels, published[0]) if frame is None else len(data)
    info, partition = _outcome(state, labels, published, n_published, secret, context)
    info["pseudonym_key_source"] = secret.key_source
    info["transformation_text"] = transformation_text(params, info)
    release = Release(
        data=data,
        datatype="querylogs",
        verifier=partial(verify_log, k=params["k"]),
        models=[UserKAnonymity(params["k"])],
        partition=partition,
        parameters=_parameters(params, suppress_identifiers, identifier_kinds),
        suppressed=info["users_without_published_queries"],
        n_individuals=int(state.n_users),
        info=info,
        source_index=source if frame is None else np.asarray(log.index)[source],
        # what kind of identifier the suppressed queries carried is content the release
        # hides: two reports of logs one user apart told that the user typed a street
        # address (readable in Python, never in a report); the intent statistics count the
        # input's distinct queries and its largest intent, which two reports of logs one
        # user apart subtract into that user's own queries
        withheld=("identifier_queries_by_kind", "intents"),
    )
    for message in _warnings(params["k"], info):
        add_warning(release, message)
    return finish_release(
        release, partial(_measure, state=state, params=params), measures=measures, timings=timings
    )


def _measures_switch(measures: bool, assess: bool | None) -> bool:
    """``measures``, or the deprecated ``assess`` when given."""
    check_choice(measures, "measures", (True, False))
    if assess is None:
        return bool(measures)
    warnings.warn(
        "anonymize(assess=...) is deprecated; use measures=...", DeprecationWarning, stacklevel=3
    )
    return bool(assess)


@dataclass
class _State:
    """The log as query events, as each phase of :func:`anonymize` leaves it."""

    frame: pd.DataFrame | None  # the validated rows (None: a Dask log, see ``dask_log``)
    query_codes: np.ndarray  # per input row: code in ``vocabulary``
    vocabulary: np.ndarray  # normalized queries
    flagged: np.ndarray  # per vocabulary entry: carries a direct identifier
    events: dict[str, Any]  # every query event (see :func:`_events`)
    users: np.ndarray  # original user ids, by secret user code
    identifier_counts: dict[str, int]
    ev: dict[str, Any] = field(default_factory=dict)  # events without identifiers
    # a Dask log: (user, kept query) pairs and their event counts, in place of ``ev``
    pairs: dict[str, np.ndarray] | None = None
    query_events: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    kept_vocab: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    intent_labels: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    intent_stats: dict[str, Any] = field(default_factory=dict)
    n_intents: int = 1
    identifier_suppressed: int = 0
    pseudonyms: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    dask_log: Any = None  # the reduced Dask log (querylogs._dask.DaskLog)

    @property
    def n_rows(self) -> int:
        return int(self.dask_log.n_rows if self.frame is None else len(self.frame))

    @property
    def n_users(self) -> int:
        return int(self.users.size)

    @property
    def n_kept_queries(self) -> int:
        return max(int(self.kept_vocab.size), 1)

    @property
    def units(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The user of each kept event and no weights; on Dask, of each (user, query) pair
        and its event count."""
        if self.pairs is None:
            return self.ev["user"], None
        return self.pairs["user"], self.pairs["count"]

    def items(self, kind: str) -> tuple[np.ndarray, int]:
        """Each kept event's (or pair's) item: its query (``"greedy"``, ``"query"``) or
        its intent."""
        query = self.ev["query"] if self.pairs is None else self.pairs["query"]
        if kind in ("greedy", "query"):
            return query, self.n_kept_queries
        return self.intent_labels[query], self.n_intents


def _log_secret(
    secret: Pseudonymizer, vocabulary: np.ndarray | None, context: tuple
) -> Callable[..., Callable[[str], np.random.Generator]]:
    """The secret streams of a log (``"user-order"``, the users' numbering, which orders
    the choice of the events published, and ``"click-url"``, the clicked URL each event
    publishes), bound to the parameters but not the seed (``context[1:]``) and to the log
    (``Pseudonymizer.bound``): to its users (sorted) and query vocabulary, which both
    engines reduce the log to alike."""

    def bind(users: np.ndarray, queries: np.ndarray | None = None):
        bound = secret.bound(users, vocabulary if queries is None else queries)
        return lambda purpose: bound.rng(purpose, *context[1:])

    return bind


def _parse(
    frame: pd.DataFrame,
    secret: Pseudonymizer,
    context: tuple,
    suppress_identifiers: bool,
    identifier_kinds: tuple[str, ...] | None,
) -> _State:
    """Normalize the queries, form the query events, flag identifier queries."""
    query_codes, vocabulary = normalize_queries(frame["query"])
    events, users = _events(
        frame,
        query_codes,
        _log_secret(secret, vocabulary, context),
    )
    state = _State(frame, query_codes, vocabulary, np.zeros(0, bool), events, users, {})
    state.query_events = np.bincount(events["query"], minlength=vocabulary.size)
    _flag_identifiers(state, suppress_identifiers, identifier_kinds)
    return state


def _parse_dask(
    log: Any,
    k: int,
    secret: Pseudonymizer,
    context: tuple,
    suppress_identifiers: bool,
    identifier_kinds: tuple[str, ...] | None,
) -> _State:
    """:func:`_parse` of a Dask log, reduced out of core to per-user query event counts
    (``querylogs._dask``): no event row reaches the client."""
    from ._dask import dask_counts

    reduced = dask_counts(log, k, _log_secret(secret, None, context))
    state = _State(
        None,
        np.zeros(0, np.int64),
        reduced.vocabulary,
        np.zeros(0, bool),
        {"n": reduced.n_events},
        reduced.users,
        {},
        dask_log=reduced,
    )
    state.query_events = np.bincount(
        reduced.pair_query, weights=reduced.pair_count, minlength=reduced.vocabulary.size
    ).astype(np.int64)
    _flag_identifiers(state, suppress_identifiers, identifier_kinds)
    return state


def _flag_identifiers(
    state: _State, suppress_identifiers: bool, identifier_kinds: tuple[str, ...] | None
) -> None:
    """Flag the vocabulary's queries carrying a direct identifier; count them per kind."""
    vocabulary = state.vocabulary
    flagged = np.zeros(vocabulary.size, dtype=bool)
    identifier_counts: dict[str, int] = {}
    if suppress_identifiers:
        found = detect_identifiers(vocabulary, identifier_kinds)
        flagged = found.any(axis=1).to_numpy(dtype=bool)
        per_query = found.to_numpy(dtype=bool)
        identifier_counts = {
            str(kind): int(state.query_events[per_query[:, j]].sum())
            for j, kind in enumerate(found)
        }
    state.flagged, state.identifier_counts = flagged, identifier_counts


def _cluster_queries(state: _State, params: dict[str, Any]) -> None:
    """Drop identifier events; cluster the remaining queries into intents."""
    kept_vocab_codes = np.flatnonzero(~state.flagged & (state.query_events > 0))
    remap = np.full(state.vocabulary.size, -1, dtype=np.int64)
    remap[kept_vocab_codes] = np.arange(kept_vocab_codes.size)
    state.kept_vocab = state.vocabulary[kept_vocab_codes]
    if state.frame is None:  # a Dask log: the click counts were reduced out of core
        from ._dask import click_counts

        graph = click_counts(state.dask_log, remap, state.kept_vocab.size)
    else:
        row_keep = ~state.flagged[state.query_codes]
        graph, _ = click_graph(
            remap[state.query_codes[row_keep]],
            state.frame["url"].to_numpy()[row_keep],
            state.kept_vocab.size,
        )
    state.intent_labels, state.intent_stats = cluster_intents(
        state.kept_vocab,
        graph,
        click_threshold=params["click_threshold"],
        term_threshold=params["term_threshold"],
        max_url_queries=params["max_url_queries"],
        max_intent_size=params["max_intent_size"],
    )
    if state.frame is None:
        log = state.dask_log
        keep = ~state.flagged[log.pair_query]
        state.pairs = {
            "user": log.pair_user[keep].astype(np.int64),
            "query": remap[log.pair_query[keep]],
            "count": log.pair_count[keep],
        }
    else:
        keep_event = ~state.flagged[state.events["query"]]
        state.ev = {
            name: (value[keep_event] if isinstance(value, np.ndarray) else value)
            for name, value in state.events.items()
        }
        state.ev["query"] = remap[state.ev["query"]]
    state.n_intents = int(state.intent_labels.max()) + 1 if state.intent_labels.size else 1
    state.identifier_suppressed = int(state.query_events[state.flagged].sum())


def _intent_profiles(state: _State, scale: str) -> sp.csr_matrix:
    """Users x intents: how many of each user's kept events fall in each intent."""
    user, weights = state.units
    profile = _count_matrix(user, state.items("intent"), state.n_users, weights)
    profile.sum_duplicates()
    if scale == "log":
        profile.data = np.log1p(profile.data)
    return profile


def _group_users(state: _State, params: dict[str, Any], show_progress: bool) -> np.ndarray:
    """Clusters of ``k .. 2k - 1`` users (greedy or MDAV), then optional refinement."""
    k, grouping, n_users = params["k"], params["grouping"], state.n_users
    user, weights = state.units
    show = (show_progress or _progress.enabled()) and sys.stderr.isatty()
    with tqdm(
        total=n_users, desc="clustering users", unit="user", file=sys.stderr, disable=not show
    ) as bar:
        if grouping == "mdav":
            labels = mdav(_intent_profiles(state, params["profile_scale"]), k, progress=bar.update)
        else:
            block_size = params["block_size"]
            if block_size is None and n_users > AUTO_BLOCK_USERS:
                block_size = max(AUTO_BLOCK_SIZE, 2 * k)
            labels = greedy_groups(
                _count_matrix(user, state.items(grouping), n_users, weights),
                k,
                progress=bar.update,
                block_size=block_size,
                seed=params["seed"],
            )
    if params["refine"]:
        # local moves and swaps on the cost the published multisets pay
        labels = refine_groups(
            _count_matrix(user, state.items(params["match"]), n_users, weights),
            labels,
            k,
            passes=params["refine"],
        )
    return labels


def _publish_multisets(
    state: _State, labels: np.ndarray, params: dict[str, Any], secret: Pseudonymizer, context: tuple
):
    """Median multisets per cluster, the events that carry them, the published rows, and
    the (cluster, query) of every published event."""
    item, n_items = state.items(params["match"])
    user, weights = state.units
    blocks = group_targets(labels, user, item, n_items, params["tie_break"], weights)
    rng = secret.rng("event-choice", *context[1:])  # a value choice: not the seed
    state.pseudonyms = secret.pseudonymize(state.users)
    if state.frame is None:  # a Dask log: events chosen and rows expanded per partition
        return _publish_dask(state, labels, blocks, params, rng)
    ev, n_kept_q = state.ev, state.n_kept_queries
    in_group = labels[ev["user"]] * n_kept_q + ev["query"]
    _, group_query_inverse, group_query_count = np.unique(
        in_group, return_inverse=True, return_counts=True
    )
    preference = group_query_count[group_query_inverse.reshape(-1)]
    chosen, event_group = select_events(ev, item, labels, blocks, n_items, preference, rng)
    data, source = _publish(
        ev,
        chosen,
        event_group,
        labels,
        state.kept_vocab,
        state.pseudonyms,
        params["time_granularity"],
    )
    return data, source, (event_group[chosen], ev["query"][chosen])


def _publish_dask(
    state: _State,
    labels: np.ndarray,
    blocks: dict[str, np.ndarray],
    params: dict[str, Any],
    rng: np.random.Generator,
):
    """:func:`_publish_multisets` of a Dask log: the client broadcasts the clusters, the
    targets and the (cluster, query) event counts; each partition proposes its events,
    the client keeps the published ones (one per published event, not per row) and the
    rows are expanded lazily (``querylogs._dask``)."""
    from ._dask import Choice, choose_events, lazy_publication

    log, pairs = state.dask_log, state.pairs
    assert pairs is not None  # set by _cluster_queries
    n_q, n_items = state.n_kept_queries, state.items(params["match"])[1]
    pref_keys, inverse = np.unique(
        labels[pairs["user"]] * n_q + pairs["query"], return_inverse=True
    )
    pref_count = np.bincount(inverse.reshape(-1), weights=pairs["count"], minlength=pref_keys.size)
    kept = np.full(state.vocabulary.size, -1, dtype=np.int64)
    kept[np.flatnonzero(~state.flagged & (state.query_events > 0))] = np.arange(
        state.kept_vocab.size
    )
    per_user = np.bincount(pairs["user"], weights=pairs["count"], minlength=state.n_users)
    choice = Choice(
        labels=labels,
        kept=kept,
        item_of=None if params["match"] == "query" else state.intent_labels,
        n_items=n_items,
        n_queries=n_q,
        block_keys=blocks["group"] * n_items + blocks["query"],
        block_target=blocks["target"],
        pref_keys=pref_keys,
        pref_count=pref_count.astype(np.int64),
        user_start=np.r_[0, np.cumsum(per_user)[:-1]].astype(np.int64),
        state=dict(rng.bit_generator.state),
    )
    chosen = choose_events(log, choice)
    group = chosen["key"].to_numpy(np.int64) // n_items
    query = chosen["query"].to_numpy(np.int64)
    url_code = chosen["url"].to_numpy(np.int64)
    url = np.full(url_code.size, None, dtype=object)
    url[url_code >= 0] = log.urls[url_code[url_code >= 0]]
    times = chosen["t"].to_numpy(np.int64).view("datetime64[ns]")
    table = pd.DataFrame(
        {
            "group": group,
            "query": state.kept_vocab[query],
            "time": generalize_times(times, params["time_granularity"]).to_numpy(),
            "url": url,
            "row": chosen["row"].to_numpy(np.int64),
        }
    )
    data, source = lazy_publication(table, labels, state.pseudonyms)
    return data, source, (group, query)


def _outcome(
    state: _State,
    labels: np.ndarray,
    published: tuple[np.ndarray, np.ndarray],
    n_rows: int,
    secret: Pseudonymizer,
    context: tuple,
) -> tuple[dict[str, Any], Partition]:
    """The release's accounting over all clusters (never per cluster) and its partition."""
    n_users = state.n_users
    pub_group, pub_query = published
    user, weights = state.units
    query, n_q = state.items("query")
    n_groups = int(labels.max()) + 1
    group_sizes = np.bincount(labels, minlength=n_groups)
    published_per_group, added_per_group, suppressed_per_group = accounting_counts(
        labels, user, query, weights, pub_group, pub_query, n_q
    )
    intent = state.intent_labels
    _, intent_added, intent_suppressed = accounting_counts(
        labels,
        user,
        intent[query] if query.size else query,
        weights,
        pub_group,
        intent[pub_query] if pub_query.size else pub_query,
        state.n_intents,
    )
    clustering_suppressed = int(suppressed_per_group.sum())
    empty_user = published_per_group[labels] == 0
    # fresh secret cluster ids, indexed by the original ids in sorted order
    cluster_id = secret.rng("cluster-ids", *context).permutation(n_groups)
    sorted_users = np.argsort(np.argsort(state.users.astype(str), kind="stable"), kind="stable")
    in_sorted_order = np.empty(n_users, dtype=np.int64)
    in_sorted_order[sorted_users] = np.where(empty_user, -1, cluster_id[labels])
    info = {
        "queries_in": int(state.events["n"]),
        "queries_published": int(n_rows),
        "queries_added": int(added_per_group.sum()),
        "queries_suppressed": state.identifier_suppressed + clustering_suppressed,
        "queries_suppressed_identifier": state.identifier_suppressed,
        "queries_suppressed_clustering": clustering_suppressed,
        "identifier_queries_by_kind": state.identifier_counts,
        "intent_level": {
            "added": int(intent_added.sum()),
            "suppressed": int(intent_suppressed.sum()),
        },
        "rows_in": state.n_rows,
        "users_in": int(n_users),
        "users_published": int(n_users - empty_user.sum()),
        "users_without_published_queries": int(empty_user.sum()),
        "n_clusters": n_groups,
        # published clusters only: an empty cluster's size is not in the release
        "cluster_size_counts": {
            int(s): int(c)
            for s, c in zip(*np.unique(group_sizes[published_per_group > 0], return_counts=True))
        },
        "clusters_without_published_queries": int((published_per_group == 0).sum()),
        "intents": state.intent_stats,
        "warnings": [],
    }
    return info, Partition(in_sorted_order)


_PERIOD_WORDS = {
    "second": "to the second",
    "minute": "to the minute",
    "hour": "to the hour",
    "day": "to the day",
    "week": "to the Monday of their week",
    "month": "to the first day of their month",
}


def transformation_text(params: dict[str, Any], info: dict[str, Any]) -> str:
    """What the release did to the log, in plain words (whole-release counts only).  The
    cluster sizes are those of the published clusters (``info["cluster_size_counts"]``).

    Examples
    --------
    >>> info = {"n_clusters": 4, "cluster_size_counts": {3: 3, 4: 1}, "queries_in": 100,
    ...         "queries_published": 90, "queries_added": 10, "queries_suppressed": 20,
    ...         "queries_suppressed_identifier": 2}
    >>> print(transformation_text({"k": 3, "time_granularity": "hour"}, info))
    ... # doctest: +NORMALIZE_WHITESPACE
    Users were grouped into 4 clusters of 3 to 4 users; every member of a cluster publishes
    the same queries, at the same times (floored to the hour) and with the same clicked URLs.
    Of 100 query events, 80 were kept for the user who issued them, 10 were added and 20
    suppressed (2 because they carried a phone number, e-mail address, SSN or street address).
    >>> info.update(n_clusters=1, cluster_size_counts={})
    >>> print(transformation_text({"k": 5, "time_granularity": "hour"}, info)[:60])
    Users were grouped into 1 cluster, which published no query;
    >>> info.update(n_clusters=3, cluster_size_counts={5: 2})
    >>> print(transformation_text({"k": 5, "time_granularity": "hour"}, info)[:74])
    Users were grouped into 3 clusters; the 2 that published queries hold 5 us
    """
    kept = info["queries_published"] - info["queries_added"]
    return (
        f"{_clusters_text(info)}; every member of a cluster publishes the same "
        f"queries, at the same times (floored {_PERIOD_WORDS[params['time_granularity']]})"
        f" and with the same clicked URLs. Of {info['queries_in']:,} query events, "
        f"{kept:,} were kept for the user who issued them, {info['queries_added']:,} were "
        f"added and {info['queries_suppressed']:,} suppressed "
        f"({info['queries_suppressed_identifier']:,} because they carried a phone number, "
        f"e-mail address, SSN or street address)."
    )


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _clusters_text(info: dict[str, Any]) -> str:
    """The clusters made and the real sizes of those published (smallest to largest)."""
    n_clusters = int(info["n_clusters"])
    sizes = {int(s): int(c) for s, c in (info.get("cluster_size_counts") or {}).items()}
    published = sum(sizes.values())
    grouped = f"Users were grouped into {_plural(n_clusters, 'cluster')}"
    if not published:
        return grouped + (
            ", which published no query" if n_clusters == 1 else ", none of which published a query"
        )
    low, high = min(sizes), max(sizes)
    span = f"{low:,} to {_plural(high, 'user')}" if low != high else _plural(low, "user")
    if published == n_clusters:
        return f"{grouped} of {span}"
    verb = "holds" if published == 1 else "hold"
    return f"{grouped}; the {published:,} that published queries {verb} {span} each"


def _warnings(k: int, info: dict[str, Any]) -> list[str]:
    """The k = 1 warning, where it applies; a release that would publish nothing is
    infeasible (as in location and tabular), never an empty file."""
    if info["users_published"] == 0:
        raise InfeasibleError(
            f"nothing can be published: no cluster of {k} or more users shares a query "
            f"that is not an identifier, so every one of the {info['users_in']:,} users "
            "would be suppressed; try a smaller k"
        )
    return [message for message in (k_warning(k),) if message]


def _parameters(
    params: dict[str, Any], suppress_identifiers: bool, identifier_kinds: tuple[str, ...] | None
) -> dict[str, Any]:
    """The public parameters recorded in the release (and its report)."""
    return {
        "algorithm": f"intent-clustering + {params['grouping']} grouping + median multisets",
        "k": params["k"],
        "time_granularity": params["time_granularity"],
        "seed": params["seed"],
        "suppress_identifiers": suppress_identifiers,
        "identifier_kinds": list(identifier_kinds or IDENTIFIER_PATTERNS),
        "click_threshold": params["click_threshold"],
        "term_threshold": params["term_threshold"],
        "max_url_queries": params["max_url_queries"],
        "max_intent_size": params["max_intent_size"],
        "tie_break": params["tie_break"],
        "match": params["match"],
        "profile_scale": params["profile_scale"],
        "grouping": params["grouping"],
        "refine": params["refine"],
        "block_size": params["block_size"],
    }


def _measure(release: Release, *, state: _State, params: dict[str, Any]) -> None:
    """Utility and risk before / after, under the original ids (so the figures do not
    depend on the pseudonym key)."""
    users = state.users
    if state.frame is None:  # the measures compare whole logs: the events in memory
        from ._dask import gather_events

        state.events = gather_events(state.dask_log)
    events = state.events
    original = pd.DataFrame(
        {
            "user": users[events["user"]],
            "query": state.vocabulary[events["query"]],
            "time": events["time"],
            "url": events["url"],
        }
    )
    data = release.data
    if is_dask(data):  # the measures compare whole logs in memory
        (data,) = compute(data)
    unmasked = data.assign(
        user=pd.Series(users, index=state.pseudonyms).reindex(data["user"].to_numpy()).to_numpy()
    )
    intent_of = pd.Series(state.intent_labels, index=state.kept_vocab)
    info = release.info
    release.utility = utility_report(
        original,
        unmasked,
        intent_of,
        params["time_granularity"],
        info["queries_added"],
        info["queries_suppressed"],
    )
    release.risk = risk_report(original, unmasked, params["risk_p"], seed=params["seed"])
