"""A header line repeated mid-file (concatenated exports) is refused, not read as data."""

from __future__ import annotations

import pytest

from graphs.io import read_graph
from structanon.errors import InputError
from transactions.io import read_transactions


def test_long_csv_repeated_header_is_refused(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("tid,item\na,1\na,2\n tid , item\nb,1\n")
    with pytest.raises(InputError, match="header line is repeated at line 4") as exc:
        read_transactions(path)
    assert str(path) in str(exc.value)


def test_graph_csv_repeated_header_is_refused(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("source,target\nn1,n2\nsource,target\nn2,n3\n")
    with pytest.raises(InputError, match="header line is repeated at line 3") as exc:
        read_graph(path)
    assert str(path) in str(exc.value)
