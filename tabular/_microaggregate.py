"""Public microaggregation of a table: MDAV and MDAV-generic, as a verified release.

The clustering itself is the core's one MDAV (:mod:`structanon.microaggregation`, also
used by ``querylogs``), with its blocked variant for large tables; this module encodes the
columns, aggregates each group (mean, mode or median) and publishes a k-anonymous release.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from structanon import Partition
from structanon._finish import Timings
from structanon._validation import check_choice, check_int, check_names
from structanon.errors import InfeasibleError, InputError, labels_of
from structanon.io import Pseudonymizer, release_key
from structanon.microaggregation import group_means, mdav, mdav_blocked
from structanon.models import KAnonymity

from ._anonymize import TabularRelease
from ._sdc import categorical_columns, information_loss, numeric_frame, publish_perturbed
from ._verify import TabularVerifier

__all__ = ["microaggregate", "METHODS", "AUTO_BLOCK_ROWS"]

METHODS = ("mdav", "mdav-generic")
#: Tables with more rows than this are microaggregated by blocks (``block_size="auto"``).
AUTO_BLOCK_ROWS = 200_000
_AUTO_BLOCK_SIZE = 50_000


def _embed(df: pd.DataFrame, numeric: list[str], nominal: list[str], ordinal: list[str]):
    """Rows in one Euclidean space: standardized numbers and ordinal ranks, nominal
    categories one-hot over ``sqrt(2)`` (two different categories at distance 1)."""
    parts = []
    if numeric:
        x = df[numeric].to_numpy(dtype=float)
        sd = x.std(axis=0)
        parts.append((x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0))
    for col in ordinal:
        ranks = pd.Series(df[col]).rank(method="dense").to_numpy(dtype=float)
        sd = ranks.std()
        parts.append(((ranks - ranks.mean()) / (sd if sd > 0 else 1.0))[:, None])
    for col in nominal:
        codes, uniques = pd.factorize(df[col], sort=True)
        parts.append(np.eye(len(uniques))[codes] / np.sqrt(2.0))
    return np.hstack(parts)


def _group_mode(values: pd.Series, labels: np.ndarray, ordinal: bool) -> np.ndarray:
    """Each group's mode (nominal; the smallest value among tied modes) or lower median
    (ordinal), as the value published for every member."""
    codes, uniques = pd.factorize(values, sort=True)
    n_groups = int(labels.max()) + 1
    if ordinal:
        order = np.lexsort((codes, labels))
        sizes = np.bincount(labels, minlength=n_groups)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        chosen = codes[order][starts + (sizes - 1) // 2]
    else:
        counts = np.zeros((n_groups, len(uniques)), dtype=np.int64)
        np.add.at(counts, (labels, codes), 1)
        chosen = counts.argmax(axis=1)  # first (smallest) value among tied modes
    return np.asarray(uniques)[chosen][labels]


def microaggregate(
    df: pd.DataFrame,
    columns: Sequence[str],
    k: int,
    method: str = "mdav",
    *,
    nominal: Sequence[str] = (),
    ordinal: Sequence[str] = (),
    block_size: int | str | None = "auto",
    seed: int = 0,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
) -> TabularRelease:
    """Microaggregate a table: groups of ``k .. 2k - 1`` similar records share one value.

    Parameters
    ----------
    df : pandas.DataFrame
        One record per individual.
    columns : sequence of str
        Numeric quasi-identifiers, aggregated jointly (one partition for all); each
        record's value becomes its group's mean.
    k : int
        Minimum group size (``2 <= k`` is advised; ``k = 1`` changes nothing).
    method : {"mdav", "mdav-generic"}
        ``mdav``: numeric columns only.  ``mdav-generic``: also ``nominal`` columns
        (distance 0/1, published as the group's mode) and ``ordinal`` columns (distance
        between ranks, published as the group's median).
    nominal, ordinal : sequence of str
        Categorical columns of ``mdav-generic``.
    block_size : int, "auto" or None
        ``None``: textbook MDAV, :math:`O(n^2 d / k)`.  An integer: MDAV within blocks of
        that many rows along the first principal component
        (:func:`structanon.microaggregation.mdav_blocked`, near-linear).  ``"auto"``
        (default): textbook up to 200,000 rows, blocks of 50,000 beyond.
    seed : int
        Public seed of the measures (record-linkage samples).
    key : Pseudonymizer, bytes, str or path, optional
        The release key: the published row order is drawn from it (default: a fresh
        random key, so two releases are not row-aligned).
    measures : bool
        Compute utility (SSE/SST, IL1s, means, variances, correlations) and risk (record
        linkage, interval disclosure) before and after.

    Returns
    -------
    TabularRelease
        ``data``: the table with the aggregated columns, rows in a secret order; verified
        k-anonymous on the aggregated columns (classes of identical published vectors of
        at least ``k``); ``partition``: the MDAV groups; ``info["group_sizes"]``: the
        smallest and largest group.

    Raises
    ------
    InputError
        Unknown, repeated or non-numeric columns, missing values (column and row named),
        bad ``k``, ``method`` or ``block_size``.
    InfeasibleError
        ``k`` exceeds the number of records.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"age": [20, 22, 24, 60, 62, 64], "job": list("abcdef")})
    >>> r = microaggregate(t, ["age"], 3, key=b"0123456789abcdef", measures=False)
    >>> sorted(r.data["age"].tolist())
    [22, 22, 22, 62, 62, 62]
    >>> r.verify().passed
    True

    Notes
    -----
    MDAV: while at least ``3k`` records remain, the record ``r`` farthest from the
    centroid and the record ``s`` farthest from ``r`` each form a group with their
    ``k - 1`` nearest records; the rest form one or two last groups.  The information
    loss reported is :math:`SSE/SST` over the standardized-free original values and IL1s.

    References
    ----------
    J. Domingo-Ferrer, J. M. Mateo-Sanz. Practical data-oriented microaggregation for
    statistical disclosure control. IEEE TKDE 14(1), 2002.
    J. Domingo-Ferrer, V. Torra. Ordinal, continuous and heterogeneous k-anonymity through
    microaggregation. DMKD 11(2), 2005 (MDAV-generic).
    """
    timings = Timings()
    check_choice(method, "method", METHODS)
    k = check_int(k, "k", min_value=1)
    seed = check_int(seed, "seed", min_value=0)
    columns = check_names(columns, "columns")
    nominal, ordinal = check_names(nominal, "nominal"), check_names(ordinal, "ordinal")
    if method == "mdav" and (nominal or ordinal):
        raise InputError("nominal and ordinal columns need method='mdav-generic'")
    if not columns and not (nominal or ordinal):
        raise InputError("columns must name at least one column")
    x = numeric_frame(df, columns) if columns else np.zeros((len(df), 0))
    if nominal or ordinal:
        categorical_columns(df, nominal + ordinal, parameter="nominal/ordinal")
    overlap = set(columns) & set(nominal + ordinal)
    if overlap:
        raise InputError("a column is given twice", column=sorted(overlap)[0])
    n = len(df)
    if k > n:
        raise InfeasibleError(f"k={k} exceeds the number of records ({n})")
    if block_size == "auto":
        block = _AUTO_BLOCK_SIZE if n > AUTO_BLOCK_ROWS else None
    elif block_size is None:
        block = None
    else:
        block = check_int(block_size, "block_size", min_value=2 * k)
    secret = release_key(key).bound(df)  # streams bound to the input (see bound)
    data = df.reset_index(drop=True)
    with timings("microaggregate"):
        with labels_of(df.index):
            space = _embed(data, columns, nominal, ordinal)
        labels = mdav(space, k) if block is None else mdav_blocked(space, k, block)
    with timings("aggregate"):
        masked = data.copy()
        if columns:
            means = group_means(x, labels)
            for j, col in enumerate(columns):
                masked[col] = means[labels, j]
        for col in nominal + ordinal:
            masked[col] = _group_mode(data[col], labels, col in ordinal)
    aggregated = columns + nominal + ordinal
    sizes = np.bincount(labels)
    public = repr({"method": method, "columns": aggregated, "k": k, "block": block})
    original = data.set_axis(df.index)
    release = publish_perturbed(
        original,
        masked,
        model=KAnonymity(k),
        verifier=TabularVerifier(aggregated, None, [KAnonymity(k)]),
        parameters={
            "algorithm": "microaggregation",
            "method": method,
            "columns": columns,
            "nominal": nominal,
            "ordinal": ordinal,
            "k": k,
            "block_size": block,
        },
        info={
            "group_sizes": {"min": int(sizes.min()), "max": int(sizes.max())},
            "n_groups": int(sizes.size),
            "variant": "textbook" if block is None else f"blocks of {block} rows",
        },
        secret=secret,
        seed=seed,
        public=public,
        timings=timings,
        measures=measures,
        numeric=columns,
        categorical=nominal + ordinal,
        partition=Partition(labels),
        extra_utility=(lambda: information_loss(x, masked[columns].to_numpy(dtype=float)))
        if columns
        else None,
    )
    return release
