"""PrivHRG (xiao2014 Sec 4): the likelihood's sensitivity, the chain's law, the release."""

import itertools
import math

import numpy as np
import pytest

from privpub.data import load_dataset
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms import priv_hrg as hrg
from privpub.mechanisms.priv_hrg import hrg_log_likelihood, hrg_sensitivity, priv_hrg
from privpub.noise import noise_off
from privpub.registry import get_mechanism
from privpub.testing import all_graphs, brute_force_sensitivity, graph_edge_neighbours
from privpub.types import Graph


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.fixture(scope="module")
def karate():
    return load_dataset("karate")


# --------------------------------------------------------------------------- dendrograms
def all_dendrograms(n):
    """Every unordered binary tree on leaves ``0..n-1`` as nested pairs ((2n-3)!! trees):
    leaf k is grafted onto every edge (and above the root) of each tree on k leaves."""
    trees = [(0, 1)]
    for leaf in range(2, n):
        grown = []
        for tree in trees:
            grown.extend(_grafts(tree, leaf))
        trees = grown
    return trees


def _grafts(tree, leaf):
    yield (tree, leaf)
    if isinstance(tree, tuple):
        a, b = tree
        for g in _grafts(a, leaf):
            yield (g, b)
        for g in _grafts(b, leaf):
            yield (a, g)


def _leaves(tree):
    return [tree] if not isinstance(tree, tuple) else _leaves(tree[0]) + _leaves(tree[1])


def _arrays(tree, n):
    """``left``, ``right`` (internal ids ``n..2n-2``) of a nested-pair tree."""
    left = np.empty(n - 1, np.int64)
    right = np.empty(n - 1, np.int64)
    counter = itertools.count(n)

    def walk(t):
        if not isinstance(t, tuple):
            return t
        me = next(counter)
        left[me - n], right[me - n] = walk(t[0]), walk(t[1])
        return me

    walk(tree)
    return left, right


def _lca_table(tree, n):
    """Per tree: the internal node (0-based) owning each node pair, and each node's pairs."""
    owner = {}
    pairs = []

    def walk(t):
        if not isinstance(t, tuple):
            return
        a, b = _leaves(t[0]), _leaves(t[1])
        r = len(pairs)
        pairs.append(len(a) * len(b))
        for u in a:
            for v in b:
                owner[(min(u, v), max(u, v))] = r
        walk(t[0])
        walk(t[1])

    walk(tree)
    all_pairs = list(itertools.combinations(range(n), 2))
    return np.array([owner[p] for p in all_pairs]), np.array(pairs)


def _loglik_vector(n):
    """``graph -> logL(graph, T)`` for every dendrogram ``T`` on ``n`` leaves (the
    exponential mechanism's quality, computed from scratch by a second method)."""
    tables = [_lca_table(t, n) for t in all_dendrograms(n)]
    all_pairs = list(itertools.combinations(range(n), 2))

    def f(graph):
        present = {tuple(e) for e in graph.edges().tolist()}
        bits = np.array([p in present for p in all_pairs], dtype=np.int64)
        out = []
        for owner, pairs in tables:
            e = np.bincount(owner, weights=bits, minlength=pairs.size)
            with np.errstate(divide="ignore", invalid="ignore"):
                p = e / pairs
                terms = np.where((e > 0) & (e < pairs),
                                 e * np.log(p) + (pairs - e) * np.log1p(-p), 0.0)
            out.append(terms.sum())
        return np.array(out)

    return f


def test_dendrogram_count():
    assert [len(all_dendrograms(n)) for n in (3, 4, 5, 6)] == [3, 15, 105, 945]


def test_log_likelihood_agrees_with_a_second_computation():
    graph = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [3, 4], [0, 4]]), 5)
    f = _loglik_vector(5)(graph)
    for i, tree in enumerate(all_dendrograms(5)):
        left, right = _arrays(tree, 5)
        assert hrg_log_likelihood(graph, left, right) == pytest.approx(f[i], abs=1e-9)


@pytest.mark.parametrize("n", [4, 5])
def test_brute_force_cannot_break_the_likelihood_sensitivity(n):
    """Every graph on n nodes, every edge neighbour, every dendrogram: the largest change
    of logL is Delta_U (xiao2014 Sec 4), attained (so the bound is tight, not loose)."""
    worst = brute_force_sensitivity(_loglik_vector(n), all_graphs(n), graph_edge_neighbours,
                                    norm="linf")
    assert worst <= hrg_sensitivity(n) + 1e-9
    assert worst == pytest.approx(hrg_sensitivity(n))


def test_sensitivity_bound_per_node_for_large_pair_counts():
    """One edge moves one e_r by one: |f(e+1) - f(e)| is largest at e = 0 and grows with
    the pair count, so Delta_U at the largest count N bounds every node and every e."""
    def f(e, pairs):
        return hrg._node_loglik(e, pairs)

    for n in (7, 30, 1001, 12006):
        bound = hrg_sensitivity(n)
        big = math.ceil(n / 2) * math.floor(n / 2)
        for pairs in sorted({1, 2, 3, big // 3, big - 1, big}):
            if pairs < 1:
                continue
            es = np.unique(np.r_[np.arange(min(pairs, 50)), np.linspace(0, pairs - 1, 200)
                                 .astype(np.int64), pairs - 1 - np.arange(min(pairs, 50))])
            worst = max(abs(f(e + 1, pairs) - f(e, pairs)) for e in es)
            assert worst <= bound * (1 + 1e-9)  # floating-point rounding only
        assert abs(f(1, big) - f(0, big)) == pytest.approx(bound)
    with pytest.raises(NotApplicableError, match="3 nodes"):
        hrg_sensitivity(2)


# --------------------------------------------------------------------------- the chain
def _clusters(left, right, n):
    """A dendrogram's set of leaf clusters (its identity as an unordered tree)."""
    memo = {}

    def leaves(v):
        if v < n:
            return frozenset([v])
        if v not in memo:
            memo[v] = leaves(left[v - n]) | leaves(right[v - n])
        return memo[v]

    return frozenset(leaves(v) for v in range(n, 2 * n - 1))


def test_chain_targets_the_exponential_mechanism():
    """Independent chains on 4 nodes end in each of the 15 dendrograms with probability
    ~ exp(T logL): the proposal is symmetric and the likelihood change is right."""
    n, temperature = 4, 0.8
    graph = Graph.from_edges(np.array([[0, 1], [1, 2], [0, 2], [2, 3]]), n)
    trees = all_dendrograms(n)
    f = _loglik_vector(n)(graph)
    target = np.exp(temperature * (f - f.max()))
    target /= target.sum()
    index = {_clusters(*_arrays(t, n), n): i for i, t in enumerate(trees)}
    gen = rng(7)
    runs = 6000
    counts = np.zeros(len(trees))
    for _ in range(runs):
        left, right, *_ = hrg.fit_dendrogram(graph, temperature=temperature, steps=60, rng=gen)
        counts[index[_clusters(left, right, n)]] += 1
    expected = runs * target
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 40  # 14 degrees of freedom: P[chi2 > 40] < 3e-4
    # and a wrong temperature is detected by the same statistic
    wrong = np.exp(0.2 * (f - f.max()))
    wrong = runs * wrong / wrong.sum()
    assert ((counts - wrong) ** 2 / wrong).sum() > 100


def test_incremental_state_matches_a_fresh_computation(karate):
    left, right, root, e, size, accepted, loglik = hrg.fit_dendrogram(
        karate, temperature=0.5, steps=30_000, rng=rng(3))
    assert accepted > 0
    assert loglik == pytest.approx(hrg_log_likelihood(karate, left, right), rel=1e-12)
    assert e.sum() == karate.n_edges and size[root] == karate.n_nodes


# --------------------------------------------------------------------------- the release
def test_counts_are_disjoint_and_cover_every_edge(karate):
    """With noise off, the released counts (internal nodes and ER blocks) add up to m:
    every edge is in exactly one count, the parallel composition the proof uses."""
    left, right, root, e, size, *_ = hrg.fit_dendrogram(karate, temperature=0.1, steps=5000,
                                                         rng=rng(4))
    n = karate.n_nodes
    for er in (True, False):
        with noise_off():
            starts, n_left, n_right, pairs, noisy = hrg._release_blocks(
                n, left, right, root, e, size, epsilon=1.0, er_blocks=er, rng=rng(),
                ledger=None)
        assert noisy.sum() == karate.n_edges
        assert pairs.sum() == n * (n - 1) // 2  # the blocks tile all node pairs
        assert np.all(noisy <= pairs)
        assert (n_right == 0).any() == er


def test_graph_sampling_respects_blocks():
    """Pairs are distinct and drawn inside their block (left x right, or within ER)."""
    order = np.arange(10)[::-1].copy()
    starts = np.array([0, 4, 6])
    n_left = np.array([2, 2, 4])
    n_right = np.array([2, 0, 0])
    counts = np.array([4, 1, 3])
    out = hrg._place_pairs(rng(5), order, starts, n_left, n_right, counts, int(counts.sum()))
    got = [tuple(sorted(p)) for p in out.tolist()]
    assert len(set(got)) == len(got) == 8
    assert set(got[:4]) == {(v, u) for u in (8, 9) for v in (6, 7)}
    assert set(got[4:5]) <= {(4, 5)}
    assert all(set(p) <= {0, 1, 2, 3} for p in got[5:])


def test_priv_hrg_release(karate):
    ledger = PrivacyLedger(2.0)
    out = priv_hrg(karate, epsilon=2.0, rng=rng(1), ledger=ledger)
    assert ledger.spent == pytest.approx(2.0)
    labels = [entry.label for entry in ledger.entries]
    assert any("exponential" in label for label in labels)
    assert isinstance(out.value, Graph) and out.value.n_nodes == karate.n_nodes
    assert out.info["mcmc_steps"] == 1100 * karate.n_nodes
    assert 0 < out.diagnostics["acceptance"] <= 1
    # almost no noise: the blocks' Binomial draws have mean m in total (sd < sqrt(m))
    sizes = [priv_hrg(karate, epsilon=1e4, mcmc_steps_per_node=100, rng=rng(s)).value.n_edges
             for s in range(8)]
    assert abs(np.mean(sizes) - karate.n_edges) < 4 * math.sqrt(karate.n_edges / 8)


def test_same_seed_same_release(karate):
    a = priv_hrg(karate, epsilon=1.0, mcmc_steps_per_node=50, rng=rng(4)).value
    b = priv_hrg(karate, epsilon=1.0, mcmc_steps_per_node=50, rng=rng(4)).value
    assert np.array_equal(a.edges(), b.edges())


def test_bad_input_is_a_clear_error(karate):
    for eps in (0, -1, float("nan"), "1"):
        with pytest.raises(PrivpubError, match="epsilon"):
            priv_hrg(karate, epsilon=eps, rng=rng())
    with pytest.raises(PrivpubError, match="Graph"):
        priv_hrg(np.ones((3, 3)), epsilon=1.0, rng=rng())
    for share in (0, 1, 1.5):
        with pytest.raises(PrivpubError, match="mcmc_share"):
            priv_hrg(karate, epsilon=1.0, mcmc_share=share, rng=rng())
    with pytest.raises(PrivpubError, match="mcmc_steps_per_node"):
        priv_hrg(karate, epsilon=1.0, mcmc_steps_per_node=-1, rng=rng())
    ledger = PrivacyLedger(1.0)
    with pytest.raises(NotApplicableError, match="3 nodes"):
        priv_hrg(Graph.from_edges(np.array([[0, 1]]), 2), epsilon=1.0, rng=rng(),
                 ledger=ledger)
    assert ledger.spent == 0


def test_registration():
    info = get_mechanism("priv_hrg")
    assert info.privacy == "edge-DP" and info.paper == "xiao2014"
    assert info.caveat and "finite" in info.caveat
