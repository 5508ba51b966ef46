"""Trajectory k-anonymity: users clustered by stretch effort, one generalized trajectory each.

Each user's fingerprint is, per time window (slot), the bounding box of the level-0 grid
cells of their fixes.  Users are split into blocks of at most ``block_size`` similar users
by a k-d tree over their activity pattern (mean cell per time-of-day band: home, work and
the way between), and inside each block
GLOVE's greedy merge (Gramaglia & Fiore 2015) joins the pair of clusters of least stretch
effort, one of them smaller than ``k``, until every cluster holds at least ``k`` users.
The stretch effort of a merge is the growth of the published extent it causes::

    C(X) = |X| * sum over slots s of side(X_s)        effort(P, Q) = C(P + Q) - C(P) - C(Q)

with ``side(X_s)`` the longer side (in cells) of the rectangle of level-0 cells covering
the members' cells in slot ``s`` (0 where no member has a fix), the region published.
A cluster publishes, per slot where any member has a fix, that rectangle during the slot;
consecutive slots with the same cell are joined into one sample.  So every member's fixes
lie in the cluster's sample of their time, and every member publishes the same sequence.

Users whose effort to join their ``k - 1`` nearest block neighbours is an outlier (more
than ``OUTLIER_FACTOR`` times the median) are suppressed, at most ``max_suppression`` of
all users, largest effort first (W4M's trash, Abul, Bonchi & Nanni 2010).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer

from ._grid import EDGE_PAD_DEG, CloakingGrid

__all__ = [
    "OUTLIER_FACTOR",
    "Fingerprints",
    "TrajectoryClusters",
    "activity_features",
    "kd_blocks",
    "cluster_trajectories",
    "generalized_samples",
    "trajectory_rows",
    "require_no_dask",
]

#: A user is "too far from any cluster" when its effort exceeds this multiple of the median.
OUTLIER_FACTOR = 4.0
_ABSENT = np.int64(1) << 40  # x0 of a slot without fixes: the min of a union ignores it


def require_no_dask(df: Any) -> None:
    """Trajectory mode holds every user's trajectory in memory: refuse a dask input."""
    if hasattr(df, "dask"):
        raise InputError(
            "linkage='trajectory' runs in memory only (it compares whole trajectories); "
            "pass a pandas DataFrame (e.g. ddf.compute()) or use linkage='window' on dask",
            value="linkage",
        )


@dataclass
class Fingerprints:
    """Per (user, slot) the bounding box of the user's level-0 cells, sorted by user, slot.

    ``starts[u]:starts[u + 1]`` are the rows of user ``u``; ``slot`` is 0-based from the
    log's first window.
    """

    user: np.ndarray
    slot: np.ndarray
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    starts: np.ndarray
    n_slots: int

    @classmethod
    def from_cells(cls, user: np.ndarray, slot: np.ndarray, ix: np.ndarray, iy: np.ndarray):
        n_users = int(user.max()) + 1
        n_slots = int(slot.max()) + 1
        key = user.astype(np.int64) * n_slots + slot
        g = pd.DataFrame({"key": key, "x": ix, "y": iy}).groupby("key", sort=True)
        lo, hi = g.min(), g.max()
        keys = lo.index.to_numpy(np.int64)
        u, s = np.divmod(keys, n_slots)
        starts = np.searchsorted(u, np.arange(n_users + 1))
        return cls(
            u,
            s,
            lo["x"].to_numpy(np.int64),
            lo["y"].to_numpy(np.int64),
            hi["x"].to_numpy(np.int64),
            hi["y"].to_numpy(np.int64),
            starts,
            n_slots,
        )


def _side(x0, y0, x1, y1) -> np.ndarray:
    """Longer side (level-0 cells) of the cell rectangles of boxes; 0 where absent."""
    return np.where(x1 >= 0, np.maximum(x1 - x0, y1 - y0) + 1, 0)


class _Block:
    """Dense (cluster, slot) boxes of one block of users and their pairwise merge efforts."""

    def __init__(self, fp: Fingerprints, users: np.ndarray) -> None:
        lengths = fp.starts[users + 1] - fp.starts[users]
        owner = np.repeat(np.arange(users.size), lengths)
        first = np.cumsum(lengths) - lengths  # each user's first position in ``rows``
        rows = fp.starts[users][owner] + np.arange(owner.size) - first[owner]
        slots, local = np.unique(fp.slot[rows], return_inverse=True)
        n, s = users.size, slots.size
        self.x0 = np.full((n, s), _ABSENT, dtype=np.int64)
        self.y0 = np.full((n, s), _ABSENT, dtype=np.int64)
        self.x1 = np.full((n, s), -1, dtype=np.int64)
        self.y1 = np.full((n, s), -1, dtype=np.int64)
        for name in ("x0", "y0", "x1", "y1"):
            getattr(self, name)[owner, local] = getattr(fp, name)[rows]
        self.size = np.ones(n, dtype=np.int64)
        self.alive = np.ones(n, dtype=bool)
        self.label = np.arange(n)
        self.cost = self.size * _side(self.x0, self.y0, self.x1, self.y1).sum(axis=1)

    def effort_rows(self, rows: np.ndarray) -> np.ndarray:
        """Effort of merging each of ``rows`` with every cluster, ``(len(rows), n)``."""
        x0 = np.minimum(self.x0[rows, None, :], self.x0[None, :, :])
        y0 = np.minimum(self.y0[rows, None, :], self.y0[None, :, :])
        x1 = np.maximum(self.x1[rows, None, :], self.x1[None, :, :])
        y1 = np.maximum(self.y1[rows, None, :], self.y1[None, :, :])
        merged = (self.size[rows, None] + self.size[None, :]) * _side(x0, y0, x1, y1).sum(axis=2)
        return merged - self.cost[rows, None] - self.cost[None, :]

    def efforts(self) -> np.ndarray:
        n, s = self.x0.shape
        step = max(1, 2_000_000 // max(n * s, 1))
        out = np.empty((n, n), dtype=np.float64)
        for lo in range(0, n, step):
            out[lo : lo + step] = self.effort_rows(np.arange(lo, min(lo + step, n)))
        np.fill_diagonal(out, np.inf)
        return out

    def merge(self, i: int, j: int) -> None:
        """Cluster ``j`` joins cluster ``i``."""
        for name, fn in (("x0", np.minimum), ("y0", np.minimum), ("x1", np.maximum)):
            arr = getattr(self, name)
            arr[i] = fn(arr[i], arr[j])
        self.y1[i] = np.maximum(self.y1[i], self.y1[j])
        self.size[i] += self.size[j]
        self.alive[j] = False
        self.label[self.label == j] = i
        self.cost[i] = self.size[i] * _side(self.x0[i], self.y0[i], self.x1[i], self.y1[i]).sum()


def _outlier_scores(block: _Block, efforts: np.ndarray, k: int) -> np.ndarray:
    """Effort of joining the ``k - 1`` nearest users of the block, per active slot."""
    if k <= 1:
        return np.zeros(len(efforts))
    near = np.partition(efforts, k - 2, axis=1)[:, : k - 1]
    return near.sum(axis=1) / np.maximum((block.x1 >= 0).sum(axis=1), 1)


def _greedy(block: _Block, efforts: np.ndarray, k: int) -> np.ndarray:
    """GLOVE's greedy merging inside a block; the cluster label of each block user."""
    big = np.inf
    while True:
        small = block.alive & (block.size < k)
        if not small.any():
            return block.label
        # GLOVE: a cluster that reached k leaves the merging; the last small one joins
        # the complete cluster it stretches least
        partners = small if small.sum() > 1 else block.alive
        masked = np.where(small[:, None] & partners[None, :], efforts, big)
        i, j = np.unravel_index(int(np.argmin(masked)), masked.shape)
        block.merge(int(i), int(j))
        efforts[j, :] = big
        efforts[:, j] = big
        row = block.effort_rows(np.array([i]))[0].astype(np.float64)
        row[~block.alive] = big
        row[i] = big
        efforts[i, :] = row
        efforts[:, i] = row


#: Time-of-day bands of the blocking features (hours, UTC).
BANDS = 4


def activity_features(
    user: np.ndarray, ix: np.ndarray, iy: np.ndarray, hour: np.ndarray
) -> np.ndarray:
    """Per user, the mean level-0 cell in each time-of-day band (its overall mean if absent).

    ``(n_users, 2 * BANDS)`` floats: where a user is at night, in the morning, the
    afternoon and the evening, the activity pattern the blocking groups users by.
    """
    n_users = int(user.max()) + 1
    key = user * BANDS + (hour * BANDS // 24).astype(np.int64)
    count = np.bincount(key, minlength=n_users * BANDS).reshape(n_users, BANDS)
    total = np.bincount(user, minlength=n_users)
    out = np.empty((n_users, 2 * BANDS))
    for axis, values in enumerate((ix, iy)):
        values = values.astype(np.float64)
        per_band = np.bincount(key, weights=values, minlength=n_users * BANDS)
        mean = np.bincount(user, weights=values, minlength=n_users) / np.maximum(total, 1)
        band_mean = per_band.reshape(n_users, BANDS) / np.maximum(count, 1)
        out[:, axis::2] = np.where(count > 0, band_mean, mean[:, None])
    return out


def kd_blocks(features: np.ndarray, users: np.ndarray, size: int, k: int) -> list[np.ndarray]:
    """Blocks of similar users: median splits along the widest feature (a k-d tree).

    A block is split in two while it holds more than ``size`` users and each half would
    hold at least ``k``; ties are ordered by user code, so the blocks depend on the data
    only.  ``O(n log(n / size))``.
    """
    out: list[np.ndarray] = []
    stack = [users]
    while stack:
        part = stack.pop()
        if part.size <= size or part.size // 2 < k:
            out.append(np.sort(part))
            continue
        f = features[part]
        axis = int(np.argmax(f.max(axis=0) - f.min(axis=0)))
        order = np.lexsort((part, f[:, axis]))
        half = part.size // 2
        stack.extend([part[order[half:]], part[order[:half]]])
    return out


@dataclass
class TrajectoryClusters:
    """The cluster of each user (``-1``: suppressed) and clustering statistics."""

    label: np.ndarray
    n_clusters: int
    n_blocks: int
    users_suppressed: int


def _suppressed_users(
    fp: Fingerprints, features: np.ndarray, k: int, size: int, max_suppression: float
) -> np.ndarray:
    """Users too far from any cluster, largest effort first, at most the allowed share."""
    n_users = features.shape[0]
    scores = np.zeros(n_users)
    for users in kd_blocks(features, np.arange(n_users), size, k):
        block = _Block(fp, users)
        scores[users] = _outlier_scores(block, block.efforts(), k)
    budget = min(int(np.floor(max_suppression * n_users)), n_users - k)
    far = np.flatnonzero(scores > OUTLIER_FACTOR * max(float(np.median(scores)), 1.0))
    return far[np.argsort(-scores[far], kind="stable")][: max(budget, 0)]


def cluster_trajectories(
    fp: Fingerprints,
    features: np.ndarray,
    k: int,
    block_size: int,
    max_suppression: float,
) -> TrajectoryClusters:
    """Suppress outliers (bounded), then merge users greedily block by block.

    Parameters
    ----------
    fp : Fingerprints
    features : float array ``(n_users, d)``
        Blocking features (:func:`activity_features`).
    k, block_size : int
        Blocks hold at most ``max(block_size, 2k)`` users (:func:`kd_blocks`).
    max_suppression : float
        At most this share of users is suppressed.
    """
    n_users = features.shape[0]
    if n_users < k:
        raise InfeasibleError(f"k={k} exceeds the number of users in the log ({n_users})")
    size = max(block_size, 2 * k)
    suppressed = np.zeros(n_users, dtype=bool)
    if max_suppression > 0:
        suppressed[_suppressed_users(fp, features, k, size, max_suppression)] = True
    label = np.full(n_users, -1, dtype=np.int64)
    blocks = kd_blocks(features, np.flatnonzero(~suppressed), size, k)
    next_label = 0
    for users in blocks:
        block = _Block(fp, users)
        local = _greedy(block, block.efforts(), k)
        codes, dense = np.unique(local, return_inverse=True)
        label[users] = next_label + dense
        next_label += codes.size
    return TrajectoryClusters(label, next_label, len(blocks), int(suppressed.sum()))


def generalized_samples(fp: Fingerprints, label: np.ndarray) -> pd.DataFrame:
    """The published samples of every cluster: ``cluster, slot0, slot1, x0, y0, x1, y1``.

    Per (cluster, slot) the rectangle of level-0 cells covering the members' cells; runs
    of consecutive slots with the same rectangle are one sample ``[slot0, slot1)``.
    Sorted by cluster and ``slot0``.
    """
    cl = label[fp.user]
    keep = cl >= 0
    key = cl[keep] * fp.n_slots + fp.slot[keep]
    g = pd.DataFrame(
        {"key": key, "x0": fp.x0[keep], "y0": fp.y0[keep], "x1": fp.x1[keep], "y1": fp.y1[keep]}
    ).groupby("key", sort=True)
    lo, hi = g[["x0", "y0"]].min(), g[["x1", "y1"]].max()
    cluster, slot = np.divmod(lo.index.to_numpy(np.int64), fp.n_slots)
    box = np.column_stack([lo.to_numpy(np.int64), hi.to_numpy(np.int64)])
    new = np.ones(cluster.size, dtype=bool)
    new[1:] = (
        (cluster[1:] != cluster[:-1])
        | (slot[1:] != slot[:-1] + 1)
        | (box[1:] != box[:-1]).any(axis=1)
    )
    first = np.flatnonzero(new)
    last = np.append(first[1:], cluster.size) - 1
    return pd.DataFrame(
        {
            "cluster": cluster[first],
            "slot0": slot[first],
            "slot1": slot[last] + 1,
            "x0": box[first, 0],
            "y0": box[first, 1],
            "x1": box[first, 2],
            "y1": box[first, 3],
        }
    )


def trajectory_rows(
    samples: pd.DataFrame, label: np.ndarray, pseudonyms: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``(user, sample)`` ordered by pseudonym then start, and each user's first row.

    Returns ``(user, sample, first_row)`` with ``first_row[u]`` the position of user
    ``u``'s first row (``-1`` for a suppressed user); a user's rows follow their
    cluster's samples in order.
    """
    cluster = samples["cluster"].to_numpy()
    n_clusters = int(label.max()) + 1 if (label >= 0).any() else 0
    sample_start = np.searchsorted(cluster, np.arange(n_clusters + 1))
    n_samples = np.diff(sample_start)
    kept = np.flatnonzero(label >= 0)
    kept = kept[np.argsort(pseudonyms[kept], kind="stable")]
    per_user = n_samples[label[kept]]
    first_row = np.full(label.size, -1, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(per_user)[:-1]]).astype(np.int64)
    first_row[kept] = offsets
    user = np.repeat(kept, per_user)
    within = np.arange(user.size) - np.repeat(offsets, per_user)
    sample = sample_start[label[user]] + within
    return user, sample, first_row


def trajectory_pseudonyms(
    user_values: np.ndarray, pseud: Pseudonymizer, context: str
) -> np.ndarray:
    """Keyed pseudonym per user, ``HMAC(key, user, "trajectory", context)``.

    ``context`` names the release's parameters and period, so two trajectory releases that
    differ in either share no pseudonym, nor does a per-window or per-user release.  Pass
    ``pseud`` bound to the input (:func:`location._publish.bound_pseudonymizer`), so that
    releases of different inputs under one key share none either.
    """
    labels = pd.Series(np.asarray(user_values, dtype=object).astype(str)) + (
        "\x1ftrajectory\x1f" + context
    )
    return np.asarray(pseud.pseudonymize(labels.to_numpy()))


def sample_of_fix(
    samples: pd.DataFrame, label: np.ndarray, user: np.ndarray, slot: np.ndarray, n_slots: int
) -> np.ndarray:
    """Index of the sample covering each fix of a kept user (``-1`` for suppressed users)."""
    skey = samples["cluster"].to_numpy() * (n_slots + 1) + samples["slot0"].to_numpy()
    cl = label[user]
    out = np.searchsorted(skey, cl * (n_slots + 1) + slot, side="right") - 1
    return np.where(cl >= 0, out, -1)


def sample_regions(grid: CloakingGrid, samples: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(region_id, polygons)``: per sample the id of its rectangle and the distinct polygons.

    Ids number the distinct rectangles in the order of their edges (west, south, east,
    north), a function of the published polygons only.  Polygons are lon/lat rectangles
    on the level-0 cell edges, padded by ``EDGE_PAD_DEG`` like every published region.
    """
    box = samples[["x0", "y0", "x1", "y1"]].to_numpy(np.int64)
    if box.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    uniq, inv = np.unique(box, axis=0, return_inverse=True)
    lon_e, lat_e = grid.lon_edges(), grid.lat_edges()
    polys = shapely.box(
        lon_e[uniq[:, 0]] - EDGE_PAD_DEG,
        lat_e[uniq[:, 1]] - EDGE_PAD_DEG,
        lon_e[uniq[:, 2] + 1] + EDGE_PAD_DEG,
        lat_e[uniq[:, 3] + 1] + EDGE_PAD_DEG,
    )
    return inv.reshape(-1).astype(np.int64), polys
