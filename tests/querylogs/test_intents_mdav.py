import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from querylogs import (
    click_graph,
    cluster_intents,
    mdav,
    normalize_queries,
    query_similarity,
    synthetic_log,
)
from querylogs._identifiers import contains_identifier, detect_identifiers
from structanon.errors import InfeasibleError, InputError


def dense_cosine(matrix):
    m = np.asarray(matrix, dtype=float)
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1
    unit = m / norms[:, None]
    sim = unit @ unit.T
    np.fill_diagonal(sim, 0)
    return sim


def test_click_graph_counts():
    codes, vocab = normalize_queries(["A b", "a  b", "c", "c", "d"])
    graph, urls = click_graph(codes, ["x", "x", "y", None, "x"])
    assert vocab.tolist() == ["a b", "c", "d"]
    assert dict(zip(urls, graph.toarray()[0])) == {"x": 2.0, "y": 0.0}
    assert graph.toarray().sum() == 4


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.int64, st.tuples(st.integers(1, 12), st.integers(1, 6)), elements=st.integers(0, 3)),
    st.sampled_from([0.3, 0.5, 0.8, 1.0]),
)
def test_similarity_and_components_match_brute_force(counts, threshold):
    graph = sp.csr_matrix(counts.astype(float))
    sim = query_similarity(graph, threshold, max_url_queries=None).toarray()
    brute = dense_cosine(counts)
    expected = np.where(brute >= threshold - 1e-9, brute, 0)
    assert np.allclose(sim, expected)
    vocab = np.array([f"q{i}" for i in range(counts.shape[0])], dtype=object)
    labels, stats = cluster_intents(
        vocab, graph, click_threshold=threshold, max_intent_size=None, max_url_queries=None
    )
    g = nx.Graph()
    g.add_nodes_from(range(counts.shape[0]))
    g.add_edges_from(zip(*np.nonzero(expected)))
    # click-less queries: one TF-IDF neighbour each; the vocabulary shares no term, so none
    components = {frozenset(c) for c in nx.connected_components(g)}
    ours = {frozenset(np.flatnonzero(labels == lab)) for lab in np.unique(labels)}
    assert ours == components
    assert stats["n_intents"] == len(components)


def test_hub_urls_ignored():
    counts = np.zeros((6, 2))
    counts[:, 0] = 1  # a portal clicked after every query
    counts[:2, 1] = 1
    labels, stats = cluster_intents(
        np.array([f"q{i}" for i in range(6)], dtype=object),
        sp.csr_matrix(counts),
        max_url_queries=3,
    )
    assert stats["hub_urls_ignored"] == 1
    assert labels[0] == labels[1] and len(set(labels[2:])) == 4


def test_clickless_queries_attach_by_terms():
    vocab = np.array(
        ["cheap flights", "flight deals", "cheap flights paris", "news today", "weather"],
        dtype=object,
    )
    counts = np.array([[3, 0], [1, 0], [0, 0], [0, 2], [0, 0]])
    labels, stats = cluster_intents(vocab, sp.csr_matrix(counts), max_term_share=0.9)
    assert labels[0] == labels[1] == labels[2]
    assert labels[3] != labels[0] and labels[4] not in (labels[0], labels[3])
    assert stats["term_links"] == 1


def test_oversized_intents_are_split():
    # two cliques of identical queries bridged by q3 (cosine 0.707 to each): one component
    counts = np.array([[1, 0], [1, 0], [1, 0], [1, 1], [0, 1], [0, 1], [0, 1]])
    vocab = np.array([f"q{i}" for i in range(7)], dtype=object)
    graph = sp.csr_matrix(counts)
    whole, _ = cluster_intents(vocab, graph, max_intent_size=None, max_url_queries=None)
    assert np.unique(whole).size == 1
    split, stats = cluster_intents(vocab, graph, max_intent_size=4, max_url_queries=None)
    assert split.tolist() == [0, 0, 0, 1, 2, 2, 2]
    assert stats["refinement_levels"] == 3  # thresholds 0.6, 0.7 keep it whole, 0.8 splits


def test_synthetic_intents_recovered():
    from sklearn.metrics import homogeneity_score

    log = synthetic_log(300, 30_000, seed=2, identifier_rate=0.0)
    codes, vocab = normalize_queries(log["query"])
    graph, _ = click_graph(codes, log["url"], vocab.size)
    labels, _ = cluster_intents(vocab, graph)
    truth = np.array([log.attrs["intent_of_query"][q] for q in vocab])
    assert homogeneity_score(truth, labels) > 0.95


def naive_mdav(x, k):
    """Textbook MDAV on a dense array (independent of the sparse implementation)."""
    x = np.asarray(x, dtype=float)
    remaining = list(range(len(x)))
    labels = np.full(len(x), -1)
    group = 0

    def take(center):
        nonlocal remaining
        d = ((x[remaining] - x[center]) ** 2).sum(axis=1)
        chosen = [remaining[i] for i in np.argsort(d, kind="stable")[:k]]
        remaining = [i for i in remaining if i not in chosen]
        return chosen

    def farthest(point):
        d = ((x[remaining] - point) ** 2).sum(axis=1)
        return remaining[int(np.argmax(d))]

    while len(remaining) >= 3 * k:
        r = farthest(x[remaining].mean(axis=0))
        s_point = x[r].copy()
        labels[take(r)] = group
        s = farthest(s_point)
        labels[take(s)] = group + 1
        group += 2
    if len(remaining) >= 2 * k:
        labels[take(farthest(x[remaining].mean(axis=0)))] = group
        group += 1
    labels[remaining] = group
    return labels


@settings(max_examples=40, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 40), st.integers(1, 4)),
        elements=st.floats(0, 100, allow_nan=False).map(lambda v: round(v, 3)),
    ),
    st.integers(1, 5),
)
def test_mdav_group_sizes(x, k):
    if len(x) < k:
        with pytest.raises(InfeasibleError):
            mdav(x, k)
        return
    labels = mdav(sp.csr_matrix(x), k)
    sizes = np.bincount(labels)
    assert labels.min() == 0 and sizes.min() >= k
    assert sizes.max() <= max(2 * k - 1, k)


def test_mdav_matches_textbook():
    rng = np.random.default_rng(0)
    for k in (2, 3, 5):
        x = rng.random((57, 3))
        assert np.array_equal(mdav(x, k), naive_mdav(x, k))
    with pytest.raises(InputError):
        mdav(np.zeros((3, 1)), 0)


def test_identifier_patterns():
    positives = [
        "call 555-867-5309",
        "(212) 555 1234",
        "8005551212",
        "ssn 123-45-6789",
        "john.doe@aol.com",
        "1600 pennsylvania ave",
        "12 elm street",
        "555-1234",
    ]
    negatives = [
        "weather",
        "2006 world cup",
        "route 66",
        "1-800-flowers",
        "year 1999 2000",
        "5 st louis",
        "ipod 30gb 2005-2006",
    ]
    assert contains_identifier(positives).all()
    assert not contains_identifier(negatives).any()
    assert detect_identifiers(["x@y.com"], ["email"]).columns.tolist() == ["email"]
    with pytest.raises(InputError):
        detect_identifiers(["x"], ["passport"])
