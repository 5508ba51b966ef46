import datetime as dt

import numpy as np
import pandas as pd
import pytest

from structanon._times import NAT, iso_utc_ns


def utc(*texts):
    return [pd.Timestamp(t, tz="UTC").value for t in texts]


def test_each_time_by_its_own_offset_naive_ones_as_utc():
    values = [
        "2020-01-01 10:04",
        "2020-01-01T10:05+02:00",
        "2020-01-01 10:06",
        "2020-01-01T10:07:00.5-05:00",
        "2020-01-02",
        "20200101T100800+0130",
        "2020-01-01T10:09Z",
        "2020-01-01 10:10:00 -0200",
        "2020-01-01T10:11+1",
        " 2020-01-01 10:12 ",
    ]
    assert iso_utc_ns(values).tolist() == utc(
        "2020-01-01 10:04",
        "2020-01-01 08:05",
        "2020-01-01 10:06",
        "2020-01-01 15:07:00.5",
        "2020-01-02",
        "2020-01-01 08:38",
        "2020-01-01 10:09",
        "2020-01-01 12:10",
        "2020-01-01 09:11",
        "2020-01-01 10:12",
    )


def test_missing_unparseable_and_objects():
    aware = dt.datetime(2020, 1, 1, 10, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    values = pd.Series(
        ["2020-01-01T10:00+02:00", None, np.nan, "soon", "2020-01-01 10:00+02:00:00", aware],
        dtype=object,
    )
    kept = values.copy()
    got = iso_utc_ns(values)
    assert got.tolist() == [*utc("2020-01-01 08:00"), NAT, NAT, NAT, NAT, *utc("2020-01-01 08:00")]
    pd.testing.assert_series_equal(values, kept)  # the caller's values are left alone


@pytest.mark.parametrize("dtype", [object, "string"])
def test_string_columns_and_empty(dtype):
    values = pd.Series(["2020-01-01T12:00+02:00", "2020-01-01 12:00"], dtype=dtype)
    assert iso_utc_ns(values).tolist() == utc("2020-01-01 10:00", "2020-01-01 12:00")
    assert iso_utc_ns([]).tolist() == []
