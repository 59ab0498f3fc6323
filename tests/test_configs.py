"""Every config file matches the registries, and every experiment resolves at every scale."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from privpub.experiments.cli import spec_from_config
from privpub.experiments.figures import _claims
from privpub.experiments.hydra_support import register_configs
from privpub.experiments.seeding import canonical_json
from privpub.registry import built_in_mechanisms, get_mechanism

CONF = Path(__file__).resolve().parents[1] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
SHIPPED = built_in_mechanisms()


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_mechanism_is_an_option_with_its_parameters(name):
    """``mechanism=<name>`` composes to its name and every keyword parameter (null), from
    the registry's index, with no YAML in conf/ (``mechanism.<param>=v`` sets any)."""
    register_configs([])
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        cfg = compose("config", overrides=[f"mechanism={name}"])
    config = OmegaConf.to_container(cfg.mechanism)
    assert config == {"name": name, **dict.fromkeys(SHIPPED[name].parameters)}


def test_a_mechanism_yaml_adds_something_a_user_sets():
    """``conf/mechanism/`` holds only what the registry cannot say: ``all`` (the
    experiment's own mechanisms) and YAMLs with a value that is not null."""
    for path in (CONF / "mechanism").glob("*.yaml"):
        config = yaml.safe_load(path.read_text())
        if path.stem == "all":
            continue
        assert path.stem in SHIPPED, f"{path.name} names no registered mechanism"
        assert config["name"] == path.stem and set(config) - {"name"} <= set(
            SHIPPED[path.stem].parameters)
        assert any(v is not None for k, v in config.items() if k != "name"), (
            f"{path.name} only repeats the registry (name and nulls): delete it")


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_resolves(experiment, scale):
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        cfg = compose("config", overrides=[f"experiment={experiment}", f"scale={scale}"])
    spec = spec_from_config(cfg)
    assert spec.name == experiment and spec.cells and spec.plots  # plots checked by the spec


def _store_with_every_cell(spec) -> pd.DataFrame:
    """Rows as the runner writes them, for every cell of ``spec`` and every metric its claims
    read, with arbitrary values: what a finished run's store looks like, minus the numbers."""
    rng = np.random.default_rng(0)
    metrics = list(spec.metrics)
    for claim in spec.claims:
        named = claim.get("metric") or []
        metrics += [m for m in ([named] if isinstance(named, str) else named) if m not in metrics]
    rows = []
    for cell in spec.cells:
        info = get_mechanism(cell.mechanism)
        base = {
            "experiment": spec.name, "scale": "paper", "cell": cell.cell_id,
            "dataset": cell.dataset, "dataset_options": canonical_json(cell.dataset_options),
            "mechanism": cell.mechanism, "label": cell.label, "role": info.role,
            "params": canonical_json(cell.params), **cell.params,
            "privacy": "none" if cell.noise_free else info.privacy, "caveat": None,
            "noise_free": cell.noise_free, "status": "ok",
        }
        rows += [{**base, "rep": rep, "metric": m, "value": rng.uniform(), "seconds": 1.0}
                 for rep in range(3) for m in metrics]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_claim_can_be_judged_at_paper_scale(experiment):
    """A claim that a complete paper-scale run could not judge is a config error: a selector
    naming no series, a where outside the grid, a series that is not one cell per group.
    Found this way: epasto2022 Fig. 7 and sala2011 Fig. 7 compared a series without epsilon
    with one swept over it."""
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        cfg = compose("config", overrides=[f"experiment={experiment}", "scale=paper"])
    spec = spec_from_config(cfg)
    if not spec.claims:
        pytest.skip(f"{experiment} states no claim")
    frame = _store_with_every_cell(spec)
    twins = frame[frame["noise_free"]]
    results = _claims(spec, frame[~frame["noise_free"]], twins if not twins.empty else None)
    unjudged = {r["id"]: r["reason"] for r in results if r["verdict"] == "not evaluated"}
    assert not unjudged, unjudged
