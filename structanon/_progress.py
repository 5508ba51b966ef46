"""Progress of long steps, shown by the command line and silent in Python by default.

The command line turns it on (``enable(True)``) unless ``--quiet``; then every timed step
(:class:`structanon._finish.Timings`) logs one line on stderr when it starts and ends, and
:func:`bar` shows a tqdm bar when stderr is a terminal.  Library calls from Python print
nothing unless the caller enables it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm

__all__ = ["enable", "enabled", "phase_started", "phase_done", "bar"]

_STATE = {"enabled": False}


def enable(on: bool = True) -> None:
    """Turn progress output on stderr on or off (the CLI enables it unless ``--quiet``)."""
    _STATE["enabled"] = bool(on)


def enabled() -> bool:
    return _STATE["enabled"]


def phase_started(name: str) -> None:
    if _STATE["enabled"]:
        print(f"structanon: {name} ...", file=sys.stderr, flush=True)


def phase_done(name: str, seconds: float) -> None:
    if _STATE["enabled"]:
        print(f"structanon: {name} done in {seconds:.1f} s", file=sys.stderr, flush=True)


def bar(
    iterable: Iterable[Any] | None = None, desc: str = "", total: int | None = None, **kwargs: Any
) -> tqdm:
    """A tqdm bar on stderr, shown only when progress is on and stderr is a terminal."""
    show = _STATE["enabled"] and sys.stderr.isatty()
    return tqdm(
        iterable,
        desc=desc,
        total=total,
        file=sys.stderr,
        disable=not show,
        mininterval=0.5,
        **kwargs,
    )
