"""Attack: read what rows a release withheld from the types and categories of its columns.

A column selected from the input kept the type pandas gave the whole input and, when
categorical, every category of it.  So a Parquet release's dictionary listed values held
only by suppressed or unsampled records (the input's one "Columbia" record, suppressed),
and one withheld ``40.5`` made every published integer print as ``52.0`` -- for SafePub,
a certain tell of whether that record is in the input.  Each test reads the release the
way an attacker would: the Parquet dictionaries through pyarrow, the CSV bytes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import tabular
from structanon import Hierarchy
from structanon.cli import main
from tabular import DifferentialPrivacy

from .conftest import BUNDLED

QIS = ["age", "sex", "race", "workclass"]


def _dictionary_extras(path) -> dict[str, set]:
    """Per column: the values in the Parquet dictionary that no published row holds."""
    table = pq.read_table(path)
    extras = {}
    for name in table.column_names:
        column = table[name].combine_chunks()
        if hasattr(column, "dictionary"):
            extra = set(column.dictionary.to_pylist()) - set(column.to_pylist())
            if extra:
                extras[name] = extra
    return extras


def _lonely_input(adult_sample: pd.DataFrame) -> pd.DataFrame:
    """The Adult sample with one record whose QIs are unique (it must be suppressed at
    k = 5 under the lowest levels) holding a sensitive value and an hours figure no
    other record holds."""
    df = adult_sample.copy()
    df["hours"] = (np.arange(len(df)) % 40 + 20).astype(float)
    lonely = df.index[0]
    df.loc[lonely, ["age", "native-country", "hours"]] = [90, "Atlantis", 40.5]
    return df


def test_cli_parquet_dictionary_names_no_suppressed_value(adult_sample, tmp_path):
    df = _lonely_input(adult_sample)
    src = tmp_path / "in.csv"
    df.to_csv(src, sep=";", index=False)
    out = tmp_path / "out.parquet"
    args = ["tabular", "anonymize", str(src), "--sep", ";", "--qi", ",".join(QIS)]
    for c in QIS:
        args += ["--hierarchy", f"{c}={BUNDLED / f'adult_hierarchy_{c}.csv'}"]
    args += ["--sensitive", "native-country", "-k", "5", "--suppression-limit", "0.1"]
    result = CliRunner().invoke(main, [*args, "-o", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    published = pd.read_parquet(out)
    assert "Atlantis" not in set(published["native-country"])  # the record was suppressed
    assert _dictionary_extras(out) == {}


@pytest.mark.parametrize("method", ["recode", "optimal", "safepub"])
def test_python_release_categories_are_the_published_values(adult_sample, method, tmp_path):
    df = _lonely_input(adult_sample)
    df["native-country"] = df["native-country"].astype("category")
    df["occupation"] = df["occupation"].astype("category")
    hierarchies = {c: Hierarchy.from_csv(BUNDLED / f"adult_hierarchy_{c}.csv", name=c) for c in QIS}
    for _attempt in range(20):
        if method == "recode":
            release = tabular.recode(df, sample=0.3, measures=False)
        elif method == "optimal":
            release = tabular.anonymize(
                df, hierarchies, "native-country", k=5, suppression_limit=0.1, measures=False
            )
        else:
            model = DifferentialPrivacy(1.0, 1e-5, search_share=0.1)
            release = tabular.anonymize(df, hierarchies, None, [model], measures=False)
        if len(release.data):
            break
    assert len(release.data) < len(df)  # rows were withheld
    for name in ("native-country", "occupation"):
        column = release.data[name]
        assert set(column.cat.categories) == set(column.dropna()), name
    path = tmp_path / "r.parquet"
    release.write(path)
    assert _dictionary_extras(path) == {}


def _safepub_hours(df: pd.DataFrame, tmp_path, runs: int = 6) -> list[tuple[bool, bool]]:
    """Per SafePub run that publishes rows: whether the hours column prints with a decimal
    point ('52.0'), and whether a published hours value is fractional (40.5)."""
    hierarchies = {
        c: Hierarchy.from_csv(BUNDLED / f"adult_hierarchy_{c}.csv", name=c) for c in QIS[:3]
    }
    seen = []
    for i in range(runs):
        model = DifferentialPrivacy(1.0, 1e-5, search_share=0.1)
        release = tabular.anonymize(df, hierarchies, "hours", [model], measures=False)
        if not len(release.data):
            continue
        path = tmp_path / f"sp{i}.csv"
        release.write(path)
        text = pd.read_csv(path, dtype=str)["hours"]
        fractional = (text.astype(float) % 1 != 0).any()
        seen.append((bool(text.str.contains(r"\.").any()), bool(fractional)))
    return seen


def test_safepub_type_does_not_tell_a_neighbour_apart(adult_sample, tmp_path):
    with_one = _lonely_input(adult_sample)  # one record's hours is 40.5
    without = with_one.drop(index=with_one.index[0])
    runs = _safepub_hours(with_one, tmp_path) + _safepub_hours(without, tmp_path)
    # a decimal point only where a published value needs one: the withheld 40.5 record
    # (not sampled, or suppressed) no longer turns every published integer into '52.0'
    assert runs and all(point == fractional for point, fractional in runs), runs
    assert any(not fractional for _, fractional in runs)


def test_k_anonymity_type_is_read_from_published_rows(adult_sample, adult_sample_hierarchies):
    df = _lonely_input(adult_sample)
    hierarchies = {c: adult_sample_hierarchies[c] for c in QIS}
    a = tabular.anonymize(df, hierarchies, "hours", k=5, suppression_limit=0.1, measures=False)
    b_input = df.copy()
    b_input.loc[b_input.index[0], "hours"] = 40.0
    b = tabular.anonymize(b_input, hierarchies, "hours", k=5, suppression_limit=0.1, measures=False)
    assert 40.5 not in set(a.data["hours"])
    assert a.data["hours"].dtype == b.data["hours"].dtype == np.int64
