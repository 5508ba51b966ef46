"""Vectorized region assignment on (level-0 cell, window, user) triples.

Every fix of one user in one level-0 cell and one time window shares its fate, so the
algorithms work on the unique triples (with the number of fixes of each as a weight) and
the fixes inherit the region of their triple.  Counts of distinct users per
(cell, window) come from hashing (group, user) pairs and a bincount; no per-record loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._grid import CloakingGrid

__all__ = ["Triples", "dense_codes", "assign_regions", "METHODS"]

METHODS = ("fixed", "adaptive")


def dense_codes(*arrays: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense int64 group ids (0..n-1) of rows of several non-negative int arrays."""
    codes = np.zeros(len(arrays[0]), dtype=np.int64)
    n = 1
    for a in arrays:
        a = np.asarray(a, dtype=np.int64)
        span = int(a.max()) + 1 if a.size else 1
        if n * span >= 2**62:
            codes, uniq = pd.factorize(codes, sort=True)
            n = len(uniq)
            if n * span >= 2**62:
                a, ua = pd.factorize(a, sort=True)
                span = len(ua)
        codes = codes * span + a
        n *= span
    codes, uniq = pd.factorize(codes, sort=True)
    return codes.astype(np.int64), len(uniq)


@dataclass
class Triples:
    """Unique (level-0 cell, window, user) triples and their fix counts."""

    ix: np.ndarray
    iy: np.ndarray
    w: np.ndarray  # window code (floor of epoch / window), int64
    u: np.ndarray  # dense user code
    weight: np.ndarray  # fixes per triple

    @classmethod
    def from_fixes(cls, ix, iy, w, u) -> tuple[Triples, np.ndarray]:
        """Triples and, per fix, the index of its triple."""
        w0 = int(w.min()) if len(w) else 0
        inverse, m = dense_codes(ix, iy, w - w0, u)
        first = np.full(m, -1, dtype=np.int64)
        first[inverse[::-1]] = np.arange(len(inverse) - 1, -1, -1)
        weight = np.bincount(inverse, minlength=m)
        return cls(ix[first], iy[first], w[first], u[first], weight), inverse

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> Triples:
        """From columns ix, iy, w, u, weight (rows need not be unique; weights add up)."""
        agg = frame.groupby(["ix", "iy", "w", "u"], sort=True)["weight"].sum().reset_index()
        return cls(*(agg[c].to_numpy(dtype=np.int64) for c in ("ix", "iy", "w", "u", "weight")))


def _distinct_per_group(g: np.ndarray, n_groups: int, u: np.ndarray) -> np.ndarray:
    nu = int(u.max()) + 1 if u.size else 1
    pairs = pd.unique(g * nu + u)
    return np.bincount(pairs // nu, minlength=n_groups)


def _count(cx, cy, w, u):
    g, n = dense_codes(cx, cy, w - w.min())
    return g, _distinct_per_group(g, n, u)


def _half_step(t: Triples, r: np.ndarray, level: int, k: int, region: np.ndarray,
               grid: CloakingGrid) -> tuple[np.ndarray, int]:
    """Casper's step between levels ``level - 1`` and ``level``: publish half-parents.

    Each parent cell (per window) is split either into its two rows (wide halves) or its
    two columns (tall halves), whichever publishes more fixes (ties: wide); every half of
    the chosen split holding >= k distinct residual users is published.
    """
    ix, iy, w, u = t.ix[r], t.iy[r], t.w[r], t.u[r]
    fine = level - 1
    wide_x, wide_y = ix >> level, iy >> fine
    tall_x, tall_y = ix >> fine, iy >> level
    gw, cw = _count(wide_x, wide_y, w, u)
    gt, ct = _count(tall_x, tall_y, w, u)
    wide_ok, tall_ok = cw[gw] >= k, ct[gt] >= k
    if not (wide_ok.any() or tall_ok.any()):
        return r, 0
    gp, n_parent = dense_codes(ix >> level, iy >> level, w - w.min())
    weight = t.weight[r]
    score_w = np.bincount(gp, weights=weight * wide_ok, minlength=n_parent)
    score_t = np.bincount(gp, weights=weight * tall_ok, minlength=n_parent)
    use_tall = score_t[gp] > score_w[gp]
    pub_w = ~use_tall & wide_ok
    pub_t = use_tall & tall_ok
    region[r[pub_w]] = grid.encode(level, 1, wide_x[pub_w], wide_y[pub_w])
    region[r[pub_t]] = grid.encode(level, 2, tall_x[pub_t], tall_y[pub_t])
    published = pub_w | pub_t
    return r[~published], int(t.weight[r[published]].sum())


def _borrow_at_top(t: Triples, r: np.ndarray, k: int, region: np.ndarray,
                   grid: CloakingGrid) -> tuple[np.ndarray, int]:
    """Join leftover fixes of a top cell and window with its lightest published group.

    The leftover users of a top cell in one window are fewer than k; the published group
    (region, window) inside the same top cell with the fewest fixes (ties: smallest region
    code) holds >= k users, so the union does too and is published as the top cell.
    Returns the still-unassigned triples (top cells whose window has < k users in all) and
    the number of groups merged.
    """
    top = grid.top
    tx, ty = t.ix >> top, t.iy >> top
    key, _ = dense_codes(tx, ty, t.w - t.w.min())
    short = np.zeros(key.max() + 1, dtype=bool)
    short[key[r]] = True
    cand = np.flatnonzero((region >= 0) & short[key])
    if cand.size == 0:
        return r, 0
    groups = pd.DataFrame({"key": key[cand], "region": region[cand], "w": t.w[cand],
                           "weight": t.weight[cand]})
    sizes = groups.groupby(["key", "region", "w"], sort=True)["weight"].sum().reset_index()
    chosen = sizes.sort_values(["key", "weight", "region"], kind="stable").drop_duplicates("key")
    pick = pd.MultiIndex.from_frame(chosen[["region", "w"]])
    members = cand[pd.MultiIndex.from_arrays([region[cand], t.w[cand]]).isin(pick)]
    region[members] = grid.encode(top, 0, tx[members], ty[members])
    has_donor = np.zeros_like(short)
    has_donor[chosen["key"].to_numpy()] = True
    fixed = has_donor[key[r]]
    region[r[fixed]] = grid.encode(top, 0, tx[r[fixed]], ty[r[fixed]])
    return r[~fixed], int(len(chosen))


def assign_regions(t: Triples, grid: CloakingGrid, k: int, method: str) -> tuple[np.ndarray, dict]:
    """Region code per triple (``-1`` = suppressed) and assignment statistics.

    Bottom-up over the pyramid: at each level, the residual triples (not yet published in
    a smaller region) are grouped by (cell, window); groups with >= k distinct users are
    published, the rest move up.  ``adaptive`` first tries Casper's half-parent regions.
    """
    m = len(t.weight)
    region = np.full(m, -1, dtype=np.int64)
    r = np.arange(m, dtype=np.int64)
    per_level: dict[str, int] = {}
    for level in range(grid.top + 1):
        if r.size == 0:
            break
        if method == "adaptive" and level >= 1:
            r, published = _half_step(t, r, level, k, region, grid)
            if published:
                per_level[f"half{level}"] = published
            if r.size == 0:
                break
        cx, cy = t.ix[r] >> level, t.iy[r] >> level
        g, counts = _count(cx, cy, t.w[r], t.u[r])
        ok = counts[g] >= k
        region[r[ok]] = grid.encode(level, 0, cx[ok], cy[ok])
        if ok.any():
            per_level[str(level)] = int(t.weight[r[ok]].sum())
        r = r[~ok]
    merged = 0
    if r.size:
        r, merged = _borrow_at_top(t, r, k, region, grid)
    stats = {"fixes_published_per_level": per_level, "groups_merged_at_top": merged}
    return region, stats
