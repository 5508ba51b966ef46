"""Exception classes shared by every structanon package.

Every error raised on purpose derives from :class:`StructanonError`.  Bad input is an
:class:`InputError` (also a :class:`ValueError`) that names where the fault is; a request
that no release can satisfy (``k`` larger than the population, say) is an
:class:`InfeasibleError`; a release whose output fails its own privacy model is a
:class:`VerificationError`.  All are raised before any output is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "StructanonError",
    "InputError",
    "InfeasibleError",
    "VerificationError",
    "PublisherWarning",
    "at_row",
    "respelled",
]

_NO_LABEL: Any = object()


class StructanonError(Exception):
    """Base class of every error structanon raises on purpose."""

    exit_code = 1


class InputError(StructanonError, ValueError):
    """The input is malformed.

    Parameters
    ----------
    message : str
        What is wrong.
    column, line, value, node, row, path : optional
        Where it is wrong; each one given is appended to the message and kept as an
        attribute, so callers can point at the fault.
    label : optional
        Instead of ``row``: the index label of a row of a DataFrame or Series, kept as the
        ``row`` attribute and named ``row with index label L`` (what ``df.loc[L]``
        takes).  See :func:`at_row`.

    Examples
    --------
    >>> str(InputError("value missing from hierarchy", column="age", value=17, line=12))
    "value missing from hierarchy (column 'age', line 12, value 17)"
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        column: str | None = None,
        line: int | None = None,
        row: int | None = None,
        value: Any = None,
        node: Any = None,
        path: str | None = None,
        label: Any = _NO_LABEL,
    ) -> None:
        self.labelled = label is not _NO_LABEL
        if self.labelled:
            row = label
        self.column, self.line, self.row, self.value, self.node, self.path = (
            column,
            line,
            row,
            value,
            node,
            path,
        )
        where = []
        if path is not None:
            where.append(f"file {str(path)!r}")
        if column is not None:
            where.append(f"column {column!r}")
        if line is not None:
            where.append(f"line {line}")
        if self.labelled:
            where.append(f"row with index label {label!r}")
        elif row is not None:
            where.append(f"row {row}")
        if node is not None:
            where.append(f"node {node!r}")
        if value is not None:
            where.append(f"value {value!r}")
        self.message = message
        super().__init__(message + (f" ({', '.join(where)})" if where else ""))


def at_row(data: Any, position: Any) -> dict[str, Any]:
    """The :class:`InputError` keywords naming the row at 0-based ``position`` of a pandas
    DataFrame or Series ``data`` by its index label (the error's ``row`` is then that
    label), or of an array by its position, so that every package names a row of a
    DataFrame one way.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [30, None]}, index=[10, 0])
    >>> str(InputError("missing value", column="age", **at_row(df, 1)))
    "missing value (column 'age', row with index label 0)"
    >>> str(InputError("missing value", **at_row([1, None], 1)))
    'missing value (row 1)'
    """
    position = int(position)
    index = getattr(data, "index", None)
    if index is None or callable(index) or not 0 <= position < len(index):  # no DataFrame
        return {"row": position}
    label = index[position]
    if hasattr(label, "item") and not isinstance(label, str):  # a numpy scalar: plain
        label = label.item()
    return {"label": label}


def respelled(exc: InputError, python: str, option: str) -> InputError:
    """``exc`` with the Python spelling ``python`` in its message replaced by the command
    line's ``option`` (a command names its options, not Python's); everything else kept.

    Examples
    --------
    >>> str(respelled(InputError("pass on_bad_lines='drop'", line=3),
    ...               "on_bad_lines='drop'", "--on-bad-lines drop"))
    'pass --on-bad-lines drop (line 3)'
    """
    if python in exc.message:
        exc.message = exc.message.replace(python, option)
        exc.args = (str(exc.args[0]).replace(python, option), *exc.args[1:])
    return exc


def pass_row(exc: InputError) -> dict[str, Any]:
    """The row keywords of ``exc`` to raise it again: its index label or its position."""
    return {"label": exc.row} if exc.labelled else {"row": exc.row}


@contextmanager
def labels_of(index: Any) -> Iterator[None]:
    """Inside, a table whose index was reset (labels 0, 1, ...): an error naming one of its
    rows by label is raised again naming the caller's row, by its label in ``index``.

    Examples
    --------
    >>> with labels_of(["a", "b"]):
    ...     raise InputError("missing value", label=1)
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: missing value (row with index label 'b')
    """
    try:
        yield
    except InputError as exc:
        row = exc.row
        if not exc.labelled or not isinstance(row, int) or not 0 <= row < len(index):
            raise
        where = at_row(_Rows(index), row)
        raise InputError(
            exc.message,
            column=exc.column,
            line=exc.line,
            value=exc.value,
            node=exc.node,
            path=exc.path,
            **where,
        ) from None


class _Rows:
    """An index as :func:`at_row` reads it."""

    def __init__(self, index: Any) -> None:
        self.index = index


class InfeasibleError(StructanonError):
    """No release can satisfy the request (e.g. ``k`` exceeds the number of individuals)."""

    exit_code = 3


class VerificationError(StructanonError):
    """A release failed its privacy model when re-checked from its output alone."""

    exit_code = 4


class PublisherWarning(UserWarning):
    """A warning for the publisher's eyes only, e.g. a requested value the data does not hold.

    The command line prints it on stderr (even with ``--quiet``); no release records it in
    ``info["warnings"]``, so no report, summary or ``to_dict()`` publishes it: its message
    may name what the input holds.
    """
