"""Pygmalion (sala2011): DRC and LDRC dK-2 releases, an honest DRC, and the synthetic graph.

Pipeline (sala2011 Fig 2): graph -> dK-2 series -> noise (DRC, Sec 4.1-4.2) -> isotonic
regression (LDRC, Sec 4.3) -> realizable JDM -> synthetic graph (:mod:`privpub.dk`).

DRC as published (:func:`drc`)
------------------------------
1. **Beta order** (Definition 3): tuples sorted by their larger degree, ties by the smaller
   one (the paper leaves ties open; any degree-only rule would do).
2. **Partitions** (the paper leaves the rule open; "Error analysis ... our algorithm does
   not specify the number of clusters"). Ours: contiguous runs of the beta series whose
   larger degree falls in the same interval ``[w j + 1, w (j + 1)]``, ``w =
   partition_width`` (default 1: one partition per larger degree, the finest cut, which
   gives the least noise since Lemma 2's bound grows with the partition's top degree).
   Every partition is contiguous in the beta order and they are mutually disjoint, as
   Lemmas 2-3 require.
3. **Noise**: ``Lap((4 d_k + 1) / epsilon)`` on each tuple of partition ``k``, ``d_k`` the
   largest degree among that partition's tuples (Lemma 2, Theorem 2), with the whole budget
   ``epsilon`` per partition (Theorem 3's parallel composition).

LDRC (:func:`ldrc`) replaces the DRC series by its L2 isotonic regression (Theorem 4,
:func:`privpub.isotonic.isotonic_regression`, the pool-adjacent-violators algorithm).
Theorem 4 asks for a non-decreasing fit of "the set of all tuples produced by DRC"; the only
order the paper defines on tuples is the beta order, so ``order="beta"`` (default) fits the
DRC series in that order. Degree-pair counts are not monotone in it, so this can *raise*
the error at large epsilon; two other orders are offered:

- ``order="noisy"``: paid for from the budget: ``order_fraction * epsilon`` buys a first
  DRC release that only sets the order; the rest buys the release that is fitted.
- the *true-count order*: the cells sorted by their *true* counts before the fit -- the trap
  found in public reimplementations (the order is data-dependent and unpaid, so the release
  is not differentially private at all). It is not an option of the DP mechanisms: it is
  registered on its own, with privacy ``none`` (:func:`ldrc_true_count_order`,
  :func:`pygmalion_true_count_order`), only to measure what the trap buys.

What DRC guarantees
-------------------
As published, DRC is *not* shown to be epsilon-edge-DP, for three reasons:

a. like dK-PA, only the tuples present in the graph get noise, so the support (which degree
   pairs occur) is released exactly -- an edge neighbour usually differs in it;
b. ``d_k`` is read from the partition's tuples: a local, data-dependent sensitivity (Wang &
   Wu 2013); with ``partition_width > 1`` a neighbour can change ``d_k`` and so the scale;
c. Theorem 3 composes the partitions in parallel, but one edge changes tuples in several
   partitions (every edge at either endpoint moves to a new cell), so parallel composition
   does not apply.

(c) turns out to be harmless: with ``Lap((4 t_c + 1) / epsilon)`` on every cell ``c`` for
any public ``t_c >= max(c)``, the privacy loss of one edge is at most ``epsilon * sum_c
|Delta_c| / (4 t_c + 1)``, and adding ``{u, v}`` (degrees ``a, b``) gives ``sum_c |Delta_c| /
(4 max(c) + 1) <= 1 / (4 max(a, b) + 5) + sum_{x in {a, b}} x (1 / (4 x + 1) + 1 / (4 x +
5)) < 1`` (each of ``x``'s ``x`` edges leaves a cell of larger degree ``>= x`` and enters one
``>= x + 1``; ``x (8 x + 6) / ((4 x + 1)(4 x + 5)) < 1 / 2``; the total tends to 1 as ``a, b``
grow). The weighted L1 sensitivity is therefore below 1 and the weighted Laplace mechanism
(:func:`privpub.noise.weighted_laplace_mechanism`) is epsilon-DP -- *provided* (a) and (b)
are fixed. ``tests`` brute-force this bound over every graph on up to 6 nodes.

The honest variant (:func:`drc_honest`)
---------------------------------------
Same per-cell scales, made public: cell ``(l, h)`` gets ``Lap((4 t(h) + 1) / epsilon)`` with
``t(h)`` the top of ``h``'s partition interval (``= h`` for width 1), on *every* cell of the
domain ``1 <= l <= h <= D``, ``D`` a public degree bound (default ``n - 1``, the node count
being public in edge-DP). It is epsilon-edge-DP among graphs on ``n`` nodes (or of maximum
degree ``<= D`` when ``degree_bound`` is an integer; a graph above it is not applicable).
The domain has ``D (D + 1) / 2`` cells (5 * 10^10 for web-NotreDame), so the release is
*thresholded*: only cells whose noisy value exceeds ``tau_c = b_c ln(N max(1, b_c))`` are
published (``b_c`` the cell's scale, ``N`` the number of cells), a post-processing that
keeps the expected number of spurious cells below 1/2 and their expected mass small. Zero
cells above the threshold are sampled exactly without touching the other cells: per row,
their number is Binomial(zeros, P[Lap(b) > tau]) and their values ``tau + Exp(b)`` (the
Laplace tail is memoryless). The thresholded release is exactly the full noisy vector with
every value below its threshold set to 0.

The synthetic graph (:func:`pygmalion`)
---------------------------------------
The noisy series goes through :func:`privpub.dk.repair_joint_degree` (post-processing,
never reading the graph) and :func:`privpub.dk.generate_graph`. The release carries in its
``info`` the repair's and the generator's L1 changes and the graph's size.

References
----------
.. [SZWZZ11] A. Sala, X. Zhao, C. Wilson, H. Zheng, B. Y. Zhao. Sharing graphs using
   differentially private graph models. IMC 2011, Sec 4 (Definition 3, Lemmas 2-3,
   Theorems 2-4), Sec 5.
.. [WW13] Y. Wang, X. Wu. Preserving differential privacy in degree-correlation based graph
   generation. Transactions on Data Privacy 6(2), 2013.
.. [HRMS10] M. Hay, V. Rastogi, G. Miklau, D. Suciu. Boosting the accuracy of
   differentially private histograms through consistency. PVLDB 3(1), 2010.
"""

from __future__ import annotations

import math

import numpy as np

from baselines.dk_pa import CAVEAT_DK_PA, dk_pa
from privpub.dk import (
    GENERATORS,
    check_graph,
    generate_graph,
    joint_degree,
    repair_joint_degree,
)
from privpub.errors import NotApplicableError, PrivpubError
from privpub.isotonic import isotonic_regression
from privpub.ledger import PrivacyLedger
from privpub.noise import is_noise_off, weighted_laplace_mechanism
from privpub.registry import EDGE_DP, NO_PRIVACY, register_mechanism
from privpub.types import Graph, JointDegree, Kind, Release
from privpub.validation import check_epsilon, check_fraction, check_positive_int, check_rng

__all__ = [
    "ORDERS",
    "METHODS",
    "drc_scales",
    "drc",
    "ldrc",
    "ldrc_true_count_order",
    "drc_honest",
    "pygmalion",
    "pygmalion_true_count_order",
    "honest_thresholds",
    "CAVEAT_DRC",
    "CAVEAT_TRUE_ORDER",
]

#: Orders LDRC may fit in (see the module docstring); the true-count order is not one of them.
ORDERS = ("beta", "noisy")

#: dK-2 releases :func:`pygmalion` can build its graph from.
METHODS = ("ldrc", "drc", "dk_pa", "drc_honest")

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


# --------------------------------------------------------------------------- checks
def _order(order) -> str:
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
        The order of the non-decreasing fit (module docstring): the beta series (default,
        the paper's own order) or the order of a separate DRC release bought with
        ``order_fraction * epsilon``.
    order_fraction : float
        Share of epsilon spent on the ordering release when ``order="noisy"``.
    """
    return _ldrc(graph, epsilon=epsilon, partition_width=partition_width, order=_order(order),
                 order_fraction=order_fraction, rng=rng, ledger=ledger)


@register_mechanism(
    "ldrc_true_count_order",
    input_kind=Kind.GRAPH,
    output_kind=Kind.JOINT_DEGREE,
    privacy=NO_PRIVACY,
    paper="sala2011",
    caveat=CAVEAT_TRUE_ORDER,
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
    """:func:`ldrc` in any order, the true-count one included (module docstring)."""
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
    """DRC with a guarantee that holds: public scales on the whole domain (module docstring).

    Epsilon-edge-DP among graphs on ``n`` nodes (``degree_bound="n_minus_1"``), or among
    graphs of maximum degree ``<= degree_bound`` (an integer; a graph above it raises
    :class:`~privpub.errors.NotApplicableError`).

    ``graph``, ``epsilon``, ``partition_width``, ``rng`` and ``ledger`` as :func:`drc` (the
    partition's scale uses the interval's top degree, a public number).

    Parameters
    ----------
    degree_bound : "n_minus_1" or int
        Public bound D on degrees; the domain is every cell ``1 <= l <= h <= D``.
    threshold : "auto", float or None
        ``"auto"``: :func:`honest_thresholds`; a float ``t``: ``tau_c = t b_c``; None: publish
        every cell of the domain (allowed up to 2 * 10^6 cells).

    Returns
    -------
    Release
        The published cells (a :class:`JointDegree`); ``info``: ``domain_cells``,
        ``published_cells``, ``spurious_cells`` (published cells that are 0 in the graph:
        computed for the report, never used by the mechanism).
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
        if n_cells > DENSE_MAX_CELLS:
            raise PrivpubError(
                f"threshold=None publishes all {n_cells} cells of the domain; allowed up to "
                f"{DENSE_MAX_CELLS}"
            )
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

    if threshold == "auto":
        tau_row = honest_thresholds(row_scale, n_cells)
    else:
        try:
            t = float(threshold)
        except (TypeError, ValueError):
            raise PrivpubError(
                f"threshold must be 'auto', a number or None, got {threshold!r}"
            ) from None
        if not math.isfinite(t):
            raise PrivpubError(f"threshold must be finite, got {threshold!r}")
        tau_row = t * row_scale
    # cells present in the graph: noise, then the threshold
    noisy = _honest_noise(jd.counts, jd.high, row_scale, epsilon, rng, ledger)
    keep = noisy > tau_row[jd.high - 1]
    low, high, val = [jd.low[keep]], [jd.high[keep]], [noisy[keep]]
    # zero cells of the domain: the ones above the threshold, sampled exactly per row
    present = np.bincount(jd.high, minlength=bound + 1)[1:]
    zeros = rows - present
    if np.any(tau_row < 0):
        raise PrivpubError("thresholds must be >= 0 for the sparse release (use threshold=None)")
    p_row = 0.5 * np.exp(-tau_row / row_scale)
    # noise switched off (privpub.noise.noise_off): no zero cell exceeds its threshold
    k_row = np.zeros(zeros.size, np.int64) if is_noise_off() else rng.binomial(zeros, p_row)
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
    z_high = np.asarray(z_high, dtype=np.int64)
    z_val = tau_row[z_high - 1] + rng.exponential(row_scale[z_high - 1]) if z_high.size else []
    low.append(np.asarray(z_low, dtype=np.int64))
    high.append(z_high)
    val.append(np.asarray(z_val, dtype=float))
    out = JointDegree(np.concatenate(low), np.concatenate(high), np.concatenate(val))
    info = {
        "domain_cells": float(n_cells),
        "published_cells": float(out.size),
        "spurious_cells": float(z_high.size),
    }
    return Release(out, info)


# --------------------------------------------------------------------------- the graph
def _pygmalion_caveat(params: dict) -> str | None:
    method = params.get("method", "ldrc")
    if method == "drc_honest":
        return None
    if method == "dk_pa":
        return CAVEAT_DK_PA
    return CAVEAT_DRC


@register_mechanism(
    "pygmalion",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=EDGE_DP,
    paper="sala2011",
    caveat=_pygmalion_caveat,
)
def pygmalion(
    graph: Graph,
    *,
    epsilon: float,
    method: str = "ldrc",
    order: str = "beta",
    partition_width: int = 1,
    generator: str = "auto",
    max_edges: int = 10_000_000,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """A Pygmalion synthetic graph: a noisy dK-2 series, repaired and generated (sala2011 Sec 5).

    ``graph``, ``epsilon``, ``rng`` and ``ledger`` as :func:`drc`.

    Parameters
    ----------
    method : {"ldrc", "drc", "dk_pa", "drc_honest"}
        The dK-2 release (sala2011 uses LDRC). Its guarantee is the graph's: the caveat of
        each row says which one holds.
    order : {"beta", "noisy"}
        LDRC's fitting order (only for ``method="ldrc"``).
    partition_width : int
        DRC partitions (``drc``, ``ldrc``, ``drc_honest``).
    generator : {"auto", "networkx", "stub_matching"}
        See :func:`privpub.dk.generate_graph`.
    max_edges : int
        A repaired series with more edges is not generated: the cell is not applicable
        (:class:`~privpub.errors.NotApplicableError`, recorded as skipped), as sala2011 Sec
        5.1 reports its generator failing on very noisy series. The test reads the noisy
        release only (post-processing).

    Returns
    -------
    Release
        The synthetic :class:`Graph`; ``info``: ``repair_l1`` (L1 change made by the repair),
        ``generation_l1`` (L1 distance of the graph's dK-2 to the repaired target; 0 unless
        the stub-matching simplification dropped edges), ``dropped_edges``, ``nodes``,
        ``edges``.
    """
    graph = check_graph(graph)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    if method not in METHODS:
        raise PrivpubError(f"method must be one of {METHODS}, got {method!r}")
    _order(order)
    max_edges = _check_generation(generator, max_edges)
    if method == "ldrc":
        noisy = ldrc(graph, epsilon=epsilon, partition_width=partition_width, order=order,
                     rng=rng, ledger=ledger)
    elif method == "drc":
        noisy = drc(graph, epsilon=epsilon, partition_width=partition_width, rng=rng,
                    ledger=ledger)
    elif method == "dk_pa":
        noisy = dk_pa(graph, epsilon=epsilon, rng=rng, ledger=ledger)
    else:
        noisy = drc_honest(graph, epsilon=epsilon, partition_width=partition_width, rng=rng,
                           ledger=ledger).value
    return synthesize(noisy, rng=rng, generator=generator, name=f"pygmalion({graph.name})",
                      max_edges=max_edges)


@register_mechanism(
    "pygmalion_true_count_order",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=NO_PRIVACY,
    paper="sala2011",
    caveat=CAVEAT_TRUE_ORDER,
)
def pygmalion_true_count_order(
    graph: Graph,
    *,
    epsilon: float,
    partition_width: int = 1,
    generator: str = "auto",
    max_edges: int = 10_000_000,
    rng: np.random.Generator,
) -> Release:
    """A Pygmalion graph from :func:`ldrc_true_count_order`: **not** private (the trap of
    public reimplementations; privacy ``none``). Parameters as :func:`pygmalion`."""
    max_edges = _check_generation(generator, max_edges)
    noisy = ldrc_true_count_order(graph, epsilon=epsilon, partition_width=partition_width,
                                  rng=rng)
    return synthesize(noisy, rng=rng, generator=generator, name=f"pygmalion({graph.name})",
                      max_edges=max_edges)


def _check_generation(generator: str, max_edges) -> int:
    """The graph step's options, checked before any budget is spent; returns ``max_edges``."""
    if generator not in GENERATORS:
        raise PrivpubError(f"generator must be one of {GENERATORS}, got {generator!r}")
    return check_positive_int(max_edges, "max_edges")


def synthesize(jd: JointDegree, *, rng: np.random.Generator, generator: str = "auto",
               name: str = "", max_edges: int | None = None) -> Release:
    """Repair ``jd`` (:func:`privpub.dk.repair_joint_degree`) and generate a graph from it
    (:class:`~privpub.errors.NotApplicableError` beyond ``max_edges`` edges)."""
    target, repair = repair_joint_degree(jd)
    if max_edges is not None and repair["edges"] > max_edges:
        raise NotApplicableError(
            f"the noisy dK-2 series implies {repair['edges']:.0f} edges, more than "
            f"max_edges={max_edges}: not generated (sala2011 Sec 5.1: the generator fails on "
            "very noisy series)"
        )
    synthetic, report = generate_graph(target, rng=rng, generator=generator, name=name)
    info = {
        "repair_l1": repair["l1_from_input"],
        "generation_l1": report.l1_to_target,
        "dropped_edges": float(report.dropped),
        "nodes": float(synthetic.n_nodes),
        "edges": float(synthetic.n_edges),
    }
    return Release(synthetic, info)
