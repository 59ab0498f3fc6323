"""What ``python run.py`` does with its Hydra config: resolve, run, plot, report.

Exit codes: 0 when every task succeeded; 1 when some tasks failed (their rows are kept and
listed); 2 for a config or data error found before anything ran (the message says what to
fix). In a multirun, a job with failed tasks raises :class:`CellsFailedError` once all its
tasks are done, so the other jobs still run and the sweep ends non-zero.
"""

from __future__ import annotations

import sys
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from experiments.figures import draw_experiment
from experiments.runner import run_experiment
from experiments.spec import resolve_experiment
from privpub.errors import PrivpubError
from privpub.registry import load_plugins

__all__ = ["CellsFailedError", "run_from_config", "spec_from_config"]


class CellsFailedError(PrivpubError):
    """Some tasks of a run failed (their error rows are in the store)."""


def _is_multirun() -> bool:
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN
    except Exception:  # outside Hydra (tests, notebooks)
        return False


def spec_from_config(cfg: DictConfig):
    """The resolved :class:`~experiments.spec.ExperimentSpec` of a composed config."""
    c = OmegaConf.to_container(cfg, resolve=True)
    load_plugins(c.get("plugins") or ())
    return resolve_experiment(
        c["experiment"],
        scale=c["scale"]["name"],
        dataset=c.get("dataset"),
        mechanism=c.get("mechanism"),
    )


def run_from_config(cfg: DictConfig):
    """Run the configured experiment; see the module docstring for exit codes."""
    try:
        spec = spec_from_config(cfg)
        results_dir = Path(cfg.results_dir)
        print(
            f"privpub: {spec.name} [{spec.scale}] — {len(spec.cells)} cell(s) x "
            f"{spec.repetitions} rep(s), metrics {', '.join(spec.metrics)}; n_jobs={cfg.n_jobs}, "
            f"executor={cfg.executor}",
            flush=True,
        )
        summary = run_experiment(
            spec,
            results_dir=results_dir,
            seed=cfg.seed,
            n_jobs=cfg.n_jobs,
            data_dir=cfg.data_dir,
            executor=cfg.executor,
            dask_address=cfg.dask_address,
            allow_download=cfg.allow_download,
            progress=cfg.progress,
            measure_memory=cfg.measure_memory,
            rerun=cfg.rerun,
            plugins=tuple(cfg.plugins or ()),
        )
        print(summary.describe(), flush=True)
        if cfg.plot:
            text = draw_experiment(spec, results_dir)
            if text:
                print(text, flush=True)
    except PrivpubError as exc:
        if _is_multirun():
            raise
        print(f"privpub: error: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    if summary.failed:
        message = f"{len(summary.failures)} task(s) failed:\n{summary.describe()}"
        if _is_multirun():
            raise CellsFailedError(message)
        print(f"privpub: {message}", file=sys.stderr, flush=True)
        sys.exit(1)
    return summary
