"""Times in a location log: each ISO 8601 time by its own UTC offset, naive times as UTC,
on both engines (a regression: one offset used to shift every later naive time)."""

import pandas as pd
import pytest
from click.testing import CliRunner

import location
from location.cli import cli

MINUTES = [pd.Timestamp("2020-01-01 10:00", tz="UTC") + pd.Timedelta(minutes=m) for m in range(10)]


def mixed_log() -> pd.DataFrame:
    """Four users at one place, one fix a minute from 10:00 to 10:09 UTC, written naive but
    for user a's 10:05, written as 12:05+02:00."""
    rows = [
        (user, f"2020-01-01 10:{minute:02d}:00", 48.85, 2.35)
        for user in "abcd"
        for minute in range(10)
    ]
    rows[5] = ("a", "2020-01-01T12:05:00+02:00", 48.85, 2.35)
    return pd.DataFrame(rows, columns=["user", "time", "lat", "lon"])


def assert_each_minute_holds_every_user(windows) -> None:
    counts = pd.Series(pd.to_datetime(windows, utc=True)).value_counts().sort_index()
    assert counts.index.tolist() == MINUTES
    assert counts.tolist() == [4] * 10


def test_one_offset_does_not_shift_the_naive_times_after_it(key):
    release = location.cloak(mixed_log(), k=2, window="1min", key=key, measures=False)
    assert_each_minute_holds_every_user(release.data["window"])


def test_one_offset_does_not_shift_the_naive_times_after_it_dask(client, key):
    dd = pytest.importorskip("dask.dataframe")
    log = dd.from_pandas(mixed_log(), npartitions=2)
    release = location.cloak(log, k=2, window="1min", key=key, measures=False)
    assert_each_minute_holds_every_user(release.data["window"].compute())


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_cli_one_offset_does_not_shift_the_naive_times_after_it(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    mixed_log().to_csv(tmp_path / "log.csv", index=False)
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(tmp_path / "log.csv"), "-k", "2", "--window", "1min", "-o", str(out)]
        + ["--engine", engine, "--no-measures", "--quiet"],
    )
    assert result.exit_code == 0, result.output
    assert_each_minute_holds_every_user(pd.read_csv(out)["window"])
