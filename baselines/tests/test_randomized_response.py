"""Tests of epasto2022's randomized response baseline (Algorithm 1, Sec 4.1, Appendix B.1)."""

from __future__ import annotations

import inspect
import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

import privpub.baselines.randomized_response as rr_module
from privpub.baselines.randomized_response import (
    DEFAULT_MAX_OUTPUT_ENTRIES,
    _sample_zero_positions,
    flip_probability,
    randomized_response,
    randomized_response_edge,
    randomized_response_node,
)
from privpub.errors import BudgetExceededError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.registry import EDGE_DP, NODE_DP, get_mechanism
from privpub.testing import (
    brute_force_sensitivity,
    empirical_privacy_check,
    flip_one_entry_neighbours,
    replace_one_row_neighbours,
)
from privpub.types import Kind


def random_binary(n_rows, n_cols, density, seed):
    rng = np.random.default_rng(seed)
    return sp.csr_array((rng.random((n_rows, n_cols)) < density).astype(np.int8))


def flip_counts(original: sp.csr_array, released: sp.csr_array):
    """(ones that became 0, zeros that became 1)."""
    a = original.toarray().astype(bool)
    b = released.toarray().astype(bool)
    return int(np.count_nonzero(a & ~b)), int(np.count_nonzero(~a & b))


def assert_rate(flips: int, trials: int, q: float, n_sigma: float = 5.0):
    """Binomial tolerance: |flips/trials - q| <= n_sigma * sd."""
    sd = math.sqrt(q * (1 - q) / trials)
    rate = flips / trials
    assert abs(rate - q) <= n_sigma * sd, f"rate {rate:.5f} vs q {q:.5f} (sd {sd:.2g})"


# --------------------------------------------------------------------------- flip rates
def test_flip_probability_formula():
    for eps in (1e-9, 0.1, 1.0, 3.0, 20.0):
        assert flip_probability(eps) == pytest.approx(1 / (1 + math.exp(eps)), rel=1e-12)
    # p = 2 / (1 + e^eps) (Appendix B.1) and q = p / 2
    assert 2 * flip_probability(1.0) == pytest.approx(2 / (1 + math.e))
    assert flip_probability(1000.0) == pytest.approx(0.0, abs=1e-300)  # no overflow
    assert flip_probability(1e-12) == pytest.approx(0.5)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_edge_flip_rates_match_one_over_one_plus_e_eps(eps):
    m = random_binary(200, 300, 0.1, seed=1)
    q = 1 / (1 + math.exp(eps))
    rng = np.random.default_rng(int(eps * 1000))
    ones_flipped = zeros_flipped = 0
    reps = 4
    for _ in range(reps):
        out = randomized_response_edge(m, epsilon=eps, rng=rng)
        a, b = flip_counts(m, out)
        ones_flipped += a
        zeros_flipped += b
    n_ones = reps * m.nnz
    n_zeros = reps * (m.shape[0] * m.shape[1] - m.nnz)
    assert_rate(ones_flipped, n_ones, q)
    assert_rate(zeros_flipped, n_zeros, q)


@pytest.mark.parametrize("eps", [1.0, 10.0, 30.0])
def test_node_flip_rates_use_eps_over_number_of_columns(eps):
    m = random_binary(400, 10, 0.3, seed=2)
    q = 1 / (1 + math.exp(eps / m.shape[1]))
    rng = np.random.default_rng(int(eps))
    ones_flipped = zeros_flipped = 0
    reps = 4
    for _ in range(reps):
        out = randomized_response_node(m, epsilon=eps, rng=rng)
        a, b = flip_counts(m, out)
        ones_flipped += a
        zeros_flipped += b
    assert_rate(ones_flipped, reps * m.nnz, q)
    assert_rate(zeros_flipped, reps * (m.shape[0] * m.shape[1] - m.nnz), q)


def test_huge_epsilon_returns_the_input():
    m = random_binary(50, 60, 0.2, seed=3)
    out = randomized_response_edge(m, epsilon=200.0, rng=np.random.default_rng(0))
    assert (out != m).nnz == 0


# --------------------------------------------------------------------------- output contract
def test_output_is_canonical_binary_of_same_shape_and_input_untouched():
    rng = np.random.default_rng(4)
    # a non-canonical input: int64, unsorted indices within rows
    data = np.ones(5, dtype=np.int64)
    indices = np.array([3, 0, 2, 1, 0])
    indptr = np.array([0, 2, 3, 5, 5])
    m = sp.csr_array((data, indices, indptr), shape=(4, 5))
    before = (m.data.copy(), m.indices.copy(), m.indptr.copy(), m.dtype)
    dense = m.toarray()
    dense_before = dense.copy()
    for inp in (m, dense):
        out = randomized_response_edge(inp, epsilon=0.5, rng=rng)
        assert isinstance(out, sp.csr_array)
        assert out.shape == (4, 5)
        assert out.dtype == np.int8
        assert np.all(out.data == 1)
        assert out.has_sorted_indices
        bounds = zip(out.indptr[:-1], out.indptr[1:], strict=True)
        assert all(np.all(np.diff(out.indices[a:b]) > 0) for a, b in bounds)  # no duplicates
    np.testing.assert_array_equal(m.data, before[0])
    np.testing.assert_array_equal(m.indices, before[1])
    np.testing.assert_array_equal(m.indptr, before[2])
    assert m.dtype == before[3]
    np.testing.assert_array_equal(dense, dense_before)


def test_same_seed_same_output_and_different_seeds_differ():
    m = random_binary(100, 120, 0.05, seed=5)
    a = randomized_response_edge(m, epsilon=1.0, rng=np.random.default_rng(42))
    b = randomized_response_edge(m, epsilon=1.0, rng=np.random.default_rng(42))
    c = randomized_response_edge(m, epsilon=1.0, rng=np.random.default_rng(43))
    assert (a != b).nnz == 0
    assert (a != c).nnz > 0
    # an int seed is normalised like a Generator with that seed
    d = randomized_response_edge(m, epsilon=1.0, rng=42)
    assert (a != d).nnz == 0


@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (3, 4)])
def test_degenerate_matrices(shape):
    rng = np.random.default_rng(6)
    empty = np.zeros(shape, dtype=int)
    full = np.ones(shape, dtype=int)
    for inp in (empty, full):
        for f in (randomized_response_edge, randomized_response_node):
            out = f(inp, epsilon=1.0, rng=rng)
            assert out.shape == shape


# --------------------------------------------------------------------------- zero-entry sampler
@pytest.mark.parametrize("method", ["reject", "enumerate"])
def test_zero_sampler_draws_uniform_subsets(method):
    """Every 3-subset of the 8 zero cells is equally likely (chi-square over 56 subsets)."""
    ones = np.array([1, 4, 7, 10], dtype=np.int64)
    zeros = [c for c in range(12) if c not in set(ones.tolist())]
    k, reps = 3, 11_200
    rng = np.random.default_rng(7)
    index = {s: i for i, s in enumerate(itertools.combinations(zeros, k))}
    counts = np.zeros(len(index), dtype=np.int64)
    for _ in range(reps):
        chosen = _sample_zero_positions(ones, 12, k, rng, method=method)
        assert chosen.size == k and np.all(np.diff(chosen) > 0)
        counts[index[tuple(chosen.tolist())]] += 1
    result = stats.chisquare(counts)
    assert result.pvalue > 1e-3, (result, counts)


def test_zero_sampler_edge_cases():
    rng = np.random.default_rng(8)
    ones = np.array([0, 5], dtype=np.int64)
    for method in ("reject", "enumerate", "auto"):
        assert _sample_zero_positions(ones, 6, 0, rng, method=method).size == 0
        np.testing.assert_array_equal(
            _sample_zero_positions(ones, 6, 4, rng, method=method), [1, 2, 3, 4]
        )
    with pytest.raises(PrivpubError):
        _sample_zero_positions(ones, 6, 5, rng)


def test_zero_sampler_many_rounds_when_batches_are_capped(monkeypatch):
    """Topping up over many small batches still yields k distinct zero cells."""
    monkeypatch.setattr(rr_module, "_MAX_BATCH", 7)
    ones = np.arange(0, 1000, 3, dtype=np.int64)
    out = _sample_zero_positions(ones, 1000, 500, np.random.default_rng(9), method="reject")
    assert out.size == 500 and np.unique(out).size == 500
    assert not np.isin(out, ones).any()


def test_every_cell_flips_independently_with_probability_q():
    """Per-cell flip counts over many runs are Binomial(reps, q) (chi-square over cells)."""
    m = sp.csr_array(np.array([[1, 0, 0, 1, 0, 0], [0, 0, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1],
                               [0, 0, 0, 0, 1, 0], [0, 1, 0, 0, 0, 0]]))
    eps, reps = 1.0, 2500
    q = 1 / (1 + math.exp(eps))
    truth = m.toarray().astype(bool)
    flips = np.zeros(truth.shape, dtype=np.int64)
    rng = np.random.default_rng(10)
    for _ in range(reps):
        flips += randomized_response_edge(m, epsilon=eps, rng=rng).toarray().astype(bool) ^ truth
    stat = np.sum((flips - reps * q) ** 2 / (reps * q * (1 - q)))
    assert stats.chi2.sf(stat, df=truth.size) > 1e-3, flips


def test_added_ones_spread_over_rows_in_proportion_to_their_zeros():
    """On a larger matrix (rejection path, batched), row i (2i ones of 100) receives new ones
    in proportion to its 100 - 2i zeros."""
    n_rows, n_cols = 50, 100
    dense = np.zeros((n_rows, n_cols), dtype=np.int8)
    for i in range(n_rows):
        dense[i, :2 * i] = 1
    m = sp.csr_array(dense)
    zeros_per_row = n_cols - 2 * np.arange(n_rows)
    assert 2 * zeros_per_row.sum() >= n_rows * n_cols  # the rejection sampler is used
    eps, reps = 0.5, 20
    q = 1 / (1 + math.exp(eps))
    added = np.zeros(n_rows)
    rng = np.random.default_rng(11)
    for _ in range(reps):
        out = randomized_response_edge(m, epsilon=eps, rng=rng).toarray()
        added += ((out == 1) & (dense == 0)).sum(axis=1)
    expected = reps * zeros_per_row * q
    stat = np.sum((added - expected) ** 2 / (expected * (1 - q)))
    assert stats.chi2.sf(stat, df=n_rows) > 1e-3


# --------------------------------------------------------------------------- privacy
def _sampler(func, matrix, eps):
    return lambda rng: func(matrix, epsilon=eps, rng=rng).toarray()


EDGE_D = np.array([[1, 0], [0, 1]])
EDGE_D_PRIME = np.array([[1, 1], [0, 1]])  # differs in entry (0, 1)
EDGE_EVENTS = {
    "entry (0,1) is 1": lambda y: y[0, 1] == 1,
    "output == D": lambda y: np.array_equal(y, EDGE_D),
    "output == D'": lambda y: np.array_equal(y, EDGE_D_PRIME),
}


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_edge_neighbour_test_passes_at_stated_epsilon(eps):
    check = empirical_privacy_check(
        _sampler(randomized_response_edge, EDGE_D, eps),
        _sampler(randomized_response_edge, EDGE_D_PRIME, eps),
        events=EDGE_EVENTS, epsilon=eps, n_trials=1500, rng=np.random.default_rng(12),
    )
    assert check.passed


def test_edge_neighbour_test_detects_flip_probability_computed_with_twice_epsilon(monkeypatch):
    eps = 1.0
    monkeypatch.setattr(rr_module, "flip_probability", lambda e: 1 / (1 + math.exp(2 * e)))
    check = empirical_privacy_check(
        _sampler(randomized_response_edge, EDGE_D, eps),
        _sampler(randomized_response_edge, EDGE_D_PRIME, eps),
        events=EDGE_EVENTS, epsilon=eps, n_trials=1500, rng=np.random.default_rng(12),
        raise_on_violation=False,
    )
    assert not check.passed
    assert check.epsilon_lower_bound > eps
    with pytest.raises(AssertionError, match="VIOLATED"):
        check.assert_passed()


NODE_D = np.array([[1, 0], [0, 1]])
NODE_D_PRIME = np.array([[0, 1], [0, 1]])  # row 0 replaced: 2 entries differ
NODE_EVENTS = {
    "row 0 == (1, 0)": lambda y: np.array_equal(y[0], [1, 0]),
    "row 0 == (0, 1)": lambda y: np.array_equal(y[0], [0, 1]),
}


def test_node_neighbour_test_passes_and_edge_unit_fails_node_dp():
    eps = 1.0
    ok = empirical_privacy_check(
        _sampler(randomized_response_node, NODE_D, eps),
        _sampler(randomized_response_node, NODE_D_PRIME, eps),
        events=NODE_EVENTS, epsilon=eps, n_trials=1500, rng=np.random.default_rng(13),
    )
    assert ok.passed
    bad = empirical_privacy_check(
        _sampler(randomized_response_edge, NODE_D, eps),
        _sampler(randomized_response_edge, NODE_D_PRIME, eps),
        events=NODE_EVENTS, epsilon=eps, n_trials=1500, rng=np.random.default_rng(13),
        raise_on_violation=False,
    )
    assert not bad.passed and bad.epsilon_lower_bound > eps


def test_recorded_sensitivity_is_the_brute_force_number_of_changed_entries():
    m = np.array([[1, 0, 1], [0, 0, 1]])
    flat = lambda x: np.asarray(x).ravel()  # noqa: E731
    edge = brute_force_sensitivity(flat, [m], flip_one_entry_neighbours)
    node = brute_force_sensitivity(flat, [m], replace_one_row_neighbours)
    for func, expected in ((randomized_response_edge, edge), (randomized_response_node, node)):
        ledger = PrivacyLedger(1.0)
        func(m, epsilon=1.0, rng=np.random.default_rng(0), ledger=ledger)
        assert ledger.entries[0].sensitivity == expected
    assert (edge, node) == (1.0, 3.0)


# --------------------------------------------------------------------------- ledger
@pytest.mark.parametrize("func,unit", [(randomized_response_edge, "edge"),
                                       (randomized_response_node, "node")])
def test_ledger_spends_exactly_epsilon(func, unit):
    m = random_binary(20, 7, 0.3, seed=14)
    ledger = PrivacyLedger(0.7)
    func(m, epsilon=0.7, rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.spent == 0.7
    assert ledger.remaining == 0.0
    (entry,) = ledger.entries
    assert entry.epsilon == 0.7
    assert entry.primitive == "randomized_response"
    assert entry.sensitivity == (1.0 if unit == "edge" else 7.0)
    assert unit in entry.label


def test_ledger_with_other_total_or_spent_budget_is_refused():
    m = random_binary(5, 5, 0.3, seed=15)
    with pytest.raises(PrivpubError, match="ledger total"):
        randomized_response_edge(m, epsilon=1.0, rng=np.random.default_rng(0),
                                 ledger=PrivacyLedger(2.0))
    ledger = PrivacyLedger(1.0)
    ledger.spend(0.5, label="something else")
    with pytest.raises(BudgetExceededError):
        randomized_response_edge(m, epsilon=1.0, rng=np.random.default_rng(0), ledger=ledger)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "1", None, True])
def test_bad_epsilon(eps):
    with pytest.raises(PrivpubError, match="epsilon"):
        randomized_response_edge(np.eye(3), epsilon=eps, rng=np.random.default_rng(0))


@pytest.mark.parametrize(
    "matrix",
    [
        np.array([[0, 2], [1, 0]]),
        np.array([[0.5, 1.0]]),
        np.array([[0, -1]]),
        np.array([[np.nan, 1.0]]),
        np.array([1, 0, 1]),
        sp.csr_array(np.array([1, 0, 1])),
        np.zeros((2, 2, 2)),
        np.array([["a", "b"]]),
        None,
    ],
    ids=["two", "half", "minus-one", "nan", "1-D", "1-D sparse", "3-D", "strings", "None"],
)
def test_bad_matrix(matrix):
    with pytest.raises(PrivpubError):
        randomized_response_edge(matrix, epsilon=1.0, rng=np.random.default_rng(0))


def test_bad_unit_and_limit():
    with pytest.raises(PrivpubError, match="unit"):
        randomized_response(np.eye(2), epsilon=1.0, unit="vertex", rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError, match="max_output_entries"):
        randomized_response_edge(np.eye(2), epsilon=1.0, rng=np.random.default_rng(0),
                                 max_output_entries=0)


def test_too_large_output_is_refused_with_a_clear_message_and_no_spending():
    big = sp.csr_array(([1] * 10, (np.arange(10), np.arange(10))), shape=(300_000, 300_000))
    ledger = PrivacyLedger(0.1)
    with pytest.raises(PrivpubError, match="max_output_entries") as info:
        randomized_response_edge(big, epsilon=0.1, rng=np.random.default_rng(0), ledger=ledger)
    assert "300000 x 300000" in str(info.value)
    assert ledger.spent == 0.0
    # the limit can be raised
    m = sp.csr_array((1000, 1000), dtype=np.int8)
    with pytest.raises(PrivpubError, match="max_output_entries"):
        randomized_response_edge(m, epsilon=1.0, rng=np.random.default_rng(0),
                                 max_output_entries=100_000)
    out = randomized_response_edge(m, epsilon=1.0, rng=np.random.default_rng(0),
                                   max_output_entries=1_000_000)
    assert_rate(out.nnz, 1_000_000, 1 / (1 + math.e))


def test_large_sparse_matrix_at_large_epsilon_stays_sparse():
    rng = np.random.default_rng(16)
    n, nnz = 100_000, 50_000
    big = sp.csr_array((np.ones(nnz, dtype=np.int8), (rng.integers(0, n, nnz),
                                                      rng.integers(0, n, nnz))), shape=(n, n))
    big.sum_duplicates()
    big.data[:] = 1
    out = randomized_response_edge(big, epsilon=12.0, rng=rng)
    q = 1 / (1 + math.exp(12.0))
    kept = (big.multiply(out)).nnz
    assert_rate(big.nnz - kept, big.nnz, q)
    assert_rate(out.nnz - kept, n * n - big.nnz, q)


# --------------------------------------------------------------------------- registry / config
@pytest.mark.parametrize("name,privacy,func", [
    ("randomized_response_edge", EDGE_DP, randomized_response_edge),
    ("randomized_response_node", NODE_DP, randomized_response_node),
])
def test_registry(name, privacy, func):
    info = get_mechanism(name)
    assert info.func is func
    assert info.privacy == privacy
    assert (info.input_kind, info.output_kind) == (Kind.BINARY_MATRIX, Kind.BINARY_MATRIX)
    assert (info.paper, info.role, info.caveat) == ("epasto2022", "baseline", None)
    assert info.parameters == {
        "epsilon": inspect.Parameter.empty,
        "max_output_entries": DEFAULT_MAX_OUTPUT_ENTRIES,
    }
    sig = inspect.signature(func)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(sig.parameters.values())[1:])


@pytest.mark.parametrize("upper", [5000, 317_080**2, 2**62])
def test_bucket_sort_is_numpys_sort(upper):
    """The uniform draws' sort gives np.sort's array, whatever the values (duplicates, both
    ends of the range, a skewed sample that lands in few buckets)."""
    from privpub.baselines.randomized_response import _bucket_sort, _sorted_unique

    rng = np.random.default_rng(upper % 97)
    for values in (rng.integers(0, upper, 50_000), rng.integers(0, 40, 9_000),
                   np.r_[rng.integers(0, upper, 20_000), 0, 0, upper - 1, upper - 1],
                   rng.integers(upper - 50, upper, 10_000)):
        values = values.astype(np.int64)
        np.testing.assert_array_equal(_bucket_sort(values, upper), np.sort(values))
        np.testing.assert_array_equal(_sorted_unique(values, upper), np.unique(values))
    runs = np.r_[np.sort(rng.integers(0, upper, 7000)), np.sort(rng.integers(0, upper, 5000))]
    np.testing.assert_array_equal(_sorted_unique(runs, runs=True), np.unique(runs))
