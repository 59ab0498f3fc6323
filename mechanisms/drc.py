"""DRC and LDRC (sala2011 Sec 4): noisy dK-2 series, as published and with a guarantee that holds.

- :func:`drc`: Divide Randomize and Conquer (Sec 4.1-4.2): the beta-ordered dK-2 series cut
  into partitions, each with Laplace noise calibrated by Lemma 2;
- :func:`ldrc`: DRC followed by L2 isotonic regression (Sec 4.3, Theorem 4);
- :func:`ldrc_true_count_order`: LDRC fitted in the order of the true counts, the
  (non-private) trap of public reimplementations;
- :func:`drc_honest`: DRC's scales made public and put on every cell of the domain, then
  thresholded: epsilon-edge-DP.

Pygmalion (:mod:`privpub.mechanisms.pygmalion`) builds its graph from these releases. The partition
rule, the fitting orders and the privacy analysis (why DRC as published is not
epsilon-edge-DP, why the honest variant is): docs/design.md (sala2011) and the notes of
``conf/experiment/sala2011_fig4.yaml``.

References
----------
.. [SZWZZ11] A. Sala, X. Zhao, C. Wilson, H. Zheng, B. Y. Zhao. Sharing graphs using
   differentially private graph models. IMC 2011, Sec 4 (Definition 3, Lemmas 2-3,
   Theorems 2-4).
.. [WW13] Y. Wang, X. Wu. Preserving differential privacy in degree-correlation based graph
   generation. Transactions on Data Privacy 6(2), 2013.
.. [HRMS10] M. Hay, V. Rastogi, G. Miklau, D. Suciu. Boosting the accuracy of
   differentially private histograms through consistency. PVLDB 3(1), 2010.
"""

from __future__ import annotations

import math

import numpy as np

from privpub.algorithms.dk import DK2_CAVEAT_SUMMARY, check_graph, joint_degree
from privpub.errors import NotApplicableError, PrivpubError
from privpub.isotonic import isotonic_regression
from privpub.ledger import PrivacyLedger
from privpub.noise import is_noise_off, weighted_laplace_mechanism
from privpub.registry import EDGE_DP, NO_PRIVACY, register_mechanism
from privpub.types import Graph, JointDegree, Kind, Release
from privpub.validation import check_epsilon, check_fraction, check_positive_int, check_rng

__all__ = [
    "ORDERS",
    "DENSE_MAX_CELLS",
    "CAVEAT_DRC",
    "CAVEAT_TRUE_ORDER",
    "TRUE_ORDER_SUMMARY",
    "check_order",
    "drc_scales",
    "drc",
    "ldrc",
    "ldrc_true_count_order",
    "honest_thresholds",
    "drc_honest",
]

#: Orders LDRC may fit in (docs/design.md); the true-count order is not one of them.
ORDERS = ("beta", "noisy")

#: Largest domain the honest variant releases densely (``threshold=None``).
DENSE_MAX_CELLS = 2_000_000

CAVEAT_DRC = (
    "as published (sala2011 Sec 4) DRC adds noise only to the dK-2 tuples present in the "
    "graph (their set is released exactly) and calibrates each partition with 4*d_k+1 for "
    "d_k read from the partition's own tuples (local sensitivity, Wang & Wu 2013); its "
    "parallel composition over partitions (Thm 3) does not apply since one edge changes "
    "several partitions. Not epsilon-edge-DP as published; drc_honest is."
)
CAVEAT_TRUE_ORDER = (
    "NOT private: the true-count order of public reimplementations (cells sorted by their TRUE "
    "counts before the isotonic fit: an unpaid, data-dependent order), drawn beside the "
    "edge-DP series to show what the trap buys."
)
#: :data:`CAVEAT_TRUE_ORDER` in one line (the README's caveat table).
TRUE_ORDER_SUMMARY = (
    "the true-count order of public reimplementations (an unpaid, data-dependent order), "
    "drawn beside the edge-DP series as `… (true-count order, not private)`"
)


# --------------------------------------------------------------------------- checks
def check_order(order) -> str:
    """``order`` if it is one of :data:`ORDERS`, else a :class:`~privpub.errors.PrivpubError`."""
    if order not in ORDERS:
        raise PrivpubError(f"order must be one of {ORDERS}, got {order!r}")
    return order


def _width(partition_width) -> int:
    return check_positive_int(partition_width, "partition_width")


def _degree_bound(graph: Graph, degree_bound) -> int:
    """The public degree bound D: ``n - 1`` or a given integer (NotApplicable if exceeded)."""
    if degree_bound == "n_minus_1":
        return max(graph.n_nodes - 1, 1)
    if isinstance(degree_bound, str):
        raise PrivpubError(f"degree_bound must be 'n_minus_1' or an integer, got {degree_bound!r}")
    bound = check_positive_int(degree_bound, "degree_bound")
    if graph.n_edges and int(graph.degrees().max()) > bound:
        raise NotApplicableError(
            f"the graph's maximum degree exceeds the public degree_bound {bound}: the "
            "guarantee is stated for graphs within the bound"
        )
    return bound


# --------------------------------------------------------------------------- DRC
def drc_scales(high, *, partition_width: int = 1, tops: str = "data") -> np.ndarray:
    """Per-cell sensitivity ``4 d_k + 1`` of DRC's partition of each cell.

    ``high`` are the cells' larger degrees (beta order not required). Partition ``j`` holds
    the cells with ``high`` in ``[w j + 1, w (j + 1)]``. ``tops="data"``: ``d_k`` is the
    largest ``high`` among the given cells of the partition (sala2011 Lemma 2, read from the
    data); ``tops="public"``: ``d_k`` is the interval's top ``w (j + 1)`` (a public number).
    """
    high = np.asarray(high, dtype=np.int64)
    w = _width(partition_width)
    part = (high - 1) // w
    if tops == "public":
        d_k = (part + 1) * w
    elif tops == "data":
        if high.size == 0:
            return np.empty(0)
        top = np.zeros(int(part.max()) + 1, dtype=np.int64)
        np.maximum.at(top, part, high)
        d_k = top[part]
    else:
        raise PrivpubError(f"tops must be 'data' or 'public', got {tops!r}")
    return 4.0 * d_k + 1.0


def _drc_noisy(jd: JointDegree, epsilon, rng, ledger, width, label) -> np.ndarray:
    weights = drc_scales(jd.high, partition_width=width, tops="data")
    n_parts = np.unique((jd.high - 1) // width).size
    return weighted_laplace_mechanism(
        jd.counts,
        weights=weights,
        sensitivity=1.0,
        epsilon=epsilon,
        rng=rng,
        ledger=ledger,
        label=(
            f"{label}: {n_parts} partitions, Lap((4 d_k + 1)/eps) each, parallel composition "
            "as claimed by sala2011 Thm 3"
        ),
    )


@register_mechanism(
    "drc",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=EDGE_DP,
    paper="sala2011",
    caveat=CAVEAT_DRC,
    source="Sec 4.1-4.2",
    audit={"cost_ms": 2.7},
    caveat_summary=DK2_CAVEAT_SUMMARY,
)
def drc(
    graph: Graph,
    *,
    epsilon: float,
    partition_width: int = 1,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> JointDegree:
    """Divide Randomize and Conquer (sala2011 Sec 4.1-4.2), as published (see the caveat).

    Parameters
    ----------
    graph : Graph
    epsilon : float
        Privacy parameter, > 0.
    partition_width : int
        Partition ``j`` holds the beta-series tuples whose larger degree is in
        ``[w j + 1, w (j + 1)]`` (default 1: one partition per degree).
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional

    Returns
    -------
    JointDegree
        The graph's own tuples with raw noisy counts.
    """
    graph = check_graph(graph)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    width = _width(partition_width)
    jd = joint_degree(graph)
    return JointDegree(jd.low, jd.high, _drc_noisy(jd, epsilon, rng, ledger, width, "DRC"))


def _isotonic_in_order(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The L2 non-decreasing fit of ``values`` read in ``order``, put back in place."""
    fitted = np.empty_like(values)
    fitted[order] = isotonic_regression(values[order], increasing=True)
    return fitted


@register_mechanism(
    "ldrc",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=EDGE_DP,
    paper="sala2011",
    caveat=CAVEAT_DRC,
    audit={"cost_ms": 2},
    caveat_summary=DK2_CAVEAT_SUMMARY,
)
def ldrc(
    graph: Graph,
    *,
    epsilon: float,
    partition_width: int = 1,
    order: str = "beta",
    order_fraction: float = 0.5,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> JointDegree:
    """LDRC: DRC followed by L2 isotonic regression (sala2011 Sec 4.3, Theorem 4).

    ``graph``, ``epsilon``, ``partition_width``, ``rng`` and ``ledger`` as :func:`drc`.

    Parameters
    ----------
    order : {"beta", "noisy"}
        The order of the non-decreasing fit (docs/design.md): the beta series (default,
        the paper's own order) or the order of a separate DRC release bought with
        ``order_fraction * epsilon``.
    order_fraction : float
        Share of epsilon spent on the ordering release when ``order="noisy"``.
    """
    return _ldrc(graph, epsilon=epsilon, partition_width=partition_width, order=check_order(order),
                 order_fraction=order_fraction, rng=rng, ledger=ledger)


@register_mechanism(
    "ldrc_true_count_order",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=NO_PRIVACY,
    paper="sala2011",
    caveat=CAVEAT_TRUE_ORDER,
    source="Sec 4.3 (fitted in the true-count order of public reimplementations)",
    caveat_summary=TRUE_ORDER_SUMMARY,
)
def ldrc_true_count_order(
    graph: Graph,
    *,
    epsilon: float,
    partition_width: int = 1,
    rng: np.random.Generator,
) -> JointDegree:
    """LDRC fitted in the order of the TRUE counts: the trap of public reimplementations.

    The DRC noise of :func:`ldrc` at ``epsilon``, then the isotonic fit along the cells
    sorted by their true counts. The order is read from the data and not paid for, so the
    release is **not** differentially private (privacy ``none``); sala2011 Figs. 4-9 draw it
    beside the edge-DP series to show what the trap buys. Parameters as :func:`ldrc`.
    """
    return _ldrc(graph, epsilon=epsilon, partition_width=partition_width,
                 order="true_counts", order_fraction=0.5, rng=rng, ledger=None)


def _ldrc(graph, *, epsilon, partition_width, order, order_fraction, rng, ledger) -> JointDegree:
    """:func:`ldrc` in any order, the true-count one included."""
    graph = check_graph(graph)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    width = _width(partition_width)
    jd = joint_degree(graph)
    if order == "beta":
        noisy = _drc_noisy(jd, epsilon, rng, ledger, width, "DRC")
        fitted = _isotonic_in_order(noisy, np.arange(jd.size))  # JointDegree is beta-ordered
    elif order == "noisy":
        frac = check_fraction(order_fraction, "order_fraction")
        if frac >= 1:
            raise PrivpubError("order_fraction must be < 1 (the fitted release needs budget)")
        first = _drc_noisy(jd, frac * epsilon, rng, ledger, width, "DRC (order)")
        noisy = _drc_noisy(jd, (1 - frac) * epsilon, rng, ledger, width, "DRC (fitted)")
        fitted = _isotonic_in_order(noisy, np.argsort(first, kind="stable"))
    else:
        noisy = _drc_noisy(jd, epsilon, rng, ledger, width, "DRC")
        fitted = _isotonic_in_order(noisy, np.argsort(jd.counts, kind="stable"))
    return JointDegree(jd.low, jd.high, fitted)


# --------------------------------------------------------------------------- honest DRC
def honest_thresholds(scales: np.ndarray, n_cells: int) -> np.ndarray:
    """``tau_c = b_c ln(N max(1, b_c))``: the default release threshold of
    :func:`drc_honest` for cells of noise scale ``b_c`` in a domain of ``N`` cells.

    A zero cell is published with probability ``exp(-tau/b) / 2 = 1 / (2 N max(1, b))``, so
    fewer than 1/2 spurious cells are expected, of expected total mass below
    ``(1 + max ln(N max(1, b))) / 2``.
    """
    scales = np.asarray(scales, dtype=float)
    return scales * np.log(n_cells * np.maximum(1.0, scales))


def _honest_noise(counts, high, row_scale, epsilon, rng, ledger) -> np.ndarray:
    """``counts`` of cells of larger degree ``high`` plus ``Lap(row_scale[high - 1])``, the
    public scale ``(4 t(h) + 1) / epsilon`` of their row."""
    return weighted_laplace_mechanism(
        counts,
        weights=row_scale[high - 1] * epsilon,
        sensitivity=1.0,
        epsilon=epsilon,
        rng=rng,
        ledger=ledger,
        label="honest DRC: Lap((4 t(h) + 1)/eps) on every cell (weighted L1 sensitivity < 1)",
    )


@register_mechanism(
    "drc_honest",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=EDGE_DP,
    paper="sala2011",
    audit={"cost_ms": 3},
)
def drc_honest(
    graph: Graph,
    *,
    epsilon: float,
    partition_width: int = 1,
    degree_bound="n_minus_1",
    threshold="auto",
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """DRC with a guarantee that holds: public scales on the whole domain (docs/design.md).

    Cell ``(l, h)`` gets ``Lap((4 t(h) + 1) / epsilon)``, ``t(h)`` the top of ``h``'s
    partition interval, on every cell ``1 <= l <= h <= D``. Epsilon-edge-DP among graphs on
    ``n`` nodes (``degree_bound="n_minus_1"``), or among graphs of maximum degree ``<=
    degree_bound`` (an integer; a graph above it raises
    :class:`~privpub.errors.NotApplicableError`).

    ``graph``, ``epsilon``, ``partition_width``, ``rng`` and ``ledger`` as :func:`drc` (the
    partition's scale uses the interval's top degree, a public number).

    Parameters
    ----------
    degree_bound : "n_minus_1" or int
        Public bound D on degrees; the domain is every cell ``1 <= l <= h <= D``.
    threshold : "auto", float or None
        Only cells whose noisy value exceeds ``tau_c`` are published. ``"auto"``:
        :func:`honest_thresholds`; a float ``t``: ``tau_c = t b_c``; None: publish every
        cell of the domain (allowed up to 2 * 10^6 cells).

    Returns
    -------
    Release
        The published cells (a :class:`JointDegree`); ``info``: ``domain_cells``,
        ``published_cells``; ``diagnostics``: ``spurious_cells`` (published cells that are
        0 in the graph: computed for the report, never used by the mechanism).
    """
    graph = check_graph(graph)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    width = _width(partition_width)
    bound = _degree_bound(graph, degree_bound)
    n_cells = bound * (bound + 1) // 2
    jd = joint_degree(graph)
    rows = np.arange(1, bound + 1, dtype=np.int64)
    row_scale = drc_scales(rows, partition_width=width, tops="public") / epsilon  # b for row h
    if threshold is None:
        return _honest_dense(jd, rows, row_scale, n_cells, epsilon, rng, ledger)
    tau_row = _row_thresholds(threshold, row_scale, n_cells)
    return _honest_sparse(jd, rows, row_scale, tau_row, n_cells, epsilon, rng, ledger)


def _honest_dense(jd: JointDegree, rows, row_scale, n_cells, epsilon, rng, ledger) -> Release:
    """:func:`drc_honest` with ``threshold=None``: every cell of the domain, noisy."""
    if n_cells > DENSE_MAX_CELLS:
        raise PrivpubError(
            f"threshold=None publishes all {n_cells} cells of the domain; allowed up to "
            f"{DENSE_MAX_CELLS}"
        )
    bound = rows.size
    high = np.repeat(rows, rows)
    low = np.concatenate([np.arange(1, h + 1) for h in rows]) if bound else high
    counts = np.zeros(high.size)
    if jd.size:
        pos = high * (bound + 1) + low
        counts[np.searchsorted(pos, jd.high * (bound + 1) + jd.low)] = jd.counts
    noisy = _honest_noise(counts, high, row_scale, epsilon, rng, ledger)
    out = JointDegree(low, high, noisy)
    info = {"domain_cells": float(n_cells), "published_cells": float(n_cells)}
    return Release(out, info)


def _row_thresholds(threshold, row_scale, n_cells) -> np.ndarray:
    """``tau`` of each row for :func:`drc_honest`'s ``threshold`` ("auto" or a number)."""
    if threshold == "auto":
        return honest_thresholds(row_scale, n_cells)
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise PrivpubError(
            f"threshold must be 'auto', a number or None, got {threshold!r}"
        ) from None
    if not math.isfinite(t):
        raise PrivpubError(f"threshold must be finite, got {threshold!r}")
    return t * row_scale


def _honest_sparse(jd: JointDegree, rows, row_scale, tau_row, n_cells, epsilon, rng,
                   ledger) -> Release:
    """:func:`drc_honest`'s thresholded release: the graph's cells above their threshold,
    and the zero cells of the domain above theirs, sampled exactly per row
    (docs/design.md): their number is Binomial(zeros, P[Lap(b) > tau]), their values
    ``tau + Exp(b)``."""
    noisy = _honest_noise(jd.counts, jd.high, row_scale, epsilon, rng, ledger)
    keep = noisy > tau_row[jd.high - 1]
    present = np.bincount(jd.high, minlength=rows.size + 1)[1:]
    zeros = rows - present
    if np.any(tau_row < 0):
        raise PrivpubError("thresholds must be >= 0 for the sparse release (use threshold=None)")
    p_row = 0.5 * np.exp(-tau_row / row_scale)
    # noise switched off (privpub.noise.noise_off): no zero cell exceeds its threshold
    k_row = np.zeros(zeros.size, np.int64) if is_noise_off() else rng.binomial(zeros, p_row)
    z_low, z_high = _spurious_cells(jd, rows, k_row, rng)
    z_val = tau_row[z_high - 1] + rng.exponential(row_scale[z_high - 1]) if z_high.size else []
    out = JointDegree(
        np.concatenate([jd.low[keep], z_low]),
        np.concatenate([jd.high[keep], z_high]),
        np.concatenate([noisy[keep], np.asarray(z_val, dtype=float)]),
    )
    info = {"domain_cells": float(n_cells), "published_cells": float(out.size)}
    # which released cells are spurious is exactly what the noise hides: a diagnostic
    return Release(out, info, {"spurious_cells": float(z_high.size)})


def _spurious_cells(jd: JointDegree, rows, k_row, rng) -> tuple[np.ndarray, np.ndarray]:
    """``k_row[h]`` distinct cells ``(l, rows[h])`` of each row that are 0 in ``jd``, drawn
    uniformly: the zero cells published by :func:`_honest_sparse`."""
    taken = set(zip(jd.low.tolist(), jd.high.tolist(), strict=True))
    z_low, z_high = [], []
    for h in np.flatnonzero(k_row):
        hh = int(rows[h])
        chosen = 0
        while chosen < k_row[h]:
            lw = int(rng.integers(1, hh + 1))
            if (lw, hh) not in taken:
                taken.add((lw, hh))
                z_low.append(lw)
                z_high.append(hh)
                chosen += 1
    return np.asarray(z_low, dtype=np.int64), np.asarray(z_high, dtype=np.int64)
