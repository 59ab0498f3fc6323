"""The construction of :mod:`privpub.data.shaped`'s graphs: exact counts, heavy tail.

Imported on first build only (numba and scipy.optimize are not needed to read a cached
graph).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.optimize import brentq

from privpub.errors import PrivpubError

__all__ = ["shaped_degrees", "shaped_graph"]


# --------------------------------------------------------------------------- degrees
def _power_weights(n: int, mean: float, d_max: int, exponent: float) -> np.ndarray:
    """``w_i = d_max (i0 / (i + i0)) ** (1 / (exponent - 1))``, ``i0`` solved so that the
    weights clipped below at 1 average ``mean`` (``w_0 = d_max`` by construction)."""
    alpha = 1.0 / (exponent - 1.0)
    i = np.arange(n, dtype=float)

    def excess(log_i0: float) -> float:
        i0 = np.exp(log_i0)
        return float(np.maximum(1.0, d_max * (i0 / (i + i0)) ** alpha).mean() - mean)

    i0 = np.exp(brentq(excess, -30.0, 60.0, xtol=1e-12))
    return np.maximum(1.0, d_max * (i0 / (i + i0)) ** alpha)


def shaped_degrees(n: int, m: int, d_max: int, *, exponent: float, rng) -> np.ndarray:
    """A degree sequence with ``n`` entries summing to ``2 m``, all ``>= 1``, maximum
    exactly ``d_max`` (node 0, the only node of that degree) and a power-law tail.

    Weights as :func:`privpub.data.chung_lu`'s (``w_i`` proportional to a power of the rank,
    offset so the largest is ``d_max``; see :func:`_power_weights`), randomly rounded, then
    moved to the exact sum by +-1 on random nodes other than node 0.
    """
    w = _power_weights(n, 2.0 * m / n, d_max, exponent)
    d = np.floor(w + rng.random(n)).astype(np.int64)
    d[0] = d_max
    np.clip(d[1:], 1, d_max - 1, out=d[1:])
    gap = 2 * m - int(d.sum())
    while gap:
        step = 1 if gap > 0 else -1
        pick = 1 + rng.choice(n - 1, size=min(abs(gap), n - 1), replace=False)
        ok = (d[pick] + step >= 1) & (d[pick] + step <= d_max - 1)
        d[pick[ok]] += step
        gap -= step * int(ok.sum())
    return d.astype(np.int32)


# --------------------------------------------------------------------------- kernels
@njit(cache=True)
def _canonical_keys(a, b, n):
    """``min * n + max`` of each pair (int64); loops get -1."""
    out = np.empty(a.size, np.int64)
    for i in range(a.size):
        x, y = np.int64(a[i]), np.int64(b[i])
        if x == y:
            out[i] = -1
        elif x < y:
            out[i] = x * n + y
        else:
            out[i] = y * n + x
    return out


@njit(cache=True)
def _csr_from_sorted_keys(keys, n):
    """The symmetric CSR (int32 indptr and indices, sorted rows) of the edges ``keys``
    (``u * n + v``, ``u < v``, strictly increasing). Every row lists its smaller neighbours
    first, in the order the keys visit them (increasing), then its larger ones: no sort."""
    deg = np.zeros(n, np.int64)
    low = np.zeros(n, np.int64)  # neighbours smaller than the node
    for i in range(keys.size):
        u = keys[i] // n
        v = keys[i] - u * n
        deg[u] += 1
        deg[v] += 1
        low[v] += 1
    indptr = np.zeros(n + 1, np.int32)
    for x in range(n):
        indptr[x + 1] = indptr[x] + deg[x]
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    for x in range(n):
        lo[x] = indptr[x]
        hi[x] = indptr[x] + low[x]
    indices = np.empty(2 * keys.size, np.int32)
    for i in range(keys.size):
        u = keys[i] // n
        v = keys[i] - u * n
        indices[hi[u]] = v
        hi[u] += 1
        indices[lo[v]] = u
        lo[v] += 1
    return indptr, indices


def _degrees_of(keys: np.ndarray, n: int) -> np.ndarray:
    return (np.bincount(keys // n, minlength=n) + np.bincount(keys % n, minlength=n))


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` by an in-place sort (numpy 2's hash-based unique is slower here)."""
    a = np.sort(a)
    return a[np.r_[True, a[1:] != a[:-1]]] if a.size else a


def _merge(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted union of two disjoint sorted key arrays."""
    out = np.concatenate([a, b])
    out.sort(kind="stable")  # timsort: linear on two sorted runs
    return out


def _new_keys(candidates: np.ndarray, *existing: np.ndarray) -> np.ndarray:
    """The distinct non-loop ``candidates`` in none of the sorted arrays ``existing``."""
    keys = _sorted_unique(candidates[candidates >= 0])
    for have in existing:
        if have.size and keys.size:
            at = np.minimum(np.searchsorted(have, keys), have.size - 1)
            keys = keys[have[at] != keys]
    return keys


def _stubs(deficit: np.ndarray, rng) -> np.ndarray:
    stubs = np.repeat(np.arange(deficit.size, dtype=np.int32), deficit)
    rng.shuffle(stubs)
    return stubs[: stubs.size - stubs.size % 2]


# --------------------------------------------------------------------------- the graph
def shaped_graph(
    n: int, m: int, d_max: int, *, exponent: float, rng, rounds: int = 30
) -> tuple[np.ndarray, np.ndarray]:
    """An int32 CSR ``(indptr, indices)`` of a simple graph with exactly ``n`` nodes, ``m``
    edges and maximum degree ``d_max`` (node 0), whose degrees follow
    :func:`shaped_degrees`.

    1. The erased configuration model: the ``2 m`` stubs of the degree sequence in random
       order are paired; self-loops and repeated pairs are erased.
    2. Repair: the stubs the erasure freed are paired again the same way (never onto an
       existing edge), up to ``rounds`` times; each round frees a small fraction of the last.
    3. Exact finish: node 0 is joined to random non-neighbours (nodes still short of their
       target first) until its degree is ``d_max``; then random pairs of other nodes are
       added, or random edges between other nodes of degree >= 2 removed, until ``m``.

    Work O(m log m) (two sorts of the ``m`` keys), memory about 30 bytes per edge.
    """
    if m > n * (n - 1) // 2 or d_max >= n or 2 * m < d_max:
        raise PrivpubError(f"no simple graph has n={n}, m={m} and maximum degree {d_max}")
    target = shaped_degrees(n, m, d_max, exponent=exponent, rng=rng)
    stubs = np.repeat(np.arange(n, dtype=np.int32), target)
    rng.shuffle(stubs)
    keys = _sorted_unique(_canonical_keys(stubs[0::2], stubs[1::2], n))
    del stubs
    keys = keys[keys >= 0]
    added = np.empty(0, np.int64)
    degree = _degrees_of(keys, n)
    for _ in range(rounds):
        free = _stubs(np.maximum(target - degree, 0), rng)
        if free.size < 2:
            break
        new = _new_keys(_canonical_keys(free[0::2], free[1::2], n), keys, added)
        added = _merge(added, new)
        degree += _degrees_of(new, n)
        if new.size <= free.size // 200:  # what is left is mostly node 0's: step 3
            break
    # node 0 to exactly d_max: its neighbours are the keys 0 * n + v = v below n
    short = int(d_max - degree[0])
    if short > 0:
        neighbours = np.concatenate([keys[keys < n], added[added < n]])
        taken = np.zeros(n, bool)
        taken[0] = True
        taken[neighbours] = True
        wanting = np.flatnonzero((target > degree) & ~taken)
        rng.shuffle(wanting)
        pick = wanting[:short]
        if pick.size < short:
            rest = np.flatnonzero(~taken)
            rest = rest[~np.isin(rest, pick)]
            pick = np.concatenate([pick, rng.choice(rest, short - pick.size, replace=False)])
        added = _merge(added, np.sort(pick.astype(np.int64)))  # keys 0 * n + v
    keys = _merge(keys, added)
    degree = _degrees_of(keys, n)
    while keys.size < m:  # random pairs of nodes other than 0, below d_max - 1
        need = m - keys.size
        a = rng.integers(1, n, size=2 * need + 16)
        a = a[degree[a] < d_max - 1]
        pairs = a[: a.size - a.size % 2]
        new = _new_keys(_canonical_keys(pairs[0::2], pairs[1::2], n), keys)
        keys = _merge(keys, np.sort(rng.permutation(new)[:need]))
        degree = _degrees_of(keys, n)
    if keys.size > m:  # drop random edges between other nodes of degree >= 2
        u, v = keys // n, keys % n
        spare = np.flatnonzero((u > 0) & (degree[u] >= 2) & (degree[v] >= 2))
        drop = rng.choice(spare, size=keys.size - m, replace=False)
        keys = np.delete(keys, drop)
        degree = _degrees_of(keys, n)
    if keys.size != m or int(degree.max()) != d_max or int(degree[0]) != d_max:
        raise PrivpubError(  # a bug, not a user error: the construction is exact
            f"shaped_graph: built m={keys.size}, max degree {degree.max()}, expected {m}, "
            f"{d_max}"
        )
    return _csr_from_sorted_keys(keys, n)
