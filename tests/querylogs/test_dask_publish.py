"""querylogs on Dask, publication: the release built per partition and written with Dask."""

import gzip
import os

import numpy as np
import pandas as pd
import pytest

import querylogs
from querylogs import _dask
from structanon.errors import InputError
from structanon.io import Pseudonymizer

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

KEY = Pseudonymizer(b"querylogs-dask-publish-key")


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    return querylogs.synthetic_log(60, 2400, seed=7)


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Object strings and None for missing values, a fresh index (Dask holds Arrow strings)."""
    frame = frame.reset_index(drop=True)
    frame = frame.astype({c: object for c in ("user", "query", "url") if c in frame.columns})
    return frame.where(frame.notna(), None)


@pytest.fixture(scope="module")
def releases(client, log):
    want = querylogs.anonymize(log, 3, seed=1, key=KEY, measures=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_dask, "ROWS_PER_PART", 150)  # many partitions on a small log
        got = querylogs.anonymize(
            dd.from_pandas(log, npartitions=4), 3, seed=1, key=KEY, measures=False
        )
    return want, got


def test_lazy_release_is_the_pandas_release_row_for_row(releases, log):
    want, got = releases
    assert got.data.npartitions > 3
    pd.testing.assert_frame_equal(plain(got.data.compute()), plain(want.data))
    assert got.info == want.info
    source = got.source_index.compute().to_numpy()
    assert np.array_equal(np.asarray(log.index)[source], want.source_index)
    assert got.checks.passed


def test_partitions_hold_whole_users_in_pseudonym_order(releases):
    _, got = releases
    users = [set(p["user"]) for p in got.data.to_delayed() for p in [p.compute()]]
    seen: set = set()
    for part in users:
        assert not part & seen
        seen |= part
    firsts = [min(part) for part in users if part]
    assert firsts == sorted(firsts)


def test_parquet_folder_reads_back_with_pandas_and_duckdb(releases, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    want, got = releases
    out = tmp_path / "published.parquet"
    assert querylogs.write_log(got.data, out) is not None
    assert out.is_dir() and len(list(out.glob("part.*.parquet"))) == got.data.npartitions
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~umask  # not left owner-only
    back = pd.read_parquet(out)
    pd.testing.assert_frame_equal(plain(back), plain(want.data))
    files = str(out / "*.parquet")
    con = duckdb.connect()
    count, users = con.execute(
        f"select count(*), count(distinct \"user\") from read_parquet('{files}')"
    ).fetchone()
    assert count == len(want.data) and users == want.data["user"].nunique()
    ducked = con.execute(
        f"select * from read_parquet('{files}') order by \"user\", time, query, url nulls first"
    ).df()
    expected = plain(want.data).sort_values(
        ["user", "time", "query", "url"], kind="stable", na_position="first"
    )
    assert ducked["query"].tolist() == expected["query"].tolist()
    assert ducked["user"].tolist() == expected["user"].tolist()
    with pytest.raises(InputError, match="exists"):
        querylogs.write_log_dask(got.data, out)


@pytest.mark.parametrize("name", ["out.tsv", "out.csv", "out.tsv.gz"])
def test_text_output_is_the_pandas_writer_bytes(releases, tmp_path, name):
    want, got = releases
    lazy, eager = tmp_path / "lazy" / name, tmp_path / "eager" / name
    rows = querylogs.write_log_dask(got.data, lazy)
    querylogs.write_log(want.data, eager)
    assert rows == len(want.data)
    read = gzip.decompress if name.endswith(".gz") else (lambda b: b)
    assert read(lazy.read_bytes()) == read(eager.read_bytes())
    sep = "," if name.endswith(".csv") else "\t"
    back = pd.read_csv(lazy, sep=sep, keep_default_na=False)
    assert len(back) == len(want.data)


def test_verify_lazy_logs_from_their_rows(client, releases):
    want, got = releases
    assert all(c.passed for c in querylogs.verify_log(got.data, 3))
    # a user's rows spread over partitions (rows shuffled): the same verdict as pandas
    rows = want.data.sample(frac=1.0, random_state=0)
    spread = dd.from_pandas(rows, npartitions=5, sort=False)
    assert [c.passed for c in querylogs.verify_log(spread, 3)] == [
        c.passed for c in querylogs.verify_log(rows, 3)
    ]
    # one published query changed for one user: that user's multiset is alone
    tampered = want.data.copy()
    first = tampered.index[tampered["user"] == tampered["user"].iloc[0]][0]
    tampered.loc[first, "query"] = "something else"
    lazy = dd.from_pandas(tampered, npartitions=3, sort=False)
    assert [c.passed for c in querylogs.verify_log(lazy, 3)] == [False, False]
    with pytest.raises(InputError, match="lacks a column"):
        querylogs.verify_log(lazy.drop(columns="query"), 3)


def test_measures_on_a_lazy_release_equal_pandas(client, log):
    want = querylogs.anonymize(log, 4, seed=3, key=KEY)
    got = querylogs.anonymize(dd.from_pandas(log, npartitions=3), 4, seed=3, key=KEY)
    assert got.utility == want.utility and got.risk == want.risk


def test_report_input_view_on_dask_equals_pandas(releases, log, monkeypatch):
    monkeypatch.setattr("structanon.report.VIEW_NOISE_SCALE", 0.0)  # the counts, not noise
    # the HTML report's before/after view of the top queries, from per-query counts of
    # the Dask log and of the lazy release (rows never collected)
    from querylogs._figures import release_figures

    want, got = releases
    lazy = dd.from_pandas(log, npartitions=4)
    eager_view = [f for f in release_figures(want, log) if getattr(f, "view", False)]
    lazy_view = [f for f in release_figures(got, lazy) if getattr(f, "view", False)]
    assert len(eager_view) == 1
    assert [(f.title, f.alt) for f in lazy_view] == [(f.title, f.alt) for f in eager_view]
    bars = [[bar.get_width() for bar in f.figure.axes[0].patches] for f in lazy_view]
    assert bars == [[bar.get_width() for bar in f.figure.axes[0].patches] for f in eager_view]
