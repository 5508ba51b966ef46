"""Rank swapping of numeric or ordinal columns (Moore 1996)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from structanon._finish import Timings
from structanon._validation import check_float, check_int, check_names
from structanon.io import Pseudonymizer, release_key

from ._anonymize import TabularRelease
from ._sdc import Perturbation, PublishedTableCheck, numeric_frame, publish_perturbed

__all__ = ["rank_swap", "swap_ranks"]


def swap_ranks(values: np.ndarray, window: int, rng: np.random.Generator) -> np.ndarray:
    """Rank-swap one column: the value of rank ``i`` trades places with a value of rank
    ``i + 1 .. i + window`` not yet swapped, chosen uniformly by ``rng``.

    Returns the new value of each record (same order as ``values``); the multiset of
    values is unchanged and no value moves by more than ``window`` ranks.

    Examples
    --------
    >>> out = swap_ranks(np.arange(10.0), 2, np.random.default_rng(0))
    >>> sorted(out.tolist()) == list(np.arange(10.0))
    True
    >>> bool((np.abs(out - np.arange(10.0)) <= 2).all())
    True
    """
    n = values.size
    order = np.argsort(values, kind="stable")
    ranked = values[order].copy()
    free = np.ones(n, dtype=bool)
    for i in range(n):
        if not free[i]:
            continue
        free[i] = False
        candidates = np.flatnonzero(free[i + 1 : i + 1 + window])
        if candidates.size:
            j = i + 1 + int(candidates[rng.integers(candidates.size)])
            free[j] = False
            ranked[i], ranked[j] = ranked[j], ranked[i]
    out = np.empty_like(values)
    out[order] = ranked
    return out


def rank_swap(
    df: pd.DataFrame,
    columns: Sequence[str],
    p: float,
    seed: int = 0,
    *,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
) -> TabularRelease:
    """Rank swapping: each value trades places with one at most ``p`` % of the records away
    in rank.

    Parameters
    ----------
    df : pandas.DataFrame
    columns : sequence of str
        Numeric (or numerically coded ordinal) columns, each swapped on its own.
    p : float in (0, 100]
        Largest rank distance of a swap, in percent of the number of records
        (``floor(p * n / 100)`` ranks).
    seed : int
        Public seed: the measures and the row order only: the masking draws leave it out, so one key and one input
        give one mask whatever the seed (re-releases cannot be averaged).
    key : Pseudonymizer, bytes, str or path, optional
        The release key: swap partners are drawn from it, never from the public seed
        (whoever could replay the partners could undo the swaps).
    measures : bool

    Returns
    -------
    TabularRelease
        Every column keeps its multiset of values exactly (its marginal distribution);
        rows in a secret order.

    Raises
    ------
    InputError
        Unknown or non-numeric columns, missing values, ``p`` outside ``(0, 100]``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"income": [100.0, 120.0, 10_000.0, 300.0]})
    >>> r = rank_swap(t, ["income"], 50, key=b"0123456789abcdef", measures=False)
    >>> sorted(r.data["income"]) == sorted(t["income"])
    True

    Notes
    -----
    Records are ranked by the column; going up the ranks, each record not yet swapped
    picks a partner uniformly among the records not yet swapped whose rank is higher by
    at most ``floor(p n / 100)``, and the two values trade places.  Means, variances and
    every univariate statistic are unchanged; correlations weaken as ``p`` grows.

    References
    ----------
    R. Moore. Controlled data swapping techniques for masking public use microdata sets.
    U.S. Census Bureau, 1996.
    J. Domingo-Ferrer, V. Torra. A quantitative comparison of disclosure control methods
    for microdata. In: Confidentiality, disclosure and data access, 2001.
    """
    timings = Timings()
    p = check_float(p, "p", min_value=0, max_value=100, include_min=False)
    seed = check_int(seed, "seed", min_value=0)
    columns = check_names(columns, "columns")
    x = numeric_frame(df, columns)
    n = len(df)
    window = int(np.floor(p * n / 100 + 1e-9))
    secret = release_key(key).bound(df)  # streams bound to the input (see bound)
    public = repr({"columns": columns, "p": p})
    masked = df.reset_index(drop=True).copy()
    with timings("swap"):
        for j, col in enumerate(columns):
            rng = secret.rng("rank-swap", n, public, col)
            swapped = swap_ranks(x[:, j], window, rng)
            masked[col] = pd.Series(swapped).astype(df[col].dtype).to_numpy()
    model = Perturbation("rank-swapping", p=p)
    return publish_perturbed(
        df,
        masked,
        model=model,
        verifier=PublishedTableCheck(model, n, numeric=columns),
        parameters={"algorithm": "rank_swap", "columns": columns, "p": p},
        info={"rank_window": window},
        secret=secret,
        seed=seed,
        public=public,
        timings=timings,
        measures=measures,
        numeric=columns,
    )
