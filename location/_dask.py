"""Cloaking of a Dask DataFrame: the same release and measures as pandas, out of core.

1. per partition: validity counts, coordinate and time bounds (fix the grid and windows);
2. per partition: the (level-0 cell, window, user) triples with their fix counts, packed
   into one int64 key and reduced on the client, where the assignment runs exactly as
   for pandas (it depends only on the triples and their weights, never on row order);
3. the published rows are the published triples sorted by (window, region, pseudonym),
   each repeated once per fix (or once with its count when aggregated): a lazy Dask
   DataFrame built from the triples alone, row for row equal to the pandas release, since
   rows that tie are identical.  Its partitions build only the columns asked for, so the
   verifier's recount never draws polygons.
4. ``Release.source_index`` (lazy) and the measures place each input fix at its published
   row: identical rows hold their fixes in input order, the order the pandas path's
   measures use too, so every measure is computed over the same fixes in the same order
   (two more passes over the input, skipped with ``measures=False``).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from structanon import CheckResult, Release
from structanon._engine import compute, is_dask
from structanon._finish import Timings, add_warning, finish_release
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer, remove_folder

from . import risk as _risk
from ._assign import Triples, assign_regions
from ._grid import CloakingGrid
from ._input import DROP_HINT, no_fixes_error, parse_fixes, user_keys
from ._publish import (
    LINKAGE_WARNING,
    PublishedRows,
    add_digests,
    bound_pseudonymizer,
    fix_digest,
    publication_keys,
    published_rows,
    published_users,
    release_info,
    release_parameters,
    require_some_published,
)
from ._verify import OnePolygonPerRegion, cloaking_models, region_bounds_rows, verify_cloaked
from .metrics import _haversine, _overlap, _quantiles, region_bounds

__all__ = ["cloak_dask", "DASK_LINKAGES"]

DASK_LINKAGES = ("window", "pseudonym")
_KEY_LIMIT = 2**62
_N_QUERIES, _HALF_SIZE_M, _BINS = 200, (250.0, 2500.0), 64  # as metrics.utility_summary


# -- pass 1: counts and bounds ----------------------------------------------------------


def _stats(pdf: pd.DataFrame, cols: tuple[str, str, str, str], window_ns: int) -> pd.DataFrame:
    f = parse_fixes(pdf, *cols, drop_invalid=True)
    windows, fixes = np.unique(np.floor_divide(f.t_ns, window_ns), return_counts=True)
    first_bad = -1
    if f.n_dropped:
        bad = np.ones(f.n_input, dtype=bool)
        bad[f.positions] = False
        first_bad = int(np.flatnonzero(bad)[0])
    some = len(f.index) > 0
    slat = np.sin(np.radians(f.lat)) if some else np.zeros(0)
    row = {
        "n_input": f.n_input,
        "n_valid": len(f.index),
        "reasons": json.dumps(f.dropped),
        "first_bad": first_bad,
        "first_bad_label": str(pdf.index[first_bad]) if first_bad >= 0 else "",
        "lon_min": f.lon.min() if some else np.inf,
        "lon_max": f.lon.max() if some else -np.inf,
        "lat_min": f.lat.min() if some else np.inf,
        "lat_max": f.lat.max() if some else -np.inf,
        "slat_min": slat.min() if some else np.inf,
        "slat_max": slat.max() if some else -np.inf,
        "t_min": f.t_ns.min() if some else np.iinfo(np.int64).max,
        "t_max": f.t_ns.max() if some else np.iinfo(np.int64).min,
        "windows": (windows.astype(np.int64), fixes.astype(np.int64)),
        "digest": fix_digest(f.user, f.t_ns, f.lat, f.lon),
    }
    return pd.DataFrame([row])


_FLOAT_STATS = ("lon_min", "lon_max", "lat_min", "lat_max", "slat_min", "slat_max")
_STATS_META = pd.DataFrame(
    {
        "n_input": pd.Series(dtype=np.int64),
        "n_valid": pd.Series(dtype=np.int64),
        "reasons": pd.Series(dtype=object),
        "first_bad": pd.Series(dtype=np.int64),
        "first_bad_label": pd.Series(dtype=object),
        **{c: pd.Series(dtype=np.float64) for c in _FLOAT_STATS},
        "t_min": pd.Series(dtype=np.int64),
        "t_max": pd.Series(dtype=np.int64),
        "windows": pd.Series(dtype=object),
        "digest": pd.Series(dtype=object),
    }
)


class InvalidFixes(InputError):
    """Invalid fixes counted per partition (no file line known): ``summary`` is the count
    by reason, for a caller that finds the first one in the files again."""

    def __init__(self, message: str, summary: str) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass
class _Counts:
    """First pass: input and valid fixes, reasons for the invalid ones, bounds."""

    n_input: int
    n_valid: int
    n_parts: int
    dropped: dict[str, int]
    bounds: tuple[float, float, float, float]
    slat: tuple[float, float]
    t_range: tuple[int, int]
    valid_per_part: np.ndarray
    windows: list[tuple[np.ndarray, np.ndarray]]  # per partition: windows, their fixes
    digest: np.ndarray  # fix_digest of the valid fixes (the pseudonyms' binding)

    def window_fixes(self, window_ns: int) -> np.ndarray:
        """Valid fixes per window, from the first window (``t_min // window_ns``) on."""
        w0 = self.t_range[0] // window_ns
        out = np.zeros(self.t_range[1] // window_ns - w0 + 1, dtype=np.int64)
        for w, n in self.windows:
            np.add.at(out, w - w0, n)
        return out


def _first_pass(
    ddf: Any, cols: tuple[str, str, str, str], drop_invalid: bool, window_ns: int
) -> _Counts:
    (stats,) = compute(ddf.map_partitions(_stats, cols, window_ns, meta=_STATS_META))
    stats = stats.reset_index(drop=True)
    n_input, n_valid = int(stats["n_input"].sum()), int(stats["n_valid"].sum())
    dropped: dict[str, int] = {}
    for reasons in stats["reasons"]:
        for reason, count in json.loads(reasons).items():
            dropped[reason] = dropped.get(reason, 0) + count
    if n_valid < n_input and not drop_invalid:
        part = int(np.flatnonzero(stats["first_bad"].to_numpy() >= 0)[0])
        summary = f"{n_input - n_valid} invalid fix(es): {dropped}"
        raise InvalidFixes(
            f"{summary}; first: the row labelled "
            f"{stats['first_bad_label'].iloc[part]} in partition {part} "
            f"({DROP_HINT})",
            summary=summary,
        )
    if n_valid == 0:
        raise no_fixes_error(n_input, dropped)
    return _Counts(
        n_input,
        n_valid,
        len(stats),
        dropped,
        (
            stats["lon_min"].min(),
            stats["lon_max"].max(),
            stats["lat_min"].min(),
            stats["lat_max"].max(),
        ),
        (stats["slat_min"].min(), stats["slat_max"].max()),
        (int(stats["t_min"].min()), int(stats["t_max"].max())),
        stats["n_valid"].to_numpy(np.int64),
        list(stats["windows"]),
        add_digests(stats["digest"]),
    )


# -- pass 2: triples --------------------------------------------------------------------


@dataclass
class _Frame:
    """What every partition needs to place its fixes on the grid and in windows."""

    cols: tuple[str, str, str, str]
    grid: CloakingGrid
    window_ns: int
    w0: int
    n_windows: int

    def cell_windows(self, pdf: pd.DataFrame) -> tuple[Any, np.ndarray]:
        """Valid fixes and their packed (level-0 cell, window) codes."""
        f = parse_fixes(pdf, *self.cols, drop_invalid=True)
        ix, iy = self.grid.cells(f.lon, f.lat)
        w = np.floor_divide(f.t_ns, self.window_ns) - self.w0
        return f, (ix * self.grid.ny + iy) * self.n_windows + w


def _triples(pdf: pd.DataFrame, frame: _Frame, partition_info: Any = None) -> pd.DataFrame:
    f, cw = frame.cell_windows(pdf)
    codes, uniques = pd.factorize(user_keys(f.user))
    n_local = max(len(uniques), 1)
    if cw.size and (int(cw.max()) + 1) * n_local < _KEY_LIMIT:
        key, weight = np.unique(cw * n_local + codes, return_counts=True)
        cw_u, code_u = np.divmod(key, n_local)
    else:
        g = pd.DataFrame({"cw": cw, "u": codes}).groupby(["cw", "u"], sort=False).size()
        cw_u = g.index.get_level_values(0).to_numpy(np.int64)
        code_u = g.index.get_level_values(1).to_numpy(np.int64)
        weight = g.to_numpy(np.int64)
    part = partition_info["number"] if partition_info else 0
    return pd.DataFrame(
        {
            "cw": cw_u.astype(np.int64),
            "user": np.asarray(uniques)[code_u] if len(uniques) else np.zeros(0, object),
            "weight": weight.astype(np.int64),
            "part": np.int64(part),
        }
    )


def _triples_meta(user_dtype: Any) -> pd.DataFrame:
    integer = pd.api.types.is_integer_dtype(user_dtype)
    return pd.DataFrame(
        {
            "cw": pd.Series(dtype=np.int64),
            "user": pd.Series(dtype=np.int64 if integer else object),
            "weight": pd.Series(dtype=np.int64),
            "part": pd.Series(dtype=np.int64),
        }
    )


@dataclass
class _Reduced:
    """The triples, sorted by their key (ix, iy, window, user), and where they came from."""

    triples: Triples
    keys: np.ndarray  # sorted triple keys: cw * n_users + user code
    users: np.ndarray  # distinct user ids, in the order of their keys
    part_triple: np.ndarray  # per (triple, partition) row: the triple
    part: np.ndarray  # ... its partition
    part_weight: np.ndarray  # ... and its fixes there


def _reduce_triples(ddf: Any, frame: _Frame, k: int) -> _Reduced:
    (per_part,) = compute(
        ddf.map_partitions(_triples, frame, meta=_triples_meta(ddf[frame.cols[0]].dtype))
    )
    u_codes, users = pd.factorize(per_part["user"], sort=True)
    n_users = len(users)
    if n_users < k:
        raise InfeasibleError(f"k={k} exceeds the number of users in the log ({n_users})")
    if frame.grid.nx * frame.grid.ny * frame.n_windows * n_users >= _KEY_LIMIT:
        raise InputError(
            "too many cells x windows x users to index the dask path: increase "
            "cell_size or window, or cloak the log in parts"
        )
    packed = per_part["cw"].to_numpy(np.int64) * n_users + u_codes.astype(np.int64)
    keys, inverse = np.unique(packed, return_inverse=True)
    inverse = inverse.reshape(-1)
    part_weight = per_part["weight"].to_numpy(np.int64)
    weight = np.bincount(inverse, weights=part_weight, minlength=len(keys)).astype(np.int64)
    cw, u = np.divmod(keys, n_users)
    cell, wd = np.divmod(cw, frame.n_windows)
    ix, iy = np.divmod(cell, frame.grid.ny)
    return _Reduced(
        Triples(ix, iy, wd + frame.w0, u, weight),
        keys,
        np.asarray(users),
        inverse,
        per_part["part"].to_numpy(np.int64),
        part_weight,
    )


# -- publication ------------------------------------------------------------------------


def _published_users(
    u: np.ndarray,
    w: np.ndarray,
    users: np.ndarray,
    pseud: Pseudonymizer,
    linkage: str,
    region: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`location._publish.published_users`, with the (user, window[, region]) units
    packed into one int64 (a 1-d unique instead of a row-wise one, in the same
    lexicographic order: the same codes and labels)."""
    if linkage != "window" or not len(u):
        return published_users(u, w, users, pseud, linkage, region)
    w0 = int(w.min())
    n_w = int(w.max()) - w0 + 1
    r_codes, r_values = pd.factorize(
        region if region is not None else np.zeros(len(u), np.int64), sort=True
    )
    n_r = max(len(r_values), 1)
    if len(users) * n_w * n_r >= _KEY_LIMIT:
        return published_users(u, w, users, pseud, linkage, region)
    unique, codes = np.unique((u * n_w + (w - w0)) * n_r + r_codes, return_inverse=True)
    rest, rr = np.divmod(unique, n_r)
    uu, ww = np.divmod(rest, n_w)
    values = np.asarray(users, dtype=object).astype(str)
    labels = pd.Series(values[uu]).str.cat(pd.Series(ww + w0).astype(str), sep="\x1fwindow\x1f")
    if region is not None:
        regions = pd.Series(np.asarray(r_values, dtype=np.int64)[rr]).astype(str)
        labels = labels.str.cat(regions, sep="\x1fregion\x1f")
    return codes.reshape(-1).astype(np.int64), pseud.pseudonymize(labels.to_numpy())


@dataclass
class _Lookup:
    """Everything a partition needs to find each fix's published row (or suppressed rank).

    Identical published rows form a run; a run holds its fixes in input order (partition
    by partition, then row by row), so a fix's row is its run's first row, plus the run's
    fixes in earlier partitions, plus its rank among the run's fixes in its partition.
    """

    frame: _Frame
    users: np.ndarray  # sorted user keys
    keys: np.ndarray  # sorted triple keys
    run: np.ndarray  # run of each triple, -1 when suppressed
    aggregate: bool
    n_parts: int
    offset_keys: np.ndarray  # sorted run * n_parts + part
    offsets: np.ndarray  # the published row of that run's first fix in that partition
    suppressed_before: np.ndarray  # suppressed valid fixes in earlier partitions

    def place(self, pdf: pd.DataFrame, part: int) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """Valid fixes, their triples, their runs (-1: suppressed) and their per-fix rows
        (``-1 - rank`` among the suppressed fixes for a suppressed one)."""
        f, cw = self.frame.cell_windows(pdf)
        triple, run, row = self.place_codes(cw, user_keys(f.user), part)
        return f, triple, run, row

    def place_codes(
        self, cw: np.ndarray, ukeys: np.ndarray, part: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`place` from the fixes' packed (cell, window) codes and user keys."""
        u = np.searchsorted(self.users, ukeys)
        triple = np.searchsorted(self.keys, cw * len(self.users) + u)
        run = self.run[triple]
        kept = run >= 0
        row = np.empty(run.size, dtype=np.int64)
        row[~kept] = -1 - (self.suppressed_before[part] + np.arange(int((~kept).sum())))
        r = run[kept]
        by_run = np.argsort(r, kind="stable")
        rs = r[by_run]
        first = np.ones(rs.size, dtype=bool)
        np.not_equal(rs[1:], rs[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        rank = np.empty(rs.size, dtype=np.int64)
        rank[by_run] = np.arange(rs.size) - np.repeat(starts, np.diff(np.append(starts, rs.size)))
        at = np.searchsorted(self.offset_keys, r * self.n_parts + part)
        row[kept] = self.offsets[at] + rank
        return triple, run, row


def _runs(
    red: _Reduced, region: np.ndarray, pkeys: Any, order: np.ndarray, kept_pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The run (distinct published row) of each triple, and each run's number of fixes."""
    ks = pkeys.key[order]
    new = np.ones(ks.size, dtype=bool)
    np.not_equal(ks[1:], ks[:-1], out=new[1:])
    run = np.full(len(region), -1, dtype=np.int64)
    run[kept_pos[order]] = np.cumsum(new) - 1
    weight = red.triples.weight
    run_fixes = np.bincount(run[kept_pos], weights=weight[kept_pos]).astype(np.int64)
    return run, run_fixes


def _lookup(
    red: _Reduced, frame: _Frame, run: np.ndarray, run_fixes: np.ndarray, aggregate: bool, n: int
) -> _Lookup:
    """Per (run, partition): the published row of the run's first fix there."""
    pr = run[red.part_triple]
    kept = pr >= 0
    supp = np.bincount(red.part[~kept], weights=red.part_weight[~kept], minlength=n)
    suppressed_before = (np.cumsum(supp) - supp).astype(np.int64)
    okey = pr[kept] * n + red.part[kept]
    by = np.argsort(okey)
    okey, w = okey[by], red.part_weight[kept][by]
    first_row = np.cumsum(run_fixes) - run_fixes
    r = okey // n
    before = np.cumsum(w) - w
    start = np.ones(r.size, dtype=bool)
    np.not_equal(r[1:], r[:-1], out=start[1:])
    run_start = np.repeat(before[start], np.diff(np.append(np.flatnonzero(start), r.size)))
    return _Lookup(
        frame,
        user_keys(red.users),
        red.keys,
        run,
        aggregate,
        n,
        okey,
        first_row[r] + before - run_start,
        suppressed_before,
    )


def _source_rows(pdf: pd.DataFrame, lookup: _Lookup, partition_info: Any = None) -> pd.Series:
    """Each published fix of the partition: input row label -> published row number."""
    part = partition_info["number"] if partition_info else 0
    f, _, run, row = lookup.place(pdf, part)
    kept = run >= 0
    published = run[kept] if lookup.aggregate else row[kept]
    return pd.Series(published, index=f.index[kept], name="published_row")


def _rows_part(
    piece: tuple[int, int, int],
    rows: PublishedRows,
    polygons: np.ndarray,
    window_ns: int,
    columns: list[str] | None = None,
) -> pd.DataFrame:
    """One partition of the published frame, with only ``columns`` (Dask projects them)."""
    lo, hi, start = piece
    user, w, rank = rows.user_rank[lo:hi], rows.w[lo:hi], rows.region_rank[lo:hi]
    if rows.repeat is not None:
        rep = rows.repeat[lo:hi]
        user, w, rank = np.repeat(user, rep), np.repeat(w, rep), np.repeat(rank, rep)
    make = {
        "user": lambda: _text(rows.pseudonyms[user]),
        "window": lambda: pd.to_datetime(w.astype(np.int64) * window_ns, unit="ns", utc=True),
        "region_id": lambda: rows.regions[rank].astype(np.int64),
        "region": lambda: polygons[rank],
        "n_fixes": lambda: np.asarray(rows.n_fixes)[lo:hi].astype(np.int64),
    }
    names = [c for c in make if columns is None or c in columns]
    if rows.n_fixes is None and "n_fixes" in names:
        names.remove("n_fixes")
    index = pd.RangeIndex(start, start + len(user))
    return pd.DataFrame({c: make[c]() for c in names}, index=index)


def _text(values: np.ndarray) -> np.ndarray:
    """Pseudonyms as Python strings (a batch keeps them as fixed-width ASCII bytes)."""
    return values.astype(str).astype(object) if values.dtype.kind == "S" else values


def _lazy_frame(rows: PublishedRows, grid: CloakingGrid, window_ns: int, npartitions: int) -> Any:
    """The published rows as a lazy Dask DataFrame of about ``npartitions`` parts."""
    import dask
    import dask.dataframe as dd

    reps = rows.repeat if rows.repeat is not None else np.ones(len(rows), dtype=np.int64)
    ends = np.cumsum(reps)
    total = int(ends[-1]) if ends.size else 0
    cuts = np.unique(
        np.searchsorted(ends, np.linspace(0, total, npartitions + 1)[1:-1], side="right")
    )
    bounds = [0, *[int(c) for c in cuts if 0 < c < len(rows)], len(rows)]
    starts = [0 if lo == 0 else int(ends[lo - 1]) for lo in bounds[:-1]]
    divisions = (*starts, max(total - 1, 0))
    polygons = grid.polygons(rows.regions) if len(rows.regions) else np.zeros(0, dtype=object)
    pieces = list(zip(bounds[:-1], bounds[1:], starts))
    meta = _rows_part((0, 0, 0), rows, polygons, window_ns)
    with dask.config.set({"dataframe.convert-string": False}):  # the same dtypes as pandas
        return dd.from_map(
            _rows_part,
            pieces,
            args=[_shared(rows), _shared(polygons), window_ns],
            meta=meta,
            divisions=divisions,
            enforce_metadata=False,
        )


def _shared(value: Any) -> Any:
    """``value`` scattered to every worker of the active distributed client, else itself."""
    try:
        from distributed import get_client

        return get_client().scatter([value], broadcast=True, hash=False)[0]
    except (ImportError, ValueError):  # no distributed client: the local schedulers share memory
        return value


def _check_columns(ddf: Any, cols: tuple[str, str, str, str]) -> None:
    for role, name in zip(("user", "time", "lat", "lon"), cols):
        if name not in ddf.columns:
            raise InputError(
                f"no {role} column {name!r}; columns are {list(ddf.columns)}", column=name
            )


def _distinct_shapes(pdf: pd.DataFrame) -> pd.DataFrame:
    """The distinct (region_id, polygon object) rows of a partition."""
    obj = np.fromiter(map(id, pdf["region"].to_numpy()), dtype=np.int64, count=len(pdf))
    keep = ~pd.DataFrame({"r": pdf["region_id"].to_numpy(), "o": obj}).duplicated().to_numpy()
    return pdf[keep]


_KEYS_META = pd.DataFrame(
    {
        "region_id": pd.Series(dtype=np.int64),
        "window": pd.Series(dtype=np.int64),
        "user": pd.Series(dtype=object),
    }
)


def _distinct_keys(pdf: pd.DataFrame) -> pd.DataFrame:
    """The distinct (region_id, window, user) rows of a partition (window in ns): runs of
    equal rows (the release is sorted) are cut first, so the hashing sees one row per run."""
    region, user = pdf["region_id"].to_numpy(), pdf["user"].to_numpy()
    window = pdf["window"].array.asi8 if len(pdf) else np.zeros(0, np.int64)
    new = np.ones(len(pdf), dtype=bool)
    new[1:] = (region[1:] != region[:-1]) | (window[1:] != window[:-1]) | (user[1:] != user[:-1])
    return pd.DataFrame(
        {"region_id": region[new], "window": window[new], "user": user[new]}
    ).drop_duplicates()


_GROUPS_META = pd.DataFrame(
    {
        "window": pd.Series(dtype=np.int64),
        "region_id": pd.Series(dtype=np.int64),
        "users": pd.Series(dtype=np.int64),
        "first": pd.Series(dtype=object),
        "last": pd.Series(dtype=object),
        "sorted": pd.Series(dtype=bool),
    }
)


def _group_users(pdf: pd.DataFrame) -> pd.DataFrame:
    """Distinct users per (window, region_id) run of a partition sorted by (window,
    region_id, user), with each run's first and last user; ``sorted`` says whether the
    partition is sorted (when it is not, the verifier gathers the rows instead)."""
    if not len(pdf):
        return _GROUPS_META.copy()
    window = pdf["window"].array.asi8
    region, user = pdf["region_id"].to_numpy(np.int64), pdf["user"].to_numpy()
    dw, dr = np.diff(window), np.diff(region)
    same_user = user[1:] == user[:-1]
    ok = bool(((dw > 0) | ((dw == 0) & ((dr > 0) | ((dr == 0) & (user[1:] >= user[:-1]))))).all())
    new_group = np.ones(len(pdf), dtype=bool)
    new_group[1:] = (dw != 0) | (dr != 0)
    new_user = new_group.copy()
    new_user[1:] |= ~same_user
    starts = np.flatnonzero(new_group)
    gid = np.cumsum(new_group) - 1
    ends = np.append(starts[1:], len(pdf)) - 1
    return pd.DataFrame(
        {
            "window": window[starts],
            "region_id": region[starts],
            "users": np.bincount(gid, weights=new_user).astype(np.int64),
            "first": user[starts],
            "last": user[ends],
            "sorted": ok,
        }
    )


def _sorted_counts(groups: pd.DataFrame) -> np.ndarray | None:
    """Distinct users per published (region, window) from the partitions' runs, or None
    when the rows are not sorted by (window, region_id, user) across partitions."""
    if not groups["sorted"].all():
        return None
    w, r = groups["window"].to_numpy(), groups["region_id"].to_numpy()
    first, last = groups["first"].to_numpy(), groups["last"].to_numpy()
    dw, dr = np.diff(w), np.diff(r)
    if not ((dw > 0) | ((dw == 0) & ((dr > 0) | ((dr == 0) & (first[1:] >= last[:-1]))))).all():
        return None
    same = np.zeros(len(groups), dtype=bool)  # a run continued from the previous partition
    same[1:] = (dw == 0) & (dr == 0)
    shared = np.zeros(len(groups), dtype=bool)  # ... by the same user
    shared[1:] = same[1:] & (first[1:] == last[:-1])
    gid = np.cumsum(~same) - 1
    users = groups["users"].to_numpy(np.int64) - shared
    return np.bincount(gid, weights=users).astype(np.int64)


@dataclass
class _BatchChecks:
    """The verifier's aggregates of one batch's published partitions, counted by the worker
    from those very partitions (:func:`_batch_checks`): what the client keeps of them is
    one count per published (window, region) and the distinct polygon bounds."""

    counts: np.ndarray | None  # distinct users per run, in order; None: rows not sorted
    first: tuple[int, int, Any] | None  # (window, region_id, user) of the first row
    last: tuple[int, int, Any] | None  # ... of the last row (None: no rows)
    bounds: pd.DataFrame  # :func:`region_bounds_rows` of the partitions


@dataclass
class _PartChecks:
    """The verifier's aggregates of one lazy release, batch by batch, counted by the
    workers from the release's own partitions as they were produced."""

    data: Any  # the lazy release they were counted from
    batches: list[_BatchChecks]  # in release order


def _joined_counts(batches: list[_BatchChecks]) -> np.ndarray | None:
    """Distinct users per published (window, region) of the whole release from the batches'
    counts, joining a run that continues from one batch into the next (its boundary user
    counted once); None when the rows are not sorted by (window, region_id, user)."""
    parts = [b for b in batches if b.last is not None]
    if any(b.counts is None or not b.counts.size for b in parts):
        return None
    out: list[np.ndarray] = []
    tail, prev = 0, None
    for b in parts:
        assert b.counts is not None and b.first is not None
        c = b.counts.astype(np.int64)
        if prev is not None:
            if b.first < prev:  # (window, region_id, user) order
                return None
            if b.first[:2] == prev[:2]:  # the previous batch's last run goes on
                c[0] += tail - int(b.first[2] == prev[2])
            else:
                out.append(np.array([tail], dtype=np.int64))
        out.append(c[:-1])
        tail, prev = int(c[-1]), b.last
    if prev is not None:
        out.append(np.array([tail], dtype=np.int64))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _verify_dask(data: Any, k: int, checks: _PartChecks | None = None) -> list[Any]:
    """:func:`verify_cloaked` of a lazy release, both models, in one pass over its rows.

    The release is sorted by (window, region_id, user): each partition reports its runs
    (distinct users per group, and each run's first and last user), and runs that
    continue across partitions are joined, so the client holds one row per published
    (region, window) per partition, not the rows.  The order itself is checked from the
    data; when it does not hold, the distinct (region_id, window, user) rows are gathered
    and counted by the model as for pandas.  ``checks``: the same per-partition
    aggregates, counted by the workers from the published partitions of ``data`` when
    they were made; used only when ``data`` is that very release (anything else is
    read again).
    """
    if not is_dask(data):
        return verify_cloaked(data, k)
    count, polygons = cloaking_models(k)
    counts: np.ndarray | None
    if checks is not None and checks.data is data:
        counts = _joined_counts(checks.batches)
        bounds = pd.concat([b.bounds for b in checks.batches], ignore_index=True)
    else:
        groups, shapes = compute(
            data[["region_id", "window", "user"]].map_partitions(_group_users, meta=_GROUPS_META),
            data[["region_id", "region"]].map_partitions(_distinct_shapes),
        )
        counts = _sorted_counts(groups.reset_index(drop=True)) if len(groups) else None
        bounds = region_bounds_rows(shapes) if len(shapes) else shapes
    if counts is None:
        (keys,) = compute(
            data[["region_id", "window", "user"]].map_partitions(_distinct_keys, meta=_KEYS_META)
        )
        results = [count.check(keys)]
    else:
        ok = count.group_ok(counts)
        results = [
            CheckResult(
                model=f"distinct users per (region, window) >= {k}",
                passed=bool(ok.all()),
                worst=float(counts.min()) if counts.size else float("nan"),
                threshold=float(k),
                n_groups=int(counts.size),
                failing_groups=np.flatnonzero(~ok),
                details={"published_groups": int(counts.size)},
            )
        ]
    if len(bounds):
        assert isinstance(polygons, OnePolygonPerRegion)
        results.append(polygons.check_bounds(bounds))
    return results


# -- measures ---------------------------------------------------------------------------


@dataclass
class _MeasureSetup:
    """The per-region figures and query picks every partition's measure pass needs."""

    lookup: _Lookup
    region_rank: np.ndarray  # rank (in rows.regions) of each triple's region, -1 suppressed
    c_lat: np.ndarray
    c_lon: np.ndarray
    ex: np.ndarray
    ey: np.ndarray
    picks: np.ndarray  # sorted distinct picked positions (published row, or -1 - rank)


def _measure_part(pdf: pd.DataFrame, setup: _MeasureSetup, part: int) -> dict[str, Any]:
    """Density grid, centroid distances by published row, and the picked fixes."""
    f, triple, _, row = setup.lookup.place(pdf, part)
    h0, _, _ = np.histogram2d(f.lon, np.sin(np.radians(f.lat)), bins=[setup.ex, setup.ey])
    kept = row >= 0
    r = setup.region_rank[triple[kept]]
    d = _haversine(f.lat[kept], f.lon[kept], setup.c_lat[r], setup.c_lon[r])
    hit = np.isin(row, setup.picks)  # published row, or -1 - suppressed rank
    w = np.floor_divide(f.t_ns, setup.lookup.frame.window_ns)
    return {
        "h0": h0,
        "rows": row[kept],
        "d": d,
        "picks": (row[hit], f.lon[hit], f.lat[hit], w[hit]),
    }


def _count_part(pdf: pd.DataFrame, frame: _Frame, queries: np.ndarray) -> np.ndarray:
    """Valid fixes of the partition inside each query rectangle and window."""
    f = parse_fixes(pdf, *frame.cols, drop_invalid=True)
    ow = np.floor_divide(f.t_ns, frame.window_ns)
    order = np.argsort(ow, kind="stable")
    ow, x, y = ow[order], f.lon[order], f.lat[order]
    out = np.zeros(len(queries), dtype=np.int64)
    for q, (qx0, qx1, qy0, qy1, wq) in enumerate(queries):
        a, b = np.searchsorted(ow, wq, "left"), np.searchsorted(ow, wq, "right")
        xs, ys = x[a:b], y[a:b]
        out[q] = int(((xs >= qx0) & (xs <= qx1) & (ys >= qy0) & (ys <= qy1)).sum())
    return out


def _regions_frame(rows: PublishedRows, grid: CloakingGrid) -> pd.DataFrame:
    polys = grid.polygons(rows.regions) if len(rows.regions) else np.zeros(0, dtype=object)
    return pd.DataFrame({"region_id": rows.regions.astype(np.int64), "region": polys})


@dataclass
class _MeasureInput:
    ddf: Any
    red: _Reduced
    rows: PublishedRows
    lookup: _Lookup
    region: np.ndarray
    counts: _Counts
    seed: int | None
    linkage: str = "window"

    def fixes_per_row(self) -> np.ndarray:
        reps = self.rows.repeat if self.rows.repeat is not None else self.rows.n_fixes
        return np.asarray(reps, dtype=np.int64)


def _area_measures(m: _MeasureInput, bounds: pd.DataFrame) -> tuple[dict[str, Any], np.ndarray]:
    """``metrics.region_area_distribution`` from the rows (regions in first-row order)."""
    from ._grid import lonlat_rectangle_area

    rank = m.rows.region_rank
    _, first = np.unique(rank, return_index=True)
    appear = rank[np.sort(first)]
    b = bounds.iloc[appear]
    areas = lonlat_rectangle_area(b.west, b.south, b.east, b.north)
    area_of_rank = np.empty(len(m.rows.regions))
    area_of_rank[appear] = np.asarray(areas)
    reps = m.fixes_per_row()
    per_fix = np.repeat(area_of_rank[rank], reps)
    out: dict[str, Any] = {"n_regions": int(len(appear))}
    out.update({f"region_km2_{k}": v for k, v in _quantiles(np.asarray(areas), 1e6).items()})
    out["fix_weighted_mean_km2"] = float(per_fix.mean() / 1e6) if per_fix.size else float("nan")
    return out, np.repeat(rank, reps)


def _range_queries(
    m: _MeasureInput,
    bounds: pd.DataFrame,
    picked: dict[int, tuple[float, float, int]],
    centres: np.ndarray,
    halves: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The queries of ``metrics.range_query_error`` and their estimates from the triples."""
    t = m.red.triples
    kept = m.region >= 0
    groups = (
        pd.DataFrame({"region_id": m.region[kept], "w": t.w[kept], "n": t.weight[kept]})
        .groupby(["region_id", "w"])["n"]
        .sum()
        .reset_index()
        .sort_values("w", kind="stable")
        .reset_index(drop=True)
    )
    b = bounds.loc[groups["region_id"].to_numpy()]
    gx0, gx1 = b.west.to_numpy(), b.east.to_numpy()
    gy0, gy1 = np.sin(np.radians(b.south.to_numpy())), np.sin(np.radians(b.north.to_numpy()))
    gw, gn = groups["w"].to_numpy(), groups["n"].to_numpy()
    from ._grid import EARTH_RADIUS

    queries = np.zeros((len(centres), 5))
    est = np.zeros(len(centres))
    for q, (p, half) in enumerate(zip(centres, halves)):
        cx, cy, wq = picked[int(p)]
        dlat = np.degrees(half / EARTH_RADIUS)
        dlon = dlat / max(np.cos(np.radians(cy)), 1e-6)
        qx0, qx1, qy0, qy1 = cx - dlon, cx + dlon, cy - dlat, cy + dlat
        queries[q] = (qx0, qx1, qy0, qy1, wq)
        ga, gb = np.searchsorted(gw, wq, "left"), np.searchsorted(gw, wq, "right")
        frac = _overlap(gx0[ga:gb], gx1[ga:gb], qx0, qx1) * _overlap(
            gy0[ga:gb], gy1[ga:gb], np.sin(np.radians(qy0)), np.sin(np.radians(qy1))
        )
        est[q] = float((gn[ga:gb] * frac).sum())
    return queries, est


def _heatmap(m: _MeasureInput, bounds: pd.DataFrame, h0: np.ndarray, ex, ey) -> dict[str, Any]:
    """``metrics.heatmap_similarity`` with the cloaked grid from the rows' fix counts."""
    rank = m.rows.region_rank
    reps = m.fixes_per_row()
    _, first = np.unique(rank, return_index=True)
    appear = rank[np.sort(first)]
    fixes = np.bincount(rank, weights=reps, minlength=len(m.rows.regions)).astype(np.int64)
    counts = pd.Series(fixes[appear], index=m.rows.regions[appear]).sort_values(ascending=False)
    h1 = np.zeros_like(h0)
    if len(counts):
        b = bounds.loc[counts.index]
        x0, x1 = b.west.to_numpy()[:, None], b.east.to_numpy()[:, None]
        y0 = np.sin(np.radians(b.south.to_numpy()))[:, None]
        y1 = np.sin(np.radians(b.north.to_numpy()))[:, None]
        ox = _overlap(x0, x1, ex[None, :-1], ex[None, 1:])
        oy = _overlap(y0, y1, ey[None, :-1], ey[None, 1:])
        h1 = ox.T @ (counts.to_numpy()[:, None] * oy)
    a, c = h0.ravel(), h1.ravel()
    cos = float(a @ c / (np.linalg.norm(a) * np.linalg.norm(c))) if c.any() else 0.0
    pa, pc = a / a.sum(), c / c.sum() if c.sum() else c
    hell = float(np.sqrt(max(0.0, 1.0 - np.sqrt(pa * pc).sum())))
    return {"heatmap_cosine": cos, "heatmap_hellinger": hell, "heatmap_bins": _BINS}


def _utility(m: _MeasureInput) -> dict[str, Any]:
    """Every utility measure of the pandas path, over the same fixes in the same order."""
    import dask

    counts = m.counts
    n_valid, n_pub = counts.n_valid, int(m.red.triples.weight[m.region >= 0].sum())
    rng = np.random.default_rng(m.seed)
    pick = rng.integers(0, n_valid, _N_QUERIES)
    halves = rng.uniform(_HALF_SIZE_M[0], _HALF_SIZE_M[1], _N_QUERIES)
    # positions: published row p, or the (p - n_pub)-th suppressed fix, as -1 - rank
    centres = np.where(pick < n_pub, pick, -1 - (pick - n_pub))
    bounds = region_bounds(_regions_frame(m.rows, m.lookup.frame.grid))
    centre_lon = 0.5 * (bounds.west.to_numpy() + bounds.east.to_numpy())
    centre_lat = np.degrees(
        np.arcsin(
            0.5
            * (
                np.sin(np.radians(bounds.south.to_numpy()))
                + np.sin(np.radians(bounds.north.to_numpy()))
            )
        )
    )
    rank_of_code = pd.Series(np.arange(len(m.rows.regions)), index=m.rows.regions)
    region_rank = np.full(len(m.region), -1, dtype=np.int64)
    kept = m.region >= 0
    region_rank[kept] = rank_of_code.loc[m.region[kept]].to_numpy()
    lon_lo, lon_hi = counts.bounds[0], counts.bounds[1]
    ex = np.linspace(lon_lo, lon_hi + 1e-12, _BINS + 1)
    ey = np.linspace(counts.slat[0], counts.slat[1] + 1e-12, _BINS + 1)
    setup = _MeasureSetup(m.lookup, region_rank, centre_lat, centre_lon, ex, ey, np.unique(centres))
    shared = _shared(setup)
    parts = m.ddf.to_delayed()
    results = compute(*[dask.delayed(_measure_part)(p, shared, i) for i, p in enumerate(parts)])
    h0 = np.sum([r["h0"] for r in results], axis=0)
    d = np.empty(n_pub)
    picked: dict[int, tuple[float, float, int]] = {}
    for r in results:
        d[r["rows"]] = r["d"]
        for p, x, y, w in zip(*r["picks"]):
            picked[int(p)] = (float(x), float(y), int(w))
    out: dict[str, Any] = {"suppression_share": 1.0 - n_pub / n_valid}
    area, _ = _area_measures(m, bounds)
    out.update(area)
    if n_pub:
        out.update({f"centroid_error_m_{k}": v for k, v in _quantiles(d).items() if k != "max"})
    queries, est = _range_queries(m, bounds, picked, centres, halves)
    shared_q = _shared(queries)
    true_parts = compute(*[dask.delayed(_count_part)(p, m.lookup.frame, shared_q) for p in parts])
    true = np.sum(true_parts, axis=0)
    errors = np.abs(est - true) / np.maximum(true, 1)
    out.update(
        {
            "range_query_rel_error_mean": float(errors.mean()),
            "range_query_rel_error_median": float(np.median(errors)),
            "range_queries": _N_QUERIES,
        }
    )
    out.update(_heatmap(m, bounds, h0, ex, ey))
    return out


def _measure(m: _MeasureInput, grid: CloakingGrid):
    """The Dask path's measures (run after verification): those of the pandas path."""

    def measure(release: Release) -> None:
        t, region = m.red.triples, m.region
        kept = region >= 0
        utility = _utility(m)
        utility["suppression_share"] = release.suppressed / release.n_individuals
        before = pd.DataFrame(
            {
                "user": t.u,
                "place": t.ix * grid.ny + t.iy,
                "window": t.w,
                "weight": t.weight,
            }
        )
        after = before[kept].assign(place=region[kept])
        release.utility = utility
        release.risk = _risk.risk_summary(before, after, seed=m.seed, linkage=m.linkage)

    return measure


# -- window batches: the out-of-core path (measures=False) ------------------------------
#
# The assignment of a (level-0 cell, window, user) triple depends only on the triples of
# its window (every count is per window), and the release is sorted by window first.  So
# the triples are cut into batches of consecutive windows, each batch is assigned,
# pseudonymized and ordered on a worker, and the release is the batches' rows one after
# the other: row for row the pandas release.  The client holds per-window fix counts,
# per-batch summaries and the distinct user count, nothing that grows with the
# (user, window) pairs.

#: fixes per batch of windows (a window is never split, so a batch may hold more)
BATCH_FIXES = 4_000_000
#: published rows per partition of the lazy release
PART_ROWS = 1_000_000


@dataclass
class _Piece:
    """One input partition's (window, level-0 cell, user) triples, sorted by window."""

    part: int
    wd: np.ndarray  # window offset from frame.w0, sorted
    cell: np.ndarray  # ix * ny + iy
    user: np.ndarray  # user keys
    weight: np.ndarray  # fixes

    def __sizeof__(self) -> int:  # what Dask's memory manager counts (and spills)
        return _nbytes(self.wd, self.cell, self.user, self.weight)


def _nbytes(*arrays: np.ndarray) -> int:
    """Bytes held by arrays, the strings of object arrays included (about 60 each)."""
    return sum(a.nbytes + (60 * a.size if a.dtype == object else 0) for a in arrays) + 100


def _split(pdf: pd.DataFrame, frame: _Frame, part: int, edges: np.ndarray) -> tuple[Any, ...]:
    """A partition's (window, level-0 cell, user) triples cut at the batches' first
    windows ``edges``: one :class:`_Piece` per batch, then the partition's distinct users."""
    f, cw = frame.cell_windows(pdf)
    codes, uniques = pd.factorize(user_keys(f.user))
    n_local = max(len(uniques), 1)
    cell, wd = np.divmod(cw, frame.n_windows)
    n_cells = frame.grid.nx * frame.grid.ny
    if frame.n_windows * n_cells * n_local < _KEY_LIMIT:
        key, weight = np.unique((wd * n_cells + cell) * n_local + codes, return_counts=True)
        rest, code_u = np.divmod(key, n_local)
        wd_u, cell_u = np.divmod(rest, n_cells)
    else:
        g = pd.DataFrame({"w": wd, "c": cell, "u": codes}).groupby(["w", "c", "u"]).size()
        wd_u, cell_u, code_u = (g.index.get_level_values(i).to_numpy(np.int64) for i in range(3))
        weight = g.to_numpy(np.int64)
    keys = np.asarray(uniques) if len(uniques) else user_keys(np.zeros(0, np.int64))
    user = keys[code_u]
    small = np.int32 if max(n_cells, frame.n_windows) < 2**31 else np.int64
    wd_s, cell_s, weight = wd_u.astype(small), cell_u.astype(small), weight.astype(np.int64)
    cut = np.searchsorted(wd_u, edges)
    pieces = [
        _Piece(part, wd_s[a:b].copy(), cell_s[a:b].copy(), user[a:b].copy(), weight[a:b].copy())
        for a, b in zip(cut[:-1], cut[1:])
    ]
    return (*pieces, np.unique(keys))


# The window cut on disk.  Every input partition holds fixes of every batch, so no batch
# can start before every partition is cut; kept in memory, the pieces of the batches not
# yet made would wait on the workers (the whole log's triples at once, more than a
# worker's memory at 100M fixes).  Instead each partition's pieces are written to a
# private spool folder (owner-only, removed when the batches are made or the run fails)
# and each batch reads only its own pieces.  The workers must see the folder: a local
# cluster does; on other machines the parent folder is Dask's ``temporary-directory``
# setting, which must then be shared (else the pieces stay in memory, see `_spool`).


def _piece_path(folder: str, batch: int, part: int) -> str:
    return os.path.join(folder, f"{batch:06d}-{part:06d}.npz")


def _save_piece(folder: str, batch: int, piece: _Piece) -> None:
    """One (partition, batch) piece, written whole or not at all, readable by the owner only."""
    path = _piece_path(folder, batch, piece.part)
    tmp = f"{path}.part"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        np.savez(fh, wd=piece.wd, cell=piece.cell, user=piece.user, weight=piece.weight)
    os.replace(tmp, path)


def _load_piece(folder: str, batch: int, part: int) -> _Piece:
    try:
        with np.load(_piece_path(folder, batch, part), allow_pickle=False) as z:
            return _Piece(part, z["wd"], z["cell"], z["user"], z["weight"])
    except FileNotFoundError:
        raise RuntimeError(
            "a piece of the window cut is gone (a Dask worker was lost after the run's "
            "working folder was removed, or the workers do not share it): run the release again"
        ) from None


def _spill(
    pdf: pd.DataFrame, frame: _Frame, part: int, edges: np.ndarray, folder: str
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_split` with the pieces written to ``folder``: returns the triples per
    batch (which pieces exist) and the partition's distinct users."""
    *pieces, keys = _split(pdf, frame, part, edges)
    sizes = np.array([p.wd.size for p in pieces], dtype=np.int64)
    for b, p in enumerate(pieces):
        if p.wd.size:
            _save_piece(folder, b, p)
    return sizes, keys


def _spooled_batch(
    spec: _BatchSpec, lo: int, hi: int, b: int, folder: str, *sizes: np.ndarray
) -> tuple[_Batch, dict[str, Any]]:
    """:func:`_batch` of batch ``b`` from its pieces in ``folder``, in partition order."""
    pieces = tuple(_load_piece(folder, b, i) for i, s in enumerate(sizes) if s[b])
    if not pieces:
        none = np.zeros(0, dtype=np.int64)
        pieces = (_Piece(0, none, none, none, none),)
    return _batch(spec, lo, hi, *pieces)


def _sees(folder: str) -> bool:
    """Run on every worker: whether it sees the spool folder."""
    return os.path.isdir(folder)


def _cancel(values: list[Any]) -> None:
    """Stop the tasks behind persisted values (distributed futures), if any."""
    try:
        from distributed import futures_of
    except ImportError:
        return
    futures = futures_of(values)
    if futures:
        futures[0].client.cancel(futures)


def _current_client() -> Any:
    """The distributed client Dask computes on now, or None (a local scheduler)."""
    from dask.base import get_scheduler

    return getattr(get_scheduler(), "__self__", None)


@contextlib.contextmanager
def _spool() -> Iterator[str | None]:
    """A private folder for the window cut, removed on leaving; None (the pieces stay in
    memory) when a distributed worker cannot see it (workers on other machines without
    a shared ``temporary-directory``)."""
    import dask

    parent = dask.config.get("temporary-directory", None) or tempfile.gettempdir()
    try:
        folder = tempfile.mkdtemp(prefix="structanon-cut-", dir=parent)  # mode 0700
    except OSError as exc:
        raise InputError(
            f"cannot make the working folder of the window cut in {parent} ({exc.strerror}); "
            "set Dask's temporary-directory (DASK_TEMPORARY_DIRECTORY) to a writable folder",
            value=parent,
        ) from None
    try:
        client = _current_client()
        if client is not None and hasattr(client, "run"):
            seen = client.run(_sees, folder)
            if not seen or not all(seen.values()):
                yield None
                return
        yield folder
    finally:
        remove_folder(folder)


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    """Concatenate, leaving out empty arrays (an empty partition's keys have no type)."""
    some = [a for a in arrays if a.size]
    return np.concatenate(some) if some else arrays[0]


def _distinct_users(*arrays: np.ndarray) -> np.ndarray:
    return np.unique(_concat(list(arrays)))


def _batch_cuts(fixes: np.ndarray, target: int) -> list[tuple[int, int]]:
    """Consecutive window ranges ``[lo, hi)`` of about ``target`` fixes each (at least one
    window, windows without fixes joined to their neighbours)."""
    cuts, lo, acc = [], 0, 0
    for w, n in enumerate(fixes.tolist()):
        acc += n
        if acc >= target:
            cuts.append((lo, w + 1))
            lo, acc = w + 1, 0
    if lo < len(fixes) and (acc or not cuts):
        cuts.append((lo, len(fixes)))
    elif cuts:
        cuts[-1] = (cuts[-1][0], len(fixes))
    return cuts


@dataclass
class _BatchSpec:
    """What a batch task needs besides the pieces."""

    frame: _Frame
    k: int
    method: str
    linkage: str
    aggregate: bool
    pseudonymizer: Pseudonymizer
    n_parts: int
    part_rows: int = PART_ROWS
    batch_fixes: int = BATCH_FIXES


@dataclass
class _BatchState:
    red: _Reduced
    region: np.ndarray
    stats: dict
    pkeys: Any
    rows: PublishedRows
    order: np.ndarray
    kept_pos: np.ndarray


def _batch_state(spec: _BatchSpec, lo: int, hi: int, pieces: tuple[_Piece, ...]) -> _BatchState:
    """The triples of windows ``[lo, hi)``, their regions and their published rows."""
    frame = spec.frame
    cut = [(p, *np.searchsorted(p.wd, [lo, hi])) for p in pieces]
    wd = np.concatenate([p.wd[a:b] for p, a, b in cut]).astype(np.int64)
    cell = np.concatenate([p.cell[a:b] for p, a, b in cut]).astype(np.int64)
    user = _concat([p.user[a:b] for p, a, b in cut])
    part_weight = np.concatenate([p.weight[a:b] for p, a, b in cut]).astype(np.int64)
    part = np.repeat(
        np.array([p.part for p, _, _ in cut], dtype=np.int64), [b - a for _, a, b in cut]
    )
    u_codes, users = pd.factorize(user, sort=True)
    n_users = max(len(users), 1)
    if frame.grid.nx * frame.grid.ny * frame.n_windows * n_users >= _KEY_LIMIT:
        raise InputError(
            "too many cells x windows x users to index the dask path: increase "
            "cell_size or window, or cloak the log in parts"
        )
    packed = (cell * frame.n_windows + wd) * n_users + u_codes.astype(np.int64)
    keys, inverse = np.unique(packed, return_inverse=True)
    inverse = inverse.reshape(-1)
    weight = np.bincount(inverse, weights=part_weight, minlength=len(keys)).astype(np.int64)
    cw, u = np.divmod(keys, n_users)
    c, w = np.divmod(cw, frame.n_windows)
    ix, iy = np.divmod(c, frame.grid.ny)
    triples = Triples(ix, iy, w + frame.w0, u, weight)
    red = _Reduced(triples, keys, np.asarray(users), inverse, part, part_weight)
    region, stats = assign_regions(triples, frame.grid, spec.k, spec.method)
    kept_pos = np.flatnonzero(region >= 0)
    codes, pseudonyms = _published_users(
        u[kept_pos],
        triples.w[kept_pos],
        red.users,
        spec.pseudonymizer,
        spec.linkage,
        region[kept_pos],
    )
    pkeys = publication_keys(triples.w[kept_pos], region[kept_pos], codes, pseudonyms)
    rows, order = published_rows(pkeys, weight[kept_pos], spec.aggregate)
    return _BatchState(red, region, stats, pkeys, rows, order, kept_pos)


@dataclass
class _Batch:
    """A batch's published rows, kept on a worker until written (the polygons are drawn
    per published partition, :func:`_piece_polygons`: millions of shapely objects would
    outweigh the rows)."""

    rows: PublishedRows
    grid: CloakingGrid

    def __sizeof__(self) -> int:  # what Dask's memory manager counts (and spills)
        r = self.rows
        arrays = (r.user_rank, r.w, r.region_rank, r.repeat, r.n_fixes, r.regions, r.pseudonyms)
        return _nbytes(*(a for a in arrays if a is not None))


def _row_pieces(rows: PublishedRows, target: int) -> list[tuple[int, int, int]]:
    """``(lo, hi, first output row)`` pieces of about ``target`` output rows each."""
    reps = rows.repeat if rows.repeat is not None else np.ones(len(rows), dtype=np.int64)
    ends = np.cumsum(reps)
    total = int(ends[-1]) if ends.size else 0
    n = max(1, -(-total // target))
    cuts = np.unique(np.searchsorted(ends, np.linspace(0, total, n + 1)[1:-1], side="right"))
    bounds = [0, *[int(c) for c in cuts if 0 < c < len(rows)], len(rows)]
    return [
        (lo, hi, 0 if lo == 0 else int(ends[lo - 1])) for lo, hi in zip(bounds[:-1], bounds[1:])
    ]


def _small(values: np.ndarray) -> np.ndarray:
    """Integers as int32 when they fit (a batch's rows wait on the worker until written)."""
    if not values.size:
        return values
    fits = -(2**31) < int(values.min()) and int(values.max()) < 2**31
    return values.astype(np.int32) if fits else values


def _compact(rows: PublishedRows) -> PublishedRows:
    """The batch's rows as they wait on the worker: ranks, windows and counts in int32
    when they fit, pseudonyms (hexadecimal) as fixed-width bytes instead of Python
    strings: about a third of the memory, so far fewer batches are spilled to disk.
    :func:`_rows_part` builds the same partitions from them."""
    pseudonyms = rows.pseudonyms
    if pseudonyms.size and pseudonyms.dtype == object:
        try:
            pseudonyms = pseudonyms.astype("S")
        except UnicodeEncodeError:  # not ASCII: kept as they are
            pass
    return PublishedRows(
        _small(rows.user_rank),
        _small(rows.w),
        _small(rows.region_rank),
        None if rows.repeat is None else _small(rows.repeat),
        None if rows.n_fixes is None else _small(np.asarray(rows.n_fixes)),
        rows.regions,
        pseudonyms,
    )


def _batch(spec: _BatchSpec, lo: int, hi: int, *pieces: _Piece) -> tuple[_Batch, dict[str, Any]]:
    """A batch's rows (kept on a worker) and its summary: two Dask keys, so the client
    reads the small summary without loading a spilled batch back."""
    st = _batch_state(spec, lo, hi, pieces)
    rows, weight, kept = _compact(st.rows), st.red.triples.weight, st.region >= 0
    reps = rows.repeat if rows.repeat is not None else np.ones(len(rows), dtype=np.int64)
    row_pieces = _row_pieces(rows, spec.part_rows)
    summary = {
        "rows": int(reps.sum()),
        "pieces": row_pieces,
        "checks": _batch_checks(rows, spec.frame.grid, row_pieces, spec.frame.window_ns),
        "published": int(weight[kept].sum()),
        "suppressed": int(weight[~kept].sum()),
        "regions": rows.regions,
        "windows": int(np.unique(st.red.triples.w).size),
        "stats": st.stats,
    }
    return _Batch(rows, spec.frame.grid), summary


def _piece_polygons(rows: PublishedRows, grid: CloakingGrid, lo: int, hi: int) -> np.ndarray:
    """Polygons by region rank, drawn for the regions of rows ``[lo, hi)`` only."""
    polygons = np.full(len(rows.regions), None, dtype=object)
    used = np.unique(rows.region_rank[lo:hi])
    if used.size:
        polygons[used] = grid.polygons(rows.regions[used])
    return polygons


def _batch_checks(
    rows: PublishedRows, grid: CloakingGrid, pieces: list[tuple[int, int, int]], window_ns: int
) -> _BatchChecks:
    """The verifier's aggregates of each of the batch's published partitions, counted from
    the partition itself (built as :func:`_batch_part` builds it) while the batch is in
    memory, so verifying the release does not read its rows back."""
    columns = ["user", "window", "region_id", "region"]
    groups, bounds = [], []
    for piece in pieces:
        polygons = _piece_polygons(rows, grid, piece[0], piece[1])
        part = _rows_part(piece, rows, polygons, window_ns, columns)
        groups.append(_group_users(part[["region_id", "window", "user"]]))
        bounds.append(region_bounds_rows(part[["region_id", "region"]]))
    g = pd.concat(groups, ignore_index=True)
    if not len(g):
        return _BatchChecks(np.zeros(0, np.int64), None, None, bounds[0].iloc[:0])
    w, r = g["window"].to_numpy(np.int64), g["region_id"].to_numpy(np.int64)
    first = (int(w[0]), int(r[0]), g["first"].to_numpy()[0])
    last = (int(w[-1]), int(r[-1]), g["last"].to_numpy()[-1])
    b = pd.concat(bounds, ignore_index=True).drop_duplicates()
    return _BatchChecks(_sorted_counts(g), first, last, b)


def _batch_lookup(spec: _BatchSpec, lo: int, hi: int, *pieces: _Piece) -> _Lookup:
    """The batch's :class:`_Lookup` (for ``source_index``: the batch is recomputed)."""
    st = _batch_state(spec, lo, hi, pieces)
    run, run_fixes = _runs(st.red, st.region, st.pkeys, st.order, st.kept_pos)
    return _lookup(st.red, spec.frame, run, run_fixes, spec.aggregate, spec.n_parts)


def _batch_part(batch: _Batch, piece: tuple[int, int, int], start: int, window_ns: int):
    lo, hi, first = piece
    polygons = _piece_polygons(batch.rows, batch.grid, lo, hi)
    return _rows_part((lo, hi, start + first), batch.rows, polygons, window_ns)


def _batched_source_rows(
    pdf: pd.DataFrame,
    frame: _Frame,
    cuts: list[tuple[int, int]],
    starts: list[int],
    part: int,
    *lookups: _Lookup,
) -> pd.Series:
    """``source_index`` of one input partition: each batch places its windows' fixes."""
    f, cw = frame.cell_windows(pdf)
    wd = cw % frame.n_windows
    ukeys = user_keys(f.user)
    row = np.full(len(cw), -1, dtype=np.int64)
    for (lo, hi), start, lookup in zip(cuts, starts, lookups):
        at = np.flatnonzero((wd >= lo) & (wd < hi))
        if not at.size:
            continue
        _, run, r = lookup.place_codes(cw[at], ukeys[at], part)
        row[at] = np.where(run >= 0, (run if lookup.aggregate else r) + start, -1)
    kept = row >= 0
    return pd.Series(row[kept], index=f.index[kept], name="published_row")


def _merge_stats(batches: list[dict[str, Any]], top: int) -> dict[str, Any]:
    """The batches' assignment statistics, keys in the order the pandas path adds them."""
    per_level: dict[str, int] = {}
    for level in range(top + 1):
        for label in (f"half{level}", str(level)):
            found = [
                s["fixes_published_per_level"][label]
                for s in batches
                if label in s["fixes_published_per_level"]
            ]
            if found:
                per_level[label] = int(sum(found))
    return {
        "fixes_published_per_level": per_level,
        "leftover_groups_merged": int(sum(s["leftover_groups_merged"] for s in batches)),
    }


@dataclass
class _Batched:
    data: Any
    source_index: Any
    summaries: list[dict[str, Any]]
    n_users: int
    checks: _PartChecks


def _count_users(users: list[Any]) -> Any:
    """Distinct users of the log (lazy): a tree of unions on the workers."""
    import dask

    level = users
    while len(level) > 1:
        level = [dask.delayed(_distinct_users)(*level[i : i + 8]) for i in range(0, len(level), 8)]
    return dask.delayed(len)(level[0])


def _run_batches(
    ddf: Any, spec: _BatchSpec, counts: _Counts, window_ns: int, timings: Timings
) -> _Batched:
    """Assignment and publication batch by batch on the workers (see the section above)."""
    import dask
    import dask.dataframe as dd

    frame = spec.frame
    cuts = _batch_cuts(counts.window_fixes(window_ns), spec.batch_fixes)
    edges = np.array([lo for lo, _ in cuts] + [frame.n_windows], dtype=np.int64)
    n_b = len(cuts)
    lazy = [
        dask.delayed(_split, nout=n_b + 1)(p, frame, i, edges)
        for i, p in enumerate(ddf.to_delayed())
    ]
    with timings("assign"), _spool() as folder:
        # the window cut and the batches in one graph (nothing persisted but the
        # batches' rows): the cut's pieces on disk (see `_spool`), or one Dask key per
        # (partition, batch) piece, each dropped as soon as its batch is made
        if folder is not None:
            cut = [
                dask.delayed(_spill, nout=2)(p, frame, i, edges, folder)
                for i, p in enumerate(ddf.to_delayed())
            ]
            sizes = [c[0] for c in cut]
            made = [
                dask.delayed(_spooled_batch, nout=2)(spec, lo, hi, b, folder, *sizes)
                for b, (lo, hi) in enumerate(cuts)
            ]
            keys = [c[1] for c in cut]
        else:
            made = [
                dask.delayed(_batch, nout=2)(spec, lo, hi, *[s[b] for s in lazy])
                for b, (lo, hi) in enumerate(cuts)
            ]
            keys = [s[n_b] for s in lazy]
        *persisted, users = dask.persist(
            *[m[0] for m in made], *[m[1] for m in made], _count_users(keys)
        )
        batches = persisted[:n_b]
        try:
            n_users = int(compute(users)[0])
            if n_users < spec.k:
                raise InfeasibleError(
                    f"k={spec.k} exceeds the number of users in the log ({n_users})"
                )
            summaries = list(compute(*persisted[n_b:]))
        except BaseException:
            _cancel([*persisted, users])  # no batch left reading a removed spool
            raise
    if not sum(s["published"] for s in summaries):
        raise InfeasibleError(
            f"no time window holds {spec.k} distinct users: every fix would be suppressed"
        )
    with timings("output"):
        rows = [s["rows"] for s in summaries]
        starts = (np.cumsum(rows) - rows).astype(np.int64).tolist()
        parts, divisions = [], []
        for b, s, start in zip(batches, summaries, starts):
            for piece in s["pieces"]:
                parts.append(dask.delayed(_batch_part)(b, piece, start, window_ns))
                divisions.append(start + piece[2])
        divisions.append(max(int(sum(rows)) - 1, 0))
        none = np.zeros(0, np.int64)
        n_fixes = none if spec.aggregate else None
        empty = PublishedRows(none, none, none, None, n_fixes, none, np.zeros(0, object))
        meta = _rows_part((0, 0, 0), empty, np.zeros(0, object), window_ns)
        with dask.config.set({"dataframe.convert-string": False}):
            data = dd.from_delayed(parts, meta=meta, divisions=tuple(divisions), verify_meta=False)
        lookups = [
            dask.delayed(_batch_lookup)(spec, lo, hi, *[s[b] for s in lazy])
            for b, (lo, hi) in enumerate(cuts)
        ]
        source_index = dd.from_delayed(
            [
                dask.delayed(_batched_source_rows)(p, frame, cuts, starts, i, *lookups)
                for i, p in enumerate(ddf.to_delayed())
            ],
            meta=pd.Series(dtype=np.int64, name="published_row"),
            verify_meta=False,
        )
    part_checks = _PartChecks(data, [s.pop("checks") for s in summaries])
    return _Batched(data, source_index, summaries, n_users, part_checks)


def _cloak_batched(
    ddf: Any, counts: _Counts, spec: _BatchSpec, window_ns: int, timings: Timings, **params: Any
) -> Release:
    """:func:`cloak_dask` without measures, batch by batch (see the section above)."""
    frame, k, aggregate = spec.frame, spec.k, spec.aggregate
    out = _run_batches(ddf, spec, counts, window_ns, timings)
    summaries = out.summaries
    n_suppressed = sum(s["suppressed"] for s in summaries)
    n_dropped = counts.n_input - counts.n_valid
    regions = np.unique(np.concatenate([s["regions"] for s in summaries]))
    release = Release(
        data=out.data,
        datatype="location",
        verifier=lambda d: _verify_dask(d, k, out.checks),
        models=cloaking_models(k),
        partition=None,
        parameters=release_parameters(
            k,
            window_ns,
            spec.method,
            frame.grid,
            aggregate,
            linkage=spec.linkage,
            engine="dask",
            **params,
        ),
        suppressed=n_suppressed + n_dropped,
        n_individuals=counts.n_input,
        info={
            **release_info(
                frame.grid,
                k=k,
                window_ns=window_ns,
                aggregate=aggregate,
                regions=regions,
                n_cloak_suppressed=n_suppressed,
                n_dropped=n_dropped,
                reasons=counts.dropped,
                users=out.n_users,
                windows=sum(s["windows"] for s in summaries),
                key_source=spec.pseudonymizer.key_source,
                stats=_merge_stats([s["stats"] for s in summaries], frame.grid.top),
            ),
            "npartitions": int(ddf.npartitions),
        },
        source_index=out.source_index,
    )
    release.utility = {"suppression_share": release.suppressed / release.n_individuals}
    if spec.linkage == "pseudonym":
        add_warning(release, LINKAGE_WARNING)
    return finish_release(release, None, measures=False, timings=timings)


# -- entry ------------------------------------------------------------------------------


def cloak_dask(
    ddf: Any,
    k: int,
    window_ns: int,
    method: str,
    columns: dict[str, str],
    seed: int | None,
    *,
    cell_size: float,
    levels: int | None,
    drop_invalid: bool,
    pseudonymizer: Pseudonymizer,
    measures: bool,
    aggregate: bool,
    linkage: str = "window",
) -> Release:
    """See :func:`location.cloak`; ``ddf`` is a dask DataFrame (parameters already checked)."""
    if linkage not in DASK_LINKAGES:
        raise InputError(
            f"linkage={linkage!r} runs in memory only (engine='pandas'); the Dask engine "
            f"supports linkage in {DASK_LINKAGES}"
        )
    cols = (columns["user"], columns["time"], columns["lat"], columns["lon"])
    _check_columns(ddf, cols)
    timings = Timings()
    with timings("prepare"):
        counts = _first_pass(ddf, cols, drop_invalid, window_ns)
        if linkage == "window":  # per-window pseudonyms bound to this input, as on pandas
            pseudonymizer = bound_pseudonymizer(pseudonymizer, counts.digest, "window")
        grid = CloakingGrid.fit(*counts.bounds, cell_size, levels)
        w0 = counts.t_range[0] // window_ns
        frame = _Frame(cols, grid, window_ns, w0, counts.t_range[1] // window_ns - w0 + 1)
    if not measures:  # nothing on the client grows with the users
        spec = _BatchSpec(
            frame,
            k,
            method,
            linkage,
            aggregate,
            pseudonymizer,
            int(ddf.npartitions),
            part_rows=PART_ROWS,
            batch_fixes=BATCH_FIXES,
        )
        return _cloak_batched(
            ddf, counts, spec, window_ns, timings, seed=seed, columns=columns, levels=levels
        )
    with timings("prepare"):
        red = _reduce_triples(ddf, frame, k)
        triples = red.triples
    with timings("assign"):
        region, stats_assign = assign_regions(triples, grid, k, method)
        require_some_published(region, k)
    with timings("output"):
        weight, kept = triples.weight, region >= 0
        kept_pos = np.flatnonzero(kept)
        codes, pseudonyms = _published_users(
            triples.u[kept], triples.w[kept], red.users, pseudonymizer, linkage, region[kept]
        )
        pkeys = publication_keys(triples.w[kept], region[kept], codes, pseudonyms)
        rows, order = published_rows(pkeys, weight[kept], aggregate)
        data = _lazy_frame(rows, grid, window_ns, counts.n_parts)
        run, run_fixes = _runs(red, region, pkeys, order, kept_pos)
        lookup = _lookup(red, frame, run, run_fixes, aggregate, counts.n_parts)
        source_index = ddf.map_partitions(
            _source_rows, _shared(lookup), meta=pd.Series(dtype=np.int64, name="published_row")
        )
    n_suppressed = int(weight[~kept].sum())
    n_dropped = counts.n_input - counts.n_valid
    release = Release(
        data=data,
        datatype="location",
        verifier=lambda d: _verify_dask(d, k),
        models=cloaking_models(k),
        partition=None,
        parameters=release_parameters(
            k, window_ns, method, grid, aggregate, seed, columns, linkage, levels, engine="dask"
        ),
        suppressed=n_suppressed + n_dropped,
        n_individuals=counts.n_input,
        info={
            **release_info(
                grid,
                k=k,
                window_ns=window_ns,
                aggregate=aggregate,
                regions=rows.regions,
                n_cloak_suppressed=n_suppressed,
                n_dropped=n_dropped,
                reasons=counts.dropped,
                users=len(red.users),
                windows=int(np.unique(triples.w).size),
                key_source=pseudonymizer.key_source,
                stats=stats_assign,
            ),
            "npartitions": int(ddf.npartitions),
        },
        source_index=source_index,
    )
    if not measures:
        release.utility = {"suppression_share": release.suppressed / release.n_individuals}
    if linkage == "pseudonym":
        add_warning(release, LINKAGE_WARNING)
    m = _MeasureInput(ddf, red, rows, lookup, region, counts, seed, linkage)
    return finish_release(release, _measure(m, grid), measures=measures, timings=timings)
