"""Test-suite wide settings: hypothesis without deadlines (CI machines are shared).

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
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="run the fuzz suite (tests/fuzz) with thousands of random examples "
                          "instead of a few hundred derandomized ones")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fuzz: generated bad inputs through every command and public function")
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
