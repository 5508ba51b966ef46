"""The Dask engine without measures: windows cut into batches assigned on the workers.

Small batches and partitions force a log of a few thousand fixes through many batches,
so every join (rows, row numbers, statistics, the verifier's runs across partitions) is
exercised; the release must stay identical to the pandas one.
"""

import os

import numpy as np
import pandas as pd
import pytest
import shapely

import location
import location._dask as ldask
from location._verify import verify_cloaked
from location.synthetic import synthetic_log
from structanon.errors import InfeasibleError

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(ldask, "BATCH_FIXES", 1_000)
    monkeypatch.setattr(ldask, "PART_ROWS", 300)


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    df = synthetic_log(5_000, 90, seed=5)
    df.index = df.index * 3 + 2  # labels that are not positions
    return df


def _both(log, key, **kw):
    want = location.cloak(log, key=key, measures=False, **kw)
    with dask.config.set(scheduler="sync"):
        got = location.cloak(dd.from_pandas(log, npartitions=4), key=key, measures=False, **kw)
        data = got.data.compute()
        rows = got.source_index.compute()
    return want, got, data, rows


@pytest.mark.parametrize(
    "method, aggregate, linkage",
    [
        ("fixed", False, "window"),
        ("adaptive", False, "pseudonym"),
        ("adaptive", True, "window"),
        ("fixed", True, "pseudonym"),
    ],
)
def test_batches_give_the_pandas_release(small_batches, log, key, method, aggregate, linkage):
    with pytest.warns(UserWarning) if linkage == "pseudonym" else _nothing():
        want, got, data, rows = _both(
            log, key, k=3, window="30min", method=method, aggregate=aggregate, linkage=linkage
        )
    assert got.data.npartitions > 8  # many batches, each cut into parts
    pd.testing.assert_frame_equal(data.drop(columns="region"), want.data.drop(columns="region"))
    assert (
        shapely.bounds(np.asarray(data["region"].to_numpy()))
        == shapely.bounds(np.asarray(want.data["region"].to_numpy()))
    ).all()
    info = {name: v for name, v in got.info.items() if name != "npartitions"}
    assert info == want.info
    # the statistics' keys in the pandas order too (the JSON report is the same)
    assert list(info["fixes_published_per_level"]) == list(want.info["fixes_published_per_level"])
    assert got.suppressed == want.suppressed
    assert got.checks.passed
    # source_index: input label -> published row, the pandas path's rows exactly
    if aggregate:
        pd.testing.assert_series_equal(
            rows.sort_index(), want.source_index.sort_index(), check_names=False
        )
    else:  # pandas: the input label of each published row; identical rows may swap fixes
        assert (rows.sort_values().to_numpy() == np.arange(len(data))).all()
        pandas_row = pd.Series(np.arange(len(want.data)), index=want.source_index)
        cols = ["user", "window", "region_id"]
        a = data[cols].iloc[rows.to_numpy()].reset_index(drop=True)
        b = want.data[cols].iloc[pandas_row.loc[rows.index].to_numpy()].reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_no_client_side_triples(small_batches, log, key, monkeypatch):
    # without measures the client never gathers the (cell, window, user) triples
    def refuse(*args, **kwargs):
        raise AssertionError("the triples were gathered on the client")

    monkeypatch.setattr(ldask, "_reduce_triples", refuse)
    with dask.config.set(scheduler="sync"):
        r = location.cloak(dd.from_pandas(log, npartitions=3), k=4, key=key, measures=False)
        assert len(r.data.compute()) + r.suppressed == len(log)


def test_batches_refuse_too_few_users(small_batches, log, key):
    with (
        dask.config.set(scheduler="sync"),
        pytest.raises(InfeasibleError, match="exceeds the number of users"),
    ):
        location.cloak(dd.from_pandas(log, npartitions=3), k=91, key=key, measures=False)


def test_batches_refuse_when_everything_is_suppressed(small_batches, key):
    df = synthetic_log(400, 12, seed=1)  # 12 users over a day of 15-minute windows
    with dask.config.set(scheduler="sync"), pytest.raises(InfeasibleError, match="suppressed"):
        location.cloak(dd.from_pandas(df, npartitions=2), k=12, key=key, measures=False)


def test_batch_cuts():
    # about `target` fixes a batch, a window never split, empty windows joined
    assert ldask._batch_cuts(np.array([5, 0, 5, 9, 1, 0]), 5) == [(0, 1), (1, 3), (3, 4), (4, 6)]
    assert ldask._batch_cuts(np.array([1, 1, 1]), 10) == [(0, 3)]
    assert ldask._batch_cuts(np.array([0, 0]), 10) == [(0, 2)]
    cuts = ldask._batch_cuts(np.array([3, 4, 0, 0]), 3)
    assert cuts == [(0, 1), (1, 4)]  # trailing empty windows join the last batch


def _release(rows):
    box = shapely.box(0, 0, 1, 1)
    df = pd.DataFrame(rows, columns=["window", "region_id", "user"])
    df["window"] = pd.to_datetime(df["window"], unit="h", utc=True)
    df["region"] = [box] * len(df)
    return df


@pytest.mark.parametrize("k", [2, 3])
def test_verifier_joins_runs_across_partitions(k):
    # one (window, region) group cut across three partitions, user "b" on both sides of
    # the first cut and "c" alone in the middle one: 3 distinct users, not 5
    rows = [(0, 1, "a"), (0, 1, "b"), (0, 1, "b"), (0, 1, "c"), (0, 1, "c"), (0, 2, "a")]
    rows += [(0, 2, "b"), (0, 2, "c"), (1, 1, "a"), (1, 1, "b"), (1, 1, "d")]
    df = _release(rows)
    with dask.config.set({"scheduler": "sync", "dataframe.convert-string": False}):
        ddf = dd.from_pandas(df, npartitions=1).repartition(divisions=[0, 2, 4, 5, 10])
        got = ldask._verify_dask(ddf, k)
    want = verify_cloaked(df, k)
    assert [(c.passed, c.worst, c.n_groups) for c in got] == [
        (c.passed, c.worst, c.n_groups) for c in want
    ]
    assert got[0].n_groups == 3 and got[0].worst == 3.0


def test_verifier_checks_the_order_itself():
    # rows out of order (a group split by another): counted from the rows, not the runs
    rows = [(0, 1, "a"), (0, 1, "b"), (0, 2, "a"), (0, 2, "b"), (0, 1, "a"), (0, 1, "c")]
    df = _release(rows)
    assert ldask._sorted_counts(ldask._group_users(df)) is None
    with dask.config.set({"scheduler": "sync", "dataframe.convert-string": False}):
        ddf = dd.from_pandas(df, npartitions=2)
        got = ldask._verify_dask(ddf, 3)
    assert got[0].passed is False and got[0].worst == verify_cloaked(df, 3)[0].worst == 2.0
    # sorted inside each partition but not across them: also detected
    parts = [_release(rows[:2]), _release(rows[2:4]), _release([(0, 1, "c")])]
    groups = pd.concat([ldask._group_users(p) for p in parts], ignore_index=True)
    assert ldask._sorted_counts(groups) is None


def test_batches_with_an_empty_partition_and_text_users(small_batches, key):
    df = synthetic_log(3_000, 60, seed=4)
    df["user"] = "u" + df["user"].astype(str)
    want = location.cloak(df.iloc[:2_000], k=3, key=key, measures=False)
    with dask.config.set(scheduler="sync"):
        ddf = dd.from_pandas(df, npartitions=3)
        ddf = ddf.map_partitions(lambda p: p[p.index < 2_000])  # the last one is empty
        assert len(ddf.partitions[2].compute()) == 0
        got = location.cloak(ddf, k=3, key=key, measures=False)
        data = got.data.compute()
    pd.testing.assert_frame_equal(data.drop(columns="region"), want.data.drop(columns="region"))


@pytest.mark.parametrize("text", [False, True])
@pytest.mark.parametrize("with_region", [False, True])
def test_packed_pseudonym_units_equal_the_row_wise_ones(key, text, with_region):
    from location._publish import published_users

    rng = np.random.default_rng(3)
    users = np.array([f"u{i}" for i in range(40)]) if text else np.arange(40) * 7
    u, w = rng.integers(0, 40, 3_000), rng.integers(100, 112, 3_000)
    region = rng.choice([2**40 + 5, 17, 3, 2**33], 3_000) if with_region else None
    got = ldask._published_users(u, w, users, key, "window", region)
    want = published_users(u, w, users, key, "window", region)
    assert (got[0] == want[0]).all() and (got[1] == want[1]).all()


def test_verification_is_counted_by_the_batches(small_batches, log, key, monkeypatch):
    # the batches count each published partition as they make it: verifying the release
    # reads no row again, and the aggregates equal a fresh pass over the written rows
    with dask.config.set(scheduler="sync"):
        r = location.cloak(dd.from_pandas(log, npartitions=3), k=4, key=key, measures=False)
        fresh = ldask._verify_dask(r.data, 4)  # another object's verifier: a full pass
        ddf = r.data.map_partitions(lambda p: p)  # the same rows, another lazy frame
        again = ldask._verify_dask(ddf, 4, None)

        def refuse(*args, **kwargs):
            raise AssertionError("the release was read again to verify it")

        monkeypatch.setattr(ldask, "_group_users", refuse)
        checks = r.verifier(r.data)
    want = verify_cloaked(r.data.compute(), 4)
    assert [(c.passed, c.worst, c.n_groups) for c in checks] == [
        (c.passed, c.worst, c.n_groups) for c in fresh
    ]
    assert [(c.passed, c.worst, c.n_groups) for c in checks] == [
        (c.passed, c.worst, c.n_groups) for c in want
    ]
    assert [(c.passed, c.worst) for c in again] == [(c.passed, c.worst) for c in want]
    assert checks[0].passed and checks[0].worst >= 4


def test_verifier_of_a_tampered_copy_reads_the_copy(small_batches, log, key):
    # the workers' aggregates serve only the release they were counted from: a copy with
    # a group cut to one user (same object type, same partitions) fails
    with dask.config.set(scheduler="sync", **{"dataframe.convert-string": False}):
        r = location.cloak(dd.from_pandas(log, npartitions=3), k=4, key=key, measures=False)

        def one_user(p):
            p = p.copy()
            if len(p):
                p.iloc[0, p.columns.get_loc("window")] = pd.Timestamp("1999-01-01", tz="UTC")
            return p

        tampered = r.data.map_partitions(one_user, meta=r.data._meta)
        got = r.verifier(tampered)
    assert not got[0].passed and got[0].worst == 1.0


@pytest.mark.parametrize("aggregate", [False, True])
def test_compact_batch_rows_build_the_same_partitions(key, aggregate):
    # a batch keeps its rows in int32 and its pseudonyms as bytes; the partitions built
    # from them are those built from the full rows (same values, same dtypes)
    from location._grid import CloakingGrid
    from location._publish import PublishedRows

    rng = np.random.default_rng(3)
    n = 50
    pseudonyms = key.pseudonymize(np.array([f"u{i}" for i in range(7)], dtype=object))
    repeat = None if aggregate else rng.integers(1, 4, n)
    n_fixes = rng.integers(1, 9, n) if aggregate else None
    rows = PublishedRows(
        rng.integers(0, 7, n),
        np.sort(rng.integers(1_900_000, 1_900_010, n)),
        rng.integers(0, 3, n),
        repeat,
        n_fixes,
        np.array([4, 9, 17]),
        pseudonyms,
    )
    small = ldask._compact(rows)
    assert small.pseudonyms.dtype.kind == "S" and small.user_rank.dtype == np.int32
    grid = CloakingGrid.fit(116.0, 117.0, 39.5, 40.5, 500.0, None)
    polygons = grid.polygons(rows.regions)
    for piece in [(0, n, 0), (10, 30, 7)]:
        a = ldask._rows_part(piece, rows, polygons, 900 * 10**9)
        b = ldask._rows_part(piece, small, polygons, 900 * 10**9)
        pd.testing.assert_frame_equal(a, b)
        assert b["user"].map(type).eq(str).all()


# -- the window cut spooled to disk -----------------------------------------------------


@pytest.fixture
def spool_reads(monkeypatch):
    """Every piece read back from the spool: (folder mode, file mode, batch, part)."""
    reads = []
    load = ldask._load_piece

    def spy(folder, batch, part):
        file_mode = os.stat(ldask._piece_path(folder, batch, part)).st_mode & 0o777
        reads.append((os.stat(folder).st_mode & 0o777, file_mode, batch, part))
        return load(folder, batch, part)

    monkeypatch.setattr(ldask, "_load_piece", spy)
    return reads


def test_window_cut_goes_through_a_private_spool(small_batches, log, key, tmp_path, spool_reads):
    want = location.cloak(log, key=key, measures=False, k=3, window="30min")
    with dask.config.set({"scheduler": "sync", "temporary-directory": str(tmp_path)}):
        got = location.cloak(
            dd.from_pandas(log, npartitions=4), key=key, measures=False, k=3, window="30min"
        )
        data = got.data.compute()
    pd.testing.assert_frame_equal(data.drop(columns="region"), want.data.drop(columns="region"))
    # many batches, each reading the pieces of several partitions, owner-only on disk
    assert len({b for *_, b, _ in spool_reads}) >= 5
    assert {p for *_, p in spool_reads} == {0, 1, 2, 3}
    assert {(d, f) for d, f, *_ in spool_reads} == {(0o700, 0o600)}
    assert os.listdir(tmp_path) == []  # removed once the batches are made


def test_spool_removed_when_a_batch_fails(small_batches, log, key, tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("batch failed")

    monkeypatch.setattr(ldask, "_batch", boom)
    with dask.config.set({"scheduler": "sync", "temporary-directory": str(tmp_path)}):
        with pytest.raises(RuntimeError, match="batch failed"):
            location.cloak(dd.from_pandas(log, npartitions=4), key=key, measures=False, k=3)
    assert os.listdir(tmp_path) == []


def test_spool_removed_when_infeasible(small_batches, log, key, tmp_path):
    with dask.config.set({"scheduler": "sync", "temporary-directory": str(tmp_path)}):
        with pytest.raises(InfeasibleError, match="exceeds the number of users"):
            location.cloak(dd.from_pandas(log, npartitions=3), k=91, key=key, measures=False)
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("workers_see_it", [True, False])
def test_spool_on_a_cluster(small_batches, log, key, tmp_path, spool_reads, workers_see_it):
    # a distributed cluster uses the spool only when every worker sees the folder; else
    # the pieces stay in memory: the same release either way
    distributed = pytest.importorskip("distributed")
    if not workers_see_it:
        # the workers run in this process: hide the folder from them only
        ldask_sees = ldask._sees
        ldask._sees = lambda folder: False
    want = location.cloak(log, key=key, measures=False, k=3, window="30min")
    try:
        with (
            dask.config.set({"temporary-directory": str(tmp_path)}),
            distributed.LocalCluster(
                processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0"
            ) as cluster,
            distributed.Client(cluster),
        ):
            got = location.cloak(
                dd.from_pandas(log, npartitions=4), key=key, measures=False, k=3, window="30min"
            )
            data = got.data.compute()
    finally:
        if not workers_see_it:
            ldask._sees = ldask_sees
    pd.testing.assert_frame_equal(data.drop(columns="region"), want.data.drop(columns="region"))
    assert bool(spool_reads) == workers_see_it
    assert [n for n in os.listdir(tmp_path) if n.startswith("structanon-")] == []


# -- the verifier's counts joined across batches ----------------------------------------


def _checks_of(df: pd.DataFrame) -> "ldask._BatchChecks":
    # a batch's aggregates as the batches count them, from the rows alone
    g = ldask._group_users(df[["region_id", "window", "user"]])
    if not len(g):
        return ldask._BatchChecks(np.zeros(0, np.int64), None, None, pd.DataFrame())
    first = (int(g["window"].iat[0]), int(g["region_id"].iat[0]), g["first"].iat[0])
    last = (int(g["window"].iat[-1]), int(g["region_id"].iat[-1]), g["last"].iat[-1])
    return ldask._BatchChecks(ldask._sorted_counts(g), first, last, pd.DataFrame())


@pytest.mark.parametrize("seed", range(30))
def test_joined_counts_equal_a_recount(seed):
    # sorted rows cut anywhere (inside a run, inside one user's rows, empty batches): the
    # joined counts are the distinct users of each (window, region) in order
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    df = pd.DataFrame(
        {
            "window": pd.to_datetime(rng.integers(0, 3, n) * 900, unit="s", utc=True),
            "region_id": rng.integers(0, 3, n),
            "user": rng.choice(["a", "b", "c", "d"], n),
        }
    ).sort_values(["window", "region_id", "user"], ignore_index=True)
    cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(0, 6))))
    bounds = [0, *cuts.tolist(), n]
    batches = [_checks_of(df.iloc[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    want = df.groupby(["window", "region_id"], sort=True)["user"].nunique().to_numpy()
    np.testing.assert_array_equal(ldask._joined_counts(batches), want)


def test_joined_counts_refuse_unsorted_batches():
    df = pd.DataFrame(
        {
            "window": pd.to_datetime([0, 0, 900, 900], unit="s", utc=True),
            "region_id": [1, 1, 1, 2],
            "user": ["a", "b", "a", "a"],
        }
    )
    a, b = _checks_of(df.iloc[:2]), _checks_of(df.iloc[2:])
    assert ldask._joined_counts([a, b]) is not None
    assert ldask._joined_counts([b, a]) is None  # the second batch starts before the first ends


def test_spool_folder_that_cannot_be_made(small_batches, log, key, tmp_path):
    from structanon.errors import InputError

    missing = tmp_path / "no" / "such"
    with dask.config.set({"scheduler": "sync", "temporary-directory": str(missing)}):
        with pytest.raises(InputError, match="temporary-directory"):
            location.cloak(dd.from_pandas(log, npartitions=2), key=key, measures=False, k=3)
    assert not missing.exists()
