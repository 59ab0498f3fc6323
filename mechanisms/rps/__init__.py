"""Recursive Partitioning and Summarization (RPS, qardaji2012) and the mechanisms built on it.

Parts (each uses the others' public names only):

- :mod:`~privpub.mechanisms.rps.framework`: Algorithm 1, :func:`rps`, the tree and its nodes;
- :mod:`~privpub.mechanisms.rps.budget`: a path's budget (Sec 3.2) and the ledger record;
- :mod:`~privpub.mechanisms.rps.quality`: the exponential mechanism's quality functions, Eq (2)-(4);
- :mod:`~privpub.mechanisms.rps.partition`: box regions, their balanced partition, points in a box;
- :mod:`~privpub.mechanisms.rps.checks`: parameter checks;
- :mod:`~privpub.mechanisms.rps.table`: ``rps_table``, synthetic tables under record-DP (Sec 4);
- :mod:`~privpub.mechanisms.rps.degree`: ``rps_degree_sequence`` / ``rps_degree_histogram``,
  node-DP degree sequences (Sec 5);
- :mod:`~privpub.mechanisms.rps.removal_only`: ``rps_degree_sequence_removal_only``, the paper's
  sensitivity reading (not private).

The framework's names are importable from here; the mechanisms register themselves when
their module is imported (the registry finds them). Rationale: docs/design.md,
"qardaji2012: RPS".
"""

from privpub.mechanisms.rps.budget import PathBudget
from privpub.mechanisms.rps.framework import (
    DEFAULT_MAX_NODES,
    Leaf,
    Node,
    NoisyCountStop,
    RPSTree,
    Split,
    rps,
)
from privpub.mechanisms.rps.partition import (
    ATTRIBUTE_CHOICES,
    PARTITIONS,
    SUMMARIES,
    BoxPartition,
    BoxRegion,
    CutGroups,
    cut_groups,
    cut_probabilities,
    sample_in_box,
)
from privpub.mechanisms.rps.quality import (
    ClassBalance,
    CountBalance,
    DegreeBalance,
    degree_quality_level_sensitivity,
    degree_quality_sensitivity,
    quality_class,
    quality_count,
    quality_degree,
)

__all__ = [
    "Node",
    "Split",
    "Leaf",
    "RPSTree",
    "PathBudget",
    "NoisyCountStop",
    "rps",
    "DEFAULT_MAX_NODES",
    "CountBalance",
    "ClassBalance",
    "DegreeBalance",
    "quality_count",
    "quality_class",
    "quality_degree",
    "degree_quality_sensitivity",
    "degree_quality_level_sensitivity",
    "BoxRegion",
    "BoxPartition",
    "CutGroups",
    "cut_groups",
    "cut_probabilities",
    "sample_in_box",
    "PARTITIONS",
    "ATTRIBUTE_CHOICES",
    "SUMMARIES",
]
