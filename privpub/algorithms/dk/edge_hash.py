"""A compiled hash multiset of edges, shared by the two graph generators of
:mod:`privpub.algorithms.dk`.

Keys are non-negative int64 (an edge ``{u, v}`` of an ``n``-node graph is
:func:`edge_key` ``(u, v, n)``), stored in a table of ``2**bits`` slots with a count each:
open addressing, Fibonacci hashing, linear probing, backward-shift deletion. Stub matching
(:mod:`privpub.algorithms.dk.stub_matching`) counts multi-edges with it and, once every edge
is simple, uses the same table as a set (the ``set_*`` kernels: keys only, the counts left
untouched, one memory access per probe instead of two); the networkx port
(:mod:`privpub.algorithms.dk.networkx_port`) tests edge membership with it. Every function is a
numba
kernel, called from other kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "edge_key",
    "multiset_new",
    "multiset_alloc",
    "multiset_find",
    "multiset_add",
    "multiset_count",
    "multiset_remove",
    "set_has",
    "set_add",
    "set_remove",
]

_EMPTY = np.int64(-1)


@njit(cache=True)
def _table_bits(n_items):
    """``bits`` of a table for up to ``n_items`` keys: ``2**bits >= 2 n_items + 16``."""
    bits = 4
    while (np.int64(1) << bits) < 2 * n_items + 16:
        bits += 1
    return bits


@njit(cache=True)
def multiset_new(n_items):
    """An empty hash multiset for up to ``n_items`` keys: ``(keys, counts, bits)``, tables
    of ``2**bits >= 2 n_items + 16`` slots (open addressing, linear probing)."""
    bits = _table_bits(n_items)
    return (np.full(np.int64(1) << bits, _EMPTY, np.int64),
            np.zeros(np.int64(1) << bits, np.int32), bits)


def multiset_alloc(n_items: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`multiset_new` called from Python: the same empty tables, allocated by numpy.

    numpy asks the kernel for transparent huge pages on large arrays (numba's allocator does
    not), so the random probes of a table of millions of keys miss the TLB far less often.
    """
    bits = int(_table_bits(n_items))
    return np.full(1 << bits, _EMPTY, np.int64), np.zeros(1 << bits, np.int32), bits


@njit(cache=True, inline="always")
def _slot(key, bits):
    """Home slot of ``key``: the top ``bits`` bits of ``key`` times 2**64 / golden ratio."""
    x = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64(x >> np.uint64(64 - bits))


@njit(cache=True)
def multiset_find(keys, key, bits):
    """Slot of ``key``, or the empty slot where it would go."""
    mask = (np.int64(1) << bits) - 1
    i = _slot(key, bits)
    while keys[i] != key and keys[i] != -1:
        i = (i + 1) & mask
    return i


@njit(cache=True)
def multiset_add(keys, cnt, key, bits):
    """Add one copy of ``key``."""
    i = multiset_find(keys, key, bits)
    if keys[i] == -1:
        keys[i] = key
        cnt[i] = 1
    else:
        cnt[i] += 1


@njit(cache=True)
def multiset_count(keys, cnt, key, bits):
    """Copies of ``key`` held (0 if absent)."""
    i = multiset_find(keys, key, bits)
    return 0 if keys[i] == -1 else cnt[i]


@njit(cache=True)
def _backshift(keys, cnt, i, bits, counted):
    """Empty slot ``i`` by backward-shift deletion (the counts move with their keys when
    ``counted``)."""
    mask = (np.int64(1) << bits) - 1
    j = i
    while True:
        j = (j + 1) & mask
        if keys[j] == -1:
            break
        h = _slot(keys[j], bits)
        if i <= j:
            stay = i < h <= j
        else:
            stay = h > i or h <= j
        if stay:
            continue
        keys[i] = keys[j]
        if counted:
            cnt[i] = cnt[j]
        i = j
    keys[i] = -1
    if counted:
        cnt[i] = 0


@njit(cache=True)
def multiset_remove(keys, cnt, key, bits):
    """Remove one copy of ``key`` (which must be present); backward-shift deletion."""
    i = multiset_find(keys, key, bits)
    cnt[i] -= 1
    if cnt[i] > 0:
        return
    _backshift(keys, cnt, i, bits, True)


@njit(cache=True)
def set_has(keys, key, bits):
    """Whether ``key`` is held, reading the keys only (a multiset whose counts are all 1)."""
    return keys[multiset_find(keys, key, bits)] != -1


@njit(cache=True)
def set_add(keys, key, bits):
    """Add ``key``, which must be absent, to a table used as a set (counts not written)."""
    keys[multiset_find(keys, key, bits)] = key


@njit(cache=True)
def set_remove(keys, key, bits):
    """Remove ``key``, which must be present, from a table used as a set (backward-shift
    deletion of the keys; the counts are not read or written)."""
    _backshift(keys, keys, multiset_find(keys, key, bits), bits, False)


@njit(cache=True, inline="always")
def edge_key(u, v, n):
    """The key of the undirected edge ``{u, v}`` among ``n`` nodes: ``min n + max``."""
    return u * n + v if u < v else v * n + u

