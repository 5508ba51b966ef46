"""Reading and writing search query logs.

The AOL 2006 format is five tab-separated fields per line, ``AnonID  Query  QueryTime
ItemRank  ClickURL``; a query without a click has empty rank and URL, a query with several
clicks is repeated once per click.  :func:`read_log` parses it (header optional) and generic
CSV / TSV / Parquet files with a column mapping into one DataFrame with the columns
``user``, ``query``, ``time``, ``rank`` and ``url``.
"""

from __future__ import annotations

import csv
import glob
import gzip
import io as _io
import re
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon._engine import compute, is_dask, parse_size
from structanon._times import iso_utc_ns
from structanon._validation import (
    check_choice,
    check_encoding,
    check_input_path,
    check_on_bad_lines,
    check_path,
    file_suffix,
)
from structanon.errors import InputError
from structanon.io import (
    LONE_CR,
    PARQUET_EXTENSIONS,
    TABLE_OUTPUT_EXTENSIONS,
    UndecodableText,
    atomic_path,
    file_lines,
    locate_undecodable,
    refuse_row_labels,
    staged_folder,
    text_lines,
    undecodable_error,
    undecodable_line,
)

__all__ = [
    "LOG_COLUMNS",
    "read_log",
    "read_log_dask",
    "write_log",
    "write_log_dask",
    "parse_report",
]

LOG_COLUMNS = ["user", "query", "time", "rank", "url"]
_AOL_NAMES = {
    "user": "AnonID",
    "query": "Query",
    "time": "QueryTime",
    "rank": "ItemRank",
    "url": "ClickURL",
}
_FORMATS = ("aol", "csv", "parquet")
#: Former values of ``on_bad_lines``, read as their new one (neither drops silently now).
FORMER_BAD_LINES = {"report": "drop", "skip": "drop"}
_MAX_LISTED = 100
#: What a written log may end in (``.gz`` after a text suffix compresses): TSV, the AOL
#: text (``.txt``), CSV and Parquet, spelled as every package spells them.
LOG_EXTENSIONS = (*TABLE_OUTPUT_EXTENSIONS, ".txt")

#: More than this share of malformed lines means the file is not what ``format`` says.
MAX_MALFORMED_SHARE = 0.5
_HINT = (
    "is it a search log in this format? wrong --format (aol, csv, parquet)? "
    "wrong --columns? wrong --sep?"
)


def parse_report(log: pd.DataFrame) -> dict:
    """The parse statistics :func:`read_log` attached to ``log`` (empty dict if none)."""
    return dict(log.attrs.get("parse", {}))


def _first_malformed(report: dict[str, Any]) -> tuple[int, str, Any]:
    """The first malformed line of the input (the listed lines are in input order):
    (line, reason, its file or ``None``)."""
    number, reason = report["malformed_lines"][0]
    files = report.get("malformed_files") or [None]
    return number, reason, files[0]


def _unit(report: dict[str, Any]) -> str:
    """What a listed number counts: ``"row"`` (1-based data rows) for Parquet input, which
    has no header line, else ``"line"`` (the file's lines, the header counted)."""
    return "row" if report.get("format") == "parquet" else "line"


def _answer_bad_lines(report: dict[str, Any], path: Any, on_bad_lines: str, first: Any) -> None:
    """Malformed lines as ``on_bad_lines`` asks: the first one (in file ``first`` unless the
    report names its file) raised, or a warning naming them, attributed to the reader's
    caller."""
    if not report["malformed"]:
        return
    unit = _unit(report)
    if on_bad_lines == "raise":
        number, reason, file = _first_malformed(report)
        raise InputError(
            f"malformed {unit}: {reason}; to drop and count such {unit}s instead, pass "
            "on_bad_lines='drop' (--on-bad-lines drop)",
            line=number if unit == "line" else None,
            row=number if unit == "row" else None,
            path=str(file or first),
        )
    shown = ", ".join(str(n) for n, _ in report["malformed_lines"][:10])
    warnings.warn(
        f"{path}: {report['malformed']} malformed {unit}(s) dropped ({unit}s {shown}"
        f"{', ...' if report['malformed'] > 10 else ''})",
        stacklevel=3,
    )


def _check_read_options(
    format: str, on_bad_lines: Any, columns: Any, encoding: Any, sep: Any = None
) -> str:
    """The readers' options, checked before any file is opened; ``on_bad_lines`` as
    ``"raise"`` or ``"drop"`` returned."""
    check_choice(format, "format", _FORMATS)
    on_bad_lines = check_on_bad_lines(on_bad_lines, FORMER_BAD_LINES)
    if columns is not None and not isinstance(columns, Mapping):
        raise InputError(
            f"columns must map our column names to the file's, e.g. "
            f"{{'user': 'uid'}}, got {columns!r}"
        )
    check_encoding(encoding)
    if sep is not None and (not isinstance(sep, str) or not sep):
        raise InputError(f"the field separator must be a non-empty string, got {sep!r}")
    unknown = set(columns or {}) - set(LOG_COLUMNS)
    if unknown:
        raise InputError(
            f"unknown log column(s) in mapping: {sorted(unknown)}; expected some of {LOG_COLUMNS}",
            column=sorted(unknown)[0],
        )
    return on_bad_lines


def read_log(
    path: str | Path,
    format: str = "aol",
    *,
    columns: Mapping[str, str] | None = None,
    sep: str | None = None,
    encoding: str = "utf-8",
    on_bad_lines: str = "raise",
) -> pd.DataFrame:
    """Read a search query log into a DataFrame.

    Parameters
    ----------
    path : str or Path
        The log file (``.gz`` accepted for text formats).
    format : {"aol", "csv", "parquet"}
        ``"aol"``: tab-separated ``AnonID Query QueryTime ItemRank ClickURL``, header
        optional, empty rank and URL where there was no click (a line cut after the time
        is accepted too).  ``"csv"``: a delimited text file with a header row (``sep``
        guessed from the suffix: tab for ``.tsv``/``.tab``/``.txt``, else comma); a ``.parquet``
        path is read as Parquet.  ``"parquet"``: an Apache Parquet file.
    columns : mapping, optional
        For csv/parquet: our column name -> the file's column name, e.g.
        ``{"user": "uid", "query": "q", "time": "ts", "url": "clicked"}``.  Columns not
        mapped are looked up under our name and then under the AOL name; ``rank`` and
        ``url`` may be absent.
    sep : str, optional
        Field separator for csv.
    encoding : str
        Text encoding of a text log (default UTF-8; e.g. ``"latin-1"``, ``"cp1252"``).
        A byte that does not decode is an :class:`~structanon.errors.InputError` naming
        the file, the line and the byte, whatever ``on_bad_lines`` says: give the right
        encoding (``"latin-1"`` decodes any byte).
    on_bad_lines : {"raise", "drop"}
        What to do with a malformed line (wrong number of fields, empty user, unparsable
        time or rank): ``"raise"`` (the default) raises
        :class:`~structanon.errors.InputError` naming the first one's file and line;
        ``"drop"`` drops them, counts them in the parse report and warns with their line
        numbers.  The former values ``"report"`` and ``"skip"`` are read as ``"drop"``
        (with a :class:`DeprecationWarning`); nothing is dropped silently.

    Returns
    -------
    pandas.DataFrame
        Columns ``user`` (str), ``query`` (str), ``time`` (naive datetime64: a time
        with a UTC offset converted to UTC, each line on its own), ``rank``
        (nullable Int64) and ``url`` (str, missing where there was no click), one row per
        input line.  ``log.attrs["parse"]`` (see :func:`parse_report`) holds the counts of
        lines, rows and malformed (dropped) lines, with the first malformed lines'
        numbers and reasons.

    Raises
    ------
    InputError
        Unknown ``format`` / ``on_bad_lines`` / ``encoding``, a missing required column,
        a file that is not in the format (not Parquet, unparsable CSV), bytes that do not
        decode, an empty or header-only file, more than half of the lines malformed
        (:data:`MAX_MALFORMED_SHARE`: the wrong format, columns or separator, or not a
        text log at all), or (with ``on_bad_lines="raise"``) a malformed line.

    Examples
    --------
    >>> import tempfile, os
    >>> text = "AnonID\\tQuery\\tQueryTime\\tItemRank\\tClickURL\\n"
    >>> text += "7\\tweather\\t2006-03-01 07:17:12\\t1\\thttp://www.weather.com\\n"
    >>> text += "7\\tnews\\t2006-03-01 08:00:00\\t\\t\\n"
    >>> path = os.path.join(tempfile.mkdtemp(), "log.tsv")
    >>> _ = open(path, "w").write(text)
    >>> log = read_log(path)
    >>> log[["user", "query", "url"]].values.tolist()
    [['7', 'weather', 'http://www.weather.com'], ['7', 'news', nan]]

    Notes
    -----
    Line numbers are 1-based and count the header.  For csv input they are the file's
    lines (blank lines and line breaks inside quoted values counted); Parquet input has
    no lines: its errors and warnings name the 1-based data row ("row 4" for the fourth).
    """
    on_bad_lines = _check_read_options(format, on_bad_lines, columns, encoding)
    path = check_input_path(path, "log file")
    if format == "aol":
        fields, numbers, report = _split_aol(path, encoding)
    else:
        fields, numbers, report = _read_table(path, format, columns, sep, encoding, on_bad_lines)
    log, bad, n_bad = _build(fields, numbers)
    report["malformed"] = report.get("malformed", 0) + n_bad
    # the first malformed lines in file order: those of the split, then of the checks
    listed = sorted(report.get("malformed_lines", []) + bad)[:_MAX_LISTED]
    report["malformed_lines"] = listed
    report["rows"] = len(log)
    _check_parsed(path, report)
    _answer_bad_lines(report, path, on_bad_lines, path)
    log.attrs["parse"] = report
    return log


def _check_parsed(path: Path, report: dict) -> None:
    """An empty, header-only or mostly malformed file is bad input, with a hint."""
    lines, malformed = report.get("lines", 0), report["malformed"]
    if lines == 0:
        what = "has a header but no data line" if report.get("header") else "is empty"
        raise InputError(f"the log file {what}", path=str(path))
    if report["rows"] == 0 or malformed > MAX_MALFORMED_SHARE * lines:
        first = report["malformed_lines"][:1]
        unit = _unit(report)
        example = f" (first: {unit} {first[0][0]}, {first[0][1]})" if first else ""
        raise InputError(
            f"{malformed:,} of {lines:,} {unit}s are malformed{example}: {_HINT}",
            path=str(path),
        )


def _split_aol(path: Path, encoding: str):
    source = text_lines(path, encoding, name="log file")
    lines = pd.Series([text for _number, text in source], dtype=object)
    try:
        return _aol_fields(lines, np.arange(1, len(lines) + 1), header_possible=True)
    except InputError as exc:  # name the file
        if exc.path is not None:
            raise
        raise InputError(exc.message, path=str(path), line=exc.line) from None


_AOL_HEADER = ["anonid", "query", "querytime", "itemrank", "clickurl"]


def _check_aol_header(line: str, number: int) -> None:
    r"""Refuse a header that starts like AOL's but names other columns (an export with a
    normalized-query column, columns in another order): its fields would be read by
    position as the wrong ones.

    Examples
    --------
    >>> _check_aol_header("AnonID\tQuery\tQueryTime\tItemRank\tClickURL", 1)
    >>> _check_aol_header("AnonID\tQuery\tQueryNormalized\tQueryTime\tItemRank", 1)
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: the header names the columns ['AnonID', 'Query', 'QueryNormalized', 'QueryTime', 'ItemRank'], not the AOL layout (AnonID Query QueryTime ItemRank ClickURL); read it as a table: --format csv --sep '\t' --columns user=AnonID,query=Query,time=QueryTime,rank=ItemRank (line 1)
    """
    names = [name.strip() for name in line.split("\t")]
    if [name.lower() for name in names] in (_AOL_HEADER, _AOL_HEADER[:3]):
        return
    roles = {"user": "anonid", "query": "query", "time": "querytime", "rank": "itemrank",
             "url": "clickurl"}  # fmt: skip
    by_lower = {name.lower(): name for name in names}
    mapping = ",".join(f"{role}={by_lower[col]}" for role, col in roles.items() if col in by_lower)
    raise InputError(
        f"the header names the columns {names}, not the AOL layout (AnonID Query QueryTime "
        f"ItemRank ClickURL); read it as a table: --format csv --sep '\\t' --columns {mapping}",
        line=number,
    )


def _aol_fields(lines: pd.Series, numbers: np.ndarray, header_possible: bool):
    """The five fields of AOL lines (numbered ``numbers``), and the parse report;
    ``header_possible``: the lines start a file (a UTF-8 byte order mark is dropped)."""
    if header_possible and len(lines) and lines.iloc[0].startswith("\ufeff"):
        lines = lines.copy()
        lines.iloc[0] = lines.iloc[0][1:]
    nonblank = (lines.str.len() > 0).to_numpy() & (lines.str.strip() != "").to_numpy()
    report: dict[str, Any] = {
        "format": "aol",
        "lines": int(nonblank.sum()),
        "blank_lines": int((~nonblank).sum()),
        "header": False,
    }
    lines, numbers = lines[nonblank], numbers[nonblank]
    first = lines.iloc[0].split("\t", 1)[0].strip().lower() if len(lines) else ""
    if header_possible and first == "anonid":
        _check_aol_header(lines.iloc[0], int(numbers[0]))
        report["header"] = True
        report["lines"] -= 1
        lines, numbers = lines.iloc[1:], numbers[1:]
    tabs = lines.str.count("\t").to_numpy()
    # a header line further down: logs concatenated (its "time" is no date-time)
    again = lines.str.match(r"\s*(?i:anonid)\t").to_numpy(dtype=bool)
    good = ((tabs == 4) | (tabs == 2)) & ~again
    malformed = [
        (
            int(n),
            "the header line, repeated (logs concatenated?)"
            if h
            else f"{t + 1} tab-separated fields, expected 5",
        )
        for n, t, h in zip(
            numbers[~good][:_MAX_LISTED], tabs[~good][:_MAX_LISTED], again[~good][:_MAX_LISTED]
        )
    ]
    report["malformed"] = int((~good).sum())
    report["malformed_lines"] = malformed
    lines, numbers = lines[good], numbers[good]
    if len(lines):
        # every remaining line has 3 or 5 fields: the C parser splits them quickly
        # only "\n" ends a line: a stray "\r" or NUL inside a line is kept as text
        parts = pd.read_csv(
            _io.StringIO("\n".join(lines.tolist())),
            sep="\t",
            header=None,
            names=range(5),
            dtype=str,
            quoting=csv.QUOTE_NONE,
            na_filter=False,
            engine="c",
            skip_blank_lines=False,
            lineterminator="\n",
        )
        if len(parts) != len(lines):  # the fast parser disagreed: split in Python
            split = lines.str.split("\t", expand=True).reindex(columns=range(5))
            parts = split.fillna("").set_axis(range(5), axis=1)
    else:
        parts = pd.DataFrame({i: pd.Series(dtype=object) for i in range(5)})
    fields = {name: parts[i].to_numpy(dtype=object) for i, name in enumerate(LOG_COLUMNS)}
    return fields, numbers, report


_SKIPPED = re.compile(r"Skipping line (\d+): (.*)")


def _read_csv_lines(
    path: Path, sep: str, encoding: str, on_bad_lines: str
) -> tuple[pd.DataFrame, list[tuple[int, str]], list[int]]:
    """A delimited log as text columns; with ``on_bad_lines="drop"``, lines with more
    fields than the header are dropped and returned as ``(line, reason)`` (the first
    :data:`_MAX_LISTED`) with all their line numbers.  A line the parser cannot split is
    otherwise an :class:`InputError` naming it."""
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path,
                sep=sep,
                dtype=str,
                keep_default_na=False,
                encoding=encoding,
                on_bad_lines="warn" if on_bad_lines == "drop" else "error",
            )
    except pd.errors.EmptyDataError as exc:
        raise InputError("the log file is empty", path=str(path)) from exc
    except UnicodeDecodeError:
        locate_undecodable(path, encoding, "log file")  # names the line and the byte
    except pd.errors.ParserError as exc:
        found = re.search(r"[Ee]xpected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if found is None:
            raise InputError(
                f"cannot parse as CSV with separator {sep!r}: {exc}; {_HINT}", path=str(path)
            ) from exc
        expected, line, saw = found.groups()
        raise InputError(
            f"malformed line: {saw} fields, the header has {expected}; to drop and count "
            "such lines instead, pass on_bad_lines='drop' (--on-bad-lines drop)",
            line=int(line),
            path=str(path),
        ) from None
    except (ValueError, UnicodeError) as exc:
        raise InputError(
            f"cannot parse as CSV with separator {sep!r}: {exc}; {_HINT}", path=str(path)
        ) from exc
    refuse_row_labels(frame.index, path, sep, encoding)
    skipped = [
        (int(m.group(1)), m.group(2).strip())
        for w in seen
        if issubclass(w.category, pd.errors.ParserWarning)
        for m in _SKIPPED.finditer(str(w.message))
    ]
    return frame, skipped[:_MAX_LISTED], [n for n, _ in skipped]


def _read_table(
    path: Path,
    format: str,
    columns: Mapping[str, str] | None,
    sep: str | None,
    encoding: str,
    on_bad_lines: str = "raise",
) -> tuple[dict[str, Any], np.ndarray | Callable[[list[int]], list[int]], dict[str, Any]]:
    suffix = file_suffix(path)
    skipped: list[tuple[int, str]] = []
    dropped: list[int] = []
    if format == "parquet" or suffix in PARQUET_EXTENSIONS:
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # pyarrow's ArrowInvalid, OSError, ValueError...
            raise InputError(
                f"not a Parquet file ({type(exc).__name__}: {exc}); {_HINT}", path=str(path)
            ) from exc
        kind = "parquet"
    else:
        if sep is None:
            sep = "\t" if suffix in (".tsv", ".tab", ".txt") else ","
        frame, skipped, dropped = _read_csv_lines(path, sep, encoding, on_bad_lines)
        kind = "csv"
    mapping = dict(columns or {})
    lowered = {str(c).lower(): c for c in frame.columns}
    fields = {}
    for name in LOG_COLUMNS:
        source = mapping.get(name)
        if source is None:
            source = lowered.get(name, lowered.get(_AOL_NAMES[name].lower()))
        if source is None or source not in frame.columns:
            if name in ("rank", "url") and name not in mapping:
                fields[name] = np.full(len(frame), "", dtype=object)
                continue
            raise InputError(
                f"required column for {name!r} not found in {list(frame.columns)}",
                column=str(source if source is not None else name),
                path=str(path),
            )
        values = frame[source]
        if name == "time" and pd.api.types.is_datetime64_any_dtype(values):
            fields[name] = _naive_utc(values)
        else:
            fields[name] = (
                values.astype(object).where(values.notna(), "").astype(str).to_numpy(dtype=object)
            )
    report = {
        "format": kind,
        "lines": len(frame) + len(dropped),
        "header": True,
        "malformed": len(dropped),
        "malformed_lines": skipped,
    }
    if kind == "parquet":  # 1-based rows: a Parquet file has no header line
        return fields, np.arange(1, len(frame) + 1), report
    skip = set(dropped)

    def lines(rows: list[int]) -> list[int]:
        """The file lines of data rows ``rows`` (blank and dropped lines counted)."""
        found = file_lines(path, rows, sep, encoding, skip=skip)
        return [n if n is not None else r + 2 for n, r in zip(found, rows)]

    return fields, lines, report


def _naive_utc(times: pd.Series) -> np.ndarray:
    """Date-times as naive datetime64 values, tz-aware ones converted to UTC."""
    if isinstance(times.dtype, pd.DatetimeTZDtype):
        times = times.dt.tz_convert("UTC").dt.tz_localize(None)
    return times.to_numpy()


def _build(fields, numbers):
    """Validate the split fields (``numbers``: the file line of each row, or a function
    giving the lines of a list of rows); return the log, the first (line, reason) and the
    bad count."""
    user = pd.Series(fields["user"], dtype=object).str.strip()
    query = pd.Series(fields["query"], dtype=object)
    raw_time = fields["time"]
    if np.issubdtype(np.asarray(raw_time).dtype, np.datetime64):
        time = pd.Series(pd.to_datetime(raw_time))
    else:  # each time by its own UTC offset, converted to UTC; naive times as written
        text = pd.Series(raw_time, dtype=object).str.strip()
        time = pd.Series(iso_utc_ns(text).view("datetime64[ns]"))
    rank_text = pd.Series(fields["rank"], dtype=object).str.strip()
    rank = pd.to_numeric(rank_text.where(rank_text != ""), errors="coerce")
    url = pd.Series(fields["url"], dtype=object).str.strip()
    reasons = np.full(len(user), "", dtype=object)
    checks = [
        ((rank_text.ne("") & (rank.isna() | (rank % 1 != 0))).to_numpy(), "rank is not an integer"),
        ((rank.abs() >= 2.0**63).fillna(False).to_numpy(dtype=bool), "rank is out of range"),
        (time.isna().to_numpy(), "time is not a date-time"),
        (user.eq("").to_numpy(), "user is empty"),
    ]
    for mask, reason in checks:
        reasons[mask] = reason
    bad_mask = reasons != ""
    listed = np.flatnonzero(bad_mask)[:_MAX_LISTED]
    # the file lines of the rows listed: ``numbers`` per row, or a function of the rows
    lines = numbers(listed.tolist()) if callable(numbers) else np.asarray(numbers)[listed]
    bad = [(int(n), str(r)) for n, r in zip(lines, reasons[listed])]
    keep = ~bad_mask
    log = pd.DataFrame(
        {
            "user": user[keep].to_numpy(dtype=object),
            "query": query[keep].to_numpy(dtype=object),
            "time": time[keep].to_numpy(),
            "rank": pd.array(rank[keep].to_numpy(), dtype="Int64"),
            "url": url[keep].where(url[keep] != "").to_numpy(dtype=object),
        }
    )
    return log, bad, int(bad_mask.sum())


def write_log(log: pd.DataFrame, path: str | Path, *, aol: bool = False) -> Path:
    """Write a (published) log atomically as TSV (``.tsv``/``.txt``/``.gz``), CSV or Parquet.

    Parameters
    ----------
    log : DataFrame
        Columns ``user``, ``query``, ``time`` and optionally ``url`` (and ``rank``).  A
        Dask DataFrame is written by :func:`write_log_dask`.
    path : str or Path
        Output path; the format follows the suffix: ``.parquet``, ``.csv``, or TSV for
        ``.tsv`` / ``.txt``; ``.gz`` after a text suffix compresses.  Any other suffix
        raises :class:`~structanon.errors.InputError`.
    aol : bool
        Write the AOL layout instead: ``AnonID Query QueryTime ItemRank ClickURL``.

    Returns
    -------
    Path
        The path written.

    Examples
    --------
    >>> import tempfile, os
    >>> log = pd.DataFrame({"user": ["a"], "query": ["news"],
    ...                     "time": pd.to_datetime(["2006-03-01"]), "url": [None]})
    >>> out = write_log(log, os.path.join(tempfile.mkdtemp(), "out.tsv"))
    >>> out.read_text().splitlines()
    ['user\\tquery\\ttime\\turl', 'a\\tnews\\t2006-03-01\\t']
    """
    if is_dask(log):  # a lazy release: written partition by partition
        write_log_dask(log, path, aol=aol)
        return check_path(path, "path")
    if not isinstance(log, pd.DataFrame):
        raise InputError(f"log must be a pandas DataFrame, got {type(log).__name__}")
    path = check_path(path, "path")
    suffix, wanted = _write_layout(log, path, aol)
    frame = _write_columns(log, wanted, aol)
    with atomic_path(path) as tmp:
        if suffix in PARQUET_EXTENSIONS:
            frame.to_parquet(tmp, index=False)
            return path
        midnight = False
        if pd.api.types.is_datetime64_any_dtype(frame["time"]):
            times = frame["time"]
            midnight = (not aol) and bool((times == times.dt.normalize()).all())
        data = _text(frame, wanted, suffix, aol, midnight, header=True).encode("utf-8")
        if path.suffix.lower() == ".gz":
            data = gzip.compress(data, mtime=0)
        tmp.write_bytes(data)
    return path


def _write_layout(log: Any, path: Path, aol: bool) -> tuple[str, tuple[str, ...]]:
    """The output's suffix (checked) and the columns written."""
    missing = [c for c in ("user", "query", "time") if c not in log.columns]
    if missing:
        raise InputError("log lacks a required column", column=missing[0])
    suffix = file_suffix(path)
    if suffix not in LOG_EXTENSIONS:
        raise InputError(
            f"a log is written as {', '.join(LOG_EXTENSIONS)}, not "
            f"{suffix or 'a file without extension'}",
            path=str(path),
        )
    wanted = ("user", "query", "time", "rank", "url") if aol else ("user", "query", "time", "url")
    return suffix, wanted


def _write_columns(log: pd.DataFrame, wanted: tuple[str, ...], aol: bool) -> pd.DataFrame:
    frame = log[[c for c in wanted if c in log.columns]].copy()
    if aol:
        for column in ("rank", "url"):
            if column not in frame.columns:
                frame[column] = None
        frame = frame[list(wanted)]
    return frame


def _text(
    frame: pd.DataFrame,
    wanted: tuple[str, ...],
    suffix: str,
    aol: bool,
    midnight: bool,
    header: bool,
) -> str:
    """``frame`` as delimited text (times as dates when every time is a midnight)."""
    if pd.api.types.is_datetime64_any_dtype(frame["time"]):
        frame = frame.assign(
            time=frame["time"].dt.strftime("%Y-%m-%d" if midnight else "%Y-%m-%d %H:%M:%S")
        )
    if aol:
        frame.columns = [_AOL_NAMES[c] for c in wanted]
    buffer = _io.StringIO()
    frame.to_csv(
        buffer, sep="," if suffix == ".csv" else "\t", index=False, na_rep="", header=header
    )
    return buffer.getvalue()


def _write_part(pdf: pd.DataFrame, folder: str, i: int, wanted: tuple[str, ...], aol: bool) -> int:
    _write_columns(pdf, wanted, aol).to_parquet(f"{folder}/part.{i:05d}.parquet", index=False)
    return len(pdf)


def write_log_dask(log: Any, path: str | Path, *, aol: bool = False) -> int:
    """Write a lazy (Dask) published log partition by partition, never collecting it.

    Parameters
    ----------
    log : dask.dataframe.DataFrame
        A published log (``querylogs.anonymize`` of a Dask log returns one in
        ``release.data``), or any log with the columns :func:`write_log` writes.
    path : str or Path
        ``.parquet``: a folder ``path`` of Parquet parts (``part.00000.parquet``, ...), in
        the log's order, written by the workers (a remote cluster needs a shared file
        system); pandas (``read_parquet(path)``), DuckDB (``read_parquet('path/*.parquet')``)
        and Arrow read the folder.  ``.tsv``/``.txt``/``.csv`` (``.gz`` compresses): one
        file, the partitions appended in order by the client, four at a time: the same
        text :func:`write_log` writes for the computed log.
    aol : bool
        Write the AOL layout (as :func:`write_log`).

    Returns
    -------
    int
        The number of rows written.

    Raises
    ------
    InputError
        A missing column, a wrong suffix, or a Parquet folder that exists already.
    """
    import dask

    if not is_dask(log):
        raise InputError(f"log must be a Dask DataFrame, got {type(log).__name__}")
    path = check_path(path, "path")
    suffix, wanted = _write_layout(log, path, aol)
    if path.is_dir():
        raise InputError("the output names a directory that exists", path=str(path))
    parts = log.to_delayed()
    if suffix in PARQUET_EXTENSIONS:
        with staged_folder(path) as tmp:
            counts = compute(
                *[
                    dask.delayed(_write_part)(p, str(tmp), i, wanted, aol)
                    for i, p in enumerate(parts)
                ]
            )
        return int(sum(counts))
    midnight = False
    if not aol and pd.api.types.is_datetime64_any_dtype(log["time"].dtype):
        times = log["time"]
        (off,) = compute((times != times.dt.floor("D")).any())
        midnight = not bool(off)
    written = 0
    with atomic_path(path) as tmp, open(tmp, "wb") as raw:
        out: Any = (
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
            if path.suffix.lower() == ".gz"
            else raw
        )
        step = 4
        for lo in range(0, len(parts), step):
            for i, pdf in enumerate(compute(*parts[lo : lo + step])):
                frame = _write_columns(pdf, wanted, aol)
                text = _text(frame, wanted, suffix, aol, midnight, header=lo + i == 0)
                out.write(text.encode("utf-8"))
                written += len(pdf)
        if out is not raw:
            out.close()
    return written


#: Bytes of a plain AOL text file per partition of :func:`read_log_dask`.
BLOCK_BYTES = 64 * 2**20
_META = {
    "user": pd.Series(dtype=object),
    "query": pd.Series(dtype=object),
    "time": pd.Series(dtype="datetime64[ns]"),
    "rank": pd.Series(dtype="Int64"),
    "url": pd.Series(dtype=object),
}


def _input_files(path: str | Path) -> list[Path]:
    """The files of ``path``: a glob pattern, a folder (its files, sorted by name, hidden
    and ``_``-prefixed ones left out) or one file."""
    text = str(path)
    if any(char in text for char in "*?["):
        found = sorted(Path(p) for p in glob.glob(text) if Path(p).is_file())
    elif Path(text).is_dir():
        found = sorted(
            p for p in Path(text).iterdir() if p.is_file() and not p.name.startswith((".", "_"))
        )
    else:
        found = [Path(text)]
    if not found:
        raise InputError("no log file matches", path=text)
    return [check_input_path(p, "log file") for p in found]


def _blocks(path: Path, fmt: str, block_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges of a plain AOL file; ``(0, -1)`` (the whole file) for the others."""
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    size = path.stat().st_size
    if fmt != "aol" or gz or size <= block_bytes:
        return [(0, -1)]
    return [(lo, min(lo + block_bytes, size)) for lo in range(0, size, block_bytes)]


def _block_lines(path: str, start: int, stop: int, encoding: str) -> list[str]:
    """The lines starting in bytes ``start .. stop`` of ``path`` (the whole file for
    ``stop < 0``, gzip allowed), decoded as :func:`structanon.io.text_lines` decodes them.
    A line that does not decode is an :class:`~structanon.io.UndecodableText` naming its
    line in the block (1-based; the file's line for the whole file)."""
    if stop < 0:
        return [text for _number, text in text_lines(path, encoding, name="log file")]
    with open(path, "rb") as fh:
        if start > 0:
            fh.seek(start - 1)
            if fh.read(1) != b"\n":
                fh.readline()  # the line began in the previous block, which reads it
        position = fh.tell()
        data = fh.read(max(stop - position, 0)) if position < stop else b""
        if data and not data.endswith(b"\n"):
            data += fh.readline()
    lone = re.search(rb"\r(?!\n)", data[:-1] if data.endswith(b"\r") else data)
    if lone is not None:  # the block's line numbers are not known here: its byte offset
        raise InputError(f"{LONE_CR} (at byte {position + lone.start():,})", path=str(path))
    raw = data.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    try:
        return [line.rstrip("\r") for line in data.decode(encoding).split("\n")][: len(raw)]
    except UnicodeDecodeError:
        found = undecodable_line(data, encoding)
        if found is None:  # pragma: no cover - a block that fails decodes line by line
            raise
        raise undecodable_error(found[0], encoding, path, found[1]) from None


def _read_piece(
    path: str,
    fmt: str,
    start: int,
    stop: int,
    columns: Mapping[str, str] | None,
    sep: str | None,
    encoding: str,
    on_bad_lines: str = "raise",
) -> tuple[pd.DataFrame, dict[str, Any], int]:
    """One partition of :func:`read_log_dask`: the log, its parse report (line numbers
    local to the block for AOL blocks) and the block's number of lines.  A line that does
    not decode gives an empty log and ``report["undecodable"] = (line in the block,
    message)``, for the caller to name the line of the file."""
    n_lines = 0
    try:
        if fmt == "aol":
            lines = _block_lines(path, start, stop, encoding)
            n_lines = len(lines)
            fields, numbers, report = _aol_fields(
                pd.Series(lines, dtype=object),
                np.arange(1, n_lines + 1),
                header_possible=start == 0,
            )
        else:
            fields, numbers, report = _read_table(
                Path(path), fmt, columns, sep, encoding, on_bad_lines
            )
    except UndecodableText as exc:
        return pd.DataFrame(_META), {"undecodable": (exc.line or 1, exc.message)}, 0
    log, bad, n_bad = _build(fields, numbers)
    report["malformed"] = report.get("malformed", 0) + n_bad
    report["malformed_lines"] = sorted(report.get("malformed_lines", []) + bad)[:_MAX_LISTED]
    report["rows"] = len(log)
    return log, report, n_lines


def _raise_undecodable(pieces: list[tuple[Path, int]], reports: list[dict[str, Any]]) -> None:
    """The first undecodable line a piece met, as an :class:`UndecodableText` naming the
    file's line (a block's line shifted by the lines of the blocks before it)."""
    shift: dict[Path, int] = {}
    for (path, n_lines), report in zip(pieces, reports):
        offset = shift.get(path, 0)
        shift[path] = offset + n_lines
        if "undecodable" in report:
            line, message = report["undecodable"]
            raise UndecodableText(message, path=str(path), line=offset + int(line))


def _piece_report(result: tuple[pd.DataFrame, dict[str, Any], int]) -> tuple[dict, int]:
    return result[1], result[2]


def _piece_log(result: tuple[pd.DataFrame, dict[str, Any], int]) -> pd.DataFrame:
    return result[0]


def _piece_spooled(result: tuple[pd.DataFrame, dict[str, Any], int], path: str) -> tuple[dict, int]:
    """The piece's report; its log written to the Parquet file ``path``."""
    result[0].to_parquet(path, index=False)
    return result[1], result[2]


def _merge_reports(pieces: list[tuple[Path, int]], reports: list[dict[str, Any]]) -> dict:
    """The whole input's parse report: counts summed, line numbers made absolute within
    each file (a block's numbers shifted by the lines of the blocks before it), the first
    malformed lines listed in input order, each named by its file when there are
    several."""
    files = list(dict.fromkeys(path for path, _ in pieces))
    several = len(files) > 1
    merged: dict[str, Any] = {
        "format": reports[0].get("format", "aol"),
        "files": len(files),
        "lines": 0,
        "rows": 0,
        "malformed": 0,
        "blank_lines": 0,
        "header": False,
        "malformed_lines": [],
        "malformed_files": [],
    }
    shift: dict[Path, int] = {}
    listed: list[tuple[int, int, str, Path]] = []  # (file's position, line, reason, file)
    for (path, n_lines), report in zip(pieces, reports):
        offset = shift.get(path, 0)
        shift[path] = offset + n_lines
        for name in ("lines", "rows", "malformed", "blank_lines"):
            merged[name] += int(report.get(name, 0))
        merged["header"] = merged["header"] or bool(report.get("header"))
        order = files.index(path)
        listed.extend(
            (order, number + offset, reason, path)
            for number, reason in report.get("malformed_lines", [])
        )
    for _order, number, reason, path in sorted(listed, key=lambda x: x[:2])[:_MAX_LISTED]:
        merged["malformed_lines"].append((number, f"{path.name}: {reason}" if several else reason))
        merged["malformed_files"].append(str(path))
    return merged


def read_log_dask(
    path: str | Path,
    format: str = "aol",
    *,
    columns: Mapping[str, str] | None = None,
    sep: str | None = None,
    encoding: str = "utf-8",
    on_bad_lines: str = "raise",
    block_bytes: int | None = None,
    spool: str | Path | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Read a search log lazily into a Dask DataFrame, with :func:`read_log`'s rules.

    Parameters
    ----------
    path : str or Path
        A file, a folder (its files in name order) or a glob pattern (``logs/*.txt.gz``).
    format, columns, sep, encoding, on_bad_lines :
        As :func:`read_log`, applied to every file.
    block_bytes : int, optional
        Plain (uncompressed) AOL files are cut into partitions of about this many bytes
        at line boundaries (default :data:`BLOCK_BYTES`); gzip, CSV and Parquet files are
        one partition each.
    spool : str or Path, optional
        An existing folder the workers can write to and read from (e.g. a temporary
        folder with a local cluster): the pass that makes the parse report also writes
        each parsed partition there as Parquet, and the returned log reads those files,
        so the input is parsed once however often the log is computed.  The files must
        outlive every use of the log.

    Returns
    -------
    (dask.dataframe.DataFrame, dict)
        The log (the columns of :func:`read_log`) and its parse report (the counts of
        :func:`parse_report`, with ``files``; listed lines are 1-based line numbers in
        their file, counting the header, as :func:`read_log` gives them; with several
        files the reason starts with the file name).  The parse report takes one pass over
        the input (on the cluster) when this function is called; the partitions are read
        again when the log is computed.

    Raises
    ------
    InputError
        As :func:`read_log`: an empty input, more than half of the lines malformed, a
        missing column, a line that does not decode, or (``on_bad_lines="raise"``) a
        malformed line, named by file and line.

    Notes
    -----
    Differences from :func:`read_log`, all from reading per partition: a header line is
    recognized at the start of each file only (as :func:`read_log` does for its one
    file); the empty-file and mostly-malformed checks apply to the whole input, so an
    empty file among others is accepted; a line of a plain-text block is decoded on its
    own (the pandas reader's incremental decoder would also join a multi-byte character
    split across a line end, which UTF-8 never does).
    """
    import dask
    import dask.dataframe as dd

    from ._dask import remember_lengths

    on_bad_lines = _check_read_options(format, on_bad_lines, columns, encoding, sep)
    block = BLOCK_BYTES if block_bytes is None else parse_size(block_bytes, "block_bytes", 2**10)
    if format != "aol" and columns is not None:
        unknown = set(columns) - set(LOG_COLUMNS)
        if unknown:
            raise InputError(
                f"unknown log column(s) in mapping: {sorted(unknown)}; expected some of "
                f"{LOG_COLUMNS}",
                column=sorted(unknown)[0],
            )
    files = _input_files(path)
    for file in files:  # binary, UTF-16 or unreadable files refused before any work
        if format == "aol":
            source = text_lines(file, encoding, name="log file")
            next(source, None)
            source.close()
    pieces = [(file, lo, hi) for file in files for lo, hi in _blocks(file, format, block)]
    results = [
        # impure: each call its own keys, so the row counts remembered below never
        # stand for a file that changed since
        dask.delayed(_read_piece, pure=False)(
            str(f), format, lo, hi, columns, sep, encoding, on_bad_lines
        )
        for f, lo, hi in pieces
    ]
    if spool is not None:
        if not isinstance(spool, str | Path):
            raise InputError(f"spool must be a folder path, got {spool!r}")
        folder = Path(spool)
        if not folder.is_dir():
            raise InputError("the spool folder does not exist", path=str(spool))
        names = [str(folder / f"part.{i:06d}.parquet") for i in range(len(results))]
        found = compute(*[dask.delayed(_piece_spooled)(r, n) for r, n in zip(results, names)])
    else:
        found = compute(*[dask.delayed(_piece_report)(r) for r in results])
    sizes = [(f, n) for (f, _, _), (_, n) in zip(pieces, found)]
    _raise_undecodable(sizes, [r for r, _ in found])
    report = _merge_reports(sizes, [r for r, _ in found])
    shown = files[0] if len(files) == 1 else Path(str(path))
    _check_parsed(shown, report)
    _answer_bad_lines(report, path, on_bad_lines, (report.get("malformed_files") or [path])[0])
    if spool is not None:
        log = dd.read_parquet(names, split_row_groups=False)
    else:
        parts = [dask.delayed(_piece_log)(r) for r in results]
        log = dd.from_delayed(parts, meta=pd.DataFrame(_META), verify_meta=False)
    remember_lengths(log, [r["rows"] for r, _ in found])
    return log, report
