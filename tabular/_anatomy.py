"""Anatomy (bucketization): quasi-identifiers unchanged, linked to sensitive values by bucket.

Xiao & Tao's Anatomy publishes two tables: the quasi-identifier table (QIT: every record's
quasi-identifiers, unchanged, and its bucket id) and the sensitive table (ST: per bucket, each
sensitive value and its count).  Each bucket holds ``l`` (or ``l + 1``) records with distinct
sensitive values, so whoever knows a person's quasi-identifiers and finds their bucket guesses
the sensitive value with probability at most ``1 / l``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon import InfeasibleError, InputError, Partition, Release
from structanon._finish import Timings, finish_release
from structanon._validation import check_columns, check_int, warn_repeated_labels
from structanon.errors import at_row
from structanon.io import Pseudonymizer, release_key
from structanon.models import ProbabilisticLDiversity
from structanon.partition import encode_column, encode_values
from structanon.release import CheckResult

from ._input import require_columns

__all__ = ["BucketRelease", "AnatomyVerifier", "anatomize", "BUCKET"]

#: The name of the bucket-id column of a bucketized or sliced table.
BUCKET = "bucket"


@dataclass(repr=False)
class BucketRelease(Release):
    """A :class:`structanon.Release` of a bucketized table (Anatomy).

    ``data`` is the quasi-identifier table (with the :data:`BUCKET` column);
    ``sensitive_table`` is the sensitive table ``(bucket, <sensitive>, count)``.  Both are
    the output; the verifier reads both.
    """

    sensitive_table: Any = field(default=None)

    def verify(self, strict: bool = False):  # noqa: D102 - as Release.verify, on both tables
        data = self.data
        try:
            self.data = (data, self.sensitive_table)
            return super().verify(strict=strict)
        finally:
            self.data = data


class AnatomyVerifier:
    """``verifier((qi_table, sensitive_table)) -> list[CheckResult]``, from the output alone.

    Checks that every bucket of the sensitive table has no sensitive value above ``1 / l``
    of its records (probabilistic ``l``-diversity of the buckets, which Anatomy's buckets of
    distinct values satisfy), and that the two tables agree (each bucket of the QI table
    holds as many records as its sensitive-table counts add up to).
    """

    def __init__(self, sensitive: str, l: int, bucket: str = BUCKET) -> None:
        self.sensitive, self.l, self.bucket = sensitive, l, bucket

    def __call__(self, tables: tuple[pd.DataFrame, pd.DataFrame]) -> list[CheckResult]:
        qi_table, sensitive_table = tables
        counts = sensitive_table["count"].to_numpy(dtype=np.int64)
        buckets = np.repeat(sensitive_table[self.bucket].to_numpy(), counts)
        values = np.repeat(sensitive_table[self.sensitive].to_numpy(), counts)
        partition = Partition(encode_values(buckets)[0]) if len(buckets) else Partition([])
        diversity = ProbabilisticLDiversity(self.l).check(partition, values)
        qi_sizes = qi_table[self.bucket].value_counts()
        st_sizes = sensitive_table.groupby(self.bucket)["count"].sum()
        aligned = qi_sizes.reindex(st_sizes.index.union(qi_sizes.index), fill_value=0)
        expected = st_sizes.reindex(aligned.index, fill_value=0)
        mismatch = np.flatnonzero(aligned.to_numpy() != expected.to_numpy())
        consistency = CheckResult(
            "bucket-consistency",
            mismatch.size == 0,
            float(mismatch.size),
            0.0,
            int(aligned.size),
            mismatch,
        )
        return [diversity, consistency]

    def __repr__(self) -> str:
        return f"AnatomyVerifier(sensitive={self.sensitive!r}, l={self.l})"


def l_diverse_buckets(
    sensitive_codes: np.ndarray, l: int, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Anatomy's buckets: ``(bucket of each record, number of buckets)``.

    Records are shuffled with ``rng``, sorted by sensitive value (stable) and dealt round
    robin into ``g = floor(n / l)`` buckets: no value has more than ``g`` records (the
    eligibility condition of Anatomy, checked here), so each value's run of records lands
    in distinct buckets, and every bucket holds ``l`` or ``l + 1`` records of distinct
    values, as Anatomy's group-creation and residue-assignment steps produce.

    Raises
    ------
    InfeasibleError
        When a sensitive value holds more than ``n / l`` of the records.
    """
    n = sensitive_codes.size
    groups = n // l
    frequency = np.bincount(sensitive_codes)
    if groups == 0 or frequency.max() > groups:
        raise InfeasibleError(
            f"no {l}-diverse bucketization exists: the most frequent sensitive value holds "
            f"{int(frequency.max())} of {n} records, more than n / l = {n / l:g}"
        )
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(sensitive_codes[shuffled], kind="stable")]
    bucket = np.empty(n, dtype=np.int64)
    bucket[order] = np.arange(n) % groups
    return bucket, groups


def publish_buckets(
    bucket: np.ndarray, n_buckets: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Secret bucket ids and row order: ``(published id of each record, row order)``.

    Ids ``1..n_buckets`` are a secret permutation of the buckets; rows are listed by id,
    in a secret order inside each bucket.
    """
    ids = rng.permutation(n_buckets)[bucket] + 1
    shuffled = rng.permutation(bucket.size)
    order = shuffled[np.argsort(ids[shuffled], kind="stable")]
    return ids, order


def anatomize(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    l: int,
    seed: int = 0,
    *,
    key: Pseudonymizer | bytes | str | Path | None = None,
    measures: bool = True,
) -> BucketRelease:
    """Bucketize a table with Anatomy: QIs unchanged, linked to ``l``-diverse sensitive values.

    Parameters
    ----------
    df : pandas.DataFrame
        One record per individual.
    quasi_identifiers : sequence of str
        Published unchanged in the QI table, with each record's bucket id.
    sensitive : str
        Published in the sensitive table as ``(bucket, value, count)``.
    l : int >= 2
        Every bucket holds ``l`` or ``l + 1`` records with distinct sensitive values.
    seed : int, default 0
        Public seed; it is only context of the secret draws (Anatomy makes no other choice).
    key : Pseudonymizer, bytes, str or path, optional
        The release's secret key (:func:`structanon.io.release_key`): it draws which records
        share a bucket, the bucket ids and the row order.  Default: a fresh random key.
    measures : bool
        Compute the measures (bucket sizes, attribute-disclosure bound).

    Returns
    -------
    BucketRelease
        ``data``: the QI table (the quasi-identifiers and ``bucket``; other input columns
        are not published), rows listed by bucket id; ``sensitive_table``: ``bucket``,
        ``sensitive``, ``count``.  ``source_index``: each QI-table row's input label.
        Verified from both tables alone.

    Raises
    ------
    InputError
        Bad parameters, unknown or duplicate columns, missing sensitive values.
    InfeasibleError
        When a sensitive value holds more than ``n / l`` of the records (no ``l``-diverse
        bucketization exists).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"age": [21, 35, 47, 52, 60, 64],
    ...                   "disease": ["flu", "cancer", "flu", "ulcer", "cancer", "ulcer"]})
    >>> r = anatomize(t, ["age"], "disease", l=2, seed=0, key=b"0123456789abcdef")
    >>> sorted(r.data["age"].tolist()), r.data["bucket"].nunique()
    ([21, 35, 47, 52, 60, 64], 3)
    >>> r.sensitive_table.groupby("bucket")["count"].sum().tolist()
    [2, 2, 2]

    References
    ----------
    X. Xiao, Y. Tao. Anatomy: simple and effective privacy preservation. VLDB 2006.
    """
    timings = Timings()
    qis = _check_bucket_input(df, quasi_identifiers, sensitive)
    l = check_int(l, "l", min_value=2)
    seed = check_int(seed, "seed", min_value=0)
    secret = release_key(key).bound(df)  # streams bound to the input (see bound)
    with timings("bucketize"):
        codes, domain = encode_values(df[sensitive].to_numpy())
        public = repr({"scheme": "anatomy", "qi": qis, "sensitive": sensitive, "l": l})
        bucket, n_buckets = l_diverse_buckets(
            codes, l, secret.rng("anatomy-buckets", len(df), public)
        )
        ids, order = publish_buckets(bucket, n_buckets, secret.rng("bucket-ids", seed, public))
    with timings("publish"):
        qi_table = df[qis].iloc[order].reset_index(drop=True)
        qi_table[BUCKET] = ids[order]
        sensitive_table = (
            pd.DataFrame({BUCKET: ids, sensitive: df[sensitive].to_numpy()})
            .groupby([BUCKET, sensitive], sort=True)
            .size()
            .rename("count")
            .reset_index()
        )
    release = BucketRelease(
        data=qi_table,
        datatype="tabular",
        verifier=AnatomyVerifier(sensitive, l),
        models=[ProbabilisticLDiversity(l)],
        partition=Partition(bucket),
        parameters={
            "scheme": "anatomy",
            "quasi_identifiers": qis,
            "sensitive": sensitive,
            "l": l,
            "seed": seed,
        },
        n_individuals=len(df),
        info={"n_buckets": int(n_buckets), "sensitive_values": int(domain.size)},
        source_index=df.index[order],
        sensitive_table=sensitive_table,
    )

    def measure(release: Release) -> None:
        sizes = np.bincount(bucket)
        release.utility = {
            "n_buckets": int(n_buckets),
            "bucket_size_min": int(sizes.min()),
            "bucket_size_max": int(sizes.max()),
            "qi_values_kept": 1.0,
        }
        release.risk = {
            "after": {
                "sensitive_value_probability_max": float(1.0 / sizes.min()),
                "qi_combinations_unique": _unique_share(df[qis]),
            }
        }

    finish_release(release, measure, measures=measures, timings=timings)
    return release


def _unique_share(keys: pd.DataFrame) -> float:
    """Share of records whose quasi-identifier combination is unique (membership is then
    revealed by any table that publishes the QIs unchanged)."""
    sizes = Partition.from_keys(keys).size_of_each()
    return float((sizes == 1).mean()) if sizes.size else 0.0


def _check_bucket_input(df: Any, quasi_identifiers: Any, sensitive: Any) -> list[str]:
    """The QI columns as a list, after checking the table, the QIs and the sensitive column."""
    if isinstance(quasi_identifiers, str):
        quasi_identifiers = [quasi_identifiers]
    qis = require_columns(df, quasi_identifiers, argument="df")
    check_columns(df, qis)
    warn_repeated_labels(df)
    twice = [c for i, c in enumerate(qis) if c in qis[:i]]
    if twice:
        raise InputError("quasi_identifiers names a column twice", column=twice[0])
    if BUCKET in df.columns:
        raise InputError(f"the table already has a column named {BUCKET!r}", column=BUCKET)
    if len(df) == 0:
        raise InputError("the table has no rows")
    if not isinstance(sensitive, Hashable) or sensitive not in df.columns:
        raise InputError(
            f"sensitive column not in the table: {sensitive!r}; columns are {list(df.columns)}"
        )
    if sensitive in qis:
        raise InputError("the sensitive column cannot be a quasi-identifier", column=str(sensitive))
    missing = df[sensitive].isna().to_numpy()
    if missing.any():
        raise InputError(
            "missing value in sensitive column",
            column=str(sensitive),
            **at_row(df, np.flatnonzero(missing)[0]),
        )
    encode_column(df[sensitive], sensitive)  # values that cannot be ordered: named here
    return qis
