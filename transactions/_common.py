"""Parameter validation and release assembly shared by the anonymizers."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from structanon import Partition
from structanon.errors import InputError

from ._data import Baskets, dedupe_rows
from ._taxonomy import Taxonomy

__all__ = ["check_int", "check_seed", "publish_sets", "group_partition"]


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
