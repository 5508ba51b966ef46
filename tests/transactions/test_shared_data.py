"""Runs on the shared real data sets when present (skipped otherwise)."""

import pytest

import transactions
from tests._support import SHARED_DATA as SHARED


def _head(rel: str, n: int):
    path = SHARED / rel
    if not path.exists():
        pytest.skip(f"{rel} not available")
    with open(path) as fh:
        lines = [next(fh) for _ in range(n)]
    return [{int(x) for x in line.split()} for line in lines]


def test_bms_webview_km(checks):
    data = _head("bms/BMS-WebView-1.dat", 3000)
    rel = transactions.km_anonymize(data, k=5, m=2, measures=False)
    assert checks.km_violations(rel.data, 5, 2) == []
    checks.check_covering(data, rel.data, checks.range_covers, rel.source_index)


def test_retail_partition_and_band(checks):
    data = _head("retail/retail.dat", 3000)
    rel = transactions.k_anonymize(data, k=5, measures=False)
    assert rel.verify().passed and rel.utility["ncp"] < 0.3
    checks.check_covering(data, rel.data, checks.range_covers, rel.source_index)
    band = transactions.band_matrix(data, [110, 271, 413], p=4, measures=False)
    assert band.verify().passed
