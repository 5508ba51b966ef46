"""Class tables rolled up from finer cached tables equal those computed from the records."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon.partition import encode_values
from tabular._lattice import EncodedTable
from tabular._optimal import _Lattice
from tests.tabular.test_optimal import random_hierarchy


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sensitive", [True, False])
def test_rolled_up_tables_equal_tables_from_the_records(seed, sensitive):
    rng = np.random.default_rng(seed)
    hierarchies = [
        random_hierarchy("a", 6, 3),
        random_hierarchy("b", 5, 2),
        random_hierarchy("c", 3, 1),
    ]
    n = 300
    columns = [rng.integers(0, h.leaves.size, n) for h in hierarchies]
    sens, domain = encode_values(rng.integers(0, 4, n)) if sensitive else (None, np.zeros(0))
    rolled = EncodedTable(columns, hierarchies, sens, domain.size)
    direct = EncodedTable(columns, hierarchies, sens, domain.size, cache_budget=0)
    lattice = _Lattice(rolled.heights)
    order = rng.permutation(lattice.n_nodes)  # any visiting order: sources vary
    for i in np.concatenate([np.argsort(lattice.level_sum, kind="stable"), order]):
        node = lattice.node(int(i))
        a, b = rolled.classes(node), direct.classes(node)
        np.testing.assert_array_equal(a.codes, b.codes)
        np.testing.assert_array_equal(a.sizes, b.sizes)
        if sensitive:
            np.testing.assert_array_equal(a.contingency, b.contingency)
        else:
            assert a.contingency is None and b.contingency is None
    assert rolled.rollups > 0 and direct.rollups == 0


def test_class_tables_equal_a_pandas_groupby_of_the_generalized_records():
    rng = np.random.default_rng(7)
    hierarchies = [random_hierarchy("a", 6, 3), random_hierarchy("b", 5, 2)]
    n = 200
    columns = [rng.integers(0, h.leaves.size, n) for h in hierarchies]
    sens, domain = encode_values(rng.integers(0, 3, n))
    enc = EncodedTable(columns, hierarchies, sens, domain.size)
    lattice = _Lattice(enc.heights)
    for i in np.argsort(lattice.level_sum, kind="stable"):
        node = lattice.node(int(i))
        frame = pd.DataFrame(
            {
                "a": hierarchies[0].node_codes[columns[0], node[0]],
                "b": hierarchies[1].node_codes[columns[1], node[1]],
                "s": sens,
            }
        )
        expected = pd.crosstab([frame["a"], frame["b"]], frame["s"]).sort_index()
        table = enc.classes(node)
        np.testing.assert_array_equal(table.codes, np.array(expected.index.tolist()))
        np.testing.assert_array_equal(table.contingency, expected.to_numpy())
        np.testing.assert_array_equal(table.sizes, expected.to_numpy().sum(axis=1))
        classes, same = enc.record_classes(node)
        np.testing.assert_array_equal(same.codes[classes], frame[["a", "b"]].to_numpy())


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("budget", [0, 40, 150, 4_000_000])
def test_the_flag_of_cached_finer_nodes_picks_the_source_a_full_scan_picks(seed, budget):
    """The per-node flag (some node at or below was cached) only skips scans that find
    nothing: over top-down, bottom-up and random visits, with evictions (small budgets),
    every source equals that of a scan of every cached node, and so does every table."""
    rng = np.random.default_rng(seed)
    hierarchies = [
        random_hierarchy("a", 6, 3),
        random_hierarchy("b", 5, 2),
        random_hierarchy("c", 3, 1),
    ]
    n = 120
    columns = [rng.integers(0, h.leaves.size, n) for h in hierarchies]
    sens, domain = encode_values(rng.integers(0, 4, n))
    flagged = EncodedTable(columns, hierarchies, sens, domain.size, cache_budget=budget)
    scanned = EncodedTable(columns, hierarchies, sens, domain.size, cache_budget=budget)
    assert flagged._finer_seen is not None
    scanned._finer_seen = None
    lattice = _Lattice(flagged.heights)
    by_level = np.argsort(lattice.level_sum, kind="stable")
    visits = np.concatenate([by_level[::-1], rng.permutation(lattice.n_nodes), by_level])
    for i in visits:
        node = lattice.node(int(i))
        if flagged.cached(node) is None:
            assert flagged._source(node) == scanned._source(node)
        a, b = flagged.classes(node), scanned.classes(node)
        np.testing.assert_array_equal(a.sizes, b.sizes)
        np.testing.assert_array_equal(a.contingency, b.contingency)
    assert flagged.rollups == scanned.rollups


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(2, 5),
    st.booleans(),
    st.lists(st.integers(0, 4), min_size=2, max_size=4),
)
def test_tables_rolled_up_through_their_keys_equal_a_pandas_recount(seed, q, sensitive, steps):
    """A chain of nodes, each a generalization of the previous one on one or more
    attributes: every table after the first is rolled up from the one before it (through
    the classes' keys when that table was numbered per attribute), and each equals a
    pandas crosstab of the generalized records."""
    rng = np.random.default_rng(seed)
    hierarchies = [
        random_hierarchy(f"a{j}", int(rng.integers(2, 9)), int(rng.integers(1, 4)))
        for j in range(q)
    ]
    n = 150
    columns = [rng.integers(0, h.leaves.size, n) for h in hierarchies]
    sens, domain = encode_values(rng.integers(0, 4, n)) if sensitive else (None, np.zeros(0))
    enc = EncodedTable(columns, hierarchies, sens, domain.size)
    node = [0] * q
    for step in steps:
        for j in rng.permutation(q)[: 1 + step % q]:
            node[j] = min(node[j] + 1 + step // q, hierarchies[j].height)
        table = enc.classes(tuple(node))
        frame = pd.DataFrame(
            {
                f"a{j}": h.node_codes[c, lv]
                for j, (h, c, lv) in enumerate(zip(hierarchies, columns, node))
            }
        )
        frame["s"] = sens if sensitive else 0
        expected = pd.crosstab([frame[f"a{j}"] for j in range(q)], frame["s"]).sort_index()
        codes = np.array(expected.index.tolist()).reshape(-1, q)
        np.testing.assert_array_equal(table.codes, codes)
        np.testing.assert_array_equal(table.sizes, expected.to_numpy().sum(axis=1))
        if sensitive:
            np.testing.assert_array_equal(table.contingency, expected.to_numpy())
    assert enc.rollups <= len(steps)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3))
def test_a_shifted_key_is_the_key_of_the_generalized_codes(seed, q):
    """``_shifted_key`` against the mixed-radix key of each class's codes generalized to
    the coarser node, built digit by digit in plain Python."""
    rng = np.random.default_rng(seed)
    hierarchies = [
        random_hierarchy(f"a{j}", int(rng.integers(2, 9)), int(rng.integers(1, 4)))
        for j in range(q)
    ]
    columns = [rng.integers(0, h.leaves.size, 80) for h in hierarchies]
    enc = EncodedTable(columns, hierarchies)
    src = tuple(int(rng.integers(0, h.height + 1)) for h in hierarchies)
    node = tuple(int(rng.integers(lv, h.height + 1)) for lv, h in zip(src, hierarchies))
    table = enc.classes(src)
    assert table.dense is not None  # numbered per attribute (fewer than four QIs)
    radices = [h.n_nodes(lv) for h, lv in zip(hierarchies, node)]
    key = enc._shifted_key(src, table.dense, node, radices)
    expected = []
    for codes in table.codes.tolist():
        value = 0
        for j, code in enumerate(codes):
            h = hierarchies[j]
            leaf = int(np.flatnonzero(h.node_codes[:, src[j]] == code)[0])
            value = value * radices[j] + int(h.node_codes[leaf, node[j]])
        expected.append(value)
    assert key.tolist() == expected
