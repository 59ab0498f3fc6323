"""Synthetic datasets: every experiment's embedded default, needing no download.

All generators take an explicit :class:`numpy.random.Generator` ``rng`` (same seed, same
data), validate their parameters with clear errors, and are vectorised: the random graphs
and matrices are sampled by *count + positions* (a binomial number of entries per block,
placed uniformly without replacement), never by a dense ``n x n`` array of coin flips.

References
----------
.. [QL12] W. Qardaji, N. Li. Recursive Partitioning and Summarization: A Practical
   Framework for Differentially Private Data Publishing. ASIACCS 2012 (Sec. 4.1: a 1-D
   normal sample, Fig. 1; a 5-D mixture of three Gaussians, Fig. 2).
.. [EEMM22] A. Epasto, H. Esfandiari, V. Mirrokni, A. Munoz Medina. Smooth Anonymity for
   Sparse Graphs. 2022 (Sec. 4.2 and Appendix D: bipartite stochastic block model,
   1024 x 1024, blocks of 64, p = 0.8 inside, q = 0.01 outside).
.. [CL02] F. Chung, L. Lu. Connected components in random graphs with given expected
   degree sequences. Annals of Combinatorics 6, 2002.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import scipy.sparse as sp

from privpub.data.registry import DatasetSpec, register_dataset
from privpub.errors import PrivpubError
from privpub.types import Attribute, Graph, Kind, Schema, Table, as_binary_matrix
from privpub.validation import (
    check_positive_int,
    check_probability,
    check_rng,
)

__all__ = [
    "gaussian_1d", "gaussian_mixture", "bipartite_sbm", "chung_lu", "sample_distinct",
    "expected_degree_edges",
]


def _check_real(value, name: str, *, positive: bool = False) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise PrivpubError(f"{name} must be a real number, got {value!r}") from None
    if isinstance(value, bool) or not np.isfinite(out) or (positive and out <= 0):
        what = "a finite number > 0" if positive else "a finite number"
        raise PrivpubError(f"{name} must be {what}, got {value!r}")
    return out


def sample_distinct(n: int, k: int, *, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random ``k``-subset of ``range(n)``.

    Small or dense cases use a partial permutation; the sparse case (``n > 2**20``,
    ``k <= n / 2``) takes the first ``k`` distinct values of an i.i.d. uniform stream,
    which by symmetry form a uniform ``k``-subset, drawn in vectorised batches, in
    O(k) memory.

    Parameters
    ----------
    n : int
        Population size.
    k : int
        Subset size, ``0 <= k <= n``.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``k`` distinct int64 values in ``[0, n)``, in random order.
    """
    if not 0 <= k <= n:
        raise PrivpubError(f"cannot sample {k} distinct values out of {n}")
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if 2 * k > n or n <= 1 << 20:
        # dense (output is >= n/2 anyway) or small: a partial permutation
        return rng.choice(n, size=k, replace=False, shuffle=False).astype(np.int64)
    got = np.empty(0, dtype=np.int64)
    while got.size < k:
        need = k - got.size
        draw = rng.integers(0, n, size=need + need // 4 + 16, dtype=np.int64)
        both = np.concatenate([got, draw])
        _, first = np.unique(both, return_index=True)
        got = both[np.sort(first)]
    return got[:k]


def expected_degree_edges(weights, *, rng: np.random.Generator) -> np.ndarray:
    """The edges of a Chung-Lu graph with expected degrees ``weights`` [CL02]: each pair
    ``{i, j}``, ``i != j``, independently with probability ``min(1, w_i w_j / sum(w))``
    (networkx's ``expected_degree_graph`` without self-loops).

    Sampled exactly and vectorised by thinning: nodes sorted by weight are grouped into
    bins of weights within a factor 2; for each pair of bins, candidate pairs are drawn at
    the bins' largest probability (binomial count, random distinct positions) and kept with
    probability ``p_ij / p_max`` (at least 1/4). Work O(n + m + bins^2).

    Returns
    -------
    numpy.ndarray
        ``(m, 2)`` int64 node pairs (ids of ``weights``), each pair once.
    """
    w_in = np.asarray(weights, dtype=float)
    if w_in.ndim != 1 or not np.all(np.isfinite(w_in)) or (w_in < 0).any():
        raise PrivpubError("weights must be a 1-d array of finite non-negative numbers")
    order = np.argsort(-w_in, kind="stable")  # non-increasing weights: bins are runs
    w = w_in[order]
    n, total = w.size, w.sum()
    if n < 2 or total <= 0 or w[0] <= 0:
        return np.empty((0, 2), dtype=np.int64)
    positive = int(np.count_nonzero(w > 0))
    level = np.floor(np.log2(w[0] / w[:positive])).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, level[1:] != level[:-1]])
    bounds = np.append(starts, positive)
    us, vs = [], []
    for a in range(starts.size):
        a0, a1 = int(bounds[a]), int(bounds[a + 1])
        for b in range(a, starts.size):  # pairs of bins, not pairs of nodes
            b0, b1 = int(bounds[b]), int(bounds[b + 1])
            p_max = min(1.0, w[a0] * w[b0] / total)
            h, wd = a1 - a0, b1 - b0
            k = int(rng.binomial(h * wd, p_max))
            pos = sample_distinct(h * wd, k, rng=rng)
            u, v = a0 + pos // wd, b0 + pos % wd
            if a == b:  # each unordered pair once: keep the cell with u < v
                keep = u < v
                u, v = u[keep], v[keep]
            p = np.minimum(1.0, w[u] * w[v] / total)
            keep = rng.random(u.size) < p / p_max
            us.append(u[keep])
            vs.append(v[keep])
    if not us:
        return np.empty((0, 2), dtype=np.int64)
    return np.column_stack([order[np.concatenate(us)], order[np.concatenate(vs)]])


# --------------------------------------------------------------------------- tables
def gaussian_1d(*, n: int = 10_000, mean: float = 50.0, std: float = 25.0, rng) -> Table:
    """``n`` draws from a normal distribution, one numeric column ``x`` ([QL12] Fig. 1).

    Parameters
    ----------
    n : int
        Number of rows (paper: 10,000).
    mean, std : float
        Paper: mean 50, standard deviation 25.
    rng : numpy.random.Generator

    Returns
    -------
    Table
        Column ``x`` (float64), numeric with the public domain ``mean +- 5 std``; the rare
        draws beyond it (probability 5.7e-7 each) are clipped to it.
    """
    n = check_positive_int(n, "n")
    mean = _check_real(mean, "mean")
    std = _check_real(std, "std", positive=True)
    rng = check_rng(rng)
    lo, hi = mean - 5 * std, mean + 5 * std
    x = np.clip(rng.normal(mean, std, size=n), lo, hi)
    return Table(pd.DataFrame({"x": x}), Schema((Attribute("x", "numeric", (lo, hi)),)))


def _default_mixture(dim: int, k: int):
    """Means on the diagonal 50 + 30 (c - (k-1)/2) and equicorrelated covariances with
    standard deviation 6 + 3c and correlation 0.5 c / (k-1) for component c."""
    c = np.arange(k)
    means = 50.0 + 30.0 * (c - (k - 1) / 2)[:, None] * np.ones((1, dim))
    stds = 6.0 + 3.0 * c
    rhos = 0.5 * c / max(k - 1, 1)
    eye, ones = np.eye(dim), np.ones((dim, dim))
    covs = np.stack([s**2 * ((1 - r) * eye + r * ones) for s, r in zip(stds, rhos, strict=True)])
    return means, covs


def gaussian_mixture(
    *,
    n: int = 10_000,
    dim: int = 5,
    n_components: int = 3,
    weights=None,
    means=None,
    covariances=None,
    rng,
) -> Table:
    """Rows drawn from a mixture of multivariate Gaussians ([QL12] Fig. 2).

    qardaji2012 builds "a 5-dimensional dataset in which tuples are generated by three
    different processes", Gaussians "chosen to have different means and different
    covariance matrices", and scores how well RPS regions keep each generator's tuples
    together; the column ``component`` records the generator of every row.

    Parameters
    ----------
    n : int
        Number of rows.
    dim : int
        Number of numeric columns ``x0 .. x{dim-1}`` (paper: 5).
    n_components : int
        Number of Gaussians (paper: 3).
    weights : array_like, optional
        Mixture weights (normalised), default equal. Component sizes are multinomial.
    means : array_like, optional
        ``(n_components, dim)``; default component ``c`` centred at ``50 + 30 (c - (k-1)/2)``
        in every coordinate (20, 50, 80 for three components).
    covariances : array_like, optional
        ``(n_components, dim, dim)`` symmetric positive definite; default equicorrelated
        with standard deviation ``6 + 3c`` and correlation ``0.5 c / (k-1)``.
    rng : numpy.random.Generator

    Returns
    -------
    Table
        Numeric columns ``x0..`` (domain: component means +- 5 standard deviations over
        all components, values clipped to it) and the categorical class attribute
        ``component`` (domain ``0..n_components-1``).
    """
    n = check_positive_int(n, "n")
    dim = check_positive_int(dim, "dim")
    k = check_positive_int(n_components, "n_components")
    rng = check_rng(rng)
    default_means, default_covs = _default_mixture(dim, k)
    means = default_means if means is None else np.asarray(means, dtype=float)
    covs = default_covs if covariances is None else np.asarray(covariances, dtype=float)
    if means.shape != (k, dim) or not np.all(np.isfinite(means)):
        raise PrivpubError(f"means must be a finite ({k}, {dim}) array, got shape {means.shape}")
    if covs.shape != (k, dim, dim) or not np.allclose(covs, covs.transpose(0, 2, 1)):
        raise PrivpubError(f"covariances must be {k} symmetric {dim} x {dim} matrices, "
                           f"got shape {covs.shape}")
    if np.any(np.linalg.eigvalsh(covs)[:, 0] <= 0):
        raise PrivpubError("covariances must be positive definite")
    if weights is None:
        w = np.full(k, 1.0 / k)
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != (k,) or np.any(~np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise PrivpubError(f"weights must be {k} non-negative numbers with a positive sum")
        w = w / w.sum()
    counts = rng.multinomial(n, w)
    component = np.repeat(np.arange(k), counts)
    chol = np.linalg.cholesky(covs)
    z = rng.standard_normal((n, dim))
    x = means[component] + np.einsum("nij,nj->ni", chol[component], z)
    order = rng.permutation(n)  # rows in random order, not grouped by component
    x, component = x[order], component[order]
    sd = np.sqrt(np.diagonal(covs, axis1=1, axis2=2))
    lo, hi = (means - 5 * sd).min(axis=0), (means + 5 * sd).max(axis=0)
    x = np.clip(x, lo, hi)
    cols = [f"x{j}" for j in range(dim)]
    df = pd.DataFrame(x, columns=cols)
    df["component"] = pd.Categorical(component, categories=list(range(k)))
    attrs = [Attribute(c, "numeric", (float(lo[j]), float(hi[j]))) for j, c in enumerate(cols)]
    attrs.append(Attribute("component", "categorical", tuple(range(k))))
    return Table(df, Schema(tuple(attrs), class_attribute="component"))


# --------------------------------------------------------------------------- matrices
def _blocks(n: int, size: int) -> np.ndarray:
    """Block boundaries 0, size, 2 size, ..., n (the last block may be smaller)."""
    return np.append(np.arange(0, n, size), n)


def bipartite_sbm(
    *,
    n_rows: int,
    n_cols: int,
    block_size: int,
    p_in: float,
    p_out: float,
    rng,
) -> sp.csr_array:
    """A bipartite stochastic block model as a users x items binary matrix ([EEMM22] 4.2).

    Rows and columns are cut into consecutive blocks of ``block_size`` (the last may be
    smaller); row block ``i`` corresponds to column block ``i``. Every entry is 1
    independently, with probability ``p_in`` inside corresponding blocks and ``p_out``
    elsewhere. Sampled per block as a binomial count of ones at uniformly random distinct
    positions: memory O(number of ones + block size), never ``n_rows x n_cols``.

    Parameters
    ----------
    n_rows, n_cols : int
        Matrix shape (epasto2022: 1024 x 1024).
    block_size : int
        Block size (epasto2022: 64).
    p_in, p_out : float
        Probabilities in [0, 1] (epasto2022: 0.8 and 0.01).
    rng : numpy.random.Generator

    Returns
    -------
    scipy.sparse.csr_array
        int8 0/1, shape ``(n_rows, n_cols)``.
    """
    n_rows = check_positive_int(n_rows, "n_rows")
    n_cols = check_positive_int(n_cols, "n_cols")
    block_size = check_positive_int(block_size, "block_size")
    p_in = check_probability(p_in, "p_in")
    p_out = check_probability(p_out, "p_out")
    rng = check_rng(rng)
    rb, cb = _blocks(n_rows, block_size), _blocks(n_cols, block_size)
    rows, cols = [], []
    for i in range(rb.size - 1):  # a loop over row blocks, not entries
        r0, r1 = int(rb[i]), int(rb[i + 1])
        h = r1 - r0
        c0, c1 = (int(cb[i]), int(cb[i + 1])) if i + 1 < cb.size else (n_cols, n_cols)
        w_in = c1 - c0
        # inside the corresponding block
        k = int(rng.binomial(h * w_in, p_in)) if w_in else 0
        pos = sample_distinct(h * w_in, k, rng=rng)
        rows.append(r0 + pos // max(w_in, 1))
        cols.append(c0 + pos % max(w_in, 1))
        # outside it: the row block's other n_cols - w_in columns
        w_out = n_cols - w_in
        k = int(rng.binomial(h * w_out, p_out)) if w_out else 0
        pos = sample_distinct(h * w_out, k, rng=rng)
        col = pos % max(w_out, 1)
        rows.append(r0 + pos // max(w_out, 1))
        cols.append(np.where(col < c0, col, col + w_in))
    r, c = np.concatenate(rows), np.concatenate(cols)
    m = sp.csr_array((np.ones(r.size, dtype=np.int8), (r, c)), shape=(n_rows, n_cols))
    return as_binary_matrix(m)


# --------------------------------------------------------------------------- graphs
def chung_lu(
    *,
    n: int = 10_000,
    exponent: float = 2.5,
    average_degree: float = 10.0,
    rng,
) -> Graph:
    """A Chung-Lu random graph with power-law expected degrees [CL02].

    Node ``i`` gets weight ``w_i`` proportional to ``(i + 1) ** (-1 / (exponent - 1))``,
    scaled so that the weights average ``average_degree``; each pair ``{i, j}``, ``i != j``,
    is an edge independently with probability ``min(1, w_i w_j / sum(w))``. Expected
    degrees are ``w_i`` (a little less for the few nodes where the ``min`` binds), so the
    degree distribution has a power-law tail with the given exponent.

    Sampled exactly and vectorised by thinning: nodes are grouped into bins of weights
    within a factor 2; for each pair of bins, candidate pairs are drawn at the bins' largest
    probability (binomial count, random distinct positions) and kept with probability
    ``p_ij / p_max`` (at least 1/4). Work O(n + m + bins^2).

    Parameters
    ----------
    n : int
        Number of nodes (>= 2).
    exponent : float
        Power-law exponent, > 2.
    average_degree : float
        Target mean degree, in (0, n - 1).
    rng : numpy.random.Generator

    Returns
    -------
    Graph
        Node 0 has the largest weight; isolated nodes are kept.
    """
    n = check_positive_int(n, "n")
    if n < 2:
        raise PrivpubError(f"n must be >= 2, got {n}")
    exponent = _check_real(exponent, "exponent")
    if exponent <= 2:
        raise PrivpubError(f"exponent must be > 2 (finite mean degree), got {exponent}")
    average_degree = _check_real(average_degree, "average_degree", positive=True)
    if average_degree >= n - 1:
        raise PrivpubError(f"average_degree must be < n - 1 = {n - 1}, got {average_degree}")
    rng = check_rng(rng)
    w = (np.arange(1, n + 1, dtype=float)) ** (-1.0 / (exponent - 1.0))
    w *= average_degree * n / w.sum()
    edges = expected_degree_edges(w, rng=rng)
    return Graph.from_edges(edges, n)


# --------------------------------------------------------------------------- registry
def _networkx_graph(factory: str):
    import networkx as nx

    g = getattr(nx, factory)()
    return Graph.from_networkx(g)


_SMALL_GRAPHS = {
    "karate": ("karate_club_graph", 34, 78,
               "Zachary's karate club (W. Zachary, J. Anthropological Research 1977), from "
               "networkx: 34 members, 78 friendships (weights ignored). A tiny graph for "
               "smoke tests and brute-force checks."),
    "les_miserables": ("les_miserables_graph", 77, 254,
                       "Co-appearances of the characters of Les Miserables (D. Knuth, The "
                       "Stanford GraphBase 1993), from networkx: 77 nodes (relabelled in "
                       "sorted name order), 254 edges (weights ignored)."),
    "florentine_families": ("florentine_families_graph", 15, 20,
                            "Marriage ties among Renaissance Florentine families (Breiger & "
                            "Pattison, Social Networks 1986), from networkx: 15 nodes "
                            "(sorted names), 20 edges."),
}

for _name, (_factory, _n, _m, _desc) in _SMALL_GRAPHS.items():
    register_dataset(DatasetSpec(
        name=_name, kind=Kind.GRAPH, description=_desc, synthetic=True,
        licence="Bundled with networkx (BSD-3-Clause); cite the original study.",
        expected={"n_nodes": _n, "n_edges": _m},
        loader=functools.partial(lambda factory, rng: _networkx_graph(factory), _factory),
    ))

register_dataset(DatasetSpec(
    name="gaussian_1d",
    kind=Kind.TABLE,
    description="Synthetic 1-D normal sample, one numeric column 'x': 10,000 draws with "
                "mean 50 and standard deviation 25, as in qardaji2012 Sec. 4.1 / Fig. 1.",
    synthetic=True,
    licence="Generated.",
    expected={"n_rows": 10_000, "n_cols": 1},
    defaults={"n": 10_000, "mean": 50.0, "std": 25.0},
    papers=("qardaji2012",),
    loader=gaussian_1d,
))

register_dataset(DatasetSpec(
    name="gaussian_mixture",
    kind=Kind.TABLE,
    description="Synthetic 5-D mixture of three Gaussians with different means and "
                "covariances, 10,000 rows, numeric columns x0..x4 and the class attribute "
                "'component' naming each row's generator, as in qardaji2012 Sec. 4.1 / "
                "Fig. 2 (the paper does not give its means and covariances; see "
                "privpub.data.gaussian_mixture for ours).",
    synthetic=True,
    licence="Generated.",
    expected={"n_rows": 10_000, "n_cols": 6},
    defaults={"n": 10_000, "dim": 5, "n_components": 3},
    papers=("qardaji2012",),
    loader=gaussian_mixture,
))

register_dataset(DatasetSpec(
    name="sbm_epasto",
    kind=Kind.BINARY_MATRIX,
    description="epasto2022's 'stochastic' dataset: a bipartite stochastic block model, "
                "1024 x 1024 binary matrix, blocks of 64 (16 corresponding block pairs), "
                "p_in 0.8, p_out 0.01 (expected ones: 52,429 inside + 9,830 outside).",
    synthetic=True,
    licence="Generated.",
    expected={"shape": (1024, 1024)},
    defaults={"n_rows": 1024, "n_cols": 1024, "block_size": 64, "p_in": 0.8, "p_out": 0.01},
    papers=("epasto2022",),
    loader=bipartite_sbm,
))

register_dataset(DatasetSpec(
    name="sbm_small",
    kind=Kind.BINARY_MATRIX,
    description="A small bipartite stochastic block model for smoke tests: 128 x 128, "
                "blocks of 16, p_in 0.8, p_out 0.05.",
    synthetic=True,
    licence="Generated.",
    expected={"shape": (128, 128)},
    defaults={"n_rows": 128, "n_cols": 128, "block_size": 16, "p_in": 0.8, "p_out": 0.05},
    papers=("epasto2022",),
    loader=bipartite_sbm,
))

register_dataset(DatasetSpec(
    name="chung_lu",
    kind=Kind.GRAPH,
    description="Synthetic power-law graph (Chung-Lu expected-degree model): 10,000 nodes, "
                "degree exponent 2.5, average degree 10. A download-free stand-in for the "
                "papers' social graphs.",
    synthetic=True,
    licence="Generated.",
    expected={"n_nodes": 10_000},
    defaults={"n": 10_000, "exponent": 2.5, "average_degree": 10.0},
    papers=("day2016", "sala2011", "farias2021"),
    loader=chung_lu,
))
