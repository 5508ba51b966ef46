"""The one place that decides the compute engine: pandas in memory, or Dask out of core.

Every package asks :func:`resolve_engine` which engine runs (``"pandas"`` or ``"dask"``,
``"dask"`` automatically for a Dask collection), :func:`reject_dask` refuses Dask input
where a package runs in memory only, :func:`dask_client` sets up the cluster of the command
line (a ``LocalCluster`` or an existing scheduler), and :func:`compute` runs Dask graphs
with Dask's progress bar when progress is on (the command line without ``--quiet``).  The
error messages for a missing Dask install, a bad ``--memory-limit`` or an unreachable
``--scheduler`` are written here once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

from . import _progress
from ._validation import check_choice, check_int
from .errors import InputError

__all__ = [
    "ENGINES",
    "is_dask",
    "resolve_engine",
    "require_dask",
    "reject_dask",
    "parse_memory_limit",
    "dask_client",
    "compute",
]

ENGINES = ("pandas", "dask")
INSTALL_HINT = "install it with: pip install 'dask[dataframe,distributed]'"


def is_dask(obj: Any) -> bool:
    """True for a Dask collection (DataFrame, Series, Bag, Array), without importing Dask."""
    module = type(obj).__module__ or ""
    return module.split(".")[0] in ("dask", "dask_expr") and hasattr(obj, "__dask_graph__")


def require_dask() -> Any:
    """``dask.dataframe``, or an InputError saying how to install it."""
    try:
        import dask.dataframe as dd
    except ImportError as exc:
        raise InputError(f"the Dask engine needs dask ({exc}); {INSTALL_HINT}") from None
    return dd


def resolve_engine(data: Any = None, engine: str | None = None, name: str = "engine") -> str:
    """The engine that runs: ``engine`` checked, or ``"dask"`` for Dask data, else pandas.

    Raises
    ------
    InputError
        An unknown engine, or ``engine="pandas"`` with Dask data (it would be loaded whole
        into memory without saying so).

    Examples
    --------
    >>> import pandas as pd
    >>> resolve_engine(pd.DataFrame()), resolve_engine(None, "dask")
    ('pandas', 'dask')
    """
    dask_data = data is not None and is_dask(data)
    if engine is None or engine == "auto":
        return "dask" if dask_data else "pandas"
    engine = check_choice(engine, name, ENGINES)
    if engine == "pandas" and dask_data:
        raise InputError(
            f"{name}='pandas' with a Dask {type(data).__name__}: pass {name}='dask' to run "
            "out of core, or .compute() the collection yourself if it fits in memory"
        )
    if engine == "dask":
        require_dask()
    return str(engine)


def reject_dask(data: Any, what: str) -> None:
    """Refuse a Dask collection where ``what`` runs in memory only (one clear line)."""
    if data is not None and is_dask(data):
        raise InputError(
            f"{what} runs in memory only and does not accept a Dask {type(data).__name__} "
            "(it would be loaded whole without saying so); .compute() it first if it fits "
            "in memory (limits measured in docs/dask.md)"
        )


def parse_memory_limit(value: Any, name: str = "--memory-limit") -> int | str | None:
    """Bytes per worker from ``"4GB"``, ``"512MiB"``, an integer, or ``"auto"``/None."""
    if value is None or value == "auto":
        return value
    return parse_size(value, name, 64 * 2**20, "4GB")


def parse_size(value: Any, name: str, minimum: int, example: str = "64MB") -> int:
    """Bytes from ``"64MB"``, ``"512MiB"`` or an integer; an InputError naming ``name`` for
    anything else or anything under ``minimum`` bytes."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(
            f"{name} must be a size such as '{example}', got {type(value).__name__}", value=value
        )
    try:
        from dask.utils import parse_bytes

        size = int(parse_bytes(value))
    except (ValueError, TypeError, ImportError) as exc:
        raise InputError(
            f"{name} must be a size such as '{example}' ({exc})", value=value
        ) from None
    if size < minimum:
        raise InputError(f"{name} must be at least {minimum:,} bytes", value=value)
    return size


@contextlib.contextmanager
def dask_client(
    scheduler: str | None = None,
    workers: int | None = None,
    memory_limit: Any = None,
    threads: int | None = None,
) -> Iterator[Any]:
    """A distributed client: to ``scheduler`` if given, else on a fresh ``LocalCluster``.

    The local cluster has ``workers`` worker processes (default one, sharing the memory of
    this process through threads, the fastest on one machine) of ``threads`` threads each
    (default: the cores divided among the workers) and ``memory_limit`` bytes each.
    """
    require_dask()
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise InputError(f"the Dask engine needs distributed ({exc}); {INSTALL_HINT}") from None
    if scheduler is not None:
        if workers is not None or memory_limit is not None:
            raise InputError(
                "--workers and --memory-limit apply to a local cluster, not --scheduler"
            )
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot reach the Dask scheduler: {exc}", value=scheduler) from None
        with client:
            yield client
        return
    workers = None if workers is None else check_int(workers, "--workers", min_value=1)
    quiet = contextlib.ExitStack()  # the cluster's own log lines (start, stop) are noise here
    for name in ("distributed", "distributed.nanny", "distributed.worker"):
        logger = logging.getLogger(name)
        quiet.callback(logger.setLevel, logger.level)
        # a task's failure reaches the client, which reports it (bad input: the message
        # naming file and line); the worker's own "Compute Failed" dump is noise
        logger.setLevel(logging.CRITICAL if name == "distributed.worker" else logging.ERROR)
    limit = parse_memory_limit(memory_limit)
    cores = os.cpu_count() or 1
    n = workers or 1
    per_worker = threads or max(1, cores // n)
    # The progress bar's feed on the scheduler is cancelled when the cluster closes, which
    # the scheduler logs as an error with a traceback: not one at shutdown.
    scheduler_log = logging.getLogger("distributed.scheduler")
    quiet.callback(scheduler_log.setLevel, scheduler_log.level)
    with quiet, contextlib.ExitStack() as stack:
        cluster = stack.enter_context(
            LocalCluster(
                n_workers=n,
                threads_per_worker=per_worker,
                processes=workers is not None or limit not in (None, "auto"),
                memory_limit=limit if limit is not None else "auto",
                dashboard_address="127.0.0.1:0",
            )
        )
        client = stack.enter_context(Client(cluster))
        stack.callback(scheduler_log.setLevel, logging.CRITICAL)  # runs first on exit
        yield client


def _client() -> Any:
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


def compute(*collections: Any) -> tuple[Any, ...]:
    """``dask.compute(*collections)``, with Dask's progress bar on stderr when progress is on.

    On a distributed client the futures are shown by ``distributed.progress``; on the
    local schedulers by ``dask.diagnostics.ProgressBar``.
    """
    import pandas as pd

    try:
        return _compute(*collections)
    except pd.errors.ParserError as exc:  # a malformed line met by a lazy reader
        raise InputError(f"cannot parse the input: {exc} (wrong --sep?)") from None


def _compute(*collections: Any) -> tuple[Any, ...]:
    import dask

    if not _progress.enabled():
        return tuple(dask.compute(*collections))
    client = _client()
    with contextlib.redirect_stdout(sys.stderr):  # stdout carries the summary
        if client is None:
            from dask.diagnostics import ProgressBar

            with ProgressBar(out=sys.stderr):
                return tuple(dask.compute(*collections))
        from distributed import progress

        futures = client.compute(list(collections))
        progress(futures)
        print(file=sys.stderr)
        return tuple(client.gather(futures))
