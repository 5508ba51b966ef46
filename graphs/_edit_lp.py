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

Nodes that are no end of a candidate pair (both ends able to lose) and share a group and a
degree are interchangeable, so their losses are one variable, the class total (``loss_C >=
|C| (d - T_g)``), and so are the gains and matched gains of every class (``2 m_C <= |C|
S``): averaging a solution over each class keeps it feasible at the same cost, so the
optimum is the same.  Nodes that cannot lose (``d_v = lo_g``) or gain (``d_v = hi_g``) have
no such variable.  On ego-Facebook at k = 100 this leaves 3,024 variables besides the
64,501 pairs, and 5,755 rows, instead of 12,157 and 20,196.

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
from scipy.sparse.csgraph import maximum_flow

__all__ = ["bmatching_vertex", "group_values", "max_bmatching", "sequence_lower_bound"]

# cost of a unit of a group's value per member: among values of equal model cost the LP
# takes the lower ones (it shifts the optimum by at most ``_TIE * sum_v hi_g(v)``, 0.2 on
# ego-Facebook)
_TIE = 1e-6


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


def _model(n, edges, deg, grp, lo, hi, unpaired):
    """The LP of :func:`group_values` with the class variables of the module's notes:
    ``(cost, A_ub, b_ub, bounds)``, the group values first."""
    size = lo.size
    can = deg > lo[grp]
    e = edges[can[edges[:, 0]] & can[edges[:, 1]]]
    m = len(e)
    # nodes with a pair (their own loss variable), then classes (group, degree) of the others
    # that can lose and of every node that can gain (one variable for the class's total)
    ends = np.unique(e.ravel())
    single = np.zeros(n, dtype=bool)
    single[ends] = True
    width = int(deg.max(initial=0)) + 1
    losing, l_count = np.unique((grp * width + deg)[~single & can], return_counts=True)
    gaining, g_count = np.unique((grp * width + deg)[deg < hi[grp]], return_counts=True)
    n1, nl, ng = ends.size, losing.size, gaining.size
    # variables: T | loss (ends) | loss (classes) | gain | matched gain | S | x
    o_l = size
    o_c = o_l + n1
    o_a = o_c + nl
    o_m = o_a + ng
    o_s = o_m + ng
    o_x = o_s + 1
    cost = np.zeros(o_x + m)
    cost[:size] = _TIE * np.bincount(grp, minlength=size)
    cost[o_l:o_m] = unpaired
    cost[o_m:o_s] = -(unpaired - 0.5)
    cost[o_x:] = -(2.0 * unpaired - 1.0)
    at = np.full(n, -1, dtype=np.int64)
    at[ends] = np.arange(n1)
    a1, ac, ag, ax = np.arange(n1), np.arange(nl), np.arange(ng), np.arange(m)
    l_cnt, g_cnt = l_count.astype(np.float64), g_count.astype(np.float64)
    one1, onec, oneg, onex = np.ones(n1), np.ones(nl), np.ones(ng), np.ones(m)
    # rows: loss_v >= d_v - T | sum_{e ∋ v} x_e <= loss_v | class loss >= count (d - T) |
    # class gain >= count (T - d) | matched <= gain | 2 matched <= count S | S <= sum matched
    r_x, r_c = n1, 2 * n1
    r_a = r_c + nl
    r_m = r_a + ng
    r_s = r_m + ng
    r_t = r_s + ng
    rows = [a1, a1, r_x + at[e[:, 0]], r_x + at[e[:, 1]], r_x + a1, r_c + ac, r_c + ac]
    cols = [o_l + a1, grp[ends], o_x + ax, o_x + ax, o_l + a1, o_c + ac, losing // width]
    data = [-one1, -one1, onex, onex, -one1, -onec, -l_cnt]
    rows += [r_a + ag, r_a + ag, r_m + ag, r_m + ag, r_s + ag, r_s + ag, np.full(ng, r_t), [r_t]]
    cols += [o_a + ag, gaining // width, o_m + ag, o_a + ag, o_m + ag, np.full(ng, o_s)]
    cols += [o_m + ag, [o_s]]
    data += [-oneg, g_cnt, oneg, -oneg, 2.0 * oneg, -g_cnt, -oneg, np.ones(1)]
    matrix = sp.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
        shape=(r_t + 1, o_x + m),
    )
    bound = np.concatenate(
        [-deg[ends], np.zeros(n1), -l_cnt * (losing % width), g_cnt * (gaining % width)]
    )
    bound = np.concatenate([bound, np.zeros(2 * ng + 1)]).astype(np.float64)
    box = np.zeros((o_x + m, 2))
    box[:, 1] = np.inf
    box[:size, 0], box[:size, 1] = lo, hi
    box[o_x:, 1] = 1.0
    return cost, matrix, bound, box


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
        be kept) and the model's cost at the solution found (its optimum up to the
        tie-break, at most ``_TIE * sum_v hi_g(v)`` above it).
    """
    grp, lo, hi = _group_ranges(deg, target)
    size = lo.size
    cost, matrix, bound, box = _model(n, edges, deg, grp, lo, hi, unpaired)
    res = linprog(cost, A_ub=matrix, b_ub=bound, bounds=box, method="highs")
    if res.status != 0:
        return None, float("nan")
    objective = float(res.fun) - float(cost[:size] @ res.x[:size])
    out = _rounded(res.x[:size], grp, deg, lo, hi)
    if out is None or np.array_equal(out, target):
        return None, objective
    return out, objective


def _ranks(ends: np.ndarray) -> np.ndarray:
    """Occurrence number of every entry of ``ends`` among the equal entries before it."""
    order = np.argsort(ends, kind="stable")
    srt = ends[order]
    starts = np.r_[0, np.flatnonzero(srt[1:] != srt[:-1]) + 1]
    rank_sorted = np.arange(srt.size) - np.repeat(starts, np.diff(np.r_[starts, srt.size]))
    rank = np.empty_like(rank_sorted)
    rank[order] = rank_sorted
    return rank


def _greedy_extension(pairs: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """Which of ``pairs`` (in order) a greedy b-matching with capacities ``residual`` takes:
    rounds in which a pair is taken when it comes, at both ends, before that end's
    remaining capacity is used up by earlier pairs still open (each round takes at least
    the first open pair)."""
    take = np.zeros(len(pairs), dtype=bool)
    residual = residual.copy()
    open_ = np.flatnonzero((residual[pairs[:, 0]] > 0) & (residual[pairs[:, 1]] > 0))
    while open_.size:
        ends = pairs[open_]
        rank = _ranks(ends.ravel()).reshape(-1, 2)
        ok = (rank[:, 0] < residual[ends[:, 0]]) & (rank[:, 1] < residual[ends[:, 1]])
        take[open_[ok]] = True
        np.subtract.at(residual, ends[ok].ravel(), 1)
        open_ = open_[~ok]
        open_ = open_[(residual[pairs[open_, 0]] > 0) & (residual[pairs[open_, 1]] > 0)]
    return take


def max_bmatching(n: int, pairs: np.ndarray, capacity: np.ndarray) -> tuple[np.ndarray, float]:
    """The LP relaxation of the maximum b-matching on ``pairs`` (``sum_{e ∋ v} x_e <=
    capacity_v``, ``x_e in [0, 1]``): its optimum (an upper bound on any b-matching) and an
    integral b-matching built from an optimal solution.

    The LP is a maximum flow on the bipartite double cover: source ``-> v'`` (capacity
    ``capacity_v``), ``u' -> v''`` and ``v' -> u''`` for every pair (capacity 1), ``v'' ->``
    sink (``capacity_v``).  A solution ``x`` gives the flow ``x_e`` on both arcs of ``e``
    (value ``2 sum x``); a flow ``f`` gives ``x_e = (f(u'v'') + f(v'u''))/2``, feasible
    (node ``v`` carries at most ``capacity_v`` out of ``v'`` and into ``v''``) of value
    ``|f| / 2``.  So the LP optimum is half the maximum flow, and an integral maximum flow
    (:func:`scipy.sparse.csgraph.maximum_flow`) gives an optimal ``x`` in ``{0, 1/2, 1}``.
    The pairs at 1 are a b-matching; the pairs at 1/2 are added greedily (in the given
    order) within the capacity they leave."""
    m = len(pairs)
    if m == 0:
        return pairs[:0], 0.0
    used, inverse = np.unique(pairs.ravel(), return_inverse=True)
    u, v = inverse.reshape(-1, 2).T
    r = used.size
    source, sink = 2 * r, 2 * r + 1
    ar = np.arange(r)
    cap = capacity[used].astype(np.int32)
    network = sp.csr_matrix(
        (
            np.concatenate([cap, np.ones(2 * m, dtype=np.int32), cap]),
            (
                np.concatenate([np.full(r, source), u, v, r + ar]),
                np.concatenate([ar, r + v, r + u, np.full(r, sink)]),
            ),
        ),
        shape=(2 * r + 2, 2 * r + 2),
    )
    result = maximum_flow(network, source, sink, method="dinic")
    flow = result.flow
    both = np.asarray(flow[u, r + v]).ravel() + np.asarray(flow[v, r + u]).ravel()
    full = both == 2
    residual = cap - np.bincount(np.concatenate([u[full], v[full]]), minlength=r)
    half = np.flatnonzero(both == 1)
    extra = half[_greedy_extension(inverse.reshape(-1, 2)[half], residual)]
    take = full
    take[extra] = True
    return pairs[take], result.flow_value / 2.0


def bmatching_vertex(n: int, pairs: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """The pairs at 1 in the optimal vertex HiGHS finds for the b-matching LP of
    :func:`max_bmatching` (a b-matching: the LP is half-integral, the rest is at 0 or 1/2).

    The LP has many optima; which one is deleted first changes the realization of
    :func:`graphs._edit._polish` by up to about 1% of its edits either way (ego-Facebook at
    k = 100, nodes in the file's order: 5,041 edits from this vertex, 5,079 from the
    b-matching of :func:`max_bmatching`'s flow, 5,040-5,044 with that flow's half pairs
    taken in three random orders).  The construction keeps this one, so its releases stay
    those it was measured with."""
    m = len(pairs)
    if m == 0:
        return pairs[:0]
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
        return pairs[:0]
    return pairs[res.x > 1.0 - 1e-9]


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
