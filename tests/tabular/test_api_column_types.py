"""Columns a notebook hands the tabular API: tz-aware times as the sensitive column,
integer column names, durations, padded labels; each works or gets an InputError naming
the column, never a TypeError."""

import numpy as np
import pandas as pd
import pytest

import tabular
from structanon import Hierarchy
from structanon.errors import InputError
from structanon.models import DistinctLDiversity, KAnonymity
from structanon.partition import encode_column


def _times_table():
    return pd.DataFrame(
        {
            "sex": ["M", "F"] * 4,
            "s": pd.date_range("2020-01-01", periods=8, freq="D", tz="UTC"),
            "d": list("abcdabcd"),
        }
    )


def test_a_tz_aware_sensitive_column_is_anonymized_and_bucketized():
    df = _times_table()
    sex = Hierarchy([["M", "*"], ["F", "*"]], name="sex")
    r = tabular.anonymize(
        df, {"sex": sex}, "s", [KAnonymity(2), DistinctLDiversity(2)], measures=False
    )
    assert r.verify().passed
    # recount: every class of the published sex holds >= 2 distinct times
    assert r.data.groupby("sex")["s"].nunique().min() >= 2
    a = tabular.anatomize(df, ["sex"], "s", 2, measures=False, key=b"0123456789abcdef")
    assert a.verify().passed
    table = a.sensitive_table  # (bucket, value, count): every time counted once
    assert int(table["count"].sum()) == len(df)
    assert sorted(pd.to_datetime(table["s"], utc=True)) == sorted(df["s"])
    sliced = tabular.slice_table(df, ["sex", "s"], "d", 2, measures=False)
    assert sorted(sliced.data["s"]) == sorted(df["s"])


def test_integer_column_names_are_columns():
    df = pd.DataFrame({0: [20, 30, 40, 50], 1: ["M", "F", "M", "F"], 2: list("abab")})
    for scheme in (tabular.anatomize, tabular.slice_table):
        release = scheme(df, [0, 1], 2, 2, measures=False)
        assert release.verify().passed
    with pytest.raises(InputError, match="sensitive column not in the table: 3"):
        tabular.anatomize(df, [0, 1], 3, 2, measures=False)


def test_unorderable_or_missing_values_name_their_column():
    mixed = pd.DataFrame({"q": ["a", "b", "a", "b"], "dis": ["x", 7, "x", 7]})
    with pytest.raises(InputError, match="mixed types") as err:
        tabular.anatomize(mixed, ["q"], "dis", 2, measures=False)
    assert err.value.column == "dis"
    hole = pd.DataFrame({"q": ["a", None, "a", "b"], "dis": list("xyxy")}, index=[9, 8, 7, 6])
    with pytest.raises(InputError, match="missing value") as err:
        tabular.slice_table(hole, ["q"], "dis", 2, measures=False)
    assert err.value.column == "q" and err.value.row == 8  # the row's label


def test_encode_column_names_the_row_by_its_label():
    with pytest.raises(InputError) as err:
        encode_column(pd.Series(["a", None, "b"], index=["x", "y", "z"], name="c"))
    assert (err.value.column, err.value.row) == ("c", "y")


def test_a_duration_quasi_identifier_asks_for_a_unit():
    df = pd.DataFrame({"t": pd.to_timedelta(np.arange(8), unit="h"), "s": list("abababab")})
    with pytest.raises(InputError, match="total_seconds") as err:
        tabular.anonymize(df, {"t": "numeric"}, "s", [KAnonymity(2)], "mondrian", measures=False)
    assert err.value.column == "t"
    minutes = df.assign(t=df["t"].dt.total_seconds() / 60)
    r = tabular.anonymize(
        minutes, {"t": "numeric"}, "s", [KAnonymity(2)], "mondrian", measures=False
    )
    assert r.verify().passed and not any("00000000" in str(v) for v in r.data["t"])


def test_padded_data_value_against_a_hierarchy_says_labels_are_stripped():
    df = pd.DataFrame({"sex": [" M", "F", " M", "F"], "s": list("abab")})
    sex = Hierarchy([[" M", "*"], ["F", "*"]], name="sex")
    with pytest.raises(InputError, match="without the spaces around them") as err:
        tabular.anonymize(df, {"sex": sex}, "s", [KAnonymity(2)], measures=False)
    assert err.value.column == "sex" and err.value.value == " M"
    stripped = df.assign(sex=df["sex"].str.strip())
    assert (
        tabular.anonymize(stripped, {"sex": sex}, "s", [KAnonymity(2)], measures=False)
        .verify()
        .passed
    )


def test_dp_counts_without_categories_is_refused():
    with pytest.raises(InputError, match="fixed in advance"):
        tabular.dp_counts(["a", "b"], 1.0, None)
