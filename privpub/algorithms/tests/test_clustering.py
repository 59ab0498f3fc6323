"""Clustering for epasto2022's smooth k-anonymity (Sec 5.3 + Appendix D): every step against
its reading (distinct rows, exact facility costs, Meyerson's passes, the lower bound, the
LSH chunks) and the disk cache, which changes no result."""

import numpy as np
import pytest
import scipy.sparse as sp

from privpub import cache
from privpub.algorithms import clustering as clu
from privpub.algorithms.clustering import (
    distinct_rows,
    facility_costs,
    lsh_chunks,
    minhash_signatures,
    smooth_clusters,
)
from privpub.testing import random_binary_matrix


def test_distinct_rows_matches_numpy_unique():
    rng = np.random.default_rng(3)
    x = random_binary_matrix(rng, 200, 6, 0.3)  # many duplicates, some empty rows
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
    x = random_binary_matrix(rng, 50, 15, 0.12, n_copies=15)
    points, _, weights = distinct_rows(sp.csr_array(x))
    got = facility_costs(points, weights, k, alpha=0.5)
    want = 2.0 * _knn_brute(points.toarray(), weights, k)  # 2 alpha / (1 - alpha) = 2
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(facility_costs(points, weights, k, alpha=0.25),
                               (2 * 0.25 / 0.75) * want / 2.0)
    # the distance to the nearest other point, where a point has fewer than k copies
    # and the lowest index at that distance
    _, nearest, nearest_point, _ = clu._costs_and_nearest(points, weights, k, 0.5)
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
    points, _, weights = distinct_rows(sp.csr_array(random_binary_matrix(rng, 60, 15, 0.15)))
    want = facility_costs(points, weights, 3)
    np.testing.assert_array_equal(facility_costs(points, weights, 3, cached=True), want)
    real = clu._knn_sums
    monkeypatch.setattr(clu, "_knn_sums", lambda *a: pytest.fail("recomputed a cached cost"))
    np.testing.assert_array_equal(facility_costs(points, weights, 3, cached=True), want)
    monkeypatch.setattr(clu, "_knn_sums", real)  # another k or other weights: computed anew
    np.testing.assert_array_equal(facility_costs(points, weights, 4, cached=True),
                                  facility_costs(points, weights, 4))
    other = weights.copy()
    other[0] += 1
    np.testing.assert_array_equal(facility_costs(points, other, 3, cached=True),
                                  facility_costs(points, other, 3))



@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_neighbours", [1, 4, 12])
def test_neighbour_lists_are_the_nearest_points_by_distance_then_index(seed, n_neighbours):
    # every point's list: the other points sorted by (distance, index), the first
    # n_neighbours of them, -1 after the last when there are fewer; the same whatever k
    rng = np.random.default_rng(seed)
    x = random_binary_matrix(rng, int(rng.integers(2, 40)), int(rng.integers(3, 12)),
                             float(rng.choice([0.05, 0.2, 0.5])), n_copies=5)
    points, _, weights = distinct_rows(sp.csr_array(x))
    dense = points.toarray()
    n = dense.shape[0]
    dist = (dense[:, None, :] != dense[None, :, :]).sum(axis=2)
    want = np.full((n, n_neighbours), -1, np.int64)
    for v in range(n):
        others = sorted((int(dist[v, u]), u) for u in range(n) if u != v)[:n_neighbours]
        want[v, :len(others)] = [(d << 32) | u for d, u in others]
    for k in (0, 2, 5):
        got = clu._costs_and_nearest(points, weights, k, 0.5, n_neighbours=n_neighbours)
        np.testing.assert_array_equal(got[3], want)
        if k:  # computed beside the costs, the costs are unchanged
            np.testing.assert_array_equal(got[0], facility_costs(points, weights, k))


def test_neighbour_lists_cached_on_disk_per_matrix(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVPUB_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(4)
    points, _, weights = distinct_rows(sp.csr_array(random_binary_matrix(rng, 60, 15, 0.15)))
    digest = clu._digest(points, weights)
    want = clu._costs_and_nearest(points, weights, 3, 0.5, n_neighbours=8)
    got = clu._costs_and_nearest(points, weights, 3, 0.5, digest=digest, n_neighbours=8)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    real = clu._knn_sums
    monkeypatch.setattr(clu, "_knn_sums", lambda *a: pytest.fail("recomputed a cached list"))
    for clear in (True, False):  # read from the disk, then from this process's memory
        if clear:
            clu._LISTS.clear()
        got = clu._costs_and_nearest(points, weights, 3, 0.5, digest=digest, n_neighbours=8)
        np.testing.assert_array_equal(got[3], want[3])
    assert list(clu._LISTS) == [(digest, 8)]
    monkeypatch.setattr(clu, "_knn_sums", real)  # another k: its costs alone, the same lists
    got = clu._costs_and_nearest(points, weights, 5, 0.5, digest=digest, n_neighbours=8)
    np.testing.assert_array_equal(got[3], want[3])
    np.testing.assert_array_equal(got[0], facility_costs(points, weights, 5))
    with cache.cold():  # running-time experiments time whole computations
        assert not clu._LISTS


@pytest.mark.parametrize("chunk_size", [None, 40])
def test_cached_best_order_replays_one_pass_with_the_same_result(tmp_path, monkeypatch,
                                                                chunk_size):
    # the first run searches all orders and stores the cheapest's index; a run with the
    # same generator state solves only that order, and ends with the generator as far on
    m = sp.csr_array(random_binary_matrix(np.random.default_rng(6), 150, 20, 0.15, n_copies=20))
    real, calls = clu._meyerson, []
    monkeypatch.setattr(clu, "_meyerson", lambda *a: calls.append(1) or real(*a))
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
    x = random_binary_matrix(rng, 80, 20, 0.2, n_copies=10)
    points, _, weights = distinct_rows(sp.csr_array(x))
    n = points.shape[0]
    indptr = points.indptr.astype(np.int64)
    indices = points.indices.astype(np.int64)
    norms = np.diff(indptr)
    col_ptr, col_pts = clu._csc_points(points)
    fcost, nearest, nearest_point, neighbours = clu._costs_and_nearest(
        points, weights, 4, 0.5, n_neighbours=clu._N_NEIGHBOURS)
    is_open, assign, dist, total = clu._meyerson(
        rng.permutation(n).astype(np.int64), rng.random(n), indptr, indices, norms,
        weights.astype(np.int64), fcost, nearest, nearest_point, neighbours, col_ptr, col_pts,
        points.shape[1])
    dense = points.toarray()
    full = (dense[:, None, :] != dense[None, :, :]).sum(axis=2)
    opened = np.flatnonzero(is_open)
    assert opened.size >= 1 and is_open[assign].all()
    np.testing.assert_array_equal(dist, full[:, opened].min(axis=1))
    np.testing.assert_array_equal(dist, full[np.arange(n), assign])
    assert total == pytest.approx(fcost[opened].sum() + (weights * dist).sum())
    # lower-bound step: every remaining facility has >= k users, nothing is lost
    final, _ = clu._close_small(is_open, assign.copy(), indptr, indices, norms,
                                weights.astype(np.int64), neighbours, col_ptr,
                                points.shape[1], 4, clu._FEWEST_FIRST)
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
    total = 0.0  # summed in the pass's order: the opened facilities, then every point
    for p in opened:
        total += fcost[p]
    for w, d in zip(weights, dist, strict=True):
        total += int(w) * int(d)
    return is_open, assign, dist, total



@pytest.mark.parametrize("seed", range(16))
def test_meyerson_equals_the_pass_without_shortcuts(seed):
    # the compiled pass skips the nearest-facility search when nearest[p] <= delta <= |p| +
    # |least norm open| already decides, p's nearest neighbour is open or its neighbour
    # list decides; every decision, assignment and cost must stay the same, with lists too
    # short to decide (0, 1 or 3 points: the searches run) or long enough (32)
    rng = np.random.default_rng(seed)
    x = random_binary_matrix(rng, int(rng.integers(20, 120)), int(rng.integers(4, 30)),
                       float(rng.choice([0.03, 0.08, 0.2, 0.5])), n_copies=int(rng.integers(0, 30)))
    if seed % 4 == 0:  # mostly disjoint rows: delta is often exactly |p| + |least norm open|
        x = np.hstack([np.eye(len(x), dtype=np.int8), x[:, :3]])
    points, _, weights = distinct_rows(sp.csr_array(x))
    n = points.shape[0]
    indptr = points.indptr.astype(np.int64)
    col_ptr, col_pts = clu._csc_points(points)
    for k in (2, 3, 8, 20):
        alpha = float(rng.choice([0.2, 0.5, 0.8]))
        order, draws = rng.permutation(n).astype(np.int64), rng.random(n)
        for n_neighbours in (0, 1, 3, 32):
            fcost, nearest, nearest_point, neighbours = clu._costs_and_nearest(
                points, weights, k, alpha, n_neighbours=n_neighbours)
            if neighbours is None:
                neighbours = np.empty((n, 0), np.int64)
            got = clu._meyerson(order, draws, indptr, points.indices.astype(np.int64),
                                np.diff(indptr), weights.astype(np.int64), fcost, nearest,
                                nearest_point, neighbours, col_ptr, col_pts, points.shape[1])
            want = _meyerson_brute(points.toarray(), order, draws, weights, fcost)
            for g, w in zip(got[:3], want[:3], strict=True):
                np.testing.assert_array_equal(g, w)
            assert got[3] == want[3]



def _close_small_brute(dense, is_open, assign, weights, k, order=None):
    """The lower-bound step on a full distance matrix: the open facility with fewest users
    (ties: lowest index) under k closes, or each in ``order`` if it has fewer than k then
    and is not the last one; its users move to the nearest open facility (ties: lowest
    index)."""
    full = (dense[:, None, :] != dense[None, :, :]).sum(axis=2)
    n = len(dense)
    opened, assign = is_open.copy(), assign.copy()
    size = np.bincount(assign, weights=weights, minlength=n).astype(np.int64)

    def close(f):
        opened[f] = False
        facs = np.flatnonzero(opened)
        for p in np.flatnonzero(assign == f):
            g = facs[np.argmin(full[p, facs])]
            assign[p] = g
            size[g] += weights[p]
        size[f] = 0

    n_closed = 0
    if order is None:
        while True:
            small = [f for f in np.flatnonzero(opened) if size[f] < k]
            if not small:
                return assign, n_closed
            close(min(small, key=lambda f: (size[f], f)))
            n_closed += 1
    for f in order:
        if opened[f] and size[f] < k and n_closed != is_open.sum() - 1:
            close(f)
            n_closed += 1
    return assign, n_closed


@pytest.mark.parametrize("seed", range(12))
def test_close_small_equals_the_step_without_shortcuts(seed):
    # the compiled step reads a user's new facility from its neighbour list when the list
    # holds an open point, else searches: the same facilities with lists too short to
    # decide (0, 1 or 3 points) or long enough (32), fewest-first or in a given order
    rng = np.random.default_rng(seed)
    x = random_binary_matrix(rng, int(rng.integers(20, 120)), int(rng.integers(4, 30)),
                             float(rng.choice([0.03, 0.08, 0.2, 0.5])),
                             n_copies=int(rng.integers(0, 30)))
    points, _, weights = distinct_rows(sp.csr_array(x))
    n = points.shape[0]
    indptr = points.indptr.astype(np.int64)
    indices = points.indices.astype(np.int64)
    weights = weights.astype(np.int64)
    col_ptr, col_pts = clu._csc_points(points)
    for k in (2, 4, 9):
        if k > x.shape[0]:
            continue
        fcost, nearest, nearest_point, neighbours = clu._costs_and_nearest(
            points, weights, k, 0.5, n_neighbours=clu._N_NEIGHBOURS)
        is_open, assign, _, _ = clu._meyerson(
            rng.permutation(n).astype(np.int64), rng.random(n), indptr, indices,
            np.diff(indptr), weights, fcost, nearest, nearest_point, neighbours, col_ptr,
            col_pts, points.shape[1])
        given = rng.permutation(n).astype(np.int64)
        for order in (None, given):
            want = _close_small_brute(points.toarray(), is_open, assign, weights, k, order)
            for n_neighbours in (0, 1, 3, 32):
                lists = clu._costs_and_nearest(points, weights, 0, 0.5,
                                               n_neighbours=n_neighbours)[3]
                if lists is None:
                    lists = np.empty((n, 0), np.int64)
                got = clu._close_small(is_open, assign.copy(), indptr, indices,
                                       np.diff(indptr), weights, lists, col_ptr,
                                       points.shape[1], k,
                                       clu._FEWEST_FIRST if order is None else order)
                np.testing.assert_array_equal(got[0], want[0])
                assert got[1] == want[1]


@pytest.mark.parametrize("seed", range(4))
def test_relabel_numbers_the_values_in_increasing_order(seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, int(rng.integers(1, 500)), size=int(rng.integers(1, 300)))
    uniq, want = np.unique(values, return_inverse=True)
    labels, n_labels = clu._relabel(values)
    assert labels.dtype == np.int64 and n_labels == uniq.size
    np.testing.assert_array_equal(labels, want)


def test_meyerson_opening_rule():
    # two far-apart groups of exact copies: a facility with >= k copies costs nothing, so
    # each group's first point opens; a point at distance 0 never opens
    x = np.array([[1, 1, 0, 0]] * 4 + [[0, 0, 1, 1]] * 4)
    c = smooth_clusters(x, k=4, rng=np.random.default_rng(0))
    assert c.n_clusters == 2 and c.cost == 0.0 and c.n_opened == 2
    np.testing.assert_array_equal(np.bincount(c.labels), [4, 4])



def test_more_orders_never_cost_more():
    x = random_binary_matrix(np.random.default_rng(1), 150, 30, 0.1)
    one = smooth_clusters(x, k=4, n_orders=1, rng=np.random.default_rng(2))
    ten = smooth_clusters(x, k=4, n_orders=10, rng=np.random.default_rng(2))
    assert ten.cost <= one.cost  # the first order is shared: the cheapest of 10 is kept



# ------------------------------------------------------------------------ LSH heuristic
def test_minhash_is_the_minimum_permuted_column():
    rng = np.random.default_rng(0)
    x = sp.csr_array(random_binary_matrix(rng, 30, 12, 0.2))
    sig = minhash_signatures(x, 4, np.random.default_rng(9))
    perm_rng = np.random.default_rng(9)
    perms = [perm_rng.permutation(12) for _ in range(4)]
    for r in range(30):
        cols = x.indices[x.indptr[r] : x.indptr[r + 1]]
        for h in range(4):
            assert sig[r, h] == (perms[h][cols].min() if cols.size else 12)



def test_lsh_chunks_partition_the_rows_in_signature_order():
    rng = np.random.default_rng(1)
    x = sp.csr_array(random_binary_matrix(rng, 103, 40, 0.05))
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



# ------------------------------------------------------------------------ split_large
def test_split_large_clusters_by_hand():
    m = sp.csr_array(np.eye(11, dtype=np.int8))
    labels = np.array([0] * 7 + [1] * 4)
    out, n = clu.split_large_clusters(m, labels, 3, n_hashes=2, rng=np.random.default_rng(0))
    assert n == 3  # 7 rows -> 2 pieces (3 and 4), 4 rows stay one cluster
    assert sorted(np.bincount(out).tolist()) == [3, 4, 4]
    assert np.unique(out[7:]).size == 1
