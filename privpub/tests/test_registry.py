"""The registry: built-ins from an explicit list of modules (families registered in a loop
included), a lookup that imports only the module registering the name (an index cached on
disk), installed plug-ins found through entry points, and folders that agree with roles."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from privpub import registry
from privpub.errors import ConfigError
from privpub.registry import (
    built_in_mechanisms,
    built_in_modules,
    get_mechanism,
    mechanisms,
    metrics,
)
from privpub.tests import plugin_dist
from privpub.tests.plugin_dist import MECHANISM

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
    """``toyplug`` with a top-level module and a sub-package's module registering names."""
    root = tmp_path / "toyplug"
    for folder in (root, root / "sub"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (root / "top.py").write_text(textwrap.dedent(REGISTERING.format(name="toy_top")))
    (root / "sub" / "deep.py").write_text(textwrap.dedent(REGISTERING.format(name="toy_deep")))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "toyplug"
    for name in [m for m in sys.modules if m == "toyplug" or m.startswith("toyplug.")]:
        del sys.modules[name]
    for name in ("toy_top", "toy_deep"):
        registry._MECHANISMS.pop(name, None)


@pytest.fixture
def install(tmp_path, monkeypatch):
    """``install(name, entry_points, files)`` puts a distribution on ``sys.path`` as pip
    would; everything it registered is forgotten afterwards."""
    yield lambda *args: plugin_dist.install(monkeypatch, tmp_path, *args)
    plugin_dist.uninstall(tmp_path)


# --------------------------------------------------------------------------- built-ins
def _package_modules(package: str):
    """Every module of ``package`` but its tests and private ones, sub-packages included."""
    root = importlib.import_module(package)
    for mod in pkgutil.walk_packages(root.__path__, prefix=package + "."):
        parts = mod.name.split(".")[2:]
        if not any(p.startswith(("_", "test")) for p in parts):
            yield mod.name


def test_every_module_that_registers_is_listed_and_every_listed_module_registers():
    """A registering module left out of its package's ``MODULES`` would be found by no
    lookup; a listed module that registers nothing is a stale entry."""
    for package in registry.BUILT_IN_PACKAGES:
        for module in _package_modules(package):
            importlib.import_module(module)
    listed = set(built_in_modules())
    infos = [*registry._MECHANISMS.values(), *registry._METRICS.values()]
    by = {i.registered_by for i in infos}
    unlisted = sorted(m for m in by if m.startswith(registry.BUILT_IN_PACKAGES) and
                      m not in listed)
    assert not unlisted, f"add them to their package's MODULES: {unlisted}"
    assert listed <= by, f"listed, registering nothing: {sorted(listed - by)}"


@pytest.mark.parametrize("what", ["mechanism", "metric"])
def test_the_index_names_the_module_registering_each_built_in_name(what):
    table = mechanisms() if what == "mechanism" else metrics()
    listed = set(built_in_modules())
    expected = {n: i.registered_by for n, i in table.items() if i.registered_by in listed}
    assert registry._index()[what] == expected
    if what == "mechanism":
        assert registry._index()["parameters"] == {
            n: list(table[n].parameters) for n in expected}


def test_the_index_names_sub_package_modules_and_families_registered_in_a_loop():
    found = registry._index()["mechanism"]
    assert found["rps_table"] == "privpub.mechanisms.rps.table"
    assert found["rps_degree_sequence_removal_only"] == "privpub.mechanisms.rps.removal_only"
    from privpub.mechanisms import theta_cumulative, theta_histogram

    for module in (theta_histogram, theta_cumulative):
        assert set(module.VARIANTS) == set(module.FAMILY)
        assert {found[n] for n in module.FAMILY} == {module.__name__}


def test_the_theta_families_keep_their_names_signatures_and_claims():
    """The loop registers what the copy-pasted wrappers did (same names, parameters,
    notions and caveats: results do not change)."""
    same = {"epsilon": registry.inspect.Parameter.empty, "theta_max": 200, "tail": "linear",
            "order": "lexicographic"}
    private = {"theta_omega_histogram", "theta_histogram", "theta_cumulative_histogram",
               "theta_constrained"}
    for name in [*private, "theta_omega_histogram_qbest", "theta_omega_histogram_oracle",
                 "theta_cumulative_qbest", "theta_cumulative_oracle"]:
        info = get_mechanism(name)
        assert info.parameters == same and info.func.__name__ == name
        assert info.is_dp == (name in private) and (info.caveat is None) == (name in private)
        assert (info.unranked is None) == (name in private)


def test_a_lookup_imports_only_the_module_that_registers_the_name(tmp_path):
    """In a fresh process with a cold, then a warm index: a family member registered in a
    loop is found, and the warm lookup imports no other mechanism's module."""
    code = textwrap.dedent("""
        import json, sys
        from privpub.registry import get_mechanism
        info = get_mechanism("theta_cumulative_oracle")
        print(json.dumps([info.registered_by, sorted(m for m in sys.modules if m.startswith(
            ("privpub.mechanisms.", "privpub.baselines.", "privpub.metrics.", "sklearn")))]))
    """)
    env = {**os.environ, "PRIVPUB_CACHE_DIR": str(tmp_path)}
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    assert [r[0] for r in runs] == ["privpub.mechanisms.theta_cumulative"] * 2
    assert len(list((tmp_path / "registry").glob("index-*.json"))) == 1
    cold, warm = runs[0][1], runs[1][1]
    assert "privpub.baselines.flowgraph" in cold  # the cold lookup built the index
    assert "privpub.mechanisms.theta_cumulative" in warm
    assert not [m for m in warm if m.startswith(("privpub.baselines.", "privpub.metrics.",
                                                  "privpub.mechanisms.rps", "sklearn"))]


def test_the_index_key_follows_the_files(tmp_path, monkeypatch):
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n")
    monkeypatch.setattr(registry, "_source_files", lambda modules: [source])
    key = registry._index_key(())
    assert registry._index_key(()) == key
    source.write_text("x = 12\n")
    assert registry._index_key(()) != key
    source.unlink()
    assert registry._index_key(()) is None  # a missing file: no cached index


def test_a_stale_index_costs_time_not_a_wrong_answer(toy_package, monkeypatch):
    monkeypatch.setattr(registry, "_index", lambda: {
        "mechanism": {"toy_top": "toyplug.sub.deep"}, "metric": {}, "parameters": {}})
    monkeypatch.setattr(registry, "built_in_modules", lambda: ("toyplug.sub.deep", "toyplug.top"))
    monkeypatch.setattr(registry, "_loaded", False)
    assert get_mechanism("toy_top").registered_by == "toyplug.top"


HELPER = """
    import numpy as np
    from privpub.registry import NO_PRIVACY, register_mechanism
    from privpub.types import Kind


    def make(name):
        def toy(graph, *, rng: np.random.Generator):
            return graph

        return register_mechanism(name, input_kind=Kind.GRAPH, output_kind=Kind.GRAPH,
                                  privacy=NO_PRIVACY)(toy)
"""


def test_a_module_registering_through_a_helper_is_the_registering_module(toy_package, tmp_path):
    """A lookup must import the module whose import registers the name, not the helper's."""
    (tmp_path / "toyplug" / "helper.py").write_text(textwrap.dedent(HELPER))
    (tmp_path / "toyplug" / "user.py").write_text(
        "from toyplug.helper import make\n\nmake('toy_helper')\n")
    importlib.invalidate_caches()
    importlib.import_module("toyplug.user")
    info = registry._MECHANISMS.pop("toy_helper")
    assert info.registered_by == "toyplug.user" and info.func.__module__ == "toyplug.helper"


# --------------------------------------------------------------------------- entry points
def test_an_installed_plugin_is_found_by_name_and_listed(install):
    install("toy-privpub-plugin", {"privpub.mechanisms": {"toy": "toy_privpub_plugin.mech"}},
            {"toy_privpub_plugin/__init__.py": "", "toy_privpub_plugin/mech.py": MECHANISM})
    info = get_mechanism("toy_node_count_histogram")
    assert info.registered_by == "toy_privpub_plugin.mech" and info.is_dp
    assert "toy_node_count_histogram" in mechanisms()
    assert "toy_node_count_histogram" not in built_in_mechanisms()
    from privpub.data import load_dataset

    out = info.func(load_dataset("karate"), epsilon=1.0, rng=np.random.default_rng(0))
    assert out.counts.shape == (9,) and out.counts[0] == 0


def test_a_broken_entry_point_is_one_line_naming_its_distribution(install):
    install("toy-broken-plugin", {"privpub.mechanisms": {"broken": "toy_no_such_module"}}, {})
    with pytest.raises(ConfigError) as err:
        get_mechanism("toy_not_registered_anywhere")
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    for part in ("'broken'", "toy-broken-plugin 0.1", "privpub.mechanisms",
                 "No module named 'toy_no_such_module'"):
        assert part in message, (part, message)
    with pytest.raises(ConfigError, match="toy-broken-plugin"):
        mechanisms()


def test_a_plugin_raising_on_import_says_where(install):
    install("toy-raising-plugin", {"privpub.metrics": {"bad": "toy_raising.metric"}},
            {"toy_raising/__init__.py": "",
             "toy_raising/metric.py": "x = 1\nraise RuntimeError('no')\n"})
    with pytest.raises(ConfigError, match=r"RuntimeError: no \(at .*metric.py, line 2\)"):
        registry.get_metric("toy_unknown_metric")


# --------------------------------------------------------------------------- roles
#: Registered under mechanisms/ with role "baseline": the global-sensitivity variants share
#: their module (and most of their code) with the paper's mechanism; the registry's ``role``
#: is what the runner and the figures read.
BASELINES_IN_MECHANISMS = {"global_diffpid3", "global_priv_topk"}


def test_folders_agree_with_roles():
    """A mechanism registered under ``baselines/`` is a baseline or a reference, one under
    ``mechanisms/`` a mechanism; the registry's ``role`` is the source of truth and the
    exceptions are listed (:data:`BASELINES_IN_MECHANISMS`)."""
    wrong = []
    for name, info in built_in_mechanisms().items():
        folder = info.registered_by.split(".")[1]
        if folder == "baselines" and info.role not in ("baseline", "reference"):
            wrong.append((name, folder, info.role))
        if folder == "mechanisms" and info.role != "mechanism":
            if name not in BASELINES_IN_MECHANISMS:
                wrong.append((name, folder, info.role))
    assert not wrong
    for name in BASELINES_IN_MECHANISMS:
        assert get_mechanism(name).role == "baseline", name


def test_registration_keywords_are_checked():
    def toy(graph, *, epsilon, k=1, rng, ledger=None):
        return graph

    kinds = {"input_kind": "graph", "output_kind": "graph", "privacy": "edge-DP"}
    for bad in ({"audit": {"cost": 1}}, {"audit": {"configurations": [{"epsilon": 2}]}},
                {"audit": {"configurations": [{"nope": 1}]}}, {"audit": {"cost_ms": 0}},
                {"blind_spot": {"nope=1": "why"}}, {"blind_spot": {"k=1": ""}},
                {"caveat_summary": "a summary of no caveat"}, {"unranked": ""}):
        with pytest.raises(ConfigError):
            registry.register_mechanism("toy_checked", **kinds, **bad)(toy)
    assert "toy_checked" not in registry._MECHANISMS
    registry.register_mechanism("toy_checked", **kinds, caveat="c", blind_spot={"k=2": "w"},
                                audit={"configurations": [{"k": 2}]})(toy)
    stored = registry._MECHANISMS.pop("toy_checked")  # a blind spot by configuration label
    assert stored.blind_spots == {"toy_checked k=2": "w"}
    assert stored.audit == {"configurations": ({"k": 2},)}
