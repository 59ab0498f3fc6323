"""Tests of (theta, Omega)-Histogram and its variants (day2016 Sec 3.2, Algorithm 2)."""

from __future__ import annotations

import numpy as np
import pytest

from privpub.errors import DataError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms import theta_histogram as th
from privpub.mechanisms.degree_projection import all_theta_histograms, projection_profile
from privpub.mechanisms.tests.test_degree_projection import random_graph, sweep_all_graphs
from privpub.metrics.distributions import l1
from privpub.noise import laplace_noise
from privpub.registry import NO_PRIVACY, NODE_DP, get_mechanism
from privpub.testing import empirical_privacy_check
from privpub.types import DegreeHistogram, Graph, Kind

# G: a perfect matching; G': plus a node joined to everyone. At theta = 3 the folded
# histograms are [6, 0, 0] and [3, 3, 1]: the L1 change 2 theta + 1 = 7 is attained.
G = Graph.from_edges(np.array([[0, 1], [2, 3], [4, 5]]))
G_PRIME = Graph.from_edges(np.vstack([G.edges(), [[i, 6] for i in range(6)]]))


# --------------------------------------------------------------------------- candidates
def test_group_starts_match_the_paper_example():
    # Sec 3.2: r = 1.5 gives (1), (2), (3), (4, 5), (6, 7), (8, 9, 10, 11), ...
    assert th.group_starts(150, 11) == (1, 2, 3, 4, 6, 8)
    assert th.group_starts(200, 200) == (1, 2, 4, 8, 16, 32, 64, 128)
    assert th.group_starts(100, 5) == (1, 2, 3, 4, 5)
    assert th.group_starts(101, 50) == tuple(range(1, 51))  # r -> 1: singletons
    with pytest.raises(PrivpubError, match="r must"):
        th.group_starts(250, 10)


def test_candidates_are_distinct_per_theta_and_cover_r_in_1_2():
    cands = th.candidate_groupings(200)
    assert len(cands) == 18499
    by_theta = {}
    for theta, r, starts in cands:
        assert starts[0] == 1 and starts[-1] <= theta and list(starts) == sorted(set(starts))
        assert 1.0 <= r <= 2.0
        by_theta.setdefault(theta, []).append(starts)
    assert sorted(by_theta) == list(range(1, 201))
    for theta, structures in by_theta.items():
        assert len(set(structures)) == len(structures)
        assert structures[0] == tuple(range(1, theta + 1))  # r = 1 first: singletons
    assert (200, 2.0, (1, 2, 4, 8, 16, 32, 64, 128)) in cands
    assert len(th.candidate_groupings(400)) == 38699


# --------------------------------------------------------------------------- quality
def _eq1_literal(hist_theta, theta, starts, eps2, n_above):
    """Eq. (1) written out: bins 1..theta (degree 0 folded into bin 1)."""
    c = {d: float(hist_theta[d]) for d in range(1, theta + 1)}
    c[1] += hist_theta[0]
    bounds = [*starts, theta + 1]
    loss = 0.0
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        group = range(lo, hi)
        avg = sum(c[d] for d in group) / len(group)
        loss += sum(abs(c[d] - avg) + (2 * theta + 1) / (eps2 * len(group)) for d in group)
    return -loss - 2 * n_above


def test_quality_is_equation_1():
    g = random_graph(np.random.default_rng(0), 40, 0.25)
    prof = projection_profile(g, 12)
    q = th.histogram_quality(prof, 0.45)
    cands = th.candidate_groupings(12)
    assert q.shape == (len(cands),)
    top = prof.histograms[-1]
    for i, (theta, _, starts) in enumerate(cands):
        n_above = top[theta + 1 :].sum()
        want = _eq1_literal(prof.histogram(theta), theta, starts, 0.45, n_above)
        assert q[i] == pytest.approx(want, rel=1e-12)



def test_quality_reuses_the_profiles_deviation_term(monkeypatch):
    """Eq. (1)'s deviation term has no epsilon: computed once per profile, then read back
    (a release at another epsilon on the same cached profile gets the same numbers as on a
    fresh one)."""
    g = random_graph(np.random.default_rng(1), 40, 0.25)
    calls = []
    kernel = th._deviation_loss
    monkeypatch.setattr(th, "_deviation_loss", lambda *a: calls.append(1) or kernel(*a))
    prof = projection_profile(g, 12)
    first = [th.histogram_quality(prof, eps) for eps in (0.45, 1.3, 0.45)]
    assert len(calls) == 1
    fresh = th.histogram_quality(all_theta_histograms(g.edges(), g.n_nodes, 12), 1.3)
    assert len(calls) == 2
    np.testing.assert_array_equal(first[1], fresh)
    np.testing.assert_array_equal(first[0], first[2])
    assert not th.folded_histograms(prof).flags.writeable

@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_lemma_2_sensitivity_by_brute_force(n):
    """|q^h(G) - q^h(G')| <= 6 Theta + 4 over all graphs on n nodes, all node neighbours
    (new node at every id), every Theta <= n and every (theta, Omega) candidate."""
    _, _, above_w, q_w = sweep_all_graphs(n)
    big_theta = np.arange(1, n + 1)
    assert np.all(q_w <= 6 * big_theta + 4), q_w
    assert np.all(2 * above_w.max(axis=1) <= 2 * big_theta + 2)
    assert q_w.max() > 0


def test_lemma_2_public_quality_on_random_neighbours():
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(40):
        n = int(rng.integers(6, 10))
        g = random_graph(rng, n, rng.uniform(0.2, 0.7))
        big_theta = int(rng.integers(2, n + 1))
        q0 = th.histogram_quality(all_theta_histograms(g.edges(), n, big_theta), 0.7)
        for mask in rng.integers(0, 1 << n, size=15):
            new = np.array([[i, n] for i in range(n) if mask >> i & 1], dtype=np.int64)
            gp = np.vstack([g.edges(), new.reshape(-1, 2)])
            q1 = th.histogram_quality(all_theta_histograms(gp, n + 1, big_theta), 0.7)
            change = np.abs(q1 - q0).max()
            assert change <= th.histogram_quality_sensitivity(big_theta) + 1e-9
            worst = max(worst, change / th.histogram_quality_sensitivity(big_theta))
    assert worst > 0.2  # the check looked at changes of the bound's order


# --------------------------------------------------------------------------- mechanism
def test_registration():
    for name in ("theta_omega_histogram", "theta_histogram", "theta_histogram_fixed"):
        info = get_mechanism(name)
        assert (info.privacy, info.paper, info.input_kind, info.output_kind) == (
            NODE_DP,
            "day2016",
            Kind.GRAPH,
            Kind.DEGREE_HISTOGRAM,
        )
        assert info.caveat is None
    for name in ("theta_omega_histogram_qbest", "theta_omega_histogram_oracle"):
        info = get_mechanism(name)
        assert info.privacy == NO_PRIVACY and "non-privately" in info.caveat
        assert info.parameters == get_mechanism("theta_omega_histogram").parameters


def test_release_shape_and_accuracy_at_huge_epsilon():
    g = random_graph(np.random.default_rng(2), 200, 0.05)
    out = th.theta_omega_histogram(g, epsilon=1e7, theta_max=20, rng=np.random.default_rng(0))
    assert set(out.info) == {"theta", "groups", "ratio"}
    counts = out.value.counts
    assert isinstance(out.value, DegreeHistogram) and counts[0] == 0 and np.all(counts >= 0)
    assert counts.sum() == pytest.approx(g.n_nodes, abs=1e-3)
    # essentially noiseless: the selection is the argmax of Eq. (1)
    q = th.histogram_quality(projection_profile(g, 20), 0.9e7)
    best = th.candidate_groupings(20)[int(np.argmax(q))]
    assert (out.info["theta"], out.info["groups"]) == (best[0], len(best[2]))
    qb = th.theta_omega_histogram_qbest(g, epsilon=1e7, theta_max=20, rng=np.random.default_rng(0))
    assert qb.info == out.info


def test_ledger_records_the_split():
    for eps in (0.1, 1.0, 3.7):
        ledger = PrivacyLedger(eps)
        out = th.theta_omega_histogram(
            G_PRIME, epsilon=eps, rng=np.random.default_rng(1), ledger=ledger
        )
        e = ledger.entries
        assert ledger.spent == pytest.approx(eps) and ledger.remaining == 0
        assert [x.primitive for x in e] == ["exponential", "laplace"]
        assert e[0].epsilon == pytest.approx(0.1 * eps) and e[1].epsilon == pytest.approx(0.9 * eps)
        assert e[0].sensitivity == 6 * 200 + 4
        assert e[1].sensitivity == 2 * out.info["theta"] + 1
    ledger = PrivacyLedger(2.0)
    out = th.theta_histogram(
        G_PRIME, epsilon=2.0, theta_max=30, rng=np.random.default_rng(1), ledger=ledger
    )
    assert [x.sensitivity for x in ledger.entries] == [2 * 30 + 2, 2 * out.info["theta"] + 1]
    assert out.info["groups"] == out.info["theta"]
    ledger = PrivacyLedger(2.0)
    out = th.theta_histogram_fixed(
        G_PRIME, epsilon=2.0, theta=25, rng=np.random.default_rng(1), ledger=ledger
    )
    assert [(x.epsilon, x.sensitivity) for x in ledger.entries] == [(2.0, 51.0)]
    assert out.info == {"theta": 25, "groups": 25}


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -1}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"epsilon": 1, "theta_max": 0}, "theta_max"),
        ({"epsilon": 1, "theta_max": 2.5}, "theta_max"),
        ({"epsilon": 1, "tail": "cubic"}, "tail"),
        ({"epsilon": 1, "order": "bfs"}, "order"),
        ({"epsilon": 1, "order": None}, "order"),
    ],
)
def test_bad_arguments(kwargs, error):
    for f in (th.theta_omega_histogram, th.theta_histogram, th.theta_omega_histogram_oracle):
        with pytest.raises(PrivpubError, match=error):
            f(G, rng=np.random.default_rng(0), **kwargs)


def test_bad_input_and_fixed_theta():
    with pytest.raises(DataError, match="Graph"):
        th.theta_omega_histogram(np.eye(3), epsilon=1, rng=np.random.default_rng(0))
    for bad in (0, -3, 1.5):
        with pytest.raises(PrivpubError, match="theta"):
            th.theta_histogram_fixed(G, epsilon=1, theta=bad, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError, match="differs from epsilon"):
        th.theta_omega_histogram(
            G, epsilon=1, rng=np.random.default_rng(0), ledger=PrivacyLedger(2)
        )


@pytest.mark.parametrize("tail", ["linear", "powerlaw", "uniform"])
def test_every_variant_runs_with_every_tail_and_order(tail):
    g = random_graph(np.random.default_rng(3), 120, 0.08)
    for f in (
        th.theta_omega_histogram,
        th.theta_histogram,
        th.theta_omega_histogram_qbest,
        th.theta_omega_histogram_oracle,
    ):
        for order in ("lexicographic", "random"):
            a = f(
                g, epsilon=1.0, theta_max=15, tail=tail, order=order, rng=np.random.default_rng(4)
            )
            b = f(
                g, epsilon=1.0, theta_max=15, tail=tail, order=order, rng=np.random.default_rng(4)
            )
            assert np.array_equal(a.value.counts, b.value.counts) and a.info == b.info
            assert np.all(a.value.counts >= 0) and a.value.counts[0] == 0
            assert 1 <= a.info["theta"] <= 15


def test_theta_max_400_runs():
    out = th.theta_omega_histogram(
        G_PRIME, epsilon=1.0, theta_max=400, rng=np.random.default_rng(0)
    )
    assert 1 <= out.info["theta"] <= 400


def test_oracle_returns_the_least_error_candidate():
    g = random_graph(np.random.default_rng(5), 150, 0.06)
    seed = 7
    out = th.theta_omega_histogram_oracle(
        g, epsilon=0.5, theta_max=12, rng=np.random.default_rng(seed)
    )
    # recompute every candidate's error with the same noise draws
    thetas, _, offsets, starts = th._candidates(12)
    unit = laplace_noise(
        sensitivity=1.0, epsilon=1.0, rng=np.random.default_rng(seed), size=starts.size
    )
    bins = th.folded_histograms(projection_profile(g, 12))
    truth = g.degree_histogram()
    errors = th._oracle_errors(bins, thetas, offsets, starts, unit, 0.45, 0, truth.distribution())
    assert l1(truth, out.value) == pytest.approx(errors.min())
    assert out.info["theta"] == thetas[int(np.argmin(errors))]


# --------------------------------------------------------------------------- privacy
def _sampler(graph, eps, theta_max=3):
    def sample(rng):
        return th.theta_omega_histogram(graph, epsilon=eps, theta_max=theta_max, rng=rng)

    return sample


def _events():
    def bin_above(d, c):
        return lambda out: out.value.counts.size > d and out.value.counts[d] > c

    events = {f"theta == {t}": (lambda out, t=t: out.info["theta"] == t) for t in (1, 2, 3)}
    events |= {f"groups == {k}": (lambda out, k=k: out.info["groups"] == k) for k in (2, 3)}
    for d, cs in ((1, (2.0, 4.5, 6.0)), (2, (1.0, 2.5)), (3, (1.0,))):
        events |= {f"count[{d}] > {c}": bin_above(d, c) for c in cs}
    return events


def test_empirical_privacy_on_worst_case_pair():
    eps = 1.0
    check = empirical_privacy_check(
        _sampler(G, eps),
        _sampler(G_PRIME, eps),
        events=_events(),
        epsilon=eps,
        n_trials=3000,
        rng=np.random.default_rng(2024),
    )
    assert check.passed


def test_empirical_check_detects_a_too_small_histogram_sensitivity(monkeypatch):
    """The same test flags the mechanism when its Laplace scale is 10x too small."""
    monkeypatch.setattr(th, "hist_sensitivity", lambda theta: 0.1 * (2 * theta + 1))
    eps = 1.0
    check = empirical_privacy_check(
        _sampler(G, eps),
        _sampler(G_PRIME, eps),
        events=_events(),
        epsilon=eps,
        n_trials=1500,
        rng=np.random.default_rng(2024),
        raise_on_violation=False,
    )
    assert not check.passed and check.epsilon_lower_bound > 1.5 * eps
