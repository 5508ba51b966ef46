"""Benchmark of tabular's statistical disclosure control (issue 17).

Usage::

    python bench/tabular_sdc.py [--quick] [--output bench/results/tabular_sdc.md]

1. MDAV microaggregation on synthetic correlated data (3 columns, 1k / 10k / 100k rows) and
   on Adult's numeric-coded columns, k = 3, 5, 10: CPU and wall time, peak memory, SSE/SST,
   next to textbook MDAV's SSE/SST (same k) where it runs in reasonable time.
2. Noise, rank swapping, microaggregation and PRAM on Adult: utility (means, variances,
   correlations, a regression coefficient, classifier accuracy) and risk (record linkage,
   interval disclosure, individual risk) side by side.
3. SafePub at epsilon 0.5, 1, 2 (delta 1e-5) next to k-anonymity (optimal, k = the implied
   k, 10 % suppression) on Adult's seven quasi-identifiers.

Every case runs in a forked child (peak RSS of that child).  The machine is shared and
loaded: read CPU seconds (``time.process_time``) to compare, wall seconds as indicative.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

_BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH]
sys.path.insert(0, str(_BENCH.parent))
_spec = importlib.util.spec_from_file_location("_harness", _BENCH / "_harness.py")
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)
machine_line, markdown_table, measure = (
    _harness.machine_line,
    _harness.markdown_table,
    _harness.measure,
)
shared_data = _harness.shared_data

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
EDUCATION = [
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
    "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school",
    "Doctorate",
]  # fmt: skip


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cov = [[1.0, 0.8, 0.5], [0.8, 1.0, 0.6], [0.5, 0.6, 1.0]]
    return pd.DataFrame(rng.multivariate_normal([0, 0, 0], cov, n), columns=["x1", "x2", "x3"])


def adult() -> pd.DataFrame:
    path = shared_data("adult/adult.csv")
    if path is None:
        raise SystemExit("../shared/data/adult/adult.csv is needed")
    df = pd.read_csv(path, sep=";")
    df["education_num"] = df["education"].map({e: i + 1 for i, e in enumerate(EDUCATION)})
    df["sex_code"] = (df["sex"] == "Female").astype(int)
    df["income_high"] = (df["salary-class"] == ">50K").astype(int)
    return df


ADULT_NUMERIC = ["age", "education_num", "sex_code", "income_high"]


def _sse_sst(x: np.ndarray, labels: np.ndarray) -> float:
    from structanon.microaggregation import group_means

    return float(((x - group_means(x, labels)[labels]) ** 2).sum() / ((x - x.mean(0)) ** 2).sum())


def _mdav_case(df: pd.DataFrame, columns: list[str], k: int, block):
    import tabular

    start = time.process_time()
    release = tabular.microaggregate(df, columns, k, block_size=block, measures=False)
    cpu = time.process_time() - start
    x = df[columns].to_numpy(dtype=float)
    return cpu, _sse_sst(x, release.partition.labels), release.info["variant"]


def bench_mdav(quick: bool) -> list[list]:
    rows = []
    cases = [(f"synthetic {n // 1000}k", synthetic(n), ["x1", "x2", "x3"]) for n in
             ([1000, 10_000] if quick else [1000, 10_000, 100_000])]  # fmt: skip
    cases.append(("Adult numeric-coded", adult(), ADULT_NUMERIC))
    if not quick:  # the blocked fast path, next to textbook MDAV on the same 100k rows
        cases.append(("synthetic 100k, blocks", cases[2][1], ["x1", "x2", "x3"], 25_000))
    for name, df, columns, *block in cases:
        for k in (3, 5, 10):
            mode = block[0] if block else "auto"
            (cpu, loss, variant), wall, mib = measure(_mdav_case, df, columns, k, mode)
            textbook = "same (textbook)"
            if variant != "textbook" and not quick:
                (t_cpu, t_loss, _), _, _ = measure(_mdav_case, df, columns, k, None)
                textbook = f"{t_loss:.5f} ({t_cpu:.1f} s CPU)"
            elif variant != "textbook":
                textbook = "not run"
            rows.append([name, len(df), k, variant, f"{cpu:.2f}", f"{wall:.2f}", f"{mib:.0f}",
                         f"{loss:.5f}", textbook])  # fmt: skip
            print(rows[-1], flush=True)
    return rows


def _classifier_accuracy(train: pd.DataFrame, test: pd.DataFrame, features, target) -> float:
    from sklearn.linear_model import LogisticRegression

    both = pd.get_dummies(pd.concat([train[features], test[features]]), dtype=float)
    x_train, x_test = both.iloc[: len(train)], both.iloc[len(train) :]
    mean, sd = x_train.mean(), x_train.std().replace(0, 1)
    model = LogisticRegression(max_iter=500)
    model.fit((x_train - mean) / sd, train[target])
    return float(model.score((x_test - mean) / sd, test[target]))


def _perturbation_case(method: str):
    import tabular
    from tabular import risk as tab_risk

    df = adult()
    numeric = ["age", "education_num"]
    categorical = ["marital-status", "race", "workclass"]
    start = time.process_time()
    if method == "original":
        release = None
        masked = df
    elif method == "pram":
        release = tabular.pram(df, categorical, keep=0.8, measures=False)
    elif method.startswith(("noise", "kim")):
        kind = "kim" if method.startswith("kim") else "correlated"
        release = tabular.add_noise(df, numeric, float(method.split()[-1]), kind, measures=False)
    elif method.startswith("rank swap"):
        release = tabular.rank_swap(df, numeric, float(method.split()[-1]), measures=False)
    else:
        release = tabular.microaggregate(df, numeric, int(method.split()[-1]), measures=False)
    cpu = time.process_time() - start
    if release is not None:  # realign with the input (the publisher's private link)
        masked = release.data.set_axis(release.source_index).loc[df.index]
    x, y = df[numeric].to_numpy(float), masked[numeric].to_numpy(float)
    coef = np.linalg.lstsq(np.column_stack([np.ones(len(y)), y]), df["income_high"], rcond=None)
    rng = np.random.default_rng(0)
    test = rng.random(len(df)) < 0.3
    features = numeric + categorical + ["sex"]
    accuracy = _classifier_accuracy(masked[~test], df[test], features, "salary-class")
    risk = {  # linkage over the same five columns for every method, perturbed or not
        "linkage": tab_risk.distance_linkage(df, masked, numeric, categorical, seed=0),
        "fs_linkage": tab_risk.probabilistic_linkage(df, masked, numeric, categorical, seed=0)[
            "rate"
        ],
        "interval_rank": tab_risk.interval_disclosure(df, masked, numeric, 0.1, "rank"),
        "interval_sd": tab_risk.interval_disclosure(df, masked, numeric, 0.1, "sd"),
        "individual": tab_risk.individual_risk(masked, categorical + ["sex"])[
            "individual_risk_mean"
        ],
    }
    return {
        "cpu": cpu,
        "mean_age": float(y[:, 0].mean() - x[:, 0].mean()),
        "var_ratio_age": float(y[:, 0].var() / x[:, 0].var()),
        "corr": float(np.corrcoef(y, rowvar=False)[0, 1]),
        "beta_age": float(coef[0][1]),
        "accuracy": accuracy,
        **risk,
    }


def bench_perturbation() -> list[list]:
    rows = []
    for method in ["original", "noise alpha 0.1", "noise alpha 0.5", "kim alpha 0.5", "rank swap p 5",
                   "rank swap p 15", "mdav k 5", "mdav k 10", "pram"]:  # fmt: skip
        result, wall, mib = measure(_perturbation_case, method)
        r = result
        rows.append([method, f"{r['cpu']:.2f}", f"{r['mean_age']:+.3f}", f"{r['var_ratio_age']:.3f}",
                     f"{r['corr']:.3f}", f"{r['beta_age']:.5f}", f"{r['accuracy']:.3f}",
                     f"{r['linkage']:.3f}", f"{r['fs_linkage']:.3f}", f"{r['interval_rank']:.3f}",
                     f"{r['interval_sd']:.3f}", f"{r['individual']:.4f}"])  # fmt: skip
        print(rows[-1], flush=True)
    return rows


def _anonymize_case(model_name: str, value: float):
    import tabular
    from structanon.models import KAnonymity
    from tabular import io as tab_io

    df = adult()
    specs = tab_io.load_hierarchies(QIS, directory=shared_data("adult"))
    start = time.process_time()
    if model_name == "safepub":
        model = tabular.DifferentialPrivacy(value, 1e-5)
        release = tabular.anonymize(df[QIS + ["salary-class"]], specs, models=[model], seed=0)
    else:
        release = tabular.anonymize(
            df[QIS + ["salary-class"]], specs, models=[KAnonymity(int(value))],
            suppression_limit=0.1, metric="loss", seed=0,
        )  # fmt: skip
    cpu = time.process_time() - start
    return {
        "cpu": cpu,
        "published": len(release.data),
        "k": release.info.get("implied_k", int(value)),
        "beta": release.info.get("sampling_rate", 1.0),
        "gcp": release.utility["gcp"],
        "classes": release.partition.n_groups,
        "transformation": release.info.get("transformation"),
    }


#: SafePub releases per epsilon (fresh secret keys): the mean and spread are reported.
SAFEPUB_RUNS = 5


def bench_safepub() -> list[list]:
    rows = []
    for epsilon in (0.5, 1.0, 2.0):
        runs = [measure(_anonymize_case, "safepub", epsilon)[0] for _ in range(SAFEPUB_RUNS)]
        dp = runs[0]
        pub = np.array([r["published"] for r in runs], dtype=float)
        gcp = np.array([r["gcp"] for r in runs])
        cls = np.array([r["classes"] for r in runs], dtype=float)
        cpu = np.array([r["cpu"] for r in runs])
        ka, wall_k, _ = measure(_anonymize_case, "k", dp["k"])
        rows.append([f"{epsilon:g}", dp["k"], f"{dp['beta']:.3f}",
                     f"{pub.mean():,.0f} ({pub.min():,.0f}-{pub.max():,.0f})",
                     f"{gcp.mean():.3f} ({gcp.min():.3f}-{gcp.max():.3f})",
                     f"{cls.mean():.0f}", f"{cpu.mean():.1f}",
                     ka["published"], f"{ka['gcp']:.3f}", ka["classes"], f"{ka['cpu']:.1f}"])  # fmt: skip
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Skip 100k rows and textbook runs.")
    parser.add_argument("--output", type=Path, default=None, help="Write the tables (Markdown).")
    parser.add_argument("--only", choices=["mdav", "perturbation", "safepub"], default=None)
    args = parser.parse_args()
    parts = [f"Machine: {machine_line()} (shared with other jobs: wall times are indicative, "
             "compare CPU seconds)."]  # fmt: skip
    if args.only in (None, "mdav"):
        parts.append("### MDAV microaggregation\n")
        parts.append(markdown_table(
            ["data", "rows", "k", "variant", "CPU s", "wall s", "peak MiB", "SSE/SST",
             "textbook MDAV SSE/SST"], bench_mdav(args.quick)))  # fmt: skip
    if args.only in (None, "perturbation"):
        parts.append("\n### Perturbation on Adult (age, education as numbers; PRAM on "
                     "marital-status, race, workclass)\n")  # fmt: skip
        parts.append(markdown_table(
            ["method", "CPU s", "mean age shift", "Var ratio age", "corr(age, edu)",
             "OLS coef of age on >50K", "classifier acc.", "distance linkage",
             "Fellegi-Sunter linkage (1/200 chance)", "interval disclosure rank",
             "interval disclosure SD", "individual risk (cat. keys)"], bench_perturbation()))  # fmt: skip
    if args.only in (None, "safepub"):
        parts.append("\n### SafePub (delta 1e-5) next to k-anonymity at the implied k\n")
        parts.append(markdown_table(
            ["epsilon", "implied k", "sampling rate", f"DP published (mean, range of {SAFEPUB_RUNS})",
             f"DP GCP (mean, range of {SAFEPUB_RUNS})", "DP classes",
             "DP CPU s", "k-anon published", "k-anon GCP", "k-anon classes", "k-anon CPU s"],
            bench_safepub()))  # fmt: skip
    text = "\n".join(parts) + "\n"
    print(text)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)


if __name__ == "__main__":
    main()
