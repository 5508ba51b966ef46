"""The verifier's classes of a published table equal the core's group-by partition."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon import Partition
from tabular._verify import published_classes

_VALUES = st.sampled_from(["a", "b", "*", "10-19", 1, 2, 1.5, None, np.nan, True])


@st.composite
def _tables(draw):
    n = draw(st.integers(0, 30))
    q = draw(st.integers(1, 4))
    columns = {f"c{j}": draw(st.lists(_VALUES, min_size=n, max_size=n)) for j in range(q)}
    frame = pd.DataFrame(columns, dtype=object)
    if q > 1 and draw(st.booleans()):
        frame["c1"] = frame["c1"].astype(str).astype("category")
    return frame


@settings(max_examples=150, deadline=None)
@given(_tables())
def test_published_classes_equal_groupby_partition(frame):
    columns = list(frame.columns)
    ours = published_classes(frame, columns)
    expected = Partition.from_keys(frame[columns])
    np.testing.assert_array_equal(ours.labels, expected.labels)
    np.testing.assert_array_equal(ours.sizes, expected.sizes)


def test_published_classes_group_rows_with_equal_values():
    frame = pd.DataFrame({"age": ["20-29", "30-39", "20-29", None], "sex": ["*", "*", "*", None]})
    assert published_classes(frame, ["age", "sex"]).labels.tolist() == [0, 1, 0, 2]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-1, 3), st.sampled_from(["x", "y", "z"])), min_size=1),
)
def test_model_check_tables_equal_the_partition_contingency(rows):
    from structanon.models import _contingency
    from structanon.partition import encode_values

    labels = np.array([r[0] for r in rows])
    if (labels >= 0).any():  # group ids 0..g-1 in use (renumber the kept labels densely)
        kept = labels >= 0
        labels[kept] = np.unique(labels[kept], return_inverse=True)[1]
    partition = Partition(labels)
    sensitive = np.array([r[1] for r in rows], dtype=object)
    counts, domain, everyone = _contingency(partition, sensitive)
    expected, expected_domain = partition.contingency(sensitive)
    np.testing.assert_array_equal(counts, expected)
    np.testing.assert_array_equal(domain, expected_domain)
    codes, _ = encode_values(sensitive)
    np.testing.assert_array_equal(everyone, np.bincount(codes, minlength=domain.size))
