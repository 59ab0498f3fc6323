"""Clusters of at least ``k`` rows of a sparse binary matrix by lower-bounded facility location
(epasto2022 Sec 5.3 with Appendix D's changes), and their release by a cluster rule.

The smooth k-anonymity mechanism (``mechanisms/smooth_k_anonymity.py``) releases each
cluster's strict majority, the non-smooth baseline (``baselines/suppression_k_anonymity.py``)
its intersection: both run :func:`clustered_release`. Steps, with the reading of the paper
each one implements (distinct rows, Hamming embedding, facility costs, Meyerson's passes,
closing small facilities, the LSH chunks of Appendix D and the optional ``split_large``),
and the complexity: docs/design.md, "epasto2022: smooth k-anonymity". The loops are
compiled with numba (``nogil``, so chunks run in parallel threads); facility costs and the
cheapest order are kept in the disk cache (:mod:`privpub.cache`).

References
----------
.. [EEMM22] A. Epasto, H. Esfandiari, V. Mirrokni, A. Munoz Medina. Smooth Anonymity for
   Sparse Graphs. 2022, arXiv:2207.06358. Sec 5.1-5.3, Appendix D.
.. [Mey01] A. Meyerson. Online facility location. FOCS 2001.
.. [Svi10] Z. Svitkina. Lower-bounded facility location. ACM TALG 6(4), 2010.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numba as nb
import numpy as np
import scipy.sparse as sp

from privpub.algorithms.binary import check_binary_input, cluster_release
from privpub.cache import register_clear
from privpub.errors import NotApplicableError, PrivpubError
from privpub.types import Release
from privpub.validation import check_fraction, check_k, check_positive_int, check_rng

#: ``_close_small``'s order when none is given: fewest users first (ours).
_FEWEST_FIRST = np.empty(0, np.int64)

__all__ = [
    "smooth_clusters",
    "clustered_release",
    "Clustering",
    "distinct_rows",
    "facility_costs",
    "minhash_signatures",
    "lsh_chunks",
    "split_large_clusters",
]

_BIG = 1 << 62

#: Length of every point's neighbour list (its nearest other points, :func:`_knn_sums`),
#: read by Meyerson's passes before any search (:func:`_first_open_neighbour`). On dblp,
#: 32 leaves about 1% of the final assignment's searches at k = 8 (16 left 40%); the lists
#: take 8 bytes per entry.
_N_NEIGHBOURS = 32

#: The neighbour lists of the matrix last clustered in this process, by (digest, length): a
#: worker's trials cluster one matrix after another, so its lists (75 MB on dblp) are read
#: from the disk cache once, not once per trial. Never written; emptied by
#: :func:`privpub.cache.cold`.
_LISTS: dict = {}
register_clear(_LISTS.clear)


def _check_common(matrix, k, alpha, n_orders, chunk_size, n_hashes, n_jobs):
    k = check_k(k)
    alpha = check_fraction(alpha, "alpha")
    n_orders = check_positive_int(n_orders, "n_orders")
    if chunk_size is not None:
        chunk_size = check_positive_int(chunk_size, "chunk_size")
    n_hashes = check_positive_int(n_hashes, "n_hashes")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise PrivpubError("n_jobs must be a non-zero integer (-1: all cores)")
    m = check_binary_input(matrix)
    n = int(m.shape[0])
    if k > n:
        raise NotApplicableError(
            f"k = {k} exceeds the number of rows ({n}): no {k}-anonymous release exists"
        )
    return m, k, alpha, n_orders, chunk_size, n_hashes, n_jobs


# ----------------------------------------------------------------------------- distinct rows
@nb.njit(cache=True, nogil=True)
def _group_equal(order, indptr, indices, h1, h2):
    """Walk rows sorted by (h1, h2, length); return a group id per row, never merging rows
    that differ (hash collisions start a new group)."""
    n = order.size
    group = np.empty(n, np.int64)
    n_groups = 0
    rep = -1
    for t in range(n):
        r = order[t]
        same = False
        if rep >= 0 and h1[r] == h1[rep] and h2[r] == h2[rep]:
            a0, a1 = indptr[rep], indptr[rep + 1]
            b0, b1 = indptr[r], indptr[r + 1]
            if a1 - a0 == b1 - b0:
                same = True
                for i in range(a1 - a0):
                    if indices[a0 + i] != indices[b0 + i]:
                        same = False
                        break
        if not same:
            rep = r
            n_groups += 1
        group[r] = n_groups - 1
    return group, n_groups


def distinct_rows(m: sp.csr_array):
    """Merge equal rows of a canonical CSR matrix.

    Returns
    -------
    points : scipy.sparse.csr_array
        One row per distinct row, numbered in the order of first occurrence.
    inverse : ndarray of int64
        ``inverse[r]`` = point of row ``r``.
    weights : ndarray of int64
        Number of rows per point.
    """
    n, d = m.shape
    if n == 0:
        return m, np.zeros(0, np.int64), np.zeros(0, np.int64)
    keys = np.random.default_rng(0x5EED).integers(0, 2**63 - 1, size=(2, max(d, 1)), dtype=np.int64)
    lens = np.diff(m.indptr)
    nonempty = lens > 0
    starts = m.indptr[:-1][nonempty]
    h = np.zeros((2, n), dtype=np.int64)
    with np.errstate(over="ignore"):
        for i in range(2):
            vals = keys[i][m.indices]
            if starts.size:
                h[i, nonempty] = np.add.reduceat(vals, starts)
    order = np.lexsort((lens, h[1], h[0]))
    group, n_groups = _group_equal(order, m.indptr, m.indices, h[0], h[1])
    # number the groups by first occurrence
    first = np.full(n_groups, n, dtype=np.int64)
    np.minimum.at(first, group, np.arange(n, dtype=np.int64))
    rank = np.empty(n_groups, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(n_groups)
    inverse = rank[group]
    reps = np.sort(first)
    points = m[reps]
    weights = np.bincount(inverse, minlength=n_groups).astype(np.int64)
    return sp.csr_array(points), inverse, weights


# ----------------------------------------------------------------------------- kernels
@nb.njit(cache=True, nogil=True)
def _knn_sums(indptr, indices, norms, weights, col_ptr, col_pts, by_norm, k, n_neighbours):
    """For every point v: sum of the distances to the k users nearest to v (v's own
    ``weights[v]`` copies count, at distance 0); the distance from v to the nearest other
    point and the lowest index of a point at that distance (computed where
    ``weights[v] < k``; else 1 and -1); and, with ``n_neighbours > 0``, v's
    :func:`neighbour lists <_first_open_neighbour>`: the ``n_neighbours`` other points
    first by (distance, index), as keys ``distance << 32 | index`` in ascending order,
    padded with -1 when there are fewer other points (``k = 0`` computes the lists only)."""
    n = norms.size
    out = np.zeros(n, np.float64)
    nearest = np.ones(n, np.int64)
    nearest_point = np.full(n, -1, np.int64)
    neighbours = np.full((n, n_neighbours), -1, np.int64)
    cnt = np.zeros(n, np.int64)
    touched = np.empty(n, np.int64)
    keys = np.empty(n + k + 1, np.int64)
    near_keys = np.empty(n + n_neighbours + 1, np.int64)
    for v in range(n):
        need = k - weights[v]
        if need <= 0 and n_neighbours == 0:
            continue
        nt = 0
        for p in range(indptr[v], indptr[v + 1]):
            j = indices[p]
            for q in range(col_ptr[j], col_ptr[j + 1]):
                u = col_pts[q]
                if cnt[u] == 0:
                    touched[nt] = u
                    nt += 1
                cnt[u] += 1
        nc = 0
        nl = 0
        best_d = _BIG
        best_u = -1
        for t in range(nt):
            u = touched[t]
            if u != v:
                dist = norms[v] + norms[u] - 2 * cnt[u]
                keys[nc] = (dist << 32) | weights[u]
                nc += 1
                near_keys[nl] = (dist << 32) | u
                nl += 1
                if dist < best_d or (dist == best_d and u < best_u):
                    best_d = dist
                    best_u = u
        # points sharing no item with v, by (norm, index): the first of them are the
        # nearest among them
        taken = 0
        for t in range(n):
            if taken >= need and taken >= n_neighbours:
                break
            u = by_norm[t]
            if u == v or cnt[u] > 0:
                continue
            dist = norms[v] + norms[u]
            if taken < need:
                keys[nc] = (dist << 32) | weights[u]
                nc += 1
                if dist < best_d or (dist == best_d and u < best_u):
                    best_d = dist
                    best_u = u
            if taken < n_neighbours:
                near_keys[nl] = (dist << 32) | u
                nl += 1
            taken += 1
        for t in range(nt):
            cnt[touched[t]] = 0
        if n_neighbours > 0 and nl > 0:
            width = min(n_neighbours, nl)
            listed = np.partition(near_keys[:nl], width - 1)[:width]
            listed.sort()
            neighbours[v, :width] = listed
        if need <= 0:
            continue
        if best_u >= 0:
            nearest[v] = best_d
            nearest_point[v] = best_u
        m = min(need, nc)
        if m == 0:
            continue
        part = np.partition(keys[:nc], m - 1)[:m]
        part.sort()
        left = need
        total = 0.0
        for t in range(m):
            w = part[t] & 0xFFFFFFFF
            dist = part[t] >> 32
            take = min(w, left)
            total += take * dist
            left -= take
            if left == 0:
                break
        out[v] = total
    return out, nearest, nearest_point, neighbours


@nb.njit(cache=True, nogil=True)
def _nearest(p, indptr, indices, norms, fac_ptr, fac_fill, fac_list, is_open, cnt, touched,
             minnorm_fac):
    """Nearest open facility to point p: (distance, facility); (_BIG, -1) if none.
    Facilities sharing an item with p are scored exactly through the per-item lists; any
    other open facility f is at distance |p| + |f| >= |p| + |minnorm_fac|."""
    nt = 0
    for a in range(indptr[p], indptr[p + 1]):
        j = indices[a]
        for b in range(fac_ptr[j], fac_ptr[j] + fac_fill[j]):
            f = fac_list[b]
            if not is_open[f]:
                continue
            if cnt[f] == 0:
                touched[nt] = f
                nt += 1
            cnt[f] += 1
    best_d = _BIG
    best_f = -1
    for t in range(nt):
        f = touched[t]
        dist = norms[p] + norms[f] - 2 * cnt[f]
        if dist < best_d or (dist == best_d and f < best_f):
            best_d = dist
            best_f = f
    if minnorm_fac >= 0 and cnt[minnorm_fac] == 0:
        dist = norms[p] + norms[minnorm_fac]
        if dist < best_d or (dist == best_d and minnorm_fac < best_f):
            best_d = dist
            best_f = minnorm_fac
    for t in range(nt):
        cnt[touched[t]] = 0
    return best_d, best_f


@nb.njit(cache=True, nogil=True)
def _open_facility(f, indptr, indices, fac_ptr, fac_fill, fac_list, is_open):
    is_open[f] = True
    for a in range(indptr[f], indptr[f + 1]):
        j = indices[a]
        fac_list[fac_ptr[j] + fac_fill[j]] = f
        fac_fill[j] += 1


@nb.njit(cache=True, nogil=True)
def _nearest_open(p, indptr, indices, norms, start, lists, held, fnorm, cnt, touched, least):
    """Nearest open facility to point p after Meyerson's pass: (distance, number). Open
    facilities are numbered by point index (``fnorm[c]``: the norm of number ``c``) and
    ``lists[start[j]:start[j + 1]]`` holds the numbers of the open facilities holding item
    ``j`` (``held[j]``: whether there is one, a small array that stays in cache, read first
    since few items have one when facilities are few): the counters are indexed by number,
    a compact range that stays in cache. Ties go to the lowest number (the lowest point
    index); facilities sharing no item with p are represented by ``least``, the open
    facility of least norm (distance ``|p| + |f|``)."""
    nt = 0
    for a in range(indptr[p], indptr[p + 1]):
        j = indices[a]
        if not held[j]:
            continue
        for b in range(start[j], start[j + 1]):
            c = lists[b]
            if cnt[c] == 0:
                touched[nt] = c
                nt += 1
            cnt[c] += 1
    best_d = norms[p] + fnorm[least] if cnt[least] == 0 else _BIG
    best_c = least
    for t in range(nt):
        c = touched[t]
        dist = norms[p] + fnorm[c] - 2 * cnt[c]
        if dist < best_d or (dist == best_d and c < best_c):
            best_d = dist
            best_c = c
        cnt[c] = 0
    return best_d, best_c


@nb.njit(cache=True, nogil=True)
def _first_open_neighbour(row, is_open):
    """Position in ``row`` of the first open point, or -1. ``row`` is a point's neighbour
    list (:func:`_knn_sums`): the other points first by (distance, index), as ascending keys
    ``distance << 32 | index``, -1 after the last. Every point not listed comes after the
    last listed one in that order, so the first open listed point, when there is one, is the
    nearest open facility with ties to the lowest index; when there is none and the list is
    full, every open facility is at least as far as its last point."""
    for i in range(row.size):
        key = row[i]
        if key < 0:
            break
        if is_open[key & 0xFFFFFFFF]:
            return i
    return -1


@nb.njit(cache=True, nogil=True)
def _open_distance(p, indptr, indices, norms, col_ptr, col_pts, is_open, least, cnt,
                   touched):
    """Distance from point p to its nearest open facility during Meyerson's pass, through
    the points holding each of p's items (``col_ptr``, ``col_pts``: the CSC of the points),
    the open ones counted; facilities sharing no item with p are represented by ``least``,
    the open facility of least norm (distance ``|p| + |least|``)."""
    nt = 0
    for a in range(indptr[p], indptr[p + 1]):
        j = indices[a]
        for b in range(col_ptr[j], col_ptr[j + 1]):
            u = col_pts[b]
            if is_open[u]:
                if cnt[u] == 0:
                    touched[nt] = u
                    nt += 1
                cnt[u] += 1
    best_d = norms[p] + norms[least] if cnt[least] == 0 else _BIG
    for t in range(nt):
        u = touched[t]
        best_d = min(best_d, norms[p] + norms[u] - 2 * cnt[u])
        cnt[u] = 0
    return best_d


@nb.njit(cache=True, nogil=True)
def _meyerson(order, draws, indptr, indices, norms, weights, fcost, nearest, nearest_point,
              neighbours, col_ptr, col_pts, n_cols):
    """One pass of Meyerson's online facility location over ``order``, then every point
    assigned to its nearest open facility (``nearest``, ``nearest_point``: each point's
    distance to the nearest other point and the lowest index at that distance;
    ``neighbours``: each point's neighbour list, :func:`_first_open_neighbour`). Returns
    (is_open, assign, dist, total cost)."""
    n = norms.size
    width = neighbours.shape[1]
    is_open = np.zeros(n, np.bool_)
    cnt = np.zeros(n, np.int32)
    touched = np.empty(n, np.int32)
    n_open = 0
    least = -1
    for t in range(order.size):
        p = order[t]
        # p opens iff draws * f(p) < w_p * delta, and nearest[p] <= delta <= |p| + |least|
        # (the open facility of least norm), with delta = nearest[p] when nearest_point[p]
        # is open, delta = the distance of the first open point of p's neighbour list when
        # it has one, and delta >= the distance of its last point when it has none: the
        # search for delta is skipped whenever these already decide (same decisions, hence
        # the same solution)
        if n_open == 0:
            opens = True
        else:
            threshold = draws[t] * fcost[p]
            if threshold < weights[p] * nearest[p]:
                opens = True
            elif nearest_point[p] >= 0 and is_open[nearest_point[p]]:
                opens = False
            elif threshold >= weights[p] * (norms[p] + norms[least]):
                opens = False
            else:
                row = neighbours[p]
                i = _first_open_neighbour(row, is_open)
                if i >= 0:
                    opens = threshold < weights[p] * (row[i] >> 32)
                elif width > 0 and row[width - 1] >= 0 and (
                    threshold < weights[p] * (row[width - 1] >> 32)
                ):
                    opens = True
                else:
                    delta = _open_distance(p, indptr, indices, norms, col_ptr, col_pts,
                                           is_open, least, cnt, touched)
                    opens = threshold < weights[p] * delta
        if opens:
            is_open[p] = True
            if least < 0 or norms[p] < norms[least] or (
                norms[p] == norms[least] and p < least
            ):
                least = p
            n_open += 1
    # the final assignment: an open point is its own facility (the only one at distance
    # 0), else the first open point of its neighbour list; the others search per-item
    # lists of the open facilities, numbered by point index
    assign = np.empty(n, np.int64)
    dist = np.empty(n, np.int64)
    pending = np.empty(n, np.int64)
    n_pending = 0
    for p in range(n):
        q = nearest_point[p]
        if is_open[p]:
            assign[p] = p
            dist[p] = 0
        elif q >= 0 and is_open[q]:  # no facility is nearer, none as near has a lower index
            assign[p] = q
            dist[p] = nearest[p]
        else:
            row = neighbours[p]
            i = _first_open_neighbour(row, is_open)
            if i >= 0:
                assign[p] = row[i] & 0xFFFFFFFF
                dist[p] = row[i] >> 32
            else:
                pending[n_pending] = p
                n_pending += 1
    if n_pending > 0:
        start = np.zeros(n_cols + 1, np.int64)
        for p in range(n):
            if is_open[p]:
                for a in range(indptr[p], indptr[p + 1]):
                    start[indices[a] + 1] += 1
        held = np.zeros(n_cols, np.bool_)
        for j in range(n_cols):
            held[j] = start[j + 1] > 0
            start[j + 1] += start[j]
        lists = np.empty(start[n_cols], np.int32)
        fnorm = np.empty(n_open, np.int64)
        pos = start[:n_cols].copy()
        facility = np.empty(n_open, np.int64)
        c = 0
        least = -1
        for p in range(n):
            if is_open[p]:
                facility[c] = p
                fnorm[c] = norms[p]
                if least < 0 or norms[p] < fnorm[least]:  # ties: the lowest index, met first
                    least = c
                for a in range(indptr[p], indptr[p + 1]):
                    j = indices[a]
                    lists[pos[j]] = c
                    pos[j] += 1
                c += 1
        for t in range(n_pending):
            p = pending[t]
            d, c = _nearest_open(p, indptr, indices, norms, start, lists, held, fnorm, cnt,
                                 touched, least)
            assign[p] = facility[c]
            dist[p] = d
    total = 0.0
    for p in range(n):
        if is_open[p]:
            total += fcost[p]
    for p in range(n):
        total += weights[p] * dist[p]
    return is_open, assign, dist, total


@nb.njit(cache=True, nogil=True)
def _move_users(f, ptr, by_norm, opened, head, nxt, size, assign, weights, neighbours,
                indptr, indices, norms, col_ptr, fac_fill, fac_list, cnt, touched):
    """Close facility ``f`` and move each of its users to its nearest open facility: the
    first open point of its neighbour list (:func:`_first_open_neighbour`; a user of ``f``
    is not itself open) when there is one, else the one :func:`_nearest` finds; returns
    the advanced cursor into ``by_norm`` (open facilities by (norm, index))."""
    opened[f] = False
    while ptr < by_norm.size and not opened[by_norm[ptr]]:
        ptr += 1
    minnorm = by_norm[ptr] if ptr < by_norm.size else -1
    p = head[f]
    head[f] = -1
    size[f] = 0
    while p >= 0:
        q = nxt[p]
        row = neighbours[p]
        i = _first_open_neighbour(row, opened)
        if i >= 0:
            g = row[i] & 0xFFFFFFFF
        else:
            _, g = _nearest(p, indptr, indices, norms, col_ptr, fac_fill, fac_list, opened,
                            cnt, touched, minnorm)
        assign[p] = g
        size[g] += weights[p]
        nxt[p] = head[g]
        head[g] = p
        p = q
    return ptr


@nb.njit(cache=True, nogil=True)
def _close_small(is_open, assign, indptr, indices, norms, weights, neighbours, col_ptr,
                 n_cols, k, order):
    """Close open facilities with fewer than k users and move their users to the nearest open
    facility, until every open one has >= k (``neighbours``: every point's neighbour list,
    :func:`_knn_sums`).

    ``order`` empty: fewest users first, ties lowest index (ours). Otherwise each facility
    is visited once in ``order`` (Appendix D's "arbitrary order", a reading the probes
    compare) and closed if it has fewer than k users then; open facilities only grow, so
    one pass suffices. Returns (assign, number closed)."""
    n = norms.size
    fac_fill = np.zeros(n_cols, np.int64)
    fac_list = np.empty(col_ptr[n_cols], np.int64)
    opened = np.zeros(n, np.bool_)
    for f in range(n):
        if is_open[f]:
            _open_facility(f, indptr, indices, col_ptr, fac_fill, fac_list, opened)
    # open facilities by (norm, index), for the nearest-facility fallback
    facs = np.flatnonzero(opened)
    fac_norm = norms[facs]
    by_norm = facs[np.argsort(fac_norm * (n + 1) + facs)]
    ptr = 0
    size = np.zeros(n, np.int64)
    head = np.full(n, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    for p in range(n):
        f = assign[p]
        size[f] += weights[p]
        nxt[p] = head[f]
        head[f] = p
    cnt = np.zeros(n, np.int64)
    touched = np.empty(n, np.int64)
    n_closed = 0
    if order.size > 0:
        for t in range(order.size):
            f = order[t]
            if not opened[f] or size[f] >= k or n_closed == facs.size - 1:
                continue
            ptr = _move_users(f, ptr, by_norm, opened, head, nxt, size, assign, weights,
                              neighbours, indptr, indices, norms, col_ptr, fac_fill, fac_list,
                              cnt, touched)
            n_closed += 1
        return assign, n_closed
    heap = [(np.int64(0), np.int64(0))]
    heap.pop()
    for f in facs:
        if size[f] < k:
            heapq.heappush(heap, (size[f], f))
    while len(heap) > 0:
        s, f = heapq.heappop(heap)
        if not opened[f] or size[f] >= k:
            continue
        if size[f] != s:
            heapq.heappush(heap, (size[f], f))
            continue
        ptr = _move_users(f, ptr, by_norm, opened, head, nxt, size, assign, weights,
                          neighbours, indptr, indices, norms, col_ptr, fac_fill, fac_list, cnt,
                          touched)
        n_closed += 1
    return assign, n_closed


# ----------------------------------------------------------------------------- clustering
@dataclass(frozen=True)
class Clustering:
    """A partition of the rows into clusters of at least ``k`` rows.

    Attributes
    ----------
    labels : ndarray of int64
        Cluster id of every row, ``0..n_clusters-1``.
    n_clusters : int
    cost : float
        Facility-location cost of the kept Meyerson solution (before the lower-bound step),
        summed over chunks.
    n_opened : int
        Facilities open after Meyerson (before closing), summed over chunks.
    n_closed : int
        Facilities closed by the lower-bound step, summed over chunks.
    n_chunks : int
        1 unless the LSH heuristic split the rows.
    """

    labels: np.ndarray
    n_clusters: int
    cost: float
    n_opened: int
    n_closed: int
    n_chunks: int = 1


def _csc_points(points: sp.csr_array):
    csc = sp.csc_array(points)
    csc.sort_indices()
    return csc.indptr.astype(np.int64), csc.indices.astype(np.int64)


def facility_costs(points: sp.csr_array, weights: np.ndarray, k: int, alpha: float = 0.5,
                   *, cached: bool = False):
    """Opening cost of a facility at every point (step 2): ``2 alpha / (1 - alpha)`` times
    the sum of the distances to its ``k`` nearest users (itself and its copies included).

    The costs depend on the matrix and ``k`` only, not on the random orders: with
    ``cached`` they are kept in the disk cache (:mod:`privpub.cache`, keyed by a digest of
    the points, weights, ``k``, ``alpha`` and this module's code), so the repetitions of a
    cell and the non-smooth baseline on the same matrix compute them once (on dblp they are
    a quarter of a run). LSH chunks differ per run and are not cached.
    """
    digest = _digest(points, weights) if cached else None
    return _costs_and_nearest(points, weights, k, alpha, digest=digest)[0]


def _costs_and_nearest(points, weights, k, alpha, *, digest=None, n_neighbours=0):
    """:func:`facility_costs` and, from the same neighbour search, every point's distance
    to the nearest other point and the lowest index of a point at that distance (1 and -1
    where ``weights >= k``): the distance bounds below the distance to any facility but
    the point itself, and is that distance when that neighbour is open, which lets
    Meyerson's pass skip searches. With ``n_neighbours``, a fourth array: every point's
    neighbour list of that length (:func:`_knn_sums`; it does not depend on ``k``), else
    None. With ``digest`` (:func:`_digest` of the points and weights) they are kept in the
    disk cache, the lists once per matrix."""
    if digest is not None:
        from privpub.cache import disk_cached

        both = []  # the lists computed anew come with this k's costs: one search, not two

        def lists():
            both.append(_costs_and_nearest(points, weights, k, alpha,
                                           n_neighbours=n_neighbours))
            return {"neighbours": both[0][3]}

        neighbours = None
        if n_neighbours > 0:
            neighbours = _LISTS.get((digest, int(n_neighbours)))
        if n_neighbours > 0 and neighbours is None:
            neighbours = np.asarray(disk_cached(
                "smooth_neighbours", {"points": digest, "n_neighbours": int(n_neighbours)},
                lists, module=__name__)["neighbours"], dtype=np.int64)
            _LISTS.clear()
            _LISTS[(digest, int(n_neighbours))] = neighbours
        names = ("costs", "nearest", "nearest_point")
        key = {"points": digest, "k": int(k), "alpha": float(alpha)}
        stored = disk_cached(
            "smooth_facility_costs", key,
            lambda: dict(zip(names, (both or [_costs_and_nearest(points, weights, k, alpha)])
                             [0][:3], strict=True)),
            module=__name__)
        return (np.asarray(stored["costs"], dtype=float),
                np.asarray(stored["nearest"], dtype=np.int64),
                np.asarray(stored["nearest_point"], dtype=np.int64),
                neighbours)
    indptr = points.indptr.astype(np.int64)
    indices = points.indices.astype(np.int64)
    norms = np.diff(indptr)
    col_ptr, col_pts = _csc_points(points)
    by_norm = np.lexsort((np.arange(norms.size), norms)).astype(np.int64)
    sums, nearest, nearest_point, neighbours = _knn_sums(
        indptr, indices, norms, weights.astype(np.int64), col_ptr, col_pts, by_norm, int(k),
        int(n_neighbours))
    return ((2.0 * alpha / (1.0 - alpha)) * sums, nearest, nearest_point,
            neighbours if n_neighbours > 0 else None)


def _digest(points: sp.csr_array, weights: np.ndarray) -> str:
    """blake2b digest of distinct points (shape, CSR structure) and their weights."""
    import hashlib

    h = hashlib.blake2b(digest_size=20)
    for part in (np.asarray(points.shape), points.indptr, points.indices, weights):
        h.update(np.ascontiguousarray(part, dtype=np.int64).tobytes())
    return h.hexdigest()


def _state_digest(rng) -> str:
    """sha256 of a generator's full state (every word of it, whatever the bit generator)."""
    import hashlib
    import json

    text = json.dumps(rng.bit_generator.state, sort_keys=True,
                      default=lambda a: np.asarray(a).tolist())
    return hashlib.sha256(text.encode()).hexdigest()


def _cluster_points(points, weights, k, alpha, n_orders, rng, *, cached=False):
    """Steps 2-4 on distinct points; returns (facility of every point, cost, opened, closed).

    Which of the ``n_orders`` random orders gives the cheapest solution is kept in the disk
    cache (keyed by the points, ``k``, ``alpha``, ``n_orders`` and the generator's state on
    entry; a few bytes), so the non-smooth baseline, which draws the smooth mechanism's
    random streams, redoes one Meyerson pass instead of all of them. Every order is still
    drawn, so the generator ends in the same state either way."""
    from privpub.cache import disk_cached

    n = points.shape[0]
    indptr = points.indptr.astype(np.int64)
    indices = points.indices.astype(np.int64)
    norms = np.diff(indptr)
    n_cols = int(points.shape[1])
    col_ptr, col_pts = _csc_points(points)
    weights = weights.astype(np.int64)
    digest = _digest(points, weights)
    fcost, nearest, nearest_point, neighbours = _costs_and_nearest(
        points, weights, k, alpha, digest=digest if cached else None,
        n_neighbours=_N_NEIGHBOURS)
    key = {"points": digest, "k": int(k), "alpha": float(alpha),
           "n_orders": int(n_orders), "rng": _state_digest(rng)}
    solutions = []  # the cheapest so far, or the cached cheapest order's

    def search(only=None):
        best = None
        for i in range(n_orders):
            order = rng.permutation(n).astype(np.int64)
            draws = rng.random(n)
            if only is not None and i != only:
                continue
            is_open, assign, _, total = _meyerson(order, draws, indptr, indices, norms,
                                                  weights, fcost, nearest, nearest_point,
                                                  neighbours, col_ptr, col_pts, n_cols)
            if best is None or total < best[3]:
                best = (i, is_open, assign, total)
        solutions.append(best)
        return {"best": best[0]}

    stored = disk_cached("smooth_best_order", key, search, module=__name__)
    if not solutions:  # read from the cache: replay the draws, solve the kept order
        search(only=int(stored["best"]))
    _, is_open, assign, total = solutions[0]
    n_opened = int(is_open.sum())
    assign, n_closed = _close_small(is_open, assign.copy(), indptr, indices, norms, weights,
                                    neighbours, col_ptr, n_cols, int(k), _FEWEST_FIRST)
    return assign, float(total), n_opened, int(n_closed)


def _relabel(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Labels ``0..m-1`` of non-negative integers, numbered in increasing order of value
    (``np.unique(values, return_inverse=True)``'s inverse), and ``m``, in linear time."""
    present = np.zeros(int(values.max()) + 1 if values.size else 0, dtype=bool)
    present[values] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    return rank[values], int(present.sum())


def _cluster_block(m: sp.csr_array, k, alpha, n_orders, rng, *, cached=False) -> Clustering:
    points, inverse, weights = distinct_rows(m)
    assign, cost, n_opened, n_closed = _cluster_points(points, weights, k, alpha, n_orders, rng,
                                                       cached=cached)
    labels, n_clusters = _relabel(assign[inverse])
    return Clustering(labels, n_clusters, cost, n_opened, n_closed, 1)


def minhash_signatures(m: sp.csr_array, n_hashes: int, rng) -> np.ndarray:
    """``n_hashes`` min-hashes per row: for each hash a uniformly random permutation ``pi``
    of the columns, and the row's value ``min_{j in row} pi(j)``; empty rows get
    ``n_cols`` (larger than any). Returns an ``(n_rows, n_hashes)`` int64 array."""
    rng = check_rng(rng)
    n, d = m.shape
    lens = np.diff(m.indptr)
    nonempty = lens > 0
    starts = m.indptr[:-1][nonempty]
    sig = np.full((n, n_hashes), d, dtype=np.int64)
    for h in range(n_hashes):
        perm = rng.permutation(d).astype(np.int64)
        if starts.size:
            sig[nonempty, h] = np.minimum.reduceat(perm[m.indices], starts)
    return sig


def lsh_chunks(m: sp.csr_array, *, k: int, chunk_size: int, n_hashes: int, rng) -> list:
    """Row indices of each chunk of the LSH heuristic (docs/design.md)."""
    n = int(m.shape[0])
    sig = minhash_signatures(m, n_hashes, rng)
    keys = [np.arange(n)] + [sig[:, h] for h in range(n_hashes - 1, -1, -1)]
    order = np.lexsort(keys)
    n_chunks = max(1, min(math.ceil(n / chunk_size), n // k))
    bounds = np.linspace(0, n, n_chunks + 1).round().astype(np.int64)
    return [order[bounds[i] : bounds[i + 1]] for i in range(n_chunks)]


def smooth_clusters(
    matrix,
    *,
    k: int,
    alpha: float = 0.5,
    n_orders: int = 10,
    chunk_size: int | None = None,
    n_hashes: int = 8,
    n_jobs: int = 1,
    split_large: bool = False,
    rng,
) -> Clustering:
    """Partition the rows into clusters of at least ``k`` rows (steps 0-4 of Sec 5.3 and
    Appendix D, docs/design.md; with ``chunk_size``, the LSH heuristic of Appendix D).

    Parameters
    ----------
    matrix : users x items 0/1 matrix (scipy sparse or array)
    k : int >= 2
    alpha : float in (0, 1), default 0.5
        Svitkina's parameter: facility costs are ``2 alpha / (1 - alpha)`` times the sum of
        the k nearest distances (Appendix D: 1/2 "was the best performing setting").
    n_orders : int, default 10
        Random orders for Meyerson's algorithm; the cheapest solution is kept.
    chunk_size : int or None
        None: one run on all rows. Otherwise the LSH heuristic with chunks of about this
        many rows (the paper: about 1e5).
    n_hashes : int, default 8
        Min-hashes per row for the LSH heuristic.
    n_jobs : int, default 1
        Chunks anonymised in parallel threads (-1: all cores). Results do not depend on it.
    split_large : bool, default False
        Cut every cluster of ``>= 2k`` rows into pieces of ``k`` to ``2k - 1`` rows
        (:func:`split_large_clusters`; not part of Appendix D's algorithm).
    rng : numpy.random.Generator

    Raises
    ------
    NotApplicableError
        If ``k`` exceeds the number of rows.
    PrivpubError
        On a bad parameter or an input that is not a 2-D 0/1 matrix.
    """
    m, k, alpha, n_orders, chunk_size, n_hashes, n_jobs = _check_common(
        matrix, k, alpha, n_orders, chunk_size, n_hashes, n_jobs
    )
    rng = check_rng(rng)
    return _clusters(m, k, alpha, n_orders, chunk_size, n_hashes, n_jobs, rng,
                     _check_bool(split_large, "split_large"))


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise PrivpubError(f"{name} must be true or false, got {value!r}")
    return bool(value)


def split_large_clusters(m: sp.csr_array, labels: np.ndarray, k: int, *, n_hashes: int,
                         rng) -> tuple[np.ndarray, int]:
    """Cut every cluster of ``s >= 2k`` rows into ``floor(s / k)`` pieces of ``k`` to
    ``2k - 1`` rows: rows sorted by (cluster, min-hash signature, row index), row ``i`` of a
    cluster of ``s`` rows cut into ``p`` pieces goes to piece ``floor(i p / s)``."""
    n = labels.size
    sig = minhash_signatures(m, n_hashes, rng)
    order = np.lexsort([np.arange(n)] + [sig[:, h] for h in range(n_hashes - 1, -1, -1)]
                       + [labels])
    sorted_labels = labels[order]
    sizes = np.bincount(labels)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pieces = np.maximum(1, sizes // k)
    first_piece = np.concatenate([[0], np.cumsum(pieces)[:-1]])
    pos = np.arange(n) - starts[sorted_labels]
    piece = first_piece[sorted_labels] + (pos * pieces[sorted_labels]) // sizes[sorted_labels]
    out = np.empty(n, np.int64)
    out[order] = piece
    return out, int(pieces.sum())


def _clusters(m, k, alpha, n_orders, chunk_size, n_hashes, n_jobs, rng,
              split_large=False) -> Clustering:
    c = _clusters_unsplit(m, k, alpha, n_orders, chunk_size, n_hashes, n_jobs, rng)
    if not split_large:
        return c
    labels, n_clusters = split_large_clusters(m, c.labels, k, n_hashes=n_hashes,
                                              rng=rng.spawn(1)[0])
    return Clustering(labels, n_clusters, c.cost, c.n_opened, c.n_closed, c.n_chunks)


def _clusters_unsplit(m, k, alpha, n_orders, chunk_size, n_hashes, n_jobs, rng) -> Clustering:
    n = int(m.shape[0])
    if chunk_size is None or chunk_size >= n:
        return _cluster_block(m, k, alpha, n_orders, rng, cached=True)
    hash_rng, run_rng = rng.spawn(2)
    chunks = lsh_chunks(m, k=k, chunk_size=chunk_size, n_hashes=n_hashes, rng=hash_rng)
    streams = run_rng.spawn(len(chunks))

    def work(i):
        return _cluster_block(m[chunks[i]], k, alpha, n_orders, streams[i])

    if n_jobs == 1 or len(chunks) == 1:
        parts = [work(i) for i in range(len(chunks))]
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(work)(i) for i in range(len(chunks))
        )
    labels = np.empty(n, np.int64)
    offset = 0
    for rows, part in zip(chunks, parts, strict=True):
        labels[rows] = part.labels + offset
        offset += part.n_clusters
    return Clustering(
        labels,
        offset,
        float(sum(p.cost for p in parts)),
        int(sum(p.n_opened for p in parts)),
        int(sum(p.n_closed for p in parts)),
        len(chunks),
    )


# ----------------------------------------------------------------------------- release
def clustered_release(matrix, *, k, alpha, n_orders, chunk_size, n_hashes, n_jobs,
                      split_large, rng, rule: str) -> Release:
    """The rows clustered by :func:`smooth_clusters` (same parameters), each released as its
    cluster's item set by ``rule`` (:func:`privpub.algorithms.binary.cluster_release`:
    ``"majority"``
    for smooth k-anonymity, ``"intersection"`` for k-anonymity by suppression). ``info``:
    ``n_clusters``, ``facility_cost``, ``facilities_opened``, ``facilities_closed``,
    ``n_chunks``."""
    m, k, alpha, n_orders, chunk_size, n_hashes, n_jobs = _check_common(
        matrix, k, alpha, n_orders, chunk_size, n_hashes, n_jobs
    )
    split_large = _check_bool(split_large, "split_large")
    rng = check_rng(rng)
    clustering = _clusters(m, k, alpha, n_orders, chunk_size, n_hashes, n_jobs, rng,
                           split_large)
    out = cluster_release(m, clustering.labels, clustering.n_clusters, rule=rule)
    return Release(
        out,
        {
            "n_clusters": clustering.n_clusters,
            "facility_cost": clustering.cost,
            "facilities_opened": clustering.n_opened,
            "facilities_closed": clustering.n_closed,
            "n_chunks": clustering.n_chunks,
        },
    )
