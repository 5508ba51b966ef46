"""What every perturbative release of a table shares: input checks, publication, measures.

Statistical disclosure control by perturbation (microaggregation, noise, rank swapping,
PRAM, recoding, sampling) publishes every record with some values changed.  Each method
lives in its own module; this one holds the common ending: rows shuffled with the secret
key, a :class:`~tabular.TabularRelease` with a verifier that re-checks the published table
from the output alone, and the measures of perturbed data (utility: means, variances,
correlations, SSE/SST, IL1s; risk before and after: record linkage, interval disclosure,
individual risk and special uniques of categorical keys).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from structanon._finish import Timings, finish_release
from structanon._validation import warn_repeated_labels
from structanon.errors import InputError, at_row
from structanon.io import Pseudonymizer
from structanon.release import CheckResult, Release, published_types

from . import risk as tab_risk
from ._anonymize import TabularRelease
from ._input import require_columns

__all__ = [
    "Perturbation",
    "PublishedTableCheck",
    "numeric_frame",
    "categorical_columns",
    "publish_perturbed",
    "perturbation_utility",
    "information_loss",
]


class Perturbation:
    """The disclosure-control method a release claims, with its public parameters.

    Perturbative methods are not predicates over groups of records: what the release
    guarantees is checked structurally by :class:`PublishedTableCheck` (and, for
    microaggregation, by k-anonymity), and what it protects is measured (``release.risk``).

    Examples
    --------
    >>> Perturbation("noise-addition", alpha=0.1, method="correlated")
    noise-addition(alpha=0.1, method=correlated)
    """

    def __init__(self, name: str, **parameters: Any) -> None:
        self.name = name
        self.parameters = parameters

    def describe(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.parameters.items())
        return f"{self.name}({params})"

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name, **self.parameters}

    def __repr__(self) -> str:
        return self.describe()


class PublishedTableCheck:
    """Verifier of a perturbed table: the published columns hold what the method claims.

    Parameters
    ----------
    model : Perturbation
        The method; its description names the check.
    records : int
        Records the release says it publishes.
    numeric : sequence of str
        Columns that must be numeric and finite.
    categories : dict column -> sequence, optional
        Columns whose published values must lie in the given categories (PRAM, recoding).
    extra : callable, optional
        ``extra(data) -> (passed, details)``, a further check read off the output.

    Examples
    --------
    >>> import pandas as pd
    >>> check = PublishedTableCheck(Perturbation("noise-addition"), 2, numeric=["x"])
    >>> check(pd.DataFrame({"x": [1.0, 2.0]}))[0].passed
    True
    >>> check(pd.DataFrame({"x": [1.0, float("nan")]}))[0].passed
    False
    """

    def __init__(
        self,
        model: Perturbation,
        records: int,
        numeric: Sequence[str] = (),
        categories: Mapping[str, Sequence[Any]] | None = None,
        extra: Callable[[pd.DataFrame], tuple[bool, dict[str, Any]]] | None = None,
    ) -> None:
        self.model = model
        self.records = int(records)
        self.numeric = list(numeric)
        self.categories = {c: list(v) for c, v in (categories or {}).items()}
        self.extra = extra

    def _problems(self, data: pd.DataFrame) -> list[str]:
        problems: list[str] = []
        if len(data) != self.records:
            problems.append(f"{len(data)} records published, {self.records} claimed")
        for column in self.numeric + list(self.categories):
            if column not in data.columns:
                problems.append(f"column {column!r} missing")
        for column in self.numeric:
            if column in data.columns:
                values = pd.to_numeric(data[column], errors="coerce").to_numpy(dtype=float)
                if not np.isfinite(values).all():
                    problems.append(f"column {column!r} holds a non-numeric or missing value")
        for column, allowed in self.categories.items():
            if column in data.columns:
                outside = ~data[column].isin(allowed).to_numpy()
                if outside.any():
                    problems.append(f"column {column!r} holds {int(outside.sum())} unknown values")
        return problems

    def __call__(self, data: pd.DataFrame) -> list[CheckResult]:
        problems = self._problems(data)
        details: dict[str, Any] = {}
        if self.extra is not None and not problems:
            ok, details = self.extra(data)
            if not ok:
                problems.append(details.get("problem", "method-specific check failed"))
        if problems:
            details["problems"] = problems
        return [
            CheckResult(
                self.model.describe(),
                not problems,
                float(len(problems)),
                0.0,
                1,
                np.zeros(0 if not problems else 1, dtype=np.int64),
                details,
            )
        ]

    def __repr__(self) -> str:
        return f"PublishedTableCheck({self.model.describe()}, records={self.records})"


def numeric_frame(df: Any, columns: Sequence[str], parameter: str = "columns") -> np.ndarray:
    """The ``columns`` of ``df`` as a finite float matrix (one row per record).

    Raises
    ------
    InputError
        ``df`` not a DataFrame, no or unknown columns, a column named twice, a
        non-numeric column, or a missing / infinite value (column and row named).
    """
    columns = require_columns(df, columns, argument="df", parameter=parameter, role="column")
    twice = [c for i, c in enumerate(columns) if c in columns[:i]]
    if twice:
        raise InputError(f"{parameter} names a column twice", column=twice[0])
    if len(df) == 0:
        raise InputError("the table has no rows")
    for col in columns:
        if df[col].dtype == bool or not pd.api.types.is_numeric_dtype(df[col].dtype):
            raise InputError("needs a numeric column", column=col)
        values = df[col].to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise InputError("missing or infinite value", column=col, **at_row(df, bad[0]))
    return df[columns].to_numpy(dtype=float)


def categorical_columns(df: Any, columns: Sequence[str], parameter: str = "columns") -> list[str]:
    """Check ``columns`` exist once each and hold no missing value; return them."""
    columns = require_columns(df, columns, argument="df", parameter=parameter, role="column")
    twice = [c for i, c in enumerate(columns) if c in columns[:i]]
    if twice:
        raise InputError(f"{parameter} names a column twice", column=twice[0])
    if len(df) == 0:
        raise InputError("the table has no rows")
    for col in columns:
        missing = np.flatnonzero(df[col].isna().to_numpy())
        if missing.size:
            raise InputError("missing value", column=col, **at_row(df, missing[0]))
    return columns


def information_loss(original: np.ndarray, masked: np.ndarray) -> dict[str, float]:
    """SSE/SST and IL1s of a masked numeric matrix (rows aligned with the original).

    Returns
    -------
    dict
        ``sse_sst``: within-record squared error over the total sum of squares
        (0 = nothing changed; a microaggregation's share of variance lost); ``il1s``: the
        mean over records and columns of ``|x - y| / (sqrt(2) * sd(x))`` (Yancey, Winkler
        and Creecy 2002).

    Examples
    --------
    >>> import numpy as np
    >>> information_loss(np.array([[1.0], [3.0]]), np.array([[2.0], [2.0]]))["sse_sst"]
    1.0
    """
    x = original if original.ndim == 2 else original[:, None]
    y = masked if masked.ndim == 2 else masked[:, None]
    sst = float(((x - x.mean(axis=0)) ** 2).sum())
    sse = float(((x - y) ** 2).sum())
    sd = x.std(axis=0, ddof=1) if len(x) > 1 else np.ones(x.shape[1])
    sd = np.where(sd > 0, sd, 1.0)
    il1s = float((np.abs(x - y) / (np.sqrt(2.0) * sd)).mean()) if x.size else 0.0
    return {"sse_sst": sse / sst if sst > 0 else 0.0, "il1s": il1s}


def _numeric_utility(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = dict(information_loss(x, y))
    vx, vy = x.var(axis=0, ddof=1), y.var(axis=0, ddof=1)
    sd = np.sqrt(np.where(vx > 0, vx, 1.0))
    out["mean_change_sd_max"] = float((np.abs(y.mean(axis=0) - x.mean(axis=0)) / sd).max())
    out["variance_ratio"] = [float(b / a) if a > 0 else float("nan") for a, b in zip(vx, vy)]
    if x.shape[1] >= 2:
        with np.errstate(invalid="ignore", divide="ignore"):
            cx, cy = np.corrcoef(x, rowvar=False), np.corrcoef(y, rowvar=False)
        out["correlation_change_max"] = float(np.nanmax(np.abs(cx - cy)))
    return out


def perturbation_utility(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
) -> dict[str, Any]:
    """Utility of a perturbed table, rows aligned with the original.

    Numeric columns: SSE/SST, IL1s, the largest change of a mean (in standard deviations), the variance
    ratio of each column and the largest change of a correlation.  Categorical columns:
    the share of changed values and the total-variation distance of each marginal.
    """
    out: dict[str, Any] = {}
    if numeric:
        x = original[list(numeric)].to_numpy(dtype=float)
        y = masked[list(numeric)].to_numpy(dtype=float)
        out.update(_numeric_utility(x, y))
    for col in categorical:
        a = original[col].astype(str).to_numpy()
        b = masked[col].astype(str).to_numpy()
        codes, _ = pd.factorize(np.concatenate([a, b]))
        width = int(codes.max()) + 1
        pa = np.bincount(codes[: a.size], minlength=width) / max(a.size, 1)
        pb = np.bincount(codes[a.size :], minlength=width) / max(b.size, 1)
        out[f"{col}_changed_share"] = float(np.mean(a != b)) if a.size == b.size else None
        out[f"{col}_marginal_tvd"] = 0.5 * float(np.abs(pa - pb).sum())
    return out


INPUT_STATISTICS = ("mean_change_sd_max", "variance_ratio", "correlation_change_max")


def _input_statistic(name: str) -> bool:
    """Whether the utility measure ``name`` is an exact statistic of the masked input
    (withheld from outputs) rather than one of the masking's own error.

    Examples
    --------
    >>> _input_statistic("variance_ratio"), _input_statistic("sex_marginal_tvd")
    (True, True)
    >>> _input_statistic("il1s"), _input_statistic("sex_changed_share")
    (False, False)
    """
    return name in INPUT_STATISTICS or name.endswith("_marginal_tvd")


def publish_perturbed(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    model: Any,
    verifier: Callable[[Any], Sequence[CheckResult]],
    parameters: dict[str, Any],
    info: dict[str, Any],
    secret: Pseudonymizer,
    seed: int,
    public: str,
    timings: Timings,
    measures: bool,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
    partition: Any = None,
    keep: np.ndarray | None = None,
    extra_utility: Callable[[], dict[str, Any]] | None = None,
) -> TabularRelease:
    """Shuffle ``masked`` with the secret key, build the release, verify, measure.

    ``original`` and ``masked`` are row-aligned (the same positions are the same person);
    ``keep`` marks the rows published (sampling), all by default.  The published order is
    a secret permutation, so position links nothing to the input.
    """
    warn_repeated_labels(original)
    n = len(masked)
    rows = np.arange(n) if keep is None else np.flatnonzero(keep)
    with timings("shuffle"):
        order = secret.rng("row-order", seed, n, public).permutation(rows)
        # types and categories from the published rows alone, not from the withheld ones
        published = published_types(masked.iloc[order].reset_index(drop=True))
    release = TabularRelease(
        data=published,
        datatype="tabular",
        verifier=verifier,
        models=[model],
        partition=partition,
        parameters={**parameters, "seed": seed},
        suppressed=int(n - rows.size),
        n_individuals=n,
        info=info,
        source_index=original.index[order],
    )

    def measure(release: Release) -> None:
        base = original.reset_index(drop=True)
        kept_original = base.iloc[rows].reset_index(drop=True)
        kept_masked = masked.reset_index(drop=True).iloc[rows].reset_index(drop=True)
        release.utility = perturbation_utility(kept_original, kept_masked, numeric, categorical)
        if extra_utility is not None:
            release.utility.update(extra_utility())
        # exact statistics of the input's masked columns: with the published column they
        # give the input's mean, variance, correlations or category counts, which two
        # reports of tables one person apart subtract into that person's true value
        # so are the input's own risk figures: its key frequencies over the masked columns
        # (the smallest class of a binary column is its exact count)
        release.withheld = (
            *release.withheld,
            *(f"utility.{name}" for name in release.utility if _input_statistic(name)),
            "risk.before",
        )
        release.risk = {
            "before": tab_risk.perturbation_risk(base, base, numeric, categorical, seed=seed),
            "after": tab_risk.perturbation_risk(
                base, kept_masked, numeric, categorical, seed=seed, true_rows=rows
            ),
        }

    finish_release(release, measure, measures=measures, timings=timings)
    return release
