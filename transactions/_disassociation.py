"""Disassociation: publish the original items, split into chunks no m items can link to < k.

Terrovitis, Liagouris, Mamoulis & Skiadopoulos, "Privacy preservation by disassociation",
PVLDB 5(10), 2012.  Three steps, all on integer item codes:

1. **Horizontal partitioning** splits the transactions recursively on the most frequent
   item (those holding it, those not) until every cluster holds at most
   ``max_cluster_size`` transactions, so similar baskets share a cluster.
2. **Vertical partitioning** splits each cluster's item domain into *record chunks*: the
   items of support >= k are taken by descending support, and an item joins the current
   chunk when the chunk's projection stays k^m-anonymous (every itemset of up to ``m``
   items present in it is in at least ``k`` subrecords); the items of support < k form the
   *term chunk*, published as a set without their baskets.
3. **Refinement** merges neighbouring clusters (in the order horizontal partitioning left
   them, so similar clusters) when that moves term-chunk occurrences into record chunks,
   and merges any cluster of fewer than ``k`` transactions into its neighbour.  This is the
   paper's joint-cluster refinement in its simplest form: the shared chunk of a joint
   cluster becomes a record chunk of the merged cluster.

Every chunk lists exactly one subrecord per transaction of its cluster (empty ones
included), each chunk in its own secret order, so no position links two chunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from structanon import Release
from structanon._finish import Timings, add_warning, finish_release, k_warning
from structanon._validation import check_choice, check_int
from structanon.errors import InfeasibleError, InputError
from structanon.io import release_key

from ._common import (
    MAX_M,
    TransactionsRelease,
    check_basket_width,
    check_seed,
    skipped_note,
)
from ._data import Baskets, count_itemsets, encode_baskets
from ._long import maybe_long
from ._verify import ChunkKmAnonymity, make_disassociation_verifier

_EMPTY: frozenset = frozenset()
#: Clusters (or joint clusters) joined into one joint cluster per refinement level.
JOINT_FANOUT = 8

__all__ = [
    "Cluster",
    "disassociate",
    "horizontal_partition",
    "vertical_partition",
    "refine_clusters",
    "build_tree",
    "reconstruct",
    "default_cluster_size",
]


@dataclass(repr=False)
class Cluster:
    """One published cluster of a disassociated release.

    Attributes
    ----------
    size : int
        Transactions in the cluster.
    record_chunks : list of list of frozenset
        Each chunk lists exactly ``size`` subrecords (empty ones included), in its own
        secret order.
    term_chunk : frozenset
        Items of the cluster too rare to publish with their associations.
    clusters : list of Cluster
        Empty for a cluster; for a *joint cluster* (the refinement), its member clusters.
        A joint cluster's ``record_chunks`` are its shared chunks: one subrecord per
        transaction of all its members, holding items its members left in their term
        chunks; its own ``term_chunk`` is empty.
    """

    size: int
    record_chunks: list[list[frozenset]]
    term_chunk: frozenset
    clusters: list[Cluster] = field(default_factory=list)

    def __repr__(self) -> str:
        joint = f", joint cluster of {len(self.clusters)}" if self.clusters else ""
        return (
            f"<Cluster of {self.size} transactions: {len(self.record_chunks)} record chunk(s), "
            f"{len(self.term_chunk)} term item(s){joint}>"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values; items sorted by their text inside every subrecord."""
        out: dict[str, Any] = {
            "size": int(self.size),
            "record_chunks": [[_sorted(s) for s in chunk] for chunk in self.record_chunks],
            "term_chunk": _sorted(self.term_chunk),
        }
        if self.clusters:
            out["clusters"] = [c.to_dict() for c in self.clusters]
        return out


def _sorted(items: Any) -> list[Any]:
    return sorted(items, key=lambda x: (0, x, "") if isinstance(x, int) else (1, 0, str(x)))


def default_cluster_size(k: int) -> int:
    """The default ``max_cluster_size``: ``max(20 k, 100)``.

    Examples
    --------
    >>> default_cluster_size(5), default_cluster_size(10)
    (100, 200)
    """
    return max(20 * k, 100)


# ------------------------------------------------------------------ horizontal partitioning
def _occurrences(b: Baskets, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Occurrence indices of the transactions ``rows`` and each one's position in ``rows``."""
    lens = b.indptr[rows + 1] - b.indptr[rows]
    total = int(lens.sum())
    pos = np.repeat(np.arange(rows.size, dtype=np.int64), lens)
    starts = np.repeat(b.indptr[rows] - np.cumsum(lens) + lens, lens)
    return starts + np.arange(total, dtype=np.int64), pos


def _gather(b: Baskets, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the transactions ``rows`` and, for each code, its position in ``rows``."""
    idx, pos = _occurrences(b, rows)
    return b.codes[idx], pos


def horizontal_partition(b: Baskets, max_cluster_size: int) -> list[np.ndarray]:
    """Clusters of transaction indices, split recursively on the most frequent item.

    A set larger than ``max_cluster_size`` is split into the transactions holding its most
    frequent item (among the items not held by all of them) and the rest; the item counts
    of the smaller side are recounted and the larger side's derived by subtraction.  The
    clusters come in depth-first order (holders first), so neighbours are similar.

    Examples
    --------
    >>> b = encode_baskets([{1, 2}, {1}, {3}, {3, 4}, {1, 2}])
    >>> [c.tolist() for c in horizontal_partition(b, 2)]
    [[0, 4], [1], [2, 3]]
    """
    n_items = max(int(b.domain.size), 1)
    all_rows = np.arange(b.n, dtype=np.int64)
    stack = [(all_rows, np.bincount(b.codes, minlength=n_items))]
    out: list[np.ndarray] = []
    while stack:
        rows, counts = stack.pop()
        if rows.size <= max_cluster_size:
            out.append(rows)
            continue
        cand = np.where(counts < rows.size, counts, 0)
        a = int(cand.argmax())
        if cand[a] == 0:  # every transaction holds the same items: cut in slices
            out.extend(
                rows[i : i + max_cluster_size] for i in range(0, rows.size, max_cluster_size)
            )
            continue
        codes, pos = _gather(b, rows)
        has = np.zeros(rows.size, dtype=bool)
        has[pos[codes == a]] = True
        with_a, without = rows[has], rows[~has]
        small = with_a if with_a.size <= without.size else without
        small_counts = np.bincount(_gather(b, small)[0], minlength=n_items)
        other = counts - small_counts
        c_with, c_without = (small_counts, other) if small is with_a else (other, small_counts)
        stack.append((without, c_without))
        stack.append((with_a, c_with))
    return out


# ------------------------------------------------------------------ vertical partitioning
def _subset_counts_ok(y: sparse.csr_matrix, k: int, m: int) -> bool:
    """Every itemset of 1..m-1 columns present in the rows of ``y`` is in >= k of them."""
    counts = np.asarray(y.sum(axis=0)).ravel()
    if ((counts > 0) & (counts < k)).any():
        return False
    if y.shape[1] < 2:
        return True
    pairs = sparse.triu(y.T @ y, k=1).tocoo()
    if ((pairs.data > 0) & (pairs.data < k)).any():
        return False
    if m < 4 or y.shape[1] < 3:
        return True
    y = y.tocsr()
    y.sort_indices()
    for size in range(3, m):
        _keys, c = count_itemsets(y.indptr, y.indices.astype(np.int32), size, y.shape[1])
        if ((c > 0) & (c < k)).any():
            return False
    return True


def vertical_partition(
    pos: np.ndarray, codes: np.ndarray, size: int, k: int, m: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """Record chunks (arrays of item codes) and term items of one cluster.

    ``pos[i]`` is the transaction (0..size-1) of the occurrence ``codes[i]``.  Items of
    support < k go to the term chunk; the others, by descending support (ties by code),
    join the current chunk when its projection stays k^m-anonymous; what did not fit
    starts the next chunk.  Co-occurrences are counted with a sparse product, so a joint
    cluster of the whole data set stays cheap.

    Examples
    --------
    >>> pos = np.array([0, 0, 1, 1, 2, 2, 3])
    >>> codes = np.array([1, 2, 1, 2, 1, 3, 1])
    >>> chunks, term = vertical_partition(pos, codes, 4, 2, 2)
    >>> [c.tolist() for c in chunks], term.tolist()
    ([[1, 2]], [3])
    """
    items, inv = np.unique(codes, return_inverse=True)
    inv = inv.reshape(-1)
    support = np.bincount(inv, minlength=items.size)
    term = items[support < k]
    keep = np.flatnonzero(support >= k)
    if keep.size == 0:
        return [], term
    keep = keep[np.lexsort((items[keep], -support[keep]))]
    if m == 1 or keep.size == 1:
        return [items[keep]], term
    col = np.full(items.size, -1, dtype=np.int64)
    col[keep] = np.arange(keep.size)
    sel = col[inv] >= 0
    x = sparse.csr_matrix(
        (np.ones(int(sel.sum()), dtype=np.int32), (pos[sel], col[inv[sel]])),
        shape=(size, keep.size),
    )
    co = (x.T @ x).tocsr()
    co.data[(co.data >= k)] = 0  # keep the conflicting pairs only: support in (0, k)
    co.eliminate_zeros()
    bad_ptr, bad_idx = co.indptr, co.indices
    xc = x.tocsc() if m >= 3 else None
    in_chunk = np.zeros(keep.size, dtype=bool)
    remaining = list(range(keep.size))
    chunks: list[np.ndarray] = []
    while remaining:
        chunk: list[int] = []
        rest: list[int] = []
        for t in remaining:
            if in_chunk[bad_idx[bad_ptr[t] : bad_ptr[t + 1]]].any() or (
                xc is not None and len(chunk) >= 2 and not _fits(x, xc, t, chunk, k, m)
            ):
                rest.append(t)
            else:
                chunk.append(t)
                in_chunk[t] = True
        in_chunk[chunk] = False
        chunks.append(items[keep[chunk]])
        remaining = rest
    return chunks, term


def _fits(
    x: sparse.csr_matrix, xc: sparse.csc_matrix, t: int, chunk: list[int], k: int, m: int
) -> bool:
    rows = xc.indices[xc.indptr[t] : xc.indptr[t + 1]]
    return _subset_counts_ok(x[rows][:, chunk], k, m)


# ------------------------------------------------------------------ refinement
def _term_occurrences(counts: np.ndarray, k: int) -> int:
    return int(counts[counts < k].sum())


def refine_clusters(
    b: Baskets, clusters: list[np.ndarray], k: int, max_cluster_size: int
) -> tuple[list[np.ndarray], dict[str, int]]:
    """Merge neighbouring clusters where that publishes term items, and every cluster < k.

    Walking the clusters in horizontal-partitioning order, the current cluster absorbs the
    next one when either holds fewer than ``k`` transactions, or when the merge stays
    within ``max_cluster_size`` and lowers the item occurrences left in term chunks (items
    whose support reaches ``k`` in the merged cluster can be published in its record
    chunks).  A last cluster smaller than ``k`` joins the one before it.

    Examples
    --------
    >>> b = encode_baskets([{1}, {1}, {2}, {2}, {1}])
    >>> out, stats = refine_clusters(b, [np.array([0, 1]), np.array([4]), np.array([2, 3])], 2, 4)
    >>> [c.tolist() for c in out], stats["merges"]
    ([[0, 1, 4], [2, 3]], 1)
    """
    n_items = max(int(b.domain.size), 1)
    merged: list[np.ndarray] = []
    n_merges = n_small = 0
    cur: np.ndarray | None = None
    cur_counts = np.zeros(0, dtype=np.int64)
    for rows in clusters:
        counts = np.bincount(_gather(b, rows)[0], minlength=n_items)
        if cur is None:
            cur, cur_counts = rows, counts
            continue
        both = cur_counts + counts
        small = cur.size < k or rows.size < k
        fits = cur.size + rows.size <= max_cluster_size
        gain = (
            _term_occurrences(cur_counts, k)
            + _term_occurrences(counts, k)
            - _term_occurrences(both, k)
        )
        if (small and (fits or cur.size < k)) or (fits and gain > 0):
            n_small += int(small)
            n_merges += 1
            cur, cur_counts = np.concatenate([cur, rows]), both
        else:
            merged.append(cur)
            cur, cur_counts = rows, counts
    if cur is not None:
        if cur.size < k and merged:
            merged[-1] = np.concatenate([merged[-1], cur])
            n_merges += 1
            n_small += 1
        else:
            merged.append(cur)
    return merged, {"merges": n_merges, "merges_of_small_clusters": n_small}


@dataclass
class _Node:
    rows: np.ndarray
    chunks: list[np.ndarray]
    children: list[int]
    term: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def _place_level(
    b: Baskets,
    nodes: list[_Node],
    level: list[int],
    owner: np.ndarray,
    k: int,
    m: int,
) -> None:
    """Record chunks of every node of ``level`` from the occurrences not yet placed.

    At a joint cluster these are the occurrences its members left in their term chunks:
    the items reaching support ``k`` over the joint cluster form its shared chunks and
    leave the members' term chunks.
    """
    group_of = np.full(b.n, -1, dtype=np.int64)
    pos_in = np.zeros(b.n, dtype=np.int64)
    for g, node_id in enumerate(level):
        rows = nodes[node_id].rows
        group_of[rows] = g
        pos_in[rows] = np.arange(rows.size)
    occ_rows = b.rows
    free = np.flatnonzero(owner[:, 0] < 0)
    group = group_of[occ_rows[free]]
    free, group = free[group >= 0], group[group >= 0]
    order = np.argsort(group, kind="stable")
    free, group = free[order], group[order]
    bounds = np.searchsorted(group, np.arange(len(level) + 1))
    for g, node_id in enumerate(level):
        node = nodes[node_id]
        occ = free[bounds[g] : bounds[g + 1]]
        if occ.size == 0:
            continue
        codes = b.codes[occ].astype(np.int64)
        chunks, _term = vertical_partition(pos_in[occ_rows[occ]], codes, node.rows.size, k, m)
        node.chunks = chunks
        for j, items in enumerate(chunks):
            hit = occ[np.isin(codes, items)]
            owner[hit, 0] = node_id
            owner[hit, 1] = j


def _groups(
    nodes: list[_Node], level: list[int], fanout: int, max_joint_size: int | None
) -> list[list[int]]:
    """Neighbouring nodes in groups of at most ``fanout`` and ``max_joint_size`` records."""
    out: list[list[int]] = []
    cur: list[int] = []
    size = 0
    for i in level:
        n = int(nodes[i].rows.size)
        if cur and (
            len(cur) >= fanout or (max_joint_size is not None and size + n > max_joint_size)
        ):
            out.append(cur)
            cur, size = [], 0
        cur.append(i)
        size += n
    if cur:
        out.append(cur)
    return out


def build_tree(
    b: Baskets,
    clusters: list[np.ndarray],
    k: int,
    m: int,
    fanout: int = JOINT_FANOUT,
    max_joint_size: int | None = None,
) -> tuple[list[_Node], list[int], np.ndarray]:
    """Clusters with their record chunks, joined upwards into joint clusters.

    Level 0 is the clusters; each next level joins ``fanout`` neighbouring nodes into a
    joint cluster whose *shared chunks* take the term-chunk items that reach support ``k``
    over the joint cluster (the refinement of Terrovitis et al.).  An item may sit in a
    member's record chunk and, for the occurrences other members left as term items, in
    a shared chunk above.  Returns the nodes, the top
    nodes and, per item occurrence, whether it is published in a record chunk.
    """
    nodes = [_Node(rows, [], []) for rows in clusters]
    owner = np.full((b.nnz, 2), -1, dtype=np.int64)  # (node, chunk) of every occurrence
    level = list(range(len(nodes)))
    _place_level(b, nodes, level, owner, k, m)
    while len(level) > 1 and (owner[:, 0] < 0).any():
        nxt: list[int] = []
        new: list[int] = []
        for group in _groups(nodes, level, fanout, max_joint_size):
            if len(group) == 1:  # carried up unchanged: its chunks are already placed
                nxt.append(group[0])
                continue
            rows = np.concatenate([nodes[i].rows for i in group])
            nodes.append(_Node(rows, [], group))
            nxt.append(len(nodes) - 1)
            new.append(len(nodes) - 1)
        if not new:
            break
        _place_level(b, nodes, new, owner, k, m)
        level = nxt
    # term chunks: what is left of each cluster
    for node in nodes[: len(clusters)]:
        idx, _pos = _occurrences(b, node.rows)
        node.term = np.unique(b.codes[idx[owner[idx, 0] < 0]]).astype(np.int64)
    return nodes, level, owner


# ------------------------------------------------------------------ the anonymizer
def _check_parameters(
    k: Any, m: Any, max_cluster_size: Any, seed: Any, max_basket_size: Any
) -> tuple[int, int, int, int | None]:
    k = check_int(k, "k", min_value=1)
    m = check_int(m, "m", min_value=1, max_value=MAX_M)
    if max_cluster_size is None:
        max_cluster_size = default_cluster_size(k)
    max_cluster_size = check_int(max_cluster_size, "max_cluster_size", min_value=1)
    if max_cluster_size < k:
        raise InputError(
            f"max_cluster_size must be at least k={k} (a cluster needs k transactions)",
            value=max_cluster_size,
        )
    if max_basket_size is not None:
        check_int(max_basket_size, "max_basket_size", min_value=1)
    return k, m, max_cluster_size, check_seed(seed)


def _partition(
    b: Baskets, k: int, m: int, max_cluster_size: int
) -> tuple[list[_Node], list[int], dict[str, Any], np.ndarray]:
    """The tree of clusters and joint clusters, its statistics, each occurrence's chunk."""
    clusters = horizontal_partition(b, max_cluster_size)
    n_horizontal = len(clusters)
    clusters, stats = refine_clusters(b, clusters, k, max_cluster_size)
    nodes, top, owner = build_tree(b, clusters, k, m)
    n_leaf_chunks = sum(len(n.chunks) for n in nodes[: len(clusters)])
    return (
        nodes,
        top,
        {
            "clusters_horizontal": n_horizontal,
            "clusters": len(clusters),
            **stats,
            "joint_clusters": sum(1 for n in nodes if n.children and n.chunks),
            "record_chunks": n_leaf_chunks,
            "shared_chunks": sum(len(n.chunks) for n in nodes[len(clusters) :]),
            "term_chunk_occurrences": int((owner[:, 0] < 0).sum()),
        },
        owner,
    )


class _Publisher:
    """Publishes the tree in a secret order: clusters, members and every chunk's subrecords."""

    def __init__(
        self, b: Baskets, nodes: list[_Node], owner: np.ndarray, key: Any, context: tuple
    ) -> None:
        self.b, self.nodes, self.owner, self.key, self.context = b, nodes, owner, key, context
        self.links: list[list[np.ndarray]] = []

    def publish(self, ids: list[int], path: tuple[int, ...] = ()) -> list[Cluster]:
        out: list[Cluster] = []
        order = self.key.rng("cluster-order", *self.context, repr(path)).permutation(len(ids))
        for no, i in enumerate(order.tolist()):
            node = self.nodes[ids[i]]
            here = (*path, no)
            if node.children and not node.chunks:  # a joint cluster sharing nothing
                out.extend(self.publish(node.children, here))
                continue
            chunks = self._chunks(ids[i], here)
            members = self.publish(node.children, here) if node.children else []
            term = frozenset(self.b.domain[node.term].tolist())
            out.append(Cluster(int(node.rows.size), chunks, term, members))
        return out

    def _chunks(self, node_id: int, path: tuple[int, ...]) -> list[list[frozenset]]:
        b, node = self.b, self.nodes[node_id]
        rows = node.rows
        size = int(rows.size)
        idx, pos = _occurrences(b, rows)
        mine = self.owner[idx, 0] == node_id
        idx, pos = idx[mine], pos[mine]
        codes, owner = b.codes[idx], self.owner[idx, 1]
        out: list[list[frozenset]] = []
        link: list[np.ndarray] = []
        for j in range(len(node.chunks)):
            perm = self.key.rng("chunk-order", *self.context, repr(path), j).permutation(size)
            where = np.empty(size, dtype=np.int64)
            where[perm] = np.arange(size)
            sel = owner == j
            p = where[pos[sel]]
            o = np.argsort(p, kind="stable")
            vals = b.domain[codes[sel][o]].tolist()
            ps = p[o]
            starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]]) if ps.size else ps
            ends = np.r_[starts[1:], ps.size].astype(np.int64)
            chunk: list[frozenset] = [_EMPTY] * size
            for at, lo, hi in zip(ps[starts].tolist(), starts.tolist(), ends.tolist()):
                chunk[at] = frozenset(vals[lo:hi])
            out.append(chunk)
            link.append(rows[perm])
        self.links.append(link)
        return out


def disassociate(
    transactions: Any,
    k: int,
    m: int,
    max_cluster_size: int | None = None,
    seed: int | None = 0,
    *,
    key: Any = None,
    measures: bool = True,
    max_basket_size: int | None = None,
    transaction_col: str | None = None,
    item_col: str | None = None,
) -> TransactionsRelease:
    """Disassociate set-valued data: original items, in chunks no m items link to < k people.

    Parameters
    ----------
    transactions : iterable of sets, pandas Series of sets, or long DataFrame
        One item collection per person (items ints or strings), or a long
        ``(transaction, item)`` DataFrame (see :func:`transactions.from_long`).
    k : int
        Every itemset of up to ``m`` items present in a record chunk is in at least ``k``
        of its subrecords; every cluster holds at least ``k`` transactions.
    m : int
        Items the attacker knows (1..8).
    max_cluster_size : int, optional
        Largest cluster horizontal partitioning leaves (default ``max(20 k, 100)``).
    seed : int, optional
        Public seed of the measures (the partitioning is deterministic); it never decides
        the published order.
    key : Pseudonymizer, bytes, key-file path or None
        Secret release key (:func:`structanon.io.release_key`): the order of the clusters
        and of the subrecords of every chunk are drawn from it.
    measures : bool
        Compute utility and risk (default True).
    max_basket_size : int, optional
        Widest transaction accepted (default: the widest whose ``m``-subsets stay under
        10 million).
    transaction_col, item_col : str, optional
        Column names of a long DataFrame input.

    Returns
    -------
    TransactionsRelease
        ``data``: a list of :class:`Cluster` (``size``, ``record_chunks``, ``term_chunk``)
        in a secret order.  ``release.source_index[c][j][i]`` is the input position of
        subrecord ``i`` of chunk ``j`` of cluster ``c`` (Python only, never written).

    Raises
    ------
    InputError
        Bad parameters or malformed transactions.
    InfeasibleError
        Fewer than ``k`` transactions.

    Examples
    --------
    >>> import transactions
    >>> data = [{"milk", "beer"}, {"milk", "bread"}, {"milk", "beer"}, {"bread"}] * 2
    >>> rel = transactions.disassociate(data, k=2, m=2, measures=False)
    >>> rel.verify().passed, sum(c.size for c in rel.data)
    (True, 8)

    References
    ----------
    M. Terrovitis, J. Liagouris, N. Mamoulis, S. Skiadopoulos. Privacy preservation by
    disassociation. PVLDB 5(10), 2012.
    """
    k, m, max_cluster_size, seed = _check_parameters(k, m, max_cluster_size, seed, max_basket_size)
    check_choice(measures, "measures", (True, False))
    key = release_key(key)
    timings = Timings()
    with timings("encode"):
        b = encode_baskets(maybe_long(transactions, transaction_col, item_col))
        if b.n == 0:
            raise InputError("there are no transactions (an empty collection)")
        if m >= 2:
            check_basket_width(b, m, max_basket_size, f"disassociation with m={m}")
    if k > b.n:
        raise InfeasibleError(f"k={k} exceeds the number of transactions ({b.n})")
    key = key.bound(b.indptr, b.codes, b.domain)  # streams bound to the input
    with timings("anonymize"):
        nodes, top, stats, owner = _partition(b, k, m, max_cluster_size)
    publisher = _Publisher(b, nodes, owner, key, (seed, k, m, max_cluster_size))
    published = publisher.publish(top)
    term_occ = stats["term_chunk_occurrences"]
    model = ChunkKmAnonymity(k, m)
    totals = {
        "transactions": b.n,
        "item_occurrences": b.nnz,
        "term_chunk_occurrences": term_occ,
        "suppressed_occurrences": 0,
    }
    info: dict[str, Any] = {
        "input": b.input_stats(),
        "disassociation": {**stats, **totals},
        "transformation_text": _text(b, stats, term_occ),
    }
    release = TransactionsRelease(
        data=published,
        datatype="transactions",
        verifier=make_disassociation_verifier(model, totals),
        models=[model],
        parameters={
            "algorithm": "disassociation",
            "k": k,
            "m": m,
            "max_cluster_size": max_cluster_size,
            "seed": seed,
        },
        suppressed=0,
        n_individuals=b.n,
        info=info,
    )
    release.source_index = publisher.links
    warning = k_warning(k)
    if warning:
        add_warning(release, warning)
    if not measures:
        skipped_note(release)

    def measure(rel: Release) -> None:
        from .metrics import disassociation_utility
        from .risk import disassociation_risk

        s = 0 if seed is None else seed
        recs = [reconstruct(rel.data, s + d) for d in range(2)]
        rel.utility = disassociation_utility(b, rel.data, k=k, m=m, reconstructions=recs)
        rel.risk = disassociation_risk(b, rel.data, m=m, k=k, seed=s, reconstruction=recs[0])

    finish_release(release, measure, measures=measures, timings=timings)
    return release


def _text(b: Baskets, stats: dict[str, Any], term_occ: int) -> str:
    share = 1.0 - term_occ / b.nnz if b.nnz else 1.0
    return (
        f"The {b.n:,} transactions were split into {stats['clusters']:,} clusters of similar "
        f"baskets and each cluster's items into {stats['record_chunks']:,} record chunks in "
        f"all, plus {stats['shared_chunks']:,} shared chunks of {stats['joint_clusters']:,} "
        "joint clusters; items keep their names, but associations across chunks are cut.  "
        f"{share:.1%} of item "
        "occurrences are published in record chunks, the rest only as term-chunk items "
        "(present in the cluster, basket unknown)."
    )


def reconstruct(release: Any, seed: int | None = 0) -> list[frozenset]:
    """One plausible dataset drawn from a disassociated release (random re-association).

    In every cluster the subrecords of each chunk are matched to the cluster's
    transactions by an independent random permutation (from the public ``seed``: this is
    the data user's analysis, not publication), and every term-chunk item is given to one
    transaction drawn at random.  The item frequencies of the result are those of the
    record chunks plus one per term-chunk entry; itemset supports within a chunk are kept,
    associations across chunks are random.

    Parameters
    ----------
    release : Release or list of Cluster (or of their ``to_dict()``)
    seed : int, optional

    Returns
    -------
    list of frozenset
        One transaction per published record, cluster after cluster.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "b"}, {"a"}, {"c"}]
    >>> rel = transactions.disassociate(data, k=2, m=2, measures=False)
    >>> len(transactions.reconstruct(rel, seed=1))
    4
    """
    clusters = _clusters_of(release)
    rng = np.random.default_rng(check_seed(seed))
    out: list[frozenset] = []
    for c in clusters:
        out.extend(frozenset(p) for p in _redraw(c, rng))
    return out


def _redraw(c: Cluster, rng: np.random.Generator) -> list[set]:
    """The transactions of one (joint) cluster, re-associated at random."""
    if c.clusters:
        parts = [p for member in c.clusters for p in _redraw(member, rng)]
    else:
        parts = [set() for _ in range(c.size)]
        if c.size:
            for item in _sorted(c.term_chunk):
                parts[int(rng.integers(c.size))].add(item)
    for chunk in c.record_chunks:
        _assign(parts, [sub for sub in chunk if sub], rng)
    return parts


def _assign(parts: list[set], subs: list[frozenset], rng: np.random.Generator) -> None:
    """Give each subrecord to a distinct random transaction that lacks its items.

    An item of a joint cluster's shared chunk may also sit in a member's record chunk; a
    transaction never receives the same item twice when another can take it (the input
    itself is one such assignment), so item frequencies are kept.
    """
    free = rng.permutation(len(parts)).tolist()
    for j in rng.permutation(len(subs)).tolist():
        sub = subs[j]
        at = len(free) - 1
        for t in range(len(free) - 1, -1, -1):
            if parts[free[t]].isdisjoint(sub):
                at = t
                break
        r = free[at]
        free[at] = free[-1]
        free.pop()
        parts[r].update(sub)


def _clusters_of(release: Any) -> list[Cluster]:
    data = getattr(release, "data", release)
    if isinstance(data, dict) and "clusters" in data:
        data = data["clusters"]
    if not isinstance(data, list):
        raise InputError("expected a disassociated release (a list of clusters)")
    out = []
    for i, c in enumerate(data):
        if isinstance(c, Cluster):
            out.append(c)
        elif isinstance(c, dict) and {"size", "record_chunks", "term_chunk"} <= set(c):
            out.append(
                Cluster(
                    int(c["size"]),
                    [[frozenset(s) for s in chunk] for chunk in c["record_chunks"]],
                    frozenset(c["term_chunk"]),
                    _clusters_of(list(c.get("clusters", []))),
                )
            )
        else:
            raise InputError("not a cluster of a disassociated release", row=i)
    return out
