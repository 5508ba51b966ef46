"""A pipe or FIFO as INPUT is refused before anything is read; a key file may be one.

The readers open an input more than once (its first bytes tell the format, a first pass
checks the lines), and a stream gives each opening what the last one left: transactions
read 110 of 2,000 baskets through ``<(cat retail.dat)`` with exit 0, graphs 3,487 of
5,241 nodes, querylogs 121 of 128 users; tabular and querylogs waited forever on a FIFO.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from structanon.cli import main

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def fifo(tmp_path: Path, name: str = "in.csv") -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def feed(path: Path, data: bytes) -> threading.Thread:
    """Write ``data`` into the FIFO ``path`` once a reader opens it (in a thread)."""

    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


COMMANDS = {
    "tabular": ["tabular", "anonymize", "{in}", "--qi", "a", "--set-qi", "a", "-k", "2"]
    + ["--algorithm", "mondrian"],
    "transactions": ["transactions", "anonymize", "{in}", "-k", "2"],
    "graphs": ["graphs", "anonymize", "{in}", "-k", "2"],
    "location": ["location", "anonymize", "{in}", "-k", "2"],
    "querylogs": ["querylogs", "anonymize", "{in}", "-k", "2"],
}


@pytest.mark.parametrize("package", sorted(COMMANDS))
def test_a_fifo_input_is_refused_before_it_is_read(tmp_path, package):
    source = fifo(tmp_path)
    out = tmp_path / "out.csv"
    args = [a.replace("{in}", str(source)) for a in COMMANDS[package]] + ["-o", str(out)]
    result = CliRunner().invoke(main, args)  # a reader opening the FIFO would wait forever
    assert result.exit_code == 2, result.output
    assert "pipe, FIFO or device" in result.stderr and "save it to a file" in result.stderr
    assert not out.exists()


def test_a_key_file_may_be_a_fifo(tmp_path):
    source = tmp_path / "t.csv"
    source.write_text("a,b\n" + "".join(f"{'xy'[i % 2]},{i}\n" for i in range(8)))
    outs = []
    for n in range(2):
        key = fifo(tmp_path, f"key{n}")
        writer = feed(key, b"0123456789abcdef0123456789abcdef\n")
        out = tmp_path / f"out{n}.csv"
        result = CliRunner().invoke(
            main,
            ["tabular", "anonymize", str(source), "--qi", "a", "--set-qi", "a", "-k", "2"]
            + ["--algorithm", "mondrian", "-o", str(out), "--key-file", str(key), "--quiet"],
        )
        writer.join(5)
        assert result.exit_code == 0, result.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]  # the key was read in full: the releases repeat
