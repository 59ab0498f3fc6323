"""Every shipped experiment runs end to end at ``scale=smoke`` and draws its figures/tables.

This is what keeps each paper's reproduction runnable: a renamed parameter, a metric that
does not fit, a plot asking for rows no trial writes, all fail here within seconds.
"""

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from privpub.experiments.cli import spec_from_config
from privpub.experiments.figures import draw_experiment
from privpub.experiments.runner import run_experiment

CONF = Path(__file__).resolve().parents[1] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiment_runs_at_smoke_scale(experiment, tmp_path):
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        cfg = compose("config", overrides=[f"experiment={experiment}", "scale=smoke"])
    spec = spec_from_config(cfg)
    summary = run_experiment(
        spec,
        results_dir=tmp_path,
        n_jobs=1,
        executor="sequential",
        progress=False,
        measure_memory=False,  # tracemalloc slows numba's first compilation ~2.5x
    )
    assert not summary.failed, summary.describe()
    assert summary.n_ok == len(spec.cells) * spec.repetitions
    draw_experiment(spec, tmp_path)
    out = tmp_path / experiment / "smoke"
    drawn = list(out.glob("*.png")) + list(out.glob("*.csv"))
    assert len(drawn) >= 1, f"{experiment} drew nothing"
    text = (out / "summary.md").read_text()
    assert "##" in text
    claims = json.loads((out / "claims.json").read_text())
    assert all(c["subject"] and f"| {c['subject']} |" in text for c in claims)  # which series
