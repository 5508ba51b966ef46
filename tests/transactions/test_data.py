from collections import Counter
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon.errors import InputError
from transactions._data import count_itemsets, decode_keys, encode_baskets


def test_encode_counts_duplicates_and_empties():
    b = encode_baskets([[3, 1, 3], [], (2,)])
    assert b.n == 3 and b.n_empty == 1 and b.n_duplicates == 1
    assert b.domain.tolist() == [1, 2, 3]
    assert b.codes.tolist() == [0, 2, 1]
    assert b.indptr.tolist() == [0, 2, 2, 3]


def test_encode_series_and_strings():
    b = encode_baskets(pd.Series([{"b", "a"}, {"a"}]))
    assert b.domain.tolist() == ["a", "b"] and b.nnz == 3


@pytest.mark.parametrize("bad", [["ab", "c"], [{1}, None], [{1.5}], [{1, "a"}], [{True}]])
def test_encode_rejects_bad_input(bad):
    with pytest.raises(InputError):
        encode_baskets(bad)


def test_encode_error_names_row():
    with pytest.raises(InputError, match="row 1"):
        encode_baskets([{1}, 7])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.integers(0, 12), max_size=7), max_size=25), st.integers(1, 3))
def test_count_itemsets_matches_brute_force(data, size):
    b = encode_baskets(data)
    base = max(b.domain.size, 1)
    keys, counts = count_itemsets(b.indptr, b.codes, size, base)
    got = {
        tuple(b.domain[c] for c in row): int(n)
        for row, n in zip(decode_keys(keys, size, base).tolist(), counts.tolist())
    }
    want = Counter()
    for t in data:
        want.update(combinations(sorted(t), size))
    assert got == dict(want)
    assert np.all(np.diff(keys) > 0)
