"""Tests of the Edge-Removal projection (ER, Blocki et al. 2013; day2016 Sec 2.4, Fig. 1)."""

import networkx as nx
import numpy as np
import pytest

from privpub.baselines.edge_removal import edge_removal, edge_removal_mask, projection_edge_removal
from privpub.errors import PrivpubError
from privpub.types import Graph


def _edge_addition(graph, theta):
    """pi_theta (day2016 Algorithm 1) on the lexicographic order, for comparison only."""
    deg = np.zeros(graph.n_nodes, dtype=int)
    kept = []
    for u, v in graph.edges():
        if deg[u] < theta and deg[v] < theta:
            kept.append((u, v))
            deg[u] += 1
            deg[v] += 1
    return kept


def _hist(graph, theta, **kw):
    return projection_edge_removal(graph, theta=theta, rng=np.random.default_rng(0), **kw)


@pytest.mark.parametrize("order", ["lexicographic", "lexicographic_forward", "random"])
def test_degrees_bounded_and_kept_edges_are_original(order):
    g = Graph.from_networkx(nx.barabasi_albert_graph(500, 5, seed=2))
    for theta in (1, 3, 10, 40):
        sub = edge_removal(g, theta, order=order, rng=np.random.default_rng(0))
        assert sub.degrees().max() <= theta
        assert set(map(tuple, sub.edges().tolist())) <= set(map(tuple, g.edges().tolist()))
        rel = _hist(g, theta, order=order)
        assert rel.value.counts.size == theta + 1 and rel.value.counts.sum() == g.n_nodes
        assert rel.diagnostics["edge_fraction"] == pytest.approx(sub.n_edges / g.n_edges)


def test_figure1_removal_runs_backwards_and_keeps_one_edge_where_pi_theta_keeps_two():
    # path 0-1-2-3, theta = 1, edges e1=(0,1), e2=(1,2), e3=(2,3): removal order e3, e2, e1
    # deletes e3 (deg 2 = 2) and e2 (deg 1 = 2) and keeps e1 only; pi_1 inserts e1, e3.
    g = Graph.from_edges(np.array([(0, 1), (1, 2), (2, 3)]), 4)
    er = edge_removal(g, 1)
    assert er.edges().tolist() == [[0, 1]]
    assert len(_edge_addition(g, 1)) == 2
    # ER is not maximal: (2, 3) could be added back without exceeding theta
    assert er.degrees()[2] == er.degrees()[3] == 0
    assert _hist(g, 1).diagnostics["edge_fraction"] == pytest.approx(1 / 3)
    # the forward traversal mirrors it: it deletes e1 and e2 and keeps e3
    assert edge_removal(g, 1, order="lexicographic_forward").edges().tolist() == [[2, 3]]


def test_no_2theta_plus_1_node_sensitivity():
    """A node neighbour pair with ||hist(ER(G)) - hist(ER(G'))||_1 = 5 > 2 theta + 1 = 3
    (found by brute force over all graphs on 5 nodes; pi_theta's Lemma 1 bound fails for ER).

    G: edges (0,2) (0,4) (1,2) (1,3). Removal order (1,3) (1,2) (0,4) (0,2): node 1 and then
    node 0 exceed theta = 1, so only (0,2) survives -> hist [3, 2]. G' = G minus node 2 is a
    matching of two edges, kept whole -> hist [0, 4].
    """
    theta = 1
    g = Graph.from_edges(np.array([(0, 2), (0, 4), (1, 2), (1, 3)]), 5)
    gp = g.subgraph([0, 1, 3, 4])  # order-preserving relabelling keeps the order stable
    h = _hist(g, theta).value.counts
    hp = _hist(gp, theta).value.counts
    assert h.tolist() == [3, 2] and hp.tolist() == [0, 4]
    assert np.abs(h - hp).sum() > 2 * theta + 1


def test_bad_order_and_theta():
    g = Graph.from_edges(np.array([(0, 1)]), 2)
    with pytest.raises(PrivpubError):
        edge_removal_mask(g, 1, order="sideways")
    with pytest.raises(PrivpubError):
        edge_removal_mask(g, 0)
    assert edge_removal_mask(Graph.from_edges(np.empty((0, 2), int), 3), 1).size == 0
