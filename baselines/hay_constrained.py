"""Hay et al.'s constrained inference on the sorted degree sequence, node-DP as in qardaji2012.

Hay, Li, Miklau and Jensen (ICDM 2009) release a graph's degree sequence as the query
``S(G)`` = the degrees in sorted order, answered with Laplace noise and then post-processed
by *constrained inference*: the closest (least squares) non-decreasing sequence to the noisy
answer, computed by isotonic regression. qardaji2012 Sec. 5 compares its node-DP RPS with
this method, calibrated for nodes: "the sensitivity of the query as a whole due to the
removal of one edge is 2. Analogously, the sensitivity due to removing up to Lambda edges
is 2 Lambda", where Lambda bounds the maximum degree: the true maximum degree (Figs. 4a,
5a, "a priori knowledge of the maximum degree") or ``n - 1`` (Figs. 4b, 5b).

Neighbouring graphs
-------------------
qardaji2012 Sec. 5.1 releases "a sorted sequence of size n" and models removing a node as
"the degree of the node itself will be set to 0, and the degrees of all its neighbors will
decrease by 1": the node set (and ``n``) is fixed and public, and two graphs are neighbours
when they differ only in the edges incident to one node. Over graphs of maximum degree at
most Lambda, the sorted sequence then changes by at most ``2 Lambda`` in L1: the node's own
degree changes by ``|d - d'|`` and ``|N Δ N'|`` neighbours change by one, in all at most
``2 max(d, d') <= 2 Lambda`` for the unsorted sequence, and sorting never increases the L1
distance. The bound is attained (isolating the centre of a star with Lambda leaves).
``baselines/tests/test_hay_constrained.py`` checks both facts by brute force.

References
----------
.. [HLMJ09] M. Hay, C. Li, G. Miklau, D. Jensen. Accurate estimation of the degree
   distribution of private networks. ICDM 2009 (sorted degree query, constrained inference).
.. [QL12] W. Qardaji, N. Li. Recursive partitioning and summarization. ASIACCS 2012, Sec. 5
   and 5.1, Figs. 4 and 5.
"""

from __future__ import annotations

import numpy as np

from privpub.errors import DataError, PrivpubError
from privpub.isotonic import isotonic_regression
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import laplace_mechanism
from privpub.registry import NODE_DP, register_mechanism
from privpub.types import DegreeSequence, Graph, Kind, Release
from privpub.validation import check_epsilon, check_rng

__all__ = ["DEGREE_BOUNDS", "hay_degree_sequence", "constrained_inference", "degree_bound_of"]

#: qardaji2012 Sec. 5.1: Lambda is the maximum degree, or n - 1.
DEGREE_BOUNDS = ("max_degree", "n_minus_1")

_CAVEAT = (
    "degree_bound='max_degree' (the default; qardaji2012 Figs. 4a/5a) takes Lambda, the "
    "sensitivity 2*Lambda and the clipping bound from the input graph's own maximum degree, "
    "which the paper assumes known a priori; read from the data it is not public, so "
    "epsilon-node-DP holds only among graphs of maximum degree <= that value. "
    "degree_bound='n_minus_1' (Figs. 4b/5b) is epsilon-node-DP for a public n (node "
    "removal = isolation, as in the paper)."
)


def degree_bound_of(graph: Graph, degree_bound: str) -> int:
    """Lambda: the graph's maximum degree, or ``n - 1`` (qardaji2012 Sec. 5.1)."""
    if degree_bound not in DEGREE_BOUNDS:
        raise PrivpubError(f"degree_bound must be one of {DEGREE_BOUNDS}, got {degree_bound!r}")
    if degree_bound == "n_minus_1":
        return max(graph.n_nodes - 1, 0)
    degrees = graph.degrees()
    return int(degrees.max()) if degrees.size else 0


def constrained_inference(noisy, *, upper: float | None = None, integer: bool = True):
    """Hay et al.'s post-processing of a noisy sorted degree sequence.

    The least-squares non-decreasing fit (isotonic regression by the pool-adjacent-violators
    algorithm, :func:`privpub.isotonic.isotonic_regression`; [HLMJ09]'s "constrained
    inference" for the sorted query), clipped to ``[0, upper]`` and rounded to integers.
    Clipping the isotonic fit is the least-squares fit under the added box constraint, and
    clipping and rounding are monotone, so the result stays non-decreasing.
    """
    fitted = isotonic_regression(np.asarray(noisy, dtype=float), increasing=True)
    fitted = np.clip(fitted, 0.0, np.inf if upper is None else float(upper))
    return np.rint(fitted) if integer else fitted


@register_mechanism(
    "hay_degree_sequence",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_SEQUENCE,
    privacy=NODE_DP,
    paper="qardaji2012",
    role="baseline",
    caveat=lambda params: None if params.get("degree_bound") == "n_minus_1" else _CAVEAT,
    neighbourhood="node_rewire",
    audit={"configurations": [{"degree_bound": "max_degree"}, {"degree_bound": "n_minus_1"}]},
    caveat_summary="with `degree_bound=max_degree`, Λ is read from the data; with `n_minus_1` "
                   "it is node-DP",
)
def hay_degree_sequence(
    graph: Graph,
    *,
    epsilon: float,
    degree_bound: str = "max_degree",
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """Laplace noise on the sorted degree sequence, then constrained inference [HLMJ09].

    The node-DP calibration of qardaji2012 Sec. 5: every sorted degree gets
    ``Lap(2 Lambda / epsilon)`` (L1 sensitivity ``2 Lambda`` of the sorted sequence when
    one node's edges change), then :func:`constrained_inference` (isotonic regression,
    clipped to ``[0, Lambda]``, rounded).

    Parameters
    ----------
    graph : Graph
        Input graph (``n`` nodes; ``n`` is public).
    epsilon : float
        Privacy budget, > 0, spent in one Laplace release.
    degree_bound : {"max_degree", "n_minus_1"}
        Lambda. ``"max_degree"``: the graph's maximum degree, as qardaji2012 Figs. 4a/5a
        (which assume it known a priori; see the caveat). ``"n_minus_1"``: ``n - 1``, the
        bound every graph on ``n`` nodes meets (Figs. 4b/5b). Lambda = 0 (no edges, or one
        node) is raised to 1 so that the noise scale is positive.
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional
        Records one Laplace spending of ``epsilon`` with sensitivity ``2 Lambda``.

    Returns
    -------
    Release
        ``value``: :class:`~privpub.types.DegreeSequence` of ``n`` non-decreasing integers in
        ``[0, Lambda]``; ``info``: ``{"degree_bound": Lambda, "sensitivity": 2 Lambda}``.

    Notes
    -----
    *Privacy.* With ``degree_bound="n_minus_1"`` the mechanism is epsilon-node-DP for
    neighbours that differ in one node's edges on a fixed, public node set (the paper's
    model of node removal; see the module docstring). With ``"max_degree"`` Lambda is read
    from the input, as in the paper's experiments; the guarantee then holds only relative
    to graphs whose maximum degree is at most that Lambda (registered caveat), and the
    clipping to ``[0, Lambda]`` itself reveals Lambda. qardaji2012 draws Hay et al.'s
    edge-DP version (sensitivity 2) in no figure, so it is not registered.
    """
    if not isinstance(graph, Graph):
        raise DataError(f"hay_degree_sequence needs a Graph, got {type(graph).__name__}")
    epsilon = check_epsilon(epsilon)
    lam = degree_bound_of(graph, degree_bound)
    rng = check_rng(rng)
    lam_eff = max(lam, 1)
    sensitivity = 2.0 * lam_eff
    ledger = ensure_ledger(ledger, epsilon)
    noisy = laplace_mechanism(
        graph.degree_sequence().values,
        sensitivity=sensitivity,
        epsilon=epsilon,
        rng=rng,
        ledger=ledger,
        label=f"sorted degree sequence (node-DP, Lambda={lam_eff} from {degree_bound})",
    )
    out = constrained_inference(noisy, upper=lam_eff)
    return Release(DegreeSequence(out), {"degree_bound": lam_eff, "sensitivity": sensitivity})
