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
from structanon.errors import InputError

__all__ = ["Taxonomy", "resolve_taxonomy"]

ROOT = "*"


class Taxonomy:
    """A rooted tree over items, bound to a data set's item domain.

    Node ids ``0 .. n_items - 1`` are the data's items in domain order; then come taxonomy
    leaves absent from the data, then internal nodes.  ``anc[leaf, d]`` is the leaf's
    ancestor at depth ``d`` (the leaf itself below its own depth).
    """

    def __init__(self, parent_of: Mapping[str, str | None], domain: np.ndarray,
                 source: str = "given") -> None:
        self.source = source
        self.domain = domain
        n_items = int(domain.size)
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
        order = item_keys + extra + internal
        index = {lab: i for i, lab in enumerate(order)}
        n_nodes = len(order)
        parent = np.full(n_nodes, -1, dtype=np.int64)
        for lab, par in parent_of.items():
            if par is not None:
                parent[index[lab]] = index[par]
        roots = np.flatnonzero(parent < 0)
        if roots.size != 1:
            raise InputError(f"taxonomy must have exactly one root, found {roots.size}",
                             node=order[int(roots[0])] if roots.size else None)
        self.n_items = n_items
        self.n_leaves = n_items + len(extra)
        self.n_nodes = n_nodes
        self.root = int(roots[0])
        self.parent = parent
        labels = np.empty(n_nodes, dtype=object)
        labels[:n_items] = domain
        labels[n_items:] = np.array(order[n_items:], dtype=object)
        self.labels = labels
        # depth by walking parents level by level (vectorized)
        depth = np.zeros(n_nodes, dtype=np.int64)
        cur = parent.copy()
        steps = 0
        while (cur >= 0).any():
            depth += cur >= 0
            cur = np.where(cur >= 0, parent[np.maximum(cur, 0)], -1)
            steps += 1
            if steps > n_nodes:
                raise InputError("taxonomy has a cycle")
        self.depth = depth
        self.height = int(depth[: self.n_leaves].max()) if self.n_leaves else 0
        anc = np.empty((self.n_leaves, self.height + 1), dtype=np.int64)
        leaf_ids = np.arange(self.n_leaves)
        anc[:, :] = leaf_ids[:, None]
        node = leaf_ids.copy()
        for _ in range(self.height + 1):
            d = depth[node]
            anc[leaf_ids, d] = node
            node = np.where(parent[node] >= 0, parent[node], node)
        self.anc = anc
        nanc = np.empty((n_nodes, self.height + 1), dtype=np.int64)
        all_ids = np.arange(n_nodes)
        nanc[:, :] = all_ids[:, None]
        node = all_ids.copy()
        for _ in range(self.height + 1):
            nanc[all_ids, depth[node]] = node
            node = np.where(parent[node] >= 0, parent[node], node)
        self.nanc = nanc
        size = np.zeros(n_nodes, dtype=np.int64)
        for d in range(self.height + 1):
            deep = depth[leaf_ids] >= d
            size += np.bincount(anc[deep, d], minlength=n_nodes)
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
    def balanced(cls, domain: np.ndarray, fanout: int, counts: np.ndarray | None = None,
                 order: str = "id") -> Taxonomy:
        """A balanced tree of the given fan-out over the items, by id or by frequency."""
        if isinstance(fanout, bool) or not isinstance(fanout, (int, np.integer)) or fanout < 2:
            raise InputError("fanout must be an integer >= 2", value=fanout)
        n = int(domain.size)
        if order == "frequency":
            if counts is None:
                raise InputError("frequency order needs item counts")
            perm = np.lexsort((np.arange(n), -np.asarray(counts)))
        elif order == "id":
            perm = np.arange(n)
        else:
            raise InputError("order must be 'id' or 'frequency'", value=order)
        names = [str(x) for x in domain.tolist()]
        taken = set(names)
        parent_of: dict[str, str | None] = {}
        level = [names[i] for i in perm]
        span = [(names[i], names[i]) for i in perm]
        depth_no = 0
        while len(level) > fanout:
            bounds = list(range(0, len(level), fanout))
            if len(level) - bounds[-1] == 1 and len(bounds) > 1:
                bounds.pop()
            bounds.append(len(level))
            if len(bounds) == 2:  # one group only: its node would be the root's single child
                break
            new_level, new_span = [], []
            depth_no += 1
            for g in range(len(bounds) - 1):
                lo, hi = bounds[g], bounds[g + 1]
                first, last = span[lo][0], span[hi - 1][1]
                label = f"{first}..{last}" if order == "id" else f"g{depth_no}.{g}"
                if label in taken:
                    label = f"{label}#{depth_no}"
                taken.add(label)
                for child in level[lo:hi]:
                    parent_of[child] = label
                new_level.append(label)
                new_span.append((first, last))
            level, span = new_level, new_span
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
        return {"source": self.source, "height": self.height, "leaves": self.n_leaves,
                "nodes": self.n_nodes}


def _decoded(path: Path) -> str:
    """The taxonomy file as UTF-8 text; an InputError naming the file and line otherwise."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the taxonomy file: {exc.strerror or exc}",
                         path=str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError("the taxonomy file is not UTF-8 text (is it binary?)", path=str(path),
                         line=raw[:exc.start].count(b"\n") + 1) from None
    if "\x00" in text:
        raise InputError("the taxonomy file holds NUL bytes: it looks binary, not text",
                         path=str(path), line=text[:text.index("\x00")].count("\n") + 1)
    return text


def _load_hierarchy(spec: Any) -> Hierarchy:
    if isinstance(spec, Hierarchy):
        return spec
    if isinstance(spec, Mapping):
        return Hierarchy.from_dict(spec, root=ROOT)
    if isinstance(spec, Sequence) and not isinstance(spec, (str, bytes)):
        return Hierarchy.from_rows(spec)
    if not isinstance(spec, (str, os.PathLike)):
        raise InputError("parameter 'hierarchy' must be a Hierarchy, a nested dict, rows, or "
                         "the path of a .json or ARX .csv taxonomy", value=repr(spec)[:60])
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
            raise InputError(f"taxonomy is not valid JSON: {exc.msg}", path=str(path),
                             line=exc.lineno) from None
        if not isinstance(tree, Mapping):
            raise InputError("JSON taxonomy must be a nested object", path=str(path))
        if len(tree) == 1 and next(iter(tree)) == ROOT:
            tree = tree[ROOT]
        return Hierarchy.from_dict(tree, root=ROOT)
    return Hierarchy.from_csv(path, sep=";" if path.suffix.lower() != ".tsv" else "\t")


def resolve_taxonomy(hierarchy: Any, domain: np.ndarray, counts: np.ndarray,
                     fanout: int | None = None, order: str = "id") -> Taxonomy:
    """Bind a taxonomy (Hierarchy, nested dict, rows, .json/.csv path, or None) to the data."""
    if isinstance(hierarchy, Taxonomy):
        return hierarchy
    if hierarchy is None:
        return Taxonomy.balanced(domain, 5 if fanout is None else fanout, counts, order)
    if fanout is not None:
        raise InputError("give either a hierarchy or a fanout, not both", value=fanout)
    return Taxonomy.from_hierarchy(_load_hierarchy(hierarchy), domain)
