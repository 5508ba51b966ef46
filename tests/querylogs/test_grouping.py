import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from querylogs import anonymize, greedy_groups, grouping_cost, mdav, refine_groups
from structanon.errors import InfeasibleError, InputError


def brute_cost(x, labels, upper=False):
    """Additions, suppressions and kept events with plain Python medians."""
    added = suppressed = kept = 0
    for g in set(labels.tolist()):
        rows = x[labels == g]
        for column in rows.T:
            values = sorted(int(v) for v in column)
            s = len(values)
            m = values[s // 2] if upper else values[(s - 1) // 2]
            added += sum(max(m - v, 0) for v in values)
            suppressed += sum(max(v - m, 0) for v in values)
            kept += sum(min(m, v) for v in values)
    return {"added": added, "suppressed": suppressed, "kept": kept, "published": added + kept}


counts = arrays(
    np.int64, st.tuples(st.integers(1, 30), st.integers(1, 6)), elements=st.integers(0, 3)
)


@settings(max_examples=50, deadline=None)
@given(counts, st.integers(1, 5))
def test_greedy_group_sizes_and_exact_cost(x, k):
    if len(x) < k:
        with pytest.raises(InfeasibleError):
            greedy_groups(x, k)
        return
    labels = greedy_groups(sp.csr_matrix(x), k)
    sizes = np.bincount(labels)
    assert labels.min() == 0 and sizes.min() >= k
    assert sizes.max() <= max(2 * k - 1, k)
    assert np.array_equal(labels, greedy_groups(x, k))  # deterministic
    for upper, tie in ((False, "suppress"), (True, "add")):
        assert grouping_cost(x, labels, tie) == brute_cost(x, labels, upper)


def test_greedy_finds_the_obvious_pairs():
    rng = np.random.default_rng(3)
    # 8 users, four disjoint pairs sharing their queries exactly, shuffled
    base = np.kron(np.eye(4, dtype=int), np.ones((2, 3), dtype=int)) * 2
    order = rng.permutation(8)
    x = base[order]
    labels = greedy_groups(x, 2)
    cost = grouping_cost(x, labels)
    assert cost["suppressed"] == 0 and cost["added"] == 0 and cost["kept"] == x.sum()
    assert grouping_cost(x, mdav(x, 2))["kept"] <= cost["kept"]


def test_greedy_optimal_on_small_pairings():
    """On tiny inputs (k=2, 6 users) greedy is compared with the best pairing."""
    rng = np.random.default_rng(0)
    ratios = []
    for _ in range(20):
        x = rng.integers(0, 3, size=(6, 5)) * (rng.random((6, 5)) < 0.5)
        best = 0
        for perm in itertools.permutations(range(6)):
            if (
                perm[0] < perm[1]
                and perm[2] < perm[3]
                and perm[4] < perm[5]
                and perm[0] < perm[2] < perm[4]
            ):
                labels = np.empty(6, dtype=int)
                labels[list(perm)] = [0, 0, 1, 1, 2, 2]
                best = max(best, grouping_cost(x, labels)["kept"])
        got = grouping_cost(x, greedy_groups(x, 2))["kept"]
        assert got <= best
        ratios.append(got / best if best else 1.0)
    assert np.mean(ratios) >= 0.8


def test_greedy_errors_and_isolated_users():
    with pytest.raises(InputError):
        greedy_groups(np.ones((3, 2)), 0)
    with pytest.raises(InputError):
        greedy_groups(-np.ones((3, 2)), 2)
    # nobody shares anything: still valid groups
    labels = greedy_groups(np.eye(7), 3)
    assert np.bincount(labels).min() >= 3 and np.bincount(labels).max() <= 5
    labels = greedy_groups(np.zeros((5, 0)), 2)
    assert np.bincount(labels).min() >= 2


@settings(max_examples=40, deadline=None)
@given(counts, st.integers(1, 4), st.sampled_from(["greedy", "mdav"]))
def test_refinement_never_costs_more(x, k, start):
    if len(x) < k:
        return
    labels = greedy_groups(x, k) if start == "greedy" else mdav(x, k)
    refined = refine_groups(sp.csr_matrix(x), labels, k, passes=2)
    sizes = np.bincount(refined)
    assert sizes[sizes > 0].min() >= k and sizes.max() <= max(2 * k - 1, k)
    before, after = brute_cost(x, labels), brute_cost(x, refined)
    assert after["added"] + after["suppressed"] <= before["added"] + before["suppressed"]
    assert np.array_equal(refined, refine_groups(x, labels, k, passes=2))


def test_refinement_fixes_a_bad_grouping():
    x = np.array([[2, 0], [0, 2], [2, 0], [0, 2]])
    refined = refine_groups(x, np.array([0, 0, 1, 1]), 2)
    assert grouping_cost(x, refined)["kept"] == 8
    with pytest.raises(InputError):
        refine_groups(x, np.array([0, 0, 0, 1]), 2)
    with pytest.raises(InputError):
        refine_groups(x, np.array([0, 0, 1, 1]), 2, passes=-1)


def test_anonymize_rejects_bad_grouping(small_log):
    with pytest.raises(InputError, match="grouping"):
        anonymize(small_log, 2, grouping="kmeans")
    with pytest.raises(InputError, match="refine"):
        anonymize(small_log, 2, refine=-1)
