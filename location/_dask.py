"""Cloaking of a dask DataFrame: the same assignment as pandas, computed in three passes.

1. per partition: validity counts and the coordinate bounds (fixes the grid);
2. per partition: the (level-0 cell, window, user) triples with their fix counts, reduced
   on the client, where the assignment runs exactly as for pandas (it depends only on the
   triples and their weights, never on row order);
3. per partition: each fix joins its triple's region (lazy; ``Release.data`` stays a
   dask DataFrame).
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
from ._input import parse_fixes

__all__ = ["cloak_dask"]


def _stats(pdf: pd.DataFrame, cols: tuple[str, str, str, str]) -> pd.DataFrame:
    f = parse_fixes(pdf, *cols, drop_invalid=True)
    first_bad = -1
    if f.n_dropped:
        bad = ~pdf.index.isin(f.index)
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


def _triples(pdf, cols, grid, window_ns) -> pd.DataFrame:
    _, ix, iy, w, user = _keys(pdf, cols, grid, window_ns)
    frame = pd.DataFrame({"ix": ix, "iy": iy, "w": w, "user": user, "weight": 1})
    return frame.groupby(["ix", "iy", "w", "user"], sort=False)["weight"].sum().reset_index()


def _triples_meta(user_dtype) -> pd.DataFrame:
    integer = pd.api.types.is_integer_dtype(user_dtype)
    return pd.DataFrame({"ix": pd.Series(dtype=np.int64), "iy": pd.Series(dtype=np.int64),
                         "w": pd.Series(dtype=np.int64),
                         "user": pd.Series(dtype=np.int64 if integer else object),
                         "weight": pd.Series(dtype=np.int64)})


def _label(pdf, cols, grid, window_ns, lookup: dict) -> pd.DataFrame:
    """Each valid fix of the partition with its triple's region (suppressed fixes dropped)."""
    f, ix, iy, w, user = _keys(pdf, cols, grid, window_ns)
    # sorted arrays and searchsorted: thread-safe, unlike a shared pandas Index's hash engine
    u = np.searchsorted(lookup["users"], user)
    key = ((ix * grid.ny + iy) * lookup["n_windows"] + (w - lookup["w0"])) * lookup["n_users"] + u
    region = lookup["region"][np.searchsorted(lookup["keys"], key)]
    kept = region >= 0
    region = region[kept]
    uniq, inv = np.unique(region, return_inverse=True)
    polys = grid.polygons(uniq)[inv.reshape(-1)] if uniq.size else np.zeros(0, dtype=object)
    return pd.DataFrame({
        "user": lookup["pseudonyms"][u[kept]],
        "window": pd.to_datetime(w[kept] * window_ns, unit="ns", utc=True),
        "region_id": region,
        "region": polys,
    }, index=f.index[kept])


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
               drop_invalid: bool, pseudonymizer: Pseudonymizer | None,
               measure: bool) -> Release:
    """See :func:`location.cloak`; ``ddf`` is a dask DataFrame."""
    from ._cloak import _require_some_published, verify_cloaked

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
        raise InfeasibleError("no valid fixes to cloak")
    grid = CloakingGrid.fit(stats["lon_min"].min(), stats["lon_max"].max(),
                            stats["lat_min"].min(), stats["lat_max"].max(), cell_size, levels)
    parts = ddf.map_partitions(_triples, cols, grid, window_ns, meta=_triples_meta(ddf[user].dtype)).compute()
    parts = parts.groupby(["ix", "iy", "w", "user"], sort=True)["weight"].sum().reset_index()
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
    pseud = pseudonymizer or Pseudonymizer()
    w0 = int(triples.w.min())
    n_windows = int(triples.w.max()) - w0 + 1
    if grid.nx * grid.ny * n_windows * len(users) >= 2**62:
        raise InputError("too many cells x windows x users to index the dask path: increase "
                         "cell_size or window, or cloak the log in parts")
    keys = (((triples.ix * grid.ny + triples.iy) * n_windows + (triples.w - w0)) * len(users)
            + triples.u)
    order = np.argsort(keys)
    lookup = {"users": _user_keys(np.asarray(users)), "keys": keys[order], "region": region[order],
              "w0": w0,
              "n_windows": n_windows, "n_users": len(users),
              "pseudonyms": pseud.pseudonymize(np.asarray(users, dtype=object))}
    meta = pd.DataFrame({"user": pd.Series(dtype=object),
                         "window": pd.Series(dtype="datetime64[ns, UTC]"),
                         "region_id": pd.Series(dtype=np.int64),
                         "region": pd.Series(dtype=object)})
    data = ddf.map_partitions(_label, cols, grid, window_ns, _shared(lookup), meta=meta)
    weight = triples.weight
    kept = region >= 0
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
        before = pd.DataFrame({"user": triples.u, "place": triples.ix * grid.ny + triples.iy,
                               "window": triples.w, "weight": weight})
        after = before[kept].assign(place=region[kept])
        risk = _risk.risk_summary(before, after, seed=seed)
    release = Release(
        data=data, datatype="location", verifier=lambda d: verify_cloaked(d, k),
        models=[KAnonymity(k)], partition=None,
        parameters={"k": k, "window": str(pd.Timedelta(window_ns, unit="ns")), "method": method,
                    "cell_size_m": grid.cell_size, "levels": grid.top, "seed": seed,
                    "columns": dict(zip(("user", "time", "lat", "lon"), cols)), "engine": "dask"},
        utility=utility, risk=risk, timings=timings,
        suppressed=n_suppressed + n_input - n_valid, n_individuals=n_input,
        info={"grid": grid.to_dict(), "fixes_suppressed_by_cloaking": n_suppressed,
              "invalid_fixes_dropped": n_input - n_valid, "invalid_reasons": dropped,
              "users": int(len(users)), "windows": int(np.unique(triples.w).size),
              "pseudonym_key": pseud.key_source, "npartitions": int(ddf.npartitions),
              **stats_assign},
    )
    t2 = _time.perf_counter()
    release.verify(strict=True)
    timings["verify"] = _time.perf_counter() - t2
    return release
