"""PGB's DGG (pgb2024, DGG.py): BTER blocks, the triangular pair index, what it reads."""

import numpy as np
import pytest

from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.dgg import _phase1_edges, bter_blocks, dgg
from privpub.noise import noise_off
from privpub.registry import EDGE_LDP, get_mechanism, implied_central_epsilon
from privpub.types import Graph


def _graph(seed=0, n=60, p=0.1):
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].size) < p
    return Graph.from_edges(np.column_stack([iu[0][keep], iu[1][keep]]), n)


def test_blocks_hold_degree_plus_one_users():
    # a block starting at degree d has d + 1 users; the last one what is left
    assert bter_blocks(np.array([0, 0, 1, 1, 2, 2, 2, 5])).tolist() == [0, 1, 2, 4, 7]
    assert bter_blocks(np.array([3, 3])).tolist() == [0]


@pytest.mark.parametrize("s", [2, 3, 7, 40])
def test_every_pair_of_a_block_once_when_p_is_one(s):
    """With d_max + 1 = s every block pair is drawn (p = 1): the triangular index decodes
    idx = 0 .. s(s-1)/2 - 1 to every pair (i < j) exactly once."""
    order = np.arange(s)[::-1].copy()
    degrees = np.full(s, s - 1)
    edges = _phase1_edges(order, degrees, np.random.default_rng(0))
    pairs = {tuple(sorted(e)) for e in edges.tolist()}
    assert len(edges) == len(pairs) == s * (s - 1) // 2
    assert all(u != v for u, v in pairs)


def test_phase1_rate_matches_bter():
    degrees = np.sort(np.random.default_rng(1).integers(0, 12, 300))
    order = np.arange(300)
    starts = np.append(bter_blocks(degrees), 300)
    sizes = np.diff(starts)
    expected = sum(s * (s - 1) / 2 * min(1.0, np.log(s + 1) / np.log(degrees.max() + 1))
                   for s in sizes)
    counts = [len(_phase1_edges(order, degrees, np.random.default_rng(k))) for k in range(200)]
    sd = np.std(counts) / np.sqrt(len(counts))
    assert abs(np.mean(counts) - expected) < 4 * sd + 1e-9
    block = np.searchsorted(starts, order, side="right")  # every edge inside one block
    edges = _phase1_edges(order, degrees, np.random.default_rng(5))
    assert (block[edges[:, 0]] == block[edges[:, 1]]).all()


def test_reads_only_the_degrees():
    """Post-processing of the degree reports: two graphs with the same degree sequence give
    the same release (noise off, same seed); a toggled pair changes two degrees by 1."""
    a = Graph.from_edges([(0, 1), (2, 3), (4, 5), (1, 2)], 8)
    b = Graph.from_edges([(0, 2), (1, 3), (4, 5), (1, 2)], 8)  # same degrees
    assert (a.degrees() == b.degrees()).all()
    with noise_off():
        ra = dgg(a, epsilon=1.0, rng=np.random.default_rng(3)).value
        rb = dgg(b, epsilon=1.0, rng=np.random.default_rng(3)).value
    assert (ra.adjacency != rb.adjacency).nnz == 0
    g = _graph()
    for u, v in [(0, 1), (5, 17), (30, 59)]:
        toggled = g.adjacency.toarray()
        toggled[u, v] = toggled[v, u] = not toggled[u, v]
        diff = np.abs(toggled.sum(1) - g.degrees())
        assert diff.sum() == 2 and diff[u] == diff[v] == 1  # L1 1 per user


def test_claim_ledger_and_targets():
    info = get_mechanism("dgg")
    assert info.privacy == EDGE_LDP and implied_central_epsilon(EDGE_LDP, 1.0) == 2.0
    g = _graph(2, n=200, p=0.05)
    ledger = PrivacyLedger(0.5)
    rel = dgg(g, epsilon=0.5, rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.spent == pytest.approx(0.5)
    assert rel.value.n_nodes == g.n_nodes and rel.info["blocks"] >= 1
    a = dgg(g, epsilon=1.0, rng=np.random.default_rng(1)).value
    b = dgg(g, epsilon=1.0, rng=np.random.default_rng(1)).value
    c = dgg(g, epsilon=1.0, target="own", rng=np.random.default_rng(1)).value
    assert (a.adjacency != b.adjacency).nnz == 0 and (a.adjacency != c.adjacency).nnz > 0
    # the noise-free release keeps the edge count's order of magnitude
    with noise_off():
        out = dgg(g, epsilon=1.0, target="own", rng=np.random.default_rng(4)).value
    assert 0.5 * g.n_edges < out.n_edges < 2.5 * g.n_edges


@pytest.mark.parametrize("bad", [{"epsilon": 0}, {"epsilon": -1}, {"target": "mine"}])
def test_bad_input(bad):
    with pytest.raises(PrivpubError):
        dgg(_graph(), **{"epsilon": 1.0, **bad}, rng=np.random.default_rng(0))
