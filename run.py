"""privpub's one entry point.

    python run.py                                    # the embedded default comparison
    python run.py experiment=epasto2022_fig3c scale=paper
    python run.py -m experiment=epasto2022_fig3c dataset=sbm_epasto,adult_binary \
        mechanism.epsilon=0.5,2

See README.md and conf/config.yaml for every option.
"""

import hydra
from omegaconf import DictConfig


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from experiments.cli import run_from_config

    run_from_config(cfg)


if __name__ == "__main__":
    main()
