"""Egocentric betweenness centrality (EBC) and its sensitivities (farias2021 Sec 5.1).

EBC of a node ``c`` (Everett & Borgatti 2005; farias2021 Definition 5.1) is the betweenness
of ``c`` inside its ego network ``G[N_c + c]``::

    EBC(c) = sum over unordered pairs {u, v} of N_c of p_uv(c) / q_uv(c)

where ``q_uv(c)`` counts the geodesics between ``u`` and ``v`` in the ego network and
``p_uv(c)`` those through ``c``. Adjacent neighbours contribute 0 (their geodesic is the
edge); two non-adjacent neighbours are at distance 2, their geodesics are ``u - w - v`` for
``w = c`` and for every common neighbour ``w`` of ``u`` and ``v`` inside ``N_c``, so the pair
contributes ``1 / (1 + |N(u) & N(v) & N_c|)``. (A public implementation adds 1 per
non-adjacent pair, which overstates EBC whenever two neighbours share another neighbour.)

:func:`egocentric_betweenness` computes EBC for every node in one compiled pass. For each
centre ``c`` it lists, for every neighbour ``x``, the neighbours of ``x`` inside ``N_c``
(scanning the shorter of ``N(x)`` and ``N(c)``), then counts, for each neighbour ``u``, the
common neighbours it shares with every later ``v`` through those lists. The work is
``sum_c sum_{x in N_c} t(c, x)^2`` with ``t(c, x)`` the triangles on edge ``cx``, and the
memory ``O(max degree + max triangles at a node)``: every node of Github (37,700 nodes, max
degree 9,458) and DBLP (317,080 nodes) in seconds on one core (``benchmarks/bench_farias2021.py``).

Sensitivities under edge-DP (one edge added or removed):

- :func:`ebc_global_sensitivity`, Lemma 5.2: ``max(D (D - 1) / 4, D)`` for maximum degree
  ``D`` (assumed public, or a public bound).
- :func:`ebc_delta`, Definition 5.3: the admissible function
  ``delta(G, t, v) = max((d(v) + t)(d(v) + t - 1) / 4, d(v) + t)`` (Lemma 5.4).
- :func:`ebc_shift_penalty`, the closed form of ``sum_t (Delta - min(delta(t), Delta))``
  that the shifted local dampening mechanism needs (see :mod:`privpub.algorithms.dampening`).

References
----------
.. [EB05] M. Everett, S. P. Borgatti. Ego network betweenness. Social Networks 27(1), 2005.
.. [FBF+21] V. Farias et al. Local Dampening: Differential Privacy for Non-numeric Queries
   via Local Sensitivity. PVLDB 14(4), 2021. Definition 5.1, Lemma 5.2, Definition 5.3.
"""

from __future__ import annotations

import weakref

import numba
import numpy as np
from numba import njit, prange

from privpub.errors import PrivpubError
from privpub.types import Graph, Ranking
from privpub.validation import check_nonnegative_int

__all__ = [
    "egocentric_betweenness",
    "cached_ebc",
    "ebc_ranking",
    "ebc_global_sensitivity",
    "ebc_delta",
    "ebc_delta_profile",
    "ebc_shift_penalty",
    "degree_bound_of",
    "DEGREE_BOUNDS",
]

#: How the public maximum-degree bound ``D`` of Lemma 5.2 is obtained (see :func:`degree_bound_of`).
DEGREE_BOUNDS = ("max_degree", "n_minus_1")


# --------------------------------------------------------------------------- EBC
@njit(cache=True, nogil=True)
def _ebc_kernel(indptr, indices, out, first, step):  # pragma: no cover - compiled
    """EBC of the nodes ``first, first + step, ...`` (each node's value is computed alone,
    so any split of the nodes gives the same numbers)."""
    n = indptr.size - 1
    max_deg = 0
    for c in range(n):
        d = indptr[c + 1] - indptr[c]
        if d > max_deg:
            max_deg = d
    pos = np.full(n, -1, np.int64)  # local index of a node in N_c (or -1)
    cnt = np.zeros(max_deg + 1, np.int64)  # common neighbours of (u, v) for the current u
    touched = np.empty(max_deg + 1, np.int64)
    adj_mark = np.full(max_deg + 1, -1, np.int64)
    lptr = np.zeros(max_deg + 1, np.int64)
    buf = np.empty(16, np.int64)  # neighbours inside N_c of each neighbour (local ids)
    for c in range(first, n, step):
        start = indptr[c]
        d = indptr[c + 1] - start
        if d < 2:
            out[c] = 0.0
            continue
        for i in range(d):
            pos[indices[start + i]] = i
        # pass 1: L_x = N(x) & N_c for every neighbour x (sorted local ids)
        total = 0
        for i in range(d):
            x = indices[start + i]
            dx = indptr[x + 1] - indptr[x]
            lptr[i] = total
            if total + min(dx, d) > buf.size:
                grow = max(buf.size * 2, total + min(dx, d) + 16)
                nb = np.empty(grow, np.int64)
                nb[:total] = buf[:total]
                buf = nb
            if dx <= d:
                for k in range(indptr[x], indptr[x + 1]):
                    p = pos[indices[k]]
                    if p >= 0:
                        buf[total] = p
                        total += 1
            else:  # scan N_c, binary-search N(x)
                lo0 = indptr[x]
                hi0 = indptr[x + 1]
                for j in range(d):
                    y = indices[start + j]
                    lo = lo0
                    hi = hi0
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if indices[mid] < y:
                            lo = mid + 1
                        else:
                            hi = mid
                    if lo < hi0 and indices[lo] == y:
                        buf[total] = j
                        total += 1
        lptr[d] = total
        m_c = total // 2  # edges inside N_c
        # pass 2: for each u, count common neighbours with every v > u
        corr = 0.0
        for u in range(d):
            n_touched = 0
            for k in range(lptr[u], lptr[u + 1]):
                x = buf[k]
                adj_mark[x] = u
                # L_x is sorted: skip to the first v > u
                lo = lptr[x]
                hi = lptr[x + 1]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if buf[mid] <= u:
                        lo = mid + 1
                    else:
                        hi = mid
                for kk in range(lo, lptr[x + 1]):
                    v = buf[kk]
                    if cnt[v] == 0:
                        touched[n_touched] = v
                        n_touched += 1
                    cnt[v] += 1
            for q in range(n_touched):
                v = touched[q]
                if adj_mark[v] != u:  # non-adjacent pair with cnt[v] extra geodesics
                    corr += 1.0 / (1.0 + cnt[v]) - 1.0
                cnt[v] = 0
        out[c] = d * (d - 1) / 2.0 - m_c + corr
        for i in range(d):
            pos[indices[start + i]] = -1
            adj_mark[i] = -1


@njit(cache=True, parallel=True)
def _ebc_parallel(indptr, indices, out, n_parts):  # pragma: no cover - compiled
    """:func:`_ebc_kernel` on ``n_parts`` interleaved parts of the nodes, in parallel
    (interleaved, so the hubs of a graph whose ids follow degree are spread out)."""
    for part in prange(n_parts):
        _ebc_kernel(indptr, indices, out, part, n_parts)


def _csr(graph: Graph):
    if not isinstance(graph, Graph):
        raise PrivpubError(f"expected a privpub Graph, got {type(graph).__name__}")
    adj = graph.adjacency
    if not adj.has_sorted_indices:
        adj = adj.copy()
        adj.sort_indices()
    return adj.indptr, adj.indices  # int32 or int64: the kernels take either


def egocentric_betweenness(graph: Graph) -> np.ndarray:
    """EBC of every node (farias2021 Definition 5.1), as a float64 array.

    Equal to ``networkx.betweenness_centrality(networkx.ego_graph(G, v),
    normalized=False)[v]`` for every ``v`` (tested), computed for all nodes at once.

    Examples
    --------
    >>> import numpy as np
    >>> star = Graph.from_edges(np.array([[0, 1], [0, 2], [0, 3]]))
    >>> egocentric_betweenness(star).tolist()   # 3 pairs of leaves, each through 0 only
    [3.0, 0.0, 0.0, 0.0]
    """
    indptr, indices = _csr(graph)
    out = np.zeros(graph.n_nodes, dtype=np.float64)
    if graph.n_nodes:
        _ebc_parallel(indptr, indices, out, numba.get_num_threads())
    return out


_EBC_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def cached_ebc(graph: Graph) -> np.ndarray:
    """:func:`egocentric_betweenness`, cached per graph object (read-only array): the runner
    reuses one loaded graph for every repetition, its truth and every mechanism."""
    try:
        return _EBC_CACHE[graph]
    except KeyError:
        pass
    ebc = egocentric_betweenness(graph)
    ebc.setflags(write=False)
    _EBC_CACHE[graph] = ebc
    return ebc


def ebc_ranking(graph: Graph, ebc: np.ndarray | None = None) -> Ranking:
    """All nodes by EBC, highest first; ties broken by the smaller node id (stable)."""
    ebc = cached_ebc(graph) if ebc is None else np.asarray(ebc, dtype=float)
    return Ranking(np.argsort(-ebc, kind="stable"))


# --------------------------------------------------------------------------- sensitivity
def ebc_global_sensitivity(max_degree) -> float:
    """Lemma 5.2: ``max(D (D - 1) / 4, D)`` for a (public) maximum degree ``D``.

    >>> ebc_global_sensitivity(9458)   # Github (farias2021 Sec 6.1: 22,361,076.5)
    22361076.5
    """
    d = check_nonnegative_int(max_degree, "max_degree")
    return float(max(d * (d - 1) / 4.0, d))


def ebc_delta_profile(k) -> np.ndarray:
    """``phi(k) = max(k (k - 1) / 4, k)``: Definition 5.3 depends on ``d(v) + t`` only."""
    k = np.asarray(k, dtype=np.float64)
    return np.maximum(k * (k - 1) / 4.0, k)


def ebc_delta(degrees, t, *, global_sensitivity: float | None = None) -> np.ndarray:
    """Definition 5.3, ``delta^EBC(G, t, v) = phi(d(v) + t)``, for every node.

    With ``global_sensitivity`` the bounded version ``min(delta, Delta)`` (Lemma 3.5).
    ``t`` may be an int or an array of distances (result shape ``(len(t), n)``).
    """
    degrees = np.asarray(degrees, dtype=np.int64)
    t = np.asarray(t, dtype=np.int64)
    k = degrees[None, :] + t.reshape(-1, 1) if t.ndim else degrees + int(t)
    out = ebc_delta_profile(k)
    if global_sensitivity is not None:
        out = np.minimum(out, float(global_sensitivity))
    return out


def ebc_shift_penalty(degrees, degree_bound) -> np.ndarray:
    """``P(v) = sum_{t >= 0} (Delta - min(delta^EBC(G, t, v), Delta))`` in closed form.

    ``Delta = phi(D)`` (Lemma 5.2) for the public degree bound ``D``; ``delta`` reaches it at
    ``t = D - d(v)``, so ``P(v) = sum_{k = d(v)}^{D - 1} (phi(D) - phi(k))``, computed exactly
    in integers (``4 phi(k)`` is an integer). This is what the shifted local dampening
    mechanism subtracts from EBC
    (:func:`privpub.algorithms.dampening.shifted_local_dampening_scores`).
    """
    degrees = np.asarray(degrees, dtype=np.int64)
    big_d = check_nonnegative_int(degree_bound, "degree_bound")
    if degrees.size and degrees.max() > big_d:
        raise PrivpubError(
            f"a node has degree {int(degrees.max())} > degree bound {big_d}: the bound of "
            "Lemma 5.2 must hold for the graph"
        )
    k = np.arange(big_d + 1, dtype=np.int64)
    four_phi = np.maximum(k * (k - 1), 4 * k)  # 4 phi(k), exact
    cum = np.concatenate([[0], np.cumsum(four_phi)])  # cum[k] = sum_{j < k} 4 phi(j)
    four_delta = int(four_phi[big_d])
    four_pen = (big_d - degrees) * four_delta - (cum[big_d] - cum[degrees])
    return four_pen.astype(np.float64) / 4.0


def degree_bound_of(graph: Graph, degree_bound) -> int:
    """The public maximum-degree bound ``D`` of Lemma 5.2.

    ``"max_degree"``: the graph's maximum degree, as farias2021 does ("we assume the maximum
    degree is public information", Sec 5.1; read from the data, hence a caveat);
    ``"n_minus_1"``: ``|V| - 1``, which holds for every graph on the (public) node set; an
    int: a public bound, which must hold.
    """
    d_max = int(graph.degrees().max()) if graph.n_nodes else 0
    if isinstance(degree_bound, str):
        if degree_bound == "max_degree":
            return d_max
        if degree_bound == "n_minus_1":
            return max(graph.n_nodes - 1, 0)
        raise PrivpubError(
            f"degree_bound must be one of {DEGREE_BOUNDS} or an int, got {degree_bound!r}"
        )
    bound = check_nonnegative_int(degree_bound, "degree_bound")
    if bound < d_max:
        raise PrivpubError(f"degree_bound {bound} is below the graph's maximum degree {d_max}")
    return bound
