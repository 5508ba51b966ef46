"""Microaggregation of numeric columns of a table, on the core's MDAV.

MDAV itself (and Ward's merge cost, the within-group SSE) lives once, in
:mod:`structanon.microaggregation`; this module applies it to the columns of a DataFrame.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from structanon.errors import InputError
from structanon.microaggregation import mdav

from ._input import require_columns

__all__ = ["microaggregate"]


def microaggregate(df: pd.DataFrame, columns: Sequence[str], k: int) -> pd.DataFrame:
    """Replace numeric columns by their MDAV group means (k-anonymous on those columns).

    Parameters
    ----------
    df : pandas.DataFrame
    columns : sequence of str
        Numeric quasi-identifiers, aggregated jointly (one MDAV partition for all).
    k : int
        Minimum group size.

    Returns
    -------
    pandas.DataFrame
        A copy of ``df`` (same index, columns and row order) whose ``columns`` hold the
        mean of each record's group (floats).

    Raises
    ------
    InputError
        Unknown or non-numeric column, missing values (column and row named).
    InfeasibleError
        ``k`` exceeds the number of records.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"age": [20, 22, 24, 60, 62, 64], "job": list("abcdef")})
    >>> microaggregate(t, ["age"], 3)["age"].tolist()
    [22.0, 22.0, 22.0, 62.0, 62.0, 62.0]

    Notes
    -----
    Every record of group :math:`g` gets :math:`\\bar x_g`; the information lost is the
    within-group sum of squares (SSE) of the partition.

    References
    ----------
    J. Domingo-Ferrer, J. M. Mateo-Sanz. Practical data-oriented microaggregation for
    statistical disclosure control. IEEE TKDE 14(1), 2002.
    """
    columns = require_columns(df, columns, argument="df", parameter="columns", role="column")
    for col in columns:
        if df[col].dtype == bool or not pd.api.types.is_numeric_dtype(df[col].dtype):
            raise InputError("microaggregation needs a numeric column", column=col)
        missing = np.flatnonzero(df[col].isna().to_numpy())
        if missing.size:
            raise InputError("missing value", column=col, row=int(missing[0]))
    x = df[columns].to_numpy(dtype=float)
    labels = mdav(x, k, standardize=True)
    sums = np.zeros((labels.max() + 1, x.shape[1]))
    np.add.at(sums, labels, x)
    means = sums / np.bincount(labels)[:, None]
    out = df.copy()
    for j, col in enumerate(columns):
        out[col] = means[labels, j]
    return out
