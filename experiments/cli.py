"""What ``python run.py`` does with its Hydra config: check, resolve, run, draw, report.

The exit codes, the precedence of the command line and a multirun's outcome files are in
docs/design.md (Experiments: "Exit codes", "Precedence", "Figures show what was asked").
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from omegaconf import DictConfig, OmegaConf

from privpub.errors import ConfigError, PrivpubError

if TYPE_CHECKING:
    from privpub.experiments.spec import ExperimentSpec

__all__ = [
    "TOP_LEVEL_KEYS",
    "RENAMED_KEYS",
    "unknown_key_message",
    "check_renamed",
    "check_run_config",
    "check_writable",
    "closing_line",
    "run_from_config",
    "spec_from_config",
    "variant_slug",
]

#: The keys of the top-level config (conf/config.yaml and its groups); others are typos.
TOP_LEVEL_KEYS = frozenset(
    "experiment dataset mechanism scale seed n_jobs executor dask_address data_dir "
    "allow_download results_dir rerun plot plot_stored redraw progress measure_memory plugins "
    "add_mechanisms trial_timeout trial_memory force".split()
)

#: Keys (and ``privpub audit``'s flags) that were renamed: old -> new. A run's unit, one
#: repetition of one cell, is a trial (a leaderboard problem is a task).
RENAMED_KEYS = {"task_timeout": "trial_timeout", "task_memory": "trial_memory"}

#: Overrides that change *what* is computed (the cells, repetitions or seeds); a run with
#: any of them draws into ``variants/<slug>/`` instead of the experiment's own figures.
_PRESENTATION = ("experiment.title", "experiment.notes", "experiment.plots", "experiment.claims")
_IDENTITY_ROOTS = ("experiment.", "dataset", "mechanism", "seed", "add_mechanisms")

#: Outcome file of a multirun job, in its Hydra job directory.
JOB_OUTCOME = "privpub.json"

# ----------------------------------------------------------------------------- checks
def _int(value, name: str, *, minimum: int, allow: tuple = ()) -> int:
    if value in allow and not isinstance(value, bool):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        allowed = f" or {', '.join(map(str, allow))}" if allow else ""
        raise ConfigError(f"{name} must be an integer >= {minimum}{allowed}, got {value!r}")
    return value


def check_writable(path: Path | str) -> Path:
    """Create ``path`` if needed and prove that a file can be written in it."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"results_dir {str(path)!r} is a file, not a directory; "
                          "pass results_dir=<a writable directory>")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".privpub-write-test-{uuid.uuid4().hex[:8]}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"results_dir {str(path)!r} cannot be written ({reason}); "
            "pass results_dir=<a writable directory>"
        ) from None
    return path


def unknown_key_message(unknown: list[str]) -> str:
    """``unknown config key 'sed' (did you mean 'seed'?); keys: ...`` (one line)."""
    import difflib

    renamed = [k for k in unknown if k in RENAMED_KEYS]
    if renamed:
        return _renamed_message(renamed[0])
    hints = []
    for key in unknown:
        close = difflib.get_close_matches(key, sorted(TOP_LEVEL_KEYS), n=1)
        hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"unknown config key {', '.join(hints)}; keys: {', '.join(sorted(TOP_LEVEL_KEYS))}"


def _renamed_message(old: str) -> str:
    new = RENAMED_KEYS[old.lstrip("-").replace("-", "_")]
    new = f"--{new.replace('_', '-')}" if old.startswith("--") else f"{new}="
    old = old if old.startswith("--") else f"{old}="
    return f"{old} is now {new} (one repetition of one cell is now called a trial)"


def check_renamed(argv) -> None:
    """A :class:`ConfigError` naming the new name of the first renamed key (``task_timeout=``,
    ``+task_memory=``) or flag (``--task-timeout``) in ``argv``."""
    for arg in argv:
        name = arg.split("=", 1)[0]
        key = name[2:].replace("-", "_") if name.startswith("--") else name.lstrip("+~")
        if key in RENAMED_KEYS and (name.startswith("--") or "=" in arg or arg[:1] == "~"):
            raise ConfigError(_renamed_message(name if name.startswith("--") else key))


def check_run_config(cfg: DictConfig | dict) -> dict:
    """Validate the top-level keys before anything else; return the plain config.

    Unknown keys (``+sed=1``), a seed that is not a non-negative integer, a bad n_jobs or
    executor, non-boolean switches and an unwritable results_dir are :class:`ConfigError`
    whether or not any work remains.
    """
    from privpub.experiments.executors import EXECUTORS

    c = cfg if isinstance(cfg, dict) else OmegaConf.to_container(cfg, resolve=True)
    unknown = sorted(set(c) - TOP_LEVEL_KEYS - {"hydra"})
    if unknown:
        raise ConfigError(unknown_key_message(unknown))
    c["seed"] = _int(c.get("seed"), "seed", minimum=0)
    c["n_jobs"] = _int(c.get("n_jobs"), "n_jobs", minimum=1, allow=(-1,))
    if c.get("executor") not in EXECUTORS:
        raise ConfigError(
            f"unknown executor {c.get('executor')!r}; known executors: {', '.join(EXECUTORS)}"
        )
    for key in ("trial_timeout", "trial_memory"):  # seconds, MB; null = no limit
        value = c.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not value > 0):
            unit = "seconds" if key == "trial_timeout" else "MB"
            raise ConfigError(f"{key} must be a positive number of {unit} or null, got {value!r}")
    c.setdefault("force", False)
    for key in ("allow_download", "rerun", "plot", "plot_stored", "redraw", "progress",
                "measure_memory", "force"):
        if not isinstance(c.get(key), bool):
            raise ConfigError(f"{key} must be true or false, got {c.get(key)!r}")
    for key in ("plugins", "add_mechanisms"):
        if not isinstance(c.get(key) or [], list):
            raise ConfigError(f"{key} must be a list, e.g. {key}=[name], got {c.get(key)!r}")
    check_writable(c["results_dir"])
    return c


# ----------------------------------------------------------------------------- overrides
def hydra_overrides() -> list[str]:
    """The command-line overrides of the current Hydra job ([] outside Hydra)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        if HydraConfig.initialized():
            return list(HydraConfig.get().overrides.task)
    except Exception:  # outside Hydra (tests, notebooks)
        pass
    return []


def _parse(overrides: list[str]):
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create().parse_overrides(list(overrides))


def experiment_overrides(overrides: list[str], experiment: dict) -> dict:
    """``{dotted path: value}`` of every ``experiment.<path>`` override, values taken from
    the composed ``experiment`` (deletions: :data:`~privpub.experiments.precedence.DELETE`)."""
    from privpub.experiments.precedence import DELETE

    out = {}
    for override in _parse(overrides):
        key = override.key_or_group
        if not key.startswith("experiment."):
            continue
        path = key[len("experiment.") :]
        if override.is_delete():
            out[path] = DELETE
            continue
        node = experiment
        for part in path.split("."):
            node = node[int(part)] if isinstance(node, list) else node.get(part)
        out[path] = node
    return out


def variant_slug(overrides: list[str], seed: int | list[int] = 0) -> str | None:
    """The name of the figure directory of a run that changes what is computed, from its
    overrides (``dataset=karate`` -> ``dataset=karate``); None for the experiment's own run
    (base seed 0; ``seed`` may list a sweep's seeds)."""
    seeds = sorted({int(s) for s in ([seed] if isinstance(seed, int) else seed)})
    kept = []
    for text in overrides:
        key = text.lstrip("+~").split("=", 1)[0]
        if key.startswith(_PRESENTATION) or not key.startswith(_IDENTITY_ROOTS):
            continue
        if key == "seed" and text.split("=", 1)[-1].strip() == "0":
            continue
        kept.append(text.lstrip("+").removeprefix("experiment."))
    if not kept and seeds == [0]:
        return None
    if not kept:
        kept = [f"seed={','.join(map(str, seeds))}"]
    slug = re.sub(r"[\[\]{}'\" ]+", "", "__".join(kept))
    slug = re.sub(r"[^-\w.,=+~]+", "_", slug).strip("_")
    if len(slug) > 80:
        import hashlib

        slug = f"{slug[:60]}-{hashlib.sha256(slug.encode()).hexdigest()[:8]}"
    return slug


def spec_from_config(cfg: DictConfig | dict, *, overrides: list[str] | None = None):
    """The resolved :class:`~privpub.experiments.spec.ExperimentSpec` of a composed config.

    ``overrides`` are the command line's override strings (default: the current Hydra
    job's); the ``experiment.<key>`` ones are re-applied over the scale block.
    """
    from privpub.experiments.spec import resolve_experiment
    from privpub.registry import import_plugins

    c = cfg if isinstance(cfg, dict) else OmegaConf.to_container(cfg, resolve=True)
    overrides = hydra_overrides() if overrides is None else overrides
    import_plugins(c.get("plugins") or ())
    edits = experiment_overrides(overrides, c["experiment"])
    return resolve_experiment(
        c["experiment"],
        scale=c["scale"]["name"],
        dataset=c.get("dataset"),
        mechanism=c.get("mechanism"),
        overrides=edits,
        add_mechanisms=c.get("add_mechanisms"),
        file_mechanisms=(_file_mechanisms(c["experiment"].get("name"))
                         if any(str(k).startswith("mechanisms.") for k in edits) else None),
    )


def _file_mechanisms(name) -> list | None:
    """The mechanism list of ``conf/experiment/<name>.yaml`` as the file states it (before
    the command line's ``experiment.mechanisms.<i>`` edits); None without such a file."""
    from privpub.experiments.catalog import CONF_DIR

    path = CONF_DIR / "experiment" / f"{name}.yaml"
    if not name or not path.is_file():
        return None
    mechanisms = OmegaConf.to_container(OmegaConf.load(path)).get("mechanisms")
    return mechanisms if isinstance(mechanisms, list) else None


# ----------------------------------------------------------------------------- running
def _is_multirun() -> bool:
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN
    except Exception:  # outside Hydra (tests, notebooks)
        return False


def _job_dir() -> Path | None:
    try:
        from hydra.core.hydra_config import HydraConfig

        return Path(HydraConfig.get().runtime.output_dir)
    except Exception:
        return None


def _write_outcome(outcome: dict) -> None:
    job = _job_dir()
    if job is not None:
        job.mkdir(parents=True, exist_ok=True)
        (job / JOB_OUTCOME).write_text(json.dumps(outcome, default=str))


def _error(message: str, code: int) -> None:
    print(f"privpub: error: {message}", file=sys.stderr, flush=True)
    if _is_multirun():  # the sweep goes on; the callback reports and sets the exit code
        _write_outcome({"code": code, "error": message})
        return
    sys.exit(code)


def run_from_config(cfg: DictConfig | dict, *, overrides: list[str] | None = None):
    """Run the configured experiment: the run line, the run, the figures, the exit code
    (docs/design.md, Experiments: "Exit codes")."""
    overrides = hydra_overrides() if overrides is None else overrides
    try:
        c = check_run_config(cfg)
        spec = spec_from_config(c, overrides=overrides)
    except PrivpubError as exc:
        return _error(str(exc), 2)
    results_dir = Path(c["results_dir"])
    variant = variant_slug(overrides, c["seed"])
    _notes(c)
    print(
        f"privpub: {spec.name} [{spec.scale}] — {len(spec.cells)} cell(s) x "
        f"{spec.repetitions} rep(s) = {spec.n_trials} trial(s), metrics "
        f"{', '.join(spec.expected_rows)}; seed={c['seed']}, n_jobs={c['n_jobs']}, "
        f"executor={c['executor']}" + (f"; variant {variant}" if variant else ""),
        flush=True,
    )
    try:
        summary = _run(spec, c, results_dir)
    except PrivpubError as exc:
        return _error(str(exc), 2)
    if summary.interrupted:
        print(
            f"privpub: interrupted: {summary.n_done} of {summary.n_trials} trials stored in "
            f"{summary.store}; rerun the same command to resume",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(130)
    multirun = _is_multirun()
    print(summary.describe(failures=not multirun), flush=True)
    code = 1 if summary.failed else 0
    if multirun:  # the callback draws the union of the jobs when the sweep ends
        _write_outcome(_job_outcome(code, spec, c, results_dir, summary))
        return summary
    if c["plot"]:
        text = draw(spec, results_dir, seed=c["seed"], variant=variant, overrides=overrides,
                    plot_stored=c["plot_stored"], redraw=c["redraw"], summary=summary)
        if text:
            print(text, flush=True)
        print(closing_line([figure_path(spec, results_dir, variant)], results_dir), flush=True)
    if summary.failed:
        print(f"privpub: {len(summary.failures)} trial(s) failed (listed above)",
              file=sys.stderr, flush=True)
        sys.exit(1)
    return summary


def _notes(c: dict) -> None:
    """One line each: n_jobs capped to the cores; an executor that cannot isolate trials."""
    from privpub.experiments.executors import cap_n_jobs, isolation_note

    c["n_jobs"], capped = cap_n_jobs(c["n_jobs"], c["executor"])
    isolation = isolation_note(c["executor"], c["n_jobs"], trial_timeout=c.get("trial_timeout"),
                               trial_memory=c.get("trial_memory"))
    for note in (capped, isolation):
        if note:
            print(f"privpub: note: {note}", file=sys.stderr, flush=True)


def _run(spec: ExperimentSpec, c: dict, results_dir: Path):
    """:func:`privpub.experiments.runner.run_experiment` with the checked config's settings."""
    from privpub.experiments.hydra_support import sweep_bar
    from privpub.experiments.runner import run_experiment

    return run_experiment(
        spec,
        results_dir=results_dir,
        seed=c["seed"],
        n_jobs=c["n_jobs"],
        data_dir=c.get("data_dir"),
        executor=c["executor"],
        dask_address=c.get("dask_address"),
        allow_download=c["allow_download"],
        progress=c["progress"],
        measure_memory=c["measure_memory"],
        rerun=c["rerun"],
        plugins=tuple(c.get("plugins") or ()),
        bar=sweep_bar() if _is_multirun() else None,
        trial_timeout=c.get("trial_timeout"),
        trial_memory=c.get("trial_memory"),
        force=c["force"],
    )


def _job_outcome(code: int, spec: ExperimentSpec, c: dict, results_dir: Path, summary) -> dict:
    """What a multirun job leaves for the callback (:data:`JOB_OUTCOME`)."""
    return {
        "code": code,
        "spec": spec.to_dict(),
        "seed": c["seed"],
        "results_dir": str(results_dir),
        "failures": summary.failures,
        "run": {"n_ok": summary.n_ok, "n_stored": summary.n_stored,
                "n_recomputed": summary.n_recomputed, "seconds": summary.seconds},
        "plot": c["plot"],
        "plot_stored": c["plot_stored"],
        "redraw": c["redraw"],
    }


def draw(spec: ExperimentSpec, results_dir: Path, *, seed: int | list[int] = 0,
         variant: str | None = None, overrides=(), plot_stored: bool = False,
         redraw: bool = False, summary=None, index: bool = True) -> str:
    """Draw ``spec``'s figures (and the stored-everything variant when asked) for base seed
    ``seed`` (or a sweep's seeds, each a series); a draw whose inputs did not change since
    the last one is skipped unless ``redraw``. ``index=False`` leaves the results
    directory's report and timings table to the caller
    (:func:`privpub.experiments.figures.write_index`)."""
    from privpub.experiments.figures import draw_experiment

    text = draw_experiment(spec, results_dir, seed=seed, variant=variant,
                           overrides=list(overrides), summary=summary, redraw=redraw,
                           index=index and not plot_stored)
    if plot_stored:
        draw_experiment(spec, results_dir, seed=seed, variant="stored", stored=True,
                        redraw=redraw, index=index)
    where = figure_path(spec, results_dir, variant)
    return f"{text}\nfigures: {where}" if text else f"figures: {where}"


def figure_path(spec: ExperimentSpec, results_dir: Path, variant: str | None) -> Path:
    """The directory ``spec``'s figures (and ``claims.json``) are drawn into."""
    where = Path(results_dir) / spec.name / spec.scale
    return where / "variants" / variant if variant else where


def closing_line(figure_dirs, results_dir: Path) -> str:
    """The last line of a run: the verdicts of the claims drawn into ``figure_dirs`` (each
    directory once), in one line, and where report.html is (``privpub: claims: 12 held,
    1 not held, 2 not evaluated; report: /abs/results/report.html``). The claims are read
    and counted as the report's overview reads and counts them."""
    from privpub.plots.report.results_tree import read_claims
    from privpub.plots.report.text import verdict_counts
    from privpub.results import VERDICTS

    counts = Counter()
    for where in dict.fromkeys(Path(w) for w in figure_dirs):
        counts.update(verdict_counts(read_claims(where, [])))
    verdicts = ", ".join(f"{counts[v]} {v}" for v in VERDICTS)
    report = (Path(results_dir) / "report.html").resolve()
    return f"privpub: claims: {verdicts}; report: {report}"

