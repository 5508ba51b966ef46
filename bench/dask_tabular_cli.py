"""``structanon tabular anonymize`` at scale: the pandas engine against ``--engine dask``.

    python bench/dask_tabular_cli.py --rows 3000000 --data /work/bench_runs/tabdask/adult3m

The input is ``dask_scale.make_tabular``'s (Adult's QIs resampled, age + noise) written
once as CSV: one file for the pandas engine and the same rows as 16 part files (16
partitions) for the Dask engine.  Each command runs as a child process; its CPU seconds
(user + system, every thread) and peak RSS come from the child's rusage (``os.wait4``).
Wall seconds are of a loaded shared machine (the load average is printed beside them).
After the runs the outputs are compared as multisets of rows (sorted), in this process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

QIS = ["age", "sex", "race", "marital-status", "education"]
ARGS = ["--qi", ",".join(QIS), "--numeric", "age", "--set-qi", ",".join(QIS[1:])]
ARGS += ["-k", "10", "--algorithm", "mondrian", "--quiet"]


def make_inputs(rows: int, data: Path) -> None:
    """The Parquet parts of ``make_tabular``, then as CSV: parts and one whole file."""
    import pandas as pd
    from dask_scale import make_tabular

    parquet = data / "parquet"
    if not parquet.exists():
        make_tabular(rows, str(parquet))
    (data / "parts").mkdir(parents=True, exist_ok=True)
    files = sorted(parquet.glob("part.*.parquet"))
    with open(data / "whole.csv", "w") as whole:
        for i, f in enumerate(files):
            part = pd.read_parquet(f)
            part.to_csv(data / "parts" / f"part.{i:05d}.csv", index=False)
            part.to_csv(whole, index=False, header=i == 0)
    (data / "key").write_bytes(b"benchmark-key-0123456789abcdef")


def run(label: str, args: list[str], code: Path = ROOT) -> dict:
    """One CLI command (of the checkout ``code``) as a child: wall, CPU and peak RSS from
    its rusage."""
    cmd = [sys.executable, "-m", "structanon", "tabular", "anonymize", *args]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=code, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status != 0:
        raise SystemExit(f"{label} failed ({status}): {err[-2000:]}")
    row = {
        "label": label,
        "load": max(load, os.getloadavg()[0]),
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,
    }
    print(
        f"| {label} | {row['load']:.1f} | {wall:.1f} | {row['cpu']:.1f} | {row['peak_mib']:,.0f} |",
        flush=True,
    )
    return row


def same_rows(a: Path, b: Path) -> bool:
    import pandas as pd

    def rows(path: Path) -> pd.DataFrame:
        df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, dtype=str)
        df = df.astype(str)
        return df.sort_values(list(df.columns)).reset_index(drop=True)

    return bool(rows(a).equals(rows(b)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--runs", default="pandas-csv,dask-csv,dask-parquet,pandas-parquet")
    ap.add_argument(
        "--extra", default="", help="more options for every command, e.g. --no-measures"
    )
    ap.add_argument(
        "--before", type=Path, help="also run dask-csv from this checkout (the CLI before)"
    )
    args = ap.parse_args()
    data = args.data
    if not (data / "whole.csv").exists():
        make_inputs(args.rows, data)
    out = data / "out"
    out.mkdir(exist_ok=True)
    key = ["--key-file", str(data / "key")]
    extra = args.extra.split()
    commands = {
        "pandas-csv": [str(data / "whole.csv"), "-o", str(out / "p.csv")],
        "dask-csv": [str(data / "parts" / "*.csv"), "-o", str(out / "d.csv"), "--engine", "dask"],
        "dask-parquet": [
            str(data / "parts" / "*.csv"),
            "-o",
            str(out / "d.parquet"),
            "--engine",
            "dask",
        ],
        "pandas-parquet": [str(data / "whole.csv"), "-o", str(out / "p.parquet")],
    }
    print("| command | load | wall s | CPU s | peak MiB |\n|---|---|---|---|---|", flush=True)
    for label in args.runs.split(","):
        name = commands[label][2]
        if Path(name).is_dir():  # the Dask engine never overwrites a Parquet folder
            import shutil

            shutil.rmtree(name)
        report = ["--report", f"{name}.json"]
        run(f"{label} {args.extra}".strip(), [*commands[label], *ARGS, *key, *report, *extra])
    if args.before is not None:
        before = [str(data / "parts" / "*.csv"), "-o", str(out / "b.csv"), "--engine", "dask"]
        run(f"dask-csv, checkout {args.before.name}", [*before, *ARGS, *key], args.before)
    for a, b in (("p.csv", "d.csv"), ("p.parquet", "d.parquet"), ("p.csv", "b.csv")):
        if (out / a).exists() and (out / b).exists():
            print(f"{a} and {b} hold the same rows: {same_rows(out / a, out / b)}", flush=True)


if __name__ == "__main__":
    main()
