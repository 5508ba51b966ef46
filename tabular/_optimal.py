"""Globally optimal full-domain generalization: a Flash-style search of the lattice.

The lattice holds one node per combination of hierarchy levels.  A node is *feasible* when
the records in the equivalence classes that fail a privacy model number at most the
suppression limit (those classes are suppressed).  When feasibility is monotone, every
check tags a whole cone of the lattice (predictive tagging): a feasible node makes all its
generalizations feasible, an infeasible node makes all its specializations infeasible.
Untagged nodes are resolved by binary search along upward paths (Kohlmayer et al. 2012).
The optimum is then the best-scoring feasible node under the chosen quality model; for a
monotone quality model only the minimal feasible nodes are scored.  With suppression, the
quality model's lower bounds prune as in ARX (a greedy descent gives a first score, and a
node whose bound cannot beat the best score is never checked; see
:func:`optimal_generalization`).  Models that are not monotone with suppression (entropy
and recursive l-diversity, t-closeness measured against the released records) may offer
a lower bound on the records that the node and each of its specializations must suppress
(:meth:`_Search.excess_bound`): a node whose bound exceeds the suppression limit tags its
specializations infeasible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from structanon import InfeasibleError
from structanon._validation import check_choice
from structanon.models import KAnonymity, PrivacyModel

from ._lattice import ClassTable, EncodedTable
from ._sweep import sweep_applies, sweep_nodes, swept_bounds

__all__ = [
    "QUALITY_MODELS",
    "QualityModel",
    "quality_model",
    "NodeOutcome",
    "LatticeSearch",
    "optimal_generalization",
]


@dataclass
class NodeOutcome:
    """The classes of one node, which of them pass every model, and what is suppressed."""

    levels: tuple[int, ...]
    table: ClassTable
    ok: np.ndarray
    suppressed: int

    @property
    def released(self) -> int:
        return int(self.table.sizes[self.ok].sum())


def _one_pass(
    table: ClassTable,
    ordered: Sequence[PrivacyModel],
    kept: np.ndarray,
    measure: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None],
    dropped: int,
    cut: float,
) -> tuple[np.ndarray, int]:
    """The kept classes that pass every model in turn, and the records dropped so far
    (stops early once they exceed ``cut``)."""
    reference, values, present = measure
    sizes = table.sizes
    alive = kept
    for model in ordered:
        if alive.size == 0:
            break
        small = sizes[alive] < model.min_group_size if model.min_group_size > 1 else None
        if small is not None and small.any():
            dropped += int(sizes[alive[small]].sum())
            alive = alive[~small]
            if dropped > cut or alive.size == 0:
                break
        if model.requires_sensitive:
            assert table.contingency is not None  # built whenever a model needs it
            counts = table.contingency[alive]
            if present is not None:
                counts = counts[:, present]
        else:
            counts = sizes[alive]
        good = model.group_ok(counts, reference, values)
        if not good.all():
            dropped += int(sizes[alive[~good]].sum())
            alive = alive[good]
            if dropped > cut:
                break
    return alive, dropped


class _Beaten(Exception):
    """Raised by :func:`class_outcome` when its ``beaten`` test holds after a round."""


def _capped_rounds(
    table: ClassTable,
    measured: Sequence[PrivacyModel],
    alive: np.ndarray,
    dropped: int,
    cut: float,
    beaten=None,
    whole: np.ndarray | None = None,
) -> tuple[np.ndarray, int] | None:
    """:func:`class_outcome`'s rounds against the released records for models that cap
    each value's share of a class (:meth:`~structanon.models.PrivacyModel.share_caps`);
    ``None`` when a model does not.

    The same rounds, tests and values as the general loop, with less work per round: the
    classes' counts are read once (their totals are the class sizes), and each round
    compares them with the totals times the caps of the reference (every class at first
    -- ``whole``, the table's counts, when given -- then the classes kept), as each
    model's ``group_ok`` does.  A value no kept class holds has no cap and no class still
    tested holds it, so measuring on the values released changes nothing."""
    assert table.contingency is not None
    contingency = table.contingency
    reference = contingency.sum(axis=0) if whole is None else whole
    in_reference = table.n_classes  # the classes whose records make up the reference
    every = alive.size == table.n_classes
    counts = contingency if every else contingency[alive]
    totals = table.sizes if every else table.sizes[alive]
    while alive.size:
        shares = reference / reference.sum()
        caps = None
        for model in measured:
            cap = model.share_caps(shares)
            if cap is None:
                return None
            caps = cap if caps is None else np.minimum(caps, cap)
        fail = (counts > totals[:, None] * caps).any(axis=1)
        failing = bool(fail.any())
        if failing:
            dropped += int(totals[fail].sum())
            keep = ~fail
            alive = alive[keep]
            if dropped > cut or not alive.size:
                break
        if alive.size == in_reference:
            break  # the classes kept pass against their own records
        if beaten is not None and in_reference == table.n_classes and beaten(alive, dropped):
            raise _Beaten
        if failing:
            counts, totals = counts[keep], totals[keep]
        in_reference = alive.size
        reference = counts.sum(axis=0)
    return alive, dropped


def class_outcome(
    table: ClassTable,
    models: Sequence[PrivacyModel],
    domain: np.ndarray | None,
    levels: tuple[int, ...] = (),
    limit: int | None = None,
    beaten=None,
    whole: np.ndarray | None = None,
) -> NodeOutcome:
    """Test every class against every model; suppress the failing classes.

    Models are applied in turn to the classes that passed the previous ones (cheap tests
    first); classes smaller than a model's ``min_group_size`` fail it without being
    measured.  Models that ``need_reference`` (t-closeness) are measured against the
    sensitive distribution of the records that are released, as a verifier reading only
    the output would measure it: after suppression the reference is recomputed on the
    kept classes and the test repeated until no kept class fails (the kept set only
    shrinks, so this ends).  With ``limit``, testing stops as soon as more than ``limit``
    records are suppressed (the node is then infeasible whatever further tests would
    find; the outcome's ``suppressed`` is then only known to exceed ``limit``).  With
    ``beaten(alive, dropped)``, called with the classes kept and the records suppressed
    after the first round against the released records when more rounds follow, testing
    stops by raising :class:`_Beaten` when it returns true (the search passes a test of
    whether the node's score, which later rounds can only raise, already exceeds the best
    one; see :attr:`QualityModel.grows_with_suppression`).  ``whole``: the table's count
    of each sensitive value (the first reference), when at hand.  Models that read class
    sizes alone are tested on every class at once (the count is then exact).

    The first reference is that of every class, before any is suppressed.  Models that do
    not read the reference are tested once: a class that passed them passes them again
    (their test reads the class alone), so only the models that read the reference are
    repeated on the classes kept.
    """
    sizes = table.sizes
    if not any(m.requires_sensitive or m.needs_reference for m in models):
        ok = sizes >= max((m.min_group_size for m in models), default=1)
        for model in models:
            ok &= model.group_ok(sizes)
        return NodeOutcome(levels, table, ok, int(sizes.sum()) - int(sizes[ok].sum()))
    ordered = sorted(models, key=lambda m: (m.needs_reference, m.requires_sensitive))
    local = [m for m in ordered if not m.needs_reference]
    measured = [m for m in ordered if m.needs_reference]
    cut = np.inf if limit is None else limit
    every = np.arange(table.n_classes)
    alive, dropped = _one_pass(table, local, every, (None, domain, None), 0, cut)
    if measured and all(m.min_group_size <= 1 for m in measured) and dropped <= cut:
        capped = _capped_rounds(table, measured, alive, dropped, cut, beaten, whole)
        if capped is not None:
            alive, dropped = capped
            ok = np.zeros(table.n_classes, dtype=bool)
            ok[alive] = True
            return NodeOutcome(levels, table, ok, dropped)
    kept = every  # the classes whose records make up the reference
    while measured and dropped <= cut and alive.size:
        reference, values = None, domain
        present: np.ndarray | None = None
        if table.contingency is not None:
            if kept.size < every.size:
                reference = table.contingency[kept].sum(axis=0)
            else:
                reference = table.contingency.sum(axis=0) if whole is None else whole
            if not (reference > 0).all():
                # the published domain holds only the values still released (this matters
                # to ordered and hierarchical distances)
                present = np.flatnonzero(reference > 0)
                reference = reference[present]
                values = None if domain is None else np.asarray(domain)[present]
        alive, dropped = _one_pass(
            table, measured, alive, (reference, values, present), dropped, cut
        )
        if alive.size == kept.size:
            break
        if beaten is not None and kept.size == every.size and dropped <= cut:
            if beaten(alive, dropped):
                raise _Beaten
        kept = alive
    ok = np.zeros(table.n_classes, dtype=bool)
    ok[alive] = True
    # every class taken out of ``alive`` added its records to ``dropped``
    return NodeOutcome(levels, table, ok, dropped)


class _Lattice:
    """All nodes of the lattice as an array, with cone (generalization) queries."""

    def __init__(self, heights: np.ndarray) -> None:
        self.dims = heights + 1
        q = heights.size
        self.n_nodes = int(np.prod(self.dims)) if q else 1
        self.grid = (
            np.indices(tuple(self.dims.tolist())).reshape(q, -1).T
            if q
            else np.zeros((1, 0), dtype=np.int64)
        )
        self.strides = np.ones(q, dtype=np.int64)
        for j in range(q - 2, -1, -1):
            self.strides[j] = self.strides[j + 1] * self.dims[j + 1]
        self.level_sum = self.grid.sum(axis=1)

    def node(self, i: int) -> tuple[int, ...]:
        return tuple(self.grid[i].tolist())

    def above(self, i: int) -> np.ndarray:
        return np.all(self.grid >= self.grid[i], axis=1)

    def minimal(self, member: np.ndarray) -> np.ndarray:
        """Members none of whose direct predecessors is a member."""
        out = member.copy()
        index = np.arange(self.n_nodes)
        for j in range(self.grid.shape[1]):
            has_pred = self.grid[:, j] > 0
            pred = np.where(has_pred, index - self.strides[j], 0)
            out &= ~(has_pred & member[pred])
        return out


@dataclass
class SearchContext:
    """What the quality models read: the encoded table, the lattice, leaf shares per level."""

    enc: EncodedTable
    lattice: _Lattice
    shares: list[list[np.ndarray]]
    cache: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, enc: EncodedTable, lattice: _Lattice) -> SearchContext:
        shares = [
            [h.leaf_counts(lv) / h.leaves.size for lv in range(h.height + 1)]
            for h in enc.hierarchies
        ]
        return cls(enc, lattice, shares)


class QualityModel:
    """A quality model of the optimal search (lower scores are better), ARX-style.

    ``score(outcome, ctx)`` is the exact score of an evaluated node;
    ``lower_bound(i, ctx)`` bounds from below the score of node ``i`` whatever is
    suppressed, and, where the metric is monotone, the scores of all its generalizations;
    ``lower_bounds(ctx)`` gives every node's bound at once when that is cheap (``None``
    when a bound needs the node's classes; ``lower_bound(i, ctx, tables)`` then reads them
    from ``tables(levels)`` when given, else from the encoded table).  ``monotone_with_suppression``: the score never
    decreases from a node to its generalizations even when failing classes are suppressed
    (every quality model is monotone without suppression).  ``grows_with_suppression``:
    at one node, suppressing more classes never lowers the score, so the score of the
    classes kept after a first round of checks bounds the node's score from below.
    """

    name = "quality"
    monotone_with_suppression = False
    grows_with_suppression = False
    swept = False  # scored by the compiled sweep (tabular._sweep) where its models apply

    def score(self, outcome: NodeOutcome, ctx: SearchContext) -> float:
        raise NotImplementedError  # pragma: no cover

    def lower_bounds(self, ctx: SearchContext) -> np.ndarray | None:
        return None

    def suppressed_bound(
        self, levels: tuple[int, ...], suppressed: int, ctx: SearchContext
    ) -> float:
        """A lower bound on the score of the node at ``levels`` when at least ``suppressed``
        records are suppressed, whichever they are (``-inf``: none known; only read where
        :attr:`grows_with_suppression`)."""
        return -np.inf

    def lower_bound(self, i: int, ctx: SearchContext, tables=None) -> float:
        bounds = self.lower_bounds(ctx)
        if bounds is None:  # pragma: no cover - subclasses without arrays override this
            raise NotImplementedError
        return float(bounds[i])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Discernibility(QualityModel):
    """ARX's DM*: ``sum_E |E|^2`` over all classes, suppressed ones included.

    The score does not depend on what is suppressed, so a node's class sizes give its exact
    score, which bounds the scores of its generalizations (merging classes only raises it).
    """

    name = "discernibility"
    monotone_with_suppression = True

    def score(self, outcome: NodeOutcome, ctx: SearchContext) -> float:
        return float((outcome.table.sizes.astype(np.float64) ** 2).sum())

    def lower_bound(self, i: int, ctx: SearchContext, tables=None) -> float:
        node = ctx.lattice.node(i)
        sizes = (tables(node) if tables else ctx.enc.classes(node)).sizes
        return float((sizes.astype(np.float64) ** 2).sum())


class Height(QualityModel):
    """The sum of the generalization levels."""

    name = "height"
    monotone_with_suppression = True

    def score(self, outcome: NodeOutcome, ctx: SearchContext) -> float:
        return float(sum(outcome.levels))

    def lower_bounds(self, ctx: SearchContext) -> np.ndarray:
        return ctx.lattice.level_sum.astype(float)


class Precision(QualityModel):
    """Sweeney's precision loss: mean over attributes of ``((n - s) level_j / height_j + s) / n``.

    Suppression only adds loss, so the bound is the score with nothing suppressed.
    """

    name = "precision"
    grows_with_suppression = True

    def score(self, outcome: NodeOutcome, ctx: SearchContext) -> float:
        n = float(outcome.table.sizes.sum())
        s = float(outcome.suppressed)
        values = [
            ((n - s) * (lv / h if h else 0.0) + s) / n
            for lv, h in zip(outcome.levels, ctx.enc.heights.tolist())
        ]
        return float(np.mean(values)) if values else 0.0

    def lower_bounds(self, ctx: SearchContext) -> np.ndarray:
        h = np.maximum(ctx.enc.heights, 1)
        return (ctx.lattice.grid / h).mean(axis=1) if ctx.enc.q else np.zeros(1)


class Loss(QualityModel):
    """Iyengar's loss metric as ARX aggregates it.

    Per attribute ``j``, ``L_j = (sum_E |E| share_j(E) + s - n/D_j) / (n - n/D_j)``, where
    ``share_j(E)`` is the fraction of the ``D_j`` hierarchy leaves under the class's value
    and each of the ``s`` suppressed records costs 1; attributes are combined by the shifted
    geometric mean ``prod_j (L_j + 1)^(1/q) - 1``.  The bound is the loss of the
    generalization alone (every record kept), per attribute and level.

    ``D_j L_j`` is a ratio of integers (``|E|`` times the leaves under the value), summed
    exactly: over the records at each level once, then per node over the suppressed classes
    (subtracted) or the kept ones, whichever are fewer.
    """

    name = "loss"
    grows_with_suppression = True  # a suppressed record costs 1, a kept one its share
    swept = True

    def score(self, outcome: NodeOutcome, ctx: SearchContext) -> float:
        enc, sizes, ok = ctx.enc, outcome.table.sizes, outcome.ok
        tables = _loss_tables(ctx)
        n, s = int(sizes.sum()), int(outcome.suppressed)
        # the classes on the smaller side, their codes decoded alone
        dropped = np.flatnonzero(~ok)
        few_dropped = 2 * dropped.size <= ok.size
        side = dropped if few_dropped else np.flatnonzero(ok)
        codes, side_sizes = outcome.table.codes_at(side).T, sizes[side]
        product = 1.0
        q = max(enc.q, 1)
        for j, lv in enumerate(outcome.levels):
            part = int(side_sizes @ tables.leaves[j][lv][codes[j]])
            kept = tables.totals[j][lv] - part if few_dropped else part
            d = tables.d[j]
            # D_j (L_j numerator) and D_j (L_j denominator), both integers
            value = (kept + s * d - n) / (n * d - n) if n * d > n else 0.0
            product *= (max(value, 0.0) + 1.0) ** (1.0 / q)
        return product - 1.0

    def suppressed_bound(
        self, levels: tuple[int, ...], suppressed: int, ctx: SearchContext
    ) -> float:
        """Each suppressed record adds at least ``D_j`` minus the most leaves under one
        value of the level to ``D_j L_j``'s numerator (what it costs over its share)."""
        tables = _loss_tables(ctx)
        n, q = int(ctx.enc.n), max(ctx.enc.q, 1)
        product = 1.0
        for j, lv in enumerate(levels):
            d = tables.d[j]
            if n * d > n:
                value = (tables.totals[j][lv] + suppressed * tables.gap[j][lv] - n) / (n * d - n)
                product *= (max(value, 0.0) + 1.0) ** (1.0 / q)
        return product - 1.0

    def lower_bounds(self, ctx: SearchContext) -> np.ndarray:
        enc, grid = ctx.enc, ctx.lattice.grid
        tables = _loss_tables(ctx)
        product = np.ones(ctx.lattice.n_nodes)
        n = int(enc.n)
        for j, d in enumerate(tables.d):
            per_level = np.asarray(tables.totals[j], dtype=np.float64)
            value = (
                np.clip((per_level - n) / (n * d - n), 0, None)
                if n * d > n
                else np.zeros(per_level.size)
            )
            product *= (value[grid[:, j]] + 1.0) ** (1.0 / enc.q)
        return product - 1.0


@dataclass
class _LossTables:
    """What the loss reads per QI ``j`` and level: the leaves under each value
    (``leaves[j][lv]``), their sum over the records (``totals[j][lv]``: the numerator of
    ``D_j L_j`` with every record kept, plus ``n``), the hierarchy's leaf count ``D_j``
    (``d[j]``) and the least a suppressed record adds to that numerator (``gap[j][lv]``:
    ``D_j`` minus the most leaves under one value)."""

    leaves: list[list[np.ndarray]]
    totals: list[list[int]]
    d: list[int]
    gap: list[list[int]]


def _loss_tables(ctx: SearchContext) -> _LossTables:
    """:class:`_LossTables` of the search's table (computed once per context)."""
    cached = ctx.cache.get("loss")
    if cached is None:
        enc = ctx.enc
        cached = _LossTables([], [], [], [])
        for j, h in enumerate(enc.hierarchies):
            counts = np.bincount(
                enc.base_leaf_codes[:, j], weights=enc.base_weight, minlength=h.leaves.size
            ).astype(np.int64)
            per_level = [h.leaf_counts(lv).astype(np.int64) for lv in range(h.height + 1)]
            d = int(h.leaves.size)
            cached.leaves.append(per_level)
            cached.totals.append(
                [int(counts @ per_level[lv][enc.maps[j][:, lv]]) for lv in range(h.height + 1)]
            )
            cached.d.append(d)
            cached.gap.append([d - int(under.max(initial=0)) for under in per_level])
        ctx.cache["loss"] = cached
    return cached


def _entropy_per_level(ctx: SearchContext) -> list[np.ndarray]:
    """Per QI and level: ``sum_v a_v log2(b(v) / a_v)`` over the leaf values ``v`` of the data.

    ``a_v`` counts the records whose value is ``v`` and ``b(v)`` the records whose value has
    the same ancestor as ``v`` at that level (the non-uniform entropy of the generalized
    column given the original one, in bits, summed over records).
    """
    enc = ctx.enc
    out = []
    for j in range(enc.q):
        a = np.bincount(
            enc.base_leaf_codes[:, j],
            weights=enc.base_weight,
            minlength=enc.hierarchies[j].leaves.size,
        )
        present = a > 0
        per_level = np.zeros(int(enc.heights[j]) + 1)
        for lv in range(per_level.size):
            codes = enc.maps[j][:, lv]
            b = np.bincount(codes, weights=a, minlength=int(codes.max()) + 1)[codes]
            per_level[lv] = float((a[present] * np.log2(b[present] / a[present])).sum())
        out.append(per_level)
    return out


class Entropy(QualityModel):
    """ARX's monotone non-uniform entropy (``Metric.createPrecomputedEntropyMetric(.., true)``).

    ``sum_j sum_r log2(|{r' : g_j(r') = g_j(r)}| / |{r' : x_j(r') = x_j(r)}|)``: for every
    QI ``j`` and record ``r``, the bits lost by publishing the generalized value ``g_j(r)``
    instead of the original ``x_j(r)``, both counted in the input table (Gionis & Tassa's
    non-uniform entropy as ARX computes it).  The score depends on the levels only (as in
    ARX's monotone variant, suppressed records count as generalized), so it is its own
    lower bound and never decreases towards generalizations, with or without suppression.

    References
    ----------
    A. Gionis, T. Tassa. k-Anonymization with minimal loss of information. IEEE TKDE 21(2),
    2009.  F. Prasser, F. Kohlmayer. Putting statistical disclosure control into practice:
    the ARX data anonymization tool. 2015.
    """

    name = "entropy"
    monotone_with_suppression = True

    def lower_bounds(self, ctx: SearchContext) -> np.ndarray:
        bounds = ctx.cache.get("entropy")
        if bounds is None:
            per_level = _entropy_per_level(ctx)
            bounds = np.zeros(ctx.lattice.n_nodes)
            for j, values in enumerate(per_level):
                bounds += values[ctx.lattice.grid[:, j]]
            ctx.cache["entropy"] = bounds
        return bounds

    def score(self, outcome: NodeOutcome, ctx: SearchContext) -> float:
        index = int(np.dot(outcome.levels, ctx.lattice.strides)) if ctx.enc.q else 0
        return float(self.lower_bounds(ctx)[index])


class EntropyNonMonotonic(Entropy):
    """ARX's non-monotone non-uniform entropy (``createPrecomputedEntropyMetric(.., false)``).

    The monotone score (see :class:`Entropy`) plus, for every QI ``j``, the entropy of the
    suppressed records' generalized values: ``sum_w c_w log2(S / c_w)`` over the values ``w``
    that the ``S`` suppressed records take at the node's level (``c_w`` of them take ``w``).
    Suppression thus costs information, and the score may decrease from a node to a
    generalization that suppresses less; the monotone score is the lower bound (of the node
    and of its generalizations), as in ARX.
    """

    name = "entropy-nonmonotonic"
    monotone_with_suppression = False
    # S H(suppressed) = S log S - sum_w c_w log c_w never falls as records join (x log x
    # is convex and S >= c_w)
    grows_with_suppression = True

    def score(self, outcome: NodeOutcome, ctx: SearchContext) -> float:
        value = super().score(outcome, ctx)
        failed = ~outcome.ok
        total = float(outcome.table.sizes[failed].sum())
        if total == 0:
            return value
        sizes = outcome.table.sizes[failed].astype(np.float64)
        for j in range(ctx.enc.q):
            counts = np.bincount(outcome.table.codes[failed, j], weights=sizes)
            counts = counts[counts > 0]
            value += float((counts * np.log2(total / counts)).sum())
        return value


_QUALITY: dict[str, QualityModel] = {
    m.name: m
    for m in (Discernibility(), Loss(), Precision(), Height(), Entropy(), EntropyNonMonotonic())
}
#: The names of the quality models, as ``metric=`` accepts them.
QUALITY_MODELS = tuple(_QUALITY)


def quality_model(metric: str) -> QualityModel:
    """The quality model named ``metric`` (one of :data:`QUALITY_MODELS`).

    Examples
    --------
    >>> quality_model("loss")
    Loss()
    >>> quality_model("height").monotone_with_suppression
    True
    """
    return _QUALITY[check_choice(metric, "metric", QUALITY_MODELS)]


def quality(
    outcome: NodeOutcome, metric: str, enc: EncodedTable, shares: list[list[np.ndarray]]
) -> float:
    """Score of a node under the quality model named ``metric`` (lower is better).

    See :class:`Discernibility`, :class:`Loss`, :class:`Precision`, :class:`Height`,
    :class:`Entropy` and :class:`EntropyNonMonotonic`.
    """
    return quality_model(metric).score(outcome, SearchContext(enc, _Lattice(enc.heights), shares))


def _predicate_monotone(models: Sequence[PrivacyModel], max_suppressed: int) -> bool:
    """Feasibility is monotone: every model is, and still so under the suppression allowed."""
    if not all(m.monotone for m in models):
        return False
    return max_suppressed == 0 or all(m.monotone_with_suppression for m in models)


@dataclass
class LatticeSearch:
    """Result of the search: the optimum and how much of the lattice was touched."""

    best: NodeOutcome
    score: float
    metric: str
    n_nodes: int
    checked: int
    scored: int
    monotone: bool
    feasible: int
    ties: list[tuple[int, ...]] = field(default_factory=list)
    cut_short: int = 0  # nodes whose checks stopped once their score exceeded the best


class _Search:
    """One run of the optimal search: node evaluation (cached), tagging, scoring."""

    def __init__(
        self,
        enc: EncodedTable,
        models: Sequence[PrivacyModel],
        max_suppressed: int,
        domain: np.ndarray | None,
    ) -> None:
        self.enc, self.models, self.max_suppressed, self.domain = (
            enc,
            list(models),
            max_suppressed,
            domain,
        )
        self.lattice = _Lattice(enc.heights)
        self.outcomes: dict[int, NodeOutcome] = {}
        self.cut_short = 0  # nodes whose checks stopped as their score could not beat the best
        self._sizes_enc: EncodedTable | None = None
        self.monotone = _predicate_monotone(models, max_suppressed)
        self._min_size = max((m.min_group_size for m in self.models), default=1)
        self._reference: np.ndarray | None = None
        self._excess_models: list[PrivacyModel] = []
        if enc.has_sensitive and enc.n and not self.monotone:
            assert enc.base_sensitive is not None
            reference = np.bincount(
                enc.base_sensitive, weights=enc.base_weight, minlength=max(enc.n_sensitive, 1)
            )
            self._reference = reference
            self._excess_models = [
                m
                for m in self.models
                if m.requires_sensitive
                and m.suppression_excess(reference[None, :], reference, domain, 0.0) is not None
            ]
        # DM*'s bounds read full class tables (see sizes_table)
        self._full_bounds = bool(self._excess_models) and any(m.needs_reference for m in models)

    def evaluate(self, i: int, beaten=None) -> NodeOutcome:
        """Node ``i``'s outcome (cached); ``beaten``: see :func:`class_outcome` (raises
        :class:`_Beaten`, and nothing is cached, when it holds)."""
        out = self.outcomes.get(i)
        if out is None:
            node = self.lattice.node(i)
            out = class_outcome(
                self.enc.classes(node),
                self.models,
                self.domain,
                node,
                self.max_suppressed,
                beaten,
                self._reference,
            )
            self.outcomes[i] = out
        return out

    def evaluate_below(
        self, i: int, model: QualityModel, ctx: SearchContext, best: float
    ) -> NodeOutcome | None:
        """Node ``i``'s outcome, or ``None`` when its score is proven above ``best``.

        Where the quality model's score never falls as classes are suppressed
        (:attr:`QualityModel.grows_with_suppression`), the score of the classes kept after
        the first round against the released records bounds the node's score, which
        later rounds (against the records kept) can only raise; when that bound exceeds
        ``best``, the node can neither be the optimum nor tie with it, and its remaining
        rounds are skipped (the node is not cached: it is not checked in full).
        """
        if not model.grows_with_suppression or not np.isfinite(best) or i in self.outcomes:
            return self.evaluate(i)
        node = self.lattice.node(i)
        limit = best + 1e-12 * max(1.0, abs(best))

        def beaten(alive: np.ndarray, dropped: int) -> bool:
            if model.suppressed_bound(node, dropped, ctx) > limit:
                return True
            table = self.enc.classes(node)  # cached by the check that calls this
            ok = np.zeros(table.n_classes, dtype=bool)
            ok[alive] = True
            return model.score(NodeOutcome(node, table, ok, dropped), ctx) > limit

        try:
            return self.evaluate(i, beaten)
        except _Beaten:
            self.cut_short += 1
            return None

    def feasible(self, out: NodeOutcome) -> bool:
        return out.suppressed <= self.max_suppressed and out.released > 0

    def check_top(self) -> None:
        """Under monotone feasibility a failing top node rules out every node.

        With suppression, entropy / recursive l-diversity or t-closeness may hold lower
        down, so the check applies only when feasibility is monotone.
        """
        top = self.lattice.n_nodes - 1
        if self.monotone and not self.feasible(self.evaluate(top)):
            node = self.lattice.node(top)  # counted in full (the check stopped at the limit)
            full = class_outcome(self.enc.classes(node), self.models, self.domain, node)
            raise InfeasibleError(
                "no generalization satisfies the privacy models within the suppression limit "
                f"(the most general node suppresses {full.suppressed} of "
                f"{self.enc.n} records, limit {self.max_suppressed})"
            )

    def pruning_models(self) -> list[PrivacyModel]:
        """Models whose feasibility is monotone under the suppression allowed, and that every
        feasible node satisfies: those flagged monotone with suppression, plus k-anonymity
        with the largest ``min_group_size`` of the models (a class smaller than it fails a
        model, so its records are suppressed whatever the other models say)."""
        pruning = [m for m in self.models if m.monotone and m.monotone_with_suppression]
        implied = max((m.min_group_size for m in self.models), default=1)
        if implied > 1 and not any(isinstance(m, KAnonymity) and m.k >= implied for m in pruning):
            pruning.append(KAnonymity(implied))
        return pruning

    def prunes(self, pruning: Sequence[PrivacyModel]) -> bool:
        """Whether :meth:`sub_feasible` can fail at all (pruning models or excess bounds)."""
        return bool(pruning) or bool(self._excess_models)

    def sub_feasible(self, i: int, pruning: Sequence[PrivacyModel], sizes: bool = False) -> bool:
        """Node ``i`` passes the pruning models within the limit and its excess bound
        (:meth:`excess_bound`) does not exceed the limit; else it and every specialization
        are infeasible.  ``sizes``: measure the pruning models on class sizes alone (a
        table without the sensitive attribute, cheaper to roll up) when none of them
        reads sensitive values."""
        node = self.lattice.node(i)
        enc = self.enc
        if sizes and not any(m.requires_sensitive for m in pruning):
            if self._excess_models:
                # the excess bound needs the full table; a table of sizes already at hand
                # (DM*'s bound reads one) spares it where the pruning models fail
                if self._sizes_enc is not None and self._sizes_enc.cached(node) is not None:
                    enc = self._sizes_enc
            else:
                if self._sizes_enc is None:
                    self._sizes_enc = self.enc.sizes_only()
                enc = self._sizes_enc
        out = class_outcome(enc.classes(node), pruning, self.domain, node, self.max_suppressed)
        if out.suppressed > self.max_suppressed or out.released == 0:
            return False
        return self.excess_bound(i) <= self.max_suppressed + 1e-9 * max(self.enc.n, 1)

    def excess_bound(self, i: int) -> float:
        """Records node ``i`` must suppress at least, by the models' excess bounds.

        Every class smaller than the largest ``min_group_size`` counts in full; every other
        class counts ``|E| e(E)``, ``e`` the largest
        :meth:`~structanon.models.PrivacyModel.suppression_excess` of the models that offer one,
        measured against the whole table with no drift: :func:`class_outcome` tests every
        class against the whole table's distribution first and never releases one that
        fails it (later rounds, against the released records, only suppress more), so a
        class it releases satisfies the models against the whole table itself.  A
        class's count is at most the records that a finer node (or the node itself)
        suppresses inside it, so the bound is at most the limit at the node and at its
        specializations when any of them is feasible: a node over the limit proves every
        specialization infeasible too.  0 without such models.
        """
        if not self._excess_models:
            return 0.0
        table = self.enc.classes(self.lattice.node(i))
        assert table.contingency is not None and self._reference is not None
        sizes = table.sizes
        big = np.flatnonzero(sizes >= self._min_size)
        kept = sizes[big]
        bound = float(self.enc.n - int(kept.sum()))  # the classes smaller than the minimum
        if bound > self.max_suppressed:
            return bound
        counts = table.contingency[big]
        excess: np.ndarray | None = None
        for m in self._excess_models:
            share = m.suppression_excess(counts, self._reference, self.domain, 0.0)
            assert share is not None
            excess = share if excess is None else np.maximum(excess, share)
        assert excess is not None
        return bound + float(kept @ excess)

    def tag(self, outside=None) -> np.ndarray:
        """Per node: 1 feasible (or a candidate), -1 infeasible.

        ``outside(i)``, optional, must be closed under generalization (a bound above the
        best score known): such nodes count as tagged 1 (the union of two up-closed sets is
        up-closed, so the binary searches stay valid) and spare the model checks.
        """
        status = np.zeros(self.lattice.n_nodes, dtype=np.int8)
        pruning = self.pruning_models()
        out = outside or (lambda i: False)
        if self.monotone:
            _flash(self.lattice, status, lambda i: out(i) or self.feasible(self.evaluate(i)))
        elif self.prunes(pruning):
            _flash(
                self.lattice,
                status,
                lambda i: out(i) or self.sub_feasible(i, pruning, sizes=True),
            )
        else:
            status[:] = 1  # every node is a candidate
        return status

    def score(self, status: np.ndarray, model: QualityModel) -> dict[int, float]:
        """Score the candidates: only the minimal ones when both feasibility and the
        quality model are monotone, else by branch and bound on the model's lower bounds."""
        ctx = SearchContext.build(self.enc, self.lattice)
        metric_monotone = model.monotone_with_suppression or self.max_suppressed == 0
        if self.monotone and metric_monotone:
            return {
                int(i): model.score(self.evaluate(int(i)), ctx)
                for i in np.flatnonzero(self.lattice.minimal(status == 1))
            }
        candidates = np.flatnonzero(status == 1)
        bounds = model.lower_bounds(ctx)
        if bounds is None:
            return self._score_by_levels(candidates, model, ctx, metric_monotone)
        return self._score_best_first(candidates, bounds, model, ctx)

    def _score_by_levels(
        self,
        candidates: np.ndarray,
        model: QualityModel,
        ctx: SearchContext,
        metric_monotone: bool,
        best: float = np.inf,
    ) -> dict[int, float]:
        """Visit in level order; a node whose bound exceeds the best score so far (``best``
        at first) prunes its generalizations, and so does a feasible node where the metric
        is monotone."""
        lattice, scored = self.lattice, {}
        tables = self.sizes_table if self.enc.has_sensitive else None
        alive = np.zeros(lattice.n_nodes, dtype=bool)
        alive[candidates] = True
        for i in candidates[np.argsort(lattice.level_sum[candidates], kind="stable")]:
            i = int(i)
            if not alive[i]:
                continue
            if model.lower_bound(i, ctx, tables) > best * (1 + 1e-12):
                alive &= ~lattice.above(i)
                continue
            out = self.evaluate_below(i, model, ctx, best)
            if out is not None and self.feasible(out):
                scored[i] = model.score(out, ctx)
                best = min(best, scored[i])
                if metric_monotone:
                    above = lattice.above(i)
                    above[i] = False
                    alive &= ~above
        return scored

    def _score_best_first(
        self, candidates: np.ndarray, bounds: np.ndarray, model: QualityModel, ctx: SearchContext
    ) -> dict[int, float]:
        """Visit in order of the bounds; stop when no bound can beat the best score.

        A quality model that the compiled sweep scores (:attr:`QualityModel.swept`;
        :func:`~tabular._sweep.sweep_nodes`) first gets every node's score, or a bound
        above the sweep's final cutoff (just above the least feasible score it found);
        nodes above that cutoff are skipped (counted as cut short), the others checked as
        before, so the optimum and its ties come from the same checks."""
        scored: dict[int, float] = {}
        best = np.inf
        swept = None
        if model.swept and sweep_applies(self.enc, self.models, self.lattice.n_nodes):
            walked = sweep_nodes(
                self.enc,
                self.models,
                self.max_suppressed,
                _loss_tables(ctx),
                bounds,
                self._descent_cutoff(model, ctx, bounds),
            )
            swept = swept_bounds(walked, bounds)
        for i in candidates[np.argsort(bounds[candidates], kind="stable")]:
            i = int(i)
            if bounds[i] > best + 1e-12 * max(1.0, abs(best)):
                break
            if swept is not None and swept[0][i] > swept[1] and i not in self.outcomes:
                self.cut_short += 1
                continue
            out = self.evaluate_below(i, model, ctx, best)
            if out is not None and self.feasible(out):
                scored[i] = model.score(out, ctx)
                best = min(best, scored[i])
        return scored

    def _descent_cutoff(self, model: QualityModel, ctx: SearchContext, bounds: np.ndarray) -> float:
        """Just above the least score of the feasible nodes on a greedy descent (``inf``
        when it finds none): a first cutoff for the compiled sweep."""
        first = np.inf

        def visit(i: int) -> bool:
            nonlocal first
            out = self.evaluate(i)
            if not self.feasible(out):
                return False
            first = min(first, model.score(out, ctx))
            return True

        self.descend(visit, np.zeros(self.lattice.n_nodes, dtype=np.int8), lambda p: bounds[p])
        return first + 1e-9 * max(1.0, abs(first)) if np.isfinite(first) else np.inf

    def descend(self, visit, status: np.ndarray, bound) -> None:
        """Greedy descent from the most general node to the feasible direct predecessor
        with the lowest ``bound``, while there is one (``visit(i)`` checks a node)."""
        lattice, grid = self.lattice, self.lattice.grid
        current: int | None = lattice.n_nodes - 1
        if not visit(lattice.n_nodes - 1):
            current = None
        while current is not None:
            preds = [
                current - int(lattice.strides[j]) for j in range(grid.shape[1]) if grid[current, j]
            ]
            current = None
            for p in sorted(preds, key=lambda p: (bound(p), p)):
                if status[p] == 1 or (status[p] == 0 and visit(p)):
                    current = p
                    break

    def bounded(self, model: QualityModel) -> tuple[dict[int, float], np.ndarray] | None:
        """Branch and bound on lower bounds known for every node up front (``None`` when
        the quality model has none).

        1. Greedy descent from the most general node: to the feasible direct predecessor
           with the lowest bound, while there is one; its score is the first upper bound.
        2. Every node whose bound can still reach the best score is visited from the most
           general level down (the maximal nodes of that down-set first).  An infeasible
           node proves all its specializations infeasible when feasibility is monotone, or
           when it already fails the pruning models (:meth:`pruning_models`) or its excess
           bound (:meth:`sub_feasible`, then tested before the node's full check, which it
           spares); those are never visited.  Nodes are skipped only when infeasible or
           when their bound exceeds the best feasible score, so the optimum and its ties
           are all scored.
        """
        ctx = SearchContext.build(self.enc, self.lattice)
        bounds = model.lower_bounds(ctx)
        if bounds is None:
            return None
        lattice = self.lattice
        status = np.zeros(lattice.n_nodes, dtype=np.int8)
        scored: dict[int, float] = {}
        pruning = self.pruning_models()
        best = np.inf

        # without monotone feasibility, the pruning models and excess bounds are tested
        # first: a node failing them is infeasible (and settles its specializations) without
        # its full check, which most nodes visited fail
        screen = not self.monotone and self.prunes(pruning)

        def visit(i: int) -> bool:
            nonlocal best
            if screen and not self.sub_feasible(i, pruning):
                status[i] = -1
                _tag_cone(lattice, status, i, up=False, value=-1)
                return False
            out = self.evaluate_below(i, model, ctx, best)
            if out is None:
                return False  # its score exceeds the best: neither feasible-scored nor tagged
            if self.feasible(out):
                status[i] = 1
                scored[i] = model.score(out, ctx)
                best = min(best, scored[i])
                return True
            status[i] = -1
            if self.monotone:
                _tag_cone(lattice, status, i, up=False, value=-1)
            return False

        self.descend(visit, status, lambda p: float(bounds[p]))
        order = np.lexsort((-bounds, -lattice.level_sum))
        for i in order[bounds[order] <= best + 1e-12 * max(1.0, abs(best))]:
            i = int(i)
            if status[i] == 0 and bounds[i] <= best + 1e-12 * max(1.0, abs(best)):
                visit(i)
        return scored, status

    def ascending(self, model: QualityModel) -> tuple[dict[int, float], np.ndarray]:
        """Branch and bound for a metric whose bound needs the node's classes (DM*).

        A greedy descent from the most general node gives a first feasible score; the
        tagging (:meth:`tag`) then counts every node whose bound, read from a class table of
        sizes only, exceeds it as settled, and the candidates left are visited level by
        level (:meth:`_score_by_levels`, starting from that score).
        """
        ctx = SearchContext.build(self.enc, self.lattice)
        seen = np.zeros(self.lattice.n_nodes, dtype=np.int8)
        scored: dict[int, float] = {}
        tables = self.sizes_table if self.enc.has_sensitive else None

        def visit(i: int) -> bool:
            out = self.evaluate(i)
            seen[i] = 1 if self.feasible(out) else -1
            if seen[i] == 1:
                scored[i] = model.score(out, ctx)
            return seen[i] == 1

        self.descend(visit, seen, lambda p: model.lower_bound(p, ctx, tables))
        best = min(scored.values(), default=np.inf)
        limit = best * (1 + 1e-12)
        status = self.tag(lambda i: model.lower_bound(i, ctx, tables) > limit)
        metric_monotone = model.monotone_with_suppression or self.max_suppressed == 0
        candidates = np.flatnonzero(status == 1)
        scored.update(self._score_by_levels(candidates, model, ctx, metric_monotone, best))
        return scored, status

    def sizes_table(self, levels: tuple[int, ...]) -> ClassTable:
        """The class table of a node without the sensitive attribute (sizes only), or
        its full class table when that is at hand.

        With an excess bound and a model measured against the released records, the full
        table is built instead: most nodes whose bound is read are then checked or bounded
        on their full table too (DM* with delta-disclosure or beta-likeness and
        5-anonymity at 4% on Adult: 1.47 -> 1.20 s and 0.50 -> 0.32 s CPU; with
        probabilistic l-diversity or (alpha, k)-anonymity, which are measured on each class
        alone, the sizes-only table stays cheaper: 0.35 against 0.42 s)."""
        table = self.enc.cached(levels)
        if table is not None:
            return table
        if self._full_bounds:
            return self.enc.classes(levels)
        if self._sizes_enc is None:
            self._sizes_enc = self.enc.sizes_only()
        return self._sizes_enc.classes(levels)

    def result(self, scored: dict[int, float], status: np.ndarray, metric: str) -> LatticeSearch:
        """The best scored node (ties: lowest sum of levels, then lattice order)."""
        if not scored:
            raise InfeasibleError(
                "no generalization satisfies the privacy models within the suppression limit "
                f"(no node of the lattice does with at most {self.max_suppressed} of "
                f"{self.enc.n} records suppressed)"
            )
        lattice = self.lattice
        index = np.array(sorted(scored), dtype=np.int64)
        scores = np.array([scored[int(i)] for i in index])
        best_score = float(scores.min())
        tied = index[scores <= best_score + 1e-12 * max(1.0, abs(best_score))]
        tied = tied[np.lexsort((tied, lattice.level_sum[tied]))]
        return LatticeSearch(
            best=self.evaluate(int(tied[0])),
            score=best_score,
            metric=metric,
            n_nodes=lattice.n_nodes,
            checked=len(self.outcomes),
            scored=int(index.size),
            monotone=self.monotone,
            feasible=int((status == 1).sum()),
            ties=[lattice.node(int(i)) for i in tied],
            cut_short=self.cut_short,
        )


def optimal_generalization(
    enc: EncodedTable,
    models: Sequence[PrivacyModel],
    max_suppressed: int,
    metric: str = "discernibility",
    domain: np.ndarray | None = None,
) -> LatticeSearch:
    """Find the feasible lattice node with the lowest score.

    Parameters
    ----------
    enc : EncodedTable
    models : sequence of PrivacyModel
        Read through their flags only: ``monotone``, ``monotone_with_suppression``,
        ``needs_reference``, ``requires_sensitive`` and ``min_group_size``.
    max_suppressed : int
        Most records that may be suppressed.
    metric : {"discernibility", "loss", "precision", "height", "entropy", "entropy-nonmonotonic"}
        The :class:`QualityModel` to minimize (see :func:`quality_model`).
    domain : array, optional
        The sensitive domain, in code order (for t-closeness distances).

    Raises
    ------
    InfeasibleError
        When no node of the lattice is feasible (with monotone feasibility: when even the
        most general node is not).

    Notes
    -----
    The pruning models are those monotone under the suppression allowed, plus k-anonymity
    with the largest ``min_group_size`` of the models (a node failing them fails, and so do
    its specializations).  Models that offer a
    :meth:`~structanon.models.PrivacyModel.suppression_excess` (entropy and recursive
    l-diversity, t-closeness with the equal or hierarchical distance) add the excess bound
    (:meth:`_Search.excess_bound`): a node over the limit settles its specializations in the
    same way.  Node checks stop once the limit is exceeded.

    1. Without suppression, or with t-closeness (measured against the released records)
       and bounds known up front: feasibility under the models that are monotone (all of
       them without suppression; the pruning models otherwise) is resolved for every node
       by predictive tagging and binary search on paths (Flash).  When both feasibility and
       the quality model are monotone, only the minimal feasible nodes are scored; else the
       candidates are visited best first by the quality model's bounds, stopping when no
       bound can beat the best feasible score.
    2. With suppression and bounds known up front (entropy, loss, precision, height):
       :meth:`_Search.bounded`, a greedy descent from the most general node for a first
       score, then a sweep from the most general level down over the nodes whose bound can
       still reach the best score, each infeasible node settling its specializations when
       feasibility is monotone or when it fails the pruning models.
    3. DM* (whose bound is its exact score and needs the classes), with suppression:
       :meth:`_Search.ascending`, the greedy descent, then Flash in which nodes whose DM*
       exceeds the first score count as settled, then level order from that score, pruning
       every generalization of a node whose bound is worse than the best so far.

    Every node skipped is infeasible or has a bound above a feasible score, so the optimum
    and its ties (lowest sum of levels, then lattice order) are those of an exhaustive
    search.
    """
    # the search's matrix products are small: BLAS threads would only spin on the other
    # cores (about a third more CPU time on ARX's beta-likeness requests, no less wall time)
    with threadpool_limits(limits=1, user_api="blas"):
        return _optimal_search(enc, models, max_suppressed, metric, domain)


def _optimal_search(
    enc: EncodedTable,
    models: Sequence[PrivacyModel],
    max_suppressed: int,
    metric: str,
    domain: np.ndarray | None,
) -> LatticeSearch:
    """:func:`optimal_generalization`'s search (with BLAS on one thread)."""
    model = quality_model(metric)
    search = _Search(enc, models, max_suppressed, domain)
    search.check_top()
    # Flash over the whole lattice first without suppression (its binary searches tag the
    # lattice with fewer checks than the descent and sweep need), and for models measured
    # against the released distribution (t-closeness: nearly every k-anonymous node below
    # the optimum must be measured anyway, so the sweep infers little and its top-down
    # order costs roll-ups) -- measured on ARX's cases on Adult
    bounded = None
    if not (search.monotone and max_suppressed == 0):
        if model.lower_bounds(SearchContext.build(enc, search.lattice)) is None:
            bounded = search.ascending(model)
        elif search.monotone or not any(m.needs_reference for m in models):
            bounded = search.bounded(model)
    if bounded is not None:
        scored, status = bounded
        return search.result(scored, status, metric)
    status = search.tag()
    return search.result(search.score(status, model), status, metric)


def _tag_cone(lattice: _Lattice, status: np.ndarray, i: int, up: bool, value: int) -> None:
    """Set ``value`` on the untagged nodes of node ``i``'s cone: its generalizations
    (``up``) or its specializations.  The nodes are in C order over the levels, so a cone
    is a block of the status array seen with one axis per attribute."""
    levels = lattice.grid[i]
    block = tuple(slice(int(v), None) if up else slice(0, int(v) + 1) for v in levels.tolist())
    view = status.reshape(tuple(lattice.dims.tolist()))[block] if levels.size else status
    view[view == 0] = value


def _flash(lattice: _Lattice, status: np.ndarray, is_feasible) -> None:
    """Tag every node feasible / infeasible with binary searches on upward paths."""
    grid = lattice.grid
    dims, strides = lattice.dims.tolist(), lattice.strides.tolist()
    order = np.argsort(lattice.level_sum, kind="stable")
    q = grid.shape[1]
    # the highest level of each node (the climb keeps it low), read as Python ints
    highest = grid.max(axis=1) if q else np.zeros(lattice.n_nodes, dtype=np.int64)

    def tag(i: int, ok: bool) -> None:
        _tag_cone(lattice, status, i, up=ok, value=1 if ok else -1)
        status[i] = 1 if ok else -1

    for start in order:
        if status[start] != 0:
            continue
        path = [int(start)]
        current = int(start)
        while True:
            row = grid[current].tolist()
            nxt = [
                current + strides[j]
                for j in range(q)
                if row[j] + 1 < dims[j] and status[current + strides[j]] == 0
            ]
            if not nxt:
                break
            # climb so that the path stays balanced over the attributes
            current = min(nxt, key=lambda c: (int(highest[c]), c))
            path.append(current)
        low, high = 0, len(path) - 1
        while low <= high:
            mid = (low + high) // 2
            node = path[mid]
            if status[node] == 0:
                tag(node, is_feasible(node))
            if status[node] == 1:
                high = mid - 1
            else:
                low = mid + 1
