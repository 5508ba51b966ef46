"""Band-matrix anonymization of transactions with sensitive items (CAHD)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from structanon import Partition, Release
from structanon.errors import InfeasibleError, InputError
from structanon.io import release_key

from . import metrics, risk
from ._band import cahd_groups
from ._common import check_basket_width, check_int, check_seed, resolve_measures
from ._data import encode_baskets
from ._verify import PrivacyDegree, check_band, make_verifier

__all__ = ["band_matrix"]

MAX_ALPHA = 10**6  # window factor; wider windows than the data change nothing


def band_matrix(transactions: Any, sensitive_items: Iterable[Any], p: int,
                seed: int | None = None, alpha: int = 3, evaluate: bool | None = None, *,
                key: Any = None, measures: bool = True,
                max_basket_size: int | None = None) -> Release:
    """Group transactions so no sensitive item is tied to a person with probability > 1/p.

    Items are split into quasi-identifying (QI, published exactly) and sensitive ones
    (published only as per-group counts).

    Parameters
    ----------
    transactions : iterable of sets, or pandas Series of sets
    sensitive_items : iterable
        The sensitive items; each must occur in the data (compared by their text).
    p : int
        Privacy degree (>= 2).
    seed : int, optional
        Public seed of the measures' random queries.  It never decides the grouping's
        random choices, the published order or the group ids.
    alpha : int
        Candidate window: ``2 * alpha * p + 1`` transactions in band order (>= 1).
    evaluate : bool, optional
        Older name of ``measures`` (wins when given).
    key : Pseudonymizer, bytes, key-file path or None
        Secret release key (:func:`structanon.io.release_key`): the choice of group members,
        the published order and the group ids are drawn from it.  ``None``:
        ``$STRUCTANON_PSEUDONYM_KEY`` if set, else a fresh random key.
    measures : bool
        Compute utility and risk (default True).
    max_basket_size : int, optional
        Widest transaction accepted (QI items); the band ordering builds the item
        co-occurrence matrix, whose size grows with the square of a transaction's width,
        so by default a transaction with more than 4,472 QI items is refused.

    Returns
    -------
    Release
        ``data`` is a dict: ``"qi"`` (one frozenset of QI items per transaction, in a
        secret shuffled order, ``None`` if suppressed), ``"group"`` (group of each published
        transaction, -1 if suppressed; ids are a secret permutation),
        ``"sensitive_counts"`` (per group, a dict sensitive item -> count),
        ``"sensitive_items"`` and ``"p"``.  ``release.source_index[j]`` is the input
        position of published transaction ``j`` (Python only, never written).

    Raises
    ------
    InputError
        Bad parameters or transactions; sensitive items absent from the data (named).
    InfeasibleError
        A sensitive item occurs in more than ``n / p`` transactions: no grouping can
        satisfy the bound.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "x"}, {"a"}, {"b"}, {"b", "y"}]
    >>> rel = transactions.band_matrix(data, ["x", "y"], p=2, evaluate=False)
    >>> j = list(rel.source_index).index(0)  # where input transaction 0 was published
    >>> rel.verify().passed, rel.data["sensitive_counts"][rel.data["group"][j]]
    (True, {'x': 1})

    Notes
    -----
    The QI matrix is permuted by reverse Cuthill-McKee on the item co-occurrence graph
    :math:`A^T A` (columns) and rows are sorted by the position of their first and mean
    item, so similar transactions become neighbours.  Each sensitive transaction (in a
    secret random order) is grouped with ``p - 1`` transactions drawn with the secret key
    from a window of the band placed at a random offset around it, sharing no sensitive
    item (the paper takes the most similar ones; drawing at random keeps the seed of a
    group exchangeable with its members, so replaying the grouping from the published QI
    sets cannot point at the holder of the sensitive item); so in every group :math:`c_g(s) / |g| \\le 1/p` for every
    sensitive item ``s``.  Leftovers form one last group; sensitive transactions are
    suppressed from it (and counted) only if it would break the bound.

    References
    ----------
    G. Ghinita, Y. Tao, P. Kalnis. On the anonymization of sparse high-dimensional data.
    ICDE 2008.
    """
    p = check_int(p, "p", 2)
    alpha = check_int(alpha, "alpha", 1, MAX_ALPHA)
    seed = check_seed(seed)
    evaluate = resolve_measures(measures, evaluate)
    key = release_key(key)
    if isinstance(sensitive_items, (str, bytes)) or not isinstance(sensitive_items, Iterable):
        raise InputError("sensitive_items must be a collection of items",
                         value=repr(sensitive_items)[:60])
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    b = encode_baskets(transactions)
    wanted = {str(s) for s in sensitive_items}
    if not wanted:
        raise InputError("sensitive_items is empty")
    labels = [str(x) for x in b.domain.tolist()]
    sensitive_mask = np.array([x in wanted for x in labels], dtype=bool)
    absent = sorted(wanted - set(labels))
    if absent:
        shown = ", ".join(absent[:10]) + (f" (and {len(absent) - 10} more)" if len(absent) > 10
                                          else "")
        raise InputError(f"{len(absent)} sensitive item(s) do not occur in the data: {shown}; "
                         "check their spelling (items are compared by their text)")
    qi_len = np.bincount(b.rows[~sensitive_mask[b.codes]], minlength=b.n)
    check_basket_width(b, 2, max_basket_size, "the band ordering (item co-occurrence)",
                       lengths=qi_len)
    freq = np.bincount(b.codes, minlength=b.domain.size)
    # freq * p > n, in integers that cannot overflow for any p
    too_common = np.flatnonzero(sensitive_mask & (freq > b.n // p))
    if too_common.size:
        s = b.domain[too_common[0]]
        raise InfeasibleError(f"sensitive item {s!r} is in {int(freq[too_common[0]])} of {b.n} "
                              f"transactions, more than 1/p of them (p={p})")
    timings["encode"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    context = (seed, p, alpha, repr(sorted(wanted)))
    group, stats = cahd_groups(b, sensitive_mask, p, alpha, key.rng("band-members", *context))
    timings["anonymize"] = time.perf_counter() - t0
    n_groups = int(group.max()) + 1 if (group >= 0).any() else 0
    occ_s = sensitive_mask[b.codes]
    g_occ = group[b.rows[occ_s]]
    keep = g_occ >= 0
    pair = np.unique(g_occ[keep] * np.int64(b.domain.size) + b.codes[occ_s][keep],
                     return_counts=True)
    summaries: list[dict] = [{} for _ in range(n_groups)]
    for code, c in zip(pair[0].tolist(), pair[1].tolist()):
        summaries[code // b.domain.size][b.domain[code % b.domain.size]] = int(c)
    bounds = b.indptr.tolist()
    dom = b.domain
    qi: list[frozenset | None] = []
    for i in range(b.n):
        if group[i] < 0:
            qi.append(None)
            continue
        items = b.codes[bounds[i]:bounds[i + 1]]
        qi.append(frozenset(dom[items[~sensitive_mask[items]]].tolist()))
    sens_list = sorted((b.domain[sensitive_mask]).tolist(), key=str)
    # input-order view for the measures (they compare with the input position by position)
    data_in_order = {"qi": qi, "group": group, "sensitive_counts": summaries,
                     "sensitive_items": sens_list, "p": p}
    # published view: secret transaction order, secret group ids
    pub_rng = key.rng("transaction-order", *context)
    new_id = pub_rng.permutation(n_groups).astype(np.int64)
    perm = pub_rng.permutation(b.n).astype(np.int64)
    pub_group = np.where(group >= 0, new_id[np.maximum(group, 0)], -1)[perm]
    pub_summaries: list[dict] = [{} for _ in range(n_groups)]
    for g, summary in enumerate(summaries):
        pub_summaries[int(new_id[g])] = summary
    data = {"qi": [qi[i] for i in perm.tolist()], "group": pub_group,
            "sensitive_counts": pub_summaries, "sensitive_items": sens_list, "p": p}
    n_sup = int((group < 0).sum())
    info: dict[str, Any] = {"input": b.input_stats(), "band": stats}
    release = Release(
        data=data, datatype="transactions", verifier=make_verifier(check_band, p=p),
        models=[PrivacyDegree(p)], partition=Partition(pub_group),
        parameters={"algorithm": "band-matrix (CAHD)", "p": p, "alpha": alpha, "seed": seed,
                    "sensitive_items": len(wanted)},
        timings=timings, suppressed=n_sup, n_individuals=b.n, info=info,
        source_index=perm)
    t0 = time.perf_counter()
    release.verify(strict=True)
    timings["verify"] = time.perf_counter() - t0
    if evaluate:
        t0 = time.perf_counter()
        s = 0 if seed is None else seed
        release.utility = {
            "count_query_error": metrics.band_query_error(b, data_in_order, n_queries=200,
                                                          seed=s),
            "suppressed_share": n_sup / max(b.n, 1),
        }
        release.risk = risk.band_linkage_risk(b, data_in_order, m=2, n_targets=200, seed=s)
        timings["evaluate"] = time.perf_counter() - t0
    else:
        info["notes"] = ["measures skipped (measures=False / --no-measures)"]
    return release
