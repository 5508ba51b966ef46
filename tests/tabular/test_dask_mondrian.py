"""Mondrian on Dask: top cuts from Dask aggregates, in-memory Mondrian per leaf."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tabular
from structanon import Hierarchy
from structanon.errors import InputError
from structanon.models import DistinctLDiversity, KAnonymity
from tabular._mondrian import mondrian
from tabular.metrics import gcp

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

QIS = {"age": "numeric", "hours": "numeric", "sex": "set", "edu": "set"}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 4000
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, n),
            "hours": rng.integers(1, 99, n),
            "sex": rng.choice(["F", "M"], n),
            "edu": rng.choice(["HS", "BA", "MA", "PhD", "none"], n, p=[0.4, 0.3, 0.15, 0.05, 0.1]),
            "income": rng.choice(["<=50K", ">50K"], n),
        }
    )


def _rows(df: pd.DataFrame) -> Counter:
    return Counter(map(tuple, df[sorted(df.columns)].astype(str).to_numpy().tolist()))


def test_one_leaf_equals_the_in_memory_mondrian(client, table):
    want, _ = mondrian(table, QIS, None, [KAnonymity(5)])
    got = tabular.anonymize(
        dd.from_pandas(table, npartitions=3),
        QIS,
        models=[KAnonymity(5)],
        algorithm="mondrian",
        mondrian_options={"max_rows": 10_000},
    )
    assert got.info["top_level_leaves"] == 1
    assert _rows(got.data.compute()) == _rows(want)


def test_top_cuts_keep_k_and_the_gcp_close(client, table):
    r = tabular.anonymize(
        dd.from_pandas(table, npartitions=4),
        QIS,
        models=[KAnonymity(5)],
        algorithm="mondrian",
        mondrian_options={"max_rows": 1200},
    )
    out = r.data.compute()
    assert r.info["top_level_leaves"] >= 4 and r.info["largest_leaf"] <= 1200
    assert r.checks.passed and len(out) == len(table)
    # recount the classes independently: every published QI tuple >= k records
    counts = Counter(map(tuple, out[list(QIS)].to_numpy().tolist()))
    assert min(counts.values()) >= 5
    # every record is published once: the non-QI column keeps its counts
    assert Counter(out["income"]) == Counter(table["income"])
    in_memory, _ = mondrian(table, QIS, None, [KAnonymity(5)])
    assert r.utility["gcp"] == pytest.approx(gcp(out, QIS, len(table), table), rel=1e-9)
    assert r.utility["gcp"] <= 1.5 * gcp(in_memory, QIS, len(table), table)


def test_dask_table_bad_inputs(client, table):
    ddf = dd.from_pandas(table, npartitions=2)
    with pytest.raises(InputError, match="runs in memory only"):
        tabular.anonymize(ddf, QIS, models=[KAnonymity(5)], algorithm="optimal")
    with pytest.raises(InputError, match="k-anonymity models only"):
        tabular.anonymize(
            ddf, QIS, "income", models=[KAnonymity(5), DistinctLDiversity(2)], algorithm="mondrian"
        )
    with pytest.raises(InputError, match="spec must be"):
        tabular.anonymize(ddf, {"sex": "text"}, models=[KAnonymity(5)], algorithm="mondrian")
    bad = table.assign(age=table["age"].astype(object))
    bad.loc[17, "age"] = "old"
    with pytest.raises(InputError, match="non-numeric value") as err:
        tabular.anonymize(
            dd.from_pandas(bad, npartitions=2), QIS, models=[KAnonymity(5)], algorithm="mondrian"
        )
    assert err.value.column == "age"


def _dask_mondrian(table, qis, k, max_rows, **options):
    return tabular.anonymize(
        dd.from_pandas(table, npartitions=3),
        qis,
        models=[KAnonymity(k)],
        algorithm="mondrian",
        mondrian_options={"max_rows": max_rows, **options},
    )


@pytest.mark.parametrize(
    "options",
    [
        {},
        pytest.param({"criterion": "width", "relaxed": False}, marks=pytest.mark.slow),
        pytest.param({"remainder": False}, marks=pytest.mark.slow),
    ],
)
def test_top_cuts_follow_the_in_memory_rule_exactly(client, table, options):
    """Several top-level leaves, and still the in-memory Mondrian's release, row for row."""
    want, _ = mondrian(table, QIS, None, [KAnonymity(5)], **options)
    got = _dask_mondrian(table, QIS, 5, 300, **options)
    assert got.info["top_level_leaves"] >= 8 and got.info["largest_leaf"] <= 300
    assert _rows(got.data.compute()) == _rows(want)
    assert got.utility["gcp"] == pytest.approx(gcp(want, QIS, len(table), table), rel=1e-12)


def test_value_sets_only_are_cut_on_dask(client, table):
    qis = {"sex": "set", "edu": "set"}
    want, _ = mondrian(table, qis, None, [KAnonymity(5)])
    got = _dask_mondrian(table, qis, 5, 1000)
    assert got.info["top_level_leaves"] >= 4
    assert _rows(got.data.compute()) == _rows(want)


@pytest.mark.slow
def test_hierarchy_cuts_pool_and_lend_as_in_memory(client):
    """A hierarchical QI with a rare child (6 records < k): the in-memory Mondrian pools it
    and (relaxed, the default) lends it whole QI tuples of the largest child, or (strict)
    pools the smallest passing child too; the top cuts on Dask do the same."""
    rng = np.random.default_rng(5)
    n = 3000
    leaves = ["a1", "a2", "b1", "b2", "c1"]
    h = Hierarchy([[v, v[0], "*"] for v in leaves], name="g")
    g = rng.choice(leaves[:4], n, p=[0.45, 0.45, 0.05, 0.05])
    g[:6] = "c1"
    df = pd.DataFrame({"g": g, "age": rng.integers(0, 60, n)})
    df.loc[:5, "age"] = 55
    qis = {"g": h, "age": "numeric"}
    for options in ({}, {"relaxed": False}):
        want, _ = mondrian(df, qis, None, [KAnonymity(10)], **options)
        got = _dask_mondrian(df, qis, 10, 300, **options)
        assert got.info["top_level_leaves"] >= 10, options
        assert got.info["leaves_cut_in_memory_only"] == 0, options
        assert _rows(got.data.compute()) == _rows(want), options


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    k=st.integers(2, 8),
    max_rows=st.integers(40, 160),
    relaxed=st.booleans(),
    criterion=st.sampled_from(["gain", "width"]),
)
def test_property_dask_release_is_the_in_memory_release(seed, k, max_rows, relaxed, criterion):
    """Random small tables, numeric / value-set / hierarchical QIs with rare values: the
    Dask engine publishes the in-memory Mondrian's rows, every record once, classes >= k."""
    import dask

    rng = np.random.default_rng(seed)
    n = int(rng.integers(k, 400))
    leaves = ["a1", "a2", "b1", "b2", "c1"]
    h = Hierarchy([[v, v[0], "*"] for v in leaves], name="g")
    df = pd.DataFrame(
        {
            "g": rng.choice(leaves, n, p=[0.4, 0.3, 0.15, 0.13, 0.02]),
            "age": rng.integers(0, int(rng.integers(2, 80)), n),
            "s": rng.choice(["x", "y", "z"], n, p=[0.7, 0.25, 0.05]),
        }
    )
    qis = {"g": h, "age": "numeric", "s": "set"}
    options = {"relaxed": relaxed, "criterion": criterion}
    want, _ = mondrian(df, qis, None, [KAnonymity(k)], **options)
    # in-process and fast, whatever client another test started (p2p needs its workers)
    with dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"}):
        got = _dask_mondrian(df, qis, k, max_rows, **options)
        out = got.data.compute()
    assert _rows(out) == _rows(want)
    assert min(Counter(map(tuple, out[list(qis)].to_numpy().tolist())).values()) >= k
    assert got.info["leaves_cut_in_memory_only"] == 0
