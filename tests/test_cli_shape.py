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
