"""A multirun is checked whole before its first job (each error said once); its progress
bar knows its total, also for sweeps over a group's options."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import open_dict

from privpub.experiments import app
from privpub.experiments.cli import spec_from_config
from privpub.experiments.hydra_support import check_sweep

CONF = Path(__file__).resolve().parents[2] / "conf"


def test_sweep_total_counts_every_job_of_a_glob_sweep():
    sweep = ["experiment=glob(qardaji2012_fig*)", "scale=smoke", "mechanism.epsilon=1,2"]
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        cfg = compose(config_name="config", return_hydra_config=True)
        with open_dict(cfg):
            cfg.hydra.overrides.task = sweep  # what Hydra records for `run.py -m <sweep>`
        jobs = check_sweep(cfg)
        assert not any(j.error for j in jobs)
        assert jobs[0].label == "#0 (experiment=qardaji2012_fig1 mechanism.epsilon=1)"
        total = sum(j.spec.n_trials for j in jobs)
        expected = 0
        for name in ["fig1", "fig2", "fig3", "fig4", "fig5"]:
            for eps in [1, 2]:
                job = [f"experiment=qardaji2012_{name}", "scale=smoke", f"mechanism.epsilon={eps}"]
                expected += spec_from_config(
                    compose(config_name="config", overrides=job), overrides=job
                ).n_trials
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


# ------------------------------------------------------------------ errors before work
def _sweep(capsys, *argv) -> tuple[int, str]:
    """``python run.py -m <argv> progress=false`` in this process: (exit code, stderr)."""
    code = app.run(["-m", *argv, "progress=false"])
    return code, capsys.readouterr().err


def test_a_sweep_missing_data_files_stops_before_any_job_naming_each_file_once(
        tmp_path, capsys):
    """A sweep over datasets with two files missing ran the good jobs, then printed the
    same data error once per job that needed the file. Now no job runs (not even the
    karate ones, which need no file) and each file is named once, with the jobs it stops."""
    empty, results = tmp_path / "no_data", tmp_path / "res"
    empty.mkdir()
    code, err = _sweep(capsys, "experiment=qardaji2012_fig4", "scale=smoke",
                       "dataset=karate,email_enron,wiki_vote", "seed=0,1",
                       f"data_dir={empty}", f"results_dir={results}")
    assert code == 2 and "Traceback" not in err
    assert err.count("privpub: error:") == 1, err
    assert "privpub: error: 4 of the 6 jobs cannot run, so none was started:" in err
    assert ("  #2 (dataset=email_enron seed=0), #3 (dataset=email_enron seed=1): needs "
            "email_enron, whose data files are missing or corrupt (below)") in err
    assert "#4 (dataset=wiki_vote seed=0), #5 (dataset=wiki_vote seed=1): needs wiki_vote" in err
    assert "#0" not in err and "#1" not in err  # the karate jobs could run
    assert err.count("email-Enron/email-Enron.txt.gz  [MISSING]") == 1
    assert err.count("wiki-Vote/Wiki-Vote.txt  [MISSING]") == 1
    assert err.count("To fix:") == 1
    assert not (results / "qardaji2012_fig4").exists()  # no job started


def test_a_sweeps_config_errors_are_each_said_once_before_any_job_runs(tmp_path, capsys):
    """A bad value in one job, a mechanism whose output fits no metric in another: the
    good job does not run either, and each error is one line naming its jobs."""
    code, err = _sweep(capsys, "experiment=qardaji2012_fig4", "scale=smoke",
                       "add_mechanisms=[],[global_priv_topk]", "mechanism.epsilon=1,-1",
                       f"results_dir={tmp_path}")
    assert code == 2 and "Traceback" not in err
    assert err.count("privpub: error:") == 1, err
    assert "3 of the 4 jobs cannot run, so none was started" in err
    assert ("  #1 (add_mechanisms=[] mechanism.epsilon=-1), #3 (add_mechanisms=[global_priv_topk]"
            " mechanism.epsilon=-1): mechanism 'rps_degree_sequence': epsilon must be a finite "
            "number > 0, got -1.0") in err
    assert ("  #2 (add_mechanisms=[global_priv_topk] mechanism.epsilon=1): metric 'ks' does not "
            "fit mechanism 'global_priv_topk'") in err
    assert err.count("epsilon must be") == 1
    assert not (tmp_path / "qardaji2012_fig4").exists()
    code, err = _sweep(capsys, "experiment=qardaji2012_fig4", "scale=smoke", "seed=-1,-2",
                       f"results_dir={tmp_path}")
    assert code == 2 and "none of the 2 jobs can run:" in err
    assert "  #0 (seed=-1): seed must be" in err and "  #1 (seed=-2): seed must be" in err


@pytest.mark.parametrize("stored", [True, False])
def test_a_missing_dataset_stops_a_job_only_if_a_trial_still_needs_it(
        tmp_path, monkeypatch, stored):
    """As a run checks only the files of the trials it still has to compute, a job whose
    trials on a dataset with a missing file are all stored is not stopped (the store is
    read only when a file is missing)."""
    from privpub.experiments import preflight
    from privpub.experiments.preflight import Job, check_data, report
    from privpub.experiments.runner import run_experiment
    from privpub.experiments.spec import resolve_experiment
    from privpub.experiments.tests.conftest import toy_experiment

    spec = resolve_experiment(toy_experiment(repetitions=1), scale="paper")
    if stored:
        run_experiment(spec, results_dir=tmp_path, progress=False, executor="sequential")
    job = Job("#0", spec, results_dir=str(tmp_path))
    assert check_data([job]) == [] and job.needs == []  # sbm_small: no file to miss
    # as if sbm_small's file were missing (its own check then finds it synthetic: no message)
    monkeypatch.setattr(preflight, "_bad_datasets", lambda names, data_dir: {"sbm_small"})
    check_data([job])
    assert job.needs == ([] if stored else ["sbm_small"])
    assert (report([job]) is None) == stored
