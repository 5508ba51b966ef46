"""The :class:`Release` every anonymizer returns, and the results of privacy checks."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._json import to_jsonable
from .errors import InputError, VerificationError
from .summary import format_summary

__all__ = ["CheckResult", "Verification", "Release", "published_types", "to_jsonable"]


def published_types(frame: Any) -> Any:
    """``frame`` (a pandas DataFrame of published rows) with each column's type read from
    its published values alone.

    A column selected from the input keeps the type pandas gave the whole input, rows
    withheld (suppressed, not sampled) included: one withheld ``40.5`` made every published
    integer print as ``52.0``, and a categorical kept the categories only withheld rows
    held, which Parquet writes into its dictionary.  So a categorical keeps only the
    categories present (in their order, typed by the same rules), a float column whose values are all whole numbers
    (none missing) becomes ``int64``, a nullable ``Float64`` one ``Int64``, and a column of
    Python objects that are all integers, or all booleans, gets that type; every other
    column is unchanged.  Values are never changed, only their type.

    Examples
    --------
    >>> import pandas as pd
    >>> out = published_types(pd.DataFrame({
    ...     "hours": [52.0, 31.0],
    ...     "rate": [0.5, 1.0],
    ...     "country": pd.Categorical(["Peru", "Peru"], categories=["Peru", "Columbia"]),
    ...     "flag": pd.Series([True, False], dtype=object),
    ... }))
    >>> [str(t) for t in out.dtypes], list(out["country"].cat.categories)
    (['int64', 'float64', 'category', 'bool'], ['Peru'])
    """
    changed = {}
    for name, column in frame.items():
        typed = _published_type(column)
        if typed is not None:
            changed[name] = typed
    if not changed:
        return frame
    out = frame.copy(deep=False)
    for name, column in changed.items():
        out[name] = column
    return out


def _whole(values: np.ndarray) -> bool:
    """Every value finite, a whole number, and exact in a float."""
    return bool(
        values.size
        and np.isfinite(values).all()
        and (values == np.round(values)).all()
        and np.abs(values).max() < 2**53
    )


def _published_type(column: Any) -> Any:
    """:func:`published_types` of one column (``None``: unchanged)."""
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        used = column.cat.remove_unused_categories()
        categories = _published_type(pd.Series(used.cat.categories))
        if categories is not None:  # the categories present, typed by themselves
            used = used.cat.rename_categories(pd.Index(categories))
        return (
            used
            if not used.cat.categories.equals(dtype.categories) or categories is not None
            else None
        )
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        return column.astype(np.int64) if _whole(column.to_numpy()) else None
    if isinstance(dtype, pd.Float64Dtype | pd.Float32Dtype):
        present = column.dropna().to_numpy(dtype=np.float64)
        return column.astype("Int64") if _whole(present) else None
    if pd.api.types.is_object_dtype(dtype) and len(column) and column.notna().all():
        kind = pd.api.types.infer_dtype(column, skipna=False)
        if kind == "boolean":
            return column.astype(bool)
        if kind == "integer":
            try:
                return column.astype(np.int64)
            except OverflowError:
                return None
    return None


@dataclass
class CheckResult:
    """Outcome of checking one privacy model against one release.

    Attributes
    ----------
    model : str
        The model with its parameters, e.g. ``"k-anonymity(k=5)"``.
    passed : bool
    worst : float
        The worst value over all groups, in the model's own terms (the smallest group
        for k-anonymity, the smallest l, the largest EMD for t-closeness).
    threshold : float
        The parameter the worst value is compared with.
    n_groups : int
        Number of groups checked.
    failing_groups : numpy.ndarray
        Indices of the groups that fail.
    details : dict
        Anything else worth reporting.
    """

    model: str
    passed: bool
    worst: float
    threshold: float
    n_groups: int
    failing_groups: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(
            {
                "model": self.model,
                "passed": bool(self.passed),
                "worst": self.worst,
                "threshold": self.threshold,
                "n_groups": self.n_groups,
                "n_failing_groups": int(len(self.failing_groups)),
                "details": self.details,
            }
        )


@dataclass
class Verification:
    """All model checks of one release; truthy when every check passed."""

    checks: list[CheckResult]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def __bool__(self) -> bool:
        return self.passed

    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [c.to_dict() for c in self.checks]}


Verifier = Callable[[Any], Sequence[CheckResult]]


@dataclass
class Release:
    """An anonymized release with everything needed to judge it.

    Parameters
    ----------
    data : Any
        The anonymized data in its native type (DataFrame, list of item sets, networkx
        graph, ...).
    datatype : str
        ``"tabular"``, ``"transactions"``, ``"location"``, ``"graphs"`` or ``"querylogs"``.
    verifier : callable
        ``verifier(data) -> list[CheckResult]``: re-checks every privacy model from the
        published data alone, without trusting the algorithm that produced it.
    models : list
        The privacy models requested (objects with ``to_dict()`` or plain descriptions).
    partition : Partition, optional
        The partition of individuals the algorithm produced.
    parameters : dict
        Algorithm and its parameters, as given.
    utility, risk : dict
        Measures, each keyed ``"before"`` / ``"after"`` where both exist (risk), or by
        metric name (utility).
    timings : dict
        Wall seconds per step.
    suppressed : int
        Individuals (records, users, fixes, transactions) left out of ``data``.
    n_individuals : int
        Individuals in the input.
    info : dict
        Algorithm-specific results worth reporting (the chosen transformation, edits...).
    source_index : optional
        The publisher's private link from published rows to its input: for each row of
        ``data``, the input row label it came from (for graphs, the node mapping).  It is
        kept in Python only: no writer, report, summary, ``to_dict`` or ``repr`` includes
        it, because it would undo the release.

    Examples
    --------
    >>> from structanon import Partition
    >>> from structanon.models import KAnonymity
    >>> model = KAnonymity(2)
    >>> r = Release(data=[1, 1, 2, 2], datatype="tabular", models=[model],
    ...             verifier=lambda d: [model.check(Partition.from_keys(d))])
    >>> r.verify().passed
    True
    """

    data: Any
    datatype: str
    verifier: Verifier
    models: list[Any] = field(default_factory=list)
    partition: Any = None
    parameters: dict[str, Any] = field(default_factory=dict)
    utility: dict[str, Any] = field(default_factory=dict)
    risk: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    suppressed: int = 0
    n_individuals: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    checks: Verification | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    source_index: Any = field(default=None, repr=False, compare=False)
    withheld: tuple[str, ...] = ()

    def shown(self, name: str) -> Any:
        """The figure ``name`` (an attribute, else an ``info`` key) as outputs show it:
        ``None`` when the release withholds it (:attr:`withheld`: an exact input figure
        that outputs must not publish, such as the input size of a differentially private
        release or the input's distinct-query statistics of a query log; it stays readable
        in Python for the publisher)."""
        if name in self.withheld:
            return None
        return getattr(self, name) if hasattr(self, name) else self.info.get(name)

    def shown_utility(self) -> dict[str, Any]:
        """:attr:`utility` as outputs show it: without the measures :attr:`withheld` names
        ``"utility.<measure>"`` (exact input statistics, such as a masked column's input
        variance, that two reports of inputs one person apart subtract into that person's
        value); they stay readable in Python for the publisher."""
        return self._shown_part("utility", self.utility)

    def shown_risk(self) -> dict[str, Any]:
        """:attr:`risk` as outputs show it: without a section :attr:`withheld` names
        ``"risk.<section>"`` (``"risk.before"``: the input's own frequencies, for a release
        that masks the very columns they count)."""
        return self._shown_part("risk", self.risk)

    def shown_timings(self) -> dict[str, float]:
        """:attr:`timings` as outputs show them: none when :attr:`withheld` names
        ``"timings"`` (a differentially private release: the seconds each step took grow
        with the input, whose size it withholds)."""
        return {} if "timings" in self.withheld else self.timings

    def _shown_part(self, part: str, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` without the keys :attr:`withheld` names ``"<part>.<key>"``."""
        hidden = {w.split(".", 1)[1] for w in self.withheld if w.startswith(f"{part}.")}
        if not hidden or not isinstance(values, dict):
            return values
        return {k: v for k, v in values.items() if k not in hidden}

    def _counts_text(self, what: str) -> str:
        """``"N <what> in, S suppressed"``, or that the counts are withheld."""
        if self.shown("n_individuals") is None:
            return f"{what} in and suppressed: withheld (exact input counts, differential privacy)"
        return f"{self.n_individuals:,} {what} in, {self.suppressed:,} suppressed"

    def __repr__(self) -> str:
        from ._engine import is_dask

        # a lazy release is not computed to be printed; the rows of a table or the nodes of
        # a graph are counted, else the individuals in less those suppressed where both are
        # shown (a band release's data is a dict, anatomy's a pair of tables)
        n, suppressed = self.shown("n_individuals"), self.shown("suppressed")
        size: int | None = None
        if hasattr(self.data, "shape") and not is_dask(self.data):
            size = len(self.data)
        elif isinstance(n, int) and isinstance(suppressed, int) and n > 0:
            size = n - suppressed
        status = (
            "unverified"
            if self.checks is None
            else ("verified" if self.checks.passed else "FAILED verification")
        )
        models = ", ".join(m.describe() if hasattr(m, "describe") else str(m) for m in self.models)
        return (
            f"<Release {self.datatype}: {models or 'no model'}; {status}; "
            f"{size if size is not None else '?'} published, {self.shown('suppressed')} "
            f"suppressed of {self.shown('n_individuals')}>"
        )

    def verify(self, strict: bool = False) -> Verification:
        """Re-check every privacy model from :attr:`data` alone.

        Parameters
        ----------
        strict : bool
            Raise :class:`VerificationError` when any check fails.

        Returns
        -------
        Verification
            Also stored in :attr:`checks`.
        """
        result = Verification(list(self.verifier(self.data)))
        self.checks = result
        if strict and not result.passed:
            failed = "; ".join(
                f"{c.model}: worst {c.worst:g} vs {c.threshold:g}, "
                f"{len(c.failing_groups)} failing group(s)"
                for c in result.failures()
            )
            raise VerificationError(f"release fails its privacy model: {failed}")
        return result

    def write(self, path: str | Path, **options: Any) -> Path:
        """Write the published data to ``path`` with its data type's writer, atomically
        (the format from the extension, as on the command line); returns ``path``.

        One call for the five data types: ``tabular.io.write_microdata`` (a Dask release:
        ``write_microdata_dask``), ``transactions.write_transactions``,
        ``location.io.write_cloaked``, ``graphs.write_graph`` and ``querylogs.write_log``
        (``write_log_dask``); ``options`` go to it (``sep=``, ``format=``, ``aol=``).
        :attr:`source_index` is never written.

        Examples
        --------
        >>> import tempfile, os, tabular
        >>> from structanon.models import KAnonymity
        >>> import pandas as pd
        >>> df = pd.DataFrame({"age": [30, 31, 32, 33], "zip": ["a", "a", "b", "b"]})
        >>> r = tabular.anonymize(df, {"age": "numeric"}, None, [KAnonymity(2)], "mondrian",
        ...                       measures=False)
        >>> out = r.write(os.path.join(tempfile.mkdtemp(), "release.csv"))
        >>> pd.read_csv(out).shape
        (4, 2)
        """
        import importlib

        from ._engine import is_dask

        lazy = is_dask(self.data)
        modules = {
            "tabular": ("tabular.io", "write_microdata_dask" if lazy else "write_microdata"),
            "transactions": ("transactions.io", "write_transactions"),
            "location": ("location.io", "write_cloaked"),
            "graphs": ("graphs.io", "write_graph"),
            "querylogs": ("querylogs.io", "write_log_dask" if lazy else "write_log"),
        }
        if self.datatype not in modules:
            raise InputError(f"no writer for a {self.datatype!r} release")
        module, name = modules[self.datatype]
        getattr(importlib.import_module(module), name)(self.data, path, **options)
        return Path(path)

    def to_dict(self) -> dict[str, Any]:
        """Everything but the data, as plain JSON-ready values."""
        checks = self.checks if self.checks is not None else self.verify()
        return to_jsonable(
            {
                "datatype": self.datatype,
                "models": [m.to_dict() if hasattr(m, "to_dict") else str(m) for m in self.models],
                "parameters": self.parameters,
                "verification": checks.to_dict(),
                "n_individuals": self.shown("n_individuals"),
                "suppressed": self.shown("suppressed"),
                "withheld": list(self.withheld),
                "partition": None
                if self.partition is None
                else {
                    "n_groups": self.partition.n_groups,
                    "min_group_size": int(self.partition.sizes.min())
                    if self.partition.n_groups
                    else 0,
                    "n_suppressed": None
                    if "suppressed" in self.withheld
                    else self.partition.n_suppressed,
                },
                "utility": self.shown_utility(),
                "risk": self.shown_risk(),
                "timings": self.shown_timings(),
                "info": {k: v for k, v in self.info.items() if k not in self.withheld},
                "provenance": self.provenance,
            }
        )

    def to_frame(self) -> Any:
        """Every measure as a tidy ``pandas.DataFrame``: ``kind, measure, before, after``.

        Utility rows have their value in ``after``; risk rows have both.
        """
        import pandas as pd

        from .summary import flatten

        plain = to_jsonable({"utility": self.utility, "risk": self.risk})
        rows = [("utility", k, None, v) for k, v in flatten(plain["utility"]).items()]
        before = flatten(plain["risk"].get("before", {})) if plain["risk"] else {}
        after = flatten(plain["risk"].get("after", {})) if plain["risk"] else {}
        rows += [
            ("risk", k, before.get(k), after.get(k))
            for k in dict.fromkeys(list(before) + list(after))
        ]
        return pd.DataFrame(rows, columns=["kind", "measure", "before", "after"])

    def _repr_html_(self) -> str:
        """The notebook view: verdict, flags, checks, sizes and key measures; never the data."""
        import html

        from .verdict import flags, headline, unit

        checks = self.checks if self.checks is not None else self.verify()
        what = unit(self)
        rows = "".join(
            f"<tr><td>{'PASS' if c.passed else 'FAIL'}</td><td>{html.escape(c.model)}</td>"
            f"<td>{c.worst:g}</td><td>{c.threshold:g}</td></tr>"
            for c in checks.checks
        )
        colour = {"red": "#c22", "amber": "#d90", "green": "#2a6"}
        flag_html = "".join(
            f"<li style='border-left:5px solid {colour[f.level]};padding-left:.4em;"
            f"list-style:none'><b>{f.level.upper()}</b> {html.escape(f.title)}: "
            f"{html.escape(f.detail)}</li>"
            for f in flags(self)
        )
        return (
            f"<div><b>structanon {html.escape(self.datatype)} release</b>: "
            f"{html.escape(self._counts_text(what))}"
            f"<p>{html.escape(headline(self))}</p><ul style='padding-left:0'>{flag_html}"
            f"</ul><table><tr><th>result</th><th>model</th><th>worst</th>"
            f"<th>threshold</th></tr>{rows}</table></div>"
        )

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def summary(self) -> str:
        """A readable multi-line summary (model checks, utility, risk, timings)."""
        return format_summary(self)
