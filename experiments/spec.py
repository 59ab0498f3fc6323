"""Experiment specs: from an experiment config to a validated list of cells.

:func:`resolve_experiment` layers the experiment file, its scale block and the command line
(:mod:`privpub.experiments.precedence`), expands the grid into :class:`Cell` s and checks everything
before anything runs. The experiment file's keys, cells, the precedence and the checks are
described in docs/design.md (Experiments: "Experiment file", "Cell", "Precedence",
"Command-line selection", "Grid parameters", "Checked before anything runs").
"""

from __future__ import annotations

import inspect
import itertools
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from privpub.errors import ConfigError, PrivpubError
from privpub.experiments.precedence import (
    DELETE,
    EXPERIMENT_KEYS,
    as_entry,
    as_list,
    layer_experiment,
)
from privpub.experiments.seeding import canonical, canonical_json, stable_hash
from privpub.registry import get_mechanism, get_metric, has_view
from privpub.results import SCALES, is_mechanism_row
from privpub.validation import check_depth, check_epsilon, check_k, check_positive_int

__all__ = [
    "Cell",
    "ExperimentSpec",
    "resolve_experiment",
    "noise_free_twins",
    "refresh_auto_plots",
    "declared_tuning",
    "plot_metrics",
    "plot_file",
    "PLOT_KINDS",
    "RESERVED_COLUMNS",
    "EXPERIMENT_KEYS",
    "SCALES",
    "DELETE",
]

#: Result-table columns that a parameter may not be named after.
RESERVED_COLUMNS = frozenset(
    "experiment scale cell rep seed base_seed dataset dataset_options mechanism label params "
    "metric value seconds task_seconds cpu_seconds peak_mb privacy noise_free caveat "
    "epsilon_spent ledger verified release_cached "
    "status error code_version code_hash written_at series role paper".split()
)

_ENTRY_KEYS = frozenset("name label key params grid".split())

_EMPTY = inspect.Parameter.empty

#: Checks applied to well-known parameters wherever they appear (``k`` is the anonymity
#: parameter, >= 2, for k-anonymous mechanisms, and a positive count, e.g. top-k, elsewhere).
_PARAM_CHECKS = {"epsilon": check_epsilon, "depth": check_depth}

#: Preferred x axes of the automatic figure of a metric no plot names.
_AXES = ("epsilon", "k", "theta", "depth")


@dataclass(frozen=True)
class Cell:
    """One grid point: a dataset (with options), a mechanism and its parameter values.

    ``label`` is presentation: it is not part of the cell's identity, so renaming a series
    in YAML applies to the rows already stored. ``noise_free`` marks the noise-free twin of a
    DP cell (the same mechanism run with every noise primitive drawing zero,
    :func:`privpub.noise.noise_off`): a different cell, with the same seeds.
    """

    dataset: str
    dataset_options: dict
    mechanism: str
    label: str
    params: dict
    noise_free: bool = False
    defaults: dict | None = None  # the mechanism's defaults, left out of the identity
    seeds_of: str | None = None  # the mechanism whose random streams it draws, if another

    @cached_property
    def seed_identity(self) -> dict:
        """What keys the cell's seeds: its identity without the noise switch, so a
        noise-free twin draws the same non-noise randomness (orders, samples) as its cell,
        and with the mechanism it draws the streams of (``seeds_of``,
        :class:`privpub.registry.MechanismInfo`), so a baseline that post-processes a
        mechanism's randomised step gets that mechanism's very draws."""
        return {**self._identity, "mechanism": self.seeds_of or self.mechanism}

    @cached_property
    def identity(self) -> dict:
        """What the cell computes; its hash is the cell id. Parameters at the mechanism's
        default are left out, so ``order: lexicographic`` written out (day2016 Fig. 8) and
        left to its default (Fig. 3) is one cell, computed once for both."""
        if self.noise_free:
            return {**self._identity, "noise_free": True}
        return self._identity

    @cached_property
    def _identity(self) -> dict:
        defaults = self.defaults or {}
        params = {
            k: v for k, v in self.params.items()
            if k not in defaults or canonical(v) != canonical(defaults[k])
        }
        return canonical(
            {
                "dataset": self.dataset,
                "dataset_options": self.dataset_options,
                "mechanism": self.mechanism,
                "params": params,
            }
        )

    @cached_property
    def cell_id(self) -> str:
        return stable_hash(self.identity)[:16]

    @property
    def dataset_identity(self) -> dict:
        return {"dataset": self.dataset, "options": canonical(self.dataset_options)}


@dataclass
class ExperimentSpec:
    """A resolved experiment: its cells and everything needed to run, plot and judge them."""

    name: str
    scale: str
    cells: list[Cell]
    metrics: list[str]
    repetitions: int
    paper: str | None = None
    title: str = ""
    plots: list[dict] = field(default_factory=list)
    notes: str = ""
    keep_releases: bool = False
    info_rows: list[str] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)
    privacy: str | None = None
    dataset_labels: dict = field(default_factory=dict)  # "<dataset>|<options>" -> label
    cold: bool = False  # running times: no cache, no trial read from another experiment
    #: parameter -> the labels a plot's ``best_over`` may tune in hindsight (declared_tuning)
    tuned_in_hindsight: dict = field(default_factory=dict)

    @property
    def expected_rows(self) -> list[str]:
        """The ``metric`` values a finished trial has: its metrics and the ``info/<key>`` and
        ``diag/<key>`` rows the plots draw (e.g. qardaji2012 Fig. 2's region purity)."""
        return [*self.metrics, *self.info_rows]

    @property
    def n_trials(self) -> int:
        return len(self.cells) * self.repetitions

    @property
    def drawn_cells(self) -> list[Cell]:
        """The cells the figures draw (not the noise-free twins, which summary.md lists)."""
        return [c for c in self.cells if not c.noise_free]

    @property
    def labels(self) -> dict[str, str]:
        """cell id -> the label this spec gives it (labels are presentation)."""
        return {c.cell_id: c.label for c in self.cells}

    def to_dict(self) -> dict:
        """A JSON-serialisable form (multirun jobs hand their specs to the redraw)."""
        out = asdict(self)
        out["cells"] = [asdict(c) for c in self.cells]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> ExperimentSpec:
        data = dict(data)
        data["cells"] = [Cell(**c) for c in data["cells"]]
        return cls(**data)


#: Plot kinds an experiment may ask for (drawn by :data:`privpub.experiments.figures.PLOT_KINDS`).
PLOT_KINDS = ("lines", "table", "ccdf", "tradeoff", "curve")


def plot_metrics(plot: dict) -> list[str]:
    """The metric rows a plot draws."""
    kind = plot.get("kind", "lines")
    if kind in ("lines", "curve"):
        return [str(plot.get("metric"))]
    if kind == "table":
        used = [str(m) for m in plot.get("metrics") or []]
        if plot.get("metric"):
            used.append(str(plot["metric"]))
        if isinstance(plot.get("columns"), dict):
            used += [str(m) for m in plot["columns"].get("metric", [])]
        return used
    if kind == "tradeoff":
        return [str(plot.get("x_metric")), str(plot.get("y_metric"))]
    return [str(plot.get("select"))]


def plot_file(plot: dict) -> str:
    """The file a plot is drawn into, in its figure directory: ``<name>.png`` (a table's
    ``<name>.md``), with the default names :mod:`privpub.experiments.figures` gives."""
    kind = plot.get("kind", "lines")
    metric = str(plot.get("metric"))
    default = {
        "lines": f"{metric}_vs_{plot.get('x')}",
        "curve": f"{metric}_curve",
        "tradeoff": f"{plot.get('y_metric')}_vs_{plot.get('x_metric')}",
        "ccdf": "ccdf",
        "table": "table",
    }.get(kind, kind)
    name = str(plot.get("name") or default.replace("/", "_"))
    return f"{name}.md" if kind == "table" else f"{name}.png"


def _check_plots(plots: list[dict], metrics: list[str], keep_releases: bool, where: str):
    """Every plot names a known kind and only metrics the experiment computes."""

    def computed(metric) -> bool:  # info/ and diag/ rows come from the mechanisms' Release
        name = str(metric)
        return is_mechanism_row(name) or name in metrics or name.split("/")[0] in metrics

    from privpub.plots.series import LINESTYLES  # here, not at import: keeps start-up lean

    for plot in plots:
        if not isinstance(plot, dict):
            raise ConfigError(f"{where}: each plot must be a mapping, got {plot!r}")
        kind = plot.get("kind", "lines")
        if kind not in PLOT_KINDS:
            raise ConfigError(f"{where}: unknown plot kind {kind!r}; known: {PLOT_KINDS}")
        if kind == "lines":
            missing = [k for k in ("x", "metric") if k not in plot]
        elif kind == "curve":
            missing = [k for k in ("metric",) if k not in plot]
        elif kind == "table":
            missing = [k for k in ("columns",) if k not in plot]
        elif kind == "tradeoff":
            missing = [k for k in ("x_metric", "y_metric", "along") if k not in plot]
        else:
            missing = [k for k in ("select",) if k not in plot]
            if not keep_releases:
                raise ConfigError(f"{where}: a ccdf plot needs keep_releases: true")
        if missing:
            raise ConfigError(f"{where}: a {kind} plot needs {', '.join(missing)}: {plot}")
        styles = plot.get("linestyles") or {}
        bad = {k: v for k, v in styles.items() if v not in LINESTYLES} if isinstance(
            styles, dict) else styles
        if bad:
            raise ConfigError(f"{where}: linestyles maps a series name to one of "
                              f"{list(LINESTYLES)}; got {bad}")
        if plot.get("published") is not None:  # a paper's plotted means: the file must exist
            from privpub.plots.published import published_means

            published_means(str(plot["published"]))
        if plot.get("error", "std") not in ("std", "sem", "range", "ci95", None):
            raise ConfigError(f"{where}: error must be std, sem, range, ci95 or null: {plot}")
        unknown = [m for m in plot_metrics(plot) if m != "None" and not computed(m)]
        if unknown:
            raise ConfigError(
                f"{where}: a plot uses metric(s) {unknown} that the experiment does not "
                f"compute (metrics: {', '.join(metrics)})"
            )


def _auto_plots(plots: list[dict], metrics: list[str], cells: list[Cell]) -> list[dict]:
    """A figure for every computed metric that no plot draws (every metric is shown)."""
    drawn = {m for p in plots for m in plot_metrics(p)}
    missing = [m for m in metrics if m not in drawn]
    if not missing:
        return plots
    values: dict[str, set] = {}
    for cell in cells:
        for key, value in cell.params.items():
            values.setdefault(key, set()).add(repr(value))
    swept = [k for k, v in values.items() if len(v) > 1]
    x = next((a for a in _AXES if a in swept), swept[0] if swept else None)
    extra = []
    for metric in missing:
        if x is not None:
            extra.append({"x": x, "metric": metric, "auto": True})
        else:
            labels = sorted({c.label for c in cells})
            extra.append({"kind": "table", "name": f"{metric}_table", "metrics": [metric],
                          "rows": ["dataset"], "columns": {"label": labels}, "auto": True})
    return [*plots, *extra]


def refresh_auto_plots(spec: ExperimentSpec) -> list[dict]:
    """``spec``'s plots with the automatic ones made again from its cells: a sweep's union
    (``-m mechanism.epsilon=0.5,2,8``) varies what none of its jobs varied, and its metric
    without a plot is then drawn against it instead of one mean per dataset."""
    own = [p for p in spec.plots if not p.get("auto")]
    return _auto_plots(own, spec.metrics, spec.cells)


def _check_param(name: str, value, where: str, privacy: str = ""):
    check = _PARAM_CHECKS.get(name)
    if name == "k":
        anonymity = privacy in ("k-anonymity", "smooth-k-anonymity")
        check = check_k if anonymity else (lambda v: check_positive_int(v, "k"))
    if check is not None and value is not None:
        try:
            check(value)
        except PrivpubError as exc:
            raise ConfigError(f"{where}: {exc}") from None


def _main_privacy(entries: list[dict]) -> str | None:
    """The privacy notion most of an experiment's own (non-reference) mechanisms claim."""
    notions = [get_mechanism(e["name"]) for e in entries]
    counted = Counter(m.privacy for m in notions if m.role != "reference" and m.privacy != "none")
    return counted.most_common(1)[0][0] if counted else None


def resolve_experiment(
    experiment: dict,
    *,
    scale: str = "paper",
    dataset: dict | None = None,
    mechanism: dict | None = None,
    overrides: dict | None = None,
    add_mechanisms: list | None = None,
    file_mechanisms: list | None = None,
) -> ExperimentSpec:
    """Expand an experiment config into validated cells.

    Parameters
    ----------
    experiment : dict
        The ``experiment`` config node (plain dict) as its file states it.
    scale : str
        ``smoke``, ``small`` or ``paper``; ``experiment["scales"][scale]`` sets defaults over
        the base (which is the paper's setting).
    dataset : dict, optional
        Command-line dataset selection ``{"name": ..., <option>: ...}``; ``name`` None means
        the experiment's own datasets (with the given options set on each that has them).
    mechanism : dict, optional
        Command-line mechanism selection ``{"name": ..., <param>: value}``; a None name keeps
        all of the experiment's mechanisms, None values keep the experiment's grid.
    overrides : dict, optional
        Command-line ``experiment.<dotted path>`` values (:data:`DELETE` deletes), applied
        after the scale block: the command line always wins.
    add_mechanisms : list, optional
        Mechanisms (names or entries) added to the experiment's own.
    file_mechanisms : list, optional
        The mechanism list as the experiment file states it, when ``experiment`` already
        carries the command line's ``mechanisms.<i>.<key>`` edits: the scale block's patches
        name entries by their file labels. A replaced list (``mechanisms``) is taken as
        given, without the scale block's patches; an entry the scale block drops runs when
        the command line edits it.
    """
    layers = layer_experiment(experiment, scale=scale, overrides=overrides,
                              file_mechanisms=file_mechanisms)
    exp, name = layers.experiment, str(experiment["name"])
    where = f"experiment {name!r}"
    datasets = _select_datasets(exp, dataset, where)
    entries, fixed, n_own = _select_mechanisms(exp, mechanism, add_mechanisms, where)
    metric_names, plots, info_rows = _metrics_and_plots(exp, where)
    metric_infos = [get_metric(m) for m in metric_names]
    repetitions = _repetitions(exp, where)
    grid = _grid(exp, where)
    _check_grid_keys(grid, layers.forced, entries, layers.own, where)
    sweep = _Sweep(grid, layers.forced, fixed, metric_infos, where)
    cells, dataset_labels = [], {}
    for i, entry in enumerate(entries):
        cells += _entry_cells(entry, datasets, sweep, dataset_labels, added=i >= n_own)
    _check_fixed_taken(fixed, entries)
    seen = set()
    unique = [c for c in cells if not (c.cell_id in seen or seen.add(c.cell_id))]
    if exp.get("noise_free", True):
        unique += noise_free_twins(unique)
    keep_releases = bool(exp.get("keep_releases", False))
    _check_plots(plots, metric_names, keep_releases, where)
    plots = _auto_plots(plots, metric_names, unique)

    from privpub.experiments.claims import parse_claims

    claims = parse_claims(exp.get("claims") or [], where=where, plots=plots)
    tuned = declared_tuning(plots, entries[:n_own], grid, datasets)
    return ExperimentSpec(
        name=name, scale=scale, cells=unique, metrics=metric_names, repetitions=repetitions,
        paper=exp.get("paper"), title=str(exp.get("title") or ""), plots=plots,
        notes=str(exp.get("notes") or ""), keep_releases=keep_releases, info_rows=info_rows,
        claims=claims, privacy=exp.get("privacy") or _main_privacy(layers.own or entries),
        dataset_labels=dataset_labels, cold=bool(exp.get("cold", False)),
        tuned_in_hindsight=tuned,
    )


def declared_tuning(plots: list[dict], own: list[dict], grid: dict,
                    datasets: list[dict]) -> dict[str, list[str]]:
    """``{parameter: [labels]}``: for each parameter a plot's ``best_over`` names, the
    labels of the experiment's own mechanism entries ``own`` that the experiment sweeps over
    it (the entry's grid, the experiment's ``grid`` or a dataset's grid). Only these are
    drawn at their best value in hindsight; an added mechanism, or one whose parameter only
    the command line sweeps (``-m mechanism.theta=4,16``), is a series per value
    (docs/design.md, "Tuned in hindsight")."""
    overs = {str(p["best_over"]) for p in plots if isinstance(p, dict) and p.get("best_over")}
    tuned = {}
    for over in sorted(overs):
        labels = []
        for entry in own:
            info = get_mechanism(entry["name"])
            swept = (over in (entry.get("grid") or {}) or over in grid
                     or any(over in (d.get("grid") or {}) for d in datasets))
            if over in info.parameters and swept:
                labels.append(str(entry.get("label") or info.name))
        tuned[over] = sorted(set(labels))
    return tuned


def _repetitions(exp: dict, where: str) -> int:
    try:
        return check_positive_int(exp.get("repetitions", 1), "repetitions")
    except PrivpubError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _grid(exp: dict, where: str) -> dict:
    grid = exp.get("grid") or {}
    if not isinstance(grid, dict):
        raise ConfigError(f"{where}: grid must map parameters to lists of values, got {grid!r}")
    return dict(grid)


def _select_datasets(exp: dict, dataset: dict | None, where: str) -> list[dict]:
    """The experiment's dataset entries after the command line's ``dataset=`` selection."""
    datasets = [as_entry(d, "dataset") for d in as_list(exp.get("datasets"))]
    dataset_options = {k: v for k, v in (dataset or {}).items() if k != "name" and v is not None}
    if dataset and dataset.get("name"):  # keeps the experiment's entry (e.g. its grid), if any
        same = next((d for d in datasets if d["name"] == dataset["name"]), {})
        datasets = [{**same, "name": dataset["name"], **dataset_options}]
    elif dataset_options:
        datasets = _set_dataset_options(datasets, dataset_options, where)
    if not datasets:
        raise ConfigError(f"{where} has no datasets")
    return datasets


def _select_mechanisms(exp: dict, mechanism: dict | None, add_mechanisms, where: str):
    """The mechanism entries after the command line's ``mechanism=`` selection and
    ``add_mechanisms``, the parameters ``mechanism.<param>=v`` fixes and how many entries
    come first from the experiment's own list (the rest are added)."""
    entries = [as_entry(m, "mechanism") for m in as_list(exp.get("mechanisms"))]
    for entry in entries:
        bad = set(entry) - _ENTRY_KEYS
        if bad:
            raise ConfigError(f"{where}: mechanism entry {entry['name']!r} has unknown key(s) "
                              f"{', '.join(sorted(bad))}; keys: {', '.join(sorted(_ENTRY_KEYS))}")
    fixed = {}
    if mechanism:
        chosen = mechanism.get("name")
        fixed = {k: v for k, v in mechanism.items() if k != "name" and v is not None}
        if chosen:
            entries = [e for e in entries if e["name"] == chosen]
    n_own = len(entries)
    if mechanism and mechanism.get("name") and not entries:
        entries = [{"name": mechanism["name"]}]
    entries += [as_entry(m, "mechanism") for m in as_list(add_mechanisms)]
    if not entries:
        raise ConfigError(f"{where} has no mechanisms")
    return entries, fixed, n_own


def _metrics_and_plots(exp: dict, where: str) -> tuple[list[str], list, list[str]]:
    """The metric names, the plots and the ``info/<key>`` and ``diag/<key>`` rows the plots
    draw."""
    metric_names = [str(m) for m in as_list(exp.get("metrics"))]
    plots = [dict(p) if isinstance(p, dict) else p for p in as_list(exp.get("plots"))]
    info_rows = sorted(
        {
            str(p[k])
            for p in plots
            if isinstance(p, dict)
            for k in ("metric", "select")
            if is_mechanism_row(str(p.get(k, "")))
        }
    )
    if not metric_names and not info_rows:
        raise ConfigError(f"{where} has no metrics (and plots no info/ or diag/ rows)")
    return metric_names, plots, info_rows


@dataclass(frozen=True)
class _Sweep:
    """What every mechanism entry is expanded against."""

    grid: dict  # the experiment's grid (after its scale block and the command line)
    forced: set  # grid keys the command line sets: they beat entry and dataset grids
    fixed: dict  # mechanism.<param>=v of the command line
    metrics: list  # the MetricInfo of every metric
    where: str


def _entry_cells(entry: dict, datasets: list[dict], sweep: _Sweep, labels: dict,
                 added: bool = False) -> list[Cell]:
    """The cells of one mechanism entry on every dataset (``labels`` collects the datasets'
    presentation labels); ``added``: an entry the experiment file does not list."""
    info = get_mechanism(entry["name"])
    label = str(entry.get("label") or info.name)
    params, grid = _entry_grid(entry, info, sweep)
    for metric in sweep.metrics:
        if info.output_kind not in metric.kinds:
            raise ConfigError(
                f"metric {metric.name!r} does not fit mechanism {info.name!r}: the metric "
                f"takes {', '.join(metric.kinds)} releases, the mechanism outputs "
                f"{info.output_kind}"
            )
    from privpub.data import get_dataset_spec  # the data layer imports heavy loaders lazily

    cells = []
    for ds in datasets:
        spec = get_dataset_spec(ds["name"])
        options = _dataset_options(info, ds, spec)
        if ds.get("label") or spec.user_file:  # presentation: "UNC28 (stand-in for Russia)"
            labels[f"{spec.name}|{canonical_json(options)}"] = str(
                ds.get("label") or Path(options["path"]).name)
        ds_grid = dict(grid)
        for key, values in (ds.get("grid") or {}).items():
            # an added mechanism follows a dataset's grid only where it sweeps the key: the
            # grid never silently sweeps (and best_over tunes) what it was not asked to
            follows = key in grid if added else key in info.parameters
            if follows and key not in sweep.fixed and key not in sweep.forced:
                ds_grid[key] = as_list(values)
        keys = sorted(ds_grid)
        for values in itertools.product(*(ds_grid[k] for k in keys)):
            point = {**params, **dict(zip(keys, values, strict=True))}
            for key, value in point.items():
                _check_param(key, value, f"mechanism {info.name!r}", info.privacy)
            try:
                cell = Cell(spec.name, canonical(options), info.name, label, canonical(point),
                            defaults=_defaults_of(info, point), seeds_of=info.seeds_of)
            except TypeError as exc:
                raise ConfigError(f"{sweep.where}: {exc}") from None
            cells.append(cell)
    return cells


def _entry_grid(entry: dict, info, sweep: _Sweep) -> tuple[dict, dict]:
    """An entry's fixed parameters and the values it sweeps: the experiment's grid for the
    parameters the mechanism takes, then the entry's own grid, then the command line."""
    accepted = info.parameters
    params = dict(entry.get("params") or {})
    own_grid = dict(entry.get("grid") or {})
    for key in [*params, *own_grid]:
        if key not in accepted:
            raise ConfigError(
                f"mechanism {info.name!r} has no parameter {key!r}; "
                f"its parameters: {', '.join(accepted) or '(none)'}"
            )
    grid = {k: as_list(v) for k, v in sweep.grid.items() if k in accepted}
    grid.update({k: as_list(v) for k, v in own_grid.items() if k not in sweep.forced})
    for key in sweep.forced & set(grid):
        params.pop(key, None)
    for key in sweep.fixed:  # the command line wins over an entry's own grid
        if key in accepted:
            grid[key] = [sweep.fixed[key]]
            params.pop(key, None)
    for key in [*params, *grid]:
        if key in RESERVED_COLUMNS:
            raise ConfigError(f"parameter name {key!r} is reserved for a result column")
        if key in grid and not grid[key]:
            raise ConfigError(f"{sweep.where}: the grid of {key!r} is empty")
    required = [k for k, d in accepted.items() if d is _EMPTY and k not in params and k not in grid]
    if required:
        raise ConfigError(
            f"mechanism {info.name!r} needs {', '.join(required)}: give it in the "
            f"experiment's grid or on the command line (e.g. mechanism.{required[0]}=1.0)"
        )
    return params, grid


def _dataset_options(info, ds: dict, spec) -> dict:
    """A dataset entry's options, checked against the mechanism and the dataset; options at
    their defaults are left out, so that ``dataset=<name>`` on the command line (whose YAML
    lists every default) names the same cells."""
    if spec.kind != info.input_kind:
        raise ConfigError(
            f"mechanism {info.name!r} takes {info.input_kind} input but dataset "
            f"{spec.name!r} is a {spec.kind}"
        )
    if not has_view(spec.kind, info.output_kind):
        raise ConfigError(
            f"metrics on {info.output_kind} releases of {info.name!r} cannot be "
            f"computed for dataset {spec.name!r} ({spec.kind})"
        )
    options = {k: v for k, v in ds.items() if k not in ("name", "label", "grid")}
    unknown = set(options) - set(spec.options)
    if unknown:
        raise ConfigError(
            f"dataset {spec.name!r} has no option {', '.join(sorted(unknown))}; "
            f"its options: {', '.join(spec.options) or '(none)'}"
        )
    from privpub.data.registry import identify_options

    options = identify_options(spec, options)  # a user's file: its path and sha256
    return {k: v for k, v in options.items() if canonical(v) != canonical(spec.defaults[k])}


def _check_fixed_taken(fixed: dict, entries: list[dict]) -> None:
    """A ``mechanism.<param>=v`` that no selected mechanism takes is an error."""
    unused = set(fixed) - {k for e in entries for k in get_mechanism(e["name"]).parameters}
    if unused:
        raise ConfigError(
            f"no selected mechanism takes {', '.join(sorted(unused))} "
            f"(mechanisms: {', '.join(dict.fromkeys(e['name'] for e in entries))})"
        )


def noise_free_twins(cells: list[Cell]) -> list[Cell]:
    """One noise-free twin per DP series, at its largest epsilon: the error that remains
    without privacy, shown beside the noisy error so a reader sees whether a gap is noise
    or structure. A series is a dataset, mechanism, label and every parameter
    but epsilon."""
    best: dict[str, Cell] = {}
    for cell in cells:
        epsilon = cell.params.get("epsilon")
        if epsilon is None or cell.noise_free or not get_mechanism(cell.mechanism).is_dp:
            continue
        rest = {k: v for k, v in cell.params.items() if k != "epsilon"}
        key = stable_hash([cell.dataset, cell.dataset_options, cell.mechanism, cell.label, rest])
        if key not in best or epsilon > best[key].params["epsilon"]:
            best[key] = cell
    return [
        Cell(c.dataset, c.dataset_options, c.mechanism, c.label, c.params, noise_free=True,
             defaults=c.defaults, seeds_of=c.seeds_of)
        for c in best.values()
    ]


def _defaults_of(info, point: dict) -> dict | None:
    """The mechanism's default values of the parameters a cell sets (JSON-able only)."""
    out = {}
    for key in point:
        default = info.parameters.get(key, _EMPTY)
        if default is _EMPTY:
            continue
        try:
            out[key] = canonical(default)
        except TypeError:  # not a config value: never equal to one
            continue
    return out or None


def _set_dataset_options(datasets: list[dict], options: dict, where: str) -> list[dict]:
    """``dataset.<option>=v`` without a dataset name: set it on every dataset that has it."""
    from privpub.data import get_dataset_spec

    out, used = [], set()
    for ds in datasets:
        takes = {k: v for k, v in options.items() if k in get_dataset_spec(ds["name"]).options}
        used |= set(takes)
        out.append({**ds, **takes})
    unused = set(options) - used
    if unused:
        raise ConfigError(
            f"{where}: no dataset of the experiment has option {', '.join(sorted(unused))} "
            f"(datasets: {', '.join(d['name'] for d in datasets)}); pick one with dataset=<name>"
        )
    return out


def _check_grid_keys(grid: dict, forced: set, entries: list, own: list, where: str) -> None:
    """A grid key that no mechanism takes is a typo or a leftover: an error.

    A key from the command line must be taken by a selected mechanism; a key from the file
    by one of the experiment's own mechanisms (a selection may leave it unused).
    """
    taken = {k for e in entries for k in get_mechanism(e["name"]).parameters}
    own_taken = {k for e in own for k in get_mechanism(e["name"]).parameters} | taken
    for key in grid:
        if key in (taken if key in forced else own_taken):
            continue
        names = ", ".join(dict.fromkeys(e["name"] for e in entries))
        raise ConfigError(
            f"{where}: no {'selected ' if key in forced else ''}mechanism takes grid "
            f"parameter {key!r} (mechanisms: {names})"
        )
