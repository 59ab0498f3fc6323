"""``privpub audit``: audits as trials of the result store, run in parallel, replayed.

Every audited configuration (:func:`privpub.audit.configurations`) of every named DP
mechanism is one trial: :func:`audit_trial` runs :func:`privpub.audit.audit` and returns one
row (``metric`` = ``epsilon_lower_bound``, its verdict, claim, caveat, witness id and the
whole result as JSON), keyed like every trial by the code it depends on (the mechanism's
module closure and :mod:`privpub.audit`): a stored audit of unchanged code is not rerun, an
edited mechanism is. The trials run through the runner's executors
(:func:`privpub.experiments.executors.run_trials`; by default the isolating process pool, with
a time and a memory limit per configuration, :data:`AUDIT_TIMEOUT` and :data:`AUDIT_MEMORY`)
into one store, ``<results_dir>/audit/store``; each audit's random streams depend only on
(mechanism, configuration, mode, seed), never on order or ``n_jobs``. After a run the
latest audit of every configuration is written to ``<results_dir>/audit/verdicts.json``
(:mod:`privpub.audit.stored` reads it for the report and the leaderboard). Usage: README.md
("Audit a mechanism's privacy claim"); design: docs/audit.md.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from privpub.errors import ConfigError, PrivpubError
from privpub.experiments.executors import EXECUTORS, limit_argument, run_trials, trial_limits
from privpub.experiments.seeding import canonical, canonical_json

__all__ = ["AuditRun", "audit_jobs", "audit_trial", "run_audits", "replay_stored",
           "audit_store", "audit_limits", "write_verdicts", "add_parser", "cmd_audit",
           "AUDIT_TIMEOUT", "AUDIT_MEMORY", "EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE",
           "EXIT_INTERRUPTED"]

#: Exit codes: no caveat-free configuration violated / one confirmed violated / bad input
#: or a failed audit / interrupted (Ctrl-C; the finished audits are stored).
EXIT_OK, EXIT_VIOLATED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

#: The default time limit of one configuration's audit, by mode (seconds): about ten times
#: the slowest built-in audit on a loaded 2-core machine (docs/audit.md, "Speed"), and room
#: for AIM's and MST's quick audits, whose ~600 tiny releases each compile JAX programs
#: (about 0.65 s a release: 400-450 s).
AUDIT_TIMEOUT = {"quick": 900.0, "full": 1800.0}
#: The default memory limit of one configuration's audit (MB of its worker's resident
#: memory): the audit's inputs are tiny, a worker with privpub imported holds a few hundred.
AUDIT_MEMORY = 4096.0
#: Seconds between two progress lines while audits run (stderr not a terminal).
PROGRESS_SECONDS = 30.0

#: Columns of an audit row beside the results format's (:data:`privpub.results.COLUMN_ORDER`).
_RECORD_KEYS = ("mechanism", "mode", "privacy", "epsilon", "caveat", "verdict",
                "epsilon_lower_bound", "witness_id", "samples", "seconds", "code_hash")


def audit_store(results_dir):
    """The audits' :class:`~privpub.experiments.store.ResultStore`,
    ``<results_dir>/audit/store``."""
    from privpub.audit.stored import AUDIT_DIR
    from privpub.experiments.store import ResultStore

    return ResultStore(Path(results_dir) / AUDIT_DIR / "store")


@dataclass
class AuditRun:
    """What one ``privpub audit`` did: the latest row of every asked configuration."""

    rows: list[dict] = field(default_factory=list)
    n_ran: int = 0
    n_stored: int = 0
    seconds: float = 0.0

    @property
    def violated_without_caveat(self) -> list[dict]:
        """Confirmed violations of configurations that claim their guarantee unreservedly."""
        return [r for r in self.rows if r["verdict"] == "violated" and not r.get("caveat")]

    @property
    def errors(self) -> list[dict]:
        return [r for r in self.rows if r["status"] == "error"]


# --------------------------------------------------------------------------- trials
def audit_jobs(names=(), *, mode: str, seed: int) -> list[tuple]:
    """``(mechanism, overrides, audit id, code hash)`` of every audited configuration of
    ``names`` (every registered DP mechanism when empty); an unknown or non-DP name is a
    :class:`~privpub.errors.PrivpubError`."""
    from privpub.audit import audit_settings, configurations
    from privpub.audit.stored import audit_id
    from privpub.experiments.provenance import clear_cache, code_fingerprint
    from privpub.registry import mechanisms

    infos = _named(names) if names else [m for _, m in sorted(mechanisms().items()) if m.is_dp]
    clear_cache()
    jobs = []
    # the slowest first (``cost_ms``), so the last minutes are not one long audit on one core
    for info in sorted(infos, key=lambda i: -audit_settings(i).cost_ms):
        code = code_fingerprint((info.func.__module__, "privpub.audit"))[0]
        for config in configurations(info):
            config = canonical(config)
            jobs.append((info.name, config, audit_id(info.name, config, mode, seed), code))
    return jobs


def _row(name: str, config: dict, cell: str, code: str, *, mode: str, seed: int,
         version: str) -> dict:
    """The columns of an audit's row that do not depend on its result."""
    from privpub.audit.stored import AUDIT_METRIC, config_label
    from privpub.registry import get_mechanism

    info = get_mechanism(name)
    return {"experiment": "audit", "scale": mode, "dataset": "", "mechanism": name,
            "label": config_label(name, config), "role": info.role, "paper": info.paper,
            "params": canonical_json(config), "rep": 0, "base_seed": int(seed),
            "seed": int(seed), "metric": AUDIT_METRIC, "privacy": info.privacy,
            "caveat": info.caveat_for(config) or None, "cell": cell, "code_hash": code,
            "code_version": version, "epsilon": float(config["epsilon"])}


def _error_row(row: dict, error: str, seconds: float) -> list[dict]:
    return [{**row, "value": float("nan"), "status": "error", "verdict": "error",
             "error": error, "witness_id": None, "seconds": seconds,
             "written_at": time.time()}]


def _named(names) -> list:
    """The registrations of ``names``; every unknown or non-DP name, not only the first, in
    one :class:`~privpub.errors.ConfigError` (a line each), before any audit runs."""
    import difflib

    from privpub.errors import UnknownNameError
    from privpub.registry import get_mechanism, mechanisms

    infos, unknown, not_dp = [], [], []
    for name in dict.fromkeys(names):
        try:
            info = get_mechanism(name)
        except UnknownNameError:
            unknown.append(name)
            continue
        if not info.is_dp:
            not_dp.append(f"mechanism {name!r} claims {info.privacy!r}, not a DP notion: "
                          "the audit checks epsilon-DP claims only")
        infos.append(info)
    if len(unknown) == 1 and not not_dp:
        get_mechanism(unknown[0])  # its own message: the close names and every known one
    if unknown:
        known = sorted(n for n, m in mechanisms().items() if m.is_dp)
        lines = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=3)
            lines.append(f"unknown mechanism {name!r}"
                         + (f" (did you mean {', '.join(close)}?)" if close else ""))
        not_dp = [*lines, *not_dp, f"DP mechanisms: {', '.join(known)}"]
    if not_dp:
        raise ConfigError("\n".join(not_dp))
    return infos


def audit_trial(name: str, config: dict, cell: str, code: str, *, mode: str, seed: int,
                plugins=(), version: str = "", measure_memory=None) -> list[dict]:
    """Audit one configuration; one store row (``status`` ``error`` with its message when
    the audit raises: a plug-in that cannot be called on the audit's inputs)."""
    from privpub.audit import audit
    from privpub.registry import get_mechanism, import_plugins

    import_plugins(plugins)  # a worker process registers the user's mechanisms itself
    row = _row(name, config, cell, code, mode=mode, seed=seed, version=version)
    start = time.perf_counter()
    try:
        result = audit(get_mechanism(name), config, mode=mode, seed=seed)
    except Exception as exc:  # one row's error, the other audits go on
        return _error_row(row, f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
    return [{**row, "dataset": result["neighbourhood"],
             "value": float(result["epsilon_lower_bound"]), "status": "ok", "error": None,
             "verdict": result["verdict"], "samples": int(result["samples"]),
             "witness_id": cell if result["witness"] else None,
             "seconds": result["seconds"], "cpu_seconds": result["cpu_seconds"],
             "result": json.dumps(result, sort_keys=True, default=str),
             "written_at": time.time()}]


def _failed_audit(common: dict, trial: tuple, reason: str) -> list[dict]:
    """The row of an audit whose worker died or passed a limit (``reason``)."""
    row = _row(*trial, mode=common["mode"], seed=common["seed"], version=common["version"])
    return _error_row(row, reason, float("nan"))


def audit_limits(mode: str, trial_timeout=None, trial_memory=None) -> tuple:
    """``(seconds, MB)`` per configuration as the pool takes them
    (:func:`~privpub.experiments.executors.trial_limits`): None takes the default
    (:data:`AUDIT_TIMEOUT` of ``mode``, :data:`AUDIT_MEMORY`), ``math.inf`` is no limit."""
    return trial_limits(trial_timeout, trial_memory, default_timeout=AUDIT_TIMEOUT[mode],
                        default_memory=AUDIT_MEMORY)


def run_audits(names=(), *, results_dir, mode: str = "full", seed: int = 0, n_jobs: int = 1,
               executor: str = "process", plugins=(), rerun: bool = False, progress=None,
               trial_timeout=None, trial_memory=None, on_start=None) -> AuditRun:
    """Audit every configuration of ``names`` not stored for the current code, store the
    rows and rewrite ``verdicts.json``.

    With ``executor="process"`` (the default) every audit runs in a worker process: one
    that passes ``trial_timeout`` seconds or ``trial_memory`` MB (:func:`audit_limits`), or
    whose worker dies, is an error row and the others go on. ``on_start(jobs, n_stored)``
    is called before the first audit runs, with the audits to run; ``progress(row)`` as
    each ends. Ctrl-C (``KeyboardInterrupt``) stops the workers, stores the finished audits
    and rewrites ``verdicts.json``, then propagates. An unwritable ``results_dir`` is a
    :class:`~privpub.errors.ConfigError`."""
    from privpub.audit.stored import AUDIT_DIR, AUDIT_METRIC, VERDICTS_FILE
    from privpub.experiments.cli import check_writable
    from privpub.experiments.provenance import code_fingerprint
    from privpub.experiments.runner import code_version, worker_plugins
    from privpub.registry import get_mechanism, import_plugins

    start = time.perf_counter()
    timeout, memory = audit_limits(mode, trial_timeout, trial_memory)
    import_plugins(plugins)
    jobs = audit_jobs(names, mode=mode, seed=seed)
    check_writable(results_dir)  # the last check before the first write
    store = audit_store(results_dir)
    done = {} if rerun else store.trials([AUDIT_METRIC])
    todo = [j for j in jobs if done.get((j[2], int(seed), 0), False) != j[3]]
    run = AuditRun(n_stored=len(jobs) - len(todo))
    interrupted = False
    if todo:
        from privpub.experiments.store import StoreWriter

        mechanisms = dict.fromkeys(j[0] for j in todo)
        # each worker imports the audited code before its first audit (not timed), and one
        # that imported another version of it is replaced
        code = {m: h for name in mechanisms
                for m, h in code_fingerprint(_code_modules(get_mechanism(name)))[1].items()}
        common = dict(mode=mode, seed=int(seed), version=code_version(),
                      plugins=worker_plugins(mechanisms, plugins))
        results = run_trials(audit_trial, todo, common, n_jobs=n_jobs, executor=executor,
                             on_failure=functools.partial(_failed_audit, common),
                             trial_timeout=timeout, trial_memory=memory, code=code)
        if on_start is not None:
            on_start(todo, run.n_stored)
        writer = StoreWriter(store, flush_seconds=2.0)
        try:
            for rows in results:
                writer.add(rows)
                run.n_ran += 1
                if progress is not None:
                    progress(rows[0])
        except KeyboardInterrupt:
            interrupted = True
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # stops the workers of the audits still running
            writer.flush()
    latest = store.load(statuses=None)
    wanted = {j[2] for j in jobs}
    if not latest.empty:
        run.rows = [{k: _plain(v) for k, v in r.items()}  # NaN of a parquet cell -> None
                    for r in latest.to_dict("records") if r["cell"] in wanted]
    write_verdicts(store, Path(results_dir) / AUDIT_DIR / VERDICTS_FILE)
    run.seconds = time.perf_counter() - start
    if interrupted:
        raise KeyboardInterrupt
    return run


def _code_modules(info) -> tuple[str, ...]:
    """The modules whose closure an audit of ``info`` runs."""
    modules = dict.fromkeys((info.func.__module__, info.registered_by, "privpub.audit"))
    return tuple(m for m in modules if m and m != "__main__")


def _record(row: dict) -> dict:
    """A stored row as a ``verdicts.json`` record (:func:`privpub.audit.stored.stored_audits`)."""
    out = {k: _plain(row.get(k)) for k in _RECORD_KEYS}
    out["mode"] = row.get("scale")
    out["config"] = json.loads(row["params"])
    out["epsilon_lower_bound"] = _plain(row.get("value"))
    out["error"] = _plain(row.get("error"))
    return out


def _plain(value):
    """A parquet cell as JSON: NaN and None become None, numpy scalars Python ones."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def write_verdicts(store, path: Path) -> None:
    """Write the latest audit of every stored configuration to ``path`` (atomically)."""
    frame = store.load(statuses=None)
    records = [] if frame.empty else [_record(r) for r in frame.to_dict("records")]
    records.sort(key=lambda r: (r["mechanism"], r["mode"], json.dumps(r["config"])))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(json.dumps(records, indent=1, sort_keys=True))
    os.replace(tmp, path)


def replay_stored(results_dir, witness_id: str, *, plugins=()) -> dict:
    """Replay the stored witness ``witness_id`` (:func:`privpub.audit.replay`); a
    :class:`~privpub.errors.PrivpubError` when no stored audit has it."""
    from privpub.audit import replay
    from privpub.audit.stored import AUDIT_DIR
    from privpub.registry import import_plugins

    import_plugins(plugins)
    frame = audit_store(results_dir).load()
    if not frame.empty and "witness_id" in frame:
        frame = frame[frame["witness_id"].astype(str) == witness_id]
    if frame.empty or "result" not in frame:
        raise PrivpubError(f"no stored witness {witness_id!r} under "
                           f"{str(Path(results_dir) / AUDIT_DIR)!r}")
    witness = json.loads(frame.iloc[-1]["result"])["witness"]
    return {"witness_id": witness_id, "mechanism": witness["mechanism"],
            "params": witness["params"], "pair": witness["pair"]["name"],
            "statistic": witness["statistic"], **replay(witness)}


# --------------------------------------------------------------------------- command line
def add_parser(sub) -> None:
    """The ``audit`` subcommand of :mod:`privpub.experiments.console`."""
    p = sub.add_parser("audit", help="black-box privacy audits of DP mechanisms: verdict and "
                       "epsilon lower bound per configuration (exit 1: a caveat-free one is "
                       "violated)")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="mechanisms to audit (default: every registered DP mechanism)")
    p.add_argument("--quick", action="store_true",
                   help="quick mode (fewer runs and pairs; CI) instead of the full audit")
    p.add_argument("--plugins", nargs="+", default=[], metavar="MODULE",
                   help="modules or .py files registering your own mechanisms (imported "
                   "first)")
    p.add_argument("--results-dir", default="results",
                   help="where audits are stored (<dir>/audit/store; default: results)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--n-jobs", type=int, default=1, help="parallel audits (default 1)")
    p.add_argument("--executor", choices=EXECUTORS, default="process",
                   help="how audits run (as run.py's executor; default process: each in a "
                   "worker process, held to --trial-timeout and --trial-memory)")
    p.add_argument("--trial-timeout", type=limit_argument("seconds"), metavar="SECONDS",
                   help="stop one configuration's audit after this long: an error row, the "
                   "others go on (default: "
                   + ", ".join(f"{v:g} s {k}" for k, v in AUDIT_TIMEOUT.items()) + "; inf: none)")
    p.add_argument("--trial-memory", type=limit_argument("MB"), metavar="MB",
                   help="stop one configuration's audit whose worker holds more resident "
                   f"memory (default {AUDIT_MEMORY:g} MB; inf: none)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="a progress bar (a line every "
                   f"{PROGRESS_SECONDS:g} s when stderr is not a terminal) while audits run")
    p.add_argument("--seed", type=int, default=0, help="base seed of the audits (default 0)")
    p.add_argument("--rerun", action="store_true", help="audit again what is stored")
    p.add_argument("--replay", metavar="WITNESS_ID",
                   help="replay a stored violation's witness run for run")
    p.set_defaults(config_keys={"results_dir": "--results-dir", "n_jobs": "--n-jobs",
                                "executor": "--executor", "seed": "--seed",
                                "rerun": "--rerun", "plugins": "--plugins",
                                "trial_timeout": "--trial-timeout",
                                "trial_memory": "--trial-memory", "progress": "--progress"})


def _fmt(x) -> str:
    return "-" if x is None or x != x else f"{x:.3g}"


def _claim(row: dict) -> str:
    """The claimed epsilon; a local one with the central epsilon it implies (the one the
    audit's bound is compared with)."""
    from privpub.registry import implied_central_epsilon

    eps = row["epsilon"]
    central = implied_central_epsilon(str(row.get("privacy")), eps) if eps == eps else eps
    return _fmt(eps) if central == eps else f"{_fmt(eps)} (central {_fmt(central)})"


def _seconds(s: float) -> str:
    return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"


def _print_table(rows: list[dict], out) -> None:
    from privpub.audit.stored import config_label

    header = ("mechanism", "configuration", "verdict", "eps", "eps_lb", "caveat", "witness")
    lines = [(r["mechanism"], config_label("", json.loads(r["params"])).strip() or "defaults",
              r["verdict"], _claim(r), _fmt(r["value"]),
              "yes" if r.get("caveat") else "no", r.get("witness_id") or "-") for r in rows]
    widths = [max(len(str(x[i])) for x in [header, *lines]) for i in range(len(header))]
    for line in [header, tuple("-" * w for w in widths), *lines]:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip(),
              file=out)


class _Progress:
    """What ``privpub audit`` says on stderr while it runs: a start line, one line per
    finished audit and, unless ``live`` is false, a progress bar on a terminal (else a
    line every :data:`PROGRESS_SECONDS`) naming the audits still running."""

    def __init__(self, *, n_jobs: int, live: bool, limits: tuple, stream=None):
        self.stream = stream or sys.stderr
        self.n_jobs, self.live, self.limits = n_jobs, live, limits
        self.lock, self.stopped = threading.Lock(), threading.Event()
        self.jobs: list[tuple[str, str]] = []  # (cell, label) in the order they are sent
        self.done: set[str] = set()
        self.since: dict[str, float] = {}  # cell -> when it started (about)
        self.bar, self.thread, self.t0 = None, None, time.monotonic()

    @property
    def n_done(self) -> int:
        return len(self.done)

    def start(self, jobs: list[tuple], n_stored: int) -> None:
        from privpub.audit.stored import config_label

        self.jobs = [(j[2], config_label(j[0], j[1])) for j in jobs]
        self.t0 = time.monotonic()
        timeout, memory = self.limits
        limits = ", ".join(x for x in (timeout and f"trial_timeout={timeout:g} s",
                                       memory and f"trial_memory={memory:g} MB") if x)
        mechanisms = len({j[0] for j in jobs})
        self._say(f"privpub audit: {len(jobs)} configuration(s) of {mechanisms} mechanism(s) "
                  f"to audit, {n_stored} already stored; n_jobs={self.n_jobs}"
                  + (f"; per configuration {limits}" if limits else ""))
        self._running()
        if not self.live:
            return
        if self.stream.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=len(jobs), desc="privpub audit", unit="audit",
                            file=self.stream, leave=False)
        self.thread = threading.Thread(target=self._tick, daemon=True,
                                       name="privpub-audit-progress")
        self.thread.start()

    def finished(self, row: dict) -> None:
        if row["status"] == "error":
            line = f"  {row['label']}: error: {row['error']}"
        else:
            line = (f"  {row['label']}: {row['verdict']} (eps_lb {_fmt(row['value'])}, "
                    f"{row['seconds']:.1f} s)")
        with self.lock:
            self.done.add(row["cell"])
            self._running()
        if self.bar is not None:
            self.bar.set_postfix_str(self.running(), refresh=False)
            self.bar.update(1)
        self._say(line)

    def close(self) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join(2)
        if self.bar is not None:
            self.bar.close()

    def _running(self) -> list[str]:
        """The cells running now: the first ``n_jobs`` not done, in the order sent."""
        now = time.monotonic()
        running = [c for c, _ in self.jobs if c not in self.done][:self.n_jobs]
        for cell in running:
            self.since.setdefault(cell, now)
        return running

    def running(self) -> str:
        """``running: my_sleep (40 s)`` ("" when nothing runs)."""
        with self.lock:
            now, labels = time.monotonic(), dict(self.jobs)
            running = ", ".join(f"{labels[c]} ({_seconds(now - self.since[c])})"
                                for c in self._running())
        return f"running: {running}" if running else ""

    def status(self) -> str:
        """``1 of 3 done (42 s); running: my_sleep (40 s)``."""
        done = (f"{self.n_done} of {len(self.jobs)} done "
                f"({_seconds(time.monotonic() - self.t0)})")
        return "; ".join(x for x in (done, self.running()) if x)

    def _tick(self) -> None:
        every = 1.0 if self.bar is not None else PROGRESS_SECONDS
        while not self.stopped.wait(every):
            if self.bar is not None:
                self.bar.set_postfix_str(self.running())
            else:
                self._say(f"  ... {self.status()}")

    def _say(self, line: str) -> None:
        with self.lock:
            if self.bar is not None:
                self.bar.write(line, file=self.stream)
            else:
                print(line, file=self.stream, flush=True)


def _replay_command(args, out) -> int:
    result = replay_stored(args.results_dir, args.replay, plugins=args.plugins)
    if args.json:
        json.dump(result, out, indent=2, default=str)
        print(file=out)
    else:
        print(f"witness {result['witness_id']}: {result['mechanism']} {result['params']} on "
              f"pair {result['pair']}, statistic {result['statistic']}: counts "
              f"{result['counts']}, epsilon lower bound {result['lower_bound']:.3f} vs claim "
              f"{result['epsilon']:g}; reproduced run for run: {result['reproduced']}; "
              f"neighbours: {result['neighbours']}", file=out)
    return EXIT_VIOLATED if result["violated"] else EXIT_OK


def _notes(args) -> int:
    """One line each: n_jobs capped to the cores; an executor that cannot isolate audits.
    Returns the number of audits run at once."""
    from privpub.experiments.executors import cap_n_jobs, isolation_note

    n_jobs, capped = cap_n_jobs(args.n_jobs, args.executor)
    isolation = isolation_note(args.executor, args.n_jobs, trial_timeout=True, trial_memory=True)
    for note in (capped, isolation):
        if note:
            print(f"privpub audit: note: {note}", file=sys.stderr, flush=True)
    return n_jobs if isinstance(n_jobs, int) and n_jobs > 0 else 1


def cmd_audit(args, out) -> int:
    """Run ``privpub audit``; returns the exit code (bad input: one line on stderr, 2;
    Ctrl-C: one line, 130, the finished audits stored)."""
    progress = None
    try:
        if args.replay:
            return _replay_command(args, out)
        mode = "quick" if args.quick else "full"
        limits = audit_limits(mode, args.trial_timeout, args.trial_memory)
        if not args.json:
            progress = _Progress(n_jobs=_notes(args), live=args.progress, limits=limits)
        try:
            run = run_audits(args.names, results_dir=args.results_dir, mode=mode,
                             seed=args.seed, n_jobs=args.n_jobs, executor=args.executor,
                             plugins=args.plugins, rerun=args.rerun,
                             trial_timeout=args.trial_timeout, trial_memory=args.trial_memory,
                             progress=progress and progress.finished,
                             on_start=progress and progress.start)
        finally:
            if progress is not None:
                progress.close()
    except PrivpubError as exc:
        print(f"privpub audit: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        done = (f": {progress.n_done} of {len(progress.jobs)} audit(s) finished, stored under "
                f"{audit_store(args.results_dir).root}; rerun the same command to go on"
                if progress is not None and progress.jobs else "")
        print(f"privpub audit: interrupted{done}", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    if args.json:
        json.dump({"mode": mode, "ran": run.n_ran, "stored": run.n_stored,
                   "seconds": run.seconds, "audits": [_record(r) for r in run.rows]},
                  out, indent=2, default=str)
        print(file=out)
    else:
        _print_summary(run, args.results_dir, out)
    if run.violated_without_caveat:
        return EXIT_VIOLATED
    return EXIT_USAGE if run.errors else EXIT_OK


def _print_summary(run: AuditRun, results_dir, out) -> None:
    from privpub.audit.stored import replay_command

    _print_table(run.rows, out)
    print(f"{len(run.rows)} configuration(s): {run.n_ran} audited, {run.n_stored} already "
          f"stored ({run.seconds:.1f} s) -> {audit_store(results_dir).root}", file=out)
    for r in run.errors:
        print(f"ERROR {r['label']}: {r['error']}", file=out)
    for r in run.violated_without_caveat:
        print(f"VIOLATED without a caveat: {r['label']} (eps_lb {_fmt(r['value'])} > "
              f"{_fmt(r['epsilon'])}); replay: {replay_command(r['witness_id'], results_dir)}",
              file=out)
