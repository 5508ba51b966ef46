"""Shared fixtures and independent checkers for the transactions tests."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

GROCERIES = {
    "drinks": {"alcohol": ["beer", "wine"], "dairy": ["milk", "yogurt"]},
    "baby": ["diapers", "wipes"],
    "food": {"bakery": ["bread", "cake"], "produce": ["apple", "banana"]},
}


def ancestors_from_dict(tree: dict, root: str = "*") -> dict[str, list[str]]:
    """Every node's ancestors (nearest first) in a nested-dict taxonomy."""
    out: dict[str, list[str]] = {root: []}

    def walk(node, path):
        if isinstance(node, dict):
            for key, sub in node.items():
                out[key] = list(reversed(path))
                walk(sub, path + [key])
        else:
            for leaf in node:
                out[leaf] = list(reversed(path))

    walk(tree, [root])
    return out


def km_violations(published, k: int, m: int) -> list:
    """Itemsets of size <= m with support in (0, k), by brute force."""
    counts: Counter = Counter()
    for t in published:
        if t is None:
            continue
        labels = sorted(str(x) for x in t)
        for size in range(1, m + 1):
            counts.update(combinations(labels, size))
    return [s for s, c in counts.items() if c < k]


def range_covers(label, item) -> bool:
    """Does a published label of the automatic id-ordered tree cover an integer item?"""
    if str(label) == "*":
        return True
    text = str(label).split("#")[0]
    if ".." in text:
        lo, hi = text.split("..")
        return int(lo) <= int(item) <= int(hi)
    return int(label) == int(item)


def check_covering(original, published, covers, source_index=None) -> None:
    """Every item is covered by a published label, and every label covers an item.

    ``source_index`` (the release's private link) gives the input position of each
    published transaction; it must be a permutation.
    """
    assert len(original) == len(published)
    if source_index is not None:
        assert sorted(int(i) for i in source_index) == list(range(len(original)))
        original = [original[int(i)] for i in source_index]
    for t, p in zip(original, published):
        if p is None:
            continue
        for x in t:
            assert any(covers(lab, x) for lab in p), (x, p)
        for lab in p:
            assert any(covers(lab, x) for x in t), (lab, t)


@pytest.fixture
def groceries():
    baskets = [
        {"milk", "beer", "diapers"},
        {"milk", "bread"},
        {"beer", "wine", "diapers"},
        {"yogurt", "apple"},
        {"milk", "apple", "banana"},
        {"beer", "diapers"},
        {"wine", "cake"},
        {"milk", "yogurt", "bread"},
        {"wipes", "milk"},
        {"banana", "bread"},
        {"beer", "wine"},
        {"apple", "cake"},
    ]
    return baskets


@pytest.fixture
def retail_head():
    from transactions.cli import SAMPLE
    from transactions.io import read_transactions

    return read_transactions(SAMPLE)


class _Checks:
    GROCERIES = GROCERIES
    ancestors_from_dict = staticmethod(ancestors_from_dict)
    km_violations = staticmethod(km_violations)
    range_covers = staticmethod(range_covers)
    check_covering = staticmethod(check_covering)


@pytest.fixture(scope="session")
def checks():
    """Independent checkers (brute force, no package code)."""
    return _Checks
