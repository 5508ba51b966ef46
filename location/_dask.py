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
import time as _time
from typing import Any

import numpy as np
import pandas as pd

from structanon import Release
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer
from structanon.models import KAnonymity

from ._assign import Triples, assign_regions
from ._grid import CloakingGrid, lonlat_rectangle_area
from ._input import Fixes, parse_fixes
from ._publish import publication_keys, published_rows

__all__ = ["cloak_dask"]


def _stats(pdf: pd.DataFrame, cols: tuple[str, str, str, str]) -> pd.DataFrame:
    f = parse_fixes(pdf, *cols, drop_invalid=True)
    first_bad = -1
    if f.n_dropped:
        bad = np.ones(f.n_input, dtype=bool)
        bad[f.positions] = False
        first_bad = int(np.flatnonzero(bad)[0])
    row = {"n_input": f.n_input, "n_valid": len(f.index),
           "reasons": json.dumps(f.dropped), "first_bad": first_bad,
           "first_bad_label": str(pdf.index[first_bad]) if first_bad >= 0 else "",
           "lon_min": f.lon.min() if len(f.index) else np.inf,
           "lon_max": f.lon.max() if len(f.index) else -np.inf,
           "lat_min": f.lat.min() if len(f.index) else np.inf,
           "lat_max": f.lat.max() if len(f.index) else -np.inf}
    return pd.DataFrame([row])


_STATS_META = pd.DataFrame({"n_input": pd.Series(dtype=np.int64),
                            "n_valid": pd.Series(dtype=np.int64),
                            "reasons": pd.Series(dtype=object),
                            "first_bad": pd.Series(dtype=np.int64),
                            "first_bad_label": pd.Series(dtype=object),
                            **{c: pd.Series(dtype=np.float64)
                               for c in ("lon_min", "lon_max", "lat_min", "lat_max")}})


def _keys(pdf, cols, grid: CloakingGrid, window_ns: int):
    f = parse_fixes(pdf, *cols, drop_invalid=True)
    ix, iy = grid.cells(f.lon, f.lat)
    w = np.floor_divide(f.t_ns, window_ns)
    return f, ix, iy, w, _user_keys(f.user)


def _user_keys(values: np.ndarray) -> np.ndarray:
    """Integer ids as int64 (fast to sort and search), anything else as text."""
    if np.issubdtype(np.asarray(values).dtype, np.integer):
        return np.asarray(values, dtype=np.int64)
    return np.asarray(pd.Series(values).astype(str).to_numpy(dtype=object), dtype=str)


def _triples(pdf, cols, grid, window_ns, partition_info=None) -> pd.DataFrame:
    _, ix, iy, w, user = _keys(pdf, cols, grid, window_ns)
    part = partition_info["number"] if partition_info else 0
    frame = pd.DataFrame({"ix": ix, "iy": iy, "w": w, "user": user, "part": part, "weight": 1})
    return frame.groupby(["ix", "iy", "w", "user", "part"], sort=False)["weight"].sum(
    ).reset_index()


def _triples_meta(user_dtype) -> pd.DataFrame:
    integer = pd.api.types.is_integer_dtype(user_dtype)
    return pd.DataFrame({"ix": pd.Series(dtype=np.int64), "iy": pd.Series(dtype=np.int64),
                         "w": pd.Series(dtype=np.int64),
                         "user": pd.Series(dtype=np.int64 if integer else object),
                         "part": pd.Series(dtype=np.int64),
                         "weight": pd.Series(dtype=np.int64)})


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
        rank[by_triple] = np.arange(ts.size) - np.repeat(starts, np.diff(np.append(starts,
                                                                                   ts.size)))
        row = lookup["offsets"][at] + rank
    return pd.Series(row.astype(np.int64), index=f.index[kept], name="published_row")


def _rows_frame(rows, grid, window_ns, lo: int, hi: int, start: int) -> pd.DataFrame:
    return rows.frame(grid, window_ns, lo, hi, start)


def _shared(value: Any) -> Any:
    """``value`` scattered to every worker of the active distributed client, else delayed."""
    try:
        from distributed import get_client

        return get_client().scatter([value], broadcast=True, hash=False)[0]
    except (ImportError, ValueError):  # no distributed client: local schedulers
        from dask import delayed

        return delayed(value)


def cloak_dask(ddf: Any, k: int, window_ns: int, method: str, user: str, time: str, lat: str,
               lon: str, seed: int | None, *, cell_size: float, levels: int | None,
               drop_invalid: bool, pseudonymizer: Pseudonymizer, measure: bool,
               aggregate: bool) -> Release:
    """See :func:`location.cloak`; ``ddf`` is a dask DataFrame."""
    from ._cloak import _info, _no_fixes, _require_some_published, verify_cloaked

    cols = (user, time, lat, lon)
    for role, name in zip(("user", "time", "lat", "lon"), cols):
        if name not in ddf.columns:
            raise InputError(f"no {role} column {name!r}; columns are {list(ddf.columns)}",
                             column=name)
    timings: dict[str, float] = {}
    t0 = _time.perf_counter()
    stats = ddf.map_partitions(_stats, cols, meta=_STATS_META).compute()
    n_input, n_valid = int(stats["n_input"].sum()), int(stats["n_valid"].sum())
    dropped: dict[str, int] = {}
    for reasons in stats["reasons"]:
        for reason, count in json.loads(reasons).items():
            dropped[reason] = dropped.get(reason, 0) + count
    if n_valid < n_input and not drop_invalid:
        bad = stats[stats["first_bad"] >= 0].iloc[0]
        raise InputError(f"{n_input - n_valid} invalid fix(es): {dropped} "
                         "(use drop_invalid / --drop-invalid to drop and count them)",
                         row=bad["first_bad_label"])
    if n_valid == 0:
        raise _no_fixes(Fixes(pd.Index([]), np.zeros(0, np.int64), np.zeros(0), np.zeros(0),
                              np.zeros(0), np.zeros(0), n_input, dropped))
    grid = CloakingGrid.fit(stats["lon_min"].min(), stats["lon_max"].max(),
                            stats["lat_min"].min(), stats["lat_max"].max(), cell_size, levels)
    per_part = ddf.map_partitions(_triples, cols, grid, window_ns,
                                  meta=_triples_meta(ddf[user].dtype)).compute()
    parts = per_part.groupby(["ix", "iy", "w", "user"], sort=True)["weight"].sum().reset_index()
    u_codes, users = pd.factorize(parts["user"], sort=True)
    if len(users) < k:
        raise InfeasibleError(f"the log holds {len(users)} distinct users, fewer than k={k}")
    triples = Triples(parts["ix"].to_numpy(np.int64), parts["iy"].to_numpy(np.int64),
                      parts["w"].to_numpy(np.int64), u_codes.astype(np.int64),
                      parts["weight"].to_numpy(np.int64))
    timings["prepare"] = _time.perf_counter() - t0
    t1 = _time.perf_counter()
    region, stats_assign = assign_regions(triples, grid, k, method)
    _require_some_published(region, k)
    timings["assign"] = _time.perf_counter() - t1
    t2 = _time.perf_counter()
    pseud = pseudonymizer
    pseudonyms = pseud.pseudonymize(np.asarray(users, dtype=object))
    weight = triples.weight
    kept = region >= 0
    kept_pos = np.flatnonzero(kept)
    pkeys = publication_keys(triples.w[kept], region[kept], triples.u[kept], pseudonyms)
    rows, order = published_rows(pkeys, weight[kept], aggregate)
    data = _lazy_frame(rows, grid, window_ns, int(ddf.npartitions))
    w0 = int(triples.w.min())
    n_windows = int(triples.w.max()) - w0 + 1
    if grid.nx * grid.ny * n_windows * len(users) >= 2**62:
        raise InputError("too many cells x windows x users to index the dask path: increase "
                         "cell_size or window, or cloak the log in parts")
    keys = (((triples.ix * grid.ny + triples.iy) * n_windows + (triples.w - w0)) * len(users)
            + triples.u)
    by_key = np.argsort(keys)
    lookup = {"users": _user_keys(np.asarray(users)), "keys": keys[by_key], "order": by_key,
              "region": region, "w0": w0, "n_windows": n_windows, "n_users": len(users),
              "aggregate": aggregate}
    sorted_triples = kept_pos[order]  # triples in publication order
    if aggregate:
        ks = pkeys.key[order]
        new = np.ones(ks.size, dtype=bool)
        np.not_equal(ks[1:], ks[:-1], out=new[1:])
        lookup["row_of_triple"] = np.full(len(region), -1, dtype=np.int64)
        lookup["row_of_triple"][sorted_triples] = np.cumsum(new) - 1
    else:
        first_row = np.zeros(len(region), dtype=np.int64)
        first_row[sorted_triples] = np.cumsum(weight[sorted_triples]) - weight[sorted_triples]
        n_parts = int(ddf.npartitions)
        pp = per_part.merge(parts[["ix", "iy", "w", "user"]].assign(triple=np.arange(len(parts))),
                            on=["ix", "iy", "w", "user"])
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
    source_index = ddf.map_partitions(_source_rows, cols, grid, window_ns, _shared(lookup),
                                      meta=pd.Series(dtype=np.int64, name="published_row"))
    timings["output"] = _time.perf_counter() - t2
    n_suppressed = int(weight[~kept].sum())
    utility: dict[str, Any] = {"suppression_share": (n_suppressed + n_input - n_valid) / n_input}
    risk: dict[str, Any] = {}
    if measure and kept.any():
        from . import risk as _risk

        codes, inv = np.unique(region[kept], return_inverse=True)
        b = grid.bounds(codes)
        area = lonlat_rectangle_area(b[:, 0], b[:, 1], b[:, 2], b[:, 3])
        utility.update({"n_regions": int(codes.size),
                        "region_km2_mean": float(area.mean() / 1e6),
                        "region_km2_median": float(np.median(area) / 1e6),
                        "fix_weighted_mean_km2": float(
                            (area[inv.reshape(-1)] * weight[kept]).sum() / weight[kept].sum() / 1e6)})
        before_df = pd.DataFrame({"user": triples.u, "place": triples.ix * grid.ny + triples.iy,
                                  "window": triples.w, "weight": weight})
        after_df = before_df[kept].assign(place=region[kept])
        risk = _risk.risk_summary(before_df, after_df, seed=seed)
    release = Release(
        data=data, datatype="location", verifier=lambda d: verify_cloaked(d, k),
        models=[KAnonymity(k)], partition=None,
        parameters={"k": k, "window": str(pd.Timedelta(window_ns, unit="ns")), "method": method,
                    "cell_size_m": grid.cell_size, "levels": grid.top, "aggregate": aggregate,
                    "seed": seed, "columns": dict(zip(("user", "time", "lat", "lon"), cols)),
                    "engine": "dask"},
        utility=utility, risk=risk, timings=timings,
        suppressed=n_suppressed + n_input - n_valid, n_individuals=n_input,
        info={**_info(grid, n_suppressed, n_input - n_valid, dropped, int(len(users)),
                      int(np.unique(triples.w).size), pseud.key_source, stats_assign, k),
              "npartitions": int(ddf.npartitions)},
        source_index=source_index,
    )
    t3 = _time.perf_counter()
    release.verify(strict=True)
    timings["verify"] = _time.perf_counter() - t3
    return release


def _lazy_frame(rows, grid: CloakingGrid, window_ns: int, npartitions: int) -> Any:
    """The published rows as a lazy dask DataFrame of about ``npartitions`` parts."""
    import dask
    import dask.dataframe as dd

    reps = rows.repeat if rows.repeat is not None else np.ones(len(rows), dtype=np.int64)
    ends = np.cumsum(reps)
    total = int(ends[-1]) if ends.size else 0
    cuts = np.unique(np.searchsorted(ends, np.linspace(0, total, npartitions + 1)[1:-1],
                                     side="right"))
    bounds = [0, *[int(c) for c in cuts if 0 < c < len(rows)], len(rows)]
    starts = [0 if lo == 0 else int(ends[lo - 1]) for lo in bounds[:-1]]
    divisions = (*starts, max(total - 1, 0))
    shared = _shared(rows)
    pieces = [(lo, hi, start) for lo, hi, start in zip(bounds[:-1], bounds[1:], starts)]
    meta = rows.frame(grid, window_ns, 0, 0)
    with dask.config.set({"dataframe.convert-string": False}):  # the same dtypes as pandas
        return dd.from_map(lambda piece, r: _rows_frame(r, grid, window_ns, *piece), pieces,
                           args=[shared], meta=meta, divisions=divisions,
                           enforce_metadata=False)
