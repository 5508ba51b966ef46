"""Hierarchy: ARX files, builders, generalization, errors naming row and value."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from structanon import Hierarchy, InputError
from tests._support import SHARED_DATA

REPO = Path(__file__).resolve().parents[2]
BUNDLED_ADULT = REPO / "tabular" / "data"  # the one home of the bundled Adult hierarchies

ADULT_FILES = sorted(BUNDLED_ADULT.glob("adult_hierarchy_*.csv"))


def test_bundled_hierarchies_are_those_of_the_shared_data():
    assert len(ADULT_FILES) == 9
    shared = SHARED_DATA / "adult"
    if not shared.exists():
        pytest.skip("../shared/data is absent")
    for path in ADULT_FILES:
        assert path.read_bytes() == (shared / path.name).read_bytes()


@pytest.mark.parametrize("path", ADULT_FILES, ids=lambda p: p.stem)
def test_every_adult_hierarchy_loads_and_round_trips(path):
    h = Hierarchy.from_csv(path)
    rows = [line.split(";") for line in path.read_text().splitlines() if line.strip()]
    assert h.height == len(rows[0]) - 1
    assert h.n_nodes(h.height) == 1 and h.labels(h.height)[0] == "*"
    leaves = [r[0] for r in rows]
    for level in range(h.height + 1):
        assert h.generalize(leaves, level).tolist() == [r[level] for r in rows]
    assert h.leaf_counts(0).tolist() == [1] * len(leaves)
    assert h.leaf_counts(h.height).tolist() == [len(leaves)]
    assert h.to_rows() == rows


def test_adult_data_values_generalize_through_the_table():
    h = Hierarchy.from_csv(BUNDLED_ADULT / "adult_hierarchy_age.csv")
    # the shipped labels are shifted by one: 20 sits under "15-19"
    assert h.generalize(pd.Series([20, 39, 90]), 1).tolist() == ["15-19", "35-39", "85-89"]
    assert h.generalize(np.array([39.0]), 2).tolist() == ["30-39"]
    shared = SHARED_DATA / "adult" / "adult.csv"
    if shared.exists():
        df = pd.read_csv(shared, sep=";")
        for col in df.columns:
            hier = Hierarchy.from_csv(BUNDLED_ADULT / f"adult_hierarchy_{col}.csv")
            assert (hier.generalize(df[col], hier.height) == "*").all()


def test_errors_name_row_and_value(tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a;x;*\nb;*\n")
    with pytest.raises(InputError, match=r"ragged.*row 2.*'b'"):
        Hierarchy.from_csv(ragged)
    two_parents = tmp_path / "two.csv"
    two_parents.write_text("a;x;*\na;y;*\n")
    with pytest.raises(InputError, match=r"two parents.*row 2.*'a'"):
        Hierarchy.from_csv(two_parents)
    inner = tmp_path / "inner.csv"
    inner.write_text("a;x;p\nb;x;q\n")
    with pytest.raises(InputError, match=r"node at level 1 has two parents.*'x'"):
        Hierarchy.from_csv(inner)
    h = Hierarchy([["a", "*"], ["b", "*"]], name="letters")
    with pytest.raises(
        InputError, match=r"not in the hierarchy.*column 'letters', row 2, value 'z'"
    ):
        h.encode(["a", "b", "z"])
    with pytest.raises(InputError, match=r"missing value.*row 1"):
        h.encode(["a", None])
    with pytest.raises(InputError, match="not found"):
        Hierarchy.from_csv(tmp_path / "absent.csv")


def test_from_dict_pads_shallow_leaves_and_finds_lca(disease_hierarchy):
    h = Hierarchy.from_dict({"drinks": {"alcohol": ["beer", "wine"]}, "bread": None})
    assert h.height == 3
    assert h.generalize(["beer", "bread"], 2).tolist() == ["drinks", "bread"]
    assert h.lca(["beer", "wine"]) == (1, "alcohol")
    assert disease_hierarchy.lca(["flu", "colitis"]) == (3, "*")
    assert disease_hierarchy.leaf_counts(1).tolist() == [3, 2, 3, 2]


def test_interval_and_masking_builders():
    h = Hierarchy.from_intervals([0, 4, 5, 19], widths=(5, 10, 20))
    assert h.generalize([4, 5, 19], 1).tolist() == ["0-4", "5-9", "15-19"]
    assert h.generalize([4, 5, 19], 3).tolist() == ["0-19"] * 3
    with pytest.raises(InputError, match="must nest"):
        Hierarchy.from_intervals([1, 2], widths=(5, 7))
    z = Hierarchy.from_masking(["47677", "47602", "47678"])
    assert [z.generalize(["47677"], lv)[0] for lv in range(4)] == [
        "47677",
        "4767*",
        "476**",
        "47***",
    ]
    assert z.height == 5 and z.lca(["47677", "47678"]) == (1, "4767*")
    with pytest.raises(InputError, match="one length"):
        Hierarchy.from_masking(["123", "1234"])


@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=3),
        st.lists(st.text("xyz0123", min_size=1, max_size=4), min_size=1, max_size=4, unique=True),
        min_size=1,
        max_size=4,
    )
)
def test_every_leaf_round_trips(tree):
    leaves = [leaf for children in tree.values() for leaf in children]
    if len(set(leaves)) != len(leaves) or set(leaves) & set(tree):
        return  # a leaf under two parents is (rightly) an error, covered above
    h = Hierarchy.from_dict(tree)
    codes = h.encode(leaves)
    assert h.leaves[codes].tolist() == leaves
    assert h.generalize(leaves, 0).tolist() == leaves
    parents = [p for p, children in tree.items() for _ in children]
    assert h.generalize(leaves, 1).tolist() == parents
    assert (h.generalize(leaves, h.height) == "*").all()


def test_a_hierarchy_file_split_at_the_wrong_separator_is_named(tmp_path):
    """'Male,*' read at ';' is a one-column hierarchy: every data value then failed as
    'not in the hierarchy', an error naming the data file, not this one."""
    path = tmp_path / "sex.csv"
    path.write_text("Male,*\nFemale,*\n")
    with pytest.raises(InputError, match="wrong separator") as info:
        Hierarchy.from_csv(path)
    assert info.value.path == str(path) and "','" in str(info.value)
    assert Hierarchy.from_csv(path, sep=",").height == 1
    # a value missing from a hierarchy names the hierarchy
    with pytest.raises(InputError, match="not in the hierarchy 'sex'"):
        Hierarchy.from_csv(path, sep=",").encode(["Male", "Other"], column="gender")
