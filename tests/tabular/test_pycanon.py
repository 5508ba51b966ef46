"""Every algorithm's output on the Adult sample, verified by pycanon (independent)."""

from __future__ import annotations

import pytest

import tabular
from structanon.models import DistinctLDiversity, KAnonymity, TCloseness

pycanon = pytest.importorskip("pycanon")
from pycanon import anonymity  # noqa: E402

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


@pytest.mark.parametrize("algorithm", ["optimal", "datafly", "mondrian"])
@pytest.mark.parametrize(
    "k, l_div, t, limit",
    [
        (5, None, None, 0.0),
        (10, 3, None, 0.05),
        (5, None, 0.2, 0.0),
    ],
)
def test_pycanon_confirms_release(
    adult_sample, adult_sample_hierarchies, algorithm, k, l_div, t, limit, pycanon_confirms
):
    models = (
        [KAnonymity(k)]
        + ([DistinctLDiversity(l_div)] if l_div else [])
        + ([TCloseness(t)] if t is not None else [])
    )
    release = tabular.anonymize(
        adult_sample,
        adult_sample_hierarchies,
        "occupation",
        models,
        algorithm=algorithm,
        suppression_limit=limit,
        seed=0,
        measures=False,
    )
    pycanon_confirms(release, len(adult_sample), k, l_div, t)


def test_pycanon_confirms_optimal_on_full_adult(adult_full, adult_full_hierarchies):
    release = tabular.anonymize(
        adult_full,
        adult_full_hierarchies,
        "occupation",
        [KAnonymity(5), DistinctLDiversity(3)],
        measures=False,
    )
    data = release.data.reset_index(drop=True)
    assert anonymity.k_anonymity(data, QIS) >= 5
    assert anonymity.l_diversity(data, QIS, ["occupation"]) >= 3
