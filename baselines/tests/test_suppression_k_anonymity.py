"""Non-smooth k-anonymity (epasto2022 App. D): intersection of the smooth clusters."""

import numpy as np
import pytest
import scipy.sparse as sp

from privpub.baselines.suppression_k_anonymity import nonsmooth_k_anonymity
from privpub.data.synthetic import bipartite_sbm
from privpub.errors import NotApplicableError, PrivpubError
from privpub.verify import verify_release


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("seed", range(3))
def test_output_is_the_intersection_of_each_cluster_and_a_subset(k, seed):
    rng = np.random.default_rng(seed)
    x = (rng.random((45, 15)) < 0.35).astype(np.int8)
    out = nonsmooth_k_anonymity(sp.csr_array(x), k=k, rng=rng).value
    dense, labels = out.toarray(), out.clusters
    assert out.suppression and np.bincount(labels).min() >= k
    assert np.all(dense <= x)  # a subset of the input
    for c in np.unique(labels):
        members = labels == c
        want = np.tile(x[members].min(axis=0), (members.sum(), 1))
        np.testing.assert_array_equal(dense[members], want)
    # k-anonymous by its own classes
    _, counts = np.unique(dense, axis=0, return_counts=True)
    assert counts.min() >= k
    assert verify_release("k-anonymity", x, out, {"k": k})


def test_sbm_and_lsh():
    x = bipartite_sbm(n_rows=200, n_cols=100, block_size=25, p_in=0.9, p_out=0.01,
                      rng=np.random.default_rng(0))
    for chunk_size in (None, 60):
        out = nonsmooth_k_anonymity(x, k=4, chunk_size=chunk_size,
                                    rng=np.random.default_rng(1)).value
        assert out.multiply(x).count_nonzero() == out.nnz
        assert verify_release("k-anonymity", x, out, {"k": 4})


def test_errors():
    with pytest.raises(NotApplicableError):
        nonsmooth_k_anonymity(np.eye(3, dtype=int), k=4, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError):
        nonsmooth_k_anonymity(np.eye(3, dtype=int), k=0, rng=np.random.default_rng(0))
