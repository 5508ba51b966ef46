"""Verification of a published log from its content alone."""

from __future__ import annotations

import numpy as np
import pandas as pd

from structanon import CheckResult, Partition
from structanon.errors import InputError
from structanon.models import KAnonymity

__all__ = ["user_signatures", "verify_log"]


def user_signatures(data: pd.DataFrame, columns: tuple[str, ...] = ("query",)) -> pd.Series:
    """Each published user's multiset of rows over ``columns``, as a hashable signature.

    Returns
    -------
    pandas.Series
        Indexed by user; equal values mean equal multisets.

    Examples
    --------
    >>> d = pd.DataFrame({"user": ["a", "a", "b", "b", "c"], "query": ["x", "y", "y", "x", "x"]})
    >>> s = user_signatures(d)
    >>> bool(s["a"] == s["b"]), bool(s["a"] == s["c"])
    (True, False)
    """
    missing = [c for c in ("user", *columns) if c not in data.columns]
    if missing:
        raise InputError("published log lacks a column", column=missing[0])
    if len(data) == 0:
        return pd.Series([], dtype=object)
    codes = data.groupby(list(columns), sort=False, dropna=False).ngroup().to_numpy()
    users, user_codes = np.unique(data["user"].astype(str).to_numpy(), return_inverse=True)
    order = np.lexsort((codes, user_codes))
    sorted_codes = codes[order].astype(np.int64)
    bounds = np.flatnonzero(np.diff(user_codes[order])) + 1
    pieces = np.split(sorted_codes, bounds)
    return pd.Series([piece.tobytes() for piece in pieces], index=users, dtype=object)


def verify_log(data: pd.DataFrame, k: int) -> list[CheckResult]:
    """Check that every published user shares the published log of at least ``k - 1`` others.

    Parameters
    ----------
    data : DataFrame
        The published log: ``user`` and ``query`` columns, and ``time`` / ``url`` if present.
    k : int

    Returns
    -------
    list of CheckResult
        Users grouped by identical query multisets (the issue's model) and, stronger,
        by identical multisets of whole rows (query, time, url): every group must hold at
        least ``k`` users.

    Examples
    --------
    >>> d = pd.DataFrame({"user": ["a", "b", "c"], "query": ["x", "x", "y"]})
    >>> [c.passed for c in verify_log(d, 2)]
    [False, False]
    """
    model = KAnonymity(k)
    row_columns = tuple(c for c in ("query", "time", "url") if c in data.columns)
    results = []
    for name, columns in (("query multisets", ("query",)), ("published rows", row_columns)):
        signatures = user_signatures(data, columns)
        partition = Partition.from_keys(signatures.to_numpy().reshape(-1, 1)) if len(
            signatures) else Partition(np.zeros(0, dtype=np.int64))
        check = model.check(partition)
        check.model = f"user {model.describe()} by {name}"
        check.details = {"published_users": int(len(signatures)),
                         "columns": list(columns)}
        results.append(check)
    return results
