"""Tests of PrivGraph (yuan2023): each phase's sensitivity by brute force over all graphs on
five nodes and their edge neighbours, phase 2's whole pass by exact enumeration of its
outputs, the authors' post-processing, ledger, bad input, seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.privgraph import (
    _pair_index,
    _pair_of_index,
    adjustment_logits,
    extraction_counts,
    node_scores,
    norm_sub,
    privgraph,
    super_graph_counts,
)
from privpub.noise import noise_off
from privpub.registry import EDGE_DP, get_mechanism
from privpub.testing import all_graphs, brute_force_sensitivity, graph_edge_neighbours
from privpub.types import Graph

GRAPHS5 = list(all_graphs(5))
#: Every fifth 5-node graph (all edge counts and shapes occur), for the brute-force sweeps.
SWEEP = GRAPHS5[::5]
#: Fixed partitions of five nodes (super-nodes in phase 1, communities in phases 2-3).
PARTITIONS = [np.array(p) for p in ([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [0, 1, 2, 3, 4])]


def random_graph(rng, n, p):
    iu, ju = np.triu_indices(n, 1)
    pick = rng.random(iu.size) < p
    return Graph.from_edges(np.column_stack([iu[pick], ju[pick]]), n)


# --------------------------------------------------------------------------- sensitivities
@pytest.mark.parametrize("group", PARTITIONS, ids=str)
def test_phase1_counts_weighted_sensitivity_is_one(group):
    """Pair counts carry Lap(1/eps1), doubled internal counts Lap(2/eps1): the change of
    (pair counts, doubled counts / 2) over edge neighbours is at most 1 in L1."""
    k = int(group.max()) + 1

    def scaled(g):
        off, diag = super_graph_counts(g.edges(), group, k)
        return np.concatenate([off, diag / 2.0])

    sens = brute_force_sensitivity(scaled, SWEEP, graph_edge_neighbours)
    assert sens == 1.0


@pytest.mark.parametrize("labels", PARTITIONS, ids=str)
def test_phase2_scores_change_at_two_nodes_by_one(labels):
    """An edge neighbour moves one score of each endpoint by exactly 1 and nothing else."""
    k = int(labels.max()) + 1

    def scores(g):
        a = g.adjacency
        return np.stack([node_scores(a.indptr, a.indices, labels, x, k) for x in range(5)])

    for g in SWEEP:
        before = scores(g)
        for h in graph_edge_neighbours(g):
            diff = np.abs(scores(h) - before)
            assert diff.sum() == 2 and diff.max() == 1
            assert np.count_nonzero(diff.sum(axis=1)) == 2


@pytest.mark.parametrize("labels", PARTITIONS, ids=str)
def test_phase3_counts_weighted_sensitivity_is_one(labels):
    """Inter-community counts carry Lap(1/eps3), intra degrees Lap(2/eps3): the change of
    (counts, degrees / 2) over edge neighbours is at most 1 in L1 (parallel composition)."""
    k = int(labels.max()) + 1

    def scaled(g):
        degree, counts = extraction_counts(g.edges(), labels, k)
        return np.concatenate([counts, degree / 2.0])

    assert brute_force_sensitivity(scaled, SWEEP, graph_edge_neighbours) == 1.0


def pass_log_probabilities(g: Graph, labels, order, eps2) -> dict:
    """log P[phase 2 ends in each partition] for one fixed visiting order, by enumerating
    every sequence of choices (the mechanism's own scores and logits)."""
    a = g.adjacency
    k = int(labels.max()) + 1
    out = {}

    def walk(step, current, logp):
        if step == len(order):
            key = tuple(current)
            out[key] = np.logaddexp(out.get(key, -np.inf), logp)
            return
        x = order[step]
        sizes = np.bincount(current, minlength=k)
        logits = adjustment_logits(node_scores(a.indptr, a.indices, current, x, k), sizes,
                                   eps2)
        logz = logsumexp(logits)
        for c in np.flatnonzero(np.isfinite(logits)):
            nxt = current.copy()
            nxt[x] = c
            walk(step + 1, nxt, logp + logits[c] - logz)

    walk(0, np.asarray(labels).copy(), 0.0)
    return out


@pytest.mark.parametrize("labels", [np.array([0, 0, 1, 1, 0]), np.array([0, 1, 2, 0, 1])],
                         ids=["two", "three"])
def test_phase2_whole_pass_is_eps2_dp_exactly(labels):
    """The paper's eps2 (not 2 * eps2): over every 5-node graph, every edge neighbour and
    every final partition, the exact log-probability ratio of the whole adaptive pass is at
    most eps2, in fact at most eps2 / 2 (one score moves one way per endpoint)."""
    eps2 = 1.0
    order = [3, 0, 4, 1, 2]
    worst = 0.0
    for g in GRAPHS5[::41]:  # many edge counts and shapes, in seconds
        p = pass_log_probabilities(g, labels, order, eps2)
        for h in graph_edge_neighbours(g):
            q = pass_log_probabilities(h, labels, order, eps2)
            assert p.keys() == q.keys()
            worst = max(worst, max(abs(p[s] - q[s]) for s in p))
    assert worst <= eps2 / 2 + 1e-9
    assert worst > eps2 / 4  # the bound is nearly attained: the test can see a leak


def test_phase2_pass_detects_a_doubled_coefficient():
    """The exact enumeration would refute a coefficient of eps2 (4x the authors')."""
    labels, order = np.array([0, 0, 1, 1, 0]), [3, 0, 4, 1, 2]
    g = GRAPHS5[300]
    h = next(iter(graph_edge_neighbours(g)))
    p = pass_log_probabilities(g, labels, order, 4.0)  # logits 4.0/4 = coefficient 1
    q = pass_log_probabilities(h, labels, order, 4.0)
    assert max(abs(p[s] - q[s]) for s in p) > 1.0


# --------------------------------------------------------------------------- post-processing
def authors_norm_sub(data):
    """The authors' ``norm_sub_deal``, transcribed."""
    data = np.array(data, dtype=np.int32)
    data_sum = np.sum(data)
    delta_m = 0 - np.min(data)
    if delta_m <= 0:
        return data
    dm, seq = 100000000, np.zeros(len(data), dtype=np.int32)
    for i in range(0, delta_m):
        t = data - i
        t[t < 0] = 0
        dt = abs(np.sum(t) - data_sum)
        if dt < dm:
            dm, seq = dt, t
            if dt == 0:
                break
    return seq


def test_norm_sub_matches_the_authors_loop():
    rng = np.random.default_rng(0)
    for _ in range(300):
        size = int(rng.integers(1, 60))
        x = np.trunc(rng.integers(0, 5, size) + rng.laplace(0, rng.uniform(0.5, 8), size))
        np.testing.assert_array_equal(norm_sub(x.astype(np.int64)), authors_norm_sub(x))


def test_pair_index_round_trip():
    k = 7
    a, b = np.triu_indices(k, 1)
    idx = _pair_index(a, b, k)
    np.testing.assert_array_equal(idx, np.arange(k * (k - 1) // 2))
    a2, b2 = _pair_of_index(idx, k)
    np.testing.assert_array_equal(a2, a)
    np.testing.assert_array_equal(b2, b)


# --------------------------------------------------------------------------- the mechanism
def test_registration():
    info = get_mechanism("privgraph")
    assert info.privacy == EDGE_DP and info.paper == "yuan2023" and info.caveat is None


def test_ledger_three_phases_and_total():
    g = random_graph(np.random.default_rng(2), 120, 0.08)
    ledger = PrivacyLedger(2.0)
    release = privgraph(g, epsilon=2.0, n1=10, rng=np.random.default_rng(3), ledger=ledger)
    assert math.isclose(ledger.spent, 2.0)
    labels = [e.label for e in ledger.entries]
    assert labels[0].startswith("phase 1") and labels[1].startswith("phase 2")
    assert sum(e.primitive == "parallel" for e in ledger.entries) == 1
    assert release.value.n_nodes == 120
    assert release.info["super_nodes"] == 12
    assert 1 <= release.info["communities"] <= release.info["initial_communities"] <= 12


def test_same_seed_same_graph():
    g = random_graph(np.random.default_rng(4), 80, 0.1)
    a = privgraph(g, epsilon=1.0, n1=8, rng=np.random.default_rng(5)).value
    b = privgraph(g, epsilon=1.0, n1=8, rng=np.random.default_rng(5)).value
    np.testing.assert_array_equal(a.edges(), b.edges())


def test_noise_free_limit_keeps_structure():
    """Two dense blocks joined by one edge: without noise the release keeps most edges
    inside the blocks (Chung-Lu on the true intra degrees) and few between them."""
    blocks = [(i, j) for b in (0, 20) for i in range(b, b + 20) for j in range(i + 1, b + 20)]
    g = Graph.from_edges(np.array(blocks + [(0, 20)]), 40)
    with noise_off():
        out = privgraph(g, epsilon=1.0, n1=5, rng=np.random.default_rng(6)).value
    e = out.edges()
    across = np.sum((e[:, 0] < 20) != (e[:, 1] < 20))
    assert out.n_edges > 250 and across <= 5


@pytest.mark.parametrize("kwargs, error, match", [
    ({"eps1_fraction": 0.5, "eps2_fraction": 0.5}, PrivpubError, "leaves nothing"),
    ({"eps1_fraction": 0.0}, PrivpubError, "eps1_fraction"),
    ({"n1": 0}, PrivpubError, "n1"),
    ({"n1": 30}, NotApplicableError, "super-node"),
    ({"resolution": -1.0}, PrivpubError, "resolution"),
    ({"epsilon": 0.0}, PrivpubError, "epsilon"),
])
def test_bad_input_one_line_errors(kwargs, error, match):
    g = random_graph(np.random.default_rng(7), 30, 0.2)
    params = {"epsilon": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        privgraph(g, rng=np.random.default_rng(0), **params)


def test_not_a_graph():
    with pytest.raises(PrivpubError, match="needs a Graph"):
        privgraph(np.zeros((3, 3)), epsilon=1.0, rng=0)
