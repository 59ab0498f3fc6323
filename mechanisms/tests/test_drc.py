"""DRC, LDRC and the honest DRC (sala2011 Sec 4): scales, fits, ledgers, neighbour tests."""

import numpy as np
import pytest

from privpub.algorithms.dk import joint_degree
from privpub.data import load_dataset
from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.drc import (
    drc,
    drc_honest,
    drc_scales,
    honest_thresholds,
    ldrc,
    ldrc_true_count_order,
)
from privpub.registry import get_mechanism
from privpub.testing import empirical_privacy_check
from privpub.types import Graph, JointDegree


@pytest.fixture(scope="module")
def karate():
    return load_dataset("karate")


def rng(seed=0):
    return np.random.default_rng(seed)


def pava(y):
    """Reference pool-adjacent-violators (non-decreasing L2 fit), written independently."""
    blocks = []  # [mean, weight]
    for v in y:
        blocks.append([float(v), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2 = blocks.pop()
            m1, w1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2])
    return np.concatenate([np.full(int(w), m) for m, w in blocks])


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize("mech", [drc, ldrc, drc_honest])
def test_bad_epsilon_and_input_are_clear_errors(mech, karate):
    for eps in (0, -1, float("nan"), float("inf"), "1"):
        with pytest.raises(PrivpubError, match="epsilon"):
            mech(karate, epsilon=eps, rng=rng())
    with pytest.raises(PrivpubError, match="Graph"):
        mech(np.ones((3, 3)), epsilon=1.0, rng=rng())


def test_bad_options(karate):
    with pytest.raises(PrivpubError, match="order"):
        ldrc(karate, epsilon=1.0, order="sorted", rng=rng())
    with pytest.raises(PrivpubError, match="partition_width"):
        drc(karate, epsilon=1.0, partition_width=0, rng=rng())
    with pytest.raises(PrivpubError, match="order_fraction"):
        ldrc(karate, epsilon=1.0, order="noisy", order_fraction=1.0, rng=rng())
    # a public degree bound below the graph's maximum degree: the cell does not apply
    with pytest.raises(NotApplicableError):
        drc_honest(karate, epsilon=1.0, degree_bound=10, rng=rng())


# --------------------------------------------------------------------------- calibration
def test_drc_partitions_and_scales():
    high = np.array([1, 2, 2, 3, 5, 8])
    assert drc_scales(high).tolist() == [5, 9, 9, 13, 21, 33]  # width 1: 4 h + 1
    # width 4: partitions [1..4] (data top 3) and [5..8] (data top 8)
    assert drc_scales(high, partition_width=4).tolist() == [13, 13, 13, 13, 33, 33]
    assert drc_scales(high, partition_width=4, tops="public").tolist() == [17] * 4 + [33] * 2


def test_drc_noise_per_partition(karate):
    jd = joint_degree(karate)
    r = rng(2)
    noise = np.array([drc(karate, epsilon=1.0, rng=r).counts - jd.counts for _ in range(600)])
    assert np.mean(np.abs(noise), axis=0) == pytest.approx(4.0 * jd.high + 1, rel=0.15)


def test_ledgers_spend_epsilon_once(karate):
    for mech, kw in [(drc, {}), (ldrc, {}), (ldrc, {"order": "noisy"}), (drc_honest, {})]:
        ledger = PrivacyLedger(3.0)
        mech(karate, epsilon=3.0, rng=rng(), ledger=ledger, **kw)
        assert ledger.spent == pytest.approx(3.0)
    ledger = PrivacyLedger(3.0)
    ldrc(karate, epsilon=3.0, order="noisy", order_fraction=0.25, rng=rng(), ledger=ledger)
    assert [e.epsilon for e in ledger.entries] == pytest.approx([0.75, 2.25])


def test_drc_releases_a_joint_degree(karate):
    assert isinstance(drc(karate, epsilon=1.0, rng=rng()), JointDegree)


# --------------------------------------------------------------------------- LDRC
def test_ldrc_is_the_l2_isotonic_projection_of_drc(karate):
    drc_out = drc(karate, epsilon=0.5, rng=rng(7))
    ldrc_out = ldrc(karate, epsilon=0.5, rng=rng(7))  # same noise draws
    assert np.allclose(ldrc_out.counts, pava(drc_out.counts))
    assert np.all(np.diff(ldrc_out.counts) >= -1e-12)
    # Theorem 4's min-max formula gives the same vector
    p = drc_out.counts
    means = {(i, j): p[i:j + 1].mean() for i in range(p.size) for j in range(i, p.size)}
    minmax = [min(max(means[i, j] for i in range(j + 1)) for j in range(k, p.size))
              for k in range(p.size)]
    assert np.allclose(ldrc_out.counts, minmax)


def test_ldrc_orders(karate):
    jd = joint_degree(karate)
    true_order = ldrc_true_count_order(karate, epsilon=1.0, rng=rng(3))
    # the trap: monotone along the TRUE counts; the same noise as ldrc's beta order
    fitted = true_order.counts[np.argsort(jd.counts, kind="stable")]
    assert np.all(np.diff(fitted) >= -1e-12)
    beta = ldrc(karate, epsilon=1.0, rng=rng(3))
    assert not np.allclose(beta.counts, true_order.counts)
    # the trap is no option of the DP mechanisms, and registered as not private
    with pytest.raises(PrivpubError, match="order must be one of"):
        ldrc(karate, epsilon=1.0, order="true_counts", rng=rng(3))
    info = get_mechanism("ldrc_true_count_order")
    assert info.privacy == "none" and not info.is_dp and "TRUE counts" in info.caveat
    assert "TRUE counts" not in get_mechanism("ldrc").caveat_for({})


# --------------------------------------------------------------------------- honest DRC
def test_honest_dense_release_covers_the_domain():
    g = Graph.from_edges([(0, 1), (1, 2), (2, 3)], n_nodes=5)
    out = drc_honest(g, epsilon=1.0, threshold=None, rng=rng()).value
    assert out.size == 10  # 1 <= l <= h <= 4
    with pytest.raises(PrivpubError, match="allowed"):
        drc_honest(load_dataset("chung_lu", n=3000, rng=rng()), epsilon=1.0, threshold=None,
                   rng=rng())


def test_honest_sparse_release_equals_thresholded_dense_release():
    """The exact sampler of above-threshold zero cells has the law of thresholding the
    dense release: per-cell publication rates agree (binomial z < 5)."""
    g = Graph.from_edges([(0, 1), (1, 2), (2, 3), (3, 4), (1, 5)], n_nodes=7)
    eps, t, n = 2.0, 0.5, 3000
    scales = drc_scales(np.arange(1, 7), tops="public") / eps
    rate_sparse, rate_dense = {}, {}
    r = rng(11)
    for _ in range(n):
        sparse = drc_honest(g, epsilon=eps, threshold=t, rng=r).value
        for key in zip(sparse.low.tolist(), sparse.high.tolist(), strict=True):
            rate_sparse[key] = rate_sparse.get(key, 0) + 1
        dense = drc_honest(g, epsilon=eps, threshold=None, rng=r).value
        keep = dense.counts > t * scales[dense.high - 1]
        for key in zip(dense.low[keep].tolist(), dense.high[keep].tolist(), strict=True):
            rate_dense[key] = rate_dense.get(key, 0) + 1
    for key in set(rate_sparse) | set(rate_dense):
        a, b = rate_sparse.get(key, 0) / n, rate_dense.get(key, 0) / n
        se = np.sqrt((a * (1 - a) + b * (1 - b)) / n) + 1e-9
        assert abs(a - b) / se < 5, (key, a, b)


def test_default_thresholds():
    tau = honest_thresholds(np.array([0.5, 2.0]), 100)
    assert tau == pytest.approx([0.5 * np.log(100), 2.0 * np.log(200)])


# --------------------------------------------------------------------------- neighbour tests
# G and G' differ in the edge (2, 3): G is the path 0-1-2 (cells (1,2): 2), G' the path
# 0-1-2-3 (cells (1,2): 2, (2,2): 1), on 5 nodes.
G = Graph.from_edges([(0, 1), (1, 2)], n_nodes=5)
G2 = Graph.from_edges([(0, 1), (1, 2), (2, 3)], n_nodes=5)


def _has_cell(out, lo, hi):
    return bool(np.any((out.low == lo) & (out.high == hi)))


def test_published_drc_fails_the_neighbour_test():
    """DRC (as dK-PA, baselines/tests/test_dk_pa.py) releases the support of the series:
    the cell (2, 2) is published for G' and never for G, a violation at any epsilon."""
    check = empirical_privacy_check(
        lambda r: drc(G, epsilon=1.0, rng=r),
        lambda r: drc(G2, epsilon=1.0, rng=r),
        events={"cell (2,2) published": lambda out: _has_cell(out, 2, 2)},
        epsilon=1.0, n_trials=300, rng=rng(5), raise_on_violation=False,
    )
    assert not check.passed


def _domain_sampler(graph, eps, scale_rule):
    """Noise on every cell of the 5-node domain with per-cell scales from ``scale_rule``."""
    jd = joint_degree(graph)
    high = np.repeat(np.arange(1, 5), np.arange(1, 5))
    low = np.concatenate([np.arange(1, h + 1) for h in range(1, 5)])
    counts = np.zeros(high.size)
    for lo, hi, c in zip(jd.low, jd.high, jd.counts, strict=True):
        counts[(high == hi) & (low == lo)] = c
    scales = scale_rule(jd, high) / eps

    def sample(r, n):
        return counts + r.laplace(0.0, 1.0, size=(n, counts.size)) * scales

    sample.counts = counts
    return sample, low, high


def test_local_partition_maxima_fail_even_with_noise_everywhere():
    """Noise on the whole domain, but one width-4 partition whose d_k is read from the data
    (sala2011 Lemma 2): G has d_k = 2, G' has d_k = 2 too -- so take G'' = a single edge
    (d_k = 1) against G (d_k = 2). The scale of an untouched cell changes, which a tail
    event detects."""
    single = Graph.from_edges([(0, 1)], n_nodes=5)

    def rule(jd, high):
        return np.full(high.size, 4.0 * int(jd.high.max()) + 1)

    eps = 1.0
    sample_a, low, high = _domain_sampler(single, eps, rule)
    sample_b, _, _ = _domain_sampler(G, eps, rule)
    cell = int(np.flatnonzero((low == 4) & (high == 4))[0])  # (4, 4): 0 in both graphs
    events = {f"|y44| > {t}": (lambda out, t=t: np.abs(out[:, cell]) > t) for t in (20, 30)}
    check = empirical_privacy_check(sample_a, sample_b, events=events, epsilon=eps,
                                    n_trials=40_000, rng=rng(6), batch=True,
                                    raise_on_violation=False)
    assert not check.passed and check.epsilon_lower_bound > eps


TWO_EDGES = Graph.from_edges([(0, 1), (2, 3)], n_nodes=5)  # (1,1): 2


def _events(a, b, low, high, scale_rule):
    """Tail events of every cell, and 'corner' events where every changed cell lies on
    b's side beyond the midpoint: there the density ratio is the whole privacy loss."""
    mean_a = _domain_sampler(a, 1.0, scale_rule)[0].counts
    mean_b = _domain_sampler(b, 1.0, scale_rule)[0].counts
    changed = np.flatnonzero(mean_a != mean_b)
    scales = 4.0 * high + 1
    events = {}
    for c in range(low.size):
        for t in (-4.0, 0.5, 4.0):
            events[f"y{low[c]}{high[c]} > {t}"] = lambda out, c=c, t=t: out[:, c] > t
    for s_ in (0.0, 0.5, 1.0):
        def corner(out, s_=s_):
            ok = np.ones(out.shape[0], bool)
            for c in changed:
                sign = np.sign(mean_b[c] - mean_a[c])
                mid = (mean_a[c] + mean_b[c]) / 2
                ok &= sign * (out[:, c] - mid) > s_ * scales[c]
            return ok
        events[f"corner {s_}"] = corner
    return events


@pytest.mark.parametrize("pair", [(G, G2), (TWO_EDGES, G2)])
def test_honest_drc_passes_the_neighbour_test(pair):
    """drc_honest's public scales on the whole domain: no tail or corner event shows a
    violation -- and the same events do catch the mechanism with half the noise on the
    tightest pair (two disjoint edges joined into a path: weighted change 0.733)."""
    a, b = pair
    eps = 1.0

    def rule(jd, high):
        return 4.0 * high + 1  # drc_honest's scales (width 1, public tops)

    sample_a, low, high = _domain_sampler(a, eps, rule)
    sample_b, _, _ = _domain_sampler(b, eps, rule)
    events = _events(a, b, low, high, rule)
    # the sampler is drc_honest's own law: same cells and scales as the mechanism
    out = drc_honest(a, epsilon=eps, threshold=None, rng=rng(9)).value
    assert out.low.tolist() == low.tolist() and out.high.tolist() == high.tolist()
    check = empirical_privacy_check(sample_a, sample_b, events=events, epsilon=eps,
                                    n_trials=40_000, rng=rng(8), batch=True,
                                    raise_on_violation=False)
    assert check.passed, str(check)
    if a is TWO_EDGES:
        half = _domain_sampler(a, eps, lambda jd, h: (4.0 * h + 1) / 2)[0]
        half_b = _domain_sampler(b, eps, lambda jd, h: (4.0 * h + 1) / 2)[0]
        bad = empirical_privacy_check(half, half_b, events=events, epsilon=eps,
                                      n_trials=40_000, rng=rng(8), batch=True,
                                      raise_on_violation=False)
        assert not bad.passed


def test_honest_mechanism_itself_passes_a_neighbour_test():
    """The registered mechanism, run end to end (dense mode) on G and G'."""

    def sample(graph):
        return lambda r: drc_honest(graph, epsilon=1.0, threshold=None, rng=r).value.counts

    events = {f"y22 > {t}": (lambda out, t=t: out[2] > t) for t in (0.0, 3.0, 8.0)}
    events.update({f"y12 > {t}": (lambda out, t=t: out[1] > t) for t in (0.0, 3.0, 8.0)})
    check = empirical_privacy_check(sample(G), sample(G2), events=events, epsilon=1.0,
                                    n_trials=4000, rng=rng(10), raise_on_violation=False)
    assert check.passed, str(check)




# --------------------------------------------------------------------------- noise off
def test_noise_free_limits(karate):
    """With the noise primitives switched off every release is its noise-free limit: the
    exact series (the honest variant: its cells above their thresholds, no spurious cell)."""
    from privpub.noise import noise_off

    jd = joint_degree(karate)
    with noise_off():
        assert np.array_equal(drc(karate, epsilon=1.0, rng=rng()).counts, jd.counts)
        # LDRC's limit is the beta-order isotonic fit of the exact series
        assert np.allclose(ldrc(karate, epsilon=1.0, rng=rng()).counts, pava(jd.counts))
        honest = drc_honest(karate, epsilon=100.0, threshold=0.0, rng=rng())
        assert honest.diagnostics["spurious_cells"] == 0
        assert honest.value.size == jd.size
