"""Native types in a notebook: dates as Mondrian quasi-identifiers, no dependency warnings."""

import warnings

import numpy as np
import pandas as pd
import pytest

import querylogs
import tabular
from structanon import Partition
from structanon.models import KAnonymity

KEY = b"0123456789abcdef-notebook"


def _table(n: int = 240, tz: str | None = "Europe/Paris") -> pd.DataFrame:
    rng = np.random.default_rng(3)
    when = pd.Series(pd.date_range("2024-03-20", periods=n, freq="90min", tz=tz))
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "sex": pd.Categorical(rng.choice(["F", "M"], n), categories=["F", "M", "X"]),
            "when": when.sample(frac=1.0, random_state=1).to_numpy(),
            "disease": rng.choice(["a", "b", "c"], n),
        }
    )


def _bounds(label: str) -> tuple[pd.Timestamp, pd.Timestamp]:
    lo, _, hi = label.partition("/")
    return pd.Timestamp(lo), pd.Timestamp(hi or lo)


def test_zoned_datetime_qi_is_published_as_ranges_in_its_zone():
    df = _table()
    release = tabular.anonymize(
        df, {"age": "numeric", "when": "numeric"}, "disease", [KAnonymity(5)], "mondrian", key=KEY
    )
    published = release.data["when"].astype(str)
    assert not published.str.fullmatch(r"\d+(-\d+)?").any()  # no nanosecond integers
    original = df["when"].iloc[np.asarray(release.source_index)].reset_index(drop=True)
    for label, stamp in zip(published.tolist(), original.tolist()):
        lo, hi = _bounds(label)
        assert lo.tzinfo is not None and lo <= stamp <= hi
        # each bound is written with the offset the Paris clock had at that instant
        for bound in (lo, hi):
            local = bound.tz_convert("Europe/Paris")
            assert bound.utcoffset() == local.utcoffset()
    # the range straddling the change to summer time shows both offsets
    assert published.str.contains(r"\+01:00").any() and published.str.contains(r"\+02:00").any()
    assert release.checks.passed
    assert 0 < release.utility["ncp"]["when"] < 1


def test_naive_datetime_qi_is_published_as_readable_ranges():
    df = _table(tz=None)
    release = tabular.anonymize(
        df, {"when": "numeric"}, None, [KAnonymity(4)], "mondrian", key=KEY, measures=False
    )
    labels = release.data["when"].astype(str)
    assert labels.str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d(/\d{4}-\d\d-\d\d \d\d:\d\d)?").all()


def test_categorical_quasi_identifiers_raise_no_pandas_warning():
    frame = pd.DataFrame(
        {
            "a": pd.Categorical(["x", "y", "x", "y"], categories=["x", "y", "z"]),
            "b": pd.Categorical(["u", "u", "v", "u"]),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        labels = Partition.from_keys(frame).labels
        df = _table(120)
        tabular.anonymize(
            df, {"sex": "set", "age": "numeric"}, "disease", [KAnonymity(3)], "mondrian", key=KEY
        )
    assert labels.tolist() == [0, 1, 2, 1]  # unused categories make no group


@pytest.mark.parametrize("tz", ["Europe/Paris", "UTC"])
def test_zoned_query_times_raise_no_numpy_warning(tz):
    log = querylogs.synthetic_log(30, 900, seed=1)
    log["time"] = pd.to_datetime(log["time"]).dt.tz_localize(tz)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("error", FutureWarning)
        release = querylogs.anonymize(log, 3, key=KEY)
    assert str(release.data["time"].dt.tz) == tz
    naive = log.assign(time=log["time"].dt.tz_convert("UTC").dt.tz_localize(None))
    same = querylogs.anonymize(naive, 3, key=KEY, measures=False)
    assert len(same.data) == len(release.data)  # the same instants, grouped the same way
