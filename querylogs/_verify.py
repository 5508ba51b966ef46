"""User k-anonymity of a published log, and its verification from the log alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from structanon import CheckResult, Partition
from structanon._engine import is_dask
from structanon._validation import check_columns, check_int
from structanon.errors import InputError
from structanon.models import KAnonymity

__all__ = ["UserKAnonymity", "user_signatures", "verify_log"]


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
    if is_dask(data):  # a lazy release: digests of the rows, partition by partition
        from ._dask import dask_user_signatures

        missing = [c for c in ("user", *columns) if c not in data.columns]
        if missing:
            raise InputError("published log lacks a column", column=missing[0])
        return dask_user_signatures(data, columns)[0]
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"expected a published log (a DataFrame), got {type(data).__name__}")
    check_columns(data, [], what="published log")  # duplicate column names
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


class UserKAnonymity(KAnonymity):
    """User k-anonymity of a published query log (Navarro-Arribas et al. 2012).

    Users are grouped by their published multiset of rows over ``columns`` (by default
    their query multiset); every group must hold at least ``k`` users, so each published
    user shares the whole published log of at least ``k - 1`` others.

    Parameters
    ----------
    k : int
        Minimum number of users holding each published multiset.

    Examples
    --------
    >>> model = UserKAnonymity(2)
    >>> log = pd.DataFrame({"user": ["a", "b", "c", "c"], "query": ["x", "x", "y", "y"]})
    >>> model.check(log).passed
    False
    >>> model.check(log.iloc[:2]).passed, model.to_dict()
    (True, {'model': 'user k-anonymity', 'k': 2})

    Notes
    -----
    Monotone: coarsening published values (times to a longer period) keeps identical
    multisets identical, and removing every published row of a user whose group is too
    small leaves the other groups as they were, so suppression keeps it too.

    References
    ----------
    G. Navarro-Arribas, V. Torra, A. Erola, J. Castellà-Roca. User k-anonymity for privacy
    preserving data mining of query logs. Information Processing & Management 48(3), 2012.
    """

    name = "user k-anonymity"

    def __init__(self, k: int) -> None:  # integral floats (3.0) are accepted as in the CLI
        self.k = check_int(k, "k", min_value=1)

    def check(
        self,
        data: Any,
        sensitive: Any = None,
        reference: Any = None,
        *,
        columns: tuple[str, ...] = ("query",),
    ) -> CheckResult:
        """Check a published log (a DataFrame with ``user`` and ``columns``) or a
        :class:`~structanon.Partition` of its users by identical multisets."""
        if isinstance(data, Partition):
            return super().check(data)
        return self.check_signatures(user_signatures(data, columns), columns)

    def check_signatures(self, signatures: pd.Series, columns: tuple[str, ...]) -> CheckResult:
        """The check of users whose multisets over ``columns`` are ``signatures``."""
        partition = (
            Partition.from_keys(signatures.to_numpy().reshape(-1, 1))
            if len(signatures)
            else Partition(np.zeros(0, dtype=np.int64))
        )
        result = super().check(partition)
        result.details = {"published_users": int(len(signatures)), "columns": list(columns)}
        return result


def verify_log(data: pd.DataFrame, k: int) -> list[CheckResult]:
    """Check that every published user shares the published log of at least ``k - 1`` others.

    Parameters
    ----------
    data : DataFrame or Dask DataFrame
        The published log: ``user`` and ``query`` columns, and ``time`` / ``url`` if present.
        A lazy log (the Dask engine's release, or a published folder read with Dask) is
        checked partition by partition: each user's multiset becomes a digest of its rows'
        content hashes, and a user whose rows lie in several partitions is brought
        together by a shuffle first.
    k : int

    Returns
    -------
    list of CheckResult
        :class:`UserKAnonymity` by identical query multisets (the model) and, stronger,
        by identical multisets of whole rows (query, time, url): every group must hold at
        least ``k`` users.

    Examples
    --------
    >>> d = pd.DataFrame({"user": ["a", "b", "c"], "query": ["x", "x", "y"]})
    >>> [c.passed for c in verify_log(d, 2)]
    [False, False]
    """
    model = UserKAnonymity(k)
    if not isinstance(data, pd.DataFrame) and not is_dask(data):
        raise InputError(f"expected a published log (a DataFrame), got {type(data).__name__}")
    row_columns = tuple(c for c in ("query", "time", "url") if c in data.columns)
    kinds = (("query multisets", ("query",)), ("published rows", row_columns))
    if is_dask(data):  # both signatures in one pass over the lazy log
        from ._dask import dask_user_signatures

        for _name, columns in kinds:
            missing = [c for c in ("user", *columns) if c not in data.columns]
            if missing:
                raise InputError("published log lacks a column", column=missing[0])
        found = dask_user_signatures(data, *[columns for _, columns in kinds])
        checks = [model.check_signatures(sig, cols) for sig, (_, cols) in zip(found, kinds)]
    else:
        checks = [model.check(data, columns=columns) for _, columns in kinds]
    for check, (name, _) in zip(checks, kinds):
        check.model = f"{model.describe()} by {name}"
    return checks
