"""Figures and summaries are drawn from the store with the plot spec's layout."""

from experiments.figures import draw_experiment
from experiments.runner import run_experiment
from experiments.spec import resolve_experiment
from experiments.tests.conftest import TOY, toy_experiment


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
    first, second = text.split("## jaccard vs epsilon")[1:]
    assert 'sbm_small {"n_rows":64}' in first and "toy_drop" in first
    # panel: null, hue: dataset: one table row per dataset, no panel level
    assert "__all__" not in second and "toy_drop" not in second
    assert (out / "notes.md").read_text().startswith("differs from the paper")
    assert "toy" in (tmp_path / "report.md").read_text()
