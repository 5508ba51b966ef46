"""The compiled walk of :mod:`tabular._sweep` (imported only there; needs Numba).

Integer counts throughout; the shares, caps and scores are computed with the same
floating-point operations, in the same order, as :meth:`structanon.models.BLikeness.
share_caps`, :func:`tabular._optimal._capped_rounds` and :class:`tabular._optimal.Loss`
(``tests/tabular/test_sweep.py`` compares them node by node).
"""

from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(cache=True, error_model="numpy", nogil=True)


@_jit
def _caps(reference, gain, log_capped, eps, out):  # pragma: no cover - compiled
    """Each value's cap on a class's share: ``p (1 + g + eps)`` with ``p`` its share of
    ``reference``, ``g = gain`` (``log_capped``: ``min(gain, -ln p)``); ``inf`` for
    absent values."""
    total = 0.0
    for s in range(reference.size):
        total += reference[s]
    for s in range(reference.size):
        p = reference[s] / total
        if p > 0:
            g = gain
            if log_capped:
                g = min(gain, -np.log(p))
            out[s] = p * ((1.0 + g) + eps)
        else:
            out[s] = np.inf


@_jit
def _loss(
    codes, sizes, alive, n_alive, levels, leaves, totals, d, n, dropped, root
):  # pragma: no cover
    """The loss of a node whose classes ``alive`` are kept (the leaves under each kept
    class's value summed over the smaller side: the kept or the suppressed classes)."""
    m = sizes.size
    product = 1.0
    few = 2 * (m - n_alive) <= m
    for j in range(codes.shape[1]):
        lv = levels[j]
        under = leaves[j, lv]
        part = 0
        for c in range(m):
            if alive[c] != few:
                part += sizes[c] * under[codes[c, j]]
        kept = totals[j, lv] - part if few else part
        value = 0.0
        if n * d[j] > n:
            value = max((kept + dropped * d[j] - n) / (n * d[j] - n), 0.0)
        product *= (value + 1.0) ** root
    return product - 1.0


@_jit
def _loss_bound(levels, totals, gap, d, n, dropped, root):  # pragma: no cover - compiled
    """The least loss of a node with ``dropped`` records suppressed (``Loss.suppressed_bound``)."""
    product = 1.0
    for j in range(levels.size):
        if n * d[j] > n:
            lv = levels[j]
            value = max((totals[j, lv] + dropped * gap[j, lv] - n) / (n * d[j] - n), 0.0)
            product *= (value + 1.0) ** root
    return product - 1.0


@_jit
def _floor(sizes, k, alive):  # pragma: no cover - compiled
    """Keep the classes of at least ``k`` records: ``(records dropped, classes kept)``."""
    dropped = 0
    kept = 0
    for c in range(sizes.size):
        alive[c] = sizes[c] >= k
        if alive[c]:
            kept += 1
        else:
            dropped += sizes[c]
    return dropped, kept


@_jit
def _capped_round(cont, sizes, alive, caps):  # pragma: no cover - compiled
    """Drop the kept classes holding a value above its cap (``count > size * cap``, as
    ``_capped_rounds`` compares): ``(records dropped, classes dropped)``."""
    dropped = 0
    removed = 0
    for c in range(sizes.size):
        if alive[c]:
            size = float(sizes[c])
            fails = False
            for s in range(cont.shape[1]):
                fails |= cont[c, s] > size * caps[s]
            if fails:
                alive[c] = False
                dropped += sizes[c]
                removed += 1
    return dropped, removed


@_jit
def _kept_counts(cont, alive, reference):  # pragma: no cover - compiled
    """Each value's count over the kept classes."""
    reference[:] = 0.0
    for c in range(cont.shape[0]):
        if alive[c]:
            for s in range(cont.shape[1]):
                reference[s] += cont[c, s]


@_jit
def _check(
    table, levels, form, loss_tables, cut, cutoff, alive, reference, caps
):  # pragma: no cover
    """``(state, suppressed, loss)`` of one node: state 1 when the loss after the first
    round exceeds ``cutoff`` (the loss then that first-round value), 2 when the rounds ran
    to the end (exact), 3 when the node is infeasible."""
    codes, _, sizes, cont = table
    k, whole, gain, log_capped, eps = form
    leaves, totals, gap, d, n, root = loss_tables
    m = sizes.size
    alive = alive[:m]
    dropped, n_alive = _floor(sizes, k, alive)
    reference[:] = whole
    in_reference = m
    while n_alive > 0 and dropped <= cut:
        _caps(reference, gain, log_capped, eps, caps)
        more, removed = _capped_round(cont, sizes, alive, caps)
        dropped += more
        n_alive -= removed
        if dropped > cut or n_alive == 0 or n_alive == in_reference:
            break
        if in_reference == m:
            # the later rounds only drop more: the first round's loss bounds the node's
            first = _loss_bound(levels, totals, gap, d, n, dropped, root)
            if first <= cutoff:
                first = _loss(
                    codes, sizes, alive, n_alive, levels, leaves, totals, d, n, dropped, root
                )
            if first > cutoff:
                return 1, dropped, first
        in_reference = n_alive
        _kept_counts(cont, alive, reference)
    if dropped > cut or n_alive == 0:
        return 3, dropped, np.inf
    return (
        2,
        dropped,
        _loss(codes, sizes, alive, n_alive, levels, leaves, totals, d, n, dropped, root),
    )


@_jit
def _roll_up(table, j, up, stride):  # pragma: no cover - compiled
    """The class table one level up on attribute ``j`` (``up``: the next level's code of
    each code): each class's key moves by its code's change, and classes of equal keys
    are merged through an open-addressing hash (keys in slots, so one probe reads one
    slot)."""
    codes, keys, sizes, cont = table
    m, q = codes.shape
    n_values = cont.shape[1]
    slots = 1
    while slots < 2 * m:
        slots *= 2
    mask = slots - 1
    slot_key = np.full(slots, -1, dtype=np.int64)
    slot_id = np.empty(slots, dtype=np.int32)
    new_codes = np.empty((m, q), dtype=codes.dtype)
    new_keys = np.empty(m, dtype=np.int64)
    new_sizes = np.empty(m, dtype=np.int64)
    new_cont = np.empty((m, n_values), dtype=cont.dtype)
    count = 0
    for c in range(m):
        old = codes[c, j]
        new = up[old]
        key = keys[c] + (new - old) * stride
        slot = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & mask
        while True:
            held = slot_key[slot]
            if held == key:
                t = slot_id[slot]
                new_sizes[t] += sizes[c]
                for s in range(n_values):
                    new_cont[t, s] += cont[c, s]
                break
            if held == -1:
                t = count
                count += 1
                slot_key[slot] = key
                slot_id[slot] = t
                for a in range(q):
                    new_codes[t, a] = codes[c, a]
                new_codes[t, j] = new
                new_keys[t] = key
                new_sizes[t] = sizes[c]
                for s in range(n_values):
                    new_cont[t, s] = cont[c, s]
                break
            slot = (slot + 1) & mask
    if 2 * count > m:
        return new_codes[:count], new_keys[:count], new_sizes[:count], new_cont[:count]
    # far fewer classes: give the rest of the memory back (the walk keeps one table a level)
    return (
        new_codes[:count].copy(),
        new_keys[:count].copy(),
        new_sizes[:count].copy(),
        new_cont[:count].copy(),
    )


@_jit
def sweep(
    codes,
    keys,
    sizes,
    cont,
    heights,
    node_strides,
    up,
    strides,
    bounds,
    monotone,
    k,
    whole,
    gain,
    log_capped,
    eps,
    leaves,
    totals,
    gap,
    d,
    n,
    root,
    cut,
    cutoff,
):  # pragma: no cover - compiled
    """Walk the lattice depth first from the bottom node (whose class table is given):
    a node's children raise one attribute at or after the last one it raised, so every
    node is reached once, from a parent one level below on one attribute.  A node is
    checked when its bound (``bounds``: the loss of its generalization alone) is at most
    the cutoff, which falls to just above each feasible loss found; with ``monotone``
    (bounds that never fall from a node to its generalizations), a node above the cutoff
    is not rolled up, and neither are its generalizations.  Returns per node the state (0
    not checked; see :func:`_check`), the records suppressed and the loss, and the last
    cutoff."""  # fmt: skip
    q = heights.size
    n_nodes = bounds.size
    state = np.zeros(n_nodes, dtype=np.int8)
    suppressed = np.zeros(n_nodes, dtype=np.int64)
    score = np.full(n_nodes, np.inf)
    depth_max = 0
    for j in range(q):
        depth_max += heights[j]
    table = (codes, keys, sizes, cont)
    tables = [table] * (depth_max + 1)
    next_attr = np.zeros(depth_max + 1, dtype=np.int64)
    raised = np.zeros(depth_max + 1, dtype=np.int64)
    levels = np.zeros(q, dtype=np.int64)
    alive = np.empty(sizes.size, dtype=np.bool_)
    reference = np.empty(cont.shape[1])
    caps = np.empty(cont.shape[1])
    form = (k, whole, gain, log_capped, eps)
    loss_tables = (leaves, totals, gap, d, n, root)
    index = 0
    depth = 0
    while True:
        if bounds[index] <= cutoff:
            st, dropped, loss = _check(
                table, levels, form, loss_tables, cut, cutoff, alive, reference, caps
            )
            state[index], suppressed[index], score[index] = st, dropped, loss
            if st == 2:
                cutoff = min(cutoff, loss + 1e-9 * max(1.0, abs(loss)))
        # the next node: raise the first attribute that can be, from the last one raised
        while True:
            j = next_attr[depth]
            while j < q and levels[j] >= heights[j]:
                j += 1
            if j < q:
                next_attr[depth] = j + 1
                if monotone and bounds[index + node_strides[j]] > cutoff:
                    continue
                break
            if depth == 0:
                return state, suppressed, score, cutoff
            levels[raised[depth]] -= 1
            index -= node_strides[raised[depth]]
            depth -= 1
        table = _roll_up(tables[depth], j, up[j, levels[j]], strides[j])
        depth += 1
        tables[depth] = table
        levels[j] += 1
        index += node_strides[j]
        raised[depth] = j
        next_attr[depth] = j
