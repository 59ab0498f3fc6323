"""numpy's pairwise summation of float64, compiled, for kernels that must give numpy's bits.

``np.sum`` of a contiguous float64 array does not add left to right: it sums blocks of at
most 128 values with eight interleaved running sums and combines larger ranges as
``sum(first n2) + sum(rest)``, ``n2`` half the length rounded down to a multiple of 8
(``pairwise_sum_DOUBLE`` in numpy's ``loops_utils.h``). A compiled kernel that replaces
numpy code and must return the very same numbers (DiffPID3's split scores,
:mod:`privpub.mechanisms.diffpid3`; the network's batch loss, :mod:`privpub.metrics.mlp`) sums with
:func:`pairwise_sum`. ``privpub/algorithms/tests/test_pairwise.py`` checks it against ``np.sum`` bit
for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["pairwise_sum"]


@njit(cache=True, nogil=True)
def _pairwise_block(x, lo, n):  # pragma: no cover - compiled
    """numpy's pairwise sum of ``n <= 128`` values: eight running sums, then the rest."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += x[lo + i]
        return res
    r0, r1, r2, r3 = x[lo], x[lo + 1], x[lo + 2], x[lo + 3]
    r4, r5, r6, r7 = x[lo + 4], x[lo + 5], x[lo + 6], x[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += x[lo + i]
        r1 += x[lo + i + 1]
        r2 += x[lo + i + 2]
        r3 += x[lo + i + 3]
        r4 += x[lo + i + 4]
        r5 += x[lo + i + 5]
        r6 += x[lo + i + 6]
        r7 += x[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += x[lo + i]
        i += 1
    return res


@njit(cache=True, nogil=True)
def pairwise_sum(x, lo, n):  # pragma: no cover - compiled
    """``np.sum(x[lo:lo + n])`` for float64, in numpy's order (see the module docstring).

    Iterative with an explicit stack: a recursive numba function compiled with
    ``cache=True`` can crash (numba/numba#6061)."""
    if n <= 128:
        return _pairwise_block(x, lo, n)
    seg_lo = np.empty(64, dtype=np.int64)
    seg_n = np.empty(64, dtype=np.int64)
    state = np.zeros(64, dtype=np.int64)  # 0: start, 1: left half summed, 2: both
    left = np.empty(64)
    top, ret = 0, 0.0
    seg_lo[0], seg_n[0] = lo, n
    while True:
        m = seg_n[top]
        n2 = m // 2
        n2 -= n2 % 8
        if state[top] == 0 and m <= 128:
            ret = _pairwise_block(x, seg_lo[top], m)
            top -= 1
        elif state[top] == 0:
            state[top] = 1
            seg_lo[top + 1], seg_n[top + 1], state[top + 1] = seg_lo[top], n2, 0
            top += 1
            continue
        elif state[top] == 1:
            left[top] = ret
            state[top] = 2
            seg_lo[top + 1], seg_n[top + 1], state[top + 1] = seg_lo[top] + n2, m - n2, 0
            top += 1
            continue
        else:
            ret = left[top] + ret
            top -= 1
        if top < 0:
            return ret
