"""Fault injection: a run survives its tasks' deaths and its own, and a rerun heals it.

Each test disturbs a run (a worker killed mid-task, a segfault, a task past its memory or
time limit, the parent killed mid-write, two runs at once), reruns the same command and
compares the stored values with those of an undisturbed run (docs/design.md, Experiments:
"Faults"). The faulty mechanism lives in a plug-in module on a temporary path.
"""

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from experiments.runner import run_experiment
from experiments.spec import resolve_experiment
from experiments.store import ResultStore
from privpub.registry import load_plugins

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "privpub_fault_plugins"

PLUGIN_SOURCE = textwrap.dedent('''
    """Mechanisms that fail once, the way a real task can die (experiments/tests/test_faults)."""
    import ctypes
    import os
    import signal
    import time

    import numpy as np

    from privpub.registry import NO_PRIVACY, register_mechanism
    from privpub.types import Kind, as_binary_matrix


    def _fault(fault, marker):
        if fault == "none" or (marker and os.path.exists(marker)):
            return
        if marker:
            open(marker, "w").close()
        if fault == "segv":
            ctypes.string_at(0)  # a real segmentation fault
        elif fault == "sigsegv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif fault == "exit":
            os._exit(3)
        elif fault == "memory":
            hog = np.ones(400 * 2**20 // 8)  # 400 MB, resident
            time.sleep(5)
            del hog
        elif fault == "sleep":
            time.sleep(60)
        elif fault == "wrong_type":
            raise AssertionError("unused")


    @register_mechanism("fault_once", input_kind=Kind.BINARY_MATRIX,
                        output_kind=Kind.BINARY_MATRIX, privacy=NO_PRIVACY, role="reference")
    def fault_once(matrix, *, rng, tag: int = 0, fault: str = "none", marker: str = "",
                   pause: float = 0.0):
        """Drop entries at random; the first call with ``fault`` (while ``marker`` does not
        exist) dies that way first. ``pause``: sleep this long (a slow task)."""
        if tag == 0:
            _fault(fault, marker)
        time.sleep(pause)
        m = as_binary_matrix(matrix).tocoo()
        keep = rng.random(m.nnz) >= 0.3
        return as_binary_matrix(type(matrix)((m.data[keep], (m.row[keep], m.col[keep])),
                                             shape=m.shape))
''')


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("plugins")
    (path / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
    sys.path.insert(0, str(path))
    load_plugins([PLUGIN])
    yield path
    sys.path.remove(str(path))


def _spec(fault="none", marker="", tags=4, reps=2, pause=0.0, name="faults"):
    params = {"fault": fault, "marker": str(marker), "pause": pause}
    return resolve_experiment({
        "name": name,
        "datasets": ["sbm_small"],
        "mechanisms": [{"name": "fault_once", "params": params}],
        "grid": {"tag": list(range(tags))},
        "metrics": ["jaccard"],
        "repetitions": reps,
        "plots": [],
        "noise_free": False,
    }, scale="paper")


def _run(spec, results_dir, **kw):
    kw.setdefault("n_jobs", 2)
    return run_experiment(spec, results_dir=results_dir, progress=False, plugins=(PLUGIN,),
                          flush_seconds=0.0, **kw)


def _compare():
    spec = importlib.util.spec_from_file_location("compare_stores",
                                                  ROOT / "benchmarks" / "compare_stores.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compare_store


def _assert_same_values(disturbed: Path, spec, tmp_path: Path) -> None:
    """The disturbed store equals an undisturbed run of the same spec (its fault has fired
    already, its marker exists), value by value."""
    clean = _run(spec, tmp_path / "clean")
    report = _compare()(clean.store, disturbed)
    assert report["differences"] == [] and report["only_before"] == report["only_after"] == 0
    assert report["compared"] == report["rows"] > 0


@pytest.mark.parametrize(("fault", "cause", "n_jobs"), [
    ("segv", "worker killed by SIGSEGV", 1),  # n_jobs=1 runs in a worker process too
    ("segv", "worker killed by SIGSEGV", 2),
    ("kill", "worker killed by SIGKILL", 2),  # kill -9 of a worker mid-task
    ("exit", "worker exited with code 3", 1),
])
def test_a_dying_task_is_one_failed_row_and_a_rerun_heals_it(plugin_dir, tmp_path, fault,
                                                              cause, n_jobs):
    marker = tmp_path / "fired"
    spec = _spec(fault, marker)
    first = _run(spec, tmp_path / "run", n_jobs=n_jobs)
    assert len(first.failures) == 1 and cause in first.failures[0]["error"]
    assert first.n_ok == spec.n_tasks - 1  # every other task finished
    second = _run(spec, tmp_path / "run", n_jobs=n_jobs)
    assert second.n_ok == 1 and not second.failures  # the failed task is retried
    _assert_same_values(second.store, spec, tmp_path)


def test_a_task_past_task_memory_fails_with_that_reason(plugin_dir, tmp_path):
    marker = tmp_path / "fired"
    spec = _spec("memory", marker)
    first = _run(spec, tmp_path / "run", task_memory=300)
    assert [f["error"] for f in first.failures] == [
        f for f in (first.failures[0]["error"],) if f.startswith("exceeded task_memory=300 MB")]
    assert first.n_ok == spec.n_tasks - 1
    second = _run(spec, tmp_path / "run", task_memory=300)
    assert second.n_ok == 1 and not second.failures
    _assert_same_values(second.store, spec, tmp_path)


def test_a_task_past_task_timeout_fails_with_that_reason(plugin_dir, tmp_path):
    marker = tmp_path / "fired"
    spec = _spec("sleep", marker)
    t0 = time.perf_counter()
    first = _run(spec, tmp_path / "run", task_timeout=3)
    assert time.perf_counter() - t0 < 30  # never a hang
    assert len(first.failures) == 1
    assert first.failures[0]["error"] == "exceeded task_timeout=3 s"
    second = _run(spec, tmp_path / "run", task_timeout=3)
    assert second.n_ok == 1 and not second.failures
    _assert_same_values(second.store, spec, tmp_path)
