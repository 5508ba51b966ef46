"""File formats of microdata tables: tables (CSV / TSV / Parquet) and ARX hierarchies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from structanon import Hierarchy, InputError
from structanon.io import read_table, write_table

__all__ = ["read_microdata", "write_microdata", "load_hierarchies", "find_hierarchy",
           "parse_assignments"]


def read_microdata(path: str | Path, sep: str | None = None,
                   columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Read a microdata table (CSV / TSV, optionally compressed, or Parquet).

    Parameters
    ----------
    path : path
    sep : str, optional
        Field separator of text files (default ``","``, tab for ``.tsv``).
    columns : list of str, optional
        Columns that must be present; an :class:`InputError` names the first one missing.
    """
    df = read_table(path, sep=sep)
    for column in columns or ():
        if column not in df.columns:
            raise InputError(f"column not in the file (columns: {list(df.columns)})",
                             column=column, path=str(path))
    return df


def write_microdata(df: pd.DataFrame, path: str | Path, sep: str | None = None) -> None:
    """Write a released table atomically (temp file + rename)."""
    write_table(df, path, sep=sep)


def find_hierarchy(directory: str | Path, column: str) -> Path | None:
    """The ARX hierarchy file of ``column`` in ``directory``: ``*hierarchy_<column>.csv``."""
    directory = Path(directory)
    matches = sorted(directory.glob(f"*hierarchy_{column}.csv")) + sorted(
        directory.glob(f"{column}.csv"))
    return matches[0] if matches else None


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
    columns = list(columns)
    files = dict(files or {})
    numeric, sets = set(numeric), set(sets)
    for column in list(files) + list(numeric) + list(sets):
        if column not in columns:
            raise InputError("hierarchy, numeric or set marking for a column that is not a "
                             "quasi-identifier", column=column)
    for column in columns:
        if (column in numeric) + (column in sets) + (column in files) > 1:
            raise InputError("a quasi-identifier may have only one of a hierarchy file, "
                             "--numeric and --set-qi", column=column)
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
            raise InputError("quasi-identifier has no hierarchy (give --hierarchy COLUMN=FILE, "
                             "--hierarchy-dir, or --numeric / --set-qi for Mondrian)", column=column)
        out[column] = Hierarchy.from_csv(path, sep=sep, name=column)
    return out


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
