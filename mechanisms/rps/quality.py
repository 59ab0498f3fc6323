"""RPS's quality functions for the exponential mechanism's choice of a cut, qardaji2012 Eq (2)-(4),
with their sensitivities (derived or checked in each docstring; brute-forced by the tests).

A quality function is called as ``quality(left, total, left_pos, total_pos)`` on arrays of
candidate cuts (``left`` items of ``total`` on the left, ``left_pos`` of them positive) and
carries ``sensitivity``, ``label`` (for the ledger) and ``needs_labels``.

References
----------
.. [QL12] W. Qardaji, N. Li. Recursive Partitioning and Summarization: A Practical
   Framework for Differentially Private Data Publishing. ASIACCS 2012. Sec 3.2, Sec 5.1,
   Eq (2)-(4).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "CountBalance",
    "ClassBalance",
    "DegreeBalance",
    "quality_count",
    "quality_class",
    "quality_degree",
    "degree_quality_sensitivity",
    "degree_quality_level_sensitivity",
]


def quality_count(left, total):
    """Eq (2) of [QL12]: ``q = (n - |r1 - r2|) / 4`` with ``r1 = left``, ``r2 = n - left``,
    ``n = total`` (the region's count). Sensitivity 1/2 under adding/removing one record
    (Sec 3.2): ``n - |r1 - r2| = 2 min(r1, r2)`` changes by 0 or 2."""
    left = np.asarray(left, dtype=float)
    total = np.asarray(total, dtype=float)
    return (total - np.abs(2.0 * left - total)) / 4.0


def quality_class(left, total, left_pos, total_pos):
    """Eq (3) of [QL12] (binary class): ``q = (n - |r1 - r2| + max(x1 + y2, y1 + x2)) / 2``,
    ``x1, x2`` = number of ``+``/``-`` items in R1, ``y1, y2`` in R2.

    Sensitivity 3/2 (the paper does not state it): adding or removing a record changes
    ``n - |r1 - r2|`` by 0 or 2 and ``max(...)`` by 0 or 1, in the same direction.
    """
    left = np.asarray(left, dtype=float)
    total = np.asarray(total, dtype=float)
    x1 = np.asarray(left_pos, dtype=float)
    x2 = left - x1
    y1 = np.asarray(total_pos, dtype=float) - x1
    y2 = (total - left) - y1
    return (total - np.abs(2.0 * left - total) + np.maximum(x1 + y2, y1 + x2)) / 2.0


def quality_degree(left, total, n_nodes):
    """Eq (4) of [QL12]: ``q = (r1 + r2 - |r1 - r2|) / (4n + 2)``, ``n`` = number of nodes
    of the graph (public), ``r1 + r2`` = nodes whose degree lies in the region."""
    left = np.asarray(left, dtype=float)
    total = np.asarray(total, dtype=float)
    return (total - np.abs(2.0 * left - total)) / (4.0 * n_nodes + 2.0)


def degree_quality_sensitivity(degree_bound: int, n_nodes: int) -> float:
    """Sensitivity of Eq (4) in one region under node neighbours, as Sec 5.1 derives it:
    ``(2 (Lambda + 1) + 1) / (4n + 2)`` (``<= 1/2`` since ``Lambda <= n - 1``).

    One node change moves at most ``Lambda + 1`` entries of the degree sequence (the node
    and its neighbours), each changing ``min(r1, r2)`` by at most one, so
    ``r1 + r2 - |r1 - r2| = 2 min(r1, r2)`` changes by at most ``2 (Lambda + 1)``; the
    paper's extra ``+ 1`` is slack we keep.
    """
    return (2.0 * (degree_bound + 1) + 1.0) / (4.0 * n_nodes + 2.0)


def degree_quality_level_sensitivity(degree_bound: int, n_nodes: int) -> float:
    """Sum over the disjoint regions of one tree level of the largest change of Eq (4):
    ``4 (Lambda + 1) / (4n + 2)``.

    Each of the at most ``Lambda + 1`` moved entries touches at most two regions (the one
    it leaves and the one it enters), changing ``2 min(r1, r2)`` of each by at most 2.
    Calibrating every region's exponential mechanism of one level to this bound makes the
    whole level cost its budget once under node neighbours (used by ``accounting="strict"``
    in :mod:`privpub.mechanisms.rps.degree`).
    """
    return 4.0 * (degree_bound + 1) / (4.0 * n_nodes + 2.0)


class CountBalance:
    """Eq (2): even split only; sensitivity 1/2."""

    needs_labels = False
    sensitivity = 0.5
    label = "partition: exponential mechanism, Eq (2) count balance"

    def __call__(self, left, total, left_pos=None, total_pos=None):
        return quality_count(left, total)


class ClassBalance:
    """Eq (3): even split that separates a binary class; sensitivity 3/2."""

    needs_labels = True
    sensitivity = 1.5
    label = "partition: exponential mechanism, Eq (3) class-aware balance"

    def __call__(self, left, total, left_pos=None, total_pos=None):
        if (type(left) is np.ndarray and type(left_pos) is np.ndarray
                and left.dtype == left_pos.dtype == np.int64 and left.ndim == 1
                and left.shape == left_pos.shape
                and type(total) is float and type(total_pos) is float):
            return _quality_class_counts(left, total, left_pos, total_pos)
        return quality_class(left, total, left_pos, total_pos)


@njit(cache=True, nogil=True)
def _quality_class_counts(left, total, left_pos, total_pos):  # pragma: no cover - compiled
    """:func:`quality_class` on integer counts (what the partition passes), in one pass:
    the same operations in the same order, on integers exactly representable as floats,
    so the same values."""
    out = np.empty(left.size, dtype=np.float64)
    for i in range(left.size):
        r1 = float(left[i])
        x1 = float(left_pos[i])
        x2 = r1 - x1
        y1 = total_pos - x1
        y2 = (total - r1) - y1
        out[i] = (total - abs(2.0 * r1 - total) + max(x1 + y2, y1 + x2)) / 2.0
    return out


class DegreeBalance:
    """Eq (4): even split of a degree sequence, normalised by ``4n + 2``."""

    needs_labels = False

    def __init__(self, n_nodes: int, sensitivity: float, label: str):
        self.n_nodes = int(n_nodes)
        self.sensitivity = float(sensitivity)
        self.label = label

    def __call__(self, left, total, left_pos=None, total_pos=None):
        return quality_degree(left, total, self.n_nodes)
