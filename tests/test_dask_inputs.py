"""transactions and graphs run in memory only: a Dask input is refused in one clear line."""

import logging

import pandas as pd
import pytest

import graphs
import transactions
from structanon._engine import resolve_engine
from structanon.errors import InputError

dd = pytest.importorskip("dask.dataframe")
db = pytest.importorskip("dask.bag")


def test_transactions_refuse_a_dask_bag():
    # regression: the anonymizers iterated the bag into memory without saying so
    bag = db.from_sequence([{"a", "b"}, {"a"}, {"b", "c"}], npartitions=2)
    with pytest.raises(InputError, match="runs in memory only.*Dask Bag"):
        transactions.km_anonymize(bag, 2, 2)
    with pytest.raises(InputError, match="runs in memory only.*Dask Bag"):
        transactions.k_anonymize(bag, 2)


def test_graphs_refuse_a_dask_dataframe():
    edges = dd.from_pandas(pd.DataFrame({"u": [0, 1], "v": [1, 2]}), npartitions=1)
    with pytest.raises(InputError, match="runs in memory only.*Dask DataFrame"):
        graphs.k_degree_anonymize(edges, 2)


def test_engine_resolution():
    ddf = dd.from_pandas(pd.DataFrame({"a": [1]}), npartitions=1)
    assert resolve_engine(ddf) == "dask" and resolve_engine(pd.DataFrame()) == "pandas"
    with pytest.raises(InputError, match="engine"):
        resolve_engine(None, "spark")


def test_progress_on_a_local_cluster_closes_without_a_traceback(capfd, caplog):
    # regression: the scheduler logged the progress feed's cancellation at shutdown as an
    # error, with an asyncio.CancelledError traceback on stderr
    pytest.importorskip("distributed")
    from dask import delayed

    from structanon import _progress
    from structanon._engine import compute, dask_client

    was = _progress.enabled()
    _progress.enable(True)
    try:
        with dask_client(threads=1):
            assert compute(delayed(len)([1, 2])) == (2,)
    finally:
        _progress.enable(was)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "CancelledError" not in err
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


def test_a_lazy_release_is_printed_without_computing_it():
    # regression: repr() called len() on the Dask data, which computes the whole release
    from structanon.release import Release

    calls = []

    def counted(part):
        calls.append(len(part))
        return part

    data = dd.from_pandas(pd.DataFrame({"a": [1, 2, 3]}), npartitions=2).map_partitions(
        counted, meta={"a": "int64"}
    )
    calls.clear()
    text = repr(Release(data=data, datatype="querylogs", verifier=lambda d: []))
    assert "? published" in text and calls == []
