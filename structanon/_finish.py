"""The one way every anonymizer ends a release: verify strictly, then measure, timed.

Every data type's anonymizer builds a :class:`~structanon.Release` and hands it to
:func:`finish_release`, so verification always comes first (a release that fails its own
model is never measured, written or returned), the measures are switched by one flag
(``measures``), warnings and timings land in the same places, and the steps are timed by one
helper, :class:`Timings`.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from . import _progress
from .release import Release

__all__ = ["Timings", "finish_release", "add_warning", "k_warning"]

R = TypeVar("R", bound=Release)


class Timings(dict):
    """Wall seconds per step; ``with timings("search"): ...`` times one step.

    Examples
    --------
    >>> t = Timings()
    >>> with t("search"):
    ...     _ = sum(range(10))
    >>> list(t), t["search"] >= 0
    (['search'], True)
    """

    def __init__(self) -> None:
        super().__init__()
        self._start = time.perf_counter()

    @contextlib.contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        """Time ``step``; with progress on (the CLI), log its start and end on stderr."""
        _progress.phase_started(step)
        start = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - start
            self[step] = self.get(step, 0.0) + seconds
            _progress.phase_done(step, seconds)

    def total(self) -> float:
        """Seconds since these timings began."""
        return time.perf_counter() - self._start


def add_warning(release: Release, message: str) -> None:
    """Record a warning in ``release.info["warnings"]`` (reports and the CLI show it)."""
    found = release.info.setdefault("warnings", [])
    if message not in found:
        found.append(message)


def k_warning(k: int) -> str | None:
    """The warning every data type gives for ``k = 1``, which protects nobody."""
    if k == 1:
        return (
            "k = 1 gives no protection: every individual may be unique in the release; use k >= 2"
        )
    return None


def finish_release(
    release: R,
    measure: Callable[[R], Any] | None = None,
    *,
    measures: bool = True,
    timings: Timings | None = None,
    warn: bool = True,
) -> R:
    """Verify ``release`` strictly from its output alone, then run ``measure`` on it.

    Parameters
    ----------
    release : Release
    measure : callable, optional
        ``measure(release)`` fills ``release.utility`` and ``release.risk``; it runs only
        after verification passed, and only when ``measures`` is true.
    measures : bool
        The one switch of every anonymizer's utility and risk measures.
    timings : Timings, optional
        Steps timed so far; ``verify``, ``measures`` and ``total`` are added.
    warn : bool
        Also emit each recorded warning as a Python :class:`UserWarning`.

    Raises
    ------
    VerificationError
        The release fails its privacy model when re-checked from its output.
    """
    timings = timings if timings is not None else Timings()
    with timings("verify"):
        release.verify(strict=True)
    if measures and measure is not None:
        with timings("measures"):
            measure(release)
    timings["total"] = timings.total()
    release.timings = dict(timings)
    if warn:
        for message in release.info.get("warnings", []):
            warnings.warn(message, UserWarning, stacklevel=3)
    return release
