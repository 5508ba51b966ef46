"""Generic re-identification risk over a partition (prosecutor, journalist, marketer)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError
from .partition import Partition

__all__ = ["reidentification_risk", "journalist_risk"]


def reidentification_risk(partition: Partition, threshold: float = 0.2) -> dict[str, float]:
    """Prosecutor and marketer risk when the release is the whole population.

    A released record in a class of size ``f`` is re-identified with probability ``1/f`` by
    an attacker who knows the target is in the release (prosecutor).  Suppressed records
    are not released and carry no risk.

    Returns
    -------
    dict with
        ``prosecutor_max`` (largest ``1/f``), ``prosecutor_avg`` (mean of ``1/f`` over released
        records), ``marketer`` (expected share of records re-identified, ``n_classes / n``),
        ``sample_uniques`` (classes of size 1), ``share_above_threshold`` (records with
        ``1/f > threshold``), ``threshold``.

    Examples
    --------
    >>> r = reidentification_risk(Partition([0, 0, 1]))
    >>> r["prosecutor_max"], r["sample_uniques"]
    (1.0, 1)
    """
    if not 0 < threshold <= 1:
        raise InputError(f"threshold must be in (0, 1], got {threshold!r}")
    sizes = partition.size_of_each()
    released = sizes > 0
    if not released.any():
        return {
            "prosecutor_max": 0.0,
            "prosecutor_avg": 0.0,
            "marketer": 0.0,
            "sample_uniques": 0,
            "share_above_threshold": 0.0,
            "threshold": threshold,
        }
    per_record = 1.0 / sizes[released]
    return {
        "prosecutor_max": float(per_record.max()),
        "prosecutor_avg": float(per_record.mean()),
        "marketer": partition.n_groups / int(released.sum()),
        "sample_uniques": int((partition.sizes == 1).sum()),
        "share_above_threshold": float((per_record > threshold).mean()),
        "threshold": threshold,
    }


def journalist_risk(sample_keys: Any, population_keys: Any) -> dict[str, float]:
    """Journalist and marketer risk of a sample drawn from a known population.

    Each sample class with key ``j`` matches ``F_j`` population records; a journalist who
    targets anyone in the population re-identifies a sample record with probability
    ``1/F_j``.

    Parameters
    ----------
    sample_keys, population_keys : DataFrame or 2-D array
        (Generalized) quasi-identifier values of the sample and of the population, same
        columns in the same order.

    Returns
    -------
    dict with ``journalist_max``, ``journalist_avg`` (mean ``1/F`` over sample records),
    ``marketer`` (``(1/n) sum_j f_j / F_j``).

    Raises
    ------
    InputError
        When a sample key does not occur in the population.

    Examples
    --------
    >>> journalist_risk([["a"], ["b"]], [["a"], ["a"], ["b"], ["b"]])["journalist_max"]
    0.5
    """
    s = pd.DataFrame(np.asarray(sample_keys, dtype=object)).astype(str)
    p = pd.DataFrame(np.asarray(population_keys, dtype=object)).astype(str)
    if s.shape[1] != p.shape[1]:
        raise InputError("sample and population must have the same key columns")
    cols = list(s.columns)
    pop = p.value_counts(subset=cols).rename("F").reset_index()
    merged = s.merge(pop, on=cols, how="left")
    if merged["F"].isna().any():
        row = int(np.flatnonzero(merged["F"].isna().to_numpy())[0])
        raise InputError("sample record's key does not occur in the population", row=row)
    inv = 1.0 / merged["F"].to_numpy(dtype=float)
    return {
        "journalist_max": float(inv.max()),
        "journalist_avg": float(inv.mean()),
        "marketer": float(inv.mean()),
    }
