"""Draw an experiment's figures and summary from its result store (never recomputing).

For each entry of the experiment's ``plots`` list (``{x, metric, panel, hue, logx, logy,
error, name, title, xlabel, ylabel}``) one figure is drawn by :func:`plots.lines.plot_lines` into
``<results_dir>/<experiment>/<scale>/<name>.{png,pdf}``. Lines are *series*: the mechanism's
label plus every parameter that varies for that label other than ``x``
(e.g. ``rps (depth=5)``). By default there is one panel per dataset and one line per
series; ``panel: null, hue: dataset`` draws every dataset as a line in one panel.
``summary.md`` holds the mean ± std tables, ``notes.md`` the experiment's notes on where
the reproduction differs from the paper, and
``<results_dir>/report.md`` indexes every figure of every experiment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from experiments.runner import store_dir
from experiments.spec import ExperimentSpec
from experiments.store import ResultStore

__all__ = ["add_series", "draw_experiment"]


def add_series(frame: pd.DataFrame, x: str) -> pd.DataFrame:
    """Add ``series`` (line label) and ``dataset_label`` (panel label) columns."""
    frame = frame.copy()
    params = frame["params"].map(json.loads)
    series = []
    varying: dict[str, list[str]] = {}
    for label, group in params.groupby(frame["label"]):
        keys = sorted({k for p in group for k in p})
        varying[label] = [
            k for k in keys if k != x and len({json.dumps(p.get(k)) for p in group}) > 1
        ]
    for label, p in zip(frame["label"], params, strict=True):
        extra = ", ".join(f"{k}={p.get(k)}" for k in varying[label])
        series.append(f"{label} ({extra})" if extra else label)
    frame["series"] = series
    frame["dataset_label"] = [
        d if o in ("{}", None) else f"{d} {o}"
        for d, o in zip(frame["dataset"], frame["dataset_options"], strict=True)
    ]
    return frame


def _column(name):
    """Plot-spec names of grouping columns: ``dataset`` means the dataset label."""
    return "dataset_label" if name == "dataset" else name


def draw_experiment(spec: ExperimentSpec, results_dir: Path | str) -> str:
    """Draw every figure of ``spec`` from its store; return the summary text printed."""
    from plots.lines import plot_lines, summary_table
    from plots.report import write_report

    out = store_dir(results_dir, spec.name, spec.scale)
    frame = ResultStore(out / "store").load()
    texts = []
    if not frame.empty:
        for plot in spec.plots:
            x, metric = plot["x"], plot["metric"]
            rows = frame[frame["metric"] == metric]
            if rows.empty or x not in rows.columns:
                continue
            rows = add_series(rows, x)
            panel = _column(plot.get("panel", "dataset"))
            hue = _column(plot.get("hue", "series"))
            stem = out / str(plot.get("name") or f"{metric}_vs_{x}")
            title = plot.get("title") or f"{spec.title or spec.name} [{spec.scale}]"
            plot_lines(
                rows,
                x=x,
                metric=metric,
                out_stem=stem,
                panel=panel,
                hue=hue,
                logx=bool(plot.get("logx", False)),
                logy=bool(plot.get("logy", False)),
                error=plot.get("error", "std"),
                title=title,
                xlabel=plot.get("xlabel"),
                ylabel=plot.get("ylabel"),
            )
            table = summary_table(rows, x=x, metric=metric, hue=hue, panel=panel)
            texts.append(f"## {metric} vs {x}\n\n```\n{table.to_string()}\n```\n")
    (out / "summary.md").parent.mkdir(parents=True, exist_ok=True)
    header = f"# {spec.name} [{spec.scale}]\n\n{spec.title}\n\n"
    (out / "summary.md").write_text(header + "\n".join(texts))
    if spec.notes:
        (out / "notes.md").write_text(spec.notes.strip() + "\n")
    write_report(Path(results_dir))
    return "\n".join(texts)
