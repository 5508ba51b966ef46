"""The fuzz suite's harness: seed files, input mutations, and one checked run of a command.

Every run, in-process (``click.testing.CliRunner``) or in a subprocess under a 4 GiB
address-space limit, must end with exit 0 (done), 2 (bad input) or 3 (infeasible request),
print no traceback, leave every input file byte for byte as it was, and leave the working
folder exactly as it was unless it exits 0 (then only the declared outputs may be new).

Test modules reach these helpers through the ``fz`` fixture (a conftest is not importable
by name); strategies are drawn inside the tests with ``st.data()``.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
GIB = 1 << 30
MEMORY_LIMIT = 4 * GIB  # address space of a subprocess run
IN_PROCESS_HEADROOM = 3 * GIB  # address space an in-process run may add to the test process
IN_PROCESS_TIMEOUT = 60.0  # seconds
SUBPROCESS_TIMEOUT = 120.0
SMALL_INPUT = 64 << 20  # out of memory on less input than this: memory not bounded by input
OK_EXITS = (0, 2, 3)
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

# Tokens a real file holds where a value was expected.
GARBAGE = [
    "",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e309",
    "-1",
    "0",
    "abc",
    "9" * 40,
    "é",
    "日本",
    "\t",
    ",",
    ";",
    '"',
    "'",
    "NULL",
    "None",
    "2008-13-45 25:61:61",
    "   ",
    "\\",
    "#",
    "%",
    "1.5",
    "-0",
    "0x1F",
    "True",
    "\x00",
    "a,b",
    "[1, 2]",
    "{}",
    "null",
]
SEPARATORS = [",", ";", "\t", " ", "|", ":"]
HUGE = [10**6, 2**31, 2**63, 10**30]


class FuzzTimeout(BaseException):
    """An in-process run exceeded its time budget (a BaseException, so no handler eats it)."""


# ---------------------------------------------------------------------------------------------
# Seed files: small prefixes of each package's bundled sample data


@dataclass(frozen=True)
class Seed:
    """A well-formed small input of one data type, to be cut and mutated."""

    name: str
    text: str
    sep: str | None  # field separator; None for whitespace-separated fields
    header: bool


def _lines(path: Path, n: int) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        out = []
        for line in handle:
            out.append(line)
            if len(out) >= n:
                break
    return out


def _location_text() -> str:
    """25 fixes of each GeoLife user, so most prefixes hold several users."""
    lines = _lines(REPO / "location" / "data" / "geolife_11users_sample.csv.gz", 10**6)
    header, rows = lines[0], lines[1:]
    by_user: dict[str, list[str]] = {}
    for row in rows:
        by_user.setdefault(row.split(",", 1)[0], []).append(row)
    picked = [row for user in sorted(by_user) for row in by_user[user][::7][:25]]
    # interleave the users, so a prefix of a few dozen lines already holds several
    picked.sort(key=lambda row: (row.split(",")[1][11:], row))
    return header + "".join(picked)


def _querylog_text() -> str:
    from querylogs import synthetic_log, write_log

    buffer = Path(os.environ.get("TMPDIR", "/tmp"))
    import tempfile

    with tempfile.TemporaryDirectory(dir=buffer) as tmp:
        path = write_log(synthetic_log(30, 600, seed=11), Path(tmp) / "log.tsv", aol=True)
        return Path(path).read_text(encoding="utf-8")


def _graph_texts() -> dict[str, str]:
    import networkx as nx

    edges = [
        tuple(map(int, line.split()))
        for line in _lines(REPO / "graphs" / "data" / "ca-GrQc_undirected.txt", 300)
    ]
    graph = nx.Graph(edges)
    for node in graph:
        graph.nodes[node]["group"] = node % 3
    out = {}
    for name, writer in (("graphml", nx.write_graphml), ("gexf", nx.write_gexf)):
        buffer = io.BytesIO()
        writer(graph, buffer)
        out[name] = buffer.getvalue().decode("utf-8")
    out["json"] = json.dumps(nx.node_link_data(graph, edges="links"))
    out["csv"] = "source,target\n" + "".join(f"{u},{v}\n" for u, v in edges)
    return out


_SEEDS: dict[str, Seed] = {}


def seeds() -> dict[str, Seed]:
    """Every seed, built once per session."""
    if not _SEEDS:
        tab = "".join(_lines(REPO / "tabular" / "data" / "adult_sample.csv", 160))
        _SEEDS["tabular"] = Seed("tabular", tab, ";", True)
        trans = "".join(_lines(REPO / "transactions" / "data" / "retail_head2000.dat", 150))
        _SEEDS["fimi"] = Seed("fimi", trans, None, False)
        rows = [line.split() for line in trans.splitlines()[:40]]
        _SEEDS["tx-csv"] = Seed(
            "tx-csv",
            "tid,item\n"
            + "".join(f"{t},{item}\n" for t, items in enumerate(rows) for item in items),
            ",",
            True,
        )
        _SEEDS["jsonl"] = Seed(
            "jsonl", "".join("[" + ", ".join(items) + "]\n" for items in rows), ",", False
        )
        edges = "".join(_lines(REPO / "graphs" / "data" / "ca-GrQc_undirected.txt", 300))
        _SEEDS["edgelist"] = Seed("edgelist", edges, None, False)
        for name, text in _graph_texts().items():
            _SEEDS[f"graph-{name}"] = Seed(
                f"graph-{name}", text, "," if name == "csv" else None, name == "csv"
            )
        _SEEDS["location"] = Seed("location", _location_text(), ",", True)
        _SEEDS["aol"] = Seed("aol", _querylog_text(), "\t", True)
        _SEEDS["hierarchy"] = Seed(
            "hierarchy",
            (REPO / "tabular" / "data" / "adult_hierarchy_age.csv").read_text(),
            ";",
            False,
        )
    return _SEEDS


# ---------------------------------------------------------------------------------------------
# Input mutations

CONTENT_KINDS = [
    "prefix",
    "prefix",
    "prefix",
    "truncated",
    "empty",
    "header-only",
    "blank",
    "random-bytes",
    "random-text",
    "wrong-sep",
    "garbage-cells",
    "ragged",
    "latin-1",
    "utf-16",
    "utf-8-bom",
    "nul",
    "invalid-utf8",
    "crlf",
    "long-line",
    "duplicated",
    "gzip",
    "stacked",
]


def _prefix(data: Any, seed: Seed, min_lines: int = 1) -> list[str]:
    lines = seed.text.splitlines(keepends=True)
    if seed.name.startswith("graph-") and seed.name != "graph-csv":
        return lines  # structured formats: cut bytes, not lines
    n = data.draw(
        st.integers(min_value=min(min_lines, len(lines)), max_value=len(lines)), label="lines kept"
    )
    head = lines[:1] if seed.header else []
    return head + lines[len(head) : n] if n > len(head) else head


def _split_fields(line: str, sep: str | None) -> list[str]:
    return line.rstrip("\r\n").split(sep) if sep else line.split()


def _join_fields(fields: list[str], sep: str | None) -> str:
    return (sep or " ").join(fields) + "\n"


def _edit_cells(data: Any, lines: list[str], seed: Seed, ragged: bool) -> list[str]:
    if len(lines) <= int(seed.header):
        return lines
    lines = list(lines)
    for _ in range(data.draw(st.integers(1, 5), label="edits")):
        index = data.draw(st.integers(int(seed.header), len(lines) - 1), label="line")
        fields = _split_fields(lines[index], seed.sep)
        if ragged:
            action = data.draw(st.sampled_from(["drop", "add", "blank", "header"]))
            if action == "drop" and fields:
                fields.pop(data.draw(st.integers(0, len(fields) - 1)))
            elif action == "add":
                fields.append(data.draw(st.sampled_from(GARBAGE)))
            elif action == "blank":
                fields = []
            else:
                fields = _split_fields(lines[0], seed.sep)
        elif fields:
            fields[data.draw(st.integers(0, len(fields) - 1), label="field")] = data.draw(
                st.sampled_from(GARBAGE), label="token"
            )
        lines[index] = _join_fields(fields, seed.sep) if fields else "\n"
    return lines


def _insert(data: Any, raw: bytes, chunk: bytes) -> bytes:
    for _ in range(data.draw(st.integers(1, 4), label="insertions")):
        at = data.draw(st.integers(0, len(raw)), label="at")
        raw = raw[:at] + chunk + raw[at:]
    return raw


def content(
    data: Any, seed: Seed, *, kinds: list[str] | None = None, max_long: int = 400
) -> tuple[bytes, str]:
    """Bytes of a generated input derived from ``seed`` and a short description of them.

    ``max_long`` bounds the items of a "long-line" (one huge record; the subprocess tests,
    which run under a memory limit, pass a larger bound).
    """
    kind = data.draw(st.sampled_from(kinds or CONTENT_KINDS), label="content kind")
    if kind == "stacked":  # two mutations, one after the other
        first, first_kind = content(
            data,
            seed,
            kinds=["garbage-cells", "ragged", "wrong-sep", "long-line", "duplicated", "truncated"],
            max_long=max_long,
        )
        text = first.decode("utf-8", errors="replace")
        second, second_kind = content(
            data,
            Seed(seed.name, text, seed.sep, seed.header),
            kinds=[
                "latin-1",
                "nul",
                "invalid-utf8",
                "crlf",
                "utf-16",
                "ragged",
                "garbage-cells",
                "gzip",
            ],
            max_long=max_long,
        )
        return second, f"{first_kind}+{second_kind}"
    if kind == "empty":
        return b"", kind
    if kind == "blank":
        return data.draw(st.sampled_from([b"\n", b"\n\n\n", b"   \n\t\n", b"\r\n"])), kind
    if kind == "random-bytes":
        return data.draw(st.binary(max_size=600), label="bytes"), kind
    if kind == "random-text":
        return data.draw(st.text(max_size=300), label="text").encode("utf-8"), kind
    if kind == "header-only":
        first = seed.text.splitlines(keepends=True)[0]
        return (first if data.draw(st.booleans()) else first.rstrip("\r\n")).encode(), kind
    lines = _prefix(data, seed, min_lines=40 if kind == "prefix" else 1)
    text = "".join(lines)
    if kind in ("prefix", "gzip"):
        raw = text.encode()
        return (gzip.compress(raw, mtime=0) if kind == "gzip" else raw), kind
    if kind == "truncated":
        raw = seed.text.encode()
        return raw[: data.draw(st.integers(0, len(raw)), label="bytes kept")], kind
    if kind == "wrong-sep":
        old = seed.sep or " "
        new = data.draw(st.sampled_from([s for s in SEPARATORS if s != old]), label="sep")
        return text.replace(old, new).encode(), f"{kind} {new!r}"
    if kind in ("garbage-cells", "ragged"):
        return "".join(_edit_cells(data, lines, seed, kind == "ragged")).encode(), kind
    if kind == "latin-1":
        lines = _edit_cells(data, lines, seed, False) if len(lines) > 1 else lines
        text = "".join(lines).replace("a", "\u00e4", data.draw(st.integers(1, 20)))
        return text.encode("latin-1", errors="replace"), kind
    if kind == "utf-16":
        return text.encode("utf-16"), kind
    if kind == "utf-8-bom":
        return text.encode("utf-8-sig"), kind
    if kind == "nul":
        return _insert(data, text.encode(), b"\x00"), kind
    if kind == "invalid-utf8":
        return _insert(
            data,
            text.encode(),
            data.draw(st.sampled_from([b"\xff", b"\xfe\xff", b"\x80", b"\xc3", b"\xed\xa0\x80"])),
        ), kind
    if kind == "crlf":
        return text.replace("\n", "\r\n").encode(), kind
    if kind == "long-line":
        size = data.draw(st.integers(50, max(50, max_long)), label="fields")
        base = _split_fields(lines[-1], seed.sep) or ["1"]
        record = [base[i % len(base)] if seed.header else str(i) for i in range(size)]
        return (text + _join_fields(record, seed.sep)).encode(), f"{kind} {size}"
    if kind == "duplicated":
        body = lines[int(seed.header) :] or lines
        times = data.draw(st.integers(2, 20), label="copies")
        return ("".join(lines[: int(seed.header)]) + "".join(body) * times).encode(), kind
    raise AssertionError(kind)


# ---------------------------------------------------------------------------------------------
# What one example gets wrong, and option values

FAULTS = ("content", "options", "paths")
PLANS = ["clean", "content", "options", "paths", "content", "options", "all"]


@dataclass(frozen=True)
class Plan:
    """Which parts of one invocation are generated to be wrong; the others are well-formed.

    Mostly one part at a time, so most runs get past the first check and into the reader,
    the algorithm and the writers; sometimes none (a clean run) or all of them.
    """

    faults: frozenset[str]

    def bad(self, part: str) -> bool:
        return part in self.faults


def plan(data: Any) -> Plan:
    mode = data.draw(st.sampled_from(PLANS), label="plan")
    return Plan(frozenset(FAULTS if mode == "all" else () if mode == "clean" else (mode,)))


def int_option(data: Any, plan: Plan, good: list[int], label: str, huge: list[int] = HUGE) -> int:
    """An integer option: one of ``good``, or (options at fault) a boundary or a huge value."""
    if plan.bad("options") and data.draw(st.booleans(), label=f"bad {label}"):
        return data.draw(
            st.one_of(st.sampled_from([-1, 0, 1, 2] + huge), st.integers(-3, 60)), label=label
        )
    return data.draw(st.sampled_from(good), label=label)


def float_option(data: Any, plan: Plan, good: list[float], label: str) -> str:
    if plan.bad("options") and data.draw(st.booleans(), label=f"bad {label}"):
        return data.draw(
            st.sampled_from(["-1", "0", "1", "2", "nan", "inf", "-inf", "1e308", "1e-320", "abc"]),
            label=label,
        )
    return str(data.draw(st.sampled_from(good), label=label))


def choice_option(data: Any, plan: Plan, good: list[Any], bad: list[Any], label: str) -> Any:
    if plan.bad("options") and bad and data.draw(st.booleans(), label=f"bad {label}"):
        return data.draw(st.sampled_from(bad), label=label)
    return data.draw(st.sampled_from(good), label=label)


def maybe(data: Any, label: str, one_in: int = 3) -> bool:
    """True about once in ``one_in`` draws (False is the simpler value)."""
    return data.draw(st.sampled_from([False] * (one_in - 1) + [True]), label=label)


@functools.cache
def command_options(group: str, command: str) -> frozenset[str]:
    """The option names of ``structanon GROUP COMMAND`` (so builders can use newer options)."""
    import click

    from structanon.cli import main

    context = click.Context(main)
    sub = main.get_command(context, group).get_command(context, command)
    return frozenset(opt for param in sub.params for opt in param.opts + param.secondary_opts)


# ---------------------------------------------------------------------------------------------
# Working folder and paths


@dataclass
class Invocation:
    """One command to run, with the files it reads and the files it may write."""

    args: list[str]
    inputs: list[Path] = field(default_factory=list)
    outputs: list[Path] = field(default_factory=list)
    description: list[str] = field(default_factory=list)
    must_write: list[Path] = field(default_factory=list)  # written whenever it exits 0

    def add(self, *args: Any) -> None:
        self.args.extend(str(a) for a in args)

    def note(self, text: str) -> None:
        self.description.append(text)


class Workdir:
    """A fresh folder with ``in/`` (inputs), ``out/`` (an existing output folder)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.inputs = root / "in"
        self.out = root / "out"
        self.inputs.mkdir()
        self.out.mkdir()
        (self.out / "existing.txt").write_text("an unrelated file\n")

    def write_input(self, name: str, raw: bytes) -> Path:
        path = self.inputs / name
        path.write_bytes(raw)
        return path

    def output(
        self,
        data: Any,
        plan: Plan,
        inv: Invocation,
        option: str,
        name: str,
        extensions: list[str],
        *,
        required: bool,
        others: list[Path] = (),
    ) -> Path | None:
        """Draw the path of an output option and add it to ``inv``; None when left out.

        Good paths end with one of ``extensions`` in an existing folder; with paths at
        fault the path may also be in a missing or read-only folder, under a file, a
        folder itself, the input, another output, an existing file or carry another
        extension.
        """
        kinds = ["good"]
        if plan.bad("paths"):
            kinds += [
                "missing-folder",
                "is-input",
                "is-folder",
                "parent-is-file",
                "bad-extension",
                "existing-file",
            ]
            if others:
                kinds.append("same-as-other")
            if not IS_ROOT:
                kinds.append("read-only-folder")
        if not required:
            kinds = ["absent", "absent"] + kinds
        kind = data.draw(st.sampled_from(kinds), label=f"{option} kind")
        if kind == "absent":
            return None
        ext = data.draw(st.sampled_from(extensions), label=f"{option} extension")
        good = self.out / f"{name}{ext}"
        path = {
            "good": good,
            "missing-folder": self.root / "missing" / "deeper" / f"{name}{ext}",
            "is-input": inv.inputs[0] if inv.inputs else good,
            "is-folder": self.out,
            "parent-is-file": (inv.inputs[0] if inv.inputs else self.out / "existing.txt")
            / f"{name}{ext}",
            "bad-extension": self.out
            / f"{name}{data.draw(st.sampled_from(['.xlsx', '.txt', '', '.exe', '.json.bak']))}",
            "existing-file": self.out / "existing.txt",
            "same-as-other": others[0] if others else good,
            "read-only-folder": self._read_only() / f"{name}{ext}",
        }[kind]
        inv.add(option, path)
        inv.outputs.append(path)
        if kind == "good" and required:
            inv.must_write.append(path)
        inv.note(f"{option}={kind}")
        return path

    def _read_only(self) -> Path:
        folder = self.root / "read-only"
        if not folder.exists():
            folder.mkdir()
            folder.chmod(0o555)
        return folder


@contextlib.contextmanager
def workdir() -> Iterator[Workdir]:
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="structanon-fuzz-"))
    try:
        yield Workdir(root)
    finally:
        for folder in root.rglob("*"):
            if folder.is_dir():
                folder.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(root: Path) -> dict[str, str]:
    """Every file (by SHA-256) and folder under ``root``."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        out[rel] = "<dir>" if path.is_dir() else _sha256(path)
    return out


# ---------------------------------------------------------------------------------------------
# Running and checking


@dataclass
class Outcome:
    exit_code: int | None
    stdout: str
    stderr: str
    exception: str  # formatted traceback of an exception that escaped the command, or ""
    timed_out: bool = False


@contextlib.contextmanager
def _in_process_limits(timeout: float) -> Iterator[None]:
    """A time budget (SIGALRM) and an address-space limit for code run in this process."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise FuzzTimeout(f"in-process run exceeded {timeout:.0f} s")

    with open("/proc/self/status") as status:
        vm = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = vm + IN_PROCESS_HEADROOM
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def run_in_process(args: list[str], timeout: float = IN_PROCESS_TIMEOUT) -> Outcome:
    from click.testing import CliRunner

    from structanon.cli import main

    runner = CliRunner()
    try:
        with _in_process_limits(timeout):
            result = runner.invoke(main, args, catch_exceptions=True)
    except FuzzTimeout as exc:
        return Outcome(None, "", "", str(exc), timed_out=True)
    exception = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exception = "".join(traceback.format_exception(*result.exc_info))
    elif isinstance(result.exception, SystemExit) and not isinstance(
        result.exception.code, (int, type(None))
    ):
        exception = f"SystemExit({result.exception.code!r})"
    return Outcome(result.exit_code, result.stdout, result.stderr, exception)


def _limit_memory() -> None:  # runs in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_subprocess(args: list[str], timeout: float = SUBPROCESS_TIMEOUT) -> Outcome:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("STRUCTANON_PSEUDONYM_KEY", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "structanon", *args],
            capture_output=True,
            env=env,
            timeout=timeout,
            preexec_fn=_limit_memory,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        return Outcome(
            None,
            (exc.stdout or b"").decode(errors="replace"),
            (exc.stderr or b"").decode(errors="replace"),
            f"timed out after {timeout:.0f} s",
            timed_out=True,
        )
    return Outcome(
        proc.returncode,
        proc.stdout.decode(errors="replace"),
        proc.stderr.decode(errors="replace"),
        "",
    )


def problems(
    inv: Invocation,
    outcome: Outcome,
    root: Path,
    before: dict[str, str],
    input_hashes: dict[Path, str],
) -> list[str]:
    """What the run did wrong (empty when it behaved)."""
    found = []
    if outcome.timed_out:
        found.append(f"timeout: {outcome.exception}")
    elif outcome.exit_code not in OK_EXITS:
        found.append(f"exit code {outcome.exit_code}")
    if outcome.exception:
        found.append("exception escaped: " + outcome.exception.strip().splitlines()[-1])
    for stream, text in (("stderr", outcome.stderr), ("stdout", outcome.stdout)):
        if "Traceback" in text:
            found.append(f"traceback on {stream}")
    if outcome.exit_code in (2, 3) and not _clear_message(outcome.stderr):
        found.append(f"exit {outcome.exit_code} without a clear one-line error message")
    size = sum(p.stat().st_size for p in input_hashes if p.exists())
    if "out of memory" in outcome.stderr and size < SMALL_INPUT:
        found.append(f"out of memory on {size:,} bytes of input")
    for path, digest in input_hashes.items():
        if not path.exists():
            found.append(f"input {path.name} removed")
        elif _sha256(path) != digest:
            found.append(f"input {path.name} changed")
    after = snapshot(root)
    changed = sorted(rel for rel in set(before) | set(after) if before.get(rel) != after.get(rel))
    if outcome.exit_code != 0 and not outcome.timed_out:
        if changed:
            found.append(f"exit {outcome.exit_code} but files changed: {changed}")
    elif outcome.exit_code == 0:
        allowed = {str(p.relative_to(root)) for p in inv.outputs if _inside(p, root)}
        allowed |= {
            str(parent.relative_to(root))
            for p in inv.outputs
            if _inside(p, root)
            for parent in p.parents
            if _inside(parent, root) and parent != root
        }
        stray = [rel for rel in changed if rel not in allowed]
        if stray:
            found.append(f"stray files left: {stray}")
        missing = [p.name for p in inv.must_write if not p.exists()]
        if missing:
            found.append(f"exit 0 without writing {missing}")
    return found


def _clear_message(stderr: str) -> bool:
    """A structanon error line (``error (Kind): what (where)``) or a click usage error,
    with some text saying what is wrong."""
    for line in stderr.splitlines():
        for prefix in ("error (InputError): ", "error (InfeasibleError): ", "Error: "):
            if line.startswith(prefix):
                text = line[len(prefix) :].strip()
                if len(text) > 3 and not text.startswith("("):
                    return True
    return False


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def check(inv: Invocation, root: Path, *, subprocess_run: bool = False) -> Outcome:
    """Run ``inv`` and fail the test with a readable account when it misbehaves."""
    before = snapshot(root)
    input_hashes = {p: _sha256(p) for p in inv.inputs if p.is_file()}
    outcome = run_subprocess(inv.args) if subprocess_run else run_in_process(inv.args)
    found = problems(inv, outcome, root, before, input_hashes)
    rel = [a.replace(str(root) + "/", "") for a in inv.args]
    if os.environ.get("STRUCTANON_FUZZ_LOG"):  # one JSON line per run, for counting and triage
        with open(os.environ["STRUCTANON_FUZZ_LOG"], "a", encoding="utf-8") as log:
            log.write(
                json.dumps(
                    {
                        "args": rel,
                        "input": inv.description,
                        "mode": "subprocess" if subprocess_run else "in-process",
                        "exit": outcome.exit_code,
                        "problems": found,
                        "message": (outcome.stderr.strip().splitlines() or [""])[-1][:300],
                    }
                )
                + "\n"
            )
    if found:
        raise AssertionError(
            "\n".join(
                [
                    "structanon " + " ".join(rel),
                    "input: " + ", ".join(inv.description),
                    *("PROBLEM: " + p for p in found),
                    "--- stderr (tail) ---",
                    outcome.stderr[-3000:],
                    "--- exception ---",
                    outcome.exception[-4000:],
                ]
            )
        )
    return outcome


@pytest.fixture(scope="session")
def fz():
    """This module: the harness above, for the fuzz test modules."""
    seeds()
    return sys.modules[__name__]
