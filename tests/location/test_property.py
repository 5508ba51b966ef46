from collections import defaultdict

import numpy as np
import pandas as pd
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import location
from structanon.errors import InfeasibleError
from structanon.io import Pseudonymizer

KEY = Pseudonymizer(b"property-test-key-0001")


@st.composite
def logs(draw):
    n = draw(st.integers(1, 60))
    n_users = draw(st.integers(1, 8))
    lat0 = draw(st.floats(-60, 60))
    lon0 = draw(st.floats(-170, 170))
    spread = draw(st.sampled_from([1e-4, 1e-2, 0.3]))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    # duplicate points and points on a coarse lattice make edge cases likely
    lat = lat0 + np.round(rng.uniform(0, spread, n), draw(st.sampled_from([3, 12])))
    lon = lon0 + np.round(rng.uniform(0, spread, n), draw(st.sampled_from([3, 12])))
    t = 1.7e9 + rng.integers(0, 4 * 3600, n)
    return pd.DataFrame({"user": rng.integers(0, n_users, n), "time": t, "lat": lat, "lon": lon})


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    df=logs(),
    k=st.integers(1, 4),
    method=st.sampled_from(["fixed", "adaptive"]),
    cell=st.sampled_from([10.0, 100.0, 2000.0]),
)
def test_every_region_window_has_k_users_and_contains_its_fixes(df, k, method, cell):
    try:
        r = location.cloak(
            df, k=k, window="1h", method=method, cell_size=cell, pseudonymizer=KEY, measures=False
        )
    except InfeasibleError:  # no window holds k users
        assert df.groupby(df["time"] // 3600)["user"].nunique().max() < k
        return
    d = r.data
    users = defaultdict(set)
    for reg, win, u in zip(d["region_id"], d["window"], d["user"]):
        users[(reg, win)].add(u)
    assert all(len(v) >= k for v in users.values())
    # every input fix is published inside its region, or counted as suppressed
    assert len(d) + r.suppressed == len(df)
    assert d.index.equals(pd.RangeIndex(len(d)))
    assert r.source_index.is_unique and r.source_index.isin(df.index).all()
    orig = df.loc[r.source_index]
    assert shapely.contains(
        np.asarray(d["region"].to_numpy()),
        shapely.points(orig["lon"].to_numpy(), orig["lat"].to_numpy()),
    ).all()
    # with a single top cell, a fix is suppressed only when its window has < k users
    window = (df["time"] // 3600).astype(np.int64)
    users_in_window = df.groupby(window)["user"].nunique()
    suppressed = df.index.difference(r.source_index)
    assert (users_in_window.loc[window.loc[suppressed]] < k).all()
    assert (users_in_window.loc[window.loc[r.source_index]] >= k).all()
