"""File formats of microdata tables: tables (CSV / TSV / Parquet) and ARX hierarchies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from structanon import Hierarchy, InputError
from structanon._validation import check_names, check_path, file_suffix
from structanon.io import read_table, text_lines, write_table

__all__ = [
    "read_microdata",
    "write_microdata",
    "load_hierarchies",
    "find_hierarchy",
    "parse_assignments",
    "file_line",
    "read_hierarchy",
    "TABLE_EXTENSIONS",
]

TABLE_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq")
_SEPARATORS = (",", ";", "\t", "|")


def read_microdata(
    path: str | Path, sep: str | None = None, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Read a microdata table (CSV / TSV, optionally compressed, or Parquet).

    Parameters
    ----------
    path : path
    sep : str, optional
        Field separator of text files (default ``","``, tab for ``.tsv``).
    columns : list of str, optional
        Columns that must be present; an :class:`InputError` names the first one missing.

    Raises
    ------
    InputError
        Naming the file: unreadable or not UTF-8 text, empty or header-only (with a hint
        on ``--sep``), a missing column, or duplicate column names.
    """
    if columns is not None:
        columns = check_names(columns, "columns")
    try:
        df = read_table(path, sep=sep)
    except InputError as exc:
        if "No columns to parse" not in exc.message:
            raise
        raise InputError(
            "the file is empty (no header, no rows); wrong file or wrong --sep?", path=str(path)
        ) from None
    hint = _separator_hint(df, sep)
    for column in columns or ():
        if column not in df.columns:
            raise InputError(
                f"column not in the file (columns: {list(map(str, df.columns))}){hint}",
                column=column,
                path=str(path),
            )
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


def file_line(path: str | Path, row: int) -> int | None:
    """The 1-based file line of data row ``row`` (0-based) of a text table read by pandas.

    The header is line 1; blank lines, which the reader skips, are counted; gzip text is
    read through (:func:`structanon.io.text_lines`).  Parquet files have no lines
    (``None``).

    Examples
    --------
    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    >>> _ = f.write("a,b\\n1,2\\n\\n3,4\\n"); f.close()
    >>> file_line(f.name, 0), file_line(f.name, 1)
    (2, 4)
    >>> os.unlink(f.name)
    """
    path = Path(path)
    if file_suffix(path) in (".parquet", ".pq"):
        return None
    if file_suffix(path) not in (".csv", ".tsv", ".tab", ".txt"):
        return row + 2
    seen = -1  # the header is the first non-blank line
    try:
        for number, text in text_lines(path):
            if text.strip("\r\n"):
                seen += 1
                if seen == row + 1:
                    return number
    except (OSError, InputError):
        pass
    return row + 2


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
    out = {}
    for item in items:
        if "=" not in item:
            raise InputError(f"{option} expects COLUMN=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out
