"""The trajectory path of :func:`location.cloak` (``linkage="trajectory"``), in phases.

Validate, prepare (parse the fixes, fit the grid, per-user fingerprints), cluster
(:func:`._trajectory.cluster_trajectories`), publish one row per member and sample, sorted
by pseudonym and start (both published values; pseudonyms are keyed, so the order of users
is secret), then :func:`structanon._finish.finish_release` verifies and measures.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from structanon import Partition, Release
from structanon._finish import Timings, finish_release, k_warning
from structanon._validation import check_float, check_int
from structanon.errors import InfeasibleError
from structanon.io import Pseudonymizer

from . import metrics as _metrics
from . import risk as _risk
from ._grid import CloakingGrid
from ._input import Fixes, no_fixes_error, parse_fixes, user_keys
from ._publish import bound_pseudonymizer, fix_digest, release_parameters, window_words
from ._trajectory import (
    Fingerprints,
    activity_features,
    cluster_trajectories,
    generalized_samples,
    require_no_dask,
    sample_of_fix,
    sample_regions,
    trajectory_pseudonyms,
    trajectory_rows,
)
from ._verify import trajectory_models, verify_trajectories

__all__ = ["cloak_trajectories", "DEFAULT_MAX_SUPPRESSION", "DEFAULT_BLOCK_SIZE"]

DEFAULT_MAX_SUPPRESSION = 0.05
DEFAULT_BLOCK_SIZE = 64


def check_trajectory_params(max_suppression: Any, block_size: Any) -> tuple[float, int]:
    """The trajectory-only parameters, each error naming its parameter."""
    share = check_float(max_suppression, "max_suppression", min_value=0.0, max_value=1.0)
    size = check_int(block_size, "block_size", min_value=2, max_value=4096)
    return share, size


def _published_frame(
    grid: CloakingGrid,
    samples: pd.DataFrame,
    user: np.ndarray,
    sample: np.ndarray,
    pseudonyms: np.ndarray,
    window_ns: int,
    t0: int,
) -> pd.DataFrame:
    region_id, polys = sample_regions(grid, samples)
    slot0 = samples["slot0"].to_numpy(np.int64)[sample]
    slot1 = samples["slot1"].to_numpy(np.int64)[sample]
    return pd.DataFrame(
        {
            "user": pseudonyms[user],
            "start": pd.to_datetime((t0 + slot0) * window_ns, unit="ns", utc=True),
            "end": pd.to_datetime((t0 + slot1) * window_ns, unit="ns", utc=True),
            "region_id": region_id[sample],
            "region": polys[region_id[sample]],
        }
    )


def _info(k, window_ns, grid, fixes, users, clusters, data, n_suppressed_fixes, key_source):
    n_users = len(users)
    kept = n_users - clusters.users_suppressed
    return {
        "guarantee": (
            f"Every published trajectory (sequence of regions and time intervals) is shared "
            f"by at least {k} pseudonyms; {kept:,} of {n_users:,} users published in "
            f"{clusters.n_clusters:,} clusters."
        ),
        "transformation_text": (
            f"each user's fixes replaced by their cluster's common trajectory: per "
            f"{window_words(window_ns, True)} window the grid cell covering every member's "
            "fixes (consecutive windows in one cell joined); one row per user and sample, "
            "no fix counts"
        ),
        "n_users": n_users,
        "users": n_users,
        "grid": grid.to_dict(),
        "clusters": clusters.n_clusters,
        "blocks": clusters.n_blocks,
        "users_suppressed": clusters.users_suppressed,
        "fixes_suppressed_by_cloaking": n_suppressed_fixes,
        "invalid_fixes_dropped": fixes.n_dropped,
        "invalid_reasons": fixes.dropped,
        "bad_lines_dropped": fixes.n_dropped,
        "samples": int(data.drop_duplicates(["start", "end", "region_id"]).shape[0])
        if len(data)
        else 0,
        "pseudonym_key": key_source,
        "warnings": [m for m in (k_warning(k),) if m],
    }


def _measure(fixes: Fixes, user, slot, grid, ix, iy, window_ns, seed, row_user, row_sample):
    """Trajectory utility and linkage risk, run by ``finish_release`` after verification."""

    def measure(release: Release) -> None:
        data = release.data
        original = pd.DataFrame(
            {
                "user": user,
                "lat": fixes.lat,
                "lon": fixes.lon,
                "time": pd.to_datetime(fixes.t_ns, unit="ns", utc=True),
            }
        )
        utility = _metrics.trajectory_utility(
            original, data, pd.Timedelta(window_ns, unit="ns"), seed=seed
        )
        utility["suppression_share"] = release.suppressed / fixes.n_input
        utility["users_suppressed_share"] = release.info["users_suppressed"] / max(
            release.info["n_users"], 1
        )
        before = pd.DataFrame({"user": user, "place": ix * grid.ny + iy, "window": slot})
        # one row per published (user, sample); each sample is one place of one "window"
        after = pd.DataFrame({"user": row_user, "place": row_sample, "window": 0})
        release.utility = utility
        release.risk = _risk.risk_summary(before, after, seed=seed, linkage="trajectory")

    return measure


def cloak_trajectories(
    df: Any,
    k: int,
    window_ns: int,
    columns: dict[str, str],
    seed: int | None,
    *,
    cell_size: float,
    method: str,
    drop_invalid: bool,
    source: str | None,
    pseud: Pseudonymizer,
    measures: bool,
    max_suppression: float,
    block_size: int,
) -> Release:
    """Trajectory k-anonymity of a pandas log (see :func:`location.cloak`)."""
    require_no_dask(df)
    timings = Timings()
    with timings("prepare"):
        fixes = parse_fixes(
            df,
            columns["user"],
            columns["time"],
            columns["lat"],
            columns["lon"],
            drop_invalid,
            source,
        )
        if len(fixes.index) == 0:
            raise no_fixes_error(fixes.n_input, fixes.dropped, source, fixes.first_bad)
        # users numbered in the order of their ids: nothing depends on the input's row order
        user, users = pd.factorize(user_keys(fixes.user), sort=True)
        user = user.astype(np.int64)
        if len(users) < k:
            raise InfeasibleError(f"k={k} exceeds the number of users in the log ({len(users)})")
        grid = CloakingGrid.fit(
            fixes.lon.min(), fixes.lon.max(), fixes.lat.min(), fixes.lat.max(), cell_size, None
        )
        ix, iy = grid.cells(fixes.lon, fixes.lat)
        w = np.floor_divide(fixes.t_ns, window_ns)
        t0 = int(w.min())
        slot = w - t0
        fp = Fingerprints.from_cells(user, slot, ix, iy)
    with timings("cluster"):
        hour = (fixes.t_ns // 3_600_000_000_000) % 24
        features = activity_features(user, ix, iy, hour)
        clusters = cluster_trajectories(fp, features, k, block_size, max_suppression)
    with timings("output"):
        samples = generalized_samples(fp, clusters.label)
        context = repr((k, window_ns, cell_size, max_suppression, block_size, seed, t0, slot.max()))
        # keyed by a key bound to this input: releases of different logs share no pseudonym
        digest = fix_digest(fixes.user, fixes.t_ns, fixes.lat, fixes.lon)
        bound = bound_pseudonymizer(pseud, digest, "trajectory", context)
        pseudonyms = trajectory_pseudonyms(np.asarray(users), bound, context)
        row_user, row_sample, first_row = trajectory_rows(samples, clusters.label, pseudonyms)
        data = _published_frame(grid, samples, row_user, row_sample, pseudonyms, window_ns, t0)
        fix_sample = sample_of_fix(samples, clusters.label, user, slot, fp.n_slots)
        kept = fix_sample >= 0
        cl_start = np.searchsorted(samples["cluster"].to_numpy(), np.arange(clusters.n_clusters))
        row_of_fix = np.full(user.size, -1, dtype=np.int64)
        row_of_fix[kept] = (
            first_row[user[kept]] + fix_sample[kept] - cl_start[clusters.label[user[kept]]]
        )
    n_suppressed_fixes = int((~kept).sum())
    release = Release(
        data=data,
        datatype="location",
        verifier=lambda d: verify_trajectories(d, k),
        models=trajectory_models(k),
        # groups of published units, the pseudonyms (members publish identical rows): a
        # cluster's input fix count is not published, so no figure may count fixes
        partition=Partition(np.asarray(clusters.label, dtype=np.int64)),
        parameters=release_parameters(
            k,
            window_ns,
            method,
            grid,
            False,
            seed,
            columns,
            "trajectory",
            max_suppression=max_suppression,
            block_size=block_size,
        ),
        suppressed=n_suppressed_fixes + fixes.n_dropped,
        n_individuals=fixes.n_input,
        info=_info(
            k, window_ns, grid, fixes, users, clusters, data, n_suppressed_fixes, pseud.key_source
        ),
        source_index=pd.Series(row_of_fix[kept], index=fixes.index[kept], name="published_row"),
    )
    return finish_release(
        release,
        _measure(fixes, user, slot, grid, ix, iy, window_ns, seed, row_user, row_sample),
        measures=measures,
        timings=timings,
    )
