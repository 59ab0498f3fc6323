"""Smooth k-anonymity (epasto2022 Sec 5.3 + Appendix D): every output is checked against
the definition by an independent dense brute force (the clustering's steps against their
readings: privpub/algorithms/tests/test_clustering.py)."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from privpub.algorithms.clustering import lsh_chunks
from privpub.data.synthetic import bipartite_sbm
from privpub.errors import DataError, NotApplicableError, PrivpubError
from privpub.mechanisms.smooth_k_anonymity import smooth_k_anonymity
from privpub.testing import random_binary_matrix
from privpub.types import KAnonymousMatrix
from privpub.verify import verify_release


def _check_smooth_dense(x, out, k):
    """Def. 3.5 by brute force on dense arrays, using the release's own classes."""
    out = np.asarray(out)
    rows = [tuple(r) for r in out]
    classes = {}
    for i, r in enumerate(rows):
        classes.setdefault(r, []).append(i)
    for released, members in classes.items():
        assert len(members) >= k, f"class of {len(members)} < k = {k}"
        support = x[members].sum(axis=0)
        for j in np.flatnonzero(released):
            assert 2 * support[j] > len(members), "released item without a strict majority"


def _majority_dense(x, labels):
    out = np.zeros_like(x)
    for c in np.unique(labels):
        members = labels == c
        out[members] = (2 * x[members].sum(axis=0) > members.sum()).astype(x.dtype)
    return out


CASES = [
    (40, 12, 0.3, 2, 5),
    (60, 20, 0.15, 3, 20),
    (33, 7, 0.5, 4, 10),
    (50, 30, 0.05, 5, 0),
    (25, 10, 0.4, 8, 5),
]


@pytest.mark.parametrize("n,d,density,k,n_dup", CASES)
def test_every_output_is_smooth_k_anonymous(n, d, density, k, n_dup):
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x = random_binary_matrix(rng, n, d, density, n_dup)
        rel = smooth_k_anonymity(sp.csr_array(x), k=k, rng=rng)
        out = rel.value
        assert isinstance(out, KAnonymousMatrix) and out.shape == x.shape
        _check_smooth_dense(x, out.toarray(), k)
        # the release is exactly the per-cluster strict majority of the reported clusters
        labels = out.clusters
        assert np.bincount(labels).min() >= k
        np.testing.assert_array_equal(out.toarray(), _majority_dense(x, labels))
        assert verify_release("smooth-k-anonymity", x, out, {"k": k})


def test_sbm_output_is_smooth_and_close_to_the_paper():
    x = bipartite_sbm(n_rows=256, n_cols=256, block_size=32, p_in=0.8, p_out=0.01,
                      rng=np.random.default_rng(0))
    out = smooth_k_anonymity(x, k=8, rng=np.random.default_rng(1)).value
    _check_smooth_dense(x.toarray(), out.toarray(), 8)
    inter = out.multiply(x).count_nonzero()
    jac = inter / (x.nnz + out.nnz - inter)
    assert jac > 0.6  # clusters follow the blocks (the paper's 1024 x 1024 SBM: 68.1%)


def test_tie_is_not_a_majority():
    # n < 2k: any valid clustering is one cluster of all rows
    x = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 1], [0, 0, 0, 1]])
    out = smooth_k_anonymity(x, k=3, rng=np.random.default_rng(0)).value.toarray()
    # item 0: 3 of 4 (majority), items 1 and 3: 2 of 4 (a tie), item 2: 1 of 4
    np.testing.assert_array_equal(out, np.tile([1, 0, 0, 0], (4, 1)))
    x5 = np.array([[1, 1], [1, 1], [1, 0], [0, 0], [0, 0]])
    out5 = smooth_k_anonymity(x5, k=3, rng=np.random.default_rng(0)).value.toarray()
    np.testing.assert_array_equal(out5, np.tile([1, 0], (5, 1)))  # 3 of 5 yes, 2 of 5 no



def test_release_is_the_same_with_the_cache_on_or_off(tmp_path, monkeypatch):
    m = sp.csr_array(random_binary_matrix(np.random.default_rng(4), 120, 20, 0.15, n_copies=20))
    releases = []
    for setting in ("off", str(tmp_path), str(tmp_path)):  # off, cold cache, warm cache
        monkeypatch.setenv("PRIVPUB_CACHE_DIR", setting)
        out = smooth_k_anonymity(m, k=4, rng=np.random.default_rng(9))
        releases.append(out.value.toarray())
    assert any(tmp_path.rglob("*.npz"))
    for r in releases[1:]:
        np.testing.assert_array_equal(r, releases[0])







def test_same_seed_same_release_and_nonsmooth_shares_the_clusters():
    from privpub.baselines.suppression_k_anonymity import nonsmooth_k_anonymity

    x = random_binary_matrix(np.random.default_rng(0), 120, 25, 0.2, n_copies=20)
    a = smooth_k_anonymity(x, k=5, rng=np.random.default_rng(7))
    b = smooth_k_anonymity(x, k=5, rng=np.random.default_rng(7))
    c = nonsmooth_k_anonymity(x, k=5, rng=np.random.default_rng(7))
    assert (a.value != b.value).nnz == 0 and a.info == b.info
    np.testing.assert_array_equal(a.value.clusters, c.value.clusters)



# ------------------------------------------------------------------------ LSH heuristic


@pytest.mark.parametrize("k", [2, 5])
def test_lsh_output_is_still_smooth_k_anonymous_and_independent_of_n_jobs(k):
    x = bipartite_sbm(n_rows=300, n_cols=200, block_size=20, p_in=0.5, p_out=0.02,
                      rng=np.random.default_rng(0))
    one = smooth_k_anonymity(x, k=k, chunk_size=70, n_jobs=1, rng=np.random.default_rng(3))
    two = smooth_k_anonymity(x, k=k, chunk_size=70, n_jobs=2, rng=np.random.default_rng(3))
    assert one.info["n_chunks"] == 5  # ceil(300 / 70)
    assert (one.value != two.value).nnz == 0
    np.testing.assert_array_equal(one.value.clusters, two.value.clusters)
    _check_smooth_dense(x.toarray(), one.value.toarray(), k)
    assert verify_release("smooth-k-anonymity", x, one.value, {"k": k})
    # each cluster lies inside one chunk
    chunks = lsh_chunks(x, k=k, chunk_size=70, n_hashes=8,
                        rng=np.random.default_rng(3).spawn(2)[0])
    chunk_of = np.empty(300, int)
    for i, rows in enumerate(chunks):
        chunk_of[rows] = i
    for c in np.unique(one.value.clusters):
        assert np.unique(chunk_of[one.value.clusters == c]).size == 1


# ------------------------------------------------------------------------ errors
def test_bad_input_gives_clear_errors():
    x = np.eye(4, dtype=int)
    rng = np.random.default_rng(0)
    with pytest.raises(PrivpubError, match="k must be"):
        smooth_k_anonymity(x, k=1, rng=rng)
    with pytest.raises(NotApplicableError, match="exceeds the number of rows"):
        smooth_k_anonymity(x, k=5, rng=rng)
    with pytest.raises(DataError, match="0/1"):
        smooth_k_anonymity(np.array([[0, 2], [1, 0]]), k=2, rng=rng)
    with pytest.raises(DataError):
        smooth_k_anonymity(np.array([["a", "b"], ["c", "d"]]), k=2, rng=rng)
    with pytest.raises(DataError, match="2-D"):
        smooth_k_anonymity(np.array([1, 0, 1]), k=2, rng=rng)
    with pytest.raises(DataError):
        smooth_k_anonymity(np.array([[0.5, 0], [1, 0]]), k=2, rng=rng)
    with pytest.raises(PrivpubError, match="alpha"):
        smooth_k_anonymity(x, k=2, alpha=1.0, rng=rng)
    with pytest.raises(PrivpubError, match="n_orders"):
        smooth_k_anonymity(x, k=2, n_orders=0, rng=rng)
    with pytest.raises(PrivpubError, match="n_jobs"):
        smooth_k_anonymity(x, k=2, n_jobs=0, rng=rng)


def test_edge_cases():
    rng = np.random.default_rng(0)
    empty = sp.csr_array((6, 4), dtype=np.int8)  # all rows empty: one class, nothing released
    out = smooth_k_anonymity(empty, k=3, rng=rng).value
    assert out.nnz == 0 and np.bincount(out.clusters).min() >= 3
    full = np.ones((5, 3), dtype=int)
    np.testing.assert_array_equal(smooth_k_anonymity(full, k=2, rng=rng).value.toarray(), full)
    x = np.array([[1, 0]] * 3)
    np.testing.assert_array_equal(smooth_k_anonymity(x, k=3, rng=rng).value.toarray(), x)
    no_cols = sp.csr_array((4, 0), dtype=np.int8)
    assert smooth_k_anonymity(no_cols, k=2, rng=rng).value.shape == (4, 0)


def test_input_is_not_modified():
    x = sp.csr_array(random_binary_matrix(np.random.default_rng(0), 30, 10, 0.3))
    before = (x.data.copy(), x.indices.copy(), x.indptr.copy())
    smooth_k_anonymity(x, k=3, rng=np.random.default_rng(0))
    for a, b in zip(before, (x.data, x.indices, x.indptr), strict=True):
        np.testing.assert_array_equal(a, b)


def test_every_small_matrix_two_rows_per_class():
    # exhaustive over all 4 x 2 binary matrices with k = 2
    for bits in itertools.product([0, 1], repeat=8):
        x = np.array(bits).reshape(4, 2)
        out = smooth_k_anonymity(x, k=2, n_orders=2, rng=np.random.default_rng(0)).value
        _check_smooth_dense(x, out.toarray(), 2)


def test_split_large_gives_clusters_of_k_to_2k_minus_1_and_stays_smooth():
    x = bipartite_sbm(n_rows=256, n_cols=256, block_size=64, p_in=0.8, p_out=0.01,
                      rng=np.random.default_rng(0))
    plain = smooth_k_anonymity(x, k=5, rng=np.random.default_rng(1)).value
    split = smooth_k_anonymity(x, k=5, split_large=True, rng=np.random.default_rng(1)).value
    sizes = np.bincount(split.clusters)
    assert sizes.min() >= 5 and sizes.max() <= 9 and np.bincount(plain.clusters).max() > 9
    # every piece lies inside one unsplit cluster
    for c in np.unique(split.clusters):
        assert np.unique(plain.clusters[split.clusters == c]).size == 1
    _check_smooth_dense(x.toarray(), split.toarray(), 5)
    assert verify_release("smooth-k-anonymity", x, split, {"k": 5})
    with pytest.raises(PrivpubError, match="split_large"):
        smooth_k_anonymity(x, k=5, split_large="yes", rng=np.random.default_rng(1))
