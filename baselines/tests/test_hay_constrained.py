"""Tests of Hay et al.'s constrained inference with qardaji2012's node-DP calibration
(baselines/hay_constrained.py)."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest

import privpub.baselines.hay_constrained as hay_module
from privpub.baselines.hay_constrained import (
    constrained_inference,
    degree_bound_of,
    hay_degree_sequence,
)
from privpub.errors import BudgetExceededError, DataError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.registry import NODE_DP, get_mechanism
from privpub.testing import all_graphs, brute_force_sensitivity, empirical_privacy_check
from privpub.types import DegreeSequence, Graph, Kind, Release


def pava(y):
    """Textbook pool-adjacent-violators (unit weights), independent of privpub.isotonic."""
    blocks = []  # [mean, size]
    for v in map(float, y):
        blocks.append([v, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (m2, n2), (m1, n1) = blocks.pop(), blocks.pop()
            blocks.append([(m1 * n1 + m2 * n2) / (n1 + n2), n1 + n2])
    return np.concatenate([[m] * n for m, n in blocks]) if blocks else np.zeros(0)


def star(n_leaves, n_nodes=None):
    edges = np.array([[0, i] for i in range(1, n_leaves + 1)], dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(edges, n_nodes or n_leaves + 1)


def empty(n):
    return Graph.from_edges(np.empty((0, 2), dtype=np.int64), n)


# --------------------------------------------------------------------------- constrained inference
def test_constrained_inference_hand_checked():
    # 5, 1, 1 violate the order and pool to 7/3; the last value is clipped to the bound 8
    np.testing.assert_allclose(
        constrained_inference([0.0, 5.0, 1.0, 1.0, 10.0], upper=8, integer=False),
        [0, 7 / 3, 7 / 3, 7 / 3, 8],
    )
    np.testing.assert_array_equal(
        constrained_inference([0.0, 5.0, 1.0, 1.0, 10.0], upper=8), [0, 2, 2, 2, 8]
    )
    # negative noise is clipped at 0 after pooling: (-3 + -1) / 2 = -2 -> 0
    np.testing.assert_array_equal(constrained_inference([-3.0, -1.0, 4.2]), [0, 0, 4])
    np.testing.assert_array_equal(constrained_inference([3.0, 1.0, 2.0], integer=False), [2, 2, 2])
    assert constrained_inference([]).size == 0


@pytest.mark.parametrize("seed", range(20))
def test_constrained_inference_is_pava_then_clip_then_round(seed):
    rng = np.random.default_rng(seed)
    y = rng.normal(5, 4, int(rng.integers(1, 60)))
    out = constrained_inference(y, upper=9)
    np.testing.assert_allclose(out, np.rint(np.clip(pava(y), 0, 9)))
    assert np.all(np.diff(out) >= 0)


@pytest.mark.parametrize("degree_bound", ["max_degree", "n_minus_1"])
@pytest.mark.parametrize("seed", range(5))
def test_output_replays_laplace_noise_with_scale_2_lambda_over_epsilon(seed, degree_bound):
    """The release is exactly constrained_inference(sorted degrees + Lap(2 Lambda / eps)):
    replaying the generator reproduces it, so the noise scale is the one Sec. 5 states."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    g = Graph.from_edges(rng.integers(0, n, (3 * n, 2)), n)
    eps = float(rng.uniform(0.2, 5))
    lam = int(g.degrees().max()) if degree_bound == "max_degree" else n - 1
    out = hay_degree_sequence(g, epsilon=eps, degree_bound=degree_bound,
                              rng=np.random.default_rng(seed))
    assert isinstance(out, Release) and isinstance(out.value, DegreeSequence)
    noise = np.random.default_rng(seed).laplace(0.0, 2 * lam / eps, size=n)
    expected = np.rint(np.clip(pava(np.sort(g.degrees()) + noise), 0, lam))
    np.testing.assert_allclose(out.value.values, expected)
    assert out.info == {"degree_bound": lam, "sensitivity": 2.0 * lam}
    v = out.value.values
    assert v.size == n and np.all(np.diff(v) >= 0) and v.min() >= 0 and v.max() <= lam
    assert np.array_equal(v, np.round(v))


def test_large_epsilon_recovers_the_sorted_degrees():
    g = star(6, 9)
    out = hay_degree_sequence(g, epsilon=1e6, rng=0).value.values
    np.testing.assert_array_equal(out, np.sort(g.degrees()))


# --------------------------------------------------------------------------- sensitivity
def _sorted_degree_l1_over_node_neighbours(n):
    """For every graph on n nodes and every neighbour obtained by replacing one node's set of
    incident edges with any other set (node removal = isolation is one of them), the L1
    change of the sorted degree sequence, with both graphs' maximum degrees. Vectorised over
    all 2^(n(n-1)/2) graphs."""
    pairs = list(itertools.combinations(range(n), 2))
    masks = np.arange(1 << len(pairs), dtype=np.int64)
    bits = (masks[:, None] >> np.arange(len(pairs))) & 1
    inc = np.zeros((len(pairs), n), dtype=np.int64)
    for e, (u, v) in enumerate(pairs):
        inc[e, u] = inc[e, v] = 1
    deg = bits @ inc
    sorted_deg, dmax = np.sort(deg, axis=1), deg.max(axis=1)
    changes, dmax_a, dmax_b = [], [], []
    for node in range(n):
        edges = [e for e, p in enumerate(pairs) if node in p]
        node_bits = sum(1 << e for e in edges)
        base = masks & ~node_bits
        for sub in range(1 << len(edges)):
            new = base | sum(1 << e for i, e in enumerate(edges) if sub >> i & 1)
            changes.append(np.abs(sorted_deg - sorted_deg[new]).sum(axis=1))
            dmax_a.append(dmax)
            dmax_b.append(dmax[new])
    return np.concatenate(changes), np.concatenate(dmax_a), np.concatenate(dmax_b)


@pytest.mark.parametrize("n", [4, 5])
def test_brute_force_sorted_degree_sensitivity_is_2_lambda(n):
    """qardaji2012 Sec. 5: removing a node changes the sorted sequence by at most 2 Lambda
    (graphs of maximum degree <= Lambda); brute force shows the bound holds and is tight."""
    change, da, db = _sorted_degree_l1_over_node_neighbours(n)
    for lam in range(1, n):
        inside = (da <= lam) & (db <= lam)
        assert change[inside].max() == 2 * lam
    # the whole class of n-node graphs: Lambda = n - 1, the n_minus_1 bound
    assert change.max() == 2 * (n - 1)
    # but the input's own maximum degree is no bound on its neighbours: a graph of maximum
    # degree d has neighbours at L1 distance > 2 d (the max_degree caveat)
    assert np.any(change > 2 * np.maximum(da, 1))


def test_brute_force_with_privpub_testing_matches_recorded_sensitivity():
    """Isolation neighbours on all 4-node graphs (privpub.testing.brute_force_sensitivity)
    give 2 (n - 1) = 6: the sensitivity hay_degree_sequence records for n_minus_1."""

    def isolate_one_node(g):
        for v in range(g.n_nodes):
            keep = [e for e in g.edges().tolist() if v not in e]
            yield Graph.from_edges(np.array(keep, dtype=np.int64).reshape(-1, 2), g.n_nodes)

    bound = brute_force_sensitivity(lambda g: np.sort(g.degrees()), all_graphs(4),
                                    isolate_one_node)
    assert bound == 6.0
    ledger = PrivacyLedger(1.0)
    hay_degree_sequence(star(3), epsilon=1.0, degree_bound="n_minus_1", rng=0, ledger=ledger)
    assert ledger.entries[0].sensitivity == bound


# --------------------------------------------------------------------------- privacy
def _sampler(graph, eps, degree_bound):
    return lambda rng: hay_degree_sequence(graph, epsilon=eps, degree_bound=degree_bound,
                                           rng=rng).value.values


EVENTS = {
    "sum >= 3": lambda y: y.sum() >= 3,
    "sum == 0": lambda y: y.sum() == 0,
    "top == 2": lambda y: y[-1] == 2,
    "min >= 1": lambda y: y[0] >= 1,
}
STAR, ISOLATED = star(2), empty(3)  # node 0 with both edges vs node 0 isolated


@pytest.mark.parametrize("eps", [1.0, 2.0])
def test_node_neighbour_test_passes_with_n_minus_1(eps):
    check = empirical_privacy_check(
        _sampler(STAR, eps, "n_minus_1"), _sampler(ISOLATED, eps, "n_minus_1"),
        events=EVENTS, epsilon=eps, n_trials=2000, rng=np.random.default_rng(1),
    )
    assert check.passed


def test_node_neighbour_test_detects_half_the_sensitivity(monkeypatch):
    real = hay_module.laplace_mechanism
    monkeypatch.setattr(
        hay_module, "laplace_mechanism",
        lambda v, *, sensitivity, **kw: real(v, sensitivity=sensitivity / 2, **kw),
    )
    check = empirical_privacy_check(
        _sampler(STAR, 2.0, "n_minus_1"), _sampler(ISOLATED, 2.0, "n_minus_1"),
        events=EVENTS, epsilon=2.0, n_trials=3000, rng=np.random.default_rng(2),
        raise_on_violation=False,
    )
    assert not check.passed and check.epsilon_lower_bound > 2.0


def test_max_degree_bound_is_not_node_dp_across_different_maximum_degrees():
    """The registered caveat, demonstrated: the isolated graph has Lambda = 1 (0 raised to 1),
    its output never reaches 2, while the star's often does."""
    check = empirical_privacy_check(
        _sampler(STAR, 1.0, "max_degree"), _sampler(ISOLATED, 1.0, "max_degree"),
        events=EVENTS, epsilon=1.0, n_trials=500, rng=np.random.default_rng(3),
        raise_on_violation=False,
    )
    assert not check.passed
    info = get_mechanism("hay_degree_sequence")
    assert "maximum degree" in info.caveat_for({})  # the default degree_bound = max_degree
    assert info.caveat_for({"degree_bound": "n_minus_1"}) is None


# --------------------------------------------------------------------------- ledger / input
def test_ledger_spends_epsilon_once_with_sensitivity_2_lambda():
    g = star(4, 7)
    for bound, lam in (("max_degree", 4), ("n_minus_1", 6)):
        ledger = PrivacyLedger(0.5)
        hay_degree_sequence(g, epsilon=0.5, degree_bound=bound, rng=0, ledger=ledger)
        (entry,) = ledger.entries
        assert (entry.epsilon, entry.sensitivity, entry.primitive) == (0.5, 2.0 * lam, "laplace")
        assert ledger.remaining == 0.0
    with pytest.raises(PrivpubError, match="ledger total"):
        hay_degree_sequence(g, epsilon=0.5, rng=0, ledger=PrivacyLedger(1.0))
    spent = PrivacyLedger(0.5)
    spent.spend(0.2, label="other")
    with pytest.raises(BudgetExceededError):
        hay_degree_sequence(g, epsilon=0.5, rng=0, ledger=spent)


def test_degenerate_graphs():
    for g in (empty(5), empty(1)):
        out = hay_degree_sequence(g, epsilon=1.0, rng=0)
        assert out.info["degree_bound"] == 1 and out.value.values.size == g.n_nodes
        assert np.all((out.value.values >= 0) & (out.value.values <= 1))
    assert hay_degree_sequence(empty(0), epsilon=1.0, rng=0).value.values.size == 0
    assert degree_bound_of(star(3, 10), "max_degree") == 3
    assert degree_bound_of(star(3, 10), "n_minus_1") == 9


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), None, "1"])
def test_bad_epsilon(eps):
    with pytest.raises(PrivpubError, match="epsilon"):
        hay_degree_sequence(star(2), epsilon=eps, rng=0)


def test_bad_arguments():
    with pytest.raises(PrivpubError, match="degree_bound"):
        hay_degree_sequence(star(2), epsilon=1.0, degree_bound="d_max", rng=0)
    with pytest.raises(DataError, match="Graph"):
        hay_degree_sequence(np.eye(3), epsilon=1.0, rng=0)


# --------------------------------------------------------------------------- registry / config
def test_registry():
    info = get_mechanism("hay_degree_sequence")
    assert info.func is hay_degree_sequence and info.privacy == NODE_DP
    assert (info.input_kind, info.output_kind) == (Kind.GRAPH, Kind.DEGREE_SEQUENCE)
    assert (info.paper, info.role) == ("qardaji2012", "baseline")
    assert info.parameters == {"epsilon": inspect.Parameter.empty, "degree_bound": "max_degree"}
    with pytest.raises(PrivpubError):  # the edge-DP version is not shown in the paper
        get_mechanism("hay_degree_sequence_edge")
