"""Balanced partition of boxes for RPS (qardaji2012 Sec 3.2, Sec 4.2): box regions, candidate
cuts grouped by how they split the data, the exponential mechanism (or the midpoint) that
picks one, and points drawn inside a leaf box.

Why the mechanism is sampled by groups of equal-quality cuts and keeps the paper's
``exp(eps q / (2 Delta))`` calibration: docs/design.md, "qardaji2012: RPS".

References
----------
.. [QL12] W. Qardaji, N. Li. Recursive Partitioning and Summarization: A Practical
   Framework for Differentially Private Data Publishing. ASIACCS 2012. Sec 3.2, Sec 4.2.
.. [MT07] F. McSherry, K. Talwar. Mechanism design via differential privacy. FOCS 2007.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from privpub.errors import PrivpubError
from privpub.mechanisms.rps.checks import check_option
from privpub.mechanisms.rps.framework import Node, Split
from privpub.mechanisms.rps.quality import CountBalance
from privpub.noise import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    is_noise_off,
    uniform_integers,
)
from privpub.validation import check_epsilon

__all__ = [
    "BoxRegion",
    "BoxPartition",
    "CutGroups",
    "cut_groups",
    "cut_probabilities",
    "sample_in_box",
    "PARTITIONS",
    "ATTRIBUTE_CHOICES",
    "SUMMARIES",
]

PARTITIONS = ("median", "midpoint")
ATTRIBUTE_CHOICES = ("all", "random")
SUMMARIES = ("uniform", "midpoint", "lower")


@dataclass(frozen=True, slots=True)
class BoxRegion:
    """An axis-aligned box: ``lo[j] <= x_j <= hi[j]`` on discrete axes (integers: codes or
    integer values, both ends included) and ``lo[j] <= x_j < hi[j]`` on continuous ones
    (the root's top end is included)."""

    lo: np.ndarray
    hi: np.ndarray


@dataclass(frozen=True)
class CutGroups:
    """Candidate cuts of one axis grouped into runs of equal quality.

    Cut ``k`` splits at threshold ``t_k = k * granularity`` (left: ``x < t_k``). Group
    ``i`` holds the cuts ``k_first[i] .. k_first[i] + size[i] - 1``, all of which put
    ``left[i]`` items (``left_pos[i]`` of the positive class) on the left.
    """

    k_first: np.ndarray
    size: np.ndarray
    left: np.ndarray
    left_pos: np.ndarray | None


def cut_groups(
    values, kmin: int, kmax: int, *, discrete: bool, granularity: float = 1.0, labels=None
) -> CutGroups:
    """Group the candidate cuts ``kmin .. kmax`` of one axis by how they split ``values``.

    Between two consecutive distinct values ``u_i < u_{i+1}`` every cut ``k`` with
    ``u_i < k g <= u_{i+1}`` puts exactly the items ``<= u_i`` on the left, so the
    exponential mechanism over all cuts (Sec 3.2: "all multiples of the granularity") can
    be sampled exactly by choosing a group with weight ``size * exp(...)`` and then a cut
    uniformly inside it: ``O(#distinct values)`` work instead of ``O(domain size)``.

    Parameters
    ----------
    values : array_like
        The axis values of the items in the region.
    kmin, kmax : int
        First and last candidate cut (``kmin > kmax``: none).
    discrete : bool
        Integer axis (``granularity`` must then be 1).
    granularity : float
    labels : array_like of {0, 1}, optional
        Binary class labels, to count positives on the left (Eq 3).
    """
    values = np.asarray(values, dtype=float)
    rows = np.arange(values.size, dtype=np.int64)
    labels = None if labels is None else np.asarray(labels, dtype=np.int64)
    return _row_groups(values, rows, labels, kmin, kmax, discrete, granularity)[0]


_NO_LABELS = np.zeros(0, dtype=np.int64)


def _row_groups(column, rows, labels, kmin: int, kmax: int, discrete: bool,
                granularity: float) -> tuple[CutGroups, int]:
    """:func:`cut_groups` of the items ``column[rows]`` (classes ``labels[rows]``) and how
    many of them are positive (0 without labels)."""
    if kmin > kmax:
        empty = np.empty(0, dtype=np.int64)
        return CutGroups(empty, empty, empty, None if labels is None else empty), 0
    k_first, size, left, left_pos, positives = _group_cuts(
        column, rows, _NO_LABELS if labels is None else labels, labels is not None, kmin,
        kmax, discrete, granularity)
    return CutGroups(k_first, size, left, None if labels is None else left_pos), positives


@njit(cache=True, nogil=True)
def _group_cuts(column, rows, labels, has_labels, kmin, kmax, discrete,
                granularity):  # pragma: no cover - compiled
    """Kernel of :func:`_row_groups` (``has_labels`` False: ``labels`` is not read).

    The distinct values ``u_0 < ... < u_{m-1}`` of the items are found by counting when the
    axis is discrete and the region narrow (values outside the region count as its ends),
    else by sorting. Group ``i`` (``0 <= i <= m``) holds the cuts ``e_i + 1 .. e_{i+1}``
    with ``e_0 = kmin - 1``, ``e_{i+1} = clip(b_i, kmin - 1, kmax)`` (``b_i = u_i`` on a
    discrete axis, ``floor(u_i / g)`` on a continuous one), ``e_{m+1} = kmax``, and puts the
    items ``<= u_{i-1}`` on the left; empty groups are dropped.
    """
    n = rows.size
    width = kmax - kmin + 2  # integer values of a discrete region: kmin - 1 .. kmax
    # distinct values as their group edges b_i (clipped), counts and positives
    bound = np.empty(n + 1, dtype=np.int64)
    cnt = np.empty(n + 1, dtype=np.int64)
    pos = np.zeros(n + 1, dtype=np.int64)
    m = 0
    if discrete and width <= 4 * n + 64:  # counting, no sort
        tally = np.zeros(width, dtype=np.int64)
        tally_pos = np.zeros(width, dtype=np.int64)
        for i in range(n):
            code = np.int64(column[rows[i]]) - (kmin - 1)
            code = min(max(code, 0), width - 1)
            tally[code] += 1
            if has_labels:
                tally_pos[code] += labels[rows[i]]
        for code in range(width):
            if tally[code] > 0:
                bound[m] = code + kmin - 1
                cnt[m] = tally[code]
                pos[m] = tally_pos[code]
                m += 1
    else:
        vals = np.empty(n, dtype=np.float64)
        for i in range(n):
            vals[i] = column[rows[i]]
        order = np.argsort(vals)
        for i in range(n):
            v = vals[order[i]]
            if i == 0 or v != vals[order[i - 1]]:
                b = v if discrete else np.floor(v / granularity)
                bound[m] = np.int64(min(max(b, kmin - 1.0), kmax * 1.0))
                cnt[m] = 0
                pos[m] = 0
                m += 1
            cnt[m - 1] += 1
            if has_labels:
                pos[m - 1] += labels[rows[order[i]]]
    keep = 0
    edge = kmin - 1
    for i in range(m + 1):
        nxt = bound[i] if i < m else kmax
        if nxt > edge:
            keep += 1
        edge = nxt
    k_first = np.empty(keep, dtype=np.int64)
    size = np.empty(keep, dtype=np.int64)
    left = np.empty(keep, dtype=np.int64)
    left_pos = np.empty(keep if has_labels else 0, dtype=np.int64)
    j = 0
    edge = kmin - 1
    below = 0
    below_pos = 0
    for i in range(m + 1):
        nxt = bound[i] if i < m else kmax
        if nxt > edge:
            k_first[j] = edge + 1
            size[j] = nxt - edge
            left[j] = below
            if has_labels:
                left_pos[j] = below_pos
            j += 1
        edge = nxt
        if i < m:
            below += cnt[i]
            below_pos += pos[i]
    return k_first, size, left, left_pos, below_pos


def _axis_of_group(parts, index: int) -> int:
    """The axis of group ``index`` of the groups of ``parts`` concatenated in order."""
    for j, g in parts:
        if index < g.size.size:
            return j
        index -= g.size.size
    raise PrivpubError(f"internal error: no cut group {index}")


def _log_weighted_quality(quality, sizes, sensitivity, epsilon):
    """Quality shifted so that the exponential mechanism's logit of a group is
    ``eps q / (2 Delta) + log(size)``: the exact weight of ``size`` cuts of equal quality
    (every group holds at least one cut)."""
    return quality + (2.0 * sensitivity / epsilon) * np.log(sizes.astype(float))


class BoxPartition:
    """Balanced binary partition of boxes (Sec 3.2, Sec 4.2, Fig 2c).

    Parameters
    ----------
    columns : sequence of numpy.ndarray
        One float array per axis: the items' coordinates (codes for ordered discrete
        attributes).
    discrete : sequence of bool
        Integer axis (candidate cuts between consecutive integers) or continuous
        (candidate cuts at the multiples of ``granularity``).
    granularity : float or sequence of float
        Cut granularity of continuous axes (Sec 4.2: "integer granularity").
    quality : CountBalance, ClassBalance or DegreeBalance
        The exponential mechanism's quality function and its sensitivity.
    labels : numpy.ndarray of {0, 1}, optional
        Binary class of every item (for :class:`ClassBalance`).
    method : {"median", "midpoint"}
        ``"median"``: exponential mechanism over candidate cuts (Sec 3.2). ``"midpoint"``:
        the middle of the region's range, data-independent and free (Fig 2c).
    attributes : {"all", "random"}
        ``"all"``: one exponential mechanism over every cut of every axis at once (Sec 3.2).
        ``"random"``: an axis chosen uniformly among those that can still be split, then
        the exponential mechanism over its cuts (Sec 4.2, Fig 3). For ``"midpoint"``,
        ``"all"`` splits the axis whose range is widest relative to its root range (ties:
        the first), which cycles through the axes like a k-d tree.
    domain_lo, domain_hi : array_like
        The root box (to measure relative widths).
    """

    def __init__(
        self,
        columns,
        discrete,
        *,
        quality,
        granularity=1.0,
        labels=None,
        method: str = "median",
        attributes: str = "all",
        domain_lo=None,
        domain_hi=None,
    ):
        self.columns = [np.asarray(c, dtype=float) for c in columns]
        self.discrete = np.asarray(discrete, dtype=bool)
        self.granularity = np.broadcast_to(
            np.asarray(granularity, dtype=float), self.discrete.shape
        ).copy()
        self.granularity[self.discrete] = 1.0
        self._discrete_f = self.discrete.astype(float)
        self.quality = quality
        self.labels = None if labels is None else np.asarray(labels, dtype=np.int64)
        if getattr(quality, "needs_labels", False) and self.labels is None:
            raise PrivpubError("the class-aware quality (Eq 3) needs class labels")
        self.method = check_option(method, PARTITIONS, "partition")
        self.attributes = check_option(attributes, ATTRIBUTE_CHOICES, "attributes")
        self.spends = self.method == "median"
        self._total_pos = None
        lo = np.zeros(self.discrete.size) if domain_lo is None else np.asarray(domain_lo, float)
        hi = np.ones(self.discrete.size) if domain_hi is None else np.asarray(domain_hi, float)
        kmin, kmax = self.candidate_range(lo, hi)
        self._root_cuts = np.maximum(kmax - kmin + 1, 1).astype(float)
        self._domain_known = domain_lo is not None and domain_hi is not None

    # ------------------------------------------------------------------ geometry
    def candidate_range(self, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """First and last candidate cut index of every axis of the box ``[lo, hi]``:
        ``lo + 1 .. hi`` on discrete axes, the multiples ``k g`` strictly inside
        ``(lo, hi)`` on continuous ones."""
        return _candidate_range(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float),
                                self.granularity, self._discrete_f)[:2]

    def max_leaves(self) -> float:
        """Number of finest cells of the root box (a data-independent bound on leaves)."""
        return float(np.prod(self._root_cuts + 1.0)) if self._domain_known else math.inf

    def can_split(self, node: Node) -> bool:
        kmin, kmax, splittable = _candidate_range(
            np.asarray(node.region.lo, dtype=float), np.asarray(node.region.hi, dtype=float),
            self.granularity, self._discrete_f)
        node.cache = (kmin, kmax)
        return splittable

    # ------------------------------------------------------------------ choosing a cut
    def groups(self, node: Node, axes, kmin=None, kmax=None) -> list[tuple[int, CutGroups]]:
        """Candidate cut groups of ``axes`` for the node's items."""
        return self._groups(node, axes, kmin, kmax)[0]

    def _groups(self, node: Node, axes, kmin=None, kmax=None):
        """:meth:`groups` and the number of positive items in the node (0 without labels)."""
        if kmin is None:
            kmin, kmax = self.candidate_range(node.region.lo, node.region.hi)
        rows = node.rows
        if rows.size == 0:  # every cut has the same quality: one group per axis
            zero = np.zeros(1, dtype=np.int64)
            return [
                (
                    int(j),
                    CutGroups(
                        kmin[j : j + 1],
                        kmax[j : j + 1] - kmin[j : j + 1] + 1,
                        zero,
                        zero if self.quality.needs_labels else None,
                    ),
                )
                for j in axes
            ], 0
        labels = self.labels if self.quality.needs_labels else None
        parts, positives = [], 0
        for j in axes:
            j = int(j)
            g, positives = _row_groups(self.columns[j], rows, labels, int(kmin[j]),
                                       int(kmax[j]), bool(self.discrete[j]),
                                       float(self.granularity[j]))
            parts.append((j, g))
        return parts, positives

    def _scores(self, node: Node, axes, kmin=None, kmax=None):
        """``(axis of every group, k_first, size, quality)`` of the groups of ``axes``."""
        parts, k_first, size, q = self._scored_groups(node, axes, kmin, kmax)
        axis_of = np.concatenate([np.full(g.size.size, j) for j, g in parts])
        return axis_of, k_first, size, q

    def _scored_groups(self, node: Node, axes, kmin, kmax):
        """``(parts, k_first, size, quality)``: :meth:`_groups`' parts, and their groups'
        first cuts, sizes and qualities concatenated in the order of ``parts``."""
        parts, positives = self._groups(node, axes, kmin, kmax)
        total = float(node.rows.size)
        total_pos = float(positives) if self.quality.needs_labels else None
        if len(parts) == 1:
            g = parts[0][1]
            k_first, size, left, left_pos = g.k_first, g.size, g.left, g.left_pos
        else:
            k_first = np.concatenate([g.k_first for _, g in parts])
            size = np.concatenate([g.size for _, g in parts])
            left = np.concatenate([g.left for _, g in parts])
            left_pos = (
                np.concatenate([g.left_pos for _, g in parts])
                if self.quality.needs_labels
                else None
            )
        return parts, k_first, size, self.quality(left, total, left_pos, total_pos)

    def probabilities(self, node: Node, epsilon: float, axes=None):
        """Exact selection probability of every cut group (for tests and diagnostics):
        ``(axis, k_first, size, probability of the group)``."""
        kmin, kmax = self.candidate_range(node.region.lo, node.region.hi)
        axes = np.flatnonzero(kmin <= kmax) if axes is None else axes
        axis_of, k_first, size, q = self._scores(node, axes, kmin, kmax)
        p = exponential_mechanism_probabilities(
            _log_weighted_quality(q, size, self.quality.sensitivity, epsilon),
            sensitivity=self.quality.sensitivity,
            epsilon=epsilon,
        )
        return axis_of, k_first, size, p

    def __call__(self, node: Node, *, epsilon, rng, ledger) -> Split:
        lo, hi = node.region.lo, node.region.hi
        kmin, kmax = node.cache if node.cache is not None else self.candidate_range(lo, hi)
        ok = (kmin <= kmax).nonzero()[0]
        if ok.size == 0:
            raise PrivpubError("internal error: partition called on a narrow region")
        if self.method == "midpoint":
            if self.attributes == "random":
                j = int(ok[rng.integers(ok.size)])
            else:
                rel = (kmax[ok] - kmin[ok] + 1) / self._root_cuts[ok]
                j = int(ok[np.argmax(rel)])
            k = self._midpoint_cut(j, lo, hi, kmin, kmax)
        else:
            # random: one axis, drawn as rng.integers(ok.size, size=1) draws it (numpy's
            # scalar and size-1 draws consume the same bits; the test pins this down)
            axes = (ok[rng.integers(ok.size)],) if self.attributes == "random" else ok
            parts, k_first, size, q = self._scored_groups(node, axes, kmin, kmax)
            sens = self.quality.sensitivity
            # noise off: the best cut (argmax of q, the epsilon -> inf limit), not the most
            # probable group (q plus log of the group's size), which favours wide empty gaps
            pick = exponential_mechanism(
                q if is_noise_off() else _log_weighted_quality(q, size, sens, epsilon),
                sensitivity=sens,
                epsilon=epsilon,
                rng=rng,
                ledger=ledger,
                label=self.quality.label,
            )
            j = _axis_of_group(parts, pick)
            # a uniform cut inside the chosen group: part of the exponential mechanism
            k = int(k_first[pick]) + int(uniform_integers(0, int(size[pick]), rng=rng))
        return self._apply(node, j, k)

    def _midpoint_cut(self, j: int, lo, hi, kmin, kmax) -> int:
        if self.discrete[j]:
            return int(kmin[j] + (kmax[j] - kmin[j]) // 2)
        mid = 0.5 * (lo[j] + hi[j]) / self.granularity[j]
        return int(min(max(round(mid), kmin[j]), kmax[j]))

    def _apply(self, node: Node, j: int, k: int) -> Split:
        t = k * self.granularity[j]
        left_rows, right_rows = _split_rows(self.columns[j], node.rows, float(t))
        lo, hi = node.region.lo, node.region.hi
        left_hi = hi.copy()
        right_lo = lo.copy()
        left_hi[j] = k - 1 if self.discrete[j] else t
        right_lo[j] = k if self.discrete[j] else t
        return Split(left_rows, BoxRegion(lo, left_hi), right_rows, BoxRegion(right_lo, hi))


@njit(cache=True, nogil=True)
def _candidate_range(lo, hi, granularity, discrete_f):  # pragma: no cover - compiled
    """Kernel of :meth:`BoxPartition.candidate_range`: ``floor(lo / g) + 1`` and
    ``ceil(hi / g) - 1 + discrete`` per axis, as int64, and whether some axis has a cut."""
    kmin = np.empty(lo.size, dtype=np.int64)
    kmax = np.empty(lo.size, dtype=np.int64)
    splittable = False
    for j in range(lo.size):
        kmin[j] = np.int64(np.floor(lo[j] / granularity[j]) + 1.0)
        kmax[j] = np.int64(np.ceil(hi[j] / granularity[j]) - 1.0 + discrete_f[j])
        splittable = splittable or kmin[j] <= kmax[j]
    return kmin, kmax, splittable


@njit(cache=True, nogil=True)
def _split_rows(column, rows, threshold):  # pragma: no cover - compiled
    """``(rows[column[rows] < threshold], the other rows)``, each in the order of ``rows``."""
    n_left = 0
    for i in range(rows.size):
        if column[rows[i]] < threshold:
            n_left += 1
    left = np.empty(n_left, dtype=rows.dtype)
    right = np.empty(rows.size - n_left, dtype=rows.dtype)
    a = b = 0
    for i in range(rows.size):
        r = rows[i]
        if column[r] < threshold:
            left[a] = r
            a += 1
        else:
            right[b] = r
            b += 1
    return left, right


def cut_probabilities(values, *, epsilon: float, lo: int, hi: int, quality=None, labels=None):
    """Probability that the exponential mechanism picks each integer cut ``k`` in
    ``lo+1 .. hi`` of a 1-D integer region ``[lo, hi]`` (left: ``x < k``). For tests."""
    quality = CountBalance() if quality is None else quality
    values = np.asarray(values, dtype=float)
    part = BoxPartition(
        [values], [True], quality=quality, labels=labels, domain_lo=[lo], domain_hi=[hi]
    )
    node = Node(
        np.arange(values.size), BoxRegion(np.array([lo], float), np.array([hi], float)), 0, ""
    )
    _, k_first, size, p = part.probabilities(node, check_epsilon(epsilon))
    cuts = np.arange(lo + 1, hi + 1)
    out = np.zeros(cuts.size)
    for k0, s, pk in zip(k_first, size, p, strict=True):
        out[k0 - lo - 1 : k0 - lo - 1 + s] = pk / s
    return cuts, out


# --------------------------------------------------------------------------- points in a box
def sample_in_box(lo, hi, discrete, mode: str, rng: np.random.Generator) -> np.ndarray:
    """One point per row of ``lo``/``hi`` (shape ``(m, d)``) inside its box (Sec 3.2).

    ``"uniform"``: uniform in the box (discrete axes: a uniform integer in ``[lo, hi]``;
    for categorical codes this draws uniformly among the values in the region, the paper's
    "set of all values in the region"). ``"midpoint"``: the middle of the range (discrete:
    rounded down). ``"lower"``: the lower end.
    """
    check_option(mode, SUMMARIES, "summary")
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    discrete = np.broadcast_to(np.asarray(discrete, dtype=bool), lo.shape[-1:])
    if mode == "lower":
        return lo.copy()
    if mode == "midpoint":
        mid = 0.5 * (lo + hi)
        return np.where(discrete, np.floor(mid), mid)
    u = rng.random(lo.shape)
    cont = lo + u * (hi - lo)
    disc = np.minimum(lo + np.floor(u * (hi - lo + 1.0)), hi)
    return np.where(discrete, disc, cont)
