"""tabular: k-anonymity, l-diversity and t-closeness for microdata tables.

``tabular.anonymize(df, quasi_identifiers, sensitive, models, algorithm=...)`` returns a
verified :class:`TabularRelease`; see ``docs/tabular.md``.  The privacy models are the
core's (:mod:`structanon.models`); :class:`TabularVerifier` re-checks them on a published
table; :func:`microaggregate` (MDAV), :func:`add_noise`, :func:`rank_swap`, :func:`pram`, recoding
and sampling are statistical disclosure control by perturbation, each a verified release;
:func:`anatomize` (Anatomy) and :func:`slice_table` (slicing) publish l-diverse buckets
instead of generalized values.  :func:`read_microdata` (:func:`read_microdata_dask`) and
:func:`write_microdata` read and write tables as the command line does.
"""

from ._anatomy import AnatomyVerifier, BucketRelease, anatomize
from ._anonymize import ALGORITHMS, NUMERIC, SET, TabularRelease, anonymize
from ._microaggregate import microaggregate
from ._noise import add_noise
from ._optimal import QUALITY_MODELS
from ._pram import pram
from ._recode import bottom_code, global_recode, recode, top_code
from ._safepub import DifferentialPrivacy, dp_counts, implied_k
from ._slicing import SlicingVerifier, sensitive_probabilities, slice_table
from ._swap import rank_swap
from ._verify import TabularVerifier
from .io import read_microdata, read_microdata_dask, write_microdata

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
    "add_noise",
    "rank_swap",
    "pram",
    "recode",
    "top_code",
    "bottom_code",
    "global_recode",
    "DifferentialPrivacy",
    "implied_k",
    "dp_counts",
    "read_microdata",
    "read_microdata_dask",
    "write_microdata",
]
