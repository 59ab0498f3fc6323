"""dK-2 extraction, its sensitivity (brute force), realizability repair and generation."""

import itertools

import networkx as nx
import numpy as np
import pytest

from privpub.algorithms.dk import (
    dk2_euclidean,
    dk2_l1,
    from_networkx_dict,
    generate_graph,
    is_realizable,
    joint_degree,
    node_counts,
    repair_joint_degree,
    to_networkx_dict,
)
from privpub.data import load_dataset
from privpub.errors import PrivpubError
from privpub.types import Graph, JointDegree


def cells(jd: JointDegree) -> dict:
    pairs = zip(jd.low.tolist(), jd.high.tolist(), jd.counts, strict=True)
    return {(lo, hi): c for lo, hi, c in pairs}


# --------------------------------------------------------------------------- extraction
def test_dk2_of_hand_made_graphs():
    path = Graph.from_edges([(0, 1), (1, 2), (2, 3)])  # degrees 1 2 2 1
    assert cells(joint_degree(path)) == {(1, 2): 2, (2, 2): 1}
    star = Graph.from_edges([(0, 1), (0, 2), (0, 3)])
    assert cells(joint_degree(star)) == {(1, 3): 3}
    # triangle 0-1-2 with a pendant 3 on node 0: degrees 3 2 2 1
    tri = Graph.from_edges([(0, 1), (0, 2), (1, 2), (0, 3)])
    assert cells(joint_degree(tri)) == {(2, 3): 2, (2, 2): 1, (1, 3): 1}
    # isolated nodes appear nowhere; the empty graph has an empty series
    assert cells(joint_degree(Graph.from_edges([(0, 1)], n_nodes=5))) == {(1, 1): 1}
    assert joint_degree(Graph.from_edges([], n_nodes=3)).size == 0


def test_dk2_is_beta_ordered_and_matches_networkx():
    g = load_dataset("karate")
    jd = joint_degree(g)
    key = jd.high * 100 + jd.low
    assert np.all(np.diff(key) > 0)  # by larger degree, then smaller
    mixing = nx.degree_mixing_dict(g.to_networkx())  # both orientations of every edge
    for (lo, hi), c in cells(jd).items():
        assert mixing[lo][hi] == (2 * c if lo == hi else c)
    assert jd.counts.sum() == g.n_edges
    assert node_counts(jd)[1:].sum() == g.n_nodes  # karate has no isolated node


def test_networkx_dict_round_trip():
    jd = joint_degree(load_dataset("les_miserables"))
    d = to_networkx_dict(jd)
    assert nx.is_valid_joint_degree(d)
    assert cells(from_networkx_dict(d)) == cells(jd)


def test_distances():
    a = JointDegree([1, 2], [2, 2], [3.0, 1.0])
    b = JointDegree([1, 1], [2, 3], [1.0, 2.0])
    # union of cells: (1,2): 3 vs 1, (2,2): 1 vs 0, (1,3): 0 vs 2
    assert dk2_euclidean(a, b) == pytest.approx(np.sqrt(4 + 1 + 4))
    assert dk2_l1(a, b) == pytest.approx(5.0)


# --------------------------------------------------------------------------- sensitivity
def _all_graph_series(n):
    """dK-2 series (dict) and max degree of every graph on n nodes, indexed by edge mask."""
    pairs = list(itertools.combinations(range(n), 2))
    out = []
    for mask in range(1 << len(pairs)):
        edges = [p for i, p in enumerate(pairs) if mask >> i & 1]
        deg = [0] * n
        for u, v in edges:
            deg[u] += 1
            deg[v] += 1
        series = {}
        for u, v in edges:
            key = (min(deg[u], deg[v]), max(deg[u], deg[v]))
            series[key] = series.get(key, 0) + 1
        out.append((series, max(deg)))
    return pairs, out


@pytest.mark.parametrize("n", [5, 6])
def test_lemma1_bound_and_weighted_bound_by_brute_force(n):
    """Over every graph on n nodes and every edge neighbour:

    - Lemma 1: the L1 change is at most 4 d_max + 1, even with d_max the *smaller* of the two
      graphs' maximum degrees (so the graph's own d_max bounds all its neighbours);
    - the weighted change sum_c |Delta_c| / (4 max(c) + 1) is < 1 (the bound behind
      drc_honest, mechanisms/drc.py).
    """
    pairs, series = _all_graph_series(n)
    worst_l1 = worst_w = 0.0
    reached = False
    for mask, (s, dmax) in enumerate(series):
        for bit in range(len(pairs)):
            other = mask ^ (1 << bit)
            if other < mask:
                continue
            s2, dmax2 = series[other]
            keys = set(s) | set(s2)
            diff = {k: s.get(k, 0) - s2.get(k, 0) for k in keys}
            l1 = sum(abs(v) for v in diff.values())
            w = sum(abs(v) / (4 * max(k) + 1) for k, v in diff.items())
            bound = 4 * min(dmax, dmax2) + 1
            assert l1 <= bound, (mask, other, l1, bound)
            reached |= l1 == 4 * max(dmax, dmax2) - 3  # 2 (d + d') + 1 with d = d' = d_max - 1
            worst_l1 = max(worst_l1, l1)
            worst_w = max(worst_w, w)
    assert reached  # the bound 2 (d + d') + 1 is attained
    assert worst_w < 1.0
    assert worst_w > 0.7  # and not loose: 0.733 at n = 5 (two degree-1 nodes joined)


def test_weighted_bound_on_random_larger_graphs():
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(40):
        g = nx.gnm_random_graph(40, int(rng.integers(40, 300)), seed=int(rng.integers(10**6)))
        base = Graph.from_networkx(g)
        s = cells(joint_degree(base))
        edges = {tuple(e) for e in base.edges().tolist()}
        for _ in range(20):
            u, v = sorted(rng.choice(40, 2, replace=False).tolist())
            other = Graph.from_edges(np.array(sorted(edges ^ {(u, v)})), 40)
            s2 = cells(joint_degree(other))
            w = sum(abs(s.get(k, 0) - s2.get(k, 0)) / (4 * max(k) + 1) for k in set(s) | set(s2))
            worst = max(worst, w)
    assert worst < 1.0


# --------------------------------------------------------------------------- repair
@pytest.mark.parametrize("scale", [0.5, 3.0, 20.0, 200.0])
def test_repair_always_realizable(scale):
    rng = np.random.default_rng(int(scale * 10))
    for name in ("karate", "les_miserables", "florentine_families"):
        jd = joint_degree(load_dataset(name))
        for _ in range(30):
            noise = rng.laplace(0, scale, jd.size) * (1 + jd.high / 4)
            noisy = JointDegree(jd.low, jd.high, jd.counts + noise)
            fixed, info = repair_joint_degree(noisy)
            assert is_realizable(fixed)
            assert nx.is_valid_joint_degree(to_networkx_dict(fixed))
            assert info["edges"] == fixed.counts.sum()


def random_cells(rng, max_cells, max_degree):
    """Distinct random cells ``(low, high)``, beta-ordered: fewer than ``max_cells`` of them,
    degrees below ``max_degree``."""
    m = int(rng.integers(1, max_cells))
    hi = rng.integers(1, max_degree, m)
    lo = np.array([rng.integers(1, h + 1) for h in hi])
    key = np.unique(hi * max_degree + lo)
    return key % max_degree, key // max_degree


def test_repair_of_arbitrary_series():
    rng = np.random.default_rng(0)
    for _ in range(300):
        low, high = random_cells(rng, 40, 60)
        jd = JointDegree(low, high, rng.normal(0, 30, low.size))
        fixed, _ = repair_joint_degree(jd)
        assert is_realizable(fixed) and nx.is_valid_joint_degree(to_networkx_dict(fixed))


def test_repair_keeps_a_realizable_series_and_reads_only_its_input():
    jd = joint_degree(load_dataset("karate"))
    fixed, info = repair_joint_degree(jd)
    assert cells(fixed) == cells(jd) and info["l1"] == 0
    with pytest.raises(PrivpubError):
        repair_joint_degree(JointDegree([1], [1], [np.nan]))


def test_is_realizable_agrees_with_networkx():
    rng = np.random.default_rng(5)
    for _ in range(300):
        low, high = random_cells(rng, 8, 6)
        jd = JointDegree(low, high, rng.integers(0, 6, low.size).astype(float))
        assert is_realizable(jd) == nx.is_valid_joint_degree(to_networkx_dict(jd))


# --------------------------------------------------------------------------- generation
@pytest.mark.parametrize("generator", ["networkx", "stub_matching"])
@pytest.mark.parametrize("name", ["karate", "les_miserables", "chung_lu"])
def test_generator_reproduces_a_noiseless_dk2_exactly(name, generator):
    options = {"n": 2000} if name == "chung_lu" else {}
    g = load_dataset(name, rng=np.random.default_rng(1), **options)
    jd = joint_degree(g)
    h, report = generate_graph(jd, rng=np.random.default_rng(2), generator=generator)
    assert cells(joint_degree(h)) == cells(jd)
    assert report.dropped == 0 and report.l1_to_target == 0
    assert h.n_edges == g.n_edges


def test_stub_matching_on_repaired_noisy_series():
    jd = joint_degree(load_dataset("chung_lu", n=3000, rng=np.random.default_rng(0)))
    rng = np.random.default_rng(4)
    for eps in (5.0, 100.0):
        noisy = JointDegree(jd.low, jd.high, jd.counts + rng.laplace(0, 1, jd.size)
                            * (4 * jd.high + 1) / eps)
        target, _ = repair_joint_degree(noisy)
        h, report = generate_graph(target, rng=rng, generator="stub_matching", mixing=1)
        # the graph meets its target up to what the simplification dropped (reported)
        assert report.dropped <= 0.001 * target.counts.sum() + 1
        assert dk2_l1(joint_degree(h), target) == report.l1_to_target


def test_generation_refuses_an_unrealizable_series():
    with pytest.raises(PrivpubError, match="not realizable"):
        generate_graph(JointDegree([1], [2], [1.0]), rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError):
        generate_graph(JointDegree([1], [1], [1.0]), rng=np.random.default_rng(0),
                       generator="nope")


def test_havel_hakimi_builds_every_graphical_sequence():
    from privpub.algorithms.dk.stub_matching import _havel_hakimi

    rng = np.random.default_rng(1)
    tested = 0
    for _ in range(1500):
        n = int(rng.integers(2, 25))
        deg = rng.integers(0, n, n)
        if deg.sum() % 2:
            deg[0] = deg[0] + 1 if deg[0] < n - 1 else deg[0] - 1
        if not nx.is_graphical(deg.tolist()):
            continue
        tested += 1
        m = int(deg.sum()) // 2
        u, v = np.zeros(m, np.int64), np.zeros(m, np.int64)
        _havel_hakimi(deg.copy(), 3, u, v, 0, rng)
        assert np.all(u != v)
        assert len({(min(a, b), max(a, b)) for a, b in zip(u, v, strict=True)}) == m
        assert np.array_equal(np.bincount(np.concatenate([u, v]) - 3, minlength=n), deg)
    assert tested > 300


def test_stub_matching_is_exact_on_small_dense_classes():
    jd = joint_degree(load_dataset("les_miserables"))  # a near-clique among its hubs
    for seed in range(30):
        _, report = generate_graph(jd, rng=np.random.default_rng(seed), generator="stub_matching")
        assert report.dropped == 0


# --------------------------------------------------------------------------- networkx port
# generate_graph(generator="networkx") runs privpub.algorithms.dk.joint_degree_graph, a compiled
# port
# of networkx.joint_degree_graph that must give networkx's graph for the same seed: the same
# node count and the same edges in the same order as list(G.edges()). Real networkx (and
# CPython's random and set) is the reference here.
def _nx_edge_list(g) -> np.ndarray:
    return np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)


def _nx_dict_of(g) -> dict:
    return to_networkx_dict(joint_degree(Graph.from_networkx(g)))


def _assert_port_matches_networkx(d: dict, seed: int) -> int:
    """The port's edge list equals networkx's, edge for edge; returns its switch count."""
    from privpub.algorithms.dk import joint_degree_graph

    ref = nx.joint_degree_graph(d, seed=seed)
    edges, n_nodes, switches = joint_degree_graph(d, seed)
    assert n_nodes == ref.number_of_nodes()
    assert edges.dtype == np.int64 and edges.shape == (ref.number_of_edges(), 2)
    assert np.array_equal(edges, _nx_edge_list(ref)), f"edge lists differ (seed {seed})"
    return switches


def test_networkx_port_mersenne_twister_matches_python_random():
    import random

    from privpub.algorithms.dk.networkx_port import _mt_next, _mt_state, _randbelow

    for seed in (0, 1, 7, 12345, 2**31 - 2, 2**40 + 3):
        st, ref = _mt_state(seed), random.Random(seed)
        # 2000 words: the first draw twists, and three more twists follow
        assert [_mt_next(st) for _ in range(2000)] == [ref.getrandbits(32) for _ in range(2000)]
        ns = (1, 2, 3, 5, 8, 100, 1000, 65537, 2**31 - 1, 2**32 - 1)
        got = [_randbelow(st, n) for _ in range(150) for n in ns]
        assert got == [ref.randrange(n) for _ in range(150) for n in ns]


def test_networkx_port_set_order_matches_cpython():
    from privpub.algorithms.dk.networkx_port import _pyset_order

    rng = np.random.default_rng(11)
    sizes = list(range(1, 260)) + [1000, 4099, 50000, 65536, 100_000, 200_000]
    cases = 0
    for size in sizes:
        for density in (1.0, 0.8, 0.3, 0.02):
            if size > 5000 and density < 1.0 and rng.random() < 0.5:
                continue
            offset = int(rng.integers(0, 3_000_000))  # not aligned to any table size
            keep = rng.random(size) < density
            # the pattern of networkx: a comprehension over a range with holes (ascending)
            ref = {v for v in range(offset, offset + size) if keep[v - offset]}
            elems = np.arange(offset, offset + size)[keep]
            shuffled = rng.permutation(elems)
            ref_shuffled = {int(v) for v in shuffled}  # any insertion order
            for built, order in ((elems, list(ref)), (shuffled, list(ref_shuffled))):
                out = np.empty(built.size, np.int64)
                tabs = np.empty((2, 8 * built.size + 8), np.int64)
                assert _pyset_order(built, out, tabs) == built.size
                assert out.tolist() == order, (size, density, offset)
                cases += 1
    assert cases > 2000


def test_networkx_port_on_the_networkx_docstring_example():
    d = {1: {4: 1}, 2: {2: 2, 3: 2, 4: 2}, 3: {2: 2, 4: 1}, 4: {1: 1, 2: 2, 3: 1}}
    for seed in range(40):
        _assert_port_matches_networkx(d, seed)


def test_networkx_port_equals_networkx_on_many_jdms():
    switches, diagonal, differ = 0, 0, 0
    for i in range(12):
        graphs = [
            nx.gnm_random_graph(60, 400, seed=i),  # dense classes: many neighbour switches
            nx.gnm_random_graph(25, 200, seed=i),  # near-complete, diagonal cells
            nx.powerlaw_cluster_graph(200, 3, 0.5, seed=i),
            nx.barabasi_albert_graph(300, 2 + i % 4, seed=i),
        ]
        for g in graphs:
            d = _nx_dict_of(g)
            diagonal += any(k in row for k, row in d.items())
            for seed in (i, 1000 + i, 2**31 - 2 - i):
                switches += _assert_port_matches_networkx(d, seed)
            # the comparison is not vacuous: another seed gives another edge list
            a = _nx_edge_list(nx.joint_degree_graph(d, seed=i))
            b = _nx_edge_list(nx.joint_degree_graph(d, seed=i + 1))
            differ += not np.array_equal(a, b)
    # repaired noisy series, as the dK-2 mechanisms generate them
    rng = np.random.default_rng(3)
    for name in ("karate", "les_miserables"):
        jd = joint_degree(load_dataset(name))
        for _ in range(4):
            noisy = JointDegree(jd.low, jd.high, jd.counts + rng.laplace(0, 2, jd.size))
            target, _ = repair_joint_degree(noisy)
            for seed in range(3):
                switches += _assert_port_matches_networkx(to_networkx_dict(target), seed)
    assert switches > 10_000 and diagonal >= 40 and differ >= 40


def test_networkx_port_on_a_large_jdm():
    g = nx.barabasi_albert_graph(25_000, 4, seed=5)  # ~100k edges, one hub class per degree
    assert g.number_of_edges() > 99_000
    assert _assert_port_matches_networkx(_nx_dict_of(g), 2024) > 0


@pytest.mark.parametrize("name", ["karate", "les_miserables", "chung_lu"])
def test_generate_graph_networkx_path_is_the_old_networkx_call(name):
    options = {"n": 2000} if name == "chung_lu" else {}
    jd = joint_degree(load_dataset(name, rng=np.random.default_rng(1), **options))
    for s in range(3):
        h, report = generate_graph(jd, rng=np.random.default_rng(s), generator="networkx")
        # what generate_graph did when it called networkx itself
        rng = np.random.default_rng(s)
        ref = nx.joint_degree_graph(to_networkx_dict(jd), seed=int(rng.integers(2**31 - 1)))
        perm = rng.permutation(ref.number_of_nodes())
        expected = Graph.from_edges(perm[_nx_edge_list(ref)], ref.number_of_nodes())
        assert h.n_nodes == expected.n_nodes
        assert np.array_equal(h.edges(), expected.edges())
        assert report.generator == "networkx" and report.dropped == 0 and report.swaps == 0


def test_joint_degree_is_computed_once_per_graph_and_returned_as_a_copy(monkeypatch):
    """The series of a graph object is kept while the graph lives (a worker's trials share
    their dataset object): the same cells, a copy each call, emptied by cache.cold()."""
    from privpub.algorithms.dk import series
    from privpub.cache import cold

    g = Graph.from_networkx(nx.karate_club_graph())
    calls = []
    real = series._joint_degree
    monkeypatch.setattr(series, "_joint_degree", lambda graph: calls.append(1) or real(graph))
    first = joint_degree(g)
    first.counts[:] = -1.0  # a caller's changes stay its own
    second = joint_degree(g)
    assert len(calls) == 1 and np.all(second.counts > 0)
    want = real(g)
    for a, b in ((second.low, want.low), (second.high, want.high), (second.counts, want.counts)):
        np.testing.assert_array_equal(a, b)
    with cold():
        joint_degree(g)
    assert len(calls) == 2
