"""Greedy size-constrained grouping of users by shared query mass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from structanon.errors import InfeasibleError, InputError

__all__ = ["greedy_groups", "grouping_cost", "refine_groups"]


def grouping_cost(counts, labels: np.ndarray, tie_break: str = "suppress") -> dict[str, int]:
    """Exact additions, suppressions and kept events of a grouping under median targets.

    Parameters
    ----------
    counts : array or scipy.sparse matrix (n_users, n_queries)
        ``n_u(q)``, the number of events of query ``q`` by user ``u``.
    labels : numpy.ndarray of int (n_users,)
        Group of each user.
    tie_break : {"suppress", "add"}
        Lower or upper median for even group sizes.

    Returns
    -------
    dict
        ``added``, ``suppressed``, ``kept`` (events published for the user who issued
        them) and ``published`` (rows of the release).

    Examples
    --------
    >>> grouping_cost(np.array([[2, 1], [1, 0], [3, 0]]), np.array([0, 0, 0]))
    {'added': 1, 'suppressed': 2, 'kept': 5, 'published': 6}
    """
    from ._multisets import group_targets

    matrix = sp.coo_matrix(counts)
    labels = np.asarray(labels, dtype=np.int64)
    n_q = max(matrix.shape[1], 1)
    user = np.repeat(matrix.row.astype(np.int64), matrix.data.astype(np.int64))
    query = np.repeat(matrix.col.astype(np.int64), matrix.data.astype(np.int64))
    blocks = group_targets(labels, user, query, n_q, tie_break)
    sizes = np.bincount(labels)
    keys = blocks["group"] * n_q + blocks["query"]
    target = blocks["target"]
    own_key = labels[matrix.row] * n_q + matrix.col
    pos = np.searchsorted(keys, own_key)
    own_target = target[pos] if keys.size else np.zeros(own_key.size, dtype=np.int64)
    n = matrix.data.astype(np.int64)
    kept = int(np.minimum(n, own_target).sum())
    suppressed = int(np.maximum(n - own_target, 0).sum())
    published = int((target * sizes[blocks["group"]]).sum())
    return {"added": published - kept, "suppressed": suppressed, "kept": kept,
            "published": published}


class _Columns:
    """Column access to the rows still unassigned, rebuilt when half of them are gone."""

    def __init__(self, matrix: sp.csr_matrix) -> None:
        self.full = matrix
        self.rows = np.arange(matrix.shape[0])
        self.csc = matrix.tocsc()

    def compact(self, alive: np.ndarray) -> None:
        self.rows = np.flatnonzero(alive)
        self.csc = self.full[self.rows].tocsc()

    def overlap(self, cols: np.ndarray, vals: np.ndarray, n: int) -> np.ndarray:
        """``sum_q min(n_v(q), p(q))`` over the columns ``cols`` with values ``vals``."""
        csc = self.csc
        start, stop = csc.indptr[cols], csc.indptr[cols + 1]
        lengths = stop - start
        total = int(lengths.sum())
        score = np.zeros(n)
        if total == 0:
            return score
        offsets = np.repeat(start - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
        index = np.arange(total) + offsets
        weights = np.minimum(csc.data[index], np.repeat(vals, lengths))
        score += np.bincount(self.rows[csc.indices[index]], weights=weights, minlength=n)
        return score


def _profile(matrix: sp.csr_matrix, members: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Mean count vector of ``members`` as (columns, values)."""
    rows = matrix[members]
    summed = sp.csr_matrix(rows.sum(axis=0))
    return summed.indices, summed.data / len(members)


def greedy_groups(counts, k: int, progress: Callable[[int], Any] | None = None) -> np.ndarray:
    """Group users into clusters of ``k`` to ``2k - 1`` that share many queries.

    Parameters
    ----------
    counts : array or scipy.sparse matrix (n_users, n_queries)
        ``n_u(q)``, the number of events of query ``q`` by user ``u`` (non-negative).
    k : int
        Minimum group size.
    progress : callable, optional
        Called with the number of users each step assigns.

    Returns
    -------
    numpy.ndarray of int (n_users,)
        Group label of each user; every group has between ``k`` and ``2k - 1`` members.

    Raises
    ------
    InputError
        ``k`` not a positive integer, or negative counts.
    InfeasibleError
        Fewer than ``k`` users.

    Examples
    --------
    >>> x = np.array([[3, 0, 0], [0, 2, 0], [3, 0, 1], [0, 2, 2], [0, 0, 1]])
    >>> greedy_groups(x, 2).tolist()
    [0, 1, 0, 1, 1]

    Notes
    -----
    A group ``G`` publishes every query ``q`` ``median_{u in G} n_u(q)`` times, so it
    keeps about ``|G| sum_q median`` of its members' events.  Seeds are taken in
    decreasing order of the mass ``max_v sum_q min(n_u(q), n_v(q))`` they share with
    their best partner (then of their number of events), so the strongest pairs are
    formed first.  A seed's group grows one user at a
    time: the user ``v`` maximizing the shared mass ``sum_q min(n_v(q), p(q))`` with the
    mean profile ``p`` of the members so far (for ``k = 2`` exactly the events the pair
    keeps, ``2 sum_q min(n_u(q), n_v(q))``, so this is a greedy maximum-weight pairing).
    Only users sharing a query with the group score above zero; the scores are one
    pass over the group's query columns of the sparse user x query matrix.  A seed
    sharing no query with any unassigned user is set aside; the set-aside users are
    grouped among themselves in order.  The last fewer than ``k`` users each join the
    group (below ``2k - 1`` members) whose mean profile they share most with.
    Deterministic: ties go to the smallest user index.
    """
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise InputError("k must be a positive integer", value=k)
    k = int(k)
    matrix = sp.csr_matrix(counts if sp.issparse(counts) else np.asarray(counts, float),
                           dtype=np.float64)
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    if matrix.data.size and matrix.data.min() < 0:
        raise InputError("counts must be non-negative", value=float(matrix.data.min()))
    n = matrix.shape[0]
    if n < k:
        raise InfeasibleError(f"k={k} exceeds the number of users ({n})")
    labels = np.full(n, -1, dtype=np.int64)
    totals = np.asarray(matrix.sum(axis=1)).ravel()
    columns = _Columns(matrix)
    # seeds in decreasing order of the mass they share with their best partner
    best_pair = np.zeros(n)
    for user in range(n):
        row = slice(matrix.indptr[user], matrix.indptr[user + 1])
        shared = columns.overlap(matrix.indices[row], matrix.data[row], n)
        shared[user] = 0.0
        best_pair[user] = shared.max()
    seeds = np.lexsort((np.arange(n), -totals, -best_pair))
    alive = np.ones(n, dtype=bool)
    n_alive = n
    set_aside: list[int] = []
    group = 0
    for seed in seeds:
        if n_alive < k:
            break
        if not alive[seed]:
            continue
        if 2 * n_alive < columns.rows.size:
            columns.compact(alive)
        alive[seed] = False
        members = [int(seed)]
        cols, vals = matrix[seed].indices, matrix[seed].data
        while len(members) < k:
            score = columns.overlap(cols, vals, n)
            score[~alive] = -1.0
            best = int(np.argmax(score))
            if score[best] <= 0.0:
                if len(members) == 1:
                    break
                # nobody else shares a query: fill with the users with the fewest events
                rest = np.flatnonzero(alive)
                fill = rest[np.lexsort((rest, totals[rest]))[: k - len(members)]]
                members.extend(int(u) for u in fill)
                alive[fill] = False
                break
            members.append(best)
            alive[best] = False
            cols, vals = _profile(matrix, members)
        if len(members) < k:
            set_aside.extend(members)
            n_alive -= len(members)
            continue
        labels[members] = group
        group += 1
        n_alive -= k
        if progress is not None:
            progress(k)
    rest = set_aside + [int(u) for u in np.flatnonzero(alive)]
    while len(rest) >= k:
        labels[rest[:k]] = group
        group += 1
        rest = rest[k:]
        if progress is not None:
            progress(k)
    if rest:
        sizes = np.bincount(labels[labels >= 0], minlength=group)
        # mean profiles of all groups, to place the last users where they share most
        assigned = np.flatnonzero(labels >= 0)
        member_of = sp.csr_matrix((1.0 / sizes[labels[assigned]], (labels[assigned], assigned)),
                                  shape=(group, n))
        means = (member_of @ matrix).tocsr()
        for user in rest:
            row = matrix[user]
            shared = means[:, row.indices].minimum(
                sp.csr_matrix(np.broadcast_to(row.data, (group, row.data.size)))).sum(axis=1)
            shared = np.asarray(shared).ravel() if row.data.size else np.zeros(group)
            shared[sizes >= 2 * k - 1] = -1.0
            best = int(np.argmax(shared))
            labels[user] = best
            sizes[best] += 1
        if progress is not None:
            progress(len(rest))
    return labels


def _group_cost(matrix: sp.csr_matrix, members: list[int]) -> float:
    """``sum_q sum_{u in G} |n_u(q) - median|`` of one group (any median gives the same)."""
    rows = matrix[members]
    if rows.nnz == 0:
        return 0.0
    dense = rows[:, np.unique(rows.indices)].toarray()
    median = np.sort(dense, axis=0)[(len(members) - 1) // 2]
    return float(np.abs(dense - median).sum())


def refine_groups(counts, labels: np.ndarray, k: int, passes: int = 1,
                  candidates: int = 3) -> np.ndarray:
    """Improve a grouping by moves and swaps of users that lower additions + suppressions.

    Parameters
    ----------
    counts : array or scipy.sparse matrix (n_users, n_queries)
        ``n_u(q)``, the number of events of query ``q`` by user ``u`` (non-negative).
    labels : numpy.ndarray of int (n_users,)
        A grouping with every group of ``k`` to ``2k - 1`` members (or of at least ``k``).
    k : int
        Minimum group size, kept by every move.
    passes : int
        Number of passes over the users.
    candidates : int
        Number of other groups tried per user: those holding the most users that share a
        query with it.

    Returns
    -------
    numpy.ndarray of int (n_users,)
        The new labels; the total cost never increases and group sizes stay within
        ``k .. max(2k - 1, largest input group)``.

    Raises
    ------
    InputError
        Bad ``labels``, ``k`` or ``passes``.

    Examples
    --------
    >>> x = np.array([[2, 0], [0, 2], [2, 0], [0, 2]])
    >>> refine_groups(x, np.array([0, 0, 1, 1]), 2).tolist()
    [1, 0, 1, 0]

    Notes
    -----
    The cost of a group ``G`` is ``sum_q sum_{u in G} |n_u(q) - median_G(q)|``, the
    additions plus suppressions its median multiset needs.  For each user ``u`` in group
    ``A`` and each candidate group ``B``, the best of moving ``u`` to ``B`` (when sizes
    allow) and swapping ``u`` with a member ``v`` of ``B`` is applied if it lowers
    ``cost(A) + cost(B)``.  Deterministic (users in index order, first best move kept).
    """
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise InputError("k must be a positive integer", value=k)
    if isinstance(passes, bool) or int(passes) != passes or passes < 0:
        raise InputError("passes must be a non-negative integer", value=passes)
    k = int(k)
    matrix = sp.csr_matrix(counts if sp.issparse(counts) else np.asarray(counts, float),
                           dtype=np.float64)
    labels = np.array(labels, dtype=np.int64)
    n = matrix.shape[0]
    if labels.shape != (n,) or (n and labels.min() < 0):
        raise InputError("labels must give a group >= 0 for every row", value=labels.shape)
    if n == 0:
        return labels
    sizes = np.bincount(labels)
    if sizes[sizes > 0].min() < k:
        raise InputError("every group of labels must have at least k members", value=k)
    cap = max(2 * k - 1, int(sizes.max()))
    groups = {int(g): [int(u) for u in np.flatnonzero(labels == g)] for g in np.unique(labels)}
    cost = {g: _group_cost(matrix, members) for g, members in groups.items()}
    binary = matrix.copy()
    binary.data[:] = 1.0
    binary_csc = binary.tocsc()
    for _ in range(int(passes)):
        changed = False
        for u in range(n):
            start, stop = matrix.indptr[u], matrix.indptr[u + 1]
            if start == stop:
                continue
            shared = np.asarray(binary_csc[:, matrix.indices[start:stop]].sum(axis=1)).ravel()
            shared[u] = 0.0
            a = int(labels[u])
            per_group = np.bincount(labels, weights=shared, minlength=sizes.size)
            per_group[a] = 0.0
            order = np.lexsort((np.arange(per_group.size), -per_group))[:candidates]
            rest_a = [x for x in groups[a] if x != u]
            best, move = -1e-9, None
            for b in (int(g) for g in order if per_group[g] > 0):
                members_b = groups[b]
                base = cost[a] + cost[b]
                if len(groups[a]) > k and len(members_b) < cap:
                    delta = (_group_cost(matrix, rest_a)
                             + _group_cost(matrix, members_b + [u]) - base)
                    if delta < best:
                        best, move = delta, (b, None)
                for v in members_b:
                    delta = (_group_cost(matrix, rest_a + [v])
                             + _group_cost(matrix, [x for x in members_b if x != v] + [u])
                             - base)
                    if delta < best:
                        best, move = delta, (b, v)
            if move is None:
                continue
            b, v = move
            groups[a] = rest_a + ([v] if v is not None else [])
            groups[b] = [x for x in groups[b] if x != v] + [u]
            labels[u] = b
            if v is not None:
                labels[v] = a
            sizes = np.bincount(labels, minlength=sizes.size)
            cost[a], cost[b] = _group_cost(matrix, groups[a]), _group_cost(matrix, groups[b])
            changed = True
        if not changed:
            break
    return labels
