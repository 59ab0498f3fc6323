"""`python run.py` end to end (subprocesses, scale=smoke): the commands the README shows."""

import subprocess
import sys
from pathlib import Path

import pytest

from experiments.store import ResultStore
from experiments.tests.conftest import TOY

ROOT = Path(__file__).resolve().parents[2]


def run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, str(ROOT / "run.py"), *args, "progress=false"],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=600,
    )


@pytest.mark.slow
def test_default_run_writes_rows_figures_and_report(tmp_path):
    out = tmp_path / "res"
    proc = run(f"results_dir={out}", "scale=smoke", "n_jobs=2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "jaccard vs epsilon" in proc.stdout  # the summary table is printed
    exp = out / "default" / "smoke"
    rows = ResultStore(exp / "store").load()
    assert set(rows["mechanism"]) == {"randomized_response_edge", "randomized_response_node"}
    assert (exp / "jaccard_vs_epsilon.png").stat().st_size > 1000
    assert (exp / "jaccard_vs_epsilon.pdf").exists()
    assert "default" in (out / "report.md").read_text()
    assert not (tmp_path / "outputs").exists()  # nothing written to the cwd

    again = run(f"results_dir={out}", "scale=smoke", cwd=tmp_path)  # resume: nothing to do
    assert again.returncode == 0 and "0 task(s) ran" in again.stdout


@pytest.mark.slow
def test_multirun_with_joblib_launcher_shares_one_store(tmp_path):
    out = tmp_path / "res"
    proc = run(
        "-m",
        "hydra/launcher=local",
        "experiment=epasto2022_fig3c",
        "scale=smoke",
        "dataset=sbm_small,sbm_epasto",
        "mechanism.epsilon=0.5,2",
        f"results_dir={out}",
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    rows = ResultStore(out / "epasto2022_fig3c" / "smoke" / "store").load()
    got = set(zip(rows["dataset"], rows["epsilon"], strict=True))
    assert got == {(d, e) for d in ("sbm_small", "sbm_epasto") for e in (0.5, 2)}
    assert (out / "epasto2022_fig3c" / "smoke" / "jaccard_vs_epsilon.png").exists()


def test_failing_cells_exit_nonzero_and_keep_the_rest(tmp_path):
    out = tmp_path / "res"
    proc = run(
        f"plugins=[{TOY}]",
        "scale=smoke",
        f"results_dir={out}",
        "plot=false",
        "experiment.mechanisms=[{name: toy_drop, params: {fail_at: 8}}]",
    )
    assert proc.returncode == 1
    assert "deliberate failure at epsilon=8" in proc.stderr
    rows = ResultStore(out / "default" / "smoke" / "store").load()
    assert set(rows["epsilon"]) == {1}


@pytest.mark.parametrize(
    "args, message",
    [
        (["mechanism.epsilon=0"], "epsilon must be a finite number > 0"),
        (["mechanism.epsilon=-1"], "epsilon must be a finite number > 0"),
        (["experiment.metrics=[nope]"], "unknown metric 'nope'"),
        (["experiment.metrics=[ks]"], "does not fit mechanism"),
        (["mechanism.k=1"], "no selected mechanism takes k"),
        (["executor=spark"], "unknown executor 'spark'"),
    ],
)
def test_bad_command_lines_fail_with_a_clear_message(tmp_path, args, message):
    proc = run(*args, "scale=smoke", f"results_dir={tmp_path}")
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_dataset_or_mechanism_option_lists_the_choices(tmp_path):
    proc = run("dataset=no_such", f"results_dir={tmp_path}")
    assert proc.returncode != 0
    assert "no_such" in proc.stderr and "sbm_small" in proc.stderr


def test_slurm_launcher_config_composes():
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(version_base="1.3", config_dir=str(ROOT / "conf")):
        cfg = compose("config", overrides=["hydra/launcher=slurm"], return_hydra_config=True)
    assert cfg.hydra.launcher.timeout_min == 240
    assert "SlurmLauncher" in cfg.hydra.launcher._target_


def test_missing_data_file_fails_once_before_running(tmp_path):
    empty = tmp_path / "no_data"
    empty.mkdir()
    proc = run(
        "experiment=epasto2022_fig3c",
        "dataset=adult_binary",
        f"data_dir={empty}",
        f"results_dir={tmp_path / 'res'}",
        "scale=smoke",
    )
    assert proc.returncode == 2
    assert proc.stderr.count("adult/adult.data.gz") >= 1
    assert "archive.ics.uci.edu" in proc.stderr and str(empty) in proc.stderr
    assert "FAILED" not in proc.stdout + proc.stderr  # no task ran
    assert not (tmp_path / "res" / "epasto2022_fig3c").exists()


@pytest.mark.slow
def test_multirun_job_with_failures_ends_nonzero_without_losing_other_jobs(tmp_path):
    out = tmp_path / "res"
    proc = run(
        "-m",
        f"plugins=[{TOY}]",
        "scale=smoke",
        f"results_dir={out}",
        "plot=false",
        "experiment.mechanisms=[{name: toy_drop, params: {fail_at: 8}}]",
        "mechanism.epsilon=8,1",
    )
    assert proc.returncode != 0
    assert "deliberate failure at epsilon=8" in proc.stdout + proc.stderr
    rows = ResultStore(out / "default" / "smoke" / "store").load()
    assert set(rows["epsilon"]) == {1}  # the job after the failing one still ran
