"""Categorical columns are encoded from their integer codes: the same codes, domains,
partitions and releases as the same columns of plain values, checked by recounts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tabular
from structanon import Hierarchy, InputError, Partition
from structanon.models import DistinctLDiversity, KAnonymity, TCloseness
from structanon.partition import encode_values
from tabular._input import hierarchy_codes

LEAVES = ["a", "b", "c", "d", "e"]
HIERARCHY = Hierarchy(
    [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cde", "*"], ["d", "cde", "*"], ["e", "cde", "*"]]
)


def _categorical(values: list, extra: list) -> pd.Series:
    """``values`` as a categorical column whose categories also hold unused ``extra`` ones,
    in an order other than the values' first appearance."""
    categories = sorted(set(values) | set(extra), key=str, reverse=True)
    return pd.Series(pd.Categorical(values, categories=categories))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(LEAVES), min_size=1, max_size=40),
    st.lists(st.sampled_from(LEAVES + ["zz"]), max_size=3),
)
def test_categorical_hierarchy_codes_recount(values, extra):
    column = _categorical(values, extra)
    codes = hierarchy_codes(column, HIERARCHY, "c")
    position = {leaf: i for i, leaf in enumerate(HIERARCHY.leaves)}  # independent lookup
    assert codes.tolist() == [position[v] for v in values]
    assert codes.tolist() == hierarchy_codes(column.astype(object), HIERARCHY, "c").tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(LEAVES + ["x", "y"]), min_size=1, max_size=30))
def test_categorical_hierarchy_codes_name_the_first_bad_row(values):
    column = _categorical(values, [])
    bad = [i for i, v in enumerate(values) if v not in LEAVES]
    if not bad:
        return
    with pytest.raises(InputError) as caught:
        hierarchy_codes(column, HIERARCHY, "c")
    assert caught.value.row == bad[0]
    assert caught.value.value == values[bad[0]]
    assert caught.value.column == "c"


def test_categorical_hierarchy_codes_name_a_missing_value():
    column = pd.Series(pd.Categorical(["a", None, "b"], categories=["a", "b"]))
    with pytest.raises(InputError) as caught:
        hierarchy_codes(column, HIERARCHY, "c")
    assert caught.value.row == 1


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(
        st.lists(st.sampled_from(["x", "b", "a", "Q", "é"]), min_size=1, max_size=40),
        st.lists(st.integers(-5, 50), min_size=1, max_size=40),
        st.lists(st.sampled_from([0.5, 2.0, -1.25]), min_size=1, max_size=40),
    ),
    st.booleans(),
)
def test_categorical_encode_values_recount(values, unused):
    categories = sorted(set(values), reverse=True)
    if unused:
        categories = [*categories, "zz-unused" if isinstance(values[0], str) else 10**6]
    codes, domain = encode_values(pd.Series(pd.Categorical(values, categories=categories)))
    expected_domain = sorted(set(values))  # independent: the sorted distinct values
    assert domain.tolist() == expected_domain
    assert codes.tolist() == [expected_domain.index(v) for v in values]
    plain_codes, plain_domain = encode_values(np.asarray(values))
    assert plain_domain.dtype == domain.dtype or domain.dtype == object
    assert codes.tolist() == plain_codes.tolist()


def test_categorical_encode_values_name_a_missing_value():
    with pytest.raises(InputError) as caught:
        encode_values(pd.Categorical(["a", "b", None]))
    assert caught.value.row == 2


def _first_appearance(labels: list[int]) -> list[int]:
    seen: dict[int, int] = {}
    return [-1 if v < 0 else seen.setdefault(v, len(seen)) for v in labels]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(-1, 12), max_size=40),
    st.sampled_from([1, 1000, 10**9]),
)
def test_partition_numbers_groups_by_first_appearance(labels, scale):
    scaled = [v * scale if v >= 0 else -1 for v in labels]  # large labels: the sort path
    partition = Partition(np.array(scaled, dtype=np.int64))
    expected = _first_appearance(scaled)
    assert partition.labels.tolist() == expected
    kept = [v for v in expected if v >= 0]
    assert partition.sizes.tolist() == [kept.count(g) for g in range(len(set(kept)))]


MODELS = {
    "k": [KAnonymity(5)],
    "l": [KAnonymity(3), DistinctLDiversity(2)],
    "t": [KAnonymity(5), TCloseness(0.3)],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("suppression", [0.0, 0.04])
def test_category_input_gives_the_same_release(
    adult_sample, adult_sample_hierarchies, name, suppression
):
    plain = adult_sample
    category = plain.astype("category")
    releases = [
        tabular.anonymize(
            frame,
            adult_sample_hierarchies,
            "occupation",
            MODELS[name],
            suppression_limit=suppression,
            seed=3,
            key=b"category-test-key-0123456789abcd",
            measures=False,
        )
        for frame in (plain, category)
    ]
    a, b = (r.data for r in releases)
    assert a.to_csv(index=False) == b.to_csv(index=False)  # the same bytes
    np.testing.assert_array_equal(releases[0].partition.labels, releases[1].partition.labels)
    assert releases[0].transformation == releases[1].transformation
    assert releases[1].verify().passed


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=40),
    st.lists(st.sampled_from(["x", "y", "z", "*", "10-19", "20-29"]), min_size=6, max_size=6),
)
def test_categorical_labels_recount(codes, labels):
    from tabular._anonymize import categorical_labels

    label_array = np.array(labels, dtype=object)
    out = categorical_labels(np.array(codes, dtype=np.int64), label_array)
    if len(set(labels[c] for c in set(codes))) < len(set(codes)):
        assert out is None  # repeated labels: the caller keeps plain values
        return
    assert out is not None
    assert list(out.astype(object)) == [labels[c] for c in codes]
    used = sorted(set(codes))  # the labels present, in the labels' order, and no others
    assert list(out.categories) == [labels[c] for c in used]


@pytest.mark.slow
def test_category_release_names_only_published_labels(adult_sample, adult_sample_hierarchies):
    release = tabular.anonymize(
        adult_sample.astype("category"),
        adult_sample_hierarchies,
        "occupation",
        [KAnonymity(10)],
        suppression_limit=0.04,
        seed=1,
        key=b"category-test-key-0123456789abcd",
        measures=False,
    )
    assert release.suppressed > 0
    for column in adult_sample_hierarchies:
        published = release.data[column]
        assert isinstance(published.dtype, pd.CategoricalDtype)
        assert sorted(published.cat.categories) == sorted(set(published.astype(object)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("xyz"), st.sampled_from("pq")), min_size=1, max_size=30))
def test_class_metrics_of_categorical_columns(rows):
    from tabular import metrics

    plain = pd.DataFrame(rows, columns=["a", "b"], dtype=object)
    category = plain.astype("category")
    sizes: dict[tuple, int] = {}
    for row in rows:  # independent recount of the classes
        sizes[row] = sizes.get(row, 0) + 1
    expected = sum(s * s for s in sizes.values())
    for frame in (plain, category):
        assert metrics.discernibility_star(frame, ["a", "b"]) == expected
        assert metrics.average_class_size(frame, ["a", "b"]) == len(rows) / len(sizes)


def _cli_release(tmp_path, name, *options):
    from pathlib import Path

    from click.testing import CliRunner

    from tabular.cli import cli

    data = Path(__file__).resolve().parents[2] / "tabular" / "data"
    key = tmp_path / "release.key"
    key.write_text("00112233445566778899aabbccddeeff")
    out = tmp_path / f"{name}.csv"
    result = CliRunner().invoke(
        cli,
        ["anonymize", str(data / "adult_sample.csv"), "--sep", ";", "--hierarchy-dir", str(data)]
        + ["--key-file", str(key), "-o", str(out), "--no-measures", *options],
    )
    assert result.exit_code == 0, result.output
    return out.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [
        [
            "--qi",
            "sex,age,race,education",
            "-k",
            "5",
            "--sensitive",
            "occupation",
            "--l-diversity",
            "2",
        ],
        ["--qi", "sex,race,education", "-k", "5", "--sensitive", "age"]
        + ["--t-closeness", "0.3", "--t-distance", "ordered"],
        ["--qi", "sex,age,workclass", "-k", "10", "--suppression-limit", "0.05"]
        + ["--algorithm", "mondrian"],
    ],
)
def test_cli_reads_categoricals_and_releases_the_same_bytes_as_plain_columns(
    tmp_path, monkeypatch, options
):
    """The command line reads hierarchy QIs and sensitive columns as categoricals; forcing
    plain columns instead gives the same release, byte for byte."""
    from tabular import io as tab_io

    seen = []
    reader = tab_io.read_microdata

    def spy(*args, **kwargs):
        frame = reader(*args, **kwargs)
        seen.append(frame.dtypes.to_dict())
        return frame

    monkeypatch.setattr(tab_io, "read_microdata", spy)
    coded = _cli_release(tmp_path, "coded", *options)
    assert any(isinstance(t, pd.CategoricalDtype) for t in seen[-1].values())

    def plain(*args, **kwargs):
        kwargs["categorical"] = False
        return spy(*args, **kwargs)

    monkeypatch.setattr(tab_io, "read_microdata", plain)
    assert _cli_release(tmp_path, "plain", *options) == coded
    assert not any(isinstance(t, pd.CategoricalDtype) for t in seen[-1].values())
