"""Datafly (Sweeney 1998): greedy full-domain generalization, the classic baseline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from structanon import InfeasibleError
from structanon.models import PrivacyModel

from ._lattice import EncodedTable
from ._optimal import NodeOutcome, class_outcome

__all__ = ["datafly"]


def datafly(
    enc: EncodedTable,
    models: Sequence[PrivacyModel],
    max_suppressed: int,
    domain: np.ndarray | None = None,
) -> tuple[NodeOutcome, list[int]]:
    """Generalize the attribute with the most distinct values until few enough records fail.

    Parameters
    ----------
    enc : EncodedTable
    models : sequence of PrivacyModel
    max_suppressed : int
        Records in failing classes that may be suppressed once the loop stops.
    domain : array, optional
        Sensitive domain in code order (for t-closeness).

    Returns
    -------
    outcome : NodeOutcome
        The chosen node, its classes and which are kept.
    steps : list of int
        The attribute generalized at each step, in order.

    Raises
    ------
    InfeasibleError
        When every attribute is fully generalized and still too many records fail.

    Notes
    -----
    Each step raises by one level the quasi-identifier with the most distinct values in
    the current generalized table (ties: the first in column order), and stops when the
    records of classes failing a privacy model are at most ``max_suppressed``; those
    classes are suppressed.  Sweeney's original stops when fewer than ``k`` records fail.

    References
    ----------
    L. Sweeney. Datafly: a system for providing anonymity in medical data. DBSec 1998.
    L. Sweeney. Achieving k-anonymity privacy protection using generalization and
    suppression. IJUFKS 10(5), 2002.
    """
    levels = [0] * enc.q
    steps: list[int] = []
    while True:
        node = tuple(levels)
        outcome = class_outcome(enc.classes(node), models, domain, node)
        if outcome.suppressed <= max_suppressed and outcome.released > 0:
            return outcome, steps
        open_dims = [j for j in range(enc.q) if levels[j] < enc.heights[j]]
        if not open_dims:
            raise InfeasibleError(
                "Datafly generalized every attribute fully and still "
                f"{outcome.suppressed} of {enc.n} records fail (limit {max_suppressed})"
            )
        distinct = [np.unique(outcome.table.codes[:, j]).size for j in open_dims]
        choice = open_dims[int(np.argmax(distinct))]
        levels[choice] += 1
        steps.append(choice)
