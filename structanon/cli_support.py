"""Helpers shared by every package's command line: errors to exit codes, summaries, progress."""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from tqdm import tqdm

from . import _progress
from ._engine import ENGINES, dask_client, parse_memory_limit
from ._validation import ON_BAD_LINES, check_encoding, check_int, file_suffix
from .errors import InputError, StructanonError
from .release import Release
from .report import Figure, format_summary, provenance, write_report

__all__ = [
    "handle_errors",
    "emit_release",
    "progress",
    "show_progress",
    "release_options",
    "stack",
    "assess_options",
    "assessment",
    "emit_assessment",
    "engine_options",
    "ENGINE_HELP",
    "check_engine_options",
    "engine_context",
    "on_bad_lines_option",
    "ON_BAD_LINES",
    "ON_BAD_LINES_HELP",
    "encoding_option",
    "ENCODING_HELP",
    "dropped_lines_notice",
    "deprecated",
    "SEED_HELP",
    "KEY_HELP",
    "EXIT_OK",
    "EXIT_INPUT",
    "EXIT_INFEASIBLE",
]

EXIT_OK, EXIT_INPUT, EXIT_INFEASIBLE = 0, 2, 3
_ERRORS = StructanonError.__module__
F = TypeVar("F", bound=Callable[..., Any])


def _check_finite_floats(kwargs: dict[str, Any]) -> None:
    """Refuse ``nan`` and ``inf`` given to any float option of the running command (click's
    ``float`` and ``FloatRange`` accept them, and they pass every ``<`` / ``>`` check)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    for param in ctx.command.params:
        if not isinstance(param.type, click.types.FloatParamType) or param.name not in kwargs:
            continue
        value = kwargs[param.name]
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(v, float) and not math.isfinite(v):
                name = max(param.opts, key=len) if param.opts else param.name
                raise InputError(f"{name} must be a finite number, got {v}")


def separator(_ctx: Any, _param: Any, value: str | None) -> str | None:
    r"""The ``--sep`` callback every data type shares: ``\t`` or ``tab`` is a tab; any
    other value is kept as typed (each command checks its own length rule).

    Examples
    --------
    >>> separator(None, None, "tab"), separator(None, None, "\\t"), separator(None, None, ";")
    ('\t', '\t', ';')
    """
    if value is not None and value.strip().lower() in ("\\t", "tab"):
        return "\t"
    return value


def handle_errors(func: F) -> F:
    """Turn structanon errors into a one-line message on stderr and the error's exit code.

    Input errors exit 2, infeasible requests 3, failed verification 4.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            _check_finite_floats(kwargs)
            return func(*args, **kwargs)
        except StructanonError as exc:
            # the public class (InputError ...), not a reader's own subclass of it
            kind = next(c.__name__ for c in type(exc).__mro__ if c.__module__ == _ERRORS)
            click.echo(f"error ({kind}): {exc}", err=True)
            sys.exit(exc.exit_code)
        except UnicodeError as exc:  # a reader that missed a decoding error: still bad input
            click.echo(
                f"error (InputError): cannot decode the input as text: {exc}; "
                "is it the right file, or in another encoding (--encoding)?",
                err=True,
            )
            sys.exit(EXIT_INPUT)
        except EOFError as exc:  # a truncated compressed stream a reader did not catch
            click.echo(f"error (InputError): the input ends early (truncated?): {exc}", err=True)
            sys.exit(EXIT_INPUT)
        except OSError as exc:  # unreadable input, unwritable output, disk full
            where = f" ({exc.filename!r})" if getattr(exc, "filename", None) else ""
            click.echo(f"error (InputError): {exc.strerror or exc}{where}", err=True)
            sys.exit(EXIT_INPUT)
        except MemoryError:
            click.echo(
                "error (InfeasibleError): out of memory; try a smaller input or "
                "skip the measures (--no-measures)",
                err=True,
            )
            sys.exit(EXIT_INFEASIBLE)
        finally:
            _progress.enable(False)  # progress is the command's; Python callers stay quiet

    return wrapper  # type: ignore[return-value]


def emit_release(
    release: Release,
    report: str | Path | None = None,
    figures: Sequence[Figure] | Callable[[], Sequence[Figure]] = (),
    quiet: bool = False,
    inputs: Sequence[str | Path] = (),
    stage: Callable[[str | Path], Path] | None = None,
) -> None:
    """Print the release summary and write the report, if asked.

    ``figures`` may be a callable, so figures are only drawn for HTML reports. ``inputs``
    (the files the command read) go into the report's provenance with their SHA-256.  Inside
    :func:`structanon.io.staged_outputs`, pass its ``stage`` so the report is written with
    the other outputs, all or nothing; messages name the real path.
    """
    if not release.provenance:
        release.provenance = provenance(inputs)
    if not quiet:
        click.echo(format_summary(release))
    if report is not None:
        path = Path(report)
        html_report = file_suffix(path) in (".html", ".htm")
        figs = (
            figures()
            if callable(figures) and html_report
            else (figures if not callable(figures) else ())
        )
        write_report(release, stage(path) if stage is not None else path, figs)
        if not quiet:
            click.echo(f"report written to {path}")


def progress(
    iterable: Iterable[Any] | None = None, desc: str = "", total: int | None = None, **kwargs: Any
) -> tqdm:
    """A tqdm progress bar on stderr, hidden when stderr is not a terminal.

    Without ``iterable`` it is a manual bar: call ``.update(n)`` and ``.close()`` (or use it
    as a context manager) around loops that do not iterate over one sequence.
    """
    return tqdm(
        iterable,
        desc=desc,
        total=total,
        file=sys.stderr,
        disable=kwargs.pop("disable", None if sys.stderr.isatty() else True),
        **kwargs,
    )


def show_progress(quiet: bool) -> None:
    """Log each timed step on stderr unless ``quiet`` (call first in every command); print
    the notices of former option spellings the command line used (see :func:`deprecated`)."""
    _progress.enable(not quiet)
    ctx = click.get_current_context(silent=True)
    notes = ctx.meta.pop(_DEPRECATED, []) if ctx is not None else []
    if not quiet:
        for note in dict.fromkeys(notes):
            click.echo(f"warning: {note}", err=True)


_DEPRECATED = "structanon.deprecated"


def deprecated(ctx: click.Context | None, note: str) -> None:
    """Remember that the command line used a former spelling (``note`` says which, and its
    new one); :func:`show_progress` prints it once on stderr, unless ``--quiet``."""
    if ctx is not None:
        ctx.meta.setdefault(_DEPRECATED, []).append(note)


SEED_HELP = (
    "Public seed of the algorithm's own choices and the measures; it never decides "
    "the published order, labels or ids."
)
KEY_HELP = (
    "Secret key file: pseudonyms and publication order become reproducible for whoever "
    "holds it (default: $STRUCTANON_PSEUDONYM_KEY, else a fresh random key)."
)


def stack(*decorators: Callable) -> Callable:
    """One decorator applying ``decorators`` as if written top to bottom above a function
    (click options in their help order)."""

    def apply(func: Callable) -> Callable:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


def release_options(func: F) -> F:
    """The options every ``anonymize`` command shares, with one name and meaning each.

    ``-o/--output``, ``--report``, ``--seed``, ``--key-file``, ``--no-measures``,
    ``--quiet``; the command receives ``output``, ``report``, ``seed``, ``key_file``,
    ``no_measures`` and ``quiet``.
    """
    options = [
        click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False, path_type=Path),
            required=True,
            help="Where to write the anonymized data.",
        ),
        click.option(
            "--report",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Also write a report: FILE.json or FILE.html (self-contained).",
        ),
        click.option("--seed", type=int, default=0, show_default=True, help=SEED_HELP),
        click.option(
            "--key-file",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help=KEY_HELP,
        ),
        click.option(
            "--no-measures",
            is_flag=True,
            help="Skip the utility and risk measures (verification still runs).",
        ),
        click.option("--quiet", is_flag=True, help="Print nothing but errors."),
    ]
    return stack(*options)(func)


def assessment(
    data_type: str, input_path: str | Path, risk: dict[str, Any], warnings: Sequence[str] = ()
) -> dict[str, Any]:
    """The document every ``assess`` command emits (the same shape for all data types)."""
    from ._json import to_jsonable

    return to_jsonable(
        {
            "data_type": data_type,
            "input": Path(input_path).name,
            "risk": risk,
            "warnings": list(warnings),
            "provenance": provenance([input_path]),
        }
    )


def emit_assessment(
    doc: dict[str, Any],
    report: str | Path | None = None,
    as_json: bool = False,
    quiet: bool = False,
) -> None:
    """Print an assessment as a table (or JSON with ``as_json``) and write ``report`` (JSON);
    with ``quiet``, only its warnings, on stderr."""
    import json

    from .io import atomic_write
    from .summary import _table, flatten

    if as_json:
        click.echo(json.dumps(doc, indent=2))
    elif not quiet:
        lines = [
            f"structanon {doc['data_type']} assessment of {doc['input']} (before any "
            "anonymization)",
            "",
        ]
        lines += _table([[k, v] for k, v in flatten(doc["risk"]).items()], ["measure", "value"])
        lines += [f"warning: {w}" for w in doc["warnings"]]
        click.echo("\n".join(lines))
    else:  # --quiet: no table, but the warnings (on stderr)
        for warning in doc["warnings"]:
            click.echo(f"warning: {warning}", err=True)
    if report is not None:
        with atomic_write(report) as fh:
            json.dump(doc, fh, indent=2)


def assess_options(func: F) -> F:
    """The options every ``assess`` command shares: ``--report FILE.json``, ``--json``,
    ``--seed``, ``--quiet``."""
    options = [
        click.option(
            "--report",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Also write the assessment as FILE.json.",
        ),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="Print the assessment as JSON instead of a table.",
        ),
        click.option("--seed", type=int, default=0, show_default=True, help=SEED_HELP),
        click.option("--quiet", is_flag=True, help="Print nothing but errors."),
    ]
    return stack(*options)(func)


ENGINE_HELP = "pandas: in memory; dask: out of core on a Dask cluster."


def engine_options(engine_help: str = ENGINE_HELP) -> Callable[[F], F]:
    """``--engine`` (help ``engine_help``) and the Dask cluster: ``--workers``,
    ``--memory-limit``, ``--scheduler``; check them with :func:`check_engine_options`."""
    options = [
        click.option(
            "--engine",
            type=click.Choice(list(ENGINES)),
            default="pandas",
            show_default=True,
            help=engine_help,
        ),
        click.option(
            "--workers",
            type=int,
            default=None,
            help="Dask engine: worker processes of the local cluster (default: one "
            "in-process worker using every core).",
        ),
        click.option(
            "--memory-limit",
            default=None,
            help="Dask engine: memory limit per worker process, e.g. 4GB.",
        ),
        click.option(
            "--scheduler",
            default=None,
            help="Dask engine: address of an existing scheduler (tcp://host:8786) "
            "instead of a local cluster.",
        ),
    ]

    return stack(*options)


def check_engine_options(
    engine: str, workers: int | None, memory_limit: str | None, scheduler: str | None
) -> None:
    """Refuse cluster options without ``--engine dask``, a bad ``--workers`` or
    ``--memory-limit`` (:class:`InputError`, before any input is read)."""
    if engine != "dask" and (workers, memory_limit, scheduler) != (None, None, None):
        raise InputError("--workers, --memory-limit and --scheduler need --engine dask")
    if workers is not None:
        check_int(workers, "--workers", min_value=1)
    parse_memory_limit(memory_limit)


def engine_context(
    engine: str, workers: int | None, memory_limit: str | None, scheduler: str | None
) -> contextlib.AbstractContextManager[Any]:
    """The Dask client of ``--engine dask`` (a no-op context for pandas)."""
    if engine != "dask":
        return contextlib.nullcontext()
    return dask_client(scheduler, workers, memory_limit)


ON_BAD_LINES_HELP = (
    "Input lines (rows) whose values cannot be read (a wrong number of fields, a missing "
    "user, a time or coordinate that does not parse): raise stops with exit 2 naming the "
    "file and the first such line; drop drops them, counts them and prints the count "
    "and their first line numbers."
)


class _BadLinesChoice(click.Choice):
    """``raise`` or ``drop``; a command's former values (``former``: old -> new, not shown
    in the help) are read as their new value, with a notice."""

    def __init__(self, former: Mapping[str, str]) -> None:
        super().__init__(ON_BAD_LINES)
        self.former = dict(former)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in self.former:
            new = self.former[value]
            deprecated(
                ctx,
                f"--on-bad-lines {value} is a former value; read as --on-bad-lines {new} "
                "(dropped lines are counted and printed)",
            )
            return new
        return super().convert(value, param, ctx)


def on_bad_lines_option(former: Mapping[str, str] | None = None) -> Callable[[F], F]:
    """``--on-bad-lines {raise,drop}`` (default ``raise``), one name, default and help in
    every command whose reader can drop bad lines; ``former`` maps a command's former
    values to ``raise`` or ``drop`` (accepted, not listed, with a notice).  Print what was
    dropped with :func:`dropped_lines_notice`."""
    return click.option(
        "--on-bad-lines",
        type=_BadLinesChoice(former or {}),
        default="raise",
        show_default=True,
        help=ON_BAD_LINES_HELP,
    )


def dropped_lines_notice(
    count: int,
    lines: Sequence[Any] = (),
    path: str | Path | None = None,
    reasons: Mapping[str, int] | None = None,
    shown: int = 5,
    unit: str = "line",
) -> None:
    """Tell on stderr, even with ``--quiet``, that ``--on-bad-lines drop`` dropped ``count``
    lines of ``path``: the count, the first ``shown`` of ``lines`` (their numbers) and
    ``reasons`` (reason -> count).  ``unit`` names what the numbers count: ``"line"``
    (a text file's lines) or ``"row"`` (a Parquet file's 1-based rows).  Nothing is
    printed when nothing was dropped."""
    if not count:
        return
    where = f" of {path}" if path is not None else ""
    listed = [str(n) for n in list(lines)[:shown]]
    numbers = ""
    if listed:
        more = ", ..." if count > len(listed) else ""
        numbers = f": {unit}{'s' if len(listed) > 1 else ''} {', '.join(listed)}{more}"
    why = ""
    if reasons:
        why = " (" + "; ".join(f"{reason}: {n:,}" for reason, n in reasons.items()) + ")"
    click.echo(
        f"warning: {count:,} bad {unit}(s){where} dropped (--on-bad-lines drop){numbers}{why}",
        err=True,
    )


ENCODING_HELP = (
    "Text encoding of the input data, e.g. latin-1 or cp1252 (hierarchy, taxonomy and "
    "other side files are read as UTF-8)."
)


def _check_encoding(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    try:
        return check_encoding(value, "--encoding")
    except InputError as exc:
        raise click.BadParameter(exc.message.removeprefix("--encoding: "), ctx, param) from None


def encoding_option() -> Callable[[F], F]:
    """``--encoding`` (default ``utf-8``), one name, default and help in every command that
    reads text; an unknown name is refused (exit 2, naming the option) before anything is
    read."""
    return click.option(
        "--encoding",
        default="utf-8",
        show_default=True,
        callback=_check_encoding,
        help=ENCODING_HELP,
    )
