"""Node checks cut short by the quality model, and the class-table pieces they lean on.

Where a quality model's score never falls as more classes of a node are suppressed
(``grows_with_suppression``: loss, precision, non-monotone entropy), the search stops a
node's check after the first round against the released records once the classes kept so
far already score above the best feasible node: later rounds only suppress more.

* ``grows_with_suppression`` holds as flagged: on random nodes, suppressing more classes
  never lowers the score, and ``suppressed_bound`` never exceeds the score of any outcome
  with at least that many records suppressed;
* the search with cut-short checks finds the optimum of an exhaustive search (classes by
  pandas, loss and the other metrics recomputed record by record from the hierarchies'
  rows) on random tables, also at suppression limits as large as the table;
* it does cut checks short on a fixed table, with the result of the search without them;
* the loss score is exact (integers) and equals the record-by-record definition;
* a class table's contingency rows summed through the sparse product (SciPy's kernel, or
  its public API and a ``bincount`` on either side of the size threshold) equal pandas'
  group sums; ``codes_at`` equals ``codes[index]``.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structanon.models import BLikeness, KAnonymity
from tabular import _lattice
from tabular._optimal import (
    NodeOutcome,
    SearchContext,
    _Lattice,
    class_outcome,
    optimal_generalization,
    quality_model,
)
from tests.tabular.test_optimal import draw_table
from tests.tabular.test_optimal_entropy import _encode, assert_search_finds, reference_score
from tests.tabular.test_optimal_suppression_bound import (
    CAPPED,
    _fixed_table,
    exhaustive,
    model_for,
)

GROWING = ("loss", "precision", "entropy-nonmonotonic")


def loss_by_records(df, hierarchies, levels, suppressed: np.ndarray) -> float:
    """ARX's loss from its definition: per attribute, each kept record costs the share of
    the hierarchy's leaves under its generalized value (read off the hierarchy's rows), each
    suppressed record 1; normalized per attribute and combined by the shifted geometric
    mean."""
    n, q = len(df), len(hierarchies)
    product = 1.0
    for (column, h), lv in zip(hierarchies.items(), levels):
        rows = h.to_rows()
        leaves = len(rows)
        under = Counter(row[lv] for row in rows)
        ancestor = {row[0]: row[lv] for row in rows}
        share = np.array([under[ancestor[v]] / leaves for v in df[column].astype(str)])
        total = share[~suppressed].sum() + suppressed.sum()
        low = n / leaves
        value = (total - low) / (n - low) if n > low else 0.0
        product *= (max(value, 0.0) + 1.0) ** (1.0 / q)
    return product - 1.0


def score_by_records(metric, df, hierarchies, levels, key, suppressed) -> float:
    if metric == "loss":
        return loss_by_records(df, hierarchies, levels, suppressed)
    return reference_score(metric, df, hierarchies, levels, key, suppressed)


# ------------------------------------------------------------- the flag and the bound hold
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_scores_grow_as_classes_are_suppressed(data):
    df, hierarchies = draw_table(data.draw, min_rows=6)
    enc, _ = _encode(df, hierarchies)
    lattice = _Lattice(enc.heights)
    ctx = SearchContext.build(enc, lattice)
    node = lattice.node(data.draw(st.integers(0, lattice.n_nodes - 1)))
    table = enc.classes(node)
    sizes = table.sizes
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    small = rng.random(table.n_classes) < 0.4
    more = small | (rng.random(table.n_classes) < 0.4)  # a superset of the suppressed
    for metric in GROWING:
        model = quality_model(metric)
        assert model.grows_with_suppression
        fewer = NodeOutcome(node, table, ~small, int(sizes[small].sum()))
        larger = NodeOutcome(node, table, ~more, int(sizes[more].sum()))
        assert model.score(larger, ctx) >= model.score(fewer, ctx) - 1e-12
        # whichever records are suppressed, at least that many cost what the bound says
        assert model.suppressed_bound(node, larger.suppressed, ctx) <= (
            model.score(larger, ctx) + 1e-12
        )
    for metric in ("discernibility", "entropy", "height"):
        assert not quality_model(metric).grows_with_suppression


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_loss_equals_the_record_by_record_definition(seed):
    df, hierarchies = _fixed_table(seed, n=120)
    enc, domain = _encode(df, hierarchies)
    lattice = _Lattice(enc.heights)
    ctx = SearchContext.build(enc, lattice)
    model = quality_model("loss")
    bounds = model.lower_bounds(ctx)
    nothing = np.zeros(len(df), dtype=bool)
    for i in range(lattice.n_nodes):
        node = lattice.node(i)
        classes, table = enc.record_classes(node)
        out = class_outcome(table, [KAnonymity(3)], domain, node)
        suppressed = ~out.ok[classes]
        assert int(suppressed.sum()) == out.suppressed
        expected = loss_by_records(df, hierarchies, node, suppressed)
        assert model.score(out, ctx) == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert bounds[i] == pytest.approx(
            loss_by_records(df, hierarchies, node, nothing), rel=1e-12, abs=1e-12
        )


# ----------------------------------------------------------- the optimum stays exhaustive
def exhaustive_by_records(df, hierarchies, models, limit, metric):
    """The bound tests' exhaustive search, scored by :func:`score_by_records`."""

    def score(levels, key, suppressed):
        return score_by_records(metric, df, hierarchies, levels, key, suppressed)

    return exhaustive(df, hierarchies, models, limit, metric, score)


@st.composite
def growing_problem(draw):
    df, hierarchies = draw_table(draw, min_rows=8)
    kind = draw(st.sampled_from(["equal", "hierarchical", "capped"]))
    if kind == "capped":
        models = [draw(st.sampled_from(CAPPED))]
    else:
        models = [model_for(kind, draw(st.sampled_from([0.1, 0.2, 0.3])))]
    k = draw(st.integers(1, 3))
    if k > 1:
        models.insert(0, KAnonymity(k))
    # up to the whole table: every node feasible, so only the score bounds prune
    limit = draw(st.sampled_from([2, 4, len(df) // 2, len(df)]))
    metric = draw(st.sampled_from(GROWING))
    return df, hierarchies, models, limit, metric


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(growing_problem())
def test_search_with_cut_short_checks_matches_exhaustive_search(problem):
    df, hierarchies, models, limit, metric = problem
    expected = exhaustive_by_records(df, hierarchies, models, limit, metric)
    assert_search_finds(expected, df, hierarchies, models, limit, metric)


@pytest.mark.parametrize(
    "model",
    [BLikeness(1.0), BLikeness(1.0, enhanced=True), model_for("equal", 0.15)],
    ids=["beta-likeness", "enhanced-beta-likeness", "t-equal"],
)
@pytest.mark.parametrize("metric", GROWING)
def test_checks_are_cut_short_with_the_same_result(model, metric, monkeypatch):
    df, hierarchies = _fixed_table(3)
    limit = len(df)  # every node feasible: the score alone decides
    enc, domain = _encode(df, hierarchies)
    cut = optimal_generalization(enc, [model], limit, metric, domain)
    assert cut.cut_short > 0
    monkeypatch.setattr(type(quality_model(metric)), "grows_with_suppression", False)
    enc, domain = _encode(df, hierarchies)
    full = optimal_generalization(enc, [model], limit, metric, domain)
    assert full.cut_short == 0
    assert cut.score == full.score
    assert cut.best.levels == full.best.levels
    assert cut.checked < full.checked
    expected = exhaustive_by_records(df, hierarchies, [model], limit, metric)
    assert expected is not None
    assert cut.score == pytest.approx(expected[0], rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------ class-table pieces
@pytest.mark.parametrize("kernel", [True, False], ids=["scipy-kernel", "public-api"])
@pytest.mark.parametrize("rows", [10, 1499, 1500, 4000])
def test_contingency_rows_sum_like_pandas(rows, kernel, monkeypatch):
    if not kernel:
        monkeypatch.setattr(_lattice, "_csc_matvecs", None)
    elif _lattice._csc_matvecs is None:
        pytest.skip("this SciPy has no csc_matvecs kernel; the public product is tested")
    rng = np.random.default_rng(rows)
    m = max(rows // 3, 1)
    ids = rng.integers(0, m, rows)
    ids[:m] = np.arange(m)  # every target present
    counts = rng.integers(0, 50, (rows, 7)).astype(np.int64)
    got = _lattice._sum_rows(ids, m, counts)
    expected = pd.DataFrame(counts).groupby(ids).sum().sort_index().to_numpy()
    assert got.dtype.kind == "i"
    np.testing.assert_array_equal(got, expected)


def test_codes_at_equals_the_decoded_codes():
    df, hierarchies = _fixed_table(5)
    enc, _ = _encode(df, hierarchies)
    lattice = _Lattice(enc.heights)
    rng = np.random.default_rng(0)
    for i in range(lattice.n_nodes):
        node = lattice.node(i)
        fresh = _encode(df, hierarchies)[0].classes(node)
        index = rng.permutation(fresh.n_classes)[: max(fresh.n_classes // 2, 1)]
        partial = fresh.codes_at(index)
        np.testing.assert_array_equal(partial, enc.classes(node).codes[index])
        np.testing.assert_array_equal(fresh.codes[index], partial)
