"""Correlation-aware anonymization of high-dimensional data (CAHD, Ghinita et al. 2008).

The transactions x quasi-identifier items matrix is made banded by reverse Cuthill-McKee
on the item co-occurrence graph (columns) and by sorting transactions on the new positions
of their items (rows).  Each transaction holding sensitive items (in a secret random
order) is grouped with ``p - 1`` transactions drawn at random, with secret randomness, from
a window of the band around it, sharing no sensitive item with it or with one another;
neighbours in the band share quasi-identifier items, and a random draw (rather than the
most similar ones) keeps the group's seed indistinguishable from its members for anyone
who replays the grouping from the published data.  Everything left over forms a final
group, from which sensitive transactions are suppressed (and counted) only if that
group would otherwise break the 1/p bound.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ._data import Baskets

__all__ = ["band_order", "cahd_groups", "bandwidth"]


def bandwidth(matrix: sp.csr_matrix) -> int:
    coo = matrix.tocoo()
    if coo.nnz == 0:
        return 0
    return int(np.abs(coo.row - coo.col).max())


def _qi_matrix(b: Baskets, qi_mask: np.ndarray) -> sp.csr_matrix:
    keep = qi_mask[b.codes]
    rows = b.rows[keep]
    cols = b.codes[keep]
    return sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, cols)),
                         shape=(b.n, int(b.domain.size)))


def band_order(b: Baskets, qi_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """Row order and column order making the QI matrix banded; with bandwidth statistics."""
    a = _qi_matrix(b, qi_mask)
    co = (a.T @ a).tocsr()
    if co.shape[0] == 0:
        col_order = np.zeros(0, dtype=np.int64)
    else:
        col_order = reverse_cuthill_mckee(co, symmetric_mode=True).astype(np.int64)
    col_pos = np.empty_like(col_order)
    col_pos[col_order] = np.arange(col_order.size)
    coo = a.tocoo()
    pos = col_pos[coo.col].astype(np.float64)
    n = b.n
    cnt = np.bincount(coo.row, minlength=n)
    first = np.full(n, np.inf)
    np.minimum.at(first, coo.row, pos)
    mean = np.bincount(coo.row, weights=pos, minlength=n) / np.maximum(cnt, 1)
    mean[cnt == 0] = np.inf
    row_order = np.lexsort((np.arange(n), mean, first))
    stats = {"rows": n, "qi_items": int(qi_mask.sum()),
             "cooccurrence_bandwidth_before": bandwidth(co),
             "cooccurrence_bandwidth_after": bandwidth(co[col_order][:, col_order])}
    return row_order, col_order, stats


def cahd_groups(b: Baskets, sensitive_mask: np.ndarray, p: int, alpha: int = 3,
                rng: np.random.Generator | None = None) -> tuple[np.ndarray, dict]:
    """Group transactions (-1 = suppressed); returns labels and statistics.

    ``rng`` is the release's secret randomness (``release_key(key).rng("band-members",
    ...)``): it orders the sensitive transactions that seed groups, places each seed at a
    uniformly random offset inside its window of ``2 * alpha * p + 1`` band positions and
    draws the ``p - 1`` members uniformly among the window's free transactions (those
    without sensitive items first).  So inside a group the seed is exchangeable with its
    members: replaying the grouping from the published QI sets does not single it out.
    """
    if rng is None:
        rng = np.random.default_rng()
    qi_mask = ~sensitive_mask
    row_order, _col_order, stats = band_order(b, qi_mask)
    sens = sp.csr_matrix(
        (np.ones(int(sensitive_mask[b.codes].sum()), dtype=np.int8),
         (b.rows[sensitive_mask[b.codes]], b.codes[sensitive_mask[b.codes]])),
        shape=(b.n, int(b.domain.size)))
    is_sens_rows = np.flatnonzero(np.diff(sens.indptr) > 0)
    sens_sets = {r: frozenset(sens.indices[sens.indptr[r]:sens.indptr[r + 1]].tolist())
                 for r in is_sens_rows.tolist()}
    is_sens = np.diff(sens.indptr) > 0
    n = b.n
    group = np.full(n, -1, dtype=np.int64)
    position = np.empty(n, dtype=np.int64)
    position[row_order] = np.arange(n)
    base_width = 2 * alpha * p + 1
    n_groups = 0
    unplaced = 0
    for t in rng.permutation(is_sens_rows).tolist():
        if group[t] >= 0:
            continue
        at = int(position[t])
        width = base_width
        chosen: list[int] = []
        while True:
            lo = at - int(rng.integers(0, width))
            lo_c, hi_c = max(0, lo), min(n, lo + width)
            cand = row_order[lo_c:hi_c]
            cand = cand[(group[cand] < 0) & (cand != t)]
            cand = rng.permutation(cand)
            cand = cand[np.argsort(is_sens[cand], kind="stable")]  # non-sensitive first
            used = set(sens_sets[t])
            chosen = []
            for c in cand.tolist():
                s = sens_sets.get(c)
                if s:
                    if not used.isdisjoint(s):
                        continue
                    used |= s
                chosen.append(c)
                if len(chosen) == p - 1:
                    break
            if len(chosen) == p - 1 or width >= 2 * n + 1:
                break
            width = 2 * width + 1
        if len(chosen) < p - 1:
            unplaced += 1
            continue
        group[t] = n_groups
        group[np.asarray(chosen, dtype=np.int64)] = n_groups
        n_groups += 1
    rest = np.flatnonzero(group < 0)
    suppressed = 0
    if rest.size:
        rest_sens = sens[rest].tocsc()
        counts = np.asarray(rest_sens.sum(axis=0)).reshape(-1).astype(np.int64)
        size = rest.size
        alive = np.ones(rest.size, dtype=bool)
        while counts.size and counts.max() * p > size:
            worst = int(counts.argmax())
            holders = rest_sens.indices[rest_sens.indptr[worst]:rest_sens.indptr[worst + 1]]
            holders = np.sort(holders[alive[holders]])
            victim = int(holders[-1])
            alive[victim] = False
            counts[sens.indices[sens.indptr[rest[victim]]:sens.indptr[rest[victim] + 1]]] -= 1
            size -= 1
            suppressed += 1
        if size:
            group[rest[alive]] = n_groups
            n_groups += 1
        group[rest[~alive]] = -2
    stats.update({"groups": n_groups, "sensitive_transactions": int(is_sens.sum()),
                  "sensitive_not_grouped": unplaced, "suppressed": suppressed,
                  "last_group_size": int((group == n_groups - 1).sum()) if n_groups else 0})
    group[group == -2] = -1
    return group, stats
