"""``Release.write``: one call writes the release of every data type, as its reader reads it."""

from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest

import graphs
import location
import querylogs
import tabular
import transactions
from structanon.errors import InputError
from structanon.models import KAnonymity

KEY = b"0123456789abcdef-write"


def test_every_data_type_writes_and_reads_back(tmp_path):
    table = pd.DataFrame({"age": [30, 31, 32, 33, 40, 41], "zip": list("aabbcc")})
    release = tabular.anonymize(
        table, {"age": "numeric"}, None, [KAnonymity(2)], "mondrian", key=KEY, measures=False
    )
    out = release.write(tmp_path / "t.csv")
    assert out == tmp_path / "t.csv"
    assert len(pd.read_csv(out)) == len(release.data)

    baskets = [{1, 2}, {1, 2}, {2, 3}, {2, 3}, {1, 3}, {1, 3}]
    release = transactions.km_anonymize(baskets, k=2, m=2, key=KEY, measures=False)
    release.write(tmp_path / "b.dat")
    assert len(transactions.read_transactions(tmp_path / "b.dat")) == len(release.data)

    fixes = location.synthetic_log(500, 20, seed=1)
    release = location.cloak(fixes, 3, key=KEY, measures=False)
    release.write(tmp_path / "l.csv")
    assert len(pd.read_csv(tmp_path / "l.csv")) == len(release.data)

    graph = nx.barabasi_albert_graph(60, 2, seed=1)
    release = graphs.k_degree_anonymize(graph, 3, key=KEY, measures=False)
    release.write(tmp_path / "g.graphml")
    assert graphs.read_graph(tmp_path / "g.graphml").number_of_edges() == (
        release.data.number_of_edges()
    )

    log = querylogs.synthetic_log(30, 600, seed=2)
    release = querylogs.anonymize(log, 3, key=KEY, measures=False)
    release.write(tmp_path / "q.tsv")
    assert len(querylogs.read_log(tmp_path / "q.tsv", format="csv", sep="\t")) == len(release.data)


def test_a_writer_refusal_is_an_input_error(tmp_path):
    graph = nx.cycle_graph(6)
    graph.add_nodes_from([98, 99])  # two isolated nodes (k = 2): an edge list cannot hold them
    release = graphs.k_degree_anonymize(graph, 2, key=KEY, measures=False, relabel=False)
    with pytest.raises(InputError, match="isolated"):
        release.write(tmp_path / "g.txt")
    assert not (tmp_path / "g.txt").exists()


def test_tabular_takes_k_as_the_other_anonymizers_do():
    table = pd.DataFrame({"age": [30, 31, 32, 33, 40, 41], "zip": list("aabbcc")})
    by_k = tabular.anonymize(
        table, {"age": "numeric"}, k=2, algorithm="mondrian", key=KEY, measures=False
    )
    by_model = tabular.anonymize(
        table, {"age": "numeric"}, None, [KAnonymity(2)], "mondrian", key=KEY, measures=False
    )
    pd.testing.assert_frame_equal(by_k.data, by_model.data)
    assert by_k.verify().passed and by_k.parameters["k"] == by_model.parameters["k"] == 2
    with pytest.raises(InputError, match="not both"):
        tabular.anonymize(table, {"age": "numeric"}, None, [KAnonymity(3)], "mondrian", k=2)
    with pytest.raises(InputError, match="k must be an integer >= 1"):
        tabular.anonymize(table, {"age": "numeric"}, k=0, algorithm="mondrian")


def test_measures_must_be_true_or_false_everywhere():
    """measures="no" was truthy (measures computed) for four of the five anonymizers."""
    calls = [
        lambda m: tabular.anonymize(
            pd.DataFrame({"age": [1, 2, 3, 4]}),
            {"age": "numeric"},
            k=2,
            algorithm="mondrian",
            measures=m,
        ),
        lambda m: transactions.km_anonymize([{1}, {1}], k=2, m=1, measures=m),
        lambda m: transactions.disassociate([{1}, {1}], k=2, m=1, measures=m),
        lambda m: location.cloak(location.synthetic_log(200, 10, seed=1), 2, measures=m),
        lambda m: graphs.k_degree_anonymize(nx.cycle_graph(6), 2, measures=m),
        lambda m: querylogs.anonymize(querylogs.synthetic_log(10, 200, seed=1), 2, measures=m),
    ]
    for call in calls:
        with pytest.raises(InputError, match="measures"):
            call("no")
