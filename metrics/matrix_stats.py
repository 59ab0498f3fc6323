"""Size statistics of a binary matrix (epasto2022 Appendix D, Table 2: rows, columns,
entries, density), read from the release (use mechanism ``original_matrix`` to tabulate the
datasets themselves)."""

from __future__ import annotations

from privpub.algorithms.binary import check_binary_input
from privpub.registry import register_metric
from privpub.types import Kind

__all__ = ["matrix_rows", "matrix_columns", "matrix_entries", "matrix_density"]


@register_metric("matrix_rows", kinds=Kind.BINARY_MATRIX, higher_is_better=True, label="rows")
def matrix_rows(truth, release) -> float:
    """Number of rows (users) of the release."""
    return float(check_binary_input(release, "the release").shape[0])


@register_metric("matrix_columns", kinds=Kind.BINARY_MATRIX, higher_is_better=True,
                 label="columns")
def matrix_columns(truth, release) -> float:
    """Number of columns (items) of the release."""
    return float(check_binary_input(release, "the release").shape[1])


@register_metric("matrix_entries", kinds=Kind.BINARY_MATRIX, higher_is_better=True,
                 label="entries")
def matrix_entries(truth, release) -> float:
    """Number of 1-entries (edges of the bipartite graph) of the release."""
    return float(check_binary_input(release, "the release").nnz)


@register_metric("matrix_density", kinds=Kind.BINARY_MATRIX, higher_is_better=True,
                 label="density")
def matrix_density(truth, release) -> float:
    """1-entries / (rows x columns) of the release (NaN for an empty shape)."""
    m = check_binary_input(release, "the release")
    cells = m.shape[0] * m.shape[1]
    return m.nnz / cells if cells else float("nan")
