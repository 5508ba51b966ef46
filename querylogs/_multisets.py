"""Per-cluster published multisets: median targets, event selection, exact accounting."""

from __future__ import annotations

import numpy as np

__all__ = ["group_targets", "select_events", "accounting", "accounting_counts"]


def group_targets(
    labels: np.ndarray,
    ev_user: np.ndarray,
    ev_query: np.ndarray,
    n_queries: int,
    tie_break: str,
    weights: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Per (group, item): the published count ``m``, a median of the members' counts.

    ``ev_user`` and ``ev_query`` give one entry per event, or, with ``weights``, one per
    (user, item) pair seen ``weights`` times.

    Notes
    -----
    For the ``s`` members of a group with counts ``n_1 <= ... <= n_s`` of an item (zeros
    included), ``m = n_{floor((s-1)/2)+1}`` (lower median, ``tie_break="suppress"``) or
    ``n_{floor(s/2)+1}`` (upper median, ``"add"``); any value between them minimizes
    ``sum_u |n_u - m|``.  Only non-zero counts are stored, so the position of the median
    is shifted by the number of members with a zero count.

    Examples
    --------
    >>> t = group_targets(np.array([0, 0, 0]), np.array([0, 0, 1, 2, 2, 2]),
    ...                   np.array([0, 0, 0, 0, 0, 1]), 2, "suppress")
    >>> t["query"].tolist(), t["target"].tolist()
    ([0, 1], [2, 0])
    """
    sizes = np.bincount(labels)
    uniq_pair, counts = _pair_counts(ev_user, ev_query, n_queries, weights)
    e_query = uniq_pair % n_queries
    e_group = labels[uniq_pair // n_queries]
    order = np.lexsort((counts, e_query, e_group))
    e_query, e_group, counts = e_query[order], e_group[order], counts[order]
    block_key = e_group * n_queries + e_query
    if block_key.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return {"group": empty, "query": empty, "target": empty}
    starts = np.flatnonzero(np.r_[True, block_key[1:] != block_key[:-1]])
    nonzero = np.diff(np.r_[starts, block_key.size])
    b_group, b_query = e_group[starts], e_query[starts]
    size = sizes[b_group]
    zeros = size - nonzero
    position = (size - 1) // 2 if tie_break == "suppress" else size // 2
    inside = position >= zeros
    target = np.zeros(starts.size, dtype=np.int64)
    target[inside] = counts[starts[inside] + (position[inside] - zeros[inside])]
    return {"group": b_group, "query": b_query, "target": target}


def _pair_counts(
    user: np.ndarray, item: np.ndarray, n_items: int, weights: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted ``user * n_items + item`` keys and how many events each has."""
    pair = np.asarray(user, dtype=np.int64) * n_items + item
    if weights is None:
        return np.unique(pair, return_counts=True)
    keys, inverse = np.unique(pair, return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=weights, minlength=keys.size)
    return keys, counts.astype(np.int64)


def select_events(
    events: dict,
    item: np.ndarray,
    labels: np.ndarray,
    blocks: dict,
    n_items: int,
    preference: np.ndarray,
    rng: np.random.Generator,
):
    """For each (group, item) with target m > 0, pick m of the group's events of that item,
    those with the highest ``preference`` first (random among equals).

    A group holding ``m`` or more events of an item always exists: the median of the
    members' counts is at most the largest count.  Returns the chosen event indices
    (sorted) and every event's group."""
    g = labels[events["user"]]
    key = g * n_items + item
    block_keys = blocks["group"] * n_items + blocks["query"]
    position = np.searchsorted(block_keys, key)
    target = blocks["target"][position]
    order = np.lexsort((rng.random(key.size), -preference, key))
    sorted_key = key[order]
    starts = np.r_[True, sorted_key[1:] != sorted_key[:-1]]
    start_index = np.maximum.accumulate(np.where(starts, np.arange(key.size), 0))
    rank = np.arange(key.size) - start_index
    chosen = order[rank < target[order]]
    return np.sort(chosen), g


def accounting(
    labels: np.ndarray,
    ev_user: np.ndarray,
    ev_query: np.ndarray,
    chosen: np.ndarray,
    event_group: np.ndarray,
    n_queries: int,
):
    """Per-cluster (published per member, additions, suppressions) of items.

    Every member of group ``G`` publishes ``p_G(q)`` = the number of chosen events of
    item ``q`` in ``G``; member ``u`` issued ``n_u(q)``.  Suppressions are
    ``sum max(n_u(q) - p_G(q), 0)`` and additions ``sum max(p_G(q) - n_u(q), 0)``, summed
    over the members and items of each group.
    """
    return accounting_counts(
        labels, ev_user, ev_query, None, event_group[chosen], ev_query[chosen], n_queries
    )


def accounting_counts(
    labels: np.ndarray,
    own_user: np.ndarray,
    own_item: np.ndarray,
    own_weights: np.ndarray | None,
    pub_group: np.ndarray,
    pub_item: np.ndarray,
    n_queries: int,
):
    """:func:`accounting` from the members' (user, item) pairs (each seen ``own_weights``
    times, or once per entry) and the published events' (group, item)."""
    n_groups = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=n_groups)
    pub_keys, pub_count = np.unique(
        np.asarray(pub_group, dtype=np.int64) * n_queries + pub_item, return_counts=True
    )
    own_key, own_count = _pair_counts(own_user, own_item, n_queries, own_weights)
    own_user = own_key // n_queries
    own_group_key = labels[own_user] * n_queries + own_key % n_queries
    if pub_keys.size:
        pos = np.minimum(np.searchsorted(pub_keys, own_group_key), pub_keys.size - 1)
        published_own = np.where(pub_keys[pos] == own_group_key, pub_count[pos], 0)
    else:  # nothing published (e.g. k above half the users, or no shared query)
        published_own = np.zeros(own_key.size, dtype=np.int64)
    suppressed = np.bincount(
        labels[own_user], weights=np.maximum(own_count - published_own, 0), minlength=n_groups
    )
    kept = np.bincount(
        labels[own_user], weights=np.minimum(own_count, published_own), minlength=n_groups
    )
    published = np.bincount(pub_keys // n_queries, weights=pub_count, minlength=n_groups)
    added = published * sizes - kept
    return (published.astype(np.int64), added.astype(np.int64), suppressed.astype(np.int64))
