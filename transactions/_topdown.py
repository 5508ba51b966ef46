"""k-anonymity of whole transactions: top-down local generalization (He & Naughton 2009).

Every occurrence of an item carries the node it is currently published as (``cur``).  All
transactions start generalized to the root, in one partition.  A partition is refined by
expanding one of its published nodes into the children that cover each transaction's
items; transactions with the same children form a sub-partition.  Sub-partitions smaller
than ``k`` are pooled back, unexpanded, with enough transactions borrowed from the largest
sub-partitions to reach ``k``.  Within a partition all transactions publish the same set.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from structanon._finish import Timings
from structanon._validation import check_int
from structanon.io import release_key

from ._common import (
    MAX_M,
    TransactionsRelease,
    check_seed,
    finish_generalization,
    prepare_generalization,
    publish_sets,
    resolve_measures,
    transformation_text,
)
from ._data import Baskets
from ._long import maybe_long
from ._taxonomy import Taxonomy
from ._verify import TransactionKAnonymity, make_verifier

__all__ = ["k_anonymize", "partition_groups"]


def _occurrences(b: Baskets, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lens = b.lengths[rows]
    total = int(lens.sum())
    offsets = np.zeros(rows.size, dtype=np.int64)
    np.cumsum(lens[:-1], out=offsets[1:])
    idx = np.repeat(b.indptr[rows] - offsets, lens) + np.arange(total, dtype=np.int64)
    pos = np.repeat(np.arange(rows.size, dtype=np.int64), lens)
    return idx, pos


def _candidates(nodes: np.ndarray, tax: Taxonomy, frozen: frozenset) -> np.ndarray:
    """Published nodes of a partition worth expanding, largest NCP mass first."""
    weight = np.bincount(nodes, weights=tax.ncp[nodes], minlength=tax.n_nodes)
    cand = np.flatnonzero(weight > 0)
    if frozen:
        cand = cand[~np.isin(cand, np.fromiter(frozen, dtype=np.int64))]
    return cand[np.lexsort((cand, -weight[cand]))]


def _borrow(
    sub: np.ndarray, sizes: np.ndarray, big: np.ndarray, left_mask: np.ndarray, k: int
) -> int:
    """Move members of the largest sub-partitions (kept >= k) into the pooled rest.

    ``left_mask`` (the pooled rows) is updated in place; returns how many rows are still
    missing for the pool to reach ``k``.
    """
    need = k - int(left_mask.sum()) if left_mask.any() else 0
    for g in np.argsort(-sizes, kind="stable").tolist():
        if need <= 0 or not big[g]:
            break
        spare = int(sizes[g]) - k
        if spare <= 0:
            continue
        take = min(spare, need)
        members = np.flatnonzero(sub == g)[-take:]
        left_mask[members] = True
        sizes[g] -= take
        need -= take
    return need


def _expand(
    b: Baskets,
    tax: Taxonomy,
    k: int,
    rows: np.ndarray,
    idx: np.ndarray,
    pos: np.ndarray,
    nodes: np.ndarray,
    x: int,
    h1: np.ndarray,
    h2: np.ndarray,
):
    """Try expanding node ``x`` in a partition; ``None`` when no valid split exists.

    Returns ``(left_mask, sub, occ, child, opos)``: the rows pooled back unexpanded, the
    sub-partition of every row, and the occurrences of ``x`` with their children.
    """
    sel = nodes == x
    occ = idx[sel]
    opos = pos[sel]
    child = tax.anc[b.codes[occ], tax.depth[x] + 1]
    pair = np.unique(opos * np.int64(tax.n_nodes) + child)
    ppos, pchild = pair // tax.n_nodes, pair % tax.n_nodes
    k1 = np.bincount(ppos, minlength=rows.size)  # children per row
    s1 = np.zeros(rows.size, dtype=np.int64)
    s2 = np.zeros(rows.size, dtype=np.int64)
    np.add.at(s1, ppos, h1[pchild])
    np.add.at(s2, ppos, h2[pchild])
    sig = np.stack([s1, s2, k1.astype(np.int64)], axis=1)
    _, sub, sizes = np.unique(sig, axis=0, return_inverse=True, return_counts=True)
    sub = sub.reshape(-1)
    big = sizes >= k
    if not big.any():
        return None
    left_mask = ~big[sub]
    if _borrow(sub, sizes, big, left_mask, k) > 0 or left_mask.all():
        return None
    return left_mask, sub, occ, child, opos


def _split(
    stack: list, rows: np.ndarray, frozen: frozenset, x: int, left_mask: np.ndarray, sub: np.ndarray
) -> None:
    """Push the sub-partitions of an expansion, and the pooled rest with ``x`` frozen."""
    keep_sub, keep_rows = sub[~left_mask], rows[~left_mask]
    o = np.argsort(keep_sub, kind="stable")
    bounds = np.flatnonzero(np.diff(keep_sub[o])) + 1
    for part in np.split(keep_rows[o], bounds):
        stack.append((part, frozenset()))
    if left_mask.any():
        stack.append((rows[left_mask], frozen | {x}))


def partition_groups(
    b: Baskets, tax: Taxonomy, k: int, seed: int | None = None
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Run Partition on the non-empty transactions.

    Returns ``(cur, group, stats)``: the published node of every item occurrence, the group
    of every transaction (-1 for empty ones), and counts of expansions.
    """
    rng = np.random.default_rng(seed)
    h1 = rng.integers(1, 2**62, size=tax.n_nodes, dtype=np.int64)
    h2 = rng.integers(1, 2**62, size=tax.n_nodes, dtype=np.int64)
    cur = np.full(b.nnz, tax.root, dtype=np.int64)
    group = np.full(b.n, -1, dtype=np.int64)
    nonempty = np.flatnonzero(b.lengths > 0)
    stack: list[tuple[np.ndarray, frozenset]] = [(nonempty, frozenset())] if nonempty.size else []
    n_groups = expansions = failures = 0
    while stack:
        rows, frozen = stack.pop()
        idx, pos = _occurrences(b, rows)
        nodes = cur[idx]
        split = False
        for x in _candidates(nodes, tax, frozen).tolist():
            found = _expand(b, tax, k, rows, idx, pos, nodes, x, h1, h2)
            if found is None:
                failures += 1
                continue
            left_mask, sub, occ, child, opos = found
            expansions += 1
            moved = ~left_mask[opos]
            cur[occ[moved]] = child[moved]
            _split(stack, rows, frozen, x, left_mask, sub)
            split = True
            break
        if not split:
            group[rows] = n_groups
            n_groups += 1
    return cur, group, {"groups": n_groups, "expansions": expansions, "failed_expansions": failures}


def k_anonymize(
    transactions: Any,
    k: int,
    hierarchy: Any = None,
    seed: int | None = 0,
    fanout: int | None = None,
    order: str = "id",
    m: int = 2,
    evaluate: bool | None = None,
    *,
    key: Any = None,
    measures: bool = True,
    transaction_col: str | None = None,
    item_col: str | None = None,
) -> TransactionsRelease:
    """Make every published transaction identical to at least ``k - 1`` others.

    For an attacker who may know every item of a person.  Items are generalized locally
    (each group of transactions gets its own cut of the taxonomy), top-down.

    Parameters
    ----------
    transactions : iterable of sets, pandas Series of sets, or long DataFrame
        A long ``(transaction, item)`` DataFrame is grouped into baskets
        (:func:`transactions.from_long`; columns ``transaction_col`` and ``item_col``,
        default the two columns of a two-column frame).
    k : int
        Minimum number of people sharing each published transaction (>= 1).
    hierarchy : Hierarchy, dict, path or None
        Item taxonomy (see :func:`transactions.km_anonymize`); ``None`` builds a balanced
        tree with ``fanout`` children per node (default 5).
    seed : int, default 0
        Public seed of the random signatures used to group transactions and of the
        measures.  It never decides the published order.
    fanout, order : optional
        Automatic taxonomy settings.
    m : int
        Items known by the attacker in the reported risk (the guarantee holds for any m).
    evaluate : bool, optional
        Deprecated name of ``measures`` (wins when given; emits a ``DeprecationWarning``).
    key : Pseudonymizer, bytes, key-file path or None
        Secret release key (:func:`structanon.io.release_key`) the published order is
        drawn from; ``None``: ``$STRUCTANON_PSEUDONYM_KEY`` if set, else a fresh random key.
    measures : bool
        Compute utility and risk (default True).

    Returns
    -------
    TransactionsRelease
        ``data``: one frozenset of published labels per input transaction, in a secret
        shuffled order (``release.source_index[j]`` is the input position of published
        transaction ``j``, kept in Python only), or ``None`` where suppressed.  Only
        empty transactions are ever suppressed (when fewer than ``k`` of them exist); they are counted in ``release.suppressed``.

    Raises
    ------
    InputError
        Bad parameters or transactions, items missing from the taxonomy.
    InfeasibleError
        Fewer than ``k`` non-empty transactions.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}, {"d"}, {"d", "e"}]
    >>> rel = transactions.k_anonymize(data, k=2, fanout=2, measures=False)
    >>> rel.verify().passed
    True

    Notes
    -----
    Starting from one partition with every item generalized to the root, Partition
    repeatedly picks the published node with the largest NCP mass
    :math:`\\sum_o |leaves(g(o))| / |I|`, expands it to its children, and splits the
    partition by the set of children each transaction holds.  Sub-partitions smaller than
    ``k`` are pooled (with transactions borrowed from the largest sub-partitions, which
    stay >= k) and keep the unexpanded node; an expansion that leaves no sub-partition of
    size >= k is undone.

    References
    ----------
    Y. He, J. F. Naughton. Anonymization of set-valued data via top-down, local
    generalization. PVLDB 2(1), 2009.
    """
    k = check_int(k, "k", min_value=1)
    m = check_int(m, "m", min_value=1, max_value=MAX_M)
    seed = check_seed(seed)
    if fanout is not None:
        check_int(fanout, "fanout", min_value=2)
    measures = resolve_measures(measures, evaluate=evaluate)
    key = release_key(key)
    timings = Timings()
    transactions = maybe_long(transactions, transaction_col, item_col)
    b, tax = prepare_generalization(transactions, k, hierarchy, fanout, order, timings)
    key = key.bound(b.indptr, b.codes, b.domain)  # streams bound to the input
    with timings("anonymize"):
        cur, _group, stats = partition_groups(b, tax, k, seed)
    suppressed = np.zeros(b.n, dtype=bool)
    if 0 < b.n_empty < k:
        suppressed[b.lengths == 0] = True
    published = publish_sets(b, tax, cur, suppressed)
    n_sup = int(suppressed.sum())
    model = TransactionKAnonymity(k)
    release = TransactionsRelease(
        data=published,
        datatype="transactions",
        verifier=make_verifier(model),
        models=[model],
        parameters={
            "algorithm": "partition",
            "k": k,
            "fanout": fanout,
            "order": order,
            "seed": seed,
            "taxonomy": tax.source,
        },
        suppressed=n_sup,
        n_individuals=b.n,
        taxonomy=tax,
        info={
            "input": b.input_stats(),
            "taxonomy": tax.describe(),
            "partition": stats,
            "suppressed_empty_transactions": n_sup,
            "transformation_text": transformation_text(b, tax, cur),
        },
    )
    return finish_generalization(
        release,
        b,
        published,
        tax,
        cur,
        key=key,
        seed=seed,
        k=k,
        m=m,
        measures=measures,
        timings=timings,
    )
