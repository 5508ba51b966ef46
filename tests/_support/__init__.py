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
