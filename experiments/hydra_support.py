"""Hydra integration: a multirun is checked whole before it starts, and ends with one
drawing, one failure list and one exit code.

When the sweep starts, :func:`preflight` resolves every job as its run will and checks all
their data files at once: one job that cannot run (a bad value, an unknown name, a missing
file, ...) stops the sweep before any trial runs, with one message naming each error once
and the jobs it stops (exit 2; :mod:`privpub.experiments.preflight`).

Multirun jobs may run in parallel (joblib / SLURM launchers), each writing into the same
result store. A job does not draw and does not raise: it records its outcome (its resolved
spec, failures, or a one-line config/data error) in ``privpub.json`` in its Hydra job
directory (:mod:`privpub.experiments.cli`). When the sweep ends, :class:`PrivpubCallback`

- draws, per experiment and scale, the union of the jobs' grids and seeds (the experiment's
  own figures when every job ran the experiment's own grid at seed 0, else
  ``variants/<slug>/`` named after the sweep's overrides; each seed a series);
- lists every failure once;
- exits with the largest code of the jobs (2 config/data error, 1 failed trials, 0 otherwise).

With the basic launcher (jobs one after another in this process) one progress bar covers
the whole sweep: its total is every job's trial count, resolved when the sweep starts.

Before Hydra composes, :func:`register_configs` gives ``mechanism=<name>`` a config for a
mechanism that has no ``conf/mechanism/<name>.yaml`` (every built-in one, a plug-in), and
``dataset=<name>`` one for an installed plug-in's dataset: docs/design.md ("Plug-ins").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

__all__ = ["PrivpubCallback", "sweep_dir", "sweep_bar", "sweep_jobs", "check_sweep",
           "preflight", "collect_outcomes", "union_specs", "register_configs", "mechanism_node",
           "file_datasets"]

_CONF = Path(__file__).resolve().parents[1] / "conf"

_SWEEP_DIR: Path | None = None
_SWEEP_BAR = None


def sweep_dir() -> Path | None:
    """The directory of the multirun in progress in this process (None if none)."""
    return _SWEEP_DIR


def sweep_bar():
    """The progress bar of the whole multirun in this process, if there is one."""
    return _SWEEP_BAR


def _choices(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(the plug-ins, the mechanism names, the dataset names) the command line ``argv``
    names."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ChoiceSweep, Glob

    keys = ("plugins", "mechanism", "dataset")
    wanted = [a for a in argv if a.lstrip("+~").split("=", 1)[0] in keys]
    found: dict[str, list[str]] = {key: [] for key in keys}
    try:
        parsed = OverridesParser.create().parse_overrides(wanted)
    except Exception:  # Hydra reports a malformed override itself, in its own words
        return found["plugins"], found["mechanism"], found["dataset"]
    for override in parsed:
        value = override.value()
        if override.is_delete() or isinstance(value, Glob):  # a glob matches stored options
            continue
        values = list(value.list) if isinstance(value, ChoiceSweep) else [value]
        for value in values:
            if override.key_or_group == "plugins":
                found["plugins"] += [str(v) for v in (value if isinstance(value, list)
                                                      else [value])]
            elif isinstance(value, str):
                found[override.key_or_group].append(value)
    return found["plugins"], found["mechanism"], found["dataset"]


def mechanism_node(name: str, parameters) -> dict:
    """The config ``mechanism=<name>`` composes to without a YAML: its name and every
    keyword parameter set to null (the experiment's grid, else the function's default), so
    that ``mechanism.<param>=v`` sets any of them."""
    return {"name": name, **dict.fromkeys(parameters)}


def _quoted(value: str) -> str:
    """``value`` as a Hydra override value (quoted unless it is a plain path)."""
    import re

    if re.fullmatch(r"[\w./+@%-]+", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def file_datasets(argv: list[str]) -> list[str]:
    """``argv`` with ``dataset=<edge-list file>`` as ``dataset=edge_list
    dataset.path=<absolute path>`` (Hydra reads ``dataset=`` as a config group): the value is
    a file if :func:`privpub.data.registry.is_file_name` says so (an existing file, a path,
    a name ending ``.txt``, ``.tsv``, ``.csv``, ``.edges``, ``.el``, optionally ``.gz``).
    A sweep ``dataset=a.txt,b.txt.gz`` sweeps ``dataset.path``. Raises
    :class:`~privpub.errors.ConfigError` for a sweep mixing files and dataset names."""
    import os

    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ChoiceSweep

    from privpub.data.registry import is_file_name
    from privpub.errors import ConfigError

    out = []
    for arg in argv:
        if arg.split("=", 1)[0] != "dataset" or "=" not in arg:
            out.append(arg)
            continue
        try:
            override = OverridesParser.create().parse_overrides([arg])[0]
            value = override.value()
        except Exception:  # Hydra reports a malformed override itself, in its own words
            out.append(arg)
            continue
        values = list(value.list) if isinstance(value, ChoiceSweep) else [value]
        files = [isinstance(v, str) and is_file_name(v) for v in values]
        if not any(files):
            out.append(arg)
            continue
        if not all(files):
            raise ConfigError(f"{arg}: a sweep over dataset= mixes files and dataset names; "
                              "sweep the files (dataset=a.txt,b.txt) and the datasets in "
                              "separate runs")
        paths = [_quoted(os.path.abspath(os.path.expanduser(v))) for v in values]
        out += ["dataset=edge_list", "dataset.path=" + ",".join(paths)]
    return out


def register_configs(argv: list[str]) -> None:
    """Give ``mechanism=<name>`` and ``dataset=<name>`` a config where ``conf/`` has no
    YAML for the name (Hydra's config store, which its launchers hand to their jobs).

    Every built-in mechanism gets :func:`mechanism_node` from the registry's index (no
    mechanism module is imported). The plug-ins ``argv`` names (``plugins=[mylab.mech]`` or
    ``plugins=[/path/my_mech.py]``) are imported; each other ``mechanism=`` name (a plug-in,
    installed or named) gets the ``<name>.yaml`` beside its module if there is one, else
    :func:`mechanism_node`; each ``dataset=`` name without ``conf/dataset/<name>.yaml`` (an
    installed plug-in's) its name and default options. Raises
    :class:`~privpub.errors.ConfigError` (an unknown name lists the close ones).
    """
    import inspect

    from hydra.core.config_store import ConfigStore

    from privpub.registry import built_in_parameters, get_mechanism, import_plugins

    store = ConfigStore.instance()
    plugins, mechanisms, datasets = _choices(argv)
    import_plugins(plugins)
    built_in = built_in_parameters()
    for name, parameters in built_in.items():
        if not (_CONF / "mechanism" / f"{name}.yaml").is_file():
            store.store(group="mechanism", name=name, node=mechanism_node(name, parameters))
    for name in dict.fromkeys(mechanisms):
        if name == "all" or name in built_in or (_CONF / "mechanism" / f"{name}.yaml").is_file():
            continue
        info = get_mechanism(name)
        node = mechanism_node(name, info.parameters)
        beside = Path(inspect.getsourcefile(info.func) or "").with_name(f"{name}.yaml")
        if beside.is_file():
            node = {**node, **(OmegaConf.to_container(OmegaConf.load(beside)) or {})}
        store.store(group="mechanism", name=name, node=node)
    for name in dict.fromkeys(datasets):
        if name == "all" or (_CONF / "dataset" / f"{name}.yaml").is_file():
            continue
        from privpub.data import get_dataset_spec

        store.store(group="dataset", name=name,
                    node={"name": name, **get_dataset_spec(name).defaults})


def sweep_jobs(overrides: list[str]) -> list[list[str]]:
    """The jobs of a multirun of ``overrides`` as Hydra's basic sweeper launches them, each
    its list of overrides: every combination of the swept keys' values, in order. Needs an
    initialized Hydra (a sweep over a group's options, ``experiment=glob(day2016_*)``, is
    resolved by its config loader)."""
    import itertools

    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    loader = GlobalHydra.instance().config_loader()
    choices: dict[str, list[str]] = {}
    for override in OverridesParser.create(config_loader=loader).parse_overrides(overrides):
        key = override.get_key_element()
        choices[key] = ([f"{key}={v}" for v in override.sweep_string_iterator()]
                        if override.is_sweep_override()
                        else [f"{key}={override.get_value_element_as_str()}"])
    return [list(job) for job in itertools.product(*choices.values())]


def check_sweep(config: DictConfig) -> list | None:
    """Every job of the sweep resolved as its run resolves it, before the first runs: a
    :class:`~privpub.experiments.preflight.Job` each, with its spec or its error (a bad
    value, an unknown name, a parameter a mechanism does not take, a kind that does not
    fit, too many trials). Composition only, no data is read. None when the sweep is not the
    basic sweeper's or Hydra cannot compose a job (Hydra then says why, in its words)."""
    from hydra import compose

    from privpub.errors import PrivpubError
    from privpub.experiments.cli import check_run_config, spec_from_config
    from privpub.experiments.preflight import Job
    from privpub.experiments.runner import check_size

    if not str(OmegaConf.select(config, "hydra.sweeper._target_") or "").endswith(
            "BasicSweeper"):
        return None
    overrides = list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
    try:
        combinations = sweep_jobs(overrides)
    except Exception:  # a malformed sweep: Hydra's sweeper reports it
        return None
    swept = [i for i in range(len(combinations[0]) if combinations else 0)
             if len({job[i] for job in combinations}) > 1]
    jobs = []
    for number, job in enumerate(combinations):
        varied = " ".join(job[i] for i in swept)
        label = f"#{number}" + (f" ({varied})" if varied else "")
        try:
            cfg = compose(config_name="config", overrides=job)
        except Exception:  # Hydra's own composition error: its sweeper reports it
            return None
        try:
            c = check_run_config(cfg)
            spec = spec_from_config(c, overrides=job)
            check_size(spec, force=c["force"])
        except PrivpubError as exc:
            jobs.append(Job(label, error=str(exc)))
            continue
        except Exception:  # not a config error: the job's own run shows it as it is
            jobs.append(Job(label))
            continue
        jobs.append(Job(label, spec, seed=c["seed"], results_dir=str(c["results_dir"]),
                        data_dir=c.get("data_dir"), allow_download=c["allow_download"],
                        rerun=c["rerun"]))
    return jobs


def preflight(config: DictConfig) -> list | None:
    """:func:`check_sweep` and every job's data files
    (:func:`~privpub.experiments.preflight.check_data`); a job that cannot run stops the
    sweep before any job starts: one message on stderr naming each error once and the jobs
    it stops, exit 2. Returns the jobs (None: not checked here)."""
    from privpub.experiments.preflight import check_data, report

    jobs = check_sweep(config)
    if not jobs:
        return jobs
    text = report(jobs, check_data(jobs), noun="job")
    if text:
        print(f"privpub: error: {text}", file=sys.stderr, flush=True)
        sys.exit(2)
    return jobs


def collect_outcomes(directory: Path) -> list[dict]:
    """The ``privpub.json`` of every job under a sweep directory, in job order."""
    from privpub.experiments.cli import JOB_OUTCOME

    found = []
    for path in sorted(Path(directory).glob(f"*/{JOB_OUTCOME}"),
                       key=lambda p: (len(p.parent.name), p.parent.name)):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError) as exc:
            found.append({"code": 1, "error": f"unreadable job outcome {path}: {exc}"})
    return found


def union_specs(outcomes: list[dict]) -> list[tuple]:
    """[(spec, seeds, results_dir, (plot_stored, redraw), run)] with the union of the cells
    (and the largest repetitions) of every job of the same experiment, scale and
    results_dir, ``seeds`` the sorted base seeds of those jobs (a sweep over ``seed=0,1``
    draws each seed as a series of one figure, never one seed over another), and ``run`` the
    jobs' summed counts and seconds."""
    from types import SimpleNamespace

    from privpub.experiments.spec import ExperimentSpec, refresh_auto_plots

    groups: dict[tuple, list] = {}
    for outcome in outcomes:
        if "spec" not in outcome or not outcome.get("plot", True):
            continue
        spec = ExperimentSpec.from_dict(outcome["spec"])
        key = (spec.name, spec.scale, outcome["results_dir"])
        run = outcome.get("run") or {}
        if key not in groups:
            flags = (outcome.get("plot_stored", False), outcome.get("redraw", False))
            groups[key] = [spec, {int(outcome["seed"])}, flags, dict(run)]
            continue
        merged, seeds, _, total = groups[key]
        seeds.add(int(outcome["seed"]))
        known = {c.cell_id for c in merged.cells}
        merged.cells += [c for c in spec.cells if c.cell_id not in known]
        merged.repetitions = max(merged.repetitions, spec.repetitions)
        for over, labels in spec.tuned_in_hindsight.items():
            mine = merged.tuned_in_hindsight.get(over, [])
            merged.tuned_in_hindsight[over] = sorted({*mine, *labels})
        for name, value in run.items():
            total[name] = total.get(name, 0) + value
    for merged, *_ in groups.values():
        merged.plots = refresh_auto_plots(merged)
    return [(s, sorted(seeds), Path(k[2]), stored, SimpleNamespace(**run) if run else None)
            for k, (s, seeds, stored, run) in groups.items()]


def draw_all(jobs: list[tuple[tuple, dict]], n_jobs, plugins=()) -> tuple[list[str], int]:
    """``[cli.draw(*args, **kwargs) for args, kwargs in jobs]``, the texts in the jobs'
    order, and how many jobs were drawn anew. The experiments whose figures are not drawn
    yet are drawn on up to ``n_jobs``
    processes (joblib) when there are several, each importing the run's ``plugins`` first;
    each draws into its own directory, so its figures are those of one process. The others
    only read their texts back, here."""
    from privpub.experiments.executors import cap_n_jobs
    from privpub.experiments.figures import is_drawn

    def drawn(args, kwargs) -> bool:
        spec, results_dir = args
        where = dict(seed=kwargs["seed"], variant=kwargs["variant"])
        return not kwargs["redraw"] and is_drawn(spec, results_dir, **where) and (
            not kwargs["plot_stored"]
            or is_drawn(spec, results_dir, seed=kwargs["seed"], variant="stored", stored=True))

    stale = [i for i, (args, kwargs) in enumerate(jobs) if not drawn(args, kwargs)]
    workers = min(cap_n_jobs(n_jobs)[0] if isinstance(n_jobs, int) else 1, len(stale))
    texts = {}
    if workers > 1:
        from joblib import Parallel, delayed

        done = Parallel(n_jobs=workers, backend="loky")(
            delayed(_draw)(plugins, *jobs[i]) for i in stale)
        texts = dict(zip(stale, done, strict=True))
    return ([texts[i] if i in texts else _draw(plugins, *job) for i, job in enumerate(jobs)],
            len(stale))


def _index_is_stale(results_dir: Path, figure_dirs) -> bool:
    """report.html is missing or older than one of ``figure_dirs``' figures."""
    report = Path(results_dir) / "report.html"
    if not report.exists():
        return True
    metas = [Path(d) / "meta.json" for d in figure_dirs]
    return any(m.exists() and m.stat().st_mtime > report.stat().st_mtime for m in metas)


def _draw(plugins, args, kwargs) -> str:
    from privpub.experiments.cli import draw
    from privpub.registry import import_plugins

    import_plugins(plugins)
    return draw(*args, **kwargs)


class PrivpubCallback(Callback):
    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        global _SWEEP_DIR, _SWEEP_BAR
        _SWEEP_DIR = Path(str(config.hydra.sweep.dir))
        jobs = preflight(config)
        launcher = str(OmegaConf.select(config, "hydra.launcher._target_") or "")
        if config.get("progress", True) and launcher.endswith("BasicLauncher"):
            total = (sum(j.spec.n_trials for j in jobs)
                     if jobs and all(j.spec is not None for j in jobs) else None)
            from tqdm.auto import tqdm

            _SWEEP_BAR = tqdm(total=total, desc="multirun", unit="trial")

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        from privpub.experiments.cli import closing_line, figure_path, variant_slug
        from privpub.experiments.figures import write_index

        global _SWEEP_BAR
        if _SWEEP_BAR is not None:
            _SWEEP_BAR.close()
            _SWEEP_BAR = None
        outcomes = collect_outcomes(Path(str(config.hydra.sweep.dir)))
        overrides = list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
        drawn: dict[Path, list[Path]] = {}
        jobs = []
        for spec, seeds, results_dir, (stored, redraw), run in union_specs(outcomes):
            variant = variant_slug(overrides, seeds)
            seed = seeds[0] if len(seeds) == 1 else seeds
            jobs.append(((spec, results_dir), dict(seed=seed, variant=variant,
                                                   overrides=overrides, plot_stored=stored,
                                                   redraw=redraw, summary=run, index=False)))
            drawn.setdefault(results_dir, []).append(figure_path(spec, results_dir, variant))
        n_drawn = len(jobs)  # as if all were, should a draw fail
        try:
            texts, n_drawn = draw_all(jobs, config.get("n_jobs", 1),
                                      tuple(config.get("plugins") or ()))
            for text in texts:
                print(text, flush=True)
        finally:  # once, after every experiment of the sweep is drawn (or one draw failed)
            for results_dir, figure_dirs in drawn.items():
                if n_drawn or _index_is_stale(results_dir, figure_dirs):
                    write_index(results_dir)
        for results_dir, figure_dirs in drawn.items():
            print(closing_line(figure_dirs, results_dir), flush=True)
        if not outcomes:  # e.g. experiment=glob(nosuch_*): Hydra launches nothing
            print(f"privpub: error: the sweep {' '.join(overrides)} ran no job (no option "
                  "matched; `privpub list` shows the experiments)", file=sys.stderr, flush=True)
            sys.exit(2)
        errors = [o["error"].splitlines()[0] for o in outcomes if o.get("error")]
        failures = [f for o in outcomes for f in o.get("failures") or []]
        code = max([o.get("code", 0) for o in outcomes] or [0])
        if errors or failures:
            lines = [f"privpub: multirun of {len(outcomes)} job(s): {len(errors)} job(s) "
                     f"stopped by an error (printed above), {len(failures)} trial(s) failed"]
            lines += [f"  FAILED {f['where']}: {f['error']}" for f in failures[:20]]
            if len(failures) > 20:
                lines.append(f"  ... and {len(failures) - 20} more (see the stores' error rows)")
            print("\n".join(lines), file=sys.stderr, flush=True)
        if code:
            sys.exit(code)
