"""The Arrow CSV writer of ``write_table``: the same bytes as ``DataFrame.to_csv``.

Each frame is written by ``write_table`` and by pandas itself (the reference the writer
promises to match); frames hold the cases where CSV writers differ: values needing
quotes, empty strings, missing values, categoricals of text and of integers, floats and
booleans (which the writer leaves to pandas), one column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon.io import _write_csv_arrow, write_table

TEXT = ["a", "b", "", "x y", "Zürich", "*", "20-29", 'q"uote', "a,b", "a;b", "tab\tx", "l\nb"]
KINDS = ["int", "text", "category", "int-category", "float", "bool"]


def _column(draw, kind: str, n: int):
    if kind == "int":
        return pd.Series(draw(st.lists(st.integers(-(2**40), 2**40), min_size=n, max_size=n)))
    if kind == "float":
        return pd.Series(
            draw(st.lists(st.sampled_from([0.5, 1e-5, 2.0, np.nan]), min_size=n, max_size=n))
        )
    if kind == "bool":
        return pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    values = draw(st.lists(st.sampled_from(TEXT + [None]), min_size=n, max_size=n))
    if kind == "int-category":
        numbers = draw(st.lists(st.integers(0, 99), min_size=n, max_size=n))
        return pd.Series(pd.Categorical(numbers))
    series = pd.Series(values, dtype=object)
    return series.astype("category") if kind == "category" else series


@st.composite
def frames(draw):
    n = draw(st.integers(0, 20))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4))
    return pd.DataFrame({f"c{j}": _column(draw, kind, n) for j, kind in enumerate(kinds)})


@settings(max_examples=200, deadline=None)
@given(frame=frames(), sep=st.sampled_from([",", ";", "\t", "|"]))
def test_same_bytes_as_pandas(tmp_path_factory, frame, sep):
    folder = tmp_path_factory.mktemp("w")
    write_table(frame, folder / "ours.csv", sep=sep)
    frame.to_csv(folder / "pandas.csv", sep=sep, index=False)
    assert (folder / "ours.csv").read_bytes() == (folder / "pandas.csv").read_bytes()


def test_the_arrow_writer_takes_plain_releases(tmp_path):
    frame = pd.DataFrame(
        {
            "age": pd.Categorical(["20-29", "*", "20-29"]),
            "zip": [1234, 5678, 91011],
            "job": ["nurse", None, "clerk"],
        }
    )
    assert _write_csv_arrow(frame, tmp_path / "a.csv", ",")
    assert (tmp_path / "a.csv").read_text() == frame.to_csv(index=False)
    for other in (
        frame.assign(job=["a,b", "c", "d"]),  # a value needing quotes
        frame.assign(f=[0.5, 1.0, np.nan]),  # floats
        frame[["age"]],  # one column
    ):
        assert not _write_csv_arrow(other, tmp_path / "b.csv", ",")
