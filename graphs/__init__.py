"""graphs: k-degree anonymization of social-network exports.

>>> import networkx as nx, graphs
>>> release = graphs.k_degree_anonymize(nx.karate_club_graph(), k=3, seed=0, measures=False)
>>> release.verify().passed, release.models
(True, [k-degree-anonymity(k=3)])
"""

from ._kdegree import k_degree_anonymize
from ._sequence import anonymize_degree_sequence, sequence_cost
from ._verify import DegreeKAnonymity, degree_partition, degree_verifier
from .io import read_graph, write_graph
from .metrics import graph_utility
from .risk import assess_risk, candidate_sets, structural_risk

#: what ``structanon graphs anonymize`` runs: every package's ``anonymize(data, k, ...)``
anonymize = k_degree_anonymize

__all__ = [
    "DegreeKAnonymity",
    "anonymize",
    "anonymize_degree_sequence",
    "assess_risk",
    "candidate_sets",
    "degree_partition",
    "degree_verifier",
    "graph_utility",
    "k_degree_anonymize",
    "read_graph",
    "sequence_cost",
    "structural_risk",
    "write_graph",
]
