"""Degree-sequence anonymization (Liu & Terzi 2008): exact dynamic program and greedy."""

from __future__ import annotations

import numpy as np

from structanon._validation import check_choice, check_int
from structanon.errors import InfeasibleError, InputError

__all__ = ["anonymize_degree_sequence", "sequence_cost"]

_METHODS = ("dp", "greedy")


def _validate(degrees, k) -> tuple[np.ndarray, int]:
    k = check_int(k, "k", min_value=1)
    d = np.asarray(degrees)
    if d.ndim != 1:
        raise InputError("parameter 'degrees' must be a one-dimensional sequence")
    if d.size == 0:
        raise InputError("parameter 'degrees' is empty: there is nothing to anonymize")
    if not np.issubdtype(d.dtype, np.integer):
        if (
            not np.issubdtype(d.dtype, np.floating)
            or not np.all(np.isfinite(d))
            or np.any(d != np.round(d))
        ):
            raise InputError("parameter 'degrees' must hold non-negative integers")
    d = d.astype(np.int64)
    if (d < 0).any():
        bad = int(np.flatnonzero(d < 0)[0])
        raise InputError("degrees must be non-negative", row=bad, value=int(d[bad]))
    if k > d.size:
        raise InfeasibleError(
            f"k={k} exceeds the number of nodes ({d.size}): no degree sequence can be {k}-anonymous"
        )
    return d, k


def _group_costs(ds: np.ndarray, prefix: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """Cost of raising ds[start:end] (sorted descending) to ds[start], vectorized."""
    return (ends - starts) * ds[starts] - (prefix[ends] - prefix[starts])


def _dp(ds: np.ndarray, k: int, even: bool) -> tuple[np.ndarray, int]:
    """Start index of every optimal group, in order (``ds`` sorted descending), and the
    least cost of any parity.

    ``best[m, p]`` is the least cost of anonymizing the prefix ``ds[:m]`` with total cost of
    parity ``p``.  The prefix ends with one group ``ds[t:m]`` of size k..2k-1, so ``best[m]``
    only needs ``best[t]`` for ``t <= m - k``: the values for ``m`` in ``[b, b + k)`` depend
    on values below ``b`` alone and are computed together as one (k x k) array.
    """
    n = ds.size
    prefix = np.concatenate(([0], np.cumsum(ds, dtype=np.int64)))
    best = np.full((n + 1, 2), np.inf)
    back = np.full((n + 1, 2), -1, dtype=np.int64)
    best[0, 0] = 0.0
    offsets = np.arange(k, 2 * k)  # group sizes m - t
    for b in range(k, n + 1, k):
        ms = np.arange(b, min(b + k, n + 1))
        ts = ms[:, None] - offsets[None, :]  # (len(ms), k)
        valid = ts >= 0
        tc = np.where(valid, ts, 0)
        cost = _group_costs(ds, prefix, tc, np.broadcast_to(ms[:, None], tc.shape))
        parity = cost & 1
        costf = np.where(valid, cost.astype(np.float64), np.inf)
        for p in (0, 1):
            # previous parity q so that q + parity(cost) == p (mod 2)
            prev = np.where(parity == p, best[tc, 0], best[tc, 1])
            total = prev + costf
            arg = np.argmin(total, axis=1)
            rows = np.arange(ms.size)
            best[ms, p] = total[rows, arg]
            back[ms, p] = tc[rows, arg]
    if even:
        p = 0
        if not np.isfinite(best[n, 0]):
            raise InfeasibleError("no k-anonymous degree sequence with an even sum exists")
    else:
        p = int(np.argmin(best[n]))
    optimum = float(best[n].min())
    starts = []
    m = n
    while m > 0:
        t = int(back[m, p])
        cost = int(_group_costs(ds, prefix, np.array([t]), np.array([m]))[0])
        p = (p - cost) & 1
        starts.append(t)
        m = t
    return np.array(starts[::-1], dtype=np.int64), int(optimum)


def _greedy(ds: np.ndarray, k: int) -> np.ndarray:
    """Group starts of the greedy grouping of Liu & Terzi (2008), section 4.1."""
    n = ds.size
    prefix = np.concatenate(([0], np.cumsum(ds, dtype=np.int64)))
    dl = ds.tolist()
    pl = prefix.tolist()

    def cost(i: int, j: int) -> int:  # raise dl[i:j] to dl[i]
        return (j - i) * dl[i] - (pl[j] - pl[i])

    starts = [0]
    start, pos = 0, k
    while pos < n:
        if n - pos < k:  # the rest cannot form a group of its own
            break
        new_group = cost(pos, pos + k)
        if n - pos - 1 < k:
            merge = cost(start, n) - cost(start, pos)
        else:
            merge = (dl[start] - dl[pos]) + cost(pos + 1, pos + 1 + k)
        if merge > new_group:
            starts.append(pos)
            start, pos = pos, pos + k
        else:
            pos += 1
    return np.array(starts, dtype=np.int64)


def sequence_cost(degrees, target) -> int:
    """L1 distance between a degree sequence and its anonymized version."""
    return int(
        np.abs(np.asarray(target, dtype=np.int64) - np.asarray(degrees, dtype=np.int64)).sum()
    )


def anonymize_degree_sequence(
    degrees, k: int, method: str = "dp", even: bool = False, seed: int | None = None
) -> np.ndarray:
    """Raise degrees as little as possible so each value is shared by at least ``k`` entries.

    Parameters
    ----------
    degrees : array of int, shape (n,)
        The degree of every node, in any order.
    k : int
        Least number of nodes that must share each degree value (``1 <= k <= n``).
    method : {"dp", "greedy"}
        ``"dp"``: the exact dynamic program (minimum L1 increase over groupings of
        consecutive sorted degrees into groups of ``k`` to ``2k - 1`` nodes, O(nk)).
        ``"greedy"``: Liu & Terzi's linear-time greedy grouping.
    even : bool
        Only for ``"dp"``: the least increase whose total is even, as a graph needs
        (the sum of degrees is twice the number of edges).
    seed : int, optional
        Breaks ties between equal degrees (which of them are raised), reproducibly.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        The anonymized degree of every node, aligned with ``degrees``; never lower.

    Raises
    ------
    InputError
        ``k`` not a positive integer, ``method`` unknown, degrees empty or negative.
    InfeasibleError
        ``k`` larger than the number of nodes.

    Examples
    --------
    >>> anonymize_degree_sequence([5, 4, 3, 2, 1, 1], k=2).tolist()
    [5, 5, 3, 3, 1, 1]
    >>> anonymize_degree_sequence([3, 3, 2, 1], k=2, method="greedy").tolist()
    [3, 3, 2, 2]

    Notes
    -----
    With ``d_1 >= ... >= d_n`` and ``I(i, j) = sum_{l=i..j} (d_i - d_l)``, the optimum is

    ``DA(j) = min_{max(k, j-2k+1) <= t <= j-k} DA(t) + I(t+1, j)`` (``DA(j) = I(1, j)``
    for ``j < 2k``).  Restricting groups to fewer than ``2k`` nodes loses nothing, since
    splitting a larger group never costs more.  With ``even=True`` the table is kept per
    parity of the cost.

    References
    ----------
    K. Liu and E. Terzi, "Towards identity anonymization on graphs", SIGMOD 2008.
    """
    check_choice(method, "method", _METHODS)
    if seed is not None:
        seed = check_int(seed, "seed", min_value=0)
    return _anonymize(degrees, k, method, even, seed)[0]


def _anonymize(degrees, k, method: str, even: bool, seed) -> tuple[np.ndarray, int | None]:
    """The anonymized sequence and, for the DP, the least increase of any parity."""
    d, k = _validate(degrees, k)
    rng = np.random.default_rng(seed)
    tie = rng.permutation(d.size)
    order = np.lexsort((tie, -d))  # degree descending, ties in seeded random order
    ds = d[order]
    optimum = None
    if k == 1:
        starts, optimum = np.arange(d.size), 0
        if even and ds.sum() % 2:
            starts, optimum = _dp(ds, 1, even=True)
    elif method == "dp":
        starts, optimum = _dp(ds, k, even)
    else:
        starts = _greedy(ds, k)
    sizes = np.diff(np.append(starts, ds.size))
    targets_sorted = np.repeat(ds[starts], sizes)
    out = np.empty_like(d)
    out[order] = targets_sorted
    return out, optimum


def anonymize_for_graph(degrees, k: int, method: str, seed) -> tuple[np.ndarray, int | None]:
    """Anonymized sequence for graph construction, and the DP's least increase (any parity).

    With the DP the sum is kept even where consecutive groups allow it (a graph's degree
    sum is even); otherwise the odd optimum is returned and construction fixes the parity.
    """
    if method == "dp":
        try:
            return _anonymize(degrees, k, "dp", True, seed)
        except InfeasibleError:
            pass
    return _anonymize(degrees, k, method, False, seed)
