"""The data types every mechanism, metric and loader agrees on, and their *kinds*.

A *kind* is the name of what a dataset is or what a mechanism releases. The registry
records an input kind and an output kind for each mechanism, and the runner refuses an
experiment whose mechanism does not accept its dataset or whose metric does not accept
the mechanism's release (see :func:`kind_of`).

- ``graph``: :class:`Graph`, an undirected simple graph on nodes ``0..n-1`` stored as a
  symmetric boolean CSR adjacency without diagonal.
- ``table``: :class:`Table`, a :class:`pandas.DataFrame` plus a :class:`Schema`.
- ``binary_matrix``: a :class:`scipy.sparse.csr_array` of 0/1 (users x items).
- ``degree_histogram``: :class:`DegreeHistogram`, (possibly noisy) counts per degree.
- ``degree_sequence``: :class:`DegreeSequence`, a (possibly noisy) sequence of degrees.
- ``ranking``: :class:`Ranking`, an ordered list of selected item ids (top-k).
- ``classifier``: a fitted model with ``predict`` (scikit-learn style).
- ``joint_degree``: :class:`JointDegree`, a (possibly noisy) dK-2 series: edge counts per
  unordered pair of endpoint degrees (sala2011; extraction and generation in
  :mod:`privpub.algorithms.dk`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp

from privpub.errors import DataError, PrivpubError

if TYPE_CHECKING:  # pandas is imported by the code that builds tables, not by every user
    import pandas as pd

__all__ = [
    "Kind",
    "Graph",
    "Attribute",
    "Schema",
    "Table",
    "DegreeHistogram",
    "DegreeSequence",
    "Ranking",
    "JointDegree",
    "Release",
    "KAnonymousMatrix",
    "LabelledMatrix",
    "kind_of",
    "as_binary_matrix",
]


class Kind:
    """String constants naming data kinds (see the module docstring)."""

    GRAPH = "graph"
    TABLE = "table"
    BINARY_MATRIX = "binary_matrix"
    DEGREE_HISTOGRAM = "degree_histogram"
    DEGREE_SEQUENCE = "degree_sequence"
    RANKING = "ranking"
    CLASSIFIER = "classifier"
    JOINT_DEGREE = "joint_degree"

    ALL = (
        GRAPH,
        TABLE,
        BINARY_MATRIX,
        DEGREE_HISTOGRAM,
        DEGREE_SEQUENCE,
        RANKING,
        CLASSIFIER,
        JOINT_DEGREE,
    )


# --------------------------------------------------------------------------- graphs
@dataclass(frozen=True, eq=False)
class Graph:
    """An undirected simple graph on nodes ``0..n-1``.

    Parameters
    ----------
    adjacency : scipy.sparse.csr_array
        Symmetric boolean adjacency with an empty diagonal and sorted indices. Build one
        with :meth:`from_edges`, which enforces all of this.
    name : str
        A label for messages and plots.
    """

    adjacency: sp.csr_array
    name: str = ""

    @classmethod
    def from_edges(cls, edges, n_nodes: int | None = None, *, name: str = "") -> Graph:
        """Build a graph from an ``(m, 2)`` integer array of node pairs.

        Direction, duplicates and self-loops are dropped: ``(u, v)`` and ``(v, u)`` become
        the one edge ``{u, v}``. Node ids must be in ``0..n_nodes-1``; ``n_nodes`` defaults
        to ``max id + 1``.
        """
        edges = np.asarray(edges)
        if edges.size == 0:
            edges = np.empty((0, 2), dtype=np.int64)
        if edges.ndim != 2 or edges.shape[1] != 2:
            raise DataError(f"edges must be an (m, 2) array of node pairs, got shape {edges.shape}")
        if not np.issubdtype(edges.dtype, np.integer):
            raise DataError(f"edge node ids must be integers, got dtype {edges.dtype}")
        edges = edges.astype(np.int64, copy=False)
        if edges.size and edges.min() < 0:
            raise DataError("edge node ids must be >= 0")
        top = int(edges.max()) + 1 if edges.size else 0
        n = top if n_nodes is None else int(n_nodes)
        if n < top:
            raise DataError(f"edge list names node {top - 1} but n_nodes = {n}")
        u, v = edges[:, 0], edges[:, 1]
        keep = u != v
        u, v = u[keep], v[keep]
        rows = np.concatenate([u, v])
        cols = np.concatenate([v, u])
        adj = sp.csr_array((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(n, n), dtype=bool)
        adj.sum_duplicates()
        adj.sort_indices()
        return cls(adj, name=name)

    @classmethod
    def from_networkx(cls, g, *, name: str = "") -> Graph:
        """Build from a networkx graph, relabelling its nodes ``0..n-1`` in sorted order."""
        nodes = sorted(g.nodes())
        index = {node: i for i, node in enumerate(nodes)}
        edges = np.array([(index[a], index[b]) for a, b in g.edges()], dtype=np.int64)
        return cls.from_edges(edges.reshape(-1, 2), len(nodes), name=name or str(g.name or ""))

    @property
    def n_nodes(self) -> int:
        return int(self.adjacency.shape[0])

    @property
    def n_edges(self) -> int:
        return int(self.adjacency.nnz // 2)

    def degrees(self) -> np.ndarray:
        """Degree of every node, as an int64 array of length ``n_nodes``."""
        return np.diff(self.adjacency.indptr).astype(np.int64)

    def degree_histogram(self) -> DegreeHistogram:
        """Number of nodes of each degree 0..d_max."""
        return DegreeHistogram(np.bincount(self.degrees()).astype(float))

    def degree_sequence(self) -> DegreeSequence:
        """Degrees sorted in non-decreasing order."""
        return DegreeSequence(np.sort(self.degrees()).astype(float))

    def edges(self) -> np.ndarray:
        """Edges as an ``(m, 2)`` int64 array with ``u < v``, in lexicographic order."""
        coo = sp.triu(self.adjacency, k=1, format="coo")
        order = np.lexsort((coo.col, coo.row))
        return np.column_stack([coo.row[order], coo.col[order]]).astype(np.int64)

    def to_networkx(self):
        """Convert to a :class:`networkx.Graph` (for small-graph algorithms)."""
        import networkx as nx

        g = nx.Graph(name=self.name)
        g.add_nodes_from(range(self.n_nodes))
        g.add_edges_from(map(tuple, self.edges()))
        return g

    def subgraph(self, nodes) -> Graph:
        """Induced subgraph on ``nodes``, relabelled ``0..len(nodes)-1`` in the given order."""
        nodes = np.asarray(nodes, dtype=np.int64)
        sub = self.adjacency[nodes][:, nodes]
        return Graph(sp.csr_array(sub, dtype=bool), name=self.name)

    def __repr__(self) -> str:
        return f"Graph(name={self.name!r}, n_nodes={self.n_nodes}, n_edges={self.n_edges})"


# --------------------------------------------------------------------------- tables
AttributeKind = Literal["numeric", "ordinal", "categorical"]


@dataclass(frozen=True)
class Attribute:
    """One column of a :class:`Table`.

    Parameters
    ----------
    name : str
        Column name.
    kind : {"numeric", "ordinal", "categorical"}
        Numeric columns have a ``(low, high)`` domain; ordinal ones an ordered tuple of
        values; categorical ones a tuple of values whose order carries no meaning (a paper
        that needs an order for them, e.g. RPS, draws a seeded random one).
    domain : tuple
        See ``kind``.
    """

    name: str
    kind: AttributeKind
    domain: tuple = ()

    def __post_init__(self):
        if self.kind not in ("numeric", "ordinal", "categorical"):
            raise PrivpubError(f"attribute {self.name!r}: unknown kind {self.kind!r}")


@dataclass(frozen=True)
class Schema:
    """Attribute kinds and domains of a table, and which attribute is the class label."""

    attributes: tuple[Attribute, ...]
    class_attribute: str | None = None

    def __post_init__(self):
        names = [a.name for a in self.attributes]
        if len(set(names)) != len(names):
            raise PrivpubError(f"schema has duplicate attribute names: {names}")
        if self.class_attribute is not None and self.class_attribute not in names:
            raise PrivpubError(f"class attribute {self.class_attribute!r} not in schema")

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.attributes]

    def __getitem__(self, name: str) -> Attribute:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(name)


@dataclass(frozen=True, eq=False)
class Table:
    """A data table: a DataFrame whose columns are exactly the schema's attributes."""

    data: pd.DataFrame
    schema: Schema

    def __post_init__(self):
        missing = set(self.schema.names) - set(self.data.columns)
        if missing:
            raise DataError(f"table lacks schema columns {sorted(missing)}")

    @property
    def n_rows(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        return f"Table(n_rows={self.n_rows}, columns={self.schema.names})"


# --------------------------------------------------------------------------- releases
@dataclass(frozen=True, eq=False)
class DegreeHistogram:
    """``counts[d]`` = (possibly noisy, non-integer) number of nodes of degree ``d``."""

    counts: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "counts", np.asarray(self.counts, dtype=float).ravel())

    def distribution(self) -> np.ndarray:
        """Counts clipped at 0 and normalised to sum 1 (all zeros if nothing is left)."""
        c = np.clip(self.counts, 0, None)
        total = c.sum()
        return c / total if total > 0 else c


@dataclass(frozen=True, eq=False)
class DegreeSequence:
    """A (possibly noisy) degree sequence, one value per node."""

    values: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "values", np.asarray(self.values, dtype=float).ravel())


@dataclass(frozen=True, eq=False)
class Ranking:
    """An ordered selection of item ids (best first), e.g. a private top-k."""

    items: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "items", np.asarray(self.items).ravel())


@dataclass(frozen=True, eq=False)
class JointDegree:
    """A (possibly noisy) dK-2 series (joint degree distribution), sala2011 Sec 3.1.

    ``counts[i]`` is the number of edges joining a node of degree ``low[i]`` and a node of
    degree ``high[i]``, with ``1 <= low[i] <= high[i]``. Cells are unique and stored in the
    beta order of sala2011 Definition 3: by ``high`` (the larger degree), then by ``low``.
    Cells not listed are 0. A noisy release may hold negative or fractional counts.
    """

    low: np.ndarray
    high: np.ndarray
    counts: np.ndarray

    def __post_init__(self):
        low = np.asarray(self.low, dtype=np.int64).ravel()
        high = np.asarray(self.high, dtype=np.int64).ravel()
        counts = np.asarray(self.counts, dtype=float).ravel()
        if not (low.size == high.size == counts.size):
            raise PrivpubError("a JointDegree needs low, high and counts of equal length")
        if low.size and (low.min() < 1 or np.any(low > high)):
            raise PrivpubError("JointDegree cells need 1 <= low <= high")
        key = high * (int(high.max(initial=0)) + 1) + low
        if key.size > 1 and np.any(np.diff(key) <= 0):
            order = np.argsort(key, kind="stable")
            low, high, counts, key = low[order], high[order], counts[order], key[order]
            if np.any(np.diff(key) == 0):
                raise PrivpubError("JointDegree cells must be unique")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "counts", counts)

    @property
    def size(self) -> int:
        """Number of listed cells (the m of sala2011 Sec 3.1 for an exact series)."""
        return int(self.counts.size)


@dataclass(frozen=True, eq=False)
class Release:
    """A mechanism output, what it publishes beside it, and declared diagnostics.

    ``info`` is part of the release (e.g. the theta an exponential mechanism chose): the
    privacy claim covers it, and the audit (:mod:`privpub.audit`) reads it like the value.
    ``diagnostics`` are computed from the input for the report (the fraction of edges a
    projection kept, the purity of a partition's regions): not private, by rule not read
    by the audit, and shown as diagnostics. The runner stores each numeric entry as a
    result row named ``info/<key>`` or ``diag/<key>`` (:data:`privpub.results.INFO_PREFIX`,
    :data:`privpub.results.DIAGNOSTIC_PREFIX`). Mechanisms may return the bare output
    instead.
    """

    value: Any
    info: dict = field(default_factory=dict)
    diagnostics: dict = field(default_factory=dict)


class KAnonymousMatrix(sp.csr_array):
    """A released binary matrix (kind ``binary_matrix``) that says how it was anonymised.

    A plain :class:`scipy.sparse.csr_array` plus two attributes the k-anonymity verifiers of
    :mod:`privpub.verify` check (the runner unwraps a :class:`Release` before verifying, so
    the evidence travels with the matrix itself):

    ``clusters``
        ``None`` or an int array: the cluster (equivalence class) of every row as the
        mechanism built it. The verifier then also checks every cluster has ``>= k`` rows,
        equal released rows inside each cluster, and, for smooth k-anonymity, that every
        released item is held by a strict majority of the cluster in the input.
    ``suppression``
        True for k-anonymity *by suppression* (epasto2022 Def. 3.4, second condition): the
        verifier then checks the release is a subset of the input.

    Matrices derived from one (copies, products) are plain matrices: the attributes fall
    back to the class defaults ``None`` / ``False``.
    """

    clusters = None
    suppression = False

    @classmethod
    def wrap(cls, matrix, *, clusters=None, suppression: bool = False) -> KAnonymousMatrix:
        """Wrap a CSR matrix (shares its arrays) with the given attributes."""
        out = cls(matrix)
        out.clusters = None if clusters is None else np.asarray(clusters, dtype=np.int64)
        out.suppression = bool(suppression)
        return out


class LabelledMatrix(sp.csr_array):
    """A binary matrix dataset (kind ``binary_matrix``) with a class label per row and a
    held-out test set, for "train on the anonymised matrix, test on the original" metrics
    (epasto2022 Fig. 4: the labels are not anonymised).

    Attributes ``labels`` (one per row), ``test_matrix`` (same columns) and ``test_labels``;
    mechanisms see a plain binary matrix (:func:`as_binary_matrix` drops the attributes).
    """

    labels = None
    test_matrix = None
    test_labels = None

    @classmethod
    def wrap(cls, matrix, *, labels, test_matrix=None, test_labels=None) -> LabelledMatrix:
        out = cls(matrix)
        out.labels = np.asarray(labels)
        if out.labels.shape != (matrix.shape[0],):
            raise DataError(f"{out.labels.size} labels for {matrix.shape[0]} rows")
        out.test_matrix = test_matrix
        out.test_labels = None if test_labels is None else np.asarray(test_labels)
        return out


def as_binary_matrix(x) -> sp.csr_array:
    """Return a canonical 0/1 copy of ``x``: a 2-D int8 ``csr_array``, no explicit zeros,
    sorted indices. The input is never modified."""
    if sp.issparse(x):
        if x.ndim != 2:
            raise DataError(f"a binary matrix must be 2-D, got shape {x.shape}")
        m = sp.csr_array(x, copy=True)
    else:
        x = np.asarray(x)
        if x.ndim != 2:
            raise DataError(f"a binary matrix must be 2-D, got shape {x.shape}")
        m = sp.csr_array(x)
    m.sum_duplicates()
    m.eliminate_zeros()
    if m.nnz and not np.all(m.data == 1):
        raise DataError("a binary matrix may only hold 0/1 entries")
    m = sp.csr_array(m, dtype=np.int8)
    m.sort_indices()
    return m


def kind_of(x) -> str:
    """The kind of a dataset or release (see the module docstring)."""
    if isinstance(x, Release):
        return kind_of(x.value)
    if isinstance(x, Graph):
        return Kind.GRAPH
    if isinstance(x, Table):
        return Kind.TABLE
    if isinstance(x, DegreeHistogram):
        return Kind.DEGREE_HISTOGRAM
    if isinstance(x, DegreeSequence):
        return Kind.DEGREE_SEQUENCE
    if isinstance(x, Ranking):
        return Kind.RANKING
    if isinstance(x, JointDegree):
        return Kind.JOINT_DEGREE
    if sp.issparse(x):
        return Kind.BINARY_MATRIX
    if hasattr(x, "predict"):
        return Kind.CLASSIFIER
    raise PrivpubError(f"cannot tell the kind of a {type(x).__name__}")
