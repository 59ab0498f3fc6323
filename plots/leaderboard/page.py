"""The leaderboard's static pages: HTML with inline CSS and inline SVG critical-difference
diagrams, readable offline (no script, font, image or style from elsewhere).

Layout and the reading of each part: docs/design.md ("Leaderboards").
"""

from __future__ import annotations

import html
import math
import textwrap

import numpy as np
import pandas as pd

from privpub.plots.leaderboard.ranking import HINDSIGHT
from privpub.plots.leaderboard.standing import (
    NOT_AUDITED,
    REFUTED,
    replay_command,
    verdict_note,
)
from privpub.registry import DP_NOTIONS, EDGE_LDP, RECORD_APPROX_DP, describe_notion

__all__ = ["CSS", "page", "cd_svg", "fmt", "notion_name", "method_rows", "task_page",
           "toy_banner", "refuted_html"]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;
max-width:1200px;padding:0 16px;color:#1d1d1f}
h1{font-size:24px}h2{font-size:19px;margin-top:32px;border-bottom:1px solid #ccc}
h3{font-size:16px;margin-top:20px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ddd;padding:3px 7px;
text-align:right;vertical-align:top}th{background:#f3f3f5}td.l,th.l{text-align:left}
.r1{background:#d9f2d9;font-weight:600}.r2{background:#eef8ee}.r3{background:#f6fbf6}
.held{color:#0a7d20;font-weight:600}.not{color:#b3261e;font-weight:600}
.ne{color:#8a6d00;font-weight:600}.muted{color:#666}.hind{color:#8a3ffc}
.notion{display:inline-block;padding:1px 7px;border-radius:9px;background:#e8eefc}
pre{background:#f6f6f6;padding:6px;white-space:pre-wrap;font-size:12px}
details summary{cursor:pointer}
.toy{background:#fff4ce;border:1px solid #d9a400;border-radius:4px;padding:8px 12px}
.refuted{border-left:4px solid #b3261e;padding-left:10px}
.unaudited{color:#8a6d00;font-size:12px;white-space:nowrap}.nw{white-space:nowrap}
td.cav{min-width:18em}
"""

_NOTION_NAMES = {"none": "not private", "node-DP": "node-DP", "edge-DP": "edge-DP",
                 EDGE_LDP: describe_notion(EDGE_LDP), "record-DP": "record-DP",
                 RECORD_APPROX_DP: "record-(ε, δ)-DP (approximate: δ > 0)",
                 "k-anonymity": "k-anonymity",
                 "smooth-k-anonymity": "smooth k-anonymity"}


def notion_name(notion: str) -> str:
    return _NOTION_NAMES.get(notion, notion)


def esc(text) -> str:
    return html.escape(str(text))


def fmt(value, digits: int = 4) -> str:
    """A number in ``digits`` significant digits; ``–`` for NaN or None."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    value = float(value)
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"


def page(title: str, body: str) -> str:
    """A whole HTML document: inline CSS, nothing loaded from elsewhere."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n{body}\n</body></html>\n"
    )


def toy_banner(scale: str) -> str:
    """At smoke scale, the warning a reader sees first: the data is toy data."""
    if scale != "smoke":
        return ""
    return ("<p class=toy><b>Smoke scale: toy data.</b> Synthetic stand-ins for the "
            "task's datasets and few repetitions, to check that everything runs: not a "
            "ranking to cite. <code>--scale small</code> or <code>paper</code> ranks on the "
            "real datasets.</p>")


def _tokens(command: str) -> str:
    """A command that wraps between its words only (never inside ``--replay``)."""
    return " ".join(f"<span class=nw>{esc(t)}</span>" for t in command.split(" "))


def refuted_html(standing: dict[str, dict], *, level: int = 2, compact: bool = False) -> str:
    """The series whose claim the stored audit refutes, one table per claimed notion
    ("claims edge-DP, refuted by the audit"): the audited configuration, the verdict, the
    epsilon lower bound, the witness, the command that replays it and the caveat (the
    index's ``compact`` form leaves the caveat out). Nothing when none is refuted."""
    refuted = [e for e in standing.values() if e["standing"] == REFUTED]
    if not refuted:
        return ""
    head = ("<tr><th class=l>series</th><th class=l>audited configuration</th>"
            "<th class=l>verdict</th><th>ε lower bound</th><th class=l>witness</th>"
            "<th class=l>replay</th>" + ("" if compact else "<th class=l>caveat</th>")
            + "</tr>")

    def caveat(e):
        if compact:
            return ""
        if not e["caveat"]:
            return "<td class=l><span class=not>ERROR: none, the claim is unreserved</span></td>"
        short = textwrap.shorten(e["caveat"], width=110, placeholder=" …")
        return f"<td class='l cav' title=\"{esc(e['caveat'])}\">† {esc(short)}</td>"

    parts = []
    for notion in sorted({e["notion"] for e in refuted}):
        rows = "".join(
            f"<tr><td class=l>{esc(e['series'])}</td><td class=l>"
            f"<code>{esc(e['configuration'])}</code></td><td class='l nw'><span class=not>"
            f"{esc(e['verdict'])}</span> ({esc(e['mode'])})</td>"
            f"<td>{fmt(e['epsilon_lower_bound'], 3)}</td>"
            f"<td class=l><code>{esc(e['witness_id'])}</code></td>"
            f"<td class=l><code>{_tokens(e.get('replay') or replay_command(e))}</code></td>"
            f"{caveat(e)}</tr>"
            for e in sorted(refuted, key=lambda e: e["series"]) if e["notion"] == notion)
        parts.append(f"<h{level + 1}>claims {esc(notion_name(notion))}, refuted by the audit"
                     f"</h{level + 1}><table>{head}{rows}</table>")
    intro = (f"{len(refuted)} series set aside: the stored audit (<code>privpub audit</code>, "
             "at ε = 1) found their claim violated, with a witness that replays it."
             if compact else
             "The stored audit (<code>privpub audit</code>, at ε = 1) found these claims "
             "violated: a lower bound on ε above the claim, confirmed on fresh seeds, with a "
             "witness that replays it run for run. They are not ranked under the claim: the "
             "ranks, average ranks, CD diagrams and win rates leave them out "
             f"({len(refuted)} series set aside).")
    return (f"<div class=refuted><h{level}>Refuted by the audit: not ranked</h{level}>"
            f"<p>{intro}</p>{''.join(parts)}</div>")


def cd_svg(avg_rank: dict, cd: float, *, axis_width: int = 420) -> str:
    """A critical-difference diagram (Demšar 2006, Fig. 1) as inline SVG: the average-rank
    axis, each series at its average rank, the CD bar, and thick bars joining series whose
    average ranks differ by less than the CD (not significantly different)."""
    if not avg_rank:
        return ""
    names = sorted(avg_rank, key=lambda s: (avg_rank[s], s))
    k = max(len(names), 2)
    margin = min(420, 7 * max(len(n) for n in names) + 70)  # room for the labels
    left, right, top = margin, margin + axis_width, 40
    width = right + margin
    span = right - left

    def xpos(r):
        return left + (r - 1) / (k - 1) * span

    half = math.ceil(len(names) / 2)
    height = top + 40 + 18 * half + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12" role="img" '
             f'aria-label="critical difference diagram">',
             f'<line x1="{left}" y1="{top}" x2="{right}" y2="{top}" stroke="#000"/>']
    for r in range(1, k + 1):
        x = xpos(r)
        parts.append(f'<line x1="{x:.1f}" y1="{top - 5}" x2="{x:.1f}" y2="{top}" stroke="#000"/>'
                     f'<text x="{x:.1f}" y="{top - 9}" text-anchor="middle">{r}</text>')
    if math.isfinite(cd):
        parts.append(f'<line x1="{left}" y1="12" x2="{min(xpos(1 + cd), right):.1f}" y2="12" '
                     f'stroke="#b3261e" stroke-width="2"/><text x="{left - 6}" y="16" '
                     f'text-anchor="end" fill="#b3261e">CD = {cd:.2f}</text>')
    cliques = _cliques([avg_rank[n] for n in names], cd)
    for i, (a, b) in enumerate(cliques):
        y = top + 8 + 5 * i
        parts.append(f'<line x1="{xpos(avg_rank[names[a]]) - 3:.1f}" y1="{y}" '
                     f'x2="{xpos(avg_rank[names[b]]) + 3:.1f}" y2="{y}" stroke="#444" '
                     f'stroke-width="3"/>')
    base = top + 12 + 5 * len(cliques)
    for i, name in enumerate(names):
        x = xpos(avg_rank[name])
        row = i if i < half else len(names) - 1 - i
        y = base + 18 * (row + 1)
        end, anchor = (left - 10, "end") if i < half else (right + 10, "start")
        parts.append(f'<polyline points="{x:.1f},{top} {x:.1f},{y} {end},{y}" fill="none" '
                     f'stroke="#555"/><text x="{end + (-4 if anchor == "end" else 4)}" '
                     f'y="{y + 4}" text-anchor="{anchor}">{esc(name)} '
                     f'({avg_rank[name]:.2f})</text>')
    parts.append("</svg>")
    return "".join(parts)


def _cliques(ranks: list[float], cd: float) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` of sorted average ranks within ``cd`` of each other."""
    if not math.isfinite(cd):
        return []
    runs = []
    for i in range(len(ranks)):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] - ranks[i] < cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in runs):
            runs.append((i, j))
    return runs


def method_rows(board: dict, costs: dict, audits: dict, bibtex: dict) -> str:
    """The methods table: each ranked mechanism's paper (BibTeX), notion, caveat, the rule
    its parameters follow, time and memory per trial and its audited privacy (the audits of
    its series, else the worst stored one of any of its configurations)."""
    head = ("<tr><th class=l>mechanism</th><th class=l>paper</th><th class=l>notion</th>"
            "<th class=l>caveat</th><th class=l>parameters</th><th>s / trial</th>"
            "<th>CPU s / trial</th><th>peak MB</th><th class=l>audited privacy</th></tr>")
    rows = []
    for name, m in board["methods"].items():
        cost = costs.get(name, {})
        refs = [r for r in (m.get("paper"), m.get("reference")) if r]
        cite = "".join(
            f"<details><summary>{esc(r)}</summary><pre>{esc(bibtex.get(r, 'no BibTeX'))}</pre>"
            "</details>" for r in refs) or "–"
        caveat = f"† {esc(m['caveat'])}" if m.get("caveat") else "none"
        rule = esc(m.get("rule") or "defaults")
        if m.get("tuned_in_hindsight"):
            rule += f"<br><span class=hind>{esc(m['tuned_in_hindsight'])} {HINDSIGHT}</span>"
        added = " <span class=muted>(added)</span>" if m.get("added") else ""
        notes = sorted({verdict_note(e) for e in (board.get("standing") or {}).values()
                        if e["mechanism"] == name})  # its series' audits, else any stored
        audited = ("; ".join(notes) or audits.get(name, "not audited")
                   if m["notion"] in DP_NOTIONS else "not a DP claim")
        rows.append(
            f"<tr><td class=l><code>{esc(name)}</code>{added}</td><td class=l>{cite}</td>"
            f"<td class=l>{esc(notion_name(m['notion']))}</td><td class=l>{caveat}</td>"
            f"<td class=l>{rule}</td><td>{fmt(cost.get('seconds'), 3)}</td>"
            f"<td>{fmt(cost.get('cpu_seconds'), 3)}</td><td>{fmt(cost.get('peak_mb'), 4)}</td>"
            f"<td class=l>{esc(audited)}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _unaudited(series: str, standing: dict) -> str:
    if standing.get(series, {}).get("standing") != NOT_AUDITED:
        return ""
    return f" <span class=unaudited>{esc(verdict_note(standing[series]))}</span>"


def _group_table(stats: pd.DataFrame, standing: dict) -> str:
    """One dataset's table: series as rows, epsilon-or-k (and setting) as columns, each cell
    ``mean ± CI`` with its rank; ranks 1-3 shaded; † marks a series whose rows carry a
    caveat, "not audited" one whose DP claim no stored audit speaks for."""
    cols = sorted({(s, x) for s, x in zip(stats["setting"], stats["x"], strict=True)},
                  key=lambda c: (c[0], float(c[1]) if pd.notna(c[1]) else np.inf))
    axis = stats["axis"].iloc[0]
    head = "".join(f"<th>{esc(axis)} = {fmt(x)}{'<br>' + esc(s) if s else ''}</th>"
                   for s, x in cols)
    order = stats.groupby("series")["rank"].mean().sort_values().index
    body = []
    for series in order:
        mine = stats[stats["series"] == series]
        cells = []
        for s, x in cols:
            hit = mine[(mine["setting"] == s) & (mine["x"] == x)]
            if hit.empty:
                cells.append("<td class=muted>n/a</td>")
                continue
            r = hit.iloc[0]
            shade = f" class=r{int(r['rank'])}" if r["rank"] in (1, 2, 3) else ""
            ci = f" ± {fmt(r['ci95'], 2)}" if pd.notna(r["ci95"]) else ""
            cells.append(f"<td{shade}>{fmt(r['mean'])}{ci} <span class=muted>"
                         f"#{fmt(r['rank'], 3)}</span></td>")
        series_caveat = mine["caveat"].iloc[0] if "caveat" in mine else None
        mark = " †" if isinstance(series_caveat, str) and series_caveat else ""
        hind = " class='l hind'" if bool(mine["hindsight"].iloc[0]) else " class=l"
        body.append(f"<tr><td{hind}>{esc(series)}{mark}{_unaudited(series, standing)}</td>"
                    f"{''.join(cells)}</tr>")
    return f"<table><tr><th class=l>series</th>{head}</tr>{''.join(body)}</table>"


def _aggregate_html(agg: dict, standing: dict) -> str:
    if not agg["series"]:
        return "<p class=muted>No block holds every series: no aggregate.</p>"
    if len(agg["series"]) == 1:
        return (f"<p class=muted>One series ({esc(agg['series'][0])}): nothing to rank it "
                "against under this notion.</p>")
    fried = agg["friedman"]
    ftext = (f"Friedman χ² = {fmt(fried[0], 3)}, p = {fmt(fried[1], 2)}" if fried
             else "Friedman test: needs 3 series and 2 blocks")
    rows = "".join(
        f"<tr><td>{i + 1}</td><td class=l>{esc(s)}{_unaudited(s, standing)}</td>"
        f"<td>{agg['avg_rank'][s]:.2f}</td>"
        + "".join(f"<td>{fmt(agg['wins'][s].get(o), 2) if o != s else '–'}</td>"
                  for o in agg["series"]) + "</tr>" for i, s in enumerate(agg["series"]))
    head = "".join(f"<th title=\"{esc(o)}\">vs {i + 1}</th>"
                   for i, o in enumerate(agg["series"]))
    dropped = (f"<p class=muted>Left out of the aggregate (in fewer than half of the blocks): "
               f"{esc(', '.join(agg['dropped']))}</p>" if agg["dropped"] else "")
    return (f"<p>Over {agg['n_blocks']} blocks (dataset × parameter × setting). {ftext}; "
            f"Nemenyi critical difference (α = 0.05): {fmt(agg['cd'], 3)}. Win rate: the "
            "fraction of blocks where the row's mean beats the column's.</p>"
            f"{cd_svg(agg['avg_rank'], agg['cd'])}"
            f"<table><tr><th>#</th><th class=l>series</th><th>average rank</th>{head}</tr>"
            f"{rows}</table>"
            f"{dropped}")


def _across_html(result: dict, spec: dict, standing: dict) -> str:
    """The aggregate across the task's ``across_metrics`` for one notion: per series its
    mean over the blocks of its average rank and its total count of bests, then per
    dataset a table whose cells give "best on k of n, average rank r" per epsilon-or-k."""
    if not result["series"]:
        return "<p class=muted>No series has every one of these metrics: no aggregate.</p>"
    blocks = result["blocks"]
    source = f" ({esc(spec['source'])})" if spec.get("source") else ""
    intro = (f"<p>Over {esc(', '.join(spec['over']))}{source}. Per dataset × parameter × "
             "setting: <b>best on k of n</b>, the number of these metrics on which the "
             "series has the best mean (a tie for the best counts for every tied series), "
             "and its <b>average rank</b> over them (ties share their average rank; an "
             "undefined mean ranks last). A series lacking one of the metrics there is "
             "left out of that block.</p>")
    n_blocks = {s: sum(s in b["avg_rank"] for b in blocks) for s in result["series"]}
    rows = "".join(
        f"<tr><td>{i + 1}</td><td class=l>{esc(s)}{_unaudited(s, standing)}</td>"
        f"<td>{result['mean_rank'][s]:.2f}</td><td>{result['total_best'][s]}</td>"
        f"<td>{n_blocks[s]}</td></tr>" for i, s in enumerate(result["series"]))
    parts = [intro, "<table><tr><th>#</th><th class=l>series</th><th>mean of average "
             "ranks</th><th>bests, in total</th><th>blocks</th></tr>" + rows + "</table>"]
    for dataset in sorted({b["dataset"] for b in blocks}):
        mine = sorted((b for b in blocks if b["dataset"] == dataset),
                      key=lambda b: (b["setting"], float(b["x"]) if pd.notna(b["x"])
                                     else np.inf))
        head = "".join(f"<th>{esc(b['axis'])} = {fmt(b['x'])}"
                       f"{'<br>' + esc(b['setting']) if b['setting'] else ''}</th>"
                       for b in mine)
        body = []
        for s in result["series"]:
            cells = []
            for b in mine:
                if s not in b["avg_rank"]:
                    lacks = b["left_out"].get(s)
                    title = f" title=\"lacks {esc(', '.join(lacks))}\"" if lacks else ""
                    cells.append(f"<td class=muted{title}>n/a</td>")
                    continue
                most = max(b["times_best"].values())
                shade = " class=r1" if b["times_best"][s] == most and most > 0 else ""
                best_on = ", ".join(b["best_on"][s]) or "none"
                cells.append(f"<td{shade} title=\"best on: {esc(best_on)}\">best on "
                             f"{b['times_best'][s]} of {b['n_metrics']}<br><span class=muted>"
                             f"avg rank {b['avg_rank'][s]:.2f}</span></td>")
            body.append(f"<tr><td class=l>{esc(s)}</td>{''.join(cells)}</tr>")
        parts.append(f"<p><b>{esc(dataset)}</b></p><table><tr><th class=l>series</th>{head}"
                     f"</tr>{''.join(body)}</table>")
    return "".join(parts)


def task_page(board: dict, stats: pd.DataFrame, aggregates: dict, costs: dict, audits: dict,
              bibtex: dict, claims_html: str, across: dict | None = None) -> str:
    """One task's page: its description, claims, one section per notion (aggregate with
    its CD diagram, the aggregate across the task's ``across_metrics`` when it has them
    (``across``: per notion, :func:`~privpub.plots.leaderboard.ranking.across_metrics`),
    then one table per metric and dataset), the methods and what is left out."""
    caveats = {n: m.get("caveat") for n, m in board["methods"].items()}
    standing = board.get("standing") or {}
    parts = [f"<p><a href=\"index.html\">← all tasks</a></p><h1>{esc(board['title'])}</h1>",
             toy_banner(board["scale"]),
             f"<p>Task <code>{esc(board['task'])}</code>, scale <b>{esc(board['scale'])}</b>: "
             f"{esc(board['input_kind'])} → {esc(', '.join(board['output_kinds']))}. Primary "
             f"metric <b>{esc(board['metric'])}</b> ("
             f"{'higher' if board['higher_is_better'][board['metric']] else 'lower'} is better)"
             f"{'; also ' + esc(', '.join(board['secondary'])) if board['secondary'] else ''}. "
             "Each cell: mean ± half-width of the 95% CI over repetitions, and the rank "
             "within its column. Rows of different privacy notions are never ranked "
             "together: each notion has its own tables. A claim the stored audit refutes "
             "is not ranked under it (its own table below); a DP claim no stored audit "
             "speaks for is ranked and says “not audited”.</p>",
             f"<p>{esc(board['notes'])}</p>" if board.get("notes") else "", claims_html,
             refuted_html(standing)]
    metrics = [board["metric"], *board["secondary"]]
    for notion in dict.fromkeys([*board["notions"], "none"]):
        mine = stats[stats["notion"] == notion]
        aside = sorted(s for s, e in standing.items()
                       if e["standing"] == REFUTED and e["ranked_as"] == notion)
        if mine.empty and not aside:
            continue
        parts.append(f"<h2><span class=notion>{esc(notion_name(notion))}</span></h2>")
        if aside:
            parts.append(f"<p class=not>Set aside, not ranked: {len(aside)} series whose "
                         f"claim the audit refutes ({esc(', '.join(aside))}; see “Refuted "
                         "by the audit”).</p>")
        if mine.empty:
            continue
        parts.append(f"<h3>Aggregate ({esc(board['metric'])})</h3>")
        parts.append(_aggregate_html(aggregates[notion], standing))
        if across and notion in across:
            spec = board["across_metrics"]
            parts.append(f"<h3>Across {esc(spec['title'])}: how often best, average rank"
                         "</h3>")
            parts.append(_across_html(across[notion], spec, standing))
        for metric in metrics:
            rows = mine[mine["metric"] == metric]
            if rows.empty:
                continue
            parts.append(f"<h3>{esc(metric)}</h3>")
            for dataset, ds_rows in rows.groupby("dataset", sort=True):
                parts.append(f"<p><b>{esc(dataset)}</b></p>"
                             f"{_group_table(ds_rows, standing)}")
    parts.append("<h2>Methods</h2>")
    parts.append(method_rows(board, costs, audits, bibtex))
    notes = [f"<li>† <code>{esc(n)}</code>: {esc(c)}</li>" for n, c in caveats.items() if c]
    if notes:
        parts.append(f"<h3>Caveats</h3><ul>{''.join(notes)}</ul>")
    left = "".join(f"<li><code>{esc(n)}</code>: {esc(r)}</li>"
                   for n, r in sorted(board["left_out"].items()))
    parts.append(f"<h2>Not ranked here</h2><ul>{left}</ul>")
    return page(f"privpub leaderboard: {board['title']}", "\n".join(parts))
