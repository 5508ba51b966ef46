"""Globally optimal full-domain generalization: a Flash-style search of the lattice.

The lattice holds one node per combination of hierarchy levels.  A node is *feasible* when
the records in the equivalence classes that fail a privacy model number at most the
suppression limit (those classes are suppressed).  When feasibility is monotone, every
check tags a whole cone of the lattice (predictive tagging): a feasible node makes all its
generalizations feasible, an infeasible node makes all its specializations infeasible.
Untagged nodes are resolved by binary search along upward paths (Kohlmayer et al. 2012).
The optimum is then the best-scoring feasible node under the chosen quality model; for a
monotone quality model only the minimal feasible nodes are scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from structanon import InfeasibleError, InputError
from structanon.models import DistinctLDiversity, KAnonymity, PrivacyModel, TCloseness

from ._lattice import ClassTable, EncodedTable

__all__ = ["QUALITY_MODELS", "NodeOutcome", "LatticeSearch", "optimal_generalization"]

QUALITY_MODELS = ("discernibility", "loss", "precision", "height")


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


def class_outcome(table: ClassTable, models: Sequence[PrivacyModel], domain: np.ndarray | None,
                  levels: tuple[int, ...] = (), limit: int | None = None) -> NodeOutcome:
    """Test every class against every model; suppress the failing classes.

    Models are applied in turn to the classes that passed the previous ones (cheap tests
    first).  t-closeness is measured against the sensitive distribution of the records
    that are released, as a verifier reading only the output would measure it: after
    suppression the reference is recomputed on the kept classes and the test repeated
    until no kept class fails (the kept set only shrinks, so this ends).  With ``limit``,
    the repetition stops as soon as more than ``limit`` records are suppressed (the node
    is then infeasible whatever further passes would find).
    """
    ok = np.ones(table.n_classes, dtype=bool)
    ordered = sorted(models, key=lambda m: (isinstance(m, TCloseness), m.requires_sensitive))
    uses_reference = any(isinstance(m, TCloseness) for m in models)
    while ok.any():
        kept = np.flatnonzero(ok)
        reference, present, values = None, slice(None), domain
        if uses_reference and table.contingency is not None:
            reference = table.contingency[kept].sum(axis=0)
            if not (reference > 0).all():
                # the published domain holds only the values still released (this matters
                # to ordered and hierarchical distances)
                present = np.flatnonzero(reference > 0)
                reference = reference[present]
                values = None if domain is None else np.asarray(domain)[present]
        passed = np.ones(kept.size, dtype=bool)
        for model in ordered:
            alive = np.flatnonzero(passed)
            if alive.size == 0:
                break
            rows = kept[alive]
            counts = table.contingency[rows][:, present] if model.requires_sensitive \
                else table.sizes[rows]
            passed[alive[~model.group_ok(counts, reference, values)]] = False
        if passed.all():
            break
        ok[kept[~passed]] = False
        if not uses_reference:
            break
        if limit is not None and int(table.sizes[~ok].sum()) > limit:
            break
    suppressed = int(table.sizes[~ok].sum())
    return NodeOutcome(levels, table, ok, suppressed)


def quality(outcome: NodeOutcome, metric: str, enc: EncodedTable, shares: list[list[np.ndarray]]
            ) -> float:
    """Score of a node under a quality model (lower is better).

    Notes
    -----
    * ``discernibility`` (ARX's DM*): ``sum_E |E|^2`` over all classes of the generalized
      table, suppressed ones included.
    * ``loss`` (Iyengar's loss metric as ARX aggregates it): per attribute ``j``,
      ``L_j = (sum_E |E| share_j(E) + s - n/D_j) / (n - n/D_j)``, where ``share_j(E)`` is the
      fraction of the ``D_j`` hierarchy leaves under the class's value and each of the ``s``
      suppressed records costs 1; attributes are combined by the shifted geometric mean
      ``prod_j (L_j + 1)^(1/q) - 1``.
    * ``precision`` (Sweeney): mean over attributes of
      ``((n - s) level_j / height_j + s) / n``.
    * ``height``: the sum of the levels.
    """
    sizes = outcome.table.sizes
    n = float(sizes.sum())
    if metric == "discernibility":
        return float((sizes.astype(np.float64) ** 2).sum())
    if metric == "height":
        return float(sum(outcome.levels))
    s = float(outcome.suppressed)
    if metric == "precision":
        values = [
            ((n - s) * (lv / h if h else 0.0) + s) / n
            for lv, h in zip(outcome.levels, enc.heights.tolist())
        ]
        return float(np.mean(values)) if values else 0.0
    if metric == "loss":
        ok = outcome.ok
        product = 1.0
        q = max(enc.q, 1)
        for j, lv in enumerate(outcome.levels):
            share = shares[j][lv][outcome.table.codes[ok, j]]
            total = float((sizes[ok] * share).sum()) + s
            leaves = enc.hierarchies[j].leaves.size
            low = n / leaves
            value = (total - low) / (n - low) if n > low else 0.0
            product *= (max(value, 0.0) + 1.0) ** (1.0 / q)
        return product - 1.0
    raise InputError(f"metric must be one of {QUALITY_MODELS}, got {metric!r}")


def _monotone_with_suppression(model: PrivacyModel) -> bool:
    # Merging a passing class with a failing one keeps it passing only for k-anonymity and
    # distinct l-diversity; the other models are monotone only without suppression.
    return type(model) in (KAnonymity, DistinctLDiversity)


def _predicate_monotone(models: Sequence[PrivacyModel], max_suppressed: int) -> bool:
    if not all(getattr(m, "monotone", False) for m in models):
        return False
    return max_suppressed == 0 or all(_monotone_with_suppression(m) for m in models)


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


class _Lattice:
    """All nodes of the lattice as an array, with cone (generalization) queries."""

    def __init__(self, heights: np.ndarray) -> None:
        self.dims = heights + 1
        q = heights.size
        self.n_nodes = int(np.prod(self.dims)) if q else 1
        self.grid = (np.indices(tuple(self.dims.tolist())).reshape(q, -1).T if q
                     else np.zeros((1, 0), dtype=np.int64))
        self.strides = np.ones(q, dtype=np.int64)
        for j in range(q - 2, -1, -1):
            self.strides[j] = self.strides[j + 1] * self.dims[j + 1]
        self.level_sum = self.grid.sum(axis=1)

    def node(self, i: int) -> tuple[int, ...]:
        return tuple(int(v) for v in self.grid[i])

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


def _lower_bounds(lattice: _Lattice, metric: str, enc: EncodedTable,
                  shares: list[list[np.ndarray]]) -> np.ndarray | None:
    """Per node, a lower bound of the score valid whatever is suppressed (None: use DM*)."""
    grid = lattice.grid
    if metric == "height":
        return lattice.level_sum.astype(float)
    if metric == "precision":
        h = np.maximum(enc.heights, 1)
        return (grid / h).mean(axis=1) if enc.q else np.zeros(1)
    if metric == "loss":
        # generalization-only loss: per attribute and level a sum over records of the share
        product = np.ones(lattice.n_nodes)
        n = float(enc.n)
        for j in range(enc.q):
            counts = np.bincount(enc.base_leaf_codes[:, j], weights=enc.base_weight,
                                 minlength=enc.hierarchies[j].leaves.size)
            low = n / enc.hierarchies[j].leaves.size
            per_level = np.array([
                float((counts * shares[j][lv][enc.maps[j][:, lv]]).sum())
                for lv in range(int(enc.heights[j]) + 1)
            ])
            value = np.clip((per_level - low) / (n - low), 0, None) if n > low else \
                np.zeros(per_level.size)
            product *= (value[grid[:, j]] + 1.0) ** (1.0 / enc.q)
        return product - 1.0
    return None


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
    max_suppressed : int
        Most records that may be suppressed.
    metric : {"discernibility", "loss", "precision", "height"}
    domain : array, optional
        The sensitive domain, in code order (for t-closeness distances).

    Raises
    ------
    InfeasibleError
        When no node of the lattice is feasible (with monotone feasibility: when even the
        most general node is not).

    Notes
    -----
    1. Feasibility under the models that are monotone (all of them without suppression;
       k-anonymity and distinct l-diversity with it) is resolved for every node by
       predictive tagging and binary search on paths.
    2. When both feasibility and the quality model are monotone, only the minimal
       feasible nodes are scored.  Otherwise the nodes left are visited by branch and
       bound: in order of a lower bound of their score (the score ignoring suppression,
       which only adds loss; DM* is exact and visited in level order, pruning every
       generalization of a node scoring worse than the best so far), fully evaluated,
       and the search stops when no bound can beat the best feasible score.
    """
    if metric not in QUALITY_MODELS:
        raise InputError(f"metric must be one of {QUALITY_MODELS}, got {metric!r}")
    lattice = _Lattice(enc.heights)
    n_nodes = lattice.n_nodes
    outcomes: dict[int, NodeOutcome] = {}
    monotone = _predicate_monotone(models, max_suppressed)
    pruning_models = list(models) if monotone else [
        m for m in models if getattr(m, "monotone", False) and _monotone_with_suppression(m)
    ]

    def evaluate(i: int) -> NodeOutcome:
        out = outcomes.get(i)
        if out is None:
            node = lattice.node(i)
            out = class_outcome(enc.classes(node), models, domain, node, max_suppressed)
            outcomes[i] = out
        return out

    def feasible(out: NodeOutcome) -> bool:
        return out.suppressed <= max_suppressed and out.released > 0

    top = n_nodes - 1
    # only under monotone feasibility does a failing top node rule out every other node:
    # with suppression, entropy / recursive l-diversity or t-closeness may hold lower down
    if monotone and not feasible(evaluate(top)):
        raise InfeasibleError(
            "no generalization satisfies the privacy models within the suppression limit "
            f"(the most general node suppresses {outcomes[top].suppressed} of {enc.n} records, "
            f"limit {max_suppressed})"
        )
    status = np.zeros(n_nodes, dtype=np.int8)  # 1 feasible, -1 infeasible, 0 unknown
    if monotone:
        _flash(lattice, status, lambda i: feasible(evaluate(i)))
    elif pruning_models:
        def sub_feasible(i: int) -> bool:
            node = lattice.node(i)
            out = class_outcome(enc.classes(node), pruning_models, domain, node)
            return out.suppressed <= max_suppressed and out.released > 0

        _flash(lattice, status, sub_feasible)
    else:
        status[:] = 1  # every node is a candidate
    candidates = np.flatnonzero(status == 1)
    metric_monotone = metric in ("discernibility", "height") or max_suppressed == 0
    shares = [
        [h.leaf_counts(lv) / h.leaves.size for lv in range(h.height + 1)] for h in enc.hierarchies
    ]
    scored: dict[int, float] = {}
    if monotone and metric_monotone:
        for i in np.flatnonzero(lattice.minimal(status == 1)):
            scored[int(i)] = quality(evaluate(int(i)), metric, enc, shares)
    else:
        bounds = _lower_bounds(lattice, metric, enc, shares)
        best = np.inf
        if bounds is None:  # DM*: exact and monotone, visit in level order and prune cones
            alive = np.zeros(n_nodes, dtype=bool)
            alive[candidates] = True
            for i in candidates[np.argsort(lattice.level_sum[candidates], kind="stable")]:
                i = int(i)
                if not alive[i]:
                    continue
                dm = float((enc.classes(lattice.node(i)).sizes.astype(np.float64) ** 2).sum())
                if dm > best * (1 + 1e-12):
                    alive &= ~lattice.above(i)
                    continue
                out = evaluate(i)
                if feasible(out):
                    scored[i] = dm
                    best = min(best, dm)
                    above = lattice.above(i)
                    above[i] = False
                    alive &= ~above
        else:
            for i in candidates[np.argsort(bounds[candidates], kind="stable")]:
                i = int(i)
                if bounds[i] > best + 1e-12 * max(1.0, abs(best)):
                    break
                out = evaluate(i)
                if feasible(out):
                    scored[i] = quality(out, metric, enc, shares)
                    best = min(best, scored[i])
    if not scored:
        raise InfeasibleError(
            "no generalization satisfies the privacy models within the suppression limit "
            f"(no node of the lattice does with at most {max_suppressed} of {enc.n} records "
            "suppressed)"
        )
    index = np.array(sorted(scored), dtype=np.int64)
    scores = np.array([scored[int(i)] for i in index])
    best_score = float(scores.min())
    tol = 1e-12 * max(1.0, abs(best_score))
    tied = index[scores <= best_score + tol]
    tied = tied[np.lexsort((tied, lattice.level_sum[tied]))]
    return LatticeSearch(
        best=evaluate(int(tied[0])),
        score=best_score,
        metric=metric,
        n_nodes=n_nodes,
        checked=len(outcomes),
        scored=int(index.size),
        monotone=monotone,
        feasible=int(candidates.size),
        ties=[lattice.node(int(i)) for i in tied],
    )


def _flash(lattice: _Lattice, status: np.ndarray, is_feasible) -> None:
    """Tag every node feasible / infeasible with binary searches on upward paths."""
    grid, dims, strides = lattice.grid, lattice.dims, lattice.strides
    order = np.argsort(lattice.level_sum, kind="stable")
    q = grid.shape[1]

    def tag(i: int, ok: bool) -> None:
        cone = np.all(grid >= grid[i], axis=1) if ok else np.all(grid <= grid[i], axis=1)
        status[cone & (status == 0)] = 1 if ok else -1
        status[i] = 1 if ok else -1

    for start in order:
        if status[start] != 0:
            continue
        path = [int(start)]
        current = int(start)
        while True:
            nxt = [
                current + int(strides[j]) for j in range(q)
                if grid[current, j] + 1 < dims[j] and status[current + int(strides[j])] == 0
            ]
            if not nxt:
                break
            # climb so that the path stays balanced over the attributes
            current = min(nxt, key=lambda c: (int(grid[c].max()), c))
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
