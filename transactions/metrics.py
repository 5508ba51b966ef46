"""Utility of anonymized set-valued data.

Every function compares the original transactions with a published release (one entry
per original transaction: a set of labels, or ``None`` if suppressed) under the item
taxonomy used to produce it (see :func:`transactions.item_taxonomy`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from structanon.errors import InputError

from ._data import Baskets, count_itemsets, decode_keys, encode_baskets
from ._query import NodeIndex, published_nodes, sample_queries
from ._taxonomy import Taxonomy

__all__ = [
    "ncp",
    "utility_loss",
    "support_error",
    "top_itemsets_error",
    "frequent_itemset_preservation",
    "band_query_error",
    "summarize_errors",
    "top_itemsets",
    "disassociation_supports",
    "disassociation_utility",
    "release_subrecords",
]


#: Per measure and itemset size: the most itemsets one transaction may contribute, and the
#: most in all.  Wider transactions (and, past the total, the widest ones) are left out of
#: the exact itemset counts, and the result says how many were left out.
MAX_SUBSETS_PER_TRANSACTION = 1_000_000
MAX_SUBSETS_TOTAL = 20_000_000


def _bounded_rows(lengths: np.ndarray, size: int) -> np.ndarray:
    """Mask of transactions whose ``size``-subsets are counted within the budgets."""
    n_sub = np.zeros(lengths.size)
    if size > 1:
        n_sub = np.ones(lengths.size)
        for j in range(size):
            n_sub *= np.maximum(lengths - j, 0) / (j + 1)
    keep = n_sub <= MAX_SUBSETS_PER_TRANSACTION
    if n_sub[keep].sum() > MAX_SUBSETS_TOTAL:
        order = np.argsort(np.where(keep, n_sub, np.inf), kind="stable")
        within = np.cumsum(n_sub[order]) <= MAX_SUBSETS_TOTAL
        keep = np.zeros(lengths.size, dtype=bool)
        keep[order[within]] = True
    return keep


def _rows_subset(
    indptr: np.ndarray, codes: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    lens = np.diff(indptr)
    mask = np.repeat(keep, lens)
    new_ptr = np.zeros(indptr.size, dtype=np.int64)
    np.cumsum(np.where(keep, lens, 0), out=new_ptr[1:])
    return new_ptr, codes[mask]


def _bounded_counts(
    indptr: np.ndarray, codes: np.ndarray, size: int, base: int, skipped: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`count_itemsets` over the transactions within the budgets; counts the rest."""
    if size > 1:
        keep = _bounded_rows(np.diff(indptr), size)
        if not keep.all():
            skipped[str(size)] = skipped.get(str(size), 0) + int((~keep).sum())
            indptr, codes = _rows_subset(indptr, codes, keep)
    return count_itemsets(indptr, codes, size, base)


def _skip_note(out: dict[str, Any], skipped: dict[str, int]) -> dict[str, Any]:
    if skipped:
        out["transactions_left_out"] = skipped
        out["note"] = (
            f"itemset counts leave out transactions with more than "
            f"{MAX_SUBSETS_PER_TRANSACTION:,} itemsets of a size, and the widest "
            f"ones past {MAX_SUBSETS_TOTAL:,} itemsets in all (bounded memory)"
        )
    return out


def _prepare(
    original: Any, published: Sequence[Any], taxonomy: Taxonomy
) -> tuple[Baskets, np.ndarray, np.ndarray, np.ndarray]:
    b = encode_baskets(original, name="original")
    if len(published) != b.n:
        raise InputError(f"release has {len(published)} entries for {b.n} original transactions")
    if b.domain.size != taxonomy.n_items or not all(
        str(x) == str(y) for x, y in zip(b.domain.tolist(), taxonomy.domain.tolist())
    ):
        raise InputError("the taxonomy was built for different data (item domains differ)")
    indptr, nodes, suppressed = published_nodes(published, taxonomy)
    return b, indptr, nodes, suppressed


def _cover(b: Baskets, indptr: np.ndarray, nodes: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """For each original occurrence, the deepest published node covering it (-1 if none)."""
    rows = b.rows.astype(np.int64)
    pub_rows = np.repeat(np.arange(b.n, dtype=np.int64), np.diff(indptr))
    pub_keys = pub_rows * tax.n_nodes + nodes
    pub_keys.sort()
    found = np.full(b.nnz, -1, dtype=np.int64)
    leaves = b.codes.astype(np.int64)
    for d in range(tax.height, -1, -1):  # deepest cover first
        cand = tax.anc[leaves, d]
        keys = rows * tax.n_nodes + cand
        pos = np.searchsorted(pub_keys, keys)
        hit = (pos < pub_keys.size) & (pub_keys[np.minimum(pos, pub_keys.size - 1)] == keys)
        hit &= (found < 0) & (tax.depth[leaves] >= d)
        found[hit] = cand[hit]
    return found


def ncp(original: Any, published: Sequence[Any], taxonomy: Taxonomy) -> float:
    """Normalized certainty penalty over item occurrences (Terrovitis et al. 2008).

    Parameters
    ----------
    original : iterable of item sets
    published : sequence of sets of labels (None = suppressed)
    taxonomy : Taxonomy
        The item taxonomy of the release.

    Returns
    -------
    float
        In [0, 1]; suppressed or uncovered occurrences count 1.

    Notes
    -----
    .. math:: NCP = \\frac{\\sum_{o} |leaves(g(o))| / |I| \\cdot [g(o) \\text{ not a leaf}]}
              {\\#\\text{occurrences}}

    where :math:`g(o)` is the label an item occurrence is published as.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}]
    >>> tax = transactions.item_taxonomy(data, fanout=2)
    >>> ncp(data, [{"a", "b"}, {"a", "c"}], tax)
    0.0
    """
    b, indptr, nodes, _s = _prepare(original, published, taxonomy)
    if b.nnz == 0:
        return 0.0
    found = _cover(b, indptr, nodes, taxonomy)
    per = np.where(found >= 0, taxonomy.ncp[np.maximum(found, 0)], 1.0)
    return float(per.mean())


def utility_loss(original: Any, published: Sequence[Any], taxonomy: Taxonomy) -> float:
    """Share of item occurrences not published as themselves (generalized or suppressed).

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}]
    >>> tax = transactions.item_taxonomy(data, fanout=2)
    >>> utility_loss(data, [{"a", "b"}, None], tax)
    0.5
    """
    b, indptr, nodes, _s = _prepare(original, published, taxonomy)
    if b.nnz == 0:
        return 0.0
    found = _cover(b, indptr, nodes, taxonomy)
    return float((found != b.codes).mean())


def summarize_errors(errors: np.ndarray) -> dict[str, Any]:
    if errors.size == 0:
        return {"queries": 0}
    return {
        "queries": int(errors.size),
        "mean": float(errors.mean()),
        "median": float(np.median(errors)),
        "p90": float(np.quantile(errors, 0.9)),
        "max": float(errors.max()),
    }


def _relative_errors(b, indptr, nodes, tax, queries):
    true = NodeIndex.of_baskets(b, tax.n_nodes).matches(queries, None)
    est = NodeIndex(indptr, nodes, tax.n_nodes).matches(queries, tax, weighted=True)
    return np.abs(est - true) / np.maximum(true, 1.0)


def support_error(
    original: Any,
    published: Sequence[Any],
    taxonomy: Taxonomy,
    sizes: Sequence[int] = (1, 2),
    n_queries: int = 300,
    seed: int | None = 0,
    return_errors: bool = False,
) -> dict[str, Any]:
    """Relative error of the supports of random itemsets, estimated from the release.

    Each query is ``size`` items drawn from a random original transaction (seeded).  The
    estimate assumes items are uniform within a generalized node.

    Notes
    -----
    .. math:: \\hat s(Q) = \\sum_{t'} \\prod_{q \\in Q} \\frac{[g_{t'}(q)]}{|leaves(g_{t'}(q))|},
              \\quad RE = |\\hat s(Q) - s(Q)| / s(Q)

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}]
    >>> tax = transactions.item_taxonomy(data, fanout=2)
    >>> support_error(data, data, tax, sizes=(1,), n_queries=5)["by_size"]["1"]["mean"]
    0.0
    """
    b, indptr, nodes, _s = _prepare(original, published, taxonomy)
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"by_size": {}}
    every = []
    for size in sizes:
        q = sample_queries(b, int(size), n_queries, rng)
        err = _relative_errors(b, indptr, nodes, taxonomy, q) if q.size else np.zeros(0)
        out["by_size"][str(size)] = summarize_errors(err)
        every.append(err)
    allerr = np.concatenate(every) if every else np.zeros(0)
    out.update(summarize_errors(allerr))
    if return_errors:
        out["errors"] = allerr
    return out


def top_itemsets_error(
    original: Any, published: Sequence[Any], taxonomy: Taxonomy, top: int = 100, max_size: int = 2
) -> dict[str, Any]:
    """Relative support error of the ``top`` most frequent original itemsets (sizes 1..max_size).

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}]
    >>> tax = transactions.item_taxonomy(data, fanout=2)
    >>> top_itemsets_error(data, data, tax, top=3)["mean"]
    0.0
    """
    b, indptr, nodes, _s = _prepare(original, published, taxonomy)
    cands = []
    skipped: dict[str, int] = {}
    for size in range(1, max_size + 1):
        keys, counts = _bounded_counts(b.indptr, b.codes, size, taxonomy.n_nodes, skipped)
        if counts.size:
            best = np.lexsort((keys, -counts))[:top]
            for row, c in zip(
                decode_keys(keys[best], size, taxonomy.n_nodes).tolist(), counts[best].tolist()
            ):
                cands.append((c, row))
    cands.sort(key=lambda x: (-x[0], len(x[1]), x[1]))
    cands = cands[:top]
    errs = []
    for size in range(1, max_size + 1):
        q = np.array([r for _c, r in cands if len(r) == size], dtype=np.int64).reshape(-1, size)
        if q.size:
            errs.append(_relative_errors(b, indptr, nodes, taxonomy, q))
    return _skip_note(summarize_errors(np.concatenate(errs) if errs else np.zeros(0)), skipped)


def frequent_itemset_preservation(
    original: Any,
    published: Sequence[Any],
    taxonomy: Taxonomy,
    min_support: float = 0.01,
    max_size: int = 2,
) -> dict[str, Any]:
    """Precision and recall of the frequent itemsets mined from the release at item level.

    ``min_support`` is a fraction of the transactions (< 1) or a count (>= 1).  Itemsets
    of the release count only when all their labels are original items.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}, {"a", "b"}]
    >>> tax = transactions.item_taxonomy(data, fanout=2)
    >>> frequent_itemset_preservation(data, data, tax, min_support=2)["recall"]
    1.0
    """
    b, indptr, nodes, _s = _prepare(original, published, taxonomy)
    threshold = min_support * b.n if min_support < 1 else float(min_support)
    leaf_only = nodes < taxonomy.n_items
    rows = np.repeat(np.arange(b.n, dtype=np.int64), np.diff(indptr))[leaf_only]
    pub_ptr = np.zeros(b.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=b.n), out=pub_ptr[1:])
    pub_codes = nodes[leaf_only]
    n_true = n_pub = n_both = 0
    skipped: dict[str, int] = {}
    for size in range(1, max_size + 1):
        k1, c1 = _bounded_counts(b.indptr, b.codes, size, taxonomy.n_nodes, skipped)
        k2, c2 = _bounded_counts(pub_ptr, pub_codes, size, taxonomy.n_nodes, skipped)
        f1, f2 = k1[c1 >= threshold], k2[c2 >= threshold]
        n_true += f1.size
        n_pub += f2.size
        n_both += np.intersect1d(f1, f2).size
    precision = n_both / n_pub if n_pub else 1.0
    recall = n_both / n_true if n_true else 1.0
    return _skip_note(
        {
            "min_support": threshold,
            "frequent_original": n_true,
            "frequent_release": n_pub,
            "precision": float(precision),
            "recall": float(recall),
        },
        skipped,
    )


def band_query_error(
    original: Any,
    data: dict[str, Any],
    n_queries: int = 300,
    qi_size: int = 1,
    seed: int | None = 0,
) -> dict[str, Any]:
    """Relative error of count queries "QI items and one sensitive item" on a band-matrix release.

    Each query takes ``qi_size`` quasi-identifying items and one sensitive item of a random
    original transaction holding a sensitive item.  The release answers with
    :math:`\\sum_g |\\{t \\in g: Q \\subseteq t\\}| \\cdot c_g(s) / |g|`.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "x"}, {"a"}, {"b"}, {"b", "y"}]
    >>> rel = transactions.band_matrix(data, ["x", "y"], p=2)
    >>> band_query_error(data, rel.data, n_queries=5)["queries"]
    5
    """
    b = encode_baskets(original, name="original")
    qi = data["qi"]
    if len(qi) != b.n:
        raise InputError(f"release has {len(qi)} entries for {b.n} original transactions")
    sensitive = {str(s) for s in data["sensitive_items"]}
    is_sens_item = np.array([str(x) in sensitive for x in b.domain.tolist()], dtype=bool)
    group = np.asarray(data["group"], dtype=np.int64)
    sizes = np.bincount(group[group >= 0], minlength=len(data["sensitive_counts"]))
    code_of = {str(x): i for i, x in enumerate(b.domain.tolist())}
    rng = np.random.default_rng(seed)
    occ_sens = is_sens_item[b.codes]
    rows_with = np.unique(b.rows[occ_sens])
    holders = [
        r
        for r in rows_with.tolist()
        if (~is_sens_item[b.codes[b.indptr[r] : b.indptr[r + 1]]]).sum() >= qi_size
    ]
    if not holders:
        return {"queries": 0}
    from scipy import sparse as sp

    mat = sp.csc_matrix((np.ones(b.nnz), (b.rows, b.codes)), shape=(b.n, b.domain.size))
    pub_rows, pub_cols = [], []
    for i, t in enumerate(qi):
        if t is not None:
            for x in t:
                pub_rows.append(i)
                pub_cols.append(code_of[str(x)])
    pub = sp.csc_matrix((np.ones(len(pub_rows)), (pub_rows, pub_cols)), shape=(b.n, b.domain.size))
    frac: dict[str, np.ndarray] = {}
    for gi, summary in enumerate(data["sensitive_counts"]):
        for s, c in summary.items():
            frac.setdefault(str(s), np.zeros(len(sizes)))[gi] = c / sizes[gi]
    errs = []
    for r in rng.choice(np.asarray(holders), size=n_queries, replace=True).tolist():
        items = b.codes[b.indptr[r] : b.indptr[r + 1]]
        qs = items[~is_sens_item[items]]
        ss = items[is_sens_item[items]]
        q = rng.choice(qs, size=qi_size, replace=False)
        s = int(rng.choice(ss))
        true_rows = np.asarray(mat[:, q].sum(axis=1)).reshape(-1) == qi_size
        true = float((true_rows & (np.asarray(mat[:, s].todense()).reshape(-1) > 0)).sum())
        match = np.flatnonzero(np.asarray(pub[:, q].sum(axis=1)).reshape(-1) == qi_size)
        g = group[match]
        f = frac.get(str(b.domain[s]), np.zeros(len(sizes)))
        est = float(f[g[g >= 0]].sum())
        errs.append(abs(est - true) / max(true, 1.0))
    return summarize_errors(np.asarray(errs))


# ------------------------------------------------------------------ disassociation
class _SetIndex:
    """Inverted index of a list of item sets over the input's item codes (sparse columns)."""

    def __init__(self, sets: Sequence[Any], code_of: dict[Any, int], n_items: int) -> None:
        lens = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
        codes = np.fromiter(
            (code_of.get(x, n_items) for s in sets for x in s), dtype=np.int64, count=lens.sum()
        )
        rows = np.repeat(np.arange(len(sets), dtype=np.int64), lens)
        order = np.lexsort((rows, codes))
        self.rows = rows[order]
        self.ptr = np.searchsorted(codes[order], np.arange(n_items + 2))

    def column(self, code: int) -> np.ndarray:
        return self.rows[self.ptr[code] : self.ptr[code + 1]]

    def support(self, itemset: Any) -> int:
        found = self.column(int(itemset[0]))
        for code in itemset[1:]:
            if found.size == 0:
                break
            found = np.intersect1d(found, self.column(int(code)), assume_unique=True)
        return int(found.size)

    @classmethod
    def of_baskets(cls, b: Baskets) -> _SetIndex:
        self = cls.__new__(cls)
        order = np.lexsort((b.rows, b.codes))
        self.rows = b.rows[order]
        self.ptr = np.searchsorted(b.codes[order], np.arange(int(b.domain.size) + 2))
        return self


def release_subrecords(clusters: Sequence[Any]) -> list[frozenset]:
    """Every non-empty subrecord of every chunk of a disassociated release."""
    out: list[frozenset] = []

    def walk(c: Any) -> None:
        for chunk in c.record_chunks:
            out.extend(sub for sub in chunk if sub)
        for member in c.clusters:
            walk(member)

    for c in clusters:
        walk(c)
    return out


def top_itemsets(b: Baskets, size: int, top: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The ``top`` most frequent itemsets of ``size`` items, exactly: ``(codes, supports)``.

    Only items at least as frequent as a threshold are enumerated; the threshold is
    lowered until the ``top``-th itemset's support reaches it, which makes the result exact
    (an itemset is never more frequent than its items).

    Examples
    --------
    >>> b = encode_baskets([{1, 2}, {1, 2}, {1, 3}])
    >>> codes, sup = top_itemsets(b, 2, top=1)
    >>> b.domain[codes].tolist(), sup.tolist()
    ([[1, 2]], [2])
    """
    item_sup = np.bincount(b.codes, minlength=int(b.domain.size))
    ranked = np.sort(item_sup)[::-1]
    n_keep = min(max(4 * top, 64), ranked.size)
    while True:
        threshold = int(ranked[n_keep - 1]) if n_keep else 0
        keep = item_sup >= max(threshold, 1)
        occ = keep[b.codes]
        rows = b.rows[occ]
        indptr = np.zeros(b.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=b.n), out=indptr[1:])
        base = max(int(b.domain.size), 1)
        keys, counts = count_itemsets(indptr, b.codes[occ], size, base)
        best = np.lexsort((keys, -counts))[:top]
        enough = best.size == top and int(counts[best[-1]]) >= threshold
        if enough or n_keep >= ranked.size or threshold <= 1:
            return decode_keys(keys[best], size, base), counts[best]
        n_keep = min(ranked.size, n_keep * 4)


def disassociation_supports(
    b: Baskets,
    clusters: Sequence[Any],
    itemsets: np.ndarray,
    draws: int = 2,
    seed: int = 0,
    reconstructions: Sequence[Sequence[Any]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Support of itemsets (input item codes) as a data user estimates it from the release.

    Returns ``(lower, expected)``: the lower bound (subrecords holding the whole itemset,
    which every reconstruction keeps) and the mean support over ``draws`` random
    re-associations (:func:`transactions.reconstruct` with seeds ``seed..seed+draws-1``,
    or the ``reconstructions`` given).
    """
    from ._disassociation import reconstruct

    code_of = {x: i for i, x in enumerate(b.domain.tolist())}
    n_items = int(b.domain.size)
    sub_index = _SetIndex(release_subrecords(clusters), code_of, n_items)
    lower = np.array([sub_index.support(q) for q in itemsets.tolist()], dtype=np.float64)
    if reconstructions is None:
        reconstructions = [reconstruct(list(clusters), seed + d) for d in range(draws)]
    expected = np.zeros(len(itemsets))
    for rec in reconstructions:
        index = _SetIndex(rec, code_of, n_items)
        expected += [index.support(q) for q in itemsets.tolist()]
    return lower, expected / max(len(reconstructions), 1)


def disassociation_utility(
    original: Any,
    clusters: Sequence[Any],
    k: int,
    m: int,
    seed: int = 0,
    top: int = 100,
    sizes: Sequence[int] = (1, 2, 3),
    min_support: float | None = None,
    draws: int = 2,
    reconstructions: Sequence[Sequence[Any]] | None = None,
) -> dict[str, Any]:
    """Utility of a disassociated release against its input.

    * ``term_chunk_share``: item occurrences published only as term-chunk items;
      ``published_share`` its complement; ``items_published``: share of distinct items
      in at least one record chunk;
    * ``top_itemsets``: per size in ``sizes``, the relative support error of the ``top``
      most frequent input itemsets, estimated by the expected value under random
      re-association (mean of ``draws`` draws) and by the lower bound from subrecords
      (median and mean);
    * ``frequent_itemsets``: precision and recall of the itemsets of 1..2 items with support
      >= ``min_support`` (default ``max(1%, 2k)`` transactions) in one reconstruction.

    ``reconstructions`` (default: ``draws`` draws from seeds ``seed, seed + 1, ...``) are
    reused by every estimate.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}] * 4 + [{"a"}] * 2
    >>> rel = transactions.disassociate(data, k=2, m=2, measures=False)
    >>> u = disassociation_utility(data, rel.data, k=2, m=2, draws=1)
    >>> u["top_itemsets"]["size_2"]["expected_median"], u["term_chunk_share"]
    (0.0, 0.0)
    """
    from ._disassociation import reconstruct

    b = encode_baskets(original, name="original")
    clusters = list(getattr(clusters, "data", clusters))
    if reconstructions is None:
        reconstructions = [reconstruct(clusters, seed + d) for d in range(max(draws, 1))]
    subs = release_subrecords(clusters)
    published = sum(len(s) for s in subs)
    in_chunks = {x for s in subs for x in s}
    out: dict[str, Any] = {
        "published_share": published / b.nnz if b.nnz else 1.0,
        "term_chunk_share": 1.0 - published / b.nnz if b.nnz else 0.0,
        "items_published": len(in_chunks) / int(b.domain.size) if b.domain.size else 1.0,
    }
    tops: dict[str, Any] = {}
    for size in sizes:
        q, true = top_itemsets(b, size, top)
        if not q.size:
            continue
        lower, expected = disassociation_supports(b, clusters, q, reconstructions=reconstructions)
        err_e = np.abs(expected - true) / true
        err_l = np.abs(lower - true) / true
        tops[f"size_{size}"] = {
            "itemsets": int(true.size),
            "expected_median": float(np.median(err_e)),
            "expected_mean": float(err_e.mean()),
            "lower_bound_median": float(np.median(err_l)),
            "lower_bound_mean": float(err_l.mean()),
        }
    out["top_itemsets"] = tops
    threshold = (
        max(0.01 * b.n, 2 * k)
        if min_support is None
        else (min_support * b.n if min_support < 1 else float(min_support))
    )
    rec = encode_baskets([list(t) for t in reconstructions[0]], name="reconstruction")
    remap = np.searchsorted(b.domain, rec.domain) if rec.domain.size else rec.domain
    n_true = n_rel = n_both = 0
    base = max(int(b.domain.size), 1)
    rec_codes = np.asarray(remap, dtype=np.int64)[rec.codes] if rec.nnz else rec.codes
    rec_ptr, rec_codes = _sorted_rows(rec.indptr, rec_codes, rec.n, base)
    for size in (1, 2):
        k1, c1 = count_itemsets(b.indptr, b.codes, size, base)
        k2, c2 = count_itemsets(rec_ptr, rec_codes, size, base)
        f1, f2 = k1[c1 >= threshold], k2[c2 >= threshold]
        n_true, n_rel = n_true + f1.size, n_rel + f2.size
        n_both += np.intersect1d(f1, f2).size
    out["frequent_itemsets"] = {
        "min_support": float(threshold),
        "frequent_original": int(n_true),
        "frequent_release": int(n_rel),
        "precision": float(n_both / n_rel) if n_rel else 1.0,
        "recall": float(n_both / n_true) if n_true else 1.0,
    }
    return out


def _sorted_rows(
    indptr: np.ndarray, codes: np.ndarray, n: int, base: int
) -> tuple[np.ndarray, np.ndarray]:
    from ._data import dedupe_rows

    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    return dedupe_rows(rows, codes, n, base)
