"""One shape for the five command lines: the same mistake gets the same words."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from structanon.cli import main

# what each anonymize command needs beside INPUT, -k and -o
EXTRA = {
    "tabular": ["--qi", "age", "--numeric", "age", "--algorithm", "mondrian"],
    "transactions": [],
    "location": [],
    "graphs": [],
    "querylogs": [],
}
SUFFIX = {
    "tabular": ".csv",
    "transactions": ".dat",
    "location": ".csv",
    "graphs": ".txt",
    "querylogs": ".tsv",
}


@pytest.mark.parametrize("package", sorted(EXTRA))
def test_the_same_mistake_gets_the_same_words(tmp_path, package):
    source = tmp_path / f"in{SUFFIX[package]}"
    source.write_text("placeholder\n")
    out = tmp_path / f"out{SUFFIX[package]}"

    def run(*args):
        command = [package, "anonymize", *map(str, args), "-o", str(out), *EXTRA[package]]
        return CliRunner().invoke(main, command)

    for args, words in (
        ((source, "-k", "0"), "error (InputError): -k must be an integer >= 1, got 0"),
        ((source, "-k", "2", "--seed", "-1"), "error (InputError): --seed must be an integer"),
        ((tmp_path / "missing.csv", "-k", "2"), "error (InputError): INPUT not found"),
    ):
        result = run(*args)
        assert result.exit_code == 2 and words in result.output, (package, args, result.output)
        assert not out.exists()


def test_k_above_the_population_gets_the_same_words(tmp_path):
    """Exit 3 with "k=K exceeds the number of <individuals> (N)" for every data type and
    engine (the Dask engines and location said "the log holds N distinct users, fewer
    than k=K")."""
    import networkx as nx
    import pandas as pd

    import graphs
    import location
    import querylogs
    import tabular
    import transactions
    from structanon.errors import InfeasibleError

    dd = pytest.importorskip("dask.dataframe")
    fixes = location.synthetic_log(300, 5, seed=1)
    log = querylogs.synthetic_log(5, 200, seed=1)
    table = pd.DataFrame({"age": range(5)})
    calls = {
        "records": lambda: tabular.anonymize(table, {"age": "numeric"}, k=9, algorithm="mondrian"),
        "records ": lambda: tabular.anonymize(
            dd.from_pandas(table, npartitions=2), {"age": "numeric"}, k=9, algorithm="mondrian"
        ),
        "transactions": lambda: transactions.km_anonymize([{1}, {2}], k=9, m=1),
        "users in the log": lambda: location.cloak(fixes, 9),
        "users in the log ": lambda: location.cloak(dd.from_pandas(fixes, npartitions=2), 9),
        "nodes": lambda: graphs.k_degree_anonymize(nx.cycle_graph(5), 9),
        "users in the log  ": lambda: querylogs.anonymize(log, 9),
    }
    for what, call in calls.items():
        with pytest.raises(InfeasibleError, match=rf"^k=9 exceeds the number of {what.strip()} \("):
            call()


def test_every_package_reads_and_writes_at_its_top_level():
    import graphs
    import location
    import querylogs
    import tabular
    import transactions

    pairs = {
        tabular: ("read_microdata", "write_microdata"),
        transactions: ("read_transactions", "write_transactions"),
        location: ("read_fixes", "write_cloaked"),
        graphs: ("read_graph", "write_graph"),
        querylogs: ("read_log", "write_log"),
    }
    for package, names in pairs.items():
        for name in names:
            assert callable(getattr(package, name)) and name in package.__all__, name


def _commands():
    """Every ``(package, command name, click command)`` of the five command lines."""
    import importlib

    import click

    from structanon.cli import PACKAGES

    for package in PACKAGES:
        group = importlib.import_module(f"{package}.cli").cli
        assert isinstance(group, click.Group)
        for name, command in group.commands.items():
            yield package, name, command


def _option(command, name):
    return next((p for p in command.params if p.name == name), None)


def _shape(option):
    choices = getattr(option.type, "choices", None)
    return (
        tuple(option.opts),
        tuple(option.secondary_opts),
        option.default,
        option.show_default,
        option.help,
        option.hidden,
        None if choices is None else tuple(choices),
    )


def test_encoding_and_on_bad_lines_have_one_shape():
    """``--encoding`` and ``--on-bad-lines`` have the same name, default, choices and help
    in every command that has them (read from the click commands), every command that reads
    a text input has ``--encoding``, and every command whose reader can drop bad lines has
    ``--on-bad-lines`` (default ``raise``)."""
    from click import Argument

    from structanon.cli_support import ENCODING_HELP, ON_BAD_LINES_HELP

    shapes = {"encoding": set(), "on_bad_lines": set()}
    with_bad_lines = set()
    for package, name, command in _commands():
        reads = any(isinstance(p, Argument) for p in command.params)
        encoding = _option(command, "encoding")
        assert (encoding is not None) == reads, (package, name)
        if encoding is not None:
            shapes["encoding"].add(_shape(encoding))
        bad_lines = _option(command, "on_bad_lines")
        if bad_lines is not None:
            shapes["on_bad_lines"].add(_shape(bad_lines))
            with_bad_lines.add((package, name))
    assert shapes["encoding"] == {(("--encoding",), (), "utf-8", True, ENCODING_HELP, False, None)}
    assert shapes["on_bad_lines"] == {
        (("--on-bad-lines",), (), "raise", True, ON_BAD_LINES_HELP, False, ("raise", "drop"))
    }
    assert with_bad_lines == {
        ("location", "anonymize"),
        ("location", "cloak"),
        ("location", "assess"),
        ("querylogs", "anonymize"),
        ("querylogs", "assess"),
        ("querylogs", "inspect"),
    }
