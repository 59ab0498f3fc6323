"""Every config file matches the registries, and every experiment resolves at every scale."""

from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir

from experiments.cli import spec_from_config
from privpub.registry import mechanisms

CONF = Path(__file__).resolve().parents[1] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
SHIPPED = {n: m for n, m in mechanisms().items() if not n.startswith("toy_")}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_mechanism_has_a_config_with_its_parameters(name):
    path = CONF / "mechanism" / f"{name}.yaml"
    assert path.exists(), f"add conf/mechanism/{name}.yaml"
    config = yaml.safe_load(path.read_text())
    assert config["name"] == name
    assert set(config) - {"name"} == set(SHIPPED[name].parameters)


def test_each_mechanism_config_names_a_registered_mechanism():
    for path in (CONF / "mechanism").glob("*.yaml"):
        if path.stem != "all":
            assert path.stem in SHIPPED, f"{path.name} names no registered mechanism"


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_resolves(experiment, scale):
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        cfg = compose("config", overrides=[f"experiment={experiment}", f"scale={scale}"])
    spec = spec_from_config(cfg)
    assert spec.name == experiment and spec.cells and spec.plots  # plots checked by the spec
