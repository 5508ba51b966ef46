"""Cost of the command line's progress output: ``--quiet`` against progress on stderr.

Runs each command several times in three modes, interleaved so load drifts hit all modes
alike, and compares the CPU seconds of the child processes (user + system):

* ``quiet``: ``--quiet`` (no progress at all);
* ``log``: progress on, stderr a pipe (one line per phase);
* ``tty``: progress on, stderr a pseudo-terminal (tqdm bars, the interactive case), run
  through ``script(1)``.

Usage::

    python bench/progress.py --fixes 3000000 --repeats 3 --out bench/results/progress.md
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RETAIL = (
    Path(
        os.environ.get(
            "STRUCTANON_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"
        )
    )
    / "retail"
    / "retail.dat"
)
MODES = ("quiet", "log", "tty")


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], mode: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``argv`` in ``mode``."""
    argv = [*argv, "--quiet"] if mode == "quiet" else list(argv)
    cpu, wall = _cpu_children(), time.perf_counter()
    if mode == "tty":  # stderr is a terminal: tqdm bars are drawn
        cmd = ["script", "-qefc", shlex.join(argv), "/dev/null"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    else:
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return _cpu_children() - cpu, time.perf_counter() - wall


def measure(name: str, argv: list[str], repeats: int) -> dict[str, object]:
    cpu: dict[str, list[float]] = {m: [] for m in MODES}
    wall: dict[str, list[float]] = {m: [] for m in MODES}
    for rep in range(repeats):
        for mode in MODES:
            c, w = run(argv, mode)
            cpu[mode].append(c)
            wall[mode].append(w)
            print(f"{name} rep {rep} {mode}: cpu {c:.2f} s wall {w:.2f} s", file=sys.stderr)
    return {"name": name, "command": shlex.join(argv), "cpu": cpu, "wall": wall}


def account(argv: list[str]) -> tuple[int, float, float]:
    """In-process run of a command with progress on: (progress calls, seconds spent in
    them, CPU seconds of the whole run).  Every progress line of the location and
    transactions commands goes through ``structanon._progress`` (they draw no tqdm bar)."""
    from click.testing import CliRunner

    from structanon import _progress
    from structanon.cli import main as cli_main

    spent = [0, 0.0]

    def timed(function):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += 1
                spent[1] += time.perf_counter() - start

        return wrapper

    originals = (_progress.phase_started, _progress.phase_done)
    _progress.phase_started, _progress.phase_done = (timed(f) for f in originals)
    try:
        cpu = time.process_time()
        result = CliRunner().invoke(cli_main, argv)
        cpu = time.process_time() - cpu
    finally:
        _progress.phase_started, _progress.phase_done = originals
    if result.exit_code != 0:
        raise RuntimeError(result.output)
    return int(spent[0]), float(spent[1]), cpu


def table(results: list[dict[str, object]]) -> str:
    lines = [
        "| run | mode | CPU s (median) | CPU s (all runs) | wall s (median) | CPU vs --quiet |",
        "|---|---|---|---|---|---|",
    ]
    for res in results:
        cpu, wall = res["cpu"], res["wall"]
        assert isinstance(cpu, dict) and isinstance(wall, dict)
        base = statistics.median(cpu["quiet"])
        for mode in MODES:
            med = statistics.median(cpu[mode])
            runs = ", ".join(f"{c:.1f}" for c in cpu[mode])
            delta = "-" if mode == "quiet" else f"{100 * (med / base - 1):+.1f}%"
            lines.append(
                f"| {res['name']} | {mode} | {med:.2f} | {runs} | "
                f"{statistics.median(wall[mode]):.1f} | {delta} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fixes", type=int, default=3_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-location", action="store_true")
    ap.add_argument("--skip-retail", action="store_true")
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--account",
        action="store_true",
        help="only count the progress calls of one in-process run of each command and time them",
    )
    args = ap.parse_args()
    if args.account:
        _account_main(args)
        return
    py = [sys.executable, "-m", "structanon"]
    results = []
    with tempfile.TemporaryDirectory(prefix="progress-bench-") as tmp:
        out = Path(tmp)
        if not args.skip_location:
            sys.path.insert(0, os.getcwd())
            from location.synthetic import synthetic_log

            log = out / f"synthetic_{args.fixes}.csv"
            synthetic_log(args.fixes, args.fixes // 100, seed=0).to_csv(log, index=False)
            argv = [*py, "location", "anonymize", str(log), "-k", "10", "--window", "15min"]
            argv += ["-o", str(out / "cloaked.csv"), "--key-file", str(_key(out))]
            results.append(measure(f"location, {args.fixes:,} fixes, k=10", argv, args.repeats))
        if not args.skip_retail:
            argv = [*py, "transactions", "anonymize", str(RETAIL), "-k", "5", "-m", "2"]
            argv += ["-o", str(out / "retail.dat"), "--key-file", str(_key(out))]
            results.append(measure("retail km, k=5 m=2", argv, args.repeats))
    text = table(results)
    commands = "\n".join(f"    {res['command']}" for res in results)
    load = os.getloadavg()[0]
    doc = (
        "# Cost of progress output\n\n"
        f"{text}\n\nCommands (paths in a temporary folder), each run with and "
        "without `--quiet`, stderr a pipe (`log`) or a pseudo-terminal through `script(1)` "
        f"(`tty`):\n\n{commands}\n\n1-minute load average at the end: {load:.2f} "
        "(2 cores shared with other jobs: wall times are upper bounds; CPU time is the "
        "measure compared).\n"
    )
    print(doc)
    if args.out:
        args.out.write_text(doc)


def _account_main(args: argparse.Namespace) -> None:
    sys.path.insert(0, os.getcwd())
    from location.synthetic import synthetic_log

    rows = []
    with tempfile.TemporaryDirectory(prefix="progress-account-") as tmp:
        out = Path(tmp)
        log = out / "log.csv"
        synthetic_log(args.fixes, args.fixes // 100, seed=0).to_csv(log, index=False)
        commands = {
            f"location, {args.fixes:,} fixes, k=10": [
                *("location", "anonymize", str(log), "-k", "10", "-o", str(out / "c.csv")),
            ],
            "retail km, k=5 m=2": [
                *("transactions", "anonymize", str(RETAIL), "-k", "5", "-m", "2"),
                *("-o", str(out / "r.dat")),
            ],
        }
        for name, argv in commands.items():
            calls, seconds, cpu = account([*argv, "--key-file", str(_key(out))])
            rows.append(
                f"| {name} | {calls} | {1000 * seconds:.2f} | {cpu:.1f} | "
                f"{100 * seconds / cpu:.4f}% |"
            )
    print(
        "| run (in-process, progress on) | progress calls | ms in them | run CPU s | share |\n"
        "|---|---|---|---|---|\n" + "\n".join(rows)
    )


def _key(folder: Path) -> Path:
    key = folder / "key.bin"
    if not key.exists():
        key.write_bytes(b"progress-bench-key-0123456789")
    return key


if __name__ == "__main__":
    main()
