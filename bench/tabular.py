"""Benchmark of the tabular package against anonypy (Mondrian) and anjana on UCI Adult.

Usage::

    /work/venv/bin/python bench/tabular.py [--quick] [--scale 1 10 100] [--tools ...]

Adult from ``../shared/data/adult`` (QIs sex, age, race, marital-status, education,
native-country, workclass; sensitive occupation).  Scaled copies: the 1x table plus seeded
copies in which age is jittered by up to +-5 (kept within 17..90) and each categorical QI
is resampled from its column's distribution with probability 0.3.  Every case runs in a
forked child (wall time of the anonymization alone, peak RSS of the child), and every
output is verified with pycanon (k, l, t).  Results go to bench/RESULTS.md, section
"tabular".
"""

from __future__ import annotations

import argparse
import importlib.util  # noqa: E402
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

# this script's folder comes first on sys.path, where its own name would shadow the
# tabular package: drop it, and load the harness from its file
_BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH]
_spec = importlib.util.spec_from_file_location("_harness", _BENCH / "_harness.py")
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)
machine_line, markdown_table, measure = (
    _harness.machine_line,
    _harness.markdown_table,
    _harness.measure,
)
record_section, shared_data = _harness.record_section, _harness.shared_data

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
SENSITIVE = "occupation"
CATEGORICAL = [c for c in QIS if c != "age"]


def scaled_copy(df: pd.DataFrame, factor: int, seed: int = 0) -> pd.DataFrame:
    """1x plus ``factor - 1`` jittered / resampled copies (see the module docstring)."""
    if factor == 1:
        return df
    rng = np.random.default_rng(seed)
    parts = [df]
    for _ in range(factor - 1):
        copy = df.copy()
        jitter = rng.integers(-5, 6, size=len(df))
        copy["age"] = np.clip(df["age"].to_numpy() + jitter, 17, 90)
        for column in CATEGORICAL:
            values = df[column].to_numpy()
            resample = rng.random(len(df)) < 0.3
            copy.loc[resample, column] = rng.choice(values, size=int(resample.sum()))
        parts.append(copy)
    return pd.concat(parts, ignore_index=True)


def _models(k, l_div, t):
    from structanon.models import DistinctLDiversity, KAnonymity, TCloseness

    return (
        [KAnonymity(k)]
        + ([DistinctLDiversity(l_div)] if l_div else [])
        + ([TCloseness(t)] if t is not None else [])
    )


def _hierarchies(adult_dir: Path):
    from structanon import Hierarchy

    return {c: Hierarchy.from_csv(adult_dir / f"adult_hierarchy_{c}.csv", name=c) for c in QIS}


def _quality(released: pd.DataFrame, original: pd.DataFrame, n: int, specs, k, l_div, t):
    """Measures of a released table (records as rows), with pycanon verification."""
    from pycanon import anonymity

    from tabular import metrics

    data = released.reset_index(drop=True)
    sizes = data.groupby(QIS).size().to_numpy() if len(data) else np.zeros(0, dtype=np.int64)
    out = {
        "released": len(data),
        "suppressed": n - len(data),
        "dm_star": int((sizes.astype(np.int64) ** 2).sum()),
        "c_avg": (len(data) / len(sizes) / k) if len(sizes) else float("nan"),
        "gcp": metrics.gcp(data, specs, n, original) if specs is not None else float("nan"),
    }
    out["pycanon_k"] = int(anonymity.k_anonymity(data, QIS)) if len(data) else 0
    out["pycanon_l"] = int(anonymity.l_diversity(data, QIS, [SENSITIVE])) if l_div else None
    out["pycanon_t"] = (
        float(anonymity.t_closeness(data, QIS, [SENSITIVE])) if t is not None else None
    )
    return out


# our Mondrian variants: (QI mode of the categorical QIs, options); age is always numeric
MONDRIAN_VARIANTS = {
    "mondrian": ("hierarchy", None),  # the defaults: gain criterion, relaxed
    "mondrian-strict": ("hierarchy", {"criterion": "width", "relaxed": False}),  # LeFevre
    "mondrian-sets": ("set", None),  # no hierarchies, value sets published (as anonypy)
}


def run_ours(path: str, adult_dir: str, algorithm: str, k: int, l_div, t, supp: float):
    import tabular
    from tabular import metrics

    df = pd.read_parquet(path)
    specs = _hierarchies(Path(adult_dir))
    options = None
    mode = "hierarchy"
    if algorithm in MONDRIAN_VARIANTS:
        qi_mode, options = MONDRIAN_VARIANTS[algorithm]
        mode = "ranges+sets" if qi_mode == "set" else "ranges+hierarchy"
        specs = {c: ("set" if qi_mode == "set" else h) for c, h in specs.items()}
        specs["age"] = "numeric"
        algorithm = "mondrian"
    has_hierarchies = all(s != "set" for s in specs.values())
    start = time.perf_counter()
    release = tabular.anonymize(
        df,
        specs,
        SENSITIVE,
        _models(k, l_div, t),
        algorithm=algorithm,
        suppression_limit=supp,
        seed=0,
        measures=False,
        mondrian_options=options,
    )
    data, transformation = release.data, release.transformation
    seconds = time.perf_counter() - start
    out = _quality(data, df, len(df), specs if has_hierarchies else None, k, l_div, t)
    out["gcp_flat"] = value_set_gcp(data, df, len(df), mode, _hierarchies(Path(adult_dir)))
    if not has_hierarchies:  # tabular.metrics reads value sets: it must agree with the above
        ours = metrics.gcp(data, specs, len(df), df)
        if abs(ours - out["gcp_flat"]) > 1e-9:
            raise RuntimeError(f"tabular.metrics.gcp {ours} != value-set GCP {out['gcp_flat']}")
    out["seconds"] = seconds
    out["transformation"] = (
        "" if transformation is None else "[" + ",".join(str(transformation[c]) for c in QIS) + "]"
    )
    return out


def value_set_gcp(
    released: pd.DataFrame, original: pd.DataFrame, n: int, mode: str, hierarchies=None
) -> float:
    """GCP by one formula for every tool: over the values present in the data.

    A categorical value covering ``u`` of the column's ``D`` distinct values costs
    ``(u - 1) / (D - 1)`` (a value set's NCP); an age value covering ages ``lo..hi`` costs
    ``(hi - lo) / (max - min)``; suppressed records cost 1 per QI.  ``mode`` only says how
    to read which values a published cell covers: ``"hierarchy"`` (every column through
    its hierarchy, labels never parsed), ``"ranges+hierarchy"`` (age as ``lo-hi`` ranges,
    the rest through the hierarchies), ``"ranges+sets"`` (age as ranges, the rest as
    comma-separated value sets: anonypy, and our Mondrian with ``"set"`` QIs).
    """
    from tabular import metrics

    total = float(n - len(released)) * len(QIS)
    for c in QIS:
        values = pd.unique(original[c])
        d = len(values)
        if c == "age" and mode != "hierarchy":
            total += metrics.ncp(released, {"age": "numeric"}, original)["age"] * len(released)
            continue
        if mode == "ranges+sets":
            covered = released[c].astype(str).str.count(",") + 1
            total += float(((covered - 1) / max(d - 1, 1)).sum())
            continue
        h = hierarchies[c]
        leaves = h.encode(values)
        cost: dict[str, float] = {}
        span = float(values.max() - values.min()) if c == "age" else 0.0
        for level in range(h.height, -1, -1):  # the lowest level wins for repeated labels
            labels = h.labels(level)[h.node_codes[leaves, level]].astype(str)
            for label in np.unique(labels):
                under = values[labels == label]
                if c == "age":
                    cost[label] = float(under.max() - under.min()) / span if span else 0.0
                else:
                    cost[label] = (len(under) - 1) / max(d - 1, 1)
        total += float(released[c].astype(str).map(cost).fillna(1.0).sum())
    return total / (n * len(QIS))


def run_anonypy(path: str, k: int, l_div, t):
    import anonypy

    df = pd.read_parquet(path)
    frame = df.copy()
    for c in CATEGORICAL + [SENSITIVE]:
        frame[c] = frame[c].astype("category")
    start = time.perf_counter()
    preserver = anonypy.Preserver(frame, QIS, SENSITIVE)
    if t is not None:
        rows = preserver.anonymize_t_closeness(k, t)
    elif l_div:
        rows = preserver.anonymize_l_diversity(k, l_div)
    else:
        rows = preserver.anonymize_k_anonymity(k)
    seconds = time.perf_counter() - start
    released = pd.DataFrame(rows)
    released = released.loc[released.index.repeat(released["count"])].drop(columns="count")
    for c in QIS:  # anonypy publishes each feature as a one-element list
        released[c] = released[c].map(lambda v: v[0] if isinstance(v, list) else v).astype(str)
    out = _quality(released, df, len(df), None, k, l_div, t)
    out["gcp"] = float("nan")
    out["gcp_flat"] = value_set_gcp(released, df, len(df), "ranges+sets")
    out["seconds"] = seconds
    out["transformation"] = ""
    return out


def run_anjana(path: str, adult_dir: str, k: int, l_div, t, supp: float):
    from anjana import anonymity as anj

    df = pd.read_parquet(path)
    hierarchies = {
        c: dict(pd.read_csv(Path(adult_dir) / f"adult_hierarchy_{c}.csv", sep=";", header=None))
        for c in QIS
    }
    start = time.perf_counter()
    if t is not None:
        released = anj.t_closeness(df, [], QIS, SENSITIVE, k, t, supp * 100, hierarchies)
    elif l_div:
        released = anj.l_diversity(df, [], QIS, SENSITIVE, k, l_div, supp * 100, hierarchies)
    else:
        released = anj.k_anonymity(df, [], QIS, k, supp * 100, hierarchies)
    seconds = time.perf_counter() - start
    for c in QIS:
        released[c] = released[c].astype(str)
    specs = _hierarchies(Path(adult_dir))
    out = _quality(released, df, len(df), specs, k, l_div, t)
    out["gcp_flat"] = value_set_gcp(released, df, len(df), "hierarchy", specs)
    out["seconds"] = seconds
    out["transformation"] = ""
    return out


CASES_FULL = [
    (2, None, None, 0.0),
    (5, None, None, 0.0),
    (10, None, None, 0.0),
    (50, None, None, 0.0),
    (2, None, None, 0.05),
    (5, None, None, 0.05),
    (10, None, None, 0.05),
    (50, None, None, 0.05),
    (5, 3, None, 0.0),
    (5, None, 0.2, 0.0),
]
CASES_K = [(2, None, None, 0.0), (5, None, None, 0.0), (10, None, None, 0.0), (50, None, None, 0.0)]
CASES_QUICK = [(5, None, None, 0.0), (5, None, None, 0.05), (5, 3, None, 0.0), (5, None, 0.2, 0.0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="k=5 cases only, 1x only")
    parser.add_argument("--scale", type=int, nargs="+", default=None)
    parser.add_argument(
        "--tools",
        nargs="+",
        default=["optimal", "mondrian", "datafly", "anonypy", "anjana"],
        choices=["optimal", "datafly", "anonypy", "anjana", *MONDRIAN_VARIANTS],
    )
    parser.add_argument(
        "--cases",
        choices=["quick", "full", "k"],
        default=None,
        help="k=5 cases only (quick), k in {2,5,10,50} at 0%% (k) or all "
        "(default: full unless --quick)",
    )
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument(
        "--record", default="tabular", help="RESULTS.md section to write (default: tabular)"
    )
    args = parser.parse_args()
    adult_csv = shared_data("adult/adult.csv")
    if adult_csv is None:
        print("../shared/data/adult not found; nothing to measure")
        return
    adult_dir = adult_csv.parent
    scales = args.scale or ([1] if args.quick else [1, 10, 100])
    cases = {"quick": CASES_QUICK, "full": CASES_FULL, "k": CASES_K}[
        args.cases or ("quick" if args.quick else "full")
    ]
    base = pd.read_csv(adult_csv, sep=";")
    tmp = Path(tempfile.mkdtemp(prefix="bench-tabular-"))
    rows = []
    for scale in scales:
        path = tmp / f"adult_{scale}x.parquet"
        scaled_copy(base, scale, seed=scale).to_parquet(path)
        n = len(base) * scale
        for tool in args.tools:
            for k, l_div, t, supp in cases:
                if tool == "anonypy" and (
                    supp > 0 or (scale > 1 and (k, l_div, t) != (5, None, None))
                ):
                    continue  # anonypy has no suppression; at 10x/100x only k=5 (minutes each)
                if tool == "anjana" and scale > 1 and (k, l_div, t, supp) != (5, None, None, 0.0):
                    continue
                if tool in ("optimal", "datafly", *MONDRIAN_VARIANTS):
                    fn, fargs = run_ours, (str(path), str(adult_dir), tool, k, l_div, t, supp)
                elif tool == "anonypy":
                    fn, fargs = run_anonypy, (str(path), k, l_div, t)
                else:
                    fn, fargs = run_anjana, (str(path), str(adult_dir), k, l_div, t, supp)
                label = (
                    f"k={k}"
                    + (f", l={l_div}" if l_div else "")
                    + (f", t={t}" if t is not None else "")
                )
                try:
                    res, _, peak = measure(fn, *fargs, timeout=args.timeout)
                    row = [
                        tool,
                        f"{scale}x",
                        n,
                        label,
                        f"{supp:.0%}",
                        round(res["seconds"], 3),
                        round(peak),
                        res["dm_star"],
                        round(res["c_avg"], 2),
                        round(res["gcp"], 4),
                        round(res["gcp_flat"], 4),
                        res["suppressed"],
                        res["pycanon_k"],
                        "" if res["pycanon_l"] is None else res["pycanon_l"],
                        "" if res["pycanon_t"] is None else round(res["pycanon_t"], 4),
                        res["transformation"],
                    ]
                except TimeoutError:
                    row = [
                        tool,
                        f"{scale}x",
                        n,
                        label,
                        f"{supp:.0%}",
                        f"> {args.timeout:g} (timeout)",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                    ]
                except RuntimeError as exc:
                    last = str(exc).strip().splitlines()[-1]
                    row = [
                        tool,
                        f"{scale}x",
                        n,
                        label,
                        f"{supp:.0%}",
                        f"error: {last[:60]}",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                    ]
                print(" | ".join(str(v) for v in row), flush=True)
                rows.append(row)
    header = [
        "tool",
        "scale",
        "records",
        "model",
        "supp. limit",
        "seconds",
        "peak MiB",
        "DM*",
        "C_AVG",
        "GCP (hier.)",
        "GCP (value sets)",
        "suppressed",
        "pycanon k",
        "pycanon l",
        "pycanon t",
        "levels",
    ]
    command = "/work/venv/bin/python bench/tabular.py " + " ".join(sys.argv[1:])
    text = "\n".join(
        [
            f"## tabular ({args.record})",
            "",
            f"Command: `{command.strip()}`  ",
            f"Machine: {machine_line()}; shared with other jobs while measuring, so times are "
            "noisy upper bounds.  ",
            "Seconds: the anonymization call alone (ours: `tabular.anonymize(..., measures=False)`, "
            "which includes encoding, search, publishing and verification); peak MiB: peak RSS of "
            "the forked child running the case (reading the data included). DM* = sum of squared "
            "class sizes of the released records. GCP (hier.): categorical values by the "
            "hierarchies' leaf counts (not defined without hierarchies: anonypy, mondrian-sets). "
            "GCP (value sets): one formula for every tool, over the values present in the data: "
            "a categorical cell covering u of the column's D values costs (u-1)/(D-1), an age "
            "cell (hi-lo)/(max-min), a suppressed record 1 per QI. Our Mondrian treats age as "
            "numeric; `mondrian` runs the defaults (gain criterion, relaxed), `mondrian-strict` "
            "LeFevre's rule (widest range first, strict), `mondrian-sets` the defaults with every "
            "categorical QI as 'set' (no hierarchy, published as value sets, like anonypy; through "
            "`tabular.anonymize` like the other rows, so its seconds include the shuffle and the "
            "verifier; its GCP (value sets) is cross-checked against `tabular.metrics.gcp`). "
            "Levels: QI order sex, age, race, marital-status, education, native-country, "
            "workclass.",
            "",
            markdown_table(header, rows),
        ]
    )
    record_section(args.record, text)
    print(f"recorded in bench/RESULTS.md section {args.record}")


if __name__ == "__main__":
    main()
