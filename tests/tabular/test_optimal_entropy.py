"""ARX's non-uniform entropy quality models: exact scores, exhaustive search, ARX's optima."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tabular
from structanon import Hierarchy, InfeasibleError
from structanon.models import EntropyLDiversity, KAnonymity, TCloseness
from structanon.partition import encode_values
from tabular._lattice import EncodedTable
from tabular._optimal import (
    QUALITY_MODELS,
    SearchContext,
    _Lattice,
    class_outcome,
    optimal_generalization,
    quality_model,
)
from tests._support import SHARED_DATA, shared_file
from tests.tabular.test_optimal import draw_table, random_hierarchy

ENTROPY_METRICS = ["entropy", "entropy-nonmonotonic"]


def entropy_by_records(
    df: pd.DataFrame, hierarchies: dict, levels, suppressed: np.ndarray, monotone: bool
) -> float:
    """Non-uniform entropy recomputed record by record (the definition ARX implements).

    Every record and QI costs ``log2(#records sharing its generalized value / #records
    sharing its original value)``, both counted in the input; the non-monotone variant adds,
    per QI, the entropy (in bits, times their number) of the suppressed records' generalized
    values.
    """
    total = 0.0
    for (column, h), level in zip(hierarchies.items(), levels):
        original = df[column].astype(str).to_numpy()
        general = np.asarray(h.generalize(df[column], level)).astype(str)
        n_original = pd.Series(original).value_counts()
        n_general = pd.Series(general).value_counts()
        for o, g in zip(original, general):
            total += math.log2(n_general[g] / n_original[o])
        if not monotone and suppressed.any():
            s = int(suppressed.sum())
            for c in pd.Series(general[suppressed]).value_counts():
                total += c * math.log2(s / c)
    return total


def node_classes(df: pd.DataFrame, hierarchies: dict):
    """Every node of the lattice with each record's class (its generalized values joined,
    by pandas) and each class's records."""
    names = list(hierarchies)
    for levels in itertools.product(*[range(hierarchies[c].height + 1) for c in names]):
        gen = pd.DataFrame(
            {c: hierarchies[c].generalize(df[c], lv) for c, lv in zip(names, levels)}
        )
        key = gen.astype(str).agg("|".join, axis=1).to_numpy()
        yield levels, key, {g: np.flatnonzero(key == g) for g in sorted(set(key))}


def reference_score(
    metric: str, df: pd.DataFrame, hierarchies: dict, levels, key, suppressed: np.ndarray
) -> float:
    """A node's score recomputed from its definition (``key``: each record's class)."""
    n = len(df)
    if metric == "discernibility":
        return float((pd.Series(key).value_counts().to_numpy() ** 2).sum())
    if metric == "height":
        return float(sum(levels))
    if metric == "precision":
        s = int(suppressed.sum())
        shares = [((n - s) * lv / h.height + s) / n for h, lv in zip(hierarchies.values(), levels)]
        return float(np.mean(shares))
    return entropy_by_records(df, hierarchies, levels, suppressed, monotone=metric == "entropy")


def _encode(df: pd.DataFrame, hierarchies: dict, sensitive: str = "s"):
    codes = [h.encode(df[c]) for c, h in hierarchies.items()]
    sens, domain = encode_values(df[sensitive].to_numpy())
    return EncodedTable(codes, list(hierarchies.values()), sens, domain.size), domain


def _problem(seed: int, n: int = 40):
    rng = np.random.default_rng(seed)
    hierarchies = {"a": random_hierarchy("a", 5, 3), "b": random_hierarchy("b", 4, 2)}
    df = pd.DataFrame({c: rng.choice(h.leaves, size=n) for c, h in hierarchies.items()})
    df["s"] = rng.choice(["x", "y", "z"], size=n, p=[0.6, 0.3, 0.1])
    return df, hierarchies


def test_entropy_metrics_are_listed_and_flagged():
    assert set(ENTROPY_METRICS) <= set(QUALITY_MODELS)
    assert quality_model("entropy").monotone_with_suppression
    assert not quality_model("entropy-nonmonotonic").monotone_with_suppression


@pytest.mark.parametrize("metric", ENTROPY_METRICS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_entropy_score_equals_the_record_by_record_definition(metric, seed):
    """Every node of a small lattice, with classes failing 3-anonymity suppressed."""
    df, hierarchies = _problem(seed)
    enc, domain = _encode(df, hierarchies)
    lattice = _Lattice(enc.heights)
    ctx = SearchContext.build(enc, lattice)
    model = quality_model(metric)
    bounds = model.lower_bounds(ctx)
    for i in range(lattice.n_nodes):
        node = lattice.node(i)
        classes, table = enc.record_classes(node)
        out = class_outcome(table, [KAnonymity(3)], domain, node)
        suppressed = ~out.ok[classes]
        assert int(suppressed.sum()) == out.suppressed
        expected = entropy_by_records(
            df, hierarchies, node, suppressed, monotone=metric == "entropy"
        )
        assert model.score(out, ctx) == pytest.approx(expected, rel=1e-12, abs=1e-9)
        assert bounds[i] <= expected + 1e-9
        assert model.lower_bound(i, ctx) == pytest.approx(
            entropy_by_records(df, hierarchies, node, suppressed, monotone=True)
        )


def suppressed_until_stable(n: int, members: dict, failing) -> np.ndarray:
    """The records one node suppresses, as the verifier measures it: the classes that
    ``failing(kept, released)`` names (``kept``: the classes still released, ``released``:
    their records) are taken out, again and again until none fails."""
    kept = set(members)
    while kept:
        released = np.concatenate([members[g] for g in sorted(kept)])
        bad = failing(kept, released)
        if not bad:
            break
        kept -= bad
    suppressed = np.zeros(n, dtype=bool)
    for g in set(members) - kept:
        suppressed[members[g]] = True
    return suppressed


def exhaustive(df, hierarchies, models, limit, metric):
    """Every node: classes by pandas, suppression repeated as the verifier measures it."""
    sens = df["s"].to_numpy()
    best = None
    for levels, _, members in node_classes(df, hierarchies):

        def failing(kept, released, members=members):
            values, counts = np.unique(sens[released], return_counts=True)
            reference = dict(zip(values, counts / counts.sum()))
            bad = set()
            for g in kept:
                rows = sens[members[g]]
                for model in models:
                    if isinstance(model, KAnonymity) and rows.size < model.k:
                        bad.add(g)
                    elif isinstance(model, EntropyLDiversity):
                        p = np.unique(rows, return_counts=True)[1] / rows.size
                        if np.exp(-(p * np.log(p)).sum()) < model.l - 1e-9:
                            bad.add(g)
                    elif isinstance(model, TCloseness):
                        share = {v: float((rows == v).mean()) for v in reference}
                        emd = 0.5 * sum(abs(share[v] - reference[v]) for v in reference)
                        if emd > model.t + 1e-9:
                            bad.add(g)
            return bad

        suppressed = suppressed_until_stable(len(df), members, failing)
        if int(suppressed.sum()) > limit or suppressed.all():
            continue
        score = entropy_by_records(
            df, hierarchies, levels, suppressed, monotone=metric == "entropy"
        )
        if best is None or score < best[0] - 1e-9:
            best = (score, levels)
    return best


@st.composite
def small_problem(draw):
    df, hierarchies = draw_table(draw, min_rows=6)
    models = [KAnonymity(draw(st.integers(1, 4)))]
    extra = draw(st.sampled_from([None, "t", "entropy-l"]))
    if extra == "t":
        models.append(TCloseness(draw(st.sampled_from([0.3, 0.5]))))
    elif extra == "entropy-l":
        models.append(EntropyLDiversity(1.5))
    limit = draw(st.sampled_from([0, 0, 1, 3, 8]))
    metric = draw(st.sampled_from(ENTROPY_METRICS))
    return df, hierarchies, models, limit, metric


def assert_search_finds(expected, df, hierarchies, models, limit, metric):
    """The optimal search finds the exhaustive search's score ``expected[0]`` within the
    suppression limit, or says infeasible where ``expected`` is None."""
    enc, domain = _encode(df, hierarchies)
    if expected is None:
        with pytest.raises(InfeasibleError):
            optimal_generalization(enc, models, limit, metric, domain)
        return
    result = optimal_generalization(enc, models, limit, metric, domain)
    assert result.score == pytest.approx(expected[0], rel=1e-9, abs=1e-9)
    assert result.best.suppressed <= limit


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_problem())
def test_search_matches_exhaustive_search_for_entropy_metrics(problem):
    df, hierarchies, models, limit, metric = problem
    assert_search_finds(
        exhaustive(df, hierarchies, models, limit, metric), df, hierarchies, models, limit, metric
    )


# ----------------------------------------------------------------------------- ARX's optima
# ARX 3.9.2's JUnit cases on Adult (TestAnonymizationCombinations, TestAnonymizationLDiversity,
# TestAnonymizationKAnonymity): suppression limit, quality model, models, ARX's optimum.
QI8 = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "salary-class",
]
QI9 = QI8[:7] + ["occupation", "salary-class"]
ARX_ENTROPY = [
    ("k5-s0", QI8, 0.0, "entropy", [KAnonymity(5)], 324620.5269918692, [1, 1, 1, 1, 3, 2, 2, 1]),
    (
        "k5-s5-nm",
        QI8,
        0.05,
        "entropy-nonmonotonic",
        [KAnonymity(5)],
        180132.40848244698,
        [0, 0, 1, 1, 2, 2, 2, 0],
    ),
    (
        "entropy-l-s0-nm",
        QI8,
        0.0,
        "entropy-nonmonotonic",
        [EntropyLDiversity(5)],
        324620.5269918692,
        [1, 1, 1, 1, 3, 2, 2, 1],
    ),
    ("k100-s0-9qi", QI9, 0.0, "entropy", [KAnonymity(100)], 453196.8932458743, None),
]


@pytest.fixture(scope="module")
def adult_9():
    df = pd.read_csv(shared_file("adult/adult.csv"), sep=";")
    path = SHARED_DATA / "adult"
    hierarchies = {c: Hierarchy.from_csv(path / f"adult_hierarchy_{c}.csv", name=c) for c in QI9}
    return df, hierarchies


@pytest.mark.parametrize(
    "qis, limit, metric, models, expected, levels",
    [case[1:] for case in ARX_ENTROPY],
    ids=[case[0] for case in ARX_ENTROPY],
)
def test_entropy_optimum_equals_arx(adult_9, qis, limit, metric, models, expected, levels):
    df, hierarchies = adult_9
    release = tabular.anonymize(
        df,
        {c: hierarchies[c] for c in qis},
        None if "occupation" in qis else "occupation",
        models,
        suppression_limit=limit,
        metric=metric,
        measures=False,
        key=b"e" * 32,
    )
    assert release.info["score"]["value"] == pytest.approx(expected, rel=1e-12)
    if levels is not None:
        assert [release.transformation[c] for c in qis] == levels
    # the score recomputed from the input and the published levels alone
    suppressed = np.zeros(len(df), dtype=bool)
    if release.suppressed and metric != "entropy":
        kept = release.source_index
        suppressed = ~df.index.isin(kept)
        assert int(suppressed.sum()) == release.suppressed
    recomputed = entropy_by_records(
        df,
        {c: hierarchies[c] for c in qis},
        [release.transformation[c] for c in qis],
        suppressed,
        monotone=metric == "entropy",
    )
    assert recomputed == pytest.approx(expected, rel=1e-9)
