"""Pluggable executors for the repetitions: one joblib call, whatever the backend.

``executor`` is one of

- ``sequential``: a plain loop in this process (what ``n_jobs=1`` uses anyway);
- ``loky`` (default): joblib's process pool; workers are reused across tasks and keep their
  dataset cache;
- ``threading``: joblib threads (memory is then not measured per task: a peak is
  per process);
- ``dask``: joblib's dask backend on a ``dask.distributed`` cluster — the scheduler at
  ``dask_address``, or a LocalCluster of ``n_jobs`` single-threaded worker processes when it
  is None. Needs the ``dask`` extra (``pip install privpub[dask]``).

Results come back as tasks finish (``return_as="generator_unordered"``); since every task
carries its own seed, order does not change any number.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack

from privpub.errors import ConfigError

__all__ = ["EXECUTORS", "run_tasks"]

EXECUTORS = ("sequential", "loky", "threading", "dask")


def run_tasks(
    func: Callable,
    tasks: list[tuple],
    common: dict,
    *,
    n_jobs: int = 1,
    executor: str = "loky",
    dask_address: str | None = None,
) -> Iterator:
    """Yield ``func(*task, **common)`` for every task, in completion order."""
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; known executors: {', '.join(EXECUTORS)}")
    if not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ConfigError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
    if executor == "sequential" or (n_jobs == 1 and executor != "dask"):
        return (func(*task, **common) for task in tasks)
    if executor == "threading":
        common = {**common, "measure_memory": False}
    return _joblib(func, tasks, common, n_jobs=n_jobs, executor=executor, dask_address=dask_address)


def _joblib(func, tasks: Iterable, common, *, n_jobs, executor, dask_address):
    import joblib

    # loky replaces a worker whose memory grew past 300 MB between two tasks (its leak guard)
    # and reports each replacement with this warning; no task is lost (joblib#883, loky#641).
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
        yield from parallel(joblib.delayed(func)(*task, **common) for task in tasks)
