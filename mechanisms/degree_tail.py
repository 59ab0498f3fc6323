"""Tail post-processing of a projected degree histogram (day2016 Sec 3.4, Algorithm 5).

After projection to degree bound ``theta`` every node whose degree exceeded ``theta`` is
*shaved* to at most ``theta``, so the last bin of a projected histogram holds (roughly) the
number of nodes of degree *at least* ``theta`` in the original graph. day2016 Sec 3.4
reallocates that count -- the *budget* -- over degrees ``theta, theta+1, ...`` following a
shape learnt from the upper half of the noisy histogram. Three shapes are compared in the
paper's Fig 7:

``"linear"`` (the paper's default, Algorithm 5)
    Least-squares line ``y = m k + b`` through the bins ``theta/2 .. theta-1``; each tail bin
    ``k = theta, theta+1, ...`` gets ``b + m k`` while ``m < 0``. A non-negative slope (noise)
    falls back to the average ``c`` of those bins (Algorithm 5 line 8).
``"powerlaw"``
    Least-squares line through ``(log k, log y)`` of the positive bins ``theta/2 .. theta-1``,
    i.e. ``y = a k^-s``; each tail bin gets ``a k^-s`` while ``s > 0``, else the average ``c``.
``"uniform"`` (simple average)
    Sec 3.4: "allocates the average count to each bin from degree theta to 2 theta": the
    budget is split evenly over the ``theta + 1`` bins ``theta .. 2 theta``.

Post-processing touches only the (already private) noisy histogram, so it costs no privacy
budget (day2016 Sec 2.2, transformation invariance).

Decisions where Algorithm 5 is silent or cannot be followed literally (all keep the released
mass equal to the noisy mass, so the total stays close to ``n``):

- Algorithm 5 subtracts each allocated count from the budget and stops once it is negative,
  so it overshoots by up to one bin; here the last tail bin gets exactly what is left, so
  ``sum(tail bins) == budget``.
- A fitted count ``<= 0`` (the line has crossed zero, or noise made the average negative)
  would make Algorithm 5 *grow* its budget and never stop. Every tail bin therefore gets at
  least :data:`MIN_TAIL_COUNT` (one node), which bounds the tail length by the budget.
- Algorithm 5 loops ``k`` up to ``n``. The true ``n`` is private (it changes by one between
  node neighbours), so the loop is capped at ``max_degree`` (default: the noisy node count
  ``sum(max(counts, 0)) - 1``, a post-processed estimate of the largest possible degree
  ``n - 1``); anything left at the cap is put in the cap's bin.
- Bin 0 is never used for fitting (``theta/2`` is taken as ``max(1, theta // 2)``, since the
  mechanisms of day2016 report degrees ``1..theta``). With fewer than two bins to fit
  (``theta == 2``) the average is used; with none (``theta == 1``: linear, power law) or a
  non-positive budget, nothing is reallocated.
- The result is clipped at 0 (negative noisy counts are no node counts; day2016 returns
  ``h' / ||h'||_1``, Algorithm 5 line 12 / Algorithm 2 line 6).

References
----------
.. [DLL16] W.-Y. Day, N. Li, M. Lyu. Publishing Graph Degree Distribution with Node
   Differential Privacy. SIGMOD 2016. Sec 3.4, Algorithm 5, Sec 4.4 and Fig 7.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from privpub.errors import PrivpubError
from privpub.validation import check_positive_int

__all__ = ["TAILS", "MIN_TAIL_COUNT", "check_tail", "tail_code", "postprocess_tail"]

#: Tail allocation strategies (day2016 Sec 3.4, Fig 7); "linear" is the paper's default.
TAILS = ("linear", "powerlaw", "uniform")
_CODES = {name: i for i, name in enumerate(TAILS)}

#: Smallest count a tail bin receives (one node), so the reallocation always terminates.
MIN_TAIL_COUNT = 1.0


def check_tail(tail) -> str:
    """Return ``tail`` if it names a strategy of :data:`TAILS`, else raise PrivpubError."""
    if not isinstance(tail, str) or tail not in _CODES:
        raise PrivpubError(f"tail must be one of {', '.join(TAILS)}; got {tail!r}")
    return tail


def tail_code(tail) -> int:
    """Integer code of a tail strategy, as the compiled kernels take it."""
    return _CODES[check_tail(tail)]


@njit(cache=True)
def _least_squares(x, y):
    """Slope and intercept of the least-squares line through ``(x, y)`` (>= 2 distinct x)."""
    mx = x.mean()
    my = y.mean()
    sxx = 0.0
    sxy = 0.0
    for i in range(x.size):
        sxx += (x[i] - mx) * (x[i] - mx)
        sxy += (x[i] - mx) * (y[i] - my)
    slope = sxy / sxx
    return slope, my - slope * mx


@njit(cache=True)
def _tail_kernel(counts, theta, code, cap):
    """Algorithm 5 on ``counts[0..theta]``; returns the new (unclipped) histogram.

    ``code``: 0 linear, 1 power law, 2 uniform. ``cap``: largest degree a tail bin may have.
    """
    head = counts[: theta + 1].copy()
    budget = head[theta]
    if budget <= 0.0 or cap <= theta:
        return head
    if code == 2:  # uniform over theta .. 2 theta
        end = min(2 * theta, cap)
        out = np.zeros(end + 1)
        out[:theta] = head[:theta]
        share = budget / (end - theta + 1)
        for k in range(theta, end + 1):
            out[k] = share
        return out
    if theta < 2:
        return head
    lo = max(1, theta // 2)
    npts = theta - lo
    mean = 0.0
    for k in range(lo, theta):
        mean += head[k]
    mean /= npts

    use_fit = False
    slope = 0.0
    icpt = 0.0
    if code == 0 and npts >= 2:
        x = np.arange(lo, theta).astype(np.float64)
        slope, icpt = _least_squares(x, head[lo:theta])
        use_fit = slope < 0.0
    elif code == 1:
        npos = 0
        for k in range(lo, theta):
            if head[k] > 0.0:
                npos += 1
        if npos >= 2:
            x = np.empty(npos)
            y = np.empty(npos)
            j = 0
            for k in range(lo, theta):
                if head[k] > 0.0:
                    x[j] = math.log(k)
                    y[j] = math.log(head[k])
                    j += 1
            slope, icpt = _least_squares(x, y)
            use_fit = slope < 0.0

    # pass 1: how many tail bins; pass 2: fill them (same arithmetic)
    last = theta
    rem = budget
    while True:
        if use_fit:
            est = icpt + slope * last if code == 0 else math.exp(icpt) * last**slope
        else:
            est = mean
        a = max(est, 1.0)
        if a >= rem or last >= cap:
            break
        rem -= a
        last += 1
    out = np.zeros(last + 1)
    out[:theta] = head[:theta]
    rem = budget
    for k in range(theta, last):
        if use_fit:
            est = icpt + slope * k if code == 0 else math.exp(icpt) * k**slope
        else:
            est = mean
        a = max(est, 1.0)
        out[k] = a
        rem -= a
    out[last] = rem
    return out


@njit(cache=True)
def _default_cap(counts, theta):
    """Largest degree the tail may reach: the noisy node count minus one (>= theta)."""
    total = 0.0
    for c in counts:
        if c > 0.0:
            total += c
    return max(theta, int(math.floor(total)) - 1)


@njit(cache=True)
def _postprocess(counts, theta, code):
    """Algorithm 5 with the default cap, clipped at 0 (used by the compiled oracles)."""
    out = _tail_kernel(counts, theta, code, _default_cap(counts[: theta + 1], theta))
    for k in range(out.size):
        if out[k] < 0.0:
            out[k] = 0.0
    return out


def postprocess_tail(
    counts, theta: int, *, tail: str = "linear", max_degree: int | None = None
) -> np.ndarray:
    """Reallocate the last bin of a projected histogram over higher degrees (Algorithm 5).

    Parameters
    ----------
    counts : array_like
        Noisy counts per degree ``0..theta`` (entries beyond ``theta`` are ignored).
    theta : int
        The projection bound; ``counts[theta]`` is the budget reallocated.
    tail : {"linear", "powerlaw", "uniform"}
        Allocation shape (see the module docstring; day2016 Sec 3.4, Fig 7).
    max_degree : int, optional
        Largest degree a tail bin may have. Default: ``sum(max(counts, 0)) - 1``, a
        post-processed estimate of ``n - 1`` (the true ``n`` is private).

    Returns
    -------
    numpy.ndarray
        Non-negative counts per degree ``0..D`` with ``D >= theta``; unless clipping changes
        it, the total equals ``counts[:theta + 1].sum()``.

    Raises
    ------
    PrivpubError
        On an unknown ``tail``, ``theta < 1``, too few or non-finite ``counts``.

    Examples
    --------
    >>> h = postprocess_tail([0, 10, 8, 6, 12], 4, tail="uniform")
    >>> h.tolist()
    [0.0, 10.0, 8.0, 6.0, 2.4, 2.4, 2.4, 2.4, 2.4]
    """
    code = tail_code(tail)
    theta = check_positive_int(theta, "theta")
    try:
        c = np.asarray(counts, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise PrivpubError(f"counts must be numeric: {exc}") from None
    if c.size < theta + 1:
        raise PrivpubError(f"counts must cover degrees 0..{theta}, got {c.size} bins")
    c = np.ascontiguousarray(c[: theta + 1])
    if not np.all(np.isfinite(c)):
        raise PrivpubError("counts must be finite")
    if max_degree is None:
        cap = int(_default_cap(c, theta))
    else:
        cap = max(check_positive_int(max_degree, "max_degree"), theta)
    return np.clip(_tail_kernel(c, theta, code, cap), 0.0, None)
