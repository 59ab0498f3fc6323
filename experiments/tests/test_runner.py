"""The runner's promises: determinism, resume, failure isolation, ledger checks."""

import numpy as np
import pandas as pd
import pytest

from experiments.runner import run_experiment
from experiments.spec import resolve_experiment
from experiments.store import ResultStore
from experiments.tests.conftest import TOY, toy_experiment

VOLATILE = ["seconds", "peak_mb", "written_at", "code_version"]


def _rows(tmp, spec, **kw):
    summary = run_experiment(spec, results_dir=tmp, progress=False, plugins=(TOY,), **kw)
    frame = ResultStore(summary.store).load(include_errors=True)
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
    assert len(one) == 5 * 3 * 2 + 4 * 3  # 2 metrics per task, + info/noisy_count for toy_drop
    pd.testing.assert_frame_equal(one, two)
    pd.testing.assert_frame_equal(one, rev)
    assert one["value"].notna().all()


def test_different_seed_different_numbers(tmp_path):
    spec = resolve_experiment(toy_experiment(), scale="paper")
    _, a = _rows(tmp_path / "a", spec, seed=0)
    _, b = _rows(tmp_path / "b", spec, seed=1)
    assert not np.allclose(a["value"], b["value"])


def test_resume_after_interrupt_computes_only_missing(tmp_path):
    from experiments.tests.toy_plugins import INTERRUPT

    exp = toy_experiment(mechanisms=[{"name": "toy_drop", "params": {"interrupt_at": 4}}])
    spec = resolve_experiment(exp, scale="paper")
    INTERRUPT["armed"] = True
    try:
        with pytest.raises(KeyboardInterrupt):
            run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    finally:
        INTERRUPT["armed"] = False
    stored = ResultStore(tmp_path / "toy" / "paper" / "store").completed(spec.metrics)
    assert 0 < len(stored) < 12  # interrupted part-way, the finished work kept

    summary, resumed = _rows(tmp_path, spec)
    assert summary.n_skipped == len(stored)
    assert summary.n_ok == 12 - len(stored)
    _, fresh = _rows(tmp_path / "fresh", spec)
    pd.testing.assert_frame_equal(resumed, fresh)


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
    assert summary2.n_tasks == 3 and summary2.n_skipped == 12


@pytest.mark.parametrize(
    "mechanism, message",
    [
        ("toy_overspend", "would exceed the budget"),
        ("toy_nospend", "spent nothing through its ledger"),
        ("toy_wrong_kind", "returned a degree_histogram"),
    ],
)
def test_privacy_and_kind_claims_are_checked(tmp_path, mechanism, message):
    spec = resolve_experiment(
        toy_experiment(mechanisms=[mechanism], grid={"epsilon": [1]}, repetitions=1), scale="paper"
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
