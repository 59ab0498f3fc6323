"""LDPGen (qin2017; PGB calls it DGG): a synthetic graph from users' locally private
degree vectors.

Every user holds her own adjacency list; the server never sees it. In each of two
rounds the server publishes a partition of the users into groups and every user reports
how many of her neighbours fall in each group, plus Laplace noise (qin2017 Sec 4):

1. **Phase I.** A uniformly random, balanced partition into ``k0`` groups; users report
   their noisy degree vectors with ``eps1``.
2. **Phase II.** From the phase-I reports the server picks ``k1`` (the paper's optimum
   per degree, Sec 4.3, averaged over the users' noisy degrees) and clusters the users
   with k-means on their noisy vectors; users report their noisy degree vectors over these
   ``k1`` clusters with ``eps2 = eps - eps1``.
3. **Phase III.** The server clusters the phase-II vectors (k-means, ``k1`` clusters),
   re-expresses every user's vector over the final clusters, and draws the graph with a
   Chung-Lu-like model between and within clusters. Server-side only: post-processing.

Privacy (edge-LDP, :data:`privpub.registry.EDGE_LDP`): two adjacency lists of one user
that differ in one entry give degree vectors over any fixed partition that differ by 1 in
one coordinate (L1 sensitivity 1), so a report with ``Lap(1/eps_r)`` per coordinate is
``eps_r``-LDP; the phase-II partition is a function of public phase-I reports, so the
two rounds compose sequentially (adaptively) to ``eps1 + eps2 = eps`` per user. Both
endpoints of an edge report it: on the whole graph LDPGen is ``2 eps`` edge-DP
(:func:`privpub.registry.implied_central_epsilon`), which is what ``privpub audit``
tests. Choices where the paper is ambiguous, and why PGB's DGG is not LDPGen:
docs/design.md (qin2017).

References
----------
.. [QYYKXR17] Z. Qin, T. Yu, Y. Yang, I. Khalil, X. Xiao, K. Ren. Generating synthetic
   decentralized social graphs with local differential privacy. CCS 2017, Sec 4.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import laplace_noise
from privpub.registry import EDGE_LDP, register_mechanism
from privpub.types import Graph, Kind, Release
from privpub.validation import check_epsilon, check_fraction, check_positive_int, check_rng

__all__ = ["ldpgen", "degree_vectors", "optimal_groups", "DEGREE_CUTOFF"]

#: Users whose noisy degree exceeds this do not enter the average of the per-degree optimal
#: group count (the optimum grows as degree squared: the heavy tail would ask for about
#: one group per two users; docs/design.md, qin2017).
DEGREE_CUTOFF = 50
#: Phase III computes the edge probabilities by blocks of about this many (user, cluster)
#: cells (32 MB of float64), not as one n x k matrix.
_BLOCK_CELLS = 1 << 22


def degree_vectors(adjacency: sp.csr_array, labels: np.ndarray, k: int) -> np.ndarray:
    """Every user's true degree vector over a partition: ``out[u, g]`` is the number of
    ``u``'s neighbours with label ``g`` (one sparse product, O(m + n k))."""
    n = adjacency.shape[0]
    indicator = sp.csr_array((np.ones(n), (np.arange(n), labels)), shape=(n, k))
    return np.asarray((adjacency @ indicator).toarray(), dtype=float)


def _noisy_reports(adjacency, labels, k, eps, rng, ledger, phase) -> np.ndarray:
    """Phase ``phase``'s reports: each user's degree vector plus Lap(1/eps) per group.
    One spend of ``eps``: every user's report is eps-LDP on her own list (sensitivity 1)."""
    ledger.spend(eps, label=f"phase {phase}: each user's degree vector over {k} groups "
                 "(local Laplace, L1 sensitivity 1 per user)", sensitivity=1.0,
                 primitive="laplace")
    reports = degree_vectors(adjacency, labels, k)
    reports += laplace_noise(sensitivity=1.0, epsilon=eps, rng=rng, size=reports.shape)
    return reports


def optimal_groups(noisy_degrees: np.ndarray, eps: float, n: int) -> int:
    """``k1`` from the phase-I reports (qin2017 Sec 4.3): per user of noisy degree ``d``
    (rounded, at least 1) the optimum ``a + (a^2 - 2 (1 + sqrt 5) a + 1) / eps`` with
    ``a = d / 2``, averaged over all users (those above :data:`DEGREE_CUTOFF` count as
    contributing 0), rounded up, clipped to ``[1, n]``. Reads public reports only."""
    d = np.maximum(np.rint(noisy_degrees), 1.0)
    a = d[d <= DEGREE_CUTOFF] / 2.0
    per_user = a + (a * a - 2.0 * (1.0 + math.sqrt(5.0)) * a + 1.0) / eps
    k = math.ceil(per_user.sum() / max(1, d.size))
    return int(min(max(k, 1), n))


def _kmeans(points: np.ndarray, k: int, rng) -> np.ndarray:
    from sklearn.cluster import KMeans

    if k <= 1:
        return np.zeros(points.shape[0], dtype=np.int64)
    seed = int(rng.integers(2**31 - 1))
    km = KMeans(n_clusters=k, n_init=1, max_iter=100, random_state=seed).fit(points)
    return km.labels_.astype(np.int64)


def _pair_bits(u: np.ndarray, v: np.ndarray, salt: np.uint64) -> np.ndarray:
    """A fair coin per unordered pair, the same for (u, v) and (v, u) (splitmix64 of the
    pair and a random salt)."""
    lo, hi = np.minimum(u, v).astype(np.uint64), np.maximum(u, v).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = lo * np.uint64(0x9E3779B97F4A7C15) + hi + salt
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (z & np.uint64(1)).astype(bool)


def _distinct_members(rows: np.ndarray, counts: np.ndarray, sizes: np.ndarray, rng):
    """For every row r, ``counts[r]`` distinct positions in ``range(sizes[r])``, uniformly:
    the first distinct values of an i.i.d. uniform stream per row (dense rows, more than
    a quarter of the population, by a partial permutation). Returns (row, position)."""
    dense = counts * 4 > sizes
    out_r, out_p = [], []
    for r in np.flatnonzero(dense):
        pos = rng.choice(int(sizes[r]), size=int(counts[r]), replace=False)
        out_r.append(np.full(pos.size, rows[r], dtype=np.int64))
        out_p.append(pos.astype(np.int64))
    idx = np.flatnonzero(~dense & (counts > 0))
    got_r, got_p = np.empty(0, np.int64), np.empty(0, np.int64)
    need = counts[idx].astype(np.int64)
    while need.sum() > 0:
        rr = np.repeat(idx, need)
        pp = np.floor(rng.random(rr.size) * sizes[rr]).astype(np.int64)
        got_r, got_p = np.concatenate([got_r, rr]), np.concatenate([got_p, pp])
        key = got_r * (int(sizes.max()) + 1) + got_p
        _, first = np.unique(key, return_index=True)
        first.sort()
        got_r, got_p = got_r[first], got_p[first]
        have = np.bincount(got_r, minlength=rows.size)[idx]
        need = counts[idx] - have
    out_r.append(rows[got_r])
    out_p.append(got_p)
    return np.concatenate(out_r), np.concatenate(out_p)


def _generate(vectors: np.ndarray, labels: np.ndarray, k: int, rng) -> np.ndarray:
    """Phase III's graph: for ``u`` in cluster ``i`` and ``v`` in cluster ``j``,
    ``p(u, v) = x[u, j] (S_j / |C_j|) / (D_ij + S_j)`` with ``x`` the users' vectors over
    the final clusters, ``S_j`` the sum of ``x[:, j]`` over all users and ``D_ij`` over
    ``C_i`` (qin2017 Sec 4.4). ``p`` is not symmetric: a fair coin per unordered pair picks
    the endpoint whose ``p`` decides it. Drawn per (user, cluster): a binomial count and
    that many distinct members, O(n k + m); no pair list is built."""
    sizes = np.bincount(labels, minlength=k).astype(np.int64)
    total = vectors.sum(axis=0)  # S_j
    within = np.zeros((k, k))
    np.add.at(within, labels, vectors)  # D_ij
    denom = within + total[None, :]
    rate = np.divide(total / np.maximum(sizes, 1), denom, out=np.zeros_like(denom),
                     where=denom > 0)  # k x k
    # p (n x k: u to any member of C_j) by blocks of rows: the binomials are drawn in the
    # same row-major order as from the whole matrix, with no n x k temporary
    n, empty = vectors.shape[0], sizes == 0
    step = max(1, _BLOCK_CELLS // max(k, 1))
    parts = []
    for lo in range(0, n, step):
        p = vectors[lo:lo + step] * rate[labels[lo:lo + step]]
        np.clip(p, 0.0, 1.0, out=p)
        p[:, empty] = 0.0
        users, clusters = np.nonzero(p > 0)
        counts = rng.binomial(sizes[clusters], p[users, clusters])
        keep = counts > 0
        parts.append((users[keep] + lo, clusters[keep], counts[keep]))
    users, clusters, counts = (np.concatenate(c) for c in zip(*parts, strict=True))
    rows_r, pos = _distinct_members(np.arange(users.size), counts, sizes[clusters], rng)
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    u = users[rows_r]
    v = order[starts[clusters[rows_r]] + pos]
    salt = np.uint64(int(rng.integers(2**63 - 1)))
    owner_is_low = _pair_bits(u, v, salt)
    keep = (u != v) & (owner_is_low == (u < v))
    u, v = u[keep], v[keep]
    return np.column_stack([np.minimum(u, v), np.maximum(u, v)]) if u.size else \
        np.empty((0, 2), dtype=np.int64)


@register_mechanism(
    "ldpgen",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=EDGE_LDP,
    paper="qin2017",
    source="Sec 4 (Phases I-III)",
    audit={"cost_ms": 8},
)
def ldpgen(
    graph: Graph,
    *,
    epsilon: float,
    initial_groups: int = 2,
    phase1_share: float = 0.5,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """An LDPGen synthetic graph (qin2017 Sec 4): two rounds of locally private degree
    vectors, k-means clustering, a Chung-Lu-like generator between clusters.

    Parameters
    ----------
    graph : Graph
        The users and their adjacency lists (at least 2 nodes); the node count is public.
    epsilon : float
        Each user's edge-LDP budget (the whole graph gets ``2 epsilon`` edge-DP).
    initial_groups : int
        ``k0``, the groups of the random phase-I partition (2 <= k0 <= nodes).
    phase1_share : float
        ``eps1 / epsilon`` in (0, 1); phase II gets the rest (the paper halves it).
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional
        Charged ``eps1`` and ``eps2`` (each user's report in each round).

    Returns
    -------
    Release
        The synthetic :class:`Graph` on the same nodes; ``info`` holds ``k1`` (a function of
        the phase-I reports, public in the protocol).
    """
    if not isinstance(graph, Graph):
        raise PrivpubError(f"ldpgen needs a Graph, got {type(graph).__name__}")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    n = graph.n_nodes
    if n < 2:
        raise PrivpubError(f"ldpgen needs at least 2 nodes, the graph has {n}")
    k0 = check_positive_int(initial_groups, "initial_groups")
    if not 2 <= k0 <= n:
        raise PrivpubError(f"initial_groups must be in [2, {n}] (the node count), got {k0}")
    share = check_fraction(phase1_share, "phase1_share")  # both phases get some budget
    ledger = ensure_ledger(ledger, epsilon)
    eps1, eps2 = epsilon * share, epsilon * (1.0 - share)
    adjacency = sp.csr_array(graph.adjacency)

    # Phase I: a random balanced partition, noisy degree vectors with eps1.
    xi0 = rng.permutation(n) % k0
    delta0 = _noisy_reports(adjacency, xi0, k0, eps1, rng, ledger, "I")
    k1 = optimal_groups(delta0.sum(axis=1), eps2, n)
    # Phase II: k-means on the phase-I reports, noisy degree vectors with eps2.
    xi1 = _kmeans(delta0, k1, rng)
    del delta0  # one n x k array at a time
    delta1 = _noisy_reports(adjacency, xi1, k1, eps2, rng, ledger, "II")
    # Phase III (server only): final clusters, vectors re-expressed over them, generation.
    xi2 = _kmeans(delta1, k1, rng)
    reported = np.maximum(np.rint(delta1, out=delta1), 0.0, out=delta1)  # in place
    overlap = np.zeros((k1, k1))
    np.add.at(overlap, (xi1, xi2), 1.0)
    overlap /= np.maximum(overlap.sum(axis=1, keepdims=True), 1.0)  # |xi1_j & xi2_i| / |xi1_j|
    vectors = reported @ overlap
    del delta1, reported
    edges = _generate(vectors, xi2, k1, rng)
    del vectors
    out = Graph.from_edges(edges, n, name=f"ldpgen({graph.name})")
    return Release(out, info={"k1": float(k1)})
