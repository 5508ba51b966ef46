"""Exception classes shared by every structanon package.

Every error raised on purpose derives from :class:`StructanonError`.  Bad input is an
:class:`InputError` (also a :class:`ValueError`) that names where the fault is; a request
that no release can satisfy (``k`` larger than the population, say) is an
:class:`InfeasibleError`; a release whose output fails its own privacy model is a
:class:`VerificationError`.  All are raised before any output is written.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "StructanonError",
    "InputError",
    "InfeasibleError",
    "VerificationError",
    "PublisherWarning",
]


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
    ) -> None:
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
        if row is not None:
            where.append(f"row {row}")
        if node is not None:
            where.append(f"node {node!r}")
        if value is not None:
            where.append(f"value {value!r}")
        self.message = message
        super().__init__(message + (f" ({', '.join(where)})" if where else ""))


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
