"""RPS for degree sequences under node-DP (qardaji2012 Sec 5, Figs 4-5): ``rps_degree_sequence``
and its histogram form ``rps_degree_histogram``.

The sorted degree sequence of a graph with ``n`` nodes and degrees in ``[0, Lambda]`` is
partitioned on the integer axis ``[0, Lambda]`` by the exponential mechanism with Eq (4)
down to depth 15 (no noisy-count stop); each leaf region ``[a, b]`` gets a noisy count and
its lower end ``a``, and the counts become a sorted sequence of exactly ``n`` degrees (Sec
5.1). Neighbours: one node's edges removed, ``n`` kept. The leaf counts' smooth sensitivity
(our derivation: :func:`local_sensitivity_bound`, :func:`smooth_sensitivity`), why the
paper's per-region accounting is not node-DP and what ``accounting="strict"`` changes are
in docs/design.md, "qardaji2012: RPS"; the registered caveat (:data:`CAVEAT`) says it in
one paragraph.

References
----------
.. [QL12] W. Qardaji, N. Li. Recursive Partitioning and Summarization: A Practical
   Framework for Differentially Private Data Publishing. ASIACCS 2012. Sec 5, Eq (4),
   Figs 4-5.
.. [NRS07] K. Nissim, S. Raskhodnikova, A. Smith. Smooth sensitivity and sampling in
   private data analysis. STOC 2007.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.mechanisms.rps.budget import PathBudget
from privpub.mechanisms.rps.checks import check_graph, check_option, check_real
from privpub.mechanisms.rps.framework import RPSTree, rps
from privpub.mechanisms.rps.partition import BoxPartition, BoxRegion
from privpub.mechanisms.rps.quality import (
    DegreeBalance,
    degree_quality_level_sensitivity,
    degree_quality_sensitivity,
)
from privpub.noise import heavy_tailed_noise, laplace_mechanism
from privpub.registry import NODE_DP, register_mechanism
from privpub.types import DegreeHistogram, DegreeSequence, Graph, Kind, Release
from privpub.validation import check_depth, check_epsilon, check_rng

__all__ = [
    "rps_degree_sequence",
    "rps_degree_histogram",
    "DEGREE_BOUNDS",
    "ACCOUNTING",
    "CAVEAT",
    "CAVEAT_SUMMARY",
    "AUDITED",
    "caveat_for",
    "boundary_degrees",
    "degree_prefix",
    "window_count",
    "local_sensitivity_bound",
    "smooth_sensitivity",
    "SmoothLeafCount",
    "StrictLeafCount",
    "allocate",
    "sorted_degrees",
    "partition_calibration",
    "leaf_count_summary",
    "degree_tree",
    "lower_bound_sequence",
]

DEGREE_BOUNDS = ("max_degree", "n_minus_1")
ACCOUNTING = ("paper", "strict")

CAVEAT = (
    "Node-DP with public n and public degree bound Lambda (neighbours: one node's edges "
    "removed, qardaji2012 Sec 5.1). degree_bound='max_degree' (default, Figs 4a/5a) treats "
    "the graph's own maximum degree as public: data-dependent. accounting='paper' (default) "
    "composes the per-region queries in parallel as the paper does, but one node moves up "
    "to Lambda+1 degrees lying in different regions, so regions are not disjoint under node "
    "neighbours: each query is DP at its own budget, the whole release is not shown to be "
    "epsilon-DP (partition levels cost up to 2x, leaf counts up to #leaves x their budget). "
    "accounting='strict' is epsilon-node-DP given public n and Lambda."
)
#: :data:`CAVEAT` in one line (the README's caveat table).
CAVEAT_SUMMARY = (
    "the paper's per-region accounting fails under node neighbours (a 13-node witness is a "
    "test); `accounting=strict` with `degree_bound=n_minus_1` is proven and carries none"
)
#: The configurations the audit runs: every degree bound under either accounting.
AUDITED = [{"degree_bound": b, "accounting": a} for a in ACCOUNTING for b in DEGREE_BOUNDS]


def caveat_for(params: dict) -> str | None:
    """The caveat of a call (stored with its rows): none for ``accounting='strict'`` with
    the public bound ``n - 1``; the data-dependent Lambda or the paper's accounting
    otherwise (:data:`CAVEAT`)."""
    if params.get("accounting") == "strict" and params.get("degree_bound") == "n_minus_1":
        return None
    return CAVEAT


# --------------------------------------------------------------------------- sensitivity
def boundary_degrees(a: int, b: int, degree_bound: int) -> list[int]:
    """The degrees ``B`` whose nodes can move a leaf count of ``[a, b]`` (docs/design.md):
    ``a - 1, a`` if ``a >= 1`` and ``b, b + 1`` if ``b < Lambda``."""
    out = []
    if a >= 1:
        out += [a - 1, a]
    if b < degree_bound:
        out += [b, b + 1]
    return out


def degree_prefix(hist: np.ndarray) -> np.ndarray:
    """``prefix[x]`` = number of nodes of degree < x, for x = 0 .. len(hist)."""
    return np.concatenate([[0], np.cumsum(hist)]).astype(np.int64)


@njit(cache=True)
def window_count(prefix, x, t, top):
    lo = x - t
    if lo < 0:
        lo = 0
    hi = x + t
    if hi > top:
        hi = top
    if lo > hi:
        return 0
    return prefix[hi + 1] - prefix[lo]


@njit(cache=True)
def _bound_at(prefix, a, b, lam, t):
    top = prefix.size - 2
    best = -1
    if a >= 1:
        w = max(window_count(prefix, a - 1, t, top), window_count(prefix, a, t, top))
        best = max(best, w)
    if b < lam:
        w = max(window_count(prefix, b, t, top), window_count(prefix, b + 1, t, top))
        best = max(best, w)
    if best < 0:
        return 0.0
    return 1.0 + min(lam, t + best)


@njit(cache=True)
def _smooth(prefix, a_arr, b_arr, lam, beta_arr):
    out = np.empty(a_arr.size)
    for i in range(a_arr.size):
        a = a_arr[i]
        b = b_arr[i]
        beta = beta_arr[i]
        if a < 1 and b >= lam:
            out[i] = 1.0  # R = [0, Lambda]: the count is n, LS = 0; 1 is a smooth bound
            continue
        best = 0.0
        t = 0
        while True:
            bound = _bound_at(prefix, a, b, lam, t)
            value = math.exp(-beta * t) * bound
            if value > best:
                best = value
            if bound >= lam + 1.0:  # saturated: later terms only shrink
                break
            if math.exp(-beta * (t + 1)) * (lam + 1.0) <= best:
                break
            t += 1
        out[i] = best
    return out


def local_sensitivity_bound(hist, a: int, b: int, degree_bound: int, t: int = 0) -> float:
    """``A_t``: an upper bound on the local sensitivity of the count of degrees in
    ``[a, b]`` at every graph within ``t`` node steps of a graph with degree histogram
    ``hist`` (``hist[x]`` = nodes of degree ``x``, ``x <= Lambda``); 0 if ``[a, b]`` is the
    whole range. See docs/design.md, "qardaji2012: RPS"."""
    hist = _full_hist(hist, degree_bound)
    return float(_bound_at(degree_prefix(hist), int(a), int(b), int(degree_bound), int(t)))


def smooth_sensitivity(hist, a, b, degree_bound: int, beta) -> np.ndarray:
    """The beta-smooth upper bound ``S = max_t exp(-beta t) A_t`` on the local sensitivity
    of the leaf counts of regions ``[a_i, b_i]`` (arrays; ``beta`` scalar or per region)."""
    hist = _full_hist(hist, degree_bound)
    a = np.atleast_1d(np.asarray(a, dtype=np.int64))
    b = np.atleast_1d(np.asarray(b, dtype=np.int64))
    beta = np.broadcast_to(np.asarray(beta, dtype=float), a.shape).copy()
    if np.any(beta <= 0) or not np.all(np.isfinite(beta)):
        raise PrivpubError("beta must be finite and > 0")
    return _smooth(degree_prefix(hist), a, b, int(degree_bound), beta)


def _full_hist(hist, degree_bound: int) -> np.ndarray:
    hist = np.asarray(hist, dtype=np.int64)
    if hist.size > degree_bound + 1 and hist[degree_bound + 1 :].any():
        raise PrivpubError("a degree exceeds the degree bound Lambda")
    out = np.zeros(degree_bound + 1, dtype=np.int64)
    out[: min(hist.size, degree_bound + 1)] = hist[: degree_bound + 1]
    return out


# --------------------------------------------------------------------------- leaf counts
class SmoothLeafCount:
    """``accounting="paper"``: the leaf count plus heavy-tailed noise scaled by its
    beta-smooth sensitivity (:func:`smooth_sensitivity`, ``beta = eps / (2 (gamma + 1))``;
    [NRS07] Lemma 2.6-2.7, :func:`privpub.noise.heavy_tailed_noise`). ``hist``: the degree
    histogram on ``0 .. degree_bound``."""

    def __init__(self, hist, degree_bound: int, gamma: float):
        self.prefix = degree_prefix(hist)
        self.lam = degree_bound
        self.gamma = gamma

    def __call__(self, node, *, epsilon, rng, ledger):
        a, b = int(node.region.lo[0]), int(node.region.hi[0])
        beta = epsilon / (2.0 * (self.gamma + 1.0))
        s = float(_smooth(self.prefix, np.array([a]), np.array([b]), self.lam, np.array([beta]))[0])
        ledger.spend(
            epsilon,
            label=f"leaf count: beta-smooth sensitivity (beta = eps/{2 * (self.gamma + 1):g}) "
            f"+ heavy-tailed noise (gamma = {self.gamma:g})",
            primitive="smooth_sensitivity",
        )
        noise = heavy_tailed_noise(
            scale=2.0 * (self.gamma + 1.0) * s / epsilon, gamma=self.gamma, rng=rng
        )
        return float(node.rows.size) + float(noise)


class StrictLeafCount:
    """``accounting="strict"``: one coordinate of the Laplace leaf-count vector (L1
    sensitivity ``2 (Lambda + 1)``), at ``epsilon_leaf`` whatever the path has left."""

    def __init__(self, degree_bound: int, epsilon_leaf: float):
        self.sensitivity = 2.0 * (degree_bound + 1)
        self.epsilon = epsilon_leaf

    def __call__(self, node, *, epsilon, rng, ledger):
        if self.epsilon > epsilon * (1 + 1e-9):
            raise PrivpubError("internal error: a path cannot pay its leaf count")
        return float(
            laplace_mechanism(
                float(node.rows.size),
                sensitivity=self.sensitivity,
                epsilon=self.epsilon,
                rng=rng,
                ledger=ledger,
                label="leaf count: coordinate of one Laplace vector over all leaves "
                "(node-DP L1 sensitivity 2(Lambda+1))",
            )
        )


def allocate(counts, n: int) -> np.ndarray:
    """Integer counts summing to ``n``, proportional to ``max(counts, 0)`` (largest
    remainders; equal shares if every count is <= 0). Post-processing."""
    w = np.clip(np.asarray(counts, dtype=float), 0.0, None)
    if w.size == 0:
        raise PrivpubError("no leaves to allocate to")
    if not w.sum() > 0:
        w = np.ones_like(w)
    quota = n * w / w.sum()
    base = np.floor(quota).astype(np.int64)
    left = int(n - base.sum())
    if left > 0:
        order = np.argsort(-(quota - base), kind="stable")
        base[order[:left]] += 1
    return base


# --------------------------------------------------------------------------- the tree
def sorted_degrees(graph: Graph, degree_bound: str) -> tuple[np.ndarray, int, np.ndarray]:
    """``(degrees, Lambda, hist)``: the sorted degree sequence, the degree bound (the
    maximum degree or ``n - 1``) and the degree histogram on ``0 .. Lambda``."""
    degrees = np.sort(graph.degrees())
    lam = int(degrees[-1]) if degree_bound == "max_degree" else graph.n_nodes - 1
    return degrees, lam, np.bincount(degrees, minlength=lam + 1)


def partition_calibration(accounting: str, degree_bound: int, n_nodes: int) -> tuple[float, str]:
    """``(sensitivity, ledger label)`` of the Eq (4) partition: per region (the paper's,
    :func:`~privpub.mechanisms.rps.quality.degree_quality_sensitivity`) or level-wide (strict)."""
    if accounting == "paper":
        return (degree_quality_sensitivity(degree_bound, n_nodes),
                "partition: exponential mechanism, Eq (4), per-region node-DP sensitivity")
    return (degree_quality_level_sensitivity(degree_bound, n_nodes),
            "partition: exponential mechanism, Eq (4), level-wide node-DP sensitivity")


def leaf_count_summary(accounting: str, *, hist, degree_bound: int, gamma: float,
                       epsilon_leaf: float) -> SmoothLeafCount | StrictLeafCount:
    """The leaf summary of ``accounting``: :class:`SmoothLeafCount` (paper) or
    :class:`StrictLeafCount` at ``epsilon_leaf`` (strict)."""
    if accounting == "paper":
        return SmoothLeafCount(hist, degree_bound, gamma)
    return StrictLeafCount(degree_bound, epsilon_leaf)


def degree_tree(degrees: np.ndarray, degree_bound: int, *, sensitivity: float, label: str,
                summarize, epsilon: float, depth: int, rng: np.random.Generator,
                ledger: PrivacyLedger, budget: PathBudget) -> RPSTree:
    """The RPS tree of a sorted degree sequence on the integer axis ``[0, Lambda]``: Eq (4)
    partitions with ``sensitivity`` (recorded as ``label``), no noisy-count stop, and
    ``summarize`` at every leaf (Sec 5.1)."""
    n = int(degrees.size)
    part = BoxPartition(
        [degrees.astype(float)],
        [True],
        quality=DegreeBalance(n, sensitivity, label),
        domain_lo=[0.0],
        domain_hi=[float(degree_bound)],
    )
    return rps(
        n,
        BoxRegion(np.array([0.0]), np.array([float(degree_bound)])),
        partition=part,
        summarize=summarize,
        epsilon=epsilon,
        depth=depth,
        rng=rng,
        ledger=ledger,
        budget=budget,
    )


def lower_bound_sequence(tree: RPSTree, n: int) -> np.ndarray:
    """``n`` degrees, non-decreasing: each leaf's lower end as many times as its share of
    the noisy counts (:func:`allocate`; Sec 5.1's lower-bound summary)."""
    counts = allocate([leaf.summary for leaf in tree.leaves], n)
    lower = np.array([leaf.region.lo[0] for leaf in tree.leaves])
    return np.repeat(lower, counts)


# --------------------------------------------------------------------------- mechanisms
#: What the two node-DP degree releases share in their registrations (the guarantee, the
#: caveat, the neighbours and the audit are the sequence's for both).
_DEGREE_FACTS = dict(input_kind=Kind.GRAPH, privacy=NODE_DP, paper="qardaji2012",
                     caveat=caveat_for, neighbourhood="node_rewire",
                     audit={"configurations": AUDITED, "cost_ms": 6},
                     caveat_summary=CAVEAT_SUMMARY)


@register_mechanism(
    "rps_degree_sequence",
    output_kind=Kind.DEGREE_SEQUENCE,
    source="Sec 5, Figs 4-5",
    **_DEGREE_FACTS,
    blind_spot={"accounting=paper degree_bound=n_minus_1": (
        "as rps_degree_histogram: the per-region accounting fails only for a node whose "
        "edges reach several well-filled regions, a pair the audit's library lacks and its "
        "random search did not find")},
)
def rps_degree_sequence(
    graph: Graph,
    *,
    epsilon: float,
    depth: int = 15,
    degree_bound: str = "max_degree",
    split: float = 0.5,
    accounting: str = "paper",
    gamma: float = 4.0,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """Node-DP degree sequence by RPS ([QL12] Sec 5.1): Eq (4) partitions, depth 15,
    smooth-sensitivity leaf counts, lower-bound summaries.

    Parameters
    ----------
    graph : Graph
    epsilon : float
        Privacy budget, > 0.
    depth : int, default 15
        Maximum depth (Sec 5.1: 15). No noisy-count stop; regions of one degree stop.
    degree_bound : {"max_degree", "n_minus_1"}, default "max_degree"
        ``Lambda``: the graph's maximum degree (Figs 4a/5a; data-dependent, treated as
        public) or ``n - 1`` (Figs 4b/5b).
    split : float in (0, 1], default 0.5
        Share of epsilon for the leaf counts (Sec 3.2).
    accounting : {"paper", "strict"}, default "paper"
        The paper's per-path composition (see :data:`CAVEAT`) or a calibration that is
        epsilon-node-DP.
    gamma : float >= 2, default 4.0
        Tail exponent of the heavy-tailed noise of ``accounting="paper"`` (2: Cauchy, the
        paper's example; 4: lighter tails and a finite variance).
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional

    Returns
    -------
    Release
        ``value``: :class:`DegreeSequence` of exactly ``n`` degrees, non-decreasing
        (:func:`lower_bound_sequence`). ``info``: ``leaves``, ``max_depth``,
        ``degree_bound`` (``Lambda``).

    Raises
    ------
    PrivpubError
        Bad epsilon, depth, split, gamma or an unknown option name.
    DataError
        Not a graph, or a graph without nodes.
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth(depth)
    check_option(degree_bound, DEGREE_BOUNDS, "degree_bound")
    check_option(accounting, ACCOUNTING, "accounting")
    gamma = check_real(gamma, "gamma", low=2.0)
    budget = PathBudget(split=split)
    rng = check_rng(rng)
    n = check_graph(graph, "rps_degree_sequence")
    ledger = ensure_ledger(ledger, epsilon)

    degrees, lam, hist = sorted_degrees(graph, degree_bound)
    sens, label = partition_calibration(accounting, lam, n)
    summarize = leaf_count_summary(accounting, hist=hist, degree_bound=lam, gamma=gamma,
                                   epsilon_leaf=budget.split * epsilon)
    tree = degree_tree(degrees, lam, sensitivity=sens, label=label, summarize=summarize,
                       epsilon=epsilon, depth=depth, rng=rng, ledger=ledger, budget=budget)
    info = {"leaves": len(tree.leaves), "max_depth": tree.max_depth, "degree_bound": lam}
    return Release(DegreeSequence(lower_bound_sequence(tree, n)), info)


@register_mechanism(
    "rps_degree_histogram",
    output_kind=Kind.DEGREE_HISTOGRAM,
    source="Sec 5 (the degree sequence, released as a histogram)",
    **_DEGREE_FACTS,
    blind_spot={"accounting=paper degree_bound=n_minus_1": (
        "the per-region accounting fails only for a node whose edges reach several regions "
        "that each hold enough nodes (the 13-node witness of mechanisms/rps/tests); the pair "
        "library has no such pair and the random search over 5-14 node graphs did not find "
        "one")},
)
def rps_degree_histogram(
    graph: Graph,
    *,
    epsilon: float,
    depth: int = 15,
    degree_bound: str = "max_degree",
    split: float = 0.5,
    accounting: str = "paper",
    gamma: float = 4.0,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """:func:`rps_degree_sequence` released as a degree histogram (post-processing).

    Beyond the papers: qardaji2012's node-DP degree-sequence RPS drawn in day2016's
    degree-distribution comparison (L1 / KS vs epsilon, Figs. 3-4), so both papers' node-DP
    methods are seen on the same graphs. The histogram counts the released degrees; the
    parameters, guarantee and caveat are those of :func:`rps_degree_sequence` (whose
    neighbours keep ``n``: qardaji2012 removes a node's edges, day2016 the node itself).
    """
    out = rps_degree_sequence(
        graph,
        epsilon=epsilon,
        depth=depth,
        degree_bound=degree_bound,
        split=split,
        accounting=accounting,
        gamma=gamma,
        rng=rng,
        ledger=ledger,
    )
    degrees = np.clip(np.rint(out.value.values), 0, None).astype(np.int64)
    return Release(DegreeHistogram(np.bincount(degrees).astype(float)), out.info)
