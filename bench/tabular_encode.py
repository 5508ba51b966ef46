"""CPU seconds of the optimal search's encoding (``EncodedTable``) and its class tables on
(scaled) Adult, for one checkout of the code.

Usage::

    python bench/tabular_encode.py [--code <checkout>] [--scale 100] [--repeats 3]
    python bench/tabular_encode.py --tables [--code <checkout>] [--repeats 5]

The first form builds the ``EncodedTable`` of the three QI sets of ARX's Adult requests
measured at 100x in ``bench/results/tabular_scale100.md`` (8 QIs with the sensitive
occupation: tc-eq-*; 8 QIs alone: k5-s0-8; 9 QIs alone: k100-s0-9) from the codes of a
scaled copy read as pandas categories (``scaled_copy`` of ``bench/tabular.py``, seed =
scale), and prints the fastest CPU seconds (``time.process_time``) of ``--repeats`` builds,
and for the two QI sets without the sensitive attribute the fastest search on that table
(``optimal_generalization``: the request's k-anonymity, no suppression, entropy).
The second form replays the class tables of the request ``k5-s4-9`` (5-anonymity on 9 QIs at
4%, Adult 1x): the nodes the search evaluates (recorded once from a search with the same
code), each table computed on a fresh ``EncodedTable`` in that order, fastest of
``--repeats``.  Run it once per checkout to compare (each run imports one checkout).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

_BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH]
_spec = importlib.util.spec_from_file_location("_bench_tabular", _BENCH / "tabular.py")
_tabular_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tabular_bench)
QIS9, scaled_copy, shared_data = (
    _tabular_bench.QIS9,
    _tabular_bench.scaled_copy,
    _tabular_bench.shared_data,
)
QIS8 = [c for c in QIS9 if c != "occupation"]


def _hierarchies(adult_dir: Path):
    from structanon import Hierarchy

    return {c: Hierarchy.from_csv(adult_dir / f"adult_hierarchy_{c}.csv", name=c) for c in QIS9}


def encode_main(args, adult_csv: Path) -> None:
    from structanon.models import KAnonymity
    from structanon.partition import encode_values
    from tabular._input import hierarchy_codes, sensitive_values
    from tabular._lattice import EncodedTable
    from tabular._optimal import optimal_generalization

    csv = adult_csv
    if args.scale > 1:
        csv = Path(tempfile.mkdtemp(prefix="bench-encode-")) / f"adult_{args.scale}x.csv"
        scaled_copy(pd.read_csv(adult_csv, sep=";"), args.scale, seed=args.scale).to_csv(
            csv, sep=";", index=False
        )
    df = pd.read_csv(csv, sep=";", dtype="category")
    hierarchies = _hierarchies(adult_csv.parent)
    codes = {c: hierarchy_codes(df[c], hierarchies[c], c) for c in QIS9}
    sens, domain = encode_values(sensitive_values(df["occupation"]))
    cases = [
        ("8 QIs + occupation (tc-eq-*)", QIS8, True),
        ("8 QIs (k5-s0-8)", QIS8, False),
        ("9 QIs (k100-s0-9)", QIS9, False),
    ]
    searches = {"8 QIs (k5-s0-8)": 5, "9 QIs (k100-s0-9)": 100}
    print(
        f"| QI set | rows | distinct rows | EncodedTable CPU s | search CPU s "
        f"(best of {args.repeats} each) |"
    )
    print("|---|---|---|---|---|")
    for name, qis, with_sensitive in cases:
        best, search = float("inf"), float("inf")
        for _ in range(args.repeats):
            c0 = time.process_time()
            enc = EncodedTable(
                [codes[c] for c in qis],
                [hierarchies[c] for c in qis],
                sens if with_sensitive else None,
                domain.size if with_sensitive else 0,
            )
            best = min(best, time.process_time() - c0)
            if name in searches:  # k-anonymity alone, no suppression, entropy
                c0 = time.process_time()
                optimal_generalization(enc, [KAnonymity(searches[name])], 0, "entropy", None)
                search = min(search, time.process_time() - c0)
        cell = f"{search:.3f}" if name in searches else ""
        print(
            f"| {name} | {len(df):,} | {enc.base_weight.size:,} | {best:.3f} | {cell} |",
            flush=True,
        )


def tables_main(args, adult_csv: Path) -> None:
    import tabular
    from structanon.models import KAnonymity
    from tabular._input import hierarchy_codes
    from tabular._lattice import EncodedTable

    df = pd.read_csv(adult_csv, sep=";")
    hierarchies = _hierarchies(adult_csv.parent)
    nodes: list[tuple[int, ...]] = []
    classes = EncodedTable.classes

    def recording(self, levels):
        node = tuple(int(v) for v in levels)
        if self.cached(node) is None:
            nodes.append(node)
        return classes(self, levels)

    EncodedTable.classes = recording  # type: ignore[method-assign]
    try:
        tabular.anonymize(
            df,
            hierarchies,
            None,
            [KAnonymity(5)],
            algorithm="optimal",
            suppression_limit=0.04,
            metric="entropy",
            measures=False,
            key=b"bench-encode-key-0123456789abcdef",
        )
    finally:
        EncodedTable.classes = classes  # type: ignore[method-assign]
    codes = [hierarchy_codes(df[c], hierarchies[c], c) for c in QIS9]
    best = float("inf")
    for _ in range(args.repeats):
        enc = EncodedTable(codes, [hierarchies[c] for c in QIS9])
        c0 = time.process_time()
        for node in nodes:
            enc.classes(node)
        best = min(best, time.process_time() - c0)
    per = best / max(len(nodes), 1) * 1e6
    print(
        f"k5-s4-9: {len(nodes)} class tables from {enc.base_weight.size:,} distinct rows, "
        f"{best:.3f} s CPU (best of {args.repeats}), {per:.0f} us per table"
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description="encoding and class-table CPU seconds")
    parser.add_argument("--code", default=str(_BENCH.parent), help="checkout to measure")
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tables", action="store_true", help="replay k5-s4-9's tables")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.code)
    adult_csv = shared_data("adult/adult.csv")
    if adult_csv is None:
        print("../shared/data/adult not found; nothing to measure")
        return
    (tables_main if args.tables else encode_main)(args, adult_csv)


if __name__ == "__main__":
    main(sys.argv[1:])
