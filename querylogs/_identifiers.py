"""Detection of direct identifiers (phone numbers, e-mail addresses, SSNs, street addresses)
inside query strings."""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from structanon.errors import InputError

__all__ = ["IDENTIFIER_PATTERNS", "detect_identifiers", "contains_identifier"]

_STREET_SUFFIX = (
    r"street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|place|pl|way|"
    r"terrace|ter|circle|cir|highway|hwy|parkway|pkwy|square|sq|trail|trl"
)

#: One regular expression per kind of direct identifier (matched case-insensitively).
IDENTIFIER_PATTERNS: dict[str, str] = {
    "email": r"[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+",
    "ssn": r"(?<!\d)\d{3}[- ]\d{2}[- ]\d{4}(?!\d)",
    "phone": r"(?<![\d-])(?:\+?1[\s.-])?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}(?![\d-])"
    r"|(?<![\d-])\d{3}[.-]\d{4}(?![\d-])"
    r"|(?<!\d)1?[2-9]\d{2}[2-9]\d{6}(?!\d)",
    "street_address": r"(?<![\w-])\d{1,6}\s+(?:[a-z][a-z0-9.'-]*\s+){1,4}(?:"
    + _STREET_SUFFIX
    + r")\b",
}


def detect_identifiers(queries: Iterable[str], kinds: Iterable[str] | None = None) -> pd.DataFrame:
    """Which queries contain which kind of direct identifier.

    Parameters
    ----------
    queries : iterable of str
    kinds : iterable of str, optional
        Subset of :data:`IDENTIFIER_PATTERNS` (``"email"``, ``"ssn"``, ``"phone"``,
        ``"street_address"``); all by default.

    Returns
    -------
    pandas.DataFrame
        One boolean column per kind, one row per query.

    Raises
    ------
    InputError
        An unknown kind.

    Examples
    --------
    >>> detect_identifiers(["call 555-867-5309", "weather", "12 elm street"]).values.tolist()
    [[False, False, True, False], [False, False, False, False], [False, False, False, True]]

    Notes
    -----
    The patterns are deliberately broad (North American phone numbers with or without area
    code, 10-digit runs, ``ddd-dd-dddd`` SSNs, a house number followed by one to four words
    and a street suffix): a false positive costs one suppressed query, a miss can name a
    person.  Matching runs once per distinct query.
    """
    kinds = list(IDENTIFIER_PATTERNS) if kinds is None else list(kinds)
    unknown = [k for k in kinds if k not in IDENTIFIER_PATTERNS]
    if unknown:
        raise InputError(
            f"unknown identifier kind; expected some of {list(IDENTIFIER_PATTERNS)}",
            value=unknown[0],
        )
    series = pd.Series(
        list(queries) if not isinstance(queries, pd.Series) else queries, dtype=object
    )
    codes, unique_values = pd.factorize(series.where(series.notna(), "").astype(str))
    uniques = pd.Series(unique_values, dtype=object)
    # every pattern needs a digit or an "@": test the patterns on those queries only
    candidates = np.flatnonzero(uniques.str.contains(r"[0-9@]", regex=True).to_numpy(bool))
    subset = uniques.iloc[candidates]
    out = {}
    for kind in kinds:
        pattern = re.compile(IDENTIFIER_PATTERNS[kind], re.IGNORECASE)
        hit = np.zeros(len(uniques), dtype=bool)
        hit[candidates] = subset.str.contains(pattern, regex=True).to_numpy(dtype=bool)
        out[kind] = hit[codes] if len(codes) else np.zeros(0, dtype=bool)
    return pd.DataFrame(out, index=series.index)


def contains_identifier(queries: Iterable[str], kinds: Iterable[str] | None = None) -> np.ndarray:
    """Boolean array: does each query contain any direct identifier of ``kinds``?

    Examples
    --------
    >>> contains_identifier(["mail bob@example.com", "cheap flights"]).tolist()
    [True, False]
    """
    found = detect_identifiers(queries, kinds)
    return found.any(axis=1).to_numpy(dtype=bool) if found.shape[1] else np.zeros(len(found), bool)
