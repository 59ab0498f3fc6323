"""A node-DP degree histogram: day2016's edge-addition projection, then Laplace noise.

A privpub plug-in (one file, privpub's public API only); docs/mechanism-authors.md explains
every line. Run it with ``plugins=[path/to/node_dp_degree_histogram.py]``.
"""

import numpy as np

from privpub.noise import laplace_mechanism
from privpub.registry import NODE_DP, register_mechanism
from privpub.types import DegreeHistogram, Graph, Kind, Release
from privpub.validation import check_positive_int


def projected_degrees(graph: Graph, theta: int) -> np.ndarray:
    """Every node's degree in pi_theta(G) (day2016 Sec 3.1, Algorithm 1): walk the edges in
    lexicographic order (``graph.edges()``) and keep an edge while both its ends have fewer
    than ``theta`` kept edges."""
    kept = [0] * graph.n_nodes
    for u, v in graph.edges().tolist():
        if kept[u] < theta and kept[v] < theta:
            kept[u] += 1
            kept[v] += 1
    return np.array(kept, dtype=np.int64)


@register_mechanism(
    "node_dp_projected_histogram",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=NODE_DP,
    paper="day2016",
    source="Sec 3.1, Algorithm 1 and Lemma 1 (theta fixed by hand)",
    audit={"configurations": [{"theta": 2}]},
)
def node_dp_projected_histogram(graph, *, epsilon: float, theta: int = 16, rng, ledger=None):
    """The degree histogram of pi_theta(G) on the public bins 0..theta plus Laplace noise:
    epsilon-node-DP (a node added or removed with all its edges).

    One node more changes the projection's histogram by at most 2 theta + 1 in L1 (day2016
    Lemma 1): its own count (1), and each of its at most theta kept edges starts one chain
    of kept/dropped edges that ends by moving one other node to the next bin (2 each). The
    edge order must be the same on the common edges of both graphs (lexicographic order by
    node id is). ``theta`` is public: set it by hand, never from the graph (day2016's
    theta_histogram chooses it privately). The fraction of edges kept is computed from
    the input, so it is a diagnostic (for the report, not released).
    """
    theta = check_positive_int(theta, "theta")
    degrees = projected_degrees(graph, theta)
    counts = np.bincount(degrees, minlength=theta + 1).astype(float)
    noisy = laplace_mechanism(counts, sensitivity=2 * theta + 1, epsilon=epsilon, rng=rng,
                              ledger=ledger, label="projected histogram")
    kept = degrees.sum() / 2 / max(graph.n_edges, 1)
    return Release(DegreeHistogram(noisy), diagnostics={"edge_fraction": kept})
