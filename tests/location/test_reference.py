"""The vectorized assignment against a plain-Python transcription of its definition."""

from collections import defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from location._assign import Triples, assign_regions
from location._grid import CloakingGrid


def _code(level, kind, cx, cy):
    return int(CloakingGrid.encode(level, kind, np.int64(cx), np.int64(cy)))


def reference_assign(ix, iy, w, u, weight, top, k, adaptive):
    m = len(ix)
    region = [-1] * m
    resid = set(range(m))

    def users(members):
        return len({u[i] for i in members})

    for level in range(top + 1):
        if adaptive and level >= 1:
            parents = defaultdict(list)
            for i in sorted(resid):
                parents[(ix[i] >> level, iy[i] >> level, w[i])].append(i)
            for members in parents.values():
                wide, tall = defaultdict(list), defaultdict(list)
                for i in members:
                    wide[(ix[i] >> level, iy[i] >> (level - 1))].append(i)
                    tall[(ix[i] >> (level - 1), iy[i] >> level)].append(i)
                ok_w = {h: users(v) >= k for h, v in wide.items()}
                ok_t = {h: users(v) >= k for h, v in tall.items()}
                score_w = sum(weight[i] for h, v in wide.items() if ok_w[h] for i in v)
                score_t = sum(weight[i] for h, v in tall.items() if ok_t[h] for i in v)
                halves, ok, kind = (tall, ok_t, 2) if score_t > score_w else (wide, ok_w, 1)
                for h, v in halves.items():
                    if ok[h]:
                        for i in v:
                            region[i] = _code(level, kind, *h)
                            resid.discard(i)
        cells = defaultdict(list)
        for i in sorted(resid):
            cells[(ix[i] >> level, iy[i] >> level, w[i])].append(i)
        for (cx, cy, _), members in cells.items():
            if users(members) >= k:
                for i in members:
                    region[i] = _code(level, 0, cx, cy)
                    resid.discard(i)
    # leftovers of a top cell and window: from the smallest cell holding them all, go up
    # to the first cell holding a published group of that window; merge with its lightest
    left = defaultdict(list)
    for i in resid:
        left[(ix[i] >> top, iy[i] >> top, w[i])].append(i)
    for (_tx, _ty, win), members in sorted(left.items()):
        start = next(
            lv for lv in range(top + 1) if len({(ix[i] >> lv, iy[i] >> lv) for i in members}) == 1
        )
        cx, cy = ix[members[0]], iy[members[0]]
        for level in range(start, top + 1):
            groups = defaultdict(list)
            for i in range(m):
                if (
                    region[i] >= 0
                    and w[i] == win
                    and int(CloakingGrid.decode(np.int64(region[i]))[0]) <= level
                    and (ix[i] >> level, iy[i] >> level) == (cx >> level, cy >> level)
                ):
                    groups[region[i]].append(i)
            if groups:
                best = min(groups, key=lambda g: (sum(weight[i] for i in groups[g]), g))
                for i in groups[best] + members:
                    region[i] = _code(level, 0, cx >> level, cy >> level)
                break
    return np.array(region, dtype=np.int64)


@st.composite
def triples(draw):
    top = draw(st.integers(0, 4))
    side = 2**top
    n = draw(st.integers(1, 80))
    cells = st.integers(0, side - 1)
    rows = draw(
        st.lists(
            st.tuples(cells, cells, st.integers(0, 2), st.integers(0, 7), st.integers(1, 5)),
            min_size=1,
            max_size=n,
            unique_by=lambda r: r[:4],
        )
    )
    return top, [np.array(c, dtype=np.int64) for c in zip(*rows)]


@settings(max_examples=60, deadline=None)
@given(data=triples(), k=st.integers(1, 5), adaptive=st.booleans())
def test_vectorized_assignment_matches_reference(data, k, adaptive):
    top, (ix, iy, w, u, weight) = data
    grid = CloakingGrid(0.0, 0.0, 1.0, 0.0, 0.0, 2**top, 2**top, top)
    got, _ = assign_regions(
        Triples(ix, iy, w, u, weight), grid, k, "adaptive" if adaptive else "fixed"
    )
    want = reference_assign(
        ix.tolist(), iy.tolist(), w.tolist(), u.tolist(), weight.tolist(), top, k, adaptive
    )
    np.testing.assert_array_equal(got, want)
