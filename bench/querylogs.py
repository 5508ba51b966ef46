"""Benchmark of querylogs.anonymize on the real AOL samples and a synthetic 1M-line log.

Run: python bench/querylogs.py [--quick]
Writes the "querylogs" section of bench/RESULTS.md.  Real queries are never printed:
only aggregate figures are recorded.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import machine_line, markdown_table, measure, record_section, shared_data  # noqa: E402

import querylogs  # noqa: E402

IA_COLUMNS = {"user": "AnonID", "query": "Query", "time": "QueryTime", "rank": "ItemRank"}


def run_real(
    path: str,
    k: int,
    tie_break: str = "suppress",
    match: str = "query",
    profile_scale: str = "count",
    grouping: str = "greedy",
    refine: int = 0,
) -> dict:
    start = time.perf_counter()
    if "aol_ia_head" in path:  # no URLs; read through the generic reader's column mapping
        log = querylogs.read_log(path, "csv", sep="\t", columns=IA_COLUMNS)
    else:
        log = querylogs.read_log(path, on_bad_lines="drop")
    read_s = time.perf_counter() - start
    release = querylogs.anonymize(
        log,
        k,
        seed=1,
        tie_break=tie_break,
        match=match,
        profile_scale=profile_scale,
        grouping=grouping,
        refine=refine,
    )
    return summarize(release, read_s, len(log))


def run_synthetic(
    users: int, lines: int, k: int, grouping: str = "greedy", refine: int = 0
) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "synthetic.tsv"
        log = querylogs.synthetic_log(
            users, lines, n_topics=100, intents_per_topic=20, queries_per_intent=8, seed=0
        )
        querylogs.write_log(log, source, aol=True)
        del log
        start = time.perf_counter()
        log = querylogs.read_log(source)
        read_s = time.perf_counter() - start
        release = querylogs.anonymize(log, k, seed=1, grouping=grouping, refine=refine)
        write_start = time.perf_counter()
        querylogs.write_log(release.data, Path(tmp) / "published.tsv")
        out = summarize(release, read_s, len(log))
        out["write_s"] = time.perf_counter() - write_start
        return out


def pairing_bound(path: str) -> dict:
    """Query events kept at k=2 by MDAV and by a maximum-weight pairing of users, whose
    weight is the events a pair keeps: ``2 * sum_q min(n_u(q), n_v(q))``."""
    import networkx as nx
    import pandas as pd

    log = querylogs.read_log(path, on_bad_lines="drop")
    release = querylogs.anonymize(log, 2, seed=1, measures=False, grouping="mdav")
    greedy = querylogs.anonymize(log, 2, seed=1, measures=False, grouping="greedy").info
    codes, vocab = querylogs.normalize_queries(log["query"])
    users, _ = pd.factorize(log["user"], sort=True)
    events = pd.DataFrame({"u": users, "q": codes, "t": log["time"].to_numpy()}).drop_duplicates()
    events = events[~querylogs.contains_identifier(vocab)[events["q"].to_numpy()]]
    counts = events.groupby(["u", "q"]).size().reset_index(name="n")
    shared = counts[counts.groupby("q")["u"].transform("size") >= 2]
    weight: dict[tuple[int, int], int] = {}
    for _, group in shared.groupby("q"):
        u, n = group["u"].to_numpy(), group["n"].to_numpy()
        for i in range(u.size):
            for j in range(i + 1, u.size):
                key = (min(u[i], u[j]), max(u[i], u[j]))
                weight[key] = weight.get(key, 0) + int(min(n[i], n[j]))
    graph = nx.Graph()
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in weight.items())
    start = time.perf_counter()
    matching = nx.max_weight_matching(graph)
    seconds = time.perf_counter() - start
    paired = 2 * sum(weight[(min(a, b), max(a, b))] for a, b in matching)
    info = release.info
    return {
        "events": int(len(events)),
        "mdav_kept": info["queries_published"] - info["queries_added"],
        "pairing_kept": paired,
        "greedy_kept": greedy["queries_published"] - greedy["queries_added"],
        "user_pairs_sharing": len(weight),
        "matching_s": seconds,
    }


def summarize(release, read_s: float, rows: int) -> dict:
    info, utility, risk = release.info, release.utility, release.risk
    return {
        "rows": rows,
        "users": info["users_in"],
        "queries_in": info["queries_in"],
        "read_s": read_s,
        "timings": dict(release.timings),
        "published": info["queries_published"],
        "added": info["queries_added"],
        "kept": info["queries_published"] - info["queries_added"],
        "suppressed": info["queries_suppressed"],
        "suppressed_identifier": info["queries_suppressed_identifier"],
        "users_empty": info["users_without_published_queries"],
        "intents": info["intents"]["n_intents"],
        "largest_intent": info["intents"]["largest_intent"],
        "top100": utility["top100_query_overlap"],
        "kl": utility["query_frequency_kl_bits"],
        "pair_precision": utility["query_url_pairs"]["precision"],
        "pair_recall": utility["query_url_pairs"]["recall"],
        "intent_js": utility["intent_js_divergence"]["mean"],
        "risk_before": risk["before"],
        "risk_after": risk["after"],
        "verified": bool(release.checks.passed),
    }


def compare_groupings() -> None:
    """Writes the "querylogs-grouping" section: kept / added / suppressed per grouping."""
    top = shared_data("aol/aol_top1000_users_clicks.tsv.gz")
    cases = []
    if top is not None:
        cases += [
            (
                f"AOL top-1000 users (k={k})",
                f"{g}, refine={r}",
                run_real,
                (str(top), k, "suppress", "query", "count", g, r),
            )
            for k in (2, 5, 10)
            for g, r in (("mdav", 0), ("greedy-intent", 0), ("greedy", 0), ("greedy", 1))
        ]
    cases += [
        (
            "synthetic 10k users / 1M lines (k=5)",
            f"{g}, refine={r}",
            run_synthetic,
            (10_000, 1_000_000, 5, g, r),
        )
        for g, r in (("mdav", 0), ("greedy", 0), ("greedy", 1))
    ]
    rows = []
    for name, grouping, fn, fargs in cases:
        print(f"running {name} {grouping} ...", flush=True)
        result, seconds, peak = measure(fn, *fargs, timeout=600)
        t = result["timings"]
        rows.append(
            [
                name,
                grouping,
                result["queries_in"],
                result["kept"],
                result["added"],
                result["suppressed"],
                result["added"] + result["suppressed"],
                result["published"],
                result["users_empty"],
                result["top100"],
                result["kl"],
                result["pair_recall"],
                result["intent_js"],
                round(t["user_clustering"], 1),
                round(t["total"] - t.get("measures", 0.0), 1),
                round(seconds, 1),
                round(peak),
                "yes" if result["verified"] else "NO",
            ]
        )
        print(rows[-1], flush=True)
    text = "\n\n".join(
        [
            "## querylogs: user grouping, greedy by shared queries versus MDAV",
            "Command: `python bench/querylogs.py --grouping`; machine: "
            f"{machine_line()}, shared with other jobs while measuring (times are indicative). "
            "Same pipeline and parameters as the querylogs section (seed 1, day, identifiers "
            "suppressed, tie_break=suppress, match=query); only `grouping` changes. `mdav`: MDAV "
            "over intent-count profiles (the former default); `greedy-intent`: the greedy "
            "grouping on intent counts; `greedy`: the greedy grouping on exact query counts "
            "(the default); refine=1: one pass of `refine_groups` (moves and swaps of users "
            "that lower additions + suppressions). kept = query events published for the user who issued them "
            "(published - added); cost = added + suppressed, the quantity the medians minimize "
            "per cluster (identifier suppressions included, the same for every grouping). "
            "group s = the user grouping alone; anonymize s = the whole `anonymize` call "
            "without the assessment; wall = the forked case (reading, and for the synthetic "
            "log generating and writing input and output, plus the assessment). At k=2 a "
            "maximum-weight pairing keeps 23,688 (querylogs-pairing section).",
            markdown_table(
                [
                    "case",
                    "grouping",
                    "queries in",
                    "kept",
                    "added",
                    "suppressed",
                    "cost",
                    "published",
                    "users with nothing published",
                    "top-100 overlap",
                    "KL bits",
                    "pair recall",
                    "intent JS mean",
                    "group s",
                    "anonymize s",
                    "wall s",
                    "peak MiB",
                    "verified",
                ],
                rows,
            ),
        ]
    )
    record_section("querylogs-grouping", text)
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small inputs only")
    parser.add_argument(
        "--pairing-bound",
        action="store_true",
        help="only compare MDAV with a maximum-weight pairing at k=2 "
        "(AOL top-1000 users; a few minutes)",
    )
    parser.add_argument(
        "--grouping",
        action="store_true",
        help="only compare the user groupings (greedy, greedy-intent, mdav) on "
        "AOL top-1000 users (k=2, 5, 10) and the synthetic 10k/1M log",
    )
    args = parser.parse_args()
    if args.grouping:
        compare_groupings()
        return
    if args.pairing_bound:
        top = shared_data("aol/aol_top1000_users_clicks.tsv.gz")
        if top is None:
            print("AOL top-1000 sample not available; skipped")
            return
        result, seconds, peak = measure(pairing_bound, str(top), timeout=900)
        text = "\n\n".join(
            [
                "## querylogs: k=2, MDAV and greedy versus a maximum-weight pairing",
                "Command: `python bench/querylogs.py --pairing-bound`; machine: "
                f"{machine_line()}, shared while measuring. AOL top-1000 users, identifier "
                "queries removed. A pair (u, v) published together keeps "
                "2 sum_q min(n_u(q), n_v(q)) query events; networkx `max_weight_matching` "
                "finds the best pairing (an upper reference for groups of exactly two, not "
                "a bound for groups of three).",
                markdown_table(
                    [
                        "query events",
                        "user pairs sharing a query",
                        "kept by MDAV (k=2)",
                        "kept by greedy (k=2)",
                        "kept by max-weight pairing",
                        "matching s",
                        "total wall s",
                        "peak MiB",
                    ],
                    [
                        [
                            result["events"],
                            result["user_pairs_sharing"],
                            result["mdav_kept"],
                            result["greedy_kept"],
                            result["pairing_kept"],
                            round(result["matching_s"], 1),
                            round(seconds, 1),
                            round(peak),
                        ]
                    ],
                ),
            ]
        )
        record_section("querylogs-pairing", text)
        print(text)
        return
    cases = []
    raw = shared_data("aol/aol_raw_sample_20k.tsv")
    top = shared_data("aol/aol_top1000_users_clicks.tsv.gz")
    if raw is not None:
        cases += [(f"AOL raw sample 20k (k={k})", run_real, (str(raw), k)) for k in (2, 5, 10)]
        cases.append(
            (
                "AOL raw sample 20k (k=5, match=intent)",
                run_real,
                (str(raw), 5, "suppress", "intent"),
            )
        )
    ia = shared_data("aol/aol_ia_head_clicks_92k.tsv.gz")
    if ia is not None:
        cases.append(("AOL head 92k, no URLs (k=5)", run_real, (str(ia), 5)))
    if top is not None and not args.quick:
        cases += [(f"AOL top-1000 users (k={k})", run_real, (str(top), k)) for k in (2, 5, 10)]
        cases.append(("AOL top-1000 users (k=2, tie_break=add)", run_real, (str(top), 2, "add")))
        cases.append(
            (
                "AOL top-1000 users (k=5, match=intent)",
                run_real,
                (str(top), 5, "suppress", "intent"),
            )
        )
        cases.append(
            (
                "AOL top-1000 users (k=5, grouping=mdav)",
                run_real,
                (str(top), 5, "suppress", "query", "count", "mdav"),
            )
        )
        cases.append(
            (
                "AOL top-1000 users (k=5, grouping=mdav, profile_scale=log)",
                run_real,
                (str(top), 5, "suppress", "query", "log", "mdav"),
            )
        )
    if args.quick:
        cases.append(("synthetic 1k users / 100k lines (k=5)", run_synthetic, (1000, 100_000, 5)))
    else:
        cases.append(
            ("synthetic 10k users / 1M lines (k=5)", run_synthetic, (10_000, 1_000_000, 5))
        )
    rows_main, rows_risk = [], []
    for name, fn, fargs in cases:
        print(f"running {name} ...", flush=True)
        result, seconds, peak = measure(fn, *fargs, timeout=600)
        t = result["timings"]
        rows_main.append(
            [
                name,
                result["rows"],
                result["users"],
                result["queries_in"],
                round(seconds, 1),
                round(result["read_s"], 1),
                round(t["total"] - t.get("measures", 0.0), 1),
                round(t.get("measures", 0.0), 1),
                round(peak),
                result["published"],
                result["added"],
                result["suppressed"],
                result["suppressed_identifier"],
                result["users_empty"],
                result["intents"],
                result["largest_intent"],
                "yes" if result["verified"] else "NO",
            ]
        )
        b, a = result["risk_before"], result["risk_after"]
        rows_risk.append(
            [
                name,
                result["top100"],
                result["kl"],
                result["pair_precision"],
                result["pair_recall"],
                result["intent_js"],
                f"{b['unique_by_query_set']:.3f} / {a['unique_by_query_set']:.3f}",
                f"{b['unique_by_1_queries']:.3f} / {a['unique_by_1_queries']:.3f}",
                f"{b['unique_by_3_queries']:.3f} / {a['unique_by_3_queries']:.3f}",
                f"{b['unique_by_5_queries']:.3f} / {a['unique_by_5_queries']:.3f}",
                f"{b['reidentified_by_5_queries']:.3f} / {a['reidentified_by_5_queries']:.3f}",
            ]
        )
        print(rows_main[-1], rows_risk[-1], flush=True)
    command = "python bench/querylogs.py" + (" --quick" if args.quick else "")
    text = "\n\n".join(
        [
            "## querylogs",
            f"Command: `{command}`; machine: {machine_line()}, shared with other jobs while "
            "measuring (wall times are indicative). Each case runs in a forked child "
            "(`measure`); wall = read + anonymize + utility/risk assessment (for the synthetic case "
            "also generating and writing the input file, and writing the published log); seed 1, time "
            "granularity day, identifiers suppressed, grouping=greedy (the default; MDAV before, "
            "see the querylogs-grouping section), refine=0, tie_break=suppress, match=query and "
            "profile_scale=count (used by MDAV only) unless stated. Query counts are query events "
            "(distinct user, query, time). Real queries are not shown, only aggregates.",
            markdown_table(
                [
                    "case",
                    "rows",
                    "users",
                    "queries in",
                    "wall s",
                    "read s",
                    "anonymize s",
                    "assess s",
                    "peak MiB",
                    "published",
                    "added",
                    "suppressed",
                    "of which identifiers",
                    "users with nothing published",
                    "intents",
                    "largest intent",
                    "verified",
                ],
                rows_main,
            ),
            "Utility and risk (before / after; `unique_by_p` = share of users singled out by p "
            "random queries of theirs inside the log; `reid_5` = share of original users the "
            "5-query attack links to their own pseudonym in the release):",
            markdown_table(
                [
                    "case",
                    "top-100 overlap",
                    "KL bits",
                    "pair precision",
                    "pair recall",
                    "intent JS mean",
                    "unique by set",
                    "unique_by_1",
                    "unique_by_3",
                    "unique_by_5",
                    "reid_5",
                ],
                rows_risk,
            ),
        ]
    )
    record_section("querylogs", text)
    print(text)


if __name__ == "__main__":
    main()
