"""Mondrian's default options (gain criterion, relaxed partitioning) through ``anonymize``.

Releases are checked with pycanon and pandas group-bys, independent of the package's verifier.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pycanon import anonymity as pycanon

from structanon import Hierarchy, InputError
from structanon.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
)
from tabular import anonymize, metrics
from tabular.cli import cli

DATA = Path(__file__).resolve().parents[2] / "tabular" / "data"
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


@pytest.fixture(scope="module")
def sample(adult_sample, adult_sample_hierarchies):
    return adult_sample, {**adult_sample_hierarchies, "age": "numeric"}


def test_defaults_are_gain_and_relaxed_and_recorded(sample):
    df, spec = sample
    release = anonymize(
        df,
        spec,
        "occupation",
        [KAnonymity(5)],
        algorithm="mondrian",
        seed=0,
        measures=False,
        key=b"m" * 32,
    )
    assert release.parameters["mondrian"] == {
        "criterion": "gain",
        "relaxed": True,
        "remainder": True,
    }
    explicit = anonymize(
        df,
        spec,
        "occupation",
        [KAnonymity(5)],
        algorithm="mondrian",
        seed=0,
        measures=False,
        key=b"m" * 32,
        mondrian_options={"criterion": "gain", "relaxed": True},
    )
    pd.testing.assert_frame_equal(release.data, explicit.data)


def test_defaults_lose_no_more_than_strict_mondrian(sample):
    df, spec = sample
    gcps = {}
    for name, options in {
        "default": None,
        "strict": {"criterion": "width", "relaxed": False},
    }.items():
        release = anonymize(
            df,
            spec,
            None,
            [KAnonymity(10)],
            algorithm="mondrian",
            seed=0,
            measures=False,
            mondrian_options=options,
        )
        released = release.data
        assert released.groupby(QIS).size().min() >= 10
        gcps[name] = metrics.gcp(released, spec, len(df), df)
    assert gcps["default"] < gcps["strict"]


@pytest.mark.parametrize(
    "models, check",
    [
        ([KAnonymity(5)], "k"),
        ([KAnonymity(5), DistinctLDiversity(3)], "l"),
        ([KAnonymity(4), EntropyLDiversity(2.5)], "entropy"),
        ([KAnonymity(4), RecursiveCLDiversity(3, 3)], "recursive"),
        ([KAnonymity(5), TCloseness(0.2)], "t"),
    ],
)
def test_default_release_verified_independently(sample, models, check):
    df, spec = sample
    release = anonymize(
        df, spec, "occupation", models, algorithm="mondrian", seed=1, measures=False
    )
    assert release.verify().passed
    released = release.data.reset_index(drop=True)
    assert len(released) == len(df) and release.suppressed == 0
    k = models[0].k
    assert pycanon.k_anonymity(released, QIS) >= k
    groups = released.groupby(QIS)["occupation"]
    if check == "l":
        assert pycanon.l_diversity(released, QIS, ["occupation"]) >= 3
    if check == "entropy":
        for _, s in groups:
            p = s.value_counts(normalize=True).to_numpy()
            assert np.exp(-(p * np.log(p)).sum()) >= 2.5 - 1e-9
    if check == "recursive":
        for _, s in groups:
            r = s.value_counts().to_numpy()  # descending
            assert r.size >= 3 and r[0] < 3 * r[2:].sum()
    if check == "t":
        assert pycanon.t_closeness(released, QIS, ["occupation"]) <= 0.2 + 1e-9


def test_bad_mondrian_options(sample):
    df, spec = sample
    small = df.iloc[:200]
    with pytest.raises(InputError, match="unknown mondrian_options"):
        anonymize(
            small,
            spec,
            None,
            [KAnonymity(2)],
            algorithm="mondrian",
            measures=False,
            mondrian_options={"criteria": "gain"},
        )
    with pytest.raises(InputError, match="criterion"):
        anonymize(
            small,
            spec,
            None,
            [KAnonymity(2)],
            algorithm="mondrian",
            measures=False,
            mondrian_options={"criterion": "best"},
        )
    with pytest.raises(InputError, match="relaxed"):
        anonymize(
            small,
            spec,
            None,
            [KAnonymity(2)],
            algorithm="mondrian",
            measures=False,
            mondrian_options={"relaxed": "yes"},
        )
    hier = {c: h for c, h in spec.items() if c != "age"}
    with pytest.raises(InputError, match="apply to algorithm 'mondrian'"):
        anonymize(
            small,
            hier,
            None,
            [KAnonymity(2)],
            algorithm="optimal",
            measures=False,
            mondrian_options={"relaxed": False},
        )


def test_cli_strict_and_criterion_options(tmp_path):
    base = [
        "anonymize",
        str(DATA / "adult_sample.csv"),
        "--sep",
        ";",
        "--qi",
        "sex,age,race,education",
        "--hierarchy-dir",
        str(DATA),
        "--numeric",
        "age",
        "-k",
        "5",
        "--algorithm",
        "mondrian",
        "--quiet",
    ]
    reports = {}
    for name, extra in {
        "default": [],
        "strict": ["--strict", "--mondrian-criterion", "width"],
    }.items():
        out, report = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
        result = CliRunner().invoke(
            cli, base + extra + ["-o", str(out), "--report", str(report)], catch_exceptions=False
        )
        assert result.exit_code == 0, result.output
        data = pd.read_csv(out, sep=";", dtype=str)
        assert data.groupby(["sex", "age", "race", "education"]).size().min() >= 5
        reports[name] = json.loads(report.read_text())
    assert reports["default"]["parameters"]["mondrian"]["relaxed"] is True
    assert reports["strict"]["parameters"]["mondrian"] == {
        "criterion": "width",
        "relaxed": False,
        "remainder": True,
    }
    result = CliRunner().invoke(
        cli, base[:-3] + ["--algorithm", "optimal", "--strict", "-o", str(tmp_path / "x.csv")]
    )
    assert result.exit_code == 2 and "apply to --algorithm mondrian" in result.output


TAXONOMY = Hierarchy(
    [["a1", "a", "*"], ["a2", "a", "*"], ["b1", "b", "*"], ["b2", "b", "*"], ["c1", "c", "*"]],
    name="cat",
)


@st.composite
def tables(draw):
    n = draw(st.integers(6, 40))
    return pd.DataFrame(
        {
            "age": draw(st.lists(st.integers(0, 12), min_size=n, max_size=n)),
            "cat": draw(st.lists(st.sampled_from(list(TAXONOMY.leaves)), min_size=n, max_size=n)),
            "s": draw(st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=n, max_size=n)),
        }
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=tables(), k=st.integers(1, 6), diverse=st.booleans())
def test_anonymize_defaults_property(df, k, diverse):
    """For any table the whole of which passes, the default release passes and keeps all."""
    models = [KAnonymity(k)] + ([DistinctLDiversity(2)] if diverse else [])
    if len(df) < k or (diverse and df["s"].nunique() < 2):
        return
    release = anonymize(
        df,
        {"age": "numeric", "cat": TAXONOMY},
        "s",
        models,
        algorithm="mondrian",
        seed=0,
        measures=False,
    )
    released = release.data
    assert len(released) == len(df) and release.suppressed == 0
    sizes = released.groupby(["age", "cat"]).size()
    assert sizes.min() >= k
    if diverse:
        assert released.groupby(["age", "cat"])["s"].nunique().min() >= 2
    # the multiset of sensitive values is kept, and each record's values are covered
    assert sorted(released["s"]) == sorted(df["s"])
    lo = released["age"].str.split("-").str[0].astype(int)
    hi = released["age"].str.split("-").str[-1].astype(int)
    assert lo.min() >= df["age"].min() and hi.max() <= df["age"].max()
