"""Utility metrics defined over any partition of individuals."""

from __future__ import annotations

import numpy as np

from .partition import Partition

__all__ = ["discernibility", "average_class_size", "suppression_ratio", "entropy_information_loss"]


def discernibility(partition: Partition) -> int:
    """Discernibility metric (Bayardo & Agrawal 2005).

    ``DM = sum_E |E|^2 + n_suppressed * n``: each released record is charged the size of
    its class, each suppressed record the size of the whole population ``n``.

    Examples
    --------
    >>> discernibility(Partition([0, 0, 1, 1, 1, -1]))
    19
    """
    return int((partition.sizes.astype(np.int64) ** 2).sum() + partition.n_suppressed * partition.n)


def average_class_size(partition: Partition, k: int = 1) -> float:
    """Normalized average equivalence class size ``C_AVG = (n_released / n_classes) / k``.

    Examples
    --------
    >>> average_class_size(Partition([0, 0, 1, 1]), k=2)
    1.0
    """
    if partition.n_groups == 0:
        return float("nan")
    return partition.n_released / partition.n_groups / k


def suppression_ratio(partition: Partition) -> float:
    """Share of individuals suppressed."""
    return partition.n_suppressed / partition.n if partition.n else 0.0


def entropy_information_loss(partition: Partition) -> float:
    """Entropy-based information loss in [0, 1].

    The uncertainty, in bits, about which record of its class an individual is,
    ``log2 |E(i)|``, averaged over individuals and divided by ``log2 n`` (the uncertainty
    when the whole population is one class).  A suppressed individual counts ``log2 n``.
    0 means every individual is its own class; 1 means nothing distinguishes anyone.

    Examples
    --------
    >>> entropy_information_loss(Partition([0, 1, 2, 3]))
    0.0
    >>> entropy_information_loss(Partition([0, 0, 0, 0]))
    1.0
    """
    n = partition.n
    if n <= 1:
        return 0.0
    sizes = partition.size_of_each().astype(float)
    bits = np.where(partition.labels >= 0, np.log2(np.maximum(sizes, 1.0)), np.log2(n))
    return float(bits.mean() / np.log2(n))
