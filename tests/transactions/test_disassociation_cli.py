"""``structanon transactions disassociate`` (issue 15): files, formats, keys, bad input."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

import transactions
from transactions.cli import SAMPLE, cli
from transactions.io import read_disassociation, read_transactions


def _invoke(*args):
    return CliRunner().invoke(cli, ["disassociate", *[str(a) for a in args]])


@pytest.fixture
def baskets(tmp_path):
    p = tmp_path / "b.dat"
    p.write_text("".join(f"{i % 5} {i % 7} {(i * 3) % 11}\n" for i in range(60)) + "\n\n")
    return p


@pytest.fixture
def head(tmp_path):
    """The first 400 retail baskets shipped with the package."""
    p = tmp_path / "head.dat"
    p.write_text("".join(SAMPLE.read_text().splitlines(keepends=True)[:400]))
    return p


def _frequencies(clusters) -> Counter:
    out: Counter = Counter()
    for c in clusters:
        for chunk in c.record_chunks:
            for sub in chunk:
                out.update(sub)
        out.update(c.term_chunk)
        out += _frequencies(c.clusters)
    return out


def test_json_output_round_trips_and_verifies(tmp_path, baskets):
    out, rep = tmp_path / "o.json", tmp_path / "r.json"
    res = _invoke(baskets, "-k", "4", "-m", "2", "-o", out, "--report", rep)
    assert res.exit_code == 0, res.output
    assert "62 transactions in" in res.output and "PASS" in res.output
    doc = json.loads(out.read_text())
    assert doc["format"] == "structanon-disassociation" and doc["parameters"]["k"] == 4
    clusters = read_disassociation(out)
    assert sum(c.size for c in clusters) == 62
    assert transactions.ChunkKmAnonymity(4, 2).check(clusters).passed
    report = json.loads(rep.read_text())
    assert report["parameters"]["algorithm"] == "disassociation"
    assert report["info"]["input"]["empty_transactions"] == 2
    assert "top_itemsets" in report["utility"] and report["risk"]["before"]
    # the reconstruction of the published file keeps the published frequencies
    rec = transactions.reconstruct(clusters, seed=3)
    assert Counter(x for t in rec for x in t) == _frequencies(clusters)


def test_text_output_is_readable(tmp_path, baskets):
    out = tmp_path / "o.txt"
    res = _invoke(baskets, "-k", "4", "-o", out, "--no-measures", "--quiet")
    assert res.exit_code == 0 and res.stdout == "", res.output
    assert all(line.startswith("warning: ") for line in res.stderr.splitlines())
    text = out.read_text()
    assert text.startswith("# disassociated transactions: 62 transactions")
    assert "record chunk 1 (" in text and "term chunk:" in text


def test_key_file_makes_bytes_repeat_and_no_key_differs(tmp_path, head):
    key = tmp_path / "k.key"
    key.write_text("0123456789abcdef0123456789abcdef\n")
    a, b, c = (tmp_path / f"{n}.json" for n in "abc")
    for out in (a, b):
        res = _invoke(head, "-k", "5", "-o", out, "--key-file", key, "--no-measures", "--quiet")
        assert res.exit_code == 0, res.output
    assert a.read_bytes() == b.read_bytes()
    assert _invoke(head, "-k", "5", "-o", c, "--no-measures", "--quiet").exit_code == 0
    assert a.read_bytes() != c.read_bytes()
    # same partition, different secret order
    sizes = sorted(x.size for x in read_disassociation(a))
    assert sizes == sorted(x.size for x in read_disassociation(c))


@pytest.mark.parametrize(
    "args,needle",
    [
        (["-k", "0"], "-k must"),
        (["-k", "3", "-m", "0"], "-m must"),
        (["-k", "3", "-m", "9"], "-m must"),
        (["-k", "3", "--max-cluster-size", "0"], "--max-cluster-size must"),
        (["-k", "3", "--seed", "-1"], "--seed must"),
    ],
)
def test_bad_options_exit_2_before_reading(tmp_path, baskets, args, needle):
    out = tmp_path / "o.json"
    res = _invoke(baskets, *args, "-o", out)
    assert res.exit_code == 2 and needle in res.output
    assert not out.exists()


def test_bad_outputs_and_inputs(tmp_path, baskets):
    res = _invoke(baskets, "-k", "3", "-o", tmp_path / "o.dat")
    assert res.exit_code == 2 and "--output" in res.output
    res = _invoke(baskets, "-k", "3", "-o", tmp_path / "o.json", "--report", tmp_path / "r.pdf")
    assert res.exit_code == 2 and not (tmp_path / "o.json").exists()
    res = _invoke(tmp_path / "missing.dat", "-k", "3", "-o", tmp_path / "o.json")
    assert res.exit_code == 2
    res = _invoke(baskets, "-k", "100", "-o", tmp_path / "o.json")
    assert res.exit_code == 3 and "k=100" in res.output
    assert not (tmp_path / "o.json").exists()
    wide = tmp_path / "w.dat"
    wide.write_text("1 2\n" + " ".join(str(i) for i in range(30)) + "\n")
    res = _invoke(wide, "-k", "1", "--max-basket-size", "10", "-o", tmp_path / "o.json")
    assert res.exit_code == 2 and "line 2" in res.output


def test_read_disassociation_refuses_other_files(tmp_path):
    other = tmp_path / "x.json"
    other.write_text('{"p": 3}')
    with pytest.raises(transactions.io.InputError, match="not a disassociated release"):
        read_disassociation(other)
    other.write_text("{")
    with pytest.raises(transactions.io.InputError, match="not a JSON document"):
        read_disassociation(other)


def test_sample_release_reads_like_the_api(tmp_path, head):
    out = tmp_path / "o.json"
    assert _invoke(head, "-k", "5", "-o", out, "--no-measures", "--quiet").exit_code == 0
    clusters = read_disassociation(out)
    assert sum(c.size for c in clusters) == len(read_transactions(head)) == 400


def test_html_report_has_the_support_figure(tmp_path, head):
    out, rep = tmp_path / "o.json", tmp_path / "r.html"
    res = _invoke(head, "-k", "5", "-o", out, "--report", rep, "--quiet")
    assert res.exit_code == 0, res.output
    html = rep.read_text()
    assert "most frequent item pairs" in html and "data:image/png;base64," in html
