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


def _report_text(release) -> str:
    """The JSON report and the summary, but the list of the names withheld."""
    import json

    shown = {k: v for k, v in release.to_dict().items() if k != "withheld"}
    return json.dumps(shown) + release.summary()


def _moments_from(utility: dict, y: np.ndarray) -> list[tuple[float, float]]:
    """(sum, sum of squares) of the input column, per sign of the mean change, as an
    attacker computes them from a report's variance ratio and mean change."""
    n, var_in = len(y), y.var(ddof=1) / utility["variance_ratio"][0]
    shift = utility["mean_change_sd_max"] * np.sqrt(var_in)
    return [(n * m, (n - 1) * var_in + n * m * m) for m in (y.mean() - shift, y.mean() + shift)]


def test_noise_reports_of_neighbours_give_no_input_moments(table):
    """The variance ratio and mean change, with the published column, gave the input's
    exact mean and variance: two reports of tables one person apart gave that person's
    true, un-noised value."""
    person = 17
    a = tabular.add_noise(table, ["age"], 0.5)
    b = tabular.add_noise(table.drop(index=person), ["age"], 0.5)
    # the figures do give the person away (this is why outputs withhold them) ...
    best = min(
        (abs((qa - qb) - (sa - sb) ** 2), sa - sb)
        for sa, qa in _moments_from(a.utility, a.data["age"].to_numpy(float))
        for sb, qb in _moments_from(b.utility, b.data["age"].to_numpy(float))
    )
    assert best[1] == pytest.approx(table["age"][person], abs=1e-6)
    # ... and no report, summary or JSON holds them, nor the input's own risk figures
    for release in (a, b):
        shown = release.to_dict()
        assert "variance_ratio" not in shown["utility"]
        assert "mean_change_sd_max" not in shown["utility"] and "before" not in shown["risk"]
        assert {"sse_sst", "il1s"} <= set(shown["utility"])  # the masking's own error stays
        assert "variance_ratio" not in _report_text(release)


def test_pram_reports_of_neighbours_give_no_input_counts(table):
    """A binary column's marginal TVD (or the input's smallest class in the risk before)
    with the published counts gave the input's exact counts, which the invariant matrix
    is withheld to hide: two neighbours' reports gave the removed person's value."""
    df = table.assign(sex=np.where(table["age"] > 40, "F", "M"))
    person = int(np.flatnonzero(df["sex"] == "F")[0])
    a = tabular.pram(df, ["sex"], keep=0.7)
    b = tabular.pram(df.drop(index=person), ["sex"], keep=0.7)

    def input_f_count(release) -> set[int]:
        f = int((release.data["sex"] == "F").sum())
        tvd = release.utility["sex_marginal_tvd"] * len(release.data)
        return {round(f - tvd), round(f + tvd)}

    truth = int((df["sex"] == "F").sum())
    assert truth in input_f_count(a) and truth - 1 in input_f_count(b)
    for release in (a, b):
        shown = release.to_dict()
        assert "sex_marginal_tvd" not in shown["utility"] and "before" not in shown["risk"]
        assert "sex_changed_share" in shown["utility"]
        text = _report_text(release)
        assert "marginal_tvd" not in text and "individual_risk_max" in text  # after only
