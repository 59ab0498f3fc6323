"""What the audit cannot see, and the check of the caveats against the stored audits.

A caveated configuration is *confirmed* when its stored audit is ``violated`` (with a
replayable witness); otherwise its mechanism's registration needs a sentence saying why the
audit cannot see it (``register_mechanism(blind_spot=...)``, :attr:`MechanismInfo.blind_spots`
by configuration label). A caveat-free configuration found ``violated`` is an error.
``privpub/audit/tests/test_caveat_table.py`` checks the registry's caveats against the
committed full audit (``docs/audit-verdicts.json``). A sentence is not part of the audit's
code: changing one re-audits nothing (:mod:`privpub.experiments.provenance` leaves the
descriptive registration keywords out of a module's hash). Rationale: docs/audit.md ("What
the full audit found").
"""

from __future__ import annotations

from privpub.audit.stored import config_label, preferred
from privpub.registry import MechanismInfo, mechanisms

__all__ = ["COVERAGE", "blind_spots", "caveat_coverage"]


def blind_spots(registry: dict[str, MechanismInfo] | None = None) -> dict[str, str]:
    """Why the audit cannot see a configuration's caveat, by :func:`config_label` (the bare
    mechanism name: every configuration of it), from every registered mechanism
    (``registry``, default :func:`privpub.registry.mechanisms`)."""
    out: dict[str, str] = {}
    for info in (mechanisms() if registry is None else registry).values():
        out.update(info.blind_spots)
    return out


#: Coverage states of :func:`caveat_coverage`.
COVERAGE = ("confirmed", "blind spot", "unexplained", "ERROR", "ok")


def caveat_coverage(records: list[dict]) -> list[dict]:
    """Per audited configuration (full before quick): ``label``, ``mechanism``, ``caveat``
    (bool), ``verdict``, ``epsilon_lower_bound``, ``witness_id``, ``coverage`` (one of
    :data:`COVERAGE`: a caveat confirmed by a violation, explained by a blind spot, or
    neither; a caveat-free configuration violated (``ERROR``) or not (``ok``)) and
    ``why`` (the blind spot's sentence)."""
    sentences = blind_spots()
    out = []
    for r in sorted(preferred(records), key=lambda r: config_label(r["mechanism"],
                                                                      r["config"])):
        label = config_label(r["mechanism"], r["config"])
        violated = r.get("verdict") == "violated" and bool(r.get("witness_id"))
        why = sentences.get(label) or sentences.get(r["mechanism"])
        if r.get("caveat"):
            coverage = "confirmed" if violated else ("blind spot" if why else "unexplained")
        else:
            coverage = "ERROR" if r.get("verdict") == "violated" else "ok"
        out.append({"label": label, "mechanism": r["mechanism"],
                    "caveat": bool(r.get("caveat")), "verdict": r.get("verdict"),
                    "epsilon_lower_bound": r.get("epsilon_lower_bound"),
                    "witness_id": r.get("witness_id"), "mode": r.get("mode"),
                    "coverage": coverage,
                    "why": why if coverage == "blind spot" else None})
    return out
