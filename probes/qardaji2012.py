"""Probes of qardaji2012's degree-sequence RPS: ablations that check the causes the notes of
Figs 4-5 state: causes checked, not guessed.

Each probe rebuilds exactly the tree :func:`privpub.mechanisms.rps.degree.rps_degree_sequence`
builds (same calls, same random stream: :func:`degree_rps_tree` with ``leaf="smooth"`` gives
the same release for the same seed, a test checks it) and swaps one component:

- ``leaf="true"``: the leaf counts without noise (the partition keeps its noise), so
  what remains is the error of the partition and the lower-bound summaries;
- ``leaf="removal_only"``: the paper's removal-only sensitivity reading
  (:mod:`privpub.mechanisms.rps.removal_only`; not DP);
- :func:`partition_stats`: how sharp the exponential mechanism's cuts are (largest root
  logit), how many leaves lie above the true maximum degree and what share of the nodes
  they receive, and how the smooth-sensitivity noise scale compares with the leaf counts.

``benchmarks/probe_qardaji2012.py`` prints these on the paper's graphs (the numbers the
notes quote); ``probes/tests/test_qardaji2012.py`` reruns the ones on Caltech36.
Diagnostics only: nothing here is a mechanism.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privpub.ledger import PrivacyLedger
from privpub.mechanisms.rps.budget import PathBudget
from privpub.mechanisms.rps.degree import (
    degree_tree,
    leaf_count_summary,
    lower_bound_sequence,
    partition_calibration,
    smooth_sensitivity,
    sorted_degrees,
)
from privpub.mechanisms.rps.framework import RPSTree
from privpub.mechanisms.rps.quality import degree_quality_sensitivity
from privpub.mechanisms.rps.removal_only import RemovalOnlyLeafCount
from privpub.types import DegreeSequence, Graph

__all__ = ["LEAVES", "DegreeRun", "degree_rps_tree", "partition_stats", "root_max_logit"]

LEAVES = ("smooth", "strict", "true", "removal_only")


class _TrueLeafCount:
    """Ablation: the exact leaf count (spends the leaf budget, draws no noise)."""

    def __call__(self, node, *, epsilon, rng, ledger):
        ledger.spend(epsilon, label="leaf count: exact (ablation, not private)")
        return float(node.rows.size)


@dataclass
class DegreeRun:
    """One probe run: the tree, the released sequence and what the probe needs."""

    tree: RPSTree
    release: DegreeSequence
    degree_bound: int
    degrees: np.ndarray
    epsilon: float
    gamma: float


def degree_rps_tree(
    graph: Graph,
    *,
    epsilon: float,
    rng: np.random.Generator,
    leaf: str = "smooth",
    depth: int = 15,
    degree_bound: str = "max_degree",
    split: float = 0.5,
    gamma: float = 4.0,
) -> DegreeRun:
    """The tree and release of :func:`~privpub.mechanisms.rps.degree.rps_degree_sequence` with the
    leaf summary ``leaf``: ``"smooth"`` (ours, ``accounting="paper"``), ``"strict"``
    (``accounting="strict"``), ``"true"`` (exact counts) or ``"removal_only"`` (the
    paper's reading). The partition is always that of ``"smooth"`` except for ``"strict"``
    (level-wide sensitivity)."""
    if leaf not in LEAVES:
        raise ValueError(f"leaf must be one of {LEAVES}, got {leaf!r}")
    degrees, lam, hist = sorted_degrees(graph, degree_bound)
    n = graph.n_nodes
    budget = PathBudget(split=split)
    accounting = "strict" if leaf == "strict" else "paper"
    sens, label = partition_calibration(accounting, lam, n)
    if leaf in ("smooth", "strict"):
        summarize = leaf_count_summary(accounting, hist=hist, degree_bound=lam, gamma=gamma,
                                       epsilon_leaf=budget.split * epsilon)
    elif leaf == "true":
        summarize = _TrueLeafCount()
    else:
        summarize = RemovalOnlyLeafCount(hist, lam, gamma)
    tree = degree_tree(degrees, lam, sensitivity=sens, label=label, summarize=summarize,
                       epsilon=epsilon, depth=depth, rng=rng, ledger=PrivacyLedger(epsilon),
                       budget=budget)
    release = DegreeSequence(lower_bound_sequence(tree, n))
    return DegreeRun(tree, release, lam, degrees, epsilon, gamma)


def root_max_logit(n_nodes: int, degree_bound: int, epsilon: float, *, depth: int = 15,
                   split: float = 0.5) -> float:
    """The largest logit ``eps_level * q / (2 Delta q)`` any cut can have at the root (Eq 4,
    ``q <= n / (4n + 2)``): with ``Lambda = n - 1`` about ``eps / 120`` (depth 15, split
    1/2), so every cut's weight is within a factor ``exp(eps / 120)`` of every other's."""
    eps_level = (1.0 - split) * epsilon / depth
    q_max = n_nodes / (4.0 * n_nodes + 2.0)
    return eps_level * q_max / (2.0 * degree_quality_sensitivity(degree_bound, n_nodes))


def partition_stats(run: DegreeRun) -> dict:
    """What the partition did and how loud the leaf noise is relative to the counts:
    ``leaves``; ``empty_leaves``; ``leaves_above_dmax`` (leaves starting above the true
    maximum degree: empty by construction) and ``share_above_dmax`` (the share of the
    ``n`` released degrees they received); ``noise_over_count``: the median over
    non-empty leaves of the smooth-sensitivity noise scale ``2 (gamma + 1) S / eps_leaf``
    divided by the leaf's true count (> 1: the noise exceeds the count)."""
    leaves = run.tree.leaves
    d_max = int(run.degrees[-1])
    lo = np.array([leaf.region.lo[0] for leaf in leaves], dtype=np.int64)
    hi = np.array([leaf.region.hi[0] for leaf in leaves], dtype=np.int64)
    counts = np.array([leaf.rows.size for leaf in leaves])
    released = np.bincount(
        np.searchsorted(lo, run.release.values, side="right") - 1, minlength=len(leaves)
    )
    above = lo > d_max
    eps_leaf = np.array([leaf.path_epsilon for leaf in leaves])  # full path budget
    spent_above = np.array([_leaf_epsilon(run, leaf) for leaf in leaves])
    hist = np.bincount(run.degrees, minlength=run.degree_bound + 1)
    beta = spent_above / (2.0 * (run.gamma + 1.0))
    s = smooth_sensitivity(hist, lo, hi, run.degree_bound, beta)
    scale = 2.0 * (run.gamma + 1.0) * s / spent_above
    nonempty = counts > 0
    return {
        "leaves": len(leaves),
        "empty_leaves": int((counts == 0).sum()),
        "leaves_above_dmax": int(above.sum()),
        "share_above_dmax": float(released[above].sum() / run.degrees.size),
        "noise_over_count": float(np.median(scale[nonempty] / counts[nonempty])),
        "path_epsilon_max": float(eps_leaf.max()),
    }


def _leaf_epsilon(run: DegreeRun, leaf) -> float:
    """The budget the leaf summary received: what its path had left."""
    spent = sum(e[1] for e in run.tree.profile_entries(leaf.profile) if "leaf" not in e[0])
    return run.epsilon - spent
