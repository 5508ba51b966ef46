"""Two-sided degree-sequence anonymization (degrees may rise or fall) and lower bounds on
the number of edge edits of any k-degree-anonymous graph.

Degrees are sorted ascending.  An optimal k-anonymous sequence moves consecutive runs of
``k..2k-1`` sorted degrees to one common value each; for L1 cost the best value of a run is
its median (any value between the two middle degrees when the run has even length).  The
exact dynamic program over runs is O(nk), filled ``k`` rows at a time with numpy as in
:mod:`graphs._sequence`.  It also keeps the cheapest sequence of each parity of the total
change (a graph's degree sum is even), letting an odd run take ``median +- 1`` (any value
between the run's smallest and largest degree is allowed).
"""

from __future__ import annotations

import math

import numpy as np

from structanon.errors import InfeasibleError

__all__ = [
    "two_sided_sequence",
    "structural_lower_bound",
    "hub_lower_bound",
    "mover_lower_bound",
]


def _block_costs(ds, prefix, right, left, ts, ms, floor, upper=False):
    """Cost of moving each run ``ds[t:m]`` to its median (raised to ``floor``, the largest
    least-allowed value of its members, when given), that value, and the cost and value of
    the cheapest target of the other parity (inf if none; even runs have none)."""
    s = ms - ts
    mid = ts + (s - 1 + int(upper)) // 2  # the lower (or upper) median
    x = ds[mid]
    if floor is None:
        le = np.minimum(right[mid], ms) - ts  # run members <= x
        ge = ms - np.maximum(left[mid], ts)  # run members >= x
        low, high = ds[ts], ds[ms - 1]
    else:
        x = np.maximum(x, floor)
        le = np.clip(np.searchsorted(ds, x, side="right"), ts, ms) - ts
        ge = ms - np.clip(np.searchsorted(ds, x, side="left"), ts, ms)
        low, high = np.maximum(ds[ts], floor), np.maximum(ds[ms - 1], floor + 1)
    start, total = prefix[ts], prefix[ms] - prefix[ts]
    cost = (le - ge) * x + total - (prefix[ts + le] - start) - (prefix[ms - ge] - start)
    odd = (s & 1) == 1
    up = np.where(odd & (x + 1 <= high), cost + 2 * le - s, np.inf)
    down = np.where(odd & (x - 1 >= low), cost + 2 * ge - s, np.inf)
    alt = np.minimum(up, down)
    alt_x = np.where(up <= down, x + 1, x - 1)
    parity = (s * x - total) & 1
    return cost, parity, x, alt, alt_x


def _reward_costs(ds, prefix, rprefix, at_most, ts, ms):
    """Best cost of each run ``ds[t:m]`` per parity of its change, and the value reaching it,
    when member ``v`` earns ``reward_v`` for falling below its degree: ``cost(T) = sum |T -
    d_v| - sum_{d_v > T} reward_v`` over ``T`` in ``median - 2 .. median + 1`` (a window:
    a heuristic of the construction, not an optimum); ``at_most[v]``: degrees ``<= v``."""
    s = ms - ts
    x = np.maximum(ds[ts + (s - 1) // 2] + np.arange(-2, 2)[:, None, None], 0)
    le = np.minimum(np.maximum(at_most[x], ts), ms) - ts  # members <= x
    ge = ms - np.minimum(np.maximum(at_most[np.maximum(x - 1, 0)] * (x > 0), ts), ms)
    cost = (le * x - (prefix[ts + le] - prefix[ts])) + ((prefix[ms] - prefix[ms - ge]) - ge * x)
    cost = cost - (rprefix[ms] - rprefix[ts + le])  # the members above x fall
    parity = (s * x - (prefix[ms] - prefix[ts])) & 1
    out_cost, out_x = [], []
    for q in (0, 1):
        c = np.where(parity == q, cost, np.inf)
        j = np.argmin(c, axis=0)[None]
        out_cost.append(np.take_along_axis(c, j, 0)[0])
        out_x.append(np.take_along_axis(x, j, 0)[0])
    return out_cost, out_x


def _run_blocks(n: int, k: int):
    """The blocks of the DPs over runs of ``k..2k-1`` consecutive sorted nodes: for each
    block ``b`` of ``k`` run ends ``ms``, the run starts ``tc`` (0 where ``valid`` is
    false), ``mc`` (``ms`` broadcast to ``tc``'s shape) and ``valid`` (start ``>= 0``)."""
    offsets = np.arange(k, 2 * k)
    for b in range(k, n + 1, k):
        ms = np.arange(b, min(b + k, n + 1))
        ts = ms[:, None] - offsets[None, :]
        valid = ts >= 0
        tc = np.where(valid, ts, 0)
        yield b, ms, tc, np.broadcast_to(ms[:, None], tc.shape), valid


def _run_floors(fs: np.ndarray, b: int, k: int, tc: np.ndarray, ms: np.ndarray) -> np.ndarray:
    """``max(fs[t:m])`` for the runs of one block (all ``t < b <= m``)."""
    lo = max(0, b - 2 * k + 1)
    suffix = np.maximum.accumulate(fs[lo:b][::-1])[::-1]  # max(fs[lo + i : b])
    head = np.concatenate(([np.iinfo(np.int64).min], np.maximum.accumulate(fs[b : b + k])))
    return np.maximum(suffix[tc - lo], head[ms - b][:, None])


# entries (runs) whose costs :func:`_batched_costs` computes in one call
_BATCH = 1 << 14


def _batched_costs(ds, k, prefix, right, left, fs, upper):
    """The blocks of :func:`_run_blocks` with their :func:`_block_costs`, computed for
    as many consecutive blocks at once as fit in ``_BATCH`` entries (a run's cost does not
    depend on the block it is read in, only on its start and end): ``ms, tc, valid, cost,
    parity, value, alt cost, alt value`` per block."""
    n = ds.size
    blocks = list(_run_blocks(n, k))
    per = max(1, _BATCH // (k * k))
    for i in range(0, len(blocks), per):
        batch = blocks[i : i + per]
        tc = np.concatenate([blk[2] for blk in batch])
        mc = np.concatenate([blk[1] for blk in batch])[:, None]  # broadcast over starts
        floor = None
        if fs is not None:
            floor = np.concatenate([_run_floors(fs, b, k, t, m) for b, m, t, _, _ in batch])
        costs = _block_costs(ds, prefix, right, left, tc, mc, floor, upper)
        start = 0
        for _, ms, tcb, _, valid in batch:
            rows = slice(start, start + ms.size)
            start += ms.size
            yield (ms, tcb, valid) + tuple(c[rows] for c in costs)


def _dp(
    ds: np.ndarray,
    k: int,
    fs: np.ndarray | None = None,
    upper: bool = False,
    rs: np.ndarray | None = None,
):
    """Tables of the two-sided DP: best cost of each prefix per parity, and back pointers
    (``rs``: the sorted rewards of :func:`_reward_costs`, no floors)."""
    n = ds.size
    prefix = np.concatenate(([0], np.cumsum(ds, dtype=np.int64)))
    if rs is not None:
        return _reward_dp(ds, k, prefix, np.concatenate(([0.0], np.cumsum(rs))))
    right = np.searchsorted(ds, ds, side="right")
    left = np.searchsorted(ds, ds, side="left")
    best = np.full((n + 1, 2), np.inf)
    back_t = np.full((n + 1, 2), -1, dtype=np.int64)
    back_x = np.zeros((n + 1, 2), dtype=np.int64)
    best[0, 0] = 0.0
    for ms, tc, valid, cost, pm, x, alt, alt_x in _batched_costs(
        ds, k, prefix, right, left, fs, upper
    ):
        cmed = np.where(valid, cost.astype(np.float64), np.inf)
        alt = np.where(valid, alt, np.inf)
        rows = np.arange(ms.size)
        # the previous prefix has parity p - parity(cost); the alternative target flips it
        b0, b1 = best[tc, 0], best[tc, 1]
        same = pm == 0
        both = np.empty((ms.size, 2 * k))
        for p, (first, second) in enumerate(((b0, b1), (b1, b0))):
            np.add(np.where(same, first, second), cmed, out=both[:, :k])
            np.add(np.where(same, second, first), alt, out=both[:, k:])
            arg = np.argmin(both, axis=1)
            use_alt = arg >= k
            col = np.where(use_alt, arg - k, arg)
            best[ms, p] = both[rows, arg]
            back_t[ms, p] = tc[rows, col]
            back_x[ms, p] = np.where(use_alt, alt_x[rows, col], x[rows, col])
    return best, back_t, back_x


def _reward_dp(ds: np.ndarray, k: int, prefix: np.ndarray, rprefix: np.ndarray):
    """:func:`_dp` with the run costs of :func:`_reward_costs` (no floors)."""
    n = ds.size
    best = np.full((n + 1, 2), np.inf)
    back_t = np.full((n + 1, 2), -1, dtype=np.int64)
    back_x = np.zeros((n + 1, 2), dtype=np.int64)
    best[0, 0] = 0.0
    at_most = np.searchsorted(ds, np.arange(int(ds[-1]) + 2), side="right")
    for _, ms, tc, mc, valid in _run_blocks(n, k):
        costs, xs = _reward_costs(ds, prefix, rprefix, at_most, tc, mc)
        rows = np.arange(ms.size)
        for p in (0, 1):
            # a run whose change has parity q follows a prefix of parity p - q
            both = np.concatenate(
                [np.where(valid, best[tc, p ^ q] + costs[q], np.inf) for q in (0, 1)], axis=1
            )
            arg = np.argmin(both, axis=1)
            q = arg // k
            col = arg % k
            best[ms, p] = both[rows, arg]
            back_t[ms, p] = tc[rows, col]
            back_x[ms, p] = np.where(q == 1, xs[1][rows, col], xs[0][rows, col])
    return best, back_t, back_x


def two_sided_sequence(
    degrees,
    k: int,
    even: bool = True,
    seed=None,
    floors=None,
    upper: bool = False,
    optimum: bool = True,
    priority=None,
    reward=None,
) -> tuple[np.ndarray, int | None]:
    """Least-L1 k-anonymous degree sequence, degrees moving up or down.

    Parameters
    ----------
    degrees : array of int, shape (n,)
    k : int
        ``1 <= k <= n``.
    even : bool
        Return the cheapest sequence whose sum has the parity of ``sum(degrees)`` plus an
        even change (a graph needs an even degree sum); if no grouping allows it, the
        any-parity optimum is returned.
    seed : int, optional
        Breaks ties between equal degrees (which of them joins which run), reproducibly.
    floors : array of int, shape (n,), optional
        Least allowed target of every node (a cap on how far its degree may fall); each
        run's value is raised to the largest floor of its members.  ``floors = degrees``
        gives the additions-only optimum.
    upper : bool
        Move a run of even length to its upper middle degree instead of the lower one (the
        same L1 cost: more increases, fewer decreases).
    optimum : bool
        Also return ``L1*`` (with ``floors`` it takes a second, unfloored DP); ``False``
        returns ``None`` in its place.
    priority : array of int, shape (n,), optional
        Among equal degrees, nodes of higher priority are sorted first, so they fall into
        the lower of two runs sharing a degree (lose degree, or gain less); the cost is the
        same.  Ties left are broken by ``seed``.
    reward : array of float >= 0, shape (n,), optional
        Each node's reward for falling below its degree (its first unit of loss costs
        ``1 - reward``): a run at value ``T`` costs ``sum |T - d| - sum_{d > T} reward``,
        its value the best of ``median - 2 .. median + 1`` (of each parity).  Not with
        ``floors`` or ``upper``; the result is no longer the least-L1 sequence.

    Returns
    -------
    (target, optimum)
        ``target`` aligned with ``degrees``; ``optimum`` = least ``sum |target - degrees|``
        of any parity without floors (``L1*``; every k-degree-anonymous graph on the same
        nodes differs from the original in at least ``ceil(L1* / 2)`` edges).

    Examples
    --------
    >>> two_sided_sequence([1, 2, 3, 10, 11, 12], 3)[0].tolist()
    [2, 2, 2, 11, 11, 11]
    """
    d = np.asarray(degrees, dtype=np.int64)
    n = d.size
    if k > n:
        raise InfeasibleError(f"k={k} exceeds the number of nodes ({n})")
    if k <= 1:
        return d.copy(), 0
    tie = np.random.default_rng(seed).permutation(n)
    if priority is None:
        order = np.lexsort((tie, d))
    else:
        order = np.lexsort((tie, -np.asarray(priority, dtype=np.int64), d))
    ds = d[order]
    fs = None if floors is None else np.asarray(floors, dtype=np.int64)[order]
    if reward is not None and (floors is not None or upper):
        raise ValueError("reward cannot be combined with floors or upper")
    rs = None if reward is None else np.asarray(reward, dtype=np.float64)[order]
    best, back_t, back_x = _dp(ds, k, fs, upper, rs)
    l1 = None
    if optimum:
        plain = fs is None and rs is None
        l1 = int(best[n].min()) if plain else int(_dp(ds, k)[0][n].min())
    p = 0 if (even and np.isfinite(best[n, 0])) else int(np.argmin(best[n]))
    out_sorted = np.empty(n, dtype=np.int64)
    m = n
    while m > 0:
        t, x = int(back_t[m, p]), int(back_x[m, p])
        out_sorted[t:m] = x
        p = (p - int(np.abs(ds[t:m] - x).sum())) & 1
        m = t
    out = np.empty_like(d)
    out[order] = out_sorted
    return out, l1


def _filler_costs(others, ts, q, w_above, w_below, free):
    """``F[T, r]``: least sum over ``r <= q`` distinct ``others`` of ``w_above * (d - T - free)^+
    + w_below * (T - d - free)^+`` (the cheapest nodes to complete a class at value ``T``)."""
    out = np.zeros((ts.size, q + 1))
    if q == 0 or others.size == 0:
        return out
    pos = np.searchsorted(others, ts)
    idx = pos[:, None] + np.arange(-q, q)[None, :]
    ok = (idx >= 0) & (idx < others.size)
    diff = others[np.clip(idx, 0, others.size - 1)] - ts[:, None]
    cost = w_above * np.maximum(diff - free, 0) + w_below * np.maximum(-diff - free, 0)
    cost = np.sort(np.where(ok, cost, np.inf), axis=1)[:, :q]
    out[:, 1:] = np.cumsum(cost, axis=1)
    out[~np.isfinite(out)] = np.inf
    return out


def _classes_bound(top, others, ts, k, member, filler, free):
    """Least total cost of splitting ``top`` (descending) into consecutive classes, each at
    one value ``T``: ``member = (a, b)`` weighs a member's decrease / increase, ``filler``
    the same for the ``k - size`` other nodes completing the class."""
    s = top.size
    diff = top[None, :] - ts[:, None]
    above = np.concatenate([np.zeros((ts.size, 1)), np.cumsum(np.maximum(diff, 0), axis=1)], 1)
    below = np.concatenate([np.zeros((ts.size, 1)), np.cumsum(np.maximum(-diff, 0), axis=1)], 1)
    fill = _filler_costs(others, ts, k - 1, filler[0], filler[1], free)
    best = np.full(s + 1, np.inf)
    best[0] = 0.0
    for j in range(1, s + 1):  # the last class is top[i:j], for every i at once
        i = np.arange(j)
        need = np.maximum(0, k - (j - i))
        cost = (
            member[0] * (above[:, j, None] - above[:, :j])
            + member[1] * (below[:, j, None] - below[:, :j])
            + fill[:, need]
        )
        best[j] = float((best[:j] + cost.min(axis=0)).min())
    return float(best[s])


#: (lambda, mu) of the direction-aware family, see :func:`structural_lower_bound`
_WEIGHTS = ((0.0, 1.0), (0.0, 0.5))


def structural_lower_bound(degrees, k: int, max_top: int = 24) -> int:
    """A lower bound on the edits of any k-degree-anonymous graph, from its top degrees.

    Let ``S`` be the ``s`` highest-degree nodes, ``Delta`` the final minus the original
    degrees and ``e_v`` the number of edits at ``v`` (``edits = sum e_v / 2``,
    ``e_v >= |Delta_v|``).  Two inequalities hold for every graph:

    * ``edits >= sum_S |Delta_v| - C(s, 2) + sum_{x not in S} (|Delta_x| - s)^+ / 2``: an
      edit at a node of ``S`` either joins two nodes of ``S`` (at most ``C(s, 2)``) or
      reaches a node ``x`` outside, which meets ``a_x <= s`` of them.
    * ``edits >= (U + max(O-, U- - 2C(s, 2)) + max(O+, U+ - 2C(s, 2))) / 2`` with ``U`` the
      change of ``S``, ``U-`` / ``U+`` its decreases / increases and ``O-`` / ``O+`` those
      outside ``S``: a node of ``S`` that must lose degree deletes edges, and an outside
      node absorbing a deletion either loses degree itself or pays two edits for it.
      ``max(a, b) >= lambda a + (1 - lambda) b`` makes it a sum over nodes.

    Over all k-anonymous sequences both are bounded below by splitting ``S`` into classes
    of consecutive degrees (an exchange argument shows sorted classes are optimal), each at
    one value ``T`` and completed to ``k`` members by the cheapest outside nodes (the true
    completions are distinct and cost no less).  The result is the best ``s <= max_top``.
    It exceeds ``ceil(L1* / 2)`` when a few hubs must move far while the nodes around
    them need nothing (ego-Facebook, k <= 50).

    Examples
    --------
    >>> structural_lower_bound([4, 1, 1, 1, 1], 2)  # the star K_{1,4}; exact optimum 3
    2
    """
    ds = np.sort(np.asarray(degrees, dtype=np.int64))[::-1]
    if k <= 1 or ds.size < k:
        return 0
    best = 0.0
    # between consecutive degree values (shifted by `free`) a class's cost is concave in T
    # (linear member costs plus a sum of the smallest of linear filler costs), so its least
    # value is reached at one of them
    values = np.unique(np.concatenate(([0], ds)))
    for s in range(1, min(max_top, ds.size) + 1):
        top, others = ds[:s], np.sort(ds[s:])
        pairs = s * (s - 1) / 2
        shifted = np.unique(np.concatenate([values, values - s, values + s]))
        shifted = shifted[(shifted >= 0) & (shifted <= ds[0])]
        value = _classes_bound(top, others, shifted, k, (1.0, 1.0), (0.5, 0.5), s) - pairs
        for lam, mu in _WEIGHTS:
            member = (1.0 - lam / 2, 1.0 - mu / 2)
            cost = _classes_bound(top, others, values, k, member, (lam / 2, mu / 2), 0)
            value = max(value, cost - (2.0 - lam - mu) * pairs)
        best = max(best, value)
    return max(0, math.ceil(best - 1e-9))


def _sorted_view(ds: np.ndarray, slack: np.ndarray):
    """Degrees ``ds`` sorted ascending (equal degrees: slack 1 first) with their ``slack``
    (0 or 1): ``c = d - slack``, prefix sums of ``d`` and ``c``, and how many ``d`` / ``c``
    are ``<= v`` at index ``v + 2`` (``v = -2 .. max + 2``)."""
    cs = ds - slack
    grid = np.arange(-2, int(ds[-1]) + 3)
    return (
        ds,
        cs,
        np.concatenate(([0], np.cumsum(ds, dtype=np.int64))),
        np.concatenate(([0], np.cumsum(cs, dtype=np.int64))),
        np.searchsorted(ds, grid, side="right"),
        np.searchsorted(cs, grid, side="right"),
    )


def _slack_costs(view, ts, ms, x):
    """``sum psi_v(x - d_v)`` over each run ``[t, m)`` of :func:`_sorted_view` at value ``x``,
    ``psi_v(z) = max(z, -z - slack_v, 0)`` (a fall of ``slack_v`` is free): the members
    with ``d < x`` rise to ``x``, those with ``c = d - slack > x`` fall to ``c``."""
    ds, cs, pd, pc, at_most_d, at_most_c = view
    top = at_most_d.size - 1

    def count(table, v):  # members of the run at or below v in the table's order
        return np.minimum(np.maximum(table[np.minimum(np.maximum(v + 2, 0), top)], ts), ms)

    lo, hi = count(at_most_d, x - 1), count(at_most_c, x)
    return (lo - ts) * x - (pd[lo] - pd[ts]) + (pc[ms] - pc[hi]) - (ms - hi) * x


def _slack_dp(view, k: int) -> np.ndarray:
    """``best[m]``: least ``sum psi_v(t_v - d_v)`` (:func:`_slack_costs`) over the
    k-anonymous sequences of the first ``m`` nodes of ``view`` (``inf`` where ``0 < m <
    k``).

    For ``u`` before ``w`` in the view's order, raising a value costs ``w`` no more than
    ``u`` (``w``'s degree is higher by at least one, or equal with a slack no larger than
    ``u``'s: the cases checked one by one in :func:`hub_lower_bound`), so some optimum
    is sorted and its classes are runs of ``k..2k-1`` nodes.  A run's cost is convex in
    its value ``x``; it does not fall from the lower median ``d_med`` of its degrees on
    (at least half the members rise) and falls up to the lower median ``c_med`` of ``c``
    (more than half fall), so ``x`` in ``c_med .. c_med + 1`` (``d <= c + 1``) is best."""
    n = view[0].size
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    steps = np.arange(0, 2)[:, None, None]
    for _, ms, tc, mc, valid in _run_blocks(n, k):
        med = view[1][tc + (mc - tc - 1) // 2]
        cost = _slack_costs(view, tc, mc, med + steps).min(axis=0)
        best[ms] = np.where(valid, best[tc] + cost, np.inf).min(axis=1)
    return best


def hub_lower_bound(
    n: int, edges, k: int, max_top: int = 24, simple: bool = False, refine: bool = True
) -> int:
    """A lower bound on the edits of any k-degree-anonymous graph that knows who the hubs'
    neighbours are: the nodes a hub's deletions reach lose degree themselves.

    Let ``S`` be the ``s`` highest-degree nodes, every one of a degree above every node
    outside ``S``; ``a_x = |N(x) ∩ S|`` (original edges), ``e_v`` the edits at ``v``,
    ``c_x`` the edits joining ``x`` to ``S``, ``del_h`` / ``add_h`` the deletions /
    additions at ``h``, ``Delta`` the final minus the original degrees.  Then

    * edits touching ``S`` number ``sum_S e_h - (edits inside S) >= sum_S e_h - C(s, 2)``;
    * edits with both ends outside number ``1/2 sum_{x not in S} (e_x - c_x)``, and
      ``e_x - c_x`` (``x``'s edits to other outside nodes) is at least the change they
      make, ``|Delta_x - c_x^add + c_x^del| >= |Delta_x + c_x^del| - c_x^add``;
    * ``0 <= c_x^del <= a_x`` (deletions join original neighbours), so ``|Delta_x +
      c_x^del| >= psi_x(Delta_x) - (a_x - 1)^+`` with ``psi_x(z) = max(z, -z - sigma_x,
      0)``, ``sigma_x = min(a_x, 1)``: a hub's deletion can serve an outside node's fall,
      never its rise;
    * the additions joining ``S`` to outside nodes, ``sum_x c_x^add``, are at most
      ``sum_S add_h``;
    * ``e_h - add_h / 2 = del_h + add_h / 2 >= g(Delta_h)`` with ``g(z) = -z`` for
      ``z <= 0`` (a hub that falls deletes) and ``z / 2`` for ``z > 0``.

    So every graph makes at least

        ``sum_S g(Delta_h) + 1/2 sum_{x not in S} psi_x(Delta_x)
        - C(s, 2) - 1/2 sum_{x not in S} (a_x - 1)^+``

    edits, and the bound is the least of this over k-anonymous sequences ``t``.  Order
    the nodes by degree (equal degrees: ``sigma = 1`` first; ``S`` last).  Raising a value
    ``z -> z + 1`` changes ``psi_x`` by -1 (``z < -sigma_x``), 0 (``-sigma_x <= z < 0``) or
    +1 (``z >= 0``), and ``2 g`` by -2 or +1; for ``u`` before ``w`` and any value, ``w``'s
    change is never above ``u``'s (when it is 0 or +1, ``w``'s change ``z_w`` is ``>=
    -sigma_w``, and ``u``'s is ``z_u >= z_w + 1 >= 0`` when ``d_u < d_w``, ``z_u = z_w``
    with ``sigma_u >= sigma_w`` otherwise).  So uncrossing two nodes never costs more, an
    optimum is sorted, its classes are runs of consecutive nodes, and the class of the top
    ``k`` holds all of ``S`` (``s <= k``).  :func:`_slack_dp` prices the runs outside
    ``S``; the top run is priced at every value.  The result is the best ``s <=
    max_top``: one DP with every outside node at ``sigma = 1`` (weaker, ``psi_x`` can only
    fall) screens every ``s``, and with ``refine`` the best ``s`` is priced exactly (one
    more DP).  ``simple=True`` declares ``edges`` free of
    self-loops and repeats.  It exceeds :func:`structural_lower_bound` and ``ceil(L1* /
    2)`` where a few hubs must lose many edges while the rest of the degrees are far from
    k-anonymous themselves (ego-Facebook, k >= 20).

    Examples
    --------
    >>> # the path 0-1-2-3 at k = 4: every degree must become equal; exact optimum 1
    >>> hub_lower_bound(4, [[0, 1], [1, 2], [2, 3]], 4)
    0
    """
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if k <= 1 or n < k:
        return 0
    if not simple:
        e = e[e[:, 0] != e[:, 1]]
        e = np.unique(np.sort(e, axis=1), axis=0)
    deg = np.bincount(e.ravel(), minlength=n).astype(np.int64)
    order = np.argsort(deg, kind="stable")
    top = min(max_top, k, n - 1)
    in_top = np.zeros(n, dtype=bool)
    in_top[order[n - top :]] = True
    e = e[in_top[e[:, 0]] | in_top[e[:, 1]]]  # the other edges never count
    view = _sorted_view(deg[order], np.ones(n, dtype=np.int64))
    screen = (order, view, _slack_dp(view, k))
    values: dict[int, float] = {}
    for s in range(1, top + 1):
        value = _hub_bound_value(e, deg, k, s, screen)
        if value is not None:
            values[s] = value
    if not values:
        return 0
    if refine:
        best_s = max(values, key=lambda s: values[s])
        values[best_s] = max(values[best_s], _hub_bound_value(e, deg, k, best_s) or 0.0)
    return max(0, math.ceil(max(values.values()) - 1e-9))


def _hub_bound_value(e, deg, k: int, s: int, screen=None) -> float | None:
    """The least of :func:`hub_lower_bound`'s expression over k-anonymous sequences for the
    top ``s`` nodes (``None`` when they do not lie strictly above the others); ``e``: the
    edges, at least those touching the top ``s``.  With ``screen`` = ``(order, view, best)``
    of every node at slack 1 (one DP for every ``s``), the weaker expression where every
    outside node, a hub neighbour or not, may fall by one for free."""
    n = deg.size
    order = np.argsort(deg, kind="stable") if screen is None else screen[0]
    ds = deg[order]
    if ds[n - s] <= ds[n - s - 1]:
        return None
    in_s = np.zeros(n, dtype=bool)
    in_s[order[n - s :]] = True
    ends = in_s[e]
    outside = np.concatenate([e[ends[:, 0] & ~ends[:, 1], 1], e[ends[:, 1] & ~ends[:, 0], 0]])
    a = np.bincount(outside, minlength=n)
    correction = 0.5 * float(np.maximum(a - 1, 0).sum())
    if screen is None:
        slack = np.minimum(a, 1)
        order = np.lexsort((-slack, deg))  # S last: its degrees lie above the others
        view = _sorted_view(deg[order], slack[order])
        best_out = _slack_dp(view, k)
    else:
        view, best_out = screen[1], screen[2]
    values = np.arange(int(ds[-1]) + 2)
    z = values[:, None] - ds[None, n - s :]
    hub_cost = np.where(z <= 0, -z, 0.5 * z).sum(axis=1)
    ts = np.arange(max(0, n - 2 * k + 1), n - k + 1)  # the top run is [t, n)
    ts = ts[np.isfinite(best_out[ts])]
    if not ts.size:
        return None
    tt = np.broadcast_to(ts[:, None], (ts.size, values.size))
    rest = _slack_costs(view, tt, np.full_like(tt, n - s), values[None, :])
    top = (0.5 * rest + hub_cost[None, :]).min(axis=1)
    return float((0.5 * best_out[ts] + top).min()) - s * (s - 1) / 2 - correction


def _mover_run_costs(ds, ts, ms, b: int, thetas, prefix, at_most):
    """Least ``sum g(|T - d|)`` over integer ``T`` of every run ``ds[t:m]`` (``t``, ``m``:
    arrays of one shape), for every ``theta`` (axis 0); ``prefix``: prefix sums of ``ds``,
    ``at_most``: :func:`_count_table` of ``ds``.  ``g(delta) = a1 (delta - c1)^+ + a2
    (delta - c2)^+`` (``1/2, b`` and ``1/2, 2 theta - b`` for ``theta >= b``, ``1, theta``
    otherwise), so a run's sum is a few prefix sums.  It is convex in ``T`` and least
    between the run's smallest and largest degree: a binary search on the sign of
    ``f(T + 1) - f(T)``, over the runs not yet settled only."""
    shape = (thetas.size,) + ts.shape
    th = np.broadcast_to(thetas.reshape((-1,) + (1,) * ts.ndim), shape).ravel()
    t = np.broadcast_to(ts, shape).ravel()
    m = np.broadcast_to(ms, shape).ravel()
    high = th >= b
    a1, c1 = np.where(high, 0.5, 1.0), np.where(high, float(b), th)
    a2, c2 = np.where(high, 0.5, 0.0), np.where(high, 2 * th - b, 0.0)
    base, table = at_most

    def count_le(y):  # members of ds <= y (y real)
        return table[np.clip(np.floor(y).astype(np.int64) - base, 0, table.size - 1)]

    def hinge(x, c, t, m):  # sum over the run of (|x - d| - c)^+
        cut = np.clip(count_le(x - c), t, m)
        below = (cut - t) * (x - c) - (prefix[cut] - prefix[t])
        cut = np.clip(count_le(np.ceil(x + c) - 1), t, m)  # members < x + c
        above = (prefix[m] - prefix[cut]) - (m - cut) * (x + c)
        return below + above

    def f(x, i):
        return a1[i] * hinge(x, c1[i], t[i], m[i]) + a2[i] * hinge(x, c2[i], t[i], m[i])

    lo = ds[t].astype(np.int64)
    hi = ds[np.maximum(m - 1, t)].astype(np.int64)
    active = np.flatnonzero(lo < hi)
    while active.size:
        low, top = lo[active], hi[active]
        mid = (low + top) // 2
        rising = f(mid + 1, active) >= f(mid, active)
        hi[active] = np.where(rising, mid, top)
        lo[active] = np.where(rising, low, mid + 1)
        active = active[lo[active] < hi[active]]
    return f(lo, slice(None)).reshape(shape)


def _count_table(ds: np.ndarray, span: float) -> tuple[int, np.ndarray]:
    """``(base, table)``: ``table[v - base]`` = members of the ascending ``ds`` ``<= v``,
    for every integer ``v`` within ``span`` of ``ds`` (indices clipped beyond)."""
    reach = int(math.ceil(span)) + 1
    base = int(ds[0]) - reach
    values = np.arange(base, int(ds[-1]) + reach + 1)
    return base, np.searchsorted(ds, values, side="right")


def _mover_dp(ds: np.ndarray, k: int, b: int, thetas: np.ndarray, partial: bool) -> np.ndarray:
    """``h(theta)``: least ``sum_v g(|t_v - d_v|)`` over the k-anonymous sequences of the
    ascending degrees ``ds``, for every ``theta`` at once.  ``partial``: ``ds`` is the top
    of a longer sequence; its lowest run may then have any size (the nodes below that would
    complete it are dropped, with their costs, which are ``>= 0``)."""
    size = ds.size
    best = np.full((thetas.size, size + 1), np.inf)
    best[:, 0] = 0.0
    prefix = np.concatenate(([0], np.cumsum(ds, dtype=np.int64)))
    at_most = _count_table(ds, max(float(b), 2 * float(thetas.max(initial=0.0))))
    if partial:
        ms = np.arange(1, min(2 * k - 1, size) + 1)
        best[:, ms] = _mover_run_costs(ds, np.zeros_like(ms), ms, b, thetas, prefix, at_most)
    for _, ms, tc, mc, valid in _run_blocks(size, k):
        cost = _mover_run_costs(ds, tc, mc, b, thetas, prefix, at_most)
        total = np.where(valid[None], best[:, tc] + cost, np.inf).min(axis=2)
        best[:, ms] = np.minimum(best[:, ms], total)
    return best[:, size]


def _mover_value(
    ds: np.ndarray,
    k: int,
    b: int,
    partial: bool,
    top: int,
    grid: int,
    rounds: int,
    split: int = 6,
    pieces: int = 4,
) -> tuple[float, float]:
    """A lower bound on ``min_theta (b theta + h(theta)) - C(b, 2)``, and the least value
    at the evaluated ``theta`` (an upper estimate of the same minimum).

    The least value lies at a half-integer ``theta`` in ``[0, phi(top)]`` (``top``: the
    largest change any node can make), and in ``[0, h(0) / b]`` too: ``h >= 0``, so
    ``b theta + h(theta) >= b theta >= h(0)`` beyond.  ``h`` is evaluated on a grid of
    that range; strictly between two evaluated half-integers ``theta_j < theta_j+1`` the
    value is bounded below by :func:`_brackets`, and up to ``rounds`` times the ``split``
    lowest brackets below the least evaluated value are split into ``grid`` (a bracket is
    exact once every half-integer in it is evaluated)."""
    size = ds.size
    h0 = float(_mover_dp(ds, k, b, np.zeros(1), partial)[0])
    phi_max = top - 0.5 * max(top - b, 0)
    high = min(phi_max, math.ceil(2.0 * h0 / b) / 2)
    points = np.unique(np.round(np.linspace(0.0, high, grid) * 2) / 2)[1:]
    values = {0.0: h0}
    values.update(zip(points.tolist(), _mover_dp(ds, k, b, points, partial).tolist()))
    for _ in range(rounds):
        th = np.array(sorted(values))
        h = np.array([values[x] for x in th])
        brackets = _brackets(th, h, b, size)
        below = np.flatnonzero(brackets < (b * th + h).min())
        if not below.size:
            break
        below = below[np.argsort(brackets[below])][:split]
        inner = np.unique(
            np.concatenate(
                [np.round(np.linspace(th[j], th[j + 1], pieces + 1) * 2) / 2 for j in below]
            )
        )
        inner = inner[~np.isin(inner, th)]
        values.update(zip(inner.tolist(), _mover_dp(ds, k, b, inner, partial).tolist()))
    th = np.array(sorted(values))
    h = np.array([values[x] for x in th])
    pairs = b * (b - 1) / 2
    seen = float((b * th + h).min())
    low = min(seen, float(_brackets(th, h, b, size).min(initial=np.inf)))
    return low - pairs, seen - pairs


def _brackets(th: np.ndarray, h: np.ndarray, b: int, size: int) -> np.ndarray:
    """Least ``b theta + h(theta)`` over the half-integers strictly between consecutive
    evaluated ``th`` (half-integers), bounded below; ``inf`` where none lies between.

    ``h`` is a least sum over ``size`` nodes of terms ``1/2 (delta - b)^+ + (phi(delta) -
    theta)^+``, each nonincreasing in ``theta`` and falling by at most ``theta - theta_j``
    from ``theta_j`` to ``theta``; so for ``theta_j < theta < theta_j+1``, ``h(theta) >=
    h(theta_j+1)`` and ``h(theta) >= h(theta_j) - size (theta - theta_j)``.  The larger of
    the two lines (plus ``b theta``) is convex in ``theta``: its least value over the
    half-integers of the bracket is at one of the two next to where the lines cross."""
    lo, hi = th[:-1] + 0.5, th[1:] - 0.5
    cross = th[:-1] + (h[:-1] - h[1:]) / size
    out = np.full(lo.shape, np.inf)
    for x in (np.floor(cross * 2) / 2, np.ceil(cross * 2) / 2):
        x = np.clip(x, lo, hi)
        value = b * x + np.maximum(h[1:], h[:-1] - size * (x - th[:-1]))
        out = np.minimum(out, value)
    return np.where(hi >= lo, out, np.inf)


def mover_lower_bound(
    degrees, k: int, window: int | None = None, max_b: int | None = None, rounds: int = 20
) -> int:
    """A lower bound on the edits of any k-degree-anonymous graph, from the ``b`` nodes whose
    degree changes most (whichever they are).

    Let ``H`` be the graph of the edits (``E xor E'``, simple), ``e_v`` its degrees and
    ``delta_v = |t_v - d_v| <= e_v`` the change of node ``v``.  For any set ``B`` of ``b``
    nodes, the edits touching ``B`` number ``sum_B e_v - |H[B]| >= sum_B delta_v - C(b,
    2)``, and those with both ends outside ``B`` number ``1/2 sum_{x not in B} (e_x -
    c_x)`` with ``c_x <= b`` edits from ``x`` to ``B``.  With ``B`` the ``b`` largest
    changes, every graph makes at least

        ``Phi_b(delta) = sum_{i <= b} delta_(i) - C(b, 2)
        + 1/2 sum_{i > b} (delta_(i) - b)^+``

    edits.  :func:`structural_lower_bound` fixes ``B`` to the top degrees, so a node
    brought from far below into a hub's class pays half; here it pays in full as soon as
    its change is among the ``b`` largest.  The bound is ``max_b min_t Phi_b(|t - d|)``
    over k-anonymous ``t``.  Write ``phi(delta) = delta - 1/2 (delta - b)^+`` (increasing):
    ``Phi_b = sum_{i <= b} phi(delta_(i)) + 1/2 sum_v (delta_v - b)^+ - C(b, 2)``, and the
    sum of the ``b`` largest ``phi`` is ``min_theta b theta + sum_v (phi(delta_v) -
    theta)^+``, least at ``theta = phi_(b)``, a half-integer in ``[0, phi_max]``.  So
    ``min_t Phi_b = min_theta b theta - C(b, 2) + h(theta)`` with ``h(theta) = min_t
    sum_v g(delta_v)``, ``g(delta) = 1/2 (delta - b)^+ + (phi(delta) - theta)^+``, which
    is convex and nondecreasing in ``delta`` (``(delta - theta)^+`` for ``theta < b``,
    ``1/2 (delta - b)^+ + 1/2 (delta - 2 theta + b)^+`` otherwise).  A convex cost of
    ``t_v - d_v`` is minimized by a sorted ``t`` (for ``d_u <= d_w`` and ``T1 <= T2``,
    ``c(T1 - d_u) + c(T2 - d_w) <= c(T2 - d_u) + c(T1 - d_w)``), so the classes are runs
    of ``k..2k-1`` sorted degrees and ``h`` is a DP over runs.  ``h`` is nonincreasing in
    ``theta``: it is evaluated on a grid and ``b theta + h`` bounded below on each
    bracket (:func:`_brackets`), the lowest brackets refined up to ``rounds`` times.

    ``window`` keeps only the ``window`` highest degrees (default ``5 k``, at most
    ``max(2 k, 60)``): the runs below are dropped with their costs (``>= 0``) and the
    lowest kept run may be cut, a weaker but valid bound.  ``max_b`` (default ``2k``): the
    largest ``b`` tried; from ``b = k`` the search climbs by steps of ``max(2, k // 8)``
    to larger values of the bound, stops at the first that is lower and tries the two
    values halfway to its neighbours (every ``b`` tried is a valid bound).  It exceeds
    :func:`structural_lower_bound` where a hub's class must bring nodes from far below
    (ego-Facebook at k = 5 and 10, the 1M-edge Chung-Lu graph of ``bench/graphs.py`` at
    k = 10 and 50).

    Examples
    --------
    >>> mover_lower_bound([4, 1, 1, 1, 1], 2)  # the star K_{1,4}; exact optimum 3
    2
    """
    ds = np.sort(np.asarray(degrees, dtype=np.int64))
    n = ds.size
    if k <= 1 or n < k or n < 2:
        return 0
    if window is None:
        window = min(5 * k, max(2 * k, 60))
    size = min(n, max(window, k))
    part = ds[n - size :]
    partial = size < n
    top = max(int(ds[-1]), n - 1 - int(ds[0]))  # the largest change: d -> 0 or d -> n - 1
    last_b = min(max_b if max_b is not None else 2 * k, n)
    found: dict[int, float] = {}
    # one DP call prices every theta at once: for small k its fixed cost dominates (a wide
    # grid, many thetas per refinement), for large k the cost of each theta (ego-Facebook
    # and the 1M-edge Chung-Lu graph: 2-3x faster either way than one setting for all k)
    grid, split, pieces = (24, 4, max(4, 120 // k)) if k <= 20 else (12, 2, 4)

    def value(b: int) -> float:
        if b not in found:
            found[b] = _mover_value(part, k, b, partial, top, grid, rounds, split, pieces)[0]
        return found[b]

    # every b gives a valid bound; climb from b = k by steps of max(2, k // 8) while the
    # bound grows, then try the two values halfway to the best's neighbours
    stride = max(2, k // 8)
    b = min(k, last_b)
    step = stride if b + stride <= last_b and value(b + stride) > value(b) else -stride
    while 1 <= b + step <= last_b and value(b + step) > value(b):
        b += step
    for near in (b - stride // 2, b + stride // 2):
        if 1 <= near <= last_b:
            value(near)
    return max(0, math.ceil(max(found.values()) - 1e-9))
