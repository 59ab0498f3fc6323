"""Tests of pi_theta (day2016 Algorithm 1): reference equality, maximality, and Lemmas 1 and 4
by brute force over all graphs on up to five nodes and all their node neighbours."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numba import njit

from privpub.errors import DataError, PrivpubError
from privpub.mechanisms.degree_projection import (
    _all_theta_kernel,
    all_theta_histograms,
    cumhist_sensitivity,
    edge_order,
    hist_sensitivity,
    project_edge_addition,
    project_edges,
    projected_degrees,
    projection_edge_addition,
    projection_profile,
)
from privpub.mechanisms.theta_histogram import _candidates, _deviation_loss
from privpub.registry import NO_PRIVACY, get_mechanism
from privpub.testing import all_graphs
from privpub.types import DegreeHistogram, Graph, Release


# --------------------------------------------------------------------------- helpers
def reference_projection(edges, n, theta):
    """Algorithm 1 transcribed literally (pure Python)."""
    d = [0] * n
    kept = []
    for u, v in edges:
        if d[u] < theta and d[v] < theta:
            kept.append((u, v))
            d[u] += 1
            d[v] += 1
    return d, kept


def random_graph(rng, n, p):
    iu, ju = np.triu_indices(n, 1)
    pick = rng.random(iu.size) < p
    return Graph.from_edges(np.column_stack([iu[pick], ju[pick]]), n)


def lex(edge_list):
    return np.array(sorted(edge_list), dtype=np.int64).reshape(-1, 2)


def node_neighbours(edges, n, position):
    """Every G' = G + one node inserted at id ``position`` (ids >= position shift up by one,
    which keeps the lexicographic order of the old edges), one per subset of old nodes."""

    def relabel(x):
        return x if x < position else x + 1

    base = [(relabel(a), relabel(b)) for a, b in edges]
    others = [relabel(x) for x in range(n)]
    for mask in range(1 << n):
        new = [(min(o, position), max(o, position)) for i, o in enumerate(others) if mask >> i & 1]
        yield lex(base + new)


@njit(cache=True)
def _fold(h):
    """Bins 1..theta with degree 0 counted in bin 1 (as the mechanisms publish them)."""
    t = h.shape[0]
    out = np.zeros((t, t))
    for r in range(t):
        for d in range(1, t + 1):
            out[r, d - 1] = h[r, d]
        out[r, 0] += h[r, 0]
    return out


@njit(cache=True)
def neighbour_sweep(u, v, n, pos, theta_max, c_theta, c_off, c_starts):
    """Worst changes over all 2^n node neighbours G' of G (edges ``u < v`` in lexicographic
    order on ``n`` nodes): G' adds a node at id ``pos``, old ids ``>= pos`` shift up by one,
    and the new node is joined to every subset of the old nodes.

    Returns, for ``theta = 1..theta_max`` (index ``theta - 1``):

    - ``hist[theta]``: max ``||hist(pi_theta(G)) - hist(pi_theta(G'))||_1`` (degrees 0..theta)
    - ``cum[theta]``: the same for the cumulative histograms (bins 0..theta)
    - ``above[T, theta]``: max change of ``|{v : deg_{pi_T}(v) > theta}|``, ``theta <= T``
    - ``q[T]``: max change of Eq. (1) (noise term cancels) over all ``(theta, Omega)``
      candidates with ``theta <= T``, for ``Theta = T``; candidates as ``_candidates``.
    """
    T = theta_max
    base, _ = _all_theta_kernel(u, v, n, T)
    dev0 = _deviation_loss(_fold(base), c_theta, c_off, c_starts)
    hist_w = np.zeros(T, np.int64)
    cum_w = np.zeros(T, np.int64)
    above_w = np.zeros((T, T), np.int64)
    q_w = np.zeros(T)
    m = u.size
    keys = np.empty(m + n, np.int64)
    for mask in range(1 << n):
        k = 0
        for i in range(m):
            a = u[i] if u[i] < pos else u[i] + 1
            b = v[i] if v[i] < pos else v[i] + 1
            keys[k] = a * (n + 1) + b
            k += 1
        for x in range(n):
            if mask >> x & 1:
                o = x if x < pos else x + 1
                keys[k] = min(o, pos) * (n + 1) + max(o, pos)
                k += 1
        srt = np.sort(keys[:k])
        eu = srt // (n + 1)
        ev = srt % (n + 1)
        h, _ = _all_theta_kernel(eu, ev, n + 1, T)
        for t in range(1, T + 1):
            l1 = 0
            c1 = 0
            cg = 0
            ch = 0
            for d in range(t + 1):
                l1 += abs(base[t - 1, d] - h[t - 1, d])
                cg += base[t - 1, d]
                ch += h[t - 1, d]
                c1 += abs(cg - ch)
            hist_w[t - 1] = max(hist_w[t - 1], l1)
            cum_w[t - 1] = max(cum_w[t - 1], c1)
        dev = _deviation_loss(_fold(h), c_theta, c_off, c_starts)
        for tp in range(1, T + 1):
            diff = np.zeros(tp + 1, np.int64)  # diff[theta] = change of #{deg > theta}
            for t in range(1, tp + 1):
                for d in range(t + 1, tp + 1):
                    diff[t] += h[tp - 1, d] - base[tp - 1, d]
                above_w[tp - 1, t - 1] = max(above_w[tp - 1, t - 1], abs(diff[t]))
            for c in range(c_theta.size):
                t = c_theta[c]
                if t <= tp:
                    dq = abs(dev[c] - dev0[c] + 2.0 * diff[t])
                    q_w[tp - 1] = max(q_w[tp - 1], dq)
    return hist_w, cum_w, above_w, q_w


@functools.lru_cache(maxsize=8)
def sweep_all_graphs(n, positions=None):
    """:func:`neighbour_sweep` over every graph on ``n`` nodes and every insertion id; the
    element-wise maxima of its four results (``theta_max = n``)."""
    c_theta, _, c_off, c_starts = _candidates(n)
    out = None
    for g in all_graphs(n):
        u, v = edge_arrays(g)
        for pos in range(n + 1) if positions is None else positions:
            res = neighbour_sweep(u, v, n, pos, n, c_theta, c_off, c_starts)
            out = res if out is None else tuple(map(np.maximum, out, res))
    return out


def edge_arrays(g):
    """Contiguous int64 ``u, v`` of a graph's lexicographic edges (one compiled signature)."""
    e = g.edges().astype(np.int64)
    return np.ascontiguousarray(e[:, 0]), np.ascontiguousarray(e[:, 1])


def _sum_rows(a, b):
    """Row-wise L1 distance of two histogram matrices restricted to bins 0..theta."""
    t = np.arange(1, a.shape[0] + 1)[:, None]
    inside = np.arange(a.shape[1])[None, :] <= t
    return (np.abs(a - b) * inside).sum(axis=1)


# --------------------------------------------------------------------------- orders
def test_lexicographic_order_is_graph_edges():
    rng = np.random.default_rng(1)
    for n, p in [(1, 0.5), (7, 0.0), (12, 0.3), (40, 0.2)]:
        g = random_graph(rng, n, p)
        assert np.array_equal(edge_order(g), g.edges())
    g = random_graph(rng, 30, 0.3)
    sub = g.subgraph(rng.permutation(30)[:20])  # slicing may leave unsorted indices
    assert np.array_equal(edge_order(sub), sub.edges())


def test_random_order_is_a_seeded_stable_permutation():
    rng = np.random.default_rng(2)
    g = random_graph(rng, 30, 0.3)
    a = edge_order(g, order="random", rng=np.random.default_rng(5))
    b = edge_order(g, order="random", rng=np.random.default_rng(5))
    c = edge_order(g, order="random", rng=np.random.default_rng(6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert sorted(map(tuple, a.tolist())) == sorted(map(tuple, g.edges().tolist()))
    assert not np.array_equal(a, g.edges())
    # stable: a new node with a fresh (largest) id keeps the relative order of the old edges
    new = np.array([[i, 30] for i in range(0, 30, 3)])
    g2 = Graph.from_edges(np.vstack([g.edges(), new]), 31)
    a2 = edge_order(g2, order="random", rng=np.random.default_rng(5))
    assert np.array_equal(a2[a2[:, 1] != 30], a)


def test_random_order_needs_rng_and_names_are_checked():
    g = random_graph(np.random.default_rng(0), 5, 0.5)
    with pytest.raises(PrivpubError, match="rng"):
        edge_order(g, order="random")
    with pytest.raises(PrivpubError, match="rng"):
        projection_profile(g, 3, order="random")
    with pytest.raises(PrivpubError, match="order"):
        edge_order(g, order="bfs")
    with pytest.raises(PrivpubError, match="theta"):
        projected_degrees(g, 0)
    with pytest.raises(PrivpubError, match="theta"):
        project_edge_addition(g, 1.5)
    with pytest.raises(DataError, match="Graph"):
        projection_profile(g.adjacency, 3)


# --------------------------------------------------------------------------- correctness
@pytest.mark.parametrize("order", ["lexicographic", "random"])
def test_fast_routines_equal_reference(order):
    rng = np.random.default_rng(3)
    for n, p, theta_max in [(6, 0.6, 6), (25, 0.3, 12), (60, 0.15, 20), (40, 0.05, 3)]:
        g = random_graph(rng, n, p)
        g = Graph.from_edges(g.edges(), n + 2)  # two isolated nodes
        edges = edge_order(g, order=order, rng=np.random.default_rng(11))
        profile = projection_profile(g, theta_max, order=order, rng=np.random.default_rng(11))
        assert profile.n_edges == g.n_edges
        for theta in range(1, theta_max + 1):
            deg, kept = reference_projection(edges.tolist(), g.n_nodes, theta)
            want = np.bincount(deg, minlength=theta + 1)
            assert np.array_equal(profile.histograms[theta - 1, : theta + 1], want)
            assert not profile.histograms[theta - 1, theta + 1 :].any()
            assert profile.kept_edges[theta - 1] == len(kept)
            d2, keep = project_edges(edges, g.n_nodes, theta)
            assert np.array_equal(d2, deg) and keep.sum() == len(kept)
            assert np.array_equal(edges[keep], np.array(kept).reshape(-1, 2))
            assert np.array_equal(
                projected_degrees(g, theta, order=order, rng=np.random.default_rng(11)), deg
            )


# --------------------------------------------------------------------------- fast paths
_M64 = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def reference_edge_order(g, order, rng):
    """The stable edge orders as first written: the lexicographic edge list, for "random"
    stably argsorted by the keyed splitmix64 hash (pure Python), the key drawn from rng."""
    edges = g.edges()
    if order == "random":
        key = int(rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True))
        hashes = [_splitmix64(_splitmix64(key ^ a) ^ b) for a, b in edges.tolist()]
        edges = edges[np.argsort(np.array(hashes, dtype=np.uint64), kind="stable")]
    return edges


def _graphs(rng):
    yield Graph.from_edges(np.empty((0, 2), np.int64), 3)
    yield Graph.from_edges(np.array([[0, 1]]), 2)
    for n, p in [(7, 0.6), (40, 0.2), (150, 0.05), (400, 0.03)]:
        yield Graph.from_edges(random_graph(rng, n, p).edges(), n + 2)  # two isolated nodes
    # a few hubs: long rows in the CSR, most edges cut by the projection
    e = rng.integers(0, 500, (4000, 2))
    e[:, 0] = np.minimum(e[:, 0], rng.integers(0, 6, 4000))
    yield Graph.from_edges(e, 500)


@pytest.mark.parametrize("order", ["lexicographic", "random"])
def test_fast_paths_equal_first_implementation(order):
    """The CSR walk, the bucket-sorted random order, the packed and uint16 kernels and the
    lazy profile rows give what the first implementation gave (Algorithm 1 run literally on
    the reference order), on small random graphs, bit for bit."""
    from privpub.mechanisms import degree_projection as dp

    rng = np.random.default_rng(21)
    for g in _graphs(rng):
        want_edges = reference_edge_order(g, order, np.random.default_rng(7))
        assert np.array_equal(edge_order(g, order=order, rng=np.random.default_rng(7)),
                              want_edges)
        theta_max = 12
        lazy = projection_profile(g, theta_max, order=order, rng=np.random.default_rng(7))
        full = projection_profile(g, theta_max, order=order, rng=np.random.default_rng(7))
        if order == "lexicographic":
            dp._PROFILES.clear()
            full = projection_profile(g, theta_max)
        hist = full.histograms
        for theta in range(1, theta_max + 1):
            deg, kept = reference_projection(want_edges.tolist(), g.n_nodes, theta)
            row = np.bincount(np.array(deg, dtype=np.int64), minlength=theta + 1)
            assert np.array_equal(lazy.histogram(theta), row)
            assert lazy.edge_fraction(theta) == (len(kept) / g.n_edges if g.n_edges else 1.0)
            assert np.array_equal(hist[theta - 1, : theta + 1], row)
            assert full.kept_edges[theta - 1] == len(kept)
            got = projected_degrees(g, theta, order=order, rng=np.random.default_rng(7))
            assert got.dtype == np.int64 and np.array_equal(got, deg)
            rel = projection_edge_addition(g, theta=theta, order=order,
                                           rng=np.random.default_rng(7))
            assert np.array_equal(rel.value.counts, row)
        assert np.array_equal(lazy.nodes_above(), full.nodes_above())


def test_random_order_sorts_every_bucket_alike():
    """The bucket sort gives the same order whether its runs are sorted by insertion or by
    merge sorts, and breaks equal hashes by the packed pair (the stable order)."""
    from privpub.mechanisms import degree_projection as dp

    g = random_graph(np.random.default_rng(2), 300, 0.05)
    indptr, indices = g.adjacency.indptr, g.adjacency.indices
    key = np.uint64(0x1234_5678_9ABC_DEF0)
    a = dp._random_edges(indptr, indices, g.n_nodes, key, 64)
    b = dp._random_edges(indptr, indices, g.n_nodes, key, 0)
    assert np.array_equal(a, b)
    rng = np.random.default_rng(3)
    hk = rng.integers(0, 4, 200).astype(np.uint64)  # many ties
    pk = rng.permutation(200).astype(np.uint64)
    want = np.lexsort((pk, hk))
    for sort in (dp._sort_pairs, dp._sort_pairs_large):
        h, p = hk.copy(), pk.copy()
        sort(h, p, 0, 200)
        assert np.array_equal(p, pk[want]) and np.array_equal(h, hk[want])


def test_profile_cumulative_and_nodes_above():
    g = random_graph(np.random.default_rng(4), 30, 0.4)
    prof = projection_profile(g, 9)
    last = projected_degrees(g, 9)
    for theta in range(1, 10):
        assert prof.nodes_above()[theta - 1] == np.sum(last > theta)
        assert np.array_equal(prof.cumulative(theta), np.cumsum(prof.histogram(theta)))
    assert prof.edge_fraction(9) == prof.kept_edges[8] / g.n_edges
    with pytest.raises(PrivpubError, match="theta_max"):
        prof.histogram(10)


def test_projection_is_maximal_and_bounded():
    rng = np.random.default_rng(5)
    for n, p in [(10, 0.7), (50, 0.2), (80, 0.1)]:
        g = random_graph(rng, n, p)
        for theta in (1, 2, 3, 7):
            for order in ("lexicographic", "random"):
                h = project_edge_addition(g, theta, order=order, rng=np.random.default_rng(0))
                d = h.degrees()
                assert d.max(initial=0) <= theta
                kept = set(map(tuple, h.edges().tolist()))
                assert kept <= set(map(tuple, g.edges().tolist()))
                for u, v in g.edges().tolist():  # maximal: no further edge can be added
                    assert (u, v) in kept or d[u] == theta or d[v] == theta


def test_projection_example_of_figure_1_style():
    # theta = 1 on the path 0-1-2-3: edge addition keeps (0,1) and (2,3), which is maximal
    path = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 3]]))
    assert project_edge_addition(path, 1).edges().tolist() == [[0, 1], [2, 3]]


# --------------------------------------------------------------------------- Lemmas 1 and 4
def _check_pair(prof_g, prof_gp):
    theta = np.arange(1, prof_g.theta_max + 1)
    hist_l1 = _sum_rows(prof_g.histograms, prof_gp.histograms)
    cum_l1 = _sum_rows(np.cumsum(prof_g.histograms, 1), np.cumsum(prof_gp.histograms, 1))
    assert np.all(hist_l1 <= 2 * theta + 1), (hist_l1, prof_g, prof_gp)
    assert np.all(cum_l1 <= theta + 1), (cum_l1, prof_g, prof_gp)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_lemmas_1_and_4_all_graphs_up_to_five_nodes(n):
    """Every graph on n <= 5 nodes; every neighbour with one more node, at every id."""
    hist_w, cum_w, _, _ = sweep_all_graphs(n)
    theta = np.arange(1, n + 1)
    assert np.all(hist_w <= 2 * theta + 1), hist_w
    assert np.all(cum_w <= theta + 1), cum_w
    if n >= 2:  # the sweep attains the bounds, so it could have seen a violation
        assert np.array_equal(hist_w[: n - 1], 2 * theta[: n - 1] + 1)
        assert np.array_equal(cum_w, theta + 1)


def test_sweep_agrees_with_public_routines():
    """The compiled sweep computes what all_theta_histograms + numpy compute."""
    rng = np.random.default_rng(8)
    c_theta, _, c_off, c_starts = _candidates(4)
    for _ in range(5):
        g = random_graph(rng, 4, 0.5)
        pos = int(rng.integers(0, 5))
        e = g.edges()
        u, v = edge_arrays(g)
        hist_w, cum_w, _, _ = neighbour_sweep(u, v, 4, pos, 4, c_theta, c_off, c_starts)
        base = all_theta_histograms(e, 4, 4)
        want_h, want_c = np.zeros(4), np.zeros(4)
        for gp in node_neighbours(e.tolist(), 4, pos):
            prof = all_theta_histograms(gp, 5, 4)
            want_h = np.maximum(want_h, _sum_rows(base.histograms, prof.histograms))
            want_c = np.maximum(
                want_c, _sum_rows(np.cumsum(base.histograms, 1), np.cumsum(prof.histograms, 1))
            )
        assert np.array_equal(hist_w, want_h) and np.array_equal(cum_w, want_c)


def test_lemmas_1_and_4_random_graphs_and_orders():
    rng = np.random.default_rng(6)
    for trial in range(30):
        n = int(rng.integers(6, 11))
        g = random_graph(rng, n, rng.uniform(0.2, 0.8))
        theta_max = int(rng.integers(1, n + 1))
        if trial % 2:  # random order; the new node gets a fresh id (ids are identities)
            key = int(rng.integers(2**32))
            base = projection_profile(g, theta_max, order="random", rng=np.random.default_rng(key))
            for mask in rng.integers(0, 1 << n, size=25):
                new = np.array([[i, n] for i in range(n) if mask >> i & 1], dtype=np.int64)
                gp = Graph.from_edges(np.vstack([g.edges(), new.reshape(-1, 2)]), n + 1)
                prof = projection_profile(
                    gp, theta_max, order="random", rng=np.random.default_rng(key)
                )
                _check_pair(base, prof)
        else:  # lexicographic; the new node at a random id, others relabelled
            base = all_theta_histograms(g.edges(), n, theta_max)
            pos = int(rng.integers(0, n + 1))
            for i, gp in enumerate(node_neighbours(g.edges().tolist(), n, pos)):
                if i % 7 == 0:
                    _check_pair(base, all_theta_histograms(gp, n + 1, theta_max))


def test_sensitivity_helpers():
    assert hist_sensitivity(16) == 33 and cumhist_sensitivity(16) == 17


def test_worst_case_pair_attains_both_bounds():
    # a perfect matching plus a node adjacent to everyone: 2 theta + 1 and theta + 1 exactly
    theta = 3
    g = Graph.from_edges(np.array([[0, 1], [2, 3], [4, 5]]))
    gp = Graph.from_edges(np.vstack([g.edges(), [[i, 6] for i in range(6)]]))
    a = np.bincount(projected_degrees(g, theta), minlength=theta + 1)
    b = np.bincount(projected_degrees(gp, theta), minlength=theta + 1)
    assert np.abs(a - b).sum() == 2 * theta + 1
    assert np.abs(np.cumsum(a) - np.cumsum(b)).sum() == theta + 1


# --------------------------------------------------------------------------- Table 2
def test_registered_projection_release():
    info = get_mechanism("projection_edge_addition")
    assert info.privacy == NO_PRIVACY and info.paper == "day2016" and info.role == "mechanism"
    g = Graph.from_edges(np.array([[0, 1], [0, 2], [0, 3], [1, 2], [3, 4]]))
    out = projection_edge_addition(g, theta=2, rng=np.random.default_rng(0))
    assert isinstance(out, Release) and isinstance(out.value, DegreeHistogram)
    # pi_2 keeps (0,1), (0,2), (1,2), (3,4): degrees 2, 2, 2, 1, 1
    assert out.value.counts.tolist() == [0, 2, 3]
    assert out.diagnostics == {"edge_fraction": 0.8, "theta_bin": 3.0} and out.info == {}
    dropped = projection_edge_addition(g, theta=2, drop_theta_bin=True, rng=None)
    # true degrees 3, 2, 2, 2, 1: the true count of degree 2 (3) fills bin theta
    assert dropped.value.counts.tolist() == [0, 2, 3]
    dropped = projection_edge_addition(g, theta=1, drop_theta_bin=True, rng=None)
    assert dropped.value.counts.tolist() == [1, 1]  # bin 1 := true count of degree 1
    with pytest.raises(PrivpubError, match="drop_theta_bin"):
        projection_edge_addition(g, theta=2, drop_theta_bin="yes", rng=None)
    empty = projection_edge_addition(Graph.from_edges(np.empty((0, 2), int), 3), theta=1, rng=None)
    assert empty.diagnostics["edge_fraction"] == 1.0 and empty.value.counts.tolist() == [3, 0]


@pytest.mark.data
def test_table2_facebook_values():
    """day2016 Table 2, Facebook: our reading of "after removing the bin of theta"."""
    from privpub.data import load_dataset
    from privpub.metrics.distributions import l1_counts

    try:
        g = load_dataset("facebook", lcc=True)  # $PRIVPUB_DATA_DIR
    except DataError as exc:
        pytest.skip(f"facebook data not available: {exc}")
    truth = g.degree_histogram()
    got = {}
    for theta in (16, 64, 128):
        out = projection_edge_addition(g, theta=theta, drop_theta_bin=True, rng=None)
        full = projection_edge_addition(g, theta=theta, rng=None)
        got[theta] = (
            l1_counts(truth, out.value),
            round(out.diagnostics["edge_fraction"], 2),
            l1_counts(truth, full.value),
        )
    # paper: L1 3228 / 1313 / 801, |E'|/|E| 0.27 / 0.66 / 0.88
    assert got == {16: (3194, 0.27, 5144), 64: (1373, 0.66, 2032), 128: (898, 0.87, 1128)}


def test_node_neighbour_generator():
    # G = the edge (0, 1); the new node at id 1 relabels old node 1 to 2
    out = [x.tolist() for x in node_neighbours([(0, 1)], 2, 1)]
    assert out == [[[0, 2]], [[0, 1], [0, 2]], [[0, 2], [1, 2]], [[0, 1], [0, 2], [1, 2]]]
