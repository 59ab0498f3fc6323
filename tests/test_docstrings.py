"""Every docstring example of the installed package runs and gives what it shows.

The modules are imported by their names in the ``privpub`` namespace (pytest's own
``--doctest-modules`` would import ``mechanisms/x.py`` as a second module ``mechanisms.x``
beside ``privpub.mechanisms.x``, registering its mechanisms twice).
"""

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

#: privpub's folders outside privpub/ in a checkout (pyproject.toml's package-dir), which a
#: walk of ``privpub.__path__`` does not see in an editable install
MAPPED = ("experiments", "mechanisms", "baselines", "metrics", "plots", "probes")


def _modules() -> list[str]:
    names = set()
    for package in ("privpub", *(f"privpub.{m}" for m in MAPPED)):
        path = importlib.import_module(package).__path__
        names |= {package, *(i.name for i in pkgutil.walk_packages(path, f"{package}."))}
    return sorted(n for n in names if ".tests" not in n)


def _with_examples() -> list[str]:
    found = []
    finder = doctest.DocTestFinder()
    for name in _modules():
        origin = importlib.util.find_spec(name).origin or ""
        if not origin.endswith(".py") or ">>>" not in Path(origin).read_text(encoding="utf-8"):
            continue  # no example: not worth importing
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional dependency (e.g. the reference extra) is missing
            continue
        if any(test.examples for test in finder.find(module)):
            found.append(name)
    return found


MODULES = _with_examples()


def test_the_examples_are_found():
    assert {"privpub.ledger", "privpub.mechanisms.rps.framework",
            "privpub.baselines.mondrian"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
