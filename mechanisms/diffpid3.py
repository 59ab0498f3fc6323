"""DiffPID3: private ID3 decision trees with the exponential mechanism or local dampening.

farias2021 Sec 5.2 / Algorithm 2 (after Friedman & Schuster 2010, [FS10]) builds a tree of
depth ``d`` with budget ``B``: every node spends ``eps = B / (2 (d + 1))`` on a noisy count
``N_T``; a node becomes a leaf when no attribute is left, ``d = 0`` or
``N_T / (t |C|) < sqrt(2) / 2`` (``t`` the largest domain among the remaining attributes) and
then labels itself with the class of largest noisy count (``eps`` again: the class counts are
a histogram, L1 sensitivity 1); otherwise it chooses the split attribute with ``eps`` and
recurses into one child per value of it. Siblings hold disjoint records, so every
root-to-leaf path spends at most ``2 eps (d + 1) = B`` (sequential + parallel composition).

The three variants differ only in the split choice (line 12 of Algorithm 2):

``global_diffpid3``  the exponential mechanism with global sensitivity ([FS10]):
    information gain ``Delta IG = log2(N + 1) + 1 / ln 2`` (``N`` the size of the input
    table, public by assumption as in [FS10]), Gini ``Delta = 2``.
``local_diffpid3``   the local dampening mechanism (Definition 3.8) with the element local
    sensitivity at distance ``t`` (IG: Lemmas 5.5-5.6; Gini: ours, below), bounded by the
    global sensitivity (Lemma 3.5).
``shifted_local_diffpid3``  the shifted local dampening mechanism (Definition 4.3), the
    ``s -> inf`` limit in closed form (:mod:`privpub.algorithms.dampening`).

The utilities (information gain, Gini), their element local sensitivities at distance
``t`` (our O(1) form of the Candidates algorithm and why it drops the condition ``a < tau``;
Gini's, which the paper omits), the public binning of continuous attributes and the
compiled split choice are explained in docs/design.md, "farias2021: local dampening"
(DiffPID3). The table encoding is :mod:`privpub.algorithms.encoding`.

References
----------
.. [FS10] A. Friedman, A. Schuster. Data mining with differential privacy. KDD 2010.
.. [FBF+21] V. Farias et al. Local Dampening. PVLDB 14(4), 2021. Sec 5.2, Algorithms 2-3,
   Lemmas 5.5-5.6; Sec 6.2, Fig. 6.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from scipy.special import digamma, xlogy

from privpub.algorithms.dampening import (
    DAMPEN_FIRST_BLOCK,
    DEFAULT_MAX_STEPS,
    MAX_BLOCK,
    local_dampening,
    shifted_local_dampening,
)
from privpub.algorithms.encoding import EncodedTable, TableEncoder
from privpub.algorithms.pairwise import pairwise_sum
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import exponential_mechanism, laplace_noise
from privpub.registry import RECORD_DP, register_mechanism
from privpub.types import Kind, Table
from privpub.validation import check_depth, check_epsilon, check_positive_int, check_rng

__all__ = [
    "CRITERIA",
    "VARIANTS",
    "PrivateDecisionTree",
    "diffpid3",
    "global_diffpid3",
    "local_diffpid3",
    "shifted_local_diffpid3",
    "information_gain",
    "gini_utility",
    "ig_global_sensitivity",
    "ig_element_sensitivity",
    "ig_penalty",
    "gini_element_sensitivity",
    "gini_penalty",
    "f_add",
]

CRITERIA = ("ig", "gini")
VARIANTS = ("global", "local", "shifted")
_LN2 = math.log(2.0)
_STOP = math.sqrt(2.0) / 2.0


# --------------------------------------------------------------------------- utilities
def _counts(counts) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 2:
        raise PrivpubError("contingency counts must be a 2-D array (values x classes)")
    return c


def information_gain(counts) -> float:
    """``sum_j sum_c tau_jc log2(tau_jc / tau_j)`` = ``-tau H(C | A)`` (<= 0; higher is better)."""
    c = _counts(counts)
    tj = c.sum(axis=1)
    return float((xlogy(c, c).sum() - xlogy(tj, tj).sum()) / _LN2)


def gini_utility(counts) -> float:
    """``-sum_j tau_j (1 - sum_c (tau_jc / tau_j)^2)`` (<= 0; higher is better) [FS10]."""
    c = _counts(counts)
    tj = c.sum(axis=1)
    nz = tj > 0
    return float(np.sum((c[nz] ** 2).sum(axis=1) / tj[nz] - tj[nz]))


def ig_global_sensitivity(n_rows: int) -> float:
    """``log2(N + 1) + 1 / ln 2`` ([FS10]; farias2021 Sec 5.2)."""
    n = int(n_rows)
    return math.log2(n + 1) + 1.0 / _LN2


def f_add(x) -> np.ndarray:
    """``f(x) = (x + 1) log2(x + 1) - x log2 x`` (Lemma 5.5), 0 for ``x <= 0``: the change of
    ``x log x`` when ``x`` grows by one."""
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    return (xlogy(x + 1.0, x + 1.0) - xlogy(x, x)) / _LN2


def _pairs(counts):
    """The pairs ``(a, b) = (tau_j, tau_jc)`` of Lemma 5.6, value-major, as integers."""
    c = _counts(counts)
    a = np.repeat(c.sum(axis=1), c.shape[1])
    b = c.ravel()
    return a.astype(np.int64), b.astype(np.int64)


# ---------------------------------------------------------------- exact compiled kernels
# The split choice of every node evaluates the utilities, the dampened utilities (local) or
# the penalties (shifted) of all candidate attributes. The kernels below do it compiled on
# integer counts and give the *same bits* as the numpy formulas above and
# :func:`privpub.algorithms.dampening.dampen`: every logarithm is read from tables filled by the
# same
# scipy/numpy ufuncs, and every floating-point sum is done in the same order (numpy's
# pairwise summation for ``np.sum``, dampen's blocks for ``b(i)``). The tests compare them
# with those formulas (kept as the reference) for equality, not closeness.
_XLOGY = np.zeros(2)  # xlogy(k, k) = k ln k for k = 0, 1, ... (grown on demand)
_XLOGX = np.zeros(2)  # k log2 k
_FADD = np.zeros(2)  # f_add(k)


def _tables(size: int = 0):
    """``(k ln k, k log2 k, f_add(k))`` for ``k = 0, 1, ...`` (at least ``size`` entries).

    Each entry is what ``xlogy(k, k)``, ``xlogy(k, k) / ln 2`` and :func:`f_add` give on the
    float ``k`` alone (elementwise ufuncs), so a lookup replaces that call exactly.
    """
    global _XLOGY, _XLOGX, _FADD
    if _XLOGY.size < size:
        k = np.arange(max(size, 2 * _XLOGY.size), dtype=np.float64)
        xl = xlogy(k, k)
        _XLOGY, _XLOGX, _FADD = xl, xl / _LN2, f_add(k)
    return _XLOGY, _XLOGX, _FADD


@njit(cache=True, nogil=True)
def _cell_counts(keys, rows, attrs, n_cells):  # pragma: no cover - compiled
    """``counts[key]`` over the given rows and attributes (``keys``: one cell per record and
    attribute, see :class:`_Builder`): every candidate's contingency table at once."""
    counts = np.zeros(n_cells, dtype=np.int64)
    for r in rows:
        for a in attrs:
            counts[keys[r, a]] += 1
    return counts


@njit(cache=True, nogil=True)
def _utilities(counts, tj, lo, vlo, size, n_classes, gini, xlogy_k):  # pragma: no cover
    """:func:`information_gain` or :func:`gini_utility` of every candidate ``k``, whose
    contingency table is ``counts[lo[k]:lo[k] + size[k] * C]`` (value-major) with the value
    totals ``tj[vlo[k]:vlo[k] + size[k]]``."""
    n = lo.size
    u = np.empty(n)
    buf = np.empty(0)
    for k in range(n):
        s = size[k]
        if buf.size < s * n_classes:
            buf = np.empty(s * n_classes)
        if gini:
            m = 0
            for j in range(s):
                t = float(tj[vlo[k] + j])
                if t > 0:
                    q = 0.0
                    for c in range(n_classes):
                        v = float(counts[lo[k] + j * n_classes + c])
                        q += v * v
                    buf[m] = q / t - t
                    m += 1
            u[k] = pairwise_sum(buf, 0, m)
        else:
            for i in range(s * n_classes):
                buf[i] = xlogy_k[counts[lo[k] + i]]
            cells = pairwise_sum(buf, 0, s * n_classes)
            for j in range(s):
                buf[j] = xlogy_k[tj[vlo[k] + j]]
            u[k] = (cells - pairwise_sum(buf, 0, s)) / _LN2
    return u


@njit(cache=True, nogil=True)
def _partition(x, y, rows, attr, n_values, n_classes):  # pragma: no cover - compiled
    """The records ``rows`` grouped by their value of ``attr`` (a stable counting sort: the
    order of ``np.argsort(x[rows, attr], kind="stable")``), the group bounds and every
    group's class counts (``cls[v, c]``)."""
    cls = np.zeros((n_values, n_classes), dtype=np.int64)
    for r in rows:
        cls[x[r, attr], y[r]] += 1
    bounds = np.zeros(n_values + 1, dtype=np.int64)
    for v in range(n_values):
        bounds[v + 1] = bounds[v] + cls[v].sum()
    pos = bounds[:-1].copy()
    out = np.empty(rows.size, dtype=np.int64)
    for r in rows:
        v = x[r, attr]
        out[pos[v]] = r
        pos[v] += 1
    return out, bounds, cls


@njit(cache=True, nogil=True)
def _f_int(x, table):  # pragma: no cover - compiled
    """f(x) = (x + 1) log2(x + 1) - x log2 x for an integer x (0 for x <= 0)."""
    if x <= 0:
        return 0.0
    return table[x + 1] - table[x]


@njit(cache=True, nogil=True)
def _ig_delta(a, b, lo, hi, t, table):  # pragma: no cover - compiled
    """``LS^IG(T, t, A)`` over the pairs ``a[lo:hi], b[lo:hi]`` (see
    :func:`ig_element_sensitivity`); ``table`` is ``k log2 k`` up to ``max a + t + 1``."""
    best = 0.0
    for p in range(lo, hi):
        ap = a[p]
        bp = b[p]
        m = min(t, bp)
        v = max(_f_int(ap + t, table) - _f_int(bp, table),
                _f_int(ap + t - 2 * m, table) - _f_int(bp - m, table))
        if bp >= 1:
            mm = min(t, bp - 1)
            v = max(v, _f_int(ap - 1 + t, table) - _f_int(bp - 1, table))
            v = max(v, _f_int(ap - 1 + t - 2 * mm, table) - _f_int(bp - 1 - mm, table))
        if v > best:
            best = v
    return best


@njit(cache=True, nogil=True)
def _ig_deltas(a, b, ts, table):  # pragma: no cover - compiled
    out = np.empty(ts.size)
    for i in range(ts.size):
        out[i] = _ig_delta(a, b, 0, a.size, ts[i], table)
    return out


def ig_element_sensitivity(counts, t) -> np.ndarray:
    """``LS^IG(T, t, A)`` (Lemma 5.6) for the contingency counts of attribute ``A``, at every
    distance in ``t`` (an int array): the max over values, classes and the candidates of
    Algorithm 3 of ``h(a, b) = max(f(a) - f(b), g(b) - g(a))`` (docs/design.md, DiffPID3)."""
    a, b = _pairs(counts)
    t = np.atleast_1d(np.asarray(t, dtype=np.int64))
    _, table, _ = _tables(int(a.max(initial=0)) + int(t.max(initial=0)) + 3)
    return _ig_deltas(a, b, t, table)


@njit(cache=True, nogil=True)
def _distinct_pairs(a, b, lo, hi):  # pragma: no cover - compiled
    """The distinct pairs among ``a, b[lo:hi]``, in order of first appearance: every maximum
    over the pairs (:func:`_ig_delta`) is the same over them, and empty values repeat."""
    ua = np.empty(hi - lo, dtype=np.int64)
    ub = np.empty(hi - lo, dtype=np.int64)
    q = 0
    for p in range(lo, hi):
        seen = False
        for r in range(q):
            if ua[r] == a[p] and ub[r] == b[p]:
                seen = True
                break
        if not seen:
            ua[q] = a[p]
            ub[q] = b[p]
            q += 1
    return ua[:q], ub[:q]


@njit(cache=True, nogil=True)
def _dampened(u, gini, a, b, lo, hi, m, bound, table, first, cap,
              max_steps):  # pragma: no cover - compiled
    """:func:`privpub.algorithms.dampening.dampen` of ``u`` with the bounded ``min(delta, bound)``,
    for
    every candidate ``k``: IG's element local sensitivity over the pairs ``a, b[lo[k]:hi[k]]``
    or Gini's ``2 (m_k + t) / (m_k + t + 1)``.

    The same arithmetic as dampen, walking its blocks of distances (``first``, doubling up
    to ``cap``): ``b(t + 1)`` = the sum before the block + the running sum in it. Returns
    ``(out, need)``: ``need > 0`` asks for a larger ``table``; NaN marks a candidate that did
    not finish within ``max_steps`` distances.
    """
    n = u.size
    out = np.full(n, np.nan)
    for k in range(n):
        ua, ub = _distinct_pairs(a, b, lo[k], lo[k] if gini else hi[k])  # IG's pairs
        amax = ua.max() if ua.size else 0
        mag = abs(u[k])
        neg = u[k] < 0
        b_prev = 0.0
        t0 = 0
        size = first
        while t0 < max_steps:
            end = min(t0 + size, max_steps)
            if not gini and amax + end + 1 >= table.size:
                return out, amax + end + 2
            s = 0.0
            prev = b_prev
            d = 0.0
            done = False
            for t in range(t0, end):
                if gini:
                    tf = float(t)
                    d = 2.0 * (m[k] + tf) / (m[k] + tf + 1.0)
                else:
                    d = _ig_delta(ua, ub, 0, ua.size, t, table)
                if d > bound:
                    d = bound
                s += d
                bs = b_prev + s
                if (bs >= mag) if neg else (bs > mag):
                    width = bs - prev
                    frac = (mag - prev) / width if width > 0 else 0.0
                    out[k] = t + frac
                    done = True
                    break
                prev = bs
            if not done and d >= bound:  # continues linearly with slope 1 / bound
                out[k] = end + (mag - prev) / bound
                done = True
            if done:
                if neg:
                    out[k] = -out[k]
                break
            b_prev = prev
            t0 = end
            size = min(size * 2, cap)
    return out, 0


def _dampened_scores(u, gini, a, b, lo, hi, m, bound):
    """The dampened utilities (Definition 3.6) of the split candidates, exactly as
    ``dampen(u, delta, global_sensitivity=bound)`` computes them (see :func:`_dampened`)."""
    while True:
        _, table, _ = _tables()
        out, need = _dampened(u, gini, a, b, lo, hi, m, bound, table, DAMPEN_FIRST_BLOCK,
                              MAX_BLOCK, DEFAULT_MAX_STEPS)
        if not need:
            break
        _tables(need)
    if np.isnan(out).any():
        raise PrivpubError(f"dampening did not reach |u| within {DEFAULT_MAX_STEPS} distances")
    return out


@njit(cache=True, nogil=True)
def _ig_penalty_prefix(a, b, bound, t_stop, table):  # pragma: no cover - compiled
    """sum_{t < t_stop} (bound - min(delta(t), bound)) for integer counts a, b; returns
    (sum, t at which delta reached the bound or -1)."""
    pen = 0.0
    for t in range(t_stop):
        best = _ig_delta(a, b, 0, a.size, t, table)
        if best >= bound:
            return pen, t
        pen += bound - best
    return pen, -1


@njit(cache=True, nogil=True)
def _ig_tail_ready(a, b, t, alpha, bound, fadd):  # pragma: no cover - compiled
    """True when from ``t`` on the maximum of :func:`ig_penalty` is ``f(t + alpha)``: the
    ``i = 0`` terms no longer exceed it (concavity keeps them below)."""
    tail = fadd[max(t + alpha, 0)]
    if tail >= bound:
        return True
    for p in range(a.size):
        if fadd[t + a[p]] - fadd[b[p]] > tail:
            return False
        if b[p] >= 1 and fadd[t + a[p] - 1] - fadd[b[p] - 1] > tail:
            return False
    return True


@njit(cache=True, nogil=True)
def _ig_tail_sum(t, alpha, bound, xlogx, fadd):  # pragma: no cover - compiled
    """``sum_{s >= t} (bound - min(f(s + alpha), bound))`` in closed form (``sum f(k) =
    k log2 k`` telescopes), up to the first ``k = s + alpha`` with ``f(k) >= bound``.
    Returns ``(sum, need)``, ``need > 0`` asking for larger tables."""
    hi = max(float(t + alpha), 1.0)
    while True:
        if int(hi) >= fadd.size:
            return 0.0, 2 * int(hi) + 2
        if fadd[int(hi)] >= bound:
            break
        hi *= 2
    lo_i, hi_i = max(t + alpha, 0), int(hi)
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if fadd[mid] >= bound:
            hi_i = mid
        else:
            lo_i = mid + 1
    t_end = max(hi_i - alpha, t)
    k_end, k_start = max(t_end + alpha, 0), max(t + alpha, 0)
    if k_end >= xlogx.size:
        return 0.0, k_end + 1
    return (t_end - t) * bound - (xlogx[k_end] - xlogx[k_start]), 0


@njit(cache=True, nogil=True)
def _ig_penalties(a, b, lo, hi, bound, xlogx, fadd):  # pragma: no cover - compiled
    """:func:`ig_penalty` of every candidate ``k`` (pairs ``a, b[lo[k]:hi[k]]``). Returns
    ``(pen, t_more, need)``: ``t_more[k] >= 0`` when candidate ``k`` needs more distances
    evaluated from ``t_more[k]`` on (done in Python), ``need > 0`` asks for larger tables."""
    n = lo.size
    pen = np.zeros(n)
    t_more = np.full(n, -1, dtype=np.int64)
    for k in range(n):
        ak, bk = _distinct_pairs(a, b, lo[k], hi[k])
        alpha = ak[0] if bk[0] == 0 else ak[0] - 2 * bk[0] + 1
        for p in range(ak.size):
            alpha = max(alpha, ak[p] if bk[p] == 0 else ak[p] - 2 * bk[p] + 1)
        t = bk.max()
        amax = ak.max()
        if amax + t + 3 > xlogx.size or amax + t + 1 >= fadd.size:
            return pen, t_more, amax + t + 3
        p, hit = _ig_penalty_prefix(ak, bk, bound, t, xlogx)
        pen[k] = p
        if hit >= 0:
            continue
        if not _ig_tail_ready(ak, bk, t, alpha, bound, fadd):
            t_more[k] = t
            continue
        tail, need = _ig_tail_sum(t, alpha, bound, xlogx, fadd)
        if need:
            return pen, t_more, need
        pen[k] += tail
    return pen, t_more, 0


def _ig_penalty_scores(a, b, lo, hi, bound) -> np.ndarray:
    """:func:`ig_penalty` of the candidates with pairs ``a, b[lo[k]:hi[k]]`` (integers)."""
    while True:
        _, xlogx, fadd = _tables()
        pen, t_more, need = _ig_penalties(a, b, lo, hi, bound, xlogx, fadd)
        if not need:
            break
        _tables(need)
    for k in np.flatnonzero(t_more >= 0):
        pen[k] = _ig_penalty_continue(a[lo[k]:hi[k]], b[lo[k]:hi[k]], bound, int(t_more[k]),
                                      float(pen[k]))
    return pen


def _ig_penalty_continue(a, b, bound, t, pen) -> float:
    """:func:`ig_penalty` from distance ``t`` on, ``pen`` being the sum before ``t``, when an
    ``i = 0`` term can still exceed the tail form there (not met in practice): 64 more
    distances at a time until the tail form holds."""
    alpha = int(np.max(np.where(b == 0, a, a - 2 * b + 1)))
    while True:
        more, hit = _ig_penalty_prefix_from(a, b, bound, t, 64)
        pen += more
        if hit >= 0:
            return pen
        t += 64
        _, xlogx, fadd = _tables(t + int(a.max()) + 3)
        if _ig_tail_ready(a, b, t, alpha, bound, fadd):
            break
    while True:
        tail, need = _ig_tail_sum(t, alpha, bound, xlogx, fadd)
        if not need:
            return pen + tail
        _, xlogx, fadd = _tables(need)


def ig_penalty(counts, global_sensitivity: float) -> float:
    """``sum_{t >= 0} (Delta - min(LS^IG(T, t, A), Delta))``, exactly.

    Up to ``t0 = max tau_jc`` (and while a non-tail term still matters) every distance is
    evaluated; beyond, the maximum is ``f(t + alpha)`` with
    ``alpha = max_jc (tau_j if tau_jc = 0 else tau_j - 2 tau_jc + 1)`` and the sum is
    closed-form (``sum f(k) = k log2 k`` telescopes).
    """
    a, b = _pairs(counts)
    ends = np.array([0, a.size], dtype=np.int64)
    return float(_ig_penalty_scores(a, b, ends[:1], ends[1:], float(global_sensitivity))[0])


def _ig_penalty_prefix_from(a, b, bound, t, n):
    _, table, _ = _tables(int(a.max(initial=0)) + t + n + 3)
    delta = _ig_deltas(a, b, np.arange(t, t + n), table)
    reached = np.flatnonzero(delta >= bound)
    stop = reached[0] if reached.size else n
    return float(np.sum(bound - delta[:stop])), (t + stop if reached.size else -1)


def gini_element_sensitivity(counts, t) -> np.ndarray:
    """``delta^Gini(T, t, A) = 2 (m + t) / (m + t + 1)``, ``m = max_j tau_j`` (see module)."""
    m = float(_counts(counts).sum(axis=1).max(initial=0.0))
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    return 2.0 * (m + t) / (m + t + 1.0)


def _gini_penalties(m) -> np.ndarray:
    """:func:`gini_penalty` for every largest value group ``m`` (elementwise)."""
    return -2.0 * (digamma(np.asarray(m, dtype=np.float64) + 1.0) + np.euler_gamma)


def gini_penalty(counts) -> float:
    """``-2 H_m``: ``sum_t (2 - delta^Gini(t))`` minus the common divergent ``sum_t 2/(t+1)``."""
    return float(_gini_penalties(_counts(counts).sum(axis=1).max(initial=0.0)))


# --------------------------------------------------------------------------- the tree
@dataclass(eq=False)
class PrivateDecisionTree:
    """A released DiffPID3 tree: ``predict(table)`` and ``refit(table, rng=...)``.

    ``refit`` learns a new tree from another table with the same parameters (and a fresh
    budget): the cross-validation metric ``accuracy_cv_learner`` uses it to score the
    *learner*, as farias2021 Sec 6.2 does (10-fold cross-validation), on folds cut from one
    ``encode_table`` of the original table.
    """

    encoder: TableEncoder
    attribute: np.ndarray  # per node: feature index, -1 for a leaf
    first_child: np.ndarray  # per internal node: index of the child for value 0
    label: np.ndarray  # per leaf: class index
    params: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        return int(self.attribute.size)

    @property
    def depth(self) -> int:
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for v in range(self.n_nodes):
            if self.attribute[v] >= 0:
                size = self.encoder.sizes[self.attribute[v]]
                s = self.first_child[v]
                depth[s : s + size] = depth[v] + 1
        return int(depth.max(initial=0))

    def predict_codes(self, x: np.ndarray) -> np.ndarray:
        node = np.zeros(x.shape[0], dtype=np.int64)
        rows = np.arange(x.shape[0])
        while True:
            attr = self.attribute[node]
            inner = attr >= 0
            if not inner.any():
                return self.label[node]
            node[inner] = self.first_child[node[inner]] + x[rows[inner], attr[inner]]

    def predict(self, table: Table | EncodedTable) -> np.ndarray:
        """Class values predicted for every row of ``table``."""
        if isinstance(table, EncodedTable):
            if table.encoder != self.encoder:
                raise PrivpubError("the table was encoded for another schema or binning")
            x = table.x
        else:
            x, _ = self.encoder.encode(table)
        return np.asarray(self.encoder.classes, dtype=object)[self.predict_codes(x)]

    def refit(self, table: Table | EncodedTable, *, rng) -> PrivateDecisionTree:
        """A new tree learnt from ``table`` with the same parameters."""
        return diffpid3(table, rng=rng, **self.params)

    def encode_table(self, table: Table) -> EncodedTable:
        """``table`` encoded as :meth:`refit` encodes it (its schema, this tree's bins), for
        refitting and predicting on subsets of it without encoding each again."""
        if not isinstance(table, Table):
            raise PrivpubError(f"expected a Table, got {type(table).__name__}")
        encoder = TableEncoder.from_schema(table.schema, self.params["n_bins"])
        return EncodedTable(encoder, *encoder.encode(table))


class _Builder:
    """Algorithm 2, depth first (the order of the random draws is part of the result).

    The table is encoded once as one integer key per (record, attribute): the attribute's
    offset + value * C + class, so one pass over a node's records (:func:`_cell_counts`)
    gives the contingency tables of all its candidate attributes, value-major
    (``counts[lo_A + j C + c] = tau_jc``).
    """

    def __init__(self, x, y, n_classes, sizes, *, criterion, variant, eps, n_total, rng):
        self.y, self.C, self.sizes = y, n_classes, sizes
        self.criterion, self.variant, self.eps, self.rng = criterion, variant, eps, rng
        self.delta_global = ig_global_sensitivity(n_total) if criterion == "ig" else 2.0
        self.size_of = np.asarray(sizes, dtype=np.int64)
        self.vstart = np.concatenate([[0], np.cumsum(self.size_of)])  # value offsets
        self.cstart = self.vstart * n_classes  # cell offsets
        self.x = x  # value codes, to route the records to the children
        self.keys = x * n_classes  # in place below: one array of the table's size
        self.keys += y[:, None]
        self.keys += self.cstart[None, :-1]
        self.n_cells = int(self.cstart[-1])
        self.attribute: list[int] = []
        self.first_child: list[int] = []
        self.label: list[int] = []
        self.children: dict[int, list[int]] = {}
        # the nodes' spending profiles, counted per depth for the ledger (_charge): a node
        # spends what laplace_mechanism records for its noisy count, then for a leaf its
        # class counts, for a split what the selection records
        self.count_entry = ("noisy count", float(eps), 1.0, "laplace")
        self.leaf_profile = (self.count_entry, ("class counts", float(eps), 1.0, "laplace"))
        self.profiles: dict[int, dict[tuple, int]] = {}
        self.split_profile: tuple | None = None  # what the first split's selection recorded
        self.empty_scores: dict[tuple, object] = {}  # see select
        _tables(len(y) + 2)

    def _record(self, level: int, profile: tuple, count: int = 1) -> None:
        counts = self.profiles.setdefault(level, {})
        counts[profile] = counts.get(profile, 0) + count

    def _new(self) -> int:
        self.attribute.append(-1)
        self.first_child.append(-1)
        self.label.append(0)
        return len(self.attribute) - 1

    def select(self, rows, attrs, ledger) -> int:
        """Line 12 of Algorithm 2: the split attribute, by the variant's mechanism.

        The scores of an empty node depend only on the attributes left (every count is 0):
        they are computed once per tree for each such set (many nodes are empty at small
        budgets, where noisy counts of empty nodes often pass the stopping test)."""
        key = tuple(attrs) if rows.size == 0 else None
        scores = self.empty_scores.get(key) if key is not None else None
        if scores is None:
            scores = self._scores(rows, attrs)
            if key is not None:
                self.empty_scores[key] = scores
        g = self.delta_global
        if self.variant == "global":
            i = exponential_mechanism(scores, sensitivity=g, epsilon=self.eps, rng=self.rng,
                                      ledger=ledger, label="split attribute (exponential)")
        elif self.variant == "local":
            i = local_dampening(scores, epsilon=self.eps, rng=self.rng, ledger=ledger,
                                label="split attribute (local dampening)")
        else:
            u, pen = scores
            i = shifted_local_dampening(u, penalty=pen, global_sensitivity=g, epsilon=self.eps,
                                        rng=self.rng, ledger=ledger,
                                        label="split attribute (shifted local dampening)")
        return attrs[i]

    def _scores(self, rows, attrs):
        """What the variant's mechanism selects on: the utilities (global), the dampened
        utilities (local) or the utilities and their penalties (shifted)."""
        C = self.C
        at = np.asarray(attrs, dtype=np.int64)
        counts = _cell_counts(self.keys, rows, at, self.n_cells)  # 0 for the other attributes
        tj = counts.reshape(-1, C).sum(axis=1)
        lo, hi, size = self.cstart[at], self.cstart[at + 1], self.size_of[at]
        gini = self.criterion == "gini"
        u = _utilities(counts, tj, lo, self.vstart[at], size, C, gini, _tables(rows.size + 2)[0])
        g = self.delta_global
        # Gini's m = max_j tau_j of every candidate, for its local sensitivity
        local_gini = gini and self.variant != "global"
        m = np.maximum.reduceat(tj, self.vstart[:-1])[at] if local_gini else np.zeros(at.size)
        if self.variant == "global":
            return u
        if self.variant == "local":
            return _dampened_scores(u, gini, np.repeat(tj, C), counts, lo, hi,
                                    m.astype(np.float64), g)
        if gini:
            return u, _gini_penalties(m)
        return u, _ig_penalty_scores(np.repeat(tj, C), counts, lo, hi, g)

    def build(self, rows, attrs, depth, level, t) -> int:
        """Algorithm 2 from a node with the records ``rows`` and the attributes ``attrs``
        left (``t`` the largest domain among them, 1 if none); returns the node's index
        (before :func:`_relabel`)."""
        cls = np.bincount(self.y[rows], minlength=self.C)[None, :]
        return self._children(rows, np.array([0, rows.size]), cls, attrs, depth, level, t)[0]

    def _children(self, rows, bounds, cls, attrs, depth, level, t) -> list[int]:
        """Lines 3-9 of Algorithm 2 for sibling nodes, in order: node ``v`` holds the
        records ``rows[bounds[v]:bounds[v + 1]]``, with the class counts ``cls[v]``;
        returns their indices.

        A node draws its noisy count, then either its noisy class counts (a leaf) or its
        split. Leaves are done in one batch: the noise of all the siblings left is drawn as
        if they all were leaves (``1 + C`` Laplace draws each, in the order the nodes draw
        them one by one), up to the first that splits; the generator is then set back and
        moved on by exactly the draws consumed, so the split and every later draw are as
        with one node at a time.
        """
        C, n = self.C, bounds.size - 1
        sizes = np.diff(bounds)
        may_split = bool(attrs) and depth > 0
        nodes: list[int] = []
        i = 0
        while i < n:
            state = self.rng.bit_generator.state if may_split else None
            noise = laplace_noise(sensitivity=1.0, epsilon=self.eps, rng=self.rng,
                                  size=(n - i, 1 + C))
            n_leaves = n - i
            if may_split:  # the leaf test of line 3 on every noisy count
                noisy_n = sizes[i:] + noise[:, 0]
                split = np.flatnonzero(~(noisy_n / (t * C) < _STOP))
                n_leaves = int(split[0]) if split.size else n - i
            if n_leaves:  # lines 4-5: leaves labelled with their largest noisy class count
                labels = (cls[i:i + n_leaves] + noise[:n_leaves, 1:]).argmax(axis=1)
                nodes.extend(range(len(self.label), len(self.label) + n_leaves))
                self.attribute.extend([-1] * n_leaves)
                self.first_child.extend([-1] * n_leaves)
                self.label.extend(labels.tolist())
                self._record(level, self.leaf_profile, n_leaves)
            i += n_leaves
            if i == n:
                break
            # node i splits: the draws up to its noisy count are the ones consumed
            self.rng.bit_generator.state = state
            laplace_noise(sensitivity=1.0, epsilon=self.eps, rng=self.rng,
                          size=n_leaves * (1 + C) + 1)
            node = self._new()
            self._split(node, rows[bounds[i]:bounds[i + 1]], attrs, depth, level)
            nodes.append(node)
            i += 1
        return nodes

    def _split(self, node, rows, attrs, depth, level) -> None:
        """Lines 10-15 of Algorithm 2: choose the split attribute, then the children."""
        if self.split_profile is None:
            ledger = PrivacyLedger(self.eps)
            attr = self.select(rows, attrs, ledger)
            self.split_profile = (self.count_entry, *(
                (e.label, e.epsilon, e.sensitivity, e.primitive) for e in ledger.entries))
        else:  # every split spends alike (the same budget, label and sensitivity)
            attr = self.select(rows, attrs, None)
        self._record(level, self.split_profile)
        self.attribute[node] = attr
        rows, bounds, cls = _partition(self.x, self.y, rows, attr, self.sizes[attr], self.C)
        rest = [a for a in attrs if a != attr]
        t_rest = max((self.sizes[a] for a in rest), default=1)
        # made contiguous by _relabel
        self.children[node] = self._children(rows, bounds, cls, rest, depth - 1, level + 1,
                                             t_rest)


def _relabel(builder: _Builder):
    """Order nodes breadth-first so that every node's children are contiguous."""
    children = builder.children
    order = [0]
    new_first = {}
    i = 0
    while i < len(order):
        v = order[i]
        if v in children:
            new_first[v] = len(order)
            order.extend(children[v])
        i += 1
    attribute = np.array([builder.attribute[v] for v in order], dtype=np.int64)
    first = np.array([new_first.get(v, -1) for v in order], dtype=np.int64)
    label = np.array([builder.label[v] for v in order], dtype=np.int64)
    return attribute, first, label


def _charge(ledger: PrivacyLedger, levels: dict[int, dict[tuple, int]]) -> None:
    """Record the tree's spending compactly: one parallel block per depth (the nodes of a
    depth hold disjoint records), one branch per distinct spending profile (``levels``: per
    depth, the number of nodes of every profile, in the order of their first node)."""
    for level in sorted(levels):
        with ledger.parallel(f"depth {level}") as branch:
            for i, (key, count) in enumerate(levels[level].items()):
                kind = "leaf" if any(lbl == "class counts" for lbl, *_ in key) else "split"
                b = branch(f"{kind} profile {i} ({count} node{'s' if count > 1 else ''})")
                for label, eps, sens, prim in key:
                    b.spend(eps, label=label, sensitivity=sens, primitive=prim)


def _check_option(value, options, name):
    if not isinstance(value, str) or value not in options:
        raise PrivpubError(f"{name} must be one of {options}, got {value!r}")
    return value


def diffpid3(
    table: Table,
    *,
    epsilon: float,
    depth: int = 5,
    criterion: str = "ig",
    variant: str = "global",
    n_bins: int = 5,
    rng,
    ledger: PrivacyLedger | None = None,
) -> PrivateDecisionTree:
    """DiffPID3 (farias2021 Algorithm 2) with the split chosen by ``variant`` (see module).

    Parameters
    ----------
    table : Table or EncodedTable
        Records with a schema naming the class attribute; every attribute needs a public
        domain (numeric: ``(lo, hi)``). An :class:`EncodedTable` (encoded with ``n_bins``)
        gives the same tree as the table it encodes.
    epsilon : float
        Total budget ``B``; every node spends ``B / (2 (depth + 1))`` twice.
    depth : int
        Maximum depth ``d >= 0`` (0: a single leaf).
    criterion : {"ig", "gini"}
    variant : {"global", "local", "shifted"}
    n_bins : int
        Equal-width bins for numeric attributes over their public domain.
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional

    Returns
    -------
    PrivateDecisionTree
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth(depth)
    criterion = _check_option(criterion, CRITERIA, "criterion")
    variant = _check_option(variant, VARIANTS, "variant")
    n_bins = check_positive_int(n_bins, "n_bins")
    rng = check_rng(rng)
    ledger = ensure_ledger(ledger, epsilon)
    if isinstance(table, EncodedTable):  # encoded before (the cross-validation's folds)
        if table.encoder.n_bins != n_bins:
            raise PrivpubError(f"the table was encoded with {table.encoder.n_bins} bins, "
                               f"not n_bins = {n_bins}")
        encoder, x, y = table.encoder, table.x, table.y
    elif not isinstance(table, Table):
        raise PrivpubError(f"DiffPID3 needs a Table, got {type(table).__name__}")
    else:
        encoder = TableEncoder.from_schema(table.schema, n_bins)
        x, y = encoder.encode(table)
    eps_node = epsilon / (2 * (depth + 1))
    builder = _Builder(x, y, len(encoder.classes), encoder.sizes, criterion=criterion,
                       variant=variant, eps=eps_node, n_total=max(len(y), 1), rng=rng)
    builder.build(np.arange(len(y)), list(range(len(encoder.features))), depth, 0,
                  max(encoder.sizes))
    attribute, first, label = _relabel(builder)
    _charge(ledger, builder.profiles)
    params = {"epsilon": epsilon, "depth": depth, "criterion": criterion, "variant": variant,
              "n_bins": n_bins}
    tree = PrivateDecisionTree(encoder, attribute, first, label, params)
    tree.info = {"n_nodes": tree.n_nodes, "tree_depth": tree.depth}
    return tree


# --------------------------------------------------------------------------- registration
def _ig_caveat(params) -> str | None:
    if params.get("criterion", "ig") == "ig":
        return ("Delta IG = log2(N + 1) + 1/ln 2 uses N = the table's size, read from the data "
                "and assumed public (Friedman & Schuster 2010)")
    return None


#: The blind spot of the local variants' information gain (the audit's, as global_diffpid3's).
_AS_GLOBAL = ("as global_diffpid3: the N-dependent sensitivity moves the output distribution by "
              "far less than the claimed epsilon on small tables")


def _register(name, variant, role, doc, blind_spot):
    def mechanism(
        table: Table,
        *,
        epsilon: float,
        depth: int = 5,
        criterion: str = "ig",
        n_bins: int = 5,
        rng,
        ledger: PrivacyLedger | None = None,
    ) -> PrivateDecisionTree:
        return diffpid3(table, epsilon=epsilon, depth=depth, criterion=criterion,
                        variant=variant, n_bins=n_bins, rng=rng, ledger=ledger)

    mechanism.__name__ = mechanism.__qualname__ = name
    mechanism.__doc__ = doc
    return register_mechanism(
        name, input_kind=Kind.TABLE, output_kind=Kind.CLASSIFIER, privacy=RECORD_DP,
        paper="farias2021", role=role, caveat=_ig_caveat,
        caveat_summary="with information gain, ΔIG uses the table's size N, read from the data "
                       "and assumed public (as Friedman & Schuster)",
        audit={"configurations": [{"criterion": "ig"}, {"criterion": "gini"}], "cost_ms": 15},
        blind_spot={"criterion=ig": blind_spot})(mechanism)


global_diffpid3 = _register(
    "global_diffpid3", "global", "baseline",
    "GlobalDiffPID3 (farias2021 Algorithm 2, Friedman & Schuster 2010): split attribute by "
    "the exponential mechanism.\n\n    See :func:`diffpid3` (``variant='global'``).",
    "Delta-IG read from the table's size N changes the noise by a factor of about "
    "log2(N + 1) / log2(N) between neighbours: a tiny effect that needs inputs far larger "
    "than the audit's 5-14 nodes or rows, where a few thousand runs cannot resolve it",
)
local_diffpid3 = _register(
    "local_diffpid3", "local", "mechanism",
    "LocalDiffPID3 (farias2021 Sec 5.2): split attribute by the local dampening "
    "mechanism.\n\n    See :func:`diffpid3` (``variant='local'``).",
    _AS_GLOBAL,
)
shifted_local_diffpid3 = _register(
    "shifted_local_diffpid3", "shifted", "mechanism",
    "ShiftedLocalDiffPID3 (farias2021 Sec 5.2): split attribute by the shifted local "
    "dampening mechanism.\n\n    See :func:`diffpid3` (``variant='shifted'``).",
    _AS_GLOBAL,
)

