"""Public encoding of a table for tree learners: every attribute as integer codes from its
schema domain (numeric attributes: ``n_bins`` equal-width bins of the public domain), the
class attribute as class indices. No budget is spent: only the schema is read.

Shared by DiffPID3 (``mechanisms/diffpid3.py``, farias2021 Sec 5.2: "We discretize the
continuous attributes") and the diffprivlib reference tree (``baselines/diffprivlib_tree.py``,
which keeps numeric values raw).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from privpub.errors import NotApplicableError, PrivpubError
from privpub.types import Table

__all__ = ["TableEncoder", "EncodedTable", "MarginalDomain", "domain_codes"]


def domain_codes(col: pd.Series, domain) -> np.ndarray:
    """Position of every value of ``col`` in ``domain`` (-1 if absent): what
    ``pd.Index(domain).get_indexer`` gives on the values as Python objects, looked up once
    per category of a categorical column, and by integer arithmetic for an integer column
    and an integer domain (converting whole columns to objects dominated the refits of the
    cross-validation)."""
    index = pd.Index(list(domain))
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        lut = index.get_indexer(np.asarray(dtype.categories, dtype=object))
        codes = col.cat.codes.to_numpy()
        return np.where(codes >= 0, lut[codes], -1).astype(np.int64)
    if (isinstance(dtype, np.dtype) and dtype.kind in "iu" and len(col)
            and index.dtype == np.int64 and index.is_unique):
        v = col.to_numpy()
        lo, hi = int(v.min()), int(v.max())
        if hi - lo <= 1 << 16 and lo > -(1 << 62) and hi < 1 << 62:
            dom = index.to_numpy()
            inside = (dom >= lo) & (dom <= hi)
            lut = np.full(hi - lo + 1, -1, dtype=np.int64)
            lut[dom[inside] - lo] = np.flatnonzero(inside)
            return lut[v.astype(np.int64) - lo]
    return index.get_indexer(np.asarray(col, dtype=object)).astype(np.int64)


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
        codes = domain_codes(col, domain)
        if (codes < 0).any():
            raise PrivpubError(f"attribute {name!r} has values outside its domain (or missing)")
        return codes

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
            x[:, i] = self._codes(df[name], kind, dom, size, name, raw_numeric)
        y = self._codes(df[self.class_attribute], "categorical", self.classes,
                        len(self.classes), self.class_attribute)
        return x, y


@dataclass(frozen=True, eq=False)
class EncodedTable:
    """A table encoded once by ``encoder``: the code matrix ``x`` and class indices ``y``.

    A learner's ``refit`` and ``predict`` (DiffPID3's
    :class:`~privpub.mechanisms.diffpid3.PrivateDecisionTree`) take it in place of a
    :class:`~privpub.types.Table`; ``take(rows)`` cuts a subset of records, the same codes as
    encoding the subset (the encoding is row by row). The cross-validation of
    ``accuracy_cv_learner`` cuts its folds from it (farias2021 Sec 6.2).
    """

    encoder: TableEncoder
    x: np.ndarray
    y: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.y.size)

    def take(self, rows) -> EncodedTable:
        """The records ``rows`` (indices) of this table."""
        return EncodedTable(self.encoder, self.x[rows], self.y[rows])


# --------------------------------------------------------------------------- marginal domains
def _numeric_bins(name: str, domain, n_bins: int, integral: bool) -> tuple[float, float, int]:
    """``(lo, width_total, size)`` of a numeric attribute's public bins: ``n_bins``
    equal-width bins of ``[lo, hi]``, or one bin per value when an integer attribute has
    fewer than ``n_bins`` values (``width_total = hi - lo + 1`` for integers)."""
    if len(domain) != 2:
        raise PrivpubError(f"numeric attribute {name!r} needs a (low, high) domain, "
                           f"got {domain!r}")
    lo, hi = (float(v) for v in domain)
    if not (np.isfinite(lo) and np.isfinite(hi) and hi >= lo):
        raise PrivpubError(f"numeric attribute {name!r}: bad domain {domain!r}")
    if integral:
        span = hi - lo + 1.0
        return lo, span, int(min(n_bins, span))
    if not hi > lo:
        raise PrivpubError(f"numeric attribute {name!r} needs a domain with low < high")
    return lo, hi - lo, int(n_bins)


@dataclass(frozen=True)
class MarginalDomain:
    """Every attribute of a table (the class included) as a discrete public domain, the
    input of marginal-based synthesizers (AIM, MST, PrivBayes) and of the marginal metrics.

    Categorical and ordinal attributes keep their schema domain; a numeric attribute is cut
    into ``n_bins`` equal-width bins of its public ``(low, high)`` domain, or one bin per
    value when it holds integers and has fewer values than ``n_bins``. Only the schema and
    the columns' dtypes are read, so no budget is spent. Decoding draws a value uniformly
    within a numeric bin (an integer for an integer column) and returns the domain value
    otherwise, so a synthetic table has the input's schema.

    Attributes
    ----------
    names : tuple of str
        All attributes, in schema order.
    sizes : tuple of int
        Number of codes of each attribute.
    bins : tuple
        Per attribute: ``(lo, span, integral)`` for a numeric attribute, None otherwise.
    """

    schema: object
    names: tuple[str, ...]
    sizes: tuple[int, ...]
    bins: tuple
    n_bins: int

    @classmethod
    def from_table(cls, table: Table, n_bins: int = 32) -> MarginalDomain:
        """The domain of ``table``'s schema (numeric bins: see the class docstring)."""
        if not isinstance(table, Table):
            raise PrivpubError(f"expected a Table, got {type(table).__name__}")
        if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 1:
            raise PrivpubError(f"n_bins must be a positive integer, got {n_bins!r}")
        names, sizes, bins = [], [], []
        for a in table.schema.attributes:
            if a.kind == "numeric":
                integral = table.data[a.name].dtype.kind in "iub"
                lo, span, size = _numeric_bins(a.name, a.domain, int(n_bins), integral)
                bins.append((lo, span, integral))
            else:
                if not a.domain:
                    raise PrivpubError(f"attribute {a.name!r} needs a public domain (a domain "
                                       "read from the data is not private)")
                size = len(a.domain)
                bins.append(None)
            names.append(a.name)
            sizes.append(size)
        return cls(table.schema, tuple(names), tuple(sizes), tuple(bins), int(n_bins))

    @property
    def cells(self) -> float:
        """Size of the full domain (product of the attribute sizes, as a float)."""
        return float(np.prod(np.asarray(self.sizes, dtype=float)))

    def check_marginals(self, way: int, limit: float, who: str) -> None:
        """Refuse a domain whose largest ``way``-way marginal has more than ``limit`` cells
        (a synthesizer that holds such marginals in memory), naming the attributes and the
        fix: one :class:`~privpub.errors.NotApplicableError` line, before any work."""
        order = np.argsort(self.sizes)[::-1][:way]
        cells = float(np.prod([self.sizes[j] for j in order]))
        if cells > limit:
            names = " x ".join(f"{self.names[j]} ({self.sizes[j]})" for j in order)
            raise NotApplicableError(
                f"{who}: the domain is too large: the {way}-way marginal {names} has "
                f"{cells:.3g} cells (limit {limit:.3g}); lower n_bins or coarsen those "
                "attributes' public domains")

    def encode(self, table: Table) -> np.ndarray:
        """The table as an int64 code matrix (rows x attributes, schema order)."""
        if not isinstance(table, Table):
            raise PrivpubError(f"expected a Table, got {type(table).__name__}")
        df = table.data
        missing = [c for c in self.names if c not in df.columns]
        if missing:
            raise PrivpubError(f"table lacks columns {missing}")
        out = np.empty((len(df), len(self.names)), dtype=np.int64)
        for j, (name, size, b) in enumerate(zip(self.names, self.sizes, self.bins, strict=True)):
            col = df[name]
            if b is None:
                codes = domain_codes(col, self.schema[name].domain)
                if (codes < 0).any():
                    raise PrivpubError(
                        f"attribute {name!r} has values outside its domain (or missing)")
            else:
                lo, span, _ = b
                x = np.asarray(col, dtype=np.float64)
                if not np.isfinite(x).all():
                    raise PrivpubError(f"numeric attribute {name!r} has missing values")
                codes = np.clip(np.floor((x - lo) / span * size), 0, size - 1).astype(np.int64)
            out[:, j] = codes
        return out

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> Table:
        """A table with this domain's schema whose rows have the given codes (numeric
        values drawn uniformly within their bin from ``rng``)."""
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(self.names):
            raise PrivpubError(f"expected a code matrix with {len(self.names)} columns, "
                               f"got shape {codes.shape}")
        cols = {}
        for j, (name, size, b) in enumerate(zip(self.names, self.sizes, self.bins, strict=True)):
            c = codes[:, j].astype(np.int64)
            if c.size and (c.min() < 0 or c.max() >= size):
                raise PrivpubError(f"attribute {name!r}: codes outside 0..{size - 1}")
            if b is None:
                dom = self.schema[name].domain
                cols[name] = pd.Categorical.from_codes(c, categories=list(dom)) \
                    if all(isinstance(v, str) for v in dom) else np.asarray(dom)[c]
            else:
                lo, span, integral = b
                left, right = lo + span * c / size, lo + span * (c + 1) / size
                if integral:
                    first, stop = np.ceil(left), np.ceil(right)
                    cols[name] = (first + np.floor(rng.random(c.size) * (stop - first))
                                  ).astype(np.int64)
                else:
                    cols[name] = left + rng.random(c.size) * (right - left)
        return Table(pd.DataFrame(cols), self.schema)
