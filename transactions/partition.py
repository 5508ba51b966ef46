"""k-anonymity of whole transactions by top-down local generalization (Partition)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from structanon import Release
from structanon.io import release_key

from ._common import (
    MAX_M,
    check_int,
    check_seed,
    group_partition,
    k_one_warning,
    prepare_generalization,
    publish_sets,
    resolve_measures,
)
from ._partition import partition_groups
from ._verify import TransactionKAnonymity, check_k_transactions, make_verifier
from .apriori import finish_generalization

__all__ = ["k_anonymize"]


def k_anonymize(transactions: Any, k: int, hierarchy: Any = None, seed: int | None = None,
                fanout: int | None = None, order: str = "id", m: int = 2,
                evaluate: bool | None = None, *, key: Any = None,
                measures: bool = True) -> Release:
    """Make every published transaction identical to at least ``k - 1`` others.

    For an attacker who may know every item of a person.  Items are generalized locally
    (each group of transactions gets its own cut of the taxonomy), top-down.

    Parameters
    ----------
    transactions : iterable of sets, or pandas Series of sets
    k : int
        Minimum number of people sharing each published transaction (>= 1).
    hierarchy : Hierarchy, dict, path or None
        Item taxonomy (see :func:`transactions.km_anonymize`); ``None`` builds a balanced
        tree with ``fanout`` children per node (default 5).
    seed : int, optional
        Public seed of the random signatures used to group transactions and of the
        measures.  It never decides the published order.
    fanout, order : optional
        Automatic taxonomy settings.
    m : int
        Items known by the attacker in the reported risk (the guarantee holds for any m).
    evaluate : bool, optional
        Older name of ``measures`` (wins when given).
    key : Pseudonymizer, bytes, key-file path or None
        Secret release key (:func:`structanon.io.release_key`) the published order is
        drawn from; ``None``: ``$STRUCTANON_PSEUDONYM_KEY`` if set, else a fresh random key.
    measures : bool
        Compute utility and risk (default True).

    Returns
    -------
    Release
        ``data``: one frozenset of published labels per input transaction, in a secret
        shuffled order (``release.source_index[j]`` is the input position of published
        transaction ``j``, kept in Python only), or ``None`` where suppressed.  Only empty transactions are ever suppressed (when
        fewer than ``k`` of them exist); they are counted in ``release.suppressed``.

    Raises
    ------
    InputError
        Bad parameters or transactions, items missing from the taxonomy.
    InfeasibleError
        Fewer than ``k`` non-empty transactions.

    Examples
    --------
    >>> import transactions
    >>> data = [{"a", "b"}, {"a", "c"}, {"d"}, {"d", "e"}]
    >>> rel = transactions.k_anonymize(data, k=2, fanout=2, evaluate=False)
    >>> rel.verify().passed
    True

    Notes
    -----
    Starting from one partition with every item generalized to the root, Partition
    repeatedly picks the published node with the largest NCP mass
    :math:`\\sum_o |leaves(g(o))| / |I|`, expands it to its children, and splits the
    partition by the set of children each transaction holds.  Sub-partitions smaller than
    ``k`` are pooled (with transactions borrowed from the largest sub-partitions, which
    stay >= k) and keep the unexpanded node; an expansion that leaves no sub-partition of
    size >= k is undone.

    References
    ----------
    Y. He, J. F. Naughton. Anonymization of set-valued data via top-down, local
    generalization. PVLDB 2(1), 2009.
    """
    k = check_int(k, "k", 1)
    m = check_int(m, "m", 1, MAX_M)
    seed = check_seed(seed)
    evaluate = resolve_measures(measures, evaluate)
    key = release_key(key)
    if fanout is not None:
        check_int(fanout, "fanout", 2)
    timings: dict[str, float] = {}
    b, tax, timings["encode"] = prepare_generalization(transactions, k, hierarchy, fanout, order)
    t0 = time.perf_counter()
    cur, group, stats = partition_groups(b, tax, k, seed)
    timings["anonymize"] = time.perf_counter() - t0
    suppressed = np.zeros(b.n, dtype=bool)
    if 0 < b.n_empty < k:
        suppressed[b.lengths == 0] = True
    published = publish_sets(b, tax, cur, suppressed)
    n_sup = int(suppressed.sum())
    info: dict[str, Any] = {"input": b.input_stats(), "taxonomy": tax.describe(),
                            "partition": stats, "suppressed_empty_transactions": n_sup}
    if k_one_warning(k):
        info["warnings"] = k_one_warning(k)
    release = Release(
        data=published, datatype="transactions",
        verifier=make_verifier(check_k_transactions, k=k), models=[TransactionKAnonymity(k)],
        partition=group_partition(published),
        parameters={"algorithm": "partition", "k": k, "fanout": fanout, "order": order,
                    "seed": seed, "taxonomy": tax.source},
        timings=timings, suppressed=n_sup, n_individuals=b.n, info=info)
    return finish_generalization(release, b, published, tax, cur, k, m, seed, evaluate, key)
