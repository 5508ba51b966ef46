"""Mondrian on a Dask DataFrame, in the spirit of Airbnb's Core Mondrian.

The top of the Mondrian tree is cut from Dask aggregates with the in-memory Mondrian's
own rule: one pass over the partitions counts, for every node still above ``max_rows``
records, the values of every quasi-identifier (codes over the whole table's values, as
the in-memory run encodes them); from those counts the in-memory ``_Cutter`` ranks the
QIs (NCP gain, or width normalized by the whole table's spans), finds each QI's weighted
median or hierarchy children, pools failing children, and keeps the first cut whose parts
pass k-anonymity, exactly as it does in memory.  So every node cut on Dask is a node of
the in-memory run, and when the nodes fit in memory the rows are shuffled by node and
the in-memory :func:`tabular._mondrian.mondrian_classes` runs on each, from that node
on: the release is the in-memory Mondrian's release, row for row (classes are a function
of the QI tuple, and classes that publish the same values are one class either way).
The one step that needs whole QI tuples rather than counts per QI, lending records to a
remainder pool (``relaxed``, hierarchies), takes one more pass: the QI tuples of the donor
child, lightest first as in memory, for every such node of the level at once.  A node is
left whole to the in-memory run only where its pooling does not settle or its QI tuples
do not fit one int64 key (``info["leaves_cut_in_memory_only"]``): the same subtree still.

Verification reads the output alone: the published QI tuples are recounted across every
partition (a Dask groupby), and every class must hold ``>= k`` records.

References
----------
K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian Multidimensional K-Anonymity.
ICDE 2006.  Airbnb Engineering, "Core Mondrian: scaling k-anonymity" (Spark), 2021.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from structanon import CheckResult, Release
from structanon._engine import compute
from structanon._finish import Timings, finish_release
from structanon._validation import check_choice, check_int
from structanon.errors import InfeasibleError, InputError
from structanon.hierarchy import Hierarchy
from structanon.io import content_digest, release_key
from structanon.models import KAnonymity, PrivacyModel

from ._input import hierarchy_codes
from ._mondrian import _Cutter, _Dimension, encode_column, hierarchy_dimension, mondrian_classes
from ._sets import is_set_spec, value_label
from .metrics import _penalties

__all__ = ["mondrian_dask", "DEFAULT_MAX_ROWS"]

DEFAULT_MAX_ROWS = 1_000_000
_LEAF = "__leaf__"


@dataclass
class _Cut:
    """Node ``node`` cut along QI ``dim``: a row of code ``c`` goes to ``children[slot[c]]``."""

    node: int
    dim: int
    slot: np.ndarray
    children: np.ndarray
    lent: np.ndarray | None = None  # QI tuples (keys) lent to the pool, whatever their code
    lent_slot: int = 0


@dataclass
class _Tree:
    """The top of the Mondrian tree: the QIs' table-wide encodings and the cuts made."""

    names: list[str]
    specs: list[Hierarchy | str]
    domains: list[Any]  # numeric: sorted float values; value set: pd.Index; hierarchy: None
    n_codes: list[int] = field(default_factory=list)
    cuts: list[_Cut] = field(default_factory=list)
    n_nodes: int = 1

    def codes(self, pdf: pd.DataFrame, j: int) -> np.ndarray:
        """Table-wide codes of QI ``j`` in one partition (rank among the table's values,
        or hierarchy leaf code), as the in-memory Mondrian encodes the whole table."""
        column, domain, spec = pdf[self.names[j]], self.domains[j], self.specs[j]
        if isinstance(spec, Hierarchy):
            return hierarchy_codes(column, spec, self.names[j])
        if isinstance(domain, pd.Index):
            return np.asarray(domain.get_indexer(pd.Index(column)), dtype=np.int64)
        values = pd.to_numeric(column, errors="coerce").to_numpy(float)
        return np.searchsorted(domain, values).astype(np.int64)

    def tuple_keys(self, codes: Sequence[np.ndarray]) -> np.ndarray:
        """One int64 per QI tuple, in the lexicographic order of the codes (the order of
        the in-memory Mondrian's distinct tuples)."""
        key = np.zeros(codes[0].size, dtype=np.int64)
        for size, c in zip(self.n_codes, codes):
            key = key * size + c
        return key

    def leaves(self, pdf: pd.DataFrame, codes: dict[int, np.ndarray] | None = None) -> np.ndarray:
        node = np.zeros(len(pdf), dtype=np.int64)
        codes = {} if codes is None else codes
        for cut in self.cuts:
            needed = range(len(self.names)) if cut.lent is not None else [cut.dim]
            for j in needed:
                if j not in codes:
                    codes[j] = self.codes(pdf, j)
            mask = node == cut.node
            new = cut.children[cut.slot[codes[cut.dim][mask]]]
            if cut.lent is not None:
                keys = self.tuple_keys([codes[j][mask] for j in range(len(self.names))])
                new[np.isin(keys, cut.lent)] = cut.children[cut.lent_slot]
            node[mask] = new
        return node


def _column_counts(pdf: pd.DataFrame, columns: list[str]) -> dict[str, pd.Series]:
    return {c: pdf[c].value_counts(dropna=False) for c in columns}


def _level_counts(
    pdf: pd.DataFrame, tree: _Tree, open_nodes: np.ndarray, n_codes: list[int]
) -> tuple:
    """Per open node and QI: the codes present and their record counts; every node's size."""
    codes: dict[int, np.ndarray] = {}
    node = tree.leaves(pdf, codes)
    sizes = np.bincount(node, minlength=tree.n_nodes)
    index = np.full(tree.n_nodes, -1, dtype=np.int64)
    index[open_nodes] = np.arange(open_nodes.size)
    slot = index[node]
    keep = slot >= 0
    slot = slot[keep]
    out = []
    for j, size in enumerate(n_codes):
        if j not in codes:
            codes[j] = tree.codes(pdf, j)
        key = slot * size + codes[j][keep]
        if open_nodes.size * size <= 1 << 22:  # a dense count is cheaper than a sort
            count = np.bincount(key, minlength=open_nodes.size * size)
            uniq = np.flatnonzero(count)
            out.append((uniq, count[uniq]))
        else:
            out.append(np.unique(key, return_counts=True))
    return out, sizes


def _donor_tuples(pdf: pd.DataFrame, tree: _Tree, requests: list[tuple]) -> list[tuple]:
    """Per request ``(node, dim, codes of the donor child)``: the QI tuples (keys) of the
    node's records in that child, with their counts."""
    codes: dict[int, np.ndarray] = {}
    node = tree.leaves(pdf, codes)
    for j in range(len(tree.names)):
        if j not in codes:
            codes[j] = tree.codes(pdf, j)
    keys = tree.tuple_keys([codes[j] for j in range(len(tree.names))])
    out = []
    for p, j, donor in requests:
        mask = (node == p) & donor[codes[j]]
        out.append(np.unique(keys[mask], return_counts=True))
    return out


def _sum_counts(parts: list[list[tuple[np.ndarray, np.ndarray]]], d: int) -> list[tuple]:
    out = []
    for j in range(d):
        keys = np.concatenate([p[j][0] for p in parts])
        counts = np.concatenate([p[j][1] for p in parts])
        uniq, inverse = np.unique(keys, return_inverse=True)
        out.append((uniq, np.bincount(inverse.reshape(-1), weights=counts)))
    return out


def _domains(
    ddf: Any, qis: Mapping[str, Hierarchy | str], digests: list[bytes] | None = None
) -> tuple[list[Any], list, int]:
    """One pass: every QI's values and counts over the table (the root node's marginals).
    Given a list ``digests``, the same pass appends each partition's content digest to it
    (what a given key binds the publication streams to)."""
    import dask

    names = list(qis)
    delayed = ddf.to_delayed()
    tasks = [dask.delayed(_column_counts)(p, names) for p in delayed]
    if digests is not None:
        tasks += [dask.delayed(content_digest)(p) for p in delayed]
    found = compute(*tasks)
    parts = found[: len(delayed)]
    if digests is not None:
        digests.extend(found[len(delayed) :])
    domains: list[Any] = []
    counts = []
    n = 0
    for c, spec in qis.items():
        vc = pd.concat([p[c] for p in parts]).groupby(level=0, dropna=False, observed=False).sum()
        n = int(vc.sum())
        values = vc.index.to_series(index=range(len(vc)))
        if isinstance(spec, Hierarchy):
            if values.isna().any():
                raise InputError("missing value", column=c)
            codes = spec.encode(np.asarray(values, dtype=object), column=c)
            domains.append(None)
        elif spec == "numeric":
            numbers = pd.to_numeric(values, errors="coerce").to_numpy(float)
            bad = np.flatnonzero(~np.isfinite(numbers))
            if bad.size:
                raise InputError(
                    "numeric quasi-identifier holds a missing, infinite or non-numeric value",
                    column=c,
                    value=values.iloc[int(bad[0])],
                )
            codes, domain = encode_column(numbers, c)
            domains.append(np.asarray(domain, dtype=float))
        else:
            if values.isna().any():
                raise InputError("missing value", column=c)
            codes, domain = encode_column(values, c)
            domains.append(pd.Index(domain))
        order = np.argsort(codes, kind="stable")
        uniq, inverse = np.unique(np.asarray(codes)[order], return_inverse=True)
        weights = np.bincount(inverse.reshape(-1), weights=vc.to_numpy(float)[order])
        counts.append((uniq.astype(np.int64), weights))
    return domains, counts, n


class _TopCutter:
    """Mondrian's own cut rule (``_Cutter``) applied to per-node marginal counts.

    At a node, the in-memory Mondrian ranks the QIs by NCP gain (or normalized width)
    computed from each QI's values and counts alone, cuts a numeric or value-set QI at its
    weighted median and a hierarchical one into the children of the common ancestor, and
    keeps the first cut whose parts pass the models.  All of that is a function of the
    node's marginal counts, and the same ``_Cutter`` methods compute it here, so the nodes
    cut on Dask are the in-memory run's own nodes.  Lending records to a remainder pool
    (``relaxed``) needs the donor child's QI tuples: :meth:`decide` then asks for them
    (``"need"``) and decides once they are fetched.
    """

    def __init__(self, tree: _Tree, models: Sequence[PrivacyModel], options: Mapping[str, Any]):
        dims = []
        for name, spec, domain in zip(tree.names, tree.specs, tree.domains):
            empty = np.zeros(0, dtype=np.int64)
            if isinstance(spec, Hierarchy):
                dims.append(hierarchy_dimension(name, spec, empty))
            elif isinstance(domain, pd.Index):
                names = np.array([value_label(v) for v in domain.tolist()], dtype=object)
                values = np.arange(len(domain), dtype=float)
                dims.append(_Dimension(name, True, empty, values=values, ordinal=names))
            else:
                dims.append(_Dimension(name, True, empty, values=domain))
        self.dims = dims
        self.cutter = _Cutter(
            dims,
            np.zeros((0, len(dims)), dtype=np.int64),
            np.zeros(0),
            (np.zeros(0, np.int64),) * 3,
            None,
            None,
            list(models),
            remainder=options.get("remainder", True),
            criterion=options.get("criterion", "gain"),
            relaxed=options.get("relaxed", True),
        )
        self.radix = max([2] + [d.n_leaves for d in dims if not d.numeric]) + 1
        self.n_codes = [d.n_codes for d in dims]
        # lending needs QI tuples as one int64 key each
        self.can_lend = float(np.prod(np.array(self.n_codes, dtype=float))) < 2.0**62

    def prepare(self, counts: list[tuple[np.ndarray, np.ndarray]], n_nodes: int) -> None:
        """The candidate cuts of every open node of a level (``_Cutter._candidates``)."""
        c = self.cutter
        d = len(self.dims)
        widths, scores = np.zeros((n_nodes, d)), np.zeros((n_nodes, d))
        self.items = []
        for j, (dim, (keys, w)) in enumerate(zip(self.dims, counts)):
            size = dim.n_codes
            part, code = keys // size, keys % size
            starts = np.flatnonzero(np.r_[True, part[1:] != part[:-1]])
            part_weight = np.add.reduceat(w, starts)
            cut = c._numeric_cut if dim.numeric else c._categorical_cut
            widths[:, j], gains, side = cut(j, dim, code, part, starts, n_nodes, w, part_weight)
            scores[:, j] = gains if c.criterion == "gain" else widths[:, j]
            self.items.append((part, code, w, side))
        self.widths = widths
        self.rank = np.argsort(-scores, axis=1, kind="stable")  # ties: QI order, as in memory
        self.lent: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}

    def decide(self, p: int) -> Any:
        """Node ``p`` of the level: ``None`` (no allowed cut: one class), ``"memory"`` (run
        it whole in memory), ``("need", p, dim, child, codes)`` (the QI tuples of a donor
        child are needed first) or ``(dim, slot over the QI's codes, parts, lent, slot)``."""
        for j in self.rank[p]:
            if not self.widths[p, j] > 0:
                break
            part, code, w, side = self.items[j]
            mine = part == p
            result = self._try(p, j, code[mine], w[mine], side[mine])
            if result is not None:
                return result
        return None

    def _lend(self, key: tuple[int, int, int], need: float, donor_weight: float) -> tuple:
        """``_Cutter._borrow`` for one pool: the donor's lightest QI tuples (ties in tuple
        order) until the pool holds ``need`` more records, if the donor keeps
        ``min_size``; returns their keys and record counts (empty when it cannot lend)."""
        keys, w = self.lent[key]
        order = np.lexsort((keys, w))
        cum = np.cumsum(w[order])
        take = order[cum - w[order] < need]
        if donor_weight - w[take].sum() < self.cutter.min_size:
            take = take[:0]
        return keys[take], w[take]

    def _donor(self, weight: np.ndarray, pooled: np.ndarray, ok: np.ndarray) -> int:
        """The passing child that lends to the pool (the largest), or -1 when none can."""
        candidate = np.flatnonzero(~pooled & ok)
        if not candidate.size:
            return -1
        donor = int(candidate[np.argsort(-weight[candidate], kind="stable")[0]])
        deficit = self.cutter.min_size - weight[pooled].sum()
        feasible = deficit > 0 and weight[donor] - deficit >= self.cutter.min_size
        return donor if feasible else -1

    def _split(self, j: int, items: tuple, lent: tuple, child: int, pool: int) -> tuple:
        """The donor's items give their lent records to new items of the pool."""
        code, w, sub = items
        size = self.dims[j].n_codes
        stride = int(np.prod(np.array(self.n_codes[j + 1 :], dtype=np.int64)))
        moved = np.bincount((lent[0] // stride) % size, weights=lent[1], minlength=size)
        w = np.where(sub == child, w - moved[code], w)
        extra = np.flatnonzero(moved > 0)
        return (
            np.r_[code, extra],
            np.r_[w, moved[extra]],
            np.r_[sub, np.full(extra.size, pool, dtype=np.int64)],
        )

    def _groups(self, sub: np.ndarray, w: np.ndarray) -> tuple:
        uniq, inverse = np.unique(sub, return_inverse=True)
        inverse = inverse.reshape(-1)
        weight = np.bincount(inverse, weights=w, minlength=uniq.size)
        ok = np.ones(uniq.size, dtype=bool)
        for model in self.cutter.models:
            ok &= np.asarray(model.group_ok(weight), bool)
        return uniq, inverse, weight, ok

    def _borrow(self, p: int, j: int, items: tuple, groups: tuple) -> Any:
        """The lending step of one pooling round: ``None`` (no donor), ``"memory"``, a
        request for the donor's QI tuples, or ``(items, lent)`` after lending."""
        uniq, weight, pooled, ok = groups
        donor = self._donor(weight, pooled, ok)
        if donor < 0:
            return None
        if not self.can_lend:
            return "memory"
        key = (p, j, int(uniq[donor]))
        if key not in self.lent:
            codes = np.zeros(self.dims[j].n_codes, dtype=bool)
            codes[items[0][items[2] == key[2]]] = True
            return ("need", key, codes)
        lent = self._lend(key, self.cutter.min_size - weight[pooled].sum(), weight[donor])
        if not lent[0].size:
            return None
        return self._split(j, items, lent, key[2], self.radix - 1), lent

    def _try(self, p: int, j: int, code: np.ndarray, w: np.ndarray, side: np.ndarray) -> Any:
        """``_Cutter._try_cuts`` for one node from its marginal counts (and, to lend, the
        donor child's QI tuples)."""
        c = self.cutter
        pool = self.radix - 1
        n_codes = code.size  # the first items are the node's codes; lent records follow
        items = (code, w, side.astype(np.int64))
        lent: tuple | None = None
        settled = not c.remainder
        for _ in range(c.max_pooling + 1):
            uniq, inverse, weight, ok = self._groups(items[2], items[1])
            if not c.remainder:
                break
            pooled = uniq == pool
            move = (not self.dims[j].numeric) & ~pooled & ~ok
            needy = bool((pooled & ~ok).any()) and not move.any()
            lends = None
            if c.relaxed and needy and lent is None:
                lends = self._borrow(p, j, items, (uniq, weight, pooled, ok))
                if (
                    lends is not None
                    and not isinstance(lends, tuple)
                    or (isinstance(lends, tuple) and lends[0] == "need")
                ):
                    return lends  # "memory", or the donor's tuples are needed first
            if lends is not None:
                (items, lent), needy = lends, False
            if needy and (candidate := np.flatnonzero(~pooled & ok)).size:
                move[candidate[np.argsort(weight[candidate], kind="stable")[0]]] = True
            if not move.any() and lends is None:
                settled = True
                break
            items = (items[0], items[1], np.where(np.isin(items[2], uniq[move]), pool, items[2]))
        if not settled:
            return "memory"
        if uniq.size < 2 or not ok.all():
            return None
        slot = np.zeros(self.dims[j].n_codes, dtype=np.int64)
        slot[items[0][:n_codes]] = inverse[:n_codes]
        if lent is None:
            return (j, slot, int(uniq.size), None, 0)
        return (j, slot, int(uniq.size), lent[0], int(np.flatnonzero(uniq == pool)[0]))


def _top_cuts(ddf: Any, tree: _Tree, top: _TopCutter, root: list, max_rows: int, n: int):
    """Cut the nodes above ``max_rows`` with Mondrian's own rule, one Dask pass per level
    (and one more where a remainder pool borrows QI tuples)."""
    import dask

    parts = ddf.to_delayed()
    sizes = np.array([n])
    counts, open_nodes = root, np.array([0]) if n > max_rows else np.zeros(0, np.int64)
    memory = 0
    while open_nodes.size:
        top.prepare(counts, open_nodes.size)
        pending = list(range(open_nodes.size))
        while pending:
            needs = []
            for p in pending:
                decision = top.decide(p)
                if decision == "memory":
                    memory += 1
                elif isinstance(decision, tuple) and decision[0] == "need":
                    needs.append(decision)
                elif decision is not None:
                    j, slot, n_parts, lent, lent_slot = decision
                    children = np.arange(tree.n_nodes, tree.n_nodes + n_parts)
                    tree.cuts.append(_Cut(int(open_nodes[p]), j, slot, children, lent, lent_slot))
                    tree.n_nodes += n_parts
            if needs:  # the donor children's QI tuples, for every such node in one pass
                requests = [(int(open_nodes[key[0]]), key[1], codes) for _, key, codes in needs]
                got = compute(*[dask.delayed(_donor_tuples)(q, tree, requests) for q in parts])
                for i, (_, key, _) in enumerate(needs):
                    keys = np.concatenate([g[i][0] for g in got])
                    uniq, inverse = np.unique(keys, return_inverse=True)
                    counts_i = np.concatenate([g[i][1] for g in got]).astype(float)
                    top.lent[key] = (uniq, np.bincount(inverse.reshape(-1), weights=counts_i))
            pending = [key[0] for _, key, _ in needs]
        new = np.arange(int(sizes.size), tree.n_nodes)
        if not new.size:
            break
        n_codes = [dim.n_codes for dim in top.dims]
        results = compute(*[dask.delayed(_level_counts)(q, tree, new, n_codes) for q in parts])
        sizes = np.sum([r[1] for r in results], axis=0)
        big = new[sizes[new] > max_rows]
        counts = _select(_sum_counts([r[0] for r in results], len(n_codes)), new, big, top)
        open_nodes = big
    return sizes, memory


def _select(counts: list, new: np.ndarray, big: np.ndarray, top: _TopCutter) -> list:
    """Keep the counts of the nodes in ``big`` (renumbered 0..) out of those of ``new``."""
    keep = np.isin(new, big)
    renumber = np.cumsum(keep) - 1
    out = []
    for dim, (keys, w) in zip(top.dims, counts):
        size = dim.n_codes
        slot, code = keys // size, keys % size
        mask = keep[slot]
        out.append((renumber[slot[mask]] * size + code[mask], w[mask]))
    return out


def _leaf_mondrian(
    group: pd.DataFrame,
    qis: Mapping[str, Hierarchy | str],
    sensitive: str | None,
    models: Sequence[PrivacyModel],
    options: Mapping[str, Any],
) -> pd.DataFrame:
    rows = group.drop(columns=_LEAF, errors="ignore")
    if rows.empty:
        return rows.astype({c: object for c in qis})
    labels, values = mondrian_classes(rows, qis, sensitive, models, **options)
    out = rows.copy(deep=False)
    for column in qis:
        out[column] = np.asarray(values[column][labels]).astype(str).astype(object)
    # a deterministic order (the rows may arrive in any order), shuffled later
    return out.sort_values(list(out.columns), kind="stable").reset_index(drop=True)


def _shuffled(
    pdf: pd.DataFrame, seeds: np.ndarray, bind: bool = False, partition_info: Any = None
) -> pd.DataFrame:
    """One output partition in the secret order of its stream ``seeds[number]``; with
    ``bind`` (a given key), the stream also depends on the partition's rows, so releases of
    different tables under one key are shuffled independently (``Pseudonymizer.bound``)."""
    number = 0 if partition_info is None else int(partition_info["number"])
    entropy = [int(seeds[number])]
    if bind:
        entropy += np.frombuffer(content_digest(pdf), dtype=np.uint32).tolist()
    order = np.random.default_rng(entropy).permutation(len(pdf))
    return pdf.iloc[order].reset_index(drop=True)


def _class_counts(
    pdf: pd.DataFrame, qis: Mapping[str, Hierarchy | str], reference: dict | None
) -> tuple[pd.Series, float]:
    """One partition's published classes with their sizes, and (with ``reference``, the
    original values of the non-hierarchical QIs) its records' summed certainty penalty."""
    counts = pdf.groupby(list(qis), sort=False, dropna=False).size()
    penalty = 0.0
    if reference is not None and len(counts):
        for j, (c, spec) in enumerate(qis.items()):
            per_value = counts.groupby(level=j).sum()  # a cell's penalty depends on its label
            labels = pd.Series(per_value.index.to_numpy(), name=c)
            values = _penalties(labels, spec, reference.get(c))[0]
            penalty += float(np.dot(values, per_value.to_numpy(float)))
    return counts, penalty


def _verify(
    data: Any,
    qis: Mapping[str, Hierarchy | str],
    k: int,
    reference: dict | None = None,
    stash: dict | None = None,
) -> list[CheckResult]:
    """Recount every published class across all partitions: >= k records each.

    With ``reference`` the same pass sums the certainty penalties (GCP) into ``stash``."""
    import dask

    parts = data.to_delayed()
    results = compute(*[dask.delayed(_class_counts)(p, qis, reference) for p in parts])
    per_part = pd.concat([r[0] for r in results])
    if stash is not None:
        stash[id(data)] = float(sum(r[1] for r in results))
    levels = list(range(len(qis)))
    sizes = per_part.groupby(level=levels).sum().to_numpy() if len(per_part) else per_part
    sizes = np.asarray(sizes)
    bad = np.flatnonzero(sizes < k)
    return [
        CheckResult(
            model=f"records per published class >= {k}",
            passed=bad.size == 0,
            worst=float(sizes.min()) if sizes.size else float("nan"),
            threshold=float(k),
            n_groups=int(sizes.size),
            failing_groups=bad[:100],
        )
    ]


def mondrian_dask(
    ddf: Any,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    sensitive: str | None = None,
    models: Sequence[PrivacyModel] = (),
    seed: int | None = 0,
    *,
    key: Any = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    measures: bool = True,
    mondrian_options: Mapping[str, Any] | None = None,
) -> Release:
    """Mondrian k-anonymity of a Dask DataFrame (see the module docstring).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    quasi_identifiers : dict
        As for :func:`tabular.anonymize`; the top-level cuts use the ``"numeric"`` QIs
        (at least one is needed), the others are generalized inside each leaf.
    sensitive : str, optional
    models : sequence of PrivacyModel
        k-anonymity models only (the top-level cuts keep ``k`` on both sides; other
        models need the in-memory path).
    seed : int, optional
        Public; recorded (the partitioning is deterministic).
    key : optional
        Secret key (:func:`structanon.io.release_key`): it draws the publication order
        (which leaves share an output partition, their order, and a permutation of each
        partition's rows); the same key, seed and input give the same order.
    max_rows : int
        Records a leaf may hold before the in-memory Mondrian takes over.
    measures : bool
        Compute the GCP (one more pass).
    mondrian_options : dict, optional
        ``criterion``, ``relaxed``, ``remainder`` of :func:`tabular._mondrian.mondrian`.

    Returns
    -------
    Release
        ``data``: a lazy Dask DataFrame, one partition per group of leaves (grouped and
        ordered by secret leaf numbers), each partition's rows in a secret random order;
        ``utility["gcp"]``.
    """
    max_rows = check_int(max_rows, "max_rows", min_value=2)
    ks = [m for m in models if isinstance(m, KAnonymity)]
    if not ks or len(ks) != len(models):
        raise InputError(
            "the Dask engine of Mondrian takes k-anonymity models only; other models "
            "(l-diversity, t-closeness) need the in-memory engine"
        )
    k = max(int(m.k) for m in ks)
    qis = dict(quasi_identifiers)
    missing = [c for c in qis if c not in ddf.columns]
    if missing:
        raise InputError("quasi-identifier not in the table", column=missing[0])
    for c, spec in qis.items():
        if not (isinstance(spec, Hierarchy) or spec == "numeric" or is_set_spec(spec)):
            raise InputError(
                f"quasi-identifier spec must be a Hierarchy, 'numeric' or 'set', got {spec!r}",
                column=c,
            )
    options: dict[str, Any] = dict(mondrian_options or {})
    check_choice(options.get("criterion", "gain"), "criterion", ("width", "gain"))
    secret = release_key(key)
    timings = Timings()
    with timings("top_cuts"):
        digests: list[bytes] | None = [] if secret.reproducible else None
        domains, root, n = _domains(ddf, qis, digests)
        if n < k:
            raise InfeasibleError(f"k={k} exceeds the number of records ({n})")
        tree = _Tree(list(qis), list(qis.values()), domains)
        top = _TopCutter(tree, models, options)
        tree.n_codes = top.n_codes
        sizes, in_memory = _top_cuts(ddf, tree, top, root, max_rows, n)
        # the leaf order depends on every row of this table, not on the key alone
        secret = secret.bound(digests or [], np.asarray(sizes), n)
    with timings("leaves"):
        options["width_scale"] = dict(zip(tree.names, top.cutter.width_scale))
        meta_in = ddf._meta.assign(**{_LEAF: np.int64(0)})
        meta = _leaf_mondrian(meta_in, qis, sensitive, models, options)
        public = repr((n, k, max_rows, sorted(tree.names), sorted(options.items())))
        # leaves numbered in a secret order: it decides which leaves share an output
        # partition and their order in it, so neither follows the QI values
        secret_ids = secret.rng("leaf-order", seed, public).permutation(tree.n_nodes)
        with_leaf = ddf.map_partitions(
            lambda p: p.assign(**{_LEAF: secret_ids[tree.leaves(p)]}), meta=meta_in
        )
        data = with_leaf.groupby(_LEAF).apply(
            _leaf_mondrian,
            qis,
            sensitive,
            list(models),
            options,
            meta=meta,
            include_groups=False,
        )
        data = data.reset_index(drop=True)
        # each output partition shuffled by its own secret stream (drawn here, so the
        # key never leaves the client); the rows it gets are in a deterministic order
        seeds = secret.rng("row-order", seed, public).integers(
            0, 2**63 - 1, size=data.npartitions, dtype=np.int64
        )
        data = data.map_partitions(_shuffled, seeds, secret.reproducible, meta=meta)
    # the original values of the non-hierarchical QIs (for the GCP), from the first pass
    reference = None
    if measures:
        reference = {
            c: pd.Series(domain if isinstance(domain, np.ndarray) else domain.to_numpy(), name=c)
            for c, domain in zip(tree.names, tree.domains)
            if domain is not None
        }
    stash: dict[int, float] = {}
    release = Release(
        data=data,
        datatype="tabular",
        verifier=lambda d: _verify(d, qis, k, reference, stash),
        models=list(models),
        partition=None,
        parameters={
            "algorithm": "mondrian",
            "engine": "dask",
            "k": k,
            "max_rows": max_rows,
            "quasi_identifiers": {
                c: (s if isinstance(s, str) else "hierarchy") for c, s in qis.items()
            },
            "seed": seed,
            "mondrian": dict(mondrian_options or {}),
        },
        suppressed=0,
        n_individuals=n,
        info={
            "top_level_leaves": int((sizes > 0).sum()),
            "largest_leaf": int(sizes.max()),
            "leaves_cut_in_memory_only": in_memory,
            "pseudonym_key": secret.key_source,
            "warnings": [],
        },
    )

    def measure(rel: Release) -> None:
        if id(rel.data) not in stash:  # verified in the same pass, unless data changed
            _verify(rel.data, qis, k, reference, stash)
        rel.utility = {"gcp": stash[id(rel.data)] / (n * len(qis))}

    return finish_release(release, measure, measures=measures, timings=timings)
