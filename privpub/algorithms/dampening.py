"""Local dampening: private selection with local sensitivity (farias2021 Sec 3-4).

The exponential mechanism (:func:`privpub.noise.exponential_mechanism`) selects an element
``r`` with probability proportional to ``exp(eps u(x, r) / (2 Delta u))``, ``Delta u`` the
*global* sensitivity of the utility. Local dampening replaces ``u / Delta u`` by a dampened
utility whose sensitivity is 1 and which is built from *element local sensitivities*
([FBF+21] Definitions 3.1-3.8):

- An **admissible function** ``delta(x, t, r)`` (Definition 3.3) bounds the element local
  sensitivity at distance ``t``: ``delta(x, 0, r) >= LS(x, 0, r)`` and
  ``delta(x, t + 1, r) >= delta(y, t, r)`` for all neighbours ``y`` of ``x``. Here it is a
  callable ``delta(ts) -> array (len(ts), n_elements)`` for an int array of distances, or a
  2-D array ``(n_elements, T)`` of ``delta(x, t, r)`` for ``t < T`` (then ``delta = Delta``
  beyond, which needs ``global_sensitivity``).
- The **dampening function** (Definition 3.6) is the piecewise-linear interpolation of the
  points ``(b(i), i)``, ``b(i) = sum_{j < i} delta(x, j, r)`` and ``b(-i) = -b(i)``:
  :func:`dampen`. With a bound ``Delta`` the function used is ``min(delta, Delta)``
  (Lemma 3.5): once it reaches ``Delta`` the rest is linear with slope ``1 / Delta``.
- The **local dampening mechanism** (Definition 3.8) is the exponential mechanism with
  sensitivity 1 on the dampened utility: :func:`local_dampening`. With
  ``delta = Delta`` it *is* the exponential mechanism (tested).
- The **shifted local dampening mechanism** (Definition 4.3) is the limit ``s -> inf`` of
  local dampening on ``u - s``. For a bounded ``delta`` that reaches ``Delta`` the limit is
  closed-form: with ``P(r) = sum_{t >= 0} (Delta - min(delta(x, t, r), Delta))``,
  ``D_{u - s}(x, r) = -s / Delta + (u(x, r) - P(r)) / Delta`` for all large ``s``, and the
  common ``-s / Delta`` cancels in the normalisation. So the mechanism is the exponential
  mechanism on the score ``u - P`` with sensitivity ``Delta``:
  :func:`shifted_local_dampening`. (When ``delta`` approaches ``Delta`` only in the limit,
  every ``P(r)`` diverges but their differences may converge: pass the convergent
  ``penalty`` directly, e.g. the Gini criterion of ``mechanisms/diffpid3.py``.)
- **Delta replacement** (Sec 4.2) ``max_r' delta(x, t, r')`` removes the inversion problem at
  some cost in accuracy: :func:`replace_delta`.

Sampling uses the Gumbel-max trick and probabilities log-sum-exp, like the exponential
mechanism, so huge utilities (EBC reaches 4e7 on Github) never overflow.

References
----------
.. [FBF+21] V. Farias, F. Brito, C. Flynn, J. Machado, S. Majumdar, D. Srivastava. Local
   Dampening: Differential Privacy for Non-numeric Queries via Local Sensitivity. PVLDB
   14(4), 2021. Definitions 3.3, 3.6, 3.8, 4.3; Lemmas 3.5, 3.7, 4.5; Sec 4.2.
.. [MT07] F. McSherry, K. Talwar. Mechanism design via differential privacy. FOCS 2007.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.noise import gumbel_noise
from privpub.validation import check_epsilon

__all__ = [
    "dampen",
    "dampening_penalty",
    "replace_delta",
    "as_delta",
    "local_dampening",
    "local_dampening_probabilities",
    "local_dampening_mechanism",
    "shifted_local_dampening_scores",
    "shifted_local_dampening",
    "shifted_local_dampening_probabilities",
    "gumbel_top_k",
]

#: Give up on an unbounded ``delta`` after this many distances (a bound ends the search).
DEFAULT_MAX_STEPS = 10_000_000
#: :func:`dampen` asks ``delta`` for the distances in blocks of 16, 32, ... up to 2^16 and
#: sums each block on its own (``b(i)`` = the sum before the block + a cumulative sum in it);
#: a compiled specialisation that must give the same bits (``mechanisms/diffpid3.py``) walks
#: the same blocks.
DAMPEN_FIRST_BLOCK = 16
MAX_BLOCK = 1 << 16


# --------------------------------------------------------------------------- delta
def _check_bound(global_sensitivity) -> float | None:
    if global_sensitivity is None:
        return None
    try:
        g = float(global_sensitivity)
    except (TypeError, ValueError):
        raise PrivpubError(
            f"global_sensitivity must be a number, got {global_sensitivity!r}"
        ) from None
    if not (g > 0 and np.isfinite(g)):
        raise PrivpubError(f"global_sensitivity must be a finite number > 0, got {g}")
    return g


def as_delta(delta, n_elements: int, global_sensitivity: float | None = None) -> Callable:
    """Normalise ``delta`` to a callable ``ts -> (len(ts), n_elements)`` array (see module)."""
    if callable(delta):

        def fn(ts):
            out = np.asarray(delta(np.asarray(ts, dtype=np.int64)), dtype=np.float64)
            if out.shape != (len(ts), n_elements):
                raise PrivpubError(
                    f"delta(ts) must return shape ({len(ts)}, {n_elements}), got {out.shape}"
                )
            return out

        return fn
    table = np.asarray(delta, dtype=np.float64)
    if table.ndim == 1 and table.size == n_elements:  # delta(x, t, r) independent of t
        table = table[:, None]
        tail = table[:, 0]
    else:
        tail = None
    if table.ndim != 2 or table.shape[0] != n_elements:
        raise PrivpubError(
            f"delta must be a callable or an array of shape ({n_elements}, T), got {table.shape}"
        )
    if tail is None and global_sensitivity is None:
        raise PrivpubError("a delta table needs global_sensitivity for t beyond its columns")
    fill = tail if tail is not None else np.full(n_elements, float(global_sensitivity))

    def fn(ts):
        ts = np.asarray(ts, dtype=np.int64)
        out = np.empty((ts.size, n_elements))
        inside = ts < table.shape[1]
        out[inside] = table[:, ts[inside]].T
        out[~inside] = fill
        return out

    return fn


def _check_delta_values(block: np.ndarray, prev_last: np.ndarray | None) -> None:
    if np.isnan(block).any() or (block < 0).any():
        raise PrivpubError("delta must be a non-negative number for every distance and element")
    steps = np.diff(block, axis=0)
    if (steps < -1e-9 * np.abs(block[1:]).clip(1)).any() or (
        prev_last is not None and (block[0] < prev_last - 1e-9 * np.abs(prev_last).clip(1)).any()
    ):
        raise PrivpubError(
            "delta must be non-decreasing in t (an admissible function is: Definition 3.3 "
            "with y = x)"
        )


def replace_delta(delta, n_elements: int, global_sensitivity: float | None = None) -> Callable:
    """Delta replacement (Sec 4.2): ``max_r' delta(x, t, r')`` for every element.

    Admissible when ``delta`` is (Lemma 4.5); every element is then dampened on the same
    scale, so the dampened utility keeps the order of the utility (no inversion).
    """
    fn = as_delta(delta, n_elements, global_sensitivity)

    def replaced(ts):
        block = fn(ts)
        return np.repeat(block.max(axis=1, keepdims=True), n_elements, axis=1)

    return replaced


# --------------------------------------------------------------------------- dampening
def _distance_blocks(first: int, max_steps: int):
    """The distances ``t = 0, 1, ... < max_steps`` in blocks (int arrays) of ``first``,
    ``2 first``, ... up to ``MAX_BLOCK`` distances: a search over ``t`` asks for the next block
    until it is done, and gives up when none is left."""
    t0, size = 0, first
    while t0 < max_steps:
        ts = np.arange(t0, min(t0 + size, max_steps))
        yield ts
        t0 = ts[-1] + 1
        size = min(size * 2, MAX_BLOCK)


def dampen(
    utility,
    delta,
    *,
    global_sensitivity: float | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> np.ndarray:
    """The dampened utility ``D_{u, delta}(x, r)`` of Definition 3.6, for every element.

    ``D(u) = i + (u - b(i)) / (b(i + 1) - b(i))`` with ``i`` the integer such that
    ``u in [b(i), b(i + 1))``, ``b(i) = sum_{j < i} delta(x, j, r)``, ``b(-i) = -b(i)``. Where
    ``delta`` is 0 the interpolation has a vertical step; the definition's half-open
    intervals take its upper end.

    Parameters
    ----------
    utility : array-like, shape (n,)
        ``u(x, r)`` for every element ``r``.
    delta : callable or array
        The admissible function (see the module docstring).
    global_sensitivity : float, optional
        ``Delta u``: use the bounded ``min(delta, Delta u)`` (Lemma 3.5), which also ends
        the search for large utilities in closed form.
    max_steps : int
        Refuse an unbounded ``delta`` that has not reached ``|u|`` after this many distances.

    Returns
    -------
    ndarray, shape (n,)
    """
    u = np.asarray(utility, dtype=np.float64)
    if u.ndim != 1:
        raise PrivpubError("utility must be a 1-D array, one score per element")
    if not np.isfinite(u).all():
        raise PrivpubError("utility scores must be finite")
    n = u.size
    bound = _check_bound(global_sensitivity)
    fn = as_delta(delta, n, bound)
    mag = np.abs(u)
    neg = u < 0
    out = np.full(n, np.nan)
    active = np.arange(n)
    b_prev = np.zeros(n)  # b(ts[0]) of the next block, for every element
    last = None
    blocks = _distance_blocks(DAMPEN_FIRST_BLOCK, max_steps)
    while active.size:
        ts = next(blocks, None)
        if ts is None:
            raise PrivpubError(
                f"dampening did not reach |u| = {mag[active].max():.6g} within {max_steps} "
                "distances: give global_sensitivity (the bounded delta of Lemma 3.5)"
            )
        block = fn(ts)[:, active]  # (T, m)
        _check_delta_values(block, None if last is None else last[active])
        if bound is not None:
            block = np.minimum(block, bound)
        last_full = np.zeros(n) if last is None else last
        last_full[active] = block[-1]
        last = last_full
        # b(ts[0] + j + 1) for j = 0..T-1
        bs = b_prev[active][None, :] + np.cumsum(block, axis=0)
        m = mag[active]
        # positive u: first j with b(ts[0] + j + 1) > m; negative u: first with >= m
        over = np.where(neg[active][None, :], bs >= m[None, :], bs > m[None, :])
        found = over.any(axis=0)
        j = np.argmax(over, axis=0)
        idx = active[found]
        jf = j[found]
        lo = np.where(jf > 0, bs[jf - 1, np.flatnonzero(found)], b_prev[idx])
        hi = bs[jf, np.flatnonzero(found)]
        width = hi - lo
        step = ts[0] + jf  # i
        frac = np.where(width > 0, (mag[idx] - lo) / np.where(width > 0, width, 1.0), 0.0)
        out[idx] = step + frac
        # bounded: an element whose delta reached the bound continues linearly
        rest = ~found
        if bound is not None and rest.any():
            capped = block[-1, rest] >= bound
            if capped.any():
                ids = active[rest][capped]
                b_end = bs[-1, rest][capped]
                out[ids] = ts[-1] + 1 + (mag[ids] - b_end) / bound
                rest_idx = np.flatnonzero(rest)[capped]
                rest[rest_idx] = False
        b_prev[active[rest]] = bs[-1, rest]
        active = active[rest]
    return np.where(neg, -out, out)


def dampening_penalty(
    delta,
    n_elements: int,
    *,
    global_sensitivity: float,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> np.ndarray:
    """``P(r) = sum_{t >= 0} (Delta - min(delta(x, t, r), Delta))`` for every element.

    The shifted local dampening mechanism (Definition 4.3) in closed form subtracts it from
    the utility (see the module docstring). Requires ``delta`` to reach ``Delta`` within
    ``max_steps`` distances (for admissible functions that reach it only in the limit, pass
    the convergent penalty differences to :func:`shifted_local_dampening` directly).
    """
    bound = _check_bound(global_sensitivity)
    if bound is None:
        raise PrivpubError("the shifted mechanism needs global_sensitivity (Lemma 3.5)")
    fn = as_delta(delta, n_elements, bound)
    pen = np.zeros(n_elements)
    active = np.arange(n_elements)
    blocks, last = _distance_blocks(64, max_steps), None
    while active.size:
        ts = next(blocks, None)
        if ts is None:
            raise PrivpubError(
                f"delta did not reach the global sensitivity {bound:.6g} within {max_steps} "
                "distances: the shifted limit needs a bounded delta that reaches it"
            )
        block = fn(ts)[:, active]
        _check_delta_values(block, last)
        block = np.minimum(block, bound)
        pen[active] += np.sum(bound - block, axis=0)
        done = block[-1] >= bound
        last = block[-1][~done]
        active = active[~done]
    return pen


# --------------------------------------------------------------------------- selection
def _spend(ledger, epsilon, label, sensitivity, primitive):
    if ledger is not None:
        if not isinstance(ledger, PrivacyLedger):
            raise PrivpubError(f"ledger must be a PrivacyLedger, got {type(ledger).__name__}")
        ledger.spend(epsilon, label=label, sensitivity=sensitivity, primitive=primitive)


def _logits(scores, epsilon, scale) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.size == 0:
        raise PrivpubError("selection needs a non-empty 1-D score vector")
    if np.isnan(scores).any() or (scores == np.inf).any():
        raise PrivpubError("scores must not be NaN or +inf")
    if np.all(scores == -np.inf):
        raise PrivpubError("every candidate has score -inf")
    return check_epsilon(epsilon) * scores / (2.0 * scale)


def gumbel_top_k(logits, k: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``k`` draws *without replacement* with probabilities ``∝ exp(logits)``,
    in draw order: the top ``k`` of ``logits + Gumbel`` (the Gumbel-top-k trick, exactly the
    law of drawing one at a time from the remaining candidates)."""
    logits = np.asarray(logits, dtype=np.float64)
    if not 1 <= k <= logits.size:
        raise PrivpubError(f"cannot draw {k} of {logits.size} candidates")
    keys = logits + gumbel_noise(rng=rng, size=logits.size)
    if k < logits.size:
        part = np.argpartition(-keys, k - 1)[:k]
    else:
        part = np.arange(logits.size)
    return part[np.argsort(-keys[part], kind="stable")]


def local_dampening_probabilities(dampened, *, epsilon: float) -> np.ndarray:
    """``P[r] ∝ exp(eps D(x, r) / 2)`` (Definition 3.8), by log-sum-exp."""
    logits = _logits(dampened, epsilon, 1.0)
    return np.exp(logits - logsumexp(logits))


def local_dampening(
    dampened,
    *,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
    label: str = "local dampening",
) -> int:
    """Index chosen by the local dampening mechanism (Definition 3.8) from dampened scores
    (:func:`dampen`): the exponential mechanism with sensitivity 1, by Gumbel-max."""
    logits = _logits(dampened, epsilon, 1.0)
    choice = int(np.argmax(logits + gumbel_noise(rng=rng, size=logits.size)))
    _spend(ledger, epsilon, label, 1.0, "local dampening")
    return choice


def local_dampening_mechanism(
    utility,
    delta,
    *,
    epsilon: float,
    rng: np.random.Generator,
    global_sensitivity: float | None = None,
    ledger: PrivacyLedger | None = None,
    label: str = "local dampening",
) -> int:
    """Dampen ``utility`` with ``delta`` (:func:`dampen`) and select (:func:`local_dampening`).

    Theorem 3.10: epsilon-DP when ``delta`` is admissible.
    """
    check_epsilon(epsilon)
    d = dampen(utility, delta, global_sensitivity=global_sensitivity)
    return local_dampening(d, epsilon=epsilon, rng=rng, ledger=ledger, label=label)


def shifted_local_dampening_scores(utility, penalty, *, global_sensitivity: float) -> np.ndarray:
    """``(u - P) / Delta``: the dampened utility of ``u - s`` plus ``s / Delta``, for every
    ``s`` beyond the point where every element's ``delta`` has reached ``Delta``."""
    bound = _check_bound(global_sensitivity)
    if bound is None:
        raise PrivpubError("the shifted mechanism needs global_sensitivity")
    u = np.asarray(utility, dtype=np.float64)
    p = np.asarray(penalty, dtype=np.float64)
    if u.shape != p.shape or u.ndim != 1:
        raise PrivpubError(f"utility {u.shape} and penalty {p.shape} must be equal 1-D shapes")
    if not (np.isfinite(u).all() and np.isfinite(p).all()):
        raise PrivpubError("utility and penalty must be finite")
    return (u - p) / bound


def shifted_local_dampening_probabilities(
    utility, *, epsilon: float, global_sensitivity: float, penalty=None, delta=None
) -> np.ndarray:
    """Selection probabilities of the shifted local dampening mechanism (Definition 4.3)."""
    penalty = _penalty(utility, penalty, delta, global_sensitivity)
    scores = shifted_local_dampening_scores(
        utility, penalty, global_sensitivity=global_sensitivity
    )
    return local_dampening_probabilities(scores, epsilon=epsilon)


def _penalty(utility, penalty, delta, global_sensitivity):
    if (penalty is None) == (delta is None):
        raise PrivpubError("give exactly one of penalty and delta")
    if penalty is None:
        n = np.asarray(utility).size
        penalty = dampening_penalty(delta, n, global_sensitivity=global_sensitivity)
    return penalty


def shifted_local_dampening(
    utility,
    *,
    epsilon: float,
    rng: np.random.Generator,
    global_sensitivity: float,
    penalty=None,
    delta=None,
    ledger: PrivacyLedger | None = None,
    label: str = "shifted local dampening",
) -> int:
    """Index chosen by the shifted local dampening mechanism (Definition 4.3, Theorem 4.4),
    the ``s -> inf`` limit in closed form (see the module docstring).

    Give the admissible ``delta`` (bounded by ``global_sensitivity``, which it must reach)
    or its ``penalty`` ``P(r) = sum_t (Delta - min(delta(x, t, r), Delta))`` directly (any
    common additive constant may be dropped).
    """
    check_epsilon(epsilon)
    penalty = _penalty(utility, penalty, delta, global_sensitivity)
    scores = shifted_local_dampening_scores(
        utility, penalty, global_sensitivity=global_sensitivity
    )
    logits = _logits(scores, epsilon, 1.0)
    choice = int(np.argmax(logits + gumbel_noise(rng=rng, size=logits.size)))
    _spend(ledger, epsilon, label, 1.0, "shifted local dampening")
    return choice
