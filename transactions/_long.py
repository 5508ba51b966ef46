"""Long ``(transaction, item)`` tables: one row per item occurrence, as pandas users hold baskets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from structanon._validation import check_columns
from structanon.errors import InputError, at_row

__all__ = ["from_long", "is_frame", "maybe_long"]


def is_frame(obj: Any) -> bool:
    """Is ``obj`` a pandas DataFrame (duck-typed, so subclasses pass)?"""
    return isinstance(obj, pd.DataFrame)


def _columns(df: pd.DataFrame, transaction: Any, item: Any) -> tuple[Any, Any]:
    check_columns(df, [], what="long DataFrame")  # names a duplicated column
    cols = list(df.columns)
    if transaction is None and item is None:
        if len(cols) != 2:
            raise InputError(
                f"a long DataFrame needs its transaction and item columns named "
                f"(transaction_col=, item_col=); it has {len(cols)} columns",
                value=", ".join(map(str, cols[:6])),
            )
        return cols[0], cols[1]
    if transaction is None or item is None:
        if len(cols) != 2:
            missing = "transaction_col" if transaction is None else "item_col"
            raise InputError(
                f"name the other column too ({missing}=)", value=", ".join(map(str, cols[:6]))
            )
        given = transaction if transaction is not None else item
        check_columns(df, [given], what="long DataFrame")
        other = cols[1] if cols[0] == given else cols[0]
        return (given, other) if transaction is not None else (other, given)
    check_columns(df, [transaction, item], what="long DataFrame")
    if transaction == item:
        raise InputError("transaction and item columns must differ", value=str(transaction))
    return transaction, item


def _check_items(values: pd.Series, name: Any) -> None:
    kind = pd.api.types.infer_dtype(values, skipna=False)
    if kind in ("integer", "string"):
        return
    if kind == "floating" and np.all(np.mod(values.to_numpy(dtype=float), 1) == 0):
        return
    bad_at = next(
        (
            i
            for i, x in enumerate(values.tolist())
            if isinstance(x, bool) or not isinstance(x, (int, np.integer, str))
        ),
        None,
    )
    if bad_at is None:  # ints and strings mixed
        raise InputError(
            f"column {name!r}: items mix integers and strings; use one type for every item "
            "(e.g. df[col].astype(str))"
        )
    raise InputError(
        f"column {name!r}: items must be integers or strings",
        value=repr(values.iloc[bad_at])[:60],
        **at_row(values, bad_at),
    )


def _observed(values: pd.Series) -> pd.Series:
    """A categorical column as its values (unused categories are no values)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return pd.Series(np.asarray(values), index=values.index, name=values.name)
    return values


def _check_ids(tid: pd.Series, name: Any) -> None:
    """Refuse transaction ids mixing strings and other types: ``1`` and ``"1"`` would be
    two transactions."""
    if tid.dtype != object or not pd.api.types.infer_dtype(tid, skipna=True).startswith("mixed"):
        return  # one type throughout (found without a loop over the ids)
    is_str = np.fromiter((isinstance(x, str) for x in tid.tolist()), dtype=bool, count=len(tid))
    if is_str.any() and not is_str.all():
        row = int(np.flatnonzero(is_str != is_str[0])[0])
        raise InputError(
            f"column {name!r}: transaction ids mix strings and other types "
            f"({tid.iloc[0]!r} in the first row); use one type for every id "
            "(e.g. df[col].astype(str))",
            value=repr(tid.iloc[row])[:60],
            **at_row(tid, row),
        )


def from_long(
    df: Any, transaction: Any = None, item: Any = None, *, return_ids: bool = False
) -> Any:
    """Baskets from a long DataFrame with one ``(transaction, item)`` row per occurrence.

    Parameters
    ----------
    df : pandas.DataFrame
    transaction, item : column names, optional
        Default: the two columns of a two-column frame, in order.
    return_ids : bool
        Also return the transaction ids, one per basket.

    Returns
    -------
    list of set (and a list of ids with ``return_ids``)
        One set per distinct transaction id, in order of first appearance.

    Raises
    ------
    InputError
        A missing or duplicated column, a missing transaction id or item (naming the column
        and the 1-based row), transaction ids mixing strings and other types (``1`` and
        ``"1"``, naming the first row of the other type), items mixing integers and strings
        or of another type.

    Notes
    -----
    A categorical column is read as its values: its unused categories are no items.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"order_id": [7, 7, 9], "product": ["milk", "beer", "milk"]})
    >>> [sorted(t) for t in from_long(df, transaction="order_id", item="product")]
    [['beer', 'milk'], ['milk']]
    """
    if not is_frame(df):
        raise InputError("expected a pandas DataFrame of (transaction, item) rows")
    tcol, icol = _columns(df, transaction, item)
    tid, items = _observed(df[tcol]), _observed(df[icol])
    for name, col in ((tcol, tid), (icol, items)):
        null = col.isna().to_numpy()
        if null.any():
            row = int(np.flatnonzero(null)[0])
            raise InputError(f"column {name!r} has a missing value", **at_row(col, row))
    _check_ids(tid, tcol)
    _check_items(items, icol)
    if pd.api.types.is_float_dtype(items.dtype):
        items = items.astype(np.int64)
    codes, ids = pd.factorize(tid, sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(ids) + 1))
    vals = items.to_numpy()[order].tolist()
    baskets = [set(vals[bounds[i] : bounds[i + 1]]) for i in range(len(ids))]
    if return_ids:
        return baskets, list(ids)
    return baskets


def maybe_long(transactions: Any, transaction_col: Any = None, item_col: Any = None) -> Any:
    """``transactions`` unchanged, or the baskets of a long DataFrame (see :func:`from_long`)."""
    if transaction_col is not None or item_col is not None or is_frame(transactions):
        return from_long(transactions, transaction_col, item_col)
    return transactions
