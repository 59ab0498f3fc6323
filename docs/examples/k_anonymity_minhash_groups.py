"""k-anonymity by suppression for a users x items binary matrix: rows sorted by min-hash,
cut into groups of k, each group released as the items all its rows hold.

A privpub plug-in (one file, privpub's public API only); docs/mechanism-authors.md explains
every line. Run it with ``plugins=[path/to/k_anonymity_minhash_groups.py]``.
"""

import numpy as np
import scipy.sparse as sp

from privpub.errors import NotApplicableError
from privpub.registry import K_ANONYMITY, register_mechanism
from privpub.types import KAnonymousMatrix, Kind, Release, as_binary_matrix
from privpub.validation import check_k


def minhash_groups(matrix: sp.csr_array, k: int, rng) -> np.ndarray:
    """A group id per row: rows sorted by their min-hash (the smallest rank of their items
    in a random order of the items: two rows share it with probability their Jaccard
    similarity), cut into groups of k consecutive rows, the last one taking the rest
    (k to 2k - 1 rows)."""
    n, n_items = matrix.shape
    rank = rng.permutation(n_items)
    key = np.full(n, n_items)  # an empty row sorts last
    filled = np.diff(matrix.indptr) > 0
    key[filled] = np.minimum.reduceat(rank[matrix.indices], matrix.indptr[:-1][filled])
    order = np.argsort(key, kind="stable")
    groups = np.empty(n, dtype=np.int64)
    groups[order] = np.minimum(np.arange(n) // k, n // k - 1)
    return groups


@register_mechanism(
    "k_anonymous_minhash_groups",
    input_kind=Kind.BINARY_MATRIX,
    output_kind=Kind.BINARY_MATRIX,
    privacy=K_ANONYMITY,
    role="baseline",
    source="k-anonymity by suppression (epasto2022 Def. 3.4), min-hash grouping",
)
def k_anonymous_minhash_groups(matrix, *, k: int, rng):
    """Every row replaced by the intersection of its group's rows (:func:`minhash_groups`):
    each released row is shared by its whole group (>= k rows) and is a subset of the
    input row, i.e. k-anonymity by suppression (epasto2022 Def. 3.4).

    The release says how it was built (``KAnonymousMatrix``: its groups, and that it only
    suppresses), so the runner's verifier checks the groups too. ``k`` above the number of
    rows cannot apply: the cell is skipped, not failed.
    """
    k = check_k(k)
    m = as_binary_matrix(matrix)
    n = m.shape[0]
    if k > n:
        raise NotApplicableError(f"k = {k} > {n} rows")
    groups = minhash_groups(m, k, rng)
    sizes = np.bincount(groups)
    members = sp.csr_array((np.ones(n, dtype=np.int64), (groups, np.arange(n))),
                           shape=(sizes.size, n))
    held = sp.coo_array(members @ m.astype(np.int64))  # groups x items: how many rows hold it
    everyone = held.data == sizes[held.row]  # items every row of the group holds
    shared = sp.csr_array((np.ones(int(everyone.sum()), dtype=np.int8),
                           (held.row[everyone], held.col[everyone])), shape=held.shape)
    released = as_binary_matrix(shared[groups])
    return Release(KAnonymousMatrix.wrap(released, clusters=groups, suppression=True),
                   info={"groups": int(sizes.size)})
