"""Spatio-temporal cloaking of location fixes on a fixed or adaptive grid pyramid.

The pandas path, in phases: validate the parameters, prepare (parse the fixes, fit the
grid, reduce fixes to (cell, window, user) triples), assign (:func:`._assign.assign_regions`),
publish (rows sorted by published values, :mod:`._publish`), then
:func:`structanon._finish.finish_release` verifies and measures.  A dask DataFrame goes to
:func:`._dask.cloak_dask`, which shares every phase but the first pass over the data.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon import Partition, Release
from structanon._engine import is_dask, require_dask, resolve_engine
from structanon._finish import Timings, add_warning, finish_release
from structanon._validation import check_choice, check_float, check_int
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer, release_key

from . import metrics as _metrics
from . import risk as _risk
from ._assign import METHODS, Triples, assign_regions, dense_codes
from ._dask import cloak_dask
from ._figures import INPUT_POINTS
from ._geo import LocationRelease, from_geodataframe
from ._grid import MAX_CELL_SIZE, CloakingGrid
from ._input import (
    Fixes,
    drop_bad_lines,
    no_fixes_error,
    parse_fixes,
    parse_window,
    user_keys,
)
from ._publish import (
    LINKAGE_WARNING,
    LINKAGES,
    bound_pseudonymizer,
    fix_digest,
    publication_keys,
    published_rows,
    published_users,
    release_info,
    release_parameters,
    require_some_published,
)
from ._trajectory import require_no_dask
from ._trajectory_release import (
    DEFAULT_BLOCK_SIZE,
    DEFAULT_MAX_SUPPRESSION,
    check_trajectory_params,
    cloak_trajectories,
)
from ._verify import cloaking_models, verify_cloaked

__all__ = ["cloak", "verify_cloaked", "DEFAULT_CELL_SIZE"]

DEFAULT_CELL_SIZE = 100.0  # metres, side of a level-0 cell


def _check_params(
    k: Any, method: Any, window: Any, cell_size: Any, levels: Any
) -> tuple[int, str, int, float, int | None]:
    """Every parameter checked before any input is read, each error naming its parameter."""
    k = check_int(k, "k", min_value=1)
    method = check_choice(method, "method", METHODS)
    window_ns = parse_window(window)
    cell_size = check_float(
        cell_size, "cell_size", min_value=0, include_min=False, max_value=MAX_CELL_SIZE
    )
    levels = None if levels is None else check_int(levels, "levels", min_value=0)
    return k, method, window_ns, cell_size, levels


def _measures_flag(measures: bool, measure: bool | None) -> bool:
    """``measures``, or the deprecated ``measure`` alias (with a DeprecationWarning)."""
    check_choice(measures, "measures", (True, False))
    if measure is None:
        return bool(measures)
    warnings.warn(
        "location.cloak(measure=...) is deprecated; use measures=...",
        DeprecationWarning,
        stacklevel=3,
    )
    return bool(measure)


@dataclass
class _Prepared:
    """The valid fixes reduced to (level-0 cell, window, user) triples on a fitted grid."""

    fixes: Fixes
    user_codes: np.ndarray
    user_values: np.ndarray
    grid: CloakingGrid
    ix: np.ndarray
    iy: np.ndarray
    w: np.ndarray
    triples: Triples
    inverse: np.ndarray


def _prepare(
    df: Any,
    k: int,
    columns: dict[str, str],
    drop_invalid: bool,
    source: str | None,
    cell_size: float,
    levels: int | None,
    window_ns: int,
) -> _Prepared:
    fixes = parse_fixes(
        df, columns["user"], columns["time"], columns["lat"], columns["lon"], drop_invalid, source
    )
    if len(fixes.index) == 0:
        raise no_fixes_error(fixes.n_input, fixes.dropped, source, fixes.first_bad)
    user_codes, user_values = pd.factorize(fixes.user, sort=False)
    if len(user_values) < k:
        raise InfeasibleError(f"k={k} exceeds the number of users in the log ({len(user_values)})")
    grid = CloakingGrid.fit(
        fixes.lon.min(), fixes.lon.max(), fixes.lat.min(), fixes.lat.max(), cell_size, levels
    )
    ix, iy = grid.cells(fixes.lon, fixes.lat)
    w = np.floor_divide(fixes.t_ns, window_ns)
    triples, inverse = Triples.from_fixes(ix, iy, w, user_codes.astype(np.int64))
    return _Prepared(fixes, user_codes, np.asarray(user_values), grid, ix, iy, w, triples, inverse)


def _publish(
    prep: _Prepared,
    region_of_triple: np.ndarray,
    pseud: Pseudonymizer,
    window_ns: int,
    linkage: str,
):
    """The per-fix published frame and the valid-fix positions in publication order."""
    triples, inverse = prep.triples, prep.inverse
    region = region_of_triple[inverse]
    codes, pseudonyms = published_users(
        triples.u, triples.w, prep.user_values, pseud, linkage, region_of_triple
    )
    kept_pos = np.flatnonzero(region >= 0)
    # keys per triple; a suppressed triple (never published) borrows a published code
    keys = publication_keys(
        triples.w,
        np.where(region_of_triple >= 0, region_of_triple, region_of_triple.max()),
        codes,
        pseudonyms,
    )
    rows, order = published_rows(keys.take(inverse[kept_pos]), None, aggregate=False)
    published = kept_pos[order]  # positions (into the valid fixes) in publication order
    return rows.frame(prep.grid, window_ns), rows.regions, region, published


def _sorted_user_codes(user_codes: np.ndarray, user_values: np.ndarray) -> np.ndarray:
    """User codes renumbered in the order of their ids (as the dask path numbers them)."""
    order = np.argsort(user_keys(user_values), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank[user_codes]


def _measure(
    prep: _Prepared,
    per_fix: pd.DataFrame,
    region: np.ndarray,
    published: np.ndarray,
    window_ns: int,
    seed: int | None,
    linkage: str,
):
    """The measures of the pandas path, run by ``finish_release`` after verification."""

    def measure(release: Release) -> None:
        fixes, kept = prep.fixes, region >= 0
        # published fixes first, in publication order, so labels match ``per_fix``'s index
        # (identical rows hold their fixes in input order, as on the Dask engine)
        ordered = _ties_in_input_order(published, region, prep.w, prep.user_codes)
        positions = np.concatenate([ordered, np.flatnonzero(~kept)])
        original = pd.DataFrame(
            {
                "lat": fixes.lat[positions],
                "lon": fixes.lon[positions],
                "time": pd.to_datetime(fixes.t_ns[positions], unit="ns", utc=True),
            }
        )
        utility = _metrics.utility_summary(
            original, per_fix, pd.Timedelta(window_ns, unit="ns"), seed=seed
        )
        utility["suppression_share"] = release.suppressed / fixes.n_input
        users = _sorted_user_codes(prep.user_codes, prep.user_values)
        before = pd.DataFrame(
            {"user": users, "place": prep.ix * prep.grid.ny + prep.iy, "window": prep.w}
        )
        after = pd.DataFrame({"user": users[kept], "place": region[kept], "window": prep.w[kept]})
        release.utility = utility
        release.risk = _risk.risk_summary(before, after, seed=seed, linkage=linkage)

    return measure


def _ties_in_input_order(
    published: np.ndarray, region: np.ndarray, w: np.ndarray, user: np.ndarray
) -> np.ndarray:
    """``published`` with the fixes of each run of identical rows in input order."""
    r, ww, uu = region[published], w[published], user[published]
    start = np.ones(len(published), dtype=bool)
    start[1:] = (r[1:] != r[:-1]) | (ww[1:] != ww[:-1]) | (uu[1:] != uu[:-1])
    return published[np.lexsort((published, np.cumsum(start)))]


def _partition(region: np.ndarray, w: np.ndarray) -> Partition:
    labels = np.full(len(region), -1, dtype=np.int64)
    kept = region >= 0
    if kept.any():
        labels[kept], _ = dense_codes(region[kept] - region[kept].min(), w[kept] - w[kept].min())
    return Partition(labels)


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
    on_bad_lines: str = "raise",
    drop_invalid: bool | None = None,
    aggregate: bool = False,
    linkage: str = "window",
    max_suppression: float = DEFAULT_MAX_SUPPRESSION,
    block_size: int = DEFAULT_BLOCK_SIZE,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
    source: str | None = None,
    pseudonymizer: Pseudonymizer | None = None,
    measure: bool | None = None,
    engine: str | None = None,
) -> Release:
    """Cloak a location log so every published region holds >= k users per time window.

    Parameters
    ----------
    df : pandas.DataFrame, geopandas.GeoDataFrame or dask.dataframe.DataFrame
        One row per fix.  A GeoDataFrame's point geometry gives the coordinates (any CRS,
        reprojected to WGS84).  A dask DataFrame runs the distributed path, which gives the
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
    on_bad_lines : {"raise", "drop"}
        Invalid rows (a missing user, a time that does not parse, a missing, non-numeric
        or out-of-range coordinate): ``"raise"`` (the default) rejects the input with an
        :class:`InputError` naming the first one (its file line with ``source``);
        ``"drop"`` drops and counts them (``info["invalid_fixes_dropped"]`` and
        ``info["invalid_reasons"]``, also in ``suppressed``).
    drop_invalid : bool, optional
        Former name of ``on_bad_lines``: ``True`` is ``on_bad_lines="drop"``.
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
        is a deprecated alias.
    source : str, optional
        File the rows came from: errors then cite its line numbers.
    engine : {"pandas", "dask"}, optional
        Default: ``"dask"`` for a Dask DataFrame, else ``"pandas"``; ``"dask"`` with a
        pandas DataFrame splits it into partitions (see docs/dask.md).

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
        ``models``: :class:`~location._verify.WindowKAnonymity` and
        :class:`~location._verify.OnePolygonPerRegion`.  ``info`` holds ``n_users``, the
        number of users, and ``transformation_text``, the transformation in words.

    Raises
    ------
    InputError
        Missing columns, invalid rows (unless ``on_bad_lines="drop"``), no valid fix at all,
        bad parameters (each named).
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
    df = from_geodataframe(df, lat, lon)  # point geometry in any CRS -> lat / lon in WGS84
    k, method, window_ns, cell_size, levels = _check_params(k, method, window, cell_size, levels)
    linkage = check_choice(linkage, "linkage", LINKAGES)
    seed = None if seed is None else check_int(seed, "seed", min_value=0)
    measures = _measures_flag(measures, measure)
    drop_invalid = drop_bad_lines(on_bad_lines, drop_invalid)
    pseud = release_key(pseudonymizer if pseudonymizer is not None else key)
    columns = {"user": user, "time": time, "lat": lat, "lon": lon}
    if linkage == "trajectory":
        max_suppression, block_size = check_trajectory_params(max_suppression, block_size)
        if aggregate:
            raise InputError(
                "aggregate does not apply to linkage='trajectory' (its rows carry no fix "
                "counts: members of a cluster publish identical rows)",
                value="aggregate",
            )
        require_no_dask(df)
        if engine == "dask":
            raise InputError(
                "linkage='trajectory' runs in memory only; use engine='pandas'", value="engine"
            )
        return cloak_trajectories(
            df,
            k,
            window_ns,
            columns,
            seed,
            cell_size=cell_size,
            method=method,
            drop_invalid=drop_invalid,
            source=source,
            pseud=pseud,
            measures=measures,
            max_suppression=max_suppression,
            block_size=block_size,
        )
    engine = resolve_engine(df, engine)
    if engine == "dask":
        if not is_dask(df):
            df = require_dask().from_pandas(df, npartitions=max(1, os.cpu_count() or 1))
        return cloak_dask(
            df,
            k,
            window_ns,
            method,
            columns,
            seed,
            cell_size=cell_size,
            levels=levels,
            drop_invalid=drop_invalid,
            pseudonymizer=pseud,
            measures=measures,
            aggregate=bool(aggregate),
            linkage=linkage,
        )
    timings = Timings()
    with timings("prepare"):
        prep = _prepare(df, k, columns, drop_invalid, source, cell_size, levels, window_ns)
    with timings("assign"):
        region_of_triple, stats = assign_regions(prep.triples, prep.grid, k, method)
        require_some_published(region_of_triple, k)
    with timings("output"):
        if linkage == "window":  # per-window pseudonyms bound to this input (not the bare key)
            f = prep.fixes
            publish_key = bound_pseudonymizer(
                pseud, fix_digest(f.user, f.t_ns, f.lat, f.lon), "window"
            )
        else:
            publish_key = pseud
        per_fix, regions, region, published = _publish(
            prep, region_of_triple, publish_key, window_ns, linkage
        )
        source_index = prep.fixes.index[published]
        data = per_fix
        if aggregate:
            data, source_index = _aggregate_frame(per_fix, source_index)
    fixes = prep.fixes
    n_cloak_suppressed = int((region < 0).sum())
    release = LocationRelease(
        data=data,
        datatype="location",
        verifier=lambda d: verify_cloaked(d, k),
        models=cloaking_models(k),
        partition=_partition(region, prep.w),
        parameters=release_parameters(
            k, window_ns, method, prep.grid, bool(aggregate), seed, columns, linkage, levels
        ),
        suppressed=n_cloak_suppressed + fixes.n_dropped,
        n_individuals=fixes.n_input,
        info=release_info(
            prep.grid,
            k=k,
            window_ns=window_ns,
            aggregate=bool(aggregate),
            regions=regions,
            n_cloak_suppressed=n_cloak_suppressed,
            n_dropped=fixes.n_dropped,
            reasons=fixes.dropped,
            users=len(prep.user_values),
            windows=int(len(np.unique(prep.w))),
            key_source=pseud.key_source,
            stats=stats,
        ),
        source_index=source_index,
    )
    if linkage == "pseudonym":
        add_warning(release, LINKAGE_WARNING)
    # for the report's before/after view only (location._figures); no writer reads it
    setattr(release, INPUT_POINTS, (fixes.lon, fixes.lat, prep.user_codes, prep.w))
    return finish_release(
        release,
        _measure(prep, per_fix, region, published, window_ns, seed, linkage),
        measures=measures,
        timings=timings,
    )


def _aggregate_frame(data: pd.DataFrame, labels: pd.Index) -> tuple[pd.DataFrame, pd.Series]:
    """One row per run of identical (window, region_id, user) rows of a sorted per-fix frame."""
    window = data["window"].to_numpy()
    region_id = data["region_id"].to_numpy()
    user = data["user"].to_numpy()
    start = np.ones(len(data), dtype=bool)
    start[1:] = (
        (window[1:] != window[:-1]) | (region_id[1:] != region_id[:-1]) | (user[1:] != user[:-1])
    )
    run = np.cumsum(start) - 1
    out = data.iloc[np.flatnonzero(start)].reset_index(drop=True)
    out["n_fixes"] = np.bincount(run).astype(np.int64)
    return out, pd.Series(run, index=labels, name="published_row")
