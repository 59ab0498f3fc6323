"""Experiment specs: from a Hydra config to a validated list of cells.

An experiment (``conf/experiment/<paper>_<figure>.yaml``) declares datasets, mechanisms,
a parameter grid, metrics, repetitions, plots and per-scale overrides::

    name: epasto2022_fig3c
    paper: epasto2022
    title: Jaccard similarity vs epsilon, edge-DP randomized response (Fig. 3c)
    datasets: [sbm_epasto, adult_binary]          # names, or {name, <option>: ..., grid}
    mechanisms:                                    # names, or {name, label, params, grid}
      - randomized_response_edge
    grid: {epsilon: [0.5, 1, 2, 4, 8]}             # swept for every mechanism taking it
    metrics: [jaccard]
    repetitions: 10
    plots: [{x: epsilon, metric: jaccard}]
    keep_releases: false                           # true: store each released vector too
    scales:                                        # merged over the above per scale
      smoke: {datasets: [sbm_small], grid: {epsilon: [1, 4]}, repetitions: 2}

A *cell* is one (dataset, mechanism, parameter values) combination; the runner runs each
cell ``repetitions`` times. Command-line selections narrow or extend the grid:
``dataset=<name>`` runs on that dataset, ``mechanism=<name>`` runs only that mechanism,
``mechanism.<param>=<value>`` fixes a parameter for every selected mechanism that takes it.
Everything is checked here, before anything runs: unknown names, parameters a mechanism
does not take, a dataset kind the mechanism does not accept, a metric that does not fit the
mechanism's output, bad epsilon / k / depth.
"""

from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass, field
from functools import cached_property

from experiments.seeding import canonical, stable_hash
from privpub.errors import ConfigError, PrivpubError
from privpub.registry import get_mechanism, get_metric, has_view
from privpub.validation import check_depth, check_epsilon, check_k, check_positive_int

__all__ = ["Cell", "ExperimentSpec", "resolve_experiment", "RESERVED_COLUMNS"]

#: Result-table columns that a parameter may not be named after.
RESERVED_COLUMNS = frozenset(
    "experiment scale cell rep seed dataset dataset_options mechanism label params metric value "
    "seconds peak_mb privacy caveat epsilon_spent ledger verified status error code_version "
    "written_at series role paper".split()
)

_EMPTY = inspect.Parameter.empty

#: Checks applied to well-known parameters wherever they appear.
_PARAM_CHECKS = {"epsilon": check_epsilon, "k": check_k, "depth": check_depth}


@dataclass(frozen=True)
class Cell:
    """One grid point: a dataset (with options), a mechanism and its parameter values."""

    dataset: str
    dataset_options: dict
    mechanism: str
    label: str
    params: dict

    @cached_property
    def identity(self) -> dict:
        """What the cell computes; its hash is the cell id and keys the seeds."""
        return canonical(
            {
                "dataset": self.dataset,
                "dataset_options": self.dataset_options,
                "mechanism": self.mechanism,
                "params": self.params,
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
    """A resolved experiment: its cells and everything needed to run and plot them."""

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

    @property
    def expected_rows(self) -> list[str]:
        """The ``metric`` values a finished task has: its metrics and the ``info/<key>``
        rows the plots draw (e.g. qardaji2012 Fig. 2's region purity)."""
        return [*self.metrics, *self.info_rows]


def _as_entry(item, what: str) -> dict:
    if isinstance(item, str):
        return {"name": item}
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        return dict(item)
    raise ConfigError(f"each {what} must be a name or a mapping with a 'name', got {item!r}")


def _as_list(value, what: str) -> list:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key == "grid":
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


#: Plot kinds an experiment may ask for (drawn by :data:`experiments.figures.PLOT_KINDS`).
PLOT_KINDS = ("lines", "table", "ccdf")


def _check_plots(plots: list[dict], metrics: list[str], keep_releases: bool, where: str):
    """Every plot names a known kind and only metrics the experiment computes."""

    def computed(metric) -> bool:  # info/<key> rows come from the mechanisms' Release.info
        name = str(metric)
        return name.startswith("info/") or name in metrics or name.split("/")[0] in metrics

    for plot in plots:
        if not isinstance(plot, dict):
            raise ConfigError(f"{where}: each plot must be a mapping, got {plot!r}")
        kind = plot.get("kind", "lines")
        if kind not in PLOT_KINDS:
            raise ConfigError(f"{where}: unknown plot kind {kind!r}; known: {PLOT_KINDS}")
        if kind == "lines":
            missing = [k for k in ("x", "metric") if k not in plot]
            used = [plot.get("metric")]
        elif kind == "table":
            missing = [k for k in ("columns",) if k not in plot]
            used = list(plot.get("metrics") or [])
            if isinstance(plot.get("columns"), dict):
                used += list(plot["columns"].get("metric", []))
        else:
            missing = [k for k in ("select",) if k not in plot]
            used = [plot.get("select")]
            if not keep_releases:
                raise ConfigError(f"{where}: a ccdf plot needs keep_releases: true")
        if missing:
            raise ConfigError(f"{where}: a {kind} plot needs {', '.join(missing)}: {plot}")
        unknown = [m for m in used if m is not None and not computed(m)]
        if unknown:
            raise ConfigError(
                f"{where}: a plot uses metric(s) {unknown} that the experiment does not "
                f"compute (metrics: {', '.join(metrics)})"
            )


def _check_param(name: str, value, where: str):
    check = _PARAM_CHECKS.get(name)
    if check is not None and value is not None:
        try:
            check(value)
        except PrivpubError as exc:
            raise ConfigError(f"{where}: {exc}") from None


def resolve_experiment(
    experiment: dict,
    *,
    scale: str = "paper",
    dataset: dict | None = None,
    mechanism: dict | None = None,
) -> ExperimentSpec:
    """Expand an experiment config into validated cells.

    Parameters
    ----------
    experiment : dict
        The ``experiment`` config node (plain dict).
    scale : str
        ``smoke``, ``small`` or ``paper``; ``experiment["scales"][scale]`` is merged over the
        base (which is the paper's setting).
    dataset : dict, optional
        Command-line dataset selection ``{"name": ..., <option>: ...}``; ``name`` None means
        the experiment's own datasets.
    mechanism : dict, optional
        Command-line mechanism selection ``{"name": ..., <param>: value}``; a None name keeps
        all of the experiment's mechanisms, None values keep the experiment's grid.
    """
    if not isinstance(experiment, dict) or not experiment.get("name"):
        raise ConfigError("the experiment config needs a 'name'")
    exp = dict(experiment)
    scales = exp.pop("scales", None) or {}
    if scale not in ("smoke", "small", "paper"):
        raise ConfigError(f"unknown scale {scale!r}; known scales: smoke, small, paper")
    exp = _merge(exp, scales.get(scale) or {})
    name = exp["name"]

    # ---- datasets
    datasets = [_as_entry(d, "dataset") for d in _as_list(exp.get("datasets"), "datasets")]
    if dataset and dataset.get("name"):  # keeps the experiment's entry (e.g. its grid), if any
        same = next((d for d in datasets if d["name"] == dataset["name"]), {})
        datasets = [{**same, **{k: v for k, v in dataset.items() if v is not None}}]
    if not datasets:
        raise ConfigError(f"experiment {name!r} has no datasets")

    # ---- mechanisms
    entries = [_as_entry(m, "mechanism") for m in _as_list(exp.get("mechanisms"), "mechanisms")]
    fixed = {}
    if mechanism:
        chosen = mechanism.get("name")
        fixed = {k: v for k, v in mechanism.items() if k != "name" and v is not None}
        if chosen:
            entries = [e for e in entries if e["name"] == chosen] or [{"name": chosen}]
    if not entries:
        raise ConfigError(f"experiment {name!r} has no mechanisms")

    # ---- metrics
    metric_names = [str(m) for m in _as_list(exp.get("metrics"), "metrics")]
    plots = [dict(p) for p in _as_list(exp.get("plots"), "plots")]
    info_rows = sorted(
        {
            str(p[k])
            for p in plots
            if isinstance(p, dict)
            for k in ("metric", "select")
            if str(p.get(k, "")).startswith("info/")
        }
    )
    if not metric_names and not info_rows:
        raise ConfigError(f"experiment {name!r} has no metrics (and plots no info/ rows)")
    metric_infos = [get_metric(m) for m in metric_names]

    repetitions = exp.get("repetitions", 1)
    try:
        repetitions = check_positive_int(repetitions, "repetitions")
    except PrivpubError as exc:
        raise ConfigError(f"experiment {name!r}: {exc}") from None

    grid = dict(exp.get("grid") or {})

    from privpub.data import get_dataset_spec  # the data layer imports heavy loaders lazily

    cells: list[Cell] = []
    for entry in entries:
        info = get_mechanism(entry["name"])
        label = str(entry.get("label") or info.name)
        accepted = info.parameters
        params = dict(entry.get("params") or {})
        own_grid = dict(entry.get("grid") or {})
        for key in [*params, *own_grid]:
            if key not in accepted:
                raise ConfigError(
                    f"mechanism {info.name!r} has no parameter {key!r}; "
                    f"its parameters: {', '.join(accepted) or '(none)'}"
                )
        sweep = {k: _as_list(v, k) for k, v in grid.items() if k in accepted}
        sweep.update({k: _as_list(v, k) for k, v in own_grid.items()})
        for key in fixed:  # the command line wins over an entry's own grid
            if key in accepted:
                sweep[key] = [fixed[key]]
                params.pop(key, None)
        for key in [*params, *sweep]:
            if key in RESERVED_COLUMNS:
                raise ConfigError(f"parameter name {key!r} is reserved for a result column")
        required = [
            k for k, d in accepted.items() if d is _EMPTY and k not in params and k not in sweep
        ]
        if required:
            raise ConfigError(
                f"mechanism {info.name!r} needs {', '.join(required)}: give it in the "
                f"experiment's grid or on the command line (e.g. mechanism.{required[0]}=1.0)"
            )
        for metric in metric_infos:
            if info.output_kind not in metric.kinds:
                raise ConfigError(
                    f"metric {metric.name!r} does not fit mechanism {info.name!r}: the metric "
                    f"takes {', '.join(metric.kinds)} releases, the mechanism outputs "
                    f"{info.output_kind}"
                )
        for ds in datasets:
            spec = get_dataset_spec(ds["name"])
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
            # options at their defaults are left out, so that `dataset=<name>` on the
            # command line (whose YAML lists every default) names the same cells
            options = {
                k: v for k, v in options.items() if canonical(v) != canonical(spec.defaults[k])
            }
            ds_sweep = dict(sweep)
            for key, values in (ds.get("grid") or {}).items():
                if key in accepted and key not in fixed:
                    ds_sweep[key] = _as_list(values, key)
            keys = sorted(ds_sweep)
            for values in itertools.product(*(ds_sweep[k] for k in keys)):
                point = {**params, **dict(zip(keys, values, strict=True))}
                for key, value in point.items():
                    _check_param(key, value, f"mechanism {info.name!r}")
                cells.append(
                    Cell(spec.name, canonical(options), info.name, label, canonical(point))
                )

    unused = set(fixed) - {k for e in entries for k in get_mechanism(e["name"]).parameters}
    if unused:
        raise ConfigError(
            f"no selected mechanism takes {', '.join(sorted(unused))} "
            f"(mechanisms: {', '.join(e['name'] for e in entries)})"
        )
    seen = set()
    unique = [c for c in cells if not (c.cell_id in seen or seen.add(c.cell_id))]
    keep_releases = bool(exp.get("keep_releases", False))
    _check_plots(plots, metric_names, keep_releases, f"experiment {name!r}")
    return ExperimentSpec(
        name=name,
        scale=scale,
        cells=unique,
        metrics=metric_names,
        repetitions=repetitions,
        paper=exp.get("paper"),
        title=str(exp.get("title") or ""),
        plots=plots,
        notes=str(exp.get("notes") or ""),
        keep_releases=keep_releases,
        info_rows=info_rows,
    )
