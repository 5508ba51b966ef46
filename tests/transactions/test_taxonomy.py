import numpy as np
import pytest

from structanon import Hierarchy
from structanon.errors import InputError
from transactions import item_taxonomy
from transactions._taxonomy import Taxonomy


def test_balanced_tree_shape():
    tax = item_taxonomy([set(range(12))], fanout=3)
    assert tax.n_items == 12 and tax.labels[tax.root] == "*"
    # 12 leaves -> aligned blocks of 3 ids -> blocks of 9 (9..11 alone in 9..17 goes up) -> root
    assert tax.height == 3
    assert tax.size[tax.root] == 12
    internal = tax.labels[~tax.is_leaf].tolist()
    assert set(internal) == {"0..2", "3..5", "6..8", "9..11", "0..8", "*"}
    children_of_root = tax.labels[tax.parent == tax.root].tolist()
    assert sorted(children_of_root) == ["0..8", "9..11"]
    # every internal node has at least two children
    kids = np.bincount(tax.parent[tax.parent >= 0], minlength=tax.n_nodes)
    assert (kids[~tax.is_leaf] >= 2).all()


def _blocks(tax):
    """(lo, hi) of every internal label but the root."""
    labels = tax.labels[~tax.is_leaf].tolist()
    return [tuple(int(x) for x in str(label).split("..")) for label in labels if label != "*"]


def test_automatic_labels_do_not_name_the_input_items():
    """An attacker reading a range label learnt its first and last item were in the input
    (a rare one included), and neighbours one basket apart shifted every later label."""
    rng = np.random.default_rng(4)
    items = sorted({int(x) for x in rng.choice(10_000, 300, replace=False)})
    data = [set(items[i : i + 3]) for i in range(0, len(items), 3)]
    for fanout in (2, 5, 10):
        tax = item_taxonomy(data, fanout=fanout)
        for lo, hi in _blocks(tax):
            width = hi - lo + 1  # an aligned block of fanout ** level ids, fixed in advance
            level = round(np.log(width) / np.log(fanout))
            assert width == fanout**level and lo % width == 0
        # a neighbour without one basket: leaving it out never moves or adds a label
        without = item_taxonomy(data[1:], fanout=fanout)
        assert set(_blocks(without)) <= set(_blocks(tax))
    texts = item_taxonomy([{"alice's pills", "zebra"}, {"milk", "bread"}], fanout=2)
    names = {"alice's pills", "zebra", "milk", "bread"}
    for label in texts.labels[~texts.is_leaf].tolist():
        assert not any(name in str(label) for name in names)


def test_balanced_no_single_child_groups():
    tax = item_taxonomy([set(range(7))], fanout=3)
    kids = np.bincount(tax.parent[tax.parent >= 0], minlength=tax.n_nodes)
    assert (kids[~tax.is_leaf] >= 2).all()


def test_frequency_order_groups_frequent_items():
    data = [{0, 5}, {0, 5}, {0, 5}, {1}, {2}, {3}]
    tax = item_taxonomy(data, fanout=2, order="frequency")
    i0, i5 = list(tax.domain).index(0), list(tax.domain).index(5)
    assert tax.parent[i0] == tax.parent[i5]


def test_from_nested_dict_matches_independent_ancestors(checks):
    GROCERIES, ancestors_from_dict = checks.GROCERIES, checks.ancestors_from_dict
    data = [{"beer", "milk"}, {"apple"}]
    tax = item_taxonomy(data, hierarchy=GROCERIES)
    anc = ancestors_from_dict(GROCERIES)
    for i, item in enumerate(tax.domain.tolist()):
        path = [str(tax.labels[x]) for x in tax.anc[i, : tax.depth[i] + 1]][::-1][1:]
        assert path == anc[item]
    assert tax.n_leaves == 10 and tax.size[tax.root] == 10


def test_from_arx_csv(tmp_path):
    path = tmp_path / "items.csv"
    path.write_text("beer;alcohol;*\nwine;alcohol;*\nmilk;dairy;*\n")
    tax = item_taxonomy([{"beer", "milk"}], hierarchy=str(path))
    assert tax.height == 2 and sorted(tax.labels[~tax.is_leaf].tolist()) == [
        "*",
        "alcohol",
        "dairy",
    ]


def test_from_hierarchy_object_and_json(tmp_path, checks):
    GROCERIES = checks.GROCERIES
    h = Hierarchy.from_dict(GROCERIES)
    assert item_taxonomy([{"beer"}], hierarchy=h).n_leaves == 10
    import json

    p = tmp_path / "t.json"
    p.write_text(json.dumps(GROCERIES))
    assert item_taxonomy([{"beer"}], hierarchy=p).n_leaves == 10


def test_item_missing_from_taxonomy_is_named(checks):
    GROCERIES = checks.GROCERIES
    with pytest.raises(InputError, match="tofu"):
        item_taxonomy([{"beer", "tofu"}], hierarchy=GROCERIES)


def test_bad_fanout():
    with pytest.raises(InputError, match="fanout"):
        item_taxonomy([{1, 2}], fanout=1)
    with pytest.raises(InputError):
        Taxonomy.balanced(np.array([1, 2], dtype=object), 2, order="size")


def test_an_item_missing_from_a_taxonomy_file_names_the_file(tmp_path):
    import transactions

    path = tmp_path / "tax.csv"
    path.write_text("1;a;*\n2;a;*\n3;b;*\n")
    data = [{1, 2, 3}, {2, 3}, {1, 3, 4}, {1, 2}, {2, 4}]
    with pytest.raises(InputError, match="not in the taxonomy") as info:
        transactions.km_anonymize(data, k=2, m=2, hierarchy=str(path), measures=False)
    assert info.value.path == str(path) and info.value.value == 4
