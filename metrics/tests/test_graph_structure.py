"""Graph-structure metrics of sala2011: dK-2 distance, degree CDF, assortativity, paths."""

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from privpub.algorithms.dk import joint_degree
from privpub.data import load_dataset
from privpub.errors import PrivpubError
from privpub.metrics.graph_structure import (
    assortativity,
    assortativity_error,
    average_path_length,
    average_path_length_error,
    average_path_length_se,
    bfs_statistics,
    degree_assortativity,
    degree_cdf_deviation,
    diameter,
    distance_statistics,
    dk2_distance,
    dk2_edges,
    dk2_max_degree,
    dk2_nodes,
    dk2_size,
    path_statistics,
    radius,
)
from privpub.types import DegreeHistogram, Graph, JointDegree


def random_graph(n, m, seed):
    return Graph.from_networkx(nx.gnm_random_graph(n, m, seed=seed))


def test_dk2_distance_and_table1_statistics():
    path = Graph.from_edges([(0, 1), (1, 2), (2, 3)])  # (1,2): 2, (2,2): 1
    star = Graph.from_edges([(0, 1), (0, 2), (0, 3)])  # (1,3): 3
    assert dk2_distance(path, star) == pytest.approx(np.sqrt(4 + 1 + 9))
    jp, js = joint_degree(path), joint_degree(star)
    assert dk2_distance(jp, js) == pytest.approx(np.sqrt(14))
    assert (dk2_size(jp, jp), dk2_nodes(jp, jp), dk2_edges(jp, jp), dk2_max_degree(jp, jp)) == (
        2, 4, 3, 2)
    noisy = JointDegree([1, 2], [2, 2], [-1.0, 0.4])
    assert dk2_edges(jp, noisy) == pytest.approx(0.4) and dk2_max_degree(jp, noisy) == 0
    with pytest.raises(PrivpubError):
        dk2_distance(jp, path)
    with pytest.raises(PrivpubError):
        dk2_size(DegreeHistogram([1.0]), DegreeHistogram([1.0]))


def test_degree_cdf_deviation():
    path = Graph.from_edges([(0, 1), (1, 2), (2, 3)])  # degrees 1 1 2 2: CDF(1) = 0.5
    star = Graph.from_edges([(0, 1), (0, 2), (0, 3)])  # 1 1 1 3: CDF(1) = 0.75, CDF(2) = .75
    assert degree_cdf_deviation(path, star) == pytest.approx(0.25)
    assert degree_cdf_deviation(path, path) == 0
    # isolated nodes are left out (the dK-2 model has none)
    assert degree_cdf_deviation(path, Graph.from_edges([(0, 1), (1, 2), (2, 3)], 9)) == 0


def test_assortativity_matches_networkx():
    for seed in range(5):
        g = random_graph(60, 150, seed)
        r = nx.degree_assortativity_coefficient(g.to_networkx())
        assert degree_assortativity(g) == pytest.approx(r, abs=1e-10)
        assert assortativity(g, g) == pytest.approx(r, abs=1e-10)
    karate = load_dataset("karate")
    other = random_graph(34, 78, 1)
    expected = abs(degree_assortativity(karate) - degree_assortativity(other))
    assert assortativity_error(karate, other) == pytest.approx(expected)


def _exact_apl(g: Graph):
    nxg = g.to_networkx()
    total = count = 0
    for _, lengths in nx.all_pairs_shortest_path_length(nxg):
        total += sum(lengths.values())
        count += len(lengths) - 1
    return total / count


def test_exact_paths_match_networkx():
    for seed in range(3):
        g = random_graph(80, 90, seed)  # disconnected: mean over connected pairs
        rng = np.random.default_rng(0)
        assert average_path_length(g, g, rng) == pytest.approx(_exact_apl(g))
        assert average_path_length_se(g, g, rng) == 0
        lcc = max(nx.connected_components(g.to_networkx()), key=len)
        sub = g.to_networkx().subgraph(lcc)
        assert diameter(g, g, rng) == nx.diameter(sub)
        assert radius(g, g, rng) == nx.radius(sub)


@pytest.mark.parametrize("seed", range(6))
def test_multi_source_bfs_equals_one_bfs_per_source(seed):
    """64 sources per traversal give each source's own sums, reach and eccentricity: more
    and fewer than 64 sources, repeated sources, isolated nodes, several components."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    g = random_graph(n, int(rng.integers(0, 3 * n)), seed)
    sources = rng.integers(0, n, size=int(rng.integers(1, 200)))
    sources[: min(3, sources.size)] = sources[0]
    multi = distance_statistics(g, sources)
    single = bfs_statistics(g, sources)[:3]
    for got, want in zip(multi, single, strict=True):
        np.testing.assert_array_equal(got, want)
    if n > 63:  # every bit position of a batch's word, including the top one
        every = distance_statistics(g, np.arange(n))
        for got, want in zip(every, bfs_statistics(g, np.arange(n))[:3], strict=True):
            np.testing.assert_array_equal(got, want)


def test_sampled_apl_is_within_its_error():
    g = load_dataset("chung_lu", n=6000, rng=np.random.default_rng(0))
    exact = path_statistics(g, rng=np.random.default_rng(0), exact_max_nodes=10**6)
    sampled = path_statistics(g, rng=np.random.default_rng(1))
    assert not sampled["exact"] and exact["exact"]
    assert abs(sampled["apl"] - exact["apl"]) < 4 * sampled["apl_se"]
    assert sampled["apl_se"] / sampled["apl"] < 0.01
    assert sampled["diameter"] <= exact["diameter"] and sampled["radius"] >= exact["radius"]


def test_apl_error_uses_the_truth_once():
    karate = load_dataset("karate")
    other = random_graph(34, 78, 3)
    rng = np.random.default_rng(0)
    expected = abs(_exact_apl(other) / _exact_apl(karate) - 1)
    assert average_path_length_error(karate, other, rng) == pytest.approx(expected)


def test_paths_of_tiny_graphs():
    empty = Graph.from_edges([], n_nodes=3)
    assert np.isnan(average_path_length(empty, empty, None))
    two = Graph.from_edges([(0, 1)])
    assert average_path_length(two, two, None) == 1 and diameter(two, two, None) == 1
    for n in range(2, 6):  # complete graphs
        k = Graph.from_edges(np.array(list(itertools.combinations(range(n), 2))))
        assert average_path_length(k, k, None) == 1


def test_path_metrics_agree_whichever_runs_first():
    """The five path metrics share one sampled BFS: a run asking only for the diameter gets
    what a run asking for the APL first gets (they draw from one stream)."""
    from privpub.registry import get_metric

    names = ["average_path_length", "average_path_length_se", "average_path_length_error",
             "diameter", "radius"]
    assert {get_metric(n).stream for n in names} == {"average_path_length"}
    truth = load_dataset("chung_lu", n=3500, rng=np.random.default_rng(0))

    def scores(order):
        release = load_dataset("chung_lu", n=3500, rng=np.random.default_rng(1))  # fresh memo
        return {n: get_metric(n).func(truth, release, rng=np.random.default_rng(7))
                for n in order}

    assert scores(names) == scores(names[::-1])


def test_one_graph_scored_in_two_repetitions_gets_each_its_own_sample():
    """The original graph is one object across a worker's trials: repetition 1 must not read
    repetition 0's sampled BFS (it did, so the Original's APL depended on scheduling)."""
    from privpub.metrics.graph_structure import average_path_length

    truth = load_dataset("chung_lu", n=3500, rng=np.random.default_rng(0))
    shared = load_dataset("chung_lu", n=3500, rng=np.random.default_rng(1))
    fresh = load_dataset("chung_lu", n=3500, rng=np.random.default_rng(1))
    average_path_length(truth, shared, np.random.default_rng(5))  # "repetition 0"
    assert average_path_length(truth, shared, np.random.default_rng(6)) == \
        average_path_length(truth, fresh, np.random.default_rng(6))


def test_relabelled_csr_is_the_permuted_graph():
    """The multi-source BFS runs on the graph renumbered in RCM order: node i of the copy
    is node order[i], and its neighbours are renumbered alike."""
    from privpub.metrics.graph_structure import _relabelled_csr

    rng = np.random.default_rng(3)
    g = random_graph(200, 700, 3)
    adj = g.adjacency
    order = rng.permutation(g.n_nodes)
    rank = np.empty(g.n_nodes, np.int32)
    rank[order] = np.arange(g.n_nodes, dtype=np.int32)
    indptr, indices = _relabelled_csr(adj.indptr, adj.indices, order, rank)
    assert indices.dtype == np.int32
    want = adj[order][:, order]
    got = sp.csr_array((np.ones(indices.size, bool), indices, indptr), shape=adj.shape)
    assert (got != want).nnz == 0
