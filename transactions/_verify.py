"""The privacy models of set-valued data, each re-checked from a published release alone.

Every model subclasses :class:`structanon.models.PrivacyModel` and declares whether it is
``monotone`` (generalizing a satisfying release further keeps it satisfied) and
``monotone_with_suppression``.  Their :meth:`check` takes the published data (no algorithm
state) and recounts what the guarantee is about: itemset supports (k^m-anonymity), copies
of each whole transaction (k-anonymity), sensitive-item shares per group (privacy degree).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from structanon import CheckResult, Partition
from structanon._validation import check_int
from structanon.models import KAnonymity, PrivacyModel

from ._data import count_itemsets, encode_baskets

__all__ = ["KmAnonymity", "TransactionKAnonymity", "PrivacyDegree", "make_verifier"]


def _published(data: Sequence[Any]) -> list[Any]:
    return [t for t in data if t is not None]


class KmAnonymity(PrivacyModel):
    """k^m-anonymity: every itemset of at most ``m`` published items is in 0 or >= k transactions.

    Generalizing further only merges supports, so the model is monotone; suppressing the
    transactions of a violating itemset lowers other supports, so it is not monotone with
    suppression (Terrovitis et al. 2008).

    Examples
    --------
    >>> model = KmAnonymity(2, 2)
    >>> model.check([{"a", "b"}, {"a", "b"}, {"a"}]).passed
    True
    >>> model.check([{"a", "b"}, {"a", "c"}]).worst
    1.0
    >>> model.describe(), model.monotone, model.monotone_with_suppression
    ('km-anonymity(k=2, m=2)', True, False)
    """

    name = "km-anonymity"
    monotone = True
    monotone_with_suppression = False

    def __init__(self, k: int, m: int) -> None:
        self.k = check_int(k, "k", min_value=1)
        self.m = check_int(m, "m", min_value=1)

    @property
    def threshold(self) -> float:
        return float(self.k)

    def check(
        self, partition: Any, sensitive: Any = None, reference: np.ndarray | None = None
    ) -> CheckResult:
        """Recount every itemset of size 1..m of the published transactions ``partition``."""
        b = encode_baskets(_published(partition), stringify=True)
        base = max(int(b.domain.size), 1)
        worst, n_sets, n_bad = np.inf, 0, 0
        per_size = {}
        for size in range(1, self.m + 1):
            _keys, counts = count_itemsets(b.indptr, b.codes, size, base)
            bad = int((counts < self.k).sum())
            per_size[str(size)] = {"itemsets": int(counts.size), "violations": bad}
            n_sets += int(counts.size)
            n_bad += bad
            if counts.size:
                worst = min(worst, float(counts.min()))
        return CheckResult(
            model=self.describe(),
            passed=n_bad == 0,
            worst=float(worst) if np.isfinite(worst) else float(self.k),
            threshold=float(self.k),
            n_groups=n_sets,
            failing_groups=np.arange(n_bad, dtype=np.int64),
            details={"itemsets_by_size": per_size},
        )

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name, "k": self.k, "m": self.m}


class TransactionKAnonymity(KAnonymity):
    """k-anonymity of whole transactions: every published transaction is shared by >= k people.

    The groups are the sets of identical published transactions (labels compared by their
    text); like :class:`structanon.models.KAnonymity` it is monotone, also with suppression.

    Examples
    --------
    >>> model = TransactionKAnonymity(2)
    >>> model.check([{"a", "b"}, {"b", "a"}, {"c"}, {"c"}, None]).passed
    True
    >>> model.group_ok([1, 2, 3]).tolist()
    [False, True, True]
    """

    name = "k-anonymity"

    def __init__(self, k: int) -> None:  # integral floats (3.0) are accepted as in the CLI
        self.k = check_int(k, "k", min_value=1)

    def check(
        self, partition: Any, sensitive: Any = None, reference: np.ndarray | None = None
    ) -> CheckResult:
        """Check a :class:`~structanon.Partition`, or published transactions grouped by value."""
        if not isinstance(partition, Partition):
            exact: dict[frozenset, int] = {}
            for t in _published(partition):
                key = frozenset(str(x) for x in t)
                exact[key] = exact.get(key, 0) + 1
            counts = np.array(list(exact.values()), dtype=np.int64)
            bad = np.flatnonzero(counts < self.k)
            return CheckResult(
                model=self.describe(),
                passed=bad.size == 0,
                worst=float(counts.min()) if counts.size else float(self.k),
                threshold=float(self.k),
                n_groups=int(counts.size),
                failing_groups=bad,
            )
        return super().check(partition, sensitive, reference)

    def to_dict(self) -> dict[str, Any]:
        return {"model": "k-anonymity of transactions", "k": self.k}


class PrivacyDegree(PrivacyModel):
    """Band-matrix privacy degree p: no sensitive item tied to a person with probability > 1/p.

    Checked on a band-matrix release (a dict with ``qi``, ``group``, ``sensitive_counts``,
    ``sensitive_items``): group sizes are recounted from the published group labels, every
    sensitive count is bounded by ``size / p``, no published QI set holds a sensitive item,
    and labels are consistent.  The worst value is the largest sensitive share in a group.

    Examples
    --------
    >>> data = {"qi": [{"a"}, {"b"}], "group": [0, 0], "sensitive_counts": [{"x": 1}],
    ...         "sensitive_items": ["x"], "p": 2}
    >>> PrivacyDegree(2).check(data).passed, PrivacyDegree(3).check(data).passed
    (True, False)
    """

    name = "privacy-degree"
    monotone = False
    monotone_with_suppression = False
    requires_sensitive = True
    higher_is_better = False

    def __init__(self, p: int) -> None:
        self.p = check_int(p, "p", min_value=1)

    @property
    def threshold(self) -> float:
        return 1.0 / self.p

    def check(
        self, partition: Any, sensitive: Any = None, reference: np.ndarray | None = None
    ) -> CheckResult:
        """Check the published band-matrix release ``partition`` (its data dict)."""
        data = partition
        group = np.asarray(data["group"], dtype=np.int64)
        qi = data["qi"]
        sensitive_items = {str(s) for s in data["sensitive_items"]}
        summaries = data["sensitive_counts"]
        kept = group >= 0
        n_groups = len(summaries)
        sizes = (
            np.bincount(group[kept], minlength=n_groups) if kept.any() else np.zeros(n_groups, int)
        )
        ratio = np.zeros(n_groups)
        bad = []
        for g, summary in enumerate(summaries):
            top = max(summary.values()) if summary else 0
            ratio[g] = top / sizes[g] if sizes[g] else (np.inf if top else 0.0)
            if top * self.p > sizes[g] or any(str(s) not in sensitive_items for s in summary):
                bad.append(g)
        leaked = sum(1 for t in qi if t is not None and any(str(x) in sensitive_items for x in t))
        consistent = (
            int(group.max(initial=-1)) < n_groups
            and len(qi) == group.size
            and all((t is None) == (g < 0) for t, g in zip(qi, group.tolist()))
        )
        return CheckResult(
            model=self.describe(),
            passed=not bad and leaked == 0 and consistent,
            worst=float(ratio.max()) if n_groups else 0.0,
            threshold=1.0 / self.p,
            n_groups=n_groups,
            failing_groups=np.asarray(bad, dtype=np.int64),
            details={
                "transactions_leaking_sensitive_items": leaked,
                "labels_consistent": bool(consistent),
            },
        )

    def to_dict(self) -> dict[str, Any]:
        return {"model": "band-matrix privacy degree", "p": self.p}


def make_verifier(*models: PrivacyModel):
    """``verifier(data)``: every model re-checked from the published data alone."""

    def verifier(data: Any) -> list[CheckResult]:
        return [model.check(data) for model in models]

    return verifier
