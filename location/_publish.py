"""The published table: rows in an order that carries nothing but the published values.

Rows are sorted by window, region id and pseudonym, all three published values, so the
order tells nothing about the input (its row order, the fixes' times inside a window or
anything else); rows that tie are identical in every published column.  Region ids are the
pyramid codes of the polygons (level, kind, cell), also a function of published values, so
nothing needs publication randomness.  With ``aggregate`` the identical rows of one
(pseudonym, window, region) are published once with their count, ``n_fixes``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._grid import CloakingGrid

__all__ = ["PublicationKeys", "PublishedRows", "publication_keys", "published_rows"]

def _rank(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted distinct values, rank of each value among them)``, hashing then a small sort."""
    codes, uniq = pd.factorize(values, sort=False)
    uniq = np.asarray(uniq)
    order = np.argsort(uniq, kind="stable")
    rank_of = np.empty(len(uniq), dtype=np.int64)
    rank_of[order] = np.arange(len(uniq), dtype=np.int64)
    return uniq[order], rank_of[codes]


@dataclass
class PublicationKeys:
    """Int64 keys ordering rows by (window, region id, pseudonym); equal keys = equal rows.

    ``regions`` are the distinct region codes in increasing order and ``pseudonyms`` the
    distinct pseudonyms in increasing order; ``w``, ``region_rank`` and ``user_rank`` give
    each row's window code and its positions among them.  When the three fit in one int64,
    ``key`` packs them (``packed``) and :meth:`decode` recovers them from sorted keys
    without gathering.
    """

    key: np.ndarray
    w: np.ndarray
    region_rank: np.ndarray
    user_rank: np.ndarray
    regions: np.ndarray
    pseudonyms: np.ndarray
    packed: bool
    w0: int

    def take(self, rows: np.ndarray) -> PublicationKeys:
        """The keys of ``rows`` (e.g. each fix's triple)."""
        if self.packed:  # decode needs the key alone
            return PublicationKeys(self.key[rows], self.w, self.region_rank, self.user_rank,
                                   self.regions, self.pseudonyms, True, self.w0)
        return PublicationKeys(self.key[rows], self.w[rows], self.region_rank[rows],
                               self.user_rank[rows], self.regions, self.pseudonyms, False,
                               self.w0)

    def decode(self, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(w, region_rank, user_rank)`` of the rows ``order``."""
        if not self.packed:
            return self.w[order], self.region_rank[order], self.user_rank[order]
        key = self.key[order]
        n_u, n_r = len(self.pseudonyms), len(self.regions)
        rest, user_rank = np.divmod(key, n_u)
        wd, region_rank = np.divmod(rest, n_r)
        return wd + self.w0, region_rank, user_rank


def publication_keys(w: np.ndarray, region: np.ndarray, user: np.ndarray,
                     pseudonyms: np.ndarray) -> PublicationKeys:
    """Keys ordering rows by (window, region id, pseudonym), all published values.

    Parameters
    ----------
    w, region, user : int arrays of equal length
        Window code, region code and dense user code of each row.
    pseudonyms : array of str
        The pseudonym of each dense user code.
    """
    regions, region_rank = _rank(region)
    by_pseudonym = np.argsort(np.asarray(pseudonyms, dtype=str), kind="stable")
    user_rank = np.empty(len(pseudonyms), dtype=np.int64)
    user_rank[by_pseudonym] = np.arange(len(pseudonyms), dtype=np.int64)
    user_rank = user_rank[user]
    sorted_pseudonyms = np.asarray(pseudonyms, dtype=object)[by_pseudonym]
    w0 = int(w.min()) if w.size else 0
    wd = w - w0
    n_w = int(wd.max()) + 1 if w.size else 1
    n_r, n_u = max(len(regions), 1), max(len(pseudonyms), 1)
    if n_w * n_r * n_u < 2**62:
        key = (wd * n_r + region_rank) * n_u + user_rank
        return PublicationKeys(key, w, region_rank, user_rank, regions, sorted_pseudonyms,
                               True, w0)
    # too many combinations to pack: the dense rank of the lexicographic order
    order = np.lexsort((user_rank, region_rank, wd))
    cols = np.column_stack([wd, region_rank, user_rank])[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (cols[1:] != cols[:-1]).any(axis=1)
    key = np.empty(len(order), dtype=np.int64)
    key[order] = np.cumsum(new) - 1
    return PublicationKeys(key, w, region_rank, user_rank, regions, sorted_pseudonyms, False, w0)


@dataclass
class PublishedRows:
    """Published rows as arrays, in publication order; ``repeat`` expands each into rows.

    ``user_rank`` indexes ``pseudonyms``; ``region_rank`` indexes ``regions``.  A per-fix
    release repeats row ``i`` ``repeat[i]`` times; an aggregated one publishes it once with
    ``n_fixes[i]``.
    """

    user_rank: np.ndarray
    w: np.ndarray
    region_rank: np.ndarray
    repeat: np.ndarray | None
    n_fixes: np.ndarray | None
    regions: np.ndarray
    pseudonyms: np.ndarray

    def __len__(self) -> int:
        return len(self.user_rank)

    def frame(self, grid: CloakingGrid, window_ns: int, lo: int = 0, hi: int | None = None,
              start: int = 0) -> pd.DataFrame:
        """Rows ``lo:hi`` as the published DataFrame, indexed from ``start``."""
        sl = slice(lo, hi)
        user, w, rank = self.user_rank[sl], self.w[sl], self.region_rank[sl]
        if self.repeat is not None:
            rep = self.repeat[sl]
            user, w, rank = np.repeat(user, rep), np.repeat(w, rep), np.repeat(rank, rep)
        polys = grid.polygons(self.regions) if len(self.regions) else np.zeros(0, dtype=object)
        columns = {
            "user": self.pseudonyms[user],
            "window": pd.to_datetime(w * window_ns, unit="ns", utc=True),
            "region_id": self.regions[rank].astype(np.int64),
            "region": polys[rank],
        }
        if self.n_fixes is not None:
            columns["n_fixes"] = self.n_fixes[sl].astype(np.int64)
        return pd.DataFrame(columns, index=pd.RangeIndex(start, start + len(user)))


def published_rows(keys: PublicationKeys, weight: np.ndarray | None,
                   aggregate: bool) -> tuple[PublishedRows, np.ndarray]:
    """Sort rows (fixes, or triples with ``weight`` fixes each) into publication order.

    Returns the rows and ``order``, the input rows' positions in publication order.
    """
    order = np.argsort(keys.key)
    if not aggregate:
        w, region_rank, user_rank = keys.decode(order)
        repeat = None if weight is None else weight[order]
        return PublishedRows(user_rank, w, region_rank, repeat, None, keys.regions,
                             keys.pseudonyms), order
    ks = keys.key[order]
    start = np.ones(len(ks), dtype=bool)
    np.not_equal(ks[1:], ks[:-1], out=start[1:])
    starts = np.flatnonzero(start)
    fixes = np.ones(len(ks), dtype=np.int64) if weight is None else weight[order]
    n_fixes = np.add.reduceat(fixes, starts) if starts.size else np.zeros(0, dtype=np.int64)
    w, region_rank, user_rank = keys.decode(order[starts])
    return PublishedRows(user_rank, w, region_rank, None, n_fixes, keys.regions,
                         keys.pseudonyms), order
