"""Every kind of bad input, once, through every command: the table of docs/bad-input.md.

Each case takes a command's well-formed base invocation, breaks one thing (the file's
content, an option, an output path) and checks the fuzz contract (exit 0/2/3, no traceback,
inputs unchanged, nothing written unless exit 0) plus the exit code the page promises for
that kind of fault.  A few heavy cases (one huge record, k close to the population) run in
a subprocess under the 4 GiB limit.
"""

from __future__ import annotations

import gzip
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.fuzz

REPO = Path(__file__).resolve().parents[2]
HIERARCHIES = REPO / "tabular" / "data"
BINARY = bytes(range(256)) * 3 + b"\x00\xff" * 50


@dataclass
class Base:
    """A command's well-formed invocation; ``{in}``, ``{in2}``, ``{out}`` and ``{h}`` are
    replaced by the input, a second input, the output folder and the hierarchy folder."""

    args: list[str]
    seed: str | None  # seed of the input file (None: no input)
    name: str = "input.txt"  # input file name
    outputs: dict[str, str] = field(default_factory=dict)  # option -> file name in {out}
    header: bool = True
    malformed_line: str = "@@@ this is not a record @@@"
    lines: int = 60  # lines of the seed in the well-formed input


BASES = {
    "tabular anonymize": Base(
        [
            "tabular",
            "anonymize",
            "{in}",
            "--sep",
            ";",
            "--qi",
            "age,sex,race",
            "--hierarchy-dir",
            "{h}",
            "-k",
            "3",
        ],
        "tabular",
        "adult.csv",
        {"-o": "anonymized.csv", "--report": "report.json"},
    ),
    "tabular assess": Base(
        ["tabular", "assess", "{in}", "--sep", ";", "--qi", "age,sex,race"],
        "tabular",
        "adult.csv",
        {"--report": "assessment.json"},
    ),
    "transactions anonymize": Base(
        ["transactions", "anonymize", "{in}", "-k", "3"],
        "fimi",
        "baskets.dat",
        {"-o": "anonymized.dat", "--report": "report.json"},
        header=False,
        malformed_line="[1, 2",
    ),
    "transactions k-anonymize": Base(
        ["transactions", "k-anonymize", "{in}", "-k", "3"],
        "fimi",
        "baskets.dat",
        {"-o": "anonymized.dat", "--report": "report.json"},
        header=False,
        malformed_line="[1, 2",
    ),
    "transactions band": Base(
        ["transactions", "band", "{in}", "--sensitive", "32,36", "-p", "3"],
        "fimi",
        "baskets.dat",
        {"-o": "groups.json", "--report": "report.json"},
        header=False,
        malformed_line="[1, 2",
    ),
    "transactions assess": Base(
        ["transactions", "assess", "{in}"],
        "fimi",
        "baskets.dat",
        {"--report": "assessment.json"},
        header=False,
        malformed_line="[1, 2",
    ),
    "location anonymize": Base(
        [
            "location",
            "anonymize",
            "{in}",
            "-k",
            "2",
            "--user",
            "uid",
            "--time",
            "datetime",
            "--lon",
            "lng",
        ],
        "location",
        "fixes.csv",
        {"-o": "cloaked.csv", "--geojson": "regions.geojson", "--report": "report.json"},
    ),
    "graphs anonymize": Base(
        ["graphs", "anonymize", "{in}", "-k", "3"],
        "edgelist",
        "graph.txt",
        {"-o": "anonymized.edges", "--mapping-out": "mapping.csv", "--report": "report.json"},
        header=False,
        malformed_line="1 x",
    ),
    "graphs assess": Base(
        ["graphs", "assess", "{in}"],
        "edgelist",
        "graph.txt",
        {"--report": "assessment.json"},
        header=False,
        malformed_line="1 x",
    ),
    "location assess": Base(
        ["location", "assess", "{in}", "--user", "uid", "--time", "datetime", "--lon", "lng"],
        "location",
        "fixes.csv",
        {"--report": "assessment.json"},
    ),
    "graphs compare": Base(
        ["graphs", "compare", "{in}", "{in2}"],
        "edgelist",
        "graph.txt",
        header=False,
        malformed_line="1 x",
    ),
    "querylogs anonymize": Base(
        ["querylogs", "anonymize", "{in}", "-k", "3"],
        "aol",
        "log.tsv",
        {"-o": "published.tsv", "--report": "report.json"},
        malformed_line="no tabs on this line",
        lines=10**6,
    ),
    "querylogs assess": Base(
        ["querylogs", "assess", "{in}"],
        "aol",
        "log.tsv",
        {"--report": "assessment.json"},
        malformed_line="no tabs on this line",
        lines=10**6,
    ),
    "querylogs synthesize": Base(
        ["querylogs", "synthesize", "--users", "10", "--lines", "100"],
        None,
        outputs={"-o": "synthetic.tsv"},
    ),
}

ANY = (0, 2, 3)
# content defects whose error must name the file (the others may name a column or option)
FAULTS_IN_THE_FILE = {
    "empty file",
    "header only",
    "blank lines only",
    "every line malformed",
    "binary bytes",
    "gzip bytes under a text name",
    "truncated gzip",
    "UTF-16",
    "latin-1 accents",
    "NUL bytes",
    "invalid UTF-8",
}
DECODED_OR_REFUSED = (0, 2)


def _lines(text: str, n: int = 60) -> list[str]:
    return text.splitlines(keepends=True)[:n]


# name -> (does it apply to this base, what to break, the exit codes the page promises)
def _content(transform):
    def apply(case, base, text):
        case.input_bytes = transform(base, "".join(_lines(text, base.lines)))

    return apply


CONTENT = {
    "empty file": (_content(lambda b, t: b""), (2,)),
    "header only": (_content(lambda b, t: _lines(t)[0].encode()), (2,)),
    "blank lines only": (_content(lambda b, t: b"\n \n\t\n\n"), (2,)),
    "every line malformed": (
        _content(
            lambda b, t: (
                ("".join(_lines(t)[:1]) if b.header else "") + (b.malformed_line + "\n") * 30
            ).encode()
        ),
        (2,),
    ),
    "binary bytes": (_content(lambda b, t: BINARY), (2,)),
    "gzip bytes under a text name": (
        _content(lambda b, t: gzip.compress(t.encode(), mtime=0)),
        DECODED_OR_REFUSED,
    ),
    "truncated gzip": (_content(lambda b, t: gzip.compress(t.encode(), mtime=0)[:120]), (2,)),
    "UTF-16": (_content(lambda b, t: t.encode("utf-16")), DECODED_OR_REFUSED),
    "latin-1 accents": (
        _content(lambda b, t: t.replace("a", "\u00e4").replace("1", "\u00e9").encode("latin-1")),
        DECODED_OR_REFUSED,
    ),
    "NUL bytes": (_content(lambda b, t: t.replace("\n", "\x00\n", 5).encode()), DECODED_OR_REFUSED),
    "invalid UTF-8": (
        _content(lambda b, t: t.encode()[:200] + b"\xff\xfe\x80" + t.encode()[200:]),
        DECODED_OR_REFUSED,
    ),
    "cut in the middle of a line": (_content(lambda b, t: t.encode()[:-7]), DECODED_OR_REFUSED),
    "wrong separator": (
        _content(
            lambda b, t: t.translate(
                str.maketrans({";": "|", ",": "|", "\t": "|", " ": "|"})
            ).encode()
        ),
        DECODED_OR_REFUSED,
    ),
}


def _option(option, value):
    def apply(case, base, text):
        args = case.args
        if option in args:
            args[args.index(option) + 1] = value
        else:
            args.extend([option, value])

    return apply


OPTIONS = {
    "k = -1": ("-k", _option("-k", "-1"), (2,)),
    "k = 0": ("-k", _option("-k", "0"), (2,)),
    "k = 10**30": ("-k", _option("-k", str(10**30)), (2, 3)),
    "m = 1000": ("-m", _option("-m", "1000"), ANY),
    "m = 10**30": ("-m", _option("-m", str(10**30)), (2, 3)),
    "p = 0": ("-p", _option("-p", "0"), (2,)),
    "seed = 2**70": ("--seed", _option("--seed", str(2**70)), ANY),
    "seed = -1": ("--seed", _option("--seed", "-1"), (2,)),
    "lines = 10**30": ("--lines", _option("--lines", str(10**30)), (2,)),
    "cell size = 1e308": ("--cell-size", _option("--cell-size", "1e308"), (2,)),
    "a --qi column named twice": ("--qi", _option("--qi", "age,sex,age"), (0, 2)),
}


def _path(option, where):
    def apply(case, base, text):
        case.outputs[option] = where(case)

    return apply


PATHS = {
    "output is the input": ("-o", _path("-o", lambda c: c.input), (2,)),
    # a missing folder is created (exit 0) unless it cannot be: then exit 2
    "output in a missing folder": (
        "-o",
        _path("-o", lambda c: c.root / "missing" / c.outputs["-o"].name),
        (0, 2),
    ),
    "output under a file": (
        "-o",
        _path("-o", lambda c: c.root / "out" / "existing.txt" / "x.out"),
        (2,),
    ),
    "output is a folder": ("-o", _path("-o", lambda c: c.root / "out"), (2,)),
    "report has a wrong extension": (
        "--report",
        _path("--report", lambda c: c.root / "out" / "report.txt"),
        (2,),
    ),
    "report is the output": ("--report", _path("--report", lambda c: c.outputs["-o"]), (2,)),
    "report in a missing folder": (
        "--report",
        _path("--report", lambda c: c.root / "missing" / "report.json"),
        (0, 2),
    ),
    "report is the input": ("--report", _path("--report", lambda c: c.input), (2,)),
    "side file is the input": ("--geojson|--mapping-out", _path("side", lambda c: c.input), (2,)),
    "side file in a missing folder": (
        "--geojson|--mapping-out",
        _path("side", lambda c: c.root / "missing" / "side.json"),
        (0, 2),
    ),
}


class Case:
    def __init__(self, root: Path, base: Base, text: str) -> None:
        self.root = root
        self.args = list(base.args)
        self.input = root / "in" / base.name
        self.input_bytes = "".join(_lines(text, base.lines)).encode() if base.seed else None
        self.outputs = {option: root / "out" / name for option, name in base.outputs.items()}


def _cases():
    for command, base in BASES.items():
        names = []
        if base.seed:
            names += [(name, "content") for name in CONTENT if name != "header only" or base.header]
        names += [
            (name, "option")
            for name, (option, _, _) in OPTIONS.items()
            if option in base.args
            or (option == "-m" and command in ("transactions anonymize", "transactions assess"))
            or option == "--seed"
            or (option == "--cell-size" and command.startswith("location"))
        ]
        for name, (option, _, _) in PATHS.items():
            side = [o for o in option.split("|") if o in base.outputs]
            needs_input = "input" in name
            needs_output = name in ("report is the output", "output in a missing folder")
            if (
                side
                and (base.seed or not needs_input)
                and ("-o" in base.outputs or not needs_output)
            ):
                names.append((name, "path"))
        for name, kind in names:
            yield pytest.param(command, name, kind, id=f"{command}: {name}")


def _expected(name: str, kind: str) -> tuple[int, ...]:
    if kind == "content":
        return CONTENT[name][1]
    if kind == "option":
        return OPTIONS[name][2]
    return PATHS[name][2]


@pytest.mark.parametrize(("command", "defect", "kind"), list(_cases()))
def test_bad_input(fz, command, defect, kind):
    base = BASES[command]
    text = fz.seeds()[base.seed].text if base.seed else ""
    with fz.workdir() as wd:
        case = Case(wd.root, base, text)
        if kind == "content":
            CONTENT[defect][0](case, base, text)
        elif kind == "option":
            OPTIONS[defect][1](case, base, text)
        else:
            option, apply, _ = PATHS[defect]
            apply(case, base, text)
            if "side" in case.outputs:
                side_option = next(o for o in option.split("|") if o in base.outputs)
                case.outputs[side_option] = case.outputs.pop("side")
        inv = _invocation(fz, wd, base, case)
        outcome = fz.check(inv, wd.root)
        expected = _expected(defect, kind)
        assert outcome.exit_code in expected, (
            f"{command} with {defect}: exit {outcome.exit_code}, expected one of {expected}\n"
            f"{outcome.stderr[-2000:]}"
        )
        if defect in FAULTS_IN_THE_FILE and outcome.exit_code == 2:
            assert base.name in outcome.stderr, (
                f"{command} with {defect}: the error does not name the file\n{outcome.stderr}"
            )


def _invocation(fz, wd, base, case):
    inputs = []
    if case.input_bytes is not None:
        case.input.write_bytes(case.input_bytes)
        inputs.append(case.input)
    second = wd.inputs / f"copy-{base.name}"
    if "{in2}" in case.args:
        second.write_bytes(case.input.read_bytes())
        inputs.append(second)
    hierarchies = wd.inputs / "hierarchies"
    if "{h}" in case.args:
        hierarchies.mkdir()
        for path in HIERARCHIES.glob("adult_hierarchy_*.csv"):
            shutil.copy(path, hierarchies / path.name)
        inputs.extend(sorted(hierarchies.iterdir()))
    replace = {"{in}": str(case.input), "{in2}": str(second), "{h}": str(hierarchies)}
    args = [replace.get(a, a) for a in case.args]
    inv = fz.Invocation(args, inputs=inputs)
    for option, path in case.outputs.items():
        inv.add(option, path)
        inv.outputs.append(path)
        inv.must_write.append(path)
    return inv


HEAVY = {
    "one 20,000-item basket": (
        ["transactions", "anonymize", "{in}", "-k", "3", "-o", "{out}/anonymized.dat"],
        "fimi",
        "baskets.dat",
        lambda t: t + " ".join(map(str, range(20_000))) + "\n",
    ),
    "one 20,000-item basket, k-anonymize": (
        ["transactions", "k-anonymize", "{in}", "-k", "3", "-o", "{out}/anonymized.dat"],
        "fimi",
        "baskets.dat",
        lambda t: t + " ".join(map(str, range(20_000))) + "\n",
    ),
    "m = 1000 on a 300-item basket": (
        [
            "transactions",
            "anonymize",
            "{in}",
            "-k",
            "3",
            "-m",
            "1000",
            "-o",
            "{out}/anonymized.dat",
        ],
        "fimi",
        "baskets.dat",
        lambda t: t + " ".join(map(str, range(300))) + "\n",
    ),
    "graphs: k = n on a small graph": (
        ["graphs", "anonymize", "{in}", "-k", "{n}", "-o", "{out}/anonymized.edges"],
        "edgelist",
        "graph.txt",
        lambda t: "".join(_lines(t, 300)),
    ),
    "querylogs: k above half the users": (
        ["querylogs", "anonymize", "{in}", "-k", "{n}", "-o", "{out}/published.tsv"],
        "aol",
        "log.tsv",
        lambda t: t,
    ),
    "location: one user with a 100,000-character id": (
        [
            "location",
            "anonymize",
            "{in}",
            "-k",
            "2",
            "--user",
            "uid",
            "--time",
            "datetime",
            "--lon",
            "lng",
            "-o",
            "{out}/cloaked.csv",
        ],
        "location",
        "fixes.csv",
        lambda t: "".join(_lines(t, 80)) + "x" * 100_000 + ",2008-10-23 02:53:04,39.98,116.31\n",
    ),
}


def _population(name: str, text: str) -> int:
    if name.startswith("graphs"):
        return len({node for line in text.splitlines() for node in line.split()}) - 1
    users = {line.split("\t")[0] for line in text.splitlines()[1:] if line.strip()}
    return len(users) // 2 + 2


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HEAVY))
def test_heavy_input_in_a_subprocess(fz, name):
    args, seed, file_name, make = HEAVY[name]
    with fz.workdir() as wd:
        text = make(fz.seeds()[seed].text)
        path = wd.write_input(file_name, text.encode())
        replace = {"{in}": str(path), "{n}": str(_population(name, text))}
        args = [replace.get(a, a).replace("{out}", str(wd.out)) for a in args]
        inv = fz.Invocation(
            args, inputs=[path], outputs=[Path(a) for a in args if a.startswith(str(wd.out))]
        )
        inv.note(name)
        fz.check(inv, wd.root, subprocess_run=True)
