"""File formats of microdata tables: tables (CSV / TSV / Parquet) and ARX hierarchies."""

from __future__ import annotations

import glob
import io
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon import Hierarchy, InputError
from structanon._validation import (
    check_columns,
    check_encoding,
    check_input_path,
    check_names,
    check_path,
    file_suffix,
)
from structanon.io import (
    PARQUET_EXTENSIONS,
    TABLE_OUTPUT_EXTENSIONS,
    atomic_write,
    default_separator,
    file_lines,
    gzip_writer,
    is_parquet_path,
    locate_undecodable,
    missing_tokens,
    parse_error,
    raise_block_fault,
    read_table,
    refuse_row_labels,
    remove_folder,
    repeated_header_line,
    repeated_header_row,
    staged_folder,
    text_block_checks,
    write_table,
)

__all__ = [
    "read_microdata",
    "read_microdata_dask",
    "write_microdata",
    "write_microdata_dask",
    "load_hierarchies",
    "find_hierarchy",
    "parse_assignments",
    "file_line",
    "read_hierarchy",
    "TABLE_EXTENSIONS",
]

TABLE_EXTENSIONS = (*TABLE_OUTPUT_EXTENSIONS, ".txt")  # .txt: the input's separator
_SEPARATORS = (",", ";", "\t", "|")


def _check_file_columns(
    frame: pd.DataFrame, columns: Sequence[str] | None, hint: str, path: str | Path
) -> None:
    """InputError naming the first of ``columns`` the file's header lacks (``hint``: the
    separator hint of :func:`_separator_hint`)."""
    for column in columns or ():
        if column not in frame.columns:
            raise InputError(
                f"column not in the file (columns: {list(map(str, frame.columns))}){hint}",
                column=column,
                path=str(path),
            )


def read_microdata(
    path: str | Path,
    sep: str | None = None,
    columns: Sequence[str] | None = None,
    categorical: bool | Sequence[str] = False,
    typed: Sequence[str] | None = None,
    encoding: str = "utf-8",
) -> pd.DataFrame:
    """Read a microdata table (CSV / TSV, optionally compressed, or Parquet).

    The values and types are those of ``pandas.read_csv`` (see
    :func:`structanon.io.read_table`, which parses plain text files with Arrow's
    multi-threaded reader); with ``typed``, only the columns it names are typed so, and
    every other column of a text file is kept as text exactly as written (only empty
    cells missing), so it is published unchanged.

    Parameters
    ----------
    path : path
    sep : str, optional
        Field separator of text files (default ``","``, tab for ``.tsv``).
    columns : list of str, optional
        Columns that must be present; an :class:`InputError` names the first one missing.
    categorical : bool or list of str
        Columns to read as pandas categoricals with sorted categories (``True``: every
        column of text values; a list: the columns named, text or numeric): a few bytes a
        cell instead of a Python object, and what :func:`tabular.anonymize` encodes,
        publishes and verifies fastest.  The command line reads the hierarchy
        quasi-identifiers and sensitive columns of ``anonymize`` this way.
    typed : list of str, optional
        The columns typed by pandas' rules (numbers, booleans, the missing-value tokens
        ``NA``, ``null``, ...); ``None`` (default): every column.  The command line
        passes the columns a command works on.
    encoding : str
        Text encoding of a text file (default UTF-8; e.g. ``"latin-1"``, ``"cp1252"``).

    Raises
    ------
    InputError
        Naming the file: unreadable, an unknown encoding, text that does not decode (its
        line and byte), empty or header-only (with a hint on ``--sep``), a missing column,
        or duplicate column names.
    """
    if columns is not None:
        columns = check_names(columns, "columns")
    try:
        df = read_table(path, sep=sep, categorical=categorical, typed=typed, encoding=encoding)
    except InputError as exc:
        if "No columns to parse" not in exc.message:
            raise
        raise InputError(
            "the file is empty (no header, no rows); wrong file or wrong --sep?", path=str(path)
        ) from None
    hint = _separator_hint(df, sep)
    named = [] if isinstance(categorical, bool) else list(categorical)
    _check_file_columns(df, [*(columns or []), *named], hint, path)
    if len(df) == 0:
        raise InputError(
            f"the file has a header but no data rows{hint or '; wrong --sep?'}", path=str(path)
        )
    return df


def _separator_hint(df: pd.DataFrame, sep: str | None) -> str:
    """A hint when the whole header landed in one column: the separator is likely wrong."""
    if df.shape[1] == 1:
        header = str(df.columns[0])
        found = [s for s in _SEPARATORS if s in header and s != sep]
        if found:
            return f"; the header is one column: wrong --sep? (try --sep {found[0]!r})"
    return ""


def is_missing(value: Any) -> bool:
    """Whether an error's ``value`` stands for a missing cell (``None`` or NaN)."""
    return value is None or (np.ndim(value) == 0 and bool(pd.isna(value)))


def locate_value(
    files: Iterable[str | Path], sep: str | None, column: str, value: Any, encoding: str = "utf-8"
) -> tuple[str, int | None] | None:
    """The first text file of ``files`` and its line where ``column`` holds ``value`` (a
    missing value for ``None`` / NaN), as the Dask reader reads the column (text, the
    usual missing-value tokens); ``None`` when no file holds it.  For errors found by a
    Dask computation, which knows the value but not where it came from: reads the column
    again, on the error path only."""
    missing = is_missing(value)
    for name in files:
        if is_parquet_path(name):
            continue
        here = default_separator(name, sep)
        start = 0
        try:
            chunks = pd.read_csv(
                name,
                sep=here,
                usecols=[column],
                dtype=str,
                chunksize=1 << 20,
                encoding=encoding,
            )
            for chunk in chunks:
                found = chunk[column].isna() if missing else chunk[column] == str(value)
                hits = np.flatnonzero(found.to_numpy(dtype=bool))
                if hits.size:
                    return str(name), file_line(name, start + int(hits[0]), here, encoding)
                start += len(chunk)
        except (ValueError, OSError, pd.errors.ParserError):
            continue  # the reader's own checks name what is wrong with such a file
    return None


def file_line(
    path: str | Path, row: int, sep: str | None = None, encoding: str = "utf-8"
) -> int | None:
    """The 1-based file line of data row ``row`` (0-based) of a text table read by pandas,
    blank lines and line breaks inside quoted values counted
    (:func:`structanon.io.file_lines`); ``None`` for Parquet."""
    return file_lines(path, [row], sep, encoding)[0]


def write_microdata(df: pd.DataFrame, path: str | Path, sep: str | None = None) -> None:
    """Write a released table atomically (temp file + rename)."""
    write_table(df, path, sep=sep)


def find_hierarchy(directory: str | Path, column: str) -> Path | None:
    """The ARX hierarchy file of ``column`` in ``directory``: ``*hierarchy_<column>.csv``."""
    directory = Path(directory)
    matches = sorted(directory.glob(f"*hierarchy_{column}.csv")) + sorted(
        directory.glob(f"{column}.csv")
    )
    return matches[0] if matches else None


def _hierarchy_arguments(
    columns: Any, files: Any, numeric: Any, sets: Any, directory: Any
) -> tuple[list, dict, set, set, Path | None]:
    """The arguments of :func:`load_hierarchies` type-checked (InputError naming each)."""
    if files is not None and not isinstance(files, Mapping):
        raise InputError(f"files must map columns to hierarchy files, got {files!r}")
    files = {
        column: check_path(path, f"hierarchy file of {column!r}")
        for column, path in (files or {}).items()
    }
    return (
        check_names(columns, "columns"),
        files,
        set(check_names(numeric, "numeric")),
        set(check_names(sets, "sets")),
        None if directory is None else check_path(directory, "directory"),
    )


def load_hierarchies(
    columns: Iterable[str],
    files: Mapping[str, str | Path] | None = None,
    directory: str | Path | None = None,
    sep: str = ";",
    numeric: Iterable[str] = (),
    sets: Iterable[str] = (),
) -> dict[str, Hierarchy | str]:
    """Hierarchy (or ``"numeric"``, or ``"set"``) of each quasi-identifier.

    Parameters
    ----------
    columns : iterable of str
        The quasi-identifiers, in order.
    files : dict column -> path, optional
        Explicit ARX hierarchy files (``leaf;level1;...;*``).
    directory : path, optional
        Where to look for ``*hierarchy_<column>.csv`` for the columns not in ``files``.
    sep : str
        Separator of the hierarchy files.
    numeric : iterable of str
        Columns to treat as numbers (Mondrian ranges) instead of by a hierarchy.
    sets : iterable of str
        Categorical columns without hierarchy, published as value sets (Mondrian).

    Raises
    ------
    InputError
        A column with neither a hierarchy nor a numeric / set marking, a column marked
        twice, or a file or marking naming a column that is not a quasi-identifier.

    Examples
    --------
    >>> load_hierarchies(["age", "race"], numeric=["age"], sets=["race"])
    {'age': 'numeric', 'race': 'set'}
    """
    columns, files, numeric, sets, directory = _hierarchy_arguments(
        columns, files, numeric, sets, directory
    )
    if not isinstance(sep, str) or len(sep) != 1:
        raise InputError(f"the separator of hierarchy files must be one character, got {sep!r}")
    if directory is not None and not Path(directory).is_dir():
        raise InputError(
            "hierarchy folder does not exist"
            if not Path(directory).exists()
            else "hierarchy folder is not a folder",
            path=str(directory),
        )
    for column in list(files) + list(numeric) + list(sets):
        if column not in columns:
            raise InputError(
                "hierarchy, numeric or set marking for a column that is not a quasi-identifier",
                column=column,
            )
    for column in columns:
        if (column in numeric) + (column in sets) + (column in files) > 1:
            raise InputError(
                "a quasi-identifier may have only one of a hierarchy file, --numeric and --set-qi",
                column=column,
            )
    out: dict[str, Hierarchy | str] = {}
    for column in columns:
        if column in numeric:
            out[column] = "numeric"
            continue
        if column in sets:
            out[column] = "set"
            continue
        path = files.get(column)
        if path is None and directory is not None:
            path = find_hierarchy(directory, column)
        if path is None:
            raise InputError(
                "quasi-identifier has no hierarchy (give --hierarchy COLUMN=FILE, "
                "--hierarchy-dir, or --numeric / --set-qi for Mondrian)",
                column=column,
            )
        out[column] = read_hierarchy(path, sep, column)
    return out


def read_hierarchy(path: str | Path, sep: str, column: str | None) -> Hierarchy:
    """An ARX hierarchy file, with unreadable or non-UTF-8 files as :class:`InputError`."""
    if Path(path).is_dir():
        raise InputError("hierarchy file is a folder", path=str(path), column=column)
    try:
        return Hierarchy.from_csv(path, sep=sep, name=column)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"hierarchy file is not UTF-8 text (byte {exc.start}); convert it to UTF-8",
            path=str(path),
            column=column,
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot read hierarchy file: {exc.strerror or exc}", path=str(path), column=column
        ) from None


def parse_assignments(items: Iterable[str], option: str) -> dict[str, str]:
    """Parse ``COLUMN=VALUE`` command-line items.

    Examples
    --------
    >>> parse_assignments(["age=h_age.csv", "sex = h_sex.csv"], "--hierarchy")
    {'age': 'h_age.csv', 'sex': 'h_sex.csv'}
    """
    out: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise InputError(f"{option} expects COLUMN=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        key = key.strip()
        if key in out and out[key] != value.strip():
            raise InputError(
                f"{option} given twice for one column ({out[key]!r} and {value.strip()!r})",
                column=key,
            )
        out[key] = value.strip()
    return out


# -- Dask: a lazy reader with the pandas reader's rules ---------------------------------

_GLOB_CHARS = ("*", "?", "[")
_COMPRESSED = (".gz", ".bz2", ".xz", ".zip", ".zst")
_ROWS = "\0rows"
_HEADER = "\0header repeated"
_NAMELESS = "\0nameless with values"
_LABELLED = "\0read with row labels"
_TRUE, _FALSE = ("True", "TRUE", "true"), ("False", "FALSE", "false")


def lazy_input_files(path: str | Path) -> list[str]:
    """The files :func:`read_microdata_dask` reads for ``path`` (checked to exist)."""
    return _lazy_files(path)[0]


def _lazy_files(path: str | Path) -> tuple[list[str], str]:
    """The files a lazy read takes (a glob, a Parquet folder, or one file) and their kind."""
    text = str(path)
    if any(c in text for c in _GLOB_CHARS) and not Path(text).exists():
        files = sorted(glob.glob(text))
        if not files:
            raise InputError("INPUT matches no file", path=text)
    else:
        p = check_input_path(path, "INPUT", directory_ok=True)
        if p.is_dir():
            files = sorted(str(f) for f in p.rglob("*") if is_parquet_path(f))
            if not files:
                raise InputError("INPUT folder holds no .parquet file", path=text)
        else:
            files = [text]
    kinds = {is_parquet_path(Path(f)) for f in files}
    if len(kinds) > 1:
        raise InputError("INPUT mixes Parquet and text files", path=text)
    return files, "parquet" if kinds.pop() else "text"


def _column_kinds(
    pdf: pd.DataFrame, names: Sequence[str] | None = None, nameless: Sequence[str] = ()
) -> dict[str, tuple[Any, bool]]:
    """Per column of text values (NaN for the missing-value tokens) of ``names`` (default:
    all): the type pandas would give this partition alone ("empty", "bool", "int",
    "float", "object"; "big:" and the first value for integers beyond the 64-bit range)
    and whether a value is missing; the position of the first ``nameless`` column (one a
    trailing separator makes) that holds a value, -1 for none."""
    out: dict[str, tuple[Any, bool]] = {}
    holding = [
        list(pdf.columns).index(c)
        for c in nameless
        if (pdf[c].notna() & (pdf[c].astype(str).str.strip() != "")).any()
    ]
    out[_NAMELESS] = (min(holding, default=-1), False)
    out[_LABELLED] = (not isinstance(pdf.index, pd.RangeIndex), False)
    pdf = pdf.drop(columns=list(nameless))
    for name in pdf.columns if names is None else names:
        column = pdf[name]
        na = column.isna()
        values = column[~na]
        if values.empty:
            kind = "empty"
        elif values.isin(_TRUE + _FALSE).all():
            kind = "bool"
        else:
            numbers = pd.to_numeric(values, errors="coerce")
            if numbers.isna().any():
                kind = "object"
            elif pd.api.types.is_integer_dtype(numbers.dtype):
                kind = "int"
                if numbers.dtype.kind == "u":  # beyond int64: never wrapped around
                    beyond = (numbers > np.iinfo(np.int64).max).to_numpy()
                    if beyond.any():
                        kind = "big:" + str(values.to_numpy()[np.flatnonzero(beyond)[0]])
            else:
                kind = "float"
        out[name] = (kind, bool(na.any()))
    out[_ROWS] = (len(pdf), False)
    out[_HEADER] = (repeated_header_row(pdf) is not None, False)
    return out


def _refuse_big_integers(
    parts: list[dict[str, tuple[Any, bool]]], files: list[str], sep: str, encoding: str
) -> None:
    """InputError naming the column, file and line of an integer beyond the 64-bit range
    in a typed column (the Dask engine would wrap it around)."""
    for part in parts:
        for name, (kind, _) in part.items():
            if isinstance(kind, str) and kind.startswith("big:"):
                value = kind[4:]
                where = locate_value(files, sep, name, value, encoding)
                raise InputError(
                    f"integer {value} is beyond the 64-bit range the Dask engine computes "
                    "with (use --engine pandas, or make the column text)",
                    column=name,
                    value=value,
                    path=where[0] if where else files[0],
                    line=where[1] if where else None,
                )


def _whole_column_types(parts: list[dict[str, tuple[Any, bool]]]) -> dict[str, str]:
    """The type pandas infers for a whole column from the partitions' kinds."""
    types = {}
    for name in parts[0]:
        kinds = {p[name][0] for p in parts} - {"empty"}
        missing = any(p[name][1] for p in parts)
        if not kinds:
            types[name] = "float"  # an all-missing column
        elif kinds == {"bool"}:
            types[name] = "object" if missing else "bool"
        elif kinds <= {"int", "float"}:
            types[name] = "int" if kinds == {"int"} and not missing else "float"
        else:
            types[name] = "object"
    return types


def _convert(pdf: pd.DataFrame, types: dict[str, str]) -> pd.DataFrame:
    """One partition of text values converted to the whole column's pandas types."""
    out = pdf.copy(deep=False)
    for name, kind in types.items():
        if kind == "int":
            out[name] = pd.to_numeric(pdf[name]).astype(np.int64)
        elif kind == "float":
            out[name] = pd.to_numeric(pdf[name]).astype(float)
        elif kind == "bool":
            out[name] = pdf[name].isin(_TRUE)
        else:  # text, missing values as NaN (not pd.NA), as pandas reads them
            column = pdf[name].astype(object)
            out[name] = column.where(column.notna(), np.nan)
    return out


def _dask_separator(first: Path, sep: str | None) -> str:
    """The field separator the Dask reader splits at (one character; by default, from
    the first file's name)."""
    sep = default_separator(first) if sep is None else sep
    if len(sep) != 1:
        raise InputError(
            f"the Dask engine reads one-character field separators, not {sep!r} (use the "
            "pandas engine)"
        )
    return sep


def _refuse_part_faults(
    parts: list[dict[str, Any]],
    files: list[str],
    sep: str,
    encoding: str,
    hint: str,
    path: str | Path,
) -> None:
    """What the pass over the partitions (:func:`_column_kinds`) met that the table may not
    hold: a nameless column with values, a repeated header line, no data rows, an integer
    beyond the 64-bit range in a typed column."""
    _refuse_nameless_values(parts, files)
    if any([p.pop(_LABELLED)[0] for p in parts]):  # a block's first line: see _FieldCount
        raise InputError(
            "a line has one field more than the header: a value holding the separator "
            "must be quoted, or is --sep right?",
            path=files[0] if len(files) == 1 else None,
        )
    _refuse_repeated_header(parts, files, sep, encoding)
    if not sum(p.pop(_ROWS)[0] for p in parts):
        raise InputError(
            f"the file has a header but no data rows{hint or '; wrong --sep?'}", path=str(path)
        )
    _refuse_big_integers(parts, files, sep, encoding)


def _refuse_nameless_values(parts: list[dict[str, Any]], files: list[str]) -> None:
    """An :class:`InputError` naming the position of a column without a name in the header
    that holds a value in some partition (:func:`_column_kinds`), as the pandas reader's."""
    holding = [i for i in (p.pop(_NAMELESS)[0] for p in parts) if i >= 0]
    if holding:
        raise InputError(
            f"column {min(holding) + 1} has no name in the header but holds values; name it",
            path=str(files[0]) if len(files) == 1 else None,
            line=1,
        )


def _refuse_repeated_header(
    parts: list[dict[str, Any]], files: list[str], sep: str, encoding: str
) -> None:
    """An :class:`InputError` naming the file and line of a header line read as data
    (files concatenated) when a partition held one (:func:`_column_kinds`)."""
    if any([p.pop(_HEADER)[0] for p in parts]):
        for name in files:
            line = repeated_header_line(Path(name), sep, encoding)
            if line is not None:
                raise InputError(
                    "the header line is repeated as a data line (files concatenated?); remove it",
                    path=name,
                    line=line,
                )
        raise InputError(
            "the header line is repeated as a data line (files concatenated?); remove it",
            path=files[0] if len(files) == 1 else None,
        )


def _locate_parse_error(files: list[str], sep: str, exc: Exception, encoding: str) -> InputError:
    """The pandas reader's error (file and line) for a malformed text input: each file is
    parsed again by pandas in chunks until the bad line is met."""
    for name in files:
        try:
            for _ in pd.read_csv(name, sep=sep, dtype=str, chunksize=1 << 20, encoding=encoding):
                pass
        except pd.errors.ParserError as error:
            return parse_error(error, name, encoding)
        except UnicodeDecodeError:
            try:
                locate_undecodable(name, encoding)  # always raises, naming line and byte
            except InputError as located:
                return located
    return InputError(f"cannot parse table: {exc}; is --sep right?", path=files[0])


def read_microdata_dask(
    path: str | Path,
    sep: str | None = None,
    columns: Sequence[str] | None = None,
    blocksize: str | int = "64MB",
    typed: Sequence[str] | None = None,
    encoding: str = "utf-8",
) -> Any:
    """Read a microdata table lazily, as a Dask DataFrame, with :func:`read_microdata`'s
    rules (text in ``encoding``).

    ``path`` is a CSV / TSV file (optionally compressed: one partition), a glob of them
    (``data/*.csv``), a Parquet file, a folder of Parquet files or a glob of them.  Text is
    read as strings with pandas' missing-value tokens, then one pass over the partitions
    finds the type pandas gives each whole column (int, float, bool or text) and every
    partition is converted to it, so the values equal :func:`read_microdata`'s.  That pass
    also meets every malformed line: the error then names the file and its line, as the
    pandas reader does.  With ``typed``, only the columns it names are typed so; every
    other text column is kept as written (only empty cells missing).  An integer column
    beyond the 64-bit range is refused (never wrapped around).  Parquet keeps its stored
    types.

    Raises
    ------
    InputError
        A missing file, a glob matching nothing, a folder without Parquet files, a mix of
        Parquet and text files, a missing column (with a hint at ``--sep``), duplicate
        column names, a malformed line (file and line), text that does not decode (file,
        line and byte), or a table with no data rows.
    """
    from structanon._engine import compute, parse_size, require_dask

    dd = require_dask()
    encoding = check_encoding(encoding)
    if columns is not None:
        columns = check_names(columns, "columns")
    blocksize = parse_size(blocksize, "blocksize", 2**10)
    files, kind = _lazy_files(path)
    if kind == "parquet":
        try:
            ddf = dd.read_parquet(files)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read Parquet: {exc}", path=str(path)) from None
        header = ddf._meta
        strings = [c for c, t in header.dtypes.items() if isinstance(t, pd.StringDtype)]
        if strings:  # Dask's Arrow strings: text objects, as pandas reads them
            types = dict.fromkeys(strings, "object")
            ddf = ddf.map_partitions(_convert, types, meta=_convert(header, types))
    else:
        first = Path(files[0])
        sep = _dask_separator(first, sep)
        header = read_microdata_header(files, sep, encoding)
        compressed = first.suffix.lower() in _COMPRESSED
        names = list(header.columns) if typed is None else [c for c in typed if c in header]
        names = list(dict.fromkeys(names))
        # the missing-value tokens (NA, null, ...) in the typed columns only; elsewhere
        # only an empty cell is missing
        tokens = missing_tokens(list(header.columns), names)
        try:  # Dask parses a sample of the first file here
            ddf = dd.read_csv(
                files,
                sep=sep,
                dtype=str,
                keep_default_na=False,
                na_values=tokens,
                blocksize=None if compressed else blocksize,
                encoding=encoding,
            )
        except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
            raise _locate_parse_error(files, sep, exc, encoding) from None
        refuse_row_labels(ddf._meta.index, files[0], sep, encoding)
    hint = _separator_hint(header, sep)
    _check_file_columns(header, columns, hint, path)
    if kind == "text":
        import dask

        checks = text_block_checks(
            files, sep or ",", len(header.columns), compressed, blocksize, encoding
        )
        try:
            # the columns a trailing separator makes: read, checked empty, left out
            nameless = [c for c in ddf.columns if c not in header.columns]
            *parts, faults = compute(
                *[dask.delayed(_column_kinds)(p, names, nameless) for p in ddf.to_delayed()],
                checks,
            )
        except (pd.errors.ParserError, UnicodeDecodeError, InputError, ValueError) as exc:
            raise _locate_parse_error(files, sep or ",", exc, encoding) from None
        raise_block_fault(files, faults)
        _refuse_part_faults(parts, files, sep or ",", encoding, hint, path)
        types = _whole_column_types(list(parts))
        types.update({c: "object" for c in header.columns if c not in types})
        if nameless:
            ddf = ddf[list(header.columns)]
        meta = _convert(ddf._meta, types)
        ddf = ddf.map_partitions(_convert, types, meta=meta)
    return ddf


def read_microdata_header(files: list[str], sep: str, encoding: str = "utf-8") -> pd.DataFrame:
    """The header of every text file (read by pandas, no rows); they must agree."""
    header = None
    for name in files:
        try:
            head = read_table(name, sep=sep, nrows=0, encoding=encoding)
        except InputError as exc:
            if "No columns to parse" not in exc.message and "empty" not in exc.message:
                raise
            raise InputError(
                "the file is empty (no header, no rows); wrong file or wrong --sep?", path=name
            ) from None
        if header is not None and list(head.columns) != list(header.columns):
            raise InputError(
                f"the header differs from {files[0]}'s ({list(map(str, header.columns))})",
                path=name,
            )
        header = head
    assert header is not None
    return header


# -- Dask: a lazy release written partition by partition --------------------------------

_PARQUET = PARQUET_EXTENSIONS


def _parquet_schema(meta: pd.DataFrame) -> Any:
    """One Arrow schema for every part: a text column is a string column even in a part
    where it holds no value (Arrow would type it null there, and readers of the folder
    then fail to merge the parts)."""
    import pyarrow as pa

    schema = pa.Schema.from_pandas(meta, preserve_index=False)
    for i, f in enumerate(schema):
        if pa.types.is_null(f.type):
            schema = schema.set(i, pa.field(f.name, pa.string()))
    return schema


def _part_summary(pdf: pd.DataFrame, classes: Sequence[str]) -> tuple[int, int, int]:
    """Rows, published classes and the smallest class of one written partition."""
    if not classes or pdf.empty:
        return len(pdf), 0, 0
    sizes = pdf.groupby(list(classes), sort=False, dropna=False).size().to_numpy()
    return len(pdf), int(sizes.size), int(sizes.min())


def _write_part(
    pdf: pd.DataFrame,
    path: str,
    header: bool,
    sep: str | None,
    compressed: bool,
    classes: Sequence[str],
    schema: Any = None,
) -> tuple[int, int, int]:
    """One partition as a Parquet file (of the table's ``schema``) or a headed/headless
    text block (a gzip member)."""
    if schema is not None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pa.Table.from_pandas(pdf, schema=schema, preserve_index=False)
        except (pa.ArrowTypeError, pa.ArrowInvalid):  # text columns holding other objects
            text = [f.name for f in schema if pa.types.is_string(f.type)]
            pdf = pdf.astype({c: str for c in text}).where(pdf.notna(), None)
            table = pa.Table.from_pandas(pdf, schema=schema, preserve_index=False)
        pq.write_table(table, path)
    else:
        with open(path, "wb") as raw:  # a gzip member with no file name and a zero time
            out = gzip_writer(raw) if compressed else raw
            with io.TextIOWrapper(out, encoding="utf-8", newline="") as stream:
                pdf.to_csv(stream, sep=sep or ",", index=False, header=header)
    return _part_summary(pdf, classes)


def write_microdata_dask(
    data: Any,
    path: str | Path,
    sep: str | None = None,
    classes: Sequence[str] = (),
) -> dict[str, int]:
    """Write a lazy (Dask) release without collecting it on the client.

    The workers write every partition at once (one Dask computation: a release whose
    partitions come out of a shuffle is computed once, not once per partition).

    * ``.parquet`` / ``.pq``: ``path`` becomes a folder of Parquet files
      ``part.00000.parquet``, ... (one per partition, no index), as the Dask engine of
      ``location`` writes; pandas, Dask, Arrow and DuckDB read the folder as one table.
      An existing ``path`` is refused (never overwritten).
    * CSV / TSV (and ``.gz``): one file.  The workers write each partition as a block of
      text (the header in the first only), which are appended in partition order: the
      same bytes as :func:`write_microdata` writes for the computed release (with ``.gz``
      a multi-member gzip file that every gzip reader reads whole).

    The partitions are written to a temporary folder beside ``path`` that is removed at
    the end; on any error nothing is left.  The parts are written by the workers, so a
    remote cluster needs ``path`` on a file system it shares with the client.

    Parameters
    ----------
    data : dask.dataframe.DataFrame
    path : str or Path
    sep : str, optional
        Field separator of text output (default ``,``; tab for ``.tsv``/``.tab``).
    classes : sequence of str
        Columns whose value tuples are the published classes (the quasi-identifiers):
        each written partition is counted by them.

    Raises
    ------
    InputError
        ``data`` not a Dask DataFrame, a bad ``path`` or ``sep``, a ``classes`` column
        the table lacks, an existing Parquet ``path``.

    Returns
    -------
    dict
        ``rows`` written, ``classes`` (summed over partitions; a class split over two
        partitions counts twice) and ``smallest_class``, the smallest class of any one
        partition (a lower bound of the smallest class of the file).
    """
    import dask

    from structanon._engine import compute, is_dask

    if not is_dask(data) or not hasattr(data, "npartitions") or not hasattr(data, "columns"):
        raise InputError(f"data must be a Dask DataFrame, got {type(data).__name__}")
    path = check_path(path, "path")
    ext = file_suffix(path)
    classes = check_names(classes, "classes")
    check_columns(data._meta, classes, what="the table")
    if sep is not None and (not isinstance(sep, str) or len(sep) != 1):
        raise InputError(f"sep must be one character, got {sep!r}")
    parquet = ext in _PARQUET
    if not parquet and sep is None:
        sep = "\t" if ext in (".tsv", ".tab") else ","
    compressed = path.suffix.lower() == ".gz"

    def write_parts(folder: Path) -> tuple[list[str], tuple[Any, ...]]:
        names = [
            str(folder / (f"part.{i:05d}.parquet" if parquet else f"part.{i:05d}"))
            for i in range(data.npartitions)
        ]
        schema = _parquet_schema(data._meta) if parquet else None
        tasks = [
            dask.delayed(_write_part)(part, name, i == 0, sep, compressed, classes, schema)
            for i, (part, name) in enumerate(zip(data.to_delayed(), names))
        ]
        return names, compute(*tasks)

    if parquet:
        with staged_folder(path) as tmp:
            _, summaries = write_parts(tmp)
    else:
        if path.is_dir():
            raise InputError("the output names a directory, not a file", path=str(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".parts", dir=path.parent))
        try:
            names, summaries = write_parts(tmp)
            with atomic_write(path, "wb") as out:
                for name in names:
                    with open(name, "rb") as part_file:
                        shutil.copyfileobj(part_file, out, 1 << 20)
        finally:
            remove_folder(tmp)
    sizes = [s[2] for s in summaries if s[1]]
    return {
        "rows": int(sum(s[0] for s in summaries)),
        "classes": int(sum(s[1] for s in summaries)),
        "smallest_class": int(min(sizes)) if sizes else 0,
    }
