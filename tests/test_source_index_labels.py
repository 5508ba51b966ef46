"""``release.source_index`` holds input row labels: with a repeated index they cannot line
up, and every package says so with a Python warning (never in the release or report)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import location
import querylogs
import tabular
from structanon.models import KAnonymity

KEY = b"0123456789abcdef-labels"


def _table(index):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {"age": rng.integers(20, 60, 40), "s": rng.choice(list("abc"), 40)}, index=index
    )


def _calls():
    repeated = [0] * 40
    yield (
        "tabular",
        lambda ix: tabular.anonymize(
            _table(ix),
            {"age": "numeric"},
            "s",
            [KAnonymity(4)],
            "mondrian",
            key=KEY,
            measures=False,
        ),
        repeated,
    )
    yield (
        "anatomy",
        lambda ix: tabular.anatomize(_table(ix), ["age"], "s", 2, key=KEY, measures=False),
        repeated,
    )
    yield (
        "noise",
        lambda ix: tabular.add_noise(_table(ix), ["age"], 0.1, key=KEY, measures=False),
        (repeated),
    )
    log = location.synthetic_log(600, 12, seed=1)
    yield (
        "location",
        lambda ix: location.cloak(log.set_axis(ix), 3, key=KEY, measures=False),
        [0] * len(log),
    )
    qlog = querylogs.synthetic_log(12, 300, seed=1)
    yield (
        "querylogs",
        lambda ix: querylogs.anonymize(qlog.set_axis(ix), 3, key=KEY, measures=False),
        [0] * len(qlog),
    )


@pytest.mark.parametrize("name,call,repeated", list(_calls()), ids=[c[0] for c in _calls()])
def test_a_repeated_index_is_warned_and_a_unique_one_is_not(name, call, repeated):
    with pytest.warns(UserWarning, match="reset_index") as caught:
        release = call(repeated)
    assert not any("reset_index" in str(v) for v in release.to_dict().values())
    assert any("repeats labels" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        release = call(range(len(repeated)))
    assert not any("repeats labels" in str(w.message) for w in seen)
    if name not in ("location", "querylogs"):  # one published row per input row
        assert len(_table(range(40)).loc[release.source_index]) == len(release.data)
