"""Smooth k-anonymity (epasto2022 Sec 5.3 + Appendix D): every output is checked against
the definition by an independent dense brute force, and every step against its reading."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from mechanisms import smooth_k_anonymity as smk
from mechanisms.smooth_k_anonymity import (
    cluster_release,
    distinct_rows,
    facility_costs,
    lsh_chunks,
    minhash_signatures,
    smooth_clusters,
    smooth_k_anonymity,
)
from privpub.data.synthetic import bipartite_sbm
from privpub.errors import DataError, NotApplicableError, PrivpubError
from privpub.types import KAnonymousMatrix
from privpub.verify import verify_release


def _random_matrix(rng, n, d, density, n_dup=0):
    x = (rng.random((n, d)) < density).astype(np.int8)
    if n_dup:  # exact copies of some rows
        x[rng.integers(0, n, n_dup)] = x[rng.integers(0, n, n_dup)]
    return x


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
        x = _random_matrix(rng, n, d, density, n_dup)
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


def test_cluster_release_rules_by_hand():
    x = sp.csr_array(np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 1, 1], [0, 1, 0]]))
    labels = np.array([0, 0, 0, 1, 1])
    maj = cluster_release(x, labels, 2, rule="majority")
    np.testing.assert_array_equal(maj.toarray(), [[1, 1, 0]] * 3 + [[0, 1, 0]] * 2)
    inter = cluster_release(x, labels, 2, rule="intersection")
    np.testing.assert_array_equal(inter.toarray(), [[1, 0, 0]] * 3 + [[0, 1, 0]] * 2)
    assert inter.suppression and not maj.suppression
    with pytest.raises(PrivpubError):
        cluster_release(x, labels, 2, rule="mode")


def test_distinct_rows_matches_numpy_unique():
    rng = np.random.default_rng(3)
    x = _random_matrix(rng, 200, 6, 0.3)  # many duplicates, some empty rows
    points, inverse, weights = distinct_rows(sp.csr_array(x))
    np.testing.assert_array_equal(points.toarray()[inverse], x)
    assert np.unique(x, axis=0).shape[0] == points.shape[0]
    np.testing.assert_array_equal(np.bincount(inverse), weights)
    first = [int(np.flatnonzero(inverse == p)[0]) for p in range(points.shape[0])]
    assert first == sorted(first)  # numbered by first occurrence


def _knn_brute(x_points, weights, k):
    n = x_points.shape[0]
    dist = (x_points[:, None, :] != x_points[None, :, :]).sum(axis=2)
    out = np.zeros(n)
    for v in range(n):
        users = np.repeat(dist[v], weights)  # every user, copies included
        out[v] = np.sort(users)[:k].sum()
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [2, 3, 6])
def test_facility_costs_are_exact(seed, k):
    rng = np.random.default_rng(seed)
    x = _random_matrix(rng, 50, 15, 0.12, n_dup=15)
    points, _, weights = distinct_rows(sp.csr_array(x))
    got = facility_costs(points, weights, k, alpha=0.5)
    want = 2.0 * _knn_brute(points.toarray(), weights, k)  # 2 alpha / (1 - alpha) = 2
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(facility_costs(points, weights, k, alpha=0.25),
                               (2 * 0.25 / 0.75) * want / 2.0)
    # the distance to the nearest other point, where a point has fewer than k copies
    # and the lowest index at that distance
    _, nearest, nearest_point = smk._costs_and_nearest(points, weights, k, 0.5)
    dense = points.toarray()
    dist = (dense[:, None, :] != dense[None, :, :]).sum(axis=2)
    np.fill_diagonal(dist, dense.shape[1] + 1)
    few = weights < k
    assert few.any()
    np.testing.assert_array_equal(nearest[few], dist.min(axis=1)[few])
    np.testing.assert_array_equal(nearest_point[few], dist.argmin(axis=1)[few])
    assert (nearest_point[~few] == -1).all()


def test_facility_costs_cached_on_disk_per_matrix_and_k(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVPUB_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(3)
    points, _, weights = distinct_rows(sp.csr_array(_random_matrix(rng, 60, 15, 0.15)))
    want = facility_costs(points, weights, 3)
    np.testing.assert_array_equal(facility_costs(points, weights, 3, cached=True), want)
    real = smk._knn_sums
    monkeypatch.setattr(smk, "_knn_sums", lambda *a: pytest.fail("recomputed a cached cost"))
    np.testing.assert_array_equal(facility_costs(points, weights, 3, cached=True), want)
    monkeypatch.setattr(smk, "_knn_sums", real)  # another k or other weights: computed anew
    np.testing.assert_array_equal(facility_costs(points, weights, 4, cached=True),
                                  facility_costs(points, weights, 4))
    other = weights.copy()
    other[0] += 1
    np.testing.assert_array_equal(facility_costs(points, other, 3, cached=True),
                                  facility_costs(points, other, 3))


def test_release_is_the_same_with_the_cache_on_or_off(tmp_path, monkeypatch):
    m = sp.csr_array(_random_matrix(np.random.default_rng(4), 120, 20, 0.15, n_dup=20))
    releases = []
    for setting in ("off", str(tmp_path), str(tmp_path)):  # off, cold cache, warm cache
        monkeypatch.setenv("PRIVPUB_CACHE_DIR", setting)
        out = smooth_k_anonymity(m, k=4, rng=np.random.default_rng(9))
        releases.append(out.value.toarray())
    assert any(tmp_path.rglob("*.npz"))
    for r in releases[1:]:
        np.testing.assert_array_equal(r, releases[0])


@pytest.mark.parametrize("chunk_size", [None, 40])
def test_cached_best_order_replays_one_pass_with_the_same_result(tmp_path, monkeypatch,
                                                                chunk_size):
    # the first run searches all orders and stores the cheapest's index; a run with the
    # same generator state solves only that order, and ends with the generator as far on
    m = sp.csr_array(_random_matrix(np.random.default_rng(6), 150, 20, 0.15, n_dup=20))
    real, calls = smk._meyerson, []
    monkeypatch.setattr(smk, "_meyerson", lambda *a: calls.append(1) or real(*a))
    runs = []
    for setting in ("off", str(tmp_path), str(tmp_path)):  # off, cold cache, warm cache
        monkeypatch.setenv("PRIVPUB_CACHE_DIR", setting)
        rng = np.random.default_rng(11)
        calls.clear()
        c = smooth_clusters(m, k=4, n_orders=6, chunk_size=chunk_size, rng=rng)
        runs.append((c, len(calls), rng.random()))
    n_blocks = runs[0][0].n_chunks
    assert [r[1] for r in runs] == [6 * n_blocks, 6 * n_blocks, n_blocks]
    for c, _, after in runs[1:]:
        np.testing.assert_array_equal(c.labels, runs[0][0].labels)
        assert (c.cost, c.n_opened, c.n_closed, after) == (
            runs[0][0].cost, runs[0][0].n_opened, runs[0][0].n_closed, runs[0][2])
    # another seed is another search
    monkeypatch.setenv("PRIVPUB_CACHE_DIR", str(tmp_path))
    calls.clear()
    smooth_clusters(m, k=4, n_orders=6, chunk_size=chunk_size, rng=np.random.default_rng(12))
    assert len(calls) == 6 * n_blocks


def test_meyerson_assigns_every_point_to_its_nearest_open_facility():
    rng = np.random.default_rng(5)
    x = _random_matrix(rng, 80, 20, 0.2, n_dup=10)
    points, _, weights = distinct_rows(sp.csr_array(x))
    n = points.shape[0]
    indptr = points.indptr.astype(np.int64)
    indices = points.indices.astype(np.int64)
    norms = np.diff(indptr)
    col_ptr, _ = smk._csc_points(points)
    fcost, nearest, nearest_point = smk._costs_and_nearest(points, weights, 4, 0.5)
    is_open, assign, dist, total = smk._meyerson(
        rng.permutation(n).astype(np.int64), rng.random(n), indptr, indices, norms,
        weights.astype(np.int64), fcost, nearest, nearest_point, col_ptr, points.shape[1])
    dense = points.toarray()
    full = (dense[:, None, :] != dense[None, :, :]).sum(axis=2)
    opened = np.flatnonzero(is_open)
    assert opened.size >= 1 and is_open[assign].all()
    np.testing.assert_array_equal(dist, full[:, opened].min(axis=1))
    np.testing.assert_array_equal(dist, full[np.arange(n), assign])
    assert total == pytest.approx(fcost[opened].sum() + (weights * dist).sum())
    # lower-bound step: every remaining facility has >= k users, nothing is lost
    final, _ = smk._close_small(is_open, assign.copy(), indptr, indices, norms,
                                weights.astype(np.int64), col_ptr, points.shape[1], 4)
    sizes = np.bincount(final, weights=weights)
    assert sizes[sizes > 0].min() >= 4 and sizes.sum() == x.shape[0]


def _meyerson_brute(dense, order, draws, weights, fcost):
    """Meyerson's pass and the final assignment on a full distance matrix, no shortcuts."""
    full = (dense[:, None, :] != dense[None, :, :]).sum(axis=2)
    is_open = np.zeros(len(dense), bool)
    for p, u in zip(order, draws, strict=True):
        if not is_open.any() or u * fcost[p] < weights[p] * full[p, is_open].min():
            is_open[p] = True
    opened = np.flatnonzero(is_open)
    assign = opened[full[:, opened].argmin(axis=1)]  # ties: lowest index
    dist = full[np.arange(len(dense)), assign]
    return is_open, assign, dist, fcost[opened].sum() + (weights * dist).sum()


@pytest.mark.parametrize("seed", range(16))
def test_meyerson_equals_the_pass_without_shortcuts(seed):
    # the compiled pass skips the nearest-facility search when nearest[p] <= delta <= |p| +
    # |least norm open| already decides or p's nearest neighbour is open; every decision,
    # assignment and cost must stay the same
    rng = np.random.default_rng(seed)
    x = _random_matrix(rng, int(rng.integers(20, 120)), int(rng.integers(4, 30)),
                       float(rng.choice([0.03, 0.08, 0.2, 0.5])), n_dup=int(rng.integers(0, 30)))
    if seed % 4 == 0:  # mostly disjoint rows: delta is often exactly |p| + |least norm open|
        x = np.hstack([np.eye(len(x), dtype=np.int8), x[:, :3]])
    points, _, weights = distinct_rows(sp.csr_array(x))
    n = points.shape[0]
    indptr = points.indptr.astype(np.int64)
    col_ptr, _ = smk._csc_points(points)
    for k in (2, 3, 8, 20):
        fcost, nearest, nearest_point = smk._costs_and_nearest(
            points, weights, k, float(rng.choice([0.2, 0.5, 0.8])))
        order, draws = rng.permutation(n).astype(np.int64), rng.random(n)
        got = smk._meyerson(order, draws, indptr, points.indices.astype(np.int64),
                            np.diff(indptr), weights.astype(np.int64), fcost, nearest,
                            nearest_point, col_ptr, points.shape[1])
        want = _meyerson_brute(points.toarray(), order, draws, weights, fcost)
        for g, w in zip(got[:3], want[:3], strict=True):
            np.testing.assert_array_equal(g, w)
        assert got[3] == pytest.approx(want[3], rel=1e-12)


def test_meyerson_opening_rule():
    # two far-apart groups of exact copies: a facility with >= k copies costs nothing, so
    # each group's first point opens; a point at distance 0 never opens
    x = np.array([[1, 1, 0, 0]] * 4 + [[0, 0, 1, 1]] * 4)
    c = smooth_clusters(x, k=4, rng=np.random.default_rng(0))
    assert c.n_clusters == 2 and c.cost == 0.0 and c.n_opened == 2
    np.testing.assert_array_equal(np.bincount(c.labels), [4, 4])


def test_same_seed_same_release_and_nonsmooth_shares_the_clusters():
    from baselines.suppression_k_anonymity import nonsmooth_k_anonymity

    x = _random_matrix(np.random.default_rng(0), 120, 25, 0.2, n_dup=20)
    a = smooth_k_anonymity(x, k=5, rng=np.random.default_rng(7))
    b = smooth_k_anonymity(x, k=5, rng=np.random.default_rng(7))
    c = nonsmooth_k_anonymity(x, k=5, rng=np.random.default_rng(7))
    assert (a.value != b.value).nnz == 0 and a.info == b.info
    np.testing.assert_array_equal(a.value.clusters, c.value.clusters)


def test_more_orders_never_cost_more():
    x = _random_matrix(np.random.default_rng(1), 150, 30, 0.1)
    one = smooth_clusters(x, k=4, n_orders=1, rng=np.random.default_rng(2))
    ten = smooth_clusters(x, k=4, n_orders=10, rng=np.random.default_rng(2))
    assert ten.cost <= one.cost  # the first order is shared: the cheapest of 10 is kept


# ------------------------------------------------------------------------ LSH heuristic
def test_minhash_is_the_minimum_permuted_column():
    rng = np.random.default_rng(0)
    x = sp.csr_array(_random_matrix(rng, 30, 12, 0.2))
    sig = minhash_signatures(x, 4, np.random.default_rng(9))
    perm_rng = np.random.default_rng(9)
    perms = [perm_rng.permutation(12) for _ in range(4)]
    for r in range(30):
        cols = x.indices[x.indptr[r] : x.indptr[r + 1]]
        for h in range(4):
            assert sig[r, h] == (perms[h][cols].min() if cols.size else 12)


def test_lsh_chunks_partition_the_rows_in_signature_order():
    rng = np.random.default_rng(1)
    x = sp.csr_array(_random_matrix(rng, 103, 40, 0.05))
    chunks = lsh_chunks(x, k=4, chunk_size=25, n_hashes=8, rng=np.random.default_rng(2))
    assert len(chunks) == 5 and min(map(len, chunks)) >= 20
    order = np.concatenate(chunks)
    np.testing.assert_array_equal(np.sort(order), np.arange(103))
    sig = minhash_signatures(x, 8, np.random.default_rng(2))
    keys = [tuple(s) for s in sig[order]]
    assert keys == sorted(keys)
    # never a chunk smaller than k
    small = lsh_chunks(x, k=30, chunk_size=10, n_hashes=8, rng=np.random.default_rng(2))
    assert len(small) == 3 and min(map(len, small)) >= 30


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
    x = sp.csr_array(_random_matrix(np.random.default_rng(0), 30, 10, 0.3))
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


def test_split_large_clusters_by_hand():
    m = sp.csr_array(np.eye(11, dtype=np.int8))
    labels = np.array([0] * 7 + [1] * 4)
    out, n = smk.split_large_clusters(m, labels, 3, n_hashes=2, rng=np.random.default_rng(0))
    assert n == 3  # 7 rows -> 2 pieces (3 and 4), 4 rows stay one cluster
    assert sorted(np.bincount(out).tolist()) == [3, 4, 4]
    assert np.unique(out[7:]).size == 1
