"""What the probe tests share (``probes/tests``): whether the real datasets they need are
present, an experiment run at smoke scale, and a speed script of ``benchmarks/`` when a test
compares with it (scripts, not a package, so imported by path; a source checkout only)."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

__all__ = ["load_benchmark", "has_data", "needs_data", "run_at_smoke"]

ROOT = Path(__file__).resolve().parents[1]


@cache
def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (loaded once per process)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def has_data(*names: str) -> bool:
    """True when every file of these real datasets is in the data directory, hash-checked
    (:func:`privpub.data.registry.check_dataset_files`; nothing is parsed). An unknown
    name is an error, not a skip."""
    from privpub.data.registry import check_dataset_files
    from privpub.errors import DataError

    try:
        check_dataset_files(names)
    except DataError:
        return False
    return True


def needs_data(*names: str) -> pytest.MarkDecorator:
    """Skip a test, with the reason, unless :func:`has_data` (``names``)."""
    import pytest

    return pytest.mark.skipif(not has_data(*names),
                              reason=f"needs PRIVPUB_DATA_DIR with {', '.join(names)}")


def run_at_smoke(experiment: str, results_dir: Path):
    """Run ``experiment`` at scale=smoke into ``results_dir`` (one process, no memory
    sampling) and return its spec; the run must not fail."""
    from hydra import compose, initialize_config_dir

    from privpub.experiments.cli import spec_from_config
    from privpub.experiments.runner import run_experiment

    with initialize_config_dir(version_base="1.3", config_dir=str(ROOT / "conf")):
        cfg = compose("config", overrides=[f"experiment={experiment}", "scale=smoke"])
    spec = spec_from_config(cfg)
    summary = run_experiment(spec, results_dir=results_dir, n_jobs=1, executor="sequential",
                             progress=False, measure_memory=False)
    assert not summary.failed, summary.describe()
    return spec
