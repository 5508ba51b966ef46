"""The public anonymize(): validation, identifiers, suppression accounting, properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tabular
from structanon import Hierarchy, InfeasibleError, InputError
from structanon.io import Pseudonymizer
from structanon.models import DistinctLDiversity, KAnonymity, TCloseness

AGE = Hierarchy.from_intervals(range(20, 60), widths=(5, 10, 20), start=20, name="age")
SEX = Hierarchy([["M", "*"], ["F", "*"]], name="sex")
ZIP = Hierarchy.from_masking(["47677", "47602", "47678", "47905", "47909", "47906"], name="zip")


def table(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "name": [f"person{i}" for i in range(n)],
            "age": rng.integers(20, 60, size=n),
            "sex": rng.choice(["M", "F"], size=n),
            "zip": rng.choice(ZIP.leaves, size=n),
            "disease": rng.choice(["flu", "cold", "hiv", "cancer"], size=n),
        }
    )


QI = {"age": AGE, "sex": SEX, "zip": ZIP}


def independent_check(data: pd.DataFrame, qis, sensitive=None, k=1, l_div=None, t=None):
    """Recount every class of the published table with plain pandas."""
    groups = data.groupby(list(qis))
    assert groups.size().min() >= k
    if l_div:
        assert groups[sensitive].nunique().min() >= l_div
    if t is not None:
        ref = data[sensitive].value_counts(normalize=True)
        for _, g in groups:
            p = g[sensitive].value_counts(normalize=True).reindex(ref.index, fill_value=0)
            assert 0.5 * np.abs(p - ref).sum() <= t + 1e-9


@pytest.mark.parametrize("algorithm", ["optimal", "datafly", "mondrian"])
def test_release_satisfies_models_and_counts_everyone(algorithm):
    df = table(80)
    release = tabular.anonymize(
        df,
        QI,
        "disease",
        [KAnonymity(4), DistinctLDiversity(2)],
        algorithm=algorithm,
        suppression_limit=0.1,
        seed=3,
    )
    independent_check(release.data, QI, "disease", k=4, l_div=2)
    assert len(release.data) + release.suppressed == len(df)
    assert release.n_individuals == len(df)
    assert list(release.data.columns) == list(df.columns)
    assert release.verify().passed
    if algorithm == "mondrian":
        assert release.transformation is None
    else:
        assert set(release.transformation) == set(QI)
        for column, level in release.transformation.items():
            assert set(release.data[column]) <= set(QI[column].labels(level))


def test_same_seed_and_key_same_release_and_rows_are_shuffled():
    df = table(60)
    key = b"r" * 32
    a = tabular.anonymize(df, QI, models=[KAnonymity(3)], seed=7, key=key, measures=False)
    b = tabular.anonymize(df, QI, models=[KAnonymity(3)], seed=7, key=key, measures=False)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.data["name"].tolist() != df["name"].tolist()
    assert df["name"].loc[a.source_index].tolist() == a.data["name"].tolist()
    keyless = [
        tabular.anonymize(df, QI, models=[KAnonymity(3)], seed=7, measures=False) for _ in range(2)
    ]
    assert keyless[0].data["name"].tolist() != keyless[1].data["name"].tolist()


def test_identifiers_are_pseudonymized_with_a_key_before_anything_else():
    df = table(40)
    key = Pseudonymizer(b"k" * 32)
    release = tabular.anonymize(
        df,
        QI,
        models=[KAnonymity(2)],
        identifiers=["name"],
        pseudonymizer=key,
        seed=0,
        measures=False,
    )
    published = set(release.data["name"])
    assert not published & set(df["name"])
    assert published <= set(Pseudonymizer(b"k" * 32).pseudonymize(df["name"]))
    assert release.parameters["identifier_handling"] == "pseudonymized"
    dropped = tabular.anonymize(
        df, QI, models=[KAnonymity(2)], identifiers=["name"], drop_identifiers=True, measures=False
    )
    assert "name" not in dropped.data.columns


def test_t_closeness_is_met_against_the_published_distribution():
    df = table(120, seed=5)
    release = tabular.anonymize(
        df, QI, "disease", [KAnonymity(2), TCloseness(0.15)], suppression_limit=0.2, measures=False
    )
    independent_check(release.data, QI, "disease", k=2, t=0.15)


@pytest.mark.parametrize(
    "mutate, match, column",
    [
        (lambda d: d.assign(age=d["age"].astype(float).where(d.index != 5)), "missing", "age"),
        (lambda d: d.assign(sex=d["sex"].where(d.index != 7, "X")), "not in the hierarchy", "sex"),
        (
            lambda d: d.assign(zip=d["zip"].astype(object).where(d.index != 4, 47677)),
            "mixed",
            "zip",
        ),
    ],
)
def test_bad_values_are_reported_by_column_and_row(mutate, match, column):
    df = mutate(table(20))
    with pytest.raises(InputError, match=match) as info:
        tabular.anonymize(df, QI, models=[KAnonymity(2)])
    assert info.value.column == column
    assert info.value.row is not None


def test_parameter_errors():
    df = table(20)
    with pytest.raises(InputError, match="algorithm"):
        tabular.anonymize(df, QI, models=[KAnonymity(2)], algorithm="magic")
    with pytest.raises(InputError, match="suppression_limit"):
        tabular.anonymize(df, QI, models=[KAnonymity(2)], suppression_limit=1.5)
    with pytest.raises(InputError, match="quasi-identifier not in the table"):
        tabular.anonymize(df, {"height": AGE}, models=[KAnonymity(2)])
    with pytest.raises(InputError, match="sensitive"):
        tabular.anonymize(df, QI, models=[DistinctLDiversity(2)])
    with pytest.raises(InputError, match="mondrian"):
        tabular.anonymize(df, {"age": "numeric"}, models=[KAnonymity(2)], algorithm="optimal")
    with pytest.raises(InputError, match="at least one"):
        tabular.anonymize(df, QI, models=[])
    with pytest.raises(InfeasibleError):
        tabular.anonymize(df, QI, models=[KAnonymity(21)])


@st.composite
def problems(draw):
    n = draw(st.integers(4, 50))
    seed = draw(st.integers(0, 10_000))
    df = table(n, seed)
    k = draw(st.integers(1, 6))
    l_div = draw(st.sampled_from([None, 2, 3]))
    limit = draw(st.sampled_from([0.0, 0.05, 0.3]))
    algorithm = draw(st.sampled_from(["optimal", "datafly", "mondrian"]))
    return df, k, l_div, limit, algorithm


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_any_valid_input_gives_a_verified_release_or_infeasible(problem):
    df, k, l_div, limit, algorithm = problem
    models = [KAnonymity(k)] + ([DistinctLDiversity(l_div)] if l_div else [])
    try:
        release = tabular.anonymize(
            df,
            QI,
            "disease",
            models,
            algorithm=algorithm,
            suppression_limit=limit,
            seed=1,
            measures=False,
        )
    except InfeasibleError:
        # only when even the whole table as one class fails the models
        assert len(df) < k or (l_div and df["disease"].nunique() < l_div)
        return
    independent_check(release.data, QI, "disease", k=k, l_div=l_div)
    assert len(release.data) + release.suppressed == len(df)
    if algorithm != "mondrian":
        assert release.suppressed <= limit * len(df) + 1e-9


def test_local_suppression_keeps_every_record_and_blanks_cells():
    df = table(60, seed=2)
    release = tabular.anonymize(
        df,
        QI,
        models=[KAnonymity(3)],
        suppression_limit=0.2,
        local_suppression=True,
        seed=0,
        measures=False,
    )
    assert release.suppressed == 0 and len(release.data) == len(df)
    independent_check(release.data, QI, k=3)
    blanked = int((release.data[list(QI)] == "*").to_numpy().sum())
    assert blanked >= release.info["locally_suppressed_cells"] > 0
    with pytest.raises(InputError, match="local_suppression"):
        tabular.anonymize(
            df, QI, "disease", [KAnonymity(2), DistinctLDiversity(2)], local_suppression=True
        )


def test_record_linkage_risk_drops():
    df = table(80, seed=4)
    release = tabular.anonymize(df, QI, models=[KAnonymity(5)], linkage=True, seed=0)
    before = release.risk["before"]["record_linkage"]
    after = release.risk["after"]["record_linkage"]
    assert after <= 1 / 5 + 1e-9 < before


def test_ordered_t_closeness_with_suppression_verifies_on_the_published_domain():
    # here suppression removes every record of a salary value: the ordered distance must be
    # measured over the published domain, as a verifier reading the output measures it
    rng = np.random.default_rng(2)
    df = table(40, seed=2)
    df["salary"] = rng.choice(
        [1, 2, 3, 4, 5, 6], size=len(df), p=[0.3, 0.25, 0.2, 0.15, 0.05, 0.05]
    )
    release = tabular.anonymize(
        df,
        QI,
        "salary",
        [KAnonymity(2), TCloseness(0.3, "ordered")],
        suppression_limit=0.3,
        measures=False,
    )
    assert release.verify().passed
    assert release.suppressed > 0
    from pycanon import anonymity

    data = release.data.reset_index(drop=True)
    assert anonymity.t_closeness(data, list(QI), ["salary"]) <= 0.3 + 1e-9
