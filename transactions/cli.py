"""Command line: ``structanon transactions anonymize | k-anonymize | band | disassociate | assess``,
and the demo.

Every anonymize command takes ``INPUT -o OUTPUT`` and the shared release options
(:func:`structanon.cli_support.release_options`); ``assess`` reports the risk of an input
before anonymization in the shared assessment shape.  ``inspect`` is a hidden alias of
``assess`` kept for one release.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from structanon import Release
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
    stack,
)
from structanon.errors import InputError
from structanon.io import release_key, staged_outputs, text_lines
from structanon.report import provenance, write_report

from . import risk
from ._apriori import km_anonymize
from ._band import MAX_ALPHA, band_matrix
from ._common import MAX_M
from ._disassociation import disassociate
from ._figures import figures_for
from ._taxonomy import Taxonomy
from ._topdown import k_anonymize
from .io import (
    DISASSOCIATION_SUFFIXES,
    FORMATS,
    ITEM_TYPES,
    detect_format,
    read_transaction_lists,
    read_transactions,
    write_band,
    write_disassociation,
    write_transactions,
)

__all__ = ["cli", "demo"]

DATA = Path(__file__).resolve().parent / "data"
SAMPLE = DATA / "retail_head2000.dat"


def _at_line(input_path: str, fmt: str | None, run):
    """Run an anonymizer; a too-wide transaction of a FIMI file is named by its file line.

    In a FIMI file transaction ``i`` is line ``i`` (an empty line is an empty transaction).
    """
    try:
        return run()
    except InputError as exc:
        if (
            exc.row is None
            or exc.line is not None
            or "items;" not in exc.message
            or (fmt or detect_format(input_path)) != "fimi"
        ):
            raise
        raise InputError(
            exc.message.replace(f"transaction {exc.row} ", f"line {exc.row} ", 1),
            path=str(input_path),
            line=exc.row,
            value=exc.value,
        ) from None


def _read(
    path: str | Path, fmt: str | None, item_type: str, encoding: str, quiet: bool = False
) -> list:
    data, stats = read_transaction_lists(path, format=fmt, item_type=item_type, encoding=encoding)
    if not quiet:
        click.echo(
            f"read {stats['transactions']:,} transactions "
            f"({stats['empty_transactions']:,} empty, {stats['duplicate_items']:,} "
            "duplicate items removed)",
            err=True,
        )
    if stats["duplicate_items"]:  # a change to the data: told even with --quiet
        click.echo(
            f"warning: {stats['duplicate_items']:,} duplicate items removed "
            "(a transaction holds each item once)",
            err=True,
        )
    return data


OUTPUT_SUFFIXES = (".dat", ".txt", ".fimi", ".csv", ".tsv", ".jsonl", ".json", ".ndjson")
REPORT_SUFFIXES = (".json", ".html", ".htm")


def _option(name: str) -> str:
    """The command-line spelling of a parameter: ``k`` -> ``-k``, ``max_basket_size`` ->
    ``--max-basket-size``."""
    return f"-{name}" if len(name) == 1 else "--" + name.replace("_", "-")


def _check_options(
    input_path: str | Path,
    output: str | Path | None,
    report: str | Path | None,
    output_suffixes: tuple,
    inputs: tuple = (),
    key_file: str | Path | None = None,
    **ints: Any,
) -> None:
    """Every option and output path, before the input is read (InputError, exit 2)."""
    for name, (value, low, high) in ints.items():
        if value is not None:
            check_int(value, _option(name), min_value=low, max_value=high)
    check_input_path(input_path, "INPUT")
    for extra in inputs:
        if extra is not None:
            check_input_path(extra, "input file")
    if key_file is not None:
        check_input_path(key_file, "--key-file", stream_ok=True)
    outputs = {"--report": report} if output is None else {"--output": output, "--report": report}
    check_output_paths(
        outputs,
        inputs=[input_path, *inputs, key_file],
        extensions={"--output": output_suffixes, "--report": REPORT_SUFFIXES},
    )


def _anonymized(run: Callable[[], Release]) -> Release:
    """Run an anonymizer; its warnings are printed once, as ``warning: ...`` on stderr (even
    with ``--quiet``, which silences progress and the summary only)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", UserWarning)
        release = run()
    messages = list(release.info.get("warnings", []))
    messages += [
        str(w.message)
        for w in seen
        if issubclass(w.category, UserWarning) and str(w.message) not in messages
    ]
    for message in messages:  # about the data or the request: printed even with --quiet
        click.echo(f"warning: {message}", err=True)
    return release


def _publish(
    release: Release,
    output: Path,
    report: Path | None,
    write_main: Callable[[Path], Any],
    figures: Callable[[], list],
    quiet: bool,
    inputs: list,
) -> Any:
    """Summary, then the report and the main output, all or nothing."""
    with staged_outputs() as stage:
        emit_release(
            release,
            report,
            figures=figures,
            quiet=quiet,
            inputs=[path for path in inputs if path is not None],
            stage=stage,
        )
        return write_main(stage(output))


def _figures(release: Release, data: Any, measures: bool) -> Callable[[], list]:
    return (lambda: figures_for(release, data)) if measures else (lambda: [])


@click.group(name="transactions")
def cli() -> None:
    """Anonymize set-valued data (market baskets, click streams)."""


_fmt = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="Input format (default: from the file name).",
)
_item_type = click.option(
    "--item-type",
    type=click.Choice(ITEM_TYPES),
    default="auto",
    show_default=True,
    help="Items as integers or text; auto refuses a stray non-integer item in an integer file.",
)
_encoding = encoding_option()
_max_width = click.option(
    "--max-basket-size",
    type=int,
    default=None,
    help="Widest transaction accepted (default: the widest whose item "
    "subsets stay under 10 million; 4,472 items for m=2).",
)
_hierarchy = click.option(
    "--hierarchy",
    type=click.Path(dir_okay=False),
    default=None,
    help="Item taxonomy: nested-dict .json or ARX .csv (default: a balanced tree over the items).",
)
_fanout = click.option(
    "--fanout",
    type=int,
    default=None,
    help="Children per node of the automatic taxonomy (default 5).",
)
_order = click.option(
    "--order",
    type=click.Choice(["id", "frequency"]),
    default="id",
    show_default=True,
    help="Item order of the automatic taxonomy.",
)
_input = click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))


_input_options = stack(_fmt, _item_type, _encoding)


def _start(opts: dict, suffixes: tuple, side: tuple = (), **ints: Any) -> Any:
    """Every option checked before the input is read; the release key."""
    show_progress(opts["quiet"])
    _check_options(
        opts["input_path"],
        opts["output"],
        opts["report"],
        suffixes,
        side,
        opts["key_file"],
        seed=(opts["seed"], 0, None),
        **ints,
    )
    return release_key(opts["key_file"])


def _release(
    opts: dict,
    key: Any,
    anonymize: Callable[..., Release],
    write: Callable[[Release, Path], Any],
    side: tuple = (),
) -> tuple[Release, Any]:
    """Read INPUT, anonymize it (``anonymize(data, seed=, key=, measures=)``), publish."""
    quiet, measures = opts["quiet"], not opts["no_measures"]
    data = _read(opts["input_path"], opts["fmt"], opts["item_type"], opts["encoding"], quiet)
    release = _anonymized(
        lambda: _at_line(
            opts["input_path"],
            opts["fmt"],
            lambda: anonymize(data, seed=opts["seed"], key=key, measures=measures),
        ),
    )
    written = _publish(
        release,
        opts["output"],
        opts["report"],
        lambda path: write(release, path),
        _figures(release, data, measures),
        quiet,
        [opts["input_path"], *side],
    )
    return release, written


@cli.command("anonymize")
@_input
@click.option(
    "-k",
    type=int,
    required=True,
    help="Minimum support of every published itemset of up to m items.",
)
@click.option(
    "-m", type=int, default=2, show_default=True, help=f"Items known by the attacker (1..{MAX_M})."
)
@_hierarchy
@click.option(
    "--method",
    type=click.Choice(["apriori", "local"]),
    default="apriori",
    show_default=True,
    help="apriori: one global cut of the taxonomy; local: local recoding.",
)
@_fanout
@_order
@_max_width
@release_options
@_input_options
@handle_errors
def anonymize_cmd(k, m, hierarchy, method, fanout, order, max_basket_size, **opts):
    """k^m-anonymize INPUT: any m known items match at least k transactions."""
    key = _start(
        opts,
        OUTPUT_SUFFIXES,
        (hierarchy,),
        k=(k, 1, None),
        m=(m, 1, MAX_M),
        fanout=(fanout, 2, None),
        max_basket_size=(max_basket_size, 1, None),
    )
    _, n = _release(
        opts,
        key,
        lambda data, **common: km_anonymize(
            data,
            k=k,
            m=m,
            hierarchy=hierarchy,
            method=method,
            fanout=fanout,
            order=order,
            max_basket_size=max_basket_size,
            **common,
        ),
        lambda release, path: write_transactions(release.data, path),
        (hierarchy,),
    )
    if not opts["quiet"]:
        click.echo(f"{n:,} transactions written to {opts['output']}")


@cli.command("k-anonymize")
@_input
@click.option(
    "-k", type=int, required=True, help="People sharing each published transaction, as a whole."
)
@_hierarchy
@_fanout
@_order
@release_options
@_input_options
@handle_errors
def k_anonymize_cmd(k, hierarchy, fanout, order, **opts):
    """k-anonymize whole transactions of INPUT (He & Naughton's top-down Partition)."""
    key = _start(opts, OUTPUT_SUFFIXES, (hierarchy,), k=(k, 1, None), fanout=(fanout, 2, None))
    _, n = _release(
        opts,
        key,
        lambda data, **common: k_anonymize(
            data, k=k, hierarchy=hierarchy, fanout=fanout, order=order, **common
        ),
        lambda release, path: write_transactions(release.data, path),
        (hierarchy,),
    )
    if not opts["quiet"]:
        click.echo(f"{n:,} transactions written to {opts['output']}")


def _sensitive_names(sensitive: str) -> list[str]:
    """The items of ``--sensitive``: comma-separated, or one per line of ``@FILE``."""
    if sensitive.startswith("@"):
        lines = [
            line.removeprefix("\ufeff") if number == 1 else line
            for number, line in text_lines(sensitive[1:], "utf-8", name="sensitive-items file")
        ]
    else:
        lines = sensitive.split(",")
    names = [x.strip() for x in lines if x.strip()]
    if not names:
        raise InputError("--sensitive names no item", value=sensitive)
    return names


@cli.command("band")
@_input
@click.option(
    "--sensitive",
    required=True,
    help="Sensitive items, comma-separated, or @FILE with one item per line.",
)
@click.option(
    "-p",
    "--privacy-degree",
    "p",
    type=int,
    required=True,
    help="Privacy degree p: a sensitive item is tied to a person with probability at most 1/p.",
)
@click.option(
    "--alpha",
    type=int,
    default=3,
    show_default=True,
    help="Window factor: candidates are drawn from 2*alpha*p+1 neighbours in the band.",
)
@_max_width
@release_options
@_input_options
@handle_errors
def band_cmd(sensitive, p, alpha, max_basket_size, **opts):
    """Band-matrix grouping (CAHD) of INPUT with SENSITIVE items; OUTPUT is a .json file."""
    side = (sensitive[1:],) if sensitive.startswith("@") else ()
    key = _start(
        opts,
        (".json",),
        side,
        p=(p, 2, None),
        alpha=(alpha, 1, MAX_ALPHA),
        max_basket_size=(max_basket_size, 1, None),
    )
    names = _sensitive_names(sensitive)
    _release(
        opts,
        key,
        lambda data, **common: band_matrix(
            data, names, p=p, alpha=alpha, max_basket_size=max_basket_size, **common
        ),
        lambda release, path: write_band(release.data, path),
        side,
    )
    if not opts["quiet"]:
        click.echo(f"groups written to {opts['output']}")


@cli.command("disassociate")
@_input
@click.option(
    "-k",
    type=int,
    required=True,
    help="Minimum support of every itemset of up to m items inside each published chunk.",
)
@click.option(
    "-m", type=int, default=2, show_default=True, help=f"Items known by the attacker (1..{MAX_M})."
)
@click.option(
    "--max-cluster-size",
    type=int,
    default=None,
    help="Largest cluster of similar baskets (default: max(20 k, 100)).",
)
@_max_width
@release_options
@_input_options
@handle_errors
def disassociate_cmd(k, m, max_cluster_size, max_basket_size, **opts):
    """Disassociate INPUT: items kept, baskets split into k^m-anonymous chunks (.json or .txt)."""
    key = _start(
        opts,
        DISASSOCIATION_SUFFIXES,
        k=(k, 1, None),
        m=(m, 1, MAX_M),
        max_cluster_size=(max_cluster_size, 1, None),
        max_basket_size=(max_basket_size, 1, None),
    )
    release, n = _release(
        opts,
        key,
        lambda data, **common: disassociate(
            data,
            k=k,
            m=m,
            max_cluster_size=max_cluster_size,
            max_basket_size=max_basket_size,
            **common,
        ),
        lambda release, path: write_disassociation(release.data, path, release.parameters),
    )
    if not opts["quiet"]:
        clusters = release.info["disassociation"]["clusters"]
        click.echo(f"{n:,} transactions in {clusters:,} clusters written to {opts['output']}")


def assess_input(data: list, k: int, m: int, seed: int) -> tuple[dict[str, Any], list[str]]:
    """Sizes and the risk of transactions before anonymization, with warnings.

    An attacker knowing ``m`` items of a target (sampled with the public ``seed``) finds
    the transactions holding them all; the share pinned to fewer than ``k`` is the risk.
    """
    from ._data import encode_baskets

    b = encode_baskets(data)
    out: dict[str, Any] = {"sizes": b.input_stats()}
    found: list[str] = []
    if b.domain.size:
        tax = Taxonomy.balanced(b.domain, 5)
        original = [t or set() for t in data]
        before, _a, _r = risk.candidate_sizes(b, original, tax, m, n_targets=500, seed=seed)
        summary = risk.summarize_candidates(before, k)
        out[f"attacker_knowing_{m}_items"] = {"m": m, "k": k, **summary}
        if summary.get("share_below_k", 0.0) > 0:
            found.append(
                f"{summary['share_below_k']:.1%} of sampled transactions are pinned "
                f"to fewer than k={k} candidates by {m} known items; anonymize before "
                "publishing"
            )
    return out, found


def _assess(input_path, k, m, report, as_json, seed, quiet, fmt, item_type, encoding):
    """Sizes and the risk of INPUT before anonymization (one document: --json, --report)."""
    show_progress(quiet and not as_json)
    check_int(k, "-k", min_value=1)
    check_int(m, "-m", min_value=1, max_value=MAX_M)
    check_int(seed, "--seed", min_value=0)
    check_input_path(input_path, "INPUT")
    if report is not None:
        check_output_paths(
            {"--report": report}, inputs=[input_path], extensions={"--report": (".json",)}
        )
    data = _read(input_path, fmt, item_type, encoding, quiet or as_json)
    found, messages = assess_input(data, k, m, seed)
    emit_assessment(
        assessment("transactions", input_path, found, messages),
        report,
        as_json=as_json,
        quiet=quiet,
    )


_ASSESS_PARAMS = [
    _input,
    click.option(
        "-k",
        type=int,
        default=10,
        show_default=True,
        help="Candidate-set size an attacker must not get below.",
    ),
    click.option(
        "-m",
        type=int,
        default=2,
        show_default=True,
        help=f"Items known by the attacker (1..{MAX_M}).",
    ),
    assess_options,
    _input_options,
    handle_errors,
]
assess_cmd = cli.command("assess")(stack(*_ASSESS_PARAMS)(_assess))
cli.add_command(
    click.Command(
        "inspect",
        callback=assess_cmd.callback,
        params=assess_cmd.params,
        help="Old name of assess (kept for one release).",
        hidden=True,
    )
)


def demo(output_dir: Path, seed: int = 0) -> Release:
    """k^m-anonymize (k=5, m=2) the bundled 2,000 retail baskets; write output and reports.

    Writes ``retail_km_anonymous.dat``, ``report.json`` and ``report.html`` (with the
    figures of :mod:`transactions._figures`) into ``output_dir``, all or nothing.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    data = read_transactions(SAMPLE)
    release = km_anonymize(data, k=5, m=2, fanout=5, seed=seed)
    release.provenance = provenance([SAMPLE])
    with staged_outputs() as stage:
        write_transactions(release.data, stage(output_dir / "retail_km_anonymous.dat"))
        write_report(release, stage(output_dir / "report.json"))
        write_report(release, stage(output_dir / "report.html"), figures_for(release, data))
    return release
