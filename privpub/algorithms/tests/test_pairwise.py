"""pairwise_sum gives np.sum's bits: every length up to 300 and a few beyond, any offset,
values over many magnitudes (where the summation order shows in the last bits)."""

import numpy as np

from privpub.algorithms.pairwise import pairwise_sum


def test_pairwise_sum_is_numpys():
    rng = np.random.default_rng(0)
    for n in [*range(300), 511, 1000, 4099]:
        x = rng.standard_normal(n + 3) * 10.0 ** rng.uniform(-3, 8, n + 3)
        assert pairwise_sum(x, 3, n) == np.sum(x[3:])
        # a column's sum along axis 0 (the network's batch loss) is the same sum
        assert pairwise_sum(x, 0, n) == np.sum(x[:n].reshape(-1, 1), axis=0)[0]


def test_the_order_matters_here():
    # the test above can fail: left-to-right addition differs from numpy's on these values
    x = np.random.default_rng(1).standard_normal(1000)
    plain = 0.0
    for v in x:
        plain += v
    assert plain != np.sum(x)
