"""``privpub audit``: audits as tasks of the result store, run in parallel, replayed.

Every audited configuration (:func:`privpub.audit.configurations`) of every named DP
mechanism is one task: :func:`audit_task` runs :func:`privpub.audit.audit` and returns one
row (``metric`` = ``epsilon_lower_bound``, its verdict, claim, caveat, witness id and the
whole result as JSON), keyed like every task by the code it depends on (the mechanism's
module closure and :mod:`privpub.audit`): a stored audit of unchanged code is not rerun, an
edited mechanism is. The tasks run through the runner's executors
(:func:`privpub.experiments.executors.run_tasks`) into one store, ``<results_dir>/audit/store``;
each audit's random streams depend only on (mechanism, configuration, mode, seed), never on
order or ``n_jobs``. After a run the latest audit of every configuration is written to
``<results_dir>/audit/verdicts.json`` (:mod:`privpub.audit.stored` reads it for the report
and the leaderboard). Usage: README.md ("Audit a mechanism's privacy claim"); design:
docs/audit.md.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from privpub.errors import PrivpubError
from privpub.experiments.executors import EXECUTORS, run_tasks
from privpub.experiments.seeding import canonical, canonical_json

__all__ = ["AuditRun", "audit_jobs", "audit_task", "run_audits", "replay_stored",
           "audit_store", "write_verdicts", "add_parser", "cmd_audit",
           "EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE"]

#: Exit codes: no caveat-free configuration violated / one confirmed violated / bad input.
EXIT_OK, EXIT_VIOLATED, EXIT_USAGE = 0, 1, 2

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


# --------------------------------------------------------------------------- tasks
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


def _named(names) -> list:
    """The registrations of ``names``; every unknown or non-DP name, not only the first, in
    one :class:`~privpub.errors.ConfigError` (a line each), before any audit runs."""
    import difflib

    from privpub.errors import ConfigError, UnknownNameError
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


def audit_task(name: str, config: dict, cell: str, code: str, *, mode: str, seed: int,
               plugins=(), version: str = "", measure_memory=None) -> list[dict]:
    """Audit one configuration; one store row (``status`` ``error`` with its message when
    the audit raises: a plug-in that cannot be called on the audit's inputs)."""
    from privpub.audit import audit
    from privpub.audit.stored import AUDIT_METRIC, config_label
    from privpub.registry import get_mechanism, import_plugins

    import_plugins(plugins)  # a worker process registers the user's mechanisms itself
    info = get_mechanism(name)
    row = {"experiment": "audit", "scale": mode, "dataset": "", "mechanism": name,
           "label": config_label(name, config), "role": info.role, "paper": info.paper,
           "params": canonical_json(config), "rep": 0, "base_seed": int(seed),
           "seed": int(seed), "metric": AUDIT_METRIC, "privacy": info.privacy,
           "caveat": info.caveat_for(config) or None, "cell": cell, "code_hash": code,
           "code_version": version, "epsilon": float(config["epsilon"])}
    start = time.perf_counter()
    try:
        result = audit(info, config, mode=mode, seed=seed)
    except Exception as exc:  # one row's error, the other audits go on
        return [{**row, "value": float("nan"), "status": "error", "verdict": "error",
                 "error": f"{type(exc).__name__}: {exc}", "witness_id": None,
                 "seconds": time.perf_counter() - start, "written_at": time.time()}]
    return [{**row, "dataset": result["neighbourhood"],
             "value": float(result["epsilon_lower_bound"]), "status": "ok", "error": None,
             "verdict": result["verdict"], "samples": int(result["samples"]),
             "witness_id": cell if result["witness"] else None,
             "seconds": result["seconds"], "cpu_seconds": result["cpu_seconds"],
             "result": json.dumps(result, sort_keys=True, default=str),
             "written_at": time.time()}]


def run_audits(names=(), *, results_dir, mode: str = "full", seed: int = 0, n_jobs: int = 1,
               executor: str = "loky", plugins=(), rerun: bool = False,
               progress=None) -> AuditRun:
    """Audit every configuration of ``names`` not stored for the current code, store the
    rows and rewrite ``verdicts.json``; ``progress(row)`` is called as each audit ends."""
    from privpub.audit.stored import AUDIT_DIR, AUDIT_METRIC, VERDICTS_FILE
    from privpub.experiments.runner import code_version
    from privpub.registry import import_plugins

    start = time.perf_counter()
    import_plugins(plugins)
    jobs = audit_jobs(names, mode=mode, seed=seed)
    store = audit_store(results_dir)
    done = {} if rerun else store.tasks([AUDIT_METRIC])
    todo = [j for j in jobs if done.get((j[2], int(seed), 0), False) != j[3]]
    run = AuditRun(n_stored=len(jobs) - len(todo))
    if todo:
        from privpub.experiments.store import StoreWriter

        writer = StoreWriter(store, flush_seconds=2.0)
        common = dict(mode=mode, seed=int(seed), plugins=tuple(plugins),
                      version=code_version())
        try:
            for rows in run_tasks(audit_task, todo, common, n_jobs=n_jobs, executor=executor):
                writer.add(rows)
                run.n_ran += 1
                if progress is not None:
                    progress(rows[0])
        finally:
            writer.flush()
    latest = store.load(statuses=None)
    wanted = {j[2] for j in jobs}
    if not latest.empty:
        run.rows = [{k: _plain(v) for k, v in r.items()}  # NaN of a parquet cell -> None
                    for r in latest.to_dict("records") if r["cell"] in wanted]
    write_verdicts(store, Path(results_dir) / AUDIT_DIR / VERDICTS_FILE)
    run.seconds = time.perf_counter() - start
    return run


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
                   help="modules registering your own mechanisms (imported first)")
    p.add_argument("--results-dir", default="results",
                   help="where audits are stored (<dir>/audit/store; default: results)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--n-jobs", type=int, default=1, help="parallel audits (default 1)")
    p.add_argument("--executor", choices=EXECUTORS, default="loky",
                   help="how audits run in parallel (as run.py's executor)")
    p.add_argument("--seed", type=int, default=0, help="base seed of the audits (default 0)")
    p.add_argument("--rerun", action="store_true", help="audit again what is stored")
    p.add_argument("--replay", metavar="WITNESS_ID",
                   help="replay a stored violation's witness run for run")
    p.set_defaults(config_keys={"results_dir": "--results-dir", "n_jobs": "--n-jobs",
                                "executor": "--executor", "seed": "--seed",
                                "rerun": "--rerun", "plugins": "--plugins"})


def _fmt(x) -> str:
    return "-" if x is None or x != x else f"{x:.3g}"


def _print_table(rows: list[dict], out) -> None:
    from privpub.audit.stored import config_label

    header = ("mechanism", "configuration", "verdict", "eps", "eps_lb", "caveat", "witness")
    lines = [(r["mechanism"], config_label("", json.loads(r["params"])).strip() or "defaults",
              r["verdict"], _fmt(r["epsilon"]), _fmt(r["value"]),
              "yes" if r.get("caveat") else "no", r.get("witness_id") or "-") for r in rows]
    widths = [max(len(str(x[i])) for x in [header, *lines]) for i in range(len(header))]
    for line in [header, tuple("-" * w for w in widths), *lines]:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip(),
              file=out)


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


def cmd_audit(args, out) -> int:
    """Run ``privpub audit``; returns the exit code (bad input: one line on stderr, 2)."""
    try:
        if args.replay:
            return _replay_command(args, out)
        mode = "quick" if args.quick else "full"

        def progress(row):
            if not args.json:
                print(f"  {row['label']}: {row['verdict']} (eps_lb {_fmt(row['value'])}, "
                      f"{row['seconds']:.1f} s)", file=sys.stderr, flush=True)

        run = run_audits(args.names, results_dir=args.results_dir, mode=mode, seed=args.seed,
                         n_jobs=args.n_jobs, executor=args.executor, plugins=args.plugins,
                         rerun=args.rerun, progress=progress)
    except PrivpubError as exc:
        print(f"privpub audit: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        json.dump({"mode": mode, "ran": run.n_ran, "stored": run.n_stored,
                   "seconds": run.seconds, "audits": [_record(r) for r in run.rows]},
                  out, indent=2, default=str)
        print(file=out)
    else:
        _print_table(run.rows, out)
        print(f"{len(run.rows)} configuration(s): {run.n_ran} audited, {run.n_stored} already "
              f"stored ({run.seconds:.1f} s) -> {audit_store(args.results_dir).root}", file=out)
        for r in run.errors:
            print(f"ERROR {r['label']}: {r['error']}", file=out)
        for r in run.violated_without_caveat:
            print(f"VIOLATED without a caveat: {r['label']} (eps_lb {_fmt(r['value'])} > "
                  f"{_fmt(r['epsilon'])}); replay: privpub audit --replay {r['witness_id']}",
                  file=out)
    if run.violated_without_caveat:
        return EXIT_VIOLATED
    return EXIT_USAGE if run.errors else EXIT_OK
