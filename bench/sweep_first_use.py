"""What one fresh process pays for the optimal search's compiled sweep (tabular/_sweep.py).

A new Python process reads Adult and runs ARX's ``bl-b1-s100-loss`` request (basic
1-likeness, loss, 100% suppression, 8 QIs) once, timed by wall clock, in three settings:

* ``first use``: Numba's cache in an empty folder (``NUMBA_CACHE_DIR``), so the kernel is
  compiled in that process, as on the first use on a machine;
* ``cached``: the same folder again, so the compiled code is loaded from disk;
* ``no sweep``: the search without the sweep (as without Numba).

Usage: ``python bench/sweep_first_use.py [--repeats N]`` (prints a markdown table).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _harness import machine_line, markdown_table, shared_data

from tabular import QIS9  # bench/tabular.py (this folder comes first on the path)

ROOT = Path(__file__).resolve().parent.parent
QIS = [c for c in QIS9 if c != "occupation"]  # ARX's 8 QIs; occupation is sensitive

CHILD = """
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import pandas as pd
import tabular
from structanon import Hierarchy
from structanon.models import BLikeness
from tabular import _sweep
if {off!r}:
    _sweep._KERNEL = False
folder = {folder!r}
df = pd.read_csv(folder + "/adult.csv", sep=";")
h = {{c: Hierarchy.from_csv(f"{{folder}}/adult_hierarchy_{{c}}.csv", name=c) for c in {qis!r}}}
t1 = time.perf_counter()
r = tabular.anonymize(df, h, "occupation", [BLikeness(1.0)], algorithm="optimal",
                      suppression_limit=1.0, metric="loss", measures=False, key=b"k" * 32)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, r.info["score"]["value"], r.info["lattice"]["checked"])
"""


def run(folder: Path, cache: str, off: bool) -> list[str]:
    code = CHILD.format(root=str(ROOT), off=off, folder=str(folder), qis=QIS)
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    start, search, score, checked = out.stdout.split()
    return [f"{float(start):.2f}", f"{float(search):.2f}", f"{float(score):.10f}", checked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="cached / no-sweep runs")
    args = parser.parse_args()
    adult = shared_data("adult/adult.csv")
    if adult is None:
        print("../shared/data/adult not found; nothing to measure")
        return
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        rows.append(["first use (compiles)"] + run(adult.parent, cache, False))
        for _ in range(args.repeats):
            rows.append(["cached"] + run(adult.parent, cache, False))
    for _ in range(args.repeats):
        rows.append(["no sweep"] + run(adult.parent, tempfile.gettempdir(), True))
    print(machine_line())
    print(
        markdown_table(
            ["process", "imports + read s", "anonymize s (wall)", "loss", "nodes checked"], rows
        )
    )


if __name__ == "__main__":
    main()
