"""Structural re-identification risk: what an attacker who knows a node's degree (or its
degree and the degrees of its neighbours) can narrow a target down to."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from structanon import Partition
from structanon._validation import check_choice
from structanon.errors import InputError
from structanon.risk import reidentification_risk

__all__ = ["structural_risk", "risk_from_edges", "candidate_sets", "assess_risk"]


def _neighbourhood_keys(n: int, edges: np.ndarray) -> np.ndarray:
    """One key per node for (degree, multiset of neighbour degrees).

    The multiset is hashed as a sum of random 64-bit words, one per degree value (two
    independent hashes), so equal multisets always get equal keys and unequal ones collide
    with probability about 2**-128.
    """
    deg = np.bincount(edges.ravel(), minlength=n).astype(np.int64)
    rng = np.random.default_rng(0x5EED)
    words = rng.integers(0, 2**63 - 1, size=(2, int(deg.max(initial=0)) + 1), dtype=np.int64)
    words = words.astype(np.uint64)
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    keys = np.zeros((n, 3), dtype=np.uint64)
    keys[:, 0] = deg.astype(np.uint64)
    if src.size:
        order = np.argsort(src, kind="stable")
        s, t = src[order], dst[order]
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        for j in (0, 1):
            vals = words[j][deg[t]]
            keys[s[starts], j + 1] = np.add.reduceat(vals, starts)
    return keys


def candidate_sets(n: int, edges: np.ndarray, attacker: str = "degree") -> np.ndarray:
    """Size of each node's candidate set: the nodes an attacker cannot tell it apart from.

    Parameters
    ----------
    n : int
        Number of nodes (``0..n-1``).
    edges : int array (m, 2)
    attacker : {"degree", "neighbourhood"}
        ``"degree"`` knows the target's degree; ``"neighbourhood"`` knows its degree and the
        multiset of its neighbours' degrees.

    Examples
    --------
    >>> candidate_sets(4, np.array([[0, 1], [1, 2], [2, 3]])).tolist()
    [2, 2, 2, 2]
    >>> candidate_sets(4, np.array([[0, 1], [1, 2], [2, 3]]), "neighbourhood").tolist()
    [2, 2, 2, 2]
    """
    check_choice(attacker, "attacker", ("degree", "neighbourhood"))
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if attacker == "degree":
        key = np.bincount(edges.ravel(), minlength=n)
        _, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    else:
        _, inv, counts = np.unique(
            _neighbourhood_keys(n, edges), axis=0, return_inverse=True, return_counts=True
        )
    return counts[inv.reshape(-1)]


def _summary(sizes: np.ndarray, inv_groups: np.ndarray) -> dict[str, Any]:
    base = reidentification_risk(Partition(inv_groups))
    return {
        "share_unique": float((sizes == 1).mean()) if sizes.size else 0.0,
        "share_candidates_lt_5": float((sizes < 5).mean()) if sizes.size else 0.0,
        "share_candidates_lt_10": float((sizes < 10).mean()) if sizes.size else 0.0,
        "min_candidates": int(sizes.min()) if sizes.size else 0,
        "median_candidates": float(np.median(sizes)) if sizes.size else 0.0,
        "prosecutor_max": base["prosecutor_max"],
        "prosecutor_avg": base["prosecutor_avg"],
    }


def risk_from_edges(n: int, edges: np.ndarray) -> dict[str, Any]:
    """Risk of both attackers for a graph on nodes ``0..n-1`` (see :func:`structural_risk`)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    out = {}
    for attacker, keys in (
        ("degree", np.bincount(edges.ravel(), minlength=n)),
        ("neighbourhood", _neighbourhood_keys(n, edges)),
    ):
        if keys.ndim == 1:
            _, inv, counts = np.unique(keys, return_inverse=True, return_counts=True)
        else:
            _, inv, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
        out[attacker] = _summary(counts[inv], inv)
    return out


def _edges_of(graph: nx.Graph) -> tuple[int, np.ndarray]:
    if not isinstance(graph, nx.Graph):
        raise InputError(f"graph must be a networkx graph, got {type(graph).__name__}")
    nodes = list(graph.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    edges = np.array(
        [(index[u], index[v]) for u, v in graph.edges() if u != v], dtype=np.int64
    ).reshape(-1, 2)
    return len(nodes), edges


def structural_risk(graph: nx.Graph) -> dict[str, Any]:
    """Re-identification risk of a published graph for degree-knowing attackers.

    Parameters
    ----------
    graph : networkx.Graph

    Returns
    -------
    dict
        For ``"degree"`` (the attacker knows the target's degree) and ``"neighbourhood"``
        (degree and multiset of neighbour degrees): ``share_unique`` (nodes alone in their
        candidate set), the share with fewer than 5 / 10 candidates, the smallest and
        median candidate set, and prosecutor risk (max and mean of ``1 / |candidates|``).

    Examples
    --------
    >>> structural_risk(nx.star_graph(3))["degree"]["share_unique"]
    0.25

    Notes
    -----
    A node's candidate set is ``{v : key(v) = key(target)}``; prosecutor risk of a node is
    ``1 / |candidates|``.  k-degree anonymity makes every degree candidate set at least k.

    References
    ----------
    M. Hay, G. Miklau, D. Jensen, D. Towsley, P. Weis, "Resisting structural
    re-identification in anonymized social networks", VLDB 2008.
    """
    return risk_from_edges(*_edges_of(graph))


CANDIDATE_BINS = ((1, 1), (2, 4), (5, 9), (10, None))


def assess_risk(graph: nx.Graph) -> dict[str, Any]:
    """The pre-release risk of a graph, as ``structanon graphs assess`` reports it.

    Parameters
    ----------
    graph : networkx.Graph
        The input, as :func:`graphs.read_graph` returns it.

    Returns
    -------
    dict
        ``graph``: nodes, edges and the self-loop / duplicate rows the reader removed;
        ``degree`` and ``neighbourhood``: the measures of :func:`structural_risk`, plus
        ``nodes_unique`` (how many nodes are alone in their candidate set) and
        ``nodes_by_candidates`` (how many nodes have 1, 2-4, 5-9 and 10 or more candidates).

    Examples
    --------
    >>> r = assess_risk(nx.star_graph(3))
    >>> r["degree"]["nodes_unique"], r["degree"]["nodes_by_candidates"]
    (1, {'1': 1, '2-4': 3, '5-9': 0, '10+': 0})
    """
    n, edges = _edges_of(graph)
    found = graph.graph.get("input_report", {})
    out: dict[str, Any] = {
        "graph": {
            "nodes": n,
            "edges": int(len(edges)),
            "self_loops_removed": int(found.get("self_loops", 0)),
            "duplicate_edges_removed": int(found.get("duplicate_edges", 0)),
        }
    }
    measured = risk_from_edges(n, edges)
    for attacker in ("degree", "neighbourhood"):
        sizes = candidate_sets(n, edges, attacker)
        bins = {}
        for low, high in CANDIDATE_BINS:
            name = f"{low}" if low == high else (f"{low}+" if high is None else f"{low}-{high}")
            inside = (sizes >= low) & (sizes <= (high if high is not None else n))
            bins[name] = int(inside.sum())
        out[attacker] = {
            **measured[attacker],
            "nodes_unique": int((sizes == 1).sum()),
            "nodes_by_candidates": bins,
        }
    return out
