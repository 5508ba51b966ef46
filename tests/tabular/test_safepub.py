"""(epsilon, delta)-differential privacy by SafePub, and OpenDP counts (issue 17)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binom

import tabular
from structanon import Hierarchy, InputError
from structanon.models import KAnonymity
from tabular._safepub import DifferentialPrivacy, dp_counts, implied_k
from tabular.cli import cli

KEY = b"0123456789abcdef-safepub"


def literal_delta(k: int, epsilon: float, beta: float) -> float:
    """delta(k) of Li, Qardaji and Su, written as ARX loops over n (pmf summed term by term)."""
    gamma = (math.exp(epsilon) - 1 + beta) / math.exp(epsilon)
    n = math.ceil(k / gamma - 1)
    worst, bound = -1.0, math.inf
    while worst < bound:
        tail = sum(binom.pmf(j, n, beta) for j in range(math.floor(n * gamma) + 1, n + 1))
        worst = max(worst, tail)
        bound = math.exp(-n * (gamma * math.log(gamma / beta) - (gamma - beta)))
        n += 1
    return worst


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-3), (0.5, 1e-3), (2.0, 1e-3)])
def test_implied_k_is_the_smallest_k_whose_delta_is_small_enough(epsilon, delta):
    beta = 1 - math.exp(-epsilon)
    k = implied_k(epsilon, delta)
    assert literal_delta(k, epsilon, beta) <= delta
    assert literal_delta(k - 1, epsilon, beta) > delta


def test_model_splits_the_budget_and_reports_k_and_sampling_rate():
    model = DifferentialPrivacy(1.0, 1e-5, search_share=0.1)
    assert model.epsilon_anon == pytest.approx(0.9)
    assert model.beta == pytest.approx(1 - math.exp(-0.9))
    assert model.k == implied_k(0.9, 1e-5, model.beta)
    assert model.to_dict()["implied_k"] == model.k


@pytest.mark.parametrize(
    "args", [(0, 1e-5), (-1, 1e-5), (1, 0), (1, 1), (1, 1e-5, 1.0), ("a", 1e-5)]
)
def test_model_bad_parameters(args):
    with pytest.raises(InputError):
        DifferentialPrivacy(*args)


def _table(n: int, seed: int) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    rng = np.random.default_rng(seed)
    ages = rng.integers(20, 60, n)
    df = pd.DataFrame({"age": ages, "sex": rng.choice(["M", "F"], n), "d": rng.integers(0, 3, n)})
    specs = {
        "age": Hierarchy.from_intervals(range(20, 60), widths=(5, 20), start=20),
        "sex": Hierarchy([["M", "*"], ["F", "*"]]),
    }
    return df, specs


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(50, 600), seed=st.integers(0, 1000), epsilon=st.sampled_from([1.0, 2.0]))
def test_safepub_classes_reach_the_implied_k_and_every_record_is_accounted(n, seed, epsilon):
    df, specs = _table(n, seed)
    model = DifferentialPrivacy(epsilon, 1e-3)
    release = tabular.anonymize(df, specs, models=[model], seed=seed, key=KEY, measures=False)
    assert release.verify().passed
    published = release.data
    if len(published):
        assert published.groupby(["age", "sex"]).size().min() >= model.k
    info = release.info
    assert info["implied_k"] == model.k and info["sampling_rate"] == model.beta
    assert len(published) + release.suppressed == n
    assert len(published) <= info["sampled"] <= n
    # each published record is a distinct input record, with its untouched columns
    source = np.asarray(release.source_index)
    assert len(set(source.tolist())) == len(source)
    assert (df.loc[source, "d"].to_numpy() == published["d"].to_numpy()).all()


def test_sampling_rate_is_met_and_the_sample_is_secret():
    df, specs = _table(4000, 1)
    model = DifferentialPrivacy(1.0, 1e-5)
    runs = [tabular.anonymize(df, specs, models=[model], measures=False) for _ in range(2)]
    for run in runs:
        assert run.info["sampled"] == pytest.approx(model.beta * 4000, abs=5 * 31)
    sampled = [set(np.asarray(r.source_index).tolist()) for r in runs]
    assert sampled[0] != sampled[1]
    keyed = [tabular.anonymize(df, specs, models=[model], key=KEY, measures=False) for _ in "ab"]
    assert keyed[0].data.to_csv(index=False) == keyed[1].data.to_csv(index=False)


def test_differential_privacy_is_a_model_on_its_own():
    df, specs = _table(100, 0)
    with pytest.raises(InputError, match="on its own"):
        tabular.anonymize(df, specs, models=[DifferentialPrivacy(1, 1e-3), KAnonymity(2)])
    with pytest.raises(InputError, match="optimal"):
        tabular.anonymize(df, specs, models=[DifferentialPrivacy(1, 1e-3)], algorithm="datafly")


def test_dp_counts_through_opendp():
    values = ["a"] * 300 + ["b"] * 100 + ["z"] * 5
    counts = dp_counts(values, 1.0, ["a", "b"])
    assert list(counts.index) == ["a", "b", "(other)"]
    assert counts.dtype.kind == "i"
    # discrete Laplace of scale 1: an error above 40 has probability ~ e^-40
    assert np.abs(counts.to_numpy() - np.array([300, 100, 5])).max() < 40
    with pytest.raises(InputError, match="epsilon"):
        dp_counts(values, 0, ["a"])
    with pytest.raises(InputError, match="distinct"):
        dp_counts(values, 1, ["a", "a"])


def test_safepub_and_dp_counts_commands(tmp_path):
    df, _ = _table(800, 3)
    path = tmp_path / "in.csv"
    df.to_csv(path, index=False)
    rows = [[str(a), f"{a - (a - 20) % 5}-{a - (a - 20) % 5 + 4}", "*"] for a in range(20, 60)]
    (tmp_path / "h_age.csv").write_text("\n".join(";".join(r) for r in rows) + "\n")
    (tmp_path / "h_sex.csv").write_text("M;*\nF;*\n")
    out, report = tmp_path / "out.csv", tmp_path / "r.json"
    result = CliRunner().invoke(
        cli,
        ["safepub", str(path), "--qi", "age,sex", "--hierarchy", f"age={tmp_path / 'h_age.csv'}",
         "--hierarchy", f"sex={tmp_path / 'h_sex.csv'}", "--epsilon", "2", "--delta", "1e-3",
         "-o", str(out), "--report", str(report), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    k = doc["info"]["implied_k"]
    published = pd.read_csv(out)
    sizes = published.groupby(["age", "sex"]).size()
    assert sizes.empty or sizes.min() >= k
    assert len(published) + doc["suppressed"] == len(df)
    result = CliRunner().invoke(
        cli, ["dp-counts", str(path), "--column", "sex", "--categories", "M,F", "--epsilon", "1"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "sex,dp_count"
    bad = CliRunner().invoke(
        cli, ["safepub", str(path), "--qi", "age", "--epsilon", "0", "-o", str(out)]
    )
    assert bad.exit_code == 2
