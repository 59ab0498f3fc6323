"""An edge-DP synthetic graph: the degree vector plus Laplace noise, then a Chung-Lu graph.

A privpub plug-in (one file, privpub's public API only); docs/mechanism-authors.md explains
every line. Run it with ``plugins=[path/to/edge_dp_synthetic_graph.py]``.
"""

import numpy as np

from privpub.noise import laplace_mechanism
from privpub.registry import EDGE_DP, register_mechanism
from privpub.types import Graph, Kind, Release

#: L1 sensitivity of the degree vector under edge-DP: adding or removing the edge {u, v}
#: changes deg(u) and deg(v) by one each and no other degree.
DEGREE_SENSITIVITY = 2


@register_mechanism(
    "edge_dp_chung_lu",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=EDGE_DP,
    source="Laplace mechanism on the degree vector, then a Chung-Lu graph (post-processing)",
)
def edge_dp_chung_lu(graph, *, epsilon: float, rng, ledger=None):
    """A synthetic graph on the input's nodes whose expected degrees are the input's degrees
    plus Laplace noise: epsilon-edge-DP.

    Edge neighbours share their node set, so ``n`` is public. The degree vector, indexed by
    node, changes by one at both ends of the one edge that differs: L1 sensitivity 2.
    Everything after the noise reads only the noisy degrees, ``n`` and ``rng``
    (post-processing): ``m = round(sum(w) / 2)`` node pairs are drawn with probability
    proportional to the clipped noisy degrees ``w`` (a fast form of Chung and Lu's
    expected-degree model; self-loops and repeated pairs are dropped). Published beside the
    graph: ``m``.
    """
    n = graph.n_nodes
    noisy = laplace_mechanism(graph.degrees(), sensitivity=DEGREE_SENSITIVITY,
                              epsilon=epsilon, rng=rng, ledger=ledger, label="degrees")
    weights = np.clip(noisy, 0, max(n - 1, 0))
    total = float(weights.sum())
    m = min(int(round(total / 2)), n * (n - 1) // 2)
    pairs = rng.choice(n, size=(m, 2), p=weights / total) if m > 0 else np.empty((0, 2), int)
    return Release(Graph.from_edges(pairs, n), info={"pairs_drawn": m})
