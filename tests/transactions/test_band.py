import json
import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transactions
from structanon.errors import InfeasibleError, InputError, PublisherWarning
from transactions.io import write_band


def independent_band_check(original, data, sensitive, p, source_index):
    assert sorted(source_index) == list(range(len(original)))
    original = [original[i] for i in source_index]  # published order
    group = list(data["group"])
    sizes = Counter(g for g in group if g >= 0)
    true_counts: dict = {}
    for t, g in zip(original, group):
        if g < 0:
            continue
        for s in t & sensitive:
            true_counts[(g, s)] = true_counts.get((g, s), 0) + 1
    published = {
        (g, s): c for g, summary in enumerate(data["sensitive_counts"]) for s, c in summary.items()
    }
    assert published == true_counts
    for (g, _s), c in true_counts.items():
        assert c * p <= sizes[g]
    for t, q, g in zip(original, data["qi"], group):
        if g < 0:
            assert q is None
        else:
            assert q == frozenset(t - sensitive)


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.sets(st.integers(0, 15), max_size=5), min_size=1, max_size=60),
    p=st.integers(2, 4),
    sens=st.sets(st.integers(0, 15), min_size=1, max_size=3),
)
def test_band_property(data, p, sens):
    n = len(data)
    freq = Counter(x for t in data for x in t)
    if any(freq[s] * p > n for s in sens):
        with pytest.raises(InfeasibleError):
            transactions.band_matrix(data, sens, p=p, measures=False)
        return
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rel = transactions.band_matrix(data, sens, p=p, measures=False)
    # an item the data lacks is accepted (named to the publisher only) and listed as given
    absent = [s for s in sens if freq[s] == 0]
    named = [str(w.message) for w in seen if issubclass(w.category, PublisherWarning)]
    assert bool(named) == bool(absent)
    assert rel.data["sensitive_items"] == sorted(sens, key=str)
    independent_band_check(data, rel.data, sens, p, rel.source_index)
    assert rel.suppressed == int((np.asarray(rel.data["group"]) < 0).sum())


def test_band_on_retail(retail_head):
    sens = {110, 271, 413}
    rel = transactions.band_matrix(retail_head, sens, p=5, seed=0)
    independent_band_check(retail_head, rel.data, sens, 5, rel.source_index)
    assert rel.risk["after"]["max_probability"] <= 0.2 + 1e-12
    assert rel.risk["before"]["max_probability"] > 0.2
    assert rel.utility["count_query_error"]["queries"] > 0


def test_band_errors():
    with pytest.raises(InputError, match="p must be an integer >= 2, got 1"):
        transactions.band_matrix([{1}], [1], p=1)
    with pytest.raises(InputError):
        transactions.band_matrix([{1}], "1", p=2)
    with pytest.raises(InfeasibleError, match="sensitive item 1"):
        transactions.band_matrix([{1}, {2}], [1], p=3)


def test_absent_sensitive_items_named_to_the_publisher():
    data = [{1, 9}, {2}, {3}, {4}]
    with pytest.warns(PublisherWarning, match="1 sensitive item.*zzz"):
        rel = transactions.band_matrix(data, [9, "zzz"], p=2, measures=False)
    assert rel.data["sensitive_items"] == [9, "zzz"]
    with pytest.raises(InputError, match="sensitive_items is empty"):
        transactions.band_matrix(data, [], p=2, measures=False)
    with pytest.raises(InputError, match="integers or strings"):
        transactions.band_matrix(data, [9, None], p=2, measures=False)


def _with_rare_item(item):
    """40 transactions, and one whose only item is the rare sensitive ``item``: with no
    other empty QI set to look like, it is suppressed."""
    data = [{i % 7, 100 + (i % 3)} if i % 4 == 0 else {i % 7} for i in range(40)]
    return [*data, {item}]


def test_band_sensitive_items_prove_no_presence(tmp_path):
    """The published list was the input's sensitive items, and absent ones were refused: an
    item counted in no group proved that a suppressed transaction holds it.  Two inputs that
    differ only in the rare item of a suppressed transaction now publish the same list."""
    sens = [102, 100, 901, 101, 900, 100]
    docs, dicts = [], []
    for rare in (900, 901):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            rel = transactions.band_matrix(_with_rare_item(rare), sens, p=2, seed=1)
        named = [str(w.message) for w in seen if issubclass(w.category, PublisherWarning)]
        assert named and str(1801 - rare) in named[0]  # the other one, to the publisher
        assert rel.data["group"][list(rel.source_index).index(40)] == -1  # suppressed
        assert rel.data["sensitive_items"] == [100, 101, 102, 900, 901]
        out = write_band(rel.data, tmp_path / f"band{rare}.json")
        docs.append(json.loads(out.read_text())["sensitive_items"])
        d = rel.to_dict()
        assert "do not occur" not in json.dumps(d, default=str)
        assert "warnings" not in rel.info
        dicts.append(d)
    assert docs[0] == docs[1] == [100, 101, 102, 900, 901]
    a, b = dicts
    for key in ("parameters", "suppressed", "n_individuals", "datatype"):
        assert a.get(key) == b.get(key), key
    assert a["info"]["input"] == b["info"]["input"]
    stats = ("sensitive_transactions", "suppressed")
    assert [a["info"]["band"][s] for s in stats] == [b["info"]["band"][s] for s in stats]
    text = a["info"]["transformation_text"]
    assert "the 5 sensitive items" in text and "1 transactions are suppressed" in text
    assert text.split(":")[0] == b["info"]["transformation_text"].split(":")[0]


def test_band_sensitive_items_as_given_text_of_integers():
    # the command line gives text; over integer items it is published as integers
    rel = transactions.band_matrix(
        [{1, 5}, {2}, {3}, {1, 6}], ["6", "5", "05", 5, "x"], p=2, measures=False
    )
    assert rel.data["sensitive_items"] == ["05", 5, 6, "x"]
    on_text = transactions.band_matrix([{"a", "s"}, {"b"}], ["s", "t"], p=2, measures=False)
    assert on_text.data["sensitive_items"] == ["s", "t"]
