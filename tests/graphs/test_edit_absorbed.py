"""Group values priced with the units pairing leaves over (:func:`graphs._edit._absorbed`)
and the per-group pricing it shares with the repair-aware values
(:func:`graphs._edit._priced_values`): the least-cost assignment against enumeration of
every assignment, the leftover counts against a recount with plain networkx."""

from __future__ import annotations

from collections import Counter
from unittest.mock import patch

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphs._edit as edit_module
from graphs._edit import (
    _absorbed,
    _add_among,
    _delete_among,
    _EditGraph,
    _priced_values,
    edit_anonymize,
)
from graphs._twosided import two_sided_sequence
from tests.graphs.test_edit_lp import HUB_CASES, hub_case


def _least_assignment(deg, target, values, cost):
    """Least total cost over every assignment of one value in ``[min, max]`` of its degrees
    to each group of ``target`` in ``values`` whose change keeps the parity of ``sum(target
    - deg)`` (the other groups unchanged); ``cost(v, t)`` prices node ``v`` at value ``t``.
    A DP over the groups and the parity of the change so far, every value of every group
    tried (``None`` when no assignment keeps the parity)."""
    parity = int((target - deg).sum()) % 2
    fixed = int((target - deg)[~np.isin(target, values)].sum()) % 2
    best = {fixed: 0.0}
    for x in values:
        members = np.flatnonzero(target == x)
        step: dict[int, float] = {}
        for q, so_far in best.items():
            for t in range(int(deg[members].min()), int(deg[members].max()) + 1):
                change = int((t - deg[members]).sum())
                total = so_far + sum(cost(int(v), t) for v in members)
                key = (q + change) % 2
                step[key] = min(step.get(key, np.inf), total)
        best = step
    return best.get(parity)


small_sequence = st.integers(4, 9).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 7), min_size=n, max_size=n),
        st.integers(2, 3),
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.integers(0, 20),
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_sequence)
def test_priced_values_is_the_least_cost_assignment(case):
    deg, k, a, s, seed = case
    deg, a, s = np.array(deg), np.array(a), np.array(s)
    if k > deg.size:
        return
    target, _ = two_sided_sequence(deg, k, seed=seed)
    values = np.unique(target[deg != target])

    def price(members, loss, gain):
        return 0.5 * (np.maximum(gain - s[members], 0) + np.maximum(loss - a[members], 0))

    def node_cost(v, t):
        return 0.5 * (max(t - deg[v] - s[v], 0) + max(deg[v] - t - a[v], 0))

    out = _priced_values(deg, target, values, price)
    if out is None:
        out = target
    else:  # same groups, one value each within its degrees, the same parity
        for x in values:
            members = target == x
            assert len(set(out[members].tolist())) == 1
            assert deg[members].min() <= out[members][0] <= deg[members].max()
        assert (out - deg).sum() % 2 == (target - deg).sum() % 2
    mine = sum(node_cost(v, int(out[v])) for x in values for v in np.flatnonzero(target == x))
    least = _least_assignment(deg, target, values, node_cost)
    assert least is not None  # the target itself keeps the parity
    assert abs(mine - least) < 1e-9


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**HUB_CASES)
def test_absorbed_prices_the_leftovers_recounted(n, p, h, k, seed):
    edges, size, _, deg, target = hub_case(n, p, h, k, seed)
    out = _absorbed(size, edges, deg, target, seed)
    # the leftovers of the same pairing, then a and s recounted on a networkx graph
    h_graph = _EditGraph(size, edges)
    rng = np.random.default_rng(seed)
    need = target - deg
    lose, gain = np.maximum(-need, 0), np.maximum(need, 0)
    _delete_among(h_graph, lose, rng)
    _add_among(h_graph, gain, rng)
    G = nx.Graph()
    G.add_nodes_from(range(size))
    G.add_edges_from(map(tuple, edges.tolist()))
    left_lose = {v for v in range(size) if lose[v] > 0}
    left_gain = {v for v in range(size) if gain[v] > 0}
    a = [len(left_lose & set(G[v])) for v in range(size)]
    s = [len(left_gain - set(G[v]) - {v}) for v in range(size)]

    def node_cost(v, t):
        return 0.5 * (max(t - deg[v] - s[v], 0) + max(deg[v] - t - a[v], 0))

    result = target if out is None else out
    if out is not None:
        assert (out - deg).sum() % 2 == (target - deg).sum() % 2 == 0
        assert min(Counter(out.tolist()).values()) >= k
    # the least cost under the recounted prices, found by the DP over every assignment
    values = np.unique(target[deg != target])
    after = sum(node_cost(v, int(result[v])) for v in range(size) if target[v] in set(values))
    assert abs(after - _least_assignment(deg, target, values, node_cost)) < 1e-9
    with patch.object(edit_module, "_LARGE", 0):  # the candidate runs on every graph
        add, rem, info = edit_anonymize(size, edges, k, seed=seed)
    H = nx.Graph(G)
    H.remove_edges_from(map(tuple, rem.tolist()))
    H.add_edges_from(map(tuple, add.tolist()))
    assert min(Counter(dict(H.degree()).values()).values()) >= k
    assert info["symmetric_difference"] == len(add) + len(rem)
