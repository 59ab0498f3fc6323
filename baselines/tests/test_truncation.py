"""Tests of the truncation projection (T) and the Truncation baseline (KNRS13 via day2016)."""

import math

import networkx as nx
import numpy as np
import pytest

from privpub.baselines.truncation import (
    projection_truncation,
    random_cutoff,
    truncate,
    truncated_degrees,
    truncation,
    truncation_beta,
    truncation_local_bound,
    truncation_smooth_bound,
)
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.registry import get_mechanism
from privpub.testing import all_graphs
from privpub.types import Graph


def test_projection_keeps_exactly_low_degree_nodes_and_their_mutual_edges():
    g = Graph.from_networkx(nx.barabasi_albert_graph(400, 4, seed=1))
    nxg = g.to_networkx()
    for theta in (3, 8, 30):
        low = [v for v in nxg if nxg.degree(v) <= theta]
        expected = Graph.from_networkx(nxg.subgraph(low))
        sub = truncate(g, theta)
        assert sub.n_nodes == len(low)
        assert np.array_equal(sub.edges(), expected.edges())
        assert sub.degrees().max(initial=0) <= theta
        rel = projection_truncation(g, theta=theta, rng=np.random.default_rng(0))
        assert rel.value.counts.size == theta + 1
        assert np.array_equal(rel.value.counts, np.bincount(sub.degrees(), minlength=theta + 1))
        assert rel.diagnostics["edge_fraction"] == pytest.approx(sub.n_edges / g.n_edges)


def test_truncated_degrees_are_those_of_the_truncated_graph():
    rng = np.random.default_rng(4)
    for n, m in [(1, 0), (30, 40), (300, 2000)]:
        e = rng.integers(0, n, (m, 2))
        e[: m // 2, 0] = 0  # a hub
        g = Graph.from_edges(e.reshape(-1, 2), n + 1)  # one isolated node at least
        for cutoff in (0, 1, 3, 10, 10_000):
            got = truncated_degrees(g, cutoff)
            assert got.dtype == np.int64
            assert np.array_equal(got, truncate(g, cutoff).degrees())


def _hist(g, cutoff):
    return np.bincount(truncate(g, cutoff).degrees(), minlength=cutoff + 1)


@pytest.mark.parametrize("cutoff", [1, 2])
def test_smooth_bound_covers_local_sensitivity_and_is_beta_smooth(cutoff):
    """All graphs on 5 nodes and their node neighbours (one node removed):
    ||hist(T_D(G)) - hist(T_D(G'))||_1 <= (2D + 1) U_0(G) <= (2D + 1) S_T(G) in both
    directions, and S_T(G) <= e^beta S_T(G') (beta-smoothness)."""
    betas = (0.1, 2.0)
    memo = {}

    def bounds(deg):  # S_T and U_0 depend on the degree multiset only
        key = tuple(sorted(deg.tolist()))
        if key not in memo:
            memo[key] = (int(truncation_local_bound(deg, cutoff, [0])[0]),
                         [truncation_smooth_bound(deg, cutoff, b) for b in betas])
        return memo[key]

    for g in all_graphs(5):
        h = _hist(g, cutoff)
        u0, s = bounds(g.degrees())
        for v in range(5):
            gp = g.subgraph([u for u in range(5) if u != v])
            diff = np.abs(h - _hist(gp, cutoff)).sum()
            u0p, sp = bounds(gp.degrees())
            assert diff <= (2 * cutoff + 1) * min(u0, u0p)
            for b, sb, spb in zip(betas, s, sp, strict=True):
                assert sb >= u0 and spb >= u0p
                assert sb <= math.exp(b) * spb * (1 + 1e-12)
                assert spb <= math.exp(b) * sb * (1 + 1e-12)


def test_smooth_bound_monotone_in_beta_and_tail_maximum():
    deg = np.array([1, 2, 2, 3, 5, 8, 8, 8, 9])
    values = [truncation_smooth_bound(deg, 4, b) for b in (0.01, 0.1, 1.0, 10.0)]
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))
    # tiny beta: the maximiser lies on the saturated tail k ~ 1/beta - 1 - n
    b = 0.001
    k = np.arange(5000)
    brute = np.max(np.exp(-b * k) * truncation_local_bound(deg, 4, k))
    assert truncation_smooth_bound(deg, 4, b) == pytest.approx(brute)
    assert values[-1] == pytest.approx(1 + 1)  # beta large: U_0 = 1 + #{deg in [4, 5]}


def test_truncation_release_ledger_and_info():
    g = Graph.from_networkx(nx.barabasi_albert_graph(500, 3, seed=4))
    ledger = PrivacyLedger(0.5)
    rel = truncation(g, epsilon=0.5, theta=8, rng=np.random.default_rng(3), ledger=ledger)
    info = rel.diagnostics
    beta = 0.5 * math.log(500 / 8)
    assert info["beta"] == pytest.approx(beta)
    offset = math.ceil(math.log(500) / beta)
    assert 8 + offset + 1 <= info["cutoff"] <= 8 + offset + 8
    assert rel.value.counts.size == info["cutoff"] + 1
    expected_s = truncation_smooth_bound(g.degrees(), info["cutoff"], beta)
    assert info["smooth_bound"] == pytest.approx(expected_s)
    sens = (2 * info["cutoff"] + 1) * expected_s
    assert info["noise_scale"] == pytest.approx(math.sqrt(2) * sens / 0.5)
    assert ledger.spent == pytest.approx(0.5)
    assert ledger.entries[0].sensitivity == pytest.approx(sens)
    again = truncation(g, epsilon=0.5, theta=8, rng=np.random.default_rng(3))
    assert np.array_equal(again.value.counts, rel.value.counts)
    assert get_mechanism("truncation").caveat


def test_paper_beta_breaks_the_dimension_budget():
    """Why the caveat: two node neighbours whose S_T differ by a factor r give output
    densities at the centre that differ by r^(D+1) -- far above e^eps."""
    eps, theta = 1.0, 2
    # G: a star whose leaves sit just below the window; G' adds a node joined to all leaves
    n_leaves = 40
    star = [(0, i) for i in range(1, n_leaves + 1)]
    g = Graph.from_edges(np.array(star), n_leaves + 2)
    gp = Graph.from_edges(np.array(star + [(n_leaves + 1, i) for i in range(1, n_leaves + 1)]),
                          n_leaves + 2)
    beta = truncation_beta(eps, g.n_nodes, theta)
    cutoff = 2  # leaves have degree 1 in G and 2 in G'
    s, sp = (truncation_smooth_bound(x.degrees(), cutoff, beta) for x in (g, gp))
    log_ratio = (cutoff + 1) * math.log(sp / s)
    assert log_ratio > 5 * eps


def test_bad_input():
    g = Graph.from_edges(np.array([(0, 1), (1, 2)]), 3)
    with pytest.raises(PrivpubError):
        truncation(g, epsilon=1.0, theta=3, rng=np.random.default_rng(0))  # theta >= |V|
    with pytest.raises(PrivpubError):
        truncation(g, epsilon=0.0, theta=1, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError):
        truncation_smooth_bound([1, 2], 1, 0.0)
    rng = np.random.default_rng(0)
    assert all(4 + 2 <= random_cutoff(4, 10, 3.0, rng) <= 4 + 1 + 4 for _ in range(50))
