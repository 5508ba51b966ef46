"""k^m-anonymity by item generalization: Apriori Anonymization and local recoding."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from structanon import Release
from structanon.errors import InputError
from structanon.io import release_key

from . import metrics, risk
from ._apriori import apriori_cut, local_cuts
from ._common import (
    MAX_M,
    check_basket_width,
    check_int,
    check_seed,
    group_partition,
    k_one_warning,
    prepare_generalization,
    publication_order,
    publish_sets,
    resolve_measures,
)
from ._data import check_key_space
from ._verify import KmAnonymity, check_km, make_verifier

__all__ = ["km_anonymize", "evaluate_generalization"]

METHODS = ("apriori", "local")


def finish_generalization(release: Release, b: Any, published: list, tax: Any,
                          occ_nodes: np.ndarray, k: int, m: int, seed: int | None,
                          evaluate: bool, key: Any = None) -> Release:
    """Verify a generalized release from its output alone, measure it, publish it shuffled.

    ``occ_nodes`` is the published taxonomy node of every item occurrence (for NCP); with
    ``evaluate`` the full utility and risk replace the NCP-only utility.  The published
    transactions come out in a secret order drawn from the release ``key``
    (:func:`structanon.io.release_key`); ``release.source_index`` keeps, for the publisher
    only, the input position of every published transaction.
    """
    key = release_key(key)
    release.utility = {"ncp": float(tax.ncp[occ_nodes].sum() / b.nnz) if b.nnz else 0.0}
    if evaluate:
        t0 = time.perf_counter()
        release.utility, release.risk = evaluate_generalization(b, published, tax, k, m, seed)
        release.timings["evaluate"] = time.perf_counter() - t0
    else:
        release.info.setdefault("notes", []).append(
            "measures skipped (measures=False / --no-measures): utility is NCP only, no risk")
    perm = publication_order(key, len(published), seed, k, m,
                             repr(sorted(release.parameters.items(), key=str)))
    release.data = [published[i] for i in perm.tolist()]
    release.partition = group_partition(release.data)
    release.source_index = perm
    t0 = time.perf_counter()
    release.verify(strict=True)
    release.timings["verify"] = time.perf_counter() - t0
    release.taxonomy = tax
    return release


def evaluate_generalization(b: Any, published: list, tax: Any, k: int, m: int,
                            seed: int | None) -> tuple[dict, dict]:
    """Utility and risk of a generalized release (used by both generalization methods)."""
    s = 0 if seed is None else seed
    utility = {
        "ncp": metrics.ncp(b, published, tax),
        "utility_loss": metrics.utility_loss(b, published, tax),
        "support_error": metrics.support_error(b, published, tax, sizes=tuple(range(1, min(m, 2) + 1)),
                                               n_queries=200, seed=s),
        "top_itemsets_error": metrics.top_itemsets_error(b, published, tax, top=50,
                                                         max_size=min(max(m, 1), 2)),
        "frequent_itemsets": metrics.frequent_itemset_preservation(
            b, published, tax, min_support=max(0.01, 2 * k / max(b.n, 1)), max_size=2),
    }
    attack = risk.attack_risk(b, published, tax, m=m, k=k, n_targets=300, seed=s)
    return utility, {"before": attack["before"], "after": attack["after"],
                     "attacker_items": attack["attacker_items"]}


def km_anonymize(transactions: Any, k: int, m: int, hierarchy: Any = None,
                 method: str = "apriori", fanout: int | None = None, seed: int | None = None,
                 order: str = "id", evaluate: bool | None = None, *, key: Any = None,
                 measures: bool = True, max_basket_size: int | None = None) -> Release:
    """Make set-valued data k^m-anonymous by generalizing items over a taxonomy.

    Any attacker who knows up to ``m`` items of a person finds at least ``k`` published
    transactions consistent with them.

    Parameters
    ----------
    transactions : iterable of sets, or pandas Series of sets
        One item collection per person; items are ints or strings.  Duplicate items in
        a transaction are removed and empty transactions kept; both are counted in
        ``release.info["input"]``.
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
    seed : int, optional
        Public seed of the measures' random queries; the anonymization is deterministic.
        It never decides the published order.
    order : {"id", "frequency"}
        Item order of the automatic taxonomy.
    evaluate : bool, optional
        Older name of ``measures`` (wins when given).
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
    Release
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
    >>> rel = transactions.km_anonymize(data, k=2, m=2, fanout=2, evaluate=False)
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
    k = check_int(k, "k", 1)
    m = check_int(m, "m", 1, MAX_M)
    seed = check_seed(seed)
    evaluate = resolve_measures(measures, evaluate)
    key = release_key(key)
    if method not in METHODS:
        raise InputError(f"parameter 'method' must be one of {METHODS}", value=method)
    if fanout is not None:
        check_int(fanout, "fanout", 2)
    timings: dict[str, float] = {}
    if max_basket_size is not None:
        check_int(max_basket_size, "max_basket_size", 1)

    def wide(baskets: Any) -> None:
        if m >= 2:
            check_basket_width(baskets, m, max_basket_size, f"k^m-anonymity with m={m}")

    b, tax, timings["encode"] = prepare_generalization(transactions, k, hierarchy, fanout, order,
                                                       check=wide)
    check_key_space(tax.n_nodes, m)
    t0 = time.perf_counter()
    occ_nodes = np.zeros(b.nnz, dtype=np.int64)
    info: dict[str, Any] = {"input": b.input_stats(), "taxonomy": tax.describe()}
    if k_one_warning(k):
        info["warnings"] = k_one_warning(k)
    if method == "apriori":
        gen, stats = apriori_cut(b, tax, k, m)
        occ_nodes = gen[b.codes]
        cut = gen
        info["apriori"] = {"rounds": stats["rounds"]}
    else:
        parts, stats = local_cuts(b, tax, k, m)
        rows_of_occ = b.rows
        part_of_row = np.empty(b.n, dtype=np.int64)
        for i, (rows, _g) in enumerate(parts):
            part_of_row[rows] = i
        gens = np.stack([g for _r, g in parts])
        occ_nodes = gens[part_of_row[rows_of_occ], b.codes]
        cut = gens[0] if len(parts) == 1 else None
        info["local"] = {key: stats[key] for key in ("parts", "splits_tried", "splits_accepted",
                                                      "refine_whole_data")}
        info["local"]["part_sizes"] = [int(r.size) for r, _g in parts]
    timings["anonymize"] = time.perf_counter() - t0
    published = publish_sets(b, tax, occ_nodes)
    if cut is not None:
        used = np.unique(cut[b.codes]) if b.nnz else np.zeros(0, np.int64)
        generalized = used[~tax.is_leaf[used]]
        info["generalization"] = {"generalized_nodes": int(generalized.size),
                       "items_published_as_themselves": int(tax.is_leaf[used].sum()),
                       "nodes": [str(tax.labels[g]) for g in generalized[:200].tolist()],
                       "depth_histogram": np.bincount(tax.depth[used],
                                                      minlength=tax.height + 1).tolist()}
    model = KmAnonymity(k, m)
    release = Release(
        data=published, datatype="transactions",
        verifier=make_verifier(check_km, k=k, m=m), models=[model],
        partition=group_partition(published),
        parameters={"algorithm": "apriori-anonymization" if method == "apriori" else "local-recoding",
                    "k": k, "m": m, "method": method, "fanout": fanout, "order": order,
                    "seed": seed, "taxonomy": tax.source},
        timings=timings, suppressed=0, n_individuals=b.n, info=info)
    return finish_generalization(release, b, published, tax, occ_nodes, k, m, seed, evaluate, key)
