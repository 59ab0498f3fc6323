"""Breadth-first node samples of real graphs (farias2021 Sec 6.1.1, Table 2).

"We perform experiments with samples S of the graphs which are obtained by choosing a node
sample S_n in breadth-first search fashion with a random seed node and then we set
S = G[S_n]" (Table 2: 10 samples of |S_n| = 50 nodes per graph).

:func:`bfs_sample` visits nodes breadth-first from a seed node, neighbours in increasing id
order, and keeps the first ``size`` visited; a seed whose component is smaller than ``size``
is replaced by another random seed. Sample ``i`` of dataset ``name`` draws its seed from
``numpy.random.default_rng([i, crc32(name)])``, so a sample is the same on every machine and
for every mechanism. The datasets ``<graph>_bfs`` (options ``sample`` and ``size``) read
the parent graph's files; ``lcc`` is accepted like every graph's (a BFS sample is
connected, so it changes nothing).
"""

from __future__ import annotations

import functools
import zlib
from collections import deque

import numpy as np

import privpub.data.graphs  # noqa: F401  (registers the parent graphs first)
from privpub.data.registry import DatasetSpec, get_dataset_spec, register_dataset
from privpub.errors import DataError
from privpub.types import Graph, Kind
from privpub.validation import check_nonnegative_int, check_positive_int

__all__ = ["bfs_sample", "BFS_PARENTS"]

#: Parent graph of each ``<name>_bfs`` dataset (farias2021's Enron, DBLP and Github).
BFS_PARENTS = {"email_enron_bfs": "email_enron", "dblp_bfs": "dblp", "musae_git_bfs": "musae_git"}


def bfs_sample(graph: Graph, size: int, *, rng: np.random.Generator, max_tries: int = 100):
    """Induced subgraph on the first ``size`` nodes of a BFS from a random seed node.

    Returns the subgraph (nodes relabelled ``0..size-1`` in increasing original id, like
    every loaded graph) and the original node ids in that order.
    """
    size = check_positive_int(size, "size")
    if size > graph.n_nodes:
        raise DataError(f"cannot sample {size} nodes from a graph of {graph.n_nodes}")
    indptr, indices = graph.adjacency.indptr, graph.adjacency.indices
    for _ in range(max_tries):
        seed = int(rng.integers(graph.n_nodes))
        seen = {seed}
        order = [seed]
        queue = deque([seed])
        while queue and len(order) < size:
            v = queue.popleft()
            for w in np.sort(indices[indptr[v] : indptr[v + 1]]):
                w = int(w)
                if w not in seen:
                    seen.add(w)
                    order.append(w)
                    queue.append(w)
                    if len(order) == size:
                        break
        if len(order) == size:
            nodes = np.sort(np.array(order, dtype=np.int64))
            sub = graph.subgraph(nodes)
            adj = sub.adjacency.copy()
            adj.sort_indices()
            return Graph(adj, name=graph.name), nodes
    raise DataError(f"no component of {size} nodes found from {max_tries} random seed nodes")


@functools.lru_cache(maxsize=3)
def _parent(name: str, paths: tuple) -> Graph:
    spec = get_dataset_spec(name)
    return spec.loader(list(paths))


def _load_sample(
    paths, *, name: str, parent: str, sample: int = 0, size: int = 50, lcc: bool = False
) -> Graph:
    from privpub.data.graphs import _finish

    sample = check_nonnegative_int(sample, "sample")
    size = check_positive_int(size, "size")
    graph = _parent(parent, tuple(paths))
    rng = np.random.default_rng([sample, zlib.crc32(name.encode())])
    sub, _ = bfs_sample(graph, size, rng=rng)
    return _finish(Graph(sub.adjacency, name=name), lcc)  # connected: lcc changes nothing


#: Counts of sample 0 (50 nodes, connected), checked by the real-data tests.
_EXPECTED = {
    name: {"n_nodes": 50, "n_edges": m, "lcc_nodes": 50, "lcc_edges": m}
    for name, m in {"email_enron_bfs": 635, "dblp_bfs": 95, "musae_git_bfs": 111}.items()
}

for _name, _parent_name in BFS_PARENTS.items():
    _spec = get_dataset_spec(_parent_name)
    register_dataset(DatasetSpec(
        name=_name,
        kind=Kind.GRAPH,
        description=(
            f"Breadth-first node sample of {_parent_name} (option size, default 50 nodes, "
            "and option sample, the sample's index 0, 1, ...), the induced subgraph: "
            "farias2021 Table 2's 50-node samples. See privpub.data.samples."
        ),
        files=_spec.files,
        licence=_spec.licence,
        expected=_EXPECTED[_name],
        defaults={"sample": 0, "size": 50, "lcc": False},
        papers=("farias2021",),
        loader=functools.partial(_load_sample, name=_name, parent=_parent_name),
    ))
