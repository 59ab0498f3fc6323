"""Grid expansion and the clear errors for bad experiments."""

import pytest

from experiments.spec import resolve_experiment
from experiments.tests.conftest import toy_experiment
from privpub.errors import ConfigError, UnknownNameError


def test_grid_expansion_counts_and_parameters():
    spec = resolve_experiment(toy_experiment(), scale="paper")
    drops = [c for c in spec.cells if c.mechanism == "toy_drop"]
    copies = [c for c in spec.cells if c.mechanism == "toy_copy"]
    assert sorted(c.params["epsilon"] for c in drops) == [0.5, 1, 2, 4]
    assert len(copies) == 1 and copies[0].params == {}  # toy_copy takes no epsilon
    assert len({c.cell_id for c in spec.cells}) == len(spec.cells) == 5


def test_cell_id_ignores_int_vs_float_and_key_order():
    a = resolve_experiment(toy_experiment(grid={"epsilon": [1]}), scale="paper").cells[0]
    b = resolve_experiment(toy_experiment(grid={"epsilon": [1.0]}), scale="paper").cells[0]
    assert a.cell_id == b.cell_id


def test_scale_overrides_merge_over_the_paper_setting():
    exp = toy_experiment(scales={"smoke": {"grid": {"epsilon": [1]}, "repetitions": 1}})
    smoke = resolve_experiment(exp, scale="smoke")
    paper = resolve_experiment(exp, scale="paper")
    assert smoke.repetitions == 1 and paper.repetitions == 3
    assert len(smoke.cells) == 2 and len(paper.cells) == 5


def test_command_line_selection():
    spec = resolve_experiment(
        toy_experiment(), scale="paper", mechanism={"name": "toy_drop", "epsilon": 0.25}
    )
    assert [(c.mechanism, c.params["epsilon"]) for c in spec.cells] == [("toy_drop", 0.25)]
    spec = resolve_experiment(
        toy_experiment(), scale="paper", mechanism={"name": None, "epsilon": 3}
    )
    assert {c.params.get("epsilon") for c in spec.cells} == {3, None}


def test_per_dataset_grid():
    exp = toy_experiment(datasets=["sbm_small", {"name": "sbm_epasto", "grid": {"epsilon": [9]}}])
    spec = resolve_experiment(exp, scale="paper")
    eps = {c.params["epsilon"] for c in spec.cells if c.dataset == "sbm_epasto" and c.params}
    assert eps == {9}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"grid": {"epsilon": [0]}}, "epsilon must be a finite number > 0"),
        ({"grid": {"epsilon": [-1]}}, "epsilon must be a finite number > 0"),
        (
            {"mechanisms": [{"name": "toy_drop", "params": {"bogus": 1}}]},
            "has no parameter 'bogus'",
        ),
        ({"metrics": []}, "has no metrics"),
        ({"repetitions": 0}, "repetitions must be an integer >= 1"),
        ({"metrics": ["ks"]}, "does not fit mechanism"),
        ({"datasets": ["karate"]}, "takes binary_matrix input"),
        ({"datasets": [{"name": "sbm_small", "nonsense": 3}]}, "has no option nonsense"),
        ({"mechanisms": ["toy_drop"], "grid": {}}, "needs epsilon"),
        ({"grid": {"epsilon": [1], "k": [1]}}, "k must be an integer >= 2"),
        ({"grid": {"epsilon": [1], "k": [2.5]}}, "k must be an integer"),
        ({"grid": {"epsilon": [1], "depth": [-1]}}, "depth must be an integer >= 0"),
    ],
)
def test_bad_experiments_fail_clearly(change, message):
    with pytest.raises(ConfigError, match=message):
        resolve_experiment(toy_experiment(**change), scale="paper")


@pytest.mark.parametrize(
    "change, what",
    [
        ({"datasets": ["no_such_data"]}, "dataset"),
        ({"mechanisms": ["no_such_mech"]}, "mechanism"),
        ({"metrics": ["no_such_metric"]}, "metric"),
    ],
)
def test_unknown_names_list_the_known_ones(change, what):
    with pytest.raises(UnknownNameError) as err:
        resolve_experiment(toy_experiment(**change), scale="paper")
    assert f"unknown {what}" in str(err.value).lower()
    assert "known" in str(err.value).lower()


def test_unknown_scale_and_fixed_param_nobody_takes():
    with pytest.raises(ConfigError, match="unknown scale"):
        resolve_experiment(toy_experiment(), scale="huge")
    with pytest.raises(ConfigError, match="no selected mechanism takes theta"):
        resolve_experiment(toy_experiment(), scale="paper", mechanism={"name": None, "theta": 5})


def test_command_line_dataset_names_the_same_cells_and_keeps_the_entry_grid():
    exp = toy_experiment(datasets=["sbm_small", {"name": "sbm_epasto", "grid": {"epsilon": [9]}}])
    base = resolve_experiment(exp, scale="paper")
    # what Hydra passes for dataset=sbm_small: the YAML with every default option
    cli = {
        "name": "sbm_small",
        "n_rows": 128,
        "n_cols": 128,
        "block_size": 16,
        "p_in": 0.8,
        "p_out": 0.05,
    }
    picked = resolve_experiment(exp, scale="paper", dataset=cli)
    assert {c.cell_id for c in picked.cells} == {
        c.cell_id for c in base.cells if c.dataset == "sbm_small"
    }
    picked = resolve_experiment(exp, scale="paper", dataset={"name": "sbm_epasto"})
    assert {c.params.get("epsilon") for c in picked.cells} == {9, None}
    changed = resolve_experiment(exp, scale="paper", dataset={**cli, "n_rows": 64})
    assert all(c.dataset_options == {"n_rows": 64} for c in changed.cells)
