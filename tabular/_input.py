"""Validation of :func:`tabular.anonymize` inputs, and encoding of QI columns to hierarchy leaves."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from structanon import Hierarchy, InfeasibleError, InputError
from structanon._validation import (
    check_choice,
    check_columns,
    check_float,
    check_names,
    warn_repeated_labels,
)
from structanon.errors import at_row
from structanon.models import KAnonymity, PrivacyModel

from ._optimal import QUALITY_MODELS
from ._sets import SET, check_separator, is_set_spec

__all__ = [
    "ALGORITHMS",
    "NUMERIC",
    "SET",
    "hierarchy_codes",
    "qi_kinds",
    "require_columns",
    "sensitive_values",
    "validate",
]

ALGORITHMS = ("optimal", "mondrian", "datafly")
NUMERIC = "numeric"


def require_columns(
    df: Any,
    columns: Sequence[str],
    *,
    argument: str,
    parameter: str = "quasi_identifiers",
    role: str = "quasi-identifier",
    where: str = "the table",
) -> list[str]:
    """Check ``df`` is a DataFrame holding every one of ``columns`` (at least one); return them."""
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{argument} must be a pandas DataFrame, got {type(df).__name__}")
    if df.columns.duplicated().any():
        check_columns(df, [])  # names the duplicated column
    columns = check_names(columns, parameter)
    if not columns:
        raise InputError(f"{parameter} must name at least one column")
    for col in columns:
        if col not in df.columns:
            raise InputError(f"{role} not in {where}", column=col)
    return columns


def _mixed_type_row(column: pd.Series) -> int | None:
    """Row (position) of the first value whose type differs from the column's majority."""
    if column.dtype != object:
        return None
    kind = pd.api.types.infer_dtype(column, skipna=True)
    if not kind.startswith("mixed") or kind == "mixed-integer-float":
        return None
    kinds = column.map(
        lambda v: (
            "str"
            if isinstance(v, str)
            else (
                "num"
                if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                else type(v).__name__
            )
        )
    ).to_numpy()
    uniq, counts = np.unique(kinds.astype(str), return_counts=True)
    if uniq.size <= 1:
        return None
    majority = uniq[np.argmax(counts)]
    return int(np.flatnonzero(kinds != majority)[0])


def hierarchy_codes(column: pd.Series, hierarchy: Hierarchy, name: str) -> np.ndarray:
    """Leaf codes of a column: each distinct value is looked up once (hash factorization).

    Raises
    ------
    InputError
        Naming the column and the first row holding a value absent from the hierarchy.
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        leaf = _categorical_codes(column, hierarchy, name)
        if leaf is not None:
            return leaf
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    if (codes < 0).any():
        raise InputError(
            "missing value", column=name, **at_row(column, np.flatnonzero(codes < 0)[0])
        )
    try:
        leaf = hierarchy.encode(np.asarray(uniques, dtype=object), column=name)
    except InputError as exc:
        where = {} if exc.row is None else at_row(column, np.flatnonzero(codes == exc.row)[0])
        raise InputError(exc.message, column=name, value=exc.value, **where) from None
    return leaf[codes]


def sensitive_values(column: pd.Series) -> Any:
    """The values of a sensitive column as the models read them: a categorical column's
    :class:`pandas.Categorical` (encoded from its integer codes, see
    :func:`structanon.partition.encode_values`), any other column's numpy array."""
    return column.array if isinstance(column.dtype, pd.CategoricalDtype) else column.to_numpy()


def _categorical_codes(column: pd.Series, hierarchy: Hierarchy, name: str) -> np.ndarray | None:
    """:func:`hierarchy_codes` of a categorical column, from its integer codes: each category
    present is looked up once, no value is hashed per record.  ``None`` when a value is
    missing or absent from the hierarchy (the caller's path then names its first row)."""
    raw = column.cat.codes.to_numpy()
    if not raw.size or raw.min() < 0:
        return None
    categories = column.cat.categories
    used = np.flatnonzero(np.bincount(raw, minlength=len(categories)))
    try:
        leaf = hierarchy.encode(np.asarray(categories[used], dtype=object), column=name)
    except InputError:
        return None
    by_code = np.full(len(categories), -1, dtype=np.int64)
    by_code[used] = leaf
    return by_code[raw]


def _validate_column(df: pd.DataFrame, column: str, role: str, missing: bool = True) -> None:
    if column not in df.columns:
        raise InputError(
            f"{role} column not in the table (columns: {list(df.columns)})", column=column
        )
    # (quasi-identifiers: missing values are reported by the encoders, per column and row)
    absent = df[column].isna().to_numpy() if missing else np.zeros(1, dtype=bool)
    if absent.any():
        raise InputError(
            f"missing value in {role} column",
            column=column,
            **at_row(df, np.flatnonzero(absent)[0]),
        )
    bad = _mixed_type_row(df[column])
    if bad is not None:
        raise InputError(
            f"mixed value types in {role} column",
            column=column,
            value=df[column].iloc[bad],
            **at_row(df, bad),
        )


def qi_kinds(quasi_identifiers: Mapping[str, Any]) -> dict[str, str]:
    """How each QI is generalized: ``"hierarchy"``, ``"numeric"`` or ``"set"``."""
    return {
        c: "hierarchy" if isinstance(s, Hierarchy) else (SET if is_set_spec(s) else s)
        for c, s in quasi_identifiers.items()
    }


def validate(
    df: Any,
    quasi_identifiers: Any,
    sensitive: str | None,
    models: Any,
    algorithm: str,
    suppression_limit: Any,
    metric: str,
    identifiers: Sequence[str],
) -> list[PrivacyModel]:
    """Check every parameter of :func:`tabular.anonymize`; return the models as a list.

    Raises
    ------
    InputError
        Naming the parameter, column and row at fault.
    InfeasibleError
        When ``k`` exceeds the number of records.
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    check_columns(df, [])
    warn_repeated_labels(df)
    if len(df) == 0:
        raise InputError("the table has no rows")
    check_choice(algorithm, "algorithm", ALGORITHMS)
    check_choice(metric, "metric", QUALITY_MODELS)
    check_float(suppression_limit, "suppression_limit", min_value=0, max_value=1)
    _check_specs(df, quasi_identifiers, algorithm)
    _check_identifiers(df, identifiers, quasi_identifiers, sensitive)
    models = _check_models(models)
    _check_sensitive(df, sensitive, quasi_identifiers, models)
    for column, spec in quasi_identifiers.items():
        _validate_column(df, column, "quasi-identifier", missing=is_set_spec(spec))
        if is_set_spec(spec):
            check_separator(df[column], column)
    for m in models:
        if isinstance(m, KAnonymity) and m.k > len(df):
            raise InfeasibleError(f"k={m.k} exceeds the number of records ({len(df)})")
    return models


def _check_specs(df: pd.DataFrame, quasi_identifiers: Any, algorithm: str) -> None:
    """Every quasi-identifier is a column, with a Hierarchy (or, Mondrian only, a kind)."""
    if not isinstance(quasi_identifiers, Mapping) or not quasi_identifiers:
        raise InputError("quasi_identifiers must be a non-empty dict column -> Hierarchy")
    for column, spec in quasi_identifiers.items():
        if column not in df.columns:
            raise InputError("quasi-identifier not in the table", column=column)
        if isinstance(spec, Hierarchy):
            continue
        if isinstance(spec, str) and (spec == NUMERIC or is_set_spec(spec)):
            if algorithm != "mondrian":
                raise InputError(
                    f"{spec!r} quasi-identifiers need algorithm='mondrian'; "
                    f"{algorithm} needs a Hierarchy",
                    column=column,
                )
            continue
        raise InputError(
            f"quasi-identifier spec must be a Hierarchy, 'numeric' or "
            f"'{SET}' (alias 'ordinal'), got {spec!r}",
            column=column,
        )


def _check_identifiers(
    df: pd.DataFrame,
    identifiers: Sequence[str],
    quasi_identifiers: Mapping[str, Any],
    sensitive: str | None,
) -> None:
    for column in identifiers:
        if column not in df.columns:
            raise InputError("identifier column not in the table", column=column)
        if column in quasi_identifiers or column == sensitive:
            raise InputError(
                "a column cannot be both an identifier and a quasi-identifier or sensitive",
                column=column,
            )


def _check_models(models: Any) -> list[PrivacyModel]:
    if isinstance(models, PrivacyModel):
        models = [models]
    if isinstance(models, str | bytes) or not isinstance(models, Iterable):
        raise InputError(
            f"models must be a list of privacy models (e.g. [KAnonymity(5)]), got {models!r}"
        )
    models = list(models)
    if not models:
        raise InputError("models must name at least one privacy model (e.g. KAnonymity(5))")
    for m in models:
        if not isinstance(m, PrivacyModel):
            raise InputError(f"models must be structanon.models objects, got {m!r}")
    return models


def _check_sensitive(
    df: pd.DataFrame,
    sensitive: str | None,
    quasi_identifiers: Mapping[str, Any],
    models: list[PrivacyModel],
) -> None:
    if sensitive is not None:
        if not isinstance(sensitive, Hashable):
            raise InputError(f"sensitive must be a column name, got {sensitive!r}")
        if sensitive in quasi_identifiers:
            raise InputError("the sensitive column cannot be a quasi-identifier", column=sensitive)
        _validate_column(df, sensitive, "sensitive")
    elif any(m.requires_sensitive for m in models):
        needs = [m.describe() for m in models if m.requires_sensitive]
        raise InputError(f"{', '.join(needs)} need(s) a sensitive column (sensitive=...)")
