"""One trial: one repetition of one cell, from its data to its tidy result rows.

:func:`run_trial` loads the dataset (once per worker), runs the mechanism with its own seeds
and ledger, measures it, verifies the release, computes the metrics and returns the rows; it
never raises for a failure of the trial itself. The rows, the measurements and the release
cache are described in docs/design.md (Experiments: "Trial", "Memory", "Executors", "Never
computed twice", "Not applicable", "Failures").
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import time
import traceback
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from privpub import cache as privpub_cache
from privpub.errors import NotApplicableError, PrivpubError
from privpub.experiments.numba_cache import guard_numba_cache
from privpub.experiments.seeding import canonical_json, seed_sequence, stable_hash, trial_seeds
from privpub.experiments.spec import Cell
from privpub.experiments.store import RELEASE_METRIC, encode_vector
from privpub.ledger import PrivacyLedger
from privpub.noise import noise_off
from privpub.registry import get_mechanism, get_metric, import_plugins, view
from privpub.results import DIAGNOSTIC_PREFIX, INFO_PREFIX
from privpub.types import DegreeHistogram, DegreeSequence, Graph, Kind, Release, kind_of
from privpub.verify import verify_release

__all__ = [
    "run_trial",
    "failed_trial_rows",
    "release_vector",
    "memory_probe",
    "NOISE_FREE_CAVEAT",
    "RELEASE_CACHE_SECONDS",
]

#: The caveat of a noise-free twin's rows (their privacy column says "none").
NOISE_FREE_CAVEAT = (
    "noise switched off (every noise primitive draws zero): the mechanism's noise-free "
    "limit, not a private release"
)



# ----------------------------------------------------------------------------- one trial
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


#: A release that took at least this long is kept for later trials with the same key.
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



@dataclass
class _Outcome:
    """What a trial measured and computed; kept when a later step fails (an error row still
    carries the ledger and the time of a mechanism that ran)."""

    ledger: PrivacyLedger | None = None
    seconds: float = math.nan
    cpu_seconds: float = math.nan
    peak_mb: float = math.nan
    cached: bool = False  # the release was read from the release cache
    verified: bool | None = None
    # the verifier's verdict kept with a cached release (its key covers the verifier's code)
    cached_verdict: bool | None = None
    values: list[tuple[str, float]] = field(default_factory=list)
    kept: bytes | None = None  # the encoded release vector (keep_releases)
    truth_row: dict | None = None
    status: str = "ok"
    error: str | None = None

    def fail(self, status: str, error: str) -> None:
        self.status, self.error, self.verified = status, error, None
        self.values, self.kept, self.truth_row = [("", math.nan)], None, None

    def rows(self, base: dict, trial_seconds: float) -> list[dict]:
        """The trial's tidy rows: one per metric value (one row for a failed or skipped
        trial), then the kept release and the dataset's truth."""
        ledger = self.ledger
        outcome = {
            **base,
            **({"release_cached": True} if self.cached else {}),
            "seconds": self.seconds,
            "task_seconds": trial_seconds,  # the whole trial (the column keeps its name)
            "cpu_seconds": self.cpu_seconds,
            "peak_mb": self.peak_mb,
            "epsilon_spent": ledger.spent if ledger else math.nan,
            "ledger": ledger.to_json() if ledger else None,
            "verified": self.verified,
            "status": self.status,
            "error": self.error,
            "written_at": time.time(),
        }
        rows = [{**outcome, "metric": m, "value": v} for m, v in self.values]
        if self.kept is not None:
            rows.append({**outcome, "metric": RELEASE_METRIC, "value": math.nan,
                         "release": self.kept})
        if self.truth_row is not None:
            rows.append(self.truth_row)
        return rows


def run_trial(
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
    read back by any later trial with the same key, e.g. another experiment that measures
    the same synthetic graphs with other metrics (sala2011 Figs. 5-9).

    With ``keep_releases`` the released vector (:func:`release_vector`) is stored too, in a
    row with ``metric == "release"``, and repetition 0 also stores the dataset's truth.
    Never raises for a failure of the mechanism, a metric or the data: it returns one row
    with ``status="error"`` instead (``status="skipped"`` when the mechanism finds that the
    cell cannot apply to the dataset).
    """
    trial_start = time.perf_counter()
    import_plugins(plugins)
    ss, mech_ss, metric_ss = trial_seeds(base_seed, cell.seed_identity, rep)
    info = get_mechanism(cell.mechanism)
    guard_numba_cache()  # numba is imported by now if the mechanism uses it
    source = (cell.dataset, canonical_json(cell.dataset_options), data_dir, base_seed,
              allow_download)  # the arguments of _load
    base = _trial_columns(cell, rep, info, ss, experiment=experiment, scale=scale,
                          base_seed=base_seed, code_hash=code_hash, version=version)
    out = _Outcome()
    kept_path = Path(release_dir) / f"{release_key}.pkl" if release_dir and release_key else None
    try:
        data = _load(*source)
        output = _release(cell, info, data, mech_ss, out, kept_path=kept_path,
                          measure_memory=measure_memory, cold=cold)
        release, extra = (
            (output.value, _reported(output)) if isinstance(output, Release) else (output, {})
        )
        _check_release(info, release, out.ledger)
        if out.cached_verdict is not None:  # verified when it was computed, by this code
            out.verified = out.cached_verdict
        else:
            out.verified = verify_release(info.privacy, data, release,
                                          _called_with(info, cell.params))
        if kept_path is not None and not out.cached and out.seconds >= RELEASE_CACHE_SECONDS:
            _write_release(kept_path, {"output": output, "ledger": out.ledger,
                                       "seconds": out.seconds, "cpu_seconds": out.cpu_seconds,
                                       "verified": out.verified})
        out.values = _metric_values(cell, info, release, extra, metrics, source, metric_ss)
        if keep_releases:
            out.kept, out.truth_row = _kept_release(cell, rep, info, release, source, base)
    except NotApplicableError as exc:  # the cell cannot apply to this dataset: not a failure
        out.fail("skipped", str(exc))
    except Exception as exc:  # recorded, never lost: the run goes on
        out.fail("error", _error_text(exc))
    return out.rows(base, time.perf_counter() - trial_start)


def failed_trial_rows(cell: Cell, rep: int, code_hash: str = "", release_key: str | None = None,
                      *, error: str, experiment: str, scale: str, base_seed: int,
                      version: str = "", **_other) -> list[dict]:
    """The one error row of a trial that could not return its own (its worker died or
    passed a limit: :mod:`privpub.experiments.pool`), with ``error`` as its cause."""
    ss = trial_seeds(base_seed, cell.seed_identity, rep)[0]
    base = _trial_columns(cell, rep, get_mechanism(cell.mechanism), ss, experiment=experiment,
                          scale=scale, base_seed=base_seed, code_hash=code_hash, version=version)
    out = _Outcome()
    out.fail("error", error)
    return out.rows(base, math.nan)


def _trial_columns(cell: Cell, rep: int, info, ss, *, experiment: str, scale: str,
                   base_seed: int, code_hash: str, version: str) -> dict:
    """The columns every row of a trial shares: what was computed, and by which code."""
    return {
        "experiment": experiment,
        "scale": scale,
        "cell": cell.cell_id,
        "rep": rep,
        "base_seed": int(base_seed),
        "seed": int(ss.generate_state(1)[0]),
        "dataset": cell.dataset,
        "dataset_options": canonical_json(cell.dataset_options),
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


def _release(cell: Cell, info, data, mech_ss, out: _Outcome, *, kept_path: Path | None,
             measure_memory: bool, cold: bool):
    """The mechanism's output for the trial, read from the release cache at ``kept_path``
    when the same code computed it before (with the verifier's verdict on it), else
    computed, timed and measured (into ``out``); :func:`run_trial` keeps it there, once
    verified, when it took at least :data:`RELEASE_CACHE_SECONDS`. The cache key holds the
    code of the mechanism, the loader and, for k-anonymity, the verifier
    (:func:`privpub.experiments.reuse.cell_fingerprints`), so a kept verdict is the one this
    code gives."""
    kwargs = dict(cell.params)
    if info.is_dp:
        out.ledger = PrivacyLedger(kwargs["epsilon"])
        kwargs["ledger"] = out.ledger
    rng = np.random.default_rng(mech_ss)
    cached = _read_release(kept_path)
    if cached is not None:  # computed before by the same code for the same trial
        out.ledger, out.seconds, out.cpu_seconds = (cached["ledger"], cached["seconds"],
                                                    cached["cpu_seconds"])
        out.cached = True
        out.cached_verdict = cached.get("verified")
        return cached["output"]
    peak = memory_probe() if measure_memory else None
    with contextlib.ExitStack() as stack:
        if cold:  # a running time: the whole computation, no cached piece
            stack.enter_context(privpub_cache.cold())
        start, cpu_start = time.perf_counter(), time.process_time()
        try:
            with noise_off() if cell.noise_free else contextlib.nullcontext():
                output = info.func(data, rng=rng, **kwargs)
        finally:
            out.seconds = time.perf_counter() - start
            out.cpu_seconds = time.process_time() - cpu_start
            if peak is not None:
                out.peak_mb = peak()
    return output


#: The Python type of a release of each kind (privpub/types.py), for error messages.
_PYTHON_TYPE = {
    Kind.GRAPH: "privpub.types.Graph", Kind.TABLE: "privpub.types.Table",
    Kind.BINARY_MATRIX: "a scipy.sparse matrix",
    Kind.DEGREE_HISTOGRAM: "privpub.types.DegreeHistogram",
    Kind.DEGREE_SEQUENCE: "privpub.types.DegreeSequence", Kind.RANKING: "privpub.types.Ranking",
    Kind.CLASSIFIER: "an object with predict()", Kind.JOINT_DEGREE: "privpub.types.JointDegree",
}


def _called_with(info, params: dict) -> dict:
    """The parameters a mechanism ran with: its signature defaults, then the cell's (a
    verifier reads ``k`` also when the mechanism's default set it)."""
    import inspect

    return {**{k: v for k, v in info.parameters.items() if v is not inspect.Parameter.empty},
            **params}


def _check_release(info, release, ledger: PrivacyLedger | None) -> None:
    """A release of the registered kind, from a DP mechanism that spent through its ledger."""
    expected = f"{info.output_kind} ({_PYTHON_TYPE.get(info.output_kind, '?')})"
    try:
        kind = kind_of(release)
    except PrivpubError:
        raise PrivpubError(
            f"mechanism {info.name!r} returned a {type(release).__name__}; expected a "
            f"{expected}, the kind it is registered as releasing"
        ) from None
    if kind != info.output_kind:
        raise PrivpubError(
            f"mechanism {info.name!r} returned a {kind}, "
            f"but is registered as releasing {expected}"
        )
    if ledger is not None and ledger.spent <= 0:
        raise PrivpubError(
            f"DP mechanism {info.name!r} spent nothing through its ledger: its privacy "
            "claim cannot be checked"
        )


def _metric_values(cell: Cell, info, release, extra: dict, metrics: list[str], source: tuple,
                   metric_ss) -> list[tuple[str, float]]:
    """(row name, value) of every metric (a dict-valued metric gives ``<name>/<key>`` rows)
    and of every number the mechanism reports beside its release (``extra``: ``info/<key>``
    and ``diag/<key>``, :func:`_reported`)."""
    values: list[tuple[str, float]] = []
    # a noise-free twin's metrics stay noise-free: a learner's CV metric refits it
    # (accuracy_cv_learner), which runs the mechanism again
    quiet = noise_off if cell.noise_free else contextlib.nullcontext
    for name in metrics:
        metric = get_metric(name)
        truth = _truth(*source, info.output_kind)
        stream = metric_ss(metric.stream)  # a deviation metric shares its curve's stream
        kw = {"rng": np.random.default_rng(stream)} if metric.takes_rng else {}
        with quiet():
            result = metric.func(truth, release, **kw)
        if isinstance(result, dict):
            values.extend((f"{name}/{k}", float(v)) for k, v in result.items())
        else:
            values.append((name, float(result)))
    values.extend(
        (k, float(v))
        for k, v in extra.items()
        if isinstance(v, (int, float, np.number))
    )
    return values


def _reported(output: Release) -> dict:
    """What a mechanism reports beside its release, by stored row name: ``info/<key>`` (part
    of the release) and ``diag/<key>`` (declared diagnostics; a release cached before
    diagnostics existed has none)."""
    return {**{f"{INFO_PREFIX}{k}": v for k, v in output.info.items()},
            **{f"{DIAGNOSTIC_PREFIX}{k}": v
               for k, v in (getattr(output, "diagnostics", None) or {}).items()}}


def _kept_release(cell: Cell, rep: int, info, release, source: tuple, base: dict):
    """(the encoded release vector, the dataset's truth row at repetition 0) of a kept
    release; (None, None) for a kind without a vector."""
    vector = release_vector(release)
    if vector is None:
        return None, None
    truth_row = None
    if rep == 0:
        truth = _truth(*source, info.output_kind)
        truth_row = _truth_row(cell, source[1], base, release_vector(truth))
    return encode_vector(vector), truth_row
