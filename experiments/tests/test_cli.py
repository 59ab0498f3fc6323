"""`python run.py` end to end (subprocesses, scale=smoke): what you run is what you get.

One test per promise: overrides always apply, a one-off run never changes the
paper's figures, clean failures with the documented exit codes, grids that fit the data.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privpub.experiments.store import ResultStore
from privpub.experiments.tests.conftest import TOY, with_ctrl_c

ROOT = Path(__file__).resolve().parents[2]


def run(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, str(ROOT / "run.py"), *args, "progress=false"],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=600,
        env=env,
    )


def one_line_error(proc, code=2):
    """The run failed with ``code`` and one clear line, no traceback."""
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("privpub: error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


@pytest.mark.slow
def test_default_run_writes_rows_figures_claims_and_report(tmp_path):
    out = tmp_path / "res"
    proc = run(f"results_dir={out}", "scale=smoke", "n_jobs=2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "jaccard_vs_epsilon: Jaccard similarity vs epsilon" in proc.stdout
    exp = out / "default" / "smoke"
    rows = ResultStore(exp / "store").load()
    assert set(rows["mechanism"]) == {"randomized_response_edge", "randomized_response_node"}
    for name in ("jaccard", "created_fraction", "suppressed_fraction"):  # every metric drawn
        assert (exp / f"{name}_vs_epsilon.png").stat().st_size > 1000
    meta = json.loads((exp / "meta.json").read_text())
    # 2 mechanisms x 2 epsilons and a noise-free twin per mechanism, x 2 repetitions
    assert meta["trials"] == meta["ok"] == 12 and meta["variant"] is None
    claims = json.loads((exp / "claims.json").read_text())
    assert claims and all(c["verdict"] in ("held", "not held", "not evaluated") for c in claims)
    assert "default" in (out / "report.md").read_text()
    assert (out / "report.html").exists()
    assert not (tmp_path / "outputs").exists()  # nothing written to the cwd

    again = run(f"results_dir={out}", "scale=smoke", cwd=tmp_path)  # resume: nothing to do
    assert again.returncode == 0 and "0 trial(s) ran, 12 already stored" in again.stdout


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_command_line_grid_and_repetitions_beat_the_scale_block(tmp_path, scale):
    proc = run(
        f"scale={scale}",
        "experiment.grid.epsilon=[0.3]",
        "experiment.repetitions=2",
        "experiment.mechanisms=[randomized_response_edge]",
        f"results_dir={tmp_path}",
        "plot=false",
    )
    assert proc.returncode == 0, proc.stderr
    rows = ResultStore(tmp_path / "default" / scale / "store").load()
    assert set(rows["epsilon"]) == {0.3} and set(rows["rep"]) == {0, 1}
    assert set(rows["mechanism"]) == {"randomized_response_edge"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["experiment.grid.epsilon=[0]"], "epsilon must be a finite number > 0"),
        (["mechanism.epsilon=-1"], "epsilon must be a finite number > 0"),
        (["experiment.metrics=[nope]"], "unknown metric 'nope'"),
        (["experiment.metrics=[ks]"], "does not fit mechanism"),
        (["mechanism.k=1"], "no selected mechanism takes k"),
        (["+experiment.grid.thet=[1]"], "no selected mechanism takes grid parameter 'thet'"),
        (["+experiment.repetition=3"], "unknown experiment key 'repetition'"),
        (["+sed=1"], "unknown config key 'sed' (did you mean 'seed'?)"),
        (["seed=-1"], "seed must be an integer >= 0, got -1"),
        (["seed=abc"], "seed must be an integer >= 0, got 'abc'"),
        (["seed=1.5"], "seed must be an integer >= 0, got 1.5"),
        (["n_jobs=abc"], "n_jobs must be an integer >= 1 or -1"),
        (["n_jobs=0"], "n_jobs must be an integer >= 1 or -1"),
        (["executor=spark"], "unknown executor 'spark'"),
        (["rerun=maybe"], "rerun must be true or false"),
    ],
)
def test_bad_command_lines_fail_with_one_clear_line(tmp_path, args, message):
    # checked before anything else, so also when every trial is already stored
    assert run("scale=smoke", f"results_dir={tmp_path}", "plot=false").returncode == 0
    proc = run(*args, "scale=smoke", f"results_dir={tmp_path}")
    assert message in one_line_error(proc)


def test_unwritable_results_dir_is_one_line(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    proc = run("scale=smoke", f"results_dir={blocker / 'res'}")
    assert "cannot be written" in one_line_error(proc)


def test_hydra_config_errors_keep_hydras_message_and_exit_2(tmp_path):
    proc = run("experiment=no_such", f"results_dir={tmp_path}")
    assert proc.returncode == 2
    assert "no_such" in proc.stderr and "default" in proc.stderr  # Hydra lists the options


def test_one_off_dataset_draws_a_variant_and_skips_cells_that_cannot_apply(tmp_path):
    common = ["experiment=day2016_fig3", "scale=smoke", f"results_dir={tmp_path}"]
    assert run(*common).returncode == 0  # the experiment's own figure
    own = tmp_path / "day2016_fig3" / "smoke"
    before = (own / "l1_vs_epsilon.png").read_bytes()
    proc = run(*common, "dataset=karate", "mechanism=truncation")
    # theta = 64 >= |V| = 34 cannot apply to karate: skipped with the reason, not failed
    assert proc.returncode == 0, proc.stderr
    # theta 64 at both epsilons and its noise-free twin, x 2 repetitions
    assert "6 skipped (not applicable)" in proc.stdout and "needs theta < |V|" in proc.stdout
    variant = own / "variants" / "dataset=karate__mechanism=truncation"
    assert (variant / "l1_vs_epsilon.png").exists()
    assert "karate / Truncation: 6 trial(s)" in (variant / "summary.md").read_text()  # as run
    assert (own / "l1_vs_epsilon.png").read_bytes() == before  # the paper figure is untouched
    redraw = run(*common)  # the experiment's own figure lists the one-off cells, not draws them
    assert redraw.returncode == 0
    assert "karate / Truncation" in (own / "summary.md").read_text()  # under other stored cells
    assert (own / "l1_vs_epsilon.png").read_bytes() == before
    assert "karate" not in json.dumps(json.loads((own / "meta.json").read_text()))


def test_failing_cells_exit_1_keep_the_rest_and_are_listed_once(tmp_path):
    out = tmp_path / "res"
    proc = run(
        f"plugins=[{TOY}]",
        "scale=smoke",
        f"results_dir={out}",
        "plot=false",
        "experiment.mechanisms=[{name: toy_drop, params: {fail_at: 8}}]",
    )
    assert proc.returncode == 1
    # 2 reps of the cell at epsilon 8 and of its noise-free twin, each listed once
    assert (proc.stdout + proc.stderr).count("deliberate failure at epsilon=8") == 4
    assert "Traceback" not in proc.stderr
    rows = ResultStore(out / "default" / "smoke" / "store").load()
    assert set(rows["epsilon"]) == {1}


def test_ctrl_c_stops_stores_what_finished_and_says_how_to_resume(tmp_path):
    args = [sys.executable, str(ROOT / "run.py"), f"plugins=[{TOY}]", "scale=smoke",
            f"results_dir={tmp_path}", "progress=false", "plot=false", "n_jobs=2",
            "experiment.mechanisms=[{name: toy_sleep, params: {duration: 1.0}, "
            "grid: {tag: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]}}]",
            "~experiment.grid", "experiment.metrics=[jaccard]",
            "experiment.plots=[{x: tag, metric: jaccard}]"]
    proc = subprocess.Popen(with_ctrl_c(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    store = tmp_path / "default" / "smoke" / "store"
    deadline = time.monotonic() + 600  # however busy the machine (idle: a few seconds)
    while (not list(store.glob("part-*.parquet")) and proc.poll() is None
           and time.monotonic() < deadline):
        time.sleep(0.2)  # wait until some work is stored (flushes follow finished trials)
    try:
        assert proc.poll() is None, proc.communicate()[1]
        assert list(store.glob("part-*.parquet")), "nothing stored in 10 minutes"
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    line = next(x for x in err.splitlines() if x.startswith("privpub: interrupted:"))
    assert "of 24 trials stored in" in line and "rerun the same command to resume" in line
    done = int(line.split("interrupted: ")[1].split(" of ")[0])
    assert 0 < done < 24
    resumed = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done} already stored" in resumed.stdout


def test_missing_data_file_fails_once_before_running(tmp_path):
    empty = tmp_path / "no_data"
    empty.mkdir()
    args = ["experiment=epasto2022_fig3c", "dataset=adult_binary", f"data_dir={empty}",
            f"results_dir={tmp_path / 'res'}", "scale=smoke"]
    line = one_line_error(run(*args))
    assert "adult" in line
    proc = run(*args)
    assert "adult/adult.data.gz" in proc.stderr and "archive.ics.uci.edu" in proc.stderr
    assert str(empty) in proc.stderr and "FAILED" not in proc.stdout + proc.stderr
    assert not (tmp_path / "res" / "epasto2022_fig3c" / "smoke" / "store").exists()
    # inside a multirun: checked before the first job, the file named once, exit 2
    multi = run("-m", *args, "mechanism.epsilon=1,2")
    head = one_line_error(multi)
    assert head == "privpub: error: none of the 2 jobs can run:"
    assert "  every job: needs adult_binary" in multi.stderr
    assert multi.stderr.count("adult/adult.data.gz  [MISSING]") == 1
    assert line.removeprefix("privpub: error: ") in multi.stderr
    assert "Launching" not in multi.stdout + multi.stderr  # no job started


@pytest.mark.slow
def test_multirun_with_joblib_launcher_draws_the_union_of_its_jobs(tmp_path):
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
    variant = out / "epasto2022_fig3c" / "smoke" / "variants"
    (figure_dir,) = variant.iterdir()
    assert figure_dir.name == "dataset=sbm_small,sbm_epasto__mechanism.epsilon=0.5,2"
    meta = json.loads((figure_dir / "meta.json").read_text())
    assert meta["cells"] == 8 and meta["ok"] == meta["trials"]  # 4 cells and their twins


@pytest.mark.slow
def test_multirun_draws_its_experiments_on_its_workers_then_writes_the_report_once(tmp_path):
    out = tmp_path / "res"
    names = ("default", "epasto2022_fig3c")
    proc = run("-m", f"experiment={','.join(names)}", "scale=smoke", "n_jobs=2",
               "plugins=[privpub.experiments.tests.toy_plugins]", "add_mechanisms=[toy_copy]",
               f"results_dir={out}")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    figures = [out / name / "smoke" / "variants" / "add_mechanisms=toy_copy" for name in names]
    # the texts come back in the jobs' order, the closing line last
    assert proc.stdout.index(f"figures: {figures[0]}") < proc.stdout.index(
        f"figures: {figures[1]}") < proc.stdout.index("privpub: claims:")
    report, timings = out / "report.html", out / "timings.md"
    for where in figures:  # the plug-in's series drawn by a worker that imported it
        assert "toy_copy" in (where / "summary.md").read_text()
        assert (where / "claims.json").is_file()
        assert report.stat().st_mtime >= (where / "meta.json").stat().st_mtime
        assert timings.stat().st_mtime >= (where / "meta.json").stat().st_mtime
    assert all(name in report.read_text() for name in names)


@pytest.mark.slow
def test_multirun_job_with_failures_ends_nonzero_without_losing_other_jobs(tmp_path):
    out = tmp_path / "res"
    proc = run(
        "-m",
        f"plugins=[{TOY}]",
        "scale=smoke",
        f"results_dir={out}",
        "experiment.mechanisms=[{name: toy_drop, params: {fail_at: 8}}]",
        "mechanism.epsilon=8,1",
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.count("deliberate failure at epsilon=8") == 4  # once per trial (+ twin)
    rows = ResultStore(out / "default" / "smoke" / "store").load()
    assert set(rows["epsilon"]) == {1}  # the job after the failing one still ran


def test_slurm_launcher_config_composes():
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(version_base="1.3", config_dir=str(ROOT / "conf")):
        cfg = compose("config", overrides=["hydra/launcher=slurm"], return_hydra_config=True)
    assert cfg.hydra.launcher.timeout_min == 240
    assert "SlurmLauncher" in cfg.hydra.launcher._target_


def test_a_sweep_that_matches_nothing_is_an_error(tmp_path):
    proc = run("-m", "experiment=glob(nosuch_*)", "scale=smoke", f"results_dir={tmp_path}")
    line = one_line_error(proc)
    assert "ran no job" in line and "privpub list" in line


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_mechanism_list_and_entry_edits_beat_a_scale_block_that_patches_mechanisms(scale):
    # day2016 Fig. 4's smoke block patches its entries by label and drops θ-Constrained
    # (entry 2) and Flowgraph (entry 4): a command line that replaces the list or edits an
    # entry used to end in "patch ... matches no entry" or an IndexError traceback.
    from hydra import compose, initialize_config_dir

    from privpub.errors import ConfigError
    from privpub.experiments.cli import spec_from_config

    def spec(*overrides):
        overrides = ["experiment=day2016_fig4", f"scale={scale}", *overrides]
        with initialize_config_dir(version_base="1.3", config_dir=str(ROOT / "conf")):
            cfg = compose("config", overrides=overrides)
        return spec_from_config(cfg, overrides=overrides)

    def series(s):
        return {(c.label, c.params.get("theta_max"), c.params.get("theta"))
                for c in s.cells if not c.noise_free}

    own = series(spec())
    mine = spec("experiment.mechanisms=[{name: theta_histogram, label: mine}]")
    assert {label for label, *_ in series(mine)} == {"mine"}
    relabelled = series(spec("experiment.mechanisms.0.label=renamed"))  # same cells otherwise
    assert relabelled == {("renamed" if s[0] == "(θ,Ω)-Histogram" else s[0], *s[1:]) for s in own}
    edited = spec("experiment.mechanisms.3.grid.theta=[4]", "experiment.mechanisms.4.label=FG")
    assert "FG" in {s[0] for s in series(edited)}  # dropped at smoke, edited: it runs
    thetas = {c.params["theta"] for c in edited.cells
              if c.label == "Truncation" and c.dataset != "facebook"}  # Facebook: its own grid
    assert thetas == {4}
    if scale == "smoke":  # its datasets are the block's one synthetic graph
        with pytest.raises(ConfigError, match="cannot set datasets.5.lcc"):
            spec("experiment.datasets.5.lcc=false")


_PLUGIN = '''
import numpy as np

from privpub.noise import laplace_mechanism
from privpub.registry import NODE_DP, register_mechanism
from privpub.types import DegreeHistogram, Kind


@register_mechanism("outside_clipped_histogram", input_kind=Kind.GRAPH,
                    output_kind=Kind.DEGREE_HISTOGRAM, privacy=NODE_DP)
def outside_clipped_histogram(graph, *, epsilon, rng, bins: int = 64, ledger=None):
    """Degrees clipped to a public number of bins, plus Laplace noise."""
    counts = np.bincount(np.minimum(graph.degrees(), bins - 1), minlength=bins)
    return DegreeHistogram(laplace_mechanism(counts.astype(float), sensitivity=2 * bins,
                                             epsilon=epsilon, rng=rng, ledger=ledger,
                                             label="histogram"))
'''


def test_a_plugin_file_outside_the_checkout_joins_a_paper_experiment_by_name(tmp_path):
    """plugins= takes the path of a .py file; the mechanism it registers is
    selected with mechanism=<name> (its parameters from its signature, no YAML in conf/)
    and added with add_mechanisms=[<name>], in the run's worker processes too."""
    plugin = tmp_path / "lab" / "outside_mech.py"
    plugin.parent.mkdir()
    plugin.write_text(_PLUGIN)
    out = tmp_path / "res"
    common = ["experiment=day2016_fig3", "scale=smoke", f"plugins=[{plugin}]",
              f"results_dir={out}", "plot=false", "n_jobs=2"]
    alone = run(*common, "mechanism=outside_clipped_histogram", "mechanism.bins=16")
    assert alone.returncode == 0, alone.stderr
    joined = run(*common, "mechanism=flowgraph", "add_mechanisms=[outside_clipped_histogram]")
    assert joined.returncode == 0, joined.stderr
    rows = ResultStore(out / "day2016_fig3" / "smoke" / "store").load()
    mine = rows[rows["mechanism"] == "outside_clipped_histogram"]
    assert set(mine["bins"].dropna()) == {16} and mine["bins"].isna().any()
    assert {"flowgraph", "outside_clipped_histogram"} <= set(rows["mechanism"])
    assert not (ROOT / "conf" / "mechanism" / "outside_clipped_histogram.yaml").exists()
    typo = run(*common, "mechanism=outside_clipped_histogrm")
    assert "did you mean outside_clipped_histogram" in one_line_error(typo).lower()


def test_bad_plugins_and_a_results_dir_that_is_a_file_are_one_line(tmp_path):
    """A plug-in with a syntax error, one that raises on import, and a swept
    results_dir that is a file: one line naming the file (and line), exit 2."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "bad_syntax.py").write_text("def f(:\n    pass\n")
    (plugins / "bad_name.py").write_text("import os\nx = undefined_name + 1\n")
    env = {**os.environ, "PYTHONPATH": str(plugins)}
    line = one_line_error(run("scale=smoke", "plugins=[bad_syntax]",
                              f"results_dir={tmp_path / 'r'}", env=env))
    assert f"{plugins / 'bad_syntax.py'}, line 1" in line
    line = one_line_error(run("scale=smoke", "plugins=[bad_name]",
                              f"results_dir={tmp_path / 'r'}", env=env))
    assert "NameError" in line and f"{plugins / 'bad_name.py'}, line 2" in line
    afile = tmp_path / "afile"
    afile.write_text("")
    line = one_line_error(run("-m", "scale=smoke", f"results_dir={afile},{tmp_path / 'r'}"))
    assert "is a file, not a directory" in line
