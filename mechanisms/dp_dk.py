"""DP-dK (wang2013), at the 1K level PGB runs (its DP-1K.py): a noisy degree distribution and
a Havel-Hakimi graph built from it.

wang2013 perturbs the dK-series of a graph and generates from the noisy series: the 1K-series
(the degree distribution) with Laplace noise of global sensitivity 4, the 2K-series (joint
degree distribution) with noise calibrated to its smooth sensitivity. PGB's benchmark runs
the 1K variant only; so does :func:`dp_dk` (the 2K route of privpub is sala2011's
:mod:`privpub.mechanisms.pygmalion`).

Privacy. Adding or removing one edge changes two nodes' degrees by one each; each move
takes one node from one bin of the degree histogram to the next: L1 change at most 4, also
for degrees clipped at a bound D (a move between two clipped degrees changes nothing). The
histogram over the public domain ``0..D`` plus ``Lap(4/eps_h)`` per bin is eps_h-edge-DP.
The bound D is public: ``n - 1``, a given integer, or (default) the maximum degree plus
``Lap(1/eps_b)`` (sensitivity 1), rounded and clipped to ``[1, n - 1]``: eps_b-edge-DP.
Everything after (rounding, parity, node count, graph construction) reads the noisy
histogram only. Total eps_b + eps_h = epsilon.

Differences from PGB's DP-1K.py, and why:

- PGB's histogram runs over ``0..d_max`` with the graph's true maximum degree (a
  data-dependent domain, not paid for); here D is public or bought (``degree_bound``).
- PGB's graph has as many nodes as the noisy histogram counts (more or fewer than ``n``); a
  release here is on the input's ``n`` nodes: missing nodes are isolated (as PGB pads),
  surplus entries of the degree sequence are dropped uniformly at random. ``info`` keeps
  the noisy count (``noisy_nodes``).
- PGB calls ``networkx.havel_hakimi_graph``, which raises on a non-graphical sequence;
  :func:`havel_hakimi_edges` builds the same graph in O(n + m) and leaves the stubs that
  find no partner (``info["unplaced_stubs"]``). Its last-in first-out tie order is what
  makes the graph cliquish: a random tie order halves the average clustering.

References
----------
.. [WW13] Y. Wang, X. Wu. Preserving differential privacy in degree-correlation based graph
   generation. Transactions on Data Privacy 6(2), 2013, Sec 4 (private dK-graph models).
.. [PGB24] S. Liu, H. Du, Y. Cao, B. Yan, J. Liu, M. Yoshikawa. PGB: Benchmarking
   differentially private synthetic graph generation algorithms. arXiv 2408.02928.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.noise import laplace_mechanism
from privpub.registry import EDGE_DP, register_mechanism
from privpub.types import Graph, Kind, Release
from privpub.validation import check_epsilon, check_fraction, check_positive_int, check_rng

__all__ = [
    "HISTOGRAM_SENSITIVITY",
    "clipped_degree_histogram",
    "degree_sequence",
    "havel_hakimi_edges",
    "dp_dk",
]

#: L1 edge-sensitivity of the (clipped) degree histogram (wang2013 Sec 4; PGB's DP-1K.py).
HISTOGRAM_SENSITIVITY = 4.0


def clipped_degree_histogram(graph: Graph, bound: int) -> np.ndarray:
    """Number of nodes of degree ``k`` for ``k = 0..bound``, degrees above ``bound`` counted
    in the last bin."""
    deg = np.minimum(graph.degrees().astype(np.int64), bound)
    return np.bincount(deg, minlength=bound + 1).astype(float)


def degree_sequence(noisy_hist: np.ndarray) -> np.ndarray:
    """PGB's post-processing of a noisy histogram (DP-1K.py ``apply_laplace_noise`` and
    ``generate_graph_from_noised_distribution``): counts rounded and clipped at 0; an odd
    degree sum gets one more node of the smallest listed degree, and if still odd the
    first (smallest) entry one more stub. Returns the ascending degree sequence."""
    counts = np.maximum(0, np.rint(np.asarray(noisy_hist, dtype=float))).astype(np.int64)
    degrees = np.arange(counts.size, dtype=np.int64)
    if int(counts @ degrees) % 2:
        listed = np.flatnonzero(counts)
        if listed.size:
            counts[listed[0]] += 1
    seq = np.repeat(degrees, counts)
    if seq.size and int(seq.sum()) % 2:
        seq[0] += 1
    return seq


@njit(cache=True)
def _havel_hakimi_lifo(seq, out_u, out_v):
    """networkx's ``havel_hakimi_graph`` loop on the positive entries of ``seq`` (labelled
    ``0..`` in order): per residual degree a stack; the node of largest residual degree
    joins the top of the next largest stacks, decremented partners pushed back after.
    Stubs that find no partner (non-graphical sequence) are left. Returns (edges written,
    stubs left)."""
    top = 0
    for d in seq:
        top = max(top, d)
    head = np.full(top + 1, -1, np.int64)
    nxt = np.full(seq.size, -1, np.int64)
    active = 0
    label = 0
    for d in seq:
        if d > 0:
            nxt[label] = head[d]
            head[d] = label
            active += 1
            label += 1
    mod_deg = np.empty(top + 1, np.int64)
    mod_node = np.empty(top + 1, np.int64)
    written = 0
    left = 0
    dmax = top
    while active > 0:
        while head[dmax] < 0:
            dmax -= 1
        source = head[dmax]
        head[dmax] = nxt[source]
        active -= 1
        k = dmax
        n_mod = 0
        for i in range(dmax):
            while k > 0 and head[k] < 0:
                k -= 1
            if k == 0:
                left += dmax - i
                break
            target = head[k]
            head[k] = nxt[target]
            active -= 1
            out_u[written] = source
            out_v[written] = target
            written += 1
            if k > 1:
                mod_deg[n_mod] = k - 1
                mod_node[n_mod] = target
                n_mod += 1
        for i in range(n_mod):
            d = mod_deg[i]
            nxt[mod_node[i]] = head[d]
            head[d] = mod_node[i]
            active += 1
    return written, left


def havel_hakimi_edges(seq) -> tuple[np.ndarray, int]:
    """Havel-Hakimi on the degree sequence ``seq`` (node ``i`` wants ``seq[i]`` edges) as
    ``networkx.havel_hakimi_graph`` (PGB's construction) runs it: the same edges for a
    graphical sequence, in O(n + m). Each step joins the node of largest residual degree to
    nodes of the next largest ones, ties broken last-in first-out (a node just decremented
    is picked first among equals: the cliquish, highly clustered graphs PGB reports). A
    non-graphical sequence, on which networkx raises, keeps the stubs that find no partner
    unmatched. Returns the edges ``(E, 2)`` and the number of unmatched stubs."""
    seq = np.asarray(seq, dtype=np.int64)
    if seq.size and (seq.min() < 0 or seq.sum() % 2):
        raise PrivpubError("a degree sequence needs entries >= 0 and an even sum")
    total = int(seq.sum()) // 2
    u = np.empty(total, np.int64)
    v = np.empty(total, np.int64)
    written, left = _havel_hakimi_lifo(seq, u, v) if total else (0, 0)
    nodes = np.flatnonzero(seq > 0)  # networkx labels the positive entries 0, 1, ...
    edges = np.column_stack([nodes[u[:written]], nodes[v[:written]]])
    return edges, int(seq.sum() - 2 * written)


def _bound(graph: Graph, degree_bound, eps_b, rng, ledger) -> int:
    n = graph.n_nodes
    if degree_bound == "noisy_max":
        dmax = float(graph.degrees().max()) if n else 0.0
        noisy = float(laplace_mechanism(
            dmax, sensitivity=1.0, epsilon=eps_b, rng=rng, ledger=ledger,
            label="DP-dK: noisy maximum degree (the histogram's domain)"))
        return int(np.clip(np.rint(noisy), 1, n - 1))
    if degree_bound == "n_minus_1":
        return n - 1
    if isinstance(degree_bound, str):
        raise PrivpubError(
            f"degree_bound must be 'noisy_max', 'n_minus_1' or an integer, got {degree_bound!r}")
    return min(check_positive_int(degree_bound, "degree_bound"), n - 1)


@register_mechanism(
    "dp_dk",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=EDGE_DP,
    paper="wang2013",
    source="Sec 4 (the private 1K-graph model, as PGB's DP-1K.py runs it)",
    audit={"configurations": [{}, {"degree_bound": "n_minus_1"}], "cost_ms": 3},
)
def dp_dk(
    graph: Graph,
    *,
    epsilon: float,
    degree_bound="noisy_max",
    bound_fraction: float = 0.1,
    max_edges: int = 10_000_000,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """DP-dK at the 1K level (wang2013 Sec 4; PGB's DP-1K): the degree histogram plus
    ``Lap(4/eps)`` per bin, PGB's rounding, a Havel-Hakimi graph on the input's nodes.

    Parameters
    ----------
    graph : Graph
    epsilon : float
        Total budget, > 0.
    degree_bound : "noisy_max", "n_minus_1" or int
        The histogram's public domain ``0..D`` (degrees above D counted in bin D).
        ``"noisy_max"``: the maximum degree plus ``Lap(1/eps_b)``, closest to PGB's true
        ``d_max``; ``"n_minus_1"``: every possible degree (each empty bin adds about
        ``2/eps`` phantom nodes: far more edges on large graphs).
    bound_fraction : float
        Share eps_b / epsilon spent on the noisy maximum degree (``"noisy_max"`` only).
    max_edges : int
        A noisy degree sequence asking for more edges is not built
        (:class:`~privpub.errors.NotApplicableError`; the test reads the noisy release only).
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional

    Returns
    -------
    Release
        The graph; ``info``: ``degree_bound`` (D), ``noisy_nodes`` (entries of the noisy
        degree sequence), ``unplaced_stubs`` (Havel-Hakimi leftovers).
    """
    if not isinstance(graph, Graph):
        raise PrivpubError(f"DP-dK needs a Graph, got {type(graph).__name__}")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    max_edges = check_positive_int(max_edges, "max_edges")
    n = graph.n_nodes
    if n < 2:
        raise NotApplicableError(f"DP-dK needs at least 2 nodes, the graph has {n}")
    if degree_bound == "noisy_max":
        eps_b = check_fraction(bound_fraction, "bound_fraction") * epsilon
    else:
        eps_b = 0.0
    bound = _bound(graph, degree_bound, eps_b, rng, ledger)
    noisy = laplace_mechanism(
        clipped_degree_histogram(graph, bound), sensitivity=HISTOGRAM_SENSITIVITY,
        epsilon=epsilon - eps_b, rng=rng, ledger=ledger,
        label=f"DP-dK: degree histogram over 0..{bound}, Lap(4/eps) per bin")
    seq = degree_sequence(noisy)
    noisy_nodes = seq.size
    if seq.size > n:
        seq = np.sort(seq[rng.permutation(seq.size)[:n]])
    seq = np.concatenate([np.zeros(n - seq.size, np.int64), seq])
    seq = np.minimum(seq, n - 1)
    if int(seq.sum()) % 2:
        seq[np.argmin(seq)] += 1
    if seq.sum() // 2 > max_edges:
        raise NotApplicableError(
            f"the noisy degree sequence asks for {seq.sum() // 2} edges, more than "
            f"max_edges={max_edges}: not built")
    edges, unplaced = havel_hakimi_edges(seq)
    perm = rng.permutation(n)
    out = Graph.from_edges(perm[edges], n, name=f"dp_dk({graph.name})")
    info = {"degree_bound": float(bound), "noisy_nodes": float(noisy_nodes),
            "unplaced_stubs": float(unplaced)}
    return Release(out, info)
