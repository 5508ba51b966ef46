"""Benchmark of the tabular package against anonypy (Mondrian) and anjana on UCI Adult.

Usage::

    python bench/tabular.py [--quick] [--scale 1 10 100] [--tools ...]

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
import os
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
    command = "python bench/tabular.py " + " ".join(sys.argv[1:])
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


# ----------------------------------------------------------------------------- optimal speed
# ``bench/tabular.py --speed``: ARX's own JUnit requests on Adult (bench/peers/arx_cases.txt),
# our optimal search side by side with ARX itself (bench/peers/ArxOptimal.java, built by
# bench/peers/arx_setup.sh outside the repository); written to bench/results/tabular_speed.md.
PEERS = _BENCH / "peers"
QIS9 = [*QIS[:7], "occupation", "salary-class"]


def case_files() -> list[Path]:
    """ARX's JUnit requests, and with ``--more`` (read by the children from the environment)
    the requests of the models ARX's tests leave out (bench/peers/more_cases.txt)."""
    files = [PEERS / "arx_cases.txt"]
    if os.environ.get("STRUCTANON_BENCH_MORE") == "1":
        files.append(PEERS / "more_cases.txt")
    return files


def read_arx_cases(paths: list[Path] | None = None) -> list[dict]:
    """The requests: name, suppression limit, metric, QIs, models spec, ARX's optimum (its
    JUnit value; ``None`` where its tests assert none)."""
    cases = []
    for path in case_files() if paths is None else paths:
        for line in path.read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            name, supp, metric, nq, models, score, levels = line.split()
            cases.append(
                {
                    "name": name,
                    "supp": float(supp),
                    "metric": metric,
                    "qis": QIS9 if nq == "9" else [c for c in QIS9 if c != "occupation"],
                    "models": models,
                    "arx_score": None if score == "-" else float(score),
                    "arx_levels": levels,
                }
            )
    return cases


#: the model tokens ARX's driver (peers/ArxOptimal.java) knows
ARX_TOKENS = ("k", "dl", "el", "rc", "teq", "tord", "thier", "bb", "be", "dd")


def spec_models(spec: str, occupation_hierarchy):
    """Privacy models from a case's spec (the notation of arx_cases.txt)."""
    from structanon.models import (
        AlphaKAnonymity,
        BLikeness,
        DeltaDisclosure,
        DistinctLDiversity,
        EntropyLDiversity,
        KAnonymity,
        ProbabilisticLDiversity,
        RecursiveCLDiversity,
        TCloseness,
    )

    out = []
    for token in spec.split(","):
        if token.startswith("bb"):
            out.append(BLikeness(float(token[2:])))
        elif token.startswith("be"):
            out.append(BLikeness(float(token[2:]), enhanced=True))
        elif token.startswith("dd"):
            out.append(DeltaDisclosure(float(token[2:])))
        elif token.startswith("pl"):
            out.append(ProbabilisticLDiversity(float(token[2:])))
        elif token.startswith("ak"):
            alpha, k = token[2:].split("/")
            out.append(AlphaKAnonymity(float(alpha), int(k)))
        elif token.startswith("k"):
            out.append(KAnonymity(int(token[1:])))
        elif token.startswith("dl"):
            out.append(DistinctLDiversity(int(token[2:])))
        elif token.startswith("el"):
            out.append(EntropyLDiversity(float(token[2:])))
        elif token.startswith("rc"):
            c, l_div = token[2:].split("/")
            out.append(RecursiveCLDiversity(float(c), int(l_div)))
        elif token.startswith("teq"):
            out.append(TCloseness(float(token[3:])))
        elif token.startswith("tord"):
            out.append(TCloseness(float(token[4:]), "ordered"))
        elif token.startswith("thier"):
            out.append(TCloseness(float(token[5:]), "hierarchical", occupation_hierarchy))
        else:
            raise ValueError(f"unknown model token {token!r}")
    return out


def _read_adult(csv, category: bool) -> pd.DataFrame:
    """The Adult copy as the code under test reads it (see ``speed_child``)."""
    import inspect

    from tabular import io as tabular_io

    reader = getattr(tabular_io, "read_microdata", None)
    if category and reader is not None and "categorical" in inspect.signature(reader).parameters:
        # as the command line reads them: every column has a hierarchy or is sensitive
        return reader(csv, sep=";", categorical=list(pd.read_csv(csv, sep=";", nrows=0).columns))
    return pd.read_csv(csv, sep=";", dtype="category" if category else None)


def speed_child(code: str, csv: str, adult_dir: str, names: list[str], repeats: int) -> None:
    """Run our search on the cases (in this process, with ``code`` first on sys.path); print
    one JSON line per case: best CPU and wall seconds of ``repeats`` calls after the first,
    the first call's, reading + encoding included in ``read_s`` for the first call."""
    import json

    sys.path.insert(0, code)
    import tabular
    from structanon import Hierarchy

    t0, c0 = time.perf_counter(), time.process_time()
    # --category (large scales): columns read as pandas categoricals (a few bytes a cell
    # instead of a Python string) by the reader of the code under test, as its command line
    # reads them; pandas' dtype="category" for a checkout whose reader has no such option
    category = os.environ.get("STRUCTANON_BENCH_CATEGORY") == "1"
    df = _read_adult(csv, category)
    hierarchies = {
        c: Hierarchy.from_csv(Path(adult_dir) / f"adult_hierarchy_{c}.csv", name=c) for c in QIS9
    }
    read_s, read_cpu = time.perf_counter() - t0, time.process_time() - c0
    for case in read_arx_cases():
        if names and case["name"] not in names:
            continue
        if case["metric"].startswith("entropy") and "entropy" not in tabular.QUALITY_MODELS:
            print(json.dumps({"name": case["name"], "error": "metric not available"}), flush=True)
            continue
        runs = []
        for _ in range(repeats + 1):
            c0, w0 = time.process_time(), time.perf_counter()
            release = tabular.anonymize(
                df,
                {c: hierarchies[c] for c in case["qis"]},
                None if "occupation" in case["qis"] else "occupation",
                spec_models(case["models"], hierarchies["occupation"]),
                algorithm="optimal",
                suppression_limit=case["supp"],
                metric=case["metric"],
                measures=False,
                key=b"bench-speed-key-0123456789abcdef",
            )
            runs.append((time.process_time() - c0, time.perf_counter() - w0))
        later = runs[1:] or runs
        print(
            json.dumps(
                {
                    "name": case["name"],
                    "rows": len(df),
                    "read_s": read_s,
                    "read_cpu": read_cpu,
                    # wall seconds per step of the last call (encode, search, publish,
                    # shuffle, verify, total) and this process's peak RSS so far
                    "steps": {k: round(v, 3) for k, v in release.timings.items()},
                    "peak_rss_mb": _peak_rss_mb(),
                    "first_cpu": runs[0][0],
                    "first_wall": runs[0][1],
                    "cpu": min(r[0] for r in later),
                    "wall": min(r[1] for r in later),
                    "score": release.info["score"]["value"],
                    "levels": ",".join(str(release.transformation[c]) for c in case["qis"]),
                    "checked": release.info["lattice"]["checked"],
                }
            ),
            flush=True,
        )


def _peak_rss_mb() -> float:
    """This process's peak resident set size so far, MB (Linux: ru_maxrss in KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(cmd: list[str]) -> tuple[int, str, str, float, float]:
    """Run ``cmd``: (exit code, stdout, stderr, peak RSS MB, user+system CPU s) of the child."""
    import subprocess

    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        subprocess.Popen(cmd, stdout=out, stderr=err, text=True) as proc,
    ):
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return proc.returncode, out.read(), err.read(), usage.ru_maxrss / 1024, cpu


def _run_ours(code: Path, csv: Path, adult_dir: Path, names, repeats: int) -> dict:
    import json

    cmd = [sys.executable, str(_BENCH / "tabular.py"), "--speed-child", str(code), str(csv)]
    cmd += [str(adult_dir), str(repeats), *names]
    rc, out, err, rss, cpu = _child(cmd)
    if rc:
        raise RuntimeError(err[-2000:])
    print(f"ours: peak RSS {rss:.0f} MB, process CPU {cpu:.1f} s", flush=True)
    return {r["name"]: {**r, "process_rss_mb": rss} for r in map(json.loads, out.splitlines())}


def _run_arx(arx_git: str | None, csv: Path, adult_dir: Path, names, repeats: int, heap: str):
    import subprocess

    setup = [str(PEERS / "arx_setup.sh")] + ([arx_git] if arx_git else [])
    classpath = subprocess.run(setup, capture_output=True, text=True, check=True)
    classpath = classpath.stdout.strip().splitlines()[-1]
    # the requests chosen whose models ARX knows
    lines = [ln for f in case_files() for ln in f.read_text().splitlines()]
    chosen = [
        ln
        for ln in lines
        if ln.split()
        and not ln.startswith("#")
        and (not names or ln.split()[0] in names)
        and all(t.startswith(ARX_TOKENS) for t in ln.split()[4].split(","))
    ]
    cases = Path(tempfile.mkdtemp(prefix="arx-cases-")) / "cases.txt"
    cases.write_text("\n".join(chosen) + "\n")
    cmd = ["java", f"-Xmx{heap}", "-cp", classpath, "ArxOptimal", str(csv), str(adult_dir)]
    rc, out, err, rss, cpu = _child(cmd + [str(cases), str(repeats)])
    if rc:
        raise RuntimeError(err[-2000:])
    print(f"ARX: peak RSS {rss:.0f} MB, process CPU {cpu:.1f} s", flush=True)
    lines = out.strip().splitlines()
    head = lines[0].split("\t")
    rows = (dict(zip(head, row)) for row in (ln.split("\t") for ln in lines[1:]))
    return {row["case"]: {**row, "process_rss_mb": rss} for row in rows}


def _same(score: float, other) -> str:
    try:
        value = float(other)
    except (TypeError, ValueError):
        return "?"
    return "yes" if abs(score - value) <= 1e-9 * max(1.0, abs(value)) else "NO"


def speed_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description="optimal search: ours before/after, and ARX")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--cases", nargs="*", default=[], help="case names (default: all)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--before", help="a checkout of the code to compare with (a folder)")
    parser.add_argument("--arx", nargs="?", const="", default=None, help="ARX git dir")
    parser.add_argument("--scale", type=int, default=1, help="copies of Adult (see scaled_copy)")
    parser.add_argument("--heap", default="6g", help="Java heap for ARX")
    parser.add_argument(
        "--category",
        action="store_true",
        help="read our columns as categoricals, as the command line does (tabular.io.read_microdata)",
    )
    parser.add_argument(
        "--more",
        action="store_true",
        help="also the requests of bench/peers/more_cases.txt (models ARX's tests leave out)",
    )
    parser.add_argument("--output", default=str(_BENCH / "results" / "tabular_speed.md"))
    parser.add_argument("--json", help="also write every measured figure (ours, ARX) here")
    args = parser.parse_args(argv)
    if args.more:
        os.environ["STRUCTANON_BENCH_MORE"] = "1"  # read by the speed children too
    adult_csv = shared_data("adult/adult.csv")
    if adult_csv is None:
        print("../shared/data/adult not found; nothing to measure")
        return
    csv = adult_csv
    if args.scale > 1:
        csv = Path(tempfile.mkdtemp(prefix="bench-speed-")) / f"adult_{args.scale}x.csv"
        scaled_copy(pd.read_csv(adult_csv, sep=";"), args.scale, seed=args.scale).to_csv(
            csv, sep=";", index=False
        )
    if args.category:
        os.environ["STRUCTANON_BENCH_CATEGORY"] = "1"  # read by the speed children
    repo = _BENCH.parent
    after = _run_ours(repo, csv, adult_csv.parent, args.cases, args.repeats)
    before = (
        _run_ours(Path(args.before), csv, adult_csv.parent, args.cases, args.repeats)
        if args.before
        else {}
    )
    arx = (
        _run_arx(args.arx or None, csv, adult_csv.parent, args.cases, args.repeats, args.heap)
        if args.arx is not None
        else {}
    )
    if args.json:
        import json

        Path(args.json).write_text(json.dumps({"ours": after, "before": before, "arx": arx}))
    rows = []
    for case in read_arx_cases():
        ours = after.get(case["name"])
        if ours is None:
            continue
        old = before.get(case["name"], {})
        peer = arx.get(case["name"], {})
        known = args.scale == 1 and case["arx_score"] is not None
        expected = case["arx_score"] if known else peer.get("score")
        rows.append(
            [
                case["name"],
                f"{case['supp']:.0%}",
                case["metric"],
                len(case["qis"]),
                case["models"],
                "" if "cpu" not in old else f"{old['cpu']:.2f} / {old['wall']:.2f}",
                f"{ours['cpu']:.2f} / {ours['wall']:.2f}",
                ours["checked"],
                ""
                if not peer
                else f"{float(peer['best_cpu_s']):.2f} / {float(peer['best_s']):.2f}",
                "" if not peer else f"{float(peer['parse_s']):.2f}",
                f"{ours['read_s']:.2f}",
                f"{ours['score']:.10g}",
                _same(ours["score"], expected),
                ours["levels"],
            ]
        )
        print(" | ".join(map(str, rows[-1])), flush=True)
    header = [
        "case",
        "supp.",
        "metric",
        "QIs",
        "models",
        "before CPU / wall s",
        "after CPU / wall s",
        "nodes checked",
        "ARX CPU / wall s",
        "ARX parse s",
        "our read s",
        "our score",
        "= ARX",
        "our levels",
    ]
    command = "python bench/tabular.py " + " ".join(argv)
    text = "\n".join(
        [
            f"## Optimal search speed, Adult x{args.scale} ({len(pd.read_csv(csv, sep=';', usecols=['sex']))} rows)",
            "",
            f"Command: `{command.strip()}`  ",
            f"Machine: {machine_line()}; shared with other jobs while measuring (load: wall "
            "times are several times the CPU times), so compare CPU times.  ",
            f"Times: fastest of {args.repeats} calls after a first (warm-up) one, per request; ours "
            "= `tabular.anonymize(..., algorithm='optimal', measures=False)` on a loaded "
            "DataFrame (encoding, search, publishing, verification), ARX = "
            "`ARXAnonymizer.anonymize` (process CPU, JIT and GC threads included). Parse/read: "
            "ARX's `Data.create` + hierarchies, our `pandas.read_csv` + hierarchies. "
            "= ARX: our optimum's score equals ARX's (its JUnit value at 1x, the driver's at other "
            "scales).",
            "",
            markdown_table(header, rows),
            "",
        ]
    )
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    previous = out.read_text().rstrip() + "\n\n" if out.exists() else ""
    out.write_text(previous + text)  # sections accumulate: one per run
    print(f"written to {out}")


def profile_main(argv: list[str]) -> None:
    """Where the optimal search's time goes, per request: one cProfile'd call after a
    warm-up, split into class tables, model checks, the rest of the search and what lies
    outside it (encoding, publishing, verification); prints markdown rows."""
    import cProfile
    import pstats

    parser = argparse.ArgumentParser(description="profile the optimal search on ARX's cases")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cases", nargs="*", default=[], help="case names (default: all)")
    parser.add_argument("--code", default=str(_BENCH.parent), help="checkout to profile")
    parser.add_argument("--csv", help="an Adult copy to read instead (e.g. a --scale copy)")
    parser.add_argument(
        "--category",
        action="store_true",
        help="read the columns as categoricals, as the command line does (tabular.io.read_microdata)",
    )
    parser.add_argument("--warm", type=int, default=1, help="calls before the profiled one")
    parser.add_argument("--top", type=int, default=0, help="also print the N top own times")
    parser.add_argument(
        "--cpu", action="store_true", help="profile CPU seconds (default: wall seconds)"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, args.code)
    import tabular
    from structanon import Hierarchy

    adult_csv = shared_data("adult/adult.csv")
    if adult_csv is None:
        print("../shared/data/adult not found; nothing to measure")
        return
    c0 = time.process_time()
    df = _read_adult(args.csv or adult_csv, args.category)
    print(f"read {len(df)} rows: {time.process_time() - c0:.2f} s CPU")
    hierarchies = {
        c: Hierarchy.from_csv(adult_csv.parent / f"adult_hierarchy_{c}.csv", name=c) for c in QIS9
    }

    def stat(stats, file, function, column):
        rows = [v for k, v in stats.stats.items() if k[0].endswith(file) and k[2] == function]
        return max((r[column] for r in rows), default=0)

    print("| request | total s | class tables | model checks | rest of search | outside search |")
    print("|---|---|---|---|---|---|")
    for case in read_arx_cases():
        if args.cases and case["name"] not in args.cases:
            continue

        def run(case=case):
            return tabular.anonymize(
                df,
                {c: hierarchies[c] for c in case["qis"]},
                None if "occupation" in case["qis"] else "occupation",
                spec_models(case["models"], hierarchies["occupation"]),
                algorithm="optimal",
                suppression_limit=case["supp"],
                metric=case["metric"],
                measures=False,
                key=b"bench-speed-key-0123456789abcdef",
            )

        for _ in range(args.warm):
            run()
        profiler = cProfile.Profile(time.process_time) if args.cpu else cProfile.Profile()
        release = profiler.runcall(run)
        stats = pstats.Stats(profiler)
        steps = ", ".join(f"{k} {v:.2f}" for k, v in release.timings.items())
        print(f"{case['name']}: wall s per step (profiled): {steps}")
        if args.top:
            stats.sort_stats("tottime").print_stats(args.top)
        total = stat(stats, "_anonymize.py", "anonymize", 3)
        search = stat(stats, "_optimal.py", "optimal_generalization", 3)
        tables = stat(stats, "_lattice.py", "classes", 3)
        checks = stat(stats, "_optimal.py", "class_outcome", 3)
        parts = [tables, checks, max(search - tables - checks, 0.0), total - search]
        cells = [f"{v:.2f} ({v / total:.0%})" for v in parts]
        print(f"| {case['name']} | {total:.2f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    if "--profile" in sys.argv:
        profile_main(sys.argv[1:])
    elif "--speed-child" in sys.argv:
        i = sys.argv.index("--speed-child")
        code, csv, adult_dir, repeats, *names = sys.argv[i + 1 :]
        speed_child(code, csv, adult_dir, names, int(repeats))
    elif "--speed" in sys.argv:
        speed_main(sys.argv[1:])
    else:
        main()
