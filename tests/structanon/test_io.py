import hashlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from structanon import InputError
from structanon.io import (
    KEY_ENV,
    Pseudonymizer,
    atomic_write,
    read_table,
    remove_folder,
    staged_folder,
    write_table,
)


def test_read_table_formats_and_errors(tmp_path):
    df = pd.DataFrame({"zip": ["02139", "47677"], "age": [30, 41]})
    write_table(df, tmp_path / "t.csv")
    write_table(df, tmp_path / "t.parquet")
    write_table(df, tmp_path / "t.tsv")
    assert read_table(tmp_path / "t.csv", dtype={"zip": str})["zip"].tolist() == ["02139", "47677"]
    assert read_table(tmp_path / "t.parquet").equals(df)
    assert read_table(tmp_path / "t.tsv", dtype={"zip": str}).equals(df)
    with pytest.raises(InputError, match=r"column not found.*column 'salary'"):
        read_table(tmp_path / "t.csv", columns=["salary"])
    with pytest.raises(InputError, match="not found"):
        read_table(tmp_path / "absent.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3,4,5\n")
    with pytest.raises(InputError, match="line 3"):
        read_table(bad)


def test_atomic_outputs_get_the_usual_permissions(tmp_path):
    import os

    umask = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "release.csv") as fh:
            fh.write("x")
    finally:
        os.umask(umask)
    assert (tmp_path / "release.csv").stat().st_mode & 0o777 == 0o644


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write("half")
            raise RuntimeError("crash")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_staged_folder_is_private_while_written_then_usual_then_renamed(tmp_path):
    import os

    target = tmp_path / "out.parquet"
    umask = os.umask(0o022)
    try:
        with staged_folder(target) as tmp:
            assert tmp.parent == tmp_path and tmp.is_dir() and not target.exists()
            assert tmp.stat().st_mode & 0o777 == 0o700  # others cannot list the parts
            (tmp / "part.0.parquet").write_text("x")
    finally:
        os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]
    assert [p.name for p in target.iterdir()] == ["part.0.parquet"]


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_staged_folder_leaves_nothing_on_failure(tmp_path, error):
    target = tmp_path / "sub" / "out.parquet"
    with pytest.raises(error):
        with staged_folder(target) as tmp:
            (tmp / "part.0.parquet").write_text("half")
            raise error("crash")
    assert not target.exists() and list((tmp_path / "sub").iterdir()) == []


def _writing_parts(folder, stop):
    """What a Dask worker does after the computation failed: keep writing its parts."""
    i = 0
    while not stop.is_set():
        i += 1
        try:
            pd.DataFrame({"a": [i]}).to_csv(folder / f"part.{i:05d}", index=False)
        except OSError:  # the folder has gone: the write fails, it creates nothing
            pass


def test_a_folder_removed_while_parts_are_still_written_leaves_nothing(tmp_path):
    import threading

    for r in range(10):  # a plain rmtree leaves a folder behind within a few rounds
        folder = tmp_path / f"run{r}" / ".out.parquet.x.parts"
        folder.mkdir(parents=True)
        stop = threading.Event()
        writers = [threading.Thread(target=_writing_parts, args=(folder, stop)) for _ in range(3)]
        for w in writers:
            w.start()
        while not any(folder.iterdir()):
            pass
        remove_folder(folder)
        stop.set()
        for w in writers:
            w.join()
        assert list(folder.parent.iterdir()) == [], f"left behind in round {r}"


@pytest.mark.parametrize("kind", ["file", "folder", "link"])
def test_staged_folder_never_replaces_an_existing_path(tmp_path, kind):
    target = tmp_path / "out.parquet"
    if kind == "file":
        target.write_text("old")
    elif kind == "folder":
        target.mkdir()
    else:
        target.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match="this path exists"):
        with staged_folder(target):
            pytest.fail("the block must not run")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]


def test_pseudonyms_keyed_consistent_and_unlinkable(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    ids = ["alice", "bob", "alice", 42]
    a = Pseudonymizer().pseudonymize(ids)
    b = Pseudonymizer().pseudonymize(ids)
    assert a[0] == a[2] and len(set(a)) == 3
    assert set(a).isdisjoint(b)  # fresh random key per release: unlinkable
    # never a bare hash, which a dictionary attack reverses
    assert a[0] != hashlib.sha256(b"alice").hexdigest()[:16]
    key_file = tmp_path / "key"
    key_file.write_text("00112233445566778899aabbccddeeff\n")
    k1 = Pseudonymizer.from_config(key_file).pseudonymize(ids)
    k2 = Pseudonymizer.from_config(key_file).pseudonymize(ids)
    assert k1.tolist() == k2.tolist()
    monkeypatch.setenv(KEY_ENV, "00112233445566778899aabbccddeeff")
    env = Pseudonymizer.from_config()
    assert env.pseudonymize(ids).tolist() == k1.tolist() and env.key_source == f"${KEY_ENV}"
    assert "0011" not in repr(env)
    with pytest.raises(InputError, match="at least 16 bytes"):
        Pseudonymizer(b"short")
    with pytest.raises(InputError, match="missing identifier"):
        Pseudonymizer().pseudonymize(["a", None])


def test_text_inputs_fail_clearly(tmp_path):
    import gzip

    from structanon.io import open_text, text_lines

    good = tmp_path / "ok.txt.gz"
    good.write_bytes(gzip.compress("a\nb\u00e9\n".encode()))
    assert list(text_lines(good)) == [(1, "a"), (2, "b\u00e9")]
    plain = tmp_path / "plain.dat"  # gzip is told by content, not the name
    plain.write_bytes(gzip.compress(b"x y\n"))
    assert open_text(plain).read() == "x y\n"
    cases = {
        "binary.dat": (b"ok\n\x00\x01\x02", r"binary.*line 2"),
        "utf16.txt": ("a,b\n".encode("utf-16"), "UTF-16"),
        "latin1.txt": ("a\nb\u00e9\n".encode("latin-1"), r"not UTF-8 text.*line 2"),
        "broken.gz": (
            gzip.compress("\n".join(map(str, range(20_000))).encode())[:2000],
            "cannot read the file",
        ),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(InputError, match=message):
            list(text_lines(path))
    with pytest.raises(InputError, match="not found"):
        open_text(tmp_path / "missing.txt")
    with pytest.raises(InputError, match="is a directory"):
        open_text(tmp_path)
    with pytest.raises(InputError, match="unknown text encoding"):
        open_text(good, encoding="klingon")


@pytest.mark.parametrize(
    ("content", "line"),
    [(b"a,b\n1,Ly\x00on\n2,Nice\n", 2), (b"a,b\n" + b"1,x\n" * 300_000 + b"2,\x00\n", 300_002)],
)
def test_a_nul_byte_is_refused_with_its_line_not_cut_short(tmp_path, content, line):
    import gzip

    for name, data in (("t.csv", content), ("t.csv.gz", gzip.compress(content))):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InputError, match="NUL byte") as info:
            read_table(tmp_path / name)
        assert info.value.line == line and info.value.path.endswith(name)


def test_a_header_naming_a_column_twice_is_refused(tmp_path):
    (tmp_path / "t.csv").write_text("sex,age,age\nM,30,Paris\n")
    with pytest.raises(InputError, match="names this column twice") as info:
        read_table(tmp_path / "t.csv")
    assert info.value.column == "age"
    (tmp_path / "q.csv").write_text('sex,"age,x",age\nM,1,2\n')  # quoted: distinct names
    assert list(read_table(tmp_path / "q.csv").columns) == ["sex", "age,x", "age"]


@pytest.mark.parametrize("cut", [True, False])
def test_a_cut_or_corrupt_gzip_table_names_the_file(tmp_path, cut):
    import gzip

    whole = gzip.compress(b"a,b\n" + b"1,2\n" * 10_000)
    path = tmp_path / "t.csv.gz"
    path.write_bytes(whole[: len(whole) // 2] if cut else whole[:10] + b"junk" * 20)
    with pytest.raises(InputError, match="truncated or corrupt") as info:
        read_table(path)
    assert info.value.path.endswith("t.csv.gz")


def test_a_line_with_fewer_or_more_fields_than_the_header_is_refused(tmp_path):
    import gzip

    content = b"sex,age,city\nM,30,Paris\n\nF,31\nM,32,Nice\n"
    for name, data in (("t.csv", content), ("t.csv.gz", gzip.compress(content))):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InputError, match="fewer fields than the header") as info:
            read_table(tmp_path / name)
        assert info.value.line == 4
    # the last line without a line break; CRLF; an empty field is a value, not a short row
    (tmp_path / "e.csv").write_bytes(b"a,b\r\n1,2\r\n3")
    with pytest.raises(InputError, match="fewer fields") as info:
        read_table(tmp_path / "e.csv")
    assert info.value.line == 3
    (tmp_path / "long.csv").write_bytes(b"a,b\r\n1,2\r\n\r\n3,4,\r\n")
    with pytest.raises(InputError, match=r"more fields \(3\) than the header \(2\)") as info:
        read_table(tmp_path / "long.csv")
    assert info.value.line == 4
    (tmp_path / "ok.csv").write_bytes(b"a,b,c\r\n1,,3\r\n\r\n4,5,\r\n")
    assert read_table(tmp_path / "ok.csv")["b"].isna().tolist() == [True, False]


def test_the_field_count_matches_a_line_by_line_count_whatever_the_chunks():
    from structanon.io import _FieldCount

    def first_short(data: bytes, size: int):
        count = _FieldCount(",")
        for i in range(0, len(data), size):
            if (found := count.feed(data[i : i + size])) is not None:
                return found
        return count.finish()

    def by_lines(text: str):
        lines = text.replace("\r\n", "\n").split("\n")
        lines = lines[:-1] if text.endswith("\n") else lines
        for number, line in enumerate(lines[1:], start=2):
            seps, header = line.count(","), lines[0].count(",")
            if (line.rstrip("\r") and seps < header) or seps > header:
                return number
        return None

    rng = np.random.default_rng(0)
    for _ in range(500):
        rows = ["a,b,c"] + [
            str(rng.choice(["", "x,y", "1,2,3", "1,2,3", "1,2,3,4", "\r"]))
            for _ in range(int(rng.integers(1, 8)))
        ]
        text = ("\r\n" if rng.random() < 0.3 else "\n").join(rows)
        text += "\n" if rng.random() < 0.5 else ""
        for size in (1, 2, 5, 64):
            assert first_short(text.encode(), size) == by_lines(text), (text, size)


def test_read_table_takes_an_encoding_and_names_the_undecodable_line(tmp_path):
    """A table in another encoding: read as written with ``encoding=``; without it, an
    error naming the file, the line and the byte (pandas only said "not UTF-8"), on the
    Arrow and the pandas paths, plain and gzip."""
    import gzip

    rows = "".join(f"{i},{'Zürich' if i == 4_000 else 'Bern'}\n" for i in range(6_000))
    content = ("id,city\n" + rows).encode("latin-1")
    for name, data in (("t.csv", content), ("t.csv.gz", gzip.compress(content))):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError, match=r"byte 0xfc at offset 6 of the line") as info:
            read_table(path)
        assert info.value.line == 4_002 and info.value.path == str(path)
        assert "--encoding" in info.value.message
        df = read_table(path, encoding="latin-1")
        assert len(df) == 6_000 and (df["city"] == "Zürich").sum() == 1
    with pytest.raises(InputError, match="unknown text encoding 'nope'"):
        read_table(tmp_path / "t.csv", encoding="nope")
    wide = tmp_path / "wide.tsv"  # Excel's "Unicode text": UTF-16 with tabs
    wide.write_bytes("id\tcity\n1\tZürich\n2\tBern\n".encode("utf-16"))
    assert read_table(wide, encoding="utf-16")["city"].tolist() == ["Zürich", "Bern"]


def test_check_encoding_and_the_block_checks():
    from structanon._validation import check_encoding
    from structanon.io import block_faults

    assert check_encoding("cp1252") == "cp1252"
    for bad in ("nope", "base64", "", None, 5):
        with pytest.raises(InputError, match="encoding"):
            check_encoding(bad, "--encoding")
    block = "a,b\n1,x\n2,caf\u00e9\n".encode("latin-1")
    breaks, fault = block_faults(block, ",", None, True)
    assert breaks == 3 and fault is not None and fault[1] == 3 and "0xe9" in fault[0]
    assert block_faults(block, ",", None, True, "latin-1") == (3, None)


def _short_line_by_csv(block: bytes, sep: str, header: int | None) -> int | None:
    """The first line with fewer or more fields than the header, counted by the csv
    module."""
    import csv

    lines = block.decode().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    expected = header
    for number, text in enumerate(lines, start=1):
        if text.strip("\r") == "":
            continue
        fields = len(next(csv.reader([text.rstrip("\r")], delimiter=sep)))
        if expected is None:
            expected = fields
        elif fields != expected:
            return number
    return None


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.lists(st.sampled_from(["", "a", "bb"]), min_size=1, max_size=4).map(",".join),
        min_size=1,
        max_size=12,
    ),
    crlf=st.booleans(),
    header=st.sampled_from([None, 2, 3]),
    piece=st.integers(1, 9),
)
def test_block_checks_in_slices_equal_one_pass(lines, crlf, header, piece):
    """A block is counted a slice at a time (bounded memory: a 64 MiB block at once
    widened to 590 MiB); slices that cut lines, and CRLF pairs, anywhere give the line
    of one pass over the block, and the csv module's."""
    import structanon.io as core

    assume(lines[0] != "")  # a header line, not a blank one
    block = ("\r\n" if crlf else "\n").join(lines).encode() + b"\n"
    whole = core.block_faults(block, ",", header, True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(core, "_COUNT_SLICE", piece)
        assert core.block_faults(block, ",", header, True) == whole
    found = whole[1][1] if whole[1] is not None else None
    assert found == _short_line_by_csv(block, ",", header)


def test_locate_undecodable_always_raises(tmp_path):
    from structanon.io import UndecodableText, locate_undecodable

    path = tmp_path / "a.csv"
    path.write_bytes(b"a\ncaf\xc3\xa9\nx\xe9\n")
    with pytest.raises(UndecodableText, match="byte 0xe9") as info:
        locate_undecodable(path, "utf-8")
    assert info.value.line == 3 and info.value.path == str(path)
    path.write_bytes(b"a\n1\n")  # every line decodes: the file is still named
    with pytest.raises(UndecodableText, match="not UTF-8 text; ") as info:
        locate_undecodable(path, "utf-8")
    assert info.value.line is None and info.value.path == str(path)


def test_a_full_disk_names_the_output_not_its_temporary_file(tmp_path):
    """A write error (a full disk, a quota) carries no file name: the message said only
    "No space left on device". It now names the output, never a temporary stand-in, and
    leaves nothing behind."""
    import errno

    from structanon.io import atomic_write, staged_outputs

    target = tmp_path / "out" / "release.csv"
    with pytest.raises(OSError) as err:
        with staged_outputs() as stage:
            with atomic_write(stage(target)):
                raise OSError(errno.ENOSPC, "No space left on device")
    assert err.value.filename == str(target) and err.value.errno == errno.ENOSPC
    assert not any(tmp_path.rglob("*"))
    with pytest.raises(OSError) as err:
        with atomic_write(target):
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
    assert err.value.filename == str(target)
