"""Run an :class:`~privpub.experiments.spec.ExperimentSpec`: every (cell, repetition) once.

:func:`run_experiment` plans the run (:mod:`privpub.experiments.reuse`: what is stored, what another
experiment computed, longest first), checks the data files, runs the remaining trials
(:func:`privpub.experiments.trial.run_trial`) through an executor
(:mod:`privpub.experiments.executors`) and
streams their rows into the result store (:class:`privpub.experiments.store.StoreWriter`). What a
run
promises (resume, failures, Ctrl-C, exit codes) is in docs/design.md (Experiments: "Trial",
"Store", "Code-aware reuse", "Failures", "Exit codes").
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from privpub.errors import ConfigError
from privpub.experiments.executors import run_trials
from privpub.experiments.reuse import plan_trials
from privpub.experiments.spec import ExperimentSpec
from privpub.experiments.store import ResultStore, StoreWriter
from privpub.experiments.trial import failed_trial_rows, run_trial
from privpub.experiments.trial_locks import LOCKS_DIR, TrialLocks
from privpub.registry import import_plugins

__all__ = ["RunSummary", "run_experiment", "run_trial", "store_dir", "code_version",
           "check_size", "worker_plugins"]


@dataclass
class RunSummary:
    """What a run did with the trials it was asked for."""

    experiment: str
    scale: str
    store: Path
    n_trials: int = 0  # asked for: cells x repetitions
    n_stored: int = 0  # reused from the store
    n_shared: int = 0  # copied from another experiment's store (the same trial, same code)
    n_ok: int = 0  # ran and succeeded
    n_recomputed: int = 0  # of those that ran: stored before, but their code changed
    changed_files: list[str] = field(default_factory=list)
    n_not_applicable: int = 0  # ran and were skipped: the cell cannot apply (with reasons)
    skip_reasons: dict[str, int] = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    quarantined: list = field(default_factory=list)  # unreadable parts: (name, rows or None)
    planned_at: float = 0.0  # time.time() when the store was read for the plan

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def n_done(self) -> int:
        """Trials that are now in the store (stored, ran, skipped or failed)."""
        return self.n_stored + self.n_ok + self.n_not_applicable + len(self.failures)

    def record(self, rows: list[dict]) -> None:
        """Count one finished trial from its rows (a failure, a skip or a success)."""
        first = rows[0]
        if first["status"] == "error":
            self.failures.append(
                {
                    "where": f"{first['dataset']} / {first['label']} {first['params']} "
                    f"rep {first['rep']}",
                    "error": first["error"],
                    "label": first["label"],
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
        ran = f"{self.n_ok} trial(s) ran"
        if self.n_recomputed and self.changed_files:
            files = ", ".join(self.changed_files[:4])
            more = f" and {len(self.changed_files) - 4} more" if len(self.changed_files) > 4 else ""
            ran += f" ({self.n_recomputed} recomputed: code changed in {files}{more})"
        elif self.n_recomputed:
            ran += f" ({self.n_recomputed} recomputed: stored by code whose record is gone)"
        if self.quarantined:
            counts = [r for _, r in self.quarantined]
            lost = (f"the {sum(counts)} row(s)" if None not in counts else "the trials")
            ran += (f" ({lost} of {len(counts)} unreadable part(s) moved to "
                    "store/quarantine/ recomputed)")
        stored = f"{self.n_stored} already stored"
        if self.n_shared:
            stored += f" ({self.n_shared} from other experiments)"
        lines = [
            f"{self.experiment} [{self.scale}]: {ran}, {stored}, "
            f"{self.n_not_applicable} skipped (not applicable), {len(self.failures)} failed "
            f"({self.seconds:.1f} s) -> {self.store}"
        ]
        for reason, count in _merge_reasons(self.skip_reasons):
            lines.append(f"  skipped {count} trial(s): {reason}")
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
    """Package version plus the git commit of the checkout (with ``+dirty`` if modified);
    the version alone when installed from a wheel (no checkout to describe)."""
    import subprocess

    import privpub
    from privpub.experiments.catalog import CHECKOUT

    version = privpub.__version__
    if CHECKOUT is None:
        return version
    try:
        commit = subprocess.run(
            ["git", "-C", str(CHECKOUT), "describe", "--always", "--dirty=+dirty"],
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
    executor: str = "process",
    dask_address: str | None = None,
    allow_download: bool = False,
    progress: bool = True,
    measure_memory: bool = True,
    rerun: bool = False,
    flush_seconds: float = 5.0,
    plugins: tuple[str, ...] = (),
    bar=None,
    trial_timeout: float | None = None,
    trial_memory: float | None = None,
    force: bool = False,
) -> RunSummary:
    """Run every trial of ``spec`` (cell x repetition under ``seed``) that the store does not
    hold for the current code; return a summary.

    Ctrl-C (``KeyboardInterrupt``) stops the workers and returns the summary with
    ``interrupted=True`` once every finished trial is stored. ``bar``: a progress bar shared
    with other runs (a multirun's), advanced by this run's trials, stored ones included.
    ``trial_timeout`` (seconds) and ``trial_memory`` (MB of the worker's resident memory): a
    trial past either is stopped and stored as failed (``executor="process"`` only).
    Unless ``force``, a run of more than :data:`MAX_TRIALS` trials, or whose measured time per
    trial says it would take more than :data:`MAX_SECONDS`, is a :class:`ConfigError`.
    """
    t0 = time.perf_counter()
    import_plugins(plugins)
    check_size(spec, force=force)
    store = ResultStore(store_dir(results_dir, spec.name, spec.scale) / "store")
    planned_at = time.time()
    plan = plan_trials(spec, store, seed=int(seed), rerun=rerun)
    if not force:
        _check_expected_time(spec, store.root.parent, len(plan.trials), n_jobs)
    summary = RunSummary(spec.name, spec.scale, store.root, n_trials=spec.n_trials,
                         n_stored=plan.n_stored, n_shared=plan.n_shared,
                         n_recomputed=plan.n_recomputed, changed_files=plan.changed_files,
                         quarantined=list(store.quarantined), planned_at=planned_at)
    _check_data_files({cell.dataset for cell in plan.trials.cells()}, data_dir, allow_download)
    if bar is not None:
        bar.update(spec.n_trials - len(plan.trials))
    if plan.trials:
        store.record_code(plan.code_modules)
        common = _trial_arguments(spec, results_dir=results_dir, seed=seed, data_dir=data_dir,
                                  allow_download=allow_download, measure_memory=measure_memory,
                                  plugins=plugins)
        writer = StoreWriter(store, flush_seconds=flush_seconds)
        own_bar = bar is None
        if own_bar:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(plan.trials), desc=f"{spec.name} [{spec.scale}]", unit="trial",
                       disable=not progress)
        run = functools.partial(
            run_trials, run_trial, common=common, n_jobs=n_jobs, executor=executor,
            dask_address=dask_address, trial_timeout=trial_timeout, trial_memory=trial_memory,
            on_failure=functools.partial(_failed, common),
            code={m: h for modules in plan.code_modules.values() for m, h in modules.items()})
        try:
            _run_rounds(plan.trials, store, summary, bar, writer, seed=int(seed),
                        metrics=spec.expected_rows, run=run)
        finally:
            if own_bar:
                bar.close()
    summary.seconds = time.perf_counter() - t0
    return summary


#: Above this many trials a run needs ``force=true`` (trials are made as they run: this is a
#: guard against a typo in the repetitions, not a memory limit).
MAX_TRIALS = 10**7
#: Above this estimated wall time (seconds: the measured time per trial x trials / jobs) too.
MAX_SECONDS = 86400.0


def check_size(spec: ExperimentSpec, *, force: bool = False) -> None:
    """A :class:`ConfigError` when ``spec`` has more than :data:`MAX_TRIALS` trials, unless
    ``force`` (a multirun checks every job with it before the first runs)."""
    if spec.n_trials > MAX_TRIALS and not force:
        raise ConfigError(
            f"{spec.name} [{spec.scale}] has {spec.n_trials:,} trials, more than "
            f"{MAX_TRIALS:,}; lower experiment.repetitions or the grid, or pass force=true")


def _check_expected_time(spec: ExperimentSpec, where: Path, n_trials: int, n_jobs: int) -> None:
    """A :class:`ConfigError` when the experiment's measured seconds per trial at this scale
    (``meta.json``, the timing table's source) say the run would take more than a day."""
    import json

    try:
        per_trial = float(json.loads((where / "meta.json").read_text())["seconds"]["per_trial"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    jobs = n_jobs if isinstance(n_jobs, int) and n_jobs > 0 else 1
    expected = per_trial * n_trials / jobs
    if expected > MAX_SECONDS:
        raise ConfigError(
            f"{spec.name} [{spec.scale}]: {n_trials:,} trials at the measured {per_trial:.3g} s "
            f"per trial would take about {expected / 3600:,.0f} h with n_jobs={jobs}; "
            "lower the repetitions or the grid, or pass force=true")


def _trial_arguments(spec: ExperimentSpec, *, results_dir, seed, data_dir, allow_download,
                     measure_memory, plugins) -> dict:
    """The keyword arguments every trial of the run gets (:func:`run_trial`)."""
    return dict(
        experiment=spec.name,
        scale=spec.scale,
        metrics=spec.metrics,
        base_seed=int(seed),
        data_dir=None if data_dir is None else str(data_dir),
        allow_download=allow_download,
        measure_memory=measure_memory,
        version=code_version(),
        plugins=_worker_plugins(spec, plugins),
        keep_releases=spec.keep_releases,
        release_dir=None if spec.cold else str(Path(results_dir) / ".cache" / "releases"),
        cold=spec.cold,
    )


def _failed(common: dict, trial: tuple, reason: str) -> list[dict]:
    """The rows of a trial whose worker died or passed a limit (``reason``)."""
    return failed_trial_rows(*trial, error=reason, **common)


def _worker_plugins(spec: ExperimentSpec, plugins) -> tuple[str, ...]:
    """:func:`worker_plugins` of ``spec``'s mechanisms."""
    return worker_plugins(dict.fromkeys(cell.mechanism for cell in spec.cells), plugins)


def worker_plugins(mechanisms, plugins) -> tuple[str, ...]:
    """``plugins`` plus the module that registers each of ``mechanisms`` outside privpub
    (one the caller imported itself, or an installed plug-in's: a worker imports it
    first instead of looking for it)."""
    from privpub.registry import get_mechanism

    modules = list(plugins)
    for name in mechanisms:
        module = get_mechanism(name).registered_by
        if module.split(".")[0] not in _PROJECT and module != "__main__" \
                and module not in modules:
            modules.append(module)
    return tuple(modules)


_PROJECT = ("privpub",)


def _run_rounds(trials: list, store: ResultStore, summary: RunSummary, bar, writer, *,
                seed: int, metrics, run) -> None:
    """Run ``trials`` (``run(trials)`` streams their rows) in rounds: each locks the chunks
    no other run holds (:class:`~privpub.experiments.trial_locks.TrialLocks`) and runs them;
    the next waits for the chunks it deferred and runs what their run did not store."""
    since = summary.planned_at
    while trials:
        locks = TrialLocks(store.root / LOCKS_DIR, seed, since)
        try:
            _collect(run(trials=locks.take(trials)), writer, summary, bar)
        finally:
            locks.release()  # after _collect wrote their rows
        if summary.interrupted or not locks.deferred:
            return
        try:
            locks.wait()
        except KeyboardInterrupt:
            summary.interrupted = True
            return
        since = time.time()
        done = store.trials(metrics)
        trials = [t for t in locks.deferred if done.get((t[0].cell_id, seed, t[1])) != t[2]]
        found = len(locks.deferred) - len(trials)  # the other run stored them
        summary.n_stored += found
        bar.update(found)


def _collect(results, writer: StoreWriter, summary: RunSummary, bar) -> None:
    """Stream the finished trials' rows into the store and the summary. Ctrl-C or a crash of
    the executor stops the workers and keeps every trial that finished."""
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
