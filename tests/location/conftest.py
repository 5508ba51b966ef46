from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import shapely

from location.synthetic import synthetic_log
from structanon.io import Pseudonymizer
from tests._support import SHARED_DATA as SHARED


def _recount(data: pd.DataFrame) -> dict:
    """Distinct users per (region_id, window), counted with plain Python sets."""
    users = defaultdict(set)
    for region_id, window, user in zip(data["region_id"], data["window"], data["user"]):
        users[(int(region_id), window)].add(user)
    return {key: len(v) for key, v in users.items()}


def _assert_contains(release, original: pd.DataFrame, lat="lat", lon="lon") -> None:
    """Every published fix lies inside its region (rows linked through ``source_index``)."""
    data = release.data
    orig = original.loc[release.source_index]
    points = shapely.points(orig[lon].to_numpy(dtype=float), orig[lat].to_numpy(dtype=float))
    inside = shapely.contains(np.asarray(data["region"].to_numpy()), points)
    assert inside.all(), f"{(~inside).sum()} fixes outside their region"


@pytest.fixture
def key() -> Pseudonymizer:
    return Pseudonymizer(b"test-key-0123456789")


@pytest.fixture(scope="session")
def small_log() -> pd.DataFrame:
    return synthetic_log(20_000, 300, seed=7)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED.exists():
        pytest.skip("shared data folder absent")
    return SHARED


@pytest.fixture
def recount():
    return _recount


@pytest.fixture
def assert_contains():
    return _assert_contains
