"""PrivateSQL-style baseline (farias2021 Sec 6.1.1): view sensitivity, views, release."""

import itertools

import networkx as nx
import numpy as np
import pytest

from privpub.algorithms.centrality import ebc_ranking, egocentric_betweenness
from privpub.baselines.privatesql import (
    MAX_NODES,
    path_count_view,
    privatesql_topk,
    view_sensitivity,
)
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.metrics.ranking import topk_overlap
from privpub.registry import EDGE_DP, get_mechanism
from privpub.testing import graph_edge_neighbours
from privpub.types import Graph, Kind, Ranking


def views(g):
    a = g.adjacency.toarray().astype(np.int64)
    return [path_count_view(a, c) for c in range(g.n_nodes)]


def test_views_give_the_egocentric_betweenness():
    g = Graph.from_networkx(nx.gnp_random_graph(25, 0.3, seed=2))
    est = [np.sum(1.0 / q[q > 0]) for q in views(g)]
    np.testing.assert_allclose(est, egocentric_betweenness(g), atol=1e-12)


def _check_bound(g):
    vg = views(g)
    worst = 0.0
    for h in graph_edge_neighbours(g):
        d = max(g.degrees().max(), h.degrees().max())
        bound = view_sensitivity(d)
        for q, r in zip(vg, views(h), strict=True):
            change = np.abs(q - r).sum()
            assert change <= bound
            worst = max(worst, change / bound)
    return worst


def test_view_sensitivity_by_brute_force():
    pairs = list(itertools.combinations(range(5), 2))
    worst = 0.0
    for mask in range(0, 1 << len(pairs), 3):  # a third of all 5-node graphs
        edges = np.array([p for i, p in enumerate(pairs) if mask >> i & 1]).reshape(-1, 2)
        worst = max(worst, _check_bound(Graph.from_edges(edges, 5)))
    for seed in range(4):  # denser graphs with larger degrees
        worst = max(worst, _check_bound(Graph.from_networkx(nx.gnp_random_graph(8, 0.6,
                                                                               seed=seed))))
    assert worst > 0.5


def test_release_and_ledger():
    info = get_mechanism("privatesql_topk")
    assert (info.input_kind, info.output_kind, info.privacy, info.role) == (
        Kind.GRAPH, Kind.RANKING, EDGE_DP, "baseline")
    g = Graph.from_networkx(nx.karate_club_graph())
    ledger = PrivacyLedger(1.0)
    out = privatesql_topk(g, epsilon=1.0, k=3, rng=np.random.default_rng(0), ledger=ledger)
    assert isinstance(out.value, Ranking) and out.value.items.size == 3
    assert len(ledger.entries) == g.n_nodes and ledger.spent == pytest.approx(1.0)
    assert out.info["view_sensitivity"] == view_sensitivity(g.degrees().max())
    best = privatesql_topk(g, epsilon=1e12, k=3, rng=np.random.default_rng(0))
    assert topk_overlap(ebc_ranking(g), best.value, k=3) == 1.0


def test_bad_input():
    g = Graph.from_networkx(nx.karate_club_graph())
    rng = np.random.default_rng(0)
    with pytest.raises(PrivpubError, match="epsilon"):
        privatesql_topk(g, epsilon=-1, rng=rng)
    with pytest.raises(PrivpubError, match="k"):
        privatesql_topk(g, epsilon=1, k=0, rng=rng)
    with pytest.raises(NotApplicableError):
        privatesql_topk(g, epsilon=1, k=35, rng=rng)
    big = Graph.from_networkx(nx.path_graph(MAX_NODES + 1))
    with pytest.raises(NotApplicableError, match="O\\(n\\^3\\)"):
        privatesql_topk(big, epsilon=1, rng=rng)
