"""sala2011's non-private yardsticks: the original dK-2 series and the dK-synthetic graph."""

import numpy as np

from privpub.algorithms.dk import dk2_euclidean, joint_degree
from privpub.baselines.dk_reference import dk_synthetic, original_dk2
from privpub.data import load_dataset


def test_dk_synthetic_graph_and_original_series():
    karate = load_dataset("karate")
    syn = dk_synthetic(karate, rng=np.random.default_rng(2))
    assert dk2_euclidean(joint_degree(syn.value), joint_degree(karate)) == 0
    assert syn.info["repair_l1"] == 0
    assert np.array_equal(original_dk2(karate).counts, joint_degree(karate).counts)
