"""The ``structanon`` command line: ``structanon <datatype> <command> ...`` and ``demo``."""

from __future__ import annotations

import importlib
import sys
import tempfile
import time
from pathlib import Path

import click

from . import __version__

PACKAGES = {
    "tabular": "k-anonymity, l-diversity and t-closeness for microdata tables",
    "transactions": "km-anonymity, k-anonymity and band matrix for set-valued data",
    "location": "grid cloaking of GPS location logs",
    "graphs": "k-degree anonymization of social graphs",
    "querylogs": "clustering-based anonymization of search query logs",
}


class LazyGroup(click.Group):
    """Loads each data-type package's ``cli`` only when its subcommand is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(list(super().list_commands(ctx)) + list(PACKAGES))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in PACKAGES:
            module = importlib.import_module(f"{name}.cli")
            return module.cli
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, PACKAGES[name]) for name in PACKAGES]
        rows += [(n, self.commands[n].get_short_help_str()) for n in sorted(self.commands)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="structanon")
def main() -> None:
    """Anonymize personal data by its structure.

    Each data type has its own commands: run `structanon <datatype> --help`.
    Exit codes: 0 ok, 2 bad input, 3 infeasible request, 4 failed verification.
    """


@main.command(short_help="Run every anonymizer on bundled sample data.")
@click.option(
    "--output-dir",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write each demo's outputs (default: a new temporary folder).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of every demo.")
@click.option(
    "--only",
    multiple=True,
    type=click.Choice(list(PACKAGES)),
    help="Run only this data type's demo (repeatable).",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="Print only the final verdict (and any failure), not each demo's summary.",
)
def demo(output_dir: Path | None, seed: int, only: tuple[str, ...], quiet: bool) -> None:
    """Run every data type's anonymizer on bundled sample data and summarize each release."""
    from .cli_support import handle_errors

    handle_errors(_demo)(output_dir, seed, only, quiet)


def _demo(output_dir: Path | None, seed: int, only: tuple[str, ...], quiet: bool) -> None:
    """The demos, after their options are checked (exit 2 before any folder is made); a
    demo that fails is a bug (exit 4)."""
    from ._validation import check_int
    from .errors import VerificationError

    check_int(seed, "--seed", min_value=0)
    out = output_dir or Path(tempfile.mkdtemp(prefix="structanon-demo-"))
    say = (lambda *args, **kwargs: None) if quiet else click.echo
    failed = []
    for name in PACKAGES:
        if only and name not in only:
            continue
        say(click.style(f"== {name}: {PACKAGES[name]}", bold=True))
        start = time.perf_counter()
        try:
            release = importlib.import_module(f"{name}.cli").demo(out / name, seed=seed)
            verification = release.verify()
        except Exception as exc:  # report every demo, then fail at the end
            failed.append(name)
            click.echo(f"   FAILED: {name}: {type(exc).__name__}: {exc}", err=True)
            continue
        say(release.summary())
        status = "verified" if verification.passed else "FAILED VERIFICATION"
        if not verification.passed:
            failed.append(name)
        say(f"   {status}; outputs in {out / name} ({time.perf_counter() - start:.1f} s)\n")
    if failed:  # the demos' data and options are fixed: a failure is a bug
        click.echo(f"error: demo failed for: {', '.join(failed)}", err=True)
        sys.exit(VerificationError.exit_code)
    click.echo(f"All demos verified. Outputs in {out}")
