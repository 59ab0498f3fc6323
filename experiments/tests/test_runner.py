"""The runner's promises: determinism, resume, failure isolation, ledger checks."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privpub.experiments.runner import run_experiment
from privpub.experiments.spec import resolve_experiment
from privpub.experiments.store import ResultStore
from privpub.experiments.tests.conftest import TOY, toy_experiment

VOLATILE = ["seconds", "task_seconds", "cpu_seconds", "peak_mb", "written_at", "code_version"]


def _rows(tmp, spec, **kw):
    summary = run_experiment(spec, results_dir=tmp, progress=False, plugins=(TOY,), **kw)
    frame = ResultStore(summary.store).load(statuses=None)
    frame = (
        frame.drop(columns=VOLATILE).sort_values(["cell", "rep", "metric"]).reset_index(drop=True)
    )
    return summary, frame


def test_same_rows_for_any_n_jobs_and_cell_order(tmp_path):
    spec = resolve_experiment(toy_experiment(), scale="paper")
    _, one = _rows(tmp_path / "a", spec, n_jobs=1)
    _, two = _rows(tmp_path / "b", spec, n_jobs=2, executor="loky")
    spec.cells.reverse()
    _, rev = _rows(tmp_path / "c", spec, n_jobs=2, executor="threading")
    assert len(one) == 5 * 3 * 2 + 4 * 3  # 2 metrics per trial, + info/noisy_count for toy_drop
    pd.testing.assert_frame_equal(one, two)
    pd.testing.assert_frame_equal(one, rev)
    assert one["value"].notna().all()


def test_different_seed_different_numbers(tmp_path):
    spec = resolve_experiment(toy_experiment(), scale="paper")
    _, a = _rows(tmp_path / "a", spec, seed=0)
    _, b = _rows(tmp_path / "b", spec, seed=1)
    assert not np.allclose(a["value"], b["value"])


def test_resume_after_interrupt_computes_only_missing(tmp_path):
    from privpub.experiments.tests.toy_plugins import INTERRUPT

    exp = toy_experiment(mechanisms=[{"name": "toy_drop", "params": {"interrupt_at": 4}}])
    spec = resolve_experiment(exp, scale="paper")
    INTERRUPT["armed"] = True
    try:
        # in this process: Ctrl-C in a worker process is tested in test_faults.py
        summary = run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,),
                                 executor="sequential")
    finally:
        INTERRUPT["armed"] = False
    assert summary.interrupted
    stored = ResultStore(tmp_path / "toy" / "paper" / "store").trials(spec.metrics)
    assert 0 < len(stored) < 12 and summary.n_done == len(stored)  # the finished work kept

    summary, resumed = _rows(tmp_path, spec)
    assert summary.n_stored == len(stored)
    assert summary.n_ok == 12 - len(stored) and summary.n_recomputed == 0
    _, fresh = _rows(tmp_path / "fresh", spec)
    pd.testing.assert_frame_equal(resumed, fresh)


def test_another_seed_is_computed_not_reused(tmp_path):
    spec = resolve_experiment(toy_experiment(), scale="paper")
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    summary = run_experiment(spec, results_dir=tmp_path, progress=False, seed=1, plugins=(TOY,))
    assert summary.n_stored == 0 and summary.n_ok == spec.n_trials
    summary = run_experiment(spec, results_dir=tmp_path, progress=False, seed=0, plugins=(TOY,))
    assert summary.n_stored == spec.n_trials and summary.n_ok == 0


def test_skip_reasons_that_differ_only_in_numbers_are_one_line():
    """Ten skips of one cell at several epsilons read as one line with the range."""
    from privpub.experiments.runner import RunSummary

    summary = RunSummary("e", "paper", Path("store"), n_trials=13)
    summary.skip_reasons = {
        "DRC on unc28: the series implies 15146516 edges, more than max_edges=10000000": 4,
        "DRC on unc28: the series implies 75985197 edges, more than max_edges=10000000": 1,
        "DRC on unc28: the series implies 20000000 edges, more than max_edges=10000000": 5,
        "toy on x: k = 7 > 5 rows": 3,
    }
    lines = summary.describe().splitlines()[1:]
    assert lines == [
        "  skipped 10 trial(s): DRC on unc28: the series implies 15146516 to 75985197 edges, "
        "more than max_edges=10000000",
        "  skipped 3 trial(s): toy on x: k = 7 > 5 rows",
    ]


def test_cells_that_cannot_apply_are_skipped_not_failed(tmp_path):
    exp = toy_experiment(mechanisms=["toy_copy"], grid={"k": [2, 100000]})
    spec = resolve_experiment(exp, scale="paper")
    summary, frame = _rows(tmp_path, spec)
    assert not summary.failed and summary.n_not_applicable == 3 and summary.n_ok == 3
    assert "skipped 3 trial(s): toy_copy on sbm_small: k = 100000 > 128 rows" in summary.describe()
    assert set(frame["status"]) == {"ok", "skipped"}
    again = run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    assert again.n_stored == 6 and again.n_ok == again.n_not_applicable == 0  # not retried


PLUGIN = """
import numpy as np
from privpub.noise import laplace_mechanism
from privpub.registry import EDGE_DP, register_mechanism
from privpub.types import Kind, as_binary_matrix


@register_mechanism("edited_mech", input_kind=Kind.BINARY_MATRIX,
                    output_kind=Kind.BINARY_MATRIX, privacy=EDGE_DP)
def edited_mech(matrix, *, epsilon, rng, ledger=None):
    \"\"\"A plugin the test edits.\"\"\"
    laplace_mechanism(0.0, sensitivity=SENSITIVITY, epsilon=epsilon, rng=rng, ledger=ledger)
    return as_binary_matrix(matrix)
"""


def _plugin(tmp_path, monkeypatch, sensitivity, doc="A plugin the test edits."):
    import importlib
    import sys

    from privpub import registry

    path = tmp_path / "plug" / "edited_plugin.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(PLUGIN.replace("SENSITIVITY", str(sensitivity)).replace(
        "A plugin the test edits.", doc))
    monkeypatch.syspath_prepend(str(path.parent))
    registry._MECHANISMS.pop("edited_mech", None)
    sys.modules.pop("edited_plugin", None)
    importlib.invalidate_caches()
    importlib.import_module("edited_plugin")


def test_editing_a_mechanism_recomputes_its_cells(tmp_path, monkeypatch):
    exp = toy_experiment(mechanisms=["edited_mech", "toy_copy"], grid={"epsilon": [1, 2]})
    _plugin(tmp_path, monkeypatch, sensitivity=1)
    spec = resolve_experiment(exp, scale="paper")
    first = run_experiment(spec, results_dir=tmp_path / "r", progress=False, plugins=(TOY,))
    assert first.n_ok == 9
    _plugin(tmp_path, monkeypatch, sensitivity=1, doc="Docstrings and comments are not code.")
    same = run_experiment(spec, results_dir=tmp_path / "r", progress=False, plugins=(TOY,))
    assert same.n_ok == 0 and same.n_stored == 9
    _plugin(tmp_path, monkeypatch, sensitivity=2)  # a real change: the sensitivity
    again = run_experiment(spec, results_dir=tmp_path / "r", progress=False, plugins=(TOY,))
    assert again.n_recomputed == again.n_ok == 6 and again.n_stored == 3  # toy_copy reused
    assert again.changed_files == ["edited_plugin.py"]
    assert "6 recomputed: code changed in edited_plugin.py" in again.describe()
    rows = ResultStore(again.store).load()
    ledgers = rows[rows["mechanism"] == "edited_mech"]["ledger"]
    assert ledgers.str.contains('"sensitivity": 2').all()


def test_relabelling_reuses_rows_and_applies_the_new_label(tmp_path):
    from privpub.experiments.figures import draw_experiment

    exp = toy_experiment(mechanisms=[{"name": "toy_drop", "label": "old name"}], repetitions=1)
    spec = resolve_experiment(exp, scale="paper")
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    exp["mechanisms"] = [{"name": "toy_drop", "label": "new name"}]
    spec = resolve_experiment(exp, scale="paper")
    summary = run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    assert summary.n_ok == 0 and summary.n_stored == 4
    text = draw_experiment(spec, tmp_path)
    assert "new name" in text and "old name" not in text


def test_failing_cell_keeps_the_others(tmp_path):
    exp = toy_experiment(mechanisms=[{"name": "toy_drop", "params": {"fail_at": 2}}, "toy_copy"])
    spec = resolve_experiment(exp, scale="paper")
    summary, frame = _rows(tmp_path, spec)
    assert summary.failed and len(summary.failures) == 3
    assert "deliberate failure at epsilon=2" in summary.failures[0]["error"]
    ok = frame[frame["status"] == "ok"]
    assert set(ok["epsilon"].dropna()) == {0.5, 1, 4}
    assert (frame[frame["status"] == "error"]["epsilon"] == 2).all()
    # a rerun retries only the failures
    summary2, _ = _rows(tmp_path, spec)
    assert summary2.n_ok == 0 and len(summary2.failures) == 3 and summary2.n_stored == 12


@pytest.mark.parametrize(
    "mechanism, message",
    [
        ("toy_overspend", "would exceed the budget"),
        ("toy_nospend", "spent nothing through its ledger"),
        ("toy_wrong_kind", "returned a degree_histogram"),
    ],
)
def test_privacy_and_kind_claims_are_checked(tmp_path, mechanism, message):
    grid = {} if mechanism == "toy_wrong_kind" else {"epsilon": [1]}
    spec = resolve_experiment(
        toy_experiment(mechanisms=[mechanism], grid=grid, repetitions=1), scale="paper"
    )
    summary, frame = _rows(tmp_path, spec)
    assert summary.failed
    assert message in frame["error"].iloc[0]


def test_rows_carry_ledger_privacy_and_parameters(tmp_path):
    spec = resolve_experiment(toy_experiment(grid={"epsilon": [2]}, repetitions=1), scale="paper")
    _, frame = _rows(tmp_path, spec)
    drop = frame[frame["mechanism"] == "toy_drop"].iloc[0]
    assert drop["privacy"] == "edge-DP" and drop["epsilon"] == 2 and drop["epsilon_spent"] == 2
    assert '"sensitivity": 1.0' in drop["ledger"]
    assert set(frame["metric"]) == {"jaccard", "created_fraction", "info/noisy_count"}
    copy = frame[frame["mechanism"] == "toy_copy"]
    assert np.allclose(copy[copy["metric"] == "jaccard"]["value"], 1.0)


def test_dask_executor_matches_loky(tmp_path):
    pytest.importorskip("dask.distributed")
    spec = resolve_experiment(toy_experiment(repetitions=2), scale="paper")
    _, seq = _rows(tmp_path / "a", spec, n_jobs=1)
    _, dask = _rows(tmp_path / "b", spec, n_jobs=2, executor="dask")
    pd.testing.assert_frame_equal(seq, dask)


def test_noise_free_twins_run_the_same_code_with_zero_noise(tmp_path):
    """Each DP series gets a twin at its largest epsilon with every noise primitive drawing
    zero: stored as not private, never drawn as a series, summarised beside the noisy one."""
    from privpub.experiments.figures import draw_experiment

    spec = resolve_experiment(toy_experiment(repetitions=2, noise_free=True), scale="paper")
    twins = [c for c in spec.cells if c.noise_free]
    assert [(c.mechanism, c.params) for c in twins] == [("toy_drop", {"epsilon": 4})]
    assert twins[0].seed_identity == next(
        c for c in spec.cells if c.params == {"epsilon": 4} and not c.noise_free).seed_identity
    summary, frame = _rows(tmp_path, spec)
    assert not summary.failed
    free = frame[frame["noise_free"].astype(bool)]
    assert set(free["privacy"]) == {"none"} and free["caveat"].str.contains("noise").all()
    noisy = frame[~frame["noise_free"].astype(bool) & (frame["mechanism"] == "toy_drop")]
    assert set(noisy["privacy"]) == {"edge-DP"}
    # toy_drop's Laplace count is exact without noise (its drops are not privacy noise)
    counts = free[free["metric"] == "info/noisy_count"]["value"]
    assert (counts == counts.round()).all()
    draw_experiment(spec, tmp_path)
    text = (tmp_path / "toy" / "paper" / "summary.md").read_text()
    assert "## The noise-free limit" in text and "| toy_drop | jaccard | 4 |" in text
    assert "toy_drop" in text.split("## The noise-free limit")[1]
    no_twins = resolve_experiment(toy_experiment(), scale="paper")
    assert not any(c.noise_free for c in no_twins.cells)


def test_a_noise_free_twin_is_scored_without_noise_too(tmp_path):
    """A metric may run the mechanism again (``accuracy_cv_learner`` refits the learner on
    each fold): for a noise-free twin it runs inside ``noise_off`` as well, for the others not."""
    spec = resolve_experiment(toy_experiment(
        metrics=["toy_noise_off"], plots=[{"x": "epsilon", "metric": "toy_noise_off"}],
        noise_free=True, repetitions=1), scale="paper")
    _, frame = _rows(tmp_path, spec)
    scored = frame[frame["metric"] == "toy_noise_off"]
    assert scored.groupby(scored["noise_free"].astype(bool))["value"].unique().map(
        list).to_dict() == {False: [0.0], True: [1.0]}


def test_a_metric_registered_with_another_metrics_stream_draws_the_same_numbers(tmp_path):
    """``register_metric(stream=...)``: a deviation metric sees the generator its curve
    metric sees (sala2011 Figs. 8-9), whatever else the run computes; other metrics not."""
    spec = resolve_experiment(toy_experiment(
        metrics=["toy_draw", "toy_draw_again", "toy_draw_own"],
        plots=[{"x": "epsilon", "metric": "toy_draw"}], repetitions=1), scale="paper")
    _, frame = _rows(tmp_path, spec)
    wide = frame.pivot_table(index=["cell", "rep"], columns="metric", values="value")
    assert (wide["toy_draw"] == wide["toy_draw_again"]).all()
    assert (wide["toy_draw"] != wide["toy_draw_own"]).all()


def test_a_curve_metric_is_stored_once_and_read_back(tmp_path):
    """A metric returning a dict is stored as rows ``<metric>/<x>``: a rerun finds those
    trials done (they used to be recomputed on every run, sala2011 Figs. 8-9), and another
    experiment reads them."""
    exp = toy_experiment(metrics=["toy_curve", "toy_draw"],
                         plots=[{"x": "epsilon", "metric": "toy_draw"}], repetitions=1)
    spec = resolve_experiment(exp, scale="paper")
    first = run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    assert first.n_ok == spec.n_trials
    again = run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    assert (again.n_ok, again.n_stored) == (0, spec.n_trials)
    other = resolve_experiment({**exp, "name": "other"}, scale="paper")
    shared = run_experiment(other, results_dir=tmp_path, progress=False, plugins=(TOY,))
    assert (shared.n_ok, shared.n_shared) == (0, spec.n_trials)


def test_a_trial_another_experiment_computed_is_read_not_recomputed(tmp_path):
    """Same cell, seed, repetition and code in another experiment's store: copied, with
    exactly the numbers this run would compute; a parameter written out at its default
    names the same cell."""
    first = resolve_experiment(toy_experiment(name="first"), scale="paper")
    run_experiment(first, results_dir=tmp_path, progress=False, plugins=(TOY,))
    exp = toy_experiment(
        name="second",
        mechanisms=[{"name": "toy_drop", "label": "drop", "params": {"fail_at": None}},
                    {"name": "toy_copy", "grid": {"tag": [0, 1]}}],
    )
    second = resolve_experiment(exp, scale="paper")
    summary = run_experiment(second, results_dir=tmp_path, progress=False, plugins=(TOY,))
    # toy_drop's 4 cells and toy_copy at tag 0 (its default) are first's: 15 of 18 trials
    assert (summary.n_shared, summary.n_ok) == (15, 3)
    assert "15 already stored (15 from other experiments)" in summary.describe()
    copied = ResultStore(summary.store).load()
    assert set(copied["experiment"]) == {"second"} and "drop" in set(copied["label"])
    _, fresh = _rows(tmp_path / "fresh", second)
    mine = copied.drop(columns=VOLATILE).sort_values(["cell", "rep", "metric"])
    assert np.allclose(mine["value"].to_numpy(), fresh["value"].to_numpy(), equal_nan=True)


def test_dask_executor_against_a_scheduler_address(tmp_path):
    """`executor=dask dask_address=tcp://...`: the documented path to a cluster."""
    distributed = pytest.importorskip("dask.distributed")
    spec = resolve_experiment(toy_experiment(repetitions=2), scale="paper")
    _, local = _rows(tmp_path / "a", spec, n_jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        summary, remote = _rows(tmp_path / "b", spec, executor="dask",
                                dask_address=cluster.scheduler_address)
    assert summary.n_ok == spec.n_trials
    pd.testing.assert_frame_equal(local, remote)


def _run_in_process(args):
    results_dir, order = args
    from privpub.experiments.tests.conftest import toy_experiment as make
    from privpub.registry import load_plugins

    load_plugins([TOY])
    spec = resolve_experiment(make(repetitions=4), scale="paper")
    if order:
        spec.cells.reverse()
    run_experiment(spec, results_dir=results_dir, progress=False, plugins=(TOY,),
                   flush_seconds=0.0)


def test_processes_writing_one_store_at_once_lose_and_duplicate_nothing(tmp_path):
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(3) as pool:
        pool.map(_run_in_process, [(tmp_path, i % 2) for i in range(3)])
    spec = resolve_experiment(toy_experiment(repetitions=4), scale="paper")
    rows = ResultStore(tmp_path / "toy" / "paper" / "store").load()
    keys = rows[["cell", "rep", "metric"]]
    assert not keys.duplicated().any()
    assert len(rows.drop_duplicates(["cell", "rep"])) == spec.n_trials


def test_a_slow_release_is_computed_once_for_experiments_with_other_metrics(tmp_path):
    """The same trial measured by two experiments with different metrics: the mechanism runs
    once; the second reads the release and computes only its own metrics."""
    import privpub.experiments.trial as trial
    from privpub.experiments.tests.toy_plugins import CALLS

    old = trial.RELEASE_CACHE_SECONDS
    trial.RELEASE_CACHE_SECONDS = 0.0  # keep every release, however fast
    try:
        exp = toy_experiment(mechanisms=[{"name": "toy_sleep", "params": {"duration": 0.0}}],
                             grid={}, repetitions=2, metrics=["jaccard"], plots=[])
        CALLS.clear()  # counted in this process: the trials run here
        run_experiment(resolve_experiment(exp, scale="paper"), results_dir=tmp_path,
                       progress=False, plugins=(TOY,), executor="sequential")
        other = dict(exp, name="other", metrics=["created_fraction"])
        summary = run_experiment(resolve_experiment(other, scale="paper"), results_dir=tmp_path,
                                 progress=False, plugins=(TOY,), executor="sequential")
    finally:
        trial.RELEASE_CACHE_SECONDS = old
    assert summary.n_ok == 2 and len(CALLS) == 2  # 2 repetitions, computed once each
    rows = ResultStore(summary.store).load()
    assert set(rows["metric"]) == {"created_fraction"} and rows["release_cached"].all()


def test_a_kept_k_anonymous_release_carries_its_verdict(tmp_path, monkeypatch):
    """A kept release was verified when computed, by the code its key covers: the next
    experiment reads the verdict instead of checking the release again; a kept release
    without one (kept before verdicts were) is checked."""
    import privpub.experiments.trial as trial
    import privpub.verify as verify

    monkeypatch.setattr(trial, "RELEASE_CACHE_SECONDS", 0.0)
    checks = []
    real = verify.verifier_of(verify.SMOOTH_K_ANONYMITY, "binary_matrix")
    monkeypatch.setitem(verify._VERIFIERS, (verify.SMOOTH_K_ANONYMITY, "binary_matrix"),
                        lambda *a: checks.append(1) or real(*a))
    exp = toy_experiment(mechanisms=[{"name": "smooth_k_anonymity"}], grid={"k": [2, 3]},
                         repetitions=2, metrics=["jaccard"], plots=[])
    run = dict(results_dir=tmp_path, progress=False, executor="sequential")
    run_experiment(resolve_experiment(exp, scale="paper"), **run)
    assert len(checks) == 4
    other = resolve_experiment(dict(exp, name="other", metrics=["created_fraction"]),
                               scale="paper")
    summary = run_experiment(other, **run)
    rows = ResultStore(summary.store).load()
    assert len(checks) == 4 and rows["release_cached"].all() and rows["verified"].all()
    kept = sorted((tmp_path / ".cache" / "releases").rglob("*.pkl"))
    assert len(kept) == 4
    for path in kept:  # as a release kept before verdicts were
        entry = trial._read_release(path)
        assert entry.pop("verified") is True
        trial._write_release(path, entry)
    third = resolve_experiment(dict(exp, name="third", metrics=["suppressed_fraction"]),
                               scale="paper")
    summary = run_experiment(third, **run)
    assert len(checks) == 8 and ResultStore(summary.store).load()["verified"].all()
