"""Bounds on the records that must be suppressed, for models not monotone with suppression.

With suppression, entropy and recursive (c, l)-diversity and t-closeness (measured against
the distribution of the records that are released) make feasibility non-monotone; the
search still prunes with a bound: per class a share ``e`` of its records (0 when the class
can be released, and ``size x e`` at most the records of the class that a finer node cannot
release), so the sum over a node's classes bounds from below what the node and every
specialization must suppress.  For t-closeness, the model's bound allows a drift: a released
subset missing a share ``f`` of the records is within EMD ``f`` of the whole table, so a
class within ``t`` of the released records is within ``t + f`` of the whole table's
distribution.  The search needs no drift: its node check measures every class against the
whole table first and never releases one that fails there.

* ``suppression_excess`` keeps its contract on random groups, checked with independent
  code: the EMD as half the L1 distance or a transport linear program (hierarchical ground
  distance), the fewest records to remove from a group as a linear program, the entropy
  and the recursive condition recomputed from the counts;
* the optimal search with the bound finds the optimum of an exhaustive search (classes by
  pandas, suppression repeated against the released records until no class fails);
* the bound does prune: on a fixed table it spares node checks and changes no result;
* every class the node check releases is within ``t`` of the whole table (EMD by the
  transport linear program on the records released, grouped by pandas), and the bound
  without drift spares checks that the drifted one makes, with the same optimum.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from structanon import Hierarchy
from structanon.models import (
    AlphaKAnonymity,
    BLikeness,
    DeltaDisclosure,
    EntropyLDiversity,
    KAnonymity,
    ProbabilisticLDiversity,
    RecursiveCLDiversity,
    TCloseness,
)
from tabular._optimal import _Lattice, _tag_cone, class_outcome, optimal_generalization
from tests.tabular.test_optimal import draw_table, random_hierarchy
from tests.tabular.test_optimal_entropy import (
    _encode,
    assert_search_finds,
    node_classes,
    reference_score,
    suppressed_until_stable,
)

VALUES = ("x", "y", "z")
# the sensitive hierarchy of the hierarchical ground distance: x and y are siblings
SENSITIVE = Hierarchy([["x", "xy", "*"], ["y", "xy", "*"], ["z", "z", "*"]], name="s")
# the models a group passes only when no value holds more than some share of it
CAPPED = [
    ProbabilisticLDiversity(1.5),
    ProbabilisticLDiversity(2),
    AlphaKAnonymity(0.5, 1),
    AlphaKAnonymity(0.7, 2),
    BLikeness(0.5),
    BLikeness(1.0),
    BLikeness(0.8, enhanced=True),
    BLikeness(3.0, enhanced=True),
    DeltaDisclosure(0.4),
    DeltaDisclosure(1.0),
]


def ground(distance: str) -> np.ndarray:
    """Pairwise distances between VALUES: 1 apart (equal) or lowest common level / height."""
    d = np.zeros((len(VALUES), len(VALUES)))
    for a, b in itertools.product(range(len(VALUES)), repeat=2):
        if a == b:
            continue
        if distance == "equal":
            d[a, b] = 1.0
        else:
            level = next(
                lv
                for lv in range(SENSITIVE.height + 1)
                if SENSITIVE.generalize([VALUES[a]], lv)[0]
                == SENSITIVE.generalize([VALUES[b]], lv)[0]
            )
            d[a, b] = level / SENSITIVE.height
    return d


def transport(p: np.ndarray, q: np.ndarray, distance: str) -> float:
    """EMD as the optimal transport linear program (or half the L1 distance, for equal)."""
    if distance == "equal":
        return 0.5 * float(np.abs(p - q).sum())
    m = p.size
    cost = ground(distance).ravel()
    rows = [np.kron(np.eye(m)[i], np.ones(m)) for i in range(m)]  # mass leaving value i
    cols = [np.kron(np.ones(m), np.eye(m)[j]) for j in range(m)]  # mass reaching value j
    res = linprog(cost, A_eq=np.array(rows + cols), b_eq=np.r_[p, q], bounds=(0, None))
    assert res.status == 0
    return float(res.fun)


def model_for(distance: str, t: float) -> TCloseness:
    if distance == "equal":
        return TCloseness(t)
    return TCloseness(t, "hierarchical", SENSITIVE)


# --------------------------------------------------------------------- the model's contract
@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["equal", "hierarchical"]),
    st.sampled_from([0.0, 0.1, 0.2, 0.35]),
    st.lists(st.integers(0, 9), min_size=3, max_size=3).filter(lambda c: sum(c) > 0),
    st.lists(st.integers(0, 9), min_size=3, max_size=3).filter(lambda c: sum(c) > 0),
    st.lists(st.integers(0, 30), min_size=3, max_size=3).filter(lambda c: sum(c) > 0),
    st.lists(st.integers(0, 30), min_size=3, max_size=3),
)
def test_suppression_excess_keeps_its_contract(distance, t, a, b, kept, missing):
    model = model_for(distance, t)
    domain = np.array(VALUES, dtype=object)
    a, b, kept, missing = (np.array(v, dtype=float) for v in (a, b, kept, missing))
    table = kept + missing
    drift = missing.sum() / table.sum()
    excess = model.suppression_excess(np.array([a, b, a + b]), table, domain, drift)
    assert excess is not None
    assert ((excess >= 0) & (excess <= 1)).all()
    # a group within t of the released subset (measured on the values it holds) has no excess
    held = kept > 0
    for group, e in zip((a, b, a + b), excess):
        if group[~held].any():
            continue  # the group holds a value the subset lacks: not a released class
        p, r = group / group.sum(), kept / kept.sum()
        if transport(p, r, distance) <= t:
            assert e == 0.0
    # the merged group's count is at most the records of its parts that cannot be released
    r = kept / kept.sum()
    passing = [
        not group[~held].any() and transport(group / group.sum(), r, distance) <= t
        for group in (a, b)
    ]
    failing = sum(g.sum() for g, ok in zip((a, b), passing) if not ok)
    assert (a + b).sum() * excess[2] <= failing + 1e-9
    # and every group's count is at most the fewest records whose removal brings it within
    # t' of the table (t' = t + the most a subset missing the share drift can move)
    g = table / table.sum()
    top = max(transport(np.eye(3)[v], g, distance) for v in range(3))
    slack = min(drift, drift * top / (1 - drift)) if drift < 1 else drift
    for group, e in zip((a, b, a + b), excess):
        assert group.sum() * e <= fewest_to_remove(group, g, t + slack, distance) + 1e-6


def fewest_to_remove(counts: np.ndarray, g: np.ndarray, within: float, distance: str) -> float:
    """The fewest records (fractionally) to take out of a group so that the rest is within
    EMD ``within`` of ``g``, as a linear program: flows ``F`` from the kept counts
    ``counts - x`` to ``(size - sum x) g``, of cost at most ``within (size - sum x)``."""
    m, size = counts.size, float(counts.sum())
    cost = ground(distance).ravel()
    # variables: F (m x m, row-major), then x (m)
    n_var = m * m + m
    eq_rows, eq_b = [], []
    for i in range(m):  # sum_j F_ij + x_i = counts_i
        row = np.zeros(n_var)
        row[i * m : (i + 1) * m] = 1.0
        row[m * m + i] = 1.0
        eq_rows.append(row)
        eq_b.append(counts[i])
    for j in range(m):  # sum_i F_ij - g_j (size - sum x) = 0
        row = np.zeros(n_var)
        row[j : m * m : m] = 1.0
        row[m * m :] = g[j]
        eq_rows.append(row)
        eq_b.append(g[j] * size)
    ub = np.zeros(n_var)  # sum cost F <= within (size - sum x)
    ub[: m * m] = cost
    ub[m * m :] = within
    objective = np.r_[np.zeros(m * m), np.ones(m)]
    bounds = [(0, None)] * (m * m) + [(0, float(c)) for c in counts]
    res = linprog(
        objective,
        A_ub=ub[None, :],
        b_ub=[within * size],
        A_eq=np.array(eq_rows),
        b_eq=eq_b,
        bounds=bounds,
    )
    assert res.status == 0
    return float(res.fun)


def passes_by_hand(model, counts: np.ndarray, reference: np.ndarray | None = None) -> bool:
    """One group's test, from its counts (and the released records' counts or shares, for
    the models that read them), written out from each model's definition."""
    counts = np.asarray(counts, dtype=float)
    q = counts / counts.sum()
    if isinstance(model, EntropyLDiversity):
        held = q[q > 0]
        return float(np.exp(-(held * np.log(held)).sum())) >= model.l - 1e-9
    if isinstance(model, RecursiveCLDiversity):
        r = sorted(counts[counts > 0].tolist(), reverse=True)
        return r[0] < model.c * sum(r[model.l - 1 :])
    if isinstance(model, ProbabilisticLDiversity):
        return q.max() <= 1 / model.l + 1e-9
    if isinstance(model, AlphaKAnonymity):
        return counts.sum() >= model.k and q.max() <= model.alpha + 1e-9
    assert reference is not None
    p = np.asarray(reference, dtype=float) / np.sum(reference)
    for q_s, p_s in zip(q, p):
        if isinstance(model, BLikeness) and p_s > 0 and q_s > p_s:
            limit = min(model.beta, -np.log(p_s)) if model.enhanced else model.beta
            if (q_s - p_s) / p_s > limit + 1e-9:
                return False
        if isinstance(model, DeltaDisclosure) and p_s > 0 and q_s > 0:
            if abs(np.log(q_s / p_s)) >= model.delta:
                return False
    return True


def fewest_to_remove_by_hand(model, counts: np.ndarray, reference=None) -> int:
    """The fewest records to take out of a group so that the rest passes ``model``, by
    trying every sub-multiset of the group (everything, when nothing smaller will do)."""
    best = int(counts.sum())
    for kept in itertools.product(*[range(int(c) + 1) for c in counts]):
        kept = np.array(kept, dtype=float)
        if kept.sum() and passes_by_hand(model, kept, reference):
            best = min(best, int(counts.sum() - kept.sum()))
    return best


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(
        [
            EntropyLDiversity(1.5),
            EntropyLDiversity(2.0),
            EntropyLDiversity(2.9),
            RecursiveCLDiversity(2.0, 2),
            RecursiveCLDiversity(1.0, 2),
            RecursiveCLDiversity(3.0, 3),
        ]
    ),
    st.lists(st.lists(st.integers(0, 6), min_size=4, max_size=4), min_size=1, max_size=4).filter(
        lambda parts: all(sum(c) > 0 for c in parts)
    ),
)
def test_l_diversity_excess_keeps_its_contract(model, parts):
    parts = np.array(parts, dtype=float)
    merged = parts.sum(axis=0)
    groups = np.vstack([parts, merged])
    excess = model.suppression_excess(groups, groups.sum(axis=0), None, 0.0)
    assert excess is not None
    assert ((excess >= 0) & (excess <= 1)).all()
    for group, e in zip(groups, excess):
        if passes_by_hand(model, group):
            assert e == 0.0
        # no more than the fewest records whose removal leaves a passing group
        assert group.sum() * e <= fewest_to_remove_by_hand(model, group) + 1e-9
    # the merged group counts at most the records of its parts that fail
    failing = sum(part.sum() for part in parts if not passes_by_hand(model, part))
    assert merged.sum() * excess[-1] <= failing + 1e-9
    if isinstance(model, RecursiveCLDiversity):
        # r_1 - c (r_l + ... + r_m) is subadditive: the count never grows when groups merge
        sizes = parts.sum(axis=1)
        assert merged.sum() * excess[-1] <= float(sizes @ excess[:-1]) + 1e-9
    else:
        # never below the plain concavity bound (log l - H)_+ / log l
        p = groups / groups.sum(axis=1, keepdims=True)
        entropy = -np.sum(p * np.log(np.where(p > 0, p, 1.0)), axis=1)
        limit = np.log(model.l - 2e-9)
        assert (excess >= np.clip((limit - entropy) / limit, 0, 1) - 1e-12).all()


def test_l_diversity_excess_values():
    # 8 flu, 1 cold, 1 cough: entropy 0.639 nats, below log 2 = 0.693; the largest share
    # 0.8 sets the denominator log 2 + log 0.8
    group = np.array([[8.0, 1.0, 1.0]])
    p = np.array([0.8, 0.1, 0.1])
    entropy = -(p * np.log(p)).sum()
    e = EntropyLDiversity(2).suppression_excess(group, None, None, 0.0)[0]
    assert e == pytest.approx((np.log(2) - entropy) / (np.log(2) + np.log(0.8)), abs=1e-8)
    assert e > (np.log(2) - entropy) / np.log(2)
    # one value only: all of it must go
    assert EntropyLDiversity(3).suppression_excess([[5.0, 0.0]], None, None, 0.0)[0] == 1.0
    # recursive (2, 2): 8 >= 2 (1 + 1), by 4 records of 10
    e = RecursiveCLDiversity(2.0, 2).suppression_excess(group, None, None, 0.0)[0]
    assert e == pytest.approx(0.4, abs=1e-6)
    assert RecursiveCLDiversity(5.0, 2).suppression_excess(group, None, None, 0.0)[0] == 0.0


def test_suppression_excess_is_offered_only_where_the_distance_allows():
    reference = np.array([[3.0, 2.0, 1.0]])
    domain = np.array(VALUES, dtype=object)
    assert (
        TCloseness(0.2, "ordered").suppression_excess(reference, reference[0], domain, 0.1) is None
    )
    assert KAnonymity(3).suppression_excess(reference, reference[0], domain, 0.1) is None
    # t + drift >= 1: nothing is beyond reach
    far = np.array([[0.0, 0.0, 5.0]])
    assert TCloseness(0.95).suppression_excess(far, reference[0], domain, 0.1).tolist() == [0.0]
    # 1 x, 0 y, 0 z against 3/6, 2/6, 1/6: EMD 0.5; the farthest distribution (all z) is
    # at D = 5/6, so the reference moves by at most 0.1 D / 0.9 < 0.1 and
    # t' = 0.2 + 0.1 D / 0.9 < 0.5.  Removing records of a group holding one value leaves
    # its distribution unchanged: all of it must go (convexity alone gives
    # (0.5 - t') / (D - t') < 1)
    single = np.array([[1.0, 0.0, 0.0]])
    value = TCloseness(0.2).suppression_excess(single, reference[0], domain, 0.1)[0]
    cut = 0.2 + 0.1 * (5 / 6) / 0.9
    assert value == pytest.approx(1.0, abs=1e-8)
    assert (0.5 - cut) / (5 / 6 - cut) < 0.9
    # 2 x, 1 y, 1 z: EMD 1/12 (z over by 1/12, y under by 1/12); the potential
    # (0, -1/2, 1/2) reaches 1/2 on the group's values and averages -1/12 over the table,
    # so removing a share lam lowers the EMD to no less than (1 - lam) t' + lam 7/12
    mixed = np.array([[2.0, 1.0, 1.0]])
    value = TCloseness(0.05).suppression_excess(mixed, reference[0], domain, 0.0)[0]
    assert value == pytest.approx((1 / 12 - 0.05) / (7 / 12 - 0.05), abs=1e-6)
    assert value > (1 / 12 - 0.05) / (5 / 6 - 0.05)


# ------------------------------------------------------------ search against exhaustive search
def suppressed_by_hand(df, models, members) -> np.ndarray:
    """The records one node suppresses (:func:`suppressed_until_stable`): its classes
    (``members``, by pandas) tested against the released records; EMD by
    :func:`transport`."""
    sens = df["s"].to_numpy()

    def failing(kept, released):
        reference = np.array([np.sum(sens[released] == v) for v in VALUES], dtype=float)
        reference /= reference.sum()
        bad = set()
        for g in kept:
            rows = sens[members[g]]
            share = np.array([np.sum(rows == v) for v in VALUES]) / rows.size
            for model in models:
                if isinstance(model, KAnonymity):
                    ok = rows.size >= model.k
                elif isinstance(model, TCloseness):
                    ok = transport(share, reference, model.distance) <= model.t + 1e-9
                else:
                    ok = passes_by_hand(model, share * rows.size, reference)
                if not ok:
                    bad.add(g)
        return bad

    return suppressed_until_stable(len(df), members, failing)


def exhaustive(df, hierarchies, models, limit, metric, score=None):
    """Every node, its records suppressed by :func:`suppressed_by_hand`; scored by
    ``score(levels, key, suppressed)`` when given, else by the entropy tests' reference."""
    best = None
    for levels, key, members in node_classes(df, hierarchies):
        suppressed = suppressed_by_hand(df, models, members)
        if int(suppressed.sum()) > limit or suppressed.all():
            continue
        value = (
            score(levels, key, suppressed)
            if score is not None
            else reference_score(metric, df, hierarchies, levels, key, suppressed)
        )
        if best is None or value < best[0] - 1e-9:
            best = (value, levels)
    return best


@st.composite
def bound_problem(draw):
    df, hierarchies = draw_table(draw, min_rows=8)
    kind = draw(st.sampled_from(["equal", "hierarchical", "entropy-l", "recursive", "capped"]))
    if kind == "entropy-l":
        models = [EntropyLDiversity(draw(st.sampled_from([1.5, 2.0, 2.5])))]
    elif kind == "recursive":
        models = [RecursiveCLDiversity(draw(st.sampled_from([1.0, 2.0, 3.0])), 2)]
    elif kind == "capped":
        models = [draw(st.sampled_from(CAPPED))]
    else:
        models = [model_for(kind, draw(st.sampled_from([0.1, 0.2, 0.3])))]
    k = draw(st.integers(1, 4))
    if k > 1:
        models.insert(0, KAnonymity(k))
    limit = draw(st.sampled_from([1, 2, 4, 8]))
    metric = draw(
        st.sampled_from(
            ["discernibility", "entropy", "entropy-nonmonotonic", "height", "precision"]
        )
    )
    return df, hierarchies, models, limit, metric


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bound_problem())
def test_search_with_the_excess_bound_matches_exhaustive_search(problem):
    df, hierarchies, models, limit, metric = problem
    expected = exhaustive(df, hierarchies, models, limit, metric)
    assert_search_finds(expected, df, hierarchies, models, limit, metric)


# ------------------------------------------------------------------------ the bound prunes
def _fixed_table(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    hierarchies = {
        "a": random_hierarchy("a", 8, 3),
        "b": random_hierarchy("b", 6, 2),
        "c": random_hierarchy("c", 4, 2),
    }
    df = pd.DataFrame({c: rng.choice(h.leaves, size=n) for c, h in hierarchies.items()})
    # the sensitive value leans on attribute a, so fine classes are far from the table
    lean = df["a"].str[1:].astype(int).to_numpy() < 3
    df["s"] = np.where(
        lean, rng.choice(VALUES, n, p=[0.8, 0.1, 0.1]), rng.choice(VALUES, n, p=[0.3, 0.4, 0.3])
    )
    return df, hierarchies


@pytest.mark.parametrize(
    "model",
    [
        model_for("equal", 0.15),
        model_for("hierarchical", 0.15),
        EntropyLDiversity(2.2),
        RecursiveCLDiversity(1.5, 2),
    ],
    ids=["t-equal", "t-hierarchical", "entropy-l", "recursive-cl"],
)
@pytest.mark.parametrize("metric", ["discernibility", "entropy", "entropy-nonmonotonic"])
def test_the_excess_bound_spares_checks_and_changes_no_result(model, metric, monkeypatch):
    df, hierarchies = _fixed_table(3)
    models = [KAnonymity(3), model]
    enc, domain = _encode(df, hierarchies)
    with_bound = optimal_generalization(enc, models, 12, metric, domain)
    monkeypatch.setattr(type(model), "suppression_excess", lambda self, *args: None)
    enc, domain = _encode(df, hierarchies)
    without = optimal_generalization(enc, models, 12, metric, domain)
    assert with_bound.score == without.score
    assert with_bound.best.levels == without.best.levels
    assert with_bound.checked < without.checked
    expected = exhaustive(df, hierarchies, models, 12, metric)
    assert expected is not None
    assert with_bound.score == pytest.approx(expected[0], rel=1e-9, abs=1e-9)


def test_cone_tagging_sets_exactly_the_untagged_nodes_of_the_cone():
    rng = np.random.default_rng(1)
    for _ in range(200):
        lattice = _Lattice(rng.integers(0, 4, rng.integers(1, 5)))
        status = rng.choice([-1, 0, 0, 1], lattice.n_nodes).astype(np.int8)
        i, up = int(rng.integers(lattice.n_nodes)), bool(rng.integers(2))
        node = np.array(lattice.node(i))
        cone = np.array(
            [
                all(a >= b for a, b in zip(lattice.node(j), node))
                if up
                else all(a <= b for a, b in zip(lattice.node(j), node))
                for j in range(lattice.n_nodes)
            ]
        )
        expected = np.where(cone & (status == 0), 5, status)
        _tag_cone(lattice, status, i, up, 5)
        np.testing.assert_array_equal(status, expected)


@pytest.mark.parametrize("distance", ["equal", "hierarchical"])
@pytest.mark.parametrize("metric", ["discernibility", "entropy", "entropy-nonmonotonic"])
def test_the_reach_of_a_group_spares_checks_and_changes_no_result(distance, metric, monkeypatch):
    """The bound through each group's own reach against the bound through the farthest
    distribution only (``reach = D``): fewer node checks, the optimum of an exhaustive
    search either way."""
    df, hierarchies = _fixed_table(4)
    models = [KAnonymity(3), model_for(distance, 0.15)]
    enc, domain = _encode(df, hierarchies)
    tight = optimal_generalization(enc, models, 20, metric, domain)
    monkeypatch.setattr(
        TCloseness, "_reach", lambda self, counts, *args: np.full(len(counts), np.inf)
    )
    enc, domain = _encode(df, hierarchies)
    plain = optimal_generalization(enc, models, 20, metric, domain)
    assert tight.checked < plain.checked
    expected = exhaustive(df, hierarchies, models, 20, metric)
    assert expected is not None
    for result in (tight, plain):
        assert result.score == pytest.approx(expected[0], rel=1e-9, abs=1e-9)
        assert result.best.suppressed <= 20


# ------------------------------------------------ the premise of the bound without drift
@st.composite
def closeness_problem(draw):
    df, hierarchies = draw_table(draw, min_rows=8)
    models = [
        model_for(
            draw(st.sampled_from(["equal", "hierarchical"])),
            draw(st.sampled_from([0.05, 0.1, 0.2, 0.3])),
        )
    ]
    k = draw(st.integers(1, 4))
    if k > 1:
        models.insert(0, KAnonymity(k))
    return df, hierarchies, models


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(closeness_problem())
def test_released_classes_are_within_t_of_the_whole_table(problem):
    """Whatever the node, the classes the node check releases are within ``t`` of the
    whole table's distribution (not only of the released records'): the search's excess
    bound rests on this to measure with no drift."""
    df, hierarchies, models = problem
    closeness = models[-1]
    enc, domain = _encode(df, hierarchies)
    sens = df["s"].to_numpy()
    whole = np.array([np.mean(sens == v) for v in VALUES])
    for levels, key, _ in node_classes(df, hierarchies):
        record_class, table = enc.record_classes(levels)
        out = class_outcome(table, models, domain, levels)
        released = out.ok[record_class]
        assert int((~released).sum()) == out.suppressed
        for group in pd.Series(np.flatnonzero(released)).groupby(key[released]):
            rows = sens[group[1].to_numpy()]
            share = np.array([np.mean(rows == v) for v in VALUES])
            assert transport(share, whole, closeness.distance) <= closeness.t + 1e-9


@pytest.mark.parametrize("distance", ["equal", "hierarchical"])
@pytest.mark.parametrize("metric", ["discernibility", "entropy", "entropy-nonmonotonic"])
def test_the_bound_without_drift_spares_checks_and_changes_no_result(distance, metric, monkeypatch):
    """Against the model's bound with the drift of the suppression limit (the released
    records may be a share ``limit / n`` away from the table): fewer node checks, the
    optimum of an exhaustive search either way."""
    df, hierarchies = _fixed_table(5)
    models = [KAnonymity(3), model_for(distance, 0.15)]
    limit = 20
    enc, domain = _encode(df, hierarchies)
    tight = optimal_generalization(enc, models, limit, metric, domain)
    original = TCloseness.suppression_excess
    monkeypatch.setattr(
        TCloseness,
        "suppression_excess",
        lambda self, counts, reference, values, drift: original(
            self, counts, reference, values, limit / len(df)
        ),
    )
    enc, domain = _encode(df, hierarchies)
    drifted = optimal_generalization(enc, models, limit, metric, domain)
    assert tight.checked < drifted.checked
    assert (tight.score, tight.best.levels) == (drifted.score, drifted.best.levels)
    expected = exhaustive(df, hierarchies, models, limit, metric)
    assert expected is not None
    assert tight.score == pytest.approx(expected[0], rel=1e-9, abs=1e-9)


# ------------------------------------------------ models that cap each value's share
@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(CAPPED),
    st.lists(st.lists(st.integers(0, 6), min_size=3, max_size=3), min_size=1, max_size=4).filter(
        lambda parts: all(sum(c) > 0 for c in parts)
    ),
    st.lists(st.integers(0, 20), min_size=3, max_size=3),
    st.lists(st.integers(0, 8), min_size=3, max_size=3),
)
def test_capped_share_excess_keeps_its_contract(model, parts, others, missing):
    """Probabilistic l-diversity, (alpha, k)-anonymity, beta-likeness and delta-disclosure:
    checked against each model's definition written out, the fewest records to remove by
    enumeration, and splits into passing and failing parts; with a drift, against a released
    subset of the table."""
    parts = np.array(parts, dtype=float)
    merged = parts.sum(axis=0)
    groups = np.vstack([parts, merged])
    table = merged + np.array(others, dtype=float)
    excess = model.suppression_excess(groups, table, None, 0.0)
    assert excess is not None
    assert ((excess >= 0) & (excess <= 1)).all()
    for group, e in zip(groups, excess):
        if passes_by_hand(model, group, table):
            assert e == 0.0
        assert group.sum() * e <= fewest_to_remove_by_hand(model, group, table) + 1e-9
    failing = sum(part.sum() for part in parts if not passes_by_hand(model, part, table))
    assert merged.sum() * excess[-1] <= failing + 1e-9
    # the released records miss a share ``drift`` of a larger table: a group that passes
    # against them (holding only values they hold) has no excess against the table
    whole = table + np.array(missing, dtype=float)
    drift = float(np.sum(missing)) / float(whole.sum())
    drifted = model.suppression_excess(groups, whole, None, drift)
    for group, e in zip(groups, drifted):
        if not group[table == 0].any() and passes_by_hand(model, group, table):
            assert e == 0.0


def test_capped_share_excess_values():
    # 8 flu, 1 cold, 1 cough: flu over 1/2 by 0.3, so (0.8 - 0.5) / (1 - 0.5) = 0.6 of the
    # group (6 flu records) must go for probabilistic 2-diversity and (0.5, k)-anonymity
    group = np.array([[8.0, 1.0, 1.0]])
    assert ProbabilisticLDiversity(2).suppression_excess(group)[0] == pytest.approx(0.6)
    assert AlphaKAnonymity(0.5, 3).suppression_excess(group)[0] == pytest.approx(0.6)
    # flu holds 0.4 of the table: beta = 0.5 caps it at 0.6 of a class, (0.8 - 0.6) / 0.4
    table = np.array([40.0, 30.0, 30.0])
    value = BLikeness(0.5).suppression_excess(group, table)[0]
    assert value == pytest.approx(0.5, abs=1e-6)
    # enhanced: -ln 0.4 = 0.916 > 0.5, the same cap; beta = 2 is capped by -ln 0.4 instead
    assert BLikeness(0.5, enhanced=True).suppression_excess(group, table)[0] == pytest.approx(
        0.5, abs=1e-6
    )
    cap = 0.4 * (1 - np.log(0.4))
    assert BLikeness(2.0, enhanced=True).suppression_excess(group, table)[0] == pytest.approx(
        (0.8 - cap) / (1 - cap), abs=1e-6
    )
    # delta-disclosure caps flu at 0.4 e^0.5 = 0.659
    cap = 0.4 * np.exp(0.5)
    assert DeltaDisclosure(0.5).suppression_excess(group, table)[0] == pytest.approx(
        (0.8 - cap) / (1 - cap), abs=1e-9
    )
    # a cap of 1 or more binds nothing
    assert BLikeness(2.0).suppression_excess(group, table)[0] == 0.0
