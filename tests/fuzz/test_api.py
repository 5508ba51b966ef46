"""Fuzz the public Python functions of the five packages with generated bad arguments.

Each example calls one function with well-formed arguments except one or two, which are
replaced by a wrong type, an out-of-range number, a malformed table / graph / set list, or a
bad path.  The call may return, or raise :class:`~structanon.errors.InputError` or
:class:`~structanon.errors.InfeasibleError`; anything else (a raw ``TypeError``,
``IndexError``, ``OSError``, ``MemoryError``, a timeout) fails.  Arguments the function got
well-formed must be unchanged after the call.
"""

from __future__ import annotations

import contextlib
import copy
import math
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structanon.errors import InfeasibleError, InputError

pytestmark = pytest.mark.fuzz

FUZZ = settings.get_profile("fuzz")
REPO = Path(__file__).resolve().parents[2]
ALLOWED = (InputError, InfeasibleError)


class Make:
    """A factory of an argument value (fresh for each call: callees may keep or mutate it)."""

    def __init__(self, factory, name: str) -> None:
        self.factory, self.name = factory, name

    def __call__(self) -> Any:
        return self.factory()

    def __repr__(self) -> str:
        return self.name


def make(name):
    def wrap(factory):
        return Make(factory, name)

    return wrap


def value(v: Any) -> Any:
    return v() if isinstance(v, Make) else copy.deepcopy(v)


SCALARS = [
    None,
    "",
    "abc",
    -1,
    0,
    1,
    2,
    10**30,
    1.5,
    math.nan,
    math.inf,
    True,
    [],
    {},
    b"x",
    (1, 2),
]
BAD_INTS = [-1, 0, 10**30, 2**63, 1.5, math.nan, "3", None, True, [3]]
BAD_FLOATS = [-1.0, 2.0, math.nan, math.inf, -math.inf, "0.5", None, [0.1]]


@dataclass
class Api:
    """A public function, a well-formed call of it and bad values for each parameter."""

    call: Any
    good: dict[str, Any]
    bad: dict[str, list[Any]] = field(default_factory=dict)

    def bad_values(self, name: str) -> list[Any]:
        return self.bad.get(name, []) + SCALARS


# ------------------------------------------------------------------------------ seed data

_CACHE: dict[str, Any] = {}


def _cached(name, build):
    if name not in _CACHE:
        _CACHE[name] = build()
    return _CACHE[name]


def adult() -> pd.DataFrame:
    return _cached(
        "adult",
        lambda: pd.read_csv(
            REPO / "tabular" / "data" / "adult_sample.csv", sep=";", nrows=80, dtype=str
        ),
    ).copy()


def adult_dask() -> Any:
    """The sample as a Dask DataFrame of two partitions (threads, no cluster needed)."""
    import dask.dataframe as dd

    return dd.from_pandas(adult(), npartitions=2)


def adult_hierarchies() -> dict:
    from structanon import Hierarchy

    def build():
        return {
            c: Hierarchy.from_csv(REPO / "tabular" / "data" / f"adult_hierarchy_{c}.csv", sep=";")
            for c in ("age", "sex", "race")
        }

    return dict(_cached("adult-h", build))


def baskets() -> list[set]:
    def build():
        lines = (REPO / "transactions" / "data" / "retail_head2000.dat").read_text().splitlines()
        return [set(map(int, line.split())) for line in lines[:60]]

    return copy.deepcopy(_cached("baskets", build))


def fixes() -> pd.DataFrame:
    def build():
        df = pd.read_csv(
            REPO / "location" / "data" / "geolife_11users_sample.csv.gz", dtype={"uid": str}
        )
        return df.groupby("uid").head(25).reset_index(drop=True)

    return _cached("fixes", build).copy()


def graph() -> nx.Graph:
    def build():
        lines = (REPO / "graphs" / "data" / "ca-GrQc_undirected.txt").read_text().splitlines()
        return nx.Graph([tuple(map(int, line.split())) for line in lines[:200]])

    return _cached("graph", build).copy()


def query_log() -> pd.DataFrame:
    from querylogs import synthetic_log

    return _cached("log", lambda: synthetic_log(30, 600, seed=11)).copy()


# ---------------------------------------------------------------------------- bad values


@make("DataFrame()")
def empty_frame():
    return pd.DataFrame()


def frames(good):
    """Malformed versions of the table ``good()``."""

    def dup_columns():
        df = good()
        return pd.concat([df, df.iloc[:, :1]], axis=1)

    def dup_index():
        df = good()
        df.index = [0] * len(df)
        return df

    def nan_everywhere():
        df = good()
        df.iloc[::3, :] = np.nan
        return df

    def garbage_cells():
        df = good().astype(object)
        for i, token in enumerate(["inf", "", None, "abc", 10**30, -1, "é", math.nan]):
            df.iat[i % len(df), i % df.shape[1]] = token
        return df

    def int_columns():
        df = good()
        df.columns = range(df.shape[1])
        return df

    return [
        empty_frame,
        Make(lambda: good().iloc[:0], "no rows"),
        Make(lambda: good().iloc[:1], "one row"),
        Make(lambda: good().iloc[:, :1], "one column"),
        Make(dup_columns, "duplicate columns"),
        Make(dup_index, "duplicate index"),
        Make(nan_everywhere, "NaN rows"),
        Make(garbage_cells, "garbage cells"),
        Make(int_columns, "integer column names"),
        Make(lambda: good().to_dict("list"), "dict of lists"),
        Make(lambda: good().to_numpy(), "numpy array"),
    ]


def paths(tmp: Path) -> list[Any]:
    def file(name: str, raw: bytes) -> Make:
        def write() -> Path:
            (tmp / name).write_bytes(raw)
            return tmp / name

        return Make(write, name)

    return [
        tmp,
        tmp / "missing.txt",
        tmp / "no" / "folder" / "x.csv",
        str(tmp),
        5,
        file("binary.bin", bytes(range(256)) * 2),
        file("empty.csv", b""),
        file("utf16.csv", "a,b\n1,2\n".encode("utf-16")),
        file("nul.csv", b"a,b\n1\x00,2\n"),
    ]


# --------------------------------------------------------------------------------- targets


def targets(tmp: Path) -> dict[str, Api]:
    import graphs
    import location
    import querylogs
    import tabular
    import transactions
    from structanon.models import KAnonymity
    from tabular import io as tab_io

    files = {
        "adult.csv": (REPO / "tabular" / "data" / "adult_sample.csv").read_bytes()[:6000],
        "baskets.dat": (REPO / "transactions" / "data" / "retail_head2000.dat").read_bytes()[:3000],
        "graph.txt": (REPO / "graphs" / "data" / "ca-GrQc_undirected.txt").read_bytes()[:2000],
    }
    for name, raw in files.items():
        (tmp / name).write_bytes(raw)
    fixes().to_csv(tmp / "fixes.csv", index=False)
    querylogs.write_log(query_log(), tmp / "log.tsv", aol=True)
    bad_paths = paths(tmp)
    bad_sets = [
        [],
        [set()],
        "abc",
        [[1, 2], [None]],
        [{1, "a"}, {2}],
        [{math.nan}, {1}],
        [5, {1}],
        [{10**30}, {1}],
        {"a": {1}},
        np.array([[1, 2], [3, 4]]),
        Make(lambda: [{1, 2}] * 3, "three equal baskets"),
        Make(lambda: [set(range(3000))] + baskets(), "one 3,000-item basket"),
    ]
    bad_graphs = [
        nx.DiGraph([(1, 2), (2, 3)]),
        nx.MultiGraph([(1, 2), (1, 2)]),
        nx.Graph(),
        nx.Graph([(1, 1)]),
        Make(lambda: nx.complete_graph(3), "triangle"),
        [(1, 2), (2, 3)],
        nx.Graph([("a", 1), (1, 2.5)]),
        Make(lambda: nx.relabel_nodes(graph(), str), "string nodes"),
    ]
    bad_logs = frames(query_log) + [
        Make(lambda: query_log().assign(user=np.nan), "no users"),
        Make(lambda: query_log().assign(time="yesterday"), "text times"),
        Make(lambda: query_log().assign(query=7), "integer queries"),
        Make(lambda: query_log().drop(columns=["time"]), "no time column"),
    ]
    bad_fixes = frames(fixes) + [
        Make(lambda: fixes().assign(lat=np.nan), "NaN lat"),
        Make(lambda: fixes().assign(lat="north"), "text lat"),
        Make(lambda: fixes().assign(lng=math.inf), "inf lon"),
        Make(lambda: fixes().assign(lat=1000.0), "lat out of range"),
        Make(lambda: fixes().assign(datetime="not a time"), "text times"),
        Make(lambda: fixes().assign(uid=None), "no users"),
    ]
    qi = adult_hierarchies
    return {
        "tabular.anonymize": Api(
            tabular.anonymize,
            {
                "df": Make(adult, "adult"),
                "quasi_identifiers": Make(qi, "hierarchies"),
                "models": Make(lambda: [KAnonymity(3)], "[KAnonymity(3)]"),
                "algorithm": "optimal",
                "suppression_limit": 0.0,
                "seed": 0,
            },
            {
                "df": frames(adult),
                "quasi_identifiers": [
                    {},
                    {"bogus": "numeric"},
                    {"age": 5},
                    {"age": "bogus"},
                    "age",
                    ["age"],
                    {"age": "numeric", "sex": "set"},
                    Make(lambda: {**qi(), "bogus": qi()["age"]}, "with a missing column"),
                ],
                "models": [[], [5], "k", Make(lambda: [KAnonymity(1000)], "[KAnonymity(1000)]")],
                "algorithm": ["magic", "mondrian", "datafly"],
                "suppression_limit": BAD_FLOATS,
                "seed": BAD_INTS,
                "sensitive": ["bogus", "age", 5],
            },
        ),
        "tabular.io.read_microdata": Api(
            tab_io.read_microdata,
            {"path": tmp / "adult.csv", "sep": ";", "columns": ["age", "sex"]},
            {
                "path": bad_paths,
                "sep": ["", ";;", "\t", 5],
                "columns": [["bogus"], "age", ["age", "age"], [5]],
                "categorical": ["age", 5, [5], ["bogus"], None],
            },
        ),
        "tabular.io.load_hierarchies": Api(
            tab_io.load_hierarchies,
            {"columns": ["age", "sex"], "directory": REPO / "tabular" / "data"},
            {
                "columns": [["bogus"], "age", [5]],
                "directory": bad_paths,
                "files": [{"age": tmp / "missing.csv"}, {"age": tmp}, {"age": 5}, ["age"]],
                "numeric": ["age", 5],
                "sets": ["age", 5],
            },
        ),
        "transactions.km_anonymize": Api(
            transactions.km_anonymize,
            {"transactions": Make(baskets, "baskets"), "k": 3, "m": 2, "seed": 0},
            {
                "transactions": bad_sets,
                "k": BAD_INTS,
                "m": BAD_INTS + [1000],
                "hierarchy": [5, tmp / "missing.json", {}, {"a": 5}, [1, 2], tmp, {"low": [1, 2]}],
                "method": ["x", None],
                "fanout": BAD_INTS,
                "order": ["x", None],
                "seed": BAD_INTS,
            },
        ),
        "transactions.k_anonymize": Api(
            transactions.k_anonymize,
            {"transactions": Make(baskets, "baskets"), "k": 3, "seed": 0},
            {
                "transactions": bad_sets,
                "k": BAD_INTS,
                "hierarchy": [5, {}, tmp],
                "fanout": BAD_INTS,
                "seed": BAD_INTS,
            },
        ),
        "transactions.disassociate": Api(
            transactions.disassociate,
            {"transactions": Make(baskets, "baskets"), "k": 3, "m": 2, "seed": 0},
            {
                "transactions": bad_sets
                + [
                    Make(
                        lambda: pd.DataFrame({"t": [1, 1, 2], "i": ["a", None, "b"]}), "long, NaN"
                    ),
                    Make(lambda: pd.DataFrame({"t": [1], "i": ["a"], "x": [2]}), "three columns"),
                ],
                "k": BAD_INTS,
                "m": BAD_INTS + [9],
                "max_cluster_size": BAD_INTS,
                "max_basket_size": BAD_INTS,
                "transaction_col": ["bogus", 5],
                "item_col": ["bogus", 5],
                "seed": BAD_INTS,
            },
        ),
        "transactions.reconstruct": Api(
            transactions.reconstruct,
            {
                "release": Make(
                    lambda: transactions.disassociate(baskets(), 3, 2, measures=False),
                    "a disassociated release",
                ),
                "seed": 0,
            },
            {
                "release": [
                    None,
                    5,
                    Make(lambda: transactions.k_anonymize(baskets(), 3, measures=False), "k-anon"),
                ],
                "seed": BAD_INTS,
            },
        ),
        "transactions.band_matrix": Api(
            transactions.band_matrix,
            {
                "transactions": Make(baskets, "baskets"),
                "sensitive_items": [32, 36],
                "p": 3,
                "seed": 0,
            },
            {
                "transactions": bad_sets,
                "sensitive_items": [[], [999999], "32", [None], 32],
                "p": BAD_INTS,
                "alpha": BAD_INTS,
                "seed": BAD_INTS,
            },
        ),
        "transactions.item_taxonomy": Api(
            transactions.item_taxonomy,
            {"transactions": Make(baskets, "baskets"), "fanout": 5},
            {
                "transactions": bad_sets,
                "hierarchy": [5, {}, tmp],
                "fanout": BAD_INTS,
                "order": ["x"],
            },
        ),
        "transactions.read_transactions": Api(
            transactions.read_transactions,
            {"path": tmp / "baskets.dat"},
            {"path": bad_paths, "format": ["x", 5, "csv", "jsonl"], "return_stats": ["x"]},
        ),
        "transactions.write_transactions": Api(
            transactions.write_transactions,
            {"data": Make(baskets, "baskets"), "path": tmp / "out" / "written.dat"},
            {"data": bad_sets, "path": bad_paths, "format": ["x", 5]},
        ),
        "location.cloak": Api(
            location.cloak,
            {
                "df": Make(fixes, "fixes"),
                "k": 2,
                "user": "uid",
                "time": "datetime",
                "lon": "lng",
                "seed": 0,
            },
            {
                "df": bad_fixes,
                "k": BAD_INTS,
                "window": ["abc", 0, -5, pd.Timedelta(0), "1000000D", "-1h"],
                "method": ["x"],
                "user": ["bogus", 5, "lat"],
                "lat": ["bogus", "uid"],
                "cell_size": BAD_FLOATS + [0.0, 1e-9, 1e12],
                "levels": BAD_INTS,
                "pseudonymizer": ["x", 5],
                "seed": BAD_INTS,
            },
        ),
        "location.verify_cloaked": Api(
            location.verify_cloaked,
            {"data": Make(fixes, "fixes (not cloaked)"), "k": 2},
            {"k": BAD_INTS},
        ),
        "location.io.read_fixes": Api(
            location.io.read_fixes,
            {"path": tmp / "fixes.csv", "columns": ["uid", "datetime", "lat", "lng"]},
            {"path": bad_paths, "columns": [["bogus"], "uid", [5]], "sep": ["", ";;", 5]},
        ),
        "graphs.k_degree_anonymize": Api(
            graphs.k_degree_anonymize,
            {"G": Make(graph, "graph"), "k": 3, "seed": 0},
            {
                "G": bad_graphs,
                "k": BAD_INTS,
                "method": ["x"],
                "construct": ["x"],
                "keep_attributes": [["bogus"], "group"],
                "utility": ["none", "x", 5],
                "seed": BAD_INTS,
            },
        ),
        "graphs.read_graph": Api(
            graphs.read_graph,
            {"path": tmp / "graph.txt"},
            {"path": bad_paths, "format": ["x", 5, "csv", "graphml", "json"]},
        ),
        "graphs.anonymize_degree_sequence": Api(
            graphs.anonymize_degree_sequence,
            {"degrees": [5, 4, 4, 3, 2, 2, 1, 1], "k": 2},
            {
                "degrees": [
                    [-1, 2],
                    [1.5, 2],
                    [],
                    [10**30, 1],
                    np.array([np.nan, 1.0]),
                    [[1, 2]],
                    "abc",
                ],
                "k": BAD_INTS,
                "method": ["x"],
                "seed": BAD_INTS,
            },
        ),
        "graphs.structural_risk": Api(
            graphs.structural_risk, {"graph": Make(graph, "graph")}, {"graph": bad_graphs}
        ),
        "graphs.graph_utility": Api(
            graphs.graph_utility,
            {"original": Make(graph, "graph"), "anonymized": Make(graph, "graph"), "level": "fast"},
            {
                "original": bad_graphs,
                "anonymized": bad_graphs,
                "level": ["x"],
                "sources": BAD_INTS,
                "node_sample": BAD_INTS,
            },
        ),
        "graphs.write_graph": Api(
            graphs.write_graph,
            {"graph": Make(graph, "graph"), "path": tmp / "out" / "written.edges"},
            {"graph": bad_graphs, "path": bad_paths, "format": ["x", 5]},
        ),
        "querylogs.anonymize": Api(
            querylogs.anonymize,
            {"log": Make(query_log, "log"), "k": 3, "seed": 0, "assess": False},
            {
                "log": bad_logs,
                "k": BAD_INTS,
                "time_granularity": ["x", 5],
                "tie_break": ["x"],
                "grouping": ["x"],
                "refine": BAD_INTS,
                "risk_p": [(0,), "x"],
                "max_url_queries": BAD_INTS,
                "click_threshold": BAD_FLOATS,
                "pseudonymizer": ["x", 5],
                "seed": BAD_INTS,
                "assess": ["x"],
            },
        ),
        "querylogs.read_log": Api(
            querylogs.read_log,
            {"path": tmp / "log.tsv"},
            {
                "path": bad_paths,
                "format": ["x", "csv", "parquet"],
                "encoding": ["bogus", 5],
                "columns": [{"user": "nope"}, 5, "user=AnonID"],
                "sep": ["", 5],
                "on_bad_lines": ["x"],
            },
        ),
        "querylogs.write_log": Api(
            querylogs.write_log,
            {"log": Make(query_log, "log"), "path": tmp / "out" / "written.tsv"},
            {"log": bad_logs, "path": bad_paths},
        ),
        "querylogs.generalize_times": Api(
            querylogs.generalize_times,
            {"times": Make(lambda: query_log()["time"], "times"), "granularity": "day"},
            {"times": [["x"], [None], 5, pd.Series(["2006-13-45"])], "granularity": ["x"]},
        ),
        "querylogs.verify_log": Api(
            querylogs.verify_log,
            {"data": Make(query_log, "log"), "k": 1},
            {"data": bad_logs, "k": BAD_INTS},
        ),
        "querylogs.read_log_dask": Api(
            querylogs.read_log_dask,
            {"path": tmp / "log.tsv"},
            {
                "path": [*bad_paths, str(tmp / "nothing-*.tsv")],
                "format": ["x", "csv", "parquet"],
                "encoding": ["bogus", 5],
                "columns": [{"user": "nope"}, 5, "user=AnonID"],
                "sep": ["", 5],
                "on_bad_lines": ["x"],
                "block_bytes": BAD_INTS,
                "spool": [5, tmp / "no-such-folder" / "spool", tmp / "log.tsv", []],
            },
        ),
        "tabular.io.read_microdata_dask": Api(
            tab_io.read_microdata_dask,
            {"path": tmp / "adult.csv", "sep": ";", "columns": ["age", "sex"]},
            {
                "path": [*bad_paths, str(tmp / "nothing-*.csv")],
                "sep": ["", ";;", "\t", 5],
                "columns": [["bogus"], "age", ["age", "age"], [5]],
                "blocksize": [0, -1, "lots", 1.5],
            },
        ),
        "tabular.io.write_microdata_dask": Api(
            tab_io.write_microdata_dask,
            {
                "data": Make(adult_dask, "adult as 2 Dask partitions"),
                "path": tmp / "out" / "dask-written.csv",
                "classes": ["age", "sex"],
            },
            {
                "data": [None, 5, [1, 2], Make(adult, "adult as pandas")],
                "path": [*bad_paths, tmp / "out" / "dask-written.parquet"],
                "sep": ["", ";;", 5],
                "classes": [["bogus"], "age", ["age", "age"], [5]],
            },
        ),
    }


def adult_numeric() -> pd.DataFrame:
    """The sample with ``age`` as numbers, for the perturbative methods."""
    df = adult()
    df["age"] = pd.to_numeric(df["age"])
    return df


def scheme_targets() -> dict[str, Api]:
    """Publishing schemes and perturbative methods of ``tabular``."""
    import tabular

    columns = [["bogus"], "age", ["age", "age"], [], [5], ["sex"]]
    cat_columns = [["bogus"], "sex", ["sex", "sex"], [], [5]]
    frames_num = frames(adult_numeric)
    return {
        "tabular.anatomize": Api(
            tabular.anatomize,
            {
                "df": Make(adult, "adult"),
                "quasi_identifiers": ["age", "sex"],
                "sensitive": "occupation",
                "l": 2,
                "seed": 0,
            },
            {
                "df": frames(adult),
                "quasi_identifiers": [[], "age", ["bogus"], ["occupation"], ["age", "age"], [5]],
                "sensitive": ["bogus", "age", 5, None],
                "l": BAD_INTS + [1000],
                "seed": BAD_INTS,
            },
        ),
        "tabular.slice_table": Api(
            tabular.slice_table,
            {
                "df": Make(adult, "adult"),
                "quasi_identifiers": ["age", "sex", "race", "education"],
                "sensitive": "occupation",
                "l": 2,
                "seed": 0,
            },
            {
                "df": frames(adult),
                "quasi_identifiers": [[], "age", ["bogus"], ["occupation"], ["age", "age"]],
                "sensitive": ["bogus", "age", 5],
                "l": BAD_INTS + [1000],
                "n_columns": BAD_INTS + [50],
                "columns": [
                    [["age"]],
                    [["age", "bogus"], ["sex"]],
                    "age",
                    [[]],
                    [["age"], ["age"]],
                ],
                "sensitive_size": BAD_INTS + [50],
                "bins": BAD_INTS,
                "seed": BAD_INTS,
            },
        ),
        "tabular.microaggregate": Api(
            tabular.microaggregate,
            {"df": Make(adult_numeric, "adult"), "columns": ["age"], "k": 3},
            {
                "df": frames_num,
                "columns": columns,
                "k": BAD_INTS + [1000],
                "method": ["magic", "", 5],
                "nominal": [["bogus"], "sex", [5]],
                "ordinal": [["bogus"], "education", [5]],
                "block_size": BAD_INTS + ["fast"],
                "seed": BAD_INTS,
            },
        ),
        "tabular.add_noise": Api(
            tabular.add_noise,
            {"df": Make(adult_numeric, "adult"), "columns": ["age"], "alpha": 0.5},
            {
                "df": frames_num,
                "columns": columns,
                "alpha": BAD_FLOATS + [-0.5, 1e308],
                "method": ["magic", "", 5],
                "seed": BAD_INTS,
            },
        ),
        "tabular.rank_swap": Api(
            tabular.rank_swap,
            {"df": Make(adult_numeric, "adult"), "columns": ["age"], "p": 5.0},
            {
                "df": frames_num,
                "columns": columns,
                "p": BAD_FLOATS + [-5.0, 101.0, 0.0],
                "seed": BAD_INTS,
            },
        ),
        "tabular.pram": Api(
            tabular.pram,
            {"df": Make(adult, "adult"), "columns": ["sex"], "keep": 0.8},
            {
                "df": frames(adult),
                "columns": cat_columns,
                "transition": [np.eye(3), [[0.5, 0.5]], "x", np.full((2, 2), np.nan), -np.eye(2)],
                "invariant": ["yes", 5],
                "keep": BAD_FLOATS + [0.0, 1.5],
                "seed": BAD_INTS,
            },
        ),
        "tabular.recode": Api(
            tabular.recode,
            {"df": Make(adult_numeric, "adult"), "top": {"age": 60}, "bottom": {"age": 20}},
            {
                "df": frames_num,
                "top": [{"bogus": 1}, {"sex": 1}, {"age": "x"}, {"age": math.nan}, "age", 5],
                "bottom": [{"bogus": 1}, {"age": math.inf}, ["age"]],
                "mapping": [{"bogus": {"a": "b"}}, {"sex": "x"}, {"sex": {None: "x"}}, 5],
                "sample": BAD_FLOATS + [0.0, 1.5],
                "seed": BAD_INTS,
            },
        ),
    }


def _with_key(api: Api, tmp: Path) -> Api:
    """Functions that take the release ``key`` get bad keys too."""
    import inspect

    if "key" in inspect.signature(api.call).parameters:
        api.bad["key"] = [5, b"short", tmp / "no-such-key", tmp, "", 1.5]
    return api


_TARGETS: dict[str, Api] = {}
_TMP: list[Path] = []


def _targets(tmp_factory) -> dict[str, Api]:
    if not _TARGETS:
        tmp = tmp_factory.mktemp("api-fuzz")
        (tmp / "out").mkdir()
        _TMP.append(tmp)
        every = {**targets(tmp), **scheme_targets()}
        _TARGETS.update({name: _with_key(api, tmp) for name, api in every.items()})
    return _TARGETS


NAMES = [
    "tabular.anonymize",
    "tabular.anatomize",
    "tabular.slice_table",
    "tabular.microaggregate",
    "tabular.add_noise",
    "tabular.rank_swap",
    "tabular.pram",
    "tabular.recode",
    "tabular.io.read_microdata",
    "tabular.io.read_microdata_dask",
    "tabular.io.write_microdata_dask",
    "tabular.io.load_hierarchies",
    "transactions.km_anonymize",
    "transactions.k_anonymize",
    "transactions.band_matrix",
    "transactions.disassociate",
    "transactions.reconstruct",
    "transactions.item_taxonomy",
    "transactions.read_transactions",
    "transactions.write_transactions",
    "location.cloak",
    "location.verify_cloaked",
    "location.io.read_fixes",
    "graphs.k_degree_anonymize",
    "graphs.read_graph",
    "graphs.anonymize_degree_sequence",
    "graphs.structural_risk",
    "graphs.graph_utility",
    "graphs.write_graph",
    "querylogs.anonymize",
    "querylogs.read_log",
    "querylogs.write_log",
    "querylogs.generalize_times",
    "querylogs.verify_log",
    "querylogs.read_log_dask",
]


def _same(a: Any, b: Any) -> bool:
    """Whether an argument is as it was (data containers only; other objects: not checked)."""
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b) and list(a.columns) == list(b.columns)
    if isinstance(a, pd.Series):
        return isinstance(b, pd.Series) and a.equals(b)
    if isinstance(a, nx.Graph):
        return nx.utils.graphs_equal(a, b)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, (list, tuple, set, frozenset, str, bytes, int, float)) or a is None:
        try:
            return bool(a == b) or repr(a) == repr(b)
        except Exception:  # elements without a usable equality: not checked
            return True
    return True


@pytest.mark.parametrize("name", NAMES)
@settings(FUZZ)
@given(data=st.data())
def test_public_function(fz, tmp_path_factory, name, data):
    api = _targets(tmp_path_factory)[name]
    names = sorted(set(api.good) | set(api.bad))
    broken = data.draw(
        st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True),
        label="broken parameters",
    )
    kwargs, kept = {}, {}
    for param, good in api.good.items():
        kwargs[param] = value(good)
        kept[param] = copy.deepcopy(kwargs[param])
    for param in broken:
        kwargs[param] = value(data.draw(st.sampled_from(api.bad_values(param)), label=param))
        kept.pop(param, None)
    shown = ", ".join(f"{p}={kwargs[p]!r:.80}" for p in broken)
    try:  # in the scratch folder: a writer given a relative path like "abc" writes there
        with contextlib.chdir(_TMP[0]), fz._in_process_limits(fz.IN_PROCESS_TIMEOUT):
            api.call(**kwargs)
    except ALLOWED:
        pass
    except (Exception, fz.FuzzTimeout) as exc:
        raise AssertionError(
            f"{name}({shown}) raised {type(exc).__name__}: {exc}\n"
            + "".join(traceback.format_exception(exc))[-3000:]
        ) from None
    changed = [p for p, v in kept.items() if not _same(v, kwargs[p])]
    assert not changed, f"{name}({shown}) changed its argument(s) {changed}"


def test_every_public_function_is_listed():
    import graphs
    import location
    import querylogs
    import tabular
    import transactions

    listed = set(NAMES)
    for module in (tabular, transactions, location, graphs, querylogs):
        for attribute in (
            "anonymize",
            "cloak",
            "k_degree_anonymize",
            "km_anonymize",
            "k_anonymize",
            "band_matrix",
            "read_transactions",
            "read_graph",
            "read_log",
            "anatomize",
            "slice_table",
            "microaggregate",
            "add_noise",
            "rank_swap",
            "pram",
            "recode",
            "disassociate",
            "reconstruct",
        ):
            if hasattr(module, attribute) and callable(getattr(module, attribute)):
                # an alias (transactions.anonymize is km_anonymize) is fuzzed under its name
                aliases = {
                    f"{module.__name__}.{name}"
                    for name in dir(module)
                    if getattr(module, name) is getattr(module, attribute)
                }
                assert aliases & listed, f"{module.__name__}.{attribute}"


# One call per class of raw exception the fuzzing found (function, parameter, bad value):
# each raised TypeError, AttributeError, ValueError, IndexError, KeyError, OverflowError,
# OSError, LookupError, UnicodeDecodeError or a pandas / pyarrow error before the fixes.
# "@name" is the generated value of that name in the function's bad values, "@folder" a folder.
REGRESSIONS = [
    ("tabular.anonymize", "df", "@duplicate columns"),
    ("tabular.anonymize", "models", None),
    ("tabular.anonymize", "seed", -1),
    ("tabular.anonymize", "seed", 1.5),
    ("tabular.anonymize", "sensitive", []),
    ("tabular.io.read_microdata", "columns", -1),
    ("tabular.io.read_microdata", "path", 5),
    ("tabular.io.read_microdata", "sep", 5),
    ("tabular.io.read_microdata", "sep", []),
    ("tabular.io.load_hierarchies", "columns", None),
    ("tabular.io.load_hierarchies", "directory", 5),
    ("tabular.io.load_hierarchies", "files", {"age": "@folder"}),
    ("tabular.io.load_hierarchies", "files", {"age": 5}),
    ("tabular.io.load_hierarchies", "files", ["age"]),
    ("tabular.io.load_hierarchies", "numeric", 5),
    ("tabular.io.load_hierarchies", "sets", 5),
    ("transactions.km_anonymize", "hierarchy", 5),
    ("transactions.km_anonymize", "hierarchy", {}),
    ("transactions.km_anonymize", "hierarchy", [1, 2]),
    ("transactions.km_anonymize", "hierarchy", "@folder"),
    ("transactions.km_anonymize", "m", 10**30),
    ("transactions.km_anonymize", "transactions", [{10**30}, {1}]),
    ("transactions.k_anonymize", "hierarchy", 5),
    ("transactions.k_anonymize", "hierarchy", {}),
    ("transactions.k_anonymize", "hierarchy", (1, 2)),
    ("transactions.k_anonymize", "transactions", [{10**30}, {1}]),
    ("transactions.band_matrix", "p", 10**30),
    ("transactions.band_matrix", "alpha", 10**30),
    ("transactions.band_matrix", "transactions", [{10**30}, {1}]),
    ("transactions.item_taxonomy", "transactions", [{10**30}, {1}]),
    ("transactions.read_transactions", "path", "@folder"),
    ("transactions.read_transactions", "path", 5),
    ("transactions.read_transactions", "path", "@binary.bin"),
    ("transactions.read_transactions", "path", "@empty.csv"),
    ("transactions.write_transactions", "data", [5, {1}]),
    ("transactions.write_transactions", "data", None),
    ("transactions.write_transactions", "path", "@folder"),
    ("transactions.write_transactions", "path", 5),
    ("transactions.write_transactions", "path", ""),
    ("location.cloak", "cell_size", "0.5"),
    ("location.cloak", "cell_size", (1, 2)),
    ("location.cloak", "df", "@duplicate columns"),
    ("location.cloak", "df", "@duplicate index"),
    ("location.cloak", "lat", []),
    ("location.cloak", "lon", {}),
    ("location.cloak", "time", []),
    ("location.cloak", "user", []),
    ("location.cloak", "levels", math.nan),
    ("location.cloak", "levels", [3]),
    ("location.cloak", "levels", math.inf),
    ("location.cloak", "pseudonymizer", "x"),
    ("location.cloak", "seed", -1),
    ("location.cloak", "seed", 1.5),
    ("location.cloak", "window", math.inf),
    ("location.verify_cloaked", "data", None),
    ("location.verify_cloaked", "k", -1),
    ("location.io.read_fixes", "columns", -1),
    ("location.io.read_fixes", "path", 5),
    ("location.io.read_fixes", "sep", 5),
    ("location.io.read_fixes", "sep", []),
    ("graphs.k_degree_anonymize", "keep_attributes", None),
    ("graphs.k_degree_anonymize", "seed", -1),
    ("graphs.k_degree_anonymize", "seed", 1.5),
    ("graphs.read_graph", "path", 5),
    ("graphs.read_graph", "path", "@utf16.csv"),
    ("graphs.anonymize_degree_sequence", "seed", -1),
    ("graphs.anonymize_degree_sequence", "seed", 1.5),
    ("graphs.structural_risk", "graph", [(1, 2), (2, 3)]),
    ("graphs.graph_utility", "anonymized", [(1, 2), (2, 3)]),
    ("graphs.graph_utility", "original", None),
    ("graphs.graph_utility", "node_sample", -1),
    ("graphs.graph_utility", "node_sample", 1.5),
    ("graphs.graph_utility", "sources", -1),
    ("graphs.graph_utility", "sources", 1.5),
    ("graphs.write_graph", "graph", [(1, 2), (2, 3)]),
    ("graphs.write_graph", "path", 5),
    ("querylogs.anonymize", "click_threshold", "0.5"),
    ("querylogs.anonymize", "log", "@duplicate columns"),
    ("querylogs.anonymize", "max_url_queries", "3"),
    ("querylogs.anonymize", "pseudonymizer", "x"),
    ("querylogs.anonymize", "seed", -1),
    ("querylogs.anonymize", "seed", 1.5),
    ("querylogs.anonymize", "time_granularity", []),
    ("querylogs.anonymize", "risk_p", None),
    ("querylogs.read_log_dask", "block_bytes", -1),
    ("querylogs.read_log_dask", "block_bytes", 0),
    ("querylogs.read_log_dask", "block_bytes", 1),
    ("querylogs.read_log_dask", "block_bytes", "abc"),
    ("querylogs.read_log_dask", "encoding", 5),
    ("querylogs.read_log_dask", "sep", []),
    ("querylogs.read_log_dask", "columns", 5),
    ("querylogs.read_log_dask", "spool", 5),
    ("querylogs.read_log_dask", "spool", []),
    ("tabular.io.read_microdata_dask", "blocksize", -1),
    ("tabular.io.read_microdata_dask", "blocksize", 0),
    ("tabular.io.read_microdata_dask", "blocksize", 1.5),
    ("querylogs.read_log", "encoding", "bogus"),
    ("querylogs.read_log", "encoding", 5),
    ("querylogs.read_log", "format", "parquet"),
    ("querylogs.read_log", "path", "@folder"),
    ("querylogs.read_log", "path", 5),
    ("querylogs.read_log", "columns", 5),
    ("querylogs.write_log", "log", "@dict of lists"),
    ("querylogs.write_log", "path", "@folder"),
    ("querylogs.write_log", "path", 5),
    ("querylogs.write_log", "path", ""),
    ("querylogs.generalize_times", "granularity", []),
    ("querylogs.generalize_times", "times", ["x"]),
    ("querylogs.generalize_times", "times", None),
    ("querylogs.generalize_times", "times", 10**30),
    ("querylogs.generalize_times", "times", True),
    ("querylogs.generalize_times", "times", {}),
    ("querylogs.verify_log", "data", "@duplicate columns"),
    ("querylogs.verify_log", "data", "@dict of lists"),
]


def _resolve(api: Api, param: str, bad: Any) -> Any:
    if isinstance(bad, dict):
        return {key: _resolve(api, param, v) for key, v in bad.items()}
    if not (isinstance(bad, str) and bad.startswith("@")):
        return copy.deepcopy(bad)
    if bad == "@folder":
        return _TMP[0]
    found = [v for v in api.bad_values(param) if isinstance(v, Make) and v.name == bad[1:]]
    assert found, f"no generated value {bad!r} for {param}"
    return found[0]()


@pytest.mark.parametrize(
    ("name", "param", "bad"),
    [pytest.param(n, p, b, id=f"{n}-{p}={b!r:.30}") for n, p, b in REGRESSIONS],
)
def test_bad_argument_is_an_input_error(fz, tmp_path_factory, name, param, bad):
    api = _targets(tmp_path_factory)[name]
    kwargs = {p: value(g) for p, g in api.good.items()}
    kwargs[param] = _resolve(api, param, bad)
    try:
        with contextlib.chdir(_TMP[0]), fz._in_process_limits(fz.IN_PROCESS_TIMEOUT):
            api.call(**kwargs)
    except ALLOWED:
        pass


def test_utility_of_two_empty_graphs_is_an_input_error():
    import graphs

    with pytest.raises(InputError, match="no nodes"):
        graphs.graph_utility(nx.Graph(), nx.Graph())
