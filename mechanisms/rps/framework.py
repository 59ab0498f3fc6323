"""The RPS framework: Recursive Partitioning and Summarization, qardaji2012 Algorithm 1.

RPS views the data items as points of a space, splits a region into two disjoint
sub-regions, recursively, until a stopping condition holds, then summarizes every leaf
region ([QL12] Sec 3.1)::

    RPS_recursion(D, R):
        (Stop, Info) <- stopping_condition(D, R)
        if Stop: return summarize(D, R)
        (R1, R2) <- balanced_partition(D, R)
        return (Info, RPS_recursion(D, R1), RPS_recursion(D, R2))

:func:`rps` runs that recursion with pluggable subroutines; every tree node spends through
its own ledger holding what its path has left, so no root-to-leaf path overspends
(:mod:`privpub.mechanisms.rps.budget` splits a path's budget and records the spends). Why the
budget is split this way and why per-path accounting is DP: docs/design.md, "qardaji2012:
RPS".

Plugging in your own subroutines
--------------------------------
The framework only moves *row indices* (``node.rows``, positions in your data) and opaque
*regions* (``node.region``); your subroutines hold the data.

- ``partition`` has ``spends`` (does it query the data?), ``can_split(node)`` (must not
  look at the data: it decides the free "region too narrow" stop) and
  ``__call__(node, *, epsilon, rng, ledger) -> Split`` (spend ``epsilon`` through
  ``ledger`` if ``spends``; return the two children's rows and regions), e.g.
  :class:`privpub.mechanisms.rps.partition.BoxPartition`.
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
   Sec 3.1-3.2.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import LedgerEntry, PrivacyLedger, ensure_ledger
from privpub.mechanisms.rps.budget import LEDGER_DETAILS, PathBudget, record_spends
from privpub.mechanisms.rps.checks import check_option, check_real
from privpub.noise import is_noise_off, laplace_mechanism
from privpub.validation import check_depth, check_epsilon, check_rng

__all__ = [
    "Node",
    "Split",
    "Leaf",
    "TreeNode",
    "RPSTree",
    "NoisyCountStop",
    "rps",
    "DEFAULT_MAX_NODES",
]

#: Refuse trees with more nodes than this (a deep tree without a noisy-count stop on
#: multi-dimensional data doubles at every level until regions become narrow).
DEFAULT_MAX_NODES = 1 << 20


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
class TreeNode:
    """What one node of the tree spent (``entries``), its children's indices in
    :attr:`RPSTree.nodes` (internal nodes) or its index in :attr:`RPSTree.leaves`."""

    entries: tuple[LedgerEntry, ...]
    depth: int
    children: tuple[int, int] | None = None
    leaf: int | None = None


@dataclass
class RPSTree:
    """Result of :func:`rps`: the leaves in left-to-right order and the tree's spends.

    ``nodes`` holds every node's spends (root first); ``profiles`` the interned path
    profiles ``(parent profile, spends)`` that :attr:`Leaf.profile` points to."""

    leaves: list[Leaf]
    n_nodes: int
    epsilon: float
    nodes: list[TreeNode] = field(repr=False, default_factory=list)
    profiles: list[tuple[int, tuple]] = field(repr=False, default_factory=list)

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
        out, node = [], self.nodes[0]
        out.extend(node.entries)
        for bit in path:
            node = self.nodes[node.children[int(bit)]]
            out.extend(node.entries)
        return out

    def profile_entries(self, profile: int) -> list[tuple]:
        """The spends ``(label, epsilon, sensitivity, primitive)`` of a path profile."""
        chunks = []
        while profile >= 0:
            parent, entries = self.profiles[profile]
            chunks.append(entries)
            profile = parent
        return [e for chunk in reversed(chunks) for e in chunk]


class NoisyCountStop:
    """Stop when the Laplace-noised number of items in the region is at most ``threshold``
    (Sec 3.2; Fig 1: "a noisy count <= 5"). Sensitivity 1: one record changes the count of
    one region by one (record-level DP)."""

    spends = True

    def __init__(self, threshold: float):
        self.threshold = check_real(threshold, "stop_count", low=0.0)

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
    partition, summarize, stopping
        The subroutines (module docstring). ``summarize`` gets all its path has left;
        ``stopping`` (optional) is checked at every node above the maximum depth whose
        region can still be split. The maximum depth and narrow regions always stop (free).
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
        Compact record or the whole tree (:func:`privpub.mechanisms.rps.budget.record_spends`).
    max_nodes : int
        Refuse to build a larger tree.

    Returns
    -------
    RPSTree
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth(depth)
    rng = check_rng(rng)
    check_option(ledger_detail, LEDGER_DETAILS, "ledger_detail")
    ledger = ensure_ledger(ledger, epsilon)
    budget = PathBudget() if budget is None else budget
    stop_spends = stopping is not None and bool(stopping.spends)
    per_depth = [
        budget.per_level(epsilon, depth, partition_spends=bool(partition.spends),
                         stop_spends=stop_spends, level=i)
        for i in range(depth)
    ]
    if stopping is None and hasattr(partition, "max_leaves"):
        _check_tree_bound(partition, depth, max_nodes)
    growth = _Growth(epsilon)
    root = Node(np.arange(int(n_items), dtype=np.int64), root_region, 0, "")
    # explicit stack (no recursion limit): (node, its path-local ledger, tree index, profile)
    stack = [(root, PrivacyLedger(epsilon, label="root"), 0, -1)]
    with _cyclic_gc_paused():
        while stack:
            node, node_ledger, index, parent_profile = stack.pop()
            reason = _stop_reason(node, depth, partition, stopping, per_depth, rng,
                                  node_ledger if stop_spends else None)
            if reason is not None:
                summary = summarize(node, epsilon=node_ledger.remaining, rng=rng,
                                    ledger=node_ledger)
                growth.add_leaf(node, reason, summary, node_ledger, index, parent_profile)
                continue
            split = partition(node, epsilon=per_depth[node.depth][1], rng=rng,
                              ledger=node_ledger if partition.spends else None)
            profile = growth.add_internal(index, node_ledger, parent_profile)
            if len(growth.nodes) + 2 > max_nodes:
                raise _oversized(max_nodes, depth)
            stack.extend(growth.add_children(node, split, node_ledger, index, profile))
    tree = RPSTree(growth.leaves, len(growth.nodes), epsilon, growth.nodes, growth.profiles)
    record_spends(ledger, tree, ledger_detail)
    return tree


@contextlib.contextmanager
def _cyclic_gc_paused():
    """Python's cyclic garbage collector off while the tree grows (as it was after).

    A deep tree holds up to :data:`DEFAULT_MAX_NODES` nodes of small objects (nodes, leaves,
    ledgers, row arrays), none of them in a reference cycle, and the collector's passes
    over them took about a fifth of a depth-50 build on Adult; reference counting still
    frees everything that is dropped. Only when to collect changes, never a result.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _check_tree_bound(partition, depth: int, max_nodes: int) -> None:
    """Without a data-dependent stop the tree is only bounded by depth and narrowness:
    refuse now rather than after building ``max_nodes`` nodes."""
    bound = min(2.0 ** depth, float(partition.max_leaves()))
    if 2 * bound - 1 > max_nodes:
        raise PrivpubError(
            f"without a noisy-count stop (stop_count=None) the RPS tree may grow to "
            f"min(2^depth, #finest cells) = {bound:.3g} leaves, more than max_nodes = "
            f"{max_nodes} nodes allow: empty regions keep splitting until they are narrow "
            "or reach the maximum depth. Set stop_count (the paper's 'stop at a count of "
            "0' is stop_count=0) or a smaller depth"
        )


def _stop_reason(node, depth, partition, stopping, per_depth, rng, ledger) -> str | None:
    """Why ``node`` is a leaf (``"depth"``, ``"narrow"``, ``"count"``) or None; the free
    stops are tried first, so the noisy check is paid only where it decides."""
    if node.depth >= depth:
        return "depth"
    if not partition.can_split(node):
        return "narrow"
    if stopping is not None and stopping(
        node, epsilon=per_depth[node.depth][0], rng=rng, ledger=ledger
    ):
        return "count"
    return None


def _oversized(max_nodes: int, depth: int) -> PrivpubError:
    if is_noise_off():  # the noise-free limit of this cell cannot be built: skip it
        return NotApplicableError(
            f"the noise-free RPS tree exceeds {max_nodes} nodes (depth {depth}): with "
            "exact counts a stop at count <= threshold never ends a region holding "
            "more rows, so regions are split down to single rows and the maximum depth"
        )
    return PrivpubError(
        f"the RPS tree exceeds {max_nodes} nodes (depth {depth}): without a "
        "noisy-count stop, empty regions are split until they are narrow or the "
        "maximum depth is reached; use stop_count or a smaller depth"
    )


class _Growth:
    """The tree as :func:`rps` grows it: nodes, leaves and interned path profiles."""

    def __init__(self, epsilon: float):
        self.epsilon = epsilon
        self.nodes: list[TreeNode] = [TreeNode((), 0)]
        self.leaves: list[Leaf] = []
        # path profiles, interned: (parent profile, this node's spends) -> id
        self.profiles: list[tuple[int, tuple]] = []
        self._ids: dict[tuple, int] = {}

    def _intern(self, parent: int, entries) -> int:
        key = (parent, tuple([(e.label, e.epsilon, e.sensitivity, e.primitive) for e in entries]))
        pid = self._ids.get(key)
        if pid is None:
            pid = self._ids[key] = len(self.profiles)
            self.profiles.append(key)
        return pid

    def add_leaf(self, node: Node, reason: str, summary, node_ledger, index: int,
                 parent_profile: int) -> None:
        entries = node_ledger.entries
        self.nodes[index].entries = tuple(entries)
        self.nodes[index].leaf = len(self.leaves)
        path_eps = sum([e.epsilon for e in entries]) + (self.epsilon - node_ledger.total)
        self.leaves.append(Leaf(node.rows, node.region, node.depth, node.path, reason, summary,
                                path_eps, self._intern(parent_profile, entries)))

    def add_internal(self, index: int, node_ledger, parent_profile: int) -> int:
        entries = node_ledger.entries
        self.nodes[index].entries = tuple(entries)
        return self._intern(parent_profile, entries)

    def add_children(self, node: Node, split: Split, node_ledger, index: int, profile: int):
        """The children's stack entries, right first so that the left one is visited
        first; each gets a ledger holding what the path has left."""
        remaining = node_ledger.remaining
        if remaining <= 0:
            raise PrivpubError("internal error: a path exhausted its budget above its leaf")
        first = len(self.nodes)
        self.nodes.append(TreeNode((), node.depth + 1))
        self.nodes.append(TreeNode((), node.depth + 1))
        self.nodes[index].children = (first, first + 1)
        right = Node(split.right_rows, split.right_region, node.depth + 1, node.path + "1")
        left = Node(split.left_rows, split.left_region, node.depth + 1, node.path + "0")
        return [(right, PrivacyLedger(remaining, label=right.path), first + 1, profile),
                (left, PrivacyLedger(remaining, label=left.path), first, profile)]
