"""Readable summaries and JSON / HTML reports of a :class:`~structanon.Release`."""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import InputError
from .io import atomic_write
from .release import Release
from .summary import _fmt, _risk_rows, flatten, format_summary

__all__ = ["format_summary", "write_report", "flatten"]


def _figure_png(figure: Any) -> str:
    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    try:
        import matplotlib.pyplot as plt

        plt.close(figure)
    except ImportError:  # pragma: no cover - figure objects imply matplotlib
        pass
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _html_table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def write_report(release: Release, path: str | Path, figures: Sequence[tuple[str, Any]] = ()) -> Path:
    """Write a report: JSON for ``.json``, a self-contained HTML page for ``.html``/``.htm``.

    Parameters
    ----------
    release : Release
    path : path
    figures : sequence of (title, matplotlib Figure)
        Embedded as PNG images in the HTML report (ignored for JSON).
    """
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in (".json", ".html", ".htm"):
        raise InputError("report must end in .json or .html", path=str(path))
    data = release.to_dict()
    if ext == ".json":
        with atomic_write(path) as fh:
            json.dump(data, fh, indent=2)
        return path
    checks = data["verification"]["checks"]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>structanon {html.escape(release.datatype)} report</title>",
        "<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px}"
        ".pass{color:#070}.fail{color:#a00}</style></head><body>",
        f"<h1>structanon {html.escape(release.datatype)} release</h1>",
        f"<p>{data['n_individuals']:,} individuals in, {data['suppressed']:,} suppressed. "
        f"Verification from the output alone: <b class='{'pass' if data['verification']['passed'] else 'fail'}'>"
        f"{'passed' if data['verification']['passed'] else 'FAILED'}</b>.</p>",
        "<h2>Privacy checks</h2>",
        _html_table([["PASS" if c["passed"] else "FAIL", c["model"], c["worst"], c["threshold"],
                      c["n_groups"]] for c in checks],
                    ["result", "model", "worst", "threshold", "groups"]),
        "<h2>Parameters</h2>",
        _html_table([[k, v] for k, v in flatten(data["parameters"]).items()], ["parameter", "value"]),
    ]
    if data["utility"]:
        parts += ["<h2>Utility</h2>",
                  _html_table([[k, v] for k, v in flatten(data["utility"]).items()], ["metric", "value"])]
    if data["risk"]:
        parts += ["<h2>Risk before and after</h2>",
                  _html_table(_risk_rows(data["risk"]), ["measure", "before", "after"])]
    if data["info"]:
        parts += ["<h2>Details</h2>",
                  _html_table([[k, v] for k, v in flatten(data["info"]).items()], ["item", "value"])]
    for title, figure in figures:
        parts.append(f"<h2>{html.escape(title)}</h2><img alt='{html.escape(title)}' "
                     f"src='data:image/png;base64,{_figure_png(figure)}'>")
    parts.append("</body></html>")
    with atomic_write(path) as fh:
        fh.write("\n".join(parts))
    return path
