import numpy as np
import pandas as pd
import pytest

from structanon import InputError, Partition
from structanon.metrics import (
    average_class_size,
    discernibility,
    entropy_information_loss,
    suppression_ratio,
)
from structanon.risk import journalist_risk, reidentification_risk


def test_partition_basics():
    p = Partition([7, 7, 3, -1, 3, 3])
    assert p.labels.tolist() == [0, 0, 1, -1, 1, 1]
    assert p.sizes.tolist() == [2, 3] and p.n == 6 and p.n_suppressed == 1 and p.n_released == 5
    assert p.members(1).tolist() == [2, 4, 5]
    assert p.size_of_each().tolist() == [2, 2, 3, 0, 3, 3]
    counts, domain = p.contingency(["a", "b", "a", "c", "a", "b"])
    assert domain.tolist() == ["a", "b", "c"]
    assert counts.tolist() == [[1, 1, 0], [2, 1, 0]]
    with pytest.raises(InputError):
        Partition([[0, 1]])
    with pytest.raises(InputError, match="integers"):
        Partition([0.5, 1.0])


def test_partition_from_keys_frame_and_suppression():
    df = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": [1, 1, 1, 2]})
    p = Partition.from_keys(df, suppressed=np.array([False, False, False, True]))
    assert p.sizes.tolist() == [2, 1] and p.n_suppressed == 1


def test_metrics():
    p = Partition([0, 0, 1, 1, 1, -1])
    assert discernibility(p) == 4 + 9 + 6
    assert average_class_size(p, k=2) == pytest.approx(5 / 2 / 2)
    assert suppression_ratio(p) == pytest.approx(1 / 6)
    expected = (2 * np.log2(2) + 3 * np.log2(3) + np.log2(6)) / 6 / np.log2(6)
    assert entropy_information_loss(p) == pytest.approx(expected)


def test_risk():
    p = Partition([0, 0, 1, 2, 2, 2, -1])
    r = reidentification_risk(p, threshold=0.4)
    assert r["prosecutor_max"] == 1.0
    assert r["prosecutor_avg"] == pytest.approx((0.5 * 2 + 1 + 3 / 3) / 6)
    assert r["marketer"] == pytest.approx(3 / 6)
    assert r["sample_uniques"] == 1
    assert r["share_above_threshold"] == pytest.approx(3 / 6)
    j = journalist_risk([["a"], ["b"]], [["a"], ["a"], ["b"], ["b"], ["b"]])
    assert j["journalist_max"] == 0.5 and j["journalist_avg"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    with pytest.raises(InputError, match="does not occur in the population"):
        journalist_risk([["c"]], [["a"]])
