"""Slicing: correlated attributes kept together, the links between column groups broken.

Li, Li, Zhang & Molloy's slicing partitions the attributes into columns (groups of correlated
attributes, clustered by the mean-square contingency coefficient phi^2), partitions the records
into buckets, and inside each bucket permutes each column's values at random, so a column's
values stay exact and keep their correlations while the association between columns is hidden.
Buckets are l-diverse: whoever knows a record's values of every column but the sensitive
attribute guesses its sensitive value with probability at most ``1 / l``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon import InfeasibleError, InputError, Partition, Release
from structanon._finish import Timings, finish_release
from structanon._validation import check_int, check_names
from structanon.io import Pseudonymizer, release_key
from structanon.models import ProbabilisticLDiversity
from structanon.partition import encode_column, encode_values
from structanon.release import CheckResult

from ._anatomy import BUCKET, _check_bucket_input, publish_buckets

__all__ = [
    "SlicingVerifier",
    "slice_table",
    "mean_square_contingency",
    "attribute_partition",
    "sensitive_probabilities",
]

_EPS = 1e-9


def _codes(column: pd.Series, bins: int) -> np.ndarray:
    """Integer codes of a column; a numeric column of more than ``bins`` values is cut into
    ``bins`` equal-width intervals first (the thesis's discretization)."""
    values = column.to_numpy()
    if pd.api.types.is_numeric_dtype(column) and np.unique(values).size > bins:
        edges = np.linspace(float(values.min()), float(values.max()), bins + 1)[1:-1]
        return np.searchsorted(edges, values.astype(float), side="right").astype(np.int64)
    return encode_values(values)[0]


def mean_square_contingency(a: np.ndarray, b: np.ndarray) -> float:
    """phi^2 of two coded attributes: ``sum (f_ij - f_i f_j)^2 / (f_i f_j) / (min(d1, d2) - 1)``.

    0 for independent attributes, 1 for attributes that determine each other.

    Examples
    --------
    >>> mean_square_contingency(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0]))
    1.0
    >>> mean_square_contingency(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]))
    0.0
    """
    a_codes, _ = encode_values(a)
    b_codes, _ = encode_values(b)
    d1, d2 = int(a_codes.max()) + 1, int(b_codes.max()) + 1
    if min(d1, d2) < 2:
        return 0.0
    joint = np.bincount(a_codes * d2 + b_codes, minlength=d1 * d2).reshape(d1, d2) / a.size
    expected = np.outer(joint.sum(axis=1), joint.sum(axis=0))
    return float(((joint - expected) ** 2 / expected).sum() / (min(d1, d2) - 1))


def _k_medoids(distance: np.ndarray, k: int) -> np.ndarray:
    """Cluster of each point: the medoid set of least total distance (PAM's objective),
    found by enumerating medoid sets (the points are attributes, so they are few); ties go
    to the first set in lexicographic order."""
    m = distance.shape[0]
    best, best_cost = None, np.inf
    for medoids in combinations(range(m), k):
        cost = distance[:, medoids].min(axis=1).sum()
        if cost < best_cost - 1e-12:
            best, best_cost = medoids, cost
    assert best is not None
    return np.asarray(best)[distance[:, best].argmin(axis=1)]


def attribute_partition(
    df: pd.DataFrame,
    attributes: Sequence[str],
    sensitive: str,
    n_columns: int,
    sensitive_size: int | None = None,
    bins: int = 10,
) -> list[list[str]]:
    """Group attributes into ``n_columns`` columns of correlated attributes (thesis 4.3.1).

    The distance of two attributes is ``1 - phi^2``; columns are the clusters of a
    k-medoid clustering.  With ``sensitive_size`` (the thesis's alpha), the sensitive
    column is the sensitive attribute and the ``sensitive_size - 1`` QIs most correlated
    with it, and the other QIs are clustered into ``n_columns - 1`` columns.  The column
    holding the sensitive attribute comes last.
    """
    attributes = list(attributes)
    codes = {a: _codes(df[a], bins) for a in attributes}
    m = len(attributes)
    phi = np.eye(m)
    for i, j in combinations(range(m), 2):
        phi[i, j] = phi[j, i] = mean_square_contingency(codes[attributes[i]], codes[attributes[j]])
    index = {a: i for i, a in enumerate(attributes)}
    if sensitive_size is not None:
        s = index[sensitive]
        ranked = sorted((a for a in attributes if a != sensitive), key=lambda a: -phi[s, index[a]])
        last = [*ranked[: sensitive_size - 1], sensitive]
        rest = [a for a in attributes if a not in last]
        if n_columns - 1 > len(rest) or (rest and n_columns < 2):
            raise InputError(
                f"n_columns={n_columns} does not fit {len(rest)} attributes outside the "
                "sensitive column"
            )
        sub = [index[a] for a in rest]
        labels: list[int] = (
            _k_medoids(1 - phi[np.ix_(sub, sub)], n_columns - 1).tolist() if rest else []
        )
        groups = [[a for a, g in zip(rest, labels) if g == c] for c in dict.fromkeys(labels)]
        return [*groups, [a for a in attributes if a in last]]
    labels = _k_medoids(1 - phi, n_columns).tolist()
    groups = [[a for a, g in zip(attributes, labels) if g == c] for c in dict.fromkeys(labels)]
    groups.sort(key=lambda g: sensitive in g)
    return groups


class _Diversity:
    """The bucket test: inside a bucket, the records sharing the sensitive column's QI values
    have no sensitive value above ``1 / l`` of them."""

    def __init__(self, key: np.ndarray, sens: np.ndarray, l: int) -> None:
        self.key, self.sens, self.l = key, sens, l
        self.width = int(sens.max()) + 1 if sens.size else 1

    def __call__(self, rows: np.ndarray) -> bool:
        combined = self.key[rows] * self.width + self.sens[rows]
        pairs, counts = np.unique(combined, return_counts=True)
        keys = pairs // self.width
        totals = np.bincount(np.searchsorted(np.unique(keys), keys), weights=counts)
        per_pair = totals[np.searchsorted(np.unique(keys), keys)]
        return bool((counts <= per_pair / self.l + _EPS).all())


def _cuts(rows: np.ndarray, values: np.ndarray, tries: int = 5):
    """Cuts of ``rows`` on one attribute, the median first, then the next distinct values
    on either side (Mondrian's median cut, with a few fallbacks when a half fails)."""
    v = values[rows]
    distinct = np.unique(v)
    if distinct.size < 2:
        return
    middle = int(np.searchsorted(distinct, np.sort(v)[(v.size - 1) // 2]))
    middle = min(middle, distinct.size - 2)
    order = sorted(range(distinct.size - 1), key=lambda i: (abs(i - middle), i))
    for i in order[:tries]:
        left = v <= distinct[i]
        yield rows[left], rows[~left]


def _deal(
    rows: np.ndarray, diverse: _Diversity, l: int, rng: np.random.Generator
) -> list[np.ndarray] | None:
    """Split a bucket no cut splits into ``g`` l-diverse buckets, Anatomy-style.

    The records of each value of the sensitive column's other attributes are shuffled,
    sorted by sensitive value and dealt round robin (from a random offset) into ``g``
    buckets, so each bucket gets about ``1 / g`` of every such group and of each of its
    sensitive values; ``g`` starts at the most that leaves ``l`` records of the smallest
    group per bucket and is halved until every bucket passes (None when ``g < 2``).
    """
    keys, sens = diverse.key[rows], diverse.sens[rows]
    groups, counts = np.unique(keys, return_counts=True)
    g = int(counts.min()) // l
    while g >= 2:
        bucket = np.empty(rows.size, dtype=np.int64)
        for group in groups:
            members = rng.permutation(np.flatnonzero(keys == group))
            members = members[np.argsort(sens[members], kind="stable")]
            bucket[members] = (np.arange(members.size) + int(rng.integers(g))) % g
        parts = [rows[bucket == b] for b in range(g)]
        if all(diverse(part) for part in parts):
            return parts
        g //= 2
    return None


def tuple_partition(
    qi_codes: np.ndarray,
    diverse: _Diversity,
    rng: np.random.Generator | None = None,
    l: int = 2,
) -> np.ndarray:
    """Buckets by Mondrian cuts kept only while both halves pass ``diverse`` (thesis Fig. 4.1).

    Returns the bucket of each record.  Attributes are tried by decreasing normalized range,
    each at its median and a few distinct values around it.  A bucket no cut splits is,
    when ``rng`` is given, dealt into smaller l-diverse buckets by :func:`_deal` (Anatomy's
    dealing, per value of the sensitive column's other attributes; the thesis's
    membership experiment also uses random tuple partitions).
    """
    n = qi_codes.shape[0]
    extent = np.maximum(qi_codes.max(axis=0) - qi_codes.min(axis=0), 1).astype(float)

    def cut(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        width = (qi_codes[rows].max(axis=0) - qi_codes[rows].min(axis=0)) / extent
        for attribute in np.argsort(-width, kind="stable"):
            if width[attribute] == 0:
                return None
            for halves in _cuts(rows, qi_codes[:, attribute]):
                if diverse(halves[0]) and diverse(halves[1]):
                    return halves
        return None

    queue = [np.arange(n)]
    done: list[np.ndarray] = []
    while queue:
        rows = queue.pop()
        halves = cut(rows)
        if halves is not None:
            queue.extend(halves)
        else:
            dealt = None if rng is None else _deal(rows, diverse, l, rng)
            done.extend([rows] if dealt is None else dealt)
    bucket = np.empty(n, dtype=np.int64)
    for b, rows in enumerate(done):
        bucket[rows] = b
    return bucket


class SlicingVerifier:
    """``verifier(sliced_table) -> [CheckResult]`` from the sliced table alone.

    Groups the rows by bucket and by the values of the sensitive column's other attributes;
    no sensitive value may exceed ``1 / l`` of a group (then no record, whatever its values,
    has a sensitive value more likely than ``1 / l`` in any bucket it matches, so the
    thesis's l-diverse slicing holds).
    """

    def __init__(self, columns: Sequence[Sequence[str]], sensitive: str, l: int) -> None:
        self.columns = [list(c) for c in columns]
        self.sensitive, self.l = sensitive, l

    def __call__(self, data: pd.DataFrame) -> list[CheckResult]:
        own = next(c for c in self.columns if self.sensitive in c)
        keys = [BUCKET, *[a for a in own if a != self.sensitive]]
        partition = (
            Partition.from_keys(data[keys]) if len(data) else Partition(np.zeros(0, np.int64))
        )
        result = ProbabilisticLDiversity(self.l).check(partition, data[self.sensitive].to_numpy())
        result.model = f"l-diverse-slicing(l={self.l})"
        return [result]

    def __repr__(self) -> str:
        return f"SlicingVerifier(columns={self.columns}, sensitive={self.sensitive!r}, l={self.l})"


def _check_columns_given(columns: Any, attributes: list[str]) -> list[list[str]]:
    if isinstance(columns, str | bytes) or not isinstance(columns, Iterable):
        raise InputError(f"columns must be a list of column groups, got {columns!r:.60}")
    groups = [[c] if isinstance(c, str) else check_names(c, "columns") for c in columns]
    flat = [a for g in groups for a in g]
    if any(not g for g in groups) or sorted(flat) != sorted(attributes):
        raise InputError(
            f"columns must partition the quasi-identifiers and the sensitive column "
            f"{attributes}, got {groups}"
        )
    return groups


def slice_table(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    l: int,
    n_columns: int = 2,
    seed: int = 0,
    *,
    columns: Sequence[Sequence[str]] | None = None,
    sensitive_size: int | None = None,
    bins: int = 10,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
) -> Release:
    """Slice a table: columns of correlated attributes, l-diverse buckets, permuted inside.

    Parameters
    ----------
    df : pandas.DataFrame
    quasi_identifiers : sequence of str
    sensitive : str
    l : int >= 2
        Inside a bucket, no sensitive value holds more than ``1 / l`` of the records sharing
        the sensitive column's other values.
    n_columns : int
        Number of columns ``c`` of the attribute partition (default 2).
    seed : int, default 0
        Public seed; only context of the secret draws.
    columns : list of lists of str, optional
        The attribute partition, instead of the phi^2 clustering.
    sensitive_size : int, optional
        Number of attributes of the sensitive column (the thesis's alpha: the sensitive
        attribute and its ``alpha - 1`` most correlated QIs).
    bins : int
        Numeric attributes of more than ``bins`` values are cut into ``bins`` equal-width
        intervals to measure phi^2.
    key : Pseudonymizer, bytes, str or path, optional
        Secret key: it draws the permutations inside buckets, the bucket ids and the row
        order.  Default: a fresh random key.
    measures : bool

    Returns
    -------
    Release
        ``data``: the sliced table (the quasi-identifiers, the sensitive column and
        ``bucket``; other input columns are not published), rows listed by bucket id, each
        column's values permuted inside its bucket; ``info["columns"]``: the attribute
        partition.  Verified from the table alone (:class:`SlicingVerifier`).

    Raises
    ------
    InputError
        Bad parameters or columns.
    InfeasibleError
        When even the whole table is not ``l``-diverse.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"age": [22, 22, 33, 52, 54, 60, 60, 64],
    ...                   "sex": list("MFFFMMMF"),
    ...                   "disease": ["dysp", "flu", "flu", "bron", "flu", "dysp", "dysp", "gast"]})
    >>> r = slice_table(t, ["age", "sex"], "disease", l=2, columns=[["age", "sex"], ["disease"]],
    ...                 seed=0, key=b"0123456789abcdef", measures=False)
    >>> r.info["columns"], sorted(r.data["age"].tolist()) == sorted(t["age"].tolist())
    ([['age', 'sex'], ['disease']], True)

    References
    ----------
    T. Li, N. Li, J. Zhang, I. Molloy. Slicing: a new approach for privacy preserving data
    publishing. TKDE 24(3), 2012.  T. Li, PhD thesis, Purdue 2010, chapter 4.
    """
    timings = Timings()
    qis = _check_bucket_input(df, quasi_identifiers, sensitive)
    # slicing buckets by the QIs: each encoded once, here, its errors naming the column
    qi_codes = np.column_stack([encode_column(df[c], c)[0] for c in qis])
    l = check_int(l, "l", min_value=2)
    n_columns = check_int(n_columns, "n_columns", min_value=1, max_value=len(qis) + 1)
    bins = check_int(bins, "bins", min_value=2)
    if sensitive_size is not None:
        sensitive_size = check_int(
            sensitive_size, "sensitive_size", min_value=1, max_value=len(qis) + 1
        )
    seed = check_int(seed, "seed", min_value=0)
    secret = release_key(key).bound(df)  # streams bound to the input (see bound)
    attributes = [*qis, sensitive]
    with timings("attributes"):
        groups = (
            _check_columns_given(columns, attributes)
            if columns is not None
            else attribute_partition(df, attributes, sensitive, n_columns, sensitive_size, bins)
        )
        if columns is None:
            groups = _feasible_columns(df, groups, sensitive, l, bins)
    public = repr({"scheme": "slicing", "columns": groups, "sensitive": sensitive, "l": l})
    with timings("buckets"):
        bucket = _buckets(
            df, qi_codes, sensitive, groups, l, secret.rng("slicing-buckets", len(df), public)
        )
    with timings("publish"):
        sliced, n_buckets = _permute(df, groups, bucket, secret.rng("slicing", len(df), public))
    release = Release(
        data=sliced,
        datatype="tabular",
        verifier=SlicingVerifier(groups, sensitive, l),
        models=[ProbabilisticLDiversity(l)],
        partition=Partition(bucket),
        parameters={
            "scheme": "slicing",
            "quasi_identifiers": qis,
            "sensitive": sensitive,
            "l": l,
            "n_columns": len(groups),
            "seed": seed,
        },
        n_individuals=len(df),
        info={"columns": groups, "n_buckets": n_buckets},
    )

    def measure(release: Release) -> None:
        sizes = np.bincount(bucket)
        release.utility = {
            "n_buckets": n_buckets,
            "bucket_size_min": int(sizes.min()),
            "bucket_size_max": int(sizes.max()),
        }
        checks = release.checks.checks if release.checks is not None else []
        worst = checks[0].worst if checks else float("nan")
        release.risk = {"after": {"sensitive_value_probability_max": float(1.0 / worst)}}

    return finish_release(release, measure, measures=measures, timings=timings)


def _whole_table_diverse(df: pd.DataFrame, groups: list[list[str]], sensitive: str, l: int) -> bool:
    own = [a for a in next(g for g in groups if sensitive in g) if a != sensitive]
    key = Partition.from_keys(df[own]).labels if own else np.zeros(len(df), dtype=np.int64)
    sens = encode_values(df[sensitive].to_numpy())[0]
    return _Diversity(key, sens, l)(np.arange(len(df)))


def _feasible_columns(
    df: pd.DataFrame, groups: list[list[str]], sensitive: str, l: int, bins: int
) -> list[list[str]]:
    """Move QIs out of the sensitive column, least correlated with the sensitive attribute
    first, until the whole table is ``l``-diverse with it (else no bucket could be); each
    goes to the other column it is most correlated with on average."""
    groups = [list(g) for g in groups]
    codes = {a: _codes(df[a], bins) for g in groups for a in g}

    def phi(a: str, b: str) -> float:
        return mean_square_contingency(codes[a], codes[b])

    while not _whole_table_diverse(df, groups, sensitive, l):
        own = next(g for g in groups if sensitive in g)
        movable = [a for a in own if a != sensitive]
        if not movable:
            break
        weakest = min(movable, key=lambda a: phi(a, sensitive))
        own.remove(weakest)
        others = [g for g in groups if sensitive not in g]
        if others:
            max(others, key=lambda g: float(np.mean([phi(weakest, b) for b in g]))).append(weakest)
        else:
            groups.insert(0, [weakest])
    return groups


def _buckets(
    df: pd.DataFrame,
    qi_codes: np.ndarray,
    sensitive: str,
    groups: list[list[str]],
    l: int,
    rng: np.random.Generator,
) -> np.ndarray:
    own = [a for a in next(g for g in groups if sensitive in g) if a != sensitive]
    key = Partition.from_keys(df[own]).labels if own else np.zeros(len(df), dtype=np.int64)
    sens = encode_values(df[sensitive].to_numpy())[0]
    diverse = _Diversity(key, sens, l)
    if not diverse(np.arange(len(df))):
        raise InfeasibleError(
            f"no {l}-diverse slicing exists with these columns: the whole table is one bucket "
            f"and a sensitive value still holds more than 1/{l} of some records"
        )
    return tuple_partition(qi_codes, diverse, rng, l)


def _permute(
    df: pd.DataFrame, groups: list[list[str]], bucket: np.ndarray, rng: np.random.Generator
) -> tuple[pd.DataFrame, int]:
    """The sliced table: rows by secret bucket id; each column group permuted in its bucket."""
    n_buckets = int(bucket.max()) + 1
    ids, order = publish_buckets(bucket, n_buckets, rng)
    out: dict[str, Any] = {}
    for group in groups:
        shuffled = rng.permutation(bucket.size)
        rows = shuffled[np.argsort(ids[shuffled], kind="stable")]
        for attribute in group:
            out[attribute] = df[attribute].to_numpy()[rows]
    frame = pd.DataFrame({a: out[a] for a in df.columns if a in out})
    frame[BUCKET] = ids[order]
    return frame, n_buckets


def sensitive_probabilities(
    sliced: pd.DataFrame,
    columns: Sequence[Sequence[str]],
    sensitive: str,
    record: dict[str, Any],
) -> dict[str, Any]:
    """What a sliced table tells about one record's sensitive value (thesis 4.2.2).

    For each bucket ``B``: ``f_i(t, B)``, the share of ``B``'s values of column ``i`` equal to
    the record's (for the sensitive column, on its attributes other than the sensitive
    one); ``p(t, B)`` proportional to their product; ``D(t, B)``, the distribution of
    sensitive values among ``B``'s sensitive-column entries matching the record.  Returns
    ``{"f": {bucket: [f_1, ...]}, "p_bucket": {bucket: p}, "D": {bucket: {s: share}},
    "p": {s: p(t, s)}}`` with ``p(t, s) = sum_B p(t, B) D(t, B)[s]``.
    """
    groups = [list(c) for c in columns]
    f: dict[Any, list[float]] = {}
    dist: dict[Any, dict[Any, float]] = {}
    for b, rows in sliced.groupby(BUCKET, sort=True):
        shares = []
        for group in groups:
            match = np.ones(len(rows), dtype=bool)
            for a in group:
                if a != sensitive:
                    match &= rows[a].to_numpy() == record[a]
            shares.append(float(match.mean()))
            if sensitive in group and match.any():
                counts = rows.loc[match, sensitive].value_counts(normalize=True)
                dist[b] = {k: float(v) for k, v in counts.items()}
        f[b] = shares
    weight = {b: float(np.prod(v)) for b, v in f.items()}
    total = sum(weight.values())
    p_bucket = {b: (w / total if total else 0.0) for b, w in weight.items()}
    p: dict[Any, float] = {}
    for b, pb in p_bucket.items():
        for s, share in dist.get(b, {}).items():
            p[s] = p.get(s, 0.0) + pb * share
    return {"f": f, "p_bucket": p_bucket, "D": dist, "p": p}
