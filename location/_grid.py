"""Equal-area projection, the cloaking grid pyramid and its region codes.

Projection: Lambert cylindrical equal-area on the sphere of radius ``R = 6,371,007.2 m``
(the authalic radius of WGS84), with the standard parallel ``phi0`` and the central meridian
``lambda0`` at the middle of the data's latitude and longitude ranges rounded to whole
degrees (so they reveal nothing finer than where the data lies to half a degree)::

    x = R * (lambda - lambda0) * cos(phi0)        y = R * sin(phi) / cos(phi0)

It preserves area exactly (``dx dy = R^2 cos(phi) dlambda dphi``), so equal squares in
``(x, y)`` are equal areas on the ground, and since ``x`` depends on longitude only and ``y``
on latitude only, every axis-aligned square of the grid is *exactly* a longitude/latitude
rectangle: its WGS84 polygon is the exact inverse of its corners, with no densification.
Shapes are true at ``phi0`` and stretched by ``cos(phi0) / cos(phi)`` away from it (0.2 %
at 2 degrees of latitude from ``phi0`` near Beijing), which is why the grid is centred on
the data, to the nearest degree.

Region codes (int64): ``(3 * level + kind) << 52 | ix << 26 | iy`` with ``kind`` 0 for a
square cell of the level, 1 for a *wide* half (two horizontally adjacent cells of level
``level - 1`` sharing a parent) and 2 for a *tall* half (two vertically adjacent ones).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from structanon._validation import check_float, check_int
from structanon.errors import InputError

__all__ = ["EARTH_RADIUS", "MAX_CELL_SIZE", "CloakingGrid", "lonlat_rectangle_area"]

MAX_CELL_SIZE = 1e7  # metres: a quarter of the equator; larger cells overflow the lattice

EARTH_RADIUS = 6_371_007.181  # authalic radius of the WGS84 ellipsoid, metres
_AXIS_BITS = 26
_MAX_CELLS = 1 << _AXIS_BITS
#: Published polygons are widened by this many degrees (about 0.1 mm) so that a fix lying
#: exactly on a cell edge is strictly inside its region (shapely ``contains`` excludes the
#: boundary).  Floating-point rounding of the edges is below 1e-12 degrees.
EDGE_PAD_DEG = 1e-9


def lonlat_rectangle_area(west, south, east, north) -> np.ndarray:
    """Exact area in m^2 on the sphere of radius ``EARTH_RADIUS`` of lon/lat rectangles.

    Notes
    -----
    ``A = R^2 * (east - west) [rad] * (sin(north) - sin(south))``.
    """
    west, south, east, north = (np.asarray(v, dtype=np.float64) for v in (west, south, east, north))
    return (
        EARTH_RADIUS**2
        * np.radians(east - west)
        * (np.sin(np.radians(north)) - np.sin(np.radians(south)))
    )


def _locate(values: np.ndarray, edges: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """Index ``i`` with ``edges[i] <= value < edges[i + 1]`` (clipped to the grid)."""
    n = edges.size - 1
    idx = np.floor(guess).astype(np.int64)
    np.clip(idx, 0, n - 1, out=idx)
    for _ in range(2):  # rounding moves a guess by at most one cell
        idx -= (values < edges[idx]) & (idx > 0)
        idx += (values >= edges[idx + 1]) & (idx < n - 1)
    return idx


def _snapped_axis(lo_hi: np.ndarray, cell_size: float, top: int, single: bool) -> tuple[float, int]:
    """Origin and level-0 cell count of one axis, the origin on a data-independent lattice.

    The lattice is the multiples of half a top cell, ``cell_size * 2^(top-1)`` (of a whole
    cell at ``top = 0``), in projected metres from the whole-degree projection centre, so
    the published edges tell no more than which lattice cells the data falls in.  With
    ``single``, one top cell must cover ``[lo, hi]``; ``0`` cells are returned when it does
    not, and the caller goes one level up (a span below half a top cell always fits, so
    at most two levels above the one the span needs).
    """
    block = cell_size * 2.0**top
    step = block / 2 if top > 0 else block
    x0 = np.floor(lo_hi[0] / step) * step
    if single:
        return float(x0), (1 << top) if lo_hi[1] < x0 + block else 0
    x0 = np.floor(lo_hi[0] / block) * block
    return float(x0), int(np.floor((lo_hi[1] - x0) / block) + 1) << top


@dataclass(frozen=True)
class CloakingGrid:
    """A pyramid of square grids in the equal-area projection.

    Level 0 has ``nx * ny`` cells of ``cell_size`` metres; level ``L`` merges blocks of
    ``2^L x 2^L`` level-0 cells; ``top`` is the coarsest level.
    """

    lon0: float
    lat0: float
    cell_size: float
    x0: float
    y0: float
    nx: int
    ny: int
    top: int

    @classmethod
    def fit(
        cls,
        lon_min: float,
        lon_max: float,
        lat_min: float,
        lat_max: float,
        cell_size: float,
        levels: int | None = None,
    ) -> CloakingGrid:
        """The grid covering the bounding box, on a data-independent lattice.

        The projection centre is the bounding box's middle rounded to whole degrees and the
        grid origin lies on a lattice of that projection (:func:`_snapped_axis`), so no
        published edge or parameter lets anyone solve for an input coordinate.  With
        ``levels=None`` the top level is a single cell covering every fix; otherwise the
        pyramid has at most ``levels`` merges above level 0.
        """
        cell_size = check_float(
            cell_size, "cell_size", min_value=0, include_min=False, max_value=MAX_CELL_SIZE
        )
        levels = None if levels is None else check_int(levels, "levels", min_value=0)
        # whole degrees: the projection says where the data is to half a degree, no closer
        lon0 = float(np.round(0.5 * (lon_min + lon_max)))
        lat0 = float(np.round(0.5 * (lat_min + lat_max)))
        if abs(lat0) > 80 or lon_max - lon_min > 180:
            raise InputError(
                "the fixes span too much of the globe for one equal-area grid "
                f"(longitudes {lon_min:g}..{lon_max:g}, centre latitude {lat0:g}); "
                "cloak each region separately"
            )
        probe = cls(lon0, lat0, float(cell_size), 0.0, 0.0, 1, 1, 0)
        x = probe.project_x(np.array([lon_min, lon_max]))
        y = probe.project_y(np.array([lat_min, lat_max]))
        # a small margin keeps the extreme fixes off the outer edges
        pad = 1e-9 * max(abs(x).max(), abs(y).max(), cell_size) + 1e-3
        x = np.array([x[0] - pad, x[1] + pad])
        y = np.array([y[0] - pad, y[1] + pad])
        need = max(x[1] - x[0], y[1] - y[0]) / cell_size
        top_needed = max(0, int(np.ceil(np.log2(need)))) if need > 1 else 0
        if levels is None:
            top = top_needed
            while True:  # at most two levels more: see _snapped_axis
                x0, nx = _snapped_axis(x, cell_size, top, single=True)
                y0, ny = _snapped_axis(y, cell_size, top, single=True)
                if nx and ny:
                    break
                top += 1
        else:
            top = min(int(levels), top_needed)
            x0, nx = _snapped_axis(x, cell_size, top, single=False)
            y0, ny = _snapped_axis(y, cell_size, top, single=False)
        if nx >= _MAX_CELLS or ny >= _MAX_CELLS:
            raise InputError(
                f"cell_size {cell_size:g} m is too small for an extent of "
                f"{(x[1] - x[0]) / 1000:.0f} x {(y[1] - y[0]) / 1000:.0f} km (at most "
                f"{_MAX_CELLS - 1} cells per axis)",
                value=cell_size,
            )
        return cls(lon0, lat0, float(cell_size), float(x0), float(y0), nx, ny, top)

    # -- projection ---------------------------------------------------------------------
    def project_x(self, lon: np.ndarray) -> np.ndarray:
        return EARTH_RADIUS * np.radians(lon - self.lon0) * np.cos(np.radians(self.lat0))

    def project_y(self, lat: np.ndarray) -> np.ndarray:
        return EARTH_RADIUS * np.sin(np.radians(lat)) / np.cos(np.radians(self.lat0))

    def lon_edges(self) -> np.ndarray:
        """Longitudes of the ``nx + 1`` level-0 cell edges (exact inverse projection)."""
        x = self.x0 + self.cell_size * np.arange(self.nx + 1, dtype=np.float64)
        lon = self.lon0 + np.degrees(x / (EARTH_RADIUS * np.cos(np.radians(self.lat0))))
        return np.clip(lon, -180.0, 180.0)

    def lat_edges(self) -> np.ndarray:
        """Latitudes of the ``ny + 1`` level-0 cell edges (exact inverse projection)."""
        y = self.y0 + self.cell_size * np.arange(self.ny + 1, dtype=np.float64)
        s = np.clip(y * np.cos(np.radians(self.lat0)) / EARTH_RADIUS, -1.0, 1.0)
        return np.degrees(np.arcsin(s))

    def cells(self, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Level-0 cell indices ``(ix, iy)`` of each fix.

        Cells are decided against the inverse-projected edges themselves (the projected
        guess is corrected by one cell where rounding put it on the wrong side), so a fix
        is inside the published lon/lat rectangle of its cell by construction.
        """
        return (
            _locate(lon, self.lon_edges(), (self.project_x(lon) - self.x0) / self.cell_size),
            _locate(lat, self.lat_edges(), (self.project_y(lat) - self.y0) / self.cell_size),
        )

    # -- region codes ---------------------------------------------------------------------
    @staticmethod
    def encode(
        level: int, kind: int, cx: np.ndarray | np.integer, cy: np.ndarray | np.integer
    ) -> np.ndarray:
        return np.asarray((np.int64(3 * level + kind) << 52) | (cx << _AXIS_BITS) | cy)

    @staticmethod
    def decode(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(level, kind, cx, cy)`` of region codes."""
        codes = np.asarray(codes, dtype=np.int64)
        head = codes >> 52
        mask = np.int64(_MAX_CELLS - 1)
        return head // 3, head % 3, (codes >> _AXIS_BITS) & mask, codes & mask

    def edge_index_bounds(self, codes: np.ndarray) -> tuple[np.ndarray, ...]:
        """Level-0 edge indices ``(x_lo, y_lo, x_hi, y_hi)`` of regions."""
        level, kind, cx, cy = self.decode(codes)
        one = np.int64(1)
        wx = np.where(kind == 2, one << np.maximum(level - 1, 0), one << level)
        wy = np.where(kind == 1, one << np.maximum(level - 1, 0), one << level)
        return cx * wx, cy * wy, (cx + 1) * wx, (cy + 1) * wy

    def bounds(self, codes: np.ndarray) -> np.ndarray:
        """``(n, 4)`` array of west, south, east, north (degrees) of regions, unpadded."""
        x_lo, y_lo, x_hi, y_hi = self.edge_index_bounds(codes)
        lon_e, lat_e = self.lon_edges(), self.lat_edges()
        x_hi, y_hi = np.minimum(x_hi, self.nx), np.minimum(y_hi, self.ny)
        return np.column_stack([lon_e[x_lo], lat_e[y_lo], lon_e[x_hi], lat_e[y_hi]])

    def polygons(self, codes: np.ndarray) -> np.ndarray:
        """Shapely polygons (WGS84 lon/lat) of regions, padded by ``EDGE_PAD_DEG``."""
        b = self.bounds(codes)
        return shapely.box(
            b[:, 0] - EDGE_PAD_DEG,
            b[:, 1] - EDGE_PAD_DEG,
            b[:, 2] + EDGE_PAD_DEG,
            b[:, 3] + EDGE_PAD_DEG,
        )

    def to_dict(self) -> dict[str, float | int | str | list[int]]:
        return {
            "projection": "Lambert cylindrical equal-area (sphere R=6371007.181 m)",
            "central_meridian": self.lon0,
            "standard_parallel": self.lat0,
            "cell_size_m": self.cell_size,
            "level0_cells": [self.nx, self.ny],
            "top_level": self.top,
        }
