"""A tabular release that publishes a near-unique column unchanged (an id, a serial number)
gets a red flag, never a green "No flags": the model protects the named columns only."""

import numpy as np
import pandas as pd

import tabular
from structanon.models import KAnonymity
from structanon.verdict import flags


def _table(n=200):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "id": [f"{10**19 + i}" for i in range(n)],
            "age": rng.integers(20, 70, n),
            "income": rng.normal(30_000, 5_000, n).round(2),
            "zip": rng.choice(["a", "b"], n),
        }
    )


def _red_columns(release):
    return {f.title.split(": ", 1)[1] for f in flags(release) if f.title.startswith("Near-unique")}


def test_a_unique_id_left_in_the_table_is_flagged_red():
    df = _table()
    # independently: the published id column singles out every record
    noise = tabular.add_noise(df, ["income"], 0.1, measures=False)
    assert noise.data["id"].nunique() == len(noise.data)
    assert _red_columns(noise) == {"id"}  # income is masked: unique by nature, not flagged
    assert "Near-unique column published as is: id" in noise.summary()
    mondrian = tabular.anonymize(
        df, {"age": "numeric"}, "zip", [KAnonymity(5)], "mondrian", measures=False
    )
    assert _red_columns(mondrian) == {"id", "income"}


def test_named_or_dropped_columns_are_not_flagged():
    df = _table().drop(columns="income")
    release = tabular.anonymize(
        df,
        {"age": "numeric"},
        "zip",
        [KAnonymity(5)],
        "mondrian",
        identifiers=["id"],
        measures=False,
    )
    assert not _red_columns(release)
    dropped = tabular.anonymize(
        df.drop(columns="id"),
        {"age": "numeric"},
        "zip",
        [KAnonymity(5)],
        "mondrian",
        measures=False,
    )
    assert [f.title for f in flags(dropped)] == ["No flags"]
