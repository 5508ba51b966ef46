"""The optimal search's compiled sweep (tabular._sweep): every node's loss under
beta-likeness (and k-anonymity floors), checked against the search's own per-node checks and
against an exhaustive search scored record by record.

* node by node, on random tables: a node checked in full has the suppressed records and the
  loss of :func:`class_outcome` (with no cut short) and its score; an infeasible one is
  infeasible there; a node stopped after its first round has a loss at most its full one and
  above the cutoff of the moment; an unchecked one a bound above the last cutoff;
* the last cutoff is just above the least feasible loss, and no node scoring within it is
  ever ruled out;
* the search with the sweep (forced on small tables) finds the optimum of an exhaustive search
  scored record by record, and the same node, score and ties as without the sweep;
* on Adult (ARX's beta-likeness requests) the sweep is used by default, rules out all but a
  handful of nodes, and the release is the one of the search without it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structanon.models import BLikeness, KAnonymity, ProbabilisticLDiversity
from tabular import _sweep
from tabular._optimal import (
    SearchContext,
    _Lattice,
    _loss_tables,
    class_outcome,
    optimal_generalization,
    quality_model,
)
from tests.tabular.test_optimal import draw_table
from tests.tabular.test_optimal_cut_short import exhaustive_by_records
from tests.tabular.test_optimal_entropy import QI8, _encode
from tests.tabular.test_optimal_suppression_bound import _fixed_table

pytest.importorskip("numba", reason="the sweep is compiled with Numba")

BETAS = [0.3, 0.5, 1.0, 2.0, 5.0]


@st.composite
def beta_problem(draw, min_rows: int = 8):
    df, hierarchies = draw_table(draw, min_rows=min_rows)
    models = [BLikeness(draw(st.sampled_from(BETAS)), enhanced=draw(st.booleans()))]
    k = draw(st.integers(1, 3))
    if k > 1:
        models.insert(0, KAnonymity(k))
    limit = draw(st.sampled_from([0, 2, len(df) // 4, len(df) // 2, len(df)]))
    return df, hierarchies, models, limit


def _python_outcome(table, models, domain, node, limit, ctx):
    """(feasible, suppressed, loss) of the search's own check, run to the end."""
    out = class_outcome(table, models, domain, node, limit)
    if out.suppressed > limit or out.released == 0:
        return False, out.suppressed, np.inf
    return True, out.suppressed, quality_model("loss").score(out, ctx)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(beta_problem(), st.sampled_from([np.inf, 0.05, 0.2, 0.5]))
def test_every_node_agrees_with_the_search_checks(problem, start):
    df, hierarchies, models, limit = problem
    enc, domain = _encode(df, hierarchies)
    lattice = _Lattice(enc.heights)
    ctx = SearchContext.build(enc, lattice)
    bounds = quality_model("loss").lower_bounds(ctx)
    walked = _sweep.sweep_nodes(enc, models, limit, _loss_tables(ctx), bounds, start)
    state, suppressed, score, last = walked
    assert last <= start
    feasible_scores = []
    checked = []  # the search's own outcome of every node
    for i in range(lattice.n_nodes):
        node = lattice.node(i)
        ok, dropped, loss = _python_outcome(enc.classes(node), models, domain, node, limit, ctx)
        checked.append((ok, loss))
        if ok:
            feasible_scores.append(loss)
        if state[i] == 2:
            assert ok and int(suppressed[i]) == dropped
            assert score[i] == pytest.approx(loss, rel=1e-12, abs=1e-12)
        elif state[i] == 3:
            assert not ok
        elif state[i] == 1:
            assert score[i] > last and score[i] <= loss + 1e-12
            assert int(suppressed[i]) <= dropped
        else:
            assert bounds[i] > last  # not checked: its bound exceeded a cutoff
    if feasible_scores:
        least = min(feasible_scores)
        if np.isfinite(start) and least > start:
            return  # the walk started below every feasible loss: nothing to reach
        assert least <= last <= least + 1e-9 * max(1.0, least) + 1e-15
        # no node reaching the least loss is ruled out
        values, cut = _sweep.swept_bounds(walked, bounds)
        for i, (ok, loss) in enumerate(checked):
            if ok and loss <= least + 1e-12:
                assert values[i] <= cut
    else:
        assert not (state == 2).any()


@pytest.fixture
def forced(monkeypatch):
    """The sweep on every table (however small)."""
    monkeypatch.setattr(_sweep, "SWEEP_MIN_WORK", 0)


def _search(df, hierarchies, models, limit, sweep: bool, monkeypatch):
    monkeypatch.setattr(_sweep, "_KERNEL", None if sweep else False)
    enc, domain = _encode(df, hierarchies)
    return optimal_generalization(enc, models, limit, "loss", domain)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(beta_problem())
def test_search_with_the_sweep_matches_exhaustive_search_and_the_search_without(problem):
    df, hierarchies, models, limit = problem
    expected = exhaustive_by_records(df, hierarchies, models, limit, "loss")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_sweep, "SWEEP_MIN_WORK", 0)
        if expected is None:
            return  # infeasible: the sweep is not reached (the search says so first)
        swept = _search(df, hierarchies, models, limit, True, mp)
        plain = _search(df, hierarchies, models, limit, False, mp)
    assert swept.score == pytest.approx(expected[0], rel=1e-9, abs=1e-9)
    assert swept.score == plain.score
    assert swept.best.levels == plain.best.levels
    assert swept.ties == plain.ties
    assert swept.best.suppressed == plain.best.suppressed


@pytest.mark.parametrize("enhanced", [False, True])
@pytest.mark.parametrize("k", [1, 4])
def test_the_sweep_rules_out_nodes_with_the_same_result(enhanced, k, forced, monkeypatch):
    df, hierarchies = _fixed_table(3)
    models = [BLikeness(1.0, enhanced=enhanced)] + ([KAnonymity(k)] if k > 1 else [])
    limit = len(df)
    swept = _search(df, hierarchies, models, limit, True, monkeypatch)
    plain = _search(df, hierarchies, models, limit, False, monkeypatch)
    assert (swept.score, swept.best.levels, swept.ties) == (
        plain.score,
        plain.best.levels,
        plain.ties,
    )
    assert np.array_equal(swept.best.ok, plain.best.ok)
    expected = exhaustive_by_records(df, hierarchies, models, limit, "loss")
    assert expected is not None
    assert swept.score == pytest.approx(expected[0], rel=1e-9, abs=1e-9)


def test_the_sweep_applies_only_to_its_models():
    assert _sweep.sweep_form([BLikeness(2.0)]) == (1, 2.0, False, pytest.approx(1e-9))
    assert _sweep.sweep_form([KAnonymity(5), BLikeness(1.0, enhanced=True)])[:3] == (5, 1.0, True)
    assert _sweep.sweep_form([KAnonymity(5)]) is None  # nothing measured
    assert _sweep.sweep_form([BLikeness(1.0), BLikeness(2.0)]) is None
    assert _sweep.sweep_form([ProbabilisticLDiversity(2), BLikeness(1.0)]) is None


def test_small_tables_are_left_to_the_search(monkeypatch):
    """Below SWEEP_MIN_WORK the kernel is not even imported (the search alone is faster)."""
    df, hierarchies = _fixed_table(1)
    enc, _ = _encode(df, hierarchies)
    ctx = SearchContext.build(enc, _Lattice(enc.heights))
    bounds = quality_model("loss").lower_bounds(ctx)
    monkeypatch.setattr(_sweep, "_KERNEL", None)
    assert bounds.size * enc.base_weight.size < _sweep.SWEEP_MIN_WORK
    assert not _sweep.sweep_applies(enc, [BLikeness(1.0)], bounds.size)
    assert _sweep._KERNEL is None


def test_tables_too_wide_are_left_to_the_search(monkeypatch):
    """The walk holds up to one table a lattice level: beyond SWEEP_MAX_CELLS cells in the
    bottom node's contingency, the search's own (bounded) cache is used instead."""
    df, hierarchies = _fixed_table(1)
    enc, _ = _encode(df, hierarchies)
    n_nodes = _Lattice(enc.heights).n_nodes
    assert _sweep.sweep_applies(enc, [BLikeness(1.0)], n_nodes, force=True)
    monkeypatch.setattr(_sweep, "SWEEP_MAX_CELLS", enc.base_weight.size * enc.n_sensitive - 1)
    assert not _sweep.sweep_applies(enc, [BLikeness(1.0)], n_nodes, force=True)


def test_without_numba_the_search_goes_on(monkeypatch, forced):
    df, hierarchies = _fixed_table(2)
    models = [BLikeness(1.0)]
    # _KERNEL False: as when Numba cannot be imported
    result = _search(df, hierarchies, models, len(df), False, monkeypatch)
    expected = exhaustive_by_records(df, hierarchies, models, len(df), "loss")
    assert expected is not None
    assert result.score == pytest.approx(expected[0], rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------- ARX's requests on Adult
ADULT_QIS = QI8  # ARX's 8 quasi-identifiers of Adult


@pytest.fixture(scope="module")
def adult_8():
    import pandas as pd

    from structanon import Hierarchy
    from tests._support import SHARED_DATA, shared_file

    df = pd.read_csv(shared_file("adult/adult.csv"), sep=";")
    folder = SHARED_DATA / "adult"
    hierarchies = {
        c: Hierarchy.from_csv(folder / f"adult_hierarchy_{c}.csv", name=c) for c in ADULT_QIS
    }
    return df, hierarchies


@pytest.mark.parametrize(
    "beta, enhanced, limit", [(1.0, False, 1.0), (5.0, False, 0.4), (10.0, True, 1.0)]
)
def test_adult_beta_likeness_requests_are_swept_with_the_same_release(
    adult_8, beta, enhanced, limit, monkeypatch
):
    """ARX's beta-likeness requests (TestAnonymizationBLikeness): the sweep is used at the
    default threshold, leaves a handful of nodes to check, and the release equals the one of
    the search without it; pycanon measures the published table's beta-likeness."""
    import tabular

    anonymity = pytest.importorskip("pycanon.anonymity")
    df, hierarchies = adult_8

    def run():
        return tabular.anonymize(
            df,
            hierarchies,
            "occupation",
            [BLikeness(beta, enhanced=enhanced)],
            algorithm="optimal",
            suppression_limit=limit,
            metric="loss",
            measures=False,
            key=b"s" * 32,
        )

    swept = run()
    monkeypatch.setattr(_sweep, "_KERNEL", False)
    plain = run()
    lattice = swept.info["lattice"]
    assert lattice["checked"] < 100 < plain.info["lattice"]["checked"]
    assert swept.info["score"] == plain.info["score"]
    assert swept.info["transformation"] == plain.info["transformation"]
    assert swept.suppressed == plain.suppressed
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(swept.data, plain.data)
    published = swept.data.reset_index(drop=True)
    measure = anonymity.enhanced_beta_likeness if enhanced else anonymity.basic_beta_likeness
    assert measure(published, ADULT_QIS, ["occupation"]) <= beta + 1e-9


def test_the_search_runs_blas_on_one_thread(monkeypatch):
    """The search's matrix products are small: BLAS threads on other cores would only spin
    (CPU time with no gain in wall time); the limit is lifted after the search."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from tabular import _optimal

    seen = []
    search = _optimal._optimal_search

    def spy(*args):
        seen.extend(
            i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"
        )
        return search(*args)

    monkeypatch.setattr(_optimal, "_optimal_search", spy)
    df, hierarchies = _fixed_table(1)
    enc, domain = _encode(df, hierarchies)
    before = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    optimal_generalization(enc, [BLikeness(1.0)], len(df), "loss", domain)
    if not seen:
        pytest.skip("no BLAS library is loaded in this process")
    assert set(seen) == {1}
    after = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert after == before
