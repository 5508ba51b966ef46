"""The optimal lattice search: ARX's optima on Adult, and brute force on random tables."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tabular
from structanon import Hierarchy, InfeasibleError
from structanon.models import DistinctLDiversity, EntropyLDiversity, KAnonymity, TCloseness
from structanon.partition import encode_values
from tabular._lattice import EncodedTable, dense_groups
from tabular._optimal import optimal_generalization

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


def dm_star(data: pd.DataFrame, columns) -> int:
    sizes = data.groupby(list(columns)).size().to_numpy()
    return int((sizes.astype(np.int64) ** 2).sum())


# ----------------------------------------------------------------------------- ARX figures
ARX_DM_STAR = [
    ([KAnonymity(2)], 49_216_658),
    ([KAnonymity(5)], 55_170_356),
    ([KAnonymity(10)], 55_170_356),
    ([KAnonymity(50)], 162_312_130),
    ([KAnonymity(5), DistinctLDiversity(3)], 55_170_356),
    ([KAnonymity(5), TCloseness(0.2)], 456_853_172),
]


@pytest.mark.parametrize(
    "models, expected", ARX_DM_STAR, ids=["k2", "k5", "k10", "k50", "k5-l3", "k5-t0.2"]
)
def test_dm_star_optimum_equals_arx(adult_full, adult_full_hierarchies, models, expected):
    release = tabular.anonymize(
        adult_full,
        adult_full_hierarchies,
        "occupation",
        models,
        algorithm="optimal",
        metric="discernibility",
        utility=False,
    )
    assert release.info["score"]["value"] == expected
    assert release.suppressed == 0
    # recomputed from the published table alone
    assert dm_star(release.data, QIS) == expected
    assert len(release.data) == len(adult_full)


def test_default_loss_optimum_equals_arx_levels(adult_full, adult_full_hierarchies):
    release = tabular.anonymize(
        adult_full,
        adult_full_hierarchies,
        "occupation",
        [KAnonymity(5)],
        metric="loss",
        utility=False,
    )
    assert [release.transformation[c] for c in QIS] == [0, 4, 0, 1, 3, 2, 2]
    assert release.data.groupby(QIS).ngroups == 20  # ARX reports 20 classes


def test_age_labels_come_from_the_hierarchy_table(adult_full, adult_full_hierarchies):
    # the Adult age hierarchy is shifted by one: 20 sits under "15-19"
    h = adult_full_hierarchies["age"]
    assert h.generalize([20], 1).tolist() == ["15-19"]
    release = tabular.anonymize(
        adult_full, adult_full_hierarchies, None, [KAnonymity(2)], utility=False
    )
    level = release.transformation["age"]
    expected = pd.Series(h.generalize(adult_full["age"], level)).value_counts().sort_index()
    got = release.data["age"].value_counts().sort_index()
    pd.testing.assert_series_equal(got, expected, check_names=False)


# ----------------------------------------------------------------------------- brute force
def random_hierarchy(name: str, n_leaves: int, height: int) -> Hierarchy:
    rows = []
    for i in range(n_leaves):
        row = [f"{name}{i}"] + [f"{name}{i >> lv}/{lv}" for lv in range(1, height)] + ["*"]
        rows.append(row)
    return Hierarchy(rows, name=name)


def brute_force(df, hierarchies, sensitive, k, l_div, t, max_suppressed, metric, entropy_l=None):
    """Exhaustive reference: every node, classes by pandas, models re-implemented."""
    names = list(hierarchies)
    best = None
    n = len(df)
    for levels in itertools.product(*[range(hierarchies[c].height + 1) for c in names]):
        gen = pd.DataFrame(
            {c: hierarchies[c].generalize(df[c], lv) for c, lv in zip(names, levels)}
        )
        cls = gen.astype(str).agg("|".join, axis=1).to_numpy()
        classes = sorted(set(cls))
        members = {g: np.flatnonzero(cls == g) for g in classes}
        kept = set(classes)
        sens = df[sensitive].to_numpy()
        while kept:
            rows = np.concatenate([members[g] for g in sorted(kept)])
            ref = pd.Series(sens[rows]).value_counts(normalize=True)
            failing = set()
            for g in kept:
                values = pd.Series(sens[members[g]])
                if len(values) < k:
                    failing.add(g)
                    continue
                if l_div and values.nunique() < l_div:
                    failing.add(g)
                    continue
                if entropy_l:
                    p = values.value_counts(normalize=True).to_numpy()
                    if np.exp(-(p * np.log(p)).sum()) < entropy_l - 1e-9:
                        failing.add(g)
                        continue
                if t is not None:
                    p = values.value_counts(normalize=True).reindex(ref.index, fill_value=0)
                    if 0.5 * np.abs(p - ref).sum() > t + 1e-9:
                        failing.add(g)
            if not failing:
                break
            kept -= failing
            if t is None and entropy_l is None:
                break
        suppressed = sum(len(members[g]) for g in classes if g not in kept)
        if suppressed > max_suppressed or not kept:
            continue
        sizes = np.array([len(members[g]) for g in classes])
        if metric == "discernibility":
            score = float((sizes**2).sum())
        elif metric == "height":
            score = float(sum(levels))
        elif metric == "precision":
            score = np.mean(
                [
                    ((n - suppressed) * lv / hierarchies[c].height + suppressed) / n
                    for c, lv in zip(names, levels)
                ]
            )
        else:  # ARX loss
            product = 1.0
            kept_rows = np.concatenate([members[g] for g in sorted(kept)])
            for c, lv in zip(names, levels):
                rows_table = hierarchies[c].to_rows()
                d = len(rows_table)
                count = {}
                for r in rows_table:
                    count[r[lv]] = count.get(r[lv], 0) + 1
                total = sum(count[v] / d for v in gen[c].to_numpy()[kept_rows]) + suppressed
                low = n / d
                value = max((total - low) / (n - low), 0.0)
                product *= (value + 1) ** (1 / len(names))
            score = product - 1
        if best is None or score < best[0] - 1e-12:
            best = (score, levels)
    return best


def draw_table(draw, min_rows: int, max_rows: int = 40) -> tuple[pd.DataFrame, dict]:
    """A small table of 2-3 QIs on random hierarchies (1-3 levels) and a skewed sensitive
    column ``s``, drawn inside a hypothesis strategy."""
    hierarchies = {}
    for j in range(draw(st.integers(2, 3))):
        height = draw(st.integers(1, 3))
        leaves = draw(st.integers(2, 2**height + 1))
        hierarchies[f"q{j}"] = random_hierarchy(f"q{j}", leaves, height)
    n = draw(st.integers(min_rows, max_rows))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    df = pd.DataFrame({c: rng.choice(h.leaves, size=n) for c, h in hierarchies.items()})
    df["s"] = rng.choice(["x", "y", "z"], size=n, p=[0.5, 0.3, 0.2])
    return df, hierarchies


@st.composite
def small_problem(draw):
    df, hierarchies = draw_table(draw, min_rows=6)
    k = draw(st.integers(1, 4))
    l_div = draw(st.sampled_from([None, 2]))
    t = draw(st.sampled_from([None, None, 0.3, 0.5]))
    entropy_l = draw(st.sampled_from([None, None, 1.5]))
    limit = draw(st.sampled_from([0, 0, 1, 3, 8]))
    metric = draw(st.sampled_from(["discernibility", "loss", "precision", "height"]))
    return df, hierarchies, k, l_div, t, entropy_l, limit, metric


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_problem())
def test_search_matches_brute_force(problem):
    df, hierarchies, k, l_div, t, entropy_l, limit, metric = problem
    models = (
        [KAnonymity(k)]
        + ([DistinctLDiversity(l_div)] if l_div else [])
        + ([TCloseness(t)] if t is not None else [])
        + ([EntropyLDiversity(entropy_l)] if entropy_l else [])
    )
    expected = brute_force(df, hierarchies, "s", k, l_div, t, limit, metric, entropy_l)
    names = list(hierarchies)
    codes = [hierarchies[c].encode(df[c]) for c in names]
    sens, domain = encode_values(df["s"].to_numpy())
    enc = EncodedTable(codes, [hierarchies[c] for c in names], sens, domain.size)
    if expected is None:
        with pytest.raises(InfeasibleError):
            optimal_generalization(enc, models, limit, metric, domain)
        return
    result = optimal_generalization(enc, models, limit, metric, domain)
    assert result.score == pytest.approx(expected[0], rel=1e-9, abs=1e-12)
    assert result.best.suppressed <= limit


def test_non_monotone_model_with_suppression_finds_the_true_optimum():
    # A case where assuming monotonicity (tagging generalizations of a feasible node as
    # feasible) returns a worse node (loss 0.589 instead of 0.429).
    hierarchies = {"a": random_hierarchy("a", 4, 2), "b": random_hierarchy("b", 3, 2)}
    df = pd.DataFrame(
        {
            "a": [
                "a1",
                "a0",
                "a3",
                "a0",
                "a1",
                "a2",
                "a3",
                "a2",
                "a3",
                "a0",
                "a1",
                "a2",
                "a1",
                "a1",
                "a1",
                "a0",
                "a0",
                "a2",
                "a1",
            ],
            "b": [
                "b2",
                "b0",
                "b2",
                "b0",
                "b0",
                "b0",
                "b1",
                "b0",
                "b2",
                "b2",
                "b2",
                "b1",
                "b0",
                "b0",
                "b1",
                "b1",
                "b1",
                "b1",
                "b1",
            ],
            "s": list("zxxxxxxxyxyxxxxxxyz"),
        }
    )
    models = [KAnonymity(2), EntropyLDiversity(1.5)]
    expected = brute_force(df, hierarchies, "s", 2, None, None, 8, "loss", entropy_l=1.5)
    codes = [hierarchies[c].encode(df[c]) for c in hierarchies]
    sens, domain = encode_values(df["s"].to_numpy())
    enc = EncodedTable(codes, list(hierarchies.values()), sens, domain.size)
    result = optimal_generalization(enc, models, 8, "loss", domain)
    assert result.score == pytest.approx(expected[0])
    assert result.score == pytest.approx(0.42931322252634385)
    assert not result.monotone


def test_entropy_l_diversity_with_suppression_is_searched_exhaustively(
    adult_sample, adult_sample_hierarchies
):
    # entropy l-diversity is not monotone under suppression: no pruning may be applied
    qi = {c: adult_sample_hierarchies[c] for c in ["sex", "age", "race"]}
    codes = [h.encode(adult_sample[c]) for c, h in qi.items()]
    sens, domain = encode_values(adult_sample["occupation"].to_numpy())
    enc = EncodedTable(codes, list(qi.values()), sens, domain.size)
    result = optimal_generalization(
        enc, [KAnonymity(3), EntropyLDiversity(3)], 100, "discernibility", domain
    )
    assert not result.monotone
    assert result.best.suppressed <= 100


def test_dense_groups_survives_overflowing_radices():
    rng = np.random.default_rng(0)
    cols = [rng.integers(0, 2**40, size=500) for _ in range(3)]
    ids, m = dense_groups(cols, [2**40] * 3)
    expected = pd.DataFrame(np.stack(cols, 1)).groupby([0, 1, 2]).ngroup().to_numpy()
    # same partition of the rows (ids may be numbered differently)
    assert m == expected.max() + 1
    pairs = set(zip(ids.tolist(), expected.tolist()))
    assert len(pairs) == m


def test_infeasible_request_raises(adult_sample, adult_sample_hierarchies):
    with pytest.raises(InfeasibleError):
        tabular.anonymize(
            adult_sample,
            adult_sample_hierarchies,
            "occupation",
            [KAnonymity(2), DistinctLDiversity(100)],
            utility=False,
        )


def test_failing_top_node_does_not_end_a_non_monotone_search():
    """Entropy l-diversity with suppression is not monotone: the most general node fails
    (one class of 9 with 8 x and 1 y: exp H = 1.42 < 1.5, all 9 suppressed, limit 8), yet the
    original table passes by publishing the class {x, y} and suppressing the other 7 records."""
    rows = [("a0", "b0", "y"), ("a0", "b0", "x")] + [("a1", "b1", "x")] * 7
    df = pd.DataFrame(rows, columns=["qa", "qb", "s"])
    qis = {"qa": Hierarchy([["a0", "*"], ["a1", "*"]]), "qb": Hierarchy([["b0", "*"], ["b1", "*"]])}
    release = tabular.anonymize(
        df,
        quasi_identifiers=qis,
        sensitive="s",
        models=[EntropyLDiversity(1.5)],
        algorithm="optimal",
        suppression_limit=8 / 9,
        utility=False,
    )
    assert release.suppressed == 7
    assert release.transformation == {"qa": 0, "qb": 0}
    assert sorted(release.data["s"]) == ["x", "y"]
    with pytest.raises(InfeasibleError):
        tabular.anonymize(
            df,
            quasi_identifiers=qis,
            sensitive="s",
            models=[EntropyLDiversity(1.5)],
            algorithm="optimal",
            suppression_limit=6 / 9,
            utility=False,
        )
