"""Global recoding, top and bottom coding, and sampling of a table, as one release."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon._finish import Timings
from structanon._validation import check_float, check_int, first_few
from structanon.errors import InputError, PublisherWarning, at_row
from structanon.io import Pseudonymizer, release_key

from ._anonymize import TabularRelease
from ._input import require_columns
from ._sdc import Perturbation, PublishedTableCheck, publish_perturbed

__all__ = ["recode", "top_code", "bottom_code", "global_recode"]


def _numbers(values: pd.Series, name: str) -> np.ndarray:
    if values.dtype == bool or not pd.api.types.is_numeric_dtype(values.dtype):
        raise InputError("top/bottom coding needs a numeric column", column=name)
    x = values.to_numpy(dtype=float)
    bad = np.flatnonzero(np.isnan(x))
    if bad.size:
        raise InputError("missing value", column=name, **at_row(values, bad[0]))
    return x


def top_code(values: pd.Series, threshold: float, label: str | None = None) -> pd.Series:
    """Values ``>= threshold`` become one category ``label`` (default ``"<threshold>+"``).

    The result is a column of strings (a categorical attribute), the others written as
    they were.

    Examples
    --------
    >>> import pandas as pd
    >>> top_code(pd.Series([18, 20, 21, 25]), 21).tolist()
    ['18', '20', '21+', '21+']
    """
    name = str(values.name) if values.name is not None else "values"
    threshold = check_float(threshold, "threshold")
    x = _numbers(values, name)
    label = f"{threshold:g}+" if label is None else str(label)
    out = values.astype(str).where(x < threshold, label)
    return out.astype(object)


def bottom_code(values: pd.Series, threshold: float, label: str | None = None) -> pd.Series:
    """Values ``<= threshold`` become one category ``label`` (default ``"<=threshold"``).

    Examples
    --------
    >>> import pandas as pd
    >>> bottom_code(pd.Series([15, 16, 30]), 16).tolist()
    ['<=16', '<=16', '30']
    """
    name = str(values.name) if values.name is not None else "values"
    threshold = check_float(threshold, "threshold")
    x = _numbers(values, name)
    label = f"<={threshold:g}" if label is None else str(label)
    return values.astype(str).where(x > threshold, label).astype(object)


def global_recode(values: pd.Series, mapping: Mapping[Any, Any]) -> pd.Series:
    """Replace categories by broader ones everywhere in the column (unmapped values kept).

    Examples
    --------
    >>> import pandas as pd
    >>> edu = pd.Series(["secondary", "tertiary", "postgrad."])
    >>> global_recode(edu, {"tertiary": "tertiary and above",
    ...                     "postgrad.": "tertiary and above"}).tolist()
    ['secondary', 'tertiary and above', 'tertiary and above']
    """
    if not isinstance(mapping, Mapping):
        raise InputError(f"a recoding must be a dict old -> new, got {type(mapping).__name__}")
    return values.map(lambda v: mapping.get(v, v)).astype(object)


def _top_bottom(
    data: pd.DataFrame, top: Mapping[str, float], bottom: Mapping[str, float]
) -> pd.DataFrame:
    """``data`` with its top and bottom codes applied."""
    out = data.copy()
    for col, limit in bottom.items():
        out[col] = bottom_code(data[col], limit)
    for col, limit in top.items():
        coded = top_code(data[col], limit)
        out[col] = (
            coded
            if col not in bottom
            else coded.where(data[col].to_numpy(dtype=float) >= limit, out[col])
        )
    return out


def _check_codes(top: Mapping[str, float], bottom: Mapping[str, float]) -> None:
    """A column top-coded at or below its bottom code: ``50+`` and ``<=60`` overlap."""
    for col in top.keys() & bottom.keys():
        if float(top[col]) <= float(bottom[col]):
            raise InputError(
                f"top code {top[col]} is not above bottom code {bottom[col]}: the two "
                "categories would overlap",
                column=col,
            )


def _matched_recodings(
    coded: pd.DataFrame, mapping: Mapping[str, Mapping[Any, Any]]
) -> dict[str, dict[Any, Any]]:
    """Each recoding keyed by the values the column holds once top/bottom coded (a
    top-coded label such as ``60+`` can be recoded): a key equal to a value, else written
    as one (``"30"`` for the number 30, as the command line gives it).  A key the column
    never holds recodes nothing and is named in a :class:`PublisherWarning` (a typo shows;
    refusing it would make the published mapping, and the recorded command line, prove
    that every key they name occurs in the input)."""
    matched: dict[str, dict[Any, Any]] = {}
    for col, recoding in mapping.items():
        values = pd.unique(coded[col].dropna())
        by_text = {str(v): v for v in values}
        held = set(by_text.values())
        matched[col] = {}
        absent = []
        for old, new in recoding.items():
            if old in held:
                matched[col][old] = new
            elif str(old) in by_text:
                matched[col][by_text[str(old)]] = new
            else:
                absent.append(repr(old))
        if absent:
            shown = first_few(absent)
            warnings.warn(
                f"column {col!r}: {len(absent)} value(s) to recode do not occur in the "
                f"column: {shown}; they recode nothing (check their spelling)",
                PublisherWarning,
                stacklevel=3,
            )
    return matched


def _as_dict(value: Any, name: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{name} must be a dict keyed by column, got {value!r:.60}")
    return dict(value)


def recode(
    df: pd.DataFrame,
    top: Mapping[str, float] | None = None,
    bottom: Mapping[str, float] | None = None,
    mapping: Mapping[str, Mapping[Any, Any]] | None = None,
    sample: float | None = None,
    seed: int = 0,
    *,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
) -> TabularRelease:
    """Global recoding, top and bottom coding, and optional random sampling, as a release.

    Parameters
    ----------
    df : pandas.DataFrame
    top, bottom : dict column -> threshold, optional
        Numeric columns whose values ``>= threshold`` (top) become ``"<threshold>+"`` and
        whose values ``<= threshold`` (bottom) become ``"<=threshold"``.
    mapping : dict column -> dict old -> new, optional
        Global recoding: categories merged into broader ones.  A key no record holds
        recodes nothing and is named in a :class:`~structanon.PublisherWarning` (not in
        ``info["warnings"]``: no report copies it); the release's ``parameters`` list the
        mapping as given, so they do not prove that a key occurs in the input.
    sample : float in (0, 1], optional
        Publish each record with this probability (Bernoulli sampling); which records are
        published is drawn from the release key.  The number left out is
        ``release.suppressed``.
    seed : int
        Public seed: the measures and the row order; the sample drawn leaves it out (one key
        and one input give one sample whatever the seed).
    key : Pseudonymizer, bytes, str or path, optional
        The release key (published order, sampled records).
    measures : bool

    Returns
    -------
    TabularRelease
        Verified: every recoded column holds only kept values and the new categories.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"age": [20, 21, 23], "edu": ["secondary", "tertiary", "postgrad."]})
    >>> r = recode(t, top={"age": 21}, mapping={"edu": {"postgrad.": "tertiary"}},
    ...            key=b"0123456789abcdef", measures=False)
    >>> sorted(r.data["age"]), sorted(r.data["edu"])
    (['20', '21+', '21+'], ['secondary', 'tertiary', 'tertiary'])

    References
    ----------
    A. Hundepool et al. Statistical Disclosure Control. Wiley, 2012 (sections 3.4.2-3.4.3).
    """
    timings = Timings()
    top, bottom = _as_dict(top, "top"), _as_dict(bottom, "bottom")
    mapping = _as_dict(mapping, "mapping")
    for col, recoding in mapping.items():
        if not isinstance(recoding, Mapping):
            raise InputError("mapping must map each column to a dict old -> new", column=col)
    if not (top or bottom or mapping or sample is not None):
        raise InputError("give at least one of top, bottom, mapping or sample")
    seed = check_int(seed, "seed", min_value=0)
    columns = list(dict.fromkeys([*top, *bottom, *mapping]))
    if columns:
        require_columns(df, columns, argument="df", parameter="top/bottom/mapping", role="column")
    elif not isinstance(df, pd.DataFrame):
        raise InputError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise InputError("the table has no rows")
    _check_codes(top, bottom)
    if sample is not None:
        sample = check_float(sample, "sample", min_value=0, max_value=1, include_min=False)
    secret = release_key(key).bound(df)  # streams bound to the input (see bound)
    n = len(df)
    public = repr({"top": top, "bottom": bottom, "mapping": mapping, "sample": sample})
    with timings("recode"):
        masked = _top_bottom(df.reset_index(drop=True), top, bottom)
        for col, recoding in _matched_recodings(masked, mapping).items():
            masked[col] = global_recode(masked[col], recoding)
    keep = None
    if sample is not None:
        keep = secret.rng("sample", n, public).random(n) < sample
    allowed = {c: sorted(set(masked[c].tolist()), key=str) for c in columns}
    model = Perturbation("recoding", sample=sample)
    return publish_perturbed(
        df,
        masked,
        model=model,
        verifier=PublishedTableCheck(
            model, n if keep is None else int(keep.sum()), categories=allowed
        ),
        parameters={
            "algorithm": "recode",
            "top": top,
            "bottom": bottom,
            "mapping": {c: {str(a): str(b) for a, b in m.items()} for c, m in mapping.items()},
            "sample": sample,
        },
        info={"sampling_rate": sample} if sample is not None else {},
        secret=secret,
        seed=seed,
        public=public,
        timings=timings,
        measures=measures,
        categorical=columns,
        keep=keep,
    )
