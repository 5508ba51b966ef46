"""Disassociation (issue 15): k^m per chunk, every occurrence accounted, reconstruction."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transactions
from structanon.errors import InfeasibleError, InputError
from structanon.models import PrivacyModel


def _walk(clusters):
    """Every (cluster, is_joint) of a release, members after their joint cluster."""
    for c in clusters:
        yield c
        yield from _walk(c.clusters)


def recount(clusters, k: int, m: int, original) -> None:
    """Independent check in plain Python of everything the release promises."""
    published: Counter = Counter()
    term_entries: Counter = Counter()
    for c in _walk(clusters):
        seen: set = set(c.term_chunk)
        if c.clusters:
            assert not c.term_chunk
            assert sum(x.size for x in c.clusters) == c.size
        else:
            assert c.size >= k
        for chunk in c.record_chunks:
            assert len(chunk) == c.size
            assert all(isinstance(s, frozenset) for s in chunk)
            items = {x for s in chunk for x in s}
            assert not items & seen  # disjoint within a cluster
            seen |= items
            counts: Counter = Counter()
            for sub in chunk:
                for size in range(1, m + 1):
                    counts.update(combinations(sorted(sub, key=str), size))
                published.update(sub)
            assert all(v >= k for v in counts.values()), counts
        term_entries.update(c.term_chunk)
    truth = Counter(x for t in original for x in set(t))
    assert sum(c.size for c in clusters) == len(original)
    for item, n in truth.items():
        # every occurrence is published in a chunk or stands behind a term-chunk entry
        assert published[item] + term_entries[item] * (k - 1) >= n
        assert published[item] <= n and (published[item] == n or term_entries[item] > 0)
    assert set(published) | set(term_entries) <= set(truth)


def item_frequencies(clusters) -> Counter:
    out: Counter = Counter()
    for c in _walk(clusters):
        for chunk in c.record_chunks:
            for sub in chunk:
                out.update(sub)
        out.update(c.term_chunk)
    return out


GROCERY = [
    {"milk", "beer", "diapers"},
    {"milk", "bread"},
    {"milk", "beer"},
    {"bread", "butter"},
    {"milk", "bread", "butter"},
    {"beer", "diapers"},
    {"milk"},
    set(),
] * 3


def test_release_shape_and_independent_recount():
    rel = transactions.disassociate(GROCERY, k=3, m=2, max_cluster_size=8)
    assert rel.checks.passed and [c.passed for c in rel.checks.checks] == [True, True]
    assert all(isinstance(c, transactions.Cluster) for c in rel.data)
    recount(rel.data, 3, 2, GROCERY)
    model = rel.models[0]
    assert isinstance(model, transactions.ChunkKmAnonymity) and isinstance(model, PrivacyModel)
    assert model.check(rel.data).passed
    assert rel.info["input"]["empty_transactions"] == 3
    assert rel.parameters["algorithm"] == "disassociation"
    assert "source_index" not in rel.to_json()
    for key in ("published_share", "top_itemsets", "frequent_itemsets"):
        assert key in rel.utility
    assert rel.risk["after"]["knowing_2_items"]["share_below_k"] == 0.0


def test_source_index_links_every_subrecord_to_its_input_row():
    rel = transactions.disassociate(GROCERY, k=3, m=2, measures=False)
    chunks = [chunk for c in _walk(rel.data) for chunk in c.record_chunks]
    assert len(chunks) == len(rel.source_index)
    for chunk, link in zip(chunks, (x for links in rel.source_index for x in links)):
        assert len(chunk) == len(link)
        for sub, row in zip(chunk, link.tolist()):
            assert sub <= GROCERY[row]


def test_reconstruction_keeps_published_item_frequencies():
    rel = transactions.disassociate(GROCERY, k=3, m=2, max_cluster_size=8, measures=False)
    rec = transactions.reconstruct(rel, seed=5)
    assert len(rec) == len(GROCERY)
    assert Counter(x for t in rec for x in t) == item_frequencies(rel.data)
    assert transactions.reconstruct(rel, seed=5) == rec
    # a JSON-like dict release reconstructs the same way
    assert transactions.reconstruct([c.to_dict() for c in rel.data], seed=5) == rec


baskets = st.lists(
    st.sets(st.integers(min_value=0, max_value=12), max_size=6), min_size=1, max_size=60
)


@pytest.mark.filterwarnings("ignore:k = 1 gives no protection")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=baskets, k=st.integers(1, 4), m=st.integers(1, 3), mcs=st.integers(4, 20))
def test_property_any_baskets(data, k, m, mcs):
    if k > len(data):
        with pytest.raises(InfeasibleError):
            transactions.disassociate(data, k=k, m=m, measures=False)
        return
    rel = transactions.disassociate(data, k=k, m=m, max_cluster_size=max(mcs, k), measures=False)
    assert rel.checks.passed
    recount(rel.data, k, m, data)
    rec = transactions.reconstruct(rel, seed=0)
    assert Counter(x for t in rec for x in t) == item_frequencies(rel.data)


def test_bad_parameters_are_input_errors():
    for kwargs, name in (
        ({"k": 0, "m": 2}, "k"),
        ({"k": 2, "m": 0}, "m"),
        ({"k": 2, "m": 9}, "m"),
        ({"k": 2.5, "m": 2}, "k"),
        ({"k": 5, "m": 2, "max_cluster_size": 3}, "max_cluster_size"),
        ({"k": 2, "m": 2, "seed": -1}, "seed"),
    ):
        with pytest.raises(InputError, match=name):
            transactions.disassociate(GROCERY, **kwargs)
    with pytest.raises(InfeasibleError, match="k=30"):
        transactions.disassociate(GROCERY, k=30, m=2)
    with pytest.raises(InputError, match="no transactions"):
        transactions.disassociate([], k=2, m=2)
    with pytest.raises(InputError):
        transactions.disassociate(["abc"], k=1, m=1)


def test_wide_baskets_are_bounded():
    wide = [set(range(50))] * 3
    with pytest.raises(InputError, match="transaction 1 has 50 items"):
        transactions.disassociate(wide, k=2, m=2, max_basket_size=20)
    rel = transactions.disassociate(wide, k=2, m=2, max_basket_size=50, measures=False)
    assert rel.checks.passed


def test_verifier_catches_a_tampered_release():
    rel = transactions.disassociate(GROCERY, k=3, m=2, max_cluster_size=8, measures=False)
    leaf = next(c for c in _walk(rel.data) if not c.clusters and c.record_chunks)
    chunk = leaf.record_chunks[0]
    item = next(iter(next(s for s in chunk if s)))
    chunk[0] = chunk[0] | {item, "rare"}
    checks = rel.verify()
    assert not checks.passed
    leaf.record_chunks[0] = chunk[:-1]
    assert not rel.verify().checks[0].passed


# ----------------------------------------------------------------- long DataFrames (issue 11)
LONG = pd.DataFrame(
    {
        "order_id": [1, 1, 2, 2, 3, 4, 4, 5],
        "product": ["milk", "beer", "milk", "bread", "milk", "beer", "milk", "bread"],
        "qty": [1, 2, 1, 1, 3, 1, 1, 2],
    }
)


def test_from_long_groups_by_transaction():
    baskets = transactions.from_long(LONG, transaction="order_id", item="product")
    assert baskets == [{"milk", "beer"}, {"milk", "bread"}, {"milk"}, {"beer", "milk"}, {"bread"}]
    two = LONG[["order_id", "product"]]
    assert transactions.from_long(two) == baskets
    assert transactions.from_long(two, item="product") == baskets


def test_long_frames_are_accepted_by_the_anonymizers():
    two = LONG[["order_id", "product"]]
    rel = transactions.disassociate(two, k=2, m=1, measures=False)
    assert rel.n_individuals == 5
    rel = transactions.disassociate(
        LONG, k=2, m=1, transaction_col="order_id", item_col="product", measures=False
    )
    assert rel.n_individuals == 5
    km = transactions.km_anonymize(two, k=2, m=1, measures=False)
    assert km.n_individuals == 5
    km = transactions.km_anonymize(
        LONG, k=2, m=1, transaction_col="order_id", item_col="product", measures=False
    )
    assert km.n_individuals == 5
    kk = transactions.k_anonymize(two, k=2, measures=False)
    assert kk.n_individuals == 5


def test_long_frame_bad_data_names_the_column():
    with pytest.raises(InputError, match="transaction_col"):
        transactions.from_long(LONG)
    with pytest.raises(InputError, match="nope"):
        transactions.from_long(LONG, transaction="nope", item="product")
    mixed = pd.DataFrame({"t": [1, 2], "item": [1, "a"]})
    with pytest.raises(InputError, match="'item'.*mix integers and strings"):
        transactions.from_long(mixed)
    missing = pd.DataFrame({"t": [1, None], "item": ["a", "b"]})
    with pytest.raises(InputError, match="'t' has a missing value") as err:
        transactions.from_long(missing)
    assert err.value.row == 1  # the index label: missing.loc[1]
    floats = pd.DataFrame({"t": [1, 2], "item": [1.5, 2.0]})
    with pytest.raises(InputError, match="'item'"):
        transactions.from_long(floats)
    with pytest.raises(InputError, match="DataFrame"):
        transactions.from_long([{"a"}])


def test_a_joint_cluster_carried_up_a_level_keeps_its_shared_chunks():
    # 72 clusters, fan-out 8: 9 joint clusters, of which the 9th is carried up alone to the
    # next level; its shared chunk must not be recomputed from what is left there
    # (regression: its chunks were overwritten and the occurrences placed in them lost)
    import numpy as np

    from transactions._data import encode_baskets
    from transactions._disassociation import build_tree

    data = []
    for c in range(72):
        data.append({c, 1000 + c // 8} | ({5000} if c == 71 else set()))
        data.append({c})
    b = encode_baskets(data)
    clusters = [np.array([2 * c, 2 * c + 1]) for c in range(72)]
    nodes, _top, owner = build_tree(b, clusters, 2, 2, fanout=8)
    placed = owner[:, 0] >= 0
    assert placed.sum() == b.nnz - 1  # only item 5000 stays a term item
    for node_id in np.unique(owner[placed, 0]).tolist():
        assert nodes[node_id].chunks, node_id
    rel = transactions.disassociate(data, k=2, m=2, max_cluster_size=2, measures=False)
    assert rel.checks.passed
