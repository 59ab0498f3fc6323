"""Which configurations of each mechanism the audit runs, and how, read from its registration.

Every DP mechanism is audited at ``epsilon = 1`` with its defaults, plus one configuration
per setting of a parameter that decides whether a caveat applies (``degree_bound``,
``accounting``, ``criterion``, ``method``). A mechanism says so in its registration
(:func:`privpub.registry.register_mechanism`):

``audit={"configurations": [...]}``
    a list of parameter overrides (``epsilon`` is added); required parameters without a
    default (``theta``) get a value here.
``audit={"cost_ms": ...}``
    the time (ms) of one run on the audit's tiny inputs, with its statistics (a
    classifier's predictions on the probe table, a table's cell counts); default 0.5:
    sample sizes are scaled by ``budget = min(1, 0.5 / cost_ms)`` so that every audit takes
    about as long (:meth:`privpub.audit.engine.Plan.scaled`). A slower mechanism gets fewer
    runs, hence a weaker audit, and says so by its verdict (``inconclusive``).
``neighbourhood=``
    the neighbouring relation of its claim when it is not its notion's default
    (:mod:`privpub.audit.neighbours`): qardaji2012's node-DP keeps the node set.

A mechanism that says nothing (a plug-in) gets its signature defaults with ``epsilon = 1``.
Rationale: docs/audit.md.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from privpub.errors import ConfigError
from privpub.registry import MechanismInfo, get_mechanism

__all__ = ["AuditSettings", "audit_settings", "configurations", "call_parameters",
           "AUDIT_EPSILON", "REFERENCE_COST_MS"]

#: The claimed epsilon of every audited configuration.
AUDIT_EPSILON = 1.0

#: The run time (ms) at which an audit gets its mode's full sample sizes.
REFERENCE_COST_MS = 0.5


@dataclass(frozen=True)
class AuditSettings:
    """The audit settings of one mechanism (see the module docstring)."""

    configurations: tuple[dict, ...] = ({},)
    neighbourhood: str | None = None
    cost_ms: float = REFERENCE_COST_MS

    @property
    def budget(self) -> float:
        """The factor on the mode's sample sizes, ``min(1, 0.5 / cost_ms)``."""
        return min(1.0, REFERENCE_COST_MS / self.cost_ms)


def audit_settings(mechanism: MechanismInfo | str) -> AuditSettings:
    """The audit settings a mechanism (or a mechanism's name) registered (the defaults for
    one that registered none)."""
    info = get_mechanism(mechanism) if isinstance(mechanism, str) else mechanism
    return AuditSettings(
        configurations=tuple(dict(c) for c in info.audit.get("configurations", ({},))),
        neighbourhood=info.neighbourhood,
        cost_ms=float(info.audit.get("cost_ms", REFERENCE_COST_MS)),
    )


def configurations(info: MechanismInfo) -> list[dict]:
    """The configurations to audit for ``info``: its settings' overrides (or none), each
    with ``epsilon`` = :data:`AUDIT_EPSILON`."""
    return [{**c, "epsilon": AUDIT_EPSILON} for c in audit_settings(info).configurations]


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
            "configuration (register_mechanism(audit={'configurations': [...]}))"
        )
    return params
