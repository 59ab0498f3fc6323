"""Verifiers of syntactic privacy claims, run on every release the runner produces.

A mechanism registered as ``k-anonymity`` or ``smooth-k-anonymity`` has each of its outputs
checked here; a release that fails is recorded as an error, never as a result. DP claims
cannot be verified on one output: they are enforced by the ledger and tested by brute-force
sensitivity checks and empirical neighbour tests (:mod:`privpub.testing`).
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
    "row_classes",
    "is_k_anonymous",
    "is_smooth_k_anonymous",
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
    check = _VERIFIERS.get((notion, kind_of(release)))
    if check is None:
        raise PrivpubError(f"no verifier for {notion} releases of kind {kind_of(release)}")
    check(original, release, params)
    return True


def row_classes(matrix) -> np.ndarray:
    """Equivalence-class id of every row of a binary matrix (equal item sets, equal id)."""
    m = as_binary_matrix(matrix)
    keys = [m.indices[m.indptr[i] : m.indptr[i + 1]].tobytes() for i in range(m.shape[0])]
    _, inverse = np.unique(np.array(keys, dtype=object), return_inverse=True)
    return inverse


def is_k_anonymous(matrix, k: int) -> bool:
    """Every row's item set is shared by at least ``k`` rows (epasto2022 Def. 3.4)."""
    counts = np.bincount(row_classes(matrix))
    return bool(counts.size == 0 or counts.min() >= k)


def is_smooth_k_anonymous(original, release, k: int) -> bool:
    """epasto2022 Def. 3.5: the release is k-anonymous and, within every equivalence class,
    each item given to the class is held by a strict majority of the class in the original
    (the paper's Sec. 5 algorithm adds an item to a cluster "if the majority of the vertices in
    [it] have an edge to" it; a tie is not a majority)."""
    if not is_k_anonymous(release, k):
        return False
    orig, rel = as_binary_matrix(original), as_binary_matrix(release)
    if orig.shape != rel.shape:
        return False
    classes = row_classes(rel)
    members = sp.csr_array(
        (np.ones(classes.size), (classes, np.arange(classes.size))),
        shape=(classes.max() + 1, classes.size),
    )
    support = (members @ orig.astype(float)).toarray()  # class x item: members holding the item
    sizes = np.bincount(classes)
    for c in range(sizes.size):
        row = np.flatnonzero(classes == c)[0]
        items = rel.indices[rel.indptr[row] : rel.indptr[row + 1]]
        if np.any(2 * support[c, items] <= sizes[c]):
            return False
    return True


@register_verifier(K_ANONYMITY, Kind.BINARY_MATRIX)
def _verify_k_binary(original, release, params):
    k = int(params["k"])
    if not is_k_anonymous(release, k):
        raise PrivpubError(
            f"release is not {k}-anonymous: some item set is held by fewer than {k} rows"
        )


@register_verifier(SMOOTH_K_ANONYMITY, Kind.BINARY_MATRIX)
def _verify_smooth_binary(original, release, params):
    k = int(params["k"])
    if not is_smooth_k_anonymous(original, release, k):
        raise PrivpubError(
            f"release is not smooth-{k}-anonymous (class size or majority rule violated)"
        )
