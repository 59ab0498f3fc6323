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
    sensitivity at distance ``t`` (IG: Lemmas 5.5-5.6; Gini: see below), bounded by the
    global sensitivity (Lemma 3.5).
``shifted_local_diffpid3``  the shifted local dampening mechanism (Definition 4.3), the
    ``s -> inf`` limit in closed form (:mod:`privpub.dampening`).

Utilities (all logarithms base 2), from the contingency counts ``tau_jc`` of the node's
records (value ``j`` of attribute ``A``, class ``c``), ``tau_j = sum_c tau_jc``:

- ``IG(T, A) = -tau H(C | A) = sum_j sum_c tau_jc log(tau_jc / tau_j)`` (Eq. 1; the paper's
  Eq. 2 prints the opposite sign, which would prefer the *worst* split; ``H_C(T)`` is the
  same for every attribute and dropped).
- ``Gini(T, A) = -sum_j tau_j (1 - sum_c (tau_jc / tau_j)^2)`` ([FS10]).

Element local sensitivity of IG (Lemma 5.5): adding a record ``(j, c)`` changes IG by
``f(a) - f(b)`` and removing one by ``g(b) - g(a)`` (``a = tau_j``, ``b = tau_jc``), with
``f(x) = (x + 1) log(x + 1) - x log x`` and ``g(x) = -f(x - 1)``. At distance ``t``
(Lemma 5.6) the paper's Candidates algorithm (Algorithm 3) enumerates the pairs
``(a + t - 2i, b - i)``, ``0 <= i <= min(t, b)``: ``i`` removals of ``(j, c)`` records and
``t - i`` additions of ``(j, not c)`` records. :func:`ig_element_sensitivity` evaluates the
same maximum in O(1) per pair: along ``i``, ``f(a + t - 2i) - f(b - i)`` is monotone (its
derivative has the sign of ``A (a + t - 2b) - B`` with ``A = a + t - 2i >= B = b - i``, whose
sign does not depend on ``i``), so the maximum is at ``i = 0`` or ``i = min(t, b)``, and the
removal term ``f(a' - 1) - f(b' - 1)`` likewise at ``i = 0`` or ``min(t, b - 1)``. A test
checks this against the literal Candidates algorithm, and the admissibility of the result
by brute force over small tables and all their neighbours. We drop Algorithm 3's condition
``a < tau`` on additions: under add/remove neighbours ``tau_j`` can exceed ``tau``, and with
the condition the function is not admissible (a test gives the witness).

Gini (the paper omits its local sensitivity, Sec 5.2): adding ``(j, c)`` changes Gini by
``a / (a + 1) ((1 - p_c)^2 + sum_{c' != c} p_c'^2) <= 2 a / (a + 1)`` (``p = tau_j. / a``),
so ``delta^Gini(T, t, A) = 2 (m + t) / (m + t + 1)`` with ``m = max_j tau_j`` is admissible
(tested by brute force). It tends to ``Delta = 2`` only in the limit, so the shifted
mechanism uses the convergent limit of the penalty differences, ``P(A) = -2 H_m``
(``H_m`` the harmonic number).

Continuous attributes (Sec 5.2: "We discretize the continuous attributes") are cut into
``n_bins`` equal-width bins over their *public* schema domain (no budget spent); ordinal and
categorical attributes use their schema domain, every value a child (empty ones too, so the
tree's shape does not reveal which values occur).

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

from privpub.dampening import dampen, local_dampening, shifted_local_dampening
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import exponential_mechanism, laplace_mechanism
from privpub.registry import RECORD_DP, register_mechanism
from privpub.types import Kind, Table
from privpub.validation import check_depth, check_epsilon, check_positive_int, check_rng

__all__ = [
    "CRITERIA",
    "VARIANTS",
    "PrivateDecisionTree",
    "TableEncoder",
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
    c = _counts(counts)
    a = np.repeat(c.sum(axis=1), c.shape[1])
    b = c.ravel()
    return a, b


def _ig_pair_terms(a, b, t):
    """Max over the candidates of h for each (t, pair): a, b of shape (P,), t of shape (T,)."""
    a = np.asarray(a, dtype=np.int64)[None, :]
    b = np.asarray(b, dtype=np.int64)[None, :]
    t = np.asarray(t, dtype=np.int64)[:, None]
    table = _xlogx_table(int(a.max(initial=0)) + int(t.max(initial=0)) + 3)

    def f(x):  # f on integers via k log2 k differences (0 for x <= 0)
        x = np.maximum(x, 0)
        return np.where(x > 0, table[x + 1] - table[x], 0.0)

    m = np.minimum(t, b)
    best = np.maximum(f(a + t) - f(b), f(a + t - 2 * m) - f(b - m))
    has = b >= 1
    mm = np.minimum(t, b - 1)
    rem = np.maximum(f(a - 1 + t) - f(b - 1), f(a - 1 + t - 2 * mm) - f(b - 1 - mm))
    return np.where(has, np.maximum(best, rem), best)


def ig_element_sensitivity(counts, t) -> np.ndarray:
    """``LS^IG(T, t, A)`` (Lemma 5.6) for the contingency counts of attribute ``A``, at every
    distance in ``t`` (an int array): the max over values, classes and the candidates of
    Algorithm 3 of ``h(a, b) = max(f(a) - f(b), g(b) - g(a))`` (see the module docstring)."""
    a, b = _pairs(counts)
    t = np.atleast_1d(np.asarray(t, dtype=np.int64))
    return _ig_pair_terms(a, b, t).max(axis=1)


def _phi(k) -> np.ndarray:
    k = np.maximum(np.asarray(k, dtype=np.float64), 0.0)
    return xlogy(k, k) / _LN2  # sum_{x < k} f(x) = k log2 k (telescoping)


_XLOGX = np.zeros(2)  # k log2 k for k = 0, 1, ... (grown on demand)


def _xlogx_table(size: int) -> np.ndarray:
    global _XLOGX
    if _XLOGX.size < size:
        k = np.arange(max(size, 2 * _XLOGX.size), dtype=np.float64)
        _XLOGX = xlogy(k, k) / _LN2
    return _XLOGX


@njit(cache=True, nogil=True)
def _f_int(x, table):  # pragma: no cover - compiled
    """f(x) = (x + 1) log2(x + 1) - x log2 x for an integer x (0 for x <= 0)."""
    if x <= 0:
        return 0.0
    return table[x + 1] - table[x]


@njit(cache=True, nogil=True)
def _ig_penalty_prefix(a, b, bound, t_stop, table):  # pragma: no cover - compiled
    """sum_{t < t_stop} (bound - min(delta(t), bound)) for integer counts a, b; returns
    (sum, t at which delta reached the bound or -1)."""
    pen = 0.0
    for t in range(t_stop):
        best = 0.0
        for p in range(a.size):
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
        if best >= bound:
            return pen, t
        pen += bound - best
    return pen, -1


def ig_penalty(counts, global_sensitivity: float) -> float:
    """``sum_{t >= 0} (Delta - min(LS^IG(T, t, A), Delta))``, exactly.

    Up to ``t0 = max tau_jc`` (and while a non-tail term still matters) every distance is
    evaluated (compiled); beyond, the maximum is ``f(t + alpha)`` with
    ``alpha = max_jc (tau_j if tau_jc = 0 else tau_j - 2 tau_jc + 1)`` and the sum is
    closed-form (``sum f(k) = k log2 k`` telescopes).
    """
    bound = float(global_sensitivity)
    a, b = _pairs(counts)
    alpha = float(np.max(np.where(b == 0, a, a - 2 * b + 1)))
    t = int(b.max()) if b.size else 0
    table = _xlogx_table(int(a.max(initial=0)) + t + 3)
    pen, hit = _ig_penalty_prefix(a.astype(np.int64), b.astype(np.int64), bound, t, table)
    if hit >= 0:
        return float(pen)
    while True:
        # tail form from t on, if the i = 0 terms can no longer win (concavity: once below,
        # f(t + a) - f(b) stays below f(t + alpha))
        tail = f_add(t + alpha)
        add0 = f_add(t + a) - f_add(b)
        rem0 = np.where(b >= 1, f_add(t + a - 1) - f_add(b - 1), -np.inf)
        if tail >= bound or (np.all(add0 <= tail) and np.all(rem0 <= tail)):
            break
        more, hit = _ig_penalty_prefix_from(a, b, bound, t, 64)
        pen += more
        if hit >= 0:
            return float(pen)
        t += 64
    # first k with f(k) >= bound, k = t + alpha
    hi = max(t + alpha, 1.0)
    while f_add(hi) < bound:
        hi *= 2
    lo_i, hi_i = max(math.ceil(t + alpha), 0), math.ceil(hi)
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if f_add(mid) >= bound:
            hi_i = mid
        else:
            lo_i = mid + 1
    t_end = max(int(hi_i - alpha), t)
    pen += (t_end - t) * bound - float(_phi(t_end + alpha) - _phi(t + alpha))
    return float(pen)


def _ig_penalty_prefix_from(a, b, bound, t, n):
    ts = np.arange(t, t + n)
    delta = _ig_pair_terms(a, b, ts).max(axis=1)
    reached = np.flatnonzero(delta >= bound)
    stop = reached[0] if reached.size else n
    return float(np.sum(bound - delta[:stop])), (t + stop if reached.size else -1)


def gini_element_sensitivity(counts, t) -> np.ndarray:
    """``delta^Gini(T, t, A) = 2 (m + t) / (m + t + 1)``, ``m = max_j tau_j`` (see module)."""
    m = float(_counts(counts).sum(axis=1).max(initial=0.0))
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    return 2.0 * (m + t) / (m + t + 1.0)


def gini_penalty(counts) -> float:
    """``-2 H_m``: ``sum_t (2 - delta^Gini(t))`` minus the common divergent ``sum_t 2/(t+1)``."""
    m = float(_counts(counts).sum(axis=1).max(initial=0.0))
    return -2.0 * float(digamma(m + 1.0) + np.euler_gamma)


# --------------------------------------------------------------------------- encoding
@dataclass(frozen=True)
class TableEncoder:
    """Public encoding of a table's attributes as integer codes (schema domains, equal-width
    bins for numeric attributes)."""

    features: tuple[str, ...]
    sizes: tuple[int, ...]
    kinds: tuple[str, ...]
    domains: tuple[tuple, ...]
    class_attribute: str
    classes: tuple
    n_bins: int

    @classmethod
    def from_schema(cls, schema, n_bins: int) -> TableEncoder:
        if schema.class_attribute is None:
            raise PrivpubError("a decision tree needs a table whose schema names a class "
                               "attribute")
        cls_attr = schema[schema.class_attribute]
        if cls_attr.kind == "numeric" or not cls_attr.domain:
            raise PrivpubError(
                f"class attribute {cls_attr.name!r} needs a public discrete domain"
            )
        feats, sizes, kinds, domains = [], [], [], []
        for a in schema.attributes:
            if a.name == schema.class_attribute:
                continue
            if a.kind == "numeric":
                lo, hi = (float(v) for v in a.domain)
                if not hi > lo:
                    raise PrivpubError(f"numeric attribute {a.name!r} needs a domain (lo, hi)")
                size = n_bins
            else:
                if not a.domain:
                    raise PrivpubError(f"attribute {a.name!r} needs a public domain")
                size = len(a.domain)
            feats.append(a.name)
            sizes.append(size)
            kinds.append(a.kind)
            domains.append(tuple(a.domain))
        if not feats:
            raise PrivpubError("the table has no attribute besides the class")
        return cls(tuple(feats), tuple(sizes), tuple(kinds), tuple(domains),
                   schema.class_attribute, tuple(cls_attr.domain), n_bins)

    def _codes(self, col, kind, domain, size, name, raw_numeric=False):
        if kind == "numeric":
            lo, hi = (float(v) for v in domain)
            x = np.asarray(col, dtype=np.float64)
            if not np.isfinite(x).all():
                raise PrivpubError(f"numeric attribute {name!r} has missing values")
            if raw_numeric:
                return x
            return np.clip(np.floor((x - lo) / (hi - lo) * size), 0, size - 1).astype(np.int64)
        import pandas as pd

        codes = pd.Index(list(domain)).get_indexer(np.asarray(col, dtype=object))
        if (codes < 0).any():
            raise PrivpubError(f"attribute {name!r} has values outside its domain (or missing)")
        return codes.astype(np.int64)

    def encode(self, table: Table, *, raw_numeric: bool = False):
        """``(X, y)``: an int64 code matrix (rows x features) and class indices.

        ``raw_numeric``: numeric attributes keep their values (a float64 matrix) instead of
        their bin codes, for a learner that cuts them itself (the diffprivlib tree)."""
        if not isinstance(table, Table):
            raise PrivpubError(f"expected a Table, got {type(table).__name__}")
        df = table.data
        missing = [c for c in (*self.features, self.class_attribute) if c not in df.columns]
        if missing:
            raise PrivpubError(f"table lacks columns {missing}")
        x = np.empty((len(df), len(self.features)),
                     dtype=np.float64 if raw_numeric else np.int64)
        for i, (name, kind, dom, size) in enumerate(
            zip(self.features, self.kinds, self.domains, self.sizes, strict=True)
        ):
            x[:, i] = self._codes(df[name].to_numpy(), kind, dom, size, name, raw_numeric)
        y = self._codes(df[self.class_attribute].to_numpy(), "categorical", self.classes,
                        len(self.classes), self.class_attribute)
        return x, y


# --------------------------------------------------------------------------- the tree
@dataclass(eq=False)
class PrivateDecisionTree:
    """A released DiffPID3 tree: ``predict(table)`` and ``refit(table, rng=...)``.

    ``refit`` learns a new tree from another table with the same parameters (and a fresh
    budget): the cross-validation metric ``accuracy_cv_learner`` uses it to score the
    *learner*, as farias2021 Sec 6.2 does (10-fold cross-validation).
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

    def predict(self, table: Table) -> np.ndarray:
        """Class values predicted for every row of ``table``."""
        x, _ = self.encoder.encode(table)
        return np.asarray(self.encoder.classes, dtype=object)[self.predict_codes(x)]

    def refit(self, table: Table, *, rng) -> PrivateDecisionTree:
        """A new tree learnt from ``table`` with the same parameters."""
        return diffpid3(table, rng=rng, **self.params)


class _Builder:
    def __init__(self, x, y, n_classes, sizes, *, criterion, variant, eps, n_total, rng):
        self.x, self.y, self.C, self.sizes = x, y, n_classes, sizes
        self.criterion, self.variant, self.eps, self.rng = criterion, variant, eps, rng
        self.delta_global = ig_global_sensitivity(n_total) if criterion == "ig" else 2.0
        self.attribute: list[int] = []
        self.first_child: list[int] = []
        self.label: list[int] = []
        self.node_ledgers: list[tuple[int, PrivacyLedger]] = []
        self.children: dict[int, list[int]] = {}

    def _new(self) -> int:
        self.attribute.append(-1)
        self.first_child.append(-1)
        self.label.append(0)
        return len(self.attribute) - 1

    def contingency(self, rows, attr) -> np.ndarray:
        j = self.x[rows, attr]
        size = self.sizes[attr]
        return np.bincount(j * self.C + self.y[rows], minlength=size * self.C).reshape(
            size, self.C
        )

    def select(self, rows, attrs, ledger) -> int:
        tables = [self.contingency(rows, a) for a in attrs]
        util = information_gain if self.criterion == "ig" else gini_utility
        u = np.array([util(c) for c in tables])
        g = self.delta_global
        if self.variant == "global":
            i = exponential_mechanism(u, sensitivity=g, epsilon=self.eps, rng=self.rng,
                                      ledger=ledger, label="split attribute (exponential)")
        elif self.variant == "local":
            if self.criterion == "ig":
                def delta(ts):
                    return np.stack([ig_element_sensitivity(c, ts) for c in tables], axis=1)
            else:
                def delta(ts):
                    return np.stack([gini_element_sensitivity(c, ts) for c in tables], axis=1)
            d = dampen(u, delta, global_sensitivity=g)
            i = local_dampening(d, epsilon=self.eps, rng=self.rng, ledger=ledger,
                                label="split attribute (local dampening)")
        else:
            if self.criterion == "ig":
                pen = np.array([ig_penalty(c, g) for c in tables])
            else:
                pen = np.array([gini_penalty(c) for c in tables])
            i = shifted_local_dampening(u, penalty=pen, global_sensitivity=g, epsilon=self.eps,
                                        rng=self.rng, ledger=ledger,
                                        label="split attribute (shifted local dampening)")
        return attrs[i]

    def build(self, rows, attrs, depth, level) -> int:
        node = self._new()
        ledger = PrivacyLedger(2 * self.eps)
        self.node_ledgers.append((level, ledger))
        noisy_n = float(laplace_mechanism(rows.size, sensitivity=1.0, epsilon=self.eps,
                                          rng=self.rng, ledger=ledger, label="noisy count"))
        t = max((self.sizes[a] for a in attrs), default=1)
        if not attrs or depth == 0 or noisy_n / (t * self.C) < _STOP:
            counts = np.bincount(self.y[rows], minlength=self.C)
            noisy = laplace_mechanism(counts, sensitivity=1.0, epsilon=self.eps, rng=self.rng,
                                      ledger=ledger, label="class counts")
            self.label[node] = int(np.argmax(noisy))
            return node
        attr = self.select(rows, attrs, ledger)
        self.attribute[node] = attr
        values = self.x[rows, attr]
        order = np.argsort(values, kind="stable")
        bounds = np.searchsorted(values[order], np.arange(self.sizes[attr] + 1))
        rest = [a for a in attrs if a != attr]
        children = []
        for v in range(self.sizes[attr]):
            children.append(
                self.build(rows[order[bounds[v]: bounds[v + 1]]], rest, depth - 1, level + 1)
            )
        self.children[node] = children  # made contiguous by _relabel
        return node


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


def _charge(ledger: PrivacyLedger, node_ledgers) -> None:
    """Record the tree's spending compactly: one parallel block per depth (the nodes of a
    depth hold disjoint records), one branch per distinct spending profile."""
    levels: dict[int, dict[tuple, int]] = {}
    for level, nl in node_ledgers:
        key = tuple((e.label, e.epsilon, e.sensitivity, e.primitive) for e in nl.entries)
        prof = levels.setdefault(level, {})
        prof[key] = prof.get(key, 0) + 1
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
    table : Table
        Records with a schema naming the class attribute; every attribute needs a public
        domain (numeric: ``(lo, hi)``).
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
    if not isinstance(table, Table):
        raise PrivpubError(f"DiffPID3 needs a Table, got {type(table).__name__}")
    encoder = TableEncoder.from_schema(table.schema, n_bins)
    x, y = encoder.encode(table)
    eps_node = epsilon / (2 * (depth + 1))
    builder = _Builder(x, y, len(encoder.classes), encoder.sizes, criterion=criterion,
                       variant=variant, eps=eps_node, n_total=max(len(y), 1), rng=rng)
    builder.build(np.arange(len(y)), list(range(len(encoder.features))), depth, 0)
    attribute, first, label = _relabel(builder)
    _charge(ledger, builder.node_ledgers)
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


def _register(name, variant, role, doc):
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
    return register_mechanism(name, input_kind=Kind.TABLE, output_kind=Kind.CLASSIFIER,
                              privacy=RECORD_DP, paper="farias2021", role=role,
                              caveat=_ig_caveat)(mechanism)


global_diffpid3 = _register(
    "global_diffpid3", "global", "baseline",
    "GlobalDiffPID3 (farias2021 Algorithm 2, Friedman & Schuster 2010): split attribute by "
    "the exponential mechanism.\n\n    See :func:`diffpid3` (``variant='global'``).",
)
local_diffpid3 = _register(
    "local_diffpid3", "local", "mechanism",
    "LocalDiffPID3 (farias2021 Sec 5.2): split attribute by the local dampening "
    "mechanism.\n\n    See :func:`diffpid3` (``variant='local'``).",
)
shifted_local_diffpid3 = _register(
    "shifted_local_diffpid3", "shifted", "mechanism",
    "ShiftedLocalDiffPID3 (farias2021 Sec 5.2): split attribute by the shifted local "
    "dampening mechanism.\n\n    See :func:`diffpid3` (``variant='shifted'``).",
)

