"""Command line: ``structanon location anonymize | assess ...`` and the demo."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from structanon import Release
from structanon._engine import is_dask
from structanon._finish import Timings
from structanon._validation import (
    check_float,
    check_input_path,
    check_int,
    check_output_paths,
)
from structanon.cli_support import (
    assess_options,
    assessment,
    check_engine_options,
    deprecated,
    dropped_lines_notice,
    emit_assessment,
    emit_release,
    encoding_option,
    engine_context,
    engine_options,
    handle_errors,
    on_bad_lines_option,
    release_options,
    separator,
    show_progress,
    stack,
)
from structanon.errors import InputError, respelled
from structanon.io import (
    TABLE_OUTPUT_EXTENSIONS,
    file_lines,
    is_parquet_path,
    release_key,
    staged_outputs,
)
from structanon.report import write_report

from ._cloak import DEFAULT_CELL_SIZE, cloak
from ._dask import InvalidFixes
from ._figures import report_figures
from ._grid import MAX_CELL_SIZE
from ._input import API_DROP, CLI_DROP, parse_window
from ._trajectory_release import DEFAULT_MAX_SUPPRESSION
from .io import (
    first_invalid_lines,
    first_invalid_rows,
    locate_invalid,
    read_fixes,
    read_fixes_dask,
    write_cloaked,
    write_geojson,
)
from .risk import log_risk
from .synthetic import synthetic_log

__all__ = ["cli", "demo"]

DATA = Path(__file__).parent / "data"
OUTPUT_EXTENSIONS = {
    "--output": TABLE_OUTPUT_EXTENSIONS,
    "--geojson": (".geojson", ".json"),
    "--report": (".json", ".html", ".htm"),
}


@click.group(name="location", help="Grid cloaking of GPS location logs.")
def cli() -> None:
    """Grid cloaking of GPS location logs."""


def _former_drop_invalid(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        deprecated(ctx, "--drop-invalid is the former name of --on-bad-lines drop")
    return value


def _log_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options that say how to read a log: columns, separator, encoding, invalid rows."""
    options = [
        click.option("--user", default="user", show_default=True, help="User id column."),
        click.option(
            "--time",
            "time_col",
            default="time",
            show_default=True,
            help="Timestamp column (ISO 8601, datetimes or epoch seconds).",
        ),
        click.option("--lat", default="lat", show_default=True, help="Latitude column."),
        click.option("--lon", default="lon", show_default=True, help="Longitude column."),
        click.option(
            "--sep",
            default=None,
            callback=separator,
            help="Field separator of text input (default: by extension; \\t or tab: a tab; several "
            "characters are taken literally).",
        ),
        encoding_option(),
        on_bad_lines_option(),
        click.option(
            "--drop-invalid",
            is_flag=True,
            hidden=True,
            callback=_former_drop_invalid,
            help="Former name of --on-bad-lines drop.",
        ),
    ]
    return stack(*options)(func)


def _on_bad_lines(on_bad_lines: str, drop_invalid: bool) -> str:
    """``--on-bad-lines``, or ``drop`` for its former spelling ``--drop-invalid``; the two
    may not contradict each other.  (Only here can ``raise`` be told from the default; the
    library's own checks are :func:`~structanon._validation.check_on_bad_lines`.)"""
    if not drop_invalid:
        return on_bad_lines
    ctx = click.get_current_context()
    if ctx.get_parameter_source("on_bad_lines") is click.core.ParameterSource.COMMANDLINE and (
        on_bad_lines != "drop"
    ):
        raise InputError(
            "--drop-invalid (the former name of --on-bad-lines drop) contradicts "
            f"--on-bad-lines {on_bad_lines}; give --on-bad-lines only"
        )
    return "drop"


def _tell_dropped(
    n_dropped: int,
    reasons: dict[str, int] | None,
    df: Any,
    input_path: Path,
    columns: list[str],
    sep: str | None,
    encoding: str,
) -> None:
    """``--on-bad-lines drop``: the count of invalid fixes dropped, the first ones' file
    lines (of a Parquet input: their 1-based rows) and the reasons, on stderr."""
    if not n_dropped:
        return
    lines: list[int] = []
    parquet = is_parquet_path(input_path)
    if is_dask(df):
        if not parquet:
            lines = first_invalid_lines(input_path, columns, sep, encoding)
    elif parquet:
        lines = [row + 1 for row in first_invalid_rows(df, columns)]
    else:
        rows = first_invalid_rows(df, columns)
        lines = [n for n in file_lines(input_path, rows, sep, encoding) if n is not None]
    dropped_lines_notice(n_dropped, lines, input_path, reasons, unit="row" if parquet else "line")


def _check_log_options(
    input_path: Path, window: str, cell_size: float, engine: str = "pandas"
) -> None:
    if engine != "dask":  # the Dask reader checks folders and globs itself
        check_input_path(input_path, "INPUT")
    parse_window(window, "--window")
    check_float(cell_size, "--cell-size", min_value=0, include_min=False, max_value=MAX_CELL_SIZE)


@contextlib.contextmanager
def _located(
    engine: str, input_path: Path, columns: list[str], sep: str | None, encoding: str
) -> Iterator[None]:
    """On the Dask engine, invalid fixes (counted by partition, with no file line) are
    raised as the pandas engine raises them: the first one's file, line, column, value.
    Every engine's errors name ``--on-bad-lines drop``, not ``on_bad_lines='drop'``."""
    try:
        try:
            yield
        except InputError as exc:
            if engine == "dask" and isinstance(exc, InvalidFixes):
                locate_invalid(input_path, columns, sep, exc.summary, encoding)
            raise
    except InputError as exc:  # the command line names its options, not Python's
        raise respelled(exc, API_DROP, CLI_DROP) from None


def _check_roles(user: str, time_col: str, lat: str, lon: str) -> None:
    """--user, --time, --lat and --lon name four different columns."""
    roles = {"--user": user, "--time": time_col, "--lat": lat, "--lon": lon}
    seen: dict[str, str] = {}
    for option, column in roles.items():
        if column in seen:
            raise InputError(
                f"{seen[column]} and {option} name the same column; each names its own",
                column=column,
            )
        seen[column] = option


def _check_linkage_options(
    linkage: str, engine: str, aggregate: bool, levels: int | None, max_suppression: float | None
) -> float:
    """The options that depend on --linkage (and --levels); the --max-suppression to use."""
    if max_suppression is None:
        max_suppression = DEFAULT_MAX_SUPPRESSION
    elif linkage != "trajectory":
        raise InputError(
            "--max-suppression applies to --linkage trajectory only", value="--max-suppression"
        )
    check_float(max_suppression, "--max-suppression", min_value=0.0, max_value=1.0)
    if engine == "dask" and linkage == "trajectory":
        raise InputError(
            "--linkage trajectory runs in memory only; use --engine pandas",
            value="--engine",
        )
    if aggregate and linkage == "trajectory":
        raise InputError(
            "--aggregate does not apply to --linkage trajectory (its rows carry no fix counts)",
            value="--aggregate",
        )
    if levels is not None:
        check_int(levels, "--levels", min_value=0)
    return float(max_suppression)


def _anonymize_command(name: str, hidden: bool) -> click.Command:
    """``anonymize`` (and its former name ``cloak``, hidden): one command, two names."""

    @click.command(name, hidden=hidden)
    @click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
    @click.option(
        "-k",
        "k",
        type=int,
        required=True,
        help="Distinct users every published region holds in each time window.",
    )
    @click.option(
        "--window",
        default="15min",
        show_default=True,
        help="Time window, e.g. 15min, 1h, 1D (aligned on the Unix epoch, UTC).",
    )
    @click.option(
        "--method",
        type=click.Choice(["fixed", "adaptive"]),
        default="fixed",
        show_default=True,
        help="fixed: squares of a grid pyramid; adaptive: quadtree cells and "
        "Casper half-cells (smaller regions where users are dense).",
    )
    @click.option(
        "--geojson",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Also write the regions with their user counts as FILE.geojson.",
    )
    @_log_options
    @click.option(
        "--cell-size",
        type=float,
        default=DEFAULT_CELL_SIZE,
        show_default=True,
        help="Side of the finest cell in metres (equal-area projection).",
    )
    @click.option(
        "--levels",
        type=int,
        default=None,
        help="Maximum pyramid merges above the finest cell (default: all).",
    )
    @click.option(
        "--aggregate",
        is_flag=True,
        help="One row per (user, window, region) with its fix count n_fixes, instead "
        "of one row per fix (per-fix rows reveal each user's fix count per "
        "window).",
    )
    @click.option(
        "--linkage",
        type=click.Choice(["window", "pseudonym", "trajectory"]),
        default="window",
        show_default=True,
        help="window: a fresh pseudonym per user and window, so windows cannot be "
        "joined into trajectories; pseudonym: one pseudonym per user for every "
        "window (trajectories stay linkable; a warning says so); trajectory: users "
        "clustered in groups of >= k sharing one generalized trajectory (columns "
        "user, start, end, region_id, region; in memory only).",
    )
    @click.option(
        "--max-suppression",
        type=float,
        default=None,
        show_default=str(DEFAULT_MAX_SUPPRESSION),
        help="With --linkage trajectory: largest share of users left out as too far "
        "from any cluster.",
    )
    @engine_options(
        "pandas: in memory; dask: out of core on a Dask cluster (INPUT may then be "
        "a Parquet folder or a glob; Parquet output is a folder of GeoParquet parts)."
    )
    @release_options
    @handle_errors
    def command(
        input_path,
        k,
        window,
        method,
        geojson,
        user,
        time_col,
        lat,
        lon,
        sep,
        encoding,
        on_bad_lines,
        drop_invalid,
        cell_size,
        levels,
        aggregate,
        linkage,
        engine,
        workers,
        memory_limit,
        scheduler,
        max_suppression,
        output,
        report,
        seed,
        key_file,
        no_measures,
        quiet,
    ) -> None:
        """Cloak INPUT so every published region holds >= k users per time window."""
        show_progress(quiet)
        on_bad_lines = _on_bad_lines(on_bad_lines, drop_invalid)
        check_engine_options(engine, workers, memory_limit, scheduler)
        _check_log_options(input_path, window, cell_size, engine)
        if key_file is not None:
            check_input_path(key_file, "--key-file", stream_ok=True)
        check_int(k, "-k", min_value=1)
        check_int(seed, "--seed", min_value=0)
        max_suppression = _check_linkage_options(
            linkage, engine, aggregate, levels, max_suppression
        )
        _check_roles(user, time_col, lat, lon)
        check_output_paths(
            {"--output": output, "--geojson": geojson, "--report": report},
            inputs=[input_path, key_file],
            extensions=OUTPUT_EXTENSIONS,
        )
        if engine == "dask" and is_parquet_path(output) and output.exists():
            raise InputError(
                "--output exists; the Dask engine writes Parquet as a folder and never "
                "overwrites (remove it or choose another)",
                path=str(output),
            )
        key = release_key(key_file)
        steps = Timings()
        cluster = contextlib.ExitStack()  # the Dask cluster lives until the command ends
        click.get_current_context().call_on_close(cluster.close)
        cluster.enter_context(engine_context(engine, workers, memory_limit, scheduler))
        columns = [user, time_col, lat, lon]
        with steps("read"):
            if engine == "dask":
                df = read_fixes_dask(input_path, columns=columns, sep=sep, encoding=encoding)
            else:
                df = read_fixes(input_path, columns=columns, sep=sep, encoding=encoding)
        with warnings.catch_warnings(), _located(engine, input_path, columns, sep, encoding):
            warnings.simplefilter("ignore", UserWarning)  # the CLI prints them itself
            release = cloak(
                df,
                k,
                window=window,
                method=method,
                user=user,
                time=time_col,
                lat=lat,
                lon=lon,
                seed=seed,
                cell_size=cell_size,
                levels=levels,
                on_bad_lines=on_bad_lines,
                aggregate=aggregate,
                linkage=linkage,
                max_suppression=max_suppression,
                key=key,
                measures=not no_measures,
                source=str(input_path),
            )
        _tell_dropped(
            int(release.info.get("invalid_fixes_dropped", 0)),
            release.info.get("invalid_reasons"),
            df,
            input_path,
            columns,
            sep,
            encoding,
        )
        for warning in release.info.get("warnings", []):
            click.echo(f"warning: {warning}", err=True)
        with steps("write"), staged_outputs() as stage:
            if geojson:
                write_geojson(release.data, stage(geojson))
            write_cloaked(release.data, stage(output))
            emit_release(
                release,
                report,
                figures=lambda: report_figures(release),
                quiet=quiet,
                inputs=[input_path],
                stage=stage,
            )

    command.help = "Cloak INPUT so every published region holds >= k users per time window."
    if hidden:
        command.help = "Former name of 'anonymize' (kept for one release)."
    return command


cli.add_command(_anonymize_command("anonymize", hidden=False))
cli.add_command(_anonymize_command("cloak", hidden=True))


@cli.command("assess")
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--window",
    default="15min",
    show_default=True,
    help="Time window of the points an attacker knows, e.g. 15min, 1h.",
)
@click.option(
    "--cell-size",
    type=float,
    default=DEFAULT_CELL_SIZE,
    show_default=True,
    help="Side of a place in metres (the finest cell of the cloaking grid).",
)
@_log_options
@assess_options
@handle_errors
def assess_command(
    input_path,
    window,
    cell_size,
    user,
    time_col,
    lat,
    lon,
    sep,
    encoding,
    on_bad_lines,
    drop_invalid,
    report,
    as_json,
    seed,
    quiet,
) -> None:
    """Risk of INPUT before any cloaking: unicity for p = 1, 2, 4 known points and the share
    of users with a unique home place."""
    show_progress(quiet)
    on_bad_lines = _on_bad_lines(on_bad_lines, drop_invalid)
    _check_log_options(input_path, window, cell_size)
    _check_roles(user, time_col, lat, lon)
    check_int(seed, "--seed", min_value=0)
    check_output_paths(
        {"--report": report}, inputs=[input_path], extensions={"--report": (".json",)}
    )
    steps = Timings()
    columns = [user, time_col, lat, lon]
    with steps("read"):
        df = read_fixes(input_path, columns=columns, sep=sep, encoding=encoding)
    with steps("risk"), _located("pandas", input_path, columns, sep, encoding):
        risk = log_risk(
            df,
            window,
            cell_size,
            user,
            time_col,
            lat,
            lon,
            on_bad_lines=on_bad_lines,
            seed=seed,
            source=str(input_path),
        )
    _tell_dropped(
        int(risk.get("invalid_fixes_dropped", 0)), None, df, input_path, columns, sep, encoding
    )
    notes = []
    if risk["unicity_p4"] >= 0.5:
        notes.append(
            f"{risk['unicity_p4']:.0%} of users are unique from 4 known points: "
            "cloak before publishing"
        )
    emit_assessment(assessment("location", input_path, risk, notes), report, as_json, quiet)


def demo(output_dir: Path, seed: int = 0) -> Release:
    """Cloak the bundled GeoLife sample (k=2, daily windows, adaptive grid).

    Also cloaks a seeded synthetic log of 400 users (k=5, 15 min, adaptive) next to it.
    Writes ``location_geolife_cloaked.csv``, ``location_geolife_regions.geojson``,
    ``location_geolife_report.json`` and ``location_geolife_report.html`` (with the region
    map, area distribution and unicity figures), and the same four for
    ``location_synthetic_*``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    sample = read_fixes(
        DATA / "geolife_11users_sample.csv.gz", columns=["uid", "datetime", "lat", "lng"]
    )
    release = cloak(
        sample,
        k=2,
        window="1D",
        method="adaptive",
        user="uid",
        time="datetime",
        lat="lat",
        lon="lng",
        seed=seed,
    )
    synthetic = cloak(
        synthetic_log(40_000, 400, seed=seed), k=5, window="15min", method="adaptive", seed=seed
    )
    for name, rel in (("geolife", release), ("synthetic", synthetic)):
        with staged_outputs() as stage:
            write_cloaked(rel.data, stage(output_dir / f"location_{name}_cloaked.csv"))
            write_geojson(rel.data, stage(output_dir / f"location_{name}_regions.geojson"))
            write_report(rel, stage(output_dir / f"location_{name}_report.json"))
            write_report(
                rel, stage(output_dir / f"location_{name}_report.html"), report_figures(rel)
            )
    return release
