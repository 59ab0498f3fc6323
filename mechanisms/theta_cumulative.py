"""theta-CumulativeHistogram and theta-Constrained: day2016 Sec 3.3, Algorithms 3 and 4.

Release a degree histogram under node-DP through the *cumulative* histogram
``cumhist_k = |{v : deg(v) <= k}|``, ``k = 1..theta``, of the projected graph ``pi_theta(G)``,
whose L1 sensitivity is only ``theta + 1`` (Lemma 4):

1. **Select** ``theta`` in ``1..Theta`` with the exponential mechanism (budget ``epsilon1``)
   on ``q^c(G, theta) = -2 |{v : deg_{pi_Theta(G)}(v) > theta}| - sqrt(theta) (theta + 1) /
   epsilon2``.
2. **Publish** ``cumhist(pi_theta(G)) + Lap((theta + 1) / epsilon2)^theta``.
3. **Calibrate and extract** a histogram: ExtractHistogram (Algorithm 3,
   :func:`extract_histogram`) for theta-CumulativeHistogram, isotonic regression
   (constrained inference, Hay et al. 2010; :mod:`privpub.isotonic`) for theta-Constrained.
4. **Post-process** the tail (Sec 3.4, :mod:`privpub.mechanisms.degree_tail`).

Decisions (where the paper is vague)
------------------------------------
- **Budget split.** ``epsilon1 = 0.1 epsilon`` selects ``theta``, ``epsilon2 = 0.9
  epsilon`` publishes the cumulative histogram (Sec 4.1; Lemma 5 composes them). ``q^c``
  uses ``epsilon2`` (Algorithm 4 line 1).
- **The quality function.** The printed ``q^c`` counts nodes with ``deg_{pi_theta(G)}(v) >
  theta``, which is always 0; the text says its projection loss "is the same as l_proj",
  i.e. degrees in ``pi_Theta(G)``, which is used.
- **Its sensitivity.** The paper says ``Delta q^c = 2 theta + 2`` "as analyzed in the proof
  of Lemma 2". With the candidate's own ``theta`` this is wrong: ``l_proj(G, theta)`` is
  computed on ``pi_Theta(G)`` and can change by ``2 (Theta + 1)`` for any ``theta`` (a new
  node raising ``Theta`` nodes from degree ``theta`` to ``theta + 1``);
  ``test_theta_cumulative.py`` has a counterexample at ``theta = 1``. With ``Theta`` it is
  right (Appendix A, part B) and holds under brute force over all graphs on up to 5 nodes
  and their node neighbours, so ``2 Theta + 2`` is used.
- **Degree 0.** ``cumhist_1 = |{v : deg(v) <= 1}|`` (Sec 3.3) counts projected degree-0
  nodes; the extracted bin 1 therefore holds them too, and the release has
  ``counts[0] = 0`` (as :mod:`privpub.mechanisms.theta_histogram`).
- **ExtractHistogram (Algorithm 3).** See :func:`extract_histogram`: the printed loop reads
  ``hc_{theta+1}`` (taken as "no inversion at the last bin") and can produce negative counts
  when a block ends below the previous level; it is implemented so that its output is
  identical to the printed algorithm whenever that is non-negative, and otherwise the
  calibrated cumulative never decreases (negative increments become 0).
- **theta-Constrained.** The noisy ``cumhist_1..theta`` is replaced by its isotonic (L2)
  regression, clipped at 0, and differenced. Same selection and budget as
  theta-CumulativeHistogram.
- **Introspective variants (Fig 5), not private.** ``theta_cumulative_qbest`` takes the
  argmax of ``q^c``; ``theta_cumulative_oracle`` builds the noisy, extracted, post-processed
  histogram for every ``theta`` and keeps the one with the least L1 distance (normalised
  distributions) to the truth. Both publish with ``epsilon2 = 0.9 epsilon``; no ledger.

References
----------
.. [DLL16] W.-Y. Day, N. Li, M. Lyu. Publishing Graph Degree Distribution with Node
   Differential Privacy. SIGMOD 2016. Sec 3.3, Lemmas 4-5, Algorithms 3-4; Sec 4.1, 4.3
   (theta-Constrained), 4.4 and Fig 5.
.. [HRMS10] M. Hay, V. Rastogi, G. Miklau, D. Suciu. Boosting the accuracy of
   differentially private histograms through consistency. PVLDB 3(1), 2010.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from privpub.errors import PrivpubError
from privpub.isotonic import isotonic_regression
from privpub.ledger import ensure_ledger
from privpub.mechanisms.degree_projection import (
    ProjectionProfile,
    Variant,
    check_graph,
    check_order,
    check_theta,
    cumhist_sensitivity,
    projection_profile,
    register_family,
)
from privpub.mechanisms.degree_tail import postprocess_tail, tail_code
from privpub.noise import exponential_mechanism, laplace_mechanism, laplace_noise
from privpub.registry import NO_PRIVACY, NODE_DP
from privpub.types import DegreeHistogram, Release
from privpub.validation import check_epsilon, check_rng

__all__ = [
    "EPSILON1_FRACTION",
    "CALIBRATIONS",
    "extract_histogram",
    "constrained_histogram",
    "folded_cumulative",
    "cumulative_quality",
    "cumulative_quality_sensitivity",
    "theta_cumulative_histogram",
    "theta_constrained",
    "theta_cumulative_qbest",
    "theta_cumulative_oracle",
]

#: Share of epsilon spent on selecting theta (Sec 4.1: epsilon1 = 0.1 epsilon).
EPSILON1_FRACTION = 0.1

#: How a noisy cumulative histogram is turned into a histogram.
CALIBRATIONS = ("extract", "isotonic")

_NOT_PRIVATE = "introspective variant (day2016 Fig 5): theta is chosen non-privately"


# --------------------------------------------------------------------------- calibration
@njit(cache=True)
def _extract(hc):
    theta = hc.size
    h = np.zeros(theta)
    if theta == 0:
        return h
    x = hc.copy()
    if x[0] < 0.0:  # line 1
        x[0] = 0.0
    prev = 0.0  # calibrated cumulative count up to bin i - 1 (hc_0 = 0)
    i = 0
    while i < theta:
        if (i == theta - 1 or x[i] < x[i + 1]) and x[i] >= prev:  # line 3
            h[i] = x[i] - prev  # line 4
            prev = x[i]
            i += 1
        else:
            # line 7: scanning j from theta down to i, the first j with hc_{j-1} < hc_i
            j = i
            for jj in range(theta - 1, i, -1):
                if x[jj - 1] < x[i]:
                    j = jj
                    break
            top = max(x[j], prev)
            share = (top - prev) / (j - i + 1)  # line 8
            for k in range(i, j + 1):
                h[k] = share
            prev = top
            i = j + 1  # line 9
    return h


def _as_cumulative(hc) -> np.ndarray:
    try:
        x = np.asarray(hc, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise PrivpubError(f"the cumulative histogram must be numeric: {exc}") from None
    if not np.all(np.isfinite(x)):
        raise PrivpubError("the cumulative histogram must be finite")
    return np.ascontiguousarray(x)


def extract_histogram(hc) -> np.ndarray:
    """ExtractHistogram (day2016 Algorithm 3): a histogram from a noisy cumulative one.

    Walks the bins; where the noisy cumulative count decreases after bin ``i``
    (``hc_i >= hc_{i+1}``), it finds, scanning ``j`` down from ``theta``, the first ``j`` with
    ``hc_{j-1} < hc_i`` and spreads ``hc_j - hc_{i-1}`` evenly over bins ``i..j`` (lines
    7-8), then continues after ``j``. So the calibrated cumulative histogram passes through
    the noisy one at the ends of blocks and is linear inside them.

    Two guards make the output a histogram: the last bin counts as increasing (the printed
    line 3 reads ``hc_{theta+1}``), and a step or block that would end below the level
    reached so far gets increment 0 (the printed algorithm would output negative counts).
    Where the printed algorithm's output is non-negative, this is identical to it.

    Parameters
    ----------
    hc : array_like
        Noisy ``cumhist_1 .. cumhist_theta``.

    Returns
    -------
    numpy.ndarray
        ``h_1 .. h_theta``: non-negative, so its cumulative sums are non-decreasing.

    Examples
    --------
    >>> extract_histogram([2.0, 5.0, 4.0, 9.0]).tolist()
    [2.0, 2.3333333333333335, 2.3333333333333335, 2.3333333333333335]
    """
    return _extract(_as_cumulative(hc))


def constrained_histogram(hc) -> np.ndarray:
    """theta-Constrained calibration: isotonic regression of ``hc`` (clipped at 0),
    differenced (Hay et al. 2010, as day2016 Sec 4.3 uses it). Non-negative."""
    fit = np.maximum(isotonic_regression(_as_cumulative(hc)), 0.0)
    return np.diff(fit, prepend=0.0)


def _calibrate(hc, calibration):
    return _extract(hc) if calibration == "extract" else constrained_histogram(hc)


# --------------------------------------------------------------------------- quality
def folded_cumulative(profile: ProjectionProfile, theta: int) -> np.ndarray:
    """``cumhist_k(pi_theta(G)) = |{v : deg(v) <= k}|`` for ``k = 1..theta``."""
    return profile.cumulative(theta)[1:]


def cumulative_quality_sensitivity(theta_max: int) -> int:
    """Sensitivity ``2 Theta + 2`` of ``q^c`` (module docstring: not ``2 theta + 2``)."""
    return 2 * int(theta_max) + 2


def cumulative_quality(profile: ProjectionProfile, epsilon2: float) -> np.ndarray:
    """``q^c(G, theta)`` for ``theta = 1..Theta`` (Sec 3.3).

    ``-2 |{v : deg_{pi_Theta(G)}(v) > theta}| - sqrt(theta) (theta + 1) / epsilon2``.
    """
    epsilon2 = check_epsilon(epsilon2, "epsilon2")
    t = np.arange(1, profile.theta_max + 1, dtype=float)
    return -2.0 * profile.nodes_above() - np.sqrt(t) * (t + 1.0) / epsilon2


# --------------------------------------------------------------------------- mechanism
def _release(noisy_cum, theta, tail, calibration) -> DegreeHistogram:
    counts = np.concatenate([[0.0], _calibrate(noisy_cum, calibration)])
    return DegreeHistogram(postprocess_tail(counts, theta, tail=tail))


def _l1_distributions(truth_dist: np.ndarray, counts: np.ndarray) -> float:
    c = np.clip(counts, 0.0, None)
    total = c.sum()
    if not total > 0:
        return np.inf
    size = max(truth_dist.size, c.size)
    diff = np.pad(truth_dist, (0, size - truth_dist.size)) - np.pad(c / total, (0, size - c.size))
    return float(np.abs(diff).sum())


def _theta_cumulative(graph, epsilon, theta_max, tail, order, rng, ledger, select, calibration):
    """Algorithm 4 with the selection ``select`` in {"em", "qbest", "oracle"}."""
    check_graph(graph)
    epsilon = check_epsilon(epsilon)
    theta_max = check_theta(theta_max, "theta_max")
    tail_code(tail)
    check_order(order)
    rng = check_rng(rng)
    if select == "em":
        ledger = ensure_ledger(ledger, epsilon)
    epsilon1 = EPSILON1_FRACTION * epsilon
    epsilon2 = epsilon - epsilon1
    profile = projection_profile(graph, theta_max, order=order, rng=rng)

    if select == "oracle":
        truth = graph.degree_histogram().distribution()
        best, best_err = None, np.inf
        for theta in range(1, theta_max + 1):
            noisy = folded_cumulative(profile, theta) + laplace_noise(
                sensitivity=cumhist_sensitivity(theta), epsilon=epsilon2, rng=rng, size=theta
            )
            hist = _release(noisy, theta, tail, calibration)
            err = _l1_distributions(truth, hist.counts)
            if best is None or err < best_err:
                best, best_err = (theta, hist), err
        theta, hist = best
        return Release(hist, info={"theta": theta})

    quality = cumulative_quality(profile, epsilon2)
    if select == "qbest":
        theta = int(np.argmax(quality)) + 1
        noisy = folded_cumulative(profile, theta) + laplace_noise(
            sensitivity=cumhist_sensitivity(theta), epsilon=epsilon2, rng=rng, size=theta
        )
    else:
        theta = 1 + exponential_mechanism(
            quality,
            sensitivity=cumulative_quality_sensitivity(theta_max),
            epsilon=epsilon1,
            rng=rng,
            ledger=ledger,
            label="select theta",
        )
        noisy = laplace_mechanism(
            folded_cumulative(profile, theta),
            sensitivity=cumhist_sensitivity(theta),
            epsilon=epsilon2,
            rng=rng,
            ledger=ledger,
            label="noisy cumulative histogram",
        )
    return Release(_release(noisy, theta, tail, calibration), info={"theta": theta})


# --------------------------------------------------------------------------- registered
_CUMULATIVE_DOC = """\
theta-CumulativeHistogram, epsilon-node-DP (day2016 Algorithm 4, ExtractHistogram).

    Parameters
    ----------
    graph : Graph
        The input graph.
    epsilon : float
        Total budget: ``0.1 epsilon`` selects ``theta`` (exponential mechanism on ``q^c``,
        sensitivity ``2 Theta + 2``), ``0.9 epsilon`` publishes ``cumhist(pi_theta(G))``
        (Laplace, sensitivity ``theta + 1``).
    theta_max : int
        ``Theta``: candidates ``theta = 1..Theta`` (paper: 200; Fig 5's Q-400: 400).
    tail : {"linear", "powerlaw", "uniform"}
        Tail post-processing (Sec 3.4, :mod:`privpub.mechanisms.degree_tail`).
    order : {"lexicographic", "random"}
        Stable edge order of the projection (:mod:`privpub.mechanisms.degree_projection`).
    rng : numpy.random.Generator
        Source of all randomness.
    ledger : PrivacyLedger, optional
        Budget account with total ``epsilon``.

    Returns
    -------
    Release
        ``DegreeHistogram`` (non-negative counts per degree, ``counts[0] = 0``); info
        ``theta``.

    Raises
    ------
    PrivpubError
        On bad ``epsilon``, ``theta_max``, ``tail``, ``order`` or a non-Graph input.

    See the module docstring for every decision the paper leaves open.
    """

_CONSTRAINED_DOC = """\
theta-Constrained, epsilon-node-DP: Algorithm 4 with isotonic regression (Sec 4.3).

    The noisy cumulative histogram is calibrated by constrained inference
    (:func:`constrained_histogram`) instead of ExtractHistogram; parameters, selection, budget,
    post-processing and output as :func:`theta_cumulative_histogram`.
    """

_QBEST_DOC = """theta-Q-Best (Fig 5), NOT private: Algorithm 4 with the argmax of ``q^c``.

    The cumulative histogram is published with ``0.9 epsilon``; ``ledger`` is not used.
    """

_ORACLE_DOC = """theta-Oracle (Fig 5), NOT private: the best of the releases for every ``theta``.

    Each ``theta = 1..Theta`` gets its own noisy (``0.9 epsilon``), extracted, post-processed
    histogram; the one with the least L1 distance between normalised distributions and the
    true degree distribution is returned. ``ledger`` is not used.
    """

_INTROSPECTION = "non-private by design (introspection)"


#: Algorithm 4's variants, registered in a loop below, all with the same signature.
VARIANTS = {
    "theta_cumulative_histogram": Variant("em", "extract", _CUMULATIVE_DOC, dict(
        privacy=NODE_DP, source="Sec 3.3, Algorithms 3-4", audit={"cost_ms": 1.5})),
    "theta_constrained": Variant("em", "isotonic", _CONSTRAINED_DOC, dict(
        privacy=NODE_DP, source="Sec 4.3 (Algorithm 4 with constrained inference)",
        audit={"cost_ms": 2.3})),
    "theta_cumulative_qbest": Variant("qbest", "extract", _QBEST_DOC, dict(
        privacy=NO_PRIVACY, source="Sec 4.4, Fig 5 (theta-Q-Best)",
        caveat=_NOT_PRIVATE + " (argmax of the quality function q^c, no exponential mechanism)",
        caveat_summary=_INTROSPECTION,
        unranked="day2016 Fig. 5's best-quality-function oracle: not a release method")),
    "theta_cumulative_oracle": Variant("oracle", "extract", _ORACLE_DOC, dict(
        privacy=NO_PRIVACY, source="Sec 4.4, Fig 5 (theta-Oracle)",
        caveat=_NOT_PRIVATE + " (the theta whose noisy histogram is closest to the truth)",
        caveat_summary=_INTROSPECTION,
        unranked="day2016 Fig. 5's introspection oracle (the true best theta): not a release "
                 "method")),
}


FAMILY = register_family(VARIANTS, _theta_cumulative)
theta_cumulative_histogram = FAMILY["theta_cumulative_histogram"]
theta_constrained = FAMILY["theta_constrained"]
theta_cumulative_qbest = FAMILY["theta_cumulative_qbest"]
theta_cumulative_oracle = FAMILY["theta_cumulative_oracle"]
