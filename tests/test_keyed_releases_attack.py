"""Attack: join two releases of *different* inputs made with one key.

With a given key the publication streams must repeat for the same input (same bytes), but
a corrected table, a later snapshot of a graph or next month's baskets released under the
same key and parameters must not get the same row order, labels or noise: the attacker
holding both releases would join them position by position (or subtract them to cancel
the noise).  Each test changes a few records of the input, releases both versions under one
key, and measures what the attacker gets against chance.
"""

from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
KEY = bytes.fromhex("00112233445566778899aabbccddeeff00112233")


def _adult_versions():
    df = pd.read_csv(ROOT / "tabular" / "data" / "adult_sample.csv", sep=";").head(3000)
    rng = np.random.default_rng(3)
    df["serial"] = rng.permutation(len(df))  # the attacker's ground truth, not a QI
    df["income"] = rng.normal(40_000, 15_000, len(df)).round()
    later = df.copy()
    changed = rng.choice(len(df), 30, replace=False)
    later.loc[changed, "income"] *= 1.2  # a corrected table: 1% of the records change
    return df, later


def _same_position(a, b) -> int:
    m = min(len(a), len(b))
    return int((np.asarray(a)[:m] == np.asarray(b)[:m]).sum())


def test_two_keyed_tabular_releases_of_different_tables_do_not_line_up():
    import tabular
    from structanon import Hierarchy
    from structanon.models import KAnonymity

    first, later = _adult_versions()
    data = ROOT / "tabular" / "data"
    qis = {c: Hierarchy.from_csv(data / f"adult_hierarchy_{c}.csv", name=c) for c in ("sex", "age")}

    runs = [
        tabular.anonymize(d, qis, models=[KAnonymity(5)], seed=0, key=KEY, measures=False)
        for d in (first, later)
    ]
    # the same table under the same key repeats (the key holder reproduces a release) ...
    again = tabular.anonymize(first, qis, models=[KAnonymity(5)], seed=0, key=KEY, measures=False)
    assert again.data.equals(runs[0].data)
    # ... but position i of the two releases is the same person only by chance (~1 of n)
    lined_up = _same_position(runs[0].data["serial"], runs[1].data["serial"])
    assert lined_up < 20, f"{lined_up} of {len(first)} rows line up"


def test_two_keyed_noise_releases_of_different_tables_do_not_cancel():
    import tabular

    first, later = _adult_versions()
    noisy = [
        tabular.add_noise(d, ["income"], alpha=0.2, seed=0, key=KEY, measures=False).data
        for d in (first, later)
    ]
    # the attacker lines the two releases up (here by the serial, as a join by position
    # would if the order repeated) and compares their noise
    noise = [
        (n.set_index("serial")["income"] - d.set_index("serial")["income"]).sort_index()
        for n, d in zip(noisy, (first, later))
    ]
    assert _same_position(noisy[0]["serial"], noisy[1]["serial"]) < 20
    correlation = float(np.corrcoef(noise[0].to_numpy(), noise[1].to_numpy())[0, 1])
    assert abs(correlation) < 0.1, f"the noise of the two releases correlates: {correlation:.3f}"


def test_two_keyed_transaction_releases_of_different_baskets_do_not_line_up():
    import transactions
    from transactions.io import read_transactions

    baskets = read_transactions(ROOT / "transactions" / "data" / "retail_head2000.dat")
    corrected = [set(t) for t in baskets]
    for i in range(0, 2000, 100):  # 20 baskets lose an item
        if len(corrected[i]) > 1:
            corrected[i] = set(sorted(corrected[i])[1:])
    calls = {
        "k-anonymize": lambda d: transactions.k_anonymize(d, k=5, key=KEY, measures=False),
        "km-anonymize": lambda d: transactions.km_anonymize(d, k=5, m=2, key=KEY, measures=False),
        "band": lambda d: transactions.band_matrix(
            d, [110, 271, 413], p=5, key=KEY, measures=False
        ),
    }
    for name, call in calls.items():
        first, later = call(baskets), call(corrected)
        assert _same_position(first.source_index, call(baskets).source_index) == len(baskets)
        lined_up = _same_position(first.source_index, later.source_index)
        assert lined_up < 20, f"{name}: {lined_up} of {len(baskets)} baskets line up"


def test_two_keyed_graph_releases_of_different_snapshots_share_no_labels():
    import graphs

    G = nx.read_edgelist(ROOT / "graphs" / "data" / "ca-GrQc_undirected.txt", nodetype=int)
    later = G.copy()
    nodes = sorted(G.nodes())
    rng = np.random.default_rng(5)
    for u, v in rng.choice(nodes, (50, 2)):  # a later snapshot: 50 new collaborations
        if u != v:
            later.add_edge(int(u), int(v))
    first = graphs.k_degree_anonymize(G, k=5, key=KEY, measures=False)
    second = graphs.k_degree_anonymize(later, k=5, key=KEY, measures=False)
    again = graphs.k_degree_anonymize(G, k=5, key=KEY, measures=False)
    assert again.source_index == first.source_index
    same = sum(first.source_index[v] == second.source_index.get(v) for v in first.source_index)
    assert same < 20, f"{same} of {G.number_of_nodes()} authors keep their published label"


def test_two_keyed_graph_releases_differing_in_one_attribute_share_no_labels():
    """The streams were bound to nodes and edges only: a graph whose one node changed a
    published attribute got the same labels and added edges, so the two releases joined
    node by node and their one differing label named the changed person."""
    import graphs

    G = nx.powerlaw_cluster_graph(300, 3, 0.2, seed=1)
    rng = np.random.default_rng(1)
    for v in G:
        G.nodes[v]["age"] = int(rng.integers(18, 80))
    later = G.copy()
    later.nodes[17]["age"] = 99  # one profile updated

    def release(graph):
        return graphs.k_degree_anonymize(graph, 5, key=KEY, keep_attributes=["age"], measures=False)

    first, second, again = release(G), release(later), release(G)
    assert again.source_index == first.source_index
    same = sum(first.source_index[v] == second.source_index[v] for v in G)
    assert same < 20, f"{same} of 300 nodes keep their published label"
    # the attacker's join: labels whose published age differs between the two releases
    a, b = first.data, second.data
    differ = [v for v in a if a.nodes[v].get("age") != b.nodes[v].get("age")]
    assert len(differ) > 100  # no single label stands out


def _location_versions():
    from location.synthetic import synthetic_log

    log = synthetic_log(6_000, 60, seed=11)
    corrected = log.copy()
    corrected.loc[10, "lat"] += 1e-5  # one fix moved by about a metre
    return log, corrected


def _shared(one: pd.DataFrame, other: pd.DataFrame) -> int:
    shared = set(one["user"]) & set(other["user"])
    assert len(shared) <= 1, f"{len(shared)} of {one['user'].nunique()} pseudonyms shared"
    return len(shared)


@pytest.mark.parametrize("linkage", ["window", "trajectory"])
def test_two_keyed_location_releases_of_different_logs_share_no_pseudonyms(linkage):
    import location

    log, corrected = _location_versions()
    kw = dict(k=3, window="1h", key=KEY, measures=False, linkage=linkage)
    first, later = (location.cloak(d, **kw).data for d in (log, corrected))
    # the same log under the same key repeats byte for byte ...
    again = location.cloak(log, **kw).data
    pd.testing.assert_frame_equal(again.drop(columns="region"), first.drop(columns="region"))
    # ... but a corrected log's pseudonyms are new: none joins (before: every pseudonym
    # was shared, so the releases joined row for row)
    _shared(first, later)
    if linkage == "window":
        # a log one user apart: the removed user's rows cannot be singled out by subtraction
        victim = log["user"].unique()[3]
        _shared(first, location.cloak(log[log["user"] != victim], **kw).data)


def test_keyed_location_pseudonym_linkage_still_links_releases():
    # linkage="pseudonym" is HMAC(key, user) on purpose: releases under one key link
    import location

    log, corrected = _location_versions()
    kw = dict(k=3, window="1h", key=KEY, measures=False, linkage="pseudonym")
    first, later = (location.cloak(d, **kw).data for d in (log, corrected))
    assert set(first["user"]) == set(later["user"])
