"""EMD under the three ground distances: the seed examples and brute-force optimal transport."""

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from structanon import Hierarchy, InputError
from structanon.distances import emd, emd_many

SALARIES = [3, 4, 5, 6, 7, 8, 9, 10, 11]  # in thousands
DISEASE_TABLE = [
    "gastric ulcer",
    "gastritis",
    "stomach cancer",
    "gastritis",
    "flu",
    "bronchitis",
    "bronchitis",
    "pneumonia",
    "stomach cancer",
]


def transport_lp(p, q, dist):
    """Exact EMD by linear programming over the transport polytope."""
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m : (i + 1) * m] = 1
        a_eq[m + i, i::m] = 1
    res = linprog(
        np.asarray(dist).reshape(-1),
        A_eq=a_eq,
        b_eq=np.concatenate([p, q]),
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0
    return res.fun


def transport_min_cost_flow(class_values, table_values, hierarchy):
    """Exact EMD as an integer min-cost flow (networkx), for the hierarchical example."""
    domain = sorted(set(table_values))
    pc = {v: Fraction(class_values.count(v), len(class_values)) for v in domain}
    qc = {v: Fraction(table_values.count(v), len(table_values)) for v in domain}
    scale = len(class_values) * len(table_values)
    g = nx.DiGraph()
    for v in domain:
        g.add_node(("s", v), demand=-int(pc[v] * scale))
        g.add_node(("t", v), demand=int(qc[v] * scale))
    for a in domain:
        for b in domain:
            g.add_edge(
                ("s", a), ("t", b), weight=round(hierarchy.distance(a, b) * hierarchy.height)
            )
    cost = nx.min_cost_flow_cost(g)
    return cost / (scale * hierarchy.height)


def test_ordered_distance_salary_example():
    assert emd([3, 4, 5], SALARIES, "ordered") == pytest.approx(0.375, abs=5e-4)
    assert emd([6, 8, 11], SALARIES, "ordered") == pytest.approx(0.167, abs=5e-4)
    assert emd([6, 8, 11], SALARIES, "ordered") == pytest.approx(1 / 6)


def test_ordered_distance_matches_linear_program():
    m = len(SALARIES)
    dist = np.abs(np.subtract.outer(range(m), range(m))) / (m - 1)
    for cls in ([3, 4, 5], [6, 8, 11]):
        p = np.array([cls.count(v) for v in SALARIES]) / len(cls)
        assert emd(cls, SALARIES, "ordered") == pytest.approx(
            transport_lp(p, np.full(m, 1 / m), dist)
        )


def test_hierarchy_ground_distances(disease_hierarchy):
    h = disease_hierarchy
    assert h.height == 3
    assert h.distance("flu", "bronchitis") == pytest.approx(1 / 3)
    assert h.distance("flu", "pulmonary embolism") == pytest.approx(2 / 3)
    assert h.distance("flu", "stomach cancer") == 1.0


def test_hierarchical_distance_follows_the_definition(disease_hierarchy):
    """The seed text prints 0.5 and 0.278; its own definition gives 4/9 and 7/27.

    Both our recursive formula and an independent min-cost-flow transport agree on 4/9 and 7/27.
    """
    h = disease_hierarchy
    c1 = ["gastric ulcer", "gastritis", "stomach cancer"]
    c2 = ["gastric ulcer", "stomach cancer", "pneumonia"]
    assert emd(c1, DISEASE_TABLE, "hierarchical", h) == pytest.approx(4 / 9)
    assert emd(c2, DISEASE_TABLE, "hierarchical", h) == pytest.approx(7 / 27)
    assert transport_min_cost_flow(c1, DISEASE_TABLE, h) == pytest.approx(4 / 9)
    assert transport_min_cost_flow(c2, DISEASE_TABLE, h) == pytest.approx(7 / 27)


def test_equal_distance_is_half_l1():
    table = ["a", "a", "b", "c"]
    assert emd(["a"], table) == pytest.approx(0.5 * (0.5 + 0.25 + 0.25))
    assert emd(["a", "b", "c", "a"], table) == 0.0


def test_errors():
    with pytest.raises(InputError, match="not in the table's domain"):
        emd(["z"], ["a", "b"])
    with pytest.raises(InputError, match="distance must be one of"):
        emd(["a"], ["a"], distance="manhattan")
    with pytest.raises(InputError, match="needs a hierarchy"):
        emd(["a"], ["a"], distance="hierarchical")


RANDOM_TREE = Hierarchy.from_rows(
    [
        ["a", "x", "r", "*"],
        ["b", "x", "r", "*"],
        ["c", "y", "r", "*"],
        ["d", "y", "r", "*"],
        ["e", "z", "s", "*"],
        ["f", "w", "s", "*"],
    ]
)
distributions = st.lists(st.integers(0, 5), min_size=6, max_size=6).filter(lambda v: sum(v) > 0)


@given(distributions, distributions, st.sampled_from(["equal", "ordered", "hierarchical"]))
def test_emd_equals_exact_transport_and_is_a_distance(pc, qc, distance):
    p, q = np.array(pc) / sum(pc), np.array(qc) / sum(qc)
    domain = list("abcdef")
    if distance == "equal":
        dist = 1.0 - np.eye(6)
    elif distance == "ordered":
        dist = np.abs(np.subtract.outer(range(6), range(6))) / 5
    else:
        dist = RANDOM_TREE.distance_matrix()
    d_pq = emd_many(np.array([pc]), qc, distance, domain, RANDOM_TREE)[0]
    d_qp = emd_many(np.array([qc]), pc, distance, domain, RANDOM_TREE)[0]
    assert d_pq == pytest.approx(transport_lp(p, q, dist), abs=1e-7)
    assert d_pq == pytest.approx(d_qp, abs=1e-9)
    assert -1e-12 <= d_pq <= 1 + 1e-12
    assert emd_many(np.array([pc]), pc, distance, domain, RANDOM_TREE)[0] == pytest.approx(
        0, abs=1e-12
    )
