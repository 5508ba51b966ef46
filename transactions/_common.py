"""Parameter validation and release assembly shared by the anonymizers."""

from __future__ import annotations

import math
import numbers
import time
from typing import Any

import numpy as np
import pandas as pd

from structanon import Partition
from structanon.errors import InfeasibleError, InputError

from ._data import Baskets, dedupe_rows, encode_baskets
from ._taxonomy import Taxonomy, resolve_taxonomy

__all__ = ["check_int", "check_seed", "publish_sets", "group_partition", "prepare_generalization",
           "check_basket_width", "publication_order", "k_one_warning", "resolve_measures",
           "SUBSET_BUDGET", "MAX_M"]

#: Largest number of ``m``-subsets one basket may have before an anonymizer that enumerates
#: them refuses it (see :func:`check_basket_width`): 10 million keys, about 80 MB.
SUBSET_BUDGET = 10_000_000
#: Largest attacker knowledge ``m`` accepted.
MAX_M = 8


def prepare_generalization(transactions: Any, k: int, hierarchy: Any, fanout: int | None,
                           order: str, check: Any = None) -> tuple[Baskets, Taxonomy, float]:
    """Encode the transactions and resolve the taxonomy; refuse a k no release can meet.

    ``check(baskets)``, when given, runs before the taxonomy is built (cheap refusals
    first).  Returns ``(baskets, taxonomy, seconds spent encoding)``.
    """
    start = time.perf_counter()
    baskets = encode_baskets(transactions)
    if baskets.n == 0:
        raise InputError("there are no transactions (an empty collection)")
    if check is not None:
        check(baskets)
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


def check_int(value: Any, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"parameter {name!r} must be an integer", value=repr(value)[:60])
    if value < low:
        raise InputError(f"parameter {name!r} must be >= {low}", value=value)
    if high is not None and value > high:
        raise InputError(f"parameter {name!r} must be in [{low}, {high}]", value=value)
    return int(value)


def resolve_measures(measures: bool, evaluate: bool | None) -> bool:
    """``measures`` is the common name; ``evaluate`` (older name) wins when given."""
    if evaluate is not None:
        return bool(evaluate)
    return bool(measures)


def default_width(size: int, budget: int = SUBSET_BUDGET) -> int:
    """The widest basket whose ``size``-subsets stay within ``budget``."""
    if size <= 1:
        return 2**62
    width = size
    while math.comb(width + 1, size) <= budget:
        width += 1
    return width


def check_basket_width(b: Baskets, size: int, max_basket_size: int | None, what: str,
                       lengths: np.ndarray | None = None) -> int:
    """Refuse a basket too wide for an algorithm that enumerates its ``size``-subsets.

    ``max_basket_size`` ``None`` allows baskets whose ``size``-subsets number at most
    :data:`SUBSET_BUDGET`.  Returns the limit applied.

    Raises
    ------
    InputError
        Naming the first widest transaction (its 1-based position, which is its line in a
        FIMI or JSON-lines file without blank lines), its width and the limit.
    """
    limit = default_width(size) if max_basket_size is None else check_int(
        max_basket_size, "max_basket_size", 1)
    lens = b.lengths if lengths is None else lengths
    if lens.size and int(lens.max()) > limit:
        i = int(lens.argmax())
        width = int(lens[i])
        raise InputError(
            f"transaction {i + 1} has {width:,} items; {what} enumerates its "
            f"{math.comb(width, size):,} {size}-item subsets, over the limit of {limit:,} items "
            f"per transaction (split or drop such baskets, or raise max_basket_size / "
            f"--max-basket-size if memory allows)", row=i + 1, value=width)
    return limit


def publication_order(key: Any, n: int, *context: Any) -> np.ndarray:
    """A secret permutation of ``n`` published transactions (from the release key)."""
    return key.rng("transaction-order", *context).permutation(n).astype(np.int64)


def k_one_warning(k: int, name: str = "k") -> list[str]:
    if k == 1:
        return [f"{name}=1 gives no protection: every transaction may stay unique"]
    return []


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
