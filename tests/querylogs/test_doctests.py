"""The examples in the querylogs docstrings run as written."""

import doctest
import importlib

import pytest

MODULES = ["_anonymize", "_multisets", "_verify", "grouping", "identifiers", "intents", "io", "metrics",
           "microaggregation", "risk", "synthetic"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"querylogs.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
