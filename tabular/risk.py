"""Re-identification risk of microdata tables and a distance-based record-linkage attack."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from structanon import risk as core_risk
from structanon.errors import InputError
from structanon.hierarchy import Hierarchy
from structanon.models import DistinctLDiversity, EntropyLDiversity
from structanon.partition import Partition

from ._input import require_columns
from ._mondrian import encode_column, time_bounds
from ._sets import SetDomain, is_set_spec

__all__ = [
    "assess",
    "record_linkage",
    "distance_linkage",
    "probabilistic_linkage",
    "interval_disclosure",
    "individual_risk",
    "special_uniques",
    "perturbation_risk",
    "fellegi_sunter_em",
]

_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_RANGE = re.compile(rf"^\s*{_NUMBER}\s*-\s*{_NUMBER}\s*$")
_EPS = 1e-6  # float32 distances: closer than this counts as a tie


def assess(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str | None = None,
    population: pd.DataFrame | None = None,
    threshold: float = 0.2,
) -> dict[str, Any]:
    """Re-identification risk of a table given its quasi-identifiers.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (raw or released); equal QI values form an equivalence class.
    quasi_identifiers : sequence of str
    sensitive : str, optional
        When given, the table's distinct and entropy l (smallest over classes).
    population : pandas.DataFrame, optional
        The population ``df`` was sampled from (with the same QI columns): adds the
        journalist risk, where a record's risk is one over its class size in the population.
    threshold : float in (0, 1]
        Risk threshold for ``share_above_threshold``.

    Returns
    -------
    dict
        ``records``, ``classes``, ``k`` (smallest class), ``prosecutor_max``,
        ``prosecutor_avg``, ``marketer``, ``sample_uniques``, ``share_above_threshold``,
        ``threshold``; with ``population``: ``journalist_max``, ``journalist_avg``,
        ``journalist_marketer``; with ``sensitive``: ``distinct_l``, ``entropy_l``.

    Raises
    ------
    InputError
        Unknown column, bad threshold, or a sample record absent from the population.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"age": [30, 30, 40], "sex": ["F", "F", "M"], "d": ["a", "b", "a"]})
    >>> r = assess(t, ["age", "sex"], sensitive="d")
    >>> r["prosecutor_max"], r["sample_uniques"], r["distinct_l"]
    (1.0, 1, 1.0)

    Notes
    -----
    With class sizes :math:`f_j` in the table (or :math:`F_j` in the population): the
    prosecutor risk of a record of class :math:`j` is :math:`1/f_j`, the journalist risk
    :math:`1/F_j`, and the marketer risk the expected share of records re-identified,
    :math:`J / n` (number of classes over records) for the prosecutor setting.

    References
    ----------
    K. El Emam, F. K. Dankar. Protecting privacy using k-anonymity. JAMIA 15(5), 2008.
    """
    columns = require_columns(df, quasi_identifiers, argument="the table")
    partition = Partition(_class_labels(df, columns))
    out: dict[str, Any] = {
        "records": len(df),
        "classes": partition.n_groups,
        "k": int(partition.sizes.min()) if partition.n_groups else 0,
    }
    out.update(core_risk.reidentification_risk(partition, threshold))
    if population is not None:
        require_columns(population, columns, argument="the population", where="the population")
        journalist = core_risk.journalist_risk(
            df[columns].astype(object), population[columns].astype(object)
        )
        out["journalist_max"] = journalist["journalist_max"]
        out["journalist_avg"] = journalist["journalist_avg"]
        out["journalist_marketer"] = journalist["marketer"]
    if sensitive is not None:
        if sensitive not in df.columns:
            raise InputError("sensitive attribute not in the table", column=sensitive)
        codes, domain = encode_column(df[sensitive], sensitive)
        counts = np.bincount(
            partition.labels * domain.size + codes, minlength=partition.n_groups * domain.size
        )
        counts = counts.reshape(partition.n_groups, domain.size)
        out["distinct_l"] = float(DistinctLDiversity(1).group_values(counts).min())
        out["entropy_l"] = float(EntropyLDiversity(1).group_values(counts).min())
    return out


def _class_labels(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Equivalence class of every row (equal QI values), by hashing each column once."""
    key = np.zeros(len(df), dtype=np.int64)
    radix = 1
    for col in columns:
        codes, uniques = pd.factorize(np.asarray(df[col]))
        codes = np.where(codes < 0, len(uniques), codes)  # missing values form one class
        uniques = np.arange(len(uniques) + 1)
        if radix * max(len(uniques), 1) >= 2**62:  # re-compact before the key overflows
            key = pd.factorize(key)[0].astype(np.int64)
            radix = int(key.max()) + 1 if key.size else 1
        key = key * max(len(uniques), 1) + codes
        radix *= max(len(uniques), 1)
    return pd.factorize(key)[0].astype(np.int64)


# --------------------------------------------------------------------------- record linkage


class _Numeric:
    """Distance |x - midpoint(released)| / range of the original column.

    Like every attribute below, it ends with integer codes ``o`` (original records) and
    ``r`` (released records) and ``table[o, r]``, the squared distance.
    """

    def __init__(
        self, col: str, original: pd.Series, released: pd.Series, hierarchy: Hierarchy | None
    ) -> None:
        x = pd.to_numeric(original, errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(x))
        if bad.size:
            raise InputError(
                "numeric quasi-identifier holds a missing or non-numeric value",
                column=col,
                row=int(bad[0]),
            )
        lo_all, hi_all = float(x.min()), float(x.max())
        self.scale = (hi_all - lo_all) or 1.0
        spans: dict[str, tuple[float, float]] = {}
        if hierarchy is not None:  # node -> range of the leaves under it, never parsed labels
            leaves = pd.to_numeric(pd.Series(hierarchy.leaves), errors="coerce").to_numpy(float)
            for level in range(hierarchy.height, -1, -1):
                codes = hierarchy.node_codes[:, level]
                for code, label in enumerate(hierarchy.labels(level)):
                    under = leaves[codes == code]
                    under = under[np.isfinite(under)]
                    if under.size:
                        spans[str(label)] = (float(under.min()), float(under.max()))
        uniques, inverse = np.unique(released.astype(str).to_numpy(), return_inverse=True)
        mids = np.empty(uniques.size)
        for i, label in enumerate(uniques.tolist()):  # once per distinct released value
            if label in spans:
                lo, hi = spans[label]
            elif label.strip() == "*":
                lo, hi = lo_all, hi_all
            elif (times := time_bounds(label)) is not None:
                lo, hi = times
            else:
                match = _RANGE.match(label)
                try:
                    lo, hi = (
                        (float(match.group(1)), float(match.group(2)))
                        if match
                        else (float(label), float(label))
                    )
                except ValueError:
                    row = int(np.flatnonzero(inverse.reshape(-1) == i)[0])
                    raise InputError(
                        "released value is neither a number, a range 'lo-hi', "
                        "'*' nor a hierarchy node",
                        column=col,
                        row=row,
                        value=label,
                    ) from None
            mids[i] = (lo + hi) / 2
        o_values, self.o = np.unique(x, return_inverse=True)
        r_values, self.r = np.unique(mids[inverse.reshape(-1)], return_inverse=True)
        self.o, self.r = self.o.reshape(-1), self.r.reshape(-1)
        self.table = (((o_values[:, None] - r_values[None, :]) / self.scale) ** 2).astype(
            np.float32
        )


class _Hierarchical:
    """Distance (level of the lowest common ancestor of leaf and node) / height."""

    def __init__(
        self, col: str, original: pd.Series, released: pd.Series, hierarchy: Hierarchy
    ) -> None:
        self.o = hierarchy.encode(original, column=col)
        anc = hierarchy.node_codes
        height = max(hierarchy.height, 1)
        node_of: dict[str, int] = {}
        reps: list[tuple[int, int]] = []  # representative leaf and level of every node
        for level in range(hierarchy.height + 1):
            for code, label in enumerate(hierarchy.labels(level)):
                node_of.setdefault(str(label), len(reps))
                reps.append((int(np.flatnonzero(anc[:, level] == code)[0]), level))
        star = len(reps)
        node_of.setdefault("*", star)
        table = np.ones((anc.shape[0], star + 1))
        for node, (rep, level) in enumerate(reps):
            same = anc[:, level:] == anc[rep, level:]  # (leaves, levels >= level)
            first = np.where(same.any(axis=1), same.argmax(axis=1) + level, height)
            table[:, node] = np.minimum(first / height, 1.0)
        self.table = (table**2).astype(np.float32)
        labels = released.astype(str).to_numpy()
        nodes = pd.Series(labels).map(node_of)
        missing = np.flatnonzero(nodes.isna().to_numpy())
        if missing.size:
            raise InputError(
                "released value is not a node of the hierarchy",
                column=col,
                row=int(missing[0]),
                value=labels[missing[0]],
            )
        self.r = nodes.to_numpy(dtype=np.int64)


class _ValueSet:
    """Distance of a value to a published value set: its NCP ``(u - 1) / (D - 1)`` when the
    set of ``u`` values holds it, 1 when not (``D``: the column's distinct original values)."""

    def __init__(self, col: str, original: pd.Series, released: pd.Series) -> None:
        domain = SetDomain(original, col)
        self.o = domain.codes.astype(np.int64)
        inverse, members = domain.incidence(released)
        self.r = inverse.astype(np.int64)
        scale = max(domain.size - 1, 1)
        size = np.asarray(members.sum(axis=1)).reshape(-1)
        # table[o, r]: original value o against distinct released cell r
        table = np.where(members.T.toarray() > 0, (size[None, :] - 1) / scale, 1.0)
        self.table = (table**2).astype(np.float32)


class _Exact:
    """Distance 0 for equal values, 1 otherwise (a suppressed ``*`` matches nothing)."""

    def __init__(self, col: str, original: pd.Series, released: pd.Series) -> None:
        both = pd.concat([original.astype(str), released.astype(str)], ignore_index=True)
        codes, uniques = pd.factorize(both)
        codes = codes.astype(np.int64)
        n = len(uniques)
        star = np.flatnonzero(np.asarray(uniques, dtype=object) == "*")
        if star.size:  # a released "*" is the extra column, at distance 1 from everything
            codes[len(original) :][codes[len(original) :] == star[0]] = n
        self.o, self.r = codes[: len(original)], codes[len(original) :]
        self.table = np.ones((n, n + 1), dtype=np.float32)
        self.table[np.arange(n), np.arange(n)] = 0.0


def _attributes(original, released, quasi_identifiers, hierarchies):
    specs: dict[str, Any]
    if isinstance(quasi_identifiers, Mapping):
        specs = dict(quasi_identifiers)
    else:
        specs = {c: None for c in quasi_identifiers}
    specs.update({c: h for c, h in (hierarchies or {}).items() if c in specs})
    columns = require_columns(
        original, list(specs), argument="the original table", where="the original table"
    )
    require_columns(released, columns, argument="the released table", where="the released table")
    attributes = []
    for col in columns:
        spec = specs[col]
        o_col, r_col = original[col].reset_index(drop=True), released[col].reset_index(drop=True)
        numeric_original = o_col.dtype != bool and pd.api.types.is_numeric_dtype(o_col.dtype)
        if spec == "numeric" or (numeric_original and spec is None):
            attributes.append(_Numeric(col, o_col, r_col, None))
        elif isinstance(spec, Hierarchy):
            leaves_numeric = pd.to_numeric(pd.Series(spec.leaves), errors="coerce").notna().all()
            if numeric_original and leaves_numeric:
                attributes.append(_Numeric(col, o_col, r_col, spec))
            else:
                attributes.append(_Hierarchical(col, o_col, r_col, spec))
        elif is_set_spec(spec):
            attributes.append(_ValueSet(col, o_col, r_col))
        elif spec is None:
            attributes.append(_Exact(col, o_col, r_col))
        else:
            raise InputError(
                f"quasi-identifier spec must be a Hierarchy, 'numeric', 'set' or "
                f"None, got {spec!r}",
                column=col,
            )
    return attributes


def record_linkage(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str] | Mapping[str, Hierarchy | str | None],
    hierarchies: Mapping[str, Hierarchy] | None = None,
    true_index: Sequence[Any] | np.ndarray | None = None,
    chunk_size: int = 2_000_000,
) -> float:
    """Distance-based record linkage: share of original records linked to their own release.

    Every original record is linked to its nearest released record over the
    quasi-identifiers; the link succeeds when that is the record's own released version.
    Ties are broken uniformly at random, so the expected success is counted exactly: a
    record whose own version is among the nearest released records scores ``1 / (number
    of nearest released records)``.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before anonymization (the attacker's external data).
    released : pandas.DataFrame
        The released table; suppressed records are simply absent (and count as failures).
    quasi_identifiers : sequence of str, or dict column -> Hierarchy | "numeric" | "set" | None
        How to compare each QI.  Numeric: ``|x - m| / (max - min)`` with ``m`` the midpoint
        of the released range (``"lo-hi"``, a number, a hierarchy node's leaves, or the whole
        range for ``"*"``).  With a Hierarchy (non-numeric): the level of the lowest common
        ancestor of the original leaf and the released node over the height (``*`` = 1).
        ``"set"`` (alias ``"ordinal"``; cells ``"a,b"``): ``(u - 1) / (D - 1)`` when the
        released set of ``u`` values holds the original value (its NCP, ``D`` the column's
        distinct original values; ``*`` holds every value), 1 when it does not.
        Otherwise: 0 when equal, 1 when not (``*`` matches nothing).
    hierarchies : dict, optional
        Hierarchies by column, when ``quasi_identifiers`` is a list.
    true_index : sequence, optional
        For each released row, the index label in ``original`` of the record it came
        from.  Default: ``released.index``.
    chunk_size : int
        Distance-matrix cells computed at once (memory bound).

    Returns
    -------
    float
        Expected share of original records correctly linked (0 when nothing is released).

    Raises
    ------
    InputError
        Missing columns, values not in a hierarchy, released rows whose origin is unknown.

    Examples
    --------
    >>> import pandas as pd
    >>> orig = pd.DataFrame({"age": [20, 30, 40, 50]})
    >>> record_linkage(orig, orig, ["age"])
    1.0
    >>> rel = pd.DataFrame({"age": ["20-30", "20-30", "40-50", "40-50"]})
    >>> record_linkage(orig, rel, ["age"])
    0.5

    Notes
    -----
    The distance between records is Euclidean over the per-attribute distances above
    (each in [0, 1]).  The rate is :math:`\\frac{1}{n} \\sum_i [r(i) \\in N(i)] / |N(i)|`
    where :math:`N(i)` are the released records nearest to original record :math:`i` and
    :math:`r(i)` its own released version.  Records sharing QI values are processed once.

    References
    ----------
    J. Domingo-Ferrer, V. Torra. Disclosure risk assessment in statistical data
    protection. J. Comput. Appl. Math. 164, 2004 (distance-based record linkage).
    """
    attributes = _attributes(original, released, quasi_identifiers, hierarchies)
    n = len(original)
    if n == 0 or len(released) == 0:
        return 0.0
    labels = released.index if true_index is None else pd.Index(true_index)
    if len(labels) != len(released):
        raise InputError(f"true_index has {len(labels)} labels for {len(released)} released rows")
    if not original.index.is_unique:
        raise InputError("the original table's index must be unique to identify records")
    source = original.index.get_indexer(labels)
    if (source < 0).any():
        row = int(np.flatnonzero(source < 0)[0])
        raise InputError(
            "released row does not come from any original record", row=row, value=labels[row]
        )
    # distinct QI tuples on both sides
    o_cols, r_cols = [a.o for a in attributes], [a.r for a in attributes]
    o_tuple = pd.MultiIndex.from_arrays(o_cols).factorize()[0]
    r_tuple = pd.MultiIndex.from_arrays(r_cols).factorize()[0]
    o_first = np.unique(o_tuple, return_index=True)[1]
    r_first = np.unique(r_tuple, return_index=True)[1]
    multiplicity = np.bincount(r_tuple).astype(np.float32)
    r_sel = [r[r_first] for r in r_cols]
    nearest = np.empty(o_first.size, dtype=np.float32)
    tied = np.empty(o_first.size)
    step = max(1, chunk_size // max(1, r_first.size))
    for start in range(0, o_first.size, step):
        rows = o_first[start : start + step]
        d2 = np.zeros((rows.size, r_first.size), dtype=np.float32)
        for attribute, o, r in zip(attributes, o_cols, r_sel):
            d2 += np.take(np.take(attribute.table, o[rows], axis=0), r, axis=1)
        best = d2.min(axis=1)
        nearest[start : start + step] = best
        tied[start : start + step] = (d2 <= best[:, None] + _EPS) @ multiplicity
    own = np.zeros(len(released), dtype=np.float32)
    for attribute, o, r in zip(attributes, o_cols, r_cols):
        own += attribute.table[o[source], r]
    tuple_of_source = o_tuple[source]
    hit = own <= nearest[tuple_of_source] + _EPS
    return float((hit / tied[tuple_of_source]).sum() / n)


# ------------------------------------------------------------ risk of perturbed microdata


def _embedding(
    original: pd.DataFrame, masked: pd.DataFrame, numeric: Sequence[str], categorical: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Both tables in one Euclidean space: numeric columns standardized by the original's
    mean and standard deviation, each categorical column one-hot over ``1/sqrt(2)`` (two
    different categories are at squared distance 1)."""
    parts_o, parts_m = [], []
    if numeric:
        x = original[list(numeric)].to_numpy(dtype=float)
        y = masked[list(numeric)].to_numpy(dtype=float)
        mean, sd = x.mean(axis=0), x.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        parts_o.append((x - mean) / sd)
        parts_m.append((y - mean) / sd)
    for col in categorical:
        both = pd.concat([original[col].astype(str), masked[col].astype(str)], ignore_index=True)
        codes, uniques = pd.factorize(both)
        eye = np.eye(len(uniques)) / np.sqrt(2.0)
        parts_o.append(eye[codes[: len(original)]])
        parts_m.append(eye[codes[len(original) :]])
    return np.hstack(parts_o), np.hstack(parts_m)


def _positions(n: int, n_masked: int, true_rows: Sequence[int] | np.ndarray | None) -> np.ndarray:
    """For each original row, the masked row holding its version (-1: not published)."""
    rows = np.arange(n_masked) if true_rows is None else np.asarray(true_rows, dtype=np.int64)
    if rows.size != n_masked:
        raise InputError(f"true_rows has {rows.size} rows for {n_masked} masked records")
    where = np.full(n, -1, dtype=np.int64)
    where[rows] = np.arange(n_masked)
    return where


def distance_linkage(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
    true_rows: Sequence[int] | np.ndarray | None = None,
    max_records: int = 2000,
    seed: int = 0,
) -> float:
    """Distance-based record linkage of a perturbed table: expected share re-identified.

    Each original record (a random sample of at most ``max_records``, drawn from ``seed``)
    is linked to its nearest masked record over standardized numeric columns and
    categorical columns (0 when equal, 1 when not); ties are split uniformly, so a record
    whose own masked version is among ``t`` nearest counts ``1 / t``.

    Parameters
    ----------
    original, masked : pandas.DataFrame
    numeric, categorical : sequence of str
    true_rows : sequence of int, optional
        For each masked row, the position of its original record (default: aligned).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    >>> distance_linkage(t, t, ["x"])
    1.0
    >>> distance_linkage(t, pd.DataFrame({"x": [1.5, 1.5, 3.5, 3.5]}), ["x"])
    0.5

    References
    ----------
    D. Pagliuca, G. Seri. Some results of individual ranking method on the system of
    enterprise accounts annual survey. Esprit SDC project, 1999; J. Domingo-Ferrer,
    V. Torra. Disclosure risk assessment in statistical data protection. J. Comput. Appl.
    Math. 164, 2004.
    """
    from scipy.spatial import cKDTree

    if not len(original) or not len(masked):
        return 0.0
    xo, xm = _embedding(original, masked, numeric, categorical)
    where = _positions(len(original), len(masked), true_rows)
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(original), min(len(original), max_records), replace=False))
    tree = cKDTree(xm)
    nearest = tree.query(xo[pick], k=1)[0]
    slack = 1e-9 * (1.0 + nearest)
    ties = np.asarray(tree.query_ball_point(xo[pick], nearest + slack, return_length=True))
    own = where[pick]
    released = own >= 0
    d_own = np.full(pick.size, np.inf)
    d_own[released] = np.linalg.norm(xo[pick[released]] - xm[own[released]], axis=1)
    hit = d_own <= nearest + slack
    return float((hit / np.maximum(ties, 1)).sum() / pick.size)


def probabilistic_linkage(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
    true_rows: Sequence[int] | np.ndarray | None = None,
    max_records: int = 200,
    agreement: float = 0.25,
    seed: int = 0,
    engine: str = "numpy",
) -> dict[str, float]:
    """Fellegi-Sunter record linkage with weights fitted by EM (``recordlinkage``'s ECM).

    ``m`` original records and their ``m`` masked versions (a random sample drawn from
    ``seed``) are compared pairwise: a numeric column agrees when the values are within
    ``agreement`` standard deviations, a categorical one when equal.  The ECM classifier
    fits the m- and u-probabilities without labels; each original record is linked to
    the candidate of highest match probability (ties split).  ``engine="numpy"`` is
    :func:`fellegi_sunter_em` (the default: milliseconds); ``engine="recordlinkage"``
    fits ``recordlinkage``'s ``ECMClassifier`` from the same start (the same model, about
    1.5 s a call in its input validation; the tests check both agree).

    Returns
    -------
    dict
        ``rate``: expected share linked to their own version; ``chance``: ``1 / m``.

    References
    ----------
    I. P. Fellegi, A. B. Sunter. A theory for record linkage. JASA 64, 1969.
    W. E. Winkler. Using the EM algorithm for weight computation in the Fellegi-Sunter
    model of record linkage. ASA Survey Research Methods, 1988.
    """
    if engine not in ("numpy", "recordlinkage"):
        raise InputError(f"engine must be 'numpy' or 'recordlinkage', got {engine!r}")
    where = _positions(len(original), len(masked), true_rows)
    published = np.flatnonzero(where >= 0)
    if published.size < 2:
        return {"rate": float(published.size), "chance": 1.0}
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(published, min(published.size, max_records), replace=False))
    m = pick.size
    features = []
    if numeric:
        xo, xm = _embedding(original.iloc[pick], masked.iloc[where[pick]], numeric, [])
        diff = np.abs(xo[:, None, :] - xm[None, :, :])  # (m, m, numeric)
        features.append((diff <= agreement).reshape(m * m, len(numeric)))
    for col in categorical:
        codes_o = original[col].astype(str).to_numpy()[pick]
        codes_m = masked[col].astype(str).to_numpy()[where[pick]]
        features.append((codes_o[:, None] == codes_m[None, :]).reshape(m * m, 1))
    table = np.hstack(features).astype(np.int8)
    table = table[:, table.min(axis=0) != table.max(axis=0)]  # features that vary
    if not table.shape[1]:
        return {"rate": 1.0 / m, "chance": 1.0 / m}
    if engine == "recordlinkage":
        import recordlinkage as rl

        frame = pd.DataFrame(table, index=pd.MultiIndex.from_product([range(m), range(m)]))
        ecm = rl.ECMClassifier(binarize=None)
        ecm.fit(frame)
        prob = ecm.prob(frame).to_numpy().reshape(m, m)
    else:
        prob = fellegi_sunter_em(table).reshape(m, m)
    best = prob.max(axis=1, keepdims=True)
    tied = prob >= best - 1e-12
    rate = float((np.diag(tied) / tied.sum(axis=1)).mean())
    return {"rate": rate, "chance": 1.0 / m}


def fellegi_sunter_em(agreement: np.ndarray, max_iter: int = 100, tol: float = 1e-4) -> np.ndarray:
    """Match probability of each compared pair under Fellegi-Sunter, fitted by EM.

    ``agreement`` is a 0/1 matrix (pairs x comparison fields).  Fields are independent
    given the match status (m-probabilities ``P(agree | match)``, u-probabilities
    ``P(agree | non-match)``); EM starts where ``recordlinkage``'s ECM classifier starts
    (match share 0.1, m = 0.9, u = 0.1) and returns the posterior match probability.

    Examples
    --------
    >>> g = np.array([[1, 1]] * 5 + [[0, 0]] * 45 + [[1, 0]] * 5 + [[0, 1]] * 5)
    >>> p = fellegi_sunter_em(g)
    >>> bool(p[0] > 0.9), bool(p[5] < 0.1)
    (True, True)
    """
    g = np.asarray(agreement, dtype=float)
    share, m, u = 0.1, np.full(g.shape[1], 0.9), np.full(g.shape[1], 0.1)
    posterior = np.zeros(len(g))
    for _ in range(max_iter):
        eps = 1e-12
        log_match = np.log(share) + g @ np.log(m + eps) + (1 - g) @ np.log(1 - m + eps)
        log_other = np.log(1 - share) + g @ np.log(u + eps) + (1 - g) @ np.log(1 - u + eps)
        new = 1.0 / (1.0 + np.exp(np.clip(log_other - log_match, -700, 700)))
        share = float(np.clip(new.mean(), 1e-9, 1 - 1e-9))
        m = (new @ g) / max(new.sum(), eps)
        u = ((1 - new) @ g) / max((1 - new).sum(), eps)
        if np.abs(new - posterior).max() < tol:
            posterior = new
            break
        posterior = new
    return posterior


def interval_disclosure(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    columns: Sequence[str],
    p: float = 0.1,
    method: str = "rank",
    true_rows: Sequence[int] | np.ndarray | None = None,
) -> float:
    """Share of records whose every original value lies in an interval around its masked one.

    ``method="rank"``: the interval spans the original values ranked within ``p * n`` of the
    masked value's rank; ``method="sd"``: ``y +- p * sd(x)``.  A record counts as disclosed
    when all ``columns`` fall inside (records not published are not disclosed).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    >>> interval_disclosure(t, t, ["x"], method="sd")
    1.0

    References
    ----------
    J. Domingo-Ferrer, J. M. Mateo-Sanz, V. Torra. Comparing SDC methods for microdata on
    the basis of information loss and disclosure risk. NTTS-ETK 2001.
    """
    if method not in ("rank", "sd"):
        raise InputError(f"method must be 'rank' or 'sd', got {method!r}")
    n = len(original)
    where = _positions(n, len(masked), true_rows)
    published = np.flatnonzero(where >= 0)
    if not published.size:
        return 0.0
    inside = np.ones(published.size, dtype=bool)
    for col in columns:
        x = original[col].to_numpy(dtype=float)
        y = masked[col].to_numpy(dtype=float)[where[published]]
        own = x[published]
        if method == "sd":
            inside &= np.abs(own - y) <= p * x.std(ddof=1) if n > 1 else own == y
        else:
            ranked = np.sort(x)
            width = int(np.floor(p * n))
            rank = np.clip(np.searchsorted(ranked, y), 0, n - 1)
            low = ranked[np.clip(rank - width, 0, n - 1)]
            high = ranked[np.clip(rank + width, 0, n - 1)]
            inside &= (own >= low) & (own <= high)
    return float(inside.sum() / n)


def individual_risk(
    df: pd.DataFrame, keys: Sequence[str], weights: Sequence[float] | float | None = None
) -> dict[str, float]:
    """sdcMicro's individual risk of categorical keys (Benedetti-Franconi).

    Each record's risk is the probability of a correct match in the population given its
    key's sample frequency ``f`` and estimated population frequency ``F = sum of weights``;
    with ``p = f / F``: ``p / (1 - p) * log(1 / p)`` for ``f = 1``, ``p / (1 - p) -
    (p / (1 - p))^2 log(1 / p)`` for ``f = 2``, and ``p / (f - (1 - p))`` beyond; ``1 / f``
    when the table is the population (weights 1).

    Returns
    -------
    dict
        ``individual_risk_mean``, ``individual_risk_max`` and ``expected_reidentifications``
        (the sum over records).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": ["x", "x", "y"]})
    >>> individual_risk(t, ["a"])["expected_reidentifications"]
    2.0

    References
    ----------
    L. Franconi, S. Polettini. Individual risk estimation in mu-Argus: a review. PSD 2004.
    M. Templ, A. Kowarik, B. Meindl. Statistical disclosure control for micro-data using
    the R package sdcMicro. J. Stat. Softw. 67(4), 2015.
    """
    columns = require_columns(df, keys, argument="the table", parameter="keys", role="key")
    n = len(df)
    if n == 0:
        return {
            "individual_risk_mean": 0.0,
            "individual_risk_max": 0.0,
            "expected_reidentifications": 0.0,
        }
    if weights is None:
        w = np.ones(n)
    else:
        w = np.broadcast_to(np.asarray(weights, dtype=float), (n,)).astype(float)
        if (w < 1).any() or not np.isfinite(w).all():
            raise InputError("weights must be finite numbers >= 1")
    labels = _class_labels(df, columns)
    f = np.bincount(labels)[labels].astype(float)
    big_f = np.bincount(labels, weights=w)[labels]
    p = np.clip(f / big_f, 1e-12, 1.0)
    risk = 1.0 / f
    sampled = p < 1.0 - 1e-12
    q = np.where(sampled, p / np.where(sampled, 1.0 - p, 1.0), 0.0)
    log = np.log(1.0 / p)
    risk = np.where(sampled & (f == 1), q * log, risk)
    risk = np.where(sampled & (f == 2), q - q**2 * log, risk)
    risk = np.where(sampled & (f >= 3), p / (f - (1.0 - p)), risk)
    risk = np.clip(risk, 0.0, 1.0)
    return {
        "individual_risk_mean": float(risk.mean()),
        "individual_risk_max": float(risk.max()),
        "expected_reidentifications": float(risk.sum()),
    }


def special_uniques(df: pd.DataFrame, keys: Sequence[str], max_size: int = 3) -> dict[str, Any]:
    """SUDA: minimal sample uniques (MSUs) of categorical keys and special uniques.

    An MSU of a record is a set of keys on which the record is unique in the table while
    it is unique on none of the set's subsets.  Sets of at most ``max_size`` keys are
    searched.  A record with an MSU is *special unique* (re-identifiable from a few of its
    values); its SUDA score sums ``(M - |MSU|)!`` over its MSUs (``M`` keys), so smaller
    MSUs weigh more.

    Returns
    -------
    dict
        ``special_uniques`` (records with an MSU), ``suda_score_mean``, ``suda_score_max``,
        ``msu_size_min`` (0 when none), ``max_size``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "u"]})
    >>> special_uniques(t, ["a", "b"])["special_uniques"]
    2

    References
    ----------
    M. J. Elliot, A. M. Manning, R. W. Ford. A computational algorithm for handling the
    special uniques problem. IJUFKS 10(5), 2002.
    """
    from itertools import combinations
    from math import factorial

    columns = require_columns(df, keys, argument="the table", parameter="keys", role="key")
    n, m = len(df), len(columns)
    codes = {c: _class_labels(df, [c]) for c in columns}
    unique_on: dict[tuple[str, ...], np.ndarray] = {}
    score = np.zeros(n)
    smallest = 0
    for size in range(1, min(max_size, m) + 1):
        for subset in combinations(columns, size):
            key = np.zeros(n, dtype=np.int64)
            for c in subset:
                key = pd.factorize(key * (codes[c].max() + 1) + codes[c])[0].astype(np.int64)
            unique = np.bincount(key)[key] == 1
            unique_on[subset] = unique
            minimal = unique.copy()
            if size > 1:
                for sub in combinations(subset, size - 1):
                    minimal &= ~unique_on[sub]
            if minimal.any():
                score[minimal] += factorial(m - size)
                smallest = smallest or size
    special = score > 0
    return {
        "special_uniques": int(special.sum()),
        "suda_score_mean": float(score.mean()) if n else 0.0,
        "suda_score_max": float(score.max()) if n else 0.0,
        "msu_size_min": int(smallest),
        "max_size": int(max_size),
    }


def perturbation_risk(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
    *,
    seed: int = 0,
    true_rows: Sequence[int] | np.ndarray | None = None,
    probabilistic: bool = True,
) -> dict[str, Any]:
    """The risk measures of a perturbed table against its original (one call per side).

    Distance-based linkage over every perturbed column; with numeric columns,
    Fellegi-Sunter linkage (EM) and rank- and SD-based interval disclosure (p = 10%); with
    categorical columns, sample uniques, individual risk and SUDA special uniques of the
    masked table.  No perturbed column (sampling alone): nothing to link on, no measure.
    """
    if not numeric and not categorical:
        return {}
    out: dict[str, Any] = {
        "distance_linkage": distance_linkage(
            original, masked, numeric, categorical, true_rows, seed=seed
        )
    }
    if probabilistic:
        out["probabilistic_linkage"] = probabilistic_linkage(
            original, masked, numeric, categorical, true_rows, seed=seed
        )["rate"]
    if numeric:
        for method in ("rank", "sd"):
            out[f"interval_disclosure_{method}"] = interval_disclosure(
                original, masked, numeric, 0.1, method, true_rows
            )
    if categorical:
        labels = _class_labels(masked, list(categorical))
        out["sample_uniques"] = int((np.bincount(labels)[labels] == 1).sum())
        out.update(individual_risk(masked, categorical))
        suda = special_uniques(masked, categorical)
        out["special_uniques"] = suda["special_uniques"]
        out["suda_score_mean"] = suda["suda_score_mean"]
    return out
