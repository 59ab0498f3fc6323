"""Stored audits as the report and the leaderboard read them.

``privpub audit`` (:mod:`privpub.experiments.audit`) stores one result-store row per audited
configuration under ``<results_dir>/audit/store`` and, after every run, writes the latest
row of every configuration to ``<results_dir>/audit/verdicts.json``. This module reads that
file (plots and the leaderboard import privpub core, never experiments) and matches a series
(a mechanism with its parameters) to its audited configuration. Layout and rules:
docs/audit.md ("Stored audits").
"""

from __future__ import annotations

import json
from pathlib import Path

from privpub.errors import PrivpubError

__all__ = ["AUDIT_DIR", "VERDICTS_FILE", "AUDIT_METRIC", "MODE_ORDER", "audit_id",
           "config_label", "preferred", "replay_command",
           "stored_audits", "stored_verdicts", "audit_of", "worst"]

#: The audits' directory under a results directory (not an experiment: the report skips it).
AUDIT_DIR = "audit"
#: The JSON list of the latest stored audit of every configuration, beside the store.
VERDICTS_FILE = "verdicts.json"
#: ``metric`` of an audit's row; its ``value`` is the epsilon lower bound.
AUDIT_METRIC = "epsilon_lower_bound"
#: Which mode's audit speaks for a configuration when both are stored (the first found).
MODE_ORDER = ("full", "quick")
#: Verdicts from the most to the least serious (:func:`worst`).
_SEVERITY = ("error", "violated", "inconclusive", "holds")


def audit_id(mechanism: str, overrides: dict, mode: str, seed: int) -> str:
    """The id of one audit (its store ``cell``, and its witness's id): 12 hex digits of the
    sha256 of its canonical JSON, stable across machines."""
    import hashlib

    doc = json.dumps({"mechanism": mechanism, "config": overrides, "mode": mode,
                      "seed": int(seed)}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(doc.encode()).hexdigest()[:12]


def config_label(mechanism: str, config: dict) -> str:
    """``"hay_degree_sequence degree_bound=max_degree"``: a mechanism and its audited
    overrides but epsilon (every audit claims epsilon = 1)."""
    over = {k: v for k, v in config.items() if k != "epsilon"}
    return mechanism + "".join(f" {k}={v}" for k, v in sorted(over.items()))


def replay_command(witness_id: str, results_dir=None) -> str:
    """``privpub audit --replay <witness id>``, with ``--results-dir`` when the audits are
    not under the default ``results``: the command that replays a stored witness as
    printed (the witness imports its mechanism's module itself)."""
    import shlex

    where = ("" if results_dir is None or Path(results_dir) == Path("results")
             else f" --results-dir {shlex.quote(str(results_dir))}")
    return f"privpub audit --replay {witness_id}{where}"


def stored_audits(results_dir) -> list[dict]:
    """The stored audits under ``results_dir`` (``[]`` when none): one record per
    (mechanism, configuration, mode) with ``mechanism``, ``config`` (the overrides of the
    audited call, ``epsilon`` included), ``mode``, ``privacy``, ``epsilon``, ``caveat``,
    ``verdict``, ``epsilon_lower_bound``, ``witness_id``, ``samples``, ``seconds`` and
    ``code_hash``. A malformed file is a :class:`~privpub.errors.PrivpubError`."""
    path = Path(results_dir) / AUDIT_DIR / VERDICTS_FILE
    if not path.is_file():
        return []
    try:
        records = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PrivpubError(f"cannot read the stored audits {str(path)!r}: {exc}") from None
    if not isinstance(records, list):
        raise PrivpubError(f"{str(path)!r}: expected a list of audits")
    return records


def worst(records: list[dict]) -> dict | None:
    """The most serious of ``records`` (error, violated, inconclusive, holds; then the
    largest lower bound), None when empty."""
    def rank(r):
        verdict = r.get("verdict") or "error"
        sev = _SEVERITY.index(verdict) if verdict in _SEVERITY else 0
        return (sev, -(r.get("epsilon_lower_bound") or 0.0))

    return min(records, key=rank) if records else None


def _mode_rank(record: dict) -> int:
    mode = record.get("mode")
    return MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER)


def preferred(records: list[dict]) -> list[dict]:
    """Per configuration, the audit of the first mode of :data:`MODE_ORDER` stored."""
    best: dict[tuple, dict] = {}
    for r in records:
        key = (r["mechanism"], json.dumps(r.get("config", {}), sort_keys=True))
        if key not in best or _mode_rank(r) < _mode_rank(best[key]):
            best[key] = r
    return list(best.values())


def stored_verdicts(results_dir) -> dict[str, tuple[str, float]]:
    """``{mechanism: (verdict, epsilon lower bound)}`` of every audited mechanism: the most
    serious verdict over its configurations (:func:`worst`), full audits before quick ones.
    A mechanism whose configurations differ (a caveated ``degree_bound`` and a caveat-free
    one) needs :func:`audit_of` with the series' parameters."""
    by_mechanism: dict[str, list[dict]] = {}
    for r in preferred(stored_audits(results_dir)):
        by_mechanism.setdefault(r["mechanism"], []).append(r)
    out = {}
    for name, records in sorted(by_mechanism.items()):
        w = worst(records)
        out[name] = (w.get("verdict") or "error", float(w.get("epsilon_lower_bound") or 0.0))
    return out


def audit_of(records: list[dict], mechanism: str, params: dict, *,
             caveat: str | None | bool = False) -> dict | None:
    """The stored audit that speaks for a series of ``mechanism`` called with ``params``
    (give the signature defaults too): among its audited configurations, those whose
    non-epsilon overrides all equal the series' parameters, the most specific one (most
    overrides) first and, among equals, the most serious (:func:`worst`). When none agrees
    (a series at another ``theta`` than the audited one) and ``caveat`` is given (the
    series' caveat, None for none), the configurations with the same caveat speak for it:
    the audit runs one configuration per setting that decides a caveat. The audits run at
    epsilon = 1; a series' other epsilons share its verdict (the audit checks the
    calibration, which scales with epsilon). None when the mechanism was not audited."""
    def agrees(r):
        over = {k: v for k, v in r.get("config", {}).items() if k != "epsilon"}
        return all(str(params.get(k)) == str(v) for k, v in over.items())

    audited = [r for r in preferred(records) if r["mechanism"] == mechanism]
    mine = [r for r in audited if agrees(r)]
    if not mine and caveat is not False:
        mine = [r for r in audited if (r.get("caveat") or None) == (caveat or None)]
    if not mine:
        return None
    most = max(len(r.get("config", {})) for r in mine)
    return worst([r for r in mine if len(r.get("config", {})) == most])
