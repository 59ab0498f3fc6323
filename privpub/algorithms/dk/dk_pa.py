"""dK-PA's noisy dK-2 series (sala2011 Sec 3.2, Theorem 1), the one place it is computed.

Registered as the ``dk_pa`` baseline (:mod:`privpub.baselines.dk_pa`) and used as one of Pygmalion's
dK-2 releases (:mod:`privpub.mechanisms.pygmalion`, ``method="dk_pa"``). Lemma 1's bound and why
dK-PA is not epsilon-edge-DP as published: docs/design.md (sala2011).

References
----------
.. [SZWZZ11] A. Sala et al. Sharing graphs using differentially private graph models.
   IMC 2011, Lemma 1, Theorem 1.
"""

from __future__ import annotations

import numpy as np

from privpub.algorithms.dk.series import check_graph, joint_degree
from privpub.ledger import PrivacyLedger
from privpub.noise import laplace_mechanism
from privpub.types import Graph, JointDegree
from privpub.validation import check_epsilon, check_rng

__all__ = ["CAVEAT_DK_PA", "DK2_CAVEAT_SUMMARY", "dk_pa_sensitivity", "dk_pa_series"]

CAVEAT_DK_PA = (
    "as published (sala2011 Thm 1) the noise is added only to the dK-2 tuples present in the "
    "graph, so which degree pairs occur is released exactly, and 4*d_max+1 uses the graph's "
    "own d_max (not a global bound): not epsilon-edge-DP. See drc_honest for a variant whose "
    "guarantee holds."
)
#: The caveat of sala2011's dK-2 releases (dK-PA, DRC, LDRC, Pygmalion) in one line.
DK2_CAVEAT_SUMMARY = (
    "noise only on the dK-2 tuples present (their set is released exactly) and DRC's "
    "per-partition scale read from the data: an empirical neighbour test refutes the claim; "
    "`drc_honest` holds it (every cell of the domain, public scales)"
)


def dk_pa_sensitivity(d_max: int) -> float:
    """Lemma 1: one edge changes the dK-2 series by at most ``4 d_max + 1`` in L1."""
    return 4.0 * int(d_max) + 1.0


def dk_pa_series(
    graph: Graph, *, epsilon: float, rng: np.random.Generator, ledger: PrivacyLedger | None = None
) -> JointDegree:
    """dK-PA: the dK-2 series plus ``Lap((4 d_max + 1) / epsilon)`` per tuple (sala2011 Thm 1).

    Parameters
    ----------
    graph : Graph
    epsilon : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional

    Returns
    -------
    JointDegree
        The noisy counts of the graph's own tuples (raw: fractional, possibly negative).
    """
    graph = check_graph(graph)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    jd = joint_degree(graph)
    d_max = int(graph.degrees().max(initial=0))
    noisy = laplace_mechanism(
        jd.counts,
        sensitivity=dk_pa_sensitivity(d_max),
        epsilon=epsilon,
        rng=rng,
        ledger=ledger,
        label="dK-2 tuples, 4 d_max + 1 (sala2011 Lemma 1)",
    )
    return JointDegree(jd.low, jd.high, noisy)
