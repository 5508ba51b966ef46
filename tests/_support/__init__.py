"""Helpers shared by the test suites of every package.

Import as ``from tests._support import SHARED_DATA, shared_file`` (the repository root is on
pytest's ``pythonpath``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The shared datasets beside the project (``../shared/data``); CI has them.
SHARED_DATA = Path(os.environ.get("STRUCTANON_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_file(relative: str) -> Path:
    """A file under ``../shared/data``; the calling test is skipped when it is absent."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"shared dataset {relative} is absent (expected at {path})")
    return path


def window_key(key, log):
    """The key of a location release's per-window pseudonyms: ``key`` bound to the content
    of ``log`` (every fix valid; columns ``user, time, lat, lon``)."""
    import pandas as pd

    from location._publish import bound_pseudonymizer, fix_digest

    t_ns = pd.to_datetime(log["time"], utc=True).astype("int64").to_numpy()
    digest = fix_digest(log["user"].to_numpy(), t_ns, log["lat"].to_numpy(), log["lon"].to_numpy())
    return bound_pseudonymizer(key, digest, "window")


def window_pseudonyms(key, users, times, window: str, regions):
    """Pseudonyms of location releases re-derived independently:
    ``HMAC(key, user, window, region)`` (``key`` bound to the input: :func:`window_key`).

    ``window`` is the release's window (e.g. ``"15min"``); the window number is the epoch
    time in nanoseconds floor-divided by the window length; ``regions`` the published
    ``region_id`` of each row.
    """
    import numpy as np
    import pandas as pd

    stamps = pd.to_datetime(pd.Series(times), utc=True)
    number = (stamps.astype("int64") // pd.Timedelta(window).value).to_numpy(np.int64)
    labels = [
        f"{u}\x1fwindow\x1f{w}\x1fregion\x1f{int(r)}"
        for u, w, r in zip(pd.Series(users).astype(str), number, np.asarray(regions))
    ]
    return key.pseudonymize(labels)


def set_partitions(items: list):
    """Every partition of ``items`` into blocks (for brute-force references; Bell(n) of them)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        yield [[first]] + part
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1 :]
