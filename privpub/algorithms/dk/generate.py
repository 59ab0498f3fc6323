"""Graphs with a given dK-2 series: the choice of generator, and sala2011's graph step.

:func:`generate_graph` builds a random simple graph whose dK-2 series is a realizable JDM,
by the networkx port (:mod:`privpub.algorithms.dk.networkx_port`) or stub matching
(:mod:`privpub.algorithms.dk.stub_matching`). :func:`synthesize` is the graph step of sala2011's
Pygmalion and of its dK-synthetic reference: repair a (noisy) series
(:mod:`privpub.algorithms.dk.repair`), then generate. Which generator when, and why: docs/design.md
(sala2011).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privpub.algorithms.dk.networkx_port import joint_degree_graph
from privpub.algorithms.dk.repair import repair_joint_degree
from privpub.algorithms.dk.series import (
    dk2_l1,
    is_realizable,
    joint_degree,
    node_counts,
    to_networkx_dict,
)
from privpub.algorithms.dk.stub_matching import stub_match
from privpub.errors import NotApplicableError, PrivpubError
from privpub.types import Graph, JointDegree, Release
from privpub.validation import check_rng

__all__ = [
    "GENERATORS",
    "NETWORKX_MAX_EDGES",
    "GenerationReport",
    "check_generator",
    "generate_graph",
    "synthesize",
]

#: Graph generators known to :func:`generate_graph`.
GENERATORS = ("auto", "networkx", "stub_matching")

#: ``auto`` uses networkx up to this many edges, stub matching beyond (kept from when
#: networkx itself ran, so ``auto`` still picks the generator it picked then).
NETWORKX_MAX_EDGES = 2_000_000


def check_generator(generator) -> str:
    """``generator`` if it is one of :data:`GENERATORS`, else a
    :class:`~privpub.errors.PrivpubError`."""
    if generator not in GENERATORS:
        raise PrivpubError(f"generator must be one of {GENERATORS}, got {generator!r}")
    return generator


@dataclass(frozen=True)
class GenerationReport:
    """What :func:`generate_graph` did.

    Attributes
    ----------
    generator : str
        ``networkx`` or ``stub_matching``.
    dropped : int
        Edges removed by the final simplification (0: the target JDM is met exactly).
    l1_to_target : float
        L1 distance between the generated graph's dK-2 series and the target.
    swaps : int
        Accepted mixing swaps (stub matching only).
    """

    generator: str
    dropped: int
    l1_to_target: float
    swaps: int = 0


def generate_graph(
    jd: JointDegree,
    *,
    rng: np.random.Generator,
    generator: str = "auto",
    mixing: int = 5,
    repair_passes: int = 20,
    name: str = "",
) -> tuple[Graph, GenerationReport]:
    """A random simple graph whose dK-2 series is the realizable JDM ``jd``.

    Parameters
    ----------
    jd : JointDegree
        Must satisfy :func:`~privpub.algorithms.dk.series.is_realizable` (use
        :func:`~privpub.algorithms.dk.repair.repair_joint_degree` first).
    rng : numpy.random.Generator
    generator : {"auto", "networkx", "stub_matching"}
        ``networkx``: ``networkx.joint_degree_graph`` (Gjoka et al. 2015) through its
        bit-exact compiled port :func:`~privpub.algorithms.dk.networkx_port.joint_degree_graph` (the
        same graph as networkx for the same seed, edge order included).
        ``stub_matching``: :func:`~privpub.algorithms.dk.stub_matching.stub_match`. ``auto``:
        networkx
        up to :data:`NETWORKX_MAX_EDGES` (2 million) edges, else stub matching.
    mixing : int
        Stub matching: JDM-preserving swap attempts per edge after the repair.
    repair_passes : int
        Stub matching: passes over the bad edges before dropping what is left.

    Returns
    -------
    (Graph, GenerationReport)
        Nodes are relabelled by a random permutation, so node ids carry no degree order.
    """
    rng = check_rng(rng)
    check_generator(generator)
    if not isinstance(jd, JointDegree):
        raise PrivpubError(f"generate_graph needs a JointDegree, got {type(jd).__name__}")
    if not is_realizable(jd):
        raise PrivpubError("the JDM is not realizable; repair it with repair_joint_degree")
    e = np.rint(jd.counts).astype(np.int64)
    n_edges = int(e.sum())
    if generator == "auto":
        generator = "networkx" if n_edges <= NETWORKX_MAX_EDGES else "stub_matching"
    if n_edges == 0:
        graph = Graph.from_edges(np.empty((0, 2), np.int64), 0, name=name)
        return graph, GenerationReport(generator, 0, 0.0)
    edges, n, dropped, swaps = _generate_edges(jd, e, generator, rng, mixing, repair_passes)
    perm = rng.permutation(n)
    graph = Graph.from_edges(perm[edges], int(n), name=name)
    report = GenerationReport(generator, int(dropped), dk2_l1(joint_degree(graph), jd), int(swaps))
    return graph, report


def _generate_edges(jd: JointDegree, e: np.ndarray, generator: str, rng, mixing,
                    repair_passes) -> tuple[np.ndarray, int, int, int]:
    """The edges ``(E, 2)`` of :func:`generate_graph`'s graph before relabelling, its node
    count, the edges dropped and the accepted swaps, by ``generator`` (not ``auto``)."""
    if generator == "networkx":
        # the compiled port: networkx's graph for this seed, edge for edge
        edges, n, _ = joint_degree_graph(to_networkx_dict(jd), int(rng.integers(2**31 - 1)))
        return edges, n, 0, 0
    n_of = np.rint(node_counts(jd)).astype(np.int64)
    return stub_match(jd.low, jd.high, e, n_of, rng, int(repair_passes), 50, int(mixing))


def synthesize(jd: JointDegree, *, rng: np.random.Generator, generator: str = "auto",
               name: str = "", max_edges: int | None = None) -> Release:
    """Repair ``jd`` (:func:`~privpub.algorithms.dk.repair.repair_joint_degree`) and generate a
    graph
    from it (:class:`~privpub.errors.NotApplicableError` beyond ``max_edges`` edges).

    sala2011's graph step (Sec 5), post-processing of a noisy dK-2 release: it never reads
    the original graph. The release's ``info``: ``repair_l1`` (L1 change made by the
    repair), ``generation_l1`` (L1 distance of the graph's dK-2 to the repaired target; 0
    unless the stub-matching simplification dropped edges), ``dropped_edges``, ``nodes``,
    ``edges``.
    """
    target, repair = repair_joint_degree(jd)
    if max_edges is not None and repair["edges"] > max_edges:
        raise NotApplicableError(
            f"the noisy dK-2 series implies {repair['edges']:.0f} edges, more than "
            f"max_edges={max_edges}: not generated (sala2011 Sec 5.1: the generator fails on "
            "very noisy series)"
        )
    synthetic, report = generate_graph(target, rng=rng, generator=generator, name=name)
    info = {
        "repair_l1": repair["l1_from_input"],
        "generation_l1": report.l1_to_target,
        "dropped_edges": float(report.dropped),
        "nodes": float(synthetic.n_nodes),
        "edges": float(synthetic.n_edges),
    }
    return Release(synthetic, info)
