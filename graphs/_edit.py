"""Minimal-edit k-degree anonymization: edge additions and deletions (Liu & Terzi 2008,
the problem as stated: least symmetric difference ``|E' xor E|``).

1. Target: the two-sided degree-sequence optimum (:func:`graphs._twosided.two_sided_sequence`),
   each run of sorted degrees moved to its median, even degree sum.
2. Deletions among the nodes that must lose degree: a constrained Havel-Hakimi for the
   nodes that must lose many (largest first, to the neighbours that must lose most), then
   rounds of a vectorized randomized greedy b-matching on the remaining loser-loser edges.
   Each deletion serves two units.
3. Additions among the nodes that must gain degree, the same way on non-edges.
4. Repairs for what cannot be paired (a hub that must lose 300 edges while few of its
   neighbours must lose any): the edge goes to (or from) a node that needs nothing and whose
   degree class can spare it (it keeps ``>= k`` members and the class it joins reaches
   ``k``); deletions prefer neighbours of the nearest degree, then those sharing few
   friends, additions friends of friends.
   One edit then serves one unit: this is what the structural bound
   (:func:`graphs._twosided.structural_lower_bound`) counts.
5. The degree sequence of the result is anonymized again and realized, until it holds;
   if that has not converged after ``max_rounds`` (small dense graphs, where repairs can
   oscillate), the additions-only supergraph construction finishes the job.
6. Several targets are realized and the fewest edits kept: the repair-aware group values
   (:func:`_revalue`) and, above ``_LARGE`` edges, the group values priced with the units
   pairing leaves over absorbing other changes (:func:`_absorbed`); on graphs of up to
   ``_BOTH_MEDIANS`` edges also both medians of even runs, the groups redrawn so hub
   neighbours fall (:func:`_reward_target`), and the group values of a b-matching LP
   (:func:`graphs._edit_lp.group_values`) where loser pairs abound (:func:`_pairing_share`).
7. On those graphs the best run's final degrees are realized again from the original
   graph, the maximum b-matching among their losers deleted first (:func:`_polish`).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from structanon.errors import InfeasibleError

from ._construct import construct
from ._edit_lp import _ranks, bmatching_vertex, group_values, max_bmatching
from ._twosided import (
    hub_lower_bound,
    mover_lower_bound,
    structural_lower_bound,
    two_sided_sequence,
)

__all__ = ["edit_anonymize"]

_BIG = 2  # nodes needing more units than this are served one by one (Havel-Hakimi)
_BOTH_MEDIANS = 200_000  # up to this many edges, both medians of even runs are tried
# mover_lower_bound grows about as k ** 3 (ego-Facebook 0.3 / 0.6 / 1.0 / 3.4 / 13.8 s CPU at
# k = 5 / 10 / 20 / 50 / 100, where it is below the hub bound from k = 20): computed up to
# k = 10, and up to k = 50 above _LARGE edges, where the rest of the release costs more and
# the bound gains most (Chung-Lu graphs of 200,000 and 1M edges at k = 50)
_MOVER_MAX_K, _MOVER_MAX_K_LARGE = 10, 50
# above this many edges the group values of :func:`_absorbed` are a candidate target too, and
# the largest-changes bound runs up to k = 50
_LARGE = 100_000
# costs of an unpaired unit in the repair-aware group values (:func:`_revalue`); the cost
# model is rough, so a second weight gives a second candidate target
_UNPAIRED_COSTS = (1.0, 0.75)
_SMALL = 1_000  # up to this many nodes, the additions-only supergraph is a candidate too
# the b-matching LP's target is tried only when the first target's loser pairs number at
# least this share of its loss (see :func:`_pairing_share`)
_LP_PAIRED_SHARE = 0.125
_POLISH = 2  # at most this many re-realizations of the best run's final degrees


class _EditGraph:
    """The original graph (CSR with edge ids) plus removed original edges and added edges."""

    def __init__(self, n: int, edges: np.ndarray) -> None:
        self.n = n
        edges = np.sort(np.asarray(edges, dtype=np.int64).reshape(-1, 2), axis=1)
        codes = edges[:, 0] * n + edges[:, 1]
        self.codes = np.unique(codes[edges[:, 0] != edges[:, 1]])  # sorted, once each
        self.edges = np.stack([self.codes // n, self.codes % n], axis=1)
        m = len(self.codes)
        src = np.concatenate([self.edges[:, 0], self.edges[:, 1]])
        dst = np.concatenate([self.edges[:, 1], self.edges[:, 0]])
        order = np.argsort(src * n + dst)
        self.indices = dst[order]
        self.eid = np.concatenate([np.arange(m), np.arange(m)])[order]
        self.indptr = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n))))
        self.removed = np.zeros(m, dtype=bool)
        self.added: defaultdict[int, set[int]] = defaultdict(set)
        self.added_codes: set[int] = set()
        self.degree = np.bincount(src, minlength=n).astype(np.int64)

    def fresh(self) -> _EditGraph:
        """The original graph again, without edits (the index arrays are shared)."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.removed = np.zeros(len(self.codes), dtype=bool)
        out.added = defaultdict(set)
        out.added_codes = set()
        out.degree = np.diff(self.indptr).astype(np.int64)
        return out

    # -- queries -------------------------------------------------------------------------
    def neighbors(self, v: int) -> np.ndarray:
        a, b = self.indptr[v], self.indptr[v + 1]
        nb = self.indices[a:b][~self.removed[self.eid[a:b]]]
        extra = self.added.get(v)
        if extra:
            nb = np.concatenate([nb, np.fromiter(extra, dtype=np.int64, count=len(extra))])
        return nb

    def _original_id(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Edge id of each pair ``u < v`` in the original graph, -1 if absent."""
        code = u * self.n + v
        if not len(self.codes):
            return np.full(code.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.codes, code), len(self.codes) - 1)
        return np.where(self.codes[pos] == code, pos, -1)

    def has_edges(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Whether each pair ``u < v`` is an edge of the current graph."""
        eid = self._original_id(u, v)
        present = (eid >= 0) & ~self.removed[np.maximum(eid, 0)]
        if self.added_codes:
            codes = u * self.n + v
            extra = np.fromiter(self.added_codes, dtype=np.int64, count=len(self.added_codes))
            present |= np.isin(codes, extra)
        return present

    def common_neighbors(self, v: int) -> np.ndarray:
        """Original neighbours every node shares with ``v`` (used to rank repair partners)."""
        nb = self.indices[self.indptr[v] : self.indptr[v + 1]]
        starts, sizes = self.indptr[nb], self.indptr[nb + 1] - self.indptr[nb]
        ends = np.cumsum(sizes)
        pos = np.arange(int(ends[-1]) if sizes.size else 0) + np.repeat(
            starts - ends + sizes, sizes
        )
        return np.bincount(self.indices[pos], minlength=self.n)

    def current_edges(self, among: np.ndarray | None = None) -> np.ndarray:
        """The current edges (only those with both ends in the mask ``among``, when given)."""
        keep = ~self.removed
        if among is not None:
            keep &= among[self.edges[:, 0]] & among[self.edges[:, 1]]
        kept = self.edges[keep]
        if not self.added_codes:
            return kept
        extra = np.fromiter(self.added_codes, dtype=np.int64, count=len(self.added_codes))
        extra = np.stack([extra // self.n, extra % self.n], axis=1)
        if among is not None:
            extra = extra[among[extra[:, 0]] & among[extra[:, 1]]]
        return np.concatenate([kept, extra])

    # -- edits ---------------------------------------------------------------------------
    def add(self, u: np.ndarray, v: np.ndarray) -> None:
        """Add the pairs (none of them a current edge); re-adding a removed edge cancels it."""
        u, v = np.minimum(u, v), np.maximum(u, v)
        eid = self._original_id(u, v)
        back = eid >= 0
        self.removed[eid[back]] = False
        for a, b in zip(u[~back].tolist(), v[~back].tolist()):
            self.added[a].add(b)
            self.added[b].add(a)
            self.added_codes.add(a * self.n + b)
        np.add.at(self.degree, u, 1)
        np.add.at(self.degree, v, 1)

    def remove(self, u: np.ndarray, v: np.ndarray) -> None:
        """Remove the pairs (all current edges); removing an added edge cancels it."""
        u, v = np.minimum(u, v), np.maximum(u, v)
        eid = self._original_id(u, v)
        orig = eid >= 0
        self.removed[eid[orig]] = True
        for a, b in zip(u[~orig].tolist(), v[~orig].tolist()):
            self.added[a].discard(b)
            self.added[b].discard(a)
            self.added_codes.discard(a * self.n + b)
        np.subtract.at(self.degree, u, 1)
        np.subtract.at(self.degree, v, 1)

    def edits(self) -> tuple[np.ndarray, np.ndarray]:
        extra = np.sort(np.fromiter(self.added_codes, dtype=np.int64, count=len(self.added_codes)))
        added = np.stack([extra // self.n, extra % self.n], axis=1)
        return added, self.edges[self.removed]


def _top(cand: np.ndarray, score: np.ndarray, count: int, rng) -> np.ndarray:
    """``count`` members of ``cand`` with the largest ``score`` (ties in seeded order)."""
    if cand.size <= count:
        return cand
    key = score.astype(np.float64) + rng.random(cand.size) * 0.5
    return cand[np.argpartition(-key, count - 1)[:count]]


def _delete_among(g: _EditGraph, lose: np.ndarray, rng) -> None:
    """Delete edges between nodes that must lose degree; ``lose`` is updated in place.

    Within 1% of the best b-matching on ego-Facebook (the LP optimum of
    :func:`graphs._edit_lp.max_bmatching`: 59 / 181 / 382 / 1,040 / 1,964 deletions
    against at most 60 / 181 / 382.5 / 1,044 / 1,979.5 at k = 5 / 10 / 20 / 50 / 100), so
    the LP is not used to realize: re-running the best target with its integral edges
    first saved 1 / 0 / 0 / 4 / 20 edits for about 20% more CPU time."""
    stuck = np.zeros(g.n, dtype=bool)
    while True:
        big = np.flatnonzero((lose > _BIG) & ~stuck)
        if not big.size:
            break
        v = int(big[np.argmax(lose[big])])
        nb = g.neighbors(v)
        cand = _top(nb[lose[nb] > 0], lose[nb[lose[nb] > 0]], int(lose[v]), rng)
        if cand.size:
            g.remove(np.full(cand.size, v), cand)
            lose[cand] -= 1
            lose[v] -= cand.size
        stuck[v] = lose[v] > 0
    for _ in range(64):
        cur = g.current_edges(lose > 0)
        if not len(cur):
            return
        cur = cur[rng.permutation(len(cur))]
        rank = _ranks(cur.ravel()).reshape(-1, 2)
        take = (rank[:, 0] < lose[cur[:, 0]]) & (rank[:, 1] < lose[cur[:, 1]])
        pick = cur[take]
        g.remove(pick[:, 0], pick[:, 1])
        np.subtract.at(lose, pick.ravel(), 1)


def _add_among(g: _EditGraph, gain: np.ndarray, rng) -> None:
    """Add edges between nodes that must gain degree; ``gain`` is updated in place."""
    stuck = np.zeros(g.n, dtype=bool)
    while True:
        big = np.flatnonzero((gain > _BIG) & ~stuck)
        if not big.size:
            break
        v = int(big[np.argmax(gain[big])])
        active = np.flatnonzero(gain > 0)
        active = active[active != v]
        active = active[~np.isin(active, g.neighbors(v))]
        cand = _top(active, gain[active], int(gain[v]), rng)
        if cand.size:
            g.add(np.full(cand.size, v), cand)
            gain[cand] -= 1
            gain[v] -= cand.size
        stuck[v] = gain[v] > 0
    idle = 0
    while idle < 8 and gain.sum() >= 2:
        units = rng.permutation(np.repeat(np.arange(g.n), gain))
        half = units.size // 2
        u, v = units[:half], units[half : 2 * half]
        u, v = np.minimum(u, v), np.maximum(u, v)
        ok = u != v
        u, v = u[ok], v[ok]
        _, first = np.unique(u * g.n + v, return_index=True)
        u, v = u[first], v[first]
        ok = ~g.has_edges(u, v)
        u, v = u[ok], v[ok]
        if not u.size:
            idle += 1
            continue
        g.add(u, v)
        np.subtract.at(gain, u, 1)
        np.subtract.at(gain, v, 1)


def _spare_picks(cand, priority, planned, counts, k, step, need, rng):
    """Up to ``need`` nodes of ``cand`` whose degree class can spare them (moving from class
    ``D`` to ``D + step`` leaves ``>= k`` in ``D`` and ``D + step`` reaches ``k``), the
    highest ``priority`` first; if too few, the nodes of the largest classes."""
    if not cand.size or need <= 0:
        return cand[:0]
    d = planned[cand]
    key = np.lexsort((rng.random(cand.size), -priority, d))
    cand, d, priority = cand[key], d[key], priority[key]
    starts = np.r_[0, np.flatnonzero(d[1:] != d[:-1]) + 1]
    rank = np.arange(d.size) - np.repeat(starts, np.diff(np.r_[starts, d.size]))
    dest = np.clip(d + step, 0, counts.size - 1)
    spare = (rank < counts[d] - k) & (counts[dest] >= k - 1) & (d + step >= 0)
    picks = cand[spare][np.argsort(-priority[spare], kind="stable")][:need]
    if picks.size < need:
        rest = cand[~spare]
        rest = rest[np.argsort(-counts[planned[rest]], kind="stable")]
        picks = np.concatenate([picks, rest[: need - picks.size]])
    return picks


def _drop_priority(g: _EditGraph, v: int, cand: np.ndarray) -> np.ndarray:
    """Order in which a repair deletes ``v``'s edges to ``cand``: neighbours of the nearest
    degree first, then those sharing fewest friends.  Cutting a hub's edges to low-degree
    nodes is what raises the degree assortativity of the release (ego-Facebook, k = 10:
    0.437 -> 0.417 with this order; k = 50 and 100 unchanged, at the same edits)."""
    gap = np.abs(g.degree[cand] - g.degree[v]).astype(np.float64)
    shared = g.common_neighbors(v)[cand].astype(np.float64)
    return -0.9 * gap / (gap.max(initial=0.0) + 1.0) - 0.1 * shared / (
        shared.max(initial=0.0) + 1.0
    )


def _rewire(g: _EditGraph, lose: np.ndarray, gain: np.ndarray, rng) -> int:
    """Serve a node that must lose and one that must gain together through a node ``x``
    that needs nothing: delete ``(v, x)``, add ``(x, w)``; ``x`` keeps its degree."""
    done = 0
    settled = (lose == 0) & (gain == 0)
    gainers = np.flatnonzero(gain)
    for v in np.flatnonzero(lose)[np.argsort(-lose[lose > 0], kind="stable")].tolist():
        while lose[v] > 0 and gainers.size:
            w = int(gainers[np.argmax(gain[gainers])])
            nb = g.neighbors(v)
            cand = nb[settled[nb] & (nb != w)]
            cand = cand[~np.isin(cand, g.neighbors(w))]
            count = min(int(lose[v]), int(gain[w]), cand.size)
            if count == 0:
                gainers = gainers[gainers != w]
                continue
            xs = rng.choice(cand, size=count, replace=False)
            g.remove(np.full(count, v), xs)
            g.add(xs, np.full(count, w))
            lose[v] -= count
            gain[w] -= count
            done += 2 * count
            gainers = gainers[gain[gainers] > 0]
    return done


def _repair(g: _EditGraph, lose: np.ndarray, gain: np.ndarray, k: int, rng, floors) -> int:
    """Serve the units left over by pairing with nodes that need nothing (one edit each)."""
    planned = g.degree - lose + gain
    counts = np.bincount(planned, minlength=g.n + 2)
    settled = (lose == 0) & (gain == 0)
    can_drop = settled if floors is None else settled & (planned - 1 >= floors)
    done = 0
    for v in np.flatnonzero(lose)[np.argsort(-lose[lose > 0], kind="stable")].tolist():
        nb = g.neighbors(v)
        cand = nb[can_drop[nb]]
        picks = _spare_picks(
            cand, _drop_priority(g, v, cand), planned, counts, k, -1, int(lose[v]), rng
        )
        g.remove(np.full(picks.size, v), picks)
        np.subtract.at(counts, planned[picks], 1)
        planned[picks] -= 1
        np.add.at(counts, planned[picks], 1)
        if floors is not None:
            can_drop[picks] = planned[picks] - 1 >= floors[picks]
        done += picks.size
    for v in np.flatnonzero(gain)[np.argsort(-gain[gain > 0], kind="stable")].tolist():
        free = settled.copy()
        free[g.neighbors(v)] = False
        free[v] = False
        shared = g.common_neighbors(v)
        cand = np.flatnonzero(free)
        picks = _spare_picks(cand, shared[cand], planned, counts, k, 1, int(gain[v]), rng)
        g.add(np.full(picks.size, v), picks)
        np.subtract.at(counts, planned[picks], 1)
        planned[picks] += 1
        np.add.at(counts, planned[picks], 1)
        done += picks.size
    return done


def _short(g: _EditGraph, deg: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node: how many neighbours lose degree under ``target``, and whether the node must
    lose more units than that (the surplus needs repairs)."""
    loses = (deg - target > 0).astype(np.int64)
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    pairable = np.bincount(src, weights=loses[g.indices], minlength=g.n).astype(np.int64)
    return pairable, deg - target - pairable > 0


def _hub_neighbours(g: _EditGraph, deg: np.ndarray, k: int, seed, floors) -> np.ndarray:
    """Tie order of the targets: the number of neighbours that must lose more than their
    losing neighbours can share (under the plain least-L1 target).  Among equal degrees
    such nodes' neighbours are sorted first, so where two runs share a degree they are the
    ones that lose, and the hubs' deletions pair with them instead of needing repairs."""
    target, _ = two_sided_sequence(deg, k, even=True, seed=seed, floors=floors, optimum=False)
    _, short = _short(g, deg, target)
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    return np.bincount(src, weights=short[g.indices], minlength=g.n).astype(np.int64)


def _revalue(
    g: _EditGraph, deg: np.ndarray, target: np.ndarray, unpaired: float = 1.0
) -> np.ndarray | None:
    """Move each group of equal targets to the common value that is cheapest to realize.

    The L1 optimum counts a unit of change as half an edit, but a node that must lose more
    than it has losing neighbours pays a whole edit for each extra unit (a repair).  For
    every group holding such a node, the value in ``[min, max]`` of its degrees minimizing
    ``sum_v 0.5 gain_v + 0.5 min(loss_v, p_v) + c (loss_v - p_v)^+`` (``p_v``: neighbours
    of ``v`` that lose under ``target``; ``c = unpaired``, 1 by the count above) is taken instead (group sizes stay ``>= k``, so the
    result is k-anonymous).  The degree sum keeps its parity (the cheapest group of odd size
    takes its best value of the other parity when needed).  Returns ``None`` when nothing
    changes or the parity cannot be kept.  ``deg``: the original degrees (those of the CSR
    of ``g``)."""
    pairable, short = _short(g, deg, target)

    def cost(members: np.ndarray, loss: np.ndarray, gain: np.ndarray) -> np.ndarray:
        p = pairable[members]
        return 0.5 * gain + 0.5 * np.minimum(loss, p) + unpaired * np.maximum(loss - p, 0)

    return _priced_values(deg, target, np.unique(target[short]), cost)


def _priced_values(deg: np.ndarray, target: np.ndarray, values, cost) -> np.ndarray | None:
    """Each group of ``target`` at one of ``values`` moved to the common value in ``[min,
    max]`` of its degrees that minimizes ``sum cost(members, loss, gain)`` (arrays: one row
    per candidate value, one column per member).  The degree sum keeps its parity (the
    cheapest group of odd size takes its best value of the other parity when needed).
    ``None`` when nothing changes or the parity cannot be kept."""
    out = target.copy()
    fixes = []
    for value in np.asarray(values).tolist():
        members = np.flatnonzero(target == value)
        d = deg[members]
        ts = np.arange(d.min(), d.max() + 1)
        loss = np.maximum(d[None, :] - ts[:, None], 0)
        gain = np.maximum(ts[:, None] - d[None, :], 0)
        total = cost(members, loss, gain).sum(axis=1)
        best = int(np.argmin(total))
        out[members] = ts[best]
        if members.size % 2:
            other = (ts - ts[best]) % 2 == 1
            if other.any():
                j = int(np.argmin(np.where(other, total, np.inf)))
                fixes.append((float(total[j] - total[best]), members, int(ts[j])))
    if (out - target).sum() % 2:
        if not fixes:
            return None
        _, members, value = min(fixes, key=lambda fix: fix[0])
        out[members] = value
    return None if np.array_equal(out, target) else out


def _absorbed(
    n: int, edges: np.ndarray, deg: np.ndarray, target: np.ndarray, seed
) -> np.ndarray | None:
    """The groups of ``target`` at the values that are cheapest once the units its pairing
    leaves over absorb other changes (``None`` when nothing changes).

    Pairing ``target`` (:func:`_delete_among`, :func:`_add_among`) leaves units no partner
    serves; each is repaired with one edit to a node that needs nothing.  Asking that node
    to move the same way costs no more edit: a node ``x`` adjacent to ``a_x`` nodes left to
    lose can lose ``a_x`` units on their repair edges, and one not adjacent to ``s_x``
    nodes left to gain can gain ``s_x`` units.  Every group whose degrees change then
    takes the value in ``[min, max]`` of its degrees minimizing ``sum 1/2 (gain - s)^+ +
    1/2 (loss - a)^+`` (:func:`_priced_values`).  A heuristic (the leftover units are
    finite, and the realization decides who takes them), judged by the edits of its
    realization: on the Chung-Lu graphs of ``bench/graphs.py`` (harness
    ``edit_anonymize(n, edges, k, seed=0)``) 1M edges at k = 10 / 50: 18,319 / 44,912 ->
    18,238 / 44,411 edits, 200,000 edges at k = 10 / 50: 6,079 / 14,207 -> 6,014 / 14,110.
    Charging a quarter of each absorbed unit, or pricing again from the new target's
    leftovers, did no better.  On ego-Facebook it saved 9 edits at k = 50 (3,552 ->
    3,543), none at k = 5 / 10 / 20 / 100, for 0.1-1 s more CPU per k: it runs on graphs
    of more than ``_LARGE`` edges."""
    g = _EditGraph(n, edges)
    rng = np.random.default_rng(seed)
    need = target - g.degree
    lose, gain = np.maximum(-need, 0), np.maximum(need, 0)
    _delete_among(g, lose, rng)
    _add_among(g, gain, rng)
    src = np.repeat(np.arange(n), np.diff(g.indptr))
    left_gain = gain > 0
    a = np.bincount(src, weights=(lose > 0)[g.indices], minlength=n).astype(np.int64)
    adjacent = np.bincount(src, weights=left_gain[g.indices], minlength=n).astype(np.int64)
    s = int(left_gain.sum()) - adjacent - left_gain

    def cost(members: np.ndarray, loss: np.ndarray, gain: np.ndarray) -> np.ndarray:
        return 0.5 * (np.maximum(gain - s[members], 0) + np.maximum(loss - a[members], 0))

    return _priced_values(deg, target, np.unique(target[deg != target]), cost)


def _unpaired_cost(g: _EditGraph, deg: np.ndarray, target: np.ndarray) -> tuple[int, np.ndarray]:
    """``sum |target - deg| + sum_v (loss_v - p_v)^+`` (``p_v``: the neighbours of ``v`` that
    lose under ``target``): about twice the edits of a realization whose losses no losing
    neighbour absorbs are repaired (one edit, and one unit of change, each); also the nodes
    with such losses."""
    loss = np.maximum(deg - target, 0)
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    p = np.bincount(src, weights=loss[g.indices] > 0, minlength=g.n).astype(np.int64)
    return int(np.abs(target - deg).sum() + np.maximum(loss - p, 0).sum()), loss > p


def _reward_target(g: _EditGraph, deg: np.ndarray, k: int, seed, target: np.ndarray):
    """The groups redrawn so the neighbours of the hubs fall (a target), or ``None`` when
    that is no cheaper by :func:`_unpaired_cost`.

    A hub's unit of loss that no losing neighbour absorbs is repaired: the deleted edge
    takes a neighbour that needed nothing one degree down, outside the target, and the
    next round re-anonymizes around it.  Planning that neighbour's fall inside the target
    costs the same unit, so the two-sided DP gets a reward of 1 for the first unit of loss
    of every neighbour of such a hub (``reward``,
    :func:`graphs._twosided.two_sided_sequence`): groups move down where hub neighbours
    sit.  Measured on ego-Facebook (harness ``edit_anonymize(n, edges, k, seed=0)``):
    k = 100 from 5,084 to 5,041 edits; k = 5 / 10 / 20 / 50 unchanged.  Repeating the DP
    with rewards lowered for hubs with surplus losing neighbours gained nothing more."""
    cost, short = _unpaired_cost(g, deg, target)
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    reward = np.minimum(1.0, np.bincount(src, weights=short[g.indices], minlength=g.n))
    if not reward.any():
        return None
    cand = two_sided_sequence(
        deg, k, even=True, seed=seed, optimum=False, priority=reward > 0, reward=reward
    )[0]
    return cand if _unpaired_cost(g, deg, cand)[0] < cost else None


def _is_anonymous(degree: np.ndarray, k: int) -> bool:
    counts = np.bincount(degree)
    return bool((counts[counts > 0] >= k).all())


def _rounds(
    g: _EditGraph, target: np.ndarray, k: int, seed, floors, max_rounds: int, priority=None
):
    """Realize ``target`` on ``g``, re-anonymizing until the degrees are k-anonymous.

    Returns ``(edits, g, rounds, repair edges, finished by additions)``."""
    rng = np.random.default_rng(seed)
    n = g.n
    rounds = repairs = 0
    finished_by_additions = False
    while not _is_anonymous(g.degree, k):
        if rounds >= max_rounds:  # oscillating (small dense graphs): finish by additions only
            extra = construct(n, g.current_edges(), k, "dp", "supergraph", seed).added
            g.add(extra[:, 0], extra[:, 1])
            finished_by_additions = True
            break
        if rounds:
            target = two_sided_sequence(
                g.degree, k, even=True, seed=seed, floors=floors, optimum=False, priority=priority
            )[0]
        if target.max(initial=0) > n - 1:
            raise InfeasibleError(f"a target degree exceeds n - 1 = {n - 1}")
        need = target - g.degree
        lose, gain = np.maximum(-need, 0), np.maximum(need, 0)
        _delete_among(g, lose, rng)
        _add_among(g, gain, rng)
        repairs += _rewire(g, lose, gain, rng)
        repairs += _repair(g, lose, gain, k, rng, floors)
        rounds += 1
    edits = int(g.removed.sum()) + len(g.added_codes)
    return edits, g, rounds, repairs, finished_by_additions


def _additions_only(n: int, edges: np.ndarray, k: int, seed, deg0: np.ndarray, best_run):
    """The additions-only supergraph instead of ``best_run`` when it has fewer edits (tiny
    dense graphs, where deletions leave nodes no partner to repair with); tried only when
    ``best_run`` makes more edits than the additions-only optimum's lower bound."""
    target, _ = two_sided_sequence(deg0, k, even=True, seed=seed, floors=deg0, optimum=False)
    if best_run[0] <= int(target.sum() - deg0.sum()) // 2:
        return best_run
    extra = construct(n, edges, k, "dp", "supergraph", seed).added
    if len(extra) >= best_run[0]:
        return best_run
    g = _EditGraph(n, edges)
    g.add(extra[:, 0], extra[:, 1])
    return (len(extra), g, 0, 0, True, target)


def _pairing_share(base: _EditGraph, deg0: np.ndarray, target: np.ndarray) -> float:
    """``M / L``: the LP bound on the maximum b-matching among the nodes ``target`` asks
    to lose degree (:func:`graphs._edit_lp.max_bmatching`, capacity = loss) per unit of
    their total loss ``L`` (0 when nothing is lost).  ``2 M / L`` is the largest share of
    the loss that deletions between two losers can serve.

    The b-matching LP's group values (:func:`graphs._edit_lp.group_values`) trade loser
    pairs against unpaired units, so they pay off only where many pairs exist.  Measured
    (edits of the LP's target against the best other target): it won on ego-Facebook at
    k = 20 / 50 / 100 (``M / L`` = 0.134 / 0.261 / 0.361) and on a 50,000-edge Chung-Lu
    graph at k = 100 (0.151); it lost on ego-Facebook at k = 5 / 10 (0.129 / 0.081) and
    on Chung-Lu graphs of 50,000 / 100,000 / 200,000 edges at k = 10 / 20 / 50 / 100
    (0.073-0.130), costing 0.2-1.5 s CPU for nothing.  A heuristic, not a proof: below
    ``_LP_PAIRED_SHARE`` the LP is skipped (0.002-0.01 s for this test instead, a maximum flow)."""
    lose = np.maximum(deg0 - target, 0)
    total = int(lose.sum())
    if total == 0:
        return 0.0
    e = base.edges
    pairs = e[(lose[e[:, 0]] > 0) & (lose[e[:, 1]] > 0)]
    return max_bmatching(base.n, pairs, lose)[1] / total


def _polish(
    base: _EditGraph, deg0: np.ndarray, k: int, seed, floors, max_rounds: int, priority, best_run
):
    """The best run's final degrees realized again from the original graph, the maximum
    b-matching among their losers deleted first (the integral edges of an optimal LP
    vertex, :func:`graphs._edit_lp.bmatching_vertex`), then the usual steps; kept if fewer
    edits.  Skipped when the best run already meets the bound of its degrees (the LP
    optimum by :func:`graphs._edit_lp.max_bmatching`'s maximum flow).

    The rounds that led to those degrees deleted greedily for earlier targets; planned at
    once, the losers of the final sequence pair better.  The best run is already within
    0.3% of the least edits of any graph with its degrees on ego-Facebook at k <= 50
    (:func:`graphs._edit_lp.sequence_lower_bound`) but 2.2% above it at k = 100 (5,165
    against 5,053); two passes take k = 5 / 20 / 50 / 100 from 1,050 / 2,621 / 3,558 /
    5,165 to 1,049 / 2,617 / 3,552 / 5,084 edits (harness ``edit_anonymize(n, edges, k,
    seed=0)``), for 0.1-0.4 s more CPU."""
    edits, g, _, _, finished_by_additions, first = best_run
    if finished_by_additions:
        return best_run
    final = g.degree.copy()
    lose = np.maximum(deg0 - final, 0)
    e = base.edges  # ``base`` itself holds the first run's edits: only its edges are used
    pairs = e[(lose[e[:, 0]] > 0) & (lose[e[:, 1]] > 0)]
    matched = max_bmatching(base.n, pairs, lose)[1]
    # no graph with these degrees has fewer edits than half the change plus the loser
    # units no b-matching pairs (:func:`graphs._edit_lp.sequence_lower_bound`)
    half = 0.5 * float(np.abs(final - deg0).sum())
    if edits <= math.ceil(half + float(lose.sum()) - 2.0 * matched - 1e-9):
        return best_run
    picks = bmatching_vertex(base.n, pairs, lose)
    h = base.fresh()
    h.remove(picks[:, 0], picks[:, 1])
    run = _rounds(h, final, k, seed, floors, max_rounds, priority)
    return run + (first,) if run[0] < edits else best_run


def _candidates(
    base: _EditGraph, deg0: np.ndarray, k: int, seed, target: np.ndarray, revalue: bool, small
) -> list[np.ndarray]:
    """``target`` and, when ``revalue``, the groups redrawn so hub neighbours fall
    (:func:`_reward_target`, graphs of up to ``_BOTH_MEDIANS`` edges), the same groups at
    the repair-aware values (:func:`_revalue`) and, on graphs of more than ``_LARGE``
    edges, at the values priced with the leftover units absorbing others
    (:func:`_absorbed`) and, on graphs of up to ``_BOTH_MEDIANS`` edges, at the values the
    b-matching LP finds cheapest (:func:`graphs._edit_lp.group_values`) when loser pairs
    can serve enough of the loss (:func:`_pairing_share`)."""
    out = [target]
    if revalue and small:
        rewarded = _reward_target(base, deg0, k, seed, target)
        out += [] if rewarded is None else [rewarded]
    if revalue:
        for unpaired in _UNPAIRED_COSTS:
            revalued = _revalue(base, deg0, target, unpaired)
            out += [] if revalued is None else [revalued]
        if len(base.edges) > _LARGE:
            absorbed = _absorbed(base.n, base.edges, deg0, target, seed)
            out += [] if absorbed is None else [absorbed]
        if small and _pairing_share(base, deg0, target) >= _LP_PAIRED_SHARE:
            matched, _ = group_values(base.n, base.edges, deg0, target)
            out += [] if matched is None else [matched]
    return out


def edit_anonymize(
    n: int, edges, k: int, seed=None, max_drop: float | None = None, max_rounds: int = 12
):
    """Add and delete as few edges as possible so every degree is shared by ``>= k`` nodes.

    Parameters
    ----------
    n : int
        Number of nodes (``0 .. n-1``), isolated nodes included.
    edges : array of int, shape (m, 2)
        Undirected edges; self-loops and repeated pairs are ignored.
    k : int
        ``1 <= k <= n``.
    seed : int, optional
        The algorithm's own random choices (ties, matching order), reproducibly.
    max_drop : float in [0, 1], optional
        Largest share of its degree any node may lose (``0``: degrees never fall, the
        additions-only sequence; ``None``: no cap).  Protects hubs at the price of more
        edits.

    Returns
    -------
    (added, removed, info)
        ``added`` / ``removed``: (a, 2) / (r, 2) int64 arrays ``u < v``, disjoint from / a
        subset of the input edges.  ``info``: counts, the three lower bounds and the ratios.

    Raises
    ------
    InfeasibleError
        ``k`` larger than ``n``.

    Examples
    --------
    >>> add, rem, info = edit_anonymize(4, [[0, 1], [1, 2], [2, 3]], 4, seed=0)
    >>> info["symmetric_difference"], info["two_sided_lower_bound_edges"]
    (1, 1)
    """
    if k > n:
        raise InfeasibleError(f"k={k} exceeds the number of nodes ({n})")
    base = _EditGraph(n, edges)
    deg0 = base.degree.copy()
    floors = None
    if max_drop is not None:
        floors = np.ceil((1.0 - float(max_drop)) * deg0 - 1e-9).astype(np.int64)
    best_run, optimum = None, None
    targets: list[np.ndarray] = []
    # A run of even length may take any value between its two middle degrees at the same
    # L1 cost; which one is cheaper to realize depends on the graph, so on graphs of up to
    # `_BOTH_MEDIANS` edges both are tried (when they differ) and the fewer edits kept.
    small = len(base.edges) <= _BOTH_MEDIANS
    priority = _hub_neighbours(base, deg0, k, seed, floors) if small else None
    for upper in (False, True) if small else (False,):
        target, l1 = two_sided_sequence(
            deg0,
            k,
            even=True,
            seed=seed,
            floors=floors,
            upper=upper,
            optimum=optimum is None,
            priority=priority,
        )
        optimum = l1 if optimum is None else optimum
        revalue = floors is None and not upper
        for cand in _candidates(base, deg0, k, seed, target, revalue, small):
            if any(np.array_equal(cand, seen) for seen in targets):
                continue
            g = base.fresh() if targets else base
            targets.append(cand)
            run = _rounds(g, cand, k, seed, floors, max_rounds, priority)
            if best_run is None or run[0] < best_run[0]:
                best_run = run + (cand,)
    assert best_run is not None and optimum is not None  # the first target is always run
    if small:
        for _ in range(_POLISH):
            polished = _polish(base, deg0, k, seed, floors, max_rounds, priority, best_run)
            if polished is best_run:
                break
            best_run = polished
    if n <= _SMALL:
        best_run = _additions_only(n, base.edges, k, seed, deg0, best_run)
    edits, g, rounds, repairs, finished_by_additions, first = best_run
    added, removed = g.edits()
    two_sided = math.ceil(optimum / 2)
    structural = structural_lower_bound(deg0, k)
    hub = hub_lower_bound(n, base.edges, k, simple=True, refine=small)
    mover = None
    if k <= (_MOVER_MAX_K_LARGE if len(base.edges) > _LARGE else _MOVER_MAX_K):
        mover = mover_lower_bound(deg0, k)
    best = max(two_sided, structural, hub, mover or 0)
    edits = len(added) + len(removed)
    info = {
        "edges_added": int(len(added)),
        "edges_removed": int(len(removed)),
        "symmetric_difference": int(edits),
        "two_sided_l1_optimum": int(optimum),
        "two_sided_lower_bound_edges": int(two_sided),
        "ratio_to_two_sided_bound": float(edits / two_sided)
        if two_sided
        else (1.0 if edits == 0 else None),
        "structural_lower_bound_edges": int(structural),
        "hub_lower_bound_edges": int(hub),
        "mover_lower_bound_edges": None if mover is None else int(mover),
        "edit_lower_bound_edges": int(best),
        "ratio_to_edit_lower_bound": float(edits / best) if best else (1.0 if edits == 0 else None),
        "first_target_l1": int(np.abs(first - deg0).sum()),
        "l1_degree_change": int(np.abs(g.degree - deg0).sum()),
        "rounds": rounds,
        "repair_edges": int(repairs),
        "finished_by_additions": finished_by_additions,
    }
    return added, removed, info
