"""A seeded synthetic search log: Zipf-distributed queries over topics, with click URLs.

Used by the demo, the tests and the benchmarks, so no real person's queries are needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from structanon._validation import check_float, check_int
from structanon.errors import InputError

__all__ = ["synthetic_log"]

_SYLLABLES = np.array(
    [
        "ka",
        "lo",
        "mi",
        "ne",
        "ru",
        "sa",
        "ti",
        "vo",
        "ze",
        "ba",
        "do",
        "fi",
        "gu",
        "he",
        "jo",
        "pa",
        "qu",
        "we",
        "xi",
        "ya",
    ]
)
_HUB_URL = "http://www.searchportal.com"


def _words(rng: np.random.Generator, n: int, syllables: int) -> np.ndarray:
    """``n`` distinct pseudo-words of at least ``syllables`` syllables."""
    while _SYLLABLES.size**syllables < 4 * n:
        syllables += 1
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < n:
        parts = rng.choice(_SYLLABLES, size=(2 * n, syllables))
        for word in ("".join(p) for p in parts):
            if word not in seen:
                seen.add(word)
                words.append(word)
    return np.array(words[:n], dtype=object)


def _zipf_cdf(n: int, a: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** a
    return np.cumsum(weights) / weights.sum()


def synthetic_log(
    n_users: int = 200,
    n_lines: int = 20_000,
    *,
    n_topics: int = 20,
    intents_per_topic: int = 10,
    queries_per_intent: int = 6,
    urls_per_intent: int = 3,
    zipf_a: float = 1.1,
    topics_per_user: int = 3,
    favourites: int = 3,
    repeat_prob: float = 0.3,
    click_prob: float = 0.6,
    multi_click_prob: float = 0.25,
    hub_click_prob: float = 0.05,
    identifier_rate: float = 0.002,
    start: str = "2006-03-01",
    days: int = 92,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Generate a synthetic AOL-style search log.

    Parameters
    ----------
    n_users : int
        Number of users; each issues at least one query.
    n_lines : int
        Exact number of log lines (one per click, one per click-less query).
    n_topics, intents_per_topic, queries_per_intent : int
        The query universe: topics split into intents, each with its own queries
        (``"<topic word> <intent word> <modifier>"``) and ``urls_per_intent`` URLs.
    zipf_a : float
        Zipf exponent of topic popularity and of query popularity within a topic.
    topics_per_user : int
        Topics each user searches, with Dirichlet preference weights.
    favourites, repeat_prob : int, float
        Each user re-issues one of ``favourites`` personal queries with probability
        ``repeat_prob``.
    click_prob, multi_click_prob, hub_click_prob : float
        Probability that a query gets a click; that a click is followed by another; that
        a click goes to a generic portal URL rather than one of the intent's URLs.
    identifier_rate : float
        Share of queries replaced by one carrying a (fake) phone number, e-mail address,
        SSN or street address.
    start, days :
        Query times are uniform over ``days`` days from ``start``.
    seed : int or None

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``query``, ``time``, ``rank``, ``url`` as :func:`read_log` returns;
        rows sorted by user and time.  ``attrs["intent_of_query"]`` maps each generated
        query to its true intent id (for evaluating intent recovery).

    Examples
    --------
    >>> log = synthetic_log(n_users=5, n_lines=50, seed=1)
    >>> len(log), log["user"].nunique()
    (50, 5)

    Notes
    -----
    Topic ``t`` is drawn with probability proportional to ``1 / r_t^a`` (its popularity
    rank ``r_t``), and a query of that topic with probability proportional to
    ``1 / r_q^a`` over the topic's queries in a random order.
    """
    _check_settings(locals())
    rng = np.random.default_rng(seed)
    topics_per_user = min(topics_per_user, n_topics)
    universe = _Universe(rng, n_topics, intents_per_topic, queries_per_intent, urls_per_intent)
    n_clicks = _clicks_per_event(rng, n_lines, n_users, click_prob, multi_click_prob)
    n_events = n_clicks.size
    activity = rng.lognormal(0.0, 1.0, n_users)
    owner = np.concatenate(
        [np.arange(n_users), rng.choice(n_users, n_events - n_users, p=activity / activity.sum())]
    )
    rng.shuffle(owner)
    event_query = _event_queries(
        rng, universe, owner, n_users, topics_per_user, zipf_a, favourites, repeat_prob
    )
    text = universe.query_text[event_query]
    _add_identifiers(rng, text, identifier_rate)
    log = _rows(
        rng,
        universe,
        owner,
        event_query,
        text,
        n_clicks,
        n_users,
        zipf_a,
        hub_click_prob,
        start,
        days,
    )
    log.attrs["intent_of_query"] = dict(
        zip(universe.query_text.tolist(), universe.query_intent.tolist())
    )
    return log


_COUNTS = (
    "n_users",
    "n_lines",
    "n_topics",
    "intents_per_topic",
    "queries_per_intent",
    "urls_per_intent",
    "topics_per_user",
    "favourites",
)
_SHARES = ("repeat_prob", "click_prob", "multi_click_prob", "hub_click_prob", "identifier_rate")


def _check_settings(settings: dict[str, Any]) -> None:
    """Every count a positive integer, every probability in [0, 1), lines >= users."""
    for name in _COUNTS:
        check_int(settings[name], name, min_value=1)
    if settings["n_lines"] < settings["n_users"]:
        raise InputError("n_lines must be at least n_users", value=settings["n_lines"])
    for name in _SHARES:
        check_float(settings[name], name, min_value=0, max_value=1, include_max=False)


class _Universe:
    """The queries (``"<topic word> <intent word> <modifier>"``), their intents and topics,
    and each intent's URLs."""

    def __init__(
        self,
        rng: np.random.Generator,
        n_topics: int,
        intents_per_topic: int,
        queries_per_intent: int,
        urls_per_intent: int,
    ) -> None:
        topic_words = _words(rng, n_topics, 3)
        intent_words = _words(rng, n_topics * intents_per_topic, 2)
        modifiers = _words(rng, max(queries_per_intent * 4, 8), 2)
        self.n_topics, self.urls_per_intent = n_topics, urls_per_intent
        self.per_topic = intents_per_topic * queries_per_intent
        n_queries = n_topics * self.per_topic
        self.query_intent = np.arange(n_queries) // queries_per_intent
        query_topic = self.query_intent // intents_per_topic
        mod = np.concatenate(
            [
                rng.choice(modifiers.size, queries_per_intent, replace=False)
                for _ in range(n_topics * intents_per_topic)
            ]
        )
        self.query_text = (
            pd.Series(topic_words[query_topic])
            + " "
            + intent_words[self.query_intent]
            + " "
            + modifiers[mod]
        ).to_numpy(dtype=object)
        url_text = (
            pd.Series(np.repeat(intent_words, urls_per_intent))
            + "-"
            + np.repeat(topic_words, intents_per_topic * urls_per_intent)
            + "-"
            + np.tile(np.arange(urls_per_intent).astype(str), n_topics * intents_per_topic)
        )
        self.url_text = ("http://www." + url_text + ".com").to_numpy(dtype=object)


def _clicks_per_event(
    rng: np.random.Generator, n_lines: int, n_users: int, click_prob: float, multi_click_prob: float
) -> np.ndarray:
    """Clicks of each query event (0: a click-less line), the lines summing to ``n_lines``."""
    estimate = int(n_lines / (1 + click_prob * multi_click_prob / (1 - multi_click_prob))) + 64
    while True:
        clicked = rng.random(estimate) < click_prob
        n_clicks = np.where(clicked, rng.geometric(1 - multi_click_prob, estimate), 0)
        ends = np.cumsum(np.maximum(n_clicks, 1))
        if ends[-1] >= n_lines:
            break
        estimate *= 2
    n_events = int(np.searchsorted(ends, n_lines) + 1)
    n_clicks = n_clicks[:n_events].copy()
    overflow = int(ends[n_events - 1] - n_lines)
    if overflow:
        n_clicks[-1] -= overflow
    if n_events < n_users:
        raise InputError("n_lines too small for n_users with these click settings", value=n_lines)
    return n_clicks


def _event_queries(
    rng: np.random.Generator,
    universe: _Universe,
    owner: np.ndarray,
    n_users: int,
    topics_per_user: int,
    zipf_a: float,
    favourites: int,
    repeat_prob: float,
) -> np.ndarray:
    """The query of each event: a Zipf draw in one of its owner's topics, or a favourite."""
    n_topics, per_topic, n_events = universe.n_topics, universe.per_topic, owner.size
    topic_cdf = _zipf_cdf(n_topics, zipf_a)
    topic_rank = rng.permutation(n_topics)
    user_topics = topic_rank[
        np.minimum(np.searchsorted(topic_cdf, rng.random((n_users, topics_per_user))), n_topics - 1)
    ]
    prefs = np.cumsum(rng.dirichlet(np.ones(topics_per_user), n_users), axis=1)
    slot = (rng.random(n_events)[:, None] > prefs[owner]).sum(axis=1)
    event_topic = user_topics[owner, np.minimum(slot, topics_per_user - 1)]
    query_cdf = _zipf_cdf(per_topic, zipf_a)
    order = np.argsort(rng.random((n_topics, per_topic)), axis=1)
    rank_in_topic = np.minimum(np.searchsorted(query_cdf, rng.random(n_events)), per_topic - 1)
    event_query = event_topic * per_topic + order[event_topic, rank_in_topic]
    favourite = user_topics[:, :1] * per_topic + rng.integers(0, per_topic, (n_users, favourites))
    repeat = rng.random(n_events) < repeat_prob
    event_query[repeat] = favourite[owner[repeat], rng.integers(0, favourites, repeat.sum())]
    return event_query


def _add_identifiers(rng: np.random.Generator, text: np.ndarray, rate: float) -> None:
    """Replace a share ``rate`` of the queries by fake phone numbers, e-mails, SSNs and
    street addresses (in place)."""
    identifying = np.flatnonzero(rng.random(text.size) < rate)
    if not identifying.size:
        return
    digits = rng.integers(0, 10, (identifying.size, 10)).astype(str)
    numbers = pd.Series(digits[:, 0]).str.cat(list(digits[:, 1:].T))
    kinds = rng.integers(0, 4, identifying.size)
    templates = [
        "call " + numbers.str[:3] + "-" + numbers.str[3:6] + "-" + numbers.str[6:],
        "user" + numbers.str[:5] + "@mailbox.example",
        "ssn " + numbers.str[:3] + "-" + numbers.str[3:5] + "-" + numbers.str[5:9],
        numbers.str[:3].str.lstrip("0") + "1 oak street",
    ]
    for kind, template in enumerate(templates):
        pick = kinds == kind
        text[identifying[pick]] = template[pick].to_numpy(dtype=object)


def _rows(
    rng: np.random.Generator,
    universe: _Universe,
    owner: np.ndarray,
    event_query: np.ndarray,
    text: np.ndarray,
    n_clicks: np.ndarray,
    n_users: int,
    zipf_a: float,
    hub_click_prob: float,
    start: str,
    days: int,
) -> pd.DataFrame:
    """One row per click (or per click-less event), with times, ranks and URLs, sorted by
    user and time."""
    n_events, urls_per_intent = n_clicks.size, universe.urls_per_intent
    seconds = rng.integers(0, days * 86_400, n_events)
    times = np.datetime64(start, "s") + seconds.astype("timedelta64[s]")
    rows_per_event = np.maximum(n_clicks, 1)
    event_of_row = np.repeat(np.arange(n_events), rows_per_event)
    has_click = np.repeat(n_clicks > 0, rows_per_event)
    intent_of_row = universe.query_intent[event_query][event_of_row]
    url_pick = np.minimum(
        np.searchsorted(_zipf_cdf(urls_per_intent, zipf_a), rng.random(event_of_row.size)),
        urls_per_intent - 1,
    )
    urls = universe.url_text[intent_of_row * urls_per_intent + url_pick]
    urls[rng.random(urls.size) < hub_click_prob] = _HUB_URL
    urls[~has_click] = None
    ranks = pd.array(np.where(has_click, rng.integers(1, 11, urls.size), 0), dtype="Int64")
    ranks[~has_click] = pd.NA
    user_ids = np.sort(rng.choice(np.arange(100, 100 + 50 * n_users), n_users, replace=False))
    log = pd.DataFrame(
        {
            "user": user_ids[owner][event_of_row].astype(str).astype(object),
            "query": text[event_of_row],
            "time": times[event_of_row].astype("datetime64[ns]"),
            "rank": ranks,
            "url": urls,
        }
    )
    log["_uid"] = user_ids[owner][event_of_row]
    log = log.sort_values(["_uid", "time"], kind="stable").drop(columns="_uid")
    return log.reset_index(drop=True)
