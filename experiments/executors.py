"""Pluggable executors for the repetitions: our isolating pool, or one joblib call.

``executor`` is one of

- ``process`` (default): our own pool (:mod:`privpub.experiments.pool`), ``n_jobs`` worker
  processes (one with ``n_jobs=1``); a trial whose worker dies or exceeds ``trial_timeout`` /
  ``trial_memory`` is one failed trial, the others go on;
- ``sequential``: a plain loop in this process (no isolation: a trial that kills its process
  ends the run);
- ``loky``: joblib's process pool; workers are reused across trials and keep their
  dataset cache (a worker's death ends the run);
- ``threading``: joblib threads (memory is then not measured per trial: a peak is
  per process);
- ``dask``: joblib's dask backend on a ``dask.distributed`` cluster — the scheduler at
  ``dask_address``, or a LocalCluster of ``n_jobs`` single-threaded worker processes when it
  is None. Needs the ``dask`` extra (``pip install privpub[dask]``).

What each one isolates is in docs/design.md (Experiments: "Executors", "Faults").
Results come back as trials finish (``return_as="generator_unordered"``); since every trial
carries its own seed, order does not change any number.
"""

from __future__ import annotations

import argparse
import math
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack

from privpub.errors import ConfigError

__all__ = ["EXECUTORS", "run_trials", "cap_n_jobs", "isolation_note"]

EXECUTORS = ("process", "sequential", "loky", "threading", "dask")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cap_n_jobs(n_jobs: int, executor: str = "process") -> tuple[int, str | None]:
    """``n_jobs`` as run (-1: every core; more than the cores: the cores, with a note)."""
    if executor == "dask" or not isinstance(n_jobs, int) or isinstance(n_jobs, bool):
        return n_jobs, None
    cores = _cores()
    if n_jobs == -1:
        return cores, None
    if n_jobs > cores:
        return cores, f"n_jobs={n_jobs} capped to {cores} (the cores this process may use)"
    return n_jobs, None


def trial_limits(trial_timeout=None, trial_memory=None, *, default_timeout: float,
                 default_memory: float) -> tuple[float | None, float | None]:
    """``(seconds, MB)`` per trial as the pool takes them: None takes the default,
    ``math.inf`` is no limit (None); anything but a positive number is a
    :class:`~privpub.errors.ConfigError`."""
    out = []
    for key, value, default, unit in (("trial_timeout", trial_timeout, default_timeout,
                                       "seconds"),
                                      ("trial_memory", trial_memory, default_memory, "MB")):
        value = default if value is None else value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ConfigError(f"{key} must be a positive number of {unit} (inf: no limit), "
                              f"got {value!r}")
        out.append(None if math.isinf(value) else float(value))
    return tuple(out)


def limit_argument(unit: str):
    """The argparse ``type`` of ``--trial-timeout`` / ``--trial-memory``: a positive number
    of ``unit``, ``inf`` for no limit."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not value > 0:
            raise argparse.ArgumentTypeError(f"a positive number of {unit} (inf: no limit), "
                                             f"not {text!r}")
        return value

    return parse


def isolation_note(executor: str, n_jobs: int, *, trial_timeout=None,
                   trial_memory=None) -> str | None:
    """One line when the executor cannot keep a dying trial from ending the run, or cannot
    enforce the per-trial limits (None for ``process``)."""
    if executor == "process":
        return None
    limits = " and trial_timeout/trial_memory are not enforced" if (
        trial_timeout or trial_memory) else ""
    if executor in ("sequential", "threading"):
        return (f"executor={executor} runs trials in this process: a trial that crashes it "
                f"ends the run{limits} (executor=process isolates them)")
    if executor == "dask":
        return f"executor=dask: dask retries or reports a dead worker's trial{limits}"
    return (f"executor={executor}: a worker's death ends the run{limits} "
            "(executor=process isolates trials)")


def run_trials(
    func: Callable,
    trials: list[tuple],
    common: dict,
    *,
    n_jobs: int = 1,
    executor: str = "loky",
    dask_address: str | None = None,
    on_failure: Callable[[tuple, str], object] | None = None,
    trial_timeout: float | None = None,
    trial_memory: float | None = None,
    code: dict[str, str] | None = None,
) -> Iterator:
    """Yield ``func(*trial, **common)`` for every trial, in completion order.

    ``executor="process"``: a trial whose worker dies or exceeds ``trial_timeout`` seconds or
    ``trial_memory`` MB yields ``on_failure(trial, reason)`` instead (default: raise); its
    workers are reused across calls unless ``code`` (module -> hash) changed."""
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; known executors: {', '.join(EXECUTORS)}")
    if not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ConfigError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
    if executor == "process":
        from privpub.experiments.pool import can_fork_workers, run_isolated

        if not can_fork_workers():  # a job of a pool itself (e.g. Hydra's joblib launcher)
            return (func(*trial, **common) for trial in trials)
        return run_isolated(func, trials, common, n_jobs=cap_n_jobs(n_jobs)[0],
                            on_failure=on_failure or _raise, trial_timeout=trial_timeout,
                            trial_memory=trial_memory, code=code)
    if executor == "sequential" or (n_jobs == 1 and executor != "dask"):
        return (func(*trial, **common) for trial in trials)
    if executor == "threading":
        common = {**common, "measure_memory": False}
    return _joblib(func, trials, common, n_jobs=n_jobs, executor=executor,
                   dask_address=dask_address)


def _raise(trial: tuple, reason: str):
    raise RuntimeError(f"trial {trial!r} failed: {reason}")


def _joblib(func, trials: Iterable, common, *, n_jobs, executor, dask_address):
    import joblib

    # loky replaces a worker whose memory grew past 300 MB between two trials (its leak guard)
    # and reports each replacement with this warning; no trial is lost (joblib#883, loky#641).
    # At paper scale it fired on every replacement and buried the progress line.
    warnings.filterwarnings(
        "ignore", message="A worker stopped while some jobs were given", category=UserWarning
    )

    with ExitStack() as stack:
        backend = executor
        if executor == "dask":
            try:
                from dask.distributed import Client, LocalCluster
            except ImportError:
                raise ConfigError(
                    "executor=dask needs dask.distributed: pip install 'privpub[dask]'"
                ) from None
            if dask_address:
                stack.enter_context(Client(dask_address))
            else:
                workers = n_jobs if n_jobs > 0 else None
                cluster = stack.enter_context(
                    LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None)
                )
                stack.enter_context(Client(cluster))
            n_jobs = -1
        stack.enter_context(joblib.parallel_config(backend=backend, n_jobs=n_jobs))
        parallel = joblib.Parallel(return_as="generator_unordered", batch_size="auto")
        yield from parallel(joblib.delayed(func)(*trial, **common) for trial in trials)
