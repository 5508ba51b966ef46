"""JSON and self-contained HTML reports of a :class:`~structanon.Release`, and provenance.

Every report, whatever the data type, has the same parts in the same order: the guarantee in
plain words and what it does not cover (from ``docs/threat-model.md``), traffic-light flags
with what to do about each, before/after views (the input next to the release, small counts
merged or hidden), the privacy checks, utility, risk before and after, figures, provenance
(software, date, command, input file and its SHA-256, parameters), and details.  No
report holds the key, the publisher's ``source_index`` or anything that regenerates the
publication randomness.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ._json import to_jsonable
from ._validation import file_suffix
from .errors import InputError
from .io import atomic_write
from .release import Release
from .summary import _fmt, _risk_rows, flatten, format_summary
from .verdict import THRESHOLDS, flags, headline, not_covered, unit

__all__ = [
    "format_summary",
    "write_report",
    "flatten",
    "provenance",
    "report_dict",
    "REPORT_EXTENSIONS",
    "ReportFigure",
    "before_after_bars",
    "small_count_floor",
]

REPORT_EXTENSIONS = (".json", ".html", ".htm")


def _without_key_file(argv: list[str]) -> list[str]:
    """``argv`` with the value of every ``--key-file`` (``--key-file F`` or
    ``--key-file=F``) replaced by ``<key file>``.

    Examples
    --------
    >>> _without_key_file(["structanon", "graphs", "--key-file", "/home/a/k.key", "-k", "5"])
    ['structanon', 'graphs', '--key-file', '<key file>', '-k', '5']
    >>> _without_key_file(["x", "--key-file=/k", "--", "--key-file"])
    ['x', '--key-file=<key file>', '--', '--key-file']
    """
    out, hide = [], False
    for i, arg in enumerate(argv):
        if hide:
            out.append("<key file>")
            hide = False
            continue
        if arg == "--":
            return out + argv[i:]
        if arg == "--key-file":
            hide = True
        elif arg.startswith("--key-file="):
            arg = "--key-file=<key file>"
        out.append(arg)
    return out


def provenance(
    inputs: Sequence[str | Path] = (), command: Sequence[str] | None = None
) -> dict[str, Any]:
    """Where a release came from: software, date, command line and input files.

    Parameters
    ----------
    inputs : sequence of paths
        The files read, by name only: a file's size or hash would be a fact of the input
        itself (one record more or less changes both; a bare hash confirms any guess of
        the whole file, and so of one unknown record in it).
    command : sequence of str, optional
        The command line (default ``sys.argv``).  The value of ``--key-file`` is replaced by
        ``<key file>``: neither the key nor where it lives is published (a key file's path
        or name would link every release made with it).
    """
    from . import __version__

    files = []
    for item in inputs:
        path = Path(item)
        files.append({"name": path.name})
    argv = _without_key_file(list(sys.argv if command is None else command))
    if argv:
        argv[0] = Path(argv[0]).name
    return {
        "software": f"structanon {__version__}",
        "python": sys.version.split()[0],
        "date_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join(argv),
        "inputs": files,
    }


def report_dict(release: Release) -> dict[str, Any]:
    """Everything a report shows, as plain JSON values (the JSON report itself)."""
    if not release.provenance:
        release.provenance = provenance()
    data = release.to_dict()
    return to_jsonable(
        {
            "data_type": release.datatype,
            "headline": headline(release),
            "not_covered": not_covered(release),
            "unit": unit(release),
            "flags": [f.to_dict() for f in flags(release)],
            "flag_thresholds": THRESHOLDS,
            **data,
        }
    )


class ReportFigure(NamedTuple):
    """One figure of an HTML report.

    ``title`` is the caption; ``alt`` the image's text alternative (default: the title);
    ``view`` puts it under "Before and after" (a view of the input next to the release)
    instead of "Figures".  A plain ``(title, figure)`` pair is a figure without alt text of
    its own.
    """

    title: str
    figure: Any
    alt: str = ""
    view: bool = False


#: What a report takes as a figure: a :class:`ReportFigure` or a plain ``(title, figure)``.
Figure = ReportFigure | tuple[str, Any]


def small_count_floor(release: Release) -> int:
    """The least count a report may show of the input: the release's ``k`` (at least 2).

    Views of the input aggregate it; a bar of fewer than ``k`` records, users or nodes would
    describe someone the release protects, so views merge or hide such bars.
    """
    values = [release.parameters.get("k")] + [getattr(m, "k", None) for m in release.models]
    ks = [int(v) for v in values if isinstance(v, int | np.integer) and not isinstance(v, bool)]
    return max([2, *ks])


# the scale of the Laplace noise on the input's counts in before/after views, per unit one
# person can add to a count: two reports of inputs one person apart then differ by noise
# (a fresh draw each report, never the seed) rather than by that person's values
VIEW_NOISE_SCALE = 2.0


def noisy_view_counts(counts: Any, floor: int, sensitivity: float = 1.0) -> tuple[Any, Any]:
    """The input's ``counts`` as a before/after view draws them: each plus Laplace noise of
    scale ``VIEW_NOISE_SCALE * sensitivity`` from fresh entropy, rounded and at least 0;
    returns ``(noisy, shown)``, ``shown`` marking the counts of at least ``floor`` both
    exactly (no value fewer than ``floor`` hold is ever drawn or named) and through the
    noise (so a count at the floor does not flip a bar on or off by one person alone).

    Examples
    --------
    >>> noisy, shown = noisy_view_counts(np.array([1000, 1]), 5)
    >>> bool(abs(noisy[0] - 1000) < 100), bool(shown[0])
    (True, True)
    """
    values = np.asarray(counts, dtype=float)
    rng = np.random.default_rng()  # fresh entropy: neither the seed nor the key decides it
    noisy = np.maximum(
        np.round(values + rng.laplace(0.0, VIEW_NOISE_SCALE * sensitivity, values.shape)), 0.0
    )
    return noisy, (values >= floor) & (noisy >= floor)


def before_after_bars(
    labels: Sequence[str],
    before: Sequence[float],
    after: Sequence[float],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    names: tuple[str, str] = ("input", "release"),
) -> Any:
    """Horizontal bars of each label's count in the input and in the release.

    The first label is drawn at the top; the legend sits above the axes, so it covers no
    bar.  The release's bars carry their value; the input's carry none: a report gives no
    exact count of an input value (two reports of inputs one person apart would differ by
    that person's values), and callers name only values the release shows.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(labels)
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.36 * max(n, 1)))
    y = np.arange(n)[::-1]
    for shift, values, name, colour in (
        (0.2, before, names[0], "#8172b2"),
        (-0.2, after, names[1], "#55a868"),
    ):
        bars = ax.barh(y + shift, list(values), 0.4, label=name, color=colour)
        if values is after:
            ax.bar_label(bars, labels=[f"{v:,.0f}" for v in values], fontsize=7, padding=2)
    ax.set_yticks(y, [_short(str(label)) for label in labels], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.margins(x=0.15)
    ax.set_title(title, fontsize=10, pad=22)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "\u2026"


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


_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;"
    "color:#222;line-height:1.45}"
    "table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:left}th{background:#f3f3f3}"
    ".verdict{font-size:1.15em;border-left:6px solid #2a6;padding:.4em .8em;background:#f4faf6}"
    ".verdict.fail{border-color:#a00;background:#fbf1f1}"
    ".flag{padding:.35em .7em;margin:.3em 0;border-radius:4px}"
    ".red{background:#fbe3e3;border-left:6px solid #c22}.amber{background:#fff4dc;"
    "border-left:6px solid #d90}.green{background:#e8f5ea;border-left:6px solid #2a6}"
    "figure{margin:1em 0}figcaption{font-weight:bold;margin-bottom:.3em}"
    "img{max-width:100%}"
)


def _figures_html(heading: str, anchor: str, items: Sequence[ReportFigure]) -> list[str]:
    """A section of figures: caption, then the image with its alt text (empty: no section)."""
    if not items:
        return []
    return [f"<h2 id='{anchor}'>{heading}</h2>"] + [
        f"<figure><figcaption>{html.escape(item.title)}</figcaption>"
        f"<img alt='{html.escape(item.alt or item.title)}' "
        f"src='data:image/png;base64,{_figure_png(item.figure)}'></figure>"
        for item in items
    ]


def _html(release: Release, data: dict[str, Any], figures: Sequence[Figure]) -> str:
    what = data["unit"]
    passed = data["verification"]["passed"]
    checks = data["verification"]["checks"]
    esc = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>structanon {esc(release.datatype)} report</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>structanon {esc(release.datatype)} release</h1>",
        f"<p class='verdict{'' if passed else ' fail'}' id='headline'>{esc(data['headline'])}</p>",
        (
            f"<p><b>{data['n_individuals']:,}</b> {esc(what)} in the input, "
            f"<b>{data['suppressed']:,}</b> {esc(what)} suppressed.</p>"
            if data["n_individuals"] is not None
            else f"<p>{esc(release._counts_text(what))}.</p>"
        ),
        *(
            [
                f"<p id='transformation'><b>Transformation:</b> "
                f"{esc(str(data['info']['transformation_text']))}</p>"
            ]
            if data["info"].get("transformation_text")
            else []
        ),
        "<h2>What this protects against</h2>",
        "<p>The attacker assumed holds every published file and this report, knows the "
        "software and every parameter shown here, and may hold other releases of the same "
        "input. The published order, labels and ids are secret random choices that no "
        "parameter here regenerates.</p>",
        f"<p><b>Not covered:</b> {esc(data['not_covered'])}. The risk figures below measure "
        "what remains.</p>",
        "<h2 id='flags'>Flags</h2>",
    ]
    for flag in data["flags"]:
        advice = f"<br><i>What you can do:</i> {esc(flag['advice'])}" if flag["advice"] else ""
        parts.append(
            f"<div class='flag {esc(flag['level'])}'><b>{esc(flag['level'].upper())}"
            f" &middot; {esc(flag['title'])}</b>: {esc(flag['detail'])}{advice}</div>"
        )
    items = [ReportFigure(*item) for item in figures]
    parts += _figures_html("Before and after", "before-after", [f for f in items if f.view])
    parts += [
        "<h2>Privacy checks (re-verified from the published output alone)</h2>",
        _html_table(
            [
                [
                    "PASS" if c["passed"] else "FAIL",
                    c["model"],
                    c["worst"],
                    c["threshold"],
                    c["n_groups"],
                ]
                for c in checks
            ],
            ["result", "model", "worst value", "threshold", "groups"],
        ),
    ]
    if data["utility"]:
        parts += [
            "<h2>Utility</h2>",
            _html_table(
                [[k, v] for k, v in flatten(data["utility"]).items()], ["measure", "value"]
            ),
        ]
    if data["risk"]:
        parts += [
            "<h2>Risk before and after</h2>",
            _html_table(_risk_rows(data["risk"]), ["measure", "before", "after"]),
        ]
    parts += _figures_html("Figures", "figures", [f for f in items if not f.view])
    parts += [
        "<h2 id='provenance'>Provenance</h2>",
        _html_table(
            [[k, v] for k, v in flatten(data.get("provenance") or {}).items() if k != "inputs"]
            + [["input", e.get("name")] for e in (data.get("provenance") or {}).get("inputs", [])],
            ["item", "value"],
        ),
        "<h3>Parameters</h3>",
        _html_table(
            [[k, v] for k, v in flatten(data["parameters"]).items()], ["parameter", "value"]
        ),
    ]
    if data["info"]:
        parts += [
            "<h2>Details</h2>",
            _html_table([[k, v] for k, v in flatten(data["info"]).items()], ["item", "value"]),
        ]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(release: Release, path: str | Path, figures: Sequence[Figure] = ()) -> Path:
    """Write a report: JSON for ``.json``, a self-contained HTML page for ``.html``/``.htm``.

    Parameters
    ----------
    release : Release
    path : path
    figures : sequence of ReportFigure or (title, matplotlib Figure)
        Embedded as PNG images in the HTML report, with the title as caption and the alt
        text (default: the title); before/after views get their own section (ignored for
        JSON).
    """
    path = Path(path)
    ext = file_suffix(path)
    if ext not in REPORT_EXTENSIONS:
        raise InputError("report must end in .json or .html", path=str(path))
    if release.checks is None:
        release.verify()
    data = report_dict(release)
    with atomic_write(path) as fh:
        if ext == ".json":
            json.dump(data, fh, indent=2)
        else:
            fh.write(_html(release, data, figures))
    return path
