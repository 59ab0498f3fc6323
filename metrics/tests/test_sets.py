"""Jaccard, suppressed and created entries (epasto2022 Def. 3.6, Sec. 6, Table 1)."""

import numpy as np
import pytest
import scipy.sparse as sp

from privpub.errors import PrivpubError
from privpub.metrics.sets import created_fraction, jaccard, set_sizes, suppressed_fraction
from privpub.types import Graph

T = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]])  # 5 entries
R = np.array([[1, 0, 0, 0], [0, 1, 1, 1], [1, 0, 0, 1]])  # 6 entries
# T ∩ R = {(0,0), (1,1), (1,2), (2,3)} = 4; T \ R = {(0,1)} = 1; R \ T = {(1,3), (2,0)} = 2


def test_hand_values_dense_and_sparse():
    for t, r in ((T, R), (sp.csr_array(T), sp.csr_array(R)), (sp.csr_matrix(T), sp.coo_array(R))):
        assert set_sizes(t, r) == (5, 6, 4)
        assert jaccard(t, r) == pytest.approx(4 / 7)
        assert suppressed_fraction(t, r) == pytest.approx(1 / 5)
        assert created_fraction(t, r) == pytest.approx(2 / 5)


def test_jaccard_symmetric_but_fractions_are_not():
    assert jaccard(R, T) == pytest.approx(jaccard(T, R))
    assert suppressed_fraction(R, T) == pytest.approx(2 / 6)  # |R \ T| / |R|
    assert created_fraction(R, T) == pytest.approx(1 / 6)


def test_table1_identity_with_truth_denominator():
    # J = |T∩R| / (|T| + |R\T|) = (1 - S) / (1 + C) when S and C are over |T| (epasto2022 Table 1)
    s, c = suppressed_fraction(T, R), created_fraction(T, R)
    assert jaccard(T, R) == pytest.approx((1 - s) / (1 + c))


def test_suppression_only_release_jaccard_plus_suppressed_is_one():
    sub = T.copy()
    sub[1, 2] = 0
    assert jaccard(T, sub) + suppressed_fraction(T, sub) == pytest.approx(1.0)
    assert created_fraction(T, sub) == 0.0


def test_both_empty_is_one_and_empty_truth_fractions_fail():
    z = sp.csr_array((3, 4), dtype=np.int8)
    assert jaccard(z, z) == 1.0
    assert jaccard(z, sp.csr_array(T)) == 0.0
    with pytest.raises(PrivpubError, match="truth has none"):
        suppressed_fraction(z, z)
    with pytest.raises(PrivpubError, match="truth has none"):
        created_fraction(z, sp.csr_array(T))


def test_identical_is_one():
    assert jaccard(T, T) == 1.0
    assert suppressed_fraction(T, T) == 0.0 and created_fraction(T, T) == 0.0


def test_shape_mismatch_fails():
    with pytest.raises(PrivpubError, match="shapes differ"):
        jaccard(T, T[:, :3])


def test_non_binary_and_nan_entries_fail():
    bad = T.astype(float)
    bad[0, 0] = np.nan
    with pytest.raises(PrivpubError, match="release: .*0/1"):
        jaccard(T, bad)
    with pytest.raises(PrivpubError, match="truth: .*0/1"):
        jaccard(2 * T, T)


def test_large_sparse_is_not_densified(monkeypatch):
    n = 200_000
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, n, 5000), rng.integers(0, n, 5000)
    t = sp.csr_array((np.ones(5000), (rows, cols)), shape=(n, n))
    t.data[:] = 1
    r = t.copy()
    r.data[:] = 1

    def refuse(*args, **kwargs):
        raise AssertionError("densified")

    monkeypatch.setattr(sp.csr_array, "toarray", refuse)
    monkeypatch.setattr(sp.csr_array, "todense", refuse)
    assert jaccard(t, r) == 1.0  # a 200k x 200k dense matrix would not fit in memory


def test_graph_edges_counted_once():
    g = Graph.from_edges([(0, 1), (1, 2), (2, 3)], 5)
    h = Graph.from_edges([(0, 1), (2, 3), (3, 4), (0, 4)], 5)
    assert set_sizes(g, h) == (3, 4, 2)
    assert jaccard(g, h) == pytest.approx(2 / 5)
    assert suppressed_fraction(g, h) == pytest.approx(1 / 3)
    assert created_fraction(g, h) == pytest.approx(2 / 3)


def test_graph_node_count_mismatch_and_mixed_types_fail():
    g = Graph.from_edges([(0, 1)], 3)
    with pytest.raises(PrivpubError, match="node counts differ"):
        jaccard(g, Graph.from_edges([(0, 1)], 4))
    with pytest.raises(PrivpubError, match="Graph with a Graph"):
        jaccard(g, g.adjacency)
