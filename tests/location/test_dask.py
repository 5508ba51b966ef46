import numpy as np
import pandas as pd
import pytest
import shapely

import location
from location.synthetic import synthetic_log
from structanon.errors import InputError
from tests._support import window_key, window_pseudonyms

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


def test_dask_without_distributed_client(key):
    # regression: without a distributed client the lazy frame got a Delayed argument and
    # every computation failed ("Truth of Delayed objects is not supported").  This test
    # comes first in the module, before the module's client exists.
    df = synthetic_log(3_000, 60, seed=2)
    want = location.cloak(df, k=3, key=key)
    got = location.cloak(dd.from_pandas(df, npartitions=3), key=key, k=3)
    pd.testing.assert_frame_equal(
        got.data.compute().drop(columns="region"), want.data.drop(columns="region")
    )
    assert len(got.source_index.compute()) == len(want.data)


@pytest.mark.parametrize("method", ["fixed", "adaptive"])
def test_dask_matches_pandas(client, key, method, recount):
    df = synthetic_log(30_000, 250, seed=11)
    df["user"] = "user-" + df["user"].astype(str)
    # a sparse window: its leftovers are merged or suppressed the same way on both paths
    df.loc[df.index[:3], "time"] = pd.Timestamp("2024-05-03T00:00:00Z")
    expected = location.cloak(df, k=5, window="30min", method=method, pseudonymizer=key)
    got = location.cloak(
        dd.from_pandas(df, npartitions=5), k=5, window="30min", method=method, pseudonymizer=key
    )
    assert hasattr(got.data, "dask")
    data = got.data.compute()
    want = expected.data
    # the same rows in the same order under the same fresh index
    pd.testing.assert_frame_equal(data.drop(columns="region"), want.drop(columns="region"))
    assert (
        shapely.bounds(np.asarray(data["region"].to_numpy()))
        == shapely.bounds(np.asarray(want["region"].to_numpy()))
    ).all()
    assert got.suppressed == expected.suppressed == 3
    assert got.info["fixes_published_per_level"] == expected.info["fixes_published_per_level"]
    assert got.checks.passed and min(recount(data).values()) >= 5
    # the same risk figures (regression: unicity differed, users and points were numbered
    # in row order) and the same region measures
    assert got.risk == expected.risk
    for name in ("n_regions", "region_km2_median", "region_km2_max", "suppression_share"):
        assert got.utility[name] == pytest.approx(expected.utility[name], rel=1e-9)
    assert got.info["transformation_text"] == expected.info["transformation_text"]
    assert got.info["n_users"] == expected.info["n_users"] == 250
    assert got.to_dict()["parameters"]["engine"] == "dask" and "Privacy checks" in got.summary()


def test_dask_invalid_rows(client, key):
    df = synthetic_log(2_000, 40, seed=1)
    df.loc[1500, "lat"] = -91.0
    ddf = dd.from_pandas(df, npartitions=3)
    with pytest.raises(InputError, match="1 invalid"):
        location.cloak(ddf, k=3, pseudonymizer=key)
    r = location.cloak(ddf, k=3, pseudonymizer=key, drop_invalid=True)
    p = location.cloak(df, k=3, pseudonymizer=key, drop_invalid=True)
    assert r.suppressed == p.suppressed and r.info["invalid_reasons"] == p.info["invalid_reasons"]
    assert len(r.data.compute()) == len(p.data)


@pytest.mark.parametrize("aggregate", [False, True])
def test_dask_source_index_and_aggregate_match_pandas(client, key, aggregate):
    df = synthetic_log(8_000, 80, seed=12)
    df.index = df.index * 3 + 5  # labels that are not positions
    expected = location.cloak(df, k=4, window="30min", key=key, aggregate=aggregate)
    got = location.cloak(
        dd.from_pandas(df, npartitions=4), k=4, window="30min", key=key, aggregate=aggregate
    )
    data = got.data.compute()
    pd.testing.assert_frame_equal(data.drop(columns="region"), expected.data.drop(columns="region"))
    rows = got.source_index.compute()  # input label -> published row
    assert (
        len(rows) == len(expected.data)
        if not aggregate
        else len(rows) == int(expected.data["n_fixes"].sum())
    )
    if not aggregate:
        assert sorted(rows.to_numpy()) == list(range(len(data)))
    source = df.loc[rows.index]
    regions = data["region_id"].to_numpy()[rows.to_numpy()]
    bound = window_key(key, df)  # the key bound to the whole log's content
    users = window_pseudonyms(bound, source["user"], source["time"], "30min", regions)
    assert (data["user"].to_numpy()[rows.to_numpy()] == users).all()
    assert (
        data["window"].to_numpy()[rows.to_numpy()]
        == pd.to_datetime(df.loc[rows.index, "time"], utc=True).dt.floor("30min").to_numpy()
    ).all()
