"""Bad input gets a clear error before anything is written (issue 14, transactions items)."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import transactions
from structanon.errors import InfeasibleError, InputError
from transactions.cli import cli
from transactions.io import read_transactions

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def baskets(tmp_path):
    p = tmp_path / "b.dat"
    p.write_text("".join(f"{i % 5} {i % 7} {(i * 3) % 11}\n" for i in range(60)))
    return p


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _bad(res, *needles):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    for needle in needles:
        assert needle in res.output, (needle, res.output)


# ---------------------------------------------------------------- item 1: outputs
@pytest.mark.parametrize(
    "cmd,extra",
    [
        ("anonymize", ["-k", "2"]),
        ("k-anonymize", ["-k", "2"]),
        ("band", ["--sensitive", "10", "-p", "2"]),
    ],
)
def test_output_naming_the_input_is_refused(tmp_path, baskets, cmd, extra):
    before = _digest(baskets)
    _bad(_run(cmd, baskets, *extra, "-o", baskets), "--output", "input")
    _bad(
        _run(
            cmd,
            baskets,
            *extra,
            "-o",
            tmp_path / "o.json" if cmd == "band" else tmp_path / "o.dat",
            "--report",
            baskets,
        ),
        "--report",
    )
    assert _digest(baskets) == before
    assert sorted(os.listdir(tmp_path)) == ["b.dat"]


def test_report_or_output_naming_the_hierarchy_is_refused(tmp_path):
    data = tmp_path / "g.dat"
    data.write_text("beer milk\nwine milk\nbeer milk\nwine milk\n")
    tax = tmp_path / "items.json"
    tax.write_text(json.dumps({"alcohol": ["beer", "wine"], "dairy": ["milk"]}))
    before = _digest(tax)
    _bad(_run("anonymize", data, "-k", "2", "--hierarchy", tax, "-o", tax), "input")
    _bad(
        _run(
            "anonymize",
            data,
            "-k",
            "2",
            "--hierarchy",
            tax,
            "-o",
            tmp_path / "o.dat",
            "--report",
            tax,
        ),
        "input",
    )
    assert _digest(tax) == before and not (tmp_path / "o.dat").exists()


def test_bad_report_extension_rejected_before_reading(tmp_path):
    bad_input = tmp_path / "x.dat"
    bad_input.write_bytes(b"\xff\xfe\x00binary")
    # the report is checked first: the message is about --report, not the binary input
    _bad(
        _run(
            "anonymize",
            bad_input,
            "-k",
            "2",
            "-o",
            tmp_path / "o.dat",
            "--report",
            tmp_path / "r.txt",
        ),
        "--report",
    )
    assert not (tmp_path / "o.dat").exists()


# ---------------------------------------------------------------- item 3: decoding, m
def test_non_utf8_input_names_file_and_line(tmp_path):
    p = tmp_path / "latin.dat"
    p.write_bytes(b"1 2\n3 4\ncaf\xe9 1\n")
    res = _run("anonymize", p, "-k", "1", "-o", tmp_path / "o.dat")
    _bad(res, "latin.dat", "line 3")
    with pytest.raises(InputError, match="line 3"):
        read_transactions(p)
    assert read_transactions(p, encoding="latin-1", item_type="str")[2] == {"café", "1"}


def test_binary_input_and_hierarchy(tmp_path, baskets):
    blob = tmp_path / "blob.dat"
    blob.write_bytes(bytes(range(256)) * 4)
    _bad(_run("k-anonymize", blob, "-k", "2", "-o", tmp_path / "o.dat"), "blob.dat")
    nul = tmp_path / "nul.dat"
    nul.write_bytes(b"1 2\n\x00\x00\x00\n")
    _bad(_run("anonymize", nul, "-k", "2", "-o", tmp_path / "o.dat"), "line 2")
    for name in ("tax.csv", "tax.json"):
        tax = tmp_path / name
        tax.write_bytes(b"1;*\n\xff\xfe;*\n")
        _bad(
            _run("anonymize", baskets, "-k", "2", "--hierarchy", tax, "-o", tmp_path / "o.dat"),
            name,
            "line 2",
        )
    assert not (tmp_path / "o.dat").exists()


def test_m_out_of_range_is_an_input_error(tmp_path, baskets):
    _bad(
        _run("anonymize", baskets, "-k", "2", "-m", "1000", "-o", tmp_path / "o.dat"),
        "-m must be an integer in [1, 8]",
    )
    with pytest.raises(InputError, match=r"m must be an integer in \[1, 8\]"):
        transactions.km_anonymize([{1, 2}, {1, 2}], k=2, m=1000)
    with pytest.raises(InputError, match="m must be an integer"):
        transactions.k_anonymize([{1, 2}, {1, 2}], k=2, m=10**6)


# ---------------------------------------------------------------- item 5: empty input
@pytest.mark.parametrize(
    "name,content",
    [
        ("empty.dat", ""),
        ("blank.dat", "\n\n\n"),
        ("header.csv", "tid,item\n"),
        ("empty.csv", ""),
        ("nulls.jsonl", "null\nnull\n"),
        ("empty.jsonl", "\n"),
    ],
)
@pytest.mark.parametrize("cmd,extra", [("anonymize", ["-k", "2"]), ("k-anonymize", ["-k", "2"])])
def test_empty_or_itemless_file_is_bad_input(tmp_path, name, content, cmd, extra):
    p = tmp_path / name
    p.write_text(content)
    _bad(_run(cmd, p, *extra, "-o", tmp_path / "o.dat"), "--format")
    assert not (tmp_path / "o.dat").exists()


# ---------------------------------------------------------------- item 6: likely mistakes
def test_stray_token_in_integer_file_names_line_and_token(tmp_path):
    p = tmp_path / "fimi.dat"
    p.write_text("1448 156 2\n" * 5 + "1448 x7 2\n" + "156 2\n" * 5)
    res = _run("anonymize", p, "-k", "2", "-o", tmp_path / "o.dat")
    _bad(res, "line 6", "'x7'")
    res = _run("anonymize", p, "-k", "2", "-o", tmp_path / "o.dat", "--item-type", "str")
    assert res.exit_code == 0, res.output
    csv = tmp_path / "long.csv"
    csv.write_text("tid,item\n1,5\n1,6\n2,5\n2,oops\n")
    with pytest.raises(InputError, match="line 5"):
        read_transactions(csv)
    # a published release (with taxonomy labels) reads back as text, without an error
    ok = tmp_path / "pub.dat"
    ok.write_text("1..5 7\n* 3\n")
    assert read_transactions(ok) == [{"1..5", "7"}, {"*", "3"}]


def test_band_sensitive_items_absent_are_named_to_the_publisher_only(tmp_path, baskets):
    """Refusing them made the published list (and the recorded command line) prove that
    each item it names occurs in the input, held only by suppressed transactions if no
    group counts it: they are accepted, named on stderr, and listed as given."""
    for report in ("r.json", "r.html"):
        res = _run(
            "band", baskets, "--sensitive", "10,zzz,999,10", "-p", "2",
            "-o", tmp_path / "o.json", "--report", tmp_path / report, "--quiet",
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        assert "warning: 2 sensitive item(s) do not occur in the data: 999, zzz" in res.stderr
        assert "do not occur" not in (tmp_path / report).read_text()
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["sensitive_items"] == [10, 999, "zzz"]  # the publisher's, sorted and once each


def test_k_one_warns(tmp_path, baskets):
    res = _run("k-anonymize", baskets, "-k", "1", "-o", tmp_path / "o.dat")
    assert res.exit_code == 0 and "warning: k = 1 gives no protection" in res.output
    rel = transactions.km_anonymize([{1, 2}, {2, 3}], k=1, m=2, measures=False)
    assert rel.info["warnings"] and "k = 1" in rel.info["warnings"][0]
    assert "warnings" not in transactions.km_anonymize([{1}, {1}], k=2, m=1).info


# ---------------------------------------------------------------- item 9: API errors
def test_api_raw_exceptions_become_input_errors(tmp_path):
    with pytest.raises(InputError, match="'hierarchy'"):
        transactions.km_anonymize([{1, 2}, {1, 2}], k=2, m=1, hierarchy=5)
    with pytest.raises(InputError, match="'hierarchy'"):
        transactions.k_anonymize([{1, 2}, {1, 2}], k=2, hierarchy=3.5)
    with pytest.raises(InputError, match="directory"):
        read_transactions(tmp_path)
    (tmp_path / "a.dat").write_text("1 2\n")
    with pytest.raises(InputError, match="encoding"):
        read_transactions(tmp_path / "a.dat", encoding="no-such-codec")
    with pytest.raises(InputError, match="directory"):
        transactions.km_anonymize([{1, 2}, {1, 2}], k=2, m=1, hierarchy=tmp_path)
    with pytest.raises(InputError, match="64 bits"):
        transactions.km_anonymize([{10**30}, {1}], k=1, m=1)


def test_no_measures_and_measures_flag(tmp_path, baskets):
    rep = tmp_path / "r.json"
    res = _run(
        "anonymize", baskets, "-k", "2", "-o", tmp_path / "o.dat", "--no-measures", "--report", rep
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(rep.read_text())
    assert set(doc["utility"]) == {"ncp"} and not doc.get("risk")
    data = read_transactions(baskets)
    assert transactions.k_anonymize(data, k=2, measures=False).risk in (None, {})
    assert transactions.band_matrix(data, [10], p=2, measures=False).utility in (None, {})
    assert "top_itemsets_error" in transactions.km_anonymize(data, k=2, m=2).utility


def test_wide_basket_named_by_its_line(tmp_path):
    p = tmp_path / "w.dat"
    p.write_text("1 2\n\n" + " ".join(map(str, range(40))) + "\n1 2\n")
    _bad(
        _run("anonymize", p, "-k", "1", "--max-basket-size", "10", "-o", tmp_path / "o.dat"),
        "w.dat",
        "line 3",
        "40 items",
    )
    with pytest.raises(InputError, match="transaction 3 has 40 items"):
        transactions.km_anonymize(read_transactions(p), k=1, m=2, max_basket_size=10)
    assert transactions.km_anonymize(read_transactions(p), k=1, m=2, measures=False).verify()


@settings(max_examples=60, deadline=None)
@given(
    blob=st.binary(max_size=300) | st.text(alphabet="0123456789 ,\n\tab\x00é.-*", max_size=300),
    name=st.sampled_from(["f.dat", "f.csv", "f.jsonl", "f.tsv"]),
    k=st.integers(-1, 6),
    m=st.integers(0, 4),
)
def test_fuzz_reader_and_anonymizers(tmp_path_factory, blob, name, k, m):
    """Arbitrary bytes or text: only InputError / InfeasibleError, never another exception."""
    p = tmp_path_factory.mktemp("fuzz") / name
    p.write_bytes(blob if isinstance(blob, bytes) else blob.encode("utf-8"))
    try:
        data = read_transactions(p)
        transactions.km_anonymize(data, k=k, m=m, measures=True)
        transactions.k_anonymize(data, k=k, measures=True)
        items = sorted({str(x) for t in data for x in t})[:1]
        transactions.band_matrix(data, items or ["x"], p=max(k, 2), measures=True)
    except (InputError, InfeasibleError):
        pass


# ---------------------------------------------------------------- item 2: bounded memory
_LIMIT = 2 * 1024**3


def _limited(args, cwd):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (_LIMIT, _LIMIT))

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-m", "structanon", "transactions", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        preexec_fn=limit,
        env=env,
        timeout=300,
    )


@pytest.fixture
def wide_file(tmp_path):
    p = tmp_path / "wide.dat"
    lines = [" ".join(str(x) for x in range(20_000))]  # one basket of 20,000 items
    lines += [f"{i % 50} {(i * 7) % 50} {(i * 13) % 50}" for i in range(300)]
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize(
    "cmd,extra,expect",
    [
        ("anonymize", ["-k", "5", "-m", "2"], 2),
        ("k-anonymize", ["-k", "5"], 0),
        ("band", ["--sensitive", "19999", "-p", "2"], 2),
    ],
)
def test_wide_basket_bounded_memory(tmp_path, wide_file, cmd, extra, expect):
    out = tmp_path / ("o.json" if cmd == "band" else "o.dat")
    res = _limited([cmd, wide_file, *extra, "-o", out, "--report", tmp_path / "r.json"], ROOT)
    assert res.returncode == expect, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    if expect == 2:
        width = "19,999" if cmd == "band" else "20,000"  # band counts the QI items
        assert f"line 1 has {width} items" in res.stderr and "wide.dat" in res.stderr
        assert "--max-basket-size" in res.stderr
        assert not out.exists()
    else:
        rep = json.loads((tmp_path / "r.json").read_text())
        assert rep["utility"]["top_itemsets_error"]["transactions_left_out"]


def test_sampled_queries_stay_small_on_a_wide_basket():
    # support_error drew one random key per (query, item of the widest basket): 200 queries
    # over a 2,000,000-item basket asked for 3.2 GB; the draw is now per query
    import tracemalloc

    import numpy as np

    from transactions._data import Baskets
    from transactions._query import sample_queries

    width = 2_000_000
    b = Baskets(
        indptr=np.array([0, width, width + 2], dtype=np.int64),
        codes=np.concatenate([np.arange(width), [0, 1]]).astype(np.int32),
        domain=np.arange(width).astype(object),
    )
    tracemalloc.start()
    try:
        q = sample_queries(b, 2, 200, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert q.shape == (200, 2) and (q[:, 0] < q[:, 1]).all()
    assert peak < 100 * 1024**2, peak


def test_lone_carriage_returns_do_not_join_baskets(tmp_path):
    """Baskets separated by a lone CR (old Mac or mixed line ends) would be read as one."""
    path = tmp_path / "mixed.dat"
    path.write_bytes(b"1 2 3\n4 5\r6 7\n8 9\n")
    _bad(_run("anonymize", path, "-k", "2", "-o", tmp_path / "o.dat"), "line 2", "line ends")
    assert not (tmp_path / "o.dat").exists()
    with pytest.raises(InputError, match="line ends"):
        read_transactions(path)


def test_option_errors_name_the_option_as_typed(tmp_path, baskets):
    """The same words as the other commands: -k, --seed, INPUT."""
    out = ["-o", tmp_path / "o.dat"]
    _bad(_run("anonymize", baskets, "-k", "0", *out), "-k must be an integer >= 1")
    _bad(_run("anonymize", baskets, "-k", "2", "--seed", "-1", *out), "--seed must be")
    _bad(_run("anonymize", tmp_path / "none.dat", "-k", "2", *out), "INPUT not found")
    _bad(_run("assess", baskets, "-k", "0"), "-k must be an integer >= 1")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tid,item\n1,a\n\n1,b\n\n1,\n", "empty item in transaction '1'"),
        ("tid,item\n1,a\n\n1,b\n\n,c\n", "empty tid"),
        ("tid,item\n1,5\n\n1,6\n\n2,x\n", "is not an integer"),
        ("tid,item\n1,5\n\n1,6\n\ntid,item\n", "header line is repeated"),
    ],
)
def test_long_csv_faults_are_named_by_file_line_past_blank_lines(tmp_path, text, message):
    """The lines were data row + 2: the blank lines above (which the reader skips) made
    each named line two too low."""
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as exc:
        read_transactions(path, item_type="int" if "x" in text else "auto")
    assert exc.value.line == 6
