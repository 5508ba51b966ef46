"""PRAM: post-randomization of categorical columns, with invariant transition matrices."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon._finish import Timings
from structanon._validation import check_float, check_int
from structanon.errors import InputError
from structanon.io import Pseudonymizer, file_lines, release_key

from ._anonymize import TabularRelease
from ._sdc import Perturbation, PublishedTableCheck, categorical_columns, publish_perturbed

__all__ = ["pram", "basic_transition", "invariant_transition", "read_transition"]


def basic_transition(n_categories: int, keep: float) -> np.ndarray:
    """The default PRAM matrix: keep a category with probability ``keep``, else move to
    any other category uniformly.

    Examples
    --------
    >>> basic_transition(3, 0.8).round(2).tolist()
    [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]
    """
    if n_categories == 1:
        return np.ones((1, 1))
    off = (1.0 - keep) / (n_categories - 1)
    return np.full((n_categories, n_categories), off) + np.eye(n_categories) * (keep - off)


def invariant_transition(transition: np.ndarray, marginal: np.ndarray) -> np.ndarray:
    """Make ``transition`` invariant for ``marginal``: ``marginal @ P* = marginal``.

    ``P* = P Q`` with the backward matrix ``Q[k, l] = P[l, k] p[l] / sum_j P[j, k] p[j]``
    (Gouweleeuw, Kooiman, Willenborg and de Wolf 1998), so the expected published counts
    equal the original ones.

    Examples
    --------
    >>> p = np.array([0.5, 0.3, 0.2])
    >>> star = invariant_transition(basic_transition(3, 0.8), p)
    >>> np.allclose(p @ star, p), np.allclose(star.sum(axis=1), 1)
    (True, True)
    """
    p = np.asarray(marginal, dtype=float)
    arriving = p @ transition  # probability of each published category
    backward = (transition * p[:, None]).T / np.where(arriving > 0, arriving, 1.0)[:, None]
    return transition @ backward


def _matrix(column: str, categories: np.ndarray, transition: Any, keep: float) -> np.ndarray:
    """The transition matrix of ``column`` over its sorted categories, checked."""
    k = categories.size
    if transition is None:
        return basic_transition(k, keep)
    if isinstance(transition, pd.DataFrame):
        missing = [
            c for c in categories if c not in transition.index or c not in transition.columns
        ]
        if missing:
            raise InputError(f"transition matrix lacks category {missing[0]!r}", column=column)
        matrix = transition.loc[list(categories), list(categories)].to_numpy(dtype=float)
    else:
        try:
            matrix = np.asarray(transition, dtype=float)
        except (TypeError, ValueError):
            raise InputError("transition matrix must be numeric", column=column) from None
        if matrix.shape != (k, k):
            raise InputError(
                f"transition matrix must be {k} x {k} (sorted categories "
                f"{list(categories)[:5]}...), got shape {matrix.shape}",
                column=column,
            )
    if not np.isfinite(matrix).all() or (matrix < 0).any():
        raise InputError("transition probabilities must be finite and >= 0", column=column)
    if not np.allclose(matrix.sum(axis=1), 1.0, atol=1e-9):
        raise InputError("each row of the transition matrix must sum to 1", column=column)
    return matrix


def read_transition(path: str | Path) -> pd.DataFrame:
    """Read a PRAM transition matrix from a CSV file: the categories as header and as first
    column (``P[k, l]`` in row ``k``, column ``l``), each row summing to 1.

    Raises
    ------
    InputError
        Naming the file (and the line): unreadable, empty, not square, row and column labels
        that differ or repeat, a value that is not a number, negative, or a row that does
        not sum to 1.
    """
    where = str(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, header=None)
    except pd.errors.EmptyDataError:
        raw = pd.DataFrame()
    except (OSError, UnicodeError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read the transition matrix: {exc}", path=where) from None
    rows = [str(v).strip() for v in raw.iloc[1:, 0]] if raw.shape[1] else []
    cols = [str(v).strip() for v in raw.iloc[0, 1:]] if len(raw) else []
    raw = raw.iloc[1:, 1:]
    if not rows or not cols:
        raise InputError(
            "the transition matrix is empty (need the categories as header and first column)",
            path=where,
        )
    if len(rows) != len(cols):
        raise InputError(
            f"the transition matrix is not square: {len(rows)} rows, {len(cols)} columns",
            path=where,
        )
    for what, labels in (("row", rows), ("column", cols)):
        if len(set(labels)) != len(labels):
            twice = next(v for v in labels if labels.count(v) > 1)
            raise InputError(f"{what} label {twice!r} appears twice", path=where)
    if set(rows) != set(cols):
        odd = sorted(set(rows) ^ set(cols))[0]
        raise InputError(
            f"row and column labels differ (e.g. {odd!r}): both must list the categories",
            path=where,
        )
    matrix = pd.DataFrame(index=rows, columns=cols, dtype=float)
    lines = file_lines(path, range(len(rows)))  # blank lines counted
    for i, label in enumerate(rows):
        line = lines[i]
        try:
            values = np.array([float(v) for v in raw.iloc[i]], dtype=float)
        except ValueError:
            raise InputError(
                f"row {label!r}: every probability must be a number", path=where, line=line
            ) from None
        if not np.isfinite(values).all() or (values < 0).any():
            raise InputError(
                f"row {label!r}: probabilities must be finite and >= 0", path=where, line=line
            )
        if not np.isclose(values.sum(), 1.0, atol=1e-9):
            raise InputError(
                f"row {label!r} sums to {values.sum():g}, not 1", path=where, line=line
            )
        matrix.iloc[i] = values
    return matrix


def match_transition(
    matrix: pd.DataFrame, values: pd.Series, column: str, path: str | None = None
) -> pd.DataFrame:
    """``matrix`` (labels read as text) relabelled with the categories of ``values``;
    an :class:`InputError` names a category the matrix lacks or a label that is no category."""
    by_text = {str(v): v for v in pd.unique(values.dropna())}
    labels = [str(v) for v in matrix.index]
    lacking = [t for t in sorted(by_text) if t not in labels]
    if lacking:
        raise InputError(
            f"the transition matrix lacks category {lacking[0]!r}", column=column, path=path
        )
    extra = [t for t in labels if t not in by_text]
    if extra:
        raise InputError(
            f"the transition matrix has label {extra[0]!r}, not a category of the column",
            column=column,
            path=path,
        )
    out = matrix.copy()
    out.index = [by_text[t] for t in labels]
    out.columns = [by_text[str(t)] for t in matrix.columns]
    return out


def _stochastic(info: Mapping[str, Any]):
    """A check of the published matrices read off the release alone."""

    def check(_: pd.DataFrame) -> tuple[bool, dict[str, Any]]:
        for col, entry in info.items():
            m = np.asarray(entry["matrix"], dtype=float)
            if (m < -1e-12).any() or not np.allclose(m.sum(axis=1), 1.0, atol=1e-9):
                return False, {"problem": f"published matrix of {col!r} is not stochastic"}
        return True, {}

    return check


def pram(
    df: pd.DataFrame,
    columns: Sequence[str],
    transition: Any = None,
    invariant: bool = True,
    keep: float = 0.8,
    seed: int = 0,
    *,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
) -> TabularRelease:
    """Post-randomization (PRAM): each category is replaced by a random draw from its row
    of a transition matrix; the matrices are published.

    Parameters
    ----------
    df : pandas.DataFrame
    columns : sequence of str
        Categorical columns, each randomized on its own.
    transition : matrix, DataFrame, or dict column -> matrix, optional
        ``P[k, l]``: probability that category ``k`` is published as ``l``, over the
        column's sorted categories (a DataFrame is indexed by category).  Default: keep
        with probability ``keep``, else any other category uniformly.
    invariant : bool
        Turn each matrix into its invariant version for the column's marginal ``p``
        (``p P* = p``), so expected published counts equal the original ones.
    keep : float in (0, 1]
        Diagonal of the default matrix.
    seed : int
        Public seed: the measures and the row order only: the masking draws leave it out, so one key and one input
        give one mask whatever the seed (re-releases cannot be averaged).
    key : Pseudonymizer, bytes, str or path, optional
        The release key: every draw comes from it, never from the public seed.
    measures : bool

    Returns
    -------
    TabularRelease
        ``info["transition"][column]``: the categories and the matrix applied, so users
        can correct their estimates (``p_hat = q_published @ inv(P)``).  Reports show it
        without ``invariant`` only: an invariant matrix is built from the input's exact
        category shares (times ``n``, its exact counts), so it stays in Python
        (``release.withheld``).

    Raises
    ------
    InputError
        Unknown columns, missing values, a matrix of the wrong shape, negative or
        non-stochastic.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"edu": ["a"] * 50 + ["b"] * 30 + ["c"] * 20})
    >>> r = pram(t, ["edu"], key=b"0123456789abcdef", measures=False)
    >>> sorted(set(r.data["edu"])) <= ["a", "b", "c"], r.info["transition"]["edu"]["invariant"]
    (True, True)

    Notes
    -----
    The published counts :math:`T^*` satisfy :math:`E(T^*) = P^T T`; with an invariant
    matrix :math:`E(T^*) = T`, and for any matrix :math:`\\hat T = (P^T)^{-1} T^*` is
    unbiased.

    References
    ----------
    P.-P. de Wolf, J. M. Gouweleeuw, P. Kooiman, L. Willenborg. Reflections on PRAM.
    SDP 1998.  J. M. Gouweleeuw, P. Kooiman, L. C. R. J. Willenborg, P.-P. de Wolf.
    Post randomisation for statistical disclosure control: theory and implementation.
    J. Off. Stat. 14(4), 1998.
    """
    timings = Timings()
    keep = check_float(keep, "keep", min_value=0, max_value=1, include_min=False)
    seed = check_int(seed, "seed", min_value=0)
    if not isinstance(invariant, bool):
        raise InputError(f"invariant must be True or False, got {invariant!r}")
    columns = categorical_columns(df, columns)
    n = len(df)
    secret = release_key(key).bound(df)  # streams bound to the input (see bound)
    public = repr({"columns": columns, "invariant": invariant, "keep": keep})
    masked = df.reset_index(drop=True).copy()
    published: dict[str, Any] = {}
    with timings("pram"):
        for col in columns:
            codes, found = pd.factorize(df[col], sort=True)
            categories = np.asarray(found)
            given = transition.get(col) if isinstance(transition, Mapping) else transition
            matrix = _matrix(col, categories, given, keep)
            if invariant:
                marginal = np.bincount(codes, minlength=categories.size) / n
                matrix = invariant_transition(matrix, marginal)
            cumulative = np.cumsum(matrix, axis=1)
            cumulative[:, -1] = 1.0
            u = secret.rng("pram", n, public, col).random(n)
            drawn = (cumulative[codes] < u[:, None]).sum(axis=1)
            masked[col] = categories[np.minimum(drawn, categories.size - 1)]
            published[col] = {
                "categories": categories.tolist(),
                "matrix": matrix.tolist(),
                "invariant": invariant,
            }
    model = Perturbation("pram", invariant=invariant)
    release = publish_perturbed(
        df,
        masked,
        model=model,
        verifier=PublishedTableCheck(
            model,
            n,
            categories={c: published[c]["categories"] for c in columns},
            extra=_stochastic(published),
        ),
        parameters={"algorithm": "pram", "columns": columns, "invariant": invariant, "keep": keep},
        info={"transition": published},
        secret=secret,
        seed=seed,
        public=public,
        timings=timings,
        measures=measures,
        categorical=columns,
    )
    if invariant:
        # invariant matrices are built from the input's exact shares (times n: its exact
        # counts, which the randomized release hides): readable in Python
        # (release.info["transition"]), never written to a report
        release.withheld = (*release.withheld, "transition")
    return release
