"""The multirun progress bar knows its total, also for sweeps over a group's options."""

from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import open_dict

from privpub.experiments.cli import spec_from_config
from privpub.experiments.hydra_support import _sweep_tasks

CONF = Path(__file__).resolve().parents[2] / "conf"


def test_sweep_total_counts_every_job_of_a_glob_sweep():
    sweep = ["experiment=glob(qardaji2012_fig*)", "scale=smoke", "mechanism.epsilon=1,2"]
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        cfg = compose(config_name="config", return_hydra_config=True)
        with open_dict(cfg):
            cfg.hydra.overrides.task = sweep  # what Hydra records for `run.py -m <sweep>`
        total = _sweep_tasks(cfg)
        expected = 0
        for name in ["fig1", "fig2", "fig3", "fig4", "fig5"]:
            for eps in [1, 2]:
                job = [f"experiment=qardaji2012_{name}", "scale=smoke", f"mechanism.epsilon={eps}"]
                expected += spec_from_config(
                    compose(config_name="config", overrides=job), overrides=job
                ).n_tasks
    assert total == expected > 0


def test_sweep_jobs_are_every_combination_of_the_swept_values_in_order():
    """What Hydra's basic sweeper launches, computed through Hydra's public override API."""
    from privpub.experiments.hydra_support import sweep_jobs

    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        jobs = sweep_jobs(["scale=smoke", "seed=0,1", "experiment=glob(qardaji2012_fig*)",
                           "+experiment.repetitions=2"])
    assert jobs == [["scale=smoke", f"seed={s}", f"experiment=qardaji2012_fig{f}",
                     "+experiment.repetitions=2"] for s in (0, 1) for f in range(1, 6)]


def test_a_sweeps_union_draws_its_automatic_figures_against_what_the_sweep_varied():
    """After ``-m mechanism.epsilon=0.5,2,8`` each job saw one epsilon, so a metric
    no plot names got a table of one mean per dataset; the union draws it against epsilon."""
    from privpub.experiments.hydra_support import union_specs
    from privpub.experiments.spec import resolve_experiment
    from privpub.experiments.tests.conftest import toy_experiment

    outcomes = []
    for eps in (0.5, 2):
        spec = resolve_experiment(toy_experiment(), scale="paper",
                                  mechanism={"name": None, "epsilon": eps})
        assert [p for p in spec.plots if p.get("auto")][0]["kind"] == "table"
        outcomes.append({"spec": spec.to_dict(), "seed": 0, "results_dir": "r", "code": 0})
    ((merged, *_),) = union_specs(outcomes)
    auto = [p for p in merged.plots if p.get("auto")]
    assert auto == [{"x": "epsilon", "metric": "created_fraction", "auto": True}]


def test_a_sweep_over_seeds_is_one_drawing_of_every_seed():
    """``-m seed=0,1`` drew each seed's union into the same variant directory, the last
    over the first: one figure showed seed 1 only. The jobs of one experiment are one
    drawing whatever their seeds, and the seeds name the variant."""
    from privpub.experiments.cli import variant_slug
    from privpub.experiments.hydra_support import union_specs
    from privpub.experiments.spec import resolve_experiment
    from privpub.experiments.tests.conftest import toy_experiment

    spec = resolve_experiment(toy_experiment(), scale="paper")
    outcomes = [{"spec": spec.to_dict(), "seed": seed, "results_dir": "r", "code": 0}
                for seed in (1, 0)]
    ((merged, seeds, *_),) = union_specs(outcomes)
    assert seeds == [0, 1] and len(merged.cells) == len(spec.cells)
    assert variant_slug(["seed=0,1"], seeds) == "seed=0,1"
    assert variant_slug([], [0, 2]) == "seed=0,2" and variant_slug([], [0]) is None
