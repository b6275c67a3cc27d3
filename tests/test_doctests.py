"""The ``>>>`` examples in roce_tune's docstrings run as doctests (issue 11: docstring examples are real).

One test per module that has examples; an example that needs files outside the package says
``# doctest: +SKIP`` and why.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import roce_tune


def _modules_with_examples() -> list[str]:
    finder = doctest.DocTestFinder()
    names = []
    for info in pkgutil.walk_packages(roce_tune.__path__, "roce_tune."):
        module = importlib.import_module(info.name)
        if any(t.examples for t in finder.find(module, info.name)):
            names.append(info.name)
    return names


MODULES = _modules_with_examples()


def test_examples_exist() -> None:
    # the walk finds the documented modules (guards against a finder that silently finds nothing)
    assert {"roce_tune.units", "roce_tune.tuner.dcqcn", "roce_tune.verify.nccl.loglines"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    # attempted is 0 where every example needs files (``+SKIP``, e.g. roce_tune.inventory.loader)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             report=True, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples in {name} failed"
