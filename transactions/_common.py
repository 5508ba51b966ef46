"""Parameter validation and release assembly shared by the anonymizers."""

from __future__ import annotations

import numbers
import time
from typing import Any

import numpy as np
import pandas as pd

from structanon import Partition
from structanon.errors import InfeasibleError, InputError

from ._data import Baskets, dedupe_rows, encode_baskets
from ._taxonomy import Taxonomy, resolve_taxonomy

__all__ = ["check_int", "check_seed", "publish_sets", "group_partition", "prepare_generalization"]


def prepare_generalization(transactions: Any, k: int, hierarchy: Any, fanout: int | None,
                           order: str) -> tuple[Baskets, Taxonomy, float]:
    """Encode the transactions and resolve the taxonomy; refuse a k no release can meet.

    Returns ``(baskets, taxonomy, seconds spent encoding)``.
    """
    start = time.perf_counter()
    baskets = encode_baskets(transactions)
    counts = np.bincount(baskets.codes, minlength=baskets.domain.size)
    taxonomy = resolve_taxonomy(hierarchy, baskets.domain, counts, fanout, order)
    seconds = time.perf_counter() - start
    if k > baskets.n:
        raise InfeasibleError(f"k={k} exceeds the number of transactions ({baskets.n})")
    n_nonempty = baskets.n - baskets.n_empty
    if 0 < n_nonempty < k:
        raise InfeasibleError(f"only {n_nonempty} non-empty transactions, fewer than k={k}")
    return baskets, taxonomy, seconds


def group_partition(published: list) -> Partition:
    """Individuals grouped by identical published transactions (None = suppressed)."""
    codes, _uniques = pd.factorize(pd.Series(published, dtype=object), use_na_sentinel=True)
    return Partition(codes.astype(np.int64))


def check_int(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"parameter {name!r} must be an integer", value=value)
    if value < low:
        raise InputError(f"parameter {name!r} must be >= {low}", value=value)
    return int(value)


def check_seed(seed: Any) -> int | None:
    if seed is None:
        return None
    return check_int(seed, "seed", 0)


def publish_sets(b: Baskets, tax: Taxonomy, occ_nodes: np.ndarray,
                 suppressed: np.ndarray | None = None) -> list[frozenset | None]:
    """One frozenset of published labels per transaction (None where suppressed)."""
    indptr, nodes = dedupe_rows(b.rows, occ_nodes, b.n, tax.n_nodes)
    labels = tax.labels[nodes].tolist()
    bounds = indptr.tolist()
    out: list[frozenset | None] = [frozenset(labels[bounds[i]:bounds[i + 1]]) for i in range(b.n)]
    if suppressed is not None:
        for i in np.flatnonzero(suppressed).tolist():
            out[i] = None
    return out
