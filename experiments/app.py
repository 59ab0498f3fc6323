"""The Hydra app: ``python run.py <overrides>`` and ``privpub run <overrides>`` are this one
command, with the packaged configs (``privpub.conf``), so it runs from a wheel too.

Exit codes: 0 done, 1 some trials failed, 2 config or data error (Hydra's own included),
130 interrupted (rerun the same command to resume). docs/design.md (Experiments: "One way
in", "Exit codes").
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

__all__ = ["CONFIG_PATH", "run", "main"]

#: Hydra's primary config: conf/config.yaml of the checkout (editable install) or of the wheel.
CONFIG_PATH = "pkg://privpub.conf"
_HELP_FLAGS = ("--help", "-h", "--hydra-help", "--cfg", "-c", "--info", "--shell-completion")
_ENTERED = False  # whether Hydra composed a config and called _hydra_main


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="config")
def _hydra_main(cfg: DictConfig) -> None:
    global _ENTERED
    _ENTERED = True
    from privpub.experiments.cli import run_from_config

    run_from_config(cfg)


def run(argv: list[str], *, prog: str = "run.py") -> int:
    """Run ``argv`` (Hydra's command line: overrides, ``-m``, ``--cfg job``, ...) in this
    process; returns the exit code."""
    global _ENTERED
    from hydra.core.global_hydra import GlobalHydra

    from privpub.errors import PrivpubError
    from privpub.experiments.cli import check_renamed
    from privpub.experiments.hydra_support import file_datasets, register_configs, sweep_dir

    try:
        check_renamed(argv)
        argv = file_datasets(argv)  # dataset=/path/edges.txt.gz: the edge_list dataset
        _check_results_dirs(argv)
        register_configs(argv)  # mechanism=<name>, dataset=<a plug-in's>: no YAML needed
    except PrivpubError as exc:
        print(f"privpub: error: {exc}", file=sys.stderr)
        return 2
    _ENTERED, earlier_sweep = False, sweep_dir()
    GlobalHydra.instance().clear()  # a second run in one process (privpub reproduce, tests)
    saved, sys.argv = sys.argv, [prog, *argv]
    try:
        _hydra_main()
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            return 1
        code = exc.code or 0  # 1 before any job started: Hydra's own config error
        return 2 if code == 1 and not _jobs_started(earlier_sweep) else code
    except KeyboardInterrupt:  # outside any trial (e.g. a multirun launcher): keep it short
        print("privpub: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    finally:
        sys.argv = saved
    return 0


def main() -> None:
    """``python run.py``."""
    sys.exit(run(sys.argv[1:]))


def _check_results_dirs(argv: list[str]) -> None:
    """Hydra writes its logs under results_dir before privpub runs: an unwritable one (each
    of a plain sweep ``results_dir=a,b``) must be one clear line, not Hydra's traceback. An
    interpolated or otherwise swept value is checked by the run itself."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ChoiceSweep

    from privpub.experiments.cli import check_writable

    if any(a.split("=")[0] in _HELP_FLAGS for a in argv):
        return
    given = [a for a in argv if a.lstrip("+~").split("=", 1)[0] == "results_dir"]
    try:
        parsed = OverridesParser.create().parse_overrides(given[-1:])
    except Exception:  # Hydra reports a malformed override itself, in its own words
        return
    value = parsed[0].value() if parsed else "results"  # conf/config.yaml's default
    values = value.list if isinstance(value, ChoiceSweep) else [value]
    for path in values:
        if isinstance(path, str) and "${" not in path:
            check_writable(path)


def _jobs_started(earlier_sweep) -> bool:
    """Whether a job of this run started: in this process, or a multirun launcher's (its
    job directory); a sweep of an earlier run in this process does not count."""
    from privpub.experiments.hydra_support import sweep_dir

    sweep = sweep_dir()
    return _ENTERED or bool(sweep and sweep != earlier_sweep
                            and any(p.is_dir() for p in sweep.glob("*")))
