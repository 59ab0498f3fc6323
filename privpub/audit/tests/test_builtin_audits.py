"""CI: a quick audit of every caveat-free configuration of every built-in DP mechanism
None may be found violated: a confirmed violation of a claim without a caveat
is a bug in the mechanism (or a missing caveat), never a flaky test -- the audit's
family-wise error is at most alpha = 0.01 per configuration, and the seed is fixed.

Marked ``slow`` (still part of every ``python -m pytest``); one test per configuration so
that ``-n 2`` spreads them. Measured: docs/timings.md ("Audits").
"""

from __future__ import annotations

import pytest

from privpub.audit import audit, configurations
from privpub.registry import mechanisms


def _caveat_free() -> list[tuple[str, dict]]:
    out = []
    for name, info in sorted(mechanisms().items()):
        if info.is_dp and not name.startswith("toy_"):
            out += [(name, c) for c in configurations(info) if not info.caveat_for(c)]
    return out


CAVEAT_FREE = _caveat_free()


def test_there_are_caveat_free_configurations_to_audit():
    assert len(CAVEAT_FREE) >= 10


@pytest.mark.slow
@pytest.mark.parametrize(("name", "config"), CAVEAT_FREE,
                         ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in sorted(c.items()))}"
                              for n, c in CAVEAT_FREE])
def test_caveat_free_configuration_is_not_violated(name, config):
    result = audit(name, config, mode="quick", seed=0)
    assert result["verdict"] != "violated", (
        f"{name} {config}: violated without a caveat (eps >= "
        f"{result['epsilon_lower_bound']:.3g}); witness: {result['witness']}")
