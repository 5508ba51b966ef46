"""Additive noise masking of numeric columns (uncorrelated and correlated)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from structanon._finish import Timings
from structanon._validation import check_choice, check_float, check_int, check_names
from structanon.io import Pseudonymizer, release_key

from ._anonymize import TabularRelease
from ._sdc import Perturbation, PublishedTableCheck, numeric_frame, publish_perturbed

__all__ = ["add_noise", "NOISE_METHODS", "noise_covariance"]

NOISE_METHODS = ("uncorrelated", "correlated", "kim")


def noise_covariance(x: np.ndarray, alpha: float, method: str) -> np.ndarray:
    """Covariance of the noise added to the rows of ``x``.

    ``uncorrelated``: ``alpha * diag(Var(x_j))``, so each column's variance grows by the
    factor ``1 + alpha`` and correlations shrink by it.  ``correlated``: ``alpha * Sigma``
    (Sigma the sample covariance of ``x``), so ``Cov(y) = (1 + alpha) Sigma``: every
    correlation is preserved in expectation (Kim 1986).

    Examples
    --------
    >>> x = np.array([[0.0, 0.0], [2.0, 2.0]])
    >>> noise_covariance(x, 0.5, "uncorrelated").tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> noise_covariance(x, 0.5, "correlated").tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    sigma = (
        np.atleast_2d(np.cov(x, rowvar=False, ddof=1))
        if len(x) > 1
        else np.zeros((x.shape[1],) * 2)
    )
    if method == "uncorrelated":
        return alpha * np.diag(np.diag(sigma))
    return alpha * sigma  # correlated and kim


def _draw_noise(rng: np.random.Generator, n: int, covariance: np.ndarray) -> np.ndarray:
    """``n`` draws of ``N(0, covariance)`` (a symmetric square root: singular covariances,
    such as a constant or two identical columns, stay valid)."""
    values, vectors = np.linalg.eigh(covariance)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    return rng.standard_normal((n, covariance.shape[0])) @ root.T


def add_noise(
    df: pd.DataFrame,
    columns: Sequence[str],
    alpha: float,
    method: str = "uncorrelated",
    seed: int = 0,
    *,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
) -> TabularRelease:
    """Mask numeric columns with additive Gaussian noise: ``y = x + e``.

    Parameters
    ----------
    df : pandas.DataFrame
    columns : sequence of str
        Numeric columns to mask.
    alpha : float > 0
        Noise level: ``Var(e_j) = alpha * Var(x_j)``, so ``Var(y_j) = (1 + alpha) Var(x_j)``.
    method : {"uncorrelated", "correlated", "kim"}
        ``uncorrelated``: independent noise per column (correlations shrink by
        ``1 / (1 + alpha)``).  ``correlated``: noise with covariance ``alpha * Sigma``, so
        the correlation structure is kept (Kim 1986).  ``kim``: correlated noise followed
        by Kim's linear transformation ``z = mean(x) + (y - mean(x)) / sqrt(1 + alpha)``,
        which brings the expected covariance matrix back to ``Sigma`` (means and
        covariances preserved; ``Var(z) = Var(x)`` in expectation).
    seed : int
        Public seed: the measures and the row order only: the masking draws leave it out, so one key and one input
        give one mask whatever the seed (re-releases cannot be averaged).
    key : Pseudonymizer, bytes, str or path, optional
        The release key.  The noise itself is drawn from it (``key.rng("noise",
        ...)``): anyone who could regenerate the noise could subtract it, so it never
        comes from the public seed alone.  Default: a fresh random key (two releases
        differ); the same input, seed and key give the same bytes.
    measures : bool
        Utility (means, variances, correlations, SSE/SST, IL1s) and risk (record linkage,
        interval disclosure), before and after.

    Returns
    -------
    TabularRelease
        ``data``: the table with noisy ``columns``, rows in a secret order; verified to
        publish every record with finite numeric values in every masked column.

    Raises
    ------
    InputError
        Unknown or non-numeric columns, missing values (column and row named), ``alpha``
        not a positive number, unknown ``method``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"x": range(100), "y": range(100)})
    >>> r = add_noise(t, ["x", "y"], 0.1, "correlated", key=b"0123456789abcdef",
    ...               measures=False)
    >>> r.verify().passed, len(r.data)
    (True, 100)

    Notes
    -----
    With :math:`e \\sim N(0, \\alpha \\Sigma_e)` independent of :math:`x`:
    :math:`E(y) = E(x)` and :math:`Var(y_j) = (1 + \\alpha) Var(x_j)`; uncorrelated noise
    keeps covariances, :math:`Cov(y_i, y_j) = Cov(x_i, x_j)`, so correlations become
    :math:`\\rho_{x_i x_j} / (1 + \\alpha)`; correlated noise scales the whole covariance
    matrix by :math:`1 + \\alpha` and keeps every correlation.

    References
    ----------
    J. Kim. A method for limiting disclosure in microdata based on random noise and
    transformation. ASA Survey Research Methods, 1986.
    R. Brand. Microdata protection through noise addition. LNCS 2316, 2002.
    """
    timings = Timings()
    check_choice(method, "method", NOISE_METHODS)
    # beyond 1e6 the noise drowns every value (and large enough alphas overflow to inf)
    alpha = check_float(alpha, "alpha", min_value=0, max_value=1e6, include_min=False)
    seed = check_int(seed, "seed", min_value=0)
    columns = check_names(columns, "columns")
    x = numeric_frame(df, columns)
    secret = release_key(key).bound(df)  # streams bound to the input (see bound)
    n = len(df)
    public = repr({"method": method, "columns": columns, "alpha": alpha})
    with timings("noise"):
        covariance = noise_covariance(x, alpha, method)
        noise = _draw_noise(secret.rng("noise", n, public), n, covariance)
        masked = df.reset_index(drop=True).copy()
        y = x + noise
        if method == "kim":
            y = x.mean(axis=0) + (y - x.mean(axis=0)) / np.sqrt(1.0 + alpha)
        for j, col in enumerate(columns):
            masked[col] = y[:, j]
    model = Perturbation("noise-addition", alpha=alpha, method=method)
    return publish_perturbed(
        df,
        masked,
        model=model,
        verifier=PublishedTableCheck(model, n, numeric=columns),
        parameters={"algorithm": "noise", "columns": columns, "alpha": alpha, "method": method},
        info={"noise": "drawn from the release key, never from the public seed"},
        secret=secret,
        seed=seed,
        public=public,
        timings=timings,
        measures=measures,
        numeric=columns,
    )
