"""tabular: k-anonymity, l-diversity and t-closeness for microdata tables.

``tabular.anonymize(df, quasi_identifiers, sensitive, models, algorithm=...)`` returns a
verified :class:`structanon.Release`; see ``docs/tabular.md``.
"""

from ._anonymize import ALGORITHMS, NUMERIC, SET, TabularRelease, anonymize
from ._optimal import QUALITY_MODELS

__all__ = ["anonymize", "ALGORITHMS", "NUMERIC", "SET", "QUALITY_MODELS", "TabularRelease"]
