"""ISO 8601 date-time text as UTC instants, each value read by its own offset.

pandas 2 (``to_datetime(..., utc=True, format="ISO8601")``) carries the first UTC offset
it meets over to the naive strings that follow it, so one ``+02:00`` in a column of naive
times shifts every later time by two hours.  Here no naive time is parsed together with a
time carrying an offset: a value can carry an offset only if a ``Z``, ``+`` or ``-``
follows its time of day; those values are parsed apart, the naive ones among them with
an explicit ``Z`` appended.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["NAT", "iso_utc_ns"]

#: The int64 value of a time that is missing or does not parse (``NaT``).
NAT = np.iinfo(np.int64).min
# a time of day (after "T" or a space) followed by a Z, + or -: the only values that can
# carry a UTC offset
_SUSPECT = r"[T ]\d.*[-+Z]"
# a time of day ending in a UTC offset as pandas reads one: Z, +h, +hh, +hhmm, +hh:mm
_ZONED = r"[T ]\d[\d:.]*\s*(?:Z|[+-]\d{1,2}(?::?\d{2})?)\s*$"


def _matches(text: pd.Series, pattern: str) -> np.ndarray:
    return text.str.contains(pattern, regex=True).to_numpy(dtype=bool, na_value=False)


def iso_utc_ns(values: Any) -> np.ndarray:
    """UTC nanoseconds since the epoch (int64) of ISO 8601 date-times; :data:`NAT` where a
    value is missing or does not parse.

    A time with a UTC offset (``Z``, ``+02:00``, ``-0500``) is converted by its own
    offset; a naive time (and a date alone) is taken as UTC, whatever the other values
    carry.  Values that are not text (``datetime`` objects) are converted by pandas.

    Examples
    --------
    >>> ns = iso_utc_ns(["2020-01-01 10:04", "2020-01-01T10:05+02:00", "2020-01-01 10:06"])
    >>> pd.to_datetime(ns, unit="ns").strftime("%H:%M").tolist()
    ['10:04', '08:05', '10:06']
    """
    values = pd.Series(np.array(values, dtype=object), dtype=object)  # a copy: "Z" is added
    text = values.astype("string[pyarrow]")
    suspect = _matches(text, _SUSPECT)
    if suspect.any():
        rows = np.flatnonzero(suspect)
        naive = rows[~_matches(text.iloc[rows], _ZONED)]
        # a naive time gets an explicit "Z"; an offset the pattern missed makes "...Z" NaT
        values.iloc[naive] = text.iloc[naive].to_numpy(dtype=object) + "Z"
    out = np.full(len(values), NAT, dtype=np.int64)
    for group in (suspect, ~suspect):
        if group.any():
            parsed = pd.to_datetime(values[group], utc=True, errors="coerce", format="ISO8601")
            out[group] = pd.DatetimeIndex(parsed).as_unit("ns").asi8
    return out
