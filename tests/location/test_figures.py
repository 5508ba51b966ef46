"""The HTML report's before/after density view of a location log: distinct users per grid
cell, with fresh noise, never fixes (one user's fixes in a cell are unbounded)."""

import numpy as np
import pandas as pd
import pytest
import shapely

import location._figures as figures
from location._figures import GRID, _input_density, _input_users, _published_density

EDGES = (np.linspace(0, 1, GRID + 1), np.linspace(0, 1, GRID + 1))
K = 3
CROWDED = (40, 40)  # (row, column) of the cell at lon = lat = 0.505


@pytest.fixture
def noiseless(monkeypatch):
    """The view without its noise, to check what it counts against a recount."""
    monkeypatch.setattr("structanon.report.VIEW_NOISE_SCALE", 0.0)


def _log(rows: list[tuple[float, float, int, int, int]]) -> pd.DataFrame:
    """A log from (lon, lat, user, window, number of fixes) rows."""
    frame = pd.DataFrame(rows, columns=["lon", "lat", "user", "window", "n"])
    return frame.loc[frame.index.repeat(frame.pop("n"))].reset_index(drop=True)


def _points(log: pd.DataFrame) -> tuple[np.ndarray, ...]:
    return tuple(log[c].to_numpy() for c in ("lon", "lat", "user", "window"))


def _crowded_log(target_fixes: int = 200) -> pd.DataFrame:
    """30 users with 2 fixes each in one cell and window, user 0 with many more there;
    a few other cells and windows around them."""
    rows = [(0.505, 0.505, u, 1, 2) for u in range(30)]
    rows += [(0.505, 0.505, 0, 1, target_fixes)]
    rows += [(0.205, 0.705, u, 2, 3) for u in range(5)]
    rows += [(0.905, 0.105, u, w, 1) for u in range(4) for w in (3, 4)]
    return _log(rows)


def _recount(log: pd.DataFrame, k: int) -> np.ndarray:
    """Distinct users per cell over the (cell, window) pairs k users visited, with pandas."""
    cell = np.floor(log["lat"] * GRID).astype(int) * GRID + np.floor(log["lon"] * GRID).astype(int)
    log = log.assign(cell=cell)
    visitors = log.groupby(["cell", "window"])["user"].transform("nunique")
    users = log[visitors >= k].groupby("cell")["user"].nunique()
    out = np.zeros(GRID * GRID)
    out[users.index.to_numpy()] = users.to_numpy()
    return out.reshape(GRID, GRID)


def test_two_reports_one_user_apart_differ_by_noise_not_by_the_user():
    """The view drew fixes per cell exactly: two reports of logs one user apart differed in
    that cell by exactly the user's fixes there (202 of them, every time).  Now the cell
    counts users with noise: the difference is the user's contribution (1 user, or their
    fixes) in a minority of draws only, and each count stays close to its users."""
    log = _crowded_log()
    without = log[log["user"] != 0]
    full_points, without_points = _points(log), _points(without)
    fixes = int(((log["user"] == 0) & (log["lon"] == 0.505)).sum())
    hits, trials, drawn = 0, 40, []
    for _ in range(trials):
        a = _input_density(full_points, EDGES, K)[CROWDED]
        b = _input_density(without_points, EDGES, K)[CROWDED]
        hits += a - b in (1, fixes)
        drawn.append((a, b))
    assert hits < trials / 2, f"{hits} of {trials} differences gave the user away"
    # a blank cell (0) is below the floor through the noise; a drawn one is near its users
    assert all(abs(a - 30) < 80 and abs(b - 29) < 80 for a, b in drawn)
    assert sum(a > 0 for a, _ in drawn) > trials / 2


def test_one_user_adds_at_most_one_to_a_cell_whatever_their_fixes(noiseless):
    log = _crowded_log()
    density = _input_density(_points(log), EDGES, K)
    assert (density == _recount(log, K)).all()
    assert density[CROWDED] == 30 and density.sum() == 30 + 5 + 4
    # the user's fixes: 2 or 2,000 in the cell draw the same picture
    for n in (0, 2_000):
        assert (_input_density(_points(_crowded_log(n)), EDGES, K) == density).all()
    # without the user, the cell they shared with 29 others counts one less
    without = log[log["user"] != 0]
    less = _input_density(_points(without), EDGES, K)
    assert (less == _recount(without, K)).all()
    assert density[CROWDED] - less[CROWDED] == 1
    assert np.abs(density - less).max() == 1


def test_a_user_making_k_visitors_of_a_window_adds_k_and_the_noise_is_scaled_for_it(
    noiseless, monkeypatch
):
    """Through the per-window floor one user can switch on a (cell, window) pair and with
    it the k - 1 others counted nowhere else in that cell: the noise's sensitivity is k."""
    rows = [(0.505, 0.505, u, 1, 1) for u in range(K)]
    log = _log(rows)
    without = log[log["user"] != 0]
    assert _input_users(_points(log), EDGES, K).max() == K
    assert _input_users(_points(without), EDGES, K).max() == 0
    seen = []

    def spy(counts, floor, sensitivity=1.0):
        seen.append((floor, sensitivity))
        return np.asarray(counts, dtype=float), np.asarray(counts) >= floor

    monkeypatch.setattr(figures, "noisy_view_counts", spy)
    _input_density(_points(log), EDGES, K)
    assert seen == [(K, K)]


def test_cells_fewer_than_k_users_visited_per_window_stay_blank_with_noise():
    # 40 users in one cell over the log, but only k - 1 in any one window
    rows = [(0.505, 0.505, u, u // (K - 1), 50) for u in range(40)]
    rows += [(0.205, 0.705, u, 0, 1) for u in range(40, 80)]  # a cell 40 users share at once
    log = _log(rows)
    points = _points(log)
    crowded = (56, 16)  # lon 0.205, lat 0.705
    drawn = [_input_density(points, EDGES, K) for _ in range(40)]
    assert all(d[CROWDED] == 0 and np.isfinite(d).all() for d in drawn)
    assert all((d > 0).sum() <= 1 for d in drawn)
    assert sum(d[crowded] > 0 for d in drawn) > 30


def test_release_side_spreads_each_regions_users_over_its_area():
    box = shapely.box(0, 0, 2 / GRID, 1 / GRID)  # exactly two grid cells
    regions = pd.DataFrame({"region": [box], "n_users": [4], "n_fixes": [900]})
    density = _published_density(regions, EDGES)
    assert density[0, 0] == pytest.approx(2) and density[0, 1] == pytest.approx(2)
    assert density.sum() == pytest.approx(4)
