"""The core's validation layer, staged outputs and secret publication randomness."""

import os

import numpy as np
import pytest

from structanon._validation import check_choice, check_float, check_int, check_output_paths
from structanon.errors import InputError
from structanon.io import Pseudonymizer, release_key, staged_outputs


def test_check_int_names_parameter_and_range():
    assert check_int(3.0, "k", min_value=1) == 3
    for bad in (0, -2, 2.5, "3", True, None):
        with pytest.raises(InputError, match=r"^k must be an integer >= 1"):
            check_int(bad, "k", min_value=1)
    with pytest.raises(InputError, match=r"m must be an integer in \[1, 8\], got 1000"):
        check_int(1000, "m", min_value=1, max_value=8)


def test_check_float_and_choice():
    assert check_float(0, "t", min_value=0, max_value=1) == 0.0
    for bad in (float("nan"), float("inf"), 1.5, "x"):
        with pytest.raises(InputError, match="^t must be"):
            check_float(bad, "t", min_value=0, max_value=1)
    with pytest.raises(InputError, match=r"> 0"):
        check_float(0, "t", min_value=0, include_min=False)
    with pytest.raises(InputError, match="method must be one of 'dp', 'greedy'; got 'x'"):
        check_choice("x", "method", ("dp", "greedy"))


def test_output_equal_to_input_is_refused(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("a\n1\n")
    link = tmp_path / "link.csv"
    os.link(source, link)
    for target in (source, link, tmp_path / "." / "in.csv"):
        with pytest.raises(InputError, match="--output names an input file"):
            check_output_paths({"--output": target}, [source])
    assert source.read_text() == "a\n1\n"


def test_output_path_problems_are_named(tmp_path):
    with pytest.raises(InputError, match="--report must end in .json, .html; got .pdf"):
        check_output_paths(
            {"--report": tmp_path / "r.pdf"}, extensions={"--report": (".json", ".html")}
        )
    with pytest.raises(InputError, match="names a directory"):
        check_output_paths({"-o": tmp_path})
    with pytest.raises(InputError, match="--report and -o name the same file"):
        check_output_paths({"-o": tmp_path / "x.json", "--report": tmp_path / "x.json"})
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError, match="cannot be created"):
        check_output_paths({"-o": blocker / "sub" / "out.csv"})
    ok = check_output_paths({"-o": tmp_path / "new" / "out.csv", "--report": None})
    assert list(ok) == ["-o"]


def test_staged_outputs_all_or_nothing(tmp_path):
    main, side = tmp_path / "main.csv", tmp_path / "side.json"
    with pytest.raises(RuntimeError):
        with staged_outputs() as stage:
            stage(side).write_text("{}")
            stage(main).write_text("x")
            raise RuntimeError
    assert sorted(os.listdir(tmp_path)) == []
    with staged_outputs() as stage:
        stage(side).write_text("{}")
        stage(main).write_text("x")
    assert sorted(os.listdir(tmp_path)) == ["main.csv", "side.json"]
    assert main.read_text() == "x"


def test_publication_rng_is_secret_and_reproducible_with_key():
    key = b"k" * 32
    a = release_key(key).rng("order", 0, "k=5").permutation(1000)
    assert np.array_equal(a, Pseudonymizer(key).rng("order", 0, "k=5").permutation(1000))
    # other parameters, other purpose, other key: an unrelated order
    for other in (
        release_key(key).rng("order", 0, "k=10"),
        release_key(key).rng("labels", 0, "k=5"),
        release_key(b"j" * 32).rng("order", 0, "k=5"),
    ):
        assert abs(np.corrcoef(a, other.permutation(1000))[0, 1]) < 0.15
    # without a key: fresh entropy, never the public seed's permutation
    fresh = [release_key(None).rng("order", 0).permutation(1000) for _ in range(2)]
    assert not np.array_equal(fresh[0], fresh[1])
    for seed in range(50):
        assert not np.array_equal(fresh[0], np.random.default_rng(seed).permutation(1000))


def test_release_key_reads_environment_and_files(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTANON_PSEUDONYM_KEY", "ab" * 16)
    assert release_key().reproducible
    assert np.array_equal(
        release_key().rng("x").permutation(50),
        Pseudonymizer(bytes.fromhex("ab" * 16)).rng("x").permutation(50),
    )
    monkeypatch.delenv("STRUCTANON_PSEUDONYM_KEY")
    assert not release_key().reproducible
    key_file = tmp_path / "key"
    key_file.write_text("cd" * 16)
    assert release_key(str(key_file)).reproducible
    with pytest.raises(InputError, match="key must be bytes"):
        release_key(5)


def test_finish_release_verifies_before_measuring():
    from structanon import Partition, Release
    from structanon._finish import Timings, add_warning, finish_release, k_warning
    from structanon.errors import VerificationError
    from structanon.models import KAnonymity

    measured = []
    model = KAnonymity(2)

    def make(data):
        return Release(
            data=data,
            datatype="tabular",
            models=[model],
            verifier=lambda d: [model.check(Partition.from_keys(d))],
        )

    with pytest.raises(VerificationError):
        finish_release(make([1, 2, 2]), measured.append)
    assert measured == []  # a failing release is never measured
    release = make([1, 1, 2, 2])
    timings = Timings()
    with timings("search"):
        pass
    finish_release(release, measured.append, timings=timings)
    assert measured == [release] and set(release.timings) == {
        "search",
        "verify",
        "measures",
        "total",
    }
    finish_release(make([1, 1]), measured.append, measures=False)
    assert len(measured) == 1
    assert k_warning(1) and k_warning(2) is None
    add_warning(release, k_warning(1))
    add_warning(release, k_warning(1))
    assert release.info["warnings"] == [k_warning(1)]
    with pytest.warns(UserWarning, match="no protection"):
        finish_release(release)


def test_timed_steps_log_progress_only_when_enabled(capsys):
    from structanon import _progress
    from structanon._finish import Timings

    timings = Timings()
    with timings("search"):
        pass
    assert capsys.readouterr().err == ""
    _progress.enable(True)
    try:
        with timings("search"):
            pass
    finally:
        _progress.enable(False)
    err = capsys.readouterr().err
    assert "structanon: search ..." in err and "structanon: search done in" in err
