"""dK-PA (sala2011 Sec 3.2, Theorem 1) and the "Ideal" sensitivity-1 reference (Figs 3-4).

dK-PA perturbs every tuple of a graph's dK-2 series with ``Lap((4 d_max + 1) / epsilon)``;
its computation is :func:`privpub.algorithms.dk.dk_pa_series` (Pygmalion builds graphs from it too),
registered here as a baseline with a caveat. The "Ideal" line of Figs 3-4 ("if we had a
function with sensitivity of 1") is ``Lap(1 / epsilon)`` on the same tuples: a hypothetical
yardstick, not a private mechanism (privacy ``none``; it takes ``epsilon`` only to set its
noise). Lemma 1's bound and why dK-PA is not epsilon-edge-DP as published: docs/design.md
(sala2011) and the notes of ``conf/experiment/sala2011_fig3.yaml``.

References
----------
.. [SZWZZ11] A. Sala et al. Sharing graphs using differentially private graph models.
   IMC 2011, Lemma 1, Theorem 1, Sec 3.3 and Fig 3.
"""

from __future__ import annotations

import numpy as np

from privpub.algorithms.dk import (
    CAVEAT_DK_PA,
    DK2_CAVEAT_SUMMARY,
    check_graph,
    dk_pa_series,
    joint_degree,
)
from privpub.ledger import PrivacyLedger
from privpub.noise import laplace_noise
from privpub.registry import EDGE_DP, NO_PRIVACY, register_mechanism
from privpub.types import Graph, JointDegree, Kind
from privpub.validation import check_epsilon, check_rng

__all__ = ["dk_pa", "dk2_ideal"]


@register_mechanism(
    "dk_pa",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=EDGE_DP,
    paper="sala2011",
    role="baseline",
    caveat=CAVEAT_DK_PA,
    source="Sec 3.2, Lemma 1, Theorem 1",
    audit={"cost_ms": 1.6},
    caveat_summary=DK2_CAVEAT_SUMMARY,
)
def dk_pa(
    graph: Graph, *, epsilon: float, rng: np.random.Generator, ledger: PrivacyLedger | None = None
) -> JointDegree:
    """dK-PA: the dK-2 series plus ``Lap((4 d_max + 1) / epsilon)`` per tuple (sala2011 Thm 1).

    :func:`privpub.algorithms.dk.dk_pa_series` (parameters and result as there), as a baseline.
    """
    return dk_pa_series(graph, epsilon=epsilon, rng=rng, ledger=ledger)


@register_mechanism(
    "dk2_ideal",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=NO_PRIVACY,
    paper="sala2011",
    role="reference",
    source="Sec 3.3 (the hypothetical 'Ideal' yardstick)",
)
def dk2_ideal(graph: Graph, *, epsilon: float, rng: np.random.Generator) -> JointDegree:
    """The "Ideal" line of sala2011 Figs 3-4: ``Lap(1 / epsilon)`` per dK-2 tuple, as if the
    series had sensitivity 1. A hypothetical yardstick, not a private mechanism.

    Parameters
    ----------
    graph : Graph
    epsilon : float
        Sets the noise scale ``1 / epsilon``.
    rng : numpy.random.Generator
    """
    graph = check_graph(graph)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    jd = joint_degree(graph)
    noise = laplace_noise(sensitivity=1.0, epsilon=epsilon, rng=rng, size=jd.size)
    return JointDegree(jd.low, jd.high, jd.counts + noise)
