"""One shape for the five Python APIs: every package has ``anonymize(data, k, ...)``, the
function its ``anonymize`` command runs, and every anonymizer takes ``seed`` (default 0),
``key`` and ``measures`` the same way."""

from __future__ import annotations

import inspect

import networkx as nx
import pytest
from click.testing import CliRunner

import graphs
import location
import querylogs
import tabular
import transactions
from structanon.cli import main
from structanon.release import Release

PACKAGES = (tabular, transactions, location, graphs, querylogs)


def _anonymizers():
    """Every public function of the five packages that returns a release."""
    for package in PACKAGES:
        for name in package.__all__:
            fn = getattr(package, name)
            if inspect.isfunction(fn) and "Release" in str(inspect.signature(fn).return_annotation):
                yield f"{package.__name__}.{name}", fn


def test_every_package_has_anonymize_with_k():
    for package in PACKAGES:
        assert "anonymize" in package.__all__, package.__name__
        params = inspect.signature(package.anonymize).parameters
        assert "k" in params, package.__name__


@pytest.mark.parametrize(
    "name, fn", list(_anonymizers()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_seed_key_and_measures_are_taken_the_same_way(name, fn):
    params = inspect.signature(fn).parameters
    assert params["seed"].default == 0, name
    for option, default in (("key", None), ("measures", True)):
        assert params[option].kind is inspect.Parameter.KEYWORD_ONLY, (name, option)
        assert params[option].default is default, (name, option)


def test_the_anonymizers_found_are_the_known_ones():
    # the scan above must see every anonymizer (a new one without a return annotation
    # would escape it)
    found = {name for name, _ in _anonymizers()}
    assert {
        "tabular.anonymize",
        "tabular.anatomize",
        "tabular.slice_table",
        "tabular.pram",
        "tabular.add_noise",
        "tabular.rank_swap",
        "tabular.recode",
        "tabular.microaggregate",
        "transactions.anonymize",
        "transactions.disassociate",
        "transactions.k_anonymize",
        "transactions.band_matrix",
        "location.anonymize",
        "graphs.anonymize",
        "querylogs.anonymize",
    } <= found


def _cli_and_api(tmp_path, package, source, out_name, call):
    """The command's output bytes and those of the package's ``anonymize`` under the same
    key and seed."""
    key = tmp_path / "key"
    key.write_bytes(b"0123456789abcdef-api-shape")
    cli_out = tmp_path / f"cli-{out_name}"
    result = CliRunner().invoke(
        main,
        [package.__name__, "anonymize", str(source), "-k", "3", "-o", str(cli_out)]
        + ["--seed", "2", "--key-file", str(key), "--no-measures", "--quiet"],
    )
    assert result.exit_code == 0, result.output
    release = call(key)
    assert isinstance(release, Release)
    api_out = release.write(tmp_path / f"api-{out_name}")
    return cli_out.read_bytes(), api_out.read_bytes()


def test_transactions_anonymize_is_what_its_command_runs(tmp_path):
    source = tmp_path / "b.dat"
    source.write_text("\n".join(["1 2 3", "1 2", "2 3 4", "1 3", "2 4", "1 2 4"] * 4) + "\n")
    cli, api = _cli_and_api(
        tmp_path,
        transactions,
        source,
        "b.dat",
        lambda key: transactions.anonymize(
            transactions.read_transactions(source), k=3, m=2, seed=2, key=key, measures=False
        ),
    )
    assert cli == api


def test_location_anonymize_is_what_its_command_runs(tmp_path):
    source = tmp_path / "fixes.csv"
    location.synthetic_log(400, 12, seed=3).to_csv(source, index=False)
    cli, api = _cli_and_api(
        tmp_path,
        location,
        source,
        "l.csv",
        lambda key: location.anonymize(
            location.read_fixes(source), k=3, seed=2, key=key, measures=False
        ),
    )
    assert cli == api


def test_graphs_anonymize_is_what_its_command_runs(tmp_path):
    source = tmp_path / "g.txt"
    nx.write_edgelist(nx.barabasi_albert_graph(80, 2, seed=4), source, data=False)
    cli, api = _cli_and_api(
        tmp_path,
        graphs,
        source,
        "g.txt",
        lambda key: graphs.anonymize(
            graphs.read_graph(source), k=3, seed=2, key=key, measures=False
        ),
    )
    assert cli == api
