"""BFS node samples (farias2021 Table 2) and farias2021's Adult."""

import os
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from scipy.sparse.csgraph import connected_components

from privpub.data.samples import bfs_sample
from privpub.errors import DataError
from privpub.types import Graph


def test_bfs_sample_is_a_connected_induced_subgraph():
    g = Graph.from_networkx(nx.les_miserables_graph())
    sub, nodes = bfs_sample(g, 20, rng=np.random.default_rng(0))
    assert sub.n_nodes == 20 and np.all(np.diff(nodes) > 0)
    assert connected_components(sub.adjacency, directed=False)[0] == 1
    assert (sub.adjacency != g.adjacency[nodes][:, nodes]).nnz == 0
    assert sub.adjacency.has_sorted_indices
    again, same = bfs_sample(g, 20, rng=np.random.default_rng(0))
    assert np.array_equal(nodes, same)


def test_small_components_are_skipped_and_impossible_sizes_refused():
    g = Graph.from_edges(np.array([[0, 1], [2, 3], [3, 4], [4, 5]]), 6)
    sub, nodes = bfs_sample(g, 4, rng=np.random.default_rng(0))
    assert nodes.tolist() == [2, 3, 4, 5]
    with pytest.raises(DataError):
        bfs_sample(g, 7, rng=np.random.default_rng(0))
    with pytest.raises(DataError, match="no component"):
        bfs_sample(Graph.from_edges(np.array([[0, 1]]), 6), 3, rng=np.random.default_rng(0),
                   max_tries=5)


_DIR = os.environ.get("PRIVPUB_DATA_DIR", "")


@pytest.mark.data
@pytest.mark.skipif(not _DIR or not Path(_DIR).is_dir(), reason="real data unavailable")
def test_adult_as_farias2021_reads_it():
    from privpub.data import load_dataset

    t = load_dataset("adult", split="all", attributes="farias2021")
    assert t.data.shape == (45222, 13) and t.schema.class_attribute == "income"
    kinds = [a.kind for a in t.schema.attributes if a.name != "income"]
    assert kinds.count("numeric") == 4 and len(kinds) == 12
