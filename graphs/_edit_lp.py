"""Linear programs behind the minimal-edit construction (:mod:`graphs._edit`) of k-degree
anonymization (Liu & Terzi, SIGMOD 2008: least symmetric difference).

A deletion between two nodes that must both lose degree serves two units of change for one
edit; a unit no such pair can serve costs a whole edit (a repair with a node that needs
nothing).  So a target degree sequence costs about ``L + G - D - A`` edits (``L`` / ``G``:
units of loss / gain, ``D``: deletions between two losers, ``A``: additions between two
gainers), and the deletions are a b-matching on the edges between losers (capacity: what
each must lose).

:func:`group_values` picks the value of every group of the two-sided DP (any value
between its least and largest degree keeps the group, so the sequence stays k-anonymous)
with that b-matching in the objective, as one sparse LP solved by HiGHS
(:func:`scipy.optimize.linprog`):

    minimize   sum_v c loss_v + c gain_v - (2c - 1) sum_e x_e - (c - 1/2) sum_v m_v
    subject to loss_v >= d_v - T_g(v),  gain_v >= T_g(v) - d_v,
               sum_{e ∋ v} x_e <= loss_v   (e: original edges, x_e in [0, 1]),
               m_v <= gain_v,  2 m_v <= sum_u m_u   (additions pair with other gainers),
               lo_g <= T_g <= hi_g.

With ``c = 1`` a paired unit costs half an edit and an unpaired one a whole edit.  It is a
model (repairs move other nodes between classes, which the model ignores), so its optimum
is neither a bound nor the final count: the construction realizes the rounded values as
one more candidate target and keeps the fewest edits.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

__all__ = ["group_values", "max_bmatching", "sequence_lower_bound"]


def _group_ranges(deg: np.ndarray, target: np.ndarray):
    """Group of every node (nodes sharing a target value) and each group's degree range."""
    _, grp = np.unique(target, return_inverse=True)
    size = int(grp.max()) + 1
    lo = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(size, -1, dtype=np.int64)
    np.minimum.at(lo, grp, deg)
    np.maximum.at(hi, grp, deg)
    return grp, lo, hi


def _rounded(values: np.ndarray, grp: np.ndarray, deg: np.ndarray, lo, hi) -> np.ndarray | None:
    """Every group at its nearest integer value, the degree sum's parity kept (one group of
    odd size moved by one, the one whose LP value is nearest); None if impossible."""
    ti = np.clip(np.rint(values), lo, hi).astype(np.int64)
    if (ti[grp] - deg).sum() % 2 == 0:
        return ti[grp]
    odd = np.flatnonzero(np.bincount(grp) % 2 == 1)
    best = None
    for step in (-1, 1):
        alt = ti[odd] + step
        ok = (alt >= lo[odd]) & (alt <= hi[odd])
        if ok.any():
            dist = np.abs(values[odd] - alt)
            j = int(np.argmin(np.where(ok, dist, np.inf)))
            if best is None or dist[j] < best[0]:
                best = (float(dist[j]), int(odd[j]), int(alt[j]))
    if best is None:
        return None
    ti[best[1]] = best[2]
    return ti[grp]


def group_values(
    n: int, edges: np.ndarray, deg: np.ndarray, target: np.ndarray, unpaired: float = 1.0
) -> tuple[np.ndarray | None, float]:
    """The groups of ``target`` (nodes sharing a value) moved to the values that the
    b-matching model above finds cheapest, rounded with the degree sum's parity kept.

    Parameters
    ----------
    n : int
    edges : array of int, shape (m, 2)
        The original edges, each once.
    deg : array of int, shape (n,)
        The original degrees.
    target : array of int, shape (n,)
        A k-anonymous target (the DP's); its groups are kept, only their values move.
    unpaired : float
        ``c`` above: the cost of a unit no pair serves (a paired unit costs ``1/2``).

    Returns
    -------
    (values, objective)
        The new target (None when unchanged, when the LP fails, or when the parity cannot
        be kept) and the model's optimum.
    """
    grp, lo, hi = _group_ranges(deg, target)
    size = lo.size
    can = deg > lo[grp]
    e = edges[can[edges[:, 0]] & can[edges[:, 1]]]
    m = len(e)
    # variables: T (size) | loss (n) | gain (n) | matched gain (n) | S | x (m)
    o_t, o_l, o_a, o_m, o_s, o_x = 0, size, size + n, size + 2 * n, size + 3 * n, size + 3 * n + 1
    cost = np.concatenate(
        [
            np.zeros(size),
            np.full(n, unpaired),
            np.full(n, unpaired),
            np.full(n, -(unpaired - 0.5)),
            [0.0],
            np.full(m, -(2.0 * unpaired - 1.0)),
        ]
    )
    ar, one, zero = np.arange(n), np.ones(n), np.zeros(n)
    rows = [ar, ar, n + ar, n + ar, 2 * n + e[:, 0], 2 * n + e[:, 1], 2 * n + ar]
    cols = [o_l + ar, o_t + grp, o_a + ar, o_t + grp, o_x + np.arange(m), o_x + np.arange(m)]
    cols.append(o_l + ar)
    data = [-one, -one, -one, one, np.ones(m), np.ones(m), -one]
    rows += [3 * n + ar, 3 * n + ar, 4 * n + ar, 4 * n + ar, np.full(n, 5 * n), [5 * n]]
    cols += [o_m + ar, o_a + ar, o_m + ar, np.full(n, o_s), o_m + ar, [o_s]]
    data += [one, -one, 2 * one, -one, -one, np.ones(1)]
    matrix = sp.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
        shape=(5 * n + 1, o_x + m),
    )
    bound = np.concatenate([-deg, deg, zero, zero, zero, [0.0]]).astype(np.float64)
    box = np.zeros((o_x + m, 2))
    box[:, 1] = np.inf
    box[:size, 0], box[:size, 1] = lo, hi
    box[o_x:, 1] = 1.0
    res = linprog(cost, A_ub=matrix, b_ub=bound, bounds=box, method="highs")
    if res.status != 0:
        return None, float("nan")
    out = _rounded(res.x[:size], grp, deg, lo, hi)
    if out is None or np.array_equal(out, target):
        return None, float(res.fun)
    return out, float(res.fun)


def max_bmatching(n: int, pairs: np.ndarray, capacity: np.ndarray) -> tuple[np.ndarray, float]:
    """LP relaxation of the maximum b-matching on ``pairs`` (``sum_{e ∋ v} x_e <=
    capacity_v``, ``x_e in [0, 1]``): the pairs at 1 in an optimal vertex (the LP of a
    b-matching is half-integral, so the rest is at 0 or 1/2) and the LP optimum (an upper
    bound on any b-matching)."""
    m = len(pairs)
    if m == 0:
        return pairs[:0], 0.0
    matrix = sp.csr_matrix(
        (np.ones(2 * m), (pairs.ravel(), np.repeat(np.arange(m), 2))), shape=(n, m)
    )
    used = np.flatnonzero(np.diff(matrix.indptr))
    res = linprog(
        -np.ones(m),
        A_ub=matrix[used],
        b_ub=capacity[used].astype(np.float64),
        bounds=(0.0, 1.0),
        method="highs",
    )
    if res.status != 0:
        return pairs[:0], float("nan")
    return pairs[res.x > 1.0 - 1e-9], float(-res.fun)


def sequence_lower_bound(n: int, edges: np.ndarray, final: np.ndarray) -> int:
    """Least edits ``|E' xor E|`` of any simple graph on the same nodes whose degrees are
    ``final`` (a lower bound; the edit construction's diagnostic for its own release).

    Let ``Delta = final - d``, ``L`` / ``G`` the total decrease / increase, ``D`` / ``A``
    the deleted / added edges.  Counting edge ends, ``2|A| - 2|D| = G - L``, so

        ``|E' xor E| = 2|D| + (G - L) / 2 = 2|A| - (G - L) / 2``.

    Every node ``v`` with ``Delta_v < 0`` loses at least ``loss_v = -Delta_v`` edges.  Let
    ``F`` be the deleted edges between two such losers.  Dropping, while some node has
    more than ``loss_v`` edges of ``F``, one of them lowers ``|F|`` by one and raises
    ``sum_v (loss_v - deg_F(v))^+`` by at most one, until ``F`` is a b-matching (capacity
    ``loss``) of the original loser-loser edges, of size at most ``M`` (its maximum, here
    the LP bound of :func:`max_bmatching`).  The deletions not in ``F`` each serve at most
    one loser unit, so ``|D| >= |F| + sum_v (loss_v - deg_F(v))^+ >= L - M``, and

        ``|E' xor E| >= 2 (L - M) + (G - L) / 2 = 1/2 sum |Delta| + L - 2 M``.

    The same argument on additions between two gainers (non-edges) gives
    ``1/2 sum |Delta| + G - 2 M_A``, with ``2 M_A <= sum_v min(gain_v, g_v)`` (``g_v``: the
    other gainers not adjacent to ``v``).  The larger of the two, rounded up, is returned.
    It exceeds ``1/2 sum |Delta|`` exactly where losers (gainers) cannot pair: a hub that
    must lose more edges than it has losing neighbours.

    Parameters
    ----------
    n : int
    edges : array of int, shape (m, 2)
        The original edges, each once (``u < v``).
    final : array of int, shape (n,)
        The degrees of the graph sought.

    Examples
    --------
    >>> # the star K_{1,3} with its centre at degree 1: no leaf may lose, so each deletion
    >>> # at the centre costs a second edit (delete 0-1, 0-2, add 1-2: the optimum)
    >>> sequence_lower_bound(4, np.array([[0, 1], [0, 2], [0, 3]]), np.array([1, 1, 1, 1]))
    3
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    final = np.asarray(final, dtype=np.int64)
    deg = np.bincount(edges.ravel(), minlength=n).astype(np.int64)
    delta = final - deg
    lose, gain = np.maximum(-delta, 0), np.maximum(delta, 0)
    half = 0.5 * float(np.abs(delta).sum())
    pairs = edges[(lose[edges[:, 0]] > 0) & (lose[edges[:, 1]] > 0)]
    by_deletions = half + float(lose.sum()) - 2.0 * max_bmatching(n, pairs, lose)[1]
    gainer = gain > 0
    gainer_neighbours = np.bincount(
        edges[gainer[edges[:, 0]] & gainer[edges[:, 1]]].ravel(), minlength=n
    )
    free = int(gainer.sum()) - 1 - gainer_neighbours
    by_additions = half + float(gain.sum()) - float(np.minimum(gain, free)[gainer].sum())
    return max(0, math.ceil(max(by_deletions, by_additions) - 1e-9))
