"""One shape for the five packages: Parquet error positions, output extensions and
messages that name CLI options."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from structanon.cli import main


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _query_log(n: int = 30) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "AnonID": [str(i % 6) for i in range(n)],
            "Query": [f"query {i % 3}" for i in range(n)],
            "QueryTime": [f"2006-03-01 10:{i:02d}:00" for i in range(n)],
        }
    )


# F15: a Parquet input has no header line: its errors name the 1-based row


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_querylogs_names_the_row_of_a_parquet_input(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    log = _query_log()
    log.loc[3, "AnonID"] = None  # the 4th row
    source = tmp_path / "q_na.parquet"
    log.to_parquet(source, index=False)
    result = _run("querylogs", "anonymize", source, "-k", "2", "-o", tmp_path / "o.tsv",
                  "--engine", engine)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "malformed row: user is empty" in result.stderr, result.stderr
    assert f"(file '{source}', row 4)" in result.stderr, result.stderr
    assert "to drop and count such rows instead" in result.stderr, result.stderr


def test_querylogs_drop_notice_counts_parquet_rows(tmp_path):
    log = _query_log(60)
    log.loc[3, "QueryTime"] = "not a time"
    source = tmp_path / "q.parquet"
    log.to_parquet(source, index=False)
    result = _run("querylogs", "assess", source, "--on-bad-lines", "drop", "--quiet")
    assert "warning: 1 bad row(s) of" in result.stderr, result.stderr
    assert "dropped (--on-bad-lines drop): row 4" in result.stderr, result.stderr


def test_querylogs_text_input_keeps_file_lines(tmp_path):
    log = _query_log()
    log.loc[3, "QueryTime"] = "not a time"
    source = tmp_path / "q.csv"
    log.to_csv(source, index=False)
    result = _run("querylogs", "anonymize", source, "-k", "2", "-o", tmp_path / "o.tsv")
    assert result.exit_code == 2 and "line 5)" in result.stderr, result.stderr


def test_tabular_names_the_row_of_a_parquet_input(tmp_path):
    table = pd.DataFrame({"age": [20.0 + i % 7 for i in range(30)], "city": ["c"] * 30})
    table.loc[3, "age"] = np.nan
    source = tmp_path / "t.parquet"
    table.to_parquet(source, index=False)
    result = _run("tabular", "anonymize", source, "-k", "2", "--qi", "age", "--numeric", "age",
                  "--algorithm", "mondrian", "-o", tmp_path / "o.csv")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert f"(file '{source}', column 'age', row 4)" in result.stderr, result.stderr


def test_location_drop_notice_counts_parquet_rows(tmp_path):
    import location

    fixes = location.synthetic_log(300, 5, seed=1)
    fixes["lat"] = fixes["lat"].astype(float)
    fixes.loc[5, "lat"] = np.nan  # the 6th row
    source = tmp_path / "geo_na.parquet"
    fixes.to_parquet(source, index=False)
    result = _run("location", "anonymize", source, "-k", "2", "-o", tmp_path / "o.csv")
    assert result.exit_code == 2 and "row 6)" in result.stderr, result.stderr
    result = _run("location", "anonymize", source, "-k", "2", "-o", tmp_path / "o.csv",
                  "--on-bad-lines", "drop")  # fmt: skip
    assert "warning: 1 bad row(s) of" in result.stderr, result.stderr
    assert "dropped (--on-bad-lines drop): row 6" in result.stderr, result.stderr


# F14: the same spellings of a format in every package that writes it


def test_querylogs_writes_pq_and_tab(tmp_path):
    source = tmp_path / "q.tsv"
    _query_log(60).to_csv(source, sep="\t", index=False)
    for name in ("out.pq", "out.tab"):
        out = tmp_path / name
        result = _run("querylogs", "anonymize", source, "-k", "2", "-o", out, "--quiet")
        assert result.exit_code in (0, 3), result.output  # 3: nothing publishable
        assert "must end in" not in result.output
    result = _run("querylogs", "synthesize", "--users", "5", "--lines", "40", "-o",
                  tmp_path / "s.pq")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert pd.read_parquet(tmp_path / "s.pq").shape[0] == 40
    # a .pq input is read as Parquet
    result = _run("querylogs", "assess", tmp_path / "s.pq", "--quiet")
    assert result.exit_code == 0, result.output


def test_refusals_name_the_extensions_accepted(tmp_path):
    from structanon.io import TABLE_OUTPUT_EXTENSIONS
    from tabular.io import TABLE_EXTENSIONS

    assert set(TABLE_OUTPUT_EXTENSIONS) <= set(TABLE_EXTENSIONS)
    basket = tmp_path / "b.dat"
    basket.write_text("".join(f"{i % 4} {i % 5 + 4}\n" for i in range(20)))
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{i} {(i + 1) % 8}\n" for i in range(8)))
    fixes = tmp_path / "l.csv"
    fixes.write_text("user,time,lat,lon\nu1,2024-01-01T10:00:00,40,116\n")
    cases = [
        (("transactions", "anonymize", basket, "-k", "2"), "out.pq", ".dat, .txt"),
        (("graphs", "anonymize", graph, "-k", "2"), "out.pq", ".edgelist"),
        (("location", "anonymize", fixes, "-k", "2"), "out.txt", ".csv, .tsv, .tab, .parquet, .pq"),
    ]
    for args, name, named in cases:
        result = _run(*args, "-o", tmp_path / name)
        assert result.exit_code == 2, result.output
        assert "--output must end in" in result.stderr and named in result.stderr, result.stderr


# F16: graphs compare names no option it lacks, and --no-relabel


def test_graphs_compare_speaks_in_cli_terms(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{i} {(i + 1) % 8}\n" for i in range(8)))
    other = tmp_path / "other.dat"
    other.write_text(graph.read_text())
    result = _run("graphs", "compare", graph, other)
    assert result.exit_code == 2, result.output
    assert "ANONYMIZED" in result.stderr and ".edgelist" in result.stderr, result.stderr
    assert "give one of (" not in result.stderr and "--format" not in result.stderr
    bigger = tmp_path / "g2.txt"
    bigger.write_text(graph.read_text() + "8 9\n")
    result = _run("graphs", "compare", graph, bigger)
    assert result.exit_code == 2, result.output
    assert "(anonymize with --no-relabel)" in result.stderr, result.stderr
    assert "relabel=False" not in result.stderr


# the Python API names a bad row of a DataFrame by its index label, in every package


def test_api_errors_name_a_dataframe_row_by_its_index_label():
    import location
    import tabular
    import transactions
    from structanon.errors import InputError

    labels = [10, 11, 0, 13, 14, 15]  # the bad value sits at position 2, label 0
    table = pd.DataFrame({"age": [30.0, 31.0, np.nan, 33.0, 34.0, 35.0]}, index=labels)
    fixes = location.synthetic_log(6, 2, seed=1).set_axis(labels)
    fixes["lat"] = fixes["lat"].astype(float)
    fixes.loc[0, "lat"] = np.nan
    long = pd.DataFrame({"tid": [1, 1, 2, 2, 3, 3], "item": ["a", "b", None, "b", "a", "c"]})
    long.index = labels
    calls = {
        "tabular": lambda: tabular.anonymize(table, {"age": "numeric"}, k=2, algorithm="mondrian"),
        "tabular noise": lambda: tabular.add_noise(table, ["age"], 0.1, seed=1),
        "tabular mdav": lambda: tabular.microaggregate(table, ["age"], k=2),
        "location": lambda: location.cloak(fixes, 2),
        "transactions": lambda: transactions.from_long(long, transaction="tid", item="item"),
    }
    for name, call in calls.items():
        with pytest.raises(InputError, match=r"row with index label 0\b") as err:
            call()
        assert err.value.row == 0, name
        assert table.loc[err.value.row].isna().any() or name in ("location", "transactions")
