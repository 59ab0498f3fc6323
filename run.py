"""privpub's one entry point.

    python run.py                                    # the embedded default comparison
    python run.py experiment=epasto2022_fig3c scale=paper
    python run.py -m experiment=epasto2022_fig3c dataset=sbm_epasto,adult_binary \
        mechanism.epsilon=0.5,2

See README.md and conf/config.yaml for every option; ``privpub list`` lists the experiments.
Exit codes: 0 done, 1 some tasks failed, 2 config or data error (Hydra's own included),
130 interrupted (rerun the same command to resume).
"""

import sys

import hydra
from omegaconf import DictConfig

_HELP_FLAGS = ("--help", "-h", "--hydra-help", "--cfg", "-c", "--info", "--shell-completion")


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from privpub.experiments.cli import run_from_config

    run_from_config(cfg)


def _results_dir(argv: list[str]) -> str | None:
    """The results_dir the command line sets (last one wins), else the default; None when
    it is interpolated or swept (then the run checks it itself)."""
    value = "results"
    for arg in argv:
        key, _, rest = arg.lstrip("+").partition("=")
        if key == "results_dir":
            value = rest
    return None if "${" in value or "," in value else value


def _swept_results_dirs(argv: list[str]) -> list[str]:
    """The values of a plain comma sweep of results_dir (``results_dir=a,b``), else []."""
    value = ""
    for arg in argv:
        key, _, rest = arg.lstrip("+").partition("=")
        if key == "results_dir":
            value = rest
    if "${" in value or any(c in value for c in "()[]{}"):
        return []
    return [v.strip() for v in value.split(",") if v.strip()] if "," in value else []


def _preflight(argv: list[str]) -> None:
    """Hydra writes its own logs under results_dir before privpub runs: an unwritable
    results_dir must be one clear line (exit 2), not Hydra's traceback."""
    if any(a.split("=")[0] in _HELP_FLAGS for a in argv):
        return
    single = _results_dir(argv)
    for path in [single] if single else _swept_results_dirs(argv):
        from privpub.errors import ConfigError
        from privpub.experiments.cli import check_writable

        try:
            check_writable(path)
        except ConfigError as exc:
            print(f"privpub: error: {exc}", file=sys.stderr)
            sys.exit(2)


def _mechanism_configs(argv: list[str]) -> None:
    """``mechanism=<name>`` and ``dataset=<name>`` without a YAML in conf/ (plugins=
    imported first); a bad plug-in or an unknown name is one line, exit 2."""
    from privpub.errors import PrivpubError
    from privpub.experiments.hydra_support import register_configs

    try:
        register_configs(argv)
    except PrivpubError as exc:
        print(f"privpub: error: {exc}", file=sys.stderr)
        sys.exit(2)


def _jobs_started() -> bool:
    from privpub.experiments.cli import task_started
    from privpub.experiments.hydra_support import sweep_dir

    sweep = sweep_dir()
    return task_started() or bool(sweep and any(p.is_dir() for p in sweep.glob("*")))


if __name__ == "__main__":
    _preflight(sys.argv[1:])
    _mechanism_configs(sys.argv[1:])
    try:
        main()
    except SystemExit as exc:
        if exc.code == 1 and not _jobs_started():  # Hydra's own config error, before any job
            raise SystemExit(2) from None
        raise
    except KeyboardInterrupt:  # outside a task (e.g. a multirun launcher): keep it short
        print("privpub: interrupted; rerun the same command to resume", file=sys.stderr)
        sys.exit(130)
