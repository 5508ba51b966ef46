"""The package shape (issue 19): models are core PrivacyModels, the release declares its fields."""

from __future__ import annotations

import dataclasses
import warnings

import pytest

import transactions
from structanon import Release
from structanon.models import PrivacyModel

DATA = [{"milk", "beer"}, {"milk", "diapers"}, {"beer", "diapers"}, {"milk"}] * 3


def _releases():
    return {
        "km": transactions.km_anonymize(DATA, k=2, m=2, fanout=2, measures=False),
        "k": transactions.k_anonymize(DATA, k=2, fanout=2, measures=False),
        "band": transactions.band_matrix(DATA, ["beer"], p=2, measures=False),
    }


def test_release_models_are_core_privacy_models_with_flags():
    expected = {
        "km": (transactions.KmAnonymity, True, False),
        "k": (transactions.TransactionKAnonymity, True, True),
        "band": (transactions.PrivacyDegree, False, False),
    }
    for name, rel in _releases().items():
        (model,) = rel.models
        cls, monotone, with_suppression = expected[name]
        assert type(model) is cls and isinstance(model, PrivacyModel)
        assert model.monotone is monotone
        assert model.monotone_with_suppression is with_suppression
        assert model.to_dict()["model"] and model.describe() == rel.checks.checks[0].model
        # the model itself re-checks the published data
        assert model.check(rel.data).passed


def test_models_fail_on_a_violating_release():
    assert not transactions.KmAnonymity(2, 2).check([{"a", "b"}, {"a", "b"}, {"a", "c"}]).passed
    assert not transactions.TransactionKAnonymity(2).check([{"a"}, {"a"}, {"b"}]).passed
    leaky = {
        "qi": [{"a", "x"}, {"b"}],
        "group": [0, 0],
        "sensitive_counts": [{}],
        "sensitive_items": ["x"],
        "p": 2,
    }
    assert not transactions.PrivacyDegree(2).check(leaky).passed


def test_taxonomy_is_a_declared_release_field():
    rels = _releases()
    fields = {f.name for f in dataclasses.fields(transactions.TransactionsRelease)}
    assert "taxonomy" in fields
    for name, rel in rels.items():
        assert isinstance(rel, transactions.TransactionsRelease) and isinstance(rel, Release)
        assert (rel.taxonomy is None) == (name == "band")
    assert "taxonomy" not in rels["km"].to_dict()
    assert repr(rels["km"]).startswith("<Release transactions")


def test_measures_switch_and_deprecated_evaluate():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        rel = transactions.km_anonymize(DATA, k=2, m=2, fanout=2, measures=False)
    assert set(rel.utility) == {"ncp"} and not rel.risk
    for run in (
        lambda: transactions.km_anonymize(DATA, k=2, m=2, fanout=2, evaluate=False),
        lambda: transactions.k_anonymize(DATA, k=2, fanout=2, evaluate=False),
        lambda: transactions.band_matrix(DATA, ["beer"], p=2, evaluate=False),
    ):
        with pytest.warns(DeprecationWarning, match="evaluate= is deprecated"):
            old = run()
        assert not old.risk
    full = transactions.km_anonymize(DATA, k=2, m=2, fanout=2)
    assert "frequent_itemsets" in full.utility and full.risk["after"]


def test_timings_steps_and_k_one_warning():
    rel = transactions.k_anonymize(DATA, k=2, fanout=2)
    assert {"encode", "anonymize", "verify", "measures", "total"} <= set(rel.timings)
    with pytest.warns(UserWarning, match="k = 1 gives no protection"):
        rel = transactions.k_anonymize(DATA, k=1, fanout=2, measures=False)
    assert rel.info["warnings"]


def test_transformation_in_words():
    rels = _releases()
    km = rels["km"]
    text = km.info["transformation_text"]
    published = {str(x) for t in km.data for x in t}
    generalized = sorted(published - {"milk", "beer", "diapers"})
    assert ("taxonomy group" in text) == bool(generalized)
    assert all(label in text for label in generalized[:3])
    band = rels["band"].info["transformation_text"]
    assert "except the 1 sensitive item," in band and "at most 1/2" in band


def test_repr_counts_individuals_not_the_keys_of_a_band_release():
    """A band release's data is a dict of tables: its length (5 keys) was shown as the
    number published; the individuals published are those in less those suppressed."""
    baskets = [{1, 2}, {2, 3}, {1, 3}, {4}, {1, 4}, {2, 4}] * 5
    release = transactions.band_matrix(baskets, [4], p=2, measures=False)
    n, out = len(baskets), release.shown("suppressed")
    assert f"; {n - out} published, {out} suppressed of {n}>" in repr(release)
