"""Every override the README documents applies at every scale (resolved through Hydra, as
`python run.py` does, without running anything)."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from privpub.experiments.cli import spec_from_config, variant_slug
from privpub.experiments.hydra_support import register_configs

CONF = Path(__file__).resolve().parents[1] / "conf"
TOY = "privpub.experiments.tests.toy_plugins"


def spec(*overrides):
    register_configs(list(overrides))  # as run.py does: mechanism=<name> needs no YAML
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        cfg = compose("config", overrides=list(overrides))
    return spec_from_config(cfg, overrides=list(overrides))


def values(s, key):
    return {c.params.get(key) for c in s.cells if key in c.params}


SCALES = ["smoke", "small", "paper"]


@pytest.mark.parametrize("scale", SCALES)
def test_grid_repetitions_and_mechanism_list(scale):
    s = spec(f"scale={scale}", "experiment.grid.epsilon=[0.3]", "experiment.repetitions=7")
    assert values(s, "epsilon") == {0.3} and s.repetitions == 7
    s = spec(f"scale={scale}", "experiment.mechanisms=[randomized_response_node]")
    assert {c.mechanism for c in s.cells} == {"randomized_response_node"}


@pytest.mark.parametrize("scale", SCALES)
def test_command_line_grid_beats_mechanism_and_dataset_grids(scale):
    # day2016 Fig. 3: Truncation has its own theta grid, Facebook a per-dataset one
    s = spec("experiment=day2016_fig3", f"scale={scale}", "++experiment.grid.theta=[4]",
             "experiment.grid.epsilon=[1]")
    assert values(s, "theta") == {4} and values(s, "epsilon") == {1}


@pytest.mark.parametrize("scale", SCALES)
def test_dataset_and_mechanism_selections(scale):
    s = spec(f"scale={scale}", "dataset=sbm_small")
    assert {c.dataset for c in s.cells} == {"sbm_small"}
    s = spec(f"scale={scale}", "+dataset.n_rows=64")
    assert {c.dataset_options.get("n_rows") for c in s.cells} == {64}
    s = spec(f"scale={scale}", "mechanism=randomized_response_edge", "mechanism.epsilon=0.7")
    assert {c.mechanism for c in s.cells} == {"randomized_response_edge"}
    assert values(s, "epsilon") == {0.7}


@pytest.mark.parametrize("scale", SCALES)
def test_added_mechanisms_join_the_experiments_own(scale):
    s = spec(f"scale={scale}", f"plugins=[{TOY}]", "add_mechanisms=[toy_copy]")
    assert {c.mechanism for c in s.cells} == {
        "randomized_response_edge", "randomized_response_node", "toy_copy"}


def test_what_changes_the_computation_draws_a_variant():
    assert variant_slug(["experiment=day2016_fig3", "scale=paper", "n_jobs=2"]) is None
    assert variant_slug(["experiment.title=x", "results_dir=/tmp/r"]) is None
    assert variant_slug(["dataset=karate"]) == "dataset=karate"
    assert variant_slug(["experiment.grid.epsilon=[0.1,1]"]) == "grid.epsilon=0.1,1"
    assert variant_slug([], seed=1) == "seed=1"
    assert len(variant_slug([f"dataset.n_rows={i}" for i in range(40)])) <= 80


@pytest.mark.parametrize("scale", SCALES)
def test_only_the_mechanisms_an_experiment_sweeps_are_tuned_in_hindsight(scale):
    """day2016 Fig. 3 draws Truncation at its best theta (``best_over: theta`` over the theta
    grid it gives Truncation); a mechanism added with a theta sweep, or a sweep only the
    command line makes, keeps a series per theta."""
    fig3 = ("experiment=day2016_fig3", f"scale={scale}")
    assert spec(*fig3).tuned_in_hindsight == {"theta": ["Truncation"]}
    assert spec(*fig3, "mechanism.theta=16").tuned_in_hindsight == {"theta": ["Truncation"]}
    added = "add_mechanisms=[{name: truncation, label: T2, grid: {theta: [4, 16]}}]"
    assert spec(*fig3, added).tuned_in_hindsight == {"theta": ["Truncation"]}
    assert spec(*fig3, "mechanism=flowgraph").tuned_in_hindsight == {"theta": []}
