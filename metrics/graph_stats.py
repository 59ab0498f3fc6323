"""Graph statistics read off a (released) degree distribution: day2016 Table 1.

Each metric describes the *release* alone (the truth argument is only type-checked): the
number of nodes ``sum_d h[d]``, of edges ``sum_d d h[d] / 2`` (handshake lemma), the maximum
degree (largest ``d`` with a count of at least one half) and the average degree
``2|E| / |V|``. On the true histogram (mechanism ``original_degree_histogram``) they are
Table 1's ``|V|, |E|, d_max, d_avg``; on a noisy release they show what it implies (e.g.
how many nodes a node-DP histogram claims). Negative counts are clipped at 0 first, as
:func:`privpub.metrics.distributions.histogram_distribution` does.
"""

from __future__ import annotations

import numpy as np

from privpub.metrics._checks import same_type
from privpub.metrics.distributions import sequence_histogram
from privpub.registry import register_metric
from privpub.types import DegreeHistogram, DegreeSequence, Kind

__all__ = ["avg_degree", "edges", "max_degree", "nodes", "release_counts"]

_KINDS = (Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE)


def release_counts(truth, release, metric: str) -> np.ndarray:
    """The release's counts per degree, negative counts clipped at 0."""
    kind = same_type(truth, release, (DegreeHistogram, DegreeSequence), metric)
    if kind is DegreeSequence:
        return sequence_histogram(release.values, role="release")
    counts = np.asarray(release.counts, dtype=float)
    return np.clip(np.nan_to_num(counts, nan=0.0), 0.0, None)


@register_metric("nodes", kinds=_KINDS, higher_is_better=True, label="|V|")
def nodes(truth, release) -> float:
    """Number of nodes of the release: the sum of its counts."""
    return float(release_counts(truth, release, "nodes").sum())


@register_metric("edges", kinds=_KINDS, higher_is_better=True, label="|E|")
def edges(truth, release) -> float:
    """Number of edges of the release: half its degree sum."""
    h = release_counts(truth, release, "edges")
    return float(np.arange(h.size) @ h / 2.0)


@register_metric("max_degree", kinds=_KINDS, higher_is_better=True, label="d_max")
def max_degree(truth, release) -> float:
    """Largest degree whose count is at least 1/2 (0 for an empty release)."""
    h = release_counts(truth, release, "max_degree")
    present = np.flatnonzero(h >= 0.5)
    return float(present[-1]) if present.size else 0.0


@register_metric("avg_degree", kinds=_KINDS, higher_is_better=True, label="d_avg")
def avg_degree(truth, release) -> float:
    """Average degree ``2|E| / |V|`` of the release (NaN for an empty one)."""
    h = release_counts(truth, release, "avg_degree")
    n = h.sum()
    return float(np.arange(h.size) @ h / n) if n > 0 else float("nan")
