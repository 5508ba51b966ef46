"""structanon.querylogs: clustering-based anonymization of web search logs.

Read a log (:func:`read_log`), cluster its queries into search intents from the
query-URL click graph (:func:`cluster_intents`), group users who share many queries (or
have similar intent profiles) into clusters of at least ``k`` (:func:`greedy_groups`,
:func:`refine_groups`, :func:`mdav`) and publish, for every cluster, one query multiset
shared by all its members, with the fewest additions plus suppressions (:func:`anonymize`).
"""

from ._anonymize import GRANULARITIES, GROUPINGS, anonymize, generalize_times
from ._verify import user_signatures, verify_log
from .grouping import greedy_groups, grouping_cost, refine_groups
from .identifiers import contains_identifier, detect_identifiers
from .intents import click_graph, cluster_intents, normalize_queries, query_similarity
from .io import parse_report, read_log, write_log
from .microaggregation import mdav
from .synthetic import synthetic_log

__all__ = [
    "GRANULARITIES",
    "GROUPINGS",
    "anonymize",
    "click_graph",
    "cluster_intents",
    "contains_identifier",
    "detect_identifiers",
    "generalize_times",
    "greedy_groups",
    "grouping_cost",
    "mdav",
    "normalize_queries",
    "parse_report",
    "query_similarity",
    "read_log",
    "refine_groups",
    "synthetic_log",
    "user_signatures",
    "verify_log",
    "write_log",
]
