"""A record-DP synthetic table: noisy class-conditional marginals, then rows drawn from them.

A privpub plug-in (one file, privpub's public API only); docs/mechanism-authors.md explains
every line. Run it with ``plugins=[path/to/record_dp_synthetic_table.py]``.
"""

import numpy as np
import pandas as pd

from privpub.errors import DataError
from privpub.noise import laplace_mechanism
from privpub.registry import RECORD_DP, register_mechanism
from privpub.types import Attribute, Kind, Table
from privpub.validation import check_positive_int


def cell_count(attribute: Attribute, bins: int) -> int:
    """Cells of an attribute's public domain: its values, or ``bins`` intervals if numeric."""
    if not attribute.domain:
        raise DataError(f"attribute {attribute.name!r} has no public domain in the schema")
    return bins if attribute.kind == "numeric" else len(attribute.domain)


def cells(attribute: Attribute, column: pd.Series, bins: int) -> np.ndarray:
    """Each value's cell: its index in the domain, or its equal-width interval of the
    numeric domain ``(low, high)``. Only the schema decides the cells, never the data."""
    if attribute.kind == "numeric":
        low, high = (float(v) for v in attribute.domain)
        x = (column.to_numpy(dtype=float) - low) / (high - low) * bins
        return np.clip(np.floor(x), 0, bins - 1).astype(np.int64)
    index = {value: i for i, value in enumerate(attribute.domain)}
    unknown = set(column) - set(index)
    if unknown:
        raise DataError(f"attribute {attribute.name!r}: {sorted(map(str, unknown))[:3]} "
                        "outside its domain")
    return np.array([index[value] for value in column], dtype=np.int64)


def marginal_counts(table: Table, bins: int) -> list[np.ndarray]:
    """For every attribute beside the class, its histogram per class (classes x cells)."""
    schema = table.schema
    label = schema[schema.class_attribute]
    y = cells(label, table.data[label.name], bins)
    n_classes = cell_count(label, bins)
    out = []
    for attribute in schema.attributes:
        if attribute.name != label.name:
            n_cells = cell_count(attribute, bins)
            x = cells(attribute, table.data[attribute.name], bins)
            counts = np.bincount(y * n_cells + x, minlength=n_classes * n_cells)
            out.append(counts.reshape(n_classes, n_cells).astype(float))
    return out


def _draw(weights: np.ndarray, size: int, rng) -> np.ndarray:
    """``size`` indices drawn in proportion to ``weights`` (clipped at 0; uniform if none)."""
    w = np.clip(weights, 0, None)
    p = w / w.sum() if w.sum() > 0 else np.full(w.size, 1 / w.size)
    return rng.choice(w.size, size=size, p=p)


def _column(attribute: Attribute, codes, like: pd.Series, bins: int, rng):
    """Released values of ``codes`` in the input column's dtype (a uniform point of a
    numeric cell, rounded if the column holds integers)."""
    if attribute.kind == "numeric":
        low, high = (float(v) for v in attribute.domain)
        x = low + (codes + rng.random(codes.size)) * (high - low) / bins
        return np.rint(x).astype(like.dtype) if like.dtype.kind in "iu" else x
    values = np.asarray(attribute.domain, dtype=object)[codes]
    if isinstance(like.dtype, pd.CategoricalDtype):
        return pd.Categorical(values, dtype=like.dtype)
    return values.astype(like.dtype) if like.dtype.kind in "iufb" else values


@register_mechanism(
    "record_dp_marginals",
    input_kind=Kind.TABLE,
    output_kind=Kind.TABLE,
    privacy=RECORD_DP,
    source="Laplace mechanism on class-conditional marginals, then sampling (post-processing)",
    audit={"cost_ms": 2},
)
def record_dp_marginals(table, *, epsilon: float, bins: int = 8, rng, ledger=None):
    """A synthetic table of the input's schema drawn from its class-conditional one-way
    marginals plus Laplace noise: epsilon-record-DP (one record added or removed).

    For each of the A attributes beside the class, a (classes x cells) histogram; a record
    adds one count to one cell of each: L1 sensitivity A over all A histograms. The cells
    come from the schema (numeric attributes: ``bins`` equal-width intervals of the
    public domain). Everything after the noise is post-processing, including the number of
    released rows (the noisy class counts' sum: the true number of records is private
    under record-DP): each row gets a class drawn from the noisy class counts, then each
    attribute a cell from its noisy histogram for that class (attributes independent given
    the class, as naive Bayes assumes).
    """
    bins = check_positive_int(bins, "bins")
    schema = table.schema
    if schema.class_attribute is None or len(schema.attributes) < 2:
        raise DataError("record_dp_marginals needs a class attribute and one other attribute")
    counts = marginal_counts(table, bins)
    flat = laplace_mechanism(np.concatenate([c.ravel() for c in counts]),
                             sensitivity=len(counts), epsilon=epsilon, rng=rng, ledger=ledger,
                             label="class-conditional marginals")
    noisy = np.split(flat, np.cumsum([c.size for c in counts])[:-1])
    noisy = [part.reshape(c.shape) for part, c in zip(noisy, counts, strict=True)]
    class_counts = np.mean([h.sum(axis=1) for h in noisy], axis=0)
    n_rows = max(int(round(class_counts.sum())), 0)
    y = _draw(class_counts, n_rows, rng)
    codes = {schema.class_attribute: y}
    others = [a for a in schema.attributes if a.name != schema.class_attribute]
    for attribute, hist in zip(others, noisy, strict=True):
        x = np.zeros(n_rows, dtype=np.int64)
        for c in range(hist.shape[0]):
            rows = np.flatnonzero(y == c)
            x[rows] = _draw(hist[c], rows.size, rng)
        codes[attribute.name] = x
    data = pd.DataFrame({a.name: _column(a, codes[a.name], table.data[a.name], bins, rng)
                         for a in schema.attributes})
    return Table(data, schema)
