"""dK-PA and the Ideal reference (sala2011 Sec 3.2-3.3): scales, ledger, the neighbour test."""

import numpy as np
import pytest

from privpub.algorithms.dk import joint_degree
from privpub.baselines.dk_pa import dk2_ideal, dk_pa
from privpub.data import load_dataset
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.testing import empirical_privacy_check
from privpub.types import Graph


@pytest.fixture(scope="module")
def karate():
    return load_dataset("karate")


def rng(seed=0):
    return np.random.default_rng(seed)


def test_bad_epsilon_and_input_are_clear_errors(karate):
    for eps in (0, -1, float("nan"), float("inf"), "1"):
        with pytest.raises(PrivpubError, match="epsilon"):
            dk_pa(karate, epsilon=eps, rng=rng())
    with pytest.raises(PrivpubError, match="Graph"):
        dk_pa(np.ones((3, 3)), epsilon=1.0, rng=rng())


def test_dk_pa_and_ideal_scales(karate):
    jd = joint_degree(karate)
    d_max = int(karate.degrees().max())
    r = rng(1)
    dk = np.array([dk_pa(karate, epsilon=2.0, rng=r).counts - jd.counts for _ in range(400)])
    ideal = np.array([dk2_ideal(karate, epsilon=2.0, rng=r).counts - jd.counts
                      for _ in range(400)])
    # Laplace(b) has mean |x| = b
    assert np.mean(np.abs(dk)) == pytest.approx((4 * d_max + 1) / 2.0, rel=0.05)
    assert np.mean(np.abs(ideal)) == pytest.approx(1 / 2.0, rel=0.05)


def test_ledger_spends_epsilon_once(karate):
    ledger = PrivacyLedger(3.0)
    dk_pa(karate, epsilon=3.0, rng=rng(), ledger=ledger)
    assert ledger.spent == pytest.approx(3.0)


def test_published_dk_pa_fails_the_neighbour_test():
    """dK-PA (as DRC, mechanisms/tests/test_drc.py) releases the support of the series: the
    cell (2, 2) is published for the path 0-1-2-3 and never for 0-1-2 (on 5 nodes, one
    edge apart), a violation at any epsilon."""
    g = Graph.from_edges([(0, 1), (1, 2)], n_nodes=5)
    g2 = Graph.from_edges([(0, 1), (1, 2), (2, 3)], n_nodes=5)

    def has_22(out):
        return bool(np.any((out.low == 2) & (out.high == 2)))

    check = empirical_privacy_check(
        lambda r: dk_pa(g, epsilon=1.0, rng=r),
        lambda r: dk_pa(g2, epsilon=1.0, rng=r),
        events={"cell (2,2) published": has_22},
        epsilon=1.0, n_trials=300, rng=rng(5), raise_on_violation=False,
    )
    assert not check.passed


def test_noise_free_limits(karate):
    """With the noise primitives switched off both releases are the exact series."""
    from privpub.noise import noise_off

    jd = joint_degree(karate)
    with noise_off():
        for mech in (dk_pa, dk2_ideal):
            assert np.array_equal(mech(karate, epsilon=1.0, rng=rng()).counts, jd.counts)
