"""Where each series of a leaderboard stands with the stored audits: ranked, refuted or not
audited.

A series whose claim the stored audit refutes (``violated``, with a witness that replays
it) is not ranked under that claim: it is set aside into a table of its own, and the ranks,
average ranks, CD diagram and win rates are computed without it. A series of a DP notion
with no stored audit is ranked and says "not audited". The audit of a series is the one of
its configuration (:func:`privpub.plots.audited_privacy.series_audit`). Rules:
docs/design.md ("Leaderboards").
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd

from privpub.audit.stored import config_label
from privpub.plots.audited_privacy import row_params, series_audit
from privpub.registry import DP_NOTIONS

__all__ = ["RANKED", "REFUTED", "NOT_AUDITED", "audit_standing", "not_audited",
           "refuted_cells", "replay_command", "verdict_note"]

#: A series ranked under its claim (audited and not refuted, or not a DP claim).
RANKED = "ranked"
#: A series whose claim the stored audit refutes: not ranked, in a table of its own.
REFUTED = "refuted"
#: A series of a DP notion ranked with no stored audit of its configuration.
NOT_AUDITED = "not audited"


def audit_standing(tidy: pd.DataFrame, board: dict, records: list[dict]) -> dict[str, dict]:
    """Per series of ``tidy`` (:func:`~privpub.plots.leaderboard.ranking.tidy_rows`):
    ``series``, ``mechanism``, ``notion`` (its claim: a hindsight-tuned series is ranked
    with the not-private ones but claims its mechanism's notion), ``ranked_as`` (the notion
    of the table it would be ranked in), ``caveat``, ``verdict`` (``holds``,
    ``inconclusive``, ``violated``, ``error``, ``not audited`` or ``not a DP claim``),
    ``epsilon_lower_bound``, ``mode``, ``witness_id``, ``configuration`` (the audited one),
    ``standing`` (:data:`RANKED`, :data:`REFUTED` or :data:`NOT_AUDITED`), ``error`` (a
    caveat-free claim refuted) and ``cells`` (its rows' cells)."""
    out: dict[str, dict] = {}
    if tidy is None or tidy.empty:
        return out
    for series, rows in tidy.groupby("series", sort=True):
        mechanism = str(rows["mechanism"].iloc[0])
        notion = str(board["methods"].get(mechanism, {}).get("notion") or rows["notion"].iloc[0])
        caveats = sorted({str(c) for c in rows["caveat"].dropna() if str(c)}) \
            if "caveat" in rows else []
        entry = {"series": str(series), "mechanism": mechanism, "notion": notion,
                 "ranked_as": str(rows["notion"].iloc[0]),
                 "caveat": " / ".join(caveats) or None, "verdict": "not a DP claim",
                 "epsilon_lower_bound": None, "mode": None, "witness_id": None,
                 "configuration": None, "standing": RANKED, "error": False,
                 "cells": sorted({str(c) for c in rows["cell"]}) if "cell" in rows else []}
        if notion in DP_NOTIONS:
            audit = series_audit(records, mechanism, row_params(rows), entry["caveat"])
            if audit is None:
                entry.update(verdict="not audited", standing=NOT_AUDITED)
            else:
                verdict = str(audit.get("verdict") or "error")
                entry.update(
                    verdict=verdict, epsilon_lower_bound=audit.get("epsilon_lower_bound"),
                    mode=audit.get("mode"), witness_id=audit.get("witness_id"),
                    configuration=config_label("", audit.get("config") or {}).strip()
                    or "defaults")
                if verdict == "violated" and audit.get("witness_id"):
                    entry.update(standing=REFUTED, error=entry["caveat"] is None)
                elif verdict not in ("holds", "inconclusive"):
                    entry["standing"] = NOT_AUDITED  # an audit that failed says nothing
        out[str(series)] = entry
    return out


def not_audited(standing: dict[str, dict]) -> list[str]:
    """The mechanisms with a series of a DP notion that no stored audit speaks for."""
    return sorted({e["mechanism"] for e in standing.values() if e["verdict"] == "not audited"})


def refuted_cells(standing: dict[str, dict]) -> set[str]:
    """The stored cells of the refuted series (left out of the task's claims as well)."""
    return {c for e in standing.values() if e["standing"] == REFUTED for c in e["cells"]}


def replay_command(entry: dict, results_dir=None) -> str:
    """``privpub audit --replay <witness id>``: what replays the refutation run for run
    (with ``--results-dir`` when the audits are not under the default ``results``)."""
    where = ("" if results_dir is None or Path(results_dir) == Path("results")
             else f" --results-dir {shlex.quote(str(results_dir))}")
    return f"privpub audit --replay {entry['witness_id']}{where}"


def verdict_note(entry: dict) -> str:
    """``violated (ε ≥ 3.45, quick)``, ``holds (full)``, ``not audited``: the audit of a
    series in a few words."""
    verdict = str(entry.get("verdict"))
    if entry.get("mode") is None:
        return verdict
    bound = entry.get("epsilon_lower_bound")
    shown = f"ε ≥ {bound:.3g}, " if verdict == "violated" and bound is not None else ""
    return f"{verdict} ({shown}{entry['mode']})"
