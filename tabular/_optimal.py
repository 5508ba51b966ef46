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
                  levels: tuple[int, ...] = ()) -> NodeOutcome:
    """Test every class against every model; suppress the failing classes.

    t-closeness is measured against the sensitive distribution of the records that are
    released, as a verifier reading only the output would measure it: after suppression
    the reference is recomputed on the kept classes and the test repeated until no kept
    class fails (the kept set only shrinks, so this ends).
    """
    ok = np.ones(table.n_classes, dtype=bool)
    uses_reference = any(isinstance(m, TCloseness) for m in models)
    while ok.any():
        kept = np.flatnonzero(ok)
        reference = None
        if uses_reference and table.contingency is not None:
            reference = table.contingency[kept].sum(axis=0)
        passed = np.ones(kept.size, dtype=bool)
        for model in models:
            if model.requires_sensitive:
                passed &= model.group_ok(table.contingency[kept], reference, domain)
            else:
                passed &= model.group_ok(table.sizes[kept])
        if passed.all():
            break
        ok[kept[~passed]] = False
        if not uses_reference:
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


def _predicate_monotone(models: Sequence[PrivacyModel], max_suppressed: int) -> bool:
    if not all(getattr(m, "monotone", False) for m in models):
        return False
    if max_suppressed == 0:
        return True
    # With suppression, merging a passing class with a failing one keeps it passing only
    # for k-anonymity and distinct l-diversity.
    return all(type(m) in (KAnonymity, DistinctLDiversity) for m in models)


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
        When even the most general node is infeasible.
    """
    if metric not in QUALITY_MODELS:
        raise InputError(f"metric must be one of {QUALITY_MODELS}, got {metric!r}")
    heights = enc.heights
    dims = heights + 1
    n_nodes = int(np.prod(dims)) if enc.q else 1
    grid = np.indices(tuple(dims.tolist())).reshape(enc.q, -1).T if enc.q else np.zeros((1, 0), int)
    strides = np.ones(enc.q, dtype=np.int64)
    for j in range(enc.q - 2, -1, -1):
        strides[j] = strides[j + 1] * dims[j + 1]
    outcomes: dict[int, NodeOutcome] = {}

    def evaluate(i: int) -> NodeOutcome:
        out = outcomes.get(i)
        if out is None:
            node = tuple(int(v) for v in grid[i])
            out = class_outcome(enc.classes(node), models, domain, node)
            outcomes[i] = out
        return out

    def feasible(out: NodeOutcome) -> bool:
        return out.suppressed <= max_suppressed and out.released > 0

    top = n_nodes - 1
    if not feasible(evaluate(top)):
        raise InfeasibleError(
            "no generalization satisfies the privacy models within the suppression limit "
            f"(the most general node suppresses {outcomes[top].suppressed} of {enc.n} records, "
            f"limit {max_suppressed})"
        )
    status = np.zeros(n_nodes, dtype=np.int8)  # 1 feasible, -1 infeasible, 0 unknown
    monotone = _predicate_monotone(models, max_suppressed)
    if monotone:
        _flash(grid, dims, strides, status, lambda i: feasible(evaluate(i)))
    else:
        for i in range(n_nodes):
            status[i] = 1 if feasible(evaluate(i)) else -1
    checked = len(outcomes)
    feasible_idx = np.flatnonzero(status == 1)
    metric_monotone = metric in ("discernibility", "height") or max_suppressed == 0
    if monotone and metric_monotone:
        minimal = np.ones(n_nodes, dtype=bool)
        for j in range(enc.q):
            has_pred = grid[:, j] > 0
            pred = np.where(has_pred, np.arange(n_nodes) - strides[j], 0)
            minimal &= ~(has_pred & (status[pred] == 1))
        candidates = np.flatnonzero(minimal & (status == 1))
    else:
        candidates = feasible_idx
    shares = [
        [h.leaf_counts(lv) / h.leaves.size for lv in range(h.height + 1)] for h in enc.hierarchies
    ]
    scores = np.array([quality(evaluate(int(i)), metric, enc, shares) for i in candidates])
    best_score = float(scores.min())
    tol = 1e-12 * max(1.0, abs(best_score))
    tied = candidates[scores <= best_score + tol]
    tied = tied[np.lexsort((tied, grid[tied].sum(axis=1)))]
    best = evaluate(int(tied[0]))
    return LatticeSearch(
        best=best,
        score=best_score,
        metric=metric,
        n_nodes=n_nodes,
        checked=checked,
        scored=int(candidates.size),
        monotone=monotone,
        feasible=int(feasible_idx.size),
        ties=[tuple(int(v) for v in grid[i]) for i in tied],
    )


def _flash(grid: np.ndarray, dims: np.ndarray, strides: np.ndarray, status: np.ndarray,
           is_feasible) -> None:
    """Tag every node feasible / infeasible with binary searches on upward paths."""
    order = np.argsort(grid.sum(axis=1), kind="stable")
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
