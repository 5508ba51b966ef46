"""The tabular verifier: re-checks a release's privacy models from the published table alone.

The privacy models of tables are the core's (:mod:`structanon.models`: k-anonymity, the
l-diversity variants and t-closeness); this module only knows how to read them off a
published table: equivalence classes are the rows sharing every published quasi-identifier
value, the sensitive values are those of the published column, and t-closeness is measured
against the distribution of the published records (what a reader of the output sees).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from structanon import Partition
from structanon.models import PrivacyModel, check_models
from structanon.release import CheckResult

from ._input import sensitive_values

_MAX_KEY = 2**62  # running keys stay below this (no int64 overflow)

__all__ = ["TabularVerifier"]


def published_classes(data: pd.DataFrame, columns: Sequence[str]) -> Partition:
    """The equivalence classes of a published table: rows sharing every value of ``columns``.

    The same partition, labels included, as ``Partition.from_keys(data[columns])`` (a
    pandas group-by numbering the classes in order of first appearance, missing values
    forming one value), computed from one hash factorization per column (of the integer
    codes of a categorical column) combined by mixed-radix arithmetic, the running key
    re-factorized whenever it could overflow; a factorization numbers its values in order
    of first appearance, and so do the classes.
    """
    n = len(data)
    if not columns or not n:
        return Partition.from_keys(data[list(columns)])
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for name in columns:
        col, values = pd.factorize(data[name], sort=False, use_na_sentinel=True)
        col = col.astype(np.int64, copy=False)
        radix = len(values) + 1
        col[col < 0] = len(values)  # every missing value: one more value
        if span * radix >= _MAX_KEY:
            key, seen = pd.factorize(key, sort=False)
            span = len(seen)
        key = key * radix + col
        span *= radix
    ids, _ = pd.factorize(key, sort=False)
    return Partition(ids)


class TabularVerifier:
    """``verifier(data) -> list[CheckResult]`` for a published table.

    Parameters
    ----------
    quasi_identifiers : sequence of str
        The published quasi-identifier columns; rows sharing all their values form a class.
    sensitive : str, optional
        The sensitive column (read by l-diversity and t-closeness).
    models : sequence of PrivacyModel
        Every model the release claims.

    Examples
    --------
    >>> import pandas as pd
    >>> from structanon.models import KAnonymity
    >>> table = pd.DataFrame({"age": ["20-29", "20-29", "30-39"], "sex": ["*", "*", "*"]})
    >>> [r.passed for r in TabularVerifier(["age", "sex"], None, [KAnonymity(2)])(table)]
    [False]
    >>> TabularVerifier(["age"], None, [KAnonymity(2)])
    TabularVerifier(quasi_identifiers=['age'], sensitive=None, models=[k-anonymity(k=2)])
    """

    def __init__(
        self,
        quasi_identifiers: Sequence[str],
        sensitive: str | None,
        models: Sequence[PrivacyModel],
    ) -> None:
        self.quasi_identifiers = list(quasi_identifiers)
        self.sensitive = sensitive
        self.models = list(models)

    def __call__(self, data: pd.DataFrame) -> list[CheckResult]:
        if len(data):
            partition = published_classes(data, self.quasi_identifiers)
        else:
            partition = Partition(np.zeros(0, np.int64))
        values = None if self.sensitive is None else sensitive_values(data[self.sensitive])
        return check_models(self.models, partition, values)

    def __repr__(self) -> str:
        return (
            f"TabularVerifier(quasi_identifiers={self.quasi_identifiers}, "
            f"sensitive={self.sensitive!r}, models={self.models})"
        )
