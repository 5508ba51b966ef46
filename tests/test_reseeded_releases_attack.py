"""Attack: re-release one input under one key with other public seeds, then combine.

The noise, PRAM draws, swaps, samples, buckets and construction choices of a release decide
its published values.  When the public seed was part of their context, a publisher who
re-ran with another seed (to re-sample the measures, say) published a fresh independent
mask of the same records: aligned on the columns left untouched, 16 noise releases averaged
the noise down by a factor of 4, and a majority vote over 9 PRAM releases recovered 80% of
the true categories.  Under one key and one input, every value-deciding draw must now be the
same whatever the seed; only the row order (and ids) may change, and content alone cannot
join more than the values already published."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import graphs
import querylogs
import tabular

KEY = b"0123456789abcdef-reseeded"


def _table(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        {
            "serial": np.arange(n),
            "age": rng.integers(18, 80, n),
            "income": rng.normal(40_000, 9_000, n).round(2),
            "hours": rng.integers(10, 60, n).astype(float),
            "job": rng.choice(["a", "b", "c", "d", "e"], n),
            "disease": rng.choice(["flu", "cold", "hiv", "ulcer"], n),
        }
    )


def _rows(frame: pd.DataFrame) -> list[tuple]:
    """The published rows as a multiset (the order is secret and may differ)."""
    return sorted(map(tuple, frame.astype(str).to_numpy().tolist()))


MASKS = {
    "noise": lambda df, seed, key: tabular.add_noise(
        df, ["income", "hours"], 0.5, seed=seed, key=key, measures=False
    ),
    "pram": lambda df, seed, key: tabular.pram(
        df, ["job"], keep=0.6, seed=seed, key=key, measures=False
    ),
    "rank-swap": lambda df, seed, key: tabular.rank_swap(
        df, ["income"], 10, seed=seed, key=key, measures=False
    ),
    "sample": lambda df, seed, key: tabular.recode(
        df, sample=0.5, seed=seed, key=key, measures=False
    ),
}


@pytest.mark.parametrize("name", list(MASKS))
def test_attack_one_key_other_seeds_publish_one_mask(name):
    df = _table()
    mask = MASKS[name]
    first, second = (mask(df, seed, KEY).data for seed in (0, 1))
    assert _rows(first) == _rows(second)
    # and the mask does hide: without a key every run draws afresh, with the serial number
    # left untouched the rows align, and they differ
    fresh = [mask(df, 0, None).data for _ in range(2)]
    assert _rows(fresh[0]) != _rows(fresh[1])


def test_attack_averaging_reseeded_noise_releases_gains_nothing():
    """The audit's attack: align releases on the untouched serial and average the noise."""
    df = _table()
    releases = [MASKS["noise"](df, seed, KEY).data.set_index("serial") for seed in range(8)]
    truth = df.set_index("serial")["hours"]
    one = releases[0]["hours"].reindex(truth.index)
    mean = sum(r["hours"].reindex(truth.index) for r in releases) / len(releases)
    assert np.allclose(mean, one)  # eight releases are one release
    assert np.sqrt(((one - truth) ** 2).mean()) > 1.0  # which is still masked


def test_attack_one_key_other_seeds_give_one_bucketization():
    df = _table()
    anatomy = [
        tabular.anatomize(df, ["age", "job"], "disease", l=2, seed=s, key=KEY, measures=False)
        for s in (0, 1)
    ]

    # the same records share a bucket in both: each bucket's QI rows and sensitive counts
    def buckets(release):
        qi, sens = release.data, release.sensitive_table
        rows = qi.groupby("bucket").apply(
            lambda g: tuple(sorted(map(tuple, g[["age", "job"]].astype(str).values.tolist()))),
            include_groups=False,
        )
        values = sens.groupby("bucket").apply(
            lambda g: tuple(sorted(zip(g["disease"].astype(str), g["count"]))),
            include_groups=False,
        )
        return sorted(zip(rows, values.reindex(rows.index)))

    assert buckets(anatomy[0]) == buckets(anatomy[1])
    sliced = [
        tabular.slice_table(
            df, ["age", "job"], "disease", l=2, columns=[["age", "job"], ["disease"]],
            seed=s, key=KEY, measures=False,
        ).data
        for s in (0, 1)
    ]  # fmt: skip
    assert _rows(sliced[0].drop(columns=[c for c in sliced[0] if "bucket" in c])) == _rows(
        sliced[1].drop(columns=[c for c in sliced[1] if "bucket" in c])
    )


def test_attack_one_key_other_seeds_give_one_supergraph():
    """Two supergraphs of one graph drawn with other choices intersect towards the input's
    edges (every original edge is in both, most added ones in one)."""
    graph = nx.barabasi_albert_graph(150, 2, seed=3)
    edge_sets = [
        {
            frozenset(e)
            for e in graphs.anonymize(
                graph, 5, relabel=False, seed=s, key=KEY, measures=False
            ).data.edges()
        }
        for s in (0, 1)
    ]
    assert edge_sets[0] == edge_sets[1]
    assert len(edge_sets[0]) > graph.number_of_edges()  # edges were added


def test_attack_one_key_other_seeds_publish_the_same_events():
    log = querylogs.synthetic_log(40, 800, seed=6)
    published = [querylogs.anonymize(log, 3, seed=s, key=KEY, measures=False).data for s in (0, 1)]
    columns = [c for c in published[0].columns if c in ("query", "time", "url", "rank")]
    assert _rows(published[0][columns]) == _rows(published[1][columns])
