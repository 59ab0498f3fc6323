"""Figures and summaries are drawn from the store with the plot spec's layout."""

from dataclasses import replace

from privpub.experiments.figures import draw_experiment
from privpub.experiments.runner import run_experiment
from privpub.experiments.spec import resolve_experiment
from privpub.experiments.tests.conftest import TOY, toy_experiment


def test_plot_spec_layout_and_files(tmp_path):
    exp = toy_experiment(
        datasets=["sbm_small", {"name": "sbm_small", "n_rows": 64}],
        repetitions=2,
        plots=[
            {"x": "epsilon", "metric": "jaccard"},
            {"x": "epsilon", "metric": "jaccard", "panel": None, "hue": "dataset", "name": "one"},
        ],
        notes="differs from the paper because ...",
    )
    spec = resolve_experiment(exp, scale="paper")
    spec.cells = [c for c in spec.cells if c.mechanism == "toy_drop"]
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    text = draw_experiment(spec, tmp_path)
    out = tmp_path / "toy" / "paper"
    for stem in ("jaccard_vs_epsilon", "one"):
        assert (out / f"{stem}.png").stat().st_size > 1000
        assert (out / f"{stem}.pdf").exists()
    # default layout: a panel per dataset (options make a dataset distinct), series as lines
    first, second = text.split("## ")[1:3]
    assert first.startswith("jaccard_vs_epsilon: Jaccard similarity vs epsilon")
    assert 'sbm_small (n_rows=64)' in first and "toy_drop" in first
    # panel: null, hue: dataset: one table row per dataset, no panel level
    assert "__all__" not in second and "toy_drop" not in second
    assert (out / "notes.md").read_text().startswith("differs from the paper")
    assert "toy" in (tmp_path / "report.md").read_text()


def test_tables_ccdf_best_over_and_range(tmp_path):
    from privpub.experiments.store import RELEASE_METRIC, ResultStore, decode_vector

    exp = toy_experiment(
        datasets=["karate"],
        mechanisms=[
            {"name": "toy_noisy_histogram", "grid": {"theta": [1, 50]}},
            {"name": "original_degree_histogram", "label": "true"},
        ],
        grid={"epsilon": [0.5, 4]},
        metrics=["l1", "nodes"],
        repetitions=5,
        keep_releases=True,
        plots=[
            {"x": "epsilon", "metric": "l1", "best_over": "theta", "name": "best"},
            {"x": "epsilon", "metric": "l1", "error": "range", "name": "range"},
            {
                "x": "epsilon",
                "metric": "l1",
                "where": {"theta": 50},
                "references": [{"name": "n", "metric": "nodes", "label": "true"}],
                "name": "where",
            },
            {
                "kind": "table",
                "name": "tab",
                "rows": ["dataset"],
                "columns": {"label": ["true"], "metric": ["nodes"]},
                "paper": {"karate": [34]},
            },
            {"kind": "ccdf", "select": "l1", "where": {"epsilon": 4}},
        ],
    )
    spec = resolve_experiment(exp, scale="paper")
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    text = draw_experiment(spec, tmp_path)
    out = tmp_path / "toy" / "paper"
    for stem in ("best", "range", "ccdf"):
        assert (out / f"{stem}.png").stat().st_size > 1000
    # best over theta: one line, theta = 1 (less noise) chosen at both epsilons
    assert "toy_noisy_histogram (theta tuned in hindsight, not private)" in text
    assert "theta=50" not in text.split("##")[1]
    # where: only theta = 50; the reference mechanism takes no theta, so it stays (a dashed
    # level); and a reference line from another metric
    where = text.split("## where:")[1].split("\n## ")[0]
    assert "toy_noisy_histogram" in where and "theta=1" not in where
    assert "true" in where
    assert "reference line n: 34" in where
    # the table: our |V| beside the paper's
    table = (out / "tab.csv").read_text()
    assert "true nodes ours" in table and "34" in table.splitlines()[1]
    # stored releases: one per trial, and the truth once, decodable to the true histogram
    frame = ResultStore(out / "store").load()
    kept = frame[frame["metric"] == RELEASE_METRIC]
    assert len(kept) == len(spec.cells) * 5 + 1
    truth = decode_vector(kept[kept["mechanism"] == "truth"]["release"].iloc[0])
    assert truth.sum() == 34 and (truth >= 0).all()
    # the ccdf draws the median-l1 repetition of each series
    l1 = frame[(frame["metric"] == "l1") & (frame["epsilon"] == 4) & (frame["theta"] == 50)]
    median_rep = l1.sort_values(["value", "rep"])["rep"].iloc[2]
    line = [s for s in text.split("\n") if "theta=50" in s and "karate" in s][-1]
    assert line.split()[-2] == str(median_rep)


def test_plot_specs_are_checked_before_running():
    import pytest

    from privpub.errors import ConfigError

    for bad, message in [
        ({"kind": "pie", "metric": "jaccard"}, "unknown plot kind"),
        ({"x": "epsilon", "metric": "ks"}, "does not compute"),
        ({"kind": "ccdf", "select": "jaccard"}, "keep_releases"),
        ({"kind": "table"}, "needs columns"),
    ]:
        with pytest.raises(ConfigError, match=message):
            resolve_experiment(toy_experiment(plots=[bad]), scale="paper")


def test_titles_name_their_metric_and_a_failing_claim_reaches_the_report(tmp_path, monkeypatch):
    """Built from a constructed store: the paper claims toy_copy (Jaccard 1) is beaten."""
    import json

    from privpub.plots import lines

    titles = {}
    original = lines.save_figure

    def capture(fig, out_stem):
        titles[out_stem.name] = fig.get_suptitle()
        return original(fig, out_stem)

    monkeypatch.setattr(lines, "save_figure", capture)
    claim = {"id": "drop_beats_copy", "text": "dropping beats copying", "source": "Sec 9",
             "kind": "compare", "metric": "jaccard", "series": "toy_drop", "than": "toy_copy",
             "per": ["dataset"], "where": {"epsilon": 4}}
    exp = toy_experiment(repetitions=1, claims=[claim],
                         plots=[{"x": "epsilon", "metric": "jaccard"}])
    spec = resolve_experiment(exp, scale="paper")
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    draw_experiment(spec, tmp_path)
    assert "Jaccard similarity vs epsilon" in titles["jaccard_vs_epsilon"]
    assert "created entries vs epsilon" in titles["created_fraction_vs_epsilon"]  # automatic
    (result,) = json.loads((tmp_path / "toy" / "paper" / "claims.json").read_text())
    assert result["verdict"] == "not held" and result["groups"][0]["other"] == 1.0
    report = (tmp_path / "report.md").read_text()
    assert "drop_beats_copy" in report and "not held" in report
    assert "not held" in (tmp_path / "report.html").read_text()


def test_a_draw_with_nothing_changed_is_skipped_and_any_change_redraws(tmp_path):
    exp = toy_experiment(datasets=["sbm_small"], repetitions=2,
                         plots=[{"x": "epsilon", "metric": "jaccard", "name": "j"}])
    spec = resolve_experiment(exp, scale="paper")
    spec.cells = [c for c in spec.cells if c.mechanism == "toy_drop"]
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    png = tmp_path / "toy" / "paper" / "j.png"

    def drawn(**kwargs):
        png.unlink(missing_ok=True)
        text = draw_experiment(spec, tmp_path, **kwargs)
        return png.exists(), text

    first = drawn()
    assert first[0] and "toy_drop" in first[1]
    assert drawn() == (False, first[1])  # skipped, same text printed
    assert drawn(redraw=True)[0]
    spec.cells = [replace(c, label="renamed") for c in spec.cells]  # a new label: redraw
    assert drawn()[0]
    assert not drawn()[0]
    # a store write (more repetitions) redraws
    spec.repetitions = 3
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    assert drawn()[0]


def test_a_varied_parameter_is_never_averaged_away(tmp_path):
    """A table (or a line) whose rows differ in something it does not show took
    their mean (epasto2022 Fig. 3c's suppressed_fraction_table over three epsilons). Now a
    table gains a column for it and a line plot a series; a tradeoff keeps its series."""
    exp = toy_experiment(
        datasets=["sbm_small"], repetitions=1,
        mechanisms=[{"name": "toy_drop", "label": "A"},
                    {"name": "toy_drop", "label": "B", "params": {"fail_at": 99}}],
        plots=[{"x": "epsilon", "metric": "jaccard", "panel": None, "hue": "dataset",
                "name": "pooled"},
               {"kind": "table", "name": "tab", "rows": ["dataset"], "columns": {"label": ["A"]},
                "metrics": ["jaccard"]},
               {"kind": "tradeoff", "x_metric": "jaccard", "y_metric": "created_fraction",
                "along": "epsilon", "name": "trade"}])
    spec = resolve_experiment(exp, scale="paper")
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    text = draw_experiment(spec, tmp_path)
    pooled = text.split("## pooled")[1].split("\n## ")[0]
    assert "label=A" in pooled and "label=B" in pooled
    table = (tmp_path / "toy" / "paper" / "tab.csv").read_text().splitlines()
    assert table[0].startswith("dataset,epsilon") and len(table) == 1 + 4
    trade = text.split("## trade")[1]
    assert "A" in trade and "B" in trade


def _legend_styles(fig) -> dict:
    """{series: (colour, marker, legend text)} of a drawn figure."""
    from matplotlib.legend import Legend

    (legend,) = {id(x): x for x in fig.findobj(Legend)}.values()
    texts = [t.get_text() for t in legend.get_texts()]
    out = {}
    for container in fig.axes[0].containers:  # one errorbar container per series
        name = container.get_label()
        line = container.lines[0]
        shown = [t for t in texts if t.startswith(name)]
        out[name] = (str(line.get_color()), str(line.get_marker()), shown[0])
    return out


def test_colours_markers_and_marks_stay_when_a_series_is_added(tmp_path, monkeypatch):
    """A series' colour, marker and caveat mark do not change when a plug-in's series is
    added (Truncation's mark went from § to ¶ and a plug-in from black to purple between
    runs); within a figure, every series has a marker of its own."""
    from privpub.plots import lines

    drawn = {}
    original = lines.save_figure

    def capture(fig, out_stem):
        if out_stem.name == "j":
            drawn[out_stem.parent.parent.name] = _legend_styles(fig)
        return original(fig, out_stem)

    monkeypatch.setattr(lines, "save_figure", capture)
    # labels of the checkout's experiment files (day2016_fig3's), on toy mechanisms
    own = [{"name": "toy_drop", "label": "Flowgraph"},
           {"name": "toy_caveated", "label": "Truncation", "params": {"tag": 1}},
           {"name": "toy_caveated", "label": "θ-Cumulative", "params": {"tag": 2}}]
    added = [{"name": "toy_caveated", "label": "A newcomer", "params": {"tag": 3}},
             {"name": "toy_drop", "label": "Another", "params": {"fail_at": 99}}]
    for name, entries in (("without", own), ("with", own + added)):
        exp = toy_experiment(name=name, datasets=["sbm_small"], repetitions=1,
                             grid={"epsilon": [1, 2]}, mechanisms=entries,
                             plots=[{"x": "epsilon", "metric": "jaccard", "name": "j"}])
        spec = resolve_experiment(exp, scale="paper")
        run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
        draw_experiment(spec, tmp_path)
    without, with_added = drawn["without"], drawn["with"]
    assert len(without) == 3 and len(with_added) == 5
    for legend, style in without.items():
        assert with_added[legend] == style, legend  # same mark (in the text), colour, marker
    assert len({marker for _, marker, _ in with_added.values()}) == 5
    assert len({colour for colour, _, _ in with_added.values()}) == 5


def test_the_default_figure_draws_its_series_with_different_markers(tmp_path, monkeypatch):
    """`python run.py`'s figure drew RR (edge-DP) and RR (node-DP) both with '<'."""
    from privpub.experiments.catalog import CONF_DIR, load_experiments
    from privpub.plots import lines

    drawn = []
    original = lines.save_figure

    def capture(fig, out_stem):
        drawn.append(_legend_styles(fig))
        return original(fig, out_stem)

    monkeypatch.setattr(lines, "save_figure", capture)
    exp = next(e for path, e, _ in load_experiments(CONF_DIR) if path.stem == "default")
    spec = resolve_experiment(exp, scale="smoke")
    run_experiment(spec, results_dir=tmp_path, progress=False)
    draw_experiment(spec, tmp_path)
    assert len(drawn) == len(spec.plots)
    for styles in drawn:
        assert len(styles) == 2
        assert len({marker for _, marker, _ in styles.values()}) == 2, styles
        assert len({colour for colour, _, _ in styles.values()}) == 2, styles


def test_a_series_the_stored_audit_refutes_is_marked_in_the_legend(tmp_path, monkeypatch):
    """A configuration whose claim the stored audit refutes is marked in the figure's legend
    and footnotes, as clearly as a caveat; a caveat-free series the audit holds is not."""
    import json

    from privpub.audit.stored import AUDIT_DIR, VERDICTS_FILE
    from privpub.plots import lines
    from privpub.plots.series import caveat_mark

    drawn = {}
    original = lines.save_figure

    def capture(fig, out_stem):
        drawn["legend"] = _legend_styles(fig)
        drawn["notes"] = "\n".join(t.get_text() for f in fig.subfigs for t in f.texts)
        return original(fig, out_stem)

    monkeypatch.setattr(lines, "save_figure", capture)
    audit = tmp_path / AUDIT_DIR
    audit.mkdir()
    record = {"config": {"epsilon": 1}, "mode": "quick", "privacy": "edge-DP", "epsilon": 1,
              "caveat": None, "samples": 10, "seconds": 1.0, "code_hash": "x"}
    (audit / VERDICTS_FILE).write_text(json.dumps([
        {**record, "mechanism": "toy_caveated", "verdict": "violated",
         "epsilon_lower_bound": 3.26, "witness_id": "6dded3c9bf74"},
        {**record, "mechanism": "toy_drop", "verdict": "holds", "epsilon_lower_bound": 0.7,
         "witness_id": None}]))
    exp = toy_experiment(datasets=["sbm_small"], repetitions=1, grid={"epsilon": [1, 2]},
                         mechanisms=[{"name": "toy_drop", "label": "Honest"},
                                     {"name": "toy_caveated", "label": "Too little noise"}],
                         plots=[{"x": "epsilon", "metric": "jaccard", "name": "j"}])
    spec = resolve_experiment(exp, scale="paper")
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    summary = draw_experiment(spec, tmp_path)
    legend = {" ".join(text.split()) for _, _, text in drawn["legend"].values()}
    mark = caveat_mark("toy caveat number 0")
    assert legend == {"Honest", f"Too little noise{mark} [claim refuted by audit]"}
    assert "claim refuted by audit: Too little noise: ε ≥ 3.26" in drawn["notes"]
    assert "claim refuted by audit: Too little noise: ε ≥ 3.26" in summary


def test_the_series_an_experiment_file_draws_together_have_distinct_colours():
    """A hash alone gave Flowgraph and RPS one cyan in day2016 Fig. 3; the experiment files'
    labels are coloured apart where they are drawn together, and a plug-in hashes."""
    from privpub.experiments.catalog import CONF_DIR, label_groups
    from privpub.experiments.figures import _label_styles
    from privpub.plots.series import series_styles

    styles = _label_styles()
    for group in label_groups(CONF_DIR):
        drawn = series_styles(group, styles)
        assert len({c for c, _ in drawn.values()}) == len(set(group)), group
        assert len({m for _, m in drawn.values()}) == len(set(group)), group
    assert series_styles(["Truncation (theta=4)"], styles)["Truncation (theta=4)"][0] == \
        series_styles(["Truncation"], styles)["Truncation"][0]
    assert len(set(styles.values())) == len(styles)  # every label a look of its own


def test_a_sweep_over_seeds_draws_every_seed_and_judges_claims_per_seed(tmp_path):
    """``-m seed=0,1`` drew only seed 1 under "Variant seed=0,1" (seed 0 under "Other
    stored cells"). Each seed is now a series of every figure and a row of every table, and
    the claims are judged on each seed alone, exactly as a run with that seed judges them."""
    import json

    claim = {"id": "drop_beats_copy", "text": "dropping beats copying", "source": "Sec 9",
             "kind": "compare", "metric": "jaccard", "series": "toy_drop", "than": "toy_copy"}
    exp = toy_experiment(repetitions=2, grid={"epsilon": [1, 4]}, claims=[claim],
                         plots=[{"x": "epsilon", "metric": "jaccard", "name": "j"},
                                {"kind": "table", "name": "tab", "rows": ["dataset"],
                                 "columns": {"label": ["toy_drop"], "epsilon": [4]},
                                 "metrics": ["jaccard"]}])
    spec = resolve_experiment(exp, scale="paper")
    for seed in (0, 1):
        run_experiment(spec, results_dir=tmp_path, seed=seed, progress=False, plugins=(TOY,))
    single = {}
    for seed in (0, 1):
        draw_experiment(spec, tmp_path, seed=seed, variant=f"only{seed}")
        single[seed] = json.loads((tmp_path / "toy/paper/variants" / f"only{seed}"
                                   / "claims.json").read_text())
    text = draw_experiment(spec, tmp_path, seed=[0, 1], variant="seed=0,1")
    out = tmp_path / "toy/paper/variants/seed=0,1"
    figure = text.split("## j:")[1].split("\n## ")[0]
    for seed in (0, 1):
        assert f"toy_drop (seed={seed})" in figure and f"toy_copy (seed={seed})" in figure
    assert "Other stored cells" not in (out / "summary.md").read_text()
    table = (out / "tab.csv").read_text().splitlines()
    assert table[0].startswith("dataset,seed,") and len(table) == 1 + 2
    claims = json.loads((out / "claims.json").read_text())
    assert [c["seed"] for c in claims] == [0, 1]
    for found in claims:
        seed = found.pop("seed")
        alone = dict(single[seed][0])
        assert found.pop("id") == f"{alone.pop('id')} (seed={seed})"
        assert found == alone
    meta = json.loads((out / "meta.json").read_text())
    assert meta["seeds"] == [0, 1] and meta["trials"] == 2 * spec.n_trials
    assert meta["missing"] == 0


def test_a_swept_parameter_is_tuned_in_hindsight_only_where_the_experiment_declares_it(
        tmp_path):
    """A plug-in swept over theta (``-m mechanism.theta=4,16``) collapsed into one "theta
    tuned in hindsight" series because the plot's ``best_over: theta`` tuned every label.
    Only the experiment's own entry that it sweeps over theta is tuned; an added mechanism
    is a series per theta."""
    exp = toy_experiment(
        datasets=["karate"], grid={"epsilon": [0.5, 4]}, metrics=["l1"], repetitions=2,
        mechanisms=[{"name": "toy_noisy_histogram", "label": "own",
                     "grid": {"theta": [1, 50]}}],
        plots=[{"x": "epsilon", "metric": "l1", "best_over": "theta", "name": "best"}])
    added = [{"name": "toy_noisy_histogram", "label": "mine", "grid": {"theta": [2, 40]}}]
    spec = resolve_experiment(exp, scale="paper", add_mechanisms=added)
    assert spec.tuned_in_hindsight == {"theta": ["own"]}
    run_experiment(spec, results_dir=tmp_path, progress=False, plugins=(TOY,))
    best = draw_experiment(spec, tmp_path).split("## best:")[1]
    assert "own (theta tuned in hindsight, not private)" in best
    assert "mine (theta=2)" in best and "mine (theta=40)" in best
    assert "mine (theta tuned" not in best
