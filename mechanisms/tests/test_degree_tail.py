"""Tests of the tail post-processing (day2016 Sec 3.4, Algorithm 5)."""

from __future__ import annotations

import numpy as np
import pytest

from privpub.errors import PrivpubError
from privpub.mechanisms.degree_tail import (
    MIN_TAIL_COUNT,
    TAILS,
    check_tail,
    postprocess_tail,
    tail_code,
)


def _hist(theta, head, budget):
    h = np.zeros(theta + 1)
    h[: len(head)] = head
    h[theta] = budget
    return h


def test_linear_follows_the_fitted_line_and_conserves_mass():
    theta = 10
    head = [0, 60, 58, 56, 54, 52, 50, 48, 46, 44]  # exactly linear: 62 - 2 k
    out = postprocess_tail(_hist(theta, head, 200.0), theta, tail="linear")
    np.testing.assert_array_equal(out[:theta], head)
    # 42 + 40 + 38 + 36 + 34 = 190: the remaining 10 goes to the next bin
    np.testing.assert_allclose(out[theta:], [42, 40, 38, 36, 34, 10])
    assert out[theta:].sum() == pytest.approx(200.0)


def test_linear_with_non_negative_slope_uses_the_average():
    theta = 6
    head = [0, 5, 5, 8, 9, 10]  # bins 3..5 rise: average of them (9) per tail bin
    out = postprocess_tail(_hist(theta, head, 30.0), theta, tail="linear")
    np.testing.assert_allclose(out[theta:], [9, 9, 9, 3])


def test_line_crossing_zero_gets_at_least_one_node_per_bin():
    theta = 8
    head = [0, 0, 0, 0, 12, 9, 6, 3]  # slope -3: hits 0 at k = 8
    out = postprocess_tail(_hist(theta, head, 6.5), theta, tail="linear")
    assert np.all(out[theta:] >= 0) and out[theta:].sum() == pytest.approx(6.5)
    np.testing.assert_allclose(out[theta:], [1, 1, 1, 1, 1, 1, 0.5])
    assert MIN_TAIL_COUNT == 1.0


def test_powerlaw_follows_a_power_law():
    theta = 20
    k = np.arange(theta + 1, dtype=float)
    head = np.where(k > 0, 4000.0 * np.maximum(k, 1) ** -2.0, 0)[:theta]
    out = postprocess_tail(_hist(theta, head, 50.0), theta, tail="powerlaw")
    kk = np.arange(theta, out.size)
    np.testing.assert_allclose(out[theta:-1], 4000.0 * kk[:-1] ** -2.0, rtol=1e-9)
    assert out[theta:].sum() == pytest.approx(50.0)
    # too few positive bins: the average is used
    flat = postprocess_tail(_hist(4, [0, 0, 5, -1], 12.0), 4, tail="powerlaw")
    np.testing.assert_allclose(flat[4:], [2, 2, 2, 2, 2, 2])


def test_uniform_spreads_over_theta_to_2theta():
    out = postprocess_tail([0, 10, 8, 6, 12], 4, tail="uniform")
    assert out.tolist() == [0, 10, 8, 6, 2.4, 2.4, 2.4, 2.4, 2.4]
    out = postprocess_tail([0, 10, 8, 6, 12], 4, tail="uniform", max_degree=6)
    assert out.tolist() == [0, 10, 8, 6, 4, 4, 4]
    out = postprocess_tail([3, 7], 1, tail="uniform")
    assert out.tolist() == [3, 3.5, 3.5]


def test_nothing_to_spread():
    assert postprocess_tail([0, 4, -2, 3, -1.5], 4).tolist() == [0, 4, 0, 3, 0]  # clipped
    assert postprocess_tail([0, 0, 0, 0, 0], 4, tail="powerlaw").tolist() == [0] * 5
    assert postprocess_tail([2, 9], 1, tail="linear").tolist() == [2, 9]  # no bins to fit
    # theta = 2: one bin to fit, the average is used
    assert postprocess_tail([0, 4, 9], 2, max_degree=10).tolist() == [0, 4, 4, 4, 1]


def test_cap_keeps_the_mass_in_the_last_allowed_bin():
    out = postprocess_tail([0, 10, 10, 10, 10, 100], 5, tail="linear", max_degree=7)
    assert out.size == 8 and out[5:].tolist() == [10, 10, 80]
    # the default cap is the noisy node count minus one
    out = postprocess_tail([0, 1, 1, 1, 1, 20], 5, tail="linear")
    assert out.size - 1 <= 24 and out.sum() == pytest.approx(24)


def test_random_inputs_are_non_negative_and_keep_positive_mass():
    rng = np.random.default_rng(0)
    for _ in range(500):
        theta = int(rng.integers(1, 40))
        counts = rng.laplace(0, 20, size=theta + 1) + rng.integers(0, 50, size=theta + 1)
        for tail in TAILS:
            out = postprocess_tail(counts, theta, tail=tail)
            assert np.all(out >= 0) and out.size >= theta + 1
            np.testing.assert_array_equal(out[:theta], np.clip(counts[:theta], 0, None))
            if counts[theta] > 0:
                assert out[theta:].sum() == pytest.approx(counts[theta])


def test_validation():
    assert check_tail("linear") == "linear" and tail_code("uniform") == 2
    for bad in ("cubic", None, 1):
        with pytest.raises(PrivpubError, match="tail"):
            postprocess_tail([0, 1, 2], 2, tail=bad)
    with pytest.raises(PrivpubError, match="theta"):
        postprocess_tail([0, 1, 2], 0)
    with pytest.raises(PrivpubError, match="cover degrees"):
        postprocess_tail([0, 1], 3)
    with pytest.raises(PrivpubError, match="finite"):
        postprocess_tail([0, np.inf, 2], 2)
    with pytest.raises(PrivpubError, match="numeric"):
        postprocess_tail(["a", "b"], 1)
