"""(epsilon, delta)-differential privacy by SafePub, and OpenDP counts (issue 17)."""

from __future__ import annotations

import hashlib
import json
import math
import re

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
from tabular import _safepub
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
    "args",
    [(0, 1e-5), (-1, 1e-5), (1, 0), (1, 1), (1, 1e-5, 1.0), ("a", 1e-5), (1, 1e-5, 0.1, 0)],
)
def test_model_bad_parameters(args):
    with pytest.raises(InputError):
        DifferentialPrivacy(*args)


@pytest.mark.parametrize("epsilon, share, steps", [(1.0, 0.1, 100), (0.5, 0.3, 7), (2.0, 0.0, 1)])
def test_search_budget_adds_up_to_epsilon_search(epsilon, share, steps):
    model = DifferentialPrivacy(epsilon, 1e-5, search_share=share, steps=steps)
    assert model.steps == steps
    assert model.epsilon_step * steps + model.epsilon_final == pytest.approx(epsilon * share)
    assert model.epsilon_search + model.epsilon_anon == pytest.approx(epsilon)
    assert model.epsilon_step >= 0 and model.epsilon_final >= 0


class _Recorder:
    """Wraps the exponential mechanism: records the candidates and budget of every draw."""

    def __init__(self, real):
        self.real, self.calls = real, []

    def __call__(self, scores, epsilon, sensitivity, rng):
        chosen = self.real(scores, epsilon, sensitivity, rng)
        self.calls.append((len(scores), epsilon, sensitivity, chosen))
        return chosen


def test_walk_moves_to_predecessors_of_pivots_and_spends_the_budget(monkeypatch):
    heights = (3, 2, 4)
    model = DifferentialPrivacy(1.0, 1e-3, steps=12)
    recorder = _Recorder(_safepub._exponential_mechanism)
    monkeypatch.setattr(_safepub, "_exponential_mechanism", recorder)
    scored = []

    def score(nodes):
        scored.extend(nodes)
        return [-float(sum(v)) * 10 for v in nodes]  # any data score

    chosen, pivots = _safepub._walk(score, heights, model, np.random.default_rng(5))
    assert pivots[0] == heights  # starts at the top
    for i, p in enumerate(pivots[1:], 1):
        # a predecessor (one attribute one level finer) of an earlier pivot, not the pivot itself
        earlier = pivots[:i]
        assert any(
            sum(a - b for a, b in zip(q, p)) == 1 and all(a >= b for a, b in zip(q, p))
            for q in earlier
        )
        assert p != pivots[i - 1]
    assert chosen in pivots
    steps = [c for c in recorder.calls[:-1]]
    assert len(steps) == model.steps
    spent = sum(c[1] for c in recorder.calls)
    assert spent == pytest.approx(model.epsilon_search)
    assert recorder.calls[-1][0] == len(set(pivots))  # final draw among the visited pivots
    assert all(c[2] == model.k for c in recorder.calls)


def test_walk_stops_when_the_lattice_is_exhausted():
    model = DifferentialPrivacy(1.0, 1e-3, steps=50)
    chosen, pivots = _safepub._walk(
        lambda ns: [0.0] * len(ns), (1, 1), model, np.random.default_rng(0)
    )
    assert set(pivots) == {(1, 1), (0, 1), (1, 0), (0, 0)} and len(pivots) == 4
    assert chosen in pivots


def test_walk_is_reproducible_with_a_key_and_steps_change_the_stream():
    df, specs = _table(600, 2)
    runs = [
        tabular.anonymize(df, specs, models=[DifferentialPrivacy(1.0, 1e-3, steps=s)], key=KEY,
                          measures=False)
        for s in (20, 20, 21)
    ]  # fmt: skip
    assert runs[0].data.to_csv(index=False) == runs[1].data.to_csv(index=False)
    assert runs[0].info["transformation"] == runs[1].info["transformation"]
    assert runs[0].info["steps"] == 20 and runs[2].info["steps"] == 21
    assert 1 <= runs[0].info["pivots"] <= runs[0].info["lattice_nodes"]
    assert all(r.verify().passed for r in runs)


def test_a_strong_search_budget_finds_a_good_node():
    """With a large search budget the walk and the final draw concentrate on good nodes."""
    df, specs = _table(3000, 4)
    strong = DifferentialPrivacy(50.0, 1e-3, search_share=0.9, steps=10)
    release = tabular.anonymize(df, specs, models=[strong], key=KEY, measures=False)
    # the top (everything generalized) is the worst node here: the walk must leave it
    assert release.info["transformation"] != {"age": 2, "sex": 1}


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
    runs = []
    for _ in range(8):  # the walk may end where every class is suppressed (about 1 in 20 here)
        run = tabular.anonymize(df, specs, models=[model], measures=False)
        assert run.info["sampled"] == pytest.approx(model.beta * 4000, abs=5 * 31)
        runs += [run] if len(run.data) else []
        if len(runs) == 2:
            break
    assert len(runs) == 2
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
         "--steps", "15", "-o", str(out), "--report", str(report), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    k = doc["info"]["implied_k"]
    assert doc["info"]["steps"] == 15
    published = pd.read_csv(out)
    sizes = published.groupby(["age", "sex"]).size()
    assert sizes.empty or sizes.min() >= k
    # the input's size and what was left out are exact input figures: withheld
    assert doc["n_individuals"] is None and doc["suppressed"] is None
    assert "before" not in doc["risk"] and "sampled" not in doc["info"]
    assert "withheld" in report.read_text()
    # provenance names the input and nothing of it: its size told the number of records and
    # its SHA-256 whether any one record was in it (hash both candidate inputs)
    assert doc["provenance"]["inputs"][0] == {"name": "in.csv"}
    for text in (report.read_text(), result.output):
        # as a number of its own (not the digits of a float or of a longer figure)
        assert not re.search(rf"(?<![\d.]){path.stat().st_size}(?![\d.])", text)
        assert hashlib.sha256(path.read_bytes()).hexdigest() not in text
    result = CliRunner().invoke(
        cli, ["dp-counts", str(path), "--column", "sex", "--categories", "M,F", "--epsilon", "1"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "sex,dp_count"
    bad = CliRunner().invoke(
        cli, ["safepub", str(path), "--qi", "age", "--epsilon", "0", "-o", str(out)]
    )
    assert bad.exit_code == 2
    bad = CliRunner().invoke(
        cli, ["safepub", str(path), "--qi", "age", "--epsilon", "1", "--steps", "0", "-o", str(out)]
    )
    assert bad.exit_code == 2 and "--steps" in bad.output


def test_node_scores_count_classes_exactly_on_wide_keys():
    """Eight QIs of 300 values, whose packed class key would exceed int64 without being
    re-numbered: the suppressed counts equal an independent pandas group count."""
    import numpy as np
    import pandas as pd

    from structanon import Hierarchy
    from tabular._safepub import _node_scores

    rng = np.random.default_rng(3)
    hierarchies = [Hierarchy.from_intervals(range(300), widths=(10,)) for _ in range(8)]
    values = [rng.integers(0, 300, 2_000) for _ in hierarchies]
    codes = [h.encode(pd.Series(v)) for h, v in zip(hierarchies, values)]
    nodes = np.array([[0] * 8, [1] * 8, [0, 1] * 4])
    k = 2
    scores, suppressed = _node_scores(codes, hierarchies, nodes, k)
    for levels, got in zip(nodes, suppressed):
        frame = pd.DataFrame(
            {j: h.node_codes[c, lv] for j, (h, c, lv) in enumerate(zip(hierarchies, codes, levels))}
        )
        sizes = frame.groupby(list(frame.columns)).size()
        assert got == int(sizes[sizes < k].sum())


def test_attack_reports_of_neighbouring_inputs_tell_them_apart_only_by_the_release(tmp_path):
    """(epsilon, delta)-DP holds for the release; a report listing exact input figures
    (the input size, its sample uniques, the sample drawn) told an input from the same
    input less one record with certainty.  Every number a report gives about the input
    side must be absent: all that differs is what the release itself shows."""
    df, hierarchies = _table(600, 5)
    neighbour = df.drop(index=df.index[7])

    def numbers(frame):
        release = _safepub.safepub(frame, hierarchies, DifferentialPrivacy(2.0, 1e-3))
        doc = json.loads(release.to_json())
        published = {"risk": doc["risk"], "utility": doc["utility"]}
        return doc, published, release

    doc, _, release = numbers(df)
    assert release.n_individuals == 600  # the publisher still reads it in Python
    for text in (release.summary(), release._repr_html_(), repr(release)):
        assert "600" not in text.split("\n")[0]
    assert "withheld" in release.summary() and "of None>" in repr(release)
    other, _, _ = numbers(neighbour)
    for name in ("n_individuals", "suppressed"):
        assert doc[name] is None and other[name] is None
    assert set(doc["risk"]) == set(other["risk"]) == {"after"}


def test_timings_stay_in_python_for_a_dp_release(adult_sample, adult_sample_hierarchies):
    """The seconds each step takes grow with the input, whose size SafePub withholds: no
    output shows them (a very noisy proxy for n, but one no DP mechanism accounts for)."""
    qis = {c: adult_sample_hierarchies[c] for c in ("age", "sex")}
    release = tabular.anonymize(
        adult_sample, qis, None, [DifferentialPrivacy(1.0, 1e-5, search_share=0.1)], key=KEY
    )
    assert release.timings and "search" in release.timings  # the publisher keeps them
    assert release.to_dict()["timings"] == {}
    assert "Timings" not in release.summary()
    assert "timings" in release.withheld
