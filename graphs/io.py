"""Read and write social-network exports: edge lists, CSV, GraphML, GEXF, node-link JSON."""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import itertools
import json
import re
import warnings
import xml.etree.ElementTree as ET
import xml.parsers.expat
import zlib
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
from networkx.readwrite.gexf import GEXFReader, GEXFWriter
from networkx.readwrite.graphml import GraphMLReader

from structanon._validation import check_choice, check_encoding, check_input_path, check_path
from structanon.errors import InputError
from structanon.io import atomic_write, is_gzip_path, locate_undecodable, open_text

__all__ = ["FORMATS", "read_graph", "write_graph", "guess_format", "check_output_format"]

FORMATS = ("edgelist", "csv", "graphml", "gexf", "json")
_EXTENSIONS = {
    ".txt": "edgelist",
    ".edges": "edgelist",
    ".edgelist": "edgelist",
    ".el": "edgelist",
    ".tsv": "edgelist",
    ".csv": "csv",
    ".graphml": "graphml",
    ".gexf": "gexf",
    ".json": "json",
}
INPUT_REPORT = "input_report"


def _named_format(path: str | Path) -> tuple[str, str | None]:
    """The extension of ``path`` (``.gz`` ignored) and the format it names, if any."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    ext = suffixes[-1] if suffixes else ""
    return ext, _EXTENSIONS.get(ext)


def guess_format(path: str | Path, format: str | None = None) -> str:  # noqa: A002
    """The format named by ``format``, else by the file extension (``.gz`` ignored)."""
    if format is not None:
        return check_choice(format, "format", FORMATS)
    ext, named = _named_format(path)
    if named is None:
        raise InputError(
            f"cannot tell the graph format from the extension {ext!r}; give one of {FORMATS}",
            path=str(path),
        )
    return named


def check_output_format(
    path: str | Path,
    format: str | None,  # noqa: A002
    path_name: str = "path",
    format_name: str = "format",
) -> str:
    """The format to write ``path`` in: ``format`` if given, else the extension's.

    A ``format`` that contradicts the extension of a known format (an edge list bound for
    ``out.graphml``) is an :class:`InputError` naming both; a path without a known
    extension takes ``format`` as given.

    Examples
    --------
    >>> check_output_format("out.bin", "edgelist")
    'edgelist'
    >>> check_output_format("out.graphml", "edgelist")
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: path ends in '.graphml' (graphml) but format is 'edgelist'; ...
    """
    if format is None:
        return guess_format(path)
    format = check_choice(format, format_name, FORMATS)  # noqa: A001
    ext, named = _named_format(path)
    if named is not None and named != format:
        raise InputError(
            f"{path_name} ends in {ext!r} ({named}) but {format_name} is {format!r}; drop "
            f"{format_name}, or give {path_name} a name ending in "
            f"{', '.join(e for e, f in _EXTENSIONS.items() if f == format)}",
            path=str(path),
        )
    return format


_HINT = "wrong --format, or not a graph file?"


def _read_text(path: Path, encoding: str = "utf-8") -> str:
    """The whole file as text in ``encoding``, through the core's opener (gzip told by its
    magic bytes); a binary file, or one that does not decode, is an :class:`InputError`
    naming the file and the line (and byte) of the first bad byte."""
    try:
        with open_text(path, encoding, name="input graph") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        locate_undecodable(path, encoding, "input graph")  # names the line and the byte
    except (OSError, EOFError) as exc:  # a corrupt gzip stream past its header
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError(
            "the file holds NUL bytes: a binary file, not a graph export?",
            path=str(path),
            line=line,
        )
    return text.removeprefix("\ufeff")


@contextlib.contextmanager
def _no_gc():
    """Pause the cyclic garbage collector while many small objects are built (a graph's
    adjacency dicts: it would otherwise rescan the whole heap many times, 0.4 of the 0.55 s
    ego-Facebook's 88,234 edges took to build); it is restored afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _simple_from_pairs(src: np.ndarray, dst: np.ndarray, nodes=None) -> nx.Graph:
    """Undirected simple graph from endpoint arrays; self-loops and duplicates are counted."""
    with _no_gc():
        return _simple_graph(src, dst, nodes)


def _simple_graph(src: np.ndarray, dst: np.ndarray, nodes) -> nx.Graph:
    loops = src == dst
    a, b = src[~loops], dst[~loops]
    graph: nx.Graph = nx.Graph()
    if nodes is not None:
        graph.add_nodes_from(nodes)
    if a.size:
        swap = a > b if a.dtype.kind in "iu" else np.array([str(x) > str(y) for x, y in zip(a, b)])
        lo, hi = np.where(swap, b, a), np.where(swap, a, b)
        pairs = np.stack([lo, hi], axis=1)
        if pairs.dtype.kind in "iu":  # the distinct pairs in lexicographic order
            order = np.lexsort((pairs[:, 1], pairs[:, 0]))
            pairs = pairs[order]
            new = np.r_[True, (pairs[1:] != pairs[:-1]).any(axis=1)]
            uniq = pairs[new]
        else:
            uniq = np.array(sorted(set(map(tuple, pairs.tolist()))), dtype=object).reshape(-1, 2)
        graph.add_nodes_from(dict.fromkeys(np.concatenate([src, dst]).tolist()))
        graph.add_edges_from(uniq.tolist())
        duplicates = int(a.size - len(uniq))
    else:
        graph.add_nodes_from(dict.fromkeys(np.concatenate([src, dst]).tolist()))
        duplicates = 0
    graph.graph[INPUT_REPORT] = {
        "self_loops": int(loops.sum()),
        "duplicate_edges": duplicates,
        "edge_rows": int(src.size),
    }
    return graph


_DIRECTED = re.compile(r"(?<!un)directed(?! *=? *false)", re.IGNORECASE)


_LONE_CR = re.compile(r"\r(?!\n)")


def _refuse_lone_cr(text: str, path: Path) -> None:
    """A carriage return not followed by a line feed (old Mac or mixed line ends) is an
    :class:`InputError` naming the line that holds the first one: read as a space, it
    would join the lines it ends into one."""
    if "\r" not in text:
        return
    lone = _LONE_CR.search(text)
    if lone is not None:
        raise InputError(
            "the file's line ends include a carriage return (CR) alone, as in old Mac files "
            "or files with mixed line ends; convert its line ends to LF or CRLF",
            path=str(path),
            line=text.count("\n", 0, lone.start()) + 1,
        )


def _read_edgelist(path: Path, as_undirected: bool, encoding: str = "utf-8") -> nx.Graph:
    text = _read_text(path, encoding)
    _refuse_lone_cr(text, path)
    pairs = _plain_pairs(text)
    if pairs is not None:
        graph = _simple_from_pairs(pairs[:, 0], pairs[:, 1])
    else:
        graph = _checked_edgelist(text, path, as_undirected)
    if extra := _extra_columns(text):
        graph.graph[INPUT_REPORT]["ignored_edge_columns"] = extra
    return graph


def _extra_columns(text: str) -> list[str]:
    """The columns past the two node ids of an edge list (every edge line has as many as
    the first): ``["column 3", ...]``, which the reader ignores.

    >>> _extra_columns("# c\\n1 2 0.5 x\\n"), _extra_columns("1 2\\n")
    (['column 3', 'column 4'], [])
    """
    for line in io.StringIO(text):
        stripped = line.strip()
        if stripped and stripped[0] not in "#%":
            return [f"column {n}" for n in range(3, len(stripped.split()) + 1)]
    return []


# digits, minus signs, spaces, tabs and line ends only: numpy would also read "1.5" as an
# integer, which the line-by-line reader refuses, and "+7" as 7
_PLAIN = re.compile(r"[0-9 \t\r\n-]*")
# an id with a leading zero ("07", "-07") or "-0", each pattern searched where its first
# character occurs (a lone CR is refused before, so an id starts the text or follows a
# space, a tab or a line feed): numpy would read it as an integer another spelling may
# share (7, 0), so such a file is read line by line
_LEADING_ZERO = {
    c: re.compile(re.escape(c) + p)
    for c, p in ((" ", "0[0-9]"), ("\t", "0[0-9]"), ("\n", "0[0-9]"), ("-", "0"))
}


def _no_leading_zero(text: str) -> bool:
    """No token of ``text`` (split at spaces, tabs and line ends) starts with a zero
    followed by a digit, or with "-0"."""
    if text[:1] == "0" and text[1:2].isdigit():
        return False
    return not any(c in text and p.search(text) for c, p in _LEADING_ZERO.items())


def _spelled_plainly(text: str) -> bool:
    """Whether every integer id of an edge list is surely written as Python writes it
    (no "+", "_", non-ASCII digit, leading zero or "-0"), told from the whole text at once,
    comments included: ``False`` may be said of a file whose ids are all plain (a comment
    holding "+"), which is then checked id by id; ``True`` never of one whose ids are not."""
    if not text.isascii() or "+" in text or "_" in text:
        return False
    # other characters str.split() splits at: an id could start after them
    if any(c in text for c in "\x0b\x0c\x1c\x1d\x1e\x1f"):
        return False
    return _no_leading_zero(text)


def _plain_pairs(text: str) -> np.ndarray | None:
    """The (m, 2) node ids of an edge list with no comment, every line blank or a pair of
    canonical integers (more columns, the same on every line: the first two), parsed by
    numpy; ``None`` for anything else, which :func:`_checked_edgelist` reads line by line
    (and names the line of any error)."""
    if not text.strip() or _PLAIN.fullmatch(text) is None:
        return None
    if not _no_leading_zero(text):
        return None
    try:
        with warnings.catch_warnings():
            # an id beyond 64 bits is parsed through a float, with a warning: refused here
            warnings.simplefilter("error")
            table = np.loadtxt(io.StringIO(text), dtype=np.int64, comments=None, ndmin=2)
    except (ValueError, OverflowError, Warning):
        return None
    if table.shape[1] < 2:
        return None
    return table[:, :2]


class _Spellings:
    """The first spelling, and its line, of each integer a file of text node ids names:
    a second spelling of one integer ("007" after "7", "+7", "1_000" after "1000") is an
    :class:`InputError` naming both and their lines, as the file does not say whether they
    are one node or two."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.first: dict[int, tuple[str, int]] = {}

    def check(self, spelling: str, lineno: int) -> None:
        try:
            value = int(spelling)
        except ValueError:  # a text id that names no integer
            return
        first, first_line = self.first.setdefault(value, (spelling, lineno))
        if first != spelling:
            raise InputError(
                f"the node ids {first!r} (line {first_line}) and {spelling!r} (line {lineno}) "
                f"are two spellings of the integer {value}: as written they are two nodes, as "
                "numbers one, and the file does not say which; write each node's id one way",
                line=lineno,
                path=str(self.path),
                node=spelling,
            )


def _checked_edgelist(text: str, path: Path, as_undirected: bool) -> nx.Graph:
    src: list[int] = []
    dst: list[int] = []
    width, first = 0, 0  # the number of fields of the first edge line, and its number
    plain = _spelled_plainly(text)  # surely no id to check one by one
    canonical = True  # every id written as Python writes its integer ("7", "-3")
    for lineno, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#%":
            if stripped and not src and not as_undirected and _DIRECTED.search(stripped):
                raise InputError(
                    "the file declares a directed graph; k-degree anonymity is defined "
                    "for undirected graphs (pass as_undirected=True / --as-undirected to "
                    "drop directions)",
                    line=lineno,
                    path=str(path),
                    value=stripped[:80],
                )
            continue
        parts = stripped.split()
        hint = "" if src else f" ({_HINT})"
        if len(parts) < 2:
            raise InputError(
                f"expected two node ids on the line{hint}",
                line=lineno,
                path=str(path),
                value=stripped[:80],
            )
        if not width:
            width, first = len(parts), lineno
        elif len(parts) != width:
            raise InputError(
                f"the line has {len(parts)} fields where the first edge line (line {first}) "
                f"has {width}; every line of an edge list has the same columns, the first two "
                "being the edge's nodes",
                line=lineno,
                path=str(path),
                value=stripped[:80],
            )
        try:
            u, v = int(parts[0]), int(parts[1])
        except ValueError:
            raise InputError(
                f"node ids of an edge list must be integers{hint}",
                line=lineno,
                path=str(path),
                value=stripped[:80],
            ) from None
        if not (-(2**63) <= u < 2**63 and -(2**63) <= v < 2**63):
            raise InputError(
                "node id out of the 64-bit integer range",
                line=lineno,
                path=str(path),
                value=stripped[:80],
            )
        if not plain and canonical and (str(u) != parts[0] or str(v) != parts[1]):
            canonical = False
        src.append(u)
        dst.append(v)
    if not src:
        raise InputError(
            f"the edge list holds no edges (empty, or only comments; {_HINT})", path=str(path)
        )
    if not canonical:
        return _text_edgelist(text, path)
    return _simple_from_pairs(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64))


def _text_edgelist(text: str, path: Path) -> nx.Graph:
    """An edge list that :func:`_checked_edgelist` found valid but with an integer id not
    written as Python writes it ("007", "+7", "1_000", "-0"), read again with every id kept
    as its text: none is merged with another spelling by a guess, and two spellings of one
    integer are an :class:`InputError` naming both (:class:`_Spellings`)."""
    spellings = _Spellings(path)
    src: list[str] = []
    dst: list[str] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        parts = line.split()
        if not parts or parts[0][0] in "#%":
            continue
        spellings.check(parts[0], lineno)
        spellings.check(parts[1], lineno)
        src.append(parts[0])
        dst.append(parts[1])
    return _simple_from_pairs(np.asarray(src, dtype=object), np.asarray(dst, dtype=object))


# an integer as Python writes it: no sign "+", no leading zero, no "_", no "-0"
_CANONICAL = re.compile(r"0|-?[1-9][0-9]*")


def _csv_id(field: str, lineno: int, path: Path, row: list[str]) -> int | str:
    """The node id a CSV field names: an integer when it is one written as Python writes
    it within 64 bits (spaces or tabs around it allowed: " 2" is node 2), else the text as
    written; a text id with leading or trailing spaces is an :class:`InputError` naming the
    line, as "bob " and "bob" would otherwise be one node or two by a guess."""
    core = field.strip(" \t")
    if _CANONICAL.fullmatch(core) and -(2**63) <= (value := int(core)) < 2**63:
        return value
    if field != field.strip():
        raise InputError(
            f"the node id {field!r} has leading or trailing spaces; text ids are matched "
            "exactly, so remove the spaces (a space after each comma?)",
            line=lineno,
            path=str(path),
            value=",".join(row)[:80],
        )
    return field


def _csv_rows(
    reader: Any, path: Path
) -> tuple[list[int | str], list[int | str], list[int], list[str]]:
    """The source and target ids of every edge row of a CSV edge list (the header read),
    the line of each row, and the header's other columns (ignored)."""
    header = next(reader, None)
    if header is None:
        raise InputError(f"the CSV file is empty ({_HINT})", path=str(path))
    names = [h.strip().lower() for h in header]
    if "source" not in names or "target" not in names:
        raise InputError(
            "a CSV edge list needs a header naming 'source' and 'target' "
            f"columns; found {header[:10]} ({_HINT})",
            path=str(path),
            line=1,
        )
    i, j = names.index("source"), names.index("target")
    src: list[int | str] = []
    dst: list[int | str] = []
    lines: list[int] = []
    stripped = [h.strip() for h in header]
    for lineno, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if row[0].strip() == stripped[0] and [c.strip() for c in row] == stripped:
            raise InputError(
                f"the header line is repeated at line {lineno} (files concatenated?)",
                line=lineno,
                path=str(path),
            )
        if len(row) > len(header):
            raise InputError(
                f"the row has {len(row)} fields, the header {len(header)}",
                line=lineno,
                path=str(path),
                value=",".join(row)[:80],
            )
        if len(row) <= max(i, j) or not row[i].strip() or not row[j].strip():
            raise InputError(
                "missing source or target",
                line=lineno,
                path=str(path),
                value=",".join(row)[:80],
            )
        src.append(_csv_id(row[i], lineno, path, row))
        dst.append(_csv_id(row[j], lineno, path, row))
        lines.append(lineno)
    extra = [h.strip() or f"column {n + 1}" for n, h in enumerate(header) if n not in (i, j)]
    return src, dst, lines, extra


def _read_csv(path: Path, encoding: str = "utf-8") -> nx.Graph:
    """A CSV edge list: integer ids when every id is an integer written as Python writes
    it, else every id as its text (an integer written plainly as its digits), with two
    spellings of one integer ("007" and "7") refused (:class:`_Spellings`)."""
    with io.StringIO(_read_text(path, encoding), newline="") as fh:
        src, dst, lines, extra = _csv_rows(csv.reader(fh), path)
    if not src:
        raise InputError(f"the CSV edge list holds no edges (header only; {_HINT})", path=str(path))
    if all(type(x) is int for x in src) and all(type(x) is int for x in dst):
        graph = _simple_from_pairs(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64))
    else:
        src_text, dst_text = [str(x) for x in src], [str(x) for x in dst]
        spellings = _Spellings(path)
        for u, v, lineno in zip(src_text, dst_text, lines):
            spellings.check(u, lineno)
            spellings.check(v, lineno)
        graph = _simple_from_pairs(
            np.asarray(src_text, dtype=object), np.asarray(dst_text, dtype=object)
        )
    if extra:
        graph.graph[INPUT_REPORT]["ignored_edge_columns"] = extra
    return graph


class _PositionDecoder(json.JSONDecoder):
    """A JSON decoder that records where each object it builds starts (``starts``, keyed by
    the object's ``id``), through the json module's Python scanner: slow, so it is used on
    the error path only."""

    def __init__(self) -> None:
        super().__init__()
        self.starts: dict[int, int] = {}
        self.parse_object = self._parse_object
        self.scan_once = json.scanner.py_make_scanner(self)  # type: ignore[attr-defined]

    def _parse_object(self, s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        obj, end = json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
        self.starts[id(obj)] = s_and_end[1] - 1  # the "{"
        return obj, end


class _JsonLines:
    """The line of each entry of a JSON document's lists, found when an error asks for
    one: the text is then parsed again by :class:`_PositionDecoder`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.decoder: _PositionDecoder | None = None
        self.data: Any = None

    def line(self, key: str, index: int) -> int | None:
        """The line where ``data[key][index]`` starts, if it is an object."""
        if self.decoder is None:
            self.decoder = _PositionDecoder()
            self.data = self.decoder.decode(self.text)
        try:
            item = self.data[key][index]
        except (KeyError, IndexError, TypeError):
            return None
        start = self.decoder.starts.get(id(item))
        return None if start is None else self.text.count("\n", 0, start) + 1


def _json_kind(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(
        type(value), type(value).__name__
    )


def _check_node_ids(
    nodes: list[Any], path: Path, lines: _JsonLines
) -> tuple[dict[Any, int], dict[str, int]]:
    """The index of each node a node-link ``nodes`` list declares, keyed by its id and by
    its text.  A node that is no object with an ``id``, an id that is no string or number,
    an id declared twice, or one id written two ways (``7`` and ``"7"``, which every text
    output writes alike; ``7`` and ``7.0``, which networkx merges) is an
    :class:`InputError` naming the entries and their lines."""
    by_value: dict[Any, int] = {}
    by_text: dict[str, int] = {}
    for index, node in enumerate(nodes):
        if not isinstance(node, dict) or "id" not in node:
            raise InputError(
                f'nodes[{index}] is not an object with an "id"',
                path=str(path),
                line=lines.line("nodes", index),
            )
        node_id = node["id"]
        if not isinstance(node_id, str | int | float):
            raise InputError(
                f"nodes[{index}] has the id {node_id!r}; a node id is a string or a number",
                path=str(path),
                line=lines.line("nodes", index),
            )
        before = by_value.get(node_id, by_text.get(str(node_id)))
        if before is not None:
            other = nodes[before]["id"]
            where = f"nodes[{before}], line {lines.line('nodes', before)}, and nodes[{index}]"
            if type(other) is type(node_id) and other == node_id:
                message = f"a node is declared twice ({where}); each node must be declared once"
            else:
                message = (
                    f"one id is written two ways, {other!r} ({_json_kind(other)}) and "
                    f"{node_id!r} ({_json_kind(node_id)}) ({where}): read as one node or two "
                    "by a guess; write each node's id one way"
                )
            raise InputError(message, path=str(path), line=lines.line("nodes", index), node=node_id)
        by_value[node_id] = by_text[str(node_id)] = index
    return by_value, by_text


def _check_node_link(data: Any, key: str, path: Path, text: str) -> None:
    """Refuse a node-link document that declares a node twice or writes one id two ways
    (:func:`_check_node_ids`), or whose ``key`` list (``edges`` or ``links``) names a node
    the ``nodes`` list does not declare, or declares with another type (``"7"`` or ``7.0``
    for ``7``): networkx would merge the first, create the second and match the third by a
    guess, silently.  Errors name the entry and its line; documents of another shape are
    left to networkx's reader, whose errors name them."""
    nodes, links = data.get("nodes"), data.get(key)
    if not isinstance(nodes, list) or not isinstance(links, list):
        return
    lines = _JsonLines(text)
    declared, by_text = _check_node_ids(nodes, path, lines)
    for index, link in enumerate(links):
        if not isinstance(link, dict):
            return
        for end in ("source", "target"):
            if end not in link:
                raise InputError(
                    f"{key}[{index}] has no {end!r}; every edge names two nodes",
                    path=str(path),
                    line=lines.line(key, index),
                )
            named = link[end]
            try:
                at = declared.get(named)
            except TypeError:  # an unhashable id (a list, an object)
                at = None
            if at is not None and type(nodes[at]["id"]) is type(named):
                continue
            if at is None:
                at = by_text.get(str(named))
            said = "" if at is None else f", where nodes[{at}] declares {nodes[at]['id']!r}"
            raise InputError(
                f"{key}[{index}] ({link.get('source')!r} - {link.get('target')!r}) names "
                f"a node the nodes list does not declare{said}; declare every node an edge "
                "joins, and write each id as its node declares it",
                path=str(path),
                line=lines.line(key, index),
                node=named,
            )


def _read_node_link(path: Path, encoding: str = "utf-8") -> nx.Graph:
    text = _read_text(path, encoding)
    with io.StringIO(text, newline="") as fh:
        data = json.load(fh)
    if isinstance(data, dict) and "edges" in data and "links" in data:
        raise InputError(
            'the node-link file has both "edges" and "links": one list of edges is read, '
            "so the other would be lost; merge them into one",
            path=str(path),
        )
    key = "edges" if "edges" in data else "links"
    _check_node_link(data, key, path, text)
    return nx.node_link_graph(data, edges=key)


class _XmlFault(Exception):
    """What is wrong with an element of a GraphML or GEXF file: the message, the element
    and the node it names; :func:`_read_xml` turns it into an :class:`InputError` naming
    the element's line (and ``first``'s, the element it repeats)."""

    def __init__(
        self, message: str, element: ET.Element, node: Any = None, first: Any = None
    ) -> None:
        super().__init__(message)
        self.message, self.element, self.node, self.first = message, element, node, first


# what networkx's readers raise on a bad value, a missing key or a bad structure
_READER_ERRORS = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    RuntimeError,
    nx.NetworkXError,
)


@contextlib.contextmanager
def _at(element: ET.Element) -> Any:
    """Name ``element`` in any error networkx's reader raises while it reads it."""
    try:
        yield
    except _XmlFault:
        raise
    except _READER_ERRORS as exc:
        raise _XmlFault(
            f"cannot read the <{_local(element.tag)}>: {str(exc)[:200]}", element
        ) from None


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


class _Declared:
    """The ``<node>`` elements a GraphML or GEXF reader has read, by id, and the edges that
    named a node not yet declared: networkx merges a node declared twice and creates one an
    edge names, silently; here the first is a fault at once, the second once every node of
    the file is read (a yEd group's inner graph may name an outer node declared later)."""

    def __init__(self) -> None:
        self.nodes: dict[str, ET.Element] = {}
        self.pending: list[ET.Element] = []

    def node(self, node_xml: ET.Element) -> None:
        node_id = node_xml.get("id")
        if node_id is None:
            raise _XmlFault("a <node> has no id; every node needs one", node_xml)
        first = self.nodes.setdefault(node_id, node_xml)
        if first is not node_xml:
            raise _XmlFault(
                "a <node> is declared twice in the file (first on line {first_line}); each "
                "node must be declared once",
                node_xml,
                node=node_id,
                first=first,
            )

    def edge(self, edge_xml: ET.Element) -> None:
        for end in ("source", "target"):
            node_id = edge_xml.get(end)
            if node_id is None:
                raise _XmlFault(f"an <edge> has no {end}; every edge names two nodes", edge_xml)
            if node_id not in self.nodes:
                self.pending.append(edge_xml)

    def check_edges(self) -> None:
        for edge_xml in self.pending:
            for end in ("source", "target"):
                if edge_xml.get(end) not in self.nodes:
                    raise _XmlFault(
                        f"the edge {edge_xml.get('source')!r} - {edge_xml.get('target')!r} "
                        "names a node no <node> declares; declare every node an edge joins",
                        edge_xml,
                        node=edge_xml.get(end),
                    )


class _GraphMLReader(GraphMLReader):
    """networkx's GraphML reader (as :func:`networkx.read_graphml` calls it) over a tree
    parsed once, with every node and edge checked (:class:`_Declared`) and any error of
    its own tied to the element it read."""

    NS_GRAPHML: str  # networkx's namespace, or none for a file without one

    def __init__(self) -> None:
        super().__init__(node_type=str)
        self.declared = _Declared()

    def read(self, root: ET.Element) -> nx.Graph:
        graphs = root.findall(f"{{{self.NS_GRAPHML}}}graph")
        if not graphs and root.tag == "graphml":  # no namespace, which networkx also takes
            self.NS_GRAPHML = ""
            graphs = root.findall("{}graph")
        if not graphs:
            raise _XmlFault(f"no <graph> element in the GraphML file ({_HINT})", root)
        if len(graphs) > 1:
            raise _XmlFault(
                f"the file holds {len(graphs)} graphs, and one is read: the others would be "
                "lost; write each graph to its own file",
                graphs[1],
            )
        keys, defaults = self._keys(root)
        with _at(graphs[0]):
            graph = self.make_graph(graphs[0], keys, defaults)
        self.declared.check_edges()
        return graph

    def _keys(self, root: ET.Element) -> tuple[dict, dict]:
        try:
            return self.find_graphml_keys(root)
        except _READER_ERRORS:
            for key in root.findall(f"{{{self.NS_GRAPHML}}}key"):
                alone = ET.Element("graphml")
                alone.append(key)
                with _at(key):
                    self.find_graphml_keys(alone)
            raise

    def add_node(self, G: Any, node_xml: Any, graphml_keys: Any, defaults: Any) -> None:
        self.declared.node(node_xml)
        with _at(node_xml):
            super().add_node(G, node_xml, graphml_keys, defaults)

    def add_edge(self, G: Any, edge_element: Any, graphml_keys: Any) -> None:
        self.declared.edge(edge_element)
        with _at(edge_element):
            super().add_edge(G, edge_element, graphml_keys)


class _GEXFReader(GEXFReader):
    """networkx's GEXF reader (as :func:`networkx.read_gexf` calls it) over a tree parsed
    once, checked as :class:`_GraphMLReader` is."""

    def __init__(self) -> None:
        super().__init__(node_type=None, version="1.2draft")
        self.declared = _Declared()

    def read(self, root: ET.Element) -> nx.Graph:
        graph_xml = root.find(f"{{{self.NS_GEXF}}}graph")
        for version in self.versions:
            if graph_xml is not None:
                break
            self.set_version(version)
            graph_xml = root.find(f"{{{self.NS_GEXF}}}graph")
        if graph_xml is None:
            raise _XmlFault(f"no <graph> element in the GEXF file ({_HINT})", root)
        with _at(graph_xml):
            graph = self.make_graph(graph_xml)
        self.declared.check_edges()
        return graph

    def add_node(self, G: Any, node_xml: Any, node_attr: Any, node_pid: Any = None) -> None:
        self.declared.node(node_xml)
        with _at(node_xml):
            super().add_node(G, node_xml, node_attr, node_pid)

    def add_edge(self, G: Any, edge_element: Any, edge_attr: Any) -> None:
        self.declared.edge(edge_element)
        with _at(edge_element):
            super().add_edge(G, edge_element, edge_attr)


@nx.utils.open_file(0, mode="rb")
def _xml_root(source: Any) -> ET.Element:
    return ET.parse(source).getroot()


class _Found(Exception):
    pass


@nx.utils.open_file(0, mode="rb")
def _start_tag_line(source: Any, index: int) -> int | None:
    """The line of the ``index``-th start tag (0-based, in document order) of an XML file,
    read again with expat: ElementTree keeps no line numbers, so errors look them up."""
    parser = xml.parsers.expat.ParserCreate()
    seen = [-1]
    found: list[int] = []

    def start(*_: Any) -> None:
        seen[0] += 1
        if seen[0] == index:
            found.append(parser.CurrentLineNumber)
            raise _Found

    parser.StartElementHandler = start
    # ElementTree read the file with expat: it cannot fail before the element it holds
    with contextlib.suppress(_Found, xml.parsers.expat.ExpatError):
        parser.ParseFile(source)
    return found[0] if found else None


def _element_line(path: Path, root: ET.Element, element: Any) -> int | None:
    """The line of ``element`` of the tree ``root`` parsed from ``path``."""
    index = next((i for i, e in enumerate(root.iter()) if e is element), None)
    return None if index is None else _start_tag_line(path, index)


def _read_xml(path: Path, fmt: str) -> nx.Graph:
    """A GraphML or GEXF file, parsed once and read by networkx's reader; an error names
    the line of the element it is about."""
    try:
        root = _xml_root(path)
    except ET.ParseError as exc:
        raise InputError(
            f"cannot read {fmt}: {str(exc)[:200]} ({_HINT})", path=str(path), line=exc.position[0]
        ) from None
    reader = _GraphMLReader() if fmt == "graphml" else _GEXFReader()
    try:
        return reader.read(root)
    except _XmlFault as fault:
        line = _element_line(path, root, fault.element)
        message = fault.message
        if fault.first is not None:  # a message of ours, naming the first element's line
            message = message.format(first_line=_element_line(path, root, fault.first))
        raise InputError(message, path=str(path), line=line, node=fault.node) from None


def _read_structured(path: Path, fmt: str, encoding: str = "utf-8") -> nx.Graph:
    try:
        if fmt in ("graphml", "gexf"):
            return _read_xml(path, fmt)
        return _read_node_link(path, encoding)
    except InputError:
        raise
    except (
        json.JSONDecodeError,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        IndexError,
        UnicodeError,
        nx.NetworkXError,
    ) as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        raise InputError(
            f"cannot read {fmt}: {str(exc)[:200]} ({_HINT})", path=str(path), line=line
        ) from None
    except (OSError, EOFError, zlib.error) as exc:  # EOFError, zlib.error: a cut gzip file
        msg = getattr(exc, "strerror", None) or exc
        raise InputError(f"cannot read the file: {msg}", path=str(path)) from None


def read_graph(
    path: str | Path,
    format: str | None = None,  # noqa: A002
    as_undirected: bool = False,
    encoding: str = "utf-8",
) -> nx.Graph:
    """Read a graph export as an undirected simple :class:`networkx.Graph`.

    Parameters
    ----------
    path : path
        The file (``.gz`` is read transparently for edge lists, CSV and JSON).
    format : {"edgelist", "csv", "graphml", "gexf", "json"}, optional
        Default: from the extension (``.txt``/``.edges``/``.tsv``: whitespace edge list with
        ``#`` or ``%`` comments and integer ids (see Notes), the same number of columns on
        every line, the first two the edge; ``.csv``: header with ``source,target``;
        ``.graphml``; ``.gexf``; ``.json``: node-link).
    as_undirected : bool
        Accept a directed graph by dropping edge directions: a directed GraphML / GEXF /
        JSON graph, or an edge list whose header comment declares it directed (as SNAP's
        ``# Directed graph`` does).
    encoding : str
        Text encoding of an edge list, CSV or JSON file (default UTF-8; e.g.
        ``"latin-1"``).  GraphML and GEXF files declare their own encoding in their XML
        declaration, which their parser follows.

    Returns
    -------
    networkx.Graph
        Self-loops and duplicate edges are removed and counted in
        ``G.graph["input_report"]`` (``self_loops``, ``duplicate_edges``).  The columns
        of an edge list or CSV file past the edge's two nodes are not read; they are named
        in ``G.graph["input_report"]["ignored_edge_columns"]`` (``"column 3"``, or the
        CSV header's name), and :func:`graphs.k_degree_anonymize` warns of them.
        GraphML, GEXF and JSON edge attributes are kept on the graph.

    Raises
    ------
    InputError
        Unknown format or encoding, text that does not decode (its line and byte),
        malformed or non-integer line (with its number), an edge-list line
        with more or fewer fields than the first edge line (with its number), line ends
        that are a carriage return alone (the line of the first), a CSV text id with
        leading or trailing spaces (its line), one integer id written two ways in an edge
        list or CSV file (``007`` and ``7``: both, with their lines), a node declared twice,
        without an id, or named by an edge and undeclared (GraphML, GEXF, JSON: its line
        and the node), one JSON id written two ways (``7`` and ``"7"``), malformed XML (its
        line), no edges, directed input without ``as_undirected``.

    Notes
    -----
    Node ids are never merged by a guess.  Edge-list and CSV ids are integers when every
    one is written as Python writes its integer (``7``, ``-3``: no ``+``, leading zero or
    ``_``), else each id is its text as written.  GraphML and GEXF ids are text; JSON ids
    are the strings and numbers the file holds.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.txt")
    >>> _ = open(p, "w").write("# comment\\n1 2\\n2 1\\n2 3\\n3 3\\n")
    >>> G = read_graph(p)
    >>> G.number_of_edges(), G.graph["input_report"]["self_loops"]
    (2, 1)
    """
    path = check_path(path, "path")
    fmt = guess_format(path, format)
    encoding = check_encoding(encoding)
    check_input_path(path, "input graph")
    if fmt == "edgelist":
        return _read_edgelist(path, as_undirected, encoding)
    if fmt == "csv":
        return _read_csv(path, encoding)
    graph = _read_structured(path, fmt, encoding)
    if graph.is_directed() and not as_undirected:
        raise InputError(
            "the graph is directed; k-degree anonymity is defined for undirected "
            "graphs (pass as_undirected=True / --as-undirected to drop directions)",
            path=str(path),
        )
    multi = graph.is_multigraph()
    n_rows = graph.number_of_edges()
    simple: nx.Graph = nx.Graph()
    simple.add_nodes_from(graph.nodes(data=True))
    simple.add_edges_from(graph.edges(data=True))
    loops = nx.number_of_selfloops(simple)
    self_loop_rows = sum(1 for u, v in graph.edges() if u == v)
    simple.remove_edges_from(list(nx.selfloop_edges(simple)))
    duplicates = n_rows - self_loop_rows - simple.number_of_edges()
    simple.graph[INPUT_REPORT] = {
        "self_loops": int(self_loop_rows if multi else loops),
        "duplicate_edges": int(duplicates),
        "edge_rows": int(n_rows),
    }
    return simple


def check_writable(graph: nx.Graph, fmt: str, path: str | Path) -> None:
    """Refuse a graph with isolated nodes for an edge-list or CSV file ``path`` (``fmt``),
    which would lose them (an :class:`InputError` saying how many).

    Examples
    --------
    >>> g = nx.path_graph(3)
    >>> check_writable(g, "csv", "g.csv")
    >>> g.add_node(9)
    >>> check_writable(g, "graphml", "g.graphml")
    >>> check_writable(g, "csv", "g.csv")
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: the graph has 1 isolated node(s) (no edges), ...
    """
    if fmt not in ("edgelist", "csv"):
        return
    isolated = sum(1 for _, d in graph.degree() if d == 0)
    if isolated:
        raise InputError(
            f"the graph has {isolated:,} isolated node(s) (no edges), which "
            f"{'an edge-list' if fmt == 'edgelist' else 'a CSV'} file cannot hold: they would "
            "be lost; write .graphml, .gexf or .json instead",
            path=str(path),
        )


# the fix a refused node id gets
_RELABEL = (
    "relabel the nodes (relabel=True in k_degree_anonymize, its default; --relabel on the "
    "command line)"
)
# characters XML 1.0 cannot hold (NUL, C0 controls but tab, LF and CR, lone surrogates,
# U+FFFE and U+FFFF): a GraphML or GEXF file holding one does not parse
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# node ids a text format writes as their str(): strings and numbers (numpy's too)
_SCALAR_IDS = (str, int, float, np.integer, np.floating)
# attribute values GraphML and GEXF hold: one typed scalar each
_XML_VALUES = (str, int, float, np.integer, np.floating)
# the keys networkx's node-link writer sets on each node or edge entry, overwriting an
# attribute of the same name
_JSON_KEYS = {"node": ("id",), "edge": ("source", "target")}
_FORMAT_NAMES = {
    "edgelist": "an edge list",
    "csv": "a CSV edge list",
    "graphml": "GraphML",
    "gexf": "GEXF",
    "json": "node-link JSON",
}


def _text_id_fault(node: Any, text: str, fmt: str) -> str | None:
    """What keeps an edge list or CSV file (``fmt``) from holding the id ``node``
    (written ``text``) so that it reads back as itself, or ``None``."""
    name = _FORMAT_NAMES[fmt]
    if text == "":
        return f"a node id is the empty string, which {name} cannot hold; {_RELABEL}"
    if fmt == "edgelist":
        if any(c.isspace() for c in text):
            return (
                f"the node id {node!r} holds whitespace, which separates the ids of an edge "
                f"list; {_RELABEL}, or write .json"
            )
        try:
            value = int(text)
        except ValueError:
            return (
                f"the node id {node!r} is not an integer, and an edge list holds integer "
                f"ids only; {_RELABEL}, or write .csv or .json"
            )
        if not -(2**63) <= value < 2**63:
            return (
                f"the node id {node!r} is beyond the 64-bit integer range of an edge list; "
                f"{_RELABEL}, or write .csv or .json"
            )
        return None
    if text != text.strip():
        return (
            f"the node id {node!r} has leading or trailing whitespace, which a CSV edge list "
            f"does not keep; {_RELABEL}, or write .json"
        )
    bad = next((c for c in ',"\n\r\x00' if c in text), None)
    if bad is not None:
        return (
            f"the node id {node!r} holds {bad!r}, which a CSV edge list cannot hold (it "
            f"writes ids unquoted); {_RELABEL}, or write .json"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"the node id {node!r} holds a lone surrogate, which UTF-8 cannot encode; {_RELABEL}"
    return None


def _id_fault(node: Any, fmt: str) -> str | None:
    """What keeps ``fmt`` from holding the node id ``node`` so that it reads back as
    itself (as its text, in a text format), with the fix; ``None`` if nothing does."""
    if fmt in ("graphml", "gexf"):  # any id, written as its str()
        if _NOT_XML.search(str(node)):
            return (
                f"the node id {node!r} holds a character XML cannot hold (a control "
                f"character or a lone surrogate); {_RELABEL}, or write .json"
            )
        return None
    if not isinstance(node, _SCALAR_IDS):
        return (
            f"the node id {node!r} is a {type(node).__name__}, and {_FORMAT_NAMES[fmt]} "
            f"holds string and number ids only (it would be written as {str(node)!r}, which "
            f"does not read back as this node); {_RELABEL}"
        )
    return None if fmt == "json" else _text_id_fault(node, str(node), fmt)


def _check_ids(graph: nx.Graph, fmt: str, path: Path) -> None:
    """Refuse, naming the node(s), a graph whose node ids ``fmt`` cannot hold
    (:func:`_id_fault`) or cannot tell apart: two nodes written alike (``1`` and ``"1"``,
    which every format writes as one text), or, in an edge list or CSV, two spellings of
    one integer (``"007"`` and ``7``), which :func:`read_graph` refuses."""
    by_text: dict[str, Any] = {}
    by_value: dict[int, Any] = {}
    for node in graph:
        fault = _id_fault(node, fmt)
        if fault is not None:
            raise InputError(fault, path=str(path), node=node)
        text = str(node)
        first = by_text.setdefault(text, node)
        if first is not node:
            raise InputError(
                f"the nodes {first!r} ({type(first).__name__}) and {node!r} "
                f"({type(node).__name__}) are both written {text!r}: {_FORMAT_NAMES[fmt]} "
                f"cannot tell them apart, and they would read back as one node or not at "
                f"all; {_RELABEL}",
                path=str(path),
                node=node,
            )
        if fmt not in ("edgelist", "csv"):
            continue
        try:
            value = int(text)
        except ValueError:
            continue
        first = by_value.setdefault(value, node)
        if first is not node:
            raise InputError(
                f"the nodes {first!r} and {node!r} are two spellings of the integer {value}, "
                f"which {_FORMAT_NAMES[fmt]} cannot tell apart (read_graph refuses such a "
                f"file); {_RELABEL}, or write .json",
                path=str(path),
                node=node,
            )


def _value_fault(value: Any, fmt: str) -> str | None:
    """Why ``fmt`` cannot hold the attribute value ``value``, or ``None``."""
    if fmt in ("graphml", "gexf"):
        if isinstance(value, _XML_VALUES):
            if isinstance(value, str) and _NOT_XML.search(value):
                return "a string holding a character XML cannot hold (a control character)"
            return None
        kind = "None" if value is None else f"a {type(value).__name__}"
        if isinstance(value, list | tuple | dict) or value is None:
            return f"{kind}, which GraphML and GEXF cannot hold (JSON keeps it)"
        return f"{kind}, which GraphML and GEXF cannot hold (a string or a number can be written)"
    if value is None or isinstance(value, str | int | float | bool):
        return None
    try:
        json.dumps(value, default=_json_default)
    except (TypeError, ValueError) as exc:
        return (
            f"a {type(value).__name__}, which JSON cannot hold ({exc}); a list, a dict, a "
            "string or a number can be written"
        )
    return None


def _check_attributes(graph: nx.Graph, fmt: str, path: Path) -> None:
    """Refuse, naming the attribute and the node or edge, an attribute value a GraphML,
    GEXF or JSON file (``fmt``) cannot hold, and for JSON an attribute the node-link
    writer would overwrite (a node's ``id``, an edge's ``source`` or ``target``)."""
    if fmt in ("edgelist", "csv"):  # they write no attributes
        return
    nodes: Any = ((("node", n), d) for n, d in graph.nodes(data=True))
    edges: Any = ((("edge", (u, v)), d) for u, v, d in graph.edges(data=True))
    for (what, where), data in itertools.chain(nodes, edges):
        for name, value in data.items():
            if fmt == "json" and name in _JSON_KEYS[what]:
                raise InputError(
                    f"the {what} attribute {name!r} of {what} {where!r} would be overwritten "
                    f"by the {what}'s own {name!r} in node-link JSON; rename the attribute, "
                    "or write .graphml or .gexf",
                    path=str(path),
                    node=where if what == "node" else None,
                )
            if fmt in ("graphml", "gexf") and _NOT_XML.search(str(name)):
                raise InputError(
                    f"the {what} attribute name {name!r} of {what} {where!r} holds a "
                    "character XML cannot hold; rename the attribute, or write .json",
                    path=str(path),
                    node=where if what == "node" else None,
                )
            fault = _value_fault(value, fmt)
            if fault is not None:
                raise InputError(
                    f"the {what} attribute {name!r} of {what} {where!r} is {fault}; convert "
                    "it, or leave the attribute out (keep_attributes / --keep-attr)",
                    path=str(path),
                    node=where if what == "node" else None,
                )


def _json_default(value: Any) -> Any:
    """A numpy scalar (an id or attribute value) as its Python value, for json.dump."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _write_gexf(graph: nx.Graph, fh: Any) -> None:
    """:func:`networkx.write_gexf` without its ``<meta lastmodifieddate>`` (today's date):
    the same input, seed and key give the same bytes on any day, and the file does not date
    the run."""
    writer = GEXFWriter(encoding="utf-8", prettyprint=True, version="1.2draft")
    meta = writer.xml.find("meta")
    if meta is not None:
        meta.attrib.pop("lastmodifieddate", None)
    writer.add_graph(graph)
    writer.write(fh)


def write_graph(graph: nx.Graph, path: str | Path, format: str | None = None) -> None:  # noqa: A002
    """Write a graph atomically in the format named by ``format`` or the extension.

    A ``format`` contradicting the extension of another format (``format="edgelist"`` for
    ``out.graphml``) is an :class:`InputError`; with an extension of no known format,
    ``format`` decides.

    Edge lists and CSV carry the edges only, so a graph with isolated nodes is refused
    there (an :class:`InputError` saying how many nodes would be lost) rather than written
    without them: use GraphML, GEXF or JSON, which keep them and node attributes.  Edges
    are written in the graph's edge order.

    Whatever is written reads back through :func:`read_graph` with the same nodes and
    edges (ids as text in GraphML and GEXF, and in edge lists and CSV unless all are
    integers).  So an :class:`InputError` naming the node, raised before anything is
    written, refuses a graph whose ids the format cannot hold or tell apart:

    - in every format, two nodes written as one text (``1`` and ``"1"``, as
      ``k_degree_anonymize(..., relabel=False)`` may release them; both are named);
    - in an edge list and CSV, an id that is not a string or a number (a tuple, a
      frozenset), an empty one, and two spellings of one integer (``"007"`` and ``7``);
    - in an edge list, an id that is not an integer within 64 bits or holds whitespace;
    - in CSV, an id holding a comma, a quote, a line end or NUL, or with leading or
      trailing whitespace;
    - in GraphML and GEXF, an id holding a character XML cannot hold (a control character);
    - in JSON, an id that is not a string or a number.

    The fix is to relabel the nodes (``relabel=True``, the default of
    :func:`graphs.k_degree_anonymize`), or to write JSON, which holds any string id.
    Node and edge attributes GraphML and GEXF cannot hold (a list, a dict, a set, None)
    and values JSON cannot hold (a set, bytes) are refused the same way, naming the
    attribute and the node or edge; JSON keeps lists and dicts.  A JSON node attribute
    ``id`` or edge attribute ``source`` / ``target``, which its writer would overwrite, is
    refused too.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.csv")
    >>> write_graph(nx.path_graph(3), p)
    >>> open(p).read().splitlines()
    ['source,target', '0,1', '1,2']
    >>> write_graph(nx.Graph([(1, "1")]), p)
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: the nodes 1 (int) and '1' (str) are both written '1': ...
    """
    if not isinstance(graph, nx.Graph):
        raise InputError(f"graph must be a networkx graph, got {type(graph).__name__}")
    path = check_path(path, "path")
    fmt = check_output_format(path, format)
    clean: nx.Graph = nx.Graph()
    clean.add_nodes_from(graph.nodes(data=True))
    clean.add_edges_from(graph.edges(data=True))
    _check_ids(clean, fmt, path)
    _check_attributes(clean, fmt, path)
    if fmt in ("edgelist", "csv"):
        check_writable(clean, fmt, path)
        sep = " " if fmt == "edgelist" else ","
        lines = [] if fmt == "edgelist" else ["source,target"]
        # an edge written "source,target" would read as the header repeated: its ends swap
        lines += [
            f"{v}{sep}{u}"
            if (str(u), str(v)) == ("source", "target") and sep == ","
            else f"{u}{sep}{v}"
            for u, v in clean.edges()
        ]
        with atomic_write(path, compress=is_gzip_path(path)) as fh:
            fh.write("\n".join(lines) + "\n")
        return
    with atomic_write(path, mode="wb", encoding=None, compress=is_gzip_path(path)) as raw:
        if fmt == "graphml":
            nx.write_graphml(clean, raw)
        elif fmt == "gexf":
            _write_gexf(clean, raw)
        else:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            json.dump(nx.node_link_data(clean, edges="edges"), text, default=_json_default)
            text.detach()  # flushed; ``raw`` is closed by atomic_write
