"""Command line of the graphs package: ``structanon graphs anonymize | risk | compare``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import networkx as nx
import numpy as np

from structanon import Release
from structanon._validation import check_input_path, check_output_paths, file_suffix
from structanon.cli_support import handle_errors
from structanon.io import release_key, staged_outputs
from structanon.release import to_jsonable
from structanon.report import format_summary, write_report

from ._construct import CONSTRUCTS
from ._sequence import _METHODS
from .io import _EXTENSIONS, FORMATS, guess_format, read_graph, write_graph
from .kdegree import anonymize_with_mapping
from .metrics import graph_utility
from .risk import structural_risk

__all__ = ["cli", "demo", "release_figures"]

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "ca-GrQc_undirected.txt"


def release_figures(original: nx.Graph, release: Release) -> list[tuple[str, Any]]:
    """Degree distributions before/after (log-log) and edits against the lower bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    fig, ax = plt.subplots(figsize=(6, 4))
    for graph, label, marker in ((original, "original", "o"), (release.data, "anonymized", "x")):
        deg = np.array([d for _, d in graph.degree()], dtype=np.int64)
        values, counts = np.unique(deg[deg > 0], return_counts=True)
        ax.loglog(values, counts, marker, label=label, alpha=0.7, markersize=4)
    ax.set_xlabel("degree")
    ax.set_ylabel("number of nodes")
    ax.axhline(release.parameters["k"], color="grey", linestyle="--", linewidth=1, label="k")
    ax.legend()
    figures.append(("Degree distribution before and after (log-log)", fig))

    info = release.info
    fig, ax = plt.subplots(figsize=(7, 2.6))
    names = ["L1 lower bound (optimum / 2)", "bound for the chosen sequence", "edges added",
             "edges removed"]
    values = [info["lower_bound_edges"], info["sequence_bound_edges"], info["edges_added"],
              info["edges_removed"]]
    ax.barh(names[::-1], values[::-1], color=["#c44", "#2a6", "#bbb", "#999"])
    for y, value in enumerate(values[::-1]):
        ax.text(value, y, f" {value:,}", va="center")
    ax.set_xlabel("edges")
    ax.set_xlim(0, max(values + [1]) * 1.2)
    fig.tight_layout()
    figures.append(("Edits against the lower bound", fig))
    return figures


SEED_HELP = ("Public seed of the algorithm's own choices and the measures; it never decides "
             "the published order, labels or ids.")
KEY_HELP = ("Secret key file: pseudonyms and publication order become reproducible for whoever "
            "holds it (default: $STRUCTANON_PSEUDONYM_KEY, else a fresh random key)")
REPORT_EXTENSIONS = (".json", ".html", ".htm")
OUTPUT_EXTENSIONS = tuple(sorted(_EXTENSIONS))


def _check_options(input: Path, output: Path, in_format: str | None,  # noqa: A002
                   out_format: str | None, report: Path | None, mapping_out: Path | None,
                   key_file: Path | None) -> None:
    """Every option and output path, before the input is read."""
    check_input_path(input, "INPUT")
    guess_format(input, in_format)
    if key_file is not None:
        check_input_path(key_file, "--key-file")
    extensions = {"--report": REPORT_EXTENSIONS}
    if out_format is None:
        extensions["--output"] = OUTPUT_EXTENSIONS
    inputs = [input] + ([key_file] if key_file is not None else [])
    check_output_paths({"--output": output, "--report": report, "--mapping-out": mapping_out},
                       inputs=inputs, extensions=extensions)


def _write_outputs(release: Release, mapping: dict[Any, Any], output: Path,
                   out_format: str | None, report: Path | None, mapping_out: Path | None,
                   figures: Any) -> None:
    """All outputs or none: side files staged first, the main output last."""
    with staged_outputs() as stage:
        if mapping_out is not None:
            with open(stage(mapping_out), "w", encoding="utf-8", newline="") as fh:
                fh.write("original,published\n")
                fh.writelines(f"{u},{v}\n" for u, v in mapping.items())
        if report is not None:
            is_html = file_suffix(report) in (".html", ".htm")
            write_report(release, stage(report), figures() if is_html else ())
        write_graph(release.data, stage(output), format=out_format or guess_format(output))


def _run(graph: nx.Graph, k: int, method: str, construct: str, relabel: bool, seed: int,
         keep: tuple[str, ...], as_undirected: bool, output: Path, out_format: str | None,
         report: Path | None, mapping_out: Path | None, utility: str, quiet: bool = False,
         key: Any = None, measure_risk: bool = True) -> Release:
    release, mapping = anonymize_with_mapping(
        graph, k, method=method, construct=construct, relabel=relabel, seed=seed,
        keep_attributes=keep, as_undirected=as_undirected, utility=utility,
        measure_risk=measure_risk, key=key)
    for warning in release.info.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)
    _write_outputs(release, mapping, output, out_format, report, mapping_out,
                   lambda: release_figures(graph, release))
    if not quiet:
        click.echo(format_summary(release))
        for path in (report, mapping_out):
            if path is not None:
                click.echo(f"written: {path}")
    return release


@click.group(name="graphs", context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """k-degree anonymization of social-network exports (Liu & Terzi 2008)."""


@cli.command()
@click.argument("input", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-k", "k", type=click.IntRange(min=1), required=True,
              help="Least number of nodes per degree.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Anonymized graph (format from the extension or --out-format). Edge lists "
                   "and CSV cannot hold isolated nodes: use .graphml, .gexf or .json then.")
@click.option("--format", "in_format", type=click.Choice(FORMATS), default=None,
              help="Input format (default: from the extension).")
@click.option("--out-format", type=click.Choice(FORMATS), default=None,
              help="Output format (default: from the extension).")
@click.option("--method", type=click.Choice(_METHODS), default="dp", show_default=True,
              help="Degree-sequence anonymization: exact dynamic program or greedy.")
@click.option("--construct", type=click.Choice(CONSTRUCTS), default="supergraph",
              show_default=True, help="Graph construction (supergraph/probing: additions only).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help=SEED_HELP)
@click.option("--key-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=KEY_HELP)
@click.option("--no-relabel", is_flag=True, help="Keep the original node ids (not anonymous!).")
@click.option("--keep-attr", "keep", multiple=True, help="Node attribute to keep (repeatable).")
@click.option("--as-undirected", is_flag=True, help="Accept a directed graph, dropping directions.")
@click.option("--mapping-out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the original -> published node id mapping here (keep it secret).")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Report: .json or .html (with plots).")
@click.option("--utility", type=click.Choice(["auto", "fast", "full", "none"]), default="auto",
              show_default=True, help="Utility measures to compute.")
@click.option("--no-measures", is_flag=True,
              help="Skip the utility and risk measures (the privacy check still runs).")
@handle_errors
def anonymize(input: Path, k: int, output: Path, in_format: str | None,  # noqa: A002
              out_format: str | None, method: str, construct: str, seed: int,
              key_file: Path | None, no_relabel: bool, keep: tuple[str, ...],
              as_undirected: bool, mapping_out: Path | None, report: Path | None, utility: str,
              no_measures: bool) -> None:
    """Make INPUT k-degree anonymous and write it to OUTPUT."""
    _check_options(input, output, in_format, out_format, report, mapping_out, key_file)
    key = release_key(key_file)
    graph = read_graph(input, format=in_format, as_undirected=as_undirected)
    _run(graph, k, method, construct, not no_relabel, seed, keep, as_undirected, output,
         out_format, report, mapping_out, "none" if no_measures else utility, key=key,
         measure_risk=not no_measures)


@cli.command()
@click.argument("input", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "in_format", type=click.Choice(FORMATS), default=None)
@click.option("--as-undirected", is_flag=True)
@handle_errors
def risk(input: Path, in_format: str | None, as_undirected: bool) -> None:  # noqa: A002
    """Degree and neighbourhood re-identification risk of a graph, as JSON."""
    check_input_path(input, "INPUT")
    guess_format(input, in_format)
    graph = read_graph(input, format=in_format, as_undirected=as_undirected)
    click.echo(json.dumps(to_jsonable(structural_risk(graph)), indent=2))


@cli.command()
@click.argument("original", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("anonymized", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--level", type=click.Choice(["fast", "full"]), default="full", show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the sampled measures.")
@handle_errors
def compare(original: Path, anonymized: Path, level: str, seed: int) -> None:
    """Utility of ANONYMIZED against ORIGINAL (same node ids: use --no-relabel), as JSON."""
    for name, path in (("ORIGINAL", original), ("ANONYMIZED", anonymized)):
        check_input_path(path, name)
        guess_format(path)
    result = graph_utility(read_graph(original), read_graph(anonymized), seed=seed, level=level)
    click.echo(json.dumps(to_jsonable(result), indent=2))


def demo(output_dir: Path, seed: int = 0) -> Release:
    """Anonymize the bundled SNAP ca-GrQc graph (k = 10) into ``output_dir``.

    Writes ``ca-GrQc_k10.edges`` (the anonymized edge list) and ``report.json``; returns the
    verified release.
    """
    output_dir = Path(output_dir)
    graph = read_graph(SAMPLE)
    return _run(graph, 10, "dp", "supergraph", True, seed, (), False,
                output_dir / "ca-GrQc_k10.edges", None, output_dir / "report.json", None,
                "auto", quiet=True)
