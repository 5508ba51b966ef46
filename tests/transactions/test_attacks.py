"""Attacks on published releases, run the way an attacker would (issue 10, findings 3 and 4).

The attacker holds the published files and knows the software and every printed parameter.
Each attack must do no better than chance on releases made with the CLI and API defaults.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

import transactions
from tests._support import shared_file
from transactions._band import band_order
from transactions._data import encode_baskets
from transactions.cli import SAMPLE, cli
from transactions.io import read_transactions

HEAD_SENSITIVE = [110, 271, 413]


def _noise(p_chance: float, n: int) -> float:
    """Three standard deviations of a success rate over ``n`` independent tries."""
    return 3 * math.sqrt(p_chance * (1 - p_chance) / max(n, 1))


# ---------------------------------------------------------------- band matrix (finding 3)
def _published_band(doc: dict) -> dict:
    """The band release as the attacker reads it from the published JSON file."""
    return {
        "qi": [None if t is None else frozenset(t["items"]) for t in doc["transactions"]],
        "group": [-1 if t is None else t["group"] for t in doc["transactions"]],
        "sensitive_items": doc["sensitive_items"],
        "p": doc["p"],
    }


def _attacker_band_order(published: dict) -> np.ndarray:
    """Band position of every published transaction, recomputed from the QI sets alone."""
    qi = published["qi"]
    sens = set(published["sensitive_items"])
    rows = [sorted(t, key=str) if t is not None else [] for t in qi]
    # the published sensitive item names complete the item domain of the input
    b = encode_baskets(rows + [sorted(sens, key=str)])
    mask = np.array([x in sens for x in b.domain.tolist()], dtype=bool)
    order, _cols, _stats = band_order(b, ~mask)
    n = len(qi)
    order = order[order < n]
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    return order, pos


def band_replay_attack(published: dict, p: int, alpha: int = 3) -> dict[int, list[int]]:
    """For each group, the members whose replayed group equals the published group.

    The deterministic grouping walks the band: a seed takes the ``p - 1`` transactions of
    its window (``alpha * p`` each side) sharing the most QI items with it, nearest first.
    The attacker recomputes the band order, tries every member as the seed, and keeps the
    members whose replay (among the window's transactions of this group and of the
    leftover group, the ones still free) gives back exactly the published group.
    """
    qi = published["qi"]
    group = np.asarray(published["group"], dtype=np.int64)
    order, pos = _attacker_band_order(published)
    n = len(qi)
    sets = [frozenset(t) if t is not None else frozenset() for t in qi]
    sizes = np.bincount(group[group >= 0])
    leftover = int(np.argmax(sizes))
    members: dict[int, list[int]] = {}
    for i, g in enumerate(group.tolist()):
        if g >= 0 and g != leftover:
            members.setdefault(g, []).append(i)
    w = alpha * p
    found = {}
    for g, mem in members.items():
        target = set(mem)
        hits = []
        for x in mem:
            at = int(pos[x])
            cand = [
                int(c)
                for c in order[max(0, at - w) : min(n, at + w + 1)]
                if c != x and group[c] in (g, leftover)
            ]
            overlap = np.array([len(sets[x] & sets[c]) for c in cand])
            dist = np.abs(pos[cand] - at)
            chosen = {cand[j] for j in np.lexsort((dist, -overlap))[: p - 1]}
            if chosen | {x} == target:
                hits.append(x)
        found[g] = hits
    return found


def band_median_attack(published: dict) -> dict[int, int]:
    """Guess, in every group, the member in the middle of the group's band positions."""
    group = np.asarray(published["group"], dtype=np.int64)
    _order, pos = _attacker_band_order(published)
    leftover = int(np.argmax(np.bincount(group[group >= 0])))
    members: dict[int, list[int]] = {}
    for i, g in enumerate(group.tolist()):
        if g >= 0 and g != leftover:
            members.setdefault(g, []).append(i)
    return {g: mem[int(np.argsort(pos[mem])[len(mem) // 2])] for g, mem in members.items()}


def _score(original, source_index, published, sensitive, p):
    """Share of groups where the replay pinpoints one member who holds a sensitive item,
    and the same for the median guess; with the chance level of a guess."""
    sens = set(sensitive)
    holds = [bool(original[int(i)] & sens) for i in source_index]
    replay = band_replay_attack(published, p)
    hits = sum(1 for h in replay.values() if len(h) == 1 and holds[h[0]])
    median = band_median_attack(published)
    median_hits = sum(holds[x] for x in median.values())
    group = np.asarray(published["group"])
    chance = np.mean([np.mean([holds[i] for i in np.flatnonzero(group == g)]) for g in replay])
    n = len(replay)
    return hits / n, median_hits / n, float(chance), n


def _worst_item_share(original, source_index, published, sensitive) -> float:
    """The largest share of one sensitive item's holders among the members of a group."""
    group = np.asarray(published["group"], dtype=np.int64)
    leftover = int(np.argmax(np.bincount(group[group >= 0])))
    worst = 0.0
    for item in sensitive:
        holds = np.array([item in original[int(i)] for i in source_index], dtype=np.int64)
        for g in np.unique(group[(group >= 0) & (group != leftover)]):
            worst = max(worst, float(holds[group == g].mean()))
    return worst


def _check_band_attack(original, sensitive, p, rel=None, doc=None, source_index=None):
    if rel is not None:
        published, source_index = rel.data, rel.source_index
    else:
        published = _published_band(doc)
    replay, median, chance, n = _score(original, source_index, published, sensitive, p)
    assert n >= 50
    # the set-up holds the privacy degree: in every group each sensitive item is held by at
    # most 1/p of the members (a group may hold several items, so the chance of a holder
    # can exceed 1/p)
    assert _worst_item_share(original, source_index, published, sensitive) <= 1 / p + 1e-9
    # the replay pinpointed the holder in 68 % of the groups of the bundled sample and of
    # BMS-WebView-1 (and 73 % of retail) before the members were drawn with the secret key
    assert replay <= 1 / p + _noise(1 / p, n), (replay, n)
    assert median <= chance + _noise(chance, n), (median, chance, n)


def test_band_replay_attack_api_default(retail_head):
    rel = transactions.band_matrix(retail_head, HEAD_SENSITIVE, p=5, measures=False)
    _check_band_attack(retail_head, HEAD_SENSITIVE, 5, rel=rel)


def test_band_replay_attack_cli_default(tmp_path):
    out = tmp_path / "band.json"
    res = CliRunner().invoke(
        cli,
        [
            "band",
            str(SAMPLE),
            "--sensitive",
            ",".join(map(str, HEAD_SENSITIVE)),
            "-p",
            "5",
            "-o",
            str(out),
            "--no-measures",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert "source_index" not in out.read_text()
    assert len(doc["transactions"]) == 2000
    # the file carries no link to the input, so score an upper bound: a hit needs the
    # replay to single out exactly one member of the group
    replay = band_replay_attack(_published_band(doc), 5)
    single = sum(1 for h in replay.values() if len(h) == 1) / len(replay)
    assert single <= 1 / 5 + _noise(1 / 5, len(replay)), single
    groups = [t["group"] for t in doc["transactions"] if t is not None]
    # published group ids carry no order: not the order of first appearance
    first_seen = list(dict.fromkeys(groups))
    assert first_seen != sorted(first_seen)
    # no input order either: the QI sets are not in input order
    head = read_transactions(SAMPLE)
    sens = set(HEAD_SENSITIVE)
    in_order = sum(
        1
        for t, d in zip(head, doc["transactions"])
        if d is not None and frozenset(map(str, t - sens)) == frozenset(map(str, d["items"]))
    )
    assert in_order < 200  # identical-by-position transactions: chance level, not 2000


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,rel_path,sensitive",
    [
        ("bms", "bms/BMS-WebView-1.dat", [12844, 18872, 10882]),
    ],
)
def test_band_replay_attack_shared_data(name, rel_path, sensitive):
    data = read_transactions(shared_file(rel_path))
    rel = transactions.band_matrix(data, sensitive, p=5, measures=False)
    _check_band_attack(data, sensitive, 5, rel=rel)


# ------------------------------------ band matrix: what the attacker sees of each member
# Every cheap feature the published file shows of a group's members (empty QI set, QI-set
# size and its rank in the group, the support of the rarest QI item, the band position, the
# place in the file, the items shared with the other members) is turned into a guess of the
# sensitive holder; each guess must do no better than a random member.  Before the members
# were drawn among look-alikes of the seed, "the one member with an empty QI set" found the
# holder in 38 % of the BMS-WebView-1 groups and "the QI-set size rank the holder takes
# most often" in 41 % of the retail groups (p = 5, chance 20 %).
Z_BOUND = 4.5  # one-sided, ~3e-6 per guess: no flaky failures over every guess and data set


def _evaluated_groups(published: dict) -> list[np.ndarray]:
    """Members of every group the attacker knows holds a sensitive item (published counts),
    the last (largest, leftover) group aside."""
    group = np.asarray(published["group"], dtype=np.int64)
    sizes = np.bincount(group[group >= 0])
    leftover = int(np.argmax(sizes))
    counts = published["sensitive_counts"]
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(sizes.size + 1))
    return [
        order[bounds[g] : bounds[g + 1]]
        for g in range(sizes.size)
        if g != leftover and sizes[g] >= 2 and any(counts[g].values())
    ]


def _member_features(published: dict) -> dict[str, np.ndarray]:
    """Per published transaction, what the attacker can read or recompute from the file."""
    sets = [frozenset() if t is None else frozenset(t) for t in published["qi"]]
    support: Counter = Counter(x for t in sets for x in t)
    size = np.array([len(t) for t in sets], dtype=np.float64)
    rarest = np.array([min((support[x] for x in t), default=np.inf) for t in sets])
    _order, band = _attacker_band_order(published)
    return {
        "empty QI set": (size == 0).astype(np.float64),
        "QI-set size": size,
        "rarest QI item support": rarest,
        "band position": band.astype(np.float64),
        "file position": np.arange(len(sets), dtype=np.float64),
    }


def _overlap(published: dict, members: np.ndarray) -> np.ndarray:
    sets = [frozenset(published["qi"][i]) for i in members.tolist()]
    return np.array([sum(len(a & b) for b in sets) - len(a) for a in sets], dtype=np.float64)


def _ranks(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rank of each value in its group, ties broken at random (as an attacker would)."""
    order = np.lexsort((rng.random(values.size), values))
    rank = np.empty(values.size, dtype=np.int64)
    rank[order] = np.arange(values.size)
    return rank


def feature_guesses(published: dict, holds: np.ndarray, p: int) -> dict[str, tuple]:
    """Every cheap guess of the holder: name -> (hits, expected hits, variance, groups).

    A guess picks, in each evaluated group, the member with the largest (or smallest, or
    median) value of one feature, ties at random; "rank learnt" guesses take the in-group
    rank of a feature that the holder took most often in the other half of the groups (an
    attacker learns it by running the software on data of their own).  Expected hits and
    their variance are those of a uniformly random member.
    """
    rng = np.random.default_rng(7)  # the attacker's own tie-breaking
    features = _member_features(published)
    groups = _evaluated_groups(published)
    out: dict[str, tuple] = {}
    share = np.array([holds[g].mean() for g in groups])
    expected, variance = float(share.sum()), float((share * (1 - share)).sum())

    def tally(name: str, picks: list[int]) -> None:
        out[name] = (int(holds[picks].sum()), expected, variance, len(groups))

    per_group = {name: [values[g] for g in groups] for name, values in features.items()}
    per_group["shared QI items"] = [_overlap(published, g) for g in groups]
    for name, values in per_group.items():
        ranks = [_ranks(v, rng) for v in values]
        tally(f"largest {name}", [g[r.argmax()] for g, r in zip(groups, ranks)])
        tally(f"smallest {name}", [g[r.argmin()] for g, r in zip(groups, ranks)])
        tally(
            f"median {name}",
            [g[np.flatnonzero(r == (r.size - 1) // 2)[0]] for g, r in zip(groups, ranks)],
        )
        half = np.arange(len(groups)) % 2
        picks = []
        for learn in (0, 1):
            rate = Counter(
                int(r[holds[g]].min())
                for g, r, h in zip(groups, ranks, half)
                if h == learn and r.size == p and holds[g].any()
            )
            best = max(range(p), key=lambda x: (rate[x], -x))
            picks += [
                g[np.flatnonzero(r == min(best, r.size - 1))[0]]
                for g, r, h in zip(groups, ranks, half)
                if h != learn
            ]
        out[f"rank learnt: {name}"] = (
            int(holds[picks].sum()),
            expected,
            variance,
            len(groups),
        )
    return out


def _assert_guesses_at_chance(published: dict, holds: np.ndarray, p: int, min_groups: int):
    guesses = feature_guesses(published, np.asarray(holds, dtype=bool), p)
    failed = {
        name: f"{hits}/{n} hits, chance {expected:.1f}"
        for name, (hits, expected, variance, n) in guesses.items()
        if hits > expected + Z_BOUND * math.sqrt(variance) + 1
    }
    n = next(iter(guesses.values()))[3]
    assert n >= min_groups, n
    assert not failed, failed
    return guesses


def _holds(original, source_index, sensitive) -> np.ndarray:
    sens = set(sensitive)
    return np.array([bool(original[int(i)] & sens) for i in source_index])


def _looks_unlike_members(seed: int = 0, n: int = 6000) -> tuple[list[set], list[int]]:
    """Baskets whose sensitive holders look unlike everyone else: a third of them bought
    nothing but sensitive items (empty QI set), the others bought more QI items."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, 301) ** 1.1
    popularity /= popularity.sum()
    sensitive = [1001, 1002, 1003]
    data = []
    for i in range(n):
        holder = i % 10 == 0
        if holder and rng.random() < 0.35:
            size = 0
        else:
            size = int(rng.geometric(0.2 if holder else 0.35))
        items = set(rng.choice(300, size=min(size, 60), replace=False, p=popularity).tolist())
        if holder:
            items.add(sensitive[int(rng.integers(3))])
        data.append(items)
    return data, sensitive


def _empty_holders_hidden(published: dict, held: list[set], p: int) -> None:
    """In every group, the members with an empty QI set hold each sensitive item at most
    1/p of the time (the attacker knows that such a member bought a sensitive item).

    ``held`` lists the sensitive items of every published transaction."""
    group = np.asarray(published["group"])
    empty = np.array([t is not None and not t for t in published["qi"]])
    for g in np.unique(group[empty & (group >= 0)]).tolist():
        inside = np.flatnonzero(empty & (group == g))
        counts = Counter(s for i in inside.tolist() for s in held[i])
        assert max(counts.values(), default=0) * p <= inside.size, (g, counts, inside.size)


def _held(original, source_index, sensitive) -> list[set]:
    sens = set(sensitive)
    return [original[int(i)] & sens for i in source_index]


def test_band_member_features_synthetic_api_default():
    data, sensitive = _looks_unlike_members()
    rel = transactions.band_matrix(data, sensitive, p=5, measures=False)
    assert rel.verify().passed
    holds = _holds(data, rel.source_index, sensitive)
    _assert_guesses_at_chance(rel.data, holds, 5, min_groups=250)
    _empty_holders_hidden(rel.data, _held(data, rel.source_index, sensitive), 5)
    # three sensitive items cannot hide a holder among p = 5 empty QI sets: suppressed
    empty_holders = sum(1 for t in data if not t - set(sensitive))
    assert rel.suppressed == empty_holders > 150


def test_band_empty_holders_grouped_among_themselves():
    # with 6 sensitive items, holders with an empty QI set can form groups of p = 3 empty
    # QI sets holding different items: published, and still at most 1/p per item
    rng = np.random.default_rng(1)
    sensitive = list(range(100, 106))
    data = [{int(x) for x in rng.choice(50, size=1 + int(rng.integers(4)))} for _ in range(600)]
    data += [{s} for s in sensitive for _ in range(8)]
    rel = transactions.band_matrix(data, sensitive, p=3, measures=False)
    assert rel.verify().passed
    _empty_holders_hidden(rel.data, _held(data, rel.source_index, sensitive), 3)
    published_empty = sum(1 for t in rel.data["qi"] if t is not None and not t)
    assert published_empty >= 36  # most of the 48 are published, not suppressed


@pytest.mark.slow
def test_band_member_features_synthetic_cli(tmp_path):
    data, sensitive = _looks_unlike_members(seed=2)
    source = tmp_path / "baskets.dat"
    source.write_text("".join(" ".join(map(str, sorted(t))) + "\n" for t in data))
    key = tmp_path / "release.key"
    key.write_text("0123456789abcdef0123456789abcdef\n")
    out = tmp_path / "band.json"
    args = ["band", str(source), "--sensitive", ",".join(map(str, sensitive)), "-p", "5"]
    res = CliRunner().invoke(cli, [*args, "-o", str(out), "--key-file", str(key)])
    assert res.exit_code == 0, res.output
    published = _published_band(json.loads(out.read_text()))
    published["sensitive_counts"] = [
        g["sensitive_counts"] for g in json.loads(out.read_text())["groups"]
    ]
    # the key holder's own copy of the same release gives the truth (same bytes)
    rel = transactions.band_matrix(read_transactions(source), sensitive, p=5, seed=0, key=key)
    assert [None if t is None else set(t) for t in rel.data["qi"]] == [
        None if t is None else {int(x) for x in t} for t in published["qi"]
    ]
    assert list(rel.data["group"]) == published["group"]
    holds = _holds(data, rel.source_index, sensitive)
    _assert_guesses_at_chance(published, holds, 5, min_groups=250)
    _empty_holders_hidden(published, _held(data, rel.source_index, sensitive), 5)


@pytest.mark.slow
@pytest.mark.parametrize(
    "relative,sensitive,min_groups",
    [
        ("bms/BMS-WebView-1.dat", [12844, 18872, 10882], 700),
        ("retail/retail.dat", [1144, 150, 2199], 1500),
    ],
)
def test_band_member_features_shared_data(relative, sensitive, min_groups):
    # a fixed key: one reproducible release per data set (real baskets keep weak traces,
    # e.g. holders share a little fewer QI items with their group, about +2.5 standard
    # deviations on either set; the bound must not fail at random on them)
    data = read_transactions(shared_file(relative))
    key = b"band member features, shared data"
    rel = transactions.band_matrix(data, sensitive, p=5, measures=False, key=key)
    holds = _holds(data, rel.source_index, sensitive)
    _assert_guesses_at_chance(rel.data, holds, 5, min_groups)
    _empty_holders_hidden(rel.data, _held(data, rel.source_index, sensitive), 5)


# ---------------------------------------------------- positional joins (finding 4)
def _same_person_share(a, b) -> float:
    """Share of positions where two releases publish the same input transaction."""
    return float(np.mean(np.asarray(a.source_index) == np.asarray(b.source_index)))


@pytest.mark.slow
def test_positional_join_of_km_and_k_releases_is_random(retail_head):
    km = transactions.km_anonymize(retail_head, k=5, m=2, measures=False)
    kk = transactions.k_anonymize(retail_head, k=5, measures=False)
    n = len(retail_head)
    # before: output j was input j in both, so joining by position linked every basket
    assert _same_person_share(km, kk) <= 1 / n + _noise(1 / n, n) + 2 / n
    for rel in (km, kk):
        assert sorted(rel.source_index.tolist()) == list(range(n))
        assert "source_index" not in rel.to_json() and "source_index" not in repr(rel)
    # an attacker's view: positional pairing finds no more consistent pairs than a
    # random pairing (consistent: the two label sets are generalizations of one basket)
    tax_km, tax_k = km.taxonomy, kk.taxonomy

    def leaves(tax, labels):
        index = {str(lab): i for i, lab in enumerate(tax.labels.tolist())}
        out = set()
        for lab in labels:
            node = index[str(lab)]
            out |= set(np.flatnonzero((tax.nanc[: tax.n_items] == node).any(axis=1)).tolist())
        return out

    def consistent(pairs):
        return np.mean(
            [
                leaves(tax_k, b) >= leaves(tax_km, a) or leaves(tax_km, a) >= leaves(tax_k, b)
                for a, b in pairs
            ]
        )

    sample = np.random.default_rng(1).choice(n, size=300, replace=False)
    positional = consistent([(km.data[j], kk.data[j]) for j in sample])
    shuffled = np.random.default_rng(2).permutation(n)
    random_pairs = consistent([(km.data[j], kk.data[shuffled[j]]) for j in sample])
    assert positional <= random_pairs + _noise(max(random_pairs, 0.05), 300)


def _covers(published_labels, basket, covers) -> bool:
    return all(any(covers(lab, x) for lab in published_labels) for x in basket) and all(
        any(covers(lab, x) for x in basket) for lab in published_labels
    )


def test_positional_join_cli_defaults(tmp_path, checks):
    head = read_transactions(SAMPLE)
    n = len(head)
    sample = np.random.default_rng(3).choice(n, size=300, replace=False)
    for cmd in ("anonymize", "k-anonymize"):
        out = tmp_path / f"{cmd}.jsonl"
        res = CliRunner().invoke(
            cli, [cmd, str(SAMPLE), "-k", "5", "-o", str(out), "--no-measures"]
        )
        assert res.exit_code == 0, res.output
        pub = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(pub) == n
        # line j of the release is a generalization of input line j: always, before
        positional = np.mean([_covers(pub[j], head[j], checks.range_covers) for j in sample])
        other = np.random.default_rng(4).permutation(n)
        random_pairs = np.mean(
            [_covers(pub[other[j]], head[j], checks.range_covers) for j in sample]
        )
        assert positional <= random_pairs + _noise(max(random_pairs, 0.05), 300), cmd


@pytest.mark.slow
def test_same_key_same_bytes_and_no_key_differs(tmp_path, retail_head):
    key = tmp_path / "release.key"
    key.write_text("0123456789abcdef0123456789abcdef\n")
    for cmd, extra in (
        ("anonymize", ["-k", "5"]),
        ("k-anonymize", ["-k", "5"]),
        ("band", ["--sensitive", "110,271,413", "-p", "5"]),
    ):
        suffix = ".json" if cmd == "band" else ".dat"
        runs = {}
        for name, opts in (
            ("a", ["--key-file", str(key)]),
            ("b", ["--key-file", str(key)]),
            ("c", []),
            ("d", []),
        ):
            out = tmp_path / f"{cmd}-{name}{suffix}"
            res = CliRunner().invoke(
                cli, [cmd, str(SAMPLE), *extra, "-o", str(out), "--no-measures", *opts]
            )
            assert res.exit_code == 0, res.output
            runs[name] = out.read_bytes()
        assert runs["a"] == runs["b"], cmd
        assert runs["c"] != runs["d"], cmd
        assert runs["a"] != runs["c"], cmd
    # API: the same key gives the same release; another seed, another order
    a = transactions.km_anonymize(retail_head, k=5, m=2, key=b"0123456789abcdef", measures=False)
    b = transactions.km_anonymize(retail_head, k=5, m=2, key=b"0123456789abcdef", measures=False)
    c = transactions.km_anonymize(
        retail_head, k=5, m=2, key=b"0123456789abcdef", seed=1, measures=False
    )
    assert a.data == b.data and a.data != c.data


def test_release_order_is_not_a_function_of_the_seed(retail_head):
    # an attacker who knows the seed cannot regenerate the order: two keyless runs with
    # the same seed publish different orders, and neither is the input order
    a = transactions.k_anonymize(retail_head, k=5, seed=0, measures=False)
    b = transactions.k_anonymize(retail_head, k=5, seed=0, measures=False)
    assert (a.source_index != b.source_index).any()
    n = len(retail_head)
    rho = np.corrcoef(np.arange(n), a.source_index)[0, 1]
    assert abs(rho) < 5 / math.sqrt(n)  # 5 sigma of a random permutation: P(fail) < 1e-6


# ---------------------------------------------------------------- disassociation (issue 15)
def _chunks_with_links(release):
    """(chunk, input rows of its subrecords) for every chunk, in publication pre-order."""

    def walk(clusters):
        for c in clusters:
            yield c
            yield from walk(c.clusters)

    chunks = [chunk for c in walk(release.data) for chunk in c.record_chunks]
    links = [link for per_cluster in release.source_index for link in per_cluster]
    assert len(chunks) == len(links)
    return list(zip(chunks, links))


def _cluster_links(release):
    """Per (joint) cluster: the input rows of each of its chunks."""
    return [per for per in release.source_index if len(per) >= 1]


def test_disassociation_chunks_joined_by_position_link_at_chance(retail_head):
    # API defaults (no key): within a cluster, subrecord i of one chunk and subrecord i of
    # another belong to the same person with probability 1/size: one match per chunk pair
    release = transactions.disassociate(retail_head, k=5, m=2, measures=False)
    matches = pairs = 0
    for per in _cluster_links(release):
        for a, b in zip(per, per[1:]):
            matches += int((a == b).sum())
            pairs += 1
    assert pairs >= 20
    assert matches <= pairs + 4 * math.sqrt(pairs) + 2  # Poisson(pairs) at chance


def test_two_disassociation_releases_joined_by_position_at_chance(retail_head):
    # two keyless releases of the same input: the partition is the same, the order is not
    a = transactions.disassociate(retail_head, k=5, m=2, measures=False)
    b = transactions.disassociate(retail_head, k=5, m=2, measures=False)
    by_rows = {tuple(np.sort(link)): link for _c, link in _chunks_with_links(b)}
    matches = joined = 0
    for _chunk, link in _chunks_with_links(a):
        other = by_rows.get(tuple(np.sort(link)))
        if other is None:
            continue
        matches += int((link == other).sum())
        joined += 1
    assert joined >= 20
    assert matches <= joined + 4 * math.sqrt(joined) + 2


def test_disassociation_subrecord_order_uncorrelated_with_input_order(retail_head):
    release = transactions.disassociate(retail_head, k=5, m=2, measures=False)
    pos, rank = [], []
    for _chunk, link in _chunks_with_links(release):
        n = link.size
        if n < 3:
            continue
        pos.append(np.arange(n) / (n - 1))
        rank.append(np.argsort(np.argsort(link)) / (n - 1))
    x, y = np.concatenate(pos), np.concatenate(rank)
    rho = np.corrcoef(x, y)[0, 1]
    assert abs(rho) < 5 / math.sqrt(x.size)


def test_disassociation_cli_releases_joined_by_position_at_chance(tmp_path):
    # the attacker holds two files made with the CLI defaults and pairs clusters of equal
    # content; equal subrecords at equal positions happen no more than by chance
    from collections import Counter

    files = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.json"
        res = CliRunner().invoke(
            cli, ["disassociate", str(SAMPLE), "-k", "5", "-o", str(out), "--no-measures"]
        )
        assert res.exit_code == 0, res.output
        files.append(json.loads(out.read_text())["clusters"])

    def chunks(clusters):
        for c in clusters:
            yield from c["record_chunks"]
            yield from chunks(c.get("clusters", []))

    def signature(chunk):
        return tuple(sorted(json.dumps(s) for s in chunk))

    assert files[0] != files[1]
    other = {signature(ch): ch for ch in chunks(files[1])}
    same = chance = 0.0
    n = 0
    for ch in chunks(files[0]):
        twin = other.get(signature(ch))
        if twin is None or len(ch) < 2:
            continue
        keys = [json.dumps(s) for s in ch]
        same += sum(x == json.dumps(y) for x, y in zip(keys, twin))
        freq = np.array(list(Counter(keys).values()), dtype=float)
        chance += float((freq**2).sum() / len(ch))  # expected equal positions at random
        n += 1
    assert n >= 20
    assert same <= chance + 4 * math.sqrt(chance) + 2
