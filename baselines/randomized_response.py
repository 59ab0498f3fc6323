"""Randomized response on a sparse binary matrix: the DP baseline of epasto2022.

epasto2022 (Sec 4.1, Algorithm 1) releases a users x items binary matrix by replacing every
entry, independently with probability ``p``, by a uniformly random bit. A 1-entry therefore
becomes 0, and a 0-entry becomes 1, with probability ``q = p / 2``; every other entry is
kept. Appendix B.1 shows this is epsilon-edge-DP for ``p = 2 / (1 + e^eps)``, i.e.
``q = 1 / (1 + e^eps)``; node-DP (a whole row of ``|F|`` entries may change) needs the
per-entry budget ``eps / |F|`` (Sec 4.1), which drives ``q`` to 1/2 exponentially fast in
``|F|`` -- the paper's point that DP release of sparse matrices destroys utility (Fig 3c).

The implementation never densifies the matrix: memory is linear, and time linear up to a
log factor, in the number of input 1-entries plus the number of output entries.

References
----------
.. [EEMM22] A. Epasto, H. Esfandiari, V. Mirrokni, A. Munoz Medina. Smooth Anonymity for
   Sparse Graphs. 2022, arXiv:2207.06358. Algorithm 1, Sec 4.1, Appendix B.1, Fig 3c.
.. [War65] S. L. Warner. Randomized response: a survey technique for eliminating evasive
   answer bias. JASA 60(309), 1965.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.special import digamma, expit

from privpub.errors import DataError, PrivpubError
from privpub.ledger import PrivacyLedger, ensure_ledger
from privpub.noise import flip_count, flips
from privpub.registry import EDGE_DP, NODE_DP, register_mechanism
from privpub.types import Kind, as_binary_matrix
from privpub.validation import check_epsilon, check_positive_int, check_rng

__all__ = [
    "randomized_response",
    "randomized_response_edge",
    "randomized_response_node",
    "flip_probability",
]

#: Default cap on the expected number of output 1-entries: the result takes about 5 bytes
#: per entry (0.25 GB), the computation peaks at about 40 bytes per entry (2 GB).
DEFAULT_MAX_OUTPUT_ENTRIES = 50_000_000

#: Largest number of candidate positions drawn at once by the zero-entry sampler.
_MAX_BATCH = 1 << 25


def flip_probability(epsilon_per_entry: float) -> float:
    """Probability ``q = p / 2 = 1 / (1 + e^eps)`` that randomized response flips one entry.

    Algorithm 1 of [EEMM22] replaces an entry by a uniform bit with probability
    ``p = 2 / (1 + e^eps)`` (Appendix B.1), so it flips with probability ``p / 2``. The
    likelihood ratio of the two outcomes of one entry is then ``(1 - q) / q = e^eps``.
    Computed as ``expit(-eps)``, which is accurate for tiny and huge ``eps``.

    *Privacy* (Appendix B.1, Theorem B.1). Entries are randomised independently at
    per-entry budget ``e0``, so for any output ``Y`` and inputs ``D, D'`` differing in a set
    ``C`` of cells, ``P[Y | D] / P[Y | D'] = prod_{c in C} P[Y_c | D_c] / P[Y_c | D'_c] <=
    (e^e0)^|C|``. Edge-DP: ``|C| = 1``, ``e0 = eps``. Node-DP: ``|C| <= |F|``, ``e0 = eps /
    |F|``.
    """
    return float(expit(-check_epsilon(epsilon_per_entry, name="per-entry epsilon")))


def _check_matrix(matrix) -> sp.csr_array:
    """Validate ``matrix`` as a 2-D 0/1 matrix without touching the caller's object."""
    if matrix is None:
        raise DataError("randomized response needs a users x items binary matrix, got None")
    if not sp.issparse(matrix):
        try:
            matrix = np.asarray(matrix)
        except Exception as exc:  # ragged lists and the like
            raise DataError(f"cannot read the input as a binary matrix: {exc}") from exc
        if matrix.ndim != 2:
            raise DataError(f"a binary matrix must be 2-D, got shape {matrix.shape}")
        if matrix.dtype == object or not (
            np.issubdtype(matrix.dtype, np.number) or matrix.dtype == bool
        ):
            raise DataError(f"a binary matrix must be numeric, got dtype {matrix.dtype}")
    m = as_binary_matrix(matrix)
    n_rows, n_cols = (int(s) for s in m.shape)
    if n_rows * n_cols >= 2**62:
        raise DataError(f"a {n_rows} x {n_cols} matrix has too many cells to index with int64")
    return m


def _linear_indices(m: sp.csr_array) -> np.ndarray:
    """Row-major linear indices ``row * n_cols + col`` of the 1-entries (sorted ascending,
    since ``m`` is canonical CSR with sorted indices)."""
    rows = np.repeat(np.arange(m.shape[0], dtype=np.int64), np.diff(m.indptr))
    return rows * np.int64(m.shape[1]) + m.indices.astype(np.int64)


@njit(cache=True)
def _bucket_sort(values, upper):
    """``np.sort(values)`` for integers spread evenly over ``[0, upper)``: a counting pass
    into about ``n / 8`` buckets by value (the bucket index only grows with the value, so the
    buckets in order are the sorted array), then an insertion sort inside each bucket.
    Linear time on uniform draws, where ``np.sort`` is ``n log n`` (2x faster at 3e7)."""
    n = values.size
    n_buckets = max(1, n // 8)
    scale = n_buckets / upper
    start = np.zeros(n_buckets + 1, np.int64)
    for i in range(n):
        start[min(int(values[i] * scale), n_buckets - 1) + 1] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    out = np.empty(n, values.dtype)
    for i in range(n):
        b = min(int(values[i] * scale), n_buckets - 1)
        out[fill[b]] = values[i]
        fill[b] += 1
    for b in range(n_buckets):
        lo = start[b]
        for i in range(lo + 1, start[b + 1]):
            v = out[i]
            j = i - 1
            while j >= lo and out[j] > v:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = v
    return out


def _sorted_unique(values: np.ndarray, upper: int | None = None, *, runs: bool = False
                   ) -> np.ndarray:
    """Sorted distinct values (sort + adjacent difference; faster here than ``np.unique``).
    ``upper``: the values are uniform draws from ``[0, upper)``, sorted by
    :func:`_bucket_sort`; ``runs``: they are a few sorted runs, merged by the stable sort
    (timsort) in linear time."""
    if upper is not None and values.size >= 4096:
        values = _bucket_sort(values, upper)
    else:
        values = np.sort(values, kind="stable" if runs else None)
    if values.size:
        keep = np.empty(values.size, dtype=bool)
        keep[0] = True
        np.not_equal(values[1:], values[:-1], out=keep[1:])
        values = values[keep]
    return values


def _in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``values`` occur in the sorted unique array ``sorted_set``."""
    if sorted_set.size == 0:
        return np.zeros(values.shape, dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    np.minimum(pos, sorted_set.size - 1, out=pos)
    return sorted_set[pos] == values


def _sample_zero_positions(
    ones: np.ndarray, n_cells: int, k: int, rng: np.random.Generator, *, method: str = "auto"
) -> np.ndarray:
    """A uniformly random ``k``-subset of ``{0, ..., n_cells - 1}`` minus ``ones``, sorted.

    ``ones`` is a sorted array of distinct cell indices. Two exact methods:

    ``"reject"`` (used when at least half the cells are zeros)
        Draw i.i.d. uniform cells in batches, drop those that hit ``ones``, and collect the
        *distinct* survivors, topping up with new batches until at least ``k`` are
        collected; then drop a uniformly random subset of the surplus. Exactness: every
        drawn value is a fresh uniform cell independent of all earlier draws, and the
        decision to draw more depends only on how many distinct zeros were collected, which
        is invariant under permutations of the zero cells. So for any permutation of the
        zero cells the collected set has the same law as its image: given its size ``s`` it
        is a uniformly random ``s``-subset of the zeros, and a uniformly random ``k``-subset
        of that is a uniformly random ``k``-subset of the zeros. Each draw is a new zero
        with probability at least about ``1/2 - k / n_cells``, so the expected work is
        ``O(k log k)`` (``k`` is at most about half the zeros, see
        :func:`randomized_response`); the surplus is a few percent of ``k``.
    ``"enumerate"`` (used when most cells are ones, so ``n_cells <= 2 * len(ones)``)
        List the zero cells and draw ``k`` of them without replacement
        (:meth:`numpy.random.Generator.choice`); memory ``O(n_cells) = O(len(ones))``.
    """
    n_zero = n_cells - ones.size
    if not 0 <= k <= n_zero:
        raise PrivpubError(f"cannot choose {k} of {n_zero} zero cells")  # internal error
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if method == "auto":
        method = "reject" if 2 * n_zero >= n_cells else "enumerate"
    if method == "enumerate":
        free = np.ones(n_cells, dtype=bool)
        free[ones] = False
        zeros = np.flatnonzero(free).astype(np.int64)
        return np.sort(rng.choice(zeros, size=k, replace=False, shuffle=False))
    if method != "reject":
        raise PrivpubError(f"unknown sampling method {method!r}")
    chosen = np.empty(0, dtype=np.int64)  # sorted, distinct zero cells
    while chosen.size < k:
        need = k - chosen.size
        left = n_zero - chosen.size
        # Expected draws to collect `need` new distinct cells out of `left` when each draw is
        # uniform over n_cells: n_cells * (H(left) - H(left - need)). A little extra makes
        # one round enough almost always; the loop tops up otherwise.
        expected = n_cells * float(digamma(left + 1) - digamma(left - need + 1))
        size = int(min(_MAX_BATCH, math.ceil(1.05 * expected + 4.0 * math.sqrt(expected) + 16)))
        cand = _sorted_unique(rng.integers(0, n_cells, size=size, dtype=np.int64), n_cells)
        cand = cand[~_in_sorted(cand, ones)]  # sorted keys keep this lookup cache-friendly
        if chosen.size:
            cand = _sorted_unique(np.concatenate([chosen, cand]), runs=True)
        chosen = cand
    surplus = chosen.size - k
    if surplus:
        drop = np.zeros(chosen.size, dtype=bool)
        drop[rng.choice(chosen.size, size=surplus, replace=False, shuffle=False)] = True
        chosen = chosen[~drop]
    return chosen


def randomized_response(
    matrix,
    *,
    epsilon: float,
    unit: str = "edge",
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
    max_output_entries: int = DEFAULT_MAX_OUTPUT_ENTRIES,
) -> sp.csr_array:
    """Randomized response on a sparse binary matrix (Algorithm 1 of [EEMM22]).

    Every entry is independently replaced, with probability ``p``, by a uniformly random
    bit; equivalently it flips with probability ``q = p / 2`` (:func:`flip_probability`,
    with the privacy argument) and is kept otherwise. Drawn without densifying the matrix
    (:func:`_flip_entries`), with exactly the law of Algorithm 1.

    Parameters
    ----------
    matrix : array_like or scipy sparse, shape (n_users, n_items)
        A 0/1 matrix (rows: users, columns: items/features |F|). Not modified.
    epsilon : float
        Total privacy budget, > 0.
    unit : {"edge", "node"}
        The neighbouring relation protected. ``"edge"``: matrices differing in one entry
        (Definition 3.1); per-entry budget ``eps``, ``p = 2 / (1 + e^eps)`` (Appendix B.1).
        ``"node"``: matrices differing in one whole row (Definitions 3.2, 3.3); a row has
        ``|F| = n_items`` entries, so the per-entry budget is ``eps / |F|`` (Sec 4.1).
    rng : numpy.random.Generator
        Source of randomness (a seed or SeedSequence is accepted and normalised).
    ledger : PrivacyLedger, optional
        Budget account with total ``epsilon``; the whole ``epsilon`` is spent through it in
        one entry recording the per-entry budget and the sensitivity (number of entries
        one neighbour step can change: 1 for edge, ``|F|`` for node).
    max_output_entries : int
        Refuse to run if the *expected* number of output 1-entries exceeds this. At small
        epsilon about a fraction ``q`` of all ``n_users * n_items`` cells become 1, so a
        large sparse matrix turns dense.

    Returns
    -------
    scipy.sparse.csr_array
        The released 0/1 matrix, same shape, ``int8`` data, sorted indices.

    Raises
    ------
    PrivpubError
        On a bad ``epsilon``, ``unit`` or ``max_output_entries``, an input that is not a
        2-D 0/1 matrix, a ledger whose total is not ``epsilon`` (or that cannot pay), or an
        expected output larger than ``max_output_entries``.

    Examples
    --------
    >>> import numpy as np
    >>> out = randomized_response(np.eye(3, dtype=int), epsilon=50.0, rng=np.random.default_rng(0))
    >>> out.toarray()
    array([[1, 0, 0],
           [0, 1, 0],
           [0, 0, 1]], dtype=int8)
    """
    epsilon = check_epsilon(epsilon)
    if unit not in ("edge", "node"):
        raise PrivpubError(f"unit must be 'edge' or 'node', got {unit!r}")
    max_output_entries = check_positive_int(max_output_entries, "max_output_entries")
    rng = check_rng(rng)
    m = _check_matrix(matrix)
    # the number of entries one neighbouring step can change
    entries_per_step = 1 if unit == "edge" else max(int(m.shape[1]), 1)
    q = flip_probability(epsilon / entries_per_step)
    _check_output_size(m, q, epsilon=epsilon, unit=unit, max_output_entries=max_output_entries)
    _spend(ensure_ledger(ledger, epsilon), epsilon, unit, entries_per_step, q)
    return _flip_entries(m, q, rng)


def _spend(ledger: PrivacyLedger, epsilon: float, unit: str, entries_per_step: int,
           q: float) -> None:
    """Spend all of ``epsilon`` in one entry, recording the per-entry budget, the flip
    probability ``q`` and the sensitivity (entries one neighbouring step can change)."""
    eps_entry = epsilon / entries_per_step
    ledger.spend(
        epsilon,
        label=f"randomized response ({unit} unit, per-entry epsilon {eps_entry:.6g}, "
        f"flip probability {q:.6g})",
        sensitivity=float(entries_per_step),
        primitive="randomized_response",
    )


def _check_output_size(m: sp.csr_array, q: float, *, epsilon: float, unit: str,
                       max_output_entries: int) -> None:
    """A :class:`~privpub.errors.PrivpubError` if flipping the entries of ``m`` with
    probability ``q`` would output more than ``max_output_entries`` ones in expectation."""
    n_rows, n_cols = (int(s) for s in m.shape)
    nnz = int(m.nnz)
    n_zero = n_rows * n_cols - nnz
    expected_out = nnz * (1.0 - q) + n_zero * q
    if expected_out > max_output_entries:
        raise PrivpubError(
            f"randomized response ({unit}-DP, epsilon={epsilon:g}) on a {n_rows} x {n_cols} "
            f"matrix with {nnz} ones would output about {expected_out:.3g} ones: each of the "
            f"{n_zero} zero cells becomes 1 with probability {q:.3g}, so a sparse matrix "
            f"turns dense at small epsilon. This exceeds max_output_entries="
            f"{max_output_entries} (the computation needs about 40 bytes of memory per "
            f"output entry, ~{40 * expected_out / 1e9:.3g} GB here). Use a larger epsilon or "
            f"a smaller matrix, or raise the limit by passing max_output_entries=<n> "
            f"(on the command line: mechanism=randomized_response_{unit} "
            f"mechanism.max_output_entries=<n>)."
        )


def _flip_entries(m: sp.csr_array, q: float, rng: np.random.Generator) -> sp.csr_array:
    """``m`` with every entry flipped independently with probability ``q``, never dense.

    Each 1-entry is kept with probability ``1 - q`` (one uniform draw per 1-entry). The zero
    cells are i.i.d. Bernoulli(``q``); the law of such a vector is: the number of successes
    ``K ~ Binomial(#zeros, q)``, and given ``K`` the set of successes is a uniformly random
    ``K``-subset of the zero cells, drawn exactly by :func:`_sample_zero_positions`. Hence the
    output has exactly the law of Algorithm 1, in ``O((nnz + K) log(nnz + K))`` expected time
    and ``O(nnz + K)`` memory.
    """
    n_rows, n_cols = (int(s) for s in m.shape)
    n_cells = n_rows * n_cols
    nnz = int(m.nnz)
    ones = _linear_indices(m)
    kept = ones[~flips(q, rng=rng, size=nnz)]  # each 1 stays with probability 1 - q
    k = flip_count(n_cells - nnz, q, rng=rng)
    added = _sample_zero_positions(ones, n_cells, k, rng)
    # disjoint, each sorted: the stable sort (timsort) merges the two runs in linear time
    cells = np.sort(np.concatenate([kept, added]), kind="stable")
    return _from_linear(cells, n_rows, n_cols)


def _from_linear(cells: np.ndarray, n_rows: int, n_cols: int) -> sp.csr_array:
    """Canonical int8 CSR matrix with 1s at the sorted row-major linear indices ``cells``."""
    if n_cols == 0:
        return sp.csr_array((n_rows, n_cols), dtype=np.int8)
    rows = cells // n_cols
    cols = cells - rows * n_cols
    small = max(n_cols, cells.size) < np.iinfo(np.int32).max
    idx_dtype = np.int32 if small else np.int64
    indptr = np.zeros(n_rows + 1, dtype=idx_dtype)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    out = sp.csr_array(
        (np.ones(cells.size, dtype=np.int8), cols.astype(idx_dtype), indptr),
        shape=(n_rows, n_cols),
    )
    out.has_sorted_indices = True
    return out


@register_mechanism(
    "randomized_response_edge",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=EDGE_DP,
    paper="epasto2022",
    role="baseline",
    audit={"cost_ms": 1.4},
)
def randomized_response_edge(
    matrix,
    *,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
    max_output_entries: int = DEFAULT_MAX_OUTPUT_ENTRIES,
) -> sp.csr_array:
    """Randomized response, epsilon-edge-DP: each entry flips w.p. 1/(1+e^eps) [EEMM22].

    Algorithm 1 with ``p = 2 / (1 + e^eps)`` (Sec 4.1, Appendix B.1). See
    :func:`randomized_response` for parameters, errors and the sampling argument.
    """
    return randomized_response(
        matrix,
        epsilon=epsilon,
        unit="edge",
        rng=rng,
        ledger=ledger,
        max_output_entries=max_output_entries,
    )


@register_mechanism(
    "randomized_response_node",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=NODE_DP,
    paper="epasto2022",
    role="baseline",
    audit={"cost_ms": 1.4},
)
def randomized_response_node(
    matrix,
    *,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
    max_output_entries: int = DEFAULT_MAX_OUTPUT_ENTRIES,
) -> sp.csr_array:
    """Randomized response, epsilon-node-DP: each entry flips w.p. 1/(1+e^(eps/|F|)) [EEMM22].

    Algorithm 1 at per-entry budget ``eps / |F|`` (``|F|`` = number of columns), so a whole
    row may change (Sec 4.1). See :func:`randomized_response` for details.
    """
    return randomized_response(
        matrix,
        epsilon=epsilon,
        unit="node",
        rng=rng,
        ledger=ledger,
        max_output_entries=max_output_entries,
    )
