"""Benchmark of the graphs package: k-degree anonymization of SNAP ego-Facebook and of
generated power-law graphs (100k / 300k / 1M edges).

    python bench/graphs.py            # everything (about 10 minutes)
    python bench/graphs.py --quick    # Facebook k=5,20 and the 100k graph
    python bench/graphs.py --edit     # the edit construction against
                                                     # supergraph (about 15 minutes)
    ... --edit --facebook-only                       # its ego-Facebook rows only
    ... --edit --liu-terzi <git dir or checkout>     # and the Liu-Terzi peer beside them
    ... --edit --assortativity-parts [--liu-terzi <git dir>]  # where assortativity comes from
    ... --no-record                                  # print only, bench/RESULTS.md untouched
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

# This script is named like the package it measures: keep its folder off the import path
# so `import graphs` finds the package, and load the harness from its file.
BENCH = Path(__file__).resolve().parent
# a fixed release key: the construction's choices among equals come from the key, so the
# figures repeat from run to run (without one every run draws fresh choices)
KEY = b"structanon-bench-graphs-key-0001"
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
_spec = importlib.util.spec_from_file_location("_harness", BENCH / "_harness.py")
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)
machine_line, markdown_table, measure = (
    _harness.machine_line,
    _harness.markdown_table,
    _harness.measure,
)
record_section, shared_data = _harness.record_section, _harness.shared_data
_spec = importlib.util.spec_from_file_location("liu_terzi", BENCH / "peers" / "liu_terzi.py")
liu_terzi = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(liu_terzi)

import graphs  # noqa: E402  (imported once here, so the forked cases do not time imports)


def chung_lu(n_edges: int, gamma: float = 2.5, avg_degree: float = 10.0, seed: int = 0):
    """Seeded Chung-Lu power-law graph: endpoints drawn with weight ``i ** (-1/(gamma-1))``.

    Self-loops and repeated pairs are dropped, then exactly ``n_edges`` edges are kept.
    """
    rng = np.random.default_rng(seed)
    n = int(2 * n_edges / avg_degree)
    weights = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (gamma - 1.0))
    cdf = np.cumsum(weights / weights.sum())
    draws = int(n_edges * 1.25)
    u = np.minimum(np.searchsorted(cdf, rng.random(draws)), n - 1)
    v = np.minimum(np.searchsorted(cdf, rng.random(draws)), n - 1)
    edges = np.sort(np.stack([u, v], axis=1), axis=1)
    edges = np.unique(edges[edges[:, 0] != edges[:, 1]], axis=0)
    if len(edges) < n_edges:
        raise RuntimeError("too few distinct edges drawn")
    return n, edges[rng.permutation(len(edges))[:n_edges]]


def _to_graph(n, edges):
    import gc

    import networkx as nx

    gc.disable()  # building a million small objects: see graphs/_kdegree.py::_no_gc
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges.tolist())
    gc.enable()
    return graph


EDIT_KEYS = (
    "symmetric_difference",
    "two_sided_lower_bound_edges",
    "ratio_to_two_sided_bound",
    "structural_lower_bound_edges",
    "hub_lower_bound_edges",
    "mover_lower_bound_edges",
)


def _max_degrees(graph, release) -> list[int]:
    """The input's and the release's largest degree (a release's measures leave the
    input's out: it is one hub's own)."""
    return [max(d for _, d in g.degree()) for g in (graph, release.data)]


def _summary(release, graph=None) -> dict:
    info, util, risk = release.info, dict(release.utility), release.risk
    if graph is not None:
        util["max_degree"] = _max_degrees(graph, release)
    out = {
        k: info[k]
        for k in (
            "nodes",
            "edges_before",
            "edges_added",
            "edges_removed",
            "lower_bound_edges",
            "ratio_to_lower_bound",
            "sequence_bound_edges",
            "ratio_to_sequence_bound",
            "rounds",
            "probes",
        )
    }
    out.update({k: info.get(k) for k in EDIT_KEYS})
    out["timings"] = dict(release.timings)
    out["utility"] = util
    out["risk_unique_before"] = risk["before"]["degree"]["share_unique"]
    out["risk_unique_after"] = risk["after"]["degree"]["share_unique"]
    out["neigh_unique_before"] = risk["before"]["neighbourhood"]["share_unique"]
    out["neigh_unique_after"] = risk["after"]["neighbourhood"]["share_unique"]
    out["verified"] = "yes" if release.checks.passed else "NO"
    return out


def run_facebook(path: Path, k: int, method: str, construct: str, utility, max_drop=None) -> dict:
    start = time.perf_counter()
    graph = graphs.read_graph(path)
    read = time.perf_counter() - start
    cpu = time.process_time()
    release = graphs.k_degree_anonymize(
        graph,
        k,
        method=method,
        construct=construct,
        seed=0,
        key=KEY,
        utility=utility,
        max_degree_drop=max_drop,
    )
    cpu = time.process_time() - cpu
    out = _summary(release, graph)
    out["read"], out["cpu"] = read, cpu
    out["cpu_total"] = time.process_time()  # the forked child's CPU from its start
    return out


def run_generated(n_edges: int, k: int, construct: str = "supergraph") -> dict:
    start = time.perf_counter()
    n, edges = chung_lu(n_edges, seed=0)
    generate = time.perf_counter() - start
    start = time.perf_counter()
    graph = _to_graph(n, edges)
    build = time.perf_counter() - start
    del edges
    start = time.perf_counter()
    release = graphs.k_degree_anonymize(
        graph, k, seed=0, utility="fast", construct=construct, key=KEY
    )
    out = _summary(release)
    out["end_to_end"] = time.perf_counter() - start
    out["generate"], out["build_nx"] = generate, build
    out["max_degree"] = _max_degrees(graph, release)[0]
    return out


def _f(x, digits=3):
    return None if x is None else round(float(x), digits)


EDIT_CASES = (("supergraph", None), ("edit", None), ("edit", 0.5))


def fixed_grouping_bound(path: Path, k: int) -> float:
    """Least edits of any graph whose degree classes are the groups of the edit
    construction's first target (the two-sided DP's runs, each at one value), LP-relaxed:

        minimize 2 sum_e x_e + 1/2 sum_v (T_g(v) - d_v)
        subject to sum_{e ∋ v} x_e >= d_v - T_g(v), x_e in [0, 1], 0 <= T_g <= n - 1

    (``x``: deletions of original edges; every node's additions then number its deletions
    plus its change, half an edit each, wherever they go).  It bounds that family only, not
    every k-degree-anonymous graph: the construction leaves the family (a repair moves a
    node that needed nothing to the next class) and can beat it."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from graphs._edit import _EditGraph, _hub_neighbours
    from graphs._twosided import two_sided_sequence

    raw = np.loadtxt(path, dtype=np.int64).reshape(-1, 2)
    n = int(raw.max()) + 1
    g = _EditGraph(n, raw)
    deg = g.degree.copy()
    priority = _hub_neighbours(g, deg, k, 0, None)
    target, _ = two_sided_sequence(deg, k, even=True, seed=0, optimum=False, priority=priority)
    _, grp = np.unique(target, return_inverse=True)
    size, m, ar = int(grp.max()) + 1, len(g.edges), np.arange(n)
    cost = np.concatenate([np.full(m, 2.0), 0.5 * np.bincount(grp)])
    rows = np.concatenate([g.edges[:, 0], g.edges[:, 1], ar])
    cols = np.concatenate([np.arange(m), np.arange(m), m + grp])
    matrix = sp.csr_matrix((-np.ones(2 * m + n), (rows, cols)), shape=(n, m + size))
    box = np.zeros((m + size, 2))
    box[:m, 1], box[m:, 1] = 1.0, n - 1
    res = linprog(cost, A_ub=matrix, b_ub=-deg.astype(np.float64), bounds=box, method="highs")
    return float(res.fun - 0.5 * deg.sum())


def _grouping_row(fb, k):
    """:func:`fixed_grouping_bound` in a child (its LP stays out of the parent's memory)."""
    return _f(measure(fixed_grouping_bound, fb, k, timeout=300)[0], 0)


def _change(pair, spec: str = "") -> str:
    """An (original, anonymized) measure as ``original -> anonymized``, each in ``spec``."""
    return f"{pair[0]:{spec}} -> {pair[1]:{spec}}"


def _utility_cells(u: dict) -> list:
    """The utility columns of an edit-section row: original -> anonymized pairs."""
    return [
        _change(u["max_degree"]),
        _change(u["avg_clustering"], ".3f"),
        _change(u["assortativity"], ".3f"),
        _change(u["avg_shortest_path"], ".2f"),
        _f(u["community_nmi"]),
        _f(u["degree_emd"]),
    ]


def _edit_row(construct, max_drop, k, fb) -> list:
    """One construction on Facebook: timed without measures, then measured apart."""
    timed, secs, peak = measure(run_facebook, fb, k, "dp", construct, False, max_drop, timeout=300)
    res = measure(run_facebook, fb, k, "dp", construct, "full", max_drop, timeout=600)[0]
    u = res["utility"]
    edits = timed["edges_added"] + timed["edges_removed"]
    two = timed["two_sided_lower_bound_edges"] or res["two_sided_lower_bound_edges"]
    name = construct + ("" if max_drop is None else f" (max drop {max_drop})")
    return [
        name,
        k,
        _f(secs, 2),
        _f(peak, 0),
        timed["edges_added"],
        timed["edges_removed"],
        edits,
        two,
        timed["structural_lower_bound_edges"],
        timed["hub_lower_bound_edges"],
        timed["mover_lower_bound_edges"],
        _f(edits / two, 3) if two else None,
        _f(timed["ratio_to_lower_bound"], 3) if construct == "edit" else None,
        _grouping_row(fb, k) if construct == "edit" and max_drop is None else None,
        _f(timed["cpu"], 2),
        _f(timed["cpu_total"], 2),
        *_utility_cells(u),
        timed["verified"],
    ]


def peer_release(path: Path, k: int, peer: dict) -> dict:
    """The Liu-Terzi peer's output (:func:`liu_terzi.run_liu_terzi`) checked with plain
    networkx, its edits counted against the original, and its utility measured by the code
    and settings of our rows (``graphs.metrics.utility_from_edges``, ``level="full"``,
    seed 0, on the node indices ``k_degree_anonymize`` uses, the kept original edges in
    input order then the additions, as our releases list them)."""
    from collections import Counter

    import networkx as nx

    from graphs._kdegree import _prepare_input, _readable
    from graphs.metrics import utility_from_edges

    original = nx.read_edgelist(path, nodetype=int)
    out: nx.Graph = nx.Graph()
    out.add_nodes_from(peer["nodes"].tolist())
    out.add_edges_from(peer["edges"].tolist())
    problems = []
    same_nodes = set(out) == set(original)
    if not same_nodes:
        problems.append("node set differs")
    if peer["directed"] or peer["multigraph"]:
        problems.append("not a simple undirected graph")
    if nx.number_of_selfloops(out) or out.number_of_edges() != len(peer["edges"]):
        problems.append("self-loops or repeated edges")
    counts = Counter(d for _, d in out.degree())
    rare = sorted(d for d, c in counts.items() if c < k)
    if rare:
        problems.append(f"degrees held by fewer than k nodes: {rare[:5]}")
    added = nx.difference(out, original).number_of_edges() if same_nodes else None
    removed = nx.difference(original, out).number_of_edges() if same_nodes else None
    data = _prepare_input(graphs.read_graph(path), k, False, ())
    n = data.n
    position = np.full(max(max(data.nodes), int(peer["nodes"].max())) + 1, -1, dtype=np.int64)
    position[np.asarray(data.nodes)] = np.arange(n)
    after = np.sort(position[peer["edges"]], axis=1)
    kept = np.isin(data.edges[:, 0] * n + data.edges[:, 1], after[:, 0] * n + after[:, 1])
    new = after[~np.isin(after[:, 0] * n + after[:, 1], data.edges[:, 0] * n + data.edges[:, 1])]
    final = np.concatenate([data.edges[kept], new[np.lexsort((new[:, 1], new[:, 0]))]])
    utility = _readable(utility_from_edges(n, data.edges, final, seed=0, level="full"))
    return {
        "added": added,
        "removed": removed,
        "smallest_class": min(counts.values()),
        "verified": "yes" if not problems else "NO: " + "; ".join(problems),
        "utility": utility,
    }


def _peer_rows(module: Path, noise: int, k: int, fb: Path, timeout: float) -> tuple[list, list]:
    """The peer on Facebook (a row of the edit table, and one of its own details): run in a
    child with ``timeout``, then checked and measured in another child."""
    name = f"Liu-Terzi peer (noise {noise})"
    try:
        res, secs, peak = measure(liu_terzi.run_liu_terzi, module, fb, k, noise, 0, timeout=timeout)
    except TimeoutError:
        print(f"Liu-Terzi k={k}: no answer within {timeout} s", flush=True)
        return [name, k, f"timeout ({timeout:.0f} s)"] + [None] * 19 + ["no output"], [
            k,
            None,
            f"> {timeout:.0f}",
            None,
            None,
            None,
            None,
            "no output",
        ]
    fig = measure(peer_release, fb, k, res, timeout=600)[0]
    u = fig["utility"]
    edits = None if fig["added"] is None else fig["added"] + fig["removed"]
    row = [name, k, _f(secs, 2), _f(peak, 0), fig["added"], fig["removed"], edits]
    row += [None] * 7 + [_f(res["cpu"], 2), _f(res["cpu_total"], 2)]
    row += [
        *_utility_cells(u),
        fig["verified"],
    ]
    detail = [k, res["attempts"], _f(secs, 2), _f(res["read"], 2), _f(res["cpu"], 2)]
    detail += [len(res["edges"]), fig["smallest_class"], fig["verified"]]
    return row, detail


def _degree_correlation(deg: np.ndarray, edges: np.ndarray) -> float | None:
    """Pearson correlation of ``deg`` at either end of ``edges`` (assortativity's formula
    with the degrees given)."""
    if len(edges) == 0:
        return None
    x = np.concatenate([deg[edges[:, 0]], deg[edges[:, 1]]]).astype(np.float64)
    y = np.concatenate([deg[edges[:, 1]], deg[edges[:, 0]]]).astype(np.float64)
    return float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 else None


def assortativity_parts(path: Path, k: int, module: Path | None, noise: int) -> list[list]:
    """Where the assortativity of our edit release and of the Liu-Terzi peer's comes from:
    the correlation of the anonymized degrees over the original edges, over the kept ones,
    and over the added ones (both graphs on the node indices of our releases)."""
    from graphs._kdegree import _prepare_input

    data = _prepare_input(graphs.read_graph(path), k, False, ())
    n, before = data.n, data.edges
    release = graphs.k_degree_anonymize(
        graphs.read_graph(path), k, construct="edit", relabel=False, seed=0, measures=False, key=KEY
    )
    index = np.full(max(data.nodes) + 1, -1, dtype=np.int64)
    index[np.asarray(data.nodes)] = np.arange(n)
    graphs_after = [("edit", np.array(list(release.data.edges()), dtype=np.int64))]
    if module is not None:
        peer = liu_terzi.run_liu_terzi(module, path, k, noise, 0)
        graphs_after.append((f"Liu-Terzi peer (noise {noise})", peer["edges"]))
    code0 = before[:, 0] * n + before[:, 1]
    rows = []
    for name, labels in graphs_after:
        after = np.sort(index[labels.reshape(-1, 2)], axis=1)
        code1 = after[:, 0] * n + after[:, 1]
        deg = np.bincount(after.ravel(), minlength=n)
        kept = before[np.isin(code0, code1)]
        added = after[~np.isin(code1, code0)]
        removed = before[~np.isin(code0, code1)]
        rows.append(
            [
                name,
                k,
                int(deg.max()),
                _f(_degree_correlation(np.bincount(before.ravel(), minlength=n), before)),
                _f(_degree_correlation(deg, after)),
                _f(_degree_correlation(deg, before)),
                _f(_degree_correlation(deg, kept)),
                len(added),
                _f(_degree_correlation(deg, added)),
                len(removed),
                _f(float(np.abs(deg - np.bincount(before.ravel(), minlength=n)).sum()) / 2, 1),
            ]
        )
    return rows


def where_edits_go(source, k: int) -> dict:
    """``graphs._edit.edit_anonymize(n, edges, k, seed=0)`` on ``source`` (a path to an
    edge list, or a Chung-Lu edge count): its edits against the least edits of any graph
    with the same final degrees (``graphs._edit_lp.sequence_lower_bound``) and against half
    the final degree change; CPU seconds of the call (``time.process_time``)."""
    from graphs._edit import edit_anonymize
    from graphs._edit_lp import sequence_lower_bound

    if isinstance(source, int):
        n, edges = chung_lu(source, seed=0)
    else:
        edges = np.loadtxt(source, dtype=np.int64).reshape(-1, 2)
        n = int(edges.max()) + 1
    edges = np.unique(np.sort(edges[edges[:, 0] != edges[:, 1]], axis=1), axis=0)
    cpu = time.process_time()
    added, removed, info = edit_anonymize(n, edges, k, seed=0)
    cpu = time.process_time() - cpu
    deg = np.bincount(edges.ravel(), minlength=n)
    final = deg.copy()
    np.add.at(final, added.ravel(), 1)
    np.subtract.at(final, removed.ravel(), 1)
    return {
        "edits": info["symmetric_difference"],
        "cpu": cpu,
        "half_change": int(np.abs(final - deg).sum()) / 2,
        "sequence_bound": sequence_lower_bound(n, edges, final),
        "two_sided": info["two_sided_lower_bound_edges"],
        "structural": info["structural_lower_bound_edges"],
        "hub": info["hub_lower_bound_edges"],
        "mover": info["mover_lower_bound_edges"],
        "repairs": info["repair_edges"],
    }


def where_edits_go_section(cases) -> list[str]:
    """Table of :func:`where_edits_go` over ``(label, source, k)`` cases, each in a child."""
    rows = []
    for label, source, k in cases:
        r = measure(where_edits_go, source, k, timeout=600)[0]
        best = max(r["two_sided"], r["structural"], r["hub"], r["mover"] or 0)
        rows.append(
            [
                label,
                k,
                r["edits"],
                r["sequence_bound"],
                _f(r["edits"] / r["sequence_bound"], 3) if r["sequence_bound"] else None,
                r["half_change"],
                r["two_sided"],
                r["structural"],
                r["hub"],
                r["mover"],
                _f(r["edits"] / best, 3) if best else None,
                r["repairs"],
                _f(r["cpu"], 2),
            ]
        )
        print(rows[-1], flush=True)
    header = ["graph", "k", "edits", "own-sequence LB", "edits/own LB", "half the change"]
    header += ["2-sided LB", "struct LB", "hub LB", "movers LB", "edits/best LB"]
    header += ["repair edges", "CPU s"]
    return [
        "Where the edits go (`bench/graphs.py::where_edits_go`, the construction alone, "
        "seed 0): `own-sequence LB` = least edits of any graph with the release's degree "
        "sequence (`graphs._edit_lp.sequence_lower_bound`: half the change plus the loser "
        "units no b-matching among losers can pair); `half the change` = half the release's "
        "total degree change. The realization is measured by the first ratio, the choice of "
        "the degree sequence by the gap between the bounds.",
        "",
        markdown_table(header, rows),
        "",
    ]


def edit_section(ks, sizes, peer=None) -> list[str]:
    """The edit construction (additions and deletions) beside the supergraph and, when
    ``peer = (kdegree.py path, version, noise, timeout)`` is given, the Liu-Terzi peer."""
    lines = ['### Least symmetric difference (`construct="edit"`) beside `supergraph`', ""]
    fb = shared_data("facebook/facebook_combined.txt")
    peer_details: list[list] = []
    if fb is None:
        lines.append("Facebook data absent: skipped.")
    else:
        rows = []
        for k in ks:
            for construct, max_drop in EDIT_CASES:
                rows.append(_edit_row(construct, max_drop, k, fb))
                print(rows[-1], flush=True)
            if peer is not None:
                row, detail = _peer_rows(peer[0], peer[2], k, fb, peer[3])
                rows.append(row)
                peer_details.append(detail)
                print(rows[-1], detail, flush=True)
        # the supergraph's and the peer's bounds are the edit rows' (same graph and k)
        by_k = {row[1]: row for row in rows if row[0] == "edit"}
        for row in rows:
            row[7:11] = by_k[row[1]][7:11]
            row[11] = _f(row[6] / row[7], 3) if row[7] and row[6] is not None else None
            if row[0].startswith("Liu-Terzi") and row[6] is not None:
                row[12] = _f(row[6] / max(b or 0 for b in row[7:11]), 3)
        lines += [
            "SNAP ego-Facebook. `wall s` / `peak MiB`: read the edge list + "
            "`k_degree_anonymize(G, k, construct=..., seed=0, utility=False)` (anonymize, "
            "publish, verify, risk) in a fresh process. `2-sided LB` = ceil(L1*/2), L1* the "
            "least change of any k-anonymous degree sequence (degrees up or down); "
            "`struct LB` = the structural bound of `graphs._twosided` (hubs cannot pair "
            "their changes); `hub LB` = `graphs._twosided.hub_lower_bound` (hubs' deletions "
            "reach their neighbours, whose degrees must still be k-anonymous); `movers LB` = "
            "`graphs._twosided.mover_lower_bound` (the nodes that change most pay in full; "
            "k <= 10, k <= 50 above 100,000 edges); all four hold "
            "for every k-degree-anonymous graph on these nodes. "
            "`/best LB` = edits over the largest. `DP-grouping LP`: the LP "
            "relaxation of the least edits of a graph whose degree classes are the DP's groups "
            "(`fixed_grouping_bound`; a bound for that family only, which the construction "
            "leaves). `anonymize CPU s`: CPU time of the `k_degree_anonymize` call in the "
            "child; `child CPU s`: the child's whole CPU time (the `wall s` work). Utility from a second run with "
            '`utility="full"` (pairs are original -> anonymized).',
            "",
            markdown_table(
                [
                    "construction",
                    "k",
                    "wall s",
                    "peak MiB",
                    "added",
                    "removed",
                    "edits",
                    "2-sided LB",
                    "struct LB",
                    "hub LB",
                    "movers LB",
                    "edits/2-sided LB",
                    "edits/best LB",
                    "DP-grouping LP",
                    "anonymize CPU s",
                    "child CPU s",
                    "max degree",
                    "avg clustering",
                    "assortativity",
                    "avg path",
                    "Louvain NMI",
                    "degree EMD",
                    "verified",
                ],
                rows,
            ),
            "",
        ]
    if peer_details:
        lines += [
            f"Liu-Terzi peer: `kdegree.py` of blextar/graph-k-degree-anonymity ({peer[1]}), "
            "called as its `test.py` does: `nx.read_edgelist(path, nodetype=int)`, then "
            f"`graph_anonymiser(G, k=k, noise={peer[2]}, with_deletions=True)` (group degree "
            "= median; `random.seed(0)` for its PRIORITY picks), in a fresh process with a "
            f"{peer[3]:.0f} s limit per k. Its `wall s` / `peak MiB` cover the read and that "
            "call (ours also publish, verify and measure risk); `anonymize CPU s` is the CPU "
            "time of the call. Its output is checked with plain networkx (same node set, "
            "simple undirected, every degree held by >= k nodes), its `added` / `removed` "
            "are the edges of the output not in the input and back (`nx.difference`), and "
            'its utility is our `utility_from_edges` at `level="full"`, seed 0, on the '
            "node indices and edge order of our releases (`bench/graphs.py::peer_release`).",
            "",
            markdown_table(
                [
                    "k",
                    "probing attempts",
                    "wall s",
                    "read s",
                    "anonymize CPU s",
                    "edges out",
                    "smallest degree class",
                    "verified",
                ],
                peer_details,
            ),
            "",
        ]
    rows = []
    for n_edges in sizes:
        for k in (10, 50):
            res, secs, peak = measure(run_generated, n_edges, k, "edit", timeout=900)
            t = res["timings"]
            rows.append(
                [
                    n_edges,
                    res["nodes"],
                    res["max_degree"],
                    k,
                    _f(res["end_to_end"], 2),
                    _f(t["anonymize"], 2),
                    _f(peak, 0),
                    res["edges_added"],
                    res["edges_removed"],
                    res["two_sided_lower_bound_edges"],
                    res["structural_lower_bound_edges"],
                    res["hub_lower_bound_edges"],
                    res["mover_lower_bound_edges"],
                    _f(res["ratio_to_two_sided_bound"]),
                    _f(res["ratio_to_lower_bound"]),
                    res["verified"],
                ]
            )
            print(rows[-1], flush=True)
    if not sizes:
        return lines
    lines += [
        'Generated Chung-Lu graphs as above, `construct="edit"`, `utility="fast"`; '
        "`end-to-end s` as above, peak MiB of the whole child (generation and the networkx "
        "input graph included).",
        "",
        markdown_table(
            [
                "edges",
                "nodes",
                "max deg",
                "k",
                "end-to-end s",
                "anonymize s",
                "peak MiB",
                "added",
                "removed",
                "2-sided LB",
                "struct LB",
                "hub LB",
                "movers LB",
                "edits/2-sided LB",
                "edits/best LB",
                "verified",
            ],
            rows,
        ),
        "",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--edit", action="store_true", help="only the edit construction beside supergraph"
    )
    parser.add_argument(
        "--no-record", action="store_true", help="print the tables; leave bench/RESULTS.md alone"
    )
    parser.add_argument(
        "--liu-terzi",
        type=Path,
        metavar="PATH",
        help="with --edit: also run the Liu-Terzi peer from this git directory or checkout "
        "of blextar/graph-k-degree-anonymity (kdegree.py is copied to a cache folder)",
    )
    parser.add_argument(
        "--liu-terzi-noise",
        type=int,
        default=1,
        help="the peer's probing noise (default 1, as its test.py)",
    )
    parser.add_argument(
        "--liu-terzi-timeout",
        type=float,
        default=300.0,
        help="seconds the peer may take per k (default 300)",
    )
    parser.add_argument(
        "--facebook-only",
        action="store_true",
        help="with --edit: only the ego-Facebook rows (no Chung-Lu graphs, no edit breakdown)",
    )
    parser.add_argument(
        "--assortativity-parts",
        action="store_true",
        help="with --edit: only the assortativity breakdown of the edit release (and of the "
        "Liu-Terzi peer's with --liu-terzi) on ego-Facebook",
    )
    args = parser.parse_args()
    if args.edit and args.assortativity_parts:
        module = None if args.liu_terzi is None else liu_terzi.kdegree_module(args.liu_terzi)[0]
        fb = shared_data("facebook/facebook_combined.txt")
        if fb is None:
            raise SystemExit("ego-Facebook is absent")
        rows = []
        for k in [5, 20] if args.quick else [5, 10, 20, 50, 100]:
            part, secs, _ = measure(
                assortativity_parts, fb, k, module, args.liu_terzi_noise, timeout=900
            )
            rows += part
            print(part, f"{secs:.1f} s", flush=True)
        header = ["graph", "k", "max degree", "r original", "r release"]
        header += ["r(d', original edges)", "r(d', kept edges)", "added", "r(d', added edges)"]
        header += ["removed", "half the degree change"]
        print(markdown_table(header, rows))
        return
    if args.edit:
        ks = [5, 20] if args.quick else [5, 10, 20, 50, 100]
        peer = None
        if args.liu_terzi is not None:
            module, version = liu_terzi.kdegree_module(args.liu_terzi)
            peer = (module, version, args.liu_terzi_noise, args.liu_terzi_timeout)
        lines = [
            "## graphs: least symmetric difference (additions and deletions)",
            "",
            f"Machine: {machine_line()}; shared with other jobs while measuring, so wall "
            "times are pessimistic. Each case runs in a forked child.",
            "",
        ]
        sizes = [] if args.facebook_only else [100_000] if args.quick else [1_000_000]
        lines += edit_section(ks, sizes, peer)
        if not args.facebook_only:
            cases = [("ego-Facebook", shared_data("facebook/facebook_combined.txt"), k) for k in ks]
            cases = [case for case in cases if case[1] is not None]
            sizes = [50_000] if args.quick else [200_000, 1_000_000]
            cases += [(f"Chung-Lu {m:,}", m, k) for m in sizes for k in (10, 50)]
            lines += where_edits_go_section(cases)
        flags = " --quick" * args.quick + " --facebook-only" * args.facebook_only
        if peer is not None:
            flags += f" --liu-terzi <git dir> --liu-terzi-noise {peer[2]}"
            flags += f" --liu-terzi-timeout {peer[3]:g}"
        lines.append(f"Command: `python bench/graphs.py --edit{flags}`")
        if not args.no_record:
            record_section("graphs-edit", "\n".join(lines))
        print("\n".join(lines))
        return
    lines = [
        "## graphs: k-degree anonymization (Liu & Terzi 2008)",
        "",
        f"Machine: {machine_line()}; shared with other jobs while measuring (load "
        "average 3-6 on 2 cores), so wall times are pessimistic. Each case runs in a "
        "forked child (`bench/_harness.measure`); peak RSS is that child's.",
        "",
    ]
    ks = [5, 20] if args.quick else [5, 10, 20, 50, 100]
    fb = shared_data("facebook/facebook_combined.txt")
    if fb is None:
        lines.append("Facebook data absent: skipped.")
    else:
        rows, util_rows = [], []
        for method, construct in (
            ("dp", "supergraph"),
            ("dp", "probing"),
            ("dp", "swap"),
            ("greedy", "supergraph"),
        ):
            for k in ks:
                if (method, construct) != ("dp", "supergraph") and k not in (5, 20, 100):
                    continue
                res, secs, peak = measure(
                    run_facebook, fb, k, method, construct, False, timeout=300
                )
                t = res["timings"]
                rows.append(
                    [
                        f"{method}/{construct}",
                        k,
                        _f(secs, 2),
                        _f(t["total"], 2),
                        _f(peak, 0),
                        res["edges_added"],
                        res["edges_removed"],
                        res["lower_bound_edges"],
                        _f(res["ratio_to_lower_bound"]),
                        res["sequence_bound_edges"],
                        _f(res["ratio_to_sequence_bound"]),
                        res["verified"],
                    ]
                )
                print(rows[-1], flush=True)
        if not args.quick:  # one degree class (2k > n): the common-degree construction
            res, secs, peak = measure(
                run_facebook, fb, 4000, "dp", "supergraph", False, timeout=900
            )
            rows.append(
                [
                    "dp/supergraph (one class)",
                    4000,
                    _f(secs, 2),
                    _f(res["timings"]["total"], 2),
                    _f(peak, 0),
                    res["edges_added"],
                    res["edges_removed"],
                    res["lower_bound_edges"],
                    _f(res["ratio_to_lower_bound"]),
                    res["sequence_bound_edges"],
                    _f(res["ratio_to_sequence_bound"]),
                    res["verified"],
                ]
            )
            print(rows[-1], flush=True)
        for k in ks:
            res, secs, peak = measure(run_facebook, fb, k, "dp", "supergraph", "full", timeout=300)
            u = res["utility"]
            util_rows.append(
                [
                    k,
                    _f(res["timings"]["utility"], 2),
                    _f(u["degree_emd"]),
                    _f(u["degree_ks"]),
                    _change(u["avg_clustering"], ".3f"),
                    _change(u["transitivity"], ".3f"),
                    _change(u["avg_shortest_path"], ".2f"),
                    _change(u["effective_diameter"], ".0f"),
                    _change(u["assortativity"], ".3f"),
                    _f(u["betweenness_spearman"]),
                    _f(u["closeness_spearman"]),
                    _f(u["pagerank_spearman"]),
                    _f(u["eigenvector_spearman"]),
                    _f(u["community_nmi"]),
                    _f(u["community_ari"]),
                    _f(u["edge_jaccard"]),
                    f"{res['risk_unique_before']:.4f} -> {res['risk_unique_after']:.4f}",
                    f"{res['neigh_unique_before']:.3f} -> {res['neigh_unique_after']:.3f}",
                ]
            )
            print(util_rows[-1], flush=True)
        lines += [
            "### SNAP ego-Facebook (4,039 nodes, 88,234 edges)",
            "",
            "`wall s` = read the edge list + `k_degree_anonymize(G, k, seed=0, utility=False)` "
            "(anonymize, publish the relabelled networkx graph, verify by recounting degrees, "
            "risk before/after) in a fresh process, imports excluded; `anon s` = the "
            "function's own total. `LB` = DP optimum of the degree increase / 2 (the bound "
            "the issue names; the DP optimum totals are 2,032 / 6,140 / 15,131 / 42,785 / "
            "89,953 as in PEERS.md). `seq bound` = fewest additions that can realize the "
            "chosen anonymized sequence on this graph (hubs must take partners outside the "
            "nodes needing degree; see `graphs/_kdegree.py::_sequence_bound`).",
            "",
            markdown_table(
                [
                    "method/construct",
                    "k",
                    "wall s",
                    "anon s",
                    "peak MiB",
                    "added",
                    "removed",
                    "LB",
                    "edits/LB",
                    "seq bound",
                    "added/seq bound",
                    "verified",
                ],
                rows,
            ),
            "",
            'Utility (`utility="full"`, 64 seeded BFS sources, exact clustering) and risk '
            "for dp/supergraph; `util s` is the time of the utility measures alone.",
            "",
            markdown_table(
                [
                    "k",
                    "util s",
                    "deg EMD",
                    "deg KS",
                    "avg clustering",
                    "transitivity",
                    "avg path",
                    "eff. diam",
                    "assortativity",
                    "betw rho",
                    "close rho",
                    "PR rho",
                    "eig rho",
                    "NMI",
                    "ARI",
                    "edge Jaccard",
                    "degree-unique share",
                    "neigh-unique share",
                ],
                util_rows,
            ),
            "",
        ]
    sizes = [100_000] if args.quick else [100_000, 300_000, 1_000_000]
    rows = []
    for n_edges in sizes:
        for k in (10, 50):
            res, secs, peak = measure(run_generated, n_edges, k, timeout=600)
            t = res["timings"]
            rows.append(
                [
                    n_edges,
                    res["nodes"],
                    res["max_degree"],
                    k,
                    _f(res["generate"], 2),
                    _f(res["build_nx"], 2),
                    _f(res["end_to_end"], 2),
                    _f(t["anonymize"], 2),
                    _f(t["publish"], 2),
                    _f(t.get("utility"), 2),
                    _f(peak, 0),
                    res["edges_added"],
                    res["lower_bound_edges"],
                    _f(res["ratio_to_lower_bound"]),
                    res["sequence_bound_edges"],
                    _f(res["ratio_to_sequence_bound"]),
                    res["verified"],
                ]
            )
            print(rows[-1], flush=True)
    lines += [
        "### Generated power-law graphs (seeded Chung-Lu, exponent 2.5, mean degree 10)",
        "",
        "`gen s` (numpy generation) and `nx s` (building the networkx graph) are timed apart; "
        '`end-to-end s` = `k_degree_anonymize(G, k, seed=0, utility="fast")` on the networkx '
        "graph: edge extraction, DP, construction, publishing the relabelled graph, "
        "verification, risk and fast utility (sampled paths/clustering, PageRank, "
        "eigenvector; no betweenness/Louvain). Peak MiB covers the whole child process "
        "(generation and the networkx input graph included).",
        "",
        markdown_table(
            [
                "edges",
                "nodes",
                "max deg",
                "k",
                "gen s",
                "nx s",
                "end-to-end s",
                "anonymize s",
                "publish s",
                "utility s",
                "peak MiB",
                "added",
                "LB",
                "added/LB",
                "seq bound",
                "added/seq bound",
                "verified",
            ],
            rows,
        ),
        "",
        "Command: `python bench/graphs.py" + (" --quick`" if args.quick else "`"),
    ]
    if not args.no_record:
        record_section("graphs", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
