"""Attacks on tabular releases made the way a user makes them (issue 10, finding 2).

The attacker holds the published table, knows the software and every printed parameter
(the seed included) and may hold several releases of the same input.  Row order used to be
``default_rng(seed).permutation(n)``: replaying it restored the input order, and two
releases of one table were row-aligned.  Each test runs the attack and asserts it does no
better than chance.  The truth (which input row each published row came from) is known to
the test through a ``serial`` column the attack never reads (CLI) or through the
publisher's private ``release.source_index`` (API).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tabular
from structanon import Hierarchy
from structanon.models import KAnonymity
from tabular.cli import DEMO_QIS as QIS
from tabular.cli import cli
from tests._support import shared_file

BUNDLED = Path(tabular.__file__).resolve().parent / "data"

SEEDS = range(1001)
# a positional pairing of two independent orders hits the same record ~Poisson(1) times
CHANCE_HITS = 8


def _input_with_serial(directory: Path, source: Path) -> tuple[Path, pd.DataFrame]:
    df = pd.read_csv(source, sep=";")
    df.insert(0, "serial", np.arange(len(df)))
    df.insert(1, "name", [f"person{i}" for i in range(len(df))])
    path = directory / "adult.csv"
    df.to_csv(path, sep=";", index=False)
    return path, df


def _cli_release(path: Path, out: Path, *extra: str) -> pd.DataFrame:
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(path),
            "--sep",
            ";",
            "--qi",
            ",".join(QIS),
            "--hierarchy-dir",
            str(BUNDLED),
            "-k",
            "5",
            "-o",
            str(out),
            "--quiet",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return pd.read_csv(out, sep=";")


def _max_rank_correlation(true_positions: np.ndarray) -> float:
    """Largest |Spearman| between the true input order and each replayed seed permutation.

    Both are permutations of 0..m-1 (mean (m-1)/2, sum of squared deviations
    m (m^2-1)/12), so Spearman's rho is exact in integer arithmetic.
    """
    m = true_positions.size
    assert m >= 100, "no published rows to attack"
    truth = np.argsort(np.argsort(true_positions)).astype(np.int64)
    offset = m * ((m - 1) / 2) ** 2
    scale = m * (m * m - 1) / 12.0
    return max(
        abs(int((np.random.default_rng(seed).permutation(m) * truth).sum()) - offset) / scale
        for seed in SEEDS
    )


def _same_source_at_same_position(a: np.ndarray, b: np.ndarray) -> int:
    m = min(a.size, b.size)
    return int((a[:m] == b[:m]).sum())


@pytest.fixture(scope="module")
def adult_file(tmp_path_factory):
    return _input_with_serial(tmp_path_factory.mktemp("adult"), BUNDLED / "adult_sample.csv")


@pytest.fixture(scope="module")
def cli_releases(adult_file, tmp_path_factory):
    """Default CLI releases of one table: two with the DM* metric, one with the loss metric."""
    path, _ = adult_file
    out = tmp_path_factory.mktemp("releases")
    return {
        name: _cli_release(path, out / f"{name}.csv", *extra)
        for name, extra in {
            "dm": (),
            "dm_again": (),
            "loss": ("--metric", "loss"),
            "ids": ("--identifier", "name"),
            "ids_again": ("--identifier", "name"),
        }.items()
    }


def test_replaying_seed_permutations_does_not_restore_the_cli_input_order(cli_releases):
    published = cli_releases["dm"]
    assert _max_rank_correlation(published["serial"].to_numpy()) < 0.1


def test_replaying_seed_permutations_does_not_restore_the_api_input_order(
    adult_sample, adult_sample_hierarchies
):
    release = tabular.anonymize(
        adult_sample, adult_sample_hierarchies, None, [KAnonymity(5)], seed=0, measures=False
    )
    assert _max_rank_correlation(np.asarray(release.source_index)) < 0.1


def test_full_adult_order_is_not_restored_by_any_seed():
    folder = shared_file("adult/adult.csv").parent
    df = pd.read_csv(folder / "adult.csv", sep=";")
    hierarchies = {c: Hierarchy.from_csv(folder / f"adult_hierarchy_{c}.csv", name=c) for c in QIS}
    release = tabular.anonymize(df, hierarchies, None, [KAnonymity(5)], seed=0, measures=False)
    assert _max_rank_correlation(np.asarray(release.source_index)) < 0.1


def test_two_default_cli_releases_are_not_row_aligned(cli_releases):
    dm, loss, again = (cli_releases[n]["serial"].to_numpy() for n in ("dm", "loss", "dm_again"))
    assert _same_source_at_same_position(dm, loss) <= CHANCE_HITS
    assert _same_source_at_same_position(dm, again) <= CHANCE_HITS


def test_two_api_releases_with_different_metrics_are_not_row_aligned(
    adult_sample, adult_sample_hierarchies
):
    sources = [
        np.asarray(
            tabular.anonymize(
                adult_sample,
                adult_sample_hierarchies,
                None,
                [KAnonymity(5)],
                metric=metric,
                seed=0,
                measures=False,
            ).source_index
        )
        for metric in ("discernibility", "loss")
    ]
    assert _same_source_at_same_position(*sources) <= CHANCE_HITS


@pytest.mark.parametrize("algorithm", ["mondrian", "datafly"])
def test_every_algorithm_publishes_rows_in_a_secret_order(
    algorithm, adult_sample, adult_sample_hierarchies
):
    sources = [
        np.asarray(
            tabular.anonymize(
                adult_sample,
                adult_sample_hierarchies,
                None,
                [KAnonymity(5)],
                algorithm=algorithm,
                seed=0,
                suppression_limit=0.02,
                measures=False,
            ).source_index
        )
        for _ in range(2)
    ]
    assert _same_source_at_same_position(*sources) <= CHANCE_HITS
    assert _max_rank_correlation(sources[0]) < 0.1


def test_pseudonyms_of_two_keyless_releases_do_not_link_by_position(cli_releases):
    a, b = cli_releases["ids"], cli_releases["ids_again"]
    assert not set(a["name"]) & set(b["name"])  # independent keys: no value links
    pairs = pd.DataFrame({"a": a["name"], "b": b["name"]}).dropna()
    truth_a = dict(zip(a["name"], a["serial"]))
    truth_b = dict(zip(b["name"], b["serial"]))
    linked = int((pairs["a"].map(truth_a) == pairs["b"].map(truth_b)).sum())
    assert linked <= CHANCE_HITS


def test_a_key_file_reproduces_the_release_byte_for_byte_and_only_with_that_key(
    adult_file, tmp_path
):
    path, _ = adult_file
    for name, content in (("one.key", "0" * 64), ("two.key", "1" * 64)):
        (tmp_path / name).write_text(content)
    keyed = [(tmp_path / f"{i}.csv") for i in range(4)]
    for out, key in zip(keyed, ("one.key", "one.key", "two.key", None)):
        _cli_release(path, out, *(("--key-file", str(tmp_path / key)) if key else ()))
    assert keyed[0].read_bytes() == keyed[1].read_bytes()
    assert keyed[0].read_bytes() != keyed[2].read_bytes()
    assert keyed[0].read_bytes() != keyed[3].read_bytes()
    serial = pd.read_csv(keyed[0], sep=";")["serial"].to_numpy()
    assert _max_rank_correlation(serial) < 0.1


def test_keyless_api_releases_differ_and_a_key_repeats_them(adult_sample, adult_sample_hierarchies):
    def run(**kw):
        return tabular.anonymize(
            adult_sample,
            adult_sample_hierarchies,
            None,
            [KAnonymity(5)],
            seed=0,
            measures=False,
            **kw,
        )

    assert not run().data.equals(run().data)
    pd.testing.assert_frame_equal(run(key=b"k" * 32).data, run(key=b"k" * 32).data)


def test_source_index_links_published_rows_to_the_input_and_is_never_published(
    adult_sample, adult_sample_hierarchies
):
    df = adult_sample.set_index(pd.Index([f"r{i}" for i in range(len(adult_sample))]))
    release = tabular.anonymize(
        df, adult_sample_hierarchies, "occupation", [KAnonymity(5)], seed=0, suppression_limit=0.02
    )
    assert len(release.source_index) == len(release.data)
    assert (
        df.loc[release.source_index, "occupation"].to_numpy()
        == release.data["occupation"].to_numpy()
    ).all()
    from structanon.report import format_summary

    for text in (repr(release), str(release.to_dict()), format_summary(release)):
        assert "source_index" not in text and "r17" not in text


def test_local_suppression_donors_are_not_the_last_input_rows_of_their_class():
    """Which members of a class give up their values to hide a lone record is secret.

    It used to be the class's last records in input order, so anyone who knew the input
    order (arrival, say) knew whose values were blanked.
    """
    from structanon import Hierarchy

    df = pd.DataFrame({"a": ["p"] * 30 + ["q"], "b": ["x"] * 30 + ["y"]})
    spec = {c: Hierarchy([[v, "*"] for v in sorted(df[c].unique())], name=c) for c in "ab"}
    donors = set()
    for _ in range(20):
        release = tabular.anonymize(
            df,
            spec,
            None,
            [KAnonymity(2)],
            suppression_limit=0.05,
            local_suppression=True,
            measures=False,
        )
        blank = (release.data[["a", "b"]] == "*").all(axis=1).to_numpy()
        assert blank.sum() == 2
        donors |= set(np.asarray(release.source_index)[blank]) - {30}
    assert len(donors) >= 5  # ~15 distinct of 30 expected; always {29} before


def test_the_key_file_never_appears_in_the_report(tmp_path):
    import hashlib

    from click.testing import CliRunner

    from tabular.cli import cli

    key = tmp_path / "release.key"
    key.write_text("00112233445566778899aabbccddeeff")
    data = Path(__file__).resolve().parents[2] / "tabular" / "data"
    out, report = tmp_path / "o.csv", tmp_path / "r.json"
    result = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(data / "adult_sample.csv"),
            "--sep",
            ";",
            "--qi",
            "sex,age",
            "--hierarchy-dir",
            str(data),
            "-k",
            "5",
            "--key-file",
            str(key),
            "-o",
            str(out),
            "--report",
            str(report),
            "--no-measures",
        ],
    )
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert hashlib.sha256(key.read_bytes()).hexdigest() not in text
    assert "release.key" not in json.dumps(json.loads(text)["provenance"]["inputs"])
