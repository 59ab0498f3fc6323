"""Line plots of a metric against a parameter, one panel per dataset, from tidy results.

The result store gives one row per (experiment, dataset, mechanism, parameters, rep,
metric) with columns ``experiment, dataset, mechanism, series, <one column per parameter>,
rep, seed, metric, value, seconds, peak_mb, privacy, status``. These functions only read and
aggregate such rows (mean over repetitions, with the standard deviation or the standard error
as error bars); they never recompute a result. Rows whose ``status`` is not ``"ok"`` are
ignored.

A series (hue value) whose rows all have no ``x`` value (NaN, e.g. a non-private reference
that takes no epsilon) is drawn as a horizontal dashed line at its mean, like the "original
data" and "majority vote" yardsticks of qardaji2012 Fig. 3.

Figures are drawn on :class:`matplotlib.figure.Figure` objects with the Agg canvas, never
through ``pyplot``: nothing is displayed, nothing global is touched, and the same call gives
the same files (the PDF creation date is not stored).
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

__all__ = [
    "aggregate",
    "filter_rows",
    "lines_figure",
    "plot_lines",
    "save_figure",
    "summary_table",
    "MARKERS",
]

#: Marker per series, in order (colours come from the ``tab10`` / ``tab20`` colour maps).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
_ERRORS = ("std", "sem", "range", None)
_ONE = "__all__"  # stand-in column when panel or hue is None


def _matches(series: pd.Series, wanted) -> np.ndarray:
    """Rows of ``series`` equal to ``wanted`` (numbers compared as numbers, else as text)."""
    try:
        number = float(wanted)
    except (TypeError, ValueError):
        return (series.astype(str) == str(wanted)).to_numpy()
    numeric = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    return np.isclose(numeric, number, rtol=1e-12, atol=0.0)


def filter_rows(df: pd.DataFrame, where: dict | None) -> pd.DataFrame:
    """The rows of ``df`` whose columns equal ``where``'s values (e.g. ``{"epsilon": 1}``);
    a column that is absent is an error, a value may be a list of accepted values."""
    for key, wanted in (where or {}).items():
        if key not in df.columns:
            raise PrivpubError(f"'where' names {key!r}, which no result has")
        options = wanted if isinstance(wanted, (list, tuple)) else [wanted]
        mask = np.zeros(len(df), dtype=bool)
        for option in options:
            mask |= _matches(df[key], option)
        df = df[mask]
    return df


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
        Tidy results (see the module docstring). Rows with ``status != "ok"`` and
        non-finite values are dropped.
    x, metric, hue, panel : str
        Columns (``metric`` is a value of the ``metric`` column). ``hue`` or ``panel`` None
        puts every row in one series / panel.

    Returns
    -------
    DataFrame
        Columns ``panel, hue, x, mean, std, sem, min, max, n``; ``x`` is NaN for series that
        have no x value (references); ``std`` (ddof=1) and ``sem`` are 0 when ``n == 1``.
    """
    rows = _prepare(df, x=x, metric=metric, hue=hue, panel=panel)
    numeric = _numeric_x(rows["x"])
    if numeric is not None:
        rows = rows.assign(x=numeric)
    grouped = rows.groupby(["panel", "hue", "x"], sort=True, dropna=False)["value"]
    out = grouped.agg(mean="mean", std="std", min="min", max="max", n="count").reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["sem"] = out["std"] / np.sqrt(out["n"])
    return out[["panel", "hue", "x", "mean", "std", "sem", "min", "max", "n"]]


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
) -> Figure:
    """Draw ``metric`` against ``x`` and return the :class:`~matplotlib.figure.Figure`.

    One panel (axes) per distinct ``panel`` value, in a grid of ``ncols`` columns
    (default: up to 3 panels side by side, 4 as 2 x 2, more in rows of 3); one line with
    markers per ``hue`` value, the mean over repetitions with error bars; one legend shared
    by all panels, below them. Parameters are those of :func:`plot_lines`. The figure is not
    saved: tests and notebooks inspect it directly.
    """
    if error not in _ERRORS:
        raise PrivpubError(f"error must be 'std', 'sem', 'range' or None, got {error!r}")
    agg = aggregate(df, x=x, metric=metric, hue=hue, panel=panel)
    panels = _order(agg["panel"])
    hues = _order(agg["hue"])
    x_numeric = pd.api.types.is_numeric_dtype(agg["x"])
    if not x_numeric:
        x_levels = _order(agg["x"].dropna())
        positions = {v: i for i, v in enumerate(x_levels)}
        if logx:
            raise PrivpubError(f"logx needs numeric {x!r} values, got {x_levels}")
    elif logx and (agg["x"].dropna() <= 0).any():
        raise PrivpubError(f"logx needs {x!r} > 0, got {sorted(agg['x'].dropna().unique())}")

    n = len(panels)
    if ncols is None:  # balanced grids: 1-3 panels in a row, 4 as 2 x 2, more in rows of 3
        ncols = n if n <= 3 else (2 if n == 4 else 3)
    ncols = max(1, min(int(ncols), n))
    nrows = math.ceil(n / ncols)
    width = max(6.4, 4.2 * ncols)  # wide enough for a legend and a title even with one panel
    fig = Figure(figsize=(width, 3.3 * nrows + 0.8), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(nrows, ncols, squeeze=False)
    axes = list(grid.ravel())
    for ax in axes[n:]:
        fig.delaxes(ax)
    axes = axes[:n]

    cmap = _colors(len(hues))
    style = {h: (cmap[i], MARKERS[i % len(MARKERS)]) for i, h in enumerate(hues)}
    handles: dict[str, object] = {}
    for ax, pval in zip(axes, panels, strict=True):
        sub = agg[agg["panel"] == pval]
        for h in hues:
            line = sub[sub["hue"] == h]
            if line.empty:
                continue
            color, marker = style[h]
            label = metric if hue is None else str(h)
            ref = line["x"].isna()
            if ref.all():  # a series without x: a reference level
                handles[label] = ax.axhline(
                    float(np.average(line["mean"], weights=line["n"])),
                    color=color,
                    linestyle="--",
                    linewidth=1.2,
                    label=label,
                )
                continue
            line = line[~ref].sort_values("x", key=(None if x_numeric else _level_key(positions)))
            xs = line["x"].to_numpy(dtype=float) if x_numeric else line["x"].map(positions)
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
                capsize=3,
                label=label,
            )
            handles.setdefault(label, cont)
        for i, (name, level) in enumerate((reference_lines or {}).items()):
            handles[name] = ax.axhline(
                float(level),
                color=str(0.25 + 0.2 * (i % 3)),
                linestyle=(0, (4, 2 + i)),
                linewidth=1.0,
                label=name,
            )
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        if not x_numeric:
            ax.set_xticks(range(len(x_levels)), [str(v) for v in x_levels])
        if panel is not None:
            # names (datasets) stand alone; numbers need their parameter: "k = 8"
            numeric = isinstance(pval, (int, float, np.number)) and not isinstance(pval, bool)
            ax.set_title(f"{panel} = {pval}" if numeric else str(pval))
        ax.set_xlabel(xlabel if xlabel is not None else x)
        ax.set_ylabel(ylabel if ylabel is not None else metric)
        ax.grid(True, which="major", alpha=0.3)
    if handles:
        fig.legend(
            list(handles.values()),
            list(handles.keys()),
            loc="outside lower center",
            ncols=min(len(handles), max(1, int(width // 3.2))),
            frameon=False,
        )
    if title:
        fig.suptitle(textwrap.fill(str(title), width=int(width * 12), break_on_hyphens=False))
    return fig


def _level_key(positions: dict):
    return lambda s: s.map(positions)


def _colors(n: int) -> list:
    """``n`` distinct colours: tab10 for up to 10 series, tab20 beyond."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def plot_lines(
    df: pd.DataFrame,
    *,
    x: str,
    metric: str,
    out_stem: Path,
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
) -> list[Path]:
    """Plot ``metric`` against parameter ``x`` and save ``out_stem.png`` and ``out_stem.pdf``.

    Parameters
    ----------
    df : DataFrame
        Tidy results; only rows with ``status == "ok"`` and ``metric == metric`` are used.
    x : str
        Parameter column on the x axis (e.g. ``"epsilon"``, ``"k"``).
    metric : str
        Value of the ``metric`` column to plot on the y axis.
    out_stem : pathlib.Path
        Output path without suffix; parent directories are created.
    panel : str or None, default "dataset"
        Column with one panel per distinct value (None: a single panel).
    hue : str or None, default "series"
        Column with one line per distinct value (None: a single line).
    logx, logy : bool
        Logarithmic axes (as the paper's figure has them).
    error : {"std", "sem", "range", None}, default "std"
        Error bars: standard deviation over repetitions, standard error of the mean, the
        range from the lowest to the highest repetition, or none.
    title, xlabel, ylabel : str, optional
        Figure title and axis labels (default labels: ``x`` and ``metric``).
    reference_lines : dict of str to float, optional
        Horizontal lines drawn in every panel and named in the legend (e.g. the accuracy of
        a majority vote, 0.75 on Adult in qardaji2012 Fig. 3).
    ncols : int, optional
        Columns of the panel grid (default: up to 3 panels side by side, 4 as 2 x 2, more in
        rows of 3).

    Returns
    -------
    list of pathlib.Path
        ``[out_stem.png, out_stem.pdf]``.
    """
    fig = lines_figure(
        df,
        x=x,
        metric=metric,
        panel=panel,
        hue=hue,
        logx=logx,
        logy=logy,
        error=error,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        reference_lines=reference_lines,
        ncols=ncols,
    )
    return save_figure(fig, out_stem)


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
) -> pd.DataFrame:
    """``mean ± std`` of ``metric`` per (panel, hue) row and ``x`` column, as strings.

    Parameters
    ----------
    df : DataFrame
        Tidy results (see :func:`aggregate`).
    x, metric, hue, panel : str
        As in :func:`plot_lines`.
    digits : int, default 3
        Significant digits of the mean (the std gets 2).

    Returns
    -------
    DataFrame
        Index ``(panel, hue)`` (named after those columns), one column per ``x`` value in
        increasing order (``"-"`` for series without x), cells ``"0.812 ± 0.013"``
        (just the mean when there is one repetition). Print it with ``to_string()`` or
        :func:`plots.report.markdown_table`.
    """
    agg = aggregate(df, x=x, metric=metric, hue=hue, panel=panel)

    def cell(row) -> str:
        mean = f"{row['mean']:.{digits}g}"
        return mean if row["n"] < 2 else f"{mean} ± {row['std']:.2g}"

    agg = agg.assign(
        cell=agg.apply(cell, axis=1), x=agg["x"].astype(object).where(agg["x"].notna(), "-")
    )
    table = agg.pivot(index=["panel", "hue"], columns="x", values="cell")
    cols = [c for c in table.columns if c != "-"]
    try:
        cols = sorted(cols)
    except TypeError:
        cols = sorted(cols, key=str)
    if "-" in table.columns:
        cols.append("-")
    table = table[cols].fillna("")
    table.columns = [f"{c:g}" if isinstance(c, float) else str(c) for c in table.columns]
    table.index = table.index.set_names([panel or "panel", hue or "series"])
    if panel is None:  # a single panel needs no index level of its own
        table = table.droplevel(0)
    table.columns.name = x
    return table
