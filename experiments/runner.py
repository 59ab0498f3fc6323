"""Run an :class:`~experiments.spec.ExperimentSpec`: every (cell, repetition) once.

:func:`run_experiment` plans the run (:mod:`experiments.reuse`: what is stored, what another
experiment computed, longest first), checks the data files, runs the remaining tasks
(:func:`experiments.task.run_task`) through an executor (:mod:`experiments.executors`) and
streams their rows into the result store (:class:`experiments.store.StoreWriter`). What a run
promises (resume, failures, Ctrl-C, exit codes) is in docs/design.md (Experiments: "Task",
"Store", "Code-aware reuse", "Failures", "Exit codes").
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from experiments.executors import run_tasks
from experiments.reuse import plan_tasks
from experiments.spec import ExperimentSpec
from experiments.store import ResultStore, StoreWriter
from experiments.task import run_task
from privpub.registry import import_plugins

__all__ = ["RunSummary", "run_experiment", "run_task", "store_dir", "code_version"]


@dataclass
class RunSummary:
    """What a run did with the tasks it was asked for."""

    experiment: str
    scale: str
    store: Path
    n_tasks: int = 0  # asked for: cells x repetitions
    n_stored: int = 0  # reused from the store
    n_shared: int = 0  # copied from another experiment's store (the same task, same code)
    n_ok: int = 0  # ran and succeeded
    n_recomputed: int = 0  # of those that ran: stored before, but their code changed
    changed_files: list[str] = field(default_factory=list)
    n_not_applicable: int = 0  # ran and were skipped: the cell cannot apply (with reasons)
    skip_reasons: dict[str, int] = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def n_done(self) -> int:
        """Tasks that are now in the store (stored, ran, skipped or failed)."""
        return self.n_stored + self.n_ok + self.n_not_applicable + len(self.failures)

    def record(self, rows: list[dict]) -> None:
        """Count one finished task from its rows (a failure, a skip or a success)."""
        first = rows[0]
        if first["status"] == "error":
            self.failures.append(
                {
                    "where": f"{first['dataset']} / {first['label']} {first['params']} "
                    f"rep {first['rep']}",
                    "error": first["error"],
                }
            )
        elif first["status"] == "skipped":
            self.n_not_applicable += 1
            reason = f"{first['label']} on {first['dataset']}: {first['error']}"
            self.skip_reasons[reason] = self.skip_reasons.get(reason, 0) + 1
        else:
            self.n_ok += 1

    def describe(self, *, failures: bool = True) -> str:
        """One run line, then the skip reasons and (unless ``failures`` is false: a multirun
        lists them once, at its end) the failures."""
        ran = f"{self.n_ok} task(s) ran"
        if self.n_recomputed and self.changed_files:
            files = ", ".join(self.changed_files[:4])
            more = f" and {len(self.changed_files) - 4} more" if len(self.changed_files) > 4 else ""
            ran += f" ({self.n_recomputed} recomputed: code changed in {files}{more})"
        elif self.n_recomputed:
            ran += f" ({self.n_recomputed} recomputed: stored by code whose record is gone)"
        stored = f"{self.n_stored} already stored"
        if self.n_shared:
            stored += f" ({self.n_shared} from other experiments)"
        lines = [
            f"{self.experiment} [{self.scale}]: {ran}, {stored}, "
            f"{self.n_not_applicable} skipped (not applicable), {len(self.failures)} failed "
            f"({self.seconds:.1f} s) -> {self.store}"
        ]
        for reason, count in _merge_reasons(self.skip_reasons):
            lines.append(f"  skipped {count} task(s): {reason}")
        for f in self.failures[:20] if failures else ():
            lines.append(f"  FAILED {f['where']}: {f['error']}")
        if failures and len(self.failures) > 20:
            lines.append(f"  ... and {len(self.failures) - 20} more (see the store's error rows)")
        return "\n".join(lines)


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")


def _merge_reasons(reasons: dict[str, int]) -> list[tuple[str, int]]:
    """Skip reasons that differ only in their numbers, as one line with each differing
    number shown as its range (``15146516 to 75985197``), sorted by text."""
    groups: dict[str, list[tuple[list[str], int]]] = {}
    for reason, count in reasons.items():
        parts = _NUMBER.split(reason)
        groups.setdefault(_NUMBER.sub("#", reason), []).append((parts, count))
    merged = []
    for members in groups.values():
        parts = list(members[0][0])
        for i in range(1, len(parts), 2):  # the numbers sit at the odd positions
            values = sorted({m[0][i] for m in members}, key=float)
            if len(values) > 1:
                parts[i] = f"{values[0]} to {values[-1]}"
        merged.append(("".join(parts), sum(m[1] for m in members)))
    return sorted(merged)


def store_dir(results_dir: Path | str, experiment: str, scale: str) -> Path:
    """Where an experiment's rows and figures live: ``<results_dir>/<experiment>/<scale>``."""
    return Path(results_dir) / experiment / scale


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """Package version plus the git commit of the checkout (with ``+dirty`` if modified)."""
    import subprocess

    import privpub

    version = privpub.__version__
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty=+dirty"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        return f"{version}@{commit}" if commit else version
    except (OSError, subprocess.SubprocessError):
        return version


def _check_data_files(datasets, data_dir, allow_download: bool) -> None:
    """Pre-flight: every real dataset's files present and intact (sha256), else one clear
    :class:`~privpub.errors.DataError` naming every missing or corrupt file."""
    from privpub.data import check_dataset_files

    check_dataset_files(sorted(datasets), data_dir=data_dir, allow_download=allow_download)


def run_experiment(
    spec: ExperimentSpec,
    *,
    results_dir: Path | str,
    seed: int = 0,
    n_jobs: int = 1,
    data_dir: str | None = None,
    executor: str = "loky",
    dask_address: str | None = None,
    allow_download: bool = False,
    progress: bool = True,
    measure_memory: bool = True,
    rerun: bool = False,
    flush_seconds: float = 5.0,
    plugins: tuple[str, ...] = (),
    bar=None,
) -> RunSummary:
    """Run every task of ``spec`` (cell x repetition under ``seed``) that the store does not
    hold for the current code; return a summary.

    Ctrl-C (``KeyboardInterrupt``) stops the workers and returns the summary with
    ``interrupted=True`` once every finished task is stored. ``bar``: a progress bar shared
    with other runs (a multirun's), advanced by this run's tasks, stored ones included.
    """
    t0 = time.perf_counter()
    import_plugins(plugins)
    store = ResultStore(store_dir(results_dir, spec.name, spec.scale) / "store")
    plan = plan_tasks(spec, store, seed=int(seed), rerun=rerun)
    summary = RunSummary(spec.name, spec.scale, store.root, n_tasks=spec.n_tasks,
                         n_stored=plan.n_stored, n_shared=plan.n_shared,
                         n_recomputed=plan.n_recomputed, changed_files=plan.changed_files)
    _check_data_files({t[0].dataset for t in plan.tasks}, data_dir, allow_download)
    if bar is not None:
        bar.update(spec.n_tasks - len(plan.tasks))
    if plan.tasks:
        store.record_code(plan.code_modules)
        common = _task_arguments(spec, results_dir=results_dir, seed=seed, data_dir=data_dir,
                                 allow_download=allow_download, measure_memory=measure_memory,
                                 plugins=plugins)
        writer = StoreWriter(store, flush_seconds=flush_seconds)
        own_bar = bar is None
        if own_bar:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(plan.tasks), desc=f"{spec.name} [{spec.scale}]", unit="task",
                       disable=not progress)
        try:
            results = run_tasks(run_task, plan.tasks, common, n_jobs=n_jobs, executor=executor,
                                dask_address=dask_address)
            _collect(results, writer, summary, bar)
        finally:
            if own_bar:
                bar.close()
    summary.seconds = time.perf_counter() - t0
    return summary


def _task_arguments(spec: ExperimentSpec, *, results_dir, seed, data_dir, allow_download,
                    measure_memory, plugins) -> dict:
    """The keyword arguments every task of the run gets (:func:`run_task`)."""
    return dict(
        experiment=spec.name,
        scale=spec.scale,
        metrics=spec.metrics,
        base_seed=int(seed),
        data_dir=None if data_dir is None else str(data_dir),
        allow_download=allow_download,
        measure_memory=measure_memory,
        version=code_version(),
        plugins=tuple(plugins),
        keep_releases=spec.keep_releases,
        release_dir=None if spec.cold else str(Path(results_dir) / ".cache" / "releases"),
        cold=spec.cold,
    )


def _collect(results, writer: StoreWriter, summary: RunSummary, bar) -> None:
    """Stream the finished tasks' rows into the store and the summary. Ctrl-C or a crash of
    the executor stops the workers and keeps every task that finished."""
    try:
        for rows in results:
            bar.update(1)
            summary.record(rows)
            writer.add(rows)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            try:
                close()  # stops the workers and cancels what has not started
            except (Exception, KeyboardInterrupt):
                pass
        writer.flush()
