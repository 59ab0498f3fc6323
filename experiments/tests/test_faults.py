"""Fault injection: a run survives its trials' deaths and its own, and a rerun heals it.

Each test disturbs a run (a worker killed mid-trial, a segfault, a trial past its memory or
time limit, the parent killed mid-write, two runs at once), reruns the same command and
compares the stored values with those of an undisturbed run (docs/design.md, Experiments:
"Faults"). The faulty mechanism lives in a plug-in module on a temporary path.
"""

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from privpub.experiments.runner import run_experiment
from privpub.experiments.spec import resolve_experiment
from privpub.experiments.store import ResultStore
from privpub.experiments.tests.conftest import with_ctrl_c
from privpub.registry import load_plugins

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "privpub_fault_plugins"

PLUGIN_SOURCE = textwrap.dedent('''
    """Mechanisms that fail once, the way a real trial can die (experiments/tests/test_faults)."""
    import ctypes
    import os
    import signal
    import time

    import numpy as np

    from privpub.registry import NO_PRIVACY, register_mechanism
    from privpub.types import Kind, as_binary_matrix


    def _fault(fault, marker):
        if fault == "none":
            return
        if marker:  # created exclusively: of two calls that get here at once, one fires
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
        if fault == "segv":
            ctypes.string_at(0)  # a real segmentation fault
        elif fault == "sigsegv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif fault == "exit":
            os._exit(3)
        elif fault == "memory":
            hog = np.ones(400 * 2**20 // 8)  # 400 MB, resident, until the worker is killed
            time.sleep(120)
            del hog
        elif fault == "sleep":
            time.sleep(120)


    @register_mechanism("fault_once", input_kind=Kind.BINARY_MATRIX,
                        output_kind=Kind.BINARY_MATRIX, privacy=NO_PRIVACY, role="reference")
    def fault_once(matrix, *, rng, tag: int = 0, fault: str = "none", marker: str = "",
                   pause: float = 0.0, started: str = "", gate: str = ""):
        """Drop entries at random; the first call with ``fault`` (the one that creates
        ``marker``) dies that way first. ``pause``: sleep this long (a slow trial).
        ``started``: a directory where each call leaves a file as it begins. ``gate``: calls
        with ``tag >= 2`` wait until this file exists. (Tests wait for these events rather
        than for a guessed number of seconds, so they hold on a busy machine.)"""
        if started:
            open(os.path.join(started, f"{os.getpid()}-{tag}-{time.monotonic_ns()}"), "w").close()
        if fault == "wrong_type":
            return [1, 2, 3]
        if tag == 0:
            _fault(fault, marker)
        while gate and tag >= 2 and not os.path.exists(gate):
            time.sleep(0.05)
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


def _spec(fault="none", marker="", tags=4, reps=2, pause=0.0, name="faults", gate=""):
    params = {"fault": fault, "marker": str(marker), "pause": pause, "gate": str(gate)}
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
    ("kill", "worker killed by SIGKILL", 2),  # a trial that kills its own worker
    ("exit", "worker exited with code 3", 2),
])
def test_a_dying_trial_is_one_failed_row_and_a_rerun_heals_it(plugin_dir, tmp_path, fault,
                                                              cause, n_jobs):
    marker = tmp_path / "fired"
    spec = _spec(fault, marker)  # both repetitions of tag 0 may start at once: one dies
    first = _run(spec, tmp_path / "run", n_jobs=n_jobs)
    errors = [f["error"] for f in first.failures]
    assert len(errors) == 1 and cause in errors[0], errors
    assert first.n_ok == spec.n_trials - 1  # every other trial finished
    second = _run(spec, tmp_path / "run", n_jobs=n_jobs)
    assert second.n_ok == 1 and not second.failures  # the failed trial is retried
    _assert_same_values(second.store, spec, tmp_path)


def _close_pipe_then_die(i, marker):
    if marker:  # the pipe to the parent closes now, the process ends a second later
        os.closerange(3, 65536)
        Path(marker).touch()
        time.sleep(1)
        os._exit(3)
    return i


def test_a_trial_sent_to_a_worker_that_just_died_runs_elsewhere(tmp_path, monkeypatch):
    """A quick trial's worker gets its next trial sent ahead; when the trial it runs has just
    killed it (its pipe is closed, its death not yet reported), that next trial is not lost
    and does not stop the run: it runs on another worker."""
    from privpub.experiments import pool

    monkeypatch.setattr(pool, "PREFETCH_SECONDS", 3600.0)  # always send ahead
    marker = tmp_path / "closed"

    def trials():
        yield 0, ""
        yield 1, str(marker)
        assert _wait_for(marker.exists, 300)  # trial 2 is sent ahead only once 1 has closed
        yield 2, ""

    out = list(pool.run_isolated(_close_pipe_then_die, trials(), {}, n_jobs=1,
                                 on_failure=lambda trial, reason: (trial, reason)))
    assert sorted(o for o in out if isinstance(o, int)) == [0, 2]
    assert [o for o in out if isinstance(o, tuple)] == [
        ((1, str(marker)), "worker exited with code 3 in the middle of the trial")]


def test_kill_9_of_a_worker_mid_trial_fails_that_trial_only(plugin_dir, tmp_path,
                                                            monkeypatch):
    """A worker killed from outside while it runs a trial (and holds the next one, sent
    ahead): the running trial fails, the one behind it runs elsewhere."""
    import threading

    from privpub.experiments import pool

    # every worker gets its next trial ahead after its first, however slow a busy machine
    # makes the trials (by default only when the last one took under PREFETCH_SECONDS)
    monkeypatch.setattr(pool, "PREFETCH_SECONDS", 3600.0)
    killed, finished = [], threading.Event()

    def kill_a_busy_worker():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not finished.is_set():
            busy = [w for w in list(pool._POOL) if len(w.queue) == 2]
            if busy:
                os.kill(busy[0].proc.pid, signal.SIGKILL)
                killed.append(busy[0].proc.pid)
                return
            time.sleep(0.01)

    spec = _spec(pause=0.3, tags=6)
    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    try:
        first = _run(spec, tmp_path / "run")
    finally:
        finished.set()
        killer.join()
    assert killed, "no worker held a trial sent ahead"
    assert [f["error"] for f in first.failures] == [
        "worker killed by SIGKILL (the out-of-memory killer or another process)"]
    assert first.n_ok == spec.n_trials - 1
    second = _run(spec, tmp_path / "run")
    assert second.n_ok == 1 and not second.failures
    _assert_same_values(second.store, spec, tmp_path)


def test_a_trial_past_trial_memory_fails_with_that_reason(plugin_dir, tmp_path):
    marker = tmp_path / "fired"
    spec = _spec("memory", marker)
    first = _run(spec, tmp_path / "run", trial_memory=300)
    assert [f["error"] for f in first.failures] == [
        f for f in (first.failures[0]["error"],) if f.startswith("exceeded trial_memory=300 MB")]
    assert first.n_ok == spec.n_trials - 1
    second = _run(spec, tmp_path / "run", trial_memory=300)
    assert second.n_ok == 1 and not second.failures
    _assert_same_values(second.store, spec, tmp_path)


def test_a_trial_past_trial_timeout_fails_with_that_reason(plugin_dir, tmp_path):
    marker = tmp_path / "fired"
    spec = _spec("sleep", marker)
    t0 = time.perf_counter()
    first = _run(spec, tmp_path / "run", trial_timeout=2)
    assert time.perf_counter() - t0 < 90  # never a hang: the trial would sleep 120 s
    assert len(first.failures) == 1
    assert first.failures[0]["error"] == "exceeded trial_timeout=2 s"
    second = _run(spec, tmp_path / "run", trial_timeout=2)
    assert second.n_ok == 1 and not second.failures
    _assert_same_values(second.store, spec, tmp_path)


def test_a_plugin_returning_the_wrong_type_is_told_the_expected_one(plugin_dir, tmp_path):
    summary = _run(_spec("wrong_type", tags=1, reps=1), tmp_path, n_jobs=1)
    assert [f["error"] for f in summary.failures] == [
        "PrivpubError: mechanism 'fault_once' returned a list; expected a binary_matrix "
        "(a scipy.sparse matrix), the kind it is registered as releasing"]


def test_an_unreadable_part_is_quarantined_and_its_rows_recomputed(plugin_dir, tmp_path,
                                                                   capfd):
    spec = _spec()
    first = _run(spec, tmp_path / "run")
    store = ResultStore(first.store)
    damaged = store.parts()[0]
    damaged.write_bytes(b"\0garbage\0" * 100)  # overwritten by something else
    second = _run(spec, tmp_path / "run")
    err = capfd.readouterr().err
    assert f"unreadable result part {damaged.name}" in err and "quarantine" in err
    assert (first.store / "quarantine" / damaged.name).is_file()
    assert second.n_ok > 0 and "unreadable part(s) moved to store/quarantine/" in (
        second.describe())
    third = _run(spec, tmp_path / "run")  # healed: nothing left to warn about or compute
    assert third.n_ok == 0 and not third.quarantined
    _assert_same_values(second.store, spec, tmp_path)


def _concurrent_run(results_dir, plugin_path, out):
    sys.path.insert(0, plugin_path)
    load_plugins([PLUGIN])
    summary = _run(_spec(pause=0.3), results_dir, n_jobs=1)
    Path(out).write_text(f"{summary.n_ok} {summary.n_stored}")


def test_two_runs_on_one_store_never_compute_a_trial_twice(plugin_dir, tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_concurrent_run,
                         args=(tmp_path / "run", str(plugin_dir), tmp_path / f"out{i}"))
             for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)
    counts = [tuple(map(int, (tmp_path / f"out{i}").read_text().split())) for i in range(2)]
    spec = _spec(pause=0.3)
    assert sum(ok for ok, _ in counts) == spec.n_trials  # each trial computed once
    assert all(ok + stored == spec.n_trials for ok, stored in counts)  # both runs complete
    store = ResultStore(tmp_path / "run" / "faults" / "paper" / "store")
    import pandas as pd

    raw = pd.concat([pd.read_parquet(p) for p in store.parts()])
    assert not raw.duplicated(["cell", "rep", "metric"]).any()
    assert not list((store.root / "locks").glob("*.lock"))  # every lock released
    _assert_same_values(store.root, spec, tmp_path)


def test_a_stale_lock_of_a_dead_run_is_taken_over(plugin_dir, tmp_path):
    from privpub.experiments.trial_locks import TrialLocks

    spec = _spec()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    locks = TrialLocks(tmp_path / "run" / "faults" / "paper" / "store" / "locks", 0, 0.0)
    locks.root.mkdir(parents=True)
    chunk = locks._chunk((spec.cells[0], 0))
    locks._path(chunk).write_text(
        f'{{"pid": {dead}, "host": "{locks._host}", "time": 0}}')
    summary = _run(spec, tmp_path / "run")
    assert summary.n_ok == spec.n_trials and not list(locks.root.glob("*.lock"))


def test_the_claims_dir_of_a_store_written_before_the_locks_is_ignored(plugin_dir, tmp_path):
    """Before they were called locks, a run's lock files were ``store/claims/<chunk>.claim``:
    nothing reads them now, not even one naming a live process (this one)."""
    from privpub.experiments.trial_locks import CHUNKS

    spec = _spec()
    old = tmp_path / "run" / "faults" / "paper" / "store" / "claims"
    old.mkdir(parents=True)
    for bucket in range(CHUNKS):
        (old / f"seed0-{bucket:02d}.claim").write_text(
            json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "time": 0}))
    summary = _run(spec, tmp_path / "run")
    assert summary.n_ok == spec.n_trials and not summary.failures


def _run_py(results_dir, *extra, pause=0.3, n_jobs=2, started=None):
    params = f"pause: {pause}" + (f", started: '{started}'" if started else "")
    return [sys.executable, str(ROOT / "run.py"), "experiment=epasto2022_fig3c", "scale=smoke",
            f"experiment.mechanisms=[{{name: fault_once, params: {{{params}}}, "
            "grid: {tag: [0, 1, 2, 3]}}]", "~experiment.grid",
            f"plugins=[{PLUGIN}]", f"results_dir={results_dir}", "progress=false",
            "plot=false", f"n_jobs={n_jobs}", *extra]


def _env(plugin_dir):
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(plugin_dir), os.environ.get("PYTHONPATH", "")])}


def _left_in_group(pgid: int) -> list[str]:
    """The live processes of a process group (Linux /proc)."""
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            left.append(entry.name)
    return left


def _wait_for(condition, seconds: float) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` pass; whether it holds."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def _gone(pgid: int, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while _left_in_group(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _left_in_group(pgid)


def test_ctrl_c_at_any_n_jobs_exits_130_at_once_leaving_no_process(plugin_dir, tmp_path):
    """Ctrl-C while the workers run trials of 10 minutes: the run exits at once (the bound
    is a minute so that a busy machine passes; at load 9 on 2 cores it took 0.7 s)."""
    from privpub.experiments.executors import cap_n_jobs

    started = tmp_path / "started"
    started.mkdir()
    args = with_ctrl_c(_run_py(tmp_path / "run", pause=600, n_jobs=1000, started=started))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=_env(plugin_dir))
    try:
        line = proc.stdout.readline()  # the run line: the workers start now
        assert line.startswith("privpub: epasto2022_fig3c"), line + proc.stderr.read()
        workers = min(2, cap_n_jobs(1000)[0])
        assert _wait_for(lambda: len(list(started.iterdir())) >= workers
                         or proc.poll() is not None, 300), "the trials did not start"
        assert proc.poll() is None, proc.stderr.read()
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
        out, err = proc.communicate(timeout=300)
        seconds = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and seconds < 60, (proc.returncode, seconds, err)
    assert "capped to" in err and "Traceback" not in err
    assert [x for x in err.splitlines() if x.startswith("privpub: interrupted:")]
    assert _gone(proc.pid)


def _slow_run(results_dir, plugin_path, gate):
    os.setsid()  # a process group of its own, as a shell gives a command
    sys.path.insert(0, plugin_path)
    load_plugins([PLUGIN])
    _run(_spec(pause=0.5, gate=gate), results_dir)


def test_kill_9_of_the_run_mid_write_then_a_rerun_completes(plugin_dir, tmp_path):
    import multiprocessing

    gate = tmp_path / "gate"  # the trials of tags 2 and 3 wait for it: the run cannot finish
    proc = multiprocessing.get_context("spawn").Process(
        target=_slow_run, args=(tmp_path / "run", str(plugin_dir), gate))
    proc.start()
    store = tmp_path / "run" / "faults" / "paper" / "store"
    assert _wait_for(lambda: any(store.glob("part-*")) or not proc.is_alive(), 300)
    assert proc.is_alive(), "the run ended before it was killed"
    os.kill(proc.pid, signal.SIGKILL)  # the run, while it writes its parts
    proc.join(60)
    assert _gone(proc.pid)  # its workers followed it
    spec = _spec(pause=0.5, gate=gate)
    assert 0 < len(ResultStore(store).trials(["jaccard"])) < spec.n_trials  # stopped half-way
    gate.touch()
    rerun = _run(spec, tmp_path / "run")  # the same command again
    assert rerun.n_done == spec.n_trials and not rerun.failures
    _assert_same_values(store, spec, tmp_path)


NUMBA_MODULE = '''
from numba import njit


@njit(cache=True)
def twice(x):
    return x * 2
'''

NUMBA_WORKER = '''
import sys, time
from pathlib import Path
from privpub.experiments.numba_cache import guard_numba_cache
guard_numba_cache(force=True)  # numba is imported
sys.path.insert(0, sys.argv[1])
if sys.argv[2]:  # both workers compile at once: each waits until the other is ready too
    barrier = Path(sys.argv[2])
    (barrier / sys.argv[3]).touch()
    deadline = time.monotonic() + 300
    while len(list(barrier.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
import numba_cached
first, second = (1, 1.5) if sys.argv[3] == "a" else (1.5, 1)
assert numba_cached.twice(first) == 2 * first and numba_cached.twice(second) == 2 * second
print(sum(numba_cached.twice.stats.cache_hits.values()))
'''


def test_two_fresh_workers_on_an_empty_numba_cache_at_once(tmp_path):
    """Two processes compile two signatures of one cached function on an empty
    NUMBA_CACHE_DIR at the same moment; a third then loads both from the cache intact."""
    (tmp_path / "numba_cached.py").write_text(NUMBA_MODULE)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT)}
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", NUMBA_WORKER, str(tmp_path), str(barrier),
                               order], env=env, stdout=subprocess.PIPE, text=True)
             for order in ("a", "b")]
    for p in procs:
        p.communicate(timeout=600)
        assert p.returncode == 0
    third = subprocess.run([sys.executable, "-c", NUMBA_WORKER, str(tmp_path), "", "a"],
                           env=env, capture_output=True, text=True, timeout=600)
    assert third.returncode == 0, third.stderr
    assert third.stdout.strip() == "2"  # both signatures read back from the cache


def test_too_many_trials_or_a_day_of_work_stops_unless_forced(plugin_dir, tmp_path):
    import tracemalloc

    from privpub.errors import ConfigError

    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="100,000,000 trials, more than 10,000,000"):
        _run(_spec(tags=1, reps=10**8), tmp_path)
    # lazy: a list of the 10^8 trials would take minutes and gigabytes (this: a second or two
    # at load 9 on 2 cores)
    assert time.perf_counter() - t0 < 30 and tracemalloc.get_traced_memory()[1] < 50 * 2**20
    from privpub.experiments.reuse import plan_trials  # with force=true: trials made as they run

    plan = plan_trials(_spec(tags=2, reps=10**8), ResultStore(tmp_path / "f" / "p" / "store"),
                       seed=0)
    trials = iter(plan.trials)
    assert len(plan.trials) == 2 * 10**8 and [next(trials)[1] for _ in range(3)] == [0, 1, 2]
    assert time.perf_counter() - t0 < 60 and tracemalloc.get_traced_memory()[1] < 50 * 2**20
    tracemalloc.stop()
    meta = tmp_path / "faults" / "paper" / "meta.json"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"seconds": {"per_trial": 3600.0}}))  # an hour per trial
    with pytest.raises(ConfigError, match="would take about 26 h with n_jobs=2"):
        _run(_spec(tags=13, reps=4), tmp_path)
    assert _run(_spec(tags=1, reps=1), tmp_path, force=True).n_ok == 1
