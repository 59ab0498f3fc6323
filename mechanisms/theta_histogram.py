"""(theta, Omega)-Histogram and theta-Histogram: day2016 Sec 3.2, Algorithm 2.

Release a degree histogram under node-DP in three steps:

1. **Select** a projection bound ``theta`` in ``1..Theta`` and a grouping ``Omega`` of the
   bins ``1..theta`` together, with the exponential mechanism (budget ``epsilon1``) on the
   quality of Eq. (1),
   ``q^h(G, theta, Omega) = -l_hist(G, theta, Omega) - l_proj(G, theta)``, where
   ``l_hist = sum_{g in Omega} sum_{d in g} (|c_d - avg_g| + (2 theta + 1) / (epsilon2 |g|))``
   (``c`` = histogram of ``pi_theta(G)``) and ``l_proj = 2 |{v : deg_{pi_Theta(G)}(v) > theta}|``.
2. **Publish** the group sums of ``hist(pi_theta(G))`` plus ``Lap((2 theta + 1) / epsilon2)``
   each (Lemma 1: the histogram, hence the vector of group sums, has L1 sensitivity
   ``2 theta + 1``), and spread each noisy sum evenly over its group's bins.
3. **Post-process** the tail (Sec 3.4, Algorithm 5; :mod:`privpub.mechanisms.degree_tail`).

Decisions (where the paper is vague)
------------------------------------
- **Budget split.** ``epsilon1 = 0.1 epsilon`` for the selection and
  ``epsilon2 = 0.9 epsilon`` for the histogram (Sec 4.1). The quality uses ``epsilon2``
  (Algorithm 2 line 1 passes it).
- **Candidate groupings (Sec 3.2).** ``Omega_r`` has groups
  ``g_i = {k : r^(i-1) <= k < r^i}`` (empty groups dropped), cut at ``theta``; e.g.
  ``r = 1.5`` gives ``(1), (2), (3), (4, 5), (6, 7), (8..11), ...`` as in the paper.
  "We vary r such that r in [1, 2]": ``r`` runs over the grid ``1.00, 1.01, ..., 2.00``
  (:data:`RATIOS`; ``r = 1`` is read as its limit, all singletons). For each ``theta`` the
  *distinct* groupings are the candidates (duplicates would only reweight the exponential
  mechanism): 18,499 ``(theta, Omega)`` pairs for ``Theta = 200``, 38,699 for 400. The
  boundaries ``ceil(r^i)`` are computed in exact integer arithmetic.
- **Degree 0.** The paper's histograms have the ``theta`` bins ``1..theta``
  (``sum_g |g| = theta``; Lemma 4's ``cumhist_1 = |{v : deg(v) <= 1}|``). Nodes of projected
  degree 0 (absent from connected graphs except through projection, e.g. leaves of a star at
  ``theta = 1``) are counted in bin 1, as ``cumhist_1`` counts them, so no node is lost and
  no extra noisy bin is published. The release has ``counts[0] = 0``. Merging bins does not
  increase the L1 sensitivity.
- **Sensitivity of Eq. (1).** Lemma 2's ``6 Theta + 4`` holds: ``l_hist`` changes by at most
  twice the histogram's L1 change, ``2 (2 theta + 1)``, and ``l_proj`` by ``2 (Theta + 1)``
  (at most ``Theta + 1`` nodes change degree in ``pi_Theta``). Checked by brute force over
  all graphs on up to 5 nodes and all their node neighbours
  (``mechanisms/tests/test_theta_histogram.py``).
- **theta-Histogram ("No-group", Fig 5).** Only singleton groups: ``l_hist`` is then the
  data-independent ``theta (2 theta + 1) / epsilon2`` and the quality's sensitivity is that
  of ``l_proj`` alone, ``2 Theta + 2``, which is used (the paper does not say; the looser
  ``6 Theta + 4`` would be valid too but wastes selection accuracy).
- **Fixed theta (Fig 6).** No selection step, so the whole ``epsilon`` goes to the
  histogram (singleton bins, sensitivity ``2 theta + 1``).
- **Introspective variants (Fig 5), not private.** ``*_qbest`` takes the argmax of the
  quality, ``*_oracle`` builds the noisy histogram of *every* candidate and keeps the one
  with the least L1 distance (normalised distributions, as Fig 5 plots) to the true
  histogram. Both publish with ``epsilon2 = 0.9 epsilon`` like the private method, so only
  the selection differs. No ledger is used.
- **Output.** Counts per degree ``0..D`` (Algorithm 2 returns ``h' / ||h'||_1``; the metrics
  normalise), clipped at 0 after the tail post-processing.

References
----------
.. [DLL16] W.-Y. Day, N. Li, M. Lyu. Publishing Graph Degree Distribution with Node
   Differential Privacy. SIGMOD 2016. Sec 3.2, Eq. (1), Lemmas 1-3, Algorithm 2,
   Appendix A; Sec 4.1 (budget split), Sec 4.4 and Figs 5, 6.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.mechanisms.degree_projection import (
    ProjectionProfile,
    Variant,
    check_graph,
    check_order,
    check_theta,
    hist_sensitivity,
    projected_degrees,
    projection_profile,
    register_family,
)
from privpub.mechanisms.degree_tail import _postprocess, postprocess_tail, tail_code
from privpub.noise import exponential_mechanism, laplace_mechanism, laplace_noise
from privpub.registry import NO_PRIVACY, NODE_DP, register_mechanism
from privpub.types import DegreeHistogram, Kind, Release
from privpub.validation import check_epsilon, check_rng

__all__ = [
    "RATIOS",
    "EPSILON1_FRACTION",
    "group_starts",
    "candidate_groupings",
    "folded_histograms",
    "folded_histogram",
    "projection_loss",
    "histogram_quality_sensitivity",
    "projection_loss_sensitivity",
    "histogram_quality",
    "theta_omega_histogram",
    "theta_histogram",
    "theta_histogram_fixed",
    "theta_omega_histogram_qbest",
    "theta_omega_histogram_oracle",
    "Variant",
    "VARIANTS",
    "FAMILY",
]

#: Ratios r of the geometric group sizes (Sec 3.2: "we vary r such that r in [1, 2]").
RATIOS = tuple(p / 100 for p in range(100, 201))

#: Share of epsilon spent on selecting the parameters (Sec 4.1: epsilon1 = 0.1 epsilon).
EPSILON1_FRACTION = 0.1

_NOT_PRIVATE = "introspective variant (day2016 Fig 5): theta and Omega are chosen non-privately"


# --------------------------------------------------------------------------- groupings
def group_starts(ratio_percent: int, theta: int) -> tuple[int, ...]:
    """First bin of every group of ``Omega_r`` on bins ``1..theta``, ``r = ratio_percent/100``.

    ``g_i = {k : r^(i-1) <= k < r^i}``; group ``i`` starts at ``ceil(r^(i-1))`` (computed
    exactly with integers), empty groups are dropped, the last group ends at ``theta``.
    ``ratio_percent = 100`` (``r = 1``) gives singletons.

    Examples
    --------
    >>> group_starts(150, 20)
    (1, 2, 3, 4, 6, 8, 12, 18)
    """
    if ratio_percent == 100:
        return tuple(range(1, theta + 1))
    if not 100 < ratio_percent <= 200:
        raise PrivpubError(f"r must lie in [1, 2], got {ratio_percent / 100}")
    starts = []
    num, den = 1, 1
    while True:
        lo = -(-num // den)  # ceil(r^i)
        if lo > theta:
            return tuple(starts)
        if not starts or starts[-1] != lo:
            starts.append(lo)
        num *= ratio_percent
        den *= 100


@functools.lru_cache(maxsize=8)
def _candidates(theta_max: int):
    """Distinct (theta, Omega) pairs, flattened: theta, smallest ratio, group starts."""
    full = {p: group_starts(p, theta_max) for p in range(100, 201)}
    thetas, ratios, offsets, starts = [], [], [0], []
    for theta in range(1, theta_max + 1):
        seen = set()
        for p in range(100, 201):
            s = tuple(x for x in full[p] if x <= theta)
            if s in seen:
                continue
            seen.add(s)
            thetas.append(theta)
            ratios.append(p / 100)
            starts.extend(s)
            offsets.append(len(starts))
    return (
        np.array(thetas, dtype=np.int64),
        np.array(ratios),
        np.array(offsets, dtype=np.int64),
        np.array(starts, dtype=np.int64),
    )


def candidate_groupings(theta_max: int) -> list[tuple[int, float, tuple[int, ...]]]:
    """All candidates ``(theta, r, group starts)`` of Algorithm 2 for ``Theta = theta_max``.

    ``r`` is the smallest ratio of :data:`RATIOS` giving that grouping at that ``theta``.
    """
    thetas, ratios, offsets, starts = _candidates(check_theta(theta_max, "theta_max"))
    return [
        (int(t), float(r), tuple(int(x) for x in starts[offsets[i] : offsets[i + 1]]))
        for i, (t, r) in enumerate(zip(thetas, ratios, strict=True))
    ]


# --------------------------------------------------------------------------- quality
def folded_histograms(profile: ProjectionProfile) -> np.ndarray:
    """``B[theta - 1, d - 1]`` = count of degree ``d`` in ``pi_theta(G)``, ``d = 1..theta``,
    with degree 0 counted in bin 1 (module docstring). Shape ``(Theta, Theta)``, float,
    read-only (computed once per profile)."""
    return profile.derived("folded_histograms", _fold)


def _fold(profile: ProjectionProfile) -> np.ndarray:
    h = profile.histograms.astype(float)
    b = h[:, 1:].copy()
    b[:, 0] += h[:, 0]
    return b


def folded_histogram(profile: ProjectionProfile, theta: int) -> np.ndarray:
    """Row ``theta - 1`` of :func:`folded_histograms` up to ``d = theta`` (one projection)."""
    h = profile.histogram(theta)
    b = h[1:].copy()
    b[0] += h[0]
    return b


def projection_loss(profile: ProjectionProfile) -> np.ndarray:
    """``l_proj(G, theta) = 2 |{v : deg_{pi_Theta(G)}(v) > theta}|`` for ``theta = 1..Theta``."""
    return 2.0 * profile.nodes_above()


def histogram_quality_sensitivity(theta_max: int) -> int:
    """Sensitivity ``6 Theta + 4`` of the quality function Eq. (1) (Lemma 2)."""
    return 6 * int(theta_max) + 4


def projection_loss_sensitivity(theta_max: int) -> int:
    """Sensitivity ``2 Theta + 2`` of ``l_proj`` (Appendix A, part B)."""
    return 2 * int(theta_max) + 2


@njit(cache=True)
def _deviation_loss(bins, thetas, offsets, starts):
    """``sum_g sum_{d in g} |c_d - avg_g|`` for every candidate."""
    out = np.empty(thetas.size)
    for c in range(thetas.size):
        t = thetas[c]
        row = bins[t - 1]
        total = 0.0
        a = offsets[c]
        b = offsets[c + 1]
        for g in range(a, b):
            lo = starts[g]
            hi = starts[g + 1] - 1 if g + 1 < b else t
            s = 0.0
            for d in range(lo, hi + 1):
                s += row[d - 1]
            avg = s / (hi - lo + 1)
            for d in range(lo, hi + 1):
                total += abs(row[d - 1] - avg)
        out[c] = total
    return out


def histogram_quality(profile: ProjectionProfile, epsilon2: float) -> np.ndarray:
    """Eq. (1), ``q^h(G, theta, Omega)``, for every candidate of :func:`candidate_groupings`.

    Parameters
    ----------
    profile : ProjectionProfile
        Projected histograms up to ``Theta`` (:func:`projection_profile`).
    epsilon2 : float
        Budget of the histogram step (the noise term of ``l_hist``).
    """
    epsilon2 = check_epsilon(epsilon2, "epsilon2")
    thetas, _, offsets, starts = _candidates(profile.theta_max)
    dev = profile.derived(
        "deviation_loss",  # the part without epsilon: once per profile, not per release
        lambda p: _deviation_loss(folded_histograms(p), thetas, offsets, starts),
    )
    n_groups = np.diff(offsets)
    noise = n_groups * (2.0 * thetas + 1.0) / epsilon2
    return -(dev + noise) - projection_loss(profile)[thetas - 1]


# --------------------------------------------------------------------------- release
@njit(cache=True)
def _group_sums(row, theta, starts):
    sums = np.zeros(starts.size)
    for g in range(starts.size):
        hi = starts[g + 1] - 1 if g + 1 < starts.size else theta
        for d in range(starts[g], hi + 1):
            sums[g] += row[d - 1]
    return sums


@njit(cache=True)
def _spread(noisy, theta, starts):
    """Counts per degree ``0..theta`` from noisy group sums (each bin gets the average)."""
    counts = np.zeros(theta + 1)
    for g in range(starts.size):
        hi = starts[g + 1] - 1 if g + 1 < starts.size else theta
        share = noisy[g] / (hi - starts[g] + 1)
        for d in range(starts[g], hi + 1):
            counts[d] = share
    return counts


@njit(cache=True)
def _l1_to(truth_dist, counts):
    """L1 distance between a distribution and clipped, normalised ``counts`` (zero-padded)."""
    total = 0.0
    for c in counts:
        if c > 0.0:
            total += c
    if total <= 0.0:
        return np.inf
    size = max(truth_dist.size, counts.size)
    out = 0.0
    for i in range(size):
        a = truth_dist[i] if i < truth_dist.size else 0.0
        b = counts[i] / total if i < counts.size and counts[i] > 0.0 else 0.0
        out += abs(a - b)
    return out


@njit(cache=True)
def _oracle_errors(bins, thetas, offsets, starts, unit_noise, epsilon2, code, truth_dist):
    out = np.empty(thetas.size)
    for c in range(thetas.size):
        t = thetas[c]
        s = starts[offsets[c] : offsets[c + 1]]
        noisy = _group_sums(bins[t - 1], t, s)
        scale = (2.0 * t + 1.0) / epsilon2
        for g in range(s.size):
            noisy[g] += scale * unit_noise[offsets[c] + g]
        out[c] = _l1_to(truth_dist, _postprocess(_spread(noisy, t, s), t, code))
    return out


def _finish(counts, theta, tail) -> DegreeHistogram:
    return DegreeHistogram(postprocess_tail(counts, theta, tail=tail))


def _check_common(graph, epsilon, theta_max, tail, order, rng):
    check_graph(graph)
    epsilon = check_epsilon(epsilon)
    theta_max = check_theta(theta_max, "theta_max")
    tail_code(tail)
    check_order(order)
    return epsilon, theta_max, check_rng(rng)


def _theta_omega(graph, epsilon, theta_max, tail, order, rng, ledger, select, grouped):
    """Algorithm 2 with the selection ``select`` in {"em", "qbest", "oracle"}."""
    epsilon, theta_max, rng = _check_common(graph, epsilon, theta_max, tail, order, rng)
    if select == "em":
        ledger = ensure_ledger(ledger, epsilon)
    epsilon1 = EPSILON1_FRACTION * epsilon
    epsilon2 = epsilon - epsilon1
    profile = projection_profile(graph, theta_max, order=order, rng=rng)
    thetas, ratios, offsets, starts = _candidates(theta_max)
    if grouped:
        first = np.arange(thetas.size)
    else:  # singletons only: r = 1 is the first candidate of every theta
        first = np.flatnonzero(np.r_[True, thetas[1:] != thetas[:-1]])
    # every row is needed to score groupings or to try every candidate; else just theta's
    bins = folded_histograms(profile) if grouped or select == "oracle" else None

    unit_noise = None
    if select == "oracle":
        unit_noise = laplace_noise(sensitivity=1.0, epsilon=1.0, rng=rng, size=starts.size)
        truth = graph.degree_histogram().distribution()
        errors = _oracle_errors(
            bins, thetas, offsets, starts, unit_noise, epsilon2, tail_code(tail), truth
        )
        chosen = int(first[np.argmin(errors[first])])
    else:
        if grouped:
            quality = histogram_quality(profile, epsilon2)
            sensitivity = histogram_quality_sensitivity(theta_max)
        else:
            t = thetas[first].astype(float)
            quality = -t * (2.0 * t + 1.0) / epsilon2 - projection_loss(profile)
            sensitivity = projection_loss_sensitivity(theta_max)
        if select == "qbest":
            pick = int(np.argmax(quality))
        else:
            pick = exponential_mechanism(
                quality,
                sensitivity=sensitivity,
                epsilon=epsilon1,
                rng=rng,
                ledger=ledger,
                label="select (theta, Omega)" if grouped else "select theta",
            )
        chosen = int(first[pick]) if not grouped else pick

    theta = int(thetas[chosen])
    s = starts[offsets[chosen] : offsets[chosen + 1]]
    row = bins[theta - 1] if bins is not None else folded_histogram(profile, theta)
    sums = _group_sums(row, theta, s)
    if select == "oracle":  # the very release the oracle evaluated
        unit = unit_noise[offsets[chosen] : offsets[chosen + 1]]
        noisy = sums + hist_sensitivity(theta) / epsilon2 * unit
    elif select == "qbest":
        noisy = sums + laplace_noise(
            sensitivity=hist_sensitivity(theta), epsilon=epsilon2, rng=rng, size=s.size
        )
    else:
        noisy = laplace_mechanism(
            sums,
            sensitivity=hist_sensitivity(theta),
            epsilon=epsilon2,
            rng=rng,
            ledger=ledger,
            label="noisy group counts" if grouped else "noisy histogram",
        )
    hist = _finish(_spread(noisy, theta, s), theta, tail)
    info = {"theta": theta, "groups": int(s.size), "ratio": float(ratios[chosen])}
    return Release(hist, info=info)


# --------------------------------------------------------------------------- registered
_THETA_OMEGA_DOC = """(theta, Omega)-Histogram, epsilon-node-DP (day2016 Algorithm 2).

    Parameters
    ----------
    graph : Graph
        The input graph.
    epsilon : float
        Total budget: ``0.1 epsilon`` selects ``(theta, Omega)`` with the exponential
        mechanism (Eq. (1), sensitivity ``6 Theta + 4``), ``0.9 epsilon`` publishes the
        grouped histogram (Laplace, sensitivity ``2 theta + 1``).
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
        ``theta``, ``groups`` (``|Omega|``) and ``ratio`` (smallest ``r`` giving ``Omega``).

    Raises
    ------
    PrivpubError
        On bad ``epsilon``, ``theta_max``, ``tail``, ``order`` or a non-Graph input.

    See the module docstring for every decision the paper leaves open.
    """

_INTROSPECTION = "non-private by design (introspection)"
_FIG5_ORACLE = "day2016 Fig. 5's introspection oracle (the true best theta): not a release method"
_FIG5_QBEST = "day2016 Fig. 5's best-quality-function oracle: not a release method"

_THETA_DOC = """theta-Histogram ("No-group", Fig 5), epsilon-node-DP: Algorithm 2 without grouping.

    ``theta`` is chosen by the exponential mechanism (``0.1 epsilon``) on Eq. (1) with
    singleton groups, whose only data-dependent part is ``l_proj`` (sensitivity
    ``2 Theta + 2``); the histogram of bins ``1..theta`` gets ``Lap((2 theta + 1) / (0.9
    epsilon))`` per bin. Parameters and output as :func:`theta_omega_histogram`.
    """

_QBEST_DOC = """(theta, Omega)-Q-Best (Fig 5), NOT private: the best-quality ``(theta, Omega)``.

    Algorithm 2 with line 2 replaced by the argmax of Eq. (1); the histogram is published
    with ``0.9 epsilon`` as in :func:`theta_omega_histogram`. ``ledger`` is not used.
    """

_ORACLE_DOC = """(theta, Omega)-Oracle (Fig 5), NOT private: the best of all candidates' releases.

    Every candidate ``(theta, Omega)`` gets its own noisy, post-processed histogram
    (``0.9 epsilon``); the one with the least L1 distance between normalised distributions
    and the true degree distribution is returned. ``ledger`` is not used.
    """


#: Algorithm 2's variants, registered in a loop below, all with the same signature.
VARIANTS = {
    "theta_omega_histogram": Variant("em", True, _THETA_OMEGA_DOC, dict(
        privacy=NODE_DP, source="Sec 3.2, Algorithm 2, Eq. (1)", audit={"cost_ms": 30})),
    "theta_histogram": Variant("em", False, _THETA_DOC, dict(
        privacy=NODE_DP, source="Sec 3.2, Algorithm 2 with singleton groups (Fig 5)",
        audit={"cost_ms": 1.6})),
    "theta_omega_histogram_qbest": Variant("qbest", True, _QBEST_DOC, dict(
        privacy=NO_PRIVACY, source="Sec 4.4, Fig 5 ((theta, Omega)-Q-Best)",
        caveat=_NOT_PRIVATE + " (argmax of the quality function Eq. (1), no exponential "
                              "mechanism)",
        caveat_summary=_INTROSPECTION, unranked=_FIG5_QBEST)),
    "theta_omega_histogram_oracle": Variant("oracle", True, _ORACLE_DOC, dict(
        privacy=NO_PRIVACY, source="Sec 4.4, Fig 5 ((theta, Omega)-Oracle)",
        caveat=_NOT_PRIVATE + " (the candidate whose noisy histogram is closest to the truth)",
        caveat_summary=_INTROSPECTION, unranked=_FIG5_ORACLE)),
}


FAMILY = register_family(VARIANTS, _theta_omega)
theta_omega_histogram = FAMILY["theta_omega_histogram"]
theta_histogram = FAMILY["theta_histogram"]
theta_omega_histogram_qbest = FAMILY["theta_omega_histogram_qbest"]
theta_omega_histogram_oracle = FAMILY["theta_omega_histogram_oracle"]


@register_mechanism(
    "theta_histogram_fixed",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=NODE_DP,
    paper="day2016",
    source="Sec 4.4, Fig 6 (theta set by hand)",
    audit={"configurations": [{"theta": 2}]},
    unranked="day2016 Fig. 6's hand-set theta ablation; theta_histogram chooses theta "
             "privately and is ranked",
)
def theta_histogram_fixed(
    graph,
    *,
    epsilon: float,
    theta: int,
    tail: str = "linear",
    order: str = "lexicographic",
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """theta-Histogram with a manually set ``theta`` (Fig 6), epsilon-node-DP.

    No selection step, so the whole ``epsilon`` goes to the histogram: bins ``1..theta`` of
    ``hist(pi_theta(G))`` (degree 0 counted in bin 1) plus ``Lap((2 theta + 1) / epsilon)``
    each, then the tail post-processing. Info: ``theta``, ``groups`` (= ``theta``).
    """
    check_graph(graph)
    epsilon = check_epsilon(epsilon)
    theta = check_theta(theta)
    tail_code(tail)
    check_order(order)
    rng = check_rng(rng)
    ledger = ensure_ledger(ledger, epsilon)
    deg = projected_degrees(graph, theta, order=order, rng=rng)
    h = np.bincount(deg, minlength=theta + 1).astype(float)
    bins = h[1:].copy()
    bins[0] += h[0]
    noisy = laplace_mechanism(
        bins,
        sensitivity=hist_sensitivity(theta),
        epsilon=epsilon,
        rng=rng,
        ledger=ledger,
        label="noisy histogram (fixed theta)",
    )
    counts = np.concatenate([[0.0], noisy])
    return Release(_finish(counts, theta, tail), info={"theta": theta, "groups": theta})
