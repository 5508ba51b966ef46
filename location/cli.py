"""Command line: ``structanon location cloak ...`` and the demo."""

from __future__ import annotations

from pathlib import Path

import click

from structanon import Release
from structanon._validation import (
    check_float,
    check_input_path,
    check_int,
    check_output_paths,
    file_suffix,
)
from structanon.cli_support import emit_release, handle_errors
from structanon.io import atomic_write, release_key, staged_outputs
from structanon.report import write_report

from ._cloak import DEFAULT_CELL_SIZE, cloak
from ._figures import report_figures
from ._input import parse_window
from .io import read_fixes, write_cloaked, write_geojson
from .synthetic import synthetic_log

__all__ = ["cli", "demo"]

DATA = Path(__file__).parent / "data"


@click.group(name="location", help="Grid cloaking of GPS location logs.")
def cli() -> None:
    """Grid cloaking of GPS location logs."""


KEY_FILE_HELP = ("Secret key file: pseudonyms and publication order become reproducible for "
                 "whoever holds it (default: $STRUCTANON_PSEUDONYM_KEY, else a fresh random key)")
SEED_HELP = ("Public seed of the algorithm's own choices and the measures; it never decides the "
             "published order, labels or ids.")
OUTPUT_EXTENSIONS = {"--output": (".csv", ".tsv", ".tab", ".parquet", ".pq"),
                     "--geojson": (".geojson", ".json"), "--report": (".json", ".html", ".htm")}


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
@click.option("--sep", default=None, help="Field separator of text input (default: by extension).")
@click.option("--cell-size", type=float, default=DEFAULT_CELL_SIZE, show_default=True,
              help="Side of the finest cell in metres (equal-area projection).")
@click.option("--levels", type=int, default=None, help="Maximum pyramid merges (default: all).")
@click.option("--drop-invalid", is_flag=True, help="Drop and count invalid rows (default: reject).")
@click.option("--aggregate", is_flag=True,
              help="One row per (user, window, region) with its fix count n_fixes, instead of "
                   "one row per fix (per-fix rows reveal each user's fix count per window).")
@click.option("--key-file", type=click.Path(dir_okay=False), help=KEY_FILE_HELP)
@click.option("--seed", type=int, default=0, show_default=True, help=SEED_HELP)
@click.option("--no-measures", is_flag=True, help="Skip the utility and risk measures.")
@click.option("--quiet", is_flag=True, help="Print nothing but errors and warnings.")
@handle_errors
def cloak_command(input_path, k, window, method, output, geojson, report, user, time_col, lat,
                  lon, sep, cell_size, levels, drop_invalid, aggregate, key_file, seed,
                  no_measures, quiet) -> None:
    """Cloak INPUT so every published region holds >= k users per time window."""
    check_input_path(input_path, "INPUT")
    if key_file is not None:
        check_input_path(key_file, "--key-file")
    check_int(k, "-k", min_value=1)
    parse_window(window, "--window")
    check_float(cell_size, "--cell-size", min_value=0, include_min=False)
    if levels is not None:
        check_int(levels, "--levels", min_value=0)
    check_output_paths({"--output": output, "--geojson": geojson, "--report": report},
                       inputs=[input_path, key_file], extensions=OUTPUT_EXTENSIONS)
    key = release_key(key_file)
    df = read_fixes(input_path, columns=[user, time_col, lat, lon], sep=sep)
    release = cloak(df, k, window=window, method=method, user=user, time=time_col, lat=lat,
                    lon=lon, seed=seed, cell_size=cell_size, levels=levels,
                    drop_invalid=drop_invalid, aggregate=aggregate, key=key,
                    measures=not no_measures, source=str(input_path))
    for warning in release.info.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)
    with staged_outputs() as stage:
        if geojson:
            write_geojson(release.data, stage(geojson))
        if report:
            figures = report_figures(release) if file_suffix(report) in (".html", ".htm") else ()
            write_report(release, stage(report), figures)
        write_cloaked(release.data, stage(output))
    emit_release(release, None, quiet=quiet)
    if report and not quiet:
        click.echo(f"report written to {report}")


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
