"""Noise primitives and the exponential mechanism: the one place privpub draws DP noise.

Every function takes an explicit :class:`numpy.random.Generator`. The ``*_mechanism``
functions also take an optional :class:`~privpub.ledger.PrivacyLedger` and spend
``epsilon`` through it, recording the sensitivity, so a mechanism built from them cannot
silently overspend.

**The noise-free limit.** Inside ``with noise_off():`` every primitive here draws zero noise
(the exponential mechanism picks its best candidate, ties to the lowest index) while the
mechanism runs through exactly the same code, budget split and post-processing: what
remains is the error that is not due to privacy (is a gap noise or structure?).
The runner uses it for the noise-free twins of DP cells; such releases are not private.

References
----------
.. [DMNS06] C. Dwork, F. McSherry, K. Nissim, A. Smith. Calibrating noise to sensitivity in
   private data analysis. TCC 2006 (Laplace mechanism).
.. [GRS09] A. Ghosh, T. Roughgarden, M. Sundararajan. Universally utility-maximizing privacy
   mechanisms. STOC 2009 (two-sided geometric mechanism).
.. [MT07] F. McSherry, K. Talwar. Mechanism design via differential privacy. FOCS 2007
   (exponential mechanism).
.. [NRS07] K. Nissim, S. Raskhodnikova, A. Smith. Smooth sensitivity and sampling in private
   data analysis. STOC 2007 (heavy-tailed noise for smooth sensitivity, Lemma 2.7).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math

import numpy as np
from scipy.special import logsumexp

from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.validation import check_epsilon

__all__ = [
    "noise_off",
    "is_noise_off",
    "gumbel_noise",
    "flips",
    "flip_count",
    "uniform_integers",
    "laplace_noise",
    "gaussian_noise",
    "geometric_noise",
    "cauchy_noise",
    "heavy_tailed_noise",
    "laplace_mechanism",
    "weighted_laplace_mechanism",
    "geometric_mechanism",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
]


def _check_sensitivity(sensitivity) -> float:
    try:
        sensitivity = float(sensitivity)
    except (TypeError, ValueError):
        raise PrivpubError(f"sensitivity must be a number, got {sensitivity!r}") from None
    if not (sensitivity > 0 and math.isfinite(sensitivity)):
        raise PrivpubError(f"sensitivity must be a finite number > 0, got {sensitivity}")
    return sensitivity


def _check_scale(scale) -> float:
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise PrivpubError(f"noise scale must be a number, got {scale!r}") from None
    if not (scale > 0 and np.isfinite(scale)):
        raise PrivpubError(f"noise scale must be a finite number > 0, got {scale}")
    return scale


_NOISE_OFF = contextvars.ContextVar("privpub_noise_off", default=False)


@contextlib.contextmanager
def noise_off():
    """Within this block every primitive of this module draws zero noise (see the module
    docstring); the release is the mechanism's noise-free limit, not a private one."""
    token = _NOISE_OFF.set(True)
    try:
        yield
    finally:
        _NOISE_OFF.reset(token)


def is_noise_off() -> bool:
    """True inside :func:`noise_off`."""
    return _NOISE_OFF.get()


def _zeros(size, dtype=float):
    return np.zeros(size, dtype=dtype) if size is not None else dtype(0)


# --------------------------------------------------------------------------- raw noise
def gumbel_noise(*, rng: np.random.Generator, size=None):
    """Standard Gumbel noise (the Gumbel-max trick of exponential-mechanism samplers)."""
    return _zeros(size) if is_noise_off() else rng.gumbel(size=size)


def flips(probability: float, *, rng: np.random.Generator, size: int) -> np.ndarray:
    """Booleans, each True with ``probability``: which entries randomized response flips."""
    if is_noise_off():
        return np.zeros(size, dtype=bool)
    return rng.random(size) < probability


def flip_count(n: int, probability: float, *, rng: np.random.Generator) -> int:
    """How many of ``n`` entries randomized response flips (Binomial(n, probability))."""
    return 0 if is_noise_off() or n <= 0 else int(rng.binomial(n, probability))


def uniform_integers(low: int, high: int, *, rng: np.random.Generator, size=None):
    """Uniform integers in ``[low, high)``: randomness a privacy proof relies on that is not
    additive noise (the random cutoff of Kasiviswanathan et al.'s Truncation; the uniform
    cut inside a group of equally scored candidates of an exponential mechanism, qardaji2012
    RPS). ``low`` under :func:`noise_off` (the lowest candidate, as the exponential
    mechanism's ties).
    With noise on it draws exactly ``rng.integers(low, high, size=size)``.
    """
    if is_noise_off():
        return int(low) if size is None else np.full(size, low, dtype=np.int64)
    return rng.integers(low, high, size=size)


def laplace_noise(*, sensitivity: float, epsilon: float, rng: np.random.Generator, size=None):
    """Laplace noise with scale ``sensitivity / epsilon`` [DMNS06]."""
    scale = _check_sensitivity(sensitivity) / check_epsilon(epsilon)
    return _zeros(size) if is_noise_off() else rng.laplace(0.0, scale, size=size)


def gaussian_noise(*, sigma: float, rng: np.random.Generator, size=None):
    """Gaussian noise ``N(0, sigma^2)``: on a query of L2 sensitivity 1 it is
    ``1 / (2 sigma^2)``-zCDP [BS16 Prop 1.6] (:class:`privpub.ledger.ZCDPBudget`)."""
    return _zeros(size) if is_noise_off() else rng.normal(0.0, _check_scale(sigma), size=size)


def geometric_noise(*, sensitivity: float, epsilon: float, rng: np.random.Generator, size=None):
    """Two-sided geometric noise, P[Z = z] proportional to ``alpha**|z|`` with
    ``alpha = exp(-epsilon / sensitivity)`` [GRS09]: the integer analogue of Laplace.

    Sampled as the difference of two i.i.d. geometric variables (failures before success
    with success probability ``1 - alpha``), which has exactly that law.
    """
    alpha = np.exp(-check_epsilon(epsilon) / _check_sensitivity(sensitivity))
    if is_noise_off():
        return _zeros(size, np.int64)
    p = 1.0 - alpha
    # numpy's geometric counts trials (>= 1); subtracting 1 from both cancels.
    return (rng.geometric(p, size=size) - rng.geometric(p, size=size)).astype(np.int64)


def cauchy_noise(*, scale: float, rng: np.random.Generator, size=None):
    """Standard Cauchy noise times ``scale`` (heavy-tailed noise with gamma = 2 [NRS07])."""
    scale = _check_scale(scale)
    return _zeros(size) if is_noise_off() else scale * rng.standard_cauchy(size=size)


@functools.lru_cache(maxsize=8)
def _heavy_tail_envelope(gamma: float) -> float:
    """max_z (1 + z^2) / (1 + |z|^gamma), the rejection constant against a Cauchy proposal."""
    z = np.linspace(0.0, 20.0, 200_001)
    return float(np.max((1 + z**2) / (1 + z**gamma))) * 1.001


def heavy_tailed_noise(*, scale: float, gamma: float = 4.0, rng: np.random.Generator, size=None):
    """Noise with density proportional to ``1 / (1 + |z/scale|**gamma)``, ``gamma >= 2``.

    This is the admissible noise family of [NRS07] (Lemma 2.7) for smooth sensitivity:
    adding ``(2 (gamma + 1) S(x) / epsilon) * Z`` with a ``beta``-smooth upper bound ``S`` on
    local sensitivity, ``beta = epsilon / (2 (gamma + 1))``, is epsilon-DP. ``gamma = 2`` is
    the Cauchy distribution. Sampled exactly by rejection from a Cauchy proposal.
    """
    scale = _check_scale(scale)
    gamma = float(gamma)
    if gamma < 2:
        raise PrivpubError(f"heavy-tailed noise needs gamma >= 2, got {gamma}")
    if gamma == 2 or is_noise_off():
        return cauchy_noise(scale=scale, rng=rng, size=size)
    m = _heavy_tail_envelope(gamma)
    n = int(np.prod(size)) if size is not None else 1
    out = np.empty(0)
    while out.size < n:
        z = rng.standard_cauchy(2 * (n - out.size) + 16)
        accept = rng.random(z.size) * m < (1 + z**2) / (1 + np.abs(z) ** gamma)
        out = np.concatenate([out, z[accept]])
    out = scale * out[:n]
    return out.reshape(size) if size is not None else float(out[0])


# --------------------------------------------------------------------------- mechanisms
def _spend(ledger, epsilon, label, sensitivity, primitive):
    if ledger is not None:
        if not isinstance(ledger, PrivacyLedger):
            raise PrivpubError(f"ledger must be a PrivacyLedger, got {type(ledger).__name__}")
        ledger.spend(epsilon, label=label, sensitivity=sensitivity, primitive=primitive)


def laplace_mechanism(
    values,
    *,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
    label: str = "laplace",
):
    """``values + Lap(sensitivity / epsilon)``, spending ``epsilon`` on the ledger.

    ``sensitivity`` is the L1 sensitivity of the whole vector ``values``.
    """
    values = np.asarray(values, dtype=float)
    noise = laplace_noise(sensitivity=sensitivity, epsilon=epsilon, rng=rng, size=values.shape)
    _spend(ledger, epsilon, label, sensitivity, "laplace")
    return values + noise


def weighted_laplace_mechanism(
    values,
    *,
    weights,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
    label: str = "weighted laplace",
):
    """``values + Lap(weights * sensitivity / epsilon)`` coordinate-wise, spending ``epsilon``.

    ``sensitivity`` is the *weighted* L1 sensitivity ``max ||(f(D) - f(D')) / weights||_1``
    over neighbours: the density ratio of the output is then at most
    ``exp(epsilon * sum_i |f_i(D) - f_i(D')| / (weights_i sensitivity)) <= exp(epsilon)``.
    With all weights 1 this is :func:`laplace_mechanism`. ``weights`` must be public
    (computed without the data), finite and > 0, one per value.
    """
    values = np.asarray(values, dtype=float)
    weights = np.broadcast_to(np.asarray(weights, dtype=float), values.shape)
    if weights.size and not (np.all(np.isfinite(weights)) and weights.min() > 0):
        raise PrivpubError("weighted Laplace needs finite weights > 0")
    scale = _check_sensitivity(sensitivity) / check_epsilon(epsilon)
    noise = laplace_noise(sensitivity=1.0, epsilon=1.0, rng=rng, size=values.shape)
    noise = noise * (weights * scale)
    _spend(ledger, epsilon, label, sensitivity, "weighted laplace")
    return values + noise


def geometric_mechanism(
    values,
    *,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
    label: str = "geometric",
):
    """Integer ``values`` plus two-sided geometric noise, spending ``epsilon`` on the ledger."""
    values = np.asarray(values)
    if not np.issubdtype(values.dtype, np.integer):
        raise PrivpubError("the geometric mechanism needs integer values")
    noise = geometric_noise(sensitivity=sensitivity, epsilon=epsilon, rng=rng, size=values.shape)
    _spend(ledger, epsilon, label, sensitivity, "geometric")
    return values + noise


def _em_logits(quality, sensitivity, epsilon, monotonic):
    quality = np.asarray(quality, dtype=float)
    if quality.ndim != 1 or quality.size == 0:
        raise PrivpubError("the exponential mechanism needs a non-empty 1-D quality vector")
    if not np.isfinite(quality).all():  # the checks below only when they can fail
        if np.any(np.isnan(quality)) or np.any(quality == np.inf):
            raise PrivpubError("quality scores must not be NaN or +inf")
        if np.all(quality == -np.inf):
            raise PrivpubError("every candidate has quality -inf")
    factor = 1.0 if monotonic else 2.0
    return check_epsilon(epsilon) * quality / (factor * _check_sensitivity(sensitivity))


def exponential_mechanism_probabilities(
    quality, *, sensitivity: float, epsilon: float, monotonic: bool = False
) -> np.ndarray:
    """Selection probabilities ``P[i] ∝ exp(epsilon q_i / (2 sensitivity))`` [MT07].

    With ``monotonic=True`` (every neighbour changes all scores in the same direction) the
    factor 2 is dropped. Computed with log-sum-exp, so huge scores do not overflow.
    """
    logits = _em_logits(quality, sensitivity, epsilon, monotonic)
    return np.exp(logits - logsumexp(logits))


def exponential_mechanism(
    quality,
    *,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    monotonic: bool = False,
    ledger: PrivacyLedger | None = None,
    label: str = "exponential mechanism",
) -> int:
    """Index of the candidate chosen by the exponential mechanism [MT07].

    Sampled by the Gumbel-max trick (``argmax(logit_i + Gumbel_i)``), which is exact and
    numerically stable for any score range. Candidates with quality ``-inf`` are never chosen.
    Without noise (:func:`noise_off`) the best candidate is chosen.
    """
    logits = _em_logits(quality, sensitivity, epsilon, monotonic)
    choice = int((logits + gumbel_noise(rng=rng, size=logits.size)).argmax())
    _spend(ledger, epsilon, label, sensitivity, "exponential")
    return choice
