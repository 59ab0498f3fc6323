"""Balanced stub matching with swap repair: a compiled generator of graphs with a given JDM.

The generator :func:`~privpub.algorithms.dk.generate.generate_graph` uses for graphs too large for
the
networkx port (``generator="stub_matching"``, or ``"auto"`` above
:data:`~privpub.algorithms.dk.generate.NETWORKX_MAX_EDGES` edges). What it does is
:func:`stub_match`'s docstring; why a balanced matching: docs/design.md (sala2011).

References
----------
.. [SP12] I. Stanton, A. Pinar. Constructing and sampling graphs with a prescribed joint
   degree distribution. ACM JEA 17, 2012.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from privpub.algorithms.dk.edge_hash import (
    edge_key,
    multiset_add,
    multiset_alloc,
    multiset_count,
    multiset_find,
    multiset_remove,
    set_add,
    set_has,
    set_remove,
)

__all__ = ["stub_match"]


@njit(cache=True)
def _slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits, n_nodes, rng,
               simple):
    """Try one JDM-preserving swap on edge ``t``: its endpoint on ``side`` (``v``, kept
    partner ``u``) trades places with the endpoint ``y`` of a random slot of the same degree
    class, on edge ``j = (x, y)``: ``(u, v), (x, y) -> (u, y), (x, v)``. Every node keeps its
    degree and every edge its cell. Done only if both new edges are new and not loops.

    ``simple``: every edge is simple (every count is 1, which a swap keeps), so the edge
    table is read and updated as a set (:func:`~privpub.algorithms.dk.edge_hash.set_has`),
    with the same answers as the multiset's."""
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
    if k1 == k2:
        return False
    if simple:
        if set_has(keys, k1, bits) or set_has(keys, k2, bits):
            return False
        set_remove(keys, edge_key(u, v, n_nodes), bits)
        set_remove(keys, edge_key(x, y, n_nodes), bits)
        set_add(keys, k1, bits)
        set_add(keys, k2, bits)
    else:
        if (multiset_count(keys, cnts, k1, bits) > 0
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


@njit(cache=True)
def _havel_hakimi(rem, base, U, V, start, rng):
    """Havel-Hakimi on degrees ``rem`` of nodes ``base + i``; writes ``sum(rem) / 2`` edges
    from index ``start`` of ``U``/``V``.

    Nodes are kept sorted by remaining degree in buckets (the Batagelj-Zaversnik layout), so
    the construction is O(n + m); ties are broken by an initial random order. Should the
    sequence not be graphical, the stubs left over are paired as they come (possibly into
    loops or multi-edges), for the caller's repair and simplification."""
    n = rem.size
    total = 0
    top = 0
    for i in range(n):
        total += rem[i]
        if rem[i] > top:
            top = rem[i]
    n_edges = total // 2
    perm = rng.permutation(n)
    count = np.zeros(top + 1, np.int64)
    for i in range(n):
        count[rem[i]] += 1
    bin_start = np.zeros(top + 1, np.int64)  # ascending layout: bucket d from bin_start[d]
    for d in range(1, top + 1):
        bin_start[d] = bin_start[d - 1] + count[d - 1]
    order = np.empty(n, np.int64)
    pos = np.empty(n, np.int64)
    fill = bin_start.copy()
    for q in range(n):
        i = perm[q]
        order[fill[rem[i]]] = i
        pos[i] = fill[rem[i]]
        fill[rem[i]] += 1
    left = np.zeros(n, np.int64)  # stubs that found no partner
    written = start
    hi = n - 1  # the active nodes are order[0..hi]
    while hi >= 0 and rem[order[hi]] > 0:
        u = order[hi]
        r = rem[u]
        hi -= 1  # u (largest remaining degree, last in the layout) leaves
        rem[u] = 0
        take = min(r, hi + 1)
        partners = order[hi + 1 - take:hi + 1].copy()
        placed = 0
        for j in range(take):
            v = partners[j]
            d = rem[v]
            if d == 0:
                continue
            U[written] = base + u
            V[written] = base + v
            written += 1
            placed += 1
            w = order[bin_start[d]]  # decrement v: swap it to the front of its bucket
            pv, pw = pos[v], pos[w]
            order[pv] = w
            order[pw] = v
            pos[v] = pw
            pos[w] = pv
            bin_start[d] += 1
            rem[v] = d - 1
        left[u] += r - placed
    for i in range(n):
        left[i] += rem[i]
    i = 0
    while written < start + n_edges:
        while left[i] == 0:
            i += 1
        left[i] -= 1
        j = i
        while left[j] == 0:
            j += 1
        left[j] -= 1
        U[written] = base + i
        V[written] = base + j
        written += 1


def stub_match(low, high, e, n_of, rng, repair_passes, tries, mixing):
    """A random graph with the realizable JDM ``(low, high, e)``: balanced stub matching,
    swap repair, mixing swaps, then simplification.

    Nodes of degree ``k`` (``n_of[k]`` of them, numbered class by class) get their stubs
    toward each cell ``(k, l)`` round-robin ("balanced", Stanton & Pinar 2012: each node
    holds the floor or ceiling of its share of every cell, which is enough for a simple
    realization to exist). Each cell is then built simple: an off-diagonal cell pairs each
    node's stubs with consecutive, hence distinct, nodes of the other class; a diagonal cell
    is a near-regular degree sequence, built by Havel-Hakimi. JDM-preserving double-edge
    swaps (an endpoint trades places with an endpoint of the same degree: every degree and
    every edge's cell stay the same) repair any self-loop or multi-edge (``repair_passes``
    passes of up to ``tries`` attempts per bad edge), then randomise the graph, ``mixing``
    attempts per edge. What is still bad is dropped (the simplification).

    Returns
    -------
    (edges, n_nodes, dropped, accepted)
        The edges ``(E, 2)``, the node count, the edges dropped by the simplification and
        the accepted mixing swaps.

    Notes
    -----
    The arrays the swaps read at random (the edges, the slots, the edge multiset) are
    allocated here by numpy, for its transparent huge pages
    (:func:`~privpub.algorithms.dk.edge_hash.multiset_alloc`); the compiled
    :func:`_stub_match` does the rest.
    """
    n_edges = int(np.sum(e))
    keys, cnts, bits = multiset_alloc(n_edges)
    return _stub_match(low, high, e, n_of, rng, repair_passes, tries, mixing,
                       np.empty((n_edges, 2), np.int64), np.empty(2 * n_edges, np.int64),
                       keys, cnts, bits)


@njit(cache=True)
def _stub_match(low, high, e, n_of, rng, repair_passes, tries, mixing, UV, slots, keys, cnts,
                bits):
    """:func:`stub_match`'s work, in the empty ``UV`` ``(E, 2)``, ``slots`` ``(2 E,)`` and
    edge multiset ``(keys, cnts, bits)`` it is given."""
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
    # one row per edge: both endpoints of an edge share a cache line (the swaps read them
    # at random); U and V are its columns
    U = UV[:, 0]
    V = UV[:, 1]
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
    # slots[...] = 2 * edge + side (0: U, 1: V)
    for t in range(n_edges):
        cu = deg_of[U[t]]
        slots[fill[cu]] = 2 * t
        fill[cu] += 1
        cv = deg_of[V[t]]
        slots[fill[cv]] = 2 * t + 1
        fill[cv] += 1
    # repair: a bad edge swaps one endpoint with a same-degree endpoint of any other edge.
    # A swap never makes an edge bad (its two new edges are new and not loops), so after a
    # pass that fixed every bad edge the graph is simple, and stays so.
    simple = False
    for _pass in range(repair_passes):
        bad = 0
        for t in range(n_edges):
            key = edge_key(U[t], V[t], n_nodes)
            if U[t] != V[t] and multiset_count(keys, cnts, key, bits) == 1:
                continue
            done = False
            for _try in range(tries):
                side = rng.integers(0, 2)
                if _slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits,
                              n_nodes, rng, False):
                    done = True
                    break
            if not done:
                bad += 1
        simple = bad == 0
        if simple:
            break
    # mixing: the same JDM-preserving swap between random simple edges (once the graph is
    # simple, every edge is, and the multiset is read as a set)
    attempts = mixing * n_edges
    accepted = 0
    if n_edges > 1:
        for _a in range(attempts):
            t = rng.integers(0, n_edges)
            if not simple and (U[t] == V[t] or multiset_count(
                    keys, cnts, edge_key(U[t], V[t], n_nodes), bits) != 1):
                continue
            side = rng.integers(0, 2)
            if _slot_swap(U, V, t, side, slots, class_ptr, deg_of, keys, cnts, bits, n_nodes,
                          rng, simple):
                accepted += 1
    if simple:
        return UV, n_nodes, 0, accepted
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
    return UV[keep], n_nodes, dropped, accepted

