import numpy as np
import pytest

from location._grid import EARTH_RADIUS, CloakingGrid, lonlat_rectangle_area
from structanon.errors import InputError


@pytest.mark.parametrize("lat", [0.0, 39.9, -33.9, 64.1])
def test_cells_are_equal_area(lat):
    grid = CloakingGrid.fit(10.0, 10.5, lat, lat + 0.4, cell_size=250.0)
    lon_e, lat_e = grid.lon_edges(), grid.lat_edges()
    areas = lonlat_rectangle_area(
        lon_e[:-1, None], lat_e[None, :-1], lon_e[1:, None], lat_e[None, 1:]
    )
    np.testing.assert_allclose(areas, 250.0**2, rtol=1e-6)


def test_rectangle_area_of_whole_sphere():
    assert lonlat_rectangle_area(-180, -90, 180, 90) == pytest.approx(4 * np.pi * EARTH_RADIUS**2)


def test_top_level_is_one_cell_covering_all():
    grid = CloakingGrid.fit(116.0, 117.0, 39.5, 40.5, cell_size=100.0)
    assert grid.nx == grid.ny == 2**grid.top
    lon_e, lat_e = grid.lon_edges(), grid.lat_edges()
    assert lon_e[0] < 116.0 and lon_e[-1] > 117.0 and lat_e[0] < 39.5 and lat_e[-1] > 40.5
    assert np.all(np.diff(lon_e) > 0) and np.all(np.diff(lat_e) > 0)


def test_levels_limit_gives_several_top_cells():
    grid = CloakingGrid.fit(116.0, 117.0, 39.5, 40.5, cell_size=100.0, levels=3)
    assert grid.top == 3 and grid.nx > 8 and grid.nx % 8 == 0


def test_region_codes_round_trip_and_nest():
    grid = CloakingGrid.fit(0.0, 1.0, 0.0, 1.0, cell_size=1000.0)
    cx, cy = np.array([5, 0, 63]), np.array([7, 1, 2])
    for level, kind in [(0, 0), (3, 0), (2, 1), (4, 2)]:
        codes = grid.encode(level, kind, cx, cy)
        lv, kd, x, y = grid.decode(codes)
        assert (lv == level).all() and (kd == kind).all()
        assert (x == cx).all() and (y == cy).all()
    x_lo, y_lo, x_hi, y_hi = grid.edge_index_bounds(grid.encode(3, 0, cx, cy))
    assert ((x_hi - x_lo) == 8).all() and ((y_hi - y_lo) == 8).all()
    x_lo, y_lo, x_hi, y_hi = grid.edge_index_bounds(grid.encode(3, 1, cx, cy))  # wide half
    assert ((x_hi - x_lo) == 8).all() and ((y_hi - y_lo) == 4).all()
    x_lo, y_lo, x_hi, y_hi = grid.edge_index_bounds(grid.encode(3, 2, cx, cy))  # tall half
    assert ((x_hi - x_lo) == 4).all() and ((y_hi - y_lo) == 8).all()


def test_cells_agree_with_edges_exactly():
    rng = np.random.default_rng(1)
    grid = CloakingGrid.fit(2.2, 2.5, 48.8, 48.9, cell_size=50.0)
    lon_e, lat_e = grid.lon_edges(), grid.lat_edges()
    lon = np.concatenate([rng.uniform(2.2, 2.5, 1000), lon_e[10:20]])  # some exactly on edges
    lat = np.concatenate([rng.uniform(48.8, 48.9, 1000), lat_e[10:20]])
    ix, iy = grid.cells(lon, lat)
    assert np.all((lon_e[ix] <= lon) & (lon < lon_e[ix + 1]))
    assert np.all((lat_e[iy] <= lat) & (lat < lat_e[iy + 1]))


def test_bad_grid_parameters():
    with pytest.raises(InputError, match="cell_size"):
        CloakingGrid.fit(0, 1, 0, 1, cell_size=0)
    with pytest.raises(InputError, match="too small"):
        CloakingGrid.fit(0, 100, 0, 60, cell_size=0.01)
    with pytest.raises(InputError, match="globe"):
        CloakingGrid.fit(-170, 170, 0, 1, cell_size=1000)
