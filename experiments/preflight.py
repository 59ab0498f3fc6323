"""Errors before work: every job of a sweep (every spec of a leaderboard) is resolved and its
data files checked before the first trial runs, and each error is said once.

:func:`check_data` checks the real data files of every resolved :class:`Job` at once (per
data directory); :func:`report` turns the jobs' errors into one message naming which jobs
each error stops, then every missing or corrupt file once. The callers
(:class:`privpub.experiments.hydra_support.PrivpubCallback`,
:func:`privpub.experiments.leaderboard.run_leaderboard`) resolve the jobs, which is
composition only: no dataset is loaded. docs/design.md (Experiments: "Errors before work").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from privpub.experiments.spec import ExperimentSpec

__all__ = ["Job", "check_data", "report"]

#: At most this many job names on one line of the report; the others are counted.
_SHOWN = 6


@dataclass
class Job:
    """One run to check before any runs: its name in messages (``#2 (dataset=karate)``,
    a trial's id), its resolved spec (None: it did not resolve, see ``error``) and what its
    data check needs (the run's settings)."""

    label: str
    spec: ExperimentSpec | None = None
    error: str | None = None
    seed: int = 0
    results_dir: str = "results"
    data_dir: str | None = None
    allow_download: bool = False
    rerun: bool = False
    #: datasets whose files are missing or corrupt and that a trial still to run needs
    needs: list[str] = field(default_factory=list)

    @property
    def datasets(self) -> set[str]:
        return {c.dataset for c in self.spec.cells} if self.spec is not None else set()


def check_data(jobs: list[Job]) -> list[str]:
    """Check the real data files of every resolved job, all jobs of a data directory at
    once; set each job's :attr:`Job.needs` and return the data errors' messages (one per
    data directory whose files some job needs: every missing or corrupt file named once).

    Like a run (:func:`privpub.experiments.runner.run_experiment`), a job needs the files
    of the trials it still has to compute: a missing dataset whose trials are all stored
    stops nothing. The store is read only when a file is missing or corrupt; with
    ``allow_download`` the needed files are fetched here, before any trial runs.
    """
    from privpub.data import check_dataset_files
    from privpub.errors import DataError

    groups: dict[tuple, list[Job]] = {}
    for job in jobs:
        if job.spec is not None:
            groups.setdefault((job.data_dir, job.allow_download), []).append(job)
    messages = []
    for (data_dir, allow_download), members in groups.items():
        names = sorted(set().union(*(j.datasets for j in members)))
        bad = _bad_datasets(names, data_dir)
        if not bad:
            continue
        needed: set[str] = set()
        for job in members:
            touched = bad & job.datasets
            job.needs = sorted(touched & _pending_datasets(job)) if touched else []
            needed |= set(job.needs)
        if not needed:
            continue
        try:
            check_dataset_files(sorted(needed), data_dir=data_dir,
                                allow_download=allow_download)
        except DataError as exc:
            messages.append(str(exc))
        still = _bad_datasets(sorted(needed), data_dir) if allow_download else needed
        for job in members:
            job.needs = [d for d in job.needs if d in still]
    return messages


def _bad_datasets(names, data_dir) -> set[str]:
    """The datasets among ``names`` with a missing or corrupt file (synthetic ones have
    none; each file is hashed once per process)."""
    from privpub.data import file_status, get_dataset_spec

    real = [n for n in names if not get_dataset_spec(n).synthetic]
    return {d for st in file_status(real, data_dir=data_dir) if not st.ok for d in st.datasets}


def _pending_datasets(job: Job) -> set[str]:
    """The datasets of the trials ``job`` still has to compute (the run's plan)."""
    from privpub.experiments.reuse import plan_trials
    from privpub.experiments.runner import store_dir
    from privpub.experiments.store import ResultStore

    store = ResultStore(store_dir(job.results_dir, job.spec.name, job.spec.scale) / "store")
    plan = plan_trials(job.spec, store, seed=int(job.seed), rerun=job.rerun)
    return {cell.dataset for cell in plan.trials.cells()}


def report(jobs: list[Job], data_messages=(), *, noun: str = "job") -> str | None:
    """One message for every job that cannot run, None when all can: a head line, then
    one line per distinct error naming the jobs it stops, then the data errors (each file
    once). Of a single job, its errors as its run says them."""
    bad = [j for j in jobs if j.error or j.needs]
    if not bad:
        return None
    groups: dict[str, list[Job]] = {}
    for job in bad:
        reason = job.error or (f"needs {', '.join(job.needs)}, whose data files are "
                               "missing or corrupt (below)")
        groups.setdefault(reason, []).append(job)
    labels = list(dict.fromkeys(j.label for j in jobs))
    n_bad = len(dict.fromkeys(j.label for j in bad))
    if len(labels) == 1:  # as the run itself says it
        return "\n".join([*dict.fromkeys(j.error for j in bad if j.error), *data_messages])
    if n_bad == len(labels):
        head = f"none of the {len(labels)} {noun}s can run:"
    else:
        head = f"{n_bad} of the {len(labels)} {noun}s cannot run, so none was started:"
    lines = [head]
    for reason, members in groups.items():
        first, *rest = reason.splitlines()
        lines.append(f"  {_names(members, labels, noun)}: {first}")
        lines += [f"    {line}" for line in rest]
    return "\n".join([*lines, *data_messages])


def _names(members: list[Job], labels: list[str], noun: str) -> str:
    """``#0 (seed=0), #1 (seed=1)``; ``every job`` when it is all of them (and more than
    one); at most :data:`_SHOWN` names, the others counted."""
    mine = list(dict.fromkeys(j.label for j in members))
    if len(mine) == len(labels) > 1:
        return f"every {noun}"
    shown = ", ".join(mine[:_SHOWN])
    return shown + (f" and {len(mine) - _SHOWN} more" if len(mine) > _SHOWN else "")
