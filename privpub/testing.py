"""Test kit for privacy claims: empirical neighbour tests and brute-force sensitivity.

Two checks that every mechanism's tests can reuse (the diffprivlib / DP-auditing idea):

- :func:`empirical_privacy_check` runs a mechanism many times on two neighbouring inputs
  ``D`` and ``D'`` and checks ``P[M(D) in S] <= e^eps P[M(D') in S] + slack`` (and the same
  with ``D`` and ``D'`` swapped) for a list of events ``S``, with exact (Clopper-Pearson)
  confidence bounds, so a correct mechanism passes with probability at least ``1 - alpha``
  and a violation is reported only when the data show it.
- :func:`brute_force_sensitivity` returns the largest change of a query over given inputs
  and all their neighbours, to try to break the sensitivity bound a mechanism relies on.

Plus small neighbour generators (:func:`graph_edge_neighbours`, :func:`all_graphs`,
:func:`flip_one_entry_neighbours`, :func:`replace_one_row_neighbours`) and random inputs
(:func:`random_binary_matrix`).

An empirical test can only *refute* a privacy claim, never prove it: it checks the chosen
events at the chosen neighbouring pair. Pick events where the mechanism is tightest (e.g.
the tail ``output > t`` of a noisy count, or the value of the entry that differs).

Examples
--------
A counting query (sensitivity 1) with Laplace noise of scale ``1 / eps`` passes; with half
that scale it is detected:

>>> import numpy as np
>>> eps = 1.0
>>> def noisy_count(count, scale):
...     return lambda rng, n: count + rng.laplace(0.0, scale, size=n)
>>> events = {f"> {t}": (lambda out, t=t: out > t) for t in (0.5, 1.0, 2.0)}
>>> ok = empirical_privacy_check(noisy_count(0, 1 / eps), noisy_count(1, 1 / eps),
...     events=events, epsilon=eps, n_trials=20_000, rng=np.random.default_rng(0), batch=True)
>>> ok.passed
True
>>> bad = empirical_privacy_check(noisy_count(0, 0.5 / eps), noisy_count(1, 0.5 / eps),
...     events=events, epsilon=eps, n_trials=20_000, rng=np.random.default_rng(0), batch=True,
...     raise_on_violation=False)
>>> bad.passed, bad.epsilon_lower_bound > eps
(False, True)

References
----------
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014
   (Definition 2.4).
.. [DWWZK18] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. Detecting violations of
   differential privacy. CCS 2018 (event-based hypothesis tests).
.. [CP34] C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits illustrated
   in the case of the binomial. Biometrika 26(4), 1934.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import beta

from privpub.errors import PrivpubError
from privpub.validation import check_epsilon, check_fraction, check_positive_int, check_rng

__all__ = [
    "EventEstimate",
    "PrivacyCheck",
    "empirical_privacy_check",
    "clopper_pearson",
    "brute_force_sensitivity",
    "graph_edge_neighbours",
    "all_graphs",
    "flip_one_entry_neighbours",
    "replace_one_row_neighbours",
    "random_binary_matrix",
]


# --------------------------------------------------------------------------- neighbour test
def clopper_pearson(count: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided exact binomial bounds ``(low, high)``, each failing w.p. at most ``alpha``.

    ``P[p < low] <= alpha`` and ``P[p > high] <= alpha`` for ``count ~ Binomial(n, p)``
    [CP34].
    """
    low = 0.0 if count == 0 else float(beta.ppf(alpha, count, n - count + 1))
    high = 1.0 if count == n else float(beta.ppf(1 - alpha, count + 1, n - count))
    return low, high


@dataclass(frozen=True)
class EventEstimate:
    """Estimates for one event ``S``.

    Attributes
    ----------
    name : str
    p_d, p_d_prime : float
        Empirical ``P[M(D) in S]`` and ``P[M(D') in S]``.
    p_d_low, p_d_high, p_d_prime_low, p_d_prime_high : float
        One-sided Clopper-Pearson bounds (Bonferroni-corrected over all bounds of the check).
    violated : bool
        The data show ``P[M(D) in S] > e^eps P[M(D') in S] + slack`` or the same with ``D``,
        ``D'`` swapped (lower bound of one side above ``e^eps`` times the upper bound of
        the other, plus slack).
    epsilon_lower_bound : float
        Largest ``log((low_a - slack) / high_b)`` over both directions, or 0: with
        confidence ``1 - alpha`` the mechanism is not ``(eps', slack)``-DP for any smaller
        ``eps'``.
    """

    name: str
    p_d: float
    p_d_prime: float
    p_d_low: float
    p_d_high: float
    p_d_prime_low: float
    p_d_prime_high: float
    violated: bool
    epsilon_lower_bound: float


@dataclass(frozen=True)
class PrivacyCheck:
    """Result of :func:`empirical_privacy_check`; ``str()`` gives a table."""

    epsilon: float
    slack: float
    n_trials: int
    alpha: float
    events: tuple[EventEstimate, ...]

    @property
    def passed(self) -> bool:
        """No event shows a significant violation."""
        return not any(e.violated for e in self.events)

    @property
    def violations(self) -> list[EventEstimate]:
        return [e for e in self.events if e.violated]

    @property
    def epsilon_lower_bound(self) -> float:
        """Largest empirical lower bound on epsilon over all events (0 if none)."""
        return max((e.epsilon_lower_bound for e in self.events), default=0.0)

    def __str__(self) -> str:
        head = (
            f"empirical privacy check: eps={self.epsilon:g}, slack={self.slack:g}, "
            f"n_trials={self.n_trials}, alpha={self.alpha:g}, "
            f"empirical eps lower bound={self.epsilon_lower_bound:.4g} -> "
            f"{'passed' if self.passed else 'VIOLATED'}"
        )
        rows = [
            f"  {'!!' if e.violated else '  '} {e.name:<30} P[M(D) in S]={e.p_d:.4f} "
            f"[{e.p_d_low:.4f}, {e.p_d_high:.4f}]  P[M(D') in S]={e.p_d_prime:.4f} "
            f"[{e.p_d_prime_low:.4f}, {e.p_d_prime_high:.4f}]  eps>={e.epsilon_lower_bound:.4g}"
            for e in self.events
        ]
        return "\n".join([head, *rows])

    def assert_passed(self) -> None:
        """Raise :class:`AssertionError` (with the table) if any event is violated."""
        if not self.passed:
            raise AssertionError(str(self))


def _named_events(events) -> list[tuple[str, Callable]]:
    if isinstance(events, Mapping):
        items = [(str(k), v) for k, v in events.items()]
    elif callable(events):
        items = [(getattr(events, "__name__", "event"), events)]
    else:
        items = [(getattr(f, "__name__", f"event{i}"), f) for i, f in enumerate(events)]
    if not items:
        raise PrivpubError("empirical_privacy_check needs at least one event")
    for name, f in items:
        if not callable(f):
            raise PrivpubError(f"event {name!r} must be a function output -> bool")
    names = [n for n, _ in items]
    if len(set(names)) != len(names):  # e.g. several lambdas
        items = [(f"{n}#{i}", f) for i, (n, f) in enumerate(items)]
    return items


def _count(sample, events, n_trials, rng, batch) -> np.ndarray:
    counts = np.zeros(len(events), dtype=np.int64)
    if batch:
        outputs = sample(rng, n_trials)
        for j, (name, f) in enumerate(events):
            hits = np.asarray(f(outputs))
            if hits.shape != (n_trials,):
                raise PrivpubError(
                    f"in batch mode event {name!r} must return {n_trials} booleans, "
                    f"got shape {hits.shape}"
                )
            counts[j] = int(np.count_nonzero(hits))
        return counts
    for _ in range(n_trials):
        out = sample(rng)
        for j, (_, f) in enumerate(events):
            counts[j] += bool(f(out))
    return counts


def empirical_privacy_check(
    sample_d: Callable,
    sample_d_prime: Callable,
    *,
    events: Mapping[str, Callable] | Sequence[Callable] | Callable,
    epsilon: float,
    n_trials: int,
    rng: np.random.Generator,
    slack: float = 0.0,
    alpha: float = 1e-3,
    include_complements: bool = True,
    batch: bool = False,
    raise_on_violation: bool = True,
) -> PrivacyCheck:
    """Empirical neighbour test of ``P[M(D) in S] <= e^eps P[M(D') in S] + slack``.

    Draws ``n_trials`` outputs of ``M(D)`` and of ``M(D')``, counts how often each event
    holds, and checks the DP inequality in both directions with one-sided exact
    (Clopper-Pearson) bounds: a violation is declared only when the lower bound of one
    probability exceeds ``e^eps`` times the upper bound of the other plus ``slack``. All
    ``4 x #events`` bounds are Bonferroni-corrected, so a mechanism that satisfies the
    inequality is (wrongly) flagged with probability at most ``alpha``.

    Parameters
    ----------
    sample_d, sample_d_prime : callable
        ``sample(rng) -> output``: one run of the mechanism on ``D`` (resp. ``D'``) with the
        given generator. With ``batch=True``: ``sample(rng, n) -> outputs`` (``n`` runs,
        e.g. an array with one row per run).
    events : mapping name -> callable, sequence of callables, or one callable
        ``event(output) -> bool``; with ``batch=True`` ``event(outputs) -> bool array`` of
        length ``n_trials``.
    epsilon : float
        The claimed epsilon.
    n_trials : int
        Runs per input. The test detects a violation of size ``d`` in probability roughly
        when ``d >> sqrt(p (1 - p) / n_trials)``.
    rng : numpy.random.Generator
        Source of all randomness (seed or SeedSequence accepted).
    slack : float
        Additive tolerance: the ``delta`` of (eps, delta)-DP, 0 for pure DP.
    alpha : float
        Family-wise false-alarm probability, in (0, 1).
    include_complements : bool
        Also test the complement of every event (free: same counts).
    batch : bool
        Vectorised sampling (see ``sample_d``).
    raise_on_violation : bool
        Raise :class:`AssertionError` with the table when a violation is found; otherwise
        just return the result.

    Returns
    -------
    PrivacyCheck
        Per-event estimates and bounds; ``.passed``, ``.epsilon_lower_bound``.
    """
    epsilon = check_epsilon(epsilon)
    n_trials = check_positive_int(n_trials, "n_trials")
    alpha = check_fraction(alpha, "alpha")
    slack = _check_slack(slack)
    rng = check_rng(rng)
    named = _named_events(events)
    counts_d = _count(sample_d, named, n_trials, rng, batch)
    counts_dp = _count(sample_d_prime, named, n_trials, rng, batch)
    names = [n for n, _ in named]
    if include_complements:  # free: the same counts
        names += [f"not ({n})" for n, _ in named]
        counts_d = np.concatenate([counts_d, n_trials - counts_d])
        counts_dp = np.concatenate([counts_dp, n_trials - counts_dp])
    level = alpha / (4 * len(names))
    estimates = [
        _estimate(name, c1, c2, n_trials, level=level, epsilon=epsilon, slack=slack)
        for name, c1, c2 in zip(names, counts_d, counts_dp, strict=True)
    ]
    result = PrivacyCheck(epsilon, slack, n_trials, alpha, tuple(estimates))
    if raise_on_violation:
        result.assert_passed()
    return result


def _check_slack(slack) -> float:
    slack = float(slack)
    if not (0.0 <= slack < 1.0):
        raise PrivpubError(f"slack must be in [0, 1), got {slack}")
    return slack


def _estimate(name: str, c1, c2, n_trials: int, *, level: float, epsilon: float,
              slack: float) -> EventEstimate:
    """One event's frequencies on ``D`` and ``D'`` (``c1``, ``c2`` hits), their bounds at
    ``level``, whether they violate the inequality and the epsilon they show."""
    factor = math.exp(epsilon)
    lo1, hi1 = clopper_pearson(int(c1), n_trials, level)
    lo2, hi2 = clopper_pearson(int(c2), n_trials, level)
    violated = lo1 > factor * hi2 + slack or lo2 > factor * hi1 + slack
    eps_lb = 0.0
    for lo, hi in ((lo1, hi2), (lo2, hi1)):
        if lo - slack > 0 and hi > 0:
            eps_lb = max(eps_lb, math.log((lo - slack) / hi))
    return EventEstimate(name, c1 / n_trials, c2 / n_trials, lo1, hi1, lo2, hi2, violated, eps_lb)


# --------------------------------------------------------------------------- sensitivity
_NORMS: dict[str, Callable[[np.ndarray], float]] = {
    "l1": lambda d: float(np.sum(np.abs(d))),
    "l2": lambda d: float(np.sqrt(np.sum(d * d))),
    "linf": lambda d: float(np.max(np.abs(d), initial=0.0)),
}


def _as_vector(value, name: str) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise PrivpubError(f"brute_force_sensitivity: f({name}) is not numeric: {exc}") from exc
    return v.reshape(1) if v.ndim == 0 else v


def _difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.shape == b.shape:
        return a - b
    if a.ndim == 1 and b.ndim == 1:  # e.g. histograms of different lengths: pad with 0
        n = max(a.size, b.size)
        return np.pad(a, (0, n - a.size)) - np.pad(b, (0, n - b.size))
    raise PrivpubError(
        f"brute_force_sensitivity: f returned shapes {a.shape} and {b.shape} on neighbours"
    )


def brute_force_sensitivity(
    f: Callable,
    inputs: Iterable,
    neighbours: Callable[[Any], Iterable],
    *,
    norm: str | Callable[[np.ndarray], float] = "l1",
    return_witness: bool = False,
):
    """Largest change ``norm(f(x) - f(x'))`` over all ``x`` in ``inputs`` and ``x'`` in
    ``neighbours(x)``.

    Use it to try to break a sensitivity bound: enumerate small inputs (e.g.
    :func:`all_graphs`) and compare the result with the bound the mechanism uses. The value
    is a lower bound on the global sensitivity (exact if ``inputs`` covers every dataset).

    Parameters
    ----------
    f : callable
        The query; returns a number or an array. 1-D results of different lengths (e.g.
        degree histograms) are compared after padding the shorter one with zeros.
    inputs : iterable
        Datasets to start from.
    neighbours : callable
        ``neighbours(x)`` yields the neighbours of ``x``.
    norm : {"l1", "l2", "linf"} or callable
        Norm of the difference (a callable gets the difference array).
    return_witness : bool
        Also return a pair ``(x, x')`` attaining the maximum (``None`` if there is none).

    Returns
    -------
    float, or (float, x, x') if ``return_witness``
        0.0 when no pair was examined.
    """
    if isinstance(norm, str):
        try:
            norm_fn = _NORMS[norm.lower()]
        except KeyError:
            raise PrivpubError(f"unknown norm {norm!r}; use one of {sorted(_NORMS)}") from None
    elif callable(norm):
        norm_fn = norm
    else:
        raise PrivpubError(f"norm must be a name or a callable, got {norm!r}")
    best, witness = 0.0, (None, None)
    for x in inputs:
        fx = _as_vector(f(x), "x")
        for xp in neighbours(x):
            change = float(norm_fn(_difference(fx, _as_vector(f(xp), "x'"))))
            if math.isnan(change):
                raise PrivpubError("brute_force_sensitivity: f returned NaN")
            if witness[0] is None or change > best:
                best, witness = change, (x, xp)
    return (best, *witness) if return_witness else best


# --------------------------------------------------------------------------- neighbours
def graph_edge_neighbours(graph):
    """Every graph that differs from ``graph`` (a :class:`privpub.types.Graph`) in exactly
    one node pair: one edge added or removed (edge-DP neighbours, same node set)."""
    from privpub.types import Graph

    n = graph.n_nodes
    edges = {tuple(e) for e in graph.edges().tolist()}
    for u, v in itertools.combinations(range(n), 2):
        toggled = edges ^ {(u, v)}
        yield Graph.from_edges(np.array(sorted(toggled), dtype=np.int64).reshape(-1, 2), n)


def all_graphs(n_nodes: int):
    """Every simple undirected graph on nodes ``0..n_nodes-1`` (``2**(n(n-1)/2)`` of them;
    1024 for 5 nodes, 32768 for 6)."""
    from privpub.types import Graph

    n_nodes = check_positive_int(n_nodes, "n_nodes")
    pairs = list(itertools.combinations(range(n_nodes), 2))
    if len(pairs) > 21:
        raise PrivpubError(f"all_graphs: {n_nodes} nodes give 2**{len(pairs)} graphs, too many")
    for mask in range(1 << len(pairs)):
        chosen = [p for i, p in enumerate(pairs) if mask >> i & 1]
        yield Graph.from_edges(np.array(chosen, dtype=np.int64).reshape(-1, 2), n_nodes)


def flip_one_entry_neighbours(matrix):
    """Every dense 0/1 array differing from ``matrix`` in exactly one entry (edge
    neighbours of a users x items matrix)."""
    m = np.asarray(matrix)
    for idx in np.ndindex(m.shape):
        out = m.copy()
        out[idx] = 1 - out[idx]
        yield out


def replace_one_row_neighbours(matrix):
    """Every dense 0/1 matrix obtained by replacing one row of ``matrix`` by any other 0/1
    row (node neighbours in epasto2022 Definition 3.2; ``2**n_cols - 1`` per row)."""
    m = np.asarray(matrix)
    if m.ndim != 2:
        raise PrivpubError(f"replace_one_row_neighbours needs a 2-D matrix, got {m.shape}")
    n_rows, n_cols = m.shape
    if n_cols > 16:
        raise PrivpubError(f"{n_cols} columns give 2**{n_cols} rows per user, too many")
    rows = [np.array(bits, dtype=m.dtype) for bits in itertools.product((0, 1), repeat=n_cols)]
    for i in range(n_rows):
        for row in rows:
            if not np.array_equal(row, m[i]):
                out = m.copy()
                out[i] = row
                yield out


def random_binary_matrix(rng: np.random.Generator, n_rows: int, n_cols: int, density: float,
                         n_copies: int = 0) -> np.ndarray:
    """A dense int8 0/1 matrix with entries 1 with probability ``density``, then
    ``n_copies`` random rows overwritten by copies of random rows (exact duplicates)."""
    x = (rng.random((n_rows, n_cols)) < density).astype(np.int8)
    if n_copies:
        x[rng.integers(0, n_rows, n_copies)] = x[rng.integers(0, n_rows, n_copies)]
    return x
