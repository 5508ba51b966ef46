"""Benchmark of the transactions package on FIMI retail and BMS-WebView-1.

Usage::

    python bench/transactions.py [--quick]
    python bench/transactions.py --disassociation [--quick]

``--disassociation`` measures disassociation next to km_anonymize and k_anonymize on the
same data and writes ``bench/results/disassociation.md``.

Each case runs in a forked child (time and peak memory are its own).  The wall time
reported first is the anonymizer's own (encode + anonymize + verify, from the release's
timings); utility is computed afterwards in the same child, so the peak memory covers both.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import machine_line, markdown_table, measure, record_section, shared_data  # noqa: E402


def _load(rel: str, limit: int | None):
    from transactions import read_transactions

    path = shared_data(rel)
    if path is None:
        return None
    data = read_transactions(path)
    return data[:limit] if limit else data


def _km_case(rel, limit, k, m, method, order="id"):
    from transactions import km_anonymize, metrics

    data = _load(rel, limit)
    t0, c0 = time.perf_counter(), time.process_time()
    release = km_anonymize(data, k=k, m=m, method=method, order=order, measures=False)
    anon, cpu = time.perf_counter() - t0, time.process_time() - c0
    tax = release.taxonomy
    data = [data[i] for i in release.source_index]  # the input in published order
    t0 = time.perf_counter()
    err = metrics.support_error(data, release.data, tax, sizes=(1, 2), n_queries=200, seed=0)
    top = metrics.top_itemsets_error(data, release.data, tax, top=50, max_size=2)
    fis = metrics.frequent_itemset_preservation(data, release.data, tax, min_support=0.005)
    ev = time.perf_counter() - t0
    return {
        "n": len(data),
        "seconds": anon,
        "cpu": cpu,
        "timings": release.timings,
        "ncp": release.utility["ncp"],
        "support_error": err["mean"],
        "top50_error": top["mean"],
        "fi_recall": fis["recall"],
        "fi_precision": fis["precision"],
        "passed": release.checks.passed,
        "eval_s": ev,
    }


def _k_case(rel, limit, k):
    from transactions import k_anonymize, metrics

    data = _load(rel, limit)
    t0, c0 = time.perf_counter(), time.process_time()
    release = k_anonymize(data, k=k, measures=False)
    anon, cpu = time.perf_counter() - t0, time.process_time() - c0
    tax = release.taxonomy
    data = [data[i] for i in release.source_index]  # the input in published order
    err = metrics.support_error(data, release.data, tax, sizes=(1, 2), n_queries=200, seed=0)
    fis = metrics.frequent_itemset_preservation(data, release.data, tax, min_support=0.005)
    return {
        "n": len(data),
        "seconds": anon,
        "cpu": cpu,
        "ncp": release.utility["ncp"],
        "support_error": err["mean"],
        "fi_recall": fis["recall"],
        "groups": release.info["partition"]["groups"],
        "passed": release.checks.passed,
    }


def _band_case(rel, limit, p, n_sensitive):
    import numpy as np

    from transactions import band_matrix, metrics, risk

    data = _load(rel, limit)
    counts: dict = {}
    for t in data:
        for x in t:
            counts[x] = counts.get(x, 0) + 1
    # sensitive items: ranks 50, 60, ... of the frequency order (moderately common items)
    ranked = sorted(counts, key=lambda x: (-counts[x], x))
    sensitive = [ranked[i] for i in range(50, 50 + 10 * n_sensitive, 10)]
    t0, c0 = time.perf_counter(), time.process_time()
    release = band_matrix(data, sensitive, p=p, measures=False)
    anon, cpu = time.perf_counter() - t0, time.process_time() - c0
    data = [data[i] for i in release.source_index]  # the input in published order
    err = metrics.band_query_error(data, release.data, n_queries=200, seed=0)
    link = risk.band_linkage_risk(data, release.data, m=2, n_targets=200, seed=0)
    groups = np.asarray(release.data["group"])
    return {
        "n": len(data),
        "seconds": anon,
        "cpu": cpu,
        "sensitive": len(sensitive),
        "groups": int(groups.max()) + 1,
        "suppressed": release.suppressed,
        "query_error": err.get("mean", float("nan")),
        "p_before": link["before"]["max_probability"],
        "p_after": link["after"]["max_probability"],
        "passed": release.checks.passed,
        "bandwidth": (
            release.info["band"]["cooccurrence_bandwidth_before"],
            release.info["band"]["cooccurrence_bandwidth_after"],
        ),
    }


def _top_pairs_error(data, published, top=100):
    """Median relative support error of the ``top`` most frequent input pairs in ``published``.

    A generalized release keeps a pair only where both items are published as themselves.
    """
    import numpy as np

    from transactions._data import encode_baskets
    from transactions.metrics import _SetIndex, top_itemsets

    b = encode_baskets(data)
    q, true = top_itemsets(b, 2, top)
    code_of = {x: i for i, x in enumerate(b.domain.tolist())}
    index = _SetIndex([t or () for t in published], code_of, int(b.domain.size))
    est = np.array([index.support(x) for x in q.tolist()], dtype=float)
    return float(np.median(np.abs(est - true) / true))


def _dis_case(rel, limit, k, m):
    from transactions import disassociate, metrics

    data = _load(rel, limit)
    t0, c0 = time.perf_counter(), time.process_time()
    release = disassociate(data, k=k, m=m, measures=False)
    anon, cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    util = metrics.disassociation_utility(
        data, release.data, k=k, m=m, min_support=0.005, sizes=(1, 2, 3)
    )
    top = util["top_itemsets"]
    d = release.info["disassociation"]
    return {
        "n": len(data),
        "seconds": anon,
        "cpu": cpu,
        "timings": release.timings,
        "clusters": d["clusters"],
        "joint": d["joint_clusters"],
        "published_share": util["published_share"],
        "items_published": util["items_published"],
        "top1": top.get("size_1", {}).get("expected_median", float("nan")),
        "top2": top.get("size_2", {}).get("expected_median", float("nan")),
        "top3": top.get("size_3", {}).get("expected_median", float("nan")),
        "top2_lower": top.get("size_2", {}).get("lower_bound_median", float("nan")),
        "fi_precision": util["frequent_itemsets"]["precision"],
        "fi_recall": util["frequent_itemsets"]["recall"],
        "passed": release.checks.passed,
        "eval_s": time.perf_counter() - t0,
    }


def _gen_case(rel, limit, k, m, method):
    from transactions import k_anonymize, km_anonymize, metrics

    data = _load(rel, limit)
    t0, c0 = time.perf_counter(), time.process_time()
    if method == "partition":
        release = k_anonymize(data, k=k, measures=False)
    else:
        release = km_anonymize(data, k=k, m=m, method=method, measures=False)
    anon, cpu = time.perf_counter() - t0, time.process_time() - c0
    ordered = [data[i] for i in release.source_index]
    fis = metrics.frequent_itemset_preservation(
        ordered, release.data, release.taxonomy, min_support=0.005
    )
    return {
        "n": len(data),
        "seconds": anon,
        "cpu": cpu,
        "ncp": release.utility["ncp"],
        "top2": _top_pairs_error(data, release.data),
        "fi_precision": fis["precision"],
        "fi_recall": fis["recall"],
        "passed": release.checks.passed,
    }


DIS_HEADER = [
    "method",
    "k",
    "m",
    "time s",
    "cpu s",
    "peak MiB",
    "published share",
    "distinct items in chunks",
    "top-100 err size 1",
    "size 2",
    "size 3",
    "FI precision",
    "FI recall",
]


def _dis_row(name, rel, limit, k, m):
    try:
        res, _wall, peak = measure(_dis_case, rel, limit, k, m, timeout=1800)
    except (TimeoutError, RuntimeError) as exc:
        return ["disassociation", k, m, "-", f"failed: {str(exc)[-80:]}"] + [""] * 8
    return [
        "disassociation",
        k,
        m,
        round(res["seconds"], 1),
        round(res["cpu"], 1),
        round(peak),
        f"{100 * res['published_share']:.1f}%",
        f"{100 * res['items_published']:.1f}%",
        round(res["top1"], 3),
        round(res["top2"], 3),
        round(res["top3"], 3),
        round(res["fi_precision"], 3),
        round(res["fi_recall"], 3),
    ]


def _gen_row(name, rel, limit, k, m, method):
    label = {"apriori": "km_anonymize", "partition": "k_anonymize"}[method]
    try:
        res, _wall, peak = measure(_gen_case, rel, limit, k, m, method, timeout=1800)
    except (TimeoutError, RuntimeError) as exc:
        return [
            label,
            k,
            m if method != "partition" else "all",
            "-",
            f"failed: {str(exc)[-80:]}",
        ] + [""] * 8
    return [
        label,
        k,
        m if method != "partition" else "all",
        round(res["seconds"], 1),
        round(res["cpu"], 1),
        round(peak),
        f"NCP {100 * res['ncp']:.1f}%",
        "-",
        "-",
        round(res["top2"], 3),
        "-",
        round(res["fi_precision"], 3),
        round(res["fi_recall"], 3),
    ]


def disassociation_bench(quick: bool) -> None:
    """Disassociation next to km_anonymize and k_anonymize; bench/results/disassociation.md."""
    limit = SUBSET if quick else None
    cmd = "python bench/transactions.py --disassociation" + (" --quick" if quick else "")
    grid = [(10, 2)] + [(k, m) for k in (5, 10, 50) for m in (2, 3) if (k, m) != (10, 2)]
    if quick:
        grid = [(10, 2), (10, 3)]
    sections = []
    for rel, name in (
        ("retail/retail.dat", "FIMI retail"),
        ("bms/BMS-WebView-1.dat", "BMS-WebView-1"),
    ):
        if shared_data(rel) is None:
            sections.append(f"{name}: data absent, skipped.")
            continue
        rows = []
        for k, m in grid:
            rows.append(_dis_row(name, rel, limit, k, m))
            print(name, rows[-1], flush=True)
            if (k, m) in ((10, 2), (10, 3)):
                rows.append(_gen_row(name, rel, limit, k, m, "apriori"))
                print(name, rows[-1], flush=True)
            if m == 2 and k in (10,):
                rows.append(_gen_row(name, rel, limit, k, m, "partition"))
                print(name, rows[-1], flush=True)
        sections.append(f"### {name}\n\n" + markdown_table(DIS_HEADER, rows))
    text = (
        "## transactions: disassociation\n\n"
        f"Machine: {machine_line()}, shared with 7 other jobs while measuring: wall times are "
        "inflated several times over; cpu s is the process's own CPU time.  Command: "
        f"`{cmd}`.  Time = encode + anonymize + verify from the output (measures off); "
        "peak = peak RSS of the child process, including the utility evaluation.  "
        "Published share = item occurrences in record or shared chunks (the rest are "
        "term-chunk entries); top-100 err = median relative support error of the 100 most "
        "frequent input itemsets of that size, estimated from the release (disassociation: "
        "mean of 2 random re-associations; generalization: the pair counted only where both "
        "items are published as themselves); FI = frequent itemsets of 1-2 items at support "
        "0.5% (disassociation: in one reconstruction).\n\n" + "\n\n".join(sections) + "\n"
    )
    print(text)
    if not quick:
        out = Path(__file__).resolve().parent / "results" / "disassociation.md"
        out.parent.mkdir(exist_ok=True)
        out.write_text(text)


SUBSET = 21_891  # the retail prefix of the ARX figures in PEERS.md


def _peer_comparison() -> str:
    """AA and Partition on the first 21,891 retail baskets, the ARX comparison set."""
    rows = []
    for k in (5, 10, 50):
        for m in (1, 2, 3):
            res, _wall, peak = measure(
                _km_case, "retail/retail.dat", SUBSET, k, m, "apriori", timeout=600
            )
            rows.append(
                [
                    "apriori",
                    k,
                    m,
                    round(res["seconds"], 2),
                    round(res["cpu"], 2),
                    round(peak),
                    f"{100 * res['ncp']:.3f}%",
                ]
            )
            print("subset", rows[-1], flush=True)
    for k in (5, 10, 50):
        res, _wall, peak = measure(_k_case, "retail/retail.dat", SUBSET, k, timeout=600)
        rows.append(
            [
                "partition (k-anonymity)",
                k,
                "all",
                round(res["seconds"], 2),
                round(res["cpu"], 2),
                round(peak),
                f"{100 * res['ncp']:.2f}%",
            ]
        )
        print("subset", rows[-1], flush=True)
    return (
        f"### FIMI retail, first {SUBSET:,} baskets (the ARX comparison set of PEERS.md)\n\n"
        "ARX there: m=1 about 2 s, m=2 8-23 s, m=3 14-35 s; NCP m=2 0.84-1.41%, m=3 "
        "1.65-2.91% (k = 5..50); Partition (He & Naughton) about 5 s, NCP 7.3 / 8.5 / 11.9% "
        "at k = 5 / 10 / 50.\n\n"
        + markdown_table(["method", "k", "m", "time s", "cpu s", "peak MiB", "NCP"], rows)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="first 21,891 baskets, fewer cases, print only (RESULTS.md untouched)",
    )
    parser.add_argument(
        "--disassociation",
        action="store_true",
        help="disassociation next to km/k-anonymity; writes bench/results/disassociation.md",
    )
    args = parser.parse_args()
    if args.disassociation:
        disassociation_bench(args.quick)
        return
    limit = SUBSET if args.quick else None
    ks = (10,) if args.quick else (5, 10, 50)
    ms = (1, 2) if args.quick else (1, 2, 3)
    cmd = "python bench/transactions.py" + (" --quick" if args.quick else "")
    sections = [
        f"Machine: {machine_line()}; shared with other jobs while measuring, so times "
        f"are indicative (cpu s = the process's own CPU time).  Command: `{cmd}`.  Automatic taxonomy: fan-out 5, items by id in aligned id blocks (0..4, 5..9, 0..24: labels that name no input item; on retail's contiguous ids the same tree as a balanced one, as in the ARX figures in PEERS.md) unless marked 'tree by frequency'."
        " BMS-WebView-1's ids are sparse (497 items between 10,292 and 60,978): its blocks differ from a balanced tree over the items.  Time = encode + anonymize + "
        "verify from the output; peak RSS of the child process (includes the utility "
        "evaluation).  NCP over item occurrences; support error = mean relative error "
        "of 200 random 1- and 2-itemsets; top-50 = the 50 most frequent 1-/2-itemsets; "
        "FI recall/precision at support 0.5%."
    ]
    for rel, name in (
        ("retail/retail.dat", "FIMI retail"),
        ("bms/BMS-WebView-1.dat", "BMS-WebView-1"),
    ):
        if shared_data(rel) is None:
            sections.append(f"{name}: data absent, skipped.")
            continue
        rows = []
        for method, order in (
            ("apriori", "id"),
            ("local", "id"),
            ("apriori", "frequency"),
            ("local", "frequency"),
        ):
            for k in ks:
                for m in ms:
                    if (method == "local" or order != "id") and (k != 10 or m != 2):
                        continue
                    label = method if order == "id" else f"{method}, tree by frequency"
                    try:
                        res, _wall, peak = measure(
                            _km_case, rel, limit, k, m, method, order, timeout=600
                        )
                    except (TimeoutError, RuntimeError) as exc:
                        rows.append(
                            [label, k, m, "-", f"failed: {str(exc)[:60]}", "", "", "", "", "", ""]
                        )
                        continue
                    rows.append(
                        [
                            label,
                            k,
                            m,
                            res["n"],
                            round(res["seconds"], 2),
                            round(res["cpu"], 2),
                            round(peak),
                            f"{100 * res['ncp']:.3f}%",
                            round(res["support_error"], 3),
                            round(res["top50_error"], 3),
                            round(res["fi_recall"], 3),
                        ]
                    )
                    print(name, rows[-1], flush=True)
        sections.append(
            f"### {name}: k^m-anonymity\n\n"
            + markdown_table(
                [
                    "method",
                    "k",
                    "m",
                    "baskets",
                    "time s",
                    "cpu s",
                    "peak MiB",
                    "NCP",
                    "support err",
                    "top-50 err",
                    "FI recall",
                ],
                rows,
            )
        )
        rows = []
        for k in ks:
            res, _wall, peak = measure(_k_case, rel, limit, k, timeout=600)
            rows.append(
                [
                    k,
                    res["n"],
                    round(res["seconds"], 2),
                    round(res["cpu"], 2),
                    round(peak),
                    f"{100 * res['ncp']:.2f}%",
                    res["groups"],
                    round(res["support_error"], 3),
                    round(res["fi_recall"], 3),
                ]
            )
            print(name, rows[-1], flush=True)
        sections.append(
            f"### {name}: k-anonymity (Partition)\n\n"
            + markdown_table(
                [
                    "k",
                    "baskets",
                    "time s",
                    "cpu s",
                    "peak MiB",
                    "NCP",
                    "groups",
                    "support err",
                    "FI recall",
                ],
                rows,
            )
        )
        rows = []
        for p in (5,) if args.quick else (5, 10):
            res, _wall, peak = measure(_band_case, rel, limit, p, 5, timeout=600)
            rows.append(
                [
                    p,
                    res["n"],
                    res["sensitive"],
                    round(res["seconds"], 2),
                    round(res["cpu"], 2),
                    round(peak),
                    res["groups"],
                    res["suppressed"],
                    round(res["query_error"], 3),
                    round(res["p_before"], 3),
                    round(res["p_after"], 3),
                    f"{res['bandwidth'][0]} -> {res['bandwidth'][1]}",
                ]
            )
            print(name, rows[-1], flush=True)
        sections.append(
            f"### {name}: band matrix (CAHD)\n\n"
            + markdown_table(
                [
                    "p",
                    "baskets",
                    "sensitive items",
                    "time s",
                    "cpu s",
                    "peak MiB",
                    "groups",
                    "suppressed",
                    "count-query err",
                    "max P(link) before",
                    "after",
                    "co-occurrence bandwidth",
                ],
                rows,
            )
        )
    if args.quick:
        print("\n\n".join(sections))
        return
    if shared_data("retail/retail.dat") is not None:
        sections.insert(1, _peer_comparison())
    record_section("transactions", "## transactions\n\n" + "\n\n".join(sections))


if __name__ == "__main__":
    main()
