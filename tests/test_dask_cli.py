"""``--engine dask`` of the tabular and querylogs command lines: the same release as pandas."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from querylogs.cli import cli as querylogs_cli
from querylogs.synthetic import synthetic_log
from tabular.cli import cli as tabular_cli

KEY_HEX = "00112233445566778899aabbccddeeff"


def _run(cli, args):
    return CliRunner().invoke(cli, ["anonymize", *map(str, args)], catch_exceptions=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dask_cli")
    rng = np.random.default_rng(3)
    n = 1500
    table = pd.DataFrame(
        {
            "age": rng.integers(17, 90, n),
            "hours": rng.integers(1, 99, n),
            "sex": rng.choice(["F", "M"], n),
            "income": rng.choice(["<=50K", ">50K"], n),
        }
    )
    table.to_csv(folder / "table.csv", sep=";", index=False)
    log = synthetic_log(150, 2500, seed=4)
    log.to_csv(folder / "log.csv", index=False)
    (folder / "key.txt").write_text(KEY_HEX)
    return folder


def _rows(path: Path, sep: str) -> Counter:
    df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    return Counter(map(tuple, df.to_numpy().tolist()))


TABULAR = ["--qi", "age,hours,sex", "--numeric", "age,hours", "--set-qi", "sex"]
TABULAR += ["--sep", ";", "--algorithm", "mondrian", "-k", 5, "--seed", 3]


def test_tabular_mondrian_dask_publishes_the_pandas_rows(files, tmp_path):
    pytest.importorskip("distributed")
    key = ["--key-file", files / "key.txt", "--quiet"]
    a = _run(tabular_cli, [files / "table.csv", "-o", tmp_path / "p.csv", *TABULAR, *key])
    b = _run(
        tabular_cli,
        [files / "table.csv", "-o", tmp_path / "d.csv", *TABULAR, *key, "--engine", "dask"],
    )
    assert a.exit_code == 0 and b.exit_code == 0, b.output
    # Mondrian on Dask orders rows by their published values, pandas by the secret key:
    # the same rows, each as many times
    published = _rows(tmp_path / "p.csv", ";")
    assert _rows(tmp_path / "d.csv", ";") == published
    assert sum(published.values()) == 1500
    assert min(Counter(row[:3] for row in published.elements()).values()) >= 5


def test_querylogs_dask_writes_the_pandas_bytes(files, tmp_path):
    pytest.importorskip("distributed")
    common = ["-k", 3, "--seed", 2, "--key-file", files / "key.txt", "--quiet"]
    a = _run(querylogs_cli, [files / "log.csv", "-o", tmp_path / "p.tsv", *common])
    b = _run(
        querylogs_cli,
        [files / "log.csv", "-o", tmp_path / "d.tsv", *common, "--engine", "dask"],
    )
    assert a.exit_code == 0 and b.exit_code == 0, b.output
    assert (tmp_path / "d.tsv").read_bytes() == (tmp_path / "p.tsv").read_bytes()
    assert len((tmp_path / "p.tsv").read_bytes()) > 100


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--workers", "2"], "need --engine dask"),
        (["--memory-limit", "4GB"], "need --engine dask"),
        (["--scheduler", "tcp://127.0.0.1:1"], "need --engine dask"),
        (["--engine", "dask", "--workers", "0"], "--workers"),
        (["--engine", "dask", "--memory-limit", "lots"], "--memory-limit"),
    ],
)
@pytest.mark.parametrize("which", ["tabular", "querylogs"])
def test_engine_options_checked_before_writing(files, tmp_path, which, extra, message):
    out = tmp_path / ("out.csv" if which == "tabular" else "out.tsv")
    if which == "tabular":
        r = _run(tabular_cli, [files / "table.csv", "-o", out, *TABULAR, *extra])
    else:
        r = _run(querylogs_cli, [files / "log.csv", "-o", out, "-k", 3, *extra])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_tabular_dask_needs_mondrian(files, tmp_path):
    args = [files / "table.csv", "-o", tmp_path / "o.csv", "--qi", "age,sex", "-k", 5]
    r = _run(tabular_cli, [*args, "--sep", ";", "--engine", "dask", "--algorithm", "datafly"])
    assert r.exit_code == 2, r.output
    assert "mondrian only" in r.output and "--engine" in r.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("package", ["querylogs", "location", "tabular"])
def test_an_output_among_the_lazy_inputs_is_refused(tmp_path, package):
    """A folder or glob INPUT stands for its files: an output naming one of them, lying in
    the folder or matching the pattern is refused before anything is read or written."""
    import location
    from location.cli import cli as location_cli

    cli = {"querylogs": querylogs_cli, "location": location_cli, "tabular": tabular_cli}[package]
    extra = {
        "querylogs": [],
        "location": [],
        "tabular": ["--qi", "age", "--numeric", "age", "--algorithm", "mondrian"],
    }[package]
    parts = tmp_path / "parts"
    parts.mkdir()
    if package == "querylogs":
        frame = synthetic_log(30, 400, seed=1)
    elif package == "location":
        frame = location.synthetic_log(400, 30, seed=1)
    else:
        frame = pd.DataFrame({"age": np.arange(400) % 70 + 18})
    for i in range(2):
        frame.to_csv(parts / f"part{i}.csv", index=False)
    before = {p.name: p.read_bytes() for p in parts.iterdir()}
    cases = [
        (parts / "*.csv", parts / "part0.csv", "names an input file"),
        (parts / "*.csv", parts / "new.csv", "matches the INPUT pattern"),
    ]
    if package != "tabular":  # a tabular folder INPUT is a Parquet dataset
        cases += [
            (parts, parts / "part1.csv", "inside the INPUT folder"),
            (parts, parts / "new.csv", "inside the INPUT folder"),
        ]
    for source, output, message in cases:
        result = CliRunner().invoke(
            cli,
            [
                "anonymize",
                str(source),
                "-o",
                str(output),
                "-k",
                "2",
                "--engine",
                "dask",
                "--quiet",
                *extra,
            ],
        )
        assert result.exit_code == 2 and message in result.output, (source, result.output)
        assert {p.name: p.read_bytes() for p in parts.iterdir()} == before


def test_tabular_dask_on_categorical_parquet_prints_no_pandas_warning(tmp_path):
    """A categorical Parquet column made pandas print a FutureWarning (with its source
    line) through --quiet."""
    import warnings

    pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(1)
    source = tmp_path / "cat.parquet"
    pd.DataFrame(
        {
            "sex": pd.Categorical(rng.choice(["M", "F"], 400)),
            "race": pd.Categorical(rng.choice(["w", "b", "a"], 400)),
            "age": rng.integers(20, 60, 400),
        }
    ).to_parquet(source)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _run(
            tabular_cli,
            [str(source), "--qi", "sex,race,age", "--set-qi", "sex,race"]
            + ["--numeric", "age", "--algorithm", "mondrian", "-k", "3"]
            + ["-o", str(tmp_path / "out.parquet"), "--engine", "dask", "--quiet"],
        )
    assert result.exit_code == 0, result.output
    assert not [w for w in caught if issubclass(w.category, FutureWarning)]
