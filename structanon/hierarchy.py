"""Value generalization hierarchies (ARX-style tables, taxonomies, intervals, masks)."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError

__all__ = ["Hierarchy", "value_labels"]


def value_labels(values: Any) -> np.ndarray:
    """The string form under which data values are looked up in a hierarchy.

    Integers print without a decimal point, and so do floats holding whole numbers
    (``39.0 -> "39"``), so a numeric ``age`` column matches the leaves of an ARX CSV.
    """
    arr = values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else np.asarray(values)
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        if finite.all() and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
    if arr.dtype.kind in "iub":
        return arr.astype(str).astype(object)
    if arr.dtype.kind in "OUS" and arr.size:
        kind = pd.api.types.infer_dtype(arr.reshape(-1), skipna=False)
        if kind == "string":  # the common case, all str: no per-value work
            return arr.astype(object)
    out = np.empty(arr.shape, dtype=object)
    flat = arr.reshape(-1)
    res = out.reshape(-1)
    for i, v in enumerate(flat.tolist()):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        res[i] = v if isinstance(v, str) else (None if _is_missing(v) else str(v))
    return out


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT


class Hierarchy:
    """A value generalization hierarchy over one attribute's domain.

    Level 0 holds the leaves (the original values); level ``height`` the most general
    nodes (usually the single root ``*``).  Internally every leaf has one row of integer
    node codes, one per level, so generalizing a whole column is one array lookup.

    Parameters
    ----------
    rows : sequence of sequences of str
        One row per leaf, from the leaf (level 0) to the top level, all of equal length.
    name : str, optional
        The attribute's name, used in error messages.

    Raises
    ------
    InputError
        On ragged rows, empty labels, a leaf listed twice with different ancestors, or a
        node with two parents; the message names the row and value.

    Examples
    --------
    >>> h = Hierarchy([["Male", "*"], ["Female", "*"]], name="sex")
    >>> h.height, h.generalize(["Female", "Male"], 1).tolist()
    (1, ['*', '*'])
    >>> z = Hierarchy.from_masking(["47677", "47602", "47678"])
    >>> z.generalize(["47677"], 2).tolist()
    ['476**']
    """

    def __init__(self, rows: Sequence[Sequence[Any]], name: str | None = None) -> None:
        self.name = name
        given = (
            list(rows)
            if isinstance(rows, Iterable) and not isinstance(rows, (str, bytes))
            else None
        )
        if given is None or any(
            isinstance(row, (str, bytes)) or not hasattr(row, "__len__") for row in given
        ):
            raise InputError("hierarchy rows must be sequences of values (leaf first)", column=name)
        rows = [
            [str(c).strip() for c in row]
            for row in given
            if len(row) and any(str(c).strip() for c in row)
        ]
        if not rows:
            raise InputError("hierarchy has no rows", column=name)
        width = len(rows[0])
        seen_leaf: dict[str, int] = {}
        unique_rows: list[Sequence[Any]] = []
        for i, row in enumerate(rows):
            if len(row) != width:
                raise InputError(
                    f"ragged hierarchy: row has {len(row)} levels, the first row has {width}",
                    column=name,
                    row=i + 1,
                    value=row[0],
                )
            for label in row:
                if label == "":
                    raise InputError(
                        "empty label in hierarchy", column=name, row=i + 1, value=row[0]
                    )
            if row[0] in seen_leaf:
                first = seen_leaf[row[0]]
                if unique_rows[first] != row:
                    raise InputError(
                        "leaf listed twice with different generalizations (a leaf with two parents)",
                        column=name,
                        row=i + 1,
                        value=row[0],
                    )
                continue
            seen_leaf[row[0]] = len(unique_rows)
            unique_rows.append(row)
        table = np.array(unique_rows, dtype=object)
        self.height = width - 1
        codes = np.empty(table.shape, dtype=np.int64)
        labels: list[np.ndarray] = []
        for level in range(width):
            uniq, first, inv = np.unique(
                table[:, level].astype(str), return_index=True, return_inverse=True
            )
            order = np.argsort(first, kind="stable")  # node codes follow first appearance
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            codes[:, level] = rank[inv.reshape(-1)]
            labels.append(np.array(uniq[order], dtype=object))
        for level in range(width - 1):
            pairs = np.unique(codes[:, level : level + 2], axis=0)
            dup = np.flatnonzero(np.bincount(pairs[:, 0]) > 1)
            if dup.size:
                node = labels[level][dup[0]]
                first_row = int(np.flatnonzero(codes[:, level] == dup[0])[0]) + 1
                raise InputError(
                    f"node at level {level} has two parents at level {level + 1}",
                    column=name,
                    row=first_row,
                    value=node,
                )
        self._codes = codes
        self._labels = labels
        self._leaf_index = pd.Index(labels[0])

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_csv(cls, path: str | Path, sep: str = ";", name: str | None = None) -> Hierarchy:
        """Read an ARX-style hierarchy: one line per leaf, ``leaf;level1;...;*``.

        Examples
        --------
        >>> import tempfile, os
        >>> f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        >>> _ = f.write("Male;*\\nFemale;*\\n"); f.close()
        >>> Hierarchy.from_csv(f.name).height
        1
        >>> os.unlink(f.name)
        """
        from .io import text_lines

        path = Path(path)
        if not path.exists():
            raise InputError("hierarchy file not found", path=str(path))
        lines = [text for _number, text in text_lines(path, "utf-8-sig", name="hierarchy file")]
        rows = list(csv.reader(lines, delimiter=sep))
        if rows and all(len(row) <= 1 for row in rows):
            other = next(
                (c for c in ",;\t|" if c != sep and any(c in line for line in lines)), None
            )
            if other is not None:
                raise InputError(
                    f"the hierarchy file is one column when split at {sep!r}, and its lines "
                    f"hold {other!r}: wrong separator? (sep={other!r}, "
                    f"--hierarchy-sep {other!r})",
                    path=str(path),
                )
        try:
            return cls(rows, name=name or path.stem)
        except InputError as exc:
            raise InputError(
                exc.message, column=exc.column, row=exc.row, value=exc.value, path=str(path)
            ) from None

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Any]], name: str | None = None) -> Hierarchy:
        """Build from rows ``[leaf, level1, ..., top]``."""
        return cls(rows, name=name)

    @classmethod
    def from_dict(
        cls, tree: Mapping[str, Any], root: str = "*", name: str | None = None
    ) -> Hierarchy:
        """Build from a nested dict (an item taxonomy), whose top keys are the root's children.

        A value is a dict (a subtree), a list/tuple/set of leaves, or ``None``/``{}`` (the key is a
        leaf).  Leaves shallower than the deepest one are padded: they stand for themselves at
        the levels below their parent, so every leaf has the same number of levels.

        Examples
        --------
        >>> h = Hierarchy.from_dict({"drinks": ["beer", "milk"], "baby": {"diapers": None}})
        >>> h.height, h.generalize(["beer", "diapers"], 1).tolist()
        (2, ['drinks', 'baby'])
        """
        paths: list[list[str]] = []

        def walk(node: Any, prefix: list[str]) -> None:
            if node is None or (isinstance(node, Mapping) and not node):
                paths.append(prefix)
            elif isinstance(node, Mapping):
                for child, sub in node.items():
                    walk(sub, prefix + [str(child)])
            elif isinstance(node, (list, tuple, set, frozenset)):
                for leaf in sorted(node, key=str) if isinstance(node, (set, frozenset)) else node:
                    paths.append(prefix + [str(leaf)])
            else:
                raise InputError(
                    "taxonomy values must be dicts, lists of leaves or None",
                    column=name,
                    node=prefix[-1] if prefix else root,
                )

        walk(tree, [])
        if not paths or not all(paths):
            raise InputError("taxonomy is empty", column=name)
        depth = max(len(p) for p in paths)
        rows = []
        for p in paths:
            leaf, ancestors = p[-1], p[:-1]
            rows.append([leaf] * (depth - len(p) + 1) + ancestors[::-1] + [root])
        return cls(rows, name=name)

    @classmethod
    def from_intervals(
        cls,
        values: Iterable[float],
        widths: Sequence[float] = (5, 10, 20),
        top: str = "*",
        start: float | None = None,
        name: str | None = None,
    ) -> Hierarchy:
        """Numeric hierarchy of nested intervals of the given widths, then ``top``.

        Intervals are aligned at ``start`` (default: the smallest value) and labelled
        ``lo-hi`` (inclusive, for integers) or ``[lo, hi)`` (for other numbers).  Each width
        must be a multiple of the previous one so the intervals nest.

        Examples
        --------
        >>> h = Hierarchy.from_intervals([20, 24, 25, 39], widths=(5, 10), start=20)
        >>> h.generalize([24, 25], 1).tolist(), h.generalize([24, 25], 2).tolist()
        (['20-24', '25-29'], ['20-29', '20-29'])
        """
        vals = np.unique(np.asarray(list(values), dtype=float))
        if vals.size == 0 or not np.isfinite(vals).all():
            raise InputError("interval hierarchy needs finite numeric values", column=name)
        for a, b in zip(widths, widths[1:]):
            if b <= 0 or a <= 0 or abs(b / a - round(b / a)) > 1e-9:
                raise InputError(
                    f"interval widths must nest: {b} is not a multiple of {a}", column=name
                )
        origin = vals.min() if start is None else float(start)
        integral = np.all(vals == np.round(vals)) and all(float(w).is_integer() for w in widths)
        rows = []
        for v in vals:
            leaf = str(int(v)) if integral else repr(float(v))
            row = [leaf]
            for w in widths:
                lo = origin + math.floor((v - origin) / w) * w
                row.append(f"{int(lo)}-{int(lo + w - 1)}" if integral else f"[{lo:g}, {lo + w:g})")
            rows.append(row + [top])
        return cls(rows, name=name)

    @classmethod
    def from_masking(
        cls, values: Iterable[Any], mask_char: str = "*", name: str | None = None
    ) -> Hierarchy:
        """Masking hierarchy: level i replaces the last i characters (``47677 -> 4767* -> 476**``).

        All values must have the same length; the top level masks every character.
        """
        strings = sorted({str(v) for v in values})
        if not strings:
            raise InputError("masking hierarchy needs values", column=name)
        length = len(strings[0])
        for s in strings:
            if len(s) != length:
                raise InputError(
                    f"masked values must share one length ({length})", column=name, value=s
                )
        rows = [[s[: length - i] + mask_char * i for i in range(length + 1)] for s in strings]
        return cls(rows, name=name)

    # ------------------------------------------------------------------ queries
    @property
    def leaves(self) -> np.ndarray:
        """Leaf labels (level 0), in code order."""
        return self._labels[0]

    @property
    def node_codes(self) -> np.ndarray:
        """Integer array (n_leaves, height + 1): the code of each leaf's ancestor at each level."""
        return self._codes

    def labels(self, level: int) -> np.ndarray:
        """Node labels at ``level``, in code order."""
        self._check_level(level)
        return self._labels[level]

    def n_nodes(self, level: int) -> int:
        return int(self.labels(level).size)

    def _check_level(self, level: int) -> None:
        if not 0 <= int(level) <= self.height:
            raise InputError(f"level {level} outside 0..{self.height}", column=self.name)

    def encode(self, values: Any, column: str | None = None) -> np.ndarray:
        """Leaf codes of data values.

        Raises
        ------
        InputError
            naming the first missing value or value absent from the hierarchy and its row
            (0-based position in ``values``).
        """
        labels = value_labels(values)
        codes = self._leaf_index.get_indexer(labels.reshape(-1))
        bad = np.flatnonzero(codes < 0)
        if bad.size:
            i = int(bad[0])
            v = labels.reshape(-1)[i]
            col = column or self.name
            if v is None:
                raise InputError("missing value", column=col, row=i)
            where = f"the hierarchy {self.name!r}" if self.name else "the hierarchy"
            hint = ""
            if isinstance(v, str) and v != v.strip() and v.strip() in self._leaf_index:
                hint = (
                    f"; {where} has {v.strip()!r}: its labels are read without the spaces "
                    "around them, the data's are not (strip the column, e.g. "
                    "df[c].str.strip())"
                )
            raise InputError(
                f"value not in {where} ({bad.size} value(s) in all){hint}",
                column=col,
                row=i,
                value=v,
            )
        return codes.astype(np.int64)

    def generalize_codes(self, codes: np.ndarray, level: int) -> np.ndarray:
        """Node codes at ``level`` of leaf codes."""
        self._check_level(level)
        return self._codes[np.asarray(codes, dtype=np.int64), int(level)]

    def generalize(self, values: Any, level: int) -> np.ndarray:
        """Generalize data values to ``level``; returns node labels (object array)."""
        return self._labels[int(level)][self.generalize_codes(self.encode(values), level)]

    def leaf_counts(self, level: int) -> np.ndarray:
        """Number of leaves under each node of ``level`` (for NCP / loss metrics)."""
        self._check_level(level)
        return np.bincount(self._codes[:, level], minlength=self.n_nodes(level))

    def parents(self, level: int) -> np.ndarray:
        """For each node of ``level`` (< height), the code of its parent at ``level + 1``."""
        if not 0 <= level < self.height:
            raise InputError(
                f"level {level} has no parents (height {self.height})", column=self.name
            )
        out = np.zeros(self.n_nodes(level), dtype=np.int64)
        out[self._codes[:, level]] = self._codes[:, level + 1]
        return out

    def lca_level(self, codes: np.ndarray) -> int:
        """Lowest level at which all the given leaf codes share one node (height + 1 if none)."""
        codes = np.asarray(codes, dtype=np.int64)
        for level in range(self.height + 1):
            col = self._codes[codes, level]
            if col.size == 0 or np.all(col == col[0]):
                return level
        return self.height + 1

    def lca(self, values: Any) -> tuple[int, str]:
        """Lowest common ancestor of data values: ``(level, label)``.

        Raises InputError when the values share no node (a hierarchy with several roots).
        """
        codes = self.encode(values)
        level = self.lca_level(codes)
        if level > self.height:
            raise InputError("values have no common ancestor in the hierarchy", column=self.name)
        return level, str(self._labels[level][self._codes[codes[0], level]])

    def distance(self, a: Any, b: Any) -> float:
        """Hierarchical ground distance: level of the lowest common ancestor / height.

        Examples
        --------
        >>> h = Hierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"]])
        >>> h.distance("a", "b"), h.distance("a", "c"), h.distance("a", "a")
        (0.5, 1.0, 0.0)
        """
        if self.height == 0:
            return 0.0 if str(a) == str(b) else 1.0
        return min(1.0, self.lca_level(self.encode([a, b])) / self.height)

    def distance_matrix(self, codes: np.ndarray | None = None) -> np.ndarray:
        """Pairwise hierarchical distances between leaves (all, or the given codes)."""
        codes = np.arange(self.leaves.size) if codes is None else np.asarray(codes, dtype=np.int64)
        rows = self._codes[codes]
        same = rows[:, None, :] == rows[None, :, :]
        # first level at which the two leaves share a node
        first = np.where(same.any(axis=2), same.argmax(axis=2), self.height)
        return first / max(self.height, 1)

    def to_rows(self) -> list[list[str]]:
        """The hierarchy as ARX-style rows (leaf first)."""
        return [[str(self._labels[lv][c]) for lv, c in enumerate(row)] for row in self._codes]

    def __repr__(self) -> str:
        return f"Hierarchy(name={self.name!r}, leaves={self.leaves.size}, height={self.height})"
