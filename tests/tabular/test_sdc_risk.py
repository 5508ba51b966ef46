"""Disclosure risk of perturbed data (tabular.risk), checked against brute force."""

from __future__ import annotations

from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon import InputError
from tabular import risk


def brute_linkage(original: np.ndarray, masked: np.ndarray) -> float:
    """Expected share of records whose own masked row is nearest (ties split), by loops."""
    total = 0.0
    for i, x in enumerate(original):
        d = [float(np.sum((x - y) ** 2)) for y in masked]
        best = min(d)
        nearest = [j for j, v in enumerate(d) if v <= best + 1e-9]
        total += (i in nearest) / len(nearest)
    return total / len(original)


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=25),
    shift=st.integers(0, 2),
)
def test_distance_linkage_matches_brute_force(values, shift):
    original = pd.DataFrame(values, columns=["a", "b"]).astype(float)
    masked = original.copy()
    masked["a"] = (masked["a"] + shift) % 6
    x, y = original.to_numpy(), masked.to_numpy()
    sd = x.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    expected = brute_linkage((x - x.mean(0)) / sd, (y - x.mean(0)) / sd)
    assert risk.distance_linkage(original, masked, ["a", "b"]) == pytest.approx(expected)


def test_distance_linkage_of_categorical_columns_and_unpublished_records():
    original = pd.DataFrame({"c": ["x", "y", "z", "w"]})
    assert risk.distance_linkage(original, original, categorical=["c"]) == 1.0
    # only rows 0 and 2 published (masked row j is original true_rows[j])
    masked = original.iloc[[2, 0]].reset_index(drop=True)
    assert risk.distance_linkage(original, masked, [], ["c"], true_rows=[2, 0]) == 0.5


def test_interval_disclosure_rank_and_sd():
    original = pd.DataFrame({"x": np.arange(10.0)})
    masked = original + 0.2  # within 0.1 sd (0.30) and within one rank
    assert risk.interval_disclosure(original, masked, ["x"], p=0.1, method="sd") == 1.0
    assert risk.interval_disclosure(original, masked, ["x"], p=0.1, method="rank") == 1.0
    far = original + 1.4  # rank interval [x + 1, x + 3], clipped at the top for x = 8, 9
    assert risk.interval_disclosure(original, far, ["x"], p=0.1, method="sd") == 0.0
    assert risk.interval_disclosure(original, far, ["x"], p=0.1, method="rank") == pytest.approx(
        0.2
    )
    with pytest.raises(InputError, match="method"):
        risk.interval_disclosure(original, masked, ["x"], method="box")


def test_individual_risk_is_one_over_class_size_without_weights():
    df = pd.DataFrame({"a": ["x", "x", "y", "z", "z", "z"]})
    out = risk.individual_risk(df, ["a"])
    assert out["expected_reidentifications"] == pytest.approx(3.0)
    assert out["individual_risk_max"] == 1.0


def test_individual_risk_with_sampling_weights_follows_the_benedetti_franconi_forms():
    df = pd.DataFrame({"a": ["x", "y", "y", "z", "z", "z", "z"]})
    out = risk.individual_risk(df, ["a"], weights=4.0)
    p = 0.25
    q = p / (1 - p)
    unique = q * np.log(1 / p)
    pair = q - q**2 * np.log(1 / p)
    four = p / (4 - (1 - p))
    expected = (unique + 2 * pair + 4 * four) / 7
    assert out["individual_risk_mean"] == pytest.approx(expected)
    with pytest.raises(InputError, match="weights"):
        risk.individual_risk(df, ["a"], weights=0.5)


def brute_suda(df: pd.DataFrame, keys: list[str], max_size: int) -> tuple[int, list[float]]:
    rows = df[keys].astype(str).to_numpy().tolist()
    m = len(keys)
    scores = []
    for row in rows:
        score = 0.0
        for size in range(1, max_size + 1):
            for subset in combinations(range(m), size):
                unique = sum(all(r[j] == row[j] for j in subset) for r in rows) == 1
                minimal = unique and not any(
                    sum(all(r[j] == row[j] for j in sub) for r in rows) == 1
                    for sub in combinations(subset, size - 1)
                    if sub
                )
                if minimal:
                    score += factorial(m - size)
        scores.append(score)
    return sum(s > 0 for s in scores), scores


@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from("ab"), st.sampled_from("xyz"), st.sampled_from("pq")),
        min_size=1,
        max_size=15,
    )
)
def test_special_uniques_match_brute_force(rows):
    df = pd.DataFrame(rows, columns=["k1", "k2", "k3"])
    count, scores = brute_suda(df, ["k1", "k2", "k3"], 3)
    out = risk.special_uniques(df, ["k1", "k2", "k3"], max_size=3)
    assert out["special_uniques"] == count
    assert out["suda_score_max"] == pytest.approx(max(scores))
    assert out["suda_score_mean"] == pytest.approx(float(np.mean(scores)))


def test_probabilistic_linkage_finds_an_unmasked_file_and_loses_a_noisy_one():
    rng = np.random.default_rng(0)
    original = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    same = risk.probabilistic_linkage(original, original, ["a", "b", "c"], max_records=80)
    noisy = original + rng.normal(scale=2.0, size=original.shape)
    lost = risk.probabilistic_linkage(original, noisy, ["a", "b", "c"], max_records=80)
    assert same["chance"] == pytest.approx(1 / 80)
    assert same["rate"] > 0.3
    assert lost["rate"] < same["rate"]


def test_numpy_fellegi_sunter_em_agrees_with_recordlinkage_ecm():
    rng = np.random.default_rng(1)
    original = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    original["g"] = rng.choice(["x", "y", "z"], 200)
    masked = original.copy()
    masked[["a", "b"]] += rng.normal(scale=0.3, size=(200, 2))
    ours = risk.probabilistic_linkage(original, masked, ["a", "b"], ["g"], max_records=60)
    theirs = risk.probabilistic_linkage(
        original, masked, ["a", "b"], ["g"], max_records=60, engine="recordlinkage"
    )
    assert ours["rate"] == pytest.approx(theirs["rate"], abs=1e-9)
    with pytest.raises(InputError, match="engine"):
        risk.probabilistic_linkage(original, masked, ["a"], engine="splink")
