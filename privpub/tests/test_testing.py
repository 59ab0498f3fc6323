"""Tests of the privacy test kit (privpub.testing): it must pass correct mechanisms and
catch broken ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privpub.errors import PrivpubError
from privpub.testing import (
    all_graphs,
    brute_force_sensitivity,
    clopper_pearson,
    empirical_privacy_check,
    flip_one_entry_neighbours,
    graph_edge_neighbours,
    replace_one_row_neighbours,
)
from privpub.types import Graph

EPS = 1.0
TAIL_EVENTS = {f"output > {t}": (lambda out, t=t: out > t) for t in (-1.0, 0.5, 1.0, 2.0)}


def laplace_count(count, scale):
    """Batch sampler of a noisy count: ``count + Lap(scale)``."""
    return lambda rng, n: count + rng.laplace(0.0, scale, size=n)


def check(scale, *, eps=EPS, n_trials=20_000, seed=0, **kw):
    return empirical_privacy_check(
        laplace_count(0, scale), laplace_count(1, scale), events=TAIL_EVENTS, epsilon=eps,
        n_trials=n_trials, rng=np.random.default_rng(seed), batch=True, **kw,
    )


# --------------------------------------------------------------------------- neighbour test
def test_correct_laplace_passes():
    result = check(1 / EPS)  # sensitivity 1 / eps: exactly tight on the tails
    assert result.passed
    assert result.epsilon_lower_bound <= EPS
    assert len(result.events) == 2 * len(TAIL_EVENTS)  # complements included


def test_laplace_with_half_the_scale_is_caught():
    with pytest.raises(AssertionError, match="VIOLATED"):
        check(0.5 / EPS)
    result = check(0.5 / EPS, raise_on_violation=False)
    assert not result.passed
    # true privacy loss of Lap(1 / (2 eps)) on a sensitivity-1 count is 2 eps
    assert EPS < result.epsilon_lower_bound <= 2 * EPS
    names = {e.name for e in result.violations}
    assert "output > 1.0" in names


def test_claiming_too_small_an_epsilon_is_caught():
    assert not check(1 / EPS, eps=0.5 * EPS, raise_on_violation=False).passed


def test_false_alarm_rate_is_controlled():
    """Over 40 independent checks of a correct (tight) mechanism with alpha = 0.05 the
    family-wise bound is conservative: almost all pass."""
    failures = sum(
        not check(1 / EPS, n_trials=4000, seed=s, alpha=0.05, raise_on_violation=False).passed
        for s in range(40)
    )
    assert failures <= 4  # P[Binomial(40, 0.05) >= 5] ~ 0.05; in truth far below alpha


def test_slack_absorbs_a_delta():
    """Mechanism: with probability delta output 'leak' on D only (an (0, delta)-DP bug)."""
    delta = 0.02

    def sampler(leaky):
        def sample(rng, n):
            return np.where(leaky & (rng.random(n) < delta), 1, 0)
        return sample

    events = {"leak": lambda out: out == 1}
    kwargs = dict(events=events, epsilon=0.1, n_trials=20_000, batch=True)
    strict = empirical_privacy_check(sampler(True), sampler(False), rng=np.random.default_rng(1),
                                     raise_on_violation=False, **kwargs)
    assert not strict.passed
    relaxed = empirical_privacy_check(sampler(True), sampler(False),
                                      rng=np.random.default_rng(1), slack=0.03, **kwargs)
    assert relaxed.passed


def test_non_batch_mode_and_event_forms():
    """Per-call samplers; events as a list of named functions and as a single function."""
    rng = np.random.default_rng(2)

    def above_one(out):
        return out > 1.0

    def sample_d(rng):
        return rng.laplace(0.0, 0.5)

    def sample_dp(rng):
        return 1 + rng.laplace(0.0, 0.5)

    res = empirical_privacy_check(sample_d, sample_dp, events=[above_one], epsilon=1.0,
                                  n_trials=3000, rng=rng, raise_on_violation=False)
    assert not res.passed and res.events[0].name == "above_one"
    res = empirical_privacy_check(sample_d, sample_dp, events=above_one, epsilon=2.2,
                                  n_trials=3000, rng=rng, include_complements=False)
    assert res.passed and len(res.events) == 1
    assert 0.05 < res.events[0].p_d < 0.1  # P[Lap(0.5) > 1] = e^-2 / 2 = 0.068
    text = str(res)
    assert "above_one" in text and "passed" in text


def test_bad_arguments():
    s = laplace_count(0, 1.0)
    with pytest.raises(PrivpubError):
        empirical_privacy_check(s, s, events={}, epsilon=1.0, n_trials=10, rng=0, batch=True)
    with pytest.raises(PrivpubError):
        empirical_privacy_check(s, s, events=TAIL_EVENTS, epsilon=0.0, n_trials=10, rng=0)
    with pytest.raises(PrivpubError):
        empirical_privacy_check(s, s, events=TAIL_EVENTS, epsilon=1.0, n_trials=0, rng=0)
    with pytest.raises(PrivpubError):
        empirical_privacy_check(s, s, events=TAIL_EVENTS, epsilon=1.0, n_trials=10, rng=0,
                                alpha=1.5)
    with pytest.raises(PrivpubError, match="booleans"):
        empirical_privacy_check(s, s, events={"bad": lambda out: True}, epsilon=1.0,
                                n_trials=10, rng=0, batch=True)


def test_clopper_pearson_bounds():
    assert clopper_pearson(0, 10, 0.05)[0] == 0.0
    assert clopper_pearson(10, 10, 0.05)[1] == 1.0
    low, high = clopper_pearson(30, 100, 0.025)
    assert low < 0.3 < high
    # matches scipy's two-sided exact interval at twice the level
    ci = stats.binomtest(30, 100).proportion_ci(confidence_level=0.95, method="exact")
    assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-9)
    # coverage: the one-sided lower bound fails about alpha of the time (exact test is
    # conservative: at most alpha)
    rng = np.random.default_rng(3)
    p, n, alpha = 0.3, 50, 0.1
    counts = rng.binomial(n, p, size=1000)
    misses = sum(clopper_pearson(int(c), n, alpha)[0] > p for c in counts)
    assert misses / 1000 <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / 1000)


# --------------------------------------------------------------------------- sensitivity
def test_sensitivity_of_edge_count_and_degree_histogram():
    graphs = list(all_graphs(4))
    assert len(graphs) == 64
    n_edges = brute_force_sensitivity(lambda g: g.n_edges, graphs, graph_edge_neighbours)
    assert n_edges == 1.0
    degrees_l1 = brute_force_sensitivity(lambda g: g.degrees(), graphs, graph_edge_neighbours)
    assert degrees_l1 == 2.0
    # degree histogram: one edge moves two nodes between degree bins: L1 change 4 (Hay et al.)
    hist, g, gp = brute_force_sensitivity(
        lambda g: g.degree_histogram().counts, graphs, graph_edge_neighbours,
        return_witness=True,
    )
    assert hist == 4.0
    assert abs(g.n_edges - gp.n_edges) == 1
    assert brute_force_sensitivity(lambda g: g.degrees(), graphs, graph_edge_neighbours,
                                   norm="linf") == 1.0
    assert brute_force_sensitivity(lambda g: g.degrees(), graphs, graph_edge_neighbours,
                                   norm="l2") == pytest.approx(math.sqrt(2))


def test_sensitivity_catches_a_wrong_bound():
    """Triangle count: one edge can close up to n - 2 triangles, not 1."""

    def triangles(g):
        a = g.adjacency.toarray().astype(int)
        return np.trace(a @ a @ a) / 6

    worst = brute_force_sensitivity(triangles, all_graphs(4), graph_edge_neighbours)
    assert worst == 2.0  # > 1: a mechanism assuming sensitivity 1 would be caught


def test_sensitivity_custom_norm_and_errors():
    xs = [np.array([0, 1]), np.array([1, 1])]
    nb = lambda x: [x + np.array([1, 0]), x - np.array([0, 2])]  # noqa: E731
    assert brute_force_sensitivity(lambda x: x, xs, nb) == 2.0
    assert brute_force_sensitivity(lambda x: x, xs, nb, norm=lambda d: 10 * np.abs(d).max()) == 20
    assert brute_force_sensitivity(lambda x: x, [], nb) == 0.0
    with pytest.raises(PrivpubError, match="norm"):
        brute_force_sensitivity(lambda x: x, xs, nb, norm="l3")
    with pytest.raises(PrivpubError, match="shapes"):
        brute_force_sensitivity(lambda x: np.zeros((2, 2)) if x[0] else np.zeros((3, 3)),
                                xs, nb)
    with pytest.raises(PrivpubError, match="NaN"):
        brute_force_sensitivity(lambda x: np.nan, xs, nb)


# --------------------------------------------------------------------------- neighbours
def test_neighbour_generators():
    g = Graph.from_edges([(0, 1)], 3)
    nbs = list(graph_edge_neighbours(g))
    assert len(nbs) == 3
    assert sorted(h.n_edges for h in nbs) == [0, 2, 2]
    assert len(list(all_graphs(3))) == 8
    with pytest.raises(PrivpubError):
        list(all_graphs(8))
    m = np.array([[1, 0], [0, 0]])
    flips = list(flip_one_entry_neighbours(m))
    assert len(flips) == 4 and all(np.abs(f - m).sum() == 1 for f in flips)
    rows = list(replace_one_row_neighbours(m))
    assert len(rows) == 2 * 3
    assert all(np.abs(r - m).sum(axis=1).astype(bool).sum() == 1 for r in rows)
    np.testing.assert_array_equal(m, [[1, 0], [0, 0]])  # not modified
