"""Neighbouring inputs: the one place that says what each privacy notion protects.

A DP claim is a claim about pairs of *neighbouring* inputs; the audit draws its pairs from
the neighbourhood of the mechanism's own notion, by input kind:

=================  ===========  ==============================================================
input kind         notion       neighbours
=================  ===========  ==============================================================
graph              edge-DP      one edge added or removed, same node set
                                (:data:`EDGE_TOGGLE`)
graph              node-DP      one node added or removed with all its edges
                                (:data:`NODE_ADD_REMOVE`; day2016's definition)
graph              node-DP      one node's edges replaced on a fixed, public node set
                                (:data:`NODE_REWIRE`; qardaji2012 Sec 5.1, Hay et al.)
binary_matrix      edge-DP      one entry flipped (:data:`ENTRY_FLIP`)
binary_matrix      node-DP      one user's row replaced (:data:`ROW_REPLACE`)
table              record-DP    one record added or removed (:data:`RECORD_ADD_REMOVE`)
table              record-DP    one record replaced by another, the row count public
                                (:data:`RECORD_REPLACE`; PrivBayes' bounded DP [ZCPSX17])
=================  ===========  ==============================================================

:func:`neighbourhood_for` picks the default of a notion; a mechanism that claims a
different reading (qardaji2012's fixed node set) names it in its audit settings
(:mod:`privpub.audit.configs`). Each neighbourhood can draw a random neighbour and check
that two inputs are neighbours (a replayed witness is checked with it). Rationale:
docs/audit.md.

References
----------
.. [HLMJ09] M. Hay, C. Li, G. Miklau, D. Jensen. Accurate estimation of the degree
   distribution of private networks. ICDM 2009 (edge and node neighbours of graphs).
.. [KNRS13] S. P. Kasiviswanathan, K. Nissim, S. Raskhodnikova, A. Smith. Analyzing graphs
   with node differential privacy. TCC 2013 (node neighbours: a node and its edges).
.. [DLL16] W.-Y. Day, N. Li, M. Lyu. Publishing graph degree distribution with node
   differential privacy. SIGMOD 2016, Sec 2.2 ("by removing one node and all edges
   incident to the node in one graph, one obtains the other graph").
.. [QL12] W. Qardaji, N. Li. Recursive partitioning and summarization. ASIACCS 2012, Def 1
   (an individual participates or not) and Sec 5.1 (removing a node sets its degree to 0
   and decreases its neighbours' degrees: the node set stays).
.. [SZWZZ11] A. Sala et al. Sharing graphs using differentially private graph models.
   IMC 2011, Sec 4 (neighbour graphs differ by at most a single edge).
.. [FBF+21] V. Farias et al. Local Dampening. PVLDB 14(4), 2021, Sec 2 (the addition or
   removal of an individual) and Sec 5.1 (neighbouring graphs differ in exactly one edge).
.. [EEMM22] A. Epasto, H. Esfandiari, V. Mirrokni, A. Munoz Medina. Smooth anonymity for
   sparse graphs. 2022, Definitions 3.1-3.3 (edge: one user-item entry; node: "replacing
   all the edges of a single user").
.. [ZCPSX17] J. Zhang, G. Cormode, C. M. Procopiuc, D. Srivastava, X. Xiao. PrivBayes.
   ACM TODS 2017 (neighbouring tables of the same size differ in one tuple).
.. [DMNS06] C. Dwork, F. McSherry, K. Nissim, A. Smith. Calibrating noise to sensitivity in
   private data analysis. TCC 2006 (records added or removed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from privpub.audit import inputs
from privpub.errors import ConfigError
from privpub.registry import EDGE_DP, NODE_DP, RECORD_DP
from privpub.types import Graph, Kind, Table

__all__ = [
    "Neighbourhood",
    "EDGE_TOGGLE",
    "NODE_ADD_REMOVE",
    "NODE_REWIRE",
    "ENTRY_FLIP",
    "ROW_REPLACE",
    "RECORD_ADD_REMOVE",
    "RECORD_REPLACE",
    "NEIGHBOURHOODS",
    "neighbourhood_for",
    "get_neighbourhood",
    "add_node",
]


@dataclass(frozen=True)
class Neighbourhood:
    """One neighbouring relation.

    Attributes
    ----------
    name : str
        Its key (stored in witnesses).
    input_kind, notion : str
        The inputs and the privacy notion it belongs to.
    summary : str
        One line, with the paper that defines it.
    random_neighbour : callable
        ``random_neighbour(x, rng, sizing) -> x'``.
    are_neighbours : callable
        ``are_neighbours(x, y) -> bool`` (symmetric).
    """

    name: str
    input_kind: str
    notion: str
    summary: str
    random_neighbour: Callable
    are_neighbours: Callable


# --------------------------------------------------------------------------- graphs
def _edge_set(g: Graph) -> set[tuple[int, int]]:
    return {(int(u), int(v)) for u, v in g.edges()}


def add_node(g: Graph, neighbours) -> Graph:
    """``g`` plus a node ``n`` joined to ``neighbours`` (ids of ``g`` keep their meaning)."""
    n = g.n_nodes
    new = [(int(v), n) for v in sorted(set(int(v) for v in neighbours))]
    return inputs.graph(n + 1, sorted(_edge_set(g)) + new)


def _isolate(g: Graph, v: int) -> Graph:
    return inputs.graph(g.n_nodes, [e for e in _edge_set(g) if v not in e])


def _toggle(g: Graph, u: int, v: int) -> Graph:
    return inputs.graph(g.n_nodes, sorted(_edge_set(g) ^ {(min(u, v), max(u, v))}))


def _edge_toggle_random(g: Graph, rng, sizing) -> Graph:
    u, v = (int(i) for i in rng.choice(g.n_nodes, size=2, replace=False))
    return _toggle(g, u, v)


def _edge_toggle_check(x, y) -> bool:
    return (
        isinstance(x, Graph) and isinstance(y, Graph) and x.n_nodes == y.n_nodes
        and len(_edge_set(x) ^ _edge_set(y)) == 1
    )


def _node_add_remove_random(g: Graph, rng, sizing) -> Graph:
    if g.n_nodes > sizing.min_nodes and rng.random() < 0.5:  # remove a random node
        v = int(rng.integers(g.n_nodes))
        keep = np.array([i for i in range(g.n_nodes) if i != v], dtype=np.int64)
        return g.subgraph(keep)
    p = float(rng.choice([0.2, 0.5, 0.9]))
    return add_node(g, np.flatnonzero(rng.random(g.n_nodes) < p))


def _minus_node(g: Graph, v: int) -> Graph:
    return g.subgraph(np.array([i for i in range(g.n_nodes) if i != v], dtype=np.int64))


def _node_add_remove_check(x, y) -> bool:
    if not (isinstance(x, Graph) and isinstance(y, Graph)):
        return False
    small, big = (x, y) if x.n_nodes < y.n_nodes else (y, x)
    if big.n_nodes != small.n_nodes + 1:
        return False
    target = _edge_set(small)
    return any(_edge_set(_minus_node(big, v)) == target for v in range(big.n_nodes))


def _node_rewire_random(g: Graph, rng, sizing) -> Graph:
    v = int(rng.integers(g.n_nodes))
    others = np.array([u for u in range(g.n_nodes) if u != v])
    p = float(rng.choice([0.0, 0.3, 0.7, 1.0]))
    chosen = set(others[rng.random(others.size) < p].tolist())
    before = {u for e in _edge_set(g) if v in e for u in e if u != v}
    if chosen == before:  # the same edges: change one of them
        chosen ^= {int(rng.choice(others))}
    edges = {e for e in _edge_set(g) if v not in e} | {(min(v, u), max(v, u)) for u in chosen}
    return inputs.graph(g.n_nodes, sorted(edges))


def _node_rewire_check(x, y) -> bool:
    if not (isinstance(x, Graph) and isinstance(y, Graph)) or x.n_nodes != y.n_nodes:
        return False
    diff = _edge_set(x) ^ _edge_set(y)
    if not diff:
        return False
    common = set.intersection(*(set(e) for e in diff))
    return bool(common)


EDGE_TOGGLE = Neighbourhood(
    "edge_toggle", Kind.GRAPH, EDGE_DP,
    "one edge added or removed on the same node set [HLMJ09, SZWZZ11 Sec 4, FBF+21 Sec 5.1]",
    _edge_toggle_random, _edge_toggle_check,
)
NODE_ADD_REMOVE = Neighbourhood(
    "node_add_remove", Kind.GRAPH, NODE_DP,
    "one node added or removed with all its edges [KNRS13, DLL16 Sec 2.2]",
    _node_add_remove_random, _node_add_remove_check,
)
NODE_REWIRE = Neighbourhood(
    "node_rewire", Kind.GRAPH, NODE_DP,
    "one node's edges replaced on a fixed, public node set; isolating a node is removing "
    "it [QL12 Sec 5.1, HLMJ09]",
    _node_rewire_random, _node_rewire_check,
)


# --------------------------------------------------------------------------- binary matrices
def _dense(m) -> np.ndarray:
    return np.asarray(m.toarray() if sp.issparse(m) else m, dtype=np.int8)


def _entry_flip_random(m, rng, sizing):
    d = _dense(m)
    i, j = int(rng.integers(d.shape[0])), int(rng.integers(d.shape[1]))
    d[i, j] = 1 - d[i, j]
    return inputs.matrix(d)


def _entry_flip_check(x, y) -> bool:
    a, b = _dense(x), _dense(y)
    return a.shape == b.shape and int(np.sum(a != b)) == 1


def _row_replace_random(m, rng, sizing):
    d = _dense(m)
    i = int(rng.integers(d.shape[0]))
    row = (rng.random(d.shape[1]) < float(rng.choice([0.0, 0.5, 1.0]))).astype(np.int8)
    if np.array_equal(row, d[i]):
        row = 1 - row
    d[i] = row
    return inputs.matrix(d)


def _row_replace_check(x, y) -> bool:
    a, b = _dense(x), _dense(y)
    return a.shape == b.shape and int(np.sum(np.any(a != b, axis=1))) == 1


ENTRY_FLIP = Neighbourhood(
    "entry_flip", Kind.BINARY_MATRIX, EDGE_DP,
    "one user-item entry flipped [EEMM22 Def 3.1]",
    _entry_flip_random, _entry_flip_check,
)
ROW_REPLACE = Neighbourhood(
    "row_replace", Kind.BINARY_MATRIX, NODE_DP,
    "one user's row replaced, same users and items [EEMM22 Defs 3.2-3.3]",
    _row_replace_random, _row_replace_check,
)


# --------------------------------------------------------------------------- tables
def _records(t: Table) -> list[tuple]:
    return [tuple(r) for r in inputs.encode_input(t)["rows"]]


def _record_random(t: Table, rng, sizing) -> Table:
    rows = _records(t)
    if rows and (len(rows) > sizing.min_rows and rng.random() < 0.5):
        del rows[int(rng.integers(len(rows)))]
        return inputs.table(rows)
    return inputs.table(rows + [inputs.random_record(rng)])


def _record_check(x, y) -> bool:
    if not (isinstance(x, Table) and isinstance(y, Table)):
        return False
    a, b = sorted(_records(x)), sorted(_records(y))
    small, big = (a, b) if len(a) < len(b) else (b, a)
    if len(big) != len(small) + 1:
        return False
    rest = list(big)
    for r in small:
        if r not in rest:
            return False
        rest.remove(r)
    return True


RECORD_ADD_REMOVE = Neighbourhood(
    "record_add_remove", Kind.TABLE, RECORD_DP,
    "one record added or removed [DMNS06; QL12 Def 1; FBF+21 Sec 2 and DiffPID3's "
    "add/remove element sensitivity; diffprivlib's trees]",
    _record_random, _record_check,
)

def _replace_random(t: Table, rng, sizing) -> Table:
    rows = _records(t)
    if not rows:
        return inputs.table([inputs.random_record(rng)])  # not a neighbour: none exists
    i = int(rng.integers(len(rows)))
    new = inputs.random_record(rng)
    while new == rows[i]:
        new = inputs.random_record(rng)
    rows[i] = new
    return inputs.table(rows)


def _replace_check(x, y) -> bool:
    if not (isinstance(x, Table) and isinstance(y, Table)):
        return False
    a, b = sorted(_records(x)), sorted(_records(y))
    if len(a) != len(b) or a == b:
        return False
    rest = list(b)
    unmatched = 0
    for r in a:
        if r in rest:
            rest.remove(r)
        else:
            unmatched += 1
    return unmatched == 1


RECORD_REPLACE = Neighbourhood(
    "record_replace", Kind.TABLE, RECORD_DP,
    "one record replaced by another, the number of records public (bounded DP) [ZCPSX17 "
    "Sec 2: tables of the same size differing in one tuple]",
    _replace_random, _replace_check,
)

#: Every neighbourhood by name.
NEIGHBOURHOODS = {
    n.name: n
    for n in (EDGE_TOGGLE, NODE_ADD_REMOVE, NODE_REWIRE, ENTRY_FLIP, ROW_REPLACE, RECORD_ADD_REMOVE,
              RECORD_REPLACE)
}

#: The default neighbourhood of each (input kind, notion).
_DEFAULT = {
    (Kind.GRAPH, EDGE_DP): EDGE_TOGGLE,
    (Kind.GRAPH, NODE_DP): NODE_ADD_REMOVE,
    (Kind.BINARY_MATRIX, EDGE_DP): ENTRY_FLIP,
    (Kind.BINARY_MATRIX, NODE_DP): ROW_REPLACE,
    (Kind.TABLE, RECORD_DP): RECORD_ADD_REMOVE,
}


def neighbourhood_for(input_kind: str, notion: str, name: str | None = None) -> Neighbourhood:
    """The neighbourhood ``name`` (checked against the kind and notion), else the default
    of ``(input_kind, notion)``; a combination with no definition is a :class:`ConfigError`."""
    if name is not None:
        hood = get_neighbourhood(name)
        if (hood.input_kind, hood.notion) != (input_kind, notion):
            raise ConfigError(
                f"neighbourhood {name!r} is for {hood.notion} on {hood.input_kind} inputs, "
                f"not {notion} on {input_kind}"
            )
        return hood
    try:
        return _DEFAULT[(input_kind, notion)]
    except KeyError:
        raise ConfigError(
            f"the audit has no neighbouring relation for {notion} on {input_kind} inputs; "
            f"known: {', '.join(f'{n} on {k}' for k, n in sorted(_DEFAULT))}"
        ) from None


def get_neighbourhood(name: str) -> Neighbourhood:
    """The neighbourhood called ``name``."""
    try:
        return NEIGHBOURHOODS[name]
    except KeyError:
        raise ConfigError(
            f"unknown neighbourhood {name!r}; known: {', '.join(sorted(NEIGHBOURHOODS))}"
        ) from None
