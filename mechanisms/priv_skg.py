"""PrivSKG (mir2012): a stochastic Kronecker graph fitted to noisy moments, edge-DP.

Mir & Wright estimate the 2x2 initiator ``[[a, b], [b, c]]`` of a stochastic Kronecker graph
(SKG) privately with Gleich & Owen's method of moments: four counts of the input, edges
``E``, hairpins (2-stars) ``H``, tripins (3-stars) ``T`` and triangles ``Delta``, are
matched by the counts the SKG expects. ``E``, ``H`` and ``T`` are functions of the degree
sequence, released as Hay et al.'s noisy sorted degree sequence (L1 sensitivity 2) made
monotone by isotonic regression; ``Delta`` gets noise scaled by its smooth sensitivity
(Nissim, Raskhodnikova & Smith). The fit and the graph drawn from the fitted model are
post-processing. The graph has ``2**k`` nodes, ``k = floor(log2 n)``, padded with isolated
nodes to the input's ``n`` (as PGB's SKG.py). Every choice, and where PGB's code departs
from the paper: docs/design.md ("mir2012: PrivSKG").

References
----------
.. [MW12] D. J. Mir, R. N. Wright. A differentially private estimator for the stochastic
   Kronecker graph model. EDBT/ICDT Workshops (PAIS) 2012.
.. [GO12] D. F. Gleich, A. B. Owen. Moment-based estimation of stochastic Kronecker graph
   parameters. Internet Mathematics 8(3), 2012 (expected feature counts, Sec 3).
.. [HLMJ09] M. Hay, C. Li, G. Miklau, D. Jensen. Accurate estimation of the degree
   distribution of private networks. ICDM 2009 (sorted degree sequence, sensitivity 2).
.. [NRS07] K. Nissim, S. Raskhodnikova, A. Smith. Smooth sensitivity and sampling in
   private data analysis. STOC 2007 (Sec 2: admissible noise; Sec 3: triangle counts).
.. [MPNK14] S. Moreno, J. J. Pfeiffer III, J. Neville, S. Kirshner. A scalable method for
   exact sampling from Kronecker family models. ICDM 2014 (sampling by probability class).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit
from scipy.optimize import minimize

from privpub.errors import NotApplicableError, PrivpubError
from privpub.isotonic import isotonic_regression
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import heavy_tailed_noise, laplace_mechanism, laplace_noise
from privpub.registry import EDGE_DP, register_mechanism
from privpub.types import Graph, Kind, Release
from privpub.validation import check_epsilon, check_fraction, check_positive_int, check_rng

__all__ = [
    "TRIANGLE_NOISES",
    "HEAVY_TAIL_GAMMA",
    "MAX_LEVELS",
    "priv_skg",
    "moment_features",
    "pair_profile",
    "triangle_local_sensitivity",
    "triangle_smooth_sensitivity",
    "expected_features",
    "fit_initiator",
    "sample_kronecker_graph",
]

#: How the triangle count is noised: ``"laplace"`` (mir2012: (epsilon, delta)-DP) or
#: ``"heavy_tailed"`` (pure epsilon-DP, [NRS07] Lemma 2.7 noise).
TRIANGLE_NOISES = ("laplace", "heavy_tailed")

#: ``gamma`` of the heavy-tailed noise (``density ~ 1 / (1 + |z|^gamma)``), as elsewhere in
#: privpub (:func:`privpub.noise.heavy_tailed_noise`).
HEAVY_TAIL_GAMMA = 4.0

#: Largest Kronecker power sampled (class sizes stay exact in int64 up to here).
MAX_LEVELS = 30

#: Grid step of the initiator search before the local polish (SNAP's moment fit searches a
#: 0.01 grid without a polish; from 0.02 the polished optimum was the same on 40 random fits).
_GRID_STEP = 0.02
#: Grid points polished by the local optimiser.
_POLISH = 5


def _caveat(params: dict) -> str | None:
    if params.get("triangle_noise", "laplace") == "heavy_tailed":
        return None
    delta = params.get("delta", 0.01)
    return (
        f"(epsilon, delta)-edge-DP with delta = {delta:g}, not pure epsilon-DP: the triangle "
        "count's Laplace noise scaled by its smooth sensitivity (mir2012, after Nissim et al. "
        "2007) fails pure DP with probability up to delta. triangle_noise='heavy_tailed' is "
        "pure epsilon-edge-DP."
    )


# --------------------------------------------------------------------------- statistics
def moment_features(degrees) -> tuple[float, float, float]:
    """Edges, hairpins and tripins of a degree sequence: ``sum d / 2``, ``sum C(d, 2)``,
    ``sum C(d, 3)`` ([GO12] Sec 2; the degrees may be non-integer estimates)."""
    d = np.asarray(degrees, dtype=float)
    return (
        float(d.sum() / 2.0),
        float(np.sum(d * (d - 1.0)) / 2.0),
        float(np.sum(d * (d - 1.0) * (d - 2.0)) / 6.0),
    )


@njit(cache=True, nogil=True)
def _pair_profile(indptr, indices, order):  # pragma: no cover - compiled
    n = indptr.size - 1
    deg = indptr[1:] - indptr[:-1]
    best_b = np.full(max(n - 1, 1), -1, dtype=np.int64)
    cnt = np.zeros(n, dtype=np.int64)
    cnt_stamp = np.full(n, -1, dtype=np.int64)
    adj_stamp = np.full(n, -1, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    tri3 = 0
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            adj_stamp[indices[p]] = i
        n_touched = 0
        for p in range(indptr[i], indptr[i + 1]):
            u = indices[p]
            for q in range(indptr[u], indptr[u + 1]):
                w = indices[q]
                if w == i:
                    continue
                if cnt_stamp[w] != i:
                    cnt_stamp[w] = i
                    cnt[w] = 0
                    touched[n_touched] = w
                    n_touched += 1
                cnt[w] += 1
        # pairs with a common neighbour: a = #common neighbours, b = #nodes adjacent to
        # exactly one of the two (the pair itself excluded)
        for t in range(n_touched):
            w = touched[t]
            if w < i:
                continue
            a = cnt[w]
            linked = 1 if adj_stamp[w] == i else 0
            b = deg[i] + deg[w] - 2 * a - 2 * linked
            if linked:
                tri3 += a
            if b > best_b[a]:
                best_b[a] = b
        # pairs without a common neighbour: the largest b is d_i + d_j - 2 [ij edge], found
        # scanning nodes by decreasing degree past those sharing a neighbour with i
        found = -1
        for t in range(n):
            j = order[t]
            if j == i or cnt_stamp[j] == i:
                continue
            if found >= 0 and deg[j] + 2 <= found:
                break
            if adj_stamp[j] == i:
                if found < 0:
                    found = deg[j]
                    b = deg[i] + deg[j] - 2
                    if b > best_b[0]:
                        best_b[0] = b
                continue
            b = deg[i] + deg[j]
            if b > best_b[0]:
                best_b[0] = b
            break
    return tri3 // 3, best_b


def pair_profile(graph: Graph) -> tuple[int, np.ndarray]:
    """The triangle count and, for every ``a``, the largest ``b_ij`` over node pairs with
    ``a`` common neighbours (``-1`` where no pair has ``a``).

    ``a_ij`` is the number of common neighbours of ``i != j``, ``b_ij`` the number of other
    nodes adjacent to exactly one of them ([NRS07] Sec 3.1). The local sensitivity of the
    triangle count at any distance is increasing in both, so these maxima determine it
    (:func:`triangle_local_sensitivity`). Time O(sum of squared degrees), memory O(n + m).
    """
    adj = graph.adjacency
    deg = graph.degrees()
    order = np.argsort(-deg, kind="stable").astype(np.int64)
    tri, best_b = _pair_profile(adj.indptr, adj.indices, order)  # no int64 copy of the CSR
    return int(tri), best_b


def triangle_local_sensitivity(best_b: np.ndarray, n_nodes: int, s) -> np.ndarray:
    """``LS^(s)``: the largest local sensitivity of the triangle count over graphs within
    ``s`` edge changes ([NRS07] Claim 3.13):
    ``max_ij min(a_ij + floor((s + min(s, b_ij)) / 2), n - 2)``.

    ``best_b`` is :func:`pair_profile`'s; ``s`` a non-negative integer or an array of them.
    """
    s = np.asarray(s, dtype=np.int64)
    a = np.flatnonzero(best_b >= 0)
    if a.size == 0 or n_nodes < 3:
        return np.zeros(s.shape)
    b = best_b[a]
    grow = (s[..., None] + np.minimum(s[..., None], b)) // 2
    return np.minimum(np.max(a + grow, axis=-1), n_nodes - 2).astype(float)


def triangle_smooth_sensitivity(best_b: np.ndarray, n_nodes: int, beta: float) -> float:
    """The beta-smooth sensitivity ``max_s exp(-beta s) LS^(s)`` of the triangle count
    ([NRS07] Def 2.2, Sec 3.1), exact.

    ``LS^(s)`` is non-decreasing and at most ``n - 2``, so the search stops at the first
    ``s`` where ``exp(-beta s) (n - 2)`` cannot beat the best value found, or where
    ``LS^(s)`` has reached ``n - 2`` (from ``s = 2 (n - 2)`` on).
    """
    if not beta > 0:
        raise PrivpubError(f"beta must be > 0, got {beta}")
    cap = n_nodes - 2
    if cap <= 0:
        return 0.0
    best, start, chunk = 0.0, 0, 1024
    while start <= 2 * cap and (best == 0.0 or math.exp(-beta * start) * cap > best):
        s = np.arange(start, min(start + chunk, 2 * cap + 1))
        best = max(best, float(np.max(np.exp(-beta * s) * triangle_local_sensitivity(
            best_b, n_nodes, s))))
        start += chunk
    return best


# --------------------------------------------------------------------------- model
def expected_features(a, b, c, levels: int):
    """Expected edges, hairpins, tripins and triangles of an SKG with initiator
    ``[[a, b], [b, c]]`` and ``levels`` Kronecker powers, self-loops excluded ([GO12] Sec 3).

    ``a``, ``b``, ``c`` may be arrays (broadcast). The tripin count is the exact expectation
    ``sum_i sum_{j<l<m} P_ij P_il P_im`` (derived from the row sums of ``P``, ``P^2``,
    ``P^3`` and its diagonal); the formula in [GO12] and SNAP's moment fit (PGB's SKG.py
    copies it) has coefficients 5 and 4 where the expectation has 3 and 6, an error of
    ``(X^k - Y^k) / 3`` with ``X = a^3 + c^3 + b^2 (a + c)``, ``Y = a^3 + c^3 +
    b (a^2 + c^2)`` (tests compare both with brute-force sums).
    """
    # plain floats for scalars: the local polish evaluates this thousands of times
    a, b, c = (float(x) if np.ndim(x) == 0 else np.asarray(x, dtype=float) for x in (a, b, c))
    k = int(levels)
    a2, b2, c2 = a * a, b * b, c * c
    a3, b3, c3 = a2 * a, b2 * b, c2 * c
    ac3 = a3 + c3
    edges = 0.5 * ((a + 2 * b + c) ** k - (a + c) ** k)
    hairpins = 0.5 * (
        ((a + b) ** 2 + (b + c) ** 2) ** k
        - 2 * (a * (a + b) + c * (c + b)) ** k
        - (a2 + 2 * b2 + c2) ** k
        + 2 * (a2 + c2) ** k
    )
    tripins = (
        ((a + b) ** 3 + (b + c) ** 3) ** k
        - 3 * (a * (a + b) ** 2 + c * (b + c) ** 2) ** k
        + 6 * (ac3 + b * (a2 + c2)) ** k
        - 3 * (ac3 + b * (a2 + c2) + b2 * (a + c) + 2 * b3) ** k
        + 3 * (ac3 + b2 * (a + c)) ** k
        + 2 * (ac3 + 2 * b3) ** k
        - 6 * ac3**k
    ) / 6.0
    triangles = (
        (a3 + 3 * b2 * (a + c) + c3) ** k
        - 3 * (a * (a2 + b2) + c * (b2 + c2)) ** k
        + 2 * ac3**k
    ) / 6.0
    return edges, hairpins, tripins, triangles


def _objective(a, b, c, levels, targets):
    """Sum of squared differences of the expected from the target features, relative to
    the targets (at least 1)."""
    total = 0.0
    for expected, target in zip(expected_features(a, b, c, levels), targets, strict=True):
        total += ((expected - target) / max(target, 1.0)) ** 2
    return total


def _gradient(fun, x, step: float = 1e-7) -> np.ndarray:
    """Central differences of ``fun`` inside the unit box (one-sided at a face)."""
    grad = np.empty(x.size)
    for i in range(x.size):
        lo, hi = x.copy(), x.copy()
        lo[i] = max(x[i] - step, 0.0)
        hi[i] = min(x[i] + step, 1.0)
        grad[i] = (fun(hi) - fun(lo)) / (hi[i] - lo[i])
    return grad


@functools.lru_cache(maxsize=4)
def _grid_features(levels: int):
    """The initiators of the search grid (``c <= a``) and their expected features: they do
    not depend on the data, so each ``levels`` is computed once per process."""
    grid = np.arange(0.0, 1.0 + _GRID_STEP / 2, _GRID_STEP)
    a, b, c = (x.ravel() for x in np.meshgrid(grid, grid, grid, indexing="ij"))
    keep = c <= a
    a, b, c = a[keep], b[keep], c[keep]
    feats = np.stack(expected_features(a, b, c, levels))
    for arr in (a, b, c, feats):
        arr.setflags(write=False)
    return a, b, c, feats


def fit_initiator(features, levels: int) -> tuple[float, float, float, float]:
    """The initiator ``(a, b, c)``, ``0 <= c <= a <= 1``, ``0 <= b <= 1``, whose expected
    features are closest to ``features = (E, H, T, Delta)``: the sum of squared differences
    relative to the targets (PGB's SKG.py objective, [GO12] Sec 4), over a 0.02 grid and
    then polished from the best grid points by SLSQP (PGB: 1000 random COBYLA starts). Targets
    below 1 count as 1 in the denominators. Deterministic. Returns ``(a, b, c, objective)``.
    """
    targets = [float(f) for f in features]
    if len(targets) != 4 or not all(math.isfinite(t) for t in targets):
        raise PrivpubError(f"fit_initiator needs four finite features, got {features!r}")
    levels = check_positive_int(levels, "levels")
    ga, gb, gc, gfeats = _grid_features(levels)
    target = np.array(targets)[:, None]
    values = np.sum(((gfeats - target) / np.maximum(target, 1.0)) ** 2, axis=0)
    values = np.where(np.isfinite(values), values, np.inf)
    top = np.argpartition(values, min(_POLISH, values.size - 1))[:_POLISH]
    starts = top[np.lexsort((top, values[top]))]  # by value, ties by grid index

    def fun(x):  # x = (a, b, t), c = t a keeps c <= a inside a box
        a, b, t = (float(v) for v in x)
        val = _objective(a, b, a * t, levels, targets)
        return val if math.isfinite(val) else 1e300

    first = starts[0]
    best = (float(ga[first]), float(gb[first]), float(gc[first]), float(values[first]))
    for idx in starts:
        a0, b0, c0 = float(ga[idx]), float(gb[idx]), float(gc[idx])
        x0 = np.array([a0, b0, c0 / a0 if a0 > 0 else 0.0])
        res = minimize(fun, x0, jac=lambda x: _gradient(fun, x), method="SLSQP",
                       bounds=[(0.0, 1.0)] * 3, options={"ftol": 1e-14, "maxiter": 500})
        a1, b1, t1 = (float(v) for v in np.clip(res.x, 0.0, 1.0))
        val = fun(np.array([a1, b1, t1]))
        if val < best[3]:
            best = (a1, b1, a1 * t1, val)
    return best


# --------------------------------------------------------------------------- sampling
def _unrank_pairs(index, n00, n11, n01, levels):
    """The node pairs ``(i < j)`` of one probability class, from their ranks ``index``.

    A pair of the class has ``n00`` bit positions where both ids have 0, ``n11`` where both
    have 1 and ``n01 >= 1`` where they differ; it is a multiset permutation of these three
    labels (ranked in lexicographic order) and an orientation of the differing bits, the
    most significant one fixed to ``i: 0, j: 1`` (so ``i < j``). ``index = rank * 2^(n01 -
    1) + orientation``.
    """
    index = np.asarray(index, dtype=np.int64)
    half = 1 << (n01 - 1)
    rank, orient = index // half, index % half
    left = [np.full(index.size, x, dtype=np.int64) for x in (n00, n11, n01)]
    total = np.full(index.size, math.comb(levels, n00) * math.comb(levels - n00, n11),
                    dtype=np.int64)
    i = np.zeros(index.size, dtype=np.int64)
    j = np.zeros(index.size, dtype=np.int64)
    mixed_seen = np.zeros(index.size, dtype=np.int64)
    for pos in range(levels):
        rem = levels - pos
        c0 = total * left[0] // rem
        c1 = total * left[1] // rem
        label = np.where(rank < c0, 0, np.where(rank < c0 + c1, 1, 2))
        rank = rank - np.where(label >= 1, c0, 0) - np.where(label == 2, c1, 0)
        total = np.where(label == 0, c0, np.where(label == 1, c1, total - c0 - c1))
        for lab in range(3):
            left[lab] = left[lab] - (label == lab)
        is_mixed = label == 2
        flip = (orient >> np.maximum(mixed_seen - 1, 0)) & 1
        bit_i = np.where(label == 1, 1, np.where(is_mixed & (mixed_seen > 0), flip, 0))
        bit_j = np.where(label == 1, 1, np.where(is_mixed, 1 - bit_i, 0))
        mixed_seen = mixed_seen + is_mixed
        shift = levels - 1 - pos
        i |= bit_i << shift
        j |= bit_j << shift
    return i, j


def sample_kronecker_graph(a: float, b: float, c: float, levels: int, *,
                           rng: np.random.Generator) -> np.ndarray:
    """Edges ``(i < j)`` of one draw of the SKG on ``2**levels`` nodes: every pair ``i != j``
    independently with probability ``P_ij = prod_t Theta[i_t, j_t]`` (self-loops dropped).

    Exact and sparse ([MPNK14]): the pairs fall into classes by how many bit positions are
    (0, 0), (1, 1) and mixed, all pairs of a class share one probability; the number of
    edges of a class is Binomial(class size, probability) and they are distinct pairs of
    the class chosen uniformly. Time O(k^2 + m k), memory O(m); no ``2^k x 2^k`` matrix.
    """
    levels = check_positive_int(levels, "levels")
    if levels > MAX_LEVELS:
        raise PrivpubError(f"levels must be <= {MAX_LEVELS}, got {levels}")
    theta = [float(v) for v in (a, b, c)]
    if not all(0.0 <= v <= 1.0 for v in theta):
        raise PrivpubError(f"initiator entries must lie in [0, 1], got {theta}")
    a, b, c = theta
    rng = check_rng(rng)
    parts = []
    for n01 in range(1, levels + 1):
        for n00 in range(levels - n01 + 1):
            n11 = levels - n01 - n00
            size = math.comb(levels, n00) * math.comb(levels - n00, n11) << (n01 - 1)
            p = a**n00 * c**n11 * b**n01
            m = int(rng.binomial(size, p)) if p > 0 else 0
            if m == 0:
                continue
            index = rng.choice(size, size=m, replace=False) if m < size else np.arange(size)
            i, j = _unrank_pairs(index, n00, n11, n01, levels)
            parts.append(np.column_stack([i, j]))
    if not parts:
        return np.empty((0, 2), dtype=np.int64)
    edges = np.concatenate(parts)
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))]


# --------------------------------------------------------------------------- mechanism
def _check_options(degree_share, delta, triangle_noise, max_edges):
    share = check_fraction(degree_share, "degree_share")
    delta = check_fraction(delta, "delta")
    if triangle_noise not in TRIANGLE_NOISES:
        raise PrivpubError(f"triangle_noise must be one of {TRIANGLE_NOISES}, "
                           f"got {triangle_noise!r}")
    return share, delta, check_positive_int(max_edges, "max_edges")


def _noisy_triangles(graph, epsilon, delta, triangle_noise, rng, ledger):
    """The triangle count plus noise scaled by its smooth sensitivity; returns (noisy, S)."""
    n = graph.n_nodes
    triangles, best_b = pair_profile(graph)
    if triangle_noise == "laplace":
        # Laplace noise is (eps/2, eps/(2 ln(2/delta)))-admissible [NRS07] Sec 2: adding
        # S / (eps/2) Lap(1) gives (eps, delta)-DP (mir2012; PGB's SKG.py uses delta 0.01)
        beta = epsilon / (2.0 * math.log(2.0 / delta))
        smooth = triangle_smooth_sensitivity(best_b, n, beta)
        label = (f"triangle count: beta-smooth sensitivity (beta = eps/(2 ln(2/delta)), "
                 f"delta = {delta:g}) + Laplace noise ((eps, delta)-DP)")
        noise = laplace_noise(sensitivity=2.0 * smooth, epsilon=epsilon, rng=rng)
    else:
        g = HEAVY_TAIL_GAMMA
        beta = epsilon / (2.0 * (g + 1.0))
        smooth = triangle_smooth_sensitivity(best_b, n, beta)
        label = (f"triangle count: beta-smooth sensitivity (beta = eps/{2 * (g + 1):g}) "
                 f"+ heavy-tailed noise (gamma = {g:g})")
        noise = heavy_tailed_noise(scale=2.0 * (g + 1.0) * smooth / epsilon, gamma=g, rng=rng)
    # the smooth bound is data-dependent: the ledger records no sensitivity number
    ledger.spend(epsilon, label=label, primitive="smooth_sensitivity")
    return float(triangles) + float(noise), smooth


@register_mechanism(
    "priv_skg",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=EDGE_DP,
    paper="mir2012",
    caveat=_caveat,
    source="private moment estimator: Hay et al. degree sequence + smooth-sensitivity "
           "triangles, Gleich & Owen fit",
    audit={"configurations": [{"triangle_noise": "heavy_tailed"},
                              {"triangle_noise": "laplace"}],
           "cost_ms": 25},
    caveat_summary="(epsilon, delta)-edge-DP at triangle_noise='laplace' (the default, "
                   "mir2012's smooth-sensitivity Laplace noise); 'heavy_tailed' is pure",
    blind_spot={"triangle_noise=laplace": (
        "the Laplace release exceeds e^epsilon only on events of probability at most delta "
        "= 0.01, in the far tail of the triangle noise, and reaches the output only through "
        "the fitted initiator and a random Kronecker graph: a few thousand black-box runs "
        "on tiny graphs cannot resolve it (the audit tests pure epsilon)")},
)
def priv_skg(
    graph: Graph,
    *,
    epsilon: float,
    degree_share: float = 0.5,
    delta: float = 0.01,
    triangle_noise: str = "laplace",
    max_edges: int = 10_000_000,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """A PrivSKG synthetic graph: an SKG fitted to noisy moments of ``graph`` (mir2012).

    1. The sorted degree sequence plus ``Lap(2 / eps_1)`` per entry (L1 sensitivity 2
       [HLMJ09]), made non-decreasing by isotonic regression, clipped to ``[0, n - 1]`` and
       rounded; it gives the edge, hairpin and tripin counts (:func:`moment_features`).
    2. The triangle count plus noise scaled by its exact smooth sensitivity
       (:func:`triangle_smooth_sensitivity`) at ``eps_2 = epsilon - eps_1``.
    3. The initiator fitted to the four noisy counts (:func:`fit_initiator`) at ``k =
       floor(log2 n)`` levels, and one exact draw of the SKG (:func:`sample_kronecker_graph`)
       on ``2^k`` nodes, padded with isolated nodes to ``n`` (PGB's SKG.py).

    Parameters
    ----------
    graph : Graph
        The input, at least 4 nodes.
    epsilon : float
        Total budget.
    degree_share : float
        Fraction of ``epsilon`` for the degree sequence (``eps_1``); PGB splits in halves.
    delta : float
        The ``delta`` of ``triangle_noise="laplace"`` (PGB: 0.01).
    triangle_noise : {"laplace", "heavy_tailed"}
        ``"laplace"``: mir2012's ``2 S / eps_2`` Laplace noise with ``beta = eps_2 / (2
        ln(2 / delta))``, (epsilon, delta)-edge-DP. ``"heavy_tailed"``: ``10 S / eps_2``
        times noise of density ``~ 1 / (1 + z^4)`` with ``beta = eps_2 / 10`` ([NRS07]
        Lemma 2.7), pure epsilon-edge-DP.
    max_edges : int
        A fitted model expecting more edges is not sampled
        (:class:`~privpub.errors.NotApplicableError`; it reads the released initiator only).
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional
        Charged ``eps_1`` (degree sequence) and ``eps_2`` (triangles).

    Returns
    -------
    Release
        The synthetic :class:`Graph` on ``n`` nodes; ``info``: the initiator ``a``, ``b``,
        ``c``, ``levels``, the fit's ``objective`` and the four noisy counts (all
        post-processing of the private releases); ``diagnostics``: ``smooth_sensitivity``
        (data-dependent, not private).
    """
    if not isinstance(graph, Graph):
        raise PrivpubError(f"priv_skg needs a Graph, got {type(graph).__name__}")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    share, delta, max_edges = _check_options(degree_share, delta, triangle_noise, max_edges)
    n = graph.n_nodes
    if n < 4:
        raise NotApplicableError(
            f"priv_skg needs a graph of at least 4 nodes (a Kronecker model of k >= 2 "
            f"levels), got {n}"
        )
    ledger = ensure_ledger(ledger, epsilon)
    eps_degrees = epsilon * share
    eps_triangles = epsilon - eps_degrees

    noisy = laplace_mechanism(np.sort(graph.degrees()), sensitivity=2.0, epsilon=eps_degrees,
                              rng=rng, ledger=ledger,
                              label="sorted degree sequence (Hay et al.)")
    degrees = np.rint(np.clip(isotonic_regression(noisy), 0.0, n - 1.0))
    edges, hairpins, tripins = moment_features(degrees)
    triangles, smooth = _noisy_triangles(graph, eps_triangles, delta, triangle_noise, rng,
                                         ledger)

    levels = int(math.floor(math.log2(n)))
    a, b, c, objective = fit_initiator((edges, hairpins, tripins, triangles), levels)
    expected = float(expected_features(a, b, c, levels)[0])
    if expected > max_edges:
        raise NotApplicableError(
            f"the fitted Kronecker model expects {expected:.3g} edges, above max_edges = "
            f"{max_edges}"
        )
    pairs = sample_kronecker_graph(a, b, c, levels, rng=rng)
    out = Graph.from_edges(pairs, n, name=f"priv_skg({graph.name})")
    info = {"a": a, "b": b, "c": c, "levels": float(levels), "objective": objective,
            "edges_noisy": edges, "hairpins_noisy": hairpins, "tripins_noisy": tripins,
            "triangles_noisy": triangles}
    return Release(out, info, {"smooth_sensitivity": smooth})
