"""Realize an anonymized degree sequence on the original graph (Liu & Terzi 2008, section 5).

Nodes are the integers ``0 .. n-1``; the original edges are given once each (``u < v``).
Three strategies share one realization step, a constrained Havel-Hakimi: the node with
the largest remaining increase is joined to the nodes with the largest remaining
increases that are not already its neighbours.

* ``supergraph`` (additions only): whatever the realization leaves over is joined to
  non-neighbours chosen so their degree classes stay at least ``k`` strong, and the degree
  sequence of the result is anonymized again; repeated until nothing is left over.
* ``probing`` (additions only): on a leftover, restart from the original graph with
  the degree sequence perturbed (a few non-neighbours of each stuck node raised by one)
  so the dynamic program gives it partners; after ``max_probes`` it finishes as
  ``supergraph`` does.
* ``swap`` (additions and deletions): each leftover pair ``(u, w)`` is served by removing
  an edge ``(x, y)`` and adding ``(u, x), (w, y)``, which keeps the degrees of ``x, y``.

The work is bounded.  When ``2k > n`` only one degree class can exist, so the graph is
raised straight to a common degree (see :func:`_uniform`); otherwise, if the strategies
above have not converged within ``max_rounds`` rounds (each round re-anonymizes the
sequence, so a stuck parity or a hub can push degrees up two at a time for thousands of
rounds), the same common-degree construction finishes the job.  It always succeeds for
``k <= n``: its last resort is the complete graph.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from structanon.errors import InfeasibleError

from ._sequence import _anonymize as _anonymize_sequence
from ._sequence import anonymize_for_graph

__all__ = ["Construction", "construct"]

CONSTRUCTS = ("supergraph", "swap", "probing")


@dataclass
class Construction:
    """Result of a construction: the edits and how they were found."""

    added: np.ndarray  # (a, 2) int64, u < v
    removed: np.ndarray  # (r, 2) int64, u < v, original edges only
    target: np.ndarray  # degree of every node after the edits
    first_target: np.ndarray  # the anonymized sequence of the original degrees
    optimum: int = 0  # least L1 increase of the original degrees (any parity)
    rounds: int = 1
    probes: int = 0
    repairs: int = 0
    swaps: int = 0
    log: list[str] = field(default_factory=list)
    fallback: str | None = None  # "common degree D" / "complete graph" when used


class _Overlay:
    """The original graph (CSR, sorted rows) plus added and removed edges."""

    def __init__(self, n: int, edges: np.ndarray) -> None:
        self.n = n
        both = np.concatenate([edges, edges[:, ::-1]]) if edges.size else np.zeros((0, 2), np.int64)
        mat = sp.csr_matrix(
            (np.ones(len(both), dtype=np.int8), (both[:, 0], both[:, 1])), shape=(n, n)
        )
        mat.sort_indices()
        self.matrix = mat
        self.indptr, self.indices = mat.indptr.astype(np.int64), mat.indices.astype(np.int64)
        self.added: defaultdict[int, set[int]] = defaultdict(set)
        self.added_chunks: list[np.ndarray] = []
        self.added_single: list[tuple[int, int]] = []
        self.cancelled: set[tuple[int, int]] = set()
        self.removed: set[tuple[int, int]] = set()
        self.degree = np.diff(self.indptr).astype(np.int64)
        self._codes: set[int] | None = None

    def common_neighbors(self, v: int) -> np.ndarray:
        """Number of original neighbours every node shares with ``v``."""
        two = self.matrix[self.original_neighbors(v)].indices
        return np.bincount(two, minlength=self.n)

    def original_neighbors(self, v: int) -> np.ndarray:
        return self.indices[self.indptr[v] : self.indptr[v + 1]]

    def neighbors(self, v: int) -> np.ndarray:
        nb = self.original_neighbors(v)
        if self.removed:
            nb = np.array(
                [w for w in nb.tolist() if (min(v, w), max(v, w)) not in self.removed],
                dtype=np.int64,
            )
        extra = self.added.get(v)
        if not extra:
            return nb
        return np.concatenate([nb, np.fromiter(extra, dtype=np.int64, count=len(extra))])

    def has_edge(self, a: int, b: int) -> bool:
        key = (min(a, b), max(a, b))
        if key in self.removed:
            return False
        if self._codes is None:  # built on first use (the swap step only)
            rows = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))
            self._codes = set((rows * self.n + self.indices).tolist())
        if key[0] * self.n + key[1] in self._codes:
            return True
        return b in self.added.get(a, ())

    def add(self, u: int, v: int) -> None:
        key = (min(u, v), max(u, v))
        if key in self.removed:  # re-adding a removed original edge cancels the removal
            self.removed.discard(key)
        else:
            self.added[u].add(v)
            self.added[v].add(u)
            self.added_single.append(key)
        self.degree[u] += 1
        self.degree[v] += 1

    def add_star(self, v: int, ws: np.ndarray) -> None:
        """Join ``v`` to every node of ``ws`` (none of them a current neighbour)."""
        if ws.size == 0:
            return
        wl = ws.tolist()
        if self.removed:  # re-adding a removed original edge cancels the removal
            back = [w for w in wl if (min(v, w), max(v, w)) in self.removed]
            for w in back:
                self.removed.discard((min(v, w), max(v, w)))
                self.degree[v] += 1
                self.degree[w] += 1
            if back:
                wl = [w for w in wl if w not in set(back)]
                ws = np.asarray(wl, dtype=np.int64)
        added = self.added
        added[v].update(wl)
        for w in wl:
            added[w].add(v)
        self.added_chunks.append(np.stack([np.minimum(ws, v), np.maximum(ws, v)], axis=1))
        np.add.at(self.degree, ws, 1)
        self.degree[v] += ws.size

    def remove(self, u: int, v: int) -> None:
        key = (min(u, v), max(u, v))
        if v in self.added.get(u, ()):
            self.added[u].discard(v)
            self.added[v].discard(u)
            self.cancelled.add(key)
        else:
            self.removed.add(key)
        self.degree[u] -= 1
        self.degree[v] -= 1

    def edits(self) -> tuple[np.ndarray, np.ndarray]:
        chunks = self.added_chunks + [np.array(self.added_single, dtype=np.int64).reshape(-1, 2)]
        added = np.concatenate(chunks)
        if self.cancelled:
            drop = np.array([tuple(p) in self.cancelled for p in added.tolist()], dtype=bool)
            added = added[~drop]
        added = added[np.lexsort((added[:, 1], added[:, 0]))]
        removed = np.array(sorted(self.removed), dtype=np.int64).reshape(-1, 2)
        return added, removed


def _realize(graph: _Overlay, residual: np.ndarray) -> np.ndarray:
    """Add edges for ``residual``; return what could not be placed (per node)."""
    res = residual.astype(np.int64).copy()
    leftover = np.zeros_like(res)
    active = np.flatnonzero(res > 0)
    while active.size:
        i = int(np.argmax(res[active]))
        v = int(active[i])
        need = int(res[v])
        others = np.delete(active, i)
        cand = others[~np.isin(others, graph.neighbors(v))]
        if cand.size > need:
            top = np.argpartition(-res[cand], need - 1)[:need]
            cand = cand[top]
        graph.add_star(v, cand)
        res[cand] -= 1
        res[v] = 0
        if need > cand.size:
            leftover[v] = need - cand.size
        active = others[res[others] > 0]
    return leftover


def _anonymize(deg: np.ndarray, k: int, method: str, seed) -> np.ndarray:
    return anonymize_for_graph(deg, k, method, seed)[0]


def _repair(graph: _Overlay, leftover: np.ndarray, k: int, rng: np.random.Generator) -> int:
    """Join each leftover unit to a non-neighbour whose degree class can spare it.

    A node of degree ``D`` can spare one unit when its class keeps at least ``k`` members and
    class ``D + 1`` reaches ``k``; such nodes are taken first, at most ``count(D) - k`` per
    class, those sharing the most neighbours with the stuck node first (friends of friends:
    this keeps clustering and path lengths), then in seeded random order (so classes give
    up nodes in proportion to their size and the degree distribution keeps its shape).
    Anything still short is fixed by the next round.
    """
    deg_final = graph.degree + leftover
    order = rng.permutation(graph.n)
    position = np.empty_like(order)
    position[order] = np.arange(graph.n)
    added = 0
    for u in np.flatnonzero(leftover).tolist():
        need = int(leftover[u])
        counts = np.bincount(deg_final, minlength=int(deg_final.max()) + 2)
        free = np.ones(graph.n, dtype=bool)
        free[graph.neighbors(u)] = False
        free[u] = False
        free &= leftover == 0
        cand = order[free[order]]
        if cand.size < need:
            raise InfeasibleError(f"node {u} cannot gain {need} more neighbours")
        shared = graph.common_neighbors(u)
        common = shared[cand]
        key = -common.astype(np.int16) if common.max(initial=0) < 2**15 else -common
        cand = cand[np.argsort(key, kind="stable")]
        d = deg_final[cand]
        small = d.astype(np.int16) if d.max() < 2**15 else d  # radix sort for small ints
        srt = np.argsort(small, kind="stable")
        cand, d = cand[srt], d[srt]
        starts = np.r_[0, np.flatnonzero(d[1:] != d[:-1]) + 1]
        rank = np.arange(d.size) - np.repeat(starts, np.diff(np.r_[starts, d.size]))
        spare = (rank < counts[d] - k) & (counts[d + 1] >= k - 1)
        spare_cand = cand[spare]
        picks = spare_cand[np.lexsort((position[spare_cand], -shared[spare_cand]))][:need]
        if picks.size < need:
            rest = cand[~spare]
            rest = rest[np.argsort(-counts[deg_final[rest]], kind="stable")][: need - picks.size]
            picks = np.concatenate([picks, rest])
        graph.add_star(u, picks)
        deg_final[picks] += 1
        added += picks.size
    return added


def _swap(
    graph: _Overlay,
    leftover: np.ndarray,
    rng: np.random.Generator,
    edges: np.ndarray,
    max_tries: int = 20000,
) -> tuple[int, np.ndarray]:
    """Serve leftover units in pairs by edge swaps; return (swaps done, units still left)."""
    left = leftover.copy()
    units = np.repeat(np.arange(graph.n), left)
    swaps = 0
    draws, flips, next_draw = np.zeros((0, 2), np.int64), np.zeros(0, bool), 0
    for j in range(0, units.size - 1, 2):
        u, w = int(units[j]), int(units[j + 1])
        done = False
        for _ in range(max_tries):
            if next_draw == len(draws):  # random edges drawn in bulk, used one by one
                draws = edges[rng.integers(len(edges), size=4096)].tolist()
                flips = (rng.random(4096) < 0.5).tolist()
                next_draw = 0
            x, y = draws[next_draw]
            if flips[next_draw]:
                x, y = y, x
            next_draw += 1
            if len({u, w, x, y} if u != w else {u, x, y}) < (4 if u != w else 3):
                continue
            if not graph.has_edge(x, y) or graph.has_edge(u, x) or graph.has_edge(w, y):
                continue
            graph.remove(x, y)
            graph.add(u, x)
            graph.add(w, y)
            left[u] -= 1
            left[w] -= 1
            swaps += 1
            done = True
            break
        if not done:
            break
    return swaps, left


COMPLETE_GRAPH_LIMIT = 50_000_000  # edges: the last resort is refused beyond this


def _uniform(
    n: int,
    edges: np.ndarray,
    deg0: np.ndarray,
    max_tries: int = 6,
) -> tuple[_Overlay, str]:
    """A supergraph in which every node has one common degree ``D`` (k-anonymous for any
    ``k <= n``).

    ``D`` starts at the largest degree (raised by one when ``n * D`` would be odd, since a
    degree sum is even) and the constrained Havel-Hakimi realization is tried for up to
    ``max_tries`` values of ``D``; the last resort is the complete graph (``D = n - 1``),
    which is a supergraph of every graph.
    """
    step = 1 if n % 2 == 0 else 2
    target = int(deg0.max(initial=0))
    if (n * target) % 2:
        target += 1
    for _ in range(max_tries):
        if target >= n - 1:
            break
        graph = _Overlay(n, edges)
        if not _realize(graph, target - graph.degree).any():
            return graph, f"common degree {target}"
        target += step
    if n * (n - 1) // 2 > COMPLETE_GRAPH_LIMIT:
        raise InfeasibleError(
            f"no k-degree anonymous supergraph found short of the complete graph, which would "
            f"have {n * (n - 1) // 2:,} edges; try a smaller k"
        )
    graph = _Overlay(n, edges)
    rows, cols = np.triu_indices(n, 1)
    present = np.zeros(n * n, dtype=bool) if n * n <= 4 * COMPLETE_GRAPH_LIMIT else None
    if present is not None and len(edges):
        present[edges[:, 0] * n + edges[:, 1]] = True
    code = rows.astype(np.int64) * n + cols
    keep = ~present[code] if present is not None else ~np.isin(code, edges[:, 0] * n + edges[:, 1])
    missing = np.stack([rows[keep], cols[keep]], axis=1).astype(np.int64)
    graph.added_chunks.append(missing)
    graph.degree[:] = n - 1
    return graph, "complete graph"


def _probing(
    base: _Overlay,
    edges: np.ndarray,
    deg0: np.ndarray,
    first: np.ndarray,
    k: int,
    method: str,
    seed,
    rng: np.random.Generator,
    max_probes: int,
    log: list[str],
) -> tuple[_Overlay, np.ndarray, int]:
    """Liu & Terzi's probing: realize, and on a leftover restart from the original graph
    with the degree sequence perturbed.  Returns the graph, its leftover and the probes."""
    n = base.n
    noise = np.zeros(n, dtype=np.int64)
    target = first
    graph, leftover, probes = base, np.zeros(n, dtype=np.int64), 0
    for probes in range(max_probes + 1):  # noqa: B007 - the count is reported
        graph = _Overlay(n, edges) if probes else base
        leftover = _realize(graph, target - deg0)
        if not leftover.any():
            break
        if probes == max_probes:
            log.append(f"probing: {max_probes} probes failed; repairing")
            break
        for u in np.flatnonzero(leftover).tolist():
            free = np.ones(n, dtype=bool)
            free[base.neighbors(u)] = False
            free[u] = False
            cand = np.flatnonzero(free)
            low = cand[np.argsort(deg0[cand] + noise[cand], kind="stable")[: 4 * int(leftover[u])]]
            noise[rng.choice(low, size=min(low.size, int(leftover[u])), replace=False)] += 1
        probe = np.maximum(_anonymize(deg0 + noise, k, method, seed), deg0)
        if probe.max() > n - 1:
            log.append(
                f"probing: probe {probes + 1} asks for more than n - 1 neighbours; repairing"
            )
            break
        target = probe
    return graph, leftover, probes


@dataclass
class _Rounds:
    """What the repair rounds did: the final graph and its counters."""

    graph: _Overlay
    rounds: int = 1
    repairs: int = 0
    swaps: int = 0
    fallback: str | None = None


def _repair_rounds(
    graph: _Overlay,
    leftover: np.ndarray,
    edges: np.ndarray,
    deg0: np.ndarray,
    k: int,
    method: str,
    strategy: str,
    seed,
    rng: np.random.Generator,
    max_rounds: int,
    log: list[str],
) -> _Rounds:
    """Place what is left over (swaps, then repairs), re-anonymize and realize again,
    until nothing is left; after ``max_rounds`` (or when stuck) the common degree."""
    done = _Rounds(graph)
    while leftover.any():
        if strategy == "swap":
            swapped, leftover = _swap(done.graph, leftover, rng, edges)
            done.swaps += swapped
            if not leftover.any():
                break
        try:
            done.repairs += _repair(done.graph, leftover, k, rng)
        except InfeasibleError as exc:
            reason: str | None = str(exc)
        else:
            reason = (
                None if done.rounds < max_rounds else f"not converged within {max_rounds} rounds"
            )
        if reason is not None:
            done.graph, done.fallback = _uniform(done.graph.n, edges, deg0)
            log.append(f"{strategy}: {reason}; {done.fallback}")
            break
        done.rounds += 1
        target = _anonymize(done.graph.degree.copy(), k, method, seed)
        leftover = _realize(done.graph, target - done.graph.degree)
    return done


def construct(
    n: int,
    edges: np.ndarray,
    k: int,
    method: str = "dp",
    strategy: str = "supergraph",
    seed=None,
    max_rounds: int = 30,
    max_probes: int = 20,
) -> Construction:
    """Edit the graph (``n`` nodes, ``edges`` u < v) until its degrees are k-anonymous.

    Bounded: at most ``max_rounds`` rounds of re-anonymization, then (or at once when
    ``2k > n``) the common-degree construction of :func:`_uniform`, which always succeeds.
    """
    rng = np.random.default_rng(seed)
    base = _Overlay(n, edges)
    deg0 = base.degree.copy()
    first, optimum = anonymize_for_graph(deg0, k, method, seed)
    if optimum is None:  # the greedy sequence; the bound comes from the DP
        optimum = _anonymize_sequence(deg0, k, "dp", False, seed)[1]
    assert optimum is not None  # the DP always reports its least increase
    log: list[str] = []
    if 2 * k > n:  # one degree class only: raise every node to one common degree
        graph, how = _uniform(n, edges, deg0)
        log.append(f"2k > n: one degree class; {how}")
        added, removed = graph.edits()
        return Construction(
            added=added,
            removed=removed,
            target=graph.degree.copy(),
            first_target=first,
            optimum=int(optimum),
            log=log,
            fallback=how,
        )
    probes = 0
    if strategy == "probing":
        graph, leftover, probes = _probing(
            base, edges, deg0, first, k, method, seed, rng, max_probes, log
        )
    else:
        graph, leftover = base, _realize(base, first - deg0)
    done = _repair_rounds(
        graph, leftover, edges, deg0, k, method, strategy, seed, rng, max_rounds, log
    )
    added, removed = done.graph.edits()
    return Construction(
        added=added,
        removed=removed,
        target=done.graph.degree.copy(),
        first_target=first,
        optimum=int(optimum),
        rounds=done.rounds,
        probes=probes,
        repairs=done.repairs,
        swaps=done.swaps,
        log=log,
        fallback=done.fallback,
    )
