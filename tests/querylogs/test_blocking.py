"""Blocked greedy grouping: blocks of similar users, grouped block by block."""

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import querylogs
from querylogs import greedy_groups, grouping_cost, user_blocks
from querylogs.cli import cli
from structanon.errors import InputError

KEY = b"blocking-test-key-0123"


@settings(max_examples=30, deadline=None)
@given(
    arrays(np.int64, st.tuples(st.integers(6, 60), st.integers(1, 8)), elements=st.integers(0, 3)),
    st.integers(1, 3),
    st.integers(0, 3),
)
def test_blocked_groups_stay_in_their_block_with_k_to_2k_minus_1(x, k, extra):
    block = 2 * k + extra
    labels = greedy_groups(x, k, block_size=block, seed=1)
    sizes = np.bincount(labels)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1 or k == 1
    blocks = user_blocks(sp.csr_matrix(x), block, seed=1)
    assert sorted(np.concatenate(blocks).tolist()) == list(range(len(x)))
    assert all(block // 2 <= b.size <= block for b in blocks) or len(blocks) == 1
    block_of = np.empty(len(x), dtype=int)
    for i, members in enumerate(blocks):
        block_of[members] = i
    for group in np.unique(labels):
        assert np.unique(block_of[labels == group]).size == 1
    # the exact cost of what was formed, as the unblocked grouping is costed
    assert grouping_cost(x, labels)["kept"] <= x.sum()


def test_one_block_is_the_unblocked_greedy():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=(80, 12)) * (rng.random((80, 12)) < 0.3)
    assert np.array_equal(greedy_groups(x, 3, block_size=80), greedy_groups(x, 3))
    assert np.array_equal(greedy_groups(x, 3, block_size=10**6), greedy_groups(x, 3))


def test_blocks_are_a_function_of_the_counts_and_seed_not_of_row_order():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(300, 40)) * (rng.random((300, 40)) < 0.2)
    x = x[np.unique(x, axis=0, return_index=True)[1]]  # no two users with equal counts
    perm = rng.permutation(len(x))
    blocks = user_blocks(sp.csr_matrix(x), 50, seed=3)
    shuffled = user_blocks(sp.csr_matrix(x[perm]), 50, seed=3)
    as_sets = sorted(sorted(b.tolist()) for b in blocks)
    back = sorted(sorted(perm[b].tolist()) for b in shuffled)
    assert as_sets == back
    other_seed = sorted(sorted(b.tolist()) for b in user_blocks(sp.csr_matrix(x), 50, seed=4))
    assert other_seed != as_sets


def test_blocks_gather_users_sharing_queries():
    # four communities of 25 users, each over its own 10 queries
    rng = np.random.default_rng(2)
    x = np.zeros((100, 40), dtype=int)
    for c in range(4):
        x[c * 25 : (c + 1) * 25, c * 10 : (c + 1) * 10] = rng.random((25, 10)) < 0.6
    x[x.sum(axis=1) == 0, 0] = 1
    community = np.repeat(np.arange(4), 25)
    perm = rng.permutation(100)
    blocks = user_blocks(sp.csr_matrix(x[perm]), 25, seed=0)
    purity = np.mean([np.bincount(community[perm[b]]).max() / b.size for b in blocks])
    # users sharing their first MinHash value are next to each other, but neighbouring
    # values belong to any community: well above a random cut (about 0.4), below 1
    assert purity > 0.6


def test_block_size_below_2k_is_refused():
    x = np.eye(10)
    with pytest.raises(InputError, match="block_size"):
        greedy_groups(x, 3, block_size=5)
    log = querylogs.synthetic_log(30, 600, seed=0)
    with pytest.raises(InputError, match="block_size"):
        querylogs.anonymize(log, 3, block_size=4, key=KEY, measures=False)


def test_anonymize_blocked_release_verifies_and_records_the_block_size():
    log = querylogs.synthetic_log(120, 3000, seed=1)
    release = querylogs.anonymize(log, 4, seed=0, block_size=30, key=KEY, measures=False)
    assert release.parameters["block_size"] == 30
    assert all(check.passed for check in querylogs.verify_log(release.data, 4))
    assert release.info["users_in"] == 120
    again = querylogs.anonymize(log, 4, seed=0, block_size=30, key=KEY, measures=False)
    assert release.data.equals(again.data)


def test_cli_block_size(tmp_path):
    src, out = tmp_path / "log.tsv", tmp_path / "out.tsv"
    querylogs.write_log(querylogs.synthetic_log(60, 1200, seed=0), src, aol=True)
    runner = CliRunner()
    bad = runner.invoke(
        cli, ["anonymize", str(src), "-o", str(out), "-k", "3", "--block-size", "4"]
    )
    assert bad.exit_code == 2 and "--block-size" in bad.output and not out.exists()
    good = runner.invoke(
        cli,
        ["anonymize", str(src), "-o", str(out), "-k", "3", "--block-size", "20", "--quiet"],
    )
    assert good.exit_code == 0, good.output
    assert out.exists()
