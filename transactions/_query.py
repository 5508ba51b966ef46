"""Support queries over original and generalized transactions.

A published transaction holds, for each original item, at most one label covering it (the
item itself or one ancestor): every method publishes a cut of the taxonomy per
transaction.  The number of published transactions *matching* original items
``q_1..q_s`` is then the number holding a cover of every ``q_i``; the *estimated support*
weights each cover by ``1 / |leaves under it|`` (items uniformly likely within a node).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from structanon.errors import InputError

from ._data import Baskets, dedupe_rows
from ._taxonomy import Taxonomy

__all__ = ["NodeIndex", "published_nodes", "sample_queries"]


def published_nodes(
    published: Sequence[Any], tax: Taxonomy
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR ``(indptr, node ids)`` of published label sets, and the suppressed mask."""
    index = {str(lab): i for i, lab in enumerate(tax.labels.tolist())}
    n = len(published)
    lengths = np.zeros(n, dtype=np.int64)
    flat: list[int] = []
    suppressed = np.zeros(n, dtype=bool)
    for i, t in enumerate(published):
        if t is None:
            suppressed[i] = True
            continue
        try:
            flat.extend(index[str(x)] for x in t)
        except KeyError as exc:
            raise InputError(
                "published label not in the taxonomy", row=i, value=exc.args[0]
            ) from None
        lengths[i] = len(t)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    indptr, nodes = dedupe_rows(rows, np.asarray(flat, dtype=np.int64), n, tax.n_nodes)
    return indptr, nodes.astype(np.int64), suppressed


class NodeIndex:
    """Inverted index: for every node, the transactions publishing it."""

    def __init__(self, indptr: np.ndarray, nodes: np.ndarray, n_nodes: int) -> None:
        rows = np.repeat(np.arange(indptr.size - 1, dtype=np.int64), np.diff(indptr))
        order = np.argsort(nodes, kind="stable")
        self.col_rows = rows[order]
        self.col_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(nodes, minlength=n_nodes), out=self.col_ptr[1:])

    @classmethod
    def of_baskets(cls, b: Baskets, n_nodes: int) -> NodeIndex:
        return cls(b.indptr, b.codes.astype(np.int64), n_nodes)

    def _rows_weights(
        self, nodes: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        parts_r, parts_w = [], []
        for node, w in zip(nodes.tolist(), weights.tolist()):
            r = self.col_rows[self.col_ptr[node] : self.col_ptr[node + 1]]
            parts_r.append(r)
            parts_w.append(np.full(r.size, w))
        rows = np.concatenate(parts_r) if parts_r else np.zeros(0, np.int64)
        ws = np.concatenate(parts_w) if parts_w else np.zeros(0)
        uniq, inv = np.unique(rows, return_inverse=True)
        # a transaction holding an item and one of its ancestors matches once
        return uniq, np.minimum(np.bincount(inv.reshape(-1), weights=ws, minlength=uniq.size), 1.0)

    def matches(
        self, queries: np.ndarray, tax: Taxonomy | None, weighted: bool = False
    ) -> np.ndarray:
        """For each query (row of leaf ids), the (weighted) count of covering transactions.

        With ``tax=None`` only the items themselves cover (original data).
        """
        out = np.zeros(queries.shape[0])
        for j, query in enumerate(queries):
            rows: np.ndarray | None = None
            weights = np.ones(0)
            for leaf in query.tolist():
                if tax is None:
                    nodes = np.array([leaf])
                else:
                    nodes = tax.anc[leaf, : tax.depth[leaf] + 1]
                w = 1.0 / tax.size[nodes] if (weighted and tax is not None) else np.ones(nodes.size)
                r, wr = self._rows_weights(nodes, w)
                if rows is None:
                    rows, weights = r, wr
                else:
                    common, ia, ib = np.intersect1d(
                        rows, r, assume_unique=True, return_indices=True
                    )
                    rows, weights = common, weights[ia] * wr[ib]
                if rows.size == 0:
                    break
            out[j] = float(weights.sum()) if rows is not None and rows.size else 0.0
        return out


def sample_queries(b: Baskets, size: int, n_queries: int, rng: np.random.Generator) -> np.ndarray:
    """Random ``size``-itemsets drawn from random transactions long enough to hold them."""
    lens = b.lengths
    eligible = np.flatnonzero(lens >= size)
    if eligible.size == 0 or n_queries <= 0:
        return np.zeros((0, size), dtype=np.int64)
    rows = rng.choice(eligible, size=n_queries, replace=True)
    if n_queries * int(lens.max()) > 4_000_000:  # a very wide transaction: bounded memory
        picks = [rng.choice(int(lens[r]), size=size, replace=False) for r in rows.tolist()]
        pick = np.asarray(picks, dtype=np.int64).reshape(n_queries, size)
        return np.sort(b.codes[b.indptr[rows][:, None] + pick], axis=1).astype(np.int64)
    keys = rng.random((n_queries, int(lens.max())))
    keys[np.arange(lens.max())[None, :] >= lens[rows][:, None]] = 2.0
    pick = np.argsort(keys, axis=1)[:, :size]
    return np.sort(b.codes[b.indptr[rows][:, None] + pick], axis=1).astype(np.int64)
