"""Attacks on querylogs releases made as a user makes them (CLI and API defaults).

Each test runs the attack an attacker holding every published artefact (published log,
JSON and HTML reports, printed summary) would run, and asserts it does no better than
chance.
"""

import itertools
import json
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import spearmanr

from querylogs import anonymize, read_log, synthetic_log, write_log
from querylogs.cli import cli
from structanon.io import KEY_ENV, Pseudonymizer


@pytest.fixture(autouse=True)
def _no_key_from_environment(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)


def published_clusters(data: pd.DataFrame) -> dict[frozenset, list[str]]:
    """Users grouped by identical published logs (what anyone sees in the output)."""
    logs: dict[str, Counter] = {}
    for user, query, time, url in zip(
        data["user"], data["query"], data["time"].astype(str), data["url"]
    ):
        logs.setdefault(user, Counter())[(query, time, None if pd.isna(url) else url)] += 1
    clusters: dict[frozenset, list[str]] = {}
    for user, rows in logs.items():
        clusters.setdefault(frozenset(rows.items()), []).append(user)
    return clusters


def numeric_lists(report_json: dict, *texts: str) -> list[list[float]]:
    """Every list of numbers in the JSON report, and every ``[n, n, ...]`` in the texts."""
    found = []

    def walk(value):
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            if len(value) >= 2 and all(isinstance(v, (int, float)) for v in value):
                found.append([float(v) for v in value])
            for item in value:
                walk(item)

    walk(report_json)
    for text in texts:
        text = re.sub(r"base64,[A-Za-z0-9+/=]+", "", text)
        for match in re.findall(r"\[([0-9.,\s]+)\]", text):
            values = [float(v) for v in match.replace(",", " ").split()]
            if len(values) >= 2:
                found.append(values)
    return found


def cluster_total_attack(lists: list[list[float]], clusters: dict) -> dict[tuple, float]:
    """For every choice of four equally long lists as (size, published per user, added,
    suppressed), match each entry to the one published cluster of that size and
    per-user count and claim its original total ``size * published + suppressed - added``.
    Returns the claims of the choice that names the most clusters."""
    shape = Counter((len(users), sum(n for _, n in rows)) for rows, users in clusters.items())
    best: dict[tuple, float] = {}
    by_length: dict[int, list] = {}
    for values in lists:
        by_length.setdefault(len(values), []).append(values)
    for group in by_length.values():
        for size, pub, add, sup in itertools.permutations(group, 4):
            claims = {}
            for i in range(len(size)):
                cluster = (int(size[i]), int(pub[i]))
                if shape.get(cluster) == 1:
                    claims[cluster] = size[i] * pub[i] + sup[i] - add[i]
            if len(claims) > len(best):
                best = claims
    return best


def true_cluster_totals(log, data, key: bytes) -> dict[tuple, float]:
    """The tester's truth: each published cluster's members' original query events."""
    p = Pseudonymizer(key)
    users = log["user"].astype(str).unique()
    pseudonym = dict(zip(p.pseudonymize(users), users))
    events = log.assign(query=log["query"].str.lower().str.split().str.join(" "))
    events = events.drop_duplicates(["user", "query", "time"])
    per_user = events.groupby(events["user"].astype(str)).size()
    truth = {}
    for rows, members in published_clusters(data).items():
        shape = (len(members), sum(n for _, n in rows))
        truth[shape] = float(sum(per_user[pseudonym[m]] for m in members))
    return truth


def test_reports_do_not_give_cluster_original_totals(tmp_path):
    """Finding 6: per-cluster published / added / suppressed lists gave most clusters'
    original query totals.  From every artefact the attack now recovers none."""
    log = synthetic_log(60, 6000, seed=3)
    source, key = tmp_path / "log.tsv", tmp_path / "key"
    write_log(log, source, aol=True)
    key.write_text("00112233445566778899aabbccddeeff")
    out, rep_json, rep_html = tmp_path / "anon.tsv", tmp_path / "r.json", tmp_path / "r.html"
    summaries = []
    for report in (rep_json, rep_html):
        result = CliRunner().invoke(
            cli,
            [
                "anonymize",
                str(source),
                "-k",
                "2",
                "-o",
                str(out),
                "--report",
                str(report),
                "--key-file",
                str(key),
                "--keep-identifiers",
            ],
        )
        assert result.exit_code == 0, result.output
        summaries.append(result.output)
    data = read_log(out, "csv", sep="\t")
    data["time"] = data["time"].dt.strftime("%Y-%m-%d")
    clusters = published_clusters(data)
    truth = true_cluster_totals(read_log(source), data, bytes.fromhex(key.read_text()))
    assert len(clusters) >= 15
    lists = numeric_lists(
        json.loads(rep_json.read_text()), rep_html.read_text(), *summaries, out.read_text()
    )
    claims = cluster_total_attack(lists, clusters)
    recovered = [c for c, total in claims.items() if truth.get(c) == total]
    assert recovered == []
    # the attack itself works: on the per-cluster lists the reports used to publish it
    # recovers every cluster it can match
    shapes = sorted(truth)
    sizes = [float(s) for s, _ in shapes]
    pub = [float(n) for _, n in shapes]
    added = [float(i % 3) for i in range(len(shapes))]
    suppressed = [truth[c] - s * n + a for c, s, n, a in zip(shapes, sizes, pub, added)]
    fake = {
        "info": {
            "clusters": {
                "size": sizes,
                "published_per_user": pub,
                "added": added,
                "suppressed": suppressed,
            }
        }
    }
    leaked = cluster_total_attack(numeric_lists(fake), clusters)
    matchable = sum(
        n == 1
        for n in Counter(
            (len(users), sum(n for _, n in rows)) for rows, users in clusters.items()
        ).values()
    )
    assert sum(truth[c] == total for c, total in leaked.items()) == matchable
    assert matchable >= len(clusters) / 3


def _cli_release(tmp_path, source, name, *extra):
    out = tmp_path / name
    result = CliRunner().invoke(
        cli, ["anonymize", str(source), "-k", "5", "-o", str(out), "--no-measures", *extra]
    )
    assert result.exit_code == 0, result.output
    return out


def test_keyless_cli_releases_differ_and_positional_join_is_chance(tmp_path):
    source = tmp_path / "log.tsv"
    write_log(synthetic_log(200, 8000, seed=4), source, aol=True)
    a, b = (_cli_release(tmp_path, source, name) for name in ("a.tsv", "b.tsv"))
    assert a.read_bytes() != b.read_bytes()
    ra, rb = (read_log(p, "csv", sep="\t") for p in (a, b))
    # (the sizes may differ a little: the secret user order breaks the grouping's ties)
    # joining by position: how often do the rows at one position carry the same content?
    content = [list(zip(r["query"], r["time"], r["url"].fillna(""))) for r in (ra, rb)]
    same = np.mean([x == y for x, y in zip(*content)])
    rng = np.random.default_rng(0)
    chance = np.mean(
        [
            np.mean(
                [x == content[1][i] for x, i in zip(content[0], rng.permutation(len(content[1])))]
            )
            for _ in range(20)
        ]
    )
    assert same <= chance + 0.02, (same, chance)


def test_keyless_api_releases_link_no_user_by_position():
    log = synthetic_log(300, 12000, seed=5)
    keys = [Pseudonymizer(), Pseudonymizer()]  # what key=None draws: fresh random keys
    a, b = (anonymize(log, 5, seed=0, key=key, measures=False) for key in keys)
    users = log["user"].astype(str).unique()
    original = [dict(zip(key.pseudonymize(users), users)) for key in keys]
    n = min(len(a.data), len(b.data))
    pairs = Counter(zip(a.data["user"][:n], b.data["user"][:n]))
    link: dict[str, tuple[str, int]] = {}
    for (ua, ub), count in pairs.items():
        if count > link.get(ua, ("", 0))[1]:
            link[ua] = (ub, count)
    correct = np.mean([original[0][ua] == original[1][ub] for ua, (ub, _) in link.items()])
    assert correct <= 0.05, correct


def test_published_order_has_no_rank_correlation_with_input_order():
    log = synthetic_log(400, 12000, seed=6)  # sorted by user and time, like AOL files
    release = anonymize(log, 5, seed=0, measures=False)
    position = log.index.get_indexer(release.source_index)
    assert (position >= 0).all() and len(position) == len(release.data)
    rho = spearmanr(np.arange(len(position)), position).statistic
    assert abs(rho) < 0.2, rho
    # the order is a function of the published values alone
    resorted = release.data.sort_values(
        ["user", "time", "query", "url"], na_position="first"
    ).reset_index(drop=True)
    pd.testing.assert_frame_equal(resorted, release.data)
    assert "source_index" not in release.to_json() and "source_index" not in repr(release)


def test_choices_among_equals_come_from_the_key_not_the_seed():
    """Every query is clicked three times: the published URL is a choice among equals."""
    users = [f"u{i}" for i in range(6)]
    rows = [
        (u, f"query {q}", pd.Timestamp("2006-03-01") + pd.Timedelta(hours=q), url)
        for u in users
        for q in range(12)
        for url in ("http://a", "http://b", "http://c")
    ]
    log = pd.DataFrame(rows, columns=["user", "query", "time", "url"])
    key = b"0123456789abcdef0123"

    def published(key, seed=0):
        data = anonymize(log, 3, seed=seed, key=key, measures=False).data
        return sorted(zip(data["query"], data["url"]))

    assert published(key) == published(key)
    assert published(key) != published(b"fedcba9876543210fedc")
    # with the seed alone, the attacker cannot replay the choice: two keyless runs differ
    assert published(None) != published(None)


def test_one_key_draws_other_clicks_for_a_different_log():
    """Two logs released under one key: the second has one more user, appended.  Each
    event of the first log has three clicked URLs at the same rows in both; were the
    click draw bound to the key and the row positions only, both releases would publish
    the same URL for every shared event (the attacker learns the draw is replayed, and
    a second release under the key would reveal nothing new; with independent draws a
    third of the events agree)."""
    rows = [
        (f"u{u:02d}", f"query {q}", pd.Timestamp("2006-03-01") + pd.Timedelta(hours=q), url)
        for u in range(90)
        for q in range(12)
        for url in ("http://a", "http://b", "http://c")
    ]
    first = pd.DataFrame(rows, columns=["user", "query", "time", "url"])
    later = pd.concat([first, first[first["user"] == "u00"].assign(user="u99")], ignore_index=True)
    key = b"0123456789abcdef0123"

    def chosen(log):
        release = anonymize(log, 3, seed=0, key=key, measures=False)
        rows = np.asarray(release.source_index)
        return {tuple(log.loc[r, ["user", "query"]]): r for r in rows if r < len(first)}

    a, again, b = chosen(first), chosen(first), chosen(later)
    assert a == again
    shared = a.keys() & b.keys()  # events both releases publish
    assert len(shared) >= 100, len(shared)
    same = np.mean([a[event] == b[event] for event in shared])
    assert same < 0.5, same  # chance: 1/3


def test_same_key_file_same_bytes(tmp_path):
    source, key = tmp_path / "log.tsv", tmp_path / "key"
    write_log(synthetic_log(80, 3000, seed=7), source, aol=True)
    key.write_text("ffeeddccbbaa99887766554433221100")
    a, b = (
        _cli_release(tmp_path, source, name, "--key-file", str(key)) for name in ("a.tsv", "b.tsv")
    )
    assert a.read_bytes() == b.read_bytes()
    # another public seed draws no other events or URLs (which a union of the two releases
    # would add up); the rows are sorted by keyed pseudonym, so the bytes are the same
    c = _cli_release(tmp_path, source, "c.tsv", "--key-file", str(key), "--seed", "1")
    assert c.read_bytes() == a.read_bytes()
    other_key = tmp_path / "key2"
    other_key.write_text("00112233445566778899aabbccddeeff")
    d = _cli_release(tmp_path, source, "d.tsv", "--key-file", str(other_key))
    assert d.read_bytes() != a.read_bytes()


@pytest.mark.slow
def test_blocked_lazy_releases_link_no_user_by_position_nor_input_order():
    """The Dask engine with blocking (block_size forces it on a small log): keyless
    releases joined by position link no user; the order says nothing of the input's."""
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    log = synthetic_log(200, 5000, seed=8)
    keys = [Pseudonymizer(), Pseudonymizer()]
    releases = [
        anonymize(
            dd.from_pandas(log, npartitions=2), 5, seed=0, key=key, measures=False, block_size=50
        )
        for key in keys
    ]
    a, b = (r.data.compute().reset_index(drop=True) for r in releases)
    users = log["user"].astype(str).unique()
    original = [dict(zip(key.pseudonymize(users), users)) for key in keys]
    n = min(len(a), len(b))
    pairs = Counter(zip(a["user"][:n], b["user"][:n]))
    link: dict[str, tuple[str, int]] = {}
    for (ua, ub), count in pairs.items():
        if count > link.get(ua, ("", 0))[1]:
            link[ua] = (ub, count)
    correct = np.mean([original[0][ua] == original[1][ub] for ua, (ub, _) in link.items()])
    assert correct <= 0.05, correct
    position = releases[0].source_index.compute().to_numpy()
    rho = spearmanr(np.arange(len(position)), position).statistic
    assert abs(rho) < 0.2, rho


def test_attack_reports_do_not_tell_what_kind_of_identifier_a_user_typed(tmp_path):
    """Two logs one user apart, released under one key: the reports differed by that user's
    identifier queries by kind (one street address), content the release suppressed."""
    log = synthetic_log(60, 1500, seed=9)
    victim = pd.DataFrame(
        {
            "user": ["victim"] * 2,
            "query": ["12 elm street", "weather"],
            "time": pd.to_datetime(["2006-03-01 10:00", "2006-03-01 11:00"]),
            "rank": [None, None],
            "url": [None, None],
        }
    )
    key = tmp_path / "key"
    key.write_text("00112233445566778899aabbccddeeff")
    texts = []
    for name, frame in (("with", pd.concat([log, victim], ignore_index=True)), ("without", log)):
        source = tmp_path / f"{name}.tsv"
        write_log(frame, source, aol=True)
        for suffix in ("json", "html"):
            report = tmp_path / f"{name}.{suffix}"
            _cli_release(
                tmp_path, source, f"{name}.out.tsv", "--key-file", str(key), "--report", str(report)
            )
            texts.append(report.read_text())
    release = anonymize(
        pd.concat([log, victim], ignore_index=True), 5, key=b"0123456789abcdef", measures=False
    )
    assert release.info["identifier_queries_by_kind"]["street_address"] >= 1  # in Python
    # (the parameters name the kinds looked for; no figure counts what was found)
    for text in texts + [release.summary(), repr(release), release._repr_html_()]:
        assert not re.search(r"street.address\W{0,6}\d", text)
    doc = json.loads(texts[0])
    assert doc["withheld"] == ["identifier_queries_by_kind", "intents"]
    assert "identifier_queries_by_kind" not in doc["info"]
