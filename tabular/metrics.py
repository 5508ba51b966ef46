"""Utility of a released table: how much information generalization and suppression cost.

Most functions read the released table itself (generalized labels, ``lo-hi`` ranges, or
value sets ``"a,b"`` of ``"set"`` quasi-identifiers) plus the hierarchies (or, for numeric
and set QIs, the original column), so they apply to every algorithm's output.  Functions marked
*aligned* need the original rows and their released counterparts in the same order
(suppressed rows removed from both), which :func:`tabular.anonymize` has in hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from structanon import Hierarchy, InputError, Partition
from structanon._validation import check_float, check_int
from structanon.hierarchy import value_labels

from ._mondrian import time_bounds
from ._sets import SetDomain, is_set_spec

__all__ = [
    "discernibility_star",
    "average_class_size",
    "precision",
    "generalization_height",
    "loss",
    "ncp",
    "gcp",
    "ambiguity",
    "non_uniform_entropy",
    "sse",
    "count_query_error",
    "classifier_accuracy",
]

_RANGE = re.compile(
    r"^\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*-\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*$"
)
SUPPRESSED = "*"


def _classes(released: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    if len(released) == 0:
        return np.zeros(0, dtype=np.int64)
    frame = released.groupby(list(columns), sort=False, dropna=False, observed=True)
    return frame.ngroup().to_numpy()


def discernibility_star(released: pd.DataFrame, quasi_identifiers: Sequence[str]) -> int:
    """DM*: the sum of squared equivalence-class sizes of the released table.

    Examples
    --------
    >>> discernibility_star(pd.DataFrame({"a": ["x", "x", "y"]}), ["a"])
    5
    """
    sizes = np.bincount(_classes(released, quasi_identifiers))
    return int((sizes.astype(np.int64) ** 2).sum())


def average_class_size(
    released: pd.DataFrame, quasi_identifiers: Sequence[str], k: int = 1
) -> float:
    """C_AVG = (released records / classes) / k (LeFevre et al. 2006).

    Examples
    --------
    >>> average_class_size(pd.DataFrame({"a": ["x", "x", "y", "y"]}), ["a"], k=2)
    1.0
    """
    n_classes = int(_classes(released, quasi_identifiers).max(initial=-1)) + 1
    return float("nan") if n_classes == 0 else len(released) / n_classes / k


def generalization_height(transformation: Mapping[str, int]) -> int:
    """Sum of the generalization levels of a full-domain transformation.

    Examples
    --------
    >>> generalization_height({"age": 2, "sex": 1})
    3
    """
    return int(sum(int(v) for v in transformation.values()))


def precision(
    transformation: Mapping[str, int],
    hierarchies: Mapping[str, Hierarchy],
    n: int | None = None,
    suppressed: int = 0,
) -> float:
    """Sweeney's precision loss of a full-domain transformation, in [0, 1].

    Notes
    -----
    ``1 - Prec = (1/q) sum_j ((n - s) level_j / height_j + s) / n``: each released cell
    costs its level over the hierarchy's height, each suppressed record costs 1 per
    attribute (ARX's non-monotonic precision).  Sweeney's precision is 1 minus this value.

    Examples
    --------
    >>> h = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"]])
    >>> precision({"x": 1}, {"x": h})
    0.5
    """
    s = float(suppressed)
    rows = float(n) if n else 1.0
    values = []
    for column, level in transformation.items():
        height = hierarchies[column].height
        values.append(((rows - s) * (level / height if height else 0.0) + s) / rows)
    return float(np.mean(values)) if values else 0.0


def loss(
    transformation: Mapping[str, int],
    released: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    n: int,
) -> float:
    """Iyengar's loss metric aggregated as ARX does (shifted geometric mean over attributes).

    Notes
    -----
    Per attribute ``j`` with ``D_j`` leaves: ``L_j = (sum_r share(r) + s - n/D_j) / (n - n/D_j)``
    where ``share(r)`` is the fraction of leaves under record ``r``'s released value and the
    ``s = n - len(released)`` suppressed records cost 1 each; the aggregate is
    ``prod_j (L_j + 1)^(1/q) - 1``.

    Examples
    --------
    >>> h = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]])
    >>> round(loss({"x": 1}, pd.DataFrame({"x": ["ab", "ab", "cd", "cd"]}), {"x": h}, n=4), 4)
    0.3333

    References
    ----------
    V. S. Iyengar. Transforming data to satisfy privacy constraints. KDD 2002.
    """
    s = float(n - len(released))
    product, q = 1.0, max(len(transformation), 1)
    for column, level in transformation.items():
        h = hierarchies[column]
        shares = h.leaf_counts(level) / h.leaves.size
        index = pd.Index(h.labels(level).astype(str))
        codes = index.get_indexer(released[column].astype(str).to_numpy())
        if (codes < 0).any():
            raise InputError(
                "released value is not a node of the given level",
                column=column,
                row=int(np.flatnonzero(codes < 0)[0]),
            )
        total = float(shares[codes].sum()) + s
        low = n / h.leaves.size
        value = (total - low) / (n - low) if n > low else 0.0
        product *= (max(value, 0.0) + 1.0) ** (1.0 / q)
    return product - 1.0


def _range_bounds(
    labels: np.ndarray, lo_all: float, hi_all: float, column: str
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bound of each published numeric value ("lo-hi", a number, or "*")."""
    uniq, inverse = np.unique(labels, return_inverse=True)
    ulo, uhi = np.empty(uniq.size), np.empty(uniq.size)
    for i, label in enumerate(uniq.tolist()):  # once per distinct published value
        match = _RANGE.match(label)
        if match:
            ulo[i], uhi[i] = float(match.group(1)), float(match.group(2))
        elif label == SUPPRESSED:
            ulo[i], uhi[i] = lo_all, hi_all
        elif (times := time_bounds(label)) is not None:  # a date-time or "lo/hi" of them
            ulo[i], uhi[i] = times
        else:
            try:
                ulo[i] = uhi[i] = float(label)
            except ValueError:
                raise InputError(
                    "released value is neither a number nor a range", column=column, value=label
                ) from None
    return ulo[inverse], uhi[inverse]


def _penalties(
    column: pd.Series, spec: Hierarchy | str, original: pd.Series | None
) -> tuple[np.ndarray, np.ndarray]:
    """Per released cell: (normalized certainty penalty, number of original values covered)."""
    labels = column.astype(str).to_numpy()
    if isinstance(spec, Hierarchy):
        n_leaves = spec.leaves.size
        table: dict[str, int] = {}
        for level in range(spec.height, -1, -1):  # the lowest level wins for repeated labels
            for label, count in zip(spec.labels(level).tolist(), spec.leaf_counts(level).tolist()):
                table[str(label)] = int(count)
        counts = pd.Series(labels).map(table).to_numpy(dtype=float, na_value=np.nan)
        counts = np.where(np.isnan(counts), n_leaves, counts)  # e.g. a locally suppressed "*"
        penalty = (counts - 1) / (n_leaves - 1) if n_leaves > 1 else np.zeros(counts.size)
        return penalty, counts
    if original is None:
        kind = "value-set" if is_set_spec(spec) else "numeric"
        raise InputError(
            f"{kind} quasi-identifier needs the original column", column=str(column.name)
        )
    if is_set_spec(spec):
        domain = SetDomain(original, str(column.name))
        inverse, members = domain.incidence(column)
        covered = np.asarray(members.sum(axis=1)).reshape(-1)[inverse]
        scale = domain.size - 1
        penalty = (covered - 1) / scale if scale > 0 else np.zeros(covered.size)
        return penalty, covered
    values = pd.to_numeric(original, errors="coerce").to_numpy(dtype=float)
    span = float(np.nanmax(values) - np.nanmin(values)) if values.size else 0.0
    distinct = np.unique(values[~np.isnan(values)])
    lo, hi = _range_bounds(labels, np.nanmin(values), np.nanmax(values), str(column.name))
    penalty = (hi - lo) / span if span > 0 else np.zeros(labels.size)
    covered = np.searchsorted(distinct, hi, side="right") - np.searchsorted(
        distinct, lo, side="left"
    )
    return penalty, np.maximum(covered, 1).astype(float)


def ncp(
    released: pd.DataFrame,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    original: pd.DataFrame | None = None,
) -> dict[str, float]:
    """Normalized certainty penalty of each quasi-identifier, averaged over released records.

    Notes
    -----
    A categorical value covering ``u`` of the hierarchy's ``D`` leaves costs
    ``(u - 1) / (D - 1)``; a numeric range ``[lo, hi]`` costs ``(hi - lo) / (max - min)``
    of the original column (Xu et al. 2006); a value set (``"set"`` QIs, ``"a,b"``) of
    ``u`` values costs ``(u - 1) / (D - 1)`` with ``D`` the column's distinct values in
    ``original`` (required for numeric and set QIs).

    Examples
    --------
    >>> h = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    >>> ncp(pd.DataFrame({"x": ["ab", "c"]}), {"x": h})
    {'x': 0.25}
    >>> o = pd.DataFrame({"x": ["a", "b", "c", "d"]})
    >>> ncp(pd.DataFrame({"x": ["a,b", "a,b", "c,d", "d"]}), {"x": "set"}, o)["x"]
    0.25
    """
    out = {}
    for column, spec in quasi_identifiers.items():
        orig = None if original is None else original[column]
        penalty, _ = _penalties(released[column], spec, orig)
        out[column] = float(penalty.mean()) if penalty.size else 0.0
    return out


def gcp(
    released: pd.DataFrame,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    n: int,
    original: pd.DataFrame | None = None,
) -> float:
    """Global certainty penalty in [0, 1]: NCP summed over released cells, over ``n * q``.

    Each of the ``n - len(released)`` suppressed records costs 1 per attribute.

    Examples
    --------
    >>> h = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    >>> gcp(pd.DataFrame({"x": ["ab", "c"]}), {"x": h}, n=3)  # (0.5 + 0 + 1) / 3
    0.5

    References
    ----------
    G. Ghinita, P. Karras, P. Kalnis, N. Mamoulis. Fast data anonymization with low
    information loss. VLDB 2007.
    """
    q = len(quasi_identifiers)
    if n == 0 or q == 0:
        return 0.0
    total = float(n - len(released)) * q
    for column, spec in quasi_identifiers.items():
        orig = None if original is None else original[column]
        total += float(_penalties(released[column], spec, orig)[0].sum())
    return total / (n * q)


def ambiguity(
    released: pd.DataFrame,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    original: pd.DataFrame | None = None,
) -> float:
    """Average over released records of the number of original QI tuples each could stand for.

    Notes
    -----
    ``AM = (1/n) sum_r prod_j |values covered by r_j|`` (Nergiz & Clifton 2007).

    Examples
    --------
    >>> h = Hierarchy([["a", "ab"], ["b", "ab"]])
    >>> ambiguity(pd.DataFrame({"x": ["ab", "a"]}), {"x": h})
    1.5
    """
    if len(released) == 0:
        return 0.0
    product = np.ones(len(released))
    for column, spec in quasi_identifiers.items():
        orig = None if original is None else original[column]
        product *= _penalties(released[column], spec, orig)[1]
    return float(product.mean())


def non_uniform_entropy(
    original: pd.DataFrame, generalized: pd.DataFrame, quasi_identifiers: Sequence[str]
) -> float:
    """Non-uniform entropy (aligned): bits lost per released cell, summed over the table.

    Notes
    -----
    ``H = - sum_r sum_j log2 Pr[r_j | g(r_j)]`` with
    ``Pr[v | g] = #records with value v / #records generalized to g`` counted on the
    original table (Gionis & Tassa 2009).

    Examples
    --------
    >>> o = pd.DataFrame({"x": ["a", "a", "b", "c"]})
    >>> round(non_uniform_entropy(o, pd.DataFrame({"x": ["ab", "ab", "ab", "c"]}), ["x"]), 6)
    2.754888
    """
    if len(original) != len(generalized):
        raise InputError("original and generalized tables must be aligned row for row")
    total = 0.0
    for column in quasi_identifiers:
        o = pd.Series(value_labels(original[column]))
        g = pd.Series(generalized[column].astype(str).to_numpy())
        pair = o + "\x1f" + g
        pair_count = pair.map(pair.value_counts()).to_numpy(dtype=float)
        gen_count = g.map(g.value_counts()).to_numpy(dtype=float)
        total -= float(np.log2(pair_count / gen_count).sum())
    return total


def sse(original: pd.DataFrame, labels: np.ndarray, columns: Sequence[str]) -> float:
    """Sum of squared errors of numeric attributes against their class means (aligned).

    Notes
    -----
    ``SSE = sum_E sum_{r in E} ||x_r - mean(E)||^2`` over the given numeric columns, the
    within-class loss of microaggregation (Domingo-Ferrer & Mateo-Sanz 2002).  Suppressed
    records (label ``-1``) are left out.

    Examples
    --------
    >>> sse(pd.DataFrame({"age": [20, 22, 30]}), np.array([0, 0, 1]), ["age"])
    2.0
    """
    labels = np.asarray(labels)
    kept = labels >= 0
    total = 0.0
    groups = Partition(labels).labels[kept]
    for column in columns:
        x = pd.to_numeric(original[column], errors="coerce").to_numpy(dtype=float)[kept]
        if np.isnan(x).any():
            raise InputError(
                "SSE needs numeric values", column=column, row=int(np.flatnonzero(np.isnan(x))[0])
            )
        sums = np.bincount(groups, weights=x)
        counts = np.bincount(groups)
        means = sums / np.maximum(counts, 1)
        total += float(((x - means[groups]) ** 2).sum())
    return total


def _coverage(column: pd.Series, spec: Hierarchy | str, original: pd.Series):
    """Per released cell, a function mapping a predicate over original values to a fraction."""
    labels = column.astype(str).to_numpy()
    if isinstance(spec, Hierarchy):
        index: dict[str, tuple[int, int]] = {}
        for level in range(spec.height, -1, -1):
            for code, label in enumerate(spec.labels(level).tolist()):
                index[str(label)] = (level, code)
        pairs = pd.Series(labels).map(index)
        levels = np.array([p[0] if isinstance(p, tuple) else -1 for p in pairs], dtype=np.int64)
        node = np.array([p[1] if isinstance(p, tuple) else 0 for p in pairs], dtype=np.int64)
        leaf_counts = [spec.leaf_counts(lv) for lv in range(spec.height + 1)]

        def fraction(member: np.ndarray) -> np.ndarray:  # member: bool per leaf code
            out = np.full(labels.size, member.mean())  # unknown labels, e.g. "*": whole domain
            for lv in range(spec.height + 1):
                sel = levels == lv
                if sel.any():
                    hits = np.bincount(
                        spec.node_codes[:, lv], weights=member, minlength=leaf_counts[lv].size
                    )
                    out[sel] = hits[node[sel]] / leaf_counts[lv][node[sel]]
            return out

        return fraction
    if is_set_spec(spec):
        inverse, members = SetDomain(original, str(column.name)).incidence(column)
        sizes = np.asarray(members.sum(axis=1)).reshape(-1)

        def fraction_set(member: np.ndarray) -> np.ndarray:  # member: per domain value
            return (members @ np.asarray(member, dtype=float) / sizes)[inverse]

        return fraction_set
    values = pd.to_numeric(original, errors="coerce").to_numpy(dtype=float)
    lo, hi = _range_bounds(
        labels, float(np.nanmin(values)), float(np.nanmax(values)), str(column.name)
    )

    def fraction_range(a: float, b: float) -> np.ndarray:
        width = hi - lo
        overlap = np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0, None)
        point = (lo >= a) & (lo <= b)
        return np.where(width > 0, overlap / np.where(width > 0, width, 1), point.astype(float))

    return fraction_range


def count_query_error(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    n_queries: int = 200,
    dimension: int = 2,
    selectivity: float = 0.1,
    seed: int | None = 0,
) -> dict[str, float]:
    """Average relative error of random COUNT queries answered on the release.

    Each query picks ``dimension`` quasi-identifiers at random and, on each, a predicate
    selecting a share ``selectivity ** (1 / dimension)`` of its domain (a random subset of
    hierarchy leaves or, for ``"set"`` QIs, of the column's distinct values; or a random
    numeric interval).  The true count comes from the original table; the estimate
    assumes released records are spread uniformly over the values their generalized cells
    cover (a value set ``"a,b,c"`` matching a predicate on ``a`` counts 1/3).

    Returns
    -------
    dict with ``mean``, ``median`` relative error ``|est - true| / max(true, 1)``, and the
    parameters.

    Examples
    --------
    >>> h = Hierarchy([["a", "*"], ["b", "*"]])
    >>> t = pd.DataFrame({"x": ["a", "a", "b", "b"]})
    >>> count_query_error(t, t, {"x": h}, n_queries=5, dimension=1, selectivity=0.5)["mean"]
    0.0

    References
    ----------
    K. LeFevre, D. DeWitt, R. Ramakrishnan. Mondrian multidimensional k-anonymity. ICDE 2006.
    """
    check_float(selectivity, "selectivity", min_value=0, max_value=1, include_min=False)
    columns = list(quasi_identifiers)
    dimension = check_int(dimension, "dimension", min_value=1, max_value=len(columns))
    rng = np.random.default_rng(seed)
    share = selectivity ** (1.0 / dimension)
    coverage = {c: _coverage(released[c], quasi_identifiers[c], original[c]) for c in columns}
    leaf_codes = {}
    n_codes = {}
    numeric = {}
    for c in columns:
        spec = quasi_identifiers[c]
        if isinstance(spec, Hierarchy):
            leaf_codes[c] = spec.encode(original[c], column=c)
            n_codes[c] = spec.leaves.size
        elif is_set_spec(spec):
            domain = SetDomain(original[c], c)
            leaf_codes[c], n_codes[c] = domain.codes, domain.size
        else:
            numeric[c] = pd.to_numeric(original[c], errors="coerce").to_numpy(dtype=float)
    errors = np.empty(n_queries)
    for i in range(n_queries):
        chosen = rng.choice(len(columns), size=dimension, replace=False)
        truth = np.ones(len(original), dtype=bool)
        estimate = np.ones(len(released))
        for j in chosen:
            c = columns[j]
            spec = quasi_identifiers[c]
            if c in leaf_codes:
                d = n_codes[c]
                pick = rng.choice(d, size=max(1, int(round(share * d))), replace=False)
                member = np.zeros(d, dtype=bool)
                member[pick] = True
                truth &= member[leaf_codes[c]]
                estimate *= coverage[c](member.astype(float))
            else:
                lo_all, hi_all = np.nanmin(numeric[c]), np.nanmax(numeric[c])
                width = share * (hi_all - lo_all)
                a = rng.uniform(lo_all, hi_all - width) if hi_all - width > lo_all else lo_all
                truth &= (numeric[c] >= a) & (numeric[c] <= a + width)
                estimate *= coverage[c](a, a + width)
        true_count = float(truth.sum())
        errors[i] = abs(float(estimate.sum()) - true_count) / max(true_count, 1.0)
    return {
        "mean": float(errors.mean()),
        "median": float(np.median(errors)),
        "n_queries": n_queries,
        "dimension": dimension,
        "selectivity": selectivity,
    }


def classifier_accuracy(
    original: pd.DataFrame,
    released: pd.DataFrame,
    features: Sequence[str],
    target: str,
    seed: int | None = 0,
    test_size: float = 0.3,
) -> dict[str, float]:
    """Accuracy of a decision tree trained on the release vs on the original (aligned).

    Both tables are split into the same train / test rows; the classifier predicting
    ``target`` from ``features`` is trained and tested on the original values, then on the
    released (generalized) values.

    Returns
    -------
    dict with ``original``, ``released`` accuracy and ``relative`` (released / original).

    Examples
    --------
    >>> t = pd.DataFrame({"x": list("ab") * 20, "y": list("pq") * 20})
    >>> classifier_accuracy(t, t.assign(x="*"), ["x"], "y")["original"]
    1.0
    """
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import OrdinalEncoder
    from sklearn.tree import DecisionTreeClassifier

    if len(original) != len(released):
        raise InputError("original and released tables must be aligned row for row")
    y = original[target].astype(str).to_numpy()
    if len(y) < 10 or np.unique(y).size < 2:
        return {"original": float("nan"), "released": float("nan"), "relative": float("nan")}
    train, test = train_test_split(np.arange(len(y)), test_size=test_size, random_state=seed)
    result = {}
    for name, frame in (("original", original), ("released", released)):
        x = OrdinalEncoder().fit_transform(frame[list(features)].astype(str))
        model = DecisionTreeClassifier(min_samples_leaf=5, random_state=seed)
        model.fit(x[train], y[train])
        result[name] = float((model.predict(x[test]) == y[test]).mean())
    result["relative"] = (
        result["released"] / result["original"] if result["original"] else float("nan")
    )
    return result
