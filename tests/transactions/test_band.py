from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transactions
from structanon.errors import InfeasibleError, InputError


def independent_band_check(original, data, sensitive, p, source_index):
    assert sorted(source_index) == list(range(len(original)))
    original = [original[i] for i in source_index]  # published order
    group = list(data["group"])
    sizes = Counter(g for g in group if g >= 0)
    true_counts: dict = {}
    for t, g in zip(original, group):
        if g < 0:
            continue
        for s in t & sensitive:
            true_counts[(g, s)] = true_counts.get((g, s), 0) + 1
    published = {
        (g, s): c for g, summary in enumerate(data["sensitive_counts"]) for s, c in summary.items()
    }
    assert published == true_counts
    for (g, _s), c in true_counts.items():
        assert c * p <= sizes[g]
    for t, q, g in zip(original, data["qi"], group):
        if g < 0:
            assert q is None
        else:
            assert q == frozenset(t - sensitive)


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.sets(st.integers(0, 15), max_size=5), min_size=1, max_size=60),
    p=st.integers(2, 4),
    sens=st.sets(st.integers(0, 15), min_size=1, max_size=3),
)
def test_band_property(data, p, sens):
    n = len(data)
    freq = Counter(x for t in data for x in t)
    if any(freq[s] == 0 for s in sens):
        with pytest.raises(InputError, match="do not occur"):
            transactions.band_matrix(data, sens, p=p, measures=False)
        return
    if any(freq[s] * p > n for s in sens):
        with pytest.raises(InfeasibleError):
            transactions.band_matrix(data, sens, p=p, measures=False)
        return
    rel = transactions.band_matrix(data, sens, p=p, measures=False)
    independent_band_check(data, rel.data, sens, p, rel.source_index)
    assert rel.suppressed == int((np.asarray(rel.data["group"]) < 0).sum())


def test_band_on_retail(retail_head):
    sens = {110, 271, 413}
    rel = transactions.band_matrix(retail_head, sens, p=5, seed=0)
    independent_band_check(retail_head, rel.data, sens, 5, rel.source_index)
    assert rel.risk["after"]["max_probability"] <= 0.2 + 1e-12
    assert rel.risk["before"]["max_probability"] > 0.2
    assert rel.utility["count_query_error"]["queries"] > 0


def test_band_errors():
    with pytest.raises(InputError, match="p must be an integer >= 2, got 1"):
        transactions.band_matrix([{1}], [1], p=1)
    with pytest.raises(InputError):
        transactions.band_matrix([{1}], "1", p=2)
    with pytest.raises(InfeasibleError, match="sensitive item 1"):
        transactions.band_matrix([{1}, {2}], [1], p=3)


def test_absent_sensitive_items_refused():
    data = [{1, 9}, {2}, {3}, {4}]
    with pytest.raises(InputError, match="1 sensitive item.*zzz"):
        transactions.band_matrix(data, [9, "zzz"], p=2, measures=False)
