"""Cloaking of a dask DataFrame: the same release as pandas, computed in three passes.

1. per partition: validity counts and the coordinate bounds (fixes the grid);
2. per partition: the (level-0 cell, window, user) triples with their fix counts, reduced
   on the client, where the assignment runs exactly as for pandas (it depends only on the
   triples and their weights, never on row order);
3. the published rows are the published triples sorted by (window, region, pseudonym),
   each repeated once per fix (or once with its count when aggregated): a lazy dask
   DataFrame built from the triples alone, row for row equal to the pandas release, since
   rows that tie are identical.  ``Release.source_index`` is a lazy dask Series from each
   published fix's input row label to its row, computed by one more pass over the input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from structanon import Release
from structanon._finish import Timings, add_warning, finish_release
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer

from . import risk as _risk
from ._assign import Triples, assign_regions
from ._grid import CloakingGrid
from ._input import no_fixes_error, parse_fixes, user_keys
from ._publish import (
    LINKAGE_WARNING,
    publication_keys,
    published_rows,
    published_users,
    region_areas_km2,
    release_info,
    release_parameters,
    require_some_published,
)
from ._verify import cloaking_models, verify_cloaked
from .metrics import _quantiles

__all__ = ["cloak_dask"]


def _stats(pdf: pd.DataFrame, cols: tuple[str, str, str, str]) -> pd.DataFrame:
    user, time, lat, lon = cols
    f = parse_fixes(pdf, user, time, lat, lon, drop_invalid=True)
    first_bad = -1
    if f.n_dropped:
        bad = np.ones(f.n_input, dtype=bool)
        bad[f.positions] = False
        first_bad = int(np.flatnonzero(bad)[0])
    row = {
        "n_input": f.n_input,
        "n_valid": len(f.index),
        "reasons": json.dumps(f.dropped),
        "first_bad": first_bad,
        "first_bad_label": str(pdf.index[first_bad]) if first_bad >= 0 else "",
        "lon_min": f.lon.min() if len(f.index) else np.inf,
        "lon_max": f.lon.max() if len(f.index) else -np.inf,
        "lat_min": f.lat.min() if len(f.index) else np.inf,
        "lat_max": f.lat.max() if len(f.index) else -np.inf,
    }
    return pd.DataFrame([row])


_STATS_META = pd.DataFrame(
    {
        "n_input": pd.Series(dtype=np.int64),
        "n_valid": pd.Series(dtype=np.int64),
        "reasons": pd.Series(dtype=object),
        "first_bad": pd.Series(dtype=np.int64),
        "first_bad_label": pd.Series(dtype=object),
        **{c: pd.Series(dtype=np.float64) for c in ("lon_min", "lon_max", "lat_min", "lat_max")},
    }
)


def _keys(pdf, cols, grid: CloakingGrid, window_ns: int):
    user, time, lat, lon = cols
    f = parse_fixes(pdf, user, time, lat, lon, drop_invalid=True)
    ix, iy = grid.cells(f.lon, f.lat)
    w = np.floor_divide(f.t_ns, window_ns)
    return f, ix, iy, w, user_keys(f.user)


def _triples(pdf, cols, grid, window_ns, partition_info=None) -> pd.DataFrame:
    _, ix, iy, w, user = _keys(pdf, cols, grid, window_ns)
    part = partition_info["number"] if partition_info else 0
    frame = pd.DataFrame({"ix": ix, "iy": iy, "w": w, "user": user, "part": part, "weight": 1})
    return (
        frame.groupby(["ix", "iy", "w", "user", "part"], sort=False)["weight"].sum().reset_index()
    )


def _triples_meta(user_dtype) -> pd.DataFrame:
    integer = pd.api.types.is_integer_dtype(user_dtype)
    return pd.DataFrame(
        {
            "ix": pd.Series(dtype=np.int64),
            "iy": pd.Series(dtype=np.int64),
            "w": pd.Series(dtype=np.int64),
            "user": pd.Series(dtype=np.int64 if integer else object),
            "part": pd.Series(dtype=np.int64),
            "weight": pd.Series(dtype=np.int64),
        }
    )


def _source_rows(pdf, cols, grid, window_ns, lookup: dict, partition_info=None) -> pd.Series:
    """Each published fix of the partition: input row label -> published row number.

    A fix's row is its triple's first published row, plus the fixes of that triple in
    earlier partitions, plus its rank among the triple's fixes in this partition
    (aggregated: its triple's row).
    """
    f, ix, iy, w, user = _keys(pdf, cols, grid, window_ns)
    u = np.searchsorted(lookup["users"], user)
    key = ((ix * grid.ny + iy) * lookup["n_windows"] + (w - lookup["w0"])) * lookup["n_users"] + u
    triple = lookup["order"][np.searchsorted(lookup["keys"], key)]
    kept = lookup["region"][triple] >= 0
    triple = triple[kept]
    if lookup["aggregate"]:
        row = lookup["row_of_triple"][triple]
    else:
        part = partition_info["number"] if partition_info else 0
        at = np.searchsorted(lookup["offset_keys"], triple * lookup["n_parts"] + part)
        by_triple = np.argsort(triple, kind="stable")
        ts = triple[by_triple]
        first = np.ones(ts.size, dtype=bool)
        np.not_equal(ts[1:], ts[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        rank = np.empty(ts.size, dtype=np.int64)
        rank[by_triple] = np.arange(ts.size) - np.repeat(
            starts, np.diff(np.append(starts, ts.size))
        )
        row = lookup["offsets"][at] + rank
    return pd.Series(row.astype(np.int64), index=f.index[kept], name="published_row")


def _rows_frame(rows, grid, window_ns, lo: int, hi: int, start: int) -> pd.DataFrame:
    return rows.frame(grid, window_ns, lo, hi, start)


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


@dataclass
class _Counts:
    """First pass: input and valid fixes, reasons for the invalid ones, coordinate bounds."""

    n_input: int
    n_valid: int
    dropped: dict[str, int]
    bounds: tuple[float, float, float, float]


def _first_pass(ddf: Any, cols: tuple[str, str, str, str], drop_invalid: bool) -> _Counts:
    stats = ddf.map_partitions(_stats, cols, meta=_STATS_META).compute()
    n_input, n_valid = int(stats["n_input"].sum()), int(stats["n_valid"].sum())
    dropped: dict[str, int] = {}
    for reasons in stats["reasons"]:
        for reason, count in json.loads(reasons).items():
            dropped[reason] = dropped.get(reason, 0) + count
    if n_valid < n_input and not drop_invalid:
        bad = stats[stats["first_bad"] >= 0].iloc[0]
        raise InputError(
            f"{n_input - n_valid} invalid fix(es): {dropped} "
            "(use drop_invalid / --drop-invalid to drop and count them)",
            row=bad["first_bad_label"],
        )
    if n_valid == 0:
        raise no_fixes_error(n_input, dropped)
    bounds = (
        stats["lon_min"].min(),
        stats["lon_max"].max(),
        stats["lat_min"].min(),
        stats["lat_max"].max(),
    )
    return _Counts(n_input, n_valid, dropped, bounds)


def _reduce_triples(
    ddf: Any, cols: tuple[str, str, str, str], grid: CloakingGrid, window_ns: int, k: int
):
    """Second pass: (cell, window, user) triples with their fix counts, per partition."""
    per_part = ddf.map_partitions(
        _triples, cols, grid, window_ns, meta=_triples_meta(ddf[cols[0]].dtype)
    ).compute()
    parts = per_part.groupby(["ix", "iy", "w", "user"], sort=True)["weight"].sum().reset_index()
    u_codes, users = pd.factorize(parts["user"], sort=True)
    if len(users) < k:
        raise InfeasibleError(f"the log holds {len(users)} distinct users, fewer than k={k}")
    triples = Triples(
        parts["ix"].to_numpy(np.int64),
        parts["iy"].to_numpy(np.int64),
        parts["w"].to_numpy(np.int64),
        u_codes.astype(np.int64),
        parts["weight"].to_numpy(np.int64),
    )
    return per_part, parts, triples, np.asarray(users)


def _lookup(
    triples: Triples, grid: CloakingGrid, users: np.ndarray, region: np.ndarray, aggregate: bool
) -> dict[str, Any]:
    """What each partition needs to find its fixes' triples (by one sorted key)."""
    w0 = int(triples.w.min())
    n_windows = int(triples.w.max()) - w0 + 1
    if grid.nx * grid.ny * n_windows * len(users) >= 2**62:
        raise InputError(
            "too many cells x windows x users to index the dask path: increase "
            "cell_size or window, or cloak the log in parts"
        )
    keys = ((triples.ix * grid.ny + triples.iy) * n_windows + (triples.w - w0)) * len(
        users
    ) + triples.u
    by_key = np.argsort(keys)
    return {
        "users": user_keys(users),
        "keys": keys[by_key],
        "order": by_key,
        "region": region,
        "w0": w0,
        "n_windows": n_windows,
        "n_users": len(users),
        "aggregate": aggregate,
    }


def _row_offsets(
    lookup: dict[str, Any],
    per_part: pd.DataFrame,
    parts: pd.DataFrame,
    weight: np.ndarray,
    kept: np.ndarray,
    sorted_triples: np.ndarray,
    n_parts: int,
) -> None:
    """Per (triple, partition): the published row of its first fix (per-fix releases)."""
    region = lookup["region"]
    first_row = np.zeros(len(region), dtype=np.int64)
    first_row[sorted_triples] = np.cumsum(weight[sorted_triples]) - weight[sorted_triples]
    pp = per_part.merge(
        parts[["ix", "iy", "w", "user"]].assign(triple=np.arange(len(parts))),
        on=["ix", "iy", "w", "user"],
    )
    pp = pp[kept[pp["triple"].to_numpy()]].sort_values(["triple", "part"])
    t_arr, w_arr = pp["triple"].to_numpy(np.int64), pp["weight"].to_numpy(np.int64)
    before = np.cumsum(w_arr) - w_arr
    group_start = np.zeros(len(region), dtype=np.int64)
    first_of_triple = np.ones(t_arr.size, dtype=bool)
    np.not_equal(t_arr[1:], t_arr[:-1], out=first_of_triple[1:])
    group_start[t_arr[first_of_triple]] = before[first_of_triple]
    lookup["n_parts"] = n_parts
    lookup["offset_keys"] = t_arr * n_parts + pp["part"].to_numpy(np.int64)
    lookup["offsets"] = first_row[t_arr] + before - group_start[t_arr]


def _measure(triples: Triples, grid: CloakingGrid, region: np.ndarray, seed: int | None):
    """The dask path's measures, from the triples alone (run after verification).

    Risk figures equal the pandas path's for the same data and seed (users are numbered
    in the same order on both paths).  Utility has the region areas and the suppression
    share; the per-fix measures of the pandas path (centroid error, range queries, heat
    maps) would need another pass over every fix and are left out.
    """

    def measure(release: Release) -> None:
        kept, weight = region >= 0, triples.weight
        codes, inv = np.unique(region[kept], return_inverse=True)
        area = region_areas_km2(grid, codes)
        utility: dict[str, Any] = {
            "suppression_share": release.suppressed / release.n_individuals,
            "n_regions": int(codes.size),
        }
        utility.update({f"region_km2_{k}": v for k, v in _quantiles(area).items()})
        utility["fix_weighted_mean_km2"] = float(
            (area[inv.reshape(-1)] * weight[kept]).sum() / weight[kept].sum()
        )
        before = pd.DataFrame(
            {
                "user": triples.u,
                "place": triples.ix * grid.ny + triples.iy,
                "window": triples.w,
                "weight": weight,
            }
        )
        after = before[kept].assign(place=region[kept])
        release.utility = utility
        release.risk = _risk.risk_summary(before, after, seed=seed)

    return measure


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
    cols = (columns["user"], columns["time"], columns["lat"], columns["lon"])
    _check_columns(ddf, cols)
    timings = Timings()
    with timings("prepare"):
        counts = _first_pass(ddf, cols, drop_invalid)
        grid = CloakingGrid.fit(*counts.bounds, cell_size, levels)
        per_part, parts, triples, users = _reduce_triples(ddf, cols, grid, window_ns, k)
    with timings("assign"):
        region, stats_assign = assign_regions(triples, grid, k, method)
        require_some_published(region, k)
    with timings("output"):
        weight, kept = triples.weight, region >= 0
        kept_pos = np.flatnonzero(kept)
        codes, pseudonyms = published_users(
            triples.u[kept], triples.w[kept], users, pseudonymizer, linkage
        )
        pkeys = publication_keys(triples.w[kept], region[kept], codes, pseudonyms)
        rows, order = published_rows(pkeys, weight[kept], aggregate)
        data = _lazy_frame(rows, grid, window_ns, int(ddf.npartitions))
        lookup = _lookup(triples, grid, users, region, aggregate)
        sorted_triples = kept_pos[order]  # triples in publication order
        if aggregate:
            ks = pkeys.key[order]
            new = np.ones(ks.size, dtype=bool)
            np.not_equal(ks[1:], ks[:-1], out=new[1:])
            lookup["row_of_triple"] = np.full(len(region), -1, dtype=np.int64)
            lookup["row_of_triple"][sorted_triples] = np.cumsum(new) - 1
        else:
            _row_offsets(
                lookup, per_part, parts, weight, kept, sorted_triples, int(ddf.npartitions)
            )
        source_index = ddf.map_partitions(
            _source_rows,
            cols,
            grid,
            window_ns,
            _shared(lookup),
            meta=pd.Series(dtype=np.int64, name="published_row"),
        )
    n_suppressed = int(weight[~kept].sum())
    n_dropped = counts.n_input - counts.n_valid
    release = Release(
        data=data,
        datatype="location",
        verifier=lambda d: verify_cloaked(d, k),
        models=cloaking_models(k),
        partition=None,
        parameters=release_parameters(
            k, window_ns, method, grid, aggregate, seed, columns, linkage, engine="dask"
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
                users=len(users),
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
    return finish_release(
        release, _measure(triples, grid, region, seed), measures=measures, timings=timings
    )


def _lazy_frame(rows, grid: CloakingGrid, window_ns: int, npartitions: int) -> Any:
    """The published rows as a lazy dask DataFrame of about ``npartitions`` parts."""
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
    shared = _shared(rows)
    pieces = [(lo, hi, start) for lo, hi, start in zip(bounds[:-1], bounds[1:], starts)]
    meta = rows.frame(grid, window_ns, 0, 0)
    with dask.config.set({"dataframe.convert-string": False}):  # the same dtypes as pandas
        return dd.from_map(
            lambda piece, r: _rows_frame(r, grid, window_ns, *piece),
            pieces,
            args=[shared],
            meta=meta,
            divisions=divisions,
            enforce_metadata=False,
        )
