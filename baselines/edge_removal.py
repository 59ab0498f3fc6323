"""Edge-Removal (ER): the graph projection of Blocki et al. 2013, as day2016 compares it.

day2016 Sec 2.4: "one chooses an arbitrary order among the edges, traverses the edges in
this order, and removes each encountered edge that is connected to a node that has degree
``> theta``" [BBDS13]. The degree is the *current* one (it drops as edges are removed), so
an edge survives iff, when it is reached, both endpoints have degree ``<= theta``. Every node
ends with degree ``<= theta``: an edge of a node whose final degree exceeded ``theta`` would
have been removed when it was reached.

Edge order. day2016 Fig. 1 contrasts ER with its edge-addition projection ``pi_theta`` on one
edge numbering: "Edge order for removal in Edge-Removal: 5, 4, 3, 2, 1. Edge order for
insertion in pi_theta: 1, 2, 3, 4, 5". So with the stable order ``Lambda = e_1, ..., e_m``
that ``pi_theta`` inserts from (Sec 3.1: edges ``(u, v)``, ``u < v``, in lexicographic order),
ER *removes* from the end: ``e_m, ..., e_1``. ``order=``:

``"lexicographic"`` (default)
    ``Lambda`` lexicographic, traversed backwards (Fig. 1's convention).
``"lexicographic_forward"``
    removal runs through the lexicographic order from the front.
``"random"``
    a uniformly random order drawn from ``rng``.

ER keeps a subgraph that need not be maximal (Fig. 1 keeps one edge where ``pi_theta`` keeps
two), and, unlike ``pi_theta``, its histogram has no ``2 theta + 1`` node sensitivity: adding
one node can change which edges a long chain of removals deletes (see
``baselines/tests/test_edge_removal.py``). It is a non-private projection (day2016 Table 2).

References
----------
.. [BBDS13] J. Blocki, A. Blum, A. Datta, O. Sheffet. Differentially private data analysis of
   social networks via restricted sensitivity. ITCS 2013.
.. [DLL16] W.-Y. Day, N. Li, M. Lyu. Publishing Graph Degree Distribution with Node
   Differential Privacy. SIGMOD 2016. Sec 2.4, Fig. 1, Table 2.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from privpub.errors import DataError, PrivpubError
from privpub.registry import NO_PRIVACY, register_mechanism
from privpub.types import DegreeHistogram, Graph, Kind, Release
from privpub.validation import check_positive_int, check_rng

__all__ = ["edge_removal_mask", "edge_removal", "projection_edge_removal", "ORDERS"]

ORDERS = ("lexicographic", "lexicographic_forward", "random")


@njit(cache=True)
def _remove(u, v, traversal, degrees, theta):  # pragma: no cover - compiled
    keep = np.ones(u.size, dtype=np.bool_)
    deg = degrees.copy()
    for i in traversal:
        a, b = u[i], v[i]
        if deg[a] > theta or deg[b] > theta:
            keep[i] = False
            deg[a] -= 1
            deg[b] -= 1
    return keep


def edge_removal_mask(
    graph: Graph, theta: int, *, order: str = "lexicographic", rng=None
) -> np.ndarray:
    """Boolean mask over ``graph.edges()`` (lexicographic rows): the edges ER keeps."""
    if not isinstance(graph, Graph):
        raise DataError(f"Edge-Removal needs a Graph, got {type(graph).__name__}")
    theta = check_positive_int(theta, "theta")
    edges = graph.edges()
    m = edges.shape[0]
    if order == "lexicographic":
        traversal = np.arange(m - 1, -1, -1, dtype=np.int64)
    elif order == "lexicographic_forward":
        traversal = np.arange(m, dtype=np.int64)
    elif order == "random":
        traversal = check_rng(rng).permutation(m).astype(np.int64)
    else:
        raise PrivpubError(f"order must be one of {ORDERS}, got {order!r}")
    return _remove(edges[:, 0], edges[:, 1], traversal, graph.degrees(), theta)


def edge_removal(graph: Graph, theta: int, *, order: str = "lexicographic", rng=None) -> Graph:
    """The projected graph ``ER_theta(G)`` (same nodes, kept edges); see the module docstring."""
    keep = edge_removal_mask(graph, theta, order=order, rng=rng)
    return Graph.from_edges(graph.edges()[keep], graph.n_nodes, name=graph.name)


@register_mechanism(
    "projection_edge_removal",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=NO_PRIVACY,
    paper="day2016",
    role="baseline",
    source="Sec 2.4, Fig. 1, Table 2",
    unranked="a noise-free projection (day2016 Sec 2.4), a building block without epsilon",
)
def projection_edge_removal(
    graph: Graph, *, theta: int, order: str = "lexicographic", rng: np.random.Generator
) -> Release:
    """ER projection [BBDS13] (day2016 Table 2): histogram of the edge-removal projection.

    Parameters
    ----------
    graph : Graph
    theta : int
        Degree bound, >= 1.
    order : {"lexicographic", "lexicographic_forward", "random"}
        Edge order (module docstring); the default follows day2016 Fig. 1.
    rng : numpy.random.Generator
        Used only by ``order="random"``.

    Returns
    -------
    Release
        ``DegreeHistogram`` over all nodes (``theta + 1`` bins) and
        ``diagnostics={"edge_fraction": |E'| / |E|}`` (1 for a graph without edges).
    """
    rng = check_rng(rng)
    keep = edge_removal_mask(graph, theta, order=order, rng=rng)
    theta = int(theta)
    edges = graph.edges()[keep]
    deg = np.bincount(edges.ravel(), minlength=graph.n_nodes)
    hist = np.bincount(deg, minlength=theta + 1).astype(float)
    fraction = keep.sum() / keep.size if keep.size else 1.0
    return Release(DegreeHistogram(hist), diagnostics={"edge_fraction": float(fraction)})
