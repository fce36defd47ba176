"""Every public function and class has a docstring with a runnable example, and the examples pass.

For each module below and each name in its ``__all__``: (1) a function or class must have a
docstring containing a ``>>>`` example (exception classes are exempt: they document when they are
raised, and ``optmech.errors`` is not among these modules; constants and type aliases are not
checked); (2) every doctest found in the module (module docstring, functions, classes, methods)
runs with ``ELLIPSIS | NORMALIZE_WHITESPACE`` and globals ``optmech`` and ``np`` added, and must pass.

The whole file runs in a few seconds: examples use tiny problems (ε = 1, Δ = 1, integer lattices).
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import numpy as np
import pytest

import optmech

#: The modules of the public API, each checked and run separately.
MODULES = ["optmech", "optmech.spec", "optmech.drive", "optmech.result", "optmech.mechanisms", "optmech.costs",
           "optmech.plots", "optmech.compare", "optmech.store", "optmech.table", "optmech.sweep", "optmech.workers",
           "optmech.inputs", "optmech.exact", "optmech.recommendation", "optmech.interop.opendp",
           "optmech.interop.accounting"]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def public_callables(module) -> list[tuple[str, object]]:
    """(name, object) for the functions and classes of ``module.__all__`` (exceptions excluded)."""
    out = []
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            continue
        if inspect.isclass(obj) or inspect.isroutine(obj):
            out.append((name, obj))
    return out


def missing_examples(module) -> list[str]:
    """Names of ``module.__all__`` whose function or class has no ``>>>`` example."""
    out = []
    for name, obj in public_callables(module):
        if ">>>" not in (obj.__doc__ or ""):
            out.append(name)
    return out


def collect_doctests(module) -> list[doctest.DocTest]:
    """The module's own doctests, those of every object in its ``__all__`` (re-exports included:
    a package's names are defined in its submodules) and, for a package, its submodules'."""
    import pkgutil

    finder = doctest.DocTestFinder(exclude_empty=True)
    extra = {"optmech": optmech, "np": np}
    tests = list(finder.find(module, module.__name__, extraglobs=extra))
    for name, obj in public_callables(module):
        home = inspect.getmodule(obj)
        if home is None or module.__name__ == "optmech" and home.__name__ in MODULES:
            continue  # a facade name: its own module runs it
        tests += finder.find(obj, f"{home.__name__}.{name}", module=home, extraglobs=extra)
    if hasattr(module, "__path__") and module.__name__ != "optmech":
        for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
            tests += finder.find(importlib.import_module(info.name), info.name, extraglobs=extra)
    seen, unique = set(), []
    for t in tests:
        key = (t.filename, t.lineno, t.name.rsplit(".", 1)[-1])
        if t.examples and key not in seen:
            seen.add(key)
            unique.append(t)
    return unique


def run_doctests(module) -> tuple[int, int, str]:
    """(attempted, failed, report) for every doctest of ``module`` (see :func:`collect_doctests`)."""
    import io

    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    for test in collect_doctests(module):
        runner.run(test, out=out.write)
    res = runner.summarize(verbose=False)
    return res.attempted, res.failed, out.getvalue()


def _module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - an optional module's dependency is missing
        pytest.skip(f"{name} cannot be imported here: {exc}")


@pytest.mark.parametrize("name", MODULES)
def test_every_public_name_has_an_example(name):
    module = _module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    assert missing_examples(module) == []


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name):
    attempted, failed, report = run_doctests(_module(name))
    assert failed == 0, report
    assert attempted > 0


@pytest.mark.parametrize("name", ["optmech.problems", "optmech.families"])
def test_builder_and_family_doctests_pass(name):
    """The builders' and families' examples run too (they need not cover every name)."""
    attempted, failed, report = run_doctests(_module(name))
    assert failed == 0, report
    assert attempted > 0
