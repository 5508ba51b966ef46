"""Spatio-temporal cloaking of location fixes on a fixed or adaptive grid pyramid."""

from __future__ import annotations

import time as _time
from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon import CheckResult, Partition, Release
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer
from structanon.models import KAnonymity

from ._assign import METHODS, Triples, assign_regions, dense_codes
from ._grid import CloakingGrid
from ._input import Fixes, parse_fixes, parse_window

__all__ = ["cloak", "verify_cloaked", "DEFAULT_CELL_SIZE"]

DEFAULT_CELL_SIZE = 100.0  # metres, side of a level-0 cell
OUTPUT_COLUMNS = ["user", "window", "region_id", "region"]


def _check_params(k: Any, method: str) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError("k must be a positive integer", value=k)
    if method not in METHODS:
        raise InputError(f"method must be one of {list(METHODS)}", value=method)
    return int(k)


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


def _build_output(index, user_codes, pseudonyms, w, region_codes, window_ns, grid) -> pd.DataFrame:
    inv, uniq = pd.factorize(region_codes)
    polys = grid.polygons(uniq)
    window = pd.to_datetime(w * window_ns, unit="ns", utc=True)
    return pd.DataFrame(
        {
            "user": pseudonyms[user_codes],
            "window": window,
            "region_id": region_codes,
            "region": polys[inv],
        },
        index=index,
    )


def cloak(
    df: Any,
    k: int,
    window: str | pd.Timedelta | int = "15min",
    method: str = "fixed",
    user: str = "user",
    time: str = "time",
    lat: str = "lat",
    lon: str = "lon",
    seed: int | None = None,
    *,
    cell_size: float = DEFAULT_CELL_SIZE,
    levels: int | None = None,
    drop_invalid: bool = False,
    pseudonymizer: Pseudonymizer | None = None,
    measure: bool = True,
    source: str | None = None,
) -> Release:
    """Cloak a location log so every published region holds >= k users per time window.

    Parameters
    ----------
    df : pandas.DataFrame or dask.dataframe.DataFrame
        One row per fix.  A dask DataFrame runs the distributed path, which gives the
        same assignment as pandas and returns ``Release.data`` as a dask DataFrame.
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
        Seeds the random choices of the utility and risk measures (range queries, unicity
        samples); the cloaking itself is deterministic.
    cell_size : float
        Side of a level-0 cell in metres of the equal-area projection.
    levels : int, optional
        Maximum number of pyramid merges above level 0 (default: up to one cell covering
        every fix).
    drop_invalid : bool
        Drop and count invalid rows instead of rejecting the input.
    pseudonymizer : structanon.io.Pseudonymizer, optional
        Keyed pseudonymization of user ids (default: a fresh random key, never stored).
    measure : bool
        Compute utility and risk measures (set False for the fastest run).
    source : str, optional
        File the rows came from: errors then cite its line numbers.

    Returns
    -------
    Release
        ``data``: DataFrame indexed like the input, suppressed fixes absent, with columns
        ``user`` (pseudonym), ``window`` (UTC start), ``region_id`` (int64) and ``region``
        (shapely Polygon, WGS84 lon/lat).  ``suppressed`` counts fixes not published
        (cloaking suppression plus dropped invalid rows, itemised in ``info``).

    Raises
    ------
    InputError
        Missing columns, invalid rows (unless ``drop_invalid``), bad parameters.
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

    Notes
    -----
    Fixes are projected with the Lambert cylindrical equal-area projection centred on the
    data (see ``location._grid``).  For each time window ``w`` and pyramid level ``L`` =
    0, 1, ..., top, the fixes not yet published are grouped by their level-L cell; a
    group is published when ``|{users in (cell, w)}| >= k``, otherwise it moves up.  So
    each fix gets the smallest pyramid cell (or, adaptively, half-cell) containing it that
    holds k distinct users among the fixes not already published in a smaller region, and
    every published (region, window) holds >= k distinct users.  Leftovers of a top cell
    (fewer than k users) join the lightest group published in the smallest cell that
    contains them and a published group; only windows whose top cell has fewer than k
    users in all are suppressed.

    References
    ----------
    M. Gruteser and D. Grunwald, "Anonymous usage of location-based services through
    spatial and temporal cloaking", MobiSys 2003.
    M. F. Mokbel, C.-Y. Chow and W. G. Aref, "The New Casper: query processing for
    location services without compromising privacy", VLDB 2006.
    """
    k = _check_params(k, method)
    window_ns = parse_window(window)
    if hasattr(df, "dask"):
        from ._dask import cloak_dask

        return cloak_dask(df, k, window_ns, method, user, time, lat, lon, seed,
                          cell_size=cell_size, levels=levels, drop_invalid=drop_invalid,
                          pseudonymizer=pseudonymizer, measure=measure)
    timings: dict[str, float] = {}
    t0 = _time.perf_counter()
    fixes = parse_fixes(df, user, time, lat, lon, drop_invalid, source)
    if len(fixes.index) == 0:
        raise InfeasibleError("no valid fixes to cloak")
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
    pseud = pseudonymizer or Pseudonymizer()
    pseudonyms = pseud.pseudonymize(np.asarray(user_values, dtype=object).astype(str))
    kept = region >= 0
    data = _build_output(fixes.index[kept], user_codes[kept], pseudonyms, w[kept], region[kept],
                         window_ns, grid)
    timings["output"] = _time.perf_counter() - t2
    return _finish(
        data=data, k=k, method=method, window_ns=window_ns, grid=grid, fixes=fixes,
        ix=ix, iy=iy, w=w, user_codes=user_codes, region=region, stats=stats,
        timings=timings, seed=seed, measure=measure, key_source=pseud.key_source,
        columns={"user": user, "time": time, "lat": lat, "lon": lon},
    )


def _finish(*, data, k, method, window_ns, grid, fixes, ix, iy, w, user_codes, region, stats,
            timings, seed, measure, key_source, columns) -> Release:
    """Partition, utility, risk, verification: the shared tail of both paths."""
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

        original = pd.DataFrame({"lat": fixes.lat, "lon": fixes.lon,
                                 "time": pd.to_datetime(fixes.t_ns, unit="ns", utc=True)},
                                index=fixes.index)
        utility = _metrics.utility_summary(original, data, pd.Timedelta(window_ns, unit="ns"),
                                           seed=seed)
        utility["suppression_share"] = (n_cloak_suppressed + fixes.n_dropped) / fixes.n_input
        before = pd.DataFrame({"user": user_codes, "place": ix * grid.ny + iy, "window": w})
        after = pd.DataFrame({"user": user_codes[kept], "place": region[kept], "window": w[kept]})
        risk = _risk.risk_summary(before, after, seed=seed)
        timings["measures"] = _time.perf_counter() - t3
    release = Release(
        data=data,
        datatype="location",
        verifier=lambda d: verify_cloaked(d, k),
        models=[KAnonymity(k)],
        partition=partition,
        parameters={"k": k, "window": str(pd.Timedelta(window_ns, unit="ns")), "method": method,
                    "cell_size_m": grid.cell_size, "levels": grid.top, "columns": columns,
                    "seed": seed},
        utility=utility,
        risk=risk,
        timings=timings,
        suppressed=n_cloak_suppressed + fixes.n_dropped,
        n_individuals=fixes.n_input,
        info={
            "grid": grid.to_dict(),
            "fixes_suppressed_by_cloaking": n_cloak_suppressed,
            "invalid_fixes_dropped": fixes.n_dropped,
            "invalid_reasons": fixes.dropped,
            "first_invalid_lines": fixes.first_dropped,
            "users": int(user_codes.max()) + 1 if len(user_codes) else 0,
            "windows": int(len(np.unique(w))),
            "pseudonym_key": key_source,
            **stats,
        },
    )
    t4 = _time.perf_counter()
    release.verify(strict=True)
    timings["verify"] = _time.perf_counter() - t4
    return release
