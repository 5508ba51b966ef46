"""The partition of individuals into groups a release makes indistinguishable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError, at_row

__all__ = ["Partition", "encode_column", "encode_values"]


def encode_values(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Encode arbitrary values to integer codes.

    Returns ``(codes, domain)`` where ``domain[codes] == values`` and ``domain`` is
    sorted (numbers numerically, strings lexically), so the codes of an ordered attribute
    follow its order.  Missing values raise :class:`InputError`.

    Examples
    --------
    >>> codes, domain = encode_values(["b", "a", "b"])
    >>> codes.tolist(), domain.tolist()
    ([1, 0, 1], ['a', 'b'])
    >>> codes, domain = encode_values(pd.Series(pd.to_datetime(["2020-02", "2020-01"], utc=True)))
    >>> codes.tolist(), [str(d) for d in domain]
    ([1, 0], ['2020-01-01 00:00:00+00:00', '2020-02-01 00:00:00+00:00'])
    """
    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        return _encode_categorical(pd.Categorical(values))
    series = pd.Series(np.asarray(values, dtype=object) if not hasattr(values, "dtype") else values)
    missing = series.isna().to_numpy()
    if missing.any():
        raise InputError("missing value", row=int(np.flatnonzero(missing)[0]))
    codes, uniques = pd.factorize(series, sort=False)  # hashing: O(n), then sort the few uniques
    values_sorted: np.ndarray
    if isinstance(series.dtype, np.dtype):
        values_sorted = np.asarray(uniques, dtype=series.dtype)
    else:  # an extension dtype (tz-aware times, nullable integers, Arrow strings)
        values_sorted = np.asarray(uniques)
        if values_sorted.dtype.kind in "OUS":
            values_sorted = values_sorted.astype(object)
    try:
        order = np.argsort(values_sorted, kind="stable")
    except TypeError as exc:  # mixed, unorderable types
        raise InputError(f"values of mixed types cannot be ordered: {exc}") from exc
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[codes].astype(np.int64), values_sorted[order]


def encode_column(column: Any, name: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode_values` of a table's column, its errors naming the column (``name``,
    else the Series' name) and the row: by its index label for a Series
    (:func:`structanon.errors.at_row`), by its 0-based position for an array.

    Examples
    --------
    >>> encode_column(pd.Series(["a", None], index=[7, 8]), "zip")
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: missing value (column 'zip', row with index label 8)
    >>> encode_column(np.array(["a", None], dtype=object), "zip")
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: missing value (column 'zip', row 1)
    """
    try:
        return encode_values(column)
    except InputError as exc:
        where = {} if exc.row is None else at_row(column, exc.row)
        label = getattr(column, "name", None) if name is None else name
        raise InputError(
            exc.message, column=None if label is None else str(label), value=exc.value, **where
        ) from None


def _encode_categorical(values: pd.Categorical) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode_values` of categorical values, from their integer codes: the same codes
    and domain as encoding ``np.asarray(values)``, without hashing one value per record."""
    raw = np.asarray(values.codes)
    if raw.size and raw.min() < 0:
        raise InputError("missing value", row=int(np.flatnonzero(raw < 0)[0]))
    used = np.flatnonzero(np.bincount(raw, minlength=len(values.categories)))
    uniques = np.asarray(values.categories[used])  # the values present, in category order
    if uniques.dtype.kind in "OUS":
        uniques = uniques.astype(object)
    try:
        order = np.argsort(uniques, kind="stable")
    except TypeError as exc:  # mixed, unorderable types
        raise InputError(f"values of mixed types cannot be ordered: {exc}") from exc
    rank = np.full(len(values.categories), -1, dtype=np.int64)
    rank[used[order]] = np.arange(order.size, dtype=np.int64)
    return rank[raw], uniques[order]


def _first_appearance_ranks(raw: np.ndarray) -> np.ndarray:
    """Renumber non-negative labels ``0..g-1`` in order of first appearance.

    Labels not much larger than their count (the usual case) are ranked by direct
    addressing in linear time; others through a sort (``np.unique``).
    """
    n = raw.size
    span = int(raw.max()) + 1
    if span <= 2 * n + 1024:
        first = np.full(span, n, dtype=np.int64)
        first[raw[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)  # the last write wins
        present = np.flatnonzero(first < n)
        rank = np.full(span, -1, dtype=np.int64)
        rank[present[np.argsort(first[present], kind="stable")]] = np.arange(
            present.size, dtype=np.int64
        )
        return rank[raw]
    _, first_index, inverse = np.unique(raw, return_index=True, return_inverse=True)
    order = np.argsort(first_index, kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(order.size)
    return ranks[inverse.reshape(-1)]


class Partition:
    """One integer group label per individual; ``-1`` marks a suppressed individual.

    Groups are numbered ``0 .. n_groups - 1``.  Every release is described by such a
    partition: records sharing generalized quasi-identifiers, users sharing a cloaked
    region and window, nodes of one degree, users of one query-log cluster.

    Parameters
    ----------
    labels : array of int
        Group of each individual, ``-1`` for suppressed.  Labels are renumbered to be
        consecutive, in order of first appearance.

    Examples
    --------
    >>> p = Partition([0, 0, 5, 5, 5, -1])
    >>> p.n, p.n_groups, p.sizes.tolist(), p.n_suppressed
    (6, 2, [2, 3], 1)
    """

    def __init__(self, labels: Sequence[int] | np.ndarray) -> None:
        raw = np.asarray(labels)
        if raw.ndim != 1:
            raise InputError("partition labels must be one-dimensional")
        if raw.size and not np.issubdtype(raw.dtype, np.integer):
            raise InputError("partition labels must be integers")
        raw = raw.astype(np.int64, copy=False)
        kept = raw >= 0
        labels_out = np.full(raw.shape, -1, dtype=np.int64)
        if kept.any():
            labels_out[kept] = _first_appearance_ranks(raw[kept])
        self.labels = labels_out
        self._sizes = (
            np.bincount(labels_out[kept], minlength=0) if kept.any() else np.zeros(0, np.int64)
        )

    @classmethod
    def from_keys(cls, keys: Any, suppressed: np.ndarray | None = None) -> Partition:
        """Group individuals whose key columns are all equal.

        Parameters
        ----------
        keys : 2-D array (n, q), DataFrame, or 1-D array
            Generalized quasi-identifier values (any hashable values) of each individual.
        suppressed : bool array (n,), optional
            Individuals to mark ``-1`` whatever their keys.

        Examples
        --------
        >>> Partition.from_keys([[1, "a"], [1, "a"], [2, "a"]]).sizes.tolist()
        [2, 1]
        """
        frame = (
            keys
            if isinstance(keys, pd.DataFrame)
            else pd.DataFrame(
                np.asarray(keys, dtype=object).reshape(len(keys), -1)
                if not isinstance(keys, np.ndarray) or keys.dtype == object
                else keys.reshape(len(keys), -1)
            )
        )
        labels: np.ndarray
        if frame.shape[1] == 0:
            labels = np.zeros(len(frame), dtype=np.int64)
        else:
            labels = (
                frame.groupby(list(frame.columns), sort=False, dropna=False, observed=True)
                .ngroup()
                .to_numpy()
            )
        labels = labels.astype(np.int64)
        if suppressed is not None:
            labels = np.where(np.asarray(suppressed, dtype=bool), -1, labels)
        return cls(labels)

    @property
    def n(self) -> int:
        """Number of individuals, suppressed ones included."""
        return int(self.labels.size)

    @property
    def n_groups(self) -> int:
        return int(self._sizes.size)

    @property
    def sizes(self) -> np.ndarray:
        """Size of each group (suppressed individuals excluded)."""
        return self._sizes

    @property
    def n_suppressed(self) -> int:
        return int((self.labels < 0).sum())

    @property
    def n_released(self) -> int:
        return self.n - self.n_suppressed

    def members(self, group: int) -> np.ndarray:
        """Indices of the individuals in ``group``."""
        return np.flatnonzero(self.labels == group)

    def size_of_each(self) -> np.ndarray:
        """Size of each individual's group (0 for suppressed individuals)."""
        out = np.zeros(self.n, dtype=np.int64)
        kept = self.labels >= 0
        out[kept] = self._sizes[self.labels[kept]]
        return out

    def contingency(self, sensitive: Any) -> tuple[np.ndarray, np.ndarray]:
        """Groups x sensitive-values counts.

        Parameters
        ----------
        sensitive : array (n,)
            The sensitive value of every individual (suppressed ones included).

        Returns
        -------
        counts : int array (n_groups, n_values)
        domain : array (n_values,)
            The sensitive values, sorted, in column order.  The domain is that of all
            individuals, so suppressed ones still count in table-wide distributions.
        """
        counts, domain, _everyone = self.contingency_and_totals(sensitive)
        return counts, domain

    def contingency_and_totals(self, sensitive: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`contingency` and the count of every sensitive value over all individuals
        (suppressed ones included), from one encoding of the values."""
        codes, domain = encode_values(sensitive)
        if codes.size != self.n:
            raise InputError(f"{codes.size} sensitive values for {self.n} individuals")
        kept = self.labels >= 0
        flat = self.labels[kept] * domain.size + codes[kept]
        counts = np.bincount(flat, minlength=self.n_groups * domain.size)
        everyone = np.bincount(codes, minlength=domain.size)
        return counts.reshape(self.n_groups, domain.size), domain, everyone

    def __repr__(self) -> str:
        return f"Partition(n={self.n}, n_groups={self.n_groups}, n_suppressed={self.n_suppressed})"
