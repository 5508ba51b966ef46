"""Read and write social-network exports: edge lists, CSV, GraphML, GEXF, node-link JSON."""

from __future__ import annotations

import contextlib
import csv
import gc
import gzip
import io
import json
import re
import warnings
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from structanon._validation import check_choice, check_input_path, check_path
from structanon.errors import InputError
from structanon.io import atomic_path, atomic_write, open_text, text_lines

__all__ = ["FORMATS", "read_graph", "write_graph", "guess_format"]

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


def guess_format(path: str | Path, format: str | None = None) -> str:  # noqa: A002
    """The format named by ``format``, else by the file extension (``.gz`` ignored)."""
    if format is not None:
        return check_choice(format, "format", FORMATS)
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    ext = suffixes[-1] if suffixes else ""
    if ext not in _EXTENSIONS:
        raise InputError(
            f"cannot tell the graph format from the extension {ext!r}; give one of {FORMATS}",
            path=str(path),
        )
    return _EXTENSIONS[ext]


_HINT = "wrong --format, or not a graph file?"


def _read_text(path: Path) -> str:
    """The whole file as UTF-8 text, through the core's opener (gzip told by its magic
    bytes); a binary, UTF-16 or otherwise encoded file is an :class:`InputError` naming the
    file and the line of the first bad byte."""
    try:
        with open_text(path, name="input graph") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        for _ in text_lines(path, name="input graph"):  # raises, naming the line
            pass
        raise  # pragma: no cover - text_lines found the same bad byte
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


def _read_edgelist(path: Path, as_undirected: bool) -> nx.Graph:
    text = _read_text(path)
    pairs = _plain_pairs(text)
    if pairs is not None:
        return _simple_from_pairs(pairs[:, 0], pairs[:, 1])
    return _checked_edgelist(text, path, as_undirected)


# digits, signs, spaces, tabs and line ends only: numpy would also read "1.5" as an
# integer, which the line-by-line reader refuses
_PLAIN = re.compile(r"[0-9 \t\r\n+-]*")


def _plain_pairs(text: str) -> np.ndarray | None:
    """The (m, 2) node ids of an edge list with no comment, every line blank or a pair of
    integers (more columns on every line: the first two), parsed by numpy; ``None`` for
    anything else, which :func:`_checked_edgelist` reads line by line (and names the line
    of any error)."""
    if not text.strip() or _PLAIN.fullmatch(text) is None:
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


def _checked_edgelist(text: str, path: Path, as_undirected: bool) -> nx.Graph:
    src: list[int] = []
    dst: list[int] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        text = line.strip()
        if not text or text[0] in "#%":
            if text and not src and not as_undirected and _DIRECTED.search(text):
                raise InputError(
                    "the file declares a directed graph; k-degree anonymity is defined "
                    "for undirected graphs (pass as_undirected=True / --as-undirected to "
                    "drop directions)",
                    line=lineno,
                    path=str(path),
                    value=text[:80],
                )
            continue
        parts = text.split()
        hint = "" if src else f" ({_HINT})"
        if len(parts) < 2:
            raise InputError(
                f"expected two node ids on the line{hint}",
                line=lineno,
                path=str(path),
                value=text[:80],
            )
        try:
            u, v = int(parts[0]), int(parts[1])
        except ValueError:
            raise InputError(
                f"node ids of an edge list must be integers{hint}",
                line=lineno,
                path=str(path),
                value=text[:80],
            ) from None
        if not (-(2**63) <= u < 2**63 and -(2**63) <= v < 2**63):
            raise InputError(
                "node id out of the 64-bit integer range",
                line=lineno,
                path=str(path),
                value=text[:80],
            )
        src.append(u)
        dst.append(v)
    if not src:
        raise InputError(
            f"the edge list holds no edges (empty, or only comments; {_HINT})", path=str(path)
        )
    return _simple_from_pairs(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64))


def _as_id(value: str) -> Any:
    try:
        return int(value)
    except ValueError:
        return value


def _read_csv(path: Path) -> nx.Graph:
    with io.StringIO(_read_text(path), newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise InputError(f"the CSV file is empty ({_HINT})", path=str(path))
        names = [h.strip().lower() for h in header]
        if "source" in names and "target" in names:
            i, j = names.index("source"), names.index("target")
        else:
            raise InputError(
                "a CSV edge list needs a header naming 'source' and 'target' "
                f"columns; found {header[:10]} ({_HINT})",
                path=str(path),
                line=1,
            )
        src, dst = [], []
        for lineno, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
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
            src.append(_as_id(row[i].strip()))
            dst.append(_as_id(row[j].strip()))
    if not src:
        raise InputError(f"the CSV edge list holds no edges (header only; {_HINT})", path=str(path))
    kinds = {type(x) for x in src + dst}
    dtype = np.int64 if kinds == {int} else object
    if dtype is object:
        src, dst = [str(x) for x in src], [str(x) for x in dst]
    return _simple_from_pairs(np.asarray(src, dtype=dtype), np.asarray(dst, dtype=dtype))


def _read_structured(path: Path, fmt: str) -> nx.Graph:
    try:
        if fmt == "graphml":
            graph = nx.read_graphml(path)
        elif fmt == "gexf":
            graph = nx.read_gexf(path)
        else:
            with io.StringIO(_read_text(path), newline="") as fh:
                data = json.load(fh)
            key = "edges" if "edges" in data else "links"
            graph = nx.node_link_graph(data, edges=key)
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
    ) as exc:
        raise InputError(f"cannot read {fmt}: {str(exc)[:200]} ({_HINT})", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", path=str(path)) from None
    except Exception as exc:  # XML parse errors of the several XML backends
        if type(exc).__name__ in ("ParseError", "XMLSyntaxError", "NetworkXError", "ExpatError"):
            raise InputError(
                f"cannot read {fmt}: {str(exc)[:200]} ({_HINT})", path=str(path)
            ) from None
        raise
    return graph


def read_graph(
    path: str | Path,
    format: str | None = None,  # noqa: A002
    as_undirected: bool = False,
) -> nx.Graph:
    """Read a graph export as an undirected simple :class:`networkx.Graph`.

    Parameters
    ----------
    path : path
        The file (``.gz`` is read transparently for edge lists, CSV and JSON).
    format : {"edgelist", "csv", "graphml", "gexf", "json"}, optional
        Default: from the extension (``.txt``/``.edges``/``.tsv``: whitespace edge list with
        ``#`` or ``%`` comments and integer ids; ``.csv``: header with ``source,target``;
        ``.graphml``; ``.gexf``; ``.json``: node-link).
    as_undirected : bool
        Accept a directed graph by dropping edge directions: a directed GraphML / GEXF /
        JSON graph, or an edge list whose header comment declares it directed (as SNAP's
        ``# Directed graph`` does).

    Returns
    -------
    networkx.Graph
        Self-loops and duplicate edges are removed and counted in
        ``G.graph["input_report"]`` (``self_loops``, ``duplicate_edges``).

    Raises
    ------
    InputError
        Unknown format, malformed or non-integer line (with its number), no edges,
        directed input without ``as_undirected``.

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
    check_input_path(path, "input graph")
    if fmt == "edgelist":
        return _read_edgelist(path, as_undirected)
    if fmt == "csv":
        return _read_csv(path)
    graph = _read_structured(path, fmt)
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


def write_graph(graph: nx.Graph, path: str | Path, format: str | None = None) -> None:  # noqa: A002
    """Write a graph atomically in the format named by ``format`` or the extension.

    Edge lists and CSV carry the edges only, so a graph with isolated nodes is refused
    there (an :class:`InputError` saying how many nodes would be lost) rather than written
    without them: use GraphML, GEXF or JSON, which keep them and node attributes.  Edges
    are written in the graph's edge order.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.csv")
    >>> write_graph(nx.path_graph(3), p)
    >>> open(p).read().splitlines()
    ['source,target', '0,1', '1,2']
    """
    if not isinstance(graph, nx.Graph):
        raise InputError(f"graph must be a networkx graph, got {type(graph).__name__}")
    path = check_path(path, "path")
    fmt = guess_format(path, format)
    clean: nx.Graph = nx.Graph()
    clean.add_nodes_from(graph.nodes(data=True))
    clean.add_edges_from(graph.edges(data=True))
    if fmt in ("edgelist", "csv"):
        check_writable(clean, fmt, path)
        sep = " " if fmt == "edgelist" else ","
        lines = [] if fmt == "edgelist" else ["source,target"]
        lines += [f"{u}{sep}{v}" for u, v in clean.edges()]
        if path.suffix.lower() == ".gz":
            with atomic_write(path, mode="wb", encoding=None) as fh:
                fh.write(gzip.compress(("\n".join(lines) + "\n").encode("utf-8")))
        else:
            with atomic_write(path) as fh:
                fh.write("\n".join(lines) + "\n")
        return
    with atomic_path(path) as tmp:
        if fmt == "graphml":
            nx.write_graphml(clean, tmp)
        elif fmt == "gexf":
            nx.write_gexf(clean, tmp)
        else:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(nx.node_link_data(clean, edges="edges"), fh)
