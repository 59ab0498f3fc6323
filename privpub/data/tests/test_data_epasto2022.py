"""epasto2022's labelled and stand-in matrices: adult_binary_ml (Fig. 4/7), the synthetic
sbm_labelled_small, user_lists_standin."""

import os

import numpy as np
import pytest

from privpub.data import load_dataset
from privpub.types import LabelledMatrix, as_binary_matrix

needs_data = pytest.mark.skipif(
    not os.environ.get("PRIVPUB_DATA_DIR"), reason="needs PRIVPUB_DATA_DIR (real data)"
)


@needs_data
def test_adult_binary_ml_has_labels_and_the_test_split():
    m = load_dataset("adult_binary_ml")
    assert isinstance(m, LabelledMatrix)
    assert (m != load_dataset("adult_binary")).nnz == 0  # same features, same rows
    assert m.labels.shape == (30162,) and int(m.labels.sum()) == 7508  # >50K in the train split
    assert m.test_matrix.shape == (15060, 99) and m.test_labels.shape == (15060,)
    assert (m.test_matrix != load_dataset("adult_binary", split="test")).nnz == 0
    assert int(m.test_labels.sum()) == 3700
    # a mechanism sees a plain matrix
    assert type(as_binary_matrix(m)).__name__ == "csr_array"


@needs_data
def test_user_lists_standin_is_the_symmetric_twitter_adjacency():
    m = load_dataset("user_lists_standin")
    assert m.shape == (81306, 81306) and m.nnz == 2 * 1342296
    assert (m != m.T).nnz == 0 and m.diagonal().sum() == 0


def test_sbm_labelled_small_labels_are_block_parity():
    m = load_dataset("sbm_labelled_small", rng=np.random.default_rng(0))
    assert m.shape == (256, 64) and m.test_matrix.shape == (256, 64)
    assert set(np.unique(m.labels)) == {0, 1}
    # rows of a label hold mostly that label's column blocks (blocks 0, 2 vs 1, 3)
    dense = m.toarray()
    even = dense[:, np.r_[0:16, 32:48]].sum(axis=1)
    odd = dense[:, np.r_[16:32, 48:64]].sum(axis=1)
    assert np.mean((odd > even) == (m.labels == 1)) > 0.95
