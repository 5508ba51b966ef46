"""Mondrian on a Dask DataFrame, in the spirit of Airbnb's Core Mondrian.

The top of the Mondrian tree is cut from Dask aggregates: while a leaf holds more than
``max_rows`` records, one pass over the partitions counts the values of every numeric
quasi-identifier per oversized leaf, and each such leaf is cut at the (lower) median of
its widest numeric QI (normalized by the table's range, LeFevre's criterion) when both
halves keep at least ``k`` records.  The leaves then fit in memory: the rows are shuffled
by leaf and the in-memory :func:`tabular._mondrian.mondrian` runs on every leaf.  A leaf's
numeric QIs lie in a box of its own (strict cuts), so the classes of different leaves
publish different values and the release is the union of the leaves' releases.

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
from structanon._validation import check_int
from structanon.errors import InfeasibleError, InputError
from structanon.hierarchy import Hierarchy
from structanon.io import release_key
from structanon.models import KAnonymity, PrivacyModel

from ._mondrian import mondrian_classes
from .metrics import _penalties

__all__ = ["mondrian_dask", "DEFAULT_MAX_ROWS"]

DEFAULT_MAX_ROWS = 1_000_000
_LEAF = "__leaf__"


@dataclass
class _Cut:
    leaf: int
    column: str
    value: float
    left: int
    right: int


@dataclass
class _Tree:
    cuts: list[_Cut] = field(default_factory=list)
    n_leaves: int = 1

    def leaves(self, pdf: pd.DataFrame) -> np.ndarray:
        leaf = np.zeros(len(pdf), dtype=np.int64)
        for cut in self.cuts:
            mask = leaf == cut.leaf
            values = pd.to_numeric(pdf[cut.column], errors="coerce").to_numpy(float)
            leaf[mask] = np.where(values[mask] <= cut.value, cut.left, cut.right)
        return leaf


def _value_counts(pdf: pd.DataFrame, tree: _Tree, columns: list[str], wanted: list[int]):
    leaf = tree.leaves(pdf)
    keep = np.isin(leaf, wanted)
    out = {}
    for column in columns:
        values = pd.to_numeric(pdf[column], errors="coerce").to_numpy(float)[keep]
        out[column] = pd.DataFrame({"leaf": leaf[keep], "v": values}).value_counts()
    return out, np.bincount(leaf, minlength=tree.n_leaves)


def _lower_median(counts: pd.Series) -> tuple[float, int, int]:
    """The lower median of a value-count Series and the records at or below / above it."""
    counts = counts.sort_index()
    cum = counts.cumsum().to_numpy()
    total = int(cum[-1])
    at = int(np.searchsorted(cum, (total + 1) // 2))
    value = float(counts.index[at])
    left = int(cum[at])
    if left == total and at > 0:  # the median is the largest value: cut below it
        value, left = float(counts.index[at - 1]), int(cum[at - 1])
    return value, left, total - left


def _table_scales(ddf: Any, qis: Mapping[str, Hierarchy | str], numeric: list[str]) -> dict:
    """The whole table's span of every numeric and value-set QI (Mondrian's widths are
    normalized by the table, not by a leaf)."""
    scales: dict[str, float] = {}
    others = [c for c, spec in qis.items() if isinstance(spec, str) and c not in numeric]
    stats = compute(
        *[ddf[c].astype(float).min() for c in numeric],
        *[ddf[c].astype(float).max() for c in numeric],
        *[ddf[c].nunique() for c in others],
    )
    for i, c in enumerate(numeric):
        span = float(stats[len(numeric) + i]) - float(stats[i])
        scales[c] = span if span > 0 else 1.0
    for i, c in enumerate(others):
        scales[c] = max(float(stats[2 * len(numeric) + i]) - 1.0, 1.0)
    return scales


def _top_cuts(ddf: Any, numeric: list[str], k: int, max_rows: int) -> tuple[_Tree, np.ndarray]:
    """Cut the oversized leaves from Dask aggregates until every leaf has <= max_rows."""
    import dask

    tree = _Tree()
    spans: dict[str, float] = {}
    parts = ddf.to_delayed()
    sizes = np.array([0])
    stuck: set[int] = set()
    while True:
        wanted = [i for i in range(tree.n_leaves) if i not in stuck]
        results = compute(*[dask.delayed(_value_counts)(p, tree, numeric, wanted) for p in parts])
        sizes = np.sum([r[1] for r in results], axis=0)
        big = [i for i in wanted if sizes[i] > max_rows]
        if not big:
            return tree, sizes
        counts = {
            c: pd.concat([r[0][c] for r in results]).groupby(level=[0, 1]).sum() for c in numeric
        }
        if not spans:
            for c in numeric:
                values = counts[c].index.get_level_values(1)
                spans[c] = float(values.max() - values.min()) or 1.0
        for leaf in big:
            if not _cut_leaf(tree, leaf, counts, spans, k):
                stuck.add(leaf)


def _cut_leaf(tree: _Tree, leaf: int, counts: dict, spans: dict, k: int) -> bool:
    """Cut ``leaf`` along its widest numeric QI whose median cut keeps k on both sides."""
    widths = []
    for c, vc in counts.items():
        values = vc.loc[leaf] if leaf in vc.index.get_level_values(0) else None
        if values is None or len(values) < 2:
            continue
        widths.append(((values.index.max() - values.index.min()) / spans[c], c, values))
    for _, column, values in sorted(widths, key=lambda t: -t[0]):
        value, left, right = _lower_median(values)
        if left >= k and right >= k:
            tree.cuts.append(_Cut(leaf, column, value, tree.n_leaves, tree.n_leaves + 1))
            tree.n_leaves += 2
            return True
    return False


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
    # the order carries the published values only
    return out.sort_values(list(out.columns), kind="stable").reset_index(drop=True)


def _distinct_class_counts(pdf: pd.DataFrame, qis: list[str]) -> pd.Series:
    return pdf.groupby(qis, sort=False, dropna=False).size()


def _verify(data: Any, qis: list[str], k: int) -> list[CheckResult]:
    """Recount every published class across all partitions: >= k records each."""
    meta = pd.Series(dtype=np.int64)
    (per_part,) = compute(data.map_partitions(_distinct_class_counts, qis, meta=meta))
    sizes = per_part.groupby(level=list(range(len(qis)))).sum().to_numpy()
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


def _gcp_part(pdf: pd.DataFrame, qis: Mapping[str, Hierarchy | str], reference: dict) -> float:
    return float(
        sum(_penalties(pdf[c], spec, reference.get(c))[0].sum() for c, spec in qis.items())
    )


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
        Secret key (:func:`structanon.io.release_key`), recorded as its source only: the
        output order is a function of the published values.
    max_rows : int
        Records a leaf may hold before the in-memory Mondrian takes over.
    measures : bool
        Compute the GCP (one more pass).
    mondrian_options : dict, optional
        ``criterion``, ``relaxed``, ``remainder`` of :func:`tabular._mondrian.mondrian`.

    Returns
    -------
    Release
        ``data``: a lazy Dask DataFrame, one partition per group of leaves, each leaf's
        rows sorted by their published values; ``utility["gcp"]``.
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
    numeric = [c for c, spec in qis.items() if isinstance(spec, str) and spec == "numeric"]
    if not numeric:
        raise InputError("the Dask engine of Mondrian needs at least one numeric quasi-identifier")
    secret = release_key(key)
    timings = Timings()
    with timings("top_cuts"):
        tree, sizes = _top_cuts(ddf, numeric, k, max_rows)
        n = int(sizes.sum())
        if n < k:
            raise InfeasibleError(f"the table holds {n} records, fewer than k={k}")
    with timings("leaves"):
        options: dict[str, Any] = dict(mondrian_options or {})
        options["width_scale"] = _table_scales(ddf, qis, numeric)
        meta_in = ddf._meta.assign(**{_LEAF: np.int64(0)})
        meta = _leaf_mondrian(meta_in, qis, sensitive, models, options)
        with_leaf = ddf.map_partitions(lambda p: p.assign(**{_LEAF: tree.leaves(p)}), meta=meta_in)
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
    release = Release(
        data=data,
        datatype="tabular",
        verifier=lambda d: _verify(d, list(qis), k),
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
            "pseudonym_key": secret.key_source,
            "warnings": [],
        },
    )

    def measure(rel: Release) -> None:
        import dask

        reference = {}
        for c, spec in qis.items():
            if not isinstance(spec, Hierarchy):
                (values,) = compute(ddf[c].drop_duplicates())
                reference[c] = pd.Series(values.to_numpy(), name=c)
        parts = rel.data.to_delayed()
        totals = compute(*[dask.delayed(_gcp_part)(p, qis, reference) for p in parts])
        rel.utility = {"gcp": float(sum(totals)) / (n * len(qis))}

    return finish_release(release, measure, measures=measures, timings=timings)
