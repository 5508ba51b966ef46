"""Test-suite wide settings: hypothesis without deadlines (CI machines are shared).

Tests that take more than ~3 s each carry the marker ``slow``; ``pytest -m "not slow"`` leaves
them out for a fast developer loop (CI runs everything).

The fuzz suite (tests/fuzz, marker ``fuzz``) reads two more hypothesis profiles: ``fuzz``
(in-process runs) and ``fuzz-subprocess`` (runs in a fresh interpreter under a memory limit).
By default they are small and derandomized, so CI is fast and deterministic;
``pytest --fuzz-long`` makes them thousands of fresh random examples.
"""

from hypothesis import HealthCheck, Phase, settings

settings.register_profile(
    "structanon", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("structanon")

FUZZ_EXAMPLES = {"fuzz": 10, "fuzz-subprocess": 1}  # per test (command or function)
FUZZ_LONG_FACTOR = 20


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-long",
        action="store_true",
        default=False,
        help="run the fuzz suite (tests/fuzz) with thousands of random examples "
        "instead of a few hundred derandomized ones",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fuzz: generated bad inputs through every command and public function"
    )
    config.addinivalue_line(
        "markers",
        "slow: brute-force, shared-data and end-to-end tests taking more than ~3 s each; "
        '`pytest -m "not slow"` is the fast developer loop, CI runs them all',
    )
    long = config.getoption("--fuzz-long")
    for name, examples in FUZZ_EXAMPLES.items():
        settings.register_profile(
            name,
            max_examples=examples * (FUZZ_LONG_FACTOR if long else 1),
            deadline=None,
            database=None,
            derandomize=not long,
            print_blob=long,
            # CI reports a failing example as generated; long runs also shrink it
            phases=[Phase.explicit, Phase.generate] + ([Phase.shrink] if long else []),
            suppress_health_check=list(HealthCheck),
        )


import importlib  # noqa: E402

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """``structanon demo`` run once for the whole suite, as a user runs it.

    Returns ``(output folder, CLI result, {package: release})``: the end-to-end tests read the
    CLI's output, each package's tests read its own demo's release and files, so every demo
    runs once.
    """
    from structanon.cli import PACKAGES, main

    out = tmp_path_factory.mktemp("demo")
    releases = {}
    originals = {}
    for name in PACKAGES:
        module = importlib.import_module(f"{name}.cli")
        originals[name] = module.demo

        def recording(output_dir, seed=0, _name=name, _demo=module.demo):
            releases[_name] = _demo(output_dir, seed=seed)
            return releases[_name]

        module.demo = recording
    try:
        result = CliRunner().invoke(main, ["demo", "--output-dir", str(out)])
    finally:
        for name, demo in originals.items():
            importlib.import_module(f"{name}.cli").demo = demo
    return out, result, releases


@pytest.fixture
def package_demo(demo_run):
    """``(release, output folder)`` of one package's demo: ``package_demo("tabular")``."""
    out, result, releases = demo_run

    def get(name):
        assert name in releases, result.output
        return releases[name], out / name

    return get


@pytest.fixture(scope="module")
def client():
    """A Dask client on a one-worker in-process cluster for a test module (the tests that
    use it skip themselves without ``distributed``)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0"
    ) as cluster:
        with distributed.Client(cluster) as c:
            yield c
