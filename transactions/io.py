"""Reading and writing set-valued data: FIMI lines, long CSV (tid,item), JSON lines."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from structanon.errors import InputError
from structanon.io import atomic_write

__all__ = ["read_transactions", "write_transactions", "detect_format"]

FORMATS = ("fimi", "csv", "jsonl")
_INT = re.compile(r"^-?\d+$")
_SPLIT = re.compile(r"[\s,]+")


def detect_format(path: str | Path) -> str:
    """Format from the file name: ``.csv``/``.tsv`` -> csv, ``.jsonl``/``.json`` -> jsonl, else fimi."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".csv", ".tsv")):
        return "csv"
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    return "fimi"


def _open_text(path: Path):
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _typed(tokens: list[list[str]]) -> list[list[Any]]:
    if all(_INT.match(tok) for t in tokens for tok in t):
        return [[int(tok) for tok in t] for t in tokens]
    return tokens


def read_transactions(path: str | Path, format: str | None = None,
                      return_stats: bool = False) -> Any:
    """Read transactions from a file.

    Parameters
    ----------
    path : str or Path
        FIMI style (one transaction per line, items separated by spaces or commas; an
        empty line is an empty transaction), long CSV (columns ``tid,item``; transactions
        in order of first appearance), or JSON lines (each line a JSON array of items or
        an object with an ``"items"`` array; ``null`` lines, suppressed transactions of a
        release, are skipped and counted).  ``.gz`` is read transparently.
    format : {"fimi", "csv", "jsonl"}, optional
        Default: from the file name (see :func:`detect_format`).
    return_stats : bool
        Also return a dict counting transactions, empty transactions and duplicate items.

    Returns
    -------
    list of set
        Items are ints when every item in the file is an integer, else strings.

    Raises
    ------
    InputError
        Missing file, unknown format, or a malformed line (named by line number).

    Examples
    --------
    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False)
    >>> _ = f.write("1 2 3\\n2 2\\n\\n"); f.close()
    >>> read_transactions(f.name, return_stats=True)
    ([{1, 2, 3}, {2}, set()], {'transactions': 3, 'empty_transactions': 1, 'duplicate_items': 1})
    >>> os.unlink(f.name)
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=str(path))
    fmt = format or detect_format(path)
    if fmt not in FORMATS:
        raise InputError(f"format must be one of {FORMATS}", value=fmt)
    if fmt == "fimi":
        with _open_text(path) as fh:
            text = fh.read()
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        raw = [[tok for tok in _SPLIT.split(line.strip()) if tok] for line in lines]
        raw = _typed(raw)
    elif fmt == "jsonl":
        raw = []
        nulls = 0
        with _open_text(path) as fh:
            for i, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"invalid JSON: {exc.msg}", path=str(path), line=i) from None
                if obj is None:  # a suppressed transaction of a published release
                    nulls += 1
                    continue
                if isinstance(obj, dict):
                    obj = obj.get("items")
                if not isinstance(obj, list):
                    raise InputError("each line must be a JSON array of items or an object "
                                     "with an 'items' array", path=str(path), line=i)
                for x in obj:
                    if isinstance(x, bool) or not isinstance(x, (int, str)):
                        raise InputError("items must be integers or strings", path=str(path),
                                         line=i, value=x)
                raw.append(obj)
    else:
        sep = "\t" if path.name.lower().removesuffix(".gz").endswith(".tsv") else ","
        try:
            df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot parse CSV: {exc}", path=str(path)) from None
        cols = [c.strip().lower() for c in df.columns]
        if "tid" in cols and "item" in cols:
            tid, item = df.iloc[:, cols.index("tid")], df.iloc[:, cols.index("item")]
        elif df.shape[1] >= 2:
            tid, item = df.iloc[:, 0], df.iloc[:, 1]
        else:
            raise InputError("long CSV needs two columns, tid and item", path=str(path))
        blank = (item.str.strip() == "") | (tid.str.strip() == "")
        if blank.any():
            raise InputError("empty tid or item", path=str(path), line=int(blank.to_numpy().argmax()) + 2)
        codes, uniques = pd.factorize(tid.str.strip())
        items = item.str.strip().tolist()
        raw = [[] for _ in range(len(uniques))]
        for c, it in zip(codes.tolist(), items):
            raw[c].append(it)
        raw = _typed(raw)
    out = [set(t) for t in raw]
    if return_stats:
        stats = {"transactions": len(out), "empty_transactions": sum(1 for t in out if not t),
                 "duplicate_items": sum(len(r) for r in raw) - sum(len(t) for t in out)}
        if fmt == "jsonl" and nulls:
            stats["null_lines_skipped"] = nulls
        return out, stats
    return out


def write_transactions(data: Sequence[Any], path: str | Path, format: str | None = None) -> int:
    """Write published transactions atomically; returns the number of transactions written.

    FIMI and CSV leave suppressed transactions (``None``) out; JSON lines writes ``null``
    for them, keeping one line per input transaction.  Items are sorted by their text.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); out = os.path.join(d, "x.dat")
    >>> write_transactions([{2, 1}, None, {"1..5"}], out)
    2
    >>> open(out).read()
    '1 2\\n1..5\\n'
    """
    path = Path(path)
    fmt = format or detect_format(path)
    if fmt not in FORMATS:
        raise InputError(f"format must be one of {FORMATS}", value=fmt)
    written = 0
    with atomic_write(path) as fh:
        if fmt == "csv":
            fh.write("tid,item\n")
        for i, t in enumerate(data):
            if t is None:
                if fmt == "jsonl":
                    fh.write("null\n")
                continue
            items = sorted(t, key=lambda x: (0, x, "") if isinstance(x, int) else (1, 0, str(x)))
            if fmt == "fimi":
                for x in items:
                    if re.search(r"[\s,]", str(x)):
                        raise InputError("item contains a separator; use JSON lines", value=x)
                fh.write(" ".join(str(x) for x in items) + "\n")
            elif fmt == "jsonl":
                fh.write(json.dumps(items) + "\n")
            else:
                fh.writelines(f"{i},{x}\n" for x in items)
            written += 1
    return written
