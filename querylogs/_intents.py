"""Query-URL click graph, query similarity and search intents.

Two queries express the same search intent when the people who typed them clicked the
same URLs (Beeferman & Berger 2000; Baeza-Yates & Tiberi 2007).  The click graph is the
bipartite query x URL matrix of click counts; query similarity is the cosine of its rows.
Queries without clicks are attached to their most similar query by terms (TF-IDF cosine).
Intents are the connected components of the thresholded similarity graph.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.feature_extraction.text import TfidfVectorizer

from structanon.errors import InputError

__all__ = ["normalize_queries", "click_graph", "query_similarity", "cluster_intents"]

_CHUNK = 4096


def normalize_queries(queries: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """Encode queries after case folding and whitespace collapsing.

    Returns
    -------
    codes : int array
        Code of each query.
    vocabulary : object array
        The distinct normalized queries, ``vocabulary[codes]`` being the normalized input.

    Examples
    --------
    >>> codes, vocab = normalize_queries(["Cheap  Flights", "cheap flights ", "news"])
    >>> codes.tolist(), vocab.tolist()
    ([0, 0, 1], ['cheap flights', 'news'])
    """
    series = pd.Series(queries if isinstance(queries, pd.Series) else list(queries), dtype=object)
    # missing queries as "" (where, not fillna: fillna downcasts object columns of numbers)
    text = series.where(series.notna(), "").astype(str)
    raw_codes, raw_uniques = pd.factorize(text, use_na_sentinel=False)
    normalized = pd.Series(raw_uniques, dtype=object).str.lower().str.split().str.join(" ")
    norm_codes, vocabulary = pd.factorize(normalized.fillna(""), use_na_sentinel=False)
    return norm_codes[raw_codes].astype(np.int64), np.asarray(vocabulary, dtype=object)


def click_graph(
    query_codes: np.ndarray, urls: Iterable, n_queries: int | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """The bipartite query x URL click-count matrix.

    Parameters
    ----------
    query_codes : int array (rows,)
        Query code of each log row.
    urls : array (rows,)
        Clicked URL of each row, missing (None / NaN) where there was no click.
    n_queries : int, optional
        Number of query codes (rows of the matrix); ``max(code) + 1`` by default.

    Returns
    -------
    graph : scipy.sparse.csr_matrix (n_queries, n_urls)
        ``graph[q, u]`` = number of clicks on URL ``u`` after query ``q``.
    url_vocabulary : object array
        The URL of each column.

    Examples
    --------
    >>> g, urls = click_graph(np.array([0, 0, 1, 2]), ["a.com", "a.com", "a.com", None])
    >>> g.toarray().tolist(), urls.tolist()
    ([[2.0], [1.0], [0.0]], ['a.com'])
    """
    query_codes = np.asarray(query_codes, dtype=np.int64)
    url_series = pd.Series(urls if isinstance(urls, pd.Series) else list(urls), dtype=object)
    if len(url_series) != len(query_codes):
        raise InputError(f"{len(url_series)} URLs for {len(query_codes)} query codes", column="url")
    if n_queries is None:
        n_queries = int(query_codes.max()) + 1 if query_codes.size else 0
    url_codes, url_vocab = pd.factorize(url_series)
    clicked = url_codes >= 0
    graph = sp.csr_matrix(
        (np.ones(int(clicked.sum()), dtype=np.float64), (query_codes[clicked], url_codes[clicked])),
        shape=(n_queries, len(url_vocab)),
    )
    graph.sum_duplicates()
    return graph, np.asarray(url_vocab, dtype=object)


def _row_normalize(matrix: sp.csr_matrix) -> sp.csr_matrix:
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ matrix)


def _prune_hubs(graph: sp.csr_matrix, max_url_queries: int | None) -> tuple[sp.csr_matrix, int]:
    if max_url_queries is None:
        return graph, 0
    degree = np.diff(graph.tocsc().indptr)
    keep = degree <= max_url_queries
    return sp.csr_matrix(graph[:, np.flatnonzero(keep)]), int((~keep).sum())


def query_similarity(
    graph: sp.csr_matrix, threshold: float = 0.5, max_url_queries: int | None = 200
) -> sp.csr_matrix:
    """Cosine similarity of queries by their clicked URLs, thresholded.

    Parameters
    ----------
    graph : csr_matrix (n_queries, n_urls)
        Click counts, as :func:`click_graph` returns.
    threshold : float
        Pairs with cosine below it are dropped.
    max_url_queries : int or None
        URLs clicked after more than this many distinct queries (portals, search engines)
        are ignored: they say little about intent and make the product quadratic.

    Returns
    -------
    csr_matrix (n_queries, n_queries)
        Symmetric, zero diagonal, entries ``>= threshold``.

    Examples
    --------
    >>> g = sp.csr_matrix(np.array([[1, 0], [2, 0], [1, 1], [0, 0]]))
    >>> query_similarity(g, 0.5).toarray().round(3).tolist()
    [[0.0, 1.0, 0.707, 0.0], [1.0, 0.0, 0.707, 0.0], [0.707, 0.707, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]

    Notes
    -----
    ``sim(q, q') = <c_q, c_q'> / (||c_q|| ||c_q'||)`` with ``c_q`` the click-count row of
    ``q``.  Computed in row blocks of the sparse product so memory stays bounded by the
    number of retained pairs.
    """
    if not 0.0 < threshold <= 1.0:
        raise InputError("threshold must be in (0, 1]", value=threshold)
    pruned, _ = _prune_hubs(sp.csr_matrix(graph, dtype=np.float64), max_url_queries)
    return _thresholded_self_product(_row_normalize(pruned), threshold)


def _thresholded_self_product(unit: sp.csr_matrix, threshold: float) -> sp.csr_matrix:
    n = unit.shape[0]
    transposed = sp.csr_matrix(unit.T)
    blocks = []
    for start in range(0, n, _CHUNK):
        block = (unit[start : start + _CHUNK] @ transposed).tocoo()
        keep = (block.data >= threshold - 1e-12) & (block.row + start != block.col)
        blocks.append((block.row[keep] + start, block.col[keep], block.data[keep]))
    rows, cols, vals = (
        (np.concatenate(parts) if parts else np.zeros(0) for parts in zip(*blocks))
        if blocks
        else (np.zeros(0),) * 3
    )
    return sp.csr_matrix((vals, (rows.astype(np.int64), cols.astype(np.int64))), shape=(n, n))


def _term_attachments(
    vocabulary: np.ndarray, rows: np.ndarray, threshold: float, max_term_share: float
) -> tuple[np.ndarray, np.ndarray]:
    """For each query in ``rows``, its most similar other query by TF-IDF terms."""
    if rows.size == 0 or vocabulary.size < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    vectorizer = TfidfVectorizer(
        token_pattern=r"(?u)\b\w+\b", max_df=max_term_share, min_df=1, dtype=np.float64
    )
    try:
        terms = vectorizer.fit_transform(vocabulary)
    except ValueError:  # no term survives the document-frequency cut
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    transposed = sp.csr_matrix(terms.T)
    sources, targets = [], []
    for start in range(0, rows.size, _CHUNK):
        chunk = rows[start : start + _CHUNK]
        block = (terms[chunk] @ transposed).tocoo()
        keep = (block.col != chunk[block.row]) & (block.data >= threshold - 1e-12)
        r, c, v = block.row[keep], block.col[keep], block.data[keep]
        order = np.lexsort((c, -v, r))
        r, c = r[order], c[order]
        first = np.ones(r.size, dtype=bool)
        first[1:] = r[1:] != r[:-1]
        sources.append(chunk[r[first]])
        targets.append(c[first])
    return np.concatenate(sources), np.concatenate(targets)


def cluster_intents(
    vocabulary: np.ndarray,
    graph: sp.csr_matrix,
    *,
    click_threshold: float = 0.5,
    term_threshold: float = 0.5,
    max_url_queries: int | None = 200,
    max_term_share: float = 0.05,
    max_intent_size: int | None = 200,
) -> tuple[np.ndarray, dict]:
    """Cluster queries into search intents.

    Parameters
    ----------
    vocabulary : object array (n_queries,)
        The distinct (normalized) queries, rows of ``graph``.
    graph : csr_matrix (n_queries, n_urls)
        Click counts (:func:`click_graph`).
    click_threshold : float
        Two queries are linked when the cosine of their click rows reaches it.
    term_threshold : float
        A query without clicks (on non-hub URLs) is linked to its most similar query by
        TF-IDF term cosine when that similarity reaches it.
    max_url_queries : int or None
        Hub-URL cut, see :func:`query_similarity`.
    max_term_share : float
        Terms found in more than this share of distinct queries are ignored.
    max_intent_size : int or None
        A component larger than this is split by raising the click threshold inside it
        (steps of 0.1 up to 1.0), so chains of similar pairs do not merge unrelated queries
        into one giant intent.  Components that stay larger at 1.0 (queries with identical
        click vectors) are kept whole.

    Returns
    -------
    labels : int array (n_queries,)
        Intent of each query, ``0 .. n_intents - 1``.
    stats : dict
        ``n_intents``, ``largest_intent``, ``singleton_intents``, ``click_links``,
        ``term_links``, ``hub_urls_ignored``, ``queries_without_clicks``.

    Examples
    --------
    >>> vocab = np.array(["cheap flights", "flight deals", "cheap flights paris", "news"])
    >>> g = sp.csr_matrix(np.array([[3, 0], [1, 0], [0, 0], [0, 2]]))
    >>> labels, _ = cluster_intents(vocab, g, max_term_share=0.9)
    >>> labels.tolist()
    [0, 0, 0, 1]

    Notes
    -----
    Intents are the connected components of the graph with an edge ``q - q'`` when
    ``cos(c_q, c_q') >= click_threshold``, plus, for each click-less query ``q``, an edge
    to ``argmax_{q' != q} cos(t_q, t_q')`` when that reaches ``term_threshold`` (``t``
    being TF-IDF term vectors).  Attaching each click-less query to a single neighbour
    keeps terms from chaining unrelated intents together.

    References
    ----------
    D. Beeferman, A. Berger. Agglomerative clustering of a search engine query log.
    KDD 2000.  R. Baeza-Yates, A. Tiberi. Extracting semantic relations from query logs.
    KDD 2007.
    """
    vocabulary = np.asarray(vocabulary, dtype=object)
    n = vocabulary.size
    if graph.shape[0] != n:
        raise InputError(f"graph has {graph.shape[0]} rows for {n} queries")
    if not 0.0 < term_threshold <= 1.0:
        raise InputError("term_threshold must be in (0, 1]", value=term_threshold)
    if not 0.0 < max_term_share <= 1.0:
        raise InputError("max_term_share must be in (0, 1]", value=max_term_share)
    if max_intent_size is not None and max_intent_size < 1:
        raise InputError("max_intent_size must be positive or None", value=max_intent_size)
    if max_url_queries is not None and max_url_queries < 1:
        raise InputError("max_url_queries must be positive or None", value=max_url_queries)
    pruned, n_hubs = _prune_hubs(sp.csr_matrix(graph, dtype=np.float64), max_url_queries)
    similar = query_similarity(pruned, click_threshold, None)
    clickless = np.flatnonzero(np.diff(pruned.indptr) == 0)
    src, dst = _term_attachments(
        vocabulary, clickless, term_threshold, max_term_share if n > 20 else 1.0
    )
    attach = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    n_intents, labels = connected_components(similar + attach, directed=False)
    refinements = 0
    if max_intent_size is not None:
        sim = similar.tocoo()
        levels = np.round(np.arange(click_threshold + 0.1, 1.0 + 1e-9, 0.1), 6)
        for level in np.append(levels[levels < 1.0], 1.0):
            sizes = np.bincount(labels, minlength=n_intents)
            big = sizes[labels] > max_intent_size
            if not big.any():
                break
            refinements += 1
            keep = big[sim.row] & (labels[sim.row] == labels[sim.col]) & (sim.data >= level - 1e-9)
            keep_attach = big[src] & (labels[src] == labels[dst])
            sub = sp.csr_matrix(
                (
                    np.ones(int(keep.sum() + keep_attach.sum())),
                    (
                        np.r_[sim.row[keep], src[keep_attach]],
                        np.r_[sim.col[keep], dst[keep_attach]],
                    ),
                ),
                shape=(n, n),
            )
            _, pieces = connected_components(sub, directed=False)
            # nodes outside big components keep their label; big ones get fresh labels
            key = np.where(big, n_intents + pieces, labels)
            labels = np.unique(key, return_inverse=True)[1].reshape(-1)
            n_intents = int(labels.max()) + 1 if n else 0
    sizes = np.bincount(labels, minlength=n_intents)
    stats = {
        "n_queries": int(n),
        "n_intents": int(n_intents),
        "largest_intent": int(sizes.max()) if n else 0,
        "singleton_intents": int((sizes == 1).sum()),
        "click_links": int(similar.nnz // 2),
        "term_links": int(src.size),
        "hub_urls_ignored": n_hubs,
        "queries_without_clicks": int(clickless.size),
        "refinement_levels": refinements,
    }
    return labels.astype(np.int64), stats
