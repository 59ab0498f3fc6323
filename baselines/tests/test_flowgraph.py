"""Tests of the flow-graph projection (FG) and the Flowgraph node-DP baseline."""

import itertools

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import minimize

from privpub.baselines import flowgraph as fgmod
from privpub.baselines.flowgraph import (
    flow_projection,
    flowgraph,
    flowgraph_candidates,
    fractional_histogram,
    gem_select,
    projection_flowgraph,
)
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.registry import NODE_DP, get_mechanism
from privpub.testing import all_graphs
from privpub.types import Graph


def _double_cover_max_flow(graph, theta):
    """Max-flow value of day2016 Sec 2.4's flow graph, by networkx (the reference)."""
    d = nx.DiGraph()
    d.add_nodes_from(["s", "t"])
    for v in range(graph.n_nodes):
        d.add_edge("s", ("l", v), capacity=theta)
        d.add_edge(("r", v), "t", capacity=theta)
    for u, v in graph.edges():
        d.add_edge(("l", u), ("r", v), capacity=1)
        d.add_edge(("l", v), ("r", u), capacity=1)
    return nx.maximum_flow_value(d, "s", "t")


def _qp_degrees(graph, theta, flow_value):
    """Out-flows of v_l minimising sum (theta - out)^2 + (theta - in)^2 over max flows (SLSQP)."""
    e = graph.edges()
    arcs = np.concatenate([e, e[:, ::-1]])
    m, n = len(arcs), graph.n_nodes
    a_out = np.zeros((n, m))
    a_in = np.zeros((n, m))
    a_out[arcs[:, 0], np.arange(m)] = 1
    a_in[arcs[:, 1], np.arange(m)] = 1

    def obj(f):
        return np.sum((theta - a_out @ f) ** 2) + np.sum((theta - a_in @ f) ** 2)

    def jac(f):
        return -2 * a_out.T @ (theta - a_out @ f) - 2 * a_in.T @ (theta - a_in @ f)

    cons = [
        {"type": "eq", "fun": lambda f: f.sum() - flow_value, "jac": lambda f: np.ones(m)},
        {"type": "ineq", "fun": lambda f: theta - a_out @ f, "jac": lambda f: -a_out},
        {"type": "ineq", "fun": lambda f: theta - a_in @ f, "jac": lambda f: -a_in},
    ]
    res = minimize(obj, np.full(m, 0.25), jac=jac, bounds=[(0, 1)] * m, constraints=cons,
                   method="SLSQP", options={"ftol": 1e-12, "maxiter": 1000})
    assert res.success, res.message
    return a_out @ res.x


def test_flow_value_and_degrees_are_optimal_on_random_small_graphs():
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(3, 9))
        g = Graph.from_networkx(nx.gnp_random_graph(n, rng.uniform(0.3, 0.9),
                                                    seed=int(rng.integers(2**31))))
        if g.n_edges == 0:
            continue
        for theta in (1, 2, 3):
            proj = flow_projection(g, theta)
            flow = _double_cover_max_flow(g, theta)
            assert proj.flow_value == flow
            assert proj.degrees.sum() == pytest.approx(flow)
            assert np.allclose(proj.degrees, _qp_degrees(g, theta, flow), atol=1e-5)
            assert np.all(proj.degrees <= np.minimum(theta, g.degrees()) + 1e-12)


def test_star_degrees_are_fractional_and_exact():
    k = 7
    star = Graph.from_edges(np.array([(0, i) for i in range(1, k + 1)]), k + 1)
    proj = flow_projection(star, 1)
    assert proj.numerators[0] == proj.denominators[0] == 1
    assert np.all(proj.numerators[1:] == 1) and np.all(proj.denominators[1:] == k)
    assert proj.flow_value == 2
    hist = proj.histogram()
    assert hist == pytest.approx([k - 1, 2])  # k leaves of 1/k each, plus the centre at 1


def test_fractional_histogram_interpolates_and_checks_range():
    assert fractional_histogram([0, 5, 3], [1, 2, 1], 3) == pytest.approx([1, 0, 0.5, 1.5])
    with pytest.raises(PrivpubError):
        fractional_histogram([7], [2], 3)


def test_projection_keeps_degrees_bounded_and_is_identity_when_bounded():
    g = Graph.from_networkx(nx.barabasi_albert_graph(300, 4, seed=3))
    for theta in (1, 4, 16):
        rel = projection_flowgraph(g, theta=theta, rng=np.random.default_rng(0))
        hist = rel.value.counts
        assert hist.size == theta + 1 and hist.sum() == pytest.approx(g.n_nodes)
        assert 0 < rel.diagnostics["edge_fraction"] <= 1
    big = int(g.degrees().max())
    rel = projection_flowgraph(g, theta=big, rng=np.random.default_rng(0))
    assert np.array_equal(rel.value.counts, np.bincount(g.degrees(), minlength=big + 1))
    assert rel.diagnostics["edge_fraction"] == 1


def _hist_cache():
    cache = {}

    def hist(g, theta):
        key = (g.n_nodes, g.adjacency.indices.tobytes(), g.adjacency.indptr.tobytes(), theta)
        if key not in cache:
            proj = flow_projection(g, theta)
            cache[key] = (proj.histogram(), proj.flow_value)
        return cache[key]

    return hist


@pytest.mark.parametrize("theta", [1, 2])
def test_histogram_sensitivity_6_theta_and_flow_sensitivity_by_brute_force(theta):
    """Every graph on 5 nodes against each of its node neighbours (one node removed):
    ||hist_FG(G) - hist_FG(G')||_1 <= 6 theta (day2016 Sec 2.4) and |F(G) - F(G')| <= 2 theta
    (what the GEM score relies on)."""
    hist = _hist_cache()
    worst_hist = worst_flow = 0.0
    for g in all_graphs(5):
        h, f = hist(g, theta)
        for v in range(5):
            hp, fp = hist(g.subgraph([u for u in range(5) if u != v]), theta)
            worst_hist = max(worst_hist, float(np.abs(h - hp).sum()))
            worst_flow = max(worst_flow, abs(f - fp))
    assert worst_hist <= 6 * theta
    assert worst_flow == 2 * theta  # the bound is attained


def test_gem_selects_the_lowest_score_when_the_gap_is_large_and_spends_its_budget():
    ledger = PrivacyLedger(1.0)
    picks = [gem_select([1e6, 0.0, 1e6], [1, 1, 1], epsilon=1.0, rng=np.random.default_rng(s),
                        ledger=PrivacyLedger(1.0)) for s in range(20)]
    assert set(picks) == {1}
    gem_select([0.0, 1.0], [1.0, 2.0], epsilon=1.0, rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.spent == pytest.approx(1.0)
    assert ledger.entries[0].sensitivity == 1.0
    with pytest.raises(PrivpubError):
        gem_select([0.0], [0.0], epsilon=1.0, rng=np.random.default_rng(0))


def test_gem_normalised_scores_have_sensitivity_one():
    """Shifting the scores by any change with |d(q_i - q_j)| <= Delta_i + Delta_j moves every
    normalised score by at most 1, hence the selection probabilities by at most e^eps."""
    rng = np.random.default_rng(1)
    d = np.array([4.0, 8.0, 16.0, 32.0])
    q = rng.normal(0, 100, 4)
    eps = 0.7
    from privpub.noise import exponential_mechanism_probabilities

    def probs(scores):
        t = 2 * np.log(4 / fgmod.GEM_BETA) / eps
        r = scores + t * d
        s = ((r[:, None] - r[None, :]) / (d[:, None] + d[None, :])).max(axis=1)
        return exponential_mechanism_probabilities(-s, sensitivity=1.0, epsilon=eps)

    p = probs(q)
    for _ in range(200):
        shift = rng.uniform(-1, 1, 4) * d / 2  # |shift_i - shift_j| <= (d_i + d_j) / 2
        ratio = probs(q + shift) / p
        assert np.all(ratio <= np.exp(eps) + 1e-9) and np.all(ratio >= np.exp(-eps) - 1e-9)


def test_flowgraph_release_ledger_info_and_cache(monkeypatch):
    fgmod.clear_cache()
    g = Graph.from_networkx(nx.barabasi_albert_graph(400, 3, seed=5))
    calls = []
    real = fgmod.flow_projection
    monkeypatch.setattr(fgmod, "flow_projection", lambda gr, th: calls.append(th) or real(gr, th))
    ledger = PrivacyLedger(2.0)
    rel = flowgraph(g, epsilon=2.0, rng=np.random.default_rng(0), ledger=ledger)
    theta = rel.info["theta"]
    candidates = flowgraph_candidates(g.n_nodes)
    assert theta in candidates.tolist()
    assert rel.value.counts.size == theta + 1
    assert ledger.spent == pytest.approx(2.0)
    spent = [e.epsilon for e in ledger.entries]
    assert spent == pytest.approx([0.2, 1.8])  # eps_1 = 0.1 eps, eps_2 = 0.9 eps
    assert ledger.entries[1].sensitivity == 6 * theta
    assert sorted(calls) == sorted(candidates.tolist())
    flowgraph(g, epsilon=2.0, rng=np.random.default_rng(1))
    assert len(calls) == candidates.size  # second run: every projection from the cache
    assert get_mechanism("flowgraph").privacy == NODE_DP
    assert get_mechanism("flowgraph").caveat


def test_candidates_and_bad_input():
    assert flowgraph_candidates(4039).tolist() == [2**i for i in range(12)]
    assert flowgraph_candidates(10, theta_max=5).tolist() == [1, 2, 4]
    g = Graph.from_edges(np.array([(0, 1)]), 2)
    with pytest.raises(PrivpubError):
        projection_flowgraph(g, theta=0, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError):
        flowgraph(g, epsilon=-1.0, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError):
        flow_projection("not a graph", 2)
    assert list(itertools.islice(flowgraph_candidates(1), 3)) == [1]
