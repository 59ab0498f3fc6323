"""Tiny audit inputs: random small graphs, tables and binary matrices, and their JSON form.

An audit runs a mechanism thousands of times per input, so its inputs are small (a handful
of nodes, rows or cells) but valid for the mechanism: graphs large enough for a top-k or a
threshold ``theta`` (:class:`Sizing`), tables with a schema of every attribute kind and a
class attribute (:data:`TINY_SCHEMA`, the shape the table mechanisms' own tests use). Every
input has a canonical JSON encoding (:func:`encode_input` / :func:`decode_input`), so that a
witness can be stored and replayed, and a short digest (:func:`input_digest`) from which its
random streams are derived. Rationale: docs/audit.md.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from privpub.errors import PrivpubError
from privpub.types import Attribute, Graph, Kind, Schema, Table, as_binary_matrix

__all__ = [
    "TINY_SCHEMA",
    "Sizing",
    "sizing_for",
    "graph",
    "table",
    "matrix",
    "random_graph",
    "random_record",
    "random_table",
    "random_matrix",
    "encode_input",
    "decode_input",
    "input_digest",
    "probe_table",
]

#: The schema of every audit table: an ordinal, a categorical and a numeric attribute (whole
#: numbers in a public domain) and a binary class, as the table mechanisms' tests build them.
TINY_SCHEMA = Schema(
    (
        Attribute("a", "ordinal", (0, 1, 2)),
        Attribute("b", "categorical", (0, 1)),
        Attribute("x", "numeric", (0.0, 4.0)),
        Attribute("y", "categorical", (0, 1)),
    ),
    class_attribute="y",
)
_NUMERIC_VALUES = (0.0, 1.0, 2.0, 3.0, 4.0)


@dataclass(frozen=True)
class Sizing:
    """Sizes of the audit inputs of one configuration.

    Attributes
    ----------
    min_nodes, max_nodes : int
        Graphs have between these many nodes (a top-``k`` needs ``k`` nodes, a threshold
        ``theta`` needs ``theta + 2``).
    min_rows, max_rows : int
        Table rows.
    shape : tuple of int
        Binary matrices (users x items).
    """

    min_nodes: int = 5
    max_nodes: int = 8
    min_rows: int = 3
    max_rows: int = 10
    shape: tuple[int, int] = (4, 4)


def _int_param(params: dict, name: str) -> int | None:
    value = params.get(name)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    return None


def sizing_for(params: dict) -> Sizing:
    """Input sizes that fit a configuration: at least ``k + 1`` nodes for a top-``k``,
    ``theta + 2`` for a threshold ``theta``, never fewer than 5."""
    low = 5
    for name, extra in (("k", 1), ("theta", 2)):
        value = _int_param(params, name)
        if value is not None:
            low = max(low, value + extra)
    return Sizing(min_nodes=low, max_nodes=low + 3)


# --------------------------------------------------------------------------- constructors
def graph(n_nodes: int, edges=()) -> Graph:
    """A graph on ``0..n_nodes-1`` from a list of node pairs."""
    return Graph.from_edges(np.asarray(list(edges), dtype=np.int64).reshape(-1, 2), n_nodes)


def table(records) -> Table:
    """A :data:`TINY_SCHEMA` table from ``(a, b, x, y)`` tuples."""
    records = [tuple(r) for r in records]
    frame = pd.DataFrame(
        {
            "a": np.array([r[0] for r in records], dtype=np.int64),
            "b": np.array([r[1] for r in records], dtype=np.int64),
            "x": np.array([r[2] for r in records], dtype=float),
            "y": np.array([r[3] for r in records], dtype=np.int64),
        }
    )
    return Table(frame, TINY_SCHEMA)


def matrix(dense) -> sp.csr_array:
    """A canonical 0/1 sparse matrix from a dense array."""
    return as_binary_matrix(np.asarray(dense, dtype=np.int8))


# --------------------------------------------------------------------------- random inputs
def random_graph(n_nodes: int, rng: np.random.Generator) -> Graph:
    """G(n, p) with ``p`` drawn from {0.25, 0.45, 0.65}."""
    p = float(rng.choice([0.25, 0.45, 0.65]))
    iu, ju = np.triu_indices(n_nodes, k=1)
    keep = rng.random(iu.size) < p
    return graph(n_nodes, zip(iu[keep].tolist(), ju[keep].tolist(), strict=True))


def random_record(rng: np.random.Generator) -> tuple:
    """One uniformly random record of :data:`TINY_SCHEMA`."""
    return (
        int(rng.integers(3)),
        int(rng.integers(2)),
        float(_NUMERIC_VALUES[int(rng.integers(len(_NUMERIC_VALUES)))]),
        int(rng.integers(2)),
    )


def random_table(n_rows: int, rng: np.random.Generator) -> Table:
    """``n_rows`` random records; the class follows attribute ``a`` with noise, so that a
    tree has something to learn."""
    records = []
    for _ in range(n_rows):
        a, b, x, _ = random_record(rng)
        y = int((a >= 1) != (rng.random() < 0.2))
        records.append((a, b, x, y))
    return table(records)


def random_matrix(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    """A users x items 0/1 matrix with density drawn from {0.2, 0.4, 0.6}."""
    p = float(rng.choice([0.2, 0.4, 0.6]))
    return matrix(rng.random(shape) < p)


# --------------------------------------------------------------------------- encoding
def _records(t: Table) -> list[list]:
    df = t.data
    out = []
    for row in df[t.schema.names].itertuples(index=False):
        out.append([v.item() if isinstance(v, np.generic) else v for v in row])
    return out


def _schema_json(schema: Schema) -> dict:
    return {
        "attributes": [
            {"name": a.name, "kind": a.kind, "domain": list(a.domain)} for a in schema.attributes
        ],
        "class_attribute": schema.class_attribute,
    }


def _schema_from_json(doc: dict) -> Schema:
    attributes = tuple(
        Attribute(a["name"], a["kind"], tuple(a["domain"])) for a in doc["attributes"]
    )
    return Schema(attributes, class_attribute=doc.get("class_attribute"))


def encode_input(x) -> dict:
    """The JSON form of an audit input (graph, table or binary matrix)."""
    if isinstance(x, Graph):
        return {"kind": Kind.GRAPH, "n_nodes": x.n_nodes, "edges": x.edges().tolist()}
    if isinstance(x, Table):
        return {"kind": Kind.TABLE, "schema": _schema_json(x.schema), "rows": _records(x)}
    if sp.issparse(x):
        coo = sp.coo_array(as_binary_matrix(x))
        ones = sorted(zip(coo.row.tolist(), coo.col.tolist(), strict=True))
        return {"kind": Kind.BINARY_MATRIX, "shape": list(coo.shape),
                "ones": [list(o) for o in ones]}
    raise PrivpubError(f"cannot encode an audit input of type {type(x).__name__}")


def decode_input(doc: dict):
    """The input :func:`encode_input` encoded."""
    kind = doc.get("kind")
    if kind == Kind.GRAPH:
        return graph(int(doc["n_nodes"]), [tuple(e) for e in doc["edges"]])
    if kind == Kind.TABLE:
        schema = _schema_from_json(doc["schema"])
        rows = doc["rows"]
        frame = pd.DataFrame(rows, columns=schema.names)
        if not rows:
            frame = frame.astype({a.name: _empty_dtype(a) for a in schema.attributes})
        return Table(frame, schema)
    if kind == Kind.BINARY_MATRIX:
        dense = np.zeros(tuple(doc["shape"]), dtype=np.int8)
        for i, j in doc["ones"]:
            dense[i, j] = 1
        return matrix(dense)
    raise PrivpubError(f"cannot decode an audit input of kind {kind!r}")


def _empty_dtype(attribute: Attribute):
    values = attribute.domain
    if attribute.kind == "numeric" or any(isinstance(v, float) for v in values):
        return float
    return np.int64 if all(isinstance(v, int) for v in values) else object


def canonical(doc) -> str:
    """Canonical JSON text (sorted keys, no spaces)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def input_digest(x) -> str:
    """16 hex digits identifying an input (its canonical JSON encoding)."""
    doc = x if isinstance(x, dict) else encode_input(x)
    return hashlib.sha256(canonical(doc).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- classifiers
def probe_table(schema: Schema, *, points: int = 3) -> Table:
    """Every combination of the schema's non-class attribute values (numeric attributes at
    ``points`` evenly spaced values of their domain): the rows on which a released
    classifier's predictions are read. The class column holds its first value."""
    grids, names = [], []
    for a in schema.attributes:
        names.append(a.name)
        if a.name == schema.class_attribute:
            grids.append([a.domain[0]])
        elif a.kind == "numeric":
            lo, hi = (float(v) for v in a.domain)
            grids.append(list(np.linspace(lo, hi, points + 2)[1:-1]))
        else:
            grids.append(list(a.domain))
    mesh = np.meshgrid(*[np.arange(len(g)) for g in grids], indexing="ij")
    columns = {name: [grid[i] for i in idx.ravel()]
               for name, grid, idx in zip(names, grids, mesh, strict=True)}
    return Table(pd.DataFrame(columns), schema)
