"""The readable text summary of a release (model checks, utility, risk, timings)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._json import to_jsonable

if TYPE_CHECKING:  # the release imports this module for its summary()
    from .release import Release

__all__ = ["format_summary", "flatten"]


def flatten(mapping: Any, prefix: str = "") -> dict[str, Any]:
    """Flatten nested dicts to ``{"a.b": value}``."""
    out: dict[str, Any] = {}
    if isinstance(mapping, dict):
        for key, value in mapping.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict):
                out.update(flatten(value, name))
            else:
                out[name] = value
    return out


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value != value:
            return "-"
        return f"{value:.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, list) and len(value) > 8:
        return f"[{len(value)} values]"
    return str(value)


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> list[str]:
    cells = [list(map(str, header))] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return ["  " + line for line in lines]


def _risk_rows(risk: dict[str, Any]) -> list[list[Any]]:
    before, after = flatten(risk.get("before", {})), flatten(risk.get("after", {}))
    keys = list(dict.fromkeys(list(before) + list(after)))
    return [[k, before.get(k, "-"), after.get(k, "-")] for k in keys]


def format_summary(release: Release) -> str:
    """Model checks, size, utility, risk before/after and timings as aligned text."""
    checks = release.checks if release.checks is not None else release.verify()
    plain = to_jsonable(
        {
            "utility": release.shown_utility(),
            "risk": release.shown_risk(),
            "timings": release.shown_timings(),
        }
    )
    from .verdict import flags, headline, not_covered, unit

    what = unit(release)
    lines = [
        f"structanon {release.datatype} release: {release._counts_text(what)}",
        "",
        headline(release),
        *(
            [f"Transformation: {release.info['transformation_text']}"]
            if isinstance(release.info, dict) and release.info.get("transformation_text")
            else []
        ),
        f"Not covered: {not_covered(release)}.",
        "",
        "Flags:",
    ]
    for flag in flags(release):
        lines.append(
            f"  [{flag.level.upper():5}] {flag.title}: {flag.detail}"
            + (f" What you can do: {flag.advice}" if flag.advice else "")
        )
    lines += [
        "",
        "Privacy checks (re-verified from the output alone):",
    ]
    lines += _table(
        [
            ["PASS" if c.passed else "FAIL", c.model, c.worst, c.threshold, c.n_groups]
            for c in checks.checks
        ],
        ["result", "model", "worst", "threshold", "groups"],
    )
    utility = flatten(plain["utility"])
    if utility:
        lines += ["", "Utility:"] + _table(
            [[k, v] for k, v in utility.items()], ["metric", "value"]
        )
    if plain["risk"]:
        lines += ["", "Risk:"] + _table(_risk_rows(plain["risk"]), ["measure", "before", "after"])
    if plain["timings"]:
        lines += [
            "",
            "Timings (s): "
            + ", ".join(
                f"{k} {v:.3f}" for k, v in plain["timings"].items() if isinstance(v, (int, float))
            ),
        ]
    return "\n".join(lines)
