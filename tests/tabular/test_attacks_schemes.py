"""Attacks on Anatomy and slicing releases made the way a user makes them.

The attacker holds the published tables, knows the software and every printed parameter (the
seed included) and may hold several releases of one input.  Bucket ids, row order and the
rows of a sliced table must carry nothing: two releases joined by position, bucket ids
against the bucket's contents, published order against input order, and the columns of one
sliced row taken as one record all do no better than chance.  The truth is known to the test
through a ``serial`` column published as a quasi-identifier (so each row's record is known)
or through the publisher's private ``source_index``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from click.testing import CliRunner
from scipy.stats import spearmanr

import tabular
from tabular.cli import cli

BUNDLED = Path(tabular.__file__).resolve().parent / "data"
# a positional pairing of two independent orders hits the same record ~Poisson(1) times
CHANCE_HITS = 8


def _input_with_serial(directory: Path) -> tuple[Path, pd.DataFrame]:
    df = pd.read_csv(BUNDLED / "adult_sample.csv", sep=";").head(2000)
    df.insert(0, "serial", np.arange(len(df)))
    path = directory / "adult.csv"
    df.to_csv(path, sep=";", index=False)
    return path, df


def _order_correlation(table: pd.DataFrame) -> float:
    return abs(spearmanr(np.arange(len(table)), table["serial"]).statistic)


def _chance(table: pd.DataFrame) -> float:
    """Four standard deviations of the rank correlation under chance: rows come in buckets
    (listed by a random id), so the buckets, not the rows, are the independent units."""
    return 4 / np.sqrt(table["bucket"].nunique())


def _cli(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output


def test_two_anatomize_releases_joined_by_position_are_at_chance(tmp_path):
    source, _ = _input_with_serial(tmp_path)
    tables = []
    for i in range(2):
        out, st = tmp_path / f"qit{i}.csv", tmp_path / f"st{i}.csv"
        _cli(
            ["anatomize", str(source), "--sep", ";", "--qi", "serial,sex,age"]
            + ["--sensitive", "occupation", "-l", "4", "-o", str(out)]
            + ["--sensitive-output", str(st), "--quiet"]
        )
        tables.append(pd.read_csv(out, sep=";"))
    same = (tables[0]["serial"].to_numpy() == tables[1]["serial"].to_numpy()).sum()
    assert same <= CHANCE_HITS
    # the bucket ids of one record in the two releases are unrelated
    ids = tables[0].set_index("serial")["bucket"], tables[1].set_index("serial")["bucket"]
    joined = pd.concat(ids, axis=1, keys=["a", "b"])
    assert abs(spearmanr(joined["a"], joined["b"]).statistic) < _chance(tables[0])
    # published order says nothing about input order
    assert _order_correlation(tables[0]) < _chance(tables[0])


def test_anatomy_bucket_ids_say_nothing_about_the_sensitive_values():
    # with buckets numbered in dealing order, the first ids would all hold the first value
    df = pd.read_csv(BUNDLED / "adult_sample.csv", sep=";")
    release = tabular.anatomize(df, ["sex", "age", "race"], "occupation", l=4, seed=0)
    st = release.sensitive_table
    first = sorted(df["occupation"].unique())[0]
    holds = st.assign(first=st["occupation"] == first).groupby("bucket")["first"].any()
    assert abs(spearmanr(holds.index, holds.to_numpy()).statistic) < 4 / np.sqrt(holds.size)
    # and the QI rows of one bucket are not its input neighbours
    qit = release.data.assign(source=np.asarray(release.source_index))
    spread = qit.groupby("bucket")["source"].agg(lambda s: s.max() - s.min())
    assert spread.median() > len(df) / 10


def test_sliced_rows_are_not_records():
    # serial and a copy of it in two different column groups: a row whose two values agree
    # is one whose groups came from one record, which random permutation makes rare
    rng = np.random.default_rng(0)
    n = 1200
    df = pd.DataFrame(
        {
            "serial": np.arange(n),
            "copy": np.arange(n),
            "s": rng.permutation(np.resize(list("abcdef"), n)),
        }
    )
    release = tabular.slice_table(
        df, ["serial", "copy"], "s", l=3, columns=[["serial"], ["copy"], ["s"]], seed=0
    )
    data = release.data
    agree = int((data["serial"] == data["copy"]).sum())
    n_buckets = release.info["n_buckets"]
    # each bucket's permutation has Poisson(1) fixed points: about one per bucket
    assert agree <= n_buckets + 4 * np.sqrt(n_buckets)
    assert agree < n / 2


def test_two_slice_releases_joined_by_position_are_at_chance(tmp_path):
    source, _ = _input_with_serial(tmp_path)
    tables = []
    for i in range(2):
        out = tmp_path / f"sliced{i}.csv"
        _cli(
            ["slice", str(source), "--sep", ";", "--qi", "serial,sex,age,education"]
            + ["--sensitive", "occupation", "-l", "4", "-o", str(out), "--quiet"]
        )
        tables.append(pd.read_csv(out, sep=";"))
    same = (tables[0]["serial"].to_numpy() == tables[1]["serial"].to_numpy()).sum()
    assert same <= CHANCE_HITS
    assert _order_correlation(tables[0]) < _chance(tables[0])
