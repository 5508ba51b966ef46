"""Cell-level local suppression to make the last violating records k-anonymous."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from structanon._validation import check_int
from structanon.errors import InfeasibleError

from ._input import require_columns

__all__ = ["local_suppression", "SUPPRESSED"]

SUPPRESSED = "*"
_MAX_PATTERNS = 4096


def _patterns(n_columns: int, preference: np.ndarray):
    """Suppression patterns (sets of column positions), fewest cells first.

    Among patterns of one size, those suppressing the most preferred columns (higher
    ``preference``) come first; the full pattern always comes last.
    """
    rank = np.argsort(-preference, kind="stable")
    emitted = 0
    for size in range(1, n_columns):
        for combo in combinations(rank.tolist(), size):
            if emitted >= _MAX_PATTERNS:
                break
            emitted += 1
            yield frozenset(combo)
    yield frozenset(range(n_columns))


def _donors(
    kept_labels: np.ndarray, k: int, need: int, rng: np.random.Generator | None = None
) -> np.ndarray:
    """Records to move into the all-suppressed group, at least ``need``.

    Surplus records (beyond ``k``) of the largest classes first, so no class drops below
    ``k``; then whole classes, smallest first.  Which members of a class give up their
    values is a choice among equals: drawn from ``rng`` when given, else the last ones.
    """
    labels = kept_labels[kept_labels >= 0]
    sizes = np.bincount(labels) if labels.size else np.zeros(0, dtype=np.int64)
    taken: list[np.ndarray] = []
    count = 0
    for g in np.argsort(-sizes, kind="stable"):
        if count >= need or sizes[g] <= k:
            break
        members = np.flatnonzero(kept_labels == g)
        if rng is not None:
            members = rng.permutation(members)
        moved = members[len(members) - min(int(sizes[g]) - k, need - count) :]
        taken.append(moved)
        sizes[g] -= moved.size
        count += moved.size
    for g in np.argsort(sizes, kind="stable"):
        if count >= need:
            break
        if sizes[g] > 0:  # the whole (remaining) class
            members = np.flatnonzero(kept_labels == g)
            members = np.setdiff1d(members, np.concatenate(taken) if taken else members[:0])
            taken.append(members)
            count += members.size
    return np.concatenate(taken) if taken else np.zeros(0, dtype=np.int64)


def _row_ids(matrix: np.ndarray) -> np.ndarray:
    """Equal rows of an integer matrix get equal ids."""
    if matrix.shape[1] == 1:
        return pd.factorize(matrix[:, 0])[0]
    return pd.MultiIndex.from_arrays(list(matrix.T)).factorize()[0]


def local_suppression(
    generalized: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    k: int,
    rng: np.random.Generator | None = None,
) -> tuple[pd.DataFrame, int]:
    """Suppress few quasi-identifier cells so that every record is k-anonymous.

    Records already in an equivalence class of at least ``k`` are left alone.  The
    others ("violating" records) are handled greedily over suppression patterns taken in
    order of the number of cells they blank (fewest first; among equals, columns with
    more distinct values first): under a pattern, violating records that agree on the
    kept columns and number at least ``k`` (counting records already given that same
    pattern and values) get its cells replaced by ``"*"``.  Records left at the end have
    every QI suppressed; if they are fewer than ``k``, records are drawn from classes
    with more than ``k`` members (then whole classes, smallest first) to join them.

    Parameters
    ----------
    generalized : pandas.DataFrame
        The (globally recoded) table.
    quasi_identifiers : sequence of str
        The QI columns; only their cells are suppressed.
    k : int
        The k of k-anonymity.
    rng : numpy.random.Generator, optional
        Chooses which members of a class with surplus records join the all-suppressed
        group (members are equals); :func:`tabular.anonymize` passes the release's secret
        generator so the choice carries nothing about the input order.  Default: the
        class's last members in row order.

    Returns
    -------
    df : pandas.DataFrame
        A copy of ``generalized`` (same index, columns, row order) with suppressed cells
        set to ``"*"`` (QI columns holding a ``"*"`` become object columns).
    n_suppressed_cells : int
        Number of cells replaced by ``"*"``.

    Raises
    ------
    InputError
        Unknown column, ``k`` not a positive integer.
    InfeasibleError
        The table has fewer than ``k`` records.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"age": ["20-29"] * 3 + ["30-39"], "sex": ["M", "M", "F", "M"]})
    >>> out, cells = local_suppression(t, ["age", "sex"], 2)
    >>> out.values.tolist(), cells
    ([['20-29', 'M'], ['20-29', 'M'], ['*', '*'], ['*', '*']], 4)

    Notes
    -----
    Semantics of ``"*"``: a suppressed cell matches only another ``"*"`` when records
    are grouped, i.e. ``*`` is one more value of the column.  This is the conservative
    reading (sdcMicro instead lets a missing value match any value, which counts larger
    classes); it is the one an independent checker such as pycanon applies, so the
    output is k-anonymous by plain grouping on the QI columns.  Minimizing suppressed
    cells is NP-hard (Meyerson & Williams 2004); this greedy pass does not guarantee the
    minimum.

    References
    ----------
    A. Meyerson, R. Williams. On the complexity of optimal k-anonymity. PODS 2004.
    M. Templ, A. Kowarik, B. Meindl. Statistical disclosure control for micro-data using
    the R package sdcMicro. J. Stat. Softw. 67(4), 2015 (local suppression).
    """
    qis = require_columns(generalized, quasi_identifiers, argument="generalized")
    k = check_int(k, "k", min_value=1)
    n = len(generalized)
    if n and n < k:
        raise InfeasibleError(f"k={k} exceeds the number of records ({n})")
    out = generalized.copy()
    if n == 0:
        return out, 0
    codes = np.empty((n, len(qis)), dtype=np.int64)
    star = np.empty(len(qis), dtype=np.int64)
    for j, col in enumerate(qis):
        codes[:, j], uniques = pd.factorize(generalized[col].astype(object), use_na_sentinel=False)
        present = np.flatnonzero(np.asarray(uniques, dtype=object) == SUPPRESSED)
        star[j] = present[0] if present.size else len(uniques)  # "*" is one more value
    labels = _row_ids(codes)
    todo = np.flatnonzero(np.bincount(labels)[labels] < k)
    if todo.size == 0:
        return out, 0
    final = codes.copy()
    pattern_of = np.full(n, -1, dtype=np.int64)
    cardinality = np.array([generalized[c].nunique(dropna=False) for c in qis], dtype=float)
    for pid, pattern in enumerate(_patterns(len(qis), cardinality)):
        if todo.size == 0:
            break
        cols = sorted(pattern)
        masked = codes[todo].copy()
        masked[:, cols] = star[cols]
        if len(cols) < len(qis):
            earlier = np.flatnonzero(pattern_of == pid)  # resolved before under this pattern
            ids = _row_ids(np.vstack([final[earlier], masked]))
            done = np.bincount(ids)[ids[earlier.size :]] >= k
        else:
            done = np.ones(todo.size, dtype=bool)
        final[todo[done]] = masked[done]
        pattern_of[todo[done]] = pid
        todo = todo[~done]
    all_star = (final == star).all(axis=1)
    if 0 < all_star.sum() < k:  # grow the all-suppressed group from classes that can spare
        kept_labels = np.where(all_star, -1, _row_ids(final))
        final[_donors(kept_labels, k, k - int(all_star.sum()), rng)] = star
    suppressed = final != codes
    for j, col in enumerate(qis):
        rows = np.flatnonzero(suppressed[:, j])
        if rows.size:
            column = out[col].astype(object)
            column.iloc[rows] = SUPPRESSED
            out[col] = column
    return out, int(suppressed.sum())
