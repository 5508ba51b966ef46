"""Trajectory k-anonymity (``cloak(..., linkage="trajectory")``), checked independently."""

from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
import shapely
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import location
from location.cli import cli
from location.synthetic import synthetic_log
from structanon.errors import InfeasibleError, InputError
from structanon.io import Pseudonymizer

KEY = Pseudonymizer(b"trajectory-test-key-0001")


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    return synthetic_log(6_000, 120, seed=3)


@pytest.fixture(scope="module")
def release(log):
    return location.cloak(log, 5, window="1h", linkage="trajectory", key=KEY)


def _sequences(data: pd.DataFrame) -> dict:
    """Each pseudonym's set of (start, end, region_id), built with plain Python."""
    out = defaultdict(set)
    for user, start, end, region in zip(
        data["user"], data["start"], data["end"], data["region_id"]
    ):
        out[user].add((start, end, int(region)))
    return {user: frozenset(samples) for user, samples in out.items()}


def _assert_fixes_covered(release, log: pd.DataFrame) -> None:
    """Every published fix lies in its row's region (shapely covers) during its interval."""
    rows = release.data.iloc[release.source_index.to_numpy()]
    orig = log.loc[release.source_index.index]
    points = shapely.points(orig["lon"].to_numpy(float), orig["lat"].to_numpy(float))
    assert shapely.covers(np.asarray(rows["region"].to_numpy()), points).all()
    numeric = pd.api.types.is_numeric_dtype(orig["time"])  # epoch seconds
    t = pd.to_datetime(orig["time"], utc=True, unit="s" if numeric else None).to_numpy()
    assert ((rows["start"].to_numpy() <= t) & (t < rows["end"].to_numpy())).all()


def test_every_trajectory_is_shared_by_k_pseudonyms(release, log):
    data = release.data
    assert list(data.columns) == ["user", "start", "end", "region_id", "region"]
    assert data.index.equals(pd.RangeIndex(len(data)))
    shared = Counter(_sequences(data).values())
    assert min(shared.values()) >= 5
    assert release.checks.passed and release.parameters["linkage"] == "trajectory"
    _assert_fixes_covered(release, log)
    # every user is published or suppressed, within the bound; every fix accounted for
    n_users = log["user"].nunique()
    published = data["user"].nunique()
    assert published + release.info["users_suppressed"] == n_users
    assert release.info["users_suppressed"] <= int(0.05 * n_users)
    assert len(release.source_index) + release.suppressed == len(log)
    kept_users = set(log.loc[release.source_index.index, "user"])
    assert len(kept_users) == published
    # the private link never leaves the publisher
    assert "source_index" not in release.to_json() and "published_row" not in repr(release)


def test_rows_sorted_by_published_values_and_keyed_pseudonyms(release, log):
    data = release.data
    ordered = data.sort_values(["user", "start"], kind="stable").reset_index(drop=True)
    assert ordered[["user", "start", "region_id"]].equals(data[["user", "start", "region_id"]])
    again = location.cloak(log, 5, window="1h", linkage="trajectory", key=KEY, measures=False)
    assert again.data.drop(columns="region").equals(data.drop(columns="region"))
    other = location.cloak(log, 5, window="1h", linkage="trajectory", measures=False)
    assert not set(other.data["user"]) & set(data["user"])
    # a per-user release with the same key shares no pseudonym with the trajectory one
    linked = location.cloak(log, 5, window="1h", linkage="pseudonym", key=KEY, measures=False)
    assert not set(linked.data["user"]) & set(data["user"])


def test_measures_reported(release):
    u, risk = release.utility, release.risk
    for name in (
        "sample_extent_km_median",
        "sample_extent_km_p90",
        "sample_duration_min_median",
        "sample_duration_min_p90",
        "suppression_share",
        "user_range_query_rel_error_mean",
        "od_flow_error",
    ):
        assert np.isfinite(u[name]), name
    assert u["sample_extent_km_median"] <= u["sample_extent_km_p90"]
    for p in (1, 2, 4):
        assert risk["after"][f"linkage_p{p}"] <= 1 / 5 + 1e-9
        assert risk["before"][f"linkage_p{p}"] > 0.5
    assert risk["after"]["unicity_p4"] == 0.0
    text = release.summary()
    assert "linkage_p4" in text and "sample_extent_km_median" in text


def test_verifier_catches_a_broken_trajectory(release):
    data = release.data
    assert location.verify_trajectories(data, 5)[0].passed
    one = data["user"].iloc[0]
    broken = data.drop(index=data.index[data["user"] == one][:1])
    check = location.verify_trajectories(broken, 5)[0]
    assert not check.passed and check.worst == 1.0
    with pytest.raises(InputError, match="start"):
        location.verify_trajectories(data.drop(columns="start"), 5)


def test_no_suppression_when_not_allowed(log):
    r = location.cloak(
        log, 4, window="2h", linkage="trajectory", max_suppression=0.0, key=KEY, measures=False
    )
    assert r.info["users_suppressed"] == 0
    assert r.data["user"].nunique() == log["user"].nunique()


def test_fewer_than_k_users_is_infeasible(log):
    small = log[log["user"].isin([0, 1, 2])]
    with pytest.raises(InfeasibleError, match="exceeds the number of users"):
        location.cloak(small, 4, linkage="trajectory")


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"max_suppression": 1.5}, "max_suppression"),
        ({"max_suppression": "x"}, "max_suppression"),
        ({"block_size": 1}, "block_size"),
        ({"aggregate": True}, "aggregate"),
        ({"linkage": "trajectories"}, "linkage"),
    ],
)
def test_bad_parameters(log, params, match):
    params = {"linkage": "trajectory", **params}
    with pytest.raises(InputError, match=match):
        location.cloak(log, 3, **params)


def test_bad_input_rows(log):
    bad = log.head(200).copy()
    bad.loc[bad.index[5], "lat"] = 95.0
    with pytest.raises(InputError, match="latitude"):
        location.cloak(bad, 2, linkage="trajectory")
    r = location.cloak(bad, 2, linkage="trajectory", drop_invalid=True, measures=False)
    assert r.info["invalid_fixes_dropped"] == 1
    with pytest.raises(InputError, match="no fixes"):
        location.cloak(log.head(0), 2, linkage="trajectory")


def test_dask_input_refused(log):
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(InputError, match="in memory only"):
        location.cloak(dd.from_pandas(log, npartitions=2), 5, linkage="trajectory")


@st.composite
def logs(draw):
    n = draw(st.integers(1, 80))
    n_users = draw(st.integers(1, 12))
    spread = draw(st.sampled_from([1e-4, 1e-2, 0.3]))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    lat = 40 + np.round(rng.uniform(0, spread, n), draw(st.sampled_from([3, 12])))
    lon = 116 + np.round(rng.uniform(0, spread, n), draw(st.sampled_from([3, 12])))
    t = 1.7e9 + rng.integers(0, 6 * 3600, n)
    return pd.DataFrame({"user": rng.integers(0, n_users, n), "time": t, "lat": lat, "lon": lon})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    df=logs(),
    k=st.integers(1, 4),
    share=st.sampled_from([0.0, 0.2]),
    block=st.sampled_from([2, 4, 64]),
)
def test_property_trajectory_release(df, k, share, block):
    n_users = df["user"].nunique()
    try:
        r = location.cloak(
            df,
            k,
            window="1h",
            linkage="trajectory",
            max_suppression=share,
            block_size=block,
            key=KEY,
            measures=False,
        )
    except InfeasibleError:
        assert n_users < k
        return
    assert min(Counter(_sequences(r.data).values()).values()) >= k
    assert r.data["user"].nunique() + r.info["users_suppressed"] == n_users
    assert r.info["users_suppressed"] <= share * n_users
    assert len(r.source_index) + r.suppressed == len(df)
    _assert_fixes_covered(r, df)


def _cli(args):
    return CliRunner().invoke(cli, ["anonymize", *map(str, args)])


def test_cli_trajectory(log, tmp_path):
    src = tmp_path / "log.csv"
    log.to_csv(src, index=False)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    res = _cli(
        [src, "-k", 5, "--window", "1h", "--linkage", "trajectory", "-o", out, "--report", rep]
    )
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out)
    assert list(table.columns)[:5] == ["user", "start", "end", "region_id", "region_wkt"]
    shared = Counter(
        frozenset(zip(g["start"], g["end"], g["region_id"])) for _, g in table.groupby("user")
    )
    assert min(shared.values()) >= 5
    assert "linkage_p4" in rep.read_text() and "trajectory k-anonymity" in rep.read_text()
    geo = tmp_path / "r.geojson"
    res = _cli([src, "-k", 5, "--linkage", "trajectory", "-o", out, "--geojson", geo])
    assert res.exit_code == 0, res.output and geo.exists()
    # fewer users than k: infeasible (exit 3), nothing written
    few = tmp_path / "few.csv"
    log[log["user"].isin([0, 1])].to_csv(few, index=False)
    res = _cli([few, "-k", 5, "--linkage", "trajectory", "-o", tmp_path / "none.csv"])
    assert res.exit_code == 3 and not (tmp_path / "none.csv").exists()
    for extra in (["--aggregate"], ["--max-suppression", "2"]):
        res = _cli([src, "-k", 5, "--linkage", "trajectory", "-o", tmp_path / "x.csv", *extra])
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output


def test_partition_figures_count_published_pseudonyms_not_fixes(log):
    # attack: the report's partition.min_group_size was the smallest cluster's input fix
    # count, so one extra fix of a user changed it by one; it now counts pseudonyms
    def partition(frame):
        r = location.cloak(frame, 5, window="1h", linkage="trajectory", key=KEY, measures=False)
        return r, r.to_dict()["partition"]

    r, part = partition(log)
    # the extra fix goes to a member of the cluster with the fewest input fixes
    sequences = _sequences(r.data)
    clusters = Counter(sequences.values())
    pseudonym_of_fix = r.data["user"].to_numpy()[r.source_index.to_numpy()]
    fixes = Counter(sequences[p] for p in pseudonym_of_fix)
    fewest = min(fixes, key=lambda c: fixes[c])
    member = next(u for u, seq in sequences.items() if seq == fewest)
    label = r.source_index.index[pseudonym_of_fix == member][0]
    extra = log.loc[[label]].copy()
    extra["time"] = pd.to_datetime(extra["time"], utc=True) + pd.Timedelta(seconds=1)
    _, part2 = partition(pd.concat([log, extra], ignore_index=True))
    assert part == part2
    # the figures are the published clusters' sizes in pseudonyms
    assert part["n_groups"] == len(clusters)
    assert part["min_group_size"] == min(clusters.values())
