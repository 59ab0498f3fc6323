"""epasto2022 metrics on hand-made anonymised matrices, randomized response's Jaccard against
its closed form, and the Fig. 4 classifier metric."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from privpub.algorithms.binary import cluster_release
from privpub.baselines.randomized_response import randomized_response_edge
from privpub.errors import PrivpubError
from privpub.metrics.binary_classification import accuracy_mlp_binary
from privpub.metrics.sets import created_fraction, jaccard, suppressed_fraction
from privpub.types import LabelledMatrix

X = np.array([
    [1, 1, 0, 0],
    [1, 1, 1, 0],
    [1, 0, 0, 0],
    [0, 0, 1, 1],
    [0, 1, 1, 1],
    [0, 0, 0, 1],
])  # 12 ones
LABELS = np.array([0, 0, 0, 1, 1, 1])


def test_smooth_and_nonsmooth_fractions_by_hand():
    m = sp.csr_array(X)
    smooth = cluster_release(m, LABELS, 2, rule="majority")
    # cluster 0 releases {0, 1}, cluster 1 releases {2, 3}: 12 entries
    np.testing.assert_array_equal(smooth.toarray(), [[1, 1, 0, 0]] * 3 + [[0, 0, 1, 1]] * 3)
    # kept: rows 0:2, 1:2, 2:1, 3:2, 4:2, 5:1 = 10; suppressed (1,2), (4,1) = 2;
    # created (2,1), (5,2) = 2
    assert suppressed_fraction(X, smooth) == pytest.approx(2 / 12)
    assert created_fraction(X, smooth) == pytest.approx(2 / 12)
    assert jaccard(X, smooth) == pytest.approx(10 / 14)
    nonsmooth = cluster_release(m, LABELS, 2, rule="intersection")
    np.testing.assert_array_equal(nonsmooth.toarray(), [[1, 0, 0, 0]] * 3 + [[0, 0, 0, 1]] * 3)
    assert suppressed_fraction(X, nonsmooth) == pytest.approx(6 / 12)
    assert created_fraction(X, nonsmooth) == 0.0
    assert jaccard(X, nonsmooth) == pytest.approx(6 / 12)


@pytest.mark.parametrize("eps,density", [(0.5, 0.1), (2.0, 0.05), (4.0, 0.02), (8.0, 0.01)])
def test_randomized_response_jaccard_matches_its_closed_form(eps, density):
    """E|T & R| = |T| (1 - q), E|R \\ T| = (N - |T|) q with q = 1 / (1 + e^eps), so
    J ~ |T| (1 - q) / (|T| + (N - |T|) q) (ratio of expectations; the counts concentrate)."""
    rng = np.random.default_rng(0)
    n, d = 400, 300
    x = sp.random_array((n, d), density=density, rng=rng, format="csr")
    x.data[:] = 1
    t, cells = x.nnz, n * d
    q = float(expit(-eps))
    expected = t * (1 - q) / (t + (cells - t) * q)
    got = np.mean([jaccard(x, randomized_response_edge(x, epsilon=eps, rng=rng))
                   for _ in range(5)])
    # standard deviation of one J is below 1% of J here; the mean of 5 is well within 3%
    assert got == pytest.approx(expected, rel=0.03)
    # a wrong flip probability (q at eps / 2) is far off
    q_wrong = float(expit(-eps / 2))
    wrong = t * (1 - q_wrong) / (t + (cells - t) * q_wrong)
    assert abs(got - wrong) > 0.1 * expected


def _labelled(rng, n=300, d=20):
    x = (rng.random((n + 200, d)) < 0.2).astype(np.int8)
    y = ((x[:, 0] + x[:, 1]) > 0).astype(np.int8)  # learnable from two columns
    return LabelledMatrix.wrap(sp.csr_array(x[:n]), labels=y[:n],
                               test_matrix=sp.csr_array(x[n:]), test_labels=y[n:])


def test_classifier_learns_from_the_original_and_not_from_an_emptied_release():
    truth = _labelled(np.random.default_rng(0))
    good = accuracy_mlp_binary(truth, truth, rng=np.random.default_rng(1))
    assert good > 0.9
    empty = sp.csr_array(truth.shape, dtype=np.int8)
    base = accuracy_mlp_binary(truth, empty, rng=np.random.default_rng(1))
    majority = max(truth.test_labels.mean(), 1 - truth.test_labels.mean())
    assert base <= majority + 1e-9 < good
    # same seed, same accuracy
    assert accuracy_mlp_binary(truth, truth, rng=np.random.default_rng(1)) == good


def test_classifier_needs_a_labelled_truth_of_the_same_shape():
    truth = _labelled(np.random.default_rng(0))
    with pytest.raises(PrivpubError, match="labelled truth"):
        accuracy_mlp_binary(sp.csr_array(truth), truth, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError, match="shape"):
        accuracy_mlp_binary(truth, sp.csr_array((3, 20), dtype=np.int8))


def test_matrix_stats_and_original_matrix():
    from privpub.baselines.original_matrix import original_matrix
    from privpub.metrics.matrix_stats import (
        matrix_columns,
        matrix_density,
        matrix_entries,
        matrix_rows,
    )

    out = original_matrix(X)
    assert (matrix_rows(X, out), matrix_columns(X, out), matrix_entries(X, out)) == (6, 4, 12)
    assert matrix_density(X, out) == pytest.approx(0.5)
    assert matrix_density(X, sp.csr_array((0, 3), dtype=np.int8)) != matrix_density(X, out)


@pytest.mark.parametrize("eps", [1.0, 3.0, 6.0])
def test_rr_edge_epsilon_recovers_the_epsilon_of_a_randomized_response_release(eps):
    from privpub.metrics.dp_equivalence import rr_edge_epsilon

    rng = np.random.default_rng(1)
    x = sp.random_array((300, 300), density=0.05, rng=rng, format="csr")
    x.data[:] = 1
    got = rr_edge_epsilon(x, randomized_response_edge(x, epsilon=eps, rng=rng))
    assert got == pytest.approx(eps, abs=0.1)
    assert rr_edge_epsilon(x, x) == np.inf
    assert rr_edge_epsilon(x, sp.csr_array(x.shape, dtype=np.int8)) == 0.0
