"""The Arrow text reader of ``read_table``: the same frame as ``pandas.read_csv``.

Every check compares with pandas itself reading the same file (the reference the reader
promises to match), on files hypothesis writes with the cases that differ between CSV
readers: numbers pandas types and Arrow would not (``+5``, `` 5``, huge integers), missing
value markers, booleans, dates, quotes, separators and line breaks inside quotes, Unicode,
a byte-order mark.
"""

from __future__ import annotations

import csv
import gzip

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon.errors import InputError
from structanon.io import _read_text_arrow, read_table
from tabular.io import read_microdata

TOKENS = [
    "1", "2", "-3", "+5", " 5", "6 ", "007", "1.5", "1e3", "inf", "-inf", "2.0", "0", "99999999999999999999",
    "", "NA", "N/A", "nan", "NaN", "null", "None", "<NA>", "#N/A",
    "True", "false", "TRUE", "yes",
    "2020-01-01", "12:00:00", "2020-01-01T10:00:00",
    "a", "b", "Zürich", "x y", 'say "hi"', "a,b", "a;b", "line\nbreak", "ŝ", "*",
]  # fmt: skip


def _write(path, header, rows, sep=",", bom=False, quoting=csv.QUOTE_MINIMAL):
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as fh:
        writer = csv.writer(fh, delimiter=sep, quoting=quoting, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


@st.composite
def tables(draw):
    n_cols = draw(st.integers(1, 4))
    n_rows = draw(st.integers(1, 25))
    # a column draws from a few tokens, so that numeric, boolean and all-missing columns
    # happen as often as mixed ones
    pools = [draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4)) for _ in range(n_cols)]
    rows = [[draw(st.sampled_from(pool)) for pool in pools] for _ in range(n_rows)]
    return [f"c{j}" for j in range(n_cols)], rows


@settings(max_examples=150, deadline=None)
@given(
    table=tables(),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    bom=st.booleans(),
    quote_all=st.booleans(),
)
def test_same_frame_as_pandas(tmp_path_factory, table, sep, bom, quote_all):
    header, rows = table
    path = tmp_path_factory.mktemp("t") / "t.csv"
    _write(path, header, rows, sep, bom, csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    expected = pd.read_csv(path, sep=sep)
    pd.testing.assert_frame_equal(read_table(path, sep=sep), expected)
    # as categoricals: the same values; text columns (True) or the columns named, text or
    # numeric, become categoricals of sorted categories
    for categorical in (True, header[:1]):
        got = read_table(path, sep=sep, categorical=categorical)
        for name in header:
            column = got[name]
            if not isinstance(column.dtype, pd.CategoricalDtype):
                pd.testing.assert_series_equal(column, expected[name])
                assert (
                    categorical is not True
                    or expected[name].dtype != object
                    or (expected[name].dropna().map(type).ne(str).any())
                )
                continue
            assert categorical is True or name in categorical
            assert list(column.cat.categories) == sorted(column.cat.categories)
            assert not column.cat.categories.has_duplicates
            values = column.astype(column.cat.categories.dtype)
            pd.testing.assert_series_equal(values, expected[name], check_dtype=False)


def test_the_arrow_path_reads_plain_files_and_leaves_the_rest_to_pandas(tmp_path):
    plain = tmp_path / "p.csv"
    _write(plain, ["a", "b"], [["1", "x"], ["2", "y"]])
    assert _read_text_arrow(plain, ",") is not None
    cases = {
        "ragged": "a,b\n1,2\n3\n",
        "duplicate header": "a,a\n1,2\n",
        "empty name": "a,\n1,2\n",
        "header only": "a,b\n",
        "not UTF-8": "a,b\n\xe9,2\n",
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.csv"
        path.write_bytes(text.encode("latin-1"))
        assert _read_text_arrow(path, ",") is None, name
    gz = tmp_path / "z.csv.gz"
    gz.write_bytes(gzip.compress(b"a,b\n1,2\n"))
    assert _read_text_arrow(gz, ",") is None
    # and each of these still reads as pandas reads it, or fails naming what is wrong
    pd.testing.assert_frame_equal(read_table(gz), pd.DataFrame({"a": [1], "b": [2]}))
    with pytest.raises(InputError, match="fewer fields than the header") as short:
        read_table(tmp_path / "ragged.csv")  # pandas would pad the line with a missing value
    assert short.value.line == 3
    with pytest.raises(InputError, match="UTF-8"):
        read_table(tmp_path / "not UTF-8.csv")


def test_too_many_fields_still_names_the_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n5,6,7\n")
    with pytest.raises(InputError) as err:
        read_table(path)
    assert err.value.line == 4


def test_categories_do_not_depend_on_the_row_order(tmp_path):
    rng = np.random.default_rng(0)
    rows = [[str(v), f"w{v % 7}"] for v in rng.integers(0, 50, size=400)]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _write(a, ["n", "w"], rows)
    _write(b, ["n", "w"], [rows[i] for i in rng.permutation(len(rows))])
    first, second = read_table(a, categorical=True), read_table(b, categorical=True)
    assert list(first["w"].cat.categories) == list(second["w"].cat.categories)
    assert list(first["w"].cat.categories) == sorted({r[1] for r in rows})
    assert first["n"].dtype == np.int64  # numbers keep their type


def test_pandas_fallback_and_parquet_give_sorted_categories(tmp_path):
    frame = pd.DataFrame({"w": ["b", "a", "c", "a"], "n": [10, 2, 3, 2]})
    frame.to_parquet(tmp_path / "t.parquet")
    _write(tmp_path / "t.csv", ["w", "n"], frame.astype(str).to_numpy().tolist())
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress((tmp_path / "t.csv").read_bytes()))
    for path in (tmp_path / "t.parquet", gz, tmp_path / "t.csv"):
        got = read_table(path, categorical=["w"])
        assert list(got["w"].cat.categories) == ["a", "b", "c"], path
        assert got["w"].astype(object).tolist() == ["b", "a", "c", "a"]
        assert got["n"].tolist() == [10, 2, 3, 2]
        assert got["n"].dtype == np.int64
        both = read_table(path, categorical=["w", "n"])
        assert list(both["n"].cat.categories) == [2, 3, 10], path  # numeric order
        assert both["n"].astype(np.int64).tolist() == [10, 2, 3, 2]


def test_read_microdata_categorical_columns(tmp_path):
    path = tmp_path / "t.csv"
    _write(path, ["zip", "job", "age"], [["02139", "nurse", "30"], ["47677", "clerk", "41"]])
    df = read_microdata(path, categorical=["job"])
    assert isinstance(df["job"].dtype, pd.CategoricalDtype)
    assert df["zip"].tolist() == [2139, 47677]  # as pandas types them
    assert df["age"].dtype == np.int64


def test_columns_of_mostly_distinct_values_are_left_to_pandas(tmp_path):
    rng = np.random.default_rng(1)
    rows = [[f"id{i}", str(v)] for i, v in enumerate(rng.integers(0, 9, size=2000))]
    unique = tmp_path / "ids.csv"
    _write(unique, ["id", "v"], rows)
    assert _read_text_arrow(unique, ",") is None  # 2,000 distinct identifiers
    pd.testing.assert_frame_equal(read_table(unique), pd.read_csv(unique))
    repeated = tmp_path / "repeated.csv"
    _write(repeated, ["id", "v"], [[f"id{i % 300}", v] for i, (_, v) in enumerate(rows)])
    assert _read_text_arrow(repeated, ",") is not None  # 300 values, each 6-7 times


def test_a_file_larger_than_the_sample_reads_as_pandas_reads_it(tmp_path):
    rng = np.random.default_rng(2)
    n = 120_000  # about 1.5 MB: the first megabyte is the sample, cut at a line end
    path = tmp_path / "big.csv"
    pd.DataFrame(
        {
            "w": rng.choice(["x", "y", 'q"uote', "a,b"], size=n),
            "n": rng.integers(0, 90, size=n),
            "f": rng.choice([0.5, 1.25, np.nan], size=n),
        }
    ).to_csv(path, index=False)
    assert path.stat().st_size > 1 << 20
    assert _read_text_arrow(path, ",") is not None
    pd.testing.assert_frame_equal(read_table(path), pd.read_csv(path))


def test_lone_carriage_return_line_ends_read_as_lines(tmp_path):
    """An old Mac table (CR line ends) reads as the same table as its LF copy."""
    text = "a;b\n1;x\n2;y\n3;x\n"
    lf, cr = tmp_path / "lf.csv", tmp_path / "cr.csv"
    lf.write_text(text)
    cr.write_bytes(text.replace("\n", "\r").encode())
    pd.testing.assert_frame_equal(read_table(cr, sep=";"), read_table(lf, sep=";"))


def test_a_separator_of_several_characters_is_literal(tmp_path):
    """' | ' is the text between fields, not the regular expression 'space or space'
    (which split every value and published the pipes as columns '|', '|.1' ...)."""
    path = tmp_path / "pipes.csv"
    path.write_text("sex | age | city\nM | 56 | Paris\nF | 31 | Saint Denis\n")
    df = read_table(path, sep=" | ")
    assert list(df.columns) == ["sex", "age", "city"]
    assert df["city"].tolist() == ["Paris", "Saint Denis"] and df["age"].tolist() == [56, 31]
    path.write_text("a::b::a\n1::2::3\n")
    with pytest.raises(InputError, match="twice") as info:
        read_table(path, sep="::")
    assert info.value.column == "a"


@pytest.mark.parametrize("kind", ["bz2", "xz", "zip"])
def test_compressed_tables_are_read_like_the_plain_file(tmp_path, kind):
    """The byte checks (NUL, short lines) look through the compression pandas reads."""
    import bz2
    import lzma
    import zipfile

    plain = tmp_path / "t.csv"
    plain.write_text("a;b\n1;x\n2;y\n")
    packed = tmp_path / f"t.csv.{kind}"
    if kind == "bz2":
        packed.write_bytes(bz2.compress(plain.read_bytes()))
    elif kind == "xz":
        packed.write_bytes(lzma.compress(plain.read_bytes()))
    else:
        with zipfile.ZipFile(packed, "w") as archive:
            archive.write(plain, "t.csv")
    pd.testing.assert_frame_equal(read_table(packed, sep=";"), read_table(plain, sep=";"))
