"""Every metric is registered with the kinds it accepts, and works through the views."""

import numpy as np
import pytest
import scipy.sparse as sp

from privpub.registry import get_metric, metrics, view
from privpub.types import Graph, Kind

EXPECTED = {
    "emd": ({Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE, Kind.TABLE}, False),
    "emd_p2": ({Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE, Kind.TABLE}, False),
    "ks": ({Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE, Kind.TABLE}, False),
    "ks_sampled": ({Kind.DEGREE_HISTOGRAM}, False),
    "l1": ({Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE}, False),
    "l1_counts": ({Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE}, False),
    "jaccard": ({Kind.BINARY_MATRIX, Kind.GRAPH}, True),
    "suppressed_fraction": ({Kind.BINARY_MATRIX, Kind.GRAPH}, False),
    "created_fraction": ({Kind.BINARY_MATRIX, Kind.GRAPH}, False),
    "topk_overlap": ({Kind.RANKING}, True),
    **{
        f"accuracy_{proto}{suffix}": ({Kind.TABLE}, True)
        for proto in ("cv", "transfer")
        for suffix in ("", "_nb", "_tree", "_mlp")
    },
    "accuracy_cv_majority": ({Kind.TABLE}, True),
    **{
        name: ({Kind.DEGREE_HISTOGRAM, Kind.DEGREE_SEQUENCE}, True)
        for name in ("nodes", "edges", "max_degree", "avg_degree")
    },
}
TAKES_RNG = {"ks_sampled"} | {n for n in EXPECTED if n.startswith("accuracy")}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registered(name):
    info = get_metric(name)
    kinds, higher = EXPECTED[name]
    assert set(info.kinds) == kinds
    assert info.higher_is_better is higher
    assert info.takes_rng is (name in TAKES_RNG)
    assert info.label and info.func.__doc__


def test_no_unexpected_metric_from_this_package():
    modules = {
        f"privpub.metrics.{m}"
        for m in ("distributions", "sets", "ranking", "classification", "graph_stats")
    }
    ours = {n for n, m in metrics().items() if m.func.__module__ in modules}
    assert ours == set(EXPECTED)


def test_graph_dataset_through_views():
    g = Graph.from_edges([(0, 1), (1, 2), (2, 0), (2, 3)])
    for kind, names in (
        (Kind.DEGREE_HISTOGRAM, ["emd", "ks", "l1", "l1_counts"]),
        (Kind.DEGREE_SEQUENCE, ["emd", "ks", "l1"]),
        (Kind.BINARY_MATRIX, ["jaccard", "suppressed_fraction", "created_fraction"]),
    ):
        truth = view(g, kind)
        for name in names:
            value = get_metric(name).func(truth, truth)
            assert value == (1.0 if name == "jaccard" else 0.0), name
    truth = view(g, Kind.DEGREE_HISTOGRAM)
    assert get_metric("ks_sampled").func(truth, truth, rng=np.random.default_rng(0)) >= 0.0


def test_symmetric_adjacency_and_graph_jaccard_agree():
    g = Graph.from_edges([(0, 1), (1, 2), (2, 3)], 5)
    h = Graph.from_edges([(0, 1), (2, 3), (3, 4), (0, 4)], 5)
    jac = get_metric("jaccard").func
    assert jac(g, h) == pytest.approx(jac(sp.csr_array(g.adjacency), sp.csr_array(h.adjacency)))
