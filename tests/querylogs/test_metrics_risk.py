import itertools

import numpy as np
import pandas as pd
import pytest

from querylogs.metrics import frequency_kl, intent_divergence, query_url_retention, top_n_overlap
from querylogs.risk import (
    linkage_reidentification,
    query_set_uniqueness,
    random_query_uniqueness,
    risk_report,
)
from structanon.errors import InputError


def brute_unique_share(log, p):
    """Exhaustive: share of users for whom EVERY p-subset of their queries is unique."""
    sets = log.groupby("user")["query"].apply(lambda s: frozenset(s))
    unique = 0
    for queries in sets:
        known = list(itertools.combinations(sorted(queries), min(p, len(queries))))
        if all(sum(set(k) <= other for other in sets) == 1 for k in known):
            unique += 1
    return unique / len(sets)


def test_uniqueness_small():
    log = pd.DataFrame({"user": list("aabbccd"), "query": ["x", "y", "x", "y", "x", "z", "x"]})
    assert query_set_uniqueness(log) == pytest.approx(2 / 4)  # {x,y} twice, {x,z}, {x}
    assert random_query_uniqueness(log, 1, seed=0) <= 0.25
    # with p >= every user's set size the attack knows the whole set
    assert random_query_uniqueness(log, 5) == brute_unique_share(log, 5) == pytest.approx(0.25)


def test_random_uniqueness_bounds():
    rng = np.random.default_rng(0)
    log = pd.DataFrame(
        {
            "user": rng.integers(0, 30, 300).astype(str),
            "query": rng.integers(0, 40, 300).astype(str),
        }
    )
    for p in (1, 2, 3):
        share = random_query_uniqueness(log, p, seed=p)
        # unique for all p-subsets implies unique for the sampled one
        assert share >= brute_unique_share(log, p) - 1e-12
    assert random_query_uniqueness(log, 1) <= random_query_uniqueness(log, 3) + 0.2
    with pytest.raises(InputError):
        random_query_uniqueness(log, 0)


def test_linkage():
    original = pd.DataFrame({"user": ["a", "a", "b", "c"], "query": ["x", "y", "x", "z"]})
    published = pd.DataFrame({"user": ["a", "a", "b", "b"], "query": ["x", "y", "x", "y"]})
    # a: full set {x,y} matches a and b -> not identified; b: {x} matches both; c: z gone
    assert linkage_reidentification(original, published, None) == 0.0
    assert linkage_reidentification(original, original, None) == pytest.approx(2 / 3)
    report = risk_report(original, published, ps=(1,))
    assert report["after"]["unique_by_query_set"] == 0.0
    assert set(report["before"]) == set(report["after"])


def test_utility_metrics():
    original = pd.DataFrame(
        {"user": ["a", "a", "b", "b"], "query": ["x", "y", "x", "z"], "url": ["u", None, "u", "w"]}
    )
    same = original.copy()
    assert top_n_overlap(original, same, 2) == 1.0
    assert frequency_kl(original, same) == 0.0
    assert query_url_retention(original, same)["recall"] == 1.0
    intents = pd.Series([0, 0, 1], index=["x", "y", "z"])
    assert intent_divergence(original, same, intents)["mean"] == 0.0
    partial = original.iloc[[0, 2]]
    assert frequency_kl(original, partial) > 0
    retention = query_url_retention(original, partial)
    assert retention == {"precision": 1.0, "recall": 0.5, "pairs_original": 2, "pairs_published": 1}
    div = intent_divergence(original, partial, intents)
    # a keeps intent 0 only (same distribution); b goes from {0: .5, 1: .5} to {0: 1}
    p, m = np.array([0.5, 0.5]), np.array([0.75, 0.25])
    expected_b = 0.5 * np.sum(p * np.log2(p / m)) + 0.5 * np.log2(1 / 0.75)
    assert div["mean"] == pytest.approx(expected_b / 2)
    gone = intent_divergence(original, original.iloc[:2], intents)
    assert gone["users_without_published_queries"] == 1 and gone["mean"] == pytest.approx(0.5)
