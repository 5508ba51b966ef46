"""Top-down local generalization for k-anonymity of whole transactions (He & Naughton 2009).

Every occurrence of an item carries the node it is currently published as (``cur``).  All
transactions start generalized to the root, in one partition.  A partition is refined by
expanding one of its published nodes into the children that cover each transaction's
items; transactions with the same children form a sub-partition.  Sub-partitions smaller
than ``k`` are pooled back, unexpanded, with enough transactions borrowed from the largest
sub-partitions to reach ``k``.  Within a partition all transactions publish the same set.
"""

from __future__ import annotations

import numpy as np

from ._data import Baskets
from ._taxonomy import Taxonomy

__all__ = ["partition_groups"]


def _occurrences(b: Baskets, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lens = b.lengths[rows]
    total = int(lens.sum())
    offsets = np.zeros(rows.size, dtype=np.int64)
    np.cumsum(lens[:-1], out=offsets[1:])
    idx = np.repeat(b.indptr[rows] - offsets, lens) + np.arange(total, dtype=np.int64)
    pos = np.repeat(np.arange(rows.size, dtype=np.int64), lens)
    return idx, pos


def partition_groups(b: Baskets, tax: Taxonomy, k: int, seed: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Run Partition on the non-empty transactions.

    Returns ``(cur, group, stats)``: the published node of every item occurrence, the group
    of every transaction (-1 for empty ones), and counts of expansions.
    """
    rng = np.random.default_rng(seed)
    h1 = rng.integers(1, 2**62, size=tax.n_nodes, dtype=np.int64)
    h2 = rng.integers(1, 2**62, size=tax.n_nodes, dtype=np.int64)
    cur = np.full(b.nnz, tax.root, dtype=np.int64)
    group = np.full(b.n, -1, dtype=np.int64)
    nonempty = np.flatnonzero(b.lengths > 0)
    stack: list[tuple[np.ndarray, frozenset]] = [(nonempty, frozenset())] if nonempty.size else []
    n_groups = expansions = failures = 0
    leaf_of = b.codes
    while stack:
        rows, frozen = stack.pop()
        idx, pos = _occurrences(b, rows)
        nodes = cur[idx]
        weight = np.bincount(nodes, weights=tax.ncp[nodes], minlength=tax.n_nodes)
        cand = np.flatnonzero(weight > 0)
        if frozen:
            cand = cand[~np.isin(cand, np.fromiter(frozen, dtype=np.int64))]
        cand = cand[np.lexsort((cand, -weight[cand]))]
        split = False
        for x in cand.tolist():
            sel = nodes == x
            occ = idx[sel]
            opos = pos[sel]
            child = tax.anc[leaf_of[occ], tax.depth[x] + 1]
            pair = np.unique(opos * np.int64(tax.n_nodes) + child)
            ppos, pchild = pair // tax.n_nodes, pair % tax.n_nodes
            k1 = np.bincount(ppos, minlength=rows.size)  # children per row
            s1 = np.zeros(rows.size, dtype=np.int64)
            s2 = np.zeros(rows.size, dtype=np.int64)
            np.add.at(s1, ppos, h1[pchild])
            np.add.at(s2, ppos, h2[pchild])
            sig = np.stack([s1, s2, k1.astype(np.int64)], axis=1)
            _, sub, sizes = np.unique(sig, axis=0, return_inverse=True, return_counts=True)
            sub = sub.reshape(-1)
            big = sizes >= k
            if not big.any():
                failures += 1
                continue
            left_mask = ~big[sub]
            need = k - int(left_mask.sum()) if left_mask.any() else 0
            if need > 0:
                # borrow from the largest sub-partitions, keeping each at >= k
                for g in np.argsort(-sizes, kind="stable").tolist():
                    if need <= 0 or not big[g]:
                        break
                    spare = int(sizes[g]) - k
                    if spare <= 0:
                        continue
                    take = min(spare, need)
                    members = np.flatnonzero(sub == g)[-take:]
                    left_mask[members] = True
                    sizes[g] -= take
                    need -= take
                if need > 0:
                    failures += 1
                    continue
            if left_mask.all():
                failures += 1
                continue
            expansions += 1
            moved = ~left_mask[opos]
            cur[occ[moved]] = child[moved]
            keep_sub, keep_rows = sub[~left_mask], rows[~left_mask]
            o = np.argsort(keep_sub, kind="stable")
            bounds = np.flatnonzero(np.diff(keep_sub[o])) + 1
            for part in np.split(keep_rows[o], bounds):
                stack.append((part, frozenset()))
            if left_mask.any():
                stack.append((rows[left_mask], frozen | {x}))
            split = True
            break
        if not split:
            group[rows] = n_groups
            n_groups += 1
    return cur, group, {"groups": n_groups, "expansions": expansions, "failed_expansions": failures}
