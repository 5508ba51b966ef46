"""Class tables rolled up from finer cached tables equal those computed from the records."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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
