"""Tests of rps_degree_sequence (qardaji2012 Sec 5: node-DP degree sequences by RPS).

Node neighbours (Sec 5.1): the same n nodes, one node's edges removed; every graph of the
universe has maximum degree <= Lambda. The brute-force tests enumerate every graph on 5 or
6 nodes.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from privpub.errors import DataError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.rps import (
    degree_quality_level_sensitivity,
    degree_quality_sensitivity,
    quality_degree,
)
from privpub.mechanisms.rps.degree import (
    CAVEAT,
    allocate,
    local_sensitivity_bound,
    rps_degree_sequence,
    smooth_sensitivity,
)
from privpub.metrics.distributions import ks
from privpub.registry import NODE_DP, get_mechanism
from privpub.testing import empirical_privacy_check
from privpub.types import DegreeSequence, Graph, Kind


# --------------------------------------------------------------------------- universe
def universe(n: int, lam: int):
    """Degree vectors of every graph on ``n`` nodes with max degree <= ``lam``, and the
    node-neighbour relation (both directions) as index arrays ``src -> dst``."""
    pairs = list(itertools.combinations(range(n), 2))
    masks = np.arange(1 << len(pairs), dtype=np.int64)
    bits = (masks[:, None] >> np.arange(len(pairs))) & 1
    incidence = np.zeros((len(pairs), n), dtype=np.int64)
    for p, (u, v) in enumerate(pairs):
        incidence[p, u] = incidence[p, v] = 1
    deg = bits @ incidence
    keep = deg.max(1) <= lam
    index = np.full(masks.size, -1)
    index[keep] = np.arange(keep.sum())
    deg, masks = deg[keep], masks[keep]
    src, dst = [], []
    for v in range(n):
        at_v = sum(1 << p for p, pr in enumerate(pairs) if v in pr)
        has = (masks & at_v) != 0
        g, h = np.flatnonzero(has), index[masks[has] & ~at_v]  # remove v's edges
        src += [g, h]
        dst += [h, g]
    return deg, np.concatenate(src), np.concatenate(dst)


UNIVERSES = [(5, 4), (5, 2), (6, 3)]


@pytest.fixture(scope="module")
def universes():
    return {key: universe(*key) for key in UNIVERSES}


def region_count(deg, a, b):
    return ((deg >= a) & (deg <= b)).sum(1)


def eq4(deg, a, b, s, n):
    r1 = ((deg >= a) & (deg < s)).sum(1)
    return quality_degree(r1, region_count(deg, a, b), n)


def max_change_per_region(deg, src, dst, n, lam):
    """{(a, b): per neighbour pair, max over cuts of |Delta q| (Eq 4)}."""
    out = {}
    for a in range(lam + 1):
        for b in range(a + 1, lam + 1):
            d = np.zeros(src.size)
            for s in range(a + 1, b + 1):
                q = eq4(deg, a, b, s, n)
                d = np.maximum(d, np.abs(q[src] - q[dst]))
            out[(a, b)] = d
    return out


def interval_partitions(lam):
    """Every partition of 0..lam into consecutive intervals (a tree level)."""
    for cuts in itertools.product((0, 1), repeat=lam):
        ends = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [lam + 1]
        yield [(ends[i], ends[i + 1] - 1) for i in range(len(ends) - 1)]


# --------------------------------------------------------------------------- Eq (4)
@pytest.mark.parametrize(("n", "lam"), UNIVERSES)
def test_eq4_sensitivity_per_region_brute_force(universes, n, lam):
    deg, src, dst = universes[(n, lam)]
    worst = max(d.max() for d in max_change_per_region(deg, src, dst, n, lam).values())
    assert worst <= degree_quality_sensitivity(lam, n) + 1e-12  # the paper's (2L+3)/(4n+2)
    assert worst <= 2 * (lam + 1) / (4 * n + 2) + 1e-12        # our tighter 2(L+1)/(4n+2)
    assert worst > 0
    if lam == n - 1:
        assert degree_quality_sensitivity(lam, n) == pytest.approx(0.5)


@pytest.mark.parametrize(("n", "lam"), UNIVERSES)
def test_level_and_leaf_vector_sensitivities_brute_force(universes, n, lam):
    """Summed over the regions of one tree level, Eq (4) changes by at most
    4 (Lambda + 1) / (4n + 2) (strict accounting); the leaf-count vector by at most
    2 (Lambda + 1) in L1, attained (e.g. a star's centre and single-degree leaves)."""
    deg, src, dst = universes[(n, lam)]
    per_region = max_change_per_region(deg, src, dst, n, lam)
    worst_level = worst_leaves = 0.0
    for part in interval_partitions(lam):
        total = sum((per_region[r] for r in part if r[0] < r[1]), np.zeros(src.size))
        worst_level = max(worst_level, total.max())
        counts = np.stack([region_count(deg, a, b) for a, b in part], 1)
        worst_leaves = max(worst_leaves, np.abs(counts[src] - counts[dst]).sum(1).max())
    assert worst_level <= degree_quality_level_sensitivity(lam, n) + 1e-12
    assert worst_leaves == 2 * (lam + 1)


def test_per_path_accounting_fails_under_node_neighbours():
    """The caveat of accounting='paper', with a witness: v is adjacent to four nodes of
    degree 3. Removing v's edges moves them to degree 2, out of region [3, 4] and into
    [1, 2]: Eq (4) changes by 8/(4n+2) in *each* region, 16/(4n+2) in total, more than the
    per-region sensitivity (2 Lambda + 3)/(4n+2) = 11/(4n+2) the paper charges per level."""
    v, u, w, x = 0, [1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]
    g_prime = nx.Graph()
    g_prime.add_nodes_from(range(13))
    g_prime.add_edges_from(itertools.combinations(w, 2))           # w: K4, degree 3
    g_prime.add_edges_from(zip(w, x, strict=True))                  # w: 4, x: 1
    g_prime.add_edges_from(zip(u, u[1:] + u[:1], strict=True))     # u: a 4-cycle, degree 2
    g = g_prime.copy()
    g.add_edges_from((v, ui) for ui in u)                           # u: 3, v: 4
    deg = np.array([[d for _, d in sorted(h.degree())] for h in (g, g_prime)])
    n, lam = 13, int(deg.max())
    assert lam == 4
    total = 0.0
    for a, b in [(1, 2), (3, 4)]:  # a tree level: [0, 0], [1, 2], [3, 4]
        q = eq4(deg, a, b, b, n)
        total += abs(q[0] - q[1])
        assert abs(q[0] - q[1]) == pytest.approx(8 / (4 * n + 2))
    assert total > degree_quality_sensitivity(lam, n)
    assert total <= degree_quality_level_sensitivity(lam, n)
    assert "not disjoint" in CAVEAT and "accounting='strict'" in CAVEAT


# --------------------------------------------------------------------------- smooth sensitivity
def numpy_bound(hists, a, b, lam, t):
    """A_t of the module docstring, re-implemented in numpy over many histograms."""
    prefix = np.concatenate([np.zeros((hists.shape[0], 1), int), np.cumsum(hists, 1)], 1)

    def window(x):
        return prefix[:, min(x + t, lam) + 1] - prefix[:, max(x - t, 0)]

    bnd = [x for x in ([a - 1, a] if a >= 1 else []) + ([b, b + 1] if b < lam else [])]
    if not bnd:
        return np.zeros(hists.shape[0])
    return 1.0 + np.minimum(lam, t + np.max([window(x) for x in bnd], axis=0))


@pytest.mark.parametrize(("n", "lam"), UNIVERSES)
def test_leaf_count_local_sensitivity_at_distance_t_brute_force(universes, n, lam):
    """For every region [a, b]: the exact largest local sensitivity of the count over all
    graphs within t node steps is <= A_t; the smooth bound S dominates exp(-beta t) times
    it for every t; and S(G) <= e^beta S(G') for neighbours."""
    deg, src, dst = universes[(n, lam)]
    hists = np.stack([np.bincount(d, minlength=lam + 1) for d in deg])
    uniq, inv = np.unique(hists, axis=0, return_inverse=True)
    inv = inv.ravel()
    beta = 0.3
    regions = [(a, b) for a in range(lam + 1) for b in range(a, lam + 1)]
    ra, rb = (np.array(r) for r in zip(*regions, strict=True))
    smooth_all = np.stack([smooth_sensitivity(h, ra, rb, lam, beta) for h in uniq])
    for i, (a, b) in enumerate(regions):
        c = region_count(deg, a, b)
        exact = np.zeros(deg.shape[0])  # largest LS over the graphs within distance t
        np.maximum.at(exact, src, np.abs(c[src] - c[dst]).astype(float))
        smooth = smooth_all[:, i]
        for t in range(2 * n):
            bound = numpy_bound(uniq, a, b, lam, t)
            assert np.all(exact <= bound[inv] + 1e-9), (a, b, t)
            assert np.all(smooth[inv] >= np.exp(-beta * t) * exact - 1e-9), (a, b, t)
            if t < 3:  # the numba implementation agrees with this one
                got = [local_sensitivity_bound(h, a, b, lam, t) for h in uniq[:20]]
                assert np.allclose(got, bound[:20])
            wider = exact.copy()
            np.maximum.at(wider, src, exact[dst])
            if np.array_equal(wider, exact):  # stable: later t only shrink e^{-beta t}
                break
            exact = wider
        assert np.all(smooth[inv[src]] <= np.exp(beta) * smooth[inv[dst]] + 1e-9)
        assert np.all(smooth >= 1.0 - 1e-12)


def test_smooth_sensitivity_examples():
    # 100 nodes of degree 5, one of degree 40; Lambda = 50
    hist = np.zeros(51, dtype=int)
    hist[5], hist[40] = 100, 1
    lam = 50
    # [30, 35]: no node within reach for small t: A_0 = 1, the bound grows with t
    assert local_sensitivity_bound(hist, 30, 35, lam, 0) == 1.0
    assert local_sensitivity_bound(hist, 30, 35, lam, 3) == 4.0  # 1 + t
    assert local_sensitivity_bound(hist, 30, 35, lam, 5) == 7.0  # node of degree 40 in reach
    # [5, 5]: 100 nodes at the boundary: saturated at Lambda + 1
    assert local_sensitivity_bound(hist, 5, 5, lam, 0) == lam + 1
    assert smooth_sensitivity(hist, 5, 5, lam, 0.1)[0] == pytest.approx(lam + 1)
    s = smooth_sensitivity(hist, 30, 35, lam, 0.1)[0]
    # at least max_t e^{-beta t} (1 + t) (t changed nodes can sit at a boundary)
    assert s >= max(np.exp(-0.1 * t) * (1 + t) for t in range(60)) - 1e-9
    assert s < lam + 1
    # the whole range: the count is n, the bound is the constant 1
    assert smooth_sensitivity(hist, 0, lam, lam, 0.1)[0] == 1.0
    with pytest.raises(PrivpubError, match="beta"):
        smooth_sensitivity(hist, 1, 2, lam, 0.0)
    with pytest.raises(PrivpubError, match="exceeds"):
        smooth_sensitivity(hist, 1, 2, 10, 0.1)


# --------------------------------------------------------------------------- mechanism
def small_pair():
    """G and its node neighbour G' (node 2's edges removed), 6 nodes."""
    edges = [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (2, 5)]
    g = Graph.from_edges(np.array(edges), 6)
    g_prime = Graph.from_edges(np.array([e for e in edges if 2 not in e]), 6)
    return g, g_prime


DEGREE_EVENTS = {
    "sum >= 6": lambda v: v.sum() >= 6,
    "sum >= 10": lambda v: v.sum() >= 10,
    "max >= 2": lambda v: v.max() >= 2,
    "max >= 4": lambda v: v.max() >= 4,
    "three zeros": lambda v: np.sum(v == 0) >= 3,
    "median >= 1": lambda v: np.median(v) >= 1,
}


def degree_check(accounting, n_trials, eps=1.0):
    g, g_prime = small_pair()

    def sampler(graph):
        def sample(rng):
            return rps_degree_sequence(graph, epsilon=eps, depth=2, degree_bound="n_minus_1",
                                       accounting=accounting, rng=rng).value.values
        return sample

    return empirical_privacy_check(sampler(g), sampler(g_prime), events=DEGREE_EVENTS,
                                   epsilon=eps, n_trials=n_trials, rng=np.random.default_rng(1),
                                   raise_on_violation=False)


@pytest.mark.parametrize("accounting", ["strict", "paper"])
def test_empirical_neighbour_test(accounting, monkeypatch):
    """G (degrees 2,2,4,2,1,1) and its node neighbour G' (1,1,0,1,1,0), Lambda = n - 1,
    eps = 1. On 6 nodes the calibrated noise hides most of the difference, so this is a
    sanity check; for the strict accounting the same events catch a leaf-count noise 50
    times too small. (The guarantees rest on the brute-force sensitivity tests above; in
    paper mode even noiseless counts leave the near-uniform random partition, which alone
    keeps G and G' within a factor ~e of each other here.)"""
    degree_check(accounting, 400).assert_passed()
    if accounting == "strict":
        import privpub.mechanisms.rps.degree as module

        real = module.laplace_mechanism
        monkeypatch.setattr(module, "laplace_mechanism", lambda v, *, sensitivity, **kw: real(
            v, sensitivity=sensitivity / 50, **kw))
        assert not degree_check(accounting, 250).passed


@pytest.mark.parametrize("accounting", ["paper", "strict"])
@pytest.mark.parametrize("bound", ["max_degree", "n_minus_1"])
def test_output_is_a_sorted_sequence_of_n_leaf_lower_bounds(accounting, bound):
    g = Graph.from_networkx(nx.barabasi_albert_graph(300, 3, seed=1))
    ledger = PrivacyLedger(2.0)
    release = rps_degree_sequence(g, epsilon=2.0, degree_bound=bound, accounting=accounting,
                                  rng=np.random.default_rng(0), ledger=ledger)
    seq = release.value
    assert isinstance(seq, DegreeSequence) and seq.values.size == g.n_nodes
    assert np.all(np.diff(seq.values) >= 0)
    lam = int(g.degrees().max()) if bound == "max_degree" else g.n_nodes - 1
    assert release.info["degree_bound"] == lam
    assert seq.values.min() >= 0 and seq.values.max() <= lam
    assert np.all(seq.values == np.floor(seq.values))
    assert 1 <= release.info["leaves"] <= 2 ** 15 and release.info["max_depth"] <= 15
    # per path at most epsilon; one profile branch per leaf depth
    branches: dict[str, float] = {}
    for e in ledger.entries:
        if e.primitive != "parallel":
            branches[e.path] = branches.get(e.path, 0.0) + e.epsilon
    assert max(branches.values()) <= 2.0 * (1 + 1e-9)
    assert ledger.spent == pytest.approx(max(branches.values()))
    labels = " ".join(e.label for e in ledger.entries)
    assert ("smooth" in labels) == (accounting == "paper")
    assert ("level-wide" in labels) == (accounting == "strict")


def test_utility_at_large_epsilon():
    """Lambda = max degree, eps = 10 (Fig 4a): the KS distance is small."""
    g = Graph.from_networkx(nx.barabasi_albert_graph(2000, 4, seed=2))
    truth = g.degree_sequence()
    got = [ks(truth, rps_degree_sequence(g, epsilon=10.0, rng=np.random.default_rng(s)).value)
           for s in range(3)]
    assert np.mean(got) < 0.15


def test_allocate():
    assert allocate([2.0, -1.0, 2.0], 5).tolist() in ([3, 0, 2], [2, 0, 3])
    assert allocate([0.0, -3.0], 4).tolist() == [2, 2]
    counts = allocate(np.random.default_rng(0).normal(10, 20, 50), 997)
    assert counts.sum() == 997 and counts.min() >= 0


def test_bad_arguments_raise_clear_errors():
    g, _ = small_pair()
    rng = np.random.default_rng(0)
    for kw, match in [
        ({"epsilon": 0}, "epsilon"), ({"epsilon": -2}, "epsilon"), ({"depth": -1}, "depth"),
        ({"degree_bound": "d_max"}, "degree_bound"), ({"accounting": "loose"}, "accounting"),
        ({"gamma": 1.5}, "gamma"), ({"split": 0}, "split"), ({"split": 1.0}, "split = 1"),
    ]:
        with pytest.raises(PrivpubError, match=match):
            rps_degree_sequence(g, rng=rng, **{"epsilon": 1.0, **kw})
    with pytest.raises(DataError):
        rps_degree_sequence(Graph.from_edges(np.empty((0, 2), int), 0), epsilon=1.0, rng=rng)
    with pytest.raises(DataError):
        rps_degree_sequence(np.eye(3), epsilon=1.0, rng=rng)


def test_edgeless_graph_and_depth_zero():
    g = Graph.from_edges(np.empty((0, 2), int), 4)
    out = rps_degree_sequence(g, epsilon=1.0, rng=np.random.default_rng(0))
    assert out.value.values.tolist() == [0, 0, 0, 0]
    g, _ = small_pair()
    out = rps_degree_sequence(g, epsilon=1.0, depth=0, rng=np.random.default_rng(0))
    assert out.info["leaves"] == 1 and out.value.values.tolist() == [0] * 6


def test_registration():
    info = get_mechanism("rps_degree_sequence")
    assert info.privacy == NODE_DP and info.paper == "qardaji2012"
    assert info.input_kind == Kind.GRAPH and info.output_kind == Kind.DEGREE_SEQUENCE
    assert info.caveat_for({}) == CAVEAT and "max_degree" in CAVEAT
    assert info.caveat_for({"accounting": "strict"}) == CAVEAT  # Lambda = d_max is not public
    assert info.caveat_for({"accounting": "strict", "degree_bound": "n_minus_1"}) is None
    assert info.parameters["depth"] == 15 and info.parameters["degree_bound"] == "max_degree"


def test_histogram_variant_counts_the_released_sequence():
    from privpub.data import load_dataset
    from privpub.mechanisms.rps.degree import rps_degree_histogram

    g = load_dataset("karate")
    seq = rps_degree_sequence(g, epsilon=1.0, rng=np.random.default_rng(7))
    hist = rps_degree_histogram(g, epsilon=1.0, rng=np.random.default_rng(7))
    expected = np.bincount(np.rint(seq.value.values).astype(int))
    np.testing.assert_array_equal(hist.value.counts, expected)
    assert hist.value.counts.sum() == g.n_nodes and hist.info == seq.info
