"""A plug-in distribution as pip installs one, for the tests: its modules and its
``<name>-<version>.dist-info`` (``METADATA``, ``entry_points.txt``) in a folder that goes on
``sys.path``, where :mod:`importlib.metadata` finds its entry points (no pip, no network).
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

__all__ = ["MECHANISM", "DATASET", "TASK", "PYPROJECT", "write_distribution", "install",
           "uninstall"]

#: A node-DP mechanism as a plug-in module: a degree histogram that knows only the node count
#: (one node more or fewer moves it by one: sensitivity 1), spread over public bins.
MECHANISM = textwrap.dedent('''
    import numpy as np

    from privpub.noise import laplace_mechanism
    from privpub.registry import NODE_DP, register_mechanism
    from privpub.types import DegreeHistogram, Kind


    @register_mechanism("toy_node_count_histogram", input_kind=Kind.GRAPH,
                        output_kind=Kind.DEGREE_HISTOGRAM, privacy=NODE_DP,
                        source="a test plug-in", audit={"cost_ms": 0.5})
    def toy_node_count_histogram(graph, *, epsilon, max_degree: int = 8, rng, ledger=None):
        """The node count plus Lap(1/epsilon), spread evenly over the public bins
        1..max_degree: node-DP, and useless."""
        n = laplace_mechanism(float(graph.n_nodes), sensitivity=1.0, epsilon=epsilon, rng=rng,
                              ledger=ledger, label="node count")
        return DegreeHistogram(np.r_[0.0, np.full(max_degree, max(float(n), 0.0) / max_degree)])
''')

#: A dataset plug-in module: a synthetic ring.
DATASET = textwrap.dedent('''
    from privpub.data import DatasetSpec, register_dataset
    from privpub.types import Graph, Kind


    def ring(*, rng, n=12):
        return Graph.from_edges([(i, (i + 1) % n) for i in range(n)], n, name="toy_ring")


    register_dataset(DatasetSpec("toy_ring", Kind.GRAPH, "a ring (a test plug-in)",
                                 synthetic=True, defaults={"n": 12}, loader=ring))
''')

#: A leaderboard task file of a task plug-in.
TASK = textwrap.dedent('''
    name: toy_plugin_task
    title: "A plug-in's task: node-DP degree histograms of a ring"
    input_kind: graph
    output_kinds: [degree_histogram]
    notions: [node-DP]
    metric: l1
    datasets: [toy_ring]
    grid: {epsilon: [1.0]}
    repetitions: 1
''')

#: The ``pyproject.toml`` of a real package holding :data:`MECHANISM` as ``toy_plug/mech.py``
#: (what a researcher publishes; the slow test installs it with pip).
PYPROJECT = textwrap.dedent('''
    [build-system]
    requires = ["setuptools>=61"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "toy-plug"
    version = "0.1"
    dependencies = ["privpub"]

    [project.entry-points."privpub.mechanisms"]
    toy_node_count_histogram = "toy_plug.mech"

    [tool.setuptools]
    packages = ["toy_plug"]
''')


def write_distribution(root: Path, name: str, entry_points: dict[str, dict[str, str]],
                       files: dict[str, str], version: str = "0.1") -> Path:
    """Write the distribution ``name`` into ``root`` (put ``root`` on ``sys.path``):
    ``files`` (path relative to ``root`` -> text) and its ``.dist-info`` with
    ``entry_points`` (group -> {entry point name: value}). Returns ``root``."""
    root = Path(root)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in entry_points.items()), encoding="utf-8")
    return root


def install(monkeypatch, root: Path, name: str, entry_points: dict[str, dict[str, str]],
            files: dict[str, str]) -> Path:
    """:func:`write_distribution` and put ``root`` on ``sys.path`` for the test
    (``monkeypatch``); :func:`uninstall` forgets what it registered."""
    write_distribution(root, name, entry_points, files)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    return root


def uninstall(root: Path) -> None:
    """Forget the modules imported from ``root`` and the mechanisms, metrics and datasets
    they registered, and the loaded entry points."""
    from privpub import plugins, registry
    from privpub.data import registry as data_registry

    gone = {m for m, mod in sys.modules.items()
            if str(getattr(mod, "__file__", "") or "").startswith(str(root))}
    for module in gone:
        del sys.modules[module]
    for table in (registry._MECHANISMS, registry._METRICS):
        for key in [k for k, info in table.items() if info.registered_by in gone]:
            del table[key]
    for key in [k for k, spec in data_registry._DATASETS.items()
                if getattr(spec.loader, "__module__", None) in gone]:
        del data_registry._DATASETS[key]
    plugins._LOADED.clear()
