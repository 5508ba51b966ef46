"""Benchmarks of location cloaking (run by hand, not by the tests).

    python bench/location.py [--quick] [--skip-dask]
    python bench/location.py --trajectory [--quick]

GeoLife samples for k in {2, 5, 10} and windows {15 min, 1 h}, then a seeded synthetic
log of 10,000,000 fixes (1,000,000 with --quick): fixed and adaptive grids on pandas, the
dask path on a local cluster, and the utility/risk measures on the adaptive release.
Results go to the ``location`` section of bench/RESULTS.md.  ``--trajectory`` instead
compares trajectory k-anonymity with per-window cloaking at the same k (10,000 users,
1,000,000 fixes, 1-hour windows) and times trajectory mode on 100,000 users / 10,000,000
fixes (skipped with --quick); it writes bench/results/trajectory.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import machine_line, markdown_table, measure, record_section, shared_data  # noqa: E402

KEY = b"benchmark-key-0123456789"


def geolife_case(path: str, cols: dict, k: int, window: str, method: str) -> dict:
    import location
    from location.io import read_fixes
    from structanon.errors import InfeasibleError

    df = read_fixes(path, columns=[cols["user"], cols["time"], cols["lat"], cols["lon"]])
    start = time.perf_counter()
    try:
        r = location.cloak(df, k, window=window, method=method, seed=0, key=KEY, **cols)
    except InfeasibleError as exc:
        return {"error": str(exc), "n": len(df), "users": int(df[cols["user"]].nunique())}
    seconds = time.perf_counter() - start
    u, rb, ra = r.utility, r.risk["before"], r.risk["after"]
    return {
        "n": len(df),
        "users": r.info["users"],
        "seconds": seconds,
        "regions": u["n_regions"],
        "mean_km2": u["fix_weighted_mean_km2"],
        "median_km2": u["region_km2_median"],
        "centroid_m": u["centroid_error_m_median"],
        "suppression": u["suppression_share"],
        "range_err": u["range_query_rel_error_mean"],
        "unicity": "/".join(
            f"{rb[f'unicity_p{p}']:.2f}>{ra[f'unicity_p{p}']:.2f}" for p in (1, 2, 4)
        ),
        "home": f"{rb['home_unique_share']:.2f}>{ra['home_unique_share']:.2f}",
    }


def synthetic_case(n: int, method: str, measures: bool) -> dict:
    import location
    from location.synthetic import synthetic_log

    df = synthetic_log(n, n // 100, seed=0)
    start, cpu = time.perf_counter(), time.process_time()
    r = location.cloak(df, 10, window="15min", method=method, seed=0, measures=measures, key=KEY)
    out = {
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "suppressed": r.suppressed,
        "groups": r.checks.checks[0].n_groups,
        "timings": r.timings,
        "regions": int(r.data["region_id"].nunique()),
    }
    if measures:
        out.update({"utility": r.utility, "risk": r.risk})
    return out


def dask_case(n: int, method: str, npartitions: int) -> dict:
    import tempfile

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import location
    from location.synthetic import synthetic_log

    with tempfile.TemporaryDirectory() as tmp:
        df = synthetic_log(n, n // 100, seed=0)
        dd.from_pandas(df, npartitions=npartitions).to_parquet(tmp)
        del df
        with (
            LocalCluster(
                processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0"
            ) as cluster,
            Client(cluster),
        ):
            ddf = dd.read_parquet(tmp)
            start, cpu = time.perf_counter(), time.process_time()
            r = location.cloak(
                ddf, 10, window="15min", method=method, seed=0, measures=False, key=KEY
            )
            cloak_s, cloak_cpu = time.perf_counter() - start, time.process_time() - cpu
            start = time.perf_counter()
            out = r.data.compute()
            materialize_s = time.perf_counter() - start
    return {
        "seconds": cloak_s,
        "cpu": cloak_cpu,
        "materialize": materialize_s,
        "rows": len(out),
        "suppressed": r.suppressed,
        "timings": r.timings,
    }


def trajectory_quality(n: int, users: int, k: int, window: str, linkage: str) -> dict:
    """One release of the synthetic log with its trajectory measures, whatever the mode."""
    import warnings

    import pandas as pd

    import location
    from location import metrics
    from location.synthetic import synthetic_log

    df = synthetic_log(n, users, seed=0)
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r = location.cloak(df, k, window=window, linkage=linkage, seed=0, key=KEY)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    utility = dict(r.utility)
    if linkage != "trajectory":
        original = pd.DataFrame(
            {"user": df["user"], "lat": df["lat"], "lon": df["lon"], "time": df["time"]}
        )
        utility.update(metrics.trajectory_utility(original, r.data, window, seed=0))
    return {
        "seconds": seconds,
        "cpu": cpu,
        "timings": r.timings,
        "utility": utility,
        "risk": r.risk,
        "info": {k_: r.info.get(k_) for k_ in ("clusters", "users_suppressed")},
        "load": os.getloadavg()[0],
    }


def trajectory_speed(n: int, users: int, k: int, window: str) -> dict:
    """Trajectory mode without measures (prepare + cluster + output + verify)."""
    import location
    from location.synthetic import synthetic_log

    df = synthetic_log(n, users, seed=0)
    start, cpu = time.perf_counter(), time.process_time()
    r = location.cloak(df, k, window=window, linkage="trajectory", measures=False, key=KEY)
    return {
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "timings": r.timings,
        "clusters": r.info["clusters"],
        "users_suppressed": r.info["users_suppressed"],
        "suppressed_share": r.suppressed / len(df),
        "load": os.getloadavg()[0],
    }


def _quality_row(linkage: str, res: dict, peak: float) -> list:
    u, ra, rb = res["utility"], res["risk"]["after"], res["risk"]["before"]
    return [
        linkage,
        f"{res['seconds']:.1f} / {res['cpu']:.1f}",
        f"{peak:,.0f}",
        f"{u['sample_extent_km_median']:.2f} / {u['sample_extent_km_p90']:.2f}",
        f"{u['sample_duration_min_median']:.0f} / {u['sample_duration_min_p90']:.0f}",
        f"{u['suppression_share']:.4f}",
        f"{u['user_range_query_rel_error_mean']:.3f}",
        f"{u['od_flow_error']:.3f}",
        "/".join(f"{ra[f'linkage_p{p}']:.3f}" for p in (1, 2, 4)),
        "/".join(f"{ra[f'unicity_p{p}']:.2f}" for p in (1, 2, 4)),
        f"{ra.get('continuity_chain_share', float('nan')):.3f}",
        "/".join(f"{rb[f'linkage_p{p}']:.2f}" for p in (1, 2, 4)),
    ]


def trajectory_main(quick: bool) -> None:
    """Trajectory k-anonymity next to per-window cloaking; writes bench/results/trajectory.md."""
    n, users, k, window = 1_000_000, 10_000, 10, "1h"
    rows = []
    for linkage in ("trajectory", "window", "pseudonym"):
        res, _, peak = measure(trajectory_quality, n, users, k, window, linkage, timeout=1200)
        print("trajectory quality", linkage, res, peak, flush=True)
        rows.append(_quality_row(linkage, res, peak))
    sizes = [(1_000_000, 10_000)] + ([] if quick else [(10_000_000, 100_000)])
    speed = []
    for n_fixes, n_users in sizes:
        res, _, peak = measure(trajectory_speed, n_fixes, n_users, k, window, timeout=2400)
        print("trajectory speed", n_fixes, res, peak, flush=True)
        t = res["timings"]
        speed.append(
            [
                f"{n_users:,}",
                f"{n_fixes:,}",
                f"{res['load']:.1f}",
                f"{res['seconds']:.1f}",
                f"{res['cpu']:.1f}",
                f"{peak:,.0f}",
                f"{t['prepare']:.1f} / {t['cluster']:.1f} / {t['output']:.1f} / {t['verify']:.1f}",
                res["clusters"],
                res["users_suppressed"],
                f"{res['suppressed_share']:.4f}",
            ]
        )
    command = f"python bench/location.py --trajectory{' --quick' if quick else ''}"
    text = "\n".join(
        [
            "## location: trajectory k-anonymity (linkage='trajectory')",
            "",
            f"Machine: {machine_line()}, shared with other jobs while measuring (load "
            "averages of 10-20 on 2 cores): wall times are upper bounds, CPU times (the "
            "process's, all threads) are what the code costs.",
            f"Command: `{command}`",
            "",
            f"### Quality at the same k: {users:,} users, {n:,} fixes, k={k}, {window} windows",
            "",
            "Synthetic log `location.synthetic_log(n, users, seed=0)` (1 day, 4 centres, "
            "users commuting home-work).  Every mode's release is read as samples "
            "(pseudonym, interval, region): extent = side of the region's equal-area "
            "square, duration = interval length, both median / p90 over published rows; "
            "range err = mean relative error of 200 user-count range queries "
            "(250-2,500 m half-side, one window); OD err = L1 error of the "
            "origin-destination matrix between 5 km districts (1 = no flow recovered); "
            "linkage = mean success (1/|candidates|) of an attacker knowing p = 1/2/4 true "
            "points (before cloaking: the last column); chain = share of window-to-window "
            "steps chained by spatial continuity (window mode).  Wall / CPU s include the "
            "measures; peak MiB is the child's max RSS with generation.",
            "",
            markdown_table(
                [
                    "linkage",
                    "wall / CPU s",
                    "peak MiB",
                    "extent km med / p90",
                    "duration min med / p90",
                    "suppressed fixes",
                    "range err",
                    "OD err",
                    "linkage p1/p2/p4",
                    "unicity p1/p2/p4",
                    "chain",
                    "linkage before",
                ],
                rows,
            ),
            "",
            "### Speed of trajectory mode (k=10, 1-hour windows, measures off)",
            "",
            markdown_table(
                [
                    "users",
                    "fixes",
                    "load avg",
                    "wall s",
                    "CPU s",
                    "peak MiB",
                    "prepare / cluster / output / verify s",
                    "clusters",
                    "users suppressed",
                    "fixes suppressed",
                ],
                speed,
            ),
            "",
        ]
    )
    out = Path(__file__).resolve().parent / "results" / "trajectory.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="1M synthetic fixes instead of 10M")
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument(
        "--trajectory",
        action="store_true",
        help="only the trajectory comparison, written to bench/results/trajectory.md",
    )
    args = ap.parse_args()
    if args.trajectory:
        trajectory_main(args.quick)
        return
    n = 1_000_000 if args.quick else 10_000_000
    lines = [
        f"Machine: {machine_line()}; shared with other jobs while measuring (the 1-minute "
        "load average at the end of each 10M case is in its table), so wall times are "
        "upper bounds.",
        f"Command: `python bench/location.py{' --quick' if args.quick else ''}"
        f"{' --skip-dask' if args.skip_dask else ''}`",
        "",
    ]

    rows = []
    cases = [
        (
            "geolife/geolife_sample.txt.gz",
            {"user": "uid", "time": "datetime", "lat": "lat", "lon": "lng"},
        ),
        (
            "geolife/geolife_11users_trackintel.csv.gz",
            {"user": "uid", "time": "datetime", "lat": "lat", "lon": "lng"},
        ),
    ]
    for rel, cols in cases:
        path = shared_data(rel)
        if path is None:
            lines.append(f"{rel}: absent, skipped.")
            continue
        for k in (2, 5, 10):
            for window in ("15min", "1h"):
                for method in ("fixed", "adaptive"):
                    res, secs, peak = measure(
                        geolife_case, str(path), cols, k, window, method, timeout=300
                    )
                    print(rel, k, window, method, res, flush=True)
                    if "error" in res:
                        rows.append(
                            [
                                rel.split("/")[1],
                                f"{res['n']:,}",
                                res["users"],
                                k,
                                window,
                                method,
                                res["error"],
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
                        )
                        continue
                    rows.append(
                        [
                            rel.split("/")[1],
                            f"{res['n']:,}",
                            res["users"],
                            k,
                            window,
                            method,
                            f"{res['seconds']:.2f}",
                            f"{peak:.0f}",
                            res["regions"],
                            f"{res['median_km2']:.3g}",
                            f"{res['mean_km2']:.3g}",
                            f"{res['centroid_m']:.0f}",
                            f"{res['suppression']:.3f}",
                            f"{res['range_err']:.2f}",
                            res["unicity"],
                            res["home"],
                        ]
                    )
    lines += [
        "### GeoLife (cell 100 m, seed 0)",
        "",
        "mean km² = area of a fix's region averaged over published fixes (GeoLife has "
        "far outliers, so top-level merges make it large); centroid = "
        "median distance from the true point to its region's centre; range err = mean "
        "relative error of 200 random range-count queries (250-2,500 m half-side, one "
        "window); unicity p=1/2/4 and unique home share shown as before>after.",
        "",
        markdown_table(
            [
                "file",
                "fixes",
                "users",
                "k",
                "window",
                "method",
                "cloak s",
                "peak MiB",
                "regions",
                "median region km²",
                "mean km²",
                "centroid m",
                "suppressed",
                "range err",
                "unicity p1/p2/p4",
                "unique home",
            ],
            rows,
        ),
        "",
    ]

    big = []
    for method in ("fixed", "adaptive"):
        res, secs, peak = measure(synthetic_case, n, method, False, timeout=600)
        print("synthetic", method, res, secs, peak, flush=True)
        t = res["timings"]
        big.append(
            [
                f"{n:,}",
                method,
                "pandas",
                f"{os.getloadavg()[0]:.1f}",
                f"{res['seconds']:.1f}",
                f"{res['cpu']:.1f}",
                f"{peak:,.0f}",
                f"{t['prepare']:.1f} / {t['assign']:.1f} / {t['output']:.1f} / {t['verify']:.1f}",
                res["regions"],
                res["groups"],
                res["suppressed"],
            ]
        )
    if not args.skip_dask:
        for method in ("fixed", "adaptive"):
            res, secs, peak = measure(dask_case, n, method, 8, timeout=900)
            print("dask", method, res, secs, peak, flush=True)
            t = res["timings"]
            big.append(
                [
                    f"{n:,}",
                    method,
                    "dask (8 parquet parts, 1 worker x 2 threads)",
                    f"{os.getloadavg()[0]:.1f}",
                    f"{res['seconds']:.1f} (+{res['materialize']:.1f} to compute data)",
                    f"{res['cpu']:.1f}",
                    f"{peak:,.0f}",
                    f"{t['prepare']:.1f} / {t['assign']:.1f} / - / {t['verify']:.1f}",
                    "",
                    "",
                    res["suppressed"],
                ]
            )
    lines += [
        f"### Synthetic log: {n:,} fixes, {n // 100:,} users, 4 centres, k=10, 15 min",
        "",
        "Generated by `location.synthetic.synthetic_log(n, n // 100, seed=0)` "
        "(1 day); cloak time excludes generation and the utility/risk measures "
        "(`measures=False`); CPU s is the process's CPU time (all threads), which the other jobs "
        "on the machine do not inflate; peak MiB is the child process's max RSS, "
        "generation included.",
        "",
        markdown_table(
            [
                "fixes",
                "method",
                "engine",
                "load avg",
                "cloak wall s",
                "cloak CPU s",
                "peak MiB",
                "prepare / assign / output / verify s",
                "regions",
                "(region, window) groups",
                "suppressed",
            ],
            big,
        ),
        "",
    ]

    res, secs, peak = measure(synthetic_case, n, "adaptive", True, timeout=900)
    print("synthetic measures", res, secs, flush=True)
    u, rb, ra = res["utility"], res["risk"]["before"], res["risk"]["after"]
    lines += [
        f"Measures of the adaptive release ({n:,} fixes; measures took "
        f"{res['timings']['measures']:.1f} s): regions {u['n_regions']:,}, fix-weighted "
        f"mean area {u['fix_weighted_mean_km2']:.3g} km², median region "
        f"{u['region_km2_median']:.3g} km², centroid error median "
        f"{u['centroid_error_m_median']:.0f} m / p90 {u['centroid_error_m_p90']:.0f} m, "
        f"range-query error {u['range_query_rel_error_mean']:.3f}, heat-map cosine "
        f"{u['heatmap_cosine']:.4f}, suppression {u['suppression_share']:.4f}; unicity "
        f"p=1/2/4 before {rb['unicity_p1']:.2f}/{rb['unicity_p2']:.2f}/"
        f"{rb['unicity_p4']:.2f}, after {ra['unicity_p1']:.2f}/{ra['unicity_p2']:.2f}/"
        f"{ra['unicity_p4']:.2f}; unique home {rb['home_unique_share']:.2f} -> "
        f"{ra['home_unique_share']:.2f}."
    ]
    record_section("location", "## location\n\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
