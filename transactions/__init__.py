"""transactions: anonymization of set-valued data (market baskets, click streams).

Public functions
----------------
anonymize, km_anonymize
    k^m-anonymity by item generalization (Apriori Anonymization, or local recoding).
k_anonymize
    k-anonymity of whole transactions (He & Naughton's Partition, top-down local
    generalization).
band_matrix
    Band-matrix grouping for sensitive items (CAHD), privacy degree p.
disassociate, reconstruct, Cluster
    Disassociation (original items in k^m-anonymous chunks), and one plausible dataset
    drawn from its release.
from_long
    Baskets from a long ``(transaction, item)`` DataFrame.
read_transactions, write_transactions
    FIMI, long CSV and JSON-lines files.
read_disassociation, write_disassociation
    A disassociated release as JSON (or readable text, written only).
item_taxonomy, Taxonomy
    The item taxonomy (given or automatic) bound to a data set, for the metrics.
KmAnonymity, TransactionKAnonymity, PrivacyDegree, ChunkKmAnonymity
    The privacy models (:class:`structanon.models.PrivacyModel` subclasses) the releases
    hold in ``release.models``.
TransactionsRelease
    The :class:`structanon.Release` every anonymizer returns, with its ``taxonomy``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._apriori import km_anonymize
from ._band import band_matrix
from ._common import TransactionsRelease
from ._data import encode_baskets
from ._disassociation import Cluster, disassociate, reconstruct
from ._long import from_long
from ._taxonomy import Taxonomy, resolve_taxonomy
from ._topdown import k_anonymize
from ._verify import ChunkKmAnonymity, KmAnonymity, PrivacyDegree, TransactionKAnonymity
from .io import (
    read_disassociation,
    read_transactions,
    write_disassociation,
    write_transactions,
)

#: what ``structanon transactions anonymize`` runs: every package's ``anonymize(data, k, ...)``
anonymize = km_anonymize

__all__ = [
    "ChunkKmAnonymity",
    "Cluster",
    "KmAnonymity",
    "PrivacyDegree",
    "Taxonomy",
    "TransactionKAnonymity",
    "TransactionsRelease",
    "anonymize",
    "band_matrix",
    "disassociate",
    "from_long",
    "item_taxonomy",
    "k_anonymize",
    "km_anonymize",
    "read_disassociation",
    "read_transactions",
    "reconstruct",
    "write_disassociation",
    "write_transactions",
]


def item_taxonomy(
    transactions: Any, hierarchy: Any = None, fanout: int | None = None, order: str = "id"
) -> Taxonomy:
    """The item taxonomy an anonymizer would use for these transactions.

    Parameters
    ----------
    transactions : iterable of sets
    hierarchy : Hierarchy, dict, path or None
        A :class:`structanon.Hierarchy`, a nested dict, a ``.json`` or ARX ``.csv`` path;
        ``None`` builds a balanced tree over the items.
    fanout : int, optional
        Children per node of the automatic tree (default 5).
    order : {"id", "frequency"}
        Item order of the automatic tree.

    Returns
    -------
    Taxonomy

    Examples
    --------
    >>> tax = item_taxonomy([{0, 1}, {2, 3}], fanout=2)
    >>> tax.height, [str(x) for x in tax.labels[tax.n_leaves:]]
    (2, ['0..1', '2..3', '*'])
    """
    b = encode_baskets(transactions)
    counts = np.bincount(b.codes, minlength=b.domain.size)
    return resolve_taxonomy(hierarchy, b.domain, counts, fanout, order)
