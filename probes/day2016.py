"""Probes behind day2016's Table 1 and Table 2 notes.

- Table 2: can any projection produce the L1 the paper prints, given the fraction of edges
  the paper says it keeps? :func:`l1_upper_bound` bounds every raw-count L1 a projection
  keeping that fraction can reach; :func:`table2_bound_cells` checks every published cell.
- Table 1: how many self-loops day2016 counted as edges (:func:`self_loops_in_lcc`).

``benchmarks/probe_day2016.py`` prints the numbers the notes quote;
``probes/tests/test_day2016.py`` pins them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["l1_upper_bound", "table2_bound_cells", "self_loops_in_lcc", "raw_edges"]


def l1_upper_bound(n_nodes: int, n_edges: int, edge_fraction: float, *,
                   rounding: float = 0.005, truncated_at: int | None = None) -> float:
    """The largest raw-count L1 between the degree histograms of a graph and of a subgraph
    keeping ``edge_fraction`` of its edges (printed with ``rounding`` slack);
    ``truncated_at``: Truncation at that theta, which also drops nodes.

    A projection deletes edges (``pi_theta``, Flowgraph, Edge-Removal) or nodes with their
    edges (Truncation) and never adds any. Deleting ``r`` edges changes the degrees of at
    most ``min(2r, |V|)`` nodes, and each changed degree moves one node from one bin to
    another, which changes the raw-count L1 distance of the two degree histograms by at
    most 2. So ``L1(hist(G), hist(G')) <= 2 min(2 r, |V|)`` with
    ``r = |E| - |E'| = (1 - |E'|/|E|) |E|``. With the paper's own ``|E'|/|E|`` (printed to
    two decimals, so ``r <= (1 - f + 0.005) |E|``) this bounds every L1 the paper could
    have measured on the same graph, whatever the projection's details (edge order, ties,
    how bin theta is treated): a published L1 above it cannot be the raw-count L1 of Sec
    4.2 on that graph. Truncation at ``theta`` also removes the nodes of degree ``> theta``
    from the histogram (one count each); each has at least ``theta + 1`` of the ``r``
    removed edges, so at most ``2 r / (theta + 1)`` of them: its bound is
    ``2 min(2 r, |V|) + 2 r / (theta + 1)``.
    """
    removed = min(1.0, max(0.0, 1.0 - edge_fraction + rounding)) * n_edges
    bound = 2.0 * min(2.0 * removed, float(n_nodes))
    if truncated_at is not None:
        bound += 2.0 * removed / (truncated_at + 1)
    return bound


def table2_bound_cells(paper: dict, sizes: dict, *, labels=("T", "FG", "ER", "pi_theta"),
                       thetas=(16, 64, 128)) -> list[dict]:
    """Every published Table 2 cell with its L1 bound.

    ``paper``: ``{dataset: {"l1_counts": [...], "diag/edge_fraction": [...]}}`` in the
    table's order (theta-major, then the labels), as ``conf/experiment/day2016_table2.yaml``
    stores them; ``sizes``: ``{dataset: (|V|, |E|)}``. Returns one dict per cell with
    ``dataset``, ``theta``, ``label``, ``paper_l1``, ``edge_fraction``, ``bound`` and
    ``exceeds`` (the published L1 is above the bound).
    """
    out = []
    for name, rows in paper.items():
        if name not in sizes:
            continue
        n, m = sizes[name]
        cells = [(t, lab) for t in thetas for lab in labels]
        for (theta, label), l1, frac in zip(cells, rows["l1_counts"],
                                            rows["diag/edge_fraction"], strict=True):
            bound = l1_upper_bound(n, m, frac, truncated_at=theta if label == "T" else None)
            out.append({"dataset": name, "theta": theta, "label": label, "paper_l1": l1,
                        "edge_fraction": frac, "bound": bound, "exceeds": l1 > bound})
    return out


# --------------------------------------------------------------------------- Table 1
def raw_edges(name: str) -> np.ndarray:
    """A real graph's edges as stored in its file, self-loops included, in the ids the
    loader starts from (SNAP ids for edge lists, vertex indices for LG files)."""
    from privpub.data import dataset_files, get_dataset_spec
    from privpub.data.readers import read_edge_list, read_lg

    paths = dataset_files(get_dataset_spec(name).name)
    if str(paths[0]).endswith(".jlg"):
        return read_lg(paths[0])[2]
    return read_edge_list(paths[0])[:, :2]


def self_loops_in_lcc(edges) -> tuple[int, int]:
    """``(loops, loops in the largest component)``: the distinct nodes with a self-loop, all
    of them and those inside the largest connected component of the loop-free graph (the
    one day2016's Table 1 describes). day2016 counts these loops as edges; a simple graph
    has none (Table 1's notes)."""
    edges = np.asarray(edges, dtype=np.int64)[:, :2]
    loop = edges[:, 0] == edges[:, 1]
    ids, inverse = np.unique(edges[~loop], return_inverse=True)
    inverse = inverse.reshape(-1, 2)
    k = ids.size
    adjacency = sp.coo_matrix((np.ones(len(inverse)), (inverse[:, 0], inverse[:, 1])),
                              shape=(k, k))
    _, labels = connected_components(adjacency, directed=False)
    lcc_ids = ids[labels == np.argmax(np.bincount(labels))]
    loop_nodes = np.unique(edges[loop, 0])
    return int(loop_nodes.size), int(np.isin(loop_nodes, lcc_ids).sum())
