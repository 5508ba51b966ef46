from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from querylogs import anonymize, generalize_times, verify_log
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer


def check_release(h, log, release, k, identifiers_suppressed=0):
    """Independent checks: identical published logs in groups >= k; accounting exact."""
    data = release.data
    assert list(data.columns) == ["user", "query", "time", "url"]
    groups = h.groups_of_identical_rows(data)
    assert all(n >= k for n in groups.values()), groups.values()
    query_groups = Counter(frozenset(Counter(g["query"]).items()) for _, g in data.groupby("user"))
    assert all(n >= k for n in query_groups.values())
    before = h.original_counts(log)
    after = h.published_counts(data)
    pseudonym = {u: h.hmac_pseudonym(u) for u in {u for u, _ in before}}
    mapped = Counter({(pseudonym[u], q): n for (u, q), n in before.items()})
    suppressed = sum(max(n - after.get(key, 0), 0) for key, n in mapped.items())
    added = sum(max(m - mapped.get(key, 0), 0) for key, m in after.items())
    info = release.info
    assert suppressed == info["queries_suppressed"]
    assert added == info["queries_added"]
    assert info["queries_suppressed_identifier"] == identifiers_suppressed
    # every original query is published for its user or counted as suppressed
    assert sum(mapped.values()) == info["queries_in"]
    assert sum(after.values()) - added + suppressed == info["queries_in"]
    assert set(data["user"]) <= set(pseudonym.values())
    assert release.n_individuals == len(pseudonym)
    assert release.suppressed == len(pseudonym) - data["user"].nunique()
    return mapped, after


def test_median_multisets_are_optimal(h, small_log):
    k = 4
    release = anonymize(
        small_log,
        k,
        seed=0,
        pseudonymizer=Pseudonymizer(h.KEY),
        suppress_identifiers=False,
        measures=False,
    )
    mapped, after = check_release(h, small_log, release, k)
    sizes = release.info["cluster_size_counts"]
    assert min(sizes) >= k and max(sizes) <= 2 * k - 1
    part = release.partition.labels
    published = np.bincount(part[part >= 0])
    assert published[published > 0].min() >= k and published.max() <= 2 * k - 1
    # per cluster (algorithm's partition) the published count lies between the medians
    users = sorted({u for u, _ in h.original_counts(small_log)})
    pseudonyms = np.array([h.hmac_pseudonym(u) for u in users])
    part = release.partition.labels
    published_users = set(release.data["user"])
    for group in np.unique(part[part >= 0]):
        members = pseudonyms[part == group]
        assert set(members) <= published_users
        queries = {q for (u, q) in mapped if u in set(members)}
        for q in queries:
            counts = sorted(mapped.get((u, q), 0) for u in members)
            m = after.get((members[0], q), 0)
            assert all(after.get((u, q), 0) == m for u in members)
            lower, upper = counts[(len(counts) - 1) // 2], counts[len(counts) // 2]
            assert lower <= m <= upper


def test_intent_matching(h, small_log):
    exact = anonymize(small_log, 5, seed=0, pseudonymizer=Pseudonymizer(h.KEY))
    semantic = anonymize(small_log, 5, seed=0, pseudonymizer=Pseudonymizer(h.KEY), match="intent")
    check_release(h, small_log, semantic, 5, semantic.info["queries_suppressed_identifier"])
    # intents are kept better when similar queries may stand in for each other
    assert (
        semantic.utility["intent_js_divergence"]["mean"]
        < exact.utility["intent_js_divergence"]["mean"]
    )
    with pytest.raises(InputError, match="match"):
        anonymize(small_log, 5, match="topic")
    with pytest.raises(InputError, match="profile_scale"):
        anonymize(small_log, 5, profile_scale="sqrt")
    logged = anonymize(
        small_log,
        5,
        seed=0,
        pseudonymizer=Pseudonymizer(h.KEY),
        profile_scale="log",
        measures=False,
    )
    check_release(h, small_log, logged, 5, logged.info["queries_suppressed_identifier"])


def test_published_events_come_from_the_cluster(h, small_log):
    release = anonymize(small_log, 3, seed=1, measures=False, suppress_identifiers=False)
    original = {
        (h.normalize(q), u) for q, u in zip(small_log["query"], small_log["url"]) if not pd.isna(u)
    }
    published = {
        (q, u) for q, u in zip(release.data["query"], release.data["url"]) if not pd.isna(u)
    }
    assert published <= original
    days = set(generalize_times(small_log["time"], "day"))
    assert set(release.data["time"]) <= days


def test_identifiers_suppressed_and_counted(h):
    log = pd.DataFrame(
        {
            "user": ["a", "a", "b", "b", "c", "c"],
            "query": [
                "weather",
                "call 555-867-5309",
                "weather",
                "mail me@example.com",
                "weather",
                "12 elm street",
            ],
            "time": pd.to_datetime(["2006-03-01 10:00"] * 6),
            "url": [None] * 6,
        }
    )
    release = anonymize(log, 3, seed=0, pseudonymizer=Pseudonymizer(h.KEY))
    assert release.data["query"].tolist() == ["weather"] * 3
    assert release.info["queries_suppressed_identifier"] == 3
    assert release.info["identifier_queries_by_kind"] == {
        "email": 1,
        "ssn": 0,
        "phone": 1,
        "street_address": 1,
    }
    check_release(h, log, release, 3, identifiers_suppressed=3)
    kept = anonymize(log, 3, seed=0, suppress_identifiers=False, measures=False)
    assert kept.info["queries_suppressed_identifier"] == 0


def test_time_granularity_and_determinism(h, small_log):
    a = anonymize(
        small_log,
        3,
        time_granularity="hour",
        seed=7,
        pseudonymizer=Pseudonymizer(h.KEY),
        measures=False,
    )
    b = anonymize(
        small_log,
        3,
        time_granularity="hour",
        seed=7,
        pseudonymizer=Pseudonymizer(h.KEY),
        measures=False,
    )
    pd.testing.assert_frame_equal(a.data, b.data)
    times = pd.to_datetime(a.data["time"])
    assert (times == times.dt.floor("h")).all()
    month = anonymize(small_log, 3, time_granularity="month", seed=7, measures=False)
    assert (pd.to_datetime(month.data["time"]).dt.day == 1).all()


def test_assessment(h, small_log):
    release = anonymize(small_log, 5, seed=0, key=h.KEY)
    same_key = anonymize(small_log, 5, seed=0, key=h.KEY)
    assert release.risk == same_key.risk and release.utility == same_key.utility
    # measured under the original ids: the figures before do not depend on the key
    other_key = anonymize(small_log, 5, seed=0)
    assert release.risk["before"] == other_key.risk["before"]
    risk = release.risk
    assert risk["before"]["unique_by_query_set"] > 0.5
    for key, value in risk["after"].items():
        assert value == 0.0, key
    utility = release.utility
    assert utility["query_url_pairs"]["precision"] == 1.0
    assert 0 <= utility["share_suppressed"] <= 1 and 0 <= utility["share_added"] <= 1
    assert 0 <= utility["intent_js_divergence"]["mean"] <= 1
    assert release.to_dict()["verification"]["passed"]


def test_everything_suppressed(h):
    log = pd.DataFrame(
        {
            "user": ["a", "b", "c"],
            "query": ["call 555-867-5309"] * 3,
            "time": pd.to_datetime(["2006-03-01"] * 3),
            "url": [None] * 3,
        }
    )
    # every query carries a phone number: nothing can be published, which is infeasible
    with pytest.raises(InfeasibleError, match="every one of the 3 users"):
        anonymize(log, 2, seed=0, pseudonymizer=Pseudonymizer(h.KEY))
    # without identifier suppression the three share their query and are published
    release = anonymize(
        log, 2, seed=0, pseudonymizer=Pseudonymizer(h.KEY), suppress_identifiers=False
    )
    assert release.data["user"].nunique() == 3 and release.verify().passed


def test_errors(small_log):
    with pytest.raises(InfeasibleError):
        anonymize(small_log, 61)
    with pytest.raises(InputError):
        anonymize(small_log, 0)
    with pytest.raises(InputError):
        anonymize(small_log, 2.5)
    with pytest.raises(InputError, match="time_granularity"):
        anonymize(small_log, 2, time_granularity="year")
    with pytest.raises(InputError, match="query"):
        anonymize(small_log.drop(columns="query"), 2)
    bad = small_log.copy()
    bad.loc[5, "user"] = None
    with pytest.raises(InputError) as info:
        anonymize(bad, 2)
    assert info.value.row == 5 and info.value.column == "user"
    with pytest.raises(InputError):
        anonymize(small_log.assign(time="yesterday"), 2)


def test_verifier_rejects_bad_outputs():
    data = pd.DataFrame(
        {
            "user": ["a", "a", "b", "b"],
            "query": ["x", "y", "x", "y"],
            "time": ["d1", "d1", "d1", "d2"],
            "url": [None] * 4,
        }
    )
    checks = verify_log(data, 2)
    assert checks[0].passed and not checks[1].passed
    assert not verify_log(data.iloc[:3], 2)[0].passed


logs = st.integers(2, 12).flatmap(
    lambda n_users: st.lists(
        st.tuples(
            st.integers(0, n_users - 1),
            st.sampled_from(["a", "b", "c", "d b", "D  b", "e", "call 555-867-5309"]),
            st.integers(0, 3),
            st.sampled_from([None, "u1", "u2", "u3"]),
        ),
        min_size=n_users,
        max_size=60,
    ).map(lambda rows: (n_users, rows))
)


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(
    logs,
    st.integers(1, 4),
    st.sampled_from(["suppress", "add"]),
    st.integers(0, 3),
    st.sampled_from(["query", "intent"]),
    st.booleans(),
    st.sampled_from(["greedy", "greedy-intent", "mdav"]),
    st.sampled_from([0, 0, 1]),
)
def test_property_release_is_user_k_anonymous(
    h, case, k, tie_break, seed, match, identifiers, grouping, refine
):
    n_users, rows = case
    users = [f"u{i}" for i in range(n_users)] + [f"u{r[0]}" for r in rows]
    queries = ["a"] * n_users + [r[1] for r in rows]
    times = [0] * n_users + [r[2] for r in rows]
    urls = [None] * n_users + [r[3] for r in rows]
    log = pd.DataFrame(
        {
            "user": users,
            "query": queries,
            "time": pd.Timestamp("2006-03-01") + pd.to_timedelta(times, unit="h"),
            "url": urls,
        }
    )
    k = min(k, n_users)
    release = anonymize(
        log,
        k,
        seed=seed,
        tie_break=tie_break,
        measures=False,
        match=match,
        pseudonymizer=Pseudonymizer(h.KEY),
        suppress_identifiers=identifiers,
        time_granularity="day",
        grouping=grouping,
        refine=refine,
    )
    assert release.parameters["grouping"] == grouping
    flagged = sum(n for (_, q), n in h.original_counts(log).items() if "555" in q)
    check_release(h, log, release, k, flagged if identifiers else 0)
    if identifiers:
        assert not release.data["query"].str.contains("555").any()


def test_real_aol_sample(h):
    """The original-format AOL sample (128 users): verified, exact accounting; aggregates only."""
    from querylogs import read_log
    from querylogs._identifiers import contains_identifier

    log = read_log(h.shared_file("aol/aol_raw_sample_20k.tsv"))
    release = anonymize(log, 5, seed=0, pseudonymizer=Pseudonymizer(h.KEY), measures=False)
    counts = h.original_counts(log)
    queries = sorted({q for _, q in counts})
    flagged = dict(zip(queries, contains_identifier(queries)))
    expected = sum(n for (_, q), n in counts.items() if flagged[q])
    check_release(h, log, release, 5, expected)
    assert release.info["queries_in"] == sum(counts.values())


def test_release_holds_the_user_k_anonymity_model(small_log):
    """Release.models holds a core PrivacyModel, not a description string; its check
    agrees with an independent recount of identical query multisets."""
    from collections import Counter

    from querylogs import UserKAnonymity, mdav
    from structanon.microaggregation import mdav as core_mdav
    from structanon.models import PrivacyModel

    release = anonymize(small_log, 3, seed=0, measures=False)
    (model,) = release.models
    assert isinstance(model, UserKAnonymity) and isinstance(model, PrivacyModel)
    assert model.monotone and model.monotone_with_suppression and model.k == 3
    assert release.to_dict()["models"] == [{"model": "user k-anonymity", "k": 3}]
    data = release.data
    multisets = Counter(frozenset(Counter(g["query"]).items()) for _, g in data.groupby("user"))
    assert model.check(data).passed == (min(multisets.values()) >= 3)
    # one user's rows removed: that multiset is held by fewer users
    users = data["user"].unique()
    broken = data[data["user"] != users[0]]
    expected = Counter(frozenset(Counter(g["query"]).items()) for _, g in broken.groupby("user"))
    assert UserKAnonymity(max(expected.values()) + 1).check(broken).passed is False
    assert mdav is core_mdav


def test_numeric_queries_raise_no_pandas_warning():
    """Queries read as numbers (an object column of ints): no pandas FutureWarning about
    downcasting reaches the user (regression: fillna("") on such a column warned)."""
    import warnings

    from querylogs._identifiers import detect_identifiers
    from querylogs._intents import normalize_queries

    queries = pd.Series([7, 8, 8], dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        codes, vocabulary = normalize_queries(queries)
        found = detect_identifiers(queries)
    assert vocabulary.tolist() == ["7", "8"] and codes.tolist() == [0, 1, 1]
    assert found.shape[0] == 3


def test_numeric_times_are_epoch_seconds_and_true_false_is_refused():
    """Integer times were read as nanoseconds: a log of 2006 was published on 1970-01-01.
    Numbers are epoch seconds, as location reads them; true/false is no time."""
    log = pd.DataFrame(
        {
            "user": ["1", "1", "2", "2", "3", "3"],
            "query": ["a", "b", "a", "b", "a", "b"],
            "time": [1141228880, 1141228890, 1141228880, 1141228899, 1141228800, 1141315199],
        }
    )
    release = anonymize(log, 2, measures=False)
    days = set(pd.to_datetime(release.data["time"]).dt.strftime("%Y-%m-%d"))
    assert days and days <= {"2006-03-01", "2006-03-02"}
    with pytest.raises(InputError, match="not a date-time"):
        anonymize(log.assign(time=True), 2, measures=False)
