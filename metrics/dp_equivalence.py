"""The privacy level at which randomized response would match a release's utility
(epasto2022 Fig. 6: "for each dataset and value of k for smooth k-anonymity [the] parameter
epsilon that will result in the same average Jaccard similarity for edge differential
privacy protection").

Edge-DP randomized response (Algorithm 1, ``baselines/randomized_response.py``) flips every
entry of an ``n x m`` matrix with ``|T|`` ones independently with probability
``q = 1 / (1 + e^eps)``, so ``E|T & R| = |T| (1 - q)`` and ``E|R \\ T| = (N - |T|) q`` with
``N = n m``. Its Jaccard similarity concentrates at
``J(eps) = |T| (1 - q) / (|T| + (N - |T|) q)`` (the ratio of expectations; its relative
standard deviation is below 1% on every matrix of the paper, and
``metrics/tests/test_epasto2022_metrics.py`` checks the closed form against sampled
releases). ``J`` decreases in ``q``, so for a release with Jaccard ``J`` the matching
``q = |T| (1 - J) / (J (N - |T|) + |T|)`` and ``eps = ln((1 - q) / q)``: exactly the number
Fig. 6 plots, obtained without running randomized response at many epsilons on large
matrices (which at small epsilon would be dense: 1e11 cells for dblp).
"""

from __future__ import annotations

import math

from privpub.metrics.sets import jaccard, set_sizes
from privpub.registry import register_metric
from privpub.types import Kind

__all__ = ["rr_edge_epsilon"]


@register_metric(
    "rr_edge_epsilon",
    kinds=Kind.BINARY_MATRIX,
    higher_is_better=True,
    label="ε at which edge-DP randomized response has the same Jaccard",
)
def rr_edge_epsilon(truth, release) -> float:
    """The epsilon at which edge-DP randomized response's expected Jaccard similarity equals
    the release's (epasto2022 Fig. 6).

    Returns ``inf`` for a release equal to the truth and 0 when the release is no better
    than randomized response at epsilon -> 0 (``J <= |T| / (N + |T|)``).
    """
    t, _, _ = set_sizes(truth, release)
    n_rows, n_cols = truth.shape
    cells = n_rows * n_cols
    j = jaccard(truth, release)
    if j >= 1.0:
        return math.inf
    if t == 0 or j <= t / (cells + t):
        return 0.0
    q = t * (1.0 - j) / (j * (cells - t) + t)
    return math.log((1.0 - q) / q)
