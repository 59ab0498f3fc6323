"""LDPGen (qin2017 Sec 4): per-user sensitivity, budget, the generator's pair law, errors."""

import itertools
import math

import numpy as np
import pytest

from privpub.data import load_dataset
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms import ldpgen as mod
from privpub.mechanisms.ldpgen import degree_vectors, ldpgen, optimal_groups
from privpub.noise import noise_off
from privpub.registry import (
    EDGE_DP,
    EDGE_LDP,
    central_notion,
    get_mechanism,
    implied_central_epsilon,
)
from privpub.types import Graph, Release


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.fixture(scope="module")
def karate():
    return load_dataset("karate")


def _random_graph(n, p, seed):
    g = rng(seed)
    edges = [(u, v) for u, v in itertools.combinations(range(n), 2) if g.random() < p]
    return Graph.from_edges(np.array(edges, dtype=np.int64).reshape(-1, 2), n)


def _toggled(graph, u, v):
    edges = {tuple(e) for e in graph.edges().tolist()}
    edges ^= {(min(u, v), max(u, v))}
    return Graph.from_edges(np.array(sorted(edges), dtype=np.int64).reshape(-1, 2),
                            graph.n_nodes)


# --------------------------------------------------------------------------- privacy
@pytest.mark.parametrize("seed", range(4))
def test_one_edge_changes_each_endpoint_vector_by_one_in_one_coordinate(seed):
    """Brute force over every pair of nodes of small graphs and several partitions: toggling
    an edge changes exactly its two endpoints' degree vectors, each by exactly 1 in exactly
    one coordinate (per-user L1 sensitivity 1, hence eps-LDP per report, and 2 eps on the
    whole graph since two users report the edge)."""
    n = 7
    graph = _random_graph(n, 0.4, seed)
    for k in (1, 2, 3, n):
        labels = rng(100 + seed + k).integers(0, k, size=n)
        base = degree_vectors(graph.adjacency, labels, k)
        for u, v in itertools.combinations(range(n), 2):
            other = degree_vectors(_toggled(graph, u, v).adjacency, labels, k)
            diff = np.abs(other - base)
            changed = np.flatnonzero(diff.sum(axis=1))
            assert changed.tolist() == [u, v]
            assert diff[u].sum() == 1 and diff[v].sum() == 1
            assert diff[u, labels[v]] == 1 and diff[v, labels[u]] == 1


def test_degree_vectors_sum_to_degrees(karate):
    labels = rng().integers(0, 5, size=karate.n_nodes)
    vec = degree_vectors(karate.adjacency, labels, 5)
    assert np.array_equal(vec.sum(axis=1), karate.degrees())


def test_ledger_gets_both_rounds_and_the_whole_budget(karate):
    ledger = PrivacyLedger(1.5)
    ldpgen(karate, epsilon=1.5, phase1_share=0.4, rng=rng(), ledger=ledger)
    spends = [(e.epsilon, e.sensitivity, e.primitive) for e in ledger.entries]
    assert spends == [(pytest.approx(0.6), 1.0, "laplace"), (pytest.approx(0.9), 1.0, "laplace")]
    assert ledger.remaining == 0


def test_registration_is_edge_ldp_with_its_central_epsilon():
    info = get_mechanism("ldpgen")
    assert info.privacy == EDGE_LDP and info.is_dp and info.paper == "qin2017"
    assert central_notion(EDGE_LDP) == EDGE_DP and central_notion(EDGE_DP) == EDGE_DP
    assert implied_central_epsilon(EDGE_LDP, 0.5) == 1.0
    assert implied_central_epsilon(EDGE_DP, 0.5) == 0.5


def test_the_audit_uses_the_central_edge_neighbours():
    from privpub.audit.engine import _setup

    run, _ = _setup("ldpgen", {"epsilon": 0.5}, "quick", 0, 0.01, (), None)
    assert run.hood.name == "edge_toggle"
    assert run.epsilon == 0.5 and run.claim == 1.0


# --------------------------------------------------------------------------- the protocol
def test_same_seed_same_graph_and_shape(karate):
    a = ldpgen(karate, epsilon=1.0, rng=rng(3))
    b = ldpgen(karate, epsilon=1.0, rng=rng(3))
    assert isinstance(a, Release) and a.value.n_nodes == karate.n_nodes
    assert np.array_equal(a.value.edges(), b.value.edges())
    adj = a.value.adjacency
    assert adj.diagonal().sum() == 0 and (adj != adj.T).nnz == 0


def test_optimal_groups_formula():
    # every user of noisy degree 40 (a = 20) at eps 0.5
    a = 20.0
    expected = math.ceil(a + (a * a - 2 * (1 + math.sqrt(5)) * a + 1) / 0.5)
    assert 1 < expected < 1000
    assert optimal_groups(np.full(100, 40.2), 0.5, 1000) == expected
    # a negative optimum (small degrees) is clipped to one group
    assert optimal_groups(np.full(100, 10.0), 0.5, 1000) == 1
    # users above the cutoff contribute nothing; the result is clipped to [1, n]
    assert optimal_groups(np.full(100, 1000.0), 0.5, 1000) == 1
    assert optimal_groups(np.full(10, 40.0), 0.01, 10) == 10


def test_noise_free_run_keeps_at_most_the_edge_count():
    """With the Laplace noise off, the generator gives between half the edges (one cluster:
    the denominator ``D_ii + S_i`` is twice the cluster's degree sum) and about all of them
    (many clusters, few edges inside each); never many more."""
    graph = load_dataset("les_miserables")
    with noise_off():
        counts = [ldpgen(graph, epsilon=1.0, rng=rng(s)).value.n_edges for s in range(20)]
    assert 0.45 * graph.n_edges < np.mean(counts) < 1.1 * graph.n_edges


def test_generated_pairs_follow_the_model():
    """Monte Carlo check of phase III's law: P(edge {u, v}) = (p(u, v) + p(v, u)) / 2."""
    vectors = np.array([[2.0, 1.0], [1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [3.0, 0.5]])
    labels = np.array([0, 0, 1, 1, 1])
    k, n = 2, 5
    sizes = np.bincount(labels)
    total = vectors.sum(axis=0)
    within = np.zeros((k, k))
    np.add.at(within, labels, vectors)
    rate = (total / sizes) / (within + total)
    p = np.clip(vectors * rate[labels], 0, 1)
    want = np.zeros((n, n))
    for u, v in itertools.combinations(range(n), 2):
        want[u, v] = (p[u, labels[v]] + p[v, labels[u]]) / 2
    runs, got = 6000, np.zeros((n, n))
    g = rng(7)
    for _ in range(runs):
        e = mod._generate(vectors, labels, k, g)
        got[e[:, 0], e[:, 1]] += 1
    se = np.sqrt(want * (1 - want) / runs)
    iu = np.triu_indices(n, 1)
    assert np.all(np.abs(got[iu] / runs - want[iu]) < 5 * se[iu] + 1e-9)


def test_distinct_members_are_distinct_and_uniform():
    g = rng(1)
    rows = np.arange(3)
    counts, sizes = np.array([3, 5, 0]), np.array([10, 6, 4])
    hits = np.zeros((2, 10))
    for _ in range(3000):
        r, pos = mod._distinct_members(rows, counts, sizes, g)
        for row in (0, 1):
            mine = pos[r == row]
            assert mine.size == counts[row] and np.unique(mine).size == mine.size
            assert mine.max() < sizes[row]
            hits[row, mine] += 1
    assert np.allclose(hits[0] / 3000, 0.3, atol=0.04)
    assert np.allclose(hits[1, :6] / 3000, 5 / 6, atol=0.04)


# --------------------------------------------------------------------------- bad input
def test_bad_input_is_a_clear_error(karate):
    with pytest.raises(PrivpubError, match="Graph"):
        ldpgen(np.ones((3, 3)), epsilon=1.0, rng=rng())
    with pytest.raises(PrivpubError, match="at least 2 nodes"):
        ldpgen(Graph.from_edges(np.empty((0, 2), dtype=np.int64), 1), epsilon=1.0, rng=rng())
    with pytest.raises(PrivpubError, match="initial_groups"):
        ldpgen(karate, epsilon=1.0, initial_groups=1, rng=rng())
    with pytest.raises(PrivpubError, match="initial_groups"):
        ldpgen(karate, epsilon=1.0, initial_groups=karate.n_nodes + 1, rng=rng())
    for share in (0.0, 1.0):
        with pytest.raises(PrivpubError, match="phase1_share"):
            ldpgen(karate, epsilon=1.0, phase1_share=share, rng=rng())
    for eps in (0, -1, float("nan")):
        with pytest.raises(PrivpubError, match="epsilon"):
            ldpgen(karate, epsilon=eps, rng=rng())
