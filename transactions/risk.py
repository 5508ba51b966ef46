"""Re-identification risk for set-valued data: an attacker who knows ``m`` items of a target.

The attacker looks for the transactions consistent with what they know: in the original
data those holding all the known items; in a release those holding, for every known
item, the item itself or a generalization of it.  The fewer candidates, the higher the
risk; fewer than ``k`` candidates pins the target down.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from structanon.errors import InputError

from ._data import encode_baskets
from ._query import NodeIndex, published_nodes
from ._taxonomy import Taxonomy

__all__ = [
    "candidate_sizes",
    "summarize_candidates",
    "attack_risk",
    "band_linkage_risk",
    "disassociation_risk",
]


def _targets(lengths: np.ndarray, m: int, n_targets: int, rng: np.random.Generator):
    eligible = np.flatnonzero(lengths > 0)
    if eligible.size == 0:
        return eligible
    if eligible.size <= n_targets:
        return eligible
    return np.sort(rng.choice(eligible, size=n_targets, replace=False))


def candidate_sizes(
    original: Any,
    published: Sequence[Any],
    taxonomy: Taxonomy,
    m: int,
    n_targets: int = 500,
    seed: int | None = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate-set sizes before and after, for seeded targets knowing ``m`` of their items.

    Returns ``(before, after, target_rows)``.  A target with fewer than ``m`` items is
    known entirely.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}]
    >>> tax = transactions.item_taxonomy(data, fanout=2)
    >>> before, after, _ = candidate_sizes(data, [{"*"}, {"*"}], tax, m=2)
    >>> before.tolist(), after.tolist()
    ([1.0, 1.0], [2.0, 2.0])
    """
    b = encode_baskets(original, name="original")
    if len(published) != b.n:
        raise InputError(f"release has {len(published)} entries for {b.n} original transactions")
    rng = np.random.default_rng(seed)
    rows = _targets(b.lengths, m, n_targets, rng)
    queries = []
    for r in rows.tolist():
        items = b.codes[b.indptr[r] : b.indptr[r + 1]]
        take = min(m, items.size)
        queries.append(np.sort(rng.choice(items, size=take, replace=False)))
    indptr, nodes, _s = published_nodes(published, taxonomy)
    orig_index = NodeIndex.of_baskets(b, taxonomy.n_nodes)
    pub_index = NodeIndex(indptr, nodes, taxonomy.n_nodes)
    before = np.zeros(rows.size)
    after = np.zeros(rows.size)
    for size in sorted({q.size for q in queries}):
        sel = [i for i, q in enumerate(queries) if q.size == size]
        qs = np.array([queries[i] for i in sel], dtype=np.int64).reshape(-1, size)
        before[sel] = orig_index.matches(qs, None)
        after[sel] = pub_index.matches(qs, taxonomy)
    return before, after, rows


def summarize_candidates(sizes: np.ndarray, k: int) -> dict[str, Any]:
    """Distribution of candidate-set sizes and the share pinned to fewer than ``k``."""
    if sizes.size == 0:
        return {"targets": 0}
    found = sizes > 0
    bins = [1, 2, 5, 10, 50, np.inf]
    hist = {}
    for lo, hi in zip(bins[:-1], bins[1:]):
        name = f"{lo}-{int(hi) - 1}" if np.isfinite(hi) else f">={lo}"
        hist[name] = int(((sizes >= lo) & (sizes < hi)).sum())
    return {
        "targets": int(sizes.size),
        "min_candidates": float(sizes[found].min()) if found.any() else 0.0,
        "median_candidates": float(np.median(sizes)),
        "share_below_k": float(((sizes > 0) & (sizes < k)).mean()),
        "share_unique": float((sizes == 1).mean()),
        "share_not_found": float((~found).mean()),
        "histogram": hist,
    }


def attack_risk(
    original: Any,
    published: Sequence[Any],
    taxonomy: Taxonomy,
    m: int,
    k: int,
    n_targets: int = 500,
    seed: int | None = 0,
) -> dict[str, Any]:
    """Risk before and after for an attacker knowing ``m`` items of each seeded target.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}]
    >>> tax = transactions.item_taxonomy(data, fanout=2)
    >>> attack_risk(data, [{"*"}, {"*"}], tax, m=1, k=2)["after"]["share_below_k"]
    0.0
    """
    before, after, _rows = candidate_sizes(original, published, taxonomy, m, n_targets, seed)
    return {
        "before": summarize_candidates(before, k),
        "after": summarize_candidates(after, k),
        "attacker_items": m,
    }


def band_linkage_risk(
    original: Any, data: dict[str, Any], m: int = 2, n_targets: int = 300, seed: int | None = 0
) -> dict[str, Any]:
    """Probability that an attacker knowing ``m`` QI items ties a sensitive item to the target.

    Before: the share of the target's candidates holding the target's sensitive item.
    After: the same share estimated from the group summaries, which is at most 1/p.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "x"}, {"a"}, {"b"}, {"b", "y"}]
    >>> rel = transactions.band_matrix(data, ["x", "y"], p=2)
    >>> band_linkage_risk(data, rel.data, m=1)["after"]["max_probability"] <= 0.5
    True
    """
    b = encode_baskets(original, name="original")
    sensitive = {str(s) for s in data["sensitive_items"]}
    is_sens = np.array([str(x) in sensitive for x in b.domain.tolist()], dtype=bool)
    group = np.asarray(data["group"], dtype=np.int64)
    sizes = np.bincount(group[group >= 0], minlength=len(data["sensitive_counts"]))
    frac: dict[str, np.ndarray] = {}
    for gi, summary in enumerate(data["sensitive_counts"]):
        for s, c in summary.items():
            frac.setdefault(str(s), np.zeros(len(sizes)))[gi] = c / sizes[gi]
    rng = np.random.default_rng(seed)
    occ_s = is_sens[b.codes]
    holders = np.unique(b.rows[occ_s])
    if holders.size == 0:
        empty = {"targets": 0, "max_probability": 0.0, "mean_probability": 0.0}
        return {"before": empty, "after": empty}
    if holders.size > n_targets:
        holders = np.sort(rng.choice(holders, size=n_targets, replace=False))
    qi_occ = ~occ_s
    qi_rows, qi_codes = b.rows[qi_occ], b.codes[qi_occ]
    order = np.argsort(qi_codes, kind="stable")
    col_rows = qi_rows[order]
    col_ptr = np.zeros(b.domain.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(qi_codes, minlength=b.domain.size), out=col_ptr[1:])
    sens_rows, sens_codes = b.rows[occ_s], b.codes[occ_s]
    sens_keys = np.sort(sens_rows * np.int64(b.domain.size) + sens_codes)
    p_before, p_after = [], []
    for r in holders.tolist():
        items = b.codes[b.indptr[r] : b.indptr[r + 1]]
        qs, ss = items[~is_sens[items]], items[is_sens[items]]
        s = int(rng.choice(ss))
        known = rng.choice(qs, size=min(m, qs.size), replace=False) if qs.size else qs
        cand = np.arange(b.n, dtype=np.int64)
        for q in known.tolist():
            cand = np.intersect1d(cand, col_rows[col_ptr[q] : col_ptr[q + 1]], assume_unique=True)
        keys = cand * np.int64(b.domain.size) + s
        pos = np.searchsorted(sens_keys, keys)
        has = (pos < sens_keys.size) & (sens_keys[np.minimum(pos, sens_keys.size - 1)] == keys)
        p_before.append(has.mean() if cand.size else 0.0)
        g = group[cand]
        f = frac.get(str(b.domain[s]), np.zeros(len(sizes)))
        p_after.append(float(f[g[g >= 0]].mean()) if (g >= 0).any() else 0.0)
    pb, pa = np.asarray(p_before), np.asarray(p_after)
    return {
        "before": {
            "targets": int(pb.size),
            "max_probability": float(pb.max()),
            "mean_probability": float(pb.mean()),
            "share_certain": float((pb >= 1).mean()),
        },
        "after": {
            "targets": int(pa.size),
            "max_probability": float(pa.max()),
            "mean_probability": float(pa.mean()),
            "share_certain": float((pa >= 1).mean()),
        },
        "attacker_items": m,
    }


def disassociation_risk(
    original: Any,
    clusters: Sequence[Any],
    m: int,
    k: int,
    n_targets: int = 300,
    seed: int | None = 0,
    reconstruction: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """Attackers knowing ``m`` and ``m + 1`` items of seeded targets, on a disassociated release.

    For each target, ``m`` (then ``m + 1``) of its items are drawn with the public
    ``seed``.  ``before``: transactions of the input holding them all.  ``after``: the
    *candidate subrecords*, subrecords of one chunk holding all the known items (the model
    keeps them at >= k for up to ``m`` items; targets whose known items never share a
    chunk are counted in ``never_in_one_chunk`` and left out).  ``reconstruction``: the
    transactions holding them all in one random reconstruction
    (:func:`transactions.reconstruct`), the attacker's best single guess of the data;
    records there are drawn, not real, so a small count is no re-identification by itself.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}] * 3 + [{"a", "c"}] * 3
    >>> rel = transactions.disassociate(data, k=3, m=1, measures=False)
    >>> r = disassociation_risk(data, rel.data, m=1, k=3)
    >>> r["after"]["knowing_1_items"]["min_candidates"] >= 3
    True
    """
    from ._disassociation import reconstruct
    from .metrics import _SetIndex, release_subrecords

    b = encode_baskets(original, name="original")
    clusters = list(getattr(clusters, "data", clusters))
    code_of = {x: i for i, x in enumerate(b.domain.tolist())}
    n_items = int(b.domain.size)
    subs = _SetIndex(release_subrecords(clusters), code_of, n_items)
    if reconstruction is None:
        reconstruction = reconstruct(clusters, seed)
    recon = _SetIndex(reconstruction, code_of, n_items)
    orig = _SetIndex.of_baskets(b)
    rng = np.random.default_rng(seed)
    rows = _targets(b.lengths, m, n_targets, rng)
    out: dict[str, Any] = {"before": {}, "after": {}, "reconstruction": {}, "attacker_items": m}
    for known in (m, m + 1):
        queries = []
        for r in rows.tolist():
            items = b.codes[b.indptr[r] : b.indptr[r + 1]]
            queries.append(np.sort(rng.choice(items, size=min(known, items.size), replace=False)))
        before = np.array([orig.support(q) for q in queries], dtype=np.float64)
        sub = np.array([subs.support(q) for q in queries], dtype=np.float64)
        rec = np.array([recon.support(q) for q in queries], dtype=np.float64)
        name = f"knowing_{known}_items"
        out["before"][name] = summarize_candidates(before, k)
        out["after"][name] = {
            **summarize_candidates(sub[sub > 0], k),
            "never_in_one_chunk": float((sub == 0).mean()) if sub.size else 0.0,
        }
        out["reconstruction"][name] = summarize_candidates(rec, k)
    return out
