"""(epsilon, delta)-differential privacy for tables by sampling and generalization (SafePub),
and differentially private counts of a column through OpenDP.

SafePub (Bild, Kuhn and Prasser 2018) publishes true records: each record is drawn with
probability ``beta``, the sample is generalized with a full-domain transformation chosen by
the exponential mechanism, and every class smaller than the ``k`` implied by ``epsilon``,
``delta`` and ``beta`` is suppressed.  Li, Qardaji and Su (2012) proved that this
"safe k-anonymization" of a random sample is (epsilon, delta)-differentially private.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from structanon import Hierarchy, Partition
from structanon import risk as core_risk
from structanon._finish import Timings, finish_release
from structanon._validation import check_float, check_int, duplicate_names
from structanon.errors import InputError, labels_of
from structanon.io import Pseudonymizer, release_key
from structanon.models import PrivacyModel
from structanon.release import Release, published_types

from . import metrics as tab_metrics
from ._anonymize import TabularRelease
from ._input import hierarchy_codes
from ._verify import TabularVerifier

__all__ = ["DifferentialPrivacy", "implied_k", "safepub", "dp_counts"]

#: Number of exponential-mechanism steps of the lattice walk by default (ARX refuses
#: SafePub without a step limit).
DEFAULT_STEPS = 100

#: Share of ``epsilon_search`` spent by the final draw among the visited pivots; the walk's
#: ``steps`` draws share the rest equally.
FINAL_SHARE = 0.5

#: Largest epsilon SafePub accepts (as dp-counts).
MAX_EPSILON = 1e4

#: Largest ``epsilon_anon``.  The implied k grows like ``exp(epsilon_anon)`` (k = 6264 at 6.3
#: with delta 1e-5) and is found by a search whose time grows with k; beyond this the
#: classes are larger than most tables and the search takes minutes.
MAX_EPSILON_ANON = 7.0


def _gamma(epsilon: float, beta: float) -> float:
    return (math.exp(epsilon) - 1.0 + beta) / math.exp(epsilon)


@lru_cache(maxsize=256)
def implied_k(epsilon: float, delta: float, beta: float | None = None) -> int:
    """The smallest ``k`` for which safe k-anonymization of a ``beta``-sample is
    ``(epsilon, delta)``-differentially private (Li, Qardaji and Su 2012, Theorem 5).

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
    beta : float in (0, 1), optional
        Sampling probability; default (and the largest allowed) ``1 - exp(-epsilon)``.

    Examples
    --------
    >>> implied_k(1.0, 1e-5)
    61
    >>> [implied_k(e, 1e-5) for e in (0.5, 1.0, 2.0)]
    [51, 61, 113]

    Notes
    -----
    With :math:`\\gamma = (e^\\epsilon - 1 + \\beta) / e^\\epsilon` and
    :math:`n_m = \\lceil k / \\gamma - 1 \\rceil`,

    .. math:: \\delta(k) = \\max_{n \\ge n_m} \\sum_{j > \\gamma n}^{n} \\binom{n}{j}
              \\beta^j (1 - \\beta)^{n - j},

    and the maximum over the infinite tail is closed by the Chernoff bound
    :math:`c_n = e^{-n (\\gamma \\ln(\\gamma / \\beta) - (\\gamma - \\beta))}` that bounds every
    later term.  With the largest sampling rate, ``k`` grows with epsilon: more records are
    sampled (less doubt about who is in the sample), so classes must be larger, while
    many more records are published.  ARX's implementation returns one more than this smallest ``k`` (its loop
    increments after the test); both are private, this one is the tight value.

    References
    ----------
    N. Li, W. Qardaji, D. Su. On sampling, anonymization, and differential privacy: or,
    k-anonymization meets differential privacy. ASIACCS 2012.
    """
    from scipy.stats import binom

    beta = 1.0 - math.exp(-epsilon) if beta is None else beta
    gamma = _gamma(epsilon, beta)
    rate = gamma * math.log(gamma / beta) - (gamma - beta)
    k = 1
    while True:
        n = max(1, math.ceil(k / gamma - 1.0))
        worst = 0.0
        while True:  # a_n over n >= n_m until the Chernoff bound is below the maximum
            stop = n + 256
            ns = np.arange(n, stop)
            a = binom.sf(np.floor(ns * gamma), ns, beta)
            worst = max(worst, float(a.max()))
            if math.exp(-stop * rate) <= worst or worst > delta:
                break
            n = stop
        if worst <= delta:
            return k
        k += 1


class DifferentialPrivacy(PrivacyModel):
    """(epsilon, delta)-differential privacy by SafePub; use it as a model of
    :func:`tabular.anonymize`.

    Parameters
    ----------
    epsilon : float > 0
        Total privacy budget.
    delta : float in (0, 1)
        E.g. ``1e-5``; well below one over the number of records.
    search_share : float in [0, 1)
        Share of ``epsilon`` spent by the exponential mechanism that picks the
        generalization (``epsilon_search``); the rest (``epsilon_anon``) sets the sampling
        rate ``beta = 1 - exp(-epsilon_anon)`` and the implied ``k``.  ARX's default is 0.1.
    steps : int >= 1
        Exponential-mechanism steps of SafePub's walk through the generalization lattice
        (default 100).  Each step spends ``epsilon_search * (1 - FINAL_SHARE) / steps``; the
        final choice among the visited pivots spends ``epsilon_search * FINAL_SHARE``.

    Attributes
    ----------
    k : int
        The class size every published class reaches (the verifier checks it).
    beta : float
        The sampling rate.

    Examples
    --------
    >>> m = DifferentialPrivacy(1.0, 1e-5)
    >>> m.k, round(m.beta, 4)
    (58, 0.5934)
    """

    name = "differential-privacy"
    monotone = False
    monotone_with_suppression = False

    def __init__(
        self, epsilon: float, delta: float, search_share: float = 0.1, steps: int = DEFAULT_STEPS
    ) -> None:
        self.epsilon = check_float(
            epsilon, "epsilon", min_value=0, include_min=False, max_value=MAX_EPSILON
        )
        self.delta = check_float(delta, "delta", min_value=0, max_value=1, include_min=False,
                                 include_max=False)  # fmt: skip
        self.search_share = check_float(
            search_share, "search_share", min_value=0, max_value=1, include_max=False
        )
        self.steps = check_int(steps, "steps", min_value=1)
        self.epsilon_search = self.epsilon * self.search_share
        self.epsilon_final = self.epsilon_search * FINAL_SHARE
        self.epsilon_step = (self.epsilon_search - self.epsilon_final) / self.steps
        self.epsilon_anon = self.epsilon - self.epsilon_search
        if self.epsilon_anon > MAX_EPSILON_ANON:
            raise InputError(
                f"epsilon * (1 - search_share), the share that sets the implied k, must be "
                f"<= {MAX_EPSILON_ANON:g} (k grows like e^that), got {self.epsilon_anon:g}"
            )
        self.beta = 1.0 - math.exp(-self.epsilon_anon)
        self.k = implied_k(self.epsilon_anon, self.delta, self.beta)

    @property
    def threshold(self) -> float:
        return float(self.k)

    def group_values(self, counts, reference=None, domain=None):
        c = np.asarray(counts)
        return (c if c.ndim == 1 else c.sum(axis=1)).astype(float)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "implied_k": self.k,
            "sampling_rate": round(self.beta, 6),
            "steps": self.steps,
        }


def _predecessors(node: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The lattice neighbours one level below ``node``: one attribute one level less general."""
    return [node[:j] + (node[j] - 1,) + node[j + 1 :] for j in range(len(node)) if node[j] > 0]


def _walk(
    score: Any, top: tuple[int, ...], model: DifferentialPrivacy, rng: np.random.Generator
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """SafePub's search (Bild, Kuhn and Prasser 2018; ARX's
    ``DataDependentEDDPAlgorithm``): from the top of the lattice, each of ``model.steps``
    steps adds the predecessors of the current pivot to the candidate set, removes the pivot,
    and draws the next pivot from the candidates by the exponential mechanism with
    ``model.epsilon_step``.  The output is one more exponential-mechanism draw, with
    ``model.epsilon_final``, among the distinct visited pivots.

    Returns the chosen node and the pivots in visiting order (the top first).
    """
    pivot = top
    pivots = [pivot]
    candidates: dict[tuple[int, ...], float] = {}
    for _ in range(model.steps):
        new = [p for p in _predecessors(pivot) if p not in candidates]
        candidates.update(zip(new, score(new)))
        candidates.pop(pivot, None)
        if not candidates:
            break
        nodes = list(candidates)
        values = np.fromiter(candidates.values(), dtype=float, count=len(nodes))
        pivot = nodes[_exponential_mechanism(values, model.epsilon_step, float(model.k), rng)]
        pivots.append(pivot)
    visited = list(dict.fromkeys(pivots))
    final = np.asarray(score(visited), dtype=float)
    chosen = visited[_exponential_mechanism(final, model.epsilon_final, float(model.k), rng)]
    return chosen, pivots


def _node_scores(
    codes: list[np.ndarray], hierarchies: list[Hierarchy], nodes: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Score and suppressed count of every node on the sample.

    ``score = -(S (1 - g) + m g)``: ``S`` sampled records in classes smaller than ``k``
    (suppressed), ``m`` sampled records, ``g`` the node's mean relative height (a
    data-independent precision loss).  One record more or less changes ``S`` by at most
    ``k`` and ``m`` by one, so the score's sensitivity is at most ``k``.
    """
    m = codes[0].size if codes else 0
    heights = np.array([max(h.height, 1) for h in hierarchies], dtype=float)
    scores = np.empty(len(nodes))
    suppressed = np.empty(len(nodes), dtype=np.int64)
    for i, levels in enumerate(nodes):
        key = np.zeros(m, dtype=np.int64)
        for c, h, level in zip(codes, hierarchies, levels):
            generalized = h.node_codes[c, level]
            radix = h.n_nodes(int(level)) + 1
            if key.size and int(key.max()) >= 2**62 // radix:  # re-number densely first
                key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
            key = key * radix + generalized
        sizes = np.bincount(np.unique(key, return_inverse=True)[1]) if m else np.zeros(0)
        small = int(sizes[sizes < k].sum())
        g = float((levels / heights).mean())
        suppressed[i] = small
        scores[i] = -(small * (1.0 - g) + m * g)
    return scores, suppressed


def _exponential_mechanism(
    scores: np.ndarray, epsilon: float, sensitivity: float, rng: np.random.Generator
) -> int:
    """Index drawn with probability proportional to ``exp(epsilon * score / (2 * sensitivity))``
    (McSherry and Talwar 2007); with ``epsilon = 0``, uniform."""
    logits = epsilon * scores / (2.0 * sensitivity)
    weights = np.exp(logits - logits.max())
    return int(rng.choice(scores.size, p=weights / weights.sum()))


def safepub(
    df: pd.DataFrame,
    quasi_identifiers: Mapping[str, Hierarchy],
    model: DifferentialPrivacy,
    sensitive: str | None = None,
    seed: int | None = None,
    key: Pseudonymizer | bytes | str | Path | None = None,
    *,
    measures: bool = True,
) -> TabularRelease:
    """SafePub: a (epsilon, delta)-differentially private release of true records.

    Called by :func:`tabular.anonymize` when its models hold a
    :class:`DifferentialPrivacy`; see there for the parameters.

    Returns
    -------
    TabularRelease
        ``data``: sampled records, generalized, classes below ``k`` suppressed, in a
        secret order; ``info``: ``implied_k``, ``sampling_rate``, ``sampled`` (records
        drawn), ``epsilon_anon``, ``epsilon_search``, ``transformation``; verified from the
        output: every published class holds at least ``implied_k`` records.

    Notes
    -----
    1. Each record is drawn independently with probability ``beta`` (from the secret key).
    2. A full-domain generalization is chosen by SafePub's walk (:func:`_walk`): from the
       top of the lattice, ``steps`` exponential-mechanism draws, each with
       ``epsilon_search * (1 - FINAL_SHARE) / steps``, each among the candidates (the
       predecessors of the pivots so far, the current pivot removed); then one more draw, with
       ``epsilon_search * FINAL_SHARE``, among the visited pivots.  Every draw uses the
       score of :func:`_node_scores` (sensitivity ``k``) and the secret key.
    3. The sample is generalized and every class below ``k`` is suppressed.
    Steps 1 and 3 are (epsilon_anon, delta)-DP (Li, Qardaji and Su 2012); each draw of
    step 2 is DP with its own budget, and they add up to ``epsilon_search`` (sequential
    composition), so the release is (epsilon, delta)-DP.  ARX instead returns the
    best-scoring visited pivot; that argmax reads the data's scores without noise and is not
    covered by the composition of the walk's draws, so here the final choice is itself an
    exponential-mechanism draw paid from ``epsilon_search``.

    References
    ----------
    R. Bild, K. A. Kuhn, F. Prasser. SafePub: a truthful data anonymization algorithm with
    strong privacy guarantees. PoPETs 2018(1).
    """
    timings = Timings()
    secret = release_key(key).bound(df)  # streams bound to the input (see bound)
    qis = list(quasi_identifiers)
    hierarchies = [quasi_identifiers[c] for c in qis]
    for c, h in zip(qis, hierarchies):
        if not isinstance(h, Hierarchy):
            raise InputError("differential privacy needs a Hierarchy for every QI", column=c)
    data = df.reset_index(drop=True)
    n = len(data)
    public = repr({"safepub": model.to_dict(), "qis": qis, "share": model.search_share})
    with timings("encode"):
        with labels_of(df.index):
            codes = [hierarchy_codes(data[c], h, c) for c, h in zip(qis, hierarchies)]
    with timings("sample"):
        drawn = np.flatnonzero(secret.rng("safepub-sample", n, public).random(n) < model.beta)
    with timings("search"):
        sample_codes = [c[drawn] for c in codes]
        cache: dict[tuple[int, ...], float] = {}

        def score(nodes: list[tuple[int, ...]]) -> list[float]:
            todo = [v for v in dict.fromkeys(nodes) if v not in cache]
            if todo:
                found = _node_scores(sample_codes, hierarchies, np.array(todo), model.k)[0]
                cache.update(zip(todo, found.tolist()))
            return [cache[v] for v in nodes]

        top = tuple(int(h.height) for h in hierarchies)
        rng = secret.rng("safepub-search", n, public)
        levels, pivots = _walk(score, top, model, rng)
    generalized = {
        c: np.asarray(h.labels(int(lv)), dtype=object)[h.node_codes[code[drawn], int(lv)]]
        for c, h, code, lv in zip(qis, hierarchies, codes, levels)
    }
    frame = pd.DataFrame(generalized)
    classes = Partition.from_keys(frame).labels if len(frame) else np.zeros(0, np.int64)
    sizes = np.bincount(classes) if classes.size else np.zeros(0, np.int64)
    kept = sizes[classes] >= model.k if classes.size else np.zeros(0, bool)
    rows = drawn[kept]
    labels = np.full(n, -1, dtype=np.int64)
    labels[rows] = classes[kept]
    with timings("shuffle"):
        order = secret.rng("row-order", seed, n, public).permutation(rows.size)
        published = data.iloc[rows[order]].reset_index(drop=True)
        for c in qis:
            published[c] = frame[c].to_numpy()[kept][order]
        # types and categories from the published rows alone: a record not sampled must
        # not set them (one withheld 40.5 made every published integer print as 52.0)
        published = published_types(published)
    transformation = {c: int(lv) for c, lv in zip(qis, levels)}
    release = TabularRelease(
        data=published,
        datatype="tabular",
        verifier=TabularVerifier(qis, None, [model]),
        models=[model],
        partition=Partition(labels),
        parameters={
            "algorithm": "safepub",
            "quasi_identifiers": qis,
            "sensitive": sensitive,
            "epsilon": model.epsilon,
            "delta": model.delta,
            "search_share": model.search_share,
            "seed": seed,
        },
        suppressed=int(n - rows.size),
        n_individuals=n,
        info={
            "implied_k": model.k,
            "sampling_rate": model.beta,
            "sampled": int(drawn.size),
            "suppressed_after_sampling": int(drawn.size - rows.size),
            "epsilon_anon": model.epsilon_anon,
            "epsilon_search": model.epsilon_search,
            "transformation": transformation,
            "lattice_nodes": math.prod(h.height + 1 for h in hierarchies),
            "steps": model.steps,
            "pivots": len(set(pivots)),
        },
        source_index=df.index[rows[order]],
        # an exact input figure (the input's size, what sampling and suppression left out)
        # tells two neighbouring inputs apart: outputs withhold them (Release.withheld)
        withheld=(
            "n_individuals",
            "suppressed",
            "sampled",
            "suppressed_after_sampling",
            "timings",  # the seconds per step grow with the input's size
        ),
    )

    def measure(release: Release) -> None:
        # measured on the published table alone: measures of the input (its risk, or a
        # GCP whose suppressed records count against the input's size) would break the
        # differential-privacy guarantee the report states
        kept = Partition.from_keys(published[qis])
        release.utility = {
            "gcp_published": tab_metrics.gcp(
                published[qis], {c: quasi_identifiers[c] for c in qis}, len(published)
            ),
            "n_classes": kept.n_groups,
        }
        release.risk = {"after": core_risk.reidentification_risk(kept)}

    finish_release(release, measure, measures=measures, timings=timings)
    return release


def dp_counts(
    values: Any,
    epsilon: float,
    categories: Sequence[Any],
) -> pd.Series:
    """A differentially private histogram of ``values`` over public ``categories``, by
    OpenDP's count-by-categories and its discrete Laplace mechanism.

    Parameters
    ----------
    values : sequence or pandas.Series
        One value per record (e.g. a column of a release).
    epsilon : float > 0
        Privacy budget of this histogram (add or remove one record).
    categories : sequence
        The categories to count, fixed in advance (e.g. a hierarchy level's labels):
        categories read off the data would themselves leak.  Values outside them are
        counted under ``"(other)"``.

    Returns
    -------
    pandas.Series
        Noisy counts indexed by category (and ``"(other)"``), integers that may be
        negative; the noise is OpenDP's own (never reproducible, even with a key).

    Examples
    --------
    >>> counts = dp_counts(["a", "a", "b"], 1.0, ["a", "b"])
    >>> list(counts.index)
    ['a', 'b', '(other)']

    References
    ----------
    OpenDP: ``make_count_by_categories`` then ``then_laplace`` (discrete Laplace on
    integers), scale found by ``binary_search_param`` for ``d_in = 1``, ``d_out = epsilon``.
    """
    import opendp.prelude as dp

    # below 1e-4 the noise swamps any count, and OpenDP's scale search stops converging
    epsilon = check_float(epsilon, "epsilon", min_value=1e-4, max_value=1e4)
    if isinstance(categories, str | bytes) or not isinstance(categories, Iterable):
        raise InputError(
            "categories must be a list of the categories to count, fixed in advance (e.g. "
            "a hierarchy level's labels): categories read off the data would leak",
            value=repr(categories)[:60],
        )
    labels = [str(c) for c in categories]
    if not labels:
        raise InputError("categories must be a non-empty list of distinct values")
    twice = duplicate_names(labels)
    if twice:
        raise InputError("categories must be distinct; this one is given twice", value=twice[0])
    dp.enable_features("contrib")
    space = (dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())

    def make(scale: float) -> Any:
        return (
            space
            >> dp.t.then_count_by_categories(categories=labels, null_category=True)
            >> dp.m.then_laplace(scale=scale)
        )

    scale = dp.binary_search_param(make, d_in=1, d_out=epsilon)
    noisy = make(scale)([str(v) for v in values])
    return pd.Series(noisy, index=[*labels, "(other)"], name="dp_count")


def check_dp_models(models: Sequence[Any], algorithm: str) -> DifferentialPrivacy:
    """The one :class:`DifferentialPrivacy` of ``models`` (it cannot be combined)."""
    found = [m for m in models if isinstance(m, DifferentialPrivacy)]
    if len(found) != 1 or len(models) != 1:
        raise InputError(
            "DifferentialPrivacy is a model on its own (it implies k-anonymity with its k); "
            "do not combine it with other models"
        )
    if algorithm != "optimal":
        raise InputError(
            f"DifferentialPrivacy runs SafePub's own search; leave algorithm='optimal', "
            f"got {algorithm!r}"
        )
    return found[0]
