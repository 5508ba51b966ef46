"""Shared fixtures of the graphs tests: the shared Facebook graph and the bundled ca-GrQc."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from tests._support import SHARED_DATA as SHARED

BUNDLED = Path(__file__).resolve().parents[2] / "graphs" / "data"


@pytest.fixture(scope="session")
def facebook_edges() -> np.ndarray:
    path = SHARED / "facebook" / "facebook_combined.txt"
    if not path.exists():
        pytest.skip("shared Facebook data absent")
    return np.loadtxt(path, dtype=np.int64)


@pytest.fixture(scope="session")
def grqc() -> nx.Graph:
    return nx.read_edgelist(BUNDLED / "ca-GrQc_undirected.txt", nodetype=int)
