"""Attacks on perturbative releases, run the way an attacker would (issue 17).

The attacker holds the published table and every printed parameter, the seed included.
Noise, swap partners, PRAM draws, sampled records and the row order are publication
randomness: drawn from the release key, never from the seed, so replaying the seed
regenerates nothing, and two releases of one table are neither row-aligned nor subtractable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tabular
from structanon import Hierarchy

DECADES = Hierarchy([[str(d), "<40" if d < 40 else "40+", "*"] for d in range(10, 80, 10)])
GROUPS = Hierarchy([[g, "*"] for g in "abcd"])


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    x = rng.multivariate_normal([40.0, 3000.0], [[100.0, 600.0], [600.0, 250_000.0]], 2000)
    df = pd.DataFrame(x.round(2), columns=["age", "income"])
    df["group"] = rng.choice(["a", "b", "c", "d"], 2000)
    return df


def _replayed_noise(seed: int, n: int, x: np.ndarray, alpha: float) -> np.ndarray:
    """The noise an implementation drawing from the public seed would have added."""
    sd = np.sqrt(alpha * x.var(axis=0, ddof=1))
    return np.random.default_rng(seed).standard_normal((n, x.shape[1])) * sd


def test_noise_cannot_be_subtracted_by_replaying_the_public_seed(table):
    alpha = 0.5
    release = tabular.add_noise(table, ["age", "income"], alpha, seed=0, measures=False)
    y = release.data[["age", "income"]].to_numpy()
    x = table[["age", "income"]].to_numpy()
    # replay the draws of the public seeds and subtract them: no original value comes back
    for seed in range(20):
        guess = y - _replayed_noise(seed, len(y), x, alpha)
        recovered = np.isclose(guess[:, None, 0], x[None, :, 0], rtol=0, atol=1e-6).any(axis=1)
        assert recovered.mean() < 0.01


def test_two_noise_releases_without_key_differ_and_with_key_repeat(table):
    a = tabular.add_noise(table, ["age"], 0.2, seed=0, measures=False)
    b = tabular.add_noise(table, ["age"], 0.2, seed=0, measures=False)
    assert a.data.to_csv(index=False) != b.data.to_csv(index=False)
    key = b"publisher secret key"
    c = tabular.add_noise(table, ["age"], 0.2, seed=0, key=key, measures=False)
    d = tabular.add_noise(table, ["age"], 0.2, seed=0, key=key, measures=False)
    assert c.data.to_csv(index=False) == d.data.to_csv(index=False)


def test_averaging_two_releases_joined_by_position_gains_nothing(table):
    """Averaging two noisy releases would halve the noise if they were row-aligned."""
    a = tabular.add_noise(table, ["age"], 0.5, measures=False)
    b = tabular.add_noise(table, ["age"], 0.5, measures=False)
    same_person = (np.asarray(a.source_index) == np.asarray(b.source_index)).sum()
    assert same_person <= 8  # a random pairing hits ~Poisson(1) records


@pytest.mark.parametrize(
    "make",
    [
        lambda t: tabular.add_noise(t, ["age", "income"], 0.1, measures=False),
        lambda t: tabular.rank_swap(t, ["age", "income"], 5, measures=False),
        lambda t: tabular.microaggregate(t, ["age", "income"], 5, measures=False),
        lambda t: tabular.pram(t, ["group"], measures=False),
        lambda t: tabular.recode(t, top={"age": 60}, sample=0.5, measures=False),
        lambda t: tabular.anonymize(
            t.assign(decade=(t["age"] // 10 * 10).clip(10, 70).astype(int).astype(str)),
            {"decade": DECADES, "group": GROUPS},
            models=[tabular.DifferentialPrivacy(2.0, 1e-3)],
            measures=False,
        ),
    ],
    ids=["noise", "rank-swap", "mdav", "pram", "recode", "safepub"],
)
def test_published_order_is_uncorrelated_with_input_order(table, make):
    release = make(table)
    source = table.index.get_indexer(release.source_index)
    rho = np.corrcoef(np.arange(source.size), source)[0, 1]
    assert abs(rho) < 4 / np.sqrt(source.size)  # four standard errors of chance


def test_swap_partners_and_pram_draws_are_not_replayable(table):
    swaps = [tabular.rank_swap(table, ["income"], 10, measures=False) for _ in range(2)]
    moved = [s.data.set_axis(s.source_index).sort_index()["income"].to_numpy() for s in swaps]
    assert (moved[0] != moved[1]).mean() > 0.5
    prams = [tabular.pram(table, ["group"], keep=0.5, measures=False) for _ in range(2)]
    drawn = [p.data.set_axis(p.source_index).sort_index()["group"].to_numpy() for p in prams]
    assert (drawn[0] != drawn[1]).mean() > 0.2


def test_the_release_does_not_leak_the_link_to_input_rows(table):
    release = tabular.add_noise(table, ["age"], 0.2)
    text = release.to_json() + repr(release) + release.summary()
    assert "source_index" not in text
    assert "index" not in release.data.columns
