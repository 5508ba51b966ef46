"""GeoDataFrames in and out: point geometries as input, published regions as output.

geopandas is optional: :func:`cloak` recognises a GeoDataFrame without importing it, and
:func:`to_geodataframe` names the missing package when it is absent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from structanon import Release
from structanon.errors import InputError, at_row

from .io import regions_table

__all__ = ["LocationRelease", "from_geodataframe", "to_geodataframe", "WGS84"]

WGS84 = "EPSG:4326"


def _is_geodataframe(df: Any) -> bool:
    return any(cls.__name__ == "GeoDataFrame" for cls in type(df).__mro__) and hasattr(df, "crs")


def from_geodataframe(df: Any, lat: str = "lat", lon: str = "lon") -> Any:
    """A GeoDataFrame of points as a plain DataFrame with ``lat`` / ``lon`` columns in WGS84.

    Any other frame is returned unchanged.  Points in another coordinate reference system
    are reprojected to WGS84 (EPSG:4326) with pyproj; missing or empty geometries become
    missing coordinates (invalid rows, as in a table).

    Raises
    ------
    InputError
        No CRS, a geometry that is not a point (row named), or ``lat`` / ``lon`` columns
        beside the geometry (which one to trust would be a guess).

    Examples
    --------
    >>> import geopandas, shapely
    >>> gdf = geopandas.GeoDataFrame({"user": ["a"]}, crs="EPSG:3857",
    ...                              geometry=[shapely.Point(261_845.7, 6_250_566.7)])
    >>> [round(v, 4) for v in from_geodataframe(gdf)[["lat", "lon"]].iloc[0]]
    [48.8566, 2.3522]
    """
    if not _is_geodataframe(df):
        return df
    name = df.geometry.name
    if df.crs is None:
        raise InputError(
            "the GeoDataFrame has no coordinate reference system; set it with "
            ".set_crs(...) (EPSG:4326 for longitude/latitude)",
            column=name,
        )
    clash = [c for c in (lat, lon) if c in df.columns and c != name]
    if clash:
        raise InputError(
            f"the GeoDataFrame has both a point geometry and a {clash[0]!r} column; drop the "
            "column or name other lat=/lon= columns",
            column=clash[0],
        )
    points = df.geometry if df.crs.equals(WGS84) else df.geometry.to_crs(WGS84)
    types = points.geom_type.to_numpy()
    bad = np.flatnonzero(pd.notna(types) & (types != "Point") & ~points.is_empty.to_numpy())
    if bad.size:
        raise InputError(
            f"geometry must be points, not {types[bad[0]]}", column=name, **at_row(df, bad[0])
        )
    usable = points.notna().to_numpy() & ~points.is_empty.to_numpy()
    x = np.full(len(points), np.nan)
    y = np.full(len(points), np.nan)
    x[usable] = points[usable].x.to_numpy()
    y[usable] = points[usable].y.to_numpy()
    out = pd.DataFrame(df.drop(columns=name))
    out[lat], out[lon] = y, x
    return out


def to_geodataframe(release: Release, rows: bool = False) -> Any:
    """The published regions (or rows) of a location release as a GeoDataFrame in WGS84.

    Parameters
    ----------
    release : Release
        A release of :func:`location.cloak` (pandas or dask).
    rows : bool
        One row per published row (user pseudonym, window, region) instead of one per
        region with its users, fixes and area (:func:`location.io.regions_table`).

    Returns
    -------
    geopandas.GeoDataFrame
        Geometry column ``region`` (polygons), ``crs="EPSG:4326"``.

    Raises
    ------
    ImportError
        geopandas is not installed (``pip install geopandas``).
    """
    try:
        import geopandas
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching the import
        raise ImportError(
            "to_geodataframe needs geopandas (an optional dependency): pip install geopandas"
        ) from exc
    data = release.data.compute() if hasattr(release.data, "dask") else release.data
    table = data if rows else regions_table(data)
    return geopandas.GeoDataFrame(table.copy(), geometry="region", crs=WGS84)


class LocationRelease(Release):
    """A :class:`structanon.Release` of a cloaked location log."""

    def to_geodataframe(self, rows: bool = False) -> Any:
        """The published regions as a GeoDataFrame (``crs="EPSG:4326"``); see
        :func:`location.to_geodataframe`."""
        return to_geodataframe(self, rows=rows)
