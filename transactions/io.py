"""Reading and writing set-valued data: FIMI lines, long CSV (tid,item), JSON lines."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon._validation import (
    check_choice,
    check_encoding,
    check_input_path,
    check_path,
    file_suffix,
)
from structanon.errors import InputError
from structanon.io import (
    atomic_write,
    file_lines,
    is_gzip_path,
    open_text,
    refuse_row_labels,
    text_lines,
)

__all__ = [
    "read_transactions",
    "write_transactions",
    "write_band",
    "detect_format",
    "write_disassociation",
    "read_disassociation",
]

FORMATS = ("fimi", "csv", "jsonl")
_INT = re.compile(r"^-?\d+$")
_NONZERO = frozenset("123456789")
_SPLIT = re.compile(r"[\s,]+")


def detect_format(path: str | Path) -> str:
    """Format from the file name: ``.csv``/``.tsv`` -> csv, ``.jsonl``/``.json`` -> jsonl, else fimi.

    The suffix is read by :func:`structanon._validation.file_suffix` (``.gz`` looked through).

    Examples
    --------
    >>> detect_format("baskets.TSV.gz"), detect_format("r.jsonl"), detect_format("retail.dat")
    ('csv', 'jsonl', 'fimi')
    """
    suffix = file_suffix(path)
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    return "fimi"


_LABEL = re.compile(r"^(\*|-?\d+\.\.-?\d+(#\d+)?)$")  # labels of the automatic taxonomy
ITEM_TYPES = ("auto", "int", "str")
_HINT = "wrong --format (fimi, csv, jsonl)? is it the right file?"


def _lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the file (plain or gzip) through the core's reader.

    Undecodable bytes, NUL bytes (binary content), UTF-16 text and corrupt gzip streams are
    :class:`InputError` naming the file and, where known, the line; a byte-order mark is
    dropped.
    """
    for number, text in text_lines(path, encoding, name="input file"):
        if number == 1:
            text = text.removeprefix("\ufeff")
        if "\x00" in text:
            raise InputError(
                "the file holds NUL bytes: it looks binary, not text", path=str(path), line=number
            )
        yield number, text


def _typed(
    tokens: list[list[str]], path: Path, item_type: str, lines: list[int] | None = None
) -> list[list[Any]]:
    """Integers when every token is one; an error for a stray non-integer in an integer file.

    ``lines[i]`` is the file line of transaction ``i`` (default ``i + 1``).
    """
    if item_type == "str":
        return tokens
    n_int = n_tok = 0
    plain = True  # every integer written as Python writes it (no 007, -0, non-ASCII digit)
    first_bad: tuple[int, str] | None = None
    for i, t in enumerate(tokens):
        for tok in t:
            n_tok += 1
            if _INT.match(tok):
                n_int += 1
                if plain and not (
                    tok[0] in _NONZERO or tok == "0" or (tok[0] == "-" and tok[1:2] in _NONZERO)
                ):
                    plain = False  # 007, 07, -0, -07
                elif plain and not tok.isascii():
                    plain = False  # a full-width or other non-ASCII digit
            elif first_bad is None and (item_type == "int" or not _LABEL.match(tok)):
                first_bad = (i, tok)
    if n_int == n_tok:
        if item_type == "auto" and not plain:
            return tokens  # integers would merge distinct spellings (007 and 7): keep text
        return [[int(tok) for tok in t] for t in tokens]
    if first_bad is not None and (item_type == "int" or 2 * n_int >= n_tok):
        i, tok = first_bad
        line = lines[i] if lines is not None else i + 1
        raise InputError(
            f"item {tok[:40]!r} is not an integer, while {n_int:,} of {n_tok:,} "
            "items are; fix the line, or read every item as text "
            "(item_type='str', --item-type str)",
            path=str(path),
            line=line,
        )
    return tokens


def _check_read(path: Any, format: str | None, item_type: str, encoding: Any) -> tuple[Path, str]:
    """Validate :func:`read_transactions`' arguments; the path and the format to read."""
    if not isinstance(path, (str, Path)):
        raise InputError("path must be a file path", value=repr(path)[:60])
    if format is not None:
        check_choice(format, "format", FORMATS)
    check_choice(item_type, "item_type", ITEM_TYPES)
    check_encoding(encoding)
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=str(path))
    path = check_input_path(path, "input file")
    return path, format or detect_format(path)


def _read_fimi(path: Path, encoding: str, item_type: str) -> tuple[list[list[Any]], int]:
    """One transaction per line, items separated by spaces or commas."""
    raw = [
        [tok for tok in _SPLIT.split(line.strip()) if tok] for _n, line in _lines(path, encoding)
    ]
    return _typed(raw, path, item_type), 0


def _jsonl_items(obj: Any, path: Path, line: int, item_type: str) -> list[Any]:
    """The items of one parsed JSON line (an array, or an object with an ``items`` array)."""
    if isinstance(obj, dict):
        obj = obj.get("items")
    if not isinstance(obj, list):
        raise InputError(
            "each line must be a JSON array of items or an object with an 'items' array",
            path=str(path),
            line=line,
        )
    for x in obj:
        if isinstance(x, bool) or not isinstance(x, (int, str)):
            raise InputError(
                "items must be integers or strings", path=str(path), line=line, value=repr(x)[:60]
            )
    if item_type == "str":
        return [str(x) for x in obj]
    if item_type == "int" and not all(isinstance(x, int) for x in obj):
        raise InputError("items must be integers (item_type='int')", path=str(path), line=line)
    return obj


def _read_jsonl(path: Path, encoding: str, item_type: str) -> tuple[list[list[Any]], int]:
    """JSON lines; ``null`` lines (suppressed transactions of a release) are counted."""
    raw: list[list[Any]] = []
    nulls = 0
    for number, line in _lines(path, encoding):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=str(path), line=number) from None
        if obj is None:  # a suppressed transaction of a published release
            nulls += 1
            continue
        raw.append(_jsonl_items(obj, path, number, item_type))
    return raw, nulls


def _csv_columns(path: Path, encoding: str) -> tuple[pd.Series, pd.Series]:
    """The ``tid`` and ``item`` columns of a long CSV (or its first two columns)."""
    sep = _csv_sep(path)
    text = "\n".join(line for _n, line in _lines(path, encoding))
    if not text.strip():
        raise InputError(f"the file is empty; {_HINT}", path=str(path))
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise InputError(f"cannot parse CSV: {exc}; {_HINT}", path=str(path)) from None
    refuse_row_labels(df.index, path, sep, encoding)
    if len(df):
        repeated = np.logical_and.reduce(
            [df[c].str.strip().to_numpy() == str(c).strip() for c in df.columns]
        )
        if repeated.any():
            line = _csv_line(path, int(repeated.argmax()), sep, encoding)
            raise InputError(
                f"the header line is repeated at line {line} (files concatenated?)",
                path=str(path),
                line=line,
            )
    cols = [c.strip().lower() for c in df.columns]
    if "tid" in cols and "item" in cols:
        return df.iloc[:, cols.index("tid")], df.iloc[:, cols.index("item")]
    if df.shape[1] == 2:
        return df.iloc[:, 0], df.iloc[:, 1]
    header = [str(c) for c in df.columns]
    if df.shape[1] > 2:
        raise InputError(
            f"the long CSV header has {len(header)} columns {header[:10]}; which are the "
            "transaction and the item is not said: name them 'tid' and 'item' (a file of "
            "two columns is read as tid,item whatever their names)",
            path=str(path),
            line=1,
        )
    hint = (
        "; wrong separator? transactions long CSV is comma-separated (.tsv: tab)"
        if any(c in header[0] for c in ",;\t" if c != sep)
        else ""
    )
    raise InputError(
        f"long CSV needs two columns, tid and item; the header has one, {header[0][:60]!r}{hint}",
        path=str(path),
        line=1,
    )


def _read_csv(path: Path, encoding: str, item_type: str) -> tuple[list[list[Any]], int]:
    """Long CSV: one ``tid,item`` row per item; transactions in order of first appearance."""
    tid, item = _csv_columns(path, encoding)
    sep = _csv_sep(path)
    blank_tid = tid.str.strip() == ""
    if blank_tid.any():
        raise InputError(
            "empty tid",
            path=str(path),
            line=_csv_line(path, int(blank_tid.to_numpy().argmax()), sep, encoding),
        )
    codes, uniques = pd.factorize(tid.str.strip())
    stripped = item.str.strip()
    empty = (stripped == "").to_numpy()
    raw: list[list[Any]] = [[] for _ in range(len(uniques))]
    for c, it, e in zip(codes.tolist(), stripped.tolist(), empty.tolist()):
        if not e:  # a row with an empty item: the transaction exists, holding no item
            raw[c].append(it)
    if empty.any():  # an empty item beside items of its transaction is a missing value
        mixed = np.flatnonzero(empty & (np.array([len(t) for t in raw])[codes] > 0))
        if len(mixed):
            row = int(mixed[0])
            raise InputError(
                f"empty item in transaction {tid.iloc[row].strip()!r}, which holds items; "
                "an empty item marks an empty transaction, on its only row",
                path=str(path),
                line=_csv_line(path, row, sep, encoding),
            )
    items = [it for it, e in zip(stripped.tolist(), empty.tolist()) if not e]
    rows = np.flatnonzero(~empty)
    try:
        return _typed(raw, path, item_type), 0
    except InputError:  # name the exact line of the token, not its transaction
        bad = next(
            j
            for j, it in enumerate(items)
            if not _INT.match(it) and (item_type == "int" or not _LABEL.match(it))
        )
        raise InputError(
            f"item {items[bad][:40]!r} is not an integer, while most items "
            "are; fix the line, or read every item as text (item_type='str', "
            "--item-type str)",
            path=str(path),
            line=_csv_line(path, int(rows[bad]), sep, encoding),
        ) from None


def _csv_sep(path: Path) -> str:
    """The field separator of a long CSV (tab for ``.tsv``)."""
    return "\t" if file_suffix(path) == ".tsv" else ","


def _csv_line(path: Path, row: int, sep: str, encoding: str) -> int:
    """The file line of data row ``row`` of a long CSV (blank lines, which the reader
    skips, counted)."""
    return file_lines(path, [row], sep, encoding)[0] or row + 2


READERS = {"fimi": _read_fimi, "csv": _read_csv, "jsonl": _read_jsonl}


def read_transactions(
    path: str | Path,
    format: str | None = None,
    return_stats: bool = False,
    encoding: str = "utf-8",
    item_type: str = "auto",
) -> Any:
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
        ``"auto"``: integers when every item is an integer written canonically (one item
        written ``007``, ``+7`` or ``-0`` keeps every item text, so that ``007`` and ``7``
        stay two items), else text (labels of the automatic
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
    raw, stats = read_transaction_lists(path, format, encoding, item_type)
    out = [set(t) for t in raw]
    return (out, stats) if return_stats else out


def read_transaction_lists(
    path: str | Path, format: str | None = None, encoding: str = "utf-8", item_type: str = "auto"
) -> tuple[list[list[Any]], dict[str, int]]:
    """The transactions of :func:`read_transactions` as lists in file order, duplicates kept
    (so that :class:`Baskets` counts them), with its statistics."""
    path, fmt = _check_read(path, format, item_type, encoding)
    raw, nulls = READERS[fmt](path, encoding, item_type)
    if not any(raw):
        what = "no transactions" if not raw else "no items (every transaction is empty)"
        raise InputError(f"the file holds {what}; {_HINT}", path=str(path))
    stats = {
        "transactions": len(raw),
        "empty_transactions": sum(1 for t in raw if not t),
        "duplicate_items": sum(len(t) - len(set(t)) for t in raw),
    }
    if nulls:
        stats["null_lines_skipped"] = nulls
    return raw, stats


def write_transactions(data: Sequence[Any], path: str | Path, format: str | None = None) -> int:
    """Write published transactions atomically; returns the number of transactions written.

    FIMI and CSV leave suppressed transactions (``None``) out; JSON lines writes ``null``
    for them, keeping one line per input transaction.  Items are sorted by their text.
    Every other transaction is written, an empty one too: an empty line in FIMI, ``[]`` in
    JSON lines, and in the long CSV (``tid,item``, tab-separated for ``.tsv``) one row with
    an empty item.  CSV fields are quoted where needed, so items holding the separator, a
    quote or a line break read back as written; an item the long CSV cannot give back (the
    empty string, white space at either end, a carriage return) is an :class:`InputError`,
    as is an item holding white space or a comma in FIMI: JSON lines holds any text.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); out = os.path.join(d, "x.dat")
    >>> write_transactions([{2, 1}, None, {"1..5"}], out)
    2
    >>> open(out).read()
    '1 2\\n1..5\\n'
    >>> out = os.path.join(d, "x.csv")
    >>> write_transactions([{"a,b", 'a "b" c'}, set()], out)
    2
    >>> print(open(out).read(), end="")
    tid,item
    0,"a ""b"" c"
    0,"a,b"
    1,
    >>> read_transactions(out) == [{"a,b", 'a "b" c'}, set()]
    True
    """
    if isinstance(data, str | bytes) or not isinstance(data, Iterable):
        raise InputError(f"data must be a list of transactions (sets of items), got {data!r:.60}")
    path = check_path(path, "path")
    fmt = check_choice(format or detect_format(path), "format", FORMATS)
    written = 0
    with atomic_write(path, compress=is_gzip_path(path)) as fh:
        if fmt == "csv":
            rows = csv.writer(fh, delimiter=_csv_sep(path), lineterminator="\n")
            rows.writerow(["tid", "item"])
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
                _write_csv_rows(rows, i, items)
            written += 1
    return written


def _write_csv_rows(rows: Any, i: int, items: list[Any]) -> None:
    """The long CSV rows of transaction ``i``; an empty one is one row with an empty item."""
    for x in items:
        _check_csv_item(x, i)
    if items:
        rows.writerows([i, x] for x in items)
    else:
        rows.writerow([i, ""])


def _check_csv_item(x: Any, row: int) -> None:
    """Refuse an item a long CSV cannot give back as written."""
    text = str(x)
    if not text:
        raise InputError(
            "an item is the empty string, which a long CSV reads as an empty transaction; "
            "use JSON lines",
            row=row,
            value=repr(x),
        )
    if text != text.strip():
        raise InputError(
            "an item starts or ends with white space, which a long CSV reader strips; "
            "use JSON lines",
            row=row,
            value=repr(x)[:60],
        )
    if "\r" in text:
        raise InputError(
            "an item holds a carriage return, which a long CSV cannot keep; use JSON lines",
            row=row,
            value=repr(x)[:60],
        )


def write_band(data: dict[str, Any], path: str | Path) -> Path:
    """Write a band-matrix release as one JSON document, atomically.

    The document holds ``p``, the ``sensitive_items``, per group its size and sensitive
    counts, and per published transaction its group and QI items (``null`` if suppressed),
    in the release's (secret) order.

    Examples
    --------
    >>> import json, os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "band.json")
    >>> data = {"qi": [{"a"}, None], "group": [0, -1], "sensitive_counts": [{"x": 1}],
    ...         "sensitive_items": ["x"], "p": 2}
    >>> doc = json.load(open(write_band(data, out)))
    >>> doc["groups"], doc["transactions"]
    ([{'size': 1, 'sensitive_counts': {'x': 1}}], [{'group': 0, 'items': ['a']}, None])
    """
    groups = np.asarray(data["group"])
    sizes = np.bincount(groups[groups >= 0], minlength=len(data["sensitive_counts"]))
    doc = {
        "p": data["p"],
        "sensitive_items": data["sensitive_items"],
        "groups": [
            {"size": int(s), "sensitive_counts": {str(k): v for k, v in c.items()}}
            for s, c in zip(sizes.tolist(), data["sensitive_counts"])
        ],
        "transactions": [
            None if t is None else {"group": int(g), "items": sorted(t, key=str)}
            for t, g in zip(data["qi"], groups.tolist())
        ],
    }
    path = Path(path)
    with atomic_write(path, compress=is_gzip_path(path)) as fh:
        json.dump(doc, fh)
    return path


DISASSOCIATION_SUFFIXES = (".json", ".txt")


def _items_text(items: Any) -> str:
    return " ".join(
        str(x)
        for x in sorted(items, key=lambda x: (0, x, "") if isinstance(x, int) else (1, 0, str(x)))
    )


def _cluster_lines(cluster: Any, label: str, indent: str) -> list[str]:
    """A (joint) cluster as readable lines: non-empty subrecords one per line."""
    joint = bool(cluster.clusters)
    head = (
        f"{indent}joint cluster {label}: {cluster.size} transactions in "
        f"{len(cluster.clusters)} clusters"
        if joint
        else f"{indent}cluster {label}: {cluster.size} transactions"
    )
    lines = [head]
    kind = "shared chunk" if joint else "record chunk"
    for j, chunk in enumerate(cluster.record_chunks, 1):
        full = [s for s in chunk if s]
        lines.append(
            f"{indent}  {kind} {j} ({len(chunk)} subrecords, {len(chunk) - len(full)} empty):"
        )
        lines.extend(f"{indent}    {_items_text(s)}" for s in full)
    if not joint:
        lines.append(f"{indent}  term chunk: {_items_text(cluster.term_chunk)}")
    for i, member in enumerate(cluster.clusters, 1):
        lines.extend(_cluster_lines(member, f"{label}.{i}", indent + "  "))
    return lines


def write_disassociation(
    data: Sequence[Any], path: str | Path, parameters: dict[str, Any] | None = None
) -> int:
    """Write a disassociated release atomically; returns the number of transactions.

    ``.json``: ``{"format": "structanon-disassociation", "parameters": ..., "clusters":
    [...]}``, each cluster with ``size``, ``record_chunks`` (lists of exactly ``size``
    subrecords, items sorted) and ``term_chunk`` (and ``clusters`` for a joint cluster), in
    the release's secret order.  ``.txt``: the same, readable: one line per non-empty
    subrecord, with the number of empty ones per chunk.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from transactions import Cluster
    >>> out = os.path.join(tempfile.mkdtemp(), "d.json")
    >>> c = Cluster(2, [[frozenset({1, 2}), frozenset()]], frozenset({7}))
    >>> write_disassociation([c], out)
    2
    >>> json.load(open(out))["clusters"]
    [{'size': 2, 'record_chunks': [[[1, 2], []]], 'term_chunk': [7]}]
    >>> print(open(write_disassociation([c], out[:-4] + "txt") and out[:-4] + "txt").read())
    # disassociated transactions: 2 transactions in 1 clusters
    cluster 1: 2 transactions
      record chunk 1 (2 subrecords, 1 empty):
        1 2
      term chunk: 7
    <BLANKLINE>
    """
    from ._disassociation import _clusters_of

    clusters = _clusters_of(list(data))
    path = check_path(path, "path")
    suffix = file_suffix(path)
    if suffix not in DISASSOCIATION_SUFFIXES:
        raise InputError(
            "a disassociated release is written as .json or .txt", path=str(path), value=suffix
        )
    n = sum(c.size for c in clusters)
    with atomic_write(path, compress=is_gzip_path(path)) as fh:
        if suffix == ".json":
            doc = {
                "format": "structanon-disassociation",
                "parameters": parameters or {},
                "clusters": [c.to_dict() for c in clusters],
            }
            json.dump(doc, fh, separators=(",", ":"))
        else:
            fh.write(
                f"# disassociated transactions: {n} transactions in {len(clusters)} clusters\n"
            )
            for i, c in enumerate(clusters, 1):
                fh.write("\n".join(_cluster_lines(c, str(i), "")) + "\n")
    return n


def read_disassociation(path: str | Path) -> list[Any]:
    """The clusters of a disassociated release written as ``.json``.

    Raises
    ------
    InputError
        Not a JSON document of this format (naming the file).
    """
    from ._disassociation import _clusters_of

    path = check_input_path(path, "input file")
    try:
        with open_text(path, "utf-8", "input file") as fh:  # plain or gzip
            doc = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a JSON document: {exc}", path=str(path)) from None
    if not isinstance(doc, dict) or doc.get("format") != "structanon-disassociation":
        raise InputError("not a disassociated release (format field missing)", path=str(path))
    return _clusters_of(doc.get("clusters"))
