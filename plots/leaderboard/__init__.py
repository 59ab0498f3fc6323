"""Leaderboard pages and CSV from the tasks' result stores (``privpub leaderboard``).

:func:`write_leaderboard` writes ``<dir>/index.html``, one ``<task>.html`` per task and
``leaderboard.csv``; the numbers come from :mod:`privpub.plots.leaderboard.ranking`, each
series' audit and standing (a refuted claim is set aside, not ranked) from
:mod:`privpub.plots.leaderboard.standing`, the HTML from
:mod:`privpub.plots.leaderboard.page`. Plots read the stores (the tasks' and the audits')
and plain task descriptions, never :mod:`experiments`. The rules: docs/design.md
("Leaderboards").
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from privpub.plots.leaderboard.page import (
    esc,
    fmt,
    notion_name,
    page,
    refuted_html,
    task_page,
    toy_banner,
)
from privpub.plots.leaderboard.ranking import (
    HINDSIGHT,
    across_metrics,
    across_rows,
    aggregate,
    cell_stats,
    method_costs,
    tidy_rows,
)
from privpub.plots.leaderboard.standing import (
    NOT_AUDITED,
    RANKED,
    REFUTED,
    audit_standing,
    replay_command,
)

__all__ = ["write_leaderboard", "audited_privacy", "stored_records", "board_standing",
           "leaderboard_csv", "top_three", "CSV_COLUMNS"]

#: The columns of ``leaderboard.csv``: ``standing`` is ``ranked``, ``refuted`` (the stored
#: audit refutes the claim: no rank) or ``not audited``; ``audit`` the stored verdict.
CSV_COLUMNS = ["task", "notion", "dataset", "parameter", "value", "setting", "mechanism",
               "tuned_in_hindsight", "metric", "mean", "ci95", "n", "rank", "caveat",
               "standing", "audit", "audit_mode", "epsilon_lower_bound", "witness_id"]


def audited_privacy(results_dir) -> dict[str, str]:
    """The audit hook: ``{mechanism: "<verdict> (epsilon >= <lower bound>)"}`` from the
    stored audits of ``privpub audit`` (``<results_dir>/audit/verdicts.json``, read by
    ``privpub.audit.stored``); ``{}`` when there are none or that module is absent, and the
    page then says "not audited"."""
    try:
        from privpub.audit.stored import stored_verdicts
    except ImportError:
        return {}
    try:
        verdicts = stored_verdicts(results_dir)
    except Exception:  # a malformed audit file must not stop the leaderboard
        return {}
    return {m: f"{v} (ε ≥ {fmt(lb, 3)})" for m, (v, lb) in verdicts.items()}


def stored_records(results_dir) -> list[dict]:
    """The stored audits under ``results_dir`` (``[]`` for None or none stored); a malformed
    file is a :class:`~privpub.errors.PrivpubError`: what is ranked depends on it."""
    from privpub.audit.stored import stored_audits

    return [] if results_dir is None else stored_audits(results_dir)


def board_standing(board: dict, records: list[dict]) -> dict[str, dict]:
    """Each series of ``board``'s stored rows with its audit and standing
    (:func:`~privpub.plots.leaderboard.standing.audit_standing`)."""
    return audit_standing(tidy_rows(board.get("frame"), board), board, records)


def _bibtex() -> dict[str, str]:
    from privpub.papers import PAPERS, REFERENCES

    return {k: p.bibtex for k, p in {**PAPERS, **REFERENCES}.items()}


def leaderboard_csv(task: str, stats: pd.DataFrame, caveats: dict,
                    standing: dict | None = None) -> pd.DataFrame:
    """The CSV rows of one task (:data:`CSV_COLUMNS`); ``standing`` maps a series to its
    audit (:func:`board_standing`; a series it lacks is ranked, its audit unknown)."""
    if stats.empty:
        return pd.DataFrame(columns=CSV_COLUMNS)
    standing = standing or {}

    def audit(key, default=None):
        return stats["series"].map(lambda s: standing.get(s, {}).get(key, default))
    out = pd.DataFrame({
        "task": task, "notion": stats["notion"].map(notion_name), "dataset": stats["dataset"],
        "parameter": stats["axis"], "value": stats["x"], "setting": stats["setting"],
        "mechanism": stats["series"],
        "tuned_in_hindsight": stats["hindsight"].map(lambda h: HINDSIGHT if h else ""),
        "metric": stats["metric"], "mean": stats["mean"], "ci95": stats["ci95"],
        "n": stats["n"], "rank": stats["rank"],
        "caveat": stats["caveat"].astype(object).fillna("") if "caveat" in stats
        else stats["mechanism"].map(lambda m: caveats.get(m) or ""),
        "standing": audit("standing", RANKED), "audit": audit("verdict", ""),
        "audit_mode": audit("mode"), "epsilon_lower_bound": audit("epsilon_lower_bound"),
        "witness_id": audit("witness_id"),
    })
    return out[CSV_COLUMNS]


def top_three(stats: pd.DataFrame, board: dict) -> list[dict]:
    """Per notion, dataset and setting, the three best ranked series on the primary metric
    at the task's headline parameter (epsilon = 1, or its k): ``top`` lists ``(series,
    mean, note)``, the note ``not audited`` for a DP claim no stored audit speaks for
    (``stats`` holds the ranked series only: a refuted one is never among them)."""
    standing = board.get("standing") or {}
    out = []
    rows = stats[stats["metric"] == board["metric"]]
    for (notion, dataset, setting), grp in rows.groupby(["notion", "dataset", "setting"]):
        axis = grp["axis"].iloc[0]
        want = board.get("headline", {}).get(axis)
        at = grp[pd.to_numeric(grp["x"], errors="coerce") == want] if want is not None else grp
        if at.empty:
            continue
        best = at.sort_values("rank").head(3)
        out.append({"notion": notion, "dataset": dataset, "setting": setting, "axis": axis,
                    "at": want, "top": [
                        (r["series"], r["mean"], NOT_AUDITED if standing.get(
                            r["series"], {}).get("standing") == NOT_AUDITED else "")
                        for _, r in best.iterrows()]})
    return out


def _claims_html(claims: list[dict]) -> str:
    if not claims:
        return ""
    items = []
    for c in claims:
        cls = {"held": "held", "not held": "not"}.get(c["verdict"], "ne")
        about = f"<b>{esc(c['subject'])}</b>: " if c.get("subject") else ""
        items.append(f"<li><span class={cls}>{esc(c['verdict'])}</span>: “{esc(c['text'])}” "
                     f"<span class=muted>({esc(c['source'])})</span><br>{about}"
                     f"{esc(c['summary'])}</li>")
    return f"<h2>Claims</h2><ul>{''.join(items)}</ul>"


def _index(boards: list[dict], tops: dict) -> str:
    scales = sorted({b["scale"] for b in boards})
    parts = ["<h1>privpub leaderboards</h1>", *(toy_banner(s) for s in scales),
             "<p>One page per task. Each ranks every "
             "registered mechanism that fits the task, per privacy notion (notions are never "
             "ranked together); the cells below give the best three at the task's headline "
             "parameter on its primary metric. A claim the stored audit refutes is never "
             "ranked under it: it is listed apart, with its witness.</p>"]
    for board in boards:
        parts.append(f"<h2><a href=\"{esc(board['task'])}.html\">{esc(board['title'])}</a> "
                     f"<span class=muted>({esc(board['task'])}, {esc(board['scale'])}, "
                     f"{esc(board['metric'])})</span></h2>")
        rows = "".join(
            f"<tr><td class=l>{esc(notion_name(t['notion']))}</td><td class=l>"
            f"{esc(t['dataset'])}{' ' + esc(t['setting']) if t['setting'] else ''}</td>"
            f"<td class=nw>{esc(t['axis'])} = {fmt(t['at'])}</td>"
            + "".join(f"<td class=l>{i + 1}. {esc(s)} ({fmt(v, 3)})"
                      f"{f' <span class=unaudited>{esc(note)}</span>' if note else ''}</td>"
                      for i, (s, v, note) in enumerate(t["top"])) + "</tr>"
            for t in tops[board["task"]])
        parts.append(f"<table>{rows}</table>" if rows else "<p class=muted>no results</p>")
        parts.append(refuted_html(board.get("standing") or {}, level=3, compact=True))
        parts.append(_claims_html(board.get("claims", [])).replace("<h2>", "<h3>")
                     .replace("</h2>", "</h3>"))
    return page("privpub leaderboards", "\n".join(parts))


def _stored_caveats(board: dict) -> None:
    """Each ranked mechanism's caveat as its stored rows carry it (a caveat that depends on
    the parameters is evaluated per row by the runner); the registry's text otherwise."""
    frame = board.get("frame")
    if frame is None or frame.empty or "caveat" not in frame:
        return
    for mechanism, rows in frame.groupby("mechanism"):
        if mechanism in board["methods"]:
            texts = sorted({str(t) for t in rows["caveat"].dropna() if str(t)})
            board["methods"][mechanism]["caveat"] = "; ".join(texts) or None


def write_leaderboard(boards: list[dict], out_dir, *, results_dir=None) -> dict:
    """Write the pages and the CSV of ``boards`` (each a task description with its stored
    ``frame`` and judged ``claims``) into ``out_dir``; return their paths, each task's top
    three (``tops``) and its series whose claim the stored audits under ``results_dir``
    refute (``refuted``: set aside, never ranked). Each board gains its ``standing``
    (:func:`board_standing`), ``aggregates`` and ``across`` (per notion, the aggregate
    across the task's ``across_metrics``, :func:`across_metrics`; its rows are in the CSV
    with metric ``times_best`` and ``average_rank``)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    audits = audited_privacy(results_dir) if results_dir is not None else {}
    records = stored_records(results_dir)
    bibtex = _bibtex()
    csvs, tops = [], {}
    for board in boards:
        _stored_caveats(board)
        tidy = tidy_rows(board.get("frame"), board)
        board["standing"] = standing = audit_standing(tidy, board, records)
        for entry in standing.values():
            entry["replay"] = replay_command(entry, results_dir)
        refuted = tidy["series"].isin([s for s, e in standing.items()
                                       if e["standing"] == REFUTED])
        stats = cell_stats(tidy[~refuted], board)  # ranks without the refuted series
        set_aside = cell_stats(tidy[refuted], board).assign(rank=float("nan"))
        higher = board["higher_is_better"][board["metric"]]
        notions = sorted(set(stats["notion"])) if not stats.empty else []
        aggregates = {n: aggregate(stats, n, board["metric"], higher) for n in notions}
        across = board.get("across_metrics")
        crossed = {n: across_metrics(stats, n, across["over"], board["higher_is_better"])
                   for n in notions} if across else {}
        caveats = {n: m.get("caveat") for n, m in board["methods"].items()}
        costs = method_costs(board.get("frame"))
        html_text = task_page(board, stats, aggregates, costs, audits, bibtex,
                              _claims_html(board.get("claims", [])), crossed)
        (out_dir / f"{board['task']}.html").write_text(html_text, encoding="utf-8")
        crossed_rows = [across_rows(r, n, stats) for n, r in crossed.items()]
        rows = [f for f in (stats, *crossed_rows, set_aside)  # refuted rows: no rank
                if not f.empty]
        csvs.append(leaderboard_csv(board["task"], pd.concat(rows, ignore_index=True)
                                    if rows else stats, caveats, standing))
        tops[board["task"]] = top_three(stats, board)
        board["aggregates"], board["across"] = aggregates, crossed
    (out_dir / "index.html").write_text(_index(boards, tops), encoding="utf-8")
    csv_path = out_dir / "leaderboard.csv"
    pd.concat(csvs, ignore_index=True).to_csv(csv_path, index=False)
    refuted = {b["task"]: [e for e in b["standing"].values() if e["standing"] == REFUTED]
               for b in boards}
    return {"index": out_dir / "index.html", "csv": csv_path, "tops": tops,
            "refuted": refuted}
