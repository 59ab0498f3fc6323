"""Which configurations of each mechanism the audit runs, and how: one table.

Every DP mechanism is audited at ``epsilon = 1`` with its defaults, plus one configuration
per setting of a parameter that decides whether a caveat applies (``degree_bound``,
``accounting``, ``criterion``, ``method``). :data:`AUDIT_SETTINGS` holds, per mechanism, the
keys a mechanism's YAML could carry later as an ``audit:`` block:

``configurations``
    a list of parameter overrides (``epsilon`` is added); required parameters without a
    default (``theta``) get a value here.
``neighbourhood``
    the neighbouring relation of its claim when it is not its notion's default
    (:mod:`privpub.audit.neighbours`): qardaji2012's node-DP keeps the node set.
``cost_ms``
    the time (ms) of one run on the audit's tiny inputs, with its statistics (a
    classifier's predictions on the probe table, a table's cell counts); default 0.5:
    sample sizes are scaled by
    ``budget = min(1, 0.5 / cost_ms)`` so that every audit takes about as long
    (:meth:`privpub.audit.engine.Plan.scaled`). A slower mechanism gets fewer runs, hence a
    weaker audit, and says so by its verdict (``inconclusive``).

A mechanism not in the table (a plug-in) gets its signature defaults with ``epsilon = 1``.
Rationale: docs/audit.md.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from privpub.errors import ConfigError
from privpub.registry import MechanismInfo

__all__ = ["AUDIT_SETTINGS", "AuditSettings", "audit_settings", "configurations",
           "call_parameters", "AUDIT_EPSILON", "REFERENCE_COST_MS"]

#: The claimed epsilon of every audited configuration.
AUDIT_EPSILON = 1.0

_BOUNDS = [{"degree_bound": "max_degree"}, {"degree_bound": "n_minus_1"}]
_RPS = [{"degree_bound": b, "accounting": a}
        for a in ("paper", "strict") for b in ("max_degree", "n_minus_1")]
_CRITERIA = [{"criterion": "ig"}, {"criterion": "gini"}]

#: Audit settings by mechanism name (see the module docstring).
AUDIT_SETTINGS: dict[str, dict] = {
    "diffprivlib_tree": {"cost_ms": 40},
    "dk_pa": {"cost_ms": 1.6},
    "drc": {"cost_ms": 2.7},
    "drc_honest": {"cost_ms": 3},
    "flowgraph": {"configurations": [{}, {"theta_max": 4}], "cost_ms": 1.3},
    "global_diffpid3": {"configurations": _CRITERIA, "cost_ms": 15},
    "local_diffpid3": {"configurations": _CRITERIA, "cost_ms": 15},
    "shifted_local_diffpid3": {"configurations": _CRITERIA, "cost_ms": 15},
    "global_priv_topk": {"configurations": _BOUNDS},
    "local_priv_topk": {"configurations": _BOUNDS},
    "shifted_local_priv_topk": {"configurations": _BOUNDS, "cost_ms": 0.9},
    "privatesql_topk": {"configurations": _BOUNDS, "cost_ms": 3},
    "hay_degree_sequence": {"configurations": _BOUNDS, "neighbourhood": "node_rewire"},
    "ldrc": {"cost_ms": 2},
    "pygmalion": {"configurations": [{"method": m} for m in ("ldrc", "drc", "dk_pa",
                                                            "drc_honest")], "cost_ms": 12},
    "randomized_response_edge": {"cost_ms": 1.4},
    "randomized_response_node": {"cost_ms": 1.4},
    "rps_degree_sequence": {"configurations": _RPS, "neighbourhood": "node_rewire",
                            "cost_ms": 6},
    "rps_degree_histogram": {"configurations": _RPS, "neighbourhood": "node_rewire",
                             "cost_ms": 6},
    "rps_table": {"cost_ms": 60},
    "theta_constrained": {"cost_ms": 2.3},
    "theta_cumulative_histogram": {"cost_ms": 1.5},
    "theta_histogram": {"cost_ms": 1.6},
    "theta_histogram_fixed": {"configurations": [{"theta": 2}]},
    "theta_omega_histogram": {"cost_ms": 30},
    "truncation": {"configurations": [{"theta": 2}], "cost_ms": 2},
}

#: The run time (ms) at which an audit gets its mode's full sample sizes.
REFERENCE_COST_MS = 0.5


@dataclass(frozen=True)
class AuditSettings:
    """The settings of one mechanism (see :data:`AUDIT_SETTINGS`)."""

    configurations: tuple[dict, ...] = ({},)
    neighbourhood: str | None = None
    cost_ms: float = REFERENCE_COST_MS

    @property
    def budget(self) -> float:
        """The factor on the mode's sample sizes, ``min(1, 0.5 / cost_ms)``."""
        return min(1.0, REFERENCE_COST_MS / self.cost_ms)


def audit_settings(name: str) -> AuditSettings:
    """The audit settings of mechanism ``name`` (defaults for one not in the table)."""
    doc = AUDIT_SETTINGS.get(name, {})
    return AuditSettings(
        configurations=tuple(dict(c) for c in doc.get("configurations", [{}])),
        neighbourhood=doc.get("neighbourhood"),
        cost_ms=float(doc.get("cost_ms", REFERENCE_COST_MS)),
    )


def configurations(info: MechanismInfo) -> list[dict]:
    """The configurations to audit for ``info``: its settings' overrides (or none), each
    with ``epsilon`` = :data:`AUDIT_EPSILON`."""
    return [{**c, "epsilon": AUDIT_EPSILON} for c in audit_settings(info.name).configurations]


def call_parameters(info: MechanismInfo, config: dict) -> dict:
    """The keyword arguments of one audited call: the signature defaults overridden by
    ``config``; a :class:`ConfigError` for unknown or missing parameters."""
    unknown = set(config) - set(info.parameters)
    if unknown:
        raise ConfigError(f"mechanism {info.name!r} takes no parameter(s) {sorted(unknown)}")
    params = {k: v for k, v in info.parameters.items() if v is not inspect.Parameter.empty}
    params.update(config)
    missing = sorted(set(info.parameters) - set(params))
    if missing:
        raise ConfigError(
            f"mechanism {info.name!r} needs {missing} to be audited: give them in the "
            "configuration (privpub.audit.configs.AUDIT_SETTINGS for built-in ones)"
        )
    return params
