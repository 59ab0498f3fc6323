"""Sparse binary matrices (users x items, epasto2022): the input check and the release of
row clusters (every row replaced by its cluster's item set, by strict majority or by
intersection), shared by the smooth k-anonymity mechanism, its non-smooth and Mondrian
baselines and the matrix metrics. Why a tie is not a majority: docs/design.md,
"epasto2022: smooth k-anonymity".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from privpub.errors import DataError, PrivpubError
from privpub.types import KAnonymousMatrix, as_binary_matrix

__all__ = ["check_binary_input", "cluster_support", "cluster_release"]


def check_binary_input(matrix, what: str = "the input") -> sp.csr_array:
    """Validate ``matrix`` as a 2-D 0/1 matrix and return a canonical int8 CSR copy.

    Raises :class:`~privpub.errors.DataError` (a :class:`PrivpubError`) with a clear message
    for anything else (non-numeric, non-2-D, entries other than 0/1, NaN)."""
    if matrix is None:
        raise DataError(f"{what} must be a users x items binary matrix, got None")
    if not sp.issparse(matrix):
        try:
            matrix = np.asarray(matrix)
        except Exception as exc:  # ragged lists and the like
            raise DataError(f"cannot read {what} as a binary matrix: {exc}") from None
        if matrix.ndim != 2:
            raise DataError(f"{what} must be a 2-D binary matrix, got shape {matrix.shape}")
        if matrix.dtype == object or not (
            np.issubdtype(matrix.dtype, np.number) or matrix.dtype == bool
        ):
            raise DataError(f"{what} must be numeric 0/1, got dtype {matrix.dtype}")
    try:
        return as_binary_matrix(matrix)
    except PrivpubError as exc:
        raise DataError(f"{what}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise DataError(f"cannot read {what} as a binary matrix: {exc}") from None


def cluster_support(m: sp.csr_array, labels: np.ndarray, n_clusters: int):
    """``(support, sizes)``: ``support[c, j]`` = rows of cluster ``c`` holding item ``j``
    (a sparse ``n_clusters x n_items`` int64 CSR), ``sizes[c]`` = rows in ``c``."""
    n = labels.size
    members = sp.csr_array(
        (np.ones(n, dtype=np.int64), (labels, np.arange(n))), shape=(n_clusters, n)
    )
    support = sp.csr_array(members @ m.astype(np.int64))
    support.sort_indices()
    sizes = np.bincount(labels, minlength=n_clusters).astype(np.int64)
    return support, sizes


def cluster_release(m: sp.csr_array, labels: np.ndarray, n_clusters: int, *, rule: str):
    """Release every row as its cluster's item set: ``rule="majority"`` keeps the items held
    by a strict majority of the cluster (a tie is not a majority), ``rule="intersection"``
    those held by all of it, ``rule="at_least_half"`` those held by half of it or more (a
    tie kept: the majority of the authors' patent, a reading the probes compare, not ours).
    Returns a :class:`~privpub.types.KAnonymousMatrix` carrying ``labels``."""
    support, sizes = cluster_support(m, labels, n_clusters)
    row_size = np.repeat(sizes, np.diff(support.indptr))
    if rule == "majority":
        keep = 2 * support.data > row_size
    elif rule == "at_least_half":
        keep = 2 * support.data >= row_size
    elif rule == "intersection":
        keep = support.data == row_size
    else:
        raise PrivpubError(
            f"rule must be 'majority', 'at_least_half' or 'intersection', got {rule!r}")
    chosen = sp.csr_array(
        (keep.astype(np.int8), support.indices, support.indptr), shape=support.shape
    )
    chosen.eliminate_zeros()
    out = as_binary_matrix(chosen[labels])
    return KAnonymousMatrix.wrap(out, clusters=labels, suppression=(rule == "intersection"))
