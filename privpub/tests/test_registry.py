"""The registry finds and imports what registers a name, sub-packages included, and the
folders agree with the registered roles."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from privpub import registry
from privpub.registry import _index, _scan, get_mechanism, mechanisms

REGISTERING = """
    import numpy as np
    from privpub.registry import NO_PRIVACY, register_mechanism
    from privpub.types import Kind


    @register_mechanism({name!r}, input_kind=Kind.GRAPH, output_kind=Kind.GRAPH,
                        privacy=NO_PRIVACY)
    def toy(graph, *, rng: np.random.Generator):
        return graph
"""


@pytest.fixture
def toy_package(tmp_path, monkeypatch):
    """``toyplug`` with a top-level module and a sub-package's module registering names,
    and a ``tests`` sub-package that must be left alone."""
    root = tmp_path / "toyplug"
    for folder in (root, root / "sub", root / "tests"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (root / "top.py").write_text(textwrap.dedent(REGISTERING.format(name="toy_top")))
    (root / "sub" / "deep.py").write_text(textwrap.dedent(REGISTERING.format(name="toy_deep")))
    (root / "tests" / "fixture.py").write_text(
        textwrap.dedent(REGISTERING.format(name="toy_test")))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "toyplug"
    for name in [m for m in sys.modules if m == "toyplug" or m.startswith("toyplug.")]:
        del sys.modules[name]
    for name in ("toy_top", "toy_deep", "toy_test"):
        registry._MECHANISMS.pop(name, None)


def test_scan_finds_names_registered_in_sub_packages(toy_package):
    found = _scan([toy_package])["mechanism"]
    assert found == {"toy_top": "toyplug.top", "toy_deep": "toyplug.sub.deep"}


def test_import_tree_imports_sub_packages_and_skips_tests(toy_package):
    registry._import_tree(toy_package)
    assert "toyplug.sub.deep" in sys.modules and "toyplug.tests.fixture" not in sys.modules
    assert {"toy_top", "toy_deep"} <= set(registry._MECHANISMS)
    assert "toy_test" not in registry._MECHANISMS


def test_the_index_names_the_rps_sub_modules():
    found = _index()["mechanism"]
    assert found["rps_table"] == "privpub.mechanisms.rps.table"
    assert found["rps_degree_sequence"] == "privpub.mechanisms.rps.degree"
    assert found["rps_degree_sequence_removal_only"] == "privpub.mechanisms.rps.removal_only"


@pytest.mark.parametrize("what", ["mechanism", "metric"])
def test_every_indexed_module_registers_its_names(what):
    table = registry._MECHANISMS if what == "mechanism" else registry._METRICS
    for name, module in _index()[what].items():
        importlib.import_module(module)
        assert name in table, (name, module)
        assert table[name].func.__module__ == module, name


def test_lookup_by_name_imports_the_registering_sub_module():
    info = get_mechanism("rps_degree_sequence_removal_only")
    assert info.func.__module__ == "privpub.mechanisms.rps.removal_only"


#: Registered under mechanisms/ with role "baseline": the global-sensitivity variants share
#: their module (and most of their code) with the paper's mechanism; the registry's ``role``
#: is what the runner and the figures read.
BASELINES_IN_MECHANISMS = {"global_diffpid3", "global_priv_topk"}


def test_folders_agree_with_roles():
    """A mechanism registered under ``baselines/`` is a baseline or a reference, one under
    ``mechanisms/`` a mechanism; the registry's ``role`` is the source of truth and the
    exceptions are listed (:data:`BASELINES_IN_MECHANISMS`)."""
    wrong = []
    for name, info in mechanisms().items():
        folder = info.func.__module__.split(".")[1]
        if folder == "baselines" and info.role not in ("baseline", "reference"):
            wrong.append((name, folder, info.role))
        if folder == "mechanisms" and info.role != "mechanism":
            if name not in BASELINES_IN_MECHANISMS:
                wrong.append((name, folder, info.role))
    assert not wrong
    for name in BASELINES_IN_MECHANISMS:
        assert get_mechanism(name).role == "baseline", name
