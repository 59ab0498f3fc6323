"""plot_lines / lines_figure / summary_table on synthetic tidy result frames."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer

from privpub.errors import PrivpubError
from privpub.plots.lines import aggregate, lines_figure, plot_lines, summary_table

EPS = [0.1, 0.5, 1.0, 2.0]


def tidy(datasets=("facebook", "enron", "dblp"), series=("a (depth=5)", "b"), reps=3, seed=0):
    """A result frame like the store's: every combination, plus error rows and another metric."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in datasets:
        for s_i, s in enumerate(series):
            for e in EPS:
                for rep in range(reps):
                    for metric in ("l1", "ks"):
                        rows.append(
                            dict(
                                experiment="exp",
                                dataset=d,
                                mechanism=s.split()[0],
                                series=s,
                                epsilon=e,
                                rep=rep,
                                seed=rep,
                                metric=metric,
                                value=(s_i + 1) / e + rng.normal(0, 0.01),
                                seconds=0.1,
                                peak_mb=1.0,
                                privacy="node-DP",
                                status="ok",
                            )
                        )
    df = pd.DataFrame(rows)
    bad = df.iloc[:4].assign(value=1e6, status="error", series="broken")
    return pd.concat([df, bad], ignore_index=True)


def errorbar_labels(ax):
    return [c.get_label() for c in ax.containers if isinstance(c, ErrorbarContainer)]


def test_one_panel_per_dataset_and_one_line_per_series():
    fig = lines_figure(tidy(), x="epsilon", metric="l1")
    assert len(fig.axes) == 3
    assert sorted(ax.get_title() for ax in fig.axes) == ["dblp", "enron", "facebook"]
    for ax in fig.axes:
        assert errorbar_labels(ax) == ["a (depth=5)", "b"]  # the error rows' "broken" is absent
        for c in ax.containers:
            assert len(c.lines[0].get_xdata()) == len(EPS)
    legend_texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend_texts == ["a (depth=5)", "b"]  # one shared legend


def grid_shape(fig):
    spec = fig.axes[0].get_subplotspec().get_gridspec()
    return spec.get_geometry()


def test_grid_shapes():
    assert grid_shape(lines_figure(tidy(datasets=list("ab")), x="epsilon", metric="l1")) == (1, 2)
    assert grid_shape(lines_figure(tidy(datasets=list("abcd")), x="epsilon", metric="l1")) == (2, 2)
    assert grid_shape(lines_figure(tidy(datasets=list("abcdefg")), x="epsilon", metric="l1")) == (
        3,
        3,
    )


def test_grid_removes_unused_axes():
    fig = lines_figure(tidy(datasets=list("abcde")), x="epsilon", metric="l1")
    assert len(fig.axes) == 5  # 2 x 3 grid, one removed
    fig = lines_figure(tidy(datasets=list("abcde")), x="epsilon", metric="l1", ncols=2)
    assert len(fig.axes) == 5 and grid_shape(fig) == (3, 2)


def test_means_and_error_bars():
    df = pd.DataFrame(
        {
            "dataset": "d",
            "series": "s",
            "epsilon": [1.0, 1.0, 1.0, 2.0],
            "metric": "m",
            "value": [1.0, 2.0, 6.0, 5.0],
            "status": "ok",
        }
    )
    agg = aggregate(df, x="epsilon", metric="m")
    one = agg[agg["x"] == 1.0].iloc[0]
    assert one["mean"] == pytest.approx(3.0)
    assert one["std"] == pytest.approx(np.std([1, 2, 6], ddof=1))
    assert one["sem"] == pytest.approx(np.std([1, 2, 6], ddof=1) / np.sqrt(3))
    assert agg[agg["x"] == 2.0].iloc[0]["std"] == 0.0  # one repetition
    fig = lines_figure(df, x="epsilon", metric="m", error="sem")
    (container,) = fig.axes[0].containers
    np.testing.assert_allclose(container.lines[0].get_ydata(), [3.0, 5.0])
    segments = container.lines[2][0].get_segments()
    assert segments[0][1][1] - segments[0][0][1] == pytest.approx(2 * one["sem"])
    fig = lines_figure(df, x="epsilon", metric="m", error=None)
    assert fig.axes[0].containers[0].has_yerr is False


def test_log_axes():
    fig = lines_figure(tidy(), x="epsilon", metric="l1", logx=True, logy=True)
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in fig.axes)
    fig = lines_figure(tidy(), x="epsilon", metric="l1")
    assert all(ax.get_xscale() == "linear" and ax.get_yscale() == "linear" for ax in fig.axes)


def test_logx_refuses_nonpositive_x():
    df = tidy().assign(epsilon=lambda d: d["epsilon"] - 0.1)
    with pytest.raises(PrivpubError, match="logx needs"):
        lines_figure(df, x="epsilon", metric="l1", logx=True)


def test_error_rows_are_excluded():
    df = tidy(datasets=("d",))
    ok_only = lines_figure(df[df["status"] == "ok"], x="epsilon", metric="l1")
    with_errors = lines_figure(df, x="epsilon", metric="l1")
    for a, b in zip(ok_only.axes[0].containers, with_errors.axes[0].containers, strict=True):
        np.testing.assert_allclose(a.lines[0].get_ydata(), b.lines[0].get_ydata())
    only_errors = df[df["status"] == "error"]
    with pytest.raises(PrivpubError, match="no ok results for metric 'l1'"):
        lines_figure(only_errors, x="epsilon", metric="l1")


def test_reference_lines_and_series_without_x():
    df = tidy(datasets=("adult",))
    original = pd.DataFrame(
        {
            "dataset": "adult",
            "series": "original data",
            "epsilon": np.nan,
            "metric": "l1",
            "value": [0.8, 0.84],
            "status": "ok",
        }
    )
    fig = lines_figure(
        pd.concat([df, original]),
        x="epsilon",
        metric="l1",
        reference_lines={"majority vote": 0.75},
    )
    ax = fig.axes[0]
    assert errorbar_labels(ax) == ["a (depth=5)", "b"]
    flat = {
        ln.get_label(): ln.get_ydata()[0]
        for ln in ax.get_lines()
        if ln.get_label() in ("original data", "majority vote")
    }
    assert flat == {"original data": pytest.approx(0.82), "majority vote": 0.75}
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert set(labels) == {"a (depth=5)", "b", "original data", "majority vote"}


def test_panel_titles():
    fig = lines_figure(tidy(), x="epsilon", metric="l1", panel="experiment")
    assert [ax.get_title() for ax in fig.axes] == ["exp"]
    df = tidy(datasets=("d",)).assign(k=lambda d: d["rep"] + 2)
    fig = lines_figure(df, x="epsilon", metric="l1", panel="k")
    assert [ax.get_title() for ax in fig.axes] == ["k = 2", "k = 3", "k = 4"]


def test_single_panel_and_custom_labels():
    fig = lines_figure(
        tidy(),
        x="epsilon",
        metric="ks",
        panel=None,
        hue="mechanism",
        title="T",
        xlabel="privacy budget",
        ylabel="KS",
    )
    (ax,) = fig.axes
    assert ax.get_xlabel() == "privacy budget" and ax.get_ylabel() == "KS"
    assert fig._suptitle.get_text() == "T"
    assert errorbar_labels(ax) == ["a", "b"]


def test_categorical_x():
    df = tidy(datasets=("d",)).assign(
        epsilon=lambda d: d["epsilon"].map({0.1: "low", 0.5: "mid", 1.0: "high", 2.0: "top"})
    )
    fig = lines_figure(df, x="epsilon", metric="l1")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["high", "low", "mid", "top"]


def test_bad_arguments():
    with pytest.raises(PrivpubError, match="lack columns \\['depth'\\]"):
        lines_figure(tidy(), x="depth", metric="l1")
    with pytest.raises(PrivpubError, match="metrics present: \\['ks', 'l1'\\]"):
        lines_figure(tidy(), x="epsilon", metric="emd")
    with pytest.raises(PrivpubError, match="error must be"):
        lines_figure(tidy(), x="epsilon", metric="l1", error="iqr")


def test_plot_lines_writes_png_and_pdf(tmp_path):
    paths = plot_lines(
        tidy(),
        x="epsilon",
        metric="l1",
        out_stem=tmp_path / "sub" / "fig3_l1",
        logx=True,
        logy=True,
    )
    assert paths == [tmp_path / "sub" / "fig3_l1.png", tmp_path / "sub" / "fig3_l1.pdf"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"
    # deterministic output: the same call writes the same PDF
    first = paths[1].read_bytes()
    plot_lines(
        tidy(),
        x="epsilon",
        metric="l1",
        out_stem=tmp_path / "sub" / "fig3_l1",
        logx=True,
        logy=True,
    )
    assert paths[1].read_bytes() == first


def test_summary_table():
    df = pd.DataFrame(
        {
            "dataset": ["d"] * 5,
            "series": ["s", "s", "s", "t", "t"],
            "epsilon": [1.0, 1.0, 2.0, 1.0, 1.0],
            "metric": "m",
            "value": [1.0, 3.0, 5.0, 0.5, 0.5],
            "status": ["ok", "ok", "ok", "ok", "error"],
        }
    )
    table = summary_table(df, x="epsilon", metric="m")
    assert list(table.columns) == ["1", "2"]
    assert table.index.names == ["dataset", "series"]
    assert table.loc[("d", "s"), "1"] == "2 ± 1.4"
    assert table.loc[("d", "s"), "2"] == "5"  # one repetition: no deviation
    assert table.loc[("d", "t"), "1"] == "0.5"  # the error row is not counted
    assert table.loc[("d", "t"), "2"] == ""


def test_linestyles_per_series():
    """A plot spec's ``linestyles`` draws a series as the paper does; others stay solid."""
    fig = lines_figure(tidy(), x="epsilon", metric="l1", linestyles={"b": "--", "absent": ":"})
    for ax in fig.axes:
        styles = {c.get_label(): c.lines[0].get_linestyle() for c in ax.containers
                  if isinstance(c, ErrorbarContainer)}
        assert styles == {"a (depth=5)": "-", "b": "--"}
