"""Datafly: Sweeney's greedy full-domain baseline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tabular
from structanon import Hierarchy, InfeasibleError
from structanon.models import DistinctLDiversity, KAnonymity
from tabular._datafly import datafly
from tabular._lattice import EncodedTable


def test_generalizes_the_attribute_with_most_distinct_values_first():
    wide = Hierarchy([[f"v{i}", f"g{i // 4}", "*"] for i in range(8)], name="wide")
    narrow = Hierarchy([["a", "*"], ["b", "*"]], name="narrow")
    df = pd.DataFrame({"wide": [f"v{i % 8}" for i in range(16)], "narrow": ["a", "b"] * 8})
    enc = EncodedTable([wide.encode(df["wide"]), narrow.encode(df["narrow"])], [wide, narrow])
    outcome, steps = datafly(enc, [KAnonymity(4)], 0)
    # 8 distinct values beat 2: "wide" goes first, then (2 vs 2: the first column) again
    assert steps[0] == 0
    sizes = outcome.table.sizes[outcome.ok]
    assert sizes.min() >= 4 and outcome.suppressed == 0


def test_datafly_release_on_adult_sample(adult_sample, adult_sample_hierarchies):
    release = tabular.anonymize(
        adult_sample,
        adult_sample_hierarchies,
        "occupation",
        [KAnonymity(10), DistinctLDiversity(2)],
        algorithm="datafly",
        suppression_limit=0.02,
        measures=False,
    )
    qis = list(adult_sample_hierarchies)
    sizes = release.data.groupby(qis).size()
    assert sizes.min() >= 10
    assert release.data.groupby(qis)["occupation"].nunique().min() >= 2
    assert release.suppressed <= 0.02 * len(adult_sample)
    assert release.info["datafly_steps"]
    assert release.parameters["metric"] is None


def test_datafly_is_never_better_than_optimal_on_dm_star(adult_sample, adult_sample_hierarchies):
    args = (adult_sample, adult_sample_hierarchies, "occupation", [KAnonymity(5)])
    greedy = tabular.anonymize(*args, algorithm="datafly", measures=False)
    best = tabular.anonymize(*args, algorithm="optimal", metric="discernibility", measures=False)
    qis = list(adult_sample_hierarchies)

    def dm(r):
        return int((r.data.groupby(qis).size().to_numpy().astype(np.int64) ** 2).sum())

    assert dm(best) <= dm(greedy)


def test_datafly_infeasible_when_the_whole_table_fails():
    h = Hierarchy([["a", "*"], ["b", "*"]], name="x")
    df = pd.DataFrame({"x": ["a", "b", "a"], "s": ["p", "p", "p"]})
    with pytest.raises(InfeasibleError):
        tabular.anonymize(df, {"x": h}, "s", [DistinctLDiversity(2)], algorithm="datafly")
