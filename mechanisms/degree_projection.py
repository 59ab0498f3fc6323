"""Graph projection by edge addition, pi_theta (day2016 Sec 3.1, Algorithm 1).

``pi_theta`` starts from the graph's nodes and no edges, walks the edges in a *stable*
order and keeps an edge whenever both endpoints still have degree ``< theta``. The result
is ``theta``-bounded and *maximal* (no further edge of ``G`` can be added), and for node
neighbours ``G ~ G'`` (Lemma 1 and Lemma 4)

- ``||hist(pi_theta(G)) - hist(pi_theta(G'))||_1 <= 2 theta + 1``
  (:func:`hist_sensitivity`), and
- ``||cumhist(pi_theta(G)) - cumhist(pi_theta(G'))||_1 <= theta + 1``
  (:func:`cumhist_sensitivity`),

because adding a node ``v+`` changes the projection along at most ``t <= theta`` chains,
each of which changes one other node's degree by one. Both bounds are checked by brute force
over all graphs on up to five nodes and all their node neighbours in
``mechanisms/tests/test_degree_projection.py``.

Edge orders (``order=``)
------------------------
``"lexicographic"``
    The edges ``(u, v)``, ``u < v``, in lexicographic order of node ids, the stable order of
    Sec 3.1 (``Graph.edges()`` order). It stays consistent when a node is added or removed
    with an order-preserving relabelling of the other ids, so it is stable for the node
    neighbours of a relabelled ``0..n-1`` graph too.
``"random"``
    A seeded random order for day2016 Fig 8: a 64-bit key is drawn from ``rng`` and every
    edge is sorted by a keyed hash (splitmix64) of its two node ids, ties broken
    lexicographically. For one key this is a fixed random order of *all* node pairs, hence
    stable between node neighbours that keep the ids of the common nodes (the new node
    getting a fresh id), and a (pseudo-)uniformly random order of any one graph's edges. It
    is not stable under relabelling of the ids (which changes the hashed ids), unlike the
    lexicographic order.

Speed
-----
One projection is one pass over the edges with projected degrees held as uint16 (a
4M-node degree array stays in cache): the lexicographic order walks the sorted CSR itself,
each row from its first neighbour above the row, without building an edge list; the random
order bucket-sorts the edges, packed as ``u << 32 | v``, by their hash (top bits, then
insertion within runs of about four), which is the order of a stable sort by hash of the
lexicographic list. :class:`ProjectionProfile` computes its rows when asked:
theta-CumulativeHistogram, theta-Constrained and theta-Histogram read two of them
(``Theta``'s for the quality, the chosen ``theta``'s for the release), so they cost two
passes. All rows, ``theta = 1..Theta`` (the grouped quality of (theta, Omega)-Histogram,
the oracles), come from one compiled sweep: an edge whose endpoints both have original
degree ``<= theta`` is always kept (neither endpoint can reach ``theta`` before its own last
edge), so pass ``theta`` walks only the edges with an endpoint of degree ``> theta`` -- in
their original order -- and adds the always-kept ones as counts: the total work is
``sum_e min(maxdeg(e), Theta)`` edge steps plus ``O(n)`` per ``theta``. See
``benchmarks/bench_day2016.py`` and ``benchmarks/bench_node_dp_large.py``.

Table 2
-------
:func:`projection_edge_addition` is the non-private projection registered for day2016
Table 2 (L1 error of the projected histogram and the fraction ``|E'|/|E|`` of edges kept).
Table 2 compares ``pi_theta`` "after removing the bin of theta". The reading adopted here is
that bin ``theta`` is *left out of the L1 sum*: with ``drop_theta_bin=True`` the release
carries the true count of degree ``theta`` in that bin, so the count-L1 against the true
histogram (metric ``l1_counts``) is ``sum_{d != theta} |h_d - h'_d|``. On Facebook (LCC,
lexicographic order) this gives 3194 / 1373 / 898 for ``theta = 16 / 64 / 128`` (paper:
3228 / 1313 / 801) with ``|E'|/|E| = 0.27 / 0.66 / 0.87`` (paper: 0.27 / 0.66 / 0.88). The
other readings are further from the paper at every ``theta``: setting the released bin to 0
(so the true nodes of degree ``theta`` count as errors) gives 3276 / 1386 / 903, keeping the
bin gives 5144 / 2032 / 1128.

References
----------
.. [DLL16] W.-Y. Day, N. Li, M. Lyu. Publishing Graph Degree Distribution with Node
   Differential Privacy. SIGMOD 2016. Sec 3.1, Algorithm 1, Lemmas 1 and 4, Sec 4.2,
   Table 2, Fig 8.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from privpub.cache import register_clear
from privpub.errors import DataError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.registry import NO_PRIVACY, register_mechanism
from privpub.types import DegreeHistogram, Graph, Kind, Release
from privpub.validation import check_positive_int, check_rng

__all__ = [
    "ORDERS",
    "MAX_THETA",
    "check_graph",
    "check_order",
    "check_theta",
    "hist_sensitivity",
    "cumhist_sensitivity",
    "edge_order",
    "project_edges",
    "projected_degrees",
    "project_edge_addition",
    "ProjectionProfile",
    "all_theta_histograms",
    "projection_profile",
    "projection_edge_addition",
    "Variant",
    "register_family",
]

#: Stable edge orders (see the module docstring).
ORDERS = ("lexicographic", "random")

#: Largest projection bound accepted (profiles hold ``Theta x (Theta + 1)`` counts and cost
#: ``O(Theta |E|)`` time).
MAX_THETA = 10_000

#: Projected degrees never exceed theta <= MAX_THETA, so they are held as uint16 (a 4M-node
#: degree array then stays in cache: Algorithm 1 is two random reads of it per edge).
_DEGREE = np.uint16
assert MAX_THETA < np.iinfo(_DEGREE).max


# --------------------------------------------------------------------------- validation
def check_graph(graph) -> Graph:
    """Return ``graph`` if it is a :class:`privpub.types.Graph`, else raise DataError."""
    if not isinstance(graph, Graph):
        raise DataError(
            f"day2016 mechanisms take a privpub Graph (privpub.types.Graph), "
            f"got {type(graph).__name__}"
        )
    return graph


def check_order(order) -> str:
    """Return ``order`` if it is one of :data:`ORDERS`, else raise PrivpubError."""
    if not isinstance(order, str) or order not in ORDERS:
        raise PrivpubError(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
    return order


def check_theta(theta, name: str = "theta") -> int:
    """Return a projection bound as an int in ``1..MAX_THETA``."""
    theta = check_positive_int(theta, name)
    if theta > MAX_THETA:
        raise PrivpubError(f"{name} must be at most {MAX_THETA}, got {theta}")
    return theta


def hist_sensitivity(theta: int) -> int:
    """L1 sensitivity ``2 theta + 1`` of ``hist(pi_theta(G))`` under node-DP (Lemma 1)."""
    return 2 * int(theta) + 1


def cumhist_sensitivity(theta: int) -> int:
    """L1 sensitivity ``theta + 1`` of ``cumhist(pi_theta(G))`` under node-DP (Lemma 4)."""
    return int(theta) + 1


# --------------------------------------------------------------------------- edge orders
#: Node counts below which ids are held as int32 (and the random order packs an edge's two
#: ids into one 64-bit word).
_INT32_NODES = 2**31 - 1


def _csr(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, indices)`` of the graph's adjacency with sorted indices."""
    adj = graph.adjacency
    if not adj.has_sorted_indices:
        adj = adj.sorted_indices()
    return adj.indptr, adj.indices


@njit(cache=True)
def _first_above(indptr, indices, n):
    """``first[a]``: position in the sorted CSR of row ``a``'s first neighbour ``> a``."""
    first = np.empty(n, np.int64)
    for a in range(n):
        start = indptr[a]
        first[a] = start + np.searchsorted(indices[start : indptr[a + 1]], a, side="right")
    return first


@njit(cache=True)
def _upper_edges(indptr, indices, n):
    """``(u, v)`` int32 arrays of the edges ``u < v`` in lexicographic order (sorted CSR)."""
    first = _first_above(indptr, indices, n)
    m = 0
    for a in range(n):
        m += indptr[a + 1] - first[a]
    u = np.empty(m, np.int32)
    v = np.empty(m, np.int32)
    i = 0
    for a in range(n):
        for j in range(first[a], indptr[a + 1]):
            u[i] = a
            v[i] = indices[j]
            i += 1
    return u, v


def _lexicographic_edges(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """``(u, v)`` arrays of the edges ``u < v`` in lexicographic order, read off the CSR
    (int32; int64 for graphs too large for int32 ids)."""
    return _EdgeSource(graph.n_nodes, csr=_csr(graph)).edges()


@njit(cache=True)
def _mix64(x):
    """The splitmix64 finaliser: a bijective 64-bit mixing function."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def _pair_key(key, a, b):
    """Keyed hash ``mix(mix(key ^ a) ^ b)`` of the node pair ``(a, b)``."""
    return _mix64(_mix64(key ^ np.uint64(a)) ^ np.uint64(b))


@njit(cache=True)
def _pair_keys(u, v, key):
    """Keyed hash ``mix(mix(key ^ u) ^ v)`` of every node pair ``(u[i], v[i])``."""
    out = np.empty(u.size, np.uint64)
    for i in range(u.size):
        out[i] = _pair_key(key, u[i], v[i])
    return out


@njit(cache=True)
def _sort_pairs(hk, pk, lo, hi):
    """Sort ``(hk, pk)[lo:hi]`` in place by ``hk``, then ``pk`` (insertion sort)."""
    for i in range(lo + 1, hi):
        h = hk[i]
        p = pk[i]
        j = i - 1
        while j >= lo and (hk[j] > h or (hk[j] == h and pk[j] > p)):
            hk[j + 1] = hk[j]
            pk[j + 1] = pk[j]
            j -= 1
        hk[j + 1] = h
        pk[j + 1] = p


@njit(cache=True)
def _sort_pairs_large(hk, pk, lo, hi):
    """Sort ``(hk, pk)[lo:hi]`` in place by ``hk``, then ``pk`` (two stable merge sorts)."""
    idx = np.argsort(pk[lo:hi], kind="mergesort")
    h2 = hk[lo:hi][idx]
    p2 = pk[lo:hi][idx]
    idx = np.argsort(h2, kind="mergesort")
    hk[lo:hi] = h2[idx]
    pk[lo:hi] = p2[idx]


@njit(cache=True)
def _random_edges(indptr, indices, n, key, small=64):
    """The edges ``u < v`` sorted by ``(hash, u, v)`` -- the order of a stable sort by hash
    of the lexicographic edge list -- packed as ``u << 32 | v`` (uint64).

    The packed pairs are scattered by the hash's top bits into buckets of a few thousand
    (they fit in cache; the hashes are uniform), each bucket by its next bits into runs of
    about four, and each run is sorted by insertion on ``(hash, pair)`` (a run longer than
    ``small`` by merge sorts). Only the packed pairs take ``8 |E|`` bytes; hashes are
    recomputed per bucket.
    """
    first = _first_above(indptr, indices, n)
    m = 0
    for a in range(n):
        m += indptr[a + 1] - first[a]
    bits = 1
    while bits < 12 and (np.int64(1) << (2 * bits + 2)) < m:
        bits += 1
    shift = np.uint64(64 - bits)
    n_buckets = 1 << bits
    start = np.zeros(n_buckets + 1, np.int64)
    for a in range(n):
        for j in range(first[a], indptr[a + 1]):
            start[(_pair_key(key, a, indices[j]) >> shift) + np.uint64(1)] += 1
    for k in range(n_buckets):
        start[k + 1] += start[k]
    fill = start[:-1].copy()
    pk = np.empty(m, np.uint64)
    for a in range(n):
        for j in range(first[a], indptr[a + 1]):
            b = indices[j]
            bucket = _pair_key(key, a, b) >> shift
            pk[fill[bucket]] = (np.uint64(a) << np.uint64(32)) | np.uint64(b)
            fill[bucket] += 1
    largest = 0
    for k in range(n_buckets):
        largest = max(largest, start[k + 1] - start[k])
    hb = np.empty(largest, np.uint64)
    th = np.empty(largest, np.uint64)
    tp = np.empty(largest, np.uint64)
    low = np.uint64(0xFFFFFFFF)
    for k in range(n_buckets):
        lo = start[k]
        size = start[k + 1] - lo
        sub = 0
        while sub < 20 and (np.int64(1) << (sub + 2)) < size:
            sub += 1
        shift2 = np.uint64(64 - bits - sub)
        mask = np.uint64((1 << sub) - 1)
        s_start = np.zeros((1 << sub) + 1, np.int64)
        for i in range(size):
            p = pk[lo + i]
            h = _pair_key(key, p >> np.uint64(32), p & low)
            hb[i] = h
            s_start[((h >> shift2) & mask) + np.uint64(1)] += 1
        for r in range(1 << sub):
            s_start[r + 1] += s_start[r]
        s_fill = s_start[:-1].copy()
        for i in range(size):
            r = (hb[i] >> shift2) & mask
            th[s_fill[r]] = hb[i]
            tp[s_fill[r]] = pk[lo + i]
            s_fill[r] += 1
        for r in range(1 << sub):
            if s_start[r + 1] - s_start[r] > small:
                _sort_pairs_large(th, tp, s_start[r], s_start[r + 1])
            else:
                _sort_pairs(th, tp, s_start[r], s_start[r + 1])
        for i in range(size):
            pk[lo + i] = tp[i]
    return pk


@njit(cache=True)
def _unpack(pk):
    """``(u, v)`` int32 arrays of packed pairs ``u << 32 | v``."""
    u = np.empty(pk.size, np.int32)
    v = np.empty(pk.size, np.int32)
    low = np.uint64(0xFFFFFFFF)
    for i in range(pk.size):
        u[i] = np.int32(pk[i] >> np.uint64(32))
        v[i] = np.int32(pk[i] & low)
    return u, v


def _draw_key(rng) -> np.uint64:
    """The 64-bit key of ``order="random"``, drawn from ``rng``."""
    if rng is None:
        raise PrivpubError('order="random" needs an rng')
    rng = check_rng(rng)
    key = rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)
    return np.uint64(key)


def _random_order(graph: Graph, key) -> _EdgeSource:
    """The edges of ``graph`` sorted by ``(keyed hash, u, v)`` (``order="random"``)."""
    n = graph.n_nodes
    if n < _INT32_NODES:
        indptr, indices = _csr(graph)
        return _EdgeSource(n, packed=_random_edges(indptr, indices, n, np.uint64(key)))
    u, v = _lexicographic_edges(graph)
    perm = np.argsort(_pair_keys(u, v, np.uint64(key)), kind="stable")
    return _EdgeSource(n, uv=(u[perm], v[perm]))


def _ordered_edges(graph: Graph, order: str, rng) -> tuple[np.ndarray, np.ndarray]:
    return _EdgeSource.of(graph, order, rng).edges()


def edge_order(graph, *, order: str = "lexicographic", rng=None) -> np.ndarray:
    """The edges of ``graph`` in the stable order ``order`` (Algorithm 1's ``Lambda``).

    Parameters
    ----------
    graph : Graph
    order : {"lexicographic", "random"}
        See the module docstring.
    rng : numpy.random.Generator, optional
        Needed for ``order="random"`` (one 64-bit key is drawn from it).

    Returns
    -------
    numpy.ndarray, shape (m, 2)
        ``int64`` node pairs ``(u, v)`` with ``u < v``, in processing order.
    """
    check_graph(graph)
    check_order(order)
    u, v = _ordered_edges(graph, order, rng)
    out = np.empty((u.size, 2), np.int64)
    out[:, 0] = u
    out[:, 1] = v
    return out


# --------------------------------------------------------------------------- kernels
@njit(cache=True)
def _project_kernel(u, v, n, theta):
    """Algorithm 1: degrees of pi_theta and which edges (in the given order) are kept."""
    deg = np.zeros(n, _DEGREE)
    keep = np.zeros(u.size, np.bool_)
    for i in range(u.size):
        a = u[i]
        b = v[i]
        if deg[a] < theta and deg[b] < theta:
            deg[a] += 1
            deg[b] += 1
            keep[i] = True
    return deg, keep


@njit(cache=True)
def _project_count(u, v, n, theta):
    """Algorithm 1 on ``(u, v)`` in order: degrees of pi_theta and ``|E'|``."""
    deg = np.zeros(n, _DEGREE)
    kept = 0
    for i in range(u.size):
        a = u[i]
        b = v[i]
        if deg[a] < theta and deg[b] < theta:
            deg[a] += 1
            deg[b] += 1
            kept += 1
    return deg, kept


@njit(cache=True)
def _project_packed(pk, n, theta):
    """Algorithm 1 on packed pairs ``u << 32 | v`` in order: degrees of pi_theta and
    ``|E'|``."""
    deg = np.zeros(n, _DEGREE)
    kept = 0
    low = np.uint64(0xFFFFFFFF)
    for i in range(pk.size):
        a = pk[i] >> np.uint64(32)
        b = pk[i] & low
        if deg[a] < theta and deg[b] < theta:
            deg[a] += 1
            deg[b] += 1
            kept += 1
    return deg, kept


@njit(cache=True)
def _project_csr(indptr, indices, n, theta):
    """Algorithm 1 in lexicographic order, walking the sorted CSR (each row from its first
    neighbour above the row): degrees of pi_theta and ``|E'|``."""
    deg = np.zeros(n, _DEGREE)
    kept = 0
    for a in range(n):
        end = indptr[a + 1]
        j = indptr[a] + np.searchsorted(indices[indptr[a] : end], a, side="right")
        while j < end and deg[a] < theta:
            b = indices[j]
            if deg[b] < theta:
                deg[a] += 1
                deg[b] += 1
                kept += 1
            j += 1
    return deg, kept


@njit(cache=True)
def _histogram_row(deg, theta):
    """Counts of the degrees ``0..theta`` of ``deg`` (int64)."""
    row = np.zeros(theta + 1, np.int64)
    for x in range(deg.size):
        row[deg[x]] += 1
    return row


@njit(cache=True)
def _all_theta_kernel(u, v, n, theta_max):
    """Degree histograms of pi_theta for every theta = 1..theta_max (row theta - 1).

    An edge is *low* at ``t`` when both endpoints have original degree ``<= t``: it is always
    kept (neither endpoint reaches ``t`` before its own last edge), and a node of original
    degree ``<= t`` never blocks an edge. So pass ``t`` walks only the other edges, in
    processing order, and adds the low ones as counts. A node is *settled* at ``t`` when all
    its edges are low: its projected degree is then its original degree for every larger
    ``t`` and it enters a running base histogram instead of being recounted.
    """
    m = u.size
    orig = np.zeros(n, np.int32)
    for i in range(m):
        orig[u[i]] += 1
        orig[v[i]] += 1
    big = theta_max + 1  # keys above theta_max all mean "never low"
    key = np.empty(m, np.uint16)  # min(larger original degree of the endpoints, big)
    settle = np.zeros(n, np.int32)  # min(largest key of the node's edges, big)
    for i in range(m):
        k = min(max(orig[u[i]], orig[v[i]]), big)
        key[i] = k
        if k > settle[u[i]]:
            settle[u[i]] = k
        if k > settle[v[i]]:
            settle[v[i]] = k
    # bucket the edges by key and the nodes by settle (counting sort)
    e_start = np.zeros(big + 2, np.int64)
    for i in range(m):
        e_start[key[i] + 1] += 1
    n_start = np.zeros(big + 2, np.int64)
    for x in range(n):
        n_start[settle[x] + 1] += 1
    for k in range(big + 1):
        e_start[k + 1] += e_start[k]
        n_start[k + 1] += n_start[k]
    e_by_key = np.empty(m, np.int32)  # m < 2**31 (ProjectionProfile checks)
    fill = e_start.copy()
    for i in range(m):
        e_by_key[fill[key[i]]] = i
        fill[key[i]] += 1
    n_by_settle = np.empty(n, u.dtype)
    fill = n_start.copy()
    for x in range(n):
        n_by_settle[fill[settle[x]]] = x
        fill[settle[x]] += 1

    hist = np.zeros((theta_max, theta_max + 1), np.int64)
    kept = np.zeros(theta_max, np.int64)
    base = np.zeros(theta_max + 1, np.int64)  # degrees of settled nodes
    base[0] = n_start[1] - n_start[0]  # isolated nodes
    low = np.zeros(n, np.int32)  # low edges of each node
    n_low_edges = 0
    # edges that are not low at t, in processing order (compacted now and then)
    au = np.empty(m, u.dtype)
    av = np.empty(m, v.dtype)
    ak = np.empty(m, np.uint16)
    n_active = 0
    for i in range(m):
        if key[i] > 1:
            au[n_active] = u[i]
            av[n_active] = v[i]
            ak[n_active] = key[i]
            n_active += 1
    un = np.empty(n, u.dtype)  # nodes not settled at t
    n_un = 0
    for x in range(n):
        if settle[x] > 1:
            un[n_un] = x
            n_un += 1
    deg = np.zeros(n, _DEGREE)
    c = 1  # the list holds the edges of key > c
    for t in range(1, theta_max + 1):
        for j in range(e_start[t], e_start[t + 1]):
            e = e_by_key[j]
            low[u[e]] += 1
            low[v[e]] += 1
            n_low_edges += 1
        for j in range(n_start[t], n_start[t + 1]):
            base[orig[n_by_settle[j]]] += 1
        # a node of original degree <= t never blocks an edge: its current degree is below t
        # until its own last edge, and deg[] counts only the walked edges
        k = n_low_edges
        # the list holds the edges of key > c; those of key <= t + 1 are stale after this
        # pass: they are dropped while walking once they are over an eighth of the list
        # (rewriting the list every pass costs more than skipping a few stale edges)
        if 8 * (e_start[t + 2] - e_start[c + 1]) > n_active:
            w = 0
            for i in range(n_active):
                kk = ak[i]
                if kk > t:
                    a = au[i]
                    b = av[i]
                    if deg[a] < t and deg[b] < t:
                        deg[a] += 1
                        deg[b] += 1
                        k += 1
                    if kk > t + 1:
                        au[w] = a
                        av[w] = b
                        ak[w] = kk
                        w += 1
            n_active = w
            c = t + 1
        else:
            for i in range(n_active):
                if ak[i] > t:
                    a = au[i]
                    b = av[i]
                    if deg[a] < t and deg[b] < t:
                        deg[a] += 1
                        deg[b] += 1
                        k += 1
        kept[t - 1] = k
        row = hist[t - 1]
        row[:] = base
        w = 0
        for i in range(n_un):
            x = un[i]
            row[deg[x] + low[x]] += 1
            deg[x] = 0
            if settle[x] > t + 1:
                un[w] = x
                w += 1
        n_un = w
    return hist, kept


def project_edges(edges, n_nodes: int, theta: int) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 on an explicit edge sequence.

    Parameters
    ----------
    edges : array_like, shape (m, 2)
        Node pairs in processing order (the stable order ``Lambda``).
    n_nodes : int
        Number of nodes (ids ``0..n_nodes-1``).
    theta : int
        Degree bound, >= 1.

    Returns
    -------
    degrees : numpy.ndarray
        Degree of every node in ``pi_theta(G)`` (int64).
    keep : numpy.ndarray of bool
        Which of the ``m`` edges ``pi_theta`` keeps.
    """
    theta = check_theta(theta)
    u, v = _edge_arrays(edges, n_nodes)
    deg, keep = _project_kernel(u, v, int(n_nodes), theta)
    return deg.astype(np.int64), keep


def _edge_arrays(edges, n_nodes) -> tuple[np.ndarray, np.ndarray]:
    e = np.asarray(edges)
    if e.size == 0:
        e = np.empty((0, 2), dtype=np.int64)
    if e.ndim != 2 or e.shape[1] != 2 or not np.issubdtype(e.dtype, np.integer):
        raise DataError(f"edges must be an (m, 2) integer array, got {e.dtype} {e.shape}")
    if e.size and (e.min() < 0 or e.max() >= n_nodes):
        raise DataError(f"edge ids must lie in 0..{n_nodes - 1}")
    dtype = np.int32 if n_nodes < _INT32_NODES else np.int64
    return np.ascontiguousarray(e[:, 0], dtype), np.ascontiguousarray(e[:, 1], dtype)


class _EdgeSource:
    """The edges of a graph in a stable order, for projections: the sorted CSR itself for
    the lexicographic order (walked without building an edge list), else ``(u, v)`` arrays
    in processing order."""

    def __init__(self, n_nodes: int, *, csr=None, uv=None, packed=None):
        self.n_nodes = int(n_nodes)
        self._csr = csr
        self._uv = uv
        self._packed = packed

    @classmethod
    def of(cls, graph: Graph, order: str, rng) -> _EdgeSource:
        if order == "random":
            return _random_order(graph, _draw_key(rng))
        return cls(graph.n_nodes, csr=_csr(graph))

    def project(self, theta: int) -> tuple[np.ndarray, int]:
        """Degrees of ``pi_theta`` (uint16) and the number of kept edges."""
        if self._csr is not None:
            deg, kept = _project_csr(*self._csr, self.n_nodes, theta)
        elif self._packed is not None:
            deg, kept = _project_packed(self._packed, self.n_nodes, theta)
        else:
            deg, kept = _project_count(*self._uv, self.n_nodes, theta)
        return deg, int(kept)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """``(u, v)`` in processing order."""
        if self._uv is not None:
            return self._uv
        if self._packed is not None:
            return _unpack(self._packed)
        indptr, indices = self._csr
        if self.n_nodes < _INT32_NODES:
            return _upper_edges(indptr, indices, self.n_nodes)
        rows = np.repeat(np.arange(self.n_nodes, dtype=np.int64), np.diff(indptr))
        cols = indices.astype(np.int64, copy=False)
        upper = cols > rows
        return np.ascontiguousarray(rows[upper]), np.ascontiguousarray(cols[upper])


def projected_degrees(graph, theta: int, *, order: str = "lexicographic", rng=None) -> np.ndarray:
    """Degree of every node in ``pi_theta(graph)`` (Algorithm 1), as int64."""
    check_graph(graph)
    theta = check_theta(theta)
    check_order(order)
    return _EdgeSource.of(graph, order, rng).project(theta)[0].astype(np.int64)


def project_edge_addition(graph, theta: int, *, order: str = "lexicographic", rng=None) -> Graph:
    """The projected graph ``pi_theta(graph)``: projection by edge addition (Algorithm 1).

    Parameters
    ----------
    graph : Graph
    theta : int
        Degree bound, >= 1.
    order : {"lexicographic", "random"}
        Stable edge order (module docstring).
    rng : numpy.random.Generator, optional
        Needed for ``order="random"``.

    Returns
    -------
    Graph
        Same nodes, a maximal ``theta``-bounded subset of the edges.

    Examples
    --------
    >>> import numpy as np
    >>> star = Graph.from_edges(np.array([[0, 1], [0, 2], [0, 3], [1, 2]]))
    >>> project_edge_addition(star, 2).edges().tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    check_graph(graph)
    theta = check_theta(theta)
    check_order(order)
    u, v = _ordered_edges(graph, order, rng)
    _, keep = _project_kernel(u, v, graph.n_nodes, theta)
    edges = np.column_stack([u[keep], v[keep]]).astype(np.int64)
    return Graph.from_edges(edges, graph.n_nodes, name=graph.name)


# --------------------------------------------------------------------------- all theta
class ProjectionProfile:
    """Degree histograms of ``pi_theta(G)`` for every ``theta = 1..theta_max``.

    Rows are computed when first asked for: one ``theta`` is one pass of Algorithm 1
    (:meth:`histogram`, :meth:`cumulative`, :meth:`edge_fraction`; :meth:`nodes_above` needs
    only ``theta_max``'s), all of them one sweep of :func:`_all_theta_kernel`
    (:attr:`histograms`, :attr:`kept_edges`). Either way the numbers are those of
    Algorithm 1 run at each ``theta``.

    Attributes
    ----------
    histograms : numpy.ndarray, shape (theta_max, theta_max + 1)
        Row ``theta - 1``: number of nodes of each degree ``0..theta`` in ``pi_theta(G)``
        (zeros beyond ``theta``). Read-only.
    kept_edges : numpy.ndarray, shape (theta_max,)
        ``|E(pi_theta(G))|``. Read-only.
    n_nodes, n_edges : int
        Of ``G``.
    """

    def __init__(self, source: _EdgeSource, theta_max: int, n_edges: int):
        self._source = source
        self._theta_max = int(theta_max)
        self.n_nodes = source.n_nodes
        self.n_edges = int(n_edges)
        self._rows: dict[int, tuple[np.ndarray, int]] = {}
        self._all: tuple[np.ndarray, np.ndarray] | None = None
        self._derived: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def theta_max(self) -> int:
        return self._theta_max

    def _sweep(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            if self._all is None:
                u, v = self._source.edges()
                if u.size >= 2**31:
                    raise DataError(f"the all-theta sweep takes fewer than 2**31 edges, "
                                    f"got {u.size}")
                hist, kept = _all_theta_kernel(u, v, self.n_nodes, self._theta_max)
                hist.setflags(write=False)
                kept.setflags(write=False)
                self._all = hist, kept
            return self._all

    @property
    def histograms(self) -> np.ndarray:
        return self._sweep()[0]

    @property
    def kept_edges(self) -> np.ndarray:
        return self._sweep()[1]

    def _projection(self, theta: int) -> tuple[np.ndarray, int]:
        """``(hist(pi_theta(G)) on 0..theta, |E(pi_theta(G))|)``."""
        theta = check_theta(theta)
        if theta > self._theta_max:
            raise PrivpubError(f"theta {theta} exceeds the profile's theta_max {self.theta_max}")
        if self._all is not None:
            return self._all[0][theta - 1, : theta + 1], int(self._all[1][theta - 1])
        with self._lock:
            if theta not in self._rows:
                deg, kept = self._source.project(theta)
                row = _histogram_row(deg, theta)
                row.setflags(write=False)
                self._rows[theta] = row, kept
            return self._rows[theta]

    def _row(self, theta: int) -> np.ndarray:
        return self._projection(theta)[0]

    def histogram(self, theta: int) -> np.ndarray:
        """``hist(pi_theta(G))``: counts of degrees ``0..theta`` (float)."""
        return self._row(theta).astype(float)

    def cumulative(self, theta: int) -> np.ndarray:
        """``cumhist(pi_theta(G))``: number of nodes of degree ``<= k``, ``k = 0..theta``."""
        return np.cumsum(self._row(theta)).astype(float)

    def nodes_above(self) -> np.ndarray:
        """``a[theta - 1] = |{v : deg_{pi_Theta(G)}(v) > theta}|`` for ``theta = 1..Theta``.

        The projection loss of day2016 Sec 3.2 is ``l_proj(G, theta) = 2 a[theta - 1]``.
        """
        last = self._row(self._theta_max)
        above = np.cumsum(last[::-1])[::-1]  # above[d] = #nodes with degree >= d
        return np.append(above[2:], 0)[: self.theta_max].astype(np.int64)

    def edge_fraction(self, theta: int) -> float:
        """``|E(pi_theta(G))| / |E|`` (1 for a graph without edges)."""
        kept = self._projection(theta)[1]
        return float(kept / self.n_edges) if self.n_edges else 1.0

    def derived(self, key: str, compute) -> np.ndarray:
        """``compute(self)``, computed once and kept on the profile (read-only) under ``key``.

        For arrays a mechanism derives from the projections alone, with no budget and no
        draws (day2016 Eq. (1)'s deviation term): a lexicographic profile is kept per graph
        and ``theta_max`` in a process (:func:`projection_profile`), so the trials of one
        worker compute them once instead of once per release.
        """
        if key not in self._derived:
            value = np.asarray(compute(self))
            value.setflags(write=False)
            self._derived[key] = value
        return self._derived[key]


def all_theta_histograms(edges, n_nodes: int, theta_max: int) -> ProjectionProfile:
    """:class:`ProjectionProfile` of an explicit edge sequence (in processing order)."""
    theta_max = check_theta(theta_max, "theta_max")
    u, v = _edge_arrays(edges, n_nodes)
    return ProjectionProfile(_EdgeSource(int(n_nodes), uv=(u, v)), theta_max, int(u.size))


def projection_profile(
    graph, theta_max: int, *, order: str = "lexicographic", rng=None
) -> ProjectionProfile:
    """Projected degree histograms of ``graph`` for every ``theta = 1..theta_max``.

    Computed lazily (:class:`ProjectionProfile`): a mechanism that needs two rows pays two
    passes of Algorithm 1, one that needs them all one compiled sweep (see the module
    docstring for the shortcut that skips always-kept edges). ``order="random"`` draws its
    key from ``rng`` here, whatever is asked later.

    Parameters
    ----------
    graph : Graph
    theta_max : int
        ``Theta``, >= 1.
    order : {"lexicographic", "random"}
    rng : numpy.random.Generator, optional
        Needed for ``order="random"``.

    Returns
    -------
    ProjectionProfile
    """
    check_graph(graph)
    theta_max = check_theta(theta_max, "theta_max")
    check_order(order)
    if order == "lexicographic":  # deterministic: computed once per graph in a process
        profiles = _PROFILES.setdefault(graph, {})
        if theta_max not in profiles:
            profiles[theta_max] = _profile(graph, theta_max, order, rng)
        return profiles[theta_max]
    return _profile(graph, theta_max, order, rng)


#: Lexicographic profiles per graph object (weak: they go with their graph). Every run of
#: a theta mechanism on a graph needs the same profile; day2016 Fig. 3 asks 30 repetitions x
#: 8 epsilons of each, and the profile is nearly all of a call's time.
_PROFILES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
register_clear(_PROFILES.clear)


def _profile(graph, theta_max: int, order: str, rng) -> ProjectionProfile:
    return ProjectionProfile(_EdgeSource.of(graph, order, rng), theta_max, graph.n_edges)


# --------------------------------------------------------------------------- Table 2
@register_mechanism(
    "projection_edge_addition",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=NO_PRIVACY,
    paper="day2016",
    role="mechanism",
    unranked="a noise-free projection (day2016 Sec 2.4), a building block without epsilon",
)
def projection_edge_addition(
    graph,
    *,
    theta: int,
    order: str = "lexicographic",
    drop_theta_bin: bool = False,
    rng: np.random.Generator,
) -> Release:
    """Degree histogram of the projected graph ``pi_theta(G)`` (non-private; Table 2).

    Parameters
    ----------
    graph : Graph
    theta : int
        Degree bound, >= 1 (Table 2: 16, 64, 128).
    order : {"lexicographic", "random"}
        Stable edge order of Algorithm 1.
    drop_theta_bin : bool
        Leave bin ``theta`` out of any comparison with the true histogram, as Table 2 does
        ("after removing the bin of theta"): the released bin ``theta`` then holds the
        *true* count of degree ``theta``, so ``l1_counts`` sums over every other bin (see the
        module docstring for why this reading).
    rng : numpy.random.Generator
        Used only by ``order="random"``.

    Returns
    -------
    Release
        ``DegreeHistogram`` of degrees ``0..theta``; diagnostics ``edge_fraction`` (``|E'|/|E|``)
        and ``theta_bin`` (the projected count of degree ``theta``).
    """
    check_graph(graph)
    theta = check_theta(theta)
    check_order(order)
    if not isinstance(drop_theta_bin, (bool, np.bool_)):
        raise PrivpubError(f"drop_theta_bin must be true or false, got {drop_theta_bin!r}")
    deg, kept = _EdgeSource.of(graph, order, rng).project(theta)
    counts = _histogram_row(deg, theta).astype(float)
    theta_bin = float(counts[theta])
    if drop_theta_bin:
        true_counts = np.bincount(graph.degrees(), minlength=theta + 1)
        counts[theta] = float(true_counts[theta])
    m = graph.n_edges
    fraction = float(kept / m) if m else 1.0
    return Release(
        DegreeHistogram(counts),
        diagnostics={"edge_fraction": fraction, "theta_bin": theta_bin},
    )


# --------------------------------------------------------------------------- theta families
class Variant(NamedTuple):
    """One member of a day2016 theta family (:func:`register_family`): the selection
    ``select`` -- the exponential mechanism (``"em"``, private), the argmax of the quality
    function (``"qbest"``) or the candidate closest to the truth (``"oracle"``) --, the
    algorithm's own ``option`` (Algorithm 2: whether Omega groups bins; Algorithm 4: the
    calibration), the member's docstring ``doc`` and the rest of its
    :func:`~privpub.registry.register_mechanism` arguments ``registration``."""

    select: str
    option: object
    doc: str
    registration: dict


def register_family(variants: dict[str, Variant], algorithm: Callable) -> dict[str, Callable]:
    """Register every member of ``variants`` as a day2016 graph -> degree-histogram mechanism
    calling ``algorithm(graph, epsilon, theta_max, tail, order, rng, ledger, select, option)``
    (the introspective selections get no ledger: they spend nothing). Returns ``{name:
    mechanism}``."""

    def register(name: str, variant: Variant) -> Callable:
        def mechanism(
            graph,
            *,
            epsilon: float,
            theta_max: int = 200,
            tail: str = "linear",
            order: str = "lexicographic",
            rng: np.random.Generator,
            ledger: PrivacyLedger | None = None,
        ) -> Release:
            used = ledger if variant.select == "em" else None
            return algorithm(graph, epsilon, theta_max, tail, order, rng, used, variant.select,
                             variant.option)

        mechanism.__name__ = mechanism.__qualname__ = name
        mechanism.__doc__ = variant.doc
        return register_mechanism(name, input_kind=Kind.GRAPH,
                                  output_kind=Kind.DEGREE_HISTOGRAM, paper="day2016",
                                  **variant.registration)(mechanism)

    return {name: register(name, variant) for name, variant in variants.items()}
