"""Structure metrics of whole graphs and dK-2 series (sala2011 Table 1, Figs 3-7).

Metrics on :class:`~privpub.types.JointDegree` releases (Figs 3-4, Table 1):

=====================  ===========================================================  ======
name                   what                                                         better
=====================  ===========================================================  ======
``dk2_distance``       Euclidean distance between the true and released dK-2 series  lower
                       over the union of their cells (sala2011 Sec 3.3); also on
                       graph releases (their dK-2 series are compared)
``dk2_size``           number of cells listed (m, the "dK-2 size")                  --
``dk2_nodes``          nodes implied, ``sum_k s_k / k`` (isolated nodes excluded)    --
``dk2_edges``          edges, the sum of the counts (negative counts clipped)       --
``dk2_max_degree``     largest degree with a positive count                          --
=====================  ===========================================================  ======

Metrics on :class:`~privpub.types.Graph` releases (Figs 5-7; the release is a synthetic
graph, the truth the original):

===============================  ===================================================  ======
``degree_cdf_deviation``         max over d of ``|F_release(d) - F_truth(d)|``, F the   lower
                                 degree CDF over nodes of degree >= 1 (the dK-2 model
                                 has no isolated nodes)
``assortativity``                degree assortativity r of the release (Newman 2002)    --
``assortativity_error``          ``|r_release - r_truth|``                             lower
``average_path_length``          mean shortest-path length over connected ordered       --
                                 pairs: exact (BFS from every node) up to
                                 :data:`EXACT_MAX_NODES` nodes, else from
                                 :data:`APL_SOURCES` uniformly sampled sources
``average_path_length_se``       its standard error (0 when exact)                      --
``average_path_length_error``    ``|APL_release / APL_truth - 1|``                     lower
``diameter``, ``radius``         of the largest component: exact up to                  --
                                 :data:`EXACT_MAX_NODES` nodes; above, the diameter is
                                 a lower bound (the largest eccentricity found by
                                 sampled BFS and 4 double sweeps) and the radius an
                                 upper bound (smallest sampled eccentricity)
``graph_nodes``, ``graph_edges``, size of the release                                  --
``graph_max_degree``
===============================  ===================================================  ======

The sampled APL's estimator and error bound, and why these choices: docs/design.md
(sala2011) and the notes of ``conf/experiment/sala2011_fig7.yaml``. The BFS runs 64 sources
per traversal (:func:`distance_statistics`; exactly the distances of one BFS per source).

References
----------
.. [SZWZZ11] A. Sala et al. Sharing graphs using differentially private graph models. IMC
   2011, Sec 3.3 (Euclidean dK-2 distance), Sec 5.1 (degree CDF, assortativity, APL).
.. [N02] M. E. J. Newman. Assortative mixing in networks. PRL 89, 208701 (2002).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from privpub.algorithms.dk import dk2_euclidean, joint_degree, node_counts
from privpub.errors import PrivpubError
from privpub.metrics._checks import same_type
from privpub.metrics._memo import memo, stream_key
from privpub.registry import register_metric
from privpub.types import Graph, JointDegree, Kind
from privpub.validation import check_rng

__all__ = [
    "EXACT_MAX_NODES",
    "distance_histogram",
    "APL_SOURCES",
    "dk2_distance",
    "dk2_size",
    "dk2_nodes",
    "dk2_edges",
    "dk2_max_degree",
    "degree_cdf_deviation",
    "assortativity",
    "assortativity_error",
    "average_path_length",
    "average_path_length_se",
    "average_path_length_error",
    "diameter",
    "radius",
    "graph_nodes",
    "graph_edges",
    "graph_max_degree",
    "degree_assortativity",
    "path_statistics",
    "bfs_statistics",
    "distance_statistics",
]

#: Path metrics are exact (BFS from every node) on graphs with at most this many nodes.
EXACT_MAX_NODES = 3000
#: Sources of the sampled BFS above that size.
APL_SOURCES = 1000


def _as_joint_degree(x, role: str) -> JointDegree:
    if isinstance(x, JointDegree):
        return x
    if isinstance(x, Graph):
        return memo(x, "dk2", lambda: joint_degree(x))
    raise PrivpubError(f"{role} must be a JointDegree or a Graph, got {type(x).__name__}")


# --------------------------------------------------------------------------- dK-2 series
@register_metric(
    "dk2_distance", kinds=(Kind.JOINT_DEGREE, Kind.GRAPH), higher_is_better=False,
    label="Euclidean dK-2 distance",
)
def dk2_distance(truth, release) -> float:
    """Euclidean distance between the dK-2 series of ``truth`` and ``release`` (sala2011
    Figs 3-4); graphs are compared through their dK-2 series."""
    same_type(truth, release, (JointDegree, Graph), "dk2_distance")
    return dk2_euclidean(_as_joint_degree(truth, "truth"), _as_joint_degree(release, "release"))


def _jd(truth, release, metric) -> JointDegree:
    same_type(truth, release, (JointDegree,), metric)
    return release


@register_metric("dk2_size", kinds=Kind.JOINT_DEGREE, higher_is_better=True, label="dK-2 size")
def dk2_size(truth, release) -> float:
    """Number of cells of the release (Table 1's dK-2 size for the exact series)."""
    return float(_jd(truth, release, "dk2_size").size)


@register_metric("dk2_nodes", kinds=Kind.JOINT_DEGREE, higher_is_better=True, label="|V|")
def dk2_nodes(truth, release) -> float:
    """Nodes implied by the release (``sum_k s_k / k``, counts clipped at 0)."""
    jd = _jd(truth, release, "dk2_nodes")
    clipped = JointDegree(jd.low, jd.high, np.clip(jd.counts, 0, None))
    return float(node_counts(clipped).sum())


@register_metric("dk2_edges", kinds=Kind.JOINT_DEGREE, higher_is_better=True, label="|E|")
def dk2_edges(truth, release) -> float:
    """Edges of the release: the sum of its counts, clipped at 0."""
    return float(np.clip(_jd(truth, release, "dk2_edges").counts, 0, None).sum())


@register_metric("dk2_max_degree", kinds=Kind.JOINT_DEGREE, higher_is_better=True,
                 label="d_max")
def dk2_max_degree(truth, release) -> float:
    """Largest degree in a cell with a count of at least 1/2."""
    jd = _jd(truth, release, "dk2_max_degree")
    present = jd.counts >= 0.5
    return float(jd.high[present].max()) if present.any() else 0.0


# --------------------------------------------------------------------------- graphs
def _graphs(truth, release, metric) -> tuple[Graph, Graph]:
    same_type(truth, release, (Graph,), metric)
    return truth, release


@register_metric("graph_nodes", kinds=Kind.GRAPH, higher_is_better=True, label="|V|")
def graph_nodes(truth, release) -> float:
    """Number of nodes of the release."""
    return float(_graphs(truth, release, "graph_nodes")[1].n_nodes)


@register_metric("graph_edges", kinds=Kind.GRAPH, higher_is_better=True, label="|E|")
def graph_edges(truth, release) -> float:
    """Number of edges of the release."""
    return float(_graphs(truth, release, "graph_edges")[1].n_edges)


@register_metric("graph_max_degree", kinds=Kind.GRAPH, higher_is_better=True, label="d_max")
def graph_max_degree(truth, release) -> float:
    """Largest degree of the release."""
    return float(_graphs(truth, release, "graph_max_degree")[1].degrees().max(initial=0))


def _degree_cdf(graph: Graph) -> np.ndarray:
    deg = graph.degrees()
    deg = deg[deg > 0]
    if deg.size == 0:
        return np.zeros(1)
    return np.cumsum(np.bincount(deg)) / deg.size


@register_metric("degree_cdf_deviation", kinds=Kind.GRAPH, higher_is_better=False,
                 label="max |CDF difference|")
def degree_cdf_deviation(truth, release) -> float:
    """Largest gap between the degree CDFs (nodes of degree >= 1) of release and truth
    (sala2011 Fig 5 / Sec 5.1: "the worst-case degree distribution deviation is still within
    10% of the original" is read as a gap <= 0.10)."""
    truth, release = _graphs(truth, release, "degree_cdf_deviation")
    if not np.any(release.degrees() > 0):
        return 1.0  # an edgeless release has no degree distribution: the worst score
    ft = memo(truth, "cdf", lambda: _degree_cdf(truth))
    fr = memo(release, "cdf", lambda: _degree_cdf(release))
    n = max(ft.size, fr.size)
    ft = np.concatenate([ft, np.ones(n - ft.size)])
    fr = np.concatenate([fr, np.ones(n - fr.size)])
    return float(np.max(np.abs(ft - fr)))


def degree_assortativity(graph: Graph) -> float:
    """Newman's degree assortativity r: the Pearson correlation of the degrees at the two
    ends of an edge, over both orientations of every edge. NaN with no edges or when every
    edge joins equal degrees only (zero variance)."""
    deg = graph.degrees().astype(float)
    e = graph.edges()
    if e.size == 0:
        return float("nan")
    a, b = deg[e[:, 0]], deg[e[:, 1]]
    x = np.concatenate([a, b])
    y = np.concatenate([b, a])
    xm = x.mean()
    var = np.mean((x - xm) ** 2)
    if var == 0:
        return float("nan")
    return float(np.mean((x - xm) * (y - xm)) / var)


@register_metric("assortativity", kinds=Kind.GRAPH, higher_is_better=True,
                 label="assortativity")
def assortativity(truth, release) -> float:
    """Degree assortativity of the release (sala2011 Fig 6)."""
    release = _graphs(truth, release, "assortativity")[1]
    return memo(release, "assortativity", lambda: degree_assortativity(release))


@register_metric("assortativity_error", kinds=Kind.GRAPH, higher_is_better=False,
                 label="|assortativity error|")
def assortativity_error(truth, release) -> float:
    """``|r(release) - r(truth)|`` (sala2011 Sec 5.1: "an error less than 0.05")."""
    truth, release = _graphs(truth, release, "assortativity_error")
    rt = memo(truth, "assortativity", lambda: degree_assortativity(truth))
    rr = memo(release, "assortativity", lambda: degree_assortativity(release))
    return float(abs(rr - rt))


# --------------------------------------------------------------------------- paths
@njit(cache=True)
def _bfs(indptr, indices, sources, n):
    m = sources.size
    dist_sum = np.zeros(m, np.int64)
    reach = np.zeros(m, np.int64)
    ecc = np.zeros(m, np.int64)
    far = np.zeros(m, np.int64)
    dist = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    for i in range(m):
        s = sources[i]
        head, tail = 0, 1
        queue[0] = s
        dist[s] = 0
        total = 0
        while head < tail:
            u = queue[head]
            head += 1
            du = dist[u]
            for p in range(indptr[u], indptr[u + 1]):
                v = indices[p]
                if dist[v] < 0:
                    dist[v] = du + 1
                    total += du + 1
                    queue[tail] = v
                    tail += 1
        last = queue[tail - 1]
        dist_sum[i] = total
        reach[i] = tail - 1
        ecc[i] = dist[last]
        far[i] = last
        for j in range(tail):
            dist[queue[j]] = -1
    return dist_sum, reach, ecc, far


#: de Bruijn sequence for the index of a 64-bit word's lowest set bit
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.array(
    [0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43,
     22, 45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44,
     32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6], np.int64)


@njit(cache=True)
def _popcount(x):  # pragma: no cover - compiled
    c = 0
    while x != np.uint64(0):
        x &= x - np.uint64(1)
        c += 1
    return c


@njit(cache=True)
def _ms_bfs(indptr, indices, sources, n, debruijn_index, per_source):
    m = sources.size
    dist_sum = np.zeros(m, np.int64)
    reach = np.zeros(m, np.int64)
    ecc = np.zeros(m, np.int64)
    hist = np.zeros(n + 1, np.int64)  # (source, node) pairs per distance, d = 0 included
    top = 0
    zero, one = np.uint64(0), np.uint64(1)
    seen = np.zeros(n, np.uint64)  # bit b of seen[v]: source b has reached v
    visit = np.zeros(n, np.uint64)  # sources for which v is on the current frontier
    found = np.zeros(n, np.uint64)  # sources reaching v for the first time at this level
    frontier = np.empty(n, np.int64)
    fresh = np.empty(n, np.int64)
    for b0 in range(0, m, 64):
        n_front = 0
        for i in range(b0, min(b0 + 64, m)):
            s = sources[i]
            bit = one << np.uint64(i - b0)
            if visit[s] == zero:
                frontier[n_front] = s
                n_front += 1
            visit[s] |= bit
            seen[s] |= bit
            hist[0] += 1
        level = 0
        while n_front > 0:
            level += 1
            n_fresh = 0
            for j in range(n_front):
                u = frontier[j]
                bits = visit[u]
                for p in range(indptr[u], indptr[u + 1]):
                    v = indices[p]
                    new = bits & ~seen[v]
                    if new != zero:
                        if found[v] == zero:
                            fresh[n_fresh] = v
                            n_fresh += 1
                        found[v] |= new
            for j in range(n_front):
                visit[frontier[j]] = zero
            for j in range(n_fresh):
                v = fresh[j]
                new = found[v]
                found[v] = zero
                seen[v] |= new
                visit[v] = new
                hist[level] += _popcount(new)
                while per_source and new != zero:
                    low = new & (~new + one)
                    b = b0 + debruijn_index[(low * _DEBRUIJN) >> np.uint64(58)]
                    dist_sum[b] += level
                    reach[b] += 1
                    ecc[b] = level
                    new ^= low
                frontier[j] = v
            if n_fresh > 0 and level > top:
                top = level
            n_front = n_fresh
        seen[:] = zero
    return dist_sum, reach, ecc, hist[: top + 1]


@njit(cache=True)
def _relabelled_csr(indptr, indices, order, rank):
    """The CSR of the graph whose node ``i`` is node ``order[i]`` (``rank`` the inverse
    permutation), its indices of ``rank``'s dtype."""
    n = order.size
    ptr = np.empty(n + 1, np.int64)
    ptr[0] = 0
    for i in range(n):
        ptr[i + 1] = ptr[i] + indptr[order[i] + 1] - indptr[order[i]]
    out = np.empty(ptr[n], rank.dtype)
    for i in range(n):
        q = ptr[i]
        for p in range(indptr[order[i]], indptr[order[i] + 1]):
            out[q] = rank[indices[p]]
            q += 1
    return ptr, out


def _multi_source_bfs(graph: Graph, sources, per_source: bool):
    """:func:`_ms_bfs` on ``graph`` relabelled in reverse Cuthill-McKee order.

    The traversal's cost is its random reads of the per-node source sets; numbering the
    nodes so that neighbours get close numbers (RCM; synthetic graphs come with random
    labels) keeps those reads in cache. Every statistic is a sum, a count or a maximum over
    (source, node) pairs, so the labels do not change any value: only ``sources`` are
    mapped to the new numbers, and the results stay in their order.
    """
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    adj = graph.adjacency
    n = graph.n_nodes
    sources = np.asarray(sources, dtype=np.int64)
    order = reverse_cuthill_mckee(adj, symmetric_mode=True)
    index = np.int32 if n <= np.iinfo(np.int32).max else np.int64  # half the reads' bytes
    rank = np.empty(n, index)
    rank[order] = np.arange(n, dtype=index)
    indptr, indices = _relabelled_csr(adj.indptr, adj.indices, order, rank)
    return _ms_bfs(indptr, indices, rank[sources].astype(np.int64), n, _DEBRUIJN_INDEX,
                   per_source)


def distance_statistics(graph: Graph, sources) -> tuple[np.ndarray, ...]:
    """Per source: the sum of its distances, the nodes it reaches (itself excluded) and its
    eccentricity (within its component), exactly as one BFS from each source would give.

    Multi-source BFS (Then et al., "The more the merrier: efficient multi-source graph
    traversal", VLDB 2014): 64 sources share one traversal, each node's frontier holding a
    64-bit set of the sources that reached it at the current level, so a node's edges are
    scanned once per distinct distance from the batch rather than once per source.
    Compiled (numba); ``metrics/tests`` checks it against :func:`bfs_statistics`.
    """
    return _multi_source_bfs(graph, sources, True)[:3]


def distance_histogram(graph: Graph, sources) -> np.ndarray:
    """``h[d]``: the (source, node) pairs at distance ``d``, over the given sources and the
    nodes each reaches, itself included at ``d = 0`` (PGB's ``distance_distribution`` is
    this over all sources: ``np.bincount`` of every ``single_source_shortest_path_length``).
    The multi-source BFS of :func:`distance_statistics` without its per-source sums."""
    return _multi_source_bfs(graph, sources, False)[3]


def bfs_statistics(graph: Graph, sources) -> tuple[np.ndarray, ...]:
    """BFS from each source: (sum of distances, nodes reached, eccentricity, a farthest
    node), compiled (numba), O(n + m) per source. Without the farthest node,
    :func:`distance_statistics` gives the rest faster."""
    adj = graph.adjacency
    sources = np.asarray(sources, dtype=np.int64)
    return _bfs(adj.indptr, adj.indices, sources, graph.n_nodes)


def _largest_component(graph: Graph) -> np.ndarray:
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(graph.adjacency, directed=False)
    return np.flatnonzero(labels == np.argmax(np.bincount(labels)))


def path_statistics(graph: Graph, *, rng: np.random.Generator, n_sources: int = APL_SOURCES,
                    exact_max_nodes: int = EXACT_MAX_NODES) -> dict:
    """APL (with its standard error), diameter and radius, exact or sampled (module
    docstring). Returns a dict with keys ``apl``, ``apl_se``, ``diameter``, ``radius``,
    ``exact``."""
    n = graph.n_nodes
    if graph.n_edges == 0:
        nan = float("nan")
        return {"apl": nan, "apl_se": nan, "diameter": 0.0, "radius": 0.0, "exact": True}
    if n <= exact_max_nodes:
        dsum, reach, ecc = distance_statistics(graph, np.arange(n))
        apl = dsum.sum() / max(reach.sum(), 1)
        lcc = _largest_component(graph)
        return {"apl": float(apl), "apl_se": 0.0, "diameter": float(ecc[lcc].max()),
                "radius": float(ecc[lcc].min()), "exact": True}
    rng = check_rng(rng)
    sources = rng.integers(0, n, size=n_sources)
    dsum, reach, ecc = distance_statistics(graph, sources)
    ok = reach > 0
    d, r = dsum[ok].astype(float), reach[ok].astype(float)
    apl = d.sum() / r.sum()
    k = d.size
    # delta-method standard error of the ratio estimator
    resid = d - apl * r
    se = float(np.sqrt(np.sum(resid**2) / max(k - 1, 1) / k) / r.mean()) if k > 1 else np.nan
    # diameter lower bound: double sweeps from the farthest nodes of 4 sources in the LCC
    lcc = _largest_component(graph)
    in_lcc = np.zeros(n, bool)
    in_lcc[lcc] = True
    starts = rng.choice(lcc, size=min(4, lcc.size), replace=False)
    _, _, _, far1 = bfs_statistics(graph, starts)
    _, _, ecc2, _ = bfs_statistics(graph, far1)
    src_lcc = in_lcc[sources]
    diam = max(int(ecc2.max()), int(ecc[src_lcc].max(initial=0)))
    rad = int(ecc[src_lcc].min()) if src_lcc.any() else int(ecc2.min())
    return {"apl": float(apl), "apl_se": se, "diameter": float(diam), "radius": float(rad),
            "exact": False}


def _paths(graph: Graph, rng, *, truth: bool) -> dict:
    """One sampled BFS per graph for the five path metrics. They share
    ``average_path_length``'s random stream (``register_metric(stream=...)``), so the memo
    holds what any of them would compute alone, whichever runs first."""
    if truth:
        return memo(graph, "paths_truth", lambda: path_statistics(
            graph, rng=np.random.default_rng(0), n_sources=4 * APL_SOURCES))
    return memo(graph, ("paths", stream_key(rng)), lambda: path_statistics(graph, rng=rng))


@register_metric("average_path_length", kinds=Kind.GRAPH, higher_is_better=False,
                 label="average path length")
def average_path_length(truth, release, rng=None) -> float:
    """Average shortest-path length of the release over connected pairs (sala2011 Fig 7)."""
    release = _graphs(truth, release, "average_path_length")[1]
    return _paths(release, rng, truth=False)["apl"]


@register_metric("average_path_length_se", kinds=Kind.GRAPH, higher_is_better=False,
                 label="APL standard error", stream="average_path_length")
def average_path_length_se(truth, release, rng=None) -> float:
    """Standard error of :func:`average_path_length` (0 when computed exactly)."""
    release = _graphs(truth, release, "average_path_length_se")[1]
    return _paths(release, rng, truth=False)["apl_se"]


@register_metric("average_path_length_error", kinds=Kind.GRAPH, higher_is_better=False,
                 label="relative APL error", stream="average_path_length")
def average_path_length_error(truth, release, rng=None) -> float:
    """``|APL(release) / APL(truth) - 1|``."""
    truth, release = _graphs(truth, release, "average_path_length_error")
    at = _paths(truth, rng, truth=True)["apl"]
    ar = _paths(release, rng, truth=False)["apl"]
    return float(abs(ar / at - 1.0))


@register_metric("diameter", kinds=Kind.GRAPH, higher_is_better=False, label="diameter",
                 stream="average_path_length")
def diameter(truth, release, rng=None) -> float:
    """Diameter of the release's largest component (exact when small, else a lower bound)."""
    release = _graphs(truth, release, "diameter")[1]
    return _paths(release, rng, truth=False)["diameter"]


@register_metric("radius", kinds=Kind.GRAPH, higher_is_better=False, label="radius",
                 stream="average_path_length")
def radius(truth, release, rng=None) -> float:
    """Radius of the release's largest component (exact when small, else an upper bound)."""
    release = _graphs(truth, release, "radius")[1]
    return _paths(release, rng, truth=False)["radius"]
