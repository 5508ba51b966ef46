"""Command line: ``structanon querylogs anonymize | assess | synthesize``, and the demo.

``anonymize`` and ``assess`` follow the grammar every data type shares
(``structanon <type> anonymize INPUT -o OUTPUT ...``, ``structanon <type> assess INPUT``);
``inspect`` (the former name of ``assess``) and ``--no-assess`` stay as hidden aliases.
"""

from __future__ import annotations

import contextlib
import copy
import re
import shutil
import tempfile
import warnings
from functools import partial
from pathlib import Path
from typing import Any

import click
import pandas as pd

from structanon import Release
from structanon._finish import Timings, k_warning
from structanon._validation import (
    check_choice,
    check_input_path,
    check_int,
    check_output_paths,
    file_suffix,
)
from structanon.cli_support import (
    assess_options,
    assessment,
    check_engine_options,
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
from structanon.errors import InputError
from structanon.io import is_parquet_path, release_key, staged_outputs
from structanon.report import provenance, write_report

from ._anonymize import GRANULARITIES, GROUPINGS, anonymize
from ._figures import release_figures
from .io import FORMER_BAD_LINES, LOG_EXTENSIONS, parse_report, read_log, read_log_dask, write_log
from .risk import query_set_uniqueness, random_query_uniqueness
from .synthetic import synthetic_log

__all__ = ["cli", "demo", "detect_format"]

_OUTPUT_SUFFIXES = LOG_EXTENSIONS
_REPORT_SUFFIXES = (".json", ".html", ".htm")
_KNOWN_QUERIES = (1, 3, 5)
MAX_SYNTHETIC_LINES = 10**9  # a larger log would not fit in memory anyway


def detect_format(path: str | Path, fmt: str | None = None) -> str:
    """``fmt`` if given, else the format told by the extension: ``.parquet``/``.pq`` -> parquet,
    ``.csv`` -> csv (``.gz`` looked through), anything else -> aol.

    Examples
    --------
    >>> detect_format("log.csv.gz"), detect_format("log.parquet"), detect_format("x.txt")
    ('csv', 'parquet', 'aol')
    >>> detect_format("x.txt", "csv")
    'csv'
    """
    if fmt is not None:
        return check_choice(fmt, "--format", ("aol", "csv", "parquet"))
    if is_parquet_path(path):
        return "parquet"
    return "csv" if file_suffix(path) == ".csv" else "aol"


def _columns(spec: str | None) -> dict[str, str] | None:
    if not spec:
        return None
    mapping: dict[str, str] = {}
    for item in spec.split(","):
        if "=" not in item:
            raise InputError(
                "--columns expects ours=theirs pairs, e.g. user=uid,query=q", value=item
            )
        ours, theirs = (part.strip() for part in item.split("=", 1))
        if ours in mapping:
            raise InputError(f"--columns names {ours!r} twice; give each once", value=item)
        if theirs in mapping.values():
            other = next(k for k, v in mapping.items() if v == theirs)
            raise InputError(
                f"--columns reads column {theirs!r} as both {other!r} and {ours!r}", value=item
            )
        mapping[ours] = theirs
    return mapping


def _check_format_options(fmt: str, columns: dict[str, str] | None, sep: str | None) -> None:
    if fmt == "aol" and columns:
        raise InputError(
            "--columns applies to --format csv or parquet; the aol format has "
            "fixed columns (add --format csv)"
        )
    if sep is not None and fmt != "csv":
        raise InputError(f"--sep applies to --format csv, not {fmt}")
    if sep is not None and len(sep) != 1 and sep != "\\t":
        raise InputError(f"--sep must be one character, got {sep!r}")


def _input_options(func: Any, lazy: bool = False) -> Any:
    """INPUT and the options that say how to read it (shared by anonymize and assess);
    ``lazy``: INPUT may also be a folder or a glob pattern (read by the Dask engine)."""
    options = [
        click.argument(
            "input_path",
            metavar="INPUT",
            type=(
                click.Path(path_type=Path)
                if lazy
                else click.Path(exists=True, dir_okay=False, path_type=Path)
            ),
        ),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(["aol", "csv", "parquet"]),
            default=None,
            help="Input format (default: from the extension: .parquet or .pq, .csv, else "
            "the AOL tab-separated layout).",
        ),
        click.option(
            "--columns",
            default=None,
            help="csv/parquet column mapping, e.g. user=uid,query=q,time=ts,url=u",
        ),
        click.option(
            "--sep",
            default=None,
            callback=separator,
            help="Field separator for csv input (\\t or tab: a tab).",
        ),
        encoding_option(),
        # the former values: report (drop and print) and skip (drop silently), both drop now
        on_bad_lines_option(former=FORMER_BAD_LINES),
    ]
    return stack(*options)(func)


def _read(
    input_path: Path,
    fmt: str,
    mapping: dict[str, str] | None,
    sep: str | None,
    on_bad_lines: str,
    encoding: str = "utf-8",
    lazy: bool = False,
    spool: str | None = None,
) -> tuple[Any, dict[str, Any]]:
    """The log and its parse report; lines dropped by ``--on-bad-lines drop`` told on
    stderr once (even with --quiet).  ``lazy``: a Dask DataFrame read by
    :func:`querylogs.read_log_dask` (same rules), its parsed partitions kept in the folder
    ``spool`` if given."""
    with Timings()("read"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported below, once, in plain words
        if lazy:
            log, parsed = read_log_dask(
                input_path,
                fmt,
                columns=mapping,
                sep="\t" if sep == "\\t" else sep,
                encoding=encoding,
                on_bad_lines=on_bad_lines,
                spool=spool,
            )
        else:
            log = read_log(
                input_path,
                fmt,
                columns=mapping,
                sep="\t" if sep == "\\t" else sep,
                encoding=encoding,
                on_bad_lines=on_bad_lines,
            )
            parsed = parse_report(log)
    dropped_lines_notice(
        int(parsed.get("malformed", 0)),
        [n for n, _ in parsed.get("malformed_lines", [])],
        input_path,
        unit="row" if parsed.get("format") == "parquet" else "line",
    )
    return log, parsed


@click.group(name="querylogs", context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Clustering-based anonymization of web search logs (AOL format, CSV, Parquet)."""


@cli.command(
    name="anonymize", short_help="Anonymize a search log (user k-anonymity by query multisets)."
)
@partial(_input_options, lazy=True)
@click.option("-k", type=int, required=True, help="Minimum users sharing each published log.")
@release_options
@click.option(
    "--time-granularity",
    type=click.Choice(list(GRANULARITIES)),
    default="day",
    show_default=True,
    help="Published query times are floored to this period.",
)
@click.option(
    "--keep-identifiers",
    is_flag=True,
    help="Do not suppress queries with phone numbers, e-mails, SSNs, addresses.",
)
@click.option(
    "--tie-break",
    type=click.Choice(["suppress", "add"]),
    default="suppress",
    show_default=True,
    help="Even cluster sizes: publish the lower (suppress) or upper (add) median.",
)
@click.option(
    "--grouping",
    type=click.Choice(list(GROUPINGS)),
    default="greedy",
    show_default=True,
    help="How users are grouped: greedy by shared queries (or intents), or MDAV.",
)
@click.option(
    "--refine",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Passes of local moves/swaps of users that lower additions + suppressions.",
)
@click.option(
    "--block-size",
    type=int,
    default=None,
    help="Group users block by block, in blocks of at most this many users with similar "
    "queries (default: no blocks up to 20,000 users, blocks of 5,000 beyond).",
)
@click.option("--no-assess", is_flag=True, hidden=True, help="Former name of --no-measures.")
@engine_options()
@handle_errors
def anonymize_cmd(
    input_path,
    fmt,
    columns,
    sep,
    encoding,
    on_bad_lines,
    k,
    output,
    report,
    seed,
    key_file,
    no_measures,
    quiet,
    time_granularity,
    keep_identifiers,
    tie_break,
    grouping,
    refine,
    block_size,
    no_assess,
    engine,
    workers,
    memory_limit,
    scheduler,
):
    """Anonymize INPUT into OUTPUT so each user is indistinguishable from k-1 others.

    Every option and path is checked before INPUT is read; the log and the report are
    written all-or-nothing.  With --engine dask, INPUT may also be a folder or a quoted
    glob pattern ('logs/*.txt.gz'), read lazily with the same parsing rules, and a
    .parquet (.pq) OUTPUT is a folder of parts.
    """
    show_progress(quiet)
    # every option and output path is checked before the input is read
    check_int(k, "-k", min_value=1)
    check_int(seed, "--seed", min_value=0)
    check_engine_options(engine, workers, memory_limit, scheduler)
    if engine != "dask":  # the Dask reader checks folders and globs itself
        check_input_path(input_path, "INPUT")
    if block_size is not None:
        check_int(block_size, "--block-size", min_value=max(2 * k, 2))
    fmt = detect_format(input_path, fmt)
    mapping = _columns(columns)
    _check_format_options(fmt, mapping, sep)
    check_output_paths(
        {"--output": output, "--report": report},
        inputs=[input_path, key_file],
        extensions={"--output": _OUTPUT_SUFFIXES, "--report": _REPORT_SUFFIXES},
    )
    try:
        key = release_key(key_file)
    except InputError as exc:
        raise InputError(f"--key-file: {exc.message}", path=exc.path or key_file) from None
    if engine == "dask" and is_parquet_path(output) and output.exists():
        raise InputError(
            "the Parquet output of --engine dask is a folder of parts; this path exists "
            "(remove it or choose another)",
            path=str(output),
        )
    if k_warning(k):  # warnings are printed even with --quiet
        click.echo(f"warning: {k_warning(k)}", err=True)
    spool = None
    if engine == "dask":
        if scheduler is None:  # a local cluster: the input is parsed once, kept as Parquet
            spool = _spool_folder()
        _start_cluster(engine, workers, memory_limit, scheduler)
    log, parsed = _read(
        input_path,
        fmt,
        mapping,
        sep,
        on_bad_lines,
        encoding,
        lazy=engine == "dask",
        spool=spool,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the release's warnings, printed below
        release = anonymize(
            log,
            k,
            time_granularity=time_granularity,
            seed=seed,
            key=key,
            suppress_identifiers=not keep_identifiers,
            tie_break=tie_break,
            grouping=grouping,
            refine=refine,
            block_size=block_size,
            measures=not (no_measures or no_assess),
        )
    # counts only: the input's line numbers and file names are not the published
    # artefact's business (they are told on stderr)
    release.info["input"] = {
        name: value for name, value in parsed.items() if not name.endswith(("_lines", "_files"))
    }
    release.info["bad_lines_dropped"] = int(parsed.get("malformed", 0))
    for message in release.info["warnings"]:
        if message != k_warning(k):
            click.echo(f"warning: {message}", err=True)
    release.provenance = provenance([input_path])
    _write(release, output, report, log)
    emit_release(release, quiet=quiet, inputs=[input_path])
    if not quiet:
        if report is not None:
            click.echo(f"report written to {report}")
        click.echo(f"published log written to {output}")


def _spool_folder() -> str:
    """A private temporary folder (mode 0700) for the parsed input, removed when the
    command ends (after the cluster closes)."""
    folder = tempfile.mkdtemp(prefix="structanon-querylogs-")
    click.get_current_context().call_on_close(partial(shutil.rmtree, folder, True))
    return folder


def _start_cluster(
    engine: str, workers: int | None, memory_limit: str | None, scheduler: str | None
) -> None:
    """Start the Dask cluster of ``--engine dask``; it lives until the command ends."""
    cluster = contextlib.ExitStack()
    click.get_current_context().call_on_close(cluster.close)
    cluster.enter_context(engine_context(engine, workers, memory_limit, scheduler))


def _write(release: Release, output: Path, report: Path | None, log: Any = None) -> None:
    """The published log and the report (before/after views drawn from ``log``), all or
    nothing."""
    with Timings()("write"), staged_outputs() as stage:
        if report is not None:
            html = file_suffix(report) in (".html", ".htm")
            figures = release_figures(release, log) if html else ()
            write_report(release, stage(report), figures)
        write_log(release.data, stage(output))


@cli.command(name="assess", short_help="Re-identification risk of a raw log, before anonymizing.")
@_input_options
@click.option(
    "--known-queries",
    "known_queries",
    type=click.IntRange(min=1),
    multiple=True,
    help="Queries an attacker knows of a user, for the uniqueness measure "
    "(repeatable; default: 1, 3 and 5).",
)
@click.option(
    "-p",
    "known_queries_short",
    type=click.IntRange(min=1),
    multiple=True,
    hidden=True,
    help="Former name of --known-queries.",
)
@assess_options
@handle_errors
def assess_cmd(
    input_path,
    fmt,
    columns,
    sep,
    encoding,
    on_bad_lines,
    known_queries,
    known_queries_short,
    report,
    as_json,
    seed,
    quiet,
):
    """Assess how many users of the raw log INPUT their queries single out.

    Prints a table (``--json``: the JSON document every data type shares) and writes it as
    JSON to ``--report``.
    """
    show_progress(quiet)
    check_int(seed, "--seed", min_value=0)
    fmt = detect_format(input_path, fmt)
    mapping = _columns(columns)
    _check_format_options(fmt, mapping, sep)
    check_output_paths(
        {"--report": report}, inputs=[input_path], extensions={"--report": (".json",)}
    )
    ps = tuple(known_queries) + tuple(known_queries_short) or _KNOWN_QUERIES
    log, parsed = _read(input_path, fmt, mapping, sep, on_bad_lines, encoding)
    with Timings()("assess"):
        risk = assess_log(log, ps, seed)
    doc = assessment("querylogs", input_path, risk, _assessment_warnings(parsed, risk))
    emit_assessment(doc, report, as_json=as_json, quiet=quiet)


inspect_cmd = copy.copy(assess_cmd)
inspect_cmd.hidden = True
inspect_cmd.short_help = "Former name of assess."
cli.add_command(inspect_cmd, "inspect")


def assess_log(
    log: pd.DataFrame, known_queries: tuple[int, ...] = _KNOWN_QUERIES, seed: int | None = 0
) -> dict[str, Any]:
    """Size of a raw log and the share of its users singled out by their queries.

    Examples
    --------
    >>> log = synthetic_log(20, 400, seed=0)
    >>> risk = assess_log(log, (1,))
    >>> risk["users"], [name for name in risk if name.startswith("unique")]
    (20, ['unique_by_query_set', 'unique_by_1_queries'])
    """
    parsed = parse_report(log)
    risk: dict[str, Any] = {
        "lines": int(parsed.get("lines", len(log))),
        "rows": int(parsed.get("rows", len(log))),
        "malformed_lines": int(parsed.get("malformed", 0)),
        "users": int(log["user"].nunique()),
        "distinct_queries": int(log["query"].nunique()),
        "rows_with_click": int(log["url"].notna().sum()),
        "unique_by_query_set": query_set_uniqueness(log),
    }
    for p in known_queries:
        risk[f"unique_by_{p}_queries"] = random_query_uniqueness(log, p, seed)
    return risk


def _assessment_warnings(parsed: dict[str, Any], risk: dict[str, Any]) -> list[str]:
    """The malformed lines dropped, and a high uniqueness (half the users or more, the
    threshold location's assess uses) as a ``warning:`` line.

    Examples
    --------
    >>> _assessment_warnings({}, {"unique_by_query_set": 0.89, "unique_by_1_queries": 0.6,
    ...                           "unique_by_2_queries": 0.9})
    ['89% of users are unique by their query set: anonymize before publishing', '60% of users are unique from 1 known query: anonymize before publishing']
    >>> _assessment_warnings({}, {"unique_by_query_set": 0.2})
    []
    """
    found = []
    if parsed.get("malformed"):
        shown = ", ".join(f"{n} ({why})" for n, why in parsed["malformed_lines"][:10])
        found.append(f"{parsed['malformed']:,} malformed line(s) dropped (first: {shown})")
    advice = "anonymize before publishing"
    if risk.get("unique_by_query_set", 0.0) >= 0.5:
        found.append(
            f"{risk['unique_by_query_set']:.0%} of users are unique by their query set: {advice}"
        )
    known = sorted(
        int(name.split("_")[2]) for name in risk if re.fullmatch(r"unique_by_\d+_queries", name)
    )
    if known and risk[f"unique_by_{known[0]}_queries"] >= 0.5:  # the fewest known queries
        p = known[0]
        found.append(
            f"{risk[f'unique_by_{p}_queries']:.0%} of users are unique from {p} known "
            f"{'query' if p == 1 else 'queries'}: {advice}"
        )
    return found


@cli.command(short_help="Write a seeded synthetic AOL-format log.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the log (.tsv, .tab, .txt, .csv, .parquet, .pq; .gz compresses text).",
)
@click.option("--users", type=int, default=1000, show_default=True, help="Number of users.")
@click.option(
    "--lines",
    type=int,
    default=100_000,
    show_default=True,
    help="Number of log lines (one per click, one per click-less query).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the generator (same seed, same log).",
)
@click.option("--quiet", is_flag=True, help="Print nothing but errors.")
@handle_errors
def synthesize(output, users, lines, seed, quiet):
    """Write a synthetic log (Zipf queries over topics, with clicks) in the AOL format."""
    show_progress(quiet)
    check_int(users, "--users", min_value=1, max_value=MAX_SYNTHETIC_LINES)
    check_int(lines, "--lines", min_value=1, max_value=MAX_SYNTHETIC_LINES)
    if lines < users:  # every user issues at least one line
        raise InputError(f"--lines must be at least --users ({users:,}), got {lines:,}")
    check_int(seed, "--seed", min_value=0)
    check_output_paths({"--output": output}, extensions={"--output": _OUTPUT_SUFFIXES})
    log = synthetic_log(users, lines, seed=seed)
    write_log(log, output, aol=True)
    if not quiet:
        click.echo(f"{len(log):,} lines for {users:,} users written to {output}")


def demo(output_dir: Path, seed: int = 0) -> Release:
    """Anonymize a synthetic 300-user log generated on the fly (k=5); write the published
    log, a JSON report and an HTML report (with the figures of
    :func:`querylogs._figures.release_figures`) into ``output_dir``."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    log = synthetic_log(300, 30_000, seed=seed)
    release = anonymize(log, 5, seed=seed)
    release.provenance = provenance()
    with staged_outputs() as stage:
        write_log(release.data, stage(output_dir / "log_anon.tsv"))
        write_report(release, stage(output_dir / "report.json"))
        write_report(release, stage(output_dir / "report.html"), release_figures(release, log))
    return release
