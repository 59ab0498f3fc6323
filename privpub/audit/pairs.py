"""Neighbouring pairs to audit: a library aimed at typical sensitivity mistakes, plus a
randomised search.

The structured pairs (:func:`structured_pairs`) each target one mistake seen in published
mechanisms (the README's caveat table):

- a *hub* gains or loses its edges (node-DP: a node joined to everyone; edge-DP: the
  maximum degree grows), so a sensitivity or a bound read from the maximum degree moves;
- a *new value* appears: a new degree, a new dK-2 tuple (two triangles bridged), a new
  class or attribute value, a new matrix cell;
- a *threshold*: a node or a degree at ``theta`` / ``theta + 1`` (read from the
  configuration's ``theta``, ``theta_max`` or ``k``), a count at a tie (half of all node
  pairs are edges);
- an *isolated node*, and the node count crossing a power of two (candidate lists built from
  ``|V|``);
- quantities treated as public: ``|V|`` (node-DP), the maximum degree, the table size ``N``.

:func:`random_pairs` adds pairs from random small inputs and random neighbours (the
randomised search of StatDP [DWWZK18] and DP-Sniper [BGDCV21]). Every pair is a pair of the
mechanism's own neighbourhood (:mod:`privpub.audit.neighbours`). Rationale: docs/audit.md.

References
----------
.. [DWWZK18] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. Detecting violations of
   differential privacy. CCS 2018.
.. [BGDCV21] B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev. DP-Sniper: black-box
   discovery of differential privacy violations using classifiers. IEEE S&P 2021.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.audit import inputs
from privpub.audit.inputs import Sizing
from privpub.audit.neighbours import Neighbourhood, add_node
from privpub.types import Graph

__all__ = ["Pair", "structured_pairs", "random_pairs"]


@dataclass(frozen=True)
class Pair:
    """Two neighbouring inputs and where they come from.

    Attributes
    ----------
    name : str
        What the pair targets (e.g. ``"hub node (joined to all)"``).
    origin : {"structured", "random"}
    d, d_prime : input
        The two inputs (graph, table or binary matrix).
    """

    name: str
    origin: str
    d: Any
    d_prime: Any


# --------------------------------------------------------------------------- graph shapes
def _empty(n):
    return inputs.graph(n)


def _path(n):
    return inputs.graph(n, [(i, i + 1) for i in range(n - 1)])


def _cycle(n):
    return inputs.graph(n, [(i, (i + 1) % n) for i in range(n)])


def _star(n):
    return inputs.graph(n, [(0, i) for i in range(1, n)])


def _complete(n):
    return inputs.graph(n, [(i, j) for i in range(n) for j in range(i + 1, n)])


def _matching(n):
    return inputs.graph(n, [(i, i + 1) for i in range(0, n - 1, 2)])


def _threshold(params: dict) -> int | None:
    for name in ("theta", "theta_max", "k"):
        value = params.get(name)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
    return None


def _edge_pairs(n: int, params: dict) -> list[tuple[str, Graph, int, int]]:
    """(name, graph, u, v): the pair is the graph and the graph with ``{u, v}`` toggled."""
    star_plus = inputs.graph(n, [(0, i) for i in range(1, n - 1)])  # node n-1 isolated
    out = [
        ("empty graph gains one edge", _empty(n), 0, 1),
        ("hub gains an edge (maximum degree grows)", star_plus, 0, n - 1),
        ("chord between two nodes of equal degree", _cycle(n), 0, n // 2),
        ("new degree value", _path(n), 0, 2),
        ("isolated node gains an edge", inputs.graph(n, [(i, (i + 1) % (n - 1))
                                                         for i in range(n - 1)]), n - 1, 0),
        ("complete graph loses an edge", _complete(n), 0, 1),
        ("leaf of a star joins another leaf", _star(n), 1, 2),
    ]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    half = len(pairs) // 2  # a count at a tie: half of all node pairs are edges
    out.append(("half of all node pairs are edges, plus one", inputs.graph(n, pairs[:half]),
                *pairs[half]))
    if n >= 6:  # two triangles bridged: the tuple (3, 3) appears
        tri = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)]
        out.append(("new dK-2 tuple (two triangles bridged)", inputs.graph(n, tri), 2, 3))
    theta = _threshold(params)
    if theta is not None and 1 <= theta <= n - 2:  # a degree theta -> theta + 1
        base = inputs.graph(n, [(0, i) for i in range(1, theta + 1)])
        out.append((f"degree at the threshold {theta} -> {theta + 1}", base, 0, theta + 1))
    return out


def _node_pairs(n: int, params: dict) -> list[tuple[str, Graph, list[int]]]:
    """(name, graph G on n - 1 nodes, neighbours S of the extra node)."""
    m = n - 1
    everyone = list(range(m))
    out = [
        ("isolated node (|V| changes)", _path(m), []),
        ("hub node joined to every node of a path", _path(m), everyone),
        ("hub node joined to every node of an empty graph", _empty(m), everyone),
        ("node joined to every leaf of a star", _star(m), list(range(1, m))),
        ("node joined to every node of degree 1", _matching(m), everyone),
        ("node joined to two adjacent nodes", _cycle(m), [0, 1]),
        ("|V| 7 -> 8 (a power of two)", _path(7), []),
        ("|V| 3 -> 4 (a power of two)", _path(3), [0]),
        ("two nodes: one edge", _empty(1), [0]),
    ]
    theta = _threshold(params)
    if theta is not None and 1 <= theta + 1 <= m:
        out.append((f"new node of degree {theta} (threshold)", _empty(m), list(range(theta))))
        out.append((f"new node of degree {theta + 1} (threshold + 1)", _empty(m),
                    list(range(theta + 1))))
        if theta + 1 < m:
            base = inputs.graph(m, [(0, i) for i in range(1, theta + 1)])  # node 0: degree theta
            out.append((f"a degree-{theta} node pushed over the threshold", base, [0]))
    return out


def _graph_structured(hood: Neighbourhood, sizing: Sizing, params: dict) -> list[Pair]:
    n = sizing.min_nodes
    if hood.name == "edge_toggle":
        out = []
        for name, g, u, v in _edge_pairs(n, params):
            edges = {(int(a), int(b)) for a, b in g.edges()} ^ {(min(u, v), max(u, v))}
            out.append(Pair(name, "structured", g, inputs.graph(n, sorted(edges))))
        return out
    out = []
    for name, g, neighbours in _node_pairs(n, params):
        if hood.name == "node_rewire":  # the node exists, isolated, in the other graph
            out.append(Pair(name, "structured", add_node(g, []), add_node(g, neighbours)))
        elif g.n_nodes >= 1:
            out.append(Pair(name, "structured", g, add_node(g, neighbours)))
    if hood.name == "node_rewire":
        return [p for p in out if p.d.n_nodes >= 2 and not _same_graph(p.d, p.d_prime)]
    return out


def _same_graph(a: Graph, b: Graph) -> bool:
    return a.n_nodes == b.n_nodes and np.array_equal(a.edges(), b.edges())


# --------------------------------------------------------------------------- tables
def _table_structured(hood: Neighbourhood, sizing: Sizing) -> list[Pair]:
    t = inputs.table
    same = [(0, 0, 1.0, 0)] * 4
    mixed = [(0, 0, 1.0, 0), (1, 1, 2.0, 1), (2, 0, 3.0, 1), (0, 1, 0.0, 0)]
    if hood.name == "record_replace":  # the same number of records, one of them changed
        replaced = [
            ("a record takes a new attribute value", same, (2, 1, 4.0, 0)),
            ("a record changes class", same, (0, 0, 1.0, 1)),
            ("a record moves to the numeric domain's end", mixed, (0, 0, 4.0, 0)),
            ("the majority class flips", [(1, 0, 2.0, 1), (1, 0, 2.0, 0), (1, 0, 2.0, 1)],
             (1, 0, 2.0, 0)),
        ]
        return [Pair(name, "structured", t(base), t([new] + base[1:]))
                for name, base, new in replaced]
    pairs = [
        ("record with a new attribute value", same, (2, 1, 4.0, 0)),
        ("record with a new class", same, (0, 0, 1.0, 1)),
        ("duplicate of the only record kind", same, (0, 0, 1.0, 0)),
        ("record at the numeric domain's end", mixed, (1, 0, 4.0, 1)),
        ("one record -> two (N is not public)", [(0, 0, 1.0, 0)], (2, 1, 3.0, 1)),
        ("record flipping the majority class", [(1, 0, 2.0, 1), (1, 0, 2.0, 0)],
         (1, 0, 2.0, 0)),
    ]
    return [Pair(name, "structured", t(base), t(base + [extra])) for name, base, extra in pairs]


# --------------------------------------------------------------------------- matrices
def _matrix_structured(hood: Neighbourhood, sizing: Sizing) -> list[Pair]:
    r, c = sizing.shape
    zeros, ones = np.zeros((r, c), np.int8), np.ones((r, c), np.int8)
    diag = np.eye(r, c, dtype=np.int8)
    out = []
    if hood.name == "entry_flip":
        for name, base in (("all-zero matrix gains an entry", zeros),
                           ("all-one matrix loses an entry", ones),
                           ("diagonal matrix gains an entry", diag)):
            flipped = base.copy()
            flipped[0, c - 1] = 1 - flipped[0, c - 1]
            out.append(Pair(name, "structured", inputs.matrix(base), inputs.matrix(flipped)))
        return out
    for name, base, row in (("a user's row: all zero -> all one", zeros, np.ones(c)),
                            ("a user's row complemented", diag, 1 - diag[0]),
                            ("a user joins every item of a full matrix", ones, np.zeros(c))):
        other = base.copy()
        other[0] = row
        out.append(Pair(name, "structured", inputs.matrix(base), inputs.matrix(other)))
    return out


# --------------------------------------------------------------------------- entry points
def structured_pairs(hood: Neighbourhood, sizing: Sizing, params: dict) -> list[Pair]:
    """The library's pairs for ``hood``, sized by ``sizing`` and aimed at ``params``."""
    if hood.input_kind == "graph":
        return _graph_structured(hood, sizing, params)
    if hood.input_kind == "table":
        return _table_structured(hood, sizing)
    return _matrix_structured(hood, sizing)


def random_pairs(hood: Neighbourhood, sizing: Sizing, count: int,
                 rng: np.random.Generator) -> list[Pair]:
    """``count`` pairs: a random small input and a random neighbour of it (two neighbours
    per base input, so the base's samples serve two pairs)."""
    out: list[Pair] = []
    while len(out) < count:
        if hood.input_kind == "graph":
            base = inputs.random_graph(int(rng.integers(sizing.min_nodes, sizing.max_nodes + 1)),
                                       rng)
        elif hood.input_kind == "table":
            base = inputs.random_table(int(rng.integers(sizing.min_rows, sizing.max_rows + 1)),
                                       rng)
        else:
            base = inputs.random_matrix(sizing.shape, rng)
        for _ in range(min(2, count - len(out))):
            other = hood.random_neighbour(base, rng, sizing)
            out.append(Pair(f"random #{len(out)}", "random", base, other))
    return out
