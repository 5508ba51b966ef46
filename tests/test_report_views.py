"""Before/after views of the HTML reports: present for every data type, described in alt
text, and never showing an input count smaller than k."""

import re

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import graphs
import location
import querylogs
import tabular
import transactions
from graphs._figures import release_figures as graph_figures
from location._figures import GRID, INPUT_POINTS, _input_density
from location._figures import report_figures as location_figures
from querylogs._figures import release_figures as query_figures
from structanon.models import KAnonymity
from structanon.report import ReportFigure, write_report
from tabular._figures import release_figures as table_figures
from transactions._figures import figures_for

KEY = b"0123456789abcdef-views"


@pytest.fixture
def noiseless(monkeypatch):
    """The views without their noise, to check what they count against a recount."""
    monkeypatch.setattr("structanon.report.VIEW_NOISE_SCALE", 0.0)


def _views(figures):
    return [f for f in figures if isinstance(f, ReportFigure) and f.view]


def _labels(figure):
    return {t.get_text() for ax in figure.axes for t in ax.get_yticklabels()}


def _table(n=400):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "zip": rng.choice(["100", "101", "102"], n),
            "disease": rng.choice(["a", "b", "c"], n),
        }
    )
    df.loc[7, "zip"] = "999"  # one record alone with its value
    df.loc[8, "age"] = 400  # an outlier far from every other age
    return df


def test_tabular_view_shows_values_before_and_after_without_small_counts(tmp_path):
    df = _table()
    release = tabular.anonymize(
        df, {"age": "numeric", "zip": "set"}, "disease", [KAnonymity(5)], "mondrian", key=KEY
    )
    (view,) = _views(table_figures(release, df))
    labels = _labels(view.figure)
    # one record alone with its value draws no bar, not even an "other" bar of width 1
    assert "999" not in labels and "other (rarer values)" not in labels
    # the outlier's bin (beyond 80) holds one record: it is hidden and the axis stops before it
    assert not any(re.match(r"^(3\d\d|4\d\d)", label) for label in labels)
    assert {ax.get_title() for ax in view.figure.axes} >= {"zip: input (values)", "zip: published"}
    assert "age" in view.alt and "zip" in view.alt and len(view.alt) > len(view.title)
    page = write_report(release, tmp_path / "r.html", table_figures(release, df)).read_text()
    section = page.split("id='before-after'")[1].split("<h2")[0]
    assert "<img alt='Value distribution" in section
    assert "every" not in view.title  # titles stay short; the alt text describes


def _input_bars(release, df, column):
    (view,) = _views(table_figures(release, df))
    (ax,) = [ax for ax in view.figure.axes if ax.get_title().startswith(f"{column}: input")]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    return dict(zip(labels, ax.containers[0].datavalues.tolist()))


def test_tabular_view_of_neighbours_one_rare_record_apart_is_the_same(noiseless):
    df = _table()
    without = df.drop(index=7)  # the only record with zip 999
    bars = []
    for table in (df, without):
        release = tabular.anonymize(
            table,
            {"age": "numeric", "zip": "set"},
            "disease",
            [KAnonymity(5)],
            "mondrian",
            key=KEY,
        )
        bars.append(_input_bars(release, table, "zip"))
    assert bars[0] == bars[1]
    # rare values held by k records or more together are drawn as one "other" bar
    many = df.copy()
    many.loc[10:15, "zip"] = [f"9{i}" for i in range(6)]
    release = tabular.anonymize(
        many, {"age": "numeric", "zip": "set"}, "disease", [KAnonymity(5)], "mondrian", key=KEY
    )
    assert _input_bars(release, many, "zip")["other (rarer values)"] == 7


def test_querylogs_view_counts_users_of_widely_typed_queries(noiseless):
    log = querylogs.synthetic_log(60, 3000, seed=2)
    release = querylogs.anonymize(log, 4, key=KEY, measures=False)
    (view,) = _views(query_figures(release, log))
    users = log.assign(q=log["query"].str.strip().str.lower()).groupby("q")["user"].nunique()
    shown = {label for label in _labels(view.figure) if label}
    assert shown and all(users[label] >= 4 for label in shown)
    before = view.figure.axes[0].containers[0].datavalues
    assert (
        sorted(before.tolist(), reverse=True)
        == users[list(shown)].sort_values(ascending=False).tolist()
    )
    published = release.data.assign(q=release.data["query"].str.strip().str.lower())
    after = view.figure.axes[0].containers[1].datavalues
    ticks = [t.get_text() for t in view.figure.axes[0].get_yticklabels()]
    kept = published.groupby("q")["user"].nunique()
    assert [int(kept.get(t, 0)) for t in ticks if t in shown] == [
        int(a) for t, a in zip(ticks, after) if t in shown
    ]
    assert "at least 4" in view.alt


def test_two_reports_one_person_apart_differ_by_noise_not_by_the_person():
    """The input bars were exact counts: two reports of inputs one person apart differed in
    exactly that person's bars (a user who typed "google.com" twice, a record's age bin).
    With the views' noise, the difference of the two bars is the person's contribution in
    a minority of draws only, and each bar stays close to its count."""
    df = _table()
    person = int(np.flatnonzero(df["zip"] == "100")[0])
    without = df.drop(index=person)
    spec = ({"age": "numeric", "zip": "set"}, "disease", [KAnonymity(5)], "mondrian")
    exact = int((df["zip"] == "100").sum())
    a_release = tabular.anonymize(df, *spec, key=KEY, measures=False)
    b_release = tabular.anonymize(without, *spec, key=KEY, measures=False)
    hits, trials = 0, 40
    for _ in range(trials):
        a = _input_bars(a_release, df, "zip")["100"]
        b = _input_bars(b_release, without, "zip")["100"]
        assert abs(a - exact) < 40 and abs(b - (exact - 1)) < 40
        hits += a - b == 1
    assert hits < trials / 2, f"{hits} of {trials} differences gave the person away"


def _annotations(figure) -> list[str]:
    return [t.get_text() for ax in figure.axes for t in ax.texts]


def test_querylogs_view_names_only_published_queries_and_no_input_count():
    """The view printed query texts the release kept none of ("myspace": 80 -> 0 events),
    with their exact input counts; it names only published queries, and only the release's
    bars carry a number."""
    log = querylogs.synthetic_log(60, 3000, seed=2)
    # an e-mail address 30 users typed: among the top queries, and scrubbed from the release
    users = log["user"].unique()[:30]
    extra = log.iloc[: users.size].assign(user=users, query="jane.doe@example.com")
    log = pd.concat([log, extra], ignore_index=True)
    release = querylogs.anonymize(log, 4, key=KEY, measures=False)
    (view,) = _views(query_figures(release, log))
    published = set(release.data["query"].str.strip().str.lower())
    assert "jane.doe@example.com" not in published
    bars = view.figure.axes[0].containers
    before, after = bars[0].datavalues, bars[1].datavalues
    ticks = [t.get_text() for t in view.figure.axes[0].get_yticklabels()]  # in bar order
    assert len(ticks) == after.size
    hidden = [t for t, n in zip(ticks, after) if n == 0]
    assert all(t.endswith("(not in the release)") for t in hidden)
    assert all(t in published for t, n in zip(ticks, after) if n > 0)
    numbers = sorted(int(t.replace(",", "")) for t in _annotations(view.figure))
    assert numbers == sorted(int(v) for v in after)  # the input's bars: no number
    assert before.size == after.size and hidden  # some top query the release dropped
    assert not any("jane" in t for t in ticks)


def test_transactions_view_compares_supports_of_frequent_itemsets(noiseless):
    rng = np.random.default_rng(1)
    data = [
        set(rng.choice(30, size=rng.integers(1, 6), replace=False).tolist()) for _ in range(400)
    ]
    release = transactions.km_anonymize(data, k=5, m=2, key=KEY)
    (view,) = _views(figures_for(release, data))
    bars = view.figure.axes[0].containers
    before, after = bars[0].datavalues, bars[1].datavalues
    assert before.size == after.size > 0 and (before >= 5).all()
    top_item = max(range(30), key=lambda i: sum(i in t for t in data))
    assert before.max() == sum(top_item in t for t in data)
    assert np.all(after >= 0)


def test_transactions_view_names_no_item_the_release_generalized():
    """The view printed raw items with exact input supports where the release published
    only ranges of them; an itemset is named only when the release shows its items."""
    rng = np.random.default_rng(1)
    data = [
        set(rng.choice(300, size=rng.integers(1, 6), replace=False).tolist()) for _ in range(400)
    ]
    release = transactions.km_anonymize(data, k=5, m=2, key=KEY)
    published = {str(item) for basket in release.data if basket for item in basket}
    (view,) = _views(figures_for(release, data))
    ticks = [t.get_text() for t in view.figure.axes[0].get_yticklabels()]
    assert ticks and any(t.endswith("not in the release)") for t in ticks)
    for tick in ticks:
        if not tick.endswith("not in the release)"):
            assert all(part in published for part in tick.split(" + ")), tick
    after = view.figure.axes[0].containers[1].datavalues
    assert len(_annotations(view.figure)) == after.size  # numbers on the release's bars only


def test_graphs_view_is_the_degree_distribution(noiseless):
    graph = nx.barabasi_albert_graph(300, 3, seed=1)
    release = graphs.k_degree_anonymize(graph, 5, key=KEY, measures=False)
    (view,) = _views(graph_figures(graph, release))
    assert "k = 5" in view.alt and view.figure.axes[0].get_xlabel().startswith("degree")
    # the input's degrees held by fewer than k nodes (a hub's own degree) are not drawn
    degrees = np.array([d for _, d in graph.degree()])
    values, counts = np.unique(degrees, return_counts=True)
    assert (counts < 5).any()
    line = next(ln for ln in view.figure.axes[0].get_lines() if "input" in ln.get_label())
    drawn = dict(zip(line.get_xdata(), line.get_ydata()))
    assert drawn == {v: c for v, c in zip(values, counts) if c >= 5}


def test_location_view_hides_cells_fewer_than_k_users_visited(noiseless):
    df = location.synthetic_log(6000, 60, seed=3)
    release = location.cloak(df, 5, key=KEY, measures=False)
    (view,) = _views(location_figures(release))
    assert "left blank" in view.alt and len(view.figure.axes) >= 2
    # the same view from the input DataFrame given explicitly
    (again,) = _views(location_figures(release, original=df))
    assert again.alt == view.alt
    edges = (np.linspace(0, 1, GRID + 1), np.linspace(0, 1, GRID + 1))
    lon = np.array([0.1, 0.1, 0.1, 0.9])
    lat = np.array([0.1, 0.1, 0.1, 0.9])
    users = np.array([0, 1, 2, 3])  # three users in one cell, one alone in another
    density = _input_density((lon, lat, users), edges, k=3)
    assert density.sum() == 3 and (density > 0).sum() == 1  # the lone user's cell: as unvisited
    # as the attacker reads the picture: one layer (no other marks them), in which every
    # cell fewer than k users visited is blank (no data), exactly like a cell nobody visited
    (layer,) = view.figure.axes[0].get_images()
    values = layer.get_array()
    blank = np.ma.getmaskarray(values) | ~np.isfinite(np.ma.filled(values, np.nan))
    lon, lat, users = getattr(release, INPUT_POINTS)[:3]
    x = np.searchsorted(np.linspace(*layer.get_extent()[:2], GRID + 1), lon, side="right") - 1
    y = np.searchsorted(np.linspace(*layer.get_extent()[2:], GRID + 1), lat, side="right") - 1
    inside = (x >= 0) & (x < GRID) & (y >= 0) & (y < GRID)
    per_cell = pd.DataFrame({"c": (y * GRID + x)[inside], "u": users[inside]})
    n_users = per_cell.groupby("c")["u"].nunique()
    few = n_users.index[n_users < 5].to_numpy()
    assert few.size and blank.reshape(-1)[few].all()


@pytest.mark.parametrize("legacy", [True, False])
def test_reports_accept_plain_pairs_and_report_figures(tmp_path, legacy):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    item = ("A line", fig) if legacy else ReportFigure("A line", fig, "A rising line", view=True)
    release = querylogs.anonymize(querylogs.synthetic_log(30, 600, seed=1), 3, key=KEY)
    page = write_report(release, tmp_path / "r.html", [item]).read_text()
    assert ("id='before-after'" in page) is not legacy
    assert ("alt='A line'" if legacy else "alt='A rising line'") in page


def test_location_input_density_floor_is_k_users_in_one_window(noiseless):
    edges = (np.linspace(0, 1, GRID + 1), np.linspace(0, 1, GRID + 1))
    lon = np.array([0.1, 0.1, 0.1, 0.9, 0.9, 0.9])
    lat = np.array([0.1, 0.1, 0.1, 0.9, 0.9, 0.9])
    users = np.array([0, 1, 2, 0, 1, 2])
    windows = np.array([5, 5, 5, 5, 6, 7])  # three users in one cell, but one per window
    density = _input_density((lon, lat, users, windows), edges, k=3)
    assert density.sum() == 3 and (density > 0).sum() == 1
    # an attacker diffing two reports one user apart: a cell that user shared with k-1
    # others only over the whole log stays blank in both
    neighbour = users != 2
    without = _input_density(
        (lon[neighbour], lat[neighbour], users[neighbour], windows[neighbour]), edges, k=3
    )
    assert density[GRID - 9, GRID - 9] == without[GRID - 9, GRID - 9] == 0


def test_location_view_from_the_input_frame_equals_the_kept_points(noiseless):
    from location._figures import _points

    df = location.synthetic_log(3000, 40, seed=5)
    release = location.cloak(df, 2, window="1h", key=KEY, measures=False)
    edges = tuple(np.linspace(df[c].min(), df[c].max(), GRID + 1) for c in ("lon", "lat"))
    kept = _input_density(_points(release, None), edges, 2)
    given = _input_density(_points(release, df), edges, 2)
    assert (kept == given).all() and (kept > 0).sum() > 1


def test_disassociation_view_draws_no_pair_fewer_than_k_baskets_hold(noiseless):
    from pathlib import Path

    from transactions import metrics
    from transactions._data import encode_baskets

    path = Path(transactions.__file__).parent / "data" / "retail_head2000.dat"
    baskets = [line.split() for line in path.read_text().splitlines()[:300]]
    k = 5
    release = transactions.disassociate(baskets, k=k, m=2, key=KEY, measures=False)
    _, true = metrics.top_itemsets(encode_baskets(baskets), 2, 100)
    assert (true < k).any()  # the top 100 pairs of this input hold rare ones
    (view,) = [f for f in _views(figures_for(release, baskets)) if "pairs" in f.title]
    drawn = np.concatenate([c.get_offsets()[:, 0] for c in view.figure.axes[0].collections])
    assert drawn.size == 2 * int((true >= k).sum()) and drawn.min() >= k
