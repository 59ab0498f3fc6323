"""Distribution tests of the noise primitives and the exponential mechanism (privpub.noise)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from privpub.errors import BudgetExceededError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.noise import (
    cauchy_noise,
    exponential_mechanism,
    exponential_mechanism_probabilities,
    geometric_mechanism,
    geometric_noise,
    heavy_tailed_noise,
    laplace_mechanism,
    laplace_noise,
)

N = 20_000
P_MIN = 1e-3  # seeded tests: a correct sampler passes, a wrong one gives p << P_MIN


def rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------- Laplace
def test_laplace_noise_has_scale_sensitivity_over_epsilon():
    z = laplace_noise(sensitivity=2.0, epsilon=0.5, rng=rng(1), size=N)
    assert stats.kstest(z, stats.laplace(scale=4.0).cdf).pvalue > P_MIN
    # the test has power: a 10% wrong scale is rejected
    assert stats.kstest(z, stats.laplace(scale=3.6).cdf).pvalue < P_MIN


def test_laplace_mechanism_adds_noise_and_spends():
    ledger = PrivacyLedger(1.0)
    values = np.arange(N, dtype=float).reshape(100, -1)
    out = laplace_mechanism(values, sensitivity=3.0, epsilon=0.6, rng=rng(2), ledger=ledger,
                            label="counts")
    assert out.shape == values.shape
    assert stats.kstest((out - values).ravel(), stats.laplace(scale=5.0).cdf).pvalue > P_MIN
    (entry,) = ledger.entries
    assert (entry.label, entry.epsilon, entry.sensitivity, entry.primitive) == (
        "counts", 0.6, 3.0, "laplace")


# --------------------------------------------------------------------------- geometric
def two_sided_geometric_pmf(z, alpha):
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)


@pytest.mark.parametrize("sensitivity,epsilon", [(1.0, 1.0), (2.0, 1.0), (1.0, 0.2)])
def test_geometric_noise_matches_exact_pmf(sensitivity, epsilon):
    z = geometric_noise(sensitivity=sensitivity, epsilon=epsilon, rng=rng(3), size=N)
    assert z.dtype == np.int64
    alpha = math.exp(-epsilon / sensitivity)
    # bins: each integer with expected count >= 5, the two tails lumped
    top = 0
    while N * two_sided_geometric_pmf(top + 1, alpha) >= 5:
        top += 1
    support = np.arange(-top, top + 1)
    expected = N * two_sided_geometric_pmf(support, alpha)
    tail = N * alpha ** (top + 1) / (1 + alpha)  # P[Z > top] = P[Z < -top]
    observed = np.array([np.count_nonzero(z == v) for v in support])
    observed = np.concatenate([[np.count_nonzero(z < -top)], observed,
                               [np.count_nonzero(z > top)]])
    expected = np.concatenate([[tail], expected, [tail]])
    assert expected.sum() == pytest.approx(N)
    assert stats.chisquare(observed, expected).pvalue > P_MIN
    # the pmf with a 10% wrong alpha is rejected
    wrong = N * two_sided_geometric_pmf(support, alpha * 0.9)
    wrong = np.concatenate([[0.5], wrong, [0.5]])
    wrong *= N / wrong.sum()
    assert stats.chisquare(observed, wrong).pvalue < P_MIN


def test_geometric_mechanism_needs_integers_and_spends():
    ledger = PrivacyLedger(2.0)
    out = geometric_mechanism(np.array([5, 7]), sensitivity=1, epsilon=2.0, rng=rng(4),
                              ledger=ledger)
    assert np.issubdtype(out.dtype, np.integer)
    assert ledger.entries[0].primitive == "geometric" and ledger.spent == 2.0
    with pytest.raises(PrivpubError, match="integer"):
        geometric_mechanism(np.array([0.5]), sensitivity=1, epsilon=1.0, rng=rng())


def test_geometric_noise_extreme_epsilon():
    assert np.all(geometric_noise(sensitivity=1, epsilon=800.0, rng=rng(), size=100) == 0)
    z = geometric_noise(sensitivity=1, epsilon=1e-3, rng=rng(), size=2000)
    assert np.std(z) > 100  # variance 2 alpha / (1 - alpha)^2 ~ 2e6


# --------------------------------------------------------------------------- Cauchy
def test_cauchy_noise():
    z = cauchy_noise(scale=2.5, rng=rng(5), size=N)
    assert stats.kstest(z, stats.cauchy(scale=2.5).cdf).pvalue > P_MIN
    assert stats.kstest(z, stats.cauchy(scale=2.0).cdf).pvalue < P_MIN


# --------------------------------------------------------------------------- heavy-tailed
@functools.lru_cache(maxsize=4)
def _heavy_tail_cdf_table(gamma: float, upper: float = 200.0, n_grid: int = 4001):
    """CDF of the density proportional to 1 / (1 + |u|^gamma) on [0, upper] by adaptive
    quadrature between grid points; the mass beyond ``upper`` is ~ upper^(1-gamma)/(gamma-1)."""
    density = lambda u: 1.0 / (1.0 + u**gamma)  # noqa: E731
    grid = np.concatenate([[0.0], np.geomspace(1e-3, upper, n_grid - 1)])
    pieces = [integrate.quad(density, a, b)[0] for a, b in zip(grid[:-1], grid[1:], strict=True)]
    cumulative = np.concatenate([[0.0], np.cumsum(pieces)])
    tail = upper ** (1 - gamma) / (gamma - 1)
    half_mass = cumulative[-1] + tail
    return grid, cumulative, half_mass


def heavy_tail_cdf(z, gamma, scale):
    grid, cumulative, half_mass = _heavy_tail_cdf_table(gamma)
    u = np.abs(np.asarray(z, dtype=float)) / scale
    inner = np.interp(u, grid, cumulative, right=half_mass) / half_mass  # in [0, 1]
    return 0.5 + 0.5 * np.sign(z) * inner


def test_numerical_cdf_is_right():
    # the normaliser of 1 / (1 + u^4) over the line is pi / sqrt(2)
    assert 2 * _heavy_tail_cdf_table(4.0)[2] == pytest.approx(math.pi / math.sqrt(2), rel=1e-6)
    assert heavy_tail_cdf(np.array([0.0]), 4.0, 1.0)[0] == 0.5


@pytest.mark.parametrize("gamma", [4.0, 3.0])
def test_heavy_tailed_noise_matches_density(gamma):
    scale = 3.0
    z = heavy_tailed_noise(scale=scale, gamma=gamma, rng=rng(6), size=N)
    cdf = functools.partial(heavy_tail_cdf, gamma=gamma, scale=scale)
    assert stats.kstest(z, cdf).pvalue > P_MIN
    # power: the Cauchy (gamma = 2) law of the same scale is rejected
    assert stats.kstest(z, stats.cauchy(scale=scale).cdf).pvalue < P_MIN


def test_heavy_tailed_noise_shapes_and_gamma_2_is_cauchy():
    assert isinstance(heavy_tailed_noise(scale=1.0, rng=rng()), float)
    assert heavy_tailed_noise(scale=1.0, rng=rng(), size=(3, 4)).shape == (3, 4)
    z = heavy_tailed_noise(scale=1.5, gamma=2, rng=rng(7), size=N)
    assert stats.kstest(z, stats.cauchy(scale=1.5).cdf).pvalue > P_MIN
    with pytest.raises(PrivpubError, match="gamma"):
        heavy_tailed_noise(scale=1.0, gamma=1.5, rng=rng())


# --------------------------------------------------------------------------- exponential mechanism
def em_frequencies(quality, n, seed, **kw):
    g = rng(seed)
    picks = [exponential_mechanism(quality, rng=g, **kw) for _ in range(n)]
    return np.bincount(picks, minlength=len(quality))


def assert_matches(counts, probs):
    support = probs > 0
    assert np.all(counts[~support] == 0)
    assert stats.chisquare(counts[support], counts.sum() * probs[support]).pvalue > P_MIN


def test_exponential_mechanism_frequencies_match_probabilities():
    quality = np.array([0.0, 1.0, 2.0, 3.0, -np.inf, 2.5])
    kw = dict(sensitivity=1.0, epsilon=1.5)
    probs = exponential_mechanism_probabilities(quality, **kw)
    expected = np.exp(1.5 * np.where(np.isinf(quality), -np.inf, quality) / 2)
    np.testing.assert_allclose(probs, expected / expected.sum())
    counts = em_frequencies(quality, 10_000, 8, **kw)
    assert counts[4] == 0  # -inf never chosen
    assert_matches(counts, probs)
    # power: uniform selection would be rejected
    assert stats.chisquare(counts[probs > 0]).pvalue < P_MIN


def test_exponential_mechanism_huge_scores_do_not_overflow():
    quality = np.array([1e6, 1e6 - 1, 1e6 - 3])
    kw = dict(sensitivity=1.0, epsilon=2.0)
    probs = exponential_mechanism_probabilities(quality, **kw)
    assert np.all(np.isfinite(probs)) and probs.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(
        probs, exponential_mechanism_probabilities(quality - 1e6, **kw), rtol=1e-9)
    assert_matches(em_frequencies(quality, 5000, 9, **kw), probs)
    # huge logits: eps * q / (2 sens) ~ 1e306 does not overflow either
    big = exponential_mechanism_probabilities(np.array([1e308, 0.0]), sensitivity=1.0,
                                              epsilon=1.0)
    np.testing.assert_array_equal(big, [1.0, 0.0])
    assert exponential_mechanism(np.array([0.0, 1e308]), sensitivity=1.0, epsilon=1.0,
                                 rng=rng()) == 1


def test_exponential_mechanism_never_picks_minus_infinity():
    quality = np.array([-np.inf, -5.0, -np.inf])
    counts = em_frequencies(quality, 500, 10, sensitivity=0.1, epsilon=0.01)
    assert counts.tolist() == [0, 500, 0]


def test_monotonic_flag_drops_the_factor_two():
    quality = np.array([0.0, 1.0, 3.0])
    mono = exponential_mechanism_probabilities(quality, sensitivity=2.0, epsilon=1.0,
                                               monotonic=True)
    plain = exponential_mechanism_probabilities(quality, sensitivity=2.0, epsilon=1.0)
    # monotonic: P[i] / P[j] = exp(eps (q_i - q_j) / sens); otherwise half the exponent
    assert mono[1] / mono[0] == pytest.approx(math.exp(1.0 / 2.0))
    assert plain[1] / plain[0] == pytest.approx(math.exp(1.0 / 4.0))
    np.testing.assert_allclose(
        mono, exponential_mechanism_probabilities(quality, sensitivity=2.0, epsilon=2.0))
    counts = em_frequencies(quality, 5000, 11, sensitivity=2.0, epsilon=1.0, monotonic=True)
    assert_matches(counts, mono)


def test_exponential_mechanism_spends():
    ledger = PrivacyLedger(1.0)
    exponential_mechanism([1.0, 2.0], sensitivity=4.0, epsilon=0.25, rng=rng(), ledger=ledger,
                          label="theta")
    (entry,) = ledger.entries
    assert (entry.label, entry.epsilon, entry.sensitivity, entry.primitive) == (
        "theta", 0.25, 4.0, "exponential")


# --------------------------------------------------------------------------- bad input
BAD_NUMBERS = [0, -1.0, float("nan"), float("inf")]


@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_bad_sensitivity_epsilon_scale(bad):
    g = rng()
    calls = [
        lambda: laplace_noise(sensitivity=bad, epsilon=1.0, rng=g),
        lambda: laplace_noise(sensitivity=1.0, epsilon=bad, rng=g),
        lambda: geometric_noise(sensitivity=bad, epsilon=1.0, rng=g),
        lambda: geometric_noise(sensitivity=1.0, epsilon=bad, rng=g),
        lambda: laplace_mechanism([1.0], sensitivity=bad, epsilon=1.0, rng=g),
        lambda: geometric_mechanism([1], sensitivity=1, epsilon=bad, rng=g),
        lambda: exponential_mechanism([1.0, 2.0], sensitivity=bad, epsilon=1.0, rng=g),
        lambda: exponential_mechanism([1.0, 2.0], sensitivity=1.0, epsilon=bad, rng=g),
        lambda: exponential_mechanism_probabilities([1.0], sensitivity=bad, epsilon=1.0),
        lambda: cauchy_noise(scale=bad, rng=g),
        lambda: heavy_tailed_noise(scale=bad, rng=g),
    ]
    for call in calls:
        with pytest.raises(PrivpubError):
            call()


@pytest.mark.parametrize("quality", [[], [[1.0, 2.0]], [1.0, np.nan], [1.0, np.inf],
                                     [-np.inf, -np.inf]])
def test_bad_quality(quality):
    with pytest.raises(PrivpubError):
        exponential_mechanism(quality, sensitivity=1.0, epsilon=1.0, rng=rng())


@pytest.mark.parametrize("bad", ["abc", None])
def test_non_numeric_sensitivity_is_a_privpub_error(bad):
    with pytest.raises(PrivpubError, match="sensitivity must be a number"):
        laplace_noise(sensitivity=bad, epsilon=1.0, rng=rng())


def test_mechanisms_refuse_to_overspend_and_check_the_ledger_type():
    ledger = PrivacyLedger(1.0)
    laplace_mechanism([0.0], sensitivity=1.0, epsilon=0.7, rng=rng(), ledger=ledger)
    with pytest.raises(BudgetExceededError):
        laplace_mechanism([0.0], sensitivity=1.0, epsilon=0.7, rng=rng(), ledger=ledger)
    with pytest.raises(BudgetExceededError):
        exponential_mechanism([0.0, 1.0], sensitivity=1.0, epsilon=0.5, rng=rng(),
                              ledger=ledger)
    assert ledger.spent == pytest.approx(0.7) and len(ledger.entries) == 1
    with pytest.raises(PrivpubError, match="PrivacyLedger"):
        laplace_mechanism([0.0], sensitivity=1.0, epsilon=0.1, rng=rng(), ledger={"eps": 1})


def test_noise_off_zeroes_every_primitive_and_picks_the_best_candidate():
    from privpub.ledger import PrivacyLedger
    from privpub.noise import (
        cauchy_noise,
        exponential_mechanism,
        flip_count,
        flips,
        geometric_mechanism,
        gumbel_noise,
        heavy_tailed_noise,
        is_noise_off,
        laplace_mechanism,
        noise_off,
        weighted_laplace_mechanism,
    )

    rng = np.random.default_rng(0)
    ledger = PrivacyLedger(10.0)
    with noise_off():
        assert is_noise_off()
        assert (laplace_mechanism([1.0, 2.0], sensitivity=1, epsilon=1, rng=rng,
                                  ledger=ledger) == [1.0, 2.0]).all()
        assert (weighted_laplace_mechanism([3.0], weights=[2.0], sensitivity=1, epsilon=1,
                                           rng=rng, ledger=ledger) == [3.0]).all()
        assert (geometric_mechanism(np.array([5]), sensitivity=1, epsilon=1, rng=rng,
                                    ledger=ledger) == [5]).all()
        assert cauchy_noise(scale=2.0, rng=rng) == 0 and heavy_tailed_noise(scale=1, rng=rng) == 0
        assert (gumbel_noise(rng=rng, size=3) == 0).all()
        assert not flips(0.5, rng=rng, size=10).any() and flip_count(100, 0.5, rng=rng) == 0
        picks = {exponential_mechanism([0.0, 3.0, 1.0], sensitivity=1, epsilon=0.01, rng=rng,
                                       ledger=ledger) for _ in range(20)}
        assert picks == {1}
    assert not is_noise_off()
    assert ledger.spent == pytest.approx(3 + 0.2)  # the budget is still spent and recorded
    assert laplace_mechanism([1.0], sensitivity=1, epsilon=1, rng=rng)[0] != 1.0
