"""Command line: ``structanon transactions anonymize | k-anonymize | band | inspect``, and the demo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import numpy as np

from structanon import Release
from structanon.cli_support import emit_release, handle_errors
from structanon.errors import InputError
from structanon.io import atomic_write

from . import metrics, risk
from .apriori import km_anonymize
from .band import band_matrix
from .io import FORMATS, read_transactions, write_transactions
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


def _read(path: str, fmt: str | None):
    data, stats = read_transactions(path, format=fmt, return_stats=True)
    click.echo(f"read {stats['transactions']:,} transactions ({stats['empty_transactions']:,} "
               f"empty, {stats['duplicate_items']:,} duplicate items removed)", err=True)
    return data


@click.group(name="transactions")
def cli() -> None:
    """Anonymize set-valued data (market baskets, click streams)."""


_fmt = click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                    help="Input format (default: from the file name).")
_report = click.option("--report", type=click.Path(dir_okay=False), default=None,
                       help="Write a JSON or HTML report.")


@cli.command("anonymize")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-k", type=int, required=True, help="Minimum support of published itemsets.")
@click.option("-m", type=int, default=2, show_default=True, help="Items known by the attacker.")
@click.option("--hierarchy", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Item taxonomy: nested-dict .json or ARX .csv (default: balanced tree).")
@click.option("--method", type=click.Choice(["apriori", "local"]), default="apriori",
              show_default=True)
@click.option("--fanout", type=int, default=None, help="Fan-out of the automatic taxonomy (5).")
@click.option("--order", type=click.Choice(["id", "frequency"]), default="id", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@click.option("--seed", type=int, default=0, show_default=True)
@_fmt
@_report
@handle_errors
def anonymize_cmd(input_path, k, m, hierarchy, method, fanout, order, output, seed, fmt, report):
    """k^m-anonymize INPUT_PATH: any m known items match at least k transactions."""
    data = _read(input_path, fmt)
    release = km_anonymize(data, k=k, m=m, hierarchy=hierarchy, method=method, fanout=fanout,
                           order=order, seed=seed)
    n = write_transactions(release.data, output)
    emit_release(release, report, figures=lambda: figures_for(release, data))
    click.echo(f"{n:,} transactions written to {output}")


@cli.command("k-anonymize")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-k", type=int, required=True, help="People sharing each published transaction.")
@click.option("--hierarchy", type=click.Path(exists=True, dir_okay=False), default=None)
@click.option("--fanout", type=int, default=None)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@click.option("--seed", type=int, default=0, show_default=True)
@_fmt
@_report
@handle_errors
def k_anonymize_cmd(input_path, k, hierarchy, fanout, output, seed, fmt, report):
    """k-anonymize whole transactions of INPUT_PATH (Partition)."""
    data = _read(input_path, fmt)
    release = k_anonymize(data, k=k, hierarchy=hierarchy, fanout=fanout, seed=seed)
    n = write_transactions(release.data, output)
    emit_release(release, report, figures=lambda: figures_for(release, data))
    click.echo(f"{n:,} transactions written to {output}")


@cli.command("band")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("--sensitive", required=True,
              help="Sensitive items, comma-separated, or @FILE with one item per line.")
@click.option("-p", type=int, required=True, help="Privacy degree: probability bound 1/p.")
@click.option("--alpha", type=int, default=3, show_default=True, help="Window factor.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="JSON file: QI items per transaction, groups and sensitive counts.")
@click.option("--seed", type=int, default=0, show_default=True)
@_fmt
@_report
@handle_errors
def band_cmd(input_path, sensitive, p, alpha, output, seed, fmt, report):
    """Band-matrix grouping (CAHD) of INPUT_PATH with SENSITIVE items."""
    data = _read(input_path, fmt)
    if sensitive.startswith("@"):
        spath = Path(sensitive[1:])
        if not spath.exists():
            raise InputError("sensitive-items file not found", path=str(spath))
        names = [x.strip() for x in spath.read_text(encoding="utf-8").splitlines() if x.strip()]
    else:
        names = [x.strip() for x in sensitive.split(",") if x.strip()]
    release = band_matrix(data, names, p=p, alpha=alpha, seed=seed)
    _write_band(release.data, Path(output))
    emit_release(release, report, figures=lambda: figures_for(release, data))
    click.echo(f"groups written to {output}")


@cli.command("inspect")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-k", type=int, default=10, show_default=True)
@click.option("-m", type=int, default=2, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@_fmt
@handle_errors
def inspect_cmd(input_path, k, m, seed, fmt):
    """Sizes and the risk of INPUT_PATH before anonymization."""
    from ._data import encode_baskets
    from ._taxonomy import Taxonomy

    data = _read(input_path, fmt)
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
