"""Statistics of a release: what the audit looks at, by output kind.

:func:`release_statistics` turns one output of a mechanism into a flat ``{name: value}``
record: its shape and length, every released value or bin (rounded to 10 significant
digits, so that floating-point last bits do not count), indicators of selected items
(``has item[i]``, ``has edge[u,v]``, ``has split[a]``), and **every field of**
``Release.info`` (``info/<key>``: the runner publishes them beside the release, so the
audit treats them as released unless the caller declares them diagnostics). A classifier
is read through its predictions on a fixed probe table, the fields of its own ``info`` and,
for a tree, its split attributes.

:class:`Columns` holds a batch of records as columns; :class:`NaiveBayesScore` and
:class:`LaplaceScore` are per-pair likelihood-ratio scores fitted on one batch and applied
to fresh ones (a DP-Sniper-style classifier [BGDCV21]; the clipped Laplace log-likelihood
ratio is the optimal test for additive Laplace noise). Rationale: docs/audit.md.

References
----------
.. [BGDCV21] B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev. DP-Sniper: black-box
   discovery of differential privacy violations using classifiers. IEEE S&P 2021.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import chdtri

from privpub.types import (
    DegreeHistogram,
    DegreeSequence,
    Graph,
    JointDegree,
    Kind,
    Ranking,
    Release,
    Table,
)

__all__ = [
    "MISSING",
    "rounded",
    "release_statistics",
    "Columns",
    "key_of",
    "NaiveBayesScore",
    "LaplaceScore",
    "fit_scores",
    "score_from_json",
    "relevant_statistics",
]

#: The key of a statistic an output does not have (e.g. a bin past its length).
MISSING = "<absent>"
#: Indicators (``has ...``) are 0, not missing, when absent.
_INDICATOR = "has "
_SIGNIFICANT = 10


def rounded(values) -> np.ndarray:
    """``values`` as floats rounded to 10 significant digits."""
    a = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.floor(np.log10(np.abs(a)))
    mag = np.clip(np.where(np.isfinite(mag), mag, 0.0), -6.0, 15.0)
    scale = 10.0 ** (_SIGNIFICANT - 1 - mag)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.round(a * scale) / scale
    return np.where(np.isfinite(a), out, a)


def _digest(*parts) -> str:
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(p.tobytes() if isinstance(p, np.ndarray) else repr(p).encode())
    return h.hexdigest()


def _values(prefix: str, values) -> dict[str, float]:
    v = np.asarray(values, dtype=float)
    out = dict(zip([f"{prefix}[{i}]" for i in range(v.size)], v.tolist(), strict=True))
    out["len"] = float(v.size)
    out["sum"] = float(v.sum())
    out["output"] = _digest(np.round(v, 8))
    return out


def _graph(g: Graph) -> dict[str, Any]:
    deg = g.degrees()
    out: dict[str, Any] = {"n_nodes": float(g.n_nodes), "n_edges": float(g.n_edges)}
    for d, c in enumerate(np.bincount(deg)):
        out[f"degree bin[{d}]"] = float(c)
    edges = g.edges()
    if edges.size:
        lo = np.minimum(deg[edges[:, 0]], deg[edges[:, 1]])
        hi = np.maximum(deg[edges[:, 0]], deg[edges[:, 1]])
        cells, counts = np.unique(np.stack([lo, hi], 1), axis=0, return_counts=True)
        for (a, b), c in zip(cells.tolist(), counts.tolist(), strict=True):
            out[f"dk[{a},{b}]"] = float(c)
    if g.n_nodes <= 16:
        for u, v in edges.tolist():
            out[f"{_INDICATOR}edge[{u},{v}]"] = 1.0
    out["output"] = _digest(np.int64(g.n_nodes), edges)
    return out


def _joint(jd: JointDegree) -> dict[str, Any]:
    c = jd.counts
    out: dict[str, Any] = {f"cell[{a},{b}]": x for a, b, x in
                           zip(jd.low.tolist(), jd.high.tolist(), c.tolist(), strict=True)}
    out["cells"] = float(c.size)
    out["sum"] = float(c.sum())
    out["output"] = _digest(jd.low, jd.high, np.round(c, 8))
    return out


def _ranking(r: Ranking) -> dict[str, Any]:
    items = [str(i) for i in r.items.tolist()]
    out: dict[str, Any] = {f"rank[{j}]": item for j, item in enumerate(items)}
    out.update({f"{_INDICATOR}item[{item}]": 1.0 for item in items})
    out["len"] = float(len(items))
    out["output"] = "|".join(items)
    return out


def _matrix(m) -> dict[str, Any]:
    d = np.asarray(m.toarray() if sp.issparse(m) else m, dtype=np.int64)
    out: dict[str, Any] = {"shape": f"{d.shape[0]}x{d.shape[1]}", "nnz": float(d.sum())}
    if d.size <= 400:
        out.update({f"entry[{i},{j}]": float(d[i, j]) for i, j in np.ndindex(d.shape)})
    out.update({f"rowsum[{i}]": float(s) for i, s in enumerate(d.sum(1))})
    out.update({f"colsum[{j}]": float(s) for j, s in enumerate(d.sum(0))})
    out["output"] = _digest(np.asarray(d.shape), d)
    return out


def _bins(attribute, values) -> list[str]:
    if attribute.kind == "numeric":
        lo, hi = (float(v) for v in attribute.domain)
        x = np.asarray(values, dtype=float)
        width = (hi - lo) / 4 if hi > lo else 1.0
        return [f"bin{int(b)}" for b in np.clip(np.floor((x - lo) / width), 0, 3)]
    return [str(v) for v in values]


def _table(t: Table) -> dict[str, Any]:
    df = t.data
    out: dict[str, Any] = {"rows": float(len(df))}
    columns = [(a.name, _bins(a, df[a.name].tolist())) for a in t.schema.attributes]
    for name, vals in columns:
        uniq, counts = np.unique(np.asarray(vals, dtype=object).astype(str), return_counts=True)
        out.update({f"count[{name}={u}]": float(c) for u, c in zip(uniq, counts, strict=True)})
    cells = ["|".join(parts) for parts in zip(*(v for _, v in columns), strict=True)]
    uniq, counts = np.unique(np.asarray(cells, dtype=str), return_counts=True)
    out.update({f"cell[{u}]": float(c) for u, c in zip(uniq.tolist(), counts, strict=True)})
    out["output"] = _digest(tuple(sorted(cells)))
    return out


def _splits(model) -> np.ndarray | None:
    """The split attribute of every node of a released tree (negative for a leaf), read
    from privpub's trees (``attribute``) or scikit-learn-style ones (``tree_.feature``,
    possibly under ``model``); None for another classifier."""
    attribute = getattr(model, "attribute", None)
    if isinstance(attribute, np.ndarray):
        return attribute
    tree = getattr(getattr(model, "model", model), "tree_", None)
    feature = getattr(tree, "feature", None)
    return np.asarray(feature) if feature is not None else None


def _classifier(model, probe: Table | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    splits = _splits(model)
    if splits is not None and splits.size:
        out["root split"] = str(int(splits[0]))
        out.update({f"{_INDICATOR}split[{int(a)}]": 1.0 for a in np.unique(splits[splits >= 0])})
    if probe is not None:
        preds = [str(p) for p in np.asarray(model.predict(probe)).tolist()]
        out.update({f"pred[{j}]": p for j, p in enumerate(preds)})
        out["output"] = "|".join(preds)
    out.update(_info(getattr(model, "info", None) or {}, "model/"))
    return out


def _info(info: dict, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in info.items():
        name = f"{prefix}{key}"
        if isinstance(value, (bool, np.bool_)):
            out[name] = float(value)
        elif isinstance(value, (int, float, np.number)):
            out[name] = float(value)
        elif isinstance(value, np.ndarray):
            out[name] = _digest(np.round(value, 8) if value.dtype.kind in "fiub" else value)
        else:
            out[name] = str(value)
    return out


def release_statistics(output, output_kind: str, *, probe: Table | None = None,
                       diagnostics=()) -> dict[str, Any]:
    """The statistics of one mechanism output (see the module docstring); numbers are
    rounded when a batch becomes :class:`Columns`.

    Parameters
    ----------
    output : Release or bare release
    output_kind : str
        The mechanism's registered output kind.
    probe : Table, optional
        Rows on which a classifier's predictions are read.
    diagnostics : collection of str, or True
        ``Release.info`` keys declared non-private (left out); ``True``: all of them.
    """
    value, info = (output.value, output.info) if isinstance(output, Release) else (output, {})
    if output_kind == Kind.DEGREE_HISTOGRAM and isinstance(value, DegreeHistogram):
        out = _values("bin", value.counts)
    elif output_kind == Kind.DEGREE_SEQUENCE and isinstance(value, DegreeSequence):
        out = _values("deg", value.values)
    elif isinstance(value, JointDegree):
        out = _joint(value)
    elif isinstance(value, Graph):
        out = _graph(value)
    elif isinstance(value, Ranking):
        out = _ranking(value)
    elif isinstance(value, Table):
        out = _table(value)
    elif sp.issparse(value):
        out = _matrix(value)
    elif hasattr(value, "predict"):
        out = _classifier(value, probe)
    else:
        out = {"output": _digest(repr(value))}
    if diagnostics is not True:
        out.update(_info({k: v for k, v in (info or {}).items() if k not in diagnostics},
                         "info/"))
    return out


# --------------------------------------------------------------------------- columns
def key_of(value) -> str:
    """The canonical key of a statistic's value for equality events."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return repr(float(value))
    return str(value)


class Columns:
    """A batch of statistic records as columns.

    A column is numeric (float rounded to 10 significant digits, NaN where missing;
    indicators 0) when every present value is a number, else a column of keys
    (:func:`key_of`).
    """

    def __init__(self, records: list[dict]):
        self.n = len(records)
        self._numeric: dict[str, np.ndarray] = {}
        self._keys: dict[str, np.ndarray] = {}
        frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
        self.names = sorted(str(c) for c in frame.columns)
        kinds = {c: dt.kind for c, dt in frame.dtypes.items()}
        numeric = [c for c in frame.columns if kinds[c] in "fiu"]
        if numeric:
            matrix = rounded(frame[numeric].to_numpy(dtype=float))
            for j, name in enumerate(numeric):
                column = matrix[:, j]
                if name.startswith(_INDICATOR):
                    column = np.where(np.isnan(column), 0.0, column)
                self._numeric[name] = column
        others = [c for c in frame.columns if kinds[c] not in "fiu"]
        if others:
            values = frame[others].to_numpy(dtype=object)
            for j, name in enumerate(others):
                self._keys[name] = np.array([key_of(v) for v in values[:, j]], dtype=object)

    def subset(self, rows: np.ndarray) -> Columns:
        """The batch of the given rows (indices)."""
        out = Columns([])
        out.n = int(np.asarray(rows).size)
        out._numeric = {k: v[rows] for k, v in self._numeric.items()}
        out._keys = {k: v[rows] for k, v in self._keys.items()}
        out.names = list(self.names)
        return out

    def extended(self, extra: dict[str, np.ndarray]) -> Columns:
        """A copy with numeric columns added (e.g. fitted scores); this one is unchanged."""
        out = Columns([])
        out.n = self.n
        out._numeric = {**self._numeric, **{k: np.asarray(v, float) for k, v in extra.items()}}
        out._keys = {k: v for k, v in self._keys.items() if k not in extra}
        out.names = sorted(set(self.names) | set(extra))
        return out

    def is_numeric(self, name: str) -> bool:
        """Column ``name`` holds numbers (an absent column counts: it is all missing)."""
        return name not in self._keys or name in self._numeric

    def numeric(self, name: str) -> np.ndarray:
        """Column ``name`` as floats (NaN where missing or not a number)."""
        if name in self._numeric:
            return self._numeric[name]
        if name in self._keys:
            return np.array([_to_float(k) for k in self._keys[name]])
        return np.full(self.n, 0.0 if name.startswith(_INDICATOR) else math.nan)

    def keys(self, name: str) -> np.ndarray:
        """Column ``name`` as keys (:func:`key_of`)."""
        if name not in self._keys:
            self._keys[name] = np.array([key_of(v) for v in self.numeric(name)], dtype=object)
        return self._keys[name]


def _to_float(key: str) -> float:
    try:
        return float(key)
    except ValueError:
        return math.nan


# --------------------------------------------------------------------------- scores
class NaiveBayesScore:
    """Sum over the statistics that differ significantly between the two inputs of the
    log-ratio of their bucket's frequency under ``D`` and under ``D'`` (a naive-Bayes
    log-likelihood ratio; buckets: the values, or 8 quantile buckets of a continuous one)."""

    name = "score:naive_bayes"

    def __init__(self, parts: list[dict]):
        self.parts = parts

    @classmethod
    def fit(cls, a: Columns, b: Columns, names, *, max_features: int = 40
            ) -> NaiveBayesScore | None:
        found = []
        for name in names:
            part = _fit_part(name, a, b)
            if part is not None:
                found.append(part)
        found.sort(key=lambda p: (-p["g"], p["feature"]))
        return cls(found[:max_features]) if found else None

    def __call__(self, cols: Columns) -> np.ndarray:
        total = np.zeros(cols.n)
        for p in self.parts:
            total += np.asarray(p["ratios"])[_bucket(p, cols)]
        return total

    def to_json(self) -> dict:
        return {"type": "naive_bayes", "parts": self.parts}


def _bucket(part: dict, cols: Columns) -> np.ndarray:
    """Bucket of every row for one part: cut-point buckets or value buckets, the last
    bucket for missing (or other) values."""
    if part["cuts"] is not None:
        x = cols.numeric(part["feature"])
        cuts = np.asarray(part["cuts"], dtype=float)
        idx = np.searchsorted(cuts, x, side="right")
        return np.where(np.isnan(x), cuts.size + 1, idx)
    lookup = {v: i for i, v in enumerate(part["values"])}
    other = len(part["values"])
    return np.array([lookup.get(k, other) for k in cols.keys(part["feature"])], dtype=np.int64)


def _fit_part(name: str, a: Columns, b: Columns) -> dict | None:
    numeric = a.is_numeric(name) and b.is_numeric(name)
    part: dict[str, Any] = {"feature": name, "cuts": None, "values": None}
    if numeric:
        pooled = np.concatenate([a.numeric(name), b.numeric(name)])
        finite = pooled[np.isfinite(pooled)]
        distinct = np.unique(finite)
        if distinct.size > 8:
            part["cuts"] = np.unique(np.quantile(finite, np.arange(1, 8) / 8)).tolist()
    if part["cuts"] is None:
        pooled_keys = np.concatenate([a.keys(name), b.keys(name)])
        uniq, counts = np.unique(pooled_keys.astype(str), return_counts=True)
        order = sorted(range(uniq.size), key=lambda i: (-counts[i], uniq[i]))[:8]
        part["values"] = [str(uniq[i]) for i in order]
    ca = np.bincount(_bucket(part, a), minlength=10)
    cb = np.bincount(_bucket(part, b), minlength=10)
    size = max(ca.size, cb.size)
    ca, cb = np.pad(ca, (0, size - ca.size)), np.pad(cb, (0, size - cb.size))
    used = (ca + cb) > 0
    if used.sum() < 2:
        return None
    g = _g_statistic(ca[used], cb[used])
    if g <= chdtri(int(used.sum()) - 1, 1e-3):
        return None
    ratios = np.log((ca + 0.5) / (a.n + 0.5 * size)) - np.log((cb + 0.5) / (b.n + 0.5 * size))
    part["ratios"] = [float(r) for r in ratios]
    part["g"] = float(g)
    return part


def _g_statistic(ca: np.ndarray, cb: np.ndarray) -> float:
    """The G statistic of a 2 x B contingency table (likelihood-ratio test of equal
    distributions)."""
    table = np.stack([ca, cb]).astype(float)
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    mask = table > 0
    return float(2.0 * np.sum(table[mask] * np.log(table[mask] / expected[mask])))


class LaplaceScore:
    """The log-likelihood ratio of additive Laplace noise, with the centres and scales
    estimated on one batch: ``sum_i w_i clip(x_i - m_i, -h_i, h_i)`` over the numeric
    statistics whose medians differ significantly (``m_i`` the midpoint of the two medians,
    ``h_i`` half their distance, ``w_i`` its sign over the noise scale)."""

    name = "score:laplace"

    def __init__(self, parts: list[dict]):
        self.parts = parts

    @classmethod
    def fit(cls, a: Columns, b: Columns, names, *, max_features: int = 40
            ) -> LaplaceScore | None:
        found = []
        for name in names:
            if not (a.is_numeric(name) and b.is_numeric(name)):
                continue
            xa, xb = a.numeric(name), b.numeric(name)
            xa, xb = xa[np.isfinite(xa)], xb[np.isfinite(xb)]
            if xa.size < 10 or xb.size < 10:
                continue
            ma, mb = float(np.median(xa)), float(np.median(xb))
            if ma == mb:
                continue
            scale = 0.5 * (np.mean(np.abs(xa - ma)) + np.mean(np.abs(xb - mb)))
            scale = max(float(scale), abs(ma - mb) / 10)
            z = abs(ma - mb) / (scale * math.sqrt(1 / xa.size + 1 / xb.size))
            if z < 3:
                continue
            found.append({"feature": name, "mid": (ma + mb) / 2, "half": abs(ma - mb) / 2,
                          "weight": math.copysign(1 / scale, ma - mb), "z": z})
        found.sort(key=lambda p: (-p["z"], p["feature"]))
        return cls(found[:max_features]) if found else None

    def __call__(self, cols: Columns) -> np.ndarray:
        total = np.zeros(cols.n)
        for p in self.parts:
            x = cols.numeric(p["feature"])
            term = p["weight"] * np.clip(x - p["mid"], -p["half"], p["half"])
            total += np.where(np.isnan(term), 0.0, term)
        return total

    def to_json(self) -> dict:
        return {"type": "laplace", "parts": self.parts}


_SCORES = {"naive_bayes": NaiveBayesScore, "laplace": LaplaceScore}


def fit_scores(a: Columns, b: Columns, names) -> dict[str, Any]:
    """Every score that can be fitted on the batches ``a`` (of ``D``) and ``b`` (of
    ``D'``) from the statistics ``names``, by name."""
    out = {}
    for cls in (NaiveBayesScore, LaplaceScore):
        score = cls.fit(a, b, names)
        if score is not None:
            out[cls.name] = score
    return out


def score_from_json(doc: dict):
    """The score :meth:`to_json` stored."""
    return _SCORES[doc["type"]](doc["parts"])


#: Statistics always looked at, whatever their first-batch difference.
_STRUCTURAL = ("len", "shape", "rows", "cells", "n_nodes", "n_edges", "nnz", "sum", "output",
               "error")


def relevant_statistics(a: Columns, b: Columns, *, limit: int, z_min: float = 2.0
                        ) -> list[str]:
    """The statistics worth testing on a pair: the structural ones, every non-numeric one
    (info fields, selected items, predictions) and the ``limit`` numeric ones whose
    batches differ most (standardised difference of means or of missing rates at least
    ``z_min``; a constant that differs counts as infinite)."""
    names = sorted(set(a.names) | set(b.names))
    keep = [n for n in names if n in _STRUCTURAL or n.startswith(("info/", "model/"))
            or not (a.is_numeric(n) and b.is_numeric(n))]
    numeric = [n for n in names if n not in keep]
    if not numeric:
        return keep
    xa = np.column_stack([a.numeric(n) for n in numeric])
    xb = np.column_stack([b.numeric(n) for n in numeric])
    z = np.maximum(_z_means(xa, xb), _z_rates(np.isnan(xa), np.isnan(xb)))
    order = sorted((i for i in range(len(numeric)) if z[i] >= z_min),
                   key=lambda i: (-z[i], numeric[i]))
    return sorted(keep + [numeric[i] for i in order[:limit]])


def _z_means(xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        na, nb = np.sum(~np.isnan(xa), 0), np.sum(~np.isnan(xb), 0)
        ma, mb = np.nanmean(np.where(na > 0, xa, 0.0), 0), np.nanmean(np.where(nb > 0, xb, 0.0), 0)
        va = np.nanvar(np.where(na > 0, xa, 0.0), 0)
        vb = np.nanvar(np.where(nb > 0, xb, 0.0), 0)
        z = np.abs(ma - mb) / np.sqrt(va / np.maximum(na, 1) + vb / np.maximum(nb, 1))
    z = np.where((va + vb == 0) & (ma != mb), np.inf, z)
    return np.where(np.isfinite(z) | np.isinf(z), np.nan_to_num(z, nan=0.0, posinf=np.inf), 0.0)


def _z_rates(ma: np.ndarray, mb: np.ndarray) -> np.ndarray:
    pa, pb = ma.mean(0), mb.mean(0)
    pooled = (ma.sum(0) + mb.sum(0)) / (ma.shape[0] + mb.shape[0])
    se = np.sqrt(pooled * (1 - pooled) * (1 / ma.shape[0] + 1 / mb.shape[0]))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.abs(pa - pb) / se
    return np.nan_to_num(z, nan=0.0, posinf=np.inf)
