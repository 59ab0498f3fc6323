"""DGG as PGB runs it (pgb2024): a BTER graph built from locally noised degrees.

PGB's benchmark lists "DGG" with qin2017's LDPGen as its paper, but its code (``DGG.py``,
github dooohow/PGB @ 076a910) runs a different, one-round algorithm, reproduced here so that
PGB's figures can be regenerated (qin2017's own algorithm is :mod:`privpub.mechanisms.ldpgen`):

1. Every user adds ``Lap(1/eps)`` to her own degree, rounds it and clips it at 0 (the first
   user adds 1 when the sum is odd).
2. **BTER, phase 1** (Seshadhri, Kolda & Pinar 2012): users sorted by noisy degree
   (ascending, stable) are cut into consecutive blocks; a block starting at a user of noisy
   degree ``d`` has ``d + 1`` users (the last block what is left). Inside a block of ``s``
   users every pair is an edge with probability ``ln(s + 1) / ln(d_max + 1)``, ``d_max`` the
   largest noisy degree.
3. **Phase 2**: each user's excess degree ``max(target - degree in phase 1, 0)`` becomes a
   Chung-Lu weight (at least 0.1, as PGB's code), and a Chung-Lu graph on those weights
   (:func:`privpub.data.synthetic.expected_degree_edges`, networkx's ``expected_degree_graph``
   without self-loops) is added.

PGB's code reads the target of user ``v`` as the ``v``-th smallest noisy degree (it indexes
the sorted list by user id); ``target="pgb"`` (the default) does the same, ``target="own"``
uses the user's own noisy degree. Both are post-processing.

Privacy (edge-LDP, :data:`privpub.registry.EDGE_LDP`): one entry of a user's adjacency list
changes her degree by 1, so her ``Lap(1/eps)`` report is ``eps``-LDP; everything after it
reads only the reports. Both endpoints report an edge: on the whole graph this is ``2 eps``
edge-DP (:func:`privpub.registry.implied_central_epsilon`).

References
----------
.. [PGB24] S. Liu, H. Du, Y. Cao, B. Yan, J. Liu, M. Yoshikawa. PGB: Benchmarking
   differentially private synthetic graph generation algorithms. arXiv 2408.02928, 2024;
   code github dooohow/PGB, ``DGG.py``.
.. [SKP12] C. Seshadhri, T. G. Kolda, A. Pinar. Community structure and scale-free
   collections of Erdos-Renyi graphs. Physical Review E 85, 2012.
"""

from __future__ import annotations

import numpy as np

from privpub.data.synthetic import expected_degree_edges, sample_distinct
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import laplace_noise
from privpub.registry import EDGE_LDP, register_mechanism
from privpub.types import Graph, Kind, Release
from privpub.validation import check_epsilon, check_rng

__all__ = ["dgg", "bter_blocks", "TARGETS"]

#: How phase 2 reads a user's target degree: PGB's indexing, or the user's own.
TARGETS = ("pgb", "own")


def bter_blocks(sorted_degrees: np.ndarray) -> np.ndarray:
    """BTER's phase-1 blocks over users sorted by degree: ``starts`` of consecutive blocks,
    a block starting at degree ``d`` holding ``d + 1`` users (PGB's ``DGG.py``)."""
    starts, i, n = [], 0, sorted_degrees.size
    while i < n:
        starts.append(i)
        i += int(sorted_degrees[i]) + 1
    return np.asarray(starts, dtype=np.int64)


def _phase1_edges(order: np.ndarray, sorted_degrees: np.ndarray, rng) -> np.ndarray:
    """Erdos-Renyi blocks: every pair inside a block with ``ln(s+1)/ln(d_max+1)``."""
    d_max = float(sorted_degrees.max()) if sorted_degrees.size else 0.0
    starts = bter_blocks(sorted_degrees)
    bounds = np.append(starts, sorted_degrees.size)
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        s = int(b - a)
        pairs = s * (s - 1) // 2
        if pairs == 0 or d_max <= 0:
            continue
        p = min(1.0, np.log(s + 1) / np.log(d_max + 1))
        k = int(rng.binomial(pairs, p))
        idx = sample_distinct(pairs, k, rng=rng)
        # the idx-th pair (i < j) of s items, row by row
        i = (s - 2 - np.floor(np.sqrt(-8 * idx + 4 * s * (s - 1) - 7) / 2 - 0.5)).astype(np.int64)
        j = idx + i + 1 - s * (s - 1) // 2 + (s - i) * ((s - i) - 1) // 2
        parts.append(np.column_stack([order[a + i], order[a + j]]))
    return np.concatenate(parts) if parts else np.empty((0, 2), dtype=np.int64)


@register_mechanism(
    "dgg",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=EDGE_LDP,
    paper="pgb2024",
    source="PGB's DGG.py (BTER on Laplace-noised degrees), not qin2017's LDPGen",
    audit={"configurations": [{"target": "pgb"}, {"target": "own"}], "cost_ms": 5},
)
def dgg(
    graph: Graph,
    *,
    epsilon: float,
    target: str = "pgb",
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """PGB's DGG: a BTER graph from every user's ``eps``-LDP noisy degree (pgb2024).

    Parameters
    ----------
    graph : Graph
        The input graph; its node count is public.
    epsilon : float
        Each user's budget (edge-LDP): ``Lap(1/eps)`` on her degree.
    target : {"pgb", "own"}
        Phase 2's target degree of user ``v``: the ``v``-th smallest noisy degree, as PGB's
        code reads it, or her own noisy degree.
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional
        Records the one spend.

    Returns
    -------
    Release
        The synthetic :class:`Graph` on the same nodes; ``info`` holds the number of BTER
        blocks and of phase-1 edges.
    """
    if not isinstance(graph, Graph):
        raise PrivpubError(f"dgg takes a Graph, got {type(graph).__name__}")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    if target not in TARGETS:
        raise PrivpubError(f"target must be one of {TARGETS}, got {target!r}")
    ledger = ensure_ledger(ledger, epsilon)
    n = graph.n_nodes
    ledger.spend(epsilon, label="each user's degree (sensitivity 1 per user, Laplace)")
    noise = laplace_noise(sensitivity=1.0, epsilon=epsilon, rng=rng, size=n)
    noisy = np.maximum(np.round(graph.degrees() + noise), 0).astype(np.int64)
    if n and noisy.sum() % 2:
        noisy[0] += 1
    order = np.argsort(noisy, kind="stable")
    sorted_degrees = noisy[order]
    first = _phase1_edges(order, sorted_degrees, rng)
    degree1 = np.bincount(first.ravel(), minlength=n)
    wanted = sorted_degrees if target == "pgb" else noisy
    weights = np.maximum(np.maximum(wanted - degree1, 0), 0.1)
    second = expected_degree_edges(weights, rng=rng) if n >= 2 else np.empty((0, 2), int)
    out = Graph.from_edges(np.concatenate([first, second]), n, name=f"dgg({graph.name})")
    info = {"blocks": int(bter_blocks(sorted_degrees).size), "phase1_edges": int(len(first))}
    return Release(out, info=info)
