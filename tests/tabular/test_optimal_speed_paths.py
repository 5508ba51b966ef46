"""The optimal search's shortcuts give the same answers as the plain computations.

* ``min_group_size``: a group smaller than it fails the model whatever it holds (checked
  against every model's own ``group_ok`` on random groups);
* ``class_outcome`` with a suppression limit: the same verdict (feasible or not) and, when
  feasible, the same suppressed classes as without the limit;
* class tables numbered by a presence mask equal those numbered by hashing keys;
* the greedy descent and the sweep (recursive (c, l)-, entropy and distinct l-diversity
  with suppression; the quality models with bounds known up front, and DM* whose bound
  needs the classes) find the optimum of an exhaustive search.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structanon.models import (
    AlphaKAnonymity,
    BLikeness,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    MultipleSensitive,
    ProbabilisticLDiversity,
    RecursiveCLDiversity,
    TCloseness,
)
from structanon.partition import encode_values
from tabular import _lattice, _optimal
from tabular._lattice import ClassTable, EncodedTable
from tabular._optimal import _Lattice, class_outcome
from tests.tabular.test_optimal import draw_table, random_hierarchy
from tests.tabular.test_optimal_entropy import assert_search_finds, node_classes, reference_score

MODELS = [
    KAnonymity(1),
    KAnonymity(4),
    DistinctLDiversity(3),
    EntropyLDiversity(1.0),
    EntropyLDiversity(1.5),
    EntropyLDiversity(3.0),
    EntropyLDiversity(2.9999999999),
    RecursiveCLDiversity(2.0, 3),
    RecursiveCLDiversity(0.5, 1),
    TCloseness(0.3),
    BLikeness(1.0),
    ProbabilisticLDiversity(2.0),
    AlphaKAnonymity(0.6, 3),
]


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_groups_below_min_group_size_fail_whatever_they_hold(model):
    rng = np.random.default_rng(0)
    bound = model.min_group_size
    assert bound >= 1
    reference = np.array([5, 4, 3, 2, 1])
    for size in range(1, bound):  # classes are never empty
        # every way of spreading `size` records over 5 values, drawn at random
        counts = np.array([np.bincount(rng.integers(0, 5, size), minlength=5) for _ in range(200)])
        groups = counts if model.requires_sensitive else counts.sum(axis=1)
        assert not model.group_ok(groups, reference, np.arange(5)).any()


def test_min_group_size_values():
    assert KAnonymity(7).min_group_size == 7
    assert DistinctLDiversity(3).min_group_size == 3
    assert EntropyLDiversity(5).min_group_size == 5
    assert EntropyLDiversity(4.2).min_group_size == 5
    assert RecursiveCLDiversity(4, 5).min_group_size == 5
    assert TCloseness(0.2).min_group_size == 1
    both = MultipleSensitive({"a": DistinctLDiversity(2), "b": EntropyLDiversity(3)})
    assert both.min_group_size == 3


def _encoded(seed: int, n: int = 400):
    rng = np.random.default_rng(seed)
    hierarchies = [
        random_hierarchy("a", 9, 3),
        random_hierarchy("b", 6, 2),
        random_hierarchy("c", 4, 1),
    ]
    columns = [rng.integers(0, h.leaves.size, n) for h in hierarchies]
    sens, domain = encode_values(rng.choice(4, n, p=[0.55, 0.25, 0.15, 0.05]))
    return columns, hierarchies, sens, domain


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(
    "models",
    [
        [KAnonymity(3)],
        [KAnonymity(2), TCloseness(0.25)],
        [EntropyLDiversity(2.0)],
        [RecursiveCLDiversity(3.0, 2), KAnonymity(2)],
    ],
    ids=["k", "k+t", "entropy-l", "rcl+k"],
)
def test_outcome_with_a_limit_has_the_same_verdict(seed, models):
    columns, hierarchies, sens, domain = _encoded(seed)
    enc = EncodedTable(columns, hierarchies, sens, domain.size)
    lattice = _Lattice(enc.heights)
    for i in range(lattice.n_nodes):
        node = lattice.node(i)
        table = enc.classes(node)
        full = class_outcome(table, models, domain, node)
        for limit in (0, 5, 20, 60):
            quick = class_outcome(table, models, domain, node, limit)
            assert (quick.suppressed <= limit) == (full.suppressed <= limit)
            if full.suppressed <= limit:
                np.testing.assert_array_equal(quick.ok, full.ok)
                assert quick.suppressed == full.suppressed


@pytest.mark.parametrize("seed", [0, 1])
def test_tables_by_presence_mask_equal_tables_by_hashing(seed, monkeypatch):
    columns, hierarchies, sens, domain = _encoded(seed)
    dense = EncodedTable(columns, hierarchies, sens, domain.size)
    slack = _lattice._DENSE_SLACK
    monkeypatch.setattr(_lattice, "_DENSE_SLACK", -(10**9))  # never a mask: always hash
    sorted_ = EncodedTable(columns, hierarchies, sens, domain.size)
    lattice = _Lattice(dense.heights)
    order = np.random.default_rng(seed).permutation(lattice.n_nodes)
    for i in np.concatenate([order, np.argsort(lattice.level_sum, kind="stable")]):
        node = lattice.node(int(i))
        monkeypatch.setattr(_lattice, "_DENSE_SLACK", slack)
        a = dense.classes(node)
        monkeypatch.setattr(_lattice, "_DENSE_SLACK", -(10**9))
        b = sorted_.classes(node)
        np.testing.assert_array_equal(a.codes, b.codes)
        np.testing.assert_array_equal(a.sizes, b.sizes)
        np.testing.assert_array_equal(a.contingency, b.contingency)
        np.testing.assert_array_equal(dense._keys(a), sorted_._keys(b))


# --------------------------------------------------- the sweep against exhaustive search
def _exhaustive(df, hierarchies, models, limit, metric):
    """Every node: classes by pandas, failing classes suppressed (one pass: no model here
    reads the table's distribution), scored by the definitions."""
    sens = df["s"].to_numpy()
    n = len(df)
    best = None
    for levels, key, members in node_classes(df, hierarchies):
        suppressed = np.zeros(n, dtype=bool)
        for rows in members.values():
            counts = np.array([[np.sum(sens[rows] == v) for v in ("x", "y", "z")]])
            for model in models:
                group = counts if model.requires_sensitive else counts.sum(axis=1)
                if not model.group_ok(group, None, np.array(["x", "y", "z"]))[0]:
                    suppressed[rows] = True
        if suppressed.sum() > limit or suppressed.all():
            continue
        score = reference_score(metric, df, hierarchies, levels, key, suppressed)
        if best is None or score < best[0] - 1e-9:
            best = (score, levels)
    return best


@st.composite
def _sweep_problem(draw):
    df, hierarchies = draw_table(draw, min_rows=8)
    models = draw(
        st.sampled_from(
            [
                [RecursiveCLDiversity(2.0, 2)],
                [RecursiveCLDiversity(3.0, 2), KAnonymity(2)],
                [EntropyLDiversity(1.8)],
                [EntropyLDiversity(1.5), KAnonymity(4)],
                [DistinctLDiversity(2)],
                [KAnonymity(3)],
            ]
        )
    )
    limit = draw(st.sampled_from([1, 3, 8, 15]))
    metric = draw(
        st.sampled_from(
            ["entropy", "entropy-nonmonotonic", "height", "precision", "discernibility"]
        )
    )
    return df, hierarchies, models, limit, metric


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sweep_problem())
def test_descent_and_sweep_match_exhaustive_search(problem):
    df, hierarchies, models, limit, metric = problem
    expected = _exhaustive(df, hierarchies, models, limit, metric)
    assert_search_finds(expected, df, hierarchies, models, limit, metric)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=40),
    st.lists(st.integers(1, 8), min_size=1, max_size=3),
    st.integers(0, 60),
)
def test_sizes_only_outcome_suppresses_the_small_classes(sizes, ks, limit):
    """Models of class sizes alone are tested on all classes at once: the classes kept and
    the records suppressed are those of a plain count, with or without a limit."""
    table = ClassTable(np.zeros((len(sizes), 0), np.int64), np.array(sizes, np.int64), None)
    models = [KAnonymity(k) for k in ks]
    for cut in (None, limit):
        out = class_outcome(table, models, None, (), cut)
        kept = [s >= max(ks) for s in sizes]
        assert out.ok.tolist() == kept
        assert out.suppressed == sum(s for s, keep in zip(sizes, kept) if not keep)


def _plain_emd(row, reference, domain, distance, hierarchy):
    """The EMD of one group to the reference, measured alone (one row at a time)."""
    from structanon.distances import emd_many

    return float(emd_many(np.array([row], dtype=float), reference, distance, domain, hierarchy)[0])


@st.composite
def _class_table(draw):
    g = draw(st.integers(1, 12))
    s = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    contingency = rng.integers(0, 5, (g, s)) * (rng.random((g, s)) < 0.6)
    contingency[contingency.sum(axis=1) == 0, 0] = 1  # every class holds a record
    table = ClassTable(np.zeros((g, 0), np.int64), contingency.sum(axis=1), contingency)
    k = draw(st.integers(1, 4))
    t = draw(st.sampled_from([0.1, 0.2, 0.3]))
    distance = draw(st.sampled_from(["equal", "hierarchical", "ordered"]))
    return table, k, t, distance


def _plain_fixed_point(table: ClassTable, fails) -> np.ndarray:
    """Which classes a plain loop keeps: every kept class is tested (``fails(class,
    reference counts)``) against the records of the kept classes (all of them at first),
    failing classes are suppressed, until none fails."""
    kept = set(range(table.n_classes))
    while kept:
        reference = table.contingency[sorted(kept)].sum(axis=0)
        failing = {c for c in kept if fails(c, reference)}
        if not failing:
            break
        kept -= failing
    return np.isin(np.arange(table.n_classes), sorted(kept))


def _assert_outcome(table: ClassTable, models, domain, expected: np.ndarray, limit: int):
    """``class_outcome`` keeps the ``expected`` classes, and with ``limit`` gives the same
    verdict (and the same classes when feasible)."""
    suppressed = int(table.sizes[~expected].sum())
    out = class_outcome(table, models, domain)
    assert out.ok.tolist() == expected.tolist()
    assert out.suppressed == suppressed
    cut = class_outcome(table, models, domain, limit=limit)
    assert (cut.suppressed <= limit) == (suppressed <= limit)
    if suppressed <= limit:
        assert cut.ok.tolist() == expected.tolist() and cut.suppressed == suppressed
    return out


@settings(max_examples=80, deadline=None)
@given(_class_table(), st.integers(0, 20))
def test_class_outcome_is_the_plain_fixed_point(problem, limit):
    """``class_outcome`` (models that do not read the reference tested once) against a
    plain loop: every kept class is tested against the distribution of the kept classes
    (all of them at first), failing classes are suppressed, until none fails."""
    table, k, t, distance = problem
    s = table.contingency.shape[1]
    hierarchy = random_hierarchy("v", s, 2)
    domain = np.asarray(hierarchy.leaves, dtype=object)
    model = TCloseness(t, distance, hierarchy if distance == "hierarchical" else None)
    models = [KAnonymity(k), model, RecursiveCLDiversity(3.0, 1)]

    def fails(c, reference):
        present = np.flatnonzero(reference > 0)
        return bool(
            table.sizes[c] < k
            or _plain_emd(
                table.contingency[c, present],
                reference[present],
                domain[present],
                distance,
                hierarchy,
            )
            > t + 1e-9
            or not RecursiveCLDiversity(3.0, 1).group_ok(table.contingency[c : c + 1])[0]
        )

    _assert_outcome(table, models, domain, _plain_fixed_point(table, fails), limit)


def _beta_passes(counts: np.ndarray, reference: np.ndarray, beta: float, enhanced: bool) -> bool:
    """beta-likeness of one class, written out: every value with a class share ``q`` above
    its reference share ``p > 0`` has ``(q - p) / p <= beta`` (enhanced: ``min(beta, -ln
    p)``)."""
    q, p = counts / counts.sum(), reference / reference.sum()
    for q_s, p_s in zip(q, p):
        if p_s > 0 and q_s > p_s:
            limit = min(beta, -np.log(p_s)) if enhanced else beta
            if (q_s - p_s) / p_s > limit + 1e-9:
                return False
    return True


def test_capped_rounds_measure_the_released_records_after_small_classes_go():
    """A class that passes against every class's records can fail against those released
    once the classes below k are suppressed: 2 x + 1 y, 3 x, and 1 y (below k = 2).  Against
    all seven records y makes up 2/7, so a y share of 1/3 passes 0.5-likeness (cap 3/7);
    against the six released it makes up 1/6 (cap 1/4), and the first class fails too."""
    contingency = np.array([[2, 1], [3, 0], [0, 1]])
    table = ClassTable(np.zeros((3, 0), np.int64), contingency.sum(axis=1), contingency)
    out = class_outcome(table, [KAnonymity(2), BLikeness(0.5)], None)
    assert out.ok.tolist() == [False, True, False]
    assert out.suppressed == 4


@settings(max_examples=120, deadline=None)
@given(
    _class_table(),
    st.sampled_from([0.3, 1.0, 2.5]),
    st.booleans(),
    st.integers(0, 20),
)
def test_capped_rounds_are_the_plain_fixed_point(problem, beta, enhanced, limit):
    """beta-likeness (whose test caps each value's share: ``class_outcome``'s rounds read
    the counts once) against a plain loop, and against the general rounds."""
    table, k, _, _ = problem
    models = [KAnonymity(k), BLikeness(beta, enhanced)]

    def fails(c, reference):
        return bool(
            table.sizes[c] < k or not _beta_passes(table.contingency[c], reference, beta, enhanced)
        )

    out = _assert_outcome(table, models, None, _plain_fixed_point(table, fails), limit)
    fast = _optimal._capped_rounds
    _optimal._capped_rounds = lambda *args: None  # the general rounds
    try:
        general = class_outcome(table, models, None)
    finally:
        _optimal._capped_rounds = fast
    assert general.ok.tolist() == out.ok.tolist() and general.suppressed == out.suppressed


@pytest.mark.parametrize("whole", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hierarchical_t_closeness_is_emd_many_bit_for_bit(seed, whole):
    """With the plans cached per domain, and with integer counts (row totals by a product,
    exact for whole numbers; empty groups included): the values are those of ``emd_many``
    on the same counts as floats."""
    from structanon.distances import emd_many

    rng = np.random.default_rng(seed)
    hierarchy = random_hierarchy("s", 9, 3)
    model = TCloseness(0.2, "hierarchical", hierarchy)
    leaves = np.asarray(hierarchy.leaves, dtype=object)
    for _ in range(30):
        present = np.sort(rng.choice(leaves.size, rng.integers(1, leaves.size + 1), replace=False))
        counts = rng.integers(0, 6, (40, present.size))
        reference = rng.integers(1, 50, present.size)
        if whole:
            counts[rng.random(40) < 0.1] = 0
        else:
            counts, reference = counts.astype(float), reference.astype(float)
        ours = model.group_values(counts, reference, leaves[present])
        expected = emd_many(
            counts.astype(float), reference, "hierarchical", leaves[present], hierarchy
        )
        assert np.array_equal(ours, expected)


def _plain_excess(model, counts, reference, domain, drift):
    """``TCloseness.suppression_excess`` for the hierarchical distance from its definition:
    EMDs one group at a time, ``D`` the largest EMD of a one-value group, and the reach from
    the extra mass ``x_n`` under every node of the levels below the root, walked up the
    hierarchy's codes (``phi_v = sum sign(x_n) / (2 H)`` over the ancestors ``n`` of ``v``)."""
    h = model.hierarchy
    height = h.height
    leaf = h.encode(domain)
    m = len(domain)
    g = np.asarray(reference, dtype=float) / np.sum(reference)
    top = max(_plain_emd(np.eye(m)[v], reference, domain, "hierarchical", h) for v in range(m))
    drift = min(drift, drift * top / (1 - drift))
    cut = model.t + drift + 2e-9
    out = []
    for row in counts:
        if cut >= top:
            out.append(0.0)
            continue
        d = _plain_emd(row, reference, domain, "hierarchical", h)
        p = row / row.sum()
        phi = np.zeros(m)
        for level in range(height):
            codes = h.node_codes[leaf, level]
            for node in set(codes.tolist()):
                under = codes == node
                extra = (p - g)[under].sum()  # 0 (up to rounding): any sign is valid, 0 taken
                phi[under] += (np.sign(extra) if abs(extra) >= 1e-12 else 0.0) / (2 * height)
        reach = min(max(phi[v] for v in range(m) if row[v] > 0) - phi @ g + 1e-9, top)
        room = reach - cut if reach - cut > 1e-12 else top - cut
        out.append(float(np.clip(max(d - cut, 0.0) / room, 0.0, 1.0)))
    return np.array(out)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 9),
    st.integers(1, 3),
    st.integers(0, 10_000),
    st.sampled_from([0.0, 0.01, 0.05, 0.2]),
    st.sampled_from([0.05, 0.2, 0.4]),
)
def test_hierarchical_excess_equals_its_definition(n_leaves, height, seed, drift, t):
    rng = np.random.default_rng(seed)
    hierarchy = random_hierarchy("s", n_leaves, height)
    model = TCloseness(t, "hierarchical", hierarchy)
    leaves = np.asarray(hierarchy.leaves, dtype=object)
    present = np.sort(rng.choice(leaves.size, rng.integers(1, leaves.size + 1), replace=False))
    counts = rng.integers(0, 6, (12, present.size)) * (rng.random((12, present.size)) < 0.5)
    counts[counts.sum(axis=1) == 0, 0] = 3
    reference = counts.sum(axis=0) + rng.integers(0, 30, present.size)
    ours = model.suppression_excess(counts, reference, leaves[present], drift)
    expected = _plain_excess(model, counts.astype(float), reference, leaves[present], drift)
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-12)
