"""The shared test helpers find the shared data the way every package's tests do."""

import pytest

from tests._support import REPO, SHARED_DATA, shared_file


def test_shared_data_sits_beside_the_project():
    assert (REPO / "pyproject.toml").exists()
    assert SHARED_DATA == REPO.parent / "shared" / "data"


def test_absent_shared_file_skips_with_its_path():
    with pytest.raises(pytest.skip.Exception, match="absent"):
        shared_file("no/such/file.csv")
