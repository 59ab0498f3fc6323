"""dK-PA (sala2011 Sec 3.2, Theorem 1) and the "Ideal" sensitivity-1 reference (Figs 3-4).

dK-PA perturbs every tuple of a graph's dK-2 series with Laplace noise of scale
``(4 d_max + 1) / epsilon``, where ``4 d_max + 1`` is Lemma 1's bound on how much one edge
changes the series (L1): adding the edge ``{u, v}`` between nodes of degrees ``d`` and
``d'`` moves each of the ``d + d'`` existing edges at ``u`` and ``v`` to a new cell (``2 (d +
d')`` unit changes) and adds one edge (``+1``). ``mechanisms/tests/test_pygmalion.py`` brute-forces
the bound over all graphs on up to 6 nodes and their edge neighbours.

What dK-PA guarantees as published
----------------------------------
The paper perturbs "each element of the dK-2-series", i.e. only the tuples present in the
graph, and reads ``d_max`` from the graph. Both are data-dependent:

- the *set of tuples* is released exactly (an edge neighbour usually has a tuple the graph
  lacks, so an observer of the support tells the two apart with certainty);
- ``4 d_max + 1`` with the graph's own ``d_max`` is not a global bound (a neighbour that
  raises ``d_max`` uses a larger scale).

So dK-PA is registered with a caveat; ``drc_honest`` (``mechanisms/pygmalion.py``) is the
variant whose guarantee holds.

The "Ideal" line of Figs 3-4 ("if we had a function with sensitivity of 1") is
``Lap(1 / epsilon)`` on the same tuples: a hypothetical yardstick, not a private mechanism
(privacy ``none``; it takes ``epsilon`` only to set its noise).

References
----------
.. [SZWZZ11] A. Sala et al. Sharing graphs using differentially private graph models.
   IMC 2011, Lemma 1, Theorem 1, Sec 3.3 and Fig 3.
"""

from __future__ import annotations

import numpy as np

from privpub.dk import check_graph, joint_degree
from privpub.ledger import PrivacyLedger
from privpub.noise import laplace_mechanism, laplace_noise
from privpub.registry import EDGE_DP, NO_PRIVACY, register_mechanism
from privpub.types import Graph, JointDegree, Kind
from privpub.validation import check_epsilon, check_rng

__all__ = ["dk_pa", "dk2_ideal", "dk_pa_sensitivity", "CAVEAT_DK_PA"]

CAVEAT_DK_PA = (
    "as published (sala2011 Thm 1) the noise is added only to the dK-2 tuples present in the "
    "graph, so which degree pairs occur is released exactly, and 4*d_max+1 uses the graph's "
    "own d_max (not a global bound): not epsilon-edge-DP. See drc_honest for a variant whose "
    "guarantee holds."
)


def dk_pa_sensitivity(d_max: int) -> float:
    """Lemma 1: one edge changes the dK-2 series by at most ``4 d_max + 1`` in L1."""
    return 4.0 * int(d_max) + 1.0


@register_mechanism(
    "dk_pa",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=EDGE_DP,
    paper="sala2011",
    role="baseline",
    caveat=CAVEAT_DK_PA,
)
def dk_pa(
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


@register_mechanism(
    "dk2_ideal",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=NO_PRIVACY,
    paper="sala2011",
    role="reference",
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
