from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transactions
from structanon.errors import InfeasibleError

baskets = st.lists(st.sets(st.integers(0, 25), max_size=6), min_size=1, max_size=50)


def _groups(published):
    return Counter(frozenset(str(x) for x in t) for t in published if t is not None)


@settings(max_examples=40, deadline=None)
@given(data=baskets, k=st.integers(1, 6), fanout=st.integers(2, 4))
def test_k_anonymity_property(data, k, fanout, checks):
    n_nonempty = sum(1 for t in data if t)
    if k > len(data) or 0 < n_nonempty < k:
        with pytest.raises(InfeasibleError):
            transactions.k_anonymize(data, k=k, fanout=fanout, measures=False)
        return
    rel = transactions.k_anonymize(data, k=k, fanout=fanout, measures=False)
    assert len(rel.data) == len(data)
    assert min(_groups(rel.data).values(), default=k) >= k
    n_empty = sum(1 for t in data if not t)
    expect_sup = n_empty if 0 < n_empty < k else 0
    assert rel.suppressed == expect_sup == sum(1 for t in rel.data if t is None)
    checks.check_covering(data, rel.data, checks.range_covers, rel.source_index)


def test_groceries_with_taxonomy(groceries, checks):
    rel = transactions.k_anonymize(groceries, k=3, hierarchy=checks.GROCERIES, seed=1)
    assert min(_groups(rel.data).values()) >= 3
    anc = checks.ancestors_from_dict(checks.GROCERIES)
    checks.check_covering(
        groceries, rel.data, lambda lab, x: lab == x or lab in anc[x], rel.source_index
    )
    assert rel.risk["after"]["share_below_k"] == 0


def test_partition_refines_beyond_root(retail_head):
    rel = transactions.k_anonymize(retail_head[:600], k=5, measures=False)
    assert rel.verify().passed
    assert 0 < rel.utility["ncp"] < 0.5
    assert rel.info["partition"]["groups"] > 1


def test_identical_transactions_stay_exact():
    data = [{1, 2}] * 5 + [{3, 4}] * 5
    rel = transactions.k_anonymize(data, k=5, fanout=2, measures=False)
    assert set(rel.data) == {frozenset({1, 2}), frozenset({3, 4})}
    assert rel.utility["ncp"] == 0.0
