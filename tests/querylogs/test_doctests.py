"""The examples in the querylogs docstrings run as written (every module of the package)."""

import doctest
import importlib
import pkgutil

import pytest

import querylogs

MODULES = sorted(info.name for info in pkgutil.iter_modules(querylogs.__path__))


def test_every_module_is_listed():
    assert {
        "_anonymize",
        "_grouping",
        "_intents",
        "_identifiers",
        "_verify",
        "_figures",
        "cli",
        "io",
    } <= set(MODULES)


@pytest.mark.parametrize("name", ["__init__", *MODULES])
def test_docstring_examples(name):
    module = querylogs if name == "__init__" else importlib.import_module(f"querylogs.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
