"""Verifiers of syntactic privacy claims, run on every release the runner produces.

A mechanism registered as ``k-anonymity`` or ``smooth-k-anonymity`` has each of its outputs
checked here; a release that fails is recorded as an error, never as a result. DP claims
cannot be verified on one output: they are enforced by the ledger and tested by brute-force
sensitivity checks and empirical neighbour tests (:mod:`privpub.testing`).

Binary-matrix releases are checked on their own equivalence classes (rows with equal item
sets; epasto2022 Def. 3.4 / 3.5, memory O(nnz)). A release that is a
:class:`~privpub.types.KAnonymousMatrix` also carries evidence that is checked: its
``clusters`` (each >= k rows, released equal, and for smooth k-anonymity every released item
held by a strict majority of the cluster -- a tie is not a majority) and, with
``suppression=True``, that it is a subset of the input (k-anonymity by suppression).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from privpub.errors import PrivpubError
from privpub.registry import K_ANONYMITY, SMOOTH_K_ANONYMITY
from privpub.types import Kind, as_binary_matrix, kind_of

__all__ = [
    "register_verifier",
    "verify_release",
    "verifier_of",
    "row_classes",
    "is_k_anonymous",
    "is_smooth_k_anonymous",
    "is_subset",
    "cluster_violation",
]

_VERIFIERS: dict[tuple[str, str], Callable] = {}


def register_verifier(notion: str, kind: str):
    """Decorator: ``func(original, release, params) -> None`` raising PrivpubError on failure."""

    def decorate(func):
        _VERIFIERS[(notion, kind)] = func
        return func

    return decorate


def verify_release(notion: str, original, release, params: dict) -> bool | None:
    """Check ``release`` against its claimed notion; True if verified, None if the notion has
    no per-output check (DP, none). Raises PrivpubError if the claim is violated."""
    if notion not in (K_ANONYMITY, SMOOTH_K_ANONYMITY):
        return None
    check = verifier_of(notion, kind_of(release))
    if check is None:
        raise PrivpubError(f"no verifier for {notion} releases of kind {kind_of(release)}")
    check(original, release, params)
    return True


def verifier_of(notion: str, kind: str) -> Callable | None:
    """The registered check of ``notion`` releases of ``kind`` (None: there is none)."""
    check = _VERIFIERS.get((notion, kind))
    if check is None:  # a verifier may live in a module not imported yet (tables: mondrian's)
        from privpub.registry import load_plugins

        load_plugins()
        check = _VERIFIERS.get((notion, kind))
    return check


def _binary(x) -> sp.csr_array:
    """:func:`~privpub.types.as_binary_matrix` of ``x``, or ``x`` itself when it already is
    one (int8 CSR, canonical, sorted, all ones): the checks here only read their inputs, and
    one release is checked several times."""
    if (isinstance(x, sp.csr_array) and x.dtype == np.int8 and x.has_canonical_format
            and (x.nnz == 0 or bool(np.all(x.data == 1)))):
        return x
    return as_binary_matrix(x)


def row_classes(matrix) -> np.ndarray:
    """Equivalence-class id of every row of a binary matrix (equal item sets, equal id).

    Rows are grouped by two random 64-bit hashes of their item sets and their lengths, and
    every row is then compared entry by entry with the first row of its group, so the
    classes are exact: a hash collision between different rows is detected and the classes
    are recomputed from the rows' bytes (the slow way, kept as the reference)."""
    m = _binary(matrix)
    n = m.shape[0]
    if n == 0:
        return np.zeros(0, np.int64)
    lens = np.diff(m.indptr).astype(np.int64)
    h1, h2 = _row_hashes(m)
    order = np.lexsort((np.arange(n), lens, h2, h1))
    new = np.ones(n, bool)
    new[1:] = ((h1[order][1:] != h1[order][:-1]) | (h2[order][1:] != h2[order][:-1])
               | (lens[order][1:] != lens[order][:-1]))
    sorted_ids = np.cumsum(new) - 1
    classes = np.empty(n, np.int64)
    classes[order] = sorted_ids
    rep = order[np.flatnonzero(new)][classes]  # first row of every row's group
    row_of = np.repeat(np.arange(n), lens)
    offset = np.arange(m.nnz) - m.indptr[row_of]
    if np.array_equal(m.indices, m.indices[m.indptr[rep[row_of]] + offset]):
        return classes
    keys = [m.indices[m.indptr[i] : m.indptr[i + 1]].tobytes() for i in range(n)]
    return np.unique(np.array(keys, dtype=object), return_inverse=True)[1].astype(np.int64)


def _row_hashes(m: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """Two hashes of every row's item set: sums of fixed random 64-bit keys of its items."""
    n, d = m.shape
    keys = np.random.default_rng(0xC1A55).integers(0, 2**63 - 1, size=(2, max(d, 1)),
                                                   dtype=np.int64)
    out = np.zeros((2, n), np.int64)
    nonempty = np.diff(m.indptr) > 0
    if nonempty.any():
        with np.errstate(over="ignore"):
            for i in range(2):
                out[i, nonempty] = np.add.reduceat(keys[i][m.indices], m.indptr[:-1][nonempty])
    return out[0], out[1]


def is_k_anonymous(matrix, k: int, *, classes=None) -> bool:
    """Every row's item set is shared by at least ``k`` rows (epasto2022 Def. 3.4).
    ``classes``: :func:`row_classes` of ``matrix``, when the caller has them."""
    counts = np.bincount(row_classes(matrix) if classes is None else classes)
    return bool(counts.size == 0 or counts.min() >= k)


def _majority_held(orig: sp.csr_array, rel: sp.csr_array, groups: np.ndarray) -> bool:
    """Every released item of every row is held in ``orig`` by a strict majority of the
    row's group (``groups``: a group id per row; every row of a group must be released
    equal, which the callers check). Sparse throughout: memory O(nnz)."""
    n_groups = int(groups.max()) + 1 if groups.size else 0
    n = groups.size
    members = sp.csr_array(
        (np.ones(n, dtype=np.int64), (groups, np.arange(n))), shape=(n_groups, n)
    )
    support = sp.csr_array(members @ orig.astype(np.int64))  # group x item: holders
    sizes = np.bincount(groups, minlength=n_groups)
    row_size = np.repeat(sizes, np.diff(support.indptr))
    majority = sp.csr_array(
        ((2 * support.data > row_size).astype(np.int8), support.indices, support.indptr),
        shape=support.shape,
    )
    majority.eliminate_zeros()
    # one representative released row per group
    first = np.full(n_groups, n, dtype=np.int64)
    np.minimum.at(first, groups, np.arange(n, dtype=np.int64))
    released = as_binary_matrix(rel[first])
    backed = released.multiply(majority)
    return int(sp.csr_array(backed).count_nonzero()) == released.nnz


def is_smooth_k_anonymous(original, release, k: int, *, classes=None) -> bool:
    """epasto2022 Def. 3.5: the release is k-anonymous and, within every equivalence class,
    each item given to the class is held by a strict majority of the class in the original
    (the paper's Sec. 5 algorithm adds an item to a cluster "if the majority of the vertices in
    [it] have an edge to" it; a tie is not a majority). ``classes``: :func:`row_classes` of
    ``release``, when the caller has them."""
    orig, rel = _binary(original), _binary(release)
    classes = row_classes(rel) if classes is None else classes
    if not is_k_anonymous(rel, k, classes=classes):
        return False
    if orig.shape != rel.shape:
        return False
    return _majority_held(orig, rel, classes)


def is_subset(original, release) -> bool:
    """Every 1-entry of ``release`` is a 1-entry of ``original`` (k-anonymity *by
    suppression*, epasto2022 Def. 3.4, second condition)."""
    orig, rel = _binary(original), _binary(release)
    if orig.shape != rel.shape:
        return False
    return int(sp.csr_array(rel.multiply(orig)).count_nonzero()) == rel.nnz


def cluster_violation(original, release, clusters, k: int, *, smooth: bool,
                      classes=None) -> str | None:
    """Check a release against the clustering its mechanism reports; None if it holds, else
    what is violated. Each cluster must have >= k rows, all its rows must be released equal,
    and (``smooth``) every released item must be held by a strict majority of the cluster
    in ``original`` (a tie is not a majority)."""
    orig, rel = _binary(original), _binary(release)
    clusters = np.asarray(clusters)
    if clusters.shape != (rel.shape[0],) or not np.issubdtype(clusters.dtype, np.integer):
        return f"the release's clusters are not one integer label per row ({clusters.shape})"
    if clusters.size == 0:
        return None
    if clusters.min() < 0:
        return "negative cluster labels"
    _, groups = np.unique(clusters, return_inverse=True)
    sizes = np.bincount(groups)
    if sizes.min() < k:
        return f"a cluster has {int(sizes.min())} < k = {k} rows"
    classes = row_classes(rel) if classes is None else classes
    # rows of one cluster released equal: every row is in its cluster's first row's class
    first = np.full(sizes.size, groups.size, dtype=np.int64)
    np.minimum.at(first, groups, np.arange(groups.size, dtype=np.int64))
    if not np.array_equal(classes, classes[first][groups]):
        return "rows of one cluster are released differently"
    if smooth and orig.shape == rel.shape and not _majority_held(orig, rel, groups):
        return "a released item is not held by a strict majority of its cluster"
    return None


@register_verifier(K_ANONYMITY, Kind.BINARY_MATRIX)
def _verify_k_binary(original, release, params):
    k = int(params["k"])
    clusters = getattr(release, "clusters", None)
    suppression = getattr(release, "suppression", False)
    original, release = _binary(original), _binary(release)  # once for every check below
    classes = row_classes(release)
    if not is_k_anonymous(release, k, classes=classes):
        raise PrivpubError(
            f"release is not {k}-anonymous: some item set is held by fewer than {k} rows"
        )
    if suppression and not is_subset(original, release):
        raise PrivpubError(
            "release claims k-anonymity by suppression but holds entries the input does not"
        )
    if clusters is not None:
        problem = cluster_violation(original, release, clusters, k, smooth=False,
                                    classes=classes)
        if problem:
            raise PrivpubError(f"release is not {k}-anonymous by its own clusters: {problem}")


@register_verifier(SMOOTH_K_ANONYMITY, Kind.BINARY_MATRIX)
def _verify_smooth_binary(original, release, params):
    k = int(params["k"])
    clusters = getattr(release, "clusters", None)
    original, release = _binary(original), _binary(release)  # once for every check below
    classes = row_classes(release)
    if not is_smooth_k_anonymous(original, release, k, classes=classes):
        raise PrivpubError(
            f"release is not smooth-{k}-anonymous (class size or majority rule violated)"
        )
    if clusters is not None:
        problem = cluster_violation(original, release, clusters, k, smooth=True,
                                    classes=classes)
        if problem:
            raise PrivpubError(
                f"release is not smooth-{k}-anonymous by its own clusters: {problem}"
            )
