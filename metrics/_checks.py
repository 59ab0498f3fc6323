"""Input checks shared by the metric modules (private: not a plug-in module).

Every check raises :class:`privpub.errors.PrivpubError` with a message naming the argument
(``truth`` or ``release``) so that a bad release fails with a sentence, not a numpy traceback.
"""

from __future__ import annotations

import numpy as np

from privpub.errors import PrivpubError

__all__ = ["finite_vector", "same_type", "type_name"]


def type_name(x) -> str:
    return type(x).__name__


def finite_vector(values, role: str, *, what: str = "values") -> np.ndarray:
    """Return ``values`` as a non-empty 1-D float array without NaN or infinity."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise PrivpubError(f"{role} {what} must be numeric") from None
    if arr.ndim != 1:
        arr = arr.ravel()
    if arr.size == 0:
        raise PrivpubError(f"{role} {what} are empty")
    if np.isnan(arr).any():
        raise PrivpubError(f"{role} {what} contain NaN ({int(np.isnan(arr).sum())} entries)")
    if np.isinf(arr).any():
        raise PrivpubError(f"{role} {what} contain infinite entries")
    return arr


def same_type(truth, release, allowed: tuple[type, ...], metric: str) -> type:
    """Check that truth and release are of one of the ``allowed`` types, and the same one."""
    for cls in allowed:
        if isinstance(truth, cls) and isinstance(release, cls):
            return cls
    names = ", ".join(c.__name__ for c in allowed)
    raise PrivpubError(
        f"{metric} compares a truth and a release of the same type, one of {names}; "
        f"got truth {type_name(truth)} and release {type_name(release)}"
    )
