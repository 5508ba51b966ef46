"""Grouping of integer-coded rows: dense group ids in ascending key order, without sorting
every row.

Rows are keyed by a mixed-radix combination of their integer columns.  Keys are numbered
in ascending order (so groups come in the lexicographic order of their columns) by a
presence mask over the key span when the span is small, and otherwise by a hash table
(linear time) followed by a sort of the distinct keys only.  :class:`AttributeBlocks`
keeps such ids for runs of adjacent quasi-identifiers, so a lattice node's key combines a
few dense block ids instead of every attribute, over a much smaller span.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["AttributeBlocks", "dense_groups", "grouped_rows", "hashed_ids", "numbered_keys"]

MAX_KEY = np.int64(1) << 62
# keys spanning at most this many entries per row (plus the slack) are numbered with a
# presence mask (linear in rows + span); larger spans by hashing
_MASK_FACTOR = 8
_MASK_SLACK = 1024
# rows are keyed column by column, re-numbered whenever the key span would pass this many
# entries per row (plus the slack): every stage fits a presence mask
_STAGE_FACTOR = 2


def hashed_ids(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids of int64 keys, numbered in ascending key order, and the distinct keys.

    The keys are numbered by a hash table (linear time) and only the distinct ones are
    sorted, which beats sorting every key when many repeat.
    """
    first, unique = pd.factorize(keys)
    order = np.argsort(unique)
    rank = np.empty(unique.size, dtype=np.int64)
    rank[order] = np.arange(unique.size, dtype=np.int64)
    return rank[first], np.asarray(unique)[order]


def numbered_keys(
    keys: np.ndarray, span: int | None = None, mask_max: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids ``0..m-1`` of non-negative int keys in ascending key order, and the
    ``m`` distinct keys (ascending).

    ``span`` bounds the keys from above (``keys < span``; the maximum is taken when it is
    not given).  A presence mask numbers them when the span is at most ``mask_max``
    (default: a few times the keys), a hash table otherwise (:func:`hashed_ids`); both
    give the same ids.

    Examples
    --------
    >>> ids, distinct = numbered_keys(np.array([7, 3, 7, 9]))
    >>> ids.tolist(), distinct.tolist()
    ([1, 0, 1, 2], [3, 7, 9])
    """
    keys = np.asarray(keys)
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    top = int(keys.max()) + 1 if span is None else int(span)
    if mask_max is None:
        mask_max = _MASK_FACTOR * keys.size + _MASK_SLACK
    if top <= mask_max:
        present = np.zeros(top, dtype=bool)
        present[keys] = True
        distinct = np.flatnonzero(present)
        # int32 ranks (half the memory over the span) whenever the ids fit
        rank = np.empty(top, dtype=np.int32 if distinct.size < 2**31 else np.int64)
        rank[distinct] = np.arange(distinct.size, dtype=rank.dtype)
        return rank[keys].astype(np.int64), distinct.astype(np.int64, copy=False)
    return hashed_ids(keys.astype(np.int64, copy=False))


def _staged_numbering(
    columns: Sequence[np.ndarray], radices: Sequence[int], limit: int
) -> tuple[np.ndarray, list[tuple[np.ndarray, list[int]]]]:
    """Number rows by their columns, re-numbering the running key whenever the next
    column would take its span past ``limit``.

    Returns the rows' dense ids (ascending in the lexicographic order of the columns) and
    the stages: each stage's distinct keys (ascending) and the radices of the columns it
    appended to the previous stage's ids (the first stage starts from the first column).
    """
    key = np.asarray(columns[0], dtype=np.int64)
    span = max(int(radices[0]), 1)
    digits = [span]
    stages: list[tuple[np.ndarray, list[int]]] = []
    for col, radix in zip(columns[1:], radices[1:]):
        radix = max(int(radix), 1)
        if span * radix > limit or span * radix >= MAX_KEY:
            key, distinct = numbered_keys(key, span)
            stages.append((distinct, digits))
            span, digits = max(int(distinct.size), 1), []
            if span * radix >= MAX_KEY:
                raise ValueError("dense_groups: a column's radix is too large to combine")
        key = key * radix + np.asarray(col, dtype=np.int64)
        span *= radix
        digits.append(radix)
    ids, distinct = numbered_keys(key, span)
    stages.append((distinct, digits))
    return ids, stages


def _stage_codes(stages: list[tuple[np.ndarray, list[int]]]) -> np.ndarray:
    """Columns (m, q) of each group of :func:`_staged_numbering`, decoded from the stages'
    distinct keys (no gather from the rows)."""
    q = sum(len(digits) for _, digits in stages)
    codes = np.empty((q, stages[-1][0].size), dtype=np.int64)
    j = q
    ids: np.ndarray | None = None  # the groups' ids in the stage being decoded
    for s in range(len(stages) - 1, -1, -1):
        distinct, digits = stages[s]
        rest = distinct if ids is None else distinct[ids]
        # the first stage starts from its first column; a later one from the previous ids
        for radix in digits[:0:-1] if s == 0 else digits[::-1]:
            j -= 1
            rest, codes[j] = np.divmod(rest, radix)
        if s == 0:
            j -= 1
            codes[j] = rest
        else:
            ids = rest
    return codes.T


def grouped_rows(
    columns: Sequence[np.ndarray], radices: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Dense group id of each row of integer ``columns`` (column j takes values < radices[j])
    and each group's columns (m, q), groups in the lexicographic order of their columns.

    Columns are combined left to right in mixed radix; whenever the next column would take
    the key's span past a few times the rows, the key is re-numbered densely (a presence
    mask when its span allows, else a hash table: :func:`numbered_keys`), so no row is
    sorted and the masks stay linear in the rows.  The groups' columns are decoded from
    the distinct keys of each stage.

    Examples
    --------
    >>> ids, codes = grouped_rows([np.array([1, 0, 1]), np.array([2, 5, 2])], [2, 6])
    >>> ids.tolist(), codes.tolist()
    ([1, 0, 1], [[0, 5], [1, 2]])
    """
    if not columns:
        raise ValueError("grouped_rows needs at least one column")
    n = len(columns[0])
    ids, stages = _staged_numbering(columns, radices, _STAGE_FACTOR * n + _MASK_SLACK)
    return ids, _stage_codes(stages)


def dense_groups(columns: Sequence[np.ndarray], radices: Sequence[int]) -> tuple[np.ndarray, int]:
    """Dense group id of each row of integer ``columns`` (column j takes values < radices[j]).

    Groups are numbered in the lexicographic order of their columns, with no sort of the
    rows (see :func:`grouped_rows`, which also gives each group's columns).

    Examples
    --------
    >>> ids, m = dense_groups([np.array([0, 1, 0]), np.array([2, 2, 2])], [2, 3])
    >>> ids.tolist(), m
    ([0, 1, 0], 2)
    """
    if not columns:
        raise ValueError("dense_groups needs at least one column")
    n = len(columns[0])
    ids, stages = _staged_numbering(columns, radices, _STAGE_FACTOR * n + _MASK_SLACK)
    return ids, int(stages[-1][0].size)


def contiguous_blocks(q: int, size: int = 3) -> list[tuple[int, ...]]:
    """Runs of about ``size`` adjacent attributes covering ``0..q-1``, as even as possible.

    >>> contiguous_blocks(8)
    [(0, 1, 2), (3, 4), (5, 6, 7)]
    """
    n_blocks = max(-(-q // size), 1)
    bounds = [round(b * q / n_blocks) for b in range(n_blocks + 1)]
    return [tuple(range(bounds[b], bounds[b + 1])) for b in range(n_blocks)]


class AttributeBlocks:
    """Dense ids of a fixed set of rows under runs of adjacent attributes, per level choice.

    The attributes are split into contiguous blocks; for each block and each choice of
    levels of its attributes, the rows' block codes are numbered once (ascending, i.e. in
    the lexicographic order of the block's codes) and kept.  A lattice node's key is then
    the mixed-radix combination of its blocks' ids, whose span is the product of the
    distinct block values present, not of the attributes' domains; keys ascend in the
    lexicographic order of the node's codes, as the attribute-wise keys do.

    Parameters
    ----------
    leaf_codes : int array (rows, q)
        Leaf code of every row, per attribute.
    node_codes : list of int arrays (leaves, levels)
        Per attribute, the node code of each leaf at each level (``Hierarchy.node_codes``).
    n_nodes : list of list of int
        Nodes per level of each attribute.
    blocks : list of tuples of int
        The contiguous runs of attributes (see :func:`contiguous_blocks`).
    """

    def __init__(
        self,
        leaf_codes: np.ndarray,
        node_codes: Sequence[np.ndarray],
        n_nodes: Sequence[Sequence[int]],
        blocks: Sequence[tuple[int, ...]],
    ) -> None:
        self._leaf_codes = leaf_codes
        self._node_codes = node_codes
        self._n_nodes = n_nodes
        self.blocks = [tuple(b) for b in blocks]
        if any(b != tuple(range(b[0], b[-1] + 1)) for b in self.blocks):
            raise ValueError("attribute blocks must be runs of adjacent attributes")
        self._bounds = [(b[0], b[-1] + 1) for b in self.blocks]
        self._ids: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]] = {}
        # per block: each row's distinct leaf tuple, and those tuples (lexicographic)
        self._leaves: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @staticmethod
    def n_combinations(heights: Sequence[int], blocks: Sequence[tuple[int, ...]]) -> int:
        """Level choices over all blocks (the most arrays kept)."""
        return sum(int(np.prod([int(heights[j]) + 1 for j in b])) for b in blocks)

    def digits(self, node: tuple[int, ...]) -> tuple[list[np.ndarray], list[int], list[np.ndarray]]:
        """The node's block digits: each block's ids per row (int32), the number of
        distinct block values (the radices) and their codes (m_b, attributes of the block),
        blocks in attribute order."""
        ids, radices, codes = [], [], []
        for b, (lo, hi) in enumerate(self._bounds):
            hit = self._ids.get((b, node[lo:hi]))
            if hit is None:
                hit = self._number(b, node[lo:hi])
            ids.append(hit[0])
            radices.append(hit[1].shape[0])
            codes.append(hit[1])
        return ids, radices, codes

    def _number(self, b: int, levels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Number the rows' codes of block ``b`` at ``levels`` (once; then kept).

        The block's distinct leaf tuples are generalized and numbered (a few entries);
        each row then takes its tuple's id, one gather over the rows."""
        attrs = self.blocks[b]
        if b not in self._leaves:
            columns = [self._leaf_codes[:, j] for j in attrs]
            tuple_of_row, tuples = grouped_rows(
                columns, [self._node_codes[j].shape[0] for j in attrs]
            )
            self._leaves[b] = (tuple_of_row, tuples)
        tuple_of_row, tuples = self._leaves[b]
        radices = [max(int(self._n_nodes[j][lv]), 1) for j, lv in zip(attrs, levels)]
        key = self._node_codes[attrs[0]][tuples[:, 0], levels[0]].astype(np.int64)
        for i in range(1, len(attrs)):
            key = key * radices[i] + self._node_codes[attrs[i]][tuples[:, i], levels[i]]
        tuple_ids, distinct = numbered_keys(key)
        codes = np.empty((distinct.size, len(attrs)), dtype=np.int64)
        rest = distinct
        for i in range(len(attrs) - 1, 0, -1):
            rest, codes[:, i] = np.divmod(rest, radices[i])
        codes[:, 0] = rest
        hit = (tuple_ids.astype(np.int32)[tuple_of_row], codes)
        self._ids[(b, levels)] = hit
        return hit
