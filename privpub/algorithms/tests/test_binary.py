"""Binary matrices: the release of row clusters by strict majority, at least half or
intersection."""

import numpy as np
import pytest
import scipy.sparse as sp

from privpub.algorithms.binary import cluster_release
from privpub.errors import PrivpubError


def test_cluster_release_rules_by_hand():
    x = sp.csr_array(np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 1, 1], [0, 1, 0]]))
    labels = np.array([0, 0, 0, 1, 1])
    maj = cluster_release(x, labels, 2, rule="majority")
    np.testing.assert_array_equal(maj.toarray(), [[1, 1, 0]] * 3 + [[0, 1, 0]] * 2)
    inter = cluster_release(x, labels, 2, rule="intersection")
    np.testing.assert_array_equal(inter.toarray(), [[1, 0, 0]] * 3 + [[0, 1, 0]] * 2)
    assert inter.suppression and not maj.suppression
    # cluster 1 holds item 2 in one row of two: a tie, kept only by "at least half"
    half = cluster_release(x, labels, 2, rule="at_least_half")
    np.testing.assert_array_equal(half.toarray(), [[1, 1, 0]] * 3 + [[0, 1, 1]] * 2)
    with pytest.raises(PrivpubError):
        cluster_release(x, labels, 2, rule="mode")
