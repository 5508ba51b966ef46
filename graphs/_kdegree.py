"""k-degree anonymization of a social graph (Liu & Terzi, SIGMOD 2008).

The anonymizer runs in phases, each timed (and logged on the command line): validate the
parameters, prepare the input (a simple undirected graph as an edge array), anonymize (the
degree sequence and its construction, :mod:`graphs._construct`), publish (secret labels,
sorted publication order), then :func:`structanon._finish.finish_release` verifies the
published graph alone and runs the measures.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from structanon import Release
from structanon._engine import reject_dask
from structanon._finish import Timings, add_warning, finish_release, k_warning
from structanon._validation import check_choice, check_float, check_int, check_names
from structanon.errors import InfeasibleError, InputError
from structanon.io import release_key

from ._construct import CONSTRUCTS, Construction
from ._construct import construct as build_construction
from ._edit import edit_anonymize
from ._sequence import _METHODS
from ._verify import DegreeKAnonymity, degree_partition, degree_verifier
from .io import INPUT_REPORT, _no_gc
from .metrics import LEVELS, utility_from_edges
from .risk import risk_from_edges

__all__ = ["k_degree_anonymize", "anonymize_with_mapping", "degree_verifier", "degree_partition"]


def _prepare(graph: Any, as_undirected: bool) -> tuple[nx.Graph, dict[str, int]]:
    reject_dask(graph, "graph anonymization (a networkx graph)")
    if not isinstance(graph, nx.Graph):
        raise InputError(f"parameter 'G' must be a networkx graph, got {type(graph).__name__}")
    report = dict(graph.graph.get(INPUT_REPORT, {}))
    report.setdefault("self_loops", 0)
    report.setdefault("duplicate_edges", 0)
    if graph.is_directed() and not as_undirected:
        raise InputError(
            "the graph is directed; k-degree anonymity is defined for undirected "
            "graphs (pass as_undirected=True to drop edge directions)"
        )
    if graph.is_directed() or graph.is_multigraph():
        rows = graph.number_of_edges()
        simple: nx.Graph = nx.Graph()
        simple.add_nodes_from(graph.nodes(data=True))
        simple.add_edges_from(graph.edges())
        loops_rows = sum(1 for u, v in graph.edges() if u == v)
        report["self_loops"] += loops_rows
        report["duplicate_edges"] += (
            rows - loops_rows - (simple.number_of_edges() - nx.number_of_selfloops(simple))
        )
        graph = simple
    else:
        loops = nx.number_of_selfloops(graph)
        report["self_loops"] += loops
    if graph.number_of_nodes() == 0:
        raise InputError("the graph is empty: it has no nodes to anonymize")
    return graph, report


def _edge_array(graph: nx.Graph, index: dict[Any, int]) -> np.ndarray:
    """Edges as index pairs ``u < v``, read straight from the adjacency (C-level loops)."""
    adj = graph.adj
    deg = np.fromiter(map(len, adj.values()), dtype=np.int64, count=len(adj))
    src = np.repeat(np.fromiter(map(index.__getitem__, adj), dtype=np.int64, count=len(adj)), deg)
    dst = np.fromiter(
        map(index.__getitem__, itertools.chain.from_iterable(adj.values())),
        dtype=np.int64,
        count=int(deg.sum()),
    )
    keep = src < dst
    return np.stack([src[keep], dst[keep]], axis=1)


def _final_edges(n: int, edges: np.ndarray, added: np.ndarray, removed: np.ndarray) -> np.ndarray:
    if len(removed):
        code = edges[:, 0] * n + edges[:, 1]
        edges = edges[~np.isin(code, removed[:, 0] * n + removed[:, 1])]
    return np.concatenate([edges, added]) if len(added) else edges


def _sequence_bound(n: int, edges: np.ndarray, residual: np.ndarray) -> int:
    """Fewest additions that raise exactly the chosen nodes to their anonymized degrees.

    An edge between two nodes needing degree serves two units of ``residual``; an edge to a
    node needing nothing serves one, so ``edges >= (sum r + X) / 2`` with ``X`` a lower
    bound on such outside edges, the larger of: (a) a node needing ``r`` that is not yet
    joined to only ``p`` other needing nodes sends ``r - p`` edges outside; (b) the ``t``
    neediest nodes can absorb at most ``t (t - 1) + sum_{j > t} min(r_j, t)`` units among
    the needing nodes (the Erdos-Gallai count), the rest goes outside.
    """
    need = residual > 0
    total = int(residual.sum())
    if total == 0:
        return 0
    both = np.concatenate([edges, edges[:, ::-1]])
    inside = np.bincount(both[need[both[:, 1]], 0], minlength=n)
    partners = int(need.sum()) - 1 - inside
    outside_a = int(np.maximum(residual - np.maximum(partners, 0), 0)[need].sum())
    rs = np.sort(residual[need])[::-1].astype(np.int64)
    asc = rs[::-1]
    pre_asc = np.concatenate(([0], np.cumsum(asc)))
    pre = np.concatenate(([0], np.cumsum(rs)))
    ts = np.arange(1, rs.size + 1, dtype=np.int64)
    below = np.searchsorted(asc, ts, side="left")
    at_least = rs.size - below
    min_all = pre_asc[below] + ts * at_least
    head = np.minimum(at_least, ts)
    min_first = ts * head + (pre[ts] - pre[head])
    outside_b = int(max(0, (pre[ts] - ts * (ts - 1) - (min_all - min_first)).max()))
    return math.ceil((total + max(outside_a, outside_b)) / 2)


UTILITY_CHOICES = ("auto", "fast", "full", "none")
AUTO_FULL_EDGES = 100_000  # utility="auto" is "full" up to this many input edges


def _sorted_nodes(nodes: list[Any]) -> list[Any]:
    """The node ids in a published-value order: natural order, else by their text."""
    try:
        return sorted(nodes)
    except TypeError:
        return sorted(nodes, key=lambda v: (type(v).__name__, str(v)))


@dataclass
class _Input:
    """The prepared input: a simple undirected graph, its nodes and its edges ``u < v``."""

    graph: nx.Graph
    report: dict[str, int]
    nodes: list[Any]
    index: dict[Any, int]
    edges: np.ndarray

    @property
    def n(self) -> int:
        return len(self.nodes)


#: every construction: the additions-only ones, swap, and "edit" (least symmetric difference)
CONSTRUCTIONS = (*CONSTRUCTS, "edit")


def _check_max_drop(construct: str, max_degree_drop: Any) -> float | None:
    if max_degree_drop is None:
        return None
    if construct != "edit":
        raise InputError(
            "max_degree_drop applies to construct='edit' only (the other "
            "constructions never lower a degree, or keep it in a swap)"
        )
    return check_float(max_degree_drop, "max_degree_drop", min_value=0, max_value=1)


def _edit_construction(
    n: int, edges: np.ndarray, k: int, seed, max_drop: float | None
) -> tuple[Construction, dict[str, Any]]:
    """The least-symmetric-difference construction (:mod:`graphs._edit`) as a Construction
    whose ``optimum`` is the two-sided L1 optimum."""
    added, removed, info = edit_anonymize(n, edges, k, seed=seed, max_drop=max_drop)
    deg0 = np.bincount(edges.ravel(), minlength=n)
    target = (
        deg0 + np.bincount(added.ravel(), minlength=n) - np.bincount(removed.ravel(), minlength=n)
    )
    log = (
        ["edit: finished by additions after the rounds oscillated"]
        if info["finished_by_additions"]
        else []
    )
    built = Construction(
        added=added,
        removed=removed,
        target=target,
        first_target=target,
        optimum=info["two_sided_l1_optimum"],
        rounds=info["rounds"],
        repairs=info["repair_edges"],
        log=log,
    )
    return built, info


def _edit_report(info: dict[str, Any], edit: dict[str, Any]) -> None:
    """For construct="edit": the bounds that hold for additions and deletions."""
    info.update(
        {
            "l1_degree_change_optimum": edit["two_sided_l1_optimum"],
            "two_sided_lower_bound_edges": edit["two_sided_lower_bound_edges"],
            "ratio_to_two_sided_bound": edit["ratio_to_two_sided_bound"],
            "structural_lower_bound_edges": edit["structural_lower_bound_edges"],
            "hub_lower_bound_edges": edit["hub_lower_bound_edges"],
            "mover_lower_bound_edges": edit["mover_lower_bound_edges"],
            "lower_bound_edges": edit["edit_lower_bound_edges"],
            "ratio_to_lower_bound": edit["ratio_to_edit_lower_bound"],
            "sequence_bound_edges": None,
            "ratio_to_sequence_bound": None,
            "finished_by_additions": edit["finished_by_additions"],
        }
    )
    del info["l1_degree_increase_optimum"]


def _check_parameters(
    k: Any, method: str, construct: str, utility: Any, seed: Any, keep_attributes: Any
) -> tuple[int, Any, int | None, tuple[str, ...]]:
    """Validate the parameters: ``k``, ``utility`` level, ``seed`` and attribute names."""
    k = check_int(k, "k", min_value=1)
    check_choice(method, "method", _METHODS)
    check_choice(construct, "construct", CONSTRUCTIONS)
    if not isinstance(utility, bool):
        check_choice(utility, "utility", (*UTILITY_CHOICES, True, False))
    if utility == "none":
        utility = False
    if seed is not None:
        seed = check_int(seed, "seed", min_value=0)
    if isinstance(keep_attributes, str):
        keep_attributes = (keep_attributes,)
    return k, utility, seed, tuple(check_names(keep_attributes, "keep_attributes"))


def _measure_switches(measures: bool, utility: Any, measure_risk: bool | None) -> tuple[Any, bool]:
    """The utility level and the risk switch, from ``measures`` and the deprecated
    ``measure_risk`` (which still works, with a :class:`DeprecationWarning`)."""
    check_choice(measures, "measures", (True, False))
    risk = True
    if measure_risk is not None:
        warnings.warn(
            "measure_risk= is deprecated; use measures=False to skip the utility and "
            "risk measures (utility= still sets the utility level)",
            DeprecationWarning,
            stacklevel=4,
        )
        risk = bool(measure_risk)
    if not measures:
        return False, False
    return utility, risk


def _prepare_input(G: Any, k: int, as_undirected: bool, keep_attributes: Sequence[str]) -> _Input:
    """The input as a simple undirected graph and an edge array; feasibility of ``k``."""
    graph, report = _prepare(G, as_undirected)
    nodes = list(graph.nodes())
    if k > len(nodes):
        raise InfeasibleError(f"k={k} exceeds the number of nodes ({len(nodes)})")
    missing_attrs = [
        a for a in keep_attributes if not any(a in data for _, data in graph.nodes(data=True))
    ]
    if missing_attrs:
        raise InputError(f"no node has the attribute(s) {missing_attrs} asked to be kept")
    index = {v: i for i, v in enumerate(nodes)}
    with _no_gc():
        edges = _edge_array(graph, index)
    return _Input(graph, report, nodes, index, edges)


def _labels(
    data: _Input, relabel: bool, rng_context: tuple[Any, ...], secret: Any
) -> tuple[np.ndarray, list[Any]]:
    """Each node's rank in the publication order and its published label.

    Published labels are a permutation drawn from the release key, never from the public
    seed (the seed and parameters are printed, so a seeded permutation could be replayed to
    map every published node back to its input id).  Without relabelling the ids are
    published as they are, ranked in their own sorted order.
    """
    n = data.n
    if relabel:
        rank = secret.rng("node-labels", *rng_context, n).permutation(n)
        return rank, rank.tolist()
    order_in = _sorted_nodes(data.nodes)
    rank = np.empty(n, dtype=np.int64)
    rank[np.fromiter(map(data.index.__getitem__, order_in), dtype=np.int64, count=n)] = np.arange(n)
    return rank, data.nodes


def _publish(
    data: _Input,
    final: np.ndarray,
    rank: np.ndarray,
    labels: list[Any],
    relabel: bool,
    keep_attributes: Sequence[str],
) -> nx.Graph:
    """The published graph: nodes in published order, edges sorted by published endpoints,
    so the insertion order (which every writer follows) depends on published values only."""
    graph, nodes = data.graph, data.nodes
    order = np.argsort(rank)
    pub = np.sort(rank[final], axis=1)
    pub = pub[np.lexsort((pub[:, 1], pub[:, 0]))]
    published: nx.Graph = nx.Graph()
    with _no_gc():
        if keep_attributes:
            published.add_nodes_from(
                (
                    labels[i],
                    {
                        a: graph.nodes[nodes[i]][a]
                        for a in keep_attributes
                        if a in graph.nodes[nodes[i]]
                    },
                )
                for i in order.tolist()
            )
        else:
            published.add_nodes_from(labels[i] for i in order.tolist())
        if relabel:
            published.add_edges_from(pub.tolist())
        else:
            by_rank = [nodes[i] for i in order.tolist()]
            published.add_edges_from((by_rank[u], by_rank[v]) for u, v in pub.tolist())
    return published


def _fallback_warning(built: Construction, k: int, n: int) -> str | None:
    if built.fallback is None:
        return None
    why = (
        "k > n/2 leaves room for one degree class only"
        if 2 * k > n
        else "the anonymized degree sequence could not be realized within the round limit"
    )
    return (
        f"{why}: every node was raised to one {built.fallback} (k-degree anonymous, "
        f"{len(built.added):,} edges added)"
    )


def transformation_text(info: dict[str, Any], k: int) -> str:
    """The edits of a release in one plain sentence (``release.info["transformation_text"]``).

    Examples
    --------
    >>> transformation_text({"edges_added": 1876, "edges_removed": 0, "edges_before": 88234,
    ...                      "nodes": 4039, "degree_classes": 12, "relabelled": True,
    ...                      "fallback": None}, 5)  # doctest: +NORMALIZE_WHITESPACE
    '1,876 edges added, 0 removed (2.13% of 88,234 input edges); every node kept; degrees of
    4,039 nodes grouped into 12 classes of at least 5 nodes; node ids replaced by secret
    random labels.'
    """
    added, removed, before = info["edges_added"], info["edges_removed"], info["edges_before"]
    share = f" ({(added + removed) / before:.2%} of {before:,} input edges)" if before else ""
    text = (
        f"{added:,} edges added, {removed:,} removed{share}; every node kept; degrees of "
        f"{info['nodes']:,} nodes grouped into {info['degree_classes']:,} "
        f"class{'es' if info['degree_classes'] != 1 else ''} of at least {k} nodes"
    )
    if info.get("fallback"):
        text += f" (one {info['fallback']}, the fallback construction)"
    text += (
        "; node ids replaced by secret random labels."
        if info["relabelled"]
        else "; node ids kept as in the input (not anonymous)."
    )
    return text


def _release_info(
    data: _Input,
    built: Construction,
    final: np.ndarray,
    k: int,
    relabel: bool,
    keep_attributes: Sequence[str],
    edit: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the release reports about its edits, bounds and input clean-up."""
    n, edges = data.n, data.edges
    deg0 = np.bincount(edges.ravel(), minlength=n)
    n_added, n_removed = len(built.added), len(built.removed)
    lower = math.ceil(built.optimum / 2)
    edits = n_added + n_removed
    seb = _sequence_bound(n, edges, built.first_target - deg0) if edit is None else None
    info = {
        "nodes": n,
        "edges_before": int(len(edges)),
        "edges_after": int(len(final)),
        "edges_added": n_added,
        "edges_removed": n_removed,
        "l1_degree_increase_optimum": built.optimum,
        "lower_bound_edges": lower,
        "ratio_to_lower_bound": float(edits / lower) if lower else (1.0 if edits == 0 else None),
        "sequence_bound_edges": seb,
        "l1_degree_change": int(np.abs(built.target - deg0).sum()),
        "degree_classes": int(np.unique(built.target).size),
        "supergraph": n_removed == 0,
        "already_anonymous": built.optimum == 0,
        "rounds": built.rounds,
        "probes": built.probes,
        "repair_edges": built.repairs,
        "swaps": built.swaps,
        "input_self_loops_removed": int(data.report["self_loops"]),
        "input_duplicate_edges_removed": int(data.report["duplicate_edges"]),
        "relabelled": bool(relabel),
        "node_attributes_kept": list(keep_attributes),
        "log": built.log,
        "fallback": built.fallback,
        "warnings": [],
        "ratio_to_sequence_bound": float(n_added / seb) if seb else None,
        "symmetric_difference": edits,
    }
    if edit is not None:
        _edit_report(info, edit)
    return {"transformation_text": transformation_text(info, k), **info}


def _readable(value: Any) -> Any:
    """Utility values as a person reads them: floats to 4 significant digits."""
    if isinstance(value, dict):
        return {key: _readable(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_readable(v) for v in value]
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if not math.isfinite(value) else float(f"{value:.4g}")
    return value


def _measure(
    data: _Input, final: np.ndarray, utility: Any, risk: bool, seed: int | None, timings: Timings
):
    """The release's measures: risk before and after, then utility at its level."""
    n, edges = data.n, data.edges

    def measure(release: Release) -> None:
        if risk:
            with timings("risk"):
                release.risk = {
                    "before": risk_from_edges(n, edges),
                    "after": risk_from_edges(n, final),
                }
        if utility:
            # "auto" bounds the cost by both graphs: betweenness and Louvain on the
            # published graph too (a one-class release can hold millions of edges).
            small = len(edges) <= AUTO_FULL_EDGES and len(final) <= 2 * AUTO_FULL_EDGES
            level = utility if utility in LEVELS else ("full" if small else "fast")
            with timings("utility"):
                measured = utility_from_edges(
                    n, edges, np.sort(final, axis=1), seed=0 if seed is None else seed, level=level
                )
            # the input's largest degree is one node's own (a hub's): reports publish the
            # release's measures, so it is left out (graph_utility keeps it for the owner)
            measured.pop("max_degree", None)
            release.utility = _readable(measured)
            release.utility["level"] = level

    return measure


def anonymize_with_mapping(
    G: nx.Graph,
    k: int,
    method: str = "dp",
    construct: str = "supergraph",
    relabel: bool = True,
    seed: int | None = 0,
    *,
    keep_attributes: Sequence[str] = (),
    as_undirected: bool = False,
    utility: str | bool = "auto",
    measure_risk: bool | None = None,
    key: Any = None,
    measures: bool = True,
    max_degree_drop: float | None = None,
) -> tuple[Release, dict[Any, Any]]:
    """:func:`k_degree_anonymize`, also returning the mapping original id -> published id
    (the same dict as ``release.source_index``)."""
    k, utility, seed, keep_attributes = _check_parameters(
        k, method, construct, utility, seed, keep_attributes
    )
    max_degree_drop = _check_max_drop(construct, max_degree_drop)
    utility, risk = _measure_switches(measures, utility, measure_risk)
    secret = release_key(key)
    timings = Timings()
    with timings("prepare"):
        data = _prepare_input(G, k, as_undirected, keep_attributes)
        # streams bound to the input, the attributes it publishes included: two releases
        # under one key of graphs differing in one node's attribute only would otherwise
        # share labels and edges, join node by node and name that node
        kept = [[repr(data.graph.nodes[v].get(a)) for a in keep_attributes] for v in data.nodes]
        secret = secret.bound(data.nodes, data.edges, *([kept] if keep_attributes else []))
    # the construction's choices among equals (which of several nodes of one degree is
    # raised, the order candidate edges are tried in) decide what is published: drawn from
    # the secret stream, so nobody can replay them; the public seed is left out, so one key
    # and one input give one graph whatever the seed (two supergraphs drawn with different
    # choices would intersect to the input's edges)
    choices = int(secret.rng("graph-choices", k, method, construct).integers(2**63 - 1))
    edit = None
    with timings("anonymize"), _no_gc():
        if construct == "edit":
            built, edit = _edit_construction(data.n, data.edges, k, choices, max_degree_drop)
        else:
            built = build_construction(data.n, data.edges, k, method, construct, choices)
    with timings("publish"):
        rank, labels = _labels(data, relabel, (seed, k, method, construct), secret)
        final = _final_edges(data.n, data.edges, built.added, built.removed)
        published = _publish(data, final, rank, labels, relabel, keep_attributes)
        mapping = dict(zip(data.nodes, labels))
    release = Release(
        data=published,
        datatype="graphs",
        verifier=degree_verifier(k, data.n),
        models=[DegreeKAnonymity(k, data.n)],
        partition=degree_partition(published),
        parameters={
            "k": k,
            "method": method,
            "construct": construct,
            "relabel": bool(relabel),
            "seed": seed,
            "keep_attributes": list(keep_attributes),
            **({"max_degree_drop": max_degree_drop} if construct == "edit" else {}),
        },
        suppressed=0,
        n_individuals=data.n,
        info=_release_info(data, built, final, k, relabel, keep_attributes, edit),
        source_index=mapping,
    )
    for message in (
        k_warning(k),
        _fallback_warning(built, k, data.n),
        _cleaned_warning(data),
        _edge_data_warning(G),
    ):
        if message is not None:
            add_warning(release, message)
    finish_release(
        release,
        _measure(data, final, utility, risk, seed, timings),
        measures=bool(utility) or risk,
        timings=timings,
    )
    return release, mapping


def _edge_data_warning(graph: nx.Graph) -> str | None:
    """The edge attributes (and edge-list columns past the two ends, which the reader
    recorded) the release drops: it publishes bare edges, said once in its warnings."""
    names = [str(c) for c in graph.graph.get(INPUT_REPORT, {}).get("ignored_edge_columns", ())]
    found: dict[str, None] = {}
    for _u, _v, attrs in graph.edges(data=True):
        if attrs:
            found.update(dict.fromkeys(map(str, attrs)))
    names += sorted(found)
    if not names:
        return None
    return (
        f"edge attribute(s) dropped: {', '.join(names)}; the release publishes bare edges "
        "(k-degree anonymization changes edges, and keep_attributes / --keep-attr keeps "
        "node attributes only)"
    )


def _cleaned_warning(data: _Input) -> str | None:
    """What reading the input as a simple graph dropped, said in the release's warnings."""
    loops, twins = int(data.report["self_loops"]), int(data.report["duplicate_edges"])
    if not loops and not twins:
        return None
    return (
        f"the input was read as a simple graph: {loops:,} self-loop(s) and {twins:,} "
        "duplicate edge(s) removed (k-degree anonymity counts each neighbour once)"
    )


def k_degree_anonymize(
    G: nx.Graph,
    k: int,
    method: str = "dp",
    construct: str = "supergraph",
    relabel: bool = True,
    seed: int | None = 0,
    *,
    keep_attributes: Sequence[str] = (),
    as_undirected: bool = False,
    utility: str | bool = "auto",
    measure_risk: bool | None = None,
    key: Any = None,
    measures: bool = True,
    max_degree_drop: float | None = None,
) -> Release:
    """Edit a graph as little as possible so every degree is shared by at least ``k`` nodes.

    Parameters
    ----------
    G : networkx.Graph
        Undirected graph.  Self-loops and (for multigraphs) parallel edges are removed and
        counted in ``release.info``.
    k : int
        Least number of nodes sharing each degree, ``1 <= k <= number of nodes``.
    method : {"dp", "greedy"}
        Degree-sequence anonymization: the exact dynamic program (minimum L1 increase,
        groups of k..2k-1 sorted degrees, O(nk)) or Liu & Terzi's greedy.
    construct : {"supergraph", "swap", "probing", "edit"}
        Graph construction.  ``"supergraph"``: edge additions only (every original edge
        kept); what cannot be placed among nodes needing degree goes to nodes whose degree
        class can spare one, and the sequence is re-anonymized until it holds.
        ``"probing"``: additions only; on failure restart with a perturbed degree sequence
        (Liu & Terzi's probing).  ``"swap"``: additions, then edge swaps (one removal, two
        additions) to reach the anonymized sequence exactly.  ``"edit"``: additions and
        deletions, the fewest edited edges (the problem as Liu & Terzi state it): degrees
        move up or down to their group's median, deletions between nodes that must lose
        degree, additions between nodes that must gain (:mod:`graphs._edit`); ``method``
        is not used.
    relabel : bool
        Relabel nodes to a secret random permutation of ``0..n-1`` drawn from ``key``
        (default).  With ``False`` node ids are kept (not anonymous), so a supergraph can be
        checked edge by edge.
    seed : int, default 0
        Public seed of the sampled utility measures, and context of the secret streams; it
        never decides the published labels or order, nor the construction's choices among
        equals (which node of a degree is raised, the order edges are tried in), which are
        drawn from ``key``.
    keep_attributes : sequence of str
        Node attributes to keep; all others (and all edge and graph attributes) are dropped.
    as_undirected : bool
        Accept a directed graph by dropping edge directions.
    utility : {"auto", "fast", "full", "none"} or bool
        Utility measures (:mod:`graphs.metrics`); ``"auto"`` (or ``True``) is ``"full"`` up
        to 100,000 input and 200,000 published edges, else ``"fast"`` (no betweenness /
        Louvain); ``"none"`` or ``False`` skips them.  Floats are rounded to 4 significant
        digits in ``release.utility`` (call :func:`graphs.graph_utility` for full precision).
    measure_risk : bool, optional
        Deprecated (a :class:`DeprecationWarning`): ``False`` skips the risk measures only;
        use ``measures=False``.
    key : bytes, key file path or Pseudonymizer, optional
        Secret key of the publication randomness (the node labels), see
        :func:`structanon.io.release_key`: with a key the same input, parameters and seed
        give the same published graph; without one (and no ``$STRUCTANON_PSEUDONYM_KEY``)
        every call draws fresh labels and choices.
    measures : bool
        The utility and risk measures (default); ``False`` skips both (verification still
        runs).
    max_degree_drop : float in [0, 1], optional
        Only with ``construct="edit"``: the largest share of its degree any node may lose
        (``0.5`` keeps every hub at half its degree or more, ``0`` gives an additions-only
        sequence; default no cap).  Protects hubs at the price of more edits.

    Returns
    -------
    Release
        ``data`` is the anonymized :class:`networkx.Graph`; ``info`` holds edges added /
        removed, ``lower_bound_edges`` (the DP optimum of the degree increase / 2) and
        ``ratio_to_lower_bound``, ``sequence_bound_edges`` (the fewest additions that can
        realize the chosen sequence), the input clean-up counts, ``fallback`` (the
        common-degree construction, when the sequence could not be realized directly) and
        ``warnings`` (e.g. ``k = 1``), and ``transformation_text``, the edits in one
        sentence.  With ``construct="edit"`` the bounds are those of additions and
        deletions: ``lower_bound_edges`` is the largest of ``two_sided_lower_bound_edges``
        (ceil of the two-sided L1 optimum / 2), ``structural_lower_bound_edges``
        (:func:`graphs._twosided.structural_lower_bound`), ``hub_lower_bound_edges``
        (:func:`graphs._twosided.hub_lower_bound`) and ``mover_lower_bound_edges``
        (:func:`graphs._twosided.mover_lower_bound`, ``None`` above k = 10, above k = 50
        on graphs of more than 100,000 edges), with
        ``ratio_to_two_sided_bound`` and ``ratio_to_lower_bound``; ``symmetric_difference``
        = added + removed.  ``release.models`` holds :class:`graphs.DegreeKAnonymity`.
        Nodes are inserted in published-label order and
        edges sorted by published labels, so the graph's order carries nothing about the
        input.  ``release.source_index`` is the private mapping original id -> published
        id (a ``dict``, for a Python caller who asks for it; never written, reported,
        summarized or shown in the repr).  The release was verified from the published graph
        alone (degrees recounted).

    Raises
    ------
    InputError
        Not a graph, empty graph, directed without ``as_undirected``, bad ``k`` / ``method``
        / ``construct`` / ``utility`` / ``seed`` / attribute names (the parameter named).
    InfeasibleError
        ``k`` larger than the number of nodes.

    Examples
    --------
    >>> G = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 4), (1, 3)])
    >>> r = k_degree_anonymize(G, k=2, relabel=False, seed=1, utility=False)
    >>> sorted(d for _, d in r.data.degree())
    [2, 2, 2, 3, 3]
    >>> r.info["edges_added"], r.info["lower_bound_edges"], set(G.edges()) <= set(r.data.edges())
    (1, 1, True)

    Notes
    -----
    The degree sequence ``d`` is anonymized to ``d' >= d`` minimizing ``||d' - d||_1`` with
    every value of ``d'`` taken by at least ``k`` nodes (see
    :func:`graphs.anonymize_degree_sequence`); any additions-only release adds at least
    ``||d' - d||_1 / 2`` edges, the lower bound reported.

    References
    ----------
    K. Liu and E. Terzi, "Towards identity anonymization on graphs", SIGMOD 2008.
    """
    release, _ = anonymize_with_mapping(
        G,
        k,
        method=method,
        construct=construct,
        relabel=relabel,
        seed=seed,
        keep_attributes=keep_attributes,
        as_undirected=as_undirected,
        utility=utility,
        measure_risk=measure_risk,
        key=key,
        measures=measures,
        max_degree_drop=max_degree_drop,
    )
    return release
