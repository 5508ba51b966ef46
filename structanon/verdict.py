"""A release in plain words: what was protected, against whom, and what it cost.

Used by the printed summary, the JSON and HTML reports and the notebook view, so a data
protection officer reads the same verdict everywhere.  Flags are computed from the documented
thresholds in :data:`THRESHOLDS`; each comes with what the user can do about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._json import to_jsonable

if TYPE_CHECKING:
    from .release import Release

__all__ = ["Flag", "THRESHOLDS", "UNITS", "flags", "headline", "not_covered", "unit"]

#: What one individual of ``Release.n_individuals`` is, per data type.
UNITS = {
    "tabular": "records",
    "transactions": "transactions",
    "location": "fixes",
    "graphs": "nodes",
    "querylogs": "users",
}

#: Thresholds of the flags: ``(amber, red)``; see :func:`flags`.
THRESHOLDS: dict[str, tuple[float, float]] = {
    "suppression": (0.05, 0.20),  # share of individuals left out of the release
    "residual_risk": (0.05, 0.20),  # a re-identification share after release
    "loss": (0.50, 0.80),  # information-loss measures in [0, 1] (NCP, GCP, ...)
    "error": (0.25, 0.50),  # median relative errors of queries and supports
    "recall": (0.50, 0.20),  # frequent itemsets kept (lower is worse)
    "accuracy": (0.95, 0.85),  # classifier accuracy relative to the original
}

_NOT_COVERED = {
    "tabular": "an attacker who knows attributes outside the named quasi-identifiers, or who "
    "infers the sensitive value from its distribution beyond the chosen model",
    "transactions": "an attacker who knows more items of a basket than the model assumes",
    "location": "linkage of a user's windows by spatial continuity (measured as "
    "continuity_chain_share; with linkage 'pseudonym' also through the pseudonym), and an "
    "attacker who knows several true points of a user (measured as linkage_p1 / p2 / p4 "
    "before and after)",
    "graphs": "an attacker who knows a node's neighbourhood beyond its degree (its "
    "neighbours' degrees or a subgraph around it)",
    "querylogs": "what the query texts themselves reveal beyond the identifier patterns "
    "scrubbed (names, rare phrases)",
}

_ADVICE = {
    "suppression": {
        "location": "use a longer --window, a larger --cell-size or the adaptive method, or "
        "a smaller k",
        "querylogs": "use a smaller k or --tie-break add",
        None: "use a smaller k or a weaker model, allow more generalization, or raise the "
        "suppression limit only if suppression is acceptable",
    },
    "residual_risk": {
        "location": "this attack is not covered by per-window k: publish fewer linked points "
        "(aggregate rows, longer windows) or a larger k",
        "graphs": "k-degree anonymity does not cover this attack; raise k, and treat the "
        "figure as the residual risk you accept",
        None: "raise k or add a model that covers this attack",
    },
    "utility": {
        "transactions": "try a smaller m, a frequency-ordered taxonomy (--order frequency) or "
        "k-anonymize; generalized items lose item-level itemsets",
        "location": "use a shorter window or the adaptive method",
        None: "use a smaller k, another algorithm or finer hierarchies",
    },
}


@dataclass
class Flag:
    """One traffic-light finding: ``level`` is ``"red"``, ``"amber"`` or ``"green"``."""

    level: str
    title: str
    detail: str
    advice: str = ""

    def to_dict(self) -> dict[str, str]:
        return {
            "level": self.level,
            "title": self.title,
            "detail": self.detail,
            "advice": self.advice,
        }


def unit(release: Release) -> str:
    """What one individual of the release is (records, transactions, fixes, nodes, users)."""
    return UNITS.get(release.datatype, "individuals")


def _model_names(release: Release) -> str:
    return ", ".join(m.describe() if hasattr(m, "describe") else str(m) for m in release.models)


def _k(release: Release) -> int | None:
    k = release.parameters.get("k")
    if k is None:
        k = next((m.k for m in release.models if hasattr(m, "k")), None)
    try:
        return int(k) if k is not None else None
    except (TypeError, ValueError):
        return None


def headline(release: Release) -> str:
    """The guarantee of ``release`` in one or two plain sentences."""
    params = release.parameters
    k = _k(release)
    if "guarantee" in release.info:
        text = str(release.info["guarantee"])
    elif release.datatype == "tabular" and k is not None:
        qis = ", ".join(map(str, params.get("quasi_identifiers", []))) or "the quasi-identifiers"
        text = (
            f"Every published record is indistinguishable from at least {int(k) - 1} "
            f"others on {qis}."
        )
    elif release.datatype == "transactions" and params.get("algorithm") == "disassociation":
        text = (
            f"Items are published as they are, split into chunks: an attacker who knows up to "
            f"{params.get('m')} items of someone's basket finds them in at least {k} "
            f"subrecords of any chunk that holds them."
        )
    elif release.datatype == "transactions" and k is not None and params.get("m") is not None:
        text = (
            f"An attacker who knows up to {params['m']} items of someone's basket finds at "
            f"least {k} published baskets that match them."
        )
    elif release.datatype == "transactions" and params.get("p") is not None:
        text = (
            f"A sensitive item can be linked to a person with probability at most 1/{params['p']}."
        )
    elif release.datatype == "transactions" and k is not None:
        text = f"Every published basket is shared, as a whole, by at least {k} people."
    elif release.datatype == "location" and k is not None:
        text = (
            f"Every published region holds at least {k} distinct users in each "
            f"{params.get('window', '')} time window."
        )
    elif release.datatype == "graphs" and k is not None:
        text = (
            f"Every published node shares its degree with at least {int(k) - 1} other "
            f"nodes, so its number of connections does not single it out."
        )
    elif release.datatype == "querylogs" and k is not None:
        text = (
            f"Every published user shares an identical set of queries with at least "
            f"{int(k) - 1} other users."
        )
    else:
        text = f"The release satisfies {_model_names(release) or 'its privacy model'}."
    checks = release.checks
    if checks is not None and not checks.passed:
        return (
            "This release FAILS its own privacy check when re-verified from its output; "
            "it must not be published."
        )
    return text + " Checked again from the published output alone."


def not_covered(release: Release) -> str:
    """What the model does not protect against (from the threat model)."""
    return _NOT_COVERED.get(release.datatype, "attacks outside the privacy model")


def _advice(kind: str, datatype: str) -> str:
    table = _ADVICE[kind]
    return table.get(datatype, table[None])


def _numbers(mapping: Any, prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(mapping, dict):
        for key, value in mapping.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict):
                out.update(_numbers(value, name))
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
                out[name] = float(value)
    return out


_RISK_WORDS = (
    "unique",
    "unicity",
    "prosecutor",
    "marketer",
    "journalist",
    "share_below_k",
    "linkage",
    "share_above",
    "reidentification",
    "re_identification",
    "linkage_probability",
)


def _level(value: float, amber: float, red: float, higher_is_worse: bool = True) -> str | None:
    if higher_is_worse:
        return "red" if value >= red else "amber" if value >= amber else None
    return "red" if value <= red else "amber" if value <= amber else None


def _suppression_flags(release: Release) -> list[Flag]:
    n, suppressed = release.shown("n_individuals"), release.shown("suppressed")
    if not n or suppressed is None:
        return []
    share = suppressed / n
    level = _level(share, *THRESHOLDS["suppression"])
    if not level:
        return []
    return [
        Flag(
            level,
            "Large suppression",
            f"{suppressed:,} of {n:,} {unit(release)} ({share:.1%}) are left out of the release.",
            _advice("suppression", release.datatype),
        )
    ]


def _risk_flags(release: Release) -> list[Flag]:
    shown = release.shown_risk()
    risk = to_jsonable(shown) if isinstance(shown, dict) else {}
    before, after = _numbers(risk.get("before", {})), _numbers(risk.get("after", {}))
    k = _k(release)
    promised = 1.0 / k if k else 0.0  # a re-identification share the model itself allows
    advice = _advice("residual_risk", release.datatype)
    found = []
    for name, value in after.items():
        if not any(word in name for word in _RISK_WORDS) or value > 1.0:
            continue
        old = before.get(name)
        if old is not None and value >= old and value > 0:
            found.append(
                Flag(
                    "red",
                    f"Risk did not fall: {name}",
                    f"{name} is {value:.3g} after release (before: {old:.3g}).",
                    advice,
                )
            )
            continue
        level = _level(value, *THRESHOLDS["residual_risk"])
        if level and value > promised + 1e-9:
            found.append(
                Flag(
                    level,
                    f"Residual risk: {name}",
                    f"{name} is still {value:.3g} after release"
                    + (f" (before: {old:.3g})." if old is not None else "."),
                    advice,
                )
            )
    return found


_UTILITY_WORDS = {
    "loss": "Information loss",
    "error": "Query error",
    "recall": "Frequent itemsets lost",
    "accuracy": "Classifier accuracy lost",
}


def _utility_kind(name: str) -> tuple[str, bool] | None:
    """The threshold kind of a utility measure and whether higher is worse, if flagged."""
    leaf = name.rsplit(".", 1)[-1]
    if "." not in name and leaf in ("utility_loss", "ncp", "gcp", "loss", "precision_loss"):
        return "loss", True
    if (leaf == "median" and "error" in name and name.count(".") == 1) or name.endswith(
        "_rel_error_median"
    ):
        return "error", True
    if name.endswith("frequent_itemsets.recall"):
        return "recall", False
    if name.endswith("classifier_accuracy.relative"):
        return "accuracy", False
    return None


def _utility_flags(release: Release) -> list[Flag]:
    shown = release.shown_utility()
    utility = _numbers(to_jsonable(shown) if isinstance(shown, dict) else {})
    found = []
    for name, value in utility.items():
        kind = _utility_kind(name)
        if kind is None:
            continue
        level = _level(value, *THRESHOLDS[kind[0]], higher_is_worse=kind[1])
        if level:
            found.append(
                Flag(
                    level,
                    f"{_UTILITY_WORDS[kind[0]]}: {name}",
                    f"{name} = {value:.3g}.",
                    _advice("utility", release.datatype),
                )
            )
    return found


def _bad_lines_flags(release: Release) -> list[Flag]:
    """An amber flag when input lines were dropped as unreadable (``on_bad_lines="drop"``;
    ``info["bad_lines_dropped"]``, set by the readers' callers of every data type)."""
    dropped = release.info.get("bad_lines_dropped", 0) if isinstance(release.info, dict) else 0
    if not dropped:
        return []
    return [
        Flag(
            "amber",
            "Bad input lines dropped",
            f"{int(dropped):,} input line(s) whose values could not be read were dropped "
            "(--on-bad-lines drop): they are not in the release.",
            "Fix them in the input, or check --sep, --encoding and the column options.",
        )
    ]


# a column published unchanged whose values are this distinct per record singles people out
UNIQUE_COLUMN_SHARE = 0.9


def _handled_columns(parameters: dict[str, Any]) -> set[str]:
    """The columns a tabular release generalizes, masks, pseudonymizes or buckets."""
    names: set[str] = set()
    for key in ("quasi_identifiers", "identifiers", "top", "bottom", "mapping", "columns"):
        value = parameters.get(key) or ()
        items = value.keys() if isinstance(value, dict) else value
        for item in items if not isinstance(items, str) else [items]:
            names.update(map(str, item) if isinstance(item, list | tuple) else [str(item)])
    if parameters.get("sensitive") is not None:
        names.add(str(parameters["sensitive"]))
    return names


def _unique_column_flags(release: Release) -> list[Flag]:
    """A red flag per tabular column the release publishes unchanged although nearly every
    record holds its own value (an id, a serial number, a precise weight): the model
    protects the named columns only, and such a column singles every record out."""
    import pandas as pd

    data = release.data
    if release.datatype != "tabular" or not isinstance(data, pd.DataFrame) or len(data) < 20:
        return []
    handled = _handled_columns(release.parameters or {}) | {"bucket"}
    found = []
    for column in data.columns:
        if str(column) in handled:
            continue
        share = data[column].nunique(dropna=True) / len(data)
        if share >= UNIQUE_COLUMN_SHARE:
            found.append(
                Flag(
                    "red",
                    f"Near-unique column published as is: {column}",
                    f"{share:.0%} of the published records hold their own value of "
                    f"{str(column)!r}, which no option names: it singles them out whatever "
                    "the model does.",
                    "drop the column, or name it as an identifier (pseudonymized), a "
                    "quasi-identifier or a masked column",
                )
            )
    return found


def flags(release: Release) -> list[Flag]:
    """Traffic-light findings of ``release``, worst first.

    Red or amber flags are raised for: a failed verification; suppression above
    ``THRESHOLDS["suppression"]``; a re-identification measure that did not fall, or stays
    above ``THRESHOLDS["residual_risk"]`` and above the ``1/k`` the model itself allows;
    information loss, query errors, frequent-itemset recall or classifier accuracy beyond
    their thresholds; input lines dropped as unreadable (``info["bad_lines_dropped"]``);
    every warning the anonymizer recorded.  A release with none gets one green flag.
    """
    found: list[Flag] = []
    if release.checks is not None and not release.checks.passed:
        found.append(
            Flag(
                "red",
                "Privacy check failed",
                "The release does not satisfy its model when re-checked.",
                "Do not publish it; report the problem.",
            )
        )
    found += _suppression_flags(release) + _risk_flags(release) + _utility_flags(release)
    found += _bad_lines_flags(release) + _unique_column_flags(release)
    warnings = release.info.get("warnings", []) if isinstance(release.info, dict) else []
    found += [Flag("amber", "Warning", str(message)) for message in warnings]
    order = {"red": 0, "amber": 1, "green": 2}
    found.sort(key=lambda f: order[f.level])
    if not found:
        found.append(
            Flag(
                "green",
                "No flags",
                "Verified, little suppression, risk fell, utility within thresholds.",
            )
        )
    return found
