"""Utility of a published search log compared with the original.

All functions take logs with one row per query (``user``, ``query``, optionally
``time`` and ``url``); users must be named the same way in both logs (e.g. the original
ids mapped to their pseudonyms).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from structanon.errors import InputError

__all__ = [
    "query_frequencies",
    "top_n_overlap",
    "frequency_kl",
    "query_url_retention",
    "intent_divergence",
    "utility_report",
]


def _need(log: pd.DataFrame, *columns: str) -> None:
    for column in columns:
        if column not in log.columns:
            raise InputError("log lacks a column", column=column)


def query_frequencies(log: pd.DataFrame) -> pd.Series:
    """Number of rows (queries) per distinct query, most frequent first.

    Examples
    --------
    >>> query_frequencies(pd.DataFrame({"query": ["a", "b", "a"]})).to_dict()
    {'a': 2, 'b': 1}
    """
    _need(log, "query")
    return log["query"].value_counts(sort=True)


def top_n_overlap(original: pd.DataFrame, published: pd.DataFrame, n: int = 100) -> float:
    """Share of the ``n`` most frequent original queries among the ``n`` most frequent
    published ones.

    Examples
    --------
    >>> a = pd.DataFrame({"query": ["x", "x", "y", "z"]})
    >>> top_n_overlap(a, pd.DataFrame({"query": ["x", "z"]}), n=2)
    0.5

    Notes
    -----
    ``|top_n(original) & top_n(published)| / min(n, |distinct original queries|)``; ties
    at the cut are broken by query text.
    """
    if n < 1:
        raise InputError("n must be positive", value=n)

    def top(log: pd.DataFrame) -> set:
        freq = query_frequencies(log)
        if freq.empty:
            return set()
        cut = freq.iloc[min(n, len(freq)) - 1]
        freq = freq[freq >= cut]
        frame = pd.DataFrame({"q": freq.index.astype(str), "c": freq.to_numpy()})
        return set(frame.sort_values(["c", "q"], ascending=[False, True])["q"].head(n))

    base = top(original)
    if not base:
        return float("nan")
    return len(base & top(published)) / len(base)


def frequency_kl(original: pd.DataFrame, published: pd.DataFrame) -> float:
    """Kullback-Leibler divergence (bits) of the published query distribution from the
    original one.

    Examples
    --------
    >>> a = pd.DataFrame({"query": ["x", "y"]})
    >>> frequency_kl(a, a)
    0.0

    Notes
    -----
    ``KL(P || Q) = sum_q P(q) log2(P(q) / Q(q))`` over the union of queries, ``P`` the
    original frequencies and ``Q`` the published ones with add-1/2 (Jeffreys) smoothing,
    ``Q(q) = (c_q + 1/2) / (N + V/2)``, so suppressed queries give a finite penalty.
    Without any suppression or addition the value is close to 0 (exactly 0 for identical
    logs: then no smoothing is applied); NaN when either log is empty.
    """
    p = query_frequencies(original)
    q = query_frequencies(published)
    if p.sum() == 0 or q.sum() == 0:  # nothing to compare with (an empty release)
        return float("nan")
    union = p.index.union(q.index)
    pc = p.reindex(union, fill_value=0).to_numpy(float)
    qc = q.reindex(union, fill_value=0).to_numpy(float)
    pp = pc / pc.sum()
    if qc.sum() > 0 and np.array_equal(pc / pc.sum(), qc / qc.sum()):
        return 0.0
    qq = (qc + 0.5) / (qc.sum() + 0.5 * union.size)
    keep = pp > 0
    return float(np.sum(pp[keep] * np.log2(pp[keep] / qq[keep])))


def query_url_retention(original: pd.DataFrame, published: pd.DataFrame) -> dict[str, float]:
    """Precision and recall of the distinct (query, clicked URL) pairs.

    Examples
    --------
    >>> a = pd.DataFrame({"query": ["x", "y", "z"], "url": ["u", "v", None]})
    >>> query_url_retention(a, a.iloc[:1])
    {'precision': 1.0, 'recall': 0.5, 'pairs_original': 2, 'pairs_published': 1}

    Notes
    -----
    precision = |P_pub & P_orig| / |P_pub|, recall = |P_pub & P_orig| / |P_orig|, with
    ``P`` the sets of (query, url) pairs of rows with a click.
    """
    _need(original, "query", "url")
    _need(published, "query", "url")

    both = pd.concat([original[["query", "url"]], published[["query", "url"]]], ignore_index=True)
    clicked = both["url"].notna().to_numpy()
    query_codes, _ = pd.factorize(both["query"].astype(str))
    url_codes, urls = pd.factorize(both["url"].astype(object).where(clicked))
    pair = query_codes.astype(np.int64) * max(len(urls), 1) + url_codes
    split = len(original)
    before = np.unique(pair[:split][clicked[:split]])
    after = np.unique(pair[split:][clicked[split:]])
    common = np.intersect1d(before, after, assume_unique=True).size
    return {
        "precision": common / len(after) if len(after) else float("nan"),
        "recall": common / len(before) if len(before) else float("nan"),
        "pairs_original": int(len(before)),
        "pairs_published": int(len(after)),
    }


def _intent_matrix(log, users, intent_of):
    user_codes = users.get_indexer(log["user"].astype(str))
    intents = intent_of.reindex(log["query"].to_numpy()).to_numpy()
    intents = np.where(np.isnan(intents.astype(float)), -1, intents).astype(np.int64) + 1
    keep = user_codes >= 0
    width = int(intent_of.max()) + 2 if len(intent_of) else 1
    matrix = sp.csr_matrix(
        (np.ones(int(keep.sum())), (user_codes[keep], intents[keep])), shape=(users.size, width)
    )
    matrix.sum_duplicates()
    totals = np.asarray(matrix.sum(axis=1)).ravel()
    scale = np.where(totals > 0, 1.0 / np.where(totals > 0, totals, 1), 0.0)
    return sp.csr_matrix(sp.diags(scale) @ matrix), totals > 0


def intent_divergence(
    original: pd.DataFrame, published: pd.DataFrame, intent_of_query: pd.Series
) -> dict[str, float]:
    """Jensen-Shannon divergence between each user's intent distribution before and after.

    Parameters
    ----------
    original, published : DataFrame
        ``user`` and ``query`` columns; users named alike in both.
    intent_of_query : pandas.Series
        Intent id (int) indexed by query; queries not in it form one "other" intent.

    Returns
    -------
    dict
        ``mean`` and ``median`` over the original users (a user with no published query
        counts 1, the maximum), and ``users_without_published_queries``.

    Examples
    --------
    >>> a = pd.DataFrame({"user": ["u", "u"], "query": ["x", "y"]})
    >>> intents = pd.Series([0, 1], index=["x", "y"])
    >>> intent_divergence(a, a.iloc[:1], intents)["mean"]
    0.311...

    Notes
    -----
    ``JS(P, Q) = 1/2 KL(P || M) + 1/2 KL(Q || M)``, ``M = (P + Q) / 2``, in bits, so it
    lies in [0, 1].
    """
    _need(original, "user", "query")
    _need(published, "user", "query")
    users = pd.Index(pd.unique(original["user"].astype(str)))
    p, _ = _intent_matrix(original, users, intent_of_query)
    q, present = _intent_matrix(published, users, intent_of_query)
    m = (p + q) * 0.5
    m.sum_duplicates()

    def kl_rows(x: sp.csr_matrix) -> np.ndarray:
        x = sp.csr_matrix(x)
        x.sum_duplicates()
        coo = x.tocoo()
        mid = np.asarray(m[coo.row, coo.col]).ravel()
        contrib = coo.data * np.log2(coo.data / mid)
        return np.bincount(coo.row, weights=contrib, minlength=x.shape[0])

    js = 0.5 * kl_rows(p) + 0.5 * kl_rows(q)
    js = np.where(present, np.clip(js, 0.0, 1.0), 1.0)
    return {
        "mean": float(js.mean()) if js.size else float("nan"),
        "median": float(np.median(js)) if js.size else float("nan"),
        "users_without_published_queries": int((~present).sum()),
    }


def utility_report(
    original: pd.DataFrame,
    published: pd.DataFrame,
    intent_of_query: pd.Series,
    time_granularity: str | None = None,
    added: int | None = None,
    suppressed: int | None = None,
    n: int = 100,
) -> dict:
    """All utility metrics of a release, as one dict (used by :func:`querylogs.anonymize`)."""
    total = len(original)
    report = {
        f"top{n}_query_overlap": top_n_overlap(original, published, n),
        "query_frequency_kl_bits": frequency_kl(original, published),
        "query_url_pairs": query_url_retention(original, published),
        "intent_js_divergence": intent_divergence(original, published, intent_of_query),
        "queries_in": int(total),
        "queries_published": int(len(published)),
    }
    if added is not None:
        report["share_added"] = added / total if total else float("nan")
    if suppressed is not None:
        report["share_suppressed"] = suppressed / total if total else float("nan")
    if time_granularity is not None:
        report["time_granularity"] = time_granularity
    return report
