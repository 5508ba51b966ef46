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

__all__ = ["assess", "record_linkage"]

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
