import gzip
import json

import pytest

from structanon.errors import InputError
from transactions.io import detect_format, read_transactions, write_transactions


def test_fimi_spaces_commas_empty_and_duplicates(tmp_path):
    p = tmp_path / "b.dat"
    p.write_text("1 2 3 \n4,5, 5\n\n6\n")
    data, stats = read_transactions(p, return_stats=True)
    assert data == [{1, 2, 3}, {4, 5}, set(), {6}]
    assert stats == {"transactions": 4, "empty_transactions": 1, "duplicate_items": 1}


def test_fimi_strings_and_gzip(tmp_path):
    p = tmp_path / "b.txt.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("milk beer\nmilk 7\n")
    assert read_transactions(p) == [{"milk", "beer"}, {"milk", "7"}]


def test_long_csv(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text("tid,item\nb,2\na,1\nb,3\na,1\n")
    data, stats = read_transactions(p, return_stats=True)
    assert data == [{2, 3}, {1}] and stats["duplicate_items"] == 1


def test_long_csv_blank_item_names_line(tmp_path):
    """A blank item on the only row of its tid is an empty transaction; beside items of
    its tid it is a missing value, refused with its line."""
    p = tmp_path / "b.csv"
    p.write_text("tid,item\n1,a\n2,\n")
    assert read_transactions(p) == [{"a"}, set()]
    p.write_text("tid,item\n1,a\n1,\n2,b\n")
    with pytest.raises(InputError, match="empty item in transaction '1'.*line 3"):
        read_transactions(p)
    p.write_text("tid,item\n1,a\n ,b\n")
    with pytest.raises(InputError, match="empty tid.*line 3"):
        read_transactions(p)


def test_jsonl(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_text('["a", "b"]\n{"items": [1]}\n[]\n')
    assert read_transactions(p) == [{"a", "b"}, {1}, set()]
    p.write_text('["a"]\n[1, 2\n')
    with pytest.raises(InputError, match="line 2"):
        read_transactions(p)
    p.write_text('["a"]\n[1.5]\n')
    with pytest.raises(InputError, match="line 2"):
        read_transactions(p)


def test_missing_file_and_format(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_transactions(tmp_path / "nope.dat")
    (tmp_path / "x.dat").write_text("1\n")
    with pytest.raises(InputError, match="format"):
        read_transactions(tmp_path / "x.dat", format="xml")


def test_detect_format():
    assert detect_format("a.csv.gz") == "csv" and detect_format("a.jsonl") == "jsonl"
    assert detect_format("retail.dat") == "fimi"


@pytest.mark.parametrize("name", ["o.dat", "o.csv", "o.jsonl"])
def test_write_roundtrip(tmp_path, name):
    data = [frozenset({1, 10, 2}), None, frozenset({"1..5", 3}), frozenset()]
    out = tmp_path / name
    n = write_transactions(data, out)
    assert n == 3
    back = read_transactions(out)
    if name.endswith(".jsonl"):
        assert read_transactions(out, return_stats=True)[1]["null_lines_skipped"] == 1
        lines = out.read_text().splitlines()
        assert lines[1] == "null" and json.loads(lines[0]) == [1, 2, 10]
    else:
        assert [set(map(str, t)) for t in back if t] == [{"1", "10", "2"}, {"1..5", "3"}]


def test_write_rejects_separator_in_fimi(tmp_path):
    with pytest.raises(InputError):
        write_transactions([{"a b"}], tmp_path / "o.dat")
    assert not (tmp_path / "o.dat").exists()
