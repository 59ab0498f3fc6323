"""Pygmalion (sala2011 Sec 5): a synthetic graph from a noisy dK-2 series.

Pipeline (sala2011 Fig 2): graph -> dK-2 series -> noise (DRC, LDRC or the honest DRC of
:mod:`privpub.mechanisms.drc`, or dK-PA, :mod:`privpub.algorithms.dk.dk_pa`) -> realizable JDM ->
synthetic
graph (:func:`privpub.algorithms.dk.synthesize`: repair and generation, post-processing that never
reads the graph). Which guarantee each release gives, and the generator's choices:
docs/design.md (sala2011) and the notes of ``conf/experiment/sala2011_fig5.yaml``.

References
----------
.. [SZWZZ11] A. Sala, X. Zhao, C. Wilson, H. Zheng, B. Y. Zhao. Sharing graphs using
   differentially private graph models. IMC 2011, Sec 4, Sec 5.
"""

from __future__ import annotations

import numpy as np

from privpub.algorithms.dk import (
    CAVEAT_DK_PA,
    DK2_CAVEAT_SUMMARY,
    check_generator,
    check_graph,
    dk_pa_series,
    synthesize,
)
from privpub.errors import PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.drc import (
    CAVEAT_DRC,
    CAVEAT_TRUE_ORDER,
    TRUE_ORDER_SUMMARY,
    check_order,
    drc,
    drc_honest,
    ldrc,
    ldrc_true_count_order,
)
from privpub.registry import EDGE_DP, NO_PRIVACY, register_mechanism
from privpub.types import Graph, JointDegree, Kind, Release
from privpub.validation import check_epsilon, check_positive_int, check_rng

__all__ = ["METHODS", "pygmalion", "pygmalion_true_count_order"]

#: dK-2 releases :func:`pygmalion` can build its graph from.
METHODS = ("ldrc", "drc", "dk_pa", "drc_honest")


def _pygmalion_caveat(params: dict) -> str | None:
    method = params.get("method", "ldrc")
    if method == "drc_honest":
        return None
    if method == "dk_pa":
        return CAVEAT_DK_PA
    return CAVEAT_DRC


@register_mechanism(
    "pygmalion",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=EDGE_DP,
    paper="sala2011",
    caveat=_pygmalion_caveat,
    audit={"configurations": [{"method": m} for m in ("ldrc", "drc", "dk_pa", "drc_honest")],
           "cost_ms": 12},
    caveat_summary=DK2_CAVEAT_SUMMARY,
)
def pygmalion(
    graph: Graph,
    *,
    epsilon: float,
    method: str = "ldrc",
    order: str = "beta",
    partition_width: int = 1,
    generator: str = "auto",
    max_edges: int = 10_000_000,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
) -> Release:
    """A Pygmalion synthetic graph: a noisy dK-2 series, repaired and generated (sala2011 Sec 5).

    ``graph``, ``epsilon``, ``rng`` and ``ledger`` as :func:`privpub.mechanisms.drc.drc`.

    Parameters
    ----------
    method : {"ldrc", "drc", "dk_pa", "drc_honest"}
        The dK-2 release (sala2011 uses LDRC). Its guarantee is the graph's: the caveat of
        each row says which one holds.
    order : {"beta", "noisy"}
        LDRC's fitting order (only for ``method="ldrc"``).
    partition_width : int
        DRC partitions (``drc``, ``ldrc``, ``drc_honest``).
    generator : {"auto", "networkx", "stub_matching"}
        See :func:`privpub.algorithms.dk.generate_graph`.
    max_edges : int
        A repaired series with more edges is not generated: the cell is not applicable
        (:class:`~privpub.errors.NotApplicableError`, recorded as skipped), as sala2011 Sec
        5.1 reports its generator failing on very noisy series. The test reads the noisy
        release only (post-processing).

    Returns
    -------
    Release
        The synthetic :class:`Graph`, with the ``info`` of :func:`privpub.algorithms.dk.synthesize`.
    """
    graph = check_graph(graph)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    if method not in METHODS:
        raise PrivpubError(f"method must be one of {METHODS}, got {method!r}")
    check_order(order)
    max_edges = _check_generation(generator, max_edges)
    noisy = _noisy_series(graph, method, epsilon=epsilon, order=order,
                          partition_width=partition_width, rng=rng, ledger=ledger)
    return synthesize(noisy, rng=rng, generator=generator, name=f"pygmalion({graph.name})",
                      max_edges=max_edges)


def _noisy_series(graph: Graph, method: str, *, epsilon, order, partition_width, rng,
                  ledger) -> JointDegree:
    """The dK-2 release :func:`pygmalion` builds its graph from."""
    if method == "ldrc":
        return ldrc(graph, epsilon=epsilon, partition_width=partition_width, order=order,
                    rng=rng, ledger=ledger)
    if method == "drc":
        return drc(graph, epsilon=epsilon, partition_width=partition_width, rng=rng,
                   ledger=ledger)
    if method == "dk_pa":
        return dk_pa_series(graph, epsilon=epsilon, rng=rng, ledger=ledger)
    return drc_honest(graph, epsilon=epsilon, partition_width=partition_width, rng=rng,
                      ledger=ledger).value


@register_mechanism(
    "pygmalion_true_count_order",
    input_kind=Kind.GRAPH,
    output_kind=Kind.GRAPH,
    privacy=NO_PRIVACY,
    paper="sala2011",
    caveat=CAVEAT_TRUE_ORDER,
    source="Sec 5 (LDRC in the true-count order of public reimplementations)",
    caveat_summary=TRUE_ORDER_SUMMARY,
)
def pygmalion_true_count_order(
    graph: Graph,
    *,
    epsilon: float,
    partition_width: int = 1,
    generator: str = "auto",
    max_edges: int = 10_000_000,
    rng: np.random.Generator,
) -> Release:
    """A Pygmalion graph from :func:`privpub.mechanisms.drc.ldrc_true_count_order`: **not** private
    (the trap of public reimplementations; privacy ``none``). Parameters as
    :func:`pygmalion`."""
    max_edges = _check_generation(generator, max_edges)
    noisy = ldrc_true_count_order(graph, epsilon=epsilon, partition_width=partition_width,
                                  rng=rng)
    return synthesize(noisy, rng=rng, generator=generator, name=f"pygmalion({graph.name})",
                      max_edges=max_edges)


def _check_generation(generator: str, max_edges) -> int:
    """The graph step's options, checked before any budget is spent; returns ``max_edges``."""
    check_generator(generator)
    return check_positive_int(max_edges, "max_edges")
