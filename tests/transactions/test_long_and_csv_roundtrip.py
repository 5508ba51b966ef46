"""Long CSV round trips (empty baskets, quoted items) and long DataFrames (duplicate
columns, categorical items, mixed transaction ids)."""

from __future__ import annotations

import csv
import re
from collections import Counter

import pandas as pd
import pytest
from click.testing import CliRunner

import transactions
from structanon.errors import InputError
from transactions.cli import cli
from transactions.io import read_transaction_lists, read_transactions, write_transactions

AWKWARD = [
    {"a,b", 'say "hi"', "line\nbreak"},
    set(),
    {"ice cream", "tab\there", '"'},
    set(),
    {","},
    {"plain", "two  spaces"},
    set(),
]


def _csv_baskets(path, sep):
    """The baskets of a long CSV read with the csv module, in order of first tid."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter=sep))
    assert rows[0] == ["tid", "item"]
    baskets: dict[str, set[str]] = {}
    for tid, item in rows[1:]:
        basket = baskets.setdefault(tid, set())
        if item:
            basket.add(item)
    return list(baskets.values()), rows[1:]


@pytest.mark.parametrize(("name", "sep"), [("x.csv", ","), ("x.tsv", "\t")])
def test_csv_round_trip_keeps_empty_baskets_and_awkward_items(tmp_path, name, sep):
    path = tmp_path / name
    assert write_transactions(AWKWARD, path) == len(AWKWARD)
    baskets, rows = _csv_baskets(path, sep)
    assert baskets == AWKWARD
    # one row per item, and one row with an empty item per empty basket
    assert len(rows) == sum(len(t) for t in AWKWARD) + sum(1 for t in AWKWARD if not t)
    assert read_transactions(path) == AWKWARD
    lists, stats = read_transaction_lists(path)
    assert stats["transactions"] == 7 and stats["empty_transactions"] == 3
    assert all("" not in t for t in lists)


def test_csv_round_trip_of_a_release_with_empty_baskets(tmp_path):
    release = transactions.k_anonymize(
        [set(), {"b"}, set(), {"a"}, {"a"}, {"b"}], 2, measures=False
    ).data
    assert Counter(map(frozenset, release)) == Counter(
        {frozenset(): 2, frozenset("a"): 2, frozenset("b"): 2}
    )
    path = tmp_path / "r.csv"
    assert write_transactions(release, path) == 6
    assert _csv_baskets(path, ",")[0] == [set(t) for t in release]
    assert read_transactions(path) == [set(t) for t in release]


def test_other_formats_still_round_trip(tmp_path):
    data = [{"a", "b"}, set(), {"c"}]
    for name in ("x.dat", "x.jsonl"):
        assert write_transactions(data, tmp_path / name) == 3
        assert read_transactions(tmp_path / name) == data
    assert write_transactions(AWKWARD, tmp_path / "y.jsonl") == len(AWKWARD)
    assert read_transactions(tmp_path / "y.jsonl") == AWKWARD
    with pytest.raises(InputError, match="separator"):
        write_transactions([{"a,b"}], tmp_path / "y.dat")
    assert not (tmp_path / "y.dat").exists()


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("", "empty string"),
        (" lead", "white space"),
        ("trail ", "white space"),
        ("a\rb", "carriage"),
    ],
)
def test_csv_writer_refuses_items_it_cannot_give_back(tmp_path, item, message):
    path = tmp_path / "x.csv"
    with pytest.raises(InputError, match=message) as exc:
        write_transactions([{"a"}, {"b", item}], path)
    assert exc.value.row == 1
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_cli_count_matches_the_written_csv(tmp_path):
    source = tmp_path / "in.dat"
    source.write_text("a\n\na\n\nb\nb\n")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(
        cli, ["k-anonymize", str(source), "-k", "2", "-o", str(out), "--no-measures"]
    )
    assert result.exit_code == 0, result.output
    printed = int(re.search(r"([\d,]+) transactions written to", result.output)[1])
    baskets, _ = _csv_baskets(out, ",")
    assert printed == len(baskets) == 6
    assert sum(1 for t in baskets if not t) == 2
    assert len(read_transactions(out)) == 6


def test_duplicate_column_names_are_named():
    df = pd.DataFrame([[1, "a"], [1, "b"], [2, "a"], [2, "b"]], columns=["x", "x"])
    with pytest.raises(InputError, match="duplicate column names: 'x'") as exc:
        transactions.from_long(df)
    assert exc.value.column == "x"
    with pytest.raises(InputError, match="duplicate column names: 'x'"):
        transactions.km_anonymize(df, k=2, m=1, measures=False)
    named = pd.DataFrame([[1, "a", "b"]], columns=["tid", "item", "tid"])
    with pytest.raises(InputError, match="duplicate column names: 'tid'"):
        transactions.from_long(named, transaction="tid", item="item")


@pytest.mark.parametrize(
    ("values", "unused", "plain"),
    [
        (["x", "y", "x", "y", "x", "x"], ["z", "w"], str),
        ([5, 6, 5, 6, 5, 5], [7, 8], int),
    ],
)
def test_categorical_items_are_their_observed_values(values, unused, plain):
    tid = [1, 1, 2, 2, 3, 4]
    cat = pd.Categorical(values, categories=sorted(set(values)) + unused)
    df = pd.DataFrame({"tid": tid, "item": cat})
    expected = transactions.from_long(
        pd.DataFrame({"tid": tid, "item": [plain(v) for v in values]})
    )
    assert transactions.from_long(df) == expected
    assert set().union(*expected) == set(values)
    release = transactions.k_anonymize(df, 2, measures=False).data
    assert len(release) == 4 and None not in release
    assert Counter(map(frozenset, release)) == Counter(map(frozenset, expected))
    assert set().union(*release) == set(values)
    assert not set().union(*release) & set(unused)


def test_mixed_transaction_ids_are_refused():
    df = pd.DataFrame({"tid": [1, "1", 2, 2], "item": ["a", "b", "a", "b"]})
    with pytest.raises(InputError, match="column 'tid': transaction ids mix") as exc:
        transactions.from_long(df, transaction="tid", item="item")
    assert exc.value.row == 1 and exc.value.value == "'1'"  # the index label
    with pytest.raises(InputError, match="transaction ids mix"):
        transactions.k_anonymize(df, 2, measures=False)
    as_text = df.astype({"tid": str})
    assert transactions.from_long(as_text) == [{"a", "b"}, {"a", "b"}]
    ints = pd.DataFrame({"tid": [1, 1, 2, 2], "item": ["a", "b", "a", "b"]})
    assert transactions.from_long(ints) == [{"a", "b"}, {"a", "b"}]
