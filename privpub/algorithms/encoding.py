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

from privpub.errors import PrivpubError
from privpub.types import Table

__all__ = ["TableEncoder", "EncodedTable", "domain_codes"]


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
