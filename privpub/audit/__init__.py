"""Empirical privacy audits: black-box epsilon lower bounds for registered DP mechanisms.

``audit(name, {"epsilon": 1.0}, mode="quick", seed=0)`` runs one configuration of a
mechanism on neighbouring pairs of its own privacy notion and returns a JSON-able verdict
(``holds`` / ``violated`` / ``inconclusive``) with an epsilon lower bound; ``replay(witness)``
reproduces a violation. ``configurations(info)`` lists what the suite audits per mechanism.

Modules: :mod:`~privpub.audit.neighbours` (what each notion protects),
:mod:`~privpub.audit.inputs` (tiny inputs and their JSON form), :mod:`~privpub.audit.pairs`
(the structured library and the random search), :mod:`~privpub.audit.statistics` (what is
looked at in a release), :mod:`~privpub.audit.estimator` (events and Clopper-Pearson
bounds), :mod:`~privpub.audit.engine` (the phases), :mod:`~privpub.audit.configs` (which
configurations), :mod:`~privpub.audit.stored` (stored audits as the report and the
leaderboard read them: ``stored_verdicts(results_dir) -> {mechanism: (verdict, eps_lb)}``),
:mod:`~privpub.audit.blind_spots` (what the audit cannot see, as the mechanisms' registrations
say). The audit names no mechanism: what it runs of each is in its registration. Rationale:
docs/audit.md.
"""

from privpub.audit.configs import audit_settings, configurations
from privpub.audit.engine import MODES, VERDICTS, Plan, audit, replay
from privpub.audit.neighbours import NEIGHBOURHOODS, neighbourhood_for
from privpub.audit.stored import audit_of, stored_audits, stored_verdicts

__all__ = [
    "audit",
    "replay",
    "configurations",
    "audit_settings",
    "MODES",
    "Plan",
    "VERDICTS",
    "NEIGHBOURHOODS",
    "neighbourhood_for",
    "stored_verdicts",
    "stored_audits",
    "audit_of",
]
