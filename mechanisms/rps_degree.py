"""RPS for degree sequences under node-DP (qardaji2012 Sec 5, Figs 4-5).

The sorted degree sequence of a graph with ``n`` nodes and degrees in ``[0, Lambda]`` is
partitioned, as a one-dimensional dataset on the integer axis ``[0, Lambda]``, by the
exponential mechanism with the quality function of Eq (4) down to depth 15 (no noisy-count
stop: "the sensitivity of the count query here is no longer 1 [...] We therefore allow the
algorithm to continue until a maximum depth is reached"). Each leaf region ``[a, b]`` is
summarised by a noisy count and its lower end ``a`` (Sec 5.1: "we deterministically choose
the lower boundary of the domain for each region"), and the counts are post-processed into
a sorted sequence of exactly ``n`` degrees (Sec 5.1: "we release a sorted sequence of size
n"; ``n`` is public).

Neighbouring graphs
-------------------
Sec 5.1 models removing a node as: "the degree of the node itself will be set to 0, and
the degrees of all its neighbors will decrease by 1". So neighbours here are two graphs on
the same ``n`` nodes, one obtained from the other by deleting every edge at one node ``v``
(node removal with the node kept as an isolated placeholder, so ``n`` stays public), both
with maximum degree at most ``Lambda``. At most ``d_v + 1 <= Lambda + 1`` entries of the
degree sequence change: ``v``'s (to or from 0) and each neighbour's, by one.

Leaf counts: local and smooth sensitivity (``accounting="paper"``)
-----------------------------------------------------------------
Sec 5.1 releases each leaf count "by calculating the smooth sensitivity based on these
counts (and adding noise sampled from a fat tailed distribution, ex: Cauchy)", without a
formula. Ours, for the count ``c`` of nodes with degree in ``R = [a, b]``, with ``h_x`` the
number of nodes of degree ``x``:

*Local sensitivity.* Removing ``v``'s edges changes ``c`` by
``[0 in R] - [d_v in R] - X + Y`` where ``X`` = neighbours of ``v`` with degree ``a`` (they
leave ``R`` downwards; only if ``a >= 1``) and ``Y`` = neighbours with degree ``b + 1``
(they enter ``R``). Adding edges from an isolated ``v`` to a set ``S`` changes it by
``[|S| in R] - [0 in R] + X' - Y'`` with ``X'`` = members of ``S`` of degree ``a - 1``
(enter) and ``Y'`` = members of degree ``b`` (leave; only if ``b < Lambda``). ``X, Y, X',
Y'`` are at most ``Lambda``, so::

    LS(G) <= A0(G) = 1 + min(Lambda, max_{x in B} h_x),
    B = {a - 1, a  if a >= 1} u {b, b + 1  if b < Lambda}

and ``LS = 0`` when ``B`` is empty (``R = [0, Lambda]``: ``c = n``).

*At distance t.* After ``t`` neighbour steps at most ``t`` nodes were the changed node
(their degree can be anything); every other node's degree moved by at most one per step.
So ``h_x(G'') <= t + W_t(x)`` with ``W_t(x)`` = nodes of ``G`` with degree within ``t`` of
``x``, and ``LS(G'') <= A_t(G) = 1 + min(Lambda, t + max_{x in B} W_t(x))``. For neighbours
``G ~ G'``, ``W_t(x; G) <= W_{t+1}(x; G') + 1`` (only the changed node can leave the wider
window), hence ``A_t(G) <= A_{t+1}(G')``.

*Smooth bound.* ``S(G) = max_{t >= 0} exp(-beta t) A_t(G)`` (``S = 1`` if ``B`` is empty).
It dominates ``LS`` (``t = 0``) and ``exp(-beta t)`` times the local sensitivity of every
graph at distance ``t``, and ``S(G) <= e^beta S(G')`` for neighbours, by the usual argument
([NRS07] Def 2.1, Lemma 2.3): ``S(G) <= max_t e^{-beta t} A_{t+1}(G') <= e^beta S(G')``.
``A_t`` saturates at ``Lambda + 1`` (the global sensitivity) once ``t + W_t >= Lambda``, so
the maximum is over finitely many ``t``. The count is released as
``c + (2 (gamma + 1) S / eps) Z`` with ``Z`` of density proportional to
``1 / (1 + |z|^gamma)`` and ``beta = eps / (2 (gamma + 1))``, which is eps-DP for this one
count ([NRS07] Lemma 2.6-2.7; :func:`privpub.noise.heavy_tailed_noise`). Note that
``A_t >= 1 + min(Lambda, t)`` (``t`` changed nodes can all be put at a boundary degree), so
``S`` is at least about ``1 / (e beta)``: the noise scale grows like ``1 / eps^2``.

Accounting
----------
``accounting="paper"`` (default) is the paper's: per root-to-leaf path, half the budget
over the 15 partition levels (exponential mechanism with Eq (4)'s per-region sensitivity
``(2 (Lambda + 1) + 1) / (4n + 2)``, Sec 5.1) and all that is left for the leaf count, with
parallel composition across regions. **This composition does not hold under node
neighbours**: one node moves up to ``Lambda + 1`` entries, which may lie in *different*
regions, so the regions are not disjoint parts of the data. Each query is DP at its own
budget, but a node change can touch every region of a level (each partition level then
costs up to ``4 (Lambda + 1) / (2 Lambda + 3) < 2`` times its budget) and every leaf (the
counts and the smooth bounds of many leaves change). The mechanism is registered with a
caveat saying so.

``accounting="strict"`` is eps-node-DP (under the public ``n`` and ``Lambda``): every
region's exponential mechanism of one level is calibrated to the change summed over all
regions of that level, ``4 (Lambda + 1) / (4n + 2)``
(:func:`mechanisms.rps.degree_quality_level_sensitivity`), so a level costs its budget
once; the leaf counts form one vector with L1 sensitivity ``2 (Lambda + 1)`` (each moved
entry leaves one leaf and enters another), released with Laplace noise at
``split * eps``. Levels compose sequentially: ``(1 - split) eps + split eps = eps``. (With
that many leaves, per-leaf smooth sensitivity would need ``beta`` divided by the number of
leaves and is no better than the global bound, hence Laplace.)

How sharp is the partition? With Eq (4) and its sensitivity the exponential mechanism's
logit of a cut is ``eps_level * min(r1, r2) / (2 Lambda + 3)``. With ``Lambda = n - 1`` that
is at most ``eps_level / 4``: the cuts are close to uniform over the degree range and deep
empty regions are split down to depth 15, each leaf getting a noisy count, which is why
``degree_bound="n_minus_1"`` is far less accurate here than in the paper's Figs 4b/5b.
With ``Lambda = d_max << n`` the logits reach ``eps_level * n / (4 d_max)`` and the
partition follows the data.

``Lambda`` (``degree_bound``): ``"max_degree"`` uses the graph's own maximum degree, as
Figs 4a/5a assume "a priori knowledge of the maximum degree" -- a data-dependent value
treated as public; ``"n_minus_1"`` uses ``n - 1`` (Figs 4b/5b), which needs no assumption
beyond a public ``n``.

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

from mechanisms.rps import (
    BoxPartition,
    BoxRegion,
    DegreeBalance,
    PathBudget,
    check_option,
    degree_quality_level_sensitivity,
    degree_quality_sensitivity,
    rps,
)
from privpub.errors import DataError, PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import heavy_tailed_noise, laplace_mechanism
from privpub.registry import NODE_DP, register_mechanism
from privpub.types import DegreeHistogram, DegreeSequence, Graph, Kind, Release
from privpub.validation import check_depth, check_epsilon, check_rng

__all__ = [
    "rps_degree_sequence",
    "rps_degree_histogram",
    "DEGREE_BOUNDS",
    "ACCOUNTING",
    "boundary_degrees",
    "local_sensitivity_bound",
    "smooth_sensitivity",
    "allocate",
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


def caveat_for(params: dict) -> str | None:
    """The caveat of a call (stored with its rows): none for ``accounting='strict'`` with
    the public bound ``n - 1``; the data-dependent Lambda or the paper's accounting
    otherwise (:data:`CAVEAT`)."""
    if params.get("accounting") == "strict" and params.get("degree_bound") == "n_minus_1":
        return None
    return CAVEAT


# --------------------------------------------------------------------------- sensitivity
def boundary_degrees(a: int, b: int, degree_bound: int) -> list[int]:
    """The degrees ``B`` whose nodes can move a leaf count of ``[a, b]`` (module docstring):
    ``a - 1, a`` if ``a >= 1`` and ``b, b + 1`` if ``b < Lambda``."""
    out = []
    if a >= 1:
        out += [a - 1, a]
    if b < degree_bound:
        out += [b, b + 1]
    return out


def _prefix(hist: np.ndarray) -> np.ndarray:
    """``prefix[x]`` = number of nodes of degree < x, for x = 0 .. len(hist)."""
    return np.concatenate([[0], np.cumsum(hist)]).astype(np.int64)


@njit(cache=True)
def _window(prefix, x, t, top):
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
        w = max(_window(prefix, a - 1, t, top), _window(prefix, a, t, top))
        best = max(best, w)
    if b < lam:
        w = max(_window(prefix, b, t, top), _window(prefix, b + 1, t, top))
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
    whole range. See the module docstring."""
    hist = _full_hist(hist, degree_bound)
    return float(_bound_at(_prefix(hist), int(a), int(b), int(degree_bound), int(t)))


def smooth_sensitivity(hist, a, b, degree_bound: int, beta) -> np.ndarray:
    """The beta-smooth upper bound ``S = max_t exp(-beta t) A_t`` on the local sensitivity
    of the leaf counts of regions ``[a_i, b_i]`` (arrays; ``beta`` scalar or per region)."""
    hist = _full_hist(hist, degree_bound)
    a = np.atleast_1d(np.asarray(a, dtype=np.int64))
    b = np.atleast_1d(np.asarray(b, dtype=np.int64))
    beta = np.broadcast_to(np.asarray(beta, dtype=float), a.shape).copy()
    if np.any(beta <= 0) or not np.all(np.isfinite(beta)):
        raise PrivpubError("beta must be finite and > 0")
    return _smooth(_prefix(hist), a, b, int(degree_bound), beta)


def _full_hist(hist, degree_bound: int) -> np.ndarray:
    hist = np.asarray(hist, dtype=np.int64)
    if hist.size > degree_bound + 1 and hist[degree_bound + 1 :].any():
        raise PrivpubError("a degree exceeds the degree bound Lambda")
    out = np.zeros(degree_bound + 1, dtype=np.int64)
    out[: min(hist.size, degree_bound + 1)] = hist[: degree_bound + 1]
    return out


# --------------------------------------------------------------------------- summaries
class _SmoothLeafCount:
    """Paper: leaf count + heavy-tailed noise scaled by its smooth sensitivity."""

    def __init__(self, prefix, degree_bound, gamma):
        self.prefix = prefix
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


class _StrictLeafCount:
    """Strict: one coordinate of the Laplace leaf-count vector (L1 sensitivity 2(Lambda+1))."""

    def __init__(self, degree_bound, epsilon_leaf):
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


# --------------------------------------------------------------------------- mechanism
def _check_gamma(gamma) -> float:
    if (
        isinstance(gamma, bool)
        or not isinstance(gamma, (int, float, np.integer, np.floating))
        or not (gamma >= 2 and math.isfinite(gamma))
    ):
        raise PrivpubError(f"gamma must be a finite number >= 2, got {gamma!r}")
    return float(gamma)


@register_mechanism(
    "rps_degree_sequence",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_SEQUENCE,
    privacy=NODE_DP,
    paper="qardaji2012",
    caveat=caveat_for,
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
        The paper's per-path composition (see the caveat in the module docstring) or a
        calibration that is epsilon-node-DP.
    gamma : float >= 2, default 4.0
        Tail exponent of the heavy-tailed noise of ``accounting="paper"`` (2: Cauchy, the
        paper's example; 4: lighter tails and a finite variance).
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional

    Returns
    -------
    Release
        ``value``: :class:`DegreeSequence` of exactly ``n`` degrees, non-decreasing (each
        leaf's lower end, as many times as its share of the noisy counts). ``info``:
        ``leaves``, ``max_depth``, ``degree_bound`` (``Lambda``).

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
    gamma = _check_gamma(gamma)
    budget = PathBudget(split=split)
    rng = check_rng(rng)
    if not isinstance(graph, Graph):
        raise DataError(f"rps_degree_sequence needs a Graph, got {type(graph).__name__}")
    n = graph.n_nodes
    if n == 0:
        raise DataError("rps_degree_sequence needs a graph with at least one node")
    ledger = ensure_ledger(ledger, epsilon)

    degrees = np.sort(graph.degrees())
    lam = int(degrees[-1]) if degree_bound == "max_degree" else n - 1
    hist = np.bincount(degrees, minlength=lam + 1)
    if accounting == "paper":
        sens = degree_quality_sensitivity(lam, n)
        label = "partition: exponential mechanism, Eq (4), per-region node-DP sensitivity"
        summarize = _SmoothLeafCount(_prefix(hist), lam, gamma)
    else:
        sens = degree_quality_level_sensitivity(lam, n)
        label = "partition: exponential mechanism, Eq (4), level-wide node-DP sensitivity"
        summarize = _StrictLeafCount(lam, budget.split * epsilon)
    part = BoxPartition(
        [degrees.astype(float)],
        [True],
        quality=DegreeBalance(n, sens, label),
        domain_lo=[0.0],
        domain_hi=[float(lam)],
    )
    tree = rps(
        n,
        BoxRegion(np.array([0.0]), np.array([float(lam)])),
        partition=part,
        summarize=summarize,
        epsilon=epsilon,
        depth=depth,
        rng=rng,
        ledger=ledger,
        budget=budget,
    )
    counts = allocate([leaf.summary for leaf in tree.leaves], n)
    lower = np.array([leaf.region.lo[0] for leaf in tree.leaves])
    values = np.repeat(lower, counts)
    info = {"leaves": len(tree.leaves), "max_depth": tree.max_depth, "degree_bound": lam}
    return Release(DegreeSequence(values), info)


@register_mechanism(
    "rps_degree_histogram",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=NODE_DP,
    paper="qardaji2012",
    caveat=caveat_for,
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
