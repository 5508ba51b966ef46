"""Class tables rolled up from finer cached tables equal those computed from the records."""

from __future__ import annotations

import numpy as np
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
