"""The optimal search reads the models' flags and the quality models' lower bounds."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tabular
from structanon.models import EntropyLDiversity, KAnonymity
from structanon.partition import encode_values
from tabular._lattice import EncodedTable
from tabular._optimal import (
    QUALITY_MODELS,
    NodeOutcome,
    SearchContext,
    _Lattice,
    class_outcome,
    optimal_generalization,
    quality_model,
)
from tests.tabular.test_optimal import random_hierarchy


class LookAlikeK(KAnonymity):
    """A k-anonymity of another type: the search must prune on its flags, not its type."""

    name = "look-alike-k"


class NonMonotoneK(KAnonymity):
    """k-anonymity declared non-monotone: the search must then visit without tagging."""

    name = "non-monotone-k"
    monotone = False
    monotone_with_suppression = False


def _table(seed: int = 3, n: int = 60):
    rng = np.random.default_rng(seed)
    hierarchies = [random_hierarchy("a", 4, 2), random_hierarchy("b", 8, 3)]
    columns = [rng.integers(0, h.leaves.size, n) for h in hierarchies]
    sens, domain = encode_values(rng.integers(0, 3, n))
    return EncodedTable(columns, hierarchies, sens, domain.size), domain


def test_search_reads_monotone_with_suppression_from_the_model_not_its_type():
    enc, domain = _table()
    plain = optimal_generalization(enc, [KAnonymity(3)], 5, "loss", domain)
    look_alike = optimal_generalization(enc, [LookAlikeK(3)], 5, "loss", domain)
    assert plain.monotone and look_alike.monotone  # old code: only type(model) in (...)
    assert look_alike.best.levels == plain.best.levels and look_alike.score == plain.score


def test_search_reads_monotone_flag():
    enc, domain = _table()
    result = optimal_generalization(enc, [NonMonotoneK(3)], 0, "discernibility", domain)
    assert not result.monotone
    assert (
        result.score
        == optimal_generalization(enc, [KAnonymity(3)], 0, "discernibility", domain).score
    )


def test_quality_models_are_selected_by_name():
    assert QUALITY_MODELS[:4] == ("discernibility", "loss", "precision", "height")
    assert set(QUALITY_MODELS[4:]) == {"entropy", "entropy-nonmonotonic"}
    assert [quality_model(m).name for m in QUALITY_MODELS] == list(QUALITY_MODELS)
    with pytest.raises(ValueError, match="metric must be one of"):
        quality_model("nope")


@pytest.mark.parametrize("metric", QUALITY_MODELS)
@pytest.mark.parametrize("max_suppressed", [0, 10])
def test_lower_bound_bounds_the_node_and_where_monotone_its_generalizations(metric, max_suppressed):
    """Checked node by node on every node of a small lattice (independent of the search)."""
    enc, domain = _table()
    lattice = _Lattice(enc.heights)
    ctx = SearchContext.build(enc, lattice)
    model = quality_model(metric)
    models = [KAnonymity(4), EntropyLDiversity(1.5)]
    scores = {}
    for i in range(lattice.n_nodes):
        node = lattice.node(i)
        out: NodeOutcome = class_outcome(enc.classes(node), models, domain, node)
        scores[i] = model.score(out, ctx) if out.suppressed <= max_suppressed else None
    for i, j in itertools.product(range(lattice.n_nodes), repeat=2):
        if scores[j] is None:
            continue
        bound = model.lower_bound(i, ctx)
        if i == j:
            assert bound <= scores[j] + 1e-9
        elif lattice.above(i)[j] and (model.monotone_with_suppression or max_suppressed == 0):
            assert bound <= scores[j] + 1e-9


def test_public_metric_strings_still_work(adult_sample, adult_sample_hierarchies):
    small = adult_sample.head(400)
    for metric in tabular.QUALITY_MODELS:
        release = tabular.anonymize(
            small,
            adult_sample_hierarchies,
            None,
            [KAnonymity(3)],
            metric=metric,
            measures=False,
            key=b"q" * 32,
        )
        assert release.info["score"]["metric"] == metric
