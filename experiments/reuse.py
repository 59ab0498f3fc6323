"""Which trials of a run are already computed: result-store reuse and scheduling.

:func:`plan_trials` decides, before anything runs, which trials the run's store holds for the
current code, which another experiment's store holds (copied, not recomputed) and in which
order the rest run. The rules are in docs/design.md (Experiments: "Code-aware reuse",
"Never computed twice", "Scheduling").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from privpub.experiments.seeding import canonical_json, stable_hash
from privpub.experiments.spec import ExperimentSpec
from privpub.experiments.store import RELEASE_METRIC, ResultStore, metric_family
from privpub.registry import get_mechanism, get_metric

__all__ = ["TrialPlan", "TrialList", "plan_trials", "cell_fingerprints", "look_elsewhere",
           "longest_first"]


class _Reps:
    """The repetitions ``0..n-1`` less ``skip``, without listing them (a run of 10^8
    repetitions holds two numbers and the few stored ones, not 10^8)."""

    def __init__(self, n: int, skip=()):
        self.n, self.skip = n, frozenset(r for r in skip if 0 <= r < n)

    def __len__(self) -> int:
        return self.n - len(self.skip)

    def __contains__(self, rep) -> bool:
        return 0 <= rep < self.n and rep not in self.skip

    def __iter__(self):
        return (r for r in range(self.n) if r not in self.skip)

    def without(self, reps) -> _Reps:
        return _Reps(self.n, self.skip | set(reps))


class TrialList:
    """The trials a run has to compute, cell by cell: ``(cell, rep, code hash, release key)``
    made as they are iterated, so memory does not grow with the repetitions. Also the
    ``wanted`` lookup of :func:`look_elsewhere`: ``(cell id, rep) -> (cell, code hash)``."""

    def __init__(self, seed: int, entries=None):
        self.seed = seed
        self.entries: list[tuple] = entries or []  # (cell, code, release code, _Reps)
        self._by_id = {e[0].cell_id: e for e in self.entries}

    def add(self, cell, code: str, release_code: str, reps: _Reps) -> None:
        if len(reps):
            self.entries.append((cell, code, release_code, reps))
            self._by_id[cell.cell_id] = self.entries[-1]

    def __len__(self) -> int:
        return sum(len(e[3]) for e in self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __iter__(self):
        for cell, code, release_code, reps in self.entries:
            for rep in reps:
                key = stable_hash([cell.identity, self.seed, rep, release_code])
                yield (cell, rep, code, key[:32])

    def cells(self) -> list:
        return [e[0] for e in self.entries]

    def cell_ids(self) -> set[str]:
        return set(self._by_id)

    def __contains__(self, key) -> bool:
        entry = self._by_id.get(key[0])
        return entry is not None and key[1] in entry[3]

    def __getitem__(self, key) -> tuple:
        entry = self._by_id[key[0]]
        return entry[0], entry[1]

    def without(self, done) -> TrialList:
        """These trials less ``done`` ((cell id, rep) pairs)."""
        by_cell: dict[str, set] = {}
        for cell_id, rep in done:
            by_cell.setdefault(cell_id, set()).add(rep)
        out = TrialList(self.seed)
        for cell, code, release_code, reps in self.entries:
            gone = by_cell.get(cell.cell_id)
            out.add(cell, code, release_code, reps.without(gone) if gone else reps)
        return out

    def longest_first(self, costs: dict) -> TrialList:
        """The same trials, cells in :func:`longest_first` order (ties keep theirs)."""
        key = _cost_key(costs)
        return TrialList(self.seed, sorted(self.entries, key=lambda e: key(e[0])))


@dataclass
class TrialPlan:
    """What a run has to compute, and what it found done."""

    trials: TrialList  # (cell, rep, code hash, release key) still to run, longest first
    n_stored: int = 0  # done in the run's store or copied from another experiment's
    n_shared: int = 0  # of those, copied from another experiment's store
    n_recomputed: int = 0  # to run although stored: their code changed
    changed_files: list[str] = field(default_factory=list)
    code_modules: dict = field(default_factory=dict)  # code hash -> {module: hash}


def plan_trials(spec: ExperimentSpec, store: ResultStore, *, seed: int,
                rerun: bool = False) -> TrialPlan:
    """The trials of ``spec`` under base seed ``seed`` that ``store`` does not hold for the
    current code (all of them with ``rerun``), less those another experiment's store holds
    (copied into ``store`` here), longest first."""
    from privpub.experiments.provenance import describe_changes

    fingerprints = cell_fingerprints(spec.cells, spec.metrics)
    release_code = cell_fingerprints(spec.cells)  # the mechanism and data, not the metrics
    done = {} if rerun else store.trials(spec.expected_rows)
    plan = TrialPlan(TrialList(seed),
                     code_modules={code: modules for code, modules in fingerprints.values()})
    stored_by_cell: dict[str, dict[int, str | None]] = {}
    for (cell_id, base_seed, rep), stored in done.items():
        if base_seed == seed and 0 <= rep < spec.repetitions:
            stored_by_cell.setdefault(cell_id, {})[rep] = stored
    stale_codes, stale = set(), set()
    for cell in spec.cells:
        code = fingerprints[cell.cell_id][0]
        current = set()
        for rep, stored in stored_by_cell.get(cell.cell_id, {}).items():
            if stored == code:
                current.add(rep)
            else:
                stale.add((cell.cell_id, rep))
                stale_codes.add((stored, cell.cell_id))
        plan.n_stored += len(current)
        plan.trials.add(cell, code, release_code[cell.cell_id][0],
                        _Reps(spec.repetitions, current))
    if stale_codes:
        known = store.code_modules()
        changed = set()
        for old, cell_id in stale_codes:
            changed |= set(describe_changes(known.get(old), fingerprints[cell_id][1]) or [])
        plan.changed_files = sorted(changed)
    if plan.trials:  # computed by another experiment: read, not recomputed
        shared, costs = look_elsewhere(plan.trials, spec, store, seed,
                                       share=not (rerun or spec.cold))
        plan.trials = plan.trials.without(shared).longest_first(costs)
        plan.n_stored += len(shared)
        plan.n_shared = len(shared)
        stale -= shared
    plan.n_recomputed = len(stale)
    return plan


def cell_fingerprints(cells, metrics=()) -> dict[str, tuple[str, dict[str, str]]]:
    """cell id -> (code hash, per-module hashes) of the code a cell's result depends on: its
    mechanism, its dataset loader, the ``metrics``, the view that gives the metrics their
    truth, the verifier of its privacy notion, and what they import (see
    :mod:`privpub.experiments.provenance`)."""
    from privpub.data import get_dataset_spec
    from privpub.experiments.provenance import clear_cache, code_fingerprint
    from privpub.registry import view_function
    from privpub.verify import verifier_of

    clear_cache()  # the sources may have changed since the last run in this process
    metric_modules = sorted({get_metric(m).func.__module__ for m in metrics})
    by_modules: dict[tuple, tuple[str, dict]] = {}
    out = {}
    for cell in cells:
        info, data = get_mechanism(cell.mechanism), get_dataset_spec(cell.dataset)
        modules = (info.func.__module__, data.loader.__module__, *metric_modules)
        if info.privacy in ("k-anonymity", "smooth-k-anonymity"):
            # the verifier too: a kept release carries its verdict (experiments/trial.py)
            check = verifier_of(info.privacy, info.output_kind)
            modules += ("privpub.verify",) + ((check.__module__,) if check else ())
        view = view_function(data.kind, info.output_kind)
        key = (modules, view)
        if key not in by_modules:
            by_modules[key] = code_fingerprint(modules, [view] if view else [])
        out[cell.cell_id] = by_modules[key]
    return out


def look_elsewhere(trials, spec: ExperimentSpec, store: ResultStore, seed: int, *, share=True):
    """Read the stores of the results directory (any experiment and scale) once, for two
    things; returns ``(shared, costs)``.

    ``shared``: every trial that another experiment's store holds done, for the same cell,
    seed and repetition, computed by the same code (equal ``code_hash``) with every row
    this experiment needs, is copied into ``store``; these are their (cell id, rep).
    ``costs``: the mean measured seconds of earlier runs, by cell id and by (mechanism,
    dataset), which schedules the longest trials first.

    The seeds depend only on the cell and the repetition, and each metric has its own
    stream, so such a trial's rows are exactly what this run would compute (day2016 Figs. 3,
    5, 7 and 8 share their θ-Cumulative and (θ,Ω)-Histogram cells)."""
    wanted = trials if isinstance(trials, TrialList) else _Wanted(trials)
    needed = set(spec.expected_rows) | ({RELEASE_METRIC} if spec.keep_releases else set())
    found: dict = {}
    truths: dict = {}
    timed: list = []
    for other in sorted(store.root.parent.parent.parent.glob("*/*/store")):
        frame = ResultStore(other).load()
        if frame.empty or "code_hash" not in frame.columns:
            continue
        trials_of = frame.drop_duplicates(["cell", "base_seed", "rep"])
        took = trials_of["task_seconds"] if "task_seconds" in trials_of else trials_of["seconds"]
        timed.append(trials_of[["cell", "mechanism", "dataset"]].assign(seconds=took))
        if share and other != store.root and len(found) < len(wanted):
            _find_done(frame[frame["base_seed"] == seed], wanted, needed, found, truths)
    costs = _mean_costs(timed)
    if not found:
        return set(), costs
    store.write(_copies(found, truths, wanted, spec))
    return set(found), costs


def _find_done(frame, wanted: dict, needed: set, found: dict, truths: dict) -> None:
    """Add to ``found`` the wanted trials that ``frame`` (one store's rows under the run's
    seed) holds done by the same code, and to ``truths`` its stored dataset truths."""
    truth = frame[frame["cell"].astype(str).str.startswith("truth-")]
    for cell_id, rows in truth.groupby("cell"):
        truths.setdefault(cell_id, rows)
    frame = frame[frame["cell"].isin(wanted.cell_ids())]
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
    """The found trials' rows as this experiment's (its name, scale, labels and parameter
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


def longest_first(trials, costs: dict) -> list:
    """Trials by decreasing expected time, so the last minutes are not one long trial on one
    core: a cell's measured mean, else its mechanism's on that dataset, else the dataset's
    size (rows, edges or entries). Ties keep their order."""
    key = _cost_key(costs)
    return sorted(trials, key=lambda trial: key(trial[0]))


def _cost_key(costs: dict):
    """The sort key of a cell for :func:`longest_first`."""
    from privpub.data import get_dataset_spec

    def size(dataset: str) -> float:
        expected = get_dataset_spec(dataset).expected
        for key in ("n_edges", "lcc_edges", "nnz", "n_rows", "n_nodes"):
            if isinstance(expected.get(key), (int, float)):
                return float(expected[key])
        return 0.0

    def cost(cell) -> tuple:
        measured = costs.get(cell.cell_id, costs.get((cell.mechanism, cell.dataset)))
        return (0, -measured) if measured is not None else (1, -size(cell.dataset))

    return cost


class _Wanted(dict):
    """:func:`look_elsewhere`'s lookup for a plain list of trials."""

    def __init__(self, trials):
        super().__init__({(t[0].cell_id, t[1]): (t[0], t[2]) for t in trials})

    def cell_ids(self) -> set[str]:
        return {cell_id for cell_id, _ in self}


def _param_columns(rows) -> set[str]:
    """The parameter columns of stored rows (every column not in the results format)."""
    from privpub.results import COLUMN_ORDER

    return set(rows.columns) - set(COLUMN_ORDER)
