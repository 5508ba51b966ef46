"""Fuzz every command of the five data types with generated files, options and paths.

Each builder draws one invocation of its command: an input derived from the package's
bundled sample (cut, re-encoded, re-separated, corrupted, or replaced by random bytes),
option values around and beyond their valid ranges, and output paths that are good, in
missing or read-only folders, folders themselves, the input itself, or carry the wrong
extension.  ``fz.check`` then asserts the contract of docs/bad-input.md: exit 0, 2 or 3, no
traceback, every input unchanged, nothing written unless the command succeeded.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.fuzz

FUZZ = settings.get_profile("fuzz")
FUZZ_SUBPROCESS = settings.get_profile("fuzz-subprocess")

REPO = Path(__file__).resolve().parents[2]
ADULT_COLUMNS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]
ADULT_HIERARCHIES = REPO / "tabular" / "data"


def _choice(data, values, label):
    return data.draw(st.sampled_from(values), label=label)


def _input(fz, data, plan, wd, seed_name, names, big):
    """Write the main input: a clean prefix of the seed under its usual name, or (content at
    fault) a mutated one under any of ``names``."""
    seed = fz.seeds()[seed_name]
    if plan.bad("content"):
        raw, kind = fz.content(data, seed, max_long=20_000 if big else 400)
        name = _choice(data, names, "input name")
        if name.endswith(".gz") and not kind.endswith("gzip") and data.draw(st.booleans()):
            raw = fz.gzip.compress(raw, mtime=0)
    else:
        raw, kind = fz.content(data, seed, kinds=["prefix"])
        name = names[0]
    path = wd.write_input(name, raw)
    return path, f"{name}: {kind} ({len(raw):,} bytes)"


def _report(fz, data, plan, wd, inv, others, extensions=(".json", ".html")):
    bad = [".pdf", ".csv", ".htm", ""] if plan.bad("paths") else []
    return wd.output(
        data, plan, inv, "--report", "report", list(extensions) + bad, required=False, others=others
    )


def _key_file(fz, data, plan, wd, inv):
    kinds = ["absent", "absent", "hex", "text"]
    if plan.bad("options"):
        kinds += ["short", "empty", "binary", "missing", "folder"]
    kind = _choice(data, kinds, "--key-file kind")
    if kind == "absent":
        return
    path = {
        "hex": lambda: wd.write_input("key.hex", b"ab" * 32 + b"\n"),
        "text": lambda: wd.write_input("key.txt", b"a long enough secret passphrase"),
        "short": lambda: wd.write_input("key.txt", b"short"),
        "empty": lambda: wd.write_input("key.txt", b""),
        "binary": lambda: wd.write_input("key.bin", data.draw(st.binary(max_size=64))),
        "missing": lambda: wd.inputs / "no-such-key",
        "folder": lambda: wd.inputs,
    }[kind]()
    inv.add("--key-file", path)
    if path.is_file():
        inv.inputs.append(path)
    inv.note(f"--key-file={kind}")


def _shared_options(fz, data, plan, wd, inv):
    """Options every anonymize command shares, when this one has them: a key file and a switch
    that skips the utility and risk measures."""
    options = fz.command_options(inv.args[0], inv.args[1])
    if "--key-file" in options and "--key-file" not in inv.args:
        _key_file(fz, data, plan, wd, inv)
    if "--no-measures" in options and fz.maybe(data, "--no-measures", 3):
        inv.add("--no-measures")


def _assessment_options(fz, data, plan, wd, inv):
    """--json and --report, which every assess command shares."""
    if fz.maybe(data, "--json", 3):
        inv.add("--json")
    _report(fz, data, plan, wd, inv, [], [".json"])


def _seed_option(fz, data, plan, inv):
    if fz.maybe(data, "--seed", 4):
        inv.add("--seed", fz.int_option(data, plan, [0, 1, 7], "--seed"))


def _encoding(fz, data, plan, inv):
    """``--encoding``, one option in every command that reads text."""
    if fz.maybe(data, "--encoding", 4):
        inv.add(
            "--encoding",
            fz.choice_option(
                data, plan, ["utf-8", "latin-1", "cp1252"], ["latin-9x", "base64", ""], "--encoding"
            ),
        )


def _on_bad_lines(fz, data, plan, inv, former=()):
    """``--on-bad-lines``, one option where a reader can drop bad lines; ``former``: the
    command's former values, still accepted."""
    if fz.maybe(data, "--on-bad-lines", 3):
        inv.add(
            "--on-bad-lines",
            fz.choice_option(
                data, plan, ["raise", "drop", *former], ["warn", "ignore"], "--on-bad-lines"
            ),
        )


# --------------------------------------------------------------------------------- tabular


def _hierarchies(fz, data, plan, wd, inv):
    folder = wd.inputs / "hierarchies"
    folder.mkdir()
    for path in ADULT_HIERARCHIES.glob("adult_hierarchy_*.csv"):
        shutil.copy(path, folder / path.name)
    if plan.bad("content") and fz.maybe(data, "corrupt the age hierarchy", 3):
        raw, kind = fz.content(data, fz.seeds()["hierarchy"])
        (folder / "adult_hierarchy_age.csv").write_bytes(raw)
        inv.note(f"age hierarchy: {kind}")
    inv.inputs.extend(sorted(folder.iterdir()))
    how = fz.choice_option(
        data,
        plan,
        ["dir", "dir", "files"],
        ["missing-dir", "file-as-dir", "none", "malformed"],
        "hierarchies",
    )
    inv.note(f"hierarchies={how}")
    if how == "dir":
        inv.add("--hierarchy-dir", folder)
    elif how in ("files", "malformed"):
        for column in ["age", "sex", "race", "workclass"]:
            value = f"{column}={folder / f'adult_hierarchy_{column}.csv'}"
            if how == "malformed" and fz.maybe(data, "malformed --hierarchy", 2):
                value = _choice(
                    data,
                    [
                        column,
                        f"={folder}",
                        f"{column}=",
                        f"{column}={folder}",
                        f"bogus={folder / 'adult_hierarchy_age.csv'}",
                    ],
                    "malformed --hierarchy",
                )
            inv.add("--hierarchy", value)
    elif how == "missing-dir":
        inv.add("--hierarchy-dir", wd.root / "no-such-folder")
    elif how == "file-as-dir":
        inv.add("--hierarchy-dir", folder / "adult_hierarchy_age.csv")
    if plan.bad("options") and fz.maybe(data, "--hierarchy-sep", 5):
        inv.add("--hierarchy-sep", _choice(data, [",", "", ";;", "\t"], "--hierarchy-sep"))


def _qi(fz, data, plan, inv):
    good = ["age,sex,race", "sex,race", "age,sex,race,workclass", "age"]
    if plan.bad("options") and fz.maybe(data, "bad --qi", 2):
        names = data.draw(
            st.lists(st.sampled_from(ADULT_COLUMNS[:7] + ["bogus", "", " ", "age"]), max_size=4),
            label="--qi names",
        )
        inv.add("--qi", ",".join(names))
    else:
        inv.add("--qi", _choice(data, good, "--qi"))


def _sep(fz, data, plan, inv, default):
    sep = fz.choice_option(data, plan, [default], [None, ",", "\t", "", ";;", "|"], "--sep")
    if sep is not None:
        inv.add("--sep", sep)
    _encoding(fz, data, plan, inv)


def tabular_anonymize(fz, data, plan, wd, big):
    path, what = _input(
        fz,
        data,
        plan,
        wd,
        "tabular",
        ["adult.csv", "adult.tsv", "adult.txt", "adult", "adult.csv.gz"],
        big,
    )
    inv = fz.Invocation(["tabular", "anonymize", str(path)], inputs=[path])
    inv.note(what)
    _sep(fz, data, plan, inv, ";")
    _qi(fz, data, plan, inv)
    _hierarchies(fz, data, plan, wd, inv)
    algorithm = fz.choice_option(
        data, plan, ["optimal", "mondrian", "datafly"], ["magic"], "--algorithm"
    )
    inv.add("--algorithm", algorithm)
    if algorithm == "mondrian" and fz.maybe(data, "--numeric", 2):
        inv.add(
            "--numeric",
            fz.choice_option(data, plan, ["age"], ["sex", "bogus", "age,age"], "--numeric"),
        )
    if algorithm == "mondrian" and fz.maybe(data, "--set-qi", 4):
        inv.add("--set-qi", fz.choice_option(data, plan, ["race"], ["age", "bogus"], "--set-qi"))
    if not fz.maybe(data, "no -k", 5):
        inv.add("-k", fz.int_option(data, plan, [2, 3, 5], "-k"))
    if fz.maybe(data, "--sensitive", 3):
        inv.add(
            "--sensitive",
            fz.choice_option(
                data, plan, ["occupation", "salary-class"], ["bogus", "age"], "--sensitive"
            ),
        )
        if fz.maybe(data, "--l-diversity", 3):
            inv.add("--l-diversity", fz.float_option(data, plan, [2, 3], "--l-diversity"))
            inv.add(
                "--l-variant", _choice(data, ["distinct", "entropy", "recursive"], "--l-variant")
            )
            if fz.maybe(data, "--c", 2):
                inv.add("--c", fz.float_option(data, plan, [2, 3], "--c"))
        if fz.maybe(data, "--t-closeness", 4):
            inv.add("--t-closeness", fz.float_option(data, plan, [0.3, 0.6], "--t-closeness"))
            inv.add(
                "--t-distance",
                fz.choice_option(
                    data, plan, ["equal", "ordered"], ["hierarchical"], "--t-distance"
                ),
            )
    if fz.maybe(data, "--suppression-limit", 3):
        inv.add(
            "--suppression-limit", fz.float_option(data, plan, [0.0, 0.05], "--suppression-limit")
        )
    if algorithm == "optimal" and fz.maybe(data, "--metric", 4):
        inv.add(
            "--metric", _choice(data, ["discernibility", "loss", "precision", "height"], "--metric")
        )
    if fz.maybe(data, "--identifier", 6):
        inv.add(
            "--identifier",
            fz.choice_option(data, plan, ["occupation"], ["bogus", "age"], "--identifier"),
        )
        if fz.maybe(data, "--drop-identifiers", 2):
            inv.add("--drop-identifiers")
        _key_file(fz, data, plan, wd, inv)
    if algorithm != "mondrian" and fz.maybe(data, "--local-suppression", 6):
        inv.add("--local-suppression")
    _seed_option(fz, data, plan, inv)
    _shared_options(fz, data, plan, wd, inv)
    out = wd.output(
        data, plan, inv, "-o", "anonymized", [".csv", ".tsv", ".parquet"], required=True
    )
    _report(fz, data, plan, wd, inv, [out])
    if fz.maybe(data, "--quiet", 3):
        inv.add("--quiet")
    return inv


def tabular_assess(fz, data, plan, wd, big):
    path, what = _input(fz, data, plan, wd, "tabular", ["adult.csv", "adult.tsv", "adult"], big)
    inv = fz.Invocation(["tabular", "assess", str(path)], inputs=[path])
    inv.note(what)
    _sep(fz, data, plan, inv, ";")
    _qi(fz, data, plan, inv)
    if fz.maybe(data, "--sensitive", 3):
        inv.add(
            "--sensitive",
            fz.choice_option(data, plan, ["occupation"], ["bogus", "age"], "--sensitive"),
        )
    if fz.maybe(data, "--threshold", 3):
        inv.add("--threshold", fz.float_option(data, plan, [0.2, 0.5], "--threshold"))
    _report(fz, data, plan, wd, inv, [], [".json"])
    return inv


def _scheme(command, options, outputs=(".csv", ".tsv"), release=True):
    """A builder for a ``tabular`` command that reads the sample table and writes one table:
    ``options(fz, data, plan, wd, inv)`` adds the command's own options."""

    def build(fz, data, plan, wd, big):
        path, what = _input(fz, data, plan, wd, "tabular", ["adult.csv", "adult.tsv", "adult"], big)
        inv = fz.Invocation(["tabular", command, str(path)], inputs=[path])
        inv.note(what)
        _sep(fz, data, plan, inv, ";")
        out = wd.output(data, plan, inv, "-o", "published", list(outputs), required=release)
        options(fz, data, plan, wd, inv, out)
        if release:
            _seed_option(fz, data, plan, inv)
            _shared_options(fz, data, plan, wd, inv)
            _report(fz, data, plan, wd, inv, [out])
            if fz.maybe(data, "--quiet", 3):
                inv.add("--quiet")
        return inv

    build.__name__ = f"tabular_{command.replace('-', '_')}"
    return build


def _columns(fz, data, plan, inv, option, good, bad=("bogus", "", "age,age", "sex")):
    inv.add(option, fz.choice_option(data, plan, list(good), list(bad), option))


def _anatomize_options(fz, data, plan, wd, inv, out):
    _columns(fz, data, plan, inv, "--qi", ["age,sex", "age,sex,race"], ["bogus", "", "age,age"])
    _columns(fz, data, plan, inv, "--sensitive", ["occupation"], ["bogus", "age", ""])
    inv.add("-l", fz.int_option(data, plan, [2, 3], "-l"))
    wd.output(
        data, plan, inv, "--sensitive-output", "sensitive", [".csv"], required=False, others=[out]
    )


def _slice_options(fz, data, plan, wd, inv, out):
    _columns(fz, data, plan, inv, "--qi", ["age,sex,race,education"], ["bogus", "", "age,age"])
    _columns(fz, data, plan, inv, "--sensitive", ["occupation"], ["bogus", "age"])
    inv.add("-l", fz.int_option(data, plan, [2, 3], "-l"))
    how = _choice(data, ["auto", "n", "columns", "size"], "slice columns")
    if how == "n":
        inv.add("--n-columns", fz.int_option(data, plan, [2, 3], "--n-columns"))
    elif how == "columns":
        inv.add(
            "--columns",
            fz.choice_option(
                data,
                plan,
                ["age,sex;race,education,occupation", "age,race;sex,education,occupation"],
                ["age;sex", "bogus;age", ";", "age,sex;age,race,education,occupation"],
                "--columns",
            ),
        )
    elif how == "size":
        inv.add("--sensitive-size", fz.int_option(data, plan, [1, 2], "--sensitive-size"))


def _microaggregate_options(fz, data, plan, wd, inv, out):
    _columns(fz, data, plan, inv, "--columns", ["age"])
    inv.add("-k", fz.int_option(data, plan, [2, 3, 5], "-k"))
    method = fz.choice_option(data, plan, ["mdav", "mdav-generic"], ["magic"], "--method")
    inv.add("--method", method)
    if method == "mdav-generic" or plan.bad("options"):
        if fz.maybe(data, "--nominal", 2):
            _columns(fz, data, plan, inv, "--nominal", ["sex", "sex,race"])
        if fz.maybe(data, "--ordinal", 2):
            _columns(fz, data, plan, inv, "--ordinal", ["education"])
    if fz.maybe(data, "--block-size", 4):
        inv.add(
            "--block-size",
            fz.choice_option(data, plan, ["auto", "20"], ["0", "x", "-5"], "--block-size"),
        )


def _noise_options(fz, data, plan, wd, inv, out):
    _columns(fz, data, plan, inv, "--columns", ["age"])
    inv.add("--alpha", fz.float_option(data, plan, [0.1, 0.5], "--alpha"))
    if fz.maybe(data, "--method", 2):
        inv.add(
            "--method",
            fz.choice_option(
                data, plan, ["uncorrelated", "correlated", "kim"], ["magic"], "--method"
            ),
        )


def _rank_swap_options(fz, data, plan, wd, inv, out):
    _columns(fz, data, plan, inv, "--columns", ["age"])
    inv.add("-p", fz.float_option(data, plan, [5, 10], "-p"))


def _pram_options(fz, data, plan, wd, inv, out):
    _columns(fz, data, plan, inv, "--columns", ["sex", "sex,race"], ["bogus", "", "sex,sex"])
    if fz.maybe(data, "--keep", 2):
        inv.add("--keep", fz.float_option(data, plan, [0.7, 0.9], "--keep"))
    if fz.maybe(data, "--not-invariant", 3):
        inv.add("--not-invariant")


def _recode_options(fz, data, plan, wd, inv, out):
    bad = ["age", "age=", "=5", "bogus=5", "age=x", "sex=5", "age=nan"]
    if fz.maybe(data, "--top", 2):
        inv.add("--top", fz.choice_option(data, plan, ["age=60"], bad, "--top"))
    if fz.maybe(data, "--bottom", 2):
        inv.add("--bottom", fz.choice_option(data, plan, ["age=20"], bad, "--bottom"))
    if fz.maybe(data, "--recode", 2):
        inv.add(
            "--recode",
            fz.choice_option(
                data,
                plan,
                ["education:Masters=tertiary"],
                ["education", "bogus:a=b", "education:=x", ":a=b", "education:Masters"],
                "--recode",
            ),
        )
    if fz.maybe(data, "--sample", 2) or "--top" not in inv.args:
        inv.add("--sample", fz.float_option(data, plan, [0.5, 0.9], "--sample"))


def _safepub_options(fz, data, plan, wd, inv, out):
    _qi(fz, data, plan, inv)
    _hierarchies(fz, data, plan, wd, inv)
    inv.add("--epsilon", fz.float_option(data, plan, [1, 2], "--epsilon"))
    if fz.maybe(data, "--delta", 3):
        inv.add("--delta", fz.float_option(data, plan, [1e-5, 1e-4], "--delta"))
    if fz.maybe(data, "--search-share", 4):
        inv.add("--search-share", fz.float_option(data, plan, [0.1, 0.2], "--search-share"))


def _dp_counts_options(fz, data, plan, wd, inv, out):
    _columns(fz, data, plan, inv, "--column", ["sex", "race"], ["bogus", ""])
    if "sex" in inv.args:
        categories = ["Male,Female", "Female,Male,Other"]
    else:
        categories = ["White,Black,Other"]
    inv.add(
        "--categories",
        fz.choice_option(data, plan, categories, ["", ",", "Male,Male"], "--categories"),
    )
    inv.add("--epsilon", fz.float_option(data, plan, [0.5, 1], "--epsilon"))


tabular_anatomize = _scheme("anatomize", _anatomize_options)
tabular_slice = _scheme("slice", _slice_options)
tabular_microaggregate = _scheme("microaggregate", _microaggregate_options)
tabular_noise = _scheme("noise", _noise_options)
tabular_rank_swap = _scheme("rank-swap", _rank_swap_options)
tabular_pram = _scheme("pram", _pram_options)
tabular_recode = _scheme("recode", _recode_options)
tabular_safepub = _scheme("safepub", _safepub_options)
tabular_dp_counts = _scheme("dp-counts", _dp_counts_options, outputs=(".csv",), release=False)


# ---------------------------------------------------------------------------- transactions

TX_INPUTS = {
    "fimi": ["baskets.dat", "baskets.txt", "baskets", "baskets.dat.gz", "baskets.csv"],
    "tx-csv": ["baskets.csv", "baskets.tsv", "baskets.dat"],
    "jsonl": ["baskets.jsonl", "baskets.json", "baskets.dat"],
}


def _transactions_input(fz, data, plan, wd, args, big):
    seed = _choice(data, ["fimi", "fimi", "tx-csv", "jsonl"], "format")
    path, what = _input(fz, data, plan, wd, seed, TX_INPUTS[seed], big)
    inv = fz.Invocation([*args, str(path)], inputs=[path])
    inv.note(what)
    if fz.maybe(data, "--format", 4):
        good = {"fimi": "fimi", "tx-csv": "csv", "jsonl": "jsonl"}[seed]
        inv.add(
            "--format",
            fz.choice_option(data, plan, [good], ["fimi", "csv", "jsonl", "xml"], "--format"),
        )
    _encoding(fz, data, plan, inv)
    return inv


def _taxonomy(fz, data, plan, wd, inv):
    kinds = ["absent", "absent", "absent", "json", "arx"]
    if plan.bad("options") or plan.bad("content"):
        kinds += ["bad-json", "list-json", "folder", "missing", "binary", "empty"]
    kind = _choice(data, kinds, "--hierarchy kind")
    if kind == "absent":
        return False
    items = [str(i) for i in range(0, 120)]
    tree = {"low": items[:60], "high": {"mid": items[60:90], "top": items[90:]}}
    path = {
        "json": lambda: wd.write_input("taxonomy.json", json.dumps(tree).encode()),
        "bad-json": lambda: wd.write_input("taxonomy.json", b'{"a": [1, 2'),
        "list-json": lambda: wd.write_input("taxonomy.json", b"[1, 2, 3]"),
        "empty": lambda: wd.write_input("taxonomy.csv", b""),
        "arx": lambda: wd.write_input(
            "taxonomy.csv", "".join(f"{i};{int(i) // 10}x;*\n" for i in items).encode()
        ),
        "folder": lambda: wd.inputs,
        "missing": lambda: wd.inputs / "no-such-taxonomy.json",
        "binary": lambda: wd.write_input("taxonomy.json", data.draw(st.binary(max_size=64))),
    }[kind]()
    inv.add("--hierarchy", path)
    if path.is_file():
        inv.inputs.append(path)
    inv.note(f"--hierarchy={kind}")
    return True


TX_OUTPUTS = [".dat", ".csv", ".jsonl", ".dat.gz"]


def transactions_anonymize(fz, data, plan, wd, big):
    inv = _transactions_input(fz, data, plan, wd, ["transactions", "anonymize"], big)
    inv.add("-k", fz.int_option(data, plan, [2, 3, 5], "-k"))
    if fz.maybe(data, "-m", 2):
        inv.add("-m", fz.int_option(data, plan, [1, 2, 3], "-m"))
    taxonomy = _taxonomy(fz, data, plan, wd, inv)
    if fz.maybe(data, "--method", 3):
        inv.add(
            "--method", fz.choice_option(data, plan, ["apriori", "local"], ["greedy"], "--method")
        )
    if (not taxonomy or plan.bad("options")) and fz.maybe(data, "--fanout", 3):
        inv.add("--fanout", fz.int_option(data, plan, [2, 5, 10], "--fanout"))
    if fz.maybe(data, "--order", 4):
        inv.add("--order", fz.choice_option(data, plan, ["id", "frequency"], ["random"], "--order"))
    _seed_option(fz, data, plan, inv)
    _shared_options(fz, data, plan, wd, inv)
    out = wd.output(data, plan, inv, "-o", "anonymized", TX_OUTPUTS, required=True)
    _report(fz, data, plan, wd, inv, [out])
    return inv


def transactions_k_anonymize(fz, data, plan, wd, big):
    inv = _transactions_input(fz, data, plan, wd, ["transactions", "k-anonymize"], big)
    inv.add("-k", fz.int_option(data, plan, [2, 3, 5], "-k"))
    taxonomy = _taxonomy(fz, data, plan, wd, inv)
    if (not taxonomy or plan.bad("options")) and fz.maybe(data, "--fanout", 3):
        inv.add("--fanout", fz.int_option(data, plan, [2, 5, 10], "--fanout"))
    _seed_option(fz, data, plan, inv)
    _shared_options(fz, data, plan, wd, inv)
    out = wd.output(data, plan, inv, "-o", "anonymized", TX_OUTPUTS, required=True)
    _report(fz, data, plan, wd, inv, [out])
    return inv


def transactions_disassociate(fz, data, plan, wd, big):
    inv = _transactions_input(fz, data, plan, wd, ["transactions", "disassociate"], big)
    inv.add("-k", fz.int_option(data, plan, [2, 3, 5], "-k"))
    if fz.maybe(data, "-m", 2):
        inv.add("-m", fz.int_option(data, plan, [1, 2, 3], "-m"))
    if fz.maybe(data, "--max-cluster-size", 4):
        inv.add("--max-cluster-size", fz.int_option(data, plan, [20, 100], "--max-cluster-size"))
    if fz.maybe(data, "--max-basket-size", 5):
        inv.add("--max-basket-size", fz.int_option(data, plan, [50, 500], "--max-basket-size"))
    _seed_option(fz, data, plan, inv)
    _shared_options(fz, data, plan, wd, inv)
    out = wd.output(data, plan, inv, "-o", "anonymized", [".json", ".txt"], required=True)
    _report(fz, data, plan, wd, inv, [out])
    return inv


def transactions_band(fz, data, plan, wd, big):
    inv = _transactions_input(fz, data, plan, wd, ["transactions", "band"], big)
    kind = fz.choice_option(
        data,
        plan,
        ["items", "items", "file"],
        ["absent-items", "empty", "bad-file", "missing-file"],
        "--sensitive kind",
    )
    if kind == "items":
        value = ",".join(
            data.draw(
                st.lists(
                    st.sampled_from(["39", "41", "48", "38", "32"]),
                    min_size=1,
                    max_size=3,
                    unique=True,
                ),
                label="items",
            )
        )
    elif kind == "absent-items":
        value = _choice(data, ["999999", "zzz", "39,999999", " , "], "absent items")
    elif kind == "empty":
        value = ""
    elif kind == "missing-file":
        value = f"@{wd.inputs / 'no-such-items.txt'}"
    else:
        raw = b"39\n41\n" if kind == "file" else fz.content(data, fz.seeds()["fimi"])[0]
        items = wd.write_input("sensitive.txt", raw)
        inv.inputs.append(items)
        value = f"@{items}"
    inv.add("--sensitive", value)
    inv.note(f"--sensitive={kind}")
    inv.add("-p", fz.int_option(data, plan, [2, 3], "-p"))
    if fz.maybe(data, "--alpha", 3):
        inv.add("--alpha", fz.int_option(data, plan, [1, 3], "--alpha"))
    _seed_option(fz, data, plan, inv)
    _shared_options(fz, data, plan, wd, inv)
    out = wd.output(data, plan, inv, "-o", "groups", [".json"], required=True)
    _report(fz, data, plan, wd, inv, [out])
    return inv


def transactions_assess(fz, data, plan, wd, big):
    inv = _transactions_input(fz, data, plan, wd, ["transactions", "assess"], big)
    _assessment_options(fz, data, plan, wd, inv)
    if fz.maybe(data, "-k", 2):
        inv.add("-k", fz.int_option(data, plan, [2, 10], "-k"))
    if fz.maybe(data, "-m", 2):
        inv.add("-m", fz.int_option(data, plan, [1, 2, 3], "-m"))
    _seed_option(fz, data, plan, inv)
    return inv


# -------------------------------------------------------------------------------- location


def _location_columns(fz, data, plan, inv):
    columns = {"--user": "uid", "--time": "datetime", "--lat": "lat", "--lon": "lng"}
    if plan.bad("options") and fz.maybe(data, "wrong column names", 3):
        option = _choice(data, sorted(columns), "wrong column")
        columns[option] = _choice(data, ["lat", "bogus", "", "uid", "lng"], "wrong name")
        if fz.maybe(data, "default column names", 3):
            columns = {}
    for option, name in columns.items():
        inv.add(option, name)


def _location_input(fz, data, plan, wd, command, big):
    path, what = _input(
        fz,
        data,
        plan,
        wd,
        "location",
        ["fixes.csv", "fixes.csv.gz", "fixes.tsv", "fixes.parquet", "fixes"],
        big,
    )
    inv = fz.Invocation(["location", command, str(path)], inputs=[path])
    inv.note(what)
    _location_columns(fz, data, plan, inv)
    _encoding(fz, data, plan, inv)
    _on_bad_lines(fz, data, plan, inv)
    return inv


def location_assess(fz, data, plan, wd, big):
    inv = _location_input(fz, data, plan, wd, "assess", big)
    if fz.maybe(data, "--window", 2):
        inv.add(
            "--window",
            fz.choice_option(
                data, plan, ["15min", "1h", "1D"], ["0min", "-5min", "abc", "", "NaT"], "--window"
            ),
        )
    if fz.maybe(data, "--cell-size", 3):
        inv.add("--cell-size", fz.float_option(data, plan, [100, 500], "--cell-size"))
    if fz.maybe(data, "--drop-invalid", 3):
        inv.add("--drop-invalid")
    _seed_option(fz, data, plan, inv)
    _assessment_options(fz, data, plan, wd, inv)
    return inv


def location_anonymize(fz, data, plan, wd, big):
    inv = _location_input(fz, data, plan, wd, "anonymize", big)
    inv.add("-k", fz.int_option(data, plan, [2, 3], "-k"))
    if fz.maybe(data, "--window", 2):
        inv.add(
            "--window",
            fz.choice_option(
                data,
                plan,
                ["15min", "1h", "1D"],
                ["0min", "-5min", "abc", "", "1000000D", "1ns", "NaT", "15"],
                "--window",
            ),
        )
    if fz.maybe(data, "--method", 2):
        inv.add(
            "--method",
            fz.choice_option(data, plan, ["fixed", "adaptive"], ["quadtree"], "--method"),
        )
    if fz.maybe(data, "--cell-size", 3):
        inv.add("--cell-size", fz.float_option(data, plan, [100, 500, 5000], "--cell-size"))
    if fz.maybe(data, "--levels", 4):
        inv.add("--levels", fz.int_option(data, plan, [0, 2, 5], "--levels"))
    if fz.maybe(data, "--drop-invalid", 3):
        inv.add("--drop-invalid")
    _key_file(fz, data, plan, wd, inv)
    _seed_option(fz, data, plan, inv)
    _shared_options(fz, data, plan, wd, inv)
    out = wd.output(
        data, plan, inv, "-o", "cloaked", [".csv", ".csv.gz", ".tsv", ".parquet"], required=True
    )
    geojson = wd.output(
        data, plan, inv, "--geojson", "regions", [".geojson"], required=False, others=[out]
    )
    _report(fz, data, plan, wd, inv, [p for p in (out, geojson) if p is not None])
    if fz.maybe(data, "--quiet", 3):
        inv.add("--quiet")
    return inv


# ---------------------------------------------------------------------------------- graphs

GRAPH_INPUTS = {
    "edgelist": ["graph.txt", "graph.edges", "graph.tsv", "graph.txt.gz", "graph"],
    "graph-csv": ["graph.csv", "graph.txt"],
    "graph-graphml": ["graph.graphml", "graph.xml"],
    "graph-gexf": ["graph.gexf", "graph.xml"],
    "graph-json": ["graph.json", "graph.json.gz"],
}
GRAPH_FORMATS = ["edgelist", "csv", "graphml", "gexf", "json"]


def _graph_input(fz, data, plan, wd, big, prefix=""):
    seed = _choice(
        data,
        [
            "edgelist",
            "edgelist",
            "edgelist",
            "graph-csv",
            "graph-graphml",
            "graph-gexf",
            "graph-json",
        ],
        "graph format",
    )
    names = [prefix + name for name in GRAPH_INPUTS[seed]]
    path, what = _input(fz, data, plan, wd, seed, names, big)
    return path, what, seed


def _graph_format(fz, data, plan, inv, seed, option="--format"):
    if fz.maybe(data, option, 4):
        good = {
            "edgelist": "edgelist",
            "graph-csv": "csv",
            "graph-graphml": "graphml",
            "graph-gexf": "gexf",
            "graph-json": "json",
        }[seed]
        inv.add(option, fz.choice_option(data, plan, [good], GRAPH_FORMATS + ["pajek"], option))


def graphs_anonymize(fz, data, plan, wd, big):
    path, what, seed = _graph_input(fz, data, plan, wd, big)
    inv = fz.Invocation(["graphs", "anonymize", str(path)], inputs=[path])
    inv.note(what)
    inv.add("-k", fz.int_option(data, plan, [2, 3, 5], "-k"))
    _graph_format(fz, data, plan, inv, seed)
    _encoding(fz, data, plan, inv)
    if fz.maybe(data, "--method", 3):
        inv.add("--method", fz.choice_option(data, plan, ["dp", "greedy"], ["exact"], "--method"))
    if fz.maybe(data, "--construct", 3):
        inv.add(
            "--construct",
            fz.choice_option(data, plan, ["supergraph", "swap", "probing"], ["x"], "--construct"),
        )
    for flag in ("--no-relabel", "--as-undirected"):
        if fz.maybe(data, flag, 5):
            inv.add(flag)
    keep = seed != "edgelist" and fz.maybe(data, "--keep-attr", 5)
    if keep:
        inv.add(
            "--keep-attr", fz.choice_option(data, plan, ["group"], ["bogus", ""], "--keep-attr")
        )
    if fz.maybe(data, "--utility", 2):
        inv.add("--utility", _choice(data, ["auto", "fast", "full", "none"], "--utility"))
    _seed_option(fz, data, plan, inv)
    _shared_options(fz, data, plan, wd, inv)
    # an edge list or CSV holds no node attribute: with --keep-attr it is an option at fault
    plain = [] if keep and not plan.bad("options") else [".edges", ".txt", ".csv"]
    out_ext = _choice(data, [*plain, ".graphml", ".gexf", ".json"], "-o ext")
    out = wd.output(data, plan, inv, "-o", "anonymized", [out_ext], required=True)
    if fz.maybe(data, "--out-format", 4):
        fmt = {".edges": "edgelist", ".txt": "edgelist", ".csv": "csv"}.get(out_ext, out_ext[1:])
        inv.add(
            "--out-format",
            fz.choice_option(data, plan, [fmt], GRAPH_FORMATS + ["pajek"], "--out-format"),
        )
    mapping = wd.output(
        data, plan, inv, "--mapping-out", "mapping", [".csv"], required=False, others=[out]
    )
    _report(fz, data, plan, wd, inv, [p for p in (out, mapping) if p is not None])
    return inv


def graphs_assess(fz, data, plan, wd, big):
    path, what, seed = _graph_input(fz, data, plan, wd, big)
    inv = fz.Invocation(["graphs", "assess", str(path)], inputs=[path])
    _assessment_options(fz, data, plan, wd, inv)
    inv.note(what)
    _graph_format(fz, data, plan, inv, seed)
    _encoding(fz, data, plan, inv)
    if fz.maybe(data, "--as-undirected", 4):
        inv.add("--as-undirected")
    return inv


def graphs_compare(fz, data, plan, wd, big):
    original, what, _seed = _graph_input(fz, data, plan, wd, big, "original-")
    how = fz.choice_option(data, plan, ["copy"], ["fuzzed", "same-path", "missing"], "anonymized")
    if plan.bad("content") and how == "copy" and fz.maybe(data, "fuzz the second graph", 2):
        how = "fuzzed"
    if how == "copy":
        anonymized = wd.write_input(
            "anonymized" + original.name[len("original") :], original.read_bytes()
        )
    elif how == "fuzzed":
        anonymized, other, _seed = _graph_input(fz, data, plan, wd, big, "anonymized-")
        what += f"; anonymized {other}"
    elif how == "same-path":
        anonymized = original
    else:
        anonymized = wd.inputs / "no-such-graph.txt"
    inv = fz.Invocation(
        ["graphs", "compare", str(original), str(anonymized)], inputs=[original, anonymized]
    )
    inv.note(what + f"; anonymized={how}")
    if fz.maybe(data, "--level", 2):
        inv.add("--level", fz.choice_option(data, plan, ["fast", "full"], ["none"], "--level"))
    _seed_option(fz, data, plan, inv)
    _encoding(fz, data, plan, inv)
    return inv


# ------------------------------------------------------------------------------- querylogs

LOG_INPUTS = ["log.tsv", "log.txt", "log.tsv.gz", "log.csv", "log.parquet", "log"]
AOL_COLUMNS = "user=AnonID,query=Query,time=QueryTime,url=ClickURL"


def _log_format(fz, data, plan, inv, sep=True):
    fmt = "aol"
    if fz.maybe(data, "--format", 3):
        fmt = fz.choice_option(data, plan, ["aol", "csv"], ["parquet", "json"], "--format")
        inv.add("--format", fmt)
    if fmt == "csv" or (plan.bad("options") and fz.maybe(data, "--columns", 3)):
        inv.add(
            "--columns",
            fz.choice_option(
                data,
                plan,
                [AOL_COLUMNS],
                ["user=AnonID", "bogus", "user=", "=x", "user=nope,query=Query", ","],
                "--columns",
            ),
        )
        if sep:
            inv.add("--sep", fz.choice_option(data, plan, ["\t"], [",", "", ";;"], "--sep"))
    _encoding(fz, data, plan, inv)
    _on_bad_lines(fz, data, plan, inv, former=["report", "skip"])


def querylogs_anonymize(fz, data, plan, wd, big):
    path, what = _input(fz, data, plan, wd, "aol", LOG_INPUTS, big)
    inv = fz.Invocation(["querylogs", "anonymize", str(path)], inputs=[path])
    inv.note(what)
    inv.add("-k", fz.int_option(data, plan, [2, 3, 5], "-k"))
    _log_format(fz, data, plan, inv)
    if fz.maybe(data, "--time-granularity", 3):
        inv.add(
            "--time-granularity",
            fz.choice_option(
                data, plan, ["second", "hour", "day", "month"], ["year"], "--time-granularity"
            ),
        )
    _seed_option(fz, data, plan, inv)
    _key_file(fz, data, plan, wd, inv)
    for flag in ("--keep-identifiers", "--no-assess"):
        if fz.maybe(data, flag, 4):
            inv.add(flag)
    if fz.maybe(data, "--tie-break", 4):
        inv.add(
            "--tie-break",
            fz.choice_option(data, plan, ["suppress", "add"], ["random"], "--tie-break"),
        )
    if fz.maybe(data, "--grouping", 3):
        inv.add(
            "--grouping",
            fz.choice_option(
                data, plan, ["greedy", "greedy-intent", "mdav"], ["kmeans"], "--grouping"
            ),
        )
    if fz.maybe(data, "--refine", 4):
        inv.add("--refine", fz.int_option(data, plan, [0, 1, 2], "--refine"))
    _shared_options(fz, data, plan, wd, inv)
    out = wd.output(
        data, plan, inv, "-o", "published", [".tsv", ".csv", ".parquet", ".tsv.gz"], required=True
    )
    _report(fz, data, plan, wd, inv, [out])
    return inv


def querylogs_assess(fz, data, plan, wd, big):
    path, what = _input(fz, data, plan, wd, "aol", LOG_INPUTS, big)
    inv = fz.Invocation(["querylogs", "assess", str(path)], inputs=[path])
    inv.note(what)
    _log_format(fz, data, plan, inv)
    for _ in range(data.draw(st.integers(0, 2), label="--known-queries count")):
        inv.add("--known-queries", fz.int_option(data, plan, [1, 3], "--known-queries"))
    _seed_option(fz, data, plan, inv)
    if fz.maybe(data, "--json", 3):
        inv.add("--json")
    _report(fz, data, plan, wd, inv, [], [".json"])
    return inv


def querylogs_synthesize(fz, data, plan, wd, big):
    inv = fz.Invocation(["querylogs", "synthesize"])
    inv.note("no input")
    huge = [2**63, 10**30]  # large but possible sizes would only take long
    inv.add("--users", fz.int_option(data, plan, [5, 20, 40], "--users", huge))
    inv.add("--lines", fz.int_option(data, plan, [50, 200, 400], "--lines", huge))
    _seed_option(fz, data, plan, inv)
    wd.output(data, plan, inv, "-o", "synthetic", [".tsv", ".tsv.gz"], required=True)
    return inv


COMMANDS = {
    "tabular anonymize": tabular_anonymize,
    "tabular assess": tabular_assess,
    "tabular anatomize": tabular_anatomize,
    "tabular slice": tabular_slice,
    "tabular microaggregate": tabular_microaggregate,
    "tabular noise": tabular_noise,
    "tabular rank-swap": tabular_rank_swap,
    "tabular pram": tabular_pram,
    "tabular recode": tabular_recode,
    "tabular safepub": tabular_safepub,
    "tabular dp-counts": tabular_dp_counts,
    "transactions anonymize": transactions_anonymize,
    "transactions k-anonymize": transactions_k_anonymize,
    "transactions band": transactions_band,
    "transactions disassociate": transactions_disassociate,
    "transactions assess": transactions_assess,
    "location anonymize": location_anonymize,
    "location assess": location_assess,
    "graphs anonymize": graphs_anonymize,
    "graphs assess": graphs_assess,
    "graphs compare": graphs_compare,
    "querylogs anonymize": querylogs_anonymize,
    "querylogs assess": querylogs_assess,
    "querylogs synthesize": querylogs_synthesize,
}


def test_every_command_is_fuzzed():
    from click.testing import CliRunner

    from structanon.cli import main

    listed = set()
    for group in ("tabular", "transactions", "location", "graphs", "querylogs"):
        result = CliRunner().invoke(main, [group, "--help"])
        section = result.output.split("Commands:")[1]
        listed |= {f"{group} {line.split()[0]}" for line in section.splitlines() if line.strip()}
    assert listed == set(COMMANDS)


@pytest.mark.parametrize("command", list(COMMANDS))
@settings(FUZZ)
@given(data=st.data())
def test_cli_in_process(fz, command, data):
    with fz.workdir() as wd:
        inv = COMMANDS[command](fz, data, fz.plan(data), wd, big=False)
        fz.check(inv, wd.root)


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
@settings(FUZZ_SUBPROCESS)
@given(data=st.data())
def test_cli_subprocess(fz, command, data):
    """The same in a fresh interpreter under a 4 GiB address-space limit, with larger records."""
    with fz.workdir() as wd:
        inv = COMMANDS[command](fz, data, fz.plan(data), wd, big=True)
        fz.check(inv, wd.root, subprocess_run=True)
