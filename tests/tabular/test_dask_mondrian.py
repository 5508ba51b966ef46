"""Mondrian on Dask: top cuts from Dask aggregates, in-memory Mondrian per leaf."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest

import tabular
from structanon.errors import InputError
from structanon.models import DistinctLDiversity, KAnonymity
from tabular._mondrian import mondrian
from tabular.metrics import gcp

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

QIS = {"age": "numeric", "hours": "numeric", "sex": "set", "edu": "set"}


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0"
    ) as cluster:
        with distributed.Client(cluster) as c:
            yield c


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
    with pytest.raises(InputError, match="numeric quasi-identifier"):
        tabular.anonymize(ddf, {"sex": "set"}, models=[KAnonymity(5)], algorithm="mondrian")
