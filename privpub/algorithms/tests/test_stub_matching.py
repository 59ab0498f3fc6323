"""Stub matching (privpub.algorithms.dk.stub_matching) against the kernel it replaced.

``stub_match`` reads the edge multiset as a set once the repair has made every edge simple,
keeps both endpoints of an edge in one row and gets its large arrays from numpy. None of
this may change a graph: the old kernel, kept below verbatim (docstrings dropped), must give
the same edges in the same order, the same counts and leave the generator in the same state,
on repaired noisy series and on series whose repair fails (few tries: the multiset path and
the simplification run).
"""

import numpy as np
import pytest
from numba import njit

from privpub.algorithms.dk import joint_degree, node_counts, repair_joint_degree
from privpub.algorithms.dk.edge_hash import (
    edge_key,
    multiset_add,
    multiset_count,
    multiset_find,
    multiset_new,
    multiset_remove,
)
from privpub.algorithms.dk.stub_matching import _havel_hakimi, stub_match
from privpub.data import load_dataset
from privpub.types import JointDegree


@njit
def _old_slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits, n_nodes, rng):
    if side == 0:
        v, u = U[t], V[t]
    else:
        u, v = U[t], V[t]
    c = deg_of[v]
    lo, hi = class_ptr[c], class_ptr[c + 1]
    if hi - lo < 2:
        return False
    s = slots[lo + rng.integers(0, hi - lo)]
    j = s >> 1
    if j == t:
        return False
    if s & 1:
        y, x = V[j], U[j]
    else:
        y, x = U[j], V[j]
    if u == y or x == v or y == v:
        return False
    k1 = edge_key(u, y, n_nodes)
    k2 = edge_key(x, v, n_nodes)
    if (k1 == k2 or multiset_count(keys, cnts, k1, bits) > 0
            or multiset_count(keys, cnts, k2, bits) > 0):
        return False
    multiset_remove(keys, cnts, edge_key(u, v, n_nodes), bits)
    multiset_remove(keys, cnts, edge_key(x, y, n_nodes), bits)
    multiset_add(keys, cnts, k1, bits)
    multiset_add(keys, cnts, k2, bits)
    if side == 0:
        U[t] = y
    else:
        V[t] = y
    if s & 1:
        V[j] = v
    else:
        U[j] = v
    return True


@njit
def _old_stub_match(low, high, e, n_of, rng, repair_passes, tries, mixing):
    top = n_of.size - 1
    offset = np.zeros(top + 2, np.int64)
    for k in range(1, top + 1):
        offset[k + 1] = offset[k] + n_of[k]
    n_nodes = offset[top + 1]
    m = e.size
    eoff = np.zeros(m + 1, np.int64)
    for c in range(m):
        eoff[c + 1] = eoff[c] + e[c]
    n_edges = eoff[m]
    U = np.empty(n_edges, np.int64)
    V = np.empty(n_edges, np.int64)
    # stub demands per class, dealt round-robin over the class's nodes, cells in random order
    ptr = np.zeros(top + 1, np.int64)
    for k in range(1, top + 1):
        if n_of[k] > 0:
            ptr[k] = rng.integers(0, n_of[k])
    corder = rng.permutation(m)
    for q in range(m):
        c = corder[q]
        lo, hi, cnt = low[c], high[c], e[c]
        if cnt == 0:
            continue
        if lo == hi:
            # a near-regular degree sequence inside the class: Havel-Hakimi builds a simple
            # graph with it (it is graphical: even sum, max <= n - 1)
            nk = n_of[lo]
            rem = np.zeros(nk, np.int64)
            for _ in range(2 * cnt):
                rem[ptr[lo] % nk] += 1
                ptr[lo] += 1
            _havel_hakimi(rem, offset[lo], U, V, eoff[c], rng)
        else:
            # left stubs grouped by node, right stubs in cyclic dealing order: a node with
            # a <= ceil(e / n_lo) <= n_hi stubs meets a consecutive, distinct right nodes,
            # so the cell starts simple (randomness comes from the mixing swaps)
            nl, nh = n_of[lo], n_of[hi]
            left = np.empty(cnt, np.int64)
            for t in range(cnt):
                left[t] = offset[lo] + (ptr[lo] % nl)
                ptr[lo] += 1
                V[eoff[c] + t] = offset[hi] + (ptr[hi] % nh)
                ptr[hi] += 1
            left.sort()
            for t in range(cnt):
                U[eoff[c] + t] = left[t]
    # hash multiset of edges
    keys, cnts, bits = multiset_new(n_edges)
    for t in range(n_edges):
        multiset_add(keys, cnts, edge_key(U[t], V[t], n_nodes), bits)
    # slots (edge, side) grouped by the degree class of their endpoint; a swap moves nodes
    # between slots of one class only, so this grouping never changes
    deg_of = np.empty(n_nodes, np.int64)
    for k in range(1, top + 1):
        for v in range(offset[k], offset[k + 1]):
            deg_of[v] = k
    class_ptr = np.zeros(top + 2, np.int64)
    for t in range(n_edges):
        class_ptr[deg_of[U[t]] + 1] += 1
        class_ptr[deg_of[V[t]] + 1] += 1
    for k in range(top + 1):
        class_ptr[k + 1] += class_ptr[k]
    fill = class_ptr[:-1].copy()
    slots = np.empty(2 * n_edges, np.int64)  # 2 * edge + side (0: U, 1: V)
    for t in range(n_edges):
        cu = deg_of[U[t]]
        slots[fill[cu]] = 2 * t
        fill[cu] += 1
        cv = deg_of[V[t]]
        slots[fill[cv]] = 2 * t + 1
        fill[cv] += 1
    # repair: a bad edge swaps one endpoint with a same-degree endpoint of any other edge
    for _pass in range(repair_passes):
        bad = 0
        for t in range(n_edges):
            key = edge_key(U[t], V[t], n_nodes)
            if U[t] != V[t] and multiset_count(keys, cnts, key, bits) == 1:
                continue
            done = False
            for _try in range(tries):
                side = rng.integers(0, 2)
                if _old_slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits,
                              n_nodes, rng):
                    done = True
                    break
            if not done:
                bad += 1
        if bad == 0:
            break
    # mixing: the same JDM-preserving swap between random simple edges
    attempts = mixing * n_edges
    accepted = 0
    if n_edges > 1:
        for _a in range(attempts):
            t = rng.integers(0, n_edges)
            if U[t] == V[t] or multiset_count(keys, cnts, edge_key(U[t], V[t], n_nodes), bits) != 1:
                continue
            side = rng.integers(0, 2)
            if _old_slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits, n_nodes,
                          rng):
                accepted += 1
    # simplification: drop loops and extra copies
    keep = np.ones(n_edges, np.bool_)
    dropped = 0
    for t in range(n_edges):
        u, v = U[t], V[t]
        if u == v:
            keep[t] = False
            dropped += 1
            continue
        k = edge_key(u, v, n_nodes)
        i = multiset_find(keys, k, bits)
        if cnts[i] > 1:
            cnts[i] -= 1
            keep[t] = False
            dropped += 1
    return U[keep], V[keep], n_nodes, dropped, accepted


def _targets():
    """``(low, high, e, n_of)`` of repaired noisy dK-2 series of small graphs (a sparse one
    and dense-hub ones), and of two unrealizable series (three edges between two nodes of
    degree 3; five nodes of degree 4 with a class too small for its cells): their repair
    fails, so the multiset path and the simplification run."""
    rng = np.random.default_rng(7)
    series = []
    graphs = [load_dataset("chung_lu", n=600, rng=np.random.default_rng(0)),
              load_dataset("les_miserables"), load_dataset("karate")]
    for g in graphs:
        jd = joint_degree(g)
        series.append(jd)
        for eps in (2.0, 20.0):
            noisy = JointDegree(jd.low, jd.high, jd.counts + rng.laplace(0, 1, jd.size)
                                * (4 * jd.high + 1) / eps)
            series.append(repair_joint_degree(noisy)[0])
    out = [(jd.low, jd.high, np.rint(jd.counts).astype(np.int64),
            np.rint(node_counts(jd)).astype(np.int64)) for jd in series]
    out.append((np.array([1, 3]), np.array([1, 3]), np.array([5, 3]),
                np.array([0, 10, 0, 2])))
    out.append((np.array([1, 1, 4]), np.array([1, 4, 4]), np.array([4, 4, 8]),
                np.array([0, 12, 0, 0, 5])))
    return out


@pytest.mark.parametrize("repair_passes,tries,mixing", [(20, 50, 5), (20, 50, 0), (1, 1, 2),
                                                       (0, 50, 3), (2, 2, 1)])
def test_stub_match_equals_the_old_kernel(repair_passes, tries, mixing):
    simplified = 0
    for i, (low, high, e, n_of) in enumerate(_targets()):
        for seed in range(3):
            new_rng = np.random.default_rng([i, seed])
            old_rng = np.random.default_rng([i, seed])
            edges, n, dropped, accepted = stub_match(low, high, e, n_of, new_rng,
                                                     repair_passes, tries, mixing)
            u, v, n0, dropped0, accepted0 = _old_stub_match(low, high, e, n_of, old_rng,
                                                           repair_passes, tries, mixing)
            assert edges.dtype == np.int64 and edges.flags.c_contiguous
            assert np.array_equal(edges, np.column_stack([u, v]))
            assert (n, dropped, accepted) == (n0, dropped0, accepted0)
            assert new_rng.integers(2**62) == old_rng.integers(2**62)
            simplified += dropped > 0
    assert simplified > 0  # the multiset path and the simplification were exercised
