"""Trade-off curves: one metric against another, one point (the means over repetitions) per
value of a parameter, one path per series (epasto2022 App. D). The plot kind:
``docs/design.md`` ("Plot kinds").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from privpub.errors import PrivpubError

__all__ = ["tradeoff_points", "plot_tradeoff"]


def tradeoff_points(
    frame: pd.DataFrame, *, x_metric: str, y_metric: str, along: str, hue: str = "series"
) -> pd.DataFrame:
    """Mean ``x_metric`` and ``y_metric`` per (dataset_label, ``hue``, ``along``)."""
    for column in ("dataset_label", hue, along, "metric", "value"):
        if column not in frame.columns:
            raise PrivpubError(f"a tradeoff plot needs the column {column!r} in the results")
    keys = ["dataset_label", hue, along]
    means = (
        frame[frame["metric"].isin([x_metric, y_metric])]
        .groupby([*keys, "metric"], dropna=False)["value"]
        .mean()
        .unstack("metric")
        .reset_index()
    )
    if x_metric not in means.columns or y_metric not in means.columns:
        return pd.DataFrame(columns=[*keys, "x", "y"])
    means = means.rename(columns={x_metric: "x", y_metric: "y"}).dropna(subset=["x", "y"])
    return means[[*keys, "x", "y"]].sort_values(keys, kind="stable").reset_index(drop=True)


def plot_tradeoff(
    frame: pd.DataFrame,
    *,
    out_stem: Path,
    x_metric: str,
    y_metric: str,
    along: str,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    logx: bool = False,
    logy: bool = False,
    legend_names: dict | None = None,
    styles: dict[str, tuple[int, int]] | None = None,
    footnotes: list[str] | None = None,
) -> list[Path]:
    """Draw one panel per dataset, one path per series, and save ``out_stem.{png,pdf}``."""
    from privpub.plots.lines import legend_text, panel_figure, save_figure
    from privpub.plots.series import series_styles

    points = tradeoff_points(frame, x_metric=x_metric, y_metric=y_metric, along=along)
    if points.empty:
        raise PrivpubError(f"no results for both {x_metric!r} and {y_metric!r}")
    panels = sorted(points["dataset_label"].unique())
    series = sorted(points["series"].unique())
    drawn = series_styles(series, styles)
    legend_names = legend_names or {}
    fig, main, axes = panel_figure(len(panels), footnotes, ncols=min(len(panels), 3),
                                   height=3.6)
    handles = {}
    for ax, panel in zip(axes, panels, strict=False):
        sub = points[points["dataset_label"] == panel]
        for name in series:
            path = sub[sub["series"] == name]
            if not path.empty:
                label = legend_names.get(name, name)
                handles[label] = _draw_path(ax, path, along, drawn[name], label)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_title(str(panel))
        ax.set_xlabel(xlabel or x_metric)
        ax.set_ylabel(ylabel or y_metric)
        ax.grid(True, alpha=0.3)
    if handles:
        main.legend(list(handles.values()), [legend_text(name) for name in handles],
                    loc="outside lower center",
                    ncols=min(len(handles), 4), frameon=False,
                    title=f"means over repetitions; one point per {along}",
                    title_fontsize="small")
    if title:
        fig.suptitle(title)
    return save_figure(fig, out_stem)


def _draw_path(ax, path: pd.DataFrame, along: str, style, label: str):
    """One series' points in ``along`` order, each labelled with its value; the line."""
    order = np.argsort(pd.to_numeric(path[along], errors="coerce").to_numpy())
    path = path.iloc[order]
    color, marker = style
    (handle,) = ax.plot(path["x"], path["y"], color=color, marker=marker,
                        markersize=5, linewidth=1.3, label=label)
    for x, y, value in zip(path["x"], path["y"], path[along], strict=True):
        ax.annotate(f"{along}={value:g}" if isinstance(value, float) else
                    f"{along}={value}", (x, y), textcoords="offset points",
                    xytext=(4, 3), fontsize="xx-small", color=color)
    return handle
