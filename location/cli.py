"""Command line: ``structanon location cloak ...`` and the demo."""

from __future__ import annotations

from pathlib import Path

import click

from structanon import Release
from structanon.cli_support import emit_release, handle_errors
from structanon.io import Pseudonymizer, atomic_write
from structanon.report import write_report

from ._cloak import DEFAULT_CELL_SIZE, cloak
from ._figures import report_figures
from .io import read_fixes, write_cloaked, write_geojson
from .synthetic import synthetic_log

__all__ = ["cli", "demo"]

DATA = Path(__file__).parent / "data"


@click.group(name="location", help="Grid cloaking of GPS location logs.")
def cli() -> None:
    """Grid cloaking of GPS location logs."""


@cli.command("cloak")
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option("-k", "k", type=int, required=True, help="Distinct users per region and window.")
@click.option("--window", default="15min", show_default=True, help="Time window, e.g. 15min, 1h.")
@click.option("--method", type=click.Choice(["fixed", "adaptive"]), default="fixed",
              show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="Cloaked fixes (.csv, .csv.gz, .tsv or .parquet; regions as WKT).")
@click.option("--geojson", type=click.Path(dir_okay=False), help="Regions with user counts.")
@click.option("--report", type=click.Path(dir_okay=False), help="Report (.json or .html).")
@click.option("--user", default="user", show_default=True, help="User id column.")
@click.option("--time", "time_col", default="time", show_default=True, help="Timestamp column.")
@click.option("--lat", default="lat", show_default=True, help="Latitude column.")
@click.option("--lon", default="lon", show_default=True, help="Longitude column.")
@click.option("--cell-size", type=float, default=DEFAULT_CELL_SIZE, show_default=True,
              help="Side of the finest cell in metres (equal-area projection).")
@click.option("--levels", type=int, default=None, help="Maximum pyramid merges (default: all).")
@click.option("--drop-invalid", is_flag=True, help="Drop and count invalid rows (default: reject).")
@click.option("--key-file", type=click.Path(dir_okay=False),
              help="Pseudonymization key (default: $STRUCTANON_PSEUDONYM_KEY, else random).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the measures.")
@click.option("--quiet", is_flag=True, help="Print nothing but errors.")
@handle_errors
def cloak_command(input_path, k, window, method, output, geojson, report, user, time_col, lat,
                  lon, cell_size, levels, drop_invalid, key_file, seed, quiet) -> None:
    """Cloak INPUT so every published region holds >= k users per time window."""
    df = read_fixes(input_path, columns=[user, time_col, lat, lon])
    release = cloak(df, k, window=window, method=method, user=user, time=time_col, lat=lat,
                    lon=lon, seed=seed, cell_size=cell_size, levels=levels,
                    drop_invalid=drop_invalid, pseudonymizer=Pseudonymizer.from_config(key_file),
                    source=str(input_path))
    write_cloaked(release.data, output)
    if geojson:
        write_geojson(release.data, geojson)
    emit_release(release, report, figures=lambda: report_figures(release), quiet=quiet)


def demo(output_dir: Path, seed: int = 0) -> Release:
    """Cloak the bundled GeoLife sample (k=2, daily windows, adaptive grid).

    Also cloaks a seeded synthetic log of 400 users (k=5, 15 min, adaptive) next to it.
    Writes ``location_geolife_cloaked.csv``, ``location_geolife_regions.geojson``,
    ``location_geolife_report.json`` (and ``.html`` with the region map, area distribution
    and unicity figures) and the same three for ``location_synthetic_*``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    sample = read_fixes(DATA / "geolife_11users_sample.csv.gz",
                        columns=["uid", "datetime", "lat", "lng"])
    release = cloak(sample, k=2, window="1D", method="adaptive", user="uid", time="datetime",
                    lat="lat", lon="lng", seed=seed)
    synthetic = cloak(synthetic_log(40_000, 400, seed=seed), k=5, window="15min",
                      method="adaptive", seed=seed)
    for name, rel in (("geolife", release), ("synthetic", synthetic)):
        write_cloaked(rel.data, output_dir / f"location_{name}_cloaked.csv")
        write_geojson(rel.data, output_dir / f"location_{name}_regions.geojson")
        with atomic_write(output_dir / f"location_{name}_report.json") as fh:
            fh.write(rel.to_json())
    write_report(release, output_dir / "location_geolife_report.html", report_figures(release))
    return release
