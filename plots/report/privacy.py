"""The report's privacy parts: claimed beside audited privacy per series (each run's
``meta.json`` ``series_privacy``, written by the draw from :mod:`privpub.plots.audited_privacy`) and
the table of every stored audit (``<results>/audit/verdicts.json``,
:func:`privpub.audit.stored.stored_audits`), in both views. A caveat-free configuration the
audit refutes is shown as an error.

Part of :mod:`privpub.plots.report`; rationale: docs/audit.md ("In the report").
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from privpub.audit.stored import config_label, preferred, stored_audits
from privpub.errors import PrivpubError
from privpub.plots.series import epsilon_bound_text

from .results_tree import Run
from .text import markdown_table

__all__ = ["verdict_text", "audit_records", "md_audits", "md_series_privacy", "html_audits",
           "html_series_privacy", "refuted_line"]

_e = html.escape
_SERIES_HEADER = ("series", "mechanism", "claim", "epsilon", "audit (epsilon = 1)", "caveat")
_AUDIT_HEADER = ("mechanism", "configuration", "claim", "verdict", "epsilon lower bound",
                 "mode", "caveat", "witness")


def audit_records(results_dir: Path) -> tuple[list[dict], str | None]:
    """(the stored audits, full before quick per configuration, sorted; a problem or None)."""
    try:
        records = preferred(stored_audits(results_dir))
    except PrivpubError as exc:
        return [], str(exc)
    return sorted(records, key=lambda r: (r["mechanism"], config_label("", r["config"]))), None


def _audit_cells(r: dict) -> tuple[list[str], bool]:
    error = r.get("verdict") in ("violated", "error") and not r.get("caveat")
    bound = r.get("epsilon_lower_bound")
    config = config_label("", r.get("config") or {}).strip() or "defaults"
    return [r["mechanism"], config, f"{r.get('privacy')}, eps = {r.get('epsilon'):g}",
            str(r.get("verdict")), "-" if bound is None else f"{bound:.3g}",
            str(r.get("mode")), "yes" if r.get("caveat") else "none",
            r.get("witness_id") or "-"], error


def verdict_text(entry: dict) -> str:
    """``violated (eps >= 4.3, full)``, ``holds (quick)``, ``not audited`` ..."""
    verdict = str(entry.get("verdict"))
    if entry.get("mode") is None:
        return verdict
    bound = entry.get("epsilon_lower_bound")
    shown = f"eps >= {bound:.3g}, " if verdict == "violated" and bound is not None else ""
    text = f"{verdict} ({shown}{entry['mode']})"
    return f"**ERROR: {text} without a caveat**" if entry.get("error") else text


def _series_cells(e: dict) -> list[str]:
    eps = ", ".join(f"{x:g}" for x in e.get("epsilons") or []) or "-"
    return [e["series"], e["mechanism"], e["privacy"], eps, verdict_text(e),
            "yes" if e.get("caveat") else "none"]


def refuted_line(run: Run) -> str:
    """One line naming the series of ``run`` whose privacy claim a stored audit refutes
    (marked so in the figures' legends); empty when none is."""
    entries = run.meta.get("series_privacy") if isinstance(run.meta, dict) else None
    refuted = [e for e in entries or [] if isinstance(e, dict) and e.get("verdict") == "violated"]
    if not refuted:
        return ""
    which = ", ".join(f"{e['series']} ({e.get('privacy')}: "
                      f"{epsilon_bound_text(e.get('epsilon_lower_bound') or 0.0)} at ε = 1)"
                      for e in refuted)
    return (f"Privacy claim refuted by the stored audit: {which}; marked "
            "[claim refuted by audit] in the figures.")


def md_audits(results_dir: Path) -> list[str]:
    """The "Audited privacy" section of ``report.md`` (nothing when no audit is stored)."""
    records, problem = audit_records(results_dir)
    if problem:
        return ["## Audited privacy", "", f"- ⚠ {problem}", ""]
    if not records:
        return []
    out = ["## Audited privacy", "",
           "Every stored `privpub audit` (docs/audit.md): a black-box epsilon lower bound per "
           "configuration; `violated` is confirmed on fresh seeds and replayable "
           "(`privpub audit --replay <witness>`). A caveat-free configuration found violated "
           "is an **ERROR**.", ""]
    rows = []
    for r in records:
        cells, error = _audit_cells(r)
        if error:
            cells[3] = f"**ERROR: {cells[3]} without a caveat**"
        rows.append(cells)
    return [*out, markdown_table(pd.DataFrame(rows, columns=_AUDIT_HEADER), index=False)]


def md_series_privacy(run: Run) -> list[str]:
    """A run's "Privacy: claimed and audited" table (nothing for an older meta.json)."""
    entries = run.meta.get("series_privacy") if isinstance(run.meta, dict) else None
    if not entries:
        return []
    rows = [_series_cells(e) for e in entries]
    return ["#### Privacy: claimed and audited", "",
            markdown_table(pd.DataFrame(rows, columns=_SERIES_HEADER), index=False)]


def _html_table(header, rows: list[tuple[list[str], bool]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    flag = ' class="warn"'
    body = "".join(
        f"<tr{flag if error else ''}>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>"
        for cells, error in rows)
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}'
            "</tbody></table></div>")


def html_audits(results_dir: Path) -> list[str]:
    """The "Audited privacy" section of ``report.html``."""
    records, problem = audit_records(results_dir)
    if problem:
        return [f'<section id="audits"><h2>Audited privacy</h2><p class="warn">{_e(problem)}'
                "</p></section>"]
    if not records:
        return []
    rows = []
    for r in records:
        cells, error = _audit_cells(r)
        if error:
            cells[3] = f"ERROR: {cells[3]} without a caveat"
        rows.append((cells, error))
    return ['<section id="audits"><h2>Audited privacy</h2>',
            '<p class="lead">Every stored <code>privpub audit</code>: a black-box epsilon lower '
            "bound per configuration; a caveat-free configuration found violated is an "
            "error.</p>", _html_table(_AUDIT_HEADER, rows), "</section>"]


def html_series_privacy(run: Run) -> list[str]:
    """A run's claimed-and-audited table in ``report.html``."""
    entries = run.meta.get("series_privacy") if isinstance(run.meta, dict) else None
    if not entries:
        return []
    rows = [(_series_cells(e), bool(e.get("error"))) for e in entries]
    return ["<h5>Privacy: claimed and audited</h5>", _html_table(_SERIES_HEADER, rows)]
