"""RPS for relational tables (qardaji2012 Sec 3.2, Sec 4): ``rps_table``, a synthetic table
under record-DP.

Every non-class attribute is an axis of the space (:func:`table_axes`): numeric attributes
with an integer dtype are integer axes; other numeric attributes are continuous with cuts
at the multiples of ``granularity`` (Sec 4.2: "integer granularity for continuous
attributes"); ordinal attributes use their given order; categorical attributes a random
order of their domain, drawn from ``rng`` (data-independent: "generate a random order
otherwise"). The class attribute, if any, is not an axis: it is summarised per leaf by a
noisy majority vote (Sec 4.2) and, with ``quality="class"``, steers the partition (Eq 3).

The tree is :func:`privpub.mechanisms.rps.framework.rps` with
:class:`privpub.mechanisms.rps.partition.BoxPartition`, the stopping conditions of Sec 3.2 (maximum
depth, region too narrow to split, optionally a noisy count at most ``stop_count``) and
:class:`TableLeafSummary`. The budget per path and why the release is epsilon-DP:
docs/design.md, "qardaji2012: RPS".

References
----------
.. [QL12] W. Qardaji, N. Li. Recursive Partitioning and Summarization: A Practical
   Framework for Differentially Private Data Publishing. ASIACCS 2012. Sec 3.2, Sec 4.1
   (Fig 1-2), Sec 4.2 (Fig 3), Eq (2)-(3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privpub.algorithms.encoding import domain_codes
from privpub.errors import DataError, PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.mechanisms.rps.budget import PathBudget
from privpub.mechanisms.rps.checks import check_option, check_real
from privpub.mechanisms.rps.framework import NoisyCountStop, RPSTree, rps
from privpub.mechanisms.rps.partition import (
    ATTRIBUTE_CHOICES,
    PARTITIONS,
    SUMMARIES,
    BoxPartition,
    BoxRegion,
    sample_in_box,
)
from privpub.mechanisms.rps.quality import ClassBalance, CountBalance
from privpub.noise import laplace_mechanism
from privpub.registry import RECORD_DP, register_mechanism
from privpub.types import Kind, Release, Table
from privpub.validation import check_depth, check_epsilon, check_rng

__all__ = ["rps_table", "QUALITIES", "TableAxes", "table_axes", "TableLeafSummary"]

QUALITIES = ("count", "class")


@dataclass
class TableAxes:
    """A table as RPS axes.

    Attributes
    ----------
    names : list of str
        The axis attributes (every schema attribute but the class), in schema order.
    columns : list of numpy.ndarray
        Float coordinates per axis (codes in the axis order for ordinal/categorical).
    discrete : numpy.ndarray of bool
    lo, hi : numpy.ndarray
        The root box (the public schema domain).
    orders : list
        Per axis: for ordinal/categorical attributes the array of domain indices in axis
        order (``orders[j][code]`` = domain index); None for numeric attributes.
    labels : numpy.ndarray or None
        Class attribute as domain indices.
    n_classes : int
    """

    names: list
    columns: list
    discrete: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    orders: list
    labels: np.ndarray | None
    n_classes: int


def _domain_codes(col: pd.Series, domain: tuple, name: str) -> np.ndarray:
    if len(domain) == 0:
        raise PrivpubError(
            f"attribute {name!r} has an empty domain: RPS needs the public domain of every "
            "ordinal and categorical attribute (a domain read from the data is not private)"
        )
    codes = domain_codes(col, domain)
    bad = codes < 0
    if bad.any():
        shown = ", ".join(repr(v) for v in pd.unique(col[bad])[:5])
        raise DataError(f"attribute {name!r} has values outside its domain (or missing): {shown}")
    return codes.astype(np.int64)


def table_axes(table: Table, rng: np.random.Generator) -> TableAxes:
    """Encode ``table`` as RPS axes (see the module docstring); ``rng`` draws the random
    orders of categorical domains."""
    schema = table.schema
    cls = schema.class_attribute
    names, columns, discrete, lo, hi, orders = [], [], [], [], [], []
    for a in schema.attributes:
        if a.name == cls:
            continue
        col = table.data[a.name]
        if a.kind == "numeric":
            if len(a.domain) != 2:
                raise PrivpubError(
                    f"numeric attribute {a.name!r} needs a (low, high) domain, got {a.domain!r}"
                )
            d_lo, d_hi = float(a.domain[0]), float(a.domain[1])
            if not (math.isfinite(d_lo) and math.isfinite(d_hi) and d_lo <= d_hi):
                raise PrivpubError(f"numeric attribute {a.name!r}: bad domain {a.domain!r}")
            values = col.to_numpy(dtype=float, na_value=np.nan)
            if np.isnan(values).any():
                raise DataError(f"attribute {a.name!r} has missing values")
            integer = pd.api.types.is_integer_dtype(col.dtype)
            if integer:
                d_lo, d_hi = float(math.ceil(d_lo)), float(math.floor(d_hi))
            if values.size and (values.min() < d_lo or values.max() > d_hi):
                raise DataError(f"attribute {a.name!r} has values outside its domain {a.domain}")
            orders.append(None)
            discrete.append(integer)
        else:
            idx = _domain_codes(col, a.domain, a.name)
            k = len(a.domain)
            order = np.arange(k) if a.kind == "ordinal" else rng.permutation(k)
            position = np.empty(k, dtype=np.int64)
            position[order] = np.arange(k)
            values = position[idx].astype(float)
            d_lo, d_hi = 0.0, float(k - 1)
            orders.append(order)
            discrete.append(True)
        names.append(a.name)
        columns.append(values)
        lo.append(d_lo)
        hi.append(d_hi)
    if not names:
        raise PrivpubError("the table has no attribute besides the class attribute to partition")
    labels, n_classes = None, 0
    if cls is not None:
        domain = schema[cls].domain
        labels = _domain_codes(table.data[cls], domain, cls)
        n_classes = len(domain)
    return TableAxes(
        names, columns, np.array(discrete), np.array(lo), np.array(hi), orders, labels, n_classes
    )


class TableLeafSummary:
    """Leaf summary (Sec 3.2, Sec 4.2): a Laplace-noised count, or with a class attribute
    the Laplace-noised class histogram (L1 sensitivity 1: one record is in one class),
    whose sum is the count and whose argmax is the noisy majority vote. Uses all the budget
    the path has left."""

    def __init__(self, labels, n_classes):
        self.labels = labels
        self.n_classes = n_classes

    def __call__(self, node, *, epsilon, rng, ledger):
        if self.labels is None:
            noisy = laplace_mechanism(
                float(node.rows.size),
                sensitivity=1.0,
                epsilon=epsilon,
                rng=rng,
                ledger=ledger,
                label="leaf summary: noisy count (Laplace)",
            )
            return int(np.rint(max(float(noisy), 0.0))), -1
        hist = np.bincount(self.labels[node.rows], minlength=self.n_classes).astype(float)
        noisy = laplace_mechanism(
            hist,
            sensitivity=1.0,
            epsilon=epsilon,
            rng=rng,
            ledger=ledger,
            label="leaf summary: noisy class histogram (Laplace; count = sum, class = argmax)",
        )
        return int(np.rint(max(float(noisy.sum()), 0.0))), int(noisy.argmax())


def _decode(table: Table, enc: TableAxes, points: np.ndarray, classes: np.ndarray):
    data = {}
    axis = {name: j for j, name in enumerate(enc.names)}
    cls = table.schema.class_attribute
    for a in table.schema.attributes:
        col = table.data[a.name]
        if a.name == cls:
            idx = classes
        else:
            j = axis[a.name]
            v = points[:, j]
            if enc.orders[j] is None:
                data[a.name] = v.astype(col.dtype) if enc.discrete[j] else v
                continue
            idx = enc.orders[j][v.astype(np.int64)]
        if isinstance(col.dtype, pd.CategoricalDtype) and list(col.cat.categories) == list(
            a.domain
        ):
            data[a.name] = pd.Categorical.from_codes(idx, dtype=col.dtype)
        else:
            values = np.empty(len(a.domain), dtype=object)
            values[:] = list(a.domain)
            data[a.name] = values[idx]
    return pd.DataFrame(data)  # dict order = schema order


def _purity(leaves, labels, n_classes) -> float:
    total = sum(int(leaf.rows.size) for leaf in leaves)
    if total == 0:
        return math.nan
    majority = sum(
        int(np.bincount(labels[leaf.rows], minlength=n_classes).max())
        for leaf in leaves
        if leaf.rows.size
    )
    return majority / total


@register_mechanism(
    "rps_table",
    input_kind=Kind.TABLE,
    output_kind=Kind.TABLE,
    privacy=RECORD_DP,
    paper="qardaji2012",
    audit={"cost_ms": 60},
)
def rps_table(table: Table, *, epsilon: float, depth: int = 10,
              stop_count: float | None = None, partition: str = "median",
              attributes: str = "all", quality: str = "count", summary: str = "uniform",
              split: float = 0.5, granularity: float = 1.0, stop_share: float = 0.5,
              level_ratio: float = 1.0, rng: np.random.Generator,
              ledger: PrivacyLedger | None = None) -> Release:
    """Synthetic table by Recursive Partitioning and Summarization ([QL12] Alg 1, Sec 3-4).

    Parameters
    ----------
    table : Table
        Input; every ordinal/categorical attribute needs its public domain, numeric ones a
        public ``(low, high)`` domain containing every value. May be empty (DP neighbours
        may be); the output then holds noise.
    epsilon : float
        Privacy budget (record-level DP: add or remove one row), > 0.
    depth : int, default 10
        Maximum depth, >= 0 (Fig 1: 5-100, best 50 with ``stop_count=5``; Fig 2: 10;
        Fig 3: 50). The default 10 is safe without a noisy-count stop; deep trees on
        multi-dimensional tables need ``stop_count``.
    stop_count : float or None, default None
        Stop a region when its Laplace-noised count is at most this (Sec 3.2: 1, 3, 5, 10;
        Fig 3's "stop at a count of 0" is ``stop_count=0``). None: no noisy-count check
        (regions stop at ``depth`` or when too narrow to split, which costs nothing).
    partition : {"median", "midpoint"}, default "median"
        Exponential mechanism over candidate cuts ("median") or the data-independent
        midpoint of the region's range (Fig 2c), which spends nothing.
    attributes : {"all", "random"}, default "all"
        One exponential mechanism over every cut of every attribute at once (Sec 3.2), or
        a uniformly random attribute first, then the cut (Sec 4.2, Fig 3).
    quality : {"count", "class"}, default "count"
        Eq (2) (sensitivity 1/2) or Eq (3) (binary class attribute required; sensitivity
        3/2, derived, see :func:`privpub.mechanisms.rps.quality.quality_class`).
    summary : {"uniform", "midpoint", "lower"}, default "uniform"
        Where each generated tuple lies in its leaf region (Sec 3.2;
        :func:`privpub.mechanisms.rps.partition.sample_in_box`).
    split, stop_share, level_ratio : float, defaults 0.5, 0.5, 1.0
        The budget of a path (:class:`privpub.mechanisms.rps.budget.PathBudget`): ``split`` of
        epsilon for the leaf summaries (Sec 3.2: half), ``stop_share`` of each level's part
        for the noisy-count check when ``stop_count`` is set, levels weighted by
        ``level_ratio ** i`` (1: equal parts; < 1 front-loads the shallow levels, the
        qardaji2012 Fig. 1 probe).
    granularity : float, default 1.0
        Cut granularity of continuous (float) attributes (Sec 4.2: integer granularity).
        Integer-typed and ordered discrete attributes are cut between consecutive values.
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional
        Receives one parallel block over the disjoint root-to-leaf paths; ``ledger.spent``
        is what the most expensive path spent (<= epsilon).

    Returns
    -------
    Release
        ``value``: a Table with the input's schema (class attribute included), one row
        per generated tuple, in random order. ``info``: ``leaves``, ``rows`` (released),
        ``max_depth`` and, with a class attribute, ``purity`` (Sec 4.1, Fig 2: read from
        the original data, a non-private diagnostic, never part of the release;
        docs/design.md).

    Raises
    ------
    PrivpubError
        A bad parameter, ``quality="class"`` without a binary class attribute, or an
        attribute without a public domain; :class:`DataError` for values outside it.
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth(depth)
    stop_count = check_real(stop_count, "stop_count", low=0.0, allow_none=True)
    for value, options, name in ((partition, PARTITIONS, "partition"),
                                 (attributes, ATTRIBUTE_CHOICES, "attributes"),
                                 (quality, QUALITIES, "quality"), (summary, SUMMARIES, "summary")):
        check_option(value, options, name)
    budget = PathBudget(split=split, stop_share=stop_share, level_ratio=level_ratio)
    granularity = check_real(granularity, "granularity", low=0.0, strict=True)
    rng = check_rng(rng)
    if not isinstance(table, Table):
        raise DataError(f"rps_table needs a Table, got {type(table).__name__}")
    if quality == "class":
        _check_binary_class(table)
    ledger = ensure_ledger(ledger, epsilon)
    enc = table_axes(table, rng)
    part = BoxPartition(enc.columns, enc.discrete,
                        quality=ClassBalance() if quality == "class" else CountBalance(),
                        granularity=granularity,
                        labels=enc.labels if quality == "class" else None, method=partition,
                        attributes=attributes, domain_lo=enc.lo, domain_hi=enc.hi)
    tree = rps(table.n_rows, BoxRegion(enc.lo.copy(), enc.hi.copy()), partition=part,
               summarize=TableLeafSummary(enc.labels, enc.n_classes),
               stopping=None if stop_count is None else NoisyCountStop(stop_count),
               epsilon=epsilon, depth=depth, rng=rng, ledger=ledger, budget=budget)
    return _synthesize(table, enc, tree, summary, rng)


def _check_binary_class(table: Table) -> None:
    """Eq (3) needs a binary class attribute."""
    cls = table.schema.class_attribute
    if cls is None:
        raise PrivpubError(
            "quality='class' (Eq 3) needs a table with a class attribute "
            "(Schema.class_attribute); this table has none"
        )
    if len(table.schema[cls].domain) != 2:
        raise PrivpubError(
            f"quality='class' (Eq 3) is defined for a binary class; {cls!r} has "
            f"{len(table.schema[cls].domain)} values"
        )


def _synthesize(table: Table, enc: TableAxes, tree: RPSTree, summary: str, rng) -> Release:
    """The release: each leaf's noisy count of tuples drawn in its box, with its noisy
    majority class, shuffled and decoded to the input's schema."""
    counts = np.array([leaf.summary[0] for leaf in tree.leaves], dtype=np.int64)
    lo = np.repeat(np.array([leaf.region.lo for leaf in tree.leaves]), counts, axis=0)
    hi = np.repeat(np.array([leaf.region.hi for leaf in tree.leaves]), counts, axis=0)
    classes = np.repeat(np.array([leaf.summary[1] for leaf in tree.leaves]), counts)
    points = sample_in_box(
        lo.reshape(-1, enc.discrete.size),
        hi.reshape(-1, enc.discrete.size),
        enc.discrete,
        summary,
        rng,
    )
    order = rng.permutation(points.shape[0])
    frame = _decode(table, enc, points[order], classes[order])
    info = {"leaves": len(tree.leaves), "rows": int(counts.sum()), "max_depth": tree.max_depth}
    diagnostics = ({} if enc.labels is None
                   else {"purity": _purity(tree.leaves, enc.labels, enc.n_classes)})
    return Release(Table(frame, table.schema), info, diagnostics)
