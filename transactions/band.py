"""Band-matrix anonymization of transactions with sensitive items (CAHD)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from structanon import Partition, Release
from structanon.errors import InfeasibleError, InputError

from . import metrics, risk
from ._band import cahd_groups
from ._common import check_int, check_seed
from ._data import encode_baskets
from ._verify import PrivacyDegree, check_band, make_verifier

__all__ = ["band_matrix"]


def band_matrix(transactions: Any, sensitive_items: Iterable[Any], p: int,
                seed: int | None = None, alpha: int = 3, evaluate: bool = True) -> Release:
    """Group transactions so no sensitive item is tied to a person with probability > 1/p.

    Items are split into quasi-identifying (QI, published exactly) and sensitive ones
    (published only as per-group counts).

    Parameters
    ----------
    transactions : iterable of sets, or pandas Series of sets
    sensitive_items : iterable
        The sensitive items; items absent from the data are reported in ``info``.
    p : int
        Privacy degree (>= 2).
    seed : int, optional
        Seed of the evaluation's random queries; the grouping is deterministic.
    alpha : int
        Candidate window: ``alpha * p`` transactions each side in band order (>= 1).
    evaluate : bool
        Compute utility and risk (default True).

    Returns
    -------
    Release
        ``data`` is a dict: ``"qi"`` (one frozenset of QI items per input transaction, in
        input order, ``None`` if suppressed), ``"group"`` (group of each transaction, -1 if
        suppressed), ``"sensitive_counts"`` (per group, a dict sensitive item -> count),
        ``"sensitive_items"`` and ``"p"``.

    Raises
    ------
    InputError
        Bad parameters or transactions.
    InfeasibleError
        A sensitive item occurs in more than ``n / p`` transactions: no grouping can
        satisfy the bound.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "x"}, {"a"}, {"b"}, {"b", "y"}]
    >>> rel = transactions.band_matrix(data, ["x", "y"], p=2, evaluate=False)
    >>> rel.verify().passed, rel.data["sensitive_counts"][rel.data["group"][0]]
    (True, {'x': 1})

    Notes
    -----
    The QI matrix is permuted by reverse Cuthill-McKee on the item co-occurrence graph
    :math:`A^T A` (columns) and rows are sorted by the position of their first and mean
    item, so similar transactions become neighbours.  Each sensitive transaction is
    grouped with the ``p - 1`` neighbours (within the window) sharing the most QI items
    and no sensitive item; so in every group :math:`c_g(s) / |g| \\le 1/p` for every
    sensitive item ``s``.  Leftovers form one last group; sensitive transactions are
    suppressed from it (and counted) only if it would break the bound.

    References
    ----------
    G. Ghinita, Y. Tao, P. Kalnis. On the anonymization of sparse high-dimensional data.
    ICDE 2008.
    """
    p = check_int(p, "p", 2)
    alpha = check_int(alpha, "alpha", 1)
    seed = check_seed(seed)
    if isinstance(sensitive_items, (str, bytes)) or not isinstance(sensitive_items, Iterable):
        raise InputError("sensitive_items must be a collection of items", value=sensitive_items)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    b = encode_baskets(transactions)
    wanted = {str(s) for s in sensitive_items}
    if not wanted:
        raise InputError("sensitive_items is empty")
    labels = [str(x) for x in b.domain.tolist()]
    sensitive_mask = np.array([x in wanted for x in labels], dtype=bool)
    absent = sorted(wanted - set(labels))
    freq = np.bincount(b.codes, minlength=b.domain.size)
    too_common = np.flatnonzero(sensitive_mask & (freq * p > b.n))
    if too_common.size:
        s = b.domain[too_common[0]]
        raise InfeasibleError(f"sensitive item {s!r} is in {int(freq[too_common[0]])} of {b.n} "
                              f"transactions, more than 1/p of them (p={p})")
    timings["encode"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    group, stats = cahd_groups(b, sensitive_mask, p, alpha)
    timings["anonymize"] = time.perf_counter() - t0
    n_groups = int(group.max()) + 1 if (group >= 0).any() else 0
    occ_s = sensitive_mask[b.codes]
    g_occ = group[b.rows[occ_s]]
    keep = g_occ >= 0
    pair = np.unique(g_occ[keep] * np.int64(b.domain.size) + b.codes[occ_s][keep],
                     return_counts=True)
    summaries: list[dict] = [{} for _ in range(n_groups)]
    for key, c in zip(pair[0].tolist(), pair[1].tolist()):
        summaries[key // b.domain.size][b.domain[key % b.domain.size]] = int(c)
    qi_codes = b.codes.copy()
    bounds = b.indptr.tolist()
    dom = b.domain
    qi: list[frozenset | None] = []
    for i in range(b.n):
        if group[i] < 0:
            qi.append(None)
            continue
        items = qi_codes[bounds[i]:bounds[i + 1]]
        qi.append(frozenset(dom[items[~sensitive_mask[items]]].tolist()))
    data = {"qi": qi, "group": group, "sensitive_counts": summaries,
            "sensitive_items": sorted((b.domain[sensitive_mask]).tolist(), key=str), "p": p}
    n_sup = int((group < 0).sum())
    release = Release(
        data=data, datatype="transactions", verifier=make_verifier(check_band, p=p),
        models=[PrivacyDegree(p)], partition=Partition(group),
        parameters={"algorithm": "band-matrix (CAHD)", "p": p, "alpha": alpha, "seed": seed,
                    "sensitive_items": len(wanted)},
        timings=timings, suppressed=n_sup, n_individuals=b.n,
        info={"input": b.input_stats(), "band": stats, "sensitive_items_absent": absent})
    t0 = time.perf_counter()
    release.verify(strict=True)
    timings["verify"] = time.perf_counter() - t0
    if evaluate:
        t0 = time.perf_counter()
        s = 0 if seed is None else seed
        release.utility = {
            "count_query_error": metrics.band_query_error(b, data, n_queries=200, seed=s),
            "suppressed_share": n_sup / max(b.n, 1),
        }
        release.risk = risk.band_linkage_risk(b, data, m=2, n_targets=200, seed=s)
        timings["evaluate"] = time.perf_counter() - t0
    return release
