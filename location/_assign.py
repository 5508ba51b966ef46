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

from structanon.errors import InputError

from ._grid import CloakingGrid

__all__ = ["Triples", "dense_codes", "assign_regions", "METHODS"]

METHODS = ("fixed", "adaptive")


def dense_codes(*arrays: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense int64 group ids (0..n-1, in order of first appearance) of rows of int arrays.

    The arrays (non-negative) are packed into one int64 key where their ranges allow,
    else densified pairwise; either way a single hash pass per step, no sort.
    """
    codes = np.zeros(len(arrays[0]), dtype=np.int64)
    n = 1
    for a in arrays:
        a = np.asarray(a, dtype=np.int64)
        span = int(a.max()) + 1 if a.size else 1
        if n * span >= 2**62:
            codes, uniq = pd.factorize(codes, sort=False)
            n = len(uniq)
            if n * span >= 2**62:
                a, ua = pd.factorize(a, sort=False)
                span = len(ua)
        codes = codes * span + a
        n *= span
    codes, uniq = pd.factorize(codes, sort=False)
    return codes.astype(np.int64, copy=False), len(uniq)


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


def _spread_bits(v: np.ndarray) -> np.ndarray:
    """Spread the bits of values < 2^32 to the even bit positions (Morton interleave)."""
    v = v.astype(np.uint64)
    for shift, mask in (
        (16, 0x0000FFFF0000FFFF),
        (8, 0x00FF00FF00FF00FF),
        (4, 0x0F0F0F0F0F0F0F0F),
        (2, 0x3333333333333333),
        (1, 0x5555555555555555),
    ):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


def _bits(values: np.ndarray) -> int:
    return int(values.max()).bit_length() if values.size else 0


class _Order:
    """Residual triples in two sort orders over one Morton code, as packed int64 keys.

    Key ``a`` = (window, user, morton): the triples of one user in one window and one
    cell of any level are adjacent, and ``key_a >> s`` is equal exactly for triples
    sharing window, user and cell (the low ``s`` Morton bits dropped).  Key ``b`` =
    (window, morton): the triples of one (cell, window) at any level, or of one half-cell,
    form a run.  ``x_low`` puts the x bit below the y bit of each level (wide halves are
    runs), otherwise y is below x (tall halves are runs).
    """

    def __init__(self, t: Triples, wd: np.ndarray, x_low: bool, top: int) -> None:
        lo, hi = (t.ix, t.iy) if x_low else (t.iy, t.ix)
        morton = (_spread_bits(lo) | (_spread_bits(hi) << np.uint64(1))).astype(np.int64)
        mbits = max(_bits(morton), 2 * top)  # shifts go up to 2 * top
        wbits, ubits = _bits(wd), _bits(t.u)
        if wbits + ubits + mbits <= 62:
            prefix = (wd << ubits) | t.u
        else:  # rank of the (window, user) pair, in the same order
            _, prefix = np.unique((wd << ubits) | t.u, return_inverse=True)
            prefix = prefix.reshape(-1).astype(np.int64)
        if max(_bits(prefix), wbits) + mbits > 62:
            raise InputError(
                "too many (window, user) pairs for this grid resolution: increase cell_size, "
                "lengthen the window or cloak the log in parts"
            )
        key_a = (prefix << mbits) | morton
        key_b = (wd << mbits) | morton
        a, b = np.argsort(key_a), np.argsort(key_b)
        self.a = {"idx": a, "key": key_a[a]}
        self.b = {"idx": b, "key": key_b[b], "weight": t.weight[b]}

    @property
    def rows(self) -> np.ndarray:
        """Residual triple indices in order ``b``."""
        return self.b["idx"]

    def drop(self, published: np.ndarray) -> None:
        for arrays in (self.a, self.b):
            keep = ~published[arrays["idx"]]
            for name in arrays:
                arrays[name] = arrays[name][keep]

    def groups(self, shift: int) -> tuple[np.ndarray, int]:
        """Run id, along ``b``, of each residual triple's (morton >> shift, window) group."""
        key = self.b["key"] >> shift
        start = np.ones(key.size, dtype=bool)
        np.not_equal(key[1:], key[:-1], out=start[1:])
        gid = np.cumsum(start) - 1
        return gid, int(gid[-1]) + 1 if gid.size else 0

    def distinct_users(self, shift: int, m: int) -> tuple[np.ndarray, np.ndarray]:
        """``(gid, counts)``: group run id along ``b`` and distinct users per group."""
        key = self.a["key"] >> shift
        first = np.ones(key.size, dtype=bool)
        np.not_equal(key[1:], key[:-1], out=first[1:])
        flag = np.zeros(m, dtype=bool)
        flag[self.a["idx"]] = first
        gid, n = self.groups(shift)
        return gid, np.bincount(gid, weights=flag[self.b["idx"]], minlength=n)


def _merge_leftovers(
    t: Triples, r: np.ndarray, region: np.ndarray, grid: CloakingGrid
) -> tuple[np.ndarray, int]:
    """Join each top cell's leftover fixes of a window with a published group nearby.

    The leftover users of a top cell in one window are fewer than k.  Let C be the
    smallest pyramid cell containing all of them; going up from C, the first cell holding a
    published group of that window (a region inside the cell) takes the leftovers and that
    cell's lightest published group (fewest fixes; ties: smallest region id), published
    together as the cell.  The group alone had >= k users, so the union does too; no
    published region of that window can equal the cell (it would have taken the leftovers).
    Returns the still-unassigned triples (top cells whose window has < k users in all) and
    the number of groups merged.  The loop runs over leftover (top cell, window) pairs only.
    """
    top = grid.top
    level_of, _, _, _ = grid.decode(np.where(region >= 0, region, 0))
    by_window = np.argsort(t.w, kind="stable")
    w_sorted = t.w[by_window]
    leftovers = pd.DataFrame({"tx": t.ix[r] >> top, "ty": t.iy[r] >> top, "w": t.w[r], "row": r})
    merged = 0
    for (tx, ty, win), rows in leftovers.groupby(["tx", "ty", "w"], sort=True)["row"]:
        left = rows.to_numpy()
        win = int(win)  # type: ignore[call-overload]  # the groupby key is an int64
        lo, hi = np.searchsorted(w_sorted, [win, win + 1])
        same = by_window[lo:hi]
        pub = same[(region[same] >= 0) & (t.ix[same] >> top == tx) & (t.iy[same] >> top == ty)]
        if pub.size == 0:
            continue
        span = max(
            int(t.ix[left].max() ^ t.ix[left].min()).bit_length(),
            int(t.iy[left].max() ^ t.iy[left].min()).bit_length(),
        )
        cx0, cy0 = int(t.ix[left[0]]), int(t.iy[left[0]])
        for level in range(span, top + 1):
            inside = pub[
                (level_of[pub] <= level)
                & (t.ix[pub] >> level == cx0 >> level)
                & (t.iy[pub] >> level == cy0 >> level)
            ]
            if inside.size == 0:
                continue
            codes, inv = np.unique(region[inside], return_inverse=True)
            fixes = np.bincount(inv.reshape(-1), weights=t.weight[inside])
            chosen = codes[np.lexsort((codes, fixes))[0]]
            members = np.concatenate([inside[region[inside] == chosen], left])
            region[members] = grid.encode(level, 0, np.int64(cx0 >> level), np.int64(cy0 >> level))
            level_of[members] = level
            merged += 1
            break
    return r[region[r] < 0], merged


def assign_regions(t: Triples, grid: CloakingGrid, k: int, method: str) -> tuple[np.ndarray, dict]:
    """Region code per triple (``-1`` = suppressed) and assignment statistics.

    Bottom-up over the pyramid: at each level, the residual triples (not yet published in
    a smaller region) are grouped by (cell, window); groups with >= k distinct users are
    published, the rest move up.  ``adaptive`` first tries Casper's half-parent regions:
    each parent (per window) is split into its two rows (wide halves) or its two columns
    (tall halves), whichever publishes more fixes (ties: wide), and every half of the chosen
    split holding >= k distinct residual users is published.

    Grouping needs no hashing: triples are sorted once by Morton code (per window), so
    every cell of every level, and every half-cell, is a contiguous run.
    """
    m = len(t.weight)
    if m == 0:
        return np.full(0, -1, dtype=np.int64), {
            "fixes_published_per_level": {},
            "leftover_groups_merged": 0,
        }
    wd = t.w - t.w.min()
    xo = _Order(t, wd, x_low=True, top=grid.top)
    yo = _Order(t, wd, x_low=False, top=grid.top) if method == "adaptive" else None
    state = _Assignment(t, grid, [o for o in (xo, yo) if o is not None])
    for level in range(grid.top + 1):
        if xo.rows.size == 0:
            break
        if yo is not None and level >= 1:
            _publish_halves(state, xo, yo, level, k)
            if xo.rows.size == 0:
                break
        _publish_cells(state, xo, level, k)
    merged = 0
    r = np.sort(xo.rows)
    if r.size:
        r, merged = _merge_leftovers(t, r, state.region, grid)
    stats = {"fixes_published_per_level": state.per_level, "leftover_groups_merged": merged}
    return state.region, stats


class _Assignment:
    """The region of each triple so far, fixes published per level, and the residual orders."""

    def __init__(self, t: Triples, grid: CloakingGrid, orders: list[_Order]) -> None:
        self.t, self.grid, self.orders = t, grid, orders
        self.m = len(t.weight)
        self.region = np.full(self.m, -1, dtype=np.int64)
        self.per_level: dict[str, int] = {}

    def publish(self, rows: np.ndarray, codes: np.ndarray, label: str) -> None:
        self.region[rows] = codes
        self.per_level[label] = self.per_level.get(label, 0) + int(self.t.weight[rows].sum())

    def drop_published(self) -> None:
        published = self.region >= 0
        for o in self.orders:
            o.drop(published)


def _publish_halves(state: _Assignment, xo: _Order, yo: _Order, level: int, k: int) -> None:
    """Casper's half-parent regions of ``level``: per parent, the split publishing more."""
    t, grid, m, fine = state.t, state.grid, state.m, level - 1
    gw, cw = xo.distinct_users(2 * level - 1, m)
    gt, ct = yo.distinct_users(2 * level - 1, m)
    tall_ok = np.zeros(m, dtype=bool)
    tall_ok[yo.rows] = ct[gt] >= k
    wide_ok_b = cw[gw] >= k
    tall_ok_b = tall_ok[xo.rows]
    if not (wide_ok_b.any() or tall_ok_b.any()):
        return
    gp, n_parent = xo.groups(2 * level)
    weight = xo.b["weight"]
    score_w = np.bincount(gp, weights=weight * wide_ok_b, minlength=n_parent)
    score_t = np.bincount(gp, weights=weight * tall_ok_b, minlength=n_parent)
    use_tall = score_t[gp] > score_w[gp]
    rows_w = xo.rows[~use_tall & wide_ok_b]
    rows_t = xo.rows[use_tall & tall_ok_b]
    if rows_w.size:
        state.publish(
            rows_w,
            grid.encode(level, 1, t.ix[rows_w] >> level, t.iy[rows_w] >> fine),
            f"half{level}",
        )
    if rows_t.size:
        state.publish(
            rows_t,
            grid.encode(level, 2, t.ix[rows_t] >> fine, t.iy[rows_t] >> level),
            f"half{level}",
        )
    state.drop_published()


def _publish_cells(state: _Assignment, xo: _Order, level: int, k: int) -> None:
    """Publish every residual group of a ``level`` cell (per window) with >= k users."""
    t = state.t
    gid, counts = xo.distinct_users(2 * level, state.m)
    rows = xo.rows[counts[gid] >= k]
    if rows.size:
        state.publish(
            rows, state.grid.encode(level, 0, t.ix[rows] >> level, t.iy[rows] >> level), str(level)
        )
        state.drop_published()
