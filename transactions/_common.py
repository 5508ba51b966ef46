"""What the three anonymizers share: parameter checks, encoding, publication and measures."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from structanon import Partition, Release
from structanon._finish import Timings, add_warning, finish_release, k_warning
from structanon._validation import check_choice, check_int
from structanon.errors import InfeasibleError, InputError

from . import metrics, risk
from ._data import Baskets, dedupe_rows, encode_baskets
from ._taxonomy import Taxonomy, resolve_taxonomy

__all__ = [
    "check_seed",
    "publish_sets",
    "group_partition",
    "prepare_generalization",
    "check_basket_width",
    "publication_order",
    "resolve_measures",
    "publish_generalization",
    "measure_generalization",
    "evaluate_generalization",
    "skipped_note",
    "transformation_text",
    "TransactionsRelease",
    "SUBSET_BUDGET",
    "MAX_M",
]

#: Largest number of ``m``-subsets one basket may have before an anonymizer that enumerates
#: them refuses it (see :func:`check_basket_width`): 10 million keys, about 80 MB.
SUBSET_BUDGET = 10_000_000
#: Largest attacker knowledge ``m`` accepted.
MAX_M = 8

R = TypeVar("R", bound=Release)


def prepare_generalization(
    transactions: Any,
    k: int,
    hierarchy: Any,
    fanout: int | None,
    order: str,
    timings: Timings,
    check: Callable[[Baskets], None] | None = None,
) -> tuple[Baskets, Taxonomy]:
    """Encode the transactions and resolve the taxonomy; refuse a k no release can meet.

    ``check(baskets)``, when given, runs before the taxonomy is built (cheap refusals
    first).  The work is timed as the ``encode`` step of ``timings``.
    """
    with timings("encode"):
        baskets = encode_baskets(transactions)
        if baskets.n == 0:
            raise InputError("there are no transactions (an empty collection)")
        if check is not None:
            check(baskets)
        counts = np.bincount(baskets.codes, minlength=baskets.domain.size)
        taxonomy = resolve_taxonomy(hierarchy, baskets.domain, counts, fanout, order)
    if k > baskets.n:
        raise InfeasibleError(f"k={k} exceeds the number of transactions ({baskets.n})")
    n_nonempty = baskets.n - baskets.n_empty
    if 0 < n_nonempty < k:
        raise InfeasibleError(f"only {n_nonempty} non-empty transactions, fewer than k={k}")
    return baskets, taxonomy


def group_partition(published: list) -> Partition:
    """Individuals grouped by identical published transactions (None = suppressed)."""
    codes, _uniques = pd.factorize(pd.Series(published, dtype=object), use_na_sentinel=True)
    return Partition(codes.astype(np.int64))


def resolve_measures(measures: bool, **aliases: bool | None) -> bool:
    """``measures`` is the one switch; an older name (``evaluate=``) wins when given.

    Examples
    --------
    >>> resolve_measures(True)
    True
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     resolve_measures(True, evaluate=False), seen[0].category.__name__
    (False, 'DeprecationWarning')
    """
    check_choice(measures, "measures", (True, False))
    for name, value in aliases.items():
        if value is not None:
            warnings.warn(
                f"{name}= is deprecated; use measures= instead", DeprecationWarning, stacklevel=3
            )
            return bool(value)
    return bool(measures)


def check_seed(seed: Any) -> int | None:
    """The public seed: ``None`` or an integer >= 0."""
    return None if seed is None else check_int(seed, "seed", min_value=0)


def default_width(size: int, budget: int = SUBSET_BUDGET) -> int:
    """The widest basket whose ``size``-subsets stay within ``budget``.

    Examples
    --------
    >>> default_width(2)
    4472
    """
    if size <= 1:
        return 2**62
    width = size
    while math.comb(width + 1, size) <= budget:
        width += 1
    return width


def check_basket_width(
    b: Baskets, size: int, max_basket_size: int | None, what: str, lengths: np.ndarray | None = None
) -> int:
    """Refuse a basket too wide for an algorithm that enumerates its ``size``-subsets.

    ``max_basket_size`` ``None`` allows baskets whose ``size``-subsets number at most
    :data:`SUBSET_BUDGET`.  Returns the limit applied.

    Raises
    ------
    InputError
        Naming the first widest transaction (its 1-based position, which is its line in a
        FIMI or JSON-lines file without blank lines), its width and the limit.
    """
    limit = (
        default_width(size)
        if max_basket_size is None
        else check_int(max_basket_size, "max_basket_size", min_value=1)
    )
    lens = b.lengths if lengths is None else lengths
    if lens.size and int(lens.max()) > limit:
        i = int(lens.argmax())
        width = int(lens[i])
        raise InputError(
            f"transaction {i + 1} has {width:,} items; {what} enumerates its "
            f"{math.comb(width, size):,} {size}-item subsets, over the limit of {limit:,} items "
            f"per transaction (split or drop such baskets, or raise max_basket_size / "
            f"--max-basket-size if memory allows)",
            row=i + 1,
            value=width,
        )
    return limit


def publication_order(key: Any, n: int, *context: Any) -> np.ndarray:
    """A secret permutation of ``n`` published transactions (from the release key)."""
    return key.rng("transaction-order", *context).permutation(n).astype(np.int64)


def publish_sets(
    b: Baskets, tax: Taxonomy, occ_nodes: np.ndarray, suppressed: np.ndarray | None = None
) -> list[frozenset | None]:
    """One frozenset of published labels per transaction (None where suppressed)."""
    indptr, nodes = dedupe_rows(b.rows, occ_nodes, b.n, tax.n_nodes)
    labels = tax.labels[nodes].tolist()
    bounds = indptr.tolist()
    out: list[frozenset | None] = [frozenset(labels[bounds[i] : bounds[i + 1]]) for i in range(b.n)]
    if suppressed is not None:
        for i in np.flatnonzero(suppressed).tolist():
            out[i] = None
    return out


def publish_generalization(
    release: Release,
    b: Baskets,
    published: list,
    tax: Taxonomy,
    occ_nodes: np.ndarray,
    key: Any,
    *context: Any,
) -> None:
    """Publish generalized transactions in a secret order and record their NCP.

    ``occ_nodes`` is the published taxonomy node of every item occurrence (for the NCP,
    kept even when the measures are off).  The order is drawn from the release ``key``
    (:func:`structanon.io.release_key`) with the public ``context``;
    ``release.source_index`` keeps, for the publisher only, the input position of every
    published transaction.
    """
    release.utility = {"ncp": float(tax.ncp[occ_nodes].sum() / b.nnz) if b.nnz else 0.0}
    perm = publication_order(key, len(published), *context)
    release.data = [published[i] for i in perm.tolist()]
    release.partition = group_partition(release.data)
    release.source_index = perm


def evaluate_generalization(
    b: Any, published: list, tax: Any, k: int, m: int, seed: int | None
) -> tuple[dict, dict]:
    """Utility and risk of a generalized release (``published`` in input order)."""
    s = 0 if seed is None else seed
    utility = {
        "ncp": metrics.ncp(b, published, tax),
        "utility_loss": metrics.utility_loss(b, published, tax),
        "support_error": metrics.support_error(
            b, published, tax, sizes=tuple(range(1, min(m, 2) + 1)), n_queries=200, seed=s
        ),
        "top_itemsets_error": metrics.top_itemsets_error(
            b, published, tax, top=50, max_size=min(max(m, 1), 2)
        ),
        "frequent_itemsets": metrics.frequent_itemset_preservation(
            b, published, tax, min_support=max(0.01, 2 * k / max(b.n, 1)), max_size=2
        ),
    }
    attack = risk.attack_risk(b, published, tax, m=m, k=k, n_targets=300, seed=s)
    return utility, {
        "before": attack["before"],
        "after": attack["after"],
        "attacker_items": attack["attacker_items"],
    }


def measure_generalization(
    b: Baskets, published: list, tax: Taxonomy, k: int, m: int, seed: int | None
) -> Callable[[Release], None]:
    """The ``measure`` that :func:`structanon._finish.finish_release` runs after verifying."""

    def measure(release: Release) -> None:
        release.utility, release.risk = evaluate_generalization(b, published, tax, k, m, seed)

    return measure


def finish_generalization(
    release: R,
    b: Baskets,
    published: list,
    tax: Taxonomy,
    occ_nodes: np.ndarray,
    *,
    key: Any,
    seed: int | None,
    k: int,
    m: int,
    measures: bool,
    timings: Timings,
) -> R:
    """The ending both generalizers share: the k = 1 warning, publication in a secret order,
    then strict verification and the measures (:func:`structanon._finish.finish_release`)."""
    warning = k_warning(k)
    if warning:
        add_warning(release, warning)
    publish_generalization(
        release,
        b,
        published,
        tax,
        occ_nodes,
        key,
        seed,
        k,
        m,
        repr(sorted(release.parameters.items(), key=str)),
    )
    if not measures:
        skipped_note(release, ": utility is NCP only, no risk")
    finish_release(
        release,
        measure_generalization(b, published, tax, k, m, seed),
        measures=measures,
        timings=timings,
    )
    return release


def skipped_note(release: Release, what: str = "") -> None:
    """Record in ``release.info["notes"]`` that the measures were switched off."""
    release.info.setdefault("notes", []).append(
        f"measures skipped (measures=False / --no-measures){what}"
    )


@dataclass(repr=False)
class TransactionsRelease(Release):
    """A :class:`structanon.Release` of generalized transactions, with its item taxonomy.

    ``taxonomy`` is the :class:`~transactions.Taxonomy` the published labels come from
    (for :mod:`transactions.metrics`); it is ``None`` for a band-matrix release, which
    publishes items unchanged.
    """

    taxonomy: Taxonomy | None = field(default=None, compare=False)


def transformation_text(b: Baskets, tax: Taxonomy, occ_nodes: np.ndarray) -> str:
    """The generalization in one plain sentence, for reports (``info["transformation_text"]``).

    Examples
    --------
    >>> from transactions._data import encode_baskets
    >>> b = encode_baskets([{0, 1}, {2, 3}])
    >>> tax = Taxonomy.balanced(b.domain, 2)
    >>> print(transformation_text(b, tax, np.array([4, 4, 2, 3])))  # doctest: +NORMALIZE_WHITESPACE
    2 of 4 distinct items were replaced, in some or all baskets, by 1 taxonomy group (such
    as '0..1'), each standing for 2.0 items on average; 50.0% of item occurrences are
    published as a group, the rest as the items themselves.
    """
    if b.nnz == 0:
        return "No items were published (every transaction is empty)."
    general = ~tax.is_leaf[occ_nodes]
    nodes = np.unique(occ_nodes[general])
    if nodes.size == 0:
        return "Every item is published as itself: no item needed generalizing."
    n_items = int(np.unique(b.codes[general]).size)
    examples = ", ".join(repr(str(tax.labels[x])) for x in nodes[:3].tolist())
    groups = "group" if nodes.size == 1 else "groups"
    return (
        f"{n_items:,} of {int(b.domain.size):,} distinct items were replaced, in some or "
        f"all baskets, by {nodes.size:,} taxonomy {groups} (such as {examples}), each "
        f"standing for {float(tax.size[nodes].mean()):.1f} items on average; "
        f"{float(general.mean()):.1%} of item occurrences are published as a group, the "
        "rest as the items themselves."
    )
