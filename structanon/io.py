"""Reading tables, writing outputs atomically, and keyed pseudonymization."""

from __future__ import annotations

import bz2
import codecs
import contextlib
import copy
import csv
import gzip
import hashlib
import hmac
import io
import json
import lzma
import os
import re
import secrets
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Collection, Generator, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn, cast

import numpy as np
import pandas as pd

from ._validation import duplicate_names, file_suffix
from .errors import InputError

__all__ = [
    "PARQUET_EXTENSIONS",
    "CSV_EXTENSIONS",
    "TSV_EXTENSIONS",
    "TABLE_OUTPUT_EXTENSIONS",
    "is_parquet_path",
    "read_table",
    "write_table",
    "atomic_write",
    "gzip_writer",
    "is_gzip_path",
    "atomic_path",
    "Pseudonymizer",
    "KEY_ENV",
    "release_key",
    "content_digest",
    "text_block_checks",
    "default_separator",
    "file_lines",
    "refuse_row_labels",
    "raise_block_fault",
    "staged_outputs",
    "open_text",
    "text_lines",
    "undecodable_error",
    "UndecodableText",
    "locate_undecodable",
    "parse_error",
    "undecodable_line",
    "is_wide_encoding",
]

KEY_ENV = "STRUCTANON_PSEUDONYM_KEY"

#: The spellings of each table format, the same in every package that writes it (a
#: ``.gz`` after a text suffix is looked through): Parquet, comma-separated text and
#: tab-separated text.  ``.txt`` is added only where a package has a plain-text format of
#: its own (tabular: the input's separator; querylogs: the AOL log).
PARQUET_EXTENSIONS = (".parquet", ".pq")
CSV_EXTENSIONS = (".csv",)
TSV_EXTENSIONS = (".tsv", ".tab")
#: What a table output (``-o``) of tabular, location and querylogs may end in, ``.txt``
#: aside.
TABLE_OUTPUT_EXTENSIONS = CSV_EXTENSIONS + TSV_EXTENSIONS + PARQUET_EXTENSIONS


def is_parquet_path(path: str | Path) -> bool:
    """Whether ``path`` names a Parquet file or folder (``.parquet`` / ``.pq``).

    Examples
    --------
    >>> is_parquet_path("out.PQ"), is_parquet_path("out.parquet"), is_parquet_path("o.csv")
    (True, True, False)
    """
    return file_suffix(path) in PARQUET_EXTENSIONS


def read_table(
    path: str | Path,
    sep: str | None = None,
    dtype: Any = None,
    columns: list[str] | None = None,
    categorical: bool | Collection[str] = False,
    typed: Collection[str] | None = None,
    encoding: str = "utf-8",
    **kwargs: Any,
) -> pd.DataFrame:
    """Read a CSV / TSV (optionally compressed) or Parquet file.

    Plain text files are parsed by Arrow's multi-threaded reader into dictionary-encoded
    columns, and each column's type is inferred by pandas from its distinct values, so the
    values and types are those ``pandas.read_csv`` gives (numbers, booleans, missing values)
    at a fraction of the cost; anything that reader cannot take as is (compressed files,
    ragged rows, duplicate or empty header names, extra ``kwargs``, a column of mostly
    distinct values in the first megabyte) is read by pandas.

    Parameters
    ----------
    path : path
        ``.parquet``/``.pq`` is read as Parquet; ``.tsv``/``.tab`` as tab-separated; anything
        else as CSV.
    sep : str, optional
        Field separator for text files (default ``","``, or tab for ``.tsv``).
    dtype : optional
        Explicit column types, passed to pandas (e.g. ``str`` to keep codes such as ZIPs
        exactly as written).
    columns : list of str, optional
        Columns that must be present; the error names the first missing one.
    categorical : bool or list of str
        Columns to return as pandas categoricals, a few bytes a cell instead of a Python
        object: ``True``, every column of text values; a list, the columns named, text or
        numeric (booleans keep their type; names absent from the file are ignored).  The
        categories are the values present, sorted, so they tell nothing of the order of
        the rows.
    typed : list of str, optional
        Text input only: the columns typed as ``pandas.read_csv`` types them; every other
        column is kept as text exactly as written (``01000``, ``TRUE``, ``0.10``, ``NA``
        and ``null`` unchanged), only empty cells missing.  ``None`` (default): every
        column typed.  Parquet keeps its stored types.
    encoding : str
        Text encoding of a text file (default UTF-8, a byte order mark dropped); a byte
        that does not decode is an :class:`InputError` naming the file, the line and the
        byte.

    Raises
    ------
    InputError
        Missing file, unknown encoding, undecodable text (its line and byte), unparseable
        content (with the line pandas reports), or a missing column.
    """
    from ._validation import check_encoding, check_input_path

    path = check_input_path(path, "input file")
    encoding = check_encoding(encoding)
    if sep is not None and (not isinstance(sep, str) or not sep):
        raise InputError(f"the field separator must be a non-empty string, got {sep!r}")
    categorical = _check_categorical(categorical)
    ext = file_suffix(path)
    try:
        df, categorical = _read_file(path, ext, sep, dtype, categorical, kwargs, typed, encoding)
    except InputError:
        raise
    except pd.errors.ParserError as exc:
        raise parse_error(exc, path, encoding) from None
    except pd.errors.EmptyDataError:
        raise InputError(
            "the file is empty (no header, no rows); wrong file or wrong --sep?", path=str(path)
        ) from None
    except UnicodeDecodeError:
        locate_undecodable(path, encoding)  # names the line and the byte
    except (EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile) as exc:  # cut or corrupt
        raise InputError(
            f"cannot read the compressed file: {exc} (truncated or corrupt?)", path=str(path)
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(
            f"cannot read table: {exc}; is it a CSV/TSV or Parquet file?", path=str(path)
        ) from None
    if ext not in PARQUET_EXTENSIONS:
        df = _checked_text_table(df, path, default_separator(path, sep), encoding)
    _check_columns(df, list(columns or []), path)
    if categorical is not False:
        df = _as_categorical(df, categorical)
    return df


def _checked_text_table(df: pd.DataFrame, path: Path, sep: str, encoding: str) -> pd.DataFrame:
    """A text table's layout mistakes: a spreadsheet's ``sep=;`` first line, a header line
    repeated as data (files concatenated), and the nameless columns a trailing separator
    makes (left out when empty; see :func:`_without_empty_unnamed`)."""
    if len(df.columns) and re.fullmatch(r"sep=.?", str(df.columns[0]).strip()):
        first = next(iter(text_lines(path, encoding, errors="replace")), (1, ""))[1]
        raise InputError(
            f"the first line is a spreadsheet's separator line ({first.strip()!r}, as "
            "Excel writes it): delete that line, and give the separator with --sep",
            path=str(path),
            line=1,
        )
    if repeated_header_row(df) is not None:
        raise InputError(
            "the header line is repeated as a data line (files concatenated?); remove it",
            path=str(path),
            line=repeated_header_line(path, sep, encoding),
        )
    return _without_empty_unnamed(df, path, sep, encoding)


def _without_empty_unnamed(df: pd.DataFrame, path: Path, sep: str, encoding: str) -> pd.DataFrame:
    """``df`` without the columns a trailing separator makes (no name in the header, no
    value in any row: nothing is lost); a column without a name that holds values is an
    :class:`InputError` naming its position (pandas would publish it as "Unnamed: 3")."""
    if not any(isinstance(c, str) and c.startswith("Unnamed: ") for c in df.columns):
        return df
    header = next(iter(text_lines(path, encoding, errors="replace")), (1, ""))[1]
    header = header.lstrip("\ufeff")
    fields = next(csv.reader([header], delimiter=sep)) if len(sep) == 1 else header.split(sep)
    empty = []
    for i, field in enumerate(fields):
        if field.strip() or i >= len(df.columns):
            continue
        values = df.iloc[:, i]
        if values.notna().any() and not (values.astype(str) == "").all():
            raise InputError(
                f"column {i + 1} has no name in the header but holds values; name it",
                path=str(path),
                line=1,
            )
        empty.append(i)
    keep = [i for i in range(len(df.columns)) if i not in set(empty)]
    return df.iloc[:, keep] if empty else df


def missing_tokens(columns: Sequence[str], typed: Collection[str]) -> dict[str, list[str]]:
    """``na_values`` of a text reader that reads every column as text (with
    ``keep_default_na=False``): pandas' missing-value tokens (``NA``, ``null``, ...) in the
    ``typed`` columns, which are then typed as ``pandas.read_csv`` types them; only an
    empty cell elsewhere, so a value such as a user id ``NA`` is kept as written."""
    from pandas._libs.parsers import STR_NA_VALUES

    tokens = sorted(STR_NA_VALUES)
    return {c: tokens if c in typed else [""] for c in columns}


def repeated_header_row(df: pd.DataFrame) -> int | None:
    """The first row whose every cell is its column's name (a header line read as data),
    or ``None``.  Cheap: a column whose values cannot hold its name (numbers, or a
    categorical without that category) settles it, and each column is compared only while
    some row still matches every column before it."""
    if not len(df) or not len(df.columns) or df.columns.duplicated().any():
        return None
    mask: np.ndarray | None = None
    for name in df.columns:
        col = df[name]
        label = str(name)
        if isinstance(col.dtype, pd.CategoricalDtype):
            categories = [str(c) for c in col.cat.categories]
            if label not in categories:
                return None
            hit = col.cat.codes.to_numpy() == categories.index(label)
        elif col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            hit = col.to_numpy(dtype=object) == label
        else:
            return None
        mask = hit if mask is None else mask & hit
        if not mask.any():
            return None
    return None if mask is None else int(np.flatnonzero(mask)[0])


def file_lines(
    path: str | Path,
    rows: Sequence[int],
    sep: str | None = None,
    encoding: str = "utf-8",
    skip: Collection[int] = (),
) -> list[int | None]:
    """The 1-based file lines of data rows ``rows`` (0-based) of a text table read by
    pandas, in one pass over the file.

    The header is line 1; blank lines, which the reader skips, are counted, and so are the
    line breaks inside quoted values (``sep``: the field separator, default ``,`` or tab
    for ``.tsv``); gzip text is read through (:func:`text_lines`, in ``encoding``, bytes
    that do not decode replaced).  Parquet files have no lines (``None``); where the file
    cannot be followed (another format, a separator of several characters), ``row + 2``.
    ``skip``: the lines of records the reader dropped (``on_bad_lines``), which are no
    data rows.

    Examples
    --------
    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    >>> _ = f.write('a,b\\n1,"x\\ny"\\n\\n3,4\\n'); f.close()
    >>> file_lines(f.name, [0, 1])
    [2, 5]
    >>> os.unlink(f.name)
    """
    path = Path(path)
    if file_suffix(path) in PARQUET_EXTENSIONS:
        return [None] * len(rows)
    found: dict[int, int] = {}
    if sep is None:
        sep = default_separator(path)
    wanted = {int(r) + 1 for r in rows}  # records after the header's
    if file_suffix(path) in (".csv", ".tsv", ".tab", ".txt") and len(sep) == 1 and wanted:
        last, seen, start = max(wanted), -1, 1  # the header is record 0; a record's first line
        try:
            lines = text_lines(path, encoding, errors="replace")  # the lines count, not bytes
            records = csv.reader((text for _, text in lines), delimiter=sep)
            for record in records:
                if record and start not in skip:  # a blank line is no record
                    seen += 1
                    if seen in wanted:
                        found[seen - 1] = start
                        if seen == last:
                            break
                start = records.line_num + 1
        except (OSError, InputError, csv.Error):
            pass
    return [found.get(int(r), int(r) + 2) for r in rows]


def refuse_row_labels(
    index: pd.Index, path: str | Path, sep: str | None = None, encoding: str = "utf-8"
) -> None:
    """Refuse a table that pandas read with row labels: it takes the first field of every
    line as a label when the first data line has one field more than the header, and every
    column then holds its right-hand neighbour's values (the first column lost).  Nothing
    when ``index`` is the default one (0, 1, 2, ...)."""
    if isinstance(index, pd.RangeIndex):
        return
    raise InputError(
        "the first data line has one field more than the header: a value holding the "
        "separator must be quoted, or is --sep right? (if every data line ends with the "
        "separator, end the header line with it too)",
        path=str(path),
        line=file_lines(path, [0], sep, encoding)[0],
    )


def repeated_header_line(path: Path, sep: str, encoding: str) -> int | None:
    """The line number of the first record after the header whose fields repeat it,
    however they are quoted (error path; ``None`` when none does)."""
    with open_text(path, encoding) as fh:
        reader = csv.reader(fh, delimiter=sep) if len(sep) == 1 else None
        rows = reader if reader is not None else (line.rstrip("\r\n").split(sep) for line in fh)
        header = None
        for number, row in enumerate(rows, start=1):
            fields = [f.strip().lstrip("\ufeff") for f in row]
            if header is None:
                header = fields
            elif fields == header:
                return reader.line_num if reader is not None else number
    return None


def _read_file(
    path: Path,
    ext: str,
    sep: str | None,
    dtype: Any,
    categorical: bool | list[str],
    kwargs: dict,
    typed: Collection[str] | None = None,
    encoding: str = "utf-8",
) -> tuple[pd.DataFrame, bool | list[str]]:
    """:func:`read_table`'s reading, by format (the categoricals still to make returned)."""
    if ext in PARQUET_EXTENSIONS:
        df = pd.read_parquet(path)
        return (df if dtype is None else df.astype(dtype)), categorical
    if sep is None:
        sep = "\t" if ext in (".tsv", ".tab") else ","
    if typed is not None and (dtype is not None or kwargs):
        raise TypeError("read_table: typed= does not combine with dtype= or pandas options")
    return _read_text(path, sep, dtype, categorical, kwargs, typed, encoding)


def _check_text(
    path: Path, sep: str, scan: bool = True, fields: bool = True, encoding: str = "utf-8"
) -> None:
    """Refuse, before parsing, a text table that the parsers would change silently: one
    holding a NUL byte (a value is cut short at it), a line with fewer fields than the
    header (``fields``: pandas fills them in as missing, where Arrow refuses the file;
    checked while no quote has been met, as a quoted field may hold the separator), or a
    header naming a column twice (pandas renames the second ``name.1``).  Plain and gzip
    files are read in full (``scan``; else the header alone).  In a UTF-16 or UTF-32 file
    (``encoding``), where every character holds NUL bytes, only the header is checked."""
    line, head = 1, b""
    if is_wide_encoding(encoding):
        scan = fields = False
    count = _FieldCount(sep) if len(sep) == 1 and fields and scan else None
    with _open_binary(path) as raw:
        while chunk := raw.read(1 << 20 if scan else 1 << 16):
            if not head:
                head = chunk
                _refuse_utf16(head, encoding, path)
            at = -1 if is_wide_encoding(encoding) else chunk.find(b"\x00")
            if at >= 0:
                raise InputError(NUL_BYTE, path=str(path), line=line + chunk.count(b"\n", 0, at))
            if count is not None:
                count.check(count.feed(chunk), path)
            line += chunk.count(b"\n")
            if not scan:
                break
    if count is not None:
        count.check(count.finish(), path)
    if not head:
        return
    text = _decode_head(head, encoding).lstrip("\ufeff")
    if len(sep) > 1:
        names = re.split(r"\r?\n|\r", text, maxsplit=1)[0].split(sep)
    else:
        try:
            names = next(csv.reader(io.StringIO(text), delimiter=sep), [])
        except csv.Error:
            return  # the parser names what is wrong
    twice = [name for name in duplicate_names(names) if name]  # pandas names empty ones
    if twice:
        raise InputError(
            "the header names this column twice; rename one of them",
            path=str(path),
            column=twice[0],
            line=1,
        )


def _refuse_utf16(head: bytes, encoding: str, path: Path) -> None:
    """UTF-16 text read as another encoding: said so (not "a NUL byte"), with the way out."""
    if not is_wide_encoding(encoding) and looks_utf16(head):
        raise InputError(UTF16_TEXT, path=str(path))


def default_separator(path: str | Path, sep: str | None = None) -> str:
    r"""``sep``, else the separator a text table's name implies: a tab for ``.tsv`` /
    ``.tab`` (compression suffixes looked through), else a comma.

    Examples
    --------
    >>> default_separator("t.tsv.gz"), default_separator("t.csv"), default_separator("t", ";")
    ('\t', ',', ';')
    """
    from ._validation import file_suffix

    return sep or ("\t" if file_suffix(path) in (".tsv", ".tab") else ",")


LONE_CR = (
    "a carriage return (CR) inside the line: the file ends its lines with a lone CR (old "
    "Mac) or mixes line ends, which would join lines; convert its line ends to LF or CRLF"
)

NUL_BYTE = (
    "the file holds a NUL byte (binary content?), at which a value would be cut short; "
    "remove it, or is it the right file?"
)

UTF16_TEXT = (
    "the file is UTF-16 text; convert it to UTF-8 (or give its encoding: "
    "encoding='utf-16' / --encoding utf-16)"
)


def looks_utf16(head: bytes) -> bool:
    r"""Whether the first bytes of a file are UTF-16 text: a UTF-16 byte order mark, or
    (without one) a NUL byte in nearly every other place, as Latin text has in UTF-16.

    Examples
    --------
    >>> looks_utf16("\ufeffa,b\n".encode("utf-16")), looks_utf16("a,b\n1,2\n".encode("utf-16-le"))
    (True, True)
    >>> looks_utf16(b"a,b\n1,2\n"), looks_utf16(b"a\x00b,c\n1,2\n")
    (False, False)
    """
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return True
    sample = head[: 1 << 12]
    sample = sample[: len(sample) - len(sample) % 2]
    if len(sample) < 4:
        return False
    halves = (sample[0::2], sample[1::2])
    nul = [half.count(0) / len(half) for half in halves]
    return max(nul) >= 0.9 and min(nul) <= 0.1


def block_faults(
    block: bytes,
    sep: str,
    header_fields: int | None,
    last: bool,
    encoding: str = "utf-8",
    check_decoding: bool = True,
) -> tuple[int, tuple[str, int] | None]:
    r"""The checks of :func:`read_table` on one block of whole lines of a text table (a
    block of a file read in parallel): its number of line breaks, and its first fault --
    a NUL byte, a line that does not decode under ``encoding``, or a line with fewer
    fields than the header -- as ``(message, line)``, the line counted from 1 at the
    block's start.  ``header_fields``: the header's number of fields, or ``None`` when the
    block starts with the header; ``last``: the block ends the file (its last line may
    lack a line break).  UTF-16 and UTF-32 blocks (NUL bytes in every character, line
    breaks of several bytes) are not checked.  ``check_decoding=False`` leaves decoding
    to a parse of the same bytes (one decode of the block, not two); an ASCII block is
    not decoded.

    Examples
    --------
    >>> block_faults(b"a,b\n1,2\n3\n", ",", None, True)[1][1]
    3
    >>> block_faults(b"1,2\n3,4", ",", 2, True)
    (1, None)
    >>> block_faults(b"1,2\n\xe9,4\n", ",", 2, True)[1][1]
    2
    """
    if is_wide_encoding(encoding):
        return block.count(b"\n"), None
    faults = []
    at = block.find(b"\x00")
    if at >= 0:
        utf16 = header_fields is None and looks_utf16(block)  # the file's first bytes
        faults.append((UTF16_TEXT if utf16 else NUL_BYTE, block.count(b"\n", 0, at) + 1))
    if check_decoding and not block.isascii():
        undecodable = undecodable_line(block, encoding)
        if undecodable is not None:
            exc, number = undecodable
            faults.append((undecodable_error(exc, encoding, "", number).message, number))
    if len(sep) == 1:
        count = _FieldCount(sep)
        count.expected = None if header_fields is None else header_fields - 1
        short = None
        for lo in range(0, len(block), _COUNT_SLICE):  # bounded temporaries (see feed)
            short = count.feed(block[lo : lo + _COUNT_SLICE])
            if short is not None:
                break
        if short is None and last:
            short = count.finish()
        if short is not None:
            faults.append((count.message(), short))
    return block.count(b"\n"), min(faults, key=lambda f: f[1], default=None)


def undecodable_line(block: bytes, encoding: str) -> tuple[UnicodeDecodeError, int] | None:
    """The decoding error and block line (from 1) of the first line of ``block`` that does
    not decode under ``encoding`` (``None`` when all do); see :func:`undecodable_error`."""
    try:
        block.decode(encoding)
        return None
    except UnicodeDecodeError:
        pass
    for number, line in enumerate(block.split(b"\n"), start=1):
        try:
            line.decode(encoding)
        except UnicodeDecodeError as exc:
            return exc, number
    return None  # pragma: no cover - a block that fails decodes line by line


def text_block_checks(
    files: list[str],
    sep: str,
    fields: int,
    compressed: bool,
    blocksize: int | None,
    encoding: str = "utf-8",
    check_decoding: bool = False,
) -> list[list[Any]]:
    """Dask tasks of :func:`block_faults`, per file, per block of whole lines (``blocksize``
    bytes; a compressed file is one block): the checks of :func:`read_table` that a
    partition parsed by Dask can no longer show (a NUL byte cuts a value short; a short
    line is padded).  Compute them with the parse; :func:`raise_block_fault` names the
    first fault's file and line.  ``fields``: the header's number of fields.

    A parse computed with them already decodes every block (a bad byte fails it, and
    :func:`locate_undecodable` names the line), so the blocks are not decoded here too;
    ``check_decoding=True`` also names the first line that does not decode under
    ``encoding``, for checks computed without the parse."""
    import dask
    from dask.bytes import read_bytes

    _, blocks = read_bytes(
        files,
        delimiter=b"\n",
        blocksize=None if compressed else blocksize,
        sample=False,
        compression="infer" if compressed else None,
    )
    return [
        [
            dask.delayed(block_faults)(
                b, sep, None if i == 0 else fields, i == len(file) - 1, encoding, check_decoding
            )
            for i, b in enumerate(file)
        ]
        for file in blocks
    ]


def raise_block_fault(files: list[str], faults: list[list[Any]]) -> None:
    """The first fault :func:`text_block_checks` found, with its file and line."""
    for name, blocks in zip(files, faults):
        line = 1
        for breaks, fault in blocks:
            if fault is not None:
                raise InputError(fault[0], path=name, line=line + fault[1] - 1)
            line += breaks


# bytes of a block counted at a time: the per-line sums widen each byte to 8 (a 64 MiB
# block at once peaked at 590 MiB; in slices of 4 MiB, about 40 MiB over the block)
_COUNT_SLICE = 4 << 20


class _FieldCount:
    """Separators per line of a text table read in chunks, against the header's: the
    first line with fewer (blank lines, empty or carriage returns alone, aside) or more,
    while the file has shown no quote.  pandas pads a short line with missing values, and
    takes the first field of a first data line with one field more as a row label,
    shifting every column of every row one place (the first column lost)."""

    def __init__(self, sep: str) -> None:
        self.sep = ord(sep) if ord(sep) < 128 else -1
        self.expected: int | None = None  # separators in the header
        self.line = 1  # number of the line the next chunk starts in
        self.seps = 0  # separators and bytes other than CR of that unfinished line
        self.size = 0
        self.off = self.sep < 0
        self.found = 0  # separators on the line found at fault

    def feed(self, chunk: bytes) -> int | None:
        if self.off or not chunk:
            return None
        if b'"' in chunk:  # quoted fields may hold the separator: leave it to the parser
            self.off = True
            return None
        data = np.frombuffer(chunk, dtype=np.uint8)
        ends = np.flatnonzero(data == 10)
        tail = data[int(ends[-1]) + 1 :] if ends.size else data  # an unfinished line
        tail_size = tail.size - (
            chunk.count(b"\r", len(chunk) - tail.size) if b"\r" in chunk else 0
        )
        tail_seps = int(np.count_nonzero(tail == self.sep))
        if ends.size == 0:
            self.seps, self.size = self.seps + tail_seps, self.size + tail_size
            return None
        body = data[: int(ends[-1]) + 1]
        starts = np.concatenate(([0], ends[:-1] + 1))
        per_line = np.add.reduceat(body == self.sep, starts, dtype=np.int64)
        per_line[0] += self.seps
        size = np.diff(ends, prepend=-1) - 1  # bytes before each line break, CR aside
        if b"\r" in chunk:
            size -= np.add.reduceat(body == 13, starts, dtype=np.int64)
        size[0] += self.size
        first = self.line
        self.line += ends.size
        self.seps, self.size = tail_seps, tail_size
        if self.expected is None:
            self.expected = int(per_line[0])
            per_line, size, first = per_line[1:], size[1:], first + 1
        bad = np.flatnonzero(((per_line < self.expected) & (size > 0)) | (per_line > self.expected))
        if not bad.size:
            return None
        self.found = int(per_line[bad[0]])
        return first + int(bad[0])

    def finish(self) -> int | None:
        """The last line, when it has no line break and too few or too many fields."""
        if self.off or self.expected is None or self.size == 0 or self.seps == self.expected:
            return None
        self.found = self.seps
        return self.line

    def check(self, short: int | None, path: Path) -> None:
        """Raise naming line ``short`` (if any) of ``path``."""
        if short is not None:
            raise InputError(self.message(), path=str(path), line=short)

    def message(self) -> str:
        header = (self.expected or 0) + 1
        if self.found > (self.expected or 0):
            return (
                f"the line has more fields ({self.found + 1}) than the header ({header}); "
                "a value holding the separator must be quoted, or is --sep right? (if every "
                "data line ends with the separator, end the header line with it too)"
            )
        return (
            f"the line has fewer fields than the header ({header}); "
            "a missing value is an empty field (as in a,,c), or is --sep right?"
        )


def _check_columns(df: pd.DataFrame, columns: list[str], path: Path) -> None:
    """InputError naming the first of ``columns`` that ``df`` lacks."""
    for col in columns:
        if col not in df.columns:
            raise InputError(
                f"column not found; the file has {list(map(str, df.columns))}",
                column=col,
                path=str(path),
            )


def _check_categorical(categorical: Any) -> bool | list[str]:
    """``categorical`` of :func:`read_table`: a bool, or a list of column names."""
    if isinstance(categorical, (bool, np.bool_)):
        return bool(categorical)
    if isinstance(categorical, (str, bytes)) or not isinstance(categorical, Collection):
        raise InputError(
            f"categorical must be True, False or a list of column names, got {categorical!r}"
        )
    names = list(categorical)
    for name in names:
        if not isinstance(name, str):
            raise InputError(f"categorical: column names are strings, got {name!r}")
    return names


def _decode_head(head: bytes, encoding: str) -> str:
    """The first bytes of a file as text, a character cut at the end and undecodable bytes
    replaced (the parser names those)."""
    return codecs.getincrementaldecoder(encoding)(errors="replace").decode(head)


def is_wide_encoding(encoding: str) -> bool:
    """Whether ``encoding`` is UTF-16 or UTF-32, whose text holds NUL bytes.

    Examples
    --------
    >>> is_wide_encoding("UTF16"), is_wide_encoding("utf_32_le"), is_wide_encoding("latin-1")
    (True, True, False)
    """
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    return name.startswith(("utf-16", "utf-32"))


def _is_utf8(encoding: str) -> bool:
    try:
        return codecs.lookup(encoding).name in ("utf-8", "utf-8-sig")
    except LookupError:
        return False


def _read_text(
    path: Path,
    sep: str,
    dtype: Any,
    categorical: bool | list[str],
    kwargs: dict,
    typed: Collection[str] | None = None,
    encoding: str = "utf-8",
) -> tuple[pd.DataFrame, bool | list[str]]:
    """A text table read by Arrow where it can (categoricals made on the way; ``False``
    returned in their place) or by pandas (``categorical`` returned for the caller)."""
    fast = (
        None
        if dtype is not None or kwargs or not _is_utf8(encoding)
        else _read_text_arrow(path, sep)
    )
    # one pass over the bytes; the fields counted only for pandas (Arrow refuses a short
    # line, pandas pads it)
    _check_text(path, sep, scan="nrows" not in kwargs, fields=fast is None, encoding=encoding)
    if fast is None:
        if typed is not None:  # every column as written, only empty cells missing
            dtype, kwargs = str, {"keep_default_na": False, "na_values": [""]}
        if not _is_utf8(encoding):
            kwargs = {**kwargs, "encoding": encoding}
        if len(sep) > 1:  # a separator of several characters is taken literally, never as
            # the regular expression pandas would make of it (' | ' split at every space)
            kwargs = {**kwargs, "engine": "python"}
            df = pd.read_csv(path, sep=re.escape(sep), dtype=dtype, **kwargs)
        else:
            df = pd.read_csv(path, sep=sep, dtype=dtype, **kwargs)
        if "index_col" not in kwargs:
            refuse_row_labels(df.index, path, sep, encoding)
        if typed is not None:
            for name in dict.fromkeys(typed):
                if name in df.columns and isinstance(df[name], pd.Series):
                    df[name] = _typed_text(df[name])
        return df, categorical
    df = _text_frame(fast, categorical, typed)
    del fast
    _release_arrow_memory()
    return df, False


def _release_arrow_memory() -> None:
    """Hand the memory Arrow's pool kept from reading back to the system: the parse
    buffers and the dictionary table are freed once the frame is built, but the pool keeps
    them (some 130 MB after 3M rows) until asked."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


_SAMPLE_BYTES = 1 << 20


def _read_text_arrow(path: Path, sep: str) -> Any:
    """The text table at ``path`` as an Arrow table of dictionary-encoded strings (every
    column, exactly as written, quotes removed), or ``None`` where pandas must read it:
    compressed or not UTF-8, a header with empty or repeated names, a separator Arrow
    does not take, rows Arrow cannot tokenize (ragged rows, say), or a column of mostly
    distinct values in the first megabyte (identifiers, timestamps), which pandas reads
    at less cost than a dictionary of them."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return None
    if len(sep) != 1 or sep in '"\r\n':
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SAMPLE_BYTES)
    except OSError:
        return None
    if head[:2] == b"\x1f\x8b" or head[:3] in (b"BZh", b"\xfd7z") or head[:4] == b"PK\x03\x04":
        return None
    if head[:4] == b"\x28\xb5\x2f\xfd":  # zstandard
        return None
    names = _arrow_header(head, sep)
    if names is None:
        return None
    text = pa.dictionary(pa.int32(), pa.string())
    # a value can hold a line break only inside quotes: without any quote the reader
    # splits the file at line breaks, in parallel
    parse = pacsv.ParseOptions(delimiter=sep, newlines_in_values=_has_quote(path))
    convert = pacsv.ConvertOptions(
        column_types={name: text for name in names},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        null_values=[],
    )
    sample = head if len(head) < _SAMPLE_BYTES else head[: head.rfind(b"\n") + 1]
    try:
        if not _few_distinct(
            pacsv.read_csv(io.BytesIO(sample), parse_options=parse, convert_options=convert)
        ):
            return None
        table = pacsv.read_csv(path, parse_options=parse, convert_options=convert)
    except (pa.ArrowException, OSError, ValueError):
        return None
    if table.num_rows == 0 or table.column_names != names:
        return None
    if not all(pa.types.is_dictionary(f.type) for f in table.schema):
        return None
    return table


def _arrow_header(head: bytes, sep: str) -> list[str] | None:
    """The column names on the first line of ``head``, or ``None`` where pandas must read
    the file (lone CR line ends, undecodable bytes, an empty or repeated name)."""
    first_line = head.split(b"\n", 1)[0]
    if b"\r" in first_line.rstrip(b"\r"):  # lone CR line ends: pandas reads them
        return None
    try:
        first = first_line.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    names = next(iter(_csv_rows(first, sep)), [])
    if not names or any(not n for n in names) or len(set(names)) != len(names):
        return None
    return names


def _few_distinct(sample: Any) -> bool:
    """Whether every column of an Arrow sample repeats its values (at most one distinct
    value in four rows, or at most 256 distinct values)."""
    rows = sample.num_rows
    for column in sample.columns:
        distinct = max((len(chunk.dictionary) for chunk in column.chunks), default=0)
        if column.num_chunks > 1:
            distinct = len(column.unify_dictionaries().chunk(0).dictionary)
        if distinct > 256 and 4 * distinct > rows:
            return False
    return True


def _has_quote(path: Path) -> bool:
    """Whether the file holds a double quote anywhere."""
    import mmap

    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return False
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return view.find(b'"') >= 0


def _csv_rows(text: str, sep: str) -> list[list[str]]:
    import csv

    return list(csv.reader(io.StringIO(text), delimiter=sep))


def _typed_text(column: pd.Series) -> Any:
    """A column of text (missing: empty cells) typed as pandas.read_csv types it, from its
    distinct values (see :func:`_pandas_types`)."""
    import pyarrow as pa

    codes, uniques = pd.factorize(column.fillna(""), use_na_sentinel=True)
    typed = _pandas_types(pa.array(np.asarray(uniques, dtype=object), type=pa.string()))
    return pd.Series(typed.take(codes) if codes.size else typed[:0], index=column.index)


def _raw_text(values: Any) -> np.ndarray:
    """The distinct strings of a dictionary column as written, the empty one missing."""
    raw = np.asarray(values.to_numpy(zero_copy_only=False), dtype=object)
    raw[raw == ""] = np.nan
    return raw


def _text_frame(
    table: Any, categorical: bool | Collection[str], typed: Collection[str] | None = None
) -> pd.DataFrame:
    """The frame pandas.read_csv gives for an Arrow table of dictionary-encoded strings
    (:func:`_read_text_arrow`): each column's distinct values are typed by pandas' own
    parser (numbers, booleans, missing values) and the column gathered from them; the
    columns ``categorical`` names as categoricals (see :func:`read_table`); the columns
    ``typed`` leaves out (when given) kept as text, as written."""
    columns: dict[str, Any] = {}
    for name in table.column_names:
        codes, values = _dictionary_codes(table.column(name))
        if typed is None or name in typed:
            typed_values = _pandas_types(values)
        else:
            typed_values = _raw_text(values)
        if _wants_category(name, typed_values, categorical):
            columns[name] = _category_column(codes, typed_values)
        else:
            columns[name] = typed_values.take(codes) if codes.size else typed_values[:0]
    return pd.DataFrame(columns, copy=False)


def _wants_category(name: Any, values: Any, categorical: bool | Collection[str]) -> bool:
    """Whether a column of ``values`` is returned as a categorical: text columns named
    (``True``: all of them), numeric columns named explicitly."""
    if categorical is False or (categorical is not True and name not in categorical):
        return False
    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind == "string":
        return True
    return categorical is not True and kind in ("integer", "floating", "mixed-integer-float")


def _category_column(codes: np.ndarray, values: np.ndarray) -> pd.Categorical:
    """``values[codes]`` (``values`` from distinct strings, so equal values may repeat:
    ``"2"`` and ``"2.0"`` are both 2.0; missing ones allowed) as a categorical whose
    categories are the values present, sorted: they depend on the set of values only."""
    present = np.flatnonzero(pd.notna(values))
    kept = values[present]
    inner, uniques = pd.factorize(kept)
    uniques = np.asarray(uniques, dtype=kept.dtype)
    order = np.argsort(uniques.astype(str) if uniques.dtype == object else uniques, kind="stable")
    position = np.empty(order.size, dtype=np.int32)
    position[order] = np.arange(order.size, dtype=np.int32)
    rank = np.full(values.size + 1, -1, dtype=np.int32)  # a code -1 (missing) reads the last
    rank[present] = position[inner]
    categories = pd.Index(uniques[order], dtype=object if uniques.dtype == object else None)
    return pd.Categorical.from_codes(rank.take(codes), categories=categories)


def _as_categorical(df: pd.DataFrame, categorical: bool | Collection[str]) -> pd.DataFrame:
    """``df`` (read by pandas) with the columns ``categorical`` names as categoricals of
    sorted categories (see :func:`read_table`)."""
    if isinstance(categorical, bool):
        names = list(df.columns) if categorical else []
    else:
        names = [c for c in categorical if c in df]
    for name in names:
        column = df[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            column = column.astype(column.cat.categories.dtype)
        if _wants_category(name, column, categorical):
            codes, uniques = pd.factorize(column, use_na_sentinel=True)
            values = np.asarray(uniques, dtype=object if column.dtype == object else None)
            df[name] = _category_column(codes, values)
    return df


def _dictionary_codes(chunked: Any) -> tuple[np.ndarray, Any]:
    """One code array and the Arrow array of distinct strings of a dictionary column."""
    import pyarrow as pa

    combined = pa.chunked_array(chunked.chunks, type=chunked.type).unify_dictionaries()
    if not combined.num_chunks:
        return np.empty(0, dtype=np.int32), pa.array([], type=pa.string())
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in combined.chunks])
    return codes, combined.chunk(0).dictionary


def _pandas_types(values: Any) -> np.ndarray:
    """``values`` (the Arrow array of the distinct strings of one column) as
    pandas.read_csv types them: parsed by pandas itself from a one-column CSV of the
    values, every one quoted (written by Arrow)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not len(values):
        return np.empty(0, dtype=np.float64)
    buffer = io.BytesIO()
    pacsv.write_csv(
        pa.table({"v": values}),
        buffer,
        write_options=pacsv.WriteOptions(quoting_style="all_valid"),
    )
    buffer.seek(0)
    parsed = pd.read_csv(buffer, dtype=None, skip_blank_lines=False)["v"]
    if len(parsed) != len(values):  # pragma: no cover - one line per quoted value
        raise AssertionError("typing the distinct values lost a value")
    return parsed.to_numpy()


def _open_binary(path: Path) -> IO[bytes]:
    """``path`` opened for reading bytes, decompressed when it starts with the magic bytes
    of gzip, bzip2, xz or a zip archive of one file (what pandas reads by the extension);
    a zip of several files or a zstandard file is an :class:`InputError` saying so."""
    with open(path, "rb") as fh:
        magic = fh.read(6)
    if magic[:2] == b"\x1f\x8b":
        return cast(IO[bytes], gzip.open(path, "rb"))
    if magic[:3] == b"BZh":
        return cast(IO[bytes], bz2.open(path, "rb"))
    if magic == b"\xfd7zXZ\x00":
        return cast(IO[bytes], lzma.open(path, "rb"))
    if magic[:4] == b"PK\x03\x04":
        archive = zipfile.ZipFile(path)
        members = [m for m in archive.namelist() if not m.endswith("/")]
        if len(members) != 1:
            archive.close()
            raise InputError(
                f"a zip archive of {len(members)} files: extract the one to read",
                path=str(path),
            )
        return cast(IO[bytes], archive.open(members[0]))
    if magic[:4] == b"\x28\xb5\x2f\xfd":
        raise InputError(
            "a zstandard-compressed file, which is not read here: decompress it (or gzip it)",
            path=str(path),
        )
    return open(path, "rb")


def _open_checked(path: str | Path, encoding: str, name: str) -> tuple[Path, IO[bytes]]:
    """Validate a text input and return it opened for bytes (see :func:`open_text`)."""
    from ._validation import check_input_path

    path = check_input_path(path, name)
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise InputError(f"unknown text encoding {encoding!r}", path=str(path)) from None
    try:
        with _open_binary(path) as raw:
            head = raw.read(1 << 16)
    except (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    wide = is_wide_encoding(encoding)
    if looks_utf16(head) and not wide:
        raise InputError(
            f"{UTF16_TEXT}; is it the right file, or another --format?", path=str(path)
        )
    if b"\x00" in head and not wide:
        raise InputError(
            "the file is binary, not text (it holds NUL bytes); is it the right "
            "file, or another --format?",
            path=str(path),
            line=head.count(b"\n", 0, head.index(b"\x00")) + 1,
        )
    return path, _open_binary(path)


def open_text(path: str | Path, encoding: str = "utf-8", name: str = "input") -> IO[str]:
    """Open a text input (plain or gzip, told by its first bytes) with clear errors.

    Raises
    ------
    InputError
        A missing file, a directory, an unknown encoding, a binary or UTF-16 file, or a
        corrupt gzip stream.  Bytes that do not decode raise :class:`UnicodeDecodeError`
        while reading; read through :func:`text_lines` to get an error naming the line.
    """
    _path, raw = _open_checked(path, encoding, name)
    return io.TextIOWrapper(cast(Any, raw), encoding=encoding, newline="")


class TextLines:
    """The lines of a text file as ``(line number, text)``; see :func:`text_lines`.

    Attributes
    ----------
    undecodable_lines : list of int
        With ``errors="replace"``: the 1-based numbers of the lines read so far whose
        undecodable bytes were replaced by U+FFFD (empty with ``errors="strict"``).
    """

    def __init__(self, path: str | Path, encoding: str, name: str, errors: str) -> None:
        from ._validation import check_choice

        self.errors = check_choice(errors, "errors", ("strict", "replace"))
        self.path, self._raw = _open_checked(path, encoding, name)
        self.encoding = encoding
        self.undecodable_lines: list[int] = []
        self._lines = self._read()

    @property
    def undecodable(self) -> int:
        """How many lines read so far held undecodable bytes."""
        return len(self.undecodable_lines)

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return self

    def __next__(self) -> tuple[int, str]:
        return next(self._lines)

    def close(self) -> None:
        """Close the file (also done when the lines run out or reading fails)."""
        self._lines.close()

    def _undecodable(self, exc: UnicodeDecodeError, number: int) -> InputError:
        return undecodable_error(exc, self.encoding, self.path, number)

    def _read(self) -> Generator[tuple[int, str], None, None]:
        raw = self._raw
        decoder = codecs.getincrementaldecoder(self.encoding)("strict")
        try:
            for number, line in enumerate(raw, start=1):
                try:
                    text = decoder.decode(line)
                except UnicodeDecodeError as exc:
                    if self.errors == "strict":
                        raise self._undecodable(exc, number) from None
                    decoder.reset()
                    text = line.decode(self.encoding, errors="replace")
                    self.undecodable_lines.append(number)
                text = text.rstrip("\r\n")
                if "\r" in text:
                    raise InputError(LONE_CR, path=str(self.path), line=number)
                yield number, text
        except (
            OSError,
            EOFError,
            zlib.error,
            lzma.LZMAError,
            zipfile.BadZipFile,
        ) as exc:  # a truncated or corrupt gzip stream
            raise InputError(f"cannot read the file: {exc}", path=str(self.path)) from None
        finally:
            raw.close()


#: What every reader says of text that does not decode under the encoding it was given.
ENCODING_HINT = (
    "is the file in another encoding? give it (encoding= / --encoding, e.g. latin-1 or "
    "cp1252), or convert the file"
)


def _encoding_name(encoding: str) -> str:
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return encoding
    return "UTF-8" if name.startswith("utf-8") else encoding


class UndecodableText(InputError):
    """Text that does not decode under the encoding it was read with (see
    :func:`undecodable_error`)."""


def undecodable_error(
    exc: UnicodeDecodeError, encoding: str, path: str | Path, line: int | None
) -> UndecodableText:
    """The :class:`InputError` of a line whose bytes do not decode: the file, the line,
    the first bad byte (its value and its offset in the line) and how to give the encoding.

    Examples
    --------
    >>> try:
    ...     b"caf\\xe9".decode("utf-8")
    ... except UnicodeDecodeError as exc:
    ...     print(undecodable_error(exc, "utf-8", "log.txt", 7))  # doctest: +ELLIPSIS
    bytes that are not UTF-8 text (byte 0xe9 at offset 3 of the line: unexpected end of data); is the file in another encoding? ... (file 'log.txt', line 7)
    """
    bad = bytes(exc.object[exc.start : exc.start + 1])
    return UndecodableText(
        f"bytes that are not {_encoding_name(encoding)} text (byte 0x{bad.hex()} at offset "
        f"{exc.start} of the line: {exc.reason}); {ENCODING_HINT}",
        path=str(path),
        line=line,
    )


def locate_undecodable(path: str | Path, encoding: str, name: str = "input") -> NoReturn:
    """Raise the :class:`UndecodableText` of the first line of ``path`` (plain or
    compressed text) that does not decode under ``encoding`` (see
    :func:`undecodable_error`), for readers whose parser knows only that some byte failed.
    If every line decodes, it names the file only; a compressed stream that is cut or
    corrupt is said so.  A binary or UTF-16 file is the :class:`InputError`
    :func:`open_text` raises."""
    _path, raw = _open_checked(path, encoding, name)
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    number = 1
    try:
        with raw:
            for line in raw:
                decoder.decode(line)
                number += 1
            number -= 1  # the end of the data belongs to the last line
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise undecodable_error(exc, encoding, path, max(number, 1)) from None
    except (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile) as exc:
        raise InputError(
            f"cannot read the compressed file: {exc} (truncated or corrupt?)", path=str(path)
        ) from None
    raise UndecodableText(
        f"the file is not {_encoding_name(encoding)} text; {ENCODING_HINT}", path=str(path)
    )


def text_lines(
    path: str | Path, encoding: str = "utf-8", name: str = "input", errors: str = "strict"
) -> TextLines:
    r"""``(line number, text)`` of every line (1-based, without the line end).

    Parameters
    ----------
    path : str or Path
        A text file, plain or gzip (told by its first bytes).
    encoding : str
        Its text encoding.
    name : str
        What the file is, for error messages (``"taxonomy file"``).
    errors : {"strict", "replace"}
        ``"strict"``: undecodable bytes raise :class:`InputError` naming the file and the
        line, never a bare :class:`UnicodeDecodeError`.  ``"replace"``: they become U+FFFD
        and the line numbers are kept in ``undecodable_lines`` of the returned iterator,
        for the caller to report.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> _ = open(path, "wb").write(b"a b\nc\xff\n")
    >>> try:
    ...     list(text_lines(path))
    ... except InputError as exc:
    ...     print(exc.line)
    2
    >>> lines = text_lines(path, errors="replace")
    >>> [text for _, text in lines], lines.undecodable_lines
    (['a b', 'c\ufffd'], [2])
    """
    return TextLines(path, encoding, name, errors)


def parse_error(exc: Exception, path: str | Path, encoding: str = "utf-8") -> InputError:
    r"""The :class:`InputError` of a pandas parser error on a text file, naming its line.

    pandas names the line of a line with too many fields, but gives only a row of the
    table (rows count quoted line breaks as one) when a quote is never closed; that line
    is found here: the last line at which the file's count of quote characters turns odd.

    Examples
    --------
    >>> import os, tempfile
    >>> import pandas as pd
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write('a,b\n1,"x\ny"\n"2,3\n4,5\n')
    >>> try:
    ...     pd.read_csv(path)
    ... except pd.errors.ParserError as exc:
    ...     error = parse_error(exc, path)
    >>> error.line
    4
    >>> str(error).split(";")[0]
    'a quote (") opens a value on this line and is never closed'
    """
    text = str(exc)
    match = re.search(r"line (\d+)", text)
    if match:
        return InputError(
            f"cannot parse table: {text}; is --sep right?", path=str(path), line=int(match.group(1))
        )
    if "EOF inside string" in text:
        opened, odd = None, False
        try:
            for number, line in text_lines(path, encoding, errors="replace"):
                if line.count('"') % 2:
                    odd = not odd
                    if odd:
                        opened = number
        except InputError:
            opened = None
        return InputError(
            'a quote (") opens a value on this line and is never closed; a quote inside a '
            'value is written twice ("") in a quoted value, or is --sep right?',
            path=str(path),
            line=opened if odd else None,
        )
    return InputError(f"cannot parse table: {text}; is --sep right?", path=str(path))


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success.

    Nothing is left behind on failure, and readers never see a half-written file.
    """
    from ._validation import check_path

    path = check_path(path, "output path")
    if path.is_dir():
        raise InputError("the output names a directory, not a file", path=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp" + "".join(path.suffixes), dir=path.parent
    )
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.exists():  # mkstemp creates 0600; give the output the usual permissions
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_path, 0o666 & ~umask)
        os.replace(tmp_path, path)
    except OSError as exc:  # a full disk, a quota: say which output (a write names no file)
        if exc.filename is not None and str(exc.filename) != str(tmp_path):
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def remove_folder(folder: str | Path) -> None:
    """Remove ``folder`` and everything in it, even while workers are still writing into it.

    Dask workers keep writing their parts after a computation has failed; a plain
    ``rmtree`` lists the folder, removes what it found and then fails on the folder a late
    part was just created in, leaving it behind.  The folder is first renamed into a fresh
    private folder beside it, so a late write no longer finds its path and fails (nothing
    writes parts by folder descriptor, and no writer creates missing parent folders), and
    only then removed.  Errors are ignored, as ``rmtree(..., ignore_errors=True)`` does.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(d, "parts", "sub"))
    >>> remove_folder(os.path.join(d, "parts"))
    >>> os.listdir(d)
    []
    """
    folder = Path(folder)
    try:
        grave = Path(tempfile.mkdtemp(prefix=".removing-", dir=folder.parent))
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    try:
        os.replace(folder, grave / "folder")
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(grave, ignore_errors=True)


@contextlib.contextmanager
def staged_folder(
    path: str | Path, what: str = "the Parquet output of the Dask engine"
) -> Iterator[Path]:
    """Yield an empty private folder beside ``path``; rename it onto ``path`` only on success.

    For outputs written as a folder of parts (by Dask workers, in any order): ``path`` must
    not exist yet (an existing file or folder is never replaced, so a release cannot mix
    parts of two runs).  While the block runs the folder is owner-only (``mkdtemp``); on
    success it gets the permissions a new folder would get under the process's umask and
    is renamed onto ``path`` in one step; on any error, including ``KeyboardInterrupt``,
    it is removed with everything written into it.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> with staged_folder(os.path.join(d, "out.parquet")) as tmp:
    ...     _ = open(tmp / "part.0.parquet", "w").write("x")
    >>> os.listdir(os.path.join(d, "out.parquet"))
    ['part.0.parquet']
    >>> with staged_folder(os.path.join(d, "out.parquet")) as tmp:
    ...     pass
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: the Parquet output of the Dask engine is a folder; this path exists (remove it or choose another) (file '...')
    """
    from ._validation import check_path

    path = check_path(path, "output path")
    if path.exists() or path.is_symlink():
        raise InputError(
            f"{what} is a folder; this path exists (remove it or choose another)",
            path=str(path),
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".parts", dir=path.parent))
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            remove_folder(tmp)


def gzip_writer(raw: IO[bytes]) -> gzip.GzipFile:
    """A gzip stream written onto the open binary file ``raw``, the same bytes every run.

    The header holds no file name (a temporary name would leak into the release) and a
    zero modification time, so the same content always gives the same compressed bytes.

    Examples
    --------
    >>> import io
    >>> raw = io.BytesIO()
    >>> with gzip_writer(raw) as gz:
    ...     _ = gz.write(b"a,b\\n")
    >>> data = raw.getvalue()
    >>> data[3] & 0x08, data[4:8], gzip.decompress(data)
    (0, b'\\x00\\x00\\x00\\x00', b'a,b\\n')
    """
    return gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)


def is_gzip_path(path: str | Path) -> bool:
    """Whether an output ``path`` is written gzip-compressed (it ends in ``.gz``).

    >>> is_gzip_path("out.CSV.GZ"), is_gzip_path("out.csv")
    (True, False)
    """
    return Path(path).suffix.lower() == ".gz"


@contextlib.contextmanager
def atomic_write(
    path: str | Path, mode: str = "w", encoding: str | None = "utf-8", compress: bool = False
) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; rename it onto ``path`` on success.

    With ``compress``, what is written goes through :func:`gzip_writer` (no file name, a
    zero time in the header: reproducible bytes).

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> with atomic_write(os.path.join(d, "out.txt")) as fh:
    ...     _ = fh.write("done")
    >>> open(os.path.join(d, "out.txt")).read()
    'done'
    >>> with atomic_write(os.path.join(d, "out.txt.gz"), compress=True) as fh:
    ...     _ = fh.write("done")
    >>> gzip.open(os.path.join(d, "out.txt.gz"), "rt").read()
    'done'
    """
    with atomic_path(path) as tmp:
        binary = "b" in mode
        if compress:
            with open(tmp, "wb") as raw:
                with gzip_writer(raw) as gz:
                    if binary:
                        yield cast(IO[bytes], gz)
                    else:
                        with io.TextIOWrapper(gz, encoding=encoding, newline="") as text:
                            yield text
                raw.flush()
                os.fsync(raw.fileno())
            return
        with open(
            tmp, mode, encoding=None if binary else encoding, newline=None if binary else ""
        ) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


def write_table(
    df: pd.DataFrame, path: str | Path, sep: str | None = None, index: bool = False
) -> None:
    """Write a DataFrame atomically as Parquet (``.parquet``/``.pq``) or CSV/TSV."""
    path = Path(path)
    ext = file_suffix(path)
    if sep is None:
        sep = "\t" if ext in TSV_EXTENSIONS else ","
    if is_gzip_path(path) and ext not in PARQUET_EXTENSIONS:
        with atomic_write(path, compress=True) as text:
            df.to_csv(text, sep=sep, index=index)
        return
    with atomic_path(path) as tmp:
        if ext in PARQUET_EXTENSIONS:
            df.to_parquet(tmp, index=index)
        elif index or not _write_csv_arrow(df, tmp, sep):
            df.to_csv(tmp, sep=sep, index=index, compression=None)


def _write_csv_arrow(df: pd.DataFrame, path: Path, sep: str) -> bool:
    """Write ``df`` as ``df.to_csv(path, sep=sep, index=False)`` would, byte for byte, with
    Arrow's multi-threaded writer; ``False`` (nothing written) where the bytes could differ:
    a column of floats, booleans, dates or mixed objects, a value or name that needs quotes
    (a separator, a quote or a line break in it), a single column."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return False
    if df.shape[1] < 2 or len(sep) != 1 or not df.columns.is_unique:
        return False
    special = re.compile("[" + re.escape(sep) + '"\r\n]')
    names = [str(c) for c in df.columns]
    if any(special.search(n) for n in names) or any(not isinstance(c, str) for c in df.columns):
        return False
    arrays = []
    for name in df.columns:
        array = _arrow_column(df[name], sep)
        if array is None:
            return False
        arrays.append(array)
    try:
        table = pa.table(arrays, names=names)
        with open(path, "wb") as fh:
            fh.write((sep.join(names) + "\n").encode("utf-8"))
            pacsv.write_csv(
                table,
                fh,
                write_options=pacsv.WriteOptions(
                    include_header=False, delimiter=sep, quoting_style="none"
                ),
            )
    except (pa.ArrowException, ValueError, TypeError):
        return False
    return True


def _arrow_column(column: pd.Series, sep: str) -> Any:
    """An Arrow array that writes as pandas writes ``column`` (integers; text with missing
    values written empty; categoricals of those), or ``None``."""
    import pyarrow as pa
    import pyarrow.compute as pacompute

    values = column
    if isinstance(column.dtype, pd.CategoricalDtype):
        values = pd.Series(column.cat.categories)
    integers = pd.api.types.is_integer_dtype(values.dtype)
    if not integers and values.dtype != object:
        return None  # floats, booleans, dates: pandas formats them its own way
    if values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) not in (
        "string",
        "empty",
    ):
        return None
    try:
        array = pa.Array.from_pandas(column)
    except (pa.ArrowException, ValueError, TypeError):
        return None
    text = array.dictionary if pa.types.is_dictionary(array.type) else array
    if pa.types.is_string(text.type) or pa.types.is_large_string(text.type):
        pattern = "[" + re.escape(sep) + '"\r\n]'
        if pacompute.any(pacompute.match_substring_regex(text, pattern)).as_py():
            return None
    return array


class Pseudonymizer:
    """Keyed pseudonyms: ``HMAC-SHA256(key, value)``, hex, truncated to ``length`` characters.

    A bare or publicly salted hash of an identifier is reversed by hashing every candidate
    identifier (a dictionary attack); a secret key prevents that.  By default a fresh random
    key is drawn for each ``Pseudonymizer``, so pseudonyms are consistent within one release
    and unlinkable across releases, and the key is never written anywhere.  Give a key (a
    key file, or the environment variable ``STRUCTANON_PSEUDONYM_KEY``) only when several
    releases must link.

    Parameters
    ----------
    key : bytes, optional
        At least 16 bytes.  Default: 32 random bytes.
    length : int
        Hex characters kept (16 = 64 bits).

    Examples
    --------
    >>> p = Pseudonymizer(b"0123456789abcdef")
    >>> a = p.pseudonymize(["alice", "bob", "alice"])
    >>> a[0] == a[2] and a[0] != a[1], len(a[0])
    (True, 16)
    """

    def __init__(
        self, key: bytes | None = None, length: int = 16, source: str | None = None
    ) -> None:
        if key is None:
            key, source = secrets.token_bytes(32), source or "random"
        if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
            raise InputError("pseudonymization key must be at least 16 bytes")
        if not 8 <= int(length) <= 64:
            raise InputError(f"pseudonym length must be 8..64 hex characters, got {length}")
        self._key = bytes(key)
        self.length = int(length)
        self.key_source = source or "given"
        self._binding = b""  # digest of the input the publication randomness is bound to

    @staticmethod
    def _parse_key(raw: bytes) -> bytes:
        text = raw.strip()
        if re.fullmatch(rb"[0-9a-fA-F]{32,}", text) and len(text) % 2 == 0:
            return bytes.fromhex(text.decode())
        return text

    @classmethod
    def from_config(cls, key_file: str | Path | None = None, length: int = 16) -> Pseudonymizer:
        """Key from ``key_file``, else from ``$STRUCTANON_PSEUDONYM_KEY``, else a random key.

        A key given as hex (32+ hex digits) is decoded; any other text is used as bytes.
        """
        if key_file is not None:
            path = Path(key_file)
            if not path.exists():
                raise InputError("pseudonymization key file not found", path=str(path))
            if path.is_dir():
                raise InputError("the key file is a directory", path=str(path))
            key = cls._parse_key(path.read_bytes())
            if len(key) < 16:
                raise InputError(
                    f"the key file holds {len(key)} bytes; a key needs at least 16 bytes",
                    path=str(path),
                )
            return cls(key, length, source="file")  # never its name: it would link releases
        env = os.environ.get(KEY_ENV)
        if env:
            key = cls._parse_key(env.encode())
            if len(key) < 16:  # name the variable: the user may not know it is set
                raise InputError(
                    f"${KEY_ENV} holds {len(key)} bytes; a key needs at least 16 bytes "
                    f"(set a longer one, or unset it for a fresh random key)"
                )
            return cls(key, length, source=f"${KEY_ENV}")
        return cls(None, length)

    def pseudonymize(self, values: Any) -> np.ndarray:
        """Pseudonyms of ``values`` (object array of str), computed once per distinct value.

        A value's pseudonym depends only on its text, ``str(value)``.
        """
        arr = np.asarray(
            values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else values, dtype=object
        ).reshape(-1)
        missing = pd.isna(arr)
        if missing.any():
            raise InputError("missing identifier", row=int(np.flatnonzero(missing)[0]))
        codes, uniques = pd.factorize(arr)  # hashing: one HMAC per distinct identifier
        digest, key, length = hmac.digest, self._key, self.length  # one C call per value
        digests = np.array(
            [
                digest(key, str(u).encode("utf-8"), "sha256").hex()[:length]
                for u in uniques.tolist()
            ],
            dtype=object,
        )
        return digests[codes]

    @property
    def reproducible(self) -> bool:
        """True when the key was given (file, environment or bytes), so releases repeat."""
        return self.key_source != "random"

    def bound(self, *content: Any) -> Pseudonymizer:
        """This key with its publication randomness (:meth:`rng`) bound to ``content``, the
        input being released (:func:`content_digest`); pseudonyms are unchanged.

        With a given key, :meth:`rng` would otherwise give two releases of *different*
        inputs (a corrected table, next month's log) with the same parameters the same
        streams: the same row order, labels and noise, so the two would join row by row and
        subtracting them would cancel the noise.  Bound to its input, a release still
        repeats byte for byte for the same input, seed and key, while releases of different
        inputs draw independent streams.  A fresh random key needs no binding (``self`` is
        returned, and nothing is hashed).

        Examples
        --------
        >>> import pandas as pd
        >>> p = Pseudonymizer(b"0123456789abcdef")
        >>> a, b = pd.DataFrame({"x": [1, 2, 3]}), pd.DataFrame({"x": [1, 2, 4]})
        >>> def order(df):
        ...     return p.bound(df).rng("order", 3).permutation(50).tolist()
        >>> order(a) == order(a.copy()), order(a) == order(b)
        (True, False)
        """
        if not self.reproducible:
            return self
        other = copy.copy(self)
        other._binding = hashlib.sha256(self._binding + content_digest(*content)).digest()
        return other

    def rng(self, purpose: str, *context: Any) -> np.random.Generator:
        """Secret publication randomness: a generator only the key holder can regenerate.

        Everything that decides how a published artefact looks beyond the algorithm's
        result (row order, node labels, group ids, choices among equals) draws from this,
        never from the public ``seed``.  The generator is seeded with
        ``HMAC-SHA256(key, binding, purpose, *context)``: with the default fresh random key
        it is fresh operating-system entropy; with a given key the same input (the
        ``binding`` of :meth:`bound`), ``purpose`` and ``context`` give the same stream, so
        a key holder reproduces a release byte for byte and nobody else can.  Pass the
        public parameters (and the seed) as ``context`` so that two releases with
        different parameters do not share an order, and bind the key to the input.

        Examples
        --------
        >>> p = Pseudonymizer(b"0123456789abcdef")
        >>> a = p.rng("order", 5).permutation(10)
        >>> bool((a == p.rng("order", 5).permutation(10)).all())
        True
        >>> bool((a == Pseudonymizer().rng("order", 5).permutation(10)).all()) in (True, False)
        True
        """
        message = json.dumps([str(purpose), *map(str, context)]).encode("utf-8")
        if self._binding:  # see bound()
            message = self._binding + b"\0" + message
        digest = hmac.new(self._key, b"structanon/publication\0" + message, hashlib.sha256).digest()
        return np.random.Generator(
            np.random.PCG64(np.random.SeedSequence(int.from_bytes(digest, "big")))
        )

    def __repr__(self) -> str:
        return f"Pseudonymizer(key_source={self.key_source!r}, length={self.length})"


def content_digest(*parts: Any) -> bytes:
    """SHA-256 of the content of ``parts``: DataFrames and Series (column names and every
    cell, in order; a categorical column hashes as its values), numpy arrays, sequences
    and scalars.  Equal content gives equal digests in every process (set values are
    hashed with their elements sorted).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> df = pd.DataFrame({"a": ["x", "y"], "b": [1, 2]})
    >>> content_digest(df) == content_digest(df.copy())
    True
    >>> content_digest(df) == content_digest(df.iloc[::-1])  # order counts
    False
    >>> content_digest(np.arange(3)) == content_digest(np.arange(3)), len(content_digest(1))
    (True, 32)
    """
    digest = hashlib.sha256()
    for part in parts:
        _digest_into(digest, part)
    return digest.digest()


def _canonical_text(value: Any) -> str:
    if isinstance(value, (set, frozenset)):
        return json.dumps(sorted(map(_canonical_text, value)))
    if isinstance(value, (list, tuple)):
        return json.dumps([_canonical_text(v) for v in value])
    return repr(value)


def _digest_into(digest: Any, part: Any) -> None:
    if isinstance(part, pd.Series):
        part = part.to_frame()
    if isinstance(part, pd.DataFrame):
        # names and values, not dtypes: a categorical or Arrow-string column holding the same
        # text as an object column is the same input
        digest.update(b"frame")
        digest.update(json.dumps([len(part), [str(c) for c in part.columns]]).encode("utf-8"))
        for _, column in part.items():
            try:
                hashed = pd.util.hash_pandas_object(column, index=False)
            except TypeError:  # unhashable cells (sets, lists)
                hashed = pd.util.hash_pandas_object(column.map(_canonical_text), index=False)
            digest.update(hashed.to_numpy().tobytes())
        return
    if isinstance(part, (list, tuple)):  # each item as one value, whatever its shape
        items = np.empty(len(part), dtype=object)
        for i, value in enumerate(part):
            items[i] = value
        part = items
    if isinstance(part, np.ndarray):
        if part.dtype.kind in "OUS":  # values as text: equal values, equal digest
            digest.update(f"array text {part.shape}".encode())
            text = np.array([_canonical_text(v) for v in part.reshape(-1).tolist()], dtype=object)
            digest.update(pd.util.hash_array(text).tobytes())
        else:
            digest.update(f"array {part.dtype.str} {part.shape}".encode())
            digest.update(np.ascontiguousarray(part).tobytes())
        return
    digest.update(b"value " + _canonical_text(part).encode("utf-8"))


def release_key(
    key: Pseudonymizer | bytes | str | Path | None = None, length: int = 16
) -> Pseudonymizer:
    """The secret key of one release: pseudonyms and publication randomness.

    Parameters
    ----------
    key : Pseudonymizer, bytes, str or path, optional
        A :class:`Pseudonymizer` is used as it is; ``bytes`` are the key itself (at least
        16); a ``str`` or path names a key file.  ``None`` (the default) takes
        ``$STRUCTANON_PSEUDONYM_KEY`` when it is set, else draws a fresh random key that is
        never written anywhere, so the release cannot be regenerated or linked to another.

    Examples
    --------
    >>> release_key(b"0123456789abcdef").reproducible
    True
    """
    if isinstance(key, Pseudonymizer):
        return key
    if isinstance(key, (bytes, bytearray)):
        return Pseudonymizer(bytes(key), length, source="given")
    if isinstance(key, (str, Path)):
        return Pseudonymizer.from_config(key, length)
    if key is None:
        return Pseudonymizer.from_config(None, length)
    raise InputError(
        f"key must be bytes, a key file path or a Pseudonymizer, not {type(key).__name__}"
    )


class _Stage:
    """Temporary paths of one :func:`staged_outputs` block, renamed together at its end."""

    def __init__(self) -> None:
        self.pending: list[tuple[Path, Path]] = []
        self.private: set[Path] = set()  # temporary paths of outputs only the owner may read
        self.private_dirs: list[Path] = []  # the owner-only (0700) folders that hold them
        self.made: list[Path] = []  # folders made for the outputs, removed on failure

    def __call__(self, path: str | Path, private: bool = False) -> Path:
        """A temporary path beside ``path``; ``private``: the output undoes the release (a
        link to the input) and is made readable by its owner only (mode 0600), and while it
        is written it lies in a folder only its owner can enter (mode 0700), whatever mode
        the writer creates it with."""
        path = Path(path)
        missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        self.made += missing  # deepest first
        if private:
            folder = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
            self.private_dirs.append(folder)
            self.pending.append((folder / path.name, path))
            self.private.add(folder / path.name)
            return folder / path.name
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".tmp" + "".join(path.suffixes), dir=path.parent
        )
        os.close(fd)
        os.unlink(tmp)  # writers create it; a writer that writes nothing leaves nothing
        self.pending.append((Path(tmp), path))
        return Path(tmp)

    def clean_up(self, done: bool) -> None:
        """Remove every temporary path left; unless ``done``, the folders made for the
        outputs too (those still empty)."""
        for tmp, _target in self.pending:
            if tmp.is_dir():
                remove_folder(tmp)
            elif tmp.exists():
                tmp.unlink()
        for folder in self.private_dirs:
            remove_folder(folder)
        if not done:  # a folder made for an output that never came is removed (if empty)
            for folder in sorted(self.made, key=lambda p: len(p.parts), reverse=True):
                with contextlib.suppress(OSError):
                    folder.rmdir()


@contextlib.contextmanager
def staged_outputs() -> Iterator[_Stage]:
    """Write several outputs all-or-nothing.

    ``stage(path)`` returns a temporary path beside ``path``; write each output there.
    When the block ends without error every temporary file is renamed onto its target in
    the order staged (stage the main output last); when anything fails, every temporary
    file is removed and no target is touched.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> try:
    ...     with staged_outputs() as stage:
    ...         _ = open(stage(os.path.join(d, "side.json")), "w").write("{}")
    ...         raise RuntimeError("the main output failed")
    ... except RuntimeError:
    ...     pass
    >>> os.listdir(d)
    []
    >>> try:  # folders made for the outputs go too
    ...     with staged_outputs() as stage:
    ...         _ = open(stage(os.path.join(d, "new", "sub", "out.csv")), "w").write("x")
    ...         raise RuntimeError("failed")
    ... except RuntimeError:
    ...     pass
    >>> os.listdir(d)
    []
    """
    stage = _Stage()
    done = False
    try:
        yield stage
        umask = os.umask(0)
        os.umask(umask)
        for tmp, _target in stage.pending:
            if tmp.is_file():
                os.chmod(tmp, 0o600 if tmp in stage.private else 0o666 & ~umask)
        for tmp, target in stage.pending:
            if tmp.exists():
                os.replace(tmp, target)
        done = True
    except OSError as exc:  # a full disk while writing: name the output, not its stand-in
        targets = {str(tmp): str(target) for tmp, target in stage.pending}
        if str(exc.filename) in targets:
            raise OSError(exc.errno, exc.strerror, targets[str(exc.filename)]) from exc
        raise
    finally:
        stage.clean_up(done)
