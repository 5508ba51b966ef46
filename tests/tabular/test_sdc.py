"""Statistical disclosure control by perturbation: microaggregation, noise, rank swapping,
PRAM, recoding and sampling (issue 17).  Each method's defining property is a hypothesis
test checked with independent code; the chapter's worked examples are exact tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tabular
from structanon import InfeasibleError, InputError, PublisherWarning
from structanon.microaggregation import mdav, mdav_blocked
from tabular._noise import noise_covariance
from tabular._pram import basic_transition, invariant_transition
from tabular._swap import swap_ranks

KEY = b"0123456789abcdef-sdc"
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def correlated(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cov = [[1.0, 0.8, 0.5], [0.8, 1.0, 0.6], [0.5, 0.6, 1.0]]
    x = rng.multivariate_normal([10.0, 50.0, 100.0], cov, size=n)
    return pd.DataFrame(x, columns=["a", "b", "c"])


def textbook_sse_sst(x: np.ndarray, labels: np.ndarray) -> float:
    """SSE/SST by explicit loops over the groups (independent of the package's code)."""
    sse = 0.0
    for g in set(labels.tolist()):
        members = x[labels == g]
        sse += float(((members - members.mean(axis=0)) ** 2).sum())
    return sse / float(((x - x.mean(axis=0)) ** 2).sum())


# ----------------------------------------------------------------------- microaggregation


@FAST
@given(
    n=st.integers(4, 60),
    k=st.integers(2, 5),
    d=st.integers(1, 3),
    seed=st.integers(0, 10_000),
)
def test_microaggregate_publishes_groups_of_k_to_2k_minus_1_identical_vectors(n, k, d, seed):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, d)).round(2), columns=[f"x{j}" for j in range(d)])
    df["label"] = np.arange(n)
    if k > n:
        with pytest.raises(InfeasibleError):
            tabular.microaggregate(df, list(df.columns[:d]), k, measures=False)
        return
    release = tabular.microaggregate(df, list(df.columns[:d]), k, key=KEY, measures=False)
    assert release.verify().passed
    published = release.data
    # every individual is accounted for, each once
    assert sorted(published["label"]) == list(range(n))
    # recount classes of identical published vectors: each holds at least k records
    sizes = published.groupby(list(df.columns[:d])).size()
    assert sizes.min() >= k
    # the MDAV groups themselves hold k .. 2k - 1 records
    groups = np.bincount(release.partition.labels)
    assert groups.min() >= k and groups.max() <= max(2 * k - 1, n if n < 2 * k else 0)
    # each published vector is the mean of its group's original vectors
    original = df.set_index("label").loc[published["label"]].to_numpy()[:, :d]
    for _, rows in published.groupby(list(df.columns[:d])).groups.items():
        members = published.index.get_indexer(rows)
        # identical published vectors; the mean of their originals equals them when the
        # class is one MDAV group (classes may also merge groups with equal means)
        assert np.allclose(published.iloc[members, :d].to_numpy(), published.iloc[members[0], :d])
    assert original.shape == (n, d)


def test_microaggregate_information_loss_matches_textbook_and_is_reported():
    df = correlated(600)
    release = tabular.microaggregate(df, ["a", "b", "c"], 5, key=KEY)
    x = df.to_numpy()
    labels = mdav(x, 5, standardize=True)
    assert release.utility["sse_sst"] == pytest.approx(textbook_sse_sst(x, labels))
    assert 0 < release.utility["il1s"] < 1
    assert release.risk["before"]["distance_linkage"] == 1.0
    assert release.risk["after"]["distance_linkage"] < 0.5
    assert release.info["group_sizes"]["min"] >= 5


def test_microaggregate_blocked_path_keeps_groups_and_loses_little():
    df = correlated(3000, seed=1)
    x = df.to_numpy()
    full = tabular.microaggregate(df, list(df), 3, block_size=None, key=KEY, measures=False)
    blocked = tabular.microaggregate(df, list(df), 3, block_size=600, key=KEY, measures=False)
    assert blocked.verify().passed
    sizes = np.bincount(blocked.partition.labels)
    assert sizes.min() >= 3 and sizes.max() <= 5
    loss_full = textbook_sse_sst(x, full.partition.labels)
    loss_blocked = textbook_sse_sst(x, blocked.partition.labels)
    assert loss_blocked <= 1.25 * loss_full
    assert blocked.parameters["block_size"] == 600


def test_mdav_blocked_equals_mdav_on_one_block():
    x = correlated(200).to_numpy()
    assert np.array_equal(mdav_blocked(x, 4, block_size=500), mdav(x, 4))


def test_microaggregate_generic_mixed_data():
    df = pd.DataFrame(
        {
            "age": [20, 21, 22, 50, 51, 52, 80, 81, 82],
            "job": ["a", "a", "b", "c", "c", "c", "d", "e", "d"],
            "edu": [1, 1, 2, 2, 2, 3, 3, 3, 3],
        }
    )
    release = tabular.microaggregate(
        df, ["age"], 3, "mdav-generic", nominal=["job"], ordinal=["edu"], key=KEY, measures=False
    )
    assert release.verify().passed
    out = release.data.sort_values("age").reset_index(drop=True)
    assert out["age"].tolist() == [21.0] * 3 + [51.0] * 3 + [81.0] * 3
    assert out["job"].tolist() == ["a"] * 3 + ["c"] * 3 + ["d"] * 3  # group modes
    assert out["edu"].tolist() == [1] * 3 + [2] * 3 + [3] * 3  # lower medians


def test_microaggregate_bad_input():
    df = pd.DataFrame({"a": [1.0, 2.0, np.nan], "s": ["x", "y", "z"]})
    with pytest.raises(InputError, match="missing") as info:
        tabular.microaggregate(df, ["a"], 2)
    assert info.value.column == "a" and info.value.row == 2
    with pytest.raises(InputError, match="numeric"):
        tabular.microaggregate(df, ["s"], 2)
    with pytest.raises(InputError):
        tabular.microaggregate(df, ["nope"], 2)
    with pytest.raises(InputError, match="method"):
        tabular.microaggregate(df.fillna(0), ["a"], 2, method="kmeans")
    with pytest.raises(InputError, match="mdav-generic"):
        tabular.microaggregate(df.fillna(0), ["a"], 2, nominal=["s"])
    with pytest.raises(InputError, match="block_size"):
        tabular.microaggregate(df.fillna(0), ["a"], 2, block_size=3)
    with pytest.raises(InputError, match="twice"):
        tabular.microaggregate(df.fillna(0), ["a", "a"], 2)
    with pytest.raises(InputError, match="k"):
        tabular.microaggregate(df.fillna(0), ["a"], 0)


# ------------------------------------------------------------------------ noise addition

CHAPTER_X = np.arange(-5, 6, dtype=float)
CHAPTER_E1 = [0.312, -0.093, -0.287, 0.009, -0.024, 0.141, -0.301, 0.199, -0.079, -0.427, 0.039]
CHAPTER_E2 = [0.227, 0.191, 0.303, -0.001, 0.098, -0.289, -0.412, -0.287, 0.123, 0.164, -0.101]


def test_chapter_noise_example_statistics_follow_the_derivation():
    """The chapter's x1 = x2 = -5..5 with its printed errors e1, e2: y = x + e, and the
    sample moments of y decompose exactly as the chapter's derivation says."""
    x = np.column_stack([CHAPTER_X, CHAPTER_X])
    e = np.column_stack([CHAPTER_E1, CHAPTER_E2])
    y = x + e
    assert y[:, 0].tolist() == pytest.approx([v + w for v, w in zip(CHAPTER_X, CHAPTER_E1)])
    cov = lambda a, b: float(np.cov(a, b, ddof=1)[0, 1])  # noqa: E731
    # Cov(y1, y2) = Cov(x1, x2) + Cov(x1, e2) + Cov(e1, x2) + Cov(e1, e2)
    parts = cov(x[:, 0], x[:, 1]) + cov(x[:, 0], e[:, 1]) + cov(e[:, 0], x[:, 1])
    assert cov(y[:, 0], y[:, 1]) == pytest.approx(parts + cov(e[:, 0], e[:, 1]))
    # E(y) = E(x) + E(e); Var(x) = 11 for -5..5
    assert y.mean(axis=0) == pytest.approx(x.mean(axis=0) + e.mean(axis=0))
    assert np.var(CHAPTER_X, ddof=1) == 11.0
    # the printed errors are small: alpha = Var(e) / Var(x) is below 1%
    alpha = np.var(e, axis=0, ddof=1) / 11.0
    assert (alpha < 0.01).all()
    # with noise of covariance alpha * Var(x) on independent columns, as add_noise draws
    assert noise_covariance(x, 0.005, "uncorrelated") == pytest.approx(np.diag([0.055, 0.055]))


@settings(max_examples=10, deadline=None)
@given(alpha=st.floats(0.05, 1.0), method=st.sampled_from(["uncorrelated", "correlated", "kim"]))
def test_add_noise_scales_variances_by_one_plus_alpha(alpha, method):
    df = correlated(20_000, seed=3)
    release = tabular.add_noise(df, ["a", "b", "c"], alpha, method, key=KEY, measures=False)
    y = release.data[["a", "b", "c"]].to_numpy()
    x = df.to_numpy()
    ratio = y.var(axis=0, ddof=1) / x.var(axis=0, ddof=1)
    expected = 1.0 if method == "kim" else 1 + alpha  # Kim's transformation restores Var
    assert ratio == pytest.approx(np.full(3, expected), rel=0.05)
    if method == "kim":
        assert np.cov(y, rowvar=False) == pytest.approx(np.cov(x, rowvar=False), abs=0.05)
    assert y.mean(axis=0) == pytest.approx(x.mean(axis=0), abs=0.05)
    rx, ry = np.corrcoef(x, rowvar=False), np.corrcoef(y, rowvar=False)
    if method != "uncorrelated":  # correlations preserved
        assert ry == pytest.approx(rx, abs=0.03)
    else:  # correlations shrink by 1 / (1 + alpha)
        assert ry[0, 1] == pytest.approx(rx[0, 1] / (1 + alpha), abs=0.03)


def test_add_noise_is_reproducible_with_a_key_only():
    df = correlated(300)
    a = tabular.add_noise(df, ["a", "b"], 0.2, key=KEY, measures=False).data
    b = tabular.add_noise(df, ["a", "b"], 0.2, key=KEY, measures=False).data
    assert a.to_csv(index=False) == b.to_csv(index=False)
    c = tabular.add_noise(df, ["a", "b"], 0.2, measures=False).data
    d = tabular.add_noise(df, ["a", "b"], 0.2, measures=False).data
    assert c.to_csv(index=False) != d.to_csv(index=False)
    assert not np.isin(c["a"].to_numpy(), d["a"].to_numpy()).any()


def test_add_noise_bad_input():
    df = correlated(10)
    for alpha in (0, -1, float("nan"), "x"):
        with pytest.raises(InputError, match="alpha"):
            tabular.add_noise(df, ["a"], alpha)
    with pytest.raises(InputError, match="method"):
        tabular.add_noise(df, ["a"], 0.1, "laplace")
    with pytest.raises(InputError):
        tabular.add_noise(df.assign(s="x"), ["s"], 0.1)
    with pytest.raises(InputError, match="no rows"):
        tabular.add_noise(df.iloc[:0], ["a"], 0.1)


# ------------------------------------------------------------------------- rank swapping


def _rank_interval(sorted_values: np.ndarray, value: float) -> tuple[int, int]:
    return (
        int(np.searchsorted(sorted_values, value, "left")),
        int(np.searchsorted(sorted_values, value, "right")) - 1,
    )


@FAST
@given(
    values=st.lists(st.integers(0, 30), min_size=2, max_size=80),
    p=st.floats(1, 100),
    seed=st.integers(0, 1000),
)
def test_rank_swap_keeps_each_multiset_and_swaps_within_p_percent(values, p, seed):
    df = pd.DataFrame({"v": values, "w": values[::-1], "id": range(len(values))})
    release = tabular.rank_swap(df, ["v", "w"], p, seed=seed, key=KEY, measures=False)
    out = release.data.set_index("id").loc[range(len(values))]
    window = int(np.floor(p * len(values) / 100 + 1e-9))
    for col in ("v", "w"):
        assert sorted(out[col]) == sorted(df[col])  # the same multiset, exactly
        ranked = np.sort(df[col].to_numpy())
        for before, after in zip(df[col], out[col]):
            lo_a, hi_a = _rank_interval(ranked, before)
            lo_b, hi_b = _rank_interval(ranked, after)
            gap = max(0, lo_b - hi_a, lo_a - hi_b)  # closest ranks the two values can take
            assert gap <= window


def test_rank_swap_chapter_example_pairs_the_two_closest_incomes():
    """The chapter's incomes 100, 10.000, 120 per day with p = 34 % of 3 records (one
    rank): the lowest value can only trade with its rank neighbour 120, after which 10.000
    has no free partner left, whatever the draws."""
    df = pd.DataFrame({"income": [100.0, 10_000.0, 120.0], "illness": ["n", "n", "y"]})
    for seed in range(5):
        release = tabular.rank_swap(df, ["income"], 34, seed=seed, measures=False)
        pairs = sorted(map(tuple, release.data[["income", "illness"]].to_numpy().tolist()))
        assert pairs == [(100.0, "y"), (120.0, "n"), (10_000.0, "n")]
    assert swap_ranks(np.array([100.0, 10_000.0, 120.0]), 1, np.random.default_rng(0)).tolist() == [
        120.0,
        10_000.0,
        100.0,
    ]


def test_rank_swap_bad_input():
    df = correlated(10)
    for p in (0, 101, -3, "x"):
        with pytest.raises(InputError, match="p"):
            tabular.rank_swap(df, ["a"], p)


# ------------------------------------------------------------------------------- PRAM


@FAST
@given(
    counts=st.lists(st.integers(1, 50), min_size=2, max_size=6),
    keep=st.floats(0.3, 1.0),
)
def test_invariant_pram_keeps_expected_marginals(counts, keep):
    p = np.asarray(counts, dtype=float) / sum(counts)
    star = invariant_transition(basic_transition(len(counts), keep), p)
    assert (star >= -1e-12).all()
    assert star.sum(axis=1) == pytest.approx(np.ones(len(counts)))
    assert p @ star == pytest.approx(p)  # p^T P = p


def test_pram_publishes_the_matrix_and_expected_marginals_hold():
    df = pd.DataFrame({"edu": ["a"] * 500 + ["b"] * 300 + ["c"] * 200})
    release = tabular.pram(df, ["edu"], keep=0.7, key=KEY, measures=False)
    entry = release.info["transition"]["edu"]
    matrix = np.asarray(entry["matrix"])
    p = np.array([0.5, 0.3, 0.2])
    assert entry["categories"] == ["a", "b", "c"]
    assert p @ matrix == pytest.approx(p)
    published = release.data["edu"].value_counts(normalize=True).reindex(["a", "b", "c"])
    # published shares deviate from p by sampling noise only (n = 1000)
    assert published.to_numpy() == pytest.approx(p, abs=0.06)
    assert release.verify().passed


def test_pram_measures_categorical_risk_before_and_after():
    """Regression: the risk measures of a release with categorical columns only."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), 300), "b": rng.choice(list("pq"), 300)})
    release = tabular.pram(df, ["a", "b"], keep=0.6, key=KEY)
    for side in ("before", "after"):
        for name in ("distance_linkage", "probabilistic_linkage", "special_uniques"):
            assert name in release.risk[side]
    assert release.risk["after"]["distance_linkage"] < release.risk["before"]["distance_linkage"]
    assert 0 < release.utility["a_changed_share"] < 1


def test_pram_with_a_given_matrix_and_without_invariance():
    df = pd.DataFrame({"s": ["x", "y"] * 200})
    given = pd.DataFrame([[1.0, 0.0], [0.0, 1.0]], index=["x", "y"], columns=["x", "y"])
    release = tabular.pram(df, ["s"], {"s": given}, invariant=False, key=KEY, measures=False)
    assert sorted(release.data["s"]) == sorted(df["s"])  # identity matrix: nothing moves
    assert release.info["transition"]["s"]["matrix"] == [[1.0, 0.0], [0.0, 1.0]]


def test_pram_bad_input():
    df = pd.DataFrame({"s": ["x", "y", None]})
    with pytest.raises(InputError, match="missing"):
        tabular.pram(df, ["s"])
    df = pd.DataFrame({"s": ["x", "y"]})
    with pytest.raises(InputError, match="2 x 2"):
        tabular.pram(df, ["s"], np.eye(3))
    with pytest.raises(InputError, match="sum to 1"):
        tabular.pram(df, ["s"], [[0.5, 0.4], [0.5, 0.5]])
    with pytest.raises(InputError, match=">= 0"):
        tabular.pram(df, ["s"], [[1.5, -0.5], [0.5, 0.5]])
    with pytest.raises(InputError, match="keep"):
        tabular.pram(df, ["s"], keep=0)


# ------------------------------------------------------------------ recoding and sampling

CHAPTER_TABLE = pd.DataFrame(
    {
        "Sex": list("ffmfmfmmf"),
        "Age": [20, 20, 18, 23, 18, 21, 25, 19, 23],
        "Education": [
            "secondary",
            "tertiary",
            "secondary",
            "postgrad.",
            "secondary",
            "tertiary",
            "postgrad.",
            "secondary",
            "tertiary",
        ],
    }
)
CHAPTER_CODED_AGE = ["20", "20", "18", "21+", "18", "21+", "21+", "19", "21+"]
CHAPTER_CODED_EDUCATION = [
    "secondary",
    "tertiary and above",
    "secondary",
    "tertiary and above",
    "secondary",
    "tertiary and above",
    "tertiary and above",
    "secondary",
    "tertiary and above",
]
ABOVE = {"tertiary": "tertiary and above", "postgrad.": "tertiary and above"}


def test_chapter_top_coding_example():
    assert tabular.top_code(CHAPTER_TABLE["Age"], 21).tolist() == CHAPTER_CODED_AGE
    coded = tabular.global_recode(CHAPTER_TABLE["Education"], ABOVE)
    assert coded.tolist() == CHAPTER_CODED_EDUCATION


def test_recode_release_of_the_chapter_table():
    release = tabular.recode(
        CHAPTER_TABLE, top={"Age": 21}, mapping={"Education": ABOVE}, key=KEY, measures=False
    )
    assert release.verify().passed
    rows = sorted(map(tuple, release.data[["Sex", "Age", "Education"]].to_numpy().tolist()))
    expected = sorted(zip(CHAPTER_TABLE["Sex"], CHAPTER_CODED_AGE, CHAPTER_CODED_EDUCATION))
    assert rows == expected


def test_bottom_and_top_coding_together():
    df = pd.DataFrame({"age": [15, 16, 30, 70, 90]})
    release = tabular.recode(df, top={"age": 70}, bottom={"age": 16}, key=KEY, measures=False)
    assert sorted(release.data["age"]) == sorted(["<=16", "<=16", "30", "70+", "70+"])


def test_sampling_publishes_a_secret_share_of_records():
    df = correlated(2000).assign(g=lambda d: (d["a"] > 10).map({True: "hi", False: "lo"}))
    release = tabular.recode(df, sample=0.3, key=KEY, measures=False)
    assert release.info["sampling_rate"] == 0.3
    assert 500 < len(release.data) < 700
    assert release.suppressed == 2000 - len(release.data)
    again = tabular.recode(df, sample=0.3, key=KEY, measures=False)
    assert again.data.equals(release.data)
    other = tabular.recode(df, sample=0.3, measures=False)
    assert not other.data.equals(release.data)


def test_recode_bad_input():
    with pytest.raises(InputError, match="at least one"):
        tabular.recode(CHAPTER_TABLE)
    with pytest.raises(InputError, match="numeric"):
        tabular.recode(CHAPTER_TABLE, top={"Sex": 1})
    with pytest.raises(InputError, match="sample"):
        tabular.recode(CHAPTER_TABLE, sample=0)
    with pytest.raises(InputError):
        tabular.recode(CHAPTER_TABLE, top={"nope": 1})
    with pytest.raises(InputError, match="dict"):
        tabular.recode(CHAPTER_TABLE, mapping={"Education": ["a"]})


# ------------------------------------------------------------------------------ measures


def test_perturbative_releases_report_utility_and_risk_before_and_after():
    df = correlated(400)
    release = tabular.add_noise(df, ["a", "b", "c"], 0.5, "correlated", key=KEY)
    assert set(release.risk) == {"before", "after"}
    for name in ("distance_linkage", "interval_disclosure_rank", "interval_disclosure_sd"):
        assert release.risk["before"][name] == 1.0
        assert release.risk["after"][name] < 1.0
    assert 0 <= release.risk["after"]["probabilistic_linkage"] <= 1
    assert release.utility["variance_ratio"][0] == pytest.approx(1.5, rel=0.25)
    text = release.to_json()
    assert "source_index" not in text


@pytest.mark.parametrize(
    "make",
    [
        lambda t: tabular.microaggregate(t, ["a"], 3, "mdav-generic", nominal=["g"], key=KEY),
        lambda t: tabular.rank_swap(t, ["a", "b"], 10, key=KEY),
        lambda t: tabular.recode(t, top={"a": 10.5}, mapping={"g": {"x": "xy"}}, sample=0.5),
        lambda t: tabular.pram(t, ["g"], key=KEY),
    ],
    ids=["mdav-generic", "rank-swap", "recode-sample", "pram"],
)
def test_every_release_measures_without_error(make):
    table = correlated(150).assign(g=np.random.default_rng(1).choice(["x", "y", "z"], 150))
    release = make(table)
    assert release.verify().passed
    assert set(release.risk) == {"before", "after"}
    assert release.risk["before"]["distance_linkage"] >= release.risk["after"]["distance_linkage"]
    assert release.utility


def test_mdav_leaves_its_input_untouched_and_matches_brute_force_groups():
    """Regression: the dense MDAV moves rows inside its own copy, never in the caller's
    array (a one-column input used to be a view and was scrambled)."""
    x = np.round(np.random.default_rng(3).normal(size=(200, 1)) * 3)
    before = x.copy()
    labels = mdav(x, 4)
    assert np.array_equal(x, before)
    sizes = np.bincount(labels)
    assert sizes.min() >= 4 and sizes.max() <= 7
    # the first group is formed around the record farthest from the centroid
    first = x[labels == 0].ravel()
    extreme = x.ravel()[np.argmax(np.abs(x.ravel() - x.mean()))]
    assert extreme in first


def test_recodings_that_contradict_themselves_are_refused_absent_values_named():
    """`--recode sex:Nope=Female` recoded nothing in silence: it is named to the publisher
    (a warning, in no report); `--top age=50 --bottom age=60` published the overlapping
    categories 50+ and <=60."""
    df = pd.DataFrame({"sex": ["Male", "Female"] * 5, "age": range(30, 40)})
    with pytest.warns(PublisherWarning, match="do not occur in the column: 'Nope'"):
        release = tabular.recode(df, mapping={"sex": {"Nope": "F"}}, measures=False)
    assert sorted(release.data["sex"]) == sorted(df["sex"])
    assert release.parameters["mapping"] == {"sex": {"Nope": "F"}}  # as given
    with pytest.raises(InputError, match="not above bottom code"):
        tabular.recode(df, top={"age": 35}, bottom={"age": 36}, measures=False)
    with pytest.raises(InputError, match="not above bottom code"):
        tabular.recode(df, top={"age": 35}, bottom={"age": 35}, measures=False)
    both = tabular.recode(df, top={"age": 37}, bottom={"age": 32}, measures=False).data
    assert set(both["age"].astype(str)) == {"<=32", "33", "34", "35", "36", "37+"}


def test_recodings_match_the_values_the_column_holds_once_coded():
    """A top-coded label can be recoded, and a key written as text recodes the number it
    spells (as the command line gives it); a key the column never holds is named in a
    warning to the publisher and recodes nothing."""
    df = pd.DataFrame({"age": list(range(30, 70, 4)) * 2})
    release = tabular.recode(df, top={"age": 60}, mapping={"age": {"60+": "old"}}, measures=False)
    assert (release.data["age"] == "old").sum() == (df["age"] >= 60).sum()
    release = tabular.recode(df, mapping={"age": {"30": "thirty"}}, measures=False)
    assert (release.data["age"] == "thirty").sum() == 2
    with pytest.warns(PublisherWarning, match="do not occur in the column: '31'"):
        tabular.recode(df, mapping={"age": {"31": "x"}}, measures=False)
