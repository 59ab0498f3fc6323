"""The k-anonymity verifiers catch every violation the epasto2022 mechanisms could make:
classes below k, created entries without a strict majority (ties included), suppression
releases that add entries, clusters released inconsistently."""

import numpy as np
import pytest
import scipy.sparse as sp

from privpub.errors import PrivpubError
from privpub.types import KAnonymousMatrix
from privpub.verify import (
    cluster_violation,
    is_smooth_k_anonymous,
    is_subset,
    verify_release,
)

X = np.array([
    [1, 1, 0, 0],
    [1, 1, 0, 0],
    [1, 0, 1, 0],
    [0, 0, 1, 1],
    [0, 0, 1, 1],
    [0, 1, 0, 1],
])
LABELS = np.array([0, 0, 0, 1, 1, 1])


def _wrap(rows, clusters=LABELS, suppression=False):
    return KAnonymousMatrix.wrap(sp.csr_array(np.array(rows)), clusters=clusters,
                                 suppression=suppression)


GOOD_SMOOTH = [[1, 1, 0, 0]] * 3 + [[0, 0, 1, 1]] * 3
GOOD_SUPPRESSION = [[1, 0, 0, 0]] * 3 + [[0, 0, 0, 1]] * 3


def test_valid_releases_pass():
    assert verify_release("smooth-k-anonymity", X, _wrap(GOOD_SMOOTH), {"k": 3})
    assert verify_release("k-anonymity", X, _wrap(GOOD_SUPPRESSION, suppression=True), {"k": 3})
    # a plain matrix (no clusters) is checked on its own equivalence classes
    assert verify_release("smooth-k-anonymity", X, sp.csr_array(np.array(GOOD_SMOOTH)), {"k": 3})


def test_class_smaller_than_k_fails():
    with pytest.raises(PrivpubError, match="smooth-4-anonymous"):
        verify_release("smooth-k-anonymity", X, _wrap(GOOD_SMOOTH), {"k": 4})
    with pytest.raises(PrivpubError, match="4-anonymous"):
        verify_release("k-anonymity", X, _wrap(GOOD_SUPPRESSION, suppression=True), {"k": 4})


def test_created_entry_without_majority_fails():
    # item 2 is held by 1 of the 3 rows of cluster 0
    bad = [[1, 1, 1, 0]] * 3 + [[0, 0, 1, 1]] * 3
    assert not is_smooth_k_anonymous(X, np.array(bad), 3)
    with pytest.raises(PrivpubError, match="not smooth"):
        verify_release("smooth-k-anonymity", X, _wrap(bad), {"k": 3})


def test_a_tie_is_not_a_majority():
    x = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    tie = np.array([[1, 0]] * 4)  # item 0 held by 2 of 4
    assert not is_smooth_k_anonymous(x, tie, 4)
    assert cluster_violation(x, tie, np.zeros(4, int), 4, smooth=True)
    assert is_smooth_k_anonymous(x, np.zeros((4, 2), int), 4)


def test_per_cluster_majority_is_checked_even_when_classes_merge():
    # both clusters released equal: as one class of 6, item 0 has 3 of 6 (a tie) -> fails
    x = np.array([[1, 0]] * 3 + [[0, 1]] * 3)
    merged = [[1, 0]] * 6
    with pytest.raises(PrivpubError):
        verify_release("smooth-k-anonymity", x, _wrap(merged), {"k": 3})


def test_suppression_release_must_be_a_subset():
    added = [[1, 0, 0, 1]] * 3 + [[0, 0, 0, 1]] * 3  # (0, 3) is not in the input
    assert not is_subset(X, np.array(added))
    with pytest.raises(PrivpubError, match="suppression"):
        verify_release("k-anonymity", X, _wrap(added, suppression=True), {"k": 3})
    # without the suppression claim, plain k-anonymity (Def. 3.4 part 1) holds
    assert verify_release("k-anonymity", X, _wrap(added, suppression=False), {"k": 3})


def test_cluster_rows_released_differently_fails():
    # classes are fine on their own (3 + 3), but cluster 0 holds rows of both classes
    rows = [[1, 1, 0, 0]] * 2 + [[0, 0, 1, 1]] + [[0, 0, 1, 1]] * 2 + [[1, 1, 0, 0]]
    with pytest.raises(PrivpubError, match="released differently"):
        verify_release("k-anonymity", X, _wrap(rows), {"k": 3})


def test_cluster_smaller_than_k_fails_even_if_classes_are_large():
    rows = [[0, 0, 0, 0]] * 6
    labels = np.array([0, 0, 1, 1, 1, 1])
    with pytest.raises(PrivpubError, match="cluster has 2"):
        verify_release("k-anonymity", X, _wrap(rows, clusters=labels, suppression=True),
                       {"k": 3})


def test_bad_cluster_labels():
    assert "one integer label per row" in cluster_violation(X, X, np.zeros(5, int), 2,
                                                            smooth=False)


def test_large_sparse_release_is_verified_without_densifying():
    n, d = 60_000, 50_000
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(n // 4), 4)
    items = rng.integers(0, d, size=n // 4)
    x = sp.csr_array((np.ones(n, np.int8), (np.arange(n), items[labels])), shape=(n, d))
    rel = KAnonymousMatrix.wrap(x, clusters=labels)
    assert verify_release("smooth-k-anonymity", x, rel, {"k": 4})


def _classes_by_bytes(x):
    m = sp.csr_array(np.asarray(x, dtype=np.int8))
    m.sort_indices()
    keys = [m.indices[m.indptr[i] : m.indptr[i + 1]].tobytes() for i in range(m.shape[0])]
    return np.unique(np.array(keys, dtype=object), return_inverse=True)[1]


def _same_partition(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a[:, None] == a[None, :]).tolist() == (b[:, None] == b[None, :]).tolist()


@pytest.mark.parametrize("seed", range(8))
def test_row_classes_are_the_classes_of_equal_rows(seed):
    from privpub.verify import row_classes

    rng = np.random.default_rng(seed)
    x = (rng.random((60, 6)) < rng.uniform(0.05, 0.6)).astype(np.int8)
    x[rng.integers(0, 60, 20)] = x[rng.integers(0, 60, 20)]
    assert _same_partition(row_classes(x), _classes_by_bytes(x))


def test_row_classes_survive_hash_collisions(monkeypatch):
    # every row hashes alike: the entry-by-entry check must notice and fall back
    import privpub.verify as verify

    n = 40
    monkeypatch.setattr(verify, "_row_hashes", lambda m: (np.zeros(n, np.int64),) * 2)
    x = (np.random.default_rng(3).random((n, 5)) < 0.3).astype(np.int8)
    assert _same_partition(verify.row_classes(x), _classes_by_bytes(x))
    assert len(set(verify.row_classes(x).tolist())) == len(set(map(bytes, x)))


def test_a_canonical_release_is_read_in_place_anything_else_converted_first():
    """The verifiers convert a release once and read it in place after (a release is checked
    several times): only an int8, canonical, all-ones CSR is taken as it is."""
    from privpub.types import as_binary_matrix
    from privpub.verify import _binary

    canonical = as_binary_matrix(X)
    assert _binary(canonical) is canonical
    for other in (X, sp.csr_array(X), sp.csr_array(X.astype(np.int8) * 2)):
        if other is X or other.max() == 1:
            got = _binary(other)
            assert got is not other and (got != canonical).nnz == 0
        else:
            with pytest.raises(Exception, match="0/1"):
                _binary(other)
    # a release breaking its clusters is still caught after the conversion
    bad = _wrap(GOOD_SMOOTH[:5] + [[0, 1, 1, 1]])
    with pytest.raises(PrivpubError, match="is not smooth-3-anonymous"):
        verify_release("smooth-k-anonymity", X, bad, {"k": 3})
