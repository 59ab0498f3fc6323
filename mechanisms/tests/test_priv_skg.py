"""PrivSKG (mir2012): sensitivities by brute force, moment formulas, fit, sampler, ledger."""

import itertools
import math

import numpy as np
import pytest

from privpub.data import load_dataset
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.priv_skg import (
    _noisy_triangles,
    expected_features,
    fit_initiator,
    moment_features,
    pair_profile,
    priv_skg,
    sample_kronecker_graph,
    triangle_local_sensitivity,
    triangle_smooth_sensitivity,
)
from privpub.noise import noise_off
from privpub.registry import get_mechanism
from privpub.testing import (
    all_graphs,
    brute_force_sensitivity,
    empirical_privacy_check,
    graph_edge_neighbours,
)
from privpub.types import Graph


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.fixture(scope="module")
def karate():
    return load_dataset("karate")


@pytest.fixture(scope="module")
def five_node_graphs():
    """Every graph on 5 nodes, indexed by its edge bitmask over the 10 node pairs."""
    return list(all_graphs(5))


def kron(a, b, c, levels):
    p = np.array([[a, b], [b, c]])
    out = p
    for _ in range(levels - 1):
        out = np.kron(out, p)
    return out


def naive_triangles(g: Graph) -> int:
    a = g.adjacency.toarray().astype(np.int64)
    return int(np.trace(a @ a @ a) // 6)


def naive_profile(g: Graph):
    """(triangles, largest b for each a) by looping over all node pairs."""
    adj = g.adjacency.toarray().astype(bool)
    n = adj.shape[0]
    best = np.full(max(n - 1, 1), -1, dtype=np.int64)
    for i, j in itertools.combinations(range(n), 2):
        others = np.ones(n, dtype=bool)
        others[[i, j]] = False
        a = int(np.sum(adj[i] & adj[j] & others))
        b = int(np.sum((adj[i] ^ adj[j]) & others))
        best[a] = max(best[a], b)
    return naive_triangles(g), best


# --------------------------------------------------------------------------- validation
def test_bad_input_is_a_clear_error(karate):
    for eps in (0, -1, float("nan"), float("inf"), "1"):
        with pytest.raises(PrivpubError, match="epsilon"):
            priv_skg(karate, epsilon=eps, rng=rng())
    with pytest.raises(PrivpubError, match="Graph"):
        priv_skg(np.ones((4, 4)), epsilon=1.0, rng=rng())
    with pytest.raises(NotApplicableError, match="at least 4 nodes"):
        priv_skg(Graph.from_edges([[0, 1], [1, 2]], 3), epsilon=1.0, rng=rng())
    for bad in ({"degree_share": 0.0}, {"degree_share": 1.0}, {"delta": 0.0},
                {"delta": 1.0}, {"triangle_noise": "cauchy"}, {"max_edges": 0}):
        with pytest.raises(PrivpubError, match=next(iter(bad))):
            priv_skg(karate, epsilon=1.0, rng=rng(), **bad)


def test_max_edges_is_not_applicable_before_sampling(karate):
    with pytest.raises(NotApplicableError, match="max_edges"):
        priv_skg(karate, epsilon=1.0, max_edges=5, rng=rng())


# --------------------------------------------------------------------------- sensitivities
def test_sorted_degree_sequence_has_l1_sensitivity_2(five_node_graphs):
    """Hay et al.'s bound, which the degree noise Lap(2 / eps_1) relies on."""
    sens = brute_force_sensitivity(lambda g: np.sort(g.degrees()), five_node_graphs,
                                   graph_edge_neighbours)
    assert sens == 2.0


def test_pair_profile_matches_naive_loops(five_node_graphs):
    r = rng(3)
    graphs = five_node_graphs[::37] + [
        Graph.from_edges(np.argwhere(np.triu(r.random((n, n)) < p, 1)), n)
        for n, p in ((12, 0.3), (15, 0.6), (20, 0.15), (9, 0.9), (30, 0.2))
    ]
    for g in graphs:
        tri, best = pair_profile(g)
        tri_ref, best_ref = naive_profile(g)
        assert tri == tri_ref
        assert best.tolist() == best_ref.tolist()


def test_pair_profile_triangles_on_karate(karate):
    assert pair_profile(karate)[0] == naive_triangles(karate) == 45


def _brute_force_ls_table(graphs, n_pairs, s_max):
    """``A[s, g]``: the largest local sensitivity of the triangle count (brute force over
    all edge neighbours) among graphs within ``s`` edge changes of graph ``g`` (index =
    edge bitmask)."""
    tri = np.array([naive_triangles(g) for g in graphs])
    masks = np.arange(len(graphs))
    ls = np.zeros(len(graphs))
    for e in range(n_pairs):
        ls = np.maximum(ls, np.abs(tri - tri[masks ^ (1 << e)]))
    table = [ls]
    for _ in range(s_max):
        prev = table[-1]
        nxt = prev.copy()
        for e in range(n_pairs):
            nxt = np.maximum(nxt, prev[masks ^ (1 << e)])
        table.append(nxt)
    return np.array(table)


def test_local_sensitivity_at_distance_s_matches_brute_force(five_node_graphs):
    """[NRS07] Claim 3.13, checked on every graph on 5 nodes and every distance."""
    s_max = 12
    table = _brute_force_ls_table(five_node_graphs, 10, s_max)
    s = np.arange(s_max + 1)
    for idx, g in enumerate(five_node_graphs):
        _, best = pair_profile(g)
        assert triangle_local_sensitivity(best, 5, s).tolist() == table[:, idx].tolist()


@pytest.mark.parametrize("beta", [0.05, 0.3, 1.0])
def test_smooth_sensitivity_is_exact_and_beta_smooth(five_node_graphs, beta):
    """The value equals max_s exp(-beta s) A^(s) by brute force, bounds the local
    sensitivity, and changes by at most e^beta between edge neighbours ([NRS07] Def 2.1)."""
    table = _brute_force_ls_table(five_node_graphs, 10, 12)
    weights = np.exp(-beta * np.arange(13))[:, None]
    brute = np.max(weights * table, axis=0)  # A^(s) is constant from s = 10 on
    smooth = np.array([triangle_smooth_sensitivity(pair_profile(g)[1], 5, beta)
                       for g in five_node_graphs])
    assert smooth == pytest.approx(brute, rel=1e-12)
    assert np.all(smooth >= table[0])
    masks = np.arange(len(five_node_graphs))
    for e in range(10):
        assert np.all(smooth <= math.exp(beta) * smooth[masks ^ (1 << e)] * (1 + 1e-12))


def test_smooth_sensitivity_on_a_large_graph_stops_early(karate):
    tri, best = pair_profile(karate)
    s = np.arange(0, 2 * 32 + 1)
    ls = triangle_local_sensitivity(best, 34, s)
    assert ls[0] == 10  # karate: at most 10 common neighbours (nodes 0 and 33)
    for beta in (0.01, 0.1, 1.0):
        ref = float(np.max(np.exp(-beta * s) * ls))
        assert triangle_smooth_sensitivity(best, 34, beta) == pytest.approx(ref)


# --------------------------------------------------------------------------- model
@pytest.mark.parametrize("theta", [(0.9, 0.6, 0.2), (0.99, 0.45, 0.25), (0.5, 0.5, 0.5),
                                   (1.0, 0.3, 0.0)])
@pytest.mark.parametrize("levels", [1, 2, 3, 4])
def test_expected_features_match_brute_force_sums(theta, levels):
    p = kron(*theta, levels)
    np.fill_diagonal(p, 0.0)
    n = p.shape[0]
    edges = p.sum() / 2
    row, row2, row3 = p.sum(1), (p**2).sum(1), (p**3).sum(1)
    hairpins = np.sum(row**2 - row2) / 2
    tripins = np.sum(row**3 - 3 * row2 * row + 2 * row3) / 6
    triangles = sum(p[i, j] * p[j, k] * p[i, k]
                    for i, j, k in itertools.combinations(range(n), 3))
    got = expected_features(*theta, levels)
    assert np.allclose(got, (edges, hairpins, tripins, triangles), rtol=1e-10, atol=1e-12)


def test_gleich_owen_tripin_formula_differs_as_documented():
    """PGB's SKG.py / SNAP's tripin formula (coefficients 5, 4) is off by (X^k - Y^k) / 3."""
    a, b, c, k = 0.9, 0.6, 0.2, 4
    x = a**3 + c**3 + b**2 * (a + c)
    y = a**3 + c**3 + b * (a**2 + c**2)
    theirs = ((((a + b) ** 3 + (b + c) ** 3) ** k
               - 3 * (a * (a + b) ** 2 + c * (b + c) ** 2) ** k
               - 3 * (a**3 + c**3 + b * (a**2 + c**2) + b**2 * (a + c) + 2 * b**3) ** k
               + 2 * (a**3 + c**3 + 2 * b**3) ** k + 5 * x**k + 4 * y**k
               - 6 * (a**3 + c**3) ** k) / 6)
    ours = float(expected_features(a, b, c, k)[2])
    assert theirs - ours == pytest.approx((x**k - y**k) / 3)
    assert abs(theirs - ours) > 0.1


def test_fit_recovers_an_initiator_from_its_expected_features():
    for theta, levels in (((0.9, 0.55, 0.2), 10), ((0.99, 0.45, 0.25), 13)):
        feats = [float(f) for f in expected_features(*theta, levels)]
        a, b, c, obj = fit_initiator(feats, levels)
        assert (a, b, c) == pytest.approx(theta, abs=2e-3)
        assert obj < 1e-6
    with pytest.raises(PrivpubError, match="four finite"):
        fit_initiator([1.0, 2.0, float("nan"), 3.0], 5)


def test_fit_is_deterministic():
    feats = (1000.0, 20000.0, 300000.0, 900.0)
    assert fit_initiator(feats, 9) == fit_initiator(feats, 9)


# --------------------------------------------------------------------------- sampler
@pytest.mark.parametrize("levels", [1, 2, 3, 5])
def test_sampler_extremes(levels):
    n = 1 << levels
    full = sample_kronecker_graph(1.0, 1.0, 1.0, levels, rng=rng())
    assert full.tolist() == [list(p) for p in itertools.combinations(range(n), 2)]
    assert sample_kronecker_graph(0.0, 0.0, 0.0, levels, rng=rng()).shape == (0, 2)
    assert sample_kronecker_graph(1.0, 0.0, 1.0, levels, rng=rng()).shape == (0, 2)


def test_sampler_pair_frequencies_match_kronecker_probabilities():
    theta, levels, draws = (0.8, 0.5, 0.3), 3, 2000
    p = kron(*theta, levels)
    n = p.shape[0]
    counts = np.zeros((n, n))
    r = rng(5)
    for _ in range(draws):
        e = sample_kronecker_graph(*theta, levels, rng=r)
        assert np.all(e[:, 0] < e[:, 1])
        assert len({tuple(x) for x in e.tolist()}) == len(e)
        counts[e[:, 0], e[:, 1]] += 1
    iu = np.triu_indices(n, 1)
    freq, prob = counts[iu] / draws, p[iu]
    z = (freq - prob) / np.sqrt(prob * (1 - prob) / draws + 1e-12)
    assert np.max(np.abs(z)) < 5
    assert np.all(np.diag(counts) == 0)


def test_sampled_features_average_to_the_expected_ones():
    theta, levels, draws = (0.9, 0.6, 0.2), 6, 200
    r = rng(6)
    feats = []
    for _ in range(draws):
        g = Graph.from_edges(sample_kronecker_graph(*theta, levels, rng=r), 1 << levels)
        feats.append([*moment_features(g.degrees()), pair_profile(g)[0]])
    feats = np.array(feats)
    mean, se = feats.mean(0), feats.std(0, ddof=1) / math.sqrt(draws)
    assert np.all(np.abs(mean - np.array(expected_features(*theta, levels))) < 5 * se)


def test_sampler_bad_input():
    with pytest.raises(PrivpubError, match="levels"):
        sample_kronecker_graph(0.5, 0.5, 0.5, 31, rng=rng())
    with pytest.raises(PrivpubError, match="initiator"):
        sample_kronecker_graph(1.5, 0.5, 0.5, 3, rng=rng())


# --------------------------------------------------------------------------- mechanism
def test_release_shape_seed_and_ledger(karate):
    ledger = PrivacyLedger(1.0)
    rel = priv_skg(karate, epsilon=1.0, degree_share=0.3, rng=rng(1), ledger=ledger)
    g = rel.value
    assert isinstance(g, Graph) and g.n_nodes == 34
    assert g.degrees()[32:].sum() == 0  # 2^5 = 32 Kronecker nodes, two padded
    assert set(rel.info) == {"a", "b", "c", "levels", "objective", "edges_noisy",
                             "hairpins_noisy", "tripins_noisy", "triangles_noisy"}
    assert rel.info["levels"] == 5
    assert 0 <= rel.info["c"] <= rel.info["a"] <= 1 and 0 <= rel.info["b"] <= 1
    assert ledger.spent == pytest.approx(1.0)
    (deg, tri) = ledger.entries
    assert (deg.epsilon, deg.sensitivity, deg.primitive) == (pytest.approx(0.3), 2.0, "laplace")
    assert tri.epsilon == pytest.approx(0.7) and tri.sensitivity is None
    assert "delta = 0.01" in tri.label
    again = priv_skg(karate, epsilon=1.0, degree_share=0.3, rng=rng(1))
    assert np.array_equal(again.value.edges(), g.edges()) and again.info == rel.info


def test_noise_free_features_are_the_graphs(karate):
    with noise_off():
        rel = priv_skg(karate, epsilon=1.0, rng=rng(2))
    e, h, t = moment_features(karate.degrees())
    assert (rel.info["edges_noisy"], rel.info["hairpins_noisy"], rel.info["tripins_noisy"],
            rel.info["triangles_noisy"]) == (e, h, t, 45.0)
    assert rel.info["edges_noisy"] == karate.n_edges


def test_registration_and_caveat():
    info = get_mechanism("priv_skg")
    assert info.paper == "mir2012" and info.privacy == "edge-DP"
    assert "delta = 0.01" in info.caveat_for({})
    assert "delta = 0.001" in info.caveat_for({"delta": 0.001})
    assert info.caveat_for({"triangle_noise": "heavy_tailed"}) is None


@pytest.mark.parametrize("triangle_noise,slack", [("heavy_tailed", 0.0), ("laplace", 0.01)])
def test_triangle_release_passes_a_neighbour_test(triangle_noise, slack):
    """The noisy triangle count on two edge neighbours (3 common neighbours: the largest
    change on 6 nodes but one), checked against epsilon (plus delta for Laplace)."""
    base = [[0, 2], [0, 3], [0, 4], [1, 2], [1, 3], [1, 4], [2, 3], [3, 4]]
    d = Graph.from_edges(base, 6)
    d_prime = Graph.from_edges(base + [[0, 1]], 6)
    eps = 1.0

    def sampler(g):
        def sample(r):
            ledger = PrivacyLedger(eps)
            return _noisy_triangles(g, eps, 0.01, triangle_noise, r, ledger)[0]
        return sample

    events = {f"> {t}": (lambda out, t=t: out > t) for t in (3.0, 4.5, 6.0, 9.0)}
    check = empirical_privacy_check(sampler(d), sampler(d_prime), events=events, epsilon=eps,
                                    n_trials=10_000, rng=rng(7), slack=slack)
    assert check.passed
