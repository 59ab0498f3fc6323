"""Egocentric betweenness (farias2021 Def 5.1) and its sensitivities (Lemma 5.2, Def 5.3)."""

import itertools

import networkx as nx
import numpy as np
import pytest

from privpub.algorithms.centrality import (
    cached_ebc,
    degree_bound_of,
    ebc_delta,
    ebc_global_sensitivity,
    ebc_ranking,
    ebc_shift_penalty,
    egocentric_betweenness,
)
from privpub.algorithms.dampening import dampening_penalty
from privpub.errors import PrivpubError
from privpub.testing import graph_edge_neighbours
from privpub.types import Graph

#: farias2021 Fig. 1b / 2a, reconstructed from Examples 1.1, 2.6, 3.2 and 3.9: a ~ b,
#: a ~ v0..v3, b ~ v2..v5, v0 ~ v1, v4 ~ v5 (every number the text gives about it holds).
NAMES = ["a", "b", "v0", "v1", "v2", "v3", "v4", "v5"]
IX = {n: i for i, n in enumerate(NAMES)}
FIG1B = [("a", "b"), ("a", "v0"), ("a", "v1"), ("a", "v2"), ("a", "v3"), ("b", "v2"),
         ("b", "v3"), ("b", "v4"), ("b", "v5"), ("v0", "v1"), ("v4", "v5")]
FIG1A = [("a", "b")] + [(x, f"v{i}") for x in "ab" for i in range(6)]


def graph_of(edges, n=8):
    return Graph.from_edges(np.array([[IX[u], IX[v]] for u, v in edges]), n)


def element_ls(g):
    """LS(G, 0, v) for every v by brute force over all edge neighbours."""
    e = egocentric_betweenness(g)
    return np.max([np.abs(egocentric_betweenness(h) - e) for h in graph_edge_neighbours(g)], axis=0)


def nx_ebc(g: nx.Graph) -> np.ndarray:
    return np.array(
        [nx.betweenness_centrality(nx.ego_graph(g, v), normalized=False)[v] for v in sorted(g)]
    )


@pytest.mark.parametrize("seed", range(12))
def test_matches_networkx_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    g = nx.gnp_random_graph(n, float(rng.uniform(0.05, 0.6)), seed=seed)
    np.testing.assert_allclose(egocentric_betweenness(Graph.from_networkx(g)), nx_ebc(g),
                               rtol=0, atol=1e-9)


def test_matches_networkx_with_a_hub():
    # a hub whose neighbours share many neighbours: the 1 / (1 + common) terms matter
    g = nx.barabasi_albert_graph(300, 6, seed=3)
    g.add_edges_from((0, v) for v in range(1, 300))
    ebc = egocentric_betweenness(Graph.from_networkx(g))
    for v in (0, 1, 2, 50, 299):
        ref = nx.betweenness_centrality(nx.ego_graph(g, v), normalized=False)[v]
        assert ebc[v] == pytest.approx(ref, abs=1e-8)


def test_one_per_pair_would_overstate():
    # a diamond: 0's neighbours 1 and 3 are not adjacent but share 2, so the pair counts 1/2
    # (adding 1 per non-adjacent pair would give 1); nx agrees
    g = nx.Graph([(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)])
    assert egocentric_betweenness(Graph.from_networkx(g)).tolist() == [0.5, 0.0, 0.5, 0.0]
    np.testing.assert_allclose(nx_ebc(g), [0.5, 0.0, 0.5, 0.0])


def test_paper_figure_1():
    e = dict(zip(NAMES, egocentric_betweenness(graph_of(FIG1A)), strict=True))
    assert e["a"] == e["b"] == 7.5  # Example 1.1: 15 pairs, 0.5 each
    without_ab = graph_of(FIG1A[1:])
    assert egocentric_betweenness(without_ab)[IX["a"]] == 15.0  # removing (a, b)
    g = graph_of(FIG1B)
    e = egocentric_betweenness(g)
    assert e[IX["a"]] == e[IX["b"]] == 6.5 and not e[2:].any()  # Examples 1.1, 3.9
    # Example 1.1: removing (a, v0) shrinks EBC(a) by 3, the local sensitivity (Ex. 2.6)
    assert e[IX["a"]] - egocentric_betweenness(graph_of(FIG1B[:1] + FIG1B[2:]))[IX["a"]] == 3
    ls0 = element_ls(g)
    assert ls0.max() == 3 and ls0[IX["a"]] == 3 and ls0[IX["v4"]] == 2  # Ex. 2.6, 3.2
    # Example 3.2: adding (v0, v4) raises EBC(v4) by 2
    plus = graph_of([*FIG1B, ("v0", "v4")])
    assert egocentric_betweenness(plus)[IX["v4"]] == 2
    # Example 2.6: LS(G, 1) = 5, via G' = G - (a, v0) + (b, v0) for node b
    g1 = graph_of(FIG1B[:1] + FIG1B[2:])
    assert (egocentric_betweenness(graph_of([*FIG1B[:1], *FIG1B[2:], ("b", "v0")]))[IX["b"]]
            - egocentric_betweenness(g1)[IX["b"]]) == 5
    ls1 = np.max([element_ls(h) for h in graph_edge_neighbours(g)] + [ls0], axis=0)
    assert ls1.max() == 5 and ls1[IX["a"]] == 5  # Example 4.2


def test_global_sensitivity_values():
    # farias2021 Sec 6.1 prints 22,361,076.5 (Github), 477,826.5 "DBLP", 29,326.5 "Enron";
    # Lemma 5.2 with the maximum degrees 9,458 / 1,383 (Enron) / 343 (DBLP) gives the same
    # three numbers with Enron's and DBLP's swapped.
    assert ebc_global_sensitivity(9458) == 22_361_076.5
    assert ebc_global_sensitivity(1383) == 477_826.5
    assert ebc_global_sensitivity(343) == 29_326.5
    assert ebc_global_sensitivity(3) == 3 and ebc_global_sensitivity(0) == 0


def five_node_graphs():
    """Every graph on 5 nodes by edge bitmask; flipping bit i gives its i-th neighbour."""
    pairs = list(itertools.combinations(range(5), 2))
    for mask in range(1 << len(pairs)):
        edges = np.array([p for i, p in enumerate(pairs) if mask >> i & 1]).reshape(-1, 2)
        yield mask, Graph.from_edges(edges, 5)


def test_lemma_5_2_and_definition_5_3_by_brute_force():
    """Every 5-node graph and each of its 10 neighbours: the change of every node's EBC is
    within Lemma 5.2's bound and within delta^EBC(G, 0, v) (admissibility, condition 1)."""
    graphs = dict(five_node_graphs())
    ebc = {m: egocentric_betweenness(g) for m, g in graphs.items()}
    degrees = {m: g.degrees() for m, g in graphs.items()}
    worst_global = worst_element = 0.0
    for m in graphs:
        bound = ebc_delta(degrees[m], 0)
        for i in range(10):
            other = m ^ (1 << i)
            change = np.abs(ebc[m] - ebc[other])
            d = max(degrees[m].max(), degrees[other].max())
            worst_global = max(worst_global, change.max() / max(ebc_global_sensitivity(d), 1e-12))
            assert (change <= bound + 1e-12).all()
            worst_element = max(worst_element, (change / np.maximum(bound, 1e-12)).max())
    assert worst_global <= 1.0 + 1e-12
    assert worst_element > 0.5  # the bound is not vacuous here


def test_delta_condition_2_and_monotone():
    # delta depends on d(v) + t and a neighbour's degree differs by at most 1
    rng = np.random.default_rng(0)
    g = Graph.from_networkx(nx.gnp_random_graph(12, 0.3, seed=1))
    for h in itertools.islice(graph_edge_neighbours(g), 30):
        for t in range(4):
            assert (ebc_delta(g.degrees(), t + 1) >= ebc_delta(h.degrees(), t)).all()
    d = rng.integers(0, 50, 20)
    block = ebc_delta(d, np.arange(10))
    assert block.shape == (10, 20) and (np.diff(block, axis=0) >= 0).all()


def test_element_ls_is_admissible_on_random_graphs():
    rng = np.random.default_rng(5)
    for _ in range(15):
        g = Graph.from_networkx(nx.gnp_random_graph(9, float(rng.uniform(0.2, 0.7)),
                                                    seed=int(rng.integers(1 << 30))))
        assert (element_ls(g) <= ebc_delta(g.degrees(), 0) + 1e-12).all()


@pytest.mark.parametrize("bound", [3, 7, 40])
def test_shift_penalty_closed_form(bound):
    d = np.array([0, 1, 2, 3, min(bound, 5), bound])
    delta_g = ebc_global_sensitivity(bound)
    numeric = dampening_penalty(lambda ts: ebc_delta(d, ts, global_sensitivity=delta_g), d.size,
                                global_sensitivity=delta_g)
    np.testing.assert_allclose(ebc_shift_penalty(d, bound), numeric, rtol=1e-12)
    assert ebc_shift_penalty([bound], bound)[0] == 0


def test_shift_penalty_refuses_a_broken_bound():
    with pytest.raises(PrivpubError, match="degree bound"):
        ebc_shift_penalty([5], 4)


def test_degree_bounds_and_ranking():
    g = graph_of(FIG1B)
    assert degree_bound_of(g, "max_degree") == 5
    assert degree_bound_of(g, "n_minus_1") == 7
    assert degree_bound_of(g, 9) == 9
    with pytest.raises(PrivpubError):
        degree_bound_of(g, 4)
    with pytest.raises(PrivpubError):
        degree_bound_of(g, "largest")
    assert ebc_ranking(g).items[:2].tolist() == [0, 1]
    assert cached_ebc(g) is cached_ebc(g)
    with pytest.raises(PrivpubError):
        egocentric_betweenness("not a graph")
