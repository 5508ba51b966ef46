"""Tests of cell-level local suppression (tabular/_suppression.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycanon import anonymity as pycanon

from structanon import InfeasibleError, InputError
from tabular._suppression import local_suppression


def min_class_size(df: pd.DataFrame, qis: list[str]) -> int:
    """Smallest group of identical QI values, "*" being an ordinary value."""
    return int(df.astype({c: object for c in qis}).groupby(qis, dropna=False).size().min())


def test_one_cell_per_violating_record_when_it_suffices():
    df = pd.DataFrame({"city": ["A", "A", "B", "C"], "sex": ["x"] * 4, "s": [1, 2, 3, 4]})
    out, cells = local_suppression(df, ["city", "sex"], 2)
    assert cells == 2
    assert out["city"].tolist() == ["A", "A", "*", "*"]
    assert out["sex"].tolist() == ["x"] * 4 and out["s"].tolist() == [1, 2, 3, 4]


def test_prefers_the_column_with_more_distinct_values():
    df = pd.DataFrame({"a": ["p", "q", "p", "q"], "b": ["1", "2", "3", "4"]})
    out, cells = local_suppression(df, ["a", "b"], 2)
    assert cells == 4 and out["b"].tolist() == ["*"] * 4 and out["a"].tolist() == df["a"].tolist()


def test_k_anonymous_table_is_unchanged():
    df = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "x", "y", "y"]}, index=[9, 8, 7, 6])
    out, cells = local_suppression(df, ["a", "b"], 2)
    assert cells == 0
    pd.testing.assert_frame_equal(out, df)


def test_lone_violator_takes_donors_from_a_class_with_surplus():
    df = pd.DataFrame({"a": ["p", "p", "p", "q"], "b": ["x", "x", "x", "y"]})
    out, cells = local_suppression(df, ["a", "b"], 2)
    assert min_class_size(out, ["a", "b"]) >= 2
    assert out.iloc[3].tolist() == ["*", "*"]
    assert (out == "*").all(axis=1).sum() == 2 and cells == 4


def test_lone_violator_with_no_surplus_takes_a_whole_class():
    df = pd.DataFrame({"a": ["p", "p", "q"]})
    out, cells = local_suppression(df, ["a"], 2)
    assert out["a"].tolist() == ["*", "*", "*"] and cells == 3


def test_existing_star_values_are_the_same_value():
    df = pd.DataFrame({"a": ["*", "*", "q", "r"], "b": ["x", "x", "x", "x"]})
    out, cells = local_suppression(df, ["a", "b"], 2)
    assert cells == 2 and out["a"].tolist() == ["*"] * 4


def test_numeric_columns_become_object_only_when_suppressed():
    df = pd.DataFrame({"a": [1, 1, 2], "b": [5, 5, 5]})
    out, _ = local_suppression(df, ["a", "b"], 3)
    assert out["a"].tolist() == ["*", "*", "*"] and out["b"].tolist() == [5, 5, 5]


def test_errors():
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(InfeasibleError):
        local_suppression(df, ["a"], 3)
    with pytest.raises(InputError, match="not in the table"):
        local_suppression(df, ["zz"], 1)
    with pytest.raises(InputError, match="k must"):
        local_suppression(df, ["a"], 0)
    with pytest.raises(InputError, match="DataFrame"):
        local_suppression([[1]], ["a"], 1)
    assert local_suppression(df.iloc[:0], ["a"], 5)[1] == 0


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 40), q=st.integers(1, 4), k=st.integers(1, 5))
def test_output_is_k_anonymous_and_only_violators_change(data, n, q, k):
    cols = [f"q{j}" for j in range(q)]
    values = {
        c: data.draw(st.lists(st.sampled_from(["a", "b", "c", "*"]), min_size=n, max_size=n))
        for c in cols
    }
    df = pd.DataFrame({**values, "s": np.arange(n)}, index=np.arange(n) * 2 + 1)
    if n < k:
        with pytest.raises(InfeasibleError):
            local_suppression(df, cols, k)
        return
    out, cells = local_suppression(df, cols, k)
    assert out.index.equals(df.index) and out["s"].equals(df["s"])
    assert min_class_size(out, cols) >= k
    assert pycanon.k_anonymity(out.reset_index(drop=True), cols) >= k
    changed = (out[cols].astype(object) != df[cols].astype(object)).to_numpy()
    assert cells == int(changed.sum())
    assert set(np.unique(out[cols].to_numpy()[changed]).tolist()) <= {"*"}
    sizes = df.groupby(cols)["s"].transform("size").to_numpy()
    safe = sizes >= k
    donors = changed[safe].any(axis=1)
    # records of k-anonymous classes change only as donors to the all-"*" group
    assert (out[cols].to_numpy()[safe][donors] == "*").all()
