import numpy as np
import pytest

from privpub.errors import PrivpubError
from privpub.metrics.graph_stats import avg_degree, edges, max_degree, nodes
from privpub.types import DegreeHistogram, DegreeSequence, Graph


def test_statistics_of_a_known_graph():
    # a star on 5 nodes plus the edge (1, 2): degrees 4, 2, 2, 1, 1
    g = Graph.from_edges([(0, 1), (0, 2), (0, 3), (0, 4), (1, 2)], n_nodes=5)
    h = g.degree_histogram()
    assert nodes(h, h) == 5
    assert edges(h, h) == 5
    assert max_degree(h, h) == 4
    assert avg_degree(h, h) == pytest.approx(2.0)
    seq = g.degree_sequence()
    assert (nodes(seq, seq), edges(seq, seq), max_degree(seq, seq)) == (5, 5, 4)


def test_noisy_release_is_clipped_and_tail_below_half_ignored():
    truth = DegreeHistogram(np.array([0.0, 2.0, 1.0]))
    noisy = DegreeHistogram(np.array([-3.0, 2.0, 1.0, 0.4]))
    assert nodes(truth, noisy) == pytest.approx(3.4)
    assert max_degree(truth, noisy) == 2
    assert edges(truth, noisy) == pytest.approx((2 + 2 + 1.2) / 2)


def test_mismatched_kinds_are_refused():
    with pytest.raises(PrivpubError):
        nodes(DegreeHistogram(np.ones(3)), DegreeSequence(np.ones(3)))
