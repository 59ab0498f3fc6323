"""Views: how the truth a metric needs is derived from an original dataset.

Metrics compare a release with the truth *of the same kind*; these functions derive that
truth (e.g. the exact degree histogram of a graph for a noisy-histogram release).
"""

from privpub.registry import register_view
from privpub.types import (
    DegreeHistogram,
    DegreeSequence,
    Graph,
    JointDegree,
    Kind,
    as_binary_matrix,
)

__all__ = [
    "graph_degree_histogram",
    "graph_degree_sequence",
    "graph_adjacency_matrix",
    "graph_joint_degree",
    "table_for_classifier",
    "graph_ebc_ranking",
]


@register_view(Kind.GRAPH, Kind.DEGREE_HISTOGRAM)
def graph_degree_histogram(graph: Graph) -> DegreeHistogram:
    """Exact degree histogram (index = degree)."""
    return graph.degree_histogram()


@register_view(Kind.GRAPH, Kind.DEGREE_SEQUENCE)
def graph_degree_sequence(graph: Graph) -> DegreeSequence:
    """Exact degree sequence, sorted non-decreasing."""
    return graph.degree_sequence()


@register_view(Kind.GRAPH, Kind.BINARY_MATRIX)
def graph_adjacency_matrix(graph: Graph):
    """Symmetric 0/1 adjacency matrix (each undirected edge is two entries)."""
    return as_binary_matrix(graph.adjacency)


@register_view(Kind.GRAPH, Kind.JOINT_DEGREE)
def graph_joint_degree(graph: Graph) -> JointDegree:
    """Exact dK-2 series (joint degree counts, sala2011 Sec 3.1)."""
    from privpub.algorithms.dk import joint_degree

    return joint_degree(graph)


@register_view(Kind.TABLE, Kind.CLASSIFIER)
def table_for_classifier(table):
    """A released model is scored on the original table itself (e.g. farias2021's private
    decision trees): the truth is the table, unchanged."""
    return table


@register_view(Kind.GRAPH, Kind.RANKING)
def graph_ebc_ranking(graph: Graph):
    """Every node by egocentric betweenness centrality, highest first, ties by node id: the
    true ranking of farias2021's private top-k (Sec 6.1)."""
    from privpub.algorithms.centrality import ebc_ranking

    return ebc_ranking(graph)
