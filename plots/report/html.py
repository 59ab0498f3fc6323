"""``report.html``: the report as one self-contained page (figures embedded as base64 PNG
data URIs, the CSS of ``report.css`` and the JavaScript of ``report.js`` inline, no external
request), for a reader who compares the whole reproduction with the papers in a browser.

Part of :mod:`privpub.plots.report`; what the report shows and why: docs/design.md ("Report").
"""

from __future__ import annotations

import base64
import html
import re
from functools import cache
from importlib.resources import files
from pathlib import Path
from urllib.parse import unquote

from privpub.papers import PAPERS, paper_citation
from privpub.results import VERDICTS

from .deviation_rows import DEV_INTRO, cause_text, deviation_cells, deviations, verdict_of
from .privacy import html_audits, html_series_privacy, refuted_line
from .results_tree import (
    Experiment,
    Run,
    by_paper,
    counted_runs,
    read_text,
    scales_of,
    shown_variants,
)
from .text import (
    ABSOLUTE_LINK,
    SMOKE_SCALE,
    SMOKE_WARNING,
    adapt_markdown,
    anchor,
    claim_notes,
    count_text,
    fmt,
    group_text,
    link,
    meta_line,
    number,
    scale_label,
    verdict,
)

__all__ = ["FIGURE_SCALE", "render_html"]

#: CSS px per PNG pixel at which the page shows a figure: its size in inches as drawn
#: (:func:`privpub.plots.lines.save_figure` writes 150 dpi; a browser has 96 CSS px per inch), so
#: its
#: text reads as on paper; a figure wider than the page shrinks to fit; click to enlarge.
FIGURE_SCALE = 96 / 150

_e = html.escape


@cache
def _asset(name: str) -> str:
    """The text of ``report.css`` or ``report.js`` (package data beside this module)."""
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


_BADGE = {"held": "b-held", "not held": "b-nh", "not evaluated": "b-ne"}


def _badge(v: str, text: str | None = None) -> str:
    return f'<span class="badge {_BADGE[v]}">{_e(text or v)}</span>'


def _html_counts(run: Run) -> str:
    if run.claims is None:
        return f'<span class="badge b-none">{_e(count_text(run.claims, run.problems))}</span>'
    counts = run.counts
    if not run.claims:
        return '<span class="badge b-none">no claims</span>'
    return "".join(_badge(v, f"{counts[v]} {v}") for v in VERDICTS if counts.get(v))


#: Variants named in one overview cell; the rest are counted ("+ 2 more variants").
_OVERVIEW_VARIANTS = 3


def _html_overview_counts(exp: Experiment, run: Run) -> str:
    """An overview cell: the run's verdicts and each variant's with claims, one line each
    (a sweep draws into a variant only), as each run printed them."""
    counted = counted_runs(run)
    if not counted:
        return _html_counts(run)
    lines = []
    for r in counted[: _OVERVIEW_VARIANTS + (run in counted)]:
        if r is run:
            lines.append(f"<div>{_html_counts(r)}</div>")
            continue
        target = anchor(exp.name, run.scale, *([r.path.name] if r in shown_variants(run) else []))
        where = f'<a href="#{target}">{_e(r.path.name)}</a>'
        lines.append(f'<div class="variant">variant {where}: {_html_counts(r)}</div>')
    more = len(counted) - len(lines)
    if more:
        lines.append(f'<div class="variant muted">+ {more} more variant(s)</div>')
    return "".join(lines)


def _md_html(text: str) -> str:
    """Markdown → HTML with raw HTML escaped (``tables`` and ``fenced_code`` extensions)."""
    try:
        import markdown
    except ImportError:  # a dependency, but the report must not fail without it
        return f"<pre>{_e(text)}</pre>"
    md = markdown.Markdown(extensions=["tables", "fenced_code"], output_format="html")
    md.preprocessors.deregister("html_block")  # raw HTML blocks are text, escaped
    md.inlinePatterns.deregister("html")  # so is inline raw HTML
    return md.convert(text)


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return None


def _data_uri(path: Path) -> tuple[str, tuple[int, int] | None]:
    data = path.read_bytes()
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii"), _png_size(data)


_IMG = re.compile(r'<img alt="([^"]*)" src="([^"]*)"\s*/?>')


def _embed_md_images(fragment: str, results_dir: Path) -> str:
    """Embed relative PNG images of rendered notes; external images become plain links."""

    def repl(m: re.Match) -> str:
        alt, src = m.group(1), m.group(2)
        if src.startswith("data:"):
            return m.group(0)
        if ABSOLUTE_LINK.match(src):
            return f'<a href="{src}">{alt or "image"} (external image, not loaded)</a>'
        path = results_dir / unquote(html.unescape(src))
        try:
            uri, _ = _data_uri(path) if path.suffix.lower() == ".png" else (None, None)
        except OSError:
            uri = None
        if uri is None:
            return f'<a href="{src}">{alt or src}</a>'
        return f'<img alt="{alt}" src="{uri}" style="max-width:100%">'

    return _IMG.sub(repl, fragment)


def _rendered(text: str, run: Run, results_dir: Path, demote: int) -> str:
    source = adapt_markdown(text, demote=demote, prefix=link(run.path, results_dir))
    return _embed_md_images(_md_html(source), results_dir)


def _html_overview(experiments: list[Experiment], scales: list[str]) -> list[str]:
    out = [
        '<section id="overview"><h2>Overview</h2>',
        '<p class="lead">The papers\' claims, checked on our results (docs/claims.md): '
        + _badge("held")
        + " "
        + _badge("not held")
        + " "
        + _badge("not evaluated")
        + f". Verdicts at smoke scale come from {_e(SMOKE_WARNING)}.</p>",
    ]
    if not experiments:
        out.append('<p class="muted">No experiment directories found.</p>')
        out.append("</section>")
        return out
    head = ["experiment", "title", "scales", *(f"claims at {scale_label(s)}" for s in scales)]
    out.append(
        '<div class="scroll"><table class="overview"><thead><tr>'
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
    )
    for paper, exps in by_paper(experiments):
        name = _e(paper or "other experiments")
        desc = f' <span class="muted">{_e(paper_citation(paper))}</span>' if paper in PAPERS else ""
        out.append(f'<tr class="paper"><th colspan="{len(head)}">{name}{desc}</th></tr>')
        for exp in exps:
            by_scale = {r.scale: r for r in exp.runs}
            row = [
                f'<td class="exp"><a href="#{anchor(exp.name)}">{_e(exp.name)}</a></td>',
                f"<td>{_e(exp.title or '–')}</td>",
                '<td class="sc">'
                + ", ".join(
                    f'<a href="#{anchor(exp.name, r.scale)}">{_e(scale_label(r.scale))}</a>'
                    for r in exp.runs
                )
                + "</td>",
            ]
            for s in scales:
                run = by_scale.get(s)
                if run is None:
                    row.append('<td class="muted">–</td>')
                    continue
                cell = _html_overview_counts(exp, run)
                if number(run.meta.get("failed")):
                    cell += (
                        f'<span class="badge b-fail">{_e(fmt(run.meta["failed"]))} failed</span>'
                    )
                toy = ' class="toy" title="smoke scale: toy data"' if s == SMOKE_SCALE else ""
                row.append(f"<td{toy}>{cell}</td>")
            out.append("<tr>" + "".join(row) + "</tr>")
    out.append("</tbody></table></div>")
    out.append("</section>")
    return out


def _html_deviations(paper, exps: list[Experiment]) -> list[str]:
    rows = deviations(exps)
    if not rows:
        return []
    out = [
        f'<article class="card dev-card" id="{anchor("deviations", paper or "other")}">'
        f"<h3>Deviations: {_e(paper or 'other experiments')}</h3>",
        f'<p class="lead">{_e(DEV_INTRO)}</p>',
        '<div class="scroll"><table class="claims deviations"><thead><tr><th>claim</th>'
        "<th>ours</th><th>the paper's reading</th><th>noise-free</th><th>verdict</th>"
        "<th>cause</th></tr></thead><tbody>",
    ]
    for d in rows:
        cells = deviation_cells(d)
        v = verdict(d.claim)
        badges = _badge(v, f"ours: {v}")
        for key, name in (("paper_reading", "reading"), ("noise_free", "noise-free")):
            sub = d.claim.get(key)
            if isinstance(sub, dict):
                badges += " " + _badge(verdict_of(sub), f"{name}: {verdict_of(sub)}")
        claim_id, _, text = cells["claim"].partition(": ")
        row_cls = ' class="nh"' if v == "not held" else ""
        out.append(
            f'<tr{row_cls}><td><span class="id">{_e(claim_id)}</span> {_e(text)}'
            f'<div class="src"><a href="#{anchor(d.experiment.name, d.run.scale)}">'
            f"{_e(cells['where'])}</a></div></td>"
            f'<td class="num">{_e(cells["ours"])}</td>'
            f'<td class="num reading">{_e(cells["reading"])}</td>'
            f'<td class="num">{_e(cells["noise_free"])}</td>'
            f"<td>{badges}</td>"
            f'<td class="dev">{_e(cells["cause"])}</td></tr>'
        )
    out.append("</tbody></table></div></article>")
    return out


def _html_toc(experiments: list[Experiment]) -> list[str]:
    out = ['<nav id="toc"><h2>Contents</h2><ul><li><a href="#overview">Overview</a></li>']
    for paper, exps in by_paper(experiments):
        out.append(
            f'<li class="paper"><a href="#{anchor("paper", paper or "other")}">'
            f"{_e(paper or 'other')}</a></li>"
        )
        n_dev = len(deviations(exps))
        if n_dev:
            out.append(
                f'<li class="exp"><a href="#{anchor("deviations", paper or "other")}">'
                f"Deviations</a> <span class=\"badge b-nh\">{n_dev}</span></li>"
            )
        for exp in exps:
            marks = ""
            nh = sum(r.counts.get("not held", 0) for r in exp.runs if r.scale != SMOKE_SCALE)
            if nh:
                marks = f' <span class="badge b-nh" title="claims not held">{nh}</span>'
            scales = " ".join(
                f'<a href="#{anchor(exp.name, r.scale)}">{_e(scale_label(r.scale))}</a>'
                for r in exp.runs
            )
            out.append(
                f'<li class="exp" title="{_e(exp.title)}"><a href="#{anchor(exp.name)}">'
                f'{_e(exp.name)}</a>{marks}<span class="scales">{scales}</span></li>'
            )
    out.append("</ul></nav>")
    return out


def _html_figures(run: Run, results_dir: Path) -> list[str]:
    if not run.figures:
        return ['<p class="muted">No figures.</p>']
    out = ['<div class="figs">']
    for png in run.figures:
        try:
            uri, size = _data_uri(png)
        except OSError as exc:
            out.append(
                f'<p class="problems">{_e(png.name)}: could not be read ({_e(str(exc))})</p>'
            )
            continue
        dims = ""
        if size and size[1]:  # the figure's own size in inches (FIGURE_SCALE)
            shown = round(FIGURE_SCALE * size[0])
            dims = f' width="{size[0]}" height="{size[1]}" style="width:{shown}px"'

        pdf = png.with_suffix(".pdf")
        pdf_link = f' · <a href="{link(pdf, results_dir)}">PDF</a>' if pdf.exists() else ""
        out.append(
            f'<figure><img alt="{_e(png.stem)}" '
            f'src="{uri}"{dims}><figcaption>{_e(png.stem)}{pdf_link}</figcaption></figure>'
        )
    out.append("</div>")
    return out


def _html_groups(groups: list) -> str:
    """A claim's groups as a folded table (the failing ones red)."""
    rows = []
    for g in groups:
        if not isinstance(g, dict):
            continue
        held = g.get("held")
        cls = ' class="bad"' if held is False else ""
        rows.append(
            f"<tr><td>{_e(group_text(g.get('group')))}</td>"
            f"<td>{_e(fmt(g.get('ours')))}</td><td>{_e(fmt(g.get('other')))}</td>"
            f"<td>{_e(fmt(g.get('ratio')))}</td><td{cls}>{_e(fmt(held))}</td></tr>"
        )
    failing = sum(1 for g in groups if isinstance(g, dict) and g.get("held") is False)
    return (
        f"<details><summary>{len(rows)} group(s)"
        + (f", {failing} failing" if failing else "")
        + "</summary>"
        '<table class="groups"><tr><th>group</th><th>ours</th><th>other</th>'
        "<th>ratio</th><th>held</th></tr>" + "".join(rows) + "</table></details>"
    )


def _html_claim(c: dict, causes: bool, about: bool = False) -> str:
    """One row of a run's claims table (with its ``about`` cell, what the claim tests, when
    ``about``, and its ``deviation`` cell when ``causes``)."""
    v = verdict(c)
    raw = str(c.get("verdict") or "")
    label = v if raw.strip().lower().replace("_", " ") == v or not raw else f"{v} ({raw})"
    said = _e(str(c.get("text") or "–"))
    if c.get("source"):
        said += f'<div class="src">{_e(str(c["source"]))}</div>'
    numbers = _e(str(c.get("summary") or "–"))
    extra = claim_notes(c)
    if c.get("kind") and not about:  # the about cell names the metric
        extra.append(f"{c['kind']}" + (f" on {c['metric']}" if c.get("metric") else ""))
    if extra:
        numbers += f'<div class="src">{_e("; ".join(extra))}</div>'
    groups = c.get("groups")
    if isinstance(groups, list) and groups:
        numbers += _html_groups(groups)
    row_cls = ' class="nh"' if v == "not held" else ""
    return (
        f'<tr{row_cls}><td class="id">{_e(str(c.get("id", "?")))}</td><td>{said}</td>'
        + (f'<td class="about">{_e(str(c.get("subject") or "–"))}</td>' if about else "")
        + f'<td>{_badge(v, label)}</td><td class="num">{numbers}</td>'
        + (f'<td class="dev">{_e(cause_text(c))}</td>' if causes else "") + "</tr>"
    )


def _html_claims(run: Run) -> list[str]:
    if run.claims is None:
        return []
    out = ["<h5>Claims</h5>"]
    if not run.claims:
        return out + ['<p class="muted">claims.json lists no claim.</p>']
    causes = any(cause_text(c) for c in run.claims)  # no empty column
    about = any(c.get("subject") for c in run.claims)  # claims.json of older code: none
    out.append(
        '<div class="scroll"><table class="claims"><thead><tr><th>claim</th>'
        "<th>the paper says</th>" + ("<th>about</th>" if about else "")
        + "<th>verdict</th><th>numbers</th>"
        + ("<th>deviation</th>" if causes else "") + "</tr></thead><tbody>"
    )
    out += [_html_claim(c, causes, about) for c in run.claims]
    out.append("</tbody></table></div>")
    return out


def _html_tables(run: Run, results_dir: Path) -> list[str]:
    if not run.tables:
        return []
    out = ["<h5>Tables: ours beside the paper</h5>"]
    for t in run.tables:
        links = " · ".join(
            f'<a href="{link(p, results_dir)}">{_e(p.name)}</a>'
            for p in (t.md, t.csv)
            if p is not None
        )
        out.append(f'<p><b>{_e(t.title or t.name)}</b> <span class="src">{links}</span></p>')
        if t.markdown is not None:
            out.append(f'<div class="md scroll">{_rendered(t.markdown, run, results_dir, 4)}</div>')
            continue
        if not t.rows:
            continue
        if t.rule:
            flag = (
                f'<span class="badge b-nh">{t.n_flagged} of {t.n_compared} cells flagged</span>'
                if t.n_flagged
                else f'<span class="badge b-held">none of {t.n_compared} cells flagged</span>'
            )
            out.append(
                f'<p class="src">Each cell: <b>ours</b>, the paper\'s number, ours÷paper; '
                f"red: {_e(t.rule)}. {flag}</p>"
            )
        else:
            out.append(
                f'<p class="src">Each cell: <b>ours</b>, the paper\'s number, ours÷paper '
                f"({_e(t.reason)}).</p>"
            )
        head = "".join(f"<th>{_e(k)}</th>" for k in t.keys) + "".join(
            f"<th>{_e(c)}</th>" for c in t.columns
        )
        rows = []
        for keys, cells in t.rows:
            tds = "".join(f'<td class="key">{_e(k)}</td>' for k in keys)
            for ours, paper, ratio, flagged in cells:
                inner = f'<div class="ours">{_e(ours or "–")}</div>'
                if paper:
                    inner += f'<div class="pp">paper {_e(paper)}</div>'
                if ratio:
                    inner += f'<div class="ratio">×{_e(ratio)}</div>'
                cls = ' class="flag"' if flagged else ""
                tds += f"<td{cls}>{inner}</td>"
            rows.append(f"<tr>{tds}</tr>")
        out.append(
            f'<div class="scroll"><table class="paper"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    return out


def _html_variants(run: Run, results_dir: Path) -> list[str]:
    if not run.variants:
        return []
    out = ["<h5>Variants (one-off runs, linked)</h5><ul>"]
    for v in run.variants:
        links = [
            f'<a href="{link(p, results_dir)}">{_e(p.name)}</a>'
            for p in [*v.figures, *([v.summary] if v.summary else [])]
        ]
        counts = f" {_html_counts(v)}" if v.claims is not None else ""
        out.append(f"<li><b>{_e(v.path.name)}</b>{counts} {' · '.join(links) or '(no files)'}</li>")
    out.append("</ul>")
    return out


def _html_run(exp: Experiment, run: Run, results_dir: Path, *, variant: bool = False
              ) -> list[str]:
    """One scale's block (or, with ``variant``, one of its variants shown in full)."""
    smoke = run.scale == SMOKE_SCALE
    full = shown_variants(run)
    head = f"variant {run.path.name}" if variant else f"{scale_label(run.scale)} scale"
    where = anchor(exp.name, run.scale, run.path.name) if variant else anchor(exp.name, run.scale)
    counts = "" if full and run.claims is None else f" {_html_counts(run)}"
    out = [
        f'<div class="run{" smoke" if smoke else ""}" id="{where}">',
        f"<h4>{_e(head)}{counts}"
        + (f' <span class="badge b-toy">{_e(SMOKE_WARNING)}</span>' if smoke else "")
        + "</h4>",
    ]
    line = meta_line(run.meta)
    if line:
        out.append(f'<p class="meta">{_e(line)}</p>')
    if number(run.meta.get("failed")):
        out.append(
            f'<p class="warn">{_e(fmt(run.meta["failed"]))} trial(s) failed: '
            "see summary.md and the run's log.</p>"
        )
    if run.problems:
        out.append(
            '<ul class="problems">' + "".join(f"<li>{_e(p)}</li>" for p in run.problems) + "</ul>"
        )
    if refuted_line(run):
        out.append(f'<p class="warn">{_e(refuted_line(run))}</p>')
    if full:  # a sweep drew into its variants only: they are this scale's results
        for v in full:
            out += _html_run(exp, v, results_dir, variant=True)
        out.append("</div>")
        return out
    out += _html_figures(run, results_dir)
    out += _html_claims(run)
    out += html_series_privacy(run)
    out += _html_tables(run, results_dir)
    if run.notes:
        out.append(
            f'<h5>Notes</h5><div class="md">{_rendered(run.notes, run, results_dir, 4)}</div>'
        )
    if run.summary is not None:
        text = read_text(run.summary, [], "summary.md")
        if text:
            out.append(
                f"<details><summary>Summary: mean ± error tables, skipped cells "
                f'(summary.md)</summary><div class="md scroll">'
                f"{_rendered(text, run, results_dir, 4)}</div></details>"
            )
    out += _html_variants(run, results_dir)
    out.append("</div>")
    return out


def render_html(
    experiments: list[Experiment], results_dir: Path, *, title: str = "privpub results"
) -> str:
    """The text of ``report.html``: one self-contained page (no external resources)."""
    main = [
        f"<h1>{_e(title)}</h1>",
        '<p class="lead">Every experiment of the reproduction beside its paper: figures, '
        "the paper's claims checked on our numbers, our tables beside the published ones, "
        "and the notes on where we differ. Click a figure to enlarge it. "
        '<a href="report.md">report.md</a> has the same content as text.</p>',
    ]
    main += _html_overview(experiments, scales_of(experiments))
    main += html_audits(results_dir)
    for paper, exps in by_paper(experiments):
        heading = _e(paper or "Other experiments")
        if paper in PAPERS:
            heading += (f' <span class="muted" style="font-weight:400">'
                        f'{_e(paper_citation(paper))}</span>')
        main.append(f'<section id="{anchor("paper", paper or "other")}"><h2>{heading}</h2>')
        main += _html_deviations(paper, exps)
        for exp in exps:
            main.append(f'<article class="card" id="{anchor(exp.name)}"><h3>{_e(exp.name)}</h3>')
            if exp.title:
                main.append(f'<p class="title">{_e(exp.title)}</p>')
            if not exp.runs:
                main.append('<p class="muted">No figures.</p>')
            for run in exp.runs:
                main += _html_run(exp, run, results_dir)
            main.append("</article>")
        main.append("</section>")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>\n{_asset('report.css')}</style></head><body>",
        '<div class="layout">',
        *_html_toc(experiments),
        "<main>",
        *main,
        "</main></div>",
        '<div id="lightbox" hidden><img alt=""></div>',
        f"<script>\n{_asset('report.js')}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
