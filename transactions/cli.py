"""Command line: ``structanon transactions anonymize | k-anonymize | band | inspect``, and the demo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import numpy as np

from structanon import Release
from structanon._validation import check_input_path, check_output_paths
from structanon.cli_support import handle_errors
from structanon.errors import InputError
from structanon.io import atomic_write, release_key, staged_outputs
from structanon.report import format_summary, write_report

from . import metrics, risk
from ._common import MAX_M, check_int
from .apriori import km_anonymize
from .band import MAX_ALPHA, band_matrix
from .io import FORMATS, ITEM_TYPES, detect_format, read_transactions, write_transactions
from .partition import k_anonymize

__all__ = ["cli", "demo", "figures_for"]

DATA = Path(__file__).resolve().parent / "data"
SAMPLE = DATA / "retail_head2000.dat"


def figures_for(release: Release, original: Any) -> list[tuple[str, Any]]:
    """Generalization depth, itemset-support error and risk before/after, as figures."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    if isinstance(release.data, dict):  # band matrix
        groups = np.asarray(release.data["group"])
        sizes = np.bincount(groups[groups >= 0], minlength=len(release.data["sensitive_counts"]))
        share = np.array([max(c.values()) / s if c else 0.0
                          for c, s in zip(release.data["sensitive_counts"], sizes)])
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.hist(share, bins=20)
        ax.axvline(1.0 / release.data["p"], color="k", ls="--", label="1/p")
        ax.set_xlabel("largest sensitive-item share in a group")
        ax.set_ylabel("groups")
        ax.legend()
        figs.append(("Sensitive-item share per group", fig))
        return figs
    tax = getattr(release, "taxonomy", None)
    if tax is not None and release.source_index is not None:  # input in published order
        original = [original[i] for i in np.asarray(release.source_index).tolist()]
    if tax is not None:
        from ._query import published_nodes

        indptr, nodes, _s = published_nodes(release.data, tax)
        fig, ax = plt.subplots(figsize=(5, 3))
        depth = np.bincount(tax.depth[nodes], minlength=tax.height + 1)
        ax.bar(np.arange(depth.size), depth)
        ax.set_xlabel("taxonomy depth of published label (0 = root)")
        ax.set_ylabel("published labels")
        ax.set_title("Generalization cut")
        figs.append(("Generalization cut: depth of published labels", fig))
        err = metrics.support_error(original, release.data, tax, n_queries=200,
                                    return_errors=True)["errors"]
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.hist(err, bins=30)
        ax.set_xlabel("relative error of itemset support")
        ax.set_ylabel("random itemsets")
        figs.append(("Itemset-support error distribution", fig))
        m = int(release.parameters.get("m", 2))
        before, after, _ = risk.candidate_sizes(original, release.data, tax, m, n_targets=300)
        fig, ax = plt.subplots(figsize=(5, 3))
        bins = np.logspace(0, np.log10(max(before.max(), after.max(), 2)) + 0.1, 30)
        ax.hist([np.maximum(before, 1), np.maximum(after, 1)], bins=bins,
                label=["before", "after"])
        ax.set_xscale("log")
        ax.axvline(release.parameters.get("k", 1), color="k", ls="--", label="k")
        ax.set_xlabel(f"candidate transactions for an attacker knowing {m} items")
        ax.legend()
        figs.append(("Risk before / after", fig))
    return figs


def _write_band(data: dict, path: Path) -> None:
    groups = np.asarray(data["group"])
    sizes = np.bincount(groups[groups >= 0], minlength=len(data["sensitive_counts"]))
    doc = {
        "p": data["p"],
        "sensitive_items": data["sensitive_items"],
        "groups": [{"size": int(s), "sensitive_counts": {str(k): v for k, v in c.items()}}
                   for s, c in zip(sizes.tolist(), data["sensitive_counts"])],
        "transactions": [None if t is None else {"group": int(g), "items": sorted(t, key=str)}
                         for t, g in zip(data["qi"], groups.tolist())],
    }
    with atomic_write(path) as fh:
        json.dump(doc, fh)


def _at_line(input_path: str, fmt: str | None, run):
    """Run an anonymizer; a too-wide transaction of a FIMI file is named by its file line.

    In a FIMI file transaction ``i`` is line ``i`` (an empty line is an empty transaction).
    """
    try:
        return run()
    except InputError as exc:
        if exc.row is None or exc.line is not None or "items;" not in exc.message or (
                fmt or detect_format(input_path)) != "fimi":
            raise
        raise InputError(exc.message.replace(f"transaction {exc.row} ", f"line {exc.row} ", 1),
                         path=str(input_path), line=exc.row, value=exc.value) from None


def _read(path: str, fmt: str | None, item_type: str, encoding: str):
    data, stats = read_transactions(path, format=fmt, return_stats=True, item_type=item_type,
                                    encoding=encoding)
    click.echo(f"read {stats['transactions']:,} transactions ({stats['empty_transactions']:,} "
               f"empty, {stats['duplicate_items']:,} duplicate items removed)", err=True)
    return data


OUTPUT_SUFFIXES = (".dat", ".txt", ".fimi", ".csv", ".tsv", ".jsonl", ".json", ".ndjson")
REPORT_SUFFIXES = (".json", ".html", ".htm")
KEY_HELP = ("Secret key file: pseudonyms and publication order become reproducible for "
            "whoever holds it (default: $STRUCTANON_PSEUDONYM_KEY, else a fresh random key)")
SEED_HELP = ("Public seed of the algorithm's own choices and the measures; it never decides "
             "the published order, labels or ids.")


def _check_options(input_path: str, output: str, report: str | None, output_suffixes: tuple,
                   inputs: tuple = (), key_file: str | None = None, **ints: Any) -> None:
    """Every option and output path, before the input is read (InputError, exit 2)."""
    for name, (value, low, high) in ints.items():
        if value is not None:
            check_int(value, name, low, high)
    check_input_path(input_path, "input file")
    for extra in inputs:
        if extra is not None:
            check_input_path(extra, "input file")
    if key_file is not None:
        check_input_path(key_file, "--key-file")
    check_output_paths({"--output": output, "--report": report},
                       inputs=[input_path, *inputs, key_file],
                       extensions={"--output": output_suffixes, "--report": REPORT_SUFFIXES})


def _publish(release: Release, output: str, report: str | None, write_main, figures) -> Any:
    """Summary and warnings, then the report and the main output, all or nothing."""
    click.echo(format_summary(release))
    for warning in release.info.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)
    figs = figures() if report is not None and Path(report).suffix.lower() in (
        ".html", ".htm") else ()
    with staged_outputs() as stage:
        if report is not None:
            write_report(release, stage(report), figs)
        n = write_main(stage(output))
    if report is not None:
        click.echo(f"report written to {report}")
    return n


@click.group(name="transactions")
def cli() -> None:
    """Anonymize set-valued data (market baskets, click streams)."""


_fmt = click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                    help="Input format (default: from the file name).")
_report = click.option("--report", type=click.Path(dir_okay=False), default=None,
                       help="Write a JSON or HTML report.")
_item_type = click.option("--item-type", type=click.Choice(ITEM_TYPES), default="auto",
                          show_default=True,
                          help="Items as integers or text; auto refuses a stray non-integer "
                               "item in an integer file.")
_encoding = click.option("--encoding", default="utf-8", show_default=True,
                         help="Text encoding of the input.")
_key = click.option("--key-file", type=click.Path(dir_okay=False), default=None, help=KEY_HELP)
_seed = click.option("--seed", type=int, default=0, show_default=True, help=SEED_HELP)
_no_measures = click.option("--no-measures", is_flag=True, default=False,
                            help="Skip the utility and risk measures (faster, less memory).")
_max_width = click.option("--max-basket-size", type=int, default=None,
                          help="Widest transaction accepted (default: the widest whose item "
                               "subsets stay under 10 million; 4,472 items for m=2).")


def _figures(release: Release, data: Any, measures: bool):
    return (lambda: figures_for(release, data)) if measures else (lambda: ())


@cli.command("anonymize")
@click.argument("input_path", type=click.Path(dir_okay=False))
@click.option("-k", type=int, required=True, help="Minimum support of published itemsets.")
@click.option("-m", type=int, default=2, show_default=True,
              help=f"Items known by the attacker (1..{MAX_M}).")
@click.option("--hierarchy", type=click.Path(dir_okay=False), default=None,
              help="Item taxonomy: nested-dict .json or ARX .csv (default: balanced tree).")
@click.option("--method", type=click.Choice(["apriori", "local"]), default="apriori",
              show_default=True)
@click.option("--fanout", type=int, default=None, help="Fan-out of the automatic taxonomy (5).")
@click.option("--order", type=click.Choice(["id", "frequency"]), default="id", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@_seed
@_key
@_no_measures
@_max_width
@_fmt
@_item_type
@_encoding
@_report
@handle_errors
def anonymize_cmd(input_path, k, m, hierarchy, method, fanout, order, output, seed, key_file,
                  no_measures, max_basket_size, fmt, item_type, encoding, report):
    """k^m-anonymize INPUT_PATH: any m known items match at least k transactions."""
    _check_options(input_path, output, report, OUTPUT_SUFFIXES, (hierarchy,), key_file,
                   k=(k, 1, None), m=(m, 1, MAX_M), fanout=(fanout, 2, None), seed=(seed, 0, None),
                   max_basket_size=(max_basket_size, 1, None))
    key = release_key(key_file)
    data = _read(input_path, fmt, item_type, encoding)
    release = _at_line(input_path, fmt, lambda: km_anonymize(
        data, k=k, m=m, hierarchy=hierarchy, method=method, fanout=fanout, order=order,
        seed=seed, key=key, measures=not no_measures, max_basket_size=max_basket_size))
    n = _publish(release, output, report, lambda path: write_transactions(release.data, path),
                 _figures(release, data, not no_measures))
    click.echo(f"{n:,} transactions written to {output}")


@cli.command("k-anonymize")
@click.argument("input_path", type=click.Path(dir_okay=False))
@click.option("-k", type=int, required=True, help="People sharing each published transaction.")
@click.option("--hierarchy", type=click.Path(dir_okay=False), default=None)
@click.option("--fanout", type=int, default=None)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@_seed
@_key
@_no_measures
@_fmt
@_item_type
@_encoding
@_report
@handle_errors
def k_anonymize_cmd(input_path, k, hierarchy, fanout, output, seed, key_file, no_measures, fmt,
                    item_type, encoding, report):
    """k-anonymize whole transactions of INPUT_PATH (Partition)."""
    _check_options(input_path, output, report, OUTPUT_SUFFIXES, (hierarchy,), key_file,
                   k=(k, 1, None), fanout=(fanout, 2, None), seed=(seed, 0, None))
    key = release_key(key_file)
    data = _read(input_path, fmt, item_type, encoding)
    release = k_anonymize(data, k=k, hierarchy=hierarchy, fanout=fanout, seed=seed, key=key,
                          measures=not no_measures)
    n = _publish(release, output, report, lambda path: write_transactions(release.data, path),
                 _figures(release, data, not no_measures))
    click.echo(f"{n:,} transactions written to {output}")


def _sensitive_names(sensitive: str) -> list[str]:
    if sensitive.startswith("@"):
        spath = check_input_path(sensitive[1:], "sensitive-items file")
        raw = spath.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError("the sensitive-items file is not UTF-8 text", path=str(spath),
                             line=raw[:exc.start].count(b"\n") + 1) from None
        names = [x.strip() for x in text.splitlines() if x.strip()]
    else:
        names = [x.strip() for x in sensitive.split(",") if x.strip()]
    if not names:
        raise InputError("--sensitive names no item", value=sensitive)
    return names


@cli.command("band")
@click.argument("input_path", type=click.Path(dir_okay=False))
@click.option("--sensitive", required=True,
              help="Sensitive items, comma-separated, or @FILE with one item per line.")
@click.option("-p", type=int, required=True, help="Privacy degree: probability bound 1/p.")
@click.option("--alpha", type=int, default=3, show_default=True, help="Window factor.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="JSON file: QI items per transaction, groups and sensitive counts.")
@_seed
@_key
@_no_measures
@_max_width
@_fmt
@_item_type
@_encoding
@_report
@handle_errors
def band_cmd(input_path, sensitive, p, alpha, output, seed, key_file, no_measures,
             max_basket_size, fmt, item_type, encoding, report):
    """Band-matrix grouping (CAHD) of INPUT_PATH with SENSITIVE items."""
    side = (sensitive[1:],) if sensitive.startswith("@") else ()
    _check_options(input_path, output, report, (".json",), side, key_file,
                   p=(p, 2, None), alpha=(alpha, 1, MAX_ALPHA), seed=(seed, 0, None),
                   max_basket_size=(max_basket_size, 1, None))
    names = _sensitive_names(sensitive)
    key = release_key(key_file)
    data = _read(input_path, fmt, item_type, encoding)
    release = _at_line(input_path, fmt, lambda: band_matrix(
        data, names, p=p, alpha=alpha, seed=seed, key=key, measures=not no_measures,
        max_basket_size=max_basket_size))
    _publish(release, output, report, lambda path: _write_band(release.data, Path(path)),
             _figures(release, data, not no_measures))
    click.echo(f"groups written to {output}")


@cli.command("inspect")
@click.argument("input_path", type=click.Path(dir_okay=False))
@click.option("-k", type=int, default=10, show_default=True)
@click.option("-m", type=int, default=2, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True,
              help="Public seed of the sampled targets.")
@_fmt
@_item_type
@_encoding
@handle_errors
def inspect_cmd(input_path, k, m, seed, fmt, item_type, encoding):
    """Sizes and the risk of INPUT_PATH before anonymization."""
    from ._data import encode_baskets
    from ._taxonomy import Taxonomy

    check_int(k, "k", 1)
    check_int(m, "m", 1, MAX_M)
    check_int(seed, "seed", 0)
    check_input_path(input_path, "input file")
    data = _read(input_path, fmt, item_type, encoding)
    b = encode_baskets(data)
    tax = Taxonomy.balanced(b.domain, 5) if b.domain.size else None
    click.echo(json.dumps(b.input_stats(), indent=2))
    if tax is not None:
        original = [t or set() for t in data]
        before, _a, _r = risk.candidate_sizes(b, original, tax, m, n_targets=500, seed=seed)
        click.echo(json.dumps({f"attacker knowing {m} items": risk.summarize_candidates(before, k)},
                              indent=2))


def demo(output_dir: Path, seed: int = 0) -> Release:
    """k^m-anonymize (k=5, m=2) the bundled 2,000 retail baskets; write output and report."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    data = read_transactions(SAMPLE)
    release = km_anonymize(data, k=5, m=2, fanout=5, seed=seed)
    write_transactions(release.data, output_dir / "retail_km_anonymous.dat")
    with atomic_write(output_dir / "report.json") as fh:
        fh.write(release.to_json())
    return release
