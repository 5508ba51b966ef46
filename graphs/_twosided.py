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

__all__ = ["two_sided_sequence", "structural_lower_bound"]


def _block_costs(ds, prefix, right, left, ts, ms, floor):
    """Cost of moving each run ``ds[t:m]`` to its median (raised to ``floor``, the largest
    least-allowed value of its members, when given), that value, and the cost and value of
    the cheapest target of the other parity (inf if none; even runs have none)."""
    s = ms - ts
    mid = ts + (s - 1) // 2
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
    cost = (le * x - (prefix[ts + le] - prefix[ts])) + ((prefix[ms] - prefix[ms - ge]) - ge * x)
    odd = (s & 1) == 1
    up = np.where(odd & (x + 1 <= high), cost + le - (s - le), np.inf)
    down = np.where(odd & (x - 1 >= low), cost + ge - (s - ge), np.inf)
    alt = np.minimum(up, down)
    alt_x = np.where(up <= down, x + 1, x - 1)
    parity = (s * x - (prefix[ms] - prefix[ts])) & 1
    return cost, parity, x, alt, alt_x


def _run_floors(fs: np.ndarray, b: int, k: int, tc: np.ndarray, ms: np.ndarray) -> np.ndarray:
    """``max(fs[t:m])`` for the runs of one block (all ``t < b <= m``)."""
    lo = max(0, b - 2 * k + 1)
    suffix = np.maximum.accumulate(fs[lo:b][::-1])[::-1]  # max(fs[lo + i : b])
    head = np.concatenate(([np.iinfo(np.int64).min], np.maximum.accumulate(fs[b:b + k])))
    return np.maximum(suffix[tc - lo], head[ms - b][:, None])


def _dp(ds: np.ndarray, k: int, fs: np.ndarray | None = None):
    """Tables of the two-sided DP: best cost of each prefix per parity, and back pointers."""
    n = ds.size
    prefix = np.concatenate(([0], np.cumsum(ds, dtype=np.int64)))
    right = np.searchsorted(ds, ds, side="right")
    left = np.searchsorted(ds, ds, side="left")
    best = np.full((n + 1, 2), np.inf)
    back_t = np.full((n + 1, 2), -1, dtype=np.int64)
    back_x = np.zeros((n + 1, 2), dtype=np.int64)
    best[0, 0] = 0.0
    offsets = np.arange(k, 2 * k)
    for b in range(k, n + 1, k):
        ms = np.arange(b, min(b + k, n + 1))
        ts = ms[:, None] - offsets[None, :]
        valid = ts >= 0
        tc = np.where(valid, ts, 0)
        mc = np.broadcast_to(ms[:, None], tc.shape)
        floor = None if fs is None else _run_floors(fs, b, k, tc, ms)
        cost, pm, x, alt, alt_x = _block_costs(ds, prefix, right, left, tc, mc, floor)
        cmed = np.where(valid, cost.astype(np.float64), np.inf)
        alt = np.where(valid, alt, np.inf)
        rows = np.arange(ms.size)
        for p in (0, 1):
            # the previous prefix has parity p - parity(cost); the alternative target flips it
            tot_med = np.where(pm == p, best[tc, 0], best[tc, 1]) + cmed
            tot_alt = np.where(pm == p, best[tc, 1], best[tc, 0]) + alt
            both = np.concatenate([tot_med, tot_alt], axis=1)
            arg = np.argmin(both, axis=1)
            use_alt = arg >= k
            col = np.where(use_alt, arg - k, arg)
            best[ms, p] = both[rows, arg]
            back_t[ms, p] = tc[rows, col]
            back_x[ms, p] = np.where(use_alt, alt_x[rows, col], x[rows, col])
    return best, back_t, back_x


def two_sided_sequence(degrees, k: int, even: bool = True, seed=None,
                       floors=None) -> tuple[np.ndarray, int]:
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
    order = np.lexsort((tie, d))
    ds = d[order]
    fs = None if floors is None else np.asarray(floors, dtype=np.int64)[order]
    best, back_t, back_x = _dp(ds, k, fs)
    optimum = int(best[n].min()) if fs is None else int(_dp(ds, k)[0][n].min())
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
    return out, optimum


def _nearest_costs(others: np.ndarray, ts: np.ndarray, q: int, free: int) -> np.ndarray:
    """``O[T, r]``: least sum of ``(|d - T| - free)^+ / 2`` over ``r <= q`` of ``others``."""
    out = np.zeros((ts.size, q + 1))
    if q == 0 or others.size == 0:
        return out
    pos = np.searchsorted(others, ts)
    idx = pos[:, None] + np.arange(-q, q)[None, :]
    ok = (idx >= 0) & (idx < others.size)
    dist = np.where(ok, np.abs(others[np.clip(idx, 0, others.size - 1)] - ts[:, None]), 10**12)
    dist = np.sort(dist, axis=1)[:, :q]
    out[:, 1:] = np.cumsum(0.5 * np.maximum(dist - free, 0), axis=1)
    return out


def _top_bound(ds_desc: np.ndarray, k: int, s: int) -> float:
    top, others = ds_desc[:s], np.sort(ds_desc[s:])
    ts = np.arange(0, int(top[0]) + 1)
    near = _nearest_costs(others, ts, k - 1, s)
    best = np.full(s + 1, np.inf)
    best[0] = 0.0
    for j in range(1, s + 1):
        for i in range(j):
            cost = np.abs(top[i:j][None, :] - ts[:, None]).sum(axis=1)
            cost = cost + near[:, max(0, k - (j - i))]
            best[j] = min(best[j], best[i] + float(cost.min()))
    return best[s] - s * (s - 1) / 2


def structural_lower_bound(degrees, k: int, max_top: int = 16) -> int:
    """A lower bound on the edits of any k-degree-anonymous graph, from its top degrees.

    Let ``S`` be the ``s`` highest-degree nodes and ``Delta`` the final minus the original
    degrees.  Every edit changes two degrees by one; a node of ``S`` changed by ``|Delta_v|``
    meets ``|Delta_v|`` edits, at most ``C(s, 2)`` of them inside ``S``, the others joining a
    node ``x`` outside ``S`` that meets at least ``max(|Delta_x|, a_x)`` edits, ``a_x <= s``
    of them from ``S``.  Summing, ``edits >= sum_S |Delta_v| - C(s, 2) +
    sum_{x not in S} (|Delta_x| - s)^+ / 2``.  Its least value over k-anonymous sequences is
    bounded below by letting every class of ``S`` (consecutive top degrees at one value
    ``T``) take its other members from the nodes nearest ``T``, reused freely.  The result is
    the best ``s <= max_top``; it exceeds ``ceil(L1*/2)`` when a few hubs must move far
    while the nodes near them need nothing (ego-Facebook, k <= 20).

    Examples
    --------
    >>> structural_lower_bound([1, 1, 1, 1, 9], 2)
    6
    """
    ds = np.sort(np.asarray(degrees, dtype=np.int64))[::-1]
    if k <= 1 or ds.size == 0 or ds.size < k:
        return 0
    best = 0.0
    for s in range(1, min(max_top, ds.size) + 1):
        best = max(best, _top_bound(ds, k, s))
    return max(0, math.ceil(best - 1e-9))
