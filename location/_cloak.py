"""Spatio-temporal cloaking of location fixes on a fixed or adaptive grid pyramid."""

from __future__ import annotations

import time as _time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon import CheckResult, Partition, Release
from structanon._validation import check_choice, check_float, check_int
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer, release_key
from structanon.models import KAnonymity

from ._assign import METHODS, Triples, assign_regions, dense_codes
from ._grid import CloakingGrid
from ._input import Fixes, parse_fixes, parse_window
from ._publish import publication_keys, published_rows

__all__ = ["cloak", "verify_cloaked", "DEFAULT_CELL_SIZE"]

DEFAULT_CELL_SIZE = 100.0  # metres, side of a level-0 cell


def _check_params(k: Any, method: Any, window: Any, cell_size: Any, levels: Any
                  ) -> tuple[int, str, int, float, int | None]:
    """Every parameter checked before any input is read, each error naming its parameter."""
    k = check_int(k, "k", min_value=1)
    method = check_choice(method, "method", METHODS)
    window_ns = parse_window(window)
    cell_size = check_float(cell_size, "cell_size", min_value=0, include_min=False)
    levels = None if levels is None else check_int(levels, "levels", min_value=0)
    return k, method, window_ns, cell_size, levels


def _warnings(k: int) -> list[str]:
    if k == 1:
        return ["k = 1 gives no protection: every fix is published in its own finest cell"]
    return []


def _no_fixes(fixes: Fixes, source: str | None = None) -> InputError:
    if fixes.n_input == 0:
        return InputError("the log holds no fixes (an empty or header-only file? wrong --sep?)",
                          path=source)
    return InputError(f"all {fixes.n_input} rows are invalid: {fixes.dropped} (wrong --sep, "
                      "wrong column names (--user/--time/--lat/--lon) or a wrong time format?)",
                      path=source)


def _require_some_published(region: np.ndarray, k: int) -> None:
    if not (region >= 0).any():
        raise InfeasibleError(f"no time window holds {k} distinct users: every fix would be "
                              "suppressed")


def _distinct_users_per_group(keys: pd.DataFrame) -> np.ndarray:
    """Distinct users per (region_id, window) of rows ``region_id, window, user``."""
    region, _ = pd.factorize(keys["region_id"])
    window, _ = pd.factorize(keys["window"])
    user, users = pd.factorize(keys["user"])
    group, n_groups = dense_codes(region, window)
    pairs = pd.unique(group * len(users) + user)
    return np.bincount(pairs // max(len(users), 1), minlength=n_groups)


def verify_cloaked(data: pd.DataFrame, k: int) -> list[CheckResult]:
    """Recount distinct users per published (region_id, window) from the release alone.

    Parameters
    ----------
    data : DataFrame (pandas or dask)
        A cloaked release's data: columns ``user``, ``window``, ``region_id``, ``region``.
    k : int

    Returns
    -------
    list of CheckResult
        The count check (worst = fewest distinct users of a group) and, for pandas data,
        a check that each ``region_id`` always carries the same polygon bounds.

    Examples
    --------
    >>> import pandas as pd, shapely
    >>> d = pd.DataFrame({"user": ["p", "q", "p"], "window": [0, 0, 1],
    ...                   "region_id": [7, 7, 7], "region": [shapely.box(0, 0, 1, 1)] * 3})
    >>> [c.passed for c in verify_cloaked(d, 2)], verify_cloaked(d, 2)[0].worst
    ([False, True], 1.0)

    Notes
    -----
    Passes when ``min over (r, w) of |{u : (u, w, r) in data}| >= k``.
    """
    columns = ["region_id", "window", "user"]
    if not hasattr(data, "columns") or not hasattr(data, "__getitem__"):
        raise InputError(f"expected a cloaked DataFrame, got {type(data).__name__}")
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise InputError(f"not a cloaked release: no column {missing[0]!r} (columns "
                         f"{list(map(str, data.columns))})", column=missing[0])
    if hasattr(data, "dask"):
        keys = data[columns].map_partitions(pd.DataFrame.drop_duplicates).compute()
    else:
        keys = data[columns]
    counts = _distinct_users_per_group(keys) if len(keys) else np.zeros(0, dtype=np.int64)
    model = KAnonymity(k)
    ok = model.group_ok(counts)
    results = [CheckResult(
        model=f"distinct users per (region, window) >= {k}", passed=bool(ok.all()),
        worst=float(counts.min()) if counts.size else float("nan"), threshold=float(k),
        n_groups=int(counts.size), failing_groups=np.flatnonzero(~ok),
        details={"published_groups": int(counts.size)})]
    if not hasattr(data, "dask") and len(data):
        # bounds of each distinct (region_id, polygon object), then one bounds per region_id
        objects = np.asarray(data["region"].to_numpy())
        obj_id = np.fromiter(map(id, objects), dtype=np.int64, count=len(objects))
        pairs = pd.DataFrame({"region_id": data["region_id"].to_numpy(), "obj": obj_id})
        rows = np.flatnonzero(~pairs.duplicated().to_numpy())
        b = pd.DataFrame(shapely.bounds(objects[rows]), columns=["w", "s", "e", "n"])
        b["region_id"] = pairs["region_id"].to_numpy()[rows]
        n_shapes = b.drop_duplicates().groupby("region_id").size()
        bad = np.flatnonzero(n_shapes.to_numpy() > 1)
        results.append(CheckResult(
            model="one polygon per region_id", passed=bad.size == 0,
            worst=float(bad.size), threshold=0.0, n_groups=int(len(n_shapes)),
            failing_groups=bad[:100]))
    return results


def _cell_and_window(fixes: Fixes, grid: CloakingGrid, window_ns: int):
    ix, iy = grid.cells(fixes.lon, fixes.lat)
    w = np.floor_divide(fixes.t_ns, window_ns)
    return ix, iy, w


def cloak(
    df: Any,
    k: int,
    window: str | pd.Timedelta | int = "15min",
    method: str = "fixed",
    user: str = "user",
    time: str = "time",
    lat: str = "lat",
    lon: str = "lon",
    seed: int | None = 0,
    *,
    cell_size: float = DEFAULT_CELL_SIZE,
    levels: int | None = None,
    drop_invalid: bool = False,
    aggregate: bool = False,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
    source: str | None = None,
    pseudonymizer: Pseudonymizer | None = None,
    measure: bool | None = None,
) -> Release:
    """Cloak a location log so every published region holds >= k users per time window.

    Parameters
    ----------
    df : pandas.DataFrame or dask.dataframe.DataFrame
        One row per fix.  A dask DataFrame runs the distributed path, which gives the
        same release as pandas and returns ``Release.data`` as a dask DataFrame.
    k : int
        Minimum number of distinct users in every published (region, window).
    window : str, Timedelta or seconds
        Time-window length; windows are aligned on the Unix epoch in UTC.
    method : {"fixed", "adaptive"}
        ``fixed``: square cells of a fixed grid, merged up a pyramid of 2x2 blocks.
        ``adaptive``: the quadtree pyramid plus Casper's merges of two neighbouring cells.
    user, time, lat, lon : str
        Column names.  Times are ISO 8601 strings (offsets respected, naive = UTC),
        datetimes, or epoch seconds.
    seed : int, optional
        Public seed of the measures' random choices (range queries, unicity samples); the
        cloaking itself is deterministic, and the seed never decides the published order.
    cell_size : float
        Side of a level-0 cell in metres of the equal-area projection.
    levels : int, optional
        Maximum number of pyramid merges above level 0 (default: up to one cell covering
        every fix).
    drop_invalid : bool
        Drop and count invalid rows instead of rejecting the input.
    aggregate : bool
        Publish one row per (pseudonym, window, region) with its fix count ``n_fixes``
        instead of one row per fix.  Per-fix rows tell how many fixes each user has in
        each window; aggregate whenever the rows' number is not needed.
    key : Pseudonymizer, bytes, key-file path, optional
        Secret key of the pseudonyms (see :func:`structanon.io.release_key`; default:
        ``$STRUCTANON_PSEUDONYM_KEY``, else a fresh random key, never stored).
        ``pseudonymizer`` is an alias.
    measures : bool
        Compute utility and risk measures (set False for the fastest run); ``measure``
        is an alias.
    source : str, optional
        File the rows came from: errors then cite its line numbers.

    Returns
    -------
    Release
        ``data``: DataFrame with a fresh ``RangeIndex``, suppressed fixes absent, columns
        ``user`` (pseudonym), ``window`` (UTC start), ``region_id`` (int64), ``region``
        (shapely Polygon, WGS84 lon/lat) and, aggregated, ``n_fixes``; rows sorted by
        window, region_id and user, so their order carries nothing else.
        ``source_index``: the publisher's private link to the input, never written: per
        published row, the input row label (aggregated: a Series from each published
        fix's input label to its row).  ``suppressed`` counts fixes not published
        (cloaking suppression plus dropped invalid rows, itemised in ``info``).

    Raises
    ------
    InputError
        Missing columns, invalid rows (unless ``drop_invalid``), no valid fix at all, bad
        parameters (each named).
    InfeasibleError
        Fewer than ``k`` distinct users in the whole log, or in every time window.
    VerificationError
        The recount of users per (region, window) fails (never expected).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"user": ["a", "b", "c", "a"],
    ...                    "time": ["2024-05-01T10:00:00Z"] * 4,
    ...                    "lat": [48.8566, 48.8567, 48.8570, 48.8569],
    ...                    "lon": [2.3522, 2.3525, 2.3519, 2.3521]})
    >>> r = cloak(df, k=3, window="15min")
    >>> len(r.data), r.suppressed, r.verify().passed
    (4, 0, True)
    >>> r.data["region"].iloc[0].contains(__import__("shapely").Point(2.3522, 48.8566))
    True
    >>> int(cloak(df, k=3, aggregate=True).data["n_fixes"].sum())
    4

    Notes
    -----
    Fixes are projected with the Lambert cylindrical equal-area projection centred on the
    data to the nearest degree (see ``location._grid``).  For each time window ``w`` and
    pyramid level ``L`` = 0, 1, ..., top, the fixes not yet published are grouped by their
    level-L cell; a group is published when ``|{users in (cell, w)}| >= k``, otherwise it
    moves up.  So each fix gets the smallest pyramid cell (or, adaptively, half-cell)
    containing it that holds k distinct users among the fixes not already published in a
    smaller region, and every published (region, window) holds >= k distinct users.
    Leftovers of a top cell (fewer than k users) join the lightest group published in the
    smallest cell that contains them and a published group; only windows whose top cell
    has fewer than k users in all are suppressed.

    References
    ----------
    M. Gruteser and D. Grunwald, "Anonymous usage of location-based services through
    spatial and temporal cloaking", MobiSys 2003.
    M. F. Mokbel, C.-Y. Chow and W. G. Aref, "The New Casper: query processing for
    location services without compromising privacy", VLDB 2006.
    """
    k, method, window_ns, cell_size, levels = _check_params(k, method, window, cell_size, levels)
    seed = None if seed is None else check_int(seed, "seed", min_value=0)
    measures = bool(measures if measure is None else measure)
    pseud = release_key(pseudonymizer if pseudonymizer is not None else key)
    if hasattr(df, "dask"):
        from ._dask import cloak_dask

        return cloak_dask(df, k, window_ns, method, user, time, lat, lon, seed,
                          cell_size=cell_size, levels=levels, drop_invalid=drop_invalid,
                          pseudonymizer=pseud, measure=measures, aggregate=bool(aggregate))
    timings: dict[str, float] = {}
    t0 = _time.perf_counter()
    fixes = parse_fixes(df, user, time, lat, lon, drop_invalid, source)
    if len(fixes.index) == 0:
        raise _no_fixes(fixes, source)
    user_codes, user_values = pd.factorize(fixes.user, sort=False)
    if len(user_values) < k:
        raise InfeasibleError(f"the log holds {len(user_values)} distinct users, fewer than k={k}")
    grid = CloakingGrid.fit(fixes.lon.min(), fixes.lon.max(), fixes.lat.min(), fixes.lat.max(),
                            cell_size, levels)
    ix, iy, w = _cell_and_window(fixes, grid, window_ns)
    triples, inverse = Triples.from_fixes(ix, iy, w, user_codes.astype(np.int64))
    timings["prepare"] = _time.perf_counter() - t0
    t1 = _time.perf_counter()
    region_of_triple, stats = assign_regions(triples, grid, k, method)
    _require_some_published(region_of_triple, k)
    region = region_of_triple[inverse]
    timings["assign"] = _time.perf_counter() - t1
    t2 = _time.perf_counter()
    pseudonyms = pseud.pseudonymize(np.asarray(user_values, dtype=object).astype(str))
    kept_pos = np.flatnonzero(region >= 0)
    # keys per triple; a suppressed triple (never published) borrows a published code
    keys = publication_keys(triples.w, np.where(region_of_triple >= 0, region_of_triple,
                                                region_of_triple.max()), triples.u, pseudonyms)
    rows, order = published_rows(keys.take(inverse[kept_pos]), None, aggregate=False)
    published = kept_pos[order]  # positions (into the valid fixes) in publication order
    data = rows.frame(grid, window_ns)
    timings["output"] = _time.perf_counter() - t2
    return _finish(
        data=data, k=k, method=method, window_ns=window_ns, grid=grid, fixes=fixes,
        ix=ix, iy=iy, w=w, user_codes=user_codes, region=region, published=published,
        stats=stats, timings=timings, seed=seed, measure=measures, aggregate=bool(aggregate),
        key_source=pseud.key_source, columns={"user": user, "time": time, "lat": lat, "lon": lon},
    )


def _aggregate_frame(data: pd.DataFrame, labels: pd.Index) -> tuple[pd.DataFrame, pd.Series]:
    """One row per run of identical (window, region_id, user) rows of a sorted per-fix frame."""
    window = data["window"].to_numpy()
    region_id = data["region_id"].to_numpy()
    user = data["user"].to_numpy()
    start = np.ones(len(data), dtype=bool)
    start[1:] = (window[1:] != window[:-1]) | (region_id[1:] != region_id[:-1]) | (
        user[1:] != user[:-1])
    run = np.cumsum(start) - 1
    out = data.iloc[np.flatnonzero(start)].reset_index(drop=True)
    out["n_fixes"] = np.bincount(run).astype(np.int64)
    return out, pd.Series(run, index=labels, name="published_row")


def _finish(*, data, k, method, window_ns, grid, fixes, ix, iy, w, user_codes, region, published,
            stats, timings, seed, measure, aggregate, key_source, columns) -> Release:
    """Partition, utility, risk, aggregation, verification: the tail of the pandas path."""
    n_cloak_suppressed = int((region < 0).sum())
    labels = np.full(len(region), -1, dtype=np.int64)
    kept = region >= 0
    if kept.any():
        labels[kept], _ = dense_codes(region[kept] - region[kept].min(), w[kept] - w[kept].min())
    partition = Partition(labels)
    utility: dict[str, Any] = {}
    risk: dict[str, Any] = {}
    if measure:
        t3 = _time.perf_counter()
        from . import metrics as _metrics
        from . import risk as _risk

        # published fixes first, in publication order, so labels match ``data``'s RangeIndex
        positions = np.concatenate([published, np.flatnonzero(~kept)])
        original = pd.DataFrame({"lat": fixes.lat[positions], "lon": fixes.lon[positions],
                                 "time": pd.to_datetime(fixes.t_ns[positions], unit="ns",
                                                        utc=True)})
        utility = _metrics.utility_summary(original, data, pd.Timedelta(window_ns, unit="ns"),
                                           seed=seed)
        utility["suppression_share"] = (n_cloak_suppressed + fixes.n_dropped) / fixes.n_input
        before = pd.DataFrame({"user": user_codes, "place": ix * grid.ny + iy, "window": w})
        after = pd.DataFrame({"user": user_codes[kept], "place": region[kept], "window": w[kept]})
        risk = _risk.risk_summary(before, after, seed=seed)
        timings["measures"] = _time.perf_counter() - t3
    source_index = fixes.index[published]
    if aggregate:
        data, source_index = _aggregate_frame(data, source_index)
    release = Release(
        data=data,
        datatype="location",
        verifier=lambda d: verify_cloaked(d, k),
        models=[KAnonymity(k)],
        partition=partition,
        parameters={"k": k, "window": str(pd.Timedelta(window_ns, unit="ns")), "method": method,
                    "cell_size_m": grid.cell_size, "levels": grid.top, "aggregate": aggregate,
                    "columns": columns, "seed": seed},
        utility=utility,
        risk=risk,
        timings=timings,
        suppressed=n_cloak_suppressed + fixes.n_dropped,
        n_individuals=fixes.n_input,
        info=_info(grid, n_cloak_suppressed, fixes.n_dropped, fixes.dropped,
                   int(user_codes.max()) + 1 if len(user_codes) else 0,
                   int(len(np.unique(w))), key_source, stats, k),
        source_index=source_index,
    )
    t4 = _time.perf_counter()
    release.verify(strict=True)
    timings["verify"] = _time.perf_counter() - t4
    return release


def _info(grid: CloakingGrid, n_cloak_suppressed: int, n_dropped: int, reasons: dict,
          users: int, windows: int, key_source: str, stats: dict, k: int) -> dict[str, Any]:
    """``Release.info`` of both paths: counts and the data-independent grid only."""
    return {
        "grid": grid.to_dict(),
        "fixes_suppressed_by_cloaking": n_cloak_suppressed,
        "invalid_fixes_dropped": n_dropped,
        "invalid_reasons": reasons,
        "users": users,
        "windows": windows,
        "pseudonym_key": key_source,
        "warnings": _warnings(k),
        **stats,
    }
