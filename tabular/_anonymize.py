"""The public entry point :func:`anonymize`: validation, identifiers, dispatch, release."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from structanon import (
    Hierarchy,
    InputError,
    Partition,
    Release,
    VerificationError,
)
from structanon import metrics as core_metrics
from structanon import risk as core_risk
from structanon._engine import is_dask
from structanon._finish import Timings, add_warning, finish_release, k_warning
from structanon._validation import check_choice, check_int
from structanon.errors import labels_of, pass_row
from structanon.io import Pseudonymizer, release_key
from structanon.models import KAnonymity, PrivacyModel
from structanon.partition import encode_values
from structanon.release import published_types

from . import metrics as tab_metrics
from ._datafly import datafly
from ._input import (
    ALGORITHMS,
    NUMERIC,
    SET,
    hierarchy_codes,
    qi_kinds,
    sensitive_values,
    validate,
)
from ._lattice import EncodedTable
from ._mondrian import mondrian_classes
from ._optimal import NodeOutcome, class_outcome, optimal_generalization
from ._suppression import local_suppression as suppress_cells
from ._verify import TabularVerifier
from .risk import record_linkage

__all__ = ["anonymize", "ALGORITHMS", "NUMERIC", "SET", "TabularRelease"]


class TabularRelease(Release):
    """A :class:`structanon.Release` of a table, with the full-domain transformation.

    ``transformation`` maps each quasi-identifier to its generalization level (0 = the
    original values) for ``optimal`` and ``datafly``; it is ``None`` for ``mondrian``.
    """

    @property
    def transformation(self) -> dict[str, int] | None:
        return self.info.get("transformation")


def _replace_identifiers(
    df: pd.DataFrame, identifiers: Sequence[str], drop: bool, pseudo: Pseudonymizer
) -> tuple[pd.DataFrame, dict]:
    if not identifiers:
        return df, {}
    if drop:
        return df.drop(columns=list(identifiers)), {
            "identifiers": list(identifiers),
            "identifier_handling": "dropped",
        }
    out = df.copy()
    for column in identifiers:
        try:
            out[column] = pseudo.pseudonymize(df[column])
        except InputError as exc:
            raise InputError(exc.message, column=column, **pass_row(exc)) from None
    return out, {
        "identifiers": list(identifiers),
        "identifier_handling": "pseudonymized",
        "pseudonym_key": pseudo.key_source,
    }


def _full_domain(
    df: pd.DataFrame,
    qi: dict[str, Hierarchy],
    sensitive: str | None,
    models: list[PrivacyModel],
    algorithm: str,
    max_suppressed: int,
    metric: str,
    timings: Timings,
) -> tuple[Callable[[str, np.ndarray | None], np.ndarray], np.ndarray, dict[str, Any], Callable]:
    """Run optimal / datafly.

    Returns ``(take, labels, info, take_codes)``: ``take(column, rows)`` gives the
    generalized values of a QI column for the given rows (all rows for None); ``labels`` the
    class of each row, -1 where suppressed; ``take_codes(column, rows)`` the same values as
    ``(node codes, labels of the level)``.
    """
    names = list(qi)
    with timings("encode"):
        codes = [hierarchy_codes(df[c], qi[c], c) for c in names]
        sens_codes = domain = None
        if any(m.requires_sensitive for m in models):
            sens_codes, domain = encode_values(sensitive_values(df[sensitive]))
        enc = EncodedTable(
            codes, [qi[c] for c in names], sens_codes, 0 if domain is None else domain.size
        )
    with timings("search"):
        outcome, info = _full_domain_search(
            enc, names, models, algorithm, max_suppressed, metric, domain
        )
    with timings("publish"):
        take, labels, take_codes = _full_domain_publish(enc, qi, models, outcome, domain)
    levels = {c: int(lv) for c, lv in zip(names, outcome.levels)}
    info["transformation"] = levels
    info["transformation_text"] = transformation_text(qi, levels)
    return take, labels, info, take_codes


def _full_domain_search(
    enc: EncodedTable,
    names: list[str],
    models: list[PrivacyModel],
    algorithm: str,
    max_suppressed: int,
    metric: str,
    domain: np.ndarray | None,
) -> tuple[NodeOutcome, dict[str, Any]]:
    """The chosen lattice node, and what the search tells about itself."""
    info: dict[str, Any] = {}
    if algorithm == "optimal":
        search = optimal_generalization(enc, models, max_suppressed, metric, domain)
        info["lattice"] = {
            "nodes": search.n_nodes,
            "checked": search.checked,
            "cut_short": search.cut_short,
            "scored": search.scored,
            "feasible": search.feasible,
            "monotone_pruning": search.monotone,
            "class_tables": enc.evaluations,
            "roll_ups": enc.rollups,
            "tied_optima": len(search.ties),
        }
        info["score"] = {"metric": metric, "value": search.score}
        return search.best, info
    outcome, steps = datafly(enc, models, max_suppressed, domain)
    info["datafly_steps"] = [names[j] for j in steps]
    return outcome, info


def _full_domain_publish(
    enc: EncodedTable,
    qi: dict[str, Hierarchy],
    models: list[PrivacyModel],
    outcome: NodeOutcome,
    domain: np.ndarray | None,
) -> tuple[Callable, np.ndarray, Callable]:
    """``(take, labels, take_codes)`` of the chosen node, its classes re-checked from scratch."""
    levels = outcome.levels
    record_class, table = enc.record_classes(levels)
    fresh = class_outcome(table, models, domain, levels)  # same classes, same verdicts
    if fresh.suppressed != outcome.suppressed:
        raise VerificationError("class tables disagree on the chosen node")
    labels = np.where(fresh.ok[record_class], record_class, -1)
    # generalized codes of each distinct row, taken per record only when published; their
    # labels (one Python object per cell) only for the columns published as plain values
    base_codes = {c: enc.maps[j][enc.base_leaf_codes[:, j], levels[j]] for j, c in enumerate(qi)}
    level_labels = {c: qi[c].labels(levels[j]) for j, c in enumerate(qi)}
    base_labels: dict[str, np.ndarray] = {}
    last: list[Any] = [None, None]  # the rows asked last, and their distinct-row indices

    def base_index(rows: np.ndarray | None) -> np.ndarray:
        if rows is None:
            return enc.record_base
        if last[0] is not rows:  # the columns of one release ask for the same rows in turn
            last[:] = [rows, enc.record_base[rows]]
        return last[1]

    def take(column: str, rows: np.ndarray | None) -> np.ndarray:
        if column not in base_labels:
            base_labels[column] = level_labels[column][base_codes[column]]
        return base_labels[column][base_index(rows)]

    def take_codes(column: str, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        return base_codes[column][base_index(rows)], level_labels[column]

    return take, labels, take_codes


def categorical_labels(codes: np.ndarray, labels: np.ndarray) -> pd.Categorical | None:
    """``labels[codes]`` as a categorical whose categories are the labels present, in the
    order of ``labels``; ``None`` when those labels repeat or one is missing.

    The published values are the same, and no label absent from the release (a suppressed
    record's, say) is named among the categories.
    """
    present = np.flatnonzero(np.bincount(codes, minlength=labels.size))
    names = labels[present]
    if pd.isna(names).any() or pd.Index(names).has_duplicates:
        return None
    remap = np.full(labels.size, -1, dtype=np.int32)
    remap[present] = np.arange(present.size, dtype=np.int32)
    return pd.Categorical.from_codes(remap[codes], categories=pd.Index(names, dtype=object))


_INTERVAL = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*$")


def _interval_width(labels: Sequence[str]) -> str | None:
    """The common width of interval labels ``"lo-hi"`` (``"20-39"``: 20), if they share one."""
    widths = set()
    for label in labels:
        match = _INTERVAL.match(str(label))
        if match is None:
            if str(label).strip() in ("*", ""):
                continue
            return None
        low, high = float(match.group(1)), float(match.group(2))
        widths.add(high - low + (1 if low.is_integer() and high.is_integer() else 0))
    if len(widths) != 1:
        return None
    width = widths.pop()
    return f"{width:g}"


def transformation_text(
    hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int], examples: int = 3
) -> str:
    """The full-domain transformation in words, with a few labels of each chosen level.

    Examples
    --------
    >>> from structanon import Hierarchy
    >>> ages = Hierarchy([["21", "20-39", "*"], ["35", "20-39", "*"], ["47", "40-59", "*"]])
    >>> sexes = Hierarchy([["M", "*"], ["F", "*"]])
    >>> transformation_text({"age": ages, "sex": sexes}, {"age": 1, "sex": 0})
    "age: intervals of 20 (level 1 of 2): '20-39', '40-59'; sex: kept"
    """
    parts = []
    for column, level in levels.items():
        hierarchy = hierarchies[column]
        if level == 0:
            parts.append(f"{column}: kept")
            continue
        labels = [str(v) for v in hierarchy.labels(level)]
        where = f"level {level} of {hierarchy.height}"
        if len(labels) == 1:
            parts.append(f"{column}: all generalized to {labels[0]!r} ({where})")
            continue
        width = _interval_width(labels)
        shown = ", ".join(repr(v) for v in labels[:examples])
        more = f", ... ({len(labels)} values)" if len(labels) > examples else ""
        kind = f"intervals of {width}" if width else "generalized"
        parts.append(f"{column}: {kind} ({where}): {shown}{more}")
    return "; ".join(parts)


def _locally_suppress(
    take,
    labels: np.ndarray,
    qis: list[str],
    models: list[PrivacyModel],
    algorithm: str,
    info: dict[str, Any],
    rng: np.random.Generator,
):
    """Replace record suppression by cell suppression (k-anonymity only)."""
    if algorithm == "mondrian" or not all(isinstance(m, KAnonymity) for m in models):
        raise InputError(
            "local_suppression needs algorithm 'optimal' or 'datafly' and "
            "k-anonymity as the only model"
        )
    k = max(m.k for m in models if isinstance(m, KAnonymity))
    table = pd.DataFrame({c: take(c, None) for c in qis})
    fixed, n_cells = suppress_cells(table, qis, k, rng)
    columns = {c: fixed[c].astype(str).to_numpy(dtype=object) for c in qis}
    info["locally_suppressed_cells"] = int(n_cells)
    info["records_touched_by_local_suppression"] = int((labels < 0).sum())

    def take_fixed(column: str, rows: np.ndarray | None) -> np.ndarray:
        return columns[column] if rows is None else columns[column][rows]

    return take_fixed, Partition.from_keys(fixed[qis]).labels


MONDRIAN_DEFAULTS: dict[str, Any] = {"criterion": "gain", "relaxed": True, "remainder": True}


def _mondrian_options(options: Mapping[str, Any] | None, algorithm: str) -> dict[str, Any]:
    """Mondrian's options over their defaults, checked by name and type."""
    if options is None:
        return dict(MONDRIAN_DEFAULTS)
    if not isinstance(options, Mapping):
        raise InputError(f"mondrian_options must be a dict, got {type(options).__name__}")
    if options and algorithm != "mondrian":
        raise InputError(f"mondrian_options apply to algorithm 'mondrian', not {algorithm!r}")
    unknown = sorted(set(options) - set(MONDRIAN_DEFAULTS))
    if unknown:
        raise InputError(f"unknown mondrian_options {unknown}; known: {sorted(MONDRIAN_DEFAULTS)}")
    out = {**MONDRIAN_DEFAULTS, **options}
    if out["criterion"] not in ("gain", "width"):
        raise InputError(
            f"mondrian_options criterion must be 'gain' or 'width', got {out['criterion']!r}"
        )
    for name in ("relaxed", "remainder"):
        if not isinstance(out[name], (bool, np.bool_)):
            raise InputError(f"mondrian_options {name} must be True or False, got {out[name]!r}")
        out[name] = bool(out[name])
    return out


def _with_k(models: Any, k: Any) -> Any:
    """``models`` with ``KAnonymity(k)`` first when ``k`` is given (once: not beside a
    k-anonymity model of ``models``)."""
    if k is None:
        return models
    k = check_int(k, "k", min_value=1)
    listed = [models] if isinstance(models, PrivacyModel) else list(models or ())
    if any(isinstance(m, KAnonymity) for m in listed):
        raise InputError("give k either as k= or as KAnonymity in models, not both")
    return [KAnonymity(k), *listed]


def anonymize(
    df: pd.DataFrame,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    sensitive: str | None = None,
    models: Sequence[PrivacyModel] = (),
    algorithm: str = "optimal",
    suppression_limit: float = 0.0,
    metric: str = "discernibility",
    seed: int | None = 0,
    *,
    key: Pseudonymizer | bytes | str | Path | None = None,
    identifiers: Sequence[str] = (),
    drop_identifiers: bool = False,
    pseudonymizer: Pseudonymizer | None = None,
    measures: bool = True,
    classifier: bool = False,
    local_suppression: bool = False,
    linkage: bool = False,
    mondrian_options: Mapping[str, Any] | None = None,
    utility: bool | str | None = None,
    k: int | None = None,
) -> TabularRelease:
    """Anonymize a microdata table so it satisfies every given privacy model.

    Parameters
    ----------
    df : pandas.DataFrame
        The table, one record per individual.
    quasi_identifiers : dict
        Column -> :class:`structanon.Hierarchy`, or (``mondrian`` only) ``"numeric"``
        (published as ranges ``"lo-hi"``) or ``"set"`` (alias ``"ordinal"``: a categorical
        QI without hierarchy, cut along its sorted values and published as the set of
        values present in the class, comma-separated, e.g. ``"Asian,Black"``; a value
        containing ``","`` is an input error).
    sensitive : str, optional
        The sensitive column (required by l-diversity and t-closeness).
    models : sequence of structanon.models.PrivacyModel
        E.g. ``[KAnonymity(5), DistinctLDiversity(3)]``; all must hold.
    k : int, optional
        Shorthand for ``KAnonymity(k)`` among ``models`` (keyword only, as ``k`` of the
        other data types' anonymizers): ``anonymize(df, qis, k=5, algorithm="mondrian")``.
    algorithm : {"optimal", "mondrian", "datafly"}
        ``optimal``: globally optimal full-domain generalization (lattice search);
        ``mondrian``: multidimensional partitioning; ``datafly``: Sweeney's greedy baseline.
    suppression_limit : float in [0, 1]
        Largest share of records that may be suppressed (``optimal`` and ``datafly``).
    metric : {"discernibility", "loss", "precision", "height"}
        Quality model the ``optimal`` search minimizes.
    seed : int, default 0
        Public seed of the algorithm's own choices and of the measures (the sampled
        COUNT queries, the classifier).  It never decides the published row order.
    key : Pseudonymizer, bytes, str or path, optional
        The release's secret key (see :func:`structanon.io.release_key`): it makes the
        identifier pseudonyms and the published row order.  Default:
        ``$STRUCTANON_PSEUDONYM_KEY`` when set, else a fresh random key that is never
        written, so two releases of the same table are neither row-aligned nor linkable.
        With a key, the same input, seed and key give the same release byte for byte.
    identifiers : sequence of str
        Direct identifiers: replaced by keyed pseudonyms (HMAC-SHA256) before anything
        else, or dropped with ``drop_identifiers=True``.
    pseudonymizer : structanon.io.Pseudonymizer, optional
        Former name of ``key`` (give one of the two).
    measures : bool
        Compute the utility and risk measures (``False`` skips them for raw speed; the
        release is verified either way).
    classifier : bool
        Also measure the accuracy of a classifier predicting ``sensitive``, trained on the
        release vs on the original.
    local_suppression : bool
        ``optimal`` / ``datafly`` with k-anonymity only: instead of removing the records of
        the classes that still fail after global recoding (at most ``suppression_limit``),
        keep them and blank a few of their QI cells (``"*"``, sdcMicro-style local
        suppression); the number of blanked cells is in ``info``.
    linkage : bool
        Add the distance-based record-linkage attack (each original record linked to its
        nearest released record) to ``risk`` before and after; quadratic in the records.
    mondrian_options : dict, optional
        ``mondrian`` only: ``criterion`` (``"gain"``, the default: cut where the certainty
        penalty drops most; ``"width"``: LeFevre's widest normalized range), ``relaxed``
        (default ``True``: a pool of failing values may borrow records from a passing
        sibling, so published regions may overlap; ``False``: strict partitioning) and
        ``remainder`` (default ``True``: pool the failing children of a categorical cut).
        ``{"criterion": "width", "relaxed": False}`` is LeFevre's strict Mondrian.  Every
        setting yields a release that satisfies every model; the defaults lose least (on
        Adult, k = 5: GCP 0.026 vs 0.034 strict).
    utility : bool or "full", optional
        Deprecated: ``utility=False`` is ``measures=False`` and ``utility="full"`` is
        ``classifier=True`` (a :class:`DeprecationWarning` says so).

    Returns
    -------
    TabularRelease
        ``data``: the input's columns with QIs generalized to hierarchy labels (or ranges,
        or value sets),
        suppressed records removed and counted in ``suppressed``, rows in an order drawn
        from the secret key; ``transformation``: level per QI (``optimal``, ``datafly``);
        ``info["transformation_text"]``: the transformation in words;
        ``source_index``: the input row label of each published row (kept in Python
        only, never written or reported); ``info["warnings"]``: e.g. that k = 1 protects
        nobody.  Verified from its output alone.

    Raises
    ------
    InputError
        Bad parameters (the message names the parameter), unknown or duplicate columns,
        missing values, mixed types or values absent from a hierarchy (the message names
        column and row), a key file that is missing or shorter than 16 bytes.
    InfeasibleError
        No release satisfies the models within the suppression limit.

    Examples
    --------
    >>> import pandas as pd
    >>> from structanon import Hierarchy
    >>> from structanon.models import KAnonymity
    >>> t = pd.DataFrame({"age": [21, 22, 35, 36], "sex": ["M", "F", "M", "F"]})
    >>> ages = Hierarchy.from_intervals(t["age"], widths=(10,), start=20)
    >>> sexes = Hierarchy([["M", "*"], ["F", "*"]])
    >>> r = anonymize(t, {"age": ages, "sex": sexes}, models=[KAnonymity(2)], seed=0)
    >>> r.transformation
    {'age': 1, 'sex': 1}
    >>> r.info["transformation_text"]
    "age: intervals of 10 (level 1 of 2): '20-29', '30-39'; sex: all generalized to '*' (level 1 of 1)"
    >>> sorted(r.data["age"].tolist())
    ['20-29', '20-29', '30-39', '30-39']

    Mondrian without hierarchies: numbers published as ranges, categories as value sets.

    >>> t2 = pd.DataFrame({"race": ["a", "b", "c", "d"], "age": [20, 21, 30, 31]})
    >>> r2 = anonymize(t2, {"race": "set", "age": "numeric"}, models=[KAnonymity(2)],
    ...                algorithm="mondrian", seed=0, measures=False)
    >>> sorted(r2.data["race"].tolist())
    ['a,b', 'a,b', 'c,d', 'c,d']

    Notes
    -----
    The ``optimal`` search minimizes, over all feasible full-domain transformations, e.g.
    DM* ``= sum_E |E|^2`` (see :func:`tabular._optimal.quality_model` for all four models); its
    optimum equals ARX's on the same inputs.

    References
    ----------
    F. Kohlmayer, F. Prasser, C. Eckert, A. Kemper, K. Kuhn. Flash: efficient, stable and
    optimal k-anonymity. PASSAT 2012.
    K. LeFevre, D. DeWitt, R. Ramakrishnan. Mondrian multidimensional k-anonymity. ICDE 2006.
    L. Sweeney. Achieving k-anonymity privacy protection using generalization and
    suppression. IJUFKS 10(5), 2002.
    """
    models = _with_k(models, k)
    if is_dask(df):  # out of core: Mondrian's top cuts on Dask, then in memory per leaf
        return _anonymize_dask(
            df, quasi_identifiers, sensitive, models, algorithm, seed, key, measures,
            mondrian_options,
        )  # fmt: skip
    timings = Timings()
    measures, classifier = _measure_switch(measures, classifier, utility)
    identifiers = [identifiers] if isinstance(identifiers, str) else list(identifiers)
    models = validate(
        df, quasi_identifiers, sensitive, models, algorithm, suppression_limit, metric, identifiers
    )
    m_options = _mondrian_options(mondrian_options, algorithm)
    if seed is not None:
        seed = check_int(seed, "seed", min_value=0)
    if key is not None and pseudonymizer is not None:
        raise InputError("give the release key as key= or as pseudonymizer=, not both")
    secret = release_key(key if key is not None else pseudonymizer).bound(df)
    data, id_info = _replace_identifiers(df, identifiers, drop_identifiers, secret)
    from ._safepub import DifferentialPrivacy, check_dp_models, safepub

    if any(isinstance(m, DifferentialPrivacy) for m in models):  # SafePub: its own search
        dp_model = check_dp_models(models, algorithm)
        return safepub(
            data,
            cast(dict[str, Hierarchy], quasi_identifiers),  # validated: SafePub needs hierarchies
            dp_model,
            sensitive,
            seed,
            secret,
            measures=measures,
        )
    if not isinstance(data.index, pd.RangeIndex) or data.index.start != 0 or data.index.step != 1:
        data = data.reset_index(drop=True)
    qis = list(quasi_identifiers)
    n = len(data)
    take_codes: Callable | None = None
    if algorithm == "mondrian":
        with timings("search"), labels_of(df.index):
            take, labels, info = _mondrian_search(
                data, quasi_identifiers, sensitive, models, m_options
            )
    else:
        max_suppressed = int(np.floor(suppression_limit * n + 1e-9))
        with labels_of(df.index):
            take, labels, info, take_codes = _full_domain(
                data,
                cast(dict[str, Hierarchy], dict(quasi_identifiers)),  # checked: all hierarchies
                sensitive,
                models,
                algorithm,
                max_suppressed,
                metric,
                timings,
            )
    # the public facts of this release: secret draws differ between releases that differ
    public = repr(
        {
            "algorithm": algorithm,
            "quasi_identifiers": qi_kinds(quasi_identifiers),
            "sensitive": sensitive,
            "models": [m.describe() for m in models],
            "suppression_limit": suppression_limit,
            "metric": metric,
            "mondrian": m_options,
            "local_suppression": local_suppression,
            "identifiers": identifiers,
            "drop_identifiers": drop_identifiers,
        }
    )
    if local_suppression:
        take_codes = None
        take, labels = _locally_suppress(
            take,
            labels,
            qis,
            models,
            algorithm,
            info,
            secret.rng("local-suppression", n, public),
        )
    with timings("shuffle"):
        order = secret.rng("row-order", seed, n, public).permutation(np.flatnonzero(labels >= 0))
        published = pd.DataFrame(
            {
                c: _published_column(data[c], c, order, take, take_codes)
                if c in quasi_identifiers
                else data[c].iloc[order].reset_index(drop=True)
                for c in data.columns
            },
            copy=False,
        )
        published = published_types(published)  # no type or category set by withheld rows
    release = TabularRelease(
        data=published,
        datatype="tabular",
        verifier=TabularVerifier(qis, sensitive, models),
        models=models,
        partition=Partition(labels),
        parameters={
            "algorithm": algorithm,
            # the least group size the models ask for, as the other data types report k
            "k": max((m.min_group_size for m in models), default=1),
            "quasi_identifiers": qis,
            "qi_kinds": qi_kinds(quasi_identifiers),
            "sensitive": sensitive,
            "suppression_limit": suppression_limit,
            "metric": metric if algorithm == "optimal" else None,
            "seed": seed,
            **({"mondrian": m_options} if algorithm == "mondrian" else {}),
            **id_info,
        },
        suppressed=int((labels < 0).sum()),
        n_individuals=n,
        info=info,
        source_index=df.index[order],
    )
    for warning in _weak_model_warnings(models):
        add_warning(release, warning)

    def measure(release: TabularRelease) -> None:
        _measure(
            release, data, take, labels, quasi_identifiers, sensitive, models, seed, classifier
        )

    finish_release(release, measure, measures=measures, timings=timings)
    if linkage:
        with timings("record_linkage"):
            _linkage(release, data, published, quasi_identifiers, order)
        release.timings = {**dict(timings), "total": timings.total()}
    return release


def _published_column(
    column: pd.Series,
    name: str,
    order: np.ndarray,
    take: Callable,
    take_codes: Callable | None,
) -> Any:
    """A QI column of the release: generalized labels, categorical when the input column is
    (the same values, without one Python object per cell)."""
    if take_codes is not None and isinstance(column.dtype, pd.CategoricalDtype):
        out = categorical_labels(*take_codes(name, order))
        if out is not None:
            return out
    return take(name, order)


def _measure_switch(measures: Any, classifier: Any, utility: Any) -> tuple[bool, bool]:
    """``measures`` and ``classifier``, with the deprecated ``utility=`` mapped onto them."""
    check_choice(measures, "measures", (True, False))
    check_choice(classifier, "classifier", (True, False))
    if utility is not None:
        check_choice(utility, "utility", (True, False, "full"))
        warnings.warn(
            "utility= is deprecated: use measures=False to skip the measures and "
            "classifier=True for the classifier accuracy",
            DeprecationWarning,
            stacklevel=3,
        )
        measures = measures and utility is not False
        classifier = classifier or utility == "full"
    return bool(measures), bool(classifier)


def _mondrian_search(
    data: pd.DataFrame,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    sensitive: str | None,
    models: list[PrivacyModel],
    options: dict[str, Any],
) -> tuple[Callable, np.ndarray, dict[str, Any]]:
    """Run Mondrian; return ``(take, labels, info)`` as :func:`_full_domain` does."""
    labels, class_values = mondrian_classes(
        data, dict(quasi_identifiers), sensitive, models, **options
    )
    labels = np.asarray(labels, dtype=np.int64)
    gathered: list = [None, labels]  # (rows, classes of those rows), reused across columns

    def take(column: str, rows: np.ndarray | None) -> np.ndarray:
        # gather the rows' classes once, then each column from its one-per-class array
        if rows is None:
            return class_values[column][labels]
        if gathered[0] is not rows:
            gathered[:] = [rows, labels[rows]]
        return class_values[column][gathered[1]]

    text = (
        "multidimensional (Mondrian): each class is published with its own "
        "ranges, value sets or hierarchy nodes per quasi-identifier"
    )
    return take, labels, {"transformation": None, "transformation_text": text}


def _measure(
    release: TabularRelease,
    data: pd.DataFrame,
    take: Callable,
    labels: np.ndarray,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    sensitive: str | None,
    models: list[PrivacyModel],
    seed: int | None,
    classifier: bool,
) -> None:
    """Fill ``release.utility`` and ``release.risk`` (before and after)."""
    qis = list(quasi_identifiers)
    generalized = data.assign(**{c: take(c, None) for c in qis})
    release.utility = utility_report(
        data,
        generalized,
        labels,
        quasi_identifiers,
        models,
        release.info.get("transformation"),
        seed,
        target=sensitive if classifier else None,
    )
    before = Partition.from_keys(data[qis])
    release.risk = {
        "before": core_risk.reidentification_risk(before),
        "after": core_risk.reidentification_risk(release.partition),
    }


def _linkage(
    release: TabularRelease,
    data: pd.DataFrame,
    published: pd.DataFrame,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    order: np.ndarray,
) -> None:
    """Add the record-linkage attack, before and after, to ``release.risk``."""
    spec = dict(quasi_identifiers)
    release.risk.setdefault("before", {})["record_linkage"] = record_linkage(data, data, spec)
    release.risk.setdefault("after", {})["record_linkage"] = record_linkage(
        data, published, spec, true_index=order
    )


def _weak_model_warnings(models: Sequence[PrivacyModel]) -> list[str]:
    """Warnings about requests that protect nobody (k = 1 and no other model)."""
    if all(isinstance(m, KAnonymity) and m.k <= 1 for m in models):
        return [f"{k_warning(1)} (or add l-diversity / t-closeness)"]
    return []


def utility_report(
    original: pd.DataFrame,
    generalized: pd.DataFrame,
    labels: np.ndarray,
    quasi_identifiers: Mapping[str, Hierarchy | str],
    models: Sequence[PrivacyModel],
    transformation: Mapping[str, int] | None,
    seed: int | None = None,
    target: str | None = None,
) -> dict[str, Any]:
    """The utility measures of a release (rows of ``generalized`` aligned with ``original``)."""
    qis = list(quasi_identifiers)
    kept = labels >= 0
    n = len(original)
    released = generalized[kept]
    partition = Partition(labels)
    k = max([m.k for m in models if isinstance(m, KAnonymity)], default=1)
    out: dict[str, Any] = {
        "discernibility_star": tab_metrics.discernibility_star(generalized, qis),
        "discernibility": core_metrics.discernibility(partition),
        "c_avg": core_metrics.average_class_size(partition, k),
        "suppression_ratio": core_metrics.suppression_ratio(partition),
        "gcp": tab_metrics.gcp(released, quasi_identifiers, n, original),
        "ncp": tab_metrics.ncp(released, quasi_identifiers, original),
        "ambiguity": tab_metrics.ambiguity(released, quasi_identifiers, original),
        "non_uniform_entropy": tab_metrics.non_uniform_entropy(original[kept], released, qis),
        "n_classes": partition.n_groups,
    }
    hierarchies = {c: h for c, h in quasi_identifiers.items() if isinstance(h, Hierarchy)}
    if transformation is not None:
        out["generalization_height"] = tab_metrics.generalization_height(transformation)
        out["precision_loss"] = tab_metrics.precision(
            transformation, hierarchies, n, int((~kept).sum())
        )
        out["loss"] = tab_metrics.loss(transformation, released, hierarchies, n)
    numeric = [c for c in qis if pd.api.types.is_numeric_dtype(original[c])]
    if numeric:
        out["sse"] = tab_metrics.sse(original, labels, numeric)
    if target is not None and released.shape[0] >= 10:
        out["classifier_accuracy"] = tab_metrics.classifier_accuracy(
            original[kept], released, qis, target, seed=0 if seed is None else seed
        )
    if released.shape[0] and len(qis) >= 1:
        out["count_query_error"] = tab_metrics.count_query_error(
            original,
            released,
            quasi_identifiers,
            n_queries=100,
            dimension=min(2, len(qis)),
            selectivity=0.1,
            seed=seed,
        )
    return out


def _anonymize_dask(df, qis, sensitive, models, algorithm, seed, key, measures, options):
    """:func:`anonymize` of a Dask table: Mondrian only (see ``tabular._mondrian_dask``)."""
    from ._mondrian_dask import mondrian_dask

    if algorithm != "mondrian":
        raise InputError(
            f"algorithm={algorithm!r} runs in memory only; a Dask table takes "
            "algorithm='mondrian' (top cuts on Dask, in-memory Mondrian per leaf)"
        )
    options = dict(options or {})
    max_rows = options.pop("max_rows", None)
    extra = {} if max_rows is None else {"max_rows": max_rows}
    return mondrian_dask(
        df, qis, sensitive, list(models), seed, key=key, measures=measures,
        mondrian_options=options, **extra,
    )  # fmt: skip
