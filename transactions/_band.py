"""Correlation-aware anonymization of high-dimensional data (CAHD, Ghinita et al. 2008).

The transactions x quasi-identifier items matrix is made banded by reverse Cuthill-McKee
on the item co-occurrence graph (columns) and by sorting transactions on the new positions
of their items (rows).  Each transaction holding sensitive items (in a secret random
order) is grouped with ``p - 1`` transactions drawn at random, with secret randomness, from
a window of the band around it, sharing no sensitive item with it or with one another;
neighbours in the band share quasi-identifier items, and a random draw (rather than the
most similar ones) keeps the group's seed indistinguishable from its members for anyone
who replays the grouping from the published data.  Everything left over forms a final
group, from which sensitive transactions are suppressed (and counted) only if that
group would otherwise break the 1/p bound.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from structanon import Partition
from structanon._finish import Timings, finish_release
from structanon._validation import check_int
from structanon.errors import InfeasibleError, InputError
from structanon.io import release_key

from . import metrics, risk
from ._common import (
    TransactionsRelease,
    check_basket_width,
    check_seed,
    resolve_measures,
    skipped_note,
)
from ._data import Baskets, encode_baskets
from ._verify import PrivacyDegree, make_verifier

__all__ = ["band_matrix", "band_order", "cahd_groups", "bandwidth"]

MAX_ALPHA = 10**6  # window factor; wider windows than the data change nothing


def bandwidth(matrix: sp.csr_matrix) -> int:
    coo = matrix.tocoo()
    if coo.nnz == 0:
        return 0
    return int(np.abs(coo.row - coo.col).max())


def _qi_matrix(b: Baskets, qi_mask: np.ndarray) -> sp.csr_matrix:
    keep = qi_mask[b.codes]
    rows = b.rows[keep]
    cols = b.codes[keep]
    return sp.csr_matrix(
        (np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=(b.n, int(b.domain.size))
    )


def band_order(b: Baskets, qi_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """Row order and column order making the QI matrix banded; with bandwidth statistics."""
    a = _qi_matrix(b, qi_mask)
    co = (a.T @ a).tocsr()
    if co.shape[0] == 0:
        col_order = np.zeros(0, dtype=np.int64)
    else:
        col_order = reverse_cuthill_mckee(co, symmetric_mode=True).astype(np.int64)
    col_pos = np.empty_like(col_order)
    col_pos[col_order] = np.arange(col_order.size)
    coo = a.tocoo()
    pos = col_pos[coo.col].astype(np.float64)
    n = b.n
    cnt = np.bincount(coo.row, minlength=n)
    first = np.full(n, np.inf)
    np.minimum.at(first, coo.row, pos)
    mean = np.bincount(coo.row, weights=pos, minlength=n) / np.maximum(cnt, 1)
    mean[cnt == 0] = np.inf
    row_order = np.lexsort((np.arange(n), mean, first))
    stats = {
        "rows": n,
        "qi_items": int(qi_mask.sum()),
        "cooccurrence_bandwidth_before": bandwidth(co),
        "cooccurrence_bandwidth_after": bandwidth(co[col_order][:, col_order]),
    }
    return row_order, col_order, stats


def _window_members(
    t: int,
    at: int,
    row_order: np.ndarray,
    group: np.ndarray,
    is_sens: np.ndarray,
    sens_sets: dict,
    p: int,
    base_width: int,
    rng: np.random.Generator,
) -> list[int]:
    """``p - 1`` free transactions drawn from a window of the band around ``t``.

    The window is placed at a random offset covering band position ``at``; members share no
    sensitive item with ``t`` or one another, non-sensitive ones first.  The window doubles
    until enough members are found or it covers the whole band.
    """
    n = row_order.size
    width = base_width
    while True:
        lo = at - int(rng.integers(0, width))
        lo_c, hi_c = max(0, lo), min(n, lo + width)
        cand = row_order[lo_c:hi_c]
        cand = cand[(group[cand] < 0) & (cand != t)]
        cand = rng.permutation(cand)
        cand = cand[np.argsort(is_sens[cand], kind="stable")]  # non-sensitive first
        used = set(sens_sets[t])
        chosen: list[int] = []
        for c in cand.tolist():
            s = sens_sets.get(c)
            if s:
                if not used.isdisjoint(s):
                    continue
                used |= s
            chosen.append(c)
            if len(chosen) == p - 1:
                break
        if len(chosen) == p - 1 or width >= 2 * n + 1:
            return chosen
        width = 2 * width + 1


def _last_group(group: np.ndarray, sens: sp.csr_matrix, p: int, n_groups: int) -> tuple[int, int]:
    """Put the leftovers in one last group, suppressing sensitive ones only as needed.

    Updates ``group`` in place (-2 marks a suppressed transaction); returns the number of
    groups and of suppressed transactions.
    """
    rest = np.flatnonzero(group < 0)
    if not rest.size:
        return n_groups, 0
    rest_sens = sens[rest].tocsc()
    counts = np.asarray(rest_sens.sum(axis=0)).reshape(-1).astype(np.int64)
    size = rest.size
    alive = np.ones(rest.size, dtype=bool)
    suppressed = 0
    while counts.size and counts.max() * p > size:
        worst = int(counts.argmax())
        holders = rest_sens.indices[rest_sens.indptr[worst] : rest_sens.indptr[worst + 1]]
        holders = np.sort(holders[alive[holders]])
        victim = int(holders[-1])
        alive[victim] = False
        counts[sens.indices[sens.indptr[rest[victim]] : sens.indptr[rest[victim] + 1]]] -= 1
        size -= 1
        suppressed += 1
    if size:
        group[rest[alive]] = n_groups
        n_groups += 1
    group[rest[~alive]] = -2
    return n_groups, suppressed


def cahd_groups(
    b: Baskets,
    sensitive_mask: np.ndarray,
    p: int,
    alpha: int = 3,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, dict]:
    """Group transactions (-1 = suppressed); returns labels and statistics.

    ``rng`` is the release's secret randomness (``release_key(key).rng("band-members",
    ...)``): it orders the sensitive transactions that seed groups, places each seed at a
    uniformly random offset inside its window of ``2 * alpha * p + 1`` band positions and
    draws the ``p - 1`` members uniformly among the window's free transactions (those
    without sensitive items first).  So inside a group the seed is exchangeable with its
    members: replaying the grouping from the published QI sets does not single it out.
    """
    if rng is None:
        rng = np.random.default_rng()
    qi_mask = ~sensitive_mask
    row_order, _col_order, stats = band_order(b, qi_mask)
    sens = sp.csr_matrix(
        (
            np.ones(int(sensitive_mask[b.codes].sum()), dtype=np.int8),
            (b.rows[sensitive_mask[b.codes]], b.codes[sensitive_mask[b.codes]]),
        ),
        shape=(b.n, int(b.domain.size)),
    )
    is_sens_rows = np.flatnonzero(np.diff(sens.indptr) > 0)
    sens_sets = {
        r: frozenset(sens.indices[sens.indptr[r] : sens.indptr[r + 1]].tolist())
        for r in is_sens_rows.tolist()
    }
    is_sens = np.diff(sens.indptr) > 0
    n = b.n
    group = np.full(n, -1, dtype=np.int64)
    position = np.empty(n, dtype=np.int64)
    position[row_order] = np.arange(n)
    base_width = 2 * alpha * p + 1
    n_groups = 0
    unplaced = 0
    for t in rng.permutation(is_sens_rows).tolist():
        if group[t] >= 0:
            continue
        chosen = _window_members(
            t, int(position[t]), row_order, group, is_sens, sens_sets, p, base_width, rng
        )
        if len(chosen) < p - 1:
            unplaced += 1
            continue
        group[t] = n_groups
        group[np.asarray(chosen, dtype=np.int64)] = n_groups
        n_groups += 1
    n_groups, suppressed = _last_group(group, sens, p, n_groups)
    stats.update(
        {
            "groups": n_groups,
            "sensitive_transactions": int(is_sens.sum()),
            "sensitive_not_grouped": unplaced,
            "suppressed": suppressed,
            "last_group_size": int((group == n_groups - 1).sum()) if n_groups else 0,
        }
    )
    group[group == -2] = -1
    return group, stats


def _sensitive_mask(b: Baskets, sensitive_items: Iterable[Any]) -> tuple[np.ndarray, set[str]]:
    """Which items of the domain are sensitive; every named item must occur."""
    wanted = {str(s) for s in sensitive_items}
    if not wanted:
        raise InputError("sensitive_items is empty")
    labels = [str(x) for x in b.domain.tolist()]
    absent = sorted(wanted - set(labels))
    if absent:
        shown = ", ".join(absent[:10]) + (
            f" (and {len(absent) - 10} more)" if len(absent) > 10 else ""
        )
        raise InputError(
            f"{len(absent)} sensitive item(s) do not occur in the data: {shown}; "
            "check their spelling (items are compared by their text)"
        )
    return np.array([x in wanted for x in labels], dtype=bool), wanted


def _check_feasible(
    b: Baskets, sensitive_mask: np.ndarray, p: int, max_basket_size: int | None
) -> None:
    """Refuse too-wide baskets and sensitive items no grouping can hide (in > n/p baskets)."""
    qi_len = np.bincount(b.rows[~sensitive_mask[b.codes]], minlength=b.n)
    check_basket_width(
        b, 2, max_basket_size, "the band ordering (item co-occurrence)", lengths=qi_len
    )
    freq = np.bincount(b.codes, minlength=b.domain.size)
    # freq * p > n, in integers that cannot overflow for any p
    too_common = np.flatnonzero(sensitive_mask & (freq > b.n // p))
    if too_common.size:
        s = b.domain[too_common[0]]
        raise InfeasibleError(
            f"sensitive item {s!r} is in {int(freq[too_common[0]])} of {b.n} "
            f"transactions, more than 1/p of them (p={p})"
        )


def _group_views(
    b: Baskets, sensitive_mask: np.ndarray, group: np.ndarray, p: int
) -> dict[str, Any]:
    """The release in input order: QI sets, groups and per-group sensitive counts."""
    n_groups = int(group.max()) + 1 if (group >= 0).any() else 0
    occ_s = sensitive_mask[b.codes]
    g_occ = group[b.rows[occ_s]]
    keep = g_occ >= 0
    pair = np.unique(
        g_occ[keep] * np.int64(b.domain.size) + b.codes[occ_s][keep], return_counts=True
    )
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
        items = b.codes[bounds[i] : bounds[i + 1]]
        qi.append(frozenset(dom[items[~sensitive_mask[items]]].tolist()))
    sens_list = sorted((b.domain[sensitive_mask]).tolist(), key=str)
    return {
        "qi": qi,
        "group": group,
        "sensitive_counts": summaries,
        "sensitive_items": sens_list,
        "p": p,
    }


def _published_view(
    in_order: dict[str, Any], rng: np.random.Generator
) -> tuple[dict[str, Any], np.ndarray]:
    """Secret transaction order and secret group ids; returns the data and the order."""
    group, summaries = in_order["group"], in_order["sensitive_counts"]
    n_groups = len(summaries)
    new_id = rng.permutation(n_groups).astype(np.int64)
    perm = rng.permutation(group.size).astype(np.int64)
    pub_group = np.where(group >= 0, new_id[np.maximum(group, 0)], -1)[perm]
    pub_summaries: list[dict] = [{} for _ in range(n_groups)]
    for g, summary in enumerate(summaries):
        pub_summaries[int(new_id[g])] = summary
    data = {
        "qi": [in_order["qi"][i] for i in perm.tolist()],
        "group": pub_group,
        "sensitive_counts": pub_summaries,
        "sensitive_items": in_order["sensitive_items"],
        "p": in_order["p"],
    }
    return data, perm


def _band_text(b: Baskets, sensitive_mask: np.ndarray, data: dict[str, Any], p: int) -> str:
    """The grouping in one plain sentence, for reports (``info["transformation_text"]``)."""
    group = np.asarray(data["group"])
    kept = group >= 0
    n_groups = len(data["sensitive_counts"])
    sizes = np.bincount(group[kept], minlength=n_groups) if kept.any() else np.zeros(0, int)
    smallest = int(sizes.min()) if sizes.size else 0
    n_sens = int(sensitive_mask.sum())
    return (
        f"Every item is published unchanged except the {n_sens:,} sensitive "
        f"item{'s' if n_sens != 1 else ''}, which appear only as counts per group: "
        f"{int(kept.sum()):,} transactions in {n_groups:,} groups of {smallest:,} to "
        f"{int(sizes.max()) if sizes.size else 0:,} transactions, so a sensitive item is "
        f"tied to a person with probability at most 1/{p}; {int((~kept).sum()):,} "
        "transactions are suppressed."
    )


def _band_measure(b: Baskets, in_order: dict[str, Any], seed: int | None):
    """The ``measure`` run after verification: count-query error and linkage risk."""

    def measure(release: TransactionsRelease) -> None:
        s = 0 if seed is None else seed
        release.utility = {
            "count_query_error": metrics.band_query_error(b, in_order, n_queries=200, seed=s),
            "suppressed_share": release.suppressed / max(b.n, 1),
        }
        release.risk = risk.band_linkage_risk(b, in_order, m=2, n_targets=200, seed=s)

    return measure


def band_matrix(
    transactions: Any,
    sensitive_items: Iterable[Any],
    p: int,
    seed: int | None = None,
    alpha: int = 3,
    evaluate: bool | None = None,
    *,
    key: Any = None,
    measures: bool = True,
    max_basket_size: int | None = None,
) -> TransactionsRelease:
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
        Deprecated name of ``measures`` (wins when given; emits a ``DeprecationWarning``).
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
    TransactionsRelease
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
    >>> rel = transactions.band_matrix(data, ["x", "y"], p=2, measures=False)
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
    sets cannot point at the holder of the sensitive item); so in every group
    :math:`c_g(s) / |g| \\le 1/p` for every sensitive item ``s``.  Leftovers form one last group; sensitive transactions are
    suppressed from it (and counted) only if it would break the bound.

    References
    ----------
    G. Ghinita, Y. Tao, P. Kalnis. On the anonymization of sparse high-dimensional data.
    ICDE 2008.
    """
    p = check_int(p, "p", min_value=2)
    alpha = check_int(alpha, "alpha", min_value=1, max_value=MAX_ALPHA)
    seed = check_seed(seed)
    measures = resolve_measures(measures, evaluate=evaluate)
    key = release_key(key)
    if isinstance(sensitive_items, (str, bytes)) or not isinstance(sensitive_items, Iterable):
        raise InputError(
            "sensitive_items must be a collection of items", value=repr(sensitive_items)[:60]
        )
    timings = Timings()
    with timings("encode"):
        b = encode_baskets(transactions)
        sensitive_mask, wanted = _sensitive_mask(b, sensitive_items)
        _check_feasible(b, sensitive_mask, p, max_basket_size)
    context = (seed, p, alpha, repr(sorted(wanted)))
    with timings("anonymize"):
        group, stats = cahd_groups(b, sensitive_mask, p, alpha, key.rng("band-members", *context))
    # input-order view for the measures (they compare with the input position by position)
    in_order = _group_views(b, sensitive_mask, group, p)
    data, perm = _published_view(in_order, key.rng("transaction-order", *context))
    model = PrivacyDegree(p)
    release = TransactionsRelease(
        data=data,
        datatype="transactions",
        verifier=make_verifier(model),
        models=[model],
        partition=Partition(data["group"]),
        parameters={
            "algorithm": "band-matrix (CAHD)",
            "p": p,
            "alpha": alpha,
            "seed": seed,
            "sensitive_items": len(wanted),
        },
        suppressed=int((group < 0).sum()),
        n_individuals=b.n,
        info={
            "input": b.input_stats(),
            "band": stats,
            "transformation_text": _band_text(b, sensitive_mask, data, p),
        },
        source_index=perm,
    )
    if not measures:
        skipped_note(release)
    finish_release(release, _band_measure(b, in_order, seed), measures=measures, timings=timings)
    return release
