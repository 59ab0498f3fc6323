"""Recursive Partitioning and Summarization (RPS): the framework of qardaji2012, Algorithm 1.

RPS views the data items as points of a space, splits a region into two disjoint
sub-regions (balanced partition), recursively, until a stopping condition holds, then
summarizes every leaf region (e.g. a noisy count and tuples drawn inside the region) and
post-processes the leaves into a release ([QL12] Sec 3.1, Algorithm 1)::

    RPS_recursion(D, R):
        (Stop, Info) <- stopping_condition(D, R)
        if Stop: return summarize(D, R)
        (R1, R2) <- balanced_partition(D, R)
        return (Info, RPS_recursion(D, R1), RPS_recursion(D, R2))

:func:`rps` runs that recursion with three pluggable subroutines and a budget allocation
(:class:`PathBudget`) that every root-to-leaf path respects.

Budget (Sec 3.2)
----------------
"We choose to leave half the privacy budget for the final query needed to summarize a leaf
region [...] and the other half for partitioning and checking stopping condition." With
``split`` the leaf share (0.5 in the paper) and maximum depth ``D``, each of the ``D``
levels gets ``(1 - split) * eps / D``, divided between the noisy stopping check (share
``stop_share``) and the partition when both query the data; a subroutine that does not
query the data (the depth and narrow-region stops, the midpoint partition) gets nothing and
the other gets the whole level. A leaf is summarized with *all that is left on its path*
("answered using all remaining privacy budget, as this is the last query along this path"),
which is at least ``split * eps`` and more for leaves that stop early.

Privacy accounting and the ledger
---------------------------------
Sibling regions are disjoint, so under record-level DP one record touches the queries of
one root-to-leaf path only: the release is eps-DP if every path spends at most eps (Sec
3.1, sequential + parallel composition [McS09]). :func:`rps` enforces this while it runs:
every tree node spends through its own :class:`~privpub.ledger.PrivacyLedger` whose total is
what its path has left, so no path can overspend. The caller's ledger then receives the
record in one of two forms (``ledger_detail``):

``"profile"`` (default, compact)
    One :meth:`~privpub.ledger.PrivacyLedger.parallel` block over the disjoint paths, with
    one branch per distinct *path profile* (the sequence of spends along a path; all paths
    that end at the same depth for the same reason share one) holding that profile's
    spends aggregated by label. The parent is charged the maximum branch, i.e. the most
    expensive path. A few dozen entries instead of one per tree node, so the record stored
    with every result row stays small.
``"full"``
    The tree itself: nested ``parallel`` blocks, one per internal node, with branches
    ``L``/``R``. Exact but one entry per query (use it in tests, on small trees).

Either way ``ledger.spent`` is the most any path spent (<= eps).

Partition by the exponential mechanism (Sec 3.2)
------------------------------------------------
:class:`BoxPartition` chooses one cut among *all* candidate cuts of all attributes at once
(or of one random attribute): the multiples of the granularity strictly inside a
continuous range, every boundary between consecutive values of an integer or ordered
discrete range. Cuts between the same two consecutive data values have the same quality,
so the mechanism is sampled exactly and fast by choosing such a group with weight
``size * exp(eps q / (2 Delta))`` and a cut uniformly inside it (:func:`cut_groups`).
We keep the paper's calibration ``exp(eps q / (2 Delta))`` (Definition 2 gives
``2 eps Delta``-DP for ``exp(eps q)``) although Eq (2) and (3) are monotone in the data, for
which [MT07] allows dropping the factor 2.

Plugging in your own subroutines
--------------------------------
The framework only moves *row indices* (``node.rows``, positions in your data) and opaque
*regions* (``node.region``); your subroutines hold the data.

- ``partition`` has ``spends`` (does it query the data?), ``can_split(node)`` (must not
  look at the data: it decides the free "region too narrow" stop) and
  ``__call__(node, *, epsilon, rng, ledger) -> Split`` (spend ``epsilon`` through
  ``ledger`` if ``spends``; return the two children's rows and regions).
- ``summarize(node, *, epsilon, rng, ledger)`` returns anything (the leaf's summary) and
  may spend up to ``epsilon`` (all the path has left).
- ``stopping`` (optional, beyond max depth and narrow regions) has ``spends`` and
  ``__call__(node, *, epsilon, rng, ledger) -> bool`` (True = stop), e.g.
  :class:`NoisyCountStop`.

Sensitivities are yours to get right: every query must be calibrated to the change one
neighbour causes *in one region*, and neighbours must only touch one path for the per-path
argument to hold.

Examples
--------
A 1-D integer dataset, split at the midpoint of the region (data-independent, free), with
a Laplace count per leaf:

>>> import numpy as np
>>> from privpub.noise import laplace_mechanism
>>> from privpub.ledger import PrivacyLedger
>>> x = np.array([1, 2, 2, 3, 7, 8, 9, 9])
>>> class Halve:
...     spends = False                     # data-independent: no budget needed
...     def can_split(self, node):
...         lo, hi = node.region
...         return hi > lo
...     def __call__(self, node, *, epsilon, rng, ledger):
...         lo, hi = node.region
...         mid = (lo + hi + 1) // 2
...         left = x[node.rows] < mid
...         return Split(node.rows[left], (lo, mid - 1), node.rows[~left], (mid, hi))
>>> def noisy_count(node, *, epsilon, rng, ledger):
...     return laplace_mechanism(node.rows.size, sensitivity=1, epsilon=epsilon, rng=rng,
...                              ledger=ledger, label="leaf count")
>>> ledger = PrivacyLedger(1.0)
>>> tree = rps(len(x), (0, 15), partition=Halve(), summarize=noisy_count, epsilon=1.0,
...            depth=2, rng=np.random.default_rng(0), ledger=ledger)
>>> [leaf.region for leaf in tree.leaves]
[(0, 3), (4, 7), (8, 11), (12, 15)]
>>> [int(leaf.rows.size) for leaf in tree.leaves]
[4, 1, 3, 0]
>>> round(ledger.spent, 12)                # every path: one count at the full budget
1.0

References
----------
.. [QL12] W. Qardaji, N. Li. Recursive Partitioning and Summarization: A Practical
   Framework for Differentially Private Data Publishing. ASIACCS 2012. Algorithm 1,
   Sec 3.1-3.2, Eq (2)-(4).
.. [MT07] F. McSherry, K. Talwar. Mechanism design via differential privacy. FOCS 2007.
.. [McS09] F. McSherry. Privacy integrated queries. SIGMOD 2009 (parallel composition).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import LedgerEntry, PrivacyLedger, ensure_ledger
from privpub.noise import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    is_noise_off,
    laplace_mechanism,
    uniform_integers,
)
from privpub.validation import check_depth, check_epsilon, check_rng

__all__ = [
    # framework
    "Node",
    "Split",
    "Leaf",
    "RPSTree",
    "PathBudget",
    "NoisyCountStop",
    "rps",
    "DEFAULT_MAX_NODES",
    # quality functions, Eq (2)-(4)
    "CountBalance",
    "ClassBalance",
    "DegreeBalance",
    "quality_count",
    "quality_class",
    "quality_degree",
    "degree_quality_sensitivity",
    "degree_quality_level_sensitivity",
    # balanced partition of boxes
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

#: Refuse trees with more nodes than this (a deep tree without a noisy-count stop on
#: multi-dimensional data doubles at every level until regions become narrow).
DEFAULT_MAX_NODES = 1 << 20

PARTITIONS = ("median", "midpoint")
ATTRIBUTE_CHOICES = ("all", "random")
SUMMARIES = ("uniform", "midpoint", "lower")
_DETAILS = ("profile", "full")


def check_option(value, options: Sequence[str], name: str) -> str:
    """``value`` if it is one of ``options``, else a :class:`PrivpubError` listing them."""
    if not isinstance(value, str) or value not in options:
        raise PrivpubError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def check_share(value, name: str, *, allow_one: bool = True) -> float:
    """A budget share in (0, 1] (or (0, 1) with ``allow_one=False``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PrivpubError(f"{name} must be a number in (0, 1], got {value!r}")
    value = float(value)
    top_ok = value <= 1.0 if allow_one else value < 1.0
    if not (value > 0.0 and top_ok):
        interval = "(0, 1]" if allow_one else "(0, 1)"
        raise PrivpubError(f"{name} must lie in {interval}, got {value}")
    return value


# =========================================================================== framework
@dataclass(slots=True)
class Node:
    """A region of the partition tree.

    Attributes
    ----------
    rows : numpy.ndarray
        Indices of the data items in the region (private: never released as such).
    region : Any
        The region (public: chosen by DP queries or data-independent rules).
    depth : int
        0 at the root.
    path : str
        ``"0"``/``"1"`` for left/right at each level from the root (``""`` at the root).
    cache : Any
        Free for the partition to keep what ``can_split`` computed for ``__call__``.
    """

    rows: np.ndarray
    region: Any
    depth: int
    path: str
    cache: Any = None


@dataclass(frozen=True, slots=True)
class Split:
    """What a partition returns: the two children's rows and regions (disjoint)."""

    left_rows: np.ndarray
    left_region: Any
    right_rows: np.ndarray
    right_region: Any


@dataclass(slots=True)
class Leaf:
    """A leaf region, why it stopped (``"depth"``, ``"narrow"`` or ``"count"``), its summary
    and what its root-to-leaf path spent (``path_epsilon``)."""

    rows: np.ndarray
    region: Any
    depth: int
    path: str
    reason: str
    summary: Any
    path_epsilon: float
    profile: int = -1


@dataclass(slots=True)
class _TreeNode:
    entries: tuple[LedgerEntry, ...]
    depth: int
    children: tuple[int, int] | None = None
    leaf: int | None = None


@dataclass
class RPSTree:
    """Result of :func:`rps`: the leaves in left-to-right order and the tree's spends."""

    leaves: list[Leaf]
    n_nodes: int
    epsilon: float
    _nodes: list[_TreeNode] = field(repr=False, default_factory=list)
    _profiles: list[tuple[int, tuple]] = field(repr=False, default_factory=list)

    @property
    def max_depth(self) -> int:
        return max((leaf.depth for leaf in self.leaves), default=0)

    def path_spends(self) -> np.ndarray:
        """Epsilon spent along each root-to-leaf path (leaf order), from the per-node
        ledgers."""
        return np.array([leaf.path_epsilon for leaf in self.leaves])

    def path_entries(self, leaf_index: int) -> list[LedgerEntry]:
        """Every spend along the path to leaf ``leaf_index`` (root first)."""
        path = self.leaves[leaf_index].path
        out, node = [], self._nodes[0]
        out.extend(node.entries)
        for bit in path:
            node = self._nodes[node.children[int(bit)]]
            out.extend(node.entries)
        return out

    def profile_entries(self, profile: int) -> list[tuple]:
        """The spends ``(label, epsilon, sensitivity, primitive)`` of a path profile."""
        chunks = []
        while profile >= 0:
            parent, entries = self._profiles[profile]
            chunks.append(entries)
            profile = parent
        return [e for chunk in reversed(chunks) for e in chunk]


@dataclass(frozen=True)
class PathBudget:
    """How a path's budget is split (Sec 3.2): ``split`` for the leaf summary, the rest in
    equal parts over the ``depth`` levels, each level's part divided between the noisy
    stopping check (``stop_share``) and the partition.

    Parameters
    ----------
    split : float in (0, 1]
        Share of epsilon reserved for the leaf summary (paper: 1/2). 1 leaves nothing for
        data-dependent partitions or stopping checks (allowed only when neither is used).
    stop_share : float in (0, 1)
        Share of each level's budget for the stopping check when both the check and the
        partition query the data (our choice: 1/2; the paper leaves it open).
    level_ratio : float > 0
        How the levels share ``(1 - split) eps``: level ``i`` (0 at the root) gets a part
        proportional to ``level_ratio ** i``. 1 (default): equal parts, our reading of
        Sec 3.2; < 1 front-loads the budget on the shallow levels, where a path always
        passes, so a deep maximum depth costs the first splits little (qardaji2012 Fig. 1
        probe). Any ratio keeps every path within eps.
    """

    split: float = 0.5
    stop_share: float = 0.5
    level_ratio: float = 1.0

    def __post_init__(self):
        check_share(self.split, "split")
        check_share(self.stop_share, "stop_share", allow_one=False)
        r = self.level_ratio
        if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) or (
            not (r > 0 and math.isfinite(r))
        ):
            raise PrivpubError(f"level_ratio must be a finite number > 0, got {r!r}")

    def per_level(
        self,
        epsilon: float,
        depth: int,
        *,
        partition_spends: bool,
        stop_spends: bool,
        level: int | None = None,
    ) -> tuple[float, float]:
        """``(eps_stop, eps_partition)`` spent at an internal node of depth ``level`` (every
        level alike when ``level_ratio`` is 1)."""
        if depth == 0 or not (partition_spends or stop_spends):
            return 0.0, 0.0
        if self.split >= 1.0:
            raise PrivpubError(
                "split = 1 leaves no budget for the partition or the noisy stopping check; "
                "use split < 1, or a data-independent partition without a noisy-count stop"
            )
        level_eps = (1.0 - self.split) * epsilon / depth
        if self.level_ratio != 1.0 and level is not None:
            r = float(self.level_ratio)
            weights = r ** np.arange(depth, dtype=float)
            level_eps = (1.0 - self.split) * epsilon * float(weights[level] / weights.sum())
        level = level_eps
        if partition_spends and stop_spends:
            return self.stop_share * level, (1.0 - self.stop_share) * level
        return (level, 0.0) if stop_spends else (0.0, level)


class NoisyCountStop:
    """Stop when the Laplace-noised number of items in the region is at most ``threshold``
    (Sec 3.2; Fig 1: "a noisy count <= 5"). Sensitivity 1: one record changes the count of
    one region by one (record-level DP)."""

    spends = True

    def __init__(self, threshold: float):
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float, np.integer, np.floating))
            or not (threshold >= 0 and math.isfinite(threshold))
        ):
            raise PrivpubError(f"stop_count must be a finite number >= 0, got {threshold!r}")
        self.threshold = float(threshold)

    def __call__(self, node: Node, *, epsilon, rng, ledger) -> bool:
        noisy = laplace_mechanism(
            float(node.rows.size),
            sensitivity=1.0,
            epsilon=epsilon,
            rng=rng,
            ledger=ledger,
            label="stop check: noisy count (Laplace)",
        )
        return bool(noisy <= self.threshold)


def rps(
    n_items: int,
    root_region,
    *,
    partition,
    summarize: Callable,
    stopping=None,
    epsilon: float,
    depth: int,
    rng: np.random.Generator,
    ledger: PrivacyLedger | None = None,
    budget: PathBudget | None = None,
    ledger_detail: str = "profile",
    max_nodes: int = DEFAULT_MAX_NODES,
) -> RPSTree:
    """Run RPS (Algorithm 1 of [QL12]) on ``n_items`` data items.

    Parameters
    ----------
    n_items : int
        Number of data items; the root holds rows ``0 .. n_items - 1``.
    root_region : Any
        The public region containing every item (e.g. the schema's domain).
    partition : object
        ``spends``, ``can_split(node)``, ``__call__(node, *, epsilon, rng, ledger) -> Split``
        (see the module docstring).
    summarize : callable
        ``summarize(node, *, epsilon, rng, ledger) -> summary`` for every leaf; ``epsilon``
        is all its path has left.
    stopping : object, optional
        Extra stopping condition (``spends``, ``__call__ -> bool``), checked at every node
        above the maximum depth whose region can still be split, e.g.
        :class:`NoisyCountStop`. The maximum depth and narrow regions always stop (free).
    epsilon : float
        Budget of every root-to-leaf path, > 0.
    depth : int
        Maximum depth, >= 0 (0: the root is the only leaf).
    rng : numpy.random.Generator
    ledger : PrivacyLedger, optional
        The caller's ledger (total ``epsilon``); receives the record (``ledger_detail``).
    budget : PathBudget, optional
        Default ``PathBudget()`` (half for the leaves, Sec 3.2).
    ledger_detail : {"profile", "full"}
        Compact record (one branch per distinct path profile) or the whole tree.
    max_nodes : int
        Refuse to build a larger tree.

    Returns
    -------
    RPSTree
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth(depth)
    rng = check_rng(rng)
    check_option(ledger_detail, _DETAILS, "ledger_detail")
    ledger = ensure_ledger(ledger, epsilon)
    budget = PathBudget() if budget is None else budget
    stop_spends = stopping is not None and bool(stopping.spends)
    per_depth = [
        budget.per_level(
            epsilon,
            depth,
            partition_spends=bool(partition.spends),
            stop_spends=stop_spends,
            level=i,
        )
        for i in range(depth)
    ]

    if stopping is None and hasattr(partition, "max_leaves"):
        # without a data-dependent stop the tree is only bounded by depth and narrowness:
        # refuse now rather than after building max_nodes nodes
        bound = min(2.0 ** depth, float(partition.max_leaves()))
        if 2 * bound - 1 > max_nodes:
            raise PrivpubError(
                f"without a noisy-count stop (stop_count=None) the RPS tree may grow to "
                f"min(2^depth, #finest cells) = {bound:.3g} leaves, more than max_nodes = "
                f"{max_nodes} nodes allow: empty regions keep splitting until they are narrow "
                "or reach the maximum depth. Set stop_count (the paper's 'stop at a count of "
                "0' is stop_count=0) or a smaller depth"
            )
    nodes: list[_TreeNode] = []
    leaves: list[Leaf] = []
    # path profiles, interned: (parent profile, this node's spends) -> id
    profiles: list[tuple[int, tuple]] = []
    profile_ids: dict[tuple, int] = {}

    def intern(parent: int, entries) -> int:
        key = (parent, tuple((e.label, e.epsilon, e.sensitivity, e.primitive) for e in entries))
        pid = profile_ids.get(key)
        if pid is None:
            pid = profile_ids[key] = len(profiles)
            profiles.append(key)
        return pid

    root = Node(np.arange(int(n_items), dtype=np.int64), root_region, 0, "")
    # explicit stack (no recursion limit): (node, its path-local ledger, tree index, profile)
    nodes.append(_TreeNode((), 0))
    stack = [(root, PrivacyLedger(epsilon, label="root"), 0, -1)]
    while stack:
        node, node_ledger, index, parent_profile = stack.pop()
        reason = None
        if node.depth >= depth:
            reason = "depth"
        elif not partition.can_split(node):
            reason = "narrow"
        elif stopping is not None and stopping(
            node,
            epsilon=per_depth[node.depth][0],
            rng=rng,
            ledger=node_ledger if stop_spends else None,
        ):
            reason = "count"
        if reason is not None:
            left = node_ledger.remaining
            summary = summarize(node, epsilon=left, rng=rng, ledger=node_ledger)
            entries = node_ledger.entries
            nodes[index].entries = tuple(entries)
            nodes[index].leaf = len(leaves)
            path_eps = sum(e.epsilon for e in entries) + (epsilon - node_ledger.total)
            leaves.append(Leaf(node.rows, node.region, node.depth, node.path, reason, summary,
                               path_eps, intern(parent_profile, entries)))
            continue
        split = partition(
            node,
            epsilon=per_depth[node.depth][1],
            rng=rng,
            ledger=node_ledger if partition.spends else None,
        )
        entries = node_ledger.entries
        nodes[index].entries = tuple(entries)
        profile = intern(parent_profile, entries)
        if len(nodes) + 2 > max_nodes:
            if is_noise_off():  # the noise-free limit of this cell cannot be built: skip it
                raise NotApplicableError(
                    f"the noise-free RPS tree exceeds {max_nodes} nodes (depth {depth}): with "
                    "exact counts a stop at count <= threshold never ends a region holding "
                    "more rows, so regions are split down to single rows and the maximum depth"
                )
            raise PrivpubError(
                f"the RPS tree exceeds {max_nodes} nodes (depth {depth}): without a "
                "noisy-count stop, empty regions are split until they are narrow or the "
                "maximum depth is reached; use stop_count or a smaller depth"
            )
        remaining = node_ledger.remaining
        if remaining <= 0:
            raise PrivpubError("internal error: a path exhausted its budget above its leaf")
        first = len(nodes)
        nodes.append(_TreeNode((), node.depth + 1))
        nodes.append(_TreeNode((), node.depth + 1))
        nodes[index].children = (first, first + 1)
        # push right first so that the left child is visited first
        right = Node(split.right_rows, split.right_region, node.depth + 1, node.path + "1")
        left = Node(split.left_rows, split.left_region, node.depth + 1, node.path + "0")
        stack.append((right, PrivacyLedger(remaining, label=right.path), first + 1, profile))
        stack.append((left, PrivacyLedger(remaining, label=left.path), first, profile))

    tree = RPSTree(leaves, len(nodes), epsilon, nodes, profiles)
    if ledger_detail == "full":
        _replay(ledger, nodes, 0)
    else:
        _record_profiles(ledger, tree)
    return tree


def _respend(ledger: PrivacyLedger, entry: LedgerEntry, label: str | None = None) -> None:
    ledger.spend(
        entry.epsilon,
        label=entry.label if label is None else label,
        sensitivity=entry.sensitivity,
        primitive=entry.primitive,
    )


def _replay(ledger: PrivacyLedger, nodes: list[_TreeNode], index: int) -> None:
    """Spend the tree node's entries, then its children inside one parallel block."""
    tn = nodes[index]
    for e in tn.entries:
        _respend(ledger, e)
    if tn.children is not None:
        with ledger.parallel(f"split at depth {tn.depth}") as branch:
            for name, child in zip(("L", "R"), tn.children, strict=True):
                _replay(branch(name), nodes, child)


def _record_profiles(ledger: PrivacyLedger, tree: RPSTree) -> None:
    """One parallel block over the disjoint root-to-leaf paths, one branch per distinct
    sequence of spends, aggregated by (label, sensitivity, primitive)."""
    groups: dict[tuple, list] = {}
    for i, leaf in enumerate(tree.leaves):
        groups.setdefault((leaf.depth, leaf.reason, leaf.profile), []).append(i)
    profiles = {key: tree.profile_entries(key[2]) for key in groups}
    if not any(profiles.values()):
        return  # nothing spent at all (e.g. a summary that spends nothing)
    with ledger.parallel("RPS: disjoint root-to-leaf paths (parallel composition)") as branch:
        for (leaf_depth, reason, pid), members in groups.items():
            entries = profiles[(leaf_depth, reason, pid)]
            b = branch(f"{len(members)} path(s) ending at depth {leaf_depth} ({reason} stop)")
            totals: dict[tuple, list] = {}
            for label, eps, sens, prim in entries:
                slot = totals.setdefault((label, sens, prim), [0.0, 0])
                slot[0] += eps
                slot[1] += 1
            for (label, sens, prim), (eps, times) in totals.items():
                shown = label if times == 1 else f"{label} (x{times}, {eps / times:.6g} each)"
                b.spend(eps, label=shown, sensitivity=sens, primitive=prim)


# =========================================================================== quality functions
def quality_count(left, total):
    """Eq (2) of [QL12]: ``q = (n - |r1 - r2|) / 4`` with ``r1 = left``, ``r2 = n - left``,
    ``n = total`` (the region's count). Sensitivity 1/2 under adding/removing one record
    (Sec 3.2): ``n - |r1 - r2| = 2 min(r1, r2)`` changes by 0 or 2."""
    left = np.asarray(left, dtype=float)
    total = np.asarray(total, dtype=float)
    return (total - np.abs(2.0 * left - total)) / 4.0


def quality_class(left, total, left_pos, total_pos):
    """Eq (3) of [QL12] (binary class): ``q = (n - |r1 - r2| + max(x1 + y2, y1 + x2)) / 2``,
    ``x1, x2`` = number of ``+``/``-`` items in R1, ``y1, y2`` in R2.

    Sensitivity 3/2 (the paper does not state it): adding or removing a record changes
    ``n - |r1 - r2|`` by 0 or 2 and ``max(...)`` by 0 or 1, in the same direction.
    """
    left = np.asarray(left, dtype=float)
    total = np.asarray(total, dtype=float)
    x1 = np.asarray(left_pos, dtype=float)
    x2 = left - x1
    y1 = np.asarray(total_pos, dtype=float) - x1
    y2 = (total - left) - y1
    return (total - np.abs(2.0 * left - total) + np.maximum(x1 + y2, y1 + x2)) / 2.0


def quality_degree(left, total, n_nodes):
    """Eq (4) of [QL12]: ``q = (r1 + r2 - |r1 - r2|) / (4n + 2)``, ``n`` = number of nodes
    of the graph (public), ``r1 + r2`` = nodes whose degree lies in the region."""
    left = np.asarray(left, dtype=float)
    total = np.asarray(total, dtype=float)
    return (total - np.abs(2.0 * left - total)) / (4.0 * n_nodes + 2.0)


def degree_quality_sensitivity(degree_bound: int, n_nodes: int) -> float:
    """Sensitivity of Eq (4) in one region under node neighbours, as Sec 5.1 derives it:
    ``(2 (Lambda + 1) + 1) / (4n + 2)`` (``<= 1/2`` since ``Lambda <= n - 1``).

    One node change moves at most ``Lambda + 1`` entries of the degree sequence (the node
    and its neighbours), each changing ``min(r1, r2)`` by at most one, so
    ``r1 + r2 - |r1 - r2| = 2 min(r1, r2)`` changes by at most ``2 (Lambda + 1)``; the
    paper's extra ``+ 1`` is slack we keep.
    """
    return (2.0 * (degree_bound + 1) + 1.0) / (4.0 * n_nodes + 2.0)


def degree_quality_level_sensitivity(degree_bound: int, n_nodes: int) -> float:
    """Sum over the disjoint regions of one tree level of the largest change of Eq (4):
    ``4 (Lambda + 1) / (4n + 2)``.

    Each of the at most ``Lambda + 1`` moved entries touches at most two regions (the one
    it leaves and the one it enters), changing ``2 min(r1, r2)`` of each by at most 2.
    Calibrating every region's exponential mechanism of one level to this bound makes the
    whole level cost its budget once under node neighbours (used by ``accounting="strict"``
    in :mod:`mechanisms.rps_degree`).
    """
    return 4.0 * (degree_bound + 1) / (4.0 * n_nodes + 2.0)


class CountBalance:
    """Eq (2): even split only; sensitivity 1/2."""

    needs_labels = False
    sensitivity = 0.5
    label = "partition: exponential mechanism, Eq (2) count balance"

    def __call__(self, left, total, left_pos=None, total_pos=None):
        return quality_count(left, total)


class ClassBalance:
    """Eq (3): even split that separates a binary class; sensitivity 3/2."""

    needs_labels = True
    sensitivity = 1.5
    label = "partition: exponential mechanism, Eq (3) class-aware balance"

    def __call__(self, left, total, left_pos=None, total_pos=None):
        return quality_class(left, total, left_pos, total_pos)


class DegreeBalance:
    """Eq (4): even split of a degree sequence, normalised by ``4n + 2``."""

    needs_labels = False

    def __init__(self, n_nodes: int, sensitivity: float, label: str):
        self.n_nodes = int(n_nodes)
        self.sensitivity = float(sensitivity)
        self.label = label

    def __call__(self, left, total, left_pos=None, total_pos=None):
        return quality_degree(left, total, self.n_nodes)


# =========================================================================== boxes
@dataclass(frozen=True, slots=True)
class BoxRegion:
    """An axis-aligned box: ``lo[j] <= x_j <= hi[j]`` on discrete axes (integers: codes or
    integer values, both ends included) and ``lo[j] <= x_j < hi[j]`` on continuous ones
    (the root's top end is included)."""

    lo: np.ndarray
    hi: np.ndarray


@dataclass(frozen=True)
class CutGroups:
    """Candidate cuts of one axis grouped into runs of equal quality.

    Cut ``k`` splits at threshold ``t_k = k * granularity`` (left: ``x < t_k``). Group
    ``i`` holds the cuts ``k_first[i] .. k_first[i] + size[i] - 1``, all of which put
    ``left[i]`` items (``left_pos[i]`` of the positive class) on the left.
    """

    k_first: np.ndarray
    size: np.ndarray
    left: np.ndarray
    left_pos: np.ndarray | None


def cut_groups(
    values, kmin: int, kmax: int, *, discrete: bool, granularity: float = 1.0, labels=None
) -> CutGroups:
    """Group the candidate cuts ``kmin .. kmax`` of one axis by how they split ``values``.

    Between two consecutive distinct values ``u_i < u_{i+1}`` every cut ``k`` with
    ``u_i < k g <= u_{i+1}`` puts exactly the items ``<= u_i`` on the left, so the
    exponential mechanism over all cuts (Sec 3.2: "all multiples of the granularity") can
    be sampled exactly by choosing a group with weight ``size * exp(...)`` and then a cut
    uniformly inside it: ``O(#distinct values)`` work instead of ``O(domain size)``.

    Parameters
    ----------
    values : array_like
        The axis values of the items in the region.
    kmin, kmax : int
        First and last candidate cut (``kmin > kmax``: none).
    discrete : bool
        Integer axis (``granularity`` must then be 1).
    granularity : float
    labels : array_like of {0, 1}, optional
        Binary class labels, to count positives on the left (Eq 3).
    """
    values = np.asarray(values, dtype=float)
    if kmin > kmax:
        empty = np.empty(0, dtype=np.int64)
        return CutGroups(empty, empty, empty, None if labels is None else empty)
    width = kmax - kmin + 2  # integer values of a discrete region: kmin - 1 .. kmax
    if discrete and width <= 4 * values.size + 64:  # counting, no sort
        # values outside the region act like its ends (left of every cut / right of all)
        codes = np.clip(values.astype(np.int64) - (kmin - 1), 0, width - 1)
        cnt = np.bincount(codes, minlength=width)
        nz = np.flatnonzero(cnt)
        u = (nz + (kmin - 1)).astype(float)
        cum_pos = None
        if labels is not None:
            pos = np.bincount(codes, weights=labels, minlength=width)
            cum_pos = np.cumsum(pos)[nz].astype(np.int64)
        cnt = cnt[nz]
    elif labels is None:
        u, cnt = np.unique(values, return_counts=True)
        cum_pos = None
    else:
        order = np.argsort(values, kind="stable")
        vs = values[order]
        change = np.empty(vs.size, dtype=bool)
        np.not_equal(vs[1:], vs[:-1], out=change[:-1])
        change[-1:] = True
        last = np.flatnonzero(change)
        u = vs[last]
        cum_pos = np.cumsum(np.asarray(labels, dtype=np.int64)[order])[last]
        cnt = np.diff(last, prepend=-1)
    m = u.size
    b = u if discrete else np.floor(u / granularity)
    edges = np.empty(m + 2, dtype=np.int64)
    edges[0] = kmin - 1
    edges[1:-1] = np.clip(b, kmin - 1, kmax)
    edges[-1] = kmax
    size = np.diff(edges)
    left = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(cnt, out=left[1:])
    keep = size > 0
    left_pos = None
    if cum_pos is not None:
        left_pos = np.zeros(m + 1, dtype=np.int64)
        left_pos[1:] = cum_pos
        left_pos = left_pos[keep]
    return CutGroups(edges[:-1][keep] + 1, size[keep], left[keep], left_pos)


def _log_weighted_quality(quality, sizes, sensitivity, epsilon):
    """Quality shifted so that the exponential mechanism's logit of a group is
    ``eps q / (2 Delta) + log(size)``: the exact weight of ``size`` cuts of equal quality
    (every group holds at least one cut)."""
    return quality + (2.0 * sensitivity / epsilon) * np.log(sizes.astype(float))


class BoxPartition:
    """Balanced binary partition of boxes (Sec 3.2, Sec 4.2, Fig 2c).

    Parameters
    ----------
    columns : sequence of numpy.ndarray
        One float array per axis: the items' coordinates (codes for ordered discrete
        attributes).
    discrete : sequence of bool
        Integer axis (candidate cuts between consecutive integers) or continuous
        (candidate cuts at the multiples of ``granularity``).
    granularity : float or sequence of float
        Cut granularity of continuous axes (Sec 4.2: "integer granularity").
    quality : CountBalance, ClassBalance or DegreeBalance
        The exponential mechanism's quality function and its sensitivity.
    labels : numpy.ndarray of {0, 1}, optional
        Binary class of every item (for :class:`ClassBalance`).
    method : {"median", "midpoint"}
        ``"median"``: exponential mechanism over candidate cuts (Sec 3.2). ``"midpoint"``:
        the middle of the region's range, data-independent and free (Fig 2c).
    attributes : {"all", "random"}
        ``"all"``: one exponential mechanism over every cut of every axis at once (Sec 3.2).
        ``"random"``: an axis chosen uniformly among those that can still be split, then
        the exponential mechanism over its cuts (Sec 4.2, Fig 3). For ``"midpoint"``,
        ``"all"`` splits the axis whose range is widest relative to its root range (ties:
        the first), which cycles through the axes like a k-d tree.
    domain_lo, domain_hi : array_like
        The root box (to measure relative widths).
    """

    def __init__(
        self,
        columns,
        discrete,
        *,
        quality,
        granularity=1.0,
        labels=None,
        method: str = "median",
        attributes: str = "all",
        domain_lo=None,
        domain_hi=None,
    ):
        self.columns = [np.asarray(c, dtype=float) for c in columns]
        self.discrete = np.asarray(discrete, dtype=bool)
        self.granularity = np.broadcast_to(
            np.asarray(granularity, dtype=float), self.discrete.shape
        ).copy()
        self.granularity[self.discrete] = 1.0
        self._discrete_f = self.discrete.astype(float)
        self.quality = quality
        self.labels = None if labels is None else np.asarray(labels, dtype=np.int64)
        if getattr(quality, "needs_labels", False) and self.labels is None:
            raise PrivpubError("the class-aware quality (Eq 3) needs class labels")
        self.method = check_option(method, PARTITIONS, "partition")
        self.attributes = check_option(attributes, ATTRIBUTE_CHOICES, "attributes")
        self.spends = self.method == "median"
        self._total_pos = None
        lo = np.zeros(self.discrete.size) if domain_lo is None else np.asarray(domain_lo, float)
        hi = np.ones(self.discrete.size) if domain_hi is None else np.asarray(domain_hi, float)
        kmin, kmax = self.candidate_range(lo, hi)
        self._root_cuts = np.maximum(kmax - kmin + 1, 1).astype(float)
        self._domain_known = domain_lo is not None and domain_hi is not None

    # ------------------------------------------------------------------ geometry
    def candidate_range(self, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """First and last candidate cut index of every axis of the box ``[lo, hi]``:
        ``lo + 1 .. hi`` on discrete axes, the multiples ``k g`` strictly inside
        ``(lo, hi)`` on continuous ones."""
        kmin = np.floor(lo / self.granularity) + 1.0
        kmax = np.ceil(hi / self.granularity) - 1.0 + self._discrete_f
        return kmin.astype(np.int64), kmax.astype(np.int64)

    def max_leaves(self) -> float:
        """Number of finest cells of the root box (a data-independent bound on leaves)."""
        return float(np.prod(self._root_cuts + 1.0)) if self._domain_known else math.inf

    def can_split(self, node: Node) -> bool:
        node.cache = self.candidate_range(node.region.lo, node.region.hi)
        return bool((node.cache[0] <= node.cache[1]).any())

    # ------------------------------------------------------------------ choosing a cut
    def groups(self, node: Node, axes, kmin=None, kmax=None) -> list[tuple[int, CutGroups]]:
        """Candidate cut groups of ``axes`` for the node's items."""
        if kmin is None:
            kmin, kmax = self.candidate_range(node.region.lo, node.region.hi)
        rows = node.rows
        if rows.size == 0:  # every cut has the same quality: one group per axis
            zero = np.zeros(1, dtype=np.int64)
            return [
                (
                    int(j),
                    CutGroups(
                        kmin[j : j + 1],
                        kmax[j : j + 1] - kmin[j : j + 1] + 1,
                        zero,
                        zero if self.quality.needs_labels else None,
                    ),
                )
                for j in axes
            ]
        labels = self.labels[rows] if self.quality.needs_labels else None
        return [
            (
                int(j),
                cut_groups(
                    self.columns[j][rows],
                    int(kmin[j]),
                    int(kmax[j]),
                    discrete=bool(self.discrete[j]),
                    granularity=float(self.granularity[j]),
                    labels=labels,
                ),
            )
            for j in axes
        ]

    def _scores(self, node: Node, axes, kmin=None, kmax=None):
        parts = self.groups(node, axes, kmin, kmax)
        total = float(node.rows.size)
        total_pos = float(self.labels[node.rows].sum()) if self.quality.needs_labels else None
        if len(parts) == 1:
            j, g = parts[0]
            axis_of = np.full(g.size.size, j)
            k_first, size, left, left_pos = g.k_first, g.size, g.left, g.left_pos
        else:
            axis_of = np.concatenate([np.full(g.size.size, j) for j, g in parts])
            k_first = np.concatenate([g.k_first for _, g in parts])
            size = np.concatenate([g.size for _, g in parts])
            left = np.concatenate([g.left for _, g in parts])
            left_pos = (
                np.concatenate([g.left_pos for _, g in parts])
                if self.quality.needs_labels
                else None
            )
        return axis_of, k_first, size, self.quality(left, total, left_pos, total_pos)

    def probabilities(self, node: Node, epsilon: float, axes=None):
        """Exact selection probability of every cut group (for tests and diagnostics):
        ``(axis, k_first, size, probability of the group)``."""
        kmin, kmax = self.candidate_range(node.region.lo, node.region.hi)
        axes = np.flatnonzero(kmin <= kmax) if axes is None else axes
        axis_of, k_first, size, q = self._scores(node, axes, kmin, kmax)
        p = exponential_mechanism_probabilities(
            _log_weighted_quality(q, size, self.quality.sensitivity, epsilon),
            sensitivity=self.quality.sensitivity,
            epsilon=epsilon,
        )
        return axis_of, k_first, size, p

    def __call__(self, node: Node, *, epsilon, rng, ledger) -> Split:
        lo, hi = node.region.lo, node.region.hi
        kmin, kmax = node.cache if node.cache is not None else self.candidate_range(lo, hi)
        ok = np.flatnonzero(kmin <= kmax)
        if ok.size == 0:
            raise PrivpubError("internal error: partition called on a narrow region")
        if self.method == "midpoint":
            if self.attributes == "random":
                j = int(ok[rng.integers(ok.size)])
            else:
                rel = (kmax[ok] - kmin[ok] + 1) / self._root_cuts[ok]
                j = int(ok[np.argmax(rel)])
            k = self._midpoint_cut(j, lo, hi, kmin, kmax)
        else:
            axes = ok[rng.integers(ok.size, size=1)] if self.attributes == "random" else ok
            axis_of, k_first, size, q = self._scores(node, axes, kmin, kmax)
            sens = self.quality.sensitivity
            # noise off: the best cut (argmax of q, the epsilon -> inf limit), not the most
            # probable group (q plus log of the group's size), which favours wide empty gaps
            pick = exponential_mechanism(
                q if is_noise_off() else _log_weighted_quality(q, size, sens, epsilon),
                sensitivity=sens,
                epsilon=epsilon,
                rng=rng,
                ledger=ledger,
                label=self.quality.label,
            )
            j = int(axis_of[pick])
            # a uniform cut inside the chosen group: part of the exponential mechanism
            k = int(k_first[pick]) + int(uniform_integers(0, int(size[pick]), rng=rng))
        return self._apply(node, j, k)

    def _midpoint_cut(self, j: int, lo, hi, kmin, kmax) -> int:
        if self.discrete[j]:
            return int(kmin[j] + (kmax[j] - kmin[j]) // 2)
        mid = 0.5 * (lo[j] + hi[j]) / self.granularity[j]
        return int(min(max(round(mid), kmin[j]), kmax[j]))

    def _apply(self, node: Node, j: int, k: int) -> Split:
        t = k * self.granularity[j]
        mask = self.columns[j][node.rows] < t
        lo, hi = node.region.lo, node.region.hi
        left_hi = hi.copy()
        right_lo = lo.copy()
        left_hi[j] = k - 1 if self.discrete[j] else t
        right_lo[j] = k if self.discrete[j] else t
        return Split(
            node.rows[mask], BoxRegion(lo, left_hi), node.rows[~mask], BoxRegion(right_lo, hi)
        )


def cut_probabilities(values, *, epsilon: float, lo: int, hi: int, quality=None, labels=None):
    """Probability that the exponential mechanism picks each integer cut ``k`` in
    ``lo+1 .. hi`` of a 1-D integer region ``[lo, hi]`` (left: ``x < k``). For tests."""
    quality = CountBalance() if quality is None else quality
    values = np.asarray(values, dtype=float)
    part = BoxPartition(
        [values], [True], quality=quality, labels=labels, domain_lo=[lo], domain_hi=[hi]
    )
    node = Node(
        np.arange(values.size), BoxRegion(np.array([lo], float), np.array([hi], float)), 0, ""
    )
    _, k_first, size, p = part.probabilities(node, check_epsilon(epsilon))
    cuts = np.arange(lo + 1, hi + 1)
    out = np.zeros(cuts.size)
    for k0, s, pk in zip(k_first, size, p, strict=True):
        out[k0 - lo - 1 : k0 - lo - 1 + s] = pk / s
    return cuts, out


# =========================================================================== summaries
def sample_in_box(lo, hi, discrete, mode: str, rng: np.random.Generator) -> np.ndarray:
    """One point per row of ``lo``/``hi`` (shape ``(m, d)``) inside its box (Sec 3.2).

    ``"uniform"``: uniform in the box (discrete axes: a uniform integer in ``[lo, hi]``;
    for categorical codes this draws uniformly among the values in the region, the paper's
    "set of all values in the region"). ``"midpoint"``: the middle of the range (discrete:
    rounded down). ``"lower"``: the lower end.
    """
    check_option(mode, SUMMARIES, "summary")
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    discrete = np.broadcast_to(np.asarray(discrete, dtype=bool), lo.shape[-1:])
    if mode == "lower":
        return lo.copy()
    if mode == "midpoint":
        mid = 0.5 * (lo + hi)
        return np.where(discrete, np.floor(mid), mid)
    u = rng.random(lo.shape)
    cont = lo + u * (hi - lo)
    disc = np.minimum(lo + np.floor(u * (hi - lo + 1.0)), hi)
    return np.where(discrete, disc, cont)
