"""Every lattice node's loss under a share-capping model, in one compiled pass.

The optimal search's checks cost little per node but are many: under beta-likeness with a
large suppression limit, nearly every node of the lattice has a generalization loss below
the optimum, and its classes must be counted and tested before it can be ruled out.  Here
one compiled function (Numba) walks the whole lattice depth first, rolling each node's
class table up from its parent's by one level of one attribute (classes merged through an
open-addressing hash on their fixed-radix keys), and runs on every node the same checks as
:func:`~tabular._optimal.class_outcome`: classes smaller than the k-anonymity floor fail,
then rounds of the share caps against the records kept, until none fails.  Per node it
gives the loss of the outcome -- exact when the rounds ran to the end, or, when the loss
after the first round already exceeds a cutoff, that first-round loss, which the later
rounds can only raise -- and ``inf`` where the node is infeasible.

The walk starts from the score of a greedy descent and lowers its cutoff to just above each
feasible loss it finds.  The search reads the result as a bound: it skips every node whose
value exceeds the final cutoff, and checks the others itself (so the release, its ties and
its verification come from the usual code; a node is never taken from here).  The kernel
runs only where it pays (:data:`SWEEP_MIN_WORK`), where its tables fit
(:data:`SWEEP_MAX_CELLS`) and where Numba imports; otherwise the search goes on without it.

The first call on a machine compiles the kernel (about 10 s on a 2-core machine); Numba
keeps the compiled code on disk (``cache=True``) for later processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from structanon.models import KAnonymity, PrivacyModel

from ._lattice import EncodedTable

__all__ = [
    "SWEEP_MAX_CELLS",
    "SWEEP_MIN_WORK",
    "sweep_applies",
    "sweep_form",
    "sweep_nodes",
    "swept_bounds",
]

#: the kernel runs when the lattice's nodes times the distinct rows reach this (below it the
#: search's own checks finish faster than Numba imports)
SWEEP_MIN_WORK = 20_000_000
#: and when the bottom node's contingency has at most this many cells (the walk holds up to
#: one table per level of the lattice, each at most that size; beyond it the search's own
#: checks, which keep a bounded cache of tables, are used)
SWEEP_MAX_CELLS = 50_000_000

_KERNEL: Any = None


def _kernel() -> Any:
    """The compiled sweep (``False`` when Numba cannot be imported); built once."""
    global _KERNEL
    if _KERNEL is None:
        try:
            from ._sweep_kernel import sweep
        except ImportError:
            _KERNEL = False
        else:
            _KERNEL = sweep
    return _KERNEL


def sweep_form(models: Sequence[PrivacyModel]) -> tuple[int, float, bool, float] | None:
    """``(k, gain, log_capped, eps)`` when the models are one share-capping model measured
    against the released records (:meth:`~structanon.models.PrivacyModel.share_cap_form`)
    and any number of k-anonymity floors (``k`` the largest); ``None`` otherwise."""
    measured = [m for m in models if m.needs_reference]
    local = [m for m in models if not m.needs_reference]
    if len(measured) != 1 or not all(isinstance(m, KAnonymity) for m in local):
        return None
    model = measured[0]
    form = model.share_cap_form()
    if form is None or model.min_group_size > 1 or not model.requires_sensitive:
        return None
    k = max((m.min_group_size for m in local), default=1)
    gain, log_capped, eps = form
    return int(k), float(gain), bool(log_capped), float(eps)


def sweep_applies(
    enc: EncodedTable, models: Sequence[PrivacyModel], n_nodes: int, force: bool = False
) -> bool:
    """Whether :func:`sweep_nodes` runs on this table and lattice: the models
    (:func:`sweep_form`), a sensitive column and fixed-radix keys, enough work
    (:data:`SWEEP_MIN_WORK`, unless ``force``), a bottom table of at most
    :data:`SWEEP_MAX_CELLS` cells, and Numba (imported here, on the first call that gets
    this far)."""
    if sweep_form(models) is None or not enc.has_sensitive or enc.key_strides is None:
        return False
    if not enc.q or not enc.n:
        return False
    rows = int(enc.base_weight.size)
    if not force and n_nodes * rows < SWEEP_MIN_WORK:
        return False
    if rows * max(enc.n_sensitive, 1) > SWEEP_MAX_CELLS:
        return False
    return _kernel() is not False


def sweep_nodes(
    enc: EncodedTable,
    models: Sequence[PrivacyModel],
    max_suppressed: int,
    loss: Any,
    bounds: np.ndarray,
    cutoff: float = np.inf,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The kernel's walk, where :func:`sweep_applies` (``force`` aside) holds: per node its
    state (0 not checked: its bound exceeded the cutoff; 1 its loss after the first round
    did; 2 checked in full; 3 infeasible), the records it suppresses (after the first round
    for state 1) and its loss (likewise; ``inf`` for state 3), and the last cutoff, just
    above the least feasible loss found (or ``cutoff``).  ``loss``: the search's
    :class:`~tabular._optimal._LossTables`; ``bounds``: each node's loss with every record
    kept."""
    form = sweep_form(models)
    strides = enc.key_strides
    kernel = _kernel()
    assert form is not None and strides is not None and kernel is not False
    k, gain, log_capped, eps = form
    q = enc.q
    heights = enc.heights.astype(np.int64)
    dims = heights + 1
    node_strides = np.ones(q, dtype=np.int64)
    for j in range(q - 2, -1, -1):
        node_strides[j] = node_strides[j + 1] * dims[j + 1]
    # the walk skips a node's generalizations with it when its bound exceeds the cutoff:
    # sound when the bounds never fall from a node to its generalizations (the loss's do not)
    grid = bounds.reshape(tuple(dims.tolist()))
    monotone = all(bool((np.diff(grid, axis=j) >= 0).all()) for j in range(q) if dims[j] > 1)
    # the bottom node's class table, with the narrowest types that hold its values
    bottom = enc.classes((0,) * q)
    assert bottom.contingency is not None  # a sensitive column
    codes0 = np.ascontiguousarray(bottom.codes, dtype=np.int32)
    keys0 = bottom.codes @ strides
    count_type = np.int32 if enc.n < np.iinfo(np.int32).max else np.int64
    cont0 = bottom.contingency.astype(count_type)
    top = int(heights.max())
    width = max(max(counts) for counts in enc.n_nodes)
    up = np.zeros((q, max(top, 1), width), dtype=np.int64)
    leaves = np.zeros((q, top + 1, width), dtype=np.int64)
    totals = np.zeros((q, top + 1), dtype=np.int64)
    gap = np.zeros((q, top + 1), dtype=np.int64)
    for j in range(q):
        for lv in range(int(heights[j]) + 1):
            if lv < heights[j]:
                step = enc.up_map(j, lv, lv + 1)
                up[j, lv, : step.size] = step
            under = loss.leaves[j][lv]
            leaves[j, lv, : under.size] = under
            totals[j, lv] = loss.totals[j][lv]
            gap[j, lv] = loss.gap[j][lv]
    d = np.asarray(loss.d, dtype=np.int64)
    reference = bottom.contingency.sum(axis=0).astype(np.float64)  # the first round's
    state, suppressed, score, last = kernel(
        codes0, keys0, bottom.sizes, cont0, heights, node_strides, up, strides,
        np.ascontiguousarray(bounds, dtype=np.float64), monotone,
        k, reference, gain, log_capped, eps, leaves, totals, gap, d, int(enc.n),
        1.0 / q, int(max_suppressed), float(cutoff),
    )  # fmt: skip
    return state, suppressed, score, float(last)


def swept_bounds(
    walked: tuple[np.ndarray, np.ndarray, np.ndarray, float], bounds: np.ndarray
) -> tuple[np.ndarray, float]:
    """From :func:`sweep_nodes`' walk, per node a lower bound of its loss, and the last
    cutoff: the exact loss of its outcome, or its loss after the first round when that
    exceeded the cutoff of the moment, ``inf`` where the node is infeasible, and its entry
    of ``bounds`` where that exceeded the cutoff (the node was not checked).  Every value
    above the last cutoff is thus a node that cannot reach the least loss."""
    state, _, score, last = walked
    out = np.where(state == 3, np.inf, score)
    unchecked = state == 0
    out[unchecked] = bounds[unchecked]
    return out, last
