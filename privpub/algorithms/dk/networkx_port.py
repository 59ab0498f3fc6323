"""A compiled, bit-exact port of ``networkx.joint_degree_graph`` (networkx 3.x).

:func:`joint_degree_graph` returns exactly networkx's graph for the same integer seed, edge
order included (``networkx/generators/joint_degree_seq.py``; the algorithm of Gjoka et al.
2015, [GTM15]); :func:`~privpub.algorithms.dk.generate.generate_graph` runs it for
``generator="networkx"``. networkx spends its time on Python objects: mostly rebuilding the
unsaturated-node sets for every cell and ``next(iter(unsat))`` on sets emptied by removals
(CPython rescans the dummy slots from the start each time). Three pieces of CPython state
decide the result and are reproduced:

- ``random.Random(seed)``: MT19937 (``Modules/_randommodule.c``, ``genrand_uint32``)
  started from ``getstate()``; ``randrange(n)`` is ``_randbelow_with_getrandbits``.
- the iteration order of the unsaturated-node sets ``{v for v in nodes if r[v] > 0}``
  (``Objects/setobject.c``: ``set_add_entry``, ``set_table_resize``,
  ``set_insert_clean``). networkx only removes from these sets after building them, and
  a removal leaves a dummy in place without resizing, so ``next(iter(s))`` is the first
  element of the build-time slot order still present; a union-find over the positions
  finds it in near-constant time.
- the insertion order of the adjacency dicts (``Graph.add_edge`` appends, ``remove_edge``
  deletes, a re-added edge goes to the end): per-node doubly linked lists of half-edges,
  with edge membership in the hash multiset of :mod:`privpub.algorithms.dk.edge_hash`.

Why a port rather than networkx itself (speed; the same graphs as before): docs/design.md
(sala2011).

References
----------
.. [GTM15] M. Gjoka, B. Tillman, A. Markopoulou. Construction of simple graphs with a
   target joint degree matrix and beyond. INFOCOM 2015 (networkx.joint_degree_graph).
"""

from __future__ import annotations

import random

import numpy as np
from numba import njit

from privpub.algorithms.dk.edge_hash import (
    edge_key,
    multiset_add,
    multiset_count,
    multiset_new,
    multiset_remove,
)
from privpub.errors import PrivpubError

__all__ = ["joint_degree_graph"]


_MT_N = 624
_MT_M = 397
_PYSET_MINSIZE = 8  # PySet_MINSIZE
_PYSET_LINEAR_PROBES = 9  # LINEAR_PROBES
_PYSET_PERTURB_SHIFT = 5  # PERTURB_SHIFT


def _mt_state(seed: int) -> np.ndarray:
    """MT19937 state of ``random.Random(seed)``.

    Parameters
    ----------
    seed : int

    Returns
    -------
    numpy.ndarray
        625 int64: the 624 state words, then the position of the next word (624 for a fresh
        seed: the first draw twists).
    """
    _version, internal, _gauss = random.Random(seed).getstate()
    return np.array(internal, dtype=np.int64)


@njit(cache=True)
def _mt_next(st):
    """Next 32-bit output of CPython's MT19937 (``genrand_uint32``), advancing ``st``.

    Parameters
    ----------
    st : numpy.ndarray
        State from :func:`_mt_state` (int64 words below ``2**32``), updated in place.

    Returns
    -------
    int
        ``random.Random.getrandbits(32)`` of the same state.
    """
    if st[_MT_N] >= _MT_N:
        for kk in range(_MT_N):  # the three loops of the twist, with indices mod N
            y = (st[kk] & 0x80000000) | (st[(kk + 1) % _MT_N] & 0x7FFFFFFF)
            st[kk] = st[(kk + _MT_M) % _MT_N] ^ (y >> 1) ^ (0x9908B0DF * (y & 1))
        st[_MT_N] = 0
    y = st[st[_MT_N]]
    st[_MT_N] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y


@njit(cache=True)
def _randbelow(st, n):
    """``random.Random.randrange(n)`` for ``0 < n < 2**32`` (``_randbelow_with_getrandbits``:
    ``k = n.bit_length()``, then ``getrandbits(k)``, one word shifted right by ``32 - k``,
    until it is below ``n``)."""
    k = 0
    m = n
    while m:
        k += 1
        m >>= 1
    r = _mt_next(st) >> (32 - k)
    while r >= n:
        r = _mt_next(st) >> (32 - k)
    return r


@njit(cache=True, inline="always")
def _pyset_free_slot(table, mask, key):
    """Slot CPython's set gives a new int ``key`` (``hash(key) == key``) in a table without
    dummies: the first empty slot of its probe sequence, ``LINEAR_PROBES`` neighbours at a
    time, then ``i = (5 i + 1 + perturb) & mask`` (``set_add_entry``, ``set_insert_clean``)."""
    perturb = key
    i = key & mask
    while True:
        probes = _PYSET_LINEAR_PROBES if i + _PYSET_LINEAR_PROBES <= mask else 0
        for j in range(i, i + probes + 1):
            if table[j] < 0:
                return j
        perturb >>= _PYSET_PERTURB_SHIFT
        i = (i * 5 + 1 + perturb) & mask


@njit(cache=True, inline="always")
def _pyset_resized(used):
    """Table size after the resize that ``used`` elements (no dummies) trigger:
    ``set_table_resize(used > 50000 ? 2 used : 4 used)``, the smallest power of two above."""
    minused = used * 2 if used > 50000 else used * 4
    size = _PYSET_MINSIZE
    while size <= minused:
        size <<= 1
    return size


@njit(cache=True)
def _pyset_order(elems, out, tabs):
    """Iteration order of the CPython 3.11 set built by adding ``elems`` one by one.

    Parameters
    ----------
    elems : numpy.ndarray
        Distinct non-negative ints, in the order a set display or comprehension adds them.
    out : numpy.ndarray
        Receives ``list(the set)`` in its first ``elems.size`` entries.
    tabs : numpy.ndarray
        Scratch, shape ``(2, T)`` with ``T >= 8 * elems.size + 8`` (the largest table).

    Returns
    -------
    int
        ``elems.size``.

    Notes
    -----
    ``set_add_entry`` resizes once ``fill * 5 >= mask * 3``, to the smallest power of two
    above ``4 used`` (``2 used`` past 50000 elements), re-inserting the old table's slots in
    order with ``set_insert_clean``; iteration walks the slots in order. Shortcut: when the
    elements ascend and span at most the final table size, every element ends in its home
    slot ``x & mask`` (no two homes coincide, so no element is ever displaced), and the
    order is the ascending list rotated to start at the first home.
    """
    m = elems.size
    mask = _PYSET_MINSIZE - 1
    while True:  # the final table size depends on m alone (no dummies: fill == used)
        fill = (mask * 3 + 4) // 5  # the first fill that triggers a resize
        if fill > m:
            break
        mask = _pyset_resized(fill) - 1
    fast = m == 0 or elems[m - 1] - elems[0] <= mask
    for j in range(1, m):
        if not fast:
            break
        fast = elems[j] > elems[j - 1]
    if fast:
        if m == 0:
            return 0
        wrap = (elems[0] | mask) + 1  # elements from here have homes below elems[0]'s
        j = 0
        while j < m and elems[j] < wrap:
            j += 1
        out[: m - j] = elems[j:]
        out[m - j : m] = elems[:j]
        return m
    cur = 0
    mask = _PYSET_MINSIZE - 1
    tabs[cur, : mask + 1] = -1
    fill = 0
    for x in elems:
        table = tabs[cur]
        table[_pyset_free_slot(table, mask, x)] = x
        fill += 1
        if fill * 5 >= mask * 3:
            size = _pyset_resized(fill)
            new = tabs[1 - cur]
            new[:size] = -1
            for j in range(mask + 1):
                if table[j] >= 0:
                    new[_pyset_free_slot(new, size - 1, table[j])] = table[j]
            cur = 1 - cur
            mask = size - 1
    table = tabs[cur]
    m = 0
    for j in range(mask + 1):
        if table[j] >= 0:
            out[m] = table[j]
            m += 1
    return m


@njit(cache=True)
def _unsat_build(start, size, residual, elems, order, parent, pos, tabs):
    """networkx's ``{v for v in range(start, start + size) if residual[v] > 0}``.

    The set is ``order[:m]`` (its iteration order, ``order[m] = -1``) with a union-find
    ``parent`` over the positions (``find(p)``: first present position ``>= p``; ``m`` when
    none is left); ``pos[v]`` is ``v``'s position, -1 for the class's nodes outside the set.
    ``elems`` is scratch of at least ``size`` entries.
    """
    m = 0
    for v in range(start, start + size):
        pos[v] = -1
        if residual[v] > 0:
            elems[m] = v
            m += 1
    _pyset_order(elems[:m], order, tabs)
    for p in range(m):
        pos[order[p]] = p
        parent[p] = p
    order[m] = -1
    parent[m] = m


@njit(cache=True, inline="always")
def _unsat_find(parent, p):
    """First position ``>= p`` still in the set (path halving)."""
    while parent[p] != p:
        parent[p] = parent[parent[p]]
        p = parent[p]
    return p


@njit(cache=True, inline="always")
def _unsat_discard(parent, pos, v):
    """``set.discard(v)``: the slot keeps its place (a dummy), the iteration skips it."""
    p = pos[v]
    if p >= 0 and parent[p] == p:
        parent[p] = p + 1


@njit(cache=True, inline="always")
def _adj_append(u, x, h, tgt, nxt, prv, head, tail):
    """Append half-edge ``h`` (``u -> x``) at the end of ``u``'s adjacency (``adj[u][x] = d``)."""
    tgt[h] = x
    nxt[h] = -1
    prv[h] = tail[u]
    if tail[u] >= 0:
        nxt[tail[u]] = h
    else:
        head[u] = h
    tail[u] = h


@njit(cache=True, inline="always")
def _adj_unlink(u, h, nxt, prv, head, tail):
    """Remove half-edge ``h`` from ``u``'s adjacency (``del adj[u][x]``)."""
    if prv[h] >= 0:
        nxt[prv[h]] = nxt[h]
    else:
        head[u] = nxt[h]
    if nxt[h] >= 0:
        prv[nxt[h]] = prv[h]
    else:
        tail[u] = prv[h]


@njit(cache=True)
def _jdg_add_edge(u, v, tgt, nxt, prv, head, tail, free, ctr, keys, cnts, bits, n_nodes):
    """``G.add_edge(u, v)`` for an absent edge: half-edges ``2 p`` (in ``u``'s list) and
    ``2 p + 1`` (in ``v``'s list) of a free pair ``p``."""
    if ctr[0] > 0:
        ctr[0] -= 1
        p = free[ctr[0]]
    else:
        p = ctr[1]
        ctr[1] += 1
    _adj_append(u, v, 2 * p, tgt, nxt, prv, head, tail)
    _adj_append(v, u, 2 * p + 1, tgt, nxt, prv, head, tail)
    multiset_add(keys, cnts, edge_key(u, v, n_nodes), bits)


@njit(cache=True)
def _jdg_switch(w, order, parent, pos, avoid, residual, tgt, nxt, prv, head, tail, free, ctr,
                keys, cnts, bits, n_nodes):
    """networkx's ``_neighbor_switch(G, w, unsat, h_node_residual, avoid_node_id)``.

    ``w_prime`` is the set's first element (not ``avoid`` when ``avoid >= 0`` has one free
    stub left); the first neighbour of ``w`` in adjacency order that is neither ``w_prime``
    nor adjacent to it moves from ``w`` to ``w_prime``.
    """
    p = _unsat_find(parent, 0)
    if avoid >= 0 and residual[avoid] <= 1 and order[p] == avoid:
        p = _unsat_find(parent, p + 1)
    wp = order[p]
    if wp < 0:
        raise ValueError("joint_degree_graph: no unsaturated node for a neighbour switch")
    h = head[w]
    while h >= 0:
        x = tgt[h]
        if x != wp and multiset_count(keys, cnts, edge_key(wp, x, n_nodes), bits) == 0:
            break
        h = nxt[h]
    if h < 0:
        raise ValueError("joint_degree_graph: no neighbour to switch")
    x = tgt[h]
    _adj_unlink(w, h, nxt, prv, head, tail)
    _adj_unlink(x, h ^ 1, nxt, prv, head, tail)
    multiset_remove(keys, cnts, edge_key(w, x, n_nodes), bits)
    free[ctr[0]] = h >> 1
    ctr[0] += 1
    _jdg_add_edge(wp, x, tgt, nxt, prv, head, tail, free, ctr, keys, cnts, bits, n_nodes)
    residual[w] += 1
    residual[wp] -= 1
    if residual[wp] == 0:
        parent[p] = p + 1  # unsat.remove(w_prime)


@njit(cache=True)
def _jdg_core(cls_start, cls_size, cls_deg, cell_k, cell_l, cell_n, st):
    """The construction loop of ``networkx.joint_degree_graph`` (see :func:`joint_degree_graph`).

    Returns
    -------
    (numpy.ndarray, int, int)
        ``list(G.edges())`` as an ``(E, 2)`` array, the number of nodes, and the number of
        neighbour switches made.
    """
    n_nodes = 0
    big = 1
    for c in range(cls_size.size):
        n_nodes += cls_size[c]
        big = max(big, cls_size[c])
    n_edges = 0
    for c in range(cell_n.size):
        n_edges += cell_n[c]
    residual = np.empty(n_nodes, np.int64)
    for c in range(cls_size.size):
        residual[cls_start[c] : cls_start[c] + cls_size[c]] = cls_deg[c]
    # adjacency (never more than n_edges edges at once) and edge membership
    cap = max(n_edges, 1)
    tgt = np.empty(2 * cap, np.int64)
    nxt = np.empty(2 * cap, np.int64)
    prv = np.empty(2 * cap, np.int64)
    head = np.full(n_nodes, -1, np.int64)
    tail = np.full(n_nodes, -1, np.int64)
    free = np.empty(cap, np.int64)
    ctr = np.zeros(2, np.int64)  # free pairs, pairs ever used
    keys, cnts, bits = multiset_new(n_edges)
    # the unsaturated sets k_unsat (a) and l_unsat (b)
    pos = np.full(n_nodes, -1, np.int64)
    elems = np.empty(big, np.int64)
    tabs = np.empty((2, 8 * big + 8), np.int64)
    order_a = np.empty(big + 1, np.int64)
    parent_a = np.empty(big + 1, np.int64)
    order_b = np.empty(big + 1, np.int64)
    parent_b = np.empty(big + 1, np.int64)
    switches = 0
    for c in range(cell_n.size):
        ck, cl = cell_k[c], cell_l[c]
        ks, kn, ls, ln = cls_start[ck], cls_size[ck], cls_start[cl], cls_size[cl]
        _unsat_build(ks, kn, residual, elems, order_a, parent_a, pos, tabs)
        if ck != cl:
            _unsat_build(ls, ln, residual, elems, order_b, parent_b, pos, tabs)
            order_l, parent_l = order_b, parent_b
        else:
            order_l, parent_l = order_a, parent_a  # l_unsat is k_unsat
        n_add = cell_n[c]
        while n_add > 0:
            v = ks + _randbelow(st, kn)
            w = ls + _randbelow(st, ln)
            if v == w or multiset_count(keys, cnts, edge_key(v, w, n_nodes), bits) != 0:
                continue
            if residual[v] == 0:
                _jdg_switch(v, order_a, parent_a, pos, -1, residual, tgt, nxt, prv, head, tail,
                            free, ctr, keys, cnts, bits, n_nodes)
                switches += 1
            if residual[w] == 0:
                _jdg_switch(w, order_l, parent_l, pos, -1 if ck != cl else v, residual, tgt,
                            nxt, prv, head, tail, free, ctr, keys, cnts, bits, n_nodes)
                switches += 1
            _jdg_add_edge(v, w, tgt, nxt, prv, head, tail, free, ctr, keys, cnts, bits, n_nodes)
            residual[v] -= 1
            residual[w] -= 1
            n_add -= 1
            if residual[v] == 0:
                _unsat_discard(parent_a, pos, v)
            if residual[w] == 0:
                _unsat_discard(parent_l, pos, w)
    # list(G.edges()): nodes in order, each with its later neighbours in adjacency order
    edges = np.empty((n_edges, 2), np.int64)
    t = 0
    for u in range(n_nodes):
        h = head[u]
        while h >= 0:
            if tgt[h] > u:
                edges[t, 0] = u
                edges[t, 1] = tgt[h]
                t += 1
            h = nxt[h]
    return edges[:t], n_nodes, switches


def joint_degree_graph(joint_degrees: dict, seed: int) -> tuple[np.ndarray, int, int]:
    """``networkx.joint_degree_graph(joint_degrees, seed=seed)``, compiled and bit-exact.

    Parameters
    ----------
    joint_degrees : dict
        A valid networkx joint-degree dictionary
        (:func:`~privpub.algorithms.dk.series.to_networkx_dict` of a JDM that passes
        :func:`~privpub.algorithms.dk.series.is_realizable`); its iteration order matters, as in
        networkx.
    seed : int
        The integer seed networkx would get (``random.Random(seed)``).

    Returns
    -------
    edges : numpy.ndarray
        ``(E, 2)`` int64, ``list(G.edges())`` of networkx's graph, in the same order.
    n_nodes : int
        ``G.number_of_nodes()``.
    switches : int
        Neighbour switches made (Gjoka et al. 2015), for tests.

    Notes
    -----
    Node ids go to degree classes in the order of the dictionary's keys and the cells are
    visited in its order, exactly as in networkx; the tests compare the full edge lists with
    networkx's on many inputs and seeds. Exactness rests on CPython's ``random`` and ``set``
    internals (as of 3.11, the project's interpreter) and on networkx 3.x's algorithm; the
    same tests would catch a change in either.
    """
    degree_count = {k: sum(row.values()) // k for k, row in joint_degrees.items() if k > 0}
    cls = {}
    start, size, deg = [], [], []
    node = 0
    for k, count in degree_count.items():
        cls[k] = len(start)
        start.append(node)
        size.append(count)
        deg.append(k)
        node += count
    if max(size, default=0) >= 2**32:
        raise PrivpubError("joint_degree_graph port: a degree class has 2**32 nodes or more")
    cell_k, cell_l, cell_n = [], [], []
    for k, row in joint_degrees.items():
        for j, n_add in row.items():
            if n_add > 0 and k >= j:
                cell_k.append(cls[k])
                cell_l.append(cls[j])
                cell_n.append(n_add // 2 if k == j else n_add)

    def arr(x):
        return np.array(x, dtype=np.int64)

    edges, n_nodes, switches = _jdg_core(arr(start), arr(size), arr(deg), arr(cell_k),
                                         arr(cell_l), arr(cell_n), _mt_state(int(seed)))
    return edges, int(n_nodes), int(switches)
