"""Command line of the graphs package: ``structanon graphs anonymize | risk | compare``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import networkx as nx
import numpy as np

from structanon import Release
from structanon.cli_support import emit_release, handle_errors
from structanon.io import atomic_write
from structanon.release import to_jsonable

from ._construct import CONSTRUCTS
from ._sequence import _METHODS
from .io import FORMATS, read_graph, write_graph
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


def _run(graph: nx.Graph, k: int, method: str, construct: str, relabel: bool, seed: int,
         keep: tuple[str, ...], as_undirected: bool, output: Path, out_format: str | None,
         report: Path | None, mapping_out: Path | None, utility: str, quiet: bool = False,
         ) -> Release:
    release, mapping = anonymize_with_mapping(
        graph, k, method=method, construct=construct, relabel=relabel, seed=seed,
        keep_attributes=keep, as_undirected=as_undirected,
        utility=False if utility == "none" else utility)
    write_graph(release.data, output, format=out_format)
    if mapping_out is not None:
        with atomic_write(mapping_out) as fh:
            fh.write("original,published\n")
            fh.writelines(f"{u},{v}\n" for u, v in mapping.items())
    emit_release(release, report, figures=lambda: release_figures(graph, release), quiet=quiet)
    return release


@click.group(name="graphs", context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """k-degree anonymization of social-network exports (Liu & Terzi 2008)."""


@cli.command()
@click.argument("input", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-k", "k", type=int, required=True, help="Least number of nodes per degree.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Anonymized graph (format from the extension or --out-format).")
@click.option("--format", "in_format", type=click.Choice(FORMATS), default=None,
              help="Input format (default: from the extension).")
@click.option("--out-format", type=click.Choice(FORMATS), default=None,
              help="Output format (default: from the extension).")
@click.option("--method", type=click.Choice(_METHODS), default="dp", show_default=True,
              help="Degree-sequence anonymization: exact dynamic program or greedy.")
@click.option("--construct", type=click.Choice(CONSTRUCTS), default="supergraph",
              show_default=True, help="Graph construction (supergraph/probing: additions only).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--no-relabel", is_flag=True, help="Keep the original node ids (not anonymous!).")
@click.option("--keep-attr", "keep", multiple=True, help="Node attribute to keep (repeatable).")
@click.option("--as-undirected", is_flag=True, help="Accept a directed graph, dropping directions.")
@click.option("--mapping-out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the original -> published node id mapping here (keep it secret).")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Report: .json or .html (with plots).")
@click.option("--utility", type=click.Choice(["auto", "fast", "full", "none"]), default="auto",
              show_default=True, help="Utility measures to compute.")
@handle_errors
def anonymize(input: Path, k: int, output: Path, in_format: str | None,  # noqa: A002
              out_format: str | None, method: str, construct: str, seed: int, no_relabel: bool,
              keep: tuple[str, ...], as_undirected: bool, mapping_out: Path | None,
              report: Path | None, utility: str) -> None:
    """Make INPUT k-degree anonymous and write it to OUTPUT."""
    graph = read_graph(input, format=in_format, as_undirected=as_undirected)
    _run(graph, k, method, construct, not no_relabel, seed, keep, as_undirected, output,
         out_format, report, mapping_out, utility)


@cli.command()
@click.argument("input", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "in_format", type=click.Choice(FORMATS), default=None)
@click.option("--as-undirected", is_flag=True)
@handle_errors
def risk(input: Path, in_format: str | None, as_undirected: bool) -> None:  # noqa: A002
    """Degree and neighbourhood re-identification risk of a graph, as JSON."""
    graph = read_graph(input, format=in_format, as_undirected=as_undirected)
    click.echo(json.dumps(to_jsonable(structural_risk(graph)), indent=2))


@cli.command()
@click.argument("original", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("anonymized", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--level", type=click.Choice(["fast", "full"]), default="full", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@handle_errors
def compare(original: Path, anonymized: Path, level: str, seed: int) -> None:
    """Utility of ANONYMIZED against ORIGINAL (same node ids: use --no-relabel), as JSON."""
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
