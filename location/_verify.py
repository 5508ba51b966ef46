"""Privacy models of a cloaked location log and its verifier, which reads the output alone.

Two models, both subclasses of :class:`structanon.models.PrivacyModel` whose ``check``
reads a published table (pandas or dask) instead of a partition:

* :class:`WindowKAnonymity`: at least ``k`` distinct users (pseudonyms) in every published
  (region, time window);
* :class:`OnePolygonPerRegion`: every ``region_id`` always carries the same polygon, so the
  ids a reader groups by are the regions the count was made for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import shapely

from structanon import CheckResult
from structanon._validation import check_int
from structanon.errors import InputError
from structanon.models import KAnonymity, PrivacyModel

from ._assign import dense_codes

__all__ = [
    "WindowKAnonymity",
    "OnePolygonPerRegion",
    "TrajectoryKAnonymity",
    "verify_cloaked",
    "verify_trajectories",
    "cloaking_models",
    "trajectory_models",
]


def _distinct_users_per_group(keys: pd.DataFrame) -> np.ndarray:
    """Distinct users per (region_id, window) of rows ``region_id, window, user``."""
    region, _ = pd.factorize(keys["region_id"])
    window, _ = pd.factorize(keys["window"])
    user, users = pd.factorize(keys["user"])
    group, n_groups = dense_codes(region, window)
    pairs = pd.unique(group * len(users) + user)
    return np.bincount(pairs // max(len(users), 1), minlength=n_groups)


class WindowKAnonymity(KAnonymity):
    """At least ``k`` distinct users in every published (region, time window).

    The group of a published row is its ``(region_id, window)``; the group's size is its
    number of distinct ``user`` values, not its number of rows (one user's many fixes
    count once).  Monotone: merging two groups of one window into a larger region keeps
    every user, and dropping (suppressing) a failing group leaves the others untouched.

    Examples
    --------
    >>> import pandas as pd
    >>> d = pd.DataFrame({"user": ["p", "q", "p"], "window": [0, 0, 1], "region_id": [7, 7, 7]})
    >>> m = WindowKAnonymity(2)
    >>> m.check(d).passed, m.check(d).worst, m.describe()
    (False, 1.0, 'k-anonymity per (region, window), k=2')
    """

    name = "k-anonymity per (region, window)"

    def __init__(self, k: int) -> None:  # integral floats (3.0) are accepted as in the CLI
        self.k = check_int(k, "k", min_value=1)

    def check(self, data: Any, sensitive: Any = None, reference: Any = None) -> CheckResult:
        """Recount distinct users per published (region_id, window) of ``data``."""
        columns = ["region_id", "window", "user"]
        if hasattr(data, "dask"):
            keys = data[columns].map_partitions(pd.DataFrame.drop_duplicates).compute()
        else:
            keys = data[columns]
        counts = _distinct_users_per_group(keys) if len(keys) else np.zeros(0, dtype=np.int64)
        ok = self.group_ok(counts)
        return CheckResult(
            model=f"distinct users per (region, window) >= {self.k}",
            passed=bool(ok.all()),
            worst=float(counts.min()) if counts.size else float("nan"),
            threshold=float(self.k),
            n_groups=int(counts.size),
            failing_groups=np.flatnonzero(~ok),
            details={"published_groups": int(counts.size)},
        )

    def describe(self) -> str:
        return f"{self.name}, k={self.k}"


def region_bounds_rows(data: Any) -> pd.DataFrame:
    """The distinct (west, south, east, north, region_id) rows of a release's polygons."""
    objects = np.asarray(data["region"].to_numpy())
    obj_id = np.fromiter(map(id, objects), dtype=np.int64, count=len(objects))
    pairs = pd.DataFrame({"region_id": data["region_id"].to_numpy(), "obj": obj_id})
    rows = np.flatnonzero(~pairs.duplicated().to_numpy())
    b = pd.DataFrame(shapely.bounds(objects[rows]), columns=["w", "s", "e", "n"])
    b["region_id"] = pairs["region_id"].to_numpy()[rows]
    return b.drop_duplicates()


class OnePolygonPerRegion(PrivacyModel):
    """Every ``region_id`` of the release carries one polygon (the same bounds everywhere).

    Not a privacy property of a group but of the publication: without it, two rows with
    one id could show different polygons and the per-(region, window) count would not be
    the count of what a reader sees.  Checked on pandas data (a dask release is built from
    the region codes, one polygon per code, by construction).

    Examples
    --------
    >>> import pandas as pd, shapely
    >>> d = pd.DataFrame({"region_id": [7, 7], "region": [shapely.box(0, 0, 1, 1),
    ...                                                   shapely.box(0, 0, 2, 2)]})
    >>> OnePolygonPerRegion().check(d).passed
    False
    """

    name = "one polygon per region_id"
    monotone = True
    monotone_with_suppression = True
    higher_is_better = False

    @property
    def threshold(self) -> float:
        return 0.0

    def group_values(self, counts, reference=None, domain=None):
        return np.asarray(counts, dtype=float)

    def check(self, data: Any, sensitive: Any = None, reference: Any = None) -> CheckResult:
        """Count the region ids of ``data`` published with more than one polygon."""
        # bounds of each distinct (region_id, polygon object), then one bounds per region_id
        return self.check_bounds(region_bounds_rows(data))

    def check_bounds(self, bounds: pd.DataFrame) -> CheckResult:
        """The check from :func:`region_bounds_rows` of the data (or of its parts, stacked)."""
        n_shapes = bounds.drop_duplicates().groupby("region_id").size()
        bad = np.flatnonzero(n_shapes.to_numpy() > 1)
        return CheckResult(
            model=self.name,
            passed=bad.size == 0,
            worst=float(bad.size),
            threshold=0.0,
            n_groups=int(len(n_shapes)),
            failing_groups=bad[:100],
        )

    def describe(self) -> str:
        return self.name

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name}


def _sequences(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per pseudonym, the code of its whole sequence of (start, end, region_id) samples.

    Returns ``(sequence_of_user, users_per_sequence)``: pseudonyms with equal codes
    publish exactly the same sequence of samples (compared as tuples, no hashing).
    """
    sample, _ = pd.factorize(
        pd.MultiIndex.from_arrays(
            [
                np.asarray(data["start"].astype("int64")),
                np.asarray(data["end"].astype("int64")),
                data["region_id"].to_numpy(),
            ]
        )
    )
    frame = pd.DataFrame({"user": data["user"].to_numpy(), "sample": sample})
    frame = frame.sort_values(["user", "sample"], kind="stable")
    per_user = frame.groupby("user", sort=False)["sample"].agg(tuple)
    seq, _ = pd.factorize(per_user)
    return seq, np.bincount(seq)


class TrajectoryKAnonymity(KAnonymity):
    """Every published trajectory is shared, sample for sample, by at least ``k`` pseudonyms.

    A pseudonym's trajectory is the set of its rows' ``(start, end, region_id)``; the group
    of a pseudonym is every pseudonym publishing exactly the same set, and the group's size
    is its number of pseudonyms.  Re-checked from the release alone.

    Examples
    --------
    >>> import pandas as pd
    >>> d = pd.DataFrame({"user": ["p", "p", "q", "q", "r"], "start": [0, 1, 0, 1, 0],
    ...                   "end": [1, 2, 1, 2, 1], "region_id": [7, 8, 7, 8, 7]})
    >>> c = TrajectoryKAnonymity(2).check(d)
    >>> c.passed, c.worst, c.n_groups
    (False, 1.0, 2)
    """

    name = "trajectory k-anonymity"

    def check(self, data: Any, sensitive: Any = None, reference: Any = None) -> CheckResult:
        """Recount the pseudonyms publishing each distinct trajectory of ``data``."""
        if len(data):
            _, counts = _sequences(data)
        else:
            counts = np.zeros(0, dtype=np.int64)
        ok = self.group_ok(counts)
        return CheckResult(
            model=f"pseudonyms per published trajectory >= {self.k}",
            passed=bool(ok.all()),
            worst=float(counts.min()) if counts.size else float("nan"),
            threshold=float(self.k),
            n_groups=int(counts.size),
            failing_groups=np.flatnonzero(~ok),
            details={"published_trajectories": int(counts.size)},
        )

    def describe(self) -> str:
        return f"{self.name}, k={self.k}"


def trajectory_models(k: int) -> list[PrivacyModel]:
    """The models every trajectory release holds in ``Release.models``."""
    return [TrajectoryKAnonymity(k), OnePolygonPerRegion()]


def verify_trajectories(data: Any, k: int) -> list[CheckResult]:
    """Recount the pseudonyms of every published trajectory from the release alone.

    Parameters
    ----------
    data : pandas.DataFrame
        A trajectory release's data: columns ``user``, ``start``, ``end``, ``region_id``,
        ``region``.
    k : int

    Returns
    -------
    list of CheckResult
        :class:`TrajectoryKAnonymity` (worst = fewest pseudonyms sharing one trajectory)
        and, for non-empty data, :class:`OnePolygonPerRegion`.

    Notes
    -----
    Passes when every distinct sequence ``{(start, end, region_id)}`` of a pseudonym is
    the sequence of at least ``k`` pseudonyms: identical within each cluster.
    """
    if not hasattr(data, "columns") or hasattr(data, "dask"):
        raise InputError(
            f"expected a trajectory release's data (a pandas DataFrame), got {type(data).__name__}"
        )
    for column in ("user", "start", "end", "region_id"):
        if column not in data.columns:
            raise InputError(f"not a trajectory release: no column {column!r}", column=column)
    model, polygons = trajectory_models(k)
    results = [model.check(data)]
    if len(data) and "region" in data.columns:
        results.append(polygons.check(data))
    return results


def cloaking_models(k: int) -> list[PrivacyModel]:
    """The models every cloaked release holds in ``Release.models``."""
    return [WindowKAnonymity(k), OnePolygonPerRegion()]


def verify_cloaked(data: Any, k: int) -> list[CheckResult]:
    """Recount distinct users per published (region_id, window) from the release alone.

    Parameters
    ----------
    data : DataFrame (pandas or dask)
        A cloaked release's data: columns ``user``, ``window``, ``region_id``, ``region``.
    k : int

    Returns
    -------
    list of CheckResult
        The count check of :class:`WindowKAnonymity` (worst = fewest distinct users of a
        group) and, for non-empty pandas data, the :class:`OnePolygonPerRegion` check.

    Examples
    --------
    >>> import pandas as pd, shapely
    >>> d = pd.DataFrame({"user": ["p", "q", "p"], "window": [0, 0, 1],
    ...                   "region_id": [7, 7, 7], "region": [shapely.box(0, 0, 1, 1)] * 3})
    >>> [c.passed for c in verify_cloaked(d, 2)], verify_cloaked(d, 2)[0].worst
    ([False, True], 1.0)

    Notes
    -----
    Passes when ``min over (r, w) of |{u : (u, w, r) in data}| >= k``.
    """
    if not hasattr(data, "columns"):
        raise InputError(
            f"expected a cloaked release's data (a DataFrame), got {type(data).__name__}"
        )
    missing = [c for c in ("region_id", "window", "user") if c not in data.columns]
    if missing:
        raise InputError(f"not a cloaked release: no column {missing[0]!r}", column=missing[0])
    count, polygons = cloaking_models(k)
    results = [count.check(data)]
    if not hasattr(data, "dask") and len(data):
        results.append(polygons.check(data))
    return results
