"""Hydra integration: redraw every swept experiment's figures when a multirun ends.

Multirun jobs may run in parallel (joblib / SLURM launchers), each writing into the same
result store; each job draws figures from what is stored when it finishes, so the last
picture could miss a job that finished at the same time. This callback redraws once,
after all jobs.
"""

from __future__ import annotations

from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

__all__ = ["RedrawAfterMultirun"]


class RedrawAfterMultirun(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        if not config.get("plot", True):
            return
        from experiments.cli import spec_from_config
        from experiments.figures import draw_experiment

        try:
            spec = spec_from_config(config)
        except Exception:  # a bad sweep already reported its own error
            return
        draw_experiment(spec, Path(config.results_dir))
