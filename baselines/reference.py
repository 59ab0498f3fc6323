"""Non-private yardsticks: the original data itself, released unchanged.

They give the reference lines and columns of the papers' figures and tables: the true
degree histogram of a graph (day2016 Table 1's statistics are computed from it by the
``nodes`` / ``edges`` / ``max_degree`` / ``avg_degree`` metrics) and the original table
(qardaji2012 Fig. 3's "original data" accuracy). Registered with privacy ``none`` and role
``reference``: a plot draws a reference that takes no epsilon as a dashed line.
"""

from __future__ import annotations

from privpub.errors import DataError
from privpub.registry import NO_PRIVACY, register_mechanism
from privpub.types import Graph, Kind, Table

__all__ = ["original_degree_histogram", "original_table"]


@register_mechanism(
    "original_degree_histogram",
    input_kind=Kind.GRAPH,
    output_kind=Kind.DEGREE_HISTOGRAM,
    privacy=NO_PRIVACY,
    paper="day2016",
    role="reference",
)
def original_degree_histogram(graph: Graph, *, rng=None):
    """The true degree histogram of ``graph`` (no privacy; day2016 Table 1, Fig. 4 "true").

    Parameters
    ----------
    graph : Graph
    rng : numpy.random.Generator, optional
        Unused (the registry's calling convention).
    """
    if not isinstance(graph, Graph):
        raise DataError(f"original_degree_histogram needs a Graph, got {type(graph).__name__}")
    return graph.degree_histogram()


@register_mechanism(
    "original_table",
    input_kind=Kind.TABLE,
    output_kind=Kind.TABLE,
    privacy=NO_PRIVACY,
    paper="qardaji2012",
    role="reference",
)
def original_table(table: Table, *, rng=None):
    """The original table, unchanged (no privacy; qardaji2012 Fig. 3 "original data").

    Parameters
    ----------
    table : Table
    rng : numpy.random.Generator, optional
        Unused (the registry's calling convention).
    """
    if not isinstance(table, Table):
        raise DataError(f"original_table needs a Table, got {type(table).__name__}")
    return table
