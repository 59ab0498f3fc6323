"""Truncation (T): Kasiviswanathan et al. 2013's node-DP degree histogram, as day2016 runs it.

The projection (day2016 Sec 2.4; [KNRS13])
------------------------------------------
``T_D(G)`` removes every node of degree ``> D`` (with its edges) and keeps the subgraph
induced by the nodes of degree ``<= D``. :func:`projection_truncation` is day2016 Table 2's
**T**: the histogram of ``T_theta(G)`` over its surviving nodes, ``theta + 1`` bins.

The node-DP release (:func:`truncation`), formula by formula
------------------------------------------------------------
day2016 Sec 2.4 summarises [KNRS13]: "The first step is to compute ``S_T``, the smooth bound
on the number of nodes whose degrees may change because of the truncation. In order to keep
``S_T`` low, the cutoff threshold is randomized. The second step is to observe that changing
one node in a ``theta``-bounded graph can change the histogram by at most ``2 theta``. The
total sensitivity is the product of the two [...] it is suggested to add Cauchy noise with
parameter ``2 sqrt(2) theta S_T / eps``." Sec 4.1: "We set ``beta = eps ln(|V| / theta)`` as
suggested in [18]"; theta is a parameter, swept over powers of two (the figure keeps the best).

1. ``beta = eps * ln(|V| / theta)`` (day2016 Sec 4.1, verbatim; ``theta < |V|`` is required).
2. Random cutoff ``D = theta + ceil(ln(|V|) / beta) + U``, ``U`` uniform on ``{1, ..., theta}``:
   a data-independent draw (no privacy cost) that makes few nodes have degree near ``D`` in
   expectation. day2016 does not print the range; this is the range of [KNRS13]'s reduction
   as public re-implementations of it use it (KNRS13's text was not available here).
3. Smooth bound (``S_T``): adding or removing one node changes the truncation status only of
   that node and of its neighbours of degree ``D`` or ``D + 1``, so the node distance between
   ``T_D(G)`` and ``T_D(G')`` is at most ``1 + N_0(G)``, and at distance ``k`` from ``G`` at most
   ``U_k(G) = 1 + k + N_k(G)``, ``N_k(G) = #{v : D - k <= deg(v) <= D + k + 1}``. Since
   ``U_k(G') <= U_{k+1}(G)`` for node neighbours,
   ``S_T(G) = max_{k >= 0} exp(-beta k) U_k(G)`` is a ``beta``-smooth upper bound on that
   local sensitivity [NRS07, KNRS13]. (It is at most [KNRS13]'s closed form
   ``#{v : |deg(v) - D| <= ln(|V|)/beta} + 1/beta + 2``.)
4. Histogram ``h = hist(T_D(G))`` with ``D + 1`` bins. One node added to or removed from a
   ``D``-bounded graph changes it by at most ``2 D + 1`` in L1 (day2016 itself says
   ``2 theta + 1`` a paragraph later; its ``2 theta`` misses the node's own bin), so
   ``(2 D + 1) S_T`` bounds the smooth sensitivity of ``h``.
5. Release ``h + sqrt(2) (2 D + 1) S_T / eps * Z``, ``Z`` i.i.d. standard Cauchy per bin --
   day2016's ``2 sqrt(2) theta S_T / eps`` with ``2 theta`` replaced by ``2 D + 1``.
   The whole ``eps`` is spent in one ledger entry (sensitivity ``(2 D + 1) S_T``).

Privacy, honestly
-----------------
For ``d = D + 1`` bins of Cauchy noise with scale ``c S(G) / eps`` and a ``beta``-smooth
``S >= LS``, the log-density ratio between node neighbours is at most
``d beta`` (the scale changes by ``e^{+-beta}`` in every coordinate) plus ``eps / c`` (shift;
``|d/dz ln(1 + z^2)| <= 1``). So ``eps``-DP needs about ``(D + 1) beta + eps / sqrt(2) <= eps``,
i.e. ``beta <= 0.29 eps / (D + 1)``. The paper's ``beta = eps ln(|V|/theta) >= eps`` is far
larger: between neighbours where many nodes move into the window, ``S_T`` -- hence every
bin's noise scale -- can jump by a large factor, and the output density at the centre changes
by that factor to the power ``D + 1``. The mechanism is therefore registered with a caveat:
it reproduces the baseline of day2016's Fig. 3, not an ``eps``-node-DP algorithm. Choosing
the best theta in hindsight (Fig. 3) is a further, non-private, oracle step, and ``|V|`` is
treated as public.

References
----------
.. [KNRS13] S. P. Kasiviswanathan, K. Nissim, S. Raskhodnikova, A. Smith. Analyzing graphs
   with node differential privacy. TCC 2013 (the truncation reduction).
.. [NRS07] K. Nissim, S. Raskhodnikova, A. Smith. Smooth sensitivity and sampling in private
   data analysis. STOC 2007.
.. [DLL16] W.-Y. Day, N. Li, M. Lyu. Publishing Graph Degree Distribution with Node
   Differential Privacy. SIGMOD 2016. Sec 2.4, Sec 4.1, Table 2, Fig. 3.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from privpub.errors import DataError, NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import cauchy_noise, uniform_integers
from privpub.registry import NO_PRIVACY, NODE_DP, register_mechanism
from privpub.types import DegreeHistogram, Graph, Kind, Release
from privpub.validation import check_epsilon, check_positive_int, check_rng

__all__ = [
    "truncate",
    "truncated_degrees",
    "truncation_beta",
    "random_cutoff",
    "truncation_smooth_bound",
    "truncation_local_bound",
    "projection_truncation",
    "truncation",
]


def _check_graph(graph) -> Graph:
    if not isinstance(graph, Graph):
        raise DataError(f"Truncation needs a Graph, got {type(graph).__name__}")
    return graph


def truncate(graph: Graph, cutoff: int) -> Graph:
    """``T_cutoff(G)``: the subgraph induced by the nodes of degree ``<= cutoff`` (relabelled
    ``0..k-1`` in increasing order of their old ids)."""
    graph = _check_graph(graph)
    keep = np.flatnonzero(graph.degrees() <= int(cutoff))
    return graph.subgraph(keep)


@njit(cache=True)
def _truncated_degrees(indptr, indices, cutoff):
    n = indptr.size - 1
    low = np.empty(n, np.bool_)  # 1 byte a node: stays in cache for the random reads
    k = 0
    for x in range(n):
        low[x] = indptr[x + 1] - indptr[x] <= cutoff
        k += low[x]
    out = np.empty(k, np.int64)
    k = 0
    for x in range(n):
        if low[x]:
            d = 0
            for j in range(indptr[x], indptr[x + 1]):
                d += low[indices[j]]
            out[k] = d
            k += 1
    return out


def truncated_degrees(graph: Graph, cutoff: int) -> np.ndarray:
    """``truncate(graph, cutoff).degrees()`` without building the subgraph: for every node of
    degree ``<= cutoff`` (increasing id), its number of neighbours of degree ``<= cutoff``."""
    graph = _check_graph(graph)
    adj = graph.adjacency
    return _truncated_degrees(adj.indptr, adj.indices, int(cutoff))


def truncation_beta(epsilon: float, n_nodes: int, theta: int) -> float:
    """``beta = eps ln(|V| / theta)`` (day2016 Sec 4.1); needs ``theta < |V|``."""
    epsilon = check_epsilon(epsilon)
    theta = check_positive_int(theta, "theta")
    if n_nodes <= theta:
        raise NotApplicableError(
            f"truncation: beta = eps * ln(|V| / theta) (day2016 Sec 4.1) needs theta < |V|, "
            f"got theta={theta}, |V|={n_nodes}; sweep theta over powers of two below |V|"
        )
    return epsilon * math.log(n_nodes / theta)


def random_cutoff(theta: int, n_nodes: int, beta: float, rng: np.random.Generator) -> int:
    """``D = theta + ceil(ln(|V|) / beta) + U``, ``U`` uniform on ``{1..theta}`` (step 2; ``U = 1``
    under :func:`privpub.noise.noise_off`)."""
    offset = math.ceil(math.log(max(n_nodes, 1)) / beta)
    return int(theta + offset + uniform_integers(1, theta + 1, rng=rng))


def truncation_local_bound(degrees, cutoff: int, k) -> np.ndarray:
    """``U_k = 1 + k + #{v : cutoff - k <= deg(v) <= cutoff + k + 1}`` for an array of ``k``.

    An upper bound on the node distance between ``T_cutoff(G)`` and ``T_cutoff(G'')`` for any
    ``G''`` within node distance ``k`` of ``G`` (module docstring, step 3).
    """
    deg = np.asarray(degrees, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    top = int(deg.max(initial=0))
    cum = np.concatenate([[0], np.cumsum(np.bincount(deg, minlength=top + 1))])  # cum[x+1]
    hi = np.clip(cutoff + k + 1, -1, top)
    lo = np.clip(cutoff - k - 1, -1, top)
    return 1 + k + (cum[hi + 1] - cum[lo + 1])


def truncation_smooth_bound(degrees, cutoff: int, beta: float) -> float:
    """``S_T = max_{k >= 0} exp(-beta k) U_k`` (module docstring, step 3).

    Exact: ``U_k`` is evaluated for every ``k`` until the window covers every degree (then
    ``U_k = 1 + k + |V|``), and on that tail at the maximiser of ``exp(-beta k)(1 + k + |V|)``,
    ``k = 1/beta - 1 - |V|`` (rounded both ways), if it lies further out.
    """
    if not beta > 0:
        raise PrivpubError(f"the smoothing parameter beta must be > 0, got {beta}")
    deg = np.asarray(degrees, dtype=np.int64)
    n = deg.size
    top = int(deg.max(initial=0))
    saturate = max(int(cutoff) + 1, top - int(cutoff), 0)
    ks = np.arange(saturate + 1, dtype=np.int64)
    tail = 1.0 / beta - 1.0 - n
    if tail > saturate:
        ks = np.concatenate([ks, [math.floor(tail), math.ceil(tail)]]).astype(np.int64)
    values = np.exp(-beta * ks) * truncation_local_bound(deg, cutoff, ks)
    return float(values.max())


@register_mechanism(
    "projection_truncation",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=NO_PRIVACY,
    paper="day2016",
    role="baseline",
    source="Sec 2.4, Table 2",
    unranked="a noise-free projection (day2016 Sec 2.4), a building block without epsilon",
)
def projection_truncation(graph: Graph, *, theta: int, rng: np.random.Generator) -> Release:
    """T projection [KNRS13] (day2016 Table 2): histogram of the nodes of degree <= theta.

    Parameters
    ----------
    graph : Graph
    theta : int
        Degree bound, >= 1.
    rng : numpy.random.Generator
        Unused (deterministic); required by the registry.

    Returns
    -------
    Release
        ``DegreeHistogram`` of ``T_theta(G)`` (``theta + 1`` bins; the removed nodes are not
        counted) and ``diagnostics={"edge_fraction": |E(T_theta(G))| / |E|}`` (1 without
        edges).
    """
    graph = _check_graph(graph)
    theta = check_positive_int(theta, "theta")
    check_rng(rng)
    deg = truncated_degrees(graph, theta)
    hist = np.bincount(deg, minlength=theta + 1).astype(float)
    fraction = int(deg.sum()) // 2 / graph.n_edges if graph.n_edges else 1.0
    return Release(DegreeHistogram(hist), diagnostics={"edge_fraction": fraction})


@register_mechanism(
    "truncation",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=NODE_DP,
    paper="day2016",
    role="baseline",
    caveat=(
        "day2016's setting beta = eps*ln(|V|/theta) is too large for a (cutoff+1)-bin Cauchy "
        "release with a beta-smooth bound (that needs about (cutoff+1)*beta + eps/sqrt(2) <= "
        "eps), so eps-node-DP does not follow; Fig. 3's best-theta-in-hindsight is a "
        "non-private oracle choice; |V| is treated as public."
    ),
    source="Sec 2.4, 4.1 (Fig. 3)",
    audit={"configurations": [{"theta": 2}], "cost_ms": 2},
    caveat_summary="β = ε ln(|V|/θ) is too large for its Cauchy release (a test finds a pair "
                   "with log-ratio > 5ε); best θ in hindsight",
)
def truncation(
    graph: Graph,
    *,
    epsilon: float,
    theta: int,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """Truncation [KNRS13] as day2016 Fig. 3 runs it: random cutoff, smooth bound, Cauchy noise.

    Steps 1-5 of the module docstring: ``beta = eps ln(|V|/theta)``, random cutoff ``D``,
    ``S_T``, histogram of ``T_D(G)`` and Cauchy noise of scale
    ``sqrt(2) (2 D + 1) S_T / eps`` on each of its ``D + 1`` bins.

    Parameters
    ----------
    graph : Graph
    epsilon : float
        Budget, spent whole in one ledger entry.
    theta : int
        The degree parameter (``1 <= theta < |V|``); the cutoff ``D`` lies in
        ``theta + ceil(ln|V| / beta) + [1, theta]``.
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional

    Returns
    -------
    Release
        Noisy ``DegreeHistogram`` with ``D + 1`` bins (not clipped or normalised) and
        ``diagnostics={"cutoff": D, "smooth_bound": S_T, "beta": beta, "noise_scale":
        scale}`` (computed from the input; the paper publishes only the histogram).
    """
    graph = _check_graph(graph)
    epsilon = check_epsilon(epsilon)
    theta = check_positive_int(theta, "theta")
    rng = check_rng(rng)
    n = graph.n_nodes
    beta = truncation_beta(epsilon, n, theta)
    ledger = ensure_ledger(ledger, epsilon)
    cutoff = random_cutoff(theta, n, beta, rng)
    deg = graph.degrees()
    smooth = truncation_smooth_bound(deg, cutoff, beta)
    sensitivity = (2 * cutoff + 1) * smooth
    scale = math.sqrt(2.0) * sensitivity / epsilon
    hist = np.bincount(truncated_degrees(graph, cutoff), minlength=cutoff + 1).astype(float)
    ledger.spend(
        epsilon,
        label=f"truncated histogram (cutoff {cutoff}) + Cauchy noise, scale sqrt(2)(2D+1)S_T/eps",
        sensitivity=sensitivity,
        primitive="cauchy",
    )
    noisy = hist + cauchy_noise(scale=scale, rng=rng, size=hist.size)
    diagnostics = {"cutoff": cutoff, "smooth_bound": smooth, "beta": beta, "noise_scale": scale}
    return Release(DegreeHistogram(noisy), diagnostics=diagnostics)
