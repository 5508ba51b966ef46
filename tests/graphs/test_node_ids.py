"""Node ids are read as written: never two spellings merged into one node by a guess."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import graphs
from graphs.cli import cli
from graphs.io import _plain_pairs
from structanon.errors import InputError


def _write(path, text):
    path.write_text(text)
    return path


def _refused(path, line, *spellings):
    """``path`` is refused, naming ``line`` and every one of ``spellings``."""
    with pytest.raises(InputError, match="two spellings of the integer") as info:
        graphs.read_graph(path)
    assert info.value.line == line, str(info.value)
    for spelling in spellings:
        assert repr(spelling) in str(info.value)
    return info.value


# ---------------------------------------------------------------------------- edge lists


@pytest.mark.parametrize(
    "text, first, second, line",
    [
        ("1 007\n7 2\n2 1\n", "007", "7", 2),  # 007 and 7 were one node
        ("1 +7\n7 2\n2 1\n", "+7", "7", 2),
        ("1 1_000\n1000 2\n2 1\n", "1_000", "1000", 2),  # int() reads "1_000" as 1000
        ("07 1\n1 2\n2 7\n", "07", "7", 3),  # a leading zero at the very start
        ("1\t07\n7\t2\n2\t1\n", "07", "7", 2),  # tab-separated
        ("1 2\n2 -07\n-7 1\n", "-07", "-7", 3),
        ("1 -0\n0 2\n2 1\n", "-0", "0", 2),
        ("1 2 97\n2 0007 99\n7 1 98\n", "0007", "7", 3),  # SNAP's third column ignored
        ("# a comment: read line by line\n1 07\n7 2\n2 1\n", "07", "7", 3),
    ],
    ids=["007", "plus", "underscore", "start", "tab", "negative", "minus-zero", "3-col", "comment"],
)
def test_edge_list_spellings_of_one_integer_are_refused_not_merged(
    tmp_path, text, first, second, line
):
    src = _write(tmp_path / "g.txt", text)
    first_line = next(i for i, x in enumerate(text.split("\n"), 1) if first in x.split())
    error = _refused(src, line, first, second)
    assert f"{first!r} (line {first_line}) and {second!r} (line {line})" in str(error)


def test_a_plain_integer_file_with_a_leading_zero_leaves_the_fast_path(tmp_path):
    # the numpy fast path read "07" as 7: 300 lines of plain integer pairs, one spelled 07
    lines = [f"{i} {(i + 1) % 300}" for i in range(300)]
    lines[100] = "100 07"
    src = _write(tmp_path / "g.txt", "\n".join(lines) + "\n")
    assert _plain_pairs(src.read_text()) is None
    _refused(src, 101, "07", "7")
    for text in ("1 07\n", "07 1\n", "1\t07\n", "1 -07\n", "1 -0\n", "1 +7\n", "1 2\n0 07\n"):
        assert _plain_pairs(text) is None, text
    # canonical integers, zero included, still take it
    assert _plain_pairs("0 1\n10 0\n-3 100\n").tolist() == [[0, 1], [10, 0], [-3, 100]]


def test_an_integer_spelled_one_way_is_kept_as_written(tmp_path):
    # zero-padded ids, each written one way: text ids, kept as written (published mapping
    # and a --no-relabel release name them as the input does)
    src = _write(tmp_path / "g.txt", "001 002\n002 003\n003 001\n003 10\n")
    g = graphs.read_graph(src)
    assert list(g.nodes()) == ["001", "002", "003", "10"]
    assert sorted(map(sorted, g.edges())) == [
        ["001", "002"],
        ["001", "003"],
        ["002", "003"],
        ["003", "10"],
    ]
    src = _write(tmp_path / "h.txt", "+1 2\n2 3\n3 +1\n")
    assert sorted(graphs.read_graph(src).nodes()) == ["+1", "2", "3"]


def test_canonical_integer_files_still_read_as_integers(tmp_path):
    # what every release so far read: node ids stay Python ints, in the same order
    text = "0 1\n0 2\n10 0\n-3 5\n5 1\n"
    for name, body in (
        ("fast.txt", text),
        ("checked.txt", "# SNAP\n" + text),
        ("comment.txt", "# 2009-01-05, +1 for _ and 007\n" + text),  # ids checked one by one
    ):
        g = graphs.read_graph(_write(tmp_path / name, body))
        assert list(g.nodes()) == [0, 10, -3, 5, 1, 2]
        assert all(type(n) is int for n in g.nodes()), name
    g = graphs.read_graph(_write(tmp_path / "g.csv", "source, target\n0, 1\n1, 2\n2, 0\n"))
    assert sorted(g.nodes()) == [0, 1, 2] and all(type(n) is int for n in g.nodes())


# ----------------------------------------------------------------------------------- CSV


@pytest.mark.parametrize(
    "rows, first, second, line",
    [
        ("1,007\n7,2\n2,1\n", "007", "7", 3),
        ("1,+7\n7,2\n2,1\n", "+7", "7", 3),
        ("1,1_000\n1000,2\n2,1\n", "1_000", "1000", 3),
        ("1,\uff17\n7,2\n2,1\n", "\uff17", "7", 3),  # a full-width digit seven
        ("ann,007\n7,bob\nbob,ann\n", "007", "7", 3),  # text ids: "007" became "7"
        ("1, 2\n02,3\n3, 1\n", "2", "02", 3),  # " 2" is 2,
    ],
    ids=["007", "plus", "underscore", "full-width", "text-ids", "spaced"],
)
def test_csv_spellings_of_one_integer_are_refused_not_merged(tmp_path, rows, first, second, line):
    src = _write(tmp_path / "g.csv", "source,target\n" + rows)
    _refused(src, line, first, second)


def test_csv_ids_kept_as_written(tmp_path):
    g = graphs.read_graph(_write(tmp_path / "a.csv", "source,target\nann,007\nbob,007\n"))
    assert sorted(g.nodes()) == ["007", "ann", "bob"]
    # an integer beyond 64 bits made the reader crash (OverflowError): a text id
    big = str(2**70)
    g = graphs.read_graph(_write(tmp_path / "b.csv", f"source,target\n1,{big}\n{big},2\n"))
    assert sorted(g.nodes()) == ["1", big, "2"]
    # a non-canonical id with spaces around it is a text id with spaces: refused, its line
    src = _write(tmp_path / "c.csv", "source, target\n1, 2\n2, 007\n")
    with pytest.raises(InputError, match="leading or trailing spaces") as info:
        graphs.read_graph(src)
    assert info.value.line == 3


def test_the_command_names_both_spellings_and_writes_nothing(tmp_path):
    lines = [f"{i} {i + 1}" for i in range(10, 18)] + ["18 007", "7 10"]
    src = _write(tmp_path / "g.txt", "\n".join(lines) + "\n")
    result = CliRunner().invoke(
        cli, ["anonymize", str(src), "-k", "2", "-o", str(tmp_path / "o.txt")]
    )
    assert result.exit_code == 2, result.output
    assert "'007' (line 9) and '7' (line 10) are two spellings of the integer 7" in result.output
    assert f"(file '{src}', line 10, node '7')" in result.output
    assert not (tmp_path / "o.txt").exists()
