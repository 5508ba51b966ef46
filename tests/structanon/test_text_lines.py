"""``structanon.io.text_lines``: strict and lenient decoding, line numbers, gzip."""

from __future__ import annotations

import gzip

import pytest

from structanon.errors import InputError
from structanon.io import text_lines

RAW = b"first\r\nsecond caf\xe9\n\nfourth \xff\xfe ok\nlast"


def test_strict_names_the_first_undecodable_line(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(RAW)
    with pytest.raises(InputError) as info:
        list(text_lines(path))
    assert info.value.line == 2 and "not UTF-8" in str(info.value)


@pytest.mark.parametrize("compress", [False, True])
def test_replace_reports_every_undecodable_line(tmp_path, compress):
    path = tmp_path / ("log.txt.gz" if compress else "log.txt")
    path.write_bytes(gzip.compress(RAW) if compress else RAW)
    lines = text_lines(path, errors="replace")
    read = list(lines)
    assert [n for n, _ in read] == [1, 2, 3, 4, 5]
    assert [t for _, t in read] == [
        "first",
        "second caf\ufffd",
        "",
        "fourth \ufffd\ufffd ok",
        "last",
    ]
    assert lines.undecodable_lines == [2, 4] and lines.undecodable == 2
    # decoding goes on correctly after a bad line (the decoder does not keep its state)
    assert RAW.decode("utf-8", errors="replace").splitlines() == [t for _, t in read]


def test_replace_on_clean_text_reports_nothing(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    lines = text_lines(path, errors="replace")
    assert list(lines) == [(1, "a"), (2, "b")] and lines.undecodable_lines == []


def test_bad_errors_value_and_corrupt_gzip(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("a\n", encoding="utf-8")
    with pytest.raises(InputError, match="errors"):
        text_lines(path, errors="ignore")
    good = gzip.compress(b"a\tb\n" * 1000)
    bad = tmp_path / "bad.gz"
    bad.write_bytes(good[:20] + bytes(x ^ 0x55 for x in good[20:60]) + good[60:])
    with pytest.raises(InputError, match="cannot read the file"):
        list(text_lines(bad, errors="replace"))


@pytest.mark.parametrize(
    ("raw", "line"),
    [(b"a b\rc d\re f\r", 1), (b"a b\r\nc d\re f\n", 2), (b"a b\nc d\n\re f\n", 3)],
)
def test_a_lone_carriage_return_is_refused_naming_its_line(tmp_path, raw, line):
    """Lone CR line ends (old Mac files, or mixed ends) would join lines into one."""
    path = tmp_path / "old_mac.txt"
    path.write_bytes(raw)
    with pytest.raises(InputError) as info:
        list(text_lines(path))
    assert info.value.line == line and "line ends" in str(info.value)
    path.write_bytes(raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r").replace(b"\r", b"\r\n"))
    assert [t for _, t in text_lines(path) if t] == ["a b", "c d", "e f"]  # as CRLF: read


@pytest.mark.parametrize("kind", ["bz2", "xz", "zip"])
def test_bzip2_xz_and_one_file_zip_are_read_like_gzip(tmp_path, kind):
    import bz2
    import lzma
    import zipfile

    plain = b"first\nsecond\nthird\n"
    path = tmp_path / f"log.txt.{kind}"
    if kind == "bz2":
        path.write_bytes(bz2.compress(plain))
    elif kind == "xz":
        path.write_bytes(lzma.compress(plain))
    else:
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("log.txt", plain)
    assert [t for _, t in text_lines(path)] == ["first", "second", "third"]
    if kind == "zip":
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr("other.txt", plain)
        with pytest.raises(InputError, match="zip archive of 2 files"):
            list(text_lines(path))
    else:
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])  # cut short
        with pytest.raises(InputError, match="cannot read"):
            list(text_lines(path))
