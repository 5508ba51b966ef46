import json

import pytest
from click.testing import CliRunner

from structanon import Partition, Release, VerificationError
from structanon.cli import main
from structanon.models import KAnonymity
from structanon.report import write_report


def make_release(data, k=2):
    model = KAnonymity(k)
    return Release(
        data=data,
        datatype="tabular",
        models=[model],
        verifier=lambda d: [model.check(Partition.from_keys([[v] for v in d]))],
        partition=Partition.from_keys([[v] for v in data]),
        utility={"dm": 8},
        risk={"before": {"uniq": 4}, "after": {"uniq": 0}},
        n_individuals=len(data),
    )


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


def test_report_has_verdict_flags_and_provenance(tmp_path):
    import hashlib

    from structanon import Partition, Release
    from structanon.models import KAnonymity
    from structanon.report import provenance, write_report

    model = KAnonymity(2)
    data_file = tmp_path / "input.csv"
    data_file.write_text("a\n1\n1\n2\n2\n3\n")
    release = Release(
        data=[1, 1, 2, 2],
        datatype="tabular",
        models=[model],
        verifier=lambda d: [model.check(Partition.from_keys(d))],
        parameters={"quasi_identifiers": ["a"]},
        n_individuals=5,
        suppressed=1,
        risk={"before": {"sample_uniques_share": 0.2}, "after": {"sample_uniques_share": 0.4}},
        source_index=[0, 1, 2, 3],
    )
    release.provenance = provenance([data_file], command=["structanon", "tabular", "anonymize"])
    doc = json.loads(write_report(release, tmp_path / "r.json").read_text())
    assert doc["headline"].startswith(
        "Every published record is indistinguishable from at least 1 others on a."
    )
    levels = {f["title"]: f["level"] for f in doc["flags"]}
    assert levels["Large suppression"] == "red"  # 1 of 5 = 20%
    assert levels["Risk did not fall: sample_uniques_share"] == "red"
    assert doc["provenance"]["inputs"] == [{"name": data_file.name}]
    assert doc["provenance"]["command"] == "structanon tabular anonymize"
    page = write_report(release, tmp_path / "r.html").read_text()
    assert "Not covered" in page and "RED" in page and data_file.name in page
    # neither the input's hash nor its size: a bare hash confirms any guess of the input
    digest = hashlib.sha256(data_file.read_bytes()).hexdigest()
    size = str(data_file.stat().st_size)
    for text in (json.dumps(doc), page):
        assert digest not in text and f"{size} bytes" not in text
    # the publisher's link to its input is in no artefact, repr or notebook view
    for text in (json.dumps(doc), page, repr(release), release._repr_html_(), release.summary()):
        assert "source_index" not in text
    assert list(release.to_frame().columns) == ["kind", "measure", "before", "after"]


def test_shared_command_options_and_assessment_shape(tmp_path):
    import click

    from structanon.cli_support import (
        assess_options,
        assessment,
        emit_assessment,
        release_options,
    )

    @click.command()
    @release_options
    def anonymize(output, report, seed, key_file, no_measures, quiet):
        click.echo(f"{output.name} {report} {seed} {key_file} {no_measures} {quiet}")

    result = CliRunner().invoke(anonymize, ["-o", str(tmp_path / "o.csv")])
    assert result.exit_code == 0 and result.output.strip() == "o.csv None 0 None False False"
    help_text = CliRunner().invoke(anonymize, ["--help"]).output
    assert "never decides the published order" in help_text and "--no-measures" in help_text

    source = tmp_path / "in.csv"
    source.write_text("x\n1\n")

    @click.command()
    @assess_options
    def assess(report, as_json, seed, quiet):
        emit_assessment(
            assessment("tabular", source, {"sample_uniques": 1}, ["k = 1"]), report, as_json, quiet
        )

    out = CliRunner().invoke(assess, ["--json", "--report", str(tmp_path / "a.json")])
    doc = json.loads(out.output)
    assert set(doc) == {"data_type", "input", "risk", "warnings", "provenance"}
    assert doc == json.loads((tmp_path / "a.json").read_text())
    table = CliRunner().invoke(assess, []).output
    assert "sample_uniques" in table and "warning: k = 1" in table
