"""Argument checks shared by every mechanism (the diffprivlib ``validation`` idea).

Each check returns the normalised value or raises :class:`~privpub.errors.PrivpubError`
with a message that names the parameter, so that bad input never surfaces as a traceback
from deep inside numpy.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from privpub.errors import PrivpubError

__all__ = [
    "check_epsilon",
    "check_k",
    "check_depth",
    "check_positive_int",
    "check_nonnegative_int",
    "check_probability",
    "check_fraction",
    "check_rng",
]


def _real(value, name: str) -> float:
    if type(value) is float:  # the common case, without the abstract-class checks below
        if math.isnan(value):
            raise PrivpubError(f"{name} must not be NaN")
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PrivpubError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise PrivpubError(f"{name} must not be NaN")
    return value


def _integer(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            return int(value)
        raise PrivpubError(f"{name} must be an integer, got {value!r}")
    return int(value)


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float; it must be finite and > 0."""
    epsilon = _real(epsilon, name)
    if not (0 < epsilon < math.inf):
        raise PrivpubError(f"{name} must be a finite number > 0, got {epsilon!r}")
    return epsilon


def check_k(k, name: str = "k") -> int:
    """Return the anonymity parameter ``k`` as an int; it must be >= 2."""
    k = _integer(k, name)
    if k < 2:
        raise PrivpubError(f"{name} must be an integer >= 2 (k = 1 is no anonymity), got {k}")
    return k


def check_depth(depth, name: str = "depth") -> int:
    """Return a tree depth as an int; it must be >= 0."""
    return check_nonnegative_int(depth, name)


def check_nonnegative_int(value, name: str) -> int:
    """Return ``value`` as an int >= 0."""
    value = _integer(value, name)
    if value < 0:
        raise PrivpubError(f"{name} must be an integer >= 0, got {value}")
    return value


def check_positive_int(value, name: str) -> int:
    """Return ``value`` as an int >= 1."""
    value = _integer(value, name)
    if value < 1:
        raise PrivpubError(f"{name} must be an integer >= 1, got {value}")
    return value


def check_probability(p, name: str = "p") -> float:
    """Return ``p`` as a float in [0, 1]."""
    p = _real(p, name)
    if not 0.0 <= p <= 1.0:
        raise PrivpubError(f"{name} must be a probability in [0, 1], got {p}")
    return p


def check_fraction(p, name: str) -> float:
    """Return ``p`` as a float in the open interval (0, 1)."""
    p = _real(p, name)
    if not 0.0 < p < 1.0:
        raise PrivpubError(f"{name} must lie strictly between 0 and 1, got {p}")
    return p


def check_rng(rng) -> np.random.Generator:
    """Normalise ``rng`` to a :class:`numpy.random.Generator` (the one place seeds are handled).

    Accepts a Generator (returned as is), a :class:`numpy.random.SeedSequence`, an int seed,
    or None (fresh OS entropy; fine interactively, never used by the runner).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    raise PrivpubError(
        f"rng must be a numpy Generator, SeedSequence, int seed or None, got {rng!r}"
    )
