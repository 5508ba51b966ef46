"""File formats of location logs: fixes in, cloaked fixes and region GeoJSON out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon._validation import check_input_path, file_suffix
from structanon.errors import InputError
from structanon.io import atomic_write, read_table, write_table

from .metrics import region_areas

__all__ = ["read_fixes", "cloaked_table", "write_cloaked", "regions_table", "write_geojson"]


def read_fixes(
    path: str | Path, columns: list[str] | None = None, sep: str | None = None
) -> pd.DataFrame:
    """Read a CSV/TSV (optionally gzipped) or Parquet log of fixes.

    Parameters
    ----------
    path : path
    columns : list of str, optional
        ``[user, time, lat, lon]`` column names that must be present; the first (user)
        is read as text, so ids such as ``007`` keep their leading zeros.
    sep : str, optional
        Field separator of text files.

    Returns
    -------
    DataFrame
        In file order, so row ``i`` is line ``i + 2``.

    Raises
    ------
    InputError
        Missing or empty file, missing column (with a hint at the separator), unparseable
        table.
    """
    path = check_input_path(path)
    if columns is not None and (
        isinstance(columns, str)
        or not isinstance(columns, list | tuple)
        or not all(isinstance(c, str) for c in columns)
    ):
        raise InputError(f"columns must be a list of column names, got {columns!r}")
    if path.stat().st_size == 0:
        raise InputError("the file is empty (no header, no fixes)", path=str(path))
    if file_suffix(path) in (".parquet", ".pq"):
        df = read_table(path)
    else:
        dtype = {columns[0]: str} if columns else None
        df = read_table(path, sep=sep, dtype=dtype)
    for column in columns or []:
        if column not in df.columns:
            raise InputError(
                f"column not found; the file has {list(map(str, df.columns))} "
                "(wrong --sep? wrong --user/--time/--lat/--lon?)",
                column=column,
                path=str(path),
            )
    return df


def cloaked_table(data: pd.DataFrame) -> pd.DataFrame:
    """The release as a flat table: region as WKT (``region_wkt``) plus its bounds.

    Examples
    --------
    >>> import pandas as pd, shapely
    >>> d = pd.DataFrame({"user": ["p"], "window": pd.to_datetime([0], utc=True),
    ...                   "region_id": [7], "region": [shapely.box(1, 2, 3, 4)]})
    >>> row = cloaked_table(d).iloc[0]
    >>> row["region_wkt"], float(row["west"]), float(row["north"])
    ('POLYGON ((3 2, 3 4, 1 4, 1 2, 3 2))', 1.0, 4.0)
    """
    polys = np.asarray(data["region"].to_numpy())
    bounds = shapely.bounds(polys) if len(polys) else np.zeros((0, 4))
    times = ("start", "end") if "start" in data.columns else ("window",)
    table = pd.DataFrame(
        {
            "user": data["user"].to_numpy(),
            **{name: data[name].array for name in times},
            "region_id": data["region_id"].to_numpy(),
            "region_wkt": _wkt(polys, data["region_id"].to_numpy()),
            "west": bounds[:, 0],
            "south": bounds[:, 1],
            "east": bounds[:, 2],
            "north": bounds[:, 3],
        }
    )
    if "n_fixes" in data.columns:
        table["n_fixes"] = data["n_fixes"].to_numpy()
    return table


def _wkt(polys: np.ndarray, region_id: np.ndarray) -> np.ndarray:
    """WKT of each row's polygon, formatted once per region."""
    if not len(polys):
        return np.zeros(0, dtype=object)
    _, first, inv = np.unique(region_id, return_index=True, return_inverse=True)
    return shapely.to_wkt(polys[first], rounding_precision=-1)[inv.reshape(-1)]


def write_cloaked(data: pd.DataFrame, path: str | Path) -> None:
    """Write the cloaked fixes atomically (CSV/TSV/Parquet by extension; WKT regions).

    The rows are written in the release's order with no index column, so the file holds
    no input row number.
    """
    table = cloaked_table(data)
    if Path(path).suffix.lower() not in (".parquet", ".pq"):
        for name in ("window", "start", "end"):
            if name in table.columns:
                table[name] = table[name].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    write_table(table, path)


def regions_table(data: pd.DataFrame) -> pd.DataFrame:
    """One row per published region: distinct users, fixes, windows, fewest users per window.

    Computed from the release alone (per-fix rows, or aggregated ones with ``n_fixes``);
    ``area_km2`` is the exact spherical area of the region's lon/lat rectangle.

    Examples
    --------
    >>> import pandas as pd, shapely
    >>> box = shapely.box(0, 0, 0.01, 0.01)
    >>> d = pd.DataFrame({"user": ["p", "q", "p"], "window": [0, 0, 1],
    ...                   "region_id": [7, 7, 7], "region": [box] * 3})
    >>> regions_table(d)[["region_id", "n_users", "n_fixes", "min_users_per_window"]].values
    array([[7, 2, 3, 1]])
    """
    if len(data) == 0:
        return pd.DataFrame(
            columns=[
                "region_id",
                "n_users",
                "n_fixes",
                "n_windows",
                "min_users_per_window",
                "area_km2",
                "region",
            ]
        )
    if "start" in data.columns:  # a trajectory release: its samples' start times
        data = data.rename(columns={"start": "window"})
    g = data.groupby("region_id")
    per_window = data.groupby(["region_id", "window"])["user"].nunique()
    out = pd.DataFrame(
        {
            "n_users": g["user"].nunique(),
            "n_fixes": g["n_fixes"].sum() if "n_fixes" in data.columns else g.size(),
            "n_windows": g["window"].nunique(),
            "min_users_per_window": per_window.groupby(level=0).min(),
        }
    )
    out["area_km2"] = region_areas(data).loc[out.index] / 1e6
    out["region"] = data.drop_duplicates("region_id").set_index("region_id")["region"]
    return out.reset_index()


def write_geojson(data: pd.DataFrame, path: str | Path) -> None:
    """Write a GeoJSON FeatureCollection of the published regions with their user counts.

    One feature per region (properties as in :func:`regions_table`, ``region_id`` as a
    string since JSON readers lose integer precision above 2^53).  Written atomically.

    Raises
    ------
    InputError
        ``path`` does not end in ``.geojson`` or ``.json``.
    """
    regions = regions_table(data)
    geoms = (
        json.loads(
            shapely.to_geojson(
                shapely.geometrycollections(np.asarray(regions["region"].to_numpy()))
            )
        )
        if len(regions)
        else {"geometries": []}
    )
    features: list[dict[str, Any]] = []
    for row, geom in zip(regions.drop(columns="region").to_dict("records"), geoms["geometries"]):
        props = {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
        props["region_id"] = str(props["region_id"])
        features.append({"type": "Feature", "geometry": geom, "properties": props})
    if Path(path).suffix.lower() not in (".geojson", ".json"):
        raise InputError("GeoJSON output must end in .geojson or .json", path=str(path))
    with atomic_write(path) as fh:
        json.dump({"type": "FeatureCollection", "features": features}, fh)
