"""Compressed-row representation of set-valued data and vectorized itemset counting.

A dataset of ``n`` transactions is held as ``indptr`` (int64, ``n + 1``) and ``codes``
(int32): the items of transaction ``t`` are ``codes[indptr[t]:indptr[t + 1]]``, sorted and
unique.  ``domain[codes]`` gives the original items.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from structanon._engine import reject_dask
from structanon.errors import InputError
from structanon.partition import encode_values

__all__ = ["Baskets", "encode_baskets", "count_itemsets", "itemsets_of", "dedupe_rows"]


@dataclass
class Baskets:
    """Transactions as CSR arrays over an encoded item domain."""

    indptr: np.ndarray
    codes: np.ndarray
    domain: np.ndarray
    n_empty: int = 0
    n_duplicates: int = 0
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.indptr.size - 1)

    @property
    def nnz(self) -> int:
        return int(self.codes.size)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    @property
    def rows(self) -> np.ndarray:
        """Transaction index of every item occurrence."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.lengths)

    def input_stats(self) -> dict[str, int]:
        return {
            "transactions": self.n,
            "items": int(self.domain.size),
            "item_occurrences": self.nnz,
            "empty_transactions": int(self.n_empty),
            "duplicate_items_removed": int(self.n_duplicates),
        }


def dedupe_rows(
    rows: np.ndarray, codes: np.ndarray, n: int, base: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sort and de-duplicate ``(row, code)`` pairs; return ``(indptr, codes)``."""
    keys = np.unique(rows.astype(np.int64) * np.int64(base) + codes.astype(np.int64))
    out_rows = keys // base
    out_codes = (keys - out_rows * base).astype(np.int32)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(out_rows, minlength=n), out=indptr[1:])
    return indptr, out_codes


def _item_domain(flat: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Encode a flat list of items to codes over a sorted domain (ints or strings, not mixed)."""
    if not flat:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=object)
    kind = pd.api.types.infer_dtype(flat, skipna=False)
    if kind == "integer":
        try:
            arr = np.asarray(flat, dtype=np.int64)
        except OverflowError:
            big = next(x for x in flat if not -(2**63) <= x < 2**63)
            raise InputError(
                "integer item does not fit 64 bits; read items as text", value=str(big)[:40]
            ) from None
    elif kind == "string":
        arr = np.asarray(flat, dtype=object)
    else:
        ints = sum(1 for x in flat if isinstance(x, numbers.Integral) and not isinstance(x, bool))
        strs = sum(1 for x in flat if isinstance(x, str))
        if ints and strs and ints + strs == len(flat):
            raise InputError("items mix integers and strings; use one type for every item")
        bad = next(
            x for x in flat if isinstance(x, bool) or not isinstance(x, (numbers.Integral, str))
        )
        raise InputError("items must be integers or strings", value=repr(bad)[:60])
    codes, domain = encode_values(arr)  # the core's encoder: hashing, then sort the uniques
    return codes.astype(np.int32), domain.astype(object)


def encode_baskets(
    transactions: Any, name: str = "transactions", stringify: bool = False
) -> Baskets:
    """Encode an iterable of item collections (sets, lists, a pandas Series of sets).

    A two-column pandas DataFrame is read as a long ``(transaction, item)`` table
    (:func:`transactions.from_long`).

    Duplicate items inside a transaction are removed and counted; empty transactions are
    kept (and counted).  ``stringify`` compares items by their text (for published labels,
    which mix original items and taxonomy node names).

    Raises
    ------
    InputError
        When a transaction is not a collection (a string, a number, None) or items are of
        unsupported or mixed types; the message names the transaction's position.
    """
    if isinstance(transactions, Baskets):
        return transactions
    reject_dask(transactions, "transaction anonymization")
    if isinstance(transactions, pd.DataFrame):  # a long (transaction, item) table
        from ._long import from_long

        transactions = from_long(transactions)
    if isinstance(transactions, (str, bytes)) or not isinstance(transactions, Iterable):
        raise InputError(f"{name} must be an iterable of item collections")
    if hasattr(transactions, "to_numpy") and hasattr(transactions, "index"):
        transactions = transactions.to_numpy()  # pandas Series of sets
    lengths: list[int] = []
    flat: list[Any] = []
    for i, t in enumerate(transactions):
        if isinstance(t, (str, bytes, dict)) or not isinstance(t, Iterable):
            raise InputError(
                "each transaction must be a set, list or tuple of items", row=i, value=repr(t)[:60]
            )
        before = len(flat)
        flat.extend(t)
        lengths.append(len(flat) - before)
    n = len(lengths)
    if stringify:
        flat = [str(x) for x in flat]
    codes, domain = _item_domain(flat)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.asarray(lengths, dtype=np.int64))
    indptr, codes = dedupe_rows(rows, codes, n, max(int(domain.size), 1))
    lens = np.diff(indptr)
    return Baskets(
        indptr=indptr,
        codes=codes,
        domain=domain,
        n_empty=int((lens == 0).sum()),
        n_duplicates=len(flat) - int(codes.size),
    )


_TEMPLATES: dict[tuple[int, int], np.ndarray] = {}


def _template(length: int, size: int) -> np.ndarray:
    key = (length, size)
    if key in _TEMPLATES:
        return _TEMPLATES[key]
    tmpl = np.array(list(itertools.combinations(range(length), size)), dtype=np.int64).reshape(
        -1, size
    )
    if tmpl.shape[0] <= 100_000:  # keep small templates only: memory stays bounded
        _TEMPLATES[key] = tmpl
    return tmpl


def check_key_space(base: int, size: int) -> None:
    if float(base) ** size >= 2.0**62:
        raise InputError(
            f"itemsets of size {size} over {base} labels do not fit 64-bit keys; use a smaller m",
            value=size,
        )


def itemsets_of(
    indptr: np.ndarray, codes: np.ndarray, size: int, base: int, chunk: int = 2_000_000
):
    """Yield ``(keys, rows)`` chunks: every ``size``-subset of every transaction.

    ``codes`` must be sorted and unique within each transaction.  A key is the itemset's
    codes in base ``base`` (most significant first), so equal itemsets have equal keys.
    """
    check_key_space(base, size)
    lens = np.diff(indptr)
    if size == 1:
        rows = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
        yield codes.astype(np.int64), rows
        return
    weights = np.int64(base) ** np.arange(size - 1, -1, -1, dtype=np.int64)
    for length in np.unique(lens[lens >= size]):
        tmpl = _template(int(length), size)
        rows_l = np.flatnonzero(lens == length)
        step = max(1, chunk // tmpl.shape[0])
        for start in range(0, rows_l.size, step):
            rows = rows_l[start : start + step]
            idx = indptr[rows][:, None, None] + tmpl[None, :, :]
            keys = (codes[idx].astype(np.int64) * weights).sum(axis=2)
            yield keys.reshape(-1), np.repeat(rows, tmpl.shape[0])


def count_itemsets(
    indptr: np.ndarray, codes: np.ndarray, size: int, base: int
) -> tuple[np.ndarray, np.ndarray]:
    """Support of every ``size``-itemset present: ``(keys, counts)``, keys sorted."""
    if size == 1:
        counts = np.bincount(codes, minlength=base).astype(np.int64)
        keys = np.flatnonzero(counts)
        return keys.astype(np.int64), counts[keys]
    parts_k: list[np.ndarray] = []
    parts_c: list[np.ndarray] = []
    for keys, _rows in itemsets_of(indptr, codes, size, base):
        k, c = np.unique(keys, return_counts=True)
        parts_k.append(k)
        parts_c.append(c)
    if not parts_k:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if len(parts_k) == 1:
        return parts_k[0], parts_c[0].astype(np.int64)
    allk = np.concatenate(parts_k)
    keys, inv = np.unique(allk, return_inverse=True)
    counts = np.bincount(inv.reshape(-1), weights=np.concatenate(parts_c), minlength=keys.size)
    return keys, counts.astype(np.int64)


def decode_keys(keys: np.ndarray, size: int, base: int) -> np.ndarray:
    """Inverse of the itemset key: array ``(len(keys), size)`` of codes."""
    out = np.empty((keys.size, size), dtype=np.int64)
    rest = keys.astype(np.int64).copy()
    for j in range(size - 1, -1, -1):
        out[:, j] = rest % base
        rest //= base
    return out
