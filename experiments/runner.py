"""Run an :class:`~experiments.spec.ExperimentSpec`: every (cell, repetition) once.

- Seeds come from :func:`experiments.seeding.seed_sequence`, so rows are identical for any
  n_jobs, order or executor.
- Repetitions run in parallel through joblib (:mod:`experiments.executors`); completed tasks
  stream back and are flushed to the :class:`~experiments.store.ResultStore` every few
  seconds, so Ctrl-C or a crash loses at most the last few seconds of work.
- A task is one repetition of one cell under one base seed. Tasks already in the store
  (with all of the experiment's metrics) are reused while the code they depend on is
  unchanged (:mod:`experiments.provenance`); otherwise they are recomputed and the summary
  says how many, and which files changed. Rerunning resumes.
- Before any task runs, the files of every real dataset needed are checked (present, sha256);
  missing or corrupt files stop the run with one message naming every such file.
- A task that raises is recorded as a row with ``status="error"`` and the message; the
  others go on. :class:`RunSummary` reports the failures and the caller exits non-zero.
- A cell that cannot apply to its dataset (the mechanism raises
  :class:`~privpub.errors.NotApplicableError`, e.g. theta >= |V|) is recorded as
  ``status="skipped"`` with the reason, not as a failure.
- Ctrl-C stops the workers, keeps every finished task, and the summary says so.
- Each task's wall time, CPU time and peak memory are measured around the mechanism call:
  the worker process's peak resident memory (Linux ``VmHWM``, reset before each task, so it
  is the task's peak including the worker's baseline; elsewhere :mod:`tracemalloc`'s peak of
  traced allocations, which is slower). DP mechanisms get a
  :class:`~privpub.ledger.PrivacyLedger` whose record is stored with every row.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import re
import time
import traceback
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from experiments.executors import run_tasks
from experiments.seeding import canonical_json, seed_sequence, stable_hash, task_seeds
from experiments.spec import Cell, ExperimentSpec
from experiments.store import RELEASE_METRIC, ResultStore, encode_vector, metric_family
from privpub import cache as privpub_cache
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.noise import noise_off
from privpub.registry import get_mechanism, get_metric, import_plugins, view
from privpub.types import DegreeHistogram, DegreeSequence, Graph, Release, kind_of
from privpub.verify import verify_release

__all__ = ["RunSummary", "run_experiment", "run_task", "store_dir", "code_version"]

#: The caveat of a noise-free twin's rows (their privacy column says "none").
NOISE_FREE_CAVEAT = (
    "noise switched off (every noise primitive draws zero): the mechanism's noise-free "
    "limit, not a private release"
)


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


# ----------------------------------------------------------------------------- one task
@functools.lru_cache(maxsize=16)  # longest-first scheduling interleaves datasets
def _load(
    dataset: str, options_json: str, data_dir: str | None, base_seed: int, allow_download: bool
):
    """Load (or generate) a dataset once per worker process."""
    from privpub.data import get_dataset_spec, load_dataset

    options = json.loads(options_json)
    rng = None
    if get_dataset_spec(dataset).synthetic:
        rng = np.random.default_rng(
            seed_sequence(base_seed, {"dataset": dataset, "options": options})
        )
    return load_dataset(
        dataset, data_dir=data_dir, rng=rng, allow_download=allow_download, **options
    )


@functools.lru_cache(maxsize=32)
def _truth(
    dataset: str, options_json: str, data_dir, base_seed: int, allow_download: bool, kind: str
):
    return view(_load(dataset, options_json, data_dir, base_seed, allow_download), kind)


_PROC = Path("/proc/self")


def _rss_peak_mb() -> float:
    for line in (_PROC / "status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return math.nan


def _reset_rss_peak() -> bool:
    try:
        (_PROC / "clear_refs").write_text("5")  # resets VmHWM (Linux >= 4.0)
        return True
    except OSError:
        return False


def memory_probe() -> Callable[[], float]:
    """Start measuring; the returned function gives the peak in MB since the start.

    The process's peak resident memory where Linux lets it be reset (60 microseconds),
    else the peak of :mod:`tracemalloc`'s traced allocations (numpy reports to it), which
    slows allocation-heavy code about threefold."""
    if _reset_rss_peak():
        return _rss_peak_mb
    tracemalloc.start()

    def stop() -> float:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        return peak

    return stop


#: A release that took at least this long is kept for later tasks with the same key.
RELEASE_CACHE_SECONDS = 1.0


def _read_release(path: Path | None) -> dict | None:
    if path is None or not path.is_file():
        return None
    import joblib

    try:
        return joblib.load(path)
    except Exception:  # damaged or from another library version: computed again
        return None


def _write_release(path: Path, value: dict) -> None:
    import uuid

    import joblib

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.{uuid.uuid4().hex[:8]}.tmp")
        joblib.dump(value, tmp)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - a cache that cannot be written only costs time
        pass


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, PrivpubError):
        return f"{type(exc).__name__}: {exc}"
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" (at {Path(frame.filename).name}:{frame.lineno})" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"


def release_vector(release) -> np.ndarray | None:
    """The vector stored for a release when an experiment keeps releases: the counts of a
    degree histogram, the values of a degree sequence, the degree histogram of a graph
    (sala2011 Fig. 5's degree CDFs); None for other kinds."""
    if isinstance(release, DegreeHistogram):
        return np.asarray(release.counts, dtype=float)
    if isinstance(release, DegreeSequence):
        return np.asarray(release.values, dtype=float)
    if isinstance(release, Graph):
        return np.asarray(release.degree_histogram().counts, dtype=float)
    return None


def _truth_row(cell: Cell, options_json: str, base: dict, vector) -> dict:
    """The stored truth of a dataset (one per dataset, options and base seed)."""
    return {
        "experiment": base["experiment"],
        "scale": base["scale"],
        "cell": "truth-" + stable_hash(cell.dataset_identity)[:16],
        "rep": 0,
        "base_seed": base["base_seed"],
        "code_hash": base["code_hash"],
        "dataset": cell.dataset,
        "dataset_options": options_json,
        "mechanism": "truth",
        "label": "truth",
        "role": "reference",
        "params": "{}",
        "privacy": "none",
        "status": "ok",
        "error": None,
        "written_at": time.time(),
        "metric": RELEASE_METRIC,
        "value": math.nan,
        "release": encode_vector(vector),
    }


def run_task(
    cell: Cell,
    rep: int,
    code_hash: str = "",
    release_key: str | None = None,
    *,
    experiment: str,
    scale: str,
    metrics: list[str],
    base_seed: int,
    data_dir: str | None,
    allow_download: bool = False,
    measure_memory: bool = True,
    version: str = "",
    plugins: tuple[str, ...] = (),
    keep_releases: bool = False,
    release_dir: str | None = None,
    cold: bool = False,
) -> list[dict]:
    """Run one repetition of one cell; return its tidy rows (one per metric value).

    With ``release_dir`` and a ``release_key`` (the cell, seed, repetition and the code of
    the mechanism and data loader), a release that took long to compute is kept there and
    read back by any later task with the same key, e.g. another experiment that measures
    the same synthetic graphs with other metrics (sala2011 Figs. 5-9).

    With ``keep_releases`` the released vector (:func:`release_vector`) is stored too, in a
    row with ``metric == "release"``, and repetition 0 also stores the dataset's truth.
    Never raises for a failure of the mechanism, a metric or the data: it returns one row
    with ``status="error"`` instead (``status="skipped"`` when the mechanism finds that the
    cell cannot apply to the dataset).
    """
    task_start = time.perf_counter()
    import_plugins(plugins)
    ss, mech_ss, metric_ss = task_seeds(base_seed, cell.seed_identity, rep)
    info = get_mechanism(cell.mechanism)
    options_json = canonical_json(cell.dataset_options)
    base = {
        "experiment": experiment,
        "scale": scale,
        "cell": cell.cell_id,
        "rep": rep,
        "base_seed": int(base_seed),
        "seed": int(ss.generate_state(1)[0]),
        "dataset": cell.dataset,
        "dataset_options": options_json,
        "mechanism": cell.mechanism,
        "label": cell.label,
        "role": info.role,
        "paper": info.paper,
        "params": canonical_json(cell.params),
        **cell.params,
        "privacy": "none" if cell.noise_free else info.privacy,
        "caveat": NOISE_FREE_CAVEAT if cell.noise_free else info.caveat_for(cell.params),
        "noise_free": cell.noise_free,
        "code_hash": code_hash,
        "code_version": version,
    }
    ledger = kept = truth_row = None
    seconds = cpu_seconds = peak_mb = math.nan
    try:
        data = _load(cell.dataset, options_json, data_dir, base_seed, allow_download)
        kwargs = dict(cell.params)
        if info.is_dp:
            ledger = PrivacyLedger(kwargs["epsilon"])
            kwargs["ledger"] = ledger
        rng = np.random.default_rng(mech_ss)
        kept_path = None
        if release_dir and release_key:
            kept_path = Path(release_dir) / f"{release_key}.pkl"
        cached = _read_release(kept_path)
        if cached is not None:  # computed before by the same code for the same task
            output, ledger = cached["output"], cached["ledger"]
            seconds, cpu_seconds, peak_mb = cached["seconds"], cached["cpu_seconds"], math.nan
            base["release_cached"] = True
        else:
            peak = memory_probe() if measure_memory else None
            with contextlib.ExitStack() as stack:
                if cold:  # a running time: the whole computation, no cached piece
                    stack.enter_context(privpub_cache.cold())
                start, cpu_start = time.perf_counter(), time.process_time()
                try:
                    with noise_off() if cell.noise_free else contextlib.nullcontext():
                        output = info.func(data, rng=rng, **kwargs)
                finally:
                    seconds = time.perf_counter() - start
                    cpu_seconds = time.process_time() - cpu_start
                    if peak is not None:
                        peak_mb = peak()
            if kept_path is not None and seconds >= RELEASE_CACHE_SECONDS:
                _write_release(kept_path, {"output": output, "ledger": ledger,
                                           "seconds": seconds, "cpu_seconds": cpu_seconds})
        release, extra = (
            (output.value, output.info) if isinstance(output, Release) else (output, {})
        )
        if kind_of(release) != info.output_kind:
            raise PrivpubError(
                f"mechanism {info.name!r} returned a {kind_of(release)}, "
                f"but is registered as releasing {info.output_kind}"
            )
        if ledger is not None and ledger.spent <= 0:
            raise PrivpubError(
                f"DP mechanism {info.name!r} spent nothing through its ledger: its privacy "
                "claim cannot be checked"
            )
        verified = verify_release(info.privacy, data, release, cell.params)
        values: list[tuple[str, float]] = []
        # a noise-free twin's metrics stay noise-free: a learner's CV metric refits it
        # (accuracy_cv_learner), which runs the mechanism again
        quiet = noise_off if cell.noise_free else contextlib.nullcontext
        for name in metrics:
            metric = get_metric(name)
            truth = _truth(
                cell.dataset, options_json, data_dir, base_seed, allow_download, info.output_kind
            )
            stream = metric_ss(metric.stream)  # a deviation metric shares its curve's stream
            kw = {"rng": np.random.default_rng(stream)} if metric.takes_rng else {}
            with quiet():
                result = metric.func(truth, release, **kw)
            if isinstance(result, dict):
                values.extend((f"{name}/{k}", float(v)) for k, v in result.items())
            else:
                values.append((name, float(result)))
        values.extend(
            (f"info/{k}", float(v))
            for k, v in extra.items()
            if isinstance(v, (int, float, np.number))
        )
        vector = release_vector(release) if keep_releases else None
        if vector is not None:
            kept = encode_vector(vector)
            if rep == 0:
                truth = _truth(
                    cell.dataset,
                    options_json,
                    data_dir,
                    base_seed,
                    allow_download,
                    info.output_kind,
                )
                truth_row = _truth_row(cell, options_json, base, release_vector(truth))
        status, error = "ok", None
    except NotApplicableError as exc:  # the cell cannot apply to this dataset: not a failure
        status, error, verified = "skipped", str(exc), None
        values, kept, truth_row = [("", math.nan)], None, None
    except Exception as exc:  # recorded, never lost: the run goes on
        status, error, verified = "error", _error_text(exc), None
        values, kept, truth_row = [("", math.nan)], None, None
    outcome = {
        **base,
        "seconds": seconds,
        "task_seconds": time.perf_counter() - task_start,
        "cpu_seconds": cpu_seconds,
        "peak_mb": peak_mb,
        "epsilon_spent": ledger.spent if ledger else math.nan,
        "ledger": ledger.to_json() if ledger else None,
        "verified": verified,
        "status": status,
        "error": error,
        "written_at": time.time(),
    }
    rows = [{**outcome, "metric": m, "value": v} for m, v in values]
    if kept is not None:
        rows.append({**outcome, "metric": RELEASE_METRIC, "value": math.nan, "release": kept})
    if truth_row is not None:
        rows.append(truth_row)
    return rows


# ----------------------------------------------------------------------------- a whole run
def _check_data_files(datasets, data_dir, allow_download: bool) -> None:
    """Pre-flight: every real dataset's files present and intact (sha256), else one clear
    :class:`~privpub.errors.DataError` naming every missing or corrupt file."""
    from privpub.data import check_dataset_files

    check_dataset_files(sorted(datasets), data_dir=data_dir, allow_download=allow_download)


def cell_fingerprints(cells, metrics=()) -> dict[str, tuple[str, dict[str, str]]]:
    """cell id -> (code hash, per-module hashes) of the code a cell's result depends on: its
    mechanism, its dataset loader, the ``metrics``, the view that gives the metrics their
    truth, the verifier of its privacy notion, and what they import (see
    :mod:`experiments.provenance`)."""
    from experiments.provenance import clear_cache, code_fingerprint
    from privpub.data import get_dataset_spec
    from privpub.registry import view_function

    clear_cache()  # the sources may have changed since the last run in this process
    metric_modules = sorted({get_metric(m).func.__module__ for m in metrics})
    by_modules: dict[tuple, tuple[str, dict]] = {}
    out = {}
    for cell in cells:
        info, data = get_mechanism(cell.mechanism), get_dataset_spec(cell.dataset)
        modules = (info.func.__module__, data.loader.__module__, *metric_modules)
        if info.privacy in ("k-anonymity", "smooth-k-anonymity"):
            modules += ("privpub.verify",)
        view = view_function(data.kind, info.output_kind)
        key = (modules, view)
        if key not in by_modules:
            by_modules[key] = code_fingerprint(modules, [view] if view else [])
        out[cell.cell_id] = by_modules[key]
    return out


def _look_elsewhere(tasks, spec: ExperimentSpec, store: ResultStore, seed: int, *, share=True):
    """Read the stores of the results directory (any experiment and scale) once, for two
    things; returns ``(shared, costs)``.

    ``shared``: every task that another experiment's store holds done, for the same cell,
    seed and repetition, computed by the same code (equal ``code_hash``) with every row
    this experiment needs, is copied into ``store``; these are their (cell id, rep).
    ``costs``: the mean measured seconds of earlier runs, by cell id and by (mechanism,
    dataset), which schedules the longest tasks first.

    The seeds depend only on the cell and the repetition, and each metric has its own
    stream, so such a task's rows are exactly what this run would compute (day2016 Figs. 3,
    5, 7 and 8 share their θ-Cumulative and (θ,Ω)-Histogram cells)."""
    import pandas as pd

    wanted = {(t[0].cell_id, t[1]): (t[0], t[2]) for t in tasks}
    cells = {cell_id for cell_id, _ in wanted}
    needed = set(spec.expected_rows) | ({RELEASE_METRIC} if spec.keep_releases else set())
    found: dict[tuple, pd.DataFrame] = {}
    truths: dict[str, pd.DataFrame] = {}
    timed: list[pd.DataFrame] = []
    for other in sorted(store.root.parent.parent.parent.glob("*/*/store")):
        frame = ResultStore(other).load()
        if frame.empty or "code_hash" not in frame.columns:
            continue
        tasks_of = frame.drop_duplicates(["cell", "base_seed", "rep"])
        took = tasks_of["task_seconds"] if "task_seconds" in tasks_of else tasks_of["seconds"]
        timed.append(tasks_of[["cell", "mechanism", "dataset"]].assign(seconds=took))
        if not share or other == store.root or len(found) == len(wanted):
            continue
        frame = frame[frame["base_seed"] == seed]
        truth = frame[frame["cell"].astype(str).str.startswith("truth-")]
        for cell_id, rows in truth.groupby("cell"):
            truths.setdefault(cell_id, rows)
        frame = frame[frame["cell"].isin(cells)]
        for (cell_id, rep), rows in frame.groupby(["cell", "rep"]):
            key = (cell_id, int(rep))
            if key in found or key not in wanted:
                continue
            have = set(metric_family(rows["metric"], needed))
            if set(rows["code_hash"]) == {wanted[key][1]} and needed <= have:
                found[key] = rows
    costs: dict = {}
    if timed:
        times = pd.concat(timed, ignore_index=True).dropna(subset=["seconds"])
        costs.update(times.groupby("cell")["seconds"].mean().to_dict())
        costs.update(times.groupby(["mechanism", "dataset"])["seconds"].mean().to_dict())
    if not found:
        return set(), costs
    now = time.time()
    copies = []
    for key, rows in found.items():
        cell = wanted[key][0]
        rows = rows.copy()
        for column in _param_columns(rows) - set(cell.params):
            rows[column] = math.nan
        rows = rows.assign(**cell.params)
        rows = rows.assign(experiment=spec.name, scale=spec.scale, label=cell.label,
                           params=canonical_json(cell.params), written_at=now)
        copies.append(rows)
        if spec.keep_releases:
            truth_id = "truth-" + stable_hash(cell.dataset_identity)[:16]
            if truth_id in truths:
                copies.append(truths.pop(truth_id).assign(
                    experiment=spec.name, scale=spec.scale, written_at=now))
    store.write(pd.concat(copies, ignore_index=True).to_dict("records"))
    return set(found), costs


def _longest_first(tasks, costs: dict) -> list:
    """Tasks by decreasing expected time, so the last minutes are not one long task on one
    core: a cell's measured mean, else its mechanism's on that dataset, else the dataset's
    size (rows, edges or entries). Ties keep their order."""
    from privpub.data import get_dataset_spec

    def size(dataset: str) -> float:
        expected = get_dataset_spec(dataset).expected
        for key in ("n_edges", "lcc_edges", "nnz", "n_rows", "n_nodes"):
            if isinstance(expected.get(key), (int, float)):
                return float(expected[key])
        return 0.0

    def cost(task) -> tuple:
        cell = task[0]
        measured = costs.get(cell.cell_id, costs.get((cell.mechanism, cell.dataset)))
        return (0, -measured) if measured is not None else (1, -size(cell.dataset))

    return sorted(tasks, key=cost)


def _param_columns(rows) -> set[str]:
    """The parameter columns of stored rows (every column not in the results format)."""
    from privpub.results import COLUMN_ORDER

    return set(rows.columns) - set(COLUMN_ORDER)


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
    from experiments.provenance import describe_changes

    t0 = time.perf_counter()
    import_plugins(plugins)
    store = ResultStore(store_dir(results_dir, spec.name, spec.scale) / "store")
    fingerprints = cell_fingerprints(spec.cells, spec.metrics)
    release_code = cell_fingerprints(spec.cells)  # the mechanism and data, not the metrics

    def release_key(cell, rep: int) -> str:
        return stable_hash([cell.identity, int(seed), rep, release_code[cell.cell_id][0]])[:32]

    done = {} if rerun else store.tasks(spec.expected_rows)
    summary = RunSummary(spec.name, spec.scale, store.root, n_tasks=spec.n_tasks)
    tasks, stale_codes, stale = [], set(), set()
    for cell in spec.cells:
        code = fingerprints[cell.cell_id][0]
        for rep in range(spec.repetitions):
            stored = done.get((cell.cell_id, int(seed), rep), False)
            if stored == code:
                summary.n_stored += 1
                continue
            if stored is not False:
                stale.add((cell.cell_id, rep))
                stale_codes.add((stored, cell.cell_id))
            tasks.append((cell, rep, code, release_key(cell, rep)))
    if stale_codes:
        known = store.code_modules()
        changed = set()
        for old, cell_id in stale_codes:
            changed |= set(describe_changes(known.get(old), fingerprints[cell_id][1]) or [])
        summary.changed_files = sorted(changed)
    if tasks:  # computed by another experiment: read, not recomputed
        shared, costs = _look_elsewhere(tasks, spec, store, int(seed),
                                        share=not (rerun or spec.cold))
        tasks = _longest_first([t for t in tasks if (t[0].cell_id, t[1]) not in shared], costs)
        summary.n_stored += len(shared)
        summary.n_shared = len(shared)
        stale -= shared
    summary.n_recomputed = len(stale)
    _check_data_files({t[0].dataset for t in tasks}, data_dir, allow_download)
    if bar is not None:
        bar.update(spec.n_tasks - len(tasks))
    if not tasks:
        summary.seconds = time.perf_counter() - t0
        return summary
    store.record_code({code: modules for code, modules in fingerprints.values()})
    common = dict(
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
    buffer: list[dict] = []
    last_flush = time.monotonic()

    def flush():
        nonlocal buffer, last_flush
        store.write(buffer)
        buffer, last_flush = [], time.monotonic()

    from tqdm.auto import tqdm

    own_bar = bar is None
    if own_bar:
        bar = tqdm(
            total=len(tasks), desc=f"{spec.name} [{spec.scale}]", unit="task",
            disable=not progress,
        )
    results = run_tasks(
        run_task, tasks, common, n_jobs=n_jobs, executor=executor, dask_address=dask_address
    )
    try:
        for rows in results:
            buffer.extend(rows)
            bar.update(1)
            first = rows[0]
            if first["status"] == "error":
                summary.failures.append(
                    {
                        "where": f"{first['dataset']} / {first['label']} {first['params']} "
                        f"rep {first['rep']}",
                        "error": first["error"],
                    }
                )
            elif first["status"] == "skipped":
                summary.n_not_applicable += 1
                reason = f"{first['label']} on {first['dataset']}: {first['error']}"
                summary.skip_reasons[reason] = summary.skip_reasons.get(reason, 0) + 1
            else:
                summary.n_ok += 1
            if time.monotonic() - last_flush > flush_seconds:
                flush()
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:  # Ctrl-C or a crash of the executor: keep what finished
        close = getattr(results, "close", None)
        if close is not None:
            try:
                close()  # stops the workers and cancels what has not started
            except (Exception, KeyboardInterrupt):
                pass
        flush()
        if own_bar:
            bar.close()
        summary.seconds = time.perf_counter() - t0
    return summary

