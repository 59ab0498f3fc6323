"""Hydra integration: a multirun ends with one drawing, one failure list and one exit code.

Multirun jobs may run in parallel (joblib / SLURM launchers), each writing into the same
result store. A job does not draw and does not raise: it records its outcome (its resolved
spec, failures, or a one-line config/data error) in ``privpub.json`` in its Hydra job
directory (:mod:`privpub.experiments.cli`). When the sweep ends, :class:`PrivpubCallback`

- draws, per experiment and scale, the union of the jobs' grids and seeds (the experiment's
  own figures when every job ran the experiment's own grid at seed 0, else
  ``variants/<slug>/`` named after the sweep's overrides; each seed a series);
- lists every failure once;
- exits with the largest code of the jobs (2 config/data error, 1 failed tasks, 0 otherwise).

With the basic launcher (jobs one after another in this process) one progress bar covers
the whole sweep: its total is every job's task count, resolved when the sweep starts.

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

__all__ = ["PrivpubCallback", "sweep_dir", "sweep_bar", "sweep_jobs", "collect_outcomes",
           "union_specs", "register_configs", "mechanism_node"]

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


def _sweep_tasks(config: DictConfig) -> int | None:
    """The number of tasks of every job of the sweep (None if it cannot be told)."""
    from hydra import compose

    from privpub.experiments.cli import spec_from_config

    total = 0
    overrides = list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
    for job in sweep_jobs(overrides):
        cfg = compose(config_name="config", overrides=job)
        total += spec_from_config(cfg, overrides=job).n_tasks
    return total


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


class PrivpubCallback(Callback):
    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        global _SWEEP_DIR, _SWEEP_BAR
        _SWEEP_DIR = Path(str(config.hydra.sweep.dir))
        launcher = str(OmegaConf.select(config, "hydra.launcher._target_") or "")
        if config.get("progress", True) and launcher.endswith("BasicLauncher"):
            try:
                total = _sweep_tasks(config)
            except Exception:  # a bad job reports its own error when it runs
                total = None
            from tqdm.auto import tqdm

            _SWEEP_BAR = tqdm(total=total, desc="multirun", unit="task")

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        from privpub.experiments.cli import closing_line, draw, figure_path, variant_slug

        global _SWEEP_BAR
        if _SWEEP_BAR is not None:
            _SWEEP_BAR.close()
            _SWEEP_BAR = None
        outcomes = collect_outcomes(Path(str(config.hydra.sweep.dir)))
        overrides = list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
        drawn: dict[Path, list[Path]] = {}
        for spec, seeds, results_dir, (stored, redraw), run in union_specs(outcomes):
            variant = variant_slug(overrides, seeds)
            seed = seeds[0] if len(seeds) == 1 else seeds
            print(draw(spec, results_dir, seed=seed, variant=variant, overrides=overrides,
                       plot_stored=stored, redraw=redraw, summary=run), flush=True)
            drawn.setdefault(results_dir, []).append(figure_path(spec, results_dir, variant))
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
                     f"stopped by an error (printed above), {len(failures)} task(s) failed"]
            lines += [f"  FAILED {f['where']}: {f['error']}" for f in failures[:20]]
            if len(failures) > 20:
                lines.append(f"  ... and {len(failures) - 20} more (see the stores' error rows)")
            print("\n".join(lines), file=sys.stderr, flush=True)
        if code:
            sys.exit(code)
