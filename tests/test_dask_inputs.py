"""transactions and graphs run in memory only: a Dask input is refused in one clear line."""

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
