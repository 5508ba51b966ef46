"""Attacks on cloaked releases made the way users make them (CLI and API defaults).

The attacker holds every published artefact: the cloaked table, the GeoJSON, the JSON and
HTML reports and the printed summary, and may hold two releases of the same log.  Each
test runs one attack and asserts it does no better than chance.  The tests, not the
attacker, know the truth: they link published rows to true users through a reference
release made with a known key (the assignment is deterministic, only pseudonyms and
publication order could differ) and each user's (window, region) signature.
"""

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import spearmanr

import location
from location.cli import cli
from location.io import read_fixes

GEOLIFE = Path(location.__file__).parent / "data" / "geolife_11users_sample.csv.gz"
REFERENCE_KEY = b"attack-test-reference-key-0001"
K = 5


@pytest.fixture(scope="module")
def chronological_log() -> pd.DataFrame:
    """A synthetic app log in chronological order, as logs are written."""
    log = location.synthetic_log(12_000, 200, seed=5)
    return log.sort_values("time", kind="stable").reset_index(drop=True)


@pytest.fixture(scope="module")
def log_csv(tmp_path_factory, chronological_log) -> Path:
    path = tmp_path_factory.mktemp("attack") / "log.csv"
    chronological_log.to_csv(path, index=False)
    return path


def _cli_release(log_csv: Path, folder: Path, *extra: str) -> dict:
    """Run the CLI with its defaults; return every artefact it wrote or printed."""
    folder.mkdir(parents=True, exist_ok=True)
    out, geo, rep = folder / "out.csv", folder / "regions.geojson", folder / "report.json"
    res = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(log_csv),
            "-k",
            str(K),
            "-o",
            str(out),
            "--geojson",
            str(geo),
            "--report",
            str(rep),
            *extra,
        ],
    )
    assert res.exit_code == 0, res.output
    return {"table": pd.read_csv(out), "files": [out, geo, rep], "printed": res.output}


def _reference(log: pd.DataFrame, **params) -> pd.DataFrame:
    """Per published fix: window, region_id, true user and true time (known key)."""
    return _truth(location.cloak(log, K, key=REFERENCE_KEY, measures=False, **params), log)


def _truth(release, log: pd.DataFrame) -> pd.DataFrame:
    labels = release.source_index if release.source_index is not None else release.data.index
    data = release.data
    return pd.DataFrame(
        {
            "window": data["window"].dt.strftime("%Y-%m-%dT%H:%M:%SZ").to_numpy(),
            "region_id": data["region_id"].to_numpy(),
            "true_user": log.loc[labels, "user"].to_numpy(),
            "time": _ns(log.loc[labels, "time"]),
        }
    )


def _ns(times: pd.Series) -> np.ndarray:
    return pd.to_datetime(times, utc=True).astype("int64").to_numpy()


def _signatures(rows: pd.DataFrame, who: str) -> dict:
    """Each user's multiset of (window, region_id) as a hashable signature."""
    counts = rows.groupby([who, "window", "region_id"]).size()
    out: dict = defaultdict(list)
    for (person, window, region), n in counts.items():
        out[person].append((window, int(region), int(n)))
    return {person: tuple(sorted(v)) for person, v in out.items()}


def _true_users(table: pd.DataFrame, reference: pd.DataFrame, seed: int = 0) -> np.ndarray:
    """The true user of each published row (the test's knowledge, not the attacker's).

    A pseudonym stands for one user in one window and region (the default linkage), so it is
    matched to a true user by what it publishes there: its fix count.  Users whose
    unit looks the same are interchangeable and are handed out one each, at random (``seed``),
    so two releases are not scored as linked through the test's own tie-break.
    """
    rng = np.random.default_rng(seed)

    def window_signatures(frame: pd.DataFrame, who: str) -> dict:
        counts = frame.groupby([who, "window", "region_id"]).size()
        return {
            (person, window, region): (window, int(region), int(n))
            for (person, window, region), n in counts.items()
        }

    candidates: dict = defaultdict(list)
    for (user, _window, _region), signature in window_signatures(reference, "true_user").items():
        candidates[signature].append(user)
    for users in candidates.values():
        rng.shuffle(users)
    expand = table.loc[table.index.repeat(table["n_fixes"])] if "n_fixes" in table else table
    pseudonym_user = {
        pseudonym: candidates[signature].pop()
        for (pseudonym, _window, _region), signature in window_signatures(expand, "user").items()
    }
    return table["user"].map(pseudonym_user).to_numpy()


def _row_times(table: pd.DataFrame, truth: np.ndarray, reference: pd.DataFrame) -> np.ndarray:
    """True time per published row.  Rows of one (window, region, user) are identical, so
    nothing tells the attacker which of their fixes each one is: they get those fixes'
    times in random order (the attacker's expected case)."""
    rng = np.random.default_rng(1)
    pools = {
        key: list(rng.permutation(g["time"].to_numpy()))
        for key, g in reference.groupby(["window", "region_id", "true_user"])
    }
    return np.array(
        [
            pools[(window, int(region), user)].pop()
            for window, region, user in zip(table["window"], table["region_id"], truth)
        ],
        dtype=np.int64,
    )


def _mean_rank_correlation(table: pd.DataFrame, times: np.ndarray, min_rows: int = 20) -> float:
    """Mean over windows of Spearman's rho between row position and true fix time."""
    rhos = []
    for _, rows in pd.Series(np.arange(len(table))).groupby(table["window"].to_numpy()):
        if len(rows) >= min_rows:
            rho = spearmanr(rows.to_numpy(), times[rows.to_numpy()])[0]
            rhos.append(rho)
    assert rhos, "no window large enough to test"
    return float(np.mean(rhos))


def test_row_order_inside_a_window_does_not_tell_time_cli(log_csv, chronological_log, tmp_path):
    release = _cli_release(log_csv, tmp_path / "a")
    table = release["table"]
    reference = _reference(chronological_log)
    truth = _true_users(table, reference)
    rho = _mean_rank_correlation(table, _row_times(table, truth, reference))
    assert abs(rho) < 0.1, rho  # the input order gave rho = 1
    # the order is the published values' own order, nothing else
    assert table[["window", "region_id", "user"]].equals(
        table[["window", "region_id", "user"]]
        .sort_values(["window", "region_id", "user"])
        .reset_index(drop=True)
    )


def test_row_order_inside_a_window_does_not_tell_time_api_geolife():
    log = read_fixes(GEOLIFE, columns=["uid", "datetime", "lat", "lng"])
    log = log.rename(columns={"uid": "user", "datetime": "time", "lng": "lon"})
    log = log.sort_values("time", kind="stable").reset_index(drop=True)  # chronological
    r = location.cloak(log, k=2, window="15min")
    assert r.data.index.equals(pd.RangeIndex(len(r.data)))
    reference = _truth(r, log)
    table = reference[["window", "region_id"]].assign(user=r.data["user"].to_numpy())
    times = _row_times(table, reference["true_user"].to_numpy(), reference)
    rho = _mean_rank_correlation(table, times, min_rows=10)
    assert abs(rho) < 0.1, rho  # the input order gave rho = 1


def test_input_index_and_row_numbers_are_not_published(chronological_log, log_csv, tmp_path):
    shifted = chronological_log.set_axis(np.arange(len(chronological_log)) * 7 + 1000)
    r = location.cloak(shifted, K)
    assert r.data.index.equals(pd.RangeIndex(len(r.data)))
    assert list(r.data.columns) == ["user", "window", "region_id", "region"]
    assert "source_index" not in r.to_json() and "source_index" not in repr(r)
    assert set(r.source_index) <= set(shifted.index)
    # a log with invalid rows, dropped: no line number of them in any artefact
    bad = pd.read_csv(log_csv)
    bad.loc[[17, 4242], "lat"] = 123.0
    bad_csv = tmp_path / "bad.csv"
    bad.to_csv(bad_csv, index=False)
    release = _cli_release(bad_csv, tmp_path / "b", "--drop-invalid")
    assert list(release["table"].columns) == [
        "user",
        "window",
        "region_id",
        "region_wkt",
        "west",
        "south",
        "east",
        "north",
    ]
    report = release["files"][2].read_text()
    assert "invalid_fixes_dropped" in report and "first_invalid" not in report


@pytest.mark.slow
def test_two_keyless_releases_do_not_link_by_position(log_csv, chronological_log, tmp_path):
    one = _cli_release(log_csv, tmp_path / "one")["table"]
    two = _cli_release(log_csv, tmp_path / "two")["table"]
    assert len(one) == len(two)
    assert not set(one["user"]) & set(two["user"])  # independent random keys
    reference = _reference(chronological_log)
    u1, u2 = _true_users(one, reference, seed=1), _true_users(two, reference, seed=2)
    linked = float((u1 == u2).mean())
    # chance: the same release with the users of each (window, region) in random order
    rng = np.random.default_rng(0)
    groups = two.groupby(["window", "region_id"], sort=False).indices.values()
    chance = []
    for _ in range(5):
        shuffled = u2.copy()
        for rows in groups:
            users = pd.unique(u2[rows])
            order = rng.permutation(len(users))
            shuffled[rows] = np.concatenate([u2[rows][u2[rows] == users[i]] for i in order])
        chance.append(float((u1 == shuffled).mean()))
    assert linked < np.mean(chance) + 0.05, (linked, chance)  # it was 1.0
    # aggregated releases: one row per user and (window, region), linked no better than 1/n
    a1 = location.cloak(chronological_log, K, aggregate=True, measures=False).data
    a2 = location.cloak(chronological_log, K, aggregate=True, measures=False).data
    ref = _reference(chronological_log)
    t1 = _true_users(a1.assign(window=a1["window"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")), ref, 1)
    t2 = _true_users(a2.assign(window=a2["window"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")), ref, 2)
    per_group = a1.groupby(["window", "region_id"])["user"].transform("size").to_numpy()
    assert float((t1 == t2).mean()) < float(np.mean(1 / per_group)) + 0.05


def _mid_range_strings(values: pd.Series) -> set[str]:
    mid = 0.5 * (float(values.min()) + float(values.max()))
    text = repr(mid)
    head, _, tail = text.partition(".")
    return {f"{mid:.6f}", f"{head}.{tail[:6]}"}


@pytest.mark.slow
def test_no_artefact_carries_the_input_mid_range(log_csv, chronological_log, tmp_path):
    release = _cli_release(log_csv, tmp_path / "m")
    html = tmp_path / "m" / "report.html"
    res = CliRunner().invoke(
        cli,
        [
            "anonymize",
            str(log_csv),
            "-k",
            str(K),
            "-o",
            str(tmp_path / "m" / "o2.parquet"),
            "--report",
            str(html),
        ],
    )
    assert res.exit_code == 0, res.output
    api = location.cloak(chronological_log, K)
    texts = [p.read_text() for p in release["files"]] + [
        html.read_text(),
        release["printed"],
        res.output,
        api.to_json(),
        api.summary(),
        repr(api.info),
    ]
    needles = _mid_range_strings(chronological_log["lon"]) | _mid_range_strings(
        chronological_log["lat"]
    )
    for needle in needles:
        assert not any(needle in text for text in texts), needle
    grid = api.info["grid"]
    assert float(grid["central_meridian"]).is_integer()
    assert float(grid["standard_parallel"]).is_integer()


@pytest.mark.slow
def test_key_file_gives_the_same_bytes_and_no_key_differs(log_csv, tmp_path):
    key_file = tmp_path / "release.key"
    key_file.write_text("00112233445566778899aabbccddeeff")
    runs = [
        _cli_release(log_csv, tmp_path / f"k{i}", "--key-file", str(key_file)) for i in range(2)
    ]
    (out1, geo1, rep1), (out2, geo2, rep2) = runs[0]["files"], runs[1]["files"]
    assert out1.read_bytes() == out2.read_bytes() and geo1.read_bytes() == geo2.read_bytes()
    reports = [json.loads(p.read_text()) for p in (rep1, rep2)]
    for report in reports:  # wall times and the date of the run differ, nothing else
        report.pop("timings")
        report["provenance"].pop("date_utc")
    assert reports[0] == reports[1]
    keyless = [_cli_release(log_csv, tmp_path / f"n{i}") for i in range(2)]
    assert keyless[0]["files"][0].read_bytes() != keyless[1]["files"][0].read_bytes()


@pytest.mark.slow
def test_windows_do_not_join_into_trajectories_by_default(log_csv, tmp_path):
    # the attacker's join: a pseudonym seen in several windows chains them into a trajectory,
    # and the set of windows a pseudonym appears in links it across two releases
    table = _cli_release(log_csv, tmp_path / "default")["table"]
    assert (table.groupby("user")["window"].nunique() == 1).all()
    other = _cli_release(log_csv, tmp_path / "other")["table"]
    windows_of = [t.groupby("user")["window"].agg(frozenset) for t in (table, other)]
    multi = [w[w.map(len) > 1] for w in windows_of]
    assert multi[0].empty and multi[1].empty  # no window set to match on
    linked = _cli_release(log_csv, tmp_path / "linked", "--linkage", "pseudonym")
    assert (linked["table"].groupby("user")["window"].nunique() > 1).any()
    assert "trajectories stay linkable" in linked["printed"]


# -- trajectory linkage: an attacker who knows p true (place, time) points of a target ------


def _samples_table(table: pd.DataFrame) -> pd.DataFrame:
    """A trajectory table as the attacker reads it: intervals in ns and region polygons."""
    import shapely

    return pd.DataFrame(
        {
            "user": table["user"].to_numpy(),
            "start": _ns(table["start"]),
            "end": _ns(table["end"]),
            "geom": shapely.from_wkt(table["region_wkt"].to_numpy())
            if "region_wkt" in table
            else np.asarray(table["region"].to_numpy()),
        }
    )


def _candidates(samples: pd.DataFrame, points: pd.DataFrame) -> set:
    """Pseudonyms whose published samples cover every known point at its time."""
    import shapely

    found = None
    for lon, lat, t in zip(points["lon"], points["lat"], points["time_ns"]):
        live = samples[(samples["start"] <= t) & (t < samples["end"])]
        inside = shapely.covers(live["geom"].to_numpy(), shapely.Point(lon, lat))
        here = set(live["user"].to_numpy()[inside])
        found = here if found is None else found & here
    return found or set()


@pytest.fixture(scope="module")
def trajectory_releases(log_csv, chronological_log, tmp_path_factory):
    """Two CLI releases with the defaults and an API release with a known key."""
    folder = tmp_path_factory.mktemp("trajectory")
    tables = [
        _cli_release(log_csv, folder / name, "--linkage", "trajectory")["table"]
        for name in ("one", "two")
    ]
    api = location.cloak(
        chronological_log, K, linkage="trajectory", key=REFERENCE_KEY, measures=False
    )
    return tables, api


def test_trajectory_linkage_attack_at_most_one_over_k(trajectory_releases, chronological_log):
    (cli_table, _), api = trajectory_releases
    published = chronological_log.loc[api.source_index.index].assign(
        time_ns=lambda d: _ns(d["time"]), pseudonym=api.data["user"].to_numpy()[api.source_index]
    )
    rng = np.random.default_rng(0)
    targets = rng.choice(published["user"].unique(), 15, replace=False)
    for table, own in ((cli_table, False), (api.data, True)):
        samples = _samples_table(table)
        for p in (1, 2, 4):
            success = []
            for target in targets:
                fixes = published[published["user"] == target]
                known = fixes.iloc[rng.choice(len(fixes), min(p, len(fixes)), replace=False)]
                found = _candidates(samples, known)
                if own:  # the test knows the target's pseudonym in the API release
                    assert known["pseudonym"].iloc[0] in found
                success.append(1 / len(found))
            assert max(success) <= 1 / K, (p, max(success))


def test_trajectory_order_and_pseudonyms_carry_nothing(trajectory_releases, chronological_log):
    (one, two), api = trajectory_releases
    assert len(one) == len(two) and not set(one["user"]) & set(two["user"])

    def trajectory_of_row(table: pd.DataFrame) -> np.ndarray:
        seq = {
            user: tuple(sorted(zip(g["start"], g["end"], g["region_id"])))
            for user, g in table.groupby("user")
        }
        ids = {s: i for i, s in enumerate(sorted(set(seq.values())))}
        return np.array([ids[seq[user]] for user in table["user"]])

    t1, t2 = trajectory_of_row(one), trajectory_of_row(two)
    # joined by position, rows agree on the trajectory no more often than chance
    counts = np.bincount(t1)
    chance = float(((counts / counts.sum()) ** 2).sum())
    assert float((t1 == t2).mean()) < chance + 0.05
    # the users' order is not the input order: each pseudonym's position vs its first input row
    pseudonym = api.data["user"].to_numpy()[api.source_index.to_numpy()]
    first_row = pd.Series(api.source_index.index).groupby(pseudonym).min()
    position = {u: i for i, u in enumerate(pd.unique(api.data["user"]))}
    rho = spearmanr(first_row.to_numpy(), first_row.index.map(position))[0]
    assert abs(rho) < 0.2, rho


def test_window_pseudonyms_never_repeat_across_windows_api(chronological_log):
    r = location.cloak(chronological_log, K, window="30min", measures=False)
    assert (r.data.groupby("user")["window"].nunique() == 1).all()
    again = location.cloak(chronological_log, K, window="30min", measures=False)
    assert not set(r.data["user"]) & set(again.data["user"])
    # the release's own measure of chaining by spatial continuity is reported
    measured = location.cloak(chronological_log, K, window="30min")
    assert 0.0 <= measured.risk["after"]["continuity_chain_share"] <= 1.0
    for p in (1, 2, 4):
        assert measured.risk["after"][f"linkage_p{p}"] <= measured.risk["before"][f"linkage_p{p}"]
