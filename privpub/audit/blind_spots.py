"""What the audit cannot see: one sentence per caveated configuration that the full audit
does not refute, and the check of the caveats against the stored audits.

A caveated configuration is *confirmed* when its stored audit is ``violated`` (with a
replayable witness); otherwise it needs a sentence here saying why the audit cannot see
it. A caveat-free configuration found ``violated`` is an error. The README's caveat table
is checked against the committed full audit (``docs/audit-verdicts.json``) by
``privpub/audit/tests/test_caveat_table.py``. Not part of the audit's code (changing a
sentence re-audits nothing). Rationale: docs/audit.md ("What the full audit found").
"""

from __future__ import annotations

from privpub.audit.stored import config_label, preferred

__all__ = ["BLIND_SPOTS", "COVERAGE", "caveat_coverage"]

_SMALL_INPUTS = ("needs inputs far larger than the audit's 5-14 nodes or rows, where a few "
                 "thousand runs cannot resolve it")

#: Why the audit cannot see a configuration's caveat, by :func:`config_label`.
BLIND_SPOTS: dict[str, str] = {
    "diffprivlib_tree": (
        "the caveat is about provenance (IBM diffprivlib's own tree and noise, a shim for "
        "two scikit-learn constants), not a leak: nothing for a black-box audit to refute"),
    "global_diffpid3 criterion=ig": (
        "Delta-IG read from the table's size N changes the noise by a factor of about "
        "log2(N + 1) / log2(N) between neighbours: a tiny effect that " + _SMALL_INPUTS),
    "local_diffpid3 criterion=ig": (
        "as global_diffpid3: the N-dependent sensitivity moves the output distribution by "
        "far less than the claimed epsilon on small tables"),
    "shifted_local_diffpid3 criterion=ig": (
        "as global_diffpid3: the N-dependent sensitivity moves the output distribution by "
        "far less than the claimed epsilon on small tables"),
    "flowgraph theta_max=4": (
        "with theta_max fixed the candidate thetas no longer read |V| (the default's "
        "witness); what remains of the caveat, the flow histogram's sensitivity 6 theta "
        "checked by brute force on small graphs only, is a question about large graphs "
        "that " + _SMALL_INPUTS),
    "rps_degree_histogram accounting=paper degree_bound=n_minus_1": (
        "the per-region accounting fails only for a node whose edges reach several regions "
        "that each hold enough nodes (the 13-node witness of "
        "mechanisms/rps/tests); the pair library has no such pair and the random search "
        "over 5-14 node graphs did not find one"),
    "rps_degree_sequence accounting=paper degree_bound=n_minus_1": (
        "as rps_degree_histogram: the per-region accounting fails only for a node whose "
        "edges reach several well-filled regions, a pair the audit's library lacks and its "
        "random search did not find"),
}

#: Coverage states of :func:`caveat_coverage`.
COVERAGE = ("confirmed", "blind spot", "unexplained", "ERROR", "ok")


def caveat_coverage(records: list[dict]) -> list[dict]:
    """Per audited configuration (full before quick): ``label``, ``mechanism``, ``caveat``
    (bool), ``verdict``, ``epsilon_lower_bound``, ``witness_id``, ``coverage`` (one of
    :data:`COVERAGE`: a caveat confirmed by a violation, explained by a blind spot, or
    neither; a caveat-free configuration violated (``ERROR``) or not (``ok``)) and
    ``why`` (the blind spot's sentence)."""
    out = []
    for r in sorted(preferred(records), key=lambda r: config_label(r["mechanism"],
                                                                      r["config"])):
        label = config_label(r["mechanism"], r["config"])
        violated = r.get("verdict") == "violated" and bool(r.get("witness_id"))
        why = BLIND_SPOTS.get(label) or BLIND_SPOTS.get(r["mechanism"])
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
