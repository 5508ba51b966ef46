"""Helpers shared by every package's command line: errors to exit codes, summaries, progress."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from tqdm import tqdm

from . import _progress
from .errors import StructanonError
from .release import Release
from .report import format_summary, provenance, write_report

__all__ = ["handle_errors", "emit_release", "progress", "show_progress", "EXIT_OK", "EXIT_INPUT",
           "EXIT_INFEASIBLE"]

EXIT_OK, EXIT_INPUT, EXIT_INFEASIBLE = 0, 2, 3
F = TypeVar("F", bound=Callable[..., Any])


def handle_errors(func: F) -> F:
    """Turn structanon errors into a one-line message on stderr and the error's exit code.

    Input errors exit 2, infeasible requests 3, failed verification 4.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except StructanonError as exc:
            kind = type(exc).__name__
            click.echo(f"error ({kind}): {exc}", err=True)
            sys.exit(exc.exit_code)
        except UnicodeError as exc:  # a reader that missed a decoding error: still bad input
            click.echo(f"error (InputError): cannot decode the input as text: {exc}; "
                       "is it the right file, or in another encoding?", err=True)
            sys.exit(EXIT_INPUT)
        except OSError as exc:  # unreadable input, unwritable output, disk full
            where = f" ({exc.filename!r})" if getattr(exc, "filename", None) else ""
            click.echo(f"error (InputError): {exc.strerror or exc}{where}", err=True)
            sys.exit(EXIT_INPUT)
        except MemoryError:
            click.echo("error (InfeasibleError): out of memory; try a smaller input or "
                       "skip the measures (--no-measures)", err=True)
            sys.exit(EXIT_INFEASIBLE)
        finally:
            _progress.enable(False)  # progress is the command's; Python callers stay quiet

    return wrapper  # type: ignore[return-value]


def emit_release(release: Release, report: str | Path | None = None,
                 figures: Sequence[tuple[str, Any]] | Callable[[], Sequence[tuple[str, Any]]] = (),
                 quiet: bool = False, inputs: Sequence[str | Path] = ()) -> None:
    """Print the release summary and write the report, if asked.

    ``figures`` may be a callable, so figures are only drawn for HTML reports. ``inputs``
    (the files the command read) go into the report's provenance with their SHA-256.
    """
    if not release.provenance:
        release.provenance = provenance(inputs)
    if not quiet:
        click.echo(format_summary(release))
    if report is not None:
        path = Path(report)
        figs = figures() if callable(figures) and path.suffix.lower() in (".html", ".htm") else (
            figures if not callable(figures) else ())
        write_report(release, path, figs)
        if not quiet:
            click.echo(f"report written to {path}")


def progress(iterable: Iterable[Any] | None = None, desc: str = "", total: int | None = None,
             **kwargs: Any) -> tqdm:
    """A tqdm progress bar on stderr, hidden when stderr is not a terminal.

    Without ``iterable`` it is a manual bar: call ``.update(n)`` and ``.close()`` (or use it
    as a context manager) around loops that do not iterate over one sequence.
    """
    return tqdm(iterable, desc=desc, total=total, file=sys.stderr,
                disable=kwargs.pop("disable", None if sys.stderr.isatty() else True), **kwargs)


def show_progress(quiet: bool) -> None:
    """Log each timed step on stderr unless ``quiet`` (call first in every command)."""
    _progress.enable(not quiet)
