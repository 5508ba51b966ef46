"""Correlation-aware anonymization of high-dimensional data (CAHD, Ghinita et al. 2008).

The transactions x quasi-identifier items matrix is made banded by reverse Cuthill-McKee
on the item co-occurrence graph (columns) and by sorting transactions on the new positions
of their items (rows).  Each transaction holding sensitive items (in a secret random
order) is grouped with ``p - 1`` transactions drawn at random, with secret randomness, from
a window around it of the transactions that look like it (its *look class*: the same
number of QI items, an empty QI set apart from every other), ordered by the support of
their rarest QI item and then by band position, sharing no sensitive item with it or with
one another.  Neighbours in the band share
quasi-identifier items; a random draw among look-alikes (rather than the most similar
transactions, or any transactions) keeps the group's seed indistinguishable from its
members, both for anyone who replays the grouping and for anyone who compares what the
release shows of each member (emptiness and size of its QI set, its rarest item, its
band position).
Everything left over forms a final group, from which sensitive transactions are
suppressed (and counted) only as needed for the 1/p bound to hold inside each look class
of that group: so a sensitive transaction with an empty QI set that cannot be grouped with
look-alikes is suppressed rather than published as a recognizable holder."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from structanon import Partition
from structanon._finish import Timings, finish_release
from structanon._validation import check_int, first_few
from structanon.errors import InfeasibleError, InputError, PublisherWarning
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

__all__ = ["band_matrix", "band_order", "cahd_groups", "bandwidth", "look_classes"]

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


def look_classes(qi_len: np.ndarray, is_sens: np.ndarray, p: int, min_size: int) -> np.ndarray:
    """Class of every transaction by what an attacker sees of it: its number of QI items.

    Transactions with an empty QI set form a class of their own.  Every other QI-set size
    is a class if it holds at least ``min_size`` transactions and ``p`` non-sensitive ones
    per sensitive one; thinner sizes are merged with the next larger ones until the class
    is that large (the largest sizes join the class below them if they never are).
    """
    hist = np.bincount(qi_len, minlength=1)
    hist_sens = np.bincount(qi_len[is_sens], minlength=hist.size)
    class_of_size = np.zeros(hist.size, dtype=np.int64)
    current, total, sens, closed = 1, 0, 0, 0
    for size in np.flatnonzero(hist[1:]).tolist():
        size += 1
        class_of_size[size] = current
        total += int(hist[size])
        sens += int(hist_sens[size])
        if total >= min_size and total - sens >= p * sens:
            closed, current, total, sens = current, current + 1, 0, 0
    if total and closed:  # the largest sizes never made a class: join the one below
        class_of_size[class_of_size == current] = closed
    return class_of_size[qi_len]


def rarest_support(b: Baskets, qi_mask: np.ndarray) -> np.ndarray:
    """Support of each transaction's rarest QI item (0 for an empty QI set)."""
    qi_occ = qi_mask[b.codes]
    support = np.bincount(b.codes[qi_occ], minlength=b.domain.size)
    big = np.iinfo(np.int64).max
    values = np.where(qi_occ, support[b.codes], big)
    rarest = np.full(b.n, big, dtype=np.int64)
    filled = np.diff(b.indptr) > 0
    if values.size:
        rarest[filled] = np.minimum.reduceat(values, b.indptr[:-1][filled])
    rarest[rarest == big] = 0
    return rarest


def _look_order(
    row_order: np.ndarray, qi_len: np.ndarray, rarest: np.ndarray, classes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Transactions by look: class, QI-set size, support of the rarest QI item, then band
    position; with each one's class bounds."""
    n = row_order.size
    position = np.empty(n, dtype=np.int64)
    position[row_order] = np.arange(n)
    order = np.lexsort((position, rarest, qi_len, classes))
    sorted_cls = classes[order]
    starts = np.searchsorted(sorted_cls, classes, side="left")
    ends = np.searchsorted(sorted_cls, classes, side="right")
    return order, starts, ends


@dataclass
class _Pool:
    """What the grouping draws members from: transactions in look order and their state."""

    order: np.ndarray  # transactions by look class, QI-set size, band position
    group: np.ndarray  # group of each transaction, -1 while free
    is_sens: np.ndarray  # holds a sensitive item
    sens_sets: dict[int, frozenset]  # the sensitive items of each holder
    n_sens_items: int
    p: int
    base_width: int


def _window_members(
    t: int, at: int, bounds: tuple[int, int], pool: _Pool, rng: np.random.Generator
) -> list[int]:
    """``p - 1`` free transactions drawn from a window of ``t``'s look class around it.

    ``at`` is ``t``'s place in ``pool.order`` and ``bounds`` its class's slice.  The window
    is placed at a uniformly random offset covering ``at`` and clipped to the class, so the
    chance that two transactions end in one group is symmetric in them: the seed is
    exchangeable with its members.  Members are drawn uniformly among the window's free
    transactions, with or without sensitive items alike (preferring those without would
    make the seed stand out wherever holders are common), sharing no sensitive item with
    ``t`` or one another.  The window doubles until enough members are found
    or it covers the class.
    """
    start, end = bounds
    wanted = pool.p - 1
    width = pool.base_width
    while True:
        lo = at - int(rng.integers(0, width))
        cand = pool.order[max(start, lo) : min(end, lo + width)]
        cand = rng.permutation(cand[(pool.group[cand] < 0) & (cand != t)])
        chosen = _disjoint_members(t, cand, pool, wanted)
        if len(chosen) == wanted or width >= 2 * (end - start) + 1:
            return chosen
        width = 2 * width + 1


def _disjoint_members(t: int, cand: np.ndarray, pool: _Pool, wanted: int) -> list[int]:
    """The first ``wanted`` of ``cand`` sharing no sensitive item with ``t`` or one another."""
    used = set(pool.sens_sets[t])
    chosen: list[int] = []
    for i, c in enumerate(cand.tolist()):
        if len(used) == pool.n_sens_items:  # only transactions without any may follow
            rest = cand[i:]
            return chosen + rest[~pool.is_sens[rest]][: wanted - len(chosen)].tolist()
        s = pool.sens_sets.get(c)
        if s is None or used.isdisjoint(s):
            if s is not None:
                used |= s
            chosen.append(c)
            if len(chosen) == wanted:
                break
    return chosen


def _suppress_over_bound(rows: np.ndarray, sens: sp.csr_matrix, p: int) -> np.ndarray:
    """Which of ``rows`` stay so that no sensitive item is in more than 1/p of them."""
    rest_sens = sens[rows].tocsc()
    counts = np.asarray(rest_sens.sum(axis=0)).reshape(-1).astype(np.int64)
    size = rows.size
    alive = np.ones(rows.size, dtype=bool)
    while counts.size and counts.max() * p > size:
        worst = int(counts.argmax())
        holders = rest_sens.indices[rest_sens.indptr[worst] : rest_sens.indptr[worst + 1]]
        victim = int(np.sort(holders[alive[holders]])[-1])
        alive[victim] = False
        counts[sens.indices[sens.indptr[rows[victim]] : sens.indptr[rows[victim] + 1]]] -= 1
        size -= 1
    return alive


def _last_group(
    group: np.ndarray, sens: sp.csr_matrix, p: int, n_groups: int, classes: np.ndarray
) -> tuple[int, int]:
    """Put the leftovers in one last group, suppressing sensitive ones only as needed.

    The 1/p bound is kept inside every look class of the group (so, e.g., sensitive
    transactions with an empty QI set are not left as the group's only empty ones).
    Updates ``group`` in place (-2 marks a suppressed transaction); returns the number of
    groups and of suppressed transactions.
    """
    rest = np.flatnonzero(group < 0)
    if not rest.size:
        return n_groups, 0
    alive = np.ones(rest.size, dtype=bool)
    held = np.diff(sens.indptr)[rest] > 0
    for c in np.unique(classes[rest][held]).tolist():
        inside = np.flatnonzero(classes[rest] == c)
        alive[inside] = _suppress_over_bound(rest[inside], sens, p)
    if alive.any():
        group[rest[alive]] = n_groups
        n_groups += 1
    group[rest[~alive]] = -2
    return n_groups, int((~alive).sum())


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
    uniformly random offset inside its window of ``2 * alpha * p + 1`` positions and draws
    the ``p - 1`` members uniformly among the window's free transactions.  Windows run over
    the seed's look class (:func:`look_classes`: same emptiness and size of the QI set),
    ordered by the support of the rarest QI item and then by band position inside a size,
    so members look like the seed and lie near it in the band.
    Inside a group the seed is exchangeable with its members: neither replaying the
    grouping nor comparing what the attacker sees of each member (QI-set size, rarest
    item, band position) singles it out.
    """
    if rng is None:
        rng = np.random.default_rng()
    qi_mask = ~sensitive_mask
    row_order, _col_order, stats = band_order(b, qi_mask)
    occ_s = sensitive_mask[b.codes]
    sens = sp.csr_matrix(
        (np.ones(int(occ_s.sum()), dtype=np.int8), (b.rows[occ_s], b.codes[occ_s])),
        shape=(b.n, int(b.domain.size)),
    )
    is_sens = np.diff(sens.indptr) > 0
    is_sens_rows = np.flatnonzero(is_sens)
    sens_sets = {
        r: frozenset(sens.indices[sens.indptr[r] : sens.indptr[r + 1]].tolist())
        for r in is_sens_rows.tolist()
    }
    n = b.n
    base_width = 2 * alpha * p + 1
    qi_len = np.bincount(b.rows[~occ_s], minlength=n)
    classes = look_classes(qi_len, is_sens, p, base_width)
    order, starts, ends = _look_order(row_order, qi_len, rarest_support(b, qi_mask), classes)
    place = np.empty(n, dtype=np.int64)
    place[order] = np.arange(n)
    group = np.full(n, -1, dtype=np.int64)
    pool = _Pool(order, group, is_sens, sens_sets, int(sensitive_mask.sum()), p, base_width)
    n_groups = 0
    unplaced = 0
    for t in rng.permutation(is_sens_rows).tolist():
        if group[t] >= 0:
            continue
        bounds = (int(starts[t]), int(ends[t]))
        chosen = _window_members(t, int(place[t]), bounds, pool, rng)
        if len(chosen) < p - 1:
            unplaced += 1
            continue
        group[t] = n_groups
        group[np.asarray(chosen, dtype=np.int64)] = n_groups
        n_groups += 1
    n_groups, suppressed = _last_group(group, sens, p, n_groups, classes)
    stats.update(
        {
            "look_classes": int(np.unique(classes).size),
            "groups": n_groups,
            "sensitive_transactions": int(is_sens.sum()),
            "sensitive_not_grouped": unplaced,
            "suppressed": suppressed,
            "last_group_size": int((group == n_groups - 1).sum()) if n_groups else 0,
        }
    )
    group[group == -2] = -1
    return group, stats


def _sensitive_mask(
    b: Baskets, sensitive_items: Iterable[Any]
) -> tuple[np.ndarray, set[str], list[Any]]:
    """Which items of the domain are sensitive, the texts named, and the list to publish.

    A named item the data does not hold is accepted with a
    :class:`~structanon.errors.PublisherWarning` (for the publisher's eyes: the CLI prints
    it on stderr, no report or ``to_dict()`` copies it), so that the published list, the
    publisher's own (sorted by text, one entry per text), says nothing about which of its
    items the input holds, or holds only in suppressed transactions."""
    given: dict[str, Any] = {}
    for s in sensitive_items:
        if isinstance(s, bool) or not isinstance(s, (numbers.Integral, str)):
            raise InputError("sensitive items must be integers or strings", value=repr(s)[:60])
        given.setdefault(str(s), s if isinstance(s, str) else int(s))  # published as given
    if not given:
        raise InputError("sensitive_items is empty")
    labels = [str(x) for x in b.domain.tolist()]
    absent = sorted(given.keys() - set(labels))
    if absent:
        shown = first_few(absent)
        warnings.warn(
            f"{len(absent)} sensitive item(s) do not occur in the data: {shown}; check "
            "their spelling (items are compared by their text); they are listed in "
            "sensitive_items all the same",
            PublisherWarning,
            stacklevel=3,
        )
    integer = b.domain.size > 0 and isinstance(b.domain[0], int)  # ints or strings, not mixed
    published = [
        int(text) if integer and isinstance(item, str) and _canonical_int(text) else item
        for text, item in sorted(given.items())
    ]
    wanted = set(given)
    return np.array([x in wanted for x in labels], dtype=bool), wanted, published


def _canonical_int(text: str) -> bool:
    """``text`` is an integer written as Python writes it (``"32"``, ``"-4"``; not ``"032"``)."""
    try:
        return str(int(text)) == text
    except ValueError:
        return False


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
    b: Baskets, sensitive_mask: np.ndarray, group: np.ndarray, p: int, sensitive: list[Any]
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
    return {
        "qi": qi,
        "group": group,
        "sensitive_counts": summaries,
        "sensitive_items": list(sensitive),
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


def _band_text(data: dict[str, Any], p: int) -> str:
    """The grouping in one plain sentence, for reports (``info["transformation_text"]``)."""
    group = np.asarray(data["group"])
    kept = group >= 0
    n_groups = len(data["sensitive_counts"])
    sizes = np.bincount(group[kept], minlength=n_groups) if kept.any() else np.zeros(0, int)
    smallest = int(sizes.min()) if sizes.size else 0
    n_sens = len(data["sensitive_items"])  # the items named, not those the data holds
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
    seed: int | None = 0,
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
        The sensitive items, compared with the data's by their text.  An item the data
        does not hold is accepted with a :class:`~structanon.PublisherWarning`: the published
        ``"sensitive_items"`` is this list (sorted by text, one entry per text; a text
        written as an integer is published as one when the data's items are integers),
        whatever the data holds, so it proves no item's presence.
    p : int
        Privacy degree (>= 2).
    seed : int, default 0
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
        Bad parameters or transactions; no sensitive item named.
    InfeasibleError
        A sensitive item occurs in more than ``n / p`` transactions: no grouping can
        satisfy the bound.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "x"}, {"a"}, {"b"}, {"b", "y"}]
    >>> rel = transactions.band_matrix(data, ["x", "y"], p=2, measures=False)
    >>> j = list(rel.source_index).index(0)  # where input transaction 0 was published
    >>> rel.verify().passed, rel.data["sensitive_counts"][rel.data["group"][j]]["x"]
    (True, 1)

    Notes
    -----
    The QI matrix is permuted by reverse Cuthill-McKee on the item co-occurrence graph
    :math:`A^T A` (columns) and rows are sorted by the position of their first and mean
    item, so similar transactions become neighbours.  Each sensitive transaction (in a
    secret random order) is grouped with ``p - 1`` transactions drawn with the secret key
    from a window placed at a random offset around it among the transactions that look
    like it (as many QI items, an empty QI set only with empty ones; ordered by the support
    of the rarest QI item, then by band position), sharing no sensitive item.  The paper takes the most similar transactions; drawing at random
    among look-alikes keeps the seed of a group exchangeable with its members, so neither
    replaying the grouping nor guessing "the member whose QI set looks unlike the others"
    points at the holder of the sensitive item.  In every group
    :math:`c_g(s) / |g| \\le 1/p` for every sensitive item ``s``.  Leftovers form one last
    group; sensitive transactions are suppressed from it (and counted) only as needed for
    the bound to hold inside each look class of that group.

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
        sensitive_mask, wanted, published = _sensitive_mask(b, sensitive_items)
        _check_feasible(b, sensitive_mask, p, max_basket_size)
    key = key.bound(b.indptr, b.codes, b.domain)  # streams bound to the input
    context = (seed, p, alpha, repr(sorted(wanted)))
    with timings("anonymize"):
        group, stats = cahd_groups(b, sensitive_mask, p, alpha, key.rng("band-members", *context))
    # input-order view for the measures (they compare with the input position by position)
    in_order = _group_views(b, sensitive_mask, group, p, published)
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
            "transformation_text": _band_text(data, p),
        },
        source_index=perm,
    )
    if not measures:
        skipped_note(release)
    finish_release(release, _band_measure(b, in_order, seed), measures=measures, timings=timings)
    return release
