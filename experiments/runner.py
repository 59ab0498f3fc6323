"""Run an :class:`~experiments.spec.ExperimentSpec`: every (cell, repetition) once.

- Seeds come from :func:`experiments.seeding.seed_sequence`, so rows are identical for any
  n_jobs, order or executor.
- Repetitions run in parallel through joblib (:mod:`experiments.executors`); completed tasks
  stream back and are flushed to the :class:`~experiments.store.ResultStore` every few
  seconds, so Ctrl-C or a crash loses at most the last few seconds of work.
- Tasks already in the store (with all of the experiment's metrics) are skipped: rerunning
  resumes.
- Before any task runs, the files of every real dataset needed are checked (present, sha256);
  a missing or corrupt file stops the run with one message naming file, URL and path.
- A task that raises is recorded as a row with ``status="error"`` and the message; the
  others go on. :class:`RunSummary` reports the failures and the caller exits non-zero.
- Each task's wall time and peak traced memory (:mod:`tracemalloc`, which numpy reports to)
  are measured around the mechanism call; DP mechanisms get a
  :class:`~privpub.ledger.PrivacyLedger` whose record is stored with every row.
"""

from __future__ import annotations

import functools
import json
import math
import time
import traceback
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from experiments.executors import run_tasks
from experiments.seeding import canonical_json, seed_sequence, stable_hash
from experiments.spec import Cell, ExperimentSpec
from experiments.store import RELEASE_METRIC, ResultStore, encode_vector
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.registry import get_mechanism, get_metric, load_plugins, view
from privpub.types import DegreeHistogram, DegreeSequence, Release, kind_of
from privpub.verify import verify_release

__all__ = ["RunSummary", "run_experiment", "run_task", "store_dir", "code_version"]


@dataclass
class RunSummary:
    """What a run did: counts of tasks and the failures (cell label -> message)."""

    experiment: str
    scale: str
    store: Path
    n_tasks: int = 0
    n_skipped: int = 0
    n_ok: int = 0
    failures: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    def describe(self) -> str:
        lines = [
            f"{self.experiment} [{self.scale}]: {self.n_ok} task(s) ran, {self.n_skipped} "
            f"already stored, {len(self.failures)} failed ({self.seconds:.1f} s) -> {self.store}"
        ]
        for f in self.failures[:20]:
            lines.append(f"  FAILED {f['where']}: {f['error']}")
        if len(self.failures) > 20:
            lines.append(f"  ... and {len(self.failures) - 20} more (see the store's error rows)")
        return "\n".join(lines)


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
@functools.lru_cache(maxsize=4)
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


@functools.lru_cache(maxsize=8)
def _truth(
    dataset: str, options_json: str, data_dir, base_seed: int, allow_download: bool, kind: str
):
    return view(_load(dataset, options_json, data_dir, base_seed, allow_download), kind)


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, PrivpubError):
        return f"{type(exc).__name__}: {exc}"
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" (at {Path(frame.filename).name}:{frame.lineno})" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"


def release_vector(release) -> np.ndarray | None:
    """The vector stored for a release when an experiment keeps releases: the counts of a
    degree histogram, the values of a degree sequence; None for other kinds."""
    if isinstance(release, DegreeHistogram):
        return np.asarray(release.counts, dtype=float)
    if isinstance(release, DegreeSequence):
        return np.asarray(release.values, dtype=float)
    return None


def _truth_row(cell: Cell, options_json: str, experiment: str, scale: str, vector) -> dict:
    """The stored truth of a dataset (one per dataset and options; duplicates collapse)."""
    return {
        "experiment": experiment,
        "scale": scale,
        "cell": "truth-" + stable_hash(cell.dataset_identity)[:16],
        "rep": 0,
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
) -> list[dict]:
    """Run one repetition of one cell; return its tidy rows (one per metric value).

    With ``keep_releases`` the released vector (:func:`release_vector`) is stored too, in a
    row with ``metric == "release"``, and repetition 0 also stores the dataset's truth.
    Never raises for a failure of the mechanism, a metric or the data: it returns one row
    with ``status="error"`` instead.
    """
    load_plugins(plugins)
    ss = seed_sequence(base_seed, cell.identity, rep)
    mech_ss, metric_ss = ss.spawn(2)
    info = get_mechanism(cell.mechanism)
    options_json = canonical_json(cell.dataset_options)
    base = {
        "experiment": experiment,
        "scale": scale,
        "cell": cell.cell_id,
        "rep": rep,
        "seed": int(ss.generate_state(1)[0]),
        "dataset": cell.dataset,
        "dataset_options": options_json,
        "mechanism": cell.mechanism,
        "label": cell.label,
        "role": info.role,
        "paper": info.paper,
        "params": canonical_json(cell.params),
        **cell.params,
        "privacy": info.privacy,
        "caveat": info.caveat_for(cell.params),
        "code_version": version,
    }
    ledger = kept = truth_row = None
    seconds = peak_mb = math.nan
    try:
        data = _load(cell.dataset, options_json, data_dir, base_seed, allow_download)
        kwargs = dict(cell.params)
        if info.is_dp:
            ledger = PrivacyLedger(kwargs["epsilon"])
            kwargs["ledger"] = ledger
        rng = np.random.default_rng(mech_ss)
        if measure_memory:
            tracemalloc.start()
        start = time.perf_counter()
        try:
            output = info.func(data, rng=rng, **kwargs)
        finally:
            seconds = time.perf_counter() - start
            if measure_memory:
                peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
                tracemalloc.stop()
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
        metric_rng = np.random.default_rng(metric_ss)
        values: list[tuple[str, float]] = []
        for name in metrics:
            metric = get_metric(name)
            truth = _truth(
                cell.dataset, options_json, data_dir, base_seed, allow_download, info.output_kind
            )
            kw = {"rng": metric_rng} if metric.takes_rng else {}
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
                truth_row = _truth_row(cell, options_json, experiment, scale, release_vector(truth))
        status, error = "ok", None
    except Exception as exc:  # recorded, never lost: the run goes on
        status, error, verified = "error", _error_text(exc), None
        values, kept, truth_row = [("", math.nan)], None, None
    outcome = {
        **base,
        "seconds": seconds,
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
    :class:`~privpub.errors.DataError` before any task runs."""
    from privpub.data import dataset_files, get_dataset_spec

    for name in sorted(datasets):
        if not get_dataset_spec(name).synthetic:
            dataset_files(name, data_dir=data_dir, allow_download=allow_download)


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
) -> RunSummary:
    """Run every (cell, repetition) of ``spec`` not yet in the store; return a summary."""
    t0 = time.perf_counter()
    store = ResultStore(store_dir(results_dir, spec.name, spec.scale) / "store")
    done = set() if rerun else store.completed(spec.expected_rows)
    tasks = [
        (c, r) for c in spec.cells for r in range(spec.repetitions) if (c.cell_id, r) not in done
    ]
    _check_data_files({c.dataset for c, _ in tasks}, data_dir, allow_download)
    summary = RunSummary(spec.name, spec.scale, store.root, n_tasks=len(tasks))
    summary.n_skipped = len(spec.cells) * spec.repetitions - len(tasks)
    if not tasks:
        summary.seconds = time.perf_counter() - t0
        return summary
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
    )
    buffer: list[dict] = []
    last_flush = time.monotonic()

    def flush():
        nonlocal buffer, last_flush
        store.write(buffer)
        buffer, last_flush = [], time.monotonic()

    from tqdm.auto import tqdm

    bar = tqdm(
        total=len(tasks), desc=f"{spec.name} [{spec.scale}]", unit="task", disable=not progress
    )
    try:
        for rows in run_tasks(
            run_task, tasks, common, n_jobs=n_jobs, executor=executor, dask_address=dask_address
        ):
            buffer.extend(rows)
            bar.update(1)
            if rows and rows[0]["status"] == "error":
                r = rows[0]
                summary.failures.append(
                    {
                        "where": f"{r['dataset']} / {r['label']} {r['params']} rep {r['rep']}",
                        "error": r["error"],
                    }
                )
            else:
                summary.n_ok += 1
            if time.monotonic() - last_flush > flush_seconds:
                flush()
    finally:  # Ctrl-C or a crash of the executor: keep what finished
        flush()
        bar.close()
        summary.seconds = time.perf_counter() - t0
    return summary
