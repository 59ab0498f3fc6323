"""``report.md``: the report as markdown (an overview of the claim verdicts per paper and
scale, each paper's deviations, then one section per experiment and scale).

Part of :mod:`privpub.plots.report`; what the report shows and why: docs/design.md ("Report").
"""

from __future__ import annotations

from pathlib import Path

from privpub.papers import PAPERS, paper_citation

from .deviation_rows import DEV_INTRO, cause_text, deviation_cells, deviations
from .privacy import md_audits, md_series_privacy, refuted_line
from .results_tree import Experiment, Run, by_paper, counted_runs, scales_of, shown_variants
from .text import (
    SMOKE_SCALE,
    SMOKE_WARNING,
    adapt_markdown,
    claim_notes,
    count_text,
    fmt,
    gh_anchor,
    link,
    md_cell,
    meta_line,
    number,
    scale_label,
    verdict,
)

__all__ = ["render_markdown"]

_MD_VERDICT = {
    "held": "✅ held",
    "not held": "❌ **not held**",
    "not evaluated": "⚪ not evaluated",
}


def _run_heading(exp: Experiment, run: Run) -> str:
    return f"{exp.name} [{run.scale}]" if run.scale else exp.name


def _md_overview(experiments: list[Experiment], scales: list[str]) -> list[str]:
    out = ["## Overview", ""]
    out += [
        "Claim verdicts per scale: held / not held / not evaluated (the paper's claims, "
        "checked on our results; see docs/claims.md). "
        f"Verdicts at smoke scale come from {SMOKE_WARNING}.",
        "",
    ]
    if not experiments:
        return out + ["_No experiment directories found._", ""]
    for paper, exps in by_paper(experiments):
        name = f"{paper}: {paper_citation(paper)}" if paper in PAPERS else (
            paper or "other experiments")
        out += [f"### {name}", ""]
        head = ["experiment", "title", "scales"] + [f"claims at {scale_label(s)}" for s in scales]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for exp in exps:
            by_scale = {r.scale: r for r in exp.runs}
            present = ", ".join(scale_label(r.scale) for r in exp.runs) or "–"
            cells = [
                f"[{md_cell(exp.name)}](#{gh_anchor(exp.name)})",
                md_cell(exp.title or "–"),
                present,
            ]
            for s in scales:
                run = by_scale.get(s)
                text = "–" if run is None else _md_counts(run)
                if run is not None and number(run.meta.get("failed")):
                    text += f" · **{fmt(run.meta['failed'])} trials failed**"
                cells.append(text)
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out


def _md_counts(run: Run) -> str:
    """An overview cell: the verdicts of the run and of each variant with claims, one
    directory each (``variant <name>: ...``), as each run printed them."""
    parts = [(f"variant {r.path.name}: " if r is not run else "")
             + count_text(r.claims, r.problems) for r in counted_runs(run)]
    return "; ".join(parts) or count_text(run.claims, run.problems)


def _md_deviations(experiments: list[Experiment]) -> list[str]:
    out = []
    rows = deviations(experiments)
    for paper, exps in by_paper(experiments):
        mine = [d for d in rows if d.experiment in exps]
        if not mine:
            continue
        out += [f"## Deviations: {paper or 'other experiments'}", "", DEV_INTRO, ""]
        head = ["claim", "experiment", "ours", "the paper's reading", "noise-free", "verdict",
                "cause"]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for d in mine:
            cells = deviation_cells(d)
            out.append("| " + " | ".join(md_cell(cells[k]) for k in (
                "claim", "where", "ours", "reading", "noise_free", "verdict", "cause")) + " |")
        out.append("")
    return out


def _md_claims(run: Run) -> list[str]:
    if run.claims is None:
        return []
    out = ["#### Claims", ""]
    if not run.claims:
        return out + ["_claims.json lists no claim._", ""]
    if run.scale == SMOKE_SCALE:
        out += [f"_Smoke scale: {SMOKE_WARNING}._", ""]
    causes = any(cause_text(c) for c in run.claims)  # no empty column
    about = any(c.get("subject") for c in run.claims)  # claims.json of older code: none
    head = (["claim", "the paper says"] + (["about"] if about else []) + ["verdict", "numbers"]
            + (["deviation"] if causes else []))
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in run.claims:
        said = md_cell(c.get("text") or "–")
        if c.get("source"):
            said += f" ({md_cell(c['source'])})"
        numbers = md_cell(c.get("summary") or "–")
        extra = claim_notes(c)
        if extra:
            numbers += f" ({'; '.join(extra)})"
        cells = [f"`{md_cell(c.get('id', '?'))}`", said]
        cells += [md_cell(c.get("subject") or "–")] if about else []
        cells += [_MD_VERDICT[verdict(c)], numbers]
        cells += [md_cell(cause_text(c))] if causes else []
        out.append("| " + " | ".join(cells) + " |")
    return out + [""]


def _md_tables(run: Run, results_dir: Path) -> list[str]:
    if not run.tables:
        return []
    out = ["#### Tables", ""]
    for t in run.tables:
        links = [f"[{p.name}]({link(p, results_dir)})" for p in (t.md, t.csv) if p is not None]
        out += [f"**{md_cell(t.title or t.name)}** ({', '.join(links) or 'no file'})", ""]
        if t.markdown is not None:
            out += [adapt_markdown(t.markdown, demote=3, prefix=""), ""]
            continue
        if not t.rows:
            continue
        if t.rule:
            out += [
                f"Cells: ours / paper = ours÷paper; ⚠ {t.rule}: "
                f"{t.n_flagged} of {t.n_compared} flagged.",
                "",
            ]
        else:
            out += [f"Cells: ours / paper = ours÷paper ({t.reason}).", ""]
        head = [*t.keys, *t.columns]
        out += ["| " + " | ".join(map(md_cell, head)) + " |", "|" + "---|" * len(head)]
        for keys, cells in t.rows:
            shown = []
            for ours, paper, ratio, flagged in cells:
                text = ours or "–"
                if paper:
                    text += f" / {paper}"
                if ratio:
                    text += f" = {ratio}"
                shown.append(f"**{text}** ⚠" if flagged else text)
            out.append("| " + " | ".join(map(md_cell, [*keys, *shown])) + " |")
        out.append("")
    return out


def _md_run(exp: Experiment, run: Run, results_dir: Path, *, variant: bool = False
            ) -> list[str]:
    """One scale's section (or, with ``variant``, one of its variants shown in full)."""
    heading = _run_heading(exp, run) + (f" variant {run.path.name}" if variant else "")
    out = [f"### {heading}", ""]
    full = shown_variants(run)
    if full:  # a sweep drew into its variants only: they are this scale's results
        out += ["Drawn into variants only (a sweep or a one-off run): "
                + ", ".join(v.path.name for v in full) + ".", ""]
        for v in full:
            out += _md_run(exp, v, results_dir, variant=True)
        return out
    if run.scale == SMOKE_SCALE:
        out += [f"> **Smoke scale: {SMOKE_WARNING}.**", ""]
    line = meta_line(run.meta)
    if line:
        out += [line, ""]
    for problem in run.problems:
        out.append(f"- ⚠ {problem}")
    if run.problems:
        out.append("")
    if refuted_line(run):
        out += [f"> ⚠ {refuted_line(run)}", ""]
    if run.figures:
        out += ["#### Figures", ""]
        for png in run.figures:
            out.append(f"![{png.stem}]({link(png, results_dir)})")
            pdf = png.with_suffix(".pdf")
            if pdf.exists():
                out.append(f"[{pdf.name}]({link(pdf, results_dir)})")
            out.append("")
    else:
        out += ["_No figures._", ""]
    out += _md_claims(run)
    out += md_series_privacy(run)
    out += _md_tables(run, results_dir)
    if run.notes:
        out += [
            "#### Notes",
            "",
            adapt_markdown(run.notes, demote=4, prefix=link(run.path, results_dir)),
            "",
        ]
    if run.summary is not None:
        out += [
            "Mean ± error tables and skipped cells: "
            f"[summary.md]({link(run.summary, results_dir)})",
            "",
        ]
    if run.variants:
        out += ["#### Variants", ""]
        for v in run.variants:
            target = v.summary or (v.figures[0] if v.figures else v.path)
            counts = f" ({count_text(v.claims, v.problems)})" if v.claims is not None else ""
            out.append(f"- [{md_cell(v.path.name)}]({link(target, results_dir)}){counts}")
        out.append("")
    return out


def render_markdown(
    experiments: list[Experiment], results_dir: Path, *, title: str = "privpub results"
) -> str:
    """The text of ``report.md`` for ``experiments`` (from :func:`collect`)."""
    out = [f"# {title}", ""]
    out += ["A self-contained page with every figure embedded: [report.html](report.html).", ""]
    out += _md_overview(experiments, scales_of(experiments))
    out += _md_deviations(experiments)
    out += md_audits(results_dir)
    for exp in experiments:
        out += [f"## {exp.name}", ""]
        if exp.title:
            out += [md_cell(exp.title), ""]
        if not exp.runs:
            out += ["_No figures._", ""]
        for run in exp.runs:
            out += _md_run(exp, run, results_dir)
    return "\n".join(out).rstrip() + "\n"
