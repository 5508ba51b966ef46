"""Utility metrics on hand-computed examples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from structanon import Hierarchy
from tabular import metrics

H = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]], name="x")


def test_discernibility_star_and_c_avg():
    released = pd.DataFrame({"x": ["ab", "ab", "ab", "cd"]})
    assert metrics.discernibility_star(released, ["x"]) == 9 + 1
    assert metrics.average_class_size(released, ["x"], k=2) == pytest.approx(4 / 2 / 2)


def test_ncp_gcp_with_suppression():
    released = pd.DataFrame({"x": ["ab", "a", "*"]})
    # ab covers 2 of 4 leaves -> 1/3; a -> 0; * -> 1
    assert metrics.ncp(released, {"x": H})["x"] == pytest.approx((1 / 3 + 0 + 1) / 3)
    # one more record was suppressed: it costs 1
    assert metrics.gcp(released, {"x": H}, n=4) == pytest.approx((1 / 3 + 0 + 1 + 1) / 4)


def test_ncp_of_numeric_ranges():
    original = pd.DataFrame({"age": [20, 30, 40, 60]})
    released = pd.DataFrame({"age": ["20-30", "20-30", "40", "60"]})
    assert metrics.ncp(released, {"age": "numeric"}, original)["age"] == pytest.approx(
        (10 / 40 * 2) / 4
    )


def test_precision_height_and_loss():
    t = {"x": 1}
    assert metrics.generalization_height(t) == 1
    assert metrics.precision(t, {"x": H}, n=4) == pytest.approx(0.5)
    assert metrics.precision(t, {"x": H}, n=4, suppressed=2) == pytest.approx((2 * 0.5 + 2) / 4)
    released = pd.DataFrame({"x": ["ab", "ab", "cd", "cd"]})
    # every record covers 2 of 4 leaves: sum of shares 2; (2 - 1) / (4 - 1)
    assert metrics.loss(t, released, {"x": H}, n=4) == pytest.approx(1 / 3)


def test_ambiguity_and_non_uniform_entropy():
    released = pd.DataFrame({"x": ["ab", "a", "cd", "*"]})
    assert metrics.ambiguity(released, {"x": H}) == pytest.approx((2 + 1 + 2 + 4) / 4)
    original = pd.DataFrame({"x": ["a", "a", "b", "c"]})
    generalized = pd.DataFrame({"x": ["ab", "ab", "ab", "c"]})
    expected = -(2 * math.log2(2 / 3) + math.log2(1 / 3))
    assert metrics.non_uniform_entropy(original, generalized, ["x"]) == pytest.approx(expected)


def test_sse_against_class_means():
    original = pd.DataFrame({"age": [20, 22, 30, 31]})
    assert metrics.sse(original, np.array([0, 0, 1, -1]), ["age"]) == pytest.approx(2.0)


def test_count_query_error_is_zero_without_generalization_and_seeded():
    rng = np.random.default_rng(0)
    original = pd.DataFrame(
        {"x": rng.choice(list("abcd"), 200), "y": rng.choice(list("abcd"), 200)}
    )
    qi = {"x": H, "y": H}
    exact = metrics.count_query_error(original, original, qi, n_queries=50, seed=1)
    assert exact["mean"] == pytest.approx(0.0)
    released = original.assign(x=H.generalize(original["x"], 1))
    a = metrics.count_query_error(original, released, qi, n_queries=50, seed=1)
    b = metrics.count_query_error(original, released, qi, n_queries=50, seed=1)
    assert a == b and a["mean"] > 0


def test_count_query_error_uniform_spread_estimate():
    original = pd.DataFrame({"x": ["a", "a", "a", "b"]})
    released = pd.DataFrame({"x": ["ab"] * 4})
    # a query selecting one leaf; selecting "a" gives est 2 vs 3, "b" gives 2 vs 1, etc.
    out = metrics.count_query_error(
        original, released, {"x": H}, n_queries=200, dimension=1, selectivity=0.25, seed=0
    )
    assert 0 < out["mean"] < 2


def test_classifier_accuracy_drops_when_features_are_erased():
    rng = np.random.default_rng(0)
    x = rng.choice(list("abcd"), 400)
    original = pd.DataFrame({"x": x, "target": np.where(np.isin(x, ["a", "b"]), "yes", "no")})
    released = original.assign(x="*")
    acc = metrics.classifier_accuracy(original, released, ["x"], "target", seed=0)
    assert acc["original"] == pytest.approx(1.0)
    assert acc["released"] < 0.8
