"""querylogs on Dask: the same release as pandas for the same inputs, seed and key."""

import numpy as np
import pandas as pd
import pytest

import querylogs
from structanon.errors import InputError
from structanon.io import Pseudonymizer

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

KEY = Pseudonymizer(b"querylogs-dask-key-0123")


def computed_like(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.where(frame.notna(), None).replace({np.nan: None})


def computed(data) -> pd.DataFrame:
    """A lazy release in memory, with the pandas release's dtypes (Dask holds strings as
    Arrow strings)."""
    frame = data.compute().reset_index(drop=True)
    frame = frame.astype({c: object for c in ("user", "query", "url")})
    return frame.where(frame.notna(), None).replace({np.nan: None})


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    df = querylogs.synthetic_log(50, 3000, seed=4)
    df.loc[df.index[5], "query"] = "  Call 555-123-4567 NOW "  # an identifier query
    return df


@pytest.mark.parametrize(("grouping", "match"), [("greedy", "query"), ("mdav", "intent")])
def test_dask_release_equals_pandas(client, log, grouping, match):
    kwargs = dict(seed=2, key=KEY, grouping=grouping, match=match)
    want = querylogs.anonymize(log, 3, **kwargs)
    got = querylogs.anonymize(dd.from_pandas(log, npartitions=5), 3, **kwargs)
    pd.testing.assert_frame_equal(computed(got.data), computed_like(want.data))
    assert got.info == want.info and got.info["rows_in"] == len(log)
    assert got.utility == want.utility and got.risk == want.risk
    # Dask's source_index holds global row positions
    source = got.source_index.compute().to_numpy()
    assert (np.asarray(log.index)[source] == want.source_index).all()
    assert got.checks.passed


def test_dask_events_out_of_core_pick_the_pandas_rows(client, log):
    # many clicks per event: the published URL is the row the pandas path draws
    doubled = pd.concat([log, log.assign(url=log["url"].str.upper())], ignore_index=True)
    want = querylogs.anonymize(doubled, 4, seed=0, key=KEY, measures=False)
    got = querylogs.anonymize(
        dd.from_pandas(doubled, npartitions=7), 4, seed=0, key=KEY, measures=False
    )
    pd.testing.assert_frame_equal(computed(got.data), computed_like(want.data))


def test_dask_bad_input(client, log):
    bad = log.copy()
    bad.loc[bad.index[100], "user"] = None
    with pytest.raises(InputError, match="missing value"):
        querylogs.anonymize(dd.from_pandas(bad, npartitions=3), 3, key=KEY)
    with pytest.raises(InputError, match="engine='pandas' with a Dask"):
        querylogs.anonymize(dd.from_pandas(log, npartitions=2), 3, key=KEY, engine="pandas")


def test_partitions_of_whole_users_reach_the_client_as_counts(client, log, monkeypatch):
    # each partition holds whole users: no shuffle, and the client receives per (user,
    # query) event counts, never one row per event
    import dask

    from querylogs import _dask

    users = sorted(log["user"].astype(str).unique())
    parts = [log[log["user"].astype(str).isin(users[i::4])] for i in range(4)]
    flat = pd.concat(parts)
    lazy = dd.from_delayed([dask.delayed(p) for p in parts], meta=log.iloc[:0])
    reduced = []

    def spy(*args, **kwargs):
        reduced.append(dask_counts(*args, **kwargs))
        return reduced[-1]

    dask_counts = _dask.dask_counts
    monkeypatch.setattr(_dask, "dask_counts", spy)
    for match in ("query", "intent"):
        want = querylogs.anonymize(flat, 3, seed=2, key=KEY, match=match)
        got = querylogs.anonymize(lazy, 3, seed=2, key=KEY, match=match)
        pd.testing.assert_frame_equal(computed(got.data), computed_like(want.data))
        assert got.info == want.info
        assert got.utility == want.utility and got.risk == want.risk
        source = got.source_index.compute().to_numpy()
        assert (np.asarray(flat.index)[source] == want.source_index).all()
    counted = reduced[-1]
    assert not counted.plan.cleaned  # the partitions as given, not shuffled
    events = {
        (str(u), " ".join(str(q).lower().split()), pd.Timestamp(t))
        for u, q, t in zip(log["user"], log["query"], log["time"])
    }
    pairs = {(u, q) for u, q, _ in events}
    assert counted.pair_count.sum() == len(events) > len(pairs) == counted.pair_user.size


def test_users_split_at_partition_ends_are_gathered_without_a_shuffle(client, log, monkeypatch):
    # a log sorted by user, cut into partitions: only the users at the cuts are split,
    # and their rows move to one partition; a log in random order is shuffled by user
    from querylogs import _dask

    shuffled = []
    by_user = _dask._by_user
    monkeypatch.setattr(_dask, "_by_user", lambda drawn: shuffled.append(1) or by_user(drawn))
    ordered = log.sort_values(["user", "time"], kind="stable")
    for frame, shuffles in ((ordered, 0), (log.sample(frac=1.0, random_state=1), 1)):
        want = querylogs.anonymize(frame, 3, seed=1, key=KEY, measures=False)
        lazy = dd.from_pandas(frame, npartitions=6, sort=False)
        got = querylogs.anonymize(lazy, 3, seed=1, key=KEY, measures=False)
        pd.testing.assert_frame_equal(computed(got.data), computed_like(want.data))
        assert got.info == want.info
        source = got.source_index.compute().to_numpy()
        assert (np.asarray(frame.index)[source] == want.source_index).all()
        assert len(shuffled) == shuffles


def test_dask_bad_row_is_named_by_its_global_position(client, log):
    bad = log.copy()
    bad.loc[bad.index[2500], "time"] = None
    with pytest.raises(InputError, match="missing value") as found:
        querylogs.anonymize(dd.from_pandas(bad, npartitions=4), 3, key=KEY)
    assert found.value.row == 2500


def test_a_frame_of_text_times_reads_each_offset_alone_and_needs_no_url(client):
    """A DataFrame given to ``anonymize`` (not read by ``read_log``): one time with an
    offset among naive ones is converted alone on both engines, and a log without any
    clicked URL runs on Dask too (it failed with an IndexError)."""
    times = ["2020-01-01 10:04", "2020-01-01T10:05+02:00", "2020-01-01 10:06"]
    log = pd.DataFrame(
        {
            "user": [u for u in "aabbcc"],
            "query": ["x", "y"] * 3,
            "time": times + ["2020-01-01 10:07", "2020-01-01 10:08", "2020-01-01 10:09"],
        }
    )
    kwargs = dict(seed=0, key=KEY, measures=False, time_granularity="second")
    want = querylogs.anonymize(log, 2, **kwargs)
    got = querylogs.anonymize(dd.from_pandas(log, npartitions=2), 2, **kwargs)
    pd.testing.assert_frame_equal(computed(got.data), computed_like(want.data))
    alone = querylogs.anonymize(log.head(2).assign(user=["a", "b"]), 1, **kwargs).data
    assert sorted(alone["time"]) == [
        pd.Timestamp("2020-01-01 08:05"),
        pd.Timestamp("2020-01-01 10:04"),
    ]
    with pytest.raises(InputError, match="not a date-time") as info:
        querylogs.anonymize(log.assign(time=["nope"] + times[1:] * 2 + [times[0]]), 2, **kwargs)
    assert info.value.row == 0
