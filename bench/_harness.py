"""Shared helpers for the benchmark scripts (not part of the package).

``measure`` runs a callable in a forked child process so each case's peak resident
memory is its own; ``record_section`` rewrites one named section of ``bench/RESULTS.md``
under a file lock, so several benchmark scripts can record results independently.
"""

from __future__ import annotations

import fcntl
import multiprocessing as mp
import os
import platform
import resource
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "RESULTS.md"
SHARED_DATA = Path(
    os.environ.get("STRUCTANON_SHARED_DATA", BENCH_DIR.parent.parent / "shared" / "data")
)


def shared_data(relative: str) -> Path | None:
    """Path of a file under ``../shared/data``, or None where it is absent."""
    path = SHARED_DATA / relative
    return path if path.exists() else None


def _child(conn, fn, args, kwargs):
    try:
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        seconds = time.perf_counter() - start
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        conn.send(("ok", result, seconds, peak_kib / 1024.0))
    except BaseException:  # report any failure to the parent, which re-raises
        conn.send(("error", traceback.format_exc(), 0.0, 0.0))
    finally:
        conn.close()


def measure(fn: Callable[..., Any], *args: Any, timeout: float | None = None, **kwargs: Any):
    """Run ``fn(*args, **kwargs)`` in a forked child.

    Returns ``(result, wall_seconds, peak_rss_mib)``; the result must be picklable.
    Raises RuntimeError with the child's traceback on failure, TimeoutError on timeout.
    """
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args, kwargs))
    proc.start()
    child.close()
    if not parent.poll(timeout):
        proc.kill()
        proc.join()
        raise TimeoutError(f"{getattr(fn, '__name__', fn)} exceeded {timeout} s")
    status, payload, seconds, peak = parent.recv()
    proc.join()
    if status != "ok":
        raise RuntimeError(payload)
    return payload, seconds, peak


def machine_line() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    def fmt(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
        if isinstance(value, int):
            return f"{value:,}"
        return str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def record_section(name: str, markdown: str) -> None:
    """Replace the section ``name`` of bench/RESULTS.md (created if missing) with ``markdown``."""
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    block = f"{begin}\n{markdown.strip()}\n{end}\n"
    lock_path = BENCH_DIR / ".results.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            tail = rest.split(end, 1)[1].lstrip("\n")
            text = head + block + ("\n" + tail if tail else "")
        else:
            text = text.rstrip("\n") + "\n\n" + block
        tmp = RESULTS.with_suffix(".md.tmp")
        tmp.write_text(text)
        os.replace(tmp, RESULTS)
