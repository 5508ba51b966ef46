"""Scaling on Dask against pandas (run by hand, not by the tests).

    python bench/dask_scale.py location --fixes 10000000
    python bench/dask_scale.py location-parts --input /tmp/log100m --generate 100000000 \
        --parts 10 --engines pandas,dask --memory-limit 4GB
    python bench/dask_scale.py querylogs --lines 1000000
    python bench/dask_scale.py querylogs-blocking --users 50000 --block-sizes none,2000,5000
    python bench/dask_scale.py querylogs-generate --users 1000000 --lines 40000000 --path DIR
    python bench/dask_scale.py querylogs-big --path DIR
    python bench/dask_scale.py tabular --rows 300000 --max-rows 100000

Each case runs in a forked child (peak RSS of the child recorded) on a seeded synthetic
input written as Parquet (16 parts) first.  pandas reads the Parquet and runs in memory;
Dask reads it lazily on a LocalCluster of one in-process worker with 2 threads (the CLI's
default).  Wall seconds are of a loaded shared machine; CPU seconds (``process_time``,
every thread of the process) compare better.  Prints one markdown row per run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import measure  # noqa: E402

KEY = b"benchmark-key-0123456789"


def _part_name(i: int) -> str:
    """Zero-padded part names, so pandas (sorted file names) reads the rows in Dask's order."""
    return f"part.{i:05d}.parquet"


def _client(memory_limit: str | None = None):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        processes=False,
        n_workers=1,
        threads_per_worker=2,
        dashboard_address="127.0.0.1:0",
        memory_limit=memory_limit or "auto",
    )
    return cluster, Client(cluster)


def write_location_parts(
    dest: str, n_fixes: int, n_users: int, part_fixes: int = 1_000_000, seed: int = 0
) -> int:
    """A synthetic log (the model of :func:`location.synthetic.synthetic_log`) written as
    Parquet parts of ``part_fixes`` fixes, one part at a time, so it never sits in memory:
    the users (centre, home, work, activity) are drawn once, each part's fixes from
    ``default_rng([seed, part])``.  The first parts of a larger log are a smaller one, so
    a 10M-fix subset is the first 10 parts of the 100M log.  Returns the parts written."""
    import numpy as np
    import pandas as pd

    from location._grid import EARTH_RADIUS
    from location.synthetic import DEFAULT_CENTRES

    os.makedirs(dest, exist_ok=True)
    rng = np.random.default_rng(seed)
    c = np.asarray(DEFAULT_CENTRES, dtype=np.float64)
    centre = rng.choice(len(c), n_users, p=c[:, 2] / c[:, 2].sum())

    def around(r, lat, lon, sigma_m, size):
        dlat = np.degrees(r.normal(0, 1, size) * sigma_m / EARTH_RADIUS)
        dlon = np.degrees(r.normal(0, 1, size) * sigma_m / EARTH_RADIUS) / np.cos(np.radians(lat))
        return lat + dlat, lon + dlon

    home = around(rng, c[centre, 0], c[centre, 1], c[centre, 2], n_users)
    work = around(rng, c[centre, 0], c[centre, 1], c[centre, 2], n_users)
    cdf = np.cumsum(rng.lognormal(0, 1, n_users))
    cdf /= cdf[-1]
    t0 = pd.Timestamp("2024-05-01T00:00:00Z")
    n_parts = -(-n_fixes // part_fixes)
    for part in range(n_parts):
        n = min(part_fixes, n_fixes - part * part_fixes)
        r = np.random.default_rng([seed, part])
        user = np.minimum(np.searchsorted(cdf, r.random(n), side="right"), n_users - 1)
        offset = r.uniform(0, 86400.0, n)
        hour = (offset / 3600.0) % 24
        at_home = (hour >= 20) | (hour < 7)
        mix = np.where(r.random(n) < 0.2, r.random(n), np.where(at_home, 0.0, 1.0))
        lat = home[0][user] * (1 - mix) + work[0][user] * mix
        lon = home[1][user] * (1 - mix) + work[1][user] * mix
        lat, lon = around(r, lat, lon, 150.0, n)
        time_ = t0 + pd.to_timedelta(np.round(offset * 1e9).astype(np.int64), unit="ns")
        pd.DataFrame(
            {"user": user.astype(np.int64), "time": time_, "lat": lat, "lon": lon}
        ).to_parquet(f"{dest}/{_part_name(part)}", index=False)
    return n_parts


def location_case(path: str, engine: str, out: str) -> dict:
    import dask.dataframe as dd
    import pandas as pd

    import location
    from location.io import write_cloaked

    cluster = client = None
    if engine == "dask":
        cluster, client = _client()
    start, cpu = time.perf_counter(), time.process_time()
    df = dd.read_parquet(path) if engine == "dask" else pd.read_parquet(path)
    r = location.cloak(df, 10, window="15min", seed=0, measures=False, key=KEY)
    cloak_s, cloak_cpu = time.perf_counter() - start, time.process_time() - cpu
    write_cloaked(r.data, out)
    total_s, total_cpu = time.perf_counter() - start, time.process_time() - cpu
    result = {
        "cloak_s": cloak_s,
        "cloak_cpu": cloak_cpu,
        "total_s": total_s,
        "total_cpu": total_cpu,
        "suppressed": r.suppressed,
        "timings": {k: round(v, 1) for k, v in r.timings.items()},
    }
    if client is not None:
        client.close()
        cluster.close()
    return result


class _Sampler:
    """Peak RSS of the Dask workers (``client.run``) and of this process, sampled."""

    def __init__(self, client, every: float = 2.0, log_every: float = 60.0) -> None:
        import threading

        import psutil

        self.client, self.every, self.log_every = client, every, log_every
        self.me = psutil.Process()
        self.worker_peak = 0
        self.client_peak = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.start = time.perf_counter()
        self.thread.start()

    def _loop(self) -> None:
        last = 0.0
        while not self.stop.wait(self.every):
            try:
                rss = self.client.run(_rss) if self.client is not None else {}
            except Exception:  # a worker restarting: sample again
                rss = {}
            self.worker_peak = max([self.worker_peak, *rss.values()])
            self.client_peak = max(self.client_peak, self.me.memory_info().rss)
            now = time.perf_counter() - self.start
            if now - last >= self.log_every:
                last = now
                print(
                    f"[{now:7.0f} s] worker RSS {sum(rss.values()) / 2**20:,.0f} MiB "
                    f"(peak {self.worker_peak / 2**20:,.0f}), client RSS "
                    f"{self.me.memory_info().rss / 2**20:,.0f} MiB, load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                    flush=True,
                )

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def _cpu() -> float:
    import psutil

    t = psutil.Process().cpu_times()
    return float(t.user + t.system)


def location_parts_case(
    files: list[str], engine: str, out: str, memory_limit: str, batch_fixes: int
) -> dict:
    """One engine on the given Parquet parts (``measures=False``), the release written
    to ``out``.  Dask: a LocalCluster of one worker PROCESS (2 threads, ``memory_limit``),
    so the worker's memory is its own and the client's is this process's."""
    import dask.dataframe as dd
    import pandas as pd

    import location
    import location._dask as ldask
    from location.io import write_cloaked
    from structanon import _progress

    _progress.enable()
    cluster = client = None
    if engine == "dask":
        from distributed import Client, LocalCluster

        ldask.BATCH_FIXES = batch_fixes
        cluster = LocalCluster(
            processes=True,
            n_workers=1,
            threads_per_worker=2,
            memory_limit=memory_limit,
            dashboard_address="127.0.0.1:0",
        )
        client = Client(cluster)
        worker_cpu0 = sum(client.run(_cpu).values())
    sampler = _Sampler(client)
    start, cpu = time.perf_counter(), time.process_time()
    df = dd.read_parquet(files) if engine == "dask" else pd.read_parquet(files)
    r = location.cloak(df, 10, window="15min", seed=0, measures=False, key=KEY)
    cloak_s = time.perf_counter() - start
    print(f"cloaked in {cloak_s:.0f} s: {r.timings}", file=sys.stderr, flush=True)
    write_cloaked(r.data, out)
    total_s, total_cpu = time.perf_counter() - start, time.process_time() - cpu
    result = {
        "cloak_s": cloak_s,
        "total_s": total_s,
        "client_cpu": total_cpu,
        "worker_cpu": 0.0,
        "suppressed": r.suppressed,
        "users": r.info["users"],
        "timings": {k: round(v, 1) for k, v in r.timings.items()},
    }
    sampler.close()
    if client is not None:
        result["worker_cpu"] = sum(client.run(_cpu).values()) - worker_cpu0
        client.close()
        cluster.close()
    result["worker_peak_mib"] = sampler.worker_peak / 2**20
    result["client_peak_mib"] = sampler.client_peak / 2**20
    return result


def run_location_parts(
    src: str, parts: int, engines: list[str], out: str, memory_limit: str, batch_fixes: int
) -> None:
    """The first ``parts`` Parquet parts of ``src`` (made by :func:`write_location_parts`)
    on each engine; with both engines, the releases are compared row for row."""
    import glob

    import pandas as pd

    files = sorted(glob.glob(f"{src}/*.parquet"))[:parts]
    n = sum(pd.read_parquet(f, columns=["user"]).shape[0] for f in files)
    os.makedirs(out, exist_ok=True)
    written = {}
    for engine in engines:
        target = f"{out}/{engine}_{n}.parquet"
        res, secs, peak = measure(
            location_parts_case, files, engine, target, memory_limit, batch_fixes, timeout=7200
        )
        written[engine] = target
        cpu = res["client_cpu"] + res["worker_cpu"]
        print(
            f"| {n:,} fixes, {res['users']:,} users | {engine} | {os.getloadavg()[0]:.1f} | "
            f"{res['cloak_s']:.0f} | {res['total_s']:.0f} | {cpu:.0f} "
            f"({res['client_cpu']:.0f} client + {res['worker_cpu']:.0f} worker) | "
            f"{1e6 * cpu / n:.2f} | {res['worker_peak_mib']:,.0f} | {peak:,.0f} | "
            f"{res['timings']} |",
            flush=True,
        )
    if len(written) == 2:
        a = pd.read_parquet(written["pandas"])
        b = pd.read_parquet(written["dask"]).drop(columns="geometry")
        print(f"identical releases (pandas file vs Dask folder): {a.equals(b)}", flush=True)


def run_location(n: int) -> None:
    import dask.dataframe as dd
    import pandas as pd

    from location.synthetic import synthetic_log

    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        src = f"{tmp}/log"
        dd.from_pandas(synthetic_log(n, n // 100, seed=0), npartitions=16).to_parquet(
            src, name_function=_part_name
        )
        rows = {}
        for engine in ("pandas", "dask"):
            out = f"{tmp}/out_{engine}.parquet"
            res, secs, peak = measure(location_case, src, engine, out, timeout=3600)
            rows[engine] = res
            print(
                f"| location | {n:,} fixes | {engine} | {os.getloadavg()[0]:.1f} | "
                f"{res['cloak_s']:.1f} | {res['cloak_cpu']:.1f} | {res['total_s']:.1f} | "
                f"{res['total_cpu']:.1f} | {peak:,.0f} | {res['timings']} |",
                flush=True,
            )
        a = pd.read_parquet(f"{tmp}/out_pandas.parquet")
        b = pd.read_parquet(f"{tmp}/out_dask.parquet").drop(columns="geometry")
        same = a.equals(b)
        print(f"identical releases (pandas file vs Dask GeoParquet folder): {same}", flush=True)


def _row_hashes(data):
    """A hash of every published row (strings as Python objects, whatever the engine holds)."""
    import pandas as pd

    plain = data.astype({c: object for c in ("user", "query", "url")})
    return pd.util.hash_pandas_object(plain.where(plain.notna(), None), index=False)


def querylogs_case(path: str, engine: str) -> dict:
    import dask
    import dask.dataframe as dd
    import pandas as pd

    import querylogs

    cluster = client = None
    if engine == "dask":
        cluster, client = _client()
    start, cpu = time.perf_counter(), time.process_time()
    log = dd.read_parquet(path) if engine == "dask" else pd.read_parquet(path)
    r = querylogs.anonymize(log, 5, seed=0, key=KEY, measures=False)
    if engine == "dask":  # the lazy release: every row hashed where it is built
        (hashes,) = dask.compute(r.data.map_partitions(_row_hashes, meta=(None, "uint64")))
    else:
        hashes = _row_hashes(r.data)
    result = {
        "s": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "rows": len(hashes),
        "timings": {k: round(v, 1) for k, v in r.timings.items()},
        "digest": int(hashes.sum()),
    }
    if client is not None:
        client.close()
        cluster.close()
    return result


def run_querylogs(n_lines: int) -> None:
    import dask.dataframe as dd

    import querylogs

    n_users = max(n_lines // 40, 10)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        src = f"{tmp}/log"
        log = querylogs.synthetic_log(n_users, n_lines, seed=0)
        dd.from_pandas(log, npartitions=16).to_parquet(src, name_function=_part_name)
        del log
        digests = []
        for engine in ("pandas", "dask"):
            res, secs, peak = measure(querylogs_case, src, engine, timeout=3600)
            digests.append(res["digest"])
            print(
                f"| querylogs | {n_lines:,} lines, {n_users:,} users | {engine} | "
                f"{os.getloadavg()[0]:.1f} | {res['s']:.1f} | {res['cpu']:.1f} | "
                f"{peak:,.0f} | {res['timings']} |",
                flush=True,
            )
        print(f"identical releases: {digests[0] == digests[1]}", flush=True)


def generate_querylog_parts(out: str, n_users: int, n_lines: int, parts: int, seed: int = 0):
    """A synthetic log of ``n_users`` / ``n_lines`` (``querylogs.synthetic_log``'s model and
    defaults) written as ``parts`` Parquet files, one query universe shared by all parts;
    each part holds its own users (ids made unique across parts).  Memory: one part."""
    import numpy as np

    from querylogs import synthetic as syn

    Path(out).mkdir(parents=True, exist_ok=True)
    universe = syn._Universe(np.random.default_rng(seed), 20, 10, 6, 3)
    users = np.array_split(np.arange(n_users), parts)
    lines = np.diff(np.linspace(0, n_lines, parts + 1).round().astype(np.int64))
    done = 0
    start = time.perf_counter()
    for i, (part_users, part_lines) in enumerate(zip(users, lines)):
        rng = np.random.default_rng([seed, i + 1])
        n_u = int(part_users.size)
        n_clicks = syn._clicks_per_event(rng, int(part_lines), n_u, 0.6, 0.25)
        activity = rng.lognormal(0.0, 1.0, n_u)
        owner = np.concatenate(
            [np.arange(n_u), rng.choice(n_u, n_clicks.size - n_u, p=activity / activity.sum())]
        )
        rng.shuffle(owner)
        event_query = syn._event_queries(rng, universe, owner, n_u, 3, 1.1, 3, 0.3)
        text = universe.query_text[event_query]
        syn._add_identifiers(rng, text, 0.002)
        log = syn._rows(
            rng, universe, owner, event_query, text, n_clicks, n_u, 1.1, 0.05, "2006-03-01", 92
        )
        offset = i * (50 * (n_users // parts + 1) + 100)
        log["user"] = (log["user"].astype(np.int64) + offset).astype(str)
        log.to_parquet(f"{out}/{_part_name(i)}", index=False)
        done += len(log)
        print(
            f"part {i + 1}/{parts}: {done:,} lines, {time.perf_counter() - start:.0f} s",
            flush=True,
        )


def querylogs_dask_case(path: str, out: str, block_size: int | None) -> dict:
    """``querylogs.anonymize`` on Dask from a Parquet folder, the release written with
    Dask (``write_log_dask``) to the Parquet folder ``out``; CPU of this process."""
    import dask.dataframe as dd

    import querylogs
    from querylogs import _anonymize

    cluster, client = _client()
    start, cpu = time.perf_counter(), time.process_time()

    def told(name, step):  # prints when each step starts (a run stopped early says where)
        def run(*args, **kwargs):
            print(
                f"{name} starts: {time.perf_counter() - start:.0f} s wall, "
                f"{time.process_time() - cpu:.0f} s CPU",
                flush=True,
            )
            return step(*args, **kwargs)

        return run

    for name in ("_parse_dask", "_cluster_queries", "_group_users", "_publish_multisets"):
        setattr(_anonymize, name, told(name, getattr(_anonymize, name)))
    log = dd.read_parquet(path)
    r = querylogs.anonymize(
        log, 5, seed=0, key=KEY, measures=False, block_size=block_size, engine="dask"
    )
    steps = {k: round(v, 1) for k, v in r.timings.items()}
    print(f"anonymized (verified): {steps}; writing", flush=True)
    rows = querylogs.write_log_dask(r.data, out)
    result = {
        "s": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "rows": rows,
        "users": r.info["users_in"],
        "timings": steps,
    }
    client.close()
    cluster.close()
    return result


def run_querylogs_big(path: str, block_size: int | None) -> None:
    """The Dask engine alone on a generated Parquet folder (see ``generate``)."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        res, secs, peak = measure(
            querylogs_dask_case, path, f"{tmp}/out.parquet", block_size, timeout=3 * 3600
        )
        print(
            f"| querylogs | {path} | dask | {res['users']:,} users | "
            f"{os.getloadavg()[0]:.1f} | {res['s']:.1f} | {res['cpu']:.1f} | {peak:,.0f} | "
            f"{res['rows']:,} rows | {res['timings']} |",
            flush=True,
        )


def blocking_case(n_users: int, block_sizes: list[int | None]) -> list[dict]:
    """Kept / added / suppressed events of the greedy grouping with and without blocking,
    on the user x query counts of a synthetic log (40 lines per user)."""
    import numpy as np
    import scipy.sparse as sp

    import querylogs

    log = querylogs.synthetic_log(n_users, 40 * n_users, seed=0)
    codes, _ = querylogs.normalize_queries(log["query"])
    users = np.unique(log["user"].to_numpy(dtype=str), return_inverse=True)[1]
    events = np.unique(np.c_[users, codes, log["time"].to_numpy().view("i8")], axis=0)
    counts = sp.csr_matrix(
        (np.ones(len(events)), (events[:, 0], events[:, 1])), shape=(n_users, codes.max() + 1)
    )
    counts.sum_duplicates()
    total = counts.sum()
    rows = []
    for block_size in block_sizes:
        cpu, wall = time.process_time(), time.perf_counter()
        labels = querylogs.greedy_groups(counts, 5, block_size=block_size, seed=0)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        cost = querylogs.grouping_cost(counts, labels)
        rows.append(
            {"block_size": block_size, "cpu": cpu, "wall": wall, "kept": cost["kept"] / total}
            | {name: cost[name] for name in ("added", "suppressed")}
        )
    return rows


def run_blocking(n_users: int, block_sizes: list[int | None]) -> None:
    rows, secs, peak = measure(blocking_case, n_users, block_sizes, timeout=3600)
    for row in rows:
        print(
            f"| {n_users:,} | {row['block_size'] or 'none'} | {os.getloadavg()[0]:.1f} | "
            f"{row['wall']:.1f} | {row['cpu']:.1f} | {row['kept']:.2%} | {row['added']:,} | "
            f"{row['suppressed']:,} |",
            flush=True,
        )


ADULT_QIS = {
    "age": "numeric",
    "sex": "set",
    "race": "set",
    "marital-status": "set",
    "education": "set",
}


def tabular_case(path: str, engine: str, max_rows: int, memory_limit: str | None = None) -> dict:
    import dask.dataframe as dd
    import pandas as pd

    from structanon.models import KAnonymity
    from tabular._mondrian import mondrian
    from tabular._mondrian_dask import mondrian_dask
    from tabular.metrics import gcp

    cluster = client = None
    start, cpu = time.perf_counter(), time.process_time()
    if engine == "dask":
        cluster, client = _client(memory_limit)
        r = mondrian_dask(
            dd.read_parquet(path), ADULT_QIS, None, [KAnonymity(10)], max_rows=max_rows
        )
        result = {"gcp": r.utility["gcp"], "leaves": r.info["top_level_leaves"]}
        result["timings"] = {k: round(v, 1) for k, v in r.timings.items()}
        print(f"dask timings: {result['timings']}", flush=True)
        client.close()
        cluster.close()
    else:
        table = pd.read_parquet(path)
        out, _ = mondrian(table, ADULT_QIS, None, [KAnonymity(10)])
        result = {"gcp": gcp(out, ADULT_QIS, len(table), table), "leaves": 1}
    result.update(s=time.perf_counter() - start, cpu=time.process_time() - cpu)
    return result


def make_tabular(rows: int, out: str) -> None:
    """Adult's QIs resampled with replacement to ``rows``, age + integer noise in [-2, 2],
    written as Parquet parts of at most 1M rows (at least 16 parts), part by part."""
    import numpy as np
    import pandas as pd
    from _harness import shared_data

    adult = pd.read_csv(shared_data("adult/adult.csv"), sep=";")[list(ADULT_QIS)]
    n_parts = max(16, -(-rows // 1_000_000))
    bounds = np.linspace(0, rows, n_parts + 1).astype(np.int64)
    Path(out).mkdir(parents=True, exist_ok=True)
    for i in range(n_parts):
        size = int(bounds[i + 1] - bounds[i])
        rng = np.random.default_rng([0, i])
        part = adult.iloc[rng.integers(0, len(adult), size)].reset_index(drop=True)
        part["age"] = part["age"] + rng.integers(-2, 3, size)  # scaled with noise
        part.to_parquet(f"{out}/{_part_name(i)}", index=False)


def run_tabular(
    rows: int, max_rows: int, data: str | None, engines: list[str], memory_limit: str | None
) -> None:
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        path = data or f"{tmp}/adult"
        if not Path(path).exists():
            make_tabular(rows, path)
        for engine in engines:
            res, secs, peak = measure(
                tabular_case, path, engine, max_rows, memory_limit, timeout=3600
            )
            print(
                f"| tabular Mondrian k=10 | {rows:,} rows | {engine} | {res['leaves']} | "
                f"{os.getloadavg()[0]:.1f} | {res['s']:.1f} | {res['cpu']:.1f} | "
                f"{peak:,.0f} | {res['gcp']:.6g} |",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "case",
        choices=[
            "location",
            "location-parts",
            "querylogs",
            "tabular",
            "querylogs-generate",
            "querylogs-big",
            "querylogs-blocking",
        ],
    )
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument(
        "--parts", type=int, help="location-parts: the first N parts (10); querylogs: parts (40)"
    )
    ap.add_argument("--path", default=None)
    ap.add_argument("--block-sizes", default="none,1000,2000,5000")
    ap.add_argument("--input", help="location-parts: folder of Parquet parts")
    ap.add_argument("--batch-fixes", type=int, default=4_000_000)
    ap.add_argument("--out", default="/tmp/dask_location_out")
    ap.add_argument("--generate", type=int, default=0, help="write N fixes as parts first")
    ap.add_argument("--fixes", type=int, default=10_000_000)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--max-rows", type=int, default=100_000)
    ap.add_argument("--data", help="tabular: Parquet folder (made there once when absent)")
    ap.add_argument("--make-only", action="store_true", help="tabular: only write --data")
    ap.add_argument("--engines", default="pandas,dask", help="engines to run")
    ap.add_argument(
        "--memory-limit", help="the Dask worker's memory limit (location-parts: 4GB; e.g. 6GB)"
    )
    args = ap.parse_args()
    if args.case == "location-parts":
        if args.generate:
            write_location_parts(args.input, args.generate, args.users)
        run_location_parts(
            args.input,
            args.parts or 10,
            args.engines.split(","),
            args.out,
            args.memory_limit or "4GB",
            args.batch_fixes,
        )
    elif args.case == "location":
        run_location(args.fixes)
    elif args.case == "querylogs":
        run_querylogs(args.lines)
    elif args.case == "querylogs-generate":
        generate_querylog_parts(args.path, args.users, args.lines, args.parts or 40)
    elif args.case == "querylogs-big":
        run_querylogs_big(args.path, None)
    elif args.case == "querylogs-blocking":
        sizes = [None if b == "none" else int(b) for b in args.block_sizes.split(",")]
        run_blocking(args.users, sizes)
    else:
        if args.make_only:
            make_tabular(args.rows, args.data)
        else:
            run_tabular(
                args.rows, args.max_rows, args.data, args.engines.split(","), args.memory_limit
            )


if __name__ == "__main__":
    main()
