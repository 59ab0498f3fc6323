"""CCDFs (or CDFs) of stored degree releases, the median-error repetition per series
(day2016 Fig. 4, sala2011 Fig. 5). The plot kind and its choices: ``docs/design.md``
("Plot kinds").
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from privpub.errors import ConfigError
from privpub.plots.series import SEED
from privpub.results import RELEASE_METRIC, decode_vector, select_rows

__all__ = ["ccdf", "median_releases", "plot_ccdf"]


def ccdf(vector, *, kind: str = "degree_histogram") -> tuple[np.ndarray, np.ndarray]:
    """Degrees ``k >= 1`` and ``Pr[K >= k]`` of a degree histogram (or degree sequence).

    Parameters
    ----------
    vector : array_like
        Histogram counts indexed by degree (``kind="degree_histogram"``) or one degree per
        node (``kind="degree_sequence"``, rounded and clipped at 0).
    """
    v = np.asarray(vector, dtype=float)
    if kind == "degree_sequence":
        v = np.bincount(np.clip(np.rint(v), 0, None).astype(np.int64))
    counts = np.clip(np.nan_to_num(v, nan=0.0), 0.0, None)
    total = counts.sum()
    if total <= 0 or len(counts) < 2:
        return np.array([1.0]), np.array([0.0])
    tail = np.cumsum(counts[::-1])[::-1] / total
    degrees = np.arange(1, len(counts))
    return degrees, tail[1:]


def median_releases(
    frame: pd.DataFrame, *, select: str, where: dict | None = None, best_over: str | None = None,
    tuned=None,
):
    """Per (dataset, series): the stored release of the median-``select`` repetition (a
    sweep over seeds: a series per seed, :func:`privpub.plots.series.add_series`).

    With ``best_over`` (e.g. ``"theta"`` for Truncation) only the value of that parameter with
    the lowest mean ``select`` is kept per series of the labels ``tuned`` (None: every label;
    :func:`privpub.plots.series.best_over`).

    Returns a frame with columns ``dataset_label, series, rep, error, vector`` plus the
    truth of each dataset (``series == "truth"``, ``error`` NaN).
    """
    from privpub.plots.series import add_series
    from privpub.plots.series import best_over as keep_best

    releases = frame[frame["metric"] == RELEASE_METRIC]
    if releases.empty:
        raise ConfigError("a ccdf plot needs stored releases: set keep_releases: true")
    scores = frame[frame["metric"] == select]
    if scores.empty:
        raise ConfigError(f"a ccdf plot selects by metric {select!r}, which has no results")
    scores = select_rows(scores, where, empty="keep")
    if best_over:
        scores = keep_best(scores, best_over, higher_is_better=False, labels=tuned)
    scores = add_series(scores, x="__none__")
    seeds = releases[SEED] if SEED in releases.columns else [None] * len(releases)
    keys = zip(releases["cell"], seeds, releases["rep"], releases["release"], strict=True)
    blobs = {(c, s, r): b for c, s, r, b in keys}
    out = []
    for (dataset, series), group in scores.groupby(["dataset_label", "series"], sort=True):
        group = group.sort_values(["value", "rep"], kind="stable")
        pick = group.iloc[(len(group) - 1) // 2]
        blob = blobs.get((pick["cell"], pick.get(SEED), pick["rep"]))
        if blob is not None:
            out.append((dataset, series, int(pick["rep"]), float(pick["value"]), blob))
    truths = add_series(releases[releases["mechanism"] == "truth"], x="__none__")
    truths = truths.drop_duplicates("dataset_label")  # one truth per dataset, whatever seeds
    for dataset, blob in zip(truths["dataset_label"], truths["release"], strict=True):
        out.append((dataset, "truth", 0, math.nan, blob))
    result = pd.DataFrame(out, columns=["dataset_label", "series", "rep", "error", "blob"])
    result["vector"] = result.pop("blob").map(decode_vector)
    return result


def plot_ccdf(
    frame: pd.DataFrame,
    *,
    out_stem: Path,
    select: str,
    where: dict | None = None,
    best_over: str | None = None,
    tuned=None,
    kind: str = "degree_histogram",
    logx: bool = True,
    logy: bool = True,
    title: str | None = None,
    legend_names: dict | None = None,
    styles: dict[str, tuple[int, int]] | None = None,
    footnotes: list[str] | None = None,
    cumulative: str = "ccdf",
) -> list[Path]:
    """Draw the CCDF figure (one panel per dataset) and save ``out_stem.{png,pdf}``.

    ``cumulative="cdf"`` draws ``Pr[K <= k]`` instead (sala2011 Fig. 5). ``legend_names``
    and ``footnotes`` as in :func:`privpub.plots.lines.lines_figure`; ``best_over`` and
    ``tuned`` as in :func:`median_releases`."""
    if cumulative not in ("ccdf", "cdf"):
        raise ConfigError(f"cumulative must be 'ccdf' or 'cdf', got {cumulative!r}")
    from privpub.plots.lines import legend_text, panel_figure, save_figure
    from privpub.plots.series import series_styles

    picked = median_releases(frame, select=select, where=where, best_over=best_over,
                             tuned=tuned)
    panels = sorted(picked["dataset_label"].unique())
    series = sorted(s for s in picked["series"].unique() if s != "truth")
    drawn = series_styles(series, styles)
    legend_names = legend_names or {}
    ncols = min(len(panels), 4)
    fig, main, axes = panel_figure(len(panels), footnotes, ncols=ncols, width=4.0, height=3.2,
                                   min_width=0)
    handles = {}
    for ax, panel in zip(axes, panels, strict=False):
        for _, row in picked[picked["dataset_label"] == panel].iterrows():
            _draw_curve(ax, row, handles, kind=kind, cumulative=cumulative, logy=logy,
                        style=None if row["series"] == "truth" else drawn[row["series"]],
                        name=legend_names.get(row["series"], row["series"]))
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_title(str(panel))
        ax.set_xlabel("degree k")
        ax.set_ylabel("Pr[K >= k]" if cumulative == "ccdf" else "Pr[K <= k]")
        ax.grid(True, alpha=0.3)
    if handles:
        main.legend(
            list(handles.values()),
            [legend_text(name) for name in handles],
            loc="outside lower center",
            ncols=min(len(handles), 4),
            frameon=False,
            title="per series, the repetition with the median error",
            title_fontsize="small",
        )
    if title:
        fig.suptitle(title)
    return save_figure(fig, out_stem)


def _draw_curve(ax, row, handles: dict, *, kind: str, cumulative: str, logy: bool, style,
                name: str):
    """One stored release's CCDF (or CDF) in a panel: the truth in black, a series in its
    colour and marker (``style``); its legend handle goes into ``handles``."""
    k, p = ccdf(row["vector"], kind=kind)
    if cumulative == "cdf":  # Pr[K <= k] = 1 - Pr[K >= k + 1]
        k, p = np.concatenate([[0], k]), 1.0 - np.concatenate([p, [0.0]])
    keep = p > 0 if logy else np.ones(len(p), dtype=bool)
    if style is None:
        (h,) = ax.plot(k[keep], p[keep], color="black", linewidth=2.0, label="true")
        handles["true"] = h
        return
    color, marker = style
    (h,) = ax.plot(
        k[keep],
        p[keep],
        color=color,
        marker=marker,
        markevery=0.1,
        markersize=4,
        linewidth=1.2,
        label=name,
    )
    handles[name] = h
