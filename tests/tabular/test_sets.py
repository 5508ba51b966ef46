"""'set' quasi-identifiers: categorical QIs without hierarchy, published as value sets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tabular
from structanon import InfeasibleError, InputError
from structanon.models import DistinctLDiversity, KAnonymity, TCloseness
from tabular import metrics
from tabular.cli import cli
from tabular.metrics import _coverage
from tabular.risk import record_linkage

pycanon = pytest.importorskip("pycanon")

BUNDLED = Path(__file__).resolve().parents[2] / "tabular" / "data"
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
SET_SPECS = {c: "set" for c in QIS if c != "age"} | {"age": "numeric"}


def _elements(cell: str) -> set[str]:
    return set(str(cell).split(","))


@pytest.mark.parametrize("k, l_div, t", [(5, None, None), (10, 3, None), (5, None, 0.2)])
def test_pycanon_confirms_set_release(adult_sample, k, l_div, t, pycanon_confirms):
    models = (
        [KAnonymity(k)]
        + ([DistinctLDiversity(l_div)] if l_div else [])
        + ([TCloseness(t)] if t is not None else [])
    )
    specs = {c: SET_SPECS[c] for c in QIS}
    release = tabular.anonymize(
        adult_sample, specs, "occupation", models, algorithm="mondrian", seed=0, measures=False
    )
    data = pycanon_confirms(release, len(adult_sample), k, l_div, t)
    assert data["race"].str.contains(",").any()  # value sets were published
    assert release.parameters["qi_kinds"]["race"] == "set"


def test_ordinal_is_an_alias_of_set(adult_sample):
    a = tabular.anonymize(
        adult_sample,
        {"race": "set", "age": "numeric"},
        models=[KAnonymity(5)],
        algorithm="mondrian",
        seed=3,
        measures=False,
        key=b"s" * 32,
    )
    b = tabular.anonymize(
        adult_sample,
        {"race": "ordinal", "age": "numeric"},
        models=[KAnonymity(5)],
        algorithm="mondrian",
        seed=3,
        measures=False,
        key=b"s" * 32,
    )
    pd.testing.assert_frame_equal(a.data, b.data)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 40))
    letters = st.sampled_from(["a", "b", "c", "d", "e", "f"])
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "c1": draw(st.lists(letters, min_size=n, max_size=n)),
            "c2": draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)),
            "x": draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)),
            "s": draw(st.lists(st.sampled_from(["p", "q", "r"]), min_size=n, max_size=n)),
        }
    )


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(1, 5), st.booleans())
def test_property_every_class_passes_and_every_row_is_kept_or_counted(df, k, with_l):
    models = [KAnonymity(k)] + ([DistinctLDiversity(2)] if with_l else [])
    specs = {"c1": "set", "c2": "set", "x": "numeric"}
    try:
        release = tabular.anonymize(df, specs, "s", models, algorithm="mondrian", seed=1)
    except InfeasibleError:  # acceptable only when the whole table already fails
        assert len(df) < k or (with_l and df["s"].nunique() < 2)
        return
    data = release.data
    assert len(data) + release.suppressed == len(df)
    sizes = data.groupby(["c1", "c2", "x"]).size()
    assert sizes.min() >= k
    if with_l:
        assert data.groupby(["c1", "c2", "x"])["s"].nunique().min() >= 2
    # every published cell covers its record's original value (records traced by "id")
    original = df.set_index("id").loc[data["id"]]
    for c in ("c1", "c2"):
        assert all(str(v) in _elements(cell) for v, cell in zip(original[c], data[c]))


def test_metrics_on_a_hand_computed_example():
    original = pd.DataFrame({"a": ["a", "a", "b", "c", "d", "d"]})  # D = 4
    released = pd.DataFrame({"a": ["a,b", "a,b", "a,b", "c,d", "d"]})  # one record suppressed
    spec = {"a": "set"}
    # NCP (u - 1) / (D - 1): 1/3 for each pair, 0 for the lone "d"
    assert metrics.ncp(released, spec, original)["a"] == pytest.approx((4 / 3) / 5)
    assert metrics.gcp(released, spec, 6, original) == pytest.approx((4 / 3 + 1) / 6)
    assert metrics.ambiguity(released, spec, original) == pytest.approx(9 / 5)
    cover = _coverage(released["a"], "set", original["a"])
    values = ["a", "b", "c", "d"]  # domain order = order of first appearance
    only_a = np.array([v == "a" for v in values], dtype=float)
    c_or_d = np.array([v in "cd" for v in values], dtype=float)
    np.testing.assert_allclose(cover(only_a), [0.5, 0.5, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(cover(c_or_d), [0.0, 0.0, 0.0, 1.0, 1.0])
    # COUNT query "a in {all values}" is exact; the suppressed record is simply missing
    q = metrics.count_query_error(
        original, released, spec, n_queries=3, dimension=1, selectivity=1.0
    )
    assert q["mean"] == pytest.approx(1 / 6)
    # a released "*" covers the whole domain
    assert metrics.ncp(pd.DataFrame({"a": ["*"]}), spec, original)["a"] == 1.0


def test_metric_rejects_unknown_set_element():
    original = pd.DataFrame({"a": ["a", "b"]})
    with pytest.raises(InputError, match="not a value") as err:
        metrics.gcp(pd.DataFrame({"a": ["a,z"]}), {"a": "set"}, 2, original)
    assert err.value.column == "a" and err.value.row == 0


def test_record_linkage_distance_on_value_sets():
    original = pd.DataFrame({"a": ["a", "b", "c", "d"]})
    released = pd.DataFrame({"a": ["a,b", "a,b", "c,d", "c,d"]})
    # each record's nearest released cells are the two of its own set: 1/2 success each
    assert record_linkage(original, released, {"a": "set"}) == pytest.approx(0.5)
    assert record_linkage(original, original, {"a": "set"}) == 1.0


def test_release_with_set_qis_reports_utility_and_linkage(adult_sample):
    specs = {"race": "set", "workclass": "set", "age": "numeric"}
    release = tabular.anonymize(
        adult_sample,
        specs,
        "occupation",
        [KAnonymity(5)],
        algorithm="mondrian",
        seed=0,
        linkage=True,
        classifier=True,
    )
    u = release.utility
    assert 0 < u["gcp"] < 1 and set(u["ncp"]) == set(specs)
    assert u["ambiguity"] >= 1 and np.isfinite(u["count_query_error"]["mean"])
    assert 0 <= release.risk["after"]["record_linkage"] <= release.risk["before"]["record_linkage"]


def _frame():
    return pd.DataFrame({"c": ["a", "b", "a", "b"], "n": [1, 2, 3, 4]})


@pytest.mark.parametrize("algorithm", ["optimal", "datafly"])
def test_set_needs_mondrian(algorithm):
    with pytest.raises(InputError, match="mondrian") as err:
        tabular.anonymize(_frame(), {"c": "set"}, models=[KAnonymity(2)], algorithm=algorithm)
    assert err.value.column == "c"


def test_set_qi_errors_name_column_and_row():
    df = _frame().assign(c=["a", None, "b", "b"])
    with pytest.raises(InputError, match="missing") as err:
        tabular.anonymize(df, {"c": "set"}, models=[KAnonymity(2)], algorithm="mondrian")
    assert (err.value.column, err.value.row) == ("c", 1)
    df = _frame().assign(c=["a", "b", 3, "b"])
    with pytest.raises(InputError, match="mixed") as err:
        tabular.anonymize(df, {"c": "set"}, models=[KAnonymity(2)], algorithm="mondrian")
    assert (err.value.column, err.value.row) == ("c", 2)
    df = _frame().assign(c=["a", "b", "x,y", "b"])
    with pytest.raises(InputError, match="separator") as err:
        tabular.anonymize(df, {"c": "set"}, models=[KAnonymity(2)], algorithm="mondrian")
    assert (err.value.column, err.value.row) == ("c", 2)
    with pytest.raises(InputError, match="'set'") as err:
        tabular.anonymize(_frame(), {"c": "sets"}, models=[KAnonymity(2)], algorithm="mondrian")
    assert err.value.column == "c"


def test_cli_set_qi(tmp_path):
    out = tmp_path / "anon.csv"
    args = [
        "anonymize",
        str(BUNDLED / "adult_sample.csv"),
        "--sep",
        ";",
        "--qi",
        "sex,age,race,workclass",
        "--numeric",
        "age",
        "--set-qi",
        "sex,race,workclass",
        "--sensitive",
        "occupation",
        "-k",
        "5",
        "--algorithm",
        "mondrian",
        "-o",
        str(out),
        "--quiet",
    ]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = pd.read_csv(out, sep=";")
    assert data.groupby(["sex", "age", "race", "workclass"]).size().min() >= 5
    assert data["race"].str.contains(",").any()
    assert len(data) == 5000
    bad = CliRunner().invoke(cli, [a if a != "mondrian" else "optimal" for a in args])
    assert bad.exit_code == 2 and "mondrian" in bad.output
    both = CliRunner().invoke(
        cli, args[:6] + ["--numeric", "age", "--set-qi", "age,sex"] + args[10:]
    )
    assert both.exit_code == 2 and "only one" in both.output
    assert "--set-qi" in CliRunner().invoke(cli, ["anonymize", "--help"]).output
