"""Validation and parsing of location fixes (user, time, latitude, longitude)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from structanon._times import NAT, iso_utc_ns
from structanon._validation import check_columns, check_on_bad_lines, warn_repeated_labels
from structanon.errors import InputError, at_row
from structanon.io import file_lines, is_parquet_path

__all__ = [
    "Fixes",
    "parse_fixes",
    "parse_window",
    "no_fixes_error",
    "user_keys",
    "drop_bad_lines",
    "DROP_HINT",
    "CLI_DROP",
]

#: How an error about invalid fixes says to drop them instead; the command line shows
#: ``CLI_DROP`` for ``API_DROP`` (:func:`structanon.errors.respelled`).
DROP_HINT = "to drop and count invalid fixes instead, pass on_bad_lines='drop'"
API_DROP, CLI_DROP = "on_bad_lines='drop'", "--on-bad-lines drop"


def _shown(value: Any) -> str | None:
    """A bad value as an error message shows it: its text (``123.0`` whether a reader gave a
    number or a string), cut to 60 characters; ``None`` when missing (nothing to show).

    Examples
    --------
    >>> _shown("39,984905"), _shown(123.0), _shown(float("nan")), len(_shown("x" * 100))
    ('39,984905', '123.0', None, 60)
    """
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):  # not a scalar
        pass
    text = value if isinstance(value, str) else str(value)  # one spelling on every engine
    return text if len(text) <= 60 else text[:57] + "..."


_DECIMAL_COMMA = re.compile(r"\s*[+-]?\d+,\d+\s*")


def _likely_cause(dropped: dict[str, int], value: Any = None) -> str:
    """What to fix when (nearly) every row is invalid: dropping them would leave nothing, so
    the hint names the likely cause of the most common reason instead.

    Examples
    --------
    >>> _likely_cause({"missing or non-numeric latitude/longitude": 9}, "39,984905")
    'numbers use a decimal comma? convert them to a decimal point (39.98, not 39,98)'
    >>> _likely_cause({"unparseable or missing time": 9}, "01/03/2008 10:00:00")[:41]
    'times must be ISO 8601 or epoch seconds ('
    """
    reason = max(dropped, key=lambda r: dropped[r]) if dropped else ""
    if reason.startswith("missing or non-numeric"):
        if isinstance(value, str) and _DECIMAL_COMMA.fullmatch(value):
            return "numbers use a decimal comma? convert them to a decimal point (39.98, not 39,98)"
        return "wrong --sep, or wrong column names (--lat/--lon)?"
    if reason.startswith("unparseable"):
        if value is None:
            return "wrong --sep, or wrong column name (--time)?"
        return (
            "times must be ISO 8601 or epoch seconds (2008-10-23 04:12:32 or 1224735152); "
            "day-first and US dates such as 01/03/2008 are not read: convert them"
        )
    if reason.startswith("time outside"):
        return "times in epoch milliseconds? give seconds"
    if reason.startswith(("latitude outside", "longitude outside")):
        return "latitude and longitude swapped? check --lat and --lon"
    return "wrong --sep, or wrong column names (--user/--time/--lat/--lon)?"


def _nearly_all(n_bad: int, n: int) -> bool:
    """Whether (nearly) every row is invalid: at most 2 valid, or under 5% of them."""
    return n - n_bad <= max(2, n // 20)


def drop_bad_lines(on_bad_lines: Any, drop_invalid: Any = None) -> bool:
    """Whether invalid fixes are dropped: ``on_bad_lines`` (``"raise"`` or ``"drop"``), or
    its former spelling ``drop_invalid`` (see :func:`~structanon._validation.check_on_bad_lines`).

    Examples
    --------
    >>> drop_bad_lines("raise"), drop_bad_lines("drop")
    (False, True)
    """
    return check_on_bad_lines(on_bad_lines, drop_invalid=drop_invalid) == "drop"


_REASONS = (
    "missing user",
    "unparseable or missing time",
    "time outside the years 1677-2262 (numbers are epoch seconds, not milliseconds)",
    "missing or non-numeric latitude/longitude",
    "latitude outside [-90, 90]",
    "longitude outside [-180, 180]",
)


@dataclass
class Fixes:
    """Valid fixes as arrays, with what was dropped."""

    index: pd.Index  # input row labels of the valid fixes (may repeat)
    positions: np.ndarray  # their input row positions
    user: np.ndarray  # user identifiers as given (object or integer array)
    t_ns: np.ndarray  # int64 nanoseconds since the Unix epoch, UTC
    lat: np.ndarray
    lon: np.ndarray
    n_input: int
    dropped: dict[str, int] = field(default_factory=dict)
    first_bad: Any = None  # the first invalid row's offending value, as messages show it

    @property
    def n_dropped(self) -> int:
        return self.n_input - len(self.index)


def parse_window(window: str | pd.Timedelta | int, name: str = "window") -> int:
    """Window length in nanoseconds from ``"15min"``, ``"1h"``, a Timedelta or seconds."""
    if isinstance(window, str) and re.fullmatch(r"\s*[-+]?[0-9.]+\s*", window):
        raise InputError(
            f"{name} needs a unit: '{window.strip()}min', '{window.strip()}s' or "
            f"'{window.strip()}h' (a bare number would be nanoseconds)",
            value=window,
        )
    try:
        if isinstance(window, (int, float, np.integer, np.floating)) and not isinstance(
            window, bool
        ):
            td = pd.Timedelta(seconds=float(window))
        else:
            td = pd.Timedelta(window)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InputError(
            f"{name} must be a duration such as '15min' or '1h': {exc}", value=window
        ) from None
    if pd.isna(td) or td.value <= 0:
        raise InputError(f"{name} must be a positive duration", value=window)
    if td < pd.Timedelta(seconds=1):
        raise InputError(
            f"{name} must be at least one second (a unit such as 'ms' or 'ns' by mistake?)",
            value=window,
        )
    return int(td.value)


def _parse_times(col: pd.Series) -> np.ndarray:
    """UTC epoch nanoseconds (int64), :data:`NAT` where missing or unparseable; each ISO
    8601 string by its own UTC offset, naive ones as UTC."""
    if pd.api.types.is_bool_dtype(col.dtype):  # true/false is no time (not 1970-01-01)
        return np.full(len(col), NAT, dtype=np.int64)
    if isinstance(col.dtype, pd.DatetimeTZDtype):
        return pd.DatetimeIndex(col).tz_convert("UTC").as_unit("ns").asi8.copy()
    if pd.api.types.is_datetime64_dtype(col.dtype):  # naive: taken as UTC
        return col.astype("datetime64[ns]").to_numpy().view(np.int64).copy()
    text = col.dtype == object or pd.api.types.is_string_dtype(col.dtype)
    numeric = pd.to_numeric(col, errors="coerce") if text else col
    if pd.api.types.is_numeric_dtype(numeric.dtype) and (
        not text or numeric.notna().sum() == col.notna().sum()
    ):
        secs = numeric.to_numpy(dtype=np.float64, na_value=np.nan)
        out = np.full(len(secs), NAT, dtype=np.int64)
        ok = np.isfinite(secs) & (np.abs(secs) < 9.2e9)
        out[ok] = np.round(secs[ok] * 1e9).astype(np.int64)
        return out
    return iso_utc_ns(col)


_YEAR = re.compile(r"\s*([+-]?\d{4,})-\d")


def _beyond_range(col: pd.Series, bad: np.ndarray) -> np.ndarray:
    """Of the times ``bad`` marks (not parsed), those that are times outside what a 64-bit
    nanosecond count holds (the years 1677-2262): a number of seconds beyond it (often
    milliseconds given as seconds) or an ISO date whose year lies outside."""
    out = np.zeros(len(col), dtype=bool)
    # a missing time (NaT, None) is missing, not far; a datetime column holds no far time
    rows = np.flatnonzero(bad & col.notna().to_numpy())
    if not rows.size or pd.api.types.is_datetime64_any_dtype(col.dtype):
        return out
    values = col.iloc[rows]
    secs = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    far = np.isfinite(secs) & (np.abs(secs) >= 9.2e9)
    text = values.astype(object).where(values.notna(), "").astype(str)
    years = text.str.extract(_YEAR, expand=False)
    year = pd.to_numeric(years, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    far |= np.isnan(secs) & np.isfinite(year) & ((year < 1678) | (year > 2261))
    out[rows] = far
    return out


def _degrees(col: pd.Series) -> np.ndarray:
    """A coordinate column as float degrees, NaN where a value is no number: true/false is
    no coordinate (pandas reads it as 1.0 / 0.0, a place in the Gulf of Guinea).

    Examples
    --------
    >>> _degrees(pd.Series([52.5, True, "13.4", "x"], dtype=object)).tolist()
    [52.5, nan, 13.4, nan]
    """
    if pd.api.types.is_bool_dtype(col.dtype):
        return np.full(len(col), np.nan)
    out = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    if col.dtype == object and pd.api.types.infer_dtype(col, skipna=True) not in (
        "floating",
        "integer",
        "mixed-integer-float",
        "string",
    ):
        flags = col.map(lambda v: isinstance(v, bool | np.bool_)).to_numpy(dtype=bool)
        out[flags] = np.nan
    return out


def parse_fixes(
    df: pd.DataFrame,
    user: str,
    time: str,
    lat: str,
    lon: str,
    drop_invalid: bool = False,
    source: str | None = None,
) -> Fixes:
    """Check and convert the four columns; reject or drop invalid rows.

    Times: numbers (or numeric strings) are epoch seconds; strings are ISO 8601, each
    with its own UTC offset respected; naive times are taken as UTC.  Row positions are reported
    as file lines (header = line 1) when ``source`` names the file the rows came from.
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas or dask DataFrame, got {type(df).__name__}")
    names = [str(c) for c in df.columns]
    if len(set(names)) < len(names):
        check_columns(df, [], what="log")  # names the duplicated column
    if source is None:
        warn_repeated_labels(df, "log")
    for role, name in (("user", user), ("time", time), ("lat", lat), ("lon", lon)):
        if not isinstance(name, str):
            raise InputError(f"{role} must be a column name (str), got {name!r}")
        if name not in df.columns:
            raise InputError(
                f"no {role} column {name!r}; columns are {names}",
                column=name,
            )
    n = len(df)
    users = df[user]
    bad_user = users.isna().to_numpy()
    if users.dtype == object or pd.api.types.is_string_dtype(users.dtype):
        # an id is its text without the spaces around it: "000" and " 000" (an export's
        # ", " separator) are one person, never two users counted towards k; so are 7 and
        # "7" in one column (as in querylogs): one text, one pseudonym, one user
        stripped = users.astype(str).str.strip()
        users = stripped.where(~bad_user, users)
        bad_user |= (users.astype(str) == "").to_numpy()
    t_ns = _parse_times(df[time])
    bad_time = t_ns == NAT
    far_time = _beyond_range(df[time], bad_time)
    la, lo = _degrees(df[lat]), _degrees(df[lon])
    bad_num = ~(np.isfinite(la) & np.isfinite(lo))
    with np.errstate(invalid="ignore"):
        bad_lat = ~bad_num & (np.abs(la) > 90)
        bad_lon = ~bad_num & ~bad_lat & (np.abs(lo) > 180)
    masks = (
        bad_user,
        bad_time & ~far_time & ~bad_user,
        far_time & ~bad_user,
        bad_num & ~bad_user & ~bad_time,
        bad_lat & ~bad_user & ~bad_time,
        bad_lon & ~bad_user & ~bad_time,
    )
    bad = np.zeros(n, dtype=bool)
    for m in masks:
        bad |= m
    dropped = {reason: int(m.sum()) for reason, m in zip(_REASONS, masks) if m.any()}
    first = np.flatnonzero(bad)
    first_bad = None
    if first.size:
        pos = int(first[0])
        reason = next(r for r, m in zip(_REASONS, masks) if m[pos])
        column = [user, time, time, lat if not np.isfinite(la[pos]) else lon, lat, lon][
            _REASONS.index(reason)
        ]
        first_bad = _shown(df[column].iloc[pos])
    if first.size and not drop_invalid:
        n_bad = int(bad.sum())
        # when (nearly) every row is invalid, dropping them leaves nothing: name the cause
        hint = _likely_cause(dropped, first_bad) if _nearly_all(n_bad, n) else DROP_HINT
        raise InputError(
            f"{n_bad} invalid fix(es): {dict(dropped)}; first: {reason} ({hint})",
            column=column,
            value=first_bad,
            **_where(df, pos, source),
        )
    keep = ~bad
    user_values = users.to_numpy()[keep]
    return Fixes(
        df.index[keep],
        np.flatnonzero(keep),
        user_values,
        t_ns[keep],
        la[keep],
        lo[keep],
        n,
        dropped,
        first_bad,
    )


def _where(df: pd.DataFrame, pos: int, source: str | None) -> dict[str, Any]:
    """Where the row at position ``pos`` is: its label, a Parquet file's row (1-based) or
    a text file's line (blank lines and quoted line breaks counted)."""
    if not source:
        return at_row(df, pos)
    if is_parquet_path(source):
        return {"row": pos + 1, "path": source}  # a Parquet file has rows, not lines
    return {"line": file_lines(source, [pos])[0] or pos + 2, "path": source}


def no_fixes_error(
    n_input: int, dropped: dict[str, int], source: str | None = None, first_bad: Any = None
) -> InputError:
    """The error of a log without a single valid fix (empty, header-only or all invalid);
    ``source`` names the file it came from, ``first_bad`` is the first invalid value.

    Examples
    --------
    >>> str(no_fixes_error(3, {"unparseable or missing time": 3}, "a.csv", "01/03/2008"))[:62]
    "all 3 rows are invalid: {'unparseable or missing time': 3} (ti"
    """
    if n_input == 0:
        return InputError(
            "the log holds no fixes (an empty or header-only file? wrong --sep?)", path=source
        )
    return InputError(
        f"all {n_input} rows are invalid: {dropped} ({_likely_cause(dropped, first_bad)})",
        path=source,
        value=first_bad,
    )


def user_keys(values: np.ndarray) -> np.ndarray:
    """User ids as sortable keys: integer ids as int64, anything else as text.

    Both paths number users in the order of these keys, so the measures' random samples
    of users are the same for the same data and seed.
    """
    if np.issubdtype(np.asarray(values).dtype, np.integer):
        return np.asarray(values, dtype=np.int64)
    return np.asarray(pd.Series(values).astype(str).to_numpy(dtype=object), dtype=str)
