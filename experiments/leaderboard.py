"""Leaderboards: one ranking per task (``conf/task/<task>.yaml`` or an installed plug-in's) of
every mechanism that fits.

A task names its input and output kinds and the privacy notions it ranks; the mechanisms that
qualify come from the registry (:func:`qualifying`), so a new mechanism, a plug-in included,
joins every task it fits without editing the task. :func:`compile_task` turns a task into
ordinary :class:`~privpub.experiments.spec.ExperimentSpec` s (one per output kind, whose metrics
must
all take that kind), whose cells are the paper experiments' cells where they compute the same
thing, so the runner copies what a paper experiment already computed.
:func:`run_leaderboard` checks every selected task and ``--add`` name before any trial runs
(:mod:`privpub.experiments.preflight`), runs what is missing, quick-audits what it ranks and
no stored audit speaks for (:func:`audit_unaudited`) and has :mod:`privpub.plots.leaderboard`
write the pages.
The rules (notions never ranked together, refuted claims never ranked, hindsight tuning,
aggregates): docs/design.md ("Leaderboards").
"""

from __future__ import annotations

import argparse
import copy
import inspect
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from privpub.errors import ConfigError
from privpub.experiments.catalog import CONF_DIR
from privpub.experiments.executors import limit_argument
from privpub.results import OPT_IN_SCALES, SCALES

__all__ = [
    "TASK_DIR",
    "STORE_PREFIX",
    "Task",
    "task_files",
    "task_names",
    "load_task",
    "qualifying",
    "check_added",
    "compile_task",
    "board_of",
    "evaluate_task_claims",
    "audit_unaudited",
    "run_leaderboard",
]

#: The seed of the quick audits the leaderboard runs: ``privpub audit``'s default, so that
#: either reuses the other's stored audits.
AUDIT_SEED = 0
#: Where the task files live.
TASK_DIR = CONF_DIR / "task"
#: A task's store is ``<results_dir>/<STORE_PREFIX><task>/<scale>/store``: beside the paper
#: experiments' (so either reads the other's trials), and left out of the report (``_``).
STORE_PREFIX = "_leaderboard_"
#: The default time limit of one trial, by scale (seconds): a built-in trial takes seconds at
#: every scale (docs/timings.md), so this only stops what never returns (a plug-in's loop).
TRIAL_TIMEOUT = {"smoke": 300.0, "small": 1800.0, "paper": 7200.0, "large": 3600.0}
#: The default memory limit of one trial, by scale (MB of its worker's resident memory): the
#: largest built-in trial holds under 2 GB up to the paper scale, and a release on a graph of
#: today's size must stay under 16 GB (docs/timings.md).
TRIAL_MEMORY = {"smoke": 8192.0, "small": 8192.0, "paper": 8192.0, "large": 16384.0}

_TASK_KEYS = frozenset(
    "name title input_kind output_kinds notions metric secondary settings headline exclude "
    "mechanisms datasets grid repetitions scales claims notes across_metrics".split()
)
_ACROSS_KEYS = frozenset("title over source".split())
_MECHANISM_KEYS = frozenset("params grid tuned_in_hindsight rule reference label".split())
_SCALE_KEYS = frozenset("datasets grid repetitions mechanisms skip".split())
_EMPTY = inspect.Parameter.empty
# privpub.registry is imported where used: `privpub --help` builds this command's parser and
# must not import the data kinds (scipy) (experiments/tests/test_console.py)


@dataclass
class Task:
    """A parsed task file (``conf/task/<name>.yaml``); docs/design.md ("Leaderboards")."""

    name: str
    title: str
    input_kind: str
    output_kinds: list[str]
    notions: list[str]
    metric: str
    secondary: list[str]
    settings: list[str]
    headline: dict
    exclude: dict[str, str]
    mechanisms: dict[str, dict]
    base: dict  # datasets, grid, repetitions (the paper scale)
    scales: dict
    claims: list[dict] = field(default_factory=list)
    notes: str = ""
    #: ``{"title", "over", "source"}``: how often best and the average rank across the
    #: metrics ``over`` (docs/design.md, "Leaderboards"); None when the task has none.
    across_metrics: dict | None = None

    @property
    def metrics(self) -> list[str]:
        return [self.metric, *self.secondary]

    def scaled(self, scale: str) -> dict:
        """Datasets, grid, repetitions and per-mechanism patches at ``scale``: the scale
        block's grid is merged over the base grid, as a paper experiment's scale block is."""
        block = dict(self.scales.get(scale) or {})
        out = {k: copy.deepcopy(self.base[k]) for k in ("datasets", "grid", "repetitions")}
        out.update({k: copy.deepcopy(v) for k, v in block.items()
                    if k not in ("mechanisms", "grid", "skip")})
        out["grid"].update(copy.deepcopy(block.get("grid") or {}))
        out["mechanisms"] = block.get("mechanisms") or {}
        return out


def task_files() -> dict[str, Path]:
    """Every task file by task id: ``conf/task/*.yaml``, then those of the installed
    plug-ins (entry-point group ``privpub.tasks``, :mod:`privpub.plugins`): a package's
    folder of ``<task>.yaml`` files, or ``module:ATTR`` naming a folder or a list of files.
    A plug-in's task may not take a built-in task's id."""
    from privpub.plugins import entry_point_error, entry_points, load_entry_points

    found = {p.stem: p for p in sorted(TASK_DIR.glob("*.yaml"))}
    eps = {ep.name: ep for ep in entry_points("task")}
    for ep_name, obj in load_entry_points("task").items():
        ep = eps[ep_name]
        folder = getattr(obj, "__path__", None)
        if folder is not None:
            paths = sorted(Path(list(folder)[0]).glob("*.yaml"))
        elif isinstance(obj, (str, Path)) and Path(obj).is_dir():
            paths = sorted(Path(obj).glob("*.yaml"))
        elif isinstance(obj, (str, Path)) or (isinstance(obj, (list, tuple)) and all(
                isinstance(x, (str, Path)) for x in obj)):
            paths = [Path(x) for x in ([obj] if isinstance(obj, (str, Path)) else obj)]
        else:
            raise entry_point_error(ep, "a task plug-in names a package of task files, or "
                                        "module:ATTR giving a folder or a list of files")
        for path in paths:
            if not path.is_file() or path.suffix != ".yaml":
                raise entry_point_error(ep, f"{str(path)!r} is not a task file (<task>.yaml)")
            if path.stem in found and found[path.stem] != path:
                raise entry_point_error(ep, f"its task {path.stem!r} has the id of "
                                            f"{str(found[path.stem])!r}")
            found[path.stem] = path
    return dict(sorted(found.items()))


def task_names() -> list[str]:
    """Every task id (:func:`task_files`), sorted."""
    return list(task_files())


def _fail(name: str, message: str):
    raise ConfigError(f"task {name!r}: {message}")


def load_task(name: str) -> Task:
    """Read and check ``conf/task/<name>.yaml``; an unknown name or a bad file is one
    :class:`~privpub.errors.ConfigError`."""
    from privpub.registry import get_metric

    path = task_files().get(name)
    if path is None:
        import difflib

        close = difflib.get_close_matches(name, task_names(), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown task {name!r}{hint}; tasks: {', '.join(task_names())}")
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    unknown = sorted(set(raw) - _TASK_KEYS)
    if unknown:
        _fail(name, f"unknown key(s) {unknown}; keys: {', '.join(sorted(_TASK_KEYS))}")
    for key in ("input_kind", "output_kinds", "notions", "metric", "datasets", "grid"):
        if not raw.get(key):
            _fail(name, f"needs {key!r}")
    for mech, conf in (raw.get("mechanisms") or {}).items():
        bad = sorted(set(conf or {}) - _MECHANISM_KEYS)
        if bad:
            _fail(name, f"mechanism {mech!r} has unknown key(s) {bad}")
    for scale, block in (raw.get("scales") or {}).items():
        if scale not in SCALES or not isinstance(block or {}, dict):
            _fail(name, f"scales maps {', '.join(SCALES)} to a mapping, got {scale!r}")
        if set(block or {}) - _SCALE_KEYS:
            _fail(name, f"scale {scale!r} has unknown key(s) {sorted(set(block) - _SCALE_KEYS)}")
        if not isinstance((block or {}).get("skip") or {}, dict):
            _fail(name, f"scale {scale!r}: skip maps a mechanism to the reason it cannot run")
    task = Task(
        name=str(raw.get("name") or name), title=str(raw.get("title") or name),
        input_kind=raw["input_kind"], output_kinds=list(raw["output_kinds"]),
        notions=list(raw["notions"]), metric=str(raw["metric"]),
        secondary=[str(m) for m in raw.get("secondary") or []],
        settings=[str(s) for s in raw.get("settings") or []],
        headline=dict(raw.get("headline") or {}), exclude=dict(raw.get("exclude") or {}),
        mechanisms={k: dict(v or {}) for k, v in (raw.get("mechanisms") or {}).items()},
        base={"datasets": raw["datasets"], "grid": raw["grid"],
              "repetitions": raw.get("repetitions", 1)},
        scales=dict(raw.get("scales") or {}), claims=list(raw.get("claims") or []),
        notes=str(raw.get("notes") or ""),
    )
    for metric in task.metrics:
        get_metric(metric)  # an unknown metric fails here, naming the known ones
    task.across_metrics = _across_metrics(name, raw.get("across_metrics"), task.metrics)
    missing = [k for k in task.output_kinds if k not in get_metric(task.metric).kinds]
    if missing:
        _fail(name, f"the primary metric {task.metric!r} must take every output kind; "
                    f"it does not take {', '.join(missing)}")
    return task


def _across_metrics(name: str, raw, metrics: list[str]) -> dict | None:
    """The task's ``across_metrics`` checked: ``over`` (two or more of the task's metrics,
    each once), ``title`` (default: "the N metrics") and ``source`` (where the aggregate
    comes from, optional)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - _ACROSS_KEYS or "over" not in raw:
        _fail(name, "across_metrics maps over (a list of the task's metrics) and optionally "
                    f"title and source, got {raw!r}")
    over = raw["over"]
    if not isinstance(over, list) or len(over) < 2 or len(set(map(str, over))) != len(over):
        _fail(name, f"across_metrics.over lists two or more distinct metrics, got {over!r}")
    over = [str(m) for m in over]
    outside = [m for m in over if m not in metrics]
    if outside:
        _fail(name, f"across_metrics.over names {', '.join(outside)}, not among the task's "
                    "metrics (metric and secondary)")
    return {"title": str(raw.get("title") or f"the {len(over)} metrics"), "over": over,
            "source": str(raw.get("source") or "")}


def qualifying(task: Task, add=(), scale: str | None = None) -> tuple[list[str], dict[str, str]]:
    """The mechanisms the task ranks (at ``scale``, when given), and every other mechanism of
    its input kind with the reason it is left out.

    A mechanism qualifies when its input kind is the task's, its output kind one of the
    task's and its privacy notion one the task ranks, unless its registration says why no
    task ranks it (``unranked=``), the task excludes it (with a reason), the scale block skips
    it (``skip: {name: why it cannot run at that size}``) or it is a reference (the truth or
    a non-private yardstick). ``add`` names
    mechanisms that must qualify (``--add``): one that does not is an error saying why.
    """
    from privpub.registry import get_mechanism, mechanisms

    ranked, left_out = [], {}
    for name, info in sorted(mechanisms().items()):
        if info.input_kind != task.input_kind:
            continue
        why = _why_not(task, name, info, scale)
        if why is None:
            ranked.append(name)
        else:
            left_out[name] = why[1]
    for name in add:
        info = get_mechanism(name)  # an unknown name fails naming the closest ones
        if name not in ranked:
            why = left_out.get(name) or _why_not(task, name, info, scale)[1]
            raise ConfigError(f"--add {name}: it does not fit task {task.name!r}: {why}")
    return ranked, left_out


#: The kinds of reason a task does not rank a mechanism, in the order they are told.
_REASONS = ("input", "output", "notion", "unranked", "excluded", "scale", "reference", "needs")


def _why_not(task: Task, name: str, info, scale: str | None = None) -> tuple[str, str] | None:
    """Why ``task`` does not rank mechanism ``name`` (``info``: its registration), as
    ``(kind of reason, reason)``; None when it does. The kinds: :data:`_REASONS`
    (``unranked``: the registration's own reason not to rank it)."""
    if info.input_kind != task.input_kind:
        return "input", f"its input is not {task.input_kind}"
    if info.output_kind not in task.output_kinds:
        return "output", (f"outputs {info.output_kind}, the task ranks "
                          f"{', '.join(task.output_kinds)}")
    if info.privacy not in task.notions:
        return "notion", f"claims {info.privacy}, the task ranks {', '.join(task.notions)}"
    if info.unranked:
        return "unranked", info.unranked
    if name in task.exclude:
        return "excluded", str(task.exclude[name])
    skip = ((task.scales.get(scale) or {}).get("skip") or {}) if scale else {}
    if name in skip:
        return "scale", f"skipped at scale={scale}: {' '.join(str(skip[name]).split())}"
    if info.role == "reference":
        return "reference", "a reference (the truth or a non-private yardstick), not a " \
                            "release method"
    required = [k for k, d in info.parameters.items()
                if d is _EMPTY and k not in _fixed_keys(task, name)]
    if required:
        return "needs", f"needs {', '.join(required)}, which the task does not fix"
    return None


def check_added(tasks: list[Task], add=()) -> tuple[dict[str, list[str]], list[str]]:
    """Check each ``--add`` mechanism against every task of ``tasks`` before any runs.

    Returns ``({task: the added mechanisms it ranks}, lines)``, ``lines`` saying for each
    added mechanism that fits some tasks which it joins and, one line per reason, which it
    does not. A mechanism that fits none of them (or an unknown name) is one
    :class:`~privpub.errors.ConfigError` with a line per reason, e.g. ``my_mech claims
    record-DP; node_dp_degree ranks node-DP, none``.
    """
    from privpub.errors import UnknownNameError
    from privpub.registry import get_mechanism

    fits: dict[str, list[str]] = {t.name: [] for t in tasks}
    lines, errors = [], []
    for name in dict.fromkeys(add):
        try:
            info = get_mechanism(name)
        except UnknownNameError as exc:
            errors.append(f"--add {exc}")
            continue
        joins, reasons = [], {}
        for task in tasks:
            why = _why_not(task, name, info)
            if why is None:
                joins.append(task.name)
                fits[task.name].append(name)
            else:
                reasons.setdefault(why[0], []).append((task, why[1]))
        explained = _reason_lines(name, info, reasons)
        if not joins:
            of = (f"task {tasks[0].name}" if len(tasks) == 1
                  else f"any of the {len(tasks)} tasks")
            errors.append("\n".join([f"--add {name}: it does not fit {of}:", *explained]))
        elif reasons:
            lines += [f"--add {name}: joins {', '.join(joins)}; not the other "
                      f"{len(tasks) - len(joins)} task(s):", *explained]
        else:
            lines.append(f"--add {name}: joins every task ({', '.join(joins)})")
    if errors:
        raise ConfigError("\n".join(errors))
    return fits, lines


def _reason_lines(name: str, info, reasons: dict[str, list]) -> list[str]:
    """One indented line per kind of reason (:func:`_why_not`) naming the tasks it holds
    for: ``my_mech claims record-DP; node_dp_degree ranks node-DP, none``."""
    clauses = {  # kind: (what the mechanism is, the tasks' verb, what each task has)
        "input": (f"takes {info.input_kind}", "takes", lambda t: t.input_kind),
        "output": (f"outputs {info.output_kind}", "ranks", lambda t: ", ".join(t.output_kinds)),
        "notion": (f"claims {info.privacy}", "ranks", lambda t: ", ".join(t.notions)),
    }
    lines = []
    for kind, found in sorted(reasons.items(), key=lambda item: _REASONS.index(item[0])):
        if kind in clauses:
            own, verb, value = clauses[kind]
            groups: dict[str, list[str]] = {}
            for task, _ in found:
                groups.setdefault(value(task), []).append(task.name)
            text = f"{name} {own}; " + "; ".join(
                f"{', '.join(names)} {verb if len(names) == 1 else verb[:-1]} {v}"
                for v, names in groups.items())
        elif kind == "reference":
            text = f"{name} is {found[0][1]}: no task ranks one"
        elif kind == "unranked":  # the registration's reason, the same for every task
            text = f"{name} is not ranked: {found[0][1]}"
        elif kind == "excluded":
            text = "; ".join(f"{t.name} excludes {name}: {why}" for t, why in found)
        else:  # needs parameters a task does not fix
            text = "; ".join(f"{name} {why.replace('the task', t.name)}" for t, why in found)
        lines.append(f"  {text}")
    return lines


def _fixed_keys(task: Task, name: str) -> set[str]:
    """The parameters the task gives mechanism ``name`` (its grid or fixed values)."""
    conf = task.mechanisms.get(name, {})
    return set(task.base["grid"]) | set(conf.get("params") or {}) | set(conf.get("grid") or {})


def _entry(task: Task, name: str, patches: dict) -> dict:
    """The experiment entry of mechanism ``name``: the task's fixed parameters and grid with
    the scale's patches over them; its label is its registry name."""
    conf = task.mechanisms.get(name, {})
    params = {**(conf.get("params") or {}), **(patches.get(name, {}).get("params") or {})}
    grid = {**(conf.get("grid") or {}), **(patches.get(name, {}).get("grid") or {})}
    entry = {"name": name, "label": name, "key": name}
    if params:
        entry["params"] = params
    if grid:
        entry["grid"] = grid
    return entry


def compile_task(task: Task, scale: str, add=()):
    """The experiment specs of ``task`` at ``scale``: one per output kind (each with the
    task's metrics that take that kind), all named ``<STORE_PREFIX><task>`` (one store)."""
    from privpub.experiments.spec import resolve_experiment
    from privpub.registry import get_metric, mechanisms

    ranked, _ = qualifying(task, add, scale)
    scaled = task.scaled(scale)
    registry = mechanisms()
    specs = []
    for kind in task.output_kinds:
        names = [n for n in ranked if registry[n].output_kind == kind]
        if not names:
            continue
        metrics = [m for m in task.metrics if kind in get_metric(m).kinds]
        experiment = {
            "name": STORE_PREFIX + task.name, "title": task.title,
            "datasets": scaled["datasets"], "grid": scaled["grid"],
            "repetitions": scaled["repetitions"], "metrics": metrics, "noise_free": False,
            "mechanisms": [_entry(task, n, scaled["mechanisms"]) for n in names],
            "scales": {scale: {}},  # the task's block is applied above
        }
        specs.append(resolve_experiment(experiment, scale=scale))
    return specs


def board_of(task: Task, scale: str, add=()) -> dict:
    """What the pages need besides the store (plain data: plots never import experiments):
    the task's metrics, settings, notions, hindsight-tuned parameters, exclusions and
    every ranked mechanism's paper, notion, caveat, rule and outside reference."""
    from privpub.registry import get_metric, mechanisms

    ranked, left_out = qualifying(task, add, scale)
    registry = mechanisms()
    methods = {}
    for name in ranked:
        info, conf = registry[name], task.mechanisms.get(name, {})
        caveat = info.caveat if isinstance(info.caveat, str) else (
            "depends on its parameters (see the rows' caveat)" if info.caveat else None)
        methods[name] = {
            "paper": info.paper, "notion": info.privacy, "role": info.role,
            "caveat": caveat, "rule": conf.get("rule"), "reference": conf.get("reference"),
            "tuned_in_hindsight": conf.get("tuned_in_hindsight"),
            "module": info.func.__module__, "added": name in add,
            "defaults": {k: v for k, v in info.parameters.items()
                         if isinstance(v, (str, int, float, bool))},
        }
    return {
        "task": task.name, "title": task.title, "scale": scale,
        "input_kind": task.input_kind, "output_kinds": task.output_kinds,
        "notions": task.notions, "metric": task.metric, "secondary": task.secondary,
        "higher_is_better": {m: get_metric(m).higher_is_better for m in task.metrics},
        "settings": task.settings, "headline": task.headline, "methods": methods,
        "left_out": left_out, "notes": task.notes, "across_metrics": task.across_metrics,
    }


def _claims_of(task: Task, board: dict, set_aside=()) -> list[dict]:
    """The task's claims in the papers' claim schema: ``among_notion: <notion>`` becomes
    the list of the task's ranked series of that notion (hindsight-tuned ones and those in
    ``set_aside`` are not)."""
    out = []
    for raw in task.claims:
        claim = {k: v for k, v in raw.items() if k not in ("among_notion", "reference")}
        notion = raw.get("among_notion")
        if notion is not None:
            claim["among"] = [n for n, m in board["methods"].items()
                              if m["notion"] == notion and not m["tuned_in_hindsight"]
                              and n not in set_aside]
        out.append(claim)
    return out


def evaluate_task_claims(task: Task, board: dict, frame, set_aside=()) -> list[dict]:
    """The task's claims judged on its stored rows
    (:func:`privpub.experiments.claims.evaluate_claims`),
    each with its ``text``, ``source`` and outside ``reference``; the mechanisms in
    ``set_aside`` (every series refuted by the audit) are not among the compared ones."""
    from privpub.experiments.claims import evaluate_claims, parse_claims

    claims = _claims_of(task, board, set_aside)
    if not claims:
        return []
    rows = frame
    if frame is not None and not frame.empty:
        rows = frame[(frame["status"] == "ok") & ~frame["noise_free"].fillna(False).astype(bool)]
    # too few series left to compare once the refuted ones are set aside: not evaluated
    short = [c.get("among_notion") is not None and len(claim["among"]) < 2
             for c, claim in zip(task.claims, claims, strict=True)]
    parsed = iter(evaluate_claims(parse_claims([c for c, s in zip(claims, short, strict=True)
                                                if not s], where=f"task {task.name!r}"), rows))
    results = [_not_evaluated(c, [m for m in sorted(set_aside)
                                  if board["methods"][m]["notion"] == c["among_notion"]])
               if s else next(parsed)
               for c, s in zip(task.claims, short, strict=True)]
    for raw, result in zip(task.claims, results, strict=True):
        result.update(id=raw.get("id"), text=raw.get("text"), source=raw.get("source"),
                      reference=raw.get("reference"))
    return results


def _not_evaluated(raw: dict, set_aside) -> dict:
    """The verdict of a claim among a notion's series when fewer than two are ranked."""
    notion = raw["among_notion"]
    aside = f" ({', '.join(set_aside)} refuted by the audit)" if set_aside else ""
    reason = f"fewer than two ranked {notion} series to compare{aside}"
    return {"verdict": "not evaluated", "summary": f"not evaluated: {reason}", "reason": reason,
            "n_held": 0, "n_groups": 0, "n_skipped": 0, "groups": []}


def audit_unaudited(boards: list[dict], *, results_dir, n_jobs: int = 1, plugins=(),
                    echo=print):
    """Quick-audit (``privpub audit --quick``, :func:`privpub.experiments.audit.run_audits`)
    every mechanism of ``boards`` with a series of a DP notion that no stored audit speaks
    for; the rows go to the audits' store and ``verdicts.json`` like any audit's. Returns
    the :class:`~privpub.experiments.audit.AuditRun`, None when nothing was missing."""
    from privpub.experiments.audit import run_audits
    from privpub.plots.leaderboard import board_standing, stored_records
    from privpub.plots.leaderboard.standing import not_audited

    records = stored_records(results_dir)
    names = sorted({m for b in boards for m in not_audited(board_standing(b, records))})
    if not names:
        return None
    echo(f"audit (quick) of what is ranked and has no stored audit: {', '.join(names)} "
         "(--no-audit skips it)")

    def progress(row):
        bound = row["value"]
        echo(f"  {row['label']}: {row['verdict']}"
             + (f" (eps_lb {bound:.3g}, {row['seconds']:.1f} s)" if bound == bound else ""))

    run = run_audits(names, results_dir=results_dir, mode="quick", seed=AUDIT_SEED,
                     n_jobs=n_jobs, plugins=plugins, progress=progress)
    echo(f"audit: {run.n_ran} configuration(s) audited ({run.seconds:.0f} s)")
    return run


def run_leaderboard(tasks=(), *, scale: str = "small", add=(), plugins=(),
                    results_dir="results", n_jobs: int = 1, seed: int = 0,
                    data_dir=None, progress: bool = False, audit: bool = True,
                    trial_timeout=None, trial_memory=None, echo=print) -> dict:
    """Run the missing trials of ``tasks`` (default: all), quick-audit what they rank and no
    stored audit speaks for (unless ``audit`` is False: it is then "not audited") and write
    ``<results_dir>/leaderboard/``, whose pages and CSV also keep every other task already
    stored at ``scale``. A series whose claim the stored audit refutes is not ranked, nor
    among the series a task's claim compares. Before any trial runs, the task and ``add``
    names, where each added mechanism fits (:func:`check_added`: ``echo`` says which tasks
    it joins) and every task's specs and data files are checked: a problem is one
    :class:`~privpub.errors.PrivpubError` naming each once. A trial that passes
    ``trial_timeout`` seconds or ``trial_memory`` MB (None: :data:`TRIAL_TIMEOUT` and
    :data:`TRIAL_MEMORY` of ``scale``; ``math.inf``: no limit) is stored as failed and the
    others go on: a plug-in that never returns costs its trials, not the leaderboard.

    Returns ``{"index": index path, "csv": csv path, "tops": {task: ...}, "refuted":
    {task: [...]}, "summaries": [...], "claims": {task: [...]}, "seconds": ...}``."""
    import time

    from privpub.experiments.cli import check_writable
    from privpub.experiments.executors import trial_limits
    from privpub.experiments.runner import run_experiment, store_dir
    from privpub.experiments.store import ResultStore
    from privpub.plots.leaderboard import board_standing, stored_records, write_leaderboard
    from privpub.plots.leaderboard.standing import REFUTED, refuted_cells
    from privpub.registry import import_plugins

    t0 = time.perf_counter()
    timeout, memory = trial_limits(trial_timeout, trial_memory,
                                   default_timeout=TRIAL_TIMEOUT[scale],
                                   default_memory=TRIAL_MEMORY[scale])
    import_plugins(plugins)
    names = list(dict.fromkeys(tasks)) or task_names()
    loaded = _load_tasks(names, add)
    if scale in OPT_IN_SCALES:  # only the tasks with a block for it run there
        lacking = [t.name for t in loaded if scale not in t.scales]
        if tasks and lacking:
            raise ConfigError(f"task(s) {', '.join(lacking)} have no {scale} scale; tasks "
                              f"that do: {', '.join(_tasks_at(scale)) or 'none'}")
        for name in lacking:
            echo(f"{name}: no {scale} scale (skipped)")
        loaded = [t for t in loaded if t.name not in lacking]
        names = [t.name for t in loaded]
    fits, lines = check_added(loaded, add)  # before any trial runs, as is everything below
    for line in lines:
        echo(line)
    specs = _preflight(loaded, scale, fits, results_dir=results_dir, seed=seed,
                       data_dir=data_dir)
    check_writable(results_dir)  # the last check before the first write
    shown = names + [n for n in task_names() if n not in names and (  # stored before
        store_dir(results_dir, STORE_PREFIX + n, scale) / "store").is_dir()]
    boards, claims, summaries = [], {}, []
    for task in loaded + [load_task(n) for n in shown[len(names):]]:
        mine = fits.get(task.name, [a for a in add if _fits(task, a)])
        failures = []
        for spec in specs.get(task.name, ()):
            summary = run_experiment(spec, results_dir=results_dir, seed=seed, n_jobs=n_jobs,
                                     data_dir=data_dir, progress=progress, plugins=plugins,
                                     trial_timeout=timeout, trial_memory=memory)
            summaries.append(summary)
            failures += summary.failures
            echo(summary.describe())
        board = board_of(task, scale, mine)
        board["frame"] = ResultStore(store_dir(results_dir, STORE_PREFIX + task.name, scale)
                                     / "store").load()
        _leave_out_failed(board, failures)
        boards.append((task, board))
    if audit:  # what the tasks run here rank (the others' were audited when they ran)
        audit_unaudited([b for t, b in boards if t.name in names], results_dir=results_dir,
                        n_jobs=n_jobs, plugins=plugins, echo=echo)
    records = stored_records(results_dir)
    for task, board in boards:  # a refuted series is not among the series a claim compares
        standing = board_standing(board, records)
        frame, refuted = board["frame"], refuted_cells(standing)
        if refuted and frame is not None and not frame.empty:
            frame = frame[~frame["cell"].astype(str).isin(refuted)]
        ranked = {e["mechanism"] for e in standing.values() if e["standing"] != REFUTED}
        set_aside = {e["mechanism"] for e in standing.values()} - ranked
        board["claims"] = claims[task.name] = evaluate_task_claims(task, board, frame,
                                                                   set_aside)
    boards = [b for _, b in boards]
    written = write_leaderboard(boards, Path(results_dir) / "leaderboard",
                                results_dir=results_dir)
    return {**written, "summaries": summaries, "claims": claims,
            "seconds": time.perf_counter() - t0, "boards": boards}


def _leave_out_failed(board: dict, failures: list[dict]) -> None:
    """Move each series none of whose trials succeeded, while some failed in this run (a
    plug-in past ``trial_timeout`` or ``trial_memory``, or one that raises), from the
    board's methods to what it leaves out, with its first failure: it has nothing to rank
    and no claim compares it."""
    frame = board["frame"]
    ok = (set() if frame is None or frame.empty
          else set(frame.loc[frame["status"] == "ok", "label"]))
    errors = {}
    for failure in failures:
        errors.setdefault(failure["label"], failure["error"])
    for name, error in errors.items():
        if name in board["methods"] and name not in ok:
            del board["methods"][name]
            board["left_out"][name] = f"no trial succeeded (first failure: {error})"


def _tasks_at(scale: str) -> list[str]:
    """The tasks with a ``scales.<scale>`` block."""
    return [n for n in task_names() if scale in load_task(n).scales]


def _load_tasks(names, add=()) -> list[Task]:
    """:func:`load_task` of every name; every unknown task or bad file, and every unknown
    mechanism name of ``add``, in one :class:`~privpub.errors.ConfigError`."""
    from privpub.errors import UnknownNameError
    from privpub.registry import get_mechanism

    loaded, errors = [], []
    for name in names:
        try:
            loaded.append(load_task(name))
        except ConfigError as exc:
            errors.append(str(exc))
    for name in dict.fromkeys(add):
        try:
            get_mechanism(name)
        except UnknownNameError as exc:
            errors.append(f"--add {exc}")
    if errors:
        raise ConfigError("\n".join(errors))
    return loaded


def _preflight(tasks: list[Task], scale: str, fits: dict, *, results_dir, seed: int,
               data_dir) -> dict[str, list]:
    """Every task's specs (:func:`compile_task`, with the ``--add`` mechanisms it ranks)
    and the data files of all of them checked before the first trial runs
    (:mod:`privpub.experiments.preflight`): one error naming each problem once and the
    tasks it stops. Returns ``{task: specs}``."""
    from privpub.errors import DataError, PrivpubError
    from privpub.experiments.preflight import Job, check_data, report

    jobs, specs = [], {}
    for task in tasks:
        try:
            specs[task.name] = compile_task(task, scale, fits.get(task.name, ()))
        except PrivpubError as exc:
            jobs.append(Job(task.name, error=str(exc)))
            continue
        jobs += [Job(task.name, spec, seed=seed, results_dir=str(results_dir),
                     data_dir=data_dir) for spec in specs[task.name]]
    text = report(jobs, check_data(jobs), noun="task")
    if text:
        raise (ConfigError if any(j.error for j in jobs) else DataError)(text)
    return specs


def _fits(task: Task, name: str) -> bool:
    try:
        qualifying(task, [name])
    except ConfigError:
        return False
    return True


# ----------------------------------------------------------------------------- command line
def add_leaderboard_parser(sub) -> None:
    """``privpub leaderboard``'s arguments (:mod:`privpub.experiments.console`)."""
    lb = sub.add_parser("leaderboard", help="run what is missing of each task's leaderboard "
                        "and write <results-dir>/leaderboard/ (index.html, one page per task, "
                        "leaderboard.csv)")
    lb.add_argument("tasks", nargs="*", metavar="TASK",
                    help=f"task ids (default: all): {', '.join(task_names())}")
    lb.add_argument("--scale", choices=SCALES, default="small", help="default: small")
    lb.add_argument("--add", nargs="+", default=[], metavar="NAME",
                    help="mechanisms that must be ranked (an error if one fits no task)")
    lb.add_argument("--plugins", nargs="+", default=[], metavar="MODULE",
                    help="modules registering your own mechanisms (e.g. mylab.mech)")
    lb.add_argument("--results-dir", default="results", help="default: results")
    lb.add_argument("--n-jobs", type=int, default=1, help="parallel trials (default: 1)")
    lb.add_argument("--seed", type=int, default=0, help="base seed (default: 0)")
    lb.add_argument("--data-dir", help="real datasets (default: $PRIVPUB_DATA_DIR)")
    lb.add_argument("--trial-timeout", type=limit_argument("seconds"), metavar="SECONDS",
                    help="stop a trial after this long: it is stored as failed, the others go "
                    "on (default: " + ", ".join(f"{v:g} s at {k}" for k, v in
                                                TRIAL_TIMEOUT.items()) + "; inf: none)")
    lb.add_argument("--trial-memory", type=limit_argument("MB"), metavar="MB",
                    help="stop a trial whose worker holds more resident memory (default: "
                    + ", ".join(f"{v:g} MB at {k}" for k, v in TRIAL_MEMORY.items())
                    + "; inf: none)")
    lb.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="a progress bar per experiment on stderr (default: when stderr is a "
                    "terminal)")
    lb.add_argument("--no-audit", dest="audit", action="store_false",
                    help="do not quick-audit what is ranked and has no stored audit (it is "
                    "then marked 'not audited'; a stored refutation still sets a claim aside)")
    lb.set_defaults(config_keys={"scale": "--scale", "results_dir": "--results-dir",
                                 "n_jobs": "--n-jobs", "seed": "--seed", "data_dir": "--data-dir",
                                 "plugins": "--plugins", "add_mechanisms": "--add",
                                 "trial_timeout": "--trial-timeout",
                                 "trial_memory": "--trial-memory", "progress": "--progress"})


def closing_lines(result: dict, scale: str | None = None) -> list[str]:
    """What ``privpub leaderboard`` prints at its end: each task's ranked leaders at its
    headline parameter ("not audited" beside a DP claim no stored audit speaks for), the
    series set aside because the audit refutes their claim (an ``ERROR`` line for a
    caveat-free one), the claims' verdicts with their numbers and where the pages are."""
    lines = []
    for task, tops in result["tops"].items():
        lines.append(f"{task}:")
        for t in tops:
            best = "; ".join(f"{i + 1}. {s} {v:.4g}{f' ({note})' if note else ''}"
                             for i, (s, v, note) in enumerate(t["top"]))
            where = f"{t['dataset']}{' ' + t['setting'] if t['setting'] else ''}"
            lines.append(f"  [{t['notion']}] {where} at {t['axis']}={t['at']}: {best}")
        for e in result.get("refuted", {}).get(task, []):
            lines.append(f"  not ranked: {e['series']} claims {e['notion']}, refuted by the "
                         f"audit (eps_lb {e['epsilon_lower_bound']:.3g}, {e['mode']}); "
                         f"replay: {e['replay']}")
        for c in result["claims"].get(task, []):
            about = f" ({c['subject']})" if c.get("subject") else ""
            lines.append(f"  claim {c['id']}: {c['verdict']}{about} - {c['summary']}")
    for task, refuted in result.get("refuted", {}).items():
        for e in refuted:
            if e["error"]:
                lines.append(f"ERROR {task}: {e['series']} claims {e['notion']} without a "
                             f"caveat and the audit refutes it (eps_lb "
                             f"{e['epsilon_lower_bound']:.3g} > 1); replay: {e['replay']}")
    if scale == "smoke":
        lines.append("smoke scale: toy data (synthetic stand-ins, few repetitions), not a "
                     "ranking to cite")
    lines.append(f"leaderboard: {result['index']} (csv: {result['csv']}, "
                 f"{result['seconds']:.0f} s)")
    return lines


def cmd_leaderboard(args, out) -> int:
    """``privpub leaderboard``: exit 0 done, 1 some trials failed or the audit refutes a
    caveat-free claim it would rank, 2 a config or data error."""
    import os
    import sys

    from privpub.errors import PrivpubError

    data_dir = args.data_dir or os.environ.get("PRIVPUB_DATA_DIR")
    try:
        progress = sys.stderr.isatty() if args.progress is None else args.progress
        result = run_leaderboard(args.tasks, scale=args.scale, add=args.add,
                                 plugins=args.plugins, results_dir=args.results_dir,
                                 n_jobs=args.n_jobs, seed=args.seed, data_dir=data_dir,
                                 audit=args.audit, progress=progress,
                                 trial_timeout=args.trial_timeout,
                                 trial_memory=args.trial_memory,
                                 echo=lambda line: print(line, file=out))
    except PrivpubError as exc:
        print(f"privpub leaderboard: {exc}", file=sys.stderr)
        return 2
    for line in closing_lines(result, args.scale):
        print(line, file=out)
    refuted_unreserved = any(e["error"] for r in result["refuted"].values() for e in r)
    return 1 if refuted_unreserved or any(s.failed for s in result["summaries"]) else 0
