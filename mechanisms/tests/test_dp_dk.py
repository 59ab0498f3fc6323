"""DP-dK at the 1K level (wang2013 Sec 4, PGB's DP-1K): sensitivity, ledger, post-processing,
Havel-Hakimi."""

import numpy as np
import pytest

from privpub.data import load_dataset
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.dp_dk import (
    HISTOGRAM_SENSITIVITY,
    clipped_degree_histogram,
    degree_sequence,
    dp_dk,
    havel_hakimi_edges,
)
from privpub.noise import noise_off
from privpub.testing import all_graphs, brute_force_sensitivity, graph_edge_neighbours
from privpub.types import Graph


@pytest.fixture(scope="module")
def karate():
    return load_dataset("karate")


@pytest.mark.parametrize("bound", [1, 2, 4])
def test_histogram_sensitivity_by_brute_force(bound):
    """The clipped degree histogram changes by at most 4 in L1 (attained) over every graph on
    5 nodes and each edge neighbour; the maximum degree by at most 1."""
    got = brute_force_sensitivity(lambda g: clipped_degree_histogram(g, bound), all_graphs(5),
                                  graph_edge_neighbours)
    assert got == HISTOGRAM_SENSITIVITY
    assert brute_force_sensitivity(lambda g: g.degrees().max(), all_graphs(5),
                                   graph_edge_neighbours) == 1


def test_ledger(karate):
    ledger = PrivacyLedger(1.0)
    rel = dp_dk(karate, epsilon=1.0, rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.spent == pytest.approx(1.0)
    assert [e.sensitivity for e in ledger.entries] == [1.0, 4.0]
    assert [e.epsilon for e in ledger.entries] == pytest.approx([0.1, 0.9])
    assert rel.value.n_nodes == karate.n_nodes
    ledger = PrivacyLedger(1.0)
    dp_dk(karate, epsilon=1.0, degree_bound="n_minus_1", rng=np.random.default_rng(0),
          ledger=ledger)
    assert [(e.epsilon, e.sensitivity) for e in ledger.entries] == [(1.0, 4.0)]


def test_noise_off_keeps_the_degree_sequence(karate):
    for bound in ("noisy_max", "n_minus_1"):
        with noise_off():
            g = dp_dk(karate, epsilon=1.0, degree_bound=bound, rng=np.random.default_rng(1))
        assert np.array_equal(np.sort(g.value.degrees()), np.sort(karate.degrees()))
        assert g.info["unplaced_stubs"] == 0


def test_degree_sequence_pgb_rules():
    # counts rounded, clipped at 0; odd sum: one more node of the smallest listed degree
    assert degree_sequence([0.4, 1.6, -3.0, 0.9]).tolist() == [1, 1, 1, 3]
    # smallest listed degree even: still odd, so the first entry gets one more stub
    assert degree_sequence([1.0, 0.0, 1.0, 1.0]).tolist() == [1, 0, 2, 3]
    assert degree_sequence([0.0, 0.0]).size == 0


def test_havel_hakimi_is_networkx_s():
    """The same edges as networkx.havel_hakimi_graph (PGB's construction) on graphical
    sequences, zeros included; a non-graphical one keeps its unmatched stubs."""
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(0)
    seqs = [load_dataset("karate").degrees().astype(np.int64), np.array([0, 3, 3, 2, 2, 2, 0])]
    for _ in range(20):
        seqs.append(np.sort(Graph.from_edges(rng.integers(0, 15, (30, 2)), 15).degrees()))
    for seq in seqs:
        ref = nx.havel_hakimi_graph(seq.tolist())
        nodes = np.flatnonzero(seq > 0)  # networkx labels the positive entries 0, 1, ...
        want = {tuple(sorted((int(nodes[a]), int(nodes[b])))) for a, b in ref.edges()}
        edges, left = havel_hakimi_edges(seq)
        assert left == 0 and {tuple(sorted(e)) for e in edges.tolist()} == want
        assert np.array_equal(Graph.from_edges(edges, seq.size).degrees(), seq)
    edges, left = havel_hakimi_edges(np.array([3, 3, 0, 0]))  # not graphical
    assert left == 4 and edges.shape == (1, 2)
    with pytest.raises(PrivpubError, match="even sum"):
        havel_hakimi_edges(np.array([1, 2]))


def test_surplus_nodes_dropped_and_recorded(karate):
    rel = dp_dk(karate, epsilon=0.2, degree_bound="n_minus_1", rng=np.random.default_rng(2))
    assert rel.info["noisy_nodes"] > karate.n_nodes
    assert rel.value.n_nodes == karate.n_nodes


def test_bad_input(karate):
    with pytest.raises(PrivpubError, match="degree_bound"):
        dp_dk(karate, epsilon=1.0, degree_bound="max", rng=0)
    with pytest.raises(PrivpubError, match="bound_fraction"):
        dp_dk(karate, epsilon=1.0, bound_fraction=1.0, rng=0)
    with pytest.raises(NotApplicableError, match="max_edges"):
        dp_dk(karate, epsilon=1.0, max_edges=5, rng=0)
    with pytest.raises(NotApplicableError, match="2 nodes"):
        dp_dk(Graph.from_edges(np.empty((0, 2), np.int64), 1), epsilon=1.0, rng=0)
