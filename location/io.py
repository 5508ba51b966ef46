"""File formats of location logs: fixes in, cloaked fixes and region GeoJSON out."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon._engine import compute, is_dask, parse_size, require_dask
from structanon._validation import check_encoding, check_input_path, file_suffix
from structanon.errors import InputError
from structanon.io import (
    PARQUET_EXTENSIONS,
    atomic_write,
    default_separator,
    file_lines,
    is_gzip_path,
    is_parquet_path,
    locate_undecodable,
    missing_tokens,
    raise_block_fault,
    read_table,
    staged_folder,
    text_block_checks,
    write_table,
)

from ._input import parse_fixes
from .metrics import region_areas

__all__ = [
    "read_fixes",
    "read_fixes_dask",
    "first_invalid_rows",
    "first_invalid_lines",
    "cloaked_table",
    "write_cloaked",
    "write_cloaked_dask",
    "regions_table",
    "write_geojson",
    "write_geojson_dask",
]


def read_fixes(
    path: str | Path,
    columns: list[str] | None = None,
    sep: str | None = None,
    encoding: str = "utf-8",
) -> pd.DataFrame:
    """Read a CSV/TSV (optionally gzipped) or Parquet log of fixes.

    The reader keeps every row: invalid fixes (a missing user, a time that does not parse,
    a coordinate out of range) are refused or dropped by :func:`location.cloak` and
    :func:`location.risk.log_risk` (``on_bad_lines``).

    Parameters
    ----------
    path : path
    columns : list of str, optional
        ``[user, time, lat, lon]`` column names that must be present; the first (user)
        is read as text as written, so ids such as ``007`` keep their leading zeros and
        ``NA`` or ``null`` are users (only an empty cell is a missing id).
    sep : str, optional
        Field separator of text files.
    encoding : str
        Text encoding of a text file (default UTF-8; e.g. ``"latin-1"``); a byte that does
        not decode is an :class:`InputError` naming the file, the line and the byte.

    Returns
    -------
    DataFrame
        In file order, so row ``i`` is line ``i + 2``.

    Raises
    ------
    InputError
        Missing or empty file, unknown encoding, undecodable text, missing column (with a
        hint at the separator), unparseable table.
    """
    encoding = check_encoding(encoding)
    path = check_input_path(path)
    if columns is not None and (
        isinstance(columns, str)
        or not isinstance(columns, list | tuple)
        or not all(isinstance(c, str) for c in columns)
    ):
        raise InputError(f"columns must be a list of column names, got {columns!r}")
    if path.stat().st_size == 0:
        raise InputError("the file is empty (no header, no fixes)", path=str(path))
    if is_parquet_path(path):
        df = read_table(path)
    else:
        # the user ids as written (a user "NA" or "null" is a user, "007" keeps its zeros);
        # the time and coordinates typed
        typed = list(columns[1:]) if columns else None
        df = read_table(path, sep=sep, typed=typed, encoding=encoding)
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
    no input row number.  A lazy (Dask) release goes to :func:`write_cloaked_dask`.
    """
    if is_dask(data):
        return write_cloaked_dask(data, path)
    table = cloaked_table(data)
    if Path(path).suffix.lower() not in PARQUET_EXTENSIONS:
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
    if is_dask(data):
        return write_geojson_dask(data, path)
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


# -- Dask: lazy input, outputs written partition by partition ---------------------------

_GLOB_CHARS = ("*", "?", "[")


def _file_chunks(path: str | Path, columns: list[str], sep: str | None, encoding: str) -> Any:
    """``(file, chunk, parquet)`` of the four columns of the files of ``path`` (a lazy
    read's INPUT), a chunk at a time (text read as text); the chunks' labels count the
    rows of their file.  A file that cannot be read is left out."""
    files, kind = _dask_files(path)
    if kind == "parquet":
        yield from _parquet_chunks(files, columns)
        return
    for name in [files] if isinstance(files, str) else files:
        here = default_separator(name, sep)
        try:
            chunks = pd.read_csv(
                name,
                sep=here,
                usecols=columns,
                dtype=str,
                chunksize=1 << 20,
                encoding=encoding,
            )
            for chunk in chunks:
                yield name, chunk, False
        except (ValueError, OSError, pd.errors.ParserError):
            continue


def _parquet_chunks(files: str | list[str], columns: list[str]) -> Any:
    """``(file, chunk, True)`` of the Parquet files of a lazy read (a folder's in name
    order), a record batch at a time, labelled by row in their file."""
    import pyarrow.parquet as pq

    if isinstance(files, str):
        p = Path(files)
        names = (
            sorted(str(f) for f in p.rglob("*") if is_parquet_path(f)) if p.is_dir() else [files]
        )
    else:
        names = list(files)
    for name in names:
        try:
            start = 0
            for batch in pq.ParquetFile(name).iter_batches(1 << 20, columns=columns):
                chunk = batch.to_pandas()
                chunk.index = pd.RangeIndex(start, start + len(chunk))
                start += len(chunk)
                yield name, chunk, True
        except (ValueError, OSError):
            continue


def locate_invalid(
    path: str | Path, columns: list[str], sep: str | None, summary: str, encoding: str = "utf-8"
) -> None:
    """Raise the first invalid fix of the files of ``path`` (a lazy read's INPUT) as the
    pandas engine names it: its file, line (a Parquet file's row), column and value, after
    ``summary`` (the Dask engine's count of invalid fixes, which knows no file line).
    Reads the columns again, a chunk at a time, on the error path only; returns when no
    file shows one."""
    user, time, lat, lon = columns
    for name, chunk, parquet in _file_chunks(path, columns, sep, encoding):
        try:
            parse_fixes(chunk, user, time, lat, lon, drop_invalid=False)
        except InputError as exc:
            if exc.row is None:
                continue
            first = exc.message.split("; first: ", 1)[-1]  # the reason, and the hint
            # the chunks' labels count the rows of the file from 0
            row = int(exc.row)
            line = None if parquet else file_lines(name, [row], sep, encoding)[0]
            where = {"row": row + 1} if line is None else {"line": line}
            raise InputError(
                f"{summary}; first: {first}",
                column=exc.column,
                value=exc.value,
                path=str(name),
                **where,
            ) from None


def _invalid_positions(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Positions of the rows of ``frame`` that are invalid fixes."""
    user, time, lat, lon = columns
    fixes = parse_fixes(frame, user, time, lat, lon, drop_invalid=True)
    bad = np.ones(len(frame), dtype=bool)
    bad[fixes.positions] = False
    return np.flatnonzero(bad)


def first_invalid_rows(df: Any, columns: list[str], limit: int = 5) -> list[int]:
    """Row positions (0-based) of the first ``limit`` invalid fixes of the in-memory log
    ``df`` (``columns``: user, time, lat, lon), checked a block of rows at a time until
    they are found: the line numbers ``--on-bad-lines drop`` prints."""
    found: list[int] = []
    step = 1 << 16
    for lo in range(0, len(df), step):
        found += (_invalid_positions(df.iloc[lo : lo + step], columns) + lo).tolist()
        if len(found) >= limit:
            break
    return found[:limit]


def first_invalid_lines(
    path: str | Path,
    columns: list[str],
    sep: str | None = None,
    encoding: str = "utf-8",
    limit: int = 5,
) -> list[int]:
    """File lines of the first ``limit`` invalid fixes of the text files of ``path`` (a
    lazy read's INPUT, whose partitions know no file line), read again a chunk at a time
    until they are found; empty for Parquet."""
    found: list[int] = []
    for name, chunk, parquet in _file_chunks(path, columns, sep, encoding):
        if parquet:  # rows, not lines: the count alone is told
            break
        rows = [int(chunk.index[p]) for p in _invalid_positions(chunk, columns)[:limit]]
        found += [n for n in file_lines(name, rows, sep, encoding) if n is not None]
        if len(found) >= limit:
            break
    return found[:limit]


def _dask_files(path: str | Path) -> tuple[str | list[str], str]:
    """The files (or Parquet folder) a lazy read takes, and their format."""
    text = str(path)
    if any(c in text for c in _GLOB_CHARS) and not Path(text).exists():
        files = sorted(glob.glob(text))
        if not files:
            raise InputError("INPUT matches no file", path=text)
        kinds = {is_parquet_path(Path(f)) for f in files}
        if len(kinds) > 1:
            raise InputError("INPUT mixes Parquet and text files", path=text)
        return files, "parquet" if kinds.pop() else "text"
    p = check_input_path(path, "INPUT", directory_ok=True)
    if p.is_dir():
        if not any(p.rglob("*.parquet")) and not any(p.rglob("*.pq")):
            raise InputError("INPUT folder holds no .parquet file", path=text)
        return text, "parquet"
    if p.stat().st_size == 0:
        raise InputError("the file is empty (no header, no fixes)", path=text)
    return text, "parquet" if is_parquet_path(p) else "text"


def read_fixes_dask(
    path: str | Path,
    columns: list[str],
    sep: str | None = None,
    blocksize: str | int = "64MB",
    encoding: str = "utf-8",
) -> Any:
    """Read a log lazily as a Dask DataFrame: Parquet file, folder or glob, or CSV/TSV
    file or glob (``blocksize`` bytes per partition; a compressed file is one partition).

    The four ``columns`` (``[user, time, lat, lon]``) are read as text from text files
    (in ``encoding``), so the values (and the release) are the same as :func:`read_fixes`
    gives; Parquet keeps its types.

    Raises
    ------
    InputError
        No such file, a glob matching nothing, an empty file, a folder without Parquet
        files, a missing column (with a hint at the separator), an unknown encoding.  A
        line that does not decode is named (file, line, byte) when the partitions are
        computed.
    """
    dd = require_dask()
    encoding = check_encoding(encoding)
    files, kind = _dask_files(path)
    try:
        if kind == "parquet":
            ddf = dd.read_parquet(files)
        else:
            first = Path(files[0] if isinstance(files, list) else files)
            if sep is None:
                sep = default_separator(first)
            if len(sep) != 1:
                raise InputError(
                    "the Dask engine reads one-character field separators, not "
                    f"{sep!r} (use the pandas engine)"
                )
            compressed = first.suffix.lower() in (".gz", ".bz2", ".xz", ".zip", ".zst")
            ddf = dd.read_csv(
                files,
                sep=sep,
                dtype=dict.fromkeys(columns, str),
                # the user ids as written (as read_fixes reads them), the rest typed
                keep_default_na=False,
                na_values=missing_tokens(columns, columns[1:]),
                blocksize=None if compressed else blocksize,
                encoding=encoding,
            )
    except InputError:
        raise
    except UnicodeDecodeError:  # Dask parses a sample of the first file here
        locate_undecodable(files[0] if isinstance(files, list) else files, encoding)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read the log: {exc}", path=str(path)) from None
    for column in columns:
        if column not in ddf.columns:
            raise InputError(
                f"column not found; the input has {list(map(str, ddf.columns))} "
                "(wrong --sep? wrong --user/--time/--lat/--lon?)",
                column=column,
                path=str(path),
            )
    if kind != "parquet":
        # what a parsed partition no longer shows (a NUL byte cuts a value short, a short
        # line is padded): one pass of the workers over the bytes, as read_fixes refuses
        names = files if isinstance(files, list) else [str(files)]
        size = None if compressed else parse_size(blocksize, "blocksize", 2**10)
        checks = text_block_checks(
            names, sep or ",", len(ddf.columns), compressed, size, encoding, check_decoding=True
        )
        raise_block_fault(names, compute(checks)[0])
    return ddf[list(columns)]


def _geo_table(data: pd.DataFrame) -> Any:
    """One partition as an Arrow table: the flat columns plus ``geometry`` (WKB) and the
    GeoParquet 1.0 metadata naming it (lon/lat, OGC:CRS84 by default)."""
    import pyarrow as pa

    table = cloaked_table(data)
    polys = np.asarray(data["region"].to_numpy())
    if len(polys):
        _, first, inv = np.unique(
            data["region_id"].to_numpy(), return_index=True, return_inverse=True
        )
        table["geometry"] = shapely.to_wkb(polys[first])[inv.reshape(-1)]
    else:
        table["geometry"] = np.zeros(0, dtype=object)
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    arrow = arrow.set_column(
        arrow.schema.get_field_index("geometry"),
        "geometry",
        pa.array(table["geometry"].tolist(), type=pa.binary()),
    )
    bbox = [float(table[c].min()) for c in ("west", "south")] + [
        float(table[c].max()) for c in ("east", "north")
    ]
    geo = {
        "version": "1.0.0",
        "primary_column": "geometry",
        "columns": {
            "geometry": {
                "encoding": "WKB",
                "geometry_types": ["Polygon"],
                **({"bbox": bbox} if len(table) else {}),
            }
        },
    }
    meta = dict(arrow.schema.metadata or {})
    meta[b"geo"] = json.dumps(geo).encode()
    return arrow.replace_schema_metadata(meta)


def _write_geo_part(data: pd.DataFrame, folder: str, number: int) -> int:
    import pyarrow.parquet as pq

    pq.write_table(_geo_table(data), str(Path(folder) / f"part.{number:05d}.parquet"))
    return len(data)


def write_cloaked_dask(data: Any, path: str | Path) -> None:
    """Write a lazy release partition by partition, never collecting the fixes.

    ``.parquet``/``.pq``: a folder ``path`` of Parquet parts (``part.00000.parquet``, ...)
    in the release's order, with the columns of :func:`write_cloaked` plus ``geometry``,
    the region as WKB, declared in GeoParquet metadata (geopandas, DuckDB and Arrow read
    the folder).  Text (``.csv``/``.tsv``): one file, the partitions appended in order, the
    same bytes as :func:`write_cloaked` writes for the computed release.  The parts are
    written by the workers (a remote cluster needs a shared file system).
    """
    import dask

    ext = file_suffix(Path(path))
    parts = data.to_delayed()
    if ext in PARQUET_EXTENSIONS:
        with staged_folder(path) as tmp:
            compute(*[dask.delayed(_write_geo_part)(p, str(tmp), i) for i, p in enumerate(parts)])
        return
    sep = "\t" if ext in (".tsv", ".tab") else ","
    with atomic_write(path, compress=is_gzip_path(path)) as fh:
        step = 4
        for lo in range(0, len(parts), step):
            for i, pdf in enumerate(compute(*parts[lo : lo + step])):
                table = cloaked_table(pdf)
                table["window"] = table["window"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
                table.to_csv(fh, sep=sep, index=False, header=lo + i == 0)


def _region_user_rows(data: pd.DataFrame) -> pd.DataFrame:
    """Distinct (region_id, window, user) rows of a partition with their fixes."""
    fixes = data["n_fixes"] if "n_fixes" in data.columns else pd.Series(1, index=data.index)
    keys = data[["region_id", "window", "user"]].assign(n_fixes=fixes.to_numpy())
    return keys.groupby(["region_id", "window", "user"], sort=False)["n_fixes"].sum().reset_index()


def write_geojson_dask(data: Any, path: str | Path) -> None:
    """:func:`write_geojson` of a lazy release: the workers reduce it to one row per
    (region, window, user) with its fix count, then the regions' polygons are joined."""
    if Path(path).suffix.lower() not in (".geojson", ".json"):
        raise InputError("GeoJSON output must end in .geojson or .json", path=str(path))
    meta = pd.DataFrame(
        {
            "region_id": pd.Series(dtype=np.int64),
            "window": pd.Series(dtype="datetime64[ns, UTC]"),
            "user": pd.Series(dtype=object),
            "n_fixes": pd.Series(dtype=np.int64),
        }
    )
    keys = data[
        ["region_id", "window", "user"] + (["n_fixes"] if "n_fixes" in data.columns else [])
    ]
    per_part, polygons = compute(
        keys.map_partitions(_region_user_rows, meta=meta),
        data[["region_id", "region"]].map_partitions(
            lambda d: d.drop_duplicates("region_id"), meta=data[["region_id", "region"]]._meta
        ),
    )
    rows = per_part.groupby(["region_id", "window", "user"], sort=False)["n_fixes"].sum()
    rows = rows.reset_index()
    shapes = polygons.drop_duplicates("region_id").set_index("region_id")["region"]
    rows["region"] = shapes.loc[rows["region_id"].to_numpy()].to_numpy()
    write_geojson(rows, path)
