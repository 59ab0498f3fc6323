"""Mechanisms with known privacy bugs (and correct ones), for the audit's tests and benchmark.

They are registered through the registry's decorator by :func:`register` -- the same path a
user's plug-in takes -- and removed by :func:`unregister`, so that they never leak into the
other tests' view of the registry. Each docstring says what is wrong and which audit
statistic should see it.
"""

from __future__ import annotations

import numpy as np

from privpub import registry
from privpub.noise import exponential_mechanism, laplace_mechanism
from privpub.registry import EDGE_DP, NODE_DP, register_mechanism
from privpub.types import DegreeHistogram, DegreeSequence, Kind, Ranking

__all__ = ["NAMES", "register", "unregister"]


def _fixed_histogram(graph) -> np.ndarray:
    """Degree histogram on the public bins ``0..n-1`` (edge-DP keeps ``n``)."""
    return np.bincount(graph.degrees(), minlength=graph.n_nodes)[: graph.n_nodes].astype(float)


def readme_laplace_histogram(graph, *, epsilon, rng, ledger=None):
    """The README's example: Laplace on the degree histogram of ``d_max + 1`` bins. Its
    sensitivity is right, but the length of the release is ``d_max + 1``: not edge-DP."""
    counts = graph.degree_histogram().counts
    return DegreeHistogram(laplace_mechanism(counts, sensitivity=4, epsilon=epsilon, rng=rng,
                                             ledger=ledger, label="histogram"))


def laplace_histogram(graph, *, epsilon, rng, ledger=None, sensitivity_factor: float = 1.0,
                      noise_factor: float = 1.0):
    """Laplace on the fixed-length degree histogram, edge-DP with L1 sensitivity 4;
    ``sensitivity_factor = 0.5`` halves the sensitivity (a 2x violation),
    ``noise_factor`` > 1 adds more noise than needed (private, but hard to audit)."""
    out = laplace_mechanism(_fixed_histogram(graph), sensitivity=4 * sensitivity_factor,
                            epsilon=epsilon / noise_factor, rng=rng, ledger=None,
                            label="histogram")
    if ledger is not None:
        ledger.spend(epsilon, label="histogram", sensitivity=4 * sensitivity_factor)
    return DegreeHistogram(out)


def edge_calibrated_degree_sum(graph, *, epsilon, rng, ledger=None):
    """Claims node-DP but is calibrated for edge-DP: the sum of degrees (``2 |E|``) plus
    ``Lap(2 / epsilon)``. One edge changes the sum by 2; one node with ``d`` edges by
    ``2 d``, so a hub leaks ``d`` times the claim."""
    total = np.array([float(graph.degrees().sum())])
    return DegreeSequence(laplace_mechanism(total, sensitivity=2, epsilon=epsilon, rng=rng,
                                            ledger=ledger, label="degree sum"))


def dense_or_sparse(graph, *, epsilon, rng, ledger=None, sensitivity: float = 1.0):
    """Is the graph denser than half of its ``N = n (n - 1) / 2`` node pairs? The
    exponential mechanism over {0: sparse, 1: dense} with utilities ``-(m - N/2)`` and
    ``m - N/2`` (``m`` edges): one edge changes each by 1, so ``sensitivity = 1``;
    ``sensitivity = 0.5`` halves it, and one edge then moves the log-odds by ``2 epsilon``
    (a privacy loss up to ``2 epsilon``)."""
    half = graph.n_nodes * (graph.n_nodes - 1) / 4
    scores = np.array([half - graph.n_edges, graph.n_edges - half], dtype=float)
    choice = exponential_mechanism(scores, sensitivity=sensitivity, epsilon=epsilon, rng=rng,
                                   ledger=ledger, label="dense or sparse")
    return Ranking(np.array([int(choice)]))


_SPECS = {
    "toy_audit_readme_histogram": (readme_laplace_histogram, Kind.DEGREE_HISTOGRAM, EDGE_DP),
    "toy_audit_laplace": (laplace_histogram, Kind.DEGREE_HISTOGRAM, EDGE_DP),
    "toy_audit_node_as_edge": (edge_calibrated_degree_sum, Kind.DEGREE_SEQUENCE, NODE_DP),
    "toy_audit_dense_or_sparse": (dense_or_sparse, Kind.RANKING, EDGE_DP),
}
#: The names :func:`register` registers.
NAMES = tuple(_SPECS)


def register() -> tuple[str, ...]:
    """Register the mechanisms above (idempotent); returns their names."""
    for name, (func, output_kind, privacy) in _SPECS.items():
        if registry._MECHANISMS.get(name) is None:
            register_mechanism(name, input_kind=Kind.GRAPH, output_kind=output_kind,
                               privacy=privacy, role="baseline")(func)
    return NAMES


def unregister() -> None:
    """Remove them from the registry again."""
    for name in NAMES:
        registry._MECHANISMS.pop(name, None)
