"""tabular: k-anonymity, l-diversity and t-closeness for microdata tables.

``tabular.anonymize(df, quasi_identifiers, sensitive, models, algorithm=...)`` returns a
verified :class:`TabularRelease`; see ``docs/tabular.md``.  The privacy models are the
core's (:mod:`structanon.models`); :class:`TabularVerifier` re-checks them on a published
table; :func:`microaggregate` replaces numeric columns by MDAV group means;
:func:`anatomize` (Anatomy) and :func:`slice_table` (slicing) publish l-diverse buckets
instead of generalized values.
"""

from ._anatomy import AnatomyVerifier, BucketRelease, anatomize
from ._anonymize import ALGORITHMS, NUMERIC, SET, TabularRelease, anonymize
from ._mdav import microaggregate
from ._optimal import QUALITY_MODELS
from ._slicing import SlicingVerifier, sensitive_probabilities, slice_table
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
    "anatomize",
    "slice_table",
    "BucketRelease",
    "AnatomyVerifier",
    "SlicingVerifier",
    "sensitive_probabilities",
]
