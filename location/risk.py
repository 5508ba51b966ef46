"""Re-identification risk of location logs: unicity and unique home regions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from structanon._validation import check_float, check_int
from structanon.errors import InputError

from ._grid import MAX_CELL_SIZE, CloakingGrid
from ._input import drop_bad_lines, no_fixes_error, parse_fixes, parse_window, user_keys
from ._publish import window_words

__all__ = [
    "unicity",
    "home_uniqueness",
    "linkage_success",
    "continuity_chain_share",
    "risk_summary",
    "log_risk",
]


def unicity(
    df: pd.DataFrame,
    p: int,
    user: str = "user",
    place: str = "region_id",
    time: str = "window",
    n_users: int = 1000,
    seed: int | None = None,
) -> float:
    """Share of users uniquely identified by ``p`` random points of their own trace.

    A point is a (place, time) pair; for each sampled user with at least ``p`` distinct
    points, ``p`` of them are drawn at random and the user is unique when no other user's
    trace holds all ``p``.

    Parameters
    ----------
    df : DataFrame
        One row per fix with user, place and time columns (e.g. a cloaked release's
        ``user``, ``region_id``, ``window``; or the input's cell and window).
    p : int
        Points known to the attacker.
    n_users : int
        Users sampled (all when fewer).
    seed : int, optional

    Returns
    -------
    float
        Unique users / sampled users (NaN when no user has ``p`` points).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"user": [1, 1, 2, 2], "region_id": [5, 6, 5, 7],
    ...                    "window": [0, 0, 0, 0]})
    >>> unicity(df, 1, seed=0) <= 1.0, unicity(df, 2, seed=0)
    (True, 1.0)

    Notes
    -----
    ``unicity_p = |{u : |{v : I_p(u) subset T(v)}| = 1}| / |U|`` with ``I_p(u)`` p random
    points of ``T(u)`` (de Montjoye et al. 2013).

    References
    ----------
    Y.-A. de Montjoye, C. A. Hidalgo, M. Verleysen and V. D. Blondel, "Unique in the
    Crowd: the privacy bounds of human mobility", Scientific Reports 3, 1376 (2013).
    """
    p = check_int(p, "p", min_value=1)
    users, points = _distinct_points(df, user, place, time)
    known = _known_points(users, points, p, n_users, seed)
    if known is None:
        return float("nan")
    holders = pd.DataFrame({"point": points, "holder": users})
    hits = known.merge(holders, on="point").groupby(["trial", "holder"]).size()
    full = hits[hits == p].reset_index().groupby("trial").size()
    return float((full.reindex(np.arange(len(known) // p), fill_value=0) == 1).mean())


def _known_points(
    users: np.ndarray, points: np.ndarray, p: int, n_users: int, seed: int | None
) -> pd.DataFrame | None:
    """The attacker's knowledge: ``p`` distinct random points of each of up to ``n_users``
    random users holding at least ``p`` (``users`` sorted), as a (trial, point) frame with
    ``p`` rows per trial; None when no user holds ``p`` points."""
    n_u = int(users.max()) + 1 if users.size else 0
    starts = np.searchsorted(users, np.arange(n_u + 1))
    lengths = np.diff(starts)
    eligible = np.flatnonzero(lengths >= p)
    if eligible.size == 0:
        return None
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(eligible, min(n_users, eligible.size), replace=False))
    offsets = np.concatenate([starts[s] + rng.permutation(lengths[s])[:p] for s in sample])
    trial = np.repeat(np.arange(sample.size), p)
    return pd.DataFrame({"trial": trial, "point": points[offsets]})


def home_uniqueness(
    df: pd.DataFrame, user: str = "user", place: str = "region_id", weight: str | None = None
) -> float:
    """Share of users whose most visited place (a home proxy) is nobody else's.

    The most visited place is the one with the most fixes (ties: smallest place code);
    with ``weight``, each row counts as that many fixes.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"user": [1, 1, 2, 3], "region_id": [5, 5, 5, 9]})
    >>> home_uniqueness(df)
    0.3333333333333333
    """
    u, _ = pd.factorize(df[user], sort=True)
    pl, _ = pd.factorize(df[place], sort=True)
    w = df[weight].to_numpy() if weight else np.ones(len(df), dtype=np.int64)
    counts = pd.DataFrame({"u": u, "pl": pl, "n": w}).groupby(["u", "pl"])["n"].sum().reset_index()
    counts = counts.sort_values(["u", "n", "pl"], ascending=[True, False, True], kind="stable")
    home = counts.drop_duplicates("u")["pl"].to_numpy()
    if home.size == 0:
        return float("nan")
    share = np.bincount(home)[home]
    return float((share == 1).mean())


def _distinct_points(
    df: pd.DataFrame, user: str, place: str, time: str
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (user, point) pairs, sorted by user then point.  Users and points are
    numbered in sorted value order, points in (place, time) order, never in row order: the
    same release gives the same figures whatever order its rows come in (pandas and Dask
    paths alike)."""
    for c in (user, place, time):
        if c not in df.columns:
            raise InputError(f"no column {c!r}", column=c)
    if len(df) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    u, _ = pd.factorize(df[user], sort=True)
    pl, _ = pd.factorize(df[place], sort=True)
    tm, _ = pd.factorize(df[time], sort=True)
    point, _ = pd.factorize(pl.astype(np.int64) * (int(tm.max()) + 1) + tm, sort=True)
    n_points = int(point.max()) + 1
    pairs = np.sort(pd.unique(u.astype(np.int64) * n_points + point))
    return pairs // n_points, pairs % n_points


def linkage_success(
    df: pd.DataFrame,
    p: int,
    linked: bool = True,
    user: str = "user",
    place: str = "place",
    time: str = "window",
    n_users: int = 1000,
    seed: int | None = None,
) -> float:
    """Mean success of the linkage attack: ``1 / |candidates|`` per target, averaged.

    The attacker knows ``p`` true (place, time) points of a target, maps each to the
    published unit (region and window, or cluster sample) that holds it, and intersects
    the published identities found there through whatever link the release keeps.
    ``linked``: one identity per user across every time (a pseudonym, or a trajectory
    pseudonym); otherwise identities live in one published unit only (a fresh pseudonym per
    user, window and region), so nothing intersects, and the attacker bets on the known
    point whose unit holds the fewest identities.  The target's own identity is always a
    candidate, so the success is the chance of naming it by picking one at random.

    Parameters
    ----------
    df : DataFrame
        One row per published point with the *true* user (the measure, not the attacker,
        knows it), the published place and the time unit (``window``).
    p : int
        Points known to the attacker (targets with fewer distinct points are skipped).
    linked : bool
    n_users : int
        Targets sampled (all when fewer).

    Returns
    -------
    float
        Mean of ``1 / |C|`` over targets (NaN when no user has ``p`` points); ``1`` means
        every target is singled out, ``1/k`` is the floor of a k-anonymous release.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"user": [1, 1, 2, 2, 3, 3, 4, 4],
    ...                    "place": [5, 6, 5, 7, 8, 6, 8, 7], "window": [0, 1] * 4})
    >>> linkage_success(df, 2, seed=0), linkage_success(df, 2, linked=False, seed=0)
    (1.0, 0.5)

    Notes
    -----
    Linked: ``C = cap_i ids(g_i)``.  Unlinked: success ``= max_i 1 / |ids(g_i)|``.  The points map to the unit that truly holds them,
    which can only help the attacker (an upper bound on the attack of
    ``tests/location/test_attacks.py``, which maps points to regions by geometry).
    """
    p = check_int(p, "p", min_value=1)
    users, points = _distinct_points(df, user, place, time)
    known = _known_points(users, points, p, n_users, seed)
    if known is None:
        return float("nan")
    # linked: every known point in one scope; unlinked: each point its own
    known["scope"] = 0 if linked else np.arange(len(known))
    need = known.groupby(["trial", "scope"]).size().rename("need")
    holders = pd.DataFrame({"point": points, "ident": users})
    hits = (
        known.merge(holders, on="point")
        .groupby(["trial", "scope", "ident"])
        .size()
        .rename("hits")
        .reset_index()
        .join(need, on=["trial", "scope"])
    )
    consistent = hits[hits["hits"] == hits["need"]]
    size = consistent.groupby(["trial", "scope"]).size().groupby(level="trial").min()
    return float((1.0 / size.to_numpy(dtype=np.float64)).mean())


def continuity_chain_share(
    df: pd.DataFrame, user: str = "user", place: str = "place", time: str = "window"
) -> float:
    """Share of users' window-to-window steps an attacker can chain by spatial continuity.

    Published units ``(place, t)`` and ``(place', t + 1)`` are linked when they share a
    user (the best any continuity heuristic could find).  A user's step from ``t`` to
    ``t + 1`` is chained when its unit at ``t`` links to that one unit only and that unit
    at ``t + 1`` is linked from that one unit only: the attacker can follow the crowd
    without ambiguity (still among at least k fresh pseudonyms per window).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"user": [1, 2, 1, 2, 3, 3], "place": [5, 5, 6, 6, 7, 8],
    ...                    "window": [0, 0, 1, 1, 1, 2]})
    >>> continuity_chain_share(df)
    1.0
    """
    frame = df[[user, place, time]].drop_duplicates()
    frame.columns = ["u", "pl", "t"]
    nxt = frame.assign(t=frame["t"] - 1)
    links = frame.merge(nxt, on=["u", "t"], suffixes=("_a", "_b"))
    if links.empty:
        return float("nan")
    pairs = links.drop_duplicates(["t", "pl_a", "pl_b"])
    succ = pairs.groupby(["t", "pl_a"]).size().rename("succ")
    pred = pairs.groupby(["t", "pl_b"]).size().rename("pred")
    links = links.join(succ, on=["t", "pl_a"]).join(pred, on=["t", "pl_b"])
    return float(((links["succ"] == 1) & (links["pred"] == 1)).mean())


def risk_summary(
    before: pd.DataFrame,
    after: pd.DataFrame,
    ps: tuple[int, ...] = (1, 2, 4),
    n_users: int = 1000,
    seed: int | None = None,
    linkage: str = "window",
) -> dict[str, Any]:
    """Unicity, linkage success for each ``p`` and home uniqueness, before and after cloaking.

    ``before`` and ``after`` have columns ``user``, ``place``, ``window``: the input's
    level-0 cells and the published regions respectively (true users).  ``linkage`` says
    what links the release keeps (:func:`linkage_success`): ``"pseudonym"`` and
    ``"trajectory"`` link every time of a user, ``"window"`` none; the raw log (before) is
    linked.  Window releases also get :func:`continuity_chain_share`.
    """
    out: dict[str, Any] = {}
    for name, df in (("before", before), ("after", after)):
        linked = name == "before" or linkage != "window"
        res: dict[str, Any] = {}
        for p in ps:
            res[f"unicity_p{p}"] = (
                unicity(df, p, "user", "place", "window", n_users, seed)
                if len(df)
                else float("nan")
            )
        for p in ps:
            res[f"linkage_p{p}"] = (
                linkage_success(df, p, linked, "user", "place", "window", n_users, seed)
                if len(df)
                else float("nan")
            )
        weight = "weight" if "weight" in df.columns else None
        res["home_unique_share"] = (
            home_uniqueness(df, "user", "place", weight) if len(df) else float("nan")
        )
        if name == "after" and linkage == "window":
            res["continuity_chain_share"] = continuity_chain_share(df) if len(df) else float("nan")
        out[name] = res
    return out


def log_risk(
    df: pd.DataFrame,
    window: str | pd.Timedelta | int = "15min",
    cell_size: float = 100.0,
    user: str = "user",
    time: str = "time",
    lat: str = "lat",
    lon: str = "lon",
    *,
    ps: tuple[int, ...] = (1, 2, 4),
    n_users: int = 1000,
    on_bad_lines: str = "raise",
    drop_invalid: bool | None = None,
    seed: int | None = 0,
    source: str | None = None,
) -> dict[str, Any]:
    """Re-identification risk of a raw log, before any cloaking (``location assess``).

    Places are the level-0 cells of the grid :func:`location.cloak` would fit
    (``cell_size`` metres) and times its windows, so the figures are the "before" column
    of a release's risk.  Invalid rows are refused or dropped as ``on_bad_lines`` says
    (``drop_invalid``: its former name), as :func:`location.cloak` does.

    Returns
    -------
    dict
        ``unicity_p{p}`` and ``linkage_p{p}`` for each ``p``, ``home_unique_share``, and
        the counts ``n_fixes``
        (valid fixes), ``n_users``, ``n_windows``, with ``window`` (in words) and
        ``cell_size_m``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"user": ["a", "b", "c"], "time": ["2024-05-01T10:00:00Z"] * 3,
    ...                    "lat": [48.85, 48.86, 48.90], "lon": [2.35, 2.35, 2.30]})
    >>> r = log_risk(df)
    >>> r["unicity_p1"], r["home_unique_share"], r["n_users"], r["window"]
    (1.0, 1.0, 3, '15 minutes')
    """
    window_ns = parse_window(window)
    cell_size = check_float(
        cell_size, "cell_size", min_value=0, include_min=False, max_value=MAX_CELL_SIZE
    )
    drop = drop_bad_lines(on_bad_lines, drop_invalid)
    fixes = parse_fixes(df, user, time, lat, lon, drop, source)
    if len(fixes.index) == 0:
        raise no_fixes_error(fixes.n_input, fixes.dropped, source, fixes.first_bad)
    grid = CloakingGrid.fit(
        fixes.lon.min(), fixes.lon.max(), fixes.lat.min(), fixes.lat.max(), cell_size, None
    )
    ix, iy = grid.cells(fixes.lon, fixes.lat)
    w = np.floor_divide(fixes.t_ns, window_ns)
    users, _ = pd.factorize(user_keys(fixes.user), sort=True)
    log = pd.DataFrame({"user": users, "place": ix * grid.ny + iy, "window": w})
    out: dict[str, Any] = {
        f"unicity_p{p}": unicity(log, p, "user", "place", "window", n_users, seed) for p in ps
    }
    for p in ps:
        out[f"linkage_p{p}"] = linkage_success(
            log, p, True, "user", "place", "window", n_users, seed
        )
    out["home_unique_share"] = home_uniqueness(log, "user", "place")
    out.update(
        {
            "n_fixes": len(log),
            "n_users": int(users.max()) + 1,
            "n_windows": int(np.unique(w).size),
            "invalid_fixes_dropped": fixes.n_dropped,
            "window": window_words(window_ns),
            "cell_size_m": grid.cell_size,
        }
    )
    return out
