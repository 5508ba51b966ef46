"""The privacy models of set-valued data, each re-checked from a published release alone.

Every model subclasses :class:`structanon.models.PrivacyModel` and declares whether it is
``monotone`` (generalizing a satisfying release further keeps it satisfied) and
``monotone_with_suppression``.  Their :meth:`check` takes the published data (no algorithm
state) and recounts what the guarantee is about: itemset supports (k^m-anonymity), copies
of each whole transaction (k-anonymity), sensitive-item shares per group (privacy degree).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from structanon import CheckResult, Partition
from structanon._validation import check_int
from structanon.models import KAnonymity, PrivacyModel

from ._data import count_itemsets, encode_baskets, itemsets_of

__all__ = [
    "KmAnonymity",
    "TransactionKAnonymity",
    "PrivacyDegree",
    "ChunkKmAnonymity",
    "make_verifier",
    "make_disassociation_verifier",
]


def _published(data: Sequence[Any]) -> list[Any]:
    return [t for t in data if t is not None]


class _ItemsetSupports(PrivacyModel):
    """Shared parts of the models that bound the support of every itemset of 1..m items."""

    def __init__(self, k: int, m: int) -> None:
        self.k = check_int(k, "k", min_value=1)
        self.m = check_int(m, "m", min_value=1)

    @property
    def threshold(self) -> float:
        return float(self.k)

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name, "k": self.k, "m": self.m}

    def _tally(self, supports: Callable[[int], np.ndarray]) -> tuple[float, int, int, dict]:
        """Worst support, itemsets, violations and per-size counts over sizes 1..m.

        ``supports(size)`` returns the support of every itemset of ``size`` items.
        """
        worst, n_sets, n_bad = np.inf, 0, 0
        per_size = {}
        for size in range(1, self.m + 1):
            counts = supports(size)
            bad = int((counts < self.k).sum())
            per_size[str(size)] = {"itemsets": int(counts.size), "violations": bad}
            n_sets += int(counts.size)
            n_bad += bad
            if counts.size:
                worst = min(worst, float(counts.min()))
        return (float(worst) if np.isfinite(worst) else float(self.k)), n_sets, n_bad, per_size


class KmAnonymity(_ItemsetSupports):
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

    def check(
        self, partition: Any, sensitive: Any = None, reference: np.ndarray | None = None
    ) -> CheckResult:
        """Recount every itemset of size 1..m of the published transactions ``partition``."""
        b = encode_baskets(_published(partition), stringify=True)
        base = max(int(b.domain.size), 1)
        worst, n_sets, n_bad, per_size = self._tally(
            lambda size: count_itemsets(b.indptr, b.codes, size, base)[1]
        )
        return CheckResult(
            model=self.describe(),
            passed=n_bad == 0,
            worst=worst,
            threshold=float(self.k),
            n_groups=n_sets,
            failing_groups=np.arange(n_bad, dtype=np.int64),
            details={"itemsets_by_size": per_size},
        )


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


def _field(cluster: Any, name: str, default: Any = None) -> Any:
    if isinstance(cluster, dict):
        return cluster.get(name, default)
    return getattr(cluster, name, default)


class _Walk:
    """Every chunk of a (possibly nested) list of clusters, with structural problems."""

    def __init__(self, data: Sequence[Any]) -> None:
        self.subrecords: list[Any] = []
        self.chunk_of: list[int] = []
        self.problems: list[str] = []
        self.leaf_sizes: list[int] = []
        self.n_chunks = 0
        self.published = 0
        self.term_entries = 0
        for c, cluster in enumerate(data):
            self.visit(cluster, f"cluster {c}")

    def visit(self, cluster: Any, where: str) -> None:
        size = int(_field(cluster, "size"))
        members = _field(cluster, "clusters", None) or []
        term = {str(x) for x in _field(cluster, "term_chunk")}
        self.term_entries += len(term)
        seen: set[str] = set(term)
        for j, chunk in enumerate(_field(cluster, "record_chunks")):
            if len(chunk) != size:
                self.problems.append(f"{where} chunk {j}: {len(chunk)} subrecords for {size}")
            full = [sub for sub in chunk if sub]
            items = {str(x) for sub in full for x in sub}
            if items & seen:
                self.problems.append(f"{where} chunk {j}: items shared with another chunk")
            seen |= items
            self.subrecords.extend(full)
            self.chunk_of.extend([self.n_chunks] * len(full))
            self.published += sum(len(sub) for sub in full)
            self.n_chunks += 1
        if not members:
            self.leaf_sizes.append(size)
            return
        if term:
            self.problems.append(f"{where}: a joint cluster with a term chunk")
        if sum(int(_field(x, "size")) for x in members) != size:
            self.problems.append(f"{where}: member sizes do not add up to {size}")
        for i, member in enumerate(members):
            self.visit(member, f"{where}.{i}")


class ChunkKmAnonymity(_ItemsetSupports):
    """k^m-anonymity of every record chunk of a disassociated release (Terrovitis et al. 2012).

    Checked from the published clusters alone: in every record chunk (and every shared
    chunk of a joint cluster), every itemset of 1..m items present in its subrecords is in
    at least ``k`` of them; every chunk lists exactly ``size`` subrecords; the chunks and
    the term chunk of a cluster and the shared chunks of the joint clusters above it have
    disjoint items; member sizes add up to a joint cluster's size; every cluster holds at
    least ``k`` transactions (unless the whole release holds fewer).  ``worst`` is the
    smallest support of an itemset in a chunk.

    Disassociation publishes items unchanged, so the model is not monotone in the
    generalization sense; it is not closed under suppression either.

    Examples
    --------
    >>> data = [{"size": 2, "record_chunks": [[{"a"}, {"a"}], [{"b"}, set()]],
    ...          "term_chunk": {"c"}}]
    >>> ChunkKmAnonymity(2, 2).check(data).passed
    False
    >>> ChunkKmAnonymity(1, 2).check(data).passed
    True
    """

    name = "disassociation k^m-anonymity"
    monotone = False
    monotone_with_suppression = False

    def check(
        self, partition: Any, sensitive: Any = None, reference: np.ndarray | None = None
    ) -> CheckResult:
        """Recount every itemset of size 1..m per record chunk of the clusters ``partition``."""
        return self.check_walk(_Walk(list(getattr(partition, "data", partition))))

    def check_walk(self, walk: _Walk) -> CheckResult:
        """The check on clusters already walked (the verifier walks them once)."""
        problems = list(walk.problems)
        sizes = walk.leaf_sizes
        if sum(sizes) >= self.k and any(s < self.k for s in sizes):
            problems.append(f"{sum(s < self.k for s in sizes)} cluster(s) of fewer than k")
        b = encode_baskets(walk.subrecords, stringify=True)
        base = max(int(b.domain.size), 1)
        chunk = np.asarray(walk.chunk_of, dtype=np.int64)
        worst, n_sets, n_bad, per_size = self._tally(
            lambda size: _per_chunk_counts(b.indptr, b.codes, chunk, size, base)
        )
        return CheckResult(
            model=self.describe(),
            passed=n_bad == 0 and not problems,
            worst=worst,
            threshold=float(self.k),
            n_groups=n_sets,
            failing_groups=np.arange(n_bad, dtype=np.int64),
            details={
                "clusters": len(sizes),
                "record_chunks": walk.n_chunks,
                "itemsets_by_size": per_size,
                "structure_problems": problems[:10],
            },
        )


def _per_chunk_counts(
    indptr: np.ndarray, codes: np.ndarray, chunk: np.ndarray, size: int, base: int
) -> np.ndarray:
    """Support of every (chunk, itemset of ``size`` items) present."""
    parts: list[np.ndarray] = []
    for keys, rows in itemsets_of(indptr, codes, size, base):
        pair = np.stack([chunk[rows], keys], axis=1)
        parts.append(pair)
    if not parts:
        return np.zeros(0, dtype=np.int64)
    allp = np.concatenate(parts)
    order = np.lexsort((allp[:, 1], allp[:, 0]))
    allp = allp[order]
    new = np.ones(allp.shape[0], dtype=bool)
    new[1:] = (allp[1:] != allp[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    return np.diff(np.append(starts, allp.shape[0])).astype(np.int64)


def _accounting(
    data: Sequence[Any], totals: dict[str, int], k: int, walk: _Walk | None = None
) -> CheckResult:
    """Every input transaction and item occurrence accounted for, from the release's totals."""
    data = list(data)
    walk = walk if walk is not None else _Walk(data)
    records = sum(int(_field(c, "size")) for c in data)
    published, term_entries = walk.published, walk.term_entries
    term = int(totals["term_chunk_occurrences"])
    suppressed = int(totals.get("suppressed_occurrences", 0))
    problems = []
    if records != totals["transactions"]:
        problems.append(f"{records} transactions in clusters, {totals['transactions']} in input")
    if published + term + suppressed != totals["item_occurrences"]:
        problems.append(
            f"{published} published + {term} term + {suppressed} suppressed occurrences "
            f"!= {totals['item_occurrences']} in input"
        )
    if not term_entries <= term <= max(k - 1, 1) * term_entries:
        problems.append(f"{term} term occurrences for {term_entries} term items")
    return CheckResult(
        model="item accounting",
        passed=not problems,
        worst=float(len(problems)),
        threshold=0.0,
        n_groups=len(data),
        failing_groups=np.arange(len(problems), dtype=np.int64),
        details={
            "transactions": records,
            "published_occurrences": published,
            "term_chunk_occurrences": term,
            "term_chunk_items": term_entries,
            "suppressed_occurrences": suppressed,
            "problems": problems,
        },
    )


def make_disassociation_verifier(model: ChunkKmAnonymity, totals: dict[str, int]):
    """``verifier(clusters)``: the per-chunk recount and the accounting of every occurrence.

    ``totals`` are the input sizes the release publishes in ``info["disassociation"]``
    (transactions, item occurrences, term-chunk and suppressed occurrences).
    """

    def verifier(data: Any) -> list[CheckResult]:
        walk = _Walk(list(data))
        return [model.check_walk(walk), _accounting(data, totals, model.k, walk)]

    return verifier


def make_verifier(*models: PrivacyModel):
    """``verifier(data)``: every model re-checked from the published data alone."""

    def verifier(data: Any) -> list[CheckResult]:
        return [model.check(data) for model in models]

    return verifier
