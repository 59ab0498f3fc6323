"""Grid expansion and the clear errors for bad experiments."""

import pytest

from privpub.errors import ConfigError, UnknownNameError
from privpub.experiments.spec import resolve_experiment
from privpub.experiments.tests.conftest import toy_experiment


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
        ({"grid": {"epsilon": [1], "k": [0]}}, "k must be an integer >= 1"),
        ({"grid": {"epsilon": [1], "k": [2.5]}}, "k must be an integer"),
        ({"grid": {"epsilon": [1], "depth": [-1]}}, "depth must be an integer >= 0"),
        ({"plots": [{"x": "epsilon", "metric": "l1", "linestyles": {"a": "wavy"}}]},
         "linestyles maps a series name to one of"),
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


def test_the_large_scale_is_opt_in():
    with pytest.raises(ConfigError, match="has no large scale"):
        resolve_experiment(toy_experiment(), scale="large")
    exp = toy_experiment()
    exp["scales"] = {"large": {"repetitions": 1}}
    assert resolve_experiment(exp, scale="large").repetitions == 1


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


# --------------------------------------------------------------- the command line always wins
def _scaled():
    return toy_experiment(
        datasets=["sbm_small", {"name": "sbm_epasto", "grid": {"epsilon": [9]}}],
        mechanisms=[{"name": "toy_drop", "label": "drop", "grid": {"epsilon": [7]}}, "toy_copy"],
        scales={"smoke": {"grid": {"epsilon": [1, 2]}, "repetitions": 2,
                          "mechanisms": {"toy_copy": {"params": {"tag": 3}}}}},
    )


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_command_line_beats_the_scale_block_and_every_grid(scale):
    spec = resolve_experiment(
        _scaled(), scale=scale, overrides={"grid.epsilon": [0.3], "repetitions": 4}
    )
    eps = {c.params.get("epsilon") for c in spec.cells if c.mechanism == "toy_drop"}
    assert eps == {0.3} and spec.repetitions == 4  # beats the entry's and the dataset's grid


def test_command_line_can_replace_the_mechanism_list_at_any_scale():
    spec = resolve_experiment(_scaled(), scale="smoke", overrides={"mechanisms": ["toy_drop"]})
    assert {c.mechanism for c in spec.cells} == {"toy_drop"}


def test_a_bad_override_value_is_an_error_at_smoke_too():
    with pytest.raises(ConfigError, match="epsilon must be a finite number > 0"):
        resolve_experiment(_scaled(), scale="smoke", overrides={"grid.epsilon": [0]})
    with pytest.raises(ConfigError, match="repetitions must be an integer"):
        resolve_experiment(_scaled(), scale="smoke", overrides={"repetitions": "many"})


def test_unknown_keys_and_grid_parameters_are_errors():
    with pytest.raises(ConfigError, match="unknown experiment key 'repetition'.*'repetitions'"):
        resolve_experiment(_scaled(), scale="smoke", overrides={"repetition": 3})
    with pytest.raises(ConfigError, match="no selected mechanism takes grid parameter 'thet'"):
        resolve_experiment(_scaled(), scale="smoke", overrides={"grid.thet": [1]})
    with pytest.raises(ConfigError, match="no mechanism takes grid parameter 'tehta'"):
        resolve_experiment(toy_experiment(grid={"epsilon": [1], "tehta": [2]}), scale="paper")
    with pytest.raises(ConfigError, match="unknown key"):
        resolve_experiment(toy_experiment(mechanisms=[{"name": "toy_drop", "lable": "x"}]))
    with pytest.raises(ConfigError, match="scale block cannot set notes"):
        resolve_experiment(toy_experiment(scales={"smoke": {"notes": "x"}}), scale="smoke")


def test_scale_blocks_patch_mechanisms_so_base_additions_run_at_every_scale():
    exp = _scaled()
    exp["mechanisms"].append({"name": "toy_drop", "label": "added", "params": {"fail_at": 99}})
    smoke = resolve_experiment(exp, scale="smoke")
    assert {c.label for c in smoke.cells} == {"drop", "toy_copy", "added"}
    assert [c.params for c in smoke.cells if c.mechanism == "toy_copy"] == [{"tag": 3}] * 2
    dropped = dict(exp, scales={"smoke": {"mechanisms": {"added": {"drop": True}}}})
    assert "added" not in {c.label for c in resolve_experiment(dropped, scale="smoke").cells}
    with pytest.raises(ConfigError, match="patches mechanisms by label"):
        resolve_experiment(dict(exp, scales={"smoke": {"mechanisms": ["toy_copy"]}}), scale="smoke")
    with pytest.raises(ConfigError, match="matches no entry"):
        resolve_experiment(dict(exp, scales={"smoke": {"mechanisms": {"nope": {}}}}), scale="smoke")


def test_command_line_mechanism_lists_and_entry_edits_beat_the_scale_patches():
    # As Hydra composes them: the command line's edits are already in `experiment`; the
    # smoke block patches "drop" and drops toy_copy, by the file's labels.
    exp = _scaled()
    exp["scales"]["smoke"]["mechanisms"] = {"drop": {"params": {"fail_at": 99}},
                                            "toy_copy": {"drop": True}}
    file_list = [dict(m) if isinstance(m, dict) else m for m in exp["mechanisms"]]

    def smoke(overrides, mechanisms, **kw):
        return resolve_experiment(dict(exp, mechanisms=mechanisms), scale="smoke",
                                  overrides=overrides, **kw)

    # a whole list runs as given: no "patch matches no entry", no patches applied
    mine = [{"name": "toy_drop", "label": "mine"}]
    spec = smoke({"mechanisms": mine}, mine)
    assert {(c.label, c.params.get("fail_at")) for c in spec.cells} == {("mine", None)}
    # a relabelled entry keeps its patch (same cells: relabelling reuses stored rows)
    relabelled = [dict(file_list[0], label="renamed"), file_list[1]]
    spec = smoke({"mechanisms.0.label": "renamed"}, relabelled, file_mechanisms=file_list)
    assert {(c.label, c.params.get("fail_at")) for c in spec.cells} == {("renamed", 99)}
    # an edit beats the patch; an edited entry that the block drops runs
    edited = [dict(file_list[0], params={"fail_at": 5}), file_list[1]]
    spec = smoke({"mechanisms.0.params.fail_at": 5, "mechanisms.1": "toy_copy"}, edited,
                 file_mechanisms=file_list)
    assert {(c.label, c.params.get("fail_at")) for c in spec.cells} == {
        ("drop", 5), ("toy_copy", None)}
    # an entry a scale-replaced list does not have: a clear error, not an IndexError
    with pytest.raises(ConfigError, match="cannot set datasets.5.name"):
        resolve_experiment(dict(exp, scales={"smoke": {"datasets": ["sbm_small"]}}),
                           scale="smoke", overrides={"datasets.5.name": "karate"})


def test_dataset_options_without_a_name_apply_to_the_datasets_that_have_them():
    spec = resolve_experiment(toy_experiment(), scale="paper", dataset={"name": None, "n_rows": 64})
    assert {c.dataset_options.get("n_rows") for c in spec.cells} == {64}
    with pytest.raises(ConfigError, match="no dataset of the experiment has option lcc"):
        resolve_experiment(toy_experiment(), scale="paper", dataset={"name": None, "lcc": True})


def test_added_mechanisms_join_the_experiments_own():
    spec = resolve_experiment(toy_experiment(), scale="paper",
                              add_mechanisms=[{"name": "toy_drop", "label": "mine",
                                               "params": {"fail_at": 99}}])
    assert {c.label for c in spec.cells} == {"toy_drop", "toy_copy", "mine"}


def test_every_metric_gets_a_figure():
    spec = resolve_experiment(toy_experiment(), scale="paper")
    drawn = {p["metric"] for p in spec.plots if p.get("kind", "lines") == "lines"}
    assert drawn == {"jaccard", "created_fraction"}
    assert [p for p in spec.plots if p.get("auto")] == [
        {"x": "epsilon", "metric": "created_fraction", "auto": True}
    ]


def test_spec_round_trips_through_json():
    import json

    from privpub.experiments.spec import ExperimentSpec

    spec = resolve_experiment(toy_experiment(), scale="paper")
    back = ExperimentSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert [c.cell_id for c in back.cells] == [c.cell_id for c in spec.cells]
    assert back.labels == spec.labels and back.plots == spec.plots


def test_k_is_the_anonymity_parameter_only_for_k_anonymous_mechanisms():
    exp = {"name": "t", "datasets": ["gaussian_mixture"], "mechanisms": ["mondrian"],
           "grid": {"k": [1]}, "metrics": ["emd"], "plots": []}
    with pytest.raises(ConfigError, match="k must be an integer >= 2"):
        resolve_experiment(exp, scale="paper")
    exp["grid"] = {"k": [2]}
    assert resolve_experiment(exp, scale="paper").cells


def test_a_baseline_that_draws_another_mechanisms_streams_keeps_its_own_cells():
    # epasto2022's non-smooth baseline post-processes the smooth algorithm's clusters: it
    # draws the smooth mechanism's seeds, but it is a cell of its own in the store
    import privpub.baselines.suppression_k_anonymity  # noqa: F401  (registers both mechanisms)
    from privpub.experiments.seeding import trial_seeds
    from privpub.registry import get_mechanism

    spec = resolve_experiment({
        "name": "pair", "datasets": ["sbm_small"], "grid": {"k": [2, 3]}, "metrics": ["jaccard"],
        "mechanisms": ["smooth_k_anonymity", "nonsmooth_k_anonymity", "mondrian_binary"],
    })
    by = {(c.mechanism, c.params["k"]): c for c in spec.cells}
    for k in (2, 3):
        smooth, nonsmooth = by["smooth_k_anonymity", k], by["nonsmooth_k_anonymity", k]
        assert nonsmooth.seeds_of == "smooth_k_anonymity"
        assert nonsmooth.seed_identity == smooth.seed_identity
        assert nonsmooth.cell_id != smooth.cell_id
        assert nonsmooth.identity["mechanism"] == "nonsmooth_k_anonymity"
        a, b = trial_seeds(0, smooth.seed_identity, 1), trial_seeds(0, nonsmooth.seed_identity, 1)
        assert a[1].generate_state(4).tolist() == b[1].generate_state(4).tolist()
    # every other mechanism keeps its own streams, and the pair's parameters match
    mondrian = by["mondrian_binary", 2]
    assert mondrian.seeds_of is None and mondrian.seed_identity == mondrian.identity
    assert by["smooth_k_anonymity", 2].seed_identity != mondrian.seed_identity
    assert (get_mechanism("nonsmooth_k_anonymity").parameters
            == get_mechanism("smooth_k_anonymity").parameters)


def test_a_dataset_grid_never_sweeps_an_added_mechanism_it_was_not_asked_to():
    """day2016 Fig. 3's theta grid on facebook swept a mechanism added with a fixed
    theta, and best_over then drew its best theta in hindsight. The experiment's own
    mechanisms keep following the dataset's grid; an added one only for a key it sweeps."""
    exp = toy_experiment(datasets=[{"name": "sbm_small", "grid": {"tag": [1, 2, 3]}}])
    added = [{"name": "toy_copy", "label": "fixed", "params": {"tag": 7}},
             {"name": "toy_copy", "label": "default"},
             {"name": "toy_copy", "label": "swept", "params": {"depth": 1},
              "grid": {"tag": [5, 6]}}]
    spec = resolve_experiment(exp, scale="paper", add_mechanisms=added)
    tags = {}
    for cell in spec.cells:
        tags.setdefault(cell.label, set()).add(cell.params.get("tag"))
    assert tags["toy_copy"] == {1, 2, 3}  # the experiment's own: as before
    assert tags["fixed"] == {7} and tags["default"] == {None}
    assert tags["swept"] == {1, 2, 3}  # it sweeps tag: the dataset narrows the sweep
    chosen = resolve_experiment(exp, scale="paper", mechanism={"name": "toy_copy"})
    assert {c.params.get("tag") for c in chosen.cells} == {1, 2, 3}
