"""Reading and writing set-valued data: FIMI lines, long CSV (tid,item), JSON lines."""

from __future__ import annotations

import codecs
import gzip
import io
import json
import re
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from structanon._validation import check_input_path, check_path
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


_LABEL = re.compile(r"^(\*|-?\d+\.\.-?\d+(#\d+)?)$")  # labels of the automatic taxonomy
ITEM_TYPES = ("auto", "int", "str")
_HINT = "wrong --format (fimi, csv, jsonl)? is it the right file?"


def _read_text(path: Path, encoding: str) -> str:
    """The whole file as text; undecodable or binary content is an InputError with its line."""
    try:
        if path.suffix.lower() == ".gz":
            with gzip.open(path, "rb") as fh:
                raw = fh.read()
        else:
            raw = path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # unreadable, or a corrupt gzip stream
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(f"the file is not {encoding} text (undecodable byte "
                         f"{raw[exc.start:exc.start + 1]!r}); is it binary, or in another "
                         "encoding (encoding=...)?", path=str(path), line=line) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise InputError("the file holds NUL bytes: it looks binary, not text",
                         path=str(path), line=text.count("\n", 0, nul) + 1)
    return text.removeprefix("\ufeff")


def _typed(tokens: list[list[str]], path: Path, item_type: str,
           lines: list[int] | None = None) -> list[list[Any]]:
    """Integers when every token is one; an error for a stray non-integer in an integer file.

    ``lines[i]`` is the file line of transaction ``i`` (default ``i + 1``).
    """
    if item_type == "str":
        return tokens
    n_int = n_tok = 0
    first_bad: tuple[int, str] | None = None
    for i, t in enumerate(tokens):
        for tok in t:
            n_tok += 1
            if _INT.match(tok):
                n_int += 1
            elif first_bad is None and (item_type == "int" or not _LABEL.match(tok)):
                first_bad = (i, tok)
    if n_int == n_tok:
        return [[int(tok) for tok in t] for t in tokens]
    if first_bad is not None and (item_type == "int" or 2 * n_int >= n_tok):
        i, tok = first_bad
        line = lines[i] if lines is not None else i + 1
        raise InputError(f"item {tok[:40]!r} is not an integer, while {n_int:,} of {n_tok:,} "
                         "items are; fix the line, or read every item as text "
                         "(item_type='str', --item-type str)", path=str(path), line=line)
    return tokens


def read_transactions(path: str | Path, format: str | None = None,
                      return_stats: bool = False, encoding: str = "utf-8",
                      item_type: str = "auto") -> Any:
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
    encoding : str
        Text encoding of the file (default UTF-8; a byte-order mark is dropped).
    item_type : {"auto", "int", "str"}
        ``"auto"``: integers when every item is an integer (labels of the automatic
        taxonomy such as ``1..5`` or ``*`` read back as text); a stray non-integer item in
        a file whose items are mostly integers is an error naming its line, not a silent
        switch of every item to text.  ``"int"`` requires integers, ``"str"`` reads text.

    Returns
    -------
    list of set
        Items are ints when every item in the file is an integer, else strings.

    Raises
    ------
    InputError
        Missing file, a directory, unknown format or encoding, undecodable or binary
        content, a malformed line (named by line number), or a file without any item
        (empty, header only, every line blank or null).

    Examples
    --------
    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False)
    >>> _ = f.write("1 2 3\\n2 2\\n\\n"); f.close()
    >>> read_transactions(f.name, return_stats=True)
    ([{1, 2, 3}, {2}, set()], {'transactions': 3, 'empty_transactions': 1, 'duplicate_items': 1})
    >>> os.unlink(f.name)
    """
    if not isinstance(path, (str, Path)):
        raise InputError("path must be a file path", value=repr(path)[:60])
    if format is not None and format not in FORMATS:
        raise InputError(f"format must be one of {FORMATS}", value=format)
    if item_type not in ITEM_TYPES:
        raise InputError(f"item_type must be one of {ITEM_TYPES}", value=item_type)
    if not isinstance(encoding, str):
        raise InputError("encoding must be the name of a text encoding", value=repr(encoding))
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise InputError("unknown text encoding", value=encoding) from None
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=str(path))
    path = check_input_path(path, "input file")
    fmt = format or detect_format(path)
    nulls = 0
    if fmt == "fimi":
        text = _read_text(path, encoding)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        raw = [[tok for tok in _SPLIT.split(line.strip()) if tok] for line in lines]
        raw = _typed(raw, path, item_type)
    elif fmt == "jsonl":
        raw = []
        for i, line in enumerate(_read_text(path, encoding).split("\n"), start=1):
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
                                     line=i, value=repr(x)[:60])
            if item_type == "str":
                obj = [str(x) for x in obj]
            elif item_type == "int" and not all(isinstance(x, int) for x in obj):
                raise InputError("items must be integers (item_type='int')",
                                 path=str(path), line=i)
            raw.append(obj)
    else:
        sep = "\t" if path.name.lower().removesuffix(".gz").endswith(".tsv") else ","
        text = _read_text(path, encoding)
        if not text.strip():
            raise InputError(f"the file is empty; {_HINT}", path=str(path))
        try:
            df = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
            raise InputError(f"cannot parse CSV: {exc}; {_HINT}", path=str(path)) from None
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
        first_line = [0] * len(uniques)
        for row, (c, it) in enumerate(zip(codes.tolist(), items)):
            if not raw[c]:
                first_line[c] = row + 2
            raw[c].append(it)
        try:
            raw = _typed(raw, path, item_type, lines=first_line)
        except InputError:  # name the exact line of the token, not its transaction's first
            bad = next(j for j, it in enumerate(items)
                       if not _INT.match(it) and (item_type == "int" or not _LABEL.match(it)))
            raise InputError(f"item {items[bad][:40]!r} is not an integer, while most items "
                             "are; fix the line, or read every item as text (item_type='str', "
                             "--item-type str)", path=str(path), line=bad + 2) from None
    if not any(raw):
        what = "no transactions" if not raw else "no items (every transaction is empty)"
        raise InputError(f"the file holds {what}; {_HINT}", path=str(path))
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
    if isinstance(data, str | bytes) or not isinstance(data, Iterable):
        raise InputError(f"data must be a list of transactions (sets of items), got {data!r:.60}")
    path = check_path(path, "path")
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
            if isinstance(t, str | bytes) or not isinstance(t, Iterable):
                raise InputError(f"a transaction must be a set of items, got {t!r:.60}", row=i)
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
