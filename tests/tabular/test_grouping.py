"""Grouping without sorting every row gives the groups of a plain recount.

* ``numbered_keys`` (presence mask or hash table), ``dense_groups`` and ``grouped_rows``
  (keys re-numbered in stages) number the groups as the rank of each row among the sorted
  distinct keys / rows, counted in plain Python, and ``grouped_rows`` gives those rows;
* ``AttributeBlocks`` numbers each block's values the same way;
* ``EncodedTable``: its distinct rows, their weights and every record's row match a plain
  Python count, and its class tables (built through attribute blocks, counted over the key
  span or numbered through the presence mask) equal a pandas groupby of the generalized
  records, in lexicographic order of the codes.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular import _lattice
from tabular._grouping import (
    AttributeBlocks,
    contiguous_blocks,
    dense_groups,
    grouped_rows,
    numbered_keys,
)
from tabular._lattice import EncodedTable
from tabular._optimal import _Lattice
from tests.tabular.test_optimal import random_hierarchy


def plain_ranks(rows: list) -> tuple[list[int], list]:
    """Each row's rank among the sorted distinct rows, counted in plain Python."""
    distinct = sorted(set(rows))
    where = {row: i for i, row in enumerate(distinct)}
    return [where[row] for row in rows], distinct


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 2**40), min_size=0, max_size=80),
    st.sampled_from([None, "tight", "wide"]),
    st.integers(0, 6),
)
def test_numbered_keys_rank_the_distinct_keys(values, span, shift):
    # small keys (a presence mask) and keys up to 2**40 (a hash table)
    keys = np.array([v >> (34 + shift) if shift else v for v in values], dtype=np.int64)
    bound = None
    if span is not None and keys.size:
        bound = int(keys.max()) + 1 if span == "tight" else 2 * int(keys.max()) + 10
    ids, distinct = numbered_keys(keys, bound)
    expected_ids, expected_distinct = plain_ranks(keys.tolist())
    assert ids.tolist() == expected_ids
    assert distinct.tolist() == expected_distinct
    assert ids.dtype == np.int64 and distinct.dtype == np.int64


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_dense_groups_number_rows_in_lexicographic_order(data):
    q = data.draw(st.integers(1, 5))
    radices = data.draw(
        st.lists(st.sampled_from([1, 2, 3, 7, 50, 2**20, 2**40]), min_size=q, max_size=q)
    )
    n = data.draw(st.integers(1, 60))
    columns = [
        np.array(data.draw(st.lists(st.integers(0, r - 1), min_size=n, max_size=n)), np.int64)
        for r in radices
    ]
    ids, m = dense_groups(columns, radices)
    rows = list(zip(*(c.tolist() for c in columns)))
    expected, distinct = plain_ranks(rows)
    assert ids.tolist() == expected
    assert m == len(distinct)
    same, codes = grouped_rows(columns, radices)
    assert same.tolist() == expected
    assert [tuple(r) for r in codes.tolist()] == distinct
    assert codes.shape == (len(distinct), q)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_grouped_rows_over_many_stages(data):
    """Many columns of a few values each: the key is re-numbered at several stages (its
    span passes twice the rows), and the groups' columns are decoded through all of them."""
    q = data.draw(st.integers(4, 12))
    radices = data.draw(st.lists(st.integers(2, 9), min_size=q, max_size=q))
    n = data.draw(st.integers(1, 40))
    columns = [
        np.array(data.draw(st.lists(st.integers(0, r - 1), min_size=n, max_size=n)), np.int64)
        for r in radices
    ]
    ids, codes = grouped_rows(columns, radices)
    expected, distinct = plain_ranks(list(zip(*(c.tolist() for c in columns))))
    assert ids.tolist() == expected
    assert [tuple(r) for r in codes.tolist()] == distinct


def test_dense_groups_survive_keys_past_int64():
    rng = np.random.default_rng(1)
    columns = [rng.integers(0, 2**40, size=300) for _ in range(3)]
    columns = [np.concatenate([c, c[:50]]) for c in columns]  # some rows repeat
    ids, m = dense_groups(columns, [2**40] * 3)
    expected, distinct = plain_ranks(list(zip(*(c.tolist() for c in columns))))
    assert ids.tolist() == expected and m == len(distinct)
    same, codes = grouped_rows(columns, [2**40] * 3)
    assert same.tolist() == expected and [tuple(r) for r in codes.tolist()] == distinct


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 5))
def test_contiguous_blocks_cover_the_attributes_in_order(q, size):
    blocks = contiguous_blocks(q, size)
    assert [j for b in blocks for j in b] == list(range(q))
    assert all(b for b in blocks)
    assert max(len(b) for b in blocks) - min(len(b) for b in blocks) <= 1


def _random_table(rng, q, n, sensitive):
    shapes = [(int(rng.integers(2, 12)), int(rng.integers(1, 4))) for _ in range(q)]
    hierarchies = [random_hierarchy(f"a{j}", leaves, h) for j, (leaves, h) in enumerate(shapes)]
    # few values per attribute, so that rows repeat and classes merge
    columns = [rng.integers(0, h.leaves.size, n) for h in hierarchies]
    sens = rng.integers(0, 4, n) if sensitive else None
    return hierarchies, columns, sens


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(4, 7))
def test_attribute_blocks_number_each_block_like_a_recount(seed, q):
    rng = np.random.default_rng(seed)
    hierarchies, columns, _ = _random_table(rng, q, 150, False)
    enc = EncodedTable(columns, hierarchies)
    blocks = AttributeBlocks(enc.base_leaf_codes, enc.maps, enc.n_nodes, contiguous_blocks(q))
    lattice = _Lattice(enc.heights)
    for i in rng.choice(lattice.n_nodes, size=min(lattice.n_nodes, 12), replace=False):
        node = lattice.node(int(i))
        ids, radices, codes = blocks.digits(node)
        for b, attrs in enumerate(blocks.blocks):
            rows = list(zip(*(enc.base_column(j, node[j]).tolist() for j in attrs)))
            expected, distinct = plain_ranks(rows)
            assert ids[b].tolist() == expected
            assert radices[b] == len(distinct)
            assert [tuple(r) for r in codes[b].tolist()] == distinct


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 7), st.booleans())
def test_encoded_rows_are_the_sorted_distinct_records(seed, q, sensitive):
    rng = np.random.default_rng(seed)
    hierarchies, columns, sens = _random_table(rng, q, 200, sensitive)
    enc = EncodedTable(columns, hierarchies, sens, 4 if sensitive else 0)
    records = list(zip(*(c.tolist() for c in columns), *([sens.tolist()] if sensitive else [])))
    expected, distinct = plain_ranks(records)
    assert enc.record_base.tolist() == expected
    rows = [tuple(r) for r in enc.base_leaf_codes.tolist()]
    if sensitive:
        rows = [(*r, s) for r, s in zip(rows, enc.base_sensitive.tolist())]
    assert rows == distinct
    counts = pd.Series(expected).value_counts().sort_index()
    assert enc.base_weight.tolist() == counts.tolist()


def _expected_table(hierarchies, columns, sens, node):
    frame = pd.DataFrame(
        {f"a{j}": h.node_codes[c, node[j]] for j, (h, c) in enumerate(zip(hierarchies, columns))}
    )
    names = list(frame.columns)
    if sens is None:
        sizes = frame.groupby(names).size().sort_index()
        return np.array(sizes.index.tolist()).reshape(-1, len(names)), sizes.to_numpy(), None
    frame["s"] = sens
    cross = pd.crosstab([frame[c] for c in names], frame["s"]).reindex(
        columns=range(4), fill_value=0
    )
    cross = cross.sort_index()
    codes = np.array(cross.index.tolist()).reshape(-1, len(names))
    return codes, cross.to_numpy().sum(axis=1), cross.to_numpy()


@pytest.mark.parametrize("count_factor", [0, 8, 10**6])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), q=st.integers(4, 6), sensitive=st.booleans())
def test_class_tables_through_blocks_equal_a_pandas_groupby(seed, q, sensitive, count_factor):
    """Counted over the key span (large factor), through the presence mask (factor 0), or
    either by span (the default); nodes in a random order (roll-ups vary too)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_lattice, "_COUNT_FACTOR", count_factor)
        _check_tables(seed, q, sensitive)


def _check_tables(seed, q, sensitive):
    rng = np.random.default_rng(seed)
    hierarchies, columns, sens = _random_table(rng, q, 120, sensitive)
    enc = EncodedTable(columns, hierarchies, sens, 4 if sensitive else 0)
    assert enc._blocks is not None
    lattice = _Lattice(enc.heights)
    order = rng.permutation(lattice.n_nodes)[:40]
    for i in np.concatenate([order, [lattice.n_nodes - 1, 0]]):
        node = lattice.node(int(i))
        codes, sizes, contingency = _expected_table(hierarchies, columns, sens, node)
        table = enc.classes(node)
        np.testing.assert_array_equal(table.codes, codes)
        np.testing.assert_array_equal(table.sizes, sizes)
        if sensitive:
            np.testing.assert_array_equal(table.contingency, contingency)
        else:
            assert table.contingency is None
        classes, same = enc.record_classes(node)
        np.testing.assert_array_equal(
            same.codes[classes],
            np.stack(
                [h.node_codes[c, node[j]] for j, (h, c) in enumerate(zip(hierarchies, columns))],
                axis=1,
            ),
        )


def test_weighted_rows_give_the_records_class_sizes():
    """``sizes_only`` keeps each distinct row's weight: the tables through blocks count
    records, not rows."""
    rng = np.random.default_rng(3)
    hierarchies, columns, sens = _random_table(rng, 5, 300, True)
    enc = EncodedTable(columns, hierarchies, sens, 4).sizes_only()
    assert enc._blocks is not None
    lattice = _Lattice(enc.heights)
    for i in range(0, lattice.n_nodes, 7):
        node = lattice.node(i)
        codes, sizes, _ = _expected_table(hierarchies, columns, None, node)
        table = enc.classes(node)
        np.testing.assert_array_equal(table.codes, codes)
        np.testing.assert_array_equal(table.sizes, sizes)


def test_an_encoded_table_is_freed_without_the_cycle_collector():
    """The attribute blocks and the class tables hold no reference back to the table, so
    a search's arrays go as soon as its table does (a cycle would keep them until the
    cycle collector runs, which numpy-heavy work rarely triggers)."""
    rng = np.random.default_rng(5)
    hierarchies, columns, sens = _random_table(rng, 6, 200, True)
    gc.disable()
    try:
        enc = EncodedTable(columns, hierarchies, sens, 4)
        assert enc._blocks is not None
        lattice = _Lattice(enc.heights)
        tables = [enc.classes(lattice.node(i)) for i in range(0, lattice.n_nodes, 5)]
        assert all(t.codes.shape[1] == 6 for t in tables)
        ref = weakref.ref(enc)
        del enc
        assert ref() is None
    finally:
        gc.enable()
