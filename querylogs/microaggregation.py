"""Size-constrained clustering of users: MDAV microaggregation on sparse profiles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from structanon.errors import InfeasibleError, InputError

__all__ = ["mdav"]


class _Rows:
    """Squared Euclidean distances from a point to the remaining rows of a sparse matrix."""

    def __init__(self, matrix: sp.csr_matrix) -> None:
        self.matrix = sp.csr_matrix(matrix, dtype=np.float64)
        self.index = np.arange(self.matrix.shape[0])
        self.sqnorm = np.asarray(self.matrix.multiply(self.matrix).sum(axis=1)).ravel()
        self.alive = np.ones(self.index.size, dtype=bool)
        self.total = np.asarray(self.matrix.sum(axis=0)).ravel()
        self.count = self.index.size

    def compact(self) -> None:
        keep = np.flatnonzero(self.alive)
        self.matrix = self.matrix[keep]
        self.index, self.sqnorm = self.index[keep], self.sqnorm[keep]
        self.alive = np.ones(keep.size, dtype=bool)

    def to_vector(self, dense: np.ndarray) -> np.ndarray:
        value = self.sqnorm + dense @ dense - 2.0 * (self.matrix @ dense)
        return np.where(self.alive, np.maximum(value, 0.0), -np.inf)

    def to_row(self, local: int) -> np.ndarray:
        dots = np.asarray((self.matrix @ self.matrix[local].T).todense()).ravel()
        value = self.sqnorm + self.sqnorm[local] - 2.0 * dots
        return np.where(self.alive, np.maximum(value, 0.0), -np.inf)

    def farthest(self, dist: np.ndarray) -> int:
        # ties broken by the smallest original index, for determinism
        top = dist.max()
        return int(np.flatnonzero(dist == top)[0])

    def take_nearest(self, dist: np.ndarray, k: int) -> np.ndarray:
        candidates = np.where(self.alive, dist, np.inf)
        local = np.argpartition(candidates, k - 1)[:k] if k < candidates.size else np.flatnonzero(
            self.alive)
        local = local[np.isfinite(candidates[local])][:k]
        self.alive[local] = False
        self.total -= np.asarray(self.matrix[local].sum(axis=0)).ravel()
        self.count -= local.size
        return self.index[local]


def mdav(profiles, k: int, progress: Callable[[int], Any] | None = None) -> np.ndarray:
    """Maximum Distance to Average Vector (MDAV) microaggregation.

    Parameters
    ----------
    profiles : array or scipy.sparse matrix (n, d)
        One row per individual (here: a user's intent profile).
    k : int
        Minimum group size.
    progress : callable, optional
        Called with the number of rows each step assigns (e.g. a tqdm bar's ``update``).

    Returns
    -------
    numpy.ndarray of int (n,)
        Group label of each row; every group has between ``k`` and ``2k - 1`` members.

    Raises
    ------
    InputError
        ``k`` not a positive integer.
    InfeasibleError
        Fewer than ``k`` rows.

    Examples
    --------
    >>> x = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.3], [9.0]])
    >>> mdav(x, 3).tolist()
    [1, 1, 1, 1, 0, 0, 0]

    Notes
    -----
    While at least ``3k`` rows remain: take the centroid ``c`` of the remaining rows, the
    row ``r`` farthest from ``c`` and the row ``s`` farthest from ``r``; form a group of
    ``r`` and its ``k - 1`` nearest remaining rows, then one of ``s`` and its ``k - 1``
    nearest.  With ``2k .. 3k - 1`` rows left, form one group around the row farthest
    from the centroid and put the rest in a last group; with fewer, one last group.
    Distances are squared Euclidean, ``||x - y||^2 = ||x||^2 + ||y||^2 - 2 x.y``, computed
    as sparse matrix-vector products, so one step costs O(nnz) and the whole run
    O(n nnz / k).

    References
    ----------
    J. Domingo-Ferrer, V. Torra. Ordinal, continuous and heterogeneous k-anonymity through
    microaggregation. Data Mining and Knowledge Discovery 11(2), 2005.
    """
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise InputError("k must be a positive integer", value=k)
    k = int(k)
    matrix = profiles if sp.issparse(profiles) else sp.csr_matrix(np.asarray(profiles, float))
    n = matrix.shape[0]
    if n < k:
        raise InfeasibleError(f"k={k} exceeds the number of individuals ({n})")
    labels = np.full(n, -1, dtype=np.int64)
    rows = _Rows(matrix)
    group = 0
    while rows.count >= 3 * k:
        if rows.count * 2 < rows.alive.size:
            rows.compact()
        centroid = rows.total / rows.count
        r = rows.farthest(rows.to_vector(centroid))
        to_r = rows.to_row(r)
        labels[rows.take_nearest(to_r, k)] = group
        s = rows.farthest(np.where(rows.alive, to_r, -np.inf))
        labels[rows.take_nearest(rows.to_row(s), k)] = group + 1
        group += 2
        if progress is not None:
            progress(2 * k)
    if rows.count >= 2 * k:
        centroid = rows.total / rows.count
        r = rows.farthest(rows.to_vector(centroid))
        labels[rows.take_nearest(rows.to_row(r), k)] = group
        group += 1
    if rows.count:
        labels[rows.index[rows.alive]] = group
    if progress is not None:
        progress(int((labels >= 0).sum()) - 2 * k * (group // 2))
    return labels
