"""``structanon tabular anonymize --engine dask`` writes without collecting the release.

CSV / TSV outputs are one file written partition by partition with the pandas writer's
bytes; ``.parquet`` is a folder of parts; both read back with pandas equal the pandas
engine's release as multisets of rows.  Writes are all-or-nothing, and the published order
comes from the secret key: two Dask releases joined by position link rows at chance only
(the truth is a ``serial`` column the attack never reads).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tabular.io as tab_io
from tabular._mondrian_dask import mondrian_dask
from tabular.cli import cli

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

N = 3000
ARGS = ["--qi", "age,sex,edu", "--numeric", "age", "--set-qi", "sex,edu", "-k", "5"]
ARGS += ["--algorithm", "mondrian", "--quiet"]
# a positional pairing of two independent orders hits the same record ~Poisson(1) times
# per output partition that the two releases share
CHANCE_HITS = 8


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """One table as one CSV (pandas engine) and as three CSV parts (three partitions)."""
    folder = tmp_path_factory.mktemp("dask_cli")
    rng = np.random.default_rng(11)
    df = pd.DataFrame(
        {
            "serial": np.arange(N),  # the input order
            "age": rng.integers(17, 90, N),
            "sex": rng.choice(["F", "M"], N),
            "edu": rng.choice(["HS", "BA", 'MA "PhD"', "none"], N, p=[0.5, 0.3, 0.1, 0.1]),
            "income": rng.choice(["<=50K", ">50K", None], N, p=[0.6, 0.3, 0.1]),
        }
    )
    df.to_csv(folder / "whole.csv", index=False)
    for i, part in enumerate(np.array_split(np.arange(N), 3)):
        df.iloc[part].to_csv(folder / f"part-{i}.csv", index=False)
    (folder / "key.txt").write_bytes(bytes(range(32)))
    return folder


@pytest.fixture
def small_leaves(monkeypatch):
    """Leaves of at most 400 records: several top cuts and output partitions."""
    monkeypatch.setitem(mondrian_dask.__kwdefaults__, "max_rows", 400)


def _run(client, *args: object) -> None:
    extra = ["--engine", "dask", "--scheduler", client.scheduler.address]
    result = CliRunner().invoke(cli, ["anonymize", *map(str, args), *extra])
    assert result.exit_code == 0, result.output


def _rows(df: pd.DataFrame) -> Counter:
    return Counter(map(tuple, df.astype(str).to_numpy().tolist()))


def _read(path: Path, sep: str = ",") -> pd.DataFrame:
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def pandas_release(files, tmp_path_factory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("pandas") / "p.csv"
    result = CliRunner().invoke(cli, ["anonymize", str(files / "whole.csv"), "-o", str(out), *ARGS])
    assert result.exit_code == 0, result.output
    return _read(out)


def _outputs_hold_the_pandas_release(client, files, pandas_release, tmp_path, names):
    for name in names:
        _run(
            client,
            files / "part-*.csv",
            "-o",
            tmp_path / name,
            *ARGS,
            "--report",
            tmp_path / f"{name}.json",
        )
    for name in names:
        if name.endswith(".parquet"):
            folder = tmp_path / name
            assert folder.is_dir() and len(list(folder.glob("part.*.parquet"))) > 1
            got = pd.read_parquet(folder).fillna("")  # pandas reads the folder as one table
            got = got[pandas_release.columns]
        else:
            got = _read(tmp_path / name, "\t" if name.endswith(".tsv") else ",")
        assert _rows(got) == _rows(pandas_release), name
        report = (tmp_path / f"{name}.json").read_text()
        assert '"gcp"' in report and "serial" not in report
    # nothing but the outputs and their reports (no part files or staging folders left)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [n for name in names for n in (name, name + ".json")]
    )


def test_csv_and_parquet_outputs_hold_the_pandas_release(
    client, files, pandas_release, small_leaves, tmp_path
):
    _outputs_hold_the_pandas_release(
        client, files, pandas_release, tmp_path, ["d.csv", "d.parquet"]
    )


@pytest.mark.slow
def test_tsv_and_gzip_outputs_hold_the_pandas_release(
    client, files, pandas_release, small_leaves, tmp_path
):
    _outputs_hold_the_pandas_release(client, files, pandas_release, tmp_path, ["d.tsv", "d.csv.gz"])


def test_streamed_text_is_the_pandas_writers_bytes(client, tmp_path):
    df = pd.DataFrame(
        {
            "a": ["x", 'say "hi"', "1,2", None, "", "z", "w"],
            "b": [1.5, np.nan, 3.0, 4.25, 1e-9, 2.0, 7.0],
            "c": [1, 2, 3, 4, 5, 6, 7],
        }
    )
    lazy = dd.from_pandas(df, npartitions=3)
    lazy = dd.concat([lazy, dd.from_pandas(df.iloc[:0], npartitions=1)])  # an empty part
    for name, sep in (("x.csv", None), ("x.tsv", None), ("x.txt", ";")):
        tab_io.write_microdata(df, tmp_path / f"want-{name}", sep=sep)
        written = tab_io.write_microdata_dask(lazy, tmp_path / name, sep=sep, classes=["c"])
        assert (tmp_path / name).read_bytes() == (tmp_path / f"want-{name}").read_bytes()
        assert written == {"rows": 7, "classes": 7, "smallest_class": 1}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_failing_write_leaves_nothing(client, files, small_leaves, tmp_path, monkeypatch):
    real = tab_io._write_part

    def disk_full(pdf, path, header, *args):
        if not header:  # the first part is written, a later one fails
            raise OSError(28, "No space left on device")
        return real(pdf, path, header, *args)

    monkeypatch.setattr(tab_io, "_write_part", disk_full)
    for name in ("t.csv", "t.parquet"):
        result = CliRunner().invoke(
            cli,
            [
                "anonymize",
                str(files / "part-*.csv"),
                "-o",
                str(tmp_path / name),
                "--report",
                str(tmp_path / f"{name}.json"),
                *ARGS,
                "--engine",
                "dask",
                "--scheduler",
                client.scheduler.address,
            ],
        )
        assert result.exit_code == 2, result.output
        assert "No space left" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_existing_parquet_output_is_refused_before_reading(client, files, tmp_path):
    (tmp_path / "o.parquet").write_bytes(b"old")
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(files / "nothing-*.csv"), "-o", str(tmp_path / "o.parquet"), *ARGS],
    )
    assert result.exit_code == 2
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(files / "whole.csv"),
            "-o",
            str(tmp_path / "o.parquet"),
            *ARGS,
            "--engine",
            "dask",
            "--scheduler",
            client.scheduler.address,
        ],
    )
    assert result.exit_code == 2 and "never overwrites" in result.output
    assert (tmp_path / "o.parquet").read_bytes() == b"old"


def test_a_key_file_repeats_the_bytes(client, files, small_leaves, tmp_path):
    key = ["--key-file", files / "key.txt"]
    for name in ("a.csv", "b.csv"):
        _run(client, files / "part-*.csv", "-o", tmp_path / name, *ARGS, *key)
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def _position_hits(a: np.ndarray, b: np.ndarray) -> int:
    m = min(a.size, b.size)
    return int((a[:m] == b[:m]).sum())


def test_attack_two_dask_releases_joined_by_position_do_not_link(
    client, files, small_leaves, tmp_path
):
    """Made as a user makes them (defaults, no key file): twice with k=5, once with k=10."""
    runs = {"a": ARGS, "b": ARGS, "k10": ["10" if a == "5" else a for a in ARGS]}
    serial = {}
    for name, args in runs.items():
        _run(client, files / "part-*.csv", "-o", tmp_path / f"{name}.csv", *args)
        serial[name] = _read(tmp_path / f"{name}.csv")["serial"].astype(int).to_numpy()
        assert sorted(serial[name]) == list(range(N))
        # the published order says nothing about the input order
        rho = np.corrcoef(np.arange(N), np.argsort(np.argsort(serial[name])))[0, 1]
        assert abs(rho) < 0.1
    assert serial["a"].tolist() != serial["b"].tolist()  # no key file: a fresh order
    assert _position_hits(serial["a"], serial["b"]) <= CHANCE_HITS
    assert _position_hits(serial["a"], serial["k10"]) <= CHANCE_HITS


def test_attack_one_key_two_tables_do_not_share_output_blocks(
    client, files, small_leaves, tmp_path
):
    """One key file, two versions of a table that differ only outside the QIs (a corrected
    income): the same QIs cut the same tree, so were the leaf order bound to the tree
    alone, each output block (partition) would hold the same people in both releases."""
    changed = tmp_path / "changed"
    changed.mkdir()
    for i in range(3):
        part = pd.read_csv(files / f"part-{i}.csv", dtype=str, keep_default_na=False)
        part.loc[part.index[:10], "income"] = ">50K"
        part.to_csv(changed / f"part-{i}.csv", index=False)
    key = ["--key-file", files / "key.txt"]
    blocks = []
    for name, source in (("a", files), ("b", changed)):
        _run(client, source / "part-*.csv", "-o", tmp_path / f"{name}.csv", *ARGS, *key)
        serial = _read(tmp_path / f"{name}.csv")["serial"].astype(int).to_numpy()
        blocks.append(set(serial[: N // 3].tolist()))
    shared = len(blocks[0] & blocks[1]) / (N // 3)
    assert shared < 0.6, shared  # bound to the tree: 0.86; leaves dealt independently: ~1/3


def test_parquet_folder_parts_share_one_schema(client, tmp_path):
    """A part with no rows, or whose text column holds only missing values, is still
    written with the text column as strings, so the folder reads back as one table."""
    df = pd.DataFrame({"a": ["x", "y", None, None], "b": [1, 2, 3, 4], "c": ["p", "q", "r", "s"]})
    lazy = dd.concat(
        [dd.from_pandas(df, npartitions=2), dd.from_pandas(df.iloc[:0], npartitions=1)]
    )
    written = tab_io.write_microdata_dask(lazy, tmp_path / "o.parquet", classes=["b"])
    assert written["rows"] == 4 and len(list((tmp_path / "o.parquet").iterdir())) == 3
    back = pd.read_parquet(tmp_path / "o.parquet").sort_values("b").reset_index(drop=True)
    assert back["a"].tolist()[:2] == ["x", "y"] and back["a"].isna().tolist()[2:] == [True] * 2
    assert back["b"].tolist() == [1, 2, 3, 4] and back["c"].tolist() == ["p", "q", "r", "s"]


def test_writer_bad_arguments_are_input_errors(client, tmp_path):
    from structanon.errors import InputError

    lazy = dd.from_pandas(pd.DataFrame({"a": [1, 2]}), npartitions=1)
    for data, path, kwargs, match in (
        (pd.DataFrame({"a": [1]}), tmp_path / "o.csv", {}, "Dask DataFrame"),
        (lazy, 5, {}, "file path"),
        (lazy, tmp_path / "o.csv", {"sep": ";;"}, "one character"),
        (lazy, tmp_path / "o.csv", {"classes": ["b"]}, "'b'"),
        (lazy, tmp_path / "o.csv", {"classes": "a"}, "list of names"),
    ):
        with pytest.raises(InputError, match=match):
            tab_io.write_microdata_dask(data, path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_a_written_table_that_fails_its_check_exits_4_and_leaves_nothing(
    client, files, tmp_path, monkeypatch
):
    real = tab_io.write_microdata_dask

    def short(*args, **kwargs):
        return dict(real(*args, **kwargs), rows=1)

    monkeypatch.setattr(tab_io, "write_microdata_dask", short)
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(files / "part-*.csv"),
            "-o",
            str(tmp_path / "o.csv"),
            *ARGS,
            "--engine",
            "dask",
            "--scheduler",
            client.scheduler.address,
        ],
    )
    assert result.exit_code == 4, result.output
    assert "written table holds 1 records" in result.output
    assert list(tmp_path.iterdir()) == []
