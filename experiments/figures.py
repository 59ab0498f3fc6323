"""Draw an experiment's figures, tables, claims and ``summary.md`` from its result store,
into ``results/<experiment>/<scale>/`` (or a variant's directory), and skip a draw that
nothing changed. What a figure shows and why (the asked trials only, variants, the
fingerprint, plot kinds): ``docs/design.md`` ("Figures show what was asked", "Plot kinds").
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from pathlib import Path

import pandas as pd

from privpub.audit.stored import AUDIT_DIR, VERDICTS_FILE
from privpub.errors import ConfigError
from privpub.experiments.runner import store_dir
from privpub.experiments.spec import ExperimentSpec
from privpub.experiments.store import RELEASE_METRIC, ResultStore
from privpub.plots.audited_privacy import privacy_text, series_privacy, with_refutations
from privpub.plots.series import (
    SEED,
    add_series,
    best_over,
    dataset_label,
    error_label,
    label_styles,
    legend_marks,
    show_varied,
)
from privpub.plots.timings import write_timings
from privpub.results import select_rows

__all__ = ["draw_experiment", "asked_rows", "figure_dir", "PLOT_KINDS"]


def figure_dir(results_dir: Path | str, spec: ExperimentSpec, variant: str | None) -> Path:
    """``<results_dir>/<experiment>/<scale>`` or its ``variants/<variant>`` subdirectory."""
    out = store_dir(results_dir, spec.name, spec.scale)
    return out / "variants" / variant if variant else out


_DRAWING_CODE = ("privpub.experiments.figures", "privpub.experiments.claims", "privpub.results",
                 "privpub.plots")


def draw_fingerprint(spec: ExperimentSpec, results_dir: Path, *, seed: int,
                     variant: str | None, stored: bool) -> str:
    """A hash of everything a draw depends on: the spec (cells, labels, plots, claims,
    notes), the base seed, the variant, the store's files (names, sizes, modification
    times: any write changes it), the stored audits and the source of the drawing code."""
    digest = hashlib.sha256()
    digest.update(json.dumps([spec.to_dict(), seed, variant, stored], sort_keys=True,
                             default=str).encode())
    store = store_dir(results_dir, spec.name, spec.scale) / "store"
    for path in sorted(store.rglob("*")) if store.exists() else []:
        st = path.stat()
        digest.update(f"{path.relative_to(store)}:{st.st_size}:{st.st_mtime_ns}".encode())
    audits = Path(results_dir) / AUDIT_DIR / VERDICTS_FILE  # the series' audited privacy
    if audits.is_file():
        digest.update(f"audits:{audits.stat().st_size}:{audits.stat().st_mtime_ns}".encode())
    from privpub.experiments.catalog import source_path

    for name in _DRAWING_CODE:
        where = source_path(name)
        paths = sorted(p for p in where.rglob("*.py") if "tests" not in p.parts) \
            if where.is_dir() else [where]
        for path in paths:
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _up_to_date(out: Path, fingerprint: str) -> str | None:
    """The text printed by the last draw into ``out`` if it had ``fingerprint``."""
    try:
        meta = json.loads((out / "meta.json").read_text())
        printed = (out / "printed.txt").read_text()
    except (OSError, ValueError):
        return None
    return printed if meta.get("fingerprint") == fingerprint else None


def is_drawn(spec: ExperimentSpec, results_dir: Path | str, *, seed=0,
             variant: str | None = None, stored: bool = False) -> bool:
    """Whether ``spec``'s figures in ``results_dir`` are what its store gives now (a draw
    would only read them back)."""
    results_dir = Path(results_dir)
    fingerprint = draw_fingerprint(spec, results_dir, seed=seed, variant=variant, stored=stored)
    return _up_to_date(figure_dir(results_dir, spec, variant), fingerprint) is not None


def seeds_of(seed) -> tuple[int, ...]:
    """The base seeds a draw shows: ``seed`` (an int, or several from a sweep over seeds),
    sorted."""
    return (int(seed),) if isinstance(seed, int) else tuple(sorted({int(s) for s in seed}))


def asked_rows(frame: pd.DataFrame, spec: ExperimentSpec, seed) -> pd.DataFrame:
    """The rows of ``spec``'s trials under base seed ``seed`` (an int, or a list of them: a
    sweep over seeds) and the matching truths, relabelled with the spec's labels."""
    if frame.empty:
        return frame
    labels = spec.labels
    reps = pd.to_numeric(frame["rep"], errors="coerce")
    trial = frame["cell"].isin(list(labels)) & (reps < spec.repetitions)
    datasets = {c.dataset for c in spec.cells}
    truth = frame["cell"].astype(str).str.startswith("truth-") & frame["dataset"].isin(datasets)
    rows = frame[(trial | truth) & frame[SEED].isin(seeds_of(seed))].copy()
    rows["label"] = [labels.get(c, lab) for c, lab in zip(rows["cell"], rows["label"], strict=True)]
    rows["dataset_label"] = [
        spec.dataset_labels.get(f"{d}|{o}", dataset_label(d, o))
        for d, o in zip(rows["dataset"], rows["dataset_options"], strict=True)
    ]
    return rows


def _metric_label(metric: str) -> str:
    from privpub.registry import get_metric, metrics

    return get_metric(metric).label if metric in metrics() else metric


def _title(plot: dict, spec: ExperimentSpec, text: str) -> str:
    """The plot's title (or the experiment's) over a line naming what is drawn."""
    base = plot.get("title") or spec.title or spec.name
    return f"{base}\n{text} [{spec.scale}]"


def _draw_lines(plot: dict, frame: pd.DataFrame, out: Path, spec: ExperimentSpec):
    from privpub.plots.lines import plot_lines, summary_table
    from privpub.registry import get_metric, metrics

    x, metric = plot["x"], plot["metric"]
    rows = frame[frame["metric"] == metric]
    if rows.empty or x not in rows.columns:
        return None
    references = {}
    for ref in plot.get("references") or []:  # e.g. the majority vote of qardaji2012 Fig. 3
        level = select_rows(frame, {"metric": ref["metric"], "label": ref["label"]},
                            empty="drop")
        if not level.empty:
            references[str(ref.get("name") or ref["label"])] = float(level["value"].mean())
    rows = select_rows(rows, plot.get("where"), empty="keep")
    if rows.empty:
        return None
    if plot.get("best_over"):  # only the series the experiment declares tuned
        over = plot["best_over"]
        higher = metric in metrics() and get_metric(metric).higher_is_better
        rows = best_over(rows, over, higher_is_better=higher,
                         labels=spec.tuned_in_hindsight.get(over, []))
    rows = add_series(rows, x)
    panel = _column(plot.get("panel", "dataset"))
    hue = _column(plot.get("hue", "series"))
    rows, hue = show_varied(rows, [panel, x], hue)  # never a mean over what the user varied
    error = plot.get("error", "std")
    ylabel = plot.get("ylabel") or _metric_label(metric)
    names, footnotes = legend_marks(rows, hue, spec.privacy) if hue else ({}, [])
    name = str(plot.get("name") or f"{metric}_vs_{x}".replace("/", "_"))
    published = {}
    if plot.get("published") and panel == "dataset_label":  # a paper's plotted means
        from privpub.plots.published import published_curves

        published = published_curves(plot["published"], metric,
                                     dict(zip(rows["dataset"], rows["dataset_label"],
                                              strict=True)))
    plot_lines(
        rows,
        x=x,
        metric=metric,
        out_stem=out / name,
        panel=panel,
        hue=hue,
        logx=bool(plot.get("logx", False)),
        logy=bool(plot.get("logy", False)),
        error=error,
        title=_title(plot, spec, f"{ylabel} vs {plot.get('xlabel') or x}"),
        xlabel=plot.get("xlabel"),
        ylabel=ylabel,
        reference_lines=references,
        legend_names=names,
        footnotes=footnotes,
        styles=_label_styles(),
        linestyles=plot.get("linestyles"),
        published=published,
    )
    table = summary_table(rows, x=x, metric=metric, hue=hue, panel=panel, error=error)
    text = table.to_string()
    for ref, level in references.items():
        text += f"\nreference line {ref}: {level:.3g}"
    reps = int(rows.groupby(["cell"])["rep"].nunique().max())
    return name, "figure", (
        f"## {name}: {ylabel} vs {x}\n\nmean over repetitions; {error_label(error, reps)}\n\n"
        f"```\n{text}\n```\n" + "".join(f"\n{f}" for f in footnotes)
    )


@functools.cache
def _label_styles() -> dict[str, tuple[int, int]]:
    """The colour and marker of every series label of the packaged experiment files: the
    same in every figure, run and experiment (docs/design.md, "Stable identity, distinct
    looks")."""
    from privpub.experiments.catalog import CONF_DIR, label_groups

    return label_styles(label_groups(CONF_DIR))


def _column(name):
    """Plot-spec names of grouping columns: ``dataset`` means the dataset label."""
    return "dataset_label" if name == "dataset" else name


def _draw_table(plot: dict, frame: pd.DataFrame, out: Path, spec: ExperimentSpec):
    from privpub.plots.report import markdown_table
    from privpub.plots.tables import paper_table

    options = dict(
        rows=plot.get("rows", ["dataset"]),
        columns=plot["columns"],
        metrics=plot.get("metrics", [plot["metric"]] if plot.get("metric") else None),
        value=plot.get("value", "value"),
        where=plot.get("where"),
        paper=plot.get("paper"),
        digits=int(plot.get("digits", 4)),
        ratio=bool(plot.get("ratio", False)),
        stat=str(plot.get("stat", "mean")),
        average_over=plot.get("average_over") or (),
    )
    claim = next((c for c in spec.claims
                  if c["kind"] == "table" and c.get("plot") == plot.get("name")), None)
    tolerance = plot.get("tolerance")
    if tolerance is None and claim is not None:  # the paper claim that checks this table
        tolerance = claim["tolerance"]
    if tolerance is not None and plot.get("paper"):
        options["tolerance"] = float(tolerance)
        options["better"] = (claim or {}).get("better")  # a one-sided claim flags one side
    table = paper_table(frame, **options)
    if table.empty:
        return None
    name = str(plot.get("name") or "table")
    heading = plot.get("title") or name
    text = f"## {heading}\n\n{markdown_table(table, index=False)}"
    (out / f"{name}.md").write_text(f"# {spec.title or spec.name} [{spec.scale}]\n\n{text}")
    table.to_csv(out / f"{name}.csv", index=False)
    return name, "table", text


def _draw_ccdf(plot: dict, frame: pd.DataFrame, out: Path, spec: ExperimentSpec):
    from privpub.plots.ccdf import median_releases, plot_ccdf

    name = str(plot.get("name") or "ccdf")
    select, where, best = plot["select"], plot.get("where"), plot.get("best_over")
    tuned = spec.tuned_in_hindsight.get(best, []) if best else None
    picked = median_releases(frame, select=select, where=where, best_over=best, tuned=tuned)
    scored = frame[frame["metric"] == select]
    scored = add_series(select_rows(scored, where, empty="keep"), x="__none__")
    scored = scored[scored["series"].isin(set(picked["series"]))]
    names, footnotes = legend_marks(scored, "series", spec.privacy)
    plot_ccdf(
        frame,
        out_stem=out / name,
        select=select,
        where=where,
        best_over=best,
        tuned=tuned,
        kind=plot.get("release_kind", "degree_histogram"),
        logx=bool(plot.get("logx", True)),
        logy=bool(plot.get("logy", True)),
        title=_title(plot, spec, f"{plot.get('cumulative', 'ccdf').upper()} of the "
                     f"median-{_metric_label(select)} release"),
        cumulative=str(plot.get("cumulative", "ccdf")),
        legend_names=names,
        footnotes=footnotes,
        styles=_label_styles(),
    )
    picked = picked[picked["series"] != "truth"][["dataset_label", "series", "rep", "error"]]
    return name, "figure", (
        f"## {name}: the median-{select} repetition drawn per series\n\n"
        f"```\n{picked.to_string(index=False)}\n```\n"
    )


def _draw_curve(plot: dict, frame: pd.DataFrame, out: Path, spec: ExperimentSpec):
    """A metric that returns a curve (``{x: value}``, stored as rows ``<metric>/<x>``), drawn
    against its own x: sala2011 Fig. 8's share spammed per number of compromised nodes."""
    metric = str(plot["metric"])
    prefix = metric + "/"
    rows = frame[frame["metric"].astype(str).str.startswith(prefix)]
    if rows.empty:
        return None
    x = pd.to_numeric(rows["metric"].str[len(prefix):], errors="coerce")
    rows = rows.assign(curve_x=x, metric=metric)[x.notna().to_numpy()]
    lines = {**plot, "kind": "lines", "x": "curve_x", "metric": metric,
             "xlabel": plot.get("xlabel") or "x",
             "name": plot.get("name") or f"{metric}_curve".replace("/", "_")}
    return _draw_lines(lines, rows, out, spec)


def _draw_tradeoff(plot: dict, frame: pd.DataFrame, out: Path, spec: ExperimentSpec):
    from privpub.plots.tradeoff import plot_tradeoff, tradeoff_points

    x_metric, y_metric, along = plot["x_metric"], plot["y_metric"], plot["along"]
    rows = frame[frame["metric"].isin([x_metric, y_metric])]
    if rows.empty or along not in rows.columns:
        return None
    rows = add_series(rows, along)
    names, footnotes = legend_marks(rows, "series", spec.privacy)
    xlabel = plot.get("xlabel") or _metric_label(x_metric)
    ylabel = plot.get("ylabel") or _metric_label(y_metric)
    name = str(plot.get("name") or f"{y_metric}_vs_{x_metric}".replace("/", "_"))
    plot_tradeoff(rows, out_stem=out / name, x_metric=x_metric, y_metric=y_metric,
                  along=along, xlabel=xlabel, ylabel=ylabel,
                  title=_title(plot, spec, f"{ylabel} vs {xlabel}, one point per {along}"),
                  logx=bool(plot.get("logx", False)), logy=bool(plot.get("logy", False)),
                  legend_names=names, footnotes=footnotes, styles=_label_styles())
    points = tradeoff_points(rows, x_metric=x_metric, y_metric=y_metric, along=along)
    return name, "figure", (
        f"## {name}: {ylabel} vs {xlabel}, one point per {along} (means)\n\n"
        f"```\n{points.to_string(index=False)}\n```\n"
    )


#: Plot kinds: ``lines`` (default; metric vs a parameter), ``table`` (means beside the
#: paper's numbers, :mod:`privpub.plots.tables`), ``ccdf`` (stored releases,
#: :mod:`privpub.plots.ccdf`),
#: ``tradeoff`` (one metric against another along a parameter, :mod:`privpub.plots.tradeoff`),
#: ``curve`` (a metric returning a curve, against its own x).
PLOT_KINDS = {"lines": _draw_lines, "table": _draw_table, "ccdf": _draw_ccdf,
              "tradeoff": _draw_tradeoff, "curve": _draw_curve}


def _other_cells(frame: pd.DataFrame, drawn: pd.DataFrame) -> str:
    """A summary.md section listing the stored cells that this figure does not draw."""
    if frame.empty:
        return ""
    trials = frame[~frame["cell"].astype(str).str.startswith("truth-")]
    other = trials[~trials.set_index(["cell", "base_seed", "rep"]).index.isin(
        drawn.set_index(["cell", "base_seed", "rep"]).index)]
    if other.empty:
        return ""
    cells = other.drop_duplicates(["cell", "base_seed"])
    by = cells.groupby(["dataset", "label", "base_seed"]).size().reset_index(name="cells")
    lines = [f"- {r.dataset} / {r.label} (seed {r.base_seed}): {r.cells} cell(s)"
             for r in by.itertuples()]
    return ("## Other stored cells (not drawn)\n\nThe store also holds these, from other "
            "runs; `plot_stored=true` draws everything stored (in `variants/stored/`).\n\n"
            + "\n".join(lines[:50]) + ("\n- ..." if len(lines) > 50 else "") + "\n")


def _status_section(rows: pd.DataFrame, status: str, heading: str) -> str:
    found = rows[rows["status"] == status].drop_duplicates(["cell", SEED, "rep"])
    if found.empty:
        return ""
    counts = found.groupby(["dataset", "label", "error"]).size().reset_index(name="n")
    lines = [f"- {r.dataset} / {r.label}: {r.n} trial(s): {r.error}" for r in counts.itertuples()]
    return f"## {heading}\n\n" + "\n".join(lines) + "\n"


def noise_free_limits(ok: pd.DataFrame, twins: pd.DataFrame, spec: ExperimentSpec) -> list[dict]:
    """Per dataset, series and metric: the mean error at the series' largest epsilon beside
    the mean error of its noise-free twin (the same code with zero noise)."""
    if ok.empty or twins.empty:
        return []
    metrics = [m for m in spec.metrics if m in set(twins["metric"])]
    out = []
    both = add_series(pd.concat([ok, twins]), x="epsilon")
    both["noise_free"] = both["noise_free"].fillna(False).astype(bool)
    keys = ["dataset_label", "series", "metric", "epsilon"]
    for key, group in both[both["metric"].isin(metrics)].groupby(keys, sort=True):
        noisy, free = group[~group["noise_free"]], group[group["noise_free"]]
        if free.empty or noisy.empty:
            continue
        out.append({
            "dataset": key[0], "series": key[1], "metric": key[2], "epsilon": key[3],
            "with_noise": float(noisy["value"].mean()), "noise_free": float(free["value"].mean()),
            "n": int(noisy["rep"].nunique()),
        })
    return out


def _limits_text(limits: list[dict]) -> str:
    if not limits:
        return ""
    lines = ["## The noise-free limit", "",
             "Each DP series at its largest epsilon, beside the same code with every noise "
             "primitive drawing zero: what remains without privacy is structure, the rest is "
             "noise.", "",
             "| dataset | series | metric | epsilon | with noise | noise-free |",
             "|---|---|---|---|---|---|"]
    for r in limits:
        lines.append(f"| {r['dataset']} | {r['series']} | {r['metric']} | {r['epsilon']:g} | "
                     f"{r['with_noise']:.4g} | {r['noise_free']:.4g} |")
    return "\n".join(lines) + "\n"


def _caveats_text(ok: pd.DataFrame) -> str:
    """The whole text of every caveat a drawn series carries (figures show the start)."""
    if ok.empty or "caveat" not in ok.columns:
        return ""
    pairs = ok[ok["caveat"].notna() & (ok["caveat"].astype(str) != "")]
    pairs = pairs.drop_duplicates(["label", "caveat"])[["label", "caveat"]]
    if pairs.empty:
        return ""
    lines = ["## Caveats", "", "Why a series' privacy claim does not (or is not known to) hold:",
             ""]
    for caveat, group in pairs.groupby("caveat", sort=False):
        lines.append(f"- **{', '.join(dict.fromkeys(group['label']))}**: {caveat}")
    return "\n".join(lines) + "\n"


def _claims(spec: ExperimentSpec, ok: pd.DataFrame, twins: pd.DataFrame | None = None,
            seeds: tuple[int, ...] = (0,)) -> list[dict]:
    """The claims judged on the drawn rows; after a sweep over seeds, on each seed's rows
    alone (as a run with that seed would judge them), ids suffixed ``(seed=<s>)``."""
    from privpub.experiments.claims import evaluate_claims

    if not spec.claims:
        return []
    if len(seeds) > 1:
        out = []
        for seed in seeds:
            mine = ok[ok[SEED] == seed]
            theirs = twins[twins[SEED] == seed] if twins is not None and not twins.empty \
                else twins
            for result in _claims(spec, mine, theirs, (seed,)) if not mine.empty else []:
                out.append({**result, "id": f"{result.get('id')} (seed={seed})", "seed": seed})
        return out
    frame = ok[ok["metric"] != RELEASE_METRIC]
    if not frame.empty:
        frame = add_series(frame, x="__none__")
    if twins is not None and not twins.empty:  # claims also judged noise-free
        twins = twins[(twins["status"] == "ok") & (twins["metric"] != RELEASE_METRIC)]
        twins = add_series(twins, x="__none__") if not twins.empty else None
    return evaluate_claims(spec.claims, frame, plots=spec.plots, twins=twins)


def _claims_text(results: list[dict]) -> str:
    if not results:
        return ""
    lines = ["## The paper's claims", "", "| claim | source | about | verdict | numbers |",
             "|---|---|---|---|---|"]
    for r in results:
        numbers = str(r.get("summary") or r.get("reason") or "").replace("|", "\\|")
        text = str(r.get("text", "")).replace("|", "\\|")
        about = str(r.get("subject") or "").replace("|", "\\|")
        if "seed" in r:
            text = f"(seed={r['seed']}) {text}"
        lines.append(f"| {text} | {r.get('source', '')} | {about} | **{r['verdict']}** | "
                     f"{numbers} |")
    for r in results:
        if r.get("deviation") and r["verdict"] != "held":
            lines.append(f"\n- {r['id']}: {r['deviation']}")
    return "\n".join(lines) + "\n"


def draw_experiment(
    spec: ExperimentSpec,
    results_dir: Path | str,
    *,
    seed: int | list[int] = 0,
    variant: str | None = None,
    overrides: list[str] | None = None,
    summary=None,
    stored: bool = False,
    redraw: bool = False,
    index: bool = True,
) -> str:
    """Draw every figure and table of ``spec`` from its store; return the summary text.

    Parameters
    ----------
    spec : ExperimentSpec
        What was asked: its cells, repetitions and plots.
    results_dir : path
        The results directory (the store is ``<results_dir>/<experiment>/<scale>/store``).
    seed : int or list of int
        The base seed whose trials are drawn; several (a sweep over seeds) are each a series
        of every figure and a row of every table (``seed=1``) and judge the claims each.
    variant : str, optional
        Draw into ``variants/<variant>/`` (a run that changed what is computed).
    overrides : list of str, optional
        The command line, recorded in ``meta.json``.
    summary : experiments.runner.RunSummary, optional
        The run's counts and time, recorded in ``meta.json``.
    stored : bool
        Draw every stored cell of ``seed`` instead of the spec's (``plot_stored=true``).
    redraw : bool
        Draw even if nothing changed since the last draw (``redraw=true``).
    index : bool
        Rewrite the results directory's ``report.html`` and ``timings.md`` afterwards. A
        multirun draws its experiments with ``index=False`` and writes both once at the end
        (:func:`write_index`): each reads every experiment of the directory.
    """

    results_dir = Path(results_dir)
    out = figure_dir(results_dir, spec, variant)
    out.mkdir(parents=True, exist_ok=True)
    fingerprint = draw_fingerprint(spec, results_dir, seed=seed, variant=variant, stored=stored)
    printed = None if redraw else _up_to_date(out, fingerprint)
    if printed is not None:
        report = results_dir / "report.html"
        stale = not report.exists() or report.stat().st_mtime < (out / "meta.json").stat().st_mtime
        if index and stale:
            write_index(results_dir)
        return printed
    frame = ResultStore(store_dir(results_dir, spec.name, spec.scale) / "store").load(
        statuses=None
    )
    rows, twins = _drawn_rows(frame, spec, seed, stored)
    ok = rows[rows["status"] == "ok"] if not rows.empty else rows
    privacy = series_privacy(ok, results_dir)  # claimed beside audited (docs/audit.md)
    texts, drawn = _draw_plots(spec, with_refutations(ok, privacy), out)
    claims = _claims(spec, ok, twins, seeds_of(seed)) if not ok.empty else []
    (out / "claims.json").write_text(_dumps(claims))
    limits = noise_free_limits(ok, twins[twins["status"] == "ok"] if not twins.empty else twins,
                               spec)
    sections = [_claims_text(claims), *texts, _limits_text(limits), privacy_text(privacy),
                _caveats_text(ok)]
    if not rows.empty:
        trials = pd.concat([rows, twins])  # a noise-free twin is a trial too, as in the run line
        sections += [
            _status_section(trials, "skipped", "Skipped trials (the cell cannot apply)"),
            _status_section(trials, "error", "Failed trials"),
            _other_cells(frame, trials),
        ]
    (out / "summary.md").write_text(_header(spec, variant, overrides)
                                    + "\n".join(s for s in sections if s))
    if spec.notes:
        (out / "notes.md").write_text(spec.notes.strip() + "\n")
    meta = _meta(spec, pd.concat([rows, twins]), drawn, variant, overrides, summary,
                 seeds_of(seed))
    meta["noise_free"] = limits
    meta["series_privacy"] = privacy
    meta["fingerprint"] = fingerprint
    printed = "\n".join(t for t in texts if t)
    (out / "printed.txt").write_text(printed)
    (out / "meta.json").write_text(_dumps(meta))
    if index:
        write_index(results_dir)
    return printed


def write_index(results_dir: Path | str) -> None:
    """The results directory's overview of every experiment in it: ``report.html`` (with
    its ``report.md``) and ``timings.md``."""
    from privpub.plots.report import write_report

    write_report(Path(results_dir))
    write_timings(Path(results_dir))


def _header(spec: ExperimentSpec, variant: str | None, overrides) -> str:
    """The head of ``summary.md``: the experiment, its scale and title, the variant."""
    header = f"# {spec.name} [{spec.scale}]\n\n{spec.title}\n\n"
    if variant:
        header += f"Variant `{variant}`: {' '.join(overrides or [])}\n\n"
    return header


def _drawn_rows(frame: pd.DataFrame, spec: ExperimentSpec, seed, stored: bool):
    """The rows a draw shows (the spec's trials, or every stored cell of ``seed`` with
    ``stored``), split into ordinary rows and noise-free twins."""
    if stored and not frame.empty:
        rows = frame[frame[SEED].isin(seeds_of(seed))]
    else:
        rows = asked_rows(frame, spec, seed)
    twins = rows.iloc[0:0]
    if not rows.empty:
        flag = rows["noise_free"].fillna(False).astype(bool) if "noise_free" in rows else False
        rows, twins = rows[~flag], rows[flag]
    return rows, twins


def _draw_plots(spec: ExperimentSpec, ok: pd.DataFrame, out: Path):
    """Draw every plot of ``spec`` from the ok rows into ``out`` (removing the figures of an
    earlier draw first); returns the summary texts and ``{"figure": [...], "table":
    [...]}``, the names drawn."""
    texts, drawn = [], {"figure": [], "table": []}
    for old in out.glob("*.png"):  # figures of an earlier grid must not linger
        old.unlink()
        old.with_suffix(".pdf").unlink(missing_ok=True)
    if ok.empty:
        return texts, drawn
    for plot in spec.plots:
        kind = plot.get("kind", "lines")
        if kind not in PLOT_KINDS:  # resolve_experiment checks this first
            raise ConfigError(f"unknown plot kind {kind!r}; known: {', '.join(PLOT_KINDS)}")
        result = PLOT_KINDS[kind](plot, ok, out, spec)
        if result:
            name, what, text = result
            drawn[what].append(name)
            texts.append(text)
    return texts, drawn


def _meta(spec, rows, drawn, variant, overrides, summary, seeds=(0,)) -> dict:
    trials = rows[~rows["cell"].astype(str).str.startswith("truth-")] if not rows.empty else rows
    per_trial = trials.drop_duplicates(["cell", SEED, "rep"]) if not trials.empty else trials
    counts = per_trial["status"].value_counts().to_dict() if not per_trial.empty else {}
    def column(name):
        return pd.to_numeric(per_trial.get(name, pd.Series(dtype=float)), errors="coerce")

    # the whole trial (data, mechanism, metrics) where recorded, else the mechanism call
    seconds = column("task_seconds") if "task_seconds" in per_trial else column("seconds")
    cpu, peak = column("cpu_seconds"), column("peak_mb")
    if "release_cached" in per_trial:  # the mechanism's CPU was spent by another trial
        cpu = cpu.mask(per_trial["release_cached"].eq(True).to_numpy())
    slowest = []
    if not per_trial.empty and seconds.notna().any():
        by_cell = per_trial.assign(_s=seconds).groupby(["dataset", "label", "params"])["_s"]
        top = by_cell.agg(["mean", "count"]).sort_values("mean", ascending=False).head(5)
        slowest = [{"dataset": d, "series": s, "params": p, "seconds": float(r["mean"]),
                    "trials": int(r["count"])} for (d, s, p), r in top.iterrows()]
    meta = {
        "experiment": spec.name,
        "paper": spec.paper,
        "title": spec.title,
        "scale": spec.scale,
        "privacy": spec.privacy,
        "cells": len(spec.cells),
        "repetitions": spec.repetitions,
        "trials": spec.n_trials * len(seeds),
        "seeds": list(seeds),
        "ok": int(counts.get("ok", 0)),
        "skipped": int(counts.get("skipped", 0)),
        "failed": int(counts.get("error", 0)),
        "missing": spec.n_trials * len(seeds) - len(per_trial),
        "variant": variant,
        "overrides": list(overrides or []),
        "figures": drawn["figure"],
        "tables": drawn["table"],
        "drawn_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "seconds": {
            "total": float(seconds.sum()) if len(seconds) else 0.0,
            "per_trial": float(seconds.mean()) if seconds.notna().any() else None,
            "cpu_total": float(cpu.sum()) if cpu.notna().any() else None,
        },
        "peak_mb": float(peak.max()) if peak.notna().any() else None,
        "slowest": slowest,
    }
    if summary is not None:
        meta["run"] = {"ran": summary.n_ok, "stored": summary.n_stored,
                       "recomputed": summary.n_recomputed, "wall_seconds": summary.seconds}
    return meta


def _plain(value):
    """JSON-safe: numpy scalars as Python numbers, NaN and infinities as null."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _dumps(value) -> str:
    return json.dumps(_plain(value), indent=1, allow_nan=False)
