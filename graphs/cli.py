"""Command line of the graphs package: ``structanon graphs anonymize | assess | compare``.

``risk`` (the round-1 name of ``assess``, printing the bare risk JSON) stays as a hidden
alias for one release.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import click
import networkx as nx

from structanon import Release
from structanon._finish import Timings
from structanon._json import to_jsonable
from structanon._validation import check_input_path, check_int, check_output_paths
from structanon.cli_support import (
    assess_options,
    assessment,
    emit_assessment,
    emit_release,
    encoding_option,
    handle_errors,
    release_options,
    show_progress,
)
from structanon.errors import InputError, respelled
from structanon.io import gzip_writer, is_gzip_path, release_key, staged_outputs
from structanon.report import REPORT_EXTENSIONS, format_summary

from ._figures import release_figures
from ._kdegree import CONSTRUCTIONS, UTILITY_CHOICES, anonymize_with_mapping
from ._sequence import _METHODS
from .io import (
    _EXTENSIONS,
    FORMATS,
    _named_format,
    check_output_format,
    check_writable,
    guess_format,
    read_graph,
    write_graph,
)
from .metrics import graph_utility
from .risk import assess_risk, structural_risk

__all__ = ["cli", "demo", "release_figures"]

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "ca-GrQc_undirected.txt"
OUTPUT_EXTENSIONS = tuple(sorted(_EXTENSIONS))
MAPPING_EXTENSIONS = (".csv",)  # .csv.gz too: written compressed
INPUT_HELP = "Input format (default: from the extension)."
UNDIRECTED_HELP = "Accept a directed graph, dropping edge directions."


def _check_options(
    input: Path,
    output: Path,
    in_format: str | None,  # noqa: A002
    out_format: str | None,
    report: Path | None,
    mapping_out: Path | None,
    key_file: Path | None,
    seed: int,
    keep: tuple[str, ...] = (),
) -> None:
    """Every option and output path, before the input is read."""
    check_input_path(input, "INPUT")
    guess_format(input, in_format)
    check_int(seed, "--seed", min_value=0)
    if key_file is not None:
        check_input_path(key_file, "--key-file", stream_ok=True)
    extensions: dict[str, tuple[str, ...]] = {
        "--report": REPORT_EXTENSIONS,
        "--mapping-out": MAPPING_EXTENSIONS,
    }
    if out_format is None:
        extensions["--output"] = OUTPUT_EXTENSIONS
    else:  # an extension of another format would mislabel the output
        check_output_format(output, out_format, "-o/--output", "--out-format")
    inputs = [input] + ([key_file] if key_file is not None else [])
    check_output_paths(
        {"--output": output, "--report": report, "--mapping-out": mapping_out},
        inputs=inputs,
        extensions=extensions,
    )
    _check_keep(keep, out_format or guess_format(output))


def _check_keep(keep: tuple[str, ...], fmt: str) -> None:
    """``--keep-attr`` with an output that cannot hold node attributes: refused, not lost."""
    if keep and fmt in ("edgelist", "csv"):
        raise InputError(
            f"--keep-attr {','.join(keep)}: an edge list or CSV output holds no node "
            "attributes, they would be lost; write GraphML (.graphml), GEXF (.gexf) or "
            "JSON (.json), or drop --keep-attr"
        )


def _write_outputs(
    release: Release,
    mapping: dict[Any, Any],
    output: Path,
    out_format: str | None,
    report: Path | None,
    mapping_out: Path | None,
    figures: Any,
    inputs: list[Path],
) -> None:
    """All outputs or none: side files staged first, the main output last."""
    with staged_outputs() as stage:
        if mapping_out is not None:
            with open(stage(mapping_out, private=True), "wb") as raw:
                fh = io.TextIOWrapper(
                    gzip_writer(raw) if is_gzip_path(mapping_out) else raw,
                    encoding="utf-8",
                    newline="",
                )
                fh.write("original,published\n")
                fh.writelines(f"{u},{v}\n" for u, v in mapping.items())
                fh.close()
        emit_release(release, report, figures, quiet=True, inputs=inputs, stage=stage)
        try:
            write_graph(release.data, stage(output), format=out_format or guess_format(output))
        except InputError as exc:  # name the output, not its temporary file
            raise InputError(
                exc.message, path=str(output), node=exc.node, line=exc.line, value=exc.value
            ) from None


def _run(
    graph: nx.Graph,
    k: int,
    method: str,
    construct: str,
    relabel: bool,
    seed: int,
    keep: tuple[str, ...],
    as_undirected: bool,
    output: Path,
    out_format: str | None,
    report: Path | None,
    mapping_out: Path | None,
    utility: str,
    quiet: bool = False,
    key: Any = None,
    measures: bool = True,
    inputs: tuple[Path, ...] = (),
    max_degree_drop: float | None = None,
) -> Release:
    """Anonymize ``graph``, print its warnings, write every output, print the summary."""
    # isolated nodes bound for an edge list: refused before the work (the constructions
    # keep the input's isolated nodes; those an edit makes are refused when written)
    check_writable(graph, out_format or guess_format(output), output)
    with warnings.catch_warnings():  # printed below as "warning: ...", once each
        warnings.simplefilter("ignore", UserWarning)
        release, mapping = anonymize_with_mapping(
            graph,
            k,
            method=method,
            construct=construct,
            relabel=relabel,
            seed=seed,
            keep_attributes=keep,
            as_undirected=as_undirected,
            utility=utility,
            key=key,
            measures=measures,
            max_degree_drop=max_degree_drop,
        )
    for warning in release.info.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)
    with Timings()("write"):
        _write_outputs(
            release,
            mapping,
            output,
            out_format,
            report,
            mapping_out,
            lambda: release_figures(graph, release),
            list(inputs),
        )
    if not quiet:
        click.echo(format_summary(release))
        for path in (output, report, mapping_out):
            if path is not None:
                click.echo(f"written: {path}")
    return release


def _read(
    input: Path,  # noqa: A002
    in_format: str | None,
    as_undirected: bool,
    encoding: str = "utf-8",
) -> nx.Graph:
    with Timings()("read"):
        return read_graph(input, format=in_format, as_undirected=as_undirected, encoding=encoding)


@click.group(name="graphs", context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """k-degree anonymization of social-network exports (Liu & Terzi 2008)."""


@cli.command()
@click.argument("input", metavar="INPUT", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-k",
    "k",
    type=int,
    required=True,
    help="Least number of nodes sharing each degree.",
)
@release_options
@click.option("--format", "in_format", type=click.Choice(FORMATS), default=None, help=INPUT_HELP)
@encoding_option()
@click.option(
    "--out-format",
    type=click.Choice(FORMATS),
    default=None,
    help="Output format (default: from the extension of --output; an extension of "
    "another format is refused). Edge lists and CSV cannot hold isolated nodes: use "
    ".graphml, .gexf or .json then.",
)
@click.option(
    "--method",
    type=click.Choice(_METHODS),
    default="dp",
    show_default=True,
    help="Degree-sequence anonymization: exact dynamic program or greedy.",
)
@click.option(
    "--construct",
    type=click.Choice(CONSTRUCTIONS),
    default="supergraph",
    show_default=True,
    help="Graph construction (supergraph and probing only add edges, every true "
    "edge kept; swap also removes some; edit adds and deletes, fewest edited "
    "edges).",
)
@click.option(
    "--max-degree-drop",
    type=click.FloatRange(0, 1),
    default=None,
    help="With --construct edit: largest share of its degree a node may lose "
    "(protects hubs; 0 = degrees never fall). Default: no cap.",
)
@click.option(
    "--relabel/--no-relabel",
    default=True,
    show_default=True,
    help="Publish secret random node labels (--no-relabel keeps the input ids: not anonymous!).",
)
@click.option(
    "--keep-attr",
    "keep",
    multiple=True,
    metavar="NAME",
    help="Node attribute to keep (repeatable); all others are dropped.",
)
@click.option("--as-undirected", is_flag=True, help=UNDIRECTED_HELP)
@click.option(
    "--mapping-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the original -> published node id mapping here (keep it secret: "
    "it undoes the anonymization; written readable by you only).",
)
@click.option(
    "--utility",
    type=click.Choice(UTILITY_CHOICES),
    default="auto",
    show_default=True,
    help="Utility measures: auto is full up to 100,000 edges, else fast; none skips them.",
)
@handle_errors
def anonymize(
    input: Path,
    k: int,
    output: Path,
    report: Path | None,
    seed: int,  # noqa: A002
    key_file: Path | None,
    no_measures: bool,
    quiet: bool,
    in_format: str | None,
    encoding: str,
    out_format: str | None,
    method: str,
    construct: str,
    max_degree_drop: float | None,
    relabel: bool,
    keep: tuple[str, ...],
    as_undirected: bool,
    mapping_out: Path | None,
    utility: str,
) -> None:
    """Make INPUT k-degree anonymous and write the result to -o/--output."""
    if max_degree_drop is not None and construct != "edit":
        raise InputError("--max-degree-drop applies to --construct edit only")
    show_progress(quiet)
    check_int(k, "-k", min_value=1)
    _check_options(input, output, in_format, out_format, report, mapping_out, key_file, seed, keep)
    key = release_key(key_file)
    graph = _read(input, in_format, as_undirected, encoding)
    _run(
        graph,
        k,
        method,
        construct,
        relabel,
        seed,
        keep,
        as_undirected,
        output,
        out_format,
        report,
        mapping_out,
        utility,
        quiet=quiet,
        key=key,
        measures=not no_measures,
        inputs=(input,),
        max_degree_drop=max_degree_drop,
    )


def _assess_warnings(risk: dict[str, Any]) -> list[str]:
    found = []
    degree, neighbourhood = risk["degree"], risk["neighbourhood"]
    if degree["nodes_unique"]:
        found.append(
            f"{degree['nodes_unique']:,} node(s) have a degree no other node has: an "
            "attacker who knows how many connections they have finds them"
        )
    if neighbourhood["share_unique"] > 0.5:
        found.append(
            f"{neighbourhood['share_unique']:.0%} of nodes are unique by their degree "
            "and their neighbours' degrees; k-degree anonymity does not protect "
            "against that attacker"
        )
    cleaned = risk["graph"]["self_loops_removed"] + risk["graph"]["duplicate_edges_removed"]
    if cleaned:
        found.append(f"{cleaned:,} self-loop or duplicate edge row(s) were ignored")
    return found


@cli.command()
@click.argument("input", metavar="INPUT", type=click.Path(dir_okay=False, path_type=Path))
@assess_options
@click.option("--format", "in_format", type=click.Choice(FORMATS), default=None, help=INPUT_HELP)
@encoding_option()
@click.option("--as-undirected", is_flag=True, help=UNDIRECTED_HELP)
@handle_errors
def assess(
    input: Path,
    report: Path | None,
    as_json: bool,
    seed: int,  # noqa: A002
    quiet: bool,
    in_format: str | None,
    encoding: str,
    as_undirected: bool,
) -> None:
    """Re-identification risk of INPUT before any anonymization: degree and neighbourhood
    uniqueness and candidate-set sizes."""
    show_progress(quiet)
    check_input_path(input, "INPUT")
    check_int(seed, "--seed", min_value=0)
    guess_format(input, in_format)
    check_output_paths({"--report": report}, inputs=[input], extensions={"--report": (".json",)})
    graph = _read(input, in_format, as_undirected, encoding)
    with Timings()("risk"):
        risk = assess_risk(graph)
    emit_assessment(
        assessment("graphs", input, risk, _assess_warnings(risk)),
        report,
        as_json=as_json,
        quiet=quiet,
    )


@cli.command(hidden=True)
@click.argument("input", metavar="INPUT", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "in_format", type=click.Choice(FORMATS), default=None, help=INPUT_HELP)
@encoding_option()
@click.option("--as-undirected", is_flag=True, help=UNDIRECTED_HELP)
@handle_errors
def risk(
    input: Path,  # noqa: A002
    in_format: str | None,
    encoding: str,
    as_undirected: bool,
) -> None:
    """Deprecated: use ``assess``.  Degree and neighbourhood risk of a graph, as bare JSON."""
    check_input_path(input, "INPUT")
    guess_format(input, in_format)
    graph = read_graph(input, format=in_format, as_undirected=as_undirected, encoding=encoding)
    click.echo(json.dumps(to_jsonable(structural_risk(graph)), indent=2))


@cli.command()
@click.argument("original", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("anonymized", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--level",
    type=click.Choice(["fast", "full"]),
    default="full",
    show_default=True,
    help="full adds sampled betweenness and Louvain community agreement.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seed of the sampled measures.",
)
@click.option("--as-undirected", is_flag=True, help=UNDIRECTED_HELP)
@encoding_option()
@handle_errors
def compare(
    original: Path, anonymized: Path, level: str, seed: int, as_undirected: bool, encoding: str
) -> None:
    """Utility of ANONYMIZED against ORIGINAL (same node ids: use --no-relabel), as JSON;
    --encoding and --as-undirected apply to both files."""
    for name, path in (("ORIGINAL", original), ("ANONYMIZED", anonymized)):
        check_input_path(path, name)
        ext, named = _named_format(path)
        if named is None:  # compare has no --format: the extension alone tells it
            raise InputError(
                f"cannot tell the graph format of {name} from its extension "
                f"{ext or '(none)'}; name the file with one of "
                f"{', '.join(sorted(_EXTENSIONS))} (.gz accepted)",
                path=str(path),
            )
    try:
        result = graph_utility(
            read_graph(original, as_undirected=as_undirected, encoding=encoding),
            read_graph(anonymized, as_undirected=as_undirected, encoding=encoding),
            seed=seed,
            level=level,
        )
    except InputError as exc:  # the command line names its option, not Python's
        raise respelled(exc, "relabel=False", "--no-relabel") from None
    click.echo(json.dumps(to_jsonable(result), indent=2))


def demo(output_dir: Path, seed: int = 0) -> Release:
    """Anonymize the bundled SNAP ca-GrQc graph (k = 10) into ``output_dir``.

    Writes ``ca-GrQc_k10.edges`` (the anonymized edge list), ``report.json`` and
    ``report.html`` (with the figures); returns the verified release.
    """
    output_dir = Path(output_dir)
    graph = read_graph(SAMPLE)
    release = _run(
        graph,
        10,
        "dp",
        "supergraph",
        True,
        seed,
        (),
        False,
        output_dir / "ca-GrQc_k10.edges",
        None,
        output_dir / "report.json",
        None,
        "auto",
        quiet=True,
        inputs=(SAMPLE,),
    )
    emit_release(
        release,
        output_dir / "report.html",
        lambda: release_figures(graph, release),
        quiet=True,
        inputs=(SAMPLE,),
    )
    return release
