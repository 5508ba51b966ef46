"""Command line: ``structanon querylogs anonymize | inspect | synthesize``, and the demo."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import click
import numpy as np

from structanon import Release
from structanon._validation import check_int, check_output_paths
from structanon.cli_support import emit_release, handle_errors
from structanon.errors import InputError
from structanon.io import release_key, staged_outputs
from structanon.report import format_summary, write_report

from ._anonymize import GRANULARITIES, GROUPINGS, anonymize
from .io import parse_report, read_log, write_log
from .risk import query_set_uniqueness, random_query_uniqueness
from .synthetic import synthetic_log

__all__ = ["cli", "demo", "figures_for"]


def figures_for(release: Release) -> list[tuple[str, Any]]:
    """Cluster sizes, query events kept / added / suppressed over the whole release, and
    uniqueness before / after.  Nothing per cluster: a cluster's additions and
    suppressions with its published size would give its members' original query total."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    info = release.info
    figs = []
    fig, ax = plt.subplots(figsize=(5, 3))
    sizes = sorted(info["cluster_size_counts"].items())
    ax.bar([str(size) for size, _ in sizes], [count for _, count in sizes])
    ax.set_xlabel("users per cluster")
    ax.set_ylabel("clusters")
    figs.append(("Cluster sizes", fig))
    fig, ax = plt.subplots(figsize=(5, 3))
    kept = info["queries_published"] - info["queries_added"]
    parts = {"kept": kept, "added": info["queries_added"],
             "suppressed (identifiers)": info["queries_suppressed_identifier"],
             "suppressed (clustering)": info["queries_suppressed_clustering"]}
    bars = ax.bar(list(parts), list(parts.values()))
    ax.bar_label(bars, fmt="%d", fontsize=7)
    ax.set_ylabel("query events (all users)")
    ax.tick_params(axis="x", labelsize=7)
    figs.append(("Query events kept, added and suppressed (whole release)", fig))
    if release.risk:
        before, after = release.risk["before"], release.risk["after"]
        keys = [key for key in before if key.startswith("unique_by")]
        fig, ax = plt.subplots(figsize=(6, 3))
        x = np.arange(len(keys))
        for shift, label, values in ((-0.2, "before", before), (0.2, "after", after)):
            bars = ax.bar(x + shift, [values[key] for key in keys], width=0.4, label=label)
            ax.bar_label(bars, fmt="%.2f", fontsize=7)
        ax.set_xticks(x, [key.replace("unique_by_", "").replace("_", " ") for key in keys])
        ax.set_ylim(0, 1.1)
        ax.set_ylabel("share of users unique")
        ax.legend()
        figs.append(("Users unique by their queries, before and after", fig))
    return figs


def _columns(spec: str | None) -> dict[str, str] | None:
    if not spec:
        return None
    mapping = {}
    for item in spec.split(","):
        if "=" not in item:
            raise InputError("--columns expects ours=theirs pairs, e.g. user=uid,query=q",
                             value=item)
        ours, theirs = item.split("=", 1)
        mapping[ours.strip()] = theirs.strip()
    return mapping


@click.group(name="querylogs", context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Clustering-based anonymization of web search logs (AOL format, CSV, Parquet)."""


_format_option = click.option("--format", "fmt", type=click.Choice(["aol", "csv", "parquet"]),
                              default="aol", show_default=True, help="Input format.")
_columns_option = click.option("--columns", default=None,
                               help="csv/parquet column mapping, e.g. user=uid,query=q,time=ts,url=u")


_SEED_HELP = ("Public seed of the algorithm's own choices and the measures; it never decides "
              "the published order, labels or ids.")
_KEY_HELP = ("Secret key file: pseudonyms and publication order become reproducible for whoever "
             "holds it (default: $STRUCTANON_PSEUDONYM_KEY, else a fresh random key)")
_OUTPUT_SUFFIXES = (".tsv", ".txt", ".csv", ".parquet")
_REPORT_SUFFIXES = (".json", ".html", ".htm")


def _check_format_options(fmt: str, columns: dict[str, str] | None, sep: str | None) -> None:
    if fmt == "aol" and columns:
        raise InputError("--columns applies to --format csv or parquet; the aol format has "
                         "fixed columns (add --format csv)")
    if sep is not None and fmt != "csv":
        raise InputError(f"--sep applies to --format csv, not {fmt}")
    if sep is not None and len(sep) != 1 and sep != "\\t":
        raise InputError(f"--sep must be one character, got {sep!r}")


@cli.command(short_help="Anonymize a search log (user k-anonymity by query multisets).")
@click.argument("input_path", metavar="INPUT",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-k", type=int, required=True, help="Minimum users sharing each published log.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Published log (.tsv, .txt, .csv, .parquet; add .gz to compress text).")
@_format_option
@_columns_option
@click.option("--sep", default=None, help="Field separator for csv input.")
@click.option("--time-granularity", type=click.Choice(list(GRANULARITIES)), default="day",
              show_default=True, help="Published query times are floored to this period.")
@click.option("--seed", type=int, default=0, show_default=True, help=_SEED_HELP)
@click.option("--key-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help=_KEY_HELP)
@click.option("--keep-identifiers", is_flag=True,
              help="Do not suppress queries with phone numbers, e-mails, SSNs, addresses.")
@click.option("--tie-break", type=click.Choice(["suppress", "add"]), default="suppress",
              show_default=True,
              help="Even cluster sizes: publish the lower (suppress) or upper (add) median.")
@click.option("--on-bad-lines", type=click.Choice(["report", "skip", "raise"]), default="report",
              show_default=True,
              help="Malformed input lines: drop and report, drop silently, or stop.")
@click.option("--grouping", type=click.Choice(list(GROUPINGS)), default="greedy",
              show_default=True,
              help="How users are grouped: greedy by shared queries (or intents), or MDAV.")
@click.option("--refine", type=click.IntRange(min=0), default=0, show_default=True,
              help="Passes of local moves/swaps of users that lower additions + suppressions.")
@click.option("--no-measures", is_flag=True, help="Skip the utility and risk measures.")
@click.option("--no-assess", is_flag=True, hidden=True, help="Former name of --no-measures.")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a JSON (.json) or HTML (.html) report.")
@handle_errors
def anonymize_cmd(input_path, k, output, fmt, columns, sep, time_granularity, seed, key_file,
                  keep_identifiers, tie_break, on_bad_lines, grouping, refine, no_measures,
                  no_assess, report):
    """Anonymize INPUT into OUTPUT so each user is indistinguishable from k-1 others."""
    # every option and output path is checked before the input is read
    check_int(k, "-k", min_value=1)
    check_int(seed, "--seed", min_value=0)
    mapping = _columns(columns)
    _check_format_options(fmt, mapping, sep)
    check_output_paths({"--output": output, "--report": report},
                       inputs=[input_path, key_file],
                       extensions={"--output": _OUTPUT_SUFFIXES, "--report": _REPORT_SUFFIXES})
    key = release_key(key_file)
    if k == 1:
        click.echo("warning: k=1 gives no protection; every user's queries are published "
                   "as they are", err=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported below, once, in plain words
        log = read_log(input_path, fmt, columns=mapping, sep="\t" if sep == "\\t" else sep,
                       on_bad_lines=on_bad_lines)
        parsed = parse_report(log)
        if parsed.get("malformed") or parsed.get("encoding_errors"):
            shown = ", ".join(str(n) for n, _ in parsed.get("malformed_lines", [])[:5])
            click.echo(f"input: {parsed['malformed']:,} malformed line(s) skipped"
                       f"{f' (lines {shown}...)' if shown else ''}, "
                       f"{parsed['encoding_errors']:,} line(s) with undecodable bytes replaced",
                       err=True)
        release = anonymize(log, k, time_granularity=time_granularity, seed=seed, key=key,
                            suppress_identifiers=not keep_identifiers, tie_break=tie_break,
                            grouping=grouping, refine=refine,
                            measures=not (no_measures or no_assess), show_progress=True)
    # counts only: the input's line numbers are not the published artefact's business
    release.info["input"] = {name: value for name, value in parsed.items()
                             if not name.endswith("_lines")}
    for message in release.info["warnings"]:
        if not message.startswith("k=1"):
            click.echo(f"warning: {message}", err=True)
    click.echo(format_summary(release))
    with staged_outputs() as stage:
        if report is not None:
            figures = figures_for(release) if report.suffix.lower() in (".html", ".htm") else ()
            write_report(release, stage(report), figures)
        write_log(release.data, stage(output))
    if report is not None:
        click.echo(f"report written to {report}")
    click.echo(f"published log written to {output}")


anonymize_cmd.name = "anonymize"


@cli.command(short_help="Parse a log and report its size and uniqueness.")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_format_option
@_columns_option
@click.option("-p", "ps", type=int, multiple=True, default=(1, 3, 5), show_default=True,
              help="Known queries for the uniqueness measure (repeatable).")
@click.option("--seed", type=int, default=0, show_default=True)
@handle_errors
def inspect(input_path, fmt, columns, ps, seed):
    """Print parse statistics and how many users their queries single out."""
    log = read_log(input_path, fmt, columns=_columns(columns), on_bad_lines="skip")
    parsed = parse_report(log)
    click.echo(f"lines {parsed.get('lines', 0):,}, rows {parsed['rows']:,}, "
               f"malformed {parsed['malformed']:,}, encoding errors {parsed['encoding_errors']:,}")
    if parsed["malformed_lines"]:
        shown = ", ".join(f"{n} ({why})" for n, why in parsed["malformed_lines"][:10])
        click.echo(f"first malformed lines: {shown}")
    click.echo(f"users {log['user'].nunique():,}, distinct queries {log['query'].nunique():,}, "
               f"rows with a click {int(log['url'].notna().sum()):,}")
    click.echo(f"unique by whole query set: {query_set_uniqueness(log):.4f}")
    for p in ps:
        click.echo(f"unique by {p} random queries: {random_query_uniqueness(log, p, seed):.4f}")


@cli.command(short_help="Write a seeded synthetic AOL-format log.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--users", type=int, default=1000, show_default=True)
@click.option("--lines", type=int, default=100_000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@handle_errors
def synthesize(output, users, lines, seed):
    """Write a synthetic log (Zipf queries over topics, with clicks) in the AOL format."""
    check_int(users, "--users", min_value=1)
    check_int(lines, "--lines", min_value=1)
    check_output_paths({"--output": output}, extensions={"--output": _OUTPUT_SUFFIXES})
    log = synthetic_log(users, lines, seed=seed)
    write_log(log, output, aol=True)
    click.echo(f"{len(log):,} lines for {users:,} users written to {output}")


def demo(output_dir: Path, seed: int = 0) -> Release:
    """Anonymize a synthetic 300-user log generated on the fly (k=5); write the published
    log, a JSON report and an HTML report into ``output_dir``."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    log = synthetic_log(300, 30_000, seed=seed)
    release = anonymize(log, 5, seed=seed)
    write_log(release.data, output_dir / "log_anon.tsv")
    emit_release(release, output_dir / "report.json", quiet=True)
    emit_release(release, output_dir / "report.html", figures=lambda: figures_for(release),
                 quiet=True)
    return release
