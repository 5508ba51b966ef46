"""The degree k-anonymity model and the verifier that re-checks a published graph alone.

A graph is k-degree anonymous when every degree value it holds is shared by at least ``k``
nodes (Liu & Terzi 2008), so an attacker who knows a target's number of connections is left
with at least ``k`` candidates.  The model also asks for what the guarantee is stated on: a
simple undirected graph (no self-loops, no parallel or directed edges) with every input node
kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np

from structanon import CheckResult, Partition
from structanon._validation import check_int
from structanon.models import PrivacyModel

__all__ = ["DegreeKAnonymity", "degree_partition", "degree_verifier"]


def degree_partition(graph: nx.Graph) -> Partition:
    """Partition of the nodes of ``graph`` (in node order) by degree.

    Examples
    --------
    >>> sorted(degree_partition(nx.star_graph(3)).sizes.tolist())
    [1, 3]
    """
    return Partition.from_keys(np.array([d for _, d in graph.degree()], dtype=np.int64))


class DegreeKAnonymity(PrivacyModel):
    """k-degree anonymity: every degree of a simple undirected graph is shared by ``k`` nodes.

    Parameters
    ----------
    k : int
        Least number of nodes sharing each degree value.
    n_nodes : int, optional
        Number of nodes of the input; when given, :meth:`checks` also asks that the published
        graph keeps every one of them.

    Notes
    -----
    Over the partition of nodes by degree this is k-anonymity of the degree classes, so
    :meth:`group_values` is the class size.  It is not monotone in any generalization sense
    (adding edges to a k-degree anonymous graph can break it), and leaving nodes out is not
    part of the model, so both flags are false.

    Examples
    --------
    >>> model = DegreeKAnonymity(2)
    >>> model.describe()
    'k-degree-anonymity(k=2)'
    >>> model.check(nx.cycle_graph(4)).passed, model.check(nx.path_graph(4)).passed
    (True, True)
    >>> model.check(nx.star_graph(3)).passed
    False
    >>> [c.model for c in DegreeKAnonymity(2, n_nodes=4).checks(nx.cycle_graph(4))]
    ['k-degree-anonymity(k=2)', 'simple undirected graph', 'every input node kept']

    References
    ----------
    K. Liu and E. Terzi, "Towards identity anonymization on graphs", SIGMOD 2008.
    """

    name = "k-degree-anonymity"
    monotone = False
    monotone_with_suppression = False

    def __init__(self, k: int, n_nodes: int | None = None) -> None:
        self.k = check_int(k, "k", min_value=1)
        self.n_nodes = None if n_nodes is None else check_int(n_nodes, "n_nodes", min_value=0)

    @property
    def threshold(self) -> float:
        return float(self.k)

    def group_values(self, counts: Any, reference: Any = None, domain: Any = None) -> np.ndarray:
        """Size of each degree class."""
        counts = np.asarray(counts)
        return (counts if counts.ndim == 1 else counts.sum(axis=1)).astype(float)

    def check(self, partition: Any, sensitive: Any = None, reference: Any = None) -> CheckResult:
        """Check a graph (its degrees are recounted) or a partition of nodes by degree."""
        if isinstance(partition, nx.Graph):
            partition = degree_partition(partition)
        return super().check(partition, sensitive, reference)

    def checks(self, graph: nx.Graph) -> list[CheckResult]:
        """Every check of the model on a published graph: degrees, simplicity, node count."""
        found = [self.check(graph)]
        loops = nx.number_of_selfloops(graph)
        simple = not graph.is_directed() and not graph.is_multigraph() and loops == 0
        found.append(
            CheckResult(
                "simple undirected graph",
                simple,
                float(loops),
                0.0,
                1,
                details={"directed": graph.is_directed(), "multigraph": graph.is_multigraph()},
            )
        )
        if self.n_nodes is not None:
            n = graph.number_of_nodes()
            found.append(
                CheckResult(
                    "every input node kept", n == self.n_nodes, float(n), float(self.n_nodes), 1
                )
            )
        return found

    def describe(self) -> str:
        return f"{self.name}(k={self.k})"

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name, "k": self.k}


def degree_verifier(k: int, n_nodes: int | None = None) -> Callable[[nx.Graph], list[CheckResult]]:
    """A verifier that recounts degrees in the published graph and checks the model.

    Parameters
    ----------
    k : int
    n_nodes : int, optional
        Number of input nodes; when given, a graph that lost or gained nodes fails.

    Examples
    --------
    >>> degree_verifier(2)(nx.cycle_graph(4))[0].passed
    True
    >>> degree_verifier(2, n_nodes=5)(nx.cycle_graph(4))[-1].passed
    False
    """
    return DegreeKAnonymity(k, n_nodes).checks
