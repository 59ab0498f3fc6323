"""Mondrian on binary matrices: the same partition as github.com/qiyuangong/Mondrian's
strict mode (re-implemented densely below, as that code runs: stale widths, allow flags,
frequency-set median), found sparse-aware."""

import numpy as np
import pytest
import scipy.sparse as sp

from privpub.baselines.mondrian_binary import mondrian_binary, mondrian_binary_partition
from privpub.errors import NotApplicableError, PrivpubError
from privpub.verify import verify_release


def _reference_partition(x, k):
    """A dense re-implementation of qiyuangong/Mondrian ``anonymize_strict`` on 0/1 data."""
    n_rows, d = x.shape
    values = [sorted(set(x[:, j])) for j in range(d)]
    ranges = [float(v[-1] - v[0]) for v in values]
    result = []

    def width(low, high, j):
        if ranges[j] == 0:
            return 0.0  # the original divides by zero here; constant columns never split
        return (values[j][high[j]] - values[j][low[j]]) / ranges[j]

    def strict(members, low, high):
        allow = [1] * d
        for _ in range(sum(allow)):
            best_w, dim = -1.0, -1
            for j in range(d):
                if allow[j] and width(low, high, j) > best_w:
                    best_w, dim = width(low, high, j), j
            col = x[members, dim]
            freq = {v: int((col == v).sum()) for v in sorted(set(col))}
            vlist = sorted(freq)
            low[dim], high[dim] = values[dim].index(vlist[0]), values[dim].index(vlist[-1])
            middle = len(members) // 2
            if middle < k or len(vlist) <= 1:
                allow[dim] = 0
                continue
            acc, split = 0, None
            for i, v in enumerate(vlist):
                acc += freq[v]
                if acc >= middle:
                    split, idx = v, i
                    break
            nxt = vlist[idx + 1] if idx + 1 < len(vlist) else split
            if split == nxt:
                allow[dim] = 0
                continue
            lhs = [r for r in members if x[r, dim] <= split]
            rhs = [r for r in members if x[r, dim] > split]
            if len(lhs) < k or len(rhs) < k:
                allow[dim] = 0
                continue
            lhs_high, rhs_low = list(high), list(low)
            lhs_high[dim] = values[dim].index(split)
            rhs_low[dim] = values[dim].index(nxt)
            strict(lhs, list(low), lhs_high)
            strict(rhs, rhs_low, list(high))
            return
        result.append(sorted(members))

    strict(list(range(n_rows)), [0] * d, [len(v) - 1 for v in values])
    return sorted(result)


def _classes(labels):
    return sorted(sorted(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [2, 3, 5])
def test_same_partition_as_the_reference_implementation(seed, k):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(10, 60)), int(rng.integers(2, 12))
    density = rng.uniform(0.1, 0.7)
    x = (rng.random((n, d)) < density).astype(np.int8)
    labels, n_classes = mondrian_binary_partition(sp.csr_array(x), k=k)
    assert n_classes == np.unique(labels).size
    assert _classes(labels) == _reference_partition(x, k)


@pytest.mark.parametrize("k", [2, 4])
def test_release_is_k_anonymous_by_suppression(k):
    rng = np.random.default_rng(1)
    x = (rng.random((80, 10)) < 0.3).astype(np.int8)
    out = mondrian_binary(x, k=k, rng=rng).value
    dense = out.toarray()
    assert np.all(dense <= x)
    _, counts = np.unique(dense, axis=0, return_counts=True)
    assert counts.min() >= k
    for c in np.unique(out.clusters):
        members = out.clusters == c
        np.testing.assert_array_equal(dense[members][0], x[members].min(axis=0))
    assert verify_release("k-anonymity", x, out, {"k": k})


def test_runs_on_a_large_sparse_matrix():
    rng = np.random.default_rng(0)
    n = 20_000
    x = sp.random_array((n, n), density=5 / n, rng=rng, format="csr")
    x.data[:] = 1
    labels, n_classes = mondrian_binary_partition(x, k=4)
    assert np.bincount(labels).min() >= 4 and n_classes > 1


def test_errors():
    with pytest.raises(NotApplicableError):
        mondrian_binary(np.eye(3, dtype=int), k=4, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError):
        mondrian_binary(np.eye(3, dtype=int), k=1, rng=np.random.default_rng(0))
    with pytest.raises(PrivpubError):
        mondrian_binary(np.array([[0, 3]]), k=2, rng=np.random.default_rng(0))
