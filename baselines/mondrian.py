"""Mondrian multidimensional k-anonymity, the k-anonymous baseline of qardaji2012 (Fig. 3).

qardaji2012 Sec. 4.2 compares RPS on UCI Adult with "the original Mondrian algorithm"
[LDR06] and says why RPS wins: "Mondrian gets the actual median without considering the
class label". Mondrian recursively cuts the quasi-identifier space at the median of one
dimension until no allowable cut remains, then generalises every record to its equivalence
class (the leaf it ends in). This module implements strict and relaxed multidimensional
partitioning on mixed numeric / ordinal / categorical quasi-identifiers (a numba kernel),
reports the normalized certainty penalty [XWPYF06], and recodes each class into ordinary
attribute values so that the released table has the input's schema and can be scored by
:mod:`privpub.metrics.classification` exactly like the original (qardaji2012 Sec. 4.2: 5-fold
cross-validated Naive Bayes and C4.5). Also here: the verifier of k-anonymous tables
(:func:`verify_k_anonymous_table`, registered for every ``k-anonymity`` table release).

How categorical values are ordered, how a class becomes a representative record, which
attributes reproduce Fig. 3 and how fast it runs: docs/design.md, "qardaji2012: RPS"
(Mondrian).

References
----------
.. [LDR06] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
   k-anonymity. ICDE 2006 (Sec. 4: strict and relaxed multidimensional partitioning,
   choose_dimension, find_median, allowable cuts).
.. [XWPYF06] J. Xu, W. Wang, J. Pei, X. Wang, B. Shi, A. W.-C. Fu. Utility-based
   anonymization using local recoding. KDD 2006 (Sec. 2: normalized certainty penalty).
.. [QL12] W. Qardaji, N. Li. Recursive partitioning and summarization. ASIACCS 2012,
   Sec. 3 (summarising a region), Sec. 4.2 and Fig. 3 (Adult, Mondrian, majority vote).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit

from privpub.errors import DataError, NotApplicableError, PrivpubError
from privpub.registry import K_ANONYMITY, register_mechanism
from privpub.types import Kind, Release, Table
from privpub.validation import check_k, check_rng
from privpub.verify import register_verifier

__all__ = [
    "MODES",
    "mondrian",
    "mondrian_partition",
    "Partition",
    "normalized_certainty_penalty",
    "resolve_quasi_identifiers",
    "verify_k_anonymous_table",
]

#: Partitioning modes of [LDR06] Sec. 4.
MODES = ("strict", "relaxed")


# --------------------------------------------------------------------------- encoding
@dataclass(frozen=True)
class _QI:
    """One quasi-identifier prepared for partitioning.

    ``codes`` are order-preserving integers: for a numeric attribute the rank of the value
    among the distinct values of the table (``values[code]`` is the value); for an ordinal
    or categorical attribute the index of the value in the schema domain (``levels``).
    """

    name: str
    numeric: bool
    ordinal: bool
    codes: np.ndarray
    values: np.ndarray | None  # numeric: sorted distinct values
    levels: tuple | None  # discrete: the domain, in order
    size: float  # |A| of [XWPYF06]: numeric range of the table, or domain size

    def width(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """NCP of the generalised value [lo, hi] (codes) of this attribute, in [0, 1]."""
        if self.numeric:
            if self.size <= 0:
                return np.zeros(lo.shape)
            return (self.values[hi] - self.values[lo]) / self.size
        return np.where(hi > lo, (hi - lo + 1) / self.size, 0.0)


def resolve_quasi_identifiers(schema, quasi_identifiers=None) -> list[str]:
    """The quasi-identifier names: ``quasi_identifiers`` checked against ``schema``, or every
    attribute except the class attribute when None.

    Raises
    ------
    PrivpubError
        Unknown, repeated or empty names, or the class attribute named as a
        quasi-identifier (it is the sensitive attribute the classifiers predict).
    """
    cls = schema.class_attribute
    if quasi_identifiers is None:
        qis = [a for a in schema.names if a != cls]
        if not qis:
            raise PrivpubError("the table has no attribute besides the class: no quasi-identifier")
        return qis
    if isinstance(quasi_identifiers, str):
        quasi_identifiers = [quasi_identifiers]
    if not isinstance(quasi_identifiers, Iterable):
        raise PrivpubError(
            f"quasi_identifiers must be a list of attribute names, got {quasi_identifiers!r}"
        )
    qis = [str(q) for q in quasi_identifiers]
    if not qis:
        raise PrivpubError("quasi_identifiers is empty: name at least one attribute")
    missing = [q for q in qis if q not in schema.names]
    if missing:
        raise PrivpubError(
            f"quasi-identifiers {missing} are not attributes of the table; "
            f"attributes: {schema.names}"
        )
    if len(set(qis)) != len(qis):
        raise PrivpubError(f"quasi_identifiers repeats a name: {qis}")
    if cls is not None and cls in qis:
        raise PrivpubError(
            f"the class attribute {cls!r} cannot be a quasi-identifier: Mondrian releases it "
            "unchanged (it is the sensitive attribute)"
        )
    return qis


def _discrete_levels(attr, col: pd.Series) -> tuple:
    if attr.domain:
        return tuple(attr.domain)
    uniq = pd.unique(col.dropna())
    try:
        return tuple(sorted(uniq))
    except TypeError:
        return tuple(sorted(uniq, key=str))


def _dense_ranks(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(values, codes)``: the sorted distinct values of ``v`` and each entry's rank among
    them (``values[codes] == v``). Integer-valued columns of moderate range are ranked by
    counting (``O(n + range)``), others by :func:`numpy.unique` (a sort)."""
    if v.size:
        low, high = float(v.min()), float(v.max())
        if high - low <= 4 * v.size + 1024 and np.array_equal(v, np.floor(v)):
            offset = (v - low).astype(np.int64)
            present = np.bincount(offset, minlength=int(high - low) + 1) > 0
            rank = np.cumsum(present) - 1
            return np.flatnonzero(present) + low, rank[offset]
    values, codes = np.unique(v, return_inverse=True)
    return values, codes.reshape(-1)


def _encode(table: Table, qis: list[str]) -> list[_QI]:
    out = []
    df = table.data
    for name in qis:
        attr = table.schema[name]
        col = df[name]
        if attr.kind == "numeric":
            try:
                v = col.to_numpy(dtype=float)
            except (TypeError, ValueError):
                raise DataError(f"numeric quasi-identifier {name!r} is not numeric") from None
            if not np.isfinite(v).all():
                raise DataError(
                    f"numeric quasi-identifier {name!r} has "
                    f"{int((~np.isfinite(v)).sum())} missing or infinite values"
                )
            values, codes = _dense_ranks(v)
            size = float(values[-1] - values[0]) if values.size else 0.0
            out.append(_QI(name, True, False, codes.astype(np.int64), values, None, size))
            continue
        levels = _discrete_levels(attr, col)
        if len(set(levels)) != len(levels):
            raise DataError(f"attribute {name!r} has repeated values in its domain")
        if isinstance(col.dtype, pd.CategoricalDtype) and list(col.cat.categories) == list(levels):
            codes = col.cat.codes.to_numpy().astype(np.int64)
        else:
            codes = pd.Index(list(levels)).get_indexer(col.to_numpy()).astype(np.int64)
        bad = codes < 0
        if bad.any():
            shown = ", ".join(repr(x) for x in pd.unique(col[bad])[:5])
            raise DataError(
                f"quasi-identifier {name!r} has {int(bad.sum())} values outside its domain "
                f"(or missing): {shown}"
            )
        out.append(
            _QI(name, False, attr.kind == "ordinal", codes, None, levels, float(len(levels)))
        )
    return out


# --------------------------------------------------------------------------- partitioning
@njit(cache=True, nogil=True)
def _widths(lo, hi, numeric, values, offsets, size, out):
    """Normalised width (NCP, [XWPYF06]) of the code range [lo, hi] in every dimension."""
    for j in range(lo.size):
        if numeric[j]:
            if size[j] > 0:
                out[j] = (values[offsets[j] + hi[j]] - values[offsets[j] + lo[j]]) / size[j]
            else:
                out[j] = 0.0
        elif hi[j] > lo[j]:
            out[j] = (hi[j] - lo[j] + 1) / size[j]
        else:
            out[j] = 0.0


@njit(cache=True, nogil=True)
def _sorted_copy(col, buf):
    """``col`` sorted, in the scratch buffer ``buf`` (no allocation). Shell sort with
    Ciura's gaps extended by x2.25: plain insertion sort below 10 entries, ``O(m^1.3)``
    in practice, and far quicker for numba to compile than ``ndarray.sort``. Used only
    where counting does not apply (codes spread over more than ``4 m`` values)."""
    m = col.size
    out = buf[:m]
    for i in range(m):  # (explicit loops: numba compiles slice assignment slowly)
        out[i] = col[i]
    gap = 1
    while gap * 9 // 4 < m:  # largest gap of the sequence below m
        gap = gap * 9 // 4 + 1 if gap > 1 else 4
    while True:
        for i in range(gap, m):
            v = out[i]
            j = i
            while j >= gap and out[j - gap] > v:
                out[j] = out[j - gap]
                j -= gap
            out[j] = v
        if gap == 1:
            break
        gap = gap * 4 // 9 if gap > 4 else 1
    return out


@njit(cache=True, nogil=True)
def _median(col, lo, hi, hist, buf):
    """``(v, below, upto)`` for the codes ``col`` (all in ``[lo, hi]``): the value of rank
    ``len(col) // 2``, and how many values are ``< v`` and ``<= v``. Counting when the code
    range is at most ``4 len(col)`` (``O(len(col))``), else sorting."""
    m = col.size
    half = m // 2
    if hi - lo + 1 <= 4 * m:
        for i in range(m):
            hist[col[i] - lo] += 1
        below = 0
        v = lo
        for c in range(hi - lo + 1):
            if below + hist[c] > half:
                v = lo + c
                break
            below += hist[c]
        upto = below + hist[v - lo]
        for c in range(hi - lo + 1):
            hist[c] = 0
        return v, below, upto
    srt = _sorted_copy(col, buf)
    v = srt[half]
    below = half
    while below > 0 and srt[below - 1] == v:
        below -= 1
    upto = half + 1
    while upto < m and srt[upto] == v:
        upto += 1
    return v, below, upto


@njit(cache=True, nogil=True)
def _mode(col, lo, hi, hist, buf):
    """Most frequent of the codes ``col`` (all in ``[lo, hi]``); ties: the smallest."""
    m = col.size
    best = lo
    best_count = 0
    if hi - lo + 1 <= 4 * m:
        for i in range(m):
            hist[col[i] - lo] += 1
        for c in range(hi - lo + 1):
            if hist[c] > best_count:
                best_count = hist[c]
                best = lo + c
        for c in range(hi - lo + 1):
            hist[c] = 0
        return best
    srt = _sorted_copy(col, buf)
    run = 0
    for i in range(m):
        if i > 0 and srt[i] != srt[i - 1]:
            run = 0
        run += 1
        if run > best_count:  # strictly more: ties keep the smaller code
            best_count = run
            best = srt[i]
    return best


@njit(cache=True, nogil=True)
def _minmax(col, a, b, lo, hi, j):
    """``lo[j], hi[j] = min, max of col[a:b]`` (``a < b``), a vectorisable loop."""
    mn = col[a]
    mx = col[a]
    for i in range(a + 1, b):
        v = col[i]
        mn = min(mn, v)
        mx = max(mx, v)
    lo[j] = mn
    hi[j] = mx


@njit(cache=True, nogil=True)
def _kernel(codes, numeric, categorical, values, offsets, size, k, strict, act):
    """Mondrian on integer codes ``codes[dim, row]``, see :func:`mondrian_partition`.

    Depth-first with an explicit stack of row segments. The codes live in two working
    copies ``x[0], x[1]`` of shape ``(d, n)`` whose columns hold the rows in segment order:
    a cut moves its segment from one copy to the other, left side first (a stable
    partition; two sequential write streams), so no copy-back is needed, and the children's
    ranges are min/max over contiguous slices. Every access is sequential; a node of ``m``
    rows costs ``O(m d)`` (median by counting, or sorting ``m`` codes). Returns per-row
    class labels and, per class: size, min and max code of every dimension, and the most
    frequent code of every categorical one.
    """
    d, n = codes.shape
    cap = n // k + 1
    x = np.empty((2, d, n), np.int32)
    ids = np.empty((2, n), np.int64)
    for i in range(n):
        ids[0, i] = act[i]
    for j in range(d):
        for i in range(n):
            x[0, j, i] = codes[j, act[i]]
    dest = np.empty(n, np.int64)
    buf = np.empty(n, np.int32)
    labels = np.empty(n, np.int64)
    sizes = np.empty(cap, np.int64)
    class_lo = np.empty((cap, d), np.int64)
    class_hi = np.empty((cap, d), np.int64)
    class_mode = np.zeros((cap, d), np.int64)
    stack_s = np.empty(cap + 2, np.int64)
    stack_e = np.empty(cap + 2, np.int64)
    stack_b = np.empty(cap + 2, np.int64)  # which copy holds the segment
    stack_lo = np.empty((cap + 2, d), np.int64)
    stack_hi = np.empty((cap + 2, d), np.int64)
    lo = np.empty(d, np.int64)
    hi = np.empty(d, np.int64)
    w = np.empty(d)
    tried = np.empty(d, np.bool_)
    stack_s[0] = 0
    stack_e[0] = n
    stack_b[0] = 0
    top_code = 0
    for j in range(d):
        _minmax(x[0, j], 0, n, stack_lo[0], stack_hi[0], j)
        top_code = max(top_code, stack_hi[0, j])
    hist = np.zeros(top_code + 1, np.int64)  # counts of codes lo..hi, hi - lo <= top_code
    top = 1
    n_classes = 0
    while top > 0:
        top -= 1
        s = stack_s[top]
        e = stack_e[top]
        b = stack_b[top]
        m = e - s
        for j in range(d):
            lo[j] = stack_lo[top, j]
            hi[j] = stack_hi[top, j]
        cut = -1
        if m >= 2 * k:
            _widths(lo, hi, numeric, values, offsets, size, w)
            for j in range(d):
                tried[j] = False
            for _ in range(d if strict else 1):
                dim = -1
                best = 0.0
                for j in range(d):  # widest untried dimension of non-zero width
                    if not tried[j] and w[j] > best:
                        best = w[j]
                        dim = j
                if dim < 0:
                    break
                tried[dim] = True
                col = x[b, dim, s:e]
                med, below, upto = _median(col, lo[dim], hi[dim], hist, buf)
                if strict:
                    if upto <= m - k and (below < k or 2 * upto - m <= m - 2 * below):
                        cut = upto
                    elif below >= k:
                        cut = below
                    else:
                        continue
                    ties_left = upto - below if cut == upto else 0
                else:
                    cut = m // 2
                    ties_left = cut - below
                # destinations: values < med and the first ties_left ties go left, in order
                left = s
                right = s + cut
                for i in range(m):
                    c = col[i]
                    g = c < med or (c == med and ties_left > 0)
                    if c == med and g:
                        ties_left -= 1
                    dest[i] = left if g else right
                    left += g
                    right += 1 - g
                src_ids = ids[b, s:e]
                dst_ids = ids[1 - b]
                for i in range(m):
                    dst_ids[dest[i]] = src_ids[i]
                for j in range(d):
                    src = x[b, j, s:e]
                    dst = x[1 - b, j]
                    for i in range(m):
                        dst[dest[i]] = src[i]
                break
        if cut > 0:
            # children in the other copy; right pushed first so the left one comes next
            stack_s[top] = s + cut
            stack_e[top] = e
            stack_s[top + 1] = s
            stack_e[top + 1] = s + cut
            stack_b[top] = 1 - b
            stack_b[top + 1] = 1 - b
            for j in range(d):
                _minmax(x[1 - b, j], s + cut, e, stack_lo[top], stack_hi[top], j)
                _minmax(x[1 - b, j], s, s + cut, stack_lo[top + 1], stack_hi[top + 1], j)
            top += 2
            continue
        cid = n_classes
        n_classes += 1
        sizes[cid] = m
        for i in range(s, e):
            labels[ids[b, i]] = cid
        for j in range(d):
            class_lo[cid, j] = lo[j]
            class_hi[cid, j] = hi[j]
            class_mode[cid, j] = lo[j]
            if categorical[j] and hi[j] > lo[j]:
                class_mode[cid, j] = _mode(x[b, j, s:e], lo[j], hi[j], hist, buf)
    return (
        labels,
        n_classes,
        sizes[:n_classes],
        class_lo[:n_classes],
        class_hi[:n_classes],
        class_mode[:n_classes],
    )


@dataclass(frozen=True)
class Partition:
    """Mondrian's equivalence classes.

    Attributes
    ----------
    labels : ndarray, shape (n_rows,)
        Class id of every row, ``0 .. n_classes - 1``.
    sizes : ndarray, shape (n_classes,)
    lo, hi : ndarray, shape (n_classes, n_quasi_identifiers)
        Smallest and largest code of every quasi-identifier in each class.
    mode : ndarray, shape (n_classes, n_quasi_identifiers)
        Most frequent code of each categorical quasi-identifier (ties: smallest code).
    """

    labels: np.ndarray
    sizes: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    mode: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(self.sizes.size)


def mondrian_partition(
    qis: list[_QI], n: int, *, k: int, strict: bool, rng: np.random.Generator
) -> Partition:
    """Mondrian's top-down partitioning ([LDR06] Fig. 4, ``Anonymize``) of ``n`` rows.

    A partition with fewer than ``2k`` rows has no allowable cut and is final. Otherwise its
    dimensions are ranked by normalised width (the NCP of the partition's range in that
    dimension: [LDR06]'s ``choose_dimension``, "the dimension with the widest (normalized)
    range of values"; ties go to the first quasi-identifier) and the median ``v`` of the
    chosen dimension is found (the element of rank ``m // 2``, by counting or sorting).

    - Strict: the cut lies between distinct values, next to the median: lhs = values
      ``<= v`` or lhs = values ``< v``, whichever is allowable (both sides >= k) and more
      balanced, "<= v" on a tie. Every other value boundary is further from the median, so
      if both fail the dimension has no allowable cut (a partition of >= 2k rows can only
      fail "< v" by lhs < k and "<= v" by rhs < k) and the next widest is tried; the
      partition is final when no dimension of non-zero width has one.
    - Relaxed: lhs = the ``m // 2`` smallest rows: the records equal to the median are
      divided between the two sides, whose ranges then overlap. Final when every dimension
      has width 0.

    ``rng`` shuffles the rows first, which decides which tied records go left in relaxed
    mode; strict partitions do not depend on it. Compiled with numba: ``O(m d)`` per node of
    ``m`` rows, ``O(n d depth)`` in all.
    """
    codes = np.empty((len(qis), n), np.int64)
    for j, q in enumerate(qis):
        codes[j] = q.codes
    numeric = np.array([q.numeric for q in qis], dtype=np.bool_)
    categorical = np.array([not q.numeric and not q.ordinal for q in qis], dtype=np.bool_)
    vals = [q.values if q.numeric else np.zeros(0) for q in qis]
    offsets = np.cumsum([0] + [v.size for v in vals])[:-1].astype(np.int64)
    values = np.concatenate(vals).astype(float) if vals else np.zeros(0)
    size = np.array([q.size for q in qis], dtype=float)
    act = rng.permutation(n).astype(np.int64)
    labels, _, sizes, lo, hi, mode = _kernel(
        codes, numeric, categorical, values, offsets, size, int(k), bool(strict), act
    )
    return Partition(labels, sizes, lo, hi, mode)


# --------------------------------------------------------------------------- recoding
def normalized_certainty_penalty(qis, sizes, lo, hi) -> float:
    """NCP of a partition [XWPYF06], normalised to [0, 1].

    For a class ``G`` and a numeric attribute ``A``: ``(max_G A - min_G A) / (max_T A -
    min_T A)`` (0 if ``A`` is constant in the table); for an ordinal or categorical attribute
    whose generalised value is the set of ``c`` domain values between the class's smallest
    and largest (in domain order): ``c / |A|`` if ``c > 1`` and 0 if ``c = 1`` (the
    [XWPYF06] definition with the domain order as a flat hierarchy of intervals). The table's
    NCP sums this over records and attributes; we divide by ``n_rows x n_quasi_identifiers``
    so that 0 = nothing generalised and 1 = every value generalised to the whole domain.
    """
    n = int(sizes.sum())
    if n == 0 or not qis:
        return 0.0
    per_class = np.zeros(sizes.size)
    for j, q in enumerate(qis):
        per_class += q.width(lo[:, j], hi[:, j])
    return float(np.clip(per_class @ sizes / (n * len(qis)), 0.0, 1.0))


def _recoded_column(q: _QI, col: pd.Series, rep: np.ndarray):
    """The released column: representative code per row -> values of the input's dtype."""
    if q.numeric:
        return rep
    if isinstance(col.dtype, pd.CategoricalDtype):
        if list(col.cat.categories) == list(q.levels):
            return pd.Categorical.from_codes(rep, dtype=col.dtype)
        return pd.Categorical(np.asarray(q.levels, dtype=object)[rep], dtype=col.dtype)
    levels = np.asarray(q.levels, dtype=object) if col.dtype == object else np.asarray(q.levels)
    return levels[rep]


# --------------------------------------------------------------------------- mechanism
@register_mechanism(
    "mondrian",
    input_kind=Kind.TABLE,
    output_kind=Kind.TABLE,
    privacy=K_ANONYMITY,
    paper="qardaji2012",
    role="baseline",
    source="Sec 4.2, Fig. 3 (the k-anonymity baseline)",
)
def mondrian(
    table: Table,
    *,
    k: int,
    mode: str = "strict",
    quasi_identifiers=None,
    rng: np.random.Generator,
) -> Release:
    """Mondrian multidimensional k-anonymity [LDR06] (qardaji2012 Fig. 3's k-anonymity baseline).

    Parameters
    ----------
    table : Table
        The input; not modified.
    k : int
        Anonymity parameter, ``2 <= k <= n_rows``.
    mode : {"strict", "relaxed"}
        [LDR06] Sec. 4. ``"strict"``: a partition is cut at a value boundary next to the
        median so that the two sides do not overlap; a cut is allowable only if both sides
        hold >= k rows, so classes have >= k rows (possibly many more when values repeat).
        ``"relaxed"``: the sorted partition is halved at the median position, records equal
        to the median being divided between the sides (overlapping ranges); classes hold
        between k and 2k - 1 rows unless all their quasi-identifiers are equal.
    quasi_identifiers : list of str, optional
        Attributes to generalise. Default: every schema attribute except the class
        attribute. The class attribute may not be one (it is the sensitive value the
        classifiers of Fig. 3 predict); attributes that are not quasi-identifiers are
        released unchanged.
    rng : numpy.random.Generator
        Breaks ties between equal values (relaxed mode); strict output is deterministic.

    Returns
    -------
    Release
        ``value``: a :class:`~privpub.types.Table` with the input's schema, columns and row
        order, each quasi-identifier replaced by its class representative (range midpoint,
        middle of the ordinal interval, most frequent category; why: docs/design.md), every
        combination of quasi-identifier values shared by >= k rows.
        ``info``: ``{"ncp": normalized certainty penalty in [0, 1], "classes": number of
        equivalence classes}``.

    Raises
    ------
    PrivpubError
        Bad ``k`` (< 2 or > n_rows), ``mode`` or ``quasi_identifiers``; a value outside its
        domain, missing, or a non-numeric numeric attribute (:class:`DataError`).

    Examples
    --------
    >>> import pandas as pd
    >>> from privpub.types import Attribute, Schema, Table
    >>> schema = Schema((Attribute("age", "numeric", (0, 100)),
    ...                  Attribute("y", "categorical", ("a", "b"))), class_attribute="y")
    >>> t = Table(pd.DataFrame({"age": [20, 21, 30, 31], "y": ["a", "b", "a", "b"]}), schema)
    >>> out = mondrian(t, k=2, rng=np.random.default_rng(0))
    >>> out.value.data["age"].tolist(), out.info["classes"]
    ([20.5, 20.5, 30.5, 30.5], 2)
    """
    if not isinstance(table, Table):
        raise DataError(f"mondrian needs a Table, got {type(table).__name__}")
    k = check_k(k)
    if mode not in MODES:
        raise PrivpubError(f"mode must be one of {MODES}, got {mode!r}")
    rng = check_rng(rng)
    n = table.n_rows
    if k > n:
        raise NotApplicableError(
            f"k = {k} exceeds the number of rows ({n}): no {k}-anonymous release"
        )
    qis = _encode(table, resolve_quasi_identifiers(table.schema, quasi_identifiers))
    part = mondrian_partition(qis, n, k=k, strict=mode == "strict", rng=rng)
    info = {
        "ncp": normalized_certainty_penalty(qis, part.sizes, part.lo, part.hi),
        "classes": part.n_classes,
    }
    return Release(Table(_recoded(table.data, qis, part), table.schema), info)


def _recoded(data: pd.DataFrame, qis: list[_QI], part: Partition) -> pd.DataFrame:
    """A copy of ``data`` with every quasi-identifier replaced by its class's representative:
    the range midpoint (numeric), the middle of the domain interval (ordinal), the most
    frequent value (categorical)."""
    lo, hi, labels = part.lo, part.hi, part.labels
    data = data.copy()
    for j, q in enumerate(qis):
        if q.numeric:
            rep = ((q.values[lo[:, j]] + q.values[hi[:, j]]) / 2.0)[labels]
        elif q.ordinal:
            rep = ((lo[:, j] + hi[:, j]) // 2)[labels]
        else:
            rep = part.mode[:, j][labels]
        data[q.name] = _recoded_column(q, data[q.name], rep)
    return data


# --------------------------------------------------------------------------- verifier
@register_verifier(K_ANONYMITY, Kind.TABLE)
def verify_k_anonymous_table(original, release, params) -> None:
    """Every combination of quasi-identifier values of ``release`` is held by >= k rows.

    The quasi-identifiers are ``params["quasi_identifiers"]`` or, when absent or None, every
    attribute of the release's schema except the class attribute (Mondrian's default).
    Raises :class:`PrivpubError` on a violation.
    """
    if not isinstance(release, Table):
        raise PrivpubError(f"a k-anonymous table release must be a Table, got {type(release)}")
    if "k" not in params:
        raise PrivpubError("cannot verify k-anonymity: the cell has no parameter 'k'")
    k = int(params["k"])
    qis = resolve_quasi_identifiers(release.schema, params.get("quasi_identifiers"))
    if release.n_rows == 0:
        return
    counts = release.data.groupby(qis, observed=True, dropna=False, sort=False).size()
    smallest = int(counts.min())
    if smallest < k:
        raise PrivpubError(
            f"release is not {k}-anonymous: {int((counts < k).sum())} combinations of the "
            f"quasi-identifiers {qis} are held by fewer than {k} rows (smallest: {smallest})"
        )
