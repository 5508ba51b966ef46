"""Privacy models as predicates over a :class:`~structanon.Partition`.

Every model offers

* ``check(partition, sensitive=None)`` -> :class:`~structanon.CheckResult` (failing groups,
  worst value);
* ``group_values(counts, reference=None, domain=None)`` and ``group_ok(...)``: vectorized
  per-group tests that algorithms call on candidate groups (``counts`` is a groups x
  sensitive-values contingency table, or a vector of group sizes for k-anonymity);
* ``monotone``: whether a generalization of a satisfying release satisfies it too, so
  lattice searches may prune;
* ``monotone_with_suppression``: whether that still holds when the records of failing
  groups are suppressed up to a limit (true for k-anonymity and distinct l-diversity only);
* ``needs_reference``: whether a group's value depends on the whole table's distribution
  (t-closeness), so the reference must be computed once, from all records.

Models know nothing about search; algorithms ask them whether groups are acceptable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validation import check_int
from .distances import DISTANCES, emd_many
from .errors import InputError
from .hierarchy import Hierarchy
from .partition import Partition
from .release import CheckResult

__all__ = [
    "PrivacyModel",
    "KAnonymity",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "RecursiveCLDiversity",
    "TCloseness",
    "check_models",
]

_EPS = 1e-9


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer >= 1, got {value!r}")
    return check_int(value, name, min_value=1)


class PrivacyModel:
    """Base class: subclasses define ``group_values`` and the comparison.

    Search algorithms read the class flags, never a model's type: ``monotone`` (a
    generalization of a satisfying release satisfies it too), ``monotone_with_suppression``
    (still so when failing groups are suppressed), ``requires_sensitive`` and
    ``needs_reference`` (the table-wide distribution is needed).  Data types whose model is
    not a per-group predicate (km-anonymity, degree k-anonymity...) subclass it too and
    override :meth:`check`.
    """

    name = "model"
    monotone = True
    monotone_with_suppression = False
    requires_sensitive = False
    needs_reference = False
    higher_is_better = True

    @property
    def threshold(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def group_values(
        self,
        counts: np.ndarray,
        reference: np.ndarray | None = None,
        domain: Sequence[Any] | np.ndarray | None = None,
    ) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    def group_ok(
        self,
        counts: np.ndarray,
        reference: np.ndarray | None = None,
        domain: Sequence[Any] | np.ndarray | None = None,
    ) -> np.ndarray:
        """Boolean array: which groups satisfy the model."""
        values = self.group_values(counts, reference, domain)
        if self.higher_is_better:
            return values >= self.threshold - _EPS
        return values <= self.threshold + _EPS

    def check(
        self, partition: Partition, sensitive: Any = None, reference: np.ndarray | None = None
    ) -> CheckResult:
        """Check every group of ``partition``.

        Parameters
        ----------
        partition : Partition
        sensitive : array (n,), optional
            Sensitive value of each individual (required by l-diversity and t-closeness).
        reference : array, optional
            Table-wide distribution for t-closeness, over the sensitive domain (sorted).
            Default: the distribution over all individuals in ``sensitive``.
        """
        if self.requires_sensitive:
            if sensitive is None:
                raise InputError(f"{self.describe()} needs the sensitive values")
            counts, domain = partition.contingency(sensitive)
            if reference is None:
                from .partition import encode_values

                codes, _ = encode_values(sensitive)
                reference = np.bincount(codes, minlength=domain.size)
        else:
            counts, domain = partition.sizes, None
        if partition.n_groups == 0:
            return CheckResult(
                self.describe(), True, float("nan"), self.threshold, 0, details={"empty": True}
            )
        values = self.group_values(counts, reference, domain)
        ok = self.group_ok(counts, reference, domain)
        worst = float(values.min() if self.higher_is_better else values.max())
        return CheckResult(
            self.describe(),
            bool(ok.all()),
            worst,
            float(self.threshold),
            partition.n_groups,
            np.flatnonzero(~ok),
        )

    def describe(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.to_dict().items() if k != "model")
        return f"{self.name}({params})"

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError  # pragma: no cover

    def __repr__(self) -> str:
        return self.describe()


def _sizes(counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts)
    return counts if counts.ndim == 1 else counts.sum(axis=1)


class KAnonymity(PrivacyModel):
    """k-anonymity: every group holds at least ``k`` individuals (Samarati & Sweeney 1998).

    Examples
    --------
    >>> KAnonymity(2).check(Partition([0, 0, 1, 1, 1])).passed
    True
    >>> KAnonymity(3).group_ok([2, 3, 4]).tolist()
    [False, True, True]
    """

    name = "k-anonymity"
    monotone_with_suppression = True

    def __init__(self, k: int) -> None:
        self.k = _positive_int("k", k)

    @property
    def threshold(self) -> float:
        return float(self.k)

    def group_values(self, counts, reference=None, domain=None):
        return _sizes(counts).astype(float)

    def to_dict(self):
        return {"model": self.name, "k": self.k}


class DistinctLDiversity(PrivacyModel):
    """Distinct l-diversity: every group holds at least ``l`` distinct sensitive values.

    Examples
    --------
    >>> DistinctLDiversity(2).group_ok([[1, 1, 0], [3, 0, 0]]).tolist()
    [True, False]
    """

    name = "distinct-l-diversity"
    monotone_with_suppression = True
    requires_sensitive = True

    def __init__(self, l: int) -> None:
        self.l = _positive_int("l", l)

    @property
    def threshold(self) -> float:
        return float(self.l)

    def group_values(self, counts, reference=None, domain=None):
        return (np.atleast_2d(counts) > 0).sum(axis=1).astype(float)

    def to_dict(self):
        return {"model": self.name, "l": self.l}


class EntropyLDiversity(PrivacyModel):
    """Entropy l-diversity: ``-sum_s p(s) log p(s) >= log(l)`` in every group.

    The per-group value reported is ``exp(entropy)``, the group's effective number of values.

    Examples
    --------
    >>> EntropyLDiversity(2).group_ok([[1, 1], [3, 1]]).tolist()
    [True, False]
    """

    name = "entropy-l-diversity"
    requires_sensitive = True

    def __init__(self, l: float) -> None:
        if isinstance(l, bool) or not isinstance(l, (int, float, np.number)) or l < 1:
            raise InputError(f"l must be a number >= 1, got {l!r}")
        self.l = float(l)

    @property
    def threshold(self) -> float:
        return self.l

    def group_values(self, counts, reference=None, domain=None):
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        tot = c.sum(axis=1, keepdims=True)
        p = np.divide(c, tot, out=np.zeros_like(c), where=tot > 0)
        logp = np.log(p, out=np.zeros_like(p), where=p > 0)
        return np.exp(-(p * logp).sum(axis=1))

    def to_dict(self):
        return {"model": self.name, "l": self.l}


class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c, l)-diversity: ``r_1 < c (r_l + r_{l+1} + ... + r_m)`` in every group.

    ``r_i`` is the i-th largest count of a sensitive value in the group (Machanavajjhala
    et al. 2007).  The per-group value reported is ``r_1 / (r_l + ... + r_m)``, which must be
    strictly below ``c``; a group with fewer than ``l`` distinct values fails (its tail sum
    is 0).

    Examples
    --------
    >>> RecursiveCLDiversity(2, 2).group_ok([[3, 2, 1], [4, 1, 1], [2, 0, 0]]).tolist()
    [True, False, False]
    """

    name = "recursive-cl-diversity"
    requires_sensitive = True
    higher_is_better = False

    def __init__(self, c: float, l: int) -> None:
        if isinstance(c, bool) or not isinstance(c, (int, float, np.number)) or c <= 0:
            raise InputError(f"c must be a positive number, got {c!r}")
        self.c = float(c)
        self.l = _positive_int("l", l)

    @property
    def threshold(self) -> float:
        return self.c

    def group_values(self, counts, reference=None, domain=None):
        c = -np.sort(-np.atleast_2d(np.asarray(counts, dtype=float)), axis=1)
        top = c[:, 0]
        tail = c[:, self.l - 1 :].sum(axis=1) if self.l - 1 < c.shape[1] else np.zeros(c.shape[0])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(tail > 0, top / np.where(tail > 0, tail, 1.0), np.inf)

    def group_ok(self, counts, reference=None, domain=None):
        return self.group_values(counts, reference, domain) < self.c

    def to_dict(self):
        return {"model": self.name, "c": self.c, "l": self.l}


class TCloseness(PrivacyModel):
    """t-closeness: each group's sensitive distribution is within EMD ``t`` of the table's.

    Parameters
    ----------
    t : float in [0, 1]
    distance : {"equal", "ordered", "hierarchical"}
        Ground distance of the Earth Mover's Distance (see :mod:`structanon.distances`).
    hierarchy : Hierarchy, optional
        Required for ``hierarchical``.

    Examples
    --------
    >>> m = TCloseness(0.2)
    >>> m.group_ok([[1, 1], [2, 0]], reference=[2, 2]).tolist()
    [True, False]
    """

    name = "t-closeness"
    requires_sensitive = True
    needs_reference = True
    higher_is_better = False

    def __init__(
        self, t: float, distance: str = "equal", hierarchy: Hierarchy | None = None
    ) -> None:
        if isinstance(t, bool) or not isinstance(t, (int, float, np.number)) or not 0 <= t <= 1:
            raise InputError(f"t must be a number in [0, 1], got {t!r}")
        if distance not in DISTANCES:
            raise InputError(f"distance must be one of {DISTANCES}, got {distance!r}")
        if distance == "hierarchical" and not isinstance(hierarchy, Hierarchy):
            raise InputError("hierarchical t-closeness needs a structanon.Hierarchy")
        self.t = float(t)
        self.distance = distance
        self.hierarchy = hierarchy

    @property
    def threshold(self) -> float:
        return self.t

    def group_values(self, counts, reference=None, domain=None):
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        ref = c.sum(axis=0) if reference is None else np.asarray(reference, dtype=float)
        return emd_many(c, ref, self.distance, domain, self.hierarchy)

    def to_dict(self):
        return {"model": self.name, "t": self.t, "distance": self.distance}


def check_models(
    models: Sequence[PrivacyModel],
    partition: Partition,
    sensitive: Any = None,
    reference: np.ndarray | None = None,
) -> list[CheckResult]:
    """Check several models on one partition (the contingency table is built per model)."""
    return [m.check(partition, sensitive, reference) for m in models]
