"""Privacy models: the l-diversity lecture tables, boundary cases and brute-force references."""

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pycanon import anonymity

from structanon import InputError, Partition
from structanon.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
    check_models,
)

# Machanavajjhala et al., "l-Diversity" (TKDD 2007), Fig. 1-3: ZIP, Age, Nationality, Condition.
ORIGINAL = pd.DataFrame(
    [
        ("13053", 28, "Russian", "Heart Disease"),
        ("13068", 29, "American", "Heart Disease"),
        ("13068", 21, "Japanese", "Viral Infection"),
        ("13053", 23, "American", "Viral Infection"),
        ("14853", 50, "Indian", "Cancer"),
        ("14853", 55, "Russian", "Heart Disease"),
        ("14850", 47, "American", "Viral Infection"),
        ("14850", 49, "American", "Viral Infection"),
        ("13053", 31, "American", "Cancer"),
        ("13053", 37, "Indian", "Cancer"),
        ("13068", 36, "Japanese", "Cancer"),
        ("13068", 35, "American", "Cancer"),
    ],
    columns=["zip", "age", "nationality", "condition"],
)
QI = ["zip", "age", "nationality"]


def four_anonymous():
    df = ORIGINAL.copy()
    df["zip"] = ["130**"] * 4 + ["1485*"] * 4 + ["130**"] * 4
    df["age"] = ["<30"] * 4 + [">=40"] * 4 + ["3*"] * 4
    df["nationality"] = "*"
    return df


def three_diverse():
    df = ORIGINAL.copy()
    df["zip"] = df["zip"].str[:4] + "*"
    df["age"] = np.where(ORIGINAL["age"] <= 40, "<=40", ">40")
    df["nationality"] = "*"
    return df


def partition_of(df):
    return Partition.from_keys(df[QI])


def test_original_table_is_not_anonymous():
    part = partition_of(ORIGINAL)
    assert part.n_groups == 12
    assert not KAnonymity(2).check(part).passed


def test_four_anonymous_table():
    df = four_anonymous()
    part = partition_of(df)
    assert part.sizes.tolist() == [4, 4, 4]
    assert KAnonymity(4).check(part).passed
    assert not KAnonymity(5).check(part).passed
    result = DistinctLDiversity(2).check(part, df["condition"])
    assert not result.passed and result.worst == 1.0
    assert result.failing_groups.tolist() == [2]  # the all-cancer class: homogeneity attack
    assert anonymity.k_anonymity(df, QI) == 4
    assert anonymity.l_diversity(df, QI, ["condition"]) == 1


def test_three_diverse_table():
    df = three_diverse()
    part = partition_of(df)
    assert sorted(part.sizes.tolist()) == [4, 4, 4]
    assert DistinctLDiversity(3).check(part, df["condition"]).passed
    assert not DistinctLDiversity(4).check(part, df["condition"]).passed
    # every class has counts {2, 1, 1}: entropy exp(H) = 2^(3/2) = 2.83
    ent = EntropyLDiversity(2.8).check(part, df["condition"])
    assert ent.passed and ent.worst == pytest.approx(2**1.5)
    assert not EntropyLDiversity(3).check(part, df["condition"]).passed
    assert anonymity.l_diversity(df, QI, ["condition"]) == 3
    assert anonymity.entropy_l_diversity(df, QI, ["condition"]) == 2


def test_recursive_cl_diversity_boundaries():
    part = partition_of(three_diverse())
    sens = three_diverse()["condition"]
    # r1 = 2, r2 + r3 = 2: passes iff 2 < 2c, i.e. c > 1 (strict inequality)
    assert not RecursiveCLDiversity(1, 2).check(part, sens).passed
    assert RecursiveCLDiversity(1.01, 2).check(part, sens).passed
    # r1 = 2, r3 = 1: passes iff c > 2
    assert not RecursiveCLDiversity(2, 3).check(part, sens).passed
    assert RecursiveCLDiversity(2.01, 3).check(part, sens).passed
    # fewer than l distinct values: the tail is empty and the group fails for any c
    assert not RecursiveCLDiversity(100, 4).check(part, sens).passed
    # l = 1: r1 < c * (r1 + ... + rm) holds for any c > 1
    assert RecursiveCLDiversity(1.0001, 1).check(part, sens).passed


def test_t_closeness_on_lecture_table():
    df = three_diverse()
    part = partition_of(df)
    result = TCloseness(0.2).check(part, df["condition"])
    # classes {C:2,H:1,V:1}, {C:1,H:1,V:2}, {C:2,H:1,V:1} vs table {C:5,H:3,V:4}/12
    expected = max(
        0.5 * (abs(2 / 4 - 5 / 12) + abs(1 / 4 - 3 / 12) + abs(1 / 4 - 4 / 12)),
        0.5 * (abs(1 / 4 - 5 / 12) + abs(1 / 4 - 3 / 12) + abs(2 / 4 - 4 / 12)),
    )
    assert result.worst == pytest.approx(expected)
    assert result.passed == (expected <= 0.2)
    assert anonymity.t_closeness(df, QI, ["condition"]) == pytest.approx(expected, abs=1e-6)


def test_parameter_validation():
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(InputError, match="k must be an integer >= 1"):
            KAnonymity(bad)
    with pytest.raises(InputError, match="t must be a number in"):
        TCloseness(1.5)
    with pytest.raises(InputError, match="needs a structanon.Hierarchy"):
        TCloseness(0.2, distance="hierarchical")
    with pytest.raises(InputError, match="needs the sensitive values"):
        DistinctLDiversity(2).check(Partition([0, 0]))


def test_monotone_flags_and_empty_partition():
    assert all(m.monotone for m in (KAnonymity(2), DistinctLDiversity(2), TCloseness(0.3)))
    assert KAnonymity(2).monotone_with_suppression
    assert DistinctLDiversity(2).monotone_with_suppression
    assert TCloseness(0.3).needs_reference and not KAnonymity(2).needs_reference
    # entropy l-diversity is not monotone with suppression: {x, y} passes and {x, x, x}
    # fails (suppressed), but their merge {x, y, x, x, x} fails, and suppressing it all
    # costs more than suppressing the failing half
    model = EntropyLDiversity(2)
    assert not model.monotone_with_suppression
    split = model.check(Partition([0, 0, 1, 1, 1]), np.array(list("xyxxx")))
    merged = model.check(Partition([0, 0, 0, 0, 0]), np.array(list("xyxxx")))
    assert list(split.failing_groups) == [1] and not merged.passed
    result = KAnonymity(5).check(Partition([-1, -1]))
    assert result.passed and result.n_groups == 0


# ---------------------------------------------------------------- brute-force references
def reference_checks(labels, sens, k, l, c, t):
    """Per-group verdicts computed with plain Python, independently of the models."""
    groups = {}
    for g, s in zip(labels, sens):
        if g >= 0:
            groups.setdefault(g, []).append(s)
    released = [s for g, s in zip(labels, sens)]
    table = Counter(released)
    n = len(released)
    out = {"k": True, "distinct": True, "entropy": True, "recursive": True, "t": True}
    for values in groups.values():
        cnt = Counter(values)
        size = len(values)
        out["k"] &= size >= k
        out["distinct"] &= len(cnt) >= l
        ent = -sum(v / size * math.log(v / size) for v in cnt.values())
        out["entropy"] &= ent >= math.log(l) - 1e-9
        r = sorted(cnt.values(), reverse=True)
        out["recursive"] &= r[0] < c * sum(r[l - 1 :])
        emd = 0.5 * sum(abs(cnt.get(v, 0) / size - table[v] / n) for v in table)
        out["t"] &= emd <= t + 1e-9
    return out


@given(
    st.lists(st.tuples(st.integers(-1, 5), st.sampled_from("abcd")), min_size=1, max_size=40),
    st.integers(1, 4),
    st.integers(1, 3),
    st.floats(0.5, 3),
    st.floats(0, 1),
)
def test_models_agree_with_brute_force(rows, k, l, c, t):
    labels = [g for g, _ in rows]
    sens = [s for _, s in rows]
    part = Partition(labels)
    ref = reference_checks(labels, sens, k, l, c, t)
    assert KAnonymity(k).check(part).passed == ref["k"]
    assert DistinctLDiversity(l).check(part, sens).passed == ref["distinct"]
    assert EntropyLDiversity(l).check(part, sens).passed == ref["entropy"]
    assert RecursiveCLDiversity(c, l).check(part, sens).passed == ref["recursive"]
    assert TCloseness(t).check(part, sens).passed == ref["t"]
    results = check_models([KAnonymity(k), TCloseness(t)], part, sens)
    assert [r.passed for r in results] == [ref["k"], ref["t"]]


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_l_diversity_models_refuse_non_finite_parameters(bad):
    from structanon.models import EntropyLDiversity, RecursiveCLDiversity

    with pytest.raises(InputError, match="finite"):
        EntropyLDiversity(bad)
    with pytest.raises(InputError, match="finite"):
        RecursiveCLDiversity(bad, 2)
