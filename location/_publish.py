"""The published table: rows in an order that carries nothing but the published values.

Rows are sorted by window, region id and pseudonym, all three published values, so the
order tells nothing about the input (its row order, the fixes' times inside a window or
anything else); rows that tie are identical in every published column.  Region ids are the
pyramid codes of the polygons (level, kind, cell), also a function of published values, so
nothing needs publication randomness.  With ``aggregate`` the identical rows of one
(pseudonym, window, region) are published once with their count, ``n_fixes``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from structanon._finish import k_warning
from structanon.errors import InfeasibleError
from structanon.io import Pseudonymizer
from structanon.partition import encode_values

from ._grid import CloakingGrid, lonlat_rectangle_area

__all__ = [
    "LINKAGES",
    "LINKAGE_WARNING",
    "published_users",
    "add_digests",
    "bound_pseudonymizer",
    "fix_digest",
    "PublicationKeys",
    "PublishedRows",
    "publication_keys",
    "published_rows",
    "require_some_published",
    "window_words",
    "region_areas_km2",
    "release_info",
    "release_parameters",
    "transformation_text",
]


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
            return PublicationKeys(
                self.key[rows],
                self.w,
                self.region_rank,
                self.user_rank,
                self.regions,
                self.pseudonyms,
                True,
                self.w0,
            )
        return PublicationKeys(
            self.key[rows],
            self.w[rows],
            self.region_rank[rows],
            self.user_rank[rows],
            self.regions,
            self.pseudonyms,
            False,
            self.w0,
        )

    def decode(self, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(w, region_rank, user_rank)`` of the rows ``order``."""
        if not self.packed:
            return self.w[order], self.region_rank[order], self.user_rank[order]
        key = self.key[order]
        n_u, n_r = len(self.pseudonyms), len(self.regions)
        rest, user_rank = np.divmod(key, n_u)
        wd, region_rank = np.divmod(rest, n_r)
        return wd + self.w0, region_rank, user_rank


LINKAGES = ("window", "pseudonym", "trajectory")
LINKAGE_WARNING = (
    "linkage='pseudonym': one pseudonym per user links all of a user's windows, "
    "so trajectories stay linkable across windows and releases; the unicity "
    "after release measures that risk"
)


#: hash keys of the two 64-bit sums of :func:`fix_digest` (pandas wants 16 characters)
_DIGEST_KEYS = ("structanon/loc/1", "structanon/loc/2")


def fix_digest(user: Any, t_ns: Any, lat: Any, lon: Any) -> np.ndarray:
    """The content of valid fixes as ``uint64[3]``: their count and two sums of row hashes.

    Each fix (user id as text, time, latitude and longitude in units of 1e-7 degrees,
    about a centimetre) hashes to two 64-bit values and the digest is their count and their
    sums modulo ``2**64``, so it does not depend on the order of the fixes and the digests
    of the parts of a log add up to the log's (:func:`add_digests`): both engines bind the
    same input to the same key.  The coordinates are rounded so that a log read back from
    another CRS (a round trip that moves them by 1e-12 degrees) is the same input.

    Examples
    --------
    >>> a = fix_digest(["u", "v"], [1, 2], [40.0, 40.1], [116.0, 116.1])
    >>> b = fix_digest(["v", "u"], [2, 1], [40.1, 40.0], [116.1, 116.0])
    >>> c = fix_digest(["u", "v"], [1, 2], [40.0, 40.1], [116.0, 116.10001])
    >>> bool((a == b).all()), bool((a == c).all()), int(a[0])
    (True, False, 2)
    """
    frame = pd.DataFrame(
        {
            "user": np.asarray(user, dtype=object).astype(str),
            "t": np.asarray(t_ns, dtype=np.int64),
            "lat": np.round(np.asarray(lat, dtype=np.float64) * 1e7).astype(np.int64),
            "lon": np.round(np.asarray(lon, dtype=np.float64) * 1e7).astype(np.int64),
        }
    )
    out = np.zeros(3, dtype=np.uint64)
    out[0] = len(frame)
    for i, hash_key in enumerate(_DIGEST_KEYS, start=1):
        rows = pd.util.hash_pandas_object(frame, index=False, hash_key=hash_key).to_numpy()
        out[i] = rows.sum(dtype=np.uint64)  # wraps modulo 2**64
    return out


def add_digests(digests: Any) -> np.ndarray:
    """The :func:`fix_digest` of a log from those of its parts (sums modulo ``2**64``)."""
    parts = np.asarray(list(digests), dtype=np.uint64).reshape(-1, 3)
    return parts.sum(axis=0, dtype=np.uint64)


def bound_pseudonymizer(pseud: Pseudonymizer, digest: np.ndarray, *context: Any) -> Pseudonymizer:
    """The key of a release's per-window and trajectory pseudonyms, bound to its input.

    ``HMAC(key, user, window, region)`` under the bare key would give two releases of
    different inputs (a corrected log, a log one user apart) the same pseudonyms, so they
    would join row for row and subtract.  The pseudonyms are keyed instead by a key drawn
    from :meth:`Pseudonymizer.rng` bound to the fixes' content (:func:`fix_digest`) and
    ``context``: the same input, parameters and key give the same pseudonyms (a release
    repeats byte for byte), a different input gives independent ones.  A fresh random key
    gives a fresh key.  ``linkage="pseudonym"`` does not use this: linking is its purpose.
    """
    secret = pseud.bound("location fixes", np.asarray(digest, dtype=np.uint64))
    key = secret.rng("location pseudonym key", *context).bytes(32)
    return Pseudonymizer(key, pseud.length, source=pseud.key_source)


def published_users(
    u: np.ndarray,
    w: np.ndarray,
    users: Any,
    pseud: Any,
    linkage: str,
    region: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Codes and pseudonyms of the published users of triples ``(u, w)`` (in ``region``).

    ``linkage="window"`` (the default of :func:`location.cloak`) gives every (user, window,
    region) its own keyed pseudonym, ``HMAC(key, user, window, region)``, so neither a user's
    windows nor the regions one user visits within a window can be joined through the
    pseudonym, within a release or across releases (one pseudonym per (user, window) let an
    attacker intersect a user's regions of one window below ``k``); ``"pseudonym"`` gives one
    pseudonym per user for every window.  Without ``region`` the unit is (user, window).
    For ``"window"`` pass ``pseud`` bound to the input (:func:`bound_pseudonymizer`), so
    that releases of different inputs under one key share no pseudonym either.

    Returns
    -------
    (codes, pseudonyms)
        ``codes[i]`` indexes ``pseudonyms`` for triple ``i``.
    """
    values = np.asarray(users, dtype=object).astype(str)
    if linkage == "pseudonym":
        return u, pseud.pseudonymize(values)
    parts = [np.asarray(u, dtype=np.int64), np.asarray(w, dtype=np.int64)]
    if region is not None:
        parts.append(np.asarray(region, dtype=np.int64))
    unique, codes = np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)
    labels = pd.Series(values[unique[:, 0]]).str.cat(
        pd.Series(unique[:, 1]).astype(str), sep="\x1fwindow\x1f"
    )
    if region is not None:
        labels = labels.str.cat(pd.Series(unique[:, 2]).astype(str), sep="\x1fregion\x1f")
    return codes.reshape(-1).astype(np.int64), pseud.pseudonymize(labels.to_numpy())


def publication_keys(
    w: np.ndarray, region: np.ndarray, user: np.ndarray, pseudonyms: np.ndarray
) -> PublicationKeys:
    """Keys ordering rows by (window, region id, pseudonym), all published values.

    Parameters
    ----------
    w, region, user : int arrays of equal length
        Window code, region code and dense user code of each row.
    pseudonyms : array of str
        The pseudonym of each dense user code.
    """
    region_rank, regions = encode_values(region)
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
        return PublicationKeys(key, w, region_rank, user_rank, regions, sorted_pseudonyms, True, w0)
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

    def frame(
        self, grid: CloakingGrid, window_ns: int, lo: int = 0, hi: int | None = None, start: int = 0
    ) -> pd.DataFrame:
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


def published_rows(
    keys: PublicationKeys, weight: np.ndarray | None, aggregate: bool
) -> tuple[PublishedRows, np.ndarray]:
    """Sort rows (fixes, or triples with ``weight`` fixes each) into publication order.

    Returns the rows and ``order``, the input rows' positions in publication order.
    """
    order = np.argsort(keys.key)
    if not aggregate:
        w, region_rank, user_rank = keys.decode(order)
        repeat = None if weight is None else weight[order]
        return PublishedRows(
            user_rank, w, region_rank, repeat, None, keys.regions, keys.pseudonyms
        ), order
    ks = keys.key[order]
    start = np.ones(len(ks), dtype=bool)
    np.not_equal(ks[1:], ks[:-1], out=start[1:])
    starts = np.flatnonzero(start)
    fixes = np.ones(len(ks), dtype=np.int64) if weight is None else weight[order]
    n_fixes = np.add.reduceat(fixes, starts) if starts.size else np.zeros(0, dtype=np.int64)
    w, region_rank, user_rank = keys.decode(order[starts])
    return PublishedRows(
        user_rank, w, region_rank, None, n_fixes, keys.regions, keys.pseudonyms
    ), order


def require_some_published(region: np.ndarray, k: int) -> None:
    """Refuse a release where every fix would be suppressed (both paths)."""
    if not (region >= 0).any():
        raise InfeasibleError(
            f"no time window holds {k} distinct users: every fix would be suppressed"
        )


_UNITS = ((86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second"))


def window_words(window_ns: int, adjective: bool = False) -> str:
    """A window length in words: ``"15 minutes"`` (``adjective``: ``"15-minute"``).

    Examples
    --------
    >>> window_words(15 * 60 * 10**9), window_words(3_600 * 10**9, adjective=True)
    ('15 minutes', '1-hour')
    >>> window_words(90 * 60 * 10**9), window_words(2 * 86_400 * 10**9)
    ('90 minutes', '2 days')
    >>> window_words(1_500_000_000)
    '1.5 seconds'
    """
    seconds = window_ns / 1e9
    n, name = seconds, "second"
    for size, unit in _UNITS:
        if seconds >= size and (seconds / size).is_integer():
            n, name = seconds // size, unit
            break
    if adjective:
        return f"{n:g}-{name}"
    return f"{n:g} {name}{'' if n == 1 else 's'}"


def _km2(value: float) -> str:
    """An area in km² to about two significant digits (thousands separated)."""
    if value >= 100:
        digits = max(int(math.floor(math.log10(value))) - 2, 0)
        return f"{round(value, -digits):,.0f}"
    return f"{value:.2g}" if value < 1 else f"{value:.3g}"


def region_areas_km2(grid: CloakingGrid, codes: np.ndarray) -> np.ndarray:
    """Area in km² of each published region code (from the grid, no fix needed)."""
    b = grid.bounds(np.asarray(codes, dtype=np.int64))
    return lonlat_rectangle_area(b[:, 0], b[:, 1], b[:, 2], b[:, 3]) / 1e6


def transformation_text(
    grid: CloakingGrid, regions: np.ndarray, window_ns: int, aggregate: bool
) -> str:
    """What was done to the fixes, in one sentence a reader needs no source for."""
    area = region_areas_km2(grid, regions)
    if area.size:
        sizes = (
            f"{_km2(area.min())}-{_km2(area.max())} km² (median {_km2(float(np.median(area)))} km²)"
        )
    else:
        sizes = "no size (nothing published)"
    rows = (
        "one row per user, window and region with its fix count" if aggregate else "one row per fix"
    )
    return (
        f"fixes replaced by grid regions of {sizes} in {window_words(window_ns, True)} "
        f"windows; pseudonyms per user; {rows}"
    )


def release_parameters(
    k: int,
    window_ns: int,
    method: str,
    grid: CloakingGrid,
    aggregate: bool,
    seed: int | None,
    columns: dict[str, str],
    linkage: str = "window",
    levels: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """``Release.parameters`` of both paths (the window in words).

    ``levels`` is the one asked for (``None``: one top cell over every fix), not the
    pyramid's height, which spans suppressed fixes too.
    """
    return {
        "k": k,
        "window": window_words(window_ns),
        "method": method,
        "cell_size_m": grid.cell_size,
        "levels": levels,
        "aggregate": aggregate,
        "linkage": linkage,
        "columns": columns,
        "seed": seed,
        **extra,
    }


def release_info(
    grid: CloakingGrid,
    *,
    k: int,
    window_ns: int,
    aggregate: bool,
    regions: np.ndarray,
    n_cloak_suppressed: int,
    n_dropped: int,
    reasons: dict,
    users: int,
    windows: int,
    key_source: str,
    stats: dict,
) -> dict[str, Any]:
    """``Release.info`` of both paths: counts, the data-independent grid and the text."""
    return {
        "guarantee": (
            f"Every published region holds at least {k} distinct users in each "
            f"{window_words(window_ns, True)} time window (the log has {users:,} "
            f"user{'' if users == 1 else 's'})."
        ),
        "transformation_text": transformation_text(grid, regions, window_ns, aggregate),
        "n_users": users,
        "grid": grid.to_dict(),
        "fixes_suppressed_by_cloaking": n_cloak_suppressed,
        "invalid_fixes_dropped": n_dropped,
        "invalid_reasons": reasons,
        "bad_lines_dropped": n_dropped,
        "users": users,
        "windows": windows,
        "pseudonym_key": key_source,
        "warnings": [m for m in (k_warning(k),) if m],
        **stats,
    }
