"""Re-identification risk of search logs from the queries a person is known to have typed.

An adversary who knows some of a person's queries (AOL user 4417749 was found from a
handful) looks for the users whose log contains them all; the person is identified when
exactly one user matches.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import scipy.sparse as sp

from structanon._validation import check_columns, check_int
from structanon.partition import encode_values

__all__ = [
    "query_set_uniqueness",
    "random_query_uniqueness",
    "linkage_reidentification",
    "risk_report",
]

_CHUNK = 2048


def _user_query_matrix(log: pd.DataFrame, vocabulary: pd.Index | None = None):
    check_columns(log, ("user", "query"), what="log")
    user_codes, users = encode_values(log["user"].astype(str))
    users = np.asarray(users, dtype=object)
    queries = log["query"].astype(str)
    if vocabulary is None:
        query_codes, uniques = pd.factorize(queries)
        vocabulary = pd.Index(uniques)
    else:
        query_codes = vocabulary.get_indexer(pd.Index(queries))
    keep = query_codes >= 0
    matrix = sp.csr_matrix(
        (
            np.ones(int(keep.sum()), dtype=np.int32),
            (user_codes.reshape(-1)[keep], query_codes[keep]),
        ),
        shape=(users.size, vocabulary.size),
    )
    matrix.sum_duplicates()
    matrix.data[:] = 1
    matrix.sort_indices()
    return matrix, users, vocabulary


def query_set_uniqueness(log: pd.DataFrame) -> float:
    """Share of users whose set of distinct queries no other user has.

    Examples
    --------
    >>> log = pd.DataFrame({"user": ["a", "b", "c"], "query": ["x", "x", "y"]})
    >>> query_set_uniqueness(log)
    0.3333333333333333
    """
    matrix, users, _ = _user_query_matrix(log)
    return _set_uniqueness(matrix)


def _set_uniqueness(matrix: sp.csr_matrix) -> float:
    if matrix.shape[0] == 0:
        return float("nan")
    keys = [matrix.indices[a:b].tobytes() for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:])]
    counts = pd.Series(keys).map(pd.Series(keys).value_counts())
    return float((counts.to_numpy() == 1).mean())


def _sample_known(matrix: sp.csr_matrix, p: int, rng: np.random.Generator) -> sp.csr_matrix:
    """Keep ``min(p, row size)`` random entries of each row."""
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    order = np.lexsort((rng.random(rows.size), rows))
    start = np.repeat(matrix.indptr[:-1], np.diff(matrix.indptr))
    rank = np.empty(rows.size, dtype=np.int64)
    rank[order] = np.arange(rows.size) - start
    keep = rank < p
    return sp.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.int32), (rows[keep], matrix.indices[keep])),
        shape=matrix.shape,
    )


def _match_counts(known: sp.csr_matrix, target: sp.csr_matrix):
    """For each row of ``known``: number of target rows containing all its entries, and
    the index of one of them."""
    need = np.diff(known.indptr)
    counts = np.zeros(known.shape[0], dtype=np.int64)
    some = np.full(known.shape[0], -1, dtype=np.int64)
    target_t = sp.csr_matrix(target.T, dtype=np.int32)
    for start in range(0, known.shape[0], _CHUNK):
        block = (known[start : start + _CHUNK] @ target_t).tocoo()
        full = block.data == need[start + block.row]
        rows, cols = block.row[full], block.col[full]
        counts[start : start + _CHUNK] = np.bincount(
            rows, minlength=min(_CHUNK, known.shape[0] - start)
        )
        some[start + rows] = cols
    return counts, some, need


def random_query_uniqueness(log: pd.DataFrame, p: int, seed: int | None = 0) -> float:
    """Share of users singled out by ``p`` random distinct queries of theirs.

    Parameters
    ----------
    log : DataFrame
        ``user`` and ``query`` columns.
    p : int
        Known queries per user (all of them for users with fewer than ``p``).
    seed : int or None

    Examples
    --------
    >>> log = pd.DataFrame({"user": ["a", "a", "b", "c"], "query": ["x", "y", "x", "x"]})
    >>> random_query_uniqueness(log, 2, seed=0)
    0.3333333333333333

    Notes
    -----
    User ``u`` is unique when ``|{v : S_u subset Q_v}| = 1`` for its random sample
    ``S_u`` of ``min(p, |Q_u|)`` distinct queries, ``Q_v`` being user ``v``'s query set.
    """
    p = check_int(p, "p", min_value=1)
    matrix, _, _ = _user_query_matrix(log)
    return _random_uniqueness(matrix, int(p), seed)


def _random_uniqueness(matrix: sp.csr_matrix, p: int, seed: int | None) -> float:
    if matrix.shape[0] == 0:
        return float("nan")
    known = _sample_known(matrix, p, np.random.default_rng(seed))
    counts, _, _ = _match_counts(known, matrix)
    return float((counts == 1).mean())


def linkage_reidentification(
    original: pd.DataFrame, published: pd.DataFrame, p: int | None, seed: int | None = 0
) -> float:
    """Share of original users re-identified in the published log from their queries.

    Parameters
    ----------
    original, published : DataFrame
        ``user`` and ``query`` columns; a user of ``original`` has the same name in
        ``published`` (map ids to pseudonyms first).
    p : int or None
        Known queries per user (random, distinct); None: the user's whole query set.
    seed : int or None

    Examples
    --------
    >>> a = pd.DataFrame({"user": ["a", "b"], "query": ["x", "y"]})
    >>> linkage_reidentification(a, a, 1), linkage_reidentification(a, a.iloc[:0], 1)
    (1.0, 0.0)

    Notes
    -----
    User ``u`` is re-identified when exactly one published user's query set contains the
    known queries and that user is ``u``.  Known queries that were suppressed make the
    attack fail (no published user matches).
    """
    if p is not None:
        p = check_int(p, "p", min_value=1)
    before, users, vocabulary = _user_query_matrix(original)
    after, published_users, _ = _user_query_matrix(published, vocabulary)
    return _linkage(before, users, after, published_users, p, seed)


def _linkage(before, users, after, published_users, p, seed) -> float:
    if users.size == 0:
        return float("nan")
    known = before if p is None else _sample_known(before, int(p), np.random.default_rng(seed))
    if published_users.size == 0:
        return 0.0
    counts, some, _ = _match_counts(known, after)
    matched = np.where(counts == 1, published_users[np.maximum(some, 0)], np.array(None))
    return float(np.mean(matched == users))


def risk_report(
    original: pd.DataFrame,
    published: pd.DataFrame,
    ps: Iterable[int] = (1, 3, 5),
    seed: int | None = 0,
) -> dict:
    """Uniqueness before and after, and the linkage attack on the published log.

    ``before``: share of users unique by their whole query set and by ``p`` random
    queries, in the original log.  ``after``: the same within the published log, plus
    ``reidentified_*``: the share of original users the attack links to their own
    pseudonym in the published log.
    """
    ps = [check_int(p, "p", min_value=1) for p in ps]
    # sorted, so the sampled known queries do not depend on the row order of either log
    vocabulary = pd.Index(
        np.unique(pd.concat([original["query"], published["query"]]).astype(str).to_numpy())
    )
    before, users, _ = _user_query_matrix(original, vocabulary)
    after, published_users, _ = _user_query_matrix(published, vocabulary)
    empty = after.shape[0] == 0
    result = {
        "before": {"unique_by_query_set": _set_uniqueness(before)},
        "after": {"unique_by_query_set": 0.0 if empty else _set_uniqueness(after)},
    }
    for p in ps:
        result["before"][f"unique_by_{p}_queries"] = _random_uniqueness(before, int(p), seed)
        result["after"][f"unique_by_{p}_queries"] = (
            0.0 if empty else _random_uniqueness(after, int(p), seed)
        )
    for name, target, target_users in (
        ("before", before, users),
        ("after", after, published_users),
    ):
        result[name]["reidentified_by_query_set"] = _linkage(
            before, users, target, target_users, None, seed
        )
        for p in ps:
            result[name][f"reidentified_by_{p}_queries"] = _linkage(
                before, users, target, target_users, int(p), seed
            )
    return result
