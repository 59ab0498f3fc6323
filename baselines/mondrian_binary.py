"""Mondrian k-anonymity by suppression for sparse binary matrices (epasto2022's baseline).

epasto2022 (Sec 6, Appendix D "Baselines") compares with "the well-known mondrian
anonymization algorithm [LeFevre et al. 2006], using an open source implementation
(github.com/qiyuangong/Mondrian) which enforces k-anonymity by suppression", run on the
dense matrix: every column is a quasi-identifier with values {0, 1}. It "was not able to run
[...] on the larger datasets (dblp, stanford, user-list) as this algorithm [...] scales with
the size of the full matrix". This module computes *the same partition* as that
implementation's strict mode on a binary matrix, sparse-aware, so it runs on dblp and
web-NotreDame too (seconds, memory O(nnz + n_cols log n)).

What that implementation does on 0/1 columns (``anonymize_strict``, ``choose_dimension``,
``find_median``), and so what we do, and how the sparse implementation keeps the column
counts: docs/design.md, "epasto2022: smooth k-anonymity" (Mondrian for binary matrices).
Leaves are released by suppression (:func:`privpub.algorithms.binary.cluster_release`, rule
``"intersection"``): each row becomes the intersection of its class.

References
----------
.. [LDR06] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
   k-anonymity. ICDE 2006.
.. [EEMM22] A. Epasto et al. Smooth Anonymity for Sparse Graphs. 2022, Appendix D.
.. [Gong] Q. Gong. Mondrian (Python), github.com/qiyuangong/Mondrian, ``mondrian.py``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
import scipy.sparse as sp

from privpub.algorithms.binary import check_binary_input, cluster_release
from privpub.errors import NotApplicableError, PrivpubError
from privpub.registry import K_ANONYMITY, register_mechanism
from privpub.types import Kind, Release
from privpub.validation import check_k, check_rng

__all__ = ["mondrian_binary", "mondrian_binary_partition"]


@nb.njit(cache=True, nogil=True)
def _add_counts(counts, slot, rows, lo, hi, indptr, indices, sign):
    for t in range(lo, hi):
        r = rows[t]
        for a in range(indptr[r], indptr[r + 1]):
            counts[slot, indices[a]] += sign


@nb.njit(cache=True, nogil=True)
def _partition(indptr, indices, col_ptr, col_rows, n_rows, n_cols, k, n_slots):
    rows = np.arange(n_rows, dtype=np.int64)
    pos = np.arange(n_rows, dtype=np.int64)
    labels = np.empty(n_rows, np.int64)
    counts = np.zeros((n_slots, n_cols), np.int32)
    high = np.empty((n_slots, n_cols), np.int32)
    high_len = np.zeros(n_slots, np.int64)
    free = list(range(n_slots - 1, -1, -1))
    depth_cap = n_slots
    st_lo = np.empty(depth_cap, np.int64)
    st_hi = np.empty(depth_cap, np.int64)
    st_slot = np.empty(depth_cap, np.int64)
    st_ptr = np.empty(depth_cap, np.int64)
    st_nnz = np.empty(depth_cap, np.int64)
    top = 0
    slot0 = free.pop()
    _add_counts(counts, slot0, rows, 0, n_rows, indptr, indices, 1)
    st_lo[0], st_hi[0], st_slot[0], st_ptr[0] = 0, n_rows, slot0, 0
    st_nnz[0] = indptr[n_rows]
    top = 1
    n_leaves = 0
    scratch = np.empty(0, np.int64)
    while top > 0:
        top -= 1
        lo, hi, slot, ptr = st_lo[top], st_hi[top], st_slot[top], st_ptr[top]
        nnz = st_nnz[top]
        n = hi - lo
        best = -1
        if n // 2 >= k:
            ub = n - n // 2
            # 1. columns before ptr that failed with a majority of ones
            keep = 0
            for t in range(high_len[slot]):
                col = high[slot, t]
                c = counts[slot, col]
                if c < k:
                    continue
                if c <= ub and best < 0:
                    best = col
                    continue
                high[slot, keep] = col
                keep += 1
            high_len[slot] = keep
            # 2. the first cuttable column at or after ptr
            if best < 0:
                if 8 * nnz < n_cols - ptr:  # sparse scan of the partition's own columns
                    if scratch.size < nnz:
                        scratch = np.empty(2 * nnz, np.int64)
                    m = 0
                    for t in range(lo, hi):
                        r = rows[t]
                        for a in range(indptr[r], indptr[r + 1]):
                            col = indices[a]
                            if col >= ptr and counts[slot, col] >= k:
                                scratch[m] = col
                                m += 1
                    cols = np.unique(scratch[:m])
                    for col in cols:
                        c = counts[slot, col]
                        if c <= ub:
                            best = col
                            break
                        high[slot, high_len[slot]] = col
                        high_len[slot] += 1
                else:
                    for col in range(ptr, n_cols):
                        c = counts[slot, col]
                        if c >= k:
                            if c <= ub:
                                best = col
                                break
                            high[slot, high_len[slot]] = col
                            high_len[slot] += 1
        if best < 0:  # a leaf: label it, zero its counts, free its slot
            for t in range(lo, hi):
                labels[rows[t]] = n_leaves
            n_leaves += 1
            _add_counts(counts, slot, rows, lo, hi, indptr, indices, -1)
            high_len[slot] = 0
            free.append(slot)
            continue
        # split: the rows holding `best` (from the column index) first, zeros after
        i = lo
        for a in range(col_ptr[best], col_ptr[best + 1]):
            r = col_rows[a]
            p = pos[r]
            if lo <= p < hi:
                other = rows[i]
                rows[i], rows[p] = r, other
                pos[r], pos[other] = i, p
                i += 1
        ones_lo, ones_hi, zeros_lo, zeros_hi = lo, i, i, hi
        n_ones, n_zeros = ones_hi - ones_lo, zeros_hi - zeros_lo
        if n_ones <= n_zeros:
            s_lo, s_hi, l_lo, l_hi = ones_lo, ones_hi, zeros_lo, zeros_hi
        else:
            s_lo, s_hi, l_lo, l_hi = zeros_lo, zeros_hi, ones_lo, ones_hi
        if len(free) == 0 or top + 2 > depth_cap:
            raise RuntimeError("mondrian_binary: slot pool exhausted")  # cannot happen
        new = free.pop()
        _add_counts(counts, new, rows, s_lo, s_hi, indptr, indices, 1)
        _add_counts(counts, slot, rows, s_lo, s_hi, indptr, indices, -1)
        for t in range(high_len[slot]):
            high[new, t] = high[slot, t]
        high_len[new] = high_len[slot]
        # larger child waits, smaller child next
        s_nnz = 0
        for t in range(s_lo, s_hi):
            s_nnz += indptr[rows[t] + 1] - indptr[rows[t]]
        st_lo[top], st_hi[top], st_slot[top], st_ptr[top] = l_lo, l_hi, slot, best + 1
        st_nnz[top] = nnz - s_nnz
        top += 1
        st_lo[top], st_hi[top], st_slot[top], st_ptr[top] = s_lo, s_hi, new, best + 1
        st_nnz[top] = s_nnz
        top += 1
    return labels, n_leaves


def mondrian_binary_partition(matrix, *, k: int) -> tuple[np.ndarray, int]:
    """The strict-Mondrian partition of a binary matrix's rows (docs/design.md).

    Returns ``(labels, n_classes)``: a class id per row, every class of ``>= k`` rows.
    """
    k = check_k(k)
    m = check_binary_input(matrix)
    n, d = (int(s) for s in m.shape)
    if k > n:
        raise NotApplicableError(
            f"k = {k} exceeds the number of rows ({n}): no {k}-anonymous release exists"
        )
    n_slots = int(math.log2(max(n, 2))) + 8
    csc = sp.csc_array(m)
    csc.sort_indices()
    labels, n_classes = _partition(
        m.indptr.astype(np.int64), m.indices.astype(np.int64), csc.indptr.astype(np.int64),
        csc.indices.astype(np.int64), n, d, k, n_slots
    )
    return labels, int(n_classes)


@register_mechanism(
    "mondrian_binary",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=K_ANONYMITY,
    paper="epasto2022",
    role="baseline",
    source='Appendix D ("Baselines")',
)
def mondrian_binary(matrix, *, k: int, rng: np.random.Generator) -> Release:
    """Strict Mondrian on the 0/1 columns, released by suppression [LDR06; EEMM22 App. D].

    The partition is the one github.com/qiyuangong/Mondrian computes on the dense matrix
    (every column a quasi-identifier), found sparse-aware; every row is released as the
    intersection of its class. Deterministic (``rng`` is accepted for the registry's
    uniform signature and not used).

    Parameters
    ----------
    matrix : users x items 0/1 matrix (scipy sparse or array); not modified.
    k : int >= 2
    rng : numpy.random.Generator (unused)

    Returns
    -------
    Release
        ``value``: :class:`~privpub.types.KAnonymousMatrix` with ``clusters`` and
        ``suppression=True``; ``info``: ``n_clusters``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])
    >>> mondrian_binary(x, k=2, rng=np.random.default_rng(0)).value.toarray().tolist()
    [[1, 0], [1, 0], [0, 0], [0, 0]]
    """
    check_rng(rng)
    labels, n_classes = mondrian_binary_partition(matrix, k=k)
    m = check_binary_input(matrix)
    if labels.size and np.bincount(labels).min() < check_k(k):
        raise PrivpubError("mondrian_binary produced a class smaller than k")  # internal
    out = cluster_release(m, labels, n_classes, rule="intersection")
    return Release(out, {"n_clusters": n_classes})
