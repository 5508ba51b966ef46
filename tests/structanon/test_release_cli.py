import json

import pytest
from click.testing import CliRunner

from structanon import Partition, Release, VerificationError
from structanon.cli import main
from structanon.models import KAnonymity
from structanon.report import write_report


def make_release(data, k=2):
    model = KAnonymity(k)
    return Release(data=data, datatype="tabular", models=[model],
                   verifier=lambda d: [model.check(Partition.from_keys([[v] for v in d]))],
                   partition=Partition.from_keys([[v] for v in data]),
                   utility={"dm": 8}, risk={"before": {"uniq": 4}, "after": {"uniq": 0}},
                   n_individuals=len(data))


def test_verify_rechecks_output_and_strict_raises():
    good = make_release(["a", "a", "b", "b"])
    assert good.verify().passed
    bad = make_release(["a", "a", "b"])
    assert not bad.verify().passed
    with pytest.raises(VerificationError, match="k-anonymity"):
        bad.verify(strict=True)
    # verification reads the data, not the algorithm's partition
    good.data = ["a", "b", "c", "d"]
    assert not good.verify().passed


def test_to_dict_json_and_reports(tmp_path):
    release = make_release(["a", "a", "b", "b"])
    d = json.loads(release.to_json())
    assert d["verification"]["passed"] and d["partition"]["n_groups"] == 2
    assert "worst" in release.summary() and "PASS" in release.summary()
    write_report(release, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["utility"] == {"dm": 8}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.bar([1, 2], [2, 2])
    write_report(release, tmp_path / "r.html", figures=[("Class sizes", fig)])
    page = (tmp_path / "r.html").read_text()
    assert "k-anonymity" in page and "data:image/png;base64," in page


def test_cli_help_lists_every_datatype():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in ("tabular", "transactions", "location", "graphs", "querylogs", "demo"):
        assert name in result.output
