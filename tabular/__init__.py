"""tabular: k-anonymity, l-diversity and t-closeness for microdata tables.

``tabular.anonymize(df, quasi_identifiers, sensitive, models, algorithm=...)`` returns a
verified :class:`TabularRelease`; see ``docs/tabular.md``.  The privacy models are the
core's (:mod:`structanon.models`); :class:`TabularVerifier` re-checks them on a published
table; :func:`microaggregate` replaces numeric columns by MDAV group means.
"""

from ._anonymize import ALGORITHMS, NUMERIC, SET, TabularRelease, anonymize
from ._mdav import microaggregate
from ._optimal import QUALITY_MODELS
from ._verify import TabularVerifier

__all__ = [
    "anonymize",
    "ALGORITHMS",
    "NUMERIC",
    "SET",
    "QUALITY_MODELS",
    "TabularRelease",
    "TabularVerifier",
    "microaggregate",
]
