"""Shared fixtures of the tabular tests: the bundled Adult sample and the shared Adult data."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from structanon import Hierarchy
from tests._support import SHARED_DATA, shared_file

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
BUNDLED = Path(__file__).resolve().parents[2] / "tabular" / "data"
SHARED_ADULT = SHARED_DATA / "adult"


def _hierarchies(directory: Path, columns=QIS) -> dict[str, Hierarchy]:
    return {c: Hierarchy.from_csv(directory / f"adult_hierarchy_{c}.csv", name=c) for c in columns}


@pytest.fixture(scope="session")
def adult_sample() -> pd.DataFrame:
    """The bundled 5,000-record Adult sample."""
    return pd.read_csv(BUNDLED / "adult_sample.csv", sep=";")


@pytest.fixture(scope="session")
def adult_sample_hierarchies() -> dict[str, Hierarchy]:
    return _hierarchies(BUNDLED)


@pytest.fixture(scope="session")
def adult_full() -> pd.DataFrame:
    """The full 30,162-record Adult table from ../shared/data (skipped when absent)."""
    return pd.read_csv(shared_file("adult/adult.csv"), sep=";")


@pytest.fixture(scope="session")
def adult_full_hierarchies(adult_full) -> dict[str, Hierarchy]:
    return _hierarchies(SHARED_ADULT)


@pytest.fixture(scope="session")
def pycanon_confirms():
    """Check a tabular release's k, distinct l and t with pycanon (independent of this project).

    Returns the published table with a fresh index (pycanon miscounts l and t on a gapped one).
    """
    anonymity = pytest.importorskip("pycanon.anonymity")

    def confirm(
        release,
        n_input: int,
        k: int,
        l_div: int | None = None,
        t: float | None = None,
        sensitive: str = "occupation",
    ) -> pd.DataFrame:
        data = release.data.reset_index(drop=True)
        assert anonymity.k_anonymity(data, QIS) >= k
        if l_div:
            assert anonymity.l_diversity(data, QIS, [sensitive]) >= l_div
        if t is not None:
            assert anonymity.t_closeness(data, QIS, [sensitive]) <= t + 1e-9
        assert len(data) + release.suppressed == n_input
        return data

    return confirm
