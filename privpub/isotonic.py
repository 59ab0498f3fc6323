"""Isotonic regression (constrained inference), one place for every paper that uses it.

Hay et al. (ICDM 2009) post-process a noisy sorted degree sequence by the L2 projection onto
non-decreasing sequences; Day et al. (SIGMOD 2016, theta-Constrained) do the same to noisy
cumulative histograms. Both are the pool-adjacent-violators algorithm, provided by
:func:`scipy.optimize.isotonic_regression` (O(n)).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import isotonic_regression as _scipy_isotonic

from privpub.errors import PrivpubError

__all__ = ["isotonic_regression"]


def isotonic_regression(y, *, weights=None, increasing: bool = True) -> np.ndarray:
    """The monotone sequence closest to ``y`` in (weighted) least squares (PAVA).

    Parameters
    ----------
    y : array_like, 1-D
    weights : array_like, optional
        Positive weights, default all ones.
    increasing : bool
        Non-decreasing (default) or non-increasing fit.
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise PrivpubError(f"isotonic regression needs a 1-D sequence, got shape {y.shape}")
    if y.size == 0:
        return y.copy()
    if not np.all(np.isfinite(y)):
        raise PrivpubError("isotonic regression needs finite values")
    return _scipy_isotonic(y, weights=weights, increasing=increasing).x
