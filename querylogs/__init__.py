"""structanon.querylogs: clustering-based anonymization of web search logs.

Read a log (:func:`read_log`), cluster its queries into search intents from the
query-URL click graph (:func:`cluster_intents`), group users who share many queries (or
have similar intent profiles) into clusters of at least ``k`` (:func:`greedy_groups`,
:func:`refine_groups`, :func:`mdav`) and publish, for every cluster, one query multiset
shared by all its members, with the fewest additions plus suppressions (:func:`anonymize`).
The privacy model is :class:`UserKAnonymity`: every published query multiset is held by at
least ``k`` users, and :func:`verify_log` re-checks it from the published log alone.

This module is the package's only public API; the algorithms live in private modules
(``_anonymize``, ``_intents``, ``_grouping``, ``_identifiers``, ``_multisets``,
``_verify``) and are re-exported here.

Examples
--------
>>> import querylogs
>>> log = querylogs.synthetic_log(40, 1500, seed=0)
>>> release = querylogs.anonymize(log, 4, key=b"0123456789abcdef", measures=False)
>>> release.models
[user k-anonymity(k=4)]
>>> all(c.passed for c in querylogs.verify_log(release.data, 4))
True
"""

from structanon.microaggregation import mdav

from ._anonymize import GRANULARITIES, GROUPINGS, anonymize, generalize_times
from ._grouping import greedy_groups, grouping_cost, refine_groups, user_blocks
from ._identifiers import IDENTIFIER_PATTERNS, contains_identifier, detect_identifiers
from ._intents import click_graph, cluster_intents, normalize_queries, query_similarity
from ._verify import UserKAnonymity, user_signatures, verify_log
from .io import parse_report, read_log, read_log_dask, write_log, write_log_dask
from .synthetic import synthetic_log

__all__ = [
    "GRANULARITIES",
    "GROUPINGS",
    "IDENTIFIER_PATTERNS",
    "UserKAnonymity",
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
    "read_log_dask",
    "refine_groups",
    "synthetic_log",
    "user_blocks",
    "user_signatures",
    "verify_log",
    "write_log",
    "write_log_dask",
]
