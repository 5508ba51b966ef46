"""Value-set quasi-identifiers: how their values are written and read back.

A ``"set"`` quasi-identifier (alias ``"ordinal"``) has no hierarchy: Mondrian cuts its
sorted distinct values like numbers and publishes each class's cell as the values present
in the class, joined by :data:`SET_SEPARATOR` (``"a,b"``; a lone value stays as it is).
To keep that unambiguous, no value of such a column may contain the separator
(:func:`check_separator` raises an :class:`~structanon.InputError` naming column and row).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from structanon import InputError
from structanon.errors import at_row

__all__ = [
    "SET",
    "ORDINAL",
    "SET_SPECS",
    "SET_SEPARATOR",
    "is_set_spec",
    "value_label",
    "value_labels",
    "check_separator",
    "SetDomain",
]

SET = "set"
ORDINAL = "ordinal"  # the older name of the same mode
SET_SPECS = (SET, ORDINAL)
SET_SEPARATOR = ","


def is_set_spec(spec: object) -> bool:
    """True for the value-set QI specs ``"set"`` and ``"ordinal"``."""
    return isinstance(spec, str) and spec in SET_SPECS


def value_label(v: object) -> str:
    """The published text of one value (numbers without a trailing ``.0``)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
        return str(v)
    if float(v).is_integer():
        return str(int(v))
    return np.format_float_positional(float(v), trim="-")


def value_labels(values) -> np.ndarray:
    """:func:`value_label` of every value (object array), computed once per distinct value."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    labels = np.array(
        [value_label(v) for v in np.asarray(uniques, dtype=object).tolist()] + [""], dtype=object
    )
    return labels[codes]


def check_separator(column: pd.Series, name: str) -> None:
    """Reject a value whose published text contains :data:`SET_SEPARATOR` (column and row)."""
    codes, uniques = pd.factorize(np.asarray(column, dtype=object), use_na_sentinel=True)
    for i, v in enumerate(np.asarray(uniques, dtype=object).tolist()):
        if SET_SEPARATOR in value_label(v):
            row = int(np.flatnonzero(codes == i)[0])
            raise InputError(
                f"a 'set' quasi-identifier's value contains {SET_SEPARATOR!r}, "
                "the separator of published value sets; recode it or give the "
                "column a Hierarchy",
                column=name,
                value=v,
                **at_row(column, row),
            )


class SetDomain:
    """The distinct values of an original column, and the values each published cell covers.

    Parameters
    ----------
    original : pandas.Series
        The column before anonymization; its ``D`` distinct values are the domain.
    name : str
        Column name for error messages.

    Notes
    -----
    A published cell is read by splitting it on :data:`SET_SEPARATOR`; ``"*"`` (when not a
    value of the column) covers the whole domain.  Any other element that is not a value
    of the column raises :class:`~structanon.InputError`.
    """

    def __init__(self, original: pd.Series, name: str) -> None:
        labels = value_labels(original)
        self.codes, uniques = pd.factorize(labels)
        self.values = np.asarray(uniques, dtype=object)
        self.size = int(self.values.size)
        self.index = {v: i for i, v in enumerate(self.values.tolist())}
        self.name = name

    def incidence(self, cells: pd.Series) -> tuple[np.ndarray, sparse.csr_matrix]:
        """``(inverse, members)``: each cell's distinct-cell index, and the sparse
        (distinct cells, D) 0/1 matrix of the values each distinct cell covers."""
        text = cells.astype(str).to_numpy(dtype=object)
        inverse, uniques = pd.factorize(text)
        rows: list[int] = []
        cols: list[int] = []
        everything = np.arange(self.size)
        for i, cell in enumerate(np.asarray(uniques, dtype=object).tolist()):
            if cell in self.index:  # a lone value (or a value that is the whole cell)
                rows.append(i)
                cols.append(self.index[cell])
                continue
            if cell.strip() == "*":
                rows.extend([i] * self.size)
                cols.extend(everything.tolist())
                continue
            for element in set(cell.split(SET_SEPARATOR)):
                code = self.index.get(element)
                if code is None:
                    row = int(np.flatnonzero(inverse == i)[0])
                    raise InputError(
                        "released value-set element is not a value of the original column",
                        column=self.name,
                        row=row,
                        value=element,
                    )
                rows.append(i)
                cols.append(code)
        members = sparse.csr_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(len(uniques), self.size)
        )
        return inverse, members
