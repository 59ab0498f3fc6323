"""Draw an experiment's figures and summary from its result store (never recomputing).

For each entry of the experiment's ``plots`` list (``{x, metric, panel, hue, logx, logy,
error, best_over, where, references, name, title, xlabel, ylabel}``; other ``kind``s: see
:data:`PLOT_KINDS`) one figure is drawn by :func:`plots.lines.plot_lines` into
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
from privpub.errors import ConfigError

__all__ = ["add_series", "best_over", "draw_experiment", "PLOT_KINDS"]


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
        dataset_label(d, o) for d, o in zip(frame["dataset"], frame["dataset_options"], strict=True)
    ]
    return frame


def dataset_label(dataset: str, options_json: str | None) -> str:
    """A panel title: the dataset and its non-default options, ``facebook (lcc=true)``."""
    options = json.loads(options_json) if options_json not in (None, "", "{}") else {}
    if not options:
        return dataset
    return f"{dataset} ({', '.join(f'{k}={json.dumps(v)}' for k, v in options.items())})"


def _column(name):
    """Plot-spec names of grouping columns: ``dataset`` means the dataset label."""
    return "dataset_label" if name == "dataset" else name


def best_over(frame: pd.DataFrame, over: str, *, higher_is_better: bool) -> pd.DataFrame:
    """Keep, per dataset, label and every other parameter (x included), only the rows of the
    ``over`` value with the best mean: "we consider all theta values ... and report the result
    with the smallest error" (day2016 Sec 4.1, Truncation). The label becomes
    ``"<label> (best <over>)"``, the chosen value stays in the ``over`` column.
    Rows whose mechanism does not take ``over`` are returned unchanged."""
    params = frame["params"].map(json.loads)
    has = params.map(lambda p: over in p).to_numpy()
    if not has.any():
        return frame
    rows = frame[has].copy()
    rest = params[has].map(lambda p: json.dumps({k: v for k, v in p.items() if k != over}))
    rows["_key"] = rows["dataset"] + "|" + rows["dataset_options"].astype(str)
    rows["_key"] += "|" + rows["label"] + "|" + rest
    means = rows.groupby(["_key", over])["value"].mean().reset_index()
    means = means.sort_values("value", ascending=not higher_is_better, kind="stable")
    best = means.drop_duplicates("_key")
    chosen = set(zip(best["_key"], best[over], strict=True))
    keep = [(k, v) in chosen for k, v in zip(rows["_key"], rows[over], strict=True)]
    rows = rows[keep].drop(columns="_key")
    rows["params"] = rest[keep].to_numpy()
    rows["label"] = rows["label"] + f" (best {over})"
    return pd.concat([frame[~has], rows], ignore_index=True)


def _draw_lines(plot: dict, frame: pd.DataFrame, out: Path, title: str) -> str | None:
    from plots.lines import filter_rows, plot_lines, summary_table
    from privpub.registry import get_metric, metrics

    x, metric = plot["x"], plot["metric"]
    rows = frame[frame["metric"] == metric]
    if rows.empty or x not in rows.columns:
        return None
    references = {}
    for ref in plot.get("references") or []:  # e.g. the majority vote of qardaji2012 Fig. 3
        level = frame[(frame["metric"] == ref["metric"]) & (frame["label"] == ref["label"])]
        if not level.empty:
            references[str(ref.get("name") or ref["label"])] = float(level["value"].mean())
    rows = filter_rows(rows, plot.get("where"))
    if rows.empty:
        return None
    if plot.get("best_over"):
        higher = metric in metrics() and get_metric(metric).higher_is_better
        rows = best_over(rows, plot["best_over"], higher_is_better=higher)
    rows = add_series(rows, x)
    panel = _column(plot.get("panel", "dataset"))
    hue = _column(plot.get("hue", "series"))
    plot_lines(
        rows,
        x=x,
        metric=metric,
        out_stem=out / str(plot.get("name") or f"{metric}_vs_{x}".replace("/", "_")),
        panel=panel,
        hue=hue,
        logx=bool(plot.get("logx", False)),
        logy=bool(plot.get("logy", False)),
        error=plot.get("error", "std"),
        title=title,
        xlabel=plot.get("xlabel"),
        ylabel=plot.get("ylabel"),
        reference_lines=references,
    )
    table = summary_table(rows, x=x, metric=metric, hue=hue, panel=panel).to_string()
    for name, level in references.items():
        table += f"\nreference line {name}: {level:.3g}"
    return f"## {metric} vs {x}\n\n```\n{table}\n```\n"


def _draw_table(plot: dict, frame: pd.DataFrame, out: Path, title: str) -> str | None:
    from plots.report import markdown_table
    from plots.tables import paper_table

    table = paper_table(
        frame,
        rows=plot.get("rows", ["dataset"]),
        columns=plot["columns"],
        metrics=plot.get("metrics", [plot["metric"]] if plot.get("metric") else None),
        value=plot.get("value", "value"),
        where=plot.get("where"),
        paper=plot.get("paper"),
        digits=int(plot.get("digits", 4)),
        ratio=bool(plot.get("ratio", False)),
        stat=str(plot.get("stat", "mean")),
    )
    if table.empty:
        return None
    name = str(plot.get("name") or "table")
    text = f"## {plot.get('title') or name}\n\n{markdown_table(table, index=False)}"
    (out / f"{name}.md").write_text(f"# {title}\n\n{text}")
    table.to_csv(out / f"{name}.csv", index=False)
    return text


def _draw_ccdf(plot: dict, frame: pd.DataFrame, out: Path, title: str) -> str | None:
    from plots.ccdf import median_releases, plot_ccdf

    name = str(plot.get("name") or "ccdf")
    select, where, best = plot["select"], plot.get("where"), plot.get("best_over")
    plot_ccdf(
        frame,
        out_stem=out / name,
        select=select,
        where=where,
        best_over=best,
        kind=plot.get("release_kind", "degree_histogram"),
        logx=bool(plot.get("logx", True)),
        logy=bool(plot.get("logy", True)),
        title=title,
    )
    picked = median_releases(frame, select=select, where=where, best_over=best)
    picked = picked[picked["series"] != "truth"][["dataset_label", "series", "rep", "error"]]
    return (
        f"## {name}: the median-{select} repetition drawn per series\n\n"
        f"```\n{picked.to_string(index=False)}\n```\n"
    )


#: Plot kinds: ``lines`` (default; metric vs a parameter), ``table`` (means beside the
#: paper's numbers, :mod:`plots.tables`), ``ccdf`` (stored releases, :mod:`plots.ccdf`).
PLOT_KINDS = {"lines": _draw_lines, "table": _draw_table, "ccdf": _draw_ccdf}


def draw_experiment(spec: ExperimentSpec, results_dir: Path | str) -> str:
    """Draw every figure and table of ``spec`` from its store; return the summary text."""
    from plots.report import write_report

    out = store_dir(results_dir, spec.name, spec.scale)
    frame = ResultStore(out / "store").load()
    texts = []
    if not frame.empty:
        for plot in spec.plots:
            kind = plot.get("kind", "lines")
            if kind not in PLOT_KINDS:  # resolve_experiment checks this first
                raise ConfigError(f"unknown plot kind {kind!r}; known: {', '.join(PLOT_KINDS)}")
            title = plot.get("title") or f"{spec.title or spec.name} [{spec.scale}]"
            text = PLOT_KINDS[kind](plot, frame, out, title)
            if text:
                texts.append(text)
    (out / "summary.md").parent.mkdir(parents=True, exist_ok=True)
    header = f"# {spec.name} [{spec.scale}]\n\n{spec.title}\n\n"
    (out / "summary.md").write_text(header + "\n".join(texts))
    if spec.notes:
        (out / "notes.md").write_text(spec.notes.strip() + "\n")
    write_report(Path(results_dir))
    return "\n".join(texts)
