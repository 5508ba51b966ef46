"""Liu & Terzi's k-degree anonymization in Python (github blextar/graph-k-degree-anonymity,
also inside AnonymiGraph), run as a peer of ``bench/graphs.py --edit``.

Nothing of the peer is committed: :func:`kdegree_module` takes the user's git directory
(bare or not) or checkout of that repository, copies its ``kdegree.py`` (at ``HEAD`` for a
git directory) into a cache folder outside the repository, and :func:`run_liu_terzi`
imports it from there, in the child process that runs it.

The call is the authors' own (their ``test.py``): ``nx.read_edgelist(path, nodetype=int)``,
then ``graph_anonymiser(G, k=k, noise=noise, with_deletions=True)`` (additions and
deletions, each group at its median degree; ``noise`` is how many of the lowest-degree
nodes each failed probing attempt raises by one, ``test.py``'s default 1). Its only
randomness is Python's ``random`` module (the node PRIORITY picks), seeded here.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import os
import random
import subprocess
import time
from pathlib import Path

import numpy as np


def _cache_root() -> Path:
    env = os.environ.get("LIU_TERZI_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "structanon-peers" / "liu-terzi"


def kdegree_module(source: Path) -> tuple[Path, str]:
    """The peer's ``kdegree.py`` copied into the cache; returns its path and its version
    (the commit for a git directory, else the file's SHA-256 prefix)."""
    source = Path(source)
    if (source / "kdegree.py").is_file():
        text = (source / "kdegree.py").read_bytes()
        version = "sha256:" + hashlib.sha256(text).hexdigest()[:12]
    else:
        git = ["git", "--git-dir", str(source)]
        try:
            version = subprocess.run(
                [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
            ).stdout.strip()
            text = subprocess.run(
                [*git, "show", "HEAD:kdegree.py"], check=True, capture_output=True
            ).stdout
        except subprocess.CalledProcessError as err:
            raise SystemExit(
                f"--liu-terzi {source}: neither a checkout holding kdegree.py nor a git "
                f"directory whose HEAD holds it ({err.stderr.strip()})"
            ) from err
    folder = _cache_root() / version.replace(":", "-")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "kdegree.py"
    if not target.exists() or target.read_bytes() != text:
        tmp = folder / "kdegree.py.tmp"
        tmp.write_bytes(text)
        os.replace(tmp, target)
    return target, version


def run_liu_terzi(module: Path, path: Path, k: int, noise: int = 1, seed: int = 0) -> dict:
    """Read the edge list and anonymize it the authors' way; meant for a forked child.

    Returns the output graph as plain data (its nodes, its edges, whether it is directed or
    a multigraph), the number of probing attempts the peer printed, the wall time of the
    read, and the CPU time (``time.process_time``) of ``graph_anonymiser`` and of the child.
    """
    import networkx as nx

    spec = importlib.util.spec_from_file_location("kdegree", module)
    kd = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kd)
    start = time.perf_counter()
    graph = nx.read_edgelist(path, nodetype=int)
    read = time.perf_counter() - start
    random.seed(seed)
    log = io.StringIO()
    cpu = time.process_time()
    with contextlib.redirect_stdout(log):
        anonymized = kd.graph_anonymiser(graph, k=k, noise=noise, with_deletions=True)
    cpu = time.process_time() - cpu
    return {
        "nodes": np.fromiter(anonymized.nodes(), dtype=np.int64),
        "edges": np.array(list(anonymized.edges()), dtype=np.int64).reshape(-1, 2),
        "directed": anonymized.is_directed(),
        "multigraph": anonymized.is_multigraph(),
        "attempts": log.getvalue().count("Attempt number"),
        "read": read,
        "cpu": cpu,
        "cpu_total": time.process_time(),
    }
