"""Tests of theta-CumulativeHistogram / theta-Constrained (day2016 Sec 3.3, Algorithms 3-4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privpub.errors import DataError, PrivpubError
from privpub.isotonic import isotonic_regression
from privpub.ledger import PrivacyLedger
from privpub.mechanisms import theta_cumulative as tc
from privpub.mechanisms.degree_projection import all_theta_histograms, projection_profile
from privpub.mechanisms.tests.test_degree_projection import random_graph, sweep_all_graphs
from privpub.metrics.distributions import l1
from privpub.noise import laplace_noise
from privpub.registry import NO_PRIVACY, NODE_DP, get_mechanism
from privpub.testing import empirical_privacy_check
from privpub.types import Graph, Kind

# Worst-case node neighbours at theta = 3: cumhist_1..3 are [6, 6, 6] and [3, 6, 7].
G = Graph.from_edges(np.array([[0, 1], [2, 3], [4, 5]]))
G_PRIME = Graph.from_edges(np.vstack([G.edges(), [[i, 6] for i in range(6)]]))


# --------------------------------------------------------------------------- Algorithm 3
def extract_literal(hc):
    """Algorithm 3 as printed (1-based; hc_0 = 0, hc_{theta+1} read as +infinity)."""
    theta = len(hc)
    x = [0.0, *map(float, hc), math.inf]
    if x[1] < 0:
        x[1] = 0.0
    h = [0.0] * (theta + 1)
    i = 1
    while i <= theta:
        if x[i] < x[i + 1]:
            h[i] = x[i] - x[i - 1]
            i += 1
        else:
            j = next((jj for jj in range(theta, i - 1, -1) if x[jj - 1] < x[i]), i)
            for k in range(i, j + 1):
                h[k] = (x[j] - x[i - 1]) / (j - i + 1)
            i = j + 1
    return np.array(h[1:])


def test_extract_histogram_is_a_histogram_and_follows_algorithm_3():
    rng = np.random.default_rng(0)
    agree = 0
    for _ in range(3000):
        theta = int(rng.integers(1, 30))
        true = np.cumsum(rng.integers(0, 20, size=theta)).astype(float)
        hc = true + rng.laplace(0, rng.choice([0.5, 5.0, 50.0]), size=theta)
        h = tc.extract_histogram(hc)
        assert h.shape == (theta,) and np.all(h >= 0) and np.all(np.diff(np.cumsum(h)) >= 0)
        lit = extract_literal(hc)
        if np.all(lit >= 0):  # where the printed algorithm yields a histogram, the same one
            np.testing.assert_allclose(h, lit, rtol=1e-12, atol=1e-9)
            agree += 1
        assert h.sum() <= max(hc.max(), 0) + 1e-9
    assert agree > 1000  # the comparison was exercised, blocks included


def test_extract_histogram_cases():
    assert tc.extract_histogram([1.0, 3.0, 6.0]).tolist() == [1.0, 2.0, 3.0]  # identity
    assert tc.extract_histogram([2.0, 5.0, 4.0, 9.0]).tolist() == pytest.approx(
        [2, 7 / 3, 7 / 3, 7 / 3]
    )
    assert tc.extract_histogram([-3.0]).tolist() == [0.0]  # line 1
    assert tc.extract_histogram([-3.0, -5.0, -1.0]).tolist() == [0.0, 0.0, 0.0]
    assert tc.extract_histogram([5.0, 1.0]).tolist() == [5.0, 0.0]  # no negative last bin
    assert tc.extract_histogram([]).size == 0
    with pytest.raises(PrivpubError, match="finite"):
        tc.extract_histogram([1.0, np.nan])


def test_constrained_histogram():
    rng = np.random.default_rng(1)
    for _ in range(200):
        hc = np.cumsum(rng.integers(0, 9, size=12)) + rng.laplace(0, 6, size=12)
        h = tc.constrained_histogram(hc)
        assert np.all(h >= 0)
        fit = isotonic_regression(hc)
        if fit[0] >= 0:
            np.testing.assert_allclose(np.cumsum(h), fit, atol=1e-9)
    assert tc.constrained_histogram([1.0, 3.0, 6.0]).tolist() == [1.0, 2.0, 3.0]


# --------------------------------------------------------------------------- quality
def test_quality_formula():
    g = random_graph(np.random.default_rng(2), 50, 0.2)
    prof = projection_profile(g, 15)
    q = tc.cumulative_quality(prof, 0.9)
    top = projection_profile(g, 15).histograms[-1]
    for theta in range(1, 16):
        want = -2 * top[theta + 1 :].sum() - math.sqrt(theta) * (theta + 1) / 0.9
        assert q[theta - 1] == pytest.approx(want)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_quality_sensitivity_2_big_theta_plus_2_by_brute_force(n):
    """|q^c(G, theta) - q^c(G', theta)| = 2 |change of #{deg_{pi_Theta} > theta}|, over all
    graphs on n nodes, all node neighbours (new node at every id) and all theta <= Theta."""
    _, _, above_w, _ = sweep_all_graphs(n)
    for big_theta in range(1, n + 1):
        worst = 2 * above_w[big_theta - 1, :big_theta].max()
        assert worst <= tc.cumulative_quality_sensitivity(big_theta)
        if big_theta >= 2:
            assert worst == 2 * big_theta + 2  # attained


def test_paper_sensitivity_2_theta_plus_2_with_lowercase_theta_is_wrong():
    """Sec 3.3 states Delta q^c = 2 theta + 2. Per candidate theta this fails: at theta = 1
    with Theta = 3 the quality changes by 8 > 2 * 1 + 2 (= 2 Theta + 2, the bound used)."""
    big_theta, eps2 = 3, 0.9
    q0 = tc.cumulative_quality(all_theta_histograms(G.edges(), 6, big_theta), eps2)
    # the new node joins one end of every matching edge: nodes 0, 2, 4 go from degree 1 to 2
    gp = np.vstack([G.edges(), [[0, 6], [2, 6], [4, 6]]])
    q1 = tc.cumulative_quality(all_theta_histograms(gp, 7, big_theta), eps2)
    change = abs(q1[0] - q0[0])
    assert change == pytest.approx(8.0)
    assert change > 2 * 1 + 2
    assert change <= tc.cumulative_quality_sensitivity(big_theta)


# --------------------------------------------------------------------------- mechanism
def test_registration():
    for name in ("theta_cumulative_histogram", "theta_constrained"):
        info = get_mechanism(name)
        assert (info.privacy, info.paper, info.input_kind, info.output_kind) == (
            NODE_DP,
            "day2016",
            Kind.GRAPH,
            Kind.DEGREE_HISTOGRAM,
        )
        assert info.caveat is None
    for name in ("theta_cumulative_qbest", "theta_cumulative_oracle"):
        info = get_mechanism(name)
        assert info.privacy == NO_PRIVACY and "non-privately" in info.caveat
        assert info.parameters == get_mechanism("theta_cumulative_histogram").parameters


@pytest.mark.parametrize("f", [tc.theta_cumulative_histogram, tc.theta_constrained])
def test_ledger_records_the_split(f):
    for eps in (0.1, 1.0, 3.7):
        ledger = PrivacyLedger(eps)
        out = f(G_PRIME, epsilon=eps, theta_max=50, rng=np.random.default_rng(1), ledger=ledger)
        e = ledger.entries
        assert ledger.spent == pytest.approx(eps) and ledger.remaining == 0
        assert [x.primitive for x in e] == ["exponential", "laplace"]
        assert e[0].epsilon == pytest.approx(0.1 * eps)
        assert e[1].epsilon == pytest.approx(0.9 * eps)
        assert e[0].sensitivity == 2 * 50 + 2
        assert e[1].sensitivity == out.info["theta"] + 1
        assert set(out.info) == {"theta"}


@pytest.mark.parametrize("f", [tc.theta_cumulative_histogram, tc.theta_constrained])
def test_release_at_huge_epsilon(f):
    g = random_graph(np.random.default_rng(3), 300, 0.02)
    h = projection_profile(g, 8).histogram(8)
    assert np.all(h[1:] > 0) and g.degrees().max() > 8  # no ties in cumhist; a real choice
    out = f(g, epsilon=1e7, theta_max=8, rng=np.random.default_rng(0))
    counts = out.value.counts
    assert counts[0] == 0 and np.all(counts >= 0)
    assert counts.sum() == pytest.approx(g.n_nodes, abs=1e-3)
    q = tc.cumulative_quality(projection_profile(g, 8), 0.9e7)
    assert out.info["theta"] == int(np.argmax(q)) + 1 == 8
    qb = tc.theta_cumulative_qbest(g, epsilon=1e7, theta_max=8, rng=np.random.default_rng(0))
    assert qb.info == out.info
    # noiseless: bins 1..theta-1 are the projected histogram's (degree 0 folded into 1)
    np.testing.assert_allclose(counts[1:8], [h[0] + h[1], *h[2:8]], atol=1e-3)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -2}, "epsilon"),
        ({"epsilon": 1, "theta_max": 0}, "theta_max"),
        ({"epsilon": 1, "theta_max": -5}, "theta_max"),
        ({"epsilon": 1, "tail": "exp"}, "tail"),
        ({"epsilon": 1, "order": "degree"}, "order"),
    ],
)
def test_bad_arguments(kwargs, error):
    for f in (tc.theta_cumulative_histogram, tc.theta_constrained, tc.theta_cumulative_oracle):
        with pytest.raises(PrivpubError, match=error):
            f(G, rng=np.random.default_rng(0), **kwargs)
    with pytest.raises(DataError, match="Graph"):
        tc.theta_cumulative_histogram([[0, 1]], epsilon=1, rng=np.random.default_rng(0))


@pytest.mark.parametrize("tail", ["linear", "powerlaw", "uniform"])
def test_every_variant_runs(tail):
    g = random_graph(np.random.default_rng(4), 120, 0.08)
    for f in (
        tc.theta_cumulative_histogram,
        tc.theta_constrained,
        tc.theta_cumulative_qbest,
        tc.theta_cumulative_oracle,
    ):
        for order in ("lexicographic", "random"):
            kw = dict(epsilon=0.5, theta_max=15, tail=tail, order=order)
            a = f(g, rng=np.random.default_rng(5), **kw)
            b = f(g, rng=np.random.default_rng(5), **kw)
            assert np.array_equal(a.value.counts, b.value.counts) and a.info == b.info
            assert np.all(a.value.counts >= 0) and a.value.counts[0] == 0
            assert 1 <= a.info["theta"] <= 15


def test_oracle_returns_the_least_error_theta():
    g = random_graph(np.random.default_rng(6), 150, 0.06)
    seed, big_theta = 9, 12
    out = tc.theta_cumulative_oracle(
        g, epsilon=0.5, theta_max=big_theta, rng=np.random.default_rng(seed)
    )
    rng = np.random.default_rng(seed)
    prof = projection_profile(g, big_theta)
    truth = g.degree_histogram()
    errors = []
    for theta in range(1, big_theta + 1):
        noisy = tc.folded_cumulative(prof, theta) + laplace_noise(
            sensitivity=theta + 1, epsilon=0.45, rng=rng, size=theta
        )
        errors.append(l1(truth, tc._release(noisy, theta, "linear", "extract")))
    assert l1(truth, out.value) == pytest.approx(min(errors))
    assert out.info["theta"] == int(np.argmin(errors)) + 1


# --------------------------------------------------------------------------- privacy
def _sampler(graph, eps):
    def sample(rng):
        return tc.theta_cumulative_histogram(graph, epsilon=eps, theta_max=3, rng=rng)

    return sample


def _events():
    def bin_above(d, c):
        return lambda out: out.value.counts.size > d and out.value.counts[d] > c

    events = {f"theta == {t}": (lambda out, t=t: out.info["theta"] == t) for t in (1, 2, 3)}
    for d, cs in ((1, (2.0, 4.0, 5.0)), (2, (1.0, 2.0)), (3, (0.5,))):
        events |= {f"count[{d}] > {c}": bin_above(d, c) for c in cs}
    events["total > 6.5"] = lambda out: out.value.counts.sum() > 6.5
    return events


def test_empirical_privacy_on_worst_case_pair():
    eps = 1.0
    check = empirical_privacy_check(
        _sampler(G, eps),
        _sampler(G_PRIME, eps),
        events=_events(),
        epsilon=eps,
        n_trials=3000,
        rng=np.random.default_rng(7),
    )
    assert check.passed


def test_empirical_check_detects_a_too_small_cumulative_sensitivity(monkeypatch):
    monkeypatch.setattr(tc, "cumhist_sensitivity", lambda theta: 0.1 * (theta + 1))
    eps = 1.0
    check = empirical_privacy_check(
        _sampler(G, eps),
        _sampler(G_PRIME, eps),
        events=_events(),
        epsilon=eps,
        n_trials=1500,
        rng=np.random.default_rng(7),
        raise_on_violation=False,
    )
    assert not check.passed and check.epsilon_lower_bound > 1.5 * eps
