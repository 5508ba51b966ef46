"""Trajectory linkage and the Dask engine: refused clearly, before any work or write."""

import pytest
from click.testing import CliRunner

import location
from location.cli import cli
from location.synthetic import synthetic_log
from structanon.errors import InputError


def test_api_refuses_trajectory_on_the_dask_engine(key):
    log = synthetic_log(600, 20, seed=1)
    with pytest.raises(InputError, match="runs in memory only"):
        location.cloak(log, k=3, key=key, linkage="trajectory", engine="dask")


def test_cli_refuses_trajectory_on_the_dask_engine_before_writing(tmp_path):
    log = synthetic_log(600, 20, seed=1)
    src = tmp_path / "log.csv"
    log.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(src), "-k", "3", "-o", str(out), "--linkage", "trajectory"]
        + ["--engine", "dask", "--quiet"],
    )
    assert result.exit_code == 2, result.output
    assert "in memory only" in result.output
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["log.csv"]
