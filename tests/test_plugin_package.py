"""A plug-in published as its own package is found with no flag: by ``privpub show``, by
``privpub audit``, by a run and its worker processes (``mechanism=`` and ``dataset=`` of the
plug-in's), in fresh processes as a user runs them. The distribution is written as pip
installs one (``privpub.tests.plugin_dist``); the slow test really pip-installs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from privpub.tests import plugin_dist

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A folder holding an installed distribution with a mechanism and a dataset plug-in."""
    return plugin_dist.write_distribution(tmp_path_factory.mktemp("site"), "toy-privpub-lab", {
        "privpub.mechanisms": {"mech": "toy_lab.mech"},
        "privpub.datasets": {"ring": "toy_lab.data"},
    }, {"toy_lab/__init__.py": "", "toy_lab/mech.py": plugin_dist.MECHANISM,
        "toy_lab/data.py": plugin_dist.DATASET})


def _run(args, site, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_show_and_audit_find_an_installed_mechanism_and_dataset(site, tmp_path):
    privpub = [sys.executable, "-m", "privpub.experiments.console"]
    shown = _run([*privpub, "show", "toy_node_count_histogram"], site, tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "toy_lab/mech.py" in shown.stdout and "node-DP" in shown.stdout
    assert _run([*privpub, "show", "toy_ring"], site, tmp_path).returncode == 0
    audited = _run([*privpub, "audit", "--quick", "toy_node_count_histogram", "--json",
                    "--results-dir", str(tmp_path / "r")], site, tmp_path)
    assert audited.returncode == 0, audited.stderr
    (record,) = json.loads(audited.stdout)["audits"]
    assert record["mechanism"] == "toy_node_count_histogram" and record["verdict"] != "violated"


def test_a_run_and_its_workers_use_an_installed_mechanism_and_dataset(site, tmp_path):
    """``mechanism=`` and ``dataset=`` name the plug-in's (no YAML, no plugins=), and the
    worker processes find it by name too."""
    proc = _run([sys.executable, str(ROOT / "run.py"), "experiment=day2016_fig3", "scale=smoke",
                 "mechanism=toy_node_count_histogram", "dataset=toy_ring", "dataset.n=30",
                 "n_jobs=2", "executor=process", "progress=false", "plot=false",
                 f"results_dir={tmp_path / 'r'}"], site, tmp_path)
    assert proc.returncode == 0, proc.stderr
    from privpub.experiments.runner import store_dir
    from privpub.experiments.store import ResultStore

    rows = ResultStore(store_dir(tmp_path / "r", "day2016_fig3", "smoke") / "store").load()
    assert set(rows["mechanism"]) == {"toy_node_count_histogram"}
    assert set(rows["dataset"]) == {"toy_ring"} and set(rows["status"]) == {"ok"}


@pytest.mark.slow
def test_a_plugin_package_installed_with_pip_is_found(tmp_path):
    """The researcher's path: a package with a ``privpub.mechanisms`` entry point in its
    pyproject, installed with pip (into a target folder, no dependencies), then found by
    ``privpub show`` with no flag."""
    source = tmp_path / "toy-plug"
    (source / "toy_plug").mkdir(parents=True)
    (source / "pyproject.toml").write_text(plugin_dist.PYPROJECT)
    (source / "toy_plug" / "__init__.py").write_text("")
    (source / "toy_plug" / "mech.py").write_text(plugin_dist.MECHANISM)
    target = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                          "--target", str(target), str(source)],
                         capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        pytest.skip(f"pip cannot build the package here: {pip.stderr.strip()[-300:]}")
    shown = _run([sys.executable, "-m", "privpub.experiments.console", "show",
                  "toy_node_count_histogram"], target, tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "toy_plug/mech.py" in shown.stdout
