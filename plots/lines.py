"""Line plots of a metric against a parameter, one panel per dataset, from tidy results
(:mod:`privpub.results`), and the same means as a summary table. How figures are drawn and
why: ``docs/design.md`` ("Plot kinds", "Drawing").
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from privpub.errors import PrivpubError
from privpub.plots.series import ERROR_KINDS, MARKERS, error_label, series_styles

__all__ = [
    "aggregate",
    "lines_figure",
    "plot_lines",
    "save_figure",
    "summary_table",
    "panel_figure",
    "legend_text",
    "MARKERS",
]

_ERRORS = tuple(ERROR_KINDS)
_ONE = "__all__"  # stand-in column when panel or hue is None


def _prepare(df: pd.DataFrame, *, x: str, metric: str, hue: str | None, panel: str | None):
    """The ok rows of ``metric`` with columns panel, hue, x, value (panel/hue filled if None)."""
    if not isinstance(df, pd.DataFrame):
        raise PrivpubError(f"expected a pandas DataFrame of results, got {type(df).__name__}")
    needed = ["metric", "value", x] + [c for c in (hue, panel) if c is not None]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise PrivpubError(
            f"results lack columns {missing}; available: {sorted(map(str, df.columns))}"
        )
    rows = df[df["metric"] == metric]
    if "status" in rows.columns:
        rows = rows[rows["status"] == "ok"]
    if rows.empty:
        known = sorted(map(str, df["metric"].dropna().unique()))
        raise PrivpubError(f"no ok results for metric {metric!r}; metrics present: {known}")
    out = pd.DataFrame(
        {
            "panel": rows[panel].to_numpy() if panel is not None else _ONE,
            "hue": rows[hue].to_numpy() if hue is not None else _ONE,
            "x": rows[x].to_numpy(),
            "value": pd.to_numeric(rows["value"], errors="coerce").to_numpy(),
        }
    )
    out = out[np.isfinite(out["value"].to_numpy(dtype=float))]
    if out.empty:
        raise PrivpubError(f"metric {metric!r} has no finite values in the ok rows")
    return out


def _numeric_x(values: pd.Series) -> pd.Series | None:
    """``values`` as floats if they are all numbers (or missing), else None."""
    converted = pd.to_numeric(values, errors="coerce")
    if converted.isna().sum() > values.isna().sum():
        return None
    return converted.astype(float)


def aggregate(
    df: pd.DataFrame,
    *,
    x: str,
    metric: str,
    hue: str | None = "series",
    panel: str | None = "dataset",
) -> pd.DataFrame:
    """Mean, standard deviation, standard error and count of ``metric`` per (panel, hue, x).

    Parameters
    ----------
    df : DataFrame
        Tidy results (:mod:`privpub.results`). Rows with ``status != "ok"`` and
        non-finite values are dropped.
    x, metric, hue, panel : str
        Columns (``metric`` is a value of the ``metric`` column). ``hue`` or ``panel`` None
        puts every row in one series / panel.

    Returns
    -------
    DataFrame
        Columns ``panel, hue, x, mean, std, sem, ci95, min, max, n``; ``x`` is NaN for series
        that have no x value (references); ``std`` (ddof=1), ``sem`` and ``ci95`` (the
        half-width of the t interval of the mean) are 0 when ``n == 1``.
    """
    from scipy.stats import t as student
    rows = _prepare(df, x=x, metric=metric, hue=hue, panel=panel)
    numeric = _numeric_x(rows["x"])
    if numeric is not None:
        rows = rows.assign(x=numeric)
    grouped = rows.groupby(["panel", "hue", "x"], sort=True, dropna=False)["value"]
    out = grouped.agg(mean="mean", std="std", min="min", max="max", n="count").reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["sem"] = out["std"] / np.sqrt(out["n"])
    df = np.maximum(out["n"].to_numpy() - 1, 1)
    out["ci95"] = np.where(out["n"] > 1, student.ppf(0.975, df) * out["sem"], 0.0)
    return out[["panel", "hue", "x", "mean", "std", "sem", "ci95", "min", "max", "n"]]


def _natural_key(value) -> list:
    """Sort key reading the numbers inside labels as numbers: ``depth=5`` < ``depth=10``."""
    parts = re.split(r"(\d+(?:\.\d+)?)", str(value))
    return [(0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts)]


def _order(values) -> list:
    uniq = list(pd.unique(pd.Series(list(values))))
    if all(isinstance(v, str) for v in uniq):
        return sorted(uniq, key=_natural_key)
    try:
        return sorted(uniq)
    except TypeError:
        return sorted(uniq, key=str)


def lines_figure(
    df: pd.DataFrame,
    *,
    x: str,
    metric: str,
    panel: str | None = "dataset",
    hue: str | None = "series",
    logx: bool = False,
    logy: bool = False,
    error: str | None = "std",
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    reference_lines: dict[str, float] | None = None,
    ncols: int | None = None,
    legend_names: dict | None = None,
    styles: dict[str, tuple[int, int]] | None = None,
    footnotes: list[str] | None = None,
    linestyles: dict[str, str] | None = None,
    published: dict | None = None,
) -> Figure:
    """Draw ``metric`` against ``x`` and return the :class:`~matplotlib.figure.Figure`.

    One panel (axes) per distinct ``panel`` value, in a grid of ``ncols`` columns
    (default: up to 3 panels side by side, 4 as 2 x 2, more in rows of 3); one line with
    markers per ``hue`` value, the mean over repetitions with error bars; one legend shared
    by all panels, below them, titled with what the error bars are. A series' colour and
    marker come from :func:`privpub.plots.series.series_styles` (with ``styles``: the
    experiment files' label styles): markers differ within the figure, and so do the
    colours of different labels.
    ``legend_names`` renames series in the legend (e.g. ``"RR [edge-DP]"``), ``footnotes``
    are printed under it (e.g. caveats); ``linestyles`` gives a series (by its name before
    renaming) one of :data:`privpub.plots.series.LINESTYLES`, as a paper draws them (epasto2022
    Fig. 3: smooth solid, non-smooth dashed, Mondrian dotted); ``published`` ({panel value:
    {series: {x: y}}}) draws a paper's plotted means beside ours, dotted with hollow
    markers in the series' colour; :func:`plot_lines` describes the other options. The
    figure is not saved: tests and notebooks inspect it directly.
    """
    if error not in _ERRORS:
        raise PrivpubError(f"error must be one of {list(_ERRORS)}, got {error!r}")
    agg = aggregate(df, x=x, metric=metric, hue=hue, panel=panel)
    panels = _order(agg["panel"])
    hues = _order(agg["hue"])
    levels = _x_levels(agg, x, logx)
    fig, main, axes = panel_figure(len(panels), footnotes, ncols=ncols, height=3.3)
    style = series_styles(map(str, hues), styles)
    legend_names = legend_names or {}
    linestyles = {str(k): v for k, v in (linestyles or {}).items()}  # a run may draw a subset
    handles: dict[str, object] = {}
    for ax, pval in zip(axes, panels, strict=True):
        sub = agg[agg["panel"] == pval]
        for h in hues:
            line = sub[sub["hue"] == h]
            if line.empty:
                continue
            label = metric if hue is None else str(legend_names.get(h, h))
            _draw_line(ax, line, handles, label=label, style=style[str(h)],
                       linestyle=linestyles.get(str(h), "-"), error=error, levels=levels)
        _draw_published(ax, (published or {}).get(pval, {}), style, handles, levels)
        _draw_references(ax, reference_lines, handles)
        _dress_panel(ax, sub, pval, panel=panel, logx=logx, logy=logy, levels=levels,
                     xlabel=xlabel if xlabel is not None else x,
                     ylabel=ylabel if ylabel is not None else metric)
    n_reps = int(agg["n"].max()) if len(agg) else None
    _legend_and_title(fig, main, handles, f"mean over repetitions; {error_label(error, n_reps)}",
                      title)
    return fig


def _legend_and_title(fig: Figure, main, handles: dict, legend_title: str, title: str | None):
    """One legend for all panels, below them, and the figure's title wrapped to its width."""
    width = fig.get_figwidth()
    if handles:
        main.legend(
            list(handles.values()),
            [legend_text(name) for name in handles],
            loc="outside lower center",
            ncols=min(len(handles), max(1, int(width // 3.2))),
            frameon=False,
            title=legend_title,
            title_fontsize="small",
        )
    if title:
        fig.suptitle(
            "\n".join(
                textwrap.fill(line, width=int(width * 12), break_on_hyphens=False)
                for line in str(title).split("\n")
            )
        )


#: Characters of a legend entry beyond which its bracketed notes (``[edge-DP]``, ``[claim
#: refuted by audit]``) go on lines of their own.
_LEGEND_LINE = 48


def legend_text(name: str) -> str:
    """A legend entry, its bracketed notes on a line of their own when it is long."""
    name = str(name)
    if len(name) <= _LEGEND_LINE:
        return name
    lines: list[str] = []
    for part in re.split(r" (?=\[)", name):
        if lines and len(lines[-1]) + 1 + len(part) <= _LEGEND_LINE:
            lines[-1] += " " + part
        else:
            lines.append(part)
    return "\n".join(lines)


def _x_levels(agg: pd.DataFrame, x: str, logx: bool) -> list | None:
    """The x values in order when they are not numbers (drawn at 0, 1, ...); None for a
    numeric axis. A log axis needs positive numbers."""
    if not pd.api.types.is_numeric_dtype(agg["x"]):
        levels = _order(agg["x"].dropna())
        if logx:
            raise PrivpubError(f"logx needs numeric {x!r} values, got {levels}")
        return levels
    if logx and (agg["x"].dropna() <= 0).any():
        raise PrivpubError(f"logx needs {x!r} > 0, got {sorted(agg['x'].dropna().unique())}")
    return None


def _draw_line(ax, line: pd.DataFrame, handles: dict, *, label: str, style, linestyle: str,
               error: str | None, levels: list | None):
    """One series in one panel: its means with error bars, or, when it has no x value, a
    dashed reference level at its mean; its legend handle goes into ``handles``."""
    color, marker = style
    ref = line["x"].isna()
    if ref.all():  # a series without x: a reference level
        handles[label] = ax.axhline(
            float(np.average(line["mean"], weights=line["n"])),
            color=color,
            linestyle="--",
            linewidth=1.2,
            label=label,
        )
        return
    positions = None if levels is None else {v: i for i, v in enumerate(levels)}
    line = line[~ref].sort_values("x", key=(None if levels is None else _level_key(positions)))
    xs = line["x"].to_numpy(dtype=float) if levels is None else line["x"].map(positions)
    if error == "range":  # lowest and highest repetition (day2016 Fig. 8)
        mean = line["mean"].to_numpy()
        yerr = np.vstack([mean - line["min"].to_numpy(), line["max"].to_numpy() - mean])
    else:
        yerr = None if error is None else line[error].to_numpy()
    cont = ax.errorbar(
        np.asarray(xs, dtype=float),
        line["mean"].to_numpy(),
        yerr=yerr,
        color=color,
        marker=marker,
        markersize=5,
        linewidth=1.4,
        linestyle=linestyle,
        capsize=3,
        label=label,
    )
    handles.setdefault(label, cont)


#: The legend entry of a paper's plotted means (:func:`_draw_published`).
PUBLISHED_LABEL = "dotted, hollow: the paper's plotted means"


def _draw_published(ax, curves: dict, style: dict, handles: dict, levels: list | None):
    """A paper's plotted means ({series: {x: y}}) of the series this panel draws, dotted,
    hollow markers in the series' colour; one legend entry for all of them."""
    positions = None if levels is None else {v: i for i, v in enumerate(levels)}
    for series, points in curves.items():
        if str(series) not in style:
            continue
        color, marker = style[str(series)]
        xs = sorted(points, key=(None if positions is None else positions.get))
        at = xs if positions is None else [positions[x] for x in xs]
        (line,) = ax.plot(np.asarray(at, dtype=float), [points[x] for x in xs], color=color,
                          marker=marker, markersize=5, markerfacecolor="none", linewidth=1.0,
                          linestyle=":", alpha=0.8)
        handles.setdefault(PUBLISHED_LABEL, line)


def _draw_references(ax, reference_lines: dict | None, handles: dict):
    """Horizontal lines at given levels (e.g. a majority vote), grey, dashed differently."""
    for i, (name, level) in enumerate((reference_lines or {}).items()):
        handles[name] = ax.axhline(
            float(level),
            color=str(0.25 + 0.2 * (i % 3)),
            linestyle=(0, (4, 2 + i)),
            linewidth=1.0,
            label=name,
        )


def _dress_panel(ax, sub: pd.DataFrame, pval, *, panel, logx, logy, levels, xlabel, ylabel):
    """A panel's scales, ticks, title, axis labels and grid."""
    if logx:
        ax.set_xscale("log")
    if logy and (sub["mean"] > 0).any():  # a log axis needs a positive value to show
        ax.set_yscale("log")
    if levels is not None:
        ax.set_xticks(range(len(levels)), [str(v) for v in levels])
    if panel is not None:
        # names (datasets) stand alone; numbers need their parameter: "k = 8"
        numeric = isinstance(pval, (int, float, np.number)) and not isinstance(pval, bool)
        ax.set_title(f"{panel} = {pval}" if numeric else str(pval))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)


def panel_figure(n: int, notes: list[str] | None = None, *, ncols: int | None = None,
                 width: float = 4.2, height: float = 3.3, min_width: float = 6.4):
    """A figure with ``n`` panels (balanced: 1-3 in a row, 4 as 2 x 2, more in rows of 3,
    unless ``ncols``) of ``width`` x ``height`` inches, wide enough for a legend and a title,
    with ``notes`` under everything (:func:`figure_with_notes`); returns ``(figure, the
    part holding the panels, axes)``."""
    if ncols is None:
        ncols = n if n <= 3 else (2 if n == 4 else 3)
    ncols = max(1, min(int(ncols), n))
    nrows = math.ceil(n / ncols)
    fig, main = figure_with_notes(max(min_width, width * ncols), height * nrows + 0.8, notes)
    axes = list(main.subplots(nrows, ncols, squeeze=False).ravel())
    for ax in axes[n:]:
        main.delaxes(ax)
    return fig, main, axes[:n]


def figure_with_notes(width: float, height: float, notes: list[str] | None):
    """A figure (Agg canvas, constrained layout) and the part to draw in: the figure itself,
    or, with ``notes`` (e.g. caveat footnotes), its top part above a strip that prints them
    below everything else, legend included."""
    if not notes:
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        return fig, fig
    chars = int(width * 15)
    lines = [textwrap.fill(n, width=chars, subsequent_indent="   ") for n in notes]
    strip = 0.16 * sum(line.count("\n") + 1 for line in lines) + 0.15
    fig = Figure(figsize=(width, height + strip), layout="constrained")
    FigureCanvasAgg(fig)
    main, bottom = fig.subfigures(2, 1, height_ratios=[height, strip])
    bottom.text(0.01, 0.95, "\n".join(lines), ha="left", va="top", fontsize="x-small",
                color="0.25")
    return fig, main


def _level_key(positions: dict):
    return lambda s: s.map(positions)


def plot_lines(df: pd.DataFrame, *, out_stem: Path, **options) -> list[Path]:
    """Draw :func:`lines_figure` (same keyword ``options``) and save ``out_stem.png`` and
    ``out_stem.pdf``; returns the two paths.

    Options: ``x`` (the parameter on the x axis, e.g. ``"epsilon"``), ``metric`` (the value
    of the ``metric`` column on the y axis), ``panel`` / ``hue`` (columns giving one panel /
    one line per value; None for one), ``logx`` / ``logy`` (as the paper's axes),
    ``error`` (``"std"``, ``"sem"``, ``"ci95"``, ``"range"`` from the lowest to the highest
    repetition, or None; written on the figure), ``title``, ``xlabel``, ``ylabel``,
    ``reference_lines`` (name -> level, e.g. a majority vote), ``ncols``, ``legend_names``,
    ``footnotes``, ``styles``, ``linestyles`` (series name -> line style), ``published`` (a
    paper's plotted means: {panel value: {series: {x: y}}}).
    """
    return save_figure(lines_figure(df, **options), out_stem)


def save_figure(fig: Figure, out_stem: Path) -> list[Path]:
    """Save ``fig`` as ``out_stem.png`` (150 dpi) and ``out_stem.pdf``, byte-reproducibly
    (no software or creation-date metadata); parent directories are created."""
    out_stem = Path(out_stem)
    out_stem.parent.mkdir(parents=True, exist_ok=True)
    png = out_stem.with_name(out_stem.name + ".png")
    pdf = out_stem.with_name(out_stem.name + ".pdf")
    fig.savefig(png, dpi=150, metadata={"Software": None}, bbox_inches="tight")
    fig.savefig(
        pdf, metadata={"CreationDate": None, "Creator": None, "Producer": None}, bbox_inches="tight"
    )
    return [png, pdf]


def summary_table(
    df: pd.DataFrame,
    *,
    x: str,
    metric: str,
    hue: str | None = "series",
    panel: str | None = "dataset",
    digits: int = 3,
    error: str | None = "std",
) -> pd.DataFrame:
    """``mean ± error`` of ``metric`` per (panel, hue) row and ``x`` column, as strings.

    Parameters
    ----------
    df : DataFrame
        Tidy results (see :func:`aggregate`).
    x, metric, hue, panel : str
        As in :func:`plot_lines`.
    digits : int, default 3
        Significant digits of the mean (the error gets 2).
    error : {"std", "sem", "ci95", "range", None}, default "std"
        The error the figure draws: ``± std``, ``± sem``, ``± ci95`` half-width, or
        ``[min, max]`` for ``range``; None gives the mean alone.

    Returns
    -------
    DataFrame
        Index ``(panel, hue)`` (named after those columns), one column per ``x`` value in
        increasing order (``"-"`` for series without x), cells ``"0.812 ± 0.013"``
        (just the mean when there is one repetition or no error). Print it with ``to_string()`` or
        :func:`privpub.plots.report.markdown_table`.
    """
    agg = aggregate(df, x=x, metric=metric, hue=hue, panel=panel)

    if error not in _ERRORS:
        raise PrivpubError(f"error must be one of {list(_ERRORS)}, got {error!r}")
    agg = agg.assign(
        cell=agg.apply(_summary_cell, axis=1, digits=digits, error=error),
        x=agg["x"].astype(object).where(agg["x"].notna(), "-"),
    )
    table = agg.pivot(index=["panel", "hue"], columns="x", values="cell")
    table = table[_x_columns(table.columns)].fillna("")
    table.columns = [f"{c:g}" if isinstance(c, float) else str(c) for c in table.columns]
    table.index = table.index.set_names([panel or "panel", hue or "series"])
    if panel is None:  # a single panel needs no index level of its own
        table = table.droplevel(0)
    table.columns.name = x
    return table


def _summary_cell(row, *, digits: int, error: str | None) -> str:
    """One cell of :func:`summary_table`: ``mean ± error`` (``mean [min, max]``)."""
    mean = f"{row['mean']:.{digits}g}"
    if row["n"] < 2 or error is None:
        return mean
    if error == "range":
        return f"{mean} [{row['min']:.{digits}g}, {row['max']:.{digits}g}]"
    return f"{mean} ± {row[error]:.2g}"


def _x_columns(columns) -> list:
    """The x values in increasing order, ``"-"`` (series without x) last."""
    cols = [c for c in columns if c != "-"]
    try:
        cols = sorted(cols)
    except TypeError:
        cols = sorted(cols, key=str)
    if "-" in columns:
        cols.append("-")
    return cols
