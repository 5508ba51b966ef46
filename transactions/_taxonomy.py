"""Item taxonomies as flat numpy arrays (parents, depths, leaf counts, ancestor paths).

Taxonomies come from :class:`structanon.Hierarchy` (ARX-style CSV or nested dicts, whose
padded levels are collapsed back into the tree they describe) or are built automatically
as a balanced tree over the items, ordered by id or by frequency.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from structanon import Hierarchy
from structanon._validation import check_choice, check_int
from structanon.errors import InputError
from structanon.io import text_lines

__all__ = ["Taxonomy", "resolve_taxonomy"]

ROOT = "*"


class Taxonomy:
    """A rooted tree over items, bound to a data set's item domain.

    Node ids ``0 .. n_items - 1`` are the data's items in domain order; then come taxonomy
    leaves absent from the data, then internal nodes.  ``anc[leaf, d]`` is the leaf's
    ancestor at depth ``d`` (the leaf itself below its own depth).
    """

    def __init__(
        self, parent_of: Mapping[str, str | None], domain: np.ndarray, source: str = "given"
    ) -> None:
        self.source = source
        self.domain = domain
        order, n_extra = _node_order(parent_of, domain)
        n_items = int(domain.size)
        n_nodes = len(order)
        parent, self.root = _parent_array(parent_of, order)
        self.n_items = n_items
        self.n_leaves = n_items + n_extra
        self.n_nodes = n_nodes
        self.parent = parent
        labels = np.empty(n_nodes, dtype=object)
        labels[:n_items] = domain
        labels[n_items:] = np.array(order[n_items:], dtype=object)
        self.labels = labels
        depth = _depths(parent)
        self.depth = depth
        self.height = int(depth[: self.n_leaves].max()) if self.n_leaves else 0
        self.anc = _ancestor_table(self.n_leaves, parent, depth, self.height)
        self.nanc = _ancestor_table(n_nodes, parent, depth, self.height)
        size = np.zeros(n_nodes, dtype=np.int64)
        leaf_depth = depth[: self.n_leaves]
        for d in range(self.height + 1):
            deep = leaf_depth >= d
            size += np.bincount(self.anc[deep, d], minlength=n_nodes)
        self.size = size
        self.is_leaf = np.zeros(n_nodes, dtype=bool)
        self.is_leaf[: self.n_leaves] = True
        self.ncp = np.where(self.is_leaf, 0.0, size / max(self.n_leaves, 1))

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_hierarchy(cls, h: Hierarchy, domain: np.ndarray) -> Taxonomy:
        codes = h.node_codes
        labels = [h.labels(level) for level in range(h.height + 1)]
        parent_of: dict[str, str | None] = {}
        for row in range(codes.shape[0]):
            path = [str(labels[lv][codes[row, lv]]) for lv in range(h.height, -1, -1)]
            collapsed = [path[0]]
            for lab in path[1:]:
                if lab != collapsed[-1]:
                    collapsed.append(lab)
            prev = None
            for lab in collapsed:
                known = parent_of.get(lab, "\0unset")
                if known != "\0unset" and known != prev:
                    raise InputError("taxonomy node has two parents", node=lab)
                parent_of[lab] = prev
                prev = lab
        return cls(parent_of, domain, source="hierarchy")

    @classmethod
    def balanced(
        cls, domain: np.ndarray, fanout: int, counts: np.ndarray | None = None, order: str = "id"
    ) -> Taxonomy:
        """A balanced tree of the given fan-out over the items, by id or by frequency.

        Its labels never name an item of the input: integer items ordered by id are grouped
        into aligned blocks of ids (``0..4``, ``5..9``, then ``0..24``, ...) fixed by the
        fan-out alone, a block holding one item of the data adding no node; any other tree
        is labelled ``g<level>.<index>``.  (Labels ``first..last`` of the items each group
        holds named the input's items, a rare one among them, and shifted every later
        label when one basket with a unique item left the input.)

        Examples
        --------
        >>> tax = Taxonomy.balanced(np.array([0, 1, 2, 3], dtype=object), fanout=2)
        >>> [str(x) for x in tax.labels], tax.height
        (['0', '1', '2', '3', '0..1', '2..3', '*'], 2)
        >>> tax = Taxonomy.balanced(np.array([1, 2, 3, 7], dtype=object), fanout=2)
        >>> [str(x) for x in tax.labels]
        ['1', '2', '3', '7', '2..3', '0..3', '*']
        >>> tax = Taxonomy.balanced(np.array(["a", "b", "c", "d"], dtype=object), fanout=2)
        >>> [str(x) for x in tax.labels]
        ['a', 'b', 'c', 'd', 'g1.0', 'g1.1', '*']
        """
        fanout = check_int(fanout, "fanout", min_value=2)
        check_choice(order, "order", ("id", "frequency"))
        if order == "id" and _integer_items(domain):
            return cls(
                _aligned_blocks(domain, fanout),
                domain,
                source=f"balanced(fanout={fanout}, order={order})",
            )
        names = [str(x) for x in domain.tolist()]
        perm = _item_order(domain, counts, order)
        taken = set(names)
        parent_of: dict[str, str | None] = {}
        level = [names[i] for i in perm]
        span = [(names[i], names[i]) for i in perm]
        depth_no = 0
        while len(level) > fanout:
            bounds = _group_bounds(len(level), fanout)
            if len(bounds) == 2:  # one group only: its node would be the root's single child
                break
            depth_no += 1
            level, span = _next_level(level, span, bounds, depth_no, order, taken, parent_of)
        if ROOT in taken:
            raise InputError("an item is named like the taxonomy root", value=ROOT)
        for child in level:
            parent_of[child] = ROOT
        parent_of[ROOT] = None
        return cls(parent_of, domain, source=f"balanced(fanout={fanout}, order={order})")

    # ------------------------------------------------------------------ helpers
    def leaf_path(self, leaf: int) -> list[int]:
        d = int(self.depth[leaf])
        return [int(x) for x in self.anc[leaf, : d + 1]]

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "height": self.height,
            "leaves": self.n_leaves,
            "nodes": self.n_nodes,
        }


def _node_order(parent_of: Mapping[str, str | None], domain: np.ndarray) -> tuple[list[str], int]:
    """Node labels in id order (data items, absent leaves, internal nodes); absent leaves."""
    item_keys = [str(x) for x in domain.tolist()]
    children: dict[str, int] = {}
    for par in parent_of.values():
        if par is not None:
            children[par] = children.get(par, 0) + 1
    leaves = [lab for lab in parent_of if lab not in children]
    leaf_set = set(leaves)
    for key, item in zip(item_keys, domain.tolist()):
        if key not in parent_of:
            raise InputError("item not in the taxonomy", value=item)
        if key not in leaf_set:
            raise InputError("item is an internal node of the taxonomy, not a leaf", value=item)
    in_data = set(item_keys)
    extra = [lab for lab in leaves if lab not in in_data]
    internal = [lab for lab in parent_of if lab in children]
    return item_keys + extra + internal, len(extra)


def _parent_array(parent_of: Mapping[str, str | None], order: list[str]) -> tuple[np.ndarray, int]:
    """Parent id of every node (-1 for the root) and the root, which must be unique."""
    index = {lab: i for i, lab in enumerate(order)}
    parent = np.full(len(order), -1, dtype=np.int64)
    for lab, par in parent_of.items():
        if par is not None:
            parent[index[lab]] = index[par]
    roots = np.flatnonzero(parent < 0)
    if roots.size != 1:
        raise InputError(
            f"taxonomy must have exactly one root, found {roots.size}",
            node=order[int(roots[0])] if roots.size else None,
        )
    return parent, int(roots[0])


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of every node, by walking parents level by level (vectorized)."""
    depth = np.zeros(parent.size, dtype=np.int64)
    cur = parent.copy()
    steps = 0
    while (cur >= 0).any():
        depth += cur >= 0
        cur = np.where(cur >= 0, parent[np.maximum(cur, 0)], -1)
        steps += 1
        if steps > parent.size:
            raise InputError("taxonomy has a cycle")
    return depth


def _ancestor_table(count: int, parent: np.ndarray, depth: np.ndarray, height: int) -> np.ndarray:
    """``table[i, d]``: the ancestor at depth ``d`` of node ``i`` (itself below its depth)."""
    ids = np.arange(count)
    table = np.empty((count, height + 1), dtype=np.int64)
    table[:, :] = ids[:, None]
    node = ids.copy()
    for _ in range(height + 1):
        table[ids, depth[node]] = node
        node = np.where(parent[node] >= 0, parent[node], node)
    return table


def _integer_items(domain: np.ndarray) -> bool:
    """Whether every item is an integer (not a bool): ids that aligned blocks can group."""
    values = np.asarray(domain)
    if values.dtype.kind in "iu":
        return True
    return values.dtype == object and all(
        isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)
        for v in values.tolist()
    )


def _aligned_blocks(domain: np.ndarray, fanout: int) -> dict[str, str | None]:
    """``parent_of`` of a tree over integer items whose internal nodes are the aligned id
    blocks ``[j * w, (j + 1) * w - 1]``, ``w = fanout ** level``, holding at least two
    children; the root takes the nodes of the first level that falls in one block.

    Examples
    --------
    >>> tree = _aligned_blocks(np.array([0, 1, 2, 9]), 5)
    >>> tree["0"], tree["0..4"], tree["9"]
    ('0..4', '*', '*')
    """
    ids = [int(v) for v in np.asarray(domain).tolist()]
    parent_of: dict[str, str | None] = {}
    nodes = sorted((v, str(v)) for v in ids)  # (lowest id of the node's block, label)
    width = 1
    while len(nodes) > 1:
        wide = width * fanout
        groups: dict[int, list[tuple[int, str]]] = {}
        for low, label in nodes:
            groups.setdefault(low // wide, []).append((low, label))
        if len(groups) == 1:  # one block would hold every node: the root does
            break
        nodes = []
        for block, members in sorted(groups.items()):
            if len(members) == 1:  # a node of one child adds nothing: the child goes up
                nodes.append(members[0])
                continue
            label = f"{block * wide}..{block * wide + wide - 1}"
            for _, child in members:
                parent_of[child] = label
            nodes.append((block * wide, label))
        width = wide
    for _, label in nodes:
        parent_of[label] = ROOT
    parent_of[ROOT] = None
    return parent_of


def _item_order(domain: np.ndarray, counts: np.ndarray | None, order: str) -> np.ndarray:
    """Leaf order of a balanced tree: by id, or by decreasing frequency."""
    n = int(domain.size)
    if order == "frequency":
        if counts is None:
            raise InputError("frequency order needs item counts")
        return np.lexsort((np.arange(n), -np.asarray(counts)))
    return np.arange(n)


def _group_bounds(n: int, fanout: int) -> list[int]:
    """Start of every group of ``fanout`` nodes (a lone last node joins the previous group)."""
    bounds = list(range(0, n, fanout))
    if n - bounds[-1] == 1 and len(bounds) > 1:
        bounds.pop()
    bounds.append(n)
    return bounds


def _next_level(
    level: list[str],
    span: list[tuple[str, str]],
    bounds: list[int],
    depth_no: int,
    order: str,
    taken: set[str],
    parent_of: dict[str, str | None],
) -> tuple[list[str], list[tuple[str, str]]]:
    """One level of a balanced tree: a parent per group, labelled by its item range."""
    new_level, new_span = [], []
    for g in range(len(bounds) - 1):
        lo, hi = bounds[g], bounds[g + 1]
        first, last = span[lo][0], span[hi - 1][1]
        label = f"g{depth_no}.{g}"  # naming the group's first and last item would leak them
        if label in taken:
            label = f"{label}#{depth_no}"
        taken.add(label)
        for child in level[lo:hi]:
            parent_of[child] = label
        new_level.append(label)
        new_span.append((first, last))
    return new_level, new_span


def _decoded(path: Path) -> str:
    """The taxonomy file as UTF-8 text; an InputError naming the file and line otherwise."""
    lines = []
    for number, text in text_lines(path, "utf-8", name="taxonomy file"):
        if "\x00" in text:
            raise InputError(
                "the taxonomy file holds NUL bytes: it looks binary, not text",
                path=str(path),
                line=number,
            )
        lines.append(text.removeprefix("\ufeff") if number == 1 else text)
    return "\n".join(lines)


def _load_hierarchy(spec: Any) -> Hierarchy:
    if isinstance(spec, Hierarchy):
        return spec
    if isinstance(spec, Mapping):
        return Hierarchy.from_dict(spec, root=ROOT)
    if isinstance(spec, Sequence) and not isinstance(spec, (str, bytes)):
        return Hierarchy.from_rows(spec)
    if not isinstance(spec, (str, os.PathLike)):
        raise InputError(
            "parameter 'hierarchy' must be a Hierarchy, a nested dict, rows, or "
            "the path of a .json or ARX .csv taxonomy",
            value=repr(spec)[:60],
        )
    path = Path(spec)
    if not path.exists():
        raise InputError("taxonomy file not found", path=str(path))
    if path.is_dir():
        raise InputError("taxonomy path is a directory, not a file", path=str(path))
    text = _decoded(path)
    if path.suffix.lower() == ".json":
        try:
            tree = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"taxonomy is not valid JSON: {exc.msg}", path=str(path), line=exc.lineno
            ) from None
        if not isinstance(tree, Mapping):
            raise InputError("JSON taxonomy must be a nested object", path=str(path))
        if len(tree) == 1 and next(iter(tree)) == ROOT:
            tree = tree[ROOT]
        return Hierarchy.from_dict(tree, root=ROOT)
    return Hierarchy.from_csv(path, sep=";" if path.suffix.lower() != ".tsv" else "\t")


def resolve_taxonomy(
    hierarchy: Any,
    domain: np.ndarray,
    counts: np.ndarray,
    fanout: int | None = None,
    order: str = "id",
) -> Taxonomy:
    """Bind a taxonomy (Hierarchy, nested dict, rows, .json/.csv path, or None) to the data."""
    if isinstance(hierarchy, Taxonomy):
        return hierarchy
    if hierarchy is None:
        return Taxonomy.balanced(domain, 5 if fanout is None else fanout, counts, order)
    if fanout is not None:
        raise InputError("give either a hierarchy or a fanout, not both", value=fanout)
    loaded = _load_hierarchy(hierarchy)
    try:
        return Taxonomy.from_hierarchy(loaded, domain)
    except InputError as exc:
        if not isinstance(hierarchy, (str, Path)) or exc.path is not None:
            raise
        raise InputError(  # an item the data holds and the taxonomy file lacks: name the file
            exc.message, path=str(hierarchy), value=exc.value, column=exc.column, row=exc.row
        ) from None
