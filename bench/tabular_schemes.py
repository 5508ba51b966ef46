"""Publishing schemes on UCI Adult: generalization vs bucketization (Anatomy) vs slicing.

Usage::

    python bench/tabular_schemes.py [--l 5 10] [--out bench/results/tabular_models.md]

The thesis's evaluation (Li 2010, section 4.5), on Adult from ``../shared/data/adult``:
quasi-identifiers age, workclass, education, marital-status, race, sex, native-country;
sensitive occupation.  A seeded 70 % of the records is published, 30 % held out.

* Classification: a decision tree trained on each release predicts a target attribute
  (occupation, the sensitive one; education and marital-status, two QIs) from every other
  attribute; it is tested on the held-out records.  Test records are shown to the tree as the
  release would show them (generalized with the release's levels or labels); a prediction
  that is a generalized value earns ``1 / (leaves under it)`` when it covers the true value
  (the analyst guesses uniformly inside it).  Anatomy's training rows pair each QI row with a
  random sensitive value of its bucket (the thesis's preprocessing); sliced rows are used as
  published.
* Membership disclosure: 5,000 published and 5,000 held-out records; the attacker says
  "member" when the record matches the release (its generalized tuple is published; its QI
  combination is in a bucket that holds its sensitive value; it has a matching bucket in
  every column of the sliced table, thesis Def. 4.1.5).  Reported: the advantage
  ``TPR - FPR`` (0: no better than guessing).

The same l bounds the attribute disclosure of every scheme: probabilistic l-diversity (no
sensitive value above 1/l of a class or bucket) for generalization, Anatomy's l-diverse
buckets, l-diverse slicing.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

_BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH]
sys.path.insert(0, str(_BENCH.parent))
_spec = importlib.util.spec_from_file_location("_harness", _BENCH / "_harness.py")
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)

import tabular  # noqa: E402
from structanon import Hierarchy, InfeasibleError  # noqa: E402
from structanon.models import ProbabilisticLDiversity  # noqa: E402

QIS = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
SENSITIVE = "occupation"
TARGETS = ["occupation", "education", "marital-status"]
SEED = 0


def load() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    folder = _harness.shared_data("adult")
    if folder is None:
        raise SystemExit("../shared/data/adult is missing")
    df = pd.read_csv(folder / "adult.csv", sep=";")[[*QIS, SENSITIVE]]
    hierarchies = {c: Hierarchy.from_csv(folder / f"adult_hierarchy_{c}.csv", name=c) for c in QIS}
    return df, hierarchies


class Generalizer:
    """Shows held-out records as a generalized release shows them, per attribute."""

    def __init__(self, hierarchy: Hierarchy, published: pd.Series) -> None:
        self.hierarchy = hierarchy
        self.labels = set(published.astype(str))
        self.leaves: dict[str, int] = {}
        for level in range(hierarchy.height + 1):
            for label, count in (
                pd.Series(hierarchy.generalize(hierarchy.leaves, level))
                .astype(str)
                .value_counts()
                .items()
            ):
                self.leaves.setdefault(label, int(count))

    def __call__(self, values: pd.Series) -> np.ndarray:
        out = np.full(len(values), "*", dtype=object)
        todo = np.ones(len(values), dtype=bool)
        for level in range(self.hierarchy.height + 1):
            labels = np.asarray(self.hierarchy.generalize(values, level)).astype(str)
            hit = todo & np.isin(labels, list(self.labels))
            out[hit] = labels[hit]
            todo &= ~hit
        return out

    def credit(self, predicted: np.ndarray, truth: pd.Series) -> np.ndarray:
        """1 / leaves for a predicted label that covers the true value, else 0."""
        shown = self(truth)
        return np.where(
            predicted.astype(str) == shown,
            1.0 / np.array([self.leaves.get(str(p), 1) for p in predicted]),
            0.0,
        )


def accuracy(train: pd.DataFrame, test: pd.DataFrame, target: str, credit=None) -> float:
    from sklearn.preprocessing import OrdinalEncoder
    from sklearn.tree import DecisionTreeClassifier

    features = [c for c in [*QIS, SENSITIVE] if c != target]
    encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    x_train = encoder.fit_transform(train[features].astype(str))
    x_test = encoder.transform(test[features].astype(str))
    tree = DecisionTreeClassifier(min_samples_leaf=5, random_state=SEED)
    tree.fit(x_train, train[target].astype(str))
    predicted = tree.predict(x_test)
    if credit is not None:
        return float(credit(predicted).mean())
    return float((predicted == test[target].astype(str).to_numpy()).mean())


def generalized_view(release, hierarchies, test):
    """The held-out records as the generalized release shows them, and the per-QI mappers."""
    mappers = {c: Generalizer(hierarchies[c], release.data[c]) for c in QIS}
    shown = test.copy()
    for c in QIS:
        shown[c] = mappers[c](test[c])
    return shown, mappers


def generalization_row(release, hierarchies, test, members, outsiders) -> dict[str, Any]:
    shown, mappers = generalized_view(release, hierarchies, test)
    row: dict[str, Any] = {}
    for target in TARGETS:
        if target in mappers:
            truth = test[target]
            row[target] = accuracy(
                release.data, shown, target, lambda p, m=mappers[target], t=truth: m.credit(p, t)
            )
        else:
            row[target] = accuracy(release.data, shown, target)
    published = set(map(tuple, release.data[[*QIS, SENSITIVE]].astype(str).to_numpy().tolist()))

    def member(frame):
        view = frame.copy()
        for c in QIS:
            view[c] = mappers[c](frame[c])
        keys = map(tuple, view[[*QIS, SENSITIVE]].astype(str).to_numpy().tolist())
        return np.array([k in published for k in keys])

    row["membership_advantage"] = float(member(members).mean() - member(outsiders).mean())
    return row


def anatomy_row(release, test, members, outsiders, rng) -> dict[str, Any]:
    qit, st = release.data, release.sensitive_table
    values = st.loc[st.index.repeat(st["count"])].reset_index(drop=True)
    values = values.iloc[rng.permutation(len(values))]
    values = values.sort_values("bucket", kind="stable")[SENSITIVE].to_numpy()
    train = qit.sort_values("bucket", kind="stable").assign(**{SENSITIVE: values})
    row: dict[str, Any] = {t: accuracy(train, test, t) for t in TARGETS}
    buckets_of = qit.groupby(list(map(str, QIS)))["bucket"].agg(set).to_dict()
    holds = st.groupby(SENSITIVE)["bucket"].agg(set).to_dict()

    def member(frame):
        out = []
        for record in frame[[*QIS, SENSITIVE]].itertuples(index=False):
            key = tuple(record[: len(QIS)])
            out.append(bool(buckets_of.get(key, set()) & holds.get(record[-1], set())))
        return np.array(out)

    row["membership_advantage"] = float(member(members).mean() - member(outsiders).mean())
    return row


def slicing_row(release, test, members, outsiders) -> dict[str, Any]:
    data = release.data
    row: dict[str, Any] = {t: accuracy(data, test, t) for t in TARGETS}
    columns = release.info["columns"]
    index = []
    for group in columns:
        keys = map(tuple, data[group].astype(str).to_numpy().tolist())
        table: dict[tuple, set] = {}
        for key, bucket in zip(keys, data["bucket"]):
            table.setdefault(key, set()).add(bucket)
        index.append(table)

    def member(frame):
        parts = [list(map(tuple, frame[g].astype(str).to_numpy().tolist())) for g in columns]
        out = []
        for i in range(len(frame)):
            common = index[0].get(parts[0][i], set())
            for table, keys in zip(index[1:], parts[1:]):
                common = common & table.get(keys[i], set())
            out.append(bool(common))
        return np.array(out)

    row["membership_advantage"] = float(member(members).mean() - member(outsiders).mean())
    row["columns"] = " | ".join(",".join(g) for g in columns)
    return row


def run(l_values: list[int]) -> list[dict[str, Any]]:
    df, hierarchies = load()
    rng = np.random.default_rng(SEED)
    shuffled = rng.permutation(len(df))
    cut = int(0.7 * len(df))
    published, held_out = df.iloc[shuffled[:cut]], df.iloc[shuffled[cut:]]
    published = published.reset_index(drop=True)
    held_out = held_out.reset_index(drop=True)
    members = published.sample(5000, random_state=SEED)
    outsiders = held_out.sample(5000, random_state=SEED)
    exact = set(map(tuple, published.astype(str).to_numpy().tolist()))

    def present(frame: pd.DataFrame) -> float:
        return float(
            np.mean([k in exact for k in map(tuple, frame.astype(str).to_numpy().tolist())])
        )

    rows = [
        {
            "scheme": "original",
            "l": "-",
            **{t: accuracy(published, held_out, t) for t in TARGETS},
            "membership_advantage": present(members) - present(outsiders),
            "cpu_s": 0.0,
        }
    ]
    for l_value in l_values:
        model = ProbabilisticLDiversity(l_value)
        for name, kwargs in (
            ("generalization (optimal)", {"algorithm": "optimal", "suppression_limit": 0.02}),
            ("generalization (Mondrian)", {"algorithm": "mondrian"}),
        ):
            start = time.process_time()
            try:
                release = tabular.anonymize(
                    published, hierarchies, SENSITIVE, [model], seed=SEED, measures=False, **kwargs
                )
            except InfeasibleError as exc:
                rows.append({"scheme": name, "l": l_value, "columns": f"infeasible: {exc}"})
                continue
            cpu = time.process_time() - start
            row = generalization_row(release, hierarchies, held_out, members, outsiders)
            rows.append({"scheme": name, "l": l_value, **row, "cpu_s": cpu})
        start = time.process_time()
        release = tabular.anatomize(published, QIS, SENSITIVE, l_value, seed=SEED, measures=False)
        cpu = time.process_time() - start
        rows.append(
            {
                "scheme": "bucketization (Anatomy)",
                "l": l_value,
                **anatomy_row(release, held_out, members, outsiders, rng),
                "cpu_s": cpu,
            }
        )
        for label, kwargs in (
            ("slicing (phi^2, c=2)", {"n_columns": 2}),
            ("slicing (phi^2, c=3)", {"n_columns": 3}),
            ("slicing (alpha=2, c=3)", {"n_columns": 3, "sensitive_size": 2}),
        ):
            start = time.process_time()
            try:
                release = tabular.slice_table(
                    published, QIS, SENSITIVE, l_value, seed=SEED, measures=False, **kwargs
                )
            except InfeasibleError as exc:  # an infeasible column choice is a result too
                rows.append({"scheme": label, "l": l_value, "columns": f"infeasible: {exc}"})
                continue
            cpu = time.process_time() - start
            row = slicing_row(release, held_out, members, outsiders)
            rows.append({"scheme": label, "l": l_value, **row, "cpu_s": cpu})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ["scheme", "l", *[f"acc. {t}" for t in TARGETS], "membership adv.", "CPU s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            str(r["scheme"]),
            str(r["l"]),
            *[f"{r[t]:.3f}" if t in r else "-" for t in TARGETS],
            f"{r['membership_advantage']:.3f}" if "membership_advantage" in r else "-",
            f"{r['cpu_s']:.2f}" if "cpu_s" in r else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        f"- {r['scheme']} (l={r['l']}): columns {r['columns']}" for r in rows if "columns" in r
    ]
    return "\n".join(lines + [""] + notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--l", type=int, nargs="+", default=[3, 5, 7])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows = run(args.l)
    text = markdown(rows)
    print(text)
    print(_harness.machine_line())
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
