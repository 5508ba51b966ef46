"""Checks recomputed from a published release alone (no algorithm state)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from structanon import CheckResult

from ._data import count_itemsets, encode_baskets

__all__ = ["KmAnonymity", "TransactionKAnonymity", "PrivacyDegree", "check_km",
           "check_k_transactions", "check_band"]


class KmAnonymity:
    """k^m-anonymity: every itemset of at most ``m`` published items is in 0 or >= k transactions."""

    monotone = True
    requires_sensitive = False

    def __init__(self, k: int, m: int) -> None:
        self.k, self.m = int(k), int(m)
        self.name = f"km-anonymity(k={self.k}, m={self.m})"

    def to_dict(self) -> dict[str, Any]:
        return {"model": "km-anonymity", "k": self.k, "m": self.m}

    def __repr__(self) -> str:
        return self.name


class TransactionKAnonymity:
    """k-anonymity of whole transactions: every published transaction is shared by >= k people."""

    monotone = True
    requires_sensitive = False

    def __init__(self, k: int) -> None:
        self.k = int(k)
        self.name = f"k-anonymity(k={self.k})"

    def to_dict(self) -> dict[str, Any]:
        return {"model": "k-anonymity of transactions", "k": self.k}


class PrivacyDegree:
    """Band-matrix privacy degree p: no sensitive item tied to a person with probability > 1/p."""

    monotone = False
    requires_sensitive = True

    def __init__(self, p: int) -> None:
        self.p = int(p)
        self.name = f"privacy-degree(p={self.p})"

    def to_dict(self) -> dict[str, Any]:
        return {"model": "band-matrix privacy degree", "p": self.p}


def _published(data: Sequence[Any]) -> list[Any]:
    return [t for t in data if t is not None]


def check_km(data: Sequence[Any], k: int, m: int) -> list[CheckResult]:
    """Recount every itemset of size 1..m of the published transactions."""
    b = encode_baskets(_published(data), stringify=True)
    base = max(int(b.domain.size), 1)
    worst, n_sets, n_bad = np.inf, 0, 0
    per_size = {}
    for size in range(1, m + 1):
        _keys, counts = count_itemsets(b.indptr, b.codes, size, base)
        bad = int((counts < k).sum())
        per_size[str(size)] = {"itemsets": int(counts.size), "violations": bad}
        n_sets += int(counts.size)
        n_bad += bad
        if counts.size:
            worst = min(worst, float(counts.min()))
    model = KmAnonymity(k, m)
    return [CheckResult(model=model.name, passed=n_bad == 0,
                        worst=float(worst) if np.isfinite(worst) else float(k),
                        threshold=float(k), n_groups=n_sets,
                        failing_groups=np.arange(n_bad, dtype=np.int64),
                        details={"itemsets_by_size": per_size})]


def check_k_transactions(data: Sequence[Any], k: int) -> list[CheckResult]:
    """Every distinct published transaction (as a set of labels) occurs >= k times."""
    exact: dict[frozenset, int] = {}
    for t in _published(data):
        key = frozenset(str(x) for x in t)
        exact[key] = exact.get(key, 0) + 1
    counts = np.array(list(exact.values()), dtype=np.int64)
    bad = np.flatnonzero(counts < k)
    model = TransactionKAnonymity(k)
    return [CheckResult(model=model.name, passed=bad.size == 0,
                        worst=float(counts.min()) if counts.size else float(k),
                        threshold=float(k), n_groups=int(counts.size), failing_groups=bad)]


def check_band(data: dict[str, Any], p: int) -> list[CheckResult]:
    """Recompute group sizes from the published group labels; bound every sensitive count."""
    group = np.asarray(data["group"], dtype=np.int64)
    qi = data["qi"]
    sensitive = {str(s) for s in data["sensitive_items"]}
    summaries = data["sensitive_counts"]
    kept = group >= 0
    n_groups = len(summaries)
    sizes = np.bincount(group[kept], minlength=n_groups) if kept.any() else np.zeros(n_groups, int)
    ratio = np.zeros(n_groups)
    bad = []
    for g, summary in enumerate(summaries):
        top = max(summary.values()) if summary else 0
        ratio[g] = top / sizes[g] if sizes[g] else (np.inf if top else 0.0)
        if top * p > sizes[g] or any(str(s) not in sensitive for s in summary):
            bad.append(g)
    leaked = sum(1 for t in qi if t is not None and any(str(x) in sensitive for x in t))
    consistent = int(group.max(initial=-1)) < n_groups and len(qi) == group.size and all(
        (t is None) == (g < 0) for t, g in zip(qi, group.tolist()))
    model = PrivacyDegree(p)
    return [CheckResult(model=model.name, passed=not bad and leaked == 0 and consistent,
                        worst=float(ratio.max()) if n_groups else 0.0, threshold=1.0 / p,
                        n_groups=n_groups, failing_groups=np.asarray(bad, dtype=np.int64),
                        details={"transactions_leaking_sensitive_items": leaked,
                                 "labels_consistent": bool(consistent)})]


def make_verifier(fn: Callable[..., list[CheckResult]], **params: Any):
    def verifier(data: Any) -> list[CheckResult]:
        return fn(data, **params)

    return verifier
