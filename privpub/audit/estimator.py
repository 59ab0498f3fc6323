"""Events, their choice on a first batch, and epsilon lower bounds with exact intervals.

For a neighbouring pair ``(D, D')`` and an event ``E`` on the output, pure epsilon-DP needs
``P[M(D) in E] <= e^eps P[M(D') in E]``. With ``c`` of ``n`` runs on ``D`` and ``c'`` of
``n'`` on ``D'`` in ``E``, the one-sided Clopper-Pearson bounds [CP34] give the lower bound

    eps_lb = log( low(c, n) / high(c', n') )

which holds with probability ``1 - 2 level`` (each bound fails with probability ``level``).
This is the estimator of the auditing literature (Jagielski et al. 2020 [JUO20], Nasr et
al. 2021 [NSTPC21]); privpub.testing has the same bound for hand-written neighbour tests.

Events are thresholds ``x > t`` / ``x <= t`` on a numeric statistic and sets of values of a
discrete one (the values with the largest estimated ratio first: the Neyman-Pearson order,
as DP-Sniper [BGDCV21] thresholds a classifier's score). They are **chosen on a first batch
and measured on fresh samples** (StatDP's two phases [DWWZK18]), so the choice costs no
confidence: :func:`candidate_events` picks, on one half of the first batch, the event
expected to give the largest bound on the measurement batch, and :func:`rescored` rates it
on the other half, so that tests are ranked without the optimism of a best-of-many
choice. The measured tests are corrected for multiplicity by Bonferroni
(``level = alpha / (2 * tests)``). Rationale: docs/audit.md.

References
----------
.. [CP34] C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits illustrated
   in the case of the binomial. Biometrika 26(4), 1934.
.. [DWWZK18] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. Detecting violations of
   differential privacy. CCS 2018.
.. [BGDCV21] B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev. DP-Sniper: black-box
   discovery of differential privacy violations using classifiers. IEEE S&P 2021.
.. [JUO20] M. Jagielski, J. Ullman, A. Oprea. Auditing differentially private machine
   learning: how private is private SGD? NeurIPS 2020.
.. [NSTPC21] M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini. Adversary
   instantiation: lower bounds for differentially private machine learning. IEEE S&P 2021.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import betaincinv

from privpub.audit.statistics import Columns
from privpub.testing import clopper_pearson

__all__ = ["Event", "Candidate", "candidate_events", "rescored", "epsilon_lower_bound",
           "projected_bound", "SCREEN_LEVEL"]

#: Confidence of the plug-in probabilities when a first batch ranks the events: a lower
#: (upper) bound at this level stands in for ``P[M(D) in E]`` (``P[M(D') in E]``), so that
#: an event seen a few times is not preferred to a well-supported one.
SCREEN_LEVEL = 0.2
_THRESHOLDS = np.arange(1, 32) / 32
_COMPARE = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal}
_MAX_SET = 12
_MAX_VALUES = 64


@dataclass(frozen=True)
class Event:
    """An event on one statistic: ``feature > threshold`` (``>=``, ``<``, ``<=``) or
    ``feature in values`` (keys, see :func:`privpub.audit.statistics.key_of`)."""

    feature: str
    op: str
    threshold: float = math.nan
    values: tuple[str, ...] = ()

    def __call__(self, cols: Columns) -> np.ndarray:
        if self.op == "in":
            return np.isin(cols.keys(self.feature).astype(str), np.asarray(self.values, dtype=str))
        x = cols.numeric(self.feature)
        with np.errstate(invalid="ignore"):
            hit = _COMPARE[self.op](x, self.threshold)
        return hit & ~np.isnan(x)

    def describe(self) -> str:
        if self.op == "in":
            shown = ", ".join(self.values[:6]) + (", ..." if len(self.values) > 6 else "")
            return f"{self.feature} in {{{shown}}}"
        return f"{self.feature} {self.op} {self.threshold:.10g}"

    def to_json(self) -> dict:
        doc = {"feature": self.feature, "op": self.op}
        if self.op == "in":
            doc["values"] = list(self.values)
        else:
            doc["threshold"] = self.threshold
        return doc

    @classmethod
    def from_json(cls, doc: dict) -> Event:
        return cls(doc["feature"], doc["op"], float(doc.get("threshold", math.nan)),
                   tuple(doc.get("values", ())))


@dataclass(frozen=True)
class Candidate:
    """An event chosen on a first batch, oriented: the test is
    ``P[M(first) in E] <= e^eps P[M(second) in E]`` with ``first = D`` unless ``swapped``."""

    score: float
    event: Event
    swapped: bool
    counts: tuple[int, int, int, int] = field(default=(0, 0, 0, 0))


# --------------------------------------------------------------------------- bounds
def epsilon_lower_bound(c1: int, n1: int, c2: int, n2: int, level: float) -> float:
    """``max(0, log(low1 / high2))`` with one-sided Clopper-Pearson bounds at ``level``
    each: with probability at least ``1 - 2 level`` the mechanism is not ``eps``-DP for any
    smaller ``eps`` (0 when the data show nothing)."""
    low, _ = clopper_pearson(int(c1), int(n1), level)
    _, high = clopper_pearson(int(c2), int(n2), level)
    if low <= 0.0:
        return 0.0
    return max(0.0, math.log(low / high))


def _plug_in(c1, n1, c2, n2) -> tuple[np.ndarray, np.ndarray]:
    c1, c2 = np.asarray(c1, float), np.asarray(c2, float)
    p1 = np.where(c1 > 0, betaincinv(np.maximum(c1, 1e-9), n1 - c1 + 1, SCREEN_LEVEL), 0.0)
    p2 = np.where(c2 < n2, betaincinv(c2 + 1, np.maximum(n2 - c2, 1e-9), 1 - SCREEN_LEVEL),
                  1.0)
    return p1, p2


def projected_bound(c1, n1, c2, n2, n_measure: int, level: float) -> np.ndarray:
    """The bound a measurement of ``n_measure`` runs per input is expected to give, the
    probabilities taken from a first batch (``c1`` of ``n1``, ``c2`` of ``n2``) at their
    :data:`SCREEN_LEVEL` bounds; ``-inf`` where it gives nothing."""
    p1, p2 = _plug_in(c1, n1, c2, n2)
    k1, k2 = p1 * n_measure, p2 * n_measure
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(k1 > 0, betaincinv(np.maximum(k1, 1e-9), n_measure - k1 + 1, level), 0.0)
        high = np.where(k2 < n_measure,
                        betaincinv(k2 + 1, np.maximum(n_measure - k2, 1e-9), 1 - level), 1.0)
        out = np.log(low / high)
    return np.where(np.isfinite(out), out, -np.inf)


# --------------------------------------------------------------------------- candidates
def _threshold_events(name, xa, xb):
    """(events, counts under a, counts under b) for ``> t``, ``<= t``, ``>= t``, ``< t``
    (the last two keep an atom at ``t``, e.g. a clipped score's maximum, on the upper side)."""
    fa, fb = np.sort(xa[np.isfinite(xa)]), np.sort(xb[np.isfinite(xb)])
    pooled = np.concatenate([fa, fb])
    if pooled.size == 0:
        return [], np.zeros(0), np.zeros(0)
    distinct = np.unique(pooled)
    cuts = distinct if distinct.size <= 32 else np.unique(
        np.quantile(pooled, _THRESHOLDS, method="inverted_cdf"))
    above_a = fa.size - np.searchsorted(fa, cuts, side="right")
    above_b = fb.size - np.searchsorted(fb, cuts, side="right")
    from_a = fa.size - np.searchsorted(fa, cuts, side="left")
    from_b = fb.size - np.searchsorted(fb, cuts, side="left")
    events = [Event(name, op, float(t)) for op in (">", "<=", ">=", "<") for t in cuts]
    ca = np.concatenate([above_a, fa.size - above_a, from_a, fa.size - from_a])
    cb = np.concatenate([above_b, fb.size - above_b, from_b, fb.size - from_b])
    return events, ca, cb


def _set_events(name, ka, kb):
    """(events, counts under a, counts under b) for prefix sets of values by ratio, in
    both orders."""
    keys = np.concatenate([ka, kb]).astype(str)
    uniq, inverse = np.unique(keys, return_inverse=True)
    if uniq.size < 2 or uniq.size > keys.size / 4:  # not a discrete statistic
        return [], np.zeros(0), np.zeros(0)
    ca = np.bincount(inverse[: ka.size], minlength=uniq.size)
    cb = np.bincount(inverse[ka.size:], minlength=uniq.size)
    # values seen at least 3 times, the most frequent first: a rarer one cannot be rated
    keep = sorted((i for i in range(uniq.size) if ca[i] + cb[i] >= 3),
                  key=lambda i: (-(ca[i] + cb[i]), uniq[i]))[:_MAX_VALUES]
    if not keep:
        return [], np.zeros(0), np.zeros(0)
    keep = np.array(sorted(keep))
    uniq, ca, cb = uniq[keep], ca[keep], cb[keep]
    ratio = np.log((ca + 0.5) / (ka.size + 1)) - np.log((cb + 0.5) / (kb.size + 1))
    events, out_a, out_b = [], [], []
    for sign in (1, -1):
        order = sorted(range(uniq.size), key=lambda i: (-sign * ratio[i], uniq[i]))
        order = order[: min(_MAX_SET, max(1, uniq.size - 1))]
        run_a = np.cumsum(ca[order])
        run_b = np.cumsum(cb[order])
        for j in range(len(order)):
            events.append(Event(name, "in", values=tuple(str(uniq[i]) for i in order[: j + 1])))
            out_a.append(run_a[j])
            out_b.append(run_b[j])
    return events, np.array(out_a), np.array(out_b)


def candidate_events(name: str, a: Columns, b: Columns, *, n_measure: int,
                     level: float) -> list[Candidate]:
    """The best event on statistic ``name`` in each orientation, by the bound it is
    expected to give on ``n_measure`` fresh runs at ``level`` (:func:`projected_bound`)."""
    events, ca, cb = [], [], []
    numeric = a.is_numeric(name) and b.is_numeric(name)
    if numeric:
        xa, xb = a.numeric(name), b.numeric(name)
        e, x, y = _threshold_events(name, xa, xb)
        events += e
        ca.append(x)
        cb.append(y)
    if not numeric or np.unique(np.concatenate([a.numeric(name), b.numeric(name)])).size <= 12:
        e, x, y = _set_events(name, a.keys(name), b.keys(name))
        events += e
        ca.append(x)
        cb.append(y)
    if not events:
        return []
    ca, cb = np.concatenate(ca), np.concatenate(cb)
    out = []
    for swapped, (c1, n1, c2, n2) in ((False, (ca, a.n, cb, b.n)), (True, (cb, b.n, ca, a.n))):
        score = projected_bound(c1, n1, c2, n2, n_measure, level)
        best = int(np.argmax(score))  # first best: deterministic
        if np.isfinite(score[best]):
            out.append(Candidate(float(score[best]), events[best], swapped,
                                 (int(c1[best]), int(n1), int(c2[best]), int(n2))))
    return out


def rescored(candidate: Candidate, a: Columns, b: Columns, *, n_measure: int,
             level: float) -> Candidate:
    """``candidate`` (chosen on one half of a first batch) scored on the other half
    (``a`` of ``D``, ``b`` of ``D'``): an honest estimate of what it will measure, free of
    the optimism of having picked the best of many events."""
    first, second = (b, a) if candidate.swapped else (a, b)
    c1 = int(np.count_nonzero(candidate.event(first)))
    c2 = int(np.count_nonzero(candidate.event(second)))
    score = float(projected_bound(c1, first.n, c2, second.n, n_measure, level))
    return Candidate(score, candidate.event, candidate.swapped, (c1, first.n, c2, second.n))
