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
  (t-closeness), so the reference must be computed once, from all records;
* ``min_group_size``: no group with fewer individuals can satisfy the model (``k`` for
  k-anonymity, ``l`` for the l-diversity variants that need ``l`` distinct values; 1 when
  the model implies no such bound), so searches may skip small groups and infer outcomes
  from k-anonymity.

Models know nothing about search; algorithms ask them whether groups are acceptable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validation import check_int
from .distances import DISTANCES, ancestor_matrix, emd_many, tree_emd
from .errors import InputError
from .hierarchy import Hierarchy
from .partition import Partition, encode_values
from .release import CheckResult

__all__ = [
    "PrivacyModel",
    "KAnonymity",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "RecursiveCLDiversity",
    "TCloseness",
    "BLikeness",
    "DeltaDisclosure",
    "DeltaPresence",
    "ProbabilisticLDiversity",
    "AlphaKAnonymity",
    "NTCloseness",
    "MultipleSensitive",
    "check_models",
    "joint_sensitive",
    "natural_supersets",
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
    def min_group_size(self) -> int:
        """Groups smaller than this fail the model whatever they hold (1: no such bound)."""
        return 1

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

    def share_caps(self, shares: np.ndarray) -> np.ndarray | None:
        """For a model whose test is exactly "no sensitive value makes up more than a cap of
        the group's records", the caps given the reference's shares ``shares`` (``inf``: no
        cap), such that :meth:`group_ok` is ``not (counts > totals * caps).any()`` per
        group; ``None`` for any other model.  Searches repeat that comparison on the same
        groups as the reference changes."""
        return None

    def share_cap_form(self) -> tuple[float, bool, float] | None:
        """``(gain, log_capped, eps)`` when :meth:`share_caps` is exactly ``p_s (1 + g_s +
        eps)`` for values of share ``p_s > 0`` (``inf`` for the others), with ``g_s = gain``,
        or ``min(gain, -ln p_s)`` when ``log_capped``, evaluated as ``p * ((1 + g) + eps)``;
        ``None`` for any other model.  Compiled searches compute the caps from it."""
        return None

    def suppression_excess(
        self,
        counts: np.ndarray,
        reference: np.ndarray,
        domain: Sequence[Any] | np.ndarray | None,
        drift: float,
    ) -> np.ndarray | None:
        """A bound a search may use on records that must be suppressed (``None``: none).

        For models that are not monotone with suppression: per group (rows of ``counts``,
        over the whole sensitive domain of ``reference``, the table-wide counts), a share
        ``e`` in [0, 1] such that

        * ``e = 0`` for every group that satisfies the model -- for models that
          ``need_reference``, against the distribution of some subset of the table missing
          at most a share ``drift`` of its records (the suppressed ones), measured on the
          values that subset holds;
        * a group made of smaller groups, of which some satisfy the model as above (their
          records ``R``), has ``size * e <= size - |R|``: at most the records of the
          others.  (Implied when ``size * e`` never increases when groups merge,
          ``|A u B| e(A u B) <= |A| e(A) + |B| e(B)``, as for the l-diversity models.)

        Then ``sum |E| e(E)`` over the classes of a generalization is at most what any
        finer node must suppress (its failing classes, and the classes it suppresses, lie
        inside the generalization's classes), and exceeds the suppression limit only where
        no finer node satisfies the model within it.
        """
        return None

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
            counts, domain, everyone = _contingency(partition, sensitive)
            if reference is None:
                reference = everyone
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


def _contingency(partition: Partition, sensitive: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``partition.contingency(sensitive)`` and the counts of every sensitive value over all
    individuals, from one encoding of the values (the same tables, encoded once)."""
    return partition.contingency_and_totals(sensitive)


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
    def min_group_size(self) -> int:
        return self.k

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
    def min_group_size(self) -> int:
        return self.l

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
        if (
            isinstance(l, bool)
            or not isinstance(l, (int, float, np.number))
            or not np.isfinite(l)
            or l < 1
        ):
            raise InputError(f"l must be a finite number >= 1, got {l!r}")
        self.l = float(l)

    @property
    def min_group_size(self) -> int:
        # exp(entropy) of d distinct values is at most d, so passing needs d >= l - eps
        return max(int(np.ceil(self.l - _EPS)), 1)

    @property
    def threshold(self) -> float:
        return self.l

    def group_values(self, counts, reference=None, domain=None):
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        tot = c.sum(axis=1, keepdims=True)
        p = np.divide(c, tot, out=np.zeros_like(c), where=tot > 0)
        logp = np.log(p, out=np.zeros_like(p), where=p > 0)
        return np.exp(-(p * logp).sum(axis=1))

    def suppression_excess(self, counts, reference=None, domain=None, drift=0.0):
        """See :meth:`PrivacyModel.suppression_excess`: ``(log l - H)_+ / (log l + log
        p_max)``, ``H`` the group's entropy (nats) and ``p_max`` its largest share.

        Split a group of distribution ``p`` into a share ``lam`` of records that are not
        released (distribution ``f``) and the released rest (``r``, made of passing groups:
        ``H(r) >= log l``, the entropy being concave).  By Gibbs' inequality ``H(r) <=
        -sum_v r_v log p_v``, and ``r = (p - lam f) / (1 - lam)`` gives ``(1 - lam) log l
        <= H + lam sum_v f_v log p_v <= H + lam log p_max`` (``f`` lies on the group's
        values).  Hence ``lam >= (log l - H) / (log l + log p_max)``, a share at most 1
        (``H >= -log p_max``); a failing group has ``p_max > 1 / l`` and a positive
        denominator.  Without the last term this is the plain concavity bound ``(log l -
        H) / log l``, which it always meets or exceeds."""
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        limit = np.log(max(self.l - 2 * _EPS, 1.0))
        if limit <= 0:
            return np.zeros(c.shape[0])
        tot = c.sum(axis=1, keepdims=True)
        p = np.divide(c, tot, out=np.zeros_like(c), where=tot > 0)
        logp = np.log(p, out=np.zeros_like(p), where=p > 0)
        entropy = -(p * logp).sum(axis=1)
        over = limit - entropy
        room = limit + np.log(np.maximum(p.max(axis=1, initial=0.0), 1e-300))
        share = np.divide(over, room, out=np.zeros_like(over), where=(over > 0) & (room > 0))
        return np.clip(share, 0.0, 1.0)

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
        if (
            isinstance(c, bool)
            or not isinstance(c, (int, float, np.number))
            or not np.isfinite(c)
            or c <= 0
        ):
            raise InputError(f"c must be a positive finite number, got {c!r}")
        self.c = float(c)
        self.l = _positive_int("l", l)

    @property
    def min_group_size(self) -> int:
        return self.l  # fewer than l distinct values leave an empty tail

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

    def suppression_excess(self, counts, reference=None, domain=None, drift=0.0):
        """See :meth:`PrivacyModel.suppression_excess`: ``(r_1 - c (r_l + ... + r_m))_+ /
        size``.  A passing group has ``r_1 < c (r_l + ... + r_m)``; the largest count is
        convex in the counts and the sum of the ``m - l + 1`` smallest is concave, so
        ``r_1 - c (r_l + ... + r_m)`` is convex and positively homogeneous, hence at most
        the sum of the parts' for a merged group; it never exceeds ``r_1 <= size``."""
        c = -np.sort(-np.atleast_2d(np.asarray(counts, dtype=float)), axis=1)
        top = c[:, 0]
        tail = c[:, self.l - 1 :].sum(axis=1) if self.l - 1 < c.shape[1] else np.zeros(c.shape[0])
        over = top - self.c * tail
        over -= 1e-9 * (top + self.c * tail)  # rounding: never count a passing group
        sizes = c.sum(axis=1)
        return np.clip(np.divide(over, sizes, out=np.zeros_like(over), where=sizes > 0), 0.0, 1.0)

    def to_dict(self):
        return {"model": self.name, "c": self.c, "l": self.l}


def _sign(x: np.ndarray) -> np.ndarray:
    """``sign(x)``, 0 where ``|x|`` is rounding noise (below 1e-12): at ``x_n = 0`` any
    sign gives a valid potential (:meth:`TCloseness._reach`), and the noise of one order
    of summation or another must not choose it."""
    return np.where(np.abs(x) < 1e-12, 0.0, np.sign(x))


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
        self._plans: dict[tuple, np.ndarray] = {}
        self._tree_refs: dict[tuple, tuple[np.ndarray, np.ndarray, float]] = {}

    @property
    def threshold(self) -> float:
        return self.t

    def group_values(self, counts, reference=None, domain=None):
        raw = np.asarray(counts)
        c = np.atleast_2d(np.asarray(raw, dtype=float))
        ref = c.sum(axis=0) if reference is None else np.asarray(reference, dtype=float)
        h = self.hierarchy
        if self.distance == "hierarchical" and domain is not None and h is not None and h.height:
            whole = raw.dtype.kind in "iub" and c.size and float(c.sum()) < 2.0**53
            return self._hierarchical(c, ref, domain, bool(whole))
        return emd_many(c, ref, self.distance, domain, self.hierarchy)

    def suppression_excess(self, counts, reference, domain=None, drift=0.0):
        """See :meth:`PrivacyModel.suppression_excess`: ``(d - t') / (reach - t')`` clipped to
        [0, 1], where ``d`` is the group's EMD to ``reference``, ``t'`` is ``t`` plus the
        most the reference can move (below), ``reach`` the most removing the group's own
        records can lower its EMD per share removed (:meth:`_reach`), at most ``D``, the
        largest EMD of any distribution to ``reference`` (that of a group holding one value
        only: the EMD is convex).

        With the equal or hierarchical ground distance, the EMD is a norm of the
        difference of the two distributions, at most 1, and a value absent from both
        leaves it unchanged (so measuring on the released values only changes nothing).
        A released subset ``r`` missing a share ``f <= drift`` of the records satisfies
        ``g - r = f (s - r)`` (``g`` the whole table, ``s`` the missing records), so
        ``EMD(r, g) = f EMD(s, r)``, at most ``f`` and at most ``f (D + EMD(r, g))``, i.e.
        ``f D / (1 - f)``; a group within ``t`` of ``r`` is then within ``t'`` of ``g``
        with ``t' = t + min(drift, drift D / (1 - drift))`` (triangle inequality).  A
        group made of such groups (records ``R``) and others is within ``t'`` of ``g``
        once the others' records are removed (the EMD is convex), and removing a share
        ``lam`` of a group's records lowers its EMD to ``g`` by at most what
        :meth:`_reach` bounds, so ``lam >= (d - t') / (reach - t')``: the excess is that
        share (``reach <= D``; with ``D`` in place of ``reach`` it is the plain convexity
        bound, also valid).  The ordered distance is normalized by the
        number of values released, which breaks the first point: no bound (``None``).
        """
        if self.distance == "ordered":
            return None
        counts = np.atleast_2d(np.asarray(counts, dtype=float))
        m = counts.shape[1]
        h = self.hierarchy
        tree = self.distance == "hierarchical" and domain is not None and h is not None
        if tree and m and h is not None and h.height:
            excess = self._tree_excess(counts, reference, domain, float(drift))
            if excess is not None:
                return excess
        # the groups, then one group per value: the EMD is convex, so its largest value
        # over all distributions is at one of those
        both = np.concatenate([counts, np.eye(m)]) if m else counts
        values = np.asarray(self.group_values(both, reference, domain), dtype=float)
        values, top = values[: counts.shape[0]], float(values[counts.shape[0] :].max(initial=0.0))
        # the released subset r and the missing records s make up the table:
        # g - r = f (s - r), so EMD(r, g) = f EMD(s, r) <= f (top + EMD(r, g)), i.e.
        # EMD(r, g) <= f top / (1 - f), and <= f (an EMD is at most 1)
        drift = float(drift)
        if drift < 1.0:
            drift = min(drift, drift * top / (1.0 - drift))
        cut = self.t + drift + 2 * _EPS
        if cut >= top:
            return np.zeros(values.size)
        # the most a group's own records can pull it (see _reach); never above top
        reach = np.minimum(self._reach(counts, reference, domain) + 1e-9, top)
        over = np.maximum(values - cut, 0.0)
        room = np.where(reach - cut > 1e-12, reach - cut, top - cut)
        return np.clip(over / room, 0.0, 1.0)

    def _reach(
        self, counts: np.ndarray, reference, domain, extra: np.ndarray | None = None
    ) -> np.ndarray:
        """Per group ``E``: ``max_{v in E} phi_v - <phi, g>``, ``phi`` an optimal dual
        potential of the group's EMD to the reference ``g`` (equal or hierarchical
        distance).

        Both distances are tree metrics: with ``x_n`` the extra mass (group minus
        reference) under node ``n`` of the levels below the root, the EMD is
        ``sum_n |x_n| / (2 H)`` (``H`` the height; the equal distance is the height-1
        tree of the values).  ``phi_v = sum_{n above v} sign(x_n) / (2 H)`` gives
        ``<phi, p - g> = EMD(p, g)`` and differs between two values by at most their
        distance (only the nodes below their lowest common ancestor differ), so
        ``<phi, c - g> <= EMD(c, g)`` for every distribution ``c``.  Removing a share
        ``lam`` of the group's records (distribution ``q``, on the group's values) leaves
        ``c`` with ``p = (1 - lam) c + lam q``, hence
        ``EMD(p, g) <= (1 - lam) EMD(c, g) + lam (max_{v in E} phi_v - <phi, g>)``:
        bringing the group within ``t'`` of ``g`` takes at least a share
        ``(EMD(p, g) - t') / (that - t')`` of its records.

        ``extra``, optional: the groups' ``x_n`` when the caller has them already (``(p -
        g) A``, ``A`` the ancestor matrix, or ``p - g`` for the equal distance).
        """
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        ref = np.asarray(reference, dtype=float)
        g = ref / ref.sum()
        h = self.hierarchy
        if extra is None:
            totals = c.sum(axis=1, keepdims=True)
            p = np.divide(c, totals, out=np.zeros_like(c), where=totals > 0)
        if self.distance == "hierarchical" and domain is not None and h is not None and h.height:
            ancestors, height = self._plan(domain), h.height
            if extra is None:
                extra = (p - g) @ ancestors
            phi = (_sign(extra) @ ancestors.T) / (2.0 * height)
        else:
            phi = 0.5 * _sign(p - g if extra is None else extra)
        top = np.where(c > 0, phi, -np.inf).max(axis=1, initial=-np.inf)
        return top - phi @ g

    def _tree_excess(
        self, counts: np.ndarray, reference, domain, drift: float
    ) -> np.ndarray | None:
        """:meth:`suppression_excess` for the hierarchical distance, from one product of
        the groups' counts with the ancestor matrix ``A`` (height ``H``).

        With ``p`` a group's distribution and ``g`` the reference's, ``x = (p - g) A``
        gives the EMD ``sum |x| / (2 H)`` (:func:`~structanon.distances.tree_emd`; both
        distributions sum to 1) and the potential of :meth:`_reach`,
        ``phi = sign(x) A^T / (2 H)``.  ``D`` (the largest EMD of any distribution to ``g``,
        that of a one-value group ``e_v``: ``x = A_v - g A``) and ``g A`` depend on the
        reference alone and are kept per reference; the reach is computed for the groups
        over ``t'`` only (the others have no excess).  ``None`` when a group is empty (it
        has no distribution).
        """
        h = self.hierarchy
        assert h is not None
        ancestors, height = self._plan(domain), h.height
        ref = np.asarray(reference, dtype=float)
        key = (ref.tobytes(), id(ancestors))
        kept = self._tree_refs.get(key)
        if kept is None:
            g = ref / ref.sum()
            g_up = g @ ancestors
            single = np.abs(ancestors - g_up).sum(axis=1) / (2.0 * height)
            kept = (g, g_up, float(single.max(initial=0.0)))
            if len(self._tree_refs) < 64:
                self._tree_refs[key] = kept
        g, g_up, top = kept
        cut = self.t + (min(drift, drift * top / (1.0 - drift)) if drift < 1.0 else drift)
        cut += 2 * _EPS
        if cut >= top:
            return np.zeros(counts.shape[0])
        # row sums as products with a vector of ones (a reduction along short rows costs
        # several times more)
        totals = counts @ np.ones(counts.shape[1])
        if not (totals > 0).all():
            return None
        x = (counts @ ancestors) / totals[:, None] - g_up
        over = np.abs(x) @ np.full(x.shape[1], 0.5 / height) - cut
        out = np.zeros(counts.shape[0])
        rows = np.flatnonzero(over > 0)
        if rows.size:
            # (d - t') / (reach - t'), reach at most D (the excess is positive: d > t')
            room = np.minimum(self._reach(counts[rows], reference, domain, x[rows]) + 1e-9, top)
            room -= cut
            room[room <= 1e-12] = top - cut
            out[rows] = np.minimum(over[rows] / room, 1.0)
        return out

    def _plan(self, domain) -> np.ndarray:
        """The ancestor matrix of the domain's values (:func:`~structanon.distances.
        ancestor_matrix`), computed once per domain (searches test many class tables over
        one domain)."""
        key = tuple(np.asarray(domain, dtype=object).tolist())
        plan = self._plans.get(key)
        if plan is None:
            h = self.hierarchy
            assert h is not None
            plan = ancestor_matrix(h, h.encode(np.asarray(domain, dtype=object)))
            if len(self._plans) < 64:
                self._plans[key] = plan
        return plan

    def _hierarchical(
        self, counts: np.ndarray, ref: np.ndarray, domain, whole: bool = False
    ) -> np.ndarray:
        """:func:`~structanon.distances.emd_many`'s hierarchical EMD, the same operations
        in the same order, with the domain's ancestor matrix cached.  ``whole``: the
        counts were integers (below 2**53 in total, they add up exactly in any order), so
        their row totals come from one product with a vector of ones (a reduction along
        short rows costs several times more) and, when every group has records, divide
        them directly: the same values."""
        h = self.hierarchy
        assert h is not None
        totals = (counts @ np.ones(counts.shape[1]))[:, None] if whole else None
        if totals is not None and (totals > 0).all():
            p = counts / totals
        else:
            totals = counts.sum(axis=1, keepdims=True)
            p = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        diff = p - ref / ref.sum()
        return tree_emd(diff, self._plan(domain), h.height)

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


def _number(
    name: str, value: Any, low: float, high: float = np.inf, low_open: bool = False
) -> float:
    """A real number in ``[low, high]`` (``(low, high]`` with ``low_open``), else InputError."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.number))
    if ok:
        value = float(value)
        ok = bool(np.isfinite(value) or high == np.inf) and (
            (value > low if low_open else value >= low) and value <= high
        )
    if not ok:
        bracket = "(" if low_open else "["
        raise InputError(f"{name} must be a number in {bracket}{low:g}, {high:g}], got {value!r}")
    return float(value)


def _class_shares(counts: Any) -> np.ndarray:
    """Each group's sensitive distribution (rows of a groups x values table; empty rows 0)."""
    c = np.atleast_2d(np.asarray(counts, dtype=float))
    totals = c.sum(axis=1, keepdims=True)
    return np.divide(c, totals, out=np.zeros_like(c), where=totals > 0)


def _reference_shares(counts: Any, reference: Any) -> np.ndarray:
    """The table-wide distribution: ``reference`` normalized, or the groups' pooled counts."""
    ref = (
        np.atleast_2d(np.asarray(counts, dtype=float)).sum(axis=0)
        if reference is None
        else np.asarray(reference, dtype=float)
    )
    total = ref.sum()
    return ref / total if total > 0 else ref


def _capped_share_excess(counts: Any, caps: np.ndarray) -> np.ndarray:
    """:meth:`PrivacyModel.suppression_excess` of a model that a group passes only when no
    sensitive value ``s`` holds more than a share ``caps[s]`` of it (caps of 1 or more bind
    nothing): ``max_s (q_s - a_s)_+ / (1 - a_s)``, ``q_s`` the group's share of ``s``.

    A group of ``n`` records made of parts, those that pass holding ``R`` records, has at
    most ``a_s R + (n - R)`` records of ``s``, so ``(n - R) / n >= (q_s - a_s) / (1 - a_s)``
    for every ``s``; a passing group has ``q_s <= a_s`` and no excess."""
    q = _class_shares(counts)
    caps = np.broadcast_to(np.asarray(caps, dtype=float), q.shape[1:])
    binding = caps < 1.0
    if not binding.any():
        return np.zeros(q.shape[0])
    cap = caps[binding]
    over = (q[:, binding] - cap) / (1.0 - cap)
    return np.clip(over.max(axis=1), 0.0, 1.0)


def _drifted_shares(counts: Any, reference: Any, drift: float) -> np.ndarray:
    """The most each value's share of the released records can reach when they miss at
    most a share ``drift`` of the table whose counts are ``reference``: ``p_s / (1 -
    drift)``, at most 1."""
    p = _reference_shares(counts, reference)
    if drift <= 0:
        return p
    return np.minimum(p / (1.0 - drift), 1.0) if drift < 1 else np.where(p > 0, 1.0, 0.0)


class BLikeness(PrivacyModel):
    """beta-likeness: no sensitive value is much more frequent in a class than in the table.

    For each class and each sensitive value ``s`` with table share ``p_s`` and class share
    ``q_s > p_s``, the relative gain ``(q_s - p_s) / p_s`` is at most ``beta`` (basic); the
    enhanced variant bounds it by ``min(beta, -ln p_s)``, so frequent values may gain less.
    The per-class value is the largest relative gain (``inf`` when the enhanced bound
    ``-ln p_s`` is exceeded).  The reference is the distribution of the released records.

    Parameters
    ----------
    beta : float > 0
    enhanced : bool

    Examples
    --------
    >>> BLikeness(1.0).group_values([[2, 0], [1, 1]], reference=[3, 1]).round(3).tolist()
    [0.333, 1.0]
    >>> BLikeness(1.0).group_ok([[2, 0], [0, 2]], reference=[2, 2]).tolist()
    [True, True]

    References
    ----------
    J. Cao, P. Karras. Publishing microdata with a robust privacy guarantee. VLDB 2012.
    """

    name = "beta-likeness"
    requires_sensitive = True
    needs_reference = True
    higher_is_better = False

    def __init__(self, beta: float, enhanced: bool = False) -> None:
        self.beta = _number("beta", beta, 0.0, low_open=True)
        if not isinstance(enhanced, (bool, np.bool_)):
            raise InputError(f"enhanced must be True or False, got {enhanced!r}")
        self.enhanced = bool(enhanced)

    @property
    def threshold(self) -> float:
        return self.beta

    def group_values(self, counts, reference=None, domain=None):
        q = _class_shares(counts)
        p = _reference_shares(counts, reference)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(p > 0, (q - p) / np.where(p > 0, p, 1.0), 0.0)
            worst = gain.max(axis=1) if gain.shape[1] else np.zeros(gain.shape[0])
            if self.enhanced:
                bound = -np.log(np.where(p > 0, p, 1.0))
                over = ((gain > bound + _EPS) & (q > p)).any(axis=1)
                worst = np.where(over, np.inf, worst)
        return worst

    def group_ok(self, counts, reference=None, domain=None):
        """:meth:`group_values`' test rearranged (:meth:`share_caps`): one comparison of
        the counts with the group totals."""
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        caps = self.share_caps(_reference_shares(c, reference))
        totals = c @ np.ones(c.shape[1])
        return ~(c > totals[:, None] * caps).any(axis=1)

    def share_caps(self, shares):
        """A group passes when every value with a share ``p_s > 0`` of the reference makes
        up at most ``p_s (1 + g_s + eps)`` of its records, ``g_s = beta`` (enhanced:
        ``min(beta, -ln p_s)``): :meth:`group_values`' test, rearranged."""
        p = np.asarray(shares, dtype=float)
        if self.enhanced:
            gain = np.minimum(self.beta, -np.log(np.where(p > 0, p, 1.0)))
            return np.where(p > 0, p * (1.0 + gain + _EPS), np.inf)
        return np.where(p > 0, p * (1.0 + self.beta + _EPS), np.inf)

    def share_cap_form(self):
        """See :meth:`PrivacyModel.share_cap_form`: ``(beta, enhanced, eps)``."""
        return float(self.beta), bool(self.enhanced), _EPS

    def suppression_excess(self, counts, reference, domain=None, drift=0.0):
        """See :meth:`PrivacyModel.suppression_excess`: a passing group holds at most a
        share ``a_s = p_s (1 + beta)`` of each value (``p_s (1 + min(beta, -ln p_s))``
        enhanced), ``p_s`` the value's share of the released records, at most ``p_s / (1 -
        drift)`` of the table's (``a_s`` grows with ``p_s``); values absent from the
        released records bind nothing (:func:`_capped_share_excess`)."""
        caps = self.share_caps(_drifted_shares(counts, reference, float(drift)))
        return _capped_share_excess(counts, caps)

    def to_dict(self):
        return {"model": self.name, "beta": self.beta, "enhanced": self.enhanced}


class DeltaDisclosure(PrivacyModel):
    """delta-disclosure privacy: ``|ln(q_s / p_s)| < delta`` for every value in every class.

    ``q_s`` is the share of sensitive value ``s`` in the class, ``p_s`` in the released
    table.  Values absent from a class are skipped, as pycanon and ARX do (with them, every
    class would need every value).  Skipping them makes the model non-monotone: merging a
    class holding ``s`` with one lacking it can push ``q_s`` below ``p_s e^{-delta}``.

    Examples
    --------
    >>> m = DeltaDisclosure(0.5)
    >>> [round(v, 3) for v in m.group_values([[3, 1], [1, 1]], reference=[4, 2]).tolist()]
    [0.288, 0.405]
    >>> m.group_ok([[3, 1], [1, 1]], reference=[4, 2]).tolist()
    [True, True]

    References
    ----------
    J. Brickell, V. Shmatikov. The cost of privacy: destruction of data-mining utility in
    anonymized data publishing. KDD 2008.
    """

    name = "delta-disclosure"
    monotone = False
    requires_sensitive = True
    needs_reference = True
    higher_is_better = False

    def __init__(self, delta: float) -> None:
        self.delta = _number("delta", delta, 0.0, low_open=True)

    @property
    def threshold(self) -> float:
        return self.delta

    def group_values(self, counts, reference=None, domain=None):
        q = _class_shares(counts)
        p = _reference_shares(counts, reference)
        present = (q > 0) & (p > 0)
        ratio = np.divide(q, p, out=np.ones_like(q), where=present)
        logs = np.abs(np.log(ratio))
        return logs.max(axis=1) if logs.shape[1] else np.zeros(logs.shape[0])

    def group_ok(self, counts, reference=None, domain=None):
        """:meth:`group_values`' test rearranged: every value the group holds, with a share
        ``p_s > 0`` of the reference, makes up more than ``p_s e^-delta`` and less than
        ``p_s e^delta`` of the group's records (one comparison of the counts with the
        group totals; searches repeat it on the same groups)."""
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        p = _reference_shares(c, reference)
        totals = (c @ np.ones(c.shape[1]))[:, None]
        held = (c > 0) & (p > 0)
        low, high = totals * (p * np.exp(-self.delta)), totals * (p * np.exp(self.delta))
        return ~(held & ((c <= low) | (c >= high))).any(axis=1)

    def suppression_excess(self, counts, reference, domain=None, drift=0.0):
        """See :meth:`PrivacyModel.suppression_excess`: a passing group holds less than a
        share ``p_s e^delta`` of each value it holds (and none of the others), ``p_s`` the
        value's share of the released records, at most ``p_s / (1 - drift)`` of the
        table's; values absent from the released records bind nothing
        (:func:`_capped_share_excess`).  Only the upper side is used: a class can fall
        below ``p_s e^-delta`` by merging, so that side bounds nothing."""
        p = _drifted_shares(counts, reference, float(drift))
        caps = np.where(p > 0, p * np.exp(self.delta), 1.0)
        return _capped_share_excess(counts, caps)

    def to_dict(self):
        return {"model": self.name, "delta": self.delta}


class DeltaPresence(PrivacyModel):
    """delta-presence: the chance that a person of the population is in the release.

    The released table is a subset of a known population table.  Anonymize the population
    table with ``sensitive`` naming a membership column (``member`` marks the records of
    the released subset); every class ``E`` must then satisfy
    ``delta_min <= |E ∩ subset| / |E| <= delta_max``, so an attacker who knows someone's
    quasi-identifiers and the population learns their membership with probability at most
    ``delta_max``.  Publish the members' rows only (and drop the membership column).

    Parameters
    ----------
    delta_min, delta_max : float, 0 <= delta_min <= delta_max <= 1
    member : value, default True
        The membership column's value of a released record; every other value is a
        population-only record.

    Examples
    --------
    >>> m = DeltaPresence(0.2, 0.6)
    >>> m.group_values([[2, 2], [1, 3]], domain=[False, True]).tolist()
    [0.5, 0.75]
    >>> m.group_ok([[2, 2], [1, 3]], domain=[False, True]).tolist()
    [True, False]

    References
    ----------
    M. E. Nergiz, M. Atzori, C. Clifton. Hiding the presence of individuals from shared
    databases. SIGMOD 2007.
    """

    name = "delta-presence"
    requires_sensitive = True

    def __init__(self, delta_min: float, delta_max: float, member: Any = True) -> None:
        self.delta_min = _number("delta_min", delta_min, 0.0, 1.0)
        self.delta_max = _number("delta_max", delta_max, 0.0, 1.0)
        if self.delta_min > self.delta_max:
            raise InputError(
                f"delta_min must not exceed delta_max, got {self.delta_min} > {self.delta_max}"
            )
        self.member = member

    @property
    def threshold(self) -> float:
        return self.delta_max

    def _member_column(self, domain: Any, n_values: int) -> int | None:
        if domain is None:
            return n_values - 1 if n_values == 2 else None
        values = list(np.asarray(domain, dtype=object).tolist())
        for i, v in enumerate(values):
            if v == self.member or str(v) == str(self.member):
                return i
        return None

    def group_values(self, counts, reference=None, domain=None):
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        col = self._member_column(domain, c.shape[1])
        if col is None:
            return np.zeros(c.shape[0])
        totals = c.sum(axis=1)
        return np.divide(c[:, col], totals, out=np.zeros_like(totals), where=totals > 0)

    def group_ok(self, counts, reference=None, domain=None):
        values = self.group_values(counts, reference, domain)
        return (values >= self.delta_min - _EPS) & (values <= self.delta_max + _EPS)

    def check(self, partition, sensitive=None, reference=None):
        result = super().check(partition, sensitive, reference)
        if partition.n_groups:
            counts, domain = partition.contingency(sensitive)
            if domain.size >= 2 and self._member_column(domain, counts.shape[1]) is None:
                raise InputError(
                    f"delta-presence: no record has the membership value {self.member!r} "
                    f"(values: {list(domain.tolist())[:5]})"
                )
            values = self.group_values(counts, None, domain)
            result.details["delta_min_seen"] = float(values.min())
            result.worst = float(values.max())
        return result

    def to_dict(self):
        return {
            "model": self.name,
            "delta_min": self.delta_min,
            "delta_max": self.delta_max,
        }


class ProbabilisticLDiversity(PrivacyModel):
    """Probabilistic l-diversity: no sensitive value holds more than ``1/l`` of a class.

    The remedy for distinct l-diversity's skew: a class of 1 cancer, 1 heart disease and 8
    flu has 3 distinct values but reveals flu with probability 0.8.  The per-class value is
    ``1 / max_s q_s`` (the attacker's best guess is right with probability ``1 / value``).

    Examples
    --------
    >>> ProbabilisticLDiversity(3).group_values([[1, 1, 8], [2, 2, 2]]).tolist()
    [1.25, 3.0]

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam. l-diversity: privacy
    beyond k-anonymity. TKDD 2007.  T. Li. Privacy preservation in data publishing and
    sharing. PhD thesis, Purdue, 2010 (ch. 4: slicing's l-diversity is this one).
    """

    name = "probabilistic-l-diversity"
    requires_sensitive = True

    def __init__(self, l: float) -> None:
        self.l = _number("l", l, 1.0)

    @property
    def threshold(self) -> float:
        return self.l

    def group_values(self, counts, reference=None, domain=None):
        top = _class_shares(counts).max(axis=1, initial=0.0)
        return np.divide(1.0, top, out=np.zeros_like(top), where=top > 0)

    def suppression_excess(self, counts, reference=None, domain=None, drift=0.0):
        """See :meth:`PrivacyModel.suppression_excess`: a passing group holds at most a
        share ``1 / l`` of each value (:func:`_capped_share_excess`)."""
        cap = 1.0 / max(self.l - 2 * _EPS, 1.0)
        return _capped_share_excess(counts, np.array(cap))

    def to_dict(self):
        return {"model": self.name, "l": self.l}


class AlphaKAnonymity(PrivacyModel):
    """(alpha, k)-anonymity: classes of at least ``k`` records, no value above ``alpha`` of one.

    The per-class value is the largest share of one sensitive value; a class smaller than
    ``k`` gets ``inf``.

    Examples
    --------
    >>> AlphaKAnonymity(0.5, 2).group_values([[1, 1], [3, 1], [1, 0]]).tolist()
    [0.5, 0.75, inf]

    References
    ----------
    R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang. (alpha, k)-anonymity: an enhanced
    k-anonymity model for privacy-preserving data publishing. KDD 2006.
    """

    name = "alpha-k-anonymity"
    requires_sensitive = True
    higher_is_better = False

    def __init__(self, alpha: float, k: int) -> None:
        self.alpha = _number("alpha", alpha, 0.0, 1.0, low_open=True)
        self.k = _positive_int("k", k)

    @property
    def min_group_size(self) -> int:
        return self.k

    @property
    def threshold(self) -> float:
        return self.alpha

    def group_values(self, counts, reference=None, domain=None):
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        top = _class_shares(c).max(axis=1, initial=0.0)
        return np.where(c.sum(axis=1) >= self.k, top, np.inf)

    def suppression_excess(self, counts, reference=None, domain=None, drift=0.0):
        """See :meth:`PrivacyModel.suppression_excess`: a passing group holds at most a
        share ``alpha`` of each value (:func:`_capped_share_excess`; classes below ``k``
        are the search's to count, by ``min_group_size``)."""
        return _capped_share_excess(counts, np.array(self.alpha + 2 * _EPS))

    def to_dict(self):
        return {"model": self.name, "alpha": self.alpha, "k": self.k}


class NTCloseness(PrivacyModel):
    """(n, t)-closeness: a class is close to some natural superset of at least ``n`` records.

    A class of at least ``n`` records passes; a smaller one passes when the EMD between its
    sensitive distribution and that of a natural superset holding at least ``n`` records
    is at most ``t`` (Li, Li & Venkatasubramanian, the checking algorithm of the thesis's
    Fig. 2.1).  :meth:`check_supersets` takes the supersets as coarser partitions (e.g.
    :func:`natural_supersets`: the records sharing the class's values on a subset of the
    quasi-identifiers).  A group-wise check (``group_ok``, :meth:`check`, the searches and
    the verifiers) knows only the whole table as a superset, which is stricter: a release
    it accepts has (n, t)-closeness.

    Examples
    --------
    >>> m = NTCloseness(1000, 0.1)
    >>> m.group_ok([[300, 300], [200, 1800]], reference=[700, 2300]).tolist()
    [False, True]

    References
    ----------
    N. Li, T. Li, S. Venkatasubramanian. Closeness: a new privacy measure for data
    publishing. TKDE 22(7), 2010.  T. Li, PhD thesis, Purdue 2010, section 2.2.
    """

    name = "nt-closeness"
    requires_sensitive = True
    needs_reference = True
    higher_is_better = False

    def __init__(
        self, n: int, t: float, distance: str = "equal", hierarchy: Hierarchy | None = None
    ) -> None:
        self.n = _positive_int("n", n)
        self.closeness = TCloseness(t, distance, hierarchy)
        self.t, self.distance, self.hierarchy = self.closeness.t, distance, hierarchy

    @property
    def threshold(self) -> float:
        return self.t

    def group_values(self, counts, reference=None, domain=None):
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        ref = c.sum(axis=0) if reference is None else np.asarray(reference, dtype=float)
        dist = self.closeness.group_values(c, ref, domain)
        if ref.sum() < self.n:  # the table itself is too small to be a reference
            dist = np.full(c.shape[0], np.inf)
        return np.where(c.sum(axis=1) >= self.n, 0.0, dist)

    def check_supersets(
        self,
        partition: Partition,
        sensitive: Any,
        supersets: Sequence[Partition],
    ) -> CheckResult:
        """The thesis's checking algorithm with the given coarser partitions as supersets.

        Each class smaller than ``n`` is compared with every group of ``supersets`` (and
        the whole table) that contains it and holds at least ``n`` records; it passes when
        one of them is within ``t``.  The value of a class is its smallest such distance
        (0 for a class of at least ``n`` records, ``inf`` when no superset is large enough).
        """
        counts, domain = partition.contingency(sensitive)
        sizes = counts.sum(axis=1)
        kept = partition.labels >= 0
        best = np.where(sizes >= self.n, 0.0, np.inf)
        table = counts.sum(axis=0)
        if table.sum() >= self.n:
            d = self.closeness.group_values(counts, table, domain)
            best = np.minimum(best, d)
        for coarse in supersets:
            if coarse.n != partition.n:
                raise InputError(
                    f"a superset partition has {coarse.n} individuals, not {partition.n}"
                )
            owner = np.full(partition.n_groups, -1, dtype=np.int64)
            owner[partition.labels[kept]] = coarse.labels[kept]
            if (coarse.labels[kept] != owner[partition.labels[kept]]).any():
                raise InputError("a superset partition splits a class: it is not coarser")
            coarse_counts = np.zeros((coarse.n_groups, counts.shape[1]))
            np.add.at(coarse_counts, owner, counts)
            big = coarse_counts.sum(axis=1) >= self.n
            d = _emd_rows(self.closeness, counts, coarse_counts[owner], domain)
            best = np.minimum(best, np.where(big[owner], d, np.inf))
        ok = best <= self.t + _EPS
        return CheckResult(
            self.describe(),
            bool(ok.all()),
            float(best.max()) if best.size else float("nan"),
            self.t,
            partition.n_groups,
            np.flatnonzero(~ok),
            details={"supersets": len(supersets) + 1},
        )

    def to_dict(self):
        return {"model": self.name, "n": self.n, "t": self.t, "distance": self.distance}


def _emd_rows(
    model: TCloseness, counts: np.ndarray, references: np.ndarray, domain: Any
) -> np.ndarray:
    """EMD of each row of ``counts`` to the matching row of ``references``."""
    out = np.empty(counts.shape[0])
    for ref in np.unique(references, axis=0):
        rows = np.flatnonzero((references == ref).all(axis=1))
        out[rows] = model.group_values(counts[rows], ref, domain)
    return out


def natural_supersets(keys: Any) -> list[Partition]:
    """The coarser partitions of a table's classes: equal values on a subset of its columns.

    ``keys`` is a DataFrame of the published quasi-identifiers; for ``q`` columns this
    gives the ``2^q - 2`` partitions by each non-empty proper subset (the whole table is
    always a superset in :meth:`NTCloseness.check_supersets`).
    """
    from itertools import combinations

    import pandas as pd

    frame = keys if isinstance(keys, pd.DataFrame) else pd.DataFrame(np.asarray(keys, dtype=object))
    columns = list(frame.columns)
    return [
        Partition.from_keys(frame[list(subset)])
        for size in range(1, len(columns))
        for subset in combinations(columns, size)
    ]


class MultipleSensitive(PrivacyModel):
    """Several sensitive attributes at once: each one's models hold on its own column.

    The sensitive values are the joint values (one tuple of the ``columns``' values per
    record, see :func:`joint_sensitive`); every model of a column is applied to the
    column's marginal counts per class, as in the thesis's Table 2.5 (0.167-closeness on
    Salary and 0.278-closeness on Disease).  ``check`` also takes a DataFrame or a 2-D array
    of the columns.

    Parameters
    ----------
    models : dict
        Column -> a model or a list of models.

    Examples
    --------
    >>> m = MultipleSensitive({"a": DistinctLDiversity(2), "b": DistinctLDiversity(2)})
    >>> m.group_ok([[1, 1, 0], [0, 1, 1]], domain=[("x", 1), ("x", 2), ("y", 1)]).tolist()
    [False, True]
    """

    name = "multiple-sensitive"
    requires_sensitive = True

    def __init__(self, models: Any) -> None:
        if not hasattr(models, "items") or not models:
            raise InputError("models must be a non-empty dict column -> model(s)")
        self.columns: list[Any] = []
        self.models: list[list[PrivacyModel]] = []
        for column, value in models.items():
            group = [value] if isinstance(value, PrivacyModel) else list(value)
            if not group or not all(isinstance(m, PrivacyModel) for m in group):
                raise InputError(f"models of sensitive column {column!r} must be privacy models")
            if any(isinstance(m, MultipleSensitive) or not m.requires_sensitive for m in group):
                raise InputError(
                    f"sensitive column {column!r}: only models of one sensitive attribute apply"
                )
            self.columns.append(column)
            self.models.append(group)
        flat = [m for group in self.models for m in group]
        self.monotone = all(m.monotone for m in flat)
        self.monotone_with_suppression = all(m.monotone_with_suppression for m in flat)
        self.needs_reference = any(m.needs_reference for m in flat)
        self._min_group_size = max(m.min_group_size for m in flat)

    @property
    def min_group_size(self) -> int:
        return self._min_group_size

    @property
    def threshold(self) -> float:
        return 1.0

    def _marginals(self, counts, reference, domain):
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        if domain is None:
            raise InputError(f"{self.describe()} needs the joint sensitive values (domain)")
        joint = [v if isinstance(v, tuple) else (v,) for v in list(domain)]
        if any(len(v) != len(self.columns) for v in joint):
            raise InputError(
                f"{self.describe()}: sensitive values are not {len(self.columns)}-tuples"
            )
        ref = None if reference is None else np.asarray(reference, dtype=float)
        for j in range(len(self.columns)):
            codes, values = encode_values([v[j] for v in joint])
            onehot = np.zeros((len(joint), values.size))
            onehot[np.arange(len(joint)), codes] = 1.0
            yield j, c @ onehot, (None if ref is None else ref @ onehot), values

    def group_values(self, counts, reference=None, domain=None):
        c = np.atleast_2d(np.asarray(counts, dtype=float))
        failing = np.zeros(c.shape[0])
        for j, marginal, ref, values in self._marginals(c, reference, domain):
            for model in self.models[j]:
                failing += ~model.group_ok(marginal, ref, values)
        return failing

    def group_ok(self, counts, reference=None, domain=None):
        return self.group_values(counts, reference, domain) == 0

    def check(self, partition, sensitive=None, reference=None):
        if sensitive is None:
            raise InputError(f"{self.describe()} needs the sensitive values")
        columns = _sensitive_columns(sensitive, self.columns)
        results = [
            model.check(partition, columns[j], None)
            for j in range(len(self.columns))
            for model in self.models[j]
        ]
        failing = np.unique(
            np.concatenate([r.failing_groups for r in results] + [np.zeros(0, np.int64)])
        ).astype(np.int64)
        return CheckResult(
            self.describe(),
            all(r.passed for r in results),
            float(failing.size),
            0.0,
            partition.n_groups,
            failing,
            details={"per_column": [r.to_dict() for r in results]},
        )

    def describe(self) -> str:
        parts = ", ".join(
            f"{c}: {' + '.join(m.describe() for m in group)}"
            for c, group in zip(self.columns, self.models)
        )
        return f"{self.name}({parts})"

    def to_dict(self):
        return {
            "model": self.name,
            "columns": {
                str(c): [m.to_dict() for m in group] for c, group in zip(self.columns, self.models)
            },
        }


def _sensitive_columns(sensitive: Any, names: Sequence[Any]) -> list[np.ndarray]:
    """One value array per sensitive column, from a DataFrame, a 2-D array or joint tuples."""
    if hasattr(sensitive, "columns"):
        return [sensitive[c].to_numpy() for c in names]
    array = np.asarray(sensitive, dtype=object)
    if array.ndim == 1:
        rows = [tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in array.tolist()]
        if any(len(r) != len(names) for r in rows):
            raise InputError(f"sensitive values must be {len(names)}-tuples")
        array = np.empty((len(rows), len(names)), dtype=object)
        for i, r in enumerate(rows):
            array[i] = r
    if array.ndim != 2 or array.shape[1] != len(names):
        raise InputError(f"sensitive values must have {len(names)} columns")
    return [array[:, j] for j in range(len(names))]


def joint_sensitive(df: Any, columns: Sequence[Any]) -> np.ndarray:
    """The joint sensitive value of each record: a 1-D object array of tuples.

    Examples
    --------
    >>> import pandas as pd
    >>> joint_sensitive(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), ["a", "b"]).tolist()
    [(1, 'x'), (2, 'y')]
    """
    out = np.empty(len(df), dtype=object)
    out[:] = list(zip(*(df[c].tolist() for c in columns)))
    return out
