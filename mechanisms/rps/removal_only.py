"""qardaji2012's degree-sequence RPS under the paper's own sensitivity reading: NOT private.

Sec 5.1 of [QL12] justifies its leaf counts by "removing one node will most likely only
shift some of the node degrees in a region by 1 and remove, at most, one node completely.
Hence, in addition to the removed node, only the nodes with degrees at the region
boundaries will affect the count." Read literally (removal only, nodes *in* the region),
the local sensitivity of a leaf count ``c`` of ``R = [a, b]`` is 0 if ``c = 0`` and else
``1 + h_a`` (``h_a`` nodes of degree ``a >= 1``), smoothed over distances ``t`` with the
window counts of :mod:`privpub.mechanisms.rps.degree`; everything else is
:func:`privpub.mechanisms.rps.degree.rps_degree_sequence` with ``accounting="paper"``.

An empty region gets no noise, so its exact 0 is released and reveals that it is empty:
the reading is registered with privacy ``none`` and a caveat, and drawn beside the node-DP
series only to show what the paper's claim rests on. Why it is not DP, in full:
docs/design.md, "Fidelity: the paper's reading beside ours"; the numbers: the qardaji2012
Figs 4-5 notes.

References
----------
.. [QL12] W. Qardaji, N. Li. Recursive Partitioning and Summarization: A Practical
   Framework for Differentially Private Data Publishing. ASIACCS 2012. Sec 5.1.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.mechanisms.rps.budget import PathBudget
from privpub.mechanisms.rps.checks import check_graph, check_option, check_real
from privpub.mechanisms.rps.degree import (
    DEGREE_BOUNDS,
    degree_prefix,
    degree_tree,
    lower_bound_sequence,
    sorted_degrees,
    window_count,
)
from privpub.mechanisms.rps.quality import degree_quality_sensitivity
from privpub.noise import heavy_tailed_noise
from privpub.registry import NO_PRIVACY, register_mechanism
from privpub.types import DegreeSequence, Graph, Kind, Release
from privpub.validation import check_depth, check_epsilon, check_rng

__all__ = [
    "rps_degree_sequence_removal_only",
    "removal_only_smooth_sensitivity",
    "RemovalOnlyLeafCount",
    "CAVEAT",
]

CAVEAT = (
    "NOT private: qardaji2012 Sec 5.1's sensitivity reading (only the removed node and the "
    "region's nodes at its boundary affect a leaf count, node removal only), under which an "
    "empty region gets no noise and its exact 0 is released, revealing that it is empty. "
    "Drawn beside the node-DP series to show what the paper's claim rests on."
)

#: The ledger label of the partition (the paper's per-region sensitivity).
PARTITION_LABEL = "partition: exponential mechanism, Eq (4), per-region sensitivity"


@njit(cache=True)
def _smooth_removal_only(prefix, a_arr, c_arr, lam, beta):
    out = np.zeros(a_arr.size)
    top = prefix.size - 2
    for i in range(a_arr.size):
        if c_arr[i] == 0:
            continue  # the reading: an empty region has sensitivity 0 (no noise)
        a = a_arr[i]
        best = 0.0
        t = 0
        while True:
            w = window_count(prefix, a, t, top) if a >= 1 else 0
            bound = 1.0 + min(lam, t + w)
            value = math.exp(-beta * t) * bound
            if value > best:
                best = value
            if bound >= lam + 1.0 or math.exp(-beta * (t + 1)) * (lam + 1.0) <= best:
                break
            t += 1
        out[i] = best
    return out


def removal_only_smooth_sensitivity(hist, a, counts, degree_bound: int, beta: float):
    """The paper-reading smooth "sensitivity" of leaf counts of regions starting at ``a``
    with ``counts`` nodes (docs/design.md): 0 for an empty region. Not a valid bound."""
    hist = np.asarray(hist, dtype=np.int64)
    full = np.zeros(int(degree_bound) + 1, dtype=np.int64)
    full[: min(hist.size, full.size)] = hist[: full.size]
    a = np.atleast_1d(np.asarray(a, dtype=np.int64))
    counts = np.atleast_1d(np.asarray(counts, dtype=np.int64))
    return _smooth_removal_only(degree_prefix(full), a, counts, int(degree_bound), float(beta))


class RemovalOnlyLeafCount:
    """The leaf count plus heavy-tailed noise scaled by the removal-only smooth
    "sensitivity" (none for an empty region); ``hist``: the degree histogram on
    ``0 .. degree_bound``."""

    def __init__(self, hist, degree_bound: int, gamma: float):
        self.prefix = degree_prefix(hist)
        self.lam = degree_bound
        self.gamma = gamma

    def __call__(self, node, *, epsilon, rng, ledger):
        c = int(node.rows.size)
        beta = epsilon / (2.0 * (self.gamma + 1.0))
        s = float(
            _smooth_removal_only(
                self.prefix, np.array([int(node.region.lo[0])]), np.array([c]), self.lam, beta
            )[0]
        )
        ledger.spend(
            epsilon,
            label="leaf count: the paper's removal-only smooth sensitivity (NOT DP: empty "
            f"regions get none) + heavy-tailed noise (gamma = {self.gamma:g})",
            primitive="smooth_sensitivity",
        )
        if s == 0.0:
            return float(c)
        noise = heavy_tailed_noise(
            scale=2.0 * (self.gamma + 1.0) * s / epsilon, gamma=self.gamma, rng=rng
        )
        return float(c) + float(noise)


@register_mechanism(
    "rps_degree_sequence_removal_only",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_SEQUENCE,
    privacy=NO_PRIVACY,
    paper="qardaji2012",
    caveat=CAVEAT,
    caveat_summary="the paper's removal-only sensitivity reading, drawn beside ours as `RPS "
                   "[paper's removal-only sensitivity, not DP]`: an exact zero reveals an "
                   "empty region",
)
def rps_degree_sequence_removal_only(
    graph: Graph,
    *,
    epsilon: float,
    depth: int = 15,
    degree_bound: str = "max_degree",
    split: float = 0.5,
    gamma: float = 4.0,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """RPS degree sequence with the paper's removal-only leaf sensitivity ([QL12] Sec 5.1
    as written; NOT private, see the module docstring).

    Everything else is :func:`privpub.mechanisms.rps.degree.rps_degree_sequence` with
    ``accounting="paper"``: Eq (4) partitions with the per-region sensitivity, depth 15,
    ``split`` of the budget for the leaves, heavy-tailed noise with ``gamma``, lower-bound
    summaries, ``n`` degrees allocated over the noisy counts.

    Parameters
    ----------
    graph : Graph
    epsilon : float
        The budget the paper's accounting would spend, > 0 (the release is not private).
    depth : int, default 15
    degree_bound : {"max_degree", "n_minus_1"}, default "max_degree"
    split : float in (0, 1], default 0.5
    gamma : float >= 2, default 4.0
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional
        Records the spends the paper's accounting claims.

    Returns
    -------
    Release
        ``value``: :class:`DegreeSequence` of ``n`` degrees; ``info``: ``leaves``,
        ``empty_leaves`` (released exactly), ``max_depth``, ``degree_bound``.
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth(depth)
    check_option(degree_bound, DEGREE_BOUNDS, "degree_bound")
    gamma = check_real(gamma, "gamma", low=2.0)
    budget = PathBudget(split=split)
    rng = check_rng(rng)
    n = check_graph(graph, "rps_degree_sequence_removal_only")
    ledger = ensure_ledger(ledger, epsilon)
    degrees, lam, hist = sorted_degrees(graph, degree_bound)
    tree = degree_tree(degrees, lam, sensitivity=degree_quality_sensitivity(lam, n),
                       label=PARTITION_LABEL, summarize=RemovalOnlyLeafCount(hist, lam, gamma),
                       epsilon=epsilon, depth=depth, rng=rng, ledger=ledger, budget=budget)
    info = {
        "leaves": len(tree.leaves),
        "empty_leaves": int(sum(leaf.rows.size == 0 for leaf in tree.leaves)),
        "max_depth": tree.max_depth,
        "degree_bound": lam,
    }
    return Release(DegreeSequence(lower_bound_sequence(tree, n)), info)
