import hashlib
import hmac
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from querylogs import synthetic_log

KEY = b"test-key-0123456789abcdef"
# the shared data folder beside the checkout (or one level further up)
SHARED = next(
    (
        parent / "shared" / "data"
        for parent in Path(__file__).resolve().parents
        if (parent / "shared" / "data").is_dir()
    ),
    Path("/nonexistent"),
)


def shared_file(relative: str) -> Path:
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{relative} not available")
    return path


def hmac_pseudonym(user: str, length: int = 16) -> str:
    """Independent re-implementation of the keyed pseudonym (HMAC-SHA256, hex, truncated)."""
    return hmac.new(KEY, str(user).encode(), hashlib.sha256).hexdigest()[:length]


def normalize(query: str) -> str:
    return " ".join(str(query).lower().split())


def original_counts(log: pd.DataFrame) -> Counter:
    """(user, normalized query) -> number of distinct query events (user, query, time)."""
    events = {
        (str(u), normalize(q), pd.Timestamp(t))
        for u, q, t in zip(log["user"], log["query"], log["time"])
    }
    return Counter((u, q) for u, q, _ in events)


def published_counts(data: pd.DataFrame) -> Counter:
    return Counter(zip(data["user"], data["query"]))


def groups_of_identical_rows(data: pd.DataFrame) -> Counter:
    """Multiset of (query, time, url) rows per published user -> number of users having it."""
    per_user: dict[str, Counter] = {}
    for user, query, time, url in zip(data["user"], data["query"], data["time"], data["url"]):
        per_user.setdefault(user, Counter())[(query, str(time), None if pd.isna(url) else url)] += 1
    return Counter(frozenset(c.items()) for c in per_user.values())


@pytest.fixture(scope="session")
def small_log() -> pd.DataFrame:
    return synthetic_log(60, 3000, seed=3)


@pytest.fixture(scope="session")
def h():
    """The helper functions above, for test modules (conftest is not importable by name)."""
    import types

    return types.SimpleNamespace(
        KEY=KEY,
        shared_file=shared_file,
        hmac_pseudonym=hmac_pseudonym,
        normalize=normalize,
        original_counts=original_counts,
        published_counts=published_counts,
        groups_of_identical_rows=groups_of_identical_rows,
    )
