"""Claimed beside audited privacy, per drawn series: the rows of ``summary.md``'s "Privacy"
section and of ``meta.json``'s ``series_privacy`` (the report reads it from there).

For every series of an experiment's stored rows: its mechanism, claimed notion, the
epsilons it ran at, its caveat, and the stored audit of the configuration that speaks for it
(:func:`privpub.audit.stored.audit_of`: the verdict and epsilon lower bound of
``privpub audit``, or "not audited"). A caveat-free series whose audit is ``violated`` is
an error, not a footnote. Reads the result store's rows and ``<results>/audit/verdicts.json``
only. Rationale: docs/audit.md ("In the report").
"""

from __future__ import annotations

import json

import pandas as pd

from privpub.audit.stored import audit_of, stored_audits, worst
from privpub.errors import PrivpubError
from privpub.plots.report.privacy import verdict_text
from privpub.plots.report.text import markdown_table
from privpub.plots.series import REFUTED, short_caveat
from privpub.registry import DP_NOTIONS, get_mechanism

__all__ = ["row_params", "series_audit", "series_privacy", "privacy_text",
           "with_refutations"]


def row_params(rows: pd.DataFrame) -> list[dict]:
    """The distinct parameters (the ``params`` JSON) the rows were called with."""
    out = []
    for text in pd.unique(rows["params"].astype(str)) if "params" in rows else ():
        try:
            out.append(json.loads(text))
        except ValueError:
            continue
    return out or [{}]


def _defaults(mechanism: str) -> dict:
    """The signature defaults of a registered mechanism ({} for one not registered here)."""
    import inspect

    try:
        info = get_mechanism(mechanism)
    except PrivpubError:
        return {}
    return {k: v for k, v in info.parameters.items() if v is not inspect.Parameter.empty}


def _epsilons(params: list[dict]) -> list[float]:
    return sorted({float(p["epsilon"]) for p in params
                   if isinstance(p.get("epsilon"), (int, float))})


def series_audit(records: list[dict], mechanism: str, params: list[dict],
                 caveat: str | None) -> dict | None:
    """The stored audit that speaks for a series of ``mechanism`` whose rows were called
    with each of ``params`` (the signature defaults are added) and carry ``caveat`` (None
    for none): the most serious of its rows' audited configurations
    (:func:`privpub.audit.stored.audit_of`), None when none was audited."""
    defaults = _defaults(mechanism)
    return worst([a for a in (audit_of(records, mechanism, {**defaults, **p}, caveat=caveat)
                              for p in params) if a])


def series_privacy(rows: pd.DataFrame, results_dir) -> list[dict]:
    """One entry per series (``label``) of ``rows`` (ok rows, noise-free twins left out):
    ``series``, ``mechanism``, ``privacy``, ``epsilons``, ``caveat`` (None when none),
    ``verdict`` (``holds`` / ``violated`` / ``inconclusive`` / ``not audited`` /
    ``not a DP claim``), ``epsilon_lower_bound``, ``mode``, ``witness_id`` and ``error``
    (a caveat-free series whose audit is violated)."""
    if rows.empty or "label" not in rows:
        return []
    try:
        records = stored_audits(results_dir)
    except PrivpubError:
        records = []
    out = []
    for label, group in rows.groupby("label", sort=False):
        mechanism = str(group["mechanism"].iloc[0])
        privacy = str(group["privacy"].dropna().iloc[0]) if group["privacy"].notna().any() \
            else "none"
        caveats = sorted({str(c) for c in group.get("caveat", pd.Series()).dropna() if str(c)})
        params = row_params(group)
        entry = {"series": str(label), "mechanism": mechanism, "privacy": privacy,
                 "epsilons": _epsilons(params), "caveat": " / ".join(caveats) or None,
                 "verdict": "not a DP claim", "epsilon_lower_bound": None, "mode": None,
                 "witness_id": None, "error": False}
        if privacy in DP_NOTIONS:
            audit = series_audit(records, mechanism, params, entry["caveat"])
            entry["verdict"] = "not audited" if audit is None else audit.get("verdict")
            if audit is not None:
                entry.update(epsilon_lower_bound=audit.get("epsilon_lower_bound"),
                             mode=audit.get("mode"), witness_id=audit.get("witness_id"))
            entry["error"] = entry["verdict"] == "violated" and not caveats
        out.append(entry)
    return out


def with_refutations(rows: pd.DataFrame, entries: list[dict]) -> pd.DataFrame:
    """``rows`` with the :data:`~privpub.plots.series.REFUTED` column: per row, the epsilon
    lower bound of the stored audit that refutes its series' privacy claim (verdict
    ``violated`` in ``entries``, :func:`series_privacy`), else NaN; the figures' legends
    mark those series (:func:`privpub.plots.series.legend_marks`)."""
    bounds = {e["series"]: float(e.get("epsilon_lower_bound") or 0.0) for e in entries
              if e.get("verdict") == "violated"}
    if rows.empty or "label" not in rows:
        return rows
    return rows.assign(**{REFUTED: rows["label"].astype(str).map(bounds).astype(float)})


def privacy_text(entries: list[dict]) -> str:
    """The "Privacy" section of ``summary.md``: claimed vs audited privacy per series."""
    if not entries:
        return ""
    table = pd.DataFrame([{
        "series": e["series"], "mechanism": f"`{e['mechanism']}`", "claim": e["privacy"],
        "epsilon": ", ".join(f"{x:g}" for x in e["epsilons"]) or "-",
        "audit": verdict_text(e),
        "caveat": short_caveat(e["caveat"], 160) if e["caveat"] else "none",
    } for e in entries])
    intro = ("## Privacy: claimed and audited\n\nClaimed notion and epsilons per series, its "
             "caveat, and the stored black-box audit at epsilon = 1 (`privpub audit`; verdict "
             "and epsilon lower bound; see docs/audit.md).\n\n")
    return intro + markdown_table(table, index=False)
