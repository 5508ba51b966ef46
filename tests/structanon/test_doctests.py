"""The examples in the core's docstrings run as written."""

import doctest
import importlib

import pytest

MODULES = ["errors", "hierarchy", "partition", "distances", "models", "metrics", "risk", "io", "release",
           "_validation", "_finish", "microaggregation"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"structanon.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 or name == "release"
    assert result.failed == 0
