"""Which tasks of a run are already computed: result-store reuse and scheduling.

:func:`plan_tasks` decides, before anything runs, which tasks the run's store holds for the
current code, which another experiment's store holds (copied, not recomputed) and in which
order the rest run. The rules are in docs/design.md (Experiments: "Code-aware reuse",
"Never computed twice", "Scheduling").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from experiments.seeding import canonical_json, stable_hash
from experiments.spec import ExperimentSpec
from experiments.store import RELEASE_METRIC, ResultStore, metric_family
from privpub.registry import get_mechanism, get_metric

__all__ = ["TaskPlan", "plan_tasks", "cell_fingerprints", "look_elsewhere", "longest_first"]


@dataclass
class TaskPlan:
    """What a run has to compute, and what it found done."""

    tasks: list  # (cell, rep, code hash, release key) still to run, longest first
    n_stored: int = 0  # done in the run's store or copied from another experiment's
    n_shared: int = 0  # of those, copied from another experiment's store
    n_recomputed: int = 0  # to run although stored: their code changed
    changed_files: list[str] = field(default_factory=list)
    code_modules: dict = field(default_factory=dict)  # code hash -> {module: hash}


def plan_tasks(spec: ExperimentSpec, store: ResultStore, *, seed: int,
               rerun: bool = False) -> TaskPlan:
    """The tasks of ``spec`` under base seed ``seed`` that ``store`` does not hold for the
    current code (all of them with ``rerun``), less those another experiment's store holds
    (copied into ``store`` here), longest first."""
    from experiments.provenance import describe_changes

    fingerprints = cell_fingerprints(spec.cells, spec.metrics)
    release_code = cell_fingerprints(spec.cells)  # the mechanism and data, not the metrics
    done = {} if rerun else store.tasks(spec.expected_rows)
    plan = TaskPlan([], code_modules={code: modules for code, modules in fingerprints.values()})
    stale_codes, stale = set(), set()
    for cell in spec.cells:
        code = fingerprints[cell.cell_id][0]
        for rep in range(spec.repetitions):
            stored = done.get((cell.cell_id, seed, rep), False)
            if stored == code:
                plan.n_stored += 1
                continue
            if stored is not False:
                stale.add((cell.cell_id, rep))
                stale_codes.add((stored, cell.cell_id))
            release_key = stable_hash([cell.identity, seed, rep, release_code[cell.cell_id][0]])
            plan.tasks.append((cell, rep, code, release_key[:32]))
    if stale_codes:
        known = store.code_modules()
        changed = set()
        for old, cell_id in stale_codes:
            changed |= set(describe_changes(known.get(old), fingerprints[cell_id][1]) or [])
        plan.changed_files = sorted(changed)
    if plan.tasks:  # computed by another experiment: read, not recomputed
        shared, costs = look_elsewhere(plan.tasks, spec, store, seed,
                                       share=not (rerun or spec.cold))
        plan.tasks = longest_first(
            [t for t in plan.tasks if (t[0].cell_id, t[1]) not in shared], costs)
        plan.n_stored += len(shared)
        plan.n_shared = len(shared)
        stale -= shared
    plan.n_recomputed = len(stale)
    return plan


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


def look_elsewhere(tasks, spec: ExperimentSpec, store: ResultStore, seed: int, *, share=True):
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
    wanted = {(t[0].cell_id, t[1]): (t[0], t[2]) for t in tasks}
    needed = set(spec.expected_rows) | ({RELEASE_METRIC} if spec.keep_releases else set())
    found: dict = {}
    truths: dict = {}
    timed: list = []
    for other in sorted(store.root.parent.parent.parent.glob("*/*/store")):
        frame = ResultStore(other).load()
        if frame.empty or "code_hash" not in frame.columns:
            continue
        tasks_of = frame.drop_duplicates(["cell", "base_seed", "rep"])
        took = tasks_of["task_seconds"] if "task_seconds" in tasks_of else tasks_of["seconds"]
        timed.append(tasks_of[["cell", "mechanism", "dataset"]].assign(seconds=took))
        if share and other != store.root and len(found) < len(wanted):
            _find_done(frame[frame["base_seed"] == seed], wanted, needed, found, truths)
    costs = _mean_costs(timed)
    if not found:
        return set(), costs
    store.write(_copies(found, truths, wanted, spec))
    return set(found), costs


def _find_done(frame, wanted: dict, needed: set, found: dict, truths: dict) -> None:
    """Add to ``found`` the wanted tasks that ``frame`` (one store's rows under the run's
    seed) holds done by the same code, and to ``truths`` its stored dataset truths."""
    truth = frame[frame["cell"].astype(str).str.startswith("truth-")]
    for cell_id, rows in truth.groupby("cell"):
        truths.setdefault(cell_id, rows)
    frame = frame[frame["cell"].isin({cell_id for cell_id, _ in wanted})]
    for (cell_id, rep), rows in frame.groupby(["cell", "rep"]):
        key = (cell_id, int(rep))
        if key in found or key not in wanted:
            continue
        have = set(metric_family(rows["metric"], needed))
        if set(rows["code_hash"]) == {wanted[key][1]} and needed <= have:
            found[key] = rows


def _mean_costs(timed: list) -> dict:
    """Mean measured seconds by cell id and by (mechanism, dataset)."""
    import pandas as pd

    costs: dict = {}
    if timed:
        times = pd.concat(timed, ignore_index=True).dropna(subset=["seconds"])
        costs.update(times.groupby("cell")["seconds"].mean().to_dict())
        costs.update(times.groupby(["mechanism", "dataset"])["seconds"].mean().to_dict())
    return costs


def _copies(found: dict, truths: dict, wanted: dict, spec: ExperimentSpec) -> list[dict]:
    """The found tasks' rows as this experiment's (its name, scale, labels and parameter
    columns), with the datasets' truths when the experiment keeps releases."""
    import pandas as pd

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
    return pd.concat(copies, ignore_index=True).to_dict("records")


def longest_first(tasks, costs: dict) -> list:
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
