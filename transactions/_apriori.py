"""k^m-anonymity: Apriori Anonymization (global generalization) and its local-recoding variant.

The state of a global generalization is a *cut* of the taxonomy, held as ``gen``: for every
leaf, the node it is published as.  Raising a cut node to its parent replaces every cut
node under that parent (global recoding), which can only merge supports, so once all
itemsets of size ``i`` are fine, generalizing further keeps them fine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from structanon._finish import Timings
from structanon._validation import check_choice, check_int
from structanon.errors import InfeasibleError
from structanon.io import release_key

from ._common import (
    MAX_M,
    TransactionsRelease,
    check_basket_width,
    check_seed,
    finish_generalization,
    prepare_generalization,
    publish_sets,
    resolve_measures,
    transformation_text,
)
from ._data import Baskets, check_key_space, count_itemsets, decode_keys, dedupe_rows
from ._long import maybe_long
from ._taxonomy import Taxonomy
from ._verify import KmAnonymity, make_verifier

__all__ = [
    "km_anonymize",
    "apriori_cut",
    "local_gen",
    "refine_cut",
    "local_cuts",
    "subset",
    "generalized",
    "occurrence_cost",
    "METHODS",
]

METHODS = ("apriori", "local")


def subset(b: Baskets, rows: np.ndarray) -> Baskets:
    """The transactions ``rows`` of ``b`` (same item domain)."""
    rows = np.asarray(rows, dtype=np.int64)
    lens = b.lengths[rows]
    indptr = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    starts = np.repeat(b.indptr[rows] - indptr[:-1], lens)
    idx = starts + np.arange(int(indptr[-1]), dtype=np.int64)
    return Baskets(indptr=indptr, codes=b.codes[idx], domain=b.domain)


def generalized(b: Baskets, gen: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the generalized transactions (labels sorted, de-duplicated per transaction)."""
    return dedupe_rows(b.rows, gen[b.codes], b.n, n_nodes)


def _per_node_sum(tax: Taxonomy, leaf_values: np.ndarray) -> np.ndarray:
    """Sum of a per-leaf quantity over the leaves under every node."""
    out = np.zeros(tax.n_nodes, dtype=np.float64)
    leaf_depth = tax.depth[: tax.n_leaves]
    for d in range(tax.height + 1):
        deep = leaf_depth >= d
        out += np.bincount(tax.anc[deep, d], weights=leaf_values[deep], minlength=tax.n_nodes)
    return out


def _node_support(b: Baskets, tax: Taxonomy) -> np.ndarray:
    """Number of transactions holding at least one leaf under each node."""
    rows, leaves = b.rows, b.codes
    leaf_depth = tax.depth[leaves]
    sup = np.zeros(tax.n_nodes, dtype=np.int64)
    for d in range(tax.height + 1):
        deep = leaf_depth >= d
        keys = np.unique(rows[deep] * np.int64(tax.n_nodes) + tax.anc[leaves[deep], d])
        sup += np.bincount(keys % tax.n_nodes, minlength=tax.n_nodes)
    return sup


def occurrence_cost(gen: np.ndarray, occ_leaf: np.ndarray, tax: Taxonomy) -> float:
    """Sum over item occurrences of the NCP of the node they are published as."""
    return float((occ_leaf * tax.ncp[gen]).sum())


def _cut_from_flags(chosen: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """For every leaf, the shallowest node on its path flagged in ``chosen``."""
    flags = chosen[tax.anc]
    first = flags.argmax(axis=1)
    return tax.anc[np.arange(tax.n_leaves), first]


def _direct_single(b: Baskets, tax: Taxonomy, k: int, occ_node: np.ndarray) -> np.ndarray:
    """Optimal cut (least NCP) making every generalized item's support 0 or >= k.

    A dynamic program over the tree: a node is either published (allowed when its
    support is 0 or >= k) or replaced by the best cuts of its children.
    """
    sup = _node_support(b, tax)
    if 0 < sup[tax.root] < k:
        raise InfeasibleError(f"only {int(sup[tax.root])} non-empty transactions, fewer than k={k}")
    feasible = (sup >= k) | (sup == 0)
    cut_cost = np.where(feasible, occ_node * tax.ncp, np.inf)
    best = np.zeros(tax.n_nodes)
    chosen = np.zeros(tax.n_nodes, dtype=bool)
    for d in range(tax.height, -1, -1):
        nodes = np.flatnonzero(tax.depth == d)
        deeper = np.flatnonzero(tax.depth == d + 1)
        child_sum = np.bincount(tax.parent[deeper], weights=best[deeper], minlength=tax.n_nodes)
        leaf = tax.is_leaf[nodes]
        children = np.where(leaf, np.inf, child_sum[nodes])
        own = cut_cost[nodes]
        take = own < children
        chosen[nodes] = take
        best[nodes] = np.where(take, own, children)
    return _cut_from_flags(chosen, tax)


def _raise_nodes(gen: np.ndarray, raised: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """Publish every leaf under a raised node as that node, unless already more general."""
    flags = np.zeros(tax.n_nodes, dtype=bool)
    flags[raised] = True
    path = flags[tax.anc]
    hit = path.any(axis=1)
    first = path.argmax(axis=1)
    target = tax.anc[np.arange(tax.n_leaves), first]
    hit &= tax.depth[target] < tax.depth[gen]
    out = gen.copy()
    out[hit] = target[hit]
    return out


def _below(tax: Taxonomy, gen: np.ndarray, occ_leaf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node p: occurrences of leaves under p published at or below p, and their cost."""
    occ = np.zeros(tax.n_nodes)
    cost = np.zeros(tax.n_nodes)
    leaf_depth = tax.depth[: tax.n_leaves]
    gen_depth = tax.depth[gen]
    leaf_cost = occ_leaf * tax.ncp[gen]
    for d in range(tax.height + 1):
        sel = (leaf_depth >= d) & (gen_depth >= d)
        occ += np.bincount(tax.anc[sel, d], weights=occ_leaf[sel], minlength=tax.n_nodes)
        cost += np.bincount(tax.anc[sel, d], weights=leaf_cost[sel], minlength=tax.n_nodes)
    return occ, cost


def _greedy_size(
    b: Baskets, tax: Taxonomy, k: int, size: int, gen: np.ndarray, occ_leaf: np.ndarray
) -> tuple[np.ndarray, int]:
    """Raise published nodes until every generalized ``size``-itemset has support 0 or >= k.

    Each round counts the itemsets, and for every violating itemset picks the member whose
    raise to its parent (with everything published under that parent) costs the least
    NCP; the cheapest fixes are applied first, and an itemset touched by a raise earlier
    in the round waits for the next count.
    """
    rounds = 0
    parent = tax.parent
    while True:
        indptr, codes = generalized(b, gen, tax.n_nodes)
        keys, counts = count_itemsets(indptr, codes, size, tax.n_nodes)
        bad = counts < k
        if not bad.any():
            return gen, rounds
        rounds += 1
        sets = decode_keys(keys[bad], size, tax.n_nodes)
        occ_below, cost_below = _below(tax, gen, occ_leaf)
        safe_parent = np.where(parent >= 0, parent, tax.root)
        delta = occ_below[safe_parent] * tax.ncp[safe_parent] - cost_below[safe_parent]
        delta = np.where(parent >= 0, delta, np.inf)
        cand = delta[sets]
        pick = cand.argmin(axis=1)
        best = cand[np.arange(sets.shape[0]), pick]
        target = safe_parent[sets[np.arange(sets.shape[0]), pick]]
        order = np.argsort(best, kind="stable")
        # sequential greedy over the violating itemsets, cheapest fix first; plain Python
        # containers keep the per-itemset check at a few hundred nanoseconds
        touched_bytes = bytearray(tax.n_nodes)  # nodes under a node raised this round
        touched = np.frombuffer(touched_bytes, dtype=np.uint8)
        raised: list[int] = []
        for start in range(0, order.size, 8192):
            idx = order[start : start + 8192]
            idx = idx[~touched[sets[idx]].any(axis=1)]  # vectorized pre-filter
            rows = sets[idx].tolist()
            for j, row in zip(idx.tolist(), rows):
                if any(touched_bytes[x] for x in row):
                    continue
                p = int(target[j])
                touched[tax.nanc[:, tax.depth[p]] == p] = 1
                raised.append(p)
        gen = _raise_nodes(gen, np.asarray(raised, dtype=np.int64), tax)


def apriori_cut(b: Baskets, tax: Taxonomy, k: int, m: int) -> tuple[np.ndarray, dict]:
    """Global cut satisfying k^m-anonymity, built level by level (itemset size 1..m)."""
    occ_leaf = np.bincount(b.codes, minlength=tax.n_leaves).astype(np.float64)
    occ_node = _per_node_sum(tax, occ_leaf)
    gen = _direct_single(b, tax, k, occ_node)
    rounds = {"1": 1}
    for size in range(2, m + 1):
        gen, r = _greedy_size(b, tax, k, size, gen, occ_leaf)
        rounds[str(size)] = r
    return gen, {"rounds": rounds, "cost": occurrence_cost(gen, occ_leaf, tax)}


def _violations(b: Baskets, gen: np.ndarray, tax: Taxonomy, k: int, m: int) -> np.ndarray:
    """Nodes appearing in some published itemset of size <= m with support in (0, k)."""
    indptr, codes = generalized(b, gen, tax.n_nodes)
    bad_nodes = np.zeros(tax.n_nodes, dtype=bool)
    for size in range(1, m + 1):
        keys, counts = count_itemsets(indptr, codes, size, tax.n_nodes)
        bad = counts < k
        if bad.any():
            bad_nodes[decode_keys(keys[bad], size, tax.n_nodes).reshape(-1)] = True
    return bad_nodes


def refine_cut(
    b: Baskets, tax: Taxonomy, k: int, m: int, gen: np.ndarray, max_checks: int = 40
) -> tuple[np.ndarray, dict]:
    """Specialize published nodes one child at a time while k^m-anonymity holds.

    Starting from a valid generalization, for every published node ``p`` the child ``c``
    with the largest NCP gain (and support >= k) is split off: the items under ``c``
    published as ``p`` are published as ``c``, their siblings stay at ``p``.  Moves tied
    to a violating itemset (through ``c`` first, else through ``p``) are undone and not
    tried again, until the release is valid; then the next round of moves is tried.  The
    result is not a cut (siblings may sit at different levels) and never costs more than
    the start.
    """
    sup = _node_support(b, tax)
    occ_leaf = np.bincount(b.codes, minlength=tax.n_leaves).astype(np.float64)
    frozen = np.zeros(tax.n_nodes, dtype=bool)
    leaves = np.arange(tax.n_leaves)
    checks = lowered = 0
    while checks < max_checks:
        depth_gen = tax.depth[gen]
        nxt = tax.anc[leaves, np.minimum(depth_gen + 1, tax.height)]
        movable = (gen != leaves) & (sup[nxt] >= k) & ~frozen[nxt]
        if not movable.any():
            break
        gain = np.bincount(nxt[movable], weights=occ_leaf[movable], minlength=tax.n_nodes)
        gain *= tax.ncp[tax.parent.clip(0)] - tax.ncp
        # one child per published parent: the child with the largest gain
        kids = np.flatnonzero(gain > 0)
        if kids.size == 0:
            break
        par = tax.parent[kids]
        order = np.lexsort((kids, -gain[kids], par))
        first = np.ones(order.size, dtype=bool)
        first[1:] = par[order][1:] != par[order][:-1]
        chosen = np.zeros(tax.n_nodes, dtype=bool)
        chosen[kids[order][first]] = True
        move = movable & chosen[nxt]
        trial = gen.copy()
        trial[move] = nxt[move]
        while checks < max_checks:
            checks += 1
            bad = _violations(b, trial, tax, k, m)
            if not bad.any():
                break
            by_new = move & bad[trial]
            revert = by_new if by_new.any() else move & bad[gen]
            if not revert.any():
                revert = move.copy()
            frozen[trial[revert]] = True
            trial[revert] = gen[revert]
            move &= ~revert
        else:
            break
        lowered += int(move.sum())
        gen = trial
    return gen, {"checks": checks, "items_specialized": lowered}


def local_gen(
    b: Baskets, tax: Taxonomy, k: int, m: int, start: tuple[np.ndarray, dict] | None = None
) -> tuple[np.ndarray, dict]:
    """Apriori Anonymization followed by per-item specialization (:func:`refine_cut`)."""
    gen, info = start if start is not None else apriori_cut(b, tax, k, m)
    gen, rinfo = refine_cut(b, tax, k, m, gen)
    occ_leaf = np.bincount(b.codes, minlength=tax.n_leaves).astype(np.float64)
    return gen, {
        "rounds": info["rounds"],
        "refine": rinfo,
        "apriori_cost": info["cost"],
        "cost": occurrence_cost(gen, occ_leaf, tax),
    }


def _similarity_order(b: Baskets) -> np.ndarray:
    """Transactions sorted so that similar ones are adjacent.

    Items are ranked by global frequency; each transaction is keyed by its three most
    frequent items (a lexicographic sort, in the spirit of the Gray ordering of LRA).
    """
    freq = np.bincount(b.codes, minlength=int(b.domain.size))
    rank = np.empty(freq.size, dtype=np.int64)
    rank[np.lexsort((np.arange(freq.size), -freq))] = np.arange(freq.size)
    rows = b.rows
    r = rank[b.codes]
    order = np.lexsort((r, rows))
    pos = np.arange(order.size) - np.repeat(b.indptr[:-1], b.lengths)
    sentinel = freq.size
    keys = np.full((3, b.n), sentinel, dtype=np.int64)
    for j in range(3):
        sel = pos == j
        keys[j, rows[order][sel]] = r[order][sel]
    return np.lexsort((np.arange(b.n), keys[2], keys[1], keys[0]))


def local_cuts(
    b: Baskets, tax: Taxonomy, k: int, m: int, max_depth: int = 4, min_part: int | None = None
) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict]:
    """Local recoding: per-item generalization, per part of a similarity bisection.

    Every part is anonymized by :func:`local_gen`.  A part is split in two
    (contiguous halves of the similarity order) and each half anonymized on its own only
    when the halves' total NCP is lower than the part's (the halves are refined only when
    their Apriori cuts already cost less than the part's Apriori cut); each part is
    k^m-anonymous on its own, so their union is (supports add up).

    Returns a list of ``(rows, gen)`` pairs and a dict of statistics.
    """
    order = _similarity_order(b)
    if min_part is None:
        min_part = max(20 * k, 200)
    occ_all = np.bincount(b.codes, minlength=tax.n_leaves).astype(np.float64)
    gen0, info0 = local_gen(b, tax, k, m)
    stack = [(order, gen0, info0, 0)]
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    tried = accepted = 0
    while stack:
        rows, gen, info, depth = stack.pop()
        if depth >= max_depth or rows.size < 2 * min_part or info["cost"] == 0.0:
            parts.append((rows, gen))
            continue
        half = rows.size // 2
        halves = [subset(b, h) for h in (rows[:half], rows[half:])]
        tried += 1
        try:
            cuts = [apriori_cut(h, tax, k, m) for h in halves]
        except InfeasibleError:
            parts.append((rows, gen))
            continue
        # refine the halves only when their Apriori cuts already beat the part's
        if sum(c[1]["cost"] for c in cuts) >= info["apriori_cost"]:
            parts.append((rows, gen))
            continue
        results = [local_gen(h, tax, k, m, start=c) for h, c in zip(halves, cuts)]
        if sum(r[1]["cost"] for r in results) < info["cost"]:
            accepted += 1
            for h, (g, inf) in zip((rows[:half], rows[half:]), results):
                stack.append((h, g, inf, depth + 1))
        else:
            parts.append((rows, gen))
    total = sum(
        occurrence_cost(g, np.bincount(subset(b, r).codes, minlength=tax.n_leaves), tax)
        for r, g in parts
    )
    return parts, {
        "parts": len(parts),
        "splits_tried": tried,
        "splits_accepted": accepted,
        "global_cost": info0["cost"],
        "cost": total,
        "refine_whole_data": info0["refine"],
        "occurrences": float(occ_all.sum()),
    }


def _check_parameters(
    k: Any, m: Any, seed: Any, method: Any, fanout: Any, max_basket_size: Any
) -> tuple[int, int, int | None]:
    """Validate :func:`km_anonymize`'s parameters before any work."""
    k = check_int(k, "k", min_value=1)
    m = check_int(m, "m", min_value=1, max_value=MAX_M)
    seed = check_seed(seed)
    check_choice(method, "method", METHODS)
    if fanout is not None:
        check_int(fanout, "fanout", min_value=2)
    if max_basket_size is not None:
        check_int(max_basket_size, "max_basket_size", min_value=1)
    return k, m, seed


def _generalize(
    b: Baskets, tax: Taxonomy, k: int, m: int, method: str
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """Published node of every item occurrence, the global cut (if one), and statistics."""
    if method == "apriori":
        gen, stats = apriori_cut(b, tax, k, m)
        return gen[b.codes], gen, {"apriori": {"rounds": stats["rounds"]}}
    parts, stats = local_cuts(b, tax, k, m)
    part_of_row = np.empty(b.n, dtype=np.int64)
    for i, (rows, _g) in enumerate(parts):
        part_of_row[rows] = i
    gens = np.stack([g for _r, g in parts])
    occ_nodes = gens[part_of_row[b.rows], b.codes]
    local = {
        name: stats[name]
        for name in ("parts", "splits_tried", "splits_accepted", "refine_whole_data")
    }
    local["part_sizes"] = [int(r.size) for r, _g in parts]
    return occ_nodes, gens[0] if len(parts) == 1 else None, {"local": local}


def _cut_summary(b: Baskets, tax: Taxonomy, cut: np.ndarray) -> dict[str, Any]:
    """How a global cut publishes the items: generalized nodes and their depths."""
    used = np.unique(cut[b.codes]) if b.nnz else np.zeros(0, np.int64)
    generalized_nodes = used[~tax.is_leaf[used]]
    return {
        "generalized_nodes": int(generalized_nodes.size),
        "items_published_as_themselves": int(tax.is_leaf[used].sum()),
        "nodes": [str(tax.labels[g]) for g in generalized_nodes[:200].tolist()],
        "depth_histogram": np.bincount(tax.depth[used], minlength=tax.height + 1).tolist(),
    }


def km_anonymize(
    transactions: Any,
    k: int,
    m: int,
    hierarchy: Any = None,
    method: str = "apriori",
    fanout: int | None = None,
    seed: int | None = 0,
    order: str = "id",
    evaluate: bool | None = None,
    *,
    key: Any = None,
    measures: bool = True,
    max_basket_size: int | None = None,
    transaction_col: str | None = None,
    item_col: str | None = None,
) -> TransactionsRelease:
    """Make set-valued data k^m-anonymous by generalizing items over a taxonomy.

    Any attacker who knows up to ``m`` items of a person finds at least ``k`` published
    transactions consistent with them.

    Parameters
    ----------
    transactions : iterable of sets, pandas Series of sets, or long DataFrame
        One item collection per person; items are ints or strings.  Duplicate items in
        a transaction are removed and empty transactions kept; both are counted in
        ``release.info["input"]``.  A long ``(transaction, item)`` DataFrame is grouped
        into baskets (:func:`transactions.from_long`; columns ``transaction_col`` and
        ``item_col``, default the two columns of a two-column frame).
    k : int
        Minimum support of every published itemset of size <= m (>= 1).
    m : int
        Attacker knowledge: number of items known (>= 1).
    hierarchy : Hierarchy, dict, path or None
        Item taxonomy: a :class:`structanon.Hierarchy`, a nested dict, a ``.json``
        (nested dict) or ARX ``.csv`` path.  ``None`` builds a balanced tree over the
        items (see ``fanout`` and ``order``).
    method : {"apriori", "local"}
        ``"apriori"``: one global cut of the taxonomy (Apriori Anonymization).
        ``"local"``: local recoding; the Apriori cut is refined by specializing nodes one
        child at a time while the release stays k^m-anonymous (siblings may stay
        generalized), and similar transactions are bisected, each part anonymized on its
        own, where that lowers the NCP.  Never loses more than ``"apriori"``.
    fanout : int, optional
        Fan-out of the automatic taxonomy (default 5); only without ``hierarchy``.
    seed : int, default 0
        Public seed of the measures' random queries; the anonymization is deterministic.
        It never decides the published order.
    order : {"id", "frequency"}
        Item order of the automatic taxonomy.
    evaluate : bool, optional
        Deprecated name of ``measures`` (wins when given; emits a ``DeprecationWarning``).
    key : Pseudonymizer, bytes, key-file path or None
        Secret release key (:func:`structanon.io.release_key`): the published order is
        drawn from it.  ``None``: ``$STRUCTANON_PSEUDONYM_KEY`` if set, else a fresh random
        key, so two runs publish different orders.
    measures : bool
        Compute utility and risk (default True); ``False`` keeps the NCP only.
    max_basket_size : int, optional
        Widest transaction accepted.  Apriori Anonymization and its verifier enumerate
        every ``m``-item subset of every transaction, so by default a transaction with
        more than 10 million ``m``-subsets (4,472 items for ``m=2``, 392 for ``m=3``) is
        refused with an :class:`InputError` naming it.

    Returns
    -------
    TransactionsRelease
        ``data``: a list with one frozenset of published labels per input transaction,
        in a secret shuffled order (original items or taxonomy node labels).
        ``release.source_index[j]`` is the input position of published transaction ``j``
        (kept in Python only, never written).  ``release.taxonomy`` is the item taxonomy
        used (for :mod:`transactions.metrics`; compare with the input reordered by
        ``source_index``).

    Raises
    ------
    InputError
        Bad parameters, malformed transactions, items missing from the taxonomy.
    InfeasibleError
        Fewer than ``k`` non-empty transactions.

    Examples
    --------
    >>> import transactions
    >>> data = [{"milk", "beer"}, {"milk", "diapers"}, {"beer", "diapers"}, {"milk"}]
    >>> rel = transactions.km_anonymize(data, k=2, m=2, fanout=2, measures=False)
    >>> rel.verify().passed, len(rel.data)
    (True, 4)

    Notes
    -----
    Generalization replaces items by taxonomy nodes; the loss is the normalized
    certainty penalty :math:`NCP = \\sum_o |leaves(g(o))| / |I|` averaged over item
    occurrences (0 for items published as themselves).  Apriori Anonymization works
    level by level: size-1 itemsets first (here by an exact dynamic program over the
    tree), then size 2, ..., m, each time raising the cut node whose generalization
    costs the least NCP until no itemset of that size has support in (0, k).  Global
    generalization only merges supports, so itemsets fixed at a lower size stay fixed.
    Supports are counted with numpy: every ``i``-subset of every generalized transaction
    becomes one int64 key (its label codes in base ``#labels``), then ``np.unique``.

    References
    ----------
    M. Terrovitis, N. Mamoulis, P. Kalnis. Privacy-preserving anonymization of
    set-valued data. PVLDB 1(1), 2008.
    M. Terrovitis, N. Mamoulis, P. Kalnis. Local and global recoding methods for
    anonymizing set-valued data. VLDB Journal 20(1), 2011.
    """
    k, m, seed = _check_parameters(k, m, seed, method, fanout, max_basket_size)
    measures = resolve_measures(measures, evaluate=evaluate)
    key = release_key(key)
    timings = Timings()

    def wide(baskets: Baskets) -> None:
        if m >= 2:
            check_basket_width(baskets, m, max_basket_size, f"k^m-anonymity with m={m}")

    transactions = maybe_long(transactions, transaction_col, item_col)
    b, tax = prepare_generalization(transactions, k, hierarchy, fanout, order, timings, check=wide)
    key = key.bound(b.indptr, b.codes, b.domain)  # streams bound to the input
    check_key_space(tax.n_nodes, m)
    with timings("anonymize"):
        occ_nodes, cut, found = _generalize(b, tax, k, m, method)
    published = publish_sets(b, tax, occ_nodes)
    info: dict[str, Any] = {"input": b.input_stats(), "taxonomy": tax.describe(), **found}
    if cut is not None:
        info["generalization"] = _cut_summary(b, tax, cut)
    info["transformation_text"] = transformation_text(b, tax, occ_nodes)
    model = KmAnonymity(k, m)
    release = TransactionsRelease(
        data=published,
        datatype="transactions",
        verifier=make_verifier(model),
        models=[model],
        parameters={
            "algorithm": "apriori-anonymization" if method == "apriori" else "local-recoding",
            "k": k,
            "m": m,
            "method": method,
            "fanout": fanout,
            "order": order,
            "seed": seed,
            "taxonomy": tax.source,
        },
        suppressed=0,
        n_individuals=b.n,
        info=info,
        taxonomy=tax,
    )
    return finish_generalization(
        release,
        b,
        published,
        tax,
        occ_nodes,
        key=key,
        seed=seed,
        k=k,
        m=m,
        measures=measures,
        timings=timings,
    )
